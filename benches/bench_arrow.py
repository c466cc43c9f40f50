"""Arrow: `citemark.arrow.strip` / `extract` on a string column in memory, against the floor
of `pyarrow.compute.utf8_length` over the same column (one pass over its UTF-8 bytes, the
speed of memory).  The target is each within 2.5x of the floor.

The column: the 4,000 varied answers of `corpus.answers` (0.5-8 KB, mostly English with
citations, some CJK, some without markers), about 20 MB of UTF-8, as `string` (int32
offsets).  Each path gets the column as pyarrow holds it; the pure path is timed on a tenth
of it (it goes row by row through Python strings) and reported per byte.

pytest (`report.py` prints the ratios from the JSON):
    pytest benches/bench_arrow.py --benchmark-json=benches/arrow.json -q
Script mode (measures and prints MB/s and the ratios to the floor):
    python benches/bench_arrow.py
    python benches/bench_arrow.py --repeat 8   # the column 8 times over (156 MB), large_string:
                                               # output past the caches, fresh pages each call
"""

from __future__ import annotations

import functools
import importlib
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest

from _common import median_time, timed
from corpus import answers

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")

ROWS = 4_000
PATHS = {"kernel": "citemark._arrow_c", "twin": "citemark._arrow_py"}


@functools.cache
def column(rows: int = ROWS) -> Any:
    return pa.array(answers(ROWS)[:rows], type=pa.string())


def arrow_for(path: str) -> Any:
    import citemark.arrow

    return citemark.arrow.Arrow(importlib.import_module(PATHS[path]))


def size_of(array: Any) -> int:
    return int(array.buffers()[2].size)


def rows_for(path: str) -> int:
    return ROWS if path == "kernel" else ROWS // 10


def test_floor_utf8_length(benchmark: Any) -> None:
    array = column()
    benchmark.group = "arrow"
    benchmark.extra_info.update(
        suite="arrow", op="utf8_length", impl="pyarrow", bytes=size_of(array)
    )
    timed(benchmark, pc.utf8_length, array)


@pytest.mark.parametrize("op", ["strip", "extract"])
@pytest.mark.parametrize("path", sorted(PATHS))
def test_arrow(benchmark: Any, path: str, op: str) -> None:
    array = column(rows_for(path))
    benchmark.group = "arrow"
    benchmark.extra_info.update(suite="arrow", op=op, impl=path, bytes=size_of(array))
    result = timed(benchmark, getattr(arrow_for(path), op), array)
    assert len(result) == len(array)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    repeat = int(args[args.index("--repeat") + 1]) if "--repeat" in args else 1
    array = column()
    if repeat > 1:
        array = pa.array(answers(ROWS) * repeat, type=pa.large_string())
    floor = median_time(pc.utf8_length, array, budget=2.0)
    mb = size_of(array) / 1e6
    print(f"column: {len(array)} rows, {mb:.1f} MB of UTF-8")
    print(f"{'call':<28} {'MB/s':>8} {'x floor':>8}")
    print(f"{'pyarrow utf8_length':<28} {mb / floor:8.0f} {1.0:8.2f}")
    for path in ("kernel", "twin"):
        part = column(rows_for(path)) if repeat == 1 or path == "twin" else array
        share = size_of(part) / size_of(array)
        for op in ("strip", "extract"):
            seconds = median_time(getattr(arrow_for(path), op), part, budget=2.0) / share
            print(
                f"{f'citemark.arrow.{op} ({path})':<28} {mb / seconds:8.0f} {seconds / floor:8.2f}"
            )
    print("x floor: time over pyarrow.compute.utf8_length's on the same column (target <= 2.5)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
