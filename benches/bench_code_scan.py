"""The code scan's kernel-only fast paths on realistic answers: the figures of the table at the
top of `src/citemark/_kernels/commonmark_c.pyx`.

Twenty seeded 4 KB answers (`corpus.typical_answer`, with a list, a fenced block and inline
code added), each timed as the best of 100 rounds of 10 calls, the figure the mean over the
answers, CPU time in one process per row:

- `compiled` / `twin`: `find_code_ranges` of the compiled kernel and of the pure twin;
- `portable`: the compiled kernel with CITEMARK_SIMD=portable (simd.h's search off);
- `code_spans` / `spans from code_ranges`: the two arrays made by the kernel, or from its list.

Run: ``python benches/bench_code_scan.py`` (prints each row and the ratios).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from array import array
from operator import itemgetter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import typical_answer, valid_marker


def answers(count: int = 20) -> list[str]:
    texts = []
    for seed in range(count):
        rng = random.Random(seed)
        paragraphs = typical_answer(seed).split("\n\n")
        out = []
        for index, paragraph in enumerate(paragraphs):
            words = paragraph.split(" ")
            if len(words) > 6:
                at = rng.randrange(1, len(words) - 1)
                words[at] = f"`{words[at]}()`"
            out.append(" ".join(words))
            if index == 0:
                out.append(
                    f"- first item {valid_marker(rng)}\n- second item with `code`\n"
                    "  continued line\n- third item"
                )
            if index == 1:
                out.append("```python\ndef f(x):\n    return x + 1  # a comment\n```")
        texts.append("\n\n".join(out))
    return texts


def per_answer(function: object, texts: list[str], rounds: int) -> float:
    """Mean over the texts of the best of `rounds` rounds of 10 calls, in microseconds."""
    total = 0.0
    for text in texts:
        function(text)  # type: ignore[operator]
        best = float("inf")
        for _ in range(rounds):
            began = time.process_time_ns()
            for _ in range(10):
                function(text)  # type: ignore[operator]
            best = min(best, (time.process_time_ns() - began) / 10)
        total += best
    return total / len(texts) / 1000


def row(name: str) -> float:
    from citemark._kernels.loader import load

    kernel = load("commonmark")
    texts = answers()

    def spans_from_code_ranges(text: str) -> tuple[array[int], array[int]]:
        code_ranges = kernel.find_code_ranges(text)
        return array("q", map(itemgetter(0), code_ranges)), array(
            "q", map(itemgetter(1), code_ranges)
        )

    functions = {
        "compiled": kernel.find_code_ranges,
        "twin": kernel.find_code_ranges,
        "portable": kernel.find_code_ranges,
        "code_spans": kernel.code_spans,
        "spans from code_ranges": spans_from_code_ranges,
    }
    return per_answer(functions[name], texts, 20 if name == "twin" else 100)


ENV = {"twin": {"CITEMARK_IMPLEMENTATION": "python"}, "portable": {"CITEMARK_SIMD": "portable"}}


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--row":
        print(row(sys.argv[2]))
        return 0
    found = {}
    for name in ("compiled", "twin", "portable", "code_spans", "spans from code_ranges"):
        done = subprocess.run(
            [sys.executable, __file__, "--row", name],
            env={**os.environ, **ENV.get(name, {})},
            capture_output=True,
            text=True,
            check=True,
        )
        found[name] = float(done.stdout.split()[-1])
        print(f"{name:18s} {found[name]:8.2f} us")
    print(f"whole scan in C:   {found['twin'] / found['compiled']:.1f}x the twin")
    print(f"simd.h's search:   {found['portable'] / found['compiled']:.1f}x portable")
    print(f"two arrays:        {found['spans from code_ranges'] / found['code_spans']:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
