"""`StreamParser`: citations out of an answer that arrives in chunks.

A marker can be split across chunks (`...\\ue200cit` | `e\\ue202turn0search5\\ue201`).
The parser releases every character whose fate is decided and holds back only a START
that could still become a marker: never more than the parser's `max_marker_length`
(4096 by default here), so an unclosed START is released verbatim once it can no longer
fit, instead of holding the rest of the answer.  Each `feed` costs the chunk plus what
is held; nothing released is scanned again.

Invariant (tested on random chunkings down to one character): the concatenated output
and citations equal `(parser.strip(whole), list(parser.finditer(whole)))`.
"""

from __future__ import annotations

from typing import NamedTuple

from ._grammar import FAMILY_WORD_RE, heads_at
from .offsets import length as units_length
from .parser import CitationSpan, Parser

DEFAULT_MAX_MARKER_LENGTH = 4096


class StreamUpdate(NamedTuple):
    """What a `feed` or `close` releases: clean text safe to show now, and the citations
    completed with it.  Their `start`/`end` are offsets in the whole raw stream and their
    `clean_start` an offset in the whole clean output, in the parser's unit."""

    text: str
    citations: list[CitationSpan]


class StreamParser:
    def __init__(
        self, parser: Parser | None = None, *, max_marker_length: int = DEFAULT_MAX_MARKER_LENGTH
    ) -> None:
        parser = parser or Parser()
        if parser.max_marker_length is None:
            parser = parser.replace(max_marker_length=max_marker_length)
        self.parser = parser
        self._held = ""
        self._raw_units = 0  # raw stream released so far, in the parser's unit
        self._clean_units = 0  # clean output emitted so far, in the parser's unit
        self._closed = False

    def feed(self, chunk: str) -> StreamUpdate:
        if not isinstance(chunk, str):
            raise TypeError(f"chunk must be str, not {type(chunk).__name__}")
        if self._closed:
            raise ValueError("feed() after close()")
        data = self._held + chunk
        if self.parser.start not in data:
            # The common chunk: no marker can start in it, so it all goes out as it is.
            self._held = ""
            length = units_length(data, self.parser.offsets)
            self._raw_units += length
            self._clean_units += length
            return StreamUpdate(data, [])
        return self._release(data, self._undecided_from(data))

    def close(self) -> StreamUpdate:
        """Release what is held: a START still open at the end is plain text."""
        if self._closed:
            return StreamUpdate("", [])
        self._closed = True
        return self._release(self._held, len(self._held))

    @property
    def held(self) -> str:
        """The raw text held back, waiting for the chunk that decides it."""
        return self._held

    def _release(self, data: str, cut: int) -> StreamUpdate:
        ready, self._held = data[:cut], data[cut:]
        parser = self.parser
        citations = [
            citation._replace(
                start=citation.start + self._raw_units,
                end=citation.end + self._raw_units,
                clean_start=citation.clean_start + self._clean_units,
            )
            for citation in parser.finditer(ready)
        ]
        clean = parser.strip(ready)
        self._raw_units += units_length(ready, parser.offsets)
        self._clean_units += units_length(clean, parser.offsets)
        return StreamUpdate(clean, citations)

    def _undecided_from(self, data: str) -> int:
        """Index of the first START whose fate the rest of the stream could still change,
        or len(data).  Only the last max_marker_length characters can hold one: a START
        further back either closed within the bound or never will."""
        parser = self.parser
        bound = parser.max_marker_length
        assert bound is not None  # set in __init__
        consumed = parser.spans(data)
        last_stop = data.rfind(parser.stop)
        window = max(0, len(data) - bound)
        span_index = 0
        pos = data.find(parser.start, window)
        while pos >= 0:
            while span_index < len(consumed) and consumed[span_index][1] <= pos:
                span_index += 1
            covered = span_index < len(consumed) and consumed[span_index][0] <= pos
            if not covered and self._undecided(data, pos, last_stop):
                return pos
            pos = data.find(parser.start, pos + 1)
        return len(data)

    def _undecided(self, data: str, pos: int, last_stop: int) -> bool:
        """Could more text make the START at pos a marker?  (It is not one yet.)"""
        parser = self.parser
        bound = parser.max_marker_length
        assert bound is not None
        if len(data) - pos >= bound:
            return False
        if self._head_unfinished(data, pos + 1):
            return True  # a family and its DELIM may still be completed by the next chunk
        heads = heads_at(data, pos + 1, parser.families, parser.delimiter, parser.any_family)
        # No STOP after a DELIM yet: one may still come in bound.
        return any(last_stop < body for _, body in heads)

    def _head_unfinished(self, data: str, i: int) -> bool:
        """Whether data ends before a family and its DELIM at i are complete, where more
        text could still complete them (the head rule of `heads_at`, cut short)."""
        parser = self.parser
        if parser.any_family:
            word = FAMILY_WORD_RE.match(data, i)
            return (word.end() if word else i) == len(data)
        rest = len(data) - i
        return any(
            rest < len(family) + len(parser.delimiter)
            and (family + parser.delimiter).startswith(data[i:])
            for family in parser.families
        )
