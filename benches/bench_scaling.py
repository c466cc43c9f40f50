"""Scaling check: the kernel and the twin on unterminated STARTs (``"\\ue200cite\\ue202x "``
repeated, no STOP), from 100 KB to 10 MB.  The guide's helper is quadratic there; citemark
must be linear, i.e. a fitted exponent close to 1.

pytest (rows land in the JSON; `report.py` fits the exponent from them):
    pytest benches/bench_scaling.py --benchmark-json=benches/scaling.json -q
Script mode (measures, fits log(time) = a + k log(size) by least squares, prints k):
    python benches/bench_scaling.py            # kernel and twin, plus the baseline on 5-40 KB
    python benches/bench_scaling.py --json benches/scaling.json   # fit an existing run
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest

from _common import KB, fit_exponent, load_implementations, median_time, timed
from corpus import SCALING_SIZES, unterminated_of

IMPLS = ("twin", "kernel")
OPS = {
    "extract": lambda impl: impl.extract_citations,
    "clean": lambda impl: lambda text: impl.strip_many([text]),
}
BASELINE_SIZES = (5 * KB, 10 * KB, 20 * KB, 40 * KB)  # script mode only: it is quadratic


def _label(size: int) -> str:
    return f"{size // 1_000_000}MB" if size >= 1_000_000 else f"{size // 1_000}KB"


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("size", SCALING_SIZES, ids=_label)
@pytest.mark.parametrize("impl", IMPLS)
def test_scaling(benchmark: Any, use: Any, impl: str, size: int, op: str) -> None:
    run = OPS[op](use(impl))
    text = unterminated_of(size)
    benchmark.group = f"scaling {impl} {op}"
    benchmark.extra_info.update(
        suite="scaling", workload=f"unterminated_{_label(size)}", op=op, impl=impl, chars=size
    )
    result = timed(benchmark, run, text)
    assert result == ([] if op == "extract" else [text])


# ---------------------------------------------------------------- script mode


def _fit_json(path: str) -> dict[tuple[str, str], dict[int, float]]:
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    points: dict[tuple[str, str], dict[int, float]] = {}
    for bench in data.get("benchmarks", []):
        extra = bench.get("extra_info", {})
        if extra.get("suite") == "scaling":
            key = (extra["impl"], extra["op"])
            points.setdefault(key, {})[int(extra["chars"])] = float(bench["stats"]["median"])
    return points


def _measure() -> dict[tuple[str, str], dict[int, float]]:
    impls = load_implementations()
    points: dict[tuple[str, str], dict[int, float]] = {}
    for name in ("baseline", *IMPLS):
        impl = impls[name]
        if isinstance(impl, str):
            print(f"{name}: {impl}", file=sys.stderr)
            continue
        sizes = BASELINE_SIZES if name == "baseline" else SCALING_SIZES
        for op, make in OPS.items():
            if name == "baseline" and op == "clean":
                continue
            run = make(impl)
            for size in sizes:
                seconds = median_time(run, unterminated_of(size), budget=0.5)
                points.setdefault((name, op), {})[size] = seconds
                print(
                    f"  {name:<8} {op:<7} {_label(size):>6}  {seconds * 1e3:10.3f} ms", flush=True
                )
    return points


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fit the time exponent on unterminated STARTs.")
    parser.add_argument("--json", help="fit the scaling rows of this pytest-benchmark JSON")
    args = parser.parse_args(argv)
    points = _fit_json(args.json) if args.json else _measure()
    if not points:
        print("no scaling measurements", file=sys.stderr)
        return 1
    print()
    for (name, op), by_size in sorted(points.items()):
        sizes = sorted(by_size)
        exponent = fit_exponent(sizes, [by_size[s] for s in sizes])
        span = f"{_label(sizes[0])}..{_label(sizes[-1])}"
        steps = " ".join(
            f"{fit_exponent([a, b], [by_size[a], by_size[b]]):.2f}"
            for a, b in itertools.pairwise(sizes)
        )
        print(f"{name:<8} {op:<7} {span:<12} exponent {exponent:.2f}   steps {steps}")
    print(
        "\n(1 = linear, 2 = quadratic; least squares of log time on log size; steps: the"
        " slope between consecutive sizes)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
