"""Where Markdown code is, following CommonMark's block structure, so markers there stay literal.

The one home of "where is code" for `citemark.display`, `Parser(skip_code=True)`, `StreamParser`
and validate: code inside block quotes and list items (`- item\\n\\n      code`: indented code
in a list item), lazy continuation lines, and a line-by-line scanner that a stream can feed
as lines arrive.  The rules are CommonMark's:

- containers: block quotes (`>`, one optional space) and list items (bullet `-+*` or ordered
  `1.`/`1)`; the content column is the marker's width plus 1-4 spaces, or 1 when 5+ spaces
  start indented code); a line continues a container when it is indented to its content
  column (a blank line continues a list item), or lazily when it continues a paragraph.
- leaves: fenced code (3+ backticks or tildes, no backtick in a backtick fence's info string,
  closed by a fence of the same character, at least as long, inside the same containers;
  unclosed, it runs to the end of its container), indented code (4+ columns past the
  container's content column, never interrupting a paragraph), ATX headings, thematic breaks,
  setext underlines and paragraphs.
- inline code: a backtick run closed by the next run of the same length in the same
  paragraph or heading; a backslash before a run outside code escapes its first backtick.

Not modelled (they do not change where code is in model answers): HTML blocks, raw HTML and
autolinks, which CommonMark lets win over a code span that starts inside them.  Every step is a
linear scan: adversarial input (thousands of backtick runs) costs time proportional to it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .._core.shapes import LINE_ZONE, PRIVATE_RANGE
from .._kernels import commonmark_py as _twin
from .._kernels.loader import Implementation, load

# The hot loops (the common lines outside containers and code, a paragraph's backtick runs
# and their pairing) come from the active implementation of the `commonmark_c` /
# `commonmark_py` pair.
# Type checkers see the twin; at run time the active implementation's module.
if TYPE_CHECKING:
    from .._kernels import commonmark_py as _kernel
else:
    _kernel = load("commonmark")
_find_code_ranges = _kernel.find_code_ranges
# The same code spans as two arrays, the starts and the ends (see `commonmark_py.code_spans`).
code_spans = _kernel.code_spans
# (start, end) of every line's content, line breaks excluded (see `commonmark_py`).
line_spans = _kernel.line_spans

__all__ = [
    "CodeScanner",
    "block_cuts",
    "code_spans",
    "find_code_ranges",
    "line_spans",
    "maybe_code",
]
__all__ += ["markers_may_be_in_code", "stream_scanner"]


class CodeScanner(_twin.CodeScanner):
    """The line-by-line block scanner (see `commonmark_py.CodeScanner`) with the active
    implementation's hot loops."""

    scan_runs = staticmethod(_kernel.runs)
    pair_backticks = staticmethod(_kernel.pair_backticks)
    scan_plain_lines = staticmethod(_kernel.scan_plain_lines)


def find_code_ranges(text: str) -> list[tuple[int, int]]:
    """The code point ranges of Markdown code in `text`: sorted, disjoint.  The whole scan
    runs in the kernel (its twin is `scanned_code_ranges`: a Python step per line is most of the
    cost of a short answer with lists and fences)."""
    return _find_code_ranges(text)


def stream_scanner(implementation: Implementation | None = None) -> _twin.StreamScanner:
    """A new `StreamScanner` (see `commonmark_py`) of `implementation` (None: the active
    one): the code scan a stream feeds its pieces to, their lines read in C when compiled."""
    scanner: _twin.StreamScanner = load("commonmark", implementation).StreamScanner()
    return scanner


def block_cuts(
    text: str, implementation: Implementation | None = None
) -> tuple[list[tuple[int, int]], list[int]]:
    """`find_code_ranges(text)`, and the starts of the non-blank lines before which the scanner is
    `neutral`: cut there, each part reads as it does in the whole text (a stream's cuts)."""
    scanner = stream_scanner(implementation)
    cuts: list[int] = []
    scanner.scan(text, 0, cuts)
    scanner.finish()
    return scanner.take_code_ranges(), cuts


def maybe_code(text: str) -> bool:
    """False when `text` cannot hold Markdown code (no backtick, tilde, tab or 4 spaces)."""
    return "`" in text or "~" in text or "\t" in text or "    " in text


# Every character clean removes outside code (the markers' and any other private-use one).
_MARKER_CHAR = re.compile(f"[{PRIVATE_RANGE}]")
_LINE_BREAKS = re.compile(r"[\r\n]")


def markers_may_be_in_code(text: str) -> bool:
    """False when no marker character of `text` can lie in Markdown code, so `find_code_ranges`
    can be skipped.  Sound, not exact: code holding a marker needs a fence opener before
    it, a backtick on each side of it, or a line indented by 4 columns (4 spaces or a tab
    among the blanks and container markers that start its line)."""
    first = _MARKER_CHAR.search(text)
    if first is None:
        return False
    carriage = "\r" in text  # else a backward search for it would run to the start each time
    marker: re.Match[str] | None = first
    last = 0  # the end of the last line holding a marker (at or after the last marker)
    while marker is not None:  # one look per line that holds a marker
        at = marker.start()
        line_start = text.rfind("\n", 0, at) + 1
        if carriage:
            line_start = max(line_start, text.rfind("\r", 0, at) + 1)
        prefix = text[line_start:at]
        zone = prefix[: len(prefix) - len(prefix.lstrip(LINE_ZONE))]
        if "\t" in zone or "    " in zone:
            return True
        found = _LINE_BREAKS.search(text, at)
        last = len(text) if found is None else found.start()
        marker = None if found is None else _MARKER_CHAR.search(text, last)
    fences = [at for at in (text.find("```", 0, last), text.find("~~~", 0, last)) if at >= 0]
    if fences:
        return True
    tick = text.find("`", 0, last)
    return tick >= 0 and text.rfind("`") > first.start()
