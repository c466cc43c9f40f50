"""Issue 12: exact streams under every Parser option, sanitizing that keeps prose, and the
structure that keeps every public API linear (work counted, never timed)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citemark import sources as sources_module
from citemark.parser import DEFAULT_MAX_PART_LENGTH, Parser
from citemark.stream import StreamParser
from strategies import chunked, feed_all

S, D, E = "\ue200", "\ue202", "\ue201"

# Markdown and marker pieces: code fences, inline code, indented lines, blank lines, and
# the characters of a custom grammar ("[", "|", "]").
PIECES = [
    S,
    D,
    E,
    "cite",
    "ci",
    "te",
    "turn0search1",
    "L1-L2",
    "a",
    " ",
    "    ",
    "\t",
    "\n",
    "\n\n",
    "\r\n",
    "\r",
    "`",
    "``",
    "```",
    "~~~",
    "- ",
    "# ",
    "\\",
    "😀",
    "é",
    "[",
    "|",
    "]",
]

OPTIONS: list[dict[str, Any]] = [
    {},
    {"skip_code": True},
    {"skip_code": True, "families": ("cite", "ci")},
    {"skip_code": True, "any_family": True},
    {"any_family": True},
    {"families": ("cite", "ci")},
    {"families": ("",)},
    {"start": "[", "delimiter": "|", "stop": "]"},
    {"start": "[", "delimiter": "|", "stop": "]", "skip_code": True, "any_family": True},
    {"source_id": r"[a-z0-9]+", "locator": r"L\d+"},
    {"source_id": r"\S+", "skip_code": True},
    {"max_marker_length": 12},
    {"max_marker_length": 12, "skip_code": True},
    {"max_marker_length": 10**9},
]


@given(
    text=st.lists(st.sampled_from(PIECES), max_size=60).map("".join),
    cuts=st.lists(st.integers(0, 600), max_size=60),
    options=st.sampled_from(OPTIONS),
    offsets=st.sampled_from(["codepoints", "utf16", "utf8"]),
    bound=st.sampled_from([4, 16, 4096, 10**9]),
)
def test_any_chunking_under_every_option(
    implementation: str,
    text: str,
    cuts: list[int],
    options: dict[str, Any],
    offsets: str,
    bound: int,
) -> None:
    parser = Parser(**options, offsets=offsets, implementation=implementation)  # type: ignore[arg-type]
    stream = StreamParser(parser, max_marker_length=bound)
    batch = stream.parser
    assert feed_all(stream, chunked(text, cuts)) == (batch.strip(text), list(batch.finditer(text)))


@given(
    text=st.lists(st.sampled_from(PIECES), max_size=40).map("".join),
    options=st.sampled_from(OPTIONS),
)
def test_one_character_at_a_time_under_every_option(
    implementation: str, text: str, options: dict[str, Any]
) -> None:
    stream = StreamParser(Parser(**options, implementation=implementation))  # type: ignore[arg-type]
    batch = stream.parser
    assert feed_all(stream, list(text)) == (batch.strip(text), list(batch.finditer(text)))


CODE_CASES = [
    # a fence: the marker inside stays, the one after it is a citation
    f"```\n{S}cite{D}turn0file0{E}\n```\nafter {S}cite{D}turn0file1{E} end",
    # inline code
    f"see `{S}cite{D}turn0file0{E}` and {S}cite{D}turn0file1{E}.",
    # an indented block
    f"intro\n\n    {S}cite{D}turn0file0{E}\n\nprose {S}cite{D}turn0file1{E}",
    # a fence that never closes: everything after it is code
    f"a {S}cite{D}x{E}\n\n~~~\n{S}cite{D}turn0file0{E}\n\nmore {S}cite{D}y{E}",
    # a backtick run closed in a later paragraph is not code
    f"one ` {S}cite{D}a{E}\n\ntwo ` {S}cite{D}b{E}",
]


@pytest.mark.parametrize("text", CODE_CASES)
@pytest.mark.parametrize("size", [1, 2, 3, 7])
def test_skip_code_stream_equals_the_batch(implementation: str, text: str, size: int) -> None:
    parser = Parser(skip_code=True, implementation=implementation)  # type: ignore[arg-type]
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    got = feed_all(StreamParser(parser), chunks)
    assert got == (parser.strip(text), list(parser.finditer(text)))
    assert (S in got[0]) == (text != CODE_CASES[-1])  # a marker in code was kept


def test_stream_releases_skip_code_text_at_block_boundaries(implementation: str) -> None:
    parser = Parser(skip_code=True, implementation=implementation)  # type: ignore[arg-type]
    stream = StreamParser(parser)
    first = stream.feed(f"One {S}cite{D}turn0file0{E}.\n\nTwo `")
    assert first.text == "One .\n\n"
    assert stream.held == "Two `"
    assert (
        stream.feed(f"{S}cite{D}x{E}` three.\n\nFour.").text == f"Two `{S}cite{D}x{E}` three.\n\n"
    )
    assert stream.close().text == "Four."


# -- the work per feed: held text is looked at again only once it has doubled -----------


@pytest.mark.parametrize(
    ("options", "unit"),
    [
        ({"any_family": True}, f"{S}word{D}turn0search0 "),
        ({"max_marker_length": 10**9}, f"{S}cite{D}turn0search0 "),
        ({"families": ("cite",)}, f"{S}ci{S}cite{D}turn0search0 {E}"),
        ({"skip_code": True}, "x `a` "),
    ],
)
def test_one_character_feeds_read_each_character_a_bounded_number_of_times(
    implementation: str, options: dict[str, Any], unit: str
) -> None:
    text = unit * 400
    stream = StreamParser(Parser(**options, implementation=implementation))  # type: ignore[arg-type]
    output = [stream.feed(char).text for char in text]
    output.append(stream.close().text)
    assert "".join(output) == stream.parser.strip(text)
    # `work` counts the characters every look reads (the front's and skip_code's): looking
    # at all the held text at every feed would read len(text)**2 / 2 of them.
    assert 0 < stream.work <= 8 * len(text)


@pytest.mark.parametrize("bad", [None, 0, -1, 1.5, True, "10"])
def test_stream_bound_must_be_a_positive_int(implementation: str, bad: object) -> None:
    parser = Parser(implementation=implementation)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="max_marker_length must be a positive int"):
        StreamParser(parser, max_marker_length=bad)  # type: ignore[arg-type]


def test_stream_parser_must_be_a_parser() -> None:
    with pytest.raises(TypeError, match=r"parser must be a citemark\.Parser"):
        StreamParser("x")  # type: ignore[arg-type]


# -- sanitize removes marker characters, never prose ------------------------------------


def test_sanitize_keeps_the_prose_after_an_unclosed_start(parser: Parser) -> None:
    text = f"open: {S}cite{D}turn2search1 and a bad id {S}cite{D}https://x.example{E} kept."
    assert parser.sub(text, lambda c: "[1]", sanitize=True) == (
        "open: citeturn2search1 and a bad id  kept."
    )


def test_sanitize_on_the_flawed_example(parser: Parser) -> None:
    from pathlib import Path

    path = Path(__file__).parents[2] / "examples" / "flawed_answer.txt"
    text = path.read_text(encoding="utf-8")
    clean = parser.sub(text, lambda c: "[n]", sanitize=True)
    assert "and one with a bad id" in clean
    assert not re.search("[\ue200-\ue206]", clean)


# -- supports, sub and split_lines: one pass ----------------------------------------------


def test_supports_reads_the_text_once(parser: Parser) -> None:
    # A text read once: no citation copies and strips the whole text before it.
    many = (f"\ue203claim\ue204 {S}cite{D}a{E} " * 50) + f"x {S}cite{D}b{E}"
    found = parser.supports(many)
    assert len(found) == 50
    assert all(many[start:end] == "claim" for _, start, end in found)


def test_supports_edge_cases(parser: Parser) -> None:
    text = f"\ue204{S}cite{D}a{E} \ue203\ue204 {S}cite{D}b{E} \ue203x\ue204\ue204{S}cite{D}c{E}"
    assert [(c.source_ids, s, e) for c, s, e in parser.supports(text)] == [(("b",), 11, 11)]


def supports_reference(parser: Parser, text: str) -> list[tuple[Any, int, int]]:
    """The rule as first written (quadratic): the text before the citation, stripped,
    ends with U+E204, and the last U+E203 before it has no U+E204 after it."""
    found = []
    for citation in parser.finditer(text):
        before = text[: citation.start].rstrip()
        if before.endswith("\ue204"):
            opened = before.rfind("\ue203")
            if opened >= 0 and "\ue204" not in before[opened:-1]:
                found.append((citation, opened + 1, len(before) - 1))
    return found


@given(
    text=st.lists(
        st.sampled_from([S, D, E, "cite", "a", " ", "\n", "\t", "\ue203", "\ue204", "x"]),
        max_size=40,
    ).map("".join)
)
def test_supports_matches_its_rule(parser: Parser, text: str) -> None:
    assert parser.supports(text) == supports_reference(parser, text)


def test_split_lines_one_long_line_is_cut_in_one_pass() -> None:
    line = ("word " * 100_000).rstrip()
    lines = sources_module.split_lines(line, 200)
    assert "".join(piece.text + " " for piece in lines).rstrip() == line
    assert max(len(piece.text) for piece in lines) <= 200
    assert [piece.number for piece in lines] == list(range(1, len(lines) + 1))


@pytest.mark.parametrize("wrap", [0, -1, -200])
def test_split_lines_rejects_a_wrap_below_one(wrap: int) -> None:
    with pytest.raises(ValueError, match="wrap must be a positive int or None"):
        sources_module.split_lines("some text", wrap)


@pytest.mark.parametrize("wrap", [1.5, "200", True])
def test_split_lines_rejects_a_wrap_of_another_type(wrap: object) -> None:
    with pytest.raises(TypeError, match="wrap must be a positive int or None"):
        sources_module.split_lines("some text", wrap)  # type: ignore[arg-type]


# -- custom patterns see bounded text ---------------------------------------------------


def test_a_custom_pattern_never_sees_a_part_past_the_cap(implementation: str) -> None:
    made = Parser(source_id=r"(a+)+$", implementation=implementation)  # type: ignore[arg-type]
    long_id = "a" * (DEFAULT_MAX_PART_LENGTH + 1) + "!"
    text = f"{S}cite{D}{long_id}{E} {S}cite{D}aaaa{E}"
    # A backtracking pattern on a long part would not come back; past the cap it is not run.
    assert [c["source_ids"] for c in made.extract(text)] == [["aaaa"]]
    raised = made.replace(max_part_length=None, source_id=r"a+!?")
    assert len(raised.extract(text)) == 2


@pytest.mark.parametrize("bad", [0, -3, 1.5, "9", True])
def test_max_part_length_is_checked(bad: object) -> None:
    with pytest.raises((TypeError, ValueError), match="max_part_length"):
        Parser(max_part_length=bad)  # type: ignore[arg-type]


# -- results built to their floor: shared strings, never shared containers --------------


def test_recurring_citations_are_independent_results(api: Any, parser: Parser) -> None:
    # The kernel shares the str of a recurring id, marker or locator and copies a dict's
    # key table from the previous citation: every dict and list must still be its own.
    raw = f"{S}cite{D}turn0search0{D}L1-L2{E}"
    text = f"a {raw} b" * 3
    found = api.extract_citations(text)
    assert [list(c) for c in found] == [
        ["raw", "family", "source_ids", "locator", "start", "end"]
    ] * 3
    assert len({id(c) for c in found}) == len({id(c["source_ids"]) for c in found}) == 3
    found[0]["source_ids"].append("changed")
    found[0]["raw"] = "changed"
    found[1]["start"] = -1
    assert found[2] == {
        "raw": raw,
        "family": "cite",
        "source_ids": ["turn0search0"],
        "locator": "L1-L2",
        "start": 2 * len(text) // 3 + 2,
        "end": 2 * len(text) // 3 + 2 + len(raw),
    }
    spans = list(parser.finditer(text))
    assert [s.source_ids for s in spans] == [("turn0search0",)] * 3


@pytest.mark.parametrize("wide", ["", "é", "😀"], ids=["ucs1", "ucs2", "ucs4"])
def test_many_recurring_ids_equal_the_twin(implementation: str, wide: str) -> None:
    # More distinct ids, markers and locators than the kernel's shared slots, recurring in
    # an order that makes them collide and evict each other, in every storage width.
    import random

    from citemark._core.dropin import DropIn
    from citemark._kernels import scan_py as _scan_py

    rng = random.Random(12)
    ids = [f"turn{i}search{i % 7}" for i in range(300)]
    pieces = []
    for _ in range(3000):
        body = D.join(rng.sample(ids, rng.randint(1, 3)))
        locator = rng.choice(["", f"{D}L{rng.randint(1, 40)}", f"{D} L2-L{rng.randint(3, 9)} "])
        pieces.append(f"{wide}x {S}cite{D}{body}{locator}{E}")
    text = "".join(pieces)
    made = Parser(implementation=implementation)  # type: ignore[arg-type]
    twin = DropIn(_scan_py)
    assert made.extract(text) == twin.extract_citations(text)
    assert list(made.finditer(text)) == list(Parser(implementation="python").finditer(text))
