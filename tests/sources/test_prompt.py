"""`citemark.prompt`: every point a citation prompt must settle is there, in every style, and
the markers written in it are the parser's (and parse back with it)."""

from __future__ import annotations

import re

import pytest

from citemark import Parser
from citemark.prompt import SECTIONS, STYLES, citation_instructions

S, D, E = "\ue200", "\ue202", "\ue201"


def sections(text: str) -> dict[str, str]:
    """Heading -> body of each `### ` section."""
    parts = re.split(r"^### (.+)$", text, flags=re.MULTILINE)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


# What each required point must say, in every style (lower-cased phrases).
REQUIRED = {
    "placement": ["end of the sentence or paragraph", "after punctuation", "bold or italics",
                  "code block", "closing fence", "at the end of the answer",
                  "line or in a paragraph that holds nothing else"],
    "when": ["cite every statement that relies on", "cite only", "do not cite"],
    "several": ["cite all of them", "disagree"],
    "forbidden": ["outside a marker", "[1]", "footnotes", "urls", "escape sequences",
                  "never make up an id"],
    "unsupported": ["without a citation", "do not cover", "never attach a citation"],
}  # fmt: skip


@pytest.mark.parametrize("strict", [False, True], ids=["plain", "strict"])
@pytest.mark.parametrize("style", STYLES)
def test_every_point_is_covered(parser: Parser, style: str, strict: bool) -> None:
    text = citation_instructions(style, parser=parser, strict=strict)  # type: ignore[arg-type]
    assert text.startswith("## Citations\n\n")
    found = sections(text)
    expected = [heading for key, heading in SECTIONS.items() if strict or key != "grounding"]
    assert list(found) == expected
    for key, phrases in REQUIRED.items():
        body = found[SECTIONS[key]].lower()
        for phrase in phrases:
            assert phrase in body, (key, phrase)
    if strict:
        grounding = found[SECTIONS["grounding"]].lower()
        for rule in ("relevance", "faithfulness", "reliability", "balance", "variety"):
            assert rule in grounding


@pytest.mark.parametrize("style", STYLES)
def test_the_syntax_is_the_parser_syntax(parser: Parser, style: str) -> None:
    text = citation_instructions(style, parser=parser)  # type: ignore[arg-type]
    syntax = sections(text)[SECTIONS["syntax"]]
    assert "U+E200 (start), U+E202 (separator) and U+E201 (end)" in syntax
    examples = parser.extract(syntax)
    assert examples, "the syntax section shows markers"
    ids = {"context": ("block1", "block2")}.get(style, ("turn0file0", "turn0file1"))
    for citation in parser.extract(text):
        assert set(citation["source_ids"]) <= set(ids)
        assert citation["family"] == "cite"
    # every marker character in the text belongs to a well-formed citation
    assert [span for span in parser.spans(text) if not span[2]] == []
    assert parser.strip(text).count(S) == 0
    assert parser.strip(text).count(E) == 0


def test_styles_differ_where_they_should(parser: Parser) -> None:
    tool = citation_instructions("tool", parser=parser, tool="file_search")
    lines = citation_instructions("tool-lines", parser=parser)
    context = citation_instructions("context", parser=parser)
    # tool: ids only, several ids may share a marker
    assert all(c["locator"] is None for c in parser.extract(tool))
    assert S + "cite" + D + "turn0file0" + D + "turn0file1" + E in tool
    assert any(len(c["source_ids"]) == 2 for c in parser.extract(tool))
    assert "the `file_search` tool" in tool
    assert "Citation Marker:" in tool
    # tool-lines: locators required, one source a marker
    syntax = sections(lines)[SECTIONS["syntax"]]
    assert f"{S}cite{D}turn0file0{D}L8-L13{E}" in syntax
    assert "line range is required" in syntax
    located = [c for c in parser.extract(syntax) if c["locator"]]
    assert located
    assert all(len(c["source_ids"]) == 1 for c in parser.extract(lines))
    assert "[L1]" in lines
    # context: block ids from <BLOCK id="..."> tags, no tool, no outside knowledge
    assert '<BLOCK id="block1">' in context
    assert "outside knowledge" in context
    assert "Citation Marker" not in context
    assert all(len(c["source_ids"]) == 1 for c in parser.extract(context))


def test_custom_markers_and_family() -> None:
    custom = Parser(("filecite",), start="⟦", delimiter="¦", stop="⟧")
    for style in STYLES:
        text = citation_instructions(style, parser=custom)  # type: ignore[arg-type]
        assert not re.search("[\ue200-\ue206]", text)
        assert "\\u27e6" in text  # the escape the model must not write is the custom one
        assert "U+27E6 (start), U+00A6 (separator) and U+27E7 (end)" in text
        found = custom.extract(text)
        assert found
        assert {c["family"] for c in found} == {"filecite"}
        assert Parser().extract(text) == []


def test_example_ids_and_their_check() -> None:
    text = citation_instructions("tool", example_ids=("turn3search0", "turn3news1"))
    assert f"{S}cite{D}turn3search0{D}turn3news1{E}" in text
    assert "turn0file0" not in text
    numeric = Parser(source_id=r"\d+")
    with pytest.raises(ValueError, match="not a citation"):
        citation_instructions("tool", parser=numeric)
    text = citation_instructions("tool", parser=numeric, example_ids=("12", "34"))
    assert f"{S}cite{D}12{D}34{E}" in text


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="style"):
        citation_instructions("lines")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="two ids"):
        citation_instructions("tool", example_ids=("only",))


def test_any_family_parser_uses_cite() -> None:
    text = citation_instructions("context", parser=Parser(any_family=True))
    assert f"{S}cite{D}block1{E}" in text


def test_heading_is_configurable() -> None:
    assert citation_instructions("tool", heading="# Sources").startswith("# Sources\n\n")
