"""The "Citations" section of a system prompt, written for the markers you parse with.

`citation_instructions(style, parser=...)` returns Markdown for one of three setups:

- "tool": a tool returns sources, each under a `Citation Marker:` header; citations name
  source ids only (`turn0file0`), several ids may share one marker.
- "tool-lines": the same, with numbered `[L<n>]` lines; every citation names one source
  and a line range (`L8-L13`).
- "context": the sources are injected into the prompt as `<BLOCK id="block5">` tags;
  citations name block ids.

Every variant spells out, under its own heading (`SECTIONS`), what a citation prompt
has to settle: the exact marker syntax (written with the parser's own marker characters
and first family, and checked to parse with it), where citations go, when to cite and
when not, how to cite several supporting sources, which formats are forbidden, and what
to do when no source supports a claim.  `strict=True` adds grounding rules (relevance,
faithful representation, reliable sources, disagreement, variety).

The text is plain Markdown; paste it into the system prompt as it is (the marker
characters are private-use characters and must reach the model unchanged).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ._core.grammar import DEFAULT_FAMILY
from .parser import Parser

__all__ = ["SECTIONS", "STYLES", "PromptStyle", "citation_instructions"]

PromptStyle = Literal["tool", "tool-lines", "context"]
STYLES: tuple[PromptStyle, ...] = ("tool", "tool-lines", "context")

# The headings of the section, in order; the last one only with strict=True.
SECTIONS: dict[str, str] = {
    "syntax": "How to write a citation",
    "placement": "Where citations go",
    "when": "When to cite",
    "several": "Several supporting sources",
    "forbidden": "Forbidden formats",
    "unsupported": "When no source supports a claim",
    "grounding": "Grounding rules",
}


def citation_instructions(
    style: PromptStyle = "tool",
    *,
    parser: Parser | None = None,
    tool: str | None = None,
    example_ids: Sequence[str] | None = None,
    strict: bool = False,
    heading: str = "## Citations",
) -> str:
    """The citation section of a system prompt, for `style` ("tool", "tool-lines",
    "context"), with the markers and first family of `parser` (default: the guide's).

    `tool` names the tool that returns sources ("tool" styles); `example_ids` are the two
    ids used in examples (default `turn0file0`, `turn0file1` or `block1`, `block2`);
    `strict=True` adds the grounding rules.  ValueError when an example does not parse
    as a citation with `parser` (a custom id pattern needs ids of its own shape).
    """
    if style not in STYLES:
        raise ValueError(f"style must be one of {', '.join(STYLES)}, not {style!r}")
    parser = Parser() if parser is None else parser
    if example_ids is None:
        example_ids = ("block1", "block2") if style == "context" else ("turn0file0", "turn0file1")
    if isinstance(example_ids, str) or len(example_ids) != 2:
        raise ValueError("example_ids must hold exactly two ids")
    first, second = example_ids
    family = parser.families[0] if parser.families else DEFAULT_FAMILY
    start, delim, stop = parser.start, parser.delimiter, parser.stop

    def marker(*parts: str) -> str:
        return f"{start}{family}{delim}{delim.join(parts)}{stop}"

    one, with_lines, one_line = marker(first), marker(first, "L8-L13"), marker(first, "L4")
    both, other = marker(first, second), marker(second)
    for example in (one, both, with_lines):
        found = parser.replace(skip_code=False).extract(example)
        if len(found) != 1 or found[0]["start"] != 0 or found[0]["end"] != len(example):
            raise ValueError(f"the example {example!r} is not a citation for this parser")

    code_points = (
        f"U+{ord(start):04X} (start), U+{ord(delim):04X} (separator) and U+{ord(stop):04X} (end)"
    )
    where = f"the `{tool}` tool" if tool else "the tool"
    out = [heading, ""]

    # -- what the sources are and how they are named ------------------------------------
    if style == "context":
        out += [
            "The material you may cite is included in this prompt, each unit wrapped in a "
            f'`<BLOCK id="{first}">` ... `</BLOCK>` tag. The value of the `id` attribute is '
            f"that unit's reference id (here `{first}`). These blocks are your only citable "
            "sources.",
        ]
    else:
        out += [
            f"Results returned by {where} are your sources. Each citable result begins with a "
            f"line `Citation Marker: {one}`; the id inside it (here `{first}`) is the result's "
            "reference id: `turn` and the number of the tool call, then the kind of result "
            "and its number within that call. A result without a citation marker cannot be "
            "cited.",
        ]
        if style == "tool-lines":
            out[-1] += (
                " The text of each result is split into lines labelled `[L1]`, `[L2]`, ...; "
                "those labels are the line numbers you cite."
            )
    out.append("")

    # -- syntax ---------------------------------------------------------------------------
    out += [f"### {SECTIONS['syntax']}", ""]
    out.append(
        f"A citation is one marker: a start character, the word `{family}`, a separator "
        "character, the reference id, and an end character, with no spaces in between. The "
        f"three characters are {code_points}: copy them from the examples below, as "
        "characters, never as escape sequences."
    )
    out.append("")
    if style == "tool-lines":
        out += [
            f"- Lines 8 to 13 of one source: {with_lines}",
            f"- A single line: {one_line}",
            "- The line range is required: every citation names exactly one source and the "
            "lines of it that support the statement, as `L<first>-L<last>` or `L<line>`.",
        ]
    else:
        out += [f"- One source: {one}"]
        if style == "tool":
            out += [f"- Several sources in one marker, ids separated by {delim} : {both}"]
    copied = "ids and line numbers" if style == "tool-lines" else "ids"
    out += [
        f"- Copy {copied} exactly as the material shows them; never change, shorten or "
        "invent them.",
        "",
    ]

    # -- placement ------------------------------------------------------------------------
    out += [
        f"### {SECTIONS['placement']}",
        "",
        "- Put a citation at the end of the sentence or paragraph it supports; in a long "
        "paragraph, put it right after the sentence or clause it supports.",
        f'- Citations come after punctuation, never before it: "up to three days a week.{one}", '
        f'not "up to three days a week{one}."',
        "- Keep citations out of Markdown formatting: never inside bold or italics, inline "
        "code or a code block. After a code block, cite in the text that follows it, not on "
        "the line of the closing fence.",
        "- Keep each citation with the statement it supports: do not collect the citations "
        "at the end of the answer, and never put citations on a line or in a paragraph "
        "that holds nothing else.",
        "",
    ]

    # -- when to cite ---------------------------------------------------------------------
    material = "the provided blocks" if style == "context" else "the results"
    out += [
        f"### {SECTIONS['when']}",
        "",
        f"- Cite every statement that relies on {material}: facts, figures, quotations, "
        "dates and names taken from them.",
        f"- Cite only {material} that directly support the statement next to the citation.",
        "- Do not cite for your own reasoning, for text you are merely restating from the "
        "user, or for greetings and transitions.",
    ]
    if style == "context":
        out.append(
            "- Do not cite outside knowledge or authorities: only the blocks above can be cited."
        )
    else:
        out.append(
            "- Do not cite anything that came without a citation marker: it is not meant to be "
            "cited."
        )
    out.append("")

    # -- several sources --------------------------------------------------------------------
    out += [f"### {SECTIONS['several']}", ""]
    if style == "tool":
        out.append(
            f"- When several sources support the same statement, cite all of them, in one "
            f"marker ({both}) or in markers side by side ({one}{other})."
        )
    elif style == "tool-lines":
        out.append(
            "- When several sources support the same statement, cite all of them, one marker "
            f"per source, side by side: {with_lines}{marker(second, 'L2-L3')}"
        )
    else:
        out.append(
            "- When several blocks support the same statement, cite all of them, one marker "
            f"per block, side by side: {one}{other}"
        )
    out += [
        "- When sources disagree, cite each side and describe the disagreement accurately.",
        "",
    ]

    # -- forbidden ------------------------------------------------------------------------
    out += [
        f"### {SECTIONS['forbidden']}",
        "",
        f"- Never write a reference id in the text outside a marker: not `{first}`, not "
        f"`{family}{first}`, not `({first})`, not `[{first}]`.",
        f"- No other citation format: no numbered references such as [1], no footnotes, no "
        "links or bare URLs in place of citations, no brackets such as "
        f"【{first}】, no other marker characters and no escape sequences such as "
        f"`\\u{ord(start):04x}`.",
        "- Never make up an id, a line number or a block that the material does not show.",
        "",
    ]

    # -- unsupported ------------------------------------------------------------------------
    out += [
        f"### {SECTIONS['unsupported']}",
        "",
        "- If none of the material supports a claim, write it without a citation and say "
        "that the sources do not cover it, or leave the claim out; never attach a citation "
        "that does not back what you wrote.",
        "- If nothing in the material answers the question, say so plainly instead of "
        "citing something loosely related.",
    ]

    if strict:
        out += [
            "",
            f"### {SECTIONS['grounding']}",
            "",
            "- Relevance: cite only sources that bear on the statement; an unrelated "
            "citation costs the reader's trust.",
            "- Faithfulness: every citation must match what the source says, read in full "
            "and in context; do not pick out the part that suits the answer.",
            "- Reliability: lean on the most authoritative sources for the topic; use a "
            "weaker one only when nothing better covers the point, and let that show.",
            "- Balance: where views differ or reliable sources disagree, cite at least one "
            "good source for each main position.",
            "- Variety: when several independent sources are available, draw on more than "
            "one of them rather than citing the same one throughout.",
        ]
    return "\n".join(out) + "\n"
