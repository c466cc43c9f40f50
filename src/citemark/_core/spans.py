"""Sorted, disjoint `(start, end)` spans of a text: the helpers `Parser` and `validate` share.

Spans are code point ranges, half open, sorted by start; every lookup is a binary search.
"""

from __future__ import annotations

import sys
from bisect import bisect_right
from collections.abc import Sequence


def inside(spans: Sequence[tuple[int, int]], start: int, end: int) -> bool:
    """Whether [start, end) lies within one of the sorted, disjoint spans."""
    index = bisect_right(spans, (start, sys.maxsize)) - 1
    return index >= 0 and spans[index][0] <= start and end <= spans[index][1]


def overlaps(code_ranges: tuple[Sequence[int], Sequence[int]], start: int, end: int) -> bool:
    """Whether [start, end) overlaps one of the sorted, disjoint spans given as two arrays,
    their starts and their ends (as the kernels give thousands of them: no object each)."""
    starts, ends = code_ranges
    index = bisect_right(starts, start) - 1  # the last that starts at or before
    if index >= 0 and ends[index] > start:
        return True
    return index + 1 < len(starts) and starts[index + 1] < end


def merge(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The union of spans (in any order), as sorted disjoint spans."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def outermost(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted spans (they may nest or overlap) as disjoint ones: each run of spans that
    overlap becomes one, for `inside`."""
    kept: list[tuple[int, int]] = []
    for start, end in spans:
        if kept and start < kept[-1][1]:
            if end > kept[-1][1]:
                kept[-1] = (kept[-1][0], end)
            continue
        kept.append((start, end))
    return kept


def without(text: str, start: int, end: int, spans: Sequence[tuple[int, int, bool]]) -> str:
    """text[start:end] without the parts that sorted spans `(start, end, _)` cover."""
    pieces = []
    at = start
    index = bisect_right(spans, (start, -1, False))
    while index < len(spans) and spans[index][0] < end:
        span_start, span_end, _ = spans[index]
        pieces.append(text[at:span_start])
        at = min(span_end, end)
        index += 1
    pieces.append(text[at:end])
    return "".join(pieces)


def cut_at(text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, str]]:
    """text cut at sorted disjoint spans, in order: (offset, piece) for each piece between
    them and (-1, piece) for each span's own text."""
    pieces = []
    kept_from = 0
    for start, end in spans:
        pieces.append((kept_from, text[kept_from:start]))
        pieces.append((-1, text[start:end]))
        kept_from = end
    pieces.append((kept_from, text[kept_from:]))
    return pieces
