"""What each compiled kernel earns: the figures of the fast-path tables at the top of
`clean_c.pyx`, `jsonl_c.pyx` and `arrow_c.pyx`.

Each kernel runs a realistic job three ways, each in a fresh process: compiled, compiled
with `CITEMARK_SIMD=portable` (simd.h's vector searches off), and its pure twin
(`CITEMARK_IMPLEMENTATION=python`).  The jobs:

- clean: `citemark.clean` of each of `corpus.answers` (2,000 answers, 0.5-8 KB);
- jsonl: the batch engine's strip, clean and extract of a `make_log.py` log (the chunk the
  command line hands the kernel, `-j 1`, no file I/O);
- arrow: `citemark.arrow.strip` and `extract` of the answers as one `string` column.

A process reports the CPU time (`time.process_time`) of its fastest of `--repeat` runs; the
configurations alternate for `--rounds` rounds, and the table gives the median over the
rounds of each ratio, so a busy spell of a shared machine hits a round's rows alike.

Run: ``python benches/bench_kernels.py [--rounds 3] [--only clean,jsonl,arrow]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CONFIGS = {
    "compiled": {},
    "portable": {"CITEMARK_SIMD": "portable"},
    "twin": {"CITEMARK_IMPLEMENTATION": "python"},
}
LOG_ROWS = 4_000


def _answers() -> list[str]:
    sys.path.insert(0, str(HERE))
    import corpus

    return list(corpus.answers(2_000))


def _log() -> bytes:
    sys.path.insert(0, str(HERE))
    import make_log

    rows = make_log.records(1)
    return b"".join(json.dumps(next(rows)).encode() + b"\n" for _ in range(LOG_ROWS))


def _jobs(kernel: str) -> dict[str, Any]:
    """name -> a callable doing one run of the job (inputs made beforehand)."""
    if kernel == "clean":
        import citemark

        texts = _answers()
        return {"clean": lambda: [citemark.clean(text) for text in texts]}
    if kernel == "jsonl":
        from citemark._cli import work

        data = _log()
        jobs = {}
        for command in ("strip", "clean", "extract"):
            jobs[command] = _jsonl_job(work, command, data)
        return jobs
    if kernel == "arrow":
        import pyarrow as pa

        import citemark.arrow

        column = pa.array(_answers(), type=pa.string())
        return {
            "strip": lambda: citemark.arrow.strip(column),
            "extract": lambda: citemark.arrow.extract(column),
        }
    raise ValueError(f"kernel must be clean, jsonl or arrow, not {kernel!r}")


def _jsonl_job(work: Any, command: str, data: bytes) -> Any:
    """One chunk of the batch engine's JSONL work for `command`, as a worker runs it."""
    from citemark._cli.commands import Job
    from citemark._core.grammar import DEFAULT_FAMILIES

    job = Job(
        command=command,
        input_format="jsonl",
        output_format="jsonl",
        families=tuple(DEFAULT_FAMILIES),
        field_path=("response", "output_text"),
    )
    task = work.Task(file="log.jsonl", first_row=0, payload=data, nbytes=len(data))
    return lambda: work.process(job, task)


def _worker(kernel: str, repeat: int) -> None:
    """Print {job: fastest CPU seconds} for one configuration (this process's env)."""
    jobs = _jobs(kernel)
    best = {}
    for name, run in jobs.items():
        run()  # warm: imports, caches
        times = []
        for _ in range(repeat):
            began = time.process_time()
            run()
            times.append(time.process_time() - began)
        best[name] = min(times)
    print(json.dumps(best))


def _run(kernel: str, config: str, repeat: int) -> dict[str, float]:
    env = {**os.environ, **CONFIGS[config]}
    done = subprocess.run(
        [sys.executable, __file__, "--worker", kernel, "--repeat", str(repeat)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="clean,jsonl,arrow")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker(args.worker, args.repeat)
        return 0
    print(
        f"| kernel | job | twin / compiled | portable / compiled | (median of {args.rounds} rounds)"
    )
    print("|---|---|---|---|")
    for kernel in args.only.split(","):
        ratios: dict[str, dict[str, list[float]]] = {}
        for _ in range(args.rounds):
            found = {config: _run(kernel, config, args.repeat) for config in CONFIGS}
            for job, compiled in found["compiled"].items():
                mine = ratios.setdefault(job, {"twin": [], "portable": []})
                mine["twin"].append(found["twin"][job] / compiled)
                mine["portable"].append(found["portable"][job] / compiled)
        for job, mine in ratios.items():
            twin = statistics.median(mine["twin"])
            portable = statistics.median(mine["portable"])
            print(f"| {kernel} | {job} | {twin:.1f}x | {portable:.2f}x |")
    load = os.getloadavg()[0]
    print(f"\nload average {load:.1f} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
