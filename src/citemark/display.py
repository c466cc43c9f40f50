"""Clean text for display: what a person should see of a model answer.

`citemark.clean(text)` is `clean` below; this module also holds the batch form
(`clean_many`), the places of what was removed (`clean_with_marks`) and the stream
(`CleanStream`).

The drop-in `strip_citations` does exactly what the guide's helper does; on real answers that
leaves residue.  `clean` removes every marker shape found in real output, keeps every word of
prose, and never touches Markdown code:

- markers of any family (`cite`, `filecite`, `navlist`, `image_group`, `i`, `video`, ...) and
  family-less groups `\\ue200\\ue202turn0search0\\ue202turn0news0\\ue201` are removed;
  `entity` markers show their display name (the second element of their JSON array), so
  "It works with <entity>, which" keeps its word, and so do `url`/`link_title` markers,
  which show their title; `widgets` renders any family instead.
- U+E203/U+E204 (around the prose a citation supports) and the U+E206 anchor go, the prose
  stays; bare anchors `\\ue202turn0search0` go with their ids; broken markers (a START never
  closed, or abandoned by a new START) lose their head and ids, and any other stray
  U+E200-U+E206 character goes alone, and so does every other character of the Basic
  Multilingual Plane's Private Use Area (U+E000-U+F8FF, `_core.shapes.PRIVATE_RANGE`: icon
  glyphs such as U+E316 or U+F8FF that exports leave; they show as boxes).
- A marker that the line or the text ends inside (a cut stream, a truncated log) goes whole
  when what follows its START is what a marker could be so far (a family name not glued to
  a word before it; ids, locators and delimiters; an entity's JSON array up to its `]`):
  "done \\ue200cite\\ue202turn17sea" is "done", the prose before it stays, and
  `CleanStream.close()` gives the same.
- Markdown code (fenced, indented, inline; inside block quotes and list items) stays literal.
- A marker that is a link's destination, `[text](<marker>)`, leaves `text`.
- `lenient=True` also removes the forms that lost their private-use characters
  (`citeturn0search0`, `iturn0image0turn0image1`, `fileciteturn1file0L8-L13`), the
  same with one blank where each marker character was (`cite turn0search5`,
  `filecite turn1file2 L1-L12`), the characters written as six-character escapes
  (`\\ue200`), replaced by U+FFFD (one or more for each), ChatGPT's copy forms
  `:contentReference[oaicite:3]{index=3}` and `[oai_citation:0‡Title](url)` (a `cite`
  mark whose ids are the title and the url), the Assistants API's file citations
  `【4:0†source】` (a `cite` mark whose ids are `4:0` and the file's name) and Codex's
  `【F:src/app.py†L5-L60】` (the path, at lines 5 to 60), and titled markers, navlists
  and JSON-object widgets that lost theirs (`urlMDN Web Docsturn6search0` shows its
  title; `navlistNewsturn0news4,turn0news5` and `image_group{"query":"x"}` go).  Each of the
  first forms needs an id (`turn0search0`) after a family name that starts a word, so
  "cite", "recite turn0search5", "I cite turn0" or "citeturnip" are never touched.  A
  degraded `entity[...]` shows its name when its body is a JSON array on one line whose
  second element is a string (`entity["city", "Paris", 3]` is "Paris").

Spacing rule: a removal never doubles a space or leaves one before punctuation.  Where a run
of removed markers ends, the blanks just before it are dropped when what follows is a line
end, the end of the text, a blank, or closing punctuation (`.,;:!?)]}%` and their CJK
forms; right after the run, a run of a straight quote or emphasis mark that a blank, a line
end or closing punctuation follows, as in '"yes <m>" now' or "**fact <m>** here"), and the
blanks between it and closing punctuation go too
("a <m> ." is "a."); at
the start of a line, the indentation stays and the blanks after the run are dropped instead,
and a line the run empties goes with its line feed ("x\n<m>\ny" is "x\ny", not a blank line
that would end the paragraph).  So "sentence. <marker>" is "sentence." and "a <marker> b" is
"a b".
What the removals leave empty goes first: a bracket holding only blanks ("(<marker>)",
"[<marker>]", their full-width forms; not the "[]" of a link), and a separator (`,;` and
their CJK forms) with nothing on one side, so "The article (<m>, <m>) says" is "The article
says" and "Paris, <m>, then" is "Paris, then".  Brackets and separators of the prose that
no removal touches stay.  In scripts written without blanks between words (Han, kana, their
punctuation; `_core.shapes.UNSPACED`), the blanks on both sides of a run go when it stands
between two of their characters or after their punctuation: "门槛。<m> 其后" is "门槛。其后".
"""

from __future__ import annotations

import json
import re
import sys
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, NamedTuple

from ._core.grammar import (
    FAMILY_CHAR,
    FAMILY_WORD_RE,
    LINE_LOCATOR_RE,
    TURN_ID,
    check_chunk,
    check_text,
)
from ._core.protocols import CLOSED_OWNER
from ._core.shapes import (
    BARE,
    BLANKS,
    BROKEN,
    CLOSING,
    DELIM,
    ENTITY,
    FRONT_OFF,
    FRONT_ON,
    FRONT_STOPS,
    LINE_START,
    LINE_ZONE,
    MARKER,
    MARKERS_MAYBE_IN_CODE,
    NOT_PLAIN,
    PRIVATE_RANGE,
    SHORT_HOLD,
    START,
    STOP,
    STRAY,
    TITLED_FAMILIES,
)
from ._kernels.loader import Implementation, load
from ._markdown.code import find_code_ranges, maybe_code, stream_scanner
from .offsets import OFFSET_UNITS, OffsetMap, OffsetUnit

if TYPE_CHECKING:
    from ._kernels.commonmark_py import StreamScanner

__all__ = [
    "CITATION_FAMILIES",
    "CleanStream",
    "Cleaned",
    "Cut",
    "Mapped",
    "Mark",
    "Marker",
    "clean",
    "clean_many",
    "clean_mapped",
    "clean_position",
    "clean_with_marks",
    "entity_name",
]

# Families whose markers are citations (chips for front ends); other families are widgets.
CITATION_FAMILIES = frozenset({"cite", "filecite", "", "oaicite"})

Widgets = Mapping[str, Callable[["Marker"], str]]


class Marker(NamedTuple):
    """A removed marker, as a `widgets` renderer receives it.

    kind: "citation" (a family of CITATION_FAMILIES), "widget" (any other family),
    "entity", "broken" (never closed) or "anchor" (bare `\\ue202turn0search0`)."""

    kind: str
    family: str
    source_ids: tuple[str, ...]
    locator: str | None
    body: str


class Mark(NamedTuple):
    """A marker and where it sits in the clean text: `start` to `end` is what replaced it
    (start == end when it was removed), in the unit asked for."""

    kind: str
    family: str
    source_ids: tuple[str, ...]
    locator: str | None
    body: str
    start: int
    end: int


class Cleaned(NamedTuple):
    text: str
    marks: list[Mark]


class Cut(NamedTuple):
    """A place where cleaning changed the text: `text[start:end]` became
    `clean[clean_start:clean_end]` (an empty range when it was removed).  Between two cuts,
    and before the first and after the last, the text is copied as it is."""

    start: int
    end: int
    clean_start: int
    clean_end: int


class Mapped(NamedTuple):
    """The clean text, the marks (code points) and the cuts that lead from the text to it."""

    text: str
    marks: list[Mark]
    cuts: list[Cut]


def _kernel(implementation: Implementation | None) -> ModuleType:
    """The clean kernel of `implementation` (None: the active one)."""
    return load("clean", implementation)


def _check(lenient: object, skip_code: object, widgets: object) -> None:
    if type(lenient) is not bool:
        raise TypeError(f"lenient must be bool, not {type(lenient).__name__}")
    if type(skip_code) is not bool:
        raise TypeError(f"skip_code must be bool, not {type(skip_code).__name__}")
    if widgets is not None:
        if not isinstance(widgets, Mapping):
            raise TypeError(f"widgets must be a mapping, not {type(widgets).__name__}")
        for family, render in widgets.items():
            if not isinstance(family, str) or not callable(render):
                raise TypeError("widgets must map family names (str) to callables")


def clean(
    text: str,
    *,
    lenient: bool = False,
    skip_code: bool = True,
    widgets: Widgets | None = None,
    implementation: Implementation | None = None,
) -> str:
    """`text` as a person should see it (see the module's documentation).

    `widgets` maps a family name to a function of its `Marker` that returns the text to
    show instead (entity markers show their name, and `url`/`link_title` markers their
    title, unless their family is mapped too).
    """
    if lenient is False and skip_code is True and widgets is None:
        # The default options (checked by identity: no call) in one kernel call, as in
        # clean_many: the per-call work here cost a fifth of the time on a log of answers.
        kernel = _kernel(implementation)
        done: str | None = kernel.clean_texts([text], find_code_ranges, entity_name, True)[0]
        if done is not None:
            return done
    _check(lenient, skip_code, widgets)
    kernel = _kernel(implementation)
    if not lenient and not widgets:
        done = kernel.clean_texts(
            [text], find_code_ranges if skip_code else None, entity_name, True
        )[0]
        if done is not None:
            return done
    plain = check_text(text)
    if lenient:
        code_ranges = find_code_ranges(plain) if skip_code and maybe_code(plain) else []
        plain, code_ranges = _degraded(plain, code_ranges)
    else:
        marker_state = kernel.marker_state(plain)
        if not marker_state:
            return text
        code_ranges = (
            find_code_ranges(plain) if skip_code and marker_state == MARKERS_MAYBE_IN_CODE else []
        )
    if not widgets:
        # None: a marker whose title shows, which only the general path renders.
        fast: str | None = kernel.clean(plain, code_ranges, entity_name, True)
        if fast is not None:
            return text if fast is text else fast
    return _clean(kernel, plain, code_ranges, widgets)[0]


def clean_many(
    texts: Iterable[str],
    *,
    lenient: bool = False,
    skip_code: bool = True,
    widgets: Widgets | None = None,
    implementation: Implementation | None = None,
) -> list[str]:
    """`[clean(text, ...) for text in texts]`, faster: without lenient or widgets, the whole
    batch goes through the kernel in one call (for the JSONL and Parquet paths, where the
    per-text work of `clean` itself cost as much as the cleaning, measured on a log of
    answers).  Any text the kernel leaves to the front is cleaned by `clean`."""
    _check(lenient, skip_code, widgets)
    if isinstance(texts, (str, bytes)):
        # A str is an iterable of one-character texts: almost always a missing [text].
        raise TypeError(f"texts must be an iterable of str, not a {type(texts).__name__}")
    batch = texts if type(texts) is list else list(texts)
    if lenient or widgets:
        done: list[str | None] = [None] * len(batch)
    else:
        kernel = _kernel(implementation)
        done = kernel.clean_texts(batch, find_code_ranges if skip_code else None, entity_name, True)
    return [
        clean(
            text,
            lenient=lenient,
            skip_code=skip_code,
            widgets=widgets,
            implementation=implementation,
        )
        if result is None
        else result
        for text, result in zip(batch, done, strict=True)
    ]


def clean_with_marks(
    text: str,
    *,
    lenient: bool = False,
    skip_code: bool = True,
    widgets: Widgets | None = None,
    offsets: OffsetUnit = "codepoints",
    implementation: Implementation | None = None,
) -> Cleaned:
    """`clean(text)` and the markers it removed or replaced, in order, with their places in
    the clean text in `offsets` units ("codepoints", "utf16" or "utf8"), so that a front
    end can put a chip where each citation was."""
    _check(lenient, skip_code, widgets)
    if offsets not in OFFSET_UNITS:
        raise ValueError(f"offsets must be one of {', '.join(OFFSET_UNITS)}, not {offsets!r}")
    kernel = _kernel(implementation)
    plain = check_text(text)
    code_ranges = find_code_ranges(plain) if skip_code and maybe_code(plain) else []
    if lenient:
        plain, code_ranges = _degraded(plain, code_ranges)
    result, marks = _clean(kernel, plain, code_ranges, widgets)
    if offsets != "codepoints" and marks:
        units = OffsetMap(result)
        marks = [
            mark._replace(
                start=units.convert(mark.start, target=offsets),
                end=units.convert(mark.end, target=offsets),
            )
            for mark in marks
        ]
    return Cleaned(result, marks)


def clean_mapped(
    text: str,
    *,
    lenient: bool = False,
    skip_code: bool = True,
    widgets: Widgets | None = None,
    implementation: Implementation | None = None,
) -> Mapped:
    """`clean_with_marks(text)` (code points) and the cuts that lead from `text` to the clean
    text, so that any position of `text` can be placed in the clean text
    (`clean_position`): what a server needs to move offsets computed on the raw answer."""
    _check(lenient, skip_code, widgets)
    plain = check_text(text)
    code_ranges = find_code_ranges(plain) if skip_code and maybe_code(plain) else []
    return _clean_mapped(_kernel(implementation), plain, code_ranges, lenient, widgets)


# What a marker that is a link's destination, `[text](<marker>)`, becomes: a str (the URL),
# or None to treat it as any other marker (see _clean; `render` gives it the source's URL).
Destination = Callable[["Marker"], "str | None"]


def _clean(
    kernel: ModuleType,
    plain: str,
    code_ranges: list[tuple[int, int]],
    widgets: Widgets | None,
    destination: Destination | None = None,
) -> tuple[str, list[Mark]]:
    result, marks, _, _, _ = _joined(
        kernel, plain, kernel.scan(plain, code_ranges), widgets, destination
    )
    return result, marks


def _joined(
    kernel: ModuleType,
    plain: str,
    tokens: list[tuple[int, ...]],
    widgets: Widgets | None,
    destination: Destination | None = None,
) -> tuple[str, list[Mark], list[int], list[int], list[int]]:
    """The clean text, the marks, where each token's replacement starts and ends in it, and
    where the text resumes after each token (see the kernels' `join`)."""
    markers: list[Marker | None] = []
    replacements: list[str] = []
    for token in tokens:
        marker = _marker(plain, token)
        markers.append(marker)
        shown = None
        if destination is not None and marker is not None and _is_destination(plain, token):
            shown = destination(marker)
        if shown is None:
            shown = "" if marker is None else _replacement(marker, widgets)
        replacements.append(shown)
    result, positions, resumes = kernel.join(plain, tokens, replacements)
    ends = [
        _replaced_end(result, replacement, position, following) if replacement else position
        for replacement, position, following in zip(
            replacements, positions, [*positions[1:], len(result)][: len(positions)], strict=True
        )
    ]
    marks = [
        Mark(*marker, position, end)
        for marker, position, end in zip(markers, positions, ends, strict=True)
        if marker is not None
    ]
    return result, marks, positions, ends, resumes


def _replaced_end(result: str, replacement: str, position: int, following: int) -> int:
    """Where the replacement placed at `position` of `result` ends.  The spacing rule may
    have taken some of it: its last characters (a widget's blank before a line end), which
    happens only where a later token is placed (`following`), which the taking moves back;
    or a `[` of it, when a marker was the destination of the link that `[` opened."""
    end = min(position + len(replacement), following)
    if end == position + len(replacement) and result.startswith(replacement, position):
        return end  # all of it is there: the common case
    at, read = position, 0
    while at < end and read < len(replacement):
        if result[at] == replacement[read]:
            at += 1
        elif replacement[read] != "[":
            break
        read += 1
    return at


def _clean_mapped(
    kernel: ModuleType,
    text: str,
    code_ranges: list[tuple[int, int]],
    lenient: bool,
    widgets: Widgets | None,
) -> Mapped:
    plain = text
    rewritten: list[Cut] = []  # lenient: from text to the markers rebuilt in plain
    if lenient:
        plain, code_ranges = _degraded(text, code_ranges, rewritten)
    if not kernel.has_markers(plain):
        return Mapped(plain, [], rewritten)
    tokens = kernel.scan(plain, code_ranges)
    result, marks, positions, ends, resumes = _joined(kernel, plain, tokens, widgets)
    back = [Cut(c, d, a, b) for a, b, c, d in rewritten]
    spans = []
    for token, position, clean_end, end in zip(tokens, positions, ends, resumes, strict=True):
        # (what the spacing rule took after a run goes with its last marker: matched as a
        # gap, a line feed it took would be one of two alike, told apart only by chance)
        start = token[1]
        if back:
            start, end = clean_position(back, start), clean_position(back, end, end=True)
        spans.append(Cut(start, end, position, clean_end))
    return Mapped(result, marks, _aligned(text, spans, result))


def _is_destination(text: str, token: tuple[int, ...]) -> bool:
    """Whether the token stands alone between the `](` and `)` of a Markdown link."""
    start, end = token[1], token[2]
    return text.startswith("](", start - 2) and start >= 2 and text.startswith(")", end)


def _clean_for_render(
    text: str, *, lenient: bool, widgets: Widgets, destination: Destination
) -> str:
    """`clean(text, lenient=..., widgets=...)`, link destinations given by `destination`."""
    _check(lenient, True, widgets)
    plain = check_text(text)
    code_ranges = find_code_ranges(plain) if maybe_code(plain) else []
    if lenient:
        plain, code_ranges = _degraded(plain, code_ranges)
    return _clean(_kernel(None), plain, code_ranges, widgets, destination)[0]


_KINDS = {MARKER: "citation", ENTITY: "entity", BROKEN: "broken", BARE: "anchor"}


# A navlist's ids are one comma-joined part of its body (after the title).
_ID_LIST = re.compile(f"{TURN_ID}(?: *, *{TURN_ID})+")


def _marker(text: str, token: tuple[int, ...]) -> Marker | None:
    kind, _, _, family_start, family_end, body_start, body_end = token
    if kind == STRAY:
        return None
    family = text[family_start:family_end]
    body = text[body_start:body_end]
    label = _KINDS[kind]
    if kind == ENTITY:
        return Marker(label, family, (), None, body)
    if kind == MARKER and family not in CITATION_FAMILIES:
        label = "widget"
    parts = []
    for piece in body.split(DELIM):
        piece = piece.strip()
        if _ID_LIST.fullmatch(piece):
            parts += [part.strip() for part in piece.split(",")]
        elif piece:
            parts.append(piece)
    locator = parts.pop() if len(parts) > 1 and LINE_LOCATOR_RE.match(parts[-1]) else None
    return Marker(label, family, tuple(parts), locator, body)


def _replacement(marker: Marker, widgets: Widgets | None) -> str:
    render = None
    if widgets and marker.kind in ("citation", "widget", "entity"):
        render = widgets.get(marker.family)
    if render is None:
        if marker.kind == "entity":
            return entity_name(marker.body)
        if marker.family in TITLED_FAMILIES and marker.source_ids:
            return _visible(marker.source_ids[0])
        return ""
    shown = render(marker)
    if not isinstance(shown, str):
        raise TypeError(f"a widgets renderer must return str, not {type(shown).__name__}")
    return str.__str__(shown)


_PRIVATE_CHARS = re.compile(f"[{PRIVATE_RANGE}]")
_LINE_BREAK_CHARS = re.compile("[\r\n]")


def _visible(name: str) -> str:
    """A name or title as a reader sees it in a sentence: private-use characters (marker
    characters among them) removed, line breaks as spaces, no outer white space."""
    return _LINE_BREAK_CHARS.sub(" ", _PRIVATE_CHARS.sub("", name)).strip()


# JSON nested deeper than this is no entity a model writes, and json.loads recurses once per
# level: a hostile body would raise RecursionError, at a depth that varies with the caller's.
_ENTITY_DEPTH = 64


def _shallow(text: str) -> bool:
    """Whether the JSON-like `text` nests arrays and objects at most _ENTITY_DEPTH deep
    (brackets in strings do not count)."""
    if text.count("[") + text.count("{") <= _ENTITY_DEPTH:
        return True
    depth = 0
    quoted = escaped = False
    for char in text:
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char in "[{":
            depth += 1
            if depth > _ENTITY_DEPTH:
                return False
        elif char in "]}":
            depth -= 1
    return True


def entity_name(body: str) -> str:
    """What a reader sees of an entity marker's body: the display name, the second element
    of `["kind","Name","description"]` (the first when it is alone); a plain-text body as
    it is; DELIM-separated `kind<DELIM>Name` parts like the array.  Nothing else shows."""
    text = body.strip()
    name: object = None
    if text[:1] in ("[", '"', "{"):
        try:
            value = json.loads(text) if _shallow(text) else None
        except ValueError:
            value = None
        if isinstance(value, list) and value:
            name = value[1] if len(value) > 1 else value[0]
        elif isinstance(value, dict):
            name = value.get("name")
        elif isinstance(value, str):
            name = value
    else:
        parts = [part.strip() for part in text.split(DELIM) if part.strip()]
        name = parts[1] if len(parts) > 1 else parts[0] if parts else None
    return _visible(name) if isinstance(name, str) else ""


# --- lenient: the forms that lost their private-use characters ------------------------------

_LOCATOR = "L[0-9]+(?:-L[0-9]+)?"
_ESCAPE = re.compile(r"\\[uU][eE]20([0-6])")
_BLANK = f"[{BLANKS}]"


def _json_array(excluded: str) -> str:
    """An entity body that lost its marker characters: a JSON array on one line, a string
    first, then a string (the display name, which an entity always has: `entity["id"]` is a
    subscript in code), then any JSON values but arrays and objects;
    `excluded` the characters its strings never hold."""
    string = f'"(?:[^"\\\\\r\n{excluded}]|\\\\[^\r\n{excluded}])*"'
    scalar = f"(?:{string}|-?[0-9]+(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null)"
    item = "[ \t]*{}[ \t]*"
    rest = f",{item.format(string)}(?:,{item.format(scalar)}){{0,6}}"
    return f"\\[{item.format(string)}{rest}\\]"


_TITLE_PART = f"[^\\[\\]\r\n{PRIVATE_RANGE}]"  # a character of a copied chip's title
_DEGRADED = re.compile(
    # An id glued to a family name, or after it with one blank where the marker characters
    # were: the family alone, or an id alone, is prose.
    f"(?P<family>filecite|cite|(?<![A-Za-z0-9])i)(?P<ids>(?:{TURN_ID})+)(?P<locator>{_LOCATOR})?"
    # (the blanks that stood for START and STOP go too where the prose has its own)
    f"|(?:(?<={_BLANK}){_BLANK})?(?<![A-Za-z0-9])(?P<spaced>filecite|cite|i){_BLANK}"
    f"(?P<spaced_ids>{TURN_ID}(?:{_BLANK}{TURN_ID})*)(?:{_BLANK}(?P<spaced_locator>{_LOCATOR}))?"
    f"(?![A-Za-z0-9])(?:{_BLANK}(?=[{re.escape(BLANKS + CLOSING)}\r\n]|\\Z))?"
    # (after no word or dot: `identity["sub"]` and `row.entity["a", "b"]` are code)
    f"|(?<![A-Za-z0-9_.])entity(?P<entity>{_json_array('')})"
    # (ChatGPT's copy button writes one colon before it, or two at a line's start)
    r"|:{0,2}contentReference\[oaicite:(?P<index>[0-9]+)\](?:\{index=[0-9]+\})?"
    # The Assistants API's file citations, 【4:0†source】 (message 4, result 0, the file's
    # name), ChatGPT's browsing form 【11†L1-L3】 and Codex's file citations
    # 【F:src/app.py†L5-L60】: on one line, the name bounded so that an unclosed one costs a
    # constant at each place it is tried.
    f"|\u3010(?P<ref>[0-9]+(?::[0-9]+)?|F:[^\u2020\u3011\r\n{PRIVATE_RANGE}]{{1,300}})\u2020"
    f"(?P<source>[^\u3011\r\n{PRIVATE_RANGE}]{{0,200}})\u3011"
    # ChatGPT's ids in those brackets, 【turn0search16】 (on one line after it lost its markers)
    f"|\u3010(?P<lenticular_ids>{TURN_ID}(?:,?{TURN_ID})*)\u3011"
    # A titled marker or a navlist that lost its characters, its title glued to the family
    # name and its ids to the title ("urlMDN Web Docsturn6search0" shows "MDN Web Docs";
    # "navlistRecent newsturn0news40,turn0news42" goes), on one line, the title bounded.  A
    # title starts with no lowercase letter, so that words such as "urllib" or "urls" before
    # an id on the line ("urllib citeturn0search0") are prose.
    "|(?<![A-Za-z0-9_])(?P<titled>url|link_title|navlist)"
    f"(?P<heading>[^\\sa-z{PRIVATE_RANGE}][^\r\n{PRIVATE_RANGE}]{{0,199}}?)"
    f"(?P<titled_ids>{TURN_ID}(?:,?{TURN_ID})*)"
    # A widget whose body is a JSON object, glued to its family: image_group{"query":[...]}.
    # The object holds no other (so an unclosed one is read up to the next "{" at most), is
    # at most 1,000 characters on one line, and must be JSON (see _rebuild).
    "|(?<![A-Za-z0-9_])(?P<object_family>image_group|products)"
    f"(?P<object>\\{{[^{{}}\r\n{PRIVATE_RANGE}]{{0,1000}}\\}})"
    # ChatGPT's copy of a citation chip as a Markdown link, [oai_citation:0‡Title](url) (a
    # comma for the ‡ in older copies): a citation of the url, titled.
    "|\\[oai_citation(?:_attribution)?:[0-9]+[\u2021,]"
    # (a title may hold a few brackets of its own, one level deep: "Python [docs]"; each
    # part bounded, so that an attempt reads at most about 1,500 characters)
    f"(?P<title>{_TITLE_PART}{{0,300}}(?:\\[{_TITLE_PART}{{0,100}}\\]{_TITLE_PART}{{0,300}}){{0,3}})\\]"
    r"\((?P<url>(?:[^\s()]|\([^\s()]*\)){1,2000})\)"
)
_ONE_ID = re.compile(TURN_ID)
# U+FFFD where the marker characters were: one or more for each (a decoder replaces each
# broken piece of a character's UTF-8 bytes: at most three for a marker character).  Each
# run is taken whole (`(?=(?P<r>...))(?P=r)` is an atomic group, which Python 3.10 lacks)
# and bounded: read as two runs split at every place, from every place, one long run would
# cost an attempt cubic in its length.  A family-less marker is START's and DELIM's runs in one.
_RUN = "\ufffd{1,8}"
_REPLACED = re.compile(
    f"(?:(?=(?P<start>{_RUN}))(?P=start)(?P<family>{FAMILY_CHAR}+)(?=(?P<delim>{_RUN}))(?P=delim)"
    "|(?=(?P<both>\ufffd{2,16}))(?P=both))"
    f"(?P<body>(?:{TURN_ID}|{_LOCATOR})(?:\ufffd+(?:{TURN_ID}|{_LOCATOR}))*"
    f"|{_json_array(chr(0xFFFD))})"
    "\ufffd"
)
_REPLACEMENTS = re.compile("\ufffd+")
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)?")


def _rebuild(match: re.Match[str]) -> str:
    if match["entity"] is not None:
        return f"{START}entity{DELIM}{match['entity']}{STOP}"
    if match["index"] is not None:
        return f"{START}oaicite{DELIM}{match['index']}{STOP}"
    if match["ref"] is not None:
        source = f"{DELIM}{match['source']}" if match["source"] else ""
        return f"{START}cite{DELIM}{match['ref']}{source}{STOP}"
    if match["lenticular_ids"] is not None:
        return f"{START}cite{DELIM}{DELIM.join(_ONE_ID.findall(match['lenticular_ids']))}{STOP}"
    if match["titled"] is not None:
        ids = DELIM.join(_ONE_ID.findall(match["titled_ids"]))
        return f"{START}{match['titled']}{DELIM}{match['heading']}{DELIM}{ids}{STOP}"
    if match["object"] is not None:
        try:
            json.loads(match["object"])
        except ValueError:
            return match[0]  # prose in braces after the word: left as it is
        return f"{START}{match['object_family']}{DELIM}{match['object']}{STOP}"
    if match["url"] is not None:
        title = f"{match['title'].strip(BLANKS)}{DELIM}" if match["title"].strip(BLANKS) else ""
        return f"{START}cite{DELIM}{title}{match['url']}{STOP}"
    if match["spaced"] is not None:
        family, parts, locator = (
            match["spaced"],
            _ONE_ID.findall(match["spaced_ids"]),
            "spaced_locator",
        )
    else:
        family, parts, locator = match["family"], _ONE_ID.findall(match["ids"]), "locator"
    if match[locator]:
        parts.append(match[locator])
    return f"{START}{family}{DELIM}{DELIM.join(parts)}{STOP}"


def _unreplace(line: str, cuts: list[Cut] | None = None) -> str:
    """A line where U+FFFD stands for the marker characters: its markers rebuilt, and its
    other U+FFFD taken for the U+E203/U+E204/U+E206 that went with them."""
    rebuilt, count = _sub(_REPLACED, _rebuild_replaced, line, cuts)
    return rebuilt.replace("\ufffd", "\ue206") if count else line


def _rebuild_replaced(match: re.Match[str]) -> str:
    body = _REPLACEMENTS.sub(DELIM, match["body"])
    return f"{START}{match['family'] or ''}{DELIM}{body}{STOP}"


def _unescape(match: re.Match[str]) -> str:
    return chr(0xE200 + int(match[1]))


def _sub(
    pattern: re.Pattern[str],
    repl: Callable[[re.Match[str]], str],
    text: str,
    cuts: list[Cut] | None,
) -> tuple[str, int]:
    """`pattern.subn(repl, text)`; when `cuts` is a list, the cuts it made are appended."""
    if cuts is None:
        return pattern.subn(repl, text)
    pieces: list[str] = []
    at = shift = count = 0
    for match in pattern.finditer(text):
        start, end = match.span()
        new = repl(match)
        pieces += (text[at:start], new)
        cuts.append(Cut(start, end, start + shift, start + shift + len(new)))
        shift += len(new) - (end - start)
        at = end
        count += 1
    pieces.append(text[at:])
    return "".join(pieces), count


# Every match of _DEGRADED holds one of these: an id glued to its family ("cite",
# "filecite" or "i", then "turn") or after it and a blank, or another form's literal head.
# Prose without them skips the regex, which makes an attempt at nearly every character (50 ns
# a character on real answers, against a few substring searches at C speed).
_DEGRADED_SIGNS = (
    "citeturn",
    "iturn",
    "entity[",
    "contentReference[oaicite:",
    "\u2020",
    "\u3010turn",
    "[oai_citation",
    "image_group{",
    "products{",
    *(f"{family}{blank}turn" for family in ("cite", "i") for blank in BLANKS),
)
# The titled forms' heads are common words ("url"): they need a turn id on the line too.
_TITLED_SIGNS = ("url", "link_title", "navlist")


def _may_degrade(prose: str) -> bool:
    """Whether prose may hold a degraded form: without a sign, the regex would find none."""
    return any(sign in prose for sign in _DEGRADED_SIGNS) or (
        "turn" in prose and any(sign in prose for sign in _TITLED_SIGNS)
    )


def _degrade_prose(prose: str, cuts: list[Cut] | None = None) -> str:
    """prose with its degraded forms rewritten; when `cuts` is a list, the cuts from prose
    to the result are appended to it."""
    # Each rewrite reads the output of the one before: one list of cuts for each.
    steps: list[list[Cut]] | None = None if cuts is None else [[], [], []]
    prose = _sub(_ESCAPE, _unescape, prose, None if steps is None else steps[0])[0]
    if "\ufffd" in prose:
        lines: list[str] = []
        at = length = 0
        for line in _LINES.findall(prose):
            found: list[Cut] | None = None if steps is None else []
            rebuilt = _unreplace(line, found)
            if steps is not None and found:
                steps[1] += [Cut(a + at, b + at, c + length, d + length) for a, b, c, d in found]
            lines.append(rebuilt)
            at += len(line)
            length += len(rebuilt)
        prose = "".join(lines)
    if _may_degrade(prose):
        prose = _sub(_DEGRADED, _rebuild, prose, None if steps is None else steps[2])[0]
    if cuts is not None and steps is not None:
        cuts += _compose(_compose(steps[0], steps[1]), steps[2])
    return prose


def _degraded(
    text: str, code_ranges: list[tuple[int, int]], cuts: list[Cut] | None = None
) -> tuple[str, list[tuple[int, int]]]:
    """text with the degraded forms outside code ranges rewritten as the markers they were, and
    the code ranges where they now are; when `cuts` is a list, the cuts from text to the result
    are appended to it."""
    pieces: list[str] = []
    moved: list[tuple[int, int]] = []
    at = length = 0
    for start, end in code_ranges:
        prose = _degrade_piece(text, at, start, length, cuts)
        pieces += (prose, text[start:end])
        length += len(prose)
        moved.append((length, length + end - start))
        length += end - start
        at = end
    pieces.append(_degrade_piece(text, at, len(text), length, cuts))
    return "".join(pieces), moved


def _degrade_piece(text: str, at: int, end: int, length: int, cuts: list[Cut] | None) -> str:
    """`_degrade_prose(text[at:end])`, its cuts (when asked) moved to the whole text's
    positions: the piece starts at `at` in text and at `length` in the result."""
    if cuts is None:
        return _degrade_prose(text[at:end])
    found: list[Cut] = []
    prose = _degrade_prose(text[at:end], found)
    cuts += [Cut(a + at, b + at, c + length, d + length) for a, b, c, d in found]
    return prose


# --- where the text went: positions of the raw text in the clean text --------------------

# A stretch between two markers loses a few characters at most (the blanks the spacing rule
# drops at either end, a link's brackets); more runs than this mean the matching below has
# gone astray, and the stretch becomes one cut.
_MAX_RUNS = 8


def clean_position(cuts: Sequence[Cut], index: int, *, end: bool = False) -> int:
    """Where position `index` (a boundary between characters) of the text lands in the
    clean text, given the `cuts` that lead from one to the other (sorted, as `clean_mapped`
    gives them).  A position inside a cut lands at the cut's clean start, or at its clean end
    with `end=True`: the range `[a, b)` of the text is `[clean_position(a),
    clean_position(b, end=True))` of the clean text, the characters of it that survive, and a
    range over a removed marker only becomes a point where the marker was."""
    k = bisect_right(cuts, (index, sys.maxsize)) - 1  # the last cut starting at or before
    if k < 0:
        return index
    start, stop, clean_start, clean_end = cuts[k]
    if index < stop:
        return clean_end if end and index > start else clean_start
    return clean_end + index - stop


def _add(cuts: list[Cut], cut: Cut) -> None:
    """Append cut, merged with the one before when both are removals that touch."""
    if cuts and cut.clean_start == cut.clean_end:
        last = cuts[-1]
        if last.end == cut.start and last.clean_start == last.clean_end == cut.clean_start:
            cuts[-1] = Cut(last.start, cut.end, last.clean_start, last.clean_start)
            return
    cuts.append(cut)


def _common(a: str, i: int, a_end: int, b: str, j: int, b_end: int) -> int:
    """The length of the common prefix of a[i:a_end] and b[j:b_end], found by halving (each
    probe compares only the new part, so the work is linear in the answer)."""
    limit = min(a_end - i, b_end - j)
    if a[i : i + limit] == b[j : j + limit]:
        return limit
    low, high = 0, limit  # a[i:i+low] == b[j:j+low], a[i:i+high] != b[j:j+high]
    while high - low > 1:
        middle = (low + high) // 2
        if a[i + low : i + middle] == b[j + low : j + middle]:
            low = middle
        else:
            high = middle
    return low


def _gap(raw: str, r: int, s: int, clean: str, c: int, p: int, cuts: list[Cut]) -> None:
    """Cuts of raw[r:s], the text between two markers, which became clean[c:p]: a few of its
    characters dropped, matched from the left (the blanks before a marker are dropped after
    the words before them are matched)."""
    if s - r == p - c and raw[r:s] == clean[c:p]:
        return
    runs: list[Cut] = []
    i, j = r, c
    while j < p:
        k = _common(raw, i, s, clean, j, p)
        i += k
        j += k
        if j == p:
            break
        following = raw.find(clean[j], i, s)
        if following < 0 or len(runs) == _MAX_RUNS:
            _add(cuts, Cut(r, s, c, p))  # not a plain removal: the whole stretch is one cut
            return
        runs.append(Cut(i, following, j, j))
        i = following
    if i < s:
        runs.append(Cut(i, s, p, p))
    for run in runs:
        _add(cuts, run)


def _aligned(raw: str, spans: list[Cut], clean: str) -> list[Cut]:
    """The cuts from raw to clean, given where each marker went (`spans`, sorted); the text
    between two of them is matched by `_gap`.  Positions are kept in order even where the
    spacing rule reached back past an earlier replacement."""
    cuts: list[Cut] = []
    r = c = 0
    length = len(clean)
    for start, stop, clean_start, clean_end in [*spans, Cut(len(raw), len(raw), length, length)]:
        clean_start = min(max(clean_start, c), length)
        clean_end = min(max(clean_end, clean_start), length)
        _gap(raw, r, start, clean, c, clean_start, cuts)
        if start < stop or clean_start < clean_end:
            _add(cuts, Cut(start, stop, clean_start, clean_end))
        r, c = stop, clean_end
    return cuts


def _compose(first: list[Cut], second: list[Cut]) -> list[Cut]:
    """The cuts of `first` then `second` (whose positions are first's clean ones): each cut
    of one carried through the other, the overlapping ones merged."""
    if not first or not second:
        return first or second
    back = [Cut(c, d, a, b) for a, b, c, d in first]
    carried = sorted(
        [
            Cut(a, b, clean_position(second, c), clean_position(second, d, end=True))
            for a, b, c, d in first
        ]
        + [Cut(clean_position(back, a), _back_end(back, b), c, d) for a, b, c, d in second]
    )
    merged: list[Cut] = []
    for cut in carried:
        if merged and (cut.start < merged[-1].end or cut.clean_start < merged[-1].clean_end):
            last = merged[-1]
            merged[-1] = Cut(
                last.start,
                max(last.end, cut.end),
                min(last.clean_start, cut.clean_start),
                max(last.clean_end, cut.clean_end),
            )
        else:
            merged.append(cut)
    return merged


def _back_end(back: list[Cut], index: int) -> int:
    """Where the end `index` of a second-step cut lies in the text: before what the first
    step removed at that very place (that removal stays a cut of its own, so positions at it
    keep their place), else as `clean_position(..., end=True)`."""
    k = bisect_left(back, (index,))  # the first cut starting at or after index
    if k < len(back) and back[k].start == back[k].end == index:
        return back[k].clean_start
    return clean_position(back, index, end=True)


# --- streams ---------------------------------------------------------------------------------

DEFAULT_MAX_HOLD = 1 << 16


def _link_end(text: str, end: int, shown: Callable[[str], str] | None = None) -> int:
    """Where a release of text[:end] stops for links: at the first `[` whose text a marker may
    still unwrap (`[words](<marker>)` shows `words`), else end.  A `[` is decided once its `]`
    has come and after it, outside brackets, a character that no marker takes away (none of
    NOT_PLAIN): a later `](` then pairs with another `[` (unwrap_link balances brackets), and
    this link's own destination began with something else than a marker, or its marker is
    decided by that character, which the release reaches (a plain character inside a later
    `[` still open is not released, so it does not count).  The brackets are read past whole
    markers (START to STOP, a body with no bracket and no private-use character but DELIM:
    what cleaning shows of one, if anything, comes from its body) up to any other marker
    character after the first `[` (a body may hold brackets, ids may run on): a `[` not
    decided before it, or any `[` after it, waits for the line's end.  With widgets, `shown`
    gives the text cleaning shows for a whole marker (a widget's may hold brackets, a link
    may open in it): its brackets are read as if they stood where the marker starts, from
    the first marker on."""
    first = text.find("[", 0, end)
    if shown is not None:
        marker = text.find(START, 0, end if first < 0 else first)
        first = marker if marker >= 0 else first
    if first < 0:
        return end
    stop = end
    opened: list[int] = []  # the `[` not closed yet
    closed: list[int] = []  # the `[` closed, with no plain character after their `]` yet
    after = first  # where the text since the last bracket or marker starts
    for token in _LINK_TOKENS.finditer(text, first, end):
        at = token.start()
        if token.lastgroup == "other":
            stop = at
            break
        if closed and not opened and _PLAIN_CHAR.search(text, after, at) is not None:
            closed.clear()
        after = token.end()
        if token.lastgroup == "marker":
            # (Its other characters decide nothing: a release may stop before the marker.)
            for char in "" if shown is None else shown(token.group()):
                if char == "[":
                    opened.append(at)
                elif char == "]" and opened:
                    closed.append(opened.pop())
        elif text[at] == "[":
            opened.append(at)
        elif opened:  # a `]`
            closed.append(opened.pop())
    if closed and not opened and _PLAIN_CHAR.search(text, after, stop) is not None:
        closed.clear()
    undecided = opened[:1] + closed
    if undecided:
        return min(undecided)
    later = text.find("[", stop, end)  # (none when stop is end)
    return end if later < 0 else later


def _plain_end(text: str, end: int) -> int:
    """The end of text[:end] without its trailing characters of NOT_PLAIN and private use
    (read back from `end`: a look may call it once per START it walks back over, so it must
    cost what it passes, not a copy of text[:end])."""
    while end and (text[end - 1] in NOT_PLAIN or "\ue000" <= text[end - 1] <= "\uf8ff"):
        end -= 1
    return end


# A character a piece may end on (`_plain_end` also passes over private-use ones).
_PLAIN_CHAR = re.compile(f"[^{re.escape(NOT_PLAIN)}]")
# What _link_end reads: a bracket, a whole marker it reads past, any other marker character.
_LINK_TOKENS = re.compile(
    "(?P<bracket>[\\[\\]])"
    f"|(?P<marker>{START}(?:[^\\[\\]{PRIVATE_RANGE}]|{DELIM})*{STOP})"
    f"|(?P<other>[{PRIVATE_RANGE}])"
)
# A tail holding none of these lets the kernel's front take the next delta.
_FRONT_STOPS = re.compile(f"[{re.escape(FRONT_STOPS)}{PRIVATE_RANGE}]")
# What may continue a bare DELIM's ids (`turn0search1`, `L8-L13`).
_ID_CHARS = re.compile("[0-9A-Za-z_-]*")


def _last_chars(groups: tuple[list[str], ...], wanted: int) -> str:
    """The last `wanted` characters of the pieces of `groups` put together, the last group
    first; only the pieces that hold them are read."""
    taken: list[str] = []
    size = 0
    for group in groups:
        for piece in reversed(group):
            if size >= wanted:
                break
            taken.append(piece)
            size += len(piece)
    text = "".join(reversed(taken))
    return text[len(text) - wanted :] if wanted > 0 else ""


class CleanStream:
    """`clean` over an answer that arrives in chunks: the concatenated output of `feed` and
    `close` is exactly `clean(whole)` for every chunking.

    Markers never span a line break and the spacing rule never looks across one, so text is
    released line by line as soon as its Markdown is decided: a line is held while it is
    incomplete, and a paragraph from its first backtick on (a later backtick in the same
    paragraph may close an inline code span there).  Work is linear: a chunk without a line
    break costs its length; each line goes once through the Markdown scanner and once
    through the kernel.  `work` counts the characters handled, for the linearity tests.

    `max_hold` bounds that paragraph hold: past it, the backticks seen so far are paired
    among themselves and the lines go out (a code span that a later backtick would have
    closed is then not seen: the one case where the output can differ from `clean(whole)`).
    None holds as long as needed.  A single line is always held whole.

    With `mapped=True` the stream also records, in `marks` and `cuts`, every marker it
    removed and every cut it made (see `clean_mapped`), in positions of the whole stream:
    cut starts and ends count the text fed since the start, clean positions the text
    released since the start (code points).  A server places offsets computed on the raw
    text with `clean_position(stream.cuts, index)` once `index <= stream.released`.

    Without `lenient`, the line being written goes out before its end too, as far as it is
    decided (see `_front`): a prose delta with no marker character is one C call.  A mapped
    stream records the marks and cuts of what the front releases as it goes out, and those of
    the rest of a line at its end (its whole piece is cleaned then, so they are
    `clean_mapped`'s): `released` moves with the text.
    """

    _held_length = 0  # len("".join(self._lines))
    _released = 0  # stream offset where self._lines start
    _complete = 0  # stream offset where the incomplete line starts
    _code: StreamScanner | None = None  # made when first needed (see _scanner)
    _closed = False
    _clean_length = 0  # the length of everything released
    # The last snapshot (feed_snapshot), None while no snapshot was fed; "" after a feed(),
    # which then rules out snapshots.
    _snapshot: str | None = None
    _maybe_fence = False  # a fence may be open: the front waits for a paragraph
    # The options, when they are the defaults (see __init__).
    _lenient = False
    _skip_code = True
    _widgets: Widgets | None = None
    _max_hold: int | None = DEFAULT_MAX_HOLD
    _mapped = False
    _implementation: Implementation | None = None
    _own = True  # not mapped, lenient or with widgets (see _f)
    _brackets: dict[str, str] | None = None  # what each marker's widget shows of [ and ] (_shown)

    def __init__(
        self,
        *,
        lenient: bool = False,
        skip_code: bool = True,
        widgets: Widgets | None = None,
        max_hold: int | None = DEFAULT_MAX_HOLD,
        mapped: bool = False,
        implementation: Implementation | None = None,
    ) -> None:
        # (What starts at 0, False, None or a default is a class attribute until it changes:
        # a stream per answer pays for each attribute it sets here.)
        if not (lenient is False and skip_code is True and widgets is None):
            _check(lenient, skip_code, widgets)  # (the defaults need no check)
            self._lenient, self._skip_code, self._widgets = lenient, skip_code, widgets
            self._own = not (lenient or widgets)
        if max_hold is not DEFAULT_MAX_HOLD:
            if max_hold is not None and (type(max_hold) is not int or max_hold < 1):
                raise TypeError(f"max_hold must be a positive int or None, not {max_hold!r}")
            self._max_hold = max_hold
        if mapped is not False:
            if type(mapped) is not bool:
                raise TypeError(f"mapped must be bool, not {type(mapped).__name__}")
            self._mapped = mapped
            self._own = False
        if implementation is not None:
            self._implementation = implementation
        self._kernel = _kernel(implementation)
        self._lines: list[str] = []  # complete lines not released, in order
        self.marks: list[Mark] = []
        self.cuts: list[Cut] = []
        # The front (see _front): what it knows of the line being written.  The kernel's
        # StreamFront answers the common delta in one call (its own method is this stream's
        # `feed`: a Python call per delta would cost more than the work) and holds what the
        # front shares with it: the line's `state` (LINE_START: its first characters may still
        # make it code; FRONT_ON; FRONT_OFF: the rest waits for its end), its text not released
        # (`tail`, then the chunks in `parts`, `parts_length` long: joined only where they are
        # looked at), the last character released (`context`), how many clean and raw
        # characters of the next piece it released (`skip`, `raw`), the tail's length when it
        # was last looked at (`looked`), and `work`.  It holds the stream so that
        # `CleanStream().feed` alone keeps working, until close() ends that cycle.
        # A mapped stream's front releases text early too; its marks and cuts are found when
        # the line's whole piece is cleaned at its end (the front's text is a prefix of it).
        # A plain stream (not mapped, lenient or with widgets) lets the compiled front also end
        # lines and decide markers itself (`own`): the lines it ends stay in its `pending`
        # (`line_from` characters of it) until the scanner is given them (`_sync`), and
        # `mixed` says a delta of the line came this way, so the stream ends that line (a `~`
        # in it may open a fence).  After a sync, `pending` holds the incomplete line's chunks
        # (`pending_length` characters).
        self._f = self._kernel.StreamFront(
            self, [], FRONT_OFF if lenient else LINE_START, entity_name, self._own
        )
        self.feed = self._f.feed  # type: ignore[method-assign]

    @property
    def _scanner(self) -> StreamScanner:
        """The Markdown code scanner of the stream's lines, made when first needed: a stream
        whose lines the compiled front ends itself never needs one."""
        if self._code is None:
            self._code = stream_scanner(self._implementation)
        return self._code

    @property
    def held(self) -> str:
        """The raw text not released yet."""
        front = self._f
        front.enter()  # (see close)
        try:
            # The end of the lines and pending pieces, read from their end: a server that
            # reads it after every delta pays for what is held, not for the whole line.
            wanted = self._held_length + front.pending_length - front.line_from - front.raw
            return _last_chars((front.pending, self._lines), wanted)
        finally:
            front.leave()

    @property
    def work(self) -> int:
        """The characters looked at so far (for the linearity tests)."""
        work: int = self._f.work
        return work

    @property
    def released(self) -> int:
        """How much of the stream's text (code points) is released: its clean text is final
        (and, in a mapped stream, its marks and cuts are recorded)."""
        released: int = self._released + self._f.line_from + self._f.raw
        return released

    def feed(self, chunk: str) -> str:
        """Take the next piece of the answer; returns the clean text released so far."""
        return self._f.feed(chunk)  # type: ignore[no-any-return]

    def _slow(self, chunk: str) -> str:
        """`feed` where the kernel's front leaves the delta to the stream."""
        check_chunk(chunk)
        if self._snapshot:
            raise ValueError("feed() after feed_snapshot(): give every piece as snapshots")
        if chunk:
            # Only a delta with text rules snapshots out: the compiled front takes an empty
            # one without calling here, and feed_snapshot reads its `work` for the others.
            self._snapshot = ""
        self._sync()
        out = self._feed(chunk)
        front = self._f
        front.on = front.waiting = False
        front.own = self._own and not self._closed
        if self._f.state == FRONT_ON and not front.parts:
            # The kernel's front takes the next delta: prose after a tail of blanks, brackets
            # and separators, or, while a START waits for its STOP, what cannot decide it.
            tail = front.tail
            start = tail.rfind(START)
            if start >= 0 and tail.find(STOP, start) < 0:
                front.waiting = True
            else:
                front.on = _FRONT_STOPS.search(tail) is None
        return out

    def feed_snapshot(self, text: str) -> str:
        """Take the whole answer so far, for producers that send cumulative snapshots
        instead of pieces: what it adds to the previous snapshot is fed.  A snapshot that
        does not start with the previous one is a ValueError, and so is mixing snapshots
        with `feed`.  Comparing the two costs the snapshot's length, which is the size of
        the input: linear."""
        if not isinstance(text, str):
            raise TypeError(f"text must be str, not {type(text).__name__}")
        previous = self._snapshot
        if previous == "" or (previous is None and self._f.work):
            raise ValueError("feed_snapshot() after feed(): give every piece as deltas")
        self._f.own = False  # a feed() now reaches _slow, which refuses it
        previous = previous or ""
        if not text.startswith(previous):
            raise ValueError(
                "text must start with the previous snapshot (feed_snapshot takes the whole "
                "text so far; a producer that rewrote earlier text needs a new stream)"
            )
        text = str.__str__(text)
        added = text[len(previous) :]
        self._f.enter()  # (see close)
        try:
            self._sync()
            self._snapshot = text if text else None
            return self._feed(added)
        finally:
            self._f.leave()

    def _feed(self, chunk: str) -> str:
        if self._closed:
            raise ValueError("feed() after close()")
        chunk = str.__str__(chunk)
        front = self._f
        front.work += len(chunk)
        front.pending.append(chunk)
        front.pending_length += len(chunk)
        if "\n" not in chunk and "\r" not in chunk:
            if "~" in chunk:
                front.mixed = True
            if self._f.state == FRONT_OFF:
                return ""
            front.parts.append(chunk)
            front.parts_length += len(chunk)
            return self._front()
        data = "".join(front.pending)
        front.work += len(data)
        # Complete lines end at the last line break, unless it is a "\r" a "\n" may follow.
        last = len(data) - 1 if data.endswith("\r") else len(data)
        complete = max(data.rfind("\n", 0, last), data.rfind("\r", 0, last)) + 1
        front.pending = [data[complete:]] if complete < len(data) else []
        front.pending_length = len(data) - complete
        self._scan(data[:complete], final=False)
        out = self._release(final=False)
        if not self._lenient:
            if "`" in data or "~" in data:
                self._maybe_fence = True  # cleared where the scanner rules a fence out
            out += self._new_line(data[complete:])
        return out

    def close(self) -> str:
        """Release everything held: the end of the stream decides it all."""
        if self._closed:
            return ""
        front = self._f
        whole = self._released + front.pending_length  # the stream's length, all released
        # The compiled front ends a line it owns itself, and closes: no scan, no join.  (Like
        # every call of the stream, finish is refused while another runs.)
        out: str | None = front.finish()
        self._closed = True
        if out is not None:
            self._released = whole
            return out
        # The stream's calls run one at a time (another thread's, or a widget's on this
        # stream, is refused while one runs), so its state is never torn.
        front.enter()
        try:
            self._sync()
            data = "".join(front.pending)
            front.work += len(data)
            front.on = front.waiting = front.own = False
            front.owner = CLOSED_OWNER
            front.pending = []
            front.pending_length = front.line_from = 0
            self._scan(data, final=True)
            return self._release(final=True)
        finally:
            front.leave()

    def _sync(self) -> None:
        """Give the scanner the lines the compiled front ended itself (they held no code: the
        front takes only lines that cannot, so the scanner finds none in them)."""
        front = self._f
        if not front.line_from:
            return
        data = "".join(front.pending)
        text, rest = data[: front.line_from], data[front.line_from :]
        front.pending = [rest] if rest else []
        front.pending_length = len(rest)
        front.line_from = 0
        front.work += len(text)
        self._scanner.scan(text, self._complete)
        self._scanner.take_code_ranges()  # none
        self._complete += len(text)
        self._released += len(text)

    def _scan(self, lines: str, final: bool) -> None:
        """Feed complete lines (and, when final, a last incomplete one) to the scanner."""
        if not lines and not final:
            return
        scanner = self._scanner
        scanner.scan(lines, self._complete)
        if final:
            scanner.finish()
        self._complete += len(lines)
        if lines:
            self._lines.append(lines)
            self._held_length += len(lines)

    def _release(self, final: bool) -> str:
        scanner = self._scanner
        cut = self._complete
        if not final and scanner.in_paragraph and scanner.ticked_from is not None:
            if self._max_hold is not None and self._held_length > self._max_hold:
                scanner.settle()  # the bound: pair the backticks seen so far
            else:
                cut = scanner.ticked_from
        if cut <= self._released:
            return ""
        held = "".join(self._lines)
        piece, rest = held[: cut - self._released], held[cut - self._released :]
        self._f.work += len(held)
        self._lines = [rest] if rest else []
        self._held_length = len(rest)
        base = self._released
        self._released = cut
        # Every code range found so far ends before the cut: code ranges are found in order, and a
        # paragraph still waiting for its backticks ends before any later one is found.
        found = scanner.take_code_ranges()
        code_ranges = [(a - base, b - base) for a, b in found] if self._skip_code else []
        front = self._f
        skip, raw, front.skip, front.raw = front.skip, front.raw, 0, 0
        kept = 0  # characters of the piece already out, kept as its clean text's start
        if raw:
            # The front released the piece's first `raw` characters as `skip` clean ones (in a
            # mapped stream, with their marks and cuts), ending on a character that stays: the
            # rest is cleaned after that one, as it is in the whole piece.
            kept = 1
            piece = piece[raw - 1 :]
            code_ranges = [(max(a - raw + 1, 0), b - raw + 1) for a, b in code_ranges if b > raw]
            base += raw - 1
        if not self._mapped:
            return self._clean_piece(piece, code_ranges)[kept:]
        mapped = _clean_mapped(self._kernel, piece, code_ranges, self._lenient, self._widgets)
        shift = self._clean_length + skip - kept
        self._clean_length = shift + len(mapped.text)
        self._record(mapped, base, shift)
        return mapped.text[kept:]

    def _front_mapped(self, context: str, piece: str) -> str:
        """The front's release of `piece` (after `context`, the last character released) in a
        mapped stream, its marks and cuts recorded at once: an offset into the text released
        can be placed as soon as it is out."""
        front = self._f
        mapped = _clean_mapped(self._kernel, context + piece, [], False, self._widgets)
        # Where context + piece starts, in the stream and in its clean text (the context is
        # a character that stays).
        raw = self._released + front.raw - len(context)
        self._record(mapped, raw, self._clean_length + front.skip - len(context))
        return mapped.text[len(context) :]

    def _record(self, mapped: Mapped, raw: int, clean: int) -> None:
        """Add the marks and cuts of a piece cleaned on its own, which starts at `raw` in the
        stream and at `clean` in its clean text."""
        self.marks += [
            mark._replace(start=mark.start + clean, end=mark.end + clean) for mark in mapped.marks
        ]
        cuts = [Cut(a + raw, b + raw, c + clean, d + clean) for a, b, c, d in mapped.cuts]
        if cuts:
            # (a removal that touches the last piece's, after a line that went whole, is one
            # cut with it, as in the whole text)
            _add(self.cuts, cuts[0])
            self.cuts += cuts[1:]

    # -- the front: the line being written, out before its end ----------------------------

    def _new_line(self, line: str) -> str:
        """A line starts (its text so far is `line`): the front takes it when nothing is
        held before it and no fence may be open (a paragraph or a neutral scanner rules one
        out; only a line starting with a backtick or a tilde may open one)."""
        scanner = self._scanner
        if scanner.in_paragraph or scanner.neutral:
            self._maybe_fence = False
        front = self._f
        front.tail, front.context = "", ""
        front.parts.clear()
        front.parts_length = 0
        front.looked = 0
        front.mixed = "~" in line
        if self._lines or self._maybe_fence or self._closed:
            self._f.state = FRONT_OFF
            return ""
        self._f.state = LINE_START
        if not line:
            return ""
        front.parts.append(line)
        front.parts_length = len(line)
        return self._front()

    def _tail_text(self) -> str:
        front = self._f
        if front.parts:
            front.tail = "".join([front.tail, *front.parts])
            front.parts.clear()
            front.parts_length = 0
        tail: str = front.tail
        return tail

    def _front(self) -> str:
        """Release what is decided of the line being written: text that no later character
        of the stream can change.  In a line that cannot be code (not in a fence, not
        indented, no backtick), only a marker changes text, and a marker reaches back only
        over blanks, brackets and separators (the spacing rule) or to the `[` of a link it
        is the destination of.  So the text goes out up to its last character that is none
        of those, once every marker before that is decided (a START by its STOP, a DELIM's
        ids by a character that cannot continue them) and before the first `[` a marker may
        still unwrap (`_link_end`).  The piece is cleaned after the last character
        released, which gives the kernel the context it has in the whole line.
        A tail longer than SHORT_HOLD is looked at again only once it has doubled (linear)."""
        front = self._f
        length = len(front.tail) + front.parts_length
        if SHORT_HOLD < length < 2 * self._f.looked:
            return ""
        tail = self._tail_text()
        front.work += length
        self._f.looked = length
        if self._f.state == LINE_START:
            # The line's first characters: blanks and container marks say nothing yet.
            zone = len(tail) - len(tail.lstrip(LINE_ZONE))
            if zone == len(tail):
                return ""
            lead = tail[:zone]
            if "\t" in lead or "    " in lead or tail[zone] in "`~":
                self._f.state = FRONT_OFF  # maybe code (indented, or a fence opener)
                if tail[zone] in "`~":
                    self._maybe_fence = True
                return ""
            self._f.state = FRONT_ON
        if "\r" in tail:
            self._f.state = FRONT_OFF
            return ""
        cut = len(tail)
        tick = tail.find("`")
        if tick >= 0:
            # A backtick may open inline code: the rest of the line waits.
            cut = tick
            self._f.state = FRONT_OFF
        cut = _link_end(tail, cut, self._shown if self._widgets else None)
        # The last START, STOP and DELIM below the cut, kept while the cut, which only goes
        # down, stays above them (len(tail): not looked for yet): each character is read
        # once (a search per DELIM would make a line of bare ids quadratic).
        start = stop = delim = len(tail)
        while True:
            cut = _plain_end(tail, cut)
            if start >= cut:
                start = tail.rfind(START, 0, cut)
            if start >= 0:
                if stop >= cut:
                    stop = tail.rfind(STOP, 0, cut)
                if stop < start:
                    cut = start  # a START its STOP may still close
                    continue
            if delim >= cut:
                delim = tail.rfind(DELIM, 0, cut)
            if delim >= 0 and _ID_CHARS.fullmatch(tail, delim + 1, cut) is not None:
                cut = delim  # ids that may go on
                continue
            break
        if cut == 0:
            return ""
        piece = tail[:cut]
        front.tail = tail[cut:]
        self._f.looked = len(tail) - cut
        context = front.context
        if self._mapped:
            shown = self._front_mapped(context, piece)
        else:
            shown = self._clean_piece(context + piece, [])[len(context) :]
        front.context = piece[-1]
        front.skip += len(shown)
        front.raw += cut
        return shown

    def _shown(self, marker: str) -> str:
        """The brackets the stream's widgets show for a whole marker, for `_link_end` (a
        family they do not render shows none: its body has none).  Kept for each marker
        text, as a held line is looked at again with each delta."""
        word = FAMILY_WORD_RE.match(marker, 1)
        if self._widgets is None or ("" if word is None else word.group()) not in self._widgets:
            return ""
        if self._brackets is None:
            self._brackets = {}
        brackets = self._brackets.get(marker)
        if brackets is None:
            read = _marker(marker, self._kernel.scan(marker, [])[0])
            shown = "" if read is None else _replacement(read, self._widgets)
            brackets = self._brackets[marker] = "".join(c for c in shown if c in "[]")
        return brackets

    def _clean_piece(self, piece: str, code_ranges: list[tuple[int, int]]) -> str:
        if self._lenient:
            piece, code_ranges = _degraded(piece, code_ranges)
        elif not self._kernel.has_markers(piece):
            return piece
        if not self._widgets:
            fast: str | None = self._kernel.clean(piece, code_ranges, entity_name, True)
            if fast is not None:
                return fast
        return _clean(self._kernel, piece, code_ranges, self._widgets)[0]
