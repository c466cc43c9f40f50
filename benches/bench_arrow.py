"""Arrow: `citemark.arrow.strip` / `extract` on a string column in memory, against the floor
of `pyarrow.compute.utf8_length` over the same column (one pass over its UTF-8 bytes, the
speed of memory).  The target is each within 2.5x of the floor.

The column: the 4,000 varied answers of `corpus.answers` (0.5-8 KB, mostly English with
citations, some CJK, some without markers), about 20 MB of UTF-8, as `string` (int32
offsets).  Each path gets the column as pyarrow holds it; the pure path is timed on a tenth
of it (it goes row by row through Python strings) and reported per byte.

pytest (`report.py` prints the ratios from the JSON):
    pytest benches/bench_arrow.py --benchmark-json=benches/arrow.json -q
Script mode (prints MB/s and the ratios to the floor, from the best CPU time of each call
over rounds that interleave the calls, so that a shared machine's load hits all alike):
    python benches/bench_arrow.py [--rounds N]
    python benches/bench_arrow.py --repeat 8   # the column 8 times over (156 MB), large_string:
                                               # input and output past the caches
"""

from __future__ import annotations

import functools
import gc
import importlib
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest

from _common import timed
from corpus import answers

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")

ROWS = 4_000
PATHS = {"kernel": "citemark._kernels.arrow_c", "twin": "citemark._kernels.arrow_py"}


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


def best_cpu(calls: dict[str, tuple[Any, Any]], rounds: int) -> dict[str, float]:
    """Best CPU time (`time.process_time`) of each `function(argument)` over `rounds`
    interleaved rounds, after one warm-up call each: the floor and the calls run under the
    same load, so their ratios hold on a shared machine."""
    for function, argument in calls.values():
        function(argument)
    best = dict.fromkeys(calls, float("inf"))
    gc.collect()
    gc.freeze()
    try:
        for _ in range(rounds):
            for name, (function, argument) in calls.items():
                began = time.process_time()
                result = function(argument)
                best[name] = min(best[name], time.process_time() - began)
                del result
    finally:
        gc.unfreeze()
    return best


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    repeat = int(args[args.index("--repeat") + 1]) if "--repeat" in args else 1
    rounds = int(args[args.index("--rounds") + 1]) if "--rounds" in args else 0
    array = column()
    if repeat > 1:
        array = pa.array(answers(ROWS) * repeat, type=pa.large_string())
    rounds = rounds or max(5, 25 // repeat)
    calls: dict[str, tuple[Any, Any]] = {"floor": (pc.utf8_length, array)}
    for path in ("kernel", "twin"):
        part = column(rows_for(path)) if repeat == 1 or path == "twin" else array
        for op in ("strip", "extract"):
            calls[f"citemark.arrow.{op} ({path})"] = (getattr(arrow_for(path), op), part)
    best = best_cpu(calls, rounds)
    mb = size_of(array) / 1e6
    floor = best.pop("floor")
    print(f"column: {len(array)} rows, {mb:.1f} MB of UTF-8; best CPU time of {rounds} rounds")
    print(f"{'call':<32} {'MB/s':>8} {'x floor':>8}")
    print(f"{'pyarrow utf8_length':<32} {mb / floor:8.0f} {1.0:8.2f}")
    for name, seconds in best.items():
        seconds /= size_of(calls[name][1]) / size_of(array)  # the twin runs on a tenth
        print(f"{name:<32} {mb / seconds:8.0f} {seconds / floor:8.2f}")
    print("x floor: time over pyarrow.compute.utf8_length's on the same column (target <= 2.5)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
