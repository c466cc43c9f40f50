"""Offsets in code points, UTF-16 units and UTF-8 bytes: `citemark.offsets` against the codecs
(hypothesis) and, with the Parser's own offsets, against what JavaScript counts (node)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citemark import Parser
from citemark.offsets import OffsetMap, convert

S, D, E = "\ue200", "\ue202", "\ue201"
UNITS = ["codepoints", "utf16", "utf8"]

# Any code point, lone surrogates included (Hypothesis leaves them out by default).
any_text = st.text(st.characters(exclude_categories=()), max_size=60)


def reference(text: str, index: int, unit: str) -> int:
    """Code point position `index` in `unit`, by encoding the prefix."""
    prefix = text[:index]
    if unit == "utf16":
        return len(prefix.encode("utf-16-le", "surrogatepass")) // 2
    if unit == "utf8":
        return len(prefix.encode("utf-8", "surrogatepass"))
    return index


@given(any_text)
def test_codepoints_to_units_match_the_codecs(text: str) -> None:
    offsets = OffsetMap(text)
    for unit in UNITS:
        assert offsets.length(unit) == reference(text, len(text), unit)
        for index in range(len(text) + 1):
            assert offsets.convert(index, target=unit) == reference(text, index, unit)


@given(any_text)
def test_every_unit_position_round_trips_or_splits_a_character(text: str) -> None:
    offsets = OffsetMap(text)
    for unit in ("utf16", "utf8"):
        boundaries = {reference(text, index, unit) for index in range(len(text) + 1)}
        for position in range(offsets.length(unit) + 1):
            if position in boundaries:
                index = offsets.convert(position, source=unit, target="codepoints")
                assert reference(text, index, unit) == position
            else:
                with pytest.raises(ValueError, match=rf"{unit} position {position} falls inside"):
                    offsets.convert(position, source=unit, target="codepoints")


@given(any_text, st.data())
def test_units_convert_directly_both_ways(text: str, data: st.DataObject) -> None:
    index = data.draw(st.integers(0, len(text)))
    u16 = reference(text, index, "utf16")
    u8 = reference(text, index, "utf8")
    offsets = OffsetMap(text)
    assert offsets.convert(u16, source="utf16", target="utf8") == u8
    assert offsets.convert(u8, source="utf8", target="utf16") == u16
    assert convert(text, u16, source="utf16", target="utf8") == u8
    assert convert(text, index) == u16
    assert offsets.convert_all([index, 0, index], target="utf8") == [u8, 0, u8]


@pytest.mark.parametrize("unit", UNITS)
def test_out_of_range_raises_index_error(unit: str) -> None:
    text = "a\U0001f600中"
    offsets = OffsetMap(text)
    end = offsets.length(unit)
    assert offsets.convert(end, source=unit, target="codepoints") == 3
    for position in (-1, end + 1):
        with pytest.raises(IndexError, match=rf"{unit} position {position} is out of range"):
            offsets.convert(position, source=unit, target="utf8")
    with pytest.raises(IndexError):
        convert("", 1, source=unit)


def test_inside_a_character_names_the_position() -> None:
    text = "ab\U0001f600"
    with pytest.raises(ValueError, match="utf16 position 3 falls inside a surrogate pair"):
        convert(text, 3, source="utf16", target="utf8")
    with pytest.raises(ValueError, match="utf8 position 4 falls inside a multi-byte"):
        convert(text, 4, source="utf8", target="utf16")


def test_lone_surrogates_count_one_unit_and_three_bytes() -> None:
    offsets = OffsetMap("\ud800x\udfff")
    assert offsets.convert_all([0, 1, 2, 3], target="utf16") == [0, 1, 2, 3]
    assert offsets.convert_all([0, 1, 2, 3], target="utf8") == [0, 3, 4, 7]


def test_bad_arguments() -> None:
    offsets = OffsetMap("abc")
    with pytest.raises(ValueError, match="source must be one of"):
        offsets.convert(0, source="utf32")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="target must be one of"):
        offsets.convert(0, target="bytes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="position must be an int"):
        offsets.convert(1.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="position must be an int"):
        offsets.convert(True)
    with pytest.raises(TypeError, match="text must be str"):
        OffsetMap(b"abc")  # type: ignore[arg-type]


def test_a_long_mixed_text_converts_quickly() -> None:
    text = "ab\U0001f600中é" * 200_000
    offsets = OffsetMap(text)
    assert offsets.length("utf16") == 6 * 200_000
    assert offsets.length("utf8") == (2 + 4 + 3 + 2) * 200_000
    last = len(text) - 1
    assert offsets.convert(last, target="utf8") == offsets.length("utf8") - 2


def marker(*ids: str, locator: str | None = None) -> str:
    return S + "cite" + D + D.join(ids) + (D + locator if locator else "") + E


PIECES = [
    "Evidence \U0001f600 ",
    "👩‍👩‍👧‍👦 family ",
    "🇯🇵 flag ",
    "中文的句子。",
    "\U00020000\U0002a6d6 astral CJK ",
    "e\u0301 combining acute, Z\u0351\u0352 marks ",
    "Ünïcödé, кириллица, العربية ",
    "\ud800 lone surrogate ",
    "plain ascii ",
    "\n",
]
MARKERS = [
    marker("turn0search0"),
    marker("turn0search0", "turn0search1"),
    marker("turn0file0", locator="L8-L13"),
    marker("turn12news3", "turn1view0", "turn2view3"),
]


def node_texts() -> list[str]:
    fixed = [
        "Evidence \U0001f600 \ue200cite\ue202turn0search0\ue202turn0search1\ue201.",
        MARKERS[0] + "中" + MARKERS[1] + MARKERS[2] + "\U0001f600",
        "no markers at all 😀",
        "",
    ]
    rng = random.Random(20240601)
    generated = [
        "".join(rng.choice(PIECES + MARKERS) for _ in range(rng.randint(1, 12))) for _ in range(60)
    ]
    return fixed + generated


# What JavaScript counts for each of `node_texts()`, computed once by node and committed:
# node is not a test dependency (wheel test containers have none).
JS_OFFSETS = Path(__file__).parents[1] / "data" / "js_offsets.json"
REGENERATE = "python scripts/regen_js_offsets.py (needs node)"


@pytest.fixture(scope="module")
def javascript() -> list[tuple[str, dict[str, list]]]:
    """Each test text with what node computed for it, from the committed fixture."""
    recorded = json.loads(JS_OFFSETS.read_text(encoding="utf-8"))
    texts = [entry["text"] for entry in recorded]
    assert texts == node_texts(), f"{JS_OFFSETS.name} is stale: run {REGENERATE}"
    return [(entry["text"], entry["js"]) for entry in recorded]


@pytest.mark.parametrize("unit", ["utf16", "utf8"])
def test_parser_offsets_match_javascript(
    javascript: list[tuple[str, dict[str, list]]], implementation: str, unit: str
) -> None:
    parser = Parser(offsets=unit, implementation=implementation)  # type: ignore[arg-type]
    for text, js in javascript:
        got = [[c.start, c.end, c.clean_start] for c in parser.finditer(text)]
        assert got == [m[unit] for m in js["markers"]], text


def test_offset_map_of_parser_offsets_matches_javascript(
    javascript: list[tuple[str, dict[str, list]]], implementation: str
) -> None:
    parser = Parser(implementation=implementation)  # type: ignore[arg-type]
    for text, js in javascript:
        offsets = OffsetMap(text)
        clean = OffsetMap(parser.strip(text))
        for citation, expected in zip(parser.finditer(text), js["markers"], strict=True):
            for unit in ("utf16", "utf8"):
                got = [
                    offsets.convert(citation.start, target=unit),
                    offsets.convert(citation.end, target=unit),
                    clean.convert(citation.clean_start, target=unit),
                ]
                assert got == expected[unit], text


def test_offset_map_matches_javascript_everywhere(
    javascript: list[tuple[str, dict[str, list]]],
) -> None:
    for text, js in javascript:
        offsets = OffsetMap(text)
        for unit, key in (("utf16", "u16"), ("utf8", "u8")):
            boundaries = js[key]
            assert offsets.convert_all(list(range(len(text) + 1)), target=unit) == boundaries
            assert offsets.length(unit) == boundaries[-1]
            for index, position in enumerate(boundaries):
                assert offsets.convert(position, source=unit, target="codepoints") == index
            inside = set(range(boundaries[-1])) - set(boundaries)
            for position in inside:
                with pytest.raises(ValueError, match=f"position {position} "):
                    offsets.convert(position, source=unit, target="codepoints")
        assert offsets.convert_all(js["u16"], source="utf16", target="utf8") == js["u8"]


PARSER_TEXT = st.lists(st.sampled_from(PIECES + MARKERS + ["\U0001f600", "é", "x"])).map("".join)


@given(text=PARSER_TEXT)
def test_parser_units_are_offset_map_conversions(implementation: str, text: str) -> None:
    codepoints = list(Parser(implementation=implementation).finditer(text))  # type: ignore[arg-type]
    offsets = OffsetMap(text)
    clean = OffsetMap(Parser(implementation=implementation).strip(text))  # type: ignore[arg-type]
    for unit in ("utf16", "utf8"):
        parser = Parser(offsets=unit, implementation=implementation)  # type: ignore[arg-type]
        expected = [
            (
                offsets.convert(c.start, target=unit),
                offsets.convert(c.end, target=unit),
                clean.convert(c.clean_start, target=unit),
            )
            for c in codepoints
        ]
        assert [(c.start, c.end, c.clean_start) for c in parser.finditer(text)] == expected
