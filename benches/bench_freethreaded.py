"""Free-threaded scaling: the same work in 1 thread and split over 2 threads, per call type.

Without the GIL (a free-threaded build such as 3.13t), 2 threads should give about 2x the
throughput of 1 on a 2-core machine, unless the threads contend on something that every
call touches.  Three call types over typical answers (4 KB, 8 citations each, see
`corpus.typical_answer`) and the same three over 1 MB texts:

    extract_many    one call per thread, over its half of the texts
    strip_many      likewise
    extract_loop    `extract_citations(text)` once per text, in a Python loop

Each timed run starts its threads at a barrier and ends when the last one is done; the
1-thread run also works in a worker thread, so the texts are owned by another thread in
both cases.  Rounds alternate 1 and 2 threads and the ratio is taken within each pair, so a
change in the machine's load between rounds cancels out; the table gives medians.

`control` is a Python loop of integer additions that shares nothing: its ratio is what the
machine gives 2 threads at that moment (on a shared machine, less than 2).  `cpu 2/1` is
the CPU time of the 2-thread run over the 1-thread run: above 1 means the threads spend
cycles on each other (atomic reference counts, cache lines moving between cores), when
they run at the same time.  `vs control` divides each round's ratio by the control's ratio
in the same round: what is left is what citemark itself loses to sharing.

Script mode (the table):
    python benches/bench_freethreaded.py [--rounds N] [--texts N]
pytest (each case timed by pytest-benchmark and checked against a 1-thread run; `extra_info`
names the workload, call and thread count: the ratio is the 1-thread median over the 2-thread
one, from the same run):
    pytest benches/bench_freethreaded.py --benchmark-json=benches/freethreaded.json -q

What the threads share can be counted, one event per reference a thread drops on an object
that another thread made (the atomic half of biased reference counting), with a uprobe:
    perf probe -x "$(command -v python3.13t)" --add '_Py_DecRefShared op=%di'
    perf record -e probe_python3:_Py_DecRefShared -- python3.13t <a script>
then `perf script` and group the op= addresses by `id()` of the suspects (remove the probe
with `perf probe -d 'probe_python3:*'`).

Meaningful on a free-threaded build (`sys._is_gil_enabled()` False); with the GIL the
kernel scales only on the 1 MB texts, where it releases it.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest

from _common import MB, ensure_citemark_importable
from corpus import dense, typical_answer

OPS = ("extract_many", "strip_many", "extract_loop")
TYPICAL_TEXTS = 4_000
LARGE_TEXTS = 4  # 1 MB each, ~30% inside markers

Work = Callable[[Sequence[str]], Any]


@functools.cache
def typical(count: int = TYPICAL_TEXTS) -> tuple[str, ...]:
    return tuple(typical_answer(seed=index) for index in range(count))


@functools.cache
def large(count: int = LARGE_TEXTS) -> tuple[str, ...]:
    return tuple(dense(MB, seed=300 + index) for index in range(count))


WORKLOADS: dict[str, Callable[[], tuple[str, ...]]] = {
    "typical_4KB": typical,
    "dense_1MB": large,
}


def gil_enabled() -> bool:
    is_enabled: Callable[[], bool] | None = getattr(sys, "_is_gil_enabled", None)
    return True if is_enabled is None else is_enabled()


def operations() -> dict[str, Work]:
    """The three call types through the package's drop-in functions, as the users call them."""
    ensure_citemark_importable()
    import citemark

    def extract_loop(texts: Sequence[str]) -> list[Any]:
        extract = citemark.extract_citations
        return [extract(text) for text in texts]

    return {
        "extract_many": citemark.extract_many,
        "strip_many": citemark.strip_many,
        "extract_loop": extract_loop,
    }


def control(texts: Sequence[str]) -> int:
    """Work in proportion to the characters of texts that touches no shared object."""
    total = 0
    for number in range(sum(map(len, texts)) // 40):
        total += number
    return total


class Runner:
    """Two long-lived worker threads; `run(work, texts, threads)` times one split run."""

    def __init__(self) -> None:
        self._jobs: list[tuple[Work, Sequence[str]] | None] = [None, None]
        self._start = threading.Barrier(3)
        self._done = threading.Barrier(3)
        self._cpu = [0.0, 0.0]
        self._span = [(0.0, 0.0), (0.0, 0.0)]  # (began, ended) per worker, perf_counter
        self._results: list[Any] = [None, None]
        self._keep = False
        self._errors: list[BaseException] = []
        self._workers = [
            threading.Thread(target=self._serve, args=(slot,), daemon=True) for slot in (0, 1)
        ]
        for worker in self._workers:
            worker.start()

    def _serve(self, slot: int) -> None:
        while True:
            try:
                self._start.wait()
            except threading.BrokenBarrierError:  # close()
                return
            job = self._jobs[slot]
            if job is not None:
                work, texts = job
                began, cpu = time.perf_counter(), time.thread_time()
                try:
                    result = work(texts)
                except BaseException as error:  # reported by run()
                    self._errors.append(error)
                    result = None
                self._cpu[slot] = time.thread_time() - cpu
                self._span[slot] = (began, time.perf_counter())
                # The results die in the thread that made them, as in a server where each
                # thread answers its own requests: freed by another thread, each object would
                # be queued back to its owner (biased reference counting, mimalloc's
                # cross-thread frees), and the owner would pay for it in the next timed run.
                if self._keep:
                    self._results[slot] = result
                del result
            self._done.wait()

    def run(
        self, work: Work, texts: Sequence[str], threads: int, *, keep: bool = False
    ) -> tuple[float, float, Any]:
        """(wall seconds, CPU seconds of the workers, the results in text order if `keep`)."""
        middle = len(texts) // 2
        if threads == 1:
            self._jobs = [(work, texts), None]
        else:
            self._jobs = [(work, texts[:middle]), (work, texts[middle:])]
        self._cpu = [0.0, 0.0]
        self._results = [None, None]
        self._keep = keep
        self._start.wait()  # the workers take their jobs at the same moment
        self._done.wait()
        # Timed in the workers: on a busy machine this thread may wake late at either end.
        spans = self._span[:threads]
        wall = max(end for _, end in spans) - min(began for began, _ in spans)
        if self._errors:
            raise self._errors.pop()
        if not keep:
            return wall, sum(self._cpu), None
        if threads == 1:
            result = self._results[0]
        elif isinstance(self._results[0], list):
            result = self._results[0] + self._results[1]
        else:
            result = [self._results[0], self._results[1]]
        self._results = [None, None]
        return wall, sum(self._cpu), result

    def close(self) -> None:
        self._jobs = [None, None]
        self._start.abort()


def pair(
    runner: Runner, work: Work, texts: Sequence[str], *, two_first: bool = False
) -> tuple[float, float, float, float]:
    """(1-thread wall, 2-thread wall, 1-thread CPU, 2-thread CPU) of one pair of runs;
    `two_first` runs the 2-thread one first (alternated, a load that rises or falls during
    the pair favours neither)."""
    if two_first:
        wall2, cpu2, _ = runner.run(work, texts, 2)
        wall1, cpu1, _ = runner.run(work, texts, 1)
    else:
        wall1, cpu1, _ = runner.run(work, texts, 1)
        wall2, cpu2, _ = runner.run(work, texts, 2)
    return wall1, wall2, cpu1, cpu2


def measure(runner: Runner, work: Work, texts: Sequence[str], rounds: int) -> dict[str, float]:
    """Medians over `rounds` rounds, each a pair of (1 thread, 2 threads) runs of `work`
    next to a pair of `control` runs over the same texts: `vs_control` is the ratio of
    `work` over the ratio of the control in the same round, so a load that comes and goes
    between rounds cancels out."""
    pair(runner, work, texts)  # warm-up
    one, two, ratios, cpu, relative = [], [], [], [], []
    for _ in range(rounds):
        control1, control2, _, _ = pair(runner, control, texts)
        wall1, wall2, cpu1, cpu2 = pair(runner, work, texts)
        one.append(wall1)
        two.append(wall2)
        ratios.append(wall1 / wall2)
        cpu.append(cpu2 / cpu1 if cpu1 else float("nan"))
        relative.append((wall1 / wall2) / (control1 / control2))
    return {
        "one": statistics.median(one),
        "two": statistics.median(two),
        "ratio": statistics.median(ratios),
        "cpu": statistics.median(cpu),
        "vs_control": statistics.median(relative),
    }


def control_loop(count: int) -> int:
    total = 0
    for number in range(count):
        total += number
    return total


def lasting(runner: Runner, work: Work, texts: Sequence[str], seconds: float) -> Sequence[str]:
    """The first texts (cycled when too few) on which `work` lasts about `seconds` in one
    thread: every workload of `interleaved` and its control then last as long, and so see
    the same share of a load that comes and goes."""
    runner.run(work, texts, 1)  # warm-up
    took = min(runner.run(work, texts, 1)[0] for _ in range(3))
    count = max(20, round(len(texts) * seconds / took))
    # A text cycled in is a copy: each thread its own objects, as each thread of a server
    # has its own answers.  Two threads reading the same str take references on it, an
    # atomic operation on one shared count each time, which no server pays.
    return tuple(
        _copy(texts[index % len(texts)]) if index >= len(texts) else texts[index]
        for index in range(count)
    )


def _copy(text: str) -> str:
    """An equal str that is another object (slices and str() give the same one back)."""
    return text[:1] + text[1:] if len(text) > 1 else text


def calibrated_control(runner: Runner, seconds: float) -> tuple[Work, Sequence[str]]:
    """The control loop of integer additions, `seconds` long in one thread: one "text" of
    its input is a slice of the loop, so a 2-thread run splits it like the workloads."""
    probe = 200_000
    runner.run(lambda _texts: control_loop(probe), ("",), 1)
    took = min(runner.run(lambda _texts: control_loop(probe), ("",), 1)[0] for _ in range(3))
    slices = 200
    step = max(1, round(probe * seconds / took / slices))

    def control_matched(texts: Sequence[str]) -> int:
        return control_loop(step * len(texts))

    return control_matched, ("",) * slices


def others_busy() -> tuple[float, float, float]:
    """(CPU seconds the whole machine has been busy, this process's CPU seconds, wall
    clock): the difference of two readings is what other processes took (Linux; zeros
    elsewhere, and every round counts as free)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return 0.0, 0.0, time.perf_counter()
    busy = sum(int(field) for field in fields[:8]) - int(fields[3]) - int(fields[4])
    return busy / os.sysconf("SC_CLK_TCK"), time.process_time(), time.perf_counter()


def interleaved(
    runner: Runner,
    works: dict[str, Work],
    texts: Sequence[str],
    rounds: int,
    seconds: float = 0.15,
) -> dict[str, dict[str, float]]:
    """Each workload's 2-thread scaling over the control's, from `rounds` rounds in which
    every workload and the control run once in 1 thread and once in 2 (the workloads'
    order rotated each round, the 2-thread run first in every other round).  Each workload
    gets as many of `texts` as make its 1-thread run last about `seconds`, and the control
    is that long too.  A round runs the control before and after its workloads and divides
    each workload's ratio by the geometric mean of the two control ratios, so a load that
    comes and goes during the round hits both sides.  Per workload: the medians, and the
    lowest, highest and quartiles of the per-round `vs_control`; `quiet` and
    `quiet_rounds`: its median over the quieter half of the rounds, those in which the rest
    of the machine used fewer cores than in the median round (`others`, from /proc/stat less
    this process's CPU time): there the two threads more often had two cores to meet on, and
    contention that needs both threads running at once shows most.  The rounds are chosen
    by the others' load, not by the control's ratio, which would pick the control's lucky
    rounds and make the workloads look worse."""
    jobs = {name: (work, lasting(runner, work, texts, seconds)) for name, work in works.items()}
    reference = calibrated_control(runner, seconds)
    pair(runner, *reference)
    samples: dict[str, dict[str, list[float]]] = {
        name: {"one": [], "two": [], "ratio": [], "cpu": [], "vs_control": []}
        for name in ("control", *works)
    }
    names = list(works)
    load: list[float] = []  # cores the rest of the machine used, per round
    for number in range(rounds):
        flip = number % 2 == 1
        began = others_busy()
        before = pair(runner, *reference, two_first=flip)
        measured = {}
        shift = number % len(names)
        for name in names[shift:] + names[:shift]:
            measured[name] = pair(runner, *jobs[name], two_first=flip)
        after = pair(runner, *reference, two_first=flip)
        ended = others_busy()
        wall = ended[2] - began[2]
        load.append(((ended[0] - began[0]) - (ended[1] - began[1])) / wall if wall else 0.0)
        control_ratio = ((before[0] / before[1]) * (after[0] / after[1])) ** 0.5
        for name, (wall1, wall2, cpu1, cpu2) in {"control": before, **measured}.items():
            found = samples[name]
            found["one"].append(wall1)
            found["two"].append(wall2)
            found["ratio"].append(wall1 / wall2)
            found["cpu"].append(cpu2 / cpu1 if cpu1 else float("nan"))
            found["vs_control"].append((wall1 / wall2) / control_ratio)
    out = {}
    for name, found in samples.items():
        relative = sorted(found["vs_control"])
        quartiles = statistics.quantiles(relative, n=4) if len(relative) > 1 else relative * 3
        out[name] = {key: statistics.median(values) for key, values in found.items()}
        out[name].update(
            texts=len(jobs[name][1] if name in jobs else reference[1]),
            low=relative[0],
            q1=quartiles[0],
            q3=quartiles[-1],
            high=relative[-1],
            control_low=min(samples["control"]["ratio"]),
            control_high=max(samples["control"]["ratio"]),
        )
        middle = statistics.median(load)
        quiet = [
            one for one, cores in zip(found["vs_control"], load, strict=True) if cores < middle
        ]
        out[name].update(
            quiet=statistics.median(quiet) if quiet else float("nan"),
            quiet_rounds=len(quiet),
            others=middle,
            quiet_others=max((cores for cores in load if cores < middle), default=middle),
        )
    return out


def table(rounds: int, count: int) -> list[tuple[str, str, dict[str, float]]]:
    ops = {"control": control, **operations()}
    rows = []
    runner = Runner()
    try:
        for workload in WORKLOADS:
            texts = typical(count) if workload == "typical_4KB" else large()
            for op in ("control", *OPS):
                rows.append((workload, op, measure(runner, ops[op], texts, rounds)))
    finally:
        runner.close()
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9, help="pairs of runs (default 9)")
    parser.add_argument("--texts", type=int, default=TYPICAL_TEXTS, help="typical answers")
    args = parser.parse_args(argv)
    ensure_citemark_importable()
    import citemark

    print(
        f"Python {sys.version.split()[0]}, GIL {'on' if gil_enabled() else 'off'}, "
        f"citemark {citemark.IMPLEMENTATION}; {args.texts} typical answers, "
        f"{LARGE_TEXTS} x 1 MB dense; medians of {args.rounds} pairs"
    )
    print(
        f"{'workload':<12} {'call':<13} {'1 thread':>9} {'2 threads':>9} {'2/1':>6} {'cpu 2/1':>7} "
        f"{'vs control':>10}"
    )
    for workload, op, row in table(args.rounds, args.texts):
        print(
            f"{workload:<12} {op:<13} {row['one'] * 1e3:7.1f}ms {row['two'] * 1e3:7.1f}ms "
            f"{row['ratio']:5.2f}x {row['cpu']:7.2f} {row['vs_control']:10.2f}"
        )
    print("2/1: throughput of 2 threads over 1 (2.00x = perfect); control: the machine's share;")
    print("vs control: 2/1 over the control's 2/1 in the same round (1.00 = scales as well)")
    return 0


# ---------------------------------------------------------------- pytest-benchmark


@pytest.fixture(scope="module")
def runner() -> Iterator[Runner]:
    pool = Runner()
    yield pool
    pool.close()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_freethreaded(benchmark: Any, runner: Runner, workload: str, op: str, threads: int) -> None:
    texts = WORKLOADS[workload]()
    work = operations()[op]
    expected = work(texts)
    benchmark.group = f"freethreaded {workload} {op}"
    benchmark.extra_info.update(
        suite="freethreaded",
        workload=workload,
        op=op,
        threads=threads,
        gil=gil_enabled(),
        texts=len(texts),
        chars=sum(map(len, texts)),
    )
    rounds = 5 if workload == "dense_1MB" else 15

    def one_run() -> None:
        runner.run(work, texts, threads)

    benchmark.pedantic(one_run, rounds=rounds, iterations=1, warmup_rounds=1)
    assert runner.run(work, texts, threads, keep=True)[2] == expected


if __name__ == "__main__":
    raise SystemExit(main())
