"""Instructions a call of compare.py's workloads, per revision, under valgrind's callgrind.

    python benches/callgrind.py REV_A REV_B [...] [--workload NAME ...] [--calls N]

Instruction counts are repeatable where times on a shared machine are not, so they decide
between two versions of a hot path; compare.py then says what the times do.  Each REV is
built as compare.py builds it (the same cache).  A workload runs once and N + 1 times in two
callgrind runs; the difference over N is the cost of one call, without the interpreter's
start, the imports and the making of the texts.  PYTHONHASHSEED is fixed: the probes of a
dict lookup depend on the string hashes, which change with every process otherwise.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import compare

RUNNER = """
import gc, sys
sys.path.insert(0, {benches!r})
import compare
call, _ = compare.WORKLOADS[{name!r}].kernel()
gc.collect()
gc.freeze()
for _ in range({calls}):
    call()
"""


def instructions(tree: Path, name: str, calls: int) -> int:
    """Instructions callgrind counts for the whole process running `name` `calls` times."""
    env = dict(
        os.environ,
        PYTHONHASHSEED="0",
        PYTHONPATH=os.pathsep.join([str(tree / "src"), str(compare.HERE)]),
        CITEMARK_IMPLEMENTATION="cython",
    )
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={Path(scratch) / 'out'}",
                sys.executable,
                "-c",
                RUNNER.format(benches=str(compare.HERE), name=name, calls=calls),
            ],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        sys.exit(f"callgrind of {name} in {tree} failed:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("revisions", nargs="+", help="git revisions, or . for this checkout")
    parser.add_argument(
        "--workload",
        action="append",
        choices=sorted(compare.WORKLOADS),
        help="repeatable; default extract_typical_4KB and finditer_dense_1MB",
    )
    parser.add_argument("--calls", type=int, default=0, help="N (default: 200 small, 3 large)")
    parser.add_argument("--repo", default=str(compare.CHECKOUT))
    parser.add_argument("--cache", default=str(compare.DEFAULT_CACHE))
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not on PATH")
    names = args.workload or ["extract_typical_4KB", "finditer_dense_1MB"]
    labels = compare._labels(args.revisions)
    built = [
        compare.prepare(rev, Path(args.repo).resolve(), Path(args.cache).resolve())
        for rev in args.revisions
    ]
    print("| workload | " + " | ".join(labels) + " |")
    print("|---" * (len(labels) + 1) + "|")
    for name in names:
        calls = args.calls or (200 if "4KB" in name else 3)
        cells = []
        first = 0.0
        for tree, _ in built:
            once = instructions(tree, name, 1)
            many = instructions(tree, name, calls + 1)
            per_call = (many - once) / calls
            first = first or per_call
            cells.append(f"{per_call:,.0f} ({per_call / first:.3f})")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()
    print(
        "Instructions a call (callgrind, PYTHONHASHSEED=0); in brackets: over the first "
        "revision's.  Revisions: "
        + ", ".join(f"{label} = {commit}" for label, (_, commit) in zip(labels, built, strict=True))
    )


if __name__ == "__main__":
    main()
