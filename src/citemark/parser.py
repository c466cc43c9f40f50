"""`Parser`: the marker grammar made configurable, over whichever scanner is active.

The drop-in functions are the default `Parser` (`Parser().extract(text)` is
`extract_citations(text)`); everything a Parser does is plain Python around the scanner's
few calls, so each capability is written once for both implementations.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from importlib import import_module
from types import ModuleType
from typing import Any, Literal, NamedTuple

from ._grammar import (
    CITATION_DELIMITER,
    CITATION_START,
    CITATION_STOP,
    DEFAULT_FAMILIES,
    Citation,
    check_families,
    check_text,
)
from ._select import scanner as active_scanner

Offsets = Literal["codepoints", "utf16", "utf8"]
_UNITS = {"codepoints": 0, "utf16": 1, "utf8": 2}

# The guide's rules in the spellings a caller may hand back to us (with and without its
# anchors, which fullmatch makes redundant); these keep the kernel's built-in fast path.
_BUILTIN_SOURCE_IDS = {r"^[A-Za-z0-9_-]+$", r"[A-Za-z0-9_-]+"}
_BUILTIN_LOCATORS = {r"^L\d+(?:-L\d+)?$", r"L\d+(?:-L\d+)?"}


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


def _scanner_named(implementation: str | None) -> ModuleType:
    if implementation is None:
        return active_scanner
    if implementation == "cython":
        return import_module("citemark._scan_c")
    if implementation == "python":
        return import_module("citemark._scan_py")
    raise ValueError(f"implementation must be 'cython', 'python' or None, not {implementation!r}")


def _marker(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str of one character, not {type(value).__name__}")
    if len(value) != 1:
        raise ValueError(f"{name} must be exactly one character, not {value!r}")
    return str.__str__(value)


def _pattern(
    name: str, value: str | re.Pattern[str], builtin: set[str]
) -> re.Pattern[str] | None:
    """A compiled pattern, or None for the guide's own rule (the kernel checks it in C)."""
    if isinstance(value, str):
        pattern = re.compile(value)
    elif isinstance(value, re.Pattern) and isinstance(value.pattern, str):
        pattern = value
    else:
        raise TypeError(f"{name} must be a str pattern or a compiled str pattern")
    if pattern.pattern in builtin and pattern.flags == re.UNICODE:
        return None
    return pattern


class Parser:
    """Finds citation markers with a given grammar.

    `families` are tried in order at each START (literal strings); `any_family=True`
    accepts any name of ASCII letters, digits and underscores instead.  `source_id` and
    `locator` are patterns that a whole part must match (`fullmatch`).
    `max_marker_length=N`: a marker longer than N code points, START to STOP, is not a
    match and its text stays as it is, so an unclosed START cannot swallow what follows.
    `offsets` is the unit of `finditer`'s offsets: code points (Python), "utf16" (what
    JavaScript indexes by) or "utf8" (bytes).
    """

    def __init__(
        self,
        families: tuple[str, ...] = DEFAULT_FAMILIES,
        *,
        any_family: bool = False,
        start: str = CITATION_START,
        delimiter: str = CITATION_DELIMITER,
        stop: str = CITATION_STOP,
        source_id: str | re.Pattern[str] = r"[A-Za-z0-9_-]+",
        locator: str | re.Pattern[str] = r"L\d+(?:-L\d+)?",
        max_marker_length: int | None = None,
        offsets: Offsets = "codepoints",
        implementation: Literal["cython", "python"] | None = None,
    ) -> None:
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
            "implementation": implementation,
        }
        markers = (
            _marker("start", start),
            _marker("delimiter", delimiter),
            _marker("stop", stop),
        )
        if len(set(markers)) != 3:
            raise ValueError("start, delimiter and stop must be three different characters")
        if max_marker_length is not None and (
            type(max_marker_length) is not int or max_marker_length < 1
        ):
            raise ValueError("max_marker_length must be a positive int or None")
        if offsets not in _UNITS:
            raise ValueError(f"offsets must be one of {sorted(_UNITS)}, not {offsets!r}")
        if not any_family and not families:
            raise ValueError("give at least one family, or any_family=True")
        source_id_pattern = _pattern("source_id", source_id, _BUILTIN_SOURCE_IDS)
        locator_pattern = _pattern("locator", locator, _BUILTIN_LOCATORS)
        if source_id_pattern is not None or locator_pattern is not None:
            # Either rule custom: both go through `re`, the default one compiled here.
            source_id_pattern = source_id_pattern or re.compile(r"[A-Za-z0-9_-]+")
            locator_pattern = locator_pattern or re.compile(r"L\d+(?:-L\d+)?")

        self.families = () if any_family else check_families(families)
        self.any_family = any_family
        self.start, self.delimiter, self.stop = markers
        self.source_id = source_id_pattern
        self.locator = locator_pattern
        self.max_marker_length = max_marker_length
        self.offsets = offsets
        self.scanner = _scanner_named(implementation)
        self.implementation = "cython" if self.scanner.__name__.endswith("_c") else "python"
        self._units = _UNITS[offsets]
        self._grammar = self.scanner.Grammar(
            self.families,
            *markers,
            any_family,
            max_marker_length,
            source_id_pattern,
            locator_pattern,
        )

    def replace(self, **changes: Any) -> Parser:
        """A new Parser with the same options but `changes`."""
        return Parser(**{**self._options, **changes})

    def extract(self, text: str) -> list[Citation]:
        """The citations of `text` as the drop-in's dicts (offsets in code points)."""
        return self.scanner.extract(check_text(text), self._grammar)  # type: ignore[no-any-return]

    def finditer(self, text: str) -> Iterator[CitationSpan]:
        """The citations of `text` as `CitationSpan`s, offsets in the parser's unit."""
        return iter(self.scanner.records(check_text(text), self._grammar, CitationSpan, self._units))

    def strip(self, text: str) -> str:
        """`text` without its citations."""
        plain = check_text(text)
        clean: str = self.scanner.strip(plain, self._grammar)
        return text if clean is plain else clean

    def spans(self, text: str) -> list[tuple[int, int, bool]]:
        """Every marker the grammar consumed, citation or not: (start, end, is_citation),
        in code points."""
        return self.scanner.spans(check_text(text), self._grammar)  # type: ignore[no-any-return]

    def sub(self, text: str, repl: Callable[[CitationSpan], str], *, sanitize: bool = False) -> str:
        """`text` with each citation replaced by `repl(citation)` (code point offsets).

        `sanitize=True` also removes the markers that were consumed but are not citations
        and every stray marker character (U+E200-U+E206) left in the text; the prose
        between U+E203 and U+E204 stays, without those two characters.
        """
        plain = check_text(text)
        cuts: list[tuple[int, int, CitationSpan | None]] = [
            (citation.start, citation.end, citation)
            for citation in self.scanner.records(plain, self._grammar, CitationSpan, 0)
        ]
        if sanitize:
            invalid = [(s, e, None) for s, e, valid in self.spans(plain) if not valid]
            cuts = sorted(cuts + invalid, key=lambda cut: cut[0])
        pieces: list[str] = []
        kept_from = 0
        for start, end, citation in cuts:
            pieces.append(_scrub(plain[kept_from:start]) if sanitize else plain[kept_from:start])
            if citation is not None:
                replacement = repl(citation)
                if not isinstance(replacement, str):
                    raise TypeError(f"repl must return str, not {type(replacement).__name__}")
                pieces.append(replacement)
            kept_from = end
        pieces.append(_scrub(plain[kept_from:]) if sanitize else plain[kept_from:])
        return "".join(pieces)

    def __repr__(self) -> str:
        families = "any_family=True" if self.any_family else repr(self.families)
        return f"Parser({families}, implementation={self.implementation!r})"


_STRAY = re.compile("[\ue200-\ue206]")


def _scrub(text: str) -> str:
    return _STRAY.sub("", text)
