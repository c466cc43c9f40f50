"""Threads: a batch of 1 MB texts through ``extract_many`` / ``strip_many`` in 1 thread,
then in 2 threads (a ThreadPoolExecutor of 2, each thread given half of the batch).

The kernel scans large texts without the GIL, so 2 threads can approach 2x its 1-thread
throughput on a 2-core machine (building the result objects still needs the GIL); the
twin holds the GIL throughout, so it stays near 1x.

pytest (`report.py` prints the ratios from the JSON):
    pytest benches/bench_threads.py --benchmark-json=benches/threads.json -q
Script mode (measures and prints the ratios):
    python benches/bench_threads.py
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest

from _common import MB, load_implementations, median_time, timed
from corpus import dense, malformed

IMPLS = ("twin", "kernel")
OPS = ("extract_many", "strip_many")
BATCH = 8  # texts of 1 MB: half dense (~30% inside markers), half malformed


@functools.cache
def batch() -> tuple[str, ...]:
    half = BATCH // 2
    return tuple(
        [dense(MB, seed=100 + i) for i in range(half)]
        + [malformed(MB, seed=200 + i) for i in range(BATCH - half)]
    )


def runner(function: Callable[[list[str]], list[Any]], threads: int, pool: ThreadPoolExecutor):
    """The callable timed: the whole batch in this thread, or split across the pool."""
    texts = list(batch())
    if threads == 1:
        return lambda: function(texts)
    middle = len(texts) // 2
    halves = (texts[:middle], texts[middle:])

    def split() -> list[Any]:
        futures = [pool.submit(function, half) for half in halves]
        return [item for future in futures for item in future.result()]

    return split


@pytest.fixture(scope="module")
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="citemark-bench") as executor:
        yield executor


@pytest.fixture(scope="module")
def reference() -> dict[str, list[Any]]:
    """Single-thread twin results, to check the threaded runs against."""
    twin = load_implementations()["twin"]
    return {op: getattr(twin, op)(list(batch())) for op in OPS}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("impl", IMPLS)
def test_threads(
    benchmark: Any,
    use: Any,
    pool: ThreadPoolExecutor,
    reference: dict[str, list[Any]],
    impl: str,
    op: str,
    threads: int,
) -> None:
    run = runner(getattr(use(impl), op), threads, pool)
    texts = batch()
    benchmark.group = f"threads {impl} {op}"
    benchmark.extra_info.update(
        suite="threads",
        workload=f"batch_{len(texts)}x1MB",
        op=op,
        impl=impl,
        threads=threads,
        chars=sum(map(len, texts)),
        texts=len(texts),
    )
    assert timed(benchmark, run) == reference[op]


def main() -> int:
    impls = load_implementations()
    texts = batch()
    chars = sum(map(len, texts))
    print(f"batch: {len(texts)} texts, {chars / MB:.1f} MB (half dense, half malformed)")
    print(f"{'impl':<7} {'call':<13} {'1 thread':>10} {'2 threads':>10} {'ratio 2/1':>9}")
    with ThreadPoolExecutor(max_workers=2) as pool:
        for name in IMPLS:
            impl = impls[name]
            if isinstance(impl, str):
                print(f"{name}: {impl}")
                continue
            for op in OPS:
                one = median_time(runner(getattr(impl, op), 1, pool), budget=2.0)
                two = median_time(runner(getattr(impl, op), 2, pool), budget=2.0)
                print(f"{name:<7} {op:<13} {one * 1e3:8.1f}ms {two * 1e3:8.1f}ms {one / two:8.2f}x")
    print("ratio 2/1: throughput with 2 threads over 1 thread (2.00x = perfect scaling)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
