"""Differential fuzzing of the compiled kernel against the pure-Python twin, with atheris.

    python fuzz/fuzz_scan.py -max_total_time=60 -max_len=4096            # short run (CI)
    python fuzz/fuzz_scan.py CORPUS_DIR -max_total_time=14400 -max_len=4096   # long run
    python fuzz/fuzz_scan.py --against python -runs=20000                # smoke test
    python fuzz/fuzz_scan.py crash-<sha1>                                # replay a failure

The fuzzer's bytes choose, through `atheris.FuzzedDataProvider`, a grammar (random
families, now and then other markers, any_family, a maximum length, custom patterns), a
text built from a weighted alphabet (the three marker characters, "cite", odd
whitespace, non-ASCII digits, emoji, lone surrogates...) and random citation lists; see
`differential.py` for the checks.  Arguments other than --against go to libFuzzer.

On a mismatch the case is printed as Python source and the run stops with a non-zero
status (libFuzzer also saves the input as crash-<sha1>).  When the kernel cannot be
imported the run fails with status 2: it never skips.  See fuzz/README.md.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent))

from differential import (
    banner,
    build_case,
    check,
    load_scanners,
)


class ProviderSource:
    """The `Source` of `differential`, reading the fuzzer's bytes."""

    def __init__(self, data: bytes) -> None:
        self.fdp = atheris.FuzzedDataProvider(data)

    def int(self, lo: int, hi: int) -> int:
        return self.fdp.ConsumeIntInRange(lo, hi)  # type: ignore[no-any-return]


def main() -> int:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument(
        "--against",
        choices=("cython", "python"),
        default=os.environ.get("CITEMARK_FUZZ_AGAINST", "cython"),
    )
    args, libfuzzer_args = parser.parse_known_args()

    # Instrument the twin and the drop-in layer so that their branches guide the fuzzer;
    # the kernel's own branches only count when it is built with -fsanitize=fuzzer-no-link
    # (see fuzz/README.md).
    try:
        with atheris.instrument_imports(include=["citemark"]):
            subject, twin = load_scanners(args.against)
    except Exception as error:
        print(f"FAIL: {error}", file=sys.stderr)
        return 2
    print(banner(subject, twin), flush=True)

    def test_one_input(data: bytes) -> None:
        # A `Mismatch` escapes: atheris prints it (the message holds the case as Python
        # source), libFuzzer saves the input as crash-<sha1> and exits non-zero.
        check(build_case(ProviderSource(data), twin), subject, twin)

    atheris.Setup([sys.argv[0], *libfuzzer_args], test_one_input)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main())
