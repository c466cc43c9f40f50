"""`citemark.clean` against the drop-in's `strip_citations(t, extract_citations(t))`.

Target: `clean` on a typical 4 KB answer within 1.5x of the drop-in strip, both measured in
the same run (group "clean <workload>": rows "dropin", "clean", "clean-twin").  And linear on
every adversarial shape: group "clean scaling" fits the exponent of time against size (1 is
linear, 2 quadratic) for the kernel and the twin.

Group "clean log batch": a batch of answers shaped as `make_log.py` writes them (what
`citemark clean --field` cleans), as the CLI's batches see them: `Parser().strip` of each,
`clean` of each, `clean_many` of the batch, and `clean(lenient=True)` of each.

Run: ``pytest benches/bench_clean.py -q`` (pytest-benchmark), or
``python benches/bench_clean.py`` for medians, ratios and exponents from one run.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest

from _common import ensure_citemark_importable, fit_exponent, median_time, timed

ensure_citemark_importable()

import citemark  # noqa: E402
from citemark._core.dropin import DropIn  # noqa: E402
from citemark.display import clean, clean_many  # noqa: E402
from corpus import typical_answer  # noqa: E402
from make_log import output_text  # noqa: E402

S, E, D = "\ue200", "\ue201", "\ue202"
SUP, END, ANCHOR = "\ue203", "\ue204", "\ue206"
WORDS = [
    "the",
    "city",
    "was",
    "founded",
    "in",
    "and",
    "its",
    "temples",
    "draw",
    "many",
    "visitors",
    "every",
    "year",
]


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 18))]
    return " ".join(words).capitalize() + "."


def web_answer(size: int = 4000, seed: int = 11, entities: bool = False) -> str:
    """A web-search answer as ChatGPT writes it: headings, bullets, supported spans, a
    citation and an anchor after most sentences (and entities when asked)."""
    rng = random.Random(seed)
    out: list[str] = ["## Overview\n\n"]
    while sum(map(len, out)) < size:
        sentence = _sentence(rng)
        if entities and rng.random() < 0.2:
            name = rng.choice(["Kyoto", "Node.js", "ITC Limited"])
            sentence = f'{S}entity{D}["place","{name}","a description"]{E} {sentence}'
        ids = D.join(f"turn0search{rng.randrange(20)}" for _ in range(rng.randint(1, 2)))
        if rng.random() < 0.5:
            out.append(f"{SUP}{sentence}{END} {S}cite{D}{ids}{E}{ANCHOR}")
        else:
            out.append(f"{sentence} {S}cite{D}{ids}{E}")
        out.append(rng.choice([" ", " ", "\n\n", "\n- "]))
    return "".join(out)


def tech_answer(size: int = 4000, seed: int = 12) -> str:
    """A technical answer: prose with citations, inline code, and a fenced block."""
    rng = random.Random(seed)
    out: list[str] = []
    while sum(map(len, out)) < size:
        out.append(f"{_sentence(rng)} Use `pip install x` first. {S}cite{D}turn0search1{E}\n\n")
        if rng.random() < 0.2:
            out.append("```python\nprint('hello')\n```\n\n")
    return "".join(out)


WORKLOADS: dict[str, Callable[[], str]] = {
    "typical_4KB": typical_answer,  # the project's typical answer (benches/corpus.py)
    "web_4KB": web_answer,
    "web_entities_4KB": lambda: web_answer(entities=True),
    "tech_4KB": tech_answer,  # citations and inline code in the same paragraphs
    # code elsewhere: the quick test proves no marker is in code, so no Markdown scan
    "web_code_block_4KB": lambda: web_answer(3600) + "\n\nRun `kyoto --plan`:\n\n```\nkyoto\n```\n",
}

kernel_dropin = DropIn(__import__("citemark._kernels.scan_c", fromlist=["_"]))


def dropin(text: str) -> str:
    return kernel_dropin.strip_citations(text, kernel_dropin.extract_citations(text))


def clean_kernel(text: str) -> str:
    return clean(text, implementation="cython")


def clean_twin(text: str) -> str:
    return clean(text, implementation="python")


ROWS: dict[str, Callable[[str], Any]] = {
    "dropin": dropin,
    "clean": clean_kernel,
    "clean-twin": clean_twin,
}


@pytest.mark.parametrize("row", list(ROWS))
@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_clean(benchmark: Any, workload: str, row: str) -> None:
    text = WORKLOADS[workload]()
    benchmark.group = f"clean {workload}"
    benchmark.extra_info.update(workload=workload, row=row, chars=len(text))
    timed(benchmark, ROWS[row], text)


def log_batch(count: int = 500, seed: int = 13) -> list[str]:
    rng = random.Random(seed)
    return [output_text(rng) for _ in range(count)]


parser = citemark.Parser()
BATCH_ROWS: dict[str, Callable[[list[str]], Any]] = {
    "parser-strip": lambda texts: [parser.strip(text) for text in texts],
    "clean": lambda texts: [clean(text) for text in texts],
    "clean_many": clean_many,
    "clean-lenient": lambda texts: [clean(text, lenient=True) for text in texts],
}


@pytest.mark.parametrize("row", list(BATCH_ROWS))
def test_clean_log_batch(benchmark: Any, row: str) -> None:
    texts = log_batch()
    benchmark.group = "clean log batch"
    benchmark.extra_info.update(row=row, texts=len(texts), chars=sum(map(len, texts)))
    timed(benchmark, BATCH_ROWS[row], texts)


# Adversarial shapes, repeated to a size: all must stay linear.
SHAPES: dict[str, tuple[str, bool]] = {
    "abandoned-starts": (S + "cite" + D + "turn0search0 ", False),
    "starts-only": (S, False),
    "anchors-and-blanks": (ANCHOR + " ", False),
    "link-destinations": ("[a](" + S + "cite" + D + "x" + E + ")", False),
    "citeturn-runs": ("citeturn", True),
    "backticks": ("`" * 7 + S + " ", False),
    "escapes": ("\\ue200cite", True),
}
SIZES = (50_000, 100_000, 200_000, 400_000)
WORK = 800_000  # characters cleaned per measurement, whatever the size


def cpu_seconds(function: Callable[[], Any], calls: int) -> float:
    """CPU time of `calls` calls, the best of 3: process time, so that a busy machine's
    preemptions (which hit long calls more than short ones) do not bend the slope."""
    best = float("inf")
    for _ in range(3):
        began = time.process_time()
        for _ in range(calls):
            function()
        best = min(best, time.process_time() - began)
    return best


def exponent(shape: str, implementation: str) -> float:
    unit, lenient = SHAPES[shape]
    times = []
    for size in SIZES:
        text = unit * (size // len(unit))
        calls = max(1, WORK // size)
        run = lambda t=text: clean(t, lenient=lenient, implementation=implementation)  # type: ignore[misc]  # noqa: E731
        times.append(cpu_seconds(run, calls) / calls)
    return fit_exponent(SIZES, times)


@pytest.mark.parametrize("implementation", ["cython", "python"])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_clean_scaling(benchmark: Any, shape: str, implementation: str) -> None:
    benchmark.group = "clean scaling"
    slope = benchmark.pedantic(exponent, args=(shape, implementation), rounds=1, iterations=1)
    benchmark.extra_info.update(shape=shape, implementation=implementation, exponent=slope)
    assert slope < 1.4, f"{shape} on {implementation}: time grows as size^{slope:.2f}"


def main() -> None:
    print(f"citemark {citemark.__version__}, implementation {citemark.IMPLEMENTATION}")
    for workload, make in WORKLOADS.items():
        text = make()
        medians = {row: median_time(function, text) for row, function in ROWS.items()}
        base = medians["dropin"]
        cells = ", ".join(
            f"{row} {seconds * 1e6:.2f} us ({seconds / base:.2f}x)"
            for row, seconds in medians.items()
        )
        print(f"{workload} ({len(text)} chars): {cells}")
    texts = log_batch()
    size = sum(len(text.encode("utf-8", "surrogatepass")) for text in texts) / 1e6
    medians = {row: median_time(function, texts) for row, function in BATCH_ROWS.items()}
    base = medians["parser-strip"]
    cells = ", ".join(
        f"{row} {size / seconds:.0f} MB/s ({seconds / base:.2f}x)"
        for row, seconds in medians.items()
    )
    print(f"log batch ({len(texts)} answers): {cells}")
    for shape in SHAPES:
        slopes = {impl: exponent(shape, impl) for impl in ("cython", "python")}
        print(f"scaling {shape}: " + ", ".join(f"{k} {v:.2f}" for k, v in slopes.items()))


if __name__ == "__main__":
    sys.exit(main())
