"""PNG chart of one pytest-benchmark JSON run: throughput per workload and operation for
the kernel, the twin and the regex baseline, on a log scale.

    python benches/chart.py benches/results.json [benches/benchmarks.png]

Throughput is characters per second of input text (MB/s with MB = 10^6 characters), from
the median times; the dotted line is libc memchr over the bytes of a 1 MB 2-byte-kind
text, in the same unit.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt

from _common import MB
from report import OPS, index, load, median, ordered

SERIES = (("kernel", "#1f6feb"), ("twin", "#8957e5"), ("baseline", "#9a6700"))
LABELS = {"kernel": "kernel (compiled)", "twin": "twin (pure Python)", "baseline": "regex baseline"}


def tick(rows: dict, key: tuple[str, str]) -> str:
    workload, op = key
    entry = next(iter(rows[key].values()))
    if entry["extra_info"].get("kind") == 1:  # a 1-byte str cannot hold U+E200
        return f"{workload}  {op}\n(1-byte text: no marker possible)"
    return f"{workload}  {op}"


def chart(json_path: str, png_path: str) -> Path:
    data = load(json_path)
    rows = index(data)
    keys = ordered(k for k in rows if k[1] in OPS)
    if not keys:
        raise SystemExit(f"{json_path}: no core benchmark rows (run benches/bench_core.py)")
    height = 0.8 / len(SERIES)
    fig, ax = plt.subplots(figsize=(10, 1.5 + 0.55 * len(keys)))
    for slot, (impl, color) in enumerate(SERIES):
        ys, xs = [], []
        for row, key in enumerate(keys):
            entry = rows[key].get(impl)
            seconds = median(entry)
            if entry is None or not seconds:
                if impl == "baseline" and key[0].startswith("unterminated_"):
                    ax.text(
                        0.005,
                        row + (slot - 1) * height,
                        "baseline: quadratic here, not run (see unterminated_20KB)",
                        transform=ax.get_yaxis_transform(),
                        va="center",
                        fontsize=7,
                        color=color,
                    )
                continue
            ys.append(row + (slot - 1) * height)
            xs.append(int(entry["extra_info"]["chars"]) / MB / seconds)
        if xs:
            ax.barh(ys, xs, height=height, color=color, label=LABELS[impl])
    memchr = rows.get(("memchr_2MB", "memchr"), {}).get("memchr")
    if memchr is not None:
        seconds = median(memchr)
        chars = int(memchr["extra_info"]["chars"])
        if seconds:
            ax.axvline(
                chars / MB / seconds,
                color="black",
                linestyle=":",
                linewidth=1,
                label="memchr, 2 MB (= 1 MB of 2-byte text)",
            )
    ax.set_xscale("log")
    ax.set_yticks(range(len(keys)))
    ax.set_yticklabels([tick(rows, key) for key in keys], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("throughput, MB/s (10^6 characters per second, median), log scale")
    info = data.get("machine_info", {}).get("citemark", {})
    machine = (
        f"{info.get('cpu_model', '?')}, {info.get('cores', '?')} cores, "
        f"Python {info.get('python', '?')}"
    )
    ax.set_title(f"citemark: kernel vs twin vs the guide's regex helper\n{machine}", fontsize=10)
    ax.grid(axis="x", which="both", alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    out = Path(png_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", help="a file written by pytest --benchmark-json=...")
    parser.add_argument("png", nargs="?", default=str(Path(__file__).parent / "benchmarks.png"))
    args = parser.parse_args(argv)
    print(chart(args.json, args.png))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
