"""The StreamParser of citemark 25ee52e, kept as the reference of every update a stream gives.

The scanners' `StreamFront` now takes each delta; the tests hold the new stream to this one
update by update (text, citations and the held text after each feed), so that moving the
work does not change what a server is sent, nor when.  Only the names are changed, and one
fault fixed (see `_undecided_from`).
"""

from __future__ import annotations

from functools import partial

from citemark._core.grammar import FAMILY_WORD_RE
from citemark._markdown.code import block_cuts
from citemark.offsets import length as units_length
from citemark.parser import Parser
from citemark.stream import DEFAULT_MAX_MARKER_LENGTH, StreamUpdate

_update = partial(tuple.__new__, StreamUpdate)


class ReferenceStream:
    """citemark.stream.StreamParser as it was before its front moved into the scanners."""

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
            # A START inside a match is decided with it; one that begins a match is asked
            # too, as a family holding the STOP may still make it a longer one (the one
            # change since 25ee52e, which took every START of a match as decided).
            covered = span_index < len(consumed) and consumed[span_index][0] < pos
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
