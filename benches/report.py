"""Markdown report of one pytest-benchmark JSON run.

    python benches/report.py benches/results.json [> benches/RESULTS.md]

Prints the machine, then per workload and operation the median times of the regex
baseline, the twin and the kernel, the ratios baseline/kernel and baseline/twin (all from
the same run), the kernel's throughput, the memchr comparison, and, when the JSON holds
them, the thread and scaling results (bench_threads.py, bench_scaling.py).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from _common import cpu_model

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import KB, MB, fit_exponent

IMPLS = ("baseline", "twin", "kernel")
# Display order; workloads the JSON has and this list lacks come after, sorted.
ORDER = (
    "typical_4KB",
    "answers_2000",
    "answers_2000_batch",
    "plain_ascii_1MB",
    "plain_ucs2_1MB",
    "plain_cjk_1MB",
    "dense_1MB",
    "malformed_1MB",
    "many_50k_1MB",
    "unterminated_20KB",
    "unterminated_1MB",
)
OPS = ("extract", "strip", "clean")
OP_NOTES = {
    "answers_2000_batch": {
        "extract": "extract_many (baseline: a loop of calls)",
        "clean": "strip_many (baseline: strip(extract) per text)",
    },
}


# ---------------------------------------------------------------- formatting


def fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def fmt_ratio(numerator: float | None, denominator: float | None) -> str:
    if numerator is None or denominator is None or denominator <= 0:
        return "—"
    ratio = numerator / denominator
    return f"{ratio:,.0f}×" if ratio >= 100 else f"{ratio:.1f}×"


def fmt_size(chars: int, texts: int) -> str:
    size = f"{chars / MB:.2f} MB" if chars >= 100 * KB else f"{chars / KB:.1f} KB"
    return f"{texts:,} texts, {size}" if texts > 1 else size


def table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    header = list(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


# ---------------------------------------------------------------- reading


def load(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)  # type: ignore[no-any-return]


def machine_section(data: dict[str, Any]) -> str:
    info = data.get("machine_info", {})
    ours = info.get("citemark")
    if ours:
        cpu, cores, python = ours["cpu_model"], ours["cores"], ours["python"]
        kernel = ours.get("kernel", "?")
        source = "recorded by benches/conftest.py during the run"
    else:  # a JSON written without our conftest: fall back to what pytest-benchmark saw
        cpu = info.get("cpu", {}).get("brand_raw") or cpu_model()
        cores = info.get("cpu", {}).get("count", "?")
        python = info.get("python_version", "?")
        kernel = "?"
        source = "from pytest-benchmark's machine_info"
    commit = data.get("commit_info", {})
    lines = [
        f"- CPU: {cpu} ({cores} usable cores)",
        f"- Python: {info.get('python_implementation', 'CPython')} {python}, "
        f"{info.get('system', '?')} {info.get('release', '')}".rstrip(),
        f"- compiled kernel: {kernel}",
        f"- run: {data.get('datetime', '?')}, commit {commit.get('id', '?')[:10]}"
        + (" (dirty tree)" if commit.get("dirty") else ""),
        f"- machine facts {source}",
        "- times are medians; ratios divide medians of the same run; "
        "MB = 10^6 characters, MB/s = 10^6 characters per second",
    ]
    return "\n".join(lines)


def index(data: dict[str, Any]) -> dict[tuple[str, str], dict[str, dict[str, Any]]]:
    """(workload, op) -> impl -> the benchmark entry (extra_info + stats)."""
    rows: dict[tuple[str, str], dict[str, dict[str, Any]]] = defaultdict(dict)
    for bench in data.get("benchmarks", []):
        extra = bench.get("extra_info", {})
        if "workload" not in extra or "impl" not in extra:
            continue
        if extra.get("suite") in ("threads", "scaling"):
            continue
        rows[(extra["workload"], extra["op"])][extra["impl"]] = bench
    return rows


def median(entry: dict[str, Any] | None) -> float | None:
    return None if entry is None else float(entry["stats"]["median"])


def ordered(keys: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    def rank(key: tuple[str, str]) -> tuple[int, str, int, str]:
        workload, op = key
        position = ORDER.index(workload) if workload in ORDER else len(ORDER)
        op_rank = OPS.index(op) if op in OPS else len(OPS)
        return (position, workload, op_rank, op)

    return sorted(keys, key=rank)


# ---------------------------------------------------------------- sections


def core_section(rows: dict[tuple[str, str], dict[str, dict[str, Any]]]) -> str:
    out = []
    notes = []
    for workload, op in ordered(k for k in rows if k[1] in OPS):
        entries = rows[(workload, op)]
        any_entry = next(iter(entries.values()))
        chars = int(any_entry["extra_info"]["chars"])
        texts = int(any_entry["extra_info"].get("texts", 1))
        kind = any_entry["extra_info"].get("kind", "?")
        base, twin, kernel = (median(entries.get(i)) for i in IMPLS)
        base_cell = fmt_time(base)
        if base is None and workload == "unterminated_1MB":
            small = median(rows.get(("unterminated_20KB", op), {}).get("baseline"))
            base_cell = "not run (quadratic)"
            if small is not None:
                estimate = small * (chars / (20 * KB)) ** 2
                notes.append(
                    f"- unterminated_1MB: the baseline is quadratic there and is run only on "
                    f"20 KB ({fmt_time(small)}); scaled by (1 MB / 20 KB)² that is about "
                    f"{fmt_time(estimate)} for 1 MB (an extrapolation, not a measurement)."
                )
        if kind == 1 and chars >= 100 * KB:
            notes.append(
                f"- {workload}: a 1-byte-kind str cannot contain U+E200, so all three answer "
                "without reading the text; its MB/s is not a scan speed."
            )
        label = OP_NOTES.get(workload, {}).get(op, op)
        out.append(
            [
                workload,
                label,
                fmt_size(chars, texts),
                str(kind),
                base_cell,
                fmt_time(twin),
                fmt_time(kernel),
                fmt_ratio(base, kernel),
                fmt_ratio(base, twin),
                f"{chars / MB / kernel:,.0f}" if kernel else "—",
            ]
        )
    header = (
        "workload",
        "operation",
        "size",
        "kind",
        "baseline",
        "twin",
        "kernel",
        "baseline/kernel",
        "baseline/twin",
        "kernel MB/s",
    )
    return table(header, out) + ("\n\n" + "\n".join(notes) if notes else "")


def memchr_section(rows: dict[tuple[str, str], dict[str, dict[str, Any]]]) -> str:
    memchr = rows.get(("memchr_2MB", "memchr"), {}).get("memchr")
    if memchr is None:
        return "memchr reference: not in this run."
    memchr_time = median(memchr)
    assert memchr_time is not None
    size = int(memchr["extra_info"]["bytes"])
    out = [
        [
            "libc memchr, absent byte",
            f"{size / MB:.0f} MB",
            fmt_time(memchr_time),
            f"{size / 1e9 / memchr_time:.1f}",
            "1.0×",
        ]
    ]
    for workload in ("plain_ascii_1MB", "plain_ucs2_1MB", "plain_cjk_1MB"):
        kernel = rows.get((workload, "extract"), {}).get("kernel")
        if kernel is None:
            continue
        seconds = median(kernel)
        assert seconds is not None
        stored = int(kernel["extra_info"]["bytes"])
        note = " (no scan: 1-byte text)" if kernel["extra_info"].get("kind") == 1 else ""
        out.append(
            [
                f"kernel extract, {workload}{note}",
                f"{stored / MB:.0f} MB",
                fmt_time(seconds),
                f"{stored / 1e9 / seconds:.1f}",
                f"{seconds / memchr_time:.1f}×",
            ]
        )
    text = table(("scan", "bytes", "median", "GB/s of storage", "time / memchr"), out)
    return (
        text + "\n\nThe 2-byte-kind row scans the same number of bytes as memchr (2 MB); "
        "`time / memchr` is how many memchr passes one kernel extract costs."
    )


def threads_section(data: dict[str, Any]) -> str | None:
    found: dict[tuple[str, str], dict[int, dict[str, Any]]] = defaultdict(dict)
    for bench in data.get("benchmarks", []):
        extra = bench.get("extra_info", {})
        if extra.get("suite") == "threads":
            found[(extra["impl"], extra["op"])][int(extra["threads"])] = bench
    if not found:
        return None
    out = []
    for (impl, op), by_threads in sorted(found.items()):
        one, two = median(by_threads.get(1)), median(by_threads.get(2))
        any_entry = next(iter(by_threads.values()))
        chars = int(any_entry["extra_info"]["chars"])
        texts = int(any_entry["extra_info"]["texts"])
        out.append(
            [
                impl,
                op,
                fmt_size(chars, texts),
                fmt_time(one),
                fmt_time(two),
                f"{chars / MB / one:,.0f}" if one else "—",
                f"{chars / MB / two:,.0f}" if two else "—",
                fmt_ratio(one, two),
            ]
        )
    header = ("impl", "call", "batch", "1 thread", "2 threads", "MB/s (1)", "MB/s (2)", "ratio 2/1")
    return table(header, out) + (
        "\n\nratio 2/1 is the throughput with 2 threads (each half of the batch) over 1 "
        "thread: up to 2× when the scan runs without the GIL, about 1× (or less) when not."
    )


def scaling_section(data: dict[str, Any]) -> str | None:
    found: dict[tuple[str, str], dict[int, float]] = defaultdict(dict)
    for bench in data.get("benchmarks", []):
        extra = bench.get("extra_info", {})
        if extra.get("suite") == "scaling":
            found[(extra["impl"], extra["op"])][int(extra["chars"])] = float(
                bench["stats"]["median"]
            )
    if not found:
        return None
    sizes = sorted({size for points in found.values() for size in points})
    header = ["impl", "call", *(fmt_size(s, 1) for s in sizes), "exponent", "step slopes"]
    out = []
    for (impl, op), points in sorted(found.items()):
        known = sorted(points)
        exponent = (
            f"{fit_exponent(known, [points[s] for s in known]):.2f}" if len(known) > 1 else "—"
        )
        steps = " ".join(
            f"{fit_exponent([a, b], [points[a], points[b]]):.2f}"
            for a, b in itertools.pairwise(known)
        )
        out.append([impl, op, *(fmt_time(points.get(s)) for s in sizes), exponent, steps])
    return table(header, out) + (
        "\n\nexponent: slope of log(time) on log(size), least squares over all sizes (1 = "
        "linear, 2 = quadratic), on unterminated STARTs; step slopes: the same between "
        "consecutive sizes (a rise at the large end can be the text outgrowing the CPU "
        "caches, or noise)."
    )


def render(data: dict[str, Any]) -> str:
    rows = index(data)
    parts = ["## Machine", machine_section(data), "## Baseline, twin and kernel"]
    parts.append(core_section(rows) if rows else "No core benchmarks in this run.")
    parts += ["## Kernel against memchr", memchr_section(rows)]
    threads = threads_section(data)
    if threads:
        parts += ["## Threads", threads]
    scaling = scaling_section(data)
    if scaling:
        parts += ["## Scaling", scaling]
    return "\n\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", help="a file written by pytest --benchmark-json=...")
    args = parser.parse_args(argv)
    sys.stdout.write(render(load(args.json)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
