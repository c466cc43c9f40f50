"""Time two or more revisions of citemark on the same workloads, in one run.

    python benches/compare.py REV_A REV_B [REV_C ...] [--workload NAME ...]

Each REV is anything `git rev-parse` takes (a hash, a branch, `HEAD~3`) or `.` for this
checkout as it is on disk, uncommitted edits included.  A revision is exported once
(`git archive`) into the cache directory under its commit hash and built there with
`python setup.py build_ext --inplace`; later runs reuse the build.  `.` is built in place in
this checkout (an incremental build).

Every revision gets a worker process of its own (`PYTHONPATH=<tree>/src`, the compiled
kernels demanded with CITEMARK_IMPLEMENTATION=cython), and so does the guide's helper
(`baseline.py`), all pinned to one CPU (`--cpu`).  The workers take turns: in each round every
worker times every workload for a short budget, in a seeded shuffled order (a new one each
round and workload), so the noise of a shared machine falls on all of them alike;
the rounds are split over `--processes` sets of fresh workers (a process keeps its luck of
memory placement and string hashes for life).  The texts come from this checkout's
`corpus.py` (the benches' seeded texts) whatever the revision, and the workloads call only
the public API, so any revision that has the API can be timed.

The table gives per workload each revision's time a call, how many times faster than the
helper it is (where the helper has the operation) and its ratio to the first revision (above
1: slower than the first).  Each timing sample is the mean of enough back-to-back calls to
last about a millisecond; a round counts each worker's fastest sample (`--stat`); times are
the median over the rounds, ratios the median over the rounds of the ratio within the round,
with its 95% confidence interval.  `--json` keeps the samples, `--from-json` shows them again.
"""

from __future__ import annotations

import argparse
import functools
import gc
import hashlib
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent
DEFAULT_CACHE = HERE / ".cache"
SAMPLE_SECONDS = 0.001  # each sample: enough calls to last this long
HELPER = "helper"

Call = Callable[[], Any]
Setup = Callable[[], tuple[Call, Any]]


# ---------------------------------------------------------------- workloads
# A workload makes its text from corpus.py and returns (the call to time, what its result
# is for the parity check between revisions).  Only the public API is used.


def _citation_keys(found: Any) -> list[tuple[Any, ...]]:
    return [(c["start"], c["end"], tuple(c["source_ids"]), c["locator"]) for c in found]


def _extract(make: str) -> tuple[Setup, Setup]:
    def kernel() -> tuple[Call, Any]:
        import citemark
        import corpus

        text = corpus.text_of(make)
        call = functools.partial(citemark.extract_citations, text)
        return call, _citation_keys(call())

    def helper() -> tuple[Call, Any]:
        import baseline
        import corpus

        text = corpus.text_of(make)
        call = functools.partial(baseline.extract_citations, text)
        return call, _citation_keys(call())

    return kernel, helper


def _strip(make: str) -> tuple[Setup, Setup]:
    def kernel() -> tuple[Call, Any]:
        import citemark
        import corpus

        text = corpus.text_of(make)
        call = functools.partial(citemark.strip_citations, text, citemark.extract_citations(text))
        return call, call()

    def helper() -> tuple[Call, Any]:
        import baseline
        import corpus

        text = corpus.text_of(make)
        call = functools.partial(baseline.strip_citations, text, baseline.extract_citations(text))
        return call, call()

    return kernel, helper


def _finditer(make: str) -> tuple[Setup, Setup]:
    def kernel() -> tuple[Call, Any]:
        import citemark
        import corpus

        text = corpus.text_of(make)
        finditer = citemark.Parser().finditer

        def call() -> Any:
            return list(finditer(text))

        return call, [(c.start, c.end) for c in call()]

    def helper() -> tuple[Call, Any]:
        import baseline
        import corpus

        call = functools.partial(baseline.extract_citations, corpus.text_of(make))
        return call, [(c["start"], c["end"]) for c in call()]

    return kernel, helper


def _clean_typical() -> tuple[Call, Any]:
    import citemark
    import corpus

    call = functools.partial(citemark.clean, corpus.text_of("typical_4KB"))
    return call, call()


def _streamed(make: str, size: int) -> Setup:
    """A typical answer cut into `size`-character deltas, fed by a Python loop as a server
    feeds them: to a `CleanStream` (make "clean") or a `StreamParser` ("parser")."""

    def setup() -> tuple[Call, Any]:
        import corpus
        from citemark.display import CleanStream
        from citemark.parser import Parser
        from citemark.stream import StreamParser

        text = corpus.text_of("typical_4KB")
        deltas = [text[at : at + size] for at in range(0, len(text), size)]
        parser = Parser()

        def clean_stream() -> str:
            stream = CleanStream()
            feed = stream.feed
            out = [feed(delta) for delta in deltas]
            out.append(stream.close())
            return "".join(out)

        def parser_stream() -> tuple[str, int]:
            # A server's loop (bench_streams.parse_streamed): each update used as it comes.
            stream = StreamParser(parser)
            feed = stream.feed
            text, citations = [], 0
            for delta in deltas:
                update = feed(delta)
                text.append(update.text)
                citations += len(update.citations)
            update = stream.close()
            text.append(update.text)
            return "".join(text), citations + len(update.citations)

        call = clean_stream if make == "clean" else parser_stream
        return call, call()

    return setup


def _parse_typical() -> tuple[Call, Any]:
    import corpus
    from citemark.parser import Parser

    parser = Parser()
    text = corpus.text_of("typical_4KB")

    def call() -> tuple[str, int]:
        return parser.strip(text), len(list(parser.finditer(text)))

    return call, call()


def _extract_many_answers() -> tuple[Call, Any]:
    import citemark
    import corpus

    call = functools.partial(citemark.extract_many, corpus.answers_2000())
    return call, [_citation_keys(found) for found in call()]


def _extract_many_answers_helper() -> tuple[Call, Any]:
    import baseline
    import corpus

    call = functools.partial(baseline.extract_many, corpus.answers_2000())
    return call, [_citation_keys(found) for found in call()]


def _strip_many_answers() -> tuple[Call, Any]:
    import citemark
    import corpus

    call = functools.partial(citemark.strip_many, corpus.answers_2000())
    return call, call()


def _strip_many_answers_helper() -> tuple[Call, Any]:
    import baseline
    import corpus

    call = functools.partial(baseline.strip_many, corpus.answers_2000())
    return call, call()


def _arrow(operation: str) -> Setup:
    def setup() -> tuple[Call, Any]:
        import pyarrow

        import citemark.arrow  # an ImportError without pyarrow: the workload is n/a
        import corpus

        column = pyarrow.array(corpus.answers_2000())
        call = functools.partial(getattr(citemark.arrow, operation), column)
        return call, call().to_pylist()

    return setup


@dataclass(frozen=True)
class Workload:
    name: str
    what: str
    kernel: Setup
    helper: Setup | None


def _workloads() -> dict[str, Workload]:
    extract_typical, extract_typical_helper = _extract("typical_4KB")
    strip_typical, strip_typical_helper = _strip("typical_4KB")
    extract_dense, extract_dense_helper = _extract("dense_1MB")
    extract_plain, extract_plain_helper = _extract("plain_ucs2_1MB")
    extract_malformed, extract_malformed_helper = _extract("malformed_1MB")
    extract_50k, extract_50k_helper = _extract("many_50k_1MB")
    finditer_dense, finditer_dense_helper = _finditer("dense_1MB")
    finditer_50k, finditer_50k_helper = _finditer("many_50k_1MB")
    rows = (
        Workload(
            "extract_typical_4KB",
            "extract_citations(t), t: a typical 4 KB answer",
            extract_typical,
            extract_typical_helper,
        ),
        Workload(
            "strip_typical_4KB",
            "strip_citations(t, citations), the same answer",
            strip_typical,
            strip_typical_helper,
        ),
        Workload(
            "finditer_dense_1MB",
            "list(Parser().finditer(t)), 1 MB with 30% in markers",
            finditer_dense,
            finditer_dense_helper,
        ),
        Workload("clean_typical_4KB", "clean(t), a typical 4 KB answer", _clean_typical, None),
        *(
            Workload(
                f"clean_stream_{size}_4KB",
                f"CleanStream over the same answer in {size}-character deltas",
                _streamed("clean", size),
                None,
            )
            for size in (64, 16, 4)
        ),
        Workload(
            "parse_typical_4KB",
            "Parser().strip(t) and list(Parser().finditer(t)), the same answer",
            _parse_typical,
            None,
        ),
        *(
            Workload(
                f"parser_stream_{size}_4KB",
                f"StreamParser over the same answer in {size}-character deltas",
                _streamed("parser", size),
                None,
            )
            for size in (64, 16, 4)
        ),
        Workload(
            "extract_dense_1MB",
            "extract_citations(t), 1 MB with 30% in markers",
            extract_dense,
            extract_dense_helper,
        ),
        Workload(
            "extract_plain_1MB",
            "extract_citations(t), 1 MB without markers (2-byte)",
            extract_plain,
            extract_plain_helper,
        ),
        Workload(
            "extract_malformed_1MB",
            "extract_citations(t), 1 MB of invalid and valid markers",
            extract_malformed,
            extract_malformed_helper,
        ),
        Workload(
            "extract_50k_1MB",
            "extract_citations(t), 50,000 citations of 300 ids in 1 MB",
            extract_50k,
            extract_50k_helper,
        ),
        Workload(
            "finditer_50k_1MB",
            "list(Parser().finditer(t)), the same 50,000 citations",
            finditer_50k,
            finditer_50k_helper,
        ),
        Workload(
            "extract_many_2000",
            "extract_many(ts), 2,000 answers of 0.5-8 KB",
            _extract_many_answers,
            _extract_many_answers_helper,
        ),
        Workload(
            "strip_many_2000",
            "strip_many(ts), 2,000 answers of 0.5-8 KB",
            _strip_many_answers,
            _strip_many_answers_helper,
        ),
    )
    arrow = (
        Workload(
            f"arrow_{operation}_2000",
            f"citemark.arrow.{operation}(column), the 2,000 answers as a pyarrow string column",
            _arrow(operation),
            None,
        )
        for operation in ("extract", "strip")
    )
    return {w.name: w for w in (*rows, *arrow)}


WORKLOADS = _workloads()


# ---------------------------------------------------------------- the worker


def _digest(value: Any) -> str:
    return hashlib.sha256(repr(value).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def worker(role: str, clock_name: str, cpu: int | None) -> None:
    """Serve timing requests on stdin/stdout (one JSON object a line) for one revision's
    citemark (`role` "kernel", imported from PYTHONPATH) or the helper (`role` "helper")."""
    sys.path.insert(0, str(HERE))
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    clock = time.process_time if clock_name == "process" else time.perf_counter
    out = sys.stdout
    sys.stdout = sys.stderr  # nothing a workload prints can break the protocol
    calls: dict[str, tuple[Call, int]] = {}

    def answer(message: dict[str, Any]) -> None:
        out.write(json.dumps(message) + "\n")
        out.flush()

    if role == "kernel":
        import citemark

        answer({"ready": True, "citemark": citemark.__file__})
    else:
        answer({"ready": True})
    for line in sys.stdin:
        request = json.loads(line)
        name = request["workload"]
        if request["op"] == "setup":
            workload = WORKLOADS[name]
            setup = workload.kernel if role == "kernel" else workload.helper
            if setup is None:
                answer({"error": "no such operation"})
                continue
            try:
                call, result = setup()
            except Exception as error:  # an old revision without this API: n/a
                answer({"error": f"{type(error).__name__}: {error}"})
                continue
            began = clock()
            call()
            once = max(clock() - began, 1e-7)
            inner = max(1, round(SAMPLE_SECONDS / once))
            calls[name] = (call, inner)
            gc.collect()
            gc.freeze()  # the collections the calls trigger do not walk the texts
            answer({"digest": _digest(result), "inner": inner})
        else:
            call, inner = calls[name]
            budget = request["budget"]
            samples: list[float] = []
            spent = 0.0
            while spent < budget or not samples:
                began = clock()
                for _ in range(inner):
                    call()
                took = clock() - began
                samples.append(took / inner)
                spent += took
            answer({"samples": samples})


# ---------------------------------------------------------------- builds


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def _build_in_place(tree: Path, log: Path) -> None:
    env = dict(os.environ, CITEMARK_REQUIRE_EXTENSION="1")
    env.pop("CITEMARK_NO_EXTENSION", None)
    with log.open("w") as sink:
        done = subprocess.run(
            [sys.executable, "setup.py", "build_ext", "--inplace", "-j", "2"],
            cwd=tree,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if done.returncode != 0:
        tail = log.read_text(errors="replace").splitlines()[-20:]
        sys.exit(f"build of {tree} failed (log: {log}):\n" + "\n".join(tail))


def prepare(rev: str, repo: Path, cache: Path) -> tuple[Path, str]:
    """(the tree whose src/ holds the built citemark, its commit) for `rev`."""
    if rev == ".":
        print("building this checkout in place ...", file=sys.stderr)
        _build_in_place(CHECKOUT, Path(tempfile.gettempdir()) / "citemark-compare-build.log")
        dirty = _git(CHECKOUT, "status", "--porcelain", "--untracked-files=no")
        return CHECKOUT, _git(CHECKOUT, "rev-parse", "HEAD")[:12] + ("+edits" if dirty else "")
    sha = _git(repo, "rev-parse", "--verify", f"{rev}^{{commit}}")
    tree = cache / sha
    if (tree / ".built").exists():
        return tree, sha[:12]
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{sha[:12]}-", dir=cache))
    print(f"building {rev} ({sha[:12]}) in {tree} ...", file=sys.stderr)
    archive = subprocess.Popen(["git", "-C", str(repo), "archive", sha], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(staging)], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        sys.exit(f"git archive {sha} failed")
    _build_in_place(staging, staging / "build.log")
    (staging / ".built").write_text(sha + "\n")
    if tree.exists():  # a run that died half way
        shutil.rmtree(tree)
    staging.rename(tree)
    return tree, sha[:12]


# ---------------------------------------------------------------- the parent


class Worker:
    def __init__(self, label: str, tree: Path | None, clock: str, cpu: int | None) -> None:
        self.label = label
        env = dict(os.environ)
        if tree is not None:
            env["PYTHONPATH"] = os.pathsep.join([str(tree / "src"), str(HERE)])
            env["CITEMARK_IMPLEMENTATION"] = "cython"
        role = "kernel" if tree is not None else HELPER
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--worker", role, "--clock", clock]
            + ([] if cpu is None else ["--cpu", str(cpu)]),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        hello = self.read()
        if tree is not None and not hello["citemark"].startswith(str(tree / "src")):
            sys.exit(f"{label}: imported {hello['citemark']}, not the one under {tree}")

    def read(self) -> dict[str, Any]:
        stdout: IO[str] = self.process.stdout  # type: ignore[assignment]
        line = stdout.readline()
        if not line:
            sys.exit(f"the worker of {self.label} died (its error is above)")
        return json.loads(line)  # type: ignore[no-any-return]

    def ask(self, **request: Any) -> dict[str, Any]:
        stdin: IO[str] = self.process.stdin  # type: ignore[assignment]
        stdin.write(json.dumps(request) + "\n")
        stdin.flush()
        return self.read()

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait()


def _seconds(value: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value / 1e-9:.3g} ns"


def _labels(revisions: list[str]) -> list[str]:
    """The revisions as given, made unique (the same one twice measures the noise)."""
    labels: list[str] = []
    for rev in revisions:
        label, count = rev, 1
        while label in labels or label == HELPER:
            count += 1
            label = f"{rev}#{count}"
        labels.append(label)
    return labels


def _start(
    labels: list[str], built: list[tuple[Path, str]], args: argparse.Namespace
) -> list[Worker]:
    workers = [
        Worker(label, tree, args.clock, args.cpu)
        for label, (tree, _) in zip(labels, built, strict=True)
    ]
    if not args.no_helper:
        workers.append(Worker(HELPER, None, args.clock, args.cpu))
    return workers


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Time the workloads: `args.processes` times, fresh workers each time (a process keeps
    its own luck of memory placement for life: up to 5% between two runs of one revision),
    `args.rounds` rounds in all."""
    repo = Path(args.repo).resolve()
    labels = _labels(args.revisions)
    built = [prepare(rev, repo, Path(args.cache).resolve()) for rev in args.revisions]
    names = args.workload or list(WORKLOADS)
    # workload -> label -> the digest, or why the workload does not run there
    setups: dict[str, dict[str, dict[str, Any]]] = {}
    # workload -> label -> one list of samples per round
    samples: dict[str, dict[str, list[list[float]]]] = {}
    load_before = os.getloadavg()[0]
    began = time.perf_counter()
    done = 0
    shares: list[int] = []  # rounds per set of processes, in order
    for process in range(args.processes):
        workers = _start(labels, built, args)
        for name in names:
            answers = {w.label: w.ask(op="setup", workload=name) for w in workers}
            if process == 0:
                setups[name] = answers
                samples[name] = {label: [] for label, a in answers.items() if "error" not in a}
        share = args.rounds // args.processes + (process < args.rounds % args.processes)
        for round_ in range(share):
            for k, name in enumerate(names):
                # A seeded shuffle each round and workload: in an order only reversed from one
                # round to the next, the revision next to the helper (whose runs leave the CPU's
                # caches to the worker after it) came out 12-18% slower on the dense megabyte
                # than in a run without the helper.
                order = random.Random((done + round_) * len(names) + k).sample(
                    workers, len(workers)
                )
                for w in order:
                    if w.label in samples[name]:
                        reply = w.ask(op="time", workload=name, budget=args.budget)
                        samples[name][w.label].append(reply["samples"])
            print(
                f"round {done + round_ + 1}/{args.rounds} ({time.perf_counter() - began:.0f} s)",
                file=sys.stderr,
            )
        done += share
        shares.append(share)
        for w in workers:
            w.close()
    return {
        "revisions": [
            {"rev": label, "commit": commit}
            for label, (_, commit) in zip(labels, built, strict=True)
        ],
        "clock": args.clock,
        "rounds": args.rounds,
        "processes": shares,
        "load": [load_before, os.getloadavg()[0]],
        "cpus": os.cpu_count(),
        "cpu": args.cpu,
        "setups": setups,
        "samples": samples,
    }


# How a round's samples of one worker are summed up.  Its fastest sample is the one the rest
# of a shared machine disturbed least: two runs of one revision agree within 2% by it, within
# 5% by the round's median (48 rounds, 16 sets of processes, on 2 busy virtual CPUs).
ROUND_STATISTICS: dict[str, Callable[[list[float]], float]] = {
    "fastest": min,
    "median": statistics.median,
}


def _time(rounds: list[list[float]], stat: str) -> float:
    """The median over the rounds of each round's `stat`."""
    return statistics.median(ROUND_STATISTICS[stat](r) for r in rounds)


def _paired(
    rounds_a: list[list[float]], rounds_b: list[list[float]], stat: str
) -> tuple[float, float, float]:
    """b's time over a's: the median over the rounds of b's over a's in the round (a busy
    spell of the machine slows both workers of a round alike, so their ratio keeps steady
    where each one's times do not), with the bounds of its 95% confidence interval (the
    order statistics n/2 -+ 0.98 sqrt(n) of the n rounds' ratios)."""
    summary = ROUND_STATISTICS[stat]
    ratios = sorted(summary(b) / summary(a) for a, b in zip(rounds_a, rounds_b, strict=True))
    n = len(ratios)
    spread = int(0.98 * math.sqrt(n))
    low = ratios[max(0, (n - 1) // 2 - spread)]
    high = ratios[min(n - 1, n // 2 + spread)]
    return statistics.median(ratios), low, high


def _ratio(value: tuple[float, float, float], digits: int) -> str:
    middle, low, high = value
    if high - low < 10**-digits:
        return f"{middle:.{digits}f}"
    return f"{middle:.{digits}f} ({low:.{digits}f}-{high:.{digits}f})"


def table(result: dict[str, Any], stat: str = "fastest") -> str:
    labels = [r["rev"] for r in result["revisions"]]
    first = labels[0]
    head = ["workload", HELPER, *labels]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    notes: list[str] = []
    sets = len(result["processes"]) if isinstance(result.get("processes"), list) else 1
    for name, per_label in result["samples"].items():
        times = {label: _time(rounds, stat) for label, rounds in per_label.items()}
        setups = result["setups"][name]
        digests = {setups[label].get("digest") for label in labels if label in times}
        if len(digests) > 1:
            notes.append(f"{name}: the revisions' results differ")
        helper = times.get(HELPER)
        cells = [name, _seconds(helper) if helper else "-"]
        for label in labels:
            if label not in times:
                cells.append("n/a")
                continue
            cell = _seconds(times[label])
            if helper:
                speedup = _paired(per_label[label], per_label[HELPER], stat)
                cell += f", {_ratio(speedup, 2)}x helper"
            if label != first and first in times:
                ratio = _paired(per_label[first], per_label[label], stat)
                cell += f", {_ratio(ratio, 3)} of {first}"
            cells.append(cell)
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        f"Each worker's {stat} sample of a round ({result['clock']} time; a sample is the "
        f"mean of enough calls to last {SAMPLE_SECONDS * 1e3:g} ms), {result['rounds']} "
        f"alternating rounds in {sets} sets of fresh worker processes.  Times: the "
        f"median over the rounds.  Ratios, from the same run: the median over the rounds of "
        f"the ratio in the round (in brackets: its 95% confidence interval); "
        f"'Nx helper': the guide's helper's time over the revision's; 'R of {first}': the "
        f"revision's time over {first}'s (above 1: slower)."
    )
    load = result.get("load")
    if load:
        lines.append(
            f"Load average {load[0]:.1f} at the start, {load[1]:.1f} at the end, "
            f"on {result.get('cpus')} CPUs; workers on CPU {result.get('cpu')}."
        )
    lines.append(
        "Revisions: " + ", ".join(f"{r['rev']} = {r['commit']}" for r in result["revisions"])
    )
    lines.extend(f"Note: {note}" for note in notes)
    return "\n".join(lines)


def _last_cpu() -> int | None:
    """All workers on one CPU: on a virtual machine, CPUs can differ in speed from moment
    to moment (a busy neighbour on the same core), and a worker moved between them would
    carry that difference into its samples."""
    try:
        return max(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity on this system
        return None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("revisions", nargs="*", help="git revisions, or . for this checkout")
    parser.add_argument(
        "--workload", action="append", choices=sorted(WORKLOADS), help="repeatable; default all"
    )
    parser.add_argument("--rounds", type=int, default=24, help="alternating rounds (24)")
    parser.add_argument(
        "--processes", type=int, default=8, help="fresh workers this many times (8)"
    )
    parser.add_argument(
        "--budget", type=float, default=0.05, help="seconds a worker times a workload a round"
    )
    parser.add_argument("--clock", choices=("process", "wall"), default="process")
    parser.add_argument("--repo", default=str(CHECKOUT), help="the git repository of the revisions")
    parser.add_argument("--cache", default=str(DEFAULT_CACHE), help="where builds are kept")
    parser.add_argument("--no-helper", action="store_true", help="do not time the guide's helper")
    parser.add_argument(
        "--stat",
        choices=sorted(ROUND_STATISTICS),
        default="fastest",
        help="a round's sample that counts: its fastest (default) or its median",
    )
    parser.add_argument("--json", help="also write the samples to this file")
    parser.add_argument("--from-json", help="show the table of a run saved with --json")
    parser.add_argument("--list", action="store_true", help="list the workloads and exit")
    parser.add_argument(
        "--cpu",
        type=int,
        default=_last_cpu(),
        help="the CPU every worker runs on (default: the last one this process may use; "
        "-1: let the system move them)",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.cpu is not None and args.cpu < 0:
        args.cpu = None
    if args.worker:
        worker(args.worker, args.clock, args.cpu)
        return
    if args.list:
        for w in WORKLOADS.values():
            print(f"{w.name:<24} {w.what}")
        return
    if args.from_json:
        print(table(json.loads(Path(args.from_json).read_text()), args.stat))
        return
    if len(args.revisions) < 1:
        parser.error("give at least one revision (two to compare)")
    if args.rounds < 1 or args.budget <= 0 or not 1 <= args.processes <= args.rounds:
        parser.error(
            "--rounds and --processes must be at least 1 (processes <= rounds), --budget positive"
        )
    result = run(args)
    if args.json:
        Path(args.json).write_text(json.dumps(result))
    print(table(result, args.stat))


if __name__ == "__main__":
    main()
