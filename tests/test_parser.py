"""`citemark.Parser`: every option, on the compiled kernel and on the Python twin.

The differential tests draw a random configuration (families, any family, marker
characters, id and locator patterns, a length limit) and a text made of pieces that
matter to it, and hold both implementations to the slow reference in `parser_oracle`
(regular expressions, or a plain loop for the length limit) for `extract`, `finditer`
(in all three offset units), `strip`, `spans`, `sub` and `supports`.  The example tests
pin each option on readable inputs, the field inputs among them.
"""

from __future__ import annotations

import pickle
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import citemark
from citemark import CitationSpan, Parser
from citemark._core.dropin import DropIn
from citemark._kernels.loader import load
from citemark._markdown.code import find_code_ranges
from parser_oracle import DELIM as D
from parser_oracle import START as S
from parser_oracle import STOP as E
from parser_oracle import Oracle, units
from strategies import FAMILY_NAMES, cases, texts_for

UNITS = ("codepoints", "utf16", "utf8")
# Half the profile's budget, for the tests that re-check what others cover too.
half_budget = settings(max_examples=max(10, settings.default.max_examples // 2))


@pytest.fixture(scope="session")
def impl(implementation: str) -> str:
    """The implementation under test (conftest's `implementation`)."""
    return implementation


def parser(impl: str, *args: Any, **options: Any) -> Parser:
    made = Parser(*args, implementation=impl, **options)
    assert made.implementation == impl
    return made


def oracle_for(options: dict[str, Any]) -> Oracle:
    options = dict(options)
    skip_code = options.pop("skip_code", False)
    return Oracle(**options, code=find_code_ranges if skip_code else None)


def label(record: CitationSpan) -> str:
    return f"<{'+'.join(record.source_ids)}@{record.start}:{record.clean_start}>"


# --- differential: kernel == twin == oracle ------------------------------------------


def check_against_oracle(made: Parser, options: dict[str, Any], text: str) -> None:
    oracle = oracle_for(options)
    assert made.spans(text) == oracle.spans(text)
    found = made.extract(text)
    assert found == oracle.extract(text)
    assert all(
        list(citation) == ["raw", "family", "source_ids", "locator", "start", "end"]
        for citation in found
    )
    assert made.strip(text) == oracle.strip(text)
    for unit in UNITS:
        records = list(made.replace(offsets=unit).finditer(text))
        assert records == oracle.finditer(text, unit), unit
        assert all(type(record) is CitationSpan for record in records)
        assert all(type(record.source_ids) is tuple for record in records)
    # validate's one scan for both (the scanner's spans_records when it applies)
    spans, citations = made._spans_and_citations(text)
    assert spans == oracle.spans(text)
    assert citations == oracle.finditer(text, "codepoints")
    assert all(type(record) is CitationSpan for record in citations)


@given(case=cases())
def test_matches_the_oracle(impl: str, case: tuple[dict[str, Any], str]) -> None:
    options, text = case
    check_against_oracle(parser(impl, **options), options, text)


@given(case=cases(allow_code=True))
def test_sub_and_supports_match_the_oracle(impl: str, case: tuple[dict[str, Any], str]) -> None:
    options, text = case
    made = parser(impl, **options)
    oracle = oracle_for(options)
    for sanitize in (False, True):
        assert made.sub(text, label, sanitize=sanitize) == oracle.sub(text, label, sanitize)
    assert made.supports(text) == oracle.supports(text)


@half_budget
@given(case=cases(allow_code=True))
def test_skip_code_matches_the_oracle(impl: str, case: tuple[dict[str, Any], str]) -> None:
    options, text = case
    options = {**options, "skip_code": True}
    check_against_oracle(parser(impl, **options), options, text)


@pytest.mark.c_extension
@given(case=cases(allow_code=True))
def test_kernel_and_twin_agree(case: tuple[dict[str, Any], str]) -> None:
    options, text = case
    kernel = Parser(**options, implementation="cython")
    twin = Parser(**options, implementation="python")
    assert kernel.spans(text) == twin.spans(text)
    assert kernel.extract(text) == twin.extract(text)
    assert kernel.strip(text) == twin.strip(text)
    for unit in UNITS:
        unit_kernel, unit_twin = kernel.replace(offsets=unit), twin.replace(offsets=unit)
        assert list(unit_kernel.finditer(text)) == list(unit_twin.finditer(text))
    assert kernel.sub(text, label, sanitize=True) == twin.sub(text, label, sanitize=True)
    assert kernel.supports(text) == twin.supports(text)


@half_budget
@given(case=cases())
def test_the_oracles_two_scans_agree(case: tuple[dict[str, Any], str]) -> None:
    """The regex and the loop in parser_oracle are two readings of one rule."""
    options, text = case
    oracle = oracle_for(options)
    if not (options["any_family"] and options["max_marker_length"] is not None):
        assert oracle.regex_matches(text) == oracle.loop_matches(text)


@given(
    text=texts_for({"families": ("cite",), "start": S, "delimiter": D, "stop": E}),
    families=st.lists(st.sampled_from([*FAMILY_NAMES, S, "a" + E, D]), min_size=1, max_size=3),
)
def test_parser_is_the_drop_in(impl: str, text: str, families: list[str]) -> None:
    dropin = DropIn(load("scan", impl))  # type: ignore[arg-type]
    default = parser(impl)
    expected = dropin.extract_citations(text)
    assert default.extract(text) == expected
    assert Parser().extract(text) == citemark.extract_citations(text) == expected
    assert default.strip(text) == dropin.strip_citations(text, expected)
    assert Parser().strip(text) == citemark.strip_citations(text, expected)
    chosen = parser(impl, tuple(families))
    with_families = dropin.extract_citations(text, families=families)
    assert chosen.extract(text) == with_families
    assert chosen.strip(text) == dropin.strip_citations(text, with_families)


# --- families -------------------------------------------------------------------------


def summary(found: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(c["family"], c["source_ids"], c["locator"], c["start"], c["end"]) for c in found]


def test_default_parser(impl: str) -> None:
    text = "A \ue200cite\ue202turn0file0\ue202L8-L13\ue201 b \ue200navlist\ue202turn0search1\ue201"
    made = parser(impl)
    assert made.families == ("cite",)
    assert made.extract(text) == [
        {
            "raw": "\ue200cite\ue202turn0file0\ue202L8-L13\ue201",
            "family": "cite",
            "source_ids": ["turn0file0"],
            "locator": "L8-L13",
            "start": 2,
            "end": 26,
        }
    ]
    assert made.strip(text) == "A  b \ue200navlist\ue202turn0search1\ue201"
    assert made.spans(text) == [(2, 26, True)]


def test_families_are_tried_in_order(impl: str) -> None:
    text = f"{S}a{D}b{D}id{E}"
    assert summary(parser(impl, ("a", f"a{D}b")).extract(text)) == [("a", ["b", "id"], None, 0, 8)]
    assert summary(parser(impl, (f"a{D}b", "a")).extract(text)) == [(f"a{D}b", ["id"], None, 0, 8)]


def test_families_are_literal_strings(impl: str) -> None:
    assert parser(impl, ("c.te",)).extract(f"{S}cite{D}x{E}") == []
    assert summary(parser(impl, ("c.te",)).extract(f"{S}c.te{D}x{E}")) == [
        ("c.te", ["x"], None, 0, 8)
    ]


def test_a_str_of_families_is_a_type_error(impl: str) -> None:
    with pytest.raises(TypeError, match="families must be a tuple of str, not a str"):
        parser(impl, "ic")


def test_family_holding_a_stop(impl: str) -> None:
    """The body ends at the first STOP after the family's DELIM, not inside the family."""
    text = f"{S}x{E}y{D}id{E}"
    assert summary(parser(impl, (f"x{E}y",)).extract(text)) == [(f"x{E}y", ["id"], None, 0, 8)]


def test_family_holding_a_start(impl: str) -> None:
    text = f"{S}{S}f{D}a{E}"
    assert summary(parser(impl, (f"{S}f",)).extract(text)) == [(f"{S}f", ["a"], None, 0, 6)]
    assert summary(parser(impl, ("f",)).extract(text)) == [("f", ["a"], None, 1, 6)]


def test_empty_family(impl: str) -> None:
    made = parser(impl, ("",))
    assert summary(made.extract(f"{S}{D}turn0search0{E}")) == [("", ["turn0search0"], None, 0, 15)]
    assert made.extract(f"{S}cite{D}turn0search0{E}") == []


def test_any_family(impl: str) -> None:
    made = parser(impl, any_family=True)
    assert made.families == ()
    text = (
        f"{S}navlist{D}turn0search0{E} {S}image_group2{D}x{E} {S}nav-list{D}y{E}"
        f" {S}{D}z{E} {S}é{D}w{E}"
    )
    assert summary(made.extract(text)) == [
        ("navlist", ["turn0search0"], None, 0, 22),
        ("image_group2", ["x"], None, 23, 39),
    ]
    # any_family ignores the families
    assert made.extract(text) == parser(impl, ("zzz",), any_family=True).extract(text)


def test_any_family_with_a_word_character_delimiter(impl: str) -> None:
    """The name is the longest run of [A-Za-z0-9_] after START: a word-character DELIM
    would be swallowed by it and no marker could ever match, so any_family rejects such a
    DELIM (the regex reading, `START([A-Za-z0-9_]+)_`, would backtrack to a shorter name
    instead).  Literal families keep working with it."""
    for delimiter in ("_", "a", "Z", "0"):
        with pytest.raises(ValueError, match="any_family"):
            parser(impl, any_family=True, start="<", delimiter=delimiter, stop=">")
    with pytest.raises(ValueError, match="any_family"):
        parser(impl, start="<", delimiter="_", stop=">").replace(any_family=True)
    literal = parser(impl, ("ab",), start="<", delimiter="_", stop=">")
    text = "<ab_x> <ab_c d> <ab_cd_x>"
    assert summary(literal.extract(text)) == [
        ("ab", ["x"], None, 0, 6),
        ("ab", ["cd", "x"], None, 16, 25),
    ]
    assert literal.spans(text) == [(0, 6, True), (7, 15, False), (16, 25, True)]


# --- markers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "delimiter", "stop"),
    [("[", "|", "]"), ("\x01", "\x02", "\x03"), ("😀", "\n", "."), (E, D, S)],
)
def test_custom_markers(impl: str, start: str, delimiter: str, stop: str) -> None:
    made = parser(impl, start=start, delimiter=delimiter, stop=stop)
    text = f"x {start}cite{delimiter}turn0search0{delimiter} L2 {stop} {S}cite{D}a{E}"
    assert summary(made.extract(text)) == [("cite", ["turn0search0"], "L2", 2, 26)]
    assert made.strip(text) == f"x  {S}cite{D}a{E}"
    if (start, delimiter, stop) != (E, D, S):
        # the guide's markers are plain text to this parser
        assert made.spans(f"{S}cite{D}a{E}") == []


# --- id and locator patterns ----------------------------------------------------------


def test_custom_source_id(impl: str) -> None:
    text = f"{S}cite{D}https://example.com/a?b=1{D}L3{E}"
    assert parser(impl).extract(text) == []
    assert parser(impl).spans(text) == [(0, 35, False)]
    made = parser(impl, source_id=r"https?://\S+")
    assert summary(made.extract(text)) == [("cite", ["https://example.com/a?b=1"], "L3", 0, 35)]
    assert made.extract(f"{S}cite{D}turn0search0{E}") == []  # the default rule is replaced
    letters = parser(impl, source_id=re.compile(r"[a-z]+\d*"))
    assert summary(letters.extract(f"{S}cite{D}abc12{D}xy{E}")) == [
        ("cite", ["abc12", "xy"], None, 0, 15)
    ]
    assert letters.extract(f"{S}cite{D}12abc{E}") == []


def test_custom_locator(impl: str) -> None:
    made = parser(impl, locator=r"p\.\d+")
    assert summary(made.extract(f"{S}cite{D}turn0file1{D} p.12 {E}")) == [
        ("cite", ["turn0file1"], "p.12", 0, 24)
    ]
    # L8 is no locator here: it is read as an id (and is a valid one)
    assert summary(made.extract(f"{S}cite{D}turn0file1{D}L8{E}")) == [
        ("cite", ["turn0file1", "L8"], None, 0, 20)
    ]
    assert made.extract(f"{S}cite{D}p.12{E}") == []  # a locator alone is no citation


def test_patterns_must_match_whole_parts(impl: str) -> None:
    made = parser(impl, source_id=r"[a-z]+", locator=r"p\.\d")
    assert made.extract(f"{S}cite{D}abc1{E}") == []
    assert summary(made.extract(f"{S}cite{D}abc{D}p.12{E}")) == []


def test_builtin_pattern_spellings(impl: str) -> None:
    text = f"{S}cite{D}turn0search0{D}L١-L٢{E} {S}cite{D}a.b{E} {S}cite{D}L1{E}"
    expected = parser(impl).extract(text)
    assert len(expected) == 1
    for source_id in (r"^[A-Za-z0-9_-]+$", re.compile(r"[A-Za-z0-9_-]+")):
        for locator in (r"^L\d+(?:-L\d+)?$", re.compile(r"L\d+(?:-L\d+)?"), r"L\d+(?:-L\d+)?"):
            made = parser(impl, source_id=source_id, locator=locator)
            assert made.extract(text) == expected
    # the same pattern text with other flags is a custom rule, with those flags
    ascii_digits = parser(impl, locator=re.compile(r"L\d+(?:-L\d+)?", re.ASCII))
    assert ascii_digits.extract(text) == []
    assert ascii_digits.spans(text)[0] == (0, 25, False)
    any_case = parser(impl, locator=re.compile(r"L\d+(?:-L\d+)?", re.IGNORECASE))
    assert summary(any_case.extract(f"{S}cite{D}a{D}l5{E}")) == [("cite", ["a"], "l5", 0, 11)]
    assert summary(parser(impl).extract(f"{S}cite{D}a{D}l5{E}")) == [
        ("cite", ["a", "l5"], None, 0, 11)
    ]


# --- max_marker_length ------------------------------------------------------------------


def test_max_marker_length_is_inclusive(impl: str) -> None:
    text = f"{S}cite{D}turn0search0{E}"  # 19 code points
    assert len(parser(impl, max_marker_length=19).extract(text)) == 1
    assert parser(impl, max_marker_length=18).extract(text) == []
    assert parser(impl, max_marker_length=18).spans(text) == []
    assert parser(impl, max_marker_length=18).strip(text) == text
    assert len(parser(impl, max_marker_length=2**63 - 1).extract(text)) == 1


def test_max_marker_length_abandoned_start(impl: str) -> None:
    field = "keep\ue200broken prose\ue200cite\ue202turn1search0\ue201after"
    for limit in (None, 20):
        assert summary(parser(impl, max_marker_length=limit).extract(field)) == [
            ("cite", ["turn1search0"], None, 17, 36)
        ]
    # a START that fits a family but is never closed swallows the next citation...
    text = "keep\ue200cite\ue202broken prose\ue200cite\ue202turn1search0\ue201after"
    assert parser(impl).extract(text) == []
    assert parser(impl).spans(text) == [(4, 41, False)]
    # ...unless the marker it would make is too long: then that START is plain text
    limited = parser(impl, max_marker_length=20)
    assert summary(limited.extract(text)) == [("cite", ["turn1search0"], None, 22, 41)]
    assert limited.strip(text) == "keep\ue200cite\ue202broken proseafter"
    assert limited.spans(text) == [(22, 41, True)]


def test_max_marker_length_tries_the_next_family(impl: str) -> None:
    # The first family makes a 10-code-point marker; the STOP inside that family ends the
    # body of the second one, a 5-code-point marker.
    text = f"{S}a{D}b{E}c{D}id{E}"
    families = (f"a{D}b{E}c", "a")
    for limit in (None, 10):
        assert summary(parser(impl, families, max_marker_length=limit).extract(text)) == [
            (families[0], ["id"], None, 0, 10)
        ]
    assert summary(parser(impl, families, max_marker_length=9).extract(text)) == [
        ("a", ["b"], None, 0, 5)
    ]
    assert parser(impl, families, max_marker_length=4).spans(text) == []


@pytest.mark.parametrize("limit", [2**63, 2**100])
def test_max_marker_length_beyond_ssize_t(implementation: str, limit: int) -> None:
    """Any positive int is a valid limit; one larger than any text is no limit at all."""
    text = f"{S}cite{D}a{E} {S}cite{D} x"
    made = Parser(max_marker_length=limit, implementation=implementation)
    assert made.spans(text) == Parser(implementation=implementation).spans(text) == [(0, 8, True)]


def test_max_marker_length_with_any_family(impl: str) -> None:
    text = f"{S}navlist{D}a{E} {S}i{D}b{E}"
    made = parser(impl, any_family=True, max_marker_length=5)
    assert summary(made.extract(text)) == [("i", ["b"], None, 12, 17)]
    assert made.spans(text) == [(12, 17, True)]


# --- offsets ---------------------------------------------------------------------------


def test_offsets_in_three_units(impl: str) -> None:
    text = "Evidence \U0001f600 \ue200cite\ue202turn0search0\ue202turn0search1\ue201."
    marker = len("\ue200cite\ue202turn0search0\ue202turn0search1\ue201")  # 33
    expected = {
        "codepoints": (11, 11 + marker),
        "utf16": (12, 12 + marker),
        "utf8": (14, 14 + 3 * 4 + 4 + 24),
    }
    for unit, (start, end) in expected.items():
        (record,) = parser(impl, offsets=unit).finditer(text)
        assert record == CitationSpan(
            "cite", ("turn0search0", "turn0search1"), None, start, end, start
        )
        # the other methods count code points whatever the unit
        assert parser(impl, offsets=unit).spans(text) == [(11, 11 + marker, True)]
        assert parser(impl, offsets=unit).extract(text)[0]["start"] == 11


def test_clean_start(impl: str) -> None:
    one = f"{S}cite{D}a{E}"  # 8 code points, 22 UTF-8 bytes
    text = f"é{one}😀{one}x{S}cite{D}bad id{E}{one}"
    for unit in UNITS:
        records = list(parser(impl, offsets=unit).finditer(text))
        clean = parser(impl).strip(text)
        assert clean == f"é😀x{S}cite{D}bad id{E}"
        starts = [
            units(text[: text.index(one)], unit),
            units(text[: text.index(one + "x")], unit),
            units(text[: text.rindex(one)], unit),
        ]
        assert [r.start for r in records] == starts
        assert [r.clean_start for r in records] == [
            units("é", unit),
            units("é😀", unit),
            units(f"é😀x{S}cite{D}bad id{E}", unit),
        ]


def test_finditer_is_an_iterator(impl: str) -> None:
    found = parser(impl).finditer(f"{S}cite{D}a{E}")
    assert iter(found) is found
    assert next(found).source_ids == ("a",)
    assert next(found, None) is None


@pytest.mark.slow  # 21 texts of 50,000 characters through the oracle
def test_long_texts_take_the_same_path(impl: str) -> None:
    """Texts past the kernel's GIL-release threshold (32 Ki code units), in all three
    storage kinds, against the oracle."""
    block = (
        f"é {S}cite{D}turn0search0{D}L1{E} x{S}cite{D} {S}navlist{D}a{E} "
        f"[cite|b]<i,c> {S}cite{D}bad id{E}\n"
    )
    for extra in ("", "中", "😀"):
        text = (block + extra) * 460
        assert len(text) > 1 << 15
        for options in (
            {},
            {"any_family": True},
            {"max_marker_length": 20},
            {"any_family": True, "max_marker_length": 12},
            {"families": ("cite", "navlist"), "source_id": r"[a-z]+\d*"},
            {"start": "[", "delimiter": "|", "stop": "]"},
            {"start": "<", "delimiter": ",", "stop": ">", "any_family": True},
        ):
            check_against_oracle(parser(impl, **options), options, text)


# --- skip_code -------------------------------------------------------------------------

FENCED = "```text\n\ue200cite\ue202turn0search0\ue201\n```\n"


def test_skip_code_fence(impl: str) -> None:
    assert len(parser(impl).extract(FENCED)) == 1
    made = parser(impl, skip_code=True)
    assert made.extract(FENCED) == []
    assert made.spans(FENCED) == []
    assert list(made.finditer(FENCED)) == []
    assert made.strip(FENCED) == FENCED
    assert made.sub(FENCED, label, sanitize=True) == FENCED
    after = FENCED + f"then {S}cite{D}turn0search1{E}"
    assert summary(made.extract(after)) == [("cite", ["turn0search1"], None, 37, 56)]
    assert made.strip(after) == FENCED + "then "


def test_skip_code_inline_and_indented(impl: str) -> None:
    made = parser(impl, skip_code=True)
    inline = f"See `{S}cite{D}a{E}` and {S}cite{D}b{E}."
    assert summary(made.extract(inline)) == [("cite", ["b"], None, 19, 27)]
    assert made.strip(inline) == f"See `{S}cite{D}a{E}` and ."
    indented = f"para\n\n    {S}cite{D}a{E}\n\nafter {S}cite{D}b{E}"
    assert [c["source_ids"] for c in made.extract(indented)] == [["b"]]
    assert [c["source_ids"] for c in parser(impl).extract(indented)] == [["a"], ["b"]]


def test_skip_code_regions_are_code_ranges(impl: str) -> None:
    text = f"keep {S}cite{D} `x` {S}cite{D}turn0search0{E}"
    assert parser(impl).extract(text) == []
    assert parser(impl).spans(text) == [(5, 35, False)]
    made = parser(impl, skip_code=True)
    assert summary(made.extract(text)) == [("cite", ["turn0search0"], None, 16, 35)]
    assert made.spans(text) == [(16, 35, True)]
    # a marker around inline code: neither side sees the other
    around = f"{S}cite{D}`x`{E}"
    assert len(parser(impl, source_id=r"\S+").extract(around)) == 1
    assert parser(impl, source_id=r"\S+", skip_code=True).extract(around) == []


def test_skip_code_offsets(impl: str) -> None:
    text = f"😀 `{S}cite{D}a{E}` {S}cite{D}b{E} {S}cite{D}c{E}"
    records = list(parser(impl, skip_code=True, offsets="utf16").finditer(text))
    first = len("😀 `") + 1 + 8 + len("` ")  # the emoji is two UTF-16 units
    assert [(r.source_ids, r.start, r.end, r.clean_start) for r in records] == [
        (("b",), first, first + 8, first),
        (("c",), first + 9, first + 17, first + 1),
    ]


def test_skip_code_sanitize_leaves_code_alone(impl: str) -> None:
    text = f"`\ue206{S}` \ue206x {S}cite{D}bad id{E} {S}cite{D}a{E}"
    made = parser(impl, skip_code=True)
    assert made.sub(text, lambda c: "[1]", sanitize=True) == f"`\ue206{S}` x  [1]"


# --- sub, sanitize, supports -----------------------------------------------------------

PUERTO = (
    "\u200b\ue203Puerto Vallarta offers condo rentals.\ue204 " + f"{S}cite{D}turn0search2{E}\ue206"
)


def test_sub_field_input(impl: str) -> None:
    made = parser(impl)
    seen: list[CitationSpan] = []

    def footnote(citation: CitationSpan) -> str:
        seen.append(citation)
        return "[1]"

    assert made.sub(PUERTO, footnote) == (
        "\u200b\ue203Puerto Vallarta offers condo rentals.\ue204 [1]\ue206"
    )
    assert seen == list(made.finditer(PUERTO))
    assert made.sub(PUERTO, footnote, sanitize=True) == (
        "\u200bPuerto Vallarta offers condo rentals. [1]"
    )


def test_sub_sanitize_removes_invalid_markers_and_strays(impl: str) -> None:
    text = f"a {S}cite{D}not an id{E} b \ue205{D} {S}cite{D}x{E}{E} c"
    made = parser(impl)
    assert made.sub(text, lambda c: "<x>") == f"a {S}cite{D}not an id{E} b \ue205{D} <x>{E} c"
    assert made.sub(text, lambda c: "<x>", sanitize=True) == "a  b  <x> c"
    # the replacement itself is not scrubbed
    assert made.sub(text, lambda c: S, sanitize=True) == f"a  b  {S} c"


def test_sub_sanitize_with_custom_markers(impl: str) -> None:
    made = parser(impl, start="[", delimiter="|", stop="]")
    text = "[cite|a] [cite|b c] [x] \ue200"
    assert made.sub(text, lambda c: "1", sanitize=True) == "1  [x] "


def test_sub_repl_sees_code_point_offsets(impl: str) -> None:
    text = f"😀{S}cite{D}a{E}"
    made = parser(impl, offsets="utf8")
    assert made.sub(text, lambda c: f"{c.start}-{c.end}") == "😀1-9"
    assert next(made.finditer(text)).start == 4


@pytest.mark.parametrize("result", [None, 1, b"x", ["x"]])
def test_sub_repl_must_return_str(impl: str, result: object) -> None:
    with pytest.raises(TypeError, match="repl must return str"):
        parser(impl).sub(f"{S}cite{D}a{E}", lambda c: result)  # type: ignore[arg-type, return-value]


def test_sub_without_citations_calls_nothing(impl: str) -> None:
    def never(citation: CitationSpan) -> str:
        raise AssertionError(citation)

    text = f"plain {S}cite{D}bad id{E}"
    assert parser(impl).sub(text, never) == text
    assert parser(impl).sub(text, never, sanitize=True) == "plain "


def test_supports(impl: str) -> None:
    made = parser(impl)
    ((citation, start, end),) = made.supports(PUERTO)
    assert PUERTO[start:end] == "Puerto Vallarta offers condo rentals."
    assert citation == next(made.finditer(PUERTO))
    text = (
        f"\ue203One.\ue204\n\t{S}cite{D}a{E}{S}cite{D}b{E} "
        f"\ue203Two\ue204 x {S}cite{D}c{E} \ue203A\ue203B\ue204{S}cite{D}d{E}"
        f" \ue204 {S}cite{D}e{E}"
    )
    found = [(c.source_ids, text[s:e]) for c, s, e in made.supports(text)]
    assert found == [(("a",), "One."), (("d",), "B")]


# --- CitationSpan ----------------------------------------------------------------------


def test_citation_span_is_an_immutable_hashable_picklable_record(impl: str) -> None:
    (record,) = parser(impl).finditer(f"x {S}cite{D}a{D}b{D}L1{E}")
    assert record == CitationSpan("cite", ("a", "b"), "L1", 2, 15, 2)
    assert record._fields == ("family", "source_ids", "locator", "start", "end", "clean_start")
    with pytest.raises(AttributeError):
        record.start = 0  # type: ignore[misc]
    with pytest.raises(TypeError):
        record[0] = "x"  # type: ignore[index]
    assert hash(record) == hash(CitationSpan("cite", ("a", "b"), "L1", 2, 15, 2))
    assert {record: 1}[CitationSpan("cite", ("a", "b"), "L1", 2, 15, 2)] == 1
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(record, protocol))
        assert back == record
        assert type(back) is CitationSpan


# --- options: validation and replace ----------------------------------------------------


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"start": "x", "delimiter": "x"}, ValueError, "different"),
        ({"stop": S}, ValueError, "different"),
        ({"start": "ab"}, ValueError, "one character"),
        ({"delimiter": ""}, ValueError, "one character"),
        ({"stop": E + E}, ValueError, "one character"),
        ({"start": 1}, TypeError, "start"),
        ({"delimiter": b"|"}, TypeError, "delimiter"),
        ({"max_marker_length": 0}, (TypeError, ValueError), "max_marker_length"),
        ({"max_marker_length": -3}, (TypeError, ValueError), "max_marker_length"),
        ({"max_marker_length": True}, (TypeError, ValueError), "max_marker_length"),
        ({"max_marker_length": 12.0}, (TypeError, ValueError), "max_marker_length"),
        ({"max_marker_length": "12"}, (TypeError, ValueError), "max_marker_length"),
        ({"offsets": "bytes"}, ValueError, "offsets"),
        ({"offsets": "UTF8"}, ValueError, "offsets"),
        ({"families": ()}, ValueError, "family"),
        ({"families": []}, ValueError, "family"),
        ({"families": ("cite", 3)}, TypeError, "str"),
        ({"families": ("cite", b"x")}, TypeError, "str"),
        ({"source_id": b"[a-z]+"}, TypeError, "source_id"),
        ({"source_id": re.compile(b"[a-z]+")}, TypeError, "source_id"),
        ({"locator": b"L1"}, TypeError, "locator"),
        ({"locator": 5}, TypeError, "locator"),
        ({"implementation": "rust"}, ValueError, "implementation"),
    ],
)
def test_option_errors(options: dict[str, Any], error: Any, message: str) -> None:
    with pytest.raises(error, match=message):
        Parser(**options)


def test_any_family_needs_no_families(impl: str) -> None:
    made = parser(impl, (), any_family=True)
    assert len(made.extract(f"{S}x{D}a{E}")) == 1


@pytest.mark.parametrize("method", ["extract", "finditer", "strip", "spans", "supports"])
@pytest.mark.parametrize("text", [b"\xee\x88\x80cite", None, 3, ["x"]])
def test_text_must_be_str(impl: str, method: str, text: object) -> None:
    with pytest.raises(TypeError):
        getattr(parser(impl), method)(text)
    with pytest.raises(TypeError):
        parser(impl).sub(text, label)  # type: ignore[arg-type]


def test_str_subclass_text(impl: str) -> None:
    class Text(str):
        pass

    text = Text(f"a {S}cite{D}x{E} b")
    made = parser(impl)
    assert made.extract(text) == made.extract(str(text))
    clean = made.strip(text)
    assert clean == "a  b"
    assert type(clean) is str


def test_replace(impl: str) -> None:
    made = parser(impl, ("cite", "navlist"), offsets="utf16", max_marker_length=40)
    other = made.replace(offsets="utf8", start="[")
    assert other is not made
    assert (other.offsets, other.start, other.families) == ("utf8", "[", ("cite", "navlist"))
    assert (other.max_marker_length, other.implementation) == (40, impl)
    assert (made.offsets, made.start) == ("utf16", S)  # the original is unchanged
    text = f"😀{S}navlist{D}a{E}"
    assert list(made.replace().finditer(text)) == list(made.finditer(text))
    assert next(made.replace(offsets="utf8").finditer(text)).start == 4
    with pytest.raises(ValueError, match="max_marker_length"):
        made.replace(max_marker_length=0)
    with pytest.raises(TypeError):
        made.replace(colour="red")
    twin = made.replace(implementation="python")
    assert twin.implementation == "python"
    assert list(twin.finditer(text)) == list(made.finditer(text))


def test_replace_keeps_families_given_as_an_iterator(impl: str) -> None:
    made = parser(impl, iter(["cite", "navlist"]))
    assert made.families == ("cite", "navlist")
    again = made.replace(offsets="utf8")
    assert again.families == ("cite", "navlist")
    text = f"{S}navlist{D}a{E} {S}{D}b{E}"
    assert summary(again.extract(text)) == summary(made.extract(text))
