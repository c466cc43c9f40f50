"""From documents to a checked answer, as the README shows it: register the documents, show
them to the model, write the prompt's citation section, read the model's answer (a fixture
with real markers), validate it, resolve its quotes and render it with links.  Both
implementations, both of the guide's patterns (tool results with lines, injected blocks)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from citemark import Parser, Registry, citation_instructions, format_context, format_tool_output
from citemark.render import render
from citemark.validate import resolve, validate

FIXTURES = Path(__file__).parent / "fixtures"
S, D, E = "\ue200", "\ue202", "\ue201"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def answer(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_tool_results_with_line_locators(parser: Parser) -> None:
    # 1. the documents a search returned: one tool call, one id each
    registry = Registry()
    results = registry.add_tool_call(load("documents.json"))
    assert [source.id for source in results] == ["turn0file0", "turn0file1", "turn0file2"]

    # 2. what the model reads as the tool's output
    tool_output = format_tool_output(results, parser=parser)
    assert tool_output.startswith(
        f"Citation Marker: {S}cite{D}turn0file0{E}\nTitle: Remote Work Policy\n"
    )
    assert "[L3] Employees may work remotely up to three days per week.\n" in tool_output
    assert [c["source_ids"] for c in parser.extract(tool_output)] == [
        ["turn0file0"],
        ["turn0file1"],
        ["turn0file2"],
    ]

    # 3. the citation section of the system prompt, in the same markers
    prompt = citation_instructions("tool-lines", parser=parser, tool="file_search")
    assert f"{S}cite{D}turn0file0{D}L8-L13{E}" in prompt
    assert "the `file_search` tool" in prompt

    # 4. the model's answer, checked against the sources and the prompt's rules
    text = answer("answer_tool_lines.txt")
    assert validate(text, registry, parser=parser, style="tool-lines") == []

    # 5. each citation resolved to the lines it quotes
    quotes = [(r.citation.source_ids, r.quote) for r in resolve(text, registry, parser=parser)]
    assert quotes == [
        (
            ("turn0file0",),
            "Employees may work remotely up to three days per week.\n"
            "Additional remote days require written approval from a manager.",
        ),
        (
            ("turn0file0",),
            "The company provides a laptop and one external monitor to every remote employee.",
        ),
        (("turn0file0",), "Home internet costs are reimbursed up to 40 EUR per month."),
        (
            ("turn0file2",),
            "A: Yes, up to 150 EUR per month when no office is available within 30 km.",
        ),
        (
            ("turn0file1",),
            "Remote connections to internal systems must go through the company VPN.\n"
            "Public Wi-Fi may be used only with the VPN enabled.",
        ),
        (
            ("turn0file1",),
            "Lost or stolen devices must be reported to the security team within 24 hours.",
        ),
    ]

    # 6. what the reader sees: numbered links, one number per source
    policy = "[1](https://intranet.example.com/policies/remote-work)"
    faq = "[2](https://intranet.example.com/finance/expenses-faq)"
    security = "[3](https://intranet.example.com/security/standard)"
    assert render(text, registry.links(), parser=parser) == (
        "You can work from home up to three days a week; anything beyond that needs your "
        f"manager's written approval.{policy}\n"
        "\n"
        "For your setup:\n"
        "\n"
        f"- The company gives every remote employee a laptop and one external monitor.{policy}\n"
        f"- Home internet is reimbursed up to 40 EUR a month.{policy} If no office is within "
        f"30 km, a coworking space can be expensed up to 150 EUR a month.{faq}\n"
        "\n"
        "When you work outside the office, connect through the company VPN, especially on "
        f"public Wi-Fi,{security} and report a lost or stolen laptop to the security team "
        f"within 24 hours.{security}\n"
    )


def test_a_flawed_answer_is_caught(parser: Parser) -> None:
    registry = Registry()
    registry.add_tool_call(load("documents.json"))
    text = answer("answer_flawed.txt")
    found = validate(text, registry, parser=parser, style="tool-lines")
    assert [(d.code, d.severity) for d in found] == [
        ("citation-before-punctuation", "warning"),
        ("citation-in-emphasis", "error"),
        ("locator-out-of-range", "error"),
        ("bare-reference", "error"),
        ("unknown-source", "error"),
    ]
    # rendering still works; the unknown id is labelled, not dropped
    shown = render(text, registry.links(), parser=parser)
    assert "[turn0file4]" in shown
    assert S not in shown


def test_injected_blocks(parser: Parser) -> None:
    registry = Registry()
    blocks = registry.add_context(load("blocks.json"))
    context = format_context(blocks, parser=parser)
    assert context.startswith(
        '<BLOCK id="block1" title="Master Service Agreement, section 12">\n'
        "Either party may terminate for convenience"
    )
    assert context.count("</BLOCK>") == 3
    prompt = citation_instructions("context", parser=parser)
    assert f"{S}cite{D}block1{E}" in prompt
    text = answer("answer_context.txt")
    assert validate(text, registry, parser=parser, style="context") == []
    assert [r.targets[0].source for r in resolve(text, registry, parser=parser)] == list(blocks)
    assert render(text, registry.links(), style="footnotes", parser=parser).endswith(
        "owner.[^3]\n"
        "\n"
        "[^1]: Master Service Agreement, section 12\n"
        "[^2]: Master Service Agreement, section 14\n"
        "[^3]: Appendix B\n"
    )
