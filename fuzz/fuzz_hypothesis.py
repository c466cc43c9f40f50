"""Differential fuzzing of the compiled kernel against the pure-Python twin, with hypothesis.

    python fuzz/fuzz_hypothesis.py --examples 2000                     # short run (CI)
    python fuzz/fuzz_hypothesis.py --examples 20000 --duration 14400   # long run, 4 hours
    python fuzz/fuzz_hypothesis.py --against python                    # smoke test

Exit status: 0 when no difference was found, 1 on a mismatch (the shrunk input is
printed as Python source), 2 when the kernel cannot be imported (never a skip).
The number of examples also comes from CITEMARK_FUZZ_EXAMPLES, the mode from
CITEMARK_FUZZ_AGAINST; the command line wins.  See fuzz/README.md.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from differential import (
    Mismatch,
    banner,
    build_case,
    check,
    load_scanners,
)


class DataSource:
    """The `Source` of `differential`, drawing from hypothesis so that it can shrink."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data

    def int(self, lo: int, hi: int) -> int:
        return self.data.draw(st.integers(lo, hi))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--examples",
        type=int,
        default=int(os.environ.get("CITEMARK_FUZZ_EXAMPLES", "2000")),
        help="examples per run (default: $CITEMARK_FUZZ_EXAMPLES or 2000)",
    )
    parser.add_argument(
        "--against",
        choices=("cython", "python"),
        default=os.environ.get("CITEMARK_FUZZ_AGAINST", "cython"),
        help="cython: kernel vs twin (default); python: twin vs itself, a smoke test",
    )
    parser.add_argument(
        "--duration",
        type=float,
        default=0.0,
        help="keep starting new runs (fresh seeds) until this many seconds have passed",
    )
    parser.add_argument("--seed", type=int, default=None, help="seed of the first run")
    parser.add_argument(
        "--no-shrink",
        action="store_true",
        help="report the first failing input as found (faster under valgrind)",
    )
    return parser.parse_args(argv)


def run(args: argparse.Namespace, subject, twin, run_seed: int) -> None:  # type: ignore[no-untyped-def]
    phases = [Phase.explicit, Phase.generate] + ([] if args.no_shrink else [Phase.shrink])

    @seed(run_seed)
    @settings(
        max_examples=args.examples,
        deadline=None,
        database=None,
        phases=phases,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        verbosity=Verbosity.quiet,
    )
    @given(st.data())
    def differential(data: st.DataObject) -> None:
        check(build_case(DataSource(data), twin), subject, twin)

    differential()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        subject, twin = load_scanners(args.against)
    except Exception as error:
        print(f"FAIL: {error}", file=sys.stderr)
        return 2
    print(banner(subject, twin), flush=True)

    rng = random.Random(args.seed)
    deadline = time.monotonic() + args.duration
    runs = 0
    started = time.monotonic()
    while True:
        run_seed = args.seed if runs == 0 and args.seed is not None else rng.getrandbits(64)
        # Printed first, so that even a crash of the process can be replayed (--seed).
        print(f"run {runs + 1}: {args.examples} examples, --seed {run_seed}", flush=True)
        try:
            run(args, subject, twin, run_seed)
        except Mismatch as error:
            print(f"\nMISMATCH (seed {run_seed}):\n{error}", flush=True)
            return 1
        except Exception as error:
            print(f"\nFAIL (seed {run_seed}): {type(error).__name__}: {error}", flush=True)
            return 1
        runs += 1
        if time.monotonic() >= deadline:
            break
    elapsed = time.monotonic() - started
    print(
        f"OK: {runs} run(s) of {args.examples} examples, no difference "
        f"({args.against}, {elapsed:.1f}s)",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
