"""`Parser`: the marker grammar made configurable, over whichever scanner is active.

The drop-in functions are the default `Parser` (`Parser().extract(text)` is
`extract_citations(text)`); everything a Parser does is plain Python around the scanner's
few calls, so each capability is written once for both implementations.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from ._core.grammar import (
    CITATION_DELIMITER,
    CITATION_START,
    CITATION_STOP,
    DEFAULT_FAMILIES,
    FAMILY_WORD_RE,
    LINE_LOCATOR_RE,
    LOCATOR,
    MARKER_RANGE,
    OFFSET_UNITS,
    SOURCE_ID,
    SOURCE_ID_RE,
    SUPPORT_END,
    SUPPORT_START,
    Citation,
    OffsetUnit,
    check_families,
    check_text,
)
from ._core.shapes import MAX_MARKER
from ._core.spans import cut_at
from ._kernels.loader import IMPLEMENTATION, Implementation, scanner_for
from ._markdown.code import find_code_ranges, maybe_code
from .offsets import length as units_length

# The guide's rules in the spellings a caller may hand back to us (with and without its
# anchors, which fullmatch makes redundant); these keep the kernel's built-in fast path.
_BUILTIN_SOURCE_IDS = {SOURCE_ID_RE.pattern, SOURCE_ID}
_BUILTIN_LOCATORS = {LINE_LOCATOR_RE.pattern, LOCATOR}

# A custom pattern is `re`, which may backtrack exponentially (`(a+)+$`): by default it is
# never run on a part longer than this (see `Parser`).
DEFAULT_MAX_PART_LENGTH = 1024


class CitationSpan(NamedTuple):
    """A citation found by `Parser.finditer`: immutable, picklable, cheap to make.

    `start`/`end` are in the parser's offset unit; `clean_start` is where the citation
    sits in the text with every citation stripped (same unit).
    """

    family: str
    source_ids: tuple[str, ...]
    locator: str | None
    start: int
    end: int
    clean_start: int


def _marker(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str of one character, not {type(value).__name__}")
    if len(value) != 1:
        raise ValueError(f"{name} must be exactly one character, not {value!r}")
    return str.__str__(value)


def _pattern(name: str, value: str | re.Pattern[str], builtin: set[str]) -> re.Pattern[str] | None:
    """A compiled pattern, or None for the guide's own rule (the kernel checks it in C)."""
    if isinstance(value, str):
        try:
            pattern = re.compile(value)
        except re.error as error:
            raise ValueError(f"{name} must be a valid regular expression: {error}") from None
    elif isinstance(value, re.Pattern) and isinstance(value.pattern, str):
        pattern = value
    else:
        raise TypeError(f"{name} must be a str pattern or a compiled str pattern")
    if pattern.pattern in builtin and pattern.flags == re.UNICODE:
        return None
    return pattern


class _Capped:
    """A custom pattern that refuses a part longer than `cap` without running: the scanners
    only call `fullmatch`."""

    __slots__ = ("cap", "regex")

    def __init__(self, regex: re.Pattern[str], cap: int) -> None:
        self.regex = regex
        self.cap = cap

    def fullmatch(self, part: str) -> re.Match[str] | None:
        return None if len(part) > self.cap else self.regex.fullmatch(part)


# The bounded copies a Parser keeps for streams (see Parser._bounded): one or two in practice.
_BOUNDS_KEPT = 8


class Parser:
    """Finds citation markers with a given grammar.

    `families` are tried in order at each START (literal strings); `any_family=True`
    accepts any name of ASCII letters, digits and underscores instead.  `source_id` and
    `locator` are patterns that a whole part must match (`fullmatch`).
    `max_marker_length=N`: a marker longer than N code points, START to STOP, is not a
    match and its text stays as it is, so an unclosed START cannot swallow what follows.
    `offsets` is the unit of `finditer`'s offsets: code points (Python), "utf16" (what
    JavaScript indexes by) or "utf8" (bytes).  `skip_code=True` leaves markers inside
    Markdown code (fenced and indented blocks, inline code) untouched: code is a code range
    the scanner never looks behind.

    A custom `source_id` or `locator` pattern runs in `re`, whose backtracking can take
    exponential time on a long part (`(a+)+$`): it is only run on parts (a body split at
    DELIM, white space stripped) of at most `max_part_length` code points (default 1024);
    a longer part is neither an id nor a locator, so its marker is not a citation.  Raise
    it, or pass None, only for a pattern that cannot backtrack.  The guide's own rules
    (the default) run in the scanner, in linear time, and have no such cap.
    """

    def __init__(
        self,
        families: tuple[str, ...] = DEFAULT_FAMILIES,
        *,
        any_family: bool = False,
        start: str = CITATION_START,
        delimiter: str = CITATION_DELIMITER,
        stop: str = CITATION_STOP,
        source_id: str | re.Pattern[str] = SOURCE_ID,
        locator: str | re.Pattern[str] = LOCATOR,
        max_marker_length: int | None = None,
        offsets: OffsetUnit = "codepoints",
        skip_code: bool = False,
        max_part_length: int | None = DEFAULT_MAX_PART_LENGTH,
        implementation: Implementation | None = None,
    ) -> None:
        if isinstance(families, str):
            # A str is an iterable of one-letter families: never what a caller means here
            # (the drop-in functions keep the guide's reading of it).
            raise TypeError(f"families must be a tuple of str, not a str: ({families!r},)")
        self._options = {
            "families": families,
            "any_family": any_family,
            "start": start,
            "delimiter": delimiter,
            "stop": stop,
            "source_id": source_id,
            "locator": locator,
            "max_marker_length": max_marker_length,
            "offsets": offsets,
            "skip_code": skip_code,
            "max_part_length": max_part_length,
            "implementation": implementation,
        }
        markers = (
            _marker("start", start),
            _marker("delimiter", delimiter),
            _marker("stop", stop),
        )
        if len(set(markers)) != 3:
            raise ValueError("start, delimiter and stop must be three different characters")
        if any_family and FAMILY_WORD_RE.fullmatch(markers[1]):
            # The name is the longest run of FAMILY_WORD: it would swallow every DELIM.
            raise ValueError(f"any_family needs a delimiter outside {FAMILY_WORD_RE.pattern[:-1]}")
        if max_marker_length is not None:
            if type(max_marker_length) is not int:  # bool is an int, but not a length
                raise TypeError(
                    f"max_marker_length must be an int or None, "
                    f"not {type(max_marker_length).__name__}"
                )
            if max_marker_length < 1:
                raise ValueError(f"max_marker_length must be positive, not {max_marker_length}")
        if max_part_length is not None:
            if type(max_part_length) is not int:
                raise TypeError(
                    f"max_part_length must be an int or None, not {type(max_part_length).__name__}"
                )
            if max_part_length < 1:
                raise ValueError(f"max_part_length must be positive, not {max_part_length}")
        if type(skip_code) is not bool or type(any_family) is not bool:
            raise TypeError("any_family and skip_code must be bool")
        if offsets not in OFFSET_UNITS:
            raise ValueError(f"offsets must be one of {sorted(OFFSET_UNITS)}, not {offsets!r}")
        if not any_family and not families:
            raise ValueError("give at least one family, or any_family=True")
        source_id_pattern = _pattern("source_id", source_id, _BUILTIN_SOURCE_IDS)
        locator_pattern = _pattern("locator", locator, _BUILTIN_LOCATORS)
        if source_id_pattern is not None or locator_pattern is not None:
            # Either rule custom: both go through `re`, the default one compiled here.
            source_id_pattern = source_id_pattern or re.compile(SOURCE_ID)
            locator_pattern = locator_pattern or re.compile(LOCATOR)

        self.families = () if any_family else check_families(families)
        self._options["families"] = self.families or DEFAULT_FAMILIES  # read once, kept
        self.any_family = any_family
        self.start, self.delimiter, self.stop = markers
        self.source_id = source_id_pattern
        self.locator = locator_pattern
        self.max_marker_length = max_marker_length
        self.max_part_length = max_part_length
        self.offsets = offsets
        self.skip_code = skip_code
        self.implementation = IMPLEMENTATION if implementation is None else implementation
        self.scanner = scanner_for(implementation)
        self._units = OFFSET_UNITS.index(offsets)
        self._bounded_by: dict[int, Parser] = {}  # see _bounded
        self._grammar = self.scanner.Grammar(
            self.families,
            *markers,
            any_family,
            max_marker_length,
            _capped(source_id_pattern, max_part_length),
            _capped(locator_pattern, max_part_length),
        )

    def replace(self, **changes: Any) -> Parser:
        """A new Parser with the same options but `changes`."""
        return Parser(**{**self._options, **changes})

    def _bounded(self, max_marker_length: int) -> Parser:
        """This parser when it has a bound, else one with `max_marker_length` (a stream's):
        made once per bound and kept, since a stream starts per answer and a replace()
        costs more than a short answer's feeds (a Parser never changes)."""
        if self.max_marker_length is not None:
            return self
        found = self._bounded_by.get(max_marker_length)
        if found is None:
            if len(self._bounded_by) >= _BOUNDS_KEPT:
                self._bounded_by.clear()
            found = self._bounded_by[max_marker_length] = self.replace(
                max_marker_length=max_marker_length
            )
        return found

    def extract(self, text: str) -> list[Citation]:
        """The citations of `text` as the drop-in's dicts (offsets in code points)."""
        plain = check_text(text)
        if not self.skip_code:
            return self.scanner.extract(plain, self._grammar)
        found = []
        for at, part in self._prose(plain):
            for citation in self.scanner.extract(part, self._grammar):
                citation["start"] += at
                citation["end"] += at
                found.append(citation)
        return found

    def finditer(self, text: str) -> Iterator[CitationSpan]:
        """The citations of `text` as `CitationSpan`s, offsets in the parser's unit."""
        plain = check_text(text)
        if not self.skip_code:
            return iter(self.scanner.records(plain, self._grammar, CitationSpan, self._units))
        return iter(self._in_units(plain, self._records(plain)))

    def strip(self, text: str) -> str:
        """`text` without its citations."""
        plain = check_text(text)
        if not self.skip_code:
            clean: str = self.scanner.strip(plain, self._grammar)
            return text if clean is plain else clean
        return "".join(
            part if at < 0 else self.scanner.strip(part, self._grammar)
            for at, part in self._pieces(plain)
        )

    def spans(self, text: str) -> list[tuple[int, int, bool]]:
        """Every marker the grammar consumed, citation or not: (start, end, is_citation),
        in code points."""
        plain = check_text(text)
        if not self.skip_code:  # one piece, at 0: the scanner's own list
            spans: list[tuple[int, int, bool]] = self.scanner.spans(plain, self._grammar)
            return spans
        return [
            (at + start, at + end, valid)
            for at, part in self._prose(plain)
            for start, end, valid in self.scanner.spans(part, self._grammar)
        ]

    def sub(self, text: str, repl: Callable[[CitationSpan], str], *, sanitize: bool = False) -> str:
        """`text` with each citation replaced by `repl(citation)` (code point offsets).

        `sanitize=True` also removes the markers that were consumed but are not citations,
        every whole marker of another family (`image_group`, `navlist`) and every stray
        marker character (U+E200-U+E206) left in the text; the prose
        between U+E203 and U+E204 stays, without those two characters.  With skip_code,
        code is left exactly as it is.  Only marker characters go, never prose: a START left
        open, which the grammar reads on to a later marker's STOP, loses just its own
        characters and the later marker.
        """
        plain = check_text(text)
        cuts: list[tuple[int, int, CitationSpan | None]] = [
            (citation.start, citation.end, citation) for citation in self._records(plain)
        ]
        if sanitize:
            invalid: list[tuple[int, int, CitationSpan | None]] = []
            for start, end, valid in self.spans(plain):
                if not valid:
                    # An unclosed START read on to a later marker's STOP: only that last
                    # marker goes; the prose before it is kept (scrubbed of marker characters).
                    inner = plain.rfind(self.start, start + 1, end)
                    invalid.append((max(start, inner), end, None))
            cuts = sorted(cuts + invalid, key=lambda cut: cut[0])
        code = self._code(plain)
        pieces: list[str] = []
        kept_from = 0
        for start, end, citation in [*cuts, (len(plain), len(plain), None)]:
            kept = plain[kept_from:start]
            pieces.append(self._clean(plain, kept_from, start, code) if sanitize else kept)
            if citation is not None:
                replacement = repl(citation)
                if not isinstance(replacement, str):
                    raise TypeError(f"repl must return str, not {type(replacement).__name__}")
                pieces.append(replacement)
            kept_from = end
        return "".join(pieces)

    def supports(self, text: str) -> list[tuple[CitationSpan, int, int]]:
        """The prose each citation supports, where the model marked it: U+E203 prose
        U+E204, then (after optional white space) the citation.  A list of
        (citation, start, end) with text[start:end] the prose, in code points."""
        plain = check_text(text)
        # One pass: the prose is marked when the U+E203/U+E204 character before the
        # citation's U+E204 is a U+E203 (found by bisection, not by searching back).
        marks = [(mark.start(), mark.group()) for mark in _SUPPORT_MARKS.finditer(plain)]
        found = []
        for citation in self._records(plain):
            end = citation.start
            while end > 0 and plain[end - 1].isspace():
                end -= 1
            if end == 0 or plain[end - 1] != SUPPORT_END:
                continue
            index = bisect_left(marks, (end - 1, ""))
            if index > 0 and marks[index - 1][1] == SUPPORT_START:
                found.append((citation, marks[index - 1][0] + 1, end - 1))
        return found

    def clean(
        self,
        text: str,
        *,
        lenient: bool = False,
        skip_code: bool = True,
        widgets: Mapping[str, Callable[[Any], str]] | None = None,
    ) -> str:
        """`citemark.display.clean(text, ...)` on this parser's implementation: the text a
        person should see (every marker family, not only this parser's grammar)."""
        from .display import clean

        return clean(
            text,
            lenient=lenient,
            skip_code=skip_code,
            widgets=widgets,
            implementation=self.implementation,
        )

    # -- skip_code plumbing: code regions are code ranges the scanner never looks behind --------

    def _code(self, plain: str) -> list[tuple[int, int]]:
        return find_code_ranges(plain) if self.skip_code and maybe_code(plain) else []

    def _pieces(self, plain: str) -> list[tuple[int, str]]:
        """The text cut at code: (offset, prose) pieces and (-1, code) pieces, in order."""
        return cut_at(plain, self._code(plain))

    def _prose(self, plain: str) -> list[tuple[int, str]]:
        if not self.skip_code:
            return [(0, plain)]
        return [(at, part) for at, part in self._pieces(plain) if at >= 0 and part]

    def _spans_and_citations(
        self, plain: str
    ) -> tuple[list[tuple[int, int, bool]], list[CitationSpan]]:
        """`(self.spans(plain), list(self.finditer(plain)))`, from one scan of the text when
        it is one piece in code points (validate's parser: two scans cost it a pass over
        the text more than it needs)."""
        if self.skip_code or self._units != 0:
            return self.spans(plain), list(self.finditer(plain))
        return self.scanner.spans_records(plain, self._grammar, CitationSpan, 0)

    def _records(self, plain: str) -> list[CitationSpan]:
        """Citations in code points, clean_start counted over the whole text."""
        records = self.scanner.records
        found = []
        removed = 0
        for at, part in self._prose(plain):
            for citation in records(part, self._grammar, CitationSpan, 0):
                start, end = at + citation.start, at + citation.end
                found.append(citation._replace(start=start, end=end, clean_start=start - removed))
                removed += end - start
        return found

    def _in_units(self, plain: str, found: list[CitationSpan]) -> list[CitationSpan]:
        if self._units == 0:
            return found
        converted = []
        at = units = removed = 0
        for citation in found:
            units += units_length(plain[at : citation.start], self.offsets)
            start = units
            units += units_length(plain[citation.start : citation.end], self.offsets)
            converted.append(citation._replace(start=start, end=units, clean_start=start - removed))
            removed += units - start
            at = citation.end
        return converted

    @staticmethod
    def _clean(plain: str, start: int, end: int, code: list[tuple[int, int]]) -> str:
        """plain[start:end] without stray marker characters; code (sorted, disjoint
        spans) untouched."""
        pieces = []
        index = bisect_right(code, (start, len(plain) + 1)) - 1  # last code span from <= start
        for at in range(max(index, 0), len(code)):  # no copy of the list: one call per cut
            code_start, code_end = code[at]
            if code_start >= end:
                break
            if code_end <= start:
                continue
            if code_start > start:
                pieces.append(_scrub(plain[start:code_start]))
            overlap_end = min(end, code_end)
            pieces.append(plain[max(start, code_start) : overlap_end])
            start = overlap_end
        pieces.append(_scrub(plain[start:end]))
        return "".join(pieces)


_STRAY = re.compile(f"[{MARKER_RANGE}]")
# A whole marker of the guide's characters that the grammar did not consume (another family:
# `image_group`, `navlist`): sanitize removes all of it, not only its marker characters,
# which would leave `image_group{"query":...}` showing.  One line, MAX_MARKER at most.
_OTHER_MARKER = re.compile(
    f"{CITATION_START}(?:{FAMILY_WORD_RE.pattern})?"
    f"(?:{CITATION_DELIMITER}[^{CITATION_START}{CITATION_STOP}\r\n]{{0,{MAX_MARKER}}})?"
    f"{CITATION_STOP}"
)
_SUPPORT_MARKS = re.compile(f"[{SUPPORT_START}{SUPPORT_END}]")


def _capped(pattern: re.Pattern[str] | None, cap: int | None) -> _Capped | re.Pattern[str] | None:
    return pattern if pattern is None or cap is None else _Capped(pattern, cap)


def _scrub(text: str) -> str:
    return _STRAY.sub("", _OTHER_MARKER.sub("", text))
