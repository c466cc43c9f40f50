"""Time bounds of every public API on adversarial shapes: the fitted exponent of each.

Every API (extract, strip, finditer, sub, supports, clean when present, a StreamParser fed
one character at a time, validate, resolve, render, lint, split_lines, the Arrow functions)
runs on each shape (unclosed STARTs, nested STARTs, long runs of DELIMs, thousands of
backticks, one long line, a plain answer) at 0.1, 1 and 4 MB (millions of characters), on
the compiled kernel and on the pure twin (chosen with CITEMARK_IMPLEMENTATION in each
worker process), and log(time) is fitted against log(size) by least squares: 1 is linear,
2 quadratic.  Every exponent must be at most 1.15.

    python benches/bench_bounds.py --out table.md --json rows.jsonl   # the full table
    python benches/bench_bounds.py --only extract_citations --shape one_line \
        --implementation cython                                     # one row
    python benches/bench_bounds.py --rows rows.jsonl --out table.md  # a table from saved rows
    pytest benches/bench_bounds.py -q                   # the same fit at small sizes

The full table takes about 16 minutes of CPU time, a quarter of it the pure twin's
one-character streams (32 minutes of wall time with the default two jobs on a shared 2-core
machine at a load of 6-8); `--jobs` workers (one API and implementation each) share it out,
and each worker's rows are appended to `--json` as it ends, so a stopped run loses only
what was running.

Times are CPU time of the worker (`time.process_time`), the best of at least `--least` calls
and of as many as fit in `--budget` (5 at most); a call of `--slow` seconds or more is not
repeated (it is an average over that long already).  The collector is off while timing:
the fit is of the algorithm, and on a shared machine wall time mostly measures the
neighbours.

The row "floor: the drop-in's dicts" builds, in pure Python, as many dicts as the drop-in
returns for the text, with the same strings and fresh offsets, each a copy of the drop-in's
own template (`_dropin.CITATION_TEMPLATE`, whose copies share one key table): the least any
implementation of the guide's contract allocates.  A result this large is fresh memory,
which the system hands over a page at a time: a 0.1 MB text's result fits in memory the
process already holds, a 4 MB one's (26 MB) does not, so the floor itself fits an exponent
above 1; the drop-in rows are to be read beside it.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import gc
import importlib.util
import io
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ensure_citemark_importable, fit_exponent

S, D, E = "\ue200", "\ue202", "\ue201"
MB = 1_000_000
LIMIT = 1.15
IMPLEMENTATIONS = ("cython", "python")
# Not an API: the floor of what the drop-in's contract allocates (see the docstring).
FLOOR = "floor: the drop-in's dicts"


def _marker(source: str = "turn0search0") -> str:
    return f"{S}cite{D}{source}{E}"


# -- shapes: each repeats a unit up to the size (a fixed seed is not needed: no randomness)


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _one_line(unit: str, size: int) -> str:
    """unit repeated on one line of `size` characters that ends in prose with a citation and
    inline code holding a marker (so that every API scans for code)."""
    tail = "x " + _marker() + " `" + _marker() + "`"
    return _repeat(unit, size - len(tail)) + tail


SHAPES: dict[str, Callable[[int], str]] = {
    # a START, a family and an id, never closed
    "unclosed": lambda size: _repeat(f"{S}cite{D}turn0search0 ", size),
    # STARTs piled up before one marker, with supported prose around it
    "nested": lambda size: _repeat(S * 40 + "\ue203claim\ue204 " + _marker() + "\n", size),
    # long runs of DELIMs inside and outside markers
    "delimiters": lambda size: _repeat(f"{S}cite{D}" + D * 2000 + f"x{E}" + D * 500 + " ", size),
    # thousands of backticks (unmatched runs, fences) around markers
    "backticks": lambda size: _repeat("`" * 3000 + " " + _marker() + " ```\n" + "` " * 500, size),
    # one line, no line break, many citations
    "one_line": lambda size: _repeat("A claim that cites. " + _marker() + " ", size),
    # what answers look like: paragraphs, code, lists
    "answer": lambda size: _repeat(
        "Solar panels lose about 0.5% a year." + _marker("turn0file0") + "\n"
        "- a list item " + _marker("turn0file1") + "\n\n"
        "```python\nprint('" + _marker("x") + "')\n```\n\n",
        size,
    ),
    # Markdown containers on one line, then what makes a scan look again at each: a line
    # of nested list items or block quotes ending in prose, the same followed by blank
    # lines or by lazy continuation lines (each once cost the depth or the rest of the line)
    "dash_items": lambda size: _one_line("- ", size),
    "star_items": lambda size: _one_line("* ", size),
    "ordered_items": lambda size: _one_line("1. ", size),
    "quotes": lambda size: _one_line("> ", size),
    "mixed_containers": lambda size: _one_line("- > 1. * > + 2) ", size),
    "items_then_blank_lines": lambda size: _one_line("- ", size // 2) + "\n" * (size - size // 2),
    "items_then_blank_rests": lambda size: (
        _one_line("- ", size // 2) + _repeat("\n  \t", size - size // 2)
    ),
    "items_then_lazy_lines": lambda size: (
        _one_line("- ", size // 2) + _repeat("\ny", size - size // 2)
    ),
    "quotes_then_lazy_lines": lambda size: (
        _one_line("> ", size // 2) + _repeat("\ny", size - size // 2)
    ),
    "items_then_fence": lambda size: (
        _repeat("- ", size // 2) + "```" + _repeat("\n" + _marker(), size - size // 2 - 3)
    ),
    # each line an item one level deeper than the last (its indentation once read again for
    # each container it continues)
    "staircase": lambda size: _staircase(size),
}


def _staircase(size: int) -> str:
    lines: list[str] = []
    while sum(map(len, lines)) < size:
        lines.append("  " * len(lines) + "- x `" + _marker() + "`\n")
    return "".join(lines)[:size]


# -- the APIs, each a function of the text (setup outside the timing) --------------------


def _cases() -> dict[str, Callable[[str], Callable[[], Any] | None]]:
    import citemark
    from citemark import Parser, extract_citations, strip_citations
    from citemark.render import render
    from citemark.sources import Registry, Source, split_lines
    from citemark.stream import StreamParser
    from citemark.validate import resolve, validate

    plain = Parser()
    code = Parser(skip_code=True)
    ids = ["turn0search0", "turn0file0", "turn0file1", "x"]
    registry = Registry([Source(i, "one\ntwo\nthree", url=f"https://e.example/{i}") for i in ids])
    links = registry.links()

    def stream(parser: Parser) -> Callable[[str], Callable[[], Any]]:
        def run(text: str) -> Callable[[], Any]:
            def feed() -> int:
                made = StreamParser(parser)
                count = 0
                for char in text:
                    count += len(made.feed(char).text)
                return count + len(made.close().text)

            return feed

        return run

    def clean_stream(text: str) -> Callable[[], Any]:
        from citemark.display import CleanStream

        def feed() -> int:
            made = CleanStream()
            count = 0
            for char in text:
                count += len(made.feed(char))
            return count + len(made.close())

        return feed

    def lint(text: str) -> Callable[[], Any]:
        from citemark.lint import main

        folder = tempfile.mkdtemp()
        answer = Path(folder, "answer.txt")
        answer.write_text(text, encoding="utf-8")
        sources = Path(folder, "sources.json")
        sources.write_text(json.dumps(registry.to_dict()), encoding="utf-8")

        def run() -> int:
            with redirect_stdout(io.StringIO()):
                return main([str(answer), "--sources", str(sources), "--json"])

        return run

    def floor(text: str) -> Callable[[], Any] | None:
        found = extract_citations(text)
        if not found:
            return None  # nothing to build: no row
        first, count = found[0], len(found)
        raw, family, locator = first["raw"], first["family"], first["locator"]
        ids = list(first["source_ids"])
        step = max(1, len(text) // count)
        del found
        from citemark._core.dropin import CITATION_TEMPLATE

        copy = CITATION_TEMPLATE.copy

        def run() -> list[dict[str, Any]]:
            # Offsets above 256 are fresh ints, as the drop-in's are.
            made = []
            for start in range(1000, 1000 + count * step, step):
                citation = copy()
                citation["raw"] = raw
                citation["family"] = family
                citation["source_ids"] = [*ids]
                citation["locator"] = locator
                citation["start"] = start
                citation["end"] = start + 1
                made.append(citation)
            return made

        return run

    cases: dict[str, Callable[[str], Callable[[], Any] | None]] = {
        "extract_citations": lambda t: lambda: extract_citations(t),
        "strip_citations": lambda t: lambda: strip_citations(t, extract_citations(t)),
        FLOOR: floor,
        "Parser.extract custom (a+)+$": lambda t: (lambda p: lambda: p.extract(t))(
            Parser(source_id=r"(a+)+$")
        ),
        "Parser.finditer": lambda t: lambda: list(plain.finditer(t)),
        "Parser.strip skip_code": lambda t: lambda: code.strip(t),
        "Parser.finditer skip_code": lambda t: lambda: list(code.finditer(t)),
        "Parser.sub sanitize": lambda t: lambda: plain.sub(t, lambda c: "[1]", sanitize=True),
        "Parser.sub sanitize skip_code": lambda t: (
            lambda: code.sub(t, lambda c: "[1]", sanitize=True)
        ),
        "Parser.supports": lambda t: lambda: plain.supports(t),
        "StreamParser 1 char": stream(plain),
        "StreamParser 1 char skip_code": stream(code),
        "CleanStream 1 char": clean_stream,
        "StreamParser 1 char any_family": stream(Parser(any_family=True)),
        "StreamParser 1 char bound 1e9": stream(Parser(max_marker_length=10**9)),
        "validate": lambda t: lambda: validate(t, registry, style="tool-lines"),
        "resolve": lambda t: lambda: resolve(t, registry),
        "render footnotes": lambda t: lambda: render(t, links, style="footnotes"),
        "render skip_code sanitize": lambda t: lambda: render(t, links, parser=code, sanitize=True),
        "lint --sources": lint,
        "split_lines": lambda t: lambda: split_lines(t),
    }
    if hasattr(citemark, "clean") or importlib.util.find_spec("citemark.display") is not None:
        clean_module = importlib.import_module("citemark.display")
        clean = getattr(clean_module, "clean", None) or citemark.clean
        cases["clean"] = lambda t: lambda: clean(t)
    if importlib.util.find_spec("pyarrow") is not None:
        import pyarrow as pa

        import citemark.arrow

        cases["arrow.strip"] = lambda t: (lambda a: lambda: citemark.arrow.strip(a))(
            pa.array([t, t[: len(t) // 2]], pa.large_string())
        )
        cases["arrow.extract"] = lambda t: (lambda a: lambda: citemark.arrow.extract(a))(
            pa.array([t, t[: len(t) // 2]], pa.large_string())
        )
    return cases


def _best(run: Callable[[], Any], budget: float, least: int = 2, slow: float = 2.0) -> float:
    """Best CPU time of a few calls: at least `least`, more while they fit in `budget`, 5 at
    most; one when it takes `slow` seconds or more."""
    best = math.inf
    spent = 0.0
    calls = 0
    gc.collect()
    gc.disable()
    try:
        while True:
            began = time.process_time()
            run()
            took = time.process_time() - began
            best = min(best, took)
            spent += took
            calls += 1
            if took >= slow or (calls >= least and (spent >= budget or calls >= 5)):
                return best
    finally:
        gc.enable()


def measure(
    sizes: list[int],
    only: set[str] | None = None,
    budget: float = 1.0,
    least: int = 2,
    shapes: set[str] | None = None,
    slow: float = 2.0,
) -> Iterator[dict[str, Any]]:
    """One row a case and shape: the best time at each size, on the active implementation."""
    from citemark import IMPLEMENTATION

    for name, case in _cases().items():
        if only and name not in only:
            continue
        for shape, make in SHAPES.items():
            if shapes and shape not in shapes:
                continue
            times = []
            for size in sizes:
                run = case(make(size))
                if run is None:  # the case does not apply to the shape
                    break
                times.append(_best(run, budget, least, slow))
            else:
                yield {
                    "implementation": IMPLEMENTATION,
                    "api": name,
                    "shape": shape,
                    "sizes": sizes,
                    "times": times,
                    "exponent": fit_exponent(sizes, [max(t, 1e-7) for t in times]),
                }


def _job_order(name: str, implementation: str) -> tuple[bool, bool]:
    # The longest jobs first, so that the workers end together: the twin's, and the APIs
    # that go one character at a time or through the whole validation.
    slow = name.startswith(("StreamParser", "lint", "validate"))
    return (not slow, implementation != "python")


def run_all(
    sizes: list[int],
    only: set[str] | None = None,
    budget: float = 1.0,
    *,
    shapes: set[str] | None = None,
    least: int = 2,
    slow: float = 2.0,
    implementations: tuple[str, ...] = IMPLEMENTATIONS,
    jobs: int = 2,
    save: Path | None = None,
) -> list[dict[str, Any]]:
    """Every row: one worker process an API and implementation (the implementation is
    chosen at import), `jobs` at a time; each worker's rows appended to `save` as it ends."""
    names = [name for name in _cases() if not only or name in only]
    command = [sys.executable, __file__, "--worker", "--sizes", ",".join(map(str, sizes))]
    command += ["--budget", str(budget), "--least", str(least), "--slow", str(slow)]
    for shape in sorted(shapes or ()):
        command += ["--shape", shape]
    work = sorted(
        ((name, implementation) for name in names for implementation in implementations),
        key=lambda job: _job_order(*job),
    )

    def one(job: tuple[str, str]) -> list[dict[str, Any]]:
        name, implementation = job
        done = subprocess.run(
            [*command, "--only", name],
            env={**os.environ, "CITEMARK_IMPLEMENTATION": implementation},
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{implementation} worker for {name} failed:\n{done.stderr}")
        return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]

    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        running = {pool.submit(one, job): job for job in work}
        for future in concurrent.futures.as_completed(running):
            rows = future.result()
            found[running[future]] = rows
            if save is not None:
                with save.open("a", encoding="utf-8") as saved:
                    saved.writelines(json.dumps(row) + "\n" for row in rows)
    # In the order of the cases and implementations, whatever order the workers ended in.
    return [row for name in names for i in implementations for row in found.get((name, i), [])]


def table(rows: list[dict[str, Any]], order: list[str] | None = None) -> str:
    """A markdown table: one line per API and shape, times and exponent per implementation;
    the APIs in `order` (then any other), the shapes in SHAPES' order."""
    sizes = rows[0]["sizes"]
    heads = " | ".join(f"{size / MB:g} MB" for size in sizes)
    lines = [
        f"| API | shape | cython: {heads} | exp | python: {heads} | exp |",
        "|---|---|" + "---|" * (2 * len(sizes) + 2),
    ]
    by_key: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for row in rows:
        by_key.setdefault((row["api"], row["shape"]), {})[row["implementation"]] = row
    apis = [*(order or ()), *sorted({api for api, _ in by_key} - set(order or ()))]
    for api, shape in sorted(
        by_key, key=lambda key: (apis.index(key[0]), list(SHAPES).index(key[1]))
    ):
        cells = []
        for implementation in IMPLEMENTATIONS:
            measured = by_key[api, shape].get(implementation)
            if measured is None:
                cells.append(" | ".join("" for _ in sizes) + " | ")
                continue
            times = " | ".join(_seconds(t) for t in measured["times"])
            over = measured["exponent"] > LIMIT and api != FLOOR
            cells.append(f"{times} | {measured['exponent']:.2f}{' **over**' if over else ''}")
        lines.append(f"| {api} | {shape} | " + " | ".join(cells) + " |")
    lines.append("")
    apis_rows = [row for row in rows if row["api"] != FLOOR]
    if apis_rows:
        worst = max(apis_rows, key=lambda row: row["exponent"])
        lines.append(
            f"Worst exponent: {worst['exponent']:.2f} ({worst['api']}, {worst['shape']}, "
            f"{worst['implementation']}); limit {LIMIT}."
        )
    floors = [row for row in rows if row["api"] == FLOOR]
    if floors:
        lines.append(
            f"The floor's exponents (not an API): {min(r['exponent'] for r in floors):.2f} "
            f"to {max(r['exponent'] for r in floors):.2f}."
        )
    return "\n".join(lines) + "\n"


def _seconds(value: float) -> str:
    return f"{value * 1000:.2f} ms" if value < 1 else f"{value:.2f} s"


# -- pytest: the same fit, small sizes (the full table is the script's job) --------------


def test_every_exponent_is_bounded() -> None:
    rows = run_all([20_000, 80_000, 320_000], budget=0.3)
    # Small sizes are noisier; the floor is no API.
    over = [row for row in rows if row["exponent"] > LIMIT + 0.15 and row["api"] != FLOOR]
    assert not over, table(over)


def main(argv: list[str] | None = None) -> int:
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments.add_argument("--sizes", default="0.1,1,4", help="MB (millions of characters)")
    arguments.add_argument("--only", action="append", help="one API (repeatable)")
    arguments.add_argument("--shape", action="append", help="one shape (repeatable)")
    arguments.add_argument(
        "--implementation", action="append", choices=IMPLEMENTATIONS, help="(repeatable)"
    )
    arguments.add_argument("--budget", type=float, default=1.0, help="seconds per point")
    arguments.add_argument("--least", type=int, default=2, help="calls per point, at least")
    arguments.add_argument("--slow", type=float, default=2.0, help="seconds: one call is enough")
    arguments.add_argument("--jobs", type=int, default=2, help="workers at a time")
    arguments.add_argument("--rows", nargs="*", help="make the table from saved rows")
    arguments.add_argument("--out", help="also write the table to this file")
    arguments.add_argument("--json", help="append the rows (JSON lines) to this file")
    arguments.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    options = arguments.parse_args(argv)
    sizes = [
        int(float(size) * MB) if float(size) < 100 else int(size)
        for size in options.sizes.split(",")
    ]
    only = set(options.only) if options.only else None
    shapes = set(options.shape) if options.shape else None
    if options.worker:
        for row in measure(sizes, only, options.budget, options.least, shapes, options.slow):
            print(json.dumps(row), flush=True)
        return 0
    if options.rows:
        rows = [
            json.loads(line)
            for name in options.rows
            for line in Path(name).read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
    else:
        rows = run_all(
            sizes,
            only,
            options.budget,
            shapes=shapes,
            least=options.least,
            slow=options.slow,
            implementations=tuple(options.implementation or IMPLEMENTATIONS),
            jobs=options.jobs,
            save=Path(options.json) if options.json else None,
        )
    shown = table(rows, list(_cases()))
    print(shown)
    if options.out:
        Path(options.out).write_text(shown, encoding="utf-8")
    return 1 if any(row["exponent"] > LIMIT for row in rows if row["api"] != FLOOR) else 0


ensure_citemark_importable()

if __name__ == "__main__":
    sys.exit(main())
