"""Every corner of the drop-in contract as an explicit example, on the kernel and on the twin.

Each example is checked twice: against the oracle (same value, or same exception type)
and against a hand-written expectation.
"""

from __future__ import annotations

import copy
import pickle
import re
import sys
import sysconfig
import types
from typing import Any

import pytest

import citemark
import oracle
from citemark._core.dropin import CITATION_TEMPLATE, DropIn
from citemark._core.grammar import Citation
from citemark._kernels.loader import load
from oracle import DELIM as D
from oracle import START as S
from oracle import STOP as E
from oracle import outcome, summary


def marker(family: str, *parts: str) -> str:
    return S + family + D + D.join(parts) + E


def check_extract(api: Any, text: Any, expected: Any, **kwargs: Any) -> list[dict[str, Any]]:
    """Same as the oracle, and the expected summary (or exception type)."""
    got = outcome(api.extract_citations, text, **kwargs)
    assert got == outcome(oracle.extract_citations, text, **kwargs)
    if isinstance(expected, type):
        assert got == ("raises", expected)
        return []
    assert got[0] == "ok"
    assert summary(got[1]) == expected
    return got[1]


def check_strip(api: Any, text: Any, citations: list[Any], expected: Any) -> None:
    got = outcome(api.strip_citations, text, list(citations))
    assert got == outcome(oracle.strip_citations, text, list(citations))
    if isinstance(expected, type):
        assert got == ("raises", expected)
    else:
        assert got == ("ok", expected)
        assert type(got[1]) is type(expected)


# --- exported names -------------------------------------------------------------------


def test_marker_constants_are_the_guides() -> None:
    assert (citemark.CITATION_START, citemark.CITATION_DELIMITER, citemark.CITATION_STOP) == (
        "\ue200",
        "\ue202",
        "\ue201",
    )


def test_exported_patterns_are_the_guides() -> None:
    assert citemark.SOURCE_ID_RE.pattern == r"^[A-Za-z0-9_-]+$"
    assert citemark.LINE_LOCATOR_RE.pattern == r"^L\d+(?:-L\d+)?$"
    assert citemark.SOURCE_ID_RE.flags == oracle.SOURCE_ID.flags
    assert citemark.LINE_LOCATOR_RE.flags == oracle.LOCATOR.flags


def test_citation_typeddict_has_the_six_keys_in_order() -> None:
    assert list(citemark.Citation.__annotations__) == [
        "raw",
        "family",
        "source_ids",
        "locator",
        "start",
        "end",
    ]


def test_implementation_names_the_chosen_scanner() -> None:
    assert citemark.IMPLEMENTATION in ("cython", "python")


# --- families -------------------------------------------------------------------------


@pytest.mark.parametrize("families", [(), [], "", None, 0, {}], ids=repr)
@pytest.mark.parametrize("text", [marker("cite", "turn0"), None, b"x", 5], ids=repr)
def test_empty_families_return_nothing_whatever_the_text(api, families, text) -> None:
    check_extract(api, text, [], families=families)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (marker("c", "turn0"), [("c", ["turn0"], None, 0, 9)]),
        (marker("e", "turn0"), [("e", ["turn0"], None, 0, 9)]),
        (marker("cite", "turn0"), []),
    ],
    ids=["first-char", "last-char", "whole-word"],
)
def test_str_families_are_iterated_by_character(api, text, expected) -> None:
    check_extract(api, text, expected, families="cite")


def test_families_may_be_a_generator(api) -> None:
    text = marker("navlist", "turn0") + marker("cite", "turn1") + marker("x", "turn2")
    got = api.extract_citations(text, families=(f for f in ["navlist", "cite"]))
    assert got == oracle.extract_citations(text, families=iter(["navlist", "cite"]))
    assert summary(got) == [("navlist", ["turn0"], None, 0, 15), ("cite", ["turn1"], None, 15, 27)]


@pytest.mark.parametrize(
    "families",
    [lambda: iter([]), lambda: (f for f in ()), lambda: iter(())],
    ids=["iter-list", "generator", "iter-tuple"],
)
def test_an_iterable_of_no_families_is_the_empty_family(api, families) -> None:
    # Not falsy, so the helper goes on and joins no alternatives: the pattern's family
    # group is empty, which is the family "".
    text = marker("", "turn0") + marker("cite", "turn1")
    got = api.extract_citations(text, families=families())
    assert got == oracle.extract_citations(text, families=families())
    assert summary(got) == [("", ["turn0"], None, 0, 8)]


@pytest.mark.parametrize(
    ("families", "text", "expected"),
    [
        (("c.te",), marker("cite", "turn0"), []),
        (("c.te",), marker("c.te", "turn0"), [("c.te", ["turn0"], None, 0, 12)]),
        (("a|b",), marker("a", "turn0"), []),
        (("a|b",), marker("b", "turn0"), []),
        (("a|b",), marker("a|b", "turn0"), [("a|b", ["turn0"], None, 0, 11)]),
        (("(",), marker("(", "turn0"), [("(", ["turn0"], None, 0, 9)]),
        ((".*",), marker("cite", "turn0"), []),
        ((r"\d",), marker("1", "turn0"), []),
        ((r"\d",), marker(r"\d", "turn0"), [(r"\d", ["turn0"], None, 0, 10)]),
        (("[a]",), marker("[a]", "t"), [("[a]", ["t"], None, 0, 7)]),
        (("$^",), marker("$^", "t"), [("$^", ["t"], None, 0, 6)]),
    ],
    ids=repr,
)
def test_families_are_literals_not_patterns(api, families, text, expected) -> None:
    check_extract(api, text, expected, families=families)


@pytest.mark.parametrize(
    ("families", "text", "expected"),
    [
        # the family holds a DELIM: the first family that fits wins
        (("a", "a" + D + "b"), S + "a" + D + "b" + D + "c" + E, [("a", ["b", "c"], None, 0, 7)]),
        (
            ("a" + D + "b", "a"),
            S + "a" + D + "b" + D + "c" + E,
            [("a" + D + "b", ["c"], None, 0, 7)],
        ),
        # the family holds a STOP or a START
        ((E,), S + E + D + "x" + E, [(E, ["x"], None, 0, 5)]),
        ((S,), S + S + D + "x" + E, [(S, ["x"], None, 0, 5)]),
        ((S + "cite",), S + S + "cite" + D + "x" + E, [(S + "cite", ["x"], None, 0, 9)]),
        # a family that would need a STOP after its own end does not fit; the next does
        (
            ("a" + D + "id" + E + "z", "a"),
            S + "a" + D + "id" + E + "z" + D + "tail",
            [("a", ["id"], None, 0, 6)],
        ),
        # START + family + DELIM with the family ending in DELIM
        ((D,), S + D + D + "x" + E, [(D, ["x"], None, 0, 5)]),
    ],
    ids=["short-first", "long-first", "stop", "start", "start-cite", "stop-after", "delim"],
)
def test_families_may_hold_marker_characters(api, families, text, expected) -> None:
    check_extract(api, text, expected, families=families)


@pytest.mark.parametrize(
    ("families", "text", "expected"),
    [
        (("",), marker("", "turn0"), [("", ["turn0"], None, 0, 8)]),
        (("",), marker("cite", "turn0"), []),
        (("", "cite"), marker("cite", "turn0"), [("cite", ["turn0"], None, 0, 12)]),
        (("cite", ""), marker("cite", "turn0"), [("cite", ["turn0"], None, 0, 12)]),
        (("", "cite"), marker("", "turn0"), [("", ["turn0"], None, 0, 8)]),
        (("cite", ""), marker("", "turn0"), [("", ["turn0"], None, 0, 8)]),
        (("", D), S + D + D + "x" + E, [("", ["x"], None, 0, 5)]),
        ((D, ""), S + D + D + "x" + E, [(D, ["x"], None, 0, 5)]),
    ],
    ids=[
        "empty-alone",
        "empty-alone-on-cite",
        "empty-first-on-cite",
        "cite-first-on-cite",
        "empty-first-on-empty",
        "cite-first-on-empty",
        "both-fit-empty-first",
        "both-fit-delim-first",
    ],
)
def test_the_empty_family_and_family_order(api, families, text, expected) -> None:
    check_extract(api, text, expected, families=families)


@pytest.mark.parametrize(
    "families",
    [("cite", b"cite"), (b"cite",), ("cite", None), (1,), [bytearray(b"x")], ("cite", 3.5)],
    ids=repr,
)
def test_a_non_str_family_raises_type_error(api, families) -> None:
    check_extract(api, marker("cite", "turn0"), TypeError, families=families)


def test_a_non_iterable_truthy_families_raises_type_error(api) -> None:
    check_extract(api, marker("cite", "turn0"), TypeError, families=5)


class Str(str):
    pass


def test_a_str_subclass_family_is_reported_as_plain_str(api) -> None:
    (citation,) = check_extract(
        api, marker("cite", "turn0"), [("cite", ["turn0"], None, 0, 12)], families=(Str("cite"),)
    )
    assert type(citation["family"]) is str


def test_families_are_keyword_only(api) -> None:
    with pytest.raises(TypeError):
        api.extract_citations(marker("cite", "turn0"), ("cite",))


# --- text -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [b"\xee\x88\x80cite", bytearray(b"x"), memoryview(b"x"), None, 0, ["x"], 1.5],
    ids=lambda t: type(t).__name__,
)
def test_non_str_text_raises_type_error(api, text) -> None:
    check_extract(api, text, TypeError)


def test_non_str_text_raises_type_error_with_several_families(api) -> None:
    check_extract(api, b"x", TypeError, families=("cite", "", "navlist"))


def test_a_str_subclass_text_gives_plain_str_values(api) -> None:
    text = Str("a " + marker("cite", " turn0 ", "turn1", "L1-L2") + " b")
    (citation,) = check_extract(api, text, [("cite", ["turn0", "turn1"], "L1-L2", 2, 28)])
    for value in (
        citation["raw"],
        citation["family"],
        citation["locator"],
        *citation["source_ids"],
    ):
        assert type(value) is str


class LyingStr(str):
    """A str subclass whose methods lie. The helper reads the characters through `re`,
    so it never calls them: neither may citemark."""

    def find(self, *args: Any) -> int:
        return -1

    def index(self, *args: Any) -> int:
        raise ValueError

    def startswith(self, *args: Any) -> bool:
        return False

    def split(self, *args: Any) -> list[str]:
        return []

    def strip(self, *args: Any) -> str:
        return ""

    def __getitem__(self, key: Any) -> str:
        return ""

    def __len__(self) -> int:
        return 0


def test_a_str_subclass_is_read_as_its_characters(api) -> None:
    text = LyingStr("a " + marker("cite", "turn0", "L1") + " b")
    check_extract(api, text, [("cite", ["turn0"], "L1", 2, 17)])


# --- scanning -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("no markers at all", []),
        (marker("cite", "turn0file0", "L8-L13"), [("cite", ["turn0file0"], "L8-L13", 0, 24)]),
        (
            "a" + marker("cite", "turn0search0", "turn1news2") + "b",
            [("cite", ["turn0search0", "turn1news2"], None, 1, 31)],
        ),
        (
            marker("cite", "t0") + marker("cite", "t1"),
            [("cite", ["t0"], None, 0, 9), ("cite", ["t1"], None, 9, 18)],
        ),
        (marker("cite", "\n turn0 \n", "L1"), [("cite", ["turn0"], "L1", 0, 19)]),
    ],
    ids=["empty", "prose", "locator", "two-ids", "adjacent", "newlines"],
)
def test_valid_markers(api, text, expected) -> None:
    check_extract(api, text, expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # an unterminated START swallows the next marker: its body holds a START
        (S + "cite" + D + "turn0 text " + marker("cite", "turn1"), []),
        # the abandoned START does not fit a family: the next marker is found
        (
            "keep" + S + "broken prose" + marker("cite", "turn1search0") + "after",
            [("cite", ["turn1search0"], None, 17, 36)],
        ),
        # nested START: the span ends at the first STOP and is invalid
        (S + "cite" + D + marker("cite", "turn0") + E, []),
        # STOP missing
        (S + "cite" + D + "turn0", []),
        (S + "cite" + D, []),
        (S, []),
        # STOP before the marker does not count
        (E + S + "cite" + D + "turn0", []),
        # an invalid match is consumed up to its STOP, and only that far
        (S + "cite" + D + E + marker("cite", "turn1"), [("cite", ["turn1"], None, 7, 19)]),
        (
            S + "cite" + D + "bad id" + E + marker("cite", "t1"),
            [("cite", ["t1"], None, 13, 22)],
        ),
        # a START inside the consumed span does not start a match
        (S + "cite" + D + "x " + S + "cite" + D + "y" + E + "z" + E, []),
        # the family must be followed by DELIM right away
        (S + "cite " + D + "turn0" + E, []),
        (S + " cite" + D + "turn0" + E, []),
        (S + "citation" + D + "turn0" + E, []),
        (S + "Cite" + D + "turn0" + E, []),
        # repeated STARTs before a real marker
        (S + S + S + marker("cite", "t"), [("cite", ["t"], None, 3, 11)]),
    ],
    ids=[
        "unterminated-swallows",
        "abandoned-start",
        "nested-start",
        "no-stop",
        "no-body",
        "lone-start",
        "stop-first",
        "empty-body-consumed",
        "invalid-consumed",
        "start-in-span",
        "space-after-family",
        "space-before-family",
        "longer-family",
        "case",
        "starts",
    ],
)
def test_scanning_corners(api, text, expected) -> None:
    check_extract(api, text, expected)


# --- bodies ---------------------------------------------------------------------------

SPACES = ["\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\xa0", "\u3000", "\u2028", "\u2029"]
SPACES += [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\u1680", "\u2000", "\u200a", "\u205f"]


@pytest.mark.parametrize("space", SPACES, ids=lambda c: f"U+{ord(c):04X}")
def test_isspace_characters_are_stripped_around_parts(api, space) -> None:
    body = (space, "turn0", space * 2, D, space, "L1", space)
    text = S + "cite" + D + "".join(body) + E
    check_extract(api, text, [("cite", ["turn0"], "L1", 0, len(text))])


@pytest.mark.parametrize(
    "char", ["\u200b", "\ufeff", "\u180e", "\x00", "\u2060"], ids=lambda c: f"U+{ord(c):04X}"
)
def test_non_isspace_characters_are_not_stripped(api, char) -> None:
    check_extract(api, marker("cite", char + "turn0"), [])


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ((D, D, "turn0", D, " ", D, "L1", D), (["turn0"], "L1")),
        ((" ", D, "a", D, "\t", D, "b"), (["a", "b"], None)),
        ((D,), None),
        ((" \n\u3000",), None),
        ((D, " ", D, "\xa0"), None),
    ],
    ids=["delims-around", "blank-parts", "only-delim", "only-space", "blank-parts-only"],
)
def test_empty_parts_are_dropped(api, body, expected) -> None:
    text = S + "cite" + D + "".join(body) + E
    check_extract(api, text, [] if expected is None else [("cite", *expected, 0, len(text))])


@pytest.mark.parametrize(
    "locator",
    ["L8", "L8-L13", "L0-L0", "L١٢", "L١-L٢", "L１-L２", "L５", "L५-L७", "L𝟙", "L8-L١", "L000"],
)
def test_decimal_digits_of_any_script_make_a_locator(api, locator) -> None:
    text = marker("cite", "turn0", locator)
    check_extract(api, text, [("cite", ["turn0"], locator, 0, len(text))])


@pytest.mark.parametrize("locator", ["L²", "L½", "L①", "L-L1"])
def test_non_decimal_digits_make_no_locator(api, locator) -> None:
    text = marker("cite", "turn0", locator)
    expected = [("cite", ["turn0", locator], None, 0, len(text))] if locator.isascii() else []
    check_extract(api, text, expected)


@pytest.mark.parametrize("body", [("L8-L13",), ("L8",), ("L١",), (" L1 ", D), ("L1", "L2")])
def test_a_locator_alone_is_not_a_citation_unless_an_id_precedes(api, body) -> None:
    text = marker("cite", *body)
    expected = [("cite", ["L1"], "L2", 0, len(text))] if body == ("L1", "L2") else []
    check_extract(api, text, expected)


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        (("L8", "turn0"), (["L8", "turn0"], None)),
        (("L8-L13", "turn0"), (["L8-L13", "turn0"], None)),
        (("turn0", "L1", "L2"), (["turn0", "L1"], "L2")),
        (("turn0", "L8-13"), (["turn0", "L8-13"], None)),
        (("turn0", "l8"), (["turn0", "l8"], None)),
        (("turn0", "L8-L"), (["turn0", "L8-L"], None)),
        (("L١", "turn0"), None),
        (("turn0", "L١", "L2"), None),
        (("turn0", "L 8"), None),
        (("turn0", "L8 - L9"), None),
    ],
    ids=repr,
)
def test_a_locator_is_only_recognised_as_the_last_part(api, parts, expected) -> None:
    text = marker("cite", *parts)
    check_extract(api, text, [] if expected is None else [("cite", *expected, 0, len(text))])


@pytest.mark.parametrize(
    "source_id",
    [
        "turn0é",
        "ｔurn0",
        "turn٠",
        "turn0.1",
        "turn 0",
        "turn0\u200b",
        "turn0\x00",
        "turn0\ud800",
        "\U0001f600",
        "https://example.com/page",
        "example.com",
        '["company","ITC Limited"]',
        '{"a":1}',
        S,
        D + "\xe9",
    ],
    ids=repr,
)
def test_ids_outside_ascii_word_characters_make_no_citation(api, source_id) -> None:
    check_extract(api, marker("cite", "turn0", source_id), [])
    check_extract(api, marker("cite", source_id, "L1"), [])


@pytest.mark.parametrize(
    "source_id", ["0", "_", "-", "a_b-c", "turn123456search9", "block5", "ABCxyz019"]
)
def test_ascii_word_ids_are_valid(api, source_id) -> None:
    text = marker("cite", source_id)
    check_extract(api, text, [("cite", [source_id], None, 0, len(text))])


# --- the result -----------------------------------------------------------------------


def test_a_citation_is_a_plain_dict_with_keys_in_order(api) -> None:
    (citation,) = api.extract_citations("x" + marker("cite", "turn0", "L1"))
    assert type(citation) is dict
    assert list(citation) == ["raw", "family", "source_ids", "locator", "start", "end"]
    assert type(citation["source_ids"]) is list
    assert type(citation["start"]) is int
    assert type(citation["end"]) is int


def test_the_locator_is_none_when_absent(api) -> None:
    (citation,) = api.extract_citations(marker("cite", "turn0"))
    assert citation["locator"] is None


def test_raw_is_the_text_between_start_and_end(api) -> None:
    text = "é😀\ud800 " + marker("cite", "a") + "\x00中" + marker("cite", " b ", " L1 ") + "z"
    citations = check_extract(
        api, text, [("cite", ["a"], None, 4, 12), ("cite", ["b"], "L1", 14, 29)]
    )
    for citation in citations:
        assert text[citation["start"] : citation["end"]] == citation["raw"]


def test_offsets_count_code_points(api) -> None:
    text = "Evidence \U0001f600 " + marker("cite", "turn0search0", "turn0search1") + "."
    check_extract(api, text, [("cite", ["turn0search0", "turn0search1"], None, 11, 43)])


def test_each_call_returns_fresh_lists(api) -> None:
    text = marker("cite", "turn0")
    first = api.extract_citations(text)
    first[0]["source_ids"].append("mutated")
    assert api.extract_citations(text)[0]["source_ids"] == ["turn0"]


def test_each_citation_is_a_copy_of_the_template(api) -> None:
    # Both scanners copy CITATION_TEMPLATE (a split-table dict on CPython with the GIL: its
    # copies share one key table), so a citation is no larger than the same dict built key by
    # key.  A free-threaded build copies a plain dict: threads would contend on the shared
    # table's reference count.
    assert list(CITATION_TEMPLATE.items()) == [(key, None) for key in Citation.__annotations__]
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        plain = dict.fromkeys(Citation.__annotations__)
        assert sys.getsizeof(CITATION_TEMPLATE.copy()) == sys.getsizeof(plain.copy())
    text = "x" + marker("cite", "turn0", "L1") + marker("cite", "a", "b")
    citations = api.extract_citations(text)
    for citation in citations:
        built = {key: citation[key] for key in Citation.__annotations__}
        assert citation == built
        assert sys.getsizeof(citation) == sys.getsizeof(CITATION_TEMPLATE.copy())
        assert sys.getsizeof(citation) <= sys.getsizeof(built)
    assert pickle.loads(pickle.dumps(citations)) == citations
    assert copy.deepcopy(citations) == citations


def test_a_citation_changes_like_any_dict(api) -> None:
    text = marker("cite", "turn0", "L1") + marker("cite", "a")
    first, second = api.extract_citations(text)
    first["extra"] = 1
    first["more"] = 2
    del first["raw"]
    first["raw"] = "r"
    second.pop("family")
    moved = ["family", "source_ids", "locator", "start", "end", "extra", "more", "raw"]
    assert list(first) == moved
    assert list(second) == ["raw", "source_ids", "locator", "start", "end"]
    assert list(CITATION_TEMPLATE.items()) == [(key, None) for key in Citation.__annotations__]
    again = api.extract_citations(text)
    assert [list(citation) for citation in again] == [list(Citation.__annotations__)] * 2
    assert [summary([citation]) for citation in again] == [
        [("cite", ["turn0"], "L1", 0, 15)],
        [("cite", ["a"], None, 15, 23)],
    ]


@pytest.mark.c_extension
def test_the_kernel_builds_a_repeated_string_once() -> None:
    # An id, a marker or a locator that recurs in one call is one str (a shared reference,
    # not a copy: less fresh memory a citation); the lists stay one per citation.
    kernel = DropIn(load("scan", "cython"))
    text = (marker("cite", "turn0file0", "L1") + " and ") * 50 + marker("cite", "x", "turn0file0")
    citations = kernel.extract_citations(text)
    assert len(citations) == 51
    for key in ("raw", "locator"):
        assert len({id(citation[key]) for citation in citations[:50]}) == 1
    ids = [source_id for citation in citations for source_id in citation["source_ids"]]
    assert ids == ["turn0file0"] * 50 + ["x", "turn0file0"]
    assert len({id(source_id) for source_id in ids if source_id == "turn0file0"}) == 1
    assert len({id(citation["source_ids"]) for citation in citations}) == 51
    assert citations == DropIn(load("scan", "python")).extract_citations(text)


# --- strip_citations ------------------------------------------------------------------

TEXT = "abcdefghij"


def span(start: Any, end: Any) -> dict[str, Any]:
    return {"start": start, "end": end}


def test_strip_what_extract_returned(api) -> None:
    text = "A " + marker("cite", "t0") + "B" + marker("cite", "t1", "L1") + " C" + marker("x", "t")
    citations = api.extract_citations(text)
    check_strip(api, text, citations, "A B C" + marker("x", "t"))


@pytest.mark.parametrize(
    "wrap", [list, tuple, iter, lambda c: (x for x in c)], ids=["list", "tuple", "iter", "gen"]
)
def test_strip_accepts_any_iterable(api, wrap) -> None:
    text = "A " + marker("cite", "t0") + "B" + marker("cite", "t1", "L1") + " C"
    citations = oracle.extract_citations(text)
    assert api.strip_citations(text, wrap(citations)) == "A B C"


@pytest.mark.parametrize(
    ("citations", "expected"),
    [
        ([span(2, 4), span(6, 8)], "abefij"),
        ([span(6, 8), span(2, 4)], "abefij"),
        ([span(0, 10)], ""),
        ([span(0, 0)], TEXT),
        ([span(3, 3), span(3, 3)], TEXT),
        ([span(2, 5), span(4, 8)], "abj"),
        ([span(4, 8), span(2, 5)], "abj"),
        ([span(2, 4), span(2, 4)], "abghij"),
        ([span(0, 10), span(0, 10)], ""),
        ([span(8, 20)], "abcdefgh"),
        ([span(20, 30)], TEXT),
        ([span(-3, -1)], "abcdefgj"),
        ([span(-20, 2)], "cdefghij"),
        ([span(-20, -15)], TEXT),
        ([span(5, 2)], "abcdecdefghij"),
        ([span(10, 0)], TEXT + TEXT),
        ([span(2, 0), span(2, 5)], "abdefghij"),
        ([span(2, 5), span(2, 0)], "ababfghij"),
        ([span(2, 4), span(2, 6), span(2, 3)], "abj"),
        ([span(2**70, 2**71)], TEXT),
        ([span(-(2**70), 2)], "cdefghij"),
        ([span(2, 2**64)], "ab"),
        ([span(2**63 - 1, 2**63)], TEXT),
        ([span(-(2**63), -(2**63) + 3)], TEXT),
        ([span(True, 3)], "adefghij"),
        ([span(False, True)], "bcdefghij"),
        ([span(None, 3)], TEXT + "defghij"),
        ([span(1, None)], "a" + TEXT),
        ([span(None, None)], TEXT + TEXT),
    ],
    ids=repr,
)
def test_strip_gives_what_the_sequence_of_slices_gives(api, citations, expected) -> None:
    check_strip(api, TEXT, citations, expected)


def test_strip_ties_keep_their_given_order(api) -> None:
    # Stable sort, last first: of two citations with the same start, the one given
    # first is cut first.  With an end before the start, the order shows.
    check_strip(api, TEXT, [span(2, 0), span(2, 5)], "abdefghij")
    check_strip(api, TEXT, [span(2, 5), span(2, 0)], "ababfghij")


def test_strip_accepts_full_citation_dicts_in_any_order(api) -> None:
    text = marker("cite", "t0") + "x" + marker("cite", "t1")
    citations = api.extract_citations(text)
    check_strip(api, text, citations[::-1], "x")
    check_strip(api, text, citations + citations, "")


class Index:
    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


@pytest.mark.parametrize(
    ("citations", "expected"),
    [
        ([{"end": 3}], KeyError),
        ([{"start": 1}], KeyError),
        ([span(1, 2), {"end": 3}], KeyError),
        ([span(1, 2), {"start": 3}], KeyError),
        ([{}], KeyError),
        ([{"Start": 1, "end": 2}], KeyError),
        ([span("1", 2)], TypeError),
        ([span(1, "2")], TypeError),
        ([span(1, 2), span("3", 4)], TypeError),
        ([span(1.0, 2)], TypeError),
        ([span(1, 2.5)], TypeError),
        ([span(None, 1), span(None, 2)], TypeError),
        ([span(None, 1), span(3, 4)], TypeError),
        ([[1, 2]], TypeError),
        ([(1, 2)], TypeError),
        ([None], TypeError),
        ([1], TypeError),
        (["ab"], TypeError),
        ([span(Index(2), Index(4))], "abefghij"),
        ([types.MappingProxyType(span(2, 4))], "abefghij"),
        ([{"start": 2, "end": 4, "extra": object()}], "abefghij"),
    ],
    ids=lambda value: re.sub(
        r" (object )?at 0x[0-9a-f]+", "", repr(value)
    ),  # the same in every process
)
def test_strip_errors_and_odd_items_match_the_slices(api, citations, expected) -> None:
    check_strip(api, TEXT, citations, expected)


@pytest.mark.parametrize("citations", [None, 5, "ab", b"ab"], ids=repr)
def test_strip_needs_an_iterable_of_mappings(api, citations) -> None:
    got = outcome(api.strip_citations, TEXT, citations)
    assert got == outcome(oracle.strip_citations, TEXT, citations)
    assert got == ("raises", TypeError)


@pytest.mark.parametrize(
    "empty",
    [list, tuple, lambda: iter([]), lambda: (x for x in ())],
    ids=["list", "tuple", "iter", "gen"],
)
def test_strip_with_no_citations_returns_the_same_object(api, empty) -> None:
    text = "".join(["some ", "text ", marker("cite", "turn0")])
    assert api.strip_citations(text, empty()) is text


@pytest.mark.parametrize("text", [None, b"bytes", 5, ["a"]], ids=repr)
def test_strip_with_no_citations_returns_any_text_unchanged(api, text) -> None:
    assert api.strip_citations(text, []) is text


def test_a_text_with_nothing_to_strip_comes_back_as_the_same_object(api) -> None:
    text = "".join(["plain ", "prose ", S + "cite" + D + "unterminated"])
    assert api.strip_citations(text, api.extract_citations(text)) is text
    assert api.strip_many([text])[0] is text


@pytest.mark.parametrize(
    ("text", "citations", "expected"),
    [
        (b"abcdef", [span(1, 3)], b"adef"),
        (bytearray(b"abcdef"), [span(1, 3)], bytearray(b"adef")),
        (["a", "b", "c"], [span(0, 1)], ["b", "c"]),
        (None, [span(0, 1)], TypeError),
        (5, [span(0, 1)], TypeError),
    ],
    ids=repr,
)
def test_strip_slices_a_non_str_text_like_the_helper(api, text, citations, expected) -> None:
    check_strip(api, text, citations, expected)


def test_strip_of_a_str_subclass_gives_a_plain_str(api) -> None:
    text = Str("ab" + marker("cite", "t") + "cd")
    check_strip(api, text, oracle.extract_citations(text), "abcd")


def test_strip_takes_keyword_arguments(api) -> None:
    text = "a" + marker("cite", "t") + "b"
    assert api.strip_citations(text=text, citations=api.extract_citations(text)) == "ab"


# --- extract_many / strip_many --------------------------------------------------------

MANY = [
    "",
    "plain",
    marker("cite", "t0") + " x " + marker("navlist", "t1", "L1"),
    S + "cite" + D + "open " + marker("cite", "t2"),
    "a" + marker("", "t3") + "b",
]


@pytest.mark.parametrize("families", [("cite",), ("cite", "navlist"), ("",), (), "cite"], ids=repr)
def test_extract_many_is_extract_per_text(api, families) -> None:
    expected = [oracle.extract_citations(t, families=families) for t in MANY]
    assert api.extract_many(MANY, families=families) == expected
    assert api.extract_many(iter(MANY), families=families) == expected


@pytest.mark.parametrize("families", [("cite",), ("cite", "navlist"), ("",), (), "cite"], ids=repr)
def test_strip_many_is_strip_of_extract_per_text(api, families) -> None:
    expected = [
        oracle.strip_citations(t, oracle.extract_citations(t, families=families)) for t in MANY
    ]
    assert api.strip_many(MANY, families=families) == expected
    assert api.strip_many(iter(MANY), families=families) == expected


def test_many_default_to_the_cite_family(api) -> None:
    assert api.extract_many(MANY) == [oracle.extract_citations(t) for t in MANY]
    assert api.strip_many(MANY) == [
        oracle.strip_citations(t, oracle.extract_citations(t)) for t in MANY
    ]


@pytest.mark.parametrize("method", ["extract_many", "strip_many"])
def test_many_raise_type_error_for_a_non_str_text(api, method) -> None:
    with pytest.raises(TypeError):
        getattr(api, method)(["ok", b"bytes"])


@pytest.mark.parametrize("method", ["extract_many", "strip_many"])
def test_many_raise_type_error_for_a_non_str_family(api, method) -> None:
    with pytest.raises(TypeError):
        getattr(api, method)(["ok"], families=("cite", None))


def test_many_with_no_families_accept_any_text(api) -> None:
    assert api.extract_many([b"x", None], families=()) == [[], []]
    assert api.strip_many([b"x", None], families=()) == [b"x", None]


def test_strip_many_with_an_empty_iterable_of_families_strips_the_empty_family(api) -> None:
    text = "a" + marker("", "t3") + "b"
    expected = oracle.strip_citations(text, oracle.extract_citations(text, families=iter([])))
    assert expected == "ab"
    assert api.strip_many([text], families=iter([])) == [expected]


def test_strip_many_results_of_a_str_subclass(api) -> None:
    texts = [Str("ab" + marker("cite", "t") + "cd"), Str("plain")]
    got = api.strip_many(texts)
    assert got == ["abcd", "plain"]
    assert type(got[0]) is str
    assert got[1] is texts[1]
