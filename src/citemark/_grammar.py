"""Shared facts of the marker grammar: the marker characters, the guide's id and locator
rules, the result type, and the argument checks that both scanners rely on.

Nothing here scans text; the kernel (`_scan_c`) and its twin (`_scan_py`) do that.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TypedDict

CITATION_START = "\ue200"
CITATION_DELIMITER = "\ue202"
CITATION_STOP = "\ue201"

# The guide's own rules, exported for drop-in users.  The scanners implement them with
# per-character predicates (ASCII id characters; `str.isdecimal` digits, which is what
# `\d` means for a `str` pattern) and the differential tests hold them to these patterns.
SOURCE_ID_RE = re.compile(r"^[A-Za-z0-9_-]+$")
LINE_LOCATOR_RE = re.compile(r"^L\d+(?:-L\d+)?$")

DEFAULT_FAMILIES: tuple[str, ...] = ("cite",)


class Citation(TypedDict):
    raw: str
    family: str
    source_ids: list[str]
    locator: str | None
    start: int
    end: int


def check_families(families: Iterable[str]) -> tuple[str, ...]:
    """Materialise `families` once (a generator is read once, a `str` char by char) and
    check every item, as the guide's helper does when it escapes them.

    Call it only for truthy `families` (empty ones match nothing).  A `str` subclass
    becomes a plain `str`, because the helper reports the family as a
    slice of the text, which is always a plain `str`.
    """
    if type(families) is tuple and families == DEFAULT_FAMILIES:
        return DEFAULT_FAMILIES
    checked = []
    for family in families:
        if type(family) is not str:
            if not isinstance(family, str):
                raise TypeError(f"families must hold str items, not {type(family).__name__}")
            family = str.__str__(family)
        checked.append(family)
    # A truthy iterable that yields nothing (an exhausted iterator): the helper joins no
    # alternatives, and its empty family group matches the family "".
    return tuple(checked) or ("",)


def check_text(text: object) -> str:
    """`text` as a plain `str`.  A subclass is copied once: the helper reads its characters
    through `re`, never its (possibly overridden) methods, and returns plain `str` values."""
    if type(text) is str:
        return text
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    return str.__str__(text)
