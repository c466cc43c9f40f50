"""`StreamParser`: citations out of an answer that arrives in chunks.

A marker can be split across chunks (`...\\ue200cit` | `e\\ue202turn0search5\\ue201`).
The parser releases every character whose fate is decided and holds back the rest: a
START that could still become a marker (until it closes or can no longer fit in the
parser's `max_marker_length`, 4096 by default here, so an unclosed START is released
verbatim instead of holding the rest of the answer), and with `skip_code=True` also the
Markdown block being written (its code is only known once the block ends: an inline code
span closes later in its paragraph, a fence runs until its closing line).

Cost: held text is kept as the chunks that came, and is looked at again only when it has
doubled since the last look (or, without skip_code, when a STOP arrives, which usually
decides the STARTs before it), so the total work is linear in the stream whatever the
chunking and whatever `max_marker_length`; a chunk with no START and nothing held goes out
as it is.  The price is latency: held text may wait up to one doubling longer than needed.
Without skip_code all of this is the scanner's `StreamFront`, one C call a chunk with the
compiled kernel.

Invariant (tested on random chunkings down to one character, for every Parser option):
the concatenated output and citations equal `(parser.strip(whole),
list(parser.finditer(whole)))`.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

from ._core.grammar import check_chunk
from ._core.protocols import CLOSED_OWNER
from ._markdown.code import block_cuts
from .offsets import length as units_length
from .parser import CitationSpan, Parser

DEFAULT_MAX_MARKER_LENGTH = 4096


class StreamUpdate(NamedTuple):
    """What a `feed` or `close` releases: clean text safe to show now, and the citations
    completed with it.  Their `start`/`end` are offsets in the whole raw stream and their
    `clean_start` an offset in the whole clean output, in the parser's unit.

    An update never changes while anyone holds it or its list; one that no one holds any
    more may come back from a later `feed` with new contents (the compiled stream refills
    it instead of making another), so compare updates by value, not by `id`."""

    text: str
    citations: list[CitationSpan]


# A StreamUpdate from a (text, citations) pair in one C call (tuple.__new__), without the
# NamedTuple's Python-level constructor, for close(), which every stream calls.
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
            parser = _DEFAULT_PARSER
        elif not isinstance(parser, Parser):
            raise TypeError(
                f"parser must be a citemark.Parser or None, not {type(parser).__name__}"
            )
        if type(max_marker_length) is not int or max_marker_length < 1:
            raise TypeError(
                "max_marker_length must be a positive int (a stream needs a bound to release "
                f"an unclosed START), not {max_marker_length!r}"
            )
        # Made once per Parser and bound, not per stream: a replace() costs more than a
        # whole short answer's feeds.
        parser = parser._bounded(max_marker_length)
        self.parser = parser
        self._closed = False
        # The scanner's front answers the common delta, and every look at held text without
        # skip_code, in one call (its own method is this stream's `feed`: a Python call per
        # delta would cost more than the work).  It holds the stream's state: the held text
        # (`pieces`, the chunks as they came, `held_length` long; `looked_at`, its length
        # after the last look), the raw and clean units released (`raw_units`,
        # `clean_units`) and `work`.  It holds the stream so that `StreamParser().feed`
        # alone keeps working, until close() ends that cycle.
        self._f = parser.scanner.StreamFront(
            self, parser._grammar, CitationSpan, StreamUpdate, parser._units
        )
        # With skip_code every chunk goes to `_slow`: its Markdown blocks are decided here.
        self._f.open = not parser.skip_code
        self.feed = self._f.feed  # type: ignore[method-assign]

    def feed(self, chunk: str) -> StreamUpdate:
        """Take the next chunk of the answer; returns what it released."""
        return self._f.feed(chunk)  # type: ignore[no-any-return]

    def _slow(self, chunk: str) -> StreamUpdate:
        """`feed` where the front leaves the chunk to the stream: not a str, after close, or
        skip_code (a str subclass comes as its plain copy)."""
        check_chunk(chunk)
        if self._closed:
            raise ValueError("feed() after close()")
        front = self._f
        front.pieces.append(chunk)
        front.held_length += len(chunk)
        if front.held_length < 2 * front.looked_at:
            return StreamUpdate("", [])
        data = self._take()
        front.work += len(data)
        cut = self._block_cut(data)
        update = self._release(data[:cut])
        self._hold(data[cut:])
        return update

    def close(self) -> StreamUpdate:
        """Release what is held: a START still open at the end is plain text."""
        if self._closed:
            return StreamUpdate("", [])
        # One call of the stream at a time (see display.CleanStream.close).
        self._f.enter()
        try:
            return self._close()
        finally:
            self._f.leave()

    def _close(self) -> StreamUpdate:
        if self._closed:
            return StreamUpdate("", [])
        self._closed = True
        front = self._f
        front.open = False
        front.owner = CLOSED_OWNER  # feed() then raises
        if not front.pieces:
            return _update(("", []))
        return self._release(self._take())

    @property
    def held(self) -> str:
        """The raw text held back, waiting for the chunks that decide it."""
        self._f.enter()  # (see close)
        try:
            data = self._take()
            self._hold(data, self._f.looked_at)
            return data
        finally:
            self._f.leave()

    @property
    def work(self) -> int:
        """The characters looked at so far (for the linearity tests)."""
        work: int = self._f.work
        return work

    def _take(self) -> str:
        front = self._f
        data = "".join(front.pieces)
        front.pieces = []
        front.held_length = 0
        return data

    def _hold(self, data: str, looked_at: int | None = None) -> None:
        front = self._f
        front.pieces = [data] if data else []
        front.held_length = len(data)
        front.looked_at = len(data) if looked_at is None else looked_at

    def _release(self, ready: str) -> StreamUpdate:
        if not ready:
            return StreamUpdate("", [])
        parser = self.parser
        front = self._f
        raw_units, clean_units = front.raw_units, front.clean_units
        citations = [
            citation._replace(
                start=citation.start + raw_units,
                end=citation.end + raw_units,
                clean_start=citation.clean_start + clean_units,
            )
            for citation in parser.finditer(ready)
        ]
        clean = parser.strip(ready)
        front.raw_units += units_length(ready, parser.offsets)
        front.clean_units += units_length(clean, parser.offsets)
        return StreamUpdate(clean, citations)

    # -- where the decided text ends (skip_code) -----------------------------------------------

    def _block_cut(self, data: str) -> int:
        """skip_code: the last place where data can be cut so that both halves read as
        they do in the whole stream, or 0.

        A cut goes at the start of a non-blank line before which the CommonMark scanner is
        neutral (no container, fence, indented block or paragraph open: the Markdown state
        at the start of a text), so code is found the same on both sides.  The prose before
        it must also hold no START whose fate the rest of the stream could change (the
        scanner's `undecided_from`).  Two candidates at most are tried per look (the last
        cut, then the last one before the first undecided START), so a look is linear.
        """
        parser = self.parser
        code, cuts = block_cuts(data, parser.implementation)
        undecided_from = parser.scanner.undecided_from
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
            undecided = prose_from + undecided_from(data[prose_from:cut], parser._grammar)
            if undecided == cut:
                return cut
            while index >= 0 and cuts[index] > undecided:
                index -= 1
        return 0


_DEFAULT_PARSER = Parser()
