"""The pure-Python twin of `commonmark_c.pyx`: the hot inner loops of `_markdown.code`'s code
scan, a paragraph's backtick runs and their pairing into inline code spans.

Same functions, names and branch order as the kernel; the CommonMark block structure that
calls them lives once, in `_markdown.code`.

- `runs(text, first, end, base)`: the backtick runs of text[first:end], flat in an
  `array("q")`: start, end, escaped (1 or 0) for each run, positions plus base;
  escaped: an odd number of backslashes (within text[first:end]) stands before the run.
  Flat machine integers, not tuples: a paragraph of thousands of runs costs no object each.
- `plain(text, start, base, pending, walls, in_paragraph, ticked_from)`: `_markdown.code`'s common
  lines outside every container and code block (empty, or starting with a character no block
  starts with) from the line at `start` on, up to the first other line: its start (len(text)
  when none), with the paragraph state after them.
- `pair(runs, walls)`: append to walls the inline code spans those runs make: each opener
  (left to right) is closed by the next run of its length.
- `strays(text, first, last, held, start_char, stop_char, delimiter, found, foreign)`:
  validate's scan of the marker characters between the markers (unclosed STARTs, stray
  STOPs and DELIMITERs) as raw `(kind, start, end)` findings, which validate turns into
  diagnostics in one place.
- `held_gaps(text, consumed, start_char, stop_char, delimiter)`: the gaps between the
  consumed markers that hold a marker character, and which.
- `stray_findings(text, consumed, start_char, stop_char, delimiter, rows, found, starts,
  ends)`: `strays` over every gap `held_gaps` finds, as validate's diagnostics, with the
  walls (starts, ends) its id checks skip.
- `next_outside(text, needle, at, starts, ends, wall)`: the next needle outside every wall.
- `code_walls(text)`: the whole code scan (here `_markdown.code.CodeScanner` fed the lines);
  `code_spans(text)`: its walls as two arrays, starts and ends.
- `StreamScanner`: the same scan over a text that comes in pieces (a stream's), a piece's
  lines at a time, with the cuts where each part reads as in the whole.
- `line_spans(text)`: (start, end) of every line's content.
- `present(text, chars)`: which of `chars` occur in text (one pass in the kernel).
- validate's per-citation checks (one pass each in the kernel, where a Python step per
  citation cost most of validate's time): `order`, `cited_lines`, `covered`, `punctuated`,
  `located_rows`.
- `Diagnostic`: validate's finding, the rows the functions above make.

Linear: `runs` reads each character once (a backslash count stops at the previous run's
end), and `pair` reads each run at most twice.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from itertools import accumulate, compress, repeat, starmap
from operator import add, attrgetter, gt, is_, itemgetter, le, sub
from operator import index as as_index
from typing import Any, Literal

from .._core.grammar import LINE_BREAK_RE
from .._core.spans import without

__all__ = ["BLOCK_STARTS", "FEW_RUNS", "LINE_BREAKS", "RUNS_TYPECODE", "pair", "plain", "runs"]
__all__ += ["code_walls", "held_gaps", "line_spans"]
__all__ += ["REFUSED", "STRAY_DELIMITER", "STRAY_STOP", "UNTERMINATED", "next_outside", "strays"]
__all__ += ["BLANKS", "cited_lines", "located_rows", "order", "punctuated", "stray_findings"]
__all__ += ["Diagnostic", "Severity", "StreamScanner", "code_spans", "covered"]

RUNS_TYPECODE = "q"
"""The typecode of the runs arrays (the kernel checks its arguments against it)."""

# The characters a line may start with to be more than paragraph text (white space,
# containers, fences, headings, breaks, list markers, setext underlines).
BLOCK_STARTS = " \t>-+*#`~=_0123456789"
_BLOCK_STARTS = frozenset(BLOCK_STARTS)

LINE_BREAKS = LINE_BREAK_RE.pattern
"""The line breaks `plain` splits at (the kernel checks at import that they are these)."""

_BACKTICKS = re.compile(r"`+")
# validate's order of its findings: by place, then code (see `order`).
_ORDER = attrgetter("start", "end", "code")
BLANKS = " \t"
"""What validate takes for blanks between a citation and what follows it."""
_NOT_BLANK = re.compile(f"[^{BLANKS}]").search


Severity = Literal["error", "warning"]


class Diagnostic:
    """One finding of `citemark.validate`: a stable `code`, its `severity`, a message, and
    where it is (`start`, `end`, code points).

    A value, as a frozen dataclass: its fields read-only, equal to a Diagnostic with equal
    fields (and to nothing else), hashed on its fields, not ordered, pickled and shown by
    its fields.  Its own small type rather than a tuple: validate makes one per stray
    character, and the kernel's twin of this class costs one allocation of 56 bytes, where
    a named tuple with two ints costs three (144 bytes) and, freed again, about four times
    as long (measured on 52,632 rows)."""

    __slots__ = ("code", "end", "message", "severity", "start")
    __match_args__ = ("code", "severity", "message", "start", "end")

    code: str
    severity: Severity
    message: str
    start: int
    end: int

    def __init__(self, code: str, severity: Severity, message: str, start: int, end: int) -> None:
        code, severity, message, start, end = checked_fields(code, severity, message, start, end)
        _set_field(self, "code", code)
        _set_field(self, "severity", severity)
        _set_field(self, "message", message)
        _set_field(self, "start", start)
        _set_field(self, "end", end)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Diagnostic is read-only: {name!r} cannot be set")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Diagnostic is read-only: {name!r} cannot be deleted")

    def _fields(self) -> tuple[str, str, str, int, int]:
        return self.code, self.severity, self.message, self.start, self.end

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._fields() == other._fields()

    def __ne__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._fields() != other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return shown(self)

    def __reduce__(self) -> tuple[type[Diagnostic], tuple[str, str, str, int, int]]:
        return type(self), self._fields()

    def to_json(self) -> dict[str, Any]:
        """The fields as a dict (what `citemark lint --json` writes)."""
        return as_json(self)


# What both implementations' Diagnostic do apart from holding the fields (the kernel's
# calls these): the checks of the fields, the repr and the JSON form.


def checked_fields(
    code: str, severity: Severity, message: str, start: int, end: int
) -> tuple[str, Severity, str, int, int]:
    """The fields of a Diagnostic, checked: str for the texts, and places as the kernel's
    Py_ssize_t fields take them."""
    # The usual fields let through by two tests (the rows of thousands of findings).
    if not type(code) is type(severity) is type(message) is str:
        for name, value in (("code", code), ("severity", severity), ("message", message)):
            if type(value) is not str:
                raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    if not (type(start) is type(end) is int and _LOWEST <= start <= end < _BEYOND):
        start, end = _place(start, "start"), _place(end, "end")
    return code, severity, message, start, end


def shown(row: Diagnostic) -> str:
    return (
        f"Diagnostic(code={row.code!r}, severity={row.severity!r}, "
        f"message={row.message!r}, start={row.start}, end={row.end})"
    )


def as_json(row: Diagnostic) -> dict[str, Any]:
    return {
        "code": row.code,
        "severity": row.severity,
        "message": row.message,
        "start": row.start,
        "end": row.end,
    }


# The places the kernel's Py_ssize_t fields hold: [_LOWEST, _BEYOND).
_LOWEST, _BEYOND = -(2**63), 2**63
_set_field = object.__setattr__


def _place(value: object, name: str) -> int:
    """A place as the kernel's Py_ssize_t field takes it: an int (or what has __index__)
    within the range of a signed 64-bit integer."""
    try:
        place = as_index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{name} must be an int, not {type(value).__name__}") from None
    if not _LOWEST <= place < _BEYOND:
        raise OverflowError(f"{name} is too large for a place: {place}")
    return place


FEW_RUNS = 8
"""Up to this many runs a paragraph's runs are paired by direct look-up (at most its square
of steps); above it through the next run of each length, found beforehand."""


def runs(text: str, first: int, end: int, base: int) -> array[int]:
    """The backtick runs of text[first:end]: start, end, escaped of each, flat, positions
    plus base."""
    found = array(RUNS_TYPECODE)
    for run in _BACKTICKS.finditer(text, first, end):
        at, stop = run.span()
        # Most runs follow no backslash: count them only when one is there.
        escaped = at > first and text[at - 1] == "\\" and _escaped(text, at, first)
        found.extend((base + at, base + stop, 1 if escaped else 0))
    return found


def plain(
    text: str,
    start: int,
    base: int,
    pending: array[int],
    walls: list[tuple[int, int]],
    in_paragraph: bool,
    ticked_from: int | None,
) -> tuple[int, bool, int | None]:
    """Process the plain lines from text[start:] on (see the module's text): `pending` (the
    open paragraph's runs) and walls change in place."""
    size = len(text)
    while start < size:
        if text[start] in _BLOCK_STARTS:  # (an empty line starts with its line break)
            break
        found = LINE_BREAK_RE.search(text, start)
        end = size if found is None else found.start()
        if start == end:
            if in_paragraph:  # an empty line ends the paragraph
                pair(pending, walls)
                in_paragraph = False
                del pending[:]
                ticked_from = None
        else:
            in_paragraph = True
            if text.find("`", start, end) >= 0:
                if ticked_from is None:
                    ticked_from = base + start
                pending += runs(text, start, end, base)
        start = size if found is None else found.end()
    return start, in_paragraph, ticked_from


def pair(runs: array[int], walls: list[tuple[int, int]]) -> None:
    """Append the inline code spans that the backtick runs of one paragraph make.

    Openers are taken left to right, each closed by the next run of its length.  That next
    run is found beforehand for every run, in one pass from the end (the first run of each
    length seen so far), so no run is looked at more than twice."""
    count = len(runs) // 3
    if count < 2:
        return
    if count <= FEW_RUNS:
        _pair_few(runs, count, walls)
        return
    # following[i]: the first run after i whose length is run i's as an opener (one less
    # when it is escaped: only an opener can be, inside code a backslash is literal);
    # count when there is none.
    nearest: dict[int, int] = {}
    following = [count] * count
    for index in range(count - 1, -1, -1):
        length = runs[3 * index + 1] - runs[3 * index]
        following[index] = nearest.get(length - runs[3 * index + 2], count)
        nearest[length] = index
    index = 0
    while index < count:
        run_start, run_end, escaped = runs[3 * index : 3 * index + 3]
        closer = following[index]
        if run_end - run_start - escaped and closer < count:
            walls.append((run_start + escaped, runs[3 * closer + 1]))
            index = closer + 1
        else:
            index += 1


def _pair_few(runs: array[int], count: int, walls: list[tuple[int, int]]) -> None:
    """`pair` for a handful of runs (the usual paragraph): the same pairing, looked up
    directly (at most FEW_RUNS squared steps)."""
    index = 0
    while index < count:
        run_start, run_end, escaped = runs[3 * index : 3 * index + 3]
        length = run_end - run_start - escaped
        closer = index + 1
        while closer < count and runs[3 * closer + 1] - runs[3 * closer] != length:
            closer += 1
        if length and closer < count:
            walls.append((run_start + escaped, runs[3 * closer + 1]))
            index = closer + 1
        else:
            index += 1


def _escaped(text: str, index: int, floor: int) -> bool:
    count = 0
    while index - count > floor and text[index - count - 1] == "\\":
        count += 1
    return count % 2 == 1


# -- validate's stray marker characters ---------------------------------------------------

# The kinds of `strays`'s raw findings (validate turns them into diagnostics, in one place).
UNTERMINATED = 0  # a run of STARTs that no STOP closes (one or more)
REFUSED = 1  # an open START closed by a STOP: a marker the grammar refused
STRAY_STOP = 2  # a run of STOPs outside any marker
STRAY_DELIMITER = 3  # a run of DELIMITERs outside any marker


def strays(
    text: str,
    first: int,
    last: int,
    held: int,
    start_char: str,
    stop_char: str,
    delimiter: str,
    found: list[tuple[int, int, int]],
    foreign: list[tuple[int, int]],
) -> None:
    """The marker characters of text[first:last], outside every marker, a run at a time;
    `held` says which it may hold (1: STARTs, 2: STOPs, 4: DELIMITERs).  Appends to `found`
    the raw findings `(kind, start, end)`, and to `foreign` the spans of the markers the
    grammar did not consume (an open START with the word glued to it, the STARTs before
    it, a refused marker), which the id checks then skip.  No START is open at first; one
    left open at last is reported there."""
    find = text.find
    size = last + 1
    run_of = re.compile(
        f"{re.escape(start_char)}+|{re.escape(stop_char)}+|{re.escape(delimiter)}+"
    ).match
    # The word glued to an open START: up to white space, a START or a STOP.
    head = re.compile(rf"[^\s{re.escape(start_char + stop_char)}]*").match
    # The next of each character (last when there is none).
    starts = find(start_char, first, last) % size if held & 1 else last
    stops = find(stop_char, first, last) % size if held & 2 else last
    delimiters = find(delimiter, first, last) % size if held & 4 else last
    opened = -1  # the last START left open (-1: none)
    opened_from = 0  # where the run of STARTs that ends with it starts
    while True:
        at = min(starts, stops, delimiters)
        if at == last:
            break
        end = at + 1
        if end < last and text[end] == text[at]:  # a run: most are one character
            end = run_of(text, at, last).end()  # type: ignore[union-attr]
        if at == starts:
            if opened >= 0:
                foreign.append(_unterminated(head, text, opened, opened_from, found))
            if end - at > 1:
                # Each START but the last is followed by a START: left open, with no
                # word glued to it.  Touching spans merge into one wall.
                foreign.append((at, end - 1))
            opened = end - 1
            opened_from = at
            starts = find(start_char, end, last) % size
            # A DELIMITER after an open START is part of its broken marker: none is
            # looked for until a STOP closes it.
            delimiters = last
        elif at == stops:
            if opened >= 0:
                if opened_from < opened:
                    found.append((UNTERMINATED, opened_from, opened))
                foreign.append((opened, at + 1))
                found.append((REFUSED, opened, at + 1))
                opened = -1
                delimiters = find(delimiter, at + 1, last) % size
                at += 1
            if at < end:
                found.append((STRAY_STOP, at, end))
            stops = find(stop_char, end, last) % size
        else:
            if opened < 0:
                found.append((STRAY_DELIMITER, at, end))
            delimiters = find(delimiter, end, last) % size
    if opened >= 0:
        foreign.append(_unterminated(head, text, opened, opened_from, found))


def _unterminated(
    head: Callable[[str, int], re.Match[str] | None],
    text: str,
    at: int,
    opened_from: int,
    found: list[tuple[int, int, int]],
) -> tuple[int, int]:
    """Report the START at `at` that nothing closes, with the run of STARTs before it;
    returns the span of the START and the word glued to it (its family and ids, reported
    with it rather than as bare ids)."""
    found.append((UNTERMINATED, opened_from, at + 1))
    return at, head(text, at + 1).end()  # type: ignore[union-attr]


def next_outside(
    text: str, needle: str, at: int, starts: array[int], ends: array[int], wall: int
) -> tuple[int, int]:
    """The next `needle` in text at or after `at` that starts outside every wall (walls
    `starts[i]`..`ends[i]`, sorted, disjoint; those before `wall` end at or before `at`),
    and the first wall that does not end at or before it: `(-1, len(starts))` when there
    is none.  A needle inside a wall is skipped with the rest of the wall."""
    if not needle:
        raise ValueError("needle must not be empty")
    if len(starts) != len(ends):
        raise ValueError("starts and ends must be as long as each other")
    at = text.find(needle, at)
    while at >= 0:
        while wall < len(ends) and ends[wall] <= at:
            wall += 1
        if wall < len(starts) and starts[wall] <= at:
            at = text.find(needle, ends[wall])
            continue
        return at, wall
    return -1, len(starts)


def stray_findings(
    text: str,
    consumed: list[tuple[int, int, bool]],
    start_char: str,
    stop_char: str,
    delimiter: str,
    rows: tuple[tuple[str, Severity, str, str], ...],
    found: list[Diagnostic],
    starts: array[int],
    ends: array[int],
) -> list[int]:
    """validate's stray marker characters as diagnostics: `strays` over every gap that
    `held_gaps` finds, each raw finding of kind k made a `Diagnostic` (code, severity,
    message, start, end) from `rows[k]` = (code, severity, message for
    one character, format of the message for a run of them, given its length), and
    appended to `found`.  Appends to
    `starts`/`ends` the walls the id checks skip, in order: every consumed marker and every
    foreign span.  Returns the indexes in `found` of the refused markers (kind REFUSED),
    whose message the caller writes (it needs the grammar).  The rows come in order of
    place, each starting after the one before (validate sorts nothing when they are all it
    found)."""
    if len(starts) != len(ends):
        raise ValueError("starts and ends must be as long as each other")
    raw: list[tuple[int, int, int]] = []
    foreign: list[tuple[int, int]] = []
    chars = start_char, stop_char, delimiter
    for first, last, held in held_gaps(text, consumed, *chars):
        strays(text, first, last, held, *chars, raw, foreign)
    refused = []
    for kind, start, end in raw:
        code, severity, one, many = rows[kind]
        if kind == REFUSED:
            refused.append(len(found))
        message = one if kind == REFUSED or end - start == 1 else many.format(end - start)
        found.append(Diagnostic(code, severity, message, start, end))
    # The walls in order, sorted in C (no Python step per marker): the foreign spans lie
    # between the consumed markers, so that the order is the kernel's.
    walls = sorted([*map(itemgetter(0, 1), consumed), *foreign])
    starts.extend(map(itemgetter(0), walls))
    ends.extend(map(itemgetter(1), walls))
    return refused


def order(found: list[Diagnostic]) -> list[Diagnostic]:
    """validate's `Diagnostic`s put in order, in place, by
    (start, end, code); rows that tie keep the order they were found in.  Returns `found`
    (validate owns its list: a copy of thousands of rows would cost more than the check
    that they are in order already)."""
    if type(found) is not list:
        raise TypeError(f"found must be a list, not {type(found).__name__}")
    for row in found:
        if type(row) is not Diagnostic:
            raise TypeError(f"found must hold Diagnostic rows, not {type(row).__name__}")
    found.sort(key=_ORDER)
    return found


def code_walls(text: str) -> list[tuple[int, int]]:
    """The code point ranges of Markdown code in `text` (`_markdown.code.code_walls`): the
    kernel scans the whole text in C; here `CodeScanner` is fed its lines."""
    return scanned_walls(text)


def code_spans(text: str) -> tuple[array[int], array[int]]:
    """`code_walls(text)` as two arrays, the starts and the ends (validate reads thousands of
    walls without a Python object each)."""
    walls = code_walls(text)
    return (
        array(RUNS_TYPECODE, map(itemgetter(0), walls)),
        array(RUNS_TYPECODE, map(itemgetter(1), walls)),
    )


def line_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every line's content, line breaks excluded; the last line is empty
    when the text ends with a line break (and the only one of an empty text)."""
    if "\r" not in text:
        # Only \n breaks: the lines are text.split("\n"), their places summed in C (a
        # Python step per line costs several times more).
        lengths = list(map(len, text.split("\n")))
        starts = list(accumulate(map((1).__add__, lengths[:-1]), initial=0))
        return list(zip(starts, map(add, starts, lengths), strict=True))
    spans = []
    start = 0
    for newline in LINE_BREAK_RE.finditer(text):
        spans.append((start, newline.start()))
        start = newline.end()
    spans.append((start, len(text)))
    return spans


def held_gaps(
    text: str,
    consumed: list[tuple[int, int, bool]],
    start_char: str,
    stop_char: str,
    delimiter: str,
) -> list[tuple[int, int, int]]:
    """The gaps between the consumed markers (`(start, end, is_citation)`, sorted, disjoint)
    that hold a marker character: `(first, last, held)` for text[first:last], in order, held
    saying which (1: STARTs, 2: STOPs, 4: DELIMITERs, as `strays` takes it).  Gap i is
    text[ends[i]:starts[i]], before consumed marker i when there is one."""
    ends = [0, *map(itemgetter(1), consumed)]
    starts = [*map(itemgetter(0), consumed), len(text)]
    # The gaps cut and joined in C: a marker character is looked for in the joined text
    # (a Python step per gap costs several times more).
    bare = "".join(map(text.__getitem__, map(slice, ends, starts)))
    offsets = list(accumulate(map(sub, starts, ends), initial=0))  # of the gaps in bare
    held: dict[int, int] = {}  # gap -> which characters it holds
    for bit, char in ((1, start_char), (2, stop_char), (4, delimiter)):
        at = bare.find(char)
        while at >= 0:
            gap = bisect_right(offsets, at) - 1  # the last gap that starts at or before
            held[gap] = held.get(gap, 0) | bit
            at = bare.find(char, offsets[gap + 1])
    return [(ends[gap], starts[gap], held[gap]) for gap in sorted(held)]


# -- validate's per-citation checks ---------------------------------------------------------


def cited_lines(
    text: str, starts: list[int], consumed: list[tuple[int, int, bool]], filler: str
) -> tuple[
    list[tuple[int, int, int, int]],
    list[tuple[int, int, int, int]],
    list[tuple[int, int, int, int, int]],
]:
    """The lines that hold the citations starting at `starts` (ascending, none on a line
    break), as `(line_start, line_end, first, stop)`: the line's content and the indexes
    first..stop-1 of the starts on it.  Three lists, in order: the lines that hold a
    backtick or a tilde (where a code fence may be); of the lines whose text outside the
    consumed markers holds no letter (`str.isalpha`; where the citations may stand alone),
    those where that text is all of `filler` (ASCII characters), and the others, with the
    place of the first character there that is not of `filler` added."""
    if any(char >= "\x80" for char in filler):
        raise ValueError("filler must hold ASCII characters only")
    # Checked in C (a Python step per citation costs as much as the rest).
    if starts and (starts[-1] >= len(text) or any(map(gt, starts, starts[1:]))):
        raise ValueError("starts must be ascending places inside text")
    if any(map("\r\n".__contains__, map(text.__getitem__, starts))):
        raise ValueError("starts must be places of characters that are no line break")
    spans = line_spans(text)
    line_starts = list(map(itemgetter(0), spans))
    fenced = []
    bare = []
    unsure = []
    cited = list(map(bisect_right, repeat(line_starts), starts))
    # Each cited line once, in order, with 1 + the index of its last citation (the
    # citations of a line are in a row: the first is where the line before stopped).
    stop_of = dict(zip(cited, range(1, len(cited) + 1), strict=True))
    marker_ends = list(map(itemgetter(1), consumed))
    dropped = str.maketrans("", "", filler)
    first = 0
    for line, stop in stop_of.items():
        line_start, line_end = spans[line - 1]
        row = (line_start, line_end, first, stop)
        first = stop
        if text.find("`", line_start, line_end) >= 0 or text.find("~", line_start, line_end) >= 0:
            fenced.append(row)
        span = bisect_right(marker_ends, line_start)  # the first marker ending after it
        # The usual line starts with a letter, outside every marker.
        lead = text[line_start] if line_start < line_end else ""
        if lead.isalpha() and (span == len(consumed) or consumed[span][0] > line_start):
            continue
        if any(map(_has_letter, _parts(text, line_start, line_end, consumed, span))):
            continue
        for at, part in _parts(text, line_start, line_end, consumed, span):
            if part.isascii() and not part.translate(dropped):
                continue  # all filler (translate runs in C a table at a time: fast)
            rest = part.lstrip(filler)
            if rest:
                unsure.append((*row, at + len(part) - len(rest)))
                break
        else:
            bare.append(row)
    return fenced, bare, unsure


def _parts(
    text: str, start: int, end: int, consumed: list[tuple[int, int, bool]], span: int
) -> Iterator[tuple[int, str]]:
    """text[start:end] outside the consumed markers, a piece at a time: (place, piece);
    `span`: the first marker that ends after start."""
    at = start
    while span < len(consumed):
        span_start, span_end, _ = consumed[span]
        if span_start >= end:
            break
        if span_start > at:
            yield at, text[at:span_start]
        at = max(at, span_end)
        span += 1
    if at < end:
        yield at, text[at:end]


def _has_letter(part: tuple[int, str]) -> bool:
    """Whether the piece holds a letter (str.isalpha).  In ASCII the letters are the
    characters with a case: told apart in C by lower() and upper(), 3.7x faster than a
    regex search and 15x faster than a Python step per character (timeit, a 52-character
    piece of punctuation and digits)."""
    piece = part[1]
    if piece.isascii():
        return piece.lower() != piece.upper()
    return any(map(str.isalpha, piece))


def punctuated(
    text: str, starts: list[int], ends: list[int], marks: str
) -> list[tuple[int, int, int]]:
    """The runs of citations (`starts[i]`..`ends[i]`, in order; only blanks, spaces or tabs,
    between two of one run) followed, after blanks, by a character of `marks`: `(first,
    last, at)` for each, the indexes of its first and last citation and where the mark
    is."""
    if len(starts) != len(ends):
        raise ValueError("starts and ends must be as long as each other")
    if any(at > len(text) for at in starts):
        raise ValueError("starts and ends must be places inside text")
    found = []
    count, size = len(starts), len(text)
    index = 0
    while index < count:
        first = index
        # Something other than blanks between them (looked for, not sliced out: the text
        # between two citations is mostly a whole sentence).
        while index + 1 < count and not _NOT_BLANK(text, ends[index], starts[index + 1]):
            index += 1
        after = ends[index]
        while after < size and text[after] in BLANKS:
            after += 1
        if after < size and text[after] in marks:
            found.append((first, index, after))
        index += 1
    return found


def located_rows(
    citations: list[Any],
    located: dict[tuple[tuple[str, ...], str | None], list[tuple[str, Severity, str]]],
    compute: Callable[[tuple[str, ...], str | None], list[tuple[str, Severity, str]]],
    found: list[Diagnostic],
) -> None:
    """Append to `found`, for each citation (a tuple: ids at 1, locator at 2, start and end
    at 3 and 4), a `Diagnostic` for each (code, severity, message) that `located` gives its
    (ids, locator): (code, severity, message, start, end).  A pair not in `located` yet is
    worked out by `compute(ids, locator)` and kept there."""
    append = found.append
    for citation in citations:
        key = citation[1], citation[2]
        rows = located.get(key)
        if rows is None:
            rows = located[key] = compute(*key)
        if rows:
            start, end = citation[3], citation[4]
            for code, severity, message in rows:
                append(Diagnostic(code, severity, message, start, end))


def covered(
    starts: list[int], ends: list[int], wall_starts: array[int], wall_ends: array[int]
) -> list[bool]:
    """For each range `starts[i]`..`ends[i]` (the starts ascending), whether it lies within
    one of the walls `wall_starts[j]`..`wall_ends[j]` (sorted, disjoint; `code_spans`'s
    arrays): within the last that starts at or before it."""
    if len(starts) != len(ends):
        raise ValueError("starts and ends must be as long as each other")
    if len(wall_starts) != len(wall_ends):
        raise ValueError("wall_starts and wall_ends must be as long as each other")
    if any(map(gt, starts, starts[1:])):
        raise ValueError("starts must be ascending")
    # The end of that wall for each (-1: none), found in C (bisect mapped over the starts).
    reach = [-1, *wall_ends]
    limits = map(reach.__getitem__, map(bisect_right, repeat(wall_starts), starts))
    return list(map(le, ends, limits))


# -- validate's checks of the cited lines ------------------------------------------------------

__all__ += ["fence_cited", "filler_end", "kept_bounds"]

# What opens (or closes) a code fence at the start of a line: up to 3 spaces, then 3 or more
# backticks or tildes (`_markdown.FENCE_LINE` without its rest; the tests hold the two
# together).  The run is matched whole: its end is where the rest of the line starts.
_FENCE_OPENING = re.compile(r" {0,3}(?:`{3,}|~{3,})")
# The characters whose blanking could change how the code scan reads a fence line: a fence
# character, the backslash that escapes a backtick, a line break.
_SENSITIVE = re.compile(r"[`~\\\r\n]").search


def fence_cited(
    text: str,
    fenced: list[tuple[int, int, int, int]],
    starts: list[int],
    ends: list[int],
    consumed: list[tuple[int, int, bool]],
) -> list[tuple[int, int, bool]]:
    """Of `cited_lines`' fenced lines `(line_start, line_end, first, stop)`, the fence lines:
    those where what stands before the line's first citation (`starts[first]`), read without
    the consumed markers that start on the line before it, opens with a code fence (up to 3
    spaces, then 3 or more backticks or tildes).  `(first, stop, blank)` for each, in order:
    blank False when blanking the line's citations (`starts[i]`..`ends[i]`, first <= i <
    stop) cannot change how the code scan reads it, so the text need not be copied for it.

    That is so when no marker stands before the first citation, no citation holds a fence
    character, a backslash or a line break, and a character other than a blank (space or
    tab) stands after the fence's run outside the citations: the line then reads as the same
    fence opener, fenced code or paragraph line either way (what follows a fence's run only
    decides whether a backtick fence opens, through the backticks there, and whether a line
    closes a fence, by holding nothing but blanks), and its backtick runs and the backslashes
    before them are the same."""
    if len(starts) != len(ends):
        raise ValueError("starts and ends must be as long as each other")
    found = []
    previous = 0
    for line_start, line_end, first, stop in fenced:
        if not 0 <= first < stop <= len(starts):
            raise ValueError("fenced must hold first < stop within starts")
        begin = starts[first]
        if not previous <= line_start <= begin <= line_end <= len(text):
            raise ValueError("fenced must hold ascending lines around their first citation")
        previous = line_start
        if not all(0 <= starts[i] <= ends[i] <= len(text) for i in range(first, stop)):
            raise ValueError("starts and ends must be places inside text, each start first")
        span = bisect_left(consumed, (line_start, -1, False))  # the first marker on the line
        clear = span == len(consumed) or consumed[span][0] >= begin
        if clear:
            # Matched in place: a slice of a long line costs a copy of it.
            opening = _FENCE_OPENING.match(text, line_start, begin)
        else:
            opening = _FENCE_OPENING.match(without(text, line_start, begin, consumed))
        if opening is None:
            continue
        blank = not clear or any(
            _SENSITIVE(text, starts[index], ends[index]) for index in range(first, stop)
        )
        if not blank:
            # A character other than a blank after the run, outside the citations.
            at = opening.end()
            for index in range(first, stop):
                if _NOT_BLANK(text, at, starts[index]):
                    break
                at = max(at, ends[index])
            else:
                blank = _NOT_BLANK(text, at, line_end) is None
        found.append((first, stop, blank))
    return found


def filler_end(text: str, start: int, end: int, filler: str) -> int:
    """The first place in text[start:end] of a character that is not of `filler` (ASCII
    characters), else end."""
    if any(char >= "\x80" for char in filler):
        raise ValueError("filler must hold ASCII characters only")
    if not 0 <= start <= end <= len(text):
        raise ValueError("start and end must be places in text, start first")
    # lstrip runs in C; the piece is sliced once (the caller reads what follows it).
    return end - len(text[start:end].lstrip(filler))


def kept_bounds(rows: list[Any], kept: list[bool]) -> list[tuple[int, int, int]]:
    """For each row (a tuple whose items 2 and 3 are first and stop, as `cited_lines`
    gives), the first and last index i in first..stop-1 with kept[i] true, when there is
    one: `(row, first_kept, last_kept)`, row its index in rows."""
    found = []
    for number, row in enumerate(rows):
        first, stop = row[2], row[3]
        if not 0 <= first <= stop <= len(kept):
            raise ValueError("rows must hold first <= stop within kept")
        indexes = list(compress(range(first, stop), kept[first:stop]))
        if indexes:
            found.append((number, indexes[0], indexes[-1]))
    return found


def code_rows(
    starts: list[int],
    ends: list[int],
    wall_starts: array[int],
    wall_ends: array[int],
    fenced: list[tuple[int, int, bool]],
    row: tuple[str, Severity, str],
    found: list[Diagnostic],
) -> list[bool]:
    """Which citations (`starts[i]`..`ends[i]`, the starts ascending) to check further: those
    neither within code (`covered` by the walls) nor on a fence line (first..stop-1 of each
    of `fence_cited`'s rows, ascending).  For each citation within code (and not on a fence
    line), a `Diagnostic` is appended to `found`: `row` (code, severity, message), start,
    end."""
    in_code: list[bool | None] = []
    in_code += covered(starts, ends, wall_starts, wall_ends)
    done = 0
    for first, stop, _ in fenced:
        if not done <= first < stop <= len(starts):
            raise ValueError("fenced must hold ascending rows within starts")
        in_code[first:stop] = repeat(None, stop - first)
        done = stop
    spans = compress(zip(starts, ends, strict=True), in_code)
    found += starmap(Diagnostic, map(add, repeat(row), spans))
    return list(map(is_, in_code, repeat(False)))


__all__ += ["code_rows"]


def present(text: str, chars: str) -> str:
    """The characters of `chars` that occur in `text`, each once, in the order of `chars`:
    validate's look for emphasis delimiters and backslashes, one pass over the text in the
    kernel (`char in text` read it once for each)."""
    return "".join(char for char in dict.fromkeys(chars) if char in text)


__all__ += ["present"]


_FENCE = re.compile(r"(`{3,}|~{3,})(.*)")
_CLOSE = re.compile(r"(`{3,}|~{3,})[ \t]*$")
_BULLET = re.compile(r"([-+*]|([0-9]{1,9})[.)])(?=[ \t]|$)")
_HEADING = re.compile(r"#{1,6}(?:[ \t]|$)")
# A thematic break: 3 or more of one of these characters, and blanks, to the line's end.
_RULE_LEADS = "*-_"
_RULE_RUNS = {lead: re.compile(f"[{re.escape(lead)} \t]*").match for lead in _RULE_LEADS}
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
    `neutral` is True where a new text could start with the same result.

    The block structure has its one home here; its hot loops are class attributes, this
    module's own, and the compiled kernel's in `_markdown.code.CodeScanner`."""

    scan_runs = staticmethod(runs)
    scan_pair = staticmethod(pair)
    scan_plain = staticmethod(plain)

    def __init__(self, text: str = "") -> None:
        self.text = text
        self.base = 0  # added to every recorded position (a stream feeds its text in pieces)
        self.walls: list[tuple[int, int]] = []
        self.containers: list[int] = []  # -1: block quote; else a list item's content column
        self.fence: tuple[str, int] | None = None  # (character, length)
        self.indented = False
        # The depth of the list item that started with a blank line and waits for its first
        # line, or -1.  At most one waits: an item waits only when it is the last thing on
        # its line, and a line that opens containers first ends those past the ones it
        # continues and gives the ones it continues a line.
        self.waiting = -1
        self.quotes: list[int] = []  # the depths of the block quotes among containers
        # The line's thematic-break scan (see `_thematic`): from, stop, third-last lead.
        self._rule = (0, 0, -1)
        self.in_paragraph = False
        # The paragraph's backtick runs so far: start, end, escaped of each, flat.
        self.runs = array(RUNS_TYPECODE)
        self.ticked_from: int | None = None  # where the first line with a run starts

    @property
    def neutral(self) -> bool:
        return not (self.containers or self.fence or self.indented or self.in_paragraph)

    def plain(self, start: int) -> int:
        """Process the common lines from the line at `start` on while no container or code
        block is open (see `commonmark_py.plain`): the start of the first line left (the
        text's length when none)."""
        if self.containers or self.fence or self.indented:
            return start
        start, self.in_paragraph, self.ticked_from = self.scan_plain(
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
            matched = self._blank_reach(0)
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
        depth = len(self.containers)
        self._rule = (0, 0, -1)  # nothing of this line scanned yet
        while matched < depth:
            container = self.containers[matched]
            columns, first, first_col = _indent(text, pos, end, col, extra)
            if container < 0:
                if columns <= 3 and first < end and text[first] == ">":
                    pos, col, extra = _after_marker(text, first + 1, end, first_col + 1)
                    matched += 1
                    continue
                break
            if first == end:
                # A blank rest continues the list items up to the next block quote or the
                # item waiting (a list item may start with one blank line, not two): found
                # at once, as a look at each would cost the depth at every blank line.
                reach = self._blank_reach(matched)
                if reach > matched:
                    pos, col, extra = end, first_col, 0
                    matched = reach
                break
            if columns >= container:
                pos, col, extra = _advance(text, pos, col, extra, container)
                matched += 1
                continue
            break
        if 0 <= self.waiting < matched and _indent(text, pos, end, col, extra)[1] < end:
            self.waiting = -1
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
                if item is None or self._thematic(first, end):
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
                    self.waiting = len(self.containers)
                self.containers.append(container)
                matched = len(self.containers)
                columns, first, first_col = _indent(text, pos, end, col, extra)
                continue
            self._open(matched, started)
            started = True
            self.quotes.append(len(self.containers))
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
                    or self._thematic(first, end)
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
                self.scan_pair(self.scan_runs(text, first, end, self.base), self.walls)
                return
            if self._thematic(first, end) or (
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
        self.scan_pair(self.runs, self.walls)
        self.runs = array(RUNS_TYPECODE)
        self.ticked_from = None

    def _truncate(self, depth: int) -> None:
        del self.containers[depth:]
        if self.quotes and self.quotes[-1] >= depth:
            del self.quotes[bisect_left(self.quotes, depth) :]
        if self.waiting >= depth:
            self.waiting = -1

    def _blank_reach(self, at: int) -> int:
        """How many containers a blank line continues when it continues those before `at`
        and `at` is a list item or the end: up to the next block quote or waiting item."""
        quotes = self.quotes
        index = bisect_left(quotes, at)
        reach = quotes[index] if index < len(quotes) else len(self.containers)
        return self.waiting if at <= self.waiting < reach else reach

    def _thematic(self, first: int, end: int) -> bool:
        """Whether text[first:end], a part of the line `_walk` reads, is a thematic break.

        The nested list items of one line (`- - - x`) ask at every marker: the scan of the
        lead character and blanks is remembered (from, where it stops, the third-last lead
        in it), so a question inside a part already scanned is answered without a look and
        the line is read once for each lead character at most."""
        if first >= end:
            return False
        text = self.text
        lead = text[first]
        if lead not in _RULE_LEADS:
            return False
        start, stop, third = self._rule
        if not start <= first < stop:  # (inside, every lead is text[first]: one scan's)
            stop = _RULE_RUNS[lead](text, first, end).end()  # type: ignore[union-attr]
            third = -1
            if stop == end:
                third = end
                for _ in range(3):
                    third = text.rfind(lead, first, third)
                    if third < 0:
                        break
            self._rule = first, stop, third
        return stop == end and first <= third

    def _add(self, line_start: int, first: int, end: int) -> None:
        """A paragraph line: its backtick runs wait for the paragraph's end."""
        if self.text.find("`", first, end) < 0:
            return
        runs = self.scan_runs(self.text, first, end, self.base)
        if self.ticked_from is None:
            self.ticked_from = self.base + line_start
        self.runs.extend(runs)

    def _end_paragraph(self) -> None:
        if self.in_paragraph:
            self.scan_pair(self.runs, self.walls)
            self.in_paragraph = False
            self.runs = array(RUNS_TYPECODE)
            self.ticked_from = None


class StreamScanner(CodeScanner):
    """The code scan of a text that comes in pieces (`citemark.display.CleanStream`,
    `StreamParser`'s cuts): `scan` reads every line of a piece; the walls so far are taken
    with `take_walls`, `finish` ends the text.  The kernel reads a piece's lines in C."""

    def __init__(self) -> None:
        super().__init__("")

    def scan(self, text: str, base: int = 0, cuts: list[int] | None = None) -> None:
        """Process every line of text (the last one too, ended or not), its positions plus
        `base`.  `cuts`, when a list, gets base plus the start of each non-empty line but the
        first before which the scanner is `neutral`: cut there, each part reads as it does in
        the whole text."""
        if type(text) is not str:
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        offset = _place(base, "base")
        if offset < 0:
            raise ValueError("base must be a non-negative index")
        if cuts is not None and type(cuts) is not list:
            raise TypeError(f"cuts must be None or a list, not {type(cuts).__name__}")
        self.text, self.base = text, offset
        start = 0
        try:
            for line_end in LINE_BREAK_RE.finditer(text):
                if cuts is not None and 0 < start < line_end.start() and self.neutral:
                    cuts.append(offset + start)
                self.line(start, line_end.start())
                start = line_end.end()
            if start < len(text):
                if cuts is not None and start and self.neutral:
                    cuts.append(offset + start)
                self.line(start, len(text))
        finally:
            self.text = ""  # the text is not kept: its walls and runs are positions

    def take_walls(self) -> list[tuple[int, int]]:
        """The walls found since the last call, in order."""
        walls, self.walls = self.walls, []
        return walls


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
