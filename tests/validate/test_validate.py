"""`citemark.validate`: every diagnostic code has a text that triggers it and a close one that
does not; resolution to sources and quoted lines; the heuristics' edges; the field's inputs;
both implementations."""

from __future__ import annotations

import re
from typing import Any

import pytest

import citemark.validate
from citemark import Parser
from citemark.sources import Registry, Source
from citemark.validate import CODES, Diagnostic, parse_locator, resolve, validate

S, D, E = "\ue200", "\ue202", "\ue201"


def c(*parts: str, family: str = "cite") -> str:
    return S + family + D + D.join(parts) + E


def make_registry() -> Registry:
    registry = Registry()
    registry.add_tool_call(["one\ntwo\nthree\nfour", "five\nsix"])  # turn0file0, turn0file1
    registry.add_tool_call(["a whole block"], kind="search", unit="block")  # turn1search0
    registry.add_context(["an injected block"])  # block1
    return registry


REGISTRY = make_registry()


def codes(found: list[Diagnostic]) -> list[str]:
    return [d.code for d in found]


# code -> (a text that triggers it, a close text that is clean, validate options)
CASES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "unknown-source": ("Claim." + c("turn0file9"), "Claim." + c("turn0file0"), {}),
    "locator-out-of-range": (
        "Claim." + c("turn0file0", "L3-L5"),
        "Claim." + c("turn0file0", "L3-L4"),
        {},
    ),
    "locator-reversed": (
        "Claim." + c("turn0file0", "L4-L2"),
        "Claim." + c("turn0file0", "L2-L4"),
        {},
    ),
    "locator-zero": ("Claim." + c("turn0file0", "L0-L2"), "Claim." + c("turn0file0", "L1-L2"), {}),
    "locator-missing": (
        "Claim." + c("turn0file0"),
        "Claim." + c("turn0file0", "L1") + " Block." + c("turn1search0"),
        {"style": "tool-lines"},
    ),
    "locator-unexpected": (
        "Claim." + c("turn1search0", "L1"),
        "Claim." + c("turn0file0", "L1"),
        {},
    ),
    "locator-ambiguous": (
        "Claim." + c("turn0file0", "turn0file1", "L1"),
        "Claim." + c("turn0file0", "L1") + c("turn0file1", "L1"),
        {},
    ),
    "invalid-marker": ("Claim." + c("https://example.com/a"), "Claim." + c("turn0file0"), {}),
    "unterminated-marker": (
        "Claim." + S + "cite" + D + "turn0file0 and more text",
        "Claim." + c("turn0file0") + " and more text",
        {},
    ),
    "stray-stop": (
        "Claim." + c("turn0file0") + E + " more",
        "Claim." + c("turn0file0") + " more",
        {},
    ),
    "stray-delimiter": ("Claim." + D + c("turn0file0"), "Claim." + c("turn0file0"), {}),
    "bare-reference": (
        "As turn0file0 says, yes.",
        "As the handbook says, yes." + c("turn0file0"),
        {},
    ),
    "escaped-marker": (
        "Claim.\\ue200cite\\ue202turn0file0\\ue201",
        "The start character is `\\ue200`, written as an escape in code.",
        {},
    ),
    "citation-in-code": (
        "```python\nx = 1" + c("turn0file0") + "\n```\n",
        "```python\nx = 1\n```\n\nThis sets x." + c("turn0file0"),
        {},
    ),
    "citation-on-fence-line": (
        "```\nx = 1\n```" + c("turn0file0") + "\nThis sets x." + c("turn0file1"),
        "```\nx = 1\n```\nThis sets x." + c("turn0file0"),
        {},
    ),
    "citation-in-emphasis": (
        "**A bold claim" + c("turn0file0") + "**",
        "**A bold claim.**" + c("turn0file0"),
        {},
    ),
    "citation-before-punctuation": (
        "A claim" + c("turn0file0") + ".",
        "A claim." + c("turn0file0"),
        {},
    ),
    "citation-alone": ("A claim.\n" + c("turn0file0"), "A claim." + c("turn0file0"), {}),
    "citations-grouped-at-end": (
        "One.\n\nTwo.\n\nThree." + c("turn0file0") + c("turn0file1"),
        "One." + c("turn0file0") + "\n\nTwo.\n\nThree." + c("turn0file1"),
        {},
    ),
}


def test_every_code_has_a_case() -> None:
    assert sorted(CASES) == sorted(CODES)


@pytest.mark.parametrize("code", sorted(CASES))
def test_code_triggered(parser: Parser, code: str) -> None:
    trigger, _, options = CASES[code]
    found = validate(trigger, REGISTRY, parser=parser, **options)
    assert code in codes(found), found
    for diagnostic in found:
        assert diagnostic.severity == CODES[diagnostic.code]
        assert 0 <= diagnostic.start < diagnostic.end <= len(trigger)


@pytest.mark.parametrize("code", sorted(CASES))
def test_code_not_triggered(parser: Parser, code: str) -> None:
    _, clean, options = CASES[code]
    assert validate(clean, REGISTRY, parser=parser, **options) == []


def test_docstring_table_lists_every_code() -> None:
    doc = citemark.validate.__doc__ or ""
    rows = dict(re.findall(r"^\| `([a-z-]+)` +\| (error|warning) ", doc, flags=re.MULTILINE))
    assert rows == CODES


def test_diagnostic_places_and_json(parser: Parser) -> None:
    text = "Intro. Claim" + c("turn0file9") + "."
    found = validate(text, REGISTRY, parser=parser)
    assert [(d.code, d.start, d.end) for d in found] == [
        ("citation-before-punctuation", 12, len(text) - 1),
        ("unknown-source", 12, len(text) - 1),
    ]
    assert found[1].to_json() == {
        "code": "unknown-source",
        "severity": "error",
        "message": "'turn0file9' is not a known source",
        "start": 12,
        "end": len(text) - 1,
    }


# --- resolution ---------------------------------------------------------------------------------


def test_resolve_quotes_lines(parser: Parser) -> None:
    text = (
        "A." + c("turn0file0", "L2-L3") + " B." + c("turn0file1") + " C." + c("turn0file9", "L1")
        + " D." + c("turn0file0", "turn0file1", "L2") + " E." + c("turn0file0", "L3-L9")
    )  # fmt: skip
    resolved = resolve(text, REGISTRY, parser=parser)
    assert [r.quote for r in resolved] == ["two\nthree", None, None, "two\nsix", None]
    first = resolved[0]
    assert first.citation.source_ids == ("turn0file0",)
    assert first.targets[0].source is REGISTRY["turn0file0"]
    assert [line.number for line in first.targets[0].lines] == [2, 3]
    assert resolved[2].targets[0].source is None
    assert [t.id for t in resolved[3].targets] == ["turn0file0", "turn0file1"]


def test_parse_locator() -> None:
    assert parse_locator("L8-L13") == (8, 13)
    assert parse_locator("L4") == (4, 4)
    assert parse_locator("L١٢") == (12, 12)
    assert parse_locator(None) is None
    assert parse_locator("p.12") is None


def test_sources_as_plain_mapping_or_none(parser: Parser) -> None:
    plain = {"doc1": {"text": "a\nb"}, "doc2": Source("doc2", "x", unit="block")}
    assert validate("Claim." + c("doc1", "L2"), plain, parser=parser) == []
    assert codes(validate("Claim." + c("doc1", "L3"), plain, parser=parser)) == [
        "locator-out-of-range"
    ]
    assert resolve("Claim." + c("doc1", "L2"), plain, parser=parser)[0].quote == "b"
    # without sources: syntax and placement only
    assert validate("Claim." + c("anything"), None, parser=parser) == []
    assert codes(validate("Claim." + c("anything"), None, style="tool-lines")) == [
        "locator-missing"
    ]
    assert codes(validate("Claim." + c("x", "L0"), None)) == ["locator-zero"]
    with pytest.raises(TypeError):
        validate("text", ["doc1"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="style"):
        validate("text", None, style="lines")  # type: ignore[arg-type]


# --- styles and locators -------------------------------------------------------------------------


def test_styles(parser: Parser) -> None:
    located = "Claim." + c("turn0file0", "L1")
    bare = "Claim." + c("turn0file0")
    assert validate(located, REGISTRY, parser=parser, style="tool-lines") == []
    assert codes(validate(located, REGISTRY, parser=parser, style="tool")) == ["locator-unexpected"]
    assert codes(validate(located, REGISTRY, parser=parser, style="context")) == [
        "locator-unexpected"
    ]
    assert validate(bare, REGISTRY, parser=parser, style="tool") == []
    assert validate("Claim." + c("block1"), REGISTRY, parser=parser, style="context") == []
    # an unknown source is reported once, not also as missing its lines
    assert codes(validate("Claim." + c("turn9file0"), REGISTRY, style="tool-lines")) == [
        "unknown-source"
    ]


def test_locator_of_another_shape_is_not_checked() -> None:
    page = Parser(locator=r"p\.\d+")
    assert validate("Claim." + c("turn0file0", "p.99"), REGISTRY, parser=page) == []


def test_empty_source_has_no_lines() -> None:
    empty = Registry([Source("doc1", "")])
    found = validate("Claim." + c("doc1", "L1"), empty)
    assert codes(found) == ["locator-out-of-range"]
    assert "no lines" in found[0].message


# --- markers that are not citations ------------------------------------------------------------


def test_marker_problems(parser: Parser) -> None:
    text = (
        "a" + S + "navlist" + D + "Title" + D + "turn0file0" + E  # a family not accepted
        + " b" + S + "cite" + D + E  # an empty body
        + " c" + S + "broken prose" + c("turn0file0")  # START abandoned before a citation
        + " d" + S + "cite" + D + "turn0file1" + S  # two STARTs, no STOP
    )  # fmt: skip
    found = validate(text, REGISTRY, parser=parser)
    assert codes(found) == [
        "invalid-marker",
        "invalid-marker",
        "unterminated-marker",
        "unterminated-marker",
        "unterminated-marker",
    ]
    assert "navlist" in found[0].message
    assert [text[d.start] for d in found[2:]] == [S, S, S]
    # the same families accepted: the navlist marker is a citation
    both = parser.replace(families=("cite", "navlist"))
    assert "navlist" not in " ".join(d.message for d in validate(text, REGISTRY, parser=both))


def test_too_long_marker() -> None:
    short = Parser(max_marker_length=12)
    found = validate("Claim." + c("turn0file0", "L1-L2"), REGISTRY, parser=short)
    assert codes(found) == ["invalid-marker"]
    assert "max_marker_length" in found[0].message


def test_custom_markers() -> None:
    custom = Parser(start="⟦", delimiter="¦", stop="⟧")
    text = "Claim.⟦cite¦turn0file0⟧ Then ⟧ and ¦ and ⟦ and \\u27e6."
    assert codes(validate(text, REGISTRY, parser=custom)) == [
        "stray-stop",
        "stray-delimiter",
        "unterminated-marker",
        "escaped-marker",
    ]
    # the default markers are plain text to this parser: the id in them is written bare
    assert codes(validate("Claim." + c("turn0file0") + E, REGISTRY, parser=custom)) == [
        "bare-reference"
    ]


def test_offsets_are_code_points_whatever_the_parser() -> None:
    text = "Evidence \U0001f600 " + c("turn0file0") + "."
    for options in ({"offsets": "utf16"}, {"offsets": "utf8"}, {"skip_code": True}):
        found = validate(text, REGISTRY, parser=Parser(**options))
        assert [(d.code, d.start) for d in found] == [("citation-before-punctuation", 11)]


def test_code_is_checked_even_with_skip_code() -> None:
    text = "Use `x" + c("turn0file9") + "`."
    found = validate(text, REGISTRY, parser=Parser(skip_code=True))
    assert codes(found) == ["citation-in-code", "unknown-source"]


# --- placement heuristics -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "A **bold** claim." + c("turn0file0"),
        "snake_case_name is used here." + c("turn0file0"),
        "Compute 2 * 3 * 4 here." + c("turn0file0") + " More * text.",
        "* A list item with a claim." + c("turn0file0") + "\n* Another item.",
        "_Italic._" + c("turn0file0") + " and *more*.",
        "**Note:**" + c("turn0file0") + " the rest.",
        "A claim." + c("my_id_x") + " and _trailing_ words.",
    ],
)
def test_not_in_emphasis(text: str) -> None:
    sources = {"turn0file0": {"text": "x"}, "my_id_x": {"text": "y"}}
    assert "citation-in-emphasis" not in codes(validate(text, sources))


@pytest.mark.parametrize(
    "text",
    [
        "*An italic claim" + c("turn0file0") + "*",
        "_An italic claim" + c("turn0file0") + "_ and more.",
        "***Both at once" + c("turn0file0") + "***",
        "**Bold over\ntwo lines" + c("turn0file0") + "**",
        "- **A list item" + c("turn0file0") + "**",
        "A claim **with emphasis `code` and" + c("turn0file0") + "** done.",
    ],
)
def test_in_emphasis(text: str) -> None:
    assert "citation-in-emphasis" in codes(validate(text, REGISTRY))


def test_emphasis_does_not_cross_paragraphs_or_code() -> None:
    text = "*start\n\nclaim." + c("turn0file0") + "\n\nend*"
    assert validate(text, REGISTRY) == []
    # a code block ends a paragraph: emphasis cannot run across it
    fenced = "*start\n```\ncode\n```\nclaim." + c("turn0file0") + " end*"
    assert validate(fenced, REGISTRY) == []
    inline = "*start `code` claim" + c("turn0file0") + " end*"
    assert codes(validate(inline, REGISTRY)) == ["citation-in-emphasis"]


@pytest.mark.parametrize(
    ("text", "flagged"),
    [
        ("Claim" + c("turn0file0") + c("turn0file1") + ".", True),
        ("Claim " + c("turn0file0") + " " + c("turn0file1") + " ;", True),
        ("Claim" + c("turn0file0") + "。", True),
        ("Claim" + c("turn0file0") + "…", True),
        ("Claim (see the policy" + c("turn0file0") + ").", False),
        ("Claim." + c("turn0file0") + "\n. list?", False),
        ("Claim" + c("turn0file0") + " and more.", False),
    ],
)
def test_before_punctuation(text: str, flagged: bool) -> None:
    found = [d for d in validate(text, REGISTRY) if d.code == "citation-before-punctuation"]
    assert bool(found) is flagged
    if found:
        assert len(found) == 1  # one finding for a run of citations


@pytest.mark.parametrize(
    ("text", "alone"),
    [
        ("Claim.\n" + c("turn0file0") + c("turn0file1"), 1),
        ("Claim.\n\n" + c("turn0file0") + "\n\nMore.", 1),
        ("Claim.\n- " + c("turn0file0") + "\n> " + c("turn0file1") + "\n1. " + c("turn0file0"), 3),
        ("Claim.\n" + c("turn0file0") + ".", 1),
        ("Claim.\n- Item." + c("turn0file0"), 0),
        (c("turn0file0") + " Claim at the start.", 0),
    ],
)
def test_alone(text: str, alone: int) -> None:
    assert codes(validate(text, REGISTRY)).count("citation-alone") == alone


@pytest.mark.parametrize(
    ("text", "grouped"),
    [
        ("One.\n\nTwo. Three." + c("turn0file0", "turn0file1"), True),
        ("- One.\n- Two." + c("turn0file0") + " " + c("turn0file1") + "\n", True),
        ("One. Two." + c("turn0file0") + c("turn0file1"), False),  # one paragraph
        ("One.\n\nTwo." + c("turn0file0") + c("turn0file0"), False),  # one source
        ("One." + c("turn0file0") + "\n\nTwo." + c("turn0file1"), False),
        ("One.\n\nTwo." + c("turn0file0") + c("turn0file1") + " And after.", False),
    ],
)
def test_grouped_at_end(text: str, grouped: bool) -> None:
    assert ("citations-grouped-at-end" in codes(validate(text, REGISTRY))) is grouped


def test_fence_line_does_not_swallow_the_rest() -> None:
    text = "```\nx = 1\n```" + c("turn0file0") + "\n\nLater **bold" + c("turn0file1") + "**"
    assert codes(validate(text, REGISTRY)) == ["citation-on-fence-line", "citation-in-emphasis"]
    opening = "```python" + c("turn0file0") + "\nx = 1\n```\n"
    assert codes(validate(opening, REGISTRY)) == ["citation-on-fence-line"]


def test_fence_line_read_without_the_markers_before_its_citation() -> None:
    # A marker that is no citation before the first citation of a line is left out of what
    # opens the fence (read in place when there is none).
    for broken in ("", "\ue200cite\ue202bad id\ue201"):
        text = f"``{broken}` {c('turn0file0')}\nx = 1\n```\n"
        found = codes(validate(text, REGISTRY))
        assert "citation-on-fence-line" in found, broken
        assert ("invalid-marker" in found) is bool(broken)
    assert "citation-on-fence-line" not in codes(validate(f"``x` {c('turn0file0')}\n", REGISTRY))


def test_indented_code_and_tilde_fences() -> None:
    assert codes(validate("Text.\n\n    code" + c("turn0file0") + "\n", REGISTRY)) == [
        "citation-in-code"
    ]
    assert codes(validate("~~~\n" + c("turn0file0") + "\n~~~\n", REGISTRY)) == ["citation-in-code"]


# --- ids and escapes written as text --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("See turn0file0.", "turn0file0"),
        ("Claim citeturn0search0turn0search4.", "citeturn0search0turn0search4"),
        ("Claimciteturn0file1L8-L13, ok", "citeturn0file1L8-L13"),
        ("A filecite turn2view3 here", "turn2view3"),
        ("Block block1 says so.", "block1"),
        ("(turn12news345)", "turn12news345"),
    ],
)
def test_bare_references(text: str, written: str) -> None:
    found = [d for d in validate(text, REGISTRY) if d.code == "bare-reference"]
    assert [text[d.start : d.end] for d in found] == [written]


@pytest.mark.parametrize(
    "text",
    [
        "Nothing to see: return0value1 and saturn5rocket2.",
        "block12 is not a registered id and block is a word.",
        "Code `turn0file0` and\n```\nciteturn0file0\n```\n",
        "Inside a marker it is fine." + c("turn0file0"),
        "A foreign marker: " + S + "navlist" + D + "turn0file0" + E + " is reported once.",
    ],
)
def test_not_bare_references(text: str) -> None:
    assert "bare-reference" not in codes(validate(text, REGISTRY))


def test_escaped_markers() -> None:
    text = "Claim \\uE200cite\\ue202turn0file0\\uE201 and \\ue203x\\ue204 and \\ue207."
    found = [d for d in validate(text, REGISTRY) if d.code == "escaped-marker"]
    assert [text[d.start : d.end] for d in found] == [
        "\\uE200",
        "\\ue202",
        "\\uE201",
        "\\ue203",
        "\\ue204",
    ]


# --- realistic inputs (as core/test_field.py) --------------------------------------------------


FIELD = {
    "split stream, joined": (
        "Answer content \ue200cit" + "e\ue202turn0search5\ue202turn0search15\ue201 continues here.",
        [],
    ),
    "abandoned START": (
        "keep\ue200broken prose\ue200cite\ue202turn1search0\ue201after",
        ["unterminated-marker"],
    ),
    "multi-source": (
        "The setting is supported. \ue200cite\ue202turn1view0\ue202turn1view1\ue201",
        [],
    ),
    "astral": (
        "Evidence \U0001f600 \ue200cite\ue202turn0search0\ue202turn0search1\ue201.",
        ["citation-before-punctuation"],
    ),
    "code fence": ("```text\n\ue200cite\ue202turn0search0\ue201\n```\n", ["citation-in-code"]),
    "support brackets": (
        "\u200b\ue203Puerto Vallarta offers condo rentals.\ue204 "
        "\ue200cite\ue202turn0search2\ue201\ue206",
        [],
    ),
}


@pytest.mark.parametrize("name", sorted(FIELD))
def test_field_inputs(parser: Parser, name: str) -> None:
    text, expected = FIELD[name]
    assert codes(validate(text, None, parser=parser)) == expected


def test_example_answer(parser: Parser) -> None:
    from pathlib import Path

    text = (Path(__file__).parents[2] / "examples" / "flawed_answer.txt").read_text("utf-8")
    assert codes(validate(text, None, parser=parser)) == [
        "citation-before-punctuation",
        "citation-before-punctuation",
        "citation-before-punctuation",
        "citation-before-punctuation",
        "unterminated-marker",
        "invalid-marker",
    ]


def test_linear_on_hostile_input() -> None:
    chunk = (
        "*a _b **c " + S + "x " + E + " " + D + " `d turn0file0 \\ue200 " + c("turn0file0") + "\n"
    )
    text = chunk * 4000
    # No clock here: benches/bench_hostile.py times this input.
    found = validate(text, REGISTRY)
    assert found


def test_open_start_swallowing_a_citation(parser: Parser) -> None:
    # The grammar reads an open START on to the next marker's STOP: one broken marker.
    swallowed = "a " + S + "cite" + D + "turn0file0 b " + c("turn0file1") + " c"
    assert [(d.code, d.start) for d in validate(swallowed, REGISTRY, parser=parser)] == [
        ("unterminated-marker", 2)
    ]
    broken = "a " + S + "cite" + D + "turn0file0 b " + c("not an id") + " c"
    found = validate(broken, REGISTRY, parser=parser)
    assert codes(found) == ["unterminated-marker", "invalid-marker"]
    assert broken[found[1].start : found[1].end] == c("not an id")


def docstring_codes() -> dict[str, str]:
    """code -> severity, from the table in citemark.validate's docstring."""
    rows = re.findall(
        r"^\| `([a-z-]+)` +\| (error|warning) +\|", citemark.validate.__doc__ or "", re.M
    )
    return dict(rows)


def test_the_docstring_table_is_codes() -> None:
    table = docstring_codes()
    assert list(table.items()) == list(CODES.items())


# -- Diagnostic keeps a frozen dataclass's manners; a run of stray characters is one finding --


def test_diagnostic_is_a_value() -> None:
    import copy
    import pickle

    made_by = Diagnostic
    made = made_by("stray-stop", "error", "a STOP", 3, 4)
    assert made == made_by(code="stray-stop", severity="error", message="a STOP", start=3, end=4)
    assert (made != made_by("stray-stop", "error", "a STOP", 3, 4)) is False
    assert made != made_by("stray-stop", "error", "a STOP", 3, 5)
    assert made != ("stray-stop", "error", "a STOP", 3, 4)  # equal only to a Diagnostic
    assert made != made.to_json()
    assert hash(made) == hash(("stray-stop", "error", "a STOP", 3, 4))
    assert repr(made) == (
        "Diagnostic(code='stray-stop', severity='error', message='a STOP', start=3, end=4)"
    )
    assert made.to_json() == {
        "code": "stray-stop",
        "severity": "error",
        "message": "a STOP",
        "start": 3,
        "end": 4,
    }
    assert pickle.loads(pickle.dumps(made)) == made
    assert copy.copy(made) == made
    assert copy.deepcopy(made) == made
    match made:
        case made_by(code, _, _, start, end):
            assert (code, start, end) == ("stray-stop", 3, 4)
    for name in ("start", "code", "other"):
        with pytest.raises(AttributeError):
            setattr(made, name, 0)
    with pytest.raises(TypeError):
        _ = made < made  # not ordered, as before


def test_validate_returns_one_diagnostic_type(parser: Parser) -> None:
    # One type on both implementations: the rules are Python over either code scan.
    found = validate("a " + E + " `" + c("turn0file0") + "`", None, parser=parser)
    assert [type(row) for row in found] == [Diagnostic, Diagnostic]
    assert Diagnostic.__module__ == "citemark._validate.diagnostic"


def test_diagnostic_checks_its_fields() -> None:
    made_by = Diagnostic
    good: list[Any] = ["c", "error", "m", 1, 2]
    names = ["code", "severity", "message", "start", "end"]
    for index, bad in enumerate([None, b"error", 3, "1", 2.0]):
        args = [*good]
        args[index] = bad
        with pytest.raises(TypeError, match=names[index]):
            made_by(*args)
    assert made_by("c", "error", "m", True, 2**62).start == 1  # what has __index__
    with pytest.raises(OverflowError, match="end"):
        made_by("c", "error", "m", 1, 2**63)


def test_runs_of_stray_characters(parser: Parser) -> None:
    # A run of one stray character is one fault: one diagnostic over the run, its length in
    # the message (a run of 4,000 STARTs is one line of lint output, not 4,000).
    foreign = "navlist" + D + "x "
    text = "a " + D * 5 + " " + S * 4 + c("turn0file0") + " " + S * 3 + foreign + E * 3
    found = validate(text, REGISTRY, parser=parser)
    first = 8  # the four STARTs before the citation: each left open (the last by the citation)
    after = first + 4 + len(c("turn0file0")) + 1
    # Three STARTs, the last one closed by the first STOP: a marker of a foreign family.
    close = text.index(E, after)
    assert [(d.code, d.start, d.end) for d in found] == [
        ("stray-delimiter", 2, 7),
        ("unterminated-marker", first, first + 4),
        ("unterminated-marker", after, after + 2),
        ("invalid-marker", after + 2, close + 1),
        ("stray-stop", close + 1, close + 3),
    ]
    assert [d.message for d in found if d.code != "invalid-marker"] == [
        "5 DELIMITER characters outside any marker",
        "4 START characters in a row that no STOP closes",
        "2 START characters in a row that no STOP closes",
        "2 STOP characters outside any marker",
    ]
    single = validate("a " + D + " " + S + " b " + E, None, parser=parser)
    assert [(d.code, d.start, d.end, d.message) for d in single] == [
        ("stray-delimiter", 2, 3, "a DELIMITER character outside any marker"),
        ("invalid-marker", 4, 9, single[1].message),
    ]


def test_source_ids_are_read_on_every_call(parser: Parser) -> None:
    # What validate looks for is made once per parser and set of ids: a source added to the
    # registry between two calls is looked for in the second.
    registry = Registry([Source("turn0file0", "one")])
    text = "see doc7 and turn0file1 here"
    assert [d.start for d in validate(text, registry, parser=parser)] == [13]
    registry.add(Source("doc7", "two"))
    found = validate(text, registry, parser=parser)
    assert [(d.code, d.start, d.end) for d in found] == [
        ("bare-reference", 4, 8),
        ("bare-reference", 13, 23),
    ]
    custom = parser.replace(start="\ue300", delimiter="\ue302", stop="\ue301")
    assert [d.code for d in validate("an \\ue300 escape", None, parser=custom)] == [
        "escaped-marker"
    ]
