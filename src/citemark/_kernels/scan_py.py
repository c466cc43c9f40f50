"""The pure-Python twin of the kernel in `scan_c.pyx` (whose scan is `grammar_c.pxi`).

Same classes, functions, names and branch order: reading the two side by side is the
parity review.  Linear in the worst case, like the kernel (see `scan`).

Twin name -> kernel name (the kernel's table lists its fast paths and what they earn):

    Grammar             Grammar (C structs: Rules, Mark, Family)
    scan                scan_units, through scan (the GIL released for long texts)
    heads_at            head_end, any_head_end
    judge_body          judge_body (the guide's rules), judge_with_patterns (custom ones)
    extract             extract / extract_units / citation
    strip / cut_spans   strip / strip_units / cut_units
    spans               spans / spans_units
    Offsets.convert     Offsets / convert
    records             records / records_units / new_record
    cut                 cut
    undecided           undecided (last_mark: str.rfind)
    first_undecided     first_undecided / undecided_units
    undecided_from      undecided_from
    StreamFront         StreamFront / look_units / new_update / units_of
    check_args          the typed arguments of the kernel's entry points
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from .._core.dropin import CITATION_TEMPLATE
from .._core.grammar import (
    FAMILY_WORD_RE,
    LOCATOR,
    SOURCE_ID,
    UNITS_CODE_POINTS,
    UNITS_UTF8,
    UNITS_UTF16,
    Citation,
    StreamClaim,
    check_owner,
    check_rules,
    stop_in_family,
)

if TYPE_CHECKING:
    from .._core.protocols import Matcher


_builtin_source_id = re.compile(SOURCE_ID)
_builtin_locator = re.compile(LOCATOR)


class Match(NamedTuple):
    start: int  # index of START
    end: int  # index after STOP
    family: str
    source_ids: list[str] | None  # None: consumed, but not a citation
    locator: str | None


class Grammar:
    """What a marker looks like.  Built once per Parser."""

    def __init__(
        self,
        families: tuple[str, ...],
        start: str,
        delimiter: str,
        stop: str,
        any_family: bool = False,
        max_marker_length: int | None = None,
        source_id: Matcher | None = None,
        locator: Matcher | None = None,
    ) -> None:
        # The same checks, in the same order, as the kernel's Grammar.
        if type(families) is not tuple:
            raise TypeError(_wrong_type("families", "tuple", families))
        for family in families:
            if not isinstance(family, str):
                raise TypeError(f"families must hold str items, not {type(family).__name__}")
        for name, value in (("start", start), ("delimiter", delimiter), ("stop", stop)):
            if not isinstance(value, str):
                raise TypeError(_wrong_type(name, "str", value))
            if len(value) != 1:
                raise ValueError(f"{name} must be exactly one character, not {value!r}")
        check_rules(max_marker_length, source_id, locator)
        self.families = families
        self.start = start
        self.delimiter = delimiter
        self.stop = stop
        self.any_family = any_family
        self.max_length = max_marker_length
        self.source_id = source_id
        self.locator = locator
        self.heads = [(family, family + delimiter) for family in families]
        self.stop_in_family = stop_in_family(families, stop, any_family)
        self.is_source_id = (source_id or _builtin_source_id).fullmatch
        self.is_locator = (locator or _builtin_locator).fullmatch


def _wrong_type(name: str, expected: str, value: object) -> str:
    # The words of Cython's own check of a typed argument, which the kernel's entry points use.
    return f"Argument '{name}' has incorrect type (expected {expected}, got {type(value).__name__})"


def check_args(text: object, grammar: object) -> None:
    """What the kernel's typed `str text not None, Grammar grammar not None` check."""
    if not isinstance(text, str):
        raise TypeError(_wrong_type("text", "str", text))
    if not isinstance(grammar, Grammar):
        raise TypeError(_wrong_type("grammar", "Grammar", grammar))


def scan(text: str, grammar: Grammar, keep_invalid: bool) -> list[Match]:
    """Every match of text, in order (the invalid ones only with keep_invalid).

    Linear: (stop_from, stop_at) caches "the first STOP at or after stop_from is stop_at"
    (-1: none), so a START that is never closed costs its family test, not a search to
    the end of the text as in the guide's regex.  A query left of stop_from only happens
    when a family holds a START; it searches at most that family's length.
    """
    matches: list[Match] = []
    n = len(text)
    stop_from, stop_at = n, -1
    start, delimiter, stop_char = grammar.start, grammar.delimiter, grammar.stop
    max_length = grammar.max_length
    pos = text.find(start)
    while pos >= 0:
        resume = pos + 1
        for family, body in heads_at(text, pos + 1, grammar):
            # stop = the first STOP at or after body
            if body >= stop_from:
                if stop_at >= 0 and body > stop_at:
                    stop_at = text.find(stop_char, body)
                    stop_from = body
            else:
                stop = text.find(stop_char, body, stop_from)
                if stop >= 0:
                    stop_at = stop
                stop_from = body
            stop = stop_at
            if stop < 0 or (max_length is not None and stop - pos >= max_length):
                continue  # fail open: the START stays text
            # A match is consumed whether or not its body is a citation.
            judged = judge_body(text[body:stop], delimiter, grammar)
            if judged is not None or keep_invalid:
                ids, locator = judged or (None, None)
                matches.append(Match(pos, stop + 1, family, ids, locator))
            resume = stop + 1
            break
        pos = text.find(start, resume)
    return matches


def heads_at(text: str, i: int, grammar: Grammar) -> Iterable[tuple[str, int]]:
    """(family, index after its DELIM) for each family that fits at i, in order."""
    if grammar.any_family:
        word = FAMILY_WORD_RE.match(text, i)
        if word is not None and text.startswith(grammar.delimiter, word.end()):
            yield word.group(), word.end() + 1
        return
    for family, head in grammar.heads:
        if text.startswith(head, i):
            yield family, i + len(head)


def judge_body(body: str, delimiter: str, grammar: Grammar) -> tuple[list[str], str | None] | None:
    """The source ids and the locator of a body, or None when it is not a citation."""
    parts = [part for part in (piece.strip() for piece in body.split(delimiter)) if part]
    if not parts:
        return None
    locator = parts.pop() if grammar.is_locator(parts[-1]) else None
    if not parts or not all(map(grammar.is_source_id, parts)):
        return None
    return parts, locator


def extract(text: str, grammar: Grammar) -> list[Citation]:
    check_args(text, grammar)
    citations = []
    for match in scan(text, grammar, False):
        # A copy of the template, as the kernel's: its key table is shared, not owned.
        citation = _new_citation()
        citation["raw"] = text[match.start : match.end]
        citation["family"] = match.family
        citation["source_ids"] = match.source_ids  # type: ignore[typeddict-item]
        citation["locator"] = match.locator
        citation["start"] = match.start
        citation["end"] = match.end
        citations.append(citation)
    return citations


# The template's values are None, which `Citation` does not allow: every one is replaced.
_new_citation: Callable[[], Citation] = CITATION_TEMPLATE.copy  # type: ignore[assignment]


def strip(text: str, grammar: Grammar) -> str:
    """text without its citations: no dicts built."""
    check_args(text, grammar)
    spans = [(match.start, match.end) for match in scan(text, grammar, False)]
    return cut_spans(text, spans) or ""  # None only for spans out of range: never a scan's


def spans(text: str, grammar: Grammar) -> list[tuple[int, int, bool]]:
    """Every consumed match, valid or not: a list of (start, end, is_citation)."""
    check_args(text, grammar)
    return [
        (match.start, match.end, match.source_ids is not None)
        for match in scan(text, grammar, True)
    ]


class Offsets:
    """Walks a text left to right, turning code point indexes into `units`; each call
    resumes where the last one ended, so converting all matches is one pass."""

    def __init__(self, text: str, units: int) -> None:
        self.text = text
        self.units = units
        self.at = 0
        self.extra = 0

    def convert(self, index: int) -> int:
        """index (>= the previous one) in units."""
        if self.units == UNITS_CODE_POINTS:
            return index
        for ch in self.text[self.at : index]:
            code = ord(ch)
            if self.units == UNITS_UTF16:
                self.extra += code >= 0x10000
            else:
                self.extra += (code >= 0x80) + (code >= 0x800) + (code >= 0x10000)
        self.at = index
        return index + self.extra


def records(text: str, grammar: Grammar, cls: type[tuple[Any, ...]], units: int) -> list[Any]:
    """The citations of text as cls records (a tuple subclass of six fields), with
    offsets in `units`; clean_start is where the citation sits in the stripped text."""
    check_args(text, grammar)
    _check_record_args(cls, units)
    return _records_of(text, scan(text, grammar, False), cls, units)


def spans_records(
    text: str, grammar: Grammar, cls: type[tuple[Any, ...]], units: int
) -> tuple[list[tuple[int, int, bool]], list[Any]]:
    """`(spans(text, grammar), records(text, grammar, cls, units))` from one scan."""
    check_args(text, grammar)
    _check_record_args(cls, units)
    matches = scan(text, grammar, True)
    spans = [(match.start, match.end, match.source_ids is not None) for match in matches]
    valid = [match for match in matches if match.source_ids is not None]
    return spans, _records_of(text, valid, cls, units)


def _check_record_args(cls: object, units: object) -> None:
    if not (isinstance(cls, type) and issubclass(cls, tuple)):
        raise TypeError("cls must be a tuple subclass")
    if not isinstance(units, int):
        raise TypeError(f"units must be an int, not {type(units).__name__}")
    if units not in (UNITS_CODE_POINTS, UNITS_UTF16, UNITS_UTF8):
        raise ValueError(f"units must be 0 (code points), 1 (UTF-16) or 2 (UTF-8), not {units}")


def _records_of(
    text: str, matches: list[Match], cls: type[tuple[Any, ...]], units: int
) -> list[Any]:
    return records_of(matches, cls, Offsets(text, units), 0, 0)[0]


def records_of(
    matches: list[Match],
    cls: type[tuple[Any, ...]],
    offsets: Offsets,
    raw_base: int,
    clean_base: int,
) -> tuple[list[Any], int]:
    """The records of the valid matches, offsets walked by `offsets` and moved by raw_base
    (start, end) and clean_base (clean_start), and the units they cover."""
    result = []
    removed = 0
    for match in matches:
        if match.source_ids is None:
            continue
        start = offsets.convert(match.start)
        end = offsets.convert(match.end)
        fields = (match.family, tuple(match.source_ids), match.locator)
        record = (*fields, raw_base + start, raw_base + end, clean_base + start - removed)
        result.append(tuple.__new__(cls, record))
        removed += end - start
    return result, removed


def cut(text: Any, citations: Iterable[Any]) -> str | None:
    """text without the spans of citations when they are plain (a list or tuple of exact
    dicts with exact int offsets, in order, disjoint, in range); None otherwise, for the
    general path."""
    if type(text) is not str or type(citations) not in (list, tuple):
        return None  # an iterator would be used up here: the general path reads it once
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
    kept_from = 0
    for start, end in spans:
        if not kept_from <= start <= end <= len(text):
            return None
        kept.append(text[kept_from:start])
        kept_from = end
    if all(start == end for start, end in spans):
        return text
    kept.append(text[kept_from:])
    return "".join(kept)


# --- a stream's front ----------------------------------------------------------------------


def undecided(text: str, pos: int, last_stop: int, grammar: Grammar) -> bool:
    """Could more text make the START at pos (not consumed) a marker?"""
    n = len(text)
    i = pos + 1
    if grammar.max_length is not None and n - pos >= grammar.max_length:
        return False
    if grammar.any_family:
        word = FAMILY_WORD_RE.match(text, i)
        j = word.end() if word else i
        if j == n:
            return True  # the name, or its DELIM, is still to come
        return j > i and text[j] == grammar.delimiter and last_stop < j + 1
    for _family, head in grammar.heads:
        seen = text[i : i + len(head)]
        if not head.startswith(seen):
            continue
        if len(seen) < len(head):
            return True  # the text ends inside the family or before its DELIM
        if last_stop < i + len(head):
            return True  # no STOP after the DELIM yet: one may still come in bound
    return False


def first_undecided(text: str, grammar: Grammar, consumed: list[Match]) -> int:
    """Index of the first START whose fate more text could still change, or len(text).
    Only the last max_length characters can hold one: a START further back closed in
    bound or never will.  `consumed`: every match of text, valid or not: a START inside
    one is decided with it, and so is one that begins one, unless a family may hold the
    STOP (`stop_in_family`: the match may then begin a longer marker)."""
    n = len(text)
    bound = grammar.max_length
    window = n - bound if bound is not None and n > bound else 0
    span_index = 0
    last_stop = -2  # not searched for yet
    pos = text.find(grammar.start, window)
    while pos >= 0:
        while span_index < len(consumed) and consumed[span_index].end <= pos:
            span_index += 1
        if not (
            span_index < len(consumed)
            and (consumed[span_index].start < pos or not grammar.stop_in_family)
        ):
            if last_stop == -2:
                last_stop = text.rfind(grammar.stop)
            if undecided(text, pos, last_stop, grammar):
                return pos
        pos = text.find(grammar.start, pos + 1)
    return n


def undecided_from(text: str, grammar: Grammar) -> int:
    """Index of the first START of text whose fate more text could still change (it is no
    marker yet, but could close within the grammar's bound), or len(text)."""
    check_args(text, grammar)
    return first_undecided(text, grammar, scan(text, grammar, True))


class StreamFront(StreamClaim):
    """The common delta of a `citemark.stream.StreamParser` in one call.  While `open` (a
    parser without skip_code, a stream not closed), the held text is `pieces` (the chunks
    as they came, `held_length` long; `looked_at`: its length after the last look):

    - nothing held and no START in the chunk: the chunk goes out as it is;
    - something held, the chunk without STOP and the held text not doubled since the last
      look: the chunk is held too;
    - else a look: the held text up to its first START that more text could still make a
      marker (`first_undecided`) goes out, stripped, with its citations; the rest is held.

    Anything else (not a str, not open) goes to `owner._slow(chunk)`.  `raw_units` and
    `clean_units` count the raw and clean text released, in `units` (a `records` unit);
    `work` the characters looked at."""

    def __init__(
        self, owner: Any, grammar: Grammar, cls: type[tuple[Any, ...]], update: type, units: int
    ) -> None:
        check_owner(owner)
        if not isinstance(grammar, Grammar):
            raise TypeError(_wrong_type("grammar", "Grammar", grammar))
        _check_record_args(cls, units)
        if not (isinstance(update, type) and issubclass(update, tuple)):
            raise TypeError("update must be a tuple subclass")
        self.owner = owner
        StreamClaim.__init__(self)
        self.grammar = grammar
        self.cls = cls
        self.update = update
        self.units = units
        self.pieces: list[str] = []
        self.held_length = self.looked_at = self.raw_units = self.clean_units = self.work = 0
        self.open = True

    def feed(self, chunk: str) -> Any:
        # The stream's calls run one at a time, as the compiled front's claim (see StreamClaim).
        if type(chunk) is not str and isinstance(chunk, str):
            chunk = str.__str__(chunk)  # a str subclass: its plain copy, as the compiled front
        self.enter()
        try:
            return self._feed(chunk)
        finally:
            self.leave()

    def _feed(self, chunk: str) -> Any:
        if type(chunk) is not str or not self.open or self.pieces is None:
            return self.owner._slow(chunk)
        if not self.pieces:
            if self.grammar.start not in chunk:
                length = Offsets(chunk, self.units).convert(len(chunk))
                self.make_room(length)
                self.raw_units += length
                self.clean_units += length
                return tuple.__new__(self.update, (chunk, []))
            return self.look(chunk)
        if not 0 <= self.held_length <= sys.maxsize - len(chunk):
            raise OverflowError("held_length must stay within 0..PY_SSIZE_T_MAX")
        self.pieces.append(chunk)
        self.held_length += len(chunk)
        if (
            self.looked_at > 0
            and self.held_length < 2 * self.looked_at
            and (self.grammar.stop not in chunk)
        ):
            return tuple.__new__(self.update, ("", []))
        return self.look("".join(self.pieces))

    def make_room(self, length: int) -> None:
        """OverflowError unless both counts can take `length` more units (the kernel's
        offsets are Py_ssize_t)."""
        limit = sys.maxsize - length
        if not (0 <= self.raw_units <= limit and 0 <= self.clean_units <= limit):
            raise OverflowError("a stream's offsets must stay within 0..PY_SSIZE_T_MAX")

    def look(self, text: str) -> Any:
        """What is decided goes out, the rest is held again (`look_units`)."""
        n = len(text)
        self.work += n
        matches = scan(text, self.grammar, True)
        cut = first_undecided(text, self.grammar, matches)
        # No match crosses cut (a START inside one is consumed).
        matches = [m for m in matches if m.end <= cut and m.source_ids is not None]
        if cut == 0:
            update = tuple.__new__(self.update, ("", []))
        else:
            ready = text[:cut]
            length = Offsets(ready, self.units).convert(cut)
            self.make_room(length)
            removed = 0
            if not matches:
                # No citation (a START that waits for its STOP): the text goes out as it is.
                update = tuple.__new__(self.update, (ready, []))
            else:
                citations, removed = records_of(
                    matches, self.cls, Offsets(ready, self.units), self.raw_units, self.clean_units
                )
                clean = cut_spans(ready, [(match.start, match.end) for match in matches])
                assert clean is not None  # the scan's matches are sorted, disjoint, in range
                update = tuple.__new__(self.update, (clean, citations))
            self.raw_units += length
            self.clean_units += length - removed
        self.pieces = [text[cut:]] if cut < n else []
        self.held_length = self.looked_at = n - cut
        return update
