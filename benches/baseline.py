"""The reference every benchmark is measured against: a regex scanner that behaves like the
guide's helper (its contract is in the README and tests/core/test_contract.py), with the same
algorithm and the same costs.

* `extract_citations` builds the pattern ``START (family|...) DELIM (.*?) STOP`` with
  DOTALL on every call (``re.compile`` answers from the module's cache after the first
  call, exactly as in the helper), walks ``finditer``, splits each body on DELIM, strips
  the parts, drops the empty ones, pops an ``L\\d+(?:-L\\d+)?`` locator, checks the ids
  against ``^[A-Za-z0-9_-]+$`` and builds one dict per citation.  The lazy ``.*?`` makes a
  START with no later STOP scan to the end of the text, so many unterminated STARTs cost
  quadratic time, as in the helper.
* `strip_citations` sorts by start, last first, and rebuilds the text with two slices and
  a concatenation per citation: one full copy of the text per citation.

This module is benchmark-only code; it is not part of the package.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

START = "\ue200"
DELIM = "\ue202"
STOP = "\ue201"

_ID = re.compile(r"^[A-Za-z0-9_-]+$")
_LOCATOR = re.compile(r"^L\d+(?:-L\d+)?$")


def _marker_pattern(families: Iterable[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(name) for name in families)
    return re.compile(
        re.escape(START)
        + "(?P<family>"
        + alternatives
        + ")"
        + re.escape(DELIM)
        + "(?P<body>.*?)"
        + re.escape(STOP),
        re.DOTALL,
    )


def extract_citations(text: str, *, families: Iterable[str] = ("cite",)) -> list[dict[str, Any]]:
    if not families:
        return []
    found: list[dict[str, Any]] = []
    for m in _marker_pattern(families).finditer(text):
        pieces = [piece.strip() for piece in m.group("body").split(DELIM)]
        pieces = [piece for piece in pieces if piece]
        if not pieces:
            continue
        locator = None
        if _LOCATOR.fullmatch(pieces[-1]):
            locator = pieces.pop()
        if not pieces:
            continue
        if any(not _ID.fullmatch(piece) for piece in pieces):
            continue
        found.append(
            {
                "raw": m.group(0),
                "family": m.group("family"),
                "source_ids": pieces,
                "locator": locator,
                "start": m.start(),
                "end": m.end(),
            }
        )
    return found


def strip_citations(text: str, citations: Iterable[dict[str, Any]]) -> str:
    result = text
    for item in sorted(citations, key=lambda c: c["start"], reverse=True):
        result = result[: item["start"]] + result[item["end"] :]
    return result


def extract_many(texts: Iterable[str]) -> list[list[dict[str, Any]]]:
    """What a user of the helper writes for a batch: one call per text."""
    return [extract_citations(text) for text in texts]


def strip_many(texts: Iterable[str]) -> list[str]:
    """What a user of the helper writes to clean a batch: extract, then strip, per text."""
    return [strip_citations(text, extract_citations(text)) for text in texts]
