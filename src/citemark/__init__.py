"""citemark: find, extract and strip the citation markers of OpenAI model answers.

A drop-in for the guide's `extract_citations` / `strip_citations`, with a compiled
single-pass kernel and a pure-Python twin that behave identically.

`import citemark` loads only the drop-in and the chosen scanner; everything else (Parser,
sources, prompt, offsets, ...) is imported on first use of its name.

Module map (start reading at `_grammar`, then `_scan_py`, then `parser`):

    __init__.py    the package face: the drop-in functions and the lazy names below
    __main__.py    `python -m citemark`: runs `cli.main`
    _version.py    the version (pyproject.toml reads it)
    _grammar.py    the grammar's facts: marker characters, id, locator and family rules,
                   line breaks, turn ids, offset units, `Citation`, argument checks
    _types.py      `Scanner`: the Protocol both scanners satisfy
    _select.py     the one chooser of every compiled/pure pair; `IMPLEMENTATION`
    _scan_py.py    the scanner, pure Python: the reference reading of the grammar
    _scan_c.pyx    the scanner, compiled: the same functions, branch for branch
    _simd.h        vector search for the marker characters, used by the compiled kernels
    _dropin.py     `extract_citations`, `strip_citations`, `extract_many`, `strip_many`
    parser.py      `Parser`: the grammar made configurable (families, markers, units, code)
    _spans.py      sorted (start, end) span helpers that Parser and validate share
    _markdown.py   where Markdown holds code, paragraphs, emphasis and blocks
    offsets.py     positions in code points, UTF-16 units and UTF-8 bytes
    stream.py      `StreamParser`: citations out of an answer that arrives in chunks
    clean.py       `clean`: the text a person should see, every marker shape removed;
                   `CleanStream` for chunks (a callable module: `citemark.clean(text)`)
    _clean_rules.py  the shapes `clean` knows: families, widgets, entities, degraded forms
    _clean_py.py   clean's scan and cut, pure Python
    _clean_c.pyx   clean's scan and cut, compiled: the same functions
    openai.py      the OpenAI SDK's streams and results with the text clean, annotations moved
    _commonmark.py where CommonMark puts code (containers, fences, indented, inline)
    _commonmark_py.py  its whole-text scan, backtick runs and pairing, and validate's scans
                       (strays, gaps, line spans), pure Python
    _commonmark_c.pyx  the same, compiled: the same functions
    render.py      citations as numbered links, footnotes or HTML
    sources.py     citable sources, their ids (`Registry`) and how the model is shown them
    prompt.py      the "Citations" section of a system prompt
    validate.py    an answer checked against its sources and the prompt's rules
    lint.py        `citemark lint`: validate from the command line
    arrow.py       pyarrow string columns, through the Arrow kernel pair
    _arrow_py.py   the Arrow kernel, pure Python (one str per row)
    _arrow_c.pyx   the Arrow kernel, compiled (UTF-8 buffers, no str per row)
    dask.py        Dask DataFrame columns, partition by partition through `arrow`
    cli.py         the `citemark` command: extract, strip, stats, lint
    _batch.py      the command's batch engine: rows in, rows out, in order, in parallel
    _jsonl.py      one JSONL line: the value at a dotted path and its exact span
    _jsonl_py.py   a block of JSONL lines validated, read at a path and spliced, on bytes
    _jsonl_c.pyx   the same, compiled: the same functions
    _stats.py      `citemark stats`: mergeable counts over many rows
    _progress.py   the command's progress bar
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._dropin import DropIn
from ._grammar import (
    CITATION_DELIMITER,
    CITATION_START,
    CITATION_STOP,
    LINE_LOCATOR_RE,
    SOURCE_ID_RE,
    Citation,
)
from ._select import IMPLEMENTATION, scanner
from ._version import __version__

if TYPE_CHECKING:
    # A callable module at run time: citemark.clean(text) is citemark.clean.clean(text).
    from .clean import clean as clean
    from .offsets import OffsetMap
    from .parser import CitationSpan, Parser
    from .prompt import citation_instructions
    from .sources import Registry, Source, format_context, format_tool_output

# `validate`/`resolve` stay in citemark.validate: a function of that name here would shadow
# the module (`import citemark.validate as v` would give the function).

_default = DropIn(scanner)
extract_citations = _default.extract_citations
strip_citations = _default.strip_citations
extract_many = _default.extract_many
strip_many = _default.strip_many

# name -> the module that defines it, imported on first use (each compiles regexes or pulls
# in dataclasses, html, datetime: most callers only want the drop-in).
_LAZY = {
    "OffsetMap": "offsets",
    "CitationSpan": "parser",
    "Parser": "parser",
    "citation_instructions": "prompt",
    "Registry": "sources",
    "Source": "sources",
    "format_context": "sources",
    "format_tool_output": "sources",
}
# Submodules that `import citemark` used to load, still reachable as attributes.
_SUBMODULES = frozenset({"clean", "offsets", "parser", "prompt", "sources"})


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return import_module(f"{__name__}.{name}")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "CITATION_DELIMITER",
    "CITATION_START",
    "CITATION_STOP",
    "IMPLEMENTATION",
    "LINE_LOCATOR_RE",
    "SOURCE_ID_RE",
    "Citation",
    "CitationSpan",
    "OffsetMap",
    "Parser",
    "Registry",
    "Source",
    "__version__",
    "citation_instructions",
    "clean",
    "extract_citations",
    "extract_many",
    "format_context",
    "format_tool_output",
    "strip_citations",
    "strip_many",
]
