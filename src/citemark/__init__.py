"""citemark: find, extract and strip the citation markers of OpenAI model answers.

A drop-in for the guide's `extract_citations` / `strip_citations`, with a compiled
single-pass kernel and a pure-Python twin that behave identically.
"""

from typing import TYPE_CHECKING

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
from .offsets import OffsetMap
from .parser import CitationSpan, Parser
from .prompt import citation_instructions
from .sources import Registry, Source, format_context, format_tool_output

if TYPE_CHECKING:  # what `citemark.clean(text)` calls
    from .clean import clean as clean
else:  # a callable module: citemark.clean(text) is citemark.clean.clean(text)
    from . import clean

# `validate`/`resolve` stay in citemark.validate: a function of that name here would shadow
# the module (`import citemark.validate as v` would give the function).

_default = DropIn(scanner)
extract_citations = _default.extract_citations
strip_citations = _default.strip_citations
extract_many = _default.extract_many
strip_many = _default.strip_many

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
    "citation_instructions",
    "clean",
    "extract_citations",
    "extract_many",
    "format_context",
    "format_tool_output",
    "strip_citations",
    "strip_many",
]
__version__ = "0.1.0"
