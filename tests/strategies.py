"""Hypothesis strategies shared by the tests and by fuzz/ (its drivers import this module).

Inputs weighted toward what the grammar reacts to: Parser configurations over every option
(`configs`), texts for one configuration (`texts_for`), both at once (`cases`), Arrow rows
(`rows`), JSONL lines (`jsonl_lines`) and the ways to cut a text into chunks (`cuts`).
"""

from __future__ import annotations

import gc
import json
import re
import weakref
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import assume
from hypothesis import strategies as st

from parser_oracle import DELIM as D
from parser_oracle import START as S
from parser_oracle import STOP as E
from parser_oracle import WORD

FAMILY_NAMES = ["cite", "filecite", "navlist", "i", "c", "ci", ""]
IDS = ["turn0search0", "turn1news2", "turn0file1", "turn12view3", "block5", "abc", "ABC9"]
LOCATORS = ["L8-L13", "L8", "L١٢-L١٣", "L１", "L٣", "L8-13", "L", "L²", "p.12", "p.", "l7"]
URLS = ["https://example.com/a?b=1", "http://x.y", "https://", "ftp://x"]
SPACES = [" ", "  ", "\n", "\t", "\u3000", "\x1c", "\u00a0", "\u0085", "\u2028"]
DIGITS = ["١", "٣", "७", "１", "²", "7"]
ODD = ["😀", "\U00010348", "é", "€", "中", "\ud800", "\x00", "\u200b", "-", "_", ".", "/"]
PRIVATE = ["\ue203", "\ue204", "\ue205", "\ue206", S, D, E]
MARKDOWN = ["`", "``", "```\n", "\n```\n", "~~~\n", "\n\n    ", "    "]
ATOMS = [*IDS, *LOCATORS, *URLS, *SPACES, *DIGITS, *ODD, *PRIVATE, *MARKDOWN, "prose ", ". "]

# Marker triples: the guide's (weighted), readable ones, control characters, the guide's
# characters in another order, and random triples (see `markers`).
MARKER_SETS = [
    (S, D, E),
    (S, D, E),
    (S, D, E),
    ("[", "|", "]"),
    ("\x01", "\x02", "\x03"),
    ("<", ",", ">"),
    (E, D, S),
    ("\ue203", " ", "\ue204"),
    ("😀", "\n", "."),
]
MARKER_ALPHABET = [*"[|]<>,.-L_a1 \n`", "😀", "\x00", "١", *PRIVATE]

SOURCE_IDS: list[Any] = [
    r"[A-Za-z0-9_-]+",
    r"[A-Za-z0-9_-]+",
    r"^[A-Za-z0-9_-]+$",  # the guide's spelling: still the built-in rule
    r"https?://\S+",
    r"[a-z]+\d*",
    r"\S+",
    re.compile(r"[a-z]+", re.IGNORECASE),
]
LOCATOR_PATTERNS: list[Any] = [
    r"L\d+(?:-L\d+)?",
    r"L\d+(?:-L\d+)?",
    r"^L\d+(?:-L\d+)?$",
    r"p\.\d+",
    r"L\d+",
    re.compile(r"l\d+", re.IGNORECASE),
]
MAX_LENGTHS = [None, None, None, None, 1, 5, 12, 20, 40]


@st.composite
def markers(draw: st.DrawFn) -> tuple[str, str, str]:
    if draw(st.integers(0, 3)) == 0:
        trio = draw(st.lists(st.sampled_from(MARKER_ALPHABET), min_size=3, max_size=3, unique=True))
        return trio[0], trio[1], trio[2]
    return draw(st.sampled_from(MARKER_SETS))


@st.composite
def configs(draw: st.DrawFn, *, allow_code: bool = False) -> dict[str, Any]:
    """Parser options (without `implementation` and `offsets`)."""
    start, delimiter, stop = draw(markers())
    any_family = draw(st.integers(0, 4)) == 0
    if any_family:
        # rejected (see test_any_family_with_a_word_character_delimiter)
        assume(delimiter not in WORD)
    family = st.one_of(
        st.sampled_from(FAMILY_NAMES),
        st.text([*"citenav.", start, delimiter, stop, " "], max_size=4),
    )
    options: dict[str, Any] = {
        "families": tuple(draw(st.lists(family, min_size=1, max_size=3))),
        "any_family": any_family,
        "start": start,
        "delimiter": delimiter,
        "stop": stop,
        "source_id": draw(st.sampled_from(SOURCE_IDS)),
        "locator": draw(st.sampled_from(LOCATOR_PATTERNS)),
        "max_marker_length": draw(st.sampled_from(MAX_LENGTHS)),
    }
    if allow_code:
        options["skip_code"] = draw(st.booleans())
    return options


def texts_for(options: dict[str, Any]) -> st.SearchStrategy[str]:
    """Texts weighted toward what this configuration reacts to: whole markers (often with
    a valid body), supported prose, markers in code, loose marker characters and atoms."""
    start, delimiter, stop = options["start"], options["delimiter"], options["stop"]
    names = st.one_of(
        st.sampled_from(options["families"]),
        st.sampled_from(options["families"]),
        st.sampled_from([*FAMILY_NAMES, "image_group"]),
    )
    padding = st.sampled_from(["", "", "", " ", "\n", "\u3000"])
    valid_body = st.tuples(
        padding,
        st.lists(st.sampled_from([*IDS, "a", "x9", URLS[0]]), min_size=1, max_size=3),
        st.one_of(st.just(None), st.sampled_from(LOCATORS)),
        padding,
    ).map(
        lambda parts: (
            parts[0] + delimiter.join(parts[1] + ([parts[2]] if parts[2] else [])) + parts[3]
        )
    )
    any_body = st.lists(
        st.sampled_from([*IDS, *LOCATORS, *URLS, *SPACES[:4], *DIGITS, delimiter, delimiter, " "]),
        max_size=5,
    ).map("".join)
    whole = st.tuples(
        names, st.one_of(valid_body, valid_body, any_body), st.sampled_from([stop] * 4 + ["", E])
    ).map(lambda parts: start + parts[0] + delimiter + parts[1] + parts[2])
    wrapped = st.tuples(
        st.sampled_from(["\ue203Claim.\ue204 ", "\ue203A\ue204", "`", "```\n", "\n\n    "]),
        whole,
        st.sampled_from(["", "`", "\n```\n", "\ue206", "\n"]),
    ).map("".join)
    loose = st.sampled_from([*ATOMS, start, start, delimiter, delimiter, stop, stop])
    piece = st.one_of(whole, whole, whole, wrapped, loose, loose, names, st.characters())
    return st.lists(piece, min_size=1, max_size=10).map("".join)


@st.composite
def cases(draw: st.DrawFn, *, allow_code: bool = False) -> tuple[dict[str, Any], str]:
    options = draw(configs(allow_code=allow_code))
    return options, draw(texts_for(options))


def guide_texts() -> st.SearchStrategy[str]:
    """Texts for the guide's grammar (the default Parser, the Arrow and JSONL paths)."""
    return texts_for({"families": ("cite",), "start": S, "delimiter": D, "stop": E})


def rows() -> st.SearchStrategy[list[str | None]]:
    """Rows of a string column: nulls, empty strings and guide texts."""
    row = st.one_of(st.none(), st.just(""), guide_texts(), guide_texts())
    return st.lists(row, max_size=8)


def jsonl_lines() -> st.SearchStrategy[str]:
    """Lines of a JSONL log: records with a text field (string, null, number), broken JSON
    and blank lines."""
    record = st.fixed_dictionaries(
        {"text": st.one_of(guide_texts(), st.none(), st.integers())},
        optional={"id": st.integers(0, 99), "other": st.sampled_from(ATOMS)},
    ).map(lambda value: json.dumps(value, ensure_ascii=False))
    broken = st.sampled_from(["{", '{"text": ', "[]", "null", '"x"', "", "   "])
    return st.one_of(record, record, record, broken)


def cuts(text: str) -> st.SearchStrategy[list[int]]:
    """Sorted cut points inside `text`: where a stream delivers its chunks."""
    return st.lists(st.integers(0, len(text)), max_size=12).map(sorted)


def chunked(text: str, cuts: list[int]) -> list[str]:
    """`text` cut at `cuts` (taken modulo its length): the chunks a stream receives."""
    bounds = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    return [text[a:b] for a, b in pairwise(bounds)]


def feed_all(stream: Any, chunks: list[str]) -> tuple[str, list[Any]]:
    """What a `StreamParser` gives for `chunks` then `close()`: the text and the citations."""
    text, citations = [], []
    for chunk in chunks:
        update = stream.feed(chunk)
        text.append(update.text)
        citations += update.citations
    update = stream.close()
    return "".join([*text, update.text]), citations + update.citations


def closed_and_freed(make: Callable[[], Any], first: str) -> Any:
    """Feed `first` to a stream `make()` gives, close it, and check what a closed stream owes:
    a feed after close still raises as before, and the stream goes with its last reference,
    the collector off (its front holds it only until close).  Returns what the first feed
    released."""
    stream = make()
    feed = stream.feed
    released = feed(first)
    stream.close()
    with pytest.raises(ValueError, match="after close"):
        feed("more")
    with pytest.raises(TypeError, match="chunk must be str"):
        feed(b"bytes")
    gone = weakref.ref(stream)
    gc.disable()
    try:
        del stream, feed
        assert gone() is None
    finally:
        gc.enable()
    return released
