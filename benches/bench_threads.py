"""Threads: the same calls in 1 thread, then split over 2 (a ThreadPoolExecutor of 2, each
thread given half of the batch), on two batches:

* ``typical``: 4,000 typical answers of about 4 KB (``corpus.typical_answer``), where the
  cost is per call: what threads contend on per call (shared objects whose reference counts
  both write, dict lookups) decides the scaling, not the scan;
* ``large``: 8 texts of 1 MB (half dense, half malformed), where the scan dominates.

Calls: ``extract_many``, ``strip_many`` and a loop of ``extract_citations``.  On a
free-threaded build (3.13t, 3.14t) every call can scale toward 2x on 2 idle cores; with the
GIL only the kernel's GIL-free scan of large texts can.  ``calibration`` is a GIL-free C loop
(sha256 of 20 MB per thread): its ratio is what this machine gives 2 threads at the moment, so
read the other ratios against it on a shared machine.

pytest (`report.py` prints the ratios from the JSON):
    pytest benches/bench_threads.py --benchmark-json=benches/threads.json -q
Script mode (measures and prints the ratios, and whether the GIL is on):
    python benches/bench_threads.py
"""

from __future__ import annotations

import functools
import hashlib
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest

from _common import KB, MB, load_implementations, median_time, timed
from corpus import dense, malformed, typical_answer

IMPLS = ("twin", "kernel")
OPS = ("extract_many", "strip_many", "extract_loop")
BATCHES = ("typical", "large")
TYPICAL = 4_000  # answers of about 4 KB
LARGE = 8  # texts of 1 MB: half dense (~30% inside markers), half malformed
CALIBRATION_BYTES = 20 * MB


@functools.cache
def batch(name: str) -> tuple[str, ...]:
    if name == "typical":
        return tuple(typical_answer(seed, 4 * KB) for seed in range(TYPICAL))
    half = LARGE // 2
    return tuple(
        [dense(MB, seed=100 + i) for i in range(half)]
        + [malformed(MB, seed=200 + i) for i in range(LARGE - half)]
    )


def operation(impl: Any, op: str) -> Callable[[list[str]], list[Any]]:
    if op == "extract_loop":
        extract = impl.extract_citations
        return lambda texts: [extract(text) for text in texts]
    return getattr(impl, op)  # type: ignore[no-any-return]


def runner(
    function: Callable[[list[Any]], list[Any]],
    items: list[Any],
    threads: int,
    pool: ThreadPoolExecutor,
) -> Callable[[], list[Any]]:
    """The callable timed: all of `items` in this thread, or half in each pool thread."""
    if threads == 1:
        return lambda: function(items)
    middle = len(items) // 2
    halves = (items[:middle], items[middle:])

    def split() -> list[Any]:
        futures = [pool.submit(function, half) for half in halves]
        return [item for future in futures for item in future.result()]

    return split


def calibration(blocks: list[bytes]) -> list[bytes]:
    return [hashlib.sha256(block).digest() for block in blocks]


CALIBRATION_BLOCKS = [bytes(CALIBRATION_BYTES)] * 2


@pytest.fixture(scope="module")
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="citemark-bench") as executor:
        yield executor


@pytest.fixture(scope="module")
def reference() -> dict[tuple[str, str], list[Any]]:
    """Single-thread twin results, to check the threaded runs against."""
    twin = load_implementations()["twin"]
    return {(name, op): operation(twin, op)(list(batch(name))) for name in BATCHES for op in OPS}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("name", BATCHES)
def test_threads(
    benchmark: Any,
    use: Any,
    pool: ThreadPoolExecutor,
    reference: dict[tuple[str, str], list[Any]],
    name: str,
    impl: str,
    op: str,
    threads: int,
) -> None:
    texts = list(batch(name))
    run = runner(operation(use(impl), op), texts, threads, pool)
    benchmark.group = f"threads {name} {impl} {op}"
    benchmark.extra_info.update(
        suite="threads",
        workload=f"{name}_{len(texts)}",
        op=op,
        impl=impl,
        threads=threads,
        chars=sum(map(len, texts)),
        texts=len(texts),
        gil=getattr(sys, "_is_gil_enabled", lambda: True)(),
    )
    assert timed(benchmark, run) == reference[(name, op)]


@pytest.mark.parametrize("threads", [1, 2])
def test_calibration(benchmark: Any, pool: ThreadPoolExecutor, threads: int) -> None:
    benchmark.group = "threads calibration"
    benchmark.extra_info.update(suite="threads", workload="sha256", op="sha256", threads=threads)
    timed(benchmark, runner(calibration, CALIBRATION_BLOCKS, threads, pool))


def main() -> int:
    impls = load_implementations()
    gil = getattr(sys, "_is_gil_enabled", lambda: True)()
    print(f"python {sys.version.split()[0]}, GIL {'on' if gil else 'off'}")
    print(f"{'batch':<8} {'impl':<7} {'call':<13} {'1 thread':>10} {'2 threads':>10} {'2/1':>6}")
    with ThreadPoolExecutor(max_workers=2) as pool:

        def row(label: str, function: Callable[[list[Any]], list[Any]], items: list[Any]) -> None:
            one = median_time(runner(function, items, 1, pool), budget=2.0)
            two = median_time(runner(function, items, 2, pool), budget=2.0)
            print(f"{label} {one * 1e3:8.1f}ms {two * 1e3:8.1f}ms {one / two:5.2f}x")

        row(f"{'-':<8} {'-':<7} {'calibration':<13}", calibration, CALIBRATION_BLOCKS)
        for name in BATCHES:
            texts = list(batch(name))
            for impl_name in IMPLS:
                impl = impls[impl_name]
                if isinstance(impl, str):
                    print(f"{impl_name}: {impl}")
                    continue
                for op in OPS:
                    row(f"{name:<8} {impl_name:<7} {op:<13}", operation(impl, op), texts)
    print("2/1: throughput with 2 threads over 1 thread (2.00x = perfect scaling)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
