"""`citemark.validate.validate` against the compiled `extract_citations` on the same text.

Target (issue 12): validate within 10x of the compiled extract on every adversarial shape of
bench_bounds (unclosed STARTs, nested STARTs, runs of DELIMs, backticks, one long line, a
dense answer).  Group "validate <shape>": rows "extract" (the drop-in's extract_citations on
the active implementation) and "validate" (registry and style as bench_bounds uses them).

Run: ``pytest benches/bench_validate.py -q`` (pytest-benchmark), or
``python benches/bench_validate.py [SIZE]`` for medians and the ratio per shape from one
run (SIZE in characters, default 100,000).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest

from _common import ensure_citemark_importable, median_time, timed

ensure_citemark_importable()

import citemark  # noqa: E402
from bench_bounds import SHAPES  # noqa: E402
from citemark import extract_citations  # noqa: E402
from citemark.sources import Registry, Source  # noqa: E402
from citemark.validate import validate  # noqa: E402

SIZE = 100_000
IDS = ["turn0search0", "turn0file0", "turn0file1", "x"]
REGISTRY = Registry([Source(i, "one\ntwo\nthree", url=f"https://e.example/{i}") for i in IDS])


def _rows(text: str) -> dict[str, Callable[[], Any]]:
    return {
        "extract": lambda: extract_citations(text),
        "validate": lambda: validate(text, REGISTRY, style="tool-lines"),
    }


@pytest.mark.parametrize("row", ["extract", "validate"])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_validate(benchmark: Any, shape: str, row: str) -> None:
    benchmark.group = f"validate {shape}"
    benchmark.extra_info["implementation"] = citemark.IMPLEMENTATION
    timed(benchmark, _rows(SHAPES[shape](SIZE))[row])


def main(argv: list[str]) -> int:
    size = int(argv[0]) if argv else SIZE
    print(f"implementation {citemark.IMPLEMENTATION}, {size:,} characters")
    print(f"{'shape':<12} {'extract':>11} {'validate':>11} {'ratio':>7}")
    for shape, make in SHAPES.items():
        rows = _rows(make(size))
        extract = median_time(rows["extract"])
        checked = median_time(rows["validate"])
        print(
            f"{shape:<12} {extract * 1e3:8.3f} ms {checked * 1e3:8.3f} ms {checked / extract:7.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
