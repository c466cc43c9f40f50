"""Citations turned into something a reader can follow: numbered links, footnotes, HTML.

Readers see numbers, not ids: each source gets one number, by first appearance, so a source
cited twice points to the same note and every source of a multi-source marker is shown
(front ends that kept only the first id lost the others).

Only `http://` and `https://` URLs ever become links, in every style: a source list comes
from tools and web pages, and a `javascript:` or `data:` URL in it must not become a
clickable link.  Other URLs (and missing ones) render as the bare number.

The text around the citations is the caller's: the "html" style escapes what it inserts
(numbers, titles, URLs, labels), not the answer, which is usually Markdown on its way to a
renderer that does its own escaping.

Without a `parser`, rendering starts from `citemark.display`'s text: every citation family of
`CITATION_FAMILIES` becomes references, entity markers keep their names, other widgets go
through the `widgets` policy (removed by default), broken markers and stray marker
characters go, and markers in Markdown code stay literal.  With a `parser`, only that
grammar's citations are replaced (the text around them is copied as it is).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

from ._core.grammar import check_text
from .display import CITATION_FAMILIES, Marker, Widgets, _clean_for_render
from .parser import CitationSpan, Parser
from .sources import Source

__all__ = ["numbering", "render"]

RenderStyle = Literal["markdown", "footnotes", "html", "plain"]
Unknown = Literal["label", "drop", "raise"]
Sources = Mapping[str, Mapping[str, Any] | str | Source]

STYLES = ("markdown", "footnotes", "html", "plain")
UNKNOWN = ("label", "drop", "raise")

# A scheme we trust and no white space or control character (which browsers drop from
# URLs, so "java\tscript:" would otherwise get through).
_LINKABLE = re.compile(r"https?://[^\x00-\x20\x7f]+\Z", re.IGNORECASE)
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>~|])")


def numbering(
    text: str, parser: Parser | None = None, *, sources: Mapping[str, object] | None = None
) -> dict[str, int]:
    """Source id -> the number `render` gives it (1, 2, ... by first appearance).

    With `sources`, ids missing from it get no number, as in `render`.
    """
    numbers: dict[str, int] = {}

    def count(citation: CitationSpan | Marker) -> str:
        for source_id in citation.source_ids:
            if sources is None or source_id in sources:
                numbers.setdefault(source_id, len(numbers) + 1)
        return ""

    def destination(citation: CitationSpan | Marker) -> str | None:
        if sources is None or citation.family not in CITATION_FAMILIES:
            return None
        return _destination(citation, sources, "drop")

    if parser is None:
        _clean_for_render(
            text,
            lenient=False,
            widgets=dict.fromkeys(CITATION_FAMILIES, count),
            destination=destination,
        )
    else:
        _sub(parser, text, count, destination, sanitize=False)
    return numbers


def render(
    text: str,
    sources: Sources,
    *,
    style: RenderStyle = "markdown",
    parser: Parser | None = None,
    unknown: Unknown = "label",
    sanitize: bool = False,
    widgets: Widgets | None = None,
    lenient: bool = False,
) -> str:
    """`text` with each citation replaced by numbered references to its sources.

    `sources` maps a source id to `{"url": ..., "title": ...}` (both optional), to a URL
    string, or to a `Source` (a `Registry` works as it is).  Styles:
    "markdown" `[1](url)`; "footnotes" `[^1]` with `[^1]: [title](url)` lines appended;
    "html" `<sup><a href="url" title="title">1</a></sup>`; "plain" `[1]`.  A marker with
    several sources gives one reference per source, side by side; an id repeated inside a
    marker is shown once.

    An id missing from `sources` (`unknown=`): "label" shows the id in brackets,
    `[turn0search9]`, so the gap is visible and the reader can still tell citations apart;
    "drop" leaves it out (and the whole marker when no source is left, the surrounding
    white space staying as it is); "raise" raises KeyError with the id.

    Without `parser` the answer is cleaned as `citemark.display` does (`widgets` renders
    other families, `lenient=True` catches degraded markers).  A `parser` sets the grammar
    instead (families, `skip_code=True` to keep markers in Markdown code literal, ...);
    `sanitize=True` then also removes broken markers and stray marker characters (see
    `Parser.sub`).
    """
    if style not in STYLES:
        raise ValueError(f"style must be one of {', '.join(STYLES)}, not {style!r}")
    if unknown not in UNKNOWN:
        raise ValueError(f"unknown must be one of {', '.join(UNKNOWN)}, not {unknown!r}")
    if not isinstance(sources, Mapping):
        raise TypeError(
            "sources must be a mapping of id -> {'url', 'title'}, URL string or Source, "
            f"not {type(sources).__name__}"
        )
    if parser is not None and not isinstance(parser, Parser):
        raise TypeError(f"parser must be a citemark.Parser or None, not {type(parser).__name__}")
    numbers: dict[str, int] = {}

    def references(citation: CitationSpan | Marker) -> str:
        pieces = []
        for source_id in dict.fromkeys(citation.source_ids):
            if source_id in sources:
                number = numbers.setdefault(source_id, len(numbers) + 1)
                pieces.append(_reference(style, number, _link(source_id, sources[source_id])))
            elif unknown == "raise":
                raise KeyError(source_id)
            elif unknown == "label":
                pieces.append(_label(style, source_id))
        return "".join(pieces)

    def destination(citation: CitationSpan | Marker) -> str | None:
        if citation.family not in CITATION_FAMILIES or citation.family in (widgets or {}):
            return None
        return _destination(citation, sources, unknown)

    if parser is None:
        policy = {family: references for family in CITATION_FAMILIES}
        body = _clean_for_render(
            text, lenient=lenient, widgets={**policy, **(widgets or {})}, destination=destination
        )
    else:
        body = _sub(parser, text, references, destination, sanitize=sanitize)
    if style != "footnotes" or not numbers:
        return body
    notes = "\n".join(
        f"[^{n}]: {_footnote(source_id, _link(source_id, sources[source_id]))}"
        for source_id, n in numbers.items()
    )
    separator = "" if not body else "\n" if body.endswith("\n") else "\n\n"
    return f"{body}{separator}{notes}\n"


def _destination(
    citation: CitationSpan | Marker, sources: Mapping[str, object], unknown: str
) -> str:
    """What a citation that is a link's destination, `[text](<marker>)`, becomes: the URL of
    its first source that has one we link to (the link then goes there), else nothing (the
    link text stays, as `clean` leaves it)."""
    for source_id in citation.source_ids:
        if source_id in sources:
            url = _linkable(_link(source_id, sources[source_id]).get("url"))
            if url is not None:
                return _markdown_url(url)
        elif unknown == "raise":
            raise KeyError(source_id)
    return ""


def _sub(
    parser: Parser,
    text: str,
    references: Callable[[CitationSpan], str],
    destination: Callable[[CitationSpan], str | None],
    *,
    sanitize: bool,
) -> str:
    """`parser.sub(text, references)`, a citation that is a link's destination given by
    `destination` (code point offsets, as `sub` gives)."""
    plain = check_text(text)

    def replace(citation: CitationSpan) -> str:
        if plain.startswith("](", citation.start - 2) and plain.startswith(")", citation.end):
            shown = destination(citation) if citation.start >= 2 else None
            if shown is not None:
                return shown
        return references(citation)

    return parser.sub(plain, replace, sanitize=sanitize)


def _link(source_id: str, source: object) -> Mapping[str, Any]:
    """A source as {"url", "title"}: a URL string or a `Source` is read as one."""
    if isinstance(source, str):
        return {"url": source}
    if isinstance(source, Mapping):
        return source
    if isinstance(source, Source):
        return {"url": source.url, "title": source.title}
    raise TypeError(
        f"source {source_id!r} must be a mapping with 'url'/'title', a URL string or a Source, "
        f"not {type(source).__name__}"
    )


def _reference(style: str, number: int, source: Mapping[str, Any]) -> str:
    if style == "footnotes":
        return f"[^{number}]"
    url = _linkable(source.get("url"))
    if style == "plain" or url is None:
        return f"<sup>{number}</sup>" if style == "html" else f"[{number}]"
    if style == "markdown":
        return f"[{number}]({_markdown_url(url)})"
    title = source.get("title")
    title_attribute = f' title="{html.escape(str(title))}"' if title else ""
    return f'<sup><a href="{html.escape(url)}"{title_attribute}>{number}</a></sup>'


def _label(style: str, source_id: str) -> str:
    if style == "html":
        return f"<sup>[{html.escape(source_id)}]</sup>"
    if style == "plain":
        return f"[{source_id}]"
    return f"[{_markdown_text(source_id)}]"


def _footnote(source_id: str, source: Mapping[str, Any]) -> str:
    url = _linkable(source.get("url"))
    title = source.get("title") or source.get("url") or source_id
    text = _markdown_text(" ".join(str(title).split()))
    return f"[{text}]({_markdown_url(url)})" if url else text


def _linkable(url: object) -> str | None:
    return url if isinstance(url, str) and _LINKABLE.match(url) else None


def _markdown_url(url: str) -> str:
    return re.sub(r"([\\()])", r"\\\1", url)


def _markdown_text(text: str) -> str:
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)
