"""What the bench modules, the report and the chart share: how the three implementations
are loaded, the size unit, and the log-log fit of the scaling check.

Units: sizes are counted in characters (code points) and 1 MB means 1,000,000 characters,
so "MB/s" is millions of characters per second.  The memory a text occupies is
``chars * kind`` bytes, where ``kind`` is CPython's storage width (1, 2 or 4 bytes).
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import math
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

KB = 1_000
MB = 1_000_000
SLOW_CALL = 0.25  # seconds: a call slower than this is timed in 3 single-call rounds

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"


# glibc's mallopt parameter for the free memory at the top of the heap that it keeps.
M_TRIM_THRESHOLD = -1


def steady_heap() -> bool:
    """Keep freed heap memory in the process (glibc's trim threshold at 1 GiB), so that a
    round's time is the work and not the page faults of taking memory back.  A round that
    holds a hundred 8 KB results and then frees them leaves more than glibc's default
    threshold (128 KiB) free at the top of the heap; glibc gives it back and the next round
    takes every page again with a minor fault.  Whether a call pays that depends on where
    the top of the heap happens to be (docs/performance.md, Streams).  For benchmarks only: a
    library does not tune its caller's allocator.  False where there is no glibc mallopt."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(M_TRIM_THRESHOLD, 1 << 30))


# Every process that times something imports this module (the bench scripts, their pytest
# conftest, compare.py's workers), so the heap is kept here, once, for all of them.
HEAP_KEPT = steady_heap()


def ensure_citemark_importable() -> None:
    """Use the installed citemark; fall back to the work tree's src/ when none is installed."""
    try:
        importlib.import_module("citemark")
    except ImportError:
        sys.path.insert(0, str(SRC))
        importlib.import_module("citemark")


def load_implementations() -> dict[str, Any]:
    """{"baseline", "twin", "kernel"} -> an object with extract_citations, strip_citations,
    extract_many, strip_many.  "kernel" maps to a `str` (why it is missing) when
    `citemark._kernels.scan_c` cannot be imported."""
    ensure_citemark_importable()
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    import baseline
    from citemark._core.dropin import DropIn

    impls: dict[str, Any] = {
        "baseline": SimpleNamespace(
            extract_citations=baseline.extract_citations,
            strip_citations=baseline.strip_citations,
            extract_many=baseline.extract_many,
            strip_many=baseline.strip_many,
        ),
        "twin": DropIn(importlib.import_module("citemark._kernels.scan_py")),
    }
    try:
        impls["kernel"] = DropIn(importlib.import_module("citemark._kernels.scan_c"))
    except ImportError as error:
        impls["kernel"] = (
            f"compiled kernel citemark._kernels.scan_c not importable ({type(error).__name__}: "
            f"{error}); kernel rows skipped"
        )
    return impls


def kind(text: str) -> int:
    """CPython's storage width of `text` in bytes per character (PEP 393)."""
    if text.isascii():
        return 1
    top = ord(max(text))
    return 1 if top < 0x100 else 2 if top < 0x10000 else 4


def fit_exponent(sizes: Sequence[float], times: Sequence[float]) -> float:
    """Slope of log(time) against log(size), least squares: 1 is linear, 2 quadratic."""
    if len(sizes) != len(times) or len(sizes) < 2:
        raise ValueError("need at least two (size, time) points")
    xs = [math.log(s) for s in sizes]
    ys = [math.log(t) for t in times]
    mx = sum(xs) / len(xs)
    my = sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    return sxy / sxx


def timed(benchmark: Any, function: Callable[..., Any], *args: Any) -> Any:
    """Run `function(*args)` once untimed (warm-up; its result is returned for the parity
    check), then benchmark it: pytest-benchmark's calibrated rounds when a call is quick,
    3 single-call rounds when it is slow.

    The garbage collector stays on, as in an application, but what the harness holds
    (corpora, expected results, the warm-up result) is frozen first (`gc.freeze`), so the
    collections that the timed code triggers do not also walk the harness's objects; that
    would make a row's time depend on which benchmarks ran before it."""
    began = time.perf_counter()
    result = function(*args)
    elapsed = time.perf_counter() - began
    gc.collect()
    gc.freeze()
    try:
        if elapsed > SLOW_CALL:
            benchmark.pedantic(function, args=args, rounds=3, iterations=1, warmup_rounds=0)
        else:
            benchmark(function, *args)
    finally:
        gc.unfreeze()
    return result


def median_time(function: Callable[..., Any], *args: Any, budget: float = 1.0) -> float:
    """Script-mode timing: median seconds of `function(*args)` over at least 3 calls and
    about `budget` seconds, after one warm-up call, with the harness's heap frozen as in
    `timed`."""
    began = time.perf_counter()
    function(*args)
    first = time.perf_counter() - began
    rounds = max(3, min(200, int(budget / max(first, 1e-6))))
    gc.collect()
    gc.freeze()
    try:
        samples = []
        for _ in range(rounds):
            began = time.perf_counter()
            function(*args)
            samples.append(time.perf_counter() - began)
    finally:
        gc.unfreeze()
    return statistics.median(samples)


def cpu_model() -> str:
    """The CPU's model name, for the record of a benchmark run."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            for line in cpuinfo:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Hardware", "Processor"):
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
