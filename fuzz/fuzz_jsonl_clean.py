"""Fuzz targets: the JSONL kernel's passes over UTF-8 bytes: `clean_lines`, and `strip_lines` /
`extract_lines` on escaped logs.

`clean`: for random JSONL logs (texts of marker characters of every kind, entities, titled
families, Markdown code, escapes, \\u escapes, emoji, lone surrogates; blank, bad and null
lines; long texts that cross the core's window of tokens) the compiled `clean_lines` must give
exactly what `map_lines(data, path, clean_many, skip_bad)` gives (every text decoded and cleaned
by the str kernel), and so must the pure twin.

`escaped`: for logs spelled as json.dumps writes them by default (ASCII), in UTF-8, or with
escapes at random (in markers too), the compiled `strip_lines` and `extract_lines` (which decode
such tokens in the pass) must give the old path's bytes, line by line
(tests/cli/test_jsonl_escaped.py spells it out), and so must the pure twin; half the time with
no raw families, so that every text goes through `many`.

Under ASan (fuzz/README.md) these are the runs that check the passes' bounds on UTF-8.

    python fuzz/fuzz_jsonl_clean.py --examples 2000                   # both targets
    python fuzz/fuzz_jsonl_clean.py --target escaped --examples 2000
    python fuzz/fuzz_jsonl_clean.py --target clean --atheris -max_total_time=600 -rss_limit_mb=8192

Exit status: 0 when the property held, 1 on a failure (hypothesis prints the shrunk input),
2 when the compiled kernel cannot be imported (never a skip).
"""

from __future__ import annotations

import random
import sys
from functools import partial
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # strategies.py
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "cli"))  # test_jsonl*

from fuzz_targets import drive

import test_jsonl_escaped as escaped
from citemark import extract_many, strip_many
from citemark._kernels.loader import load
from citemark.display import clean_many
from test_jsonl import expected_citation_lines
from test_jsonl_clean import ATOMS, PATH, SPELLINGS, line_of, logs


def long_logs(texts: st.SearchStrategy[str]) -> st.SearchStrategy[bytes]:
    """One line whose text repeats a random piece (a text of `texts`) hundreds of times."""

    @st.composite
    def one(draw: st.DrawFn) -> bytes:
        text = draw(texts) * draw(st.integers(1, 600))
        rng = random.Random(draw(st.integers(0, 2**32)))
        return line_of(text, draw(st.sampled_from(SPELLINGS)), rng)

    return one()


ATOM_PIECES = st.lists(st.sampled_from(ATOMS), min_size=1, max_size=8).map("".join)


def clean_target() -> object:
    compiled, pure = load("jsonl", "cython"), load("jsonl", "python")

    @given(data=st.one_of(logs(), long_logs(ATOM_PIECES)), skip_bad=st.booleans())
    def jsonl_clean(data: bytes, skip_bad: bool) -> None:
        want = compiled.map_lines(data, PATH, clean_many, skip_bad)
        assert compiled.clean_lines(data, PATH, clean_many, skip_bad) == want, data
        assert pure.clean_lines(data, PATH, clean_many, skip_bad) == want, data

    return jsonl_clean


def escaped_target() -> object:
    compiled, pure = load("jsonl", "cython"), load("jsonl", "python")

    @given(
        data=st.one_of(escaped.logs(), long_logs(escaped.texts)),
        families=st.sampled_from(escaped.FAMILIES),
        skip_bad=st.booleans(),
        scan_raw=st.booleans(),
    )
    def jsonl_escaped(
        data: bytes, families: tuple[str, ...], skip_bad: bool, scan_raw: bool
    ) -> None:
        # None: no token is scanned raw, each text goes to `many` (the path with holes)
        raw = escaped.encoded(families) if scan_raw else None
        strip = partial(strip_many, families=families)
        want = escaped.expected_strip(data, families, skip_bad)
        for kernel in (compiled, pure):
            assert kernel.strip_lines(data, PATH, strip, skip_bad, raw)[0] == want, data
        extract = partial(extract_many, families=families)
        found = compiled.extract_lines(data, PATH, extract, skip_bad, "f", 0, raw)
        assert found == pure.extract_lines(data, PATH, extract, skip_bad, "f", 0, raw), data
        if skip_bad:
            assert found[0] == expected_citation_lines(data, families, "f", 0), data

    return jsonl_escaped


TARGETS = {"clean": clean_target, "escaped": escaped_target}


def main(argv: list[str] | None = None) -> int:
    return drive(TARGETS, ("jsonl", "clean"), argv, __doc__.split("\n\n")[0])


if __name__ == "__main__":
    sys.exit(main())
