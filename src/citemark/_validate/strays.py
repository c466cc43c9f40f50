"""validate's stray marker characters: the STARTs no STOP closes, the STOPs and DELIMITERs
outside every marker, found in the gaps between the markers the grammar consumed.

- `held_gaps(text, consumed, start_char, stop_char, delimiter)`: the gaps that hold a marker
  character, and which.
- `strays(text, first, last, held, start_char, stop_char, delimiter, found, foreign)`: the
  scan of one gap, as raw `(kind, start, end)` findings and the spans of the markers the
  grammar did not consume.
- `stray_findings(...)`: `strays` over every gap, as `Diagnostic`s, with the spans the id
  checks skip.
- `next_outside(text, needle, at, starts, ends, skip)`: the next needle outside those spans.

Each reads every character a bounded number of times: linear in the text.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate
from operator import itemgetter, sub

from .diagnostic import Diagnostic, Severity

__all__ = ["REFUSED", "STRAY_DELIMITER", "STRAY_STOP", "UNTERMINATED", "held_gaps"]
__all__ += ["next_outside", "stray_findings", "strays"]

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
                # word glued to it.  Touching spans merge into one skipped span.
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
    text: str, needle: str, at: int, starts: array[int], ends: array[int], skip: int
) -> tuple[int, int]:
    """The next `needle` in text at or after `at` that starts outside every skipped span (skipped
    spans `starts[i]`..`ends[i]`, sorted, disjoint; those before `skip` end at or before `at`), and
    the first skipped span that does not end at or before it: `(-1, len(starts))` when there
    is none.  A needle inside a skipped span is skipped with the rest of the skipped span."""
    if not needle:
        raise ValueError("needle must not be empty")
    if len(starts) != len(ends):
        raise ValueError("starts and ends must be as long as each other")
    at = text.find(needle, at)
    while at >= 0:
        while skip < len(ends) and ends[skip] <= at:
            skip += 1
        if skip < len(starts) and starts[skip] <= at:
            at = text.find(needle, ends[skip])
            continue
        return at, skip
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
    `starts`/`ends` the skipped spans the id checks skip, in order: every consumed marker and every
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
    # The skipped spans in order, sorted in C (no Python step per marker): the foreign spans lie
    # between the consumed markers, so sorting them all keeps that order.
    skipped = sorted([*map(itemgetter(0, 1), consumed), *foreign])
    starts.extend(map(itemgetter(0), skipped))
    ends.extend(map(itemgetter(1), skipped))
    return refused


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
