"""`_commonmark.find_code_ranges`: where Markdown code is, so that markers there stay literal; and
the Markdown structure validate reads (`_markdown`).

These cases were written for the line-level detector `find_code_ranges` replaced.  Its ranges held
whole blocks, fence lines included; `find_code_ranges` holds what CommonMark (markdown-it) renders
as code: a fence's content lines, not its fence lines or info string, and an indented block's
lines without the blank lines between them (checked against markdown-it below)."""

from __future__ import annotations

import re
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from citemark._core.grammar import LINE_BREAK_RE
from citemark._core.spans import cut_at, inside, merge, outermost, overlaps, without
from citemark._kernels import commonmark_py as _commonmark_py
from citemark._kernels.commonmark_py import scanned_code_ranges
from citemark._kernels.loader import load
from citemark._markdown.blocks import blocks, emphasis, line_spans, paragraphs
from citemark._markdown.code import CodeScanner, find_code_ranges

MARKER = "\ue200cite\ue202turn0search0\ue201"

# text -> the code it holds, in order
CASES = {
    # fenced blocks
    "field-fence": ("```text\n" + MARKER + "\n```\n", [MARKER]),
    "tilde-fence-with-info": ("a\n\n~~~ python x=1\ncode\n~~~\nb", ["code"]),
    "longer-closing-fence": ("```\nx\n`````\nafter", ["x"]),
    "shorter-fence-does-not-close": ("````\nx\n```\ny\n````", ["x", "```", "y"]),
    "other-character-does-not-close": ("```\nx\n~~~\ny", ["x", "~~~", "y"]),
    "text-after-closing-fence-does-not-close": ("```\nx\n``` y\nz", ["x", "``` y", "z"]),
    "unclosed-fence-runs-to-the-end": ("a\n```\n" + MARKER + "\n", [MARKER]),
    "fence-indented-3-spaces": ("   ```\nx\n  ```\ny", ["x"]),
    "closing-fence-trailing-white-space": ("```\nx\n```  \t\ny", ["x"]),
    "backtick-in-info-is-not-a-fence": ("```a`b\nx", []),
    "tilde-info-may-hold-backticks": ("~~~ a`b\nx\n~~~", ["x"]),
    "fence-interrupts-a-paragraph": ("para\n```\ncode\n```", ["code"]),
    "inline-then-fence": ("a `b`\n```\nc\n```", ["`b`", "c"]),
    "crlf-fence": ("```\r\nx\r\n```\r\ny", ["x"]),
    "cr-fence": ("```\rx\r```\ry", ["x"]),
    "inline-inside-fence-is-the-fence": ("```\n`a` `b`\n```", ["`a` `b`"]),
    # indented blocks
    "indented-at-start": ("    code " + MARKER + "\ntext", ["    code " + MARKER]),
    "indented-after-blank": ("para\n\n    code\n", ["    code"]),
    "indented-with-tab": ("para\n\n\tcode", ["\tcode"]),
    "spaces-then-tab-reach-4-columns": ("  \tcode", ["  \tcode"]),
    "three-spaces-are-not-code": ("para\n\n   text", []),
    "indented-continues-a-paragraph": ("para\n    more " + MARKER, []),
    "indented-block-keeps-inner-blank-lines": ("    a\n\n    b\n\n\nc", ["    a", "    b"]),
    "indented-after-heading": ("# Title\n    code", ["    code"]),
    "indented-after-fence": ("```\nx\n```\n    code", ["x", "    code"]),
    "fence-inside-indented-block-is-content": ("    ```\n    x\ny", ["    ```", "    x"]),
    "list-continuation-is-not-code": ("- item\n\n    more " + MARKER, []),
    "ordered-list-continuation": ("1. item\n\n    more", []),
    "list-ends-at-unindented-paragraph": ("- item\n\npara\n\n    code", ["    code"]),
    "lazy-line-keeps-the-list": ("- item\nlazy\n\n    more", []),
    # containers: a list item or a block quote holds code of its own
    "indented-in-a-list-item": ("- item\n\n      code " + MARKER, ["    code " + MARKER]),
    "fence-in-a-list-item": ("- item\n\n  ```\n  " + MARKER + "\n  ```", [MARKER]),
    "fence-in-a-block-quote": ("> ```\n> " + MARKER + "\n> ```", [MARKER]),
    "indented-in-a-block-quote": (">     code", ["    code"]),
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
def test_find_code_ranges(text: str, expected: list[str]) -> None:
    spans = find_code_ranges(text)
    assert [text[start:end] for start, end in spans] == expected
    assert_well_formed(text, spans)


_md = MarkdownIt("commonmark")


@pytest.mark.parametrize("text", [text for text, _ in CASES.values()], ids=list(CASES))
def test_cases_agree_with_markdown_it(text: str) -> None:
    """The code's characters (blanks aside) are those markdown-it puts in <code>."""
    html = _md.render(text.replace("\r\n", "\n").replace("\r", "\n"))
    rendered = "".join(re.findall(r"<code[^>]*>(.*?)</code>", html, re.S))
    code_ranges = "".join(text[start:end] for start, end in find_code_ranges(text))
    assert "".join(code_ranges.replace("`", "").split()) == "".join(
        rendered.replace("`", "").split()
    )


def test_field_fence_range_covers_the_marker() -> None:
    text = "```text\n" + MARKER + "\n```\n"
    assert find_code_ranges(text) == [(8, 27)]
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
    assert_well_formed(text, find_code_ranges(text))


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
    assert find_code_ranges(line) == naive_inline(line)


# The whole scan pairs a paragraph's runs as they come, a chunk of 256 at a time, keeping only
# an open span's runs: openers held across chunks and lines, closed late or never (the runs
# after them then paired by the rule), escaped openers, every storage width.
@given(
    st.lists(
        st.sampled_from(["`", "``", "```", "\\`", "\\``", " ", "a", "\n", "\n\n", "`\u00e9"]),
        min_size=0,
        max_size=1500,
    ),
    st.sampled_from(["", "\u00e9", "\ue200", "\U0001f600"]),
)
def test_find_code_ranges_pair_many_runs_as_the_rule(
    implementation: str, pieces_: list[str], wide: str
) -> None:
    text = "x" + wide + "".join(pieces_)
    kernel = load("commonmark", implementation)  # type: ignore[arg-type]
    expected = load("commonmark", "python").find_code_ranges(text)  # type: ignore[arg-type]
    assert kernel.find_code_ranges(text) == expected
    if "\n" not in text:  # one paragraph of one line: the obvious algorithm too
        assert expected == naive_inline(text)


@pytest.mark.parametrize(
    "text",
    [
        "x" + "`` " + "` " * 2000 + "``",  # an opener held over 2,000 runs, then closed
        "x" + "``` " + "` " * 2000,  # never closed: the runs after it are paired
        "x" + ("``` " + "` " * 300) * 20,  # every opener held, closed by the next
        "x" + "\\``a " + "` " * 700 + "`",  # an escaped opener, held, closed by one backtick
        "x" + "` " * 601 + "\n" + "` " * 600 + "\n\n" + "`` " * 777,  # lines, paragraphs
    ],
)
def test_find_code_ranges_pair_held_openers(implementation: str, text: str) -> None:
    kernel = load("commonmark", implementation)  # type: ignore[arg-type]
    assert kernel.find_code_ranges(text) == load("commonmark", "python").find_code_ranges(text)  # type: ignore[arg-type]
    if "\n" not in text:
        assert kernel.find_code_ranges(text) == naive_inline(text)


@pytest.mark.parametrize("unit", ["` ", "`` ", " `", "\\` ", "`\\", "```` `"])
@pytest.mark.parametrize("wide", ["", "\ue200"])
def test_find_code_ranges_runs_at_every_vector_and_chunk_alignment(
    implementation: str, unit: str, wide: str
) -> None:
    # Up to 16 runs a vector and 256 a chunk: every shift puts a vector's last run, and a
    # run left open at a full chunk, somewhere else.
    kernel = load("commonmark", implementation)  # type: ignore[arg-type]
    twin = load("commonmark", "python")  # type: ignore[arg-type]
    for shift in range(40):
        text = "x" + wide + "a" * shift + unit * 700 + "`" * 45 + " " + unit * 20
        assert kernel.find_code_ranges(text) == twin.find_code_ranges(text), shift


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
    spans = find_code_ranges(text)
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
    assert [text[s:e] for s, e in emphasis(text, find_code_ranges(text), [])] == ["b"]


def emphasis_by_characters(
    text: str, code: list[tuple[int, int]], consumed: list[tuple[int, int, bool]]
) -> list[tuple[int, int]]:
    """`emphasis` with the text masked a character at a time, the obvious way."""
    from citemark._markdown.blocks import _emphasis_in

    chars = list(text)
    for start, end in code:
        for at in range(start, end):
            if chars[at] not in "\r\n":
                chars[at] = "x"
    for start, end, _ in consumed:
        chars[start:end] = "x" * (end - start)
    masked = "".join(chars)
    spans = [
        span for start, end in paragraphs(text, code) for span in _emphasis_in(masked, start, end)
    ]
    return outermost(sorted(spans))


MARKED = "\ue200cite\ue202turn0file0\ue201"


@given(pieces("*", "**", "_", "`", "```", "\n", "\r\n", " ", "a", ".", MARKED, "\ue200", "\ue201"))
def test_emphasis_masks_by_slices_as_by_characters(text: str) -> None:
    from citemark import Parser

    code = find_code_ranges(text)
    consumed = Parser().spans(text)
    assert emphasis(text, code, consumed) == emphasis_by_characters(text, code, consumed)


def test_paragraphs_split_at_code_blocks_in_containers() -> None:
    text = "a\n- b\n\n      code\n\n  c\n```\nx\n```\nd"
    found = [text[s:e] for s, e in paragraphs(text, find_code_ranges(text))]
    assert found == ["a", "- b", "  c", "d"]


def test_span_helpers() -> None:
    spans = merge([(5, 8), (0, 2), (1, 3), (8, 9)])
    assert spans == [(0, 3), (5, 9)]
    assert inside(spans, 5, 9)
    assert not inside(spans, 2, 5)
    code_ranges = ([start for start, _ in spans], [end for _, end in spans])
    assert overlaps(code_ranges, 2, 4)
    assert not overlaps(code_ranges, 3, 5)
    assert outermost([(0, 4), (1, 2), (3, 6), (7, 8)]) == [(0, 6), (7, 8)]
    assert without("abcdef", 0, 6, [(1, 2, True), (3, 5, False)]) == "acf"
    assert cut_at("abcdef", [(1, 2), (4, 5)]) == [
        (0, "a"),
        (-1, "b"),
        (2, "cd"),
        (-1, "e"),
        (5, "f"),
    ]


# -- Parser(skip_code=True) and StreamParser read code through find_code_ranges ------------------

IN_LIST = f"- item\n\n      {MARKER}\n\nafter {MARKER}"


def test_skip_code_keeps_a_marker_in_indented_code_in_a_list_item(implementation: str) -> None:
    from citemark import Parser
    from citemark.stream import StreamParser

    made = Parser(skip_code=True, implementation=implementation)  # type: ignore[arg-type]
    assert made.strip(IN_LIST) == f"- item\n\n      {MARKER}\n\nafter "
    found = list(made.finditer(IN_LIST))
    assert [(c.start, c.end) for c in found] == [(len(IN_LIST) - len(MARKER), len(IN_LIST))]
    for size in (1, 3, len(IN_LIST)):
        stream = StreamParser(made)
        out = "".join(
            stream.feed(IN_LIST[at : at + size]).text for at in range(0, len(IN_LIST), size)
        )
        assert out + stream.close().text == made.strip(IN_LIST)


def test_skip_code_strips_a_marker_in_a_fence_info_string(implementation: str) -> None:
    """CommonMark does not render the info string as code (markdown-it: a class name)."""
    from citemark import Parser

    made = Parser(skip_code=True, implementation=implementation)  # type: ignore[arg-type]
    text = f"```py {MARKER}\nx {MARKER}\n```\n"
    assert made.strip(text) == f"```py \nx {MARKER}\n```\n"


def _pair_oracle(runs: array[int]) -> list[tuple[int, int]]:
    """The straightforward reading of `pair`: each opener, left to right, is closed by the
    next run of its length (an escaped opener is one backtick shorter); quadratic."""
    triples = [tuple(runs[i : i + 3]) for i in range(0, len(runs), 3)]
    code_ranges = []
    index = 0
    while index < len(triples):
        start, end, escaped = triples[index]
        length = end - start - escaped
        closer = next(
            (k for k in range(index + 1, len(triples)) if triples[k][1] - triples[k][0] == length),
            None,
        )
        if length and closer is not None:
            code_ranges.append((start + escaped, triples[closer][1]))
            index = closer + 1
        else:
            index += 1
    return code_ranges


# The `_commonmark_c` / `_commonmark_py` pair: the hot loops of the code scan, the same results
# on both (runs of a text's lines with any backslashes and non-ASCII, paired on both).
@given(
    pieces("`", "``", "```", "\\", "\\\\`", "a", " ", "\u00e9", "\ue200", "\U0001f600"),
    st.integers(0, 5),
    st.integers(0, 3),
)
def test_commonmark_pair_matches_the_twin(
    implementation: str, text: str, cut: int, base: int
) -> None:
    kernel = load("commonmark", implementation)  # type: ignore[arg-type]
    first = min(cut, len(text))
    found = kernel.runs(text, first, len(text), base)
    assert found == _commonmark_py.runs(text, first, len(text), base)
    code_ranges: list[tuple[int, int]] = [(0, 0)]
    kernel.pair_backticks(found, code_ranges)
    assert code_ranges[1:] == _pair_oracle(found)
    expected: list[tuple[int, int]] = [(0, 0)]
    _commonmark_py.pair_backticks(found, expected)
    assert code_ranges == expected


# Long lines (the kernel reads the runs of whole vectors of 32 units apart from the rest):
# runs of every length across vector bounds, backslashes before them, in each width, cut
# anywhere; and the whole scan of such paragraphs.
LONG_RUNS = st.lists(
    st.sampled_from(["`", "``", "`" * 31, "`" * 33, "`" * 70, "\\", "\\\\", "a", " ", "\n"]),
    max_size=40,
).map("".join)


@given(LONG_RUNS, st.sampled_from(["", "\u00e9", "\ue200", "\U0001f600"]), st.integers(0, 70))
def test_commonmark_runs_of_long_lines_match_the_twin(
    implementation: str, text: str, wide: str, cut: int
) -> None:
    kernel = load("commonmark", implementation)  # type: ignore[arg-type]
    text = wide + text
    first = min(cut, len(text))
    for end in (len(text), max(first, len(text) - 5)):
        assert kernel.runs(text, first, end, 7) == _commonmark_py.runs(text, first, end, 7)
    assert kernel.find_code_ranges(text) == scanned_code_ranges(text)


@pytest.mark.c_extension
def test_commonmark_kernel_checks_its_arguments() -> None:
    kernel = load("commonmark", "cython")
    for call, name in [
        (lambda: kernel.runs(1, 0, 0, 0), "text"),
        (lambda: kernel.runs("a", "0", 1, 0), "first"),
        (lambda: kernel.runs("a", 0, 1.0, 0), "end"),
        (lambda: kernel.runs("a", 0, 1, None), "base"),
        (lambda: kernel.pair_backticks((), []), "runs"),
        (lambda: kernel.pair_backticks([(0, 1, False), (2, 3, False)], []), "runs"),
        (lambda: kernel.pair_backticks(array("i"), []), "runs"),
        (lambda: kernel.pair_backticks(array("q"), None), "code_ranges"),
        (lambda: kernel.scan_plain_lines(b"a", 0, 0, [], [], False, None), "text"),
        (lambda: kernel.scan_plain_lines("a", None, 0, [], [], False, None), "start"),
        (lambda: kernel.scan_plain_lines("a", 0, 0.0, [], [], False, None), "base"),
        (lambda: kernel.scan_plain_lines("a", 0, 0, [], [], False, None), "pending"),
        (lambda: kernel.scan_plain_lines("a", 0, 0, array("q"), {}, False, None), "code_ranges"),
        (lambda: kernel.scan_plain_lines("a", 0, 0, array("q"), [], 0, None), "in_paragraph"),
        (lambda: kernel.scan_plain_lines("a", 0, 0, array("q"), [], False, "0"), "ticked_from"),
    ]:
        with pytest.raises(TypeError, match=name):
            call()
    # Runs that no text gives: broken triples, a negative or reversed run, an escape flag
    # other than 0 or 1, an empty escaped run.
    for bad_runs in [[0, 1], [-1, 1, 0], [2, 1, 0], [0, 1, 2], [1, 1, 1]]:
        with pytest.raises(ValueError, match="runs"):
            kernel.pair_backticks(array("q", bad_runs), [])
    for bad in [(-1, 1), (1, 0), (0, 2)]:
        with pytest.raises(ValueError, match=r"first|end"):
            kernel.runs("a", bad[0], bad[1], 0)


@pytest.mark.c_extension
def test_commonmark_kernel_is_linear_on_many_runs() -> None:
    # Thousands of runs of every length: both pairings finish (no quadratic step to time out).
    text = "".join("`" * (1 + k % 50) + "a" for k in range(20000))
    kernel = load("commonmark", "cython")
    found = kernel.runs(text, 0, len(text), 0)
    code_ranges: list[tuple[int, int]] = []
    kernel.pair_backticks(found, code_ranges)
    expected: list[tuple[int, int]] = []
    _commonmark_py.pair_backticks(found, expected)
    assert len(found) == 3 * 20000
    assert code_ranges == expected == _pair_oracle(found)


@given(
    pieces("`", "``", "\\", "a", " ", "\n", "\r", "\r\n", "# ", "- ", "\u00e9", "\ue200"),
    st.integers(0, 8),
    st.booleans(),
    st.none() | st.integers(-3, 3),
)
def test_commonmark_plain_matches_the_twin(
    implementation: str, text: str, cut: int, in_paragraph: bool, ticked_from: int | None
) -> None:
    kernel = load("commonmark", implementation)  # type: ignore[arg-type]
    start = min(cut, len(text))
    pending = array("q", [0, 1, 0] if in_paragraph else [])
    code_ranges: list[tuple[int, int]] = []
    got = kernel.scan_plain_lines(text, start, 3, pending, code_ranges, in_paragraph, ticked_from)
    twin_pending = array("q", [0, 1, 0] if in_paragraph else [])
    twin_code_ranges: list[tuple[int, int]] = []
    expected = _commonmark_py.scan_plain_lines(
        text, start, 3, twin_pending, twin_code_ranges, in_paragraph, ticked_from
    )
    assert (got, pending, code_ranges) == (expected, twin_pending, twin_code_ranges)


@given(
    pieces(
        "`", "```", "~~~", " ", "    ", "\t", "\n", "\r", "\r\n", "\\", "# ", "- ", "> ", "a", "b"
    )
)
def test_find_code_ranges_in_bulk_match_line_by_line(text: str) -> None:
    # find_code_ranges hands the common lines to the kernel's `plain` in bulk; line by line through
    # CodeScanner.line the code ranges are the same.
    assert_bulk_is_line_by_line(text)


@given(pieces("`", "```", "~~~", " ", "    ", "\t", "\n", "\\", "# ", "- ", "1. ", "> ", "a"))
def test_find_code_ranges_without_carriage_returns_match_line_by_line(text: str) -> None:
    # Without a \r, find_code_ranges finds the line breaks with str.find, not LINE_BREAK_RE.
    assert_bulk_is_line_by_line(text)


@given(pieces("a", " ", "\n", "\n\n"))
def test_line_spans_without_carriage_returns_match_the_line_break_pattern(text: str) -> None:
    starts = [0, *(m.end() for m in LINE_BREAK_RE.finditer(text))]
    ends = [*(m.start() for m in LINE_BREAK_RE.finditer(text)), len(text)]
    assert line_spans(text) == list(zip(starts, ends, strict=True))


class FullWalk(CodeScanner):
    """A scanner that takes no shortcut: every line through the full container walk."""

    def line(self, start: int, end: int) -> None:
        self._walk(start, end)


@settings(max_examples=settings.default.max_examples * 5 // 2)  # 500 under the ci profile
@given(
    pieces(
        "`", "```", "~~~", " ", "  ", "    ", "      ", "\t", "\n", "\n\n", "\r\n", "> ", ">",
        "- ", "* ", "1. ", "2) ", "# ", "a", "b", "===", "---", "- a\n\n",
    )
)  # fmt: skip
def test_line_shortcuts_give_the_full_walk(text: str) -> None:
    # CodeScanner.line decides the common lines (plain text, fenced code outside containers,
    # an empty line in a list) without the container walk: the code ranges are those of the walk.
    assert_bulk_is_line_by_line(text, FullWalk(text))


def assert_bulk_is_line_by_line(text: str, scanner: CodeScanner | None = None) -> None:
    """find_code_ranges(text) is what `scanner` (a CodeScanner by default) finds fed line by
    line."""
    scanner = CodeScanner(text) if scanner is None else scanner
    start = 0
    for line_end in LINE_BREAK_RE.finditer(text):
        scanner.line(start, line_end.start())
        start = line_end.end()
    if start < len(text):
        scanner.line(start, len(text))
    scanner.finish()
    assert find_code_ranges(text) == scanner.code_ranges


# The kernel's whole scan against CodeScanner fed line by line (the Python reading), on both
# implementations: containers, tabs, fences, headings, breaks, every line break, non-ASCII.
@given(
    pieces(
        "`",
        "```",
        "````",
        "~~~",
        "```a`",
        " ",
        "    ",
        "\t",
        "\n",
        "\r",
        "\r\n",
        "\\",
        "# ",
        "####### ",
        "- ",
        "-",
        "---",
        "* ",
        "***",
        "+ ",
        "___",
        "==",
        "1. ",
        "2) ",
        "1234567890. ",
        "> ",
        ">",
        "a",
        "\u00e9",
        "\U0001f600",
    )
)
def test_find_code_ranges_kernel_matches_the_scanner(implementation: str, text: str) -> None:
    kernel = load("commonmark", implementation)  # type: ignore[arg-type]
    code_ranges = scanned_code_ranges(text)
    assert kernel.find_code_ranges(text) == code_ranges
    starts, ends = kernel.code_spans(text)
    assert type(starts) is type(ends) is array
    assert starts.typecode == ends.typecode == "q"
    assert list(zip(starts, ends, strict=True)) == code_ranges


@pytest.mark.c_extension
def test_find_code_ranges_kernel_checks_its_argument() -> None:
    with pytest.raises(TypeError, match="text"):
        load("commonmark", "cython").find_code_ranges(b"```\nx")
    with pytest.raises(TypeError, match="text"):
        load("commonmark", "cython").code_spans(b"```\nx")


@given(pieces("a", "\n", "\r", "\r\n", "\n\r", "\u00e9", "\U0001f600", " "))
def test_line_spans_kernel_matches_the_twin(implementation: str, text: str) -> None:
    kernel = load("commonmark", implementation)  # type: ignore[arg-type]
    expected = _commonmark_py.line_spans(text)
    assert kernel.line_spans(text) == expected
    # The straightforward reading: the lines of LINE_BREAK_RE's split, laid end to end.
    starts = [0] + [found.end() for found in LINE_BREAK_RE.finditer(text)]
    assert [text[start:end] for start, end in expected] == LINE_BREAK_RE.split(text)
    assert [start for start, _ in expected] == starts


@pytest.mark.c_extension
def test_line_spans_kernel_checks_its_argument() -> None:
    with pytest.raises(TypeError, match="text"):
        load("commonmark", "cython").line_spans(None)


# -- nested containers: linear, and the same on both implementations (issue 21) -------------

_THEMATIC = re.compile(r"(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")


class Obvious(FullWalk):
    """The full walk as first written (quadratic on nested containers): a thematic break
    matched by its pattern at every marker, and a blank line's list items looked at one by
    one up to a block quote or the waiting item."""

    def _thematic(self, first: int, end: int) -> bool:
        return _THEMATIC.match(self.text, first, end) is not None

    def _blank_reach(self, at: int) -> int:
        reach = at
        while reach < len(self.containers) and self.containers[reach] >= 0:
            if reach == self.waiting:
                break
            reach += 1
        return reach


CONTAINER_UNITS = ["- ", "* ", "+ ", "1. ", "2) ", "> ", ">", "-", "*", "_", " ", "\t", "   "]
CONTAINER_TAILS = ["x", "", "`a`", "```", "~~~", "- - -", "***", "_ _ _", "---", "===", "# h"]
CONTAINER_TAILS += ["    code", "\\`x`", "-x", "* * x", "--", "1.", "- "]
FOLLOWING_LINES = ["\n", "\n\n", "\n  \t", "\ny", "\n`b`", "\n    y", "\n```", "\n> z", "\n- z"]
FOLLOWING_LINES += ["\n===", "\n---", "\n  - z", "\n\t`c`", "\n* * *", "\r\n", "\n\u00e9"]


@st.composite
def nested_containers(draw: st.DrawFn) -> str:
    """A line of containers repeated up to 60 deep, a tail, and the lines after it."""
    units = draw(st.lists(st.sampled_from(CONTAINER_UNITS), min_size=1, max_size=6))
    times = draw(st.integers(1, 60))
    tail = draw(st.sampled_from(CONTAINER_TAILS))
    after = draw(st.lists(st.sampled_from(FOLLOWING_LINES), max_size=12))
    return "".join(units) * times + tail + "".join(after)


@settings(max_examples=400)
@given(nested_containers())
def test_nested_containers_kernel_matches_the_obvious_walk(implementation: str, text: str) -> None:
    code_ranges = scanned_code_ranges(text)
    assert load("commonmark", implementation).find_code_ranges(text) == code_ranges  # type: ignore[arg-type]
    assert_bulk_is_line_by_line(text, Obvious(text))


NESTED = {
    "items-then-code": "- " * 12 + "x\n" + " " * 24 + "`code`\n\n" + " " * 28 + "indented",
    "quotes-then-code": "> " * 12 + "x\n" + "> " * 12 + "\n" + "> " * 12 + "    indented",
    "mixed-then-fence": "- > 1. * > " + "x\n  > ```\n  > code\n  > ```\n",
    "items-then-blank-lines": "- " * 10 + "x\n\n\n" + " " * 20 + "`a`\n\n" + " " * 24 + "b",
    "rule-in-items": "- " * 5 + "* * *\n" + " " * 10 + "`a`",
    "items-lazy-then-code": "- " * 10 + "x\ny `z`\n\n" + " " * 24 + "code",
}


# markdown-it nests 20 blocks deep by default (an item is two: its list and itself).
_deep_md = MarkdownIt("commonmark", {"maxNesting": 1000})


@pytest.mark.parametrize("text", list(NESTED.values()), ids=list(NESTED))
def test_nested_containers_agree_with_markdown_it(implementation: str, text: str) -> None:
    kernel = load("commonmark", implementation)  # type: ignore[arg-type]
    code_ranges = kernel.find_code_ranges(text)
    assert code_ranges == scanned_code_ranges(text)
    html = _deep_md.render(text)
    rendered = "".join(re.findall(r"<code[^>]*>(.*?)</code>", html, re.S))
    code = "".join(text[start:end] for start, end in code_ranges)
    assert "".join(code.replace("`", "").split()) == "".join(rendered.replace("`", "").split())
    assert rendered


# -- StreamScanner: a text scanned in pieces reads as the whole ---------------------------


def _line_starts(text: str) -> list[int]:
    return [found.end() for found in LINE_BREAK_RE.finditer(text) if found.end() < len(text)]


def _reference_cuts(text: str) -> list[int]:
    scanner = CodeScanner(text)
    cuts, start = [], 0
    for line_end in LINE_BREAK_RE.finditer(text):
        if start and scanner.neutral and start < line_end.start():
            cuts.append(start)
        scanner.line(start, line_end.start())
        start = line_end.end()
    if start < len(text):
        if start and scanner.neutral:
            cuts.append(start)
        scanner.line(start, len(text))
    return cuts


@settings(max_examples=300)
@given(
    st.one_of(nested_containers(), pieces(*CONTAINER_UNITS, *FOLLOWING_LINES, "`", "a")), st.data()
)
def test_stream_scanner_in_pieces_reads_as_the_whole(
    implementation: str, text: str, data: st.DataObject
) -> None:
    kernel = load("commonmark", implementation)  # type: ignore[arg-type]
    twin = _commonmark_py.StreamScanner()
    scanner = kernel.StreamScanner()
    # Cut at line starts (a stream's pieces are whole lines), never inside a \r\n.
    starts = [at for at in _line_starts(text) if not (text[at - 1] == "\r" and text[at] == "\n")]
    cuts = sorted(set(data.draw(st.lists(st.sampled_from(starts), max_size=4)))) if starts else []
    code_ranges: list[tuple[int, int]] = []
    for start, end in zip([0, *cuts], [*cuts, len(text)], strict=True):
        for each in (scanner, twin):
            each.scan(text[start:end], start)
        assert scanner.in_paragraph is twin.in_paragraph
        assert scanner.ticked_from == twin.ticked_from
        assert scanner.neutral is twin.neutral
        if data.draw(st.booleans()):
            code_ranges += scanner.take_code_ranges()
            assert code_ranges == [
                *code_ranges[: len(code_ranges) - len(twin.code_ranges)],
                *twin.take_code_ranges(),
            ]
    scanner.finish()
    code_ranges += scanner.take_code_ranges()
    assert code_ranges == find_code_ranges(text)
    found: list[int] = []
    whole = kernel.StreamScanner()
    whole.scan(text, 0, found)
    assert found == _reference_cuts(text)


def test_stream_scanner_settles_and_keeps_its_paragraph(implementation: str) -> None:
    scanner = load("commonmark", implementation).StreamScanner()  # type: ignore[arg-type]
    scanner.scan("a `b\nc ` d\n", 10)
    assert (scanner.in_paragraph, scanner.ticked_from, scanner.take_code_ranges()) == (True, 10, [])
    scanner.settle()  # the runs so far paired now: `b\nc `
    assert (scanner.in_paragraph, scanner.ticked_from, scanner.take_code_ranges()) == (
        True,
        None,
        [(12, 18)],
    )
    scanner.scan("e `f`\n", 21)
    scanner.finish()
    assert (scanner.neutral, scanner.take_code_ranges()) == (True, [(23, 26)])


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ((b"x",), TypeError, "text"),
        (("x", -1), ValueError, "base"),
        (("x", "0"), TypeError, "base"),
        (("x", 0, ()), TypeError, "cuts"),
        (("x", 2**63), (ValueError, OverflowError), "base"),
    ],
)
def test_stream_scanner_checks_its_arguments(
    implementation: str, arguments: tuple[object, ...], error: type[Exception], message: str
) -> None:
    scanner = load("commonmark", implementation).StreamScanner()  # type: ignore[arg-type]
    with pytest.raises(error, match=message):
        scanner.scan(*arguments)
