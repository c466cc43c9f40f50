"""Citable material: sources with stable ids, and the text the model reads them in.

A model can only cite what it was shown with an id.  This module holds the material
(`Source`), hands out the ids (`Registry`) and writes the material the way the model
expects to read it (`format_tool_output`, `format_context`).

Ids
    A tool call is one *turn*: `turnN` counts tool invocations (0, 1, 2, ...), not results.
    Inside one invocation each result gets a kind and a number counted per kind from 0:
    `turn0file0`, `turn0file1`, `turn1search0`.  Injected context is not a tool call: its
    blocks are `block1`, `block2`, ... counted from 1 across the whole registry.  Ids depend
    only on the order of the calls and the results, never on time or hashing, so the same
    inputs give the same ids run after run.

Citable units (`Source.unit`)
    "line": the text is shown as numbered lines and a citation may carry a line locator
    (`L3`, `L8-L13`).  "block": the whole source is one unit, shown under a `[BlockK]`
    label (K: its position in the tool output, from 1).  "document": the whole source,
    shown as it is.  Block and document sources are cited by id alone.

Line numbering (what `L<n>` means)
    The text is split at line breaks (`\\n`, `\\r\\n`, `\\r`); a final line break does not
    start another line, and an empty text has no lines.  Every line is numbered, blank ones
    included (a blank line is shown as its bare label), so the numbers of a text without
    long lines are the line numbers an editor shows.  A line longer than `wrap` code points
    (`DEFAULT_WRAP`; None: never) is cut into pieces that show at most `wrap` code points,
    each cut made after the last white space that fits (or at exactly `wrap` code points
    when none does), and every piece gets its own number: `L<n>` is always the n-th line
    the model was shown.  Trailing white space is not shown.  `Line.start`/`Line.end` give
    each numbered line's place in `Source.text` (code points), for highlighting.

Neutralising
    Source text comes from documents and web pages, not from us: a page holding the
    marker characters could plant a citation in the model's input.  Every character from
    U+E200 to U+E206 (and the markers of a custom `Parser`) is shown as U+FFFD, the other
    vertical separators (U+000B, U+000C, U+001C-U+001E, U+0085, U+2028, U+2029) as a space,
    and in injected context the `<` of a `<BLOCK` or `</BLOCK` tag inside a block as U+2039
    `‹`, so that no block can close itself early.  Each replacement is one character for one
    character, so line offsets stay those of `Source.text`.  Titles, URLs and metadata are
    neutralised the same way and put on one line.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import cached_property
from typing import Any, Literal

from ._core.grammar import (
    DEFAULT_FAMILY,
    LINE_BREAK_RE,
    MARKER_RANGE,
    SOURCE_ID_RE,
    TURN_KIND,
    turn_id,
)
from .parser import Parser

__all__ = [
    "DEFAULT_WRAP",
    "PLACEHOLDER",
    "SOURCE_UNITS",
    "Line",
    "Registry",
    "Source",
    "SourceUnit",
    "format_context",
    "format_source",
    "format_tool_output",
    "neutralise",
    "split_lines",
]

SourceUnit = Literal["document", "block", "line"]
SOURCE_UNITS: tuple[SourceUnit, ...] = ("document", "block", "line")
DEFAULT_WRAP = 200
PLACEHOLDER = "\ufffd"

_KIND = re.compile(TURN_KIND)
_SEPARATORS = re.compile("[\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
_BLOCK_TAG = re.compile(r"<(?=/?BLOCK\b)", re.IGNORECASE)
_FIELDS = ("text", "title", "url", "timestamp", "metadata", "unit", "kind", "wrap", "id")


@dataclass(frozen=True)
class Line:
    """One numbered line as the model sees it: `[L<number>] <text>`.

    `text` is neutralised and without trailing white space; `start`/`end` are its place
    in the source's original text (code points).
    """

    number: int
    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Source:
    """A citable unit: a stable id, its text, and what a reader needs to check it.

    `unit` is how it is cited (see the module docstring); `wrap` is the longest line, in
    code points, before a line is cut (line unit only).  `timestamp` may be a `datetime`
    or `date` (kept as its ISO form) or a string; `metadata` holds further `key: value`
    lines shown to the model (insertion order).
    """

    id: str
    text: str
    title: str | None = None
    url: str | None = None
    timestamp: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict, hash=False)
    unit: SourceUnit = "line"
    wrap: int | None = DEFAULT_WRAP

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not SOURCE_ID_RE.fullmatch(self.id):
            raise ValueError(f"a source id is letters, digits, '_' and '-', not {self.id!r}")
        if not isinstance(self.text, str):
            raise TypeError(f"{self.id}: text must be str, not {type(self.text).__name__}")
        if self.unit not in SOURCE_UNITS:
            raise ValueError(
                f"{self.id}: unit must be one of {', '.join(SOURCE_UNITS)}: {self.unit!r}"
            )
        if self.wrap is not None and (type(self.wrap) is not int or self.wrap < 1):
            raise ValueError(f"{self.id}: wrap must be a positive int or None, not {self.wrap!r}")
        if isinstance(self.timestamp, (datetime, date)):
            object.__setattr__(self, "timestamp", self.timestamp.isoformat())
        for name in ("title", "url", "timestamp"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{self.id}: {name} must be str or None")
        if not isinstance(self.metadata, Mapping):
            raise TypeError(f"{self.id}: metadata must be a mapping")
        object.__setattr__(self, "metadata", {str(k): str(v) for k, v in self.metadata.items()})

    @cached_property
    def lines(self) -> tuple[Line, ...]:
        """The numbered lines of the text (line unit; see the module docstring)."""
        return split_lines(self.text, self.wrap)

    def quote(self, first: int, last: int | None = None) -> tuple[Line, ...]:
        """Lines `first` to `last` (1-based, inclusive; `last` defaults to `first`).

        Raises IndexError for a range that is empty, reversed or out of range.
        """
        last = first if last is None else last
        if not 1 <= first <= last <= len(self.lines):
            raise IndexError(f"{self.id} has lines L1-L{len(self.lines)}, not L{first}-L{last}")
        return self.lines[first - 1 : last]

    def to_json(self) -> dict[str, Any]:
        """A JSON object for this source (without its id), readable by `from_json`."""
        data: dict[str, Any] = {"text": self.text, "unit": self.unit}
        for name in ("title", "url", "timestamp"):
            if getattr(self, name) is not None:
                data[name] = getattr(self, name)
        if self.metadata:
            data["metadata"] = dict(self.metadata)
        if self.wrap != DEFAULT_WRAP:
            data["wrap"] = self.wrap
        return data

    @classmethod
    def from_json(cls, source_id: str, data: str | Mapping[str, Any]) -> Source:
        """A source from a JSON value: a string (its text) or an object with `text` and
        optional `title`, `url`, `timestamp`, `metadata`, `unit`, `wrap`."""
        if isinstance(data, str):
            return cls(source_id, data)
        if not isinstance(data, Mapping):
            raise TypeError(f"{source_id}: a source is a string or an object")
        unknown = sorted(set(data) - set(_FIELDS))
        if unknown:
            raise ValueError(f"{source_id}: unknown field(s) {', '.join(unknown)}")
        if "text" not in data:
            raise ValueError(f"{source_id}: a source needs a 'text'")
        return cls(
            source_id,
            data["text"],
            title=data.get("title"),
            url=data.get("url"),
            timestamp=data.get("timestamp"),
            metadata=data.get("metadata") or {},
            unit=data.get("unit", "line"),
            wrap=data.get("wrap", DEFAULT_WRAP),
        )


def neutralise(text: str, parser: Parser | None = None) -> str:
    """`text` with every marker character shown as U+FFFD and the vertical separators
    other than line breaks as spaces; one character for one, so offsets are kept."""
    chars = MARKER_RANGE
    if parser is not None:
        chars += re.escape(parser.start + parser.delimiter + parser.stop)
    text = re.sub(f"[{chars}]", PLACEHOLDER, text)
    return _SEPARATORS.sub(" ", text)


def split_lines(text: str, wrap: int | None = DEFAULT_WRAP) -> tuple[Line, ...]:
    """The numbered lines of `text` (the rule is in the module docstring).

    `wrap` is a positive int or None (TypeError for another type, ValueError below 1).
    """
    if wrap is not None:
        if type(wrap) is not int:
            raise TypeError(f"wrap must be a positive int or None, not {type(wrap).__name__}")
        if wrap < 1:
            raise ValueError(f"wrap must be a positive int or None, not {wrap}")
    shown = neutralise(text)
    if not shown:
        return ()
    lines: list[Line] = []
    start = 0
    ends = [(m.start(), m.end()) for m in LINE_BREAK_RE.finditer(shown)]
    if not ends or ends[-1][1] != len(shown):
        ends.append((len(shown), len(shown)))
    for end, after in ends:
        for piece_start, piece_end in _pieces(shown, start, end, wrap):
            piece = shown[piece_start:piece_end].rstrip()
            lines.append(Line(len(lines) + 1, piece, piece_start, piece_start + len(piece)))
        start = after
    return tuple(lines)


def _pieces(text: str, start: int, end: int, wrap: int | None) -> Iterator[tuple[int, int]]:
    """text[start:end] cut into pieces of at most `wrap` code points, after white space."""
    shown_end = end  # the line without its trailing white space, found once (not per piece)
    while shown_end > start and text[shown_end - 1].isspace():
        shown_end -= 1
    while wrap is not None and shown_end - start > wrap:
        # white space at the cut is not shown, so it may be the (wrap + 1)-th character
        window = text[start : start + wrap + 1]
        cut = max(window.rfind(" "), window.rfind("\t"))
        cut = start + cut + 1 if cut > 0 and window[:cut].strip() else start + wrap
        yield start, cut
        start = cut
    yield start, end


def _one_line(value: str, parser: Parser | None) -> str:
    return " ".join(neutralise(value, parser).split())


class Registry(Mapping[str, Source]):
    """The sources of one conversation, by id, with ids handed out as the guide does.

    `add_tool_call` registers the results of one tool invocation (one turn);
    `add_context` registers injected blocks; `add` takes a `Source` with an id of your
    own.  A registry is a read-only mapping from id to `Source` (`registry["turn0file1"]`,
    `in`, `get`, iteration in the order of registration).
    """

    def __init__(self, sources: Iterable[Source] = (), *, wrap: int | None = DEFAULT_WRAP) -> None:
        self._sources: dict[str, Source] = {}
        self._turns = 0
        self._counters: dict[str, int] = {}
        self.wrap = wrap
        for source in sources:
            self.add(source)

    def __getitem__(self, source_id: str) -> Source:
        return self._sources[source_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._sources)

    def __len__(self) -> int:
        return len(self._sources)

    def __repr__(self) -> str:
        return f"Registry({len(self)} sources, {self._turns} tool calls)"

    @property
    def turns(self) -> int:
        """How many tool calls were registered (the next one is `turn<turns>`)."""
        return self._turns

    def add(self, source: Source) -> Source:
        """Register a source under its own id (ValueError when the id is taken)."""
        if not isinstance(source, Source):
            raise TypeError(f"source must be a Source, not {type(source).__name__}")
        if source.id in self._sources:
            raise ValueError(f"the id {source.id!r} is already registered")
        self._sources[source.id] = source
        return source

    def add_tool_call(
        self,
        results: Iterable[str | Mapping[str, Any]],
        *,
        kind: str = "file",
        unit: SourceUnit = "line",
    ) -> tuple[Source, ...]:
        """Register the results of one tool invocation: ids `turn<N><kind><M>`.

        N is this invocation's number (one per call, however many results); M counts the
        results of each kind from 0.  A result is its text, or an object with `text` and
        optional `title`, `url`, `timestamp`, `metadata`, `unit` and `kind` (overriding
        the call's).
        """
        turn = self._turns
        counts: dict[str, int] = {}
        drafts = [_draft(result, kind, unit, self.wrap) for result in results]
        made = []
        for draft in drafts:
            result_kind = draft.pop("kind")
            number = counts.get(result_kind, 0)
            counts[result_kind] = number + 1
            made.append(Source(turn_id(turn, result_kind, number), **draft))
        for source in made:
            if source.id in self._sources:
                raise ValueError(f"the id {source.id!r} is already registered")
        self._turns += 1
        for source in made:
            self._sources[source.id] = source
        return tuple(made)

    def add_context(
        self,
        items: Iterable[str | Mapping[str, Any]],
        *,
        kind: str = "block",
        unit: SourceUnit = "block",
    ) -> tuple[Source, ...]:
        """Register injected context (no tool call, no turn): ids `<kind><n>`, n counted
        from 1 across every `add_context` call of this registry (`block1`, `block2`)."""
        made = []
        counters = dict(self._counters)
        for item in items:
            draft = _draft(item, kind, unit, self.wrap)
            item_kind = draft.pop("kind")
            counters[item_kind] = counters.get(item_kind, 0) + 1
            made.append(Source(f"{item_kind}{counters[item_kind]}", **draft))
        for source in made:
            if source.id in self._sources:
                raise ValueError(f"the id {source.id!r} is already registered")
        self._counters = counters
        for source in made:
            self._sources[source.id] = source
        return tuple(made)

    def links(self) -> dict[str, dict[str, str]]:
        """id -> {"url", "title"} (those present): the `sources` argument of `render`."""
        return {
            source_id: {
                name: value
                for name, value in (("url", source.url), ("title", source.title))
                if value is not None
            }
            for source_id, source in self._sources.items()
        }

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """id -> source object (plain dicts, ready for `json.dump`)."""
        return {source_id: source.to_json() for source_id, source in self._sources.items()}

    def to_json(self) -> str:
        """The registry as JSON text (`to_dict`, encoded): what `citemark lint --sources`
        reads from a file.  (It used to return the dict: that is `to_dict` now.)"""
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_json(cls, data: str | Mapping[str, Any] | list[Any]) -> Registry:
        """A registry from `to_json`'s text, `to_dict`'s mapping, or a list of objects with
        an `id` (the text may hold either of the last two)."""
        registry = cls()
        if isinstance(data, str):
            try:
                data = json.loads(data)
            except RecursionError:  # (json.loads recurses once per level)
                raise ValueError("sources JSON nests too deep") from None
        if isinstance(data, Mapping):
            for source_id, value in data.items():
                registry.add(Source.from_json(source_id, value))
        elif isinstance(data, list):
            for value in data:
                if not isinstance(value, Mapping) or not isinstance(value.get("id"), str):
                    raise ValueError("a source in a list needs a string 'id'")
                registry.add(Source.from_json(value["id"], {**value, "id": None}))
        else:
            raise TypeError("sources are an object (id -> source) or a list of objects")
        return registry


def _draft(item: str | Mapping[str, Any], kind: str, unit: str, wrap: int | None) -> dict[str, Any]:
    if isinstance(item, str):
        item = {"text": item}
    if not isinstance(item, Mapping):
        raise TypeError(f"a result is a string or a mapping, not {type(item).__name__}")
    unknown = sorted(set(item) - set(_FIELDS) - {"id"})
    if unknown or "id" in item:
        raise ValueError(f"unknown field(s) in a result: {', '.join(unknown or ['id'])}")
    if "text" not in item:
        raise ValueError("a result needs a 'text'")
    item_kind = item.get("kind", kind)
    if not isinstance(item_kind, str) or not _KIND.fullmatch(item_kind):
        raise ValueError(f"a kind is ASCII letters only (file, search, block), not {item_kind!r}")
    return {
        "text": item["text"],
        "title": item.get("title"),
        "url": item.get("url"),
        "timestamp": item.get("timestamp"),
        "metadata": item.get("metadata") or {},
        "unit": item.get("unit", unit),
        "wrap": item.get("wrap", wrap),
        "kind": item_kind,
    }


def _marker(source_id: str, parser: Parser) -> str:
    family = parser.families[0] if parser.families else DEFAULT_FAMILY
    return f"{parser.start}{family}{parser.delimiter}{source_id}{parser.stop}"


def _metadata(source: Source, parser: Parser) -> list[str]:
    lines = []
    for label, value in (("Title", source.title), ("URL", source.url)):
        if value:
            lines.append(f"{label}: {_one_line(value, parser)}")
    if source.timestamp:
        lines.append(f"Updated: {_one_line(source.timestamp, parser)}")
    for key, value in source.metadata.items():
        lines.append(f"{_one_line(key, parser)}: {_one_line(value, parser)}")
    return lines


def format_source(
    source: Source, *, parser: Parser | None = None, block_number: int | None = None
) -> str:
    """One source as a tool shows it: the `Citation Marker:` header (in the parser's
    markers and first family), metadata lines, then the text by its unit: `[L<n>] ...`
    lines, a `[Block<k>]` label (k: `block_number`, default 1) and the text, or the
    text as it is."""
    parser = Parser() if parser is None else parser
    lines = [f"Citation Marker: {_marker(source.id, parser)}", *_metadata(source, parser)]
    if source.unit == "line":
        if len(lines) > 1:
            lines.append("")
        lines.extend(
            f"[L{line.number}] {neutralise(line.text, parser)}".rstrip() for line in source.lines
        )
    elif source.unit == "block":
        lines.append(f"[Block{1 if block_number is None else block_number}]")
        lines.append(neutralise(source.text, parser).strip("\r\n"))
    else:
        if len(lines) > 1:
            lines.append("")
        lines.append(neutralise(source.text, parser).strip("\r\n"))
    return "\n".join(lines)


def format_tool_output(sources: Iterable[Source], *, parser: Parser | None = None) -> str:
    """The results of one tool call as the model reads them, one source after another,
    separated by a blank line.  Block sources are labelled `[Block1]`, `[Block2]`, ... by
    their position in `sources`."""
    parser = Parser() if parser is None else parser
    return "\n\n".join(
        format_source(source, parser=parser, block_number=position)
        for position, source in enumerate(sources, 1)
    )


def format_context(
    sources: Iterable[Source], *, parser: Parser | None = None, tag: str = "BLOCK"
) -> str:
    """Injected context: each source as `<BLOCK id="block5">` text `</BLOCK>`.

    Title, URL and timestamp become attributes (escaped); a line-unit source is shown as
    `[L<n>]` lines, the others as their text.  A `<BLOCK` or `</BLOCK` inside a text is
    defused (see the module docstring).
    """
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", tag):
        raise ValueError(f"not a tag name: {tag!r}")
    parser = Parser() if parser is None else parser
    tag_pattern = re.compile(rf"<(?=/?{re.escape(tag)}\b)", re.IGNORECASE)
    blocks = []
    for source in sources:
        attributes = [f'id="{html.escape(source.id)}"']
        for name, value in (
            ("title", source.title),
            ("url", source.url),
            ("updated", source.timestamp),
        ):
            if value:
                attributes.append(f'{name}="{html.escape(_one_line(value, parser))}"')
        if source.unit == "line":
            body = "\n".join(
                f"[L{line.number}] {neutralise(line.text, parser)}".rstrip()
                for line in source.lines
            )
        else:
            body = neutralise(source.text, parser).strip("\r\n")
        body = _BLOCK_TAG.sub("\u2039", tag_pattern.sub("\u2039", body))
        blocks.append(f"<{tag} {' '.join(attributes)}>\n{body}\n</{tag}>")
    return "\n\n".join(blocks)
