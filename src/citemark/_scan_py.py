"""The pure-Python twin of the kernel in `_scan_c.pyx`.

Same functions, same names, same branch order: reading the two side by side is the parity
review.  Linear in the worst case, like the kernel (see `scan`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ._grammar import CITATION_DELIMITER as DELIM
from ._grammar import CITATION_START as START
from ._grammar import CITATION_STOP as STOP
from ._grammar import Citation

_is_source_id = re.compile(r"[A-Za-z0-9_-]+").fullmatch
_is_locator = re.compile(r"L\d+(?:-L\d+)?").fullmatch

# (start, stop, family, body, source_ids, locator); `stop` is the index of STOP.
Match = tuple[int, int, str, int, list[str], "str | None"]


def scan(text: str, families: tuple[str, ...]) -> list[Match]:
    """Every valid citation of `text`, left to right.

    Linear: `no_stop_from` remembers the leftmost position known to have no STOP at or
    after it, so a START that is never closed costs its family test, not a search to the
    end of the text (the guide's regex searches to the end from every START).
    """
    matches: list[Match] = []
    n = len(text)
    no_stop_from = n
    heads = [(family, family + DELIM) for family in families]
    pos = text.find(START)
    while pos >= 0:
        resume = pos + 1
        for family, head in heads:
            if not text.startswith(head, pos + 1):
                continue
            body = pos + 1 + len(head)
            stop = text.find(STOP, body, no_stop_from) if body < no_stop_from else -1
            if stop < 0:
                no_stop_from = min(no_stop_from, body)
                continue
            # A match is consumed whether or not its body is a valid citation.
            parsed = parse_body(text[body:stop])
            if parsed is not None:
                matches.append((pos, stop, family, body, parsed[0], parsed[1]))
            resume = stop + 1
            break
        pos = text.find(START, resume)
    return matches


def parse_body(body: str) -> tuple[list[str], str | None] | None:
    """The source ids and the locator of a body, or None when it is not a citation."""
    parts = [part for part in (piece.strip() for piece in body.split(DELIM)) if part]
    if not parts:
        return None
    locator = parts.pop() if _is_locator(parts[-1]) else None
    if not parts or not all(map(_is_source_id, parts)):
        return None
    return parts, locator


def extract(text: str, families: tuple[str, ...]) -> list[Citation]:
    return [
        {
            "raw": text[pos : stop + 1],
            "family": family,
            "source_ids": source_ids,
            "locator": locator,
            "start": pos,
            "end": stop + 1,
        }
        for pos, stop, family, _body, source_ids, locator in scan(text, families)
    ]


def strip(text: str, families: tuple[str, ...]) -> str:
    """`text` without its valid citations: extract and cut in one step, no dicts built."""
    return cut_spans(text, [(pos, stop + 1) for pos, stop, *_ in scan(text, families)])


def cut(text: Any, citations: Sequence[Any]) -> str | None:
    """`text` without the spans of `citations`, when they are plain: exact dicts with
    exact-int `start` and `end`, in order, disjoint and in range.  Otherwise None, and
    the caller takes the general path, which reproduces the helper's errors too."""
    if type(text) is not str:
        return None
    spans = []
    for citation in citations:
        if type(citation) is not dict:
            return None
        start = citation.get("start")
        end = citation.get("end")
        if type(start) is not int or type(end) is not int:
            return None
        spans.append((start, end))
    return cut_spans(text, spans)


def cut_spans(text: str, spans: list[tuple[int, int]]) -> str | None:
    kept = []
    position = 0
    for start, end in spans:
        if not position <= start <= end <= len(text):
            return None
        kept.append(text[position:start])
        position = end
    if sum(end - start for start, end in spans) == 0:
        return text
    kept.append(text[position:])
    return "".join(kept)
