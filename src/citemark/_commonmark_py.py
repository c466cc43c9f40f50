"""The pure-Python twin of `_commonmark_c.pyx`: the hot inner loops of `_commonmark`'s code
scan, a paragraph's backtick runs and their pairing into inline code spans.

Same functions, names and branch order as the kernel; the CommonMark block structure that
calls them lives once, in `_commonmark`.

- `runs(text, first, end, base)`: the backtick runs of text[first:end], flat in an
  `array("q")`: start, end, escaped (1 or 0) for each run, positions plus base;
  escaped: an odd number of backslashes (within text[first:end]) stands before the run.
  Flat machine integers, not tuples: a paragraph of thousands of runs costs no object each.
- `plain(text, start, base, pending, walls, in_paragraph, ticked_from)`: `_commonmark`'s common
  lines outside every container and code block (empty, or starting with a character no block
  starts with) from the line at `start` on, up to the first other line: its start (len(text)
  when none), with the paragraph state after them.
- `pair(runs, walls)`: append to walls the inline code spans those runs make: each opener
  (left to right) is closed by the next run of its length.

Linear: `runs` reads each character once (a backslash count stops at the previous run's
end), and `pair` never looks at a run twice.
"""

from __future__ import annotations

import re
from array import array

from ._grammar import LINE_BREAK_RE

__all__ = ["BLOCK_STARTS", "FEW_RUNS", "LINE_BREAKS", "RUNS_TYPECODE", "pair", "plain", "runs"]

RUNS_TYPECODE = "q"
"""The typecode of the runs arrays (the kernel checks its arguments against it)."""

# The characters a line may start with to be more than paragraph text (white space,
# containers, fences, headings, breaks, list markers, setext underlines).
BLOCK_STARTS = " \t>-+*#`~=_0123456789"
_BLOCK_STARTS = frozenset(BLOCK_STARTS)

LINE_BREAKS = LINE_BREAK_RE.pattern
"""The line breaks `plain` splits at (the kernel checks at import that they are these)."""

_BACKTICKS = re.compile(r"`+")

FEW_RUNS = 8
"""Up to this many runs a paragraph's runs are paired by direct look-up (at most its square
of steps); above it through a cursor per run length."""


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

    Openers are taken left to right; per run length a cursor remembers how far the search for
    a closer got, and since openers only move right no run is looked at twice."""
    count = len(runs) // 3
    if count < 2:
        return
    if count <= FEW_RUNS:
        _pair_few(runs, count, walls)
        return
    by_length: dict[int, list[int]] = {}
    for index in range(count):
        by_length.setdefault(runs[3 * index + 1] - runs[3 * index], []).append(index)
    cursors: dict[int, int] = {}
    index = 0
    while index < count:
        run_start, run_end, escaped = runs[3 * index : 3 * index + 3]
        if escaped:
            run_start += 1  # only an opener can be escaped: inside code a backslash is literal
        length = run_end - run_start
        closers = by_length.get(length, [])
        cursor = cursors.get(length, 0)
        while cursor < len(closers) and closers[cursor] <= index:
            cursor += 1
        cursors[length] = cursor
        if length and cursor < len(closers):
            closer = closers[cursor]
            walls.append((run_start, runs[3 * closer + 1]))
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
