"""Fuzz target: `clean_lines`, the JSONL kernel's clean pass over UTF-8 bytes.

For random JSONL logs (texts of marker characters of every kind, entities, titled families,
Markdown code, escapes, \\u escapes, emoji, lone surrogates; blank, bad and null lines; long
texts that cross the core's window of tokens) the compiled `clean_lines` must give exactly
what `map_lines(data, path, clean_many, skip_bad)` gives (every text decoded and cleaned by
the str kernel), and so must the pure twin.  Under ASan (fuzz/README.md) this is the run that
checks the clean core's bounds on UTF-8.

    python fuzz/fuzz_jsonl_clean.py --examples 2000
    python fuzz/fuzz_jsonl_clean.py --atheris -max_total_time=600 -rss_limit_mb=8192

Exit status: 0 when the property held, 1 on a failure (hypothesis prints the shrunk input),
2 when the compiled kernel cannot be imported (never a skip).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from citemark._select import load
from citemark.clean import clean_many
from test_jsonl_clean import ATOMS, PATH, SPELLINGS, line_of, logs


@st.composite
def long_logs(draw: st.DrawFn) -> bytes:
    """One line whose text repeats a random piece hundreds of times."""
    piece = "".join(draw(st.lists(st.sampled_from(ATOMS), min_size=1, max_size=8)))
    text = piece * draw(st.integers(1, 600))
    rng = random.Random(draw(st.integers(0, 2**32)))
    return line_of(text, draw(st.sampled_from(SPELLINGS)), rng)


def target() -> object:
    compiled, pure = load("_jsonl", "cython"), load("_jsonl", "python")

    @given(data=st.one_of(logs(), long_logs()), skip_bad=st.booleans())
    def jsonl_clean(data: bytes, skip_bad: bool) -> None:
        want = compiled.map_lines(data, PATH, clean_many, skip_bad)
        assert compiled.clean_lines(data, PATH, clean_many, skip_bad) == want, data
        assert pure.clean_lines(data, PATH, clean_many, skip_bad) == want, data

    return jsonl_clean


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument("--atheris", action="store_true", help="drive it with libFuzzer")
    args, libfuzzer_args = parser.parse_known_args(argv)
    try:
        load("_jsonl", "cython")
        load("_clean", "cython")
    except ImportError as error:
        print(f"FAIL: {error}", file=sys.stderr)
        return 2
    test = target()
    if args.atheris:
        import atheris

        fuzz_one_input = test.hypothesis.fuzz_one_input  # type: ignore[attr-defined]
        atheris.Setup([sys.argv[0], *libfuzzer_args], fuzz_one_input)
        atheris.Fuzz()
        return 0
    try:
        settings(
            max_examples=args.examples,
            deadline=None,
            database=None,
            phases=[Phase.generate, Phase.shrink],
            suppress_health_check=list(HealthCheck),
        )(test)()  # type: ignore[operator]
    except Exception as error:
        notes = "\n".join(getattr(error, "__notes__", []))
        print(f"jsonl_clean: FAIL {type(error).__name__}: {error}\n{notes}", flush=True)
        return 1
    print(f"jsonl_clean: OK, {args.examples} examples", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
