"""citemark: find, extract and strip the citation markers of OpenAI model answers.

A drop-in for the guide's `extract_citations` / `strip_citations`, with a compiled
single-pass kernel and a pure-Python twin that behave identically.

`import citemark` loads only the drop-in and the chosen scanner; everything else (Parser,
sources, prompt, offsets, ...) is imported on first use of its name.

The public modules sit in this folder; the machinery below them is in layers, each a
folder: `_core` (the grammar and the drop-in), `_kernels` (every compiled/pure pair and the one
loader), `_markdown` (where Markdown holds code), `_validate` (validate's rules) and `_cli`
(the command line's batch engine).  docs/internals.md has the map.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._core.dropin import DropIn
from ._core.grammar import (
    CITATION_DELIMITER,
    CITATION_START,
    CITATION_STOP,
    LINE_LOCATOR_RE,
    SOURCE_ID_RE,
    Citation,
)
from ._kernels.loader import IMPLEMENTATION, PurePythonWarning, scanner
from ._version import __version__

if TYPE_CHECKING:
    # A callable module at run time: citemark.display(text) is citemark.display.clean(text).
    from .display import clean as clean
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
    "clean": "display",
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
_SUBMODULES = frozenset({"offsets", "parser", "prompt", "sources"})


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
    "PurePythonWarning",
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
