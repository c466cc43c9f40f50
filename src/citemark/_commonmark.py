"""Where Markdown code is, following CommonMark's block structure, so markers there stay literal.

The one home of "where is code" for `citemark.clean`, `Parser(skip_code=True)`, `StreamParser`
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
from array import array
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._commonmark_py import BLOCK_STARTS, RUNS_TYPECODE, Severity
from ._grammar import LINE_BREAK_RE, MARKER_RANGE
from ._select import IMPLEMENTATION, load

# The hot loops (the common lines outside containers and code, a paragraph's backtick runs
# and their pairing) come from the active implementation of the `_commonmark_c` /
# `_commonmark_py` pair.
_kernel = load("_commonmark", IMPLEMENTATION)
# validate's finding, made by the kernel's functions below; typed as the twin's class.
if TYPE_CHECKING:
    from ._commonmark_py import Diagnostic
else:
    Diagnostic = _kernel.Diagnostic
_runs: Callable[[str, int, int, int], array[int]] = _kernel.runs
_pair: Callable[[array[int], list[tuple[int, int]]], None] = _kernel.pair
_plain: Callable[
    [str, int, int, array[int], list[tuple[int, int]], bool, int | None],
    tuple[int, bool, int | None],
] = _kernel.plain
# validate's stray marker characters between the markers (see `_commonmark_py.strays`).
strays: Callable[
    [str, int, int, int, str, str, str, list[tuple[int, int, int]], list[tuple[int, int]]], None
] = _kernel.strays
# ... and as diagnostics, with the walls the id checks skip (`_commonmark_py.stray_findings`).
stray_findings: Callable[
    [
        str,
        list[tuple[int, int, bool]],
        str,
        str,
        str,
        tuple[tuple[str, Severity, str, str], ...],
        list[Diagnostic],
        array[int],
        array[int],
    ],
    list[int],
] = _kernel.stray_findings
# validate's findings in its order (`_commonmark_py.order`).
order: Callable[[list[Diagnostic]], list[Diagnostic]] = _kernel.order
# validate's per-citation checks (see `_commonmark_py`).
cited_lines: Callable[
    [str, list[int], list[tuple[int, int, bool]], str],
    tuple[
        list[tuple[int, int, int, int]],
        list[tuple[int, int, int, int]],
        list[tuple[int, int, int, int, int]],
    ],
] = _kernel.cited_lines
covered: Callable[[list[int], list[int], array[int], array[int]], list[bool]] = _kernel.covered
punctuated: Callable[[str, list[int], list[int], str], list[tuple[int, int, int]]] = (
    _kernel.punctuated
)
located_rows: Callable[
    [
        list[Any],
        dict[tuple[tuple[str, ...], str | None], list[tuple[str, Severity, str]]],
        Callable[[tuple[str, ...], str | None], list[tuple[str, Severity, str]]],
        list[Diagnostic],
    ],
    None,
] = _kernel.located_rows
_code_walls: Callable[[str], list[tuple[int, int]]] = _kernel.code_walls
# The same walls as two arrays, the starts and the ends (see `_commonmark_py.code_spans`).
code_spans: Callable[[str], tuple[array[int], array[int]]] = _kernel.code_spans
# (start, end) of every line's content, line breaks excluded (see `_commonmark_py`).
line_spans: Callable[[str], list[tuple[int, int]]] = _kernel.line_spans
held_gaps: Callable[
    [str, list[tuple[int, int, bool]], str, str, str], list[tuple[int, int, int]]
] = _kernel.held_gaps
next_outside: Callable[[str, str, int, array[int], array[int], int], tuple[int, int]] = (
    _kernel.next_outside
)

__all__ = ["CodeScanner", "block_cuts", "code_walls", "held_gaps", "line_spans", "next_outside"]
__all__ += ["cited_lines", "located_rows", "order", "punctuated", "stray_findings", "strays"]
__all__ += ["Diagnostic", "code_spans", "covered"]

_FENCE = re.compile(r"(`{3,}|~{3,})(.*)")
_CLOSE = re.compile(r"(`{3,}|~{3,})[ \t]*$")
_BULLET = re.compile(r"([-+*]|([0-9]{1,9})[.)])(?=[ \t]|$)")
_HEADING = re.compile(r"#{1,6}(?:[ \t]|$)")
_THEMATIC = re.compile(r"(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_SETEXT = re.compile(r"(?:=+|-+)[ \t]*$")
_BLANK = " \t"
# The first characters of fences, ATX headings, thematic breaks and setext underlines.
_BLOCK_LEADS = "`~#*-_="
_BLOCK_STARTS = frozenset(BLOCK_STARTS)
if LINE_BREAK_RE.pattern != r"\r\n|\r|\n":
    raise ImportError("code_walls finds the line breaks of a text without \\r as \\n")


class CodeScanner:
    """Feed it the lines of one text, in order; `walls` collects the code ranges found so far
    (code point `(start, end)` pairs, sorted, disjoint).  A paragraph's inline code is known
    when the paragraph ends (`ticked_from`: where the lines waiting for it start).
    `neutral` is True where a new text could start with the same result."""

    def __init__(self, text: str = "") -> None:
        self.text = text
        self.base = 0  # added to every recorded position (a stream feeds its text in pieces)
        self.walls: list[tuple[int, int]] = []
        self.containers: list[int] = []  # -1: block quote; else a list item's content column
        self.fence: tuple[str, int] | None = None  # (character, length)
        self.indented = False
        self.waiting: set[int] = set()  # depths of list items that started with a blank line
        self.in_paragraph = False
        # The paragraph's backtick runs so far: start, end, escaped of each, flat.
        self.runs = array(RUNS_TYPECODE)
        self.ticked_from: int | None = None  # where the first line with a run starts

    @property
    def neutral(self) -> bool:
        return not (self.containers or self.fence or self.indented or self.in_paragraph)

    def plain(self, start: int) -> int:
        """Process the common lines from the line at `start` on while no container or code
        block is open (see `_commonmark_py.plain`): the start of the first line left (the
        text's length when none)."""
        if self.containers or self.fence or self.indented:
            return start
        start, self.in_paragraph, self.ticked_from = _plain(
            self.text, start, self.base, self.runs, self.walls, self.in_paragraph, self.ticked_from
        )
        return start

    def finish(self) -> None:
        self._end_paragraph()

    def line(self, start: int, end: int) -> None:
        """Process text[start:end], one line without its line break."""
        text = self.text
        if not self.containers:
            if self.fence is not None:
                # A line of fenced code outside every container (the full walk below, with
                # no container to match): it closes the fence, or it is code.
                columns, first, _ = _indent(text, start, end, 0, 0)
                close = _CLOSE.match(text, first, end) if columns <= 3 else None
                if close and close[1][0] == self.fence[0] and len(close[1]) >= self.fence[1]:
                    self.fence = None
                elif start < end:
                    self.walls.append((self.base + start, self.base + end))
                return
            if not self.indented:
                # The common lines, decided without the full walk below: an empty line, and
                # a line that starts with a character no block or container can start with.
                if start == end:
                    self._end_paragraph()
                    return
                if text[start] not in _BLOCK_STARTS:
                    self.in_paragraph = True
                    self._add(start, start, end)
                    return
        elif start == end and self.fence is None and not self.indented:
            # An empty line in containers (a loose list's): it continues the list items up
            # to the first block quote or item still waiting for its first line, and ends the
            # paragraph and the containers after them, as the full walk finds.
            matched = 0
            for container in self.containers:
                if container < 0 or matched in self.waiting:
                    break
                matched += 1
            self._end_paragraph()
            self._truncate(matched)
            return
        self._walk(start, end)

    def _walk(self, start: int, end: int) -> None:
        """`line` the full way: the containers matched, then the block the line makes."""
        text = self.text
        # col: the column of text[pos]; extra: columns left of a tab a container half used
        pos, col, extra = start, 0, 0
        matched = 0
        for container in self.containers:
            columns, first, first_col = _indent(text, pos, end, col, extra)
            if container < 0:
                if columns <= 3 and first < end and text[first] == ">":
                    pos, col, extra = _after_marker(text, first + 1, end, first_col + 1)
                    matched += 1
                    continue
                break
            if first == end:
                if matched in self.waiting:
                    break  # a list item may start with one blank line, not two
                pos, col, extra = end, first_col, 0
                matched += 1
                continue
            if columns >= container:
                pos, col, extra = _advance(text, pos, col, extra, container)
                matched += 1
                continue
            break
        depth = len(self.containers)
        if self.waiting and _indent(text, pos, end, col, extra)[1] < end:
            self.waiting = {d for d in self.waiting if d >= matched}
        if self.fence is not None:
            if matched == depth:
                columns, first, _ = _indent(text, pos, end, col, extra)
                close = _CLOSE.match(text, first, end) if columns <= 3 else None
                if close and close[1][0] == self.fence[0] and len(close[1]) >= self.fence[1]:
                    self.fence = None
                elif pos < end:
                    self.walls.append((self.base + pos, self.base + end))
                return
            self.fence = None
        columns, first, first_col = _indent(text, pos, end, col, extra)
        if self.indented:
            if matched == depth and (first == end or columns >= 4):
                if first < end:
                    self.walls.append((self.base + pos, self.base + end))
                return
            self.indented = False
        if first == end:
            self._end_paragraph()
            self._truncate(matched)
            return
        # New containers.
        started = False
        while columns <= 3 and first < end:
            if text[first] == ">":
                pos, col, extra = _after_marker(text, first + 1, end, first_col + 1)
            else:
                item = _BULLET.match(text, first, end)
                if item is None or _THEMATIC.match(text, first, end):
                    break
                after = item.end()
                after_col = first_col + after - first
                spaces, content, content_col = _indent(text, after, end, after_col, 0)
                interrupts = self.in_paragraph and matched == depth and not started
                if interrupts and (content == end or item[2] not in (None, "1")):
                    break
                width = after - first
                if content == end or spaces >= 5:
                    container = columns + width + 1
                    pos, col, extra = _advance(text, after, after_col, 0, 1)
                else:
                    container = columns + width + spaces
                    pos, col, extra = content, content_col, 0
                self._open(matched, started)
                started = True
                if content == end:
                    self.waiting.add(len(self.containers))
                self.containers.append(container)
                matched = len(self.containers)
                columns, first, first_col = _indent(text, pos, end, col, extra)
                continue
            self._open(matched, started)
            started = True
            self.containers.append(-1)
            matched = len(self.containers)
            columns, first, first_col = _indent(text, pos, end, col, extra)
        if first == end:  # an empty list item or block quote line
            self._end_paragraph()
            return
        # first < end here.  Each block pattern below needs its own first character: one
        # look at it spares the regexes on the usual line (text after a list marker).
        lead = text[first]
        if matched < len(self.containers):
            if self.in_paragraph and not (
                columns <= 3
                and lead in _BLOCK_LEADS
                and (
                    _fence_opener(text, first, end) is not None
                    or _HEADING.match(text, first, end) is not None
                    or _THEMATIC.match(text, first, end) is not None
                )
            ):
                self._add(start, first, end)  # a lazy continuation line
                return
            self._end_paragraph()
            self._truncate(matched)
        if columns >= 4:
            if self.in_paragraph:
                self._add(start, first, end)
            else:
                self.indented = True
                self.walls.append((self.base + pos, self.base + end))
            return
        if lead in _BLOCK_LEADS:
            opener = _fence_opener(text, first, end)
            if opener is not None:
                self._end_paragraph()
                self.fence = opener  # its info string is not shown as code: markers there go
                return
            if _HEADING.match(text, first, end):
                self._end_paragraph()
                _pair(_runs(text, first, end, self.base), self.walls)
                return
            if _THEMATIC.match(text, first, end) or (
                self.in_paragraph and _SETEXT.match(text, first, end)
            ):
                self._end_paragraph()
                return
        self.in_paragraph = True
        self._add(start, first, end)

    def _open(self, matched: int, started: bool) -> None:
        """A new container starts: the paragraph and the containers not matched end."""
        if not started:
            self._end_paragraph()
            self._truncate(matched)

    def settle(self) -> None:
        """Pair the open paragraph's backtick runs now, as if it ended here (a stream's
        bound); the paragraph stays open for the block structure."""
        _pair(self.runs, self.walls)
        self.runs = array(RUNS_TYPECODE)
        self.ticked_from = None

    def _truncate(self, depth: int) -> None:
        del self.containers[depth:]
        if self.waiting:
            self.waiting = {d for d in self.waiting if d < depth}

    def _add(self, line_start: int, first: int, end: int) -> None:
        """A paragraph line: its backtick runs wait for the paragraph's end."""
        if self.text.find("`", first, end) < 0:
            return
        runs = _runs(self.text, first, end, self.base)
        if self.ticked_from is None:
            self.ticked_from = self.base + line_start
        self.runs.extend(runs)

    def _end_paragraph(self) -> None:
        if self.in_paragraph:
            _pair(self.runs, self.walls)
            self.in_paragraph = False
            self.runs = array(RUNS_TYPECODE)
            self.ticked_from = None


def code_walls(text: str) -> list[tuple[int, int]]:
    """The code point ranges of Markdown code in `text`: sorted, disjoint.  The whole scan
    runs in the kernel (its twin is `scanned_walls`: a Python step per line costs most of
    validate's time on an answer with lists and fences)."""
    return _code_walls(text)


def scanned_walls(text: str) -> list[tuple[int, int]]:
    """`code_walls` through `CodeScanner`, fed the lines of text in order (the pure twin of
    the kernel's whole scan, and the reading streams use)."""
    scanner = CodeScanner(text)
    start, size = 0, len(text)
    if "\r" not in text:
        # Only \n breaks (LINE_BREAK_RE's other two need a \r): str.find finds them.
        while start < size:  # a line starts at every start before the end
            start = scanner.plain(start)
            if start == size:
                break
            line_end = text.find("\n", start)
            if line_end < 0:
                scanner.line(start, size)
                break
            scanner.line(start, line_end)
            start = line_end + 1
        scanner.finish()
        return scanner.walls
    while start < size:
        start = scanner.plain(start)
        if start == size:
            break
        found = LINE_BREAK_RE.search(text, start)
        if found is None:
            scanner.line(start, size)
            break
        scanner.line(start, found.start())
        start = found.end()
    scanner.finish()
    return scanner.walls


def block_cuts(text: str) -> tuple[list[tuple[int, int]], list[int]]:
    """`code_walls(text)`, and the starts of the non-blank lines before which the scanner is
    `neutral`: cut there, each part reads as it does in the whole text (a stream's cuts)."""
    scanner = CodeScanner(text)
    cuts = []
    start = 0
    for line_end in LINE_BREAK_RE.finditer(text):
        if start and scanner.neutral and start < line_end.start():
            cuts.append(start)
        scanner.line(start, line_end.start())
        start = line_end.end()
    if start < len(text):
        if start and scanner.neutral:
            cuts.append(start)
        scanner.line(start, len(text))
    scanner.finish()
    return scanner.walls, cuts


def maybe_code(text: str) -> bool:
    """False when `text` cannot hold Markdown code (no backtick, tilde, tab or 4 spaces)."""
    return "`" in text or "~" in text or "\t" in text or "    " in text


_MARKER_CHAR = re.compile(f"[{MARKER_RANGE}]")
_LINE_BREAKS = re.compile(r"[\r\n]")
# What may stand before an indented code line's code: blanks and container syntax.
_ZONE = " \t>-+*.)0123456789"


def markers_may_be_in_code(text: str) -> bool:
    """False when no marker character of `text` can lie in Markdown code, so `code_walls`
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
        zone = prefix[: len(prefix) - len(prefix.lstrip(_ZONE))]
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


def _fence_opener(text: str, first: int, end: int) -> tuple[str, int] | None:
    opening = _FENCE.match(text, first, end)
    if opening is None or (opening[1][0] == "`" and "`" in opening[2]):
        return None
    return opening[1][0], len(opening[1])


def _indent(text: str, pos: int, end: int, col: int, extra: int) -> tuple[int, int, int]:
    """The columns of white space at pos (text[pos] at column `col`, after `extra` columns
    left by a half-used tab), the index of the first other character (end when the rest is
    blank) and its column."""
    columns = extra
    while pos < end:
        char = text[pos]
        if char == " ":
            width = 1
        elif char == "\t":
            width = 4 - col % 4
        else:
            break
        columns += width
        col += width
        pos += 1
    return columns, pos, col


def _advance(text: str, pos: int, col: int, extra: int, wanted: int) -> tuple[int, int, int]:
    """Consume `wanted` columns of indentation: the new (pos, col, extra)."""
    if extra >= wanted:
        return pos, col, extra - wanted
    wanted -= extra
    while wanted > 0 and pos < len(text) and text[pos] in _BLANK:
        width = 1 if text[pos] == " " else 4 - col % 4
        col += width
        pos += 1
        if width > wanted:
            return pos, col, width - wanted
        wanted -= width
    return pos, col, 0


def _after_marker(text: str, pos: int, end: int, col: int) -> tuple[int, int, int]:
    """After `>` (text[pos] at column col): one optional space; a tab gives one column of
    itself and leaves the rest."""
    if pos < end and text[pos] == " ":
        return pos + 1, col + 1, 0
    if pos < end and text[pos] == "\t":
        width = 4 - col % 4
        return pos + 1, col + width, width - 1
    return pos, col, 0


# validate's checks of the cited lines (see `_commonmark_py`): the fence lines among them,
# the end of a stretch of filler, the first and last citation kept on each line.
fence_cited: Callable[
    [
        str,
        list[tuple[int, int, int, int]],
        list[int],
        list[int],
        list[tuple[int, int, bool]],
    ],
    list[tuple[int, int, bool]],
] = _kernel.fence_cited
filler_end: Callable[[str, int, int, str], int] = _kernel.filler_end
kept_bounds: Callable[[list[Any], list[bool]], list[tuple[int, int, int]]] = _kernel.kept_bounds
# ... and which citations to check further, those in code reported (`_commonmark_py`).
code_rows: Callable[
    [
        list[int],
        list[int],
        array[int],
        array[int],
        list[tuple[int, int, bool]],
        tuple[str, Severity, str],
        list[Diagnostic],
    ],
    list[bool],
] = _kernel.code_rows
__all__ += ["code_rows", "fence_cited", "filler_end", "kept_bounds"]
# Which of a few characters occur in a text, in one pass (see `_commonmark_py.present`).
present: Callable[[str, str], str] = _kernel.present
__all__ += ["present"]
