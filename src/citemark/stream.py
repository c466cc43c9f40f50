"""`StreamParser`: citations out of an answer that arrives in chunks.

A marker can be split across chunks (`...\\ue200cit` | `e\\ue202turn0search5\\ue201`).
The parser releases every character whose fate is decided and holds back the rest: a
START that could still become a marker (until it closes or can no longer fit in the
parser's `max_marker_length`, 4096 by default here, so an unclosed START is released
verbatim instead of holding the rest of the answer), and with `skip_code=True` also the
Markdown block being written (its code is only known once the block ends: an inline code
span closes later in its paragraph, a fence runs until its closing line).

Cost: held text is kept as the chunks that came, and is looked at again only when it has
doubled since the last look (or, without skip_code, when a STOP arrives, which decides
every START before it), so the total work is linear in the stream whatever the chunking
and whatever `max_marker_length`; a chunk with no START and nothing held goes out as it
is.  The price is latency: held text may wait up to one doubling longer than needed.

Invariant (tested on random chunkings down to one character, for every Parser option):
the concatenated output and citations equal `(parser.strip(whole),
list(parser.finditer(whole)))`.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

from ._core.grammar import FAMILY_WORD_RE
from ._markdown.code import block_cuts
from .offsets import length as units_length
from .parser import CitationSpan, Parser

DEFAULT_MAX_MARKER_LENGTH = 4096


class StreamUpdate(NamedTuple):
    """What a `feed` or `close` releases: clean text safe to show now, and the citations
    completed with it.  Their `start`/`end` are offsets in the whole raw stream and their
    `clean_start` an offset in the whole clean output, in the parser's unit."""

    text: str
    citations: list[CitationSpan]


# A StreamUpdate from a (text, citations) pair in one C call (tuple.__new__).
_update = partial(tuple.__new__, StreamUpdate)


class StreamParser:
    """Feed chunks, get back what is safe to show (see the module docstring).

    `max_marker_length` (a positive int) bounds a marker when `parser` has no bound of its
    own: a stream cannot wait for the end of the text to decide an unclosed START.
    """

    def __init__(
        self, parser: Parser | None = None, *, max_marker_length: int = DEFAULT_MAX_MARKER_LENGTH
    ) -> None:
        if parser is None:
            parser = Parser()
        elif not isinstance(parser, Parser):
            raise TypeError(
                f"parser must be a citemark.Parser or None, not {type(parser).__name__}"
            )
        if type(max_marker_length) is not int or max_marker_length < 1:
            raise TypeError(
                "max_marker_length must be a positive int (a stream needs a bound to release "
                f"an unclosed START), not {max_marker_length!r}"
            )
        if parser.max_marker_length is None:
            parser = parser.replace(max_marker_length=max_marker_length)
        self.parser = parser
        # Decides STARTs inside one stretch of prose (skip_code: between code spans).
        self._prose_parser = parser.replace(skip_code=False) if parser.skip_code else parser
        self._pieces: list[str] = []  # the held text, as it came
        self._held_length = 0
        self._looked_at = 0  # held length after the last look
        self._raw_units = 0  # raw stream released so far, in the parser's unit
        self._clean_units = 0  # clean output emitted so far, in the parser's unit
        self._closed = False
        # The fast path's view of the parser (its settings do not change: `replace` makes a
        # new one): no Markdown to wait for, the START to look for, the unit of offsets.
        self._open_prose = not parser.skip_code
        self._start = parser.start
        self._offsets = parser.offsets
        self._code_points = parser.offsets == "codepoints"

    def feed(self, chunk: str) -> StreamUpdate:
        if (
            type(chunk) is str
            and self._open_prose
            and not self._pieces
            and self._start not in chunk
        ):
            # The common chunk: no marker can start in it, so it all goes out as it is.  The
            # parser's settings are read once (in __init__) and the update is built without
            # the NamedTuple's Python-level constructor: per delta, those were most of the cost.
            length = len(chunk) if self._code_points else units_length(chunk, self._offsets)
            self._raw_units += length
            self._clean_units += length
            return _update((chunk, []))
        if not isinstance(chunk, str):
            raise TypeError(f"chunk must be str, not {type(chunk).__name__}")
        if self._closed:
            raise ValueError("feed() after close()")
        parser = self.parser
        if not self._pieces and not parser.skip_code and parser.start not in chunk:
            length = units_length(chunk, parser.offsets)
            self._raw_units += length
            self._clean_units += length
            return StreamUpdate(str.__str__(chunk), [])
        self._pieces.append(chunk)
        self._held_length += len(chunk)
        # A STOP decides every START before it (it closes it, or shows it cannot close in
        # bound), so a look then releases all but the text after the STOP: linear too.
        stop_decides = not parser.skip_code and parser.stop in chunk
        if self._held_length < 2 * self._looked_at and not stop_decides:
            return StreamUpdate("", [])
        data = self._take()
        cut = self._block_cut(data) if parser.skip_code else self._undecided_from(data, parser)
        update = self._release(data[:cut])
        self._hold(data[cut:])
        return update

    def close(self) -> StreamUpdate:
        """Release what is held: a START still open at the end is plain text."""
        if self._closed:
            return StreamUpdate("", [])
        self._closed = True
        self._open_prose = False  # feed() then raises
        return self._release(self._take())

    @property
    def held(self) -> str:
        """The raw text held back, waiting for the chunks that decide it."""
        data = self._take()
        self._hold(data, self._looked_at)
        return data

    def _take(self) -> str:
        data = "".join(self._pieces)
        self._pieces = []
        self._held_length = 0
        return data

    def _hold(self, data: str, looked_at: int | None = None) -> None:
        self._pieces = [data] if data else []
        self._held_length = len(data)
        self._looked_at = len(data) if looked_at is None else looked_at

    def _release(self, ready: str) -> StreamUpdate:
        if not ready:
            return StreamUpdate("", [])
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

    # -- where the decided text ends -------------------------------------------------------

    def _block_cut(self, data: str) -> int:
        """skip_code: the last place where data can be cut so that both halves read as
        they do in the whole stream, or 0.

        A cut goes at the start of a non-blank line before which the CommonMark scanner is
        neutral (no container, fence, indented block or paragraph open: the Markdown state
        at the start of a text), so code is found the same on both sides.  The prose before
        it must also hold no START whose fate the rest of the stream could change.  Two
        candidates at most are tried per look (the last cut, then the last one before the
        first undecided START), so a look is linear.
        """
        code, cuts = block_cuts(data, self.parser.implementation)
        tried = 0
        index = len(cuts) - 1
        while index >= 0 and tried < 2:
            cut = cuts[index]
            prose_from = 0
            for code_start, code_end in code:
                if code_start >= cut:
                    break
                prose_from = code_end
            tried += 1
            undecided = prose_from + self._undecided_from(data[prose_from:cut], self._prose_parser)
            if undecided == cut:
                return cut
            while index >= 0 and cuts[index] > undecided:
                index -= 1
        return 0

    def _undecided_from(self, data: str, parser: Parser) -> int:
        """Index of the first START whose fate the rest of the stream could still change,
        or len(data).  Only the last max_marker_length characters can hold one: a START
        further back either closed within the bound or never will.  Linear in data."""
        bound = parser.max_marker_length
        if bound is None:  # pragma: no cover - set in __init__
            raise ValueError("a stream parser needs a max_marker_length")
        consumed = parser.spans(data)
        last_stop = data.rfind(parser.stop)
        window = max(0, len(data) - bound)
        span_index = 0
        pos = data.find(parser.start, window)
        while pos >= 0:
            while span_index < len(consumed) and consumed[span_index][1] <= pos:
                span_index += 1
            covered = span_index < len(consumed) and consumed[span_index][0] <= pos
            if not covered and _undecided(parser, data, pos, last_stop):
                return pos
            pos = data.find(parser.start, pos + 1)
        return len(data)


def _undecided(parser: Parser, data: str, pos: int, last_stop: int) -> bool:
    """Could more text make the START at pos a marker?  (It is not one yet.)"""
    bound = parser.max_marker_length
    if bound is not None and len(data) - pos >= bound:
        return False
    for head in _heads_at(parser, data, pos + 1):
        if head is None:
            return True  # the family and DELIM are not all there yet
        if last_stop < head:
            return True  # no STOP after the DELIM yet: one may still come in bound
    return False


def _heads_at(parser: Parser, data: str, i: int) -> list[int | None]:
    """For each family that fits at i so far: the index after its DELIM, or None when the
    text ends before the family and DELIM are complete.  In family order, up to the first
    undecided one."""
    heads: list[int | None] = []
    if parser.any_family:
        word = FAMILY_WORD_RE.match(data, i)
        end = word.end() if word else i
        if end == len(data):
            heads.append(None)
        elif end > i and data[end] == parser.delimiter:
            heads.append(end + 1)
        return heads
    for family in parser.families:
        head = family + parser.delimiter
        seen = data[i : i + len(head)]
        if not head.startswith(seen):
            continue
        if len(seen) < len(head):
            heads.append(None)
            return heads
        heads.append(i + len(head))
    return heads
