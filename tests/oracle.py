"""A slow, obviously-correct reference for the drop-in contract (the README and
tests/core/test_contract.py).

It deliberately works the way the guide's helper does: one regular expression per call,
built from the escaped family names, a lazy body up to the first STOP, then per-match
validation with the guide's two rules.  Stripping is the literal sequence of slices.
Both are quadratic in bad cases; use them on small inputs only.

Nothing here imports citemark, so the package's constants are checked against these
literals rather than against themselves.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

START = "\ue200"
DELIM = "\ue202"
STOP = "\ue201"

SOURCE_ID = re.compile(r"[A-Za-z0-9_-]+")
LOCATOR = re.compile(r"L\d+(?:-L\d+)?")  # `\d` on a str pattern: str.isdecimal()


def marker_regex(families: Iterable[Any]) -> re.Pattern[str]:
    """START, one of the families (tried in order), DELIM, the shortest body, STOP.

    `re.escape` turns each family into a literal; a non-str family makes it (or the
    join) raise TypeError, exactly as in the helper.  An iterable that yields nothing
    gives the empty alternative, i.e. the family "".
    """
    alternatives = "|".join(re.escape(family) for family in families)
    return re.compile(f"{START}(?P<family>{alternatives}){DELIM}(?P<body>.*?){STOP}", re.DOTALL)


def parse_body(body: str) -> tuple[list[str], str | None] | None:
    """(source ids, locator) when the body is a citation, else None."""
    parts = []
    for piece in body.split(DELIM):
        piece = piece.strip()
        if piece != "":
            parts.append(piece)
    if len(parts) == 0:
        return None
    locator = None
    if LOCATOR.fullmatch(parts[-1]) is not None:
        locator = parts[-1]
        parts = parts[:-1]
    if len(parts) == 0:
        return None
    for part in parts:
        if SOURCE_ID.fullmatch(part) is None:
            return None
    return parts, locator


def extract_citations(text: Any, *, families: Any = ("cite",)) -> list[dict[str, Any]]:
    if not families:
        return []
    pattern = marker_regex(families)
    found = []
    for match in pattern.finditer(text):  # TypeError for anything but str
        parsed = parse_body(match.group("body"))
        if parsed is None:
            continue
        source_ids, locator = parsed
        citation = {}
        citation["raw"] = match.group(0)
        citation["family"] = match.group("family")
        citation["source_ids"] = source_ids
        citation["locator"] = locator
        citation["start"] = match.start()
        citation["end"] = match.end()
        found.append(citation)
    return found


def strip_citations(text: Any, citations: Iterable[Any]) -> Any:
    """Slice each citation out, by `start` from last to first; ties keep their order."""
    last_first = sorted(citations, key=lambda citation: citation["start"], reverse=True)
    for citation in last_first:
        text = text[: citation["start"]] + text[citation["end"] :]
    return text


# --- helpers for the tests ------------------------------------------------------------


def outcome(function: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[str, Any]:
    """("ok", result) or ("raises", exception type): what the tests compare."""
    try:
        return "ok", function(*args, **kwargs)
    except Exception as error:
        return "raises", type(error)


def summary(citations: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The short, hand-writable form of a result: (family, source_ids, locator, start, end)."""
    return [(c["family"], c["source_ids"], c["locator"], c["start"], c["end"]) for c in citations]
