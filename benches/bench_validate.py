"""`citemark.validate.validate` against the compiled `extract_citations` on the same text.

Target (issue 12): validate within 10x of the compiled extract on every adversarial shape of
bench_bounds (unclosed STARTs, nested STARTs, runs of DELIMs, backticks, one long line, a
dense answer).  Group "validate <shape>": rows "extract" (the drop-in's extract_citations on
the active implementation) and "validate" (registry and style as bench_bounds uses them).

Run: ``pytest benches/bench_validate.py -q`` (pytest-benchmark), or
``python benches/bench_validate.py [SIZE]`` for medians and the ratio per shape from one
run (SIZE in characters, default 100,000).  Script mode times CPU time
(`time.process_time`) and alternates the two rows call by call: on a shared machine wall
time mostly measures the neighbours, and a ratio of rows timed apart their load at the time.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest

from _common import ensure_citemark_importable, timed

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


def cpu_medians(rows: dict[str, Callable[[], Any]], budget: float = 1.0) -> dict[str, float]:
    """Median CPU seconds of each row over at least 3 rounds and about `budget` seconds, the
    rows called in turn within each round, after one warm-up call each; the harness's heap
    frozen (`gc.freeze`) as in `timed`."""
    began = time.process_time()
    for function in rows.values():
        function()
    rounds = max(3, min(200, int(budget / max(time.process_time() - began, 1e-6))))
    samples: dict[str, list[float]] = {name: [] for name in rows}
    gc.collect()
    gc.freeze()
    try:
        for _ in range(rounds):
            for name, function in rows.items():
                began = time.process_time()
                function()
                samples[name].append(time.process_time() - began)
    finally:
        gc.unfreeze()
    return {name: statistics.median(times) for name, times in samples.items()}


def main(argv: list[str]) -> int:
    size = int(argv[0]) if argv else SIZE
    print(f"implementation {citemark.IMPLEMENTATION}, {size:,} characters, CPU time")
    print(f"{'shape':<12} {'extract':>11} {'validate':>11} {'ratio':>7}")
    for shape, make in SHAPES.items():
        medians = cpu_medians(_rows(make(size)))
        extract, checked = medians["extract"], medians["validate"]
        print(
            f"{shape:<12} {extract * 1e3:8.3f} ms {checked * 1e3:8.3f} ms {checked / extract:7.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
