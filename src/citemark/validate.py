"""Check a model answer against its sources and the rules its prompt gave.

`resolve(text, sources)` ties each citation to its sources and, for a line locator, to
the lines it quotes.  `validate(text, sources, style=...)` returns `Diagnostic`s: what a
reader would see go wrong (a marker that leaks, a citation that points nowhere) and what
breaks the placement rules of the prompt (`citemark.prompt`).  `citemark lint` runs it
from the command line.

Offsets are code points into `text`, whatever the parser's `offsets`; the whole text is
checked, code included, whatever its `skip_code` (a citation in code is itself a finding).
`sources` maps ids to `Source`s (a `Registry`) or to source objects as `Source.from_json`
reads them; with `sources=None` the checks that need sources are skipped.  `style` is
the prompt's ("tool", "tool-lines", "context"), or None: locators allowed on line
sources, never required.

Diagnostic codes (stable; new ones may be added):

| code                          | severity | when                                                  |
|-------------------------------|----------|-------------------------------------------------------|
| `unknown-source`              | error    | a cited id is not among the sources                   |
| `locator-out-of-range`        | error    | a line locator goes past the source's last line       |
| `locator-reversed`            | error    | a range that ends before it starts (`L9-L3`)          |
| `locator-zero`                | error    | a line 0 (`L0`, `L0-L4`): lines count from 1          |
| `locator-missing`             | error    | style "tool-lines": a line source cited without lines |
| `locator-unexpected`          | warning  | a locator on a block or document source, or in a      |
|                               |          | style that cites ids only ("tool", "context")         |
| `locator-ambiguous`           | warning  | a locator in a marker that names several sources      |
| `invalid-marker`              | error    | a closed marker that is not a citation: a bad id, an  |
|                               |          | empty body, a family the parser does not accept       |
| `unterminated-marker`         | error    | a START that no STOP closes                           |
| `stray-stop`                  | error    | a STOP outside any marker                             |
| `stray-delimiter`             | error    | a DELIMITER outside any marker                        |
| `bare-reference`              | error    | a reference id in the text outside a marker           |
|                               |          | (`turn0search3`, the degraded `citeturn0search0`)     |
| `escaped-marker`              | error    | a marker character written as an escape (`\\ue200`)   |
| `citation-in-code`            | error    | a citation inside a code block or inline code         |
| `citation-on-fence-line`      | error    | a citation on the line of a code fence                |
| `citation-in-emphasis`        | error    | a citation inside bold or italics                     |
| `citation-before-punctuation` | warning  | punctuation right after a citation (`claim[c].`)      |
| `citation-alone`              | warning  | a line that holds citations and nothing else          |
| `citations-grouped-at-end`    | warning  | every citation sits in one run at the end of an       |
|                               |          | answer of several paragraphs                          |

A run of one stray character (STARTs in a row that no STOP closes, STOPs or DELIMITERs
in a row outside every marker) is one diagnostic over the run, its length in the message:
one fault to fix, not one line of output for each of its characters.

How the heuristics decide:

- bare references: outside code and markers, `turn<N><kind><M>` (optionally glued to a
  family name, further ids and a line locator, as when the marker characters are lost in
  a copy) and every id of `sources` that holds a digit, as a whole word.
- emphasis: `*`/`_` delimiter runs matched with CommonMark's flanking rules inside one
  paragraph (split at blank lines, headings, list items and code blocks); the length of
  the runs is not matched.
- punctuation: `. , ; : ! ? …` and their CJK forms, right after a citation or a run of
  citations (spaces and tabs between them allowed).
- alone: the line without its markers, list bullet and quote signs holds nothing but
  white space and punctuation.
- grouped at the end: at least two sources are cited, every citation is in the final run
  of citations (separated by white space and punctuation only, with nothing after it),
  and the text before that run has at least two blocks (paragraphs or list items).
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain, compress, repeat, starmap
from operator import add, attrgetter, itemgetter, not_
from typing import Any, NamedTuple

from ._core.grammar import (
    DEFAULT_FAMILY,
    FAMILY_WORD_RE,
    LINE_LOCATOR_RE,
    LOCATOR,
    MARKER_CHARS,
    SOURCE_ID_CHAR,
    TURN_ID_RE,
    check_text,
    heads_at,
)
from ._core.spans import inside, overlaps, without
from ._markdown.blocks import (
    LIST_OR_QUOTE,
    blocks,
    emphasis,
    is_punctuation,
)
from ._markdown.code import code_spans
from ._validate.diagnostic import Diagnostic, Severity, order
from ._validate.lines import (
    chars_in,
    cited_lines,
    code_rows,
    fence_cited,
    filler_end,
    kept_bounds,
    located_rows,
    punctuated,
)
from ._validate.strays import (
    REFUSED,
    STRAY_DELIMITER,
    STRAY_STOP,
    UNTERMINATED,
    next_outside,
    stray_findings,
)
from .parser import CitationSpan, Parser
from .prompt import STYLES, PromptStyle
from .sources import Line, Registry, Source

__all__ = ["CODES", "Diagnostic", "Resolved", "Target", "parse_locator", "resolve", "validate"]

CODES: dict[str, Severity] = {
    "unknown-source": "error",
    "locator-out-of-range": "error",
    "locator-reversed": "error",
    "locator-zero": "error",
    "locator-missing": "error",
    "locator-unexpected": "warning",
    "locator-ambiguous": "warning",
    "invalid-marker": "error",
    "unterminated-marker": "error",
    "stray-stop": "error",
    "stray-delimiter": "error",
    "bare-reference": "error",
    "escaped-marker": "error",
    "citation-in-code": "error",
    "citation-on-fence-line": "error",
    "citation-in-emphasis": "error",
    "citation-before-punctuation": "warning",
    "citation-alone": "warning",
    "citations-grouped-at-end": "warning",
}

_PUNCTUATION = ".,;:!?…。，、；：！？"
_TURN_ID = TURN_ID_RE.pattern


# The diagnostic row of a citation in code, but for its place (made once: answers with code
# samples hold many).
_IN_CODE = (
    "citation-in-code",
    CODES["citation-in-code"],
    "a citation inside code is shown as text, not as a citation",
)
# ... and of citations on a line of their own.
_ALONE = (
    "citation-alone",
    CODES["citation-alone"],
    "citations on a line of their own: put them after the text they support",
)
_FIRST = itemgetter(0)
_SECOND = itemgetter(1)
_SOURCE_IDS = attrgetter("source_ids")
_THIRD = itemgetter(2)
# The diagnostic rows of `stray_findings`'s kinds: code, severity, the message for one
# character, and the format of the message for a run of them (given its length).
_STRAY_ROWS: tuple[tuple[str, Severity, str, str], ...] = tuple(
    row
    for _, row in sorted(
        {
            UNTERMINATED: (
                "unterminated-marker",
                CODES["unterminated-marker"],
                "a START character that no STOP closes",
                "{} START characters in a row that no STOP closes",
            ),
            REFUSED: ("invalid-marker", CODES["invalid-marker"], "", ""),  # written by `refused`
            STRAY_STOP: (
                "stray-stop",
                CODES["stray-stop"],
                "a STOP character outside any marker",
                "{} STOP characters outside any marker",
            ),
            STRAY_DELIMITER: (
                "stray-delimiter",
                CODES["stray-delimiter"],
                "a DELIMITER character outside any marker",
                "{} DELIMITER characters outside any marker",
            ),
        }.items()
    )
)


@dataclass(frozen=True)
class Target:
    """One source of a citation: its id, the `Source` (None when unknown) and the lines
    the locator quotes (empty without a locator, or when it does not resolve)."""

    id: str
    source: Source | None
    lines: tuple[Line, ...] = ()


@dataclass(frozen=True)
class Resolved:
    """A citation with its targets, one per distinct id, in the marker's order."""

    citation: CitationSpan
    targets: tuple[Target, ...]

    @property
    def quote(self) -> str | None:
        """The quoted lines of every target, one per line; None when nothing is quoted (no
        locator, an unknown source, lines out of range)."""
        lines = [line.text for target in self.targets for line in target.lines]
        return "\n".join(lines) if lines else None


def parse_locator(locator: str | None) -> tuple[int, int] | None:
    """`"L8-L13"` -> (8, 13), `"L4"` -> (4, 4); None for anything else (no check)."""
    if locator is None:
        return None
    if LINE_LOCATOR_RE.fullmatch(locator) is None:
        return None
    first, _, last = locator[1:].partition("-L")
    return int(first), int(last or first)


def resolve(
    text: str, sources: Mapping[str, Any], *, parser: Parser | None = None
) -> list[Resolved]:
    """Each citation of `text` (code points) with its sources and quoted lines."""
    plain = check_text(text)
    scanner = _full_parser(parser)
    if sources is None:
        raise TypeError("sources must be a mapping of id -> Source or source object, not None")
    known = _as_sources(sources)
    assert known is not None  # for mypy: only None gives None
    resolved = []
    for citation in scanner.finditer(plain):
        lines = parse_locator(citation.locator)
        targets = []
        for source_id in dict.fromkeys(citation.source_ids):
            source = known.get(source_id)
            quoted: tuple[Line, ...] = ()
            if source is not None and lines is not None and source.unit == "line":
                first, last = lines
                if 1 <= first <= last <= len(source.lines):
                    quoted = source.quote(first, last)
            targets.append(Target(source_id, source, quoted))
        resolved.append(Resolved(citation, tuple(targets)))
    return resolved


def validate(
    text: str,
    sources: Mapping[str, Any] | None,
    *,
    parser: Parser | None = None,
    style: PromptStyle | None = None,
) -> list[Diagnostic]:
    """The diagnostics of `text`, sorted by place (see the module docstring)."""
    if style is not None and style not in STYLES:
        raise ValueError(f"style must be one of {', '.join(STYLES)} or None, not {style!r}")
    plain = check_text(text)
    scanner = _full_parser(parser)
    return _Check(plain, scanner, _as_sources(sources), style).run()


def _full_parser(parser: Parser | None) -> Parser:
    """The parser in code points, looking into code too."""
    if parser is not None and not isinstance(parser, Parser):
        raise TypeError(f"parser must be a citemark.Parser or None, not {type(parser).__name__}")
    parser = _default_parser() if parser is None else parser
    if parser.skip_code or parser.offsets != "codepoints":
        parser = parser.replace(skip_code=False, offsets="codepoints")
    return parser


@lru_cache(maxsize=1)
def _default_parser() -> Parser:
    """`Parser()`, made once (validate only reads it; a text of a few markers costs less
    than making it)."""
    return Parser()


def _as_sources(sources: Mapping[str, Any] | None) -> Mapping[str, Source] | None:
    if sources is None or isinstance(sources, Registry):
        return sources
    if not isinstance(sources, Mapping):
        raise TypeError(f"sources must be a mapping or None, not {type(sources).__name__}")
    return {
        key: value if isinstance(value, Source) else Source.from_json(key, value)
        for key, value in sources.items()
    }


class _Check:
    def __init__(
        self, text: str, parser: Parser, sources: Mapping[str, Source] | None, style: str | None
    ) -> None:
        self.text = text
        self.parser = parser
        self.sources = sources
        self.style = style
        self.found: list[Diagnostic] = []
        # code spans (starts, ends), once references need them
        self.code: tuple[array[int], array[int]] | None = None
        # (start, end, is_citation) of every consumed marker, and the citations among them
        self.consumed, self.citations = parser._spans_and_citations(text)
        # The lines of the citations, once found (a text without one needs none): those
        # holding a backtick or tilde; of those holding no letter outside the markers, the
        # ones holding only filler there (in ASCII), and the others.
        self.starts: list[int] = []  # of the citations, once they are checked
        self.ends: list[int] = []
        self.fenced: list[tuple[int, int, int, int]] = []
        self.bare: list[tuple[int, int, int, int]] = []
        self.unsure: list[tuple[int, int, int, int, int]] = []
        # (ids, locator) -> the (code, severity, message) of each finding they give
        self.located: dict[tuple[tuple[str, ...], str | None], list[tuple[str, Severity, str]]]
        self.located = {}

    def add(self, code: str, start: int, end: int, message: str) -> None:
        self.found.append(Diagnostic(code, CODES[code], message, start, end))

    def run(self) -> list[Diagnostic]:
        skipped = self.markers()
        self.locate_all()
        code: tuple[array[int], array[int]] | None = None
        marks: str | None = None  # which of _MARKS the text holds, once looked for
        if self.citations:
            self.starts = list(map(attrgetter("start"), self.citations))
            self.ends = list(map(attrgetter("end"), self.citations))
            lines = cited_lines(self.text, self.starts, self.consumed, _FILLER)
            self.fenced, self.bare, self.unsure = lines
            fence_rows = self.fence_lines()
            code = code_spans(self.masked_for_code(fence_rows))
            marks = chars_in(self.text, _MARKS)
            self.placement(code, fence_rows, marks)
        # Without citations, code is looked for only when an id or an escape outside every
        # marker needs it.
        self.references(skipped, code, marks)
        if len(self.found) == self.strays_only:
            # Only the stray rows, made in order of place: nothing to sort.
            return self.found
        # Sorted in place (by place, then code): the list is validate's own.
        return order(self.found)

    # -- markers that are not citations -------------------------------------------------

    def markers(self) -> tuple[array[int], array[int]]:
        """invalid-marker, unterminated-marker, stray-stop, stray-delimiter; returns the
        spans of the markers the grammar did not consume (foreign families, unterminated
        STARTs with the word glued to them) with the consumed markers, as the skipped spans
        (starts, ends) the id checks then skip."""
        text, parser = self.text, self.parser
        # The consumed markers that are not citations, picked in C (most are citations).
        for start, end, _ in compress(self.consumed, map(not_, map(_THIRD, self.consumed))):
            inner = text.rfind(parser.start, start + 1, end)
            if inner > start:
                # A START left open: the grammar read on to a later marker's STOP.
                self.add(
                    "unterminated-marker",
                    start,
                    start + 1,
                    "a START that no STOP closes before the next marker (the text up to "
                    "that marker's STOP is read as one broken marker)",
                )
                if any(valid for _, _, valid in parser.spans(text[inner:end])):
                    continue
                start = inner
            self.add(
                "invalid-marker",
                start,
                end,
                f"not a citation (empty, or an id the id rule refuses): {_show(text[start:end])}",
            )
        # The stray marker characters between the markers, each run made a diagnostic by
        # `stray_findings`, and the skipped spans the id checks skip: every consumed marker and
        # every span of a marker the grammar did not consume.  Sorted, they are disjoint (touching
        # at most): the foreign spans lie between the consumed markers (an open START's glued
        # word stops at the next START), and one ends where the next starts at the latest.
        skipped = array("q"), array("q")
        found = self.found
        before = len(found)
        refused = stray_findings(
            text,
            self.consumed,
            parser.start,
            parser.stop,
            parser.delimiter,
            _STRAY_ROWS,
            found,
            *skipped,
        )
        for index in refused:
            row = found[index]
            message = self.refused(row.start, row.end)
            found[index] = Diagnostic(row.code, row.severity, message, row.start, row.end)
        # How many findings there are when they are the stray rows alone (they come in
        # order of place: `run` sorts nothing if no other is added); -1 when there are others.
        self.strays_only = -1 if before else len(found)
        return skipped

    def refused(self, start: int, end: int) -> str:
        body = self.text[start + 1 : end - 1]
        parser = self.parser
        if heads_at(body, 0, parser.families, parser.delimiter, parser.any_family):
            return f"a marker longer than max_marker_length: {_show(self.text[start:end])}"
        word = FAMILY_WORD_RE.match(body)
        name = word.group() if word else ""
        return f"a marker whose family is not accepted ({name or 'none'!r})"

    # -- sources and locators ------------------------------------------------------------

    def locate_all(self) -> None:
        """The findings of each citation's ids and locator.  What they give depends on
        nothing else: worked out once for each distinct pair (an answer cites the same few
        sources again and again), as diagnostic rows without their place, which
        `located_rows` places at each citation."""
        located_rows(self.citations, self.located, self.rows_of, self.found)

    def rows_of(
        self, source_ids: tuple[str, ...], locator: str | None
    ) -> list[tuple[str, Severity, str]]:
        """The diagnostic rows, without their place, of a citation of these ids and locator."""
        return [
            (code, CODES[code], message) for code, message in self.locating(source_ids, locator)
        ]

    def locating(self, source_ids: tuple[str, ...], locator: str | None) -> list[tuple[str, str]]:
        """The (code, message) findings of a citation of these ids and locator."""
        found = []
        ids = list(dict.fromkeys(source_ids))
        known: list[Source] = []
        for source_id in ids:
            source = None if self.sources is None else self.sources.get(source_id)
            if self.sources is not None and source is None:
                found.append(("unknown-source", f"{source_id!r} is not a known source"))
            elif source is not None:
                known.append(source)
        if locator is None:
            needs_lines = self.sources is None or any(s.unit == "line" for s in known)
            if self.style == "tool-lines" and needs_lines:
                found.append(("locator-missing", "this style cites line ranges (L8-L13)"))
            return found
        if len(ids) > 1:
            found.append(("locator-ambiguous", f"{locator} follows {len(ids)} sources: which one?"))
        if self.style in ("tool", "context"):
            found.append(("locator-unexpected", f"this style cites ids only, not {locator}"))
        else:
            for source in known:
                if source.unit != "line":
                    found.append(
                        (
                            "locator-unexpected",
                            f"{source.id!r} is a {source.unit}: it is cited by id alone",
                        )
                    )
        lines = parse_locator(locator)
        if lines is None:
            return found
        first, last = lines
        if first == 0 or last == 0:
            found.append(("locator-zero", f"{locator}: lines are numbered from L1"))
        elif last < first:
            found.append(("locator-reversed", f"{locator} ends before it starts"))
        else:
            for source in known:
                if source.unit == "line" and last > len(source.lines):
                    shown = f"L1-L{len(source.lines)}" if source.lines else "no lines"
                    found.append(
                        (
                            "locator-out-of-range",
                            f"{locator} is past the end of {source.id!r} ({shown})",
                        )
                    )
        return found

    # -- placement -------------------------------------------------------------------------

    def fence_lines(self) -> list[tuple[int, int, bool]]:
        """The citations on the line of a code fence (reported here), as `fence_cited` finds
        them among the lines that hold a backtick or a tilde: `(first, stop, blank)` for each
        such line, its citations first..stop-1, blank when they must be blanked for the
        code scan (see `masked_for_code`)."""
        rows = fence_cited(self.text, self.fenced, self.starts, self.ends, self.consumed)
        for first, stop, _ in rows:
            for index in range(first, stop):
                self.add(
                    "citation-on-fence-line",
                    self.starts[index],
                    self.ends[index],
                    "a citation on the line of a code fence (it breaks the fence)",
                )
        return rows

    def masked_for_code(self, fence_rows: list[tuple[int, int, bool]]) -> str:
        """The text with the citations of fence lines blanked, so the fences are read as
        the model meant them and the rest of the answer is not taken for code.  Only the
        lines `fence_cited` says may read otherwise blanked are copied (a fence line whose run
        is followed by text other than its citations reads the same: a copy of a long text
        is a pass over it into fresh pages, about 64 page faults a call on 100 KB)."""
        blanked = [(first, stop) for first, stop, blank in fence_rows if blank]
        if not blanked:
            return self.text
        text, starts, ends = self.text, self.starts, self.ends
        pieces: list[str] = []
        at = 0
        for first, stop in blanked:
            for index in range(first, stop):
                pieces += (text[at : starts[index]], " " * (ends[index] - starts[index]))
                at = ends[index]
        pieces.append(text[at:])
        return "".join(pieces)

    def placement(
        self,
        code: tuple[array[int], array[int]],
        fence_rows: list[tuple[int, int, bool]],
        marks: str,
    ) -> None:
        """The placement checks of the citations; `marks`: which of _MARKS the text holds."""
        citations, starts, ends = self.citations, self.starts, self.ends
        # Outside code and fence lines; those in code reported by `code_rows`.
        kept = code_rows(starts, ends, *code, fence_rows, _IN_CODE, self.found)
        outside = list(compress(citations, kept))
        # Emphasis needs a `*` or `_` run: without one (or without a citation to check)
        # the CommonMark pass would find nothing.
        wanted = outside and ("*" in marks or "_" in marks)
        emphasized = (
            emphasis(self.text, list(zip(*code, strict=True)), self.consumed) if wanted else []
        )
        for citation in outside if emphasized else ():
            if inside(emphasized, citation.start, citation.end):
                self.add(
                    "citation-in-emphasis",
                    citation.start,
                    citation.end,
                    "a citation inside bold or italics: put it after the closing delimiter",
                )
        self.punctuation(list(compress(starts, kept)), list(compress(ends, kept)))
        self.alone(kept)
        self.grouped(outside)

    def punctuation(self, starts: list[int], ends: list[int]) -> None:
        """citation-before-punctuation: each run of these citations (blanks between them)
        that punctuation follows (`punctuated`)."""
        text = self.text
        for first, last, at in punctuated(text, starts, ends, _PUNCTUATION):
            self.add(
                "citation-before-punctuation",
                starts[first],
                ends[last],
                f"put the citation after the {text[at]!r}, not before it",
            )

    def alone(self, kept: list[bool]) -> None:
        """citation-alone for the citations kept (those outside code and fence lines): only
        on the lines with no letter outside the markers (a letter is no filler, and no list
        bullet or quote sign can hide it).  A line with nothing but filler there is alone
        whatever its bullet; the others are read here.  The first and last citation kept on
        each line are found by `kept_bounds`."""
        text, consumed, starts, ends = self.text, self.consumed, self.starts, self.ends
        self.found += starmap(
            Diagnostic,
            map(
                add,
                repeat(_ALONE),
                [(starts[first], ends[last]) for _, first, last in kept_bounds(self.bare, kept)],
            ),
        )
        unsure = self.unsure
        for row, first, last in kept_bounds(unsure, kept):
            line_start, line_end, _, _, doubt = unsure[row]
            # The first character outside the markers that is neither a letter nor ASCII
            # filler: a text character is no filler either (nor can a bullet hide it).
            if _text_char(text[doubt]):
                continue
            # The usual line has text at an end of what stands before its first citation: a
            # character that is neither white space, punctuation nor a digit is no filler,
            # and no list bullet or quote sign can hide it, so the line is not alone.
            before = text[line_start : starts[first]].strip()
            if before and (_text_char(before[0]) or _text_char(before[-1])):
                at = bisect_left(consumed, (line_start, -1, False))
                if consumed[at][0] == starts[first]:  # no marker before the first citation
                    continue
            rest = without(text, line_start, line_end, consumed)
            rest = rest[LIST_OR_QUOTE.match(rest).end() :]  # type: ignore[union-attr]
            if _filler(rest):
                self.found.append(Diagnostic(*_ALONE, starts[first], ends[last]))

    def grouped(self, citations: list[CitationSpan]) -> None:
        if not citations:
            return
        text = self.text
        if not _filler_in(text, citations[-1].end, len(text)):
            return
        # At least two sources (looked for before the text between the citations, which may
        # be long), gathered in C (a Python step per citation cost as much as the rest).
        if len(set(chain.from_iterable(map(_SOURCE_IDS, citations)))) < 2:
            return
        run = len(citations) - 1
        while run > 0 and _filler_in(text, citations[run - 1].end, citations[run].start):
            run -= 1
        if run != 0:
            return
        if blocks(text[: citations[0].start]) >= 2:
            self.add(
                "citations-grouped-at-end",
                citations[0].start,
                citations[-1].end,
                "every citation is at the end: cite each statement where it is made",
            )

    # -- ids and escapes written as text ---------------------------------------------------

    def references(
        self,
        skipped: tuple[array[int], array[int]],
        code: tuple[array[int], array[int]] | None,
        marks: str | None = None,
    ) -> None:
        """bare-reference and escaped-marker; `marks`: which of _MARKS the text holds, if
        known (a backslash is looked for otherwise)."""
        parser = self.parser
        words = _words_for(
            parser.families,
            parser.start + parser.delimiter + parser.stop,
            _extra_ids(tuple(self.sources or ())),
        )
        is_id = words.is_id
        if words.whole_text:
            found = list(words.pattern.finditer(self.text))
        else:
            found = self.turn_ids(words, skipped)
        for match in found:
            if self.skipped_over(skipped, code, match.start(), match.end()):
                continue
            written = match.group()
            message = (
                f"the reference id {written!r} is written outside a citation marker"
                if is_id(written)
                else f"{written!r} looks like a citation that lost its marker characters"
            )
            self.add("bare-reference", match.start(), match.end(), message)
        escape = words.escape
        text = self.text
        # Every escape starts with a backslash: found with str.find, the pattern matched
        # only there (a regex search tries every character, tens of times slower).
        at = text.find("\\") if marks is None or "\\" in marks else -1
        while at >= 0:
            escaped = escape(text, at)
            if escaped is not None and not self.skipped_over(skipped, code, at, escaped.end()):
                self.add(
                    "escaped-marker",
                    at,
                    escaped.end(),
                    f"{escaped.group()} is an escape, not the marker character it names",
                )
            at = text.find("\\", at + 1)

    def turn_ids(
        self, words: _Words, skipped: tuple[array[int], array[int]]
    ) -> list[re.Match[str]]:
        """`words.pattern.finditer(text)` for a pattern whose ids all start with "turn": every
        match starts at a "turn" or at a family glued to one, so the pattern is matched at
        those places only, found with str.find (its lookbehind makes a regex search try
        every character, tens of times slower).  Matches do not overlap, as finditer's.

        The places are tried leftmost first as long as no family holds "turn" (the caller
        checks): a family glued to a later "turn" then ends before an earlier one.

        Only the matches outside `skipped` are returned (the markers, whose ids are no
        finding): a "turn" inside one is skipped with the rest of it.  A match from inside
        a skipped span would end inside it too, so skipping it changes no later match: every skipped
        span ends with a marker character or before white space or one (a marker's STOP, a run of
        STARTs, an open START's glued word), none of which a match can hold."""
        text, pattern, families, glued = self.text, words.pattern, words.families, words.glued
        found: list[re.Match[str]] = []
        done = 0  # where the last match ends: finditer goes on from there
        # The "turn"s inside skipped spans skipped with the rest of the skipped span (thousands of
        # open STARTs' glued words would cost a step each otherwise); skipped span: the first that
        # does not end at or before `at`.
        at, skip = next_outside(text, "turn", 0, *skipped, 0)
        while at >= 0:
            # The places a match through this "turn" can start, leftmost first.
            for size in glued:
                start = at - size
                if start >= max(done, 0) and text[start:at] in families:
                    match = pattern.match(text, start)
                    if match is not None:
                        found.append(match)
                        done = match.end()
                        break
            else:
                if at >= done:
                    match = pattern.match(text, at)
                    if match is not None:
                        found.append(match)
                        done = match.end()
            at, skip = next_outside(text, "turn", max(at + 1, done), *skipped, skip)
        return found

    def skipped_over(
        self,
        skipped: tuple[array[int], array[int]],
        code: tuple[array[int], array[int]] | None,
        start: int,
        end: int,
    ) -> bool:
        """Whether [start, end) overlaps a marker or code (found now if not yet)."""
        if overlaps(skipped, start, end):
            return True
        if self.code is None:
            self.code = code if code is not None else code_spans(self.text)
        return overlaps(self.code, start, end)


# -- helpers ----------------------------------------------------------------------------------


def _show(raw: str) -> str:
    return repr(raw if len(raw) <= 60 else raw[:57] + "...")


def _text_char(char: str) -> bool:
    """Neither white space, punctuation, nor a digit (what a list bullet may hold)."""
    return not (char.isspace() or char.isdecimal() or is_punctuation(char))


def _filler(text: str) -> bool:
    """Only white space and punctuation."""
    return all(char.isspace() or is_punctuation(char) for char in set(text))


# The ASCII characters that are filler on their own (`filler_end` skips them; the rest is
# read by `_filler`).
_FILLER = "".join(char for char in map(chr, range(128)) if _filler(char))


# The characters whose presence in the text decides whether a check runs at all, looked for
# in one pass (`chars_in`: three searches cost a tenth of validate on 100 KB of backticks):
# emphasis delimiters, and the backslash of an escape.
_MARKS = "*_\\"


def _filler_in(text: str, start: int, end: int) -> bool:
    """`_filler(text[start:end])`, the ASCII filler skipped by `filler_end` (the text between
    two citations may be thousands of backticks) and only what follows the first other
    character read here: none if that one is ASCII (it is no filler)."""
    at = filler_end(text, start, end, _FILLER)
    return at == end or (text[at] >= "\x80" and _filler(text[at:end]))


_HAS_DIGIT = re.compile(r"\d").search
_HAS_LETTER = re.compile("[A-Za-z]").search
_IS_TURN_ID = re.compile(_TURN_ID).fullmatch


class _Words(NamedTuple):
    """What the checks of ids and escapes written as text look for, for one parser and one
    set of source ids."""

    # bare ids: glued to a family name, or as a whole word
    pattern: re.Pattern[str]
    # whether a match is one id written alone
    is_id: Callable[[str], re.Match[str] | None]
    # the families an id may be glued to, and their lengths (longest first)
    families: frozenset[str]
    glued: tuple[int, ...]
    # whether `pattern` is matched over the whole text, not only at each "turn" (a family
    # holds "turn", or a source id does not start with it)
    whole_text: bool
    # the match of an escape (`\ue200`) of a marker character, any case
    escape: Callable[[str, int], re.Match[str] | None]


@lru_cache(maxsize=64)
def _extra_ids(source_ids: tuple[str, ...]) -> tuple[str, ...]:
    """The source ids other than turn ids that a reader could take for one (a letter and a
    digit), longest first.  Apart from `_words_for`: sources of turn ids alone, different
    on every call (a log of answers), then share its patterns."""
    return tuple(
        sorted(
            (
                source_id
                for source_id in source_ids
                if _HAS_DIGIT(source_id) and _HAS_LETTER(source_id) and not _IS_TURN_ID(source_id)
            ),
            key=len,
            reverse=True,
        )
    )


@lru_cache(maxsize=64)
def _words_for(families: tuple[str, ...], markers: str, extra: tuple[str, ...]) -> _Words:
    """`_Words` for a parser's families and marker characters and these extra source ids
    (`_extra_ids`): made once for each (validate is called again and again with the same
    few; made on every call, they were a third of a call on a short answer)."""
    names = frozenset({DEFAULT_FAMILY, "filecite", *families})
    family = "|".join(re.escape(f) for f in sorted(names, key=len, reverse=True) if f)
    ids = _TURN_ID
    if extra:
        ids += "|(?:" + "|".join(map(re.escape, extra)) + f")(?!{SOURCE_ID_CHAR})"
    glued = rf"(?:(?:{family})|(?<!{SOURCE_ID_CHAR}))"
    escapes = "|".join(f"{ord(c):04x}" for c in sorted({*MARKER_CHARS, *markers}))
    return _Words(
        pattern=re.compile(rf"{glued}(?:{ids})(?:{ids}|{LOCATOR})*"),
        is_id=re.compile(f"(?:{ids})").fullmatch,
        families=names,
        glued=tuple(sorted({len(name) for name in names if name}, reverse=True)),
        whole_text=bool(extra) or any("turn" in name for name in names),
        escape=re.compile(rf"\\u(?:{escapes})", re.IGNORECASE).match,
    )
