"""Hostile inputs that a quadratic scan would take minutes on, timed at two sizes (the unit
tests keep their results but assert no timings).  The fitted exponent should stay near 1.

pytest:  pytest benches/bench_hostile.py -q
Script:  python benches/bench_hostile.py    # prints the exponent fitted from sizes x1 and x4
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest

from _common import ensure_citemark_importable, fit_exponent, median_time, timed

ensure_citemark_importable()

S, D, E = "\ue200", "\ue202", "\ue201"
SCALES = (1, 4)


def arrow_rows(scale: int) -> Any:
    import pyarrow as pa

    row = (S + "cite" + D + "turn0search0 ") * (10_000 * scale) + S + "cite" + D + "x" + E
    return pa.array([row, S * (50_000 * scale)])


def backticks(scale: int) -> str:
    return "a" + "`" * (250_000 * scale)


def hostile_markdown(scale: int) -> str:
    chunk = "*a _b **c " + S + "x " + E + " " + D + " `d turn0file0 \\ue200 "
    return (chunk + S + "cite" + D + "turn0file0" + E + "\n") * (1000 * scale)


def replacement_characters(scale: int) -> str:
    # What a binary file read with errors="replace" is made of: U+FFFD, which lenient cleaning
    # reads as marker characters that were lost.
    return "\ufffd" * (250_000 * scale) + " x\ufffd\ufffd" * (25_000 * scale)


def bare_ids(scale: int) -> list[str]:
    # One line of bare ids (DELIM, then an id) in 64-character deltas: the stream's front
    # walks back over each DELIM.
    line = D + "turn0search0"
    text = line * (25_000 * scale)
    return [text[at : at + 64] for at in range(0, len(text), 64)]


def _mapped_stream(chunks: list[str]) -> Any:
    from citemark.display import CleanStream

    stream = CleanStream(mapped=True)
    return [stream.feed(chunk) for chunk in chunks] + [stream.close()]


def _clean_lenient(text: str) -> Any:
    from citemark.display import clean

    return clean(text, lenient=True)


def _arrow(array: Any) -> Any:
    import citemark.arrow

    return citemark.arrow.strip(array), citemark.arrow.extract(array)


def _find_code_ranges(text: str) -> Any:
    from citemark._markdown.code import find_code_ranges

    return find_code_ranges(text)


def _validate(text: str) -> Any:
    from citemark.validate import validate

    return validate(text, None)


CASES: dict[str, tuple[Callable[[int], Any], Callable[[Any], Any]]] = {
    "arrow_unclosed_starts": (arrow_rows, _arrow),
    "find_code_ranges_backticks": (backticks, _find_code_ranges),
    "validate_hostile_markdown": (hostile_markdown, _validate),
    "clean_lenient_replacements": (replacement_characters, _clean_lenient),
    "clean_stream_mapped_bare_ids": (bare_ids, _mapped_stream),
}


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("case", list(CASES))
def test_hostile(benchmark: Any, case: str, scale: int) -> None:
    make, run = CASES[case]
    benchmark.group = f"hostile {case}"
    benchmark.extra_info.update(suite="hostile", workload=case, scale=scale)
    timed(benchmark, run, make(scale))


def main() -> int:
    for case, (make, run) in CASES.items():
        times = [median_time(run, make(scale)) for scale in SCALES]
        print(f"{case:28} exponent {fit_exponent(SCALES, times):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
