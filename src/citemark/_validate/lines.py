"""validate's checks of the citations and the lines that hold them, over the compiled code
scan: the cited lines and what they hold (`cited_lines`), the fence lines among them
(`fence_cited`), the citations in code (`covered`, `code_rows`), the runs of citations before
punctuation (`punctuated`), the first and last citation kept on each line (`kept_bounds`),
the findings of ids and locators placed at each citation (`located_rows`), and two looks at
the text (`filler_end`, `present`).

Each is one pass over its citations and the text they touch, with the per-character work
left to `str` methods and regexes.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from itertools import compress, repeat, starmap
from operator import add, gt, is_, itemgetter, le
from typing import Any

from .._core.spans import without
from .._markdown.code import line_spans
from .diagnostic import Diagnostic, Severity

__all__ = ["BLANKS", "cited_lines", "code_rows", "covered", "fence_cited", "filler_end"]
__all__ += ["chars_in", "kept_bounds", "located_rows", "punctuated"]

BLANKS = " \t"
"""What validate takes for blanks between a citation and what follows it."""
_NOT_BLANK = re.compile(f"[^{BLANKS}]").search


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
    if not filler.isascii():
        raise ValueError("filler must hold ASCII characters only")
    # Checked by C loops (map, any): a Python step per citation costs as much as the rest.
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
    characters with a case: lower() and upper() tell them apart in C, where a regex or a
    Python step per character would be several times slower."""
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
    starts: list[int], ends: list[int], code_starts: array[int], code_ends: array[int]
) -> list[bool]:
    """For each range `starts[i]`..`ends[i]` (the starts ascending), whether it lies within
    one of the code ranges `code_starts[j]`..`code_ends[j]` (sorted, disjoint; `code_spans`'s
    arrays): within the last that starts at or before it."""
    if len(starts) != len(ends):
        raise ValueError("starts and ends must be as long as each other")
    if len(code_starts) != len(code_ends):
        raise ValueError("code_starts and code_ends must be as long as each other")
    if any(map(gt, starts, starts[1:])):
        raise ValueError("starts must be ascending")
    # The end of that code range for each (-1: none), found in C (bisect mapped over the starts).
    reach = [-1, *code_ends]
    limits = map(reach.__getitem__, map(bisect_right, repeat(code_starts), starts))
    return list(map(le, ends, limits))


# -- the cited lines that are fence lines, and what stands around the citations --------------

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
    if not filler.isascii():
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
    code_starts: array[int],
    code_ends: array[int],
    fenced: list[tuple[int, int, bool]],
    row: tuple[str, Severity, str],
    found: list[Diagnostic],
) -> list[bool]:
    """Which citations (`starts[i]`..`ends[i]`, the starts ascending) to check further: those
    neither within code (`covered` by the code ranges) nor on a fence line (first..stop-1 of each
    of `fence_cited`'s rows, ascending).  For each citation within code (and not on a fence
    line), a `Diagnostic` is appended to `found`: `row` (code, severity, message), start,
    end."""
    in_code: list[bool | None] = []
    in_code += covered(starts, ends, code_starts, code_ends)
    done = 0
    for first, stop, _ in fenced:
        if not done <= first < stop <= len(starts):
            raise ValueError("fenced must hold ascending rows within starts")
        in_code[first:stop] = repeat(None, stop - first)
        done = stop
    spans = compress(zip(starts, ends, strict=True), in_code)
    found += starmap(Diagnostic, map(add, repeat(row), spans))
    return list(map(is_, in_code, repeat(False)))


def chars_in(text: str, chars: str) -> str:
    """The characters of `chars` that occur in `text`, each once, in the order of `chars`:
    validate's look for emphasis delimiters and backslashes."""
    return "".join(char for char in dict.fromkeys(chars) if char in text)
