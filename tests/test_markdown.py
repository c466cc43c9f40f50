"""`code_spans`: where Markdown code is, so that markers there stay literal."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citemark._markdown import blocks, code_spans, emphasis, line_spans
from citemark._spans import cut_at, inside, merge, outermost, overlaps, without

MARKER = "\ue200cite\ue202turn0search0\ue201"

# text -> the code it holds, in order
CASES = {
    # fenced blocks
    "field-fence": ("```text\n" + MARKER + "\n```\n", ["```text\n" + MARKER + "\n```"]),
    "tilde-fence-with-info": ("a\n\n~~~ python x=1\ncode\n~~~\nb", ["~~~ python x=1\ncode\n~~~"]),
    "longer-closing-fence": ("```\nx\n`````\nafter", ["```\nx\n`````"]),
    "shorter-fence-does-not-close": ("````\nx\n```\ny\n````", ["````\nx\n```\ny\n````"]),
    "other-character-does-not-close": ("```\nx\n~~~\ny", ["```\nx\n~~~\ny"]),
    "text-after-closing-fence-does-not-close": ("```\nx\n``` y\nz", ["```\nx\n``` y\nz"]),
    "unclosed-fence-runs-to-the-end": ("a\n```\n" + MARKER + "\n", ["```\n" + MARKER + "\n"]),
    "fence-indented-3-spaces": ("   ```\nx\n  ```\ny", ["   ```\nx\n  ```"]),
    "closing-fence-trailing-white-space": ("```\nx\n```  \t\ny", ["```\nx\n```  \t"]),
    "backtick-in-info-is-not-a-fence": ("```a`b\nx", []),
    "tilde-info-may-hold-backticks": ("~~~ a`b\nx\n~~~", ["~~~ a`b\nx\n~~~"]),
    "fence-interrupts-a-paragraph": ("para\n```\ncode\n```", ["```\ncode\n```"]),
    "inline-then-fence": ("a `b`\n```\nc\n```", ["`b`", "```\nc\n```"]),
    "crlf-fence": ("```\r\nx\r\n```\r\ny", ["```\r\nx\r\n```"]),
    "cr-fence": ("```\rx\r```\ry", ["```\rx\r```"]),
    "inline-inside-fence-is-the-fence": ("```\n`a` `b`\n```", ["```\n`a` `b`\n```"]),
    # indented blocks
    "indented-at-start": ("    code " + MARKER + "\ntext", ["    code " + MARKER]),
    "indented-after-blank": ("para\n\n    code\n", ["    code"]),
    "indented-with-tab": ("para\n\n\tcode", ["\tcode"]),
    "spaces-then-tab-reach-4-columns": ("  \tcode", ["  \tcode"]),
    "three-spaces-are-not-code": ("para\n\n   text", []),
    "indented-continues-a-paragraph": ("para\n    more " + MARKER, []),
    "indented-block-keeps-inner-blank-lines": ("    a\n\n    b\n\n\nc", ["    a\n\n    b"]),
    "indented-after-heading": ("# Title\n    code", ["    code"]),
    "indented-after-fence": ("```\nx\n```\n    code", ["```\nx\n```", "    code"]),
    "fence-inside-indented-block-is-content": ("    ```\n    x\ny", ["    ```\n    x"]),
    "list-continuation-is-not-code": ("- item\n\n    more " + MARKER, []),
    "ordered-list-continuation": ("1. item\n\n    more", []),
    "list-ends-at-unindented-paragraph": ("- item\n\npara\n\n    code", ["    code"]),
    "lazy-line-keeps-the-list": ("- item\nlazy\n\n    more", []),
    # inline code
    "inline": ("a `b` c", ["`b`"]),
    "inline-marker": ("use `" + MARKER + "` literally " + MARKER, ["`" + MARKER + "`"]),
    "double-backticks-hold-single": ("a ``b`c`` d", ["``b`c``"]),
    "run-lengths-must-match": ("`a``b`", ["`a``b`"]),
    "unmatched-run-is-literal": ("a ``b` c", []),
    "unmatched-then-matched": ("a ``b `c` d", ["`c`"]),
    "escaped-backtick-is-literal": ("\\`a` b`", ["` b`"]),
    "escaped-backslash-is-not-an-escape": ("\\\\`a`", ["`a`"]),
    "backslash-inside-code-is-literal": ("`a\\`b", ["`a\\`"]),
    "escaped-first-of-a-run": ("\\``a`", ["`a`"]),
    "inline-spans-lines-of-a-paragraph": ("a `b\nc` d", ["`b\nc`"]),
    "inline-stops-at-blank-line": ("a `b\n\nc` d", []),
    "heading-line-alone": ("# a `b\nc` d", []),
    "heading-inline": ("## `x` y\n", ["`x`"]),
    "list-item-starts-a-new-paragraph": ("a `b\n- c` d", []),
    "space-only-code": ("` `", ["` `"]),
    "two-spans": ("`a` and `b`", ["`a`", "`b`"]),
    # nothing
    "empty": ("", []),
    "no-code": ("The setting is supported. " + MARKER, []),
    "lone-pair-of-backticks": ("``", []),
}


@pytest.mark.parametrize(("text", "expected"), list(CASES.values()), ids=list(CASES))
def test_code_spans(text: str, expected: list[str]) -> None:
    spans = code_spans(text)
    assert [text[start:end] for start, end in spans] == expected
    assert_well_formed(text, spans)


def test_field_fence_range_covers_the_marker() -> None:
    text = "```text\n" + MARKER + "\n```\n"
    assert code_spans(text) == [(0, 31)]
    assert text.index(MARKER) == 8


def assert_well_formed(text: str, spans: list[tuple[int, int]]) -> None:
    previous_end = 0
    for start, end in spans:
        assert previous_end <= start < end <= len(text)
        previous_end = end


def pieces(*alphabet: str) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(alphabet)).map("".join)


@given(pieces("`", "```", "~~~", " ", "    ", "\t", "\n", "\r", "\\", "# ", "- ", "1. ", "a"))
def test_spans_are_sorted_disjoint_and_in_range(text: str) -> None:
    assert_well_formed(text, code_spans(text))


def naive_inline(text: str) -> list[tuple[int, int]]:
    """CommonMark's inline code of one line, the obvious (quadratic) way."""
    spans = []
    index = 0
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] != "`":
            index += 1
            continue
        end = index
        while end < len(text) and text[end] == "`":
            end += 1
        length = end - index
        closer = end
        while closer < len(text):
            if text[closer] != "`":
                closer += 1
                continue
            run_end = closer
            while run_end < len(text) and text[run_end] == "`":
                run_end += 1
            if run_end - closer == length:
                break
            closer = run_end
        if closer < len(text):
            spans.append((index, closer + length))
            index = closer + length
        else:
            index = end
    return spans


@given(pieces("`", "``", "a", " ", "\\"))
def test_inline_code_matches_the_obvious_algorithm(text: str) -> None:
    line = "x" + text  # never a fence, list item, heading or indented line
    assert code_spans(line) == naive_inline(line)


ADVERSARIAL = {
    "megabyte-of-backticks": "`" * 1_000_000,
    "megabyte-of-backticks-inline": "a" + "`" * 1_000_000,
    "unmatched-runs-of-every-length": "a" + " ".join("`" * k for k in range(1, 1400)),
    "many-pairs": "a `b`" * 200_000,
    "many-fences": "```\n" * 250_000,
    "many-indented-blocks": "    x\n\npara\n\n" * 80_000,
    "long-backslash-runs": ("\\" * 1000 + "`") * 1000,
}


@pytest.mark.parametrize("text", list(ADVERSARIAL.values()), ids=list(ADVERSARIAL))
def test_adversarial_input_is_linear(text: str) -> None:
    # No clock here (a quadratic scan would hang the run): benches/bench_hostile.py times it.
    spans = code_spans(text)
    assert_well_formed(text, spans)


# -- the structure validate reads, and the span helpers it shares with Parser -----------------


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("", [(0, 0)]),
        ("a", [(0, 1)]),
        ("a\n", [(0, 1), (2, 2)]),
        ("a\r\nb\rc\nd", [(0, 1), (3, 4), (5, 6), (7, 8)]),
    ],
)
def test_line_spans_keep_the_empty_last_line(text: str, lines: list[tuple[int, int]]) -> None:
    assert line_spans(text) == lines


def test_blocks_count_paragraphs_items_and_headings() -> None:
    assert blocks("one\ntwo\n\nthree\n- item\n- item\n# title\n") == 5


def test_emphasis_is_the_inside_of_bold_and_italics() -> None:
    text = "plain **bold** and _it_ but not snake_case_name"
    found = emphasis(text, [], [])
    assert [text[start:end] for start, end in found] == ["bold", "it"]


def test_emphasis_skips_code_and_markers() -> None:
    text = "`*a*` x *b*"
    assert [text[s:e] for s, e in emphasis(text, code_spans(text), [])] == ["b"]


def test_span_helpers() -> None:
    spans = merge([(5, 8), (0, 2), (1, 3), (8, 9)])
    assert spans == [(0, 3), (5, 9)]
    assert inside(spans, 5, 9)
    assert not inside(spans, 2, 5)
    assert overlaps(spans, 2, 4)
    assert not overlaps(spans, 3, 5)
    assert outermost([(0, 4), (1, 2), (3, 6), (7, 8)]) == [(0, 6), (7, 8)]
    assert without("abcdef", 0, 6, [(1, 2, True), (3, 5, False)]) == "acf"
    assert cut_at("abcdef", [(1, 2), (4, 5)]) == [
        (0, "a"),
        (-1, "b"),
        (2, "cd"),
        (-1, "e"),
        (5, "f"),
    ]
