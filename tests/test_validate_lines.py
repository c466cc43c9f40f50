"""validate's checks of the cited lines (`citemark._validate.lines`), held to straightforward
readings of them, over the code scan of both implementations:

- `fence_cited`: the fence lines among the lines that hold a backtick or a tilde, as validate
  read them before (`_markdown.FENCE_LINE` matched on what stands before the first citation,
  the markers there left out), and which of them must be blanked for the code scan; a line
  left as it is reads the same to the code scan as when blanked;
- `filler_end`: the first character that is not of the filler;
- `kept_bounds`: the first and last citation kept on each line;
- `code_rows`: the citations in code reported, and which to check further.
"""

from __future__ import annotations

import re
from array import array
from unittest import mock

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import citemark.validate as module
from citemark import Parser
from citemark._core.spans import without
from citemark._kernels.loader import load
from citemark._markdown.blocks import FENCE_LINE
from citemark._validate import lines as rules
from citemark._validate.lines import fence_cited
from citemark.validate import validate
from test_validate_strays import FILLER as LINE_FILLER
from test_validate_strays import Row, as_rows, lines_oracle

S, D, E = "\ue200", "\ue202", "\ue201"
MARKER = f"{S}cite{D}turn0file0{E}"
# A parser whose ids may hold what the code scan reads: fence characters, a backslash, a blank.
LAX = Parser(source_id=r"[\w`~\\ ]+")
LAX_MARKERS = [f"{S}cite{D}a`b{E}", f"{S}cite{D}a~b{E}", f"{S}cite{D}a\\b{E}", f"{S}cite{D}a b{E}"]
FENCE_TEXTS = st.lists(
    st.sampled_from(
        [MARKER, MARKER, f"{S}cite{D}{E}", S, "```", "~~~", "`", "~", " ", "   ", "\t", "\\",
         "\n", "\n", "\r\n", "a", ".", "- ", "> ", "    ", *LAX_MARKERS]
    ),
    max_size=24,
).map("".join)  # fmt: skip
PARSERS = st.sampled_from([Parser(), LAX])


def fence_oracle(
    text: str,
    fenced: list[tuple[int, int, int, int]],
    starts: list[int],
    ends: list[int],
    consumed: list[tuple[int, int, bool]],
) -> list[tuple[int, int, bool]]:
    """The fence lines as validate found them with FENCE_LINE; blank unless no marker stands
    before the first citation, no citation holds a fence character, a backslash or a line
    break, and something other than blanks and citations stands after the fence's run."""
    found = []
    for line_start, line_end, first, stop in fenced:
        begin = starts[first]
        if not FENCE_LINE.match(without(text, line_start, begin, consumed)):
            continue
        clear = not any(line_start <= start < begin for start, _, _ in consumed)
        cited = [(starts[i], ends[i]) for i in range(first, stop)]
        plain = not any(re.search(r"[`~\\\r\n]", text[start:end]) for start, end in cited)
        run = re.match(r" {0,3}(`+|~+)", text[line_start:line_end])
        rest = set(range(line_start + run.end(), line_end)) if run else set()
        for start, end in cited:
            rest -= set(range(start, end))
        after = any(text[at] not in " \t" for at in rest)
        found.append((first, stop, not (clear and plain and after)))
    return found


def lines_of(
    parser: Parser, text: str
) -> tuple[list[tuple[int, int, int, int]], list[int], list[int], list[tuple[int, int, bool]]]:
    citations = list(parser.finditer(text))
    starts = [citation.start for citation in citations]
    ends = [citation.end for citation in citations]
    consumed = parser.spans(text)
    fenced = rules.cited_lines(text, starts, consumed, "")[0]
    return fenced, starts, ends, consumed


@given(FENCE_TEXTS, PARSERS)
@example(f"```{MARKER}\n", Parser())
@example(f"``` {MARKER} x\n```{MARKER} ```", Parser())
@example(f"{S}cite{D}{E}```{MARKER}", Parser())
@example(f"   ~~~~ {LAX_MARKERS[0]} .", LAX)
def test_fence_cited_matches_the_oracle(text: str, parser: Parser) -> None:
    fenced, starts, ends, consumed = lines_of(parser, text)
    got = rules.fence_cited(text, fenced, starts, ends, consumed)
    assert got == fence_oracle(text, fenced, starts, ends, consumed)


def blanked(text: str, spans: list[tuple[int, int]]) -> str:
    for start, end in spans:
        text = text[:start] + " " * (end - start) + text[end:]
    return text


@settings(max_examples=settings.default.max_examples * 2, deadline=None)
@given(FENCE_TEXTS, PARSERS)
@example(f"```\ncode\n```{MARKER}\nafter `x`", Parser())
@example(f"```\ncode\n``` {MARKER} x\nafter `x`", Parser())
@example(f"- a\n  ~~~\n  ~~~ {MARKER}\n  b `c`", Parser())
def test_fence_lines_left_as_they_are_read_the_same(
    implementation: str, text: str, parser: Parser
) -> None:
    # The code scan of the text with every fence line's citations blanked (as validate read
    # it before) is that of the text with only the lines fence_cited says blanked.
    fenced, starts, ends, consumed = lines_of(parser, text)
    rows = rules.fence_cited(text, fenced, starts, ends, consumed)
    every = [(starts[i], ends[i]) for first, stop, _ in rows for i in range(first, stop)]
    some = [(starts[i], ends[i]) for first, stop, b in rows if b for i in range(first, stop)]
    code_spans = load("commonmark", implementation).code_spans  # type: ignore[arg-type]
    assert code_spans(blanked(text, some)) == code_spans(blanked(text, every))


@settings(max_examples=settings.default.max_examples * 3 // 2, deadline=None)
@given(FENCE_TEXTS)
@example(f"```\ncode\n```{MARKER}\n{MARKER}")
@example(f"~~~\ncode\n~~~ {MARKER} x\n{MARKER}")
def test_validate_as_with_every_fence_line_blanked(parser: Parser, text: str) -> None:
    quick = validate(text, None, parser=parser)

    def every(*args: object) -> list[tuple[int, int, bool]]:
        return [(first, stop, True) for first, stop, _ in fence_cited(*args)]  # type: ignore[arg-type]

    with mock.patch.object(module, "fence_cited", every):
        full = validate(text, None, parser=parser)
    assert quick == full


def test_a_fence_run_of_every_length() -> None:
    # Runs of every length from 3 to 69, in every width, before a citation and text.
    parser = Parser()
    for wide in ("", "\u00e9", "\u0100", "\U0001f600"):
        for fence in "`~":
            for length in range(3, 70):
                for after in (" x", " ", f"{fence} ", ""):
                    text = f"{wide}\n{fence * length}{MARKER}{after}\n"
                    fenced, starts, ends, consumed = lines_of(parser, text)
                    got = rules.fence_cited(text, fenced, starts, ends, consumed)
                    assert got == fence_oracle(text, fenced, starts, ends, consumed)
                    assert got == [(0, 1, after.strip() == "")], (wide, length, after)


FILLER = " \t`-.!"


@given(
    st.lists(st.sampled_from([" ", "\t", "`", "-", ".", "!", "a", "é", "Ā", "😀", "\n"])).map(
        "".join
    ),
    st.integers(0, 40),
    st.integers(0, 40),
)
def test_filler_end_matches_the_oracle(text: str, cut: int, trim: int) -> None:
    start = min(cut, len(text))
    end = max(start, len(text) - trim)
    expected = next((at for at in range(start, end) if text[at] not in FILLER), end)
    assert rules.filler_end(text, start, end, FILLER) == expected


def test_filler_end_at_every_place() -> None:
    # The first other character at every place of long stretches of filler.
    for wide in ("", "\u00e9", "\u0100", "\U0001f600"):
        for other in ("a", "\u00e9", "\u2013", "\x7f", "\x00"):
            for at in range(0, 100, 7):
                line = list("` -" * 40)
                line[at] = other
                text = wide + "".join(line)
                start = len(wide)
                assert rules.filler_end(text, start, len(text), FILLER) == start + at
                assert rules.filler_end(text, start, start + at, FILLER) == start + at


@given(
    st.lists(
        st.sampled_from([" ", "`", "~", ".", "-", "a", "é", "。", "—", "\u3000", "\u2028", "1"])
    ).map("".join),
    st.integers(0, 30),
)
def test_filler_in_is_filler(text: str, cut: int) -> None:
    start = min(cut, len(text))
    assert module._filler_in(text, start, len(text)) == module._filler(text[start:])


ROWS = st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), max_size=8)


@given(ROWS, st.lists(st.booleans(), min_size=12, max_size=12))
def test_kept_bounds_match_the_oracle(bounds: list[tuple[int, int]], kept: list[bool]) -> None:
    rows = [(0, 0, min(a, b), max(a, b), 9) for a, b in bounds]
    expected = []
    for number, (_, _, first, stop, _) in enumerate(rows):
        indexes = [i for i in range(first, stop) if kept[i]]
        if indexes:
            expected.append((number, indexes[0], indexes[-1]))
    assert rules.kept_bounds(rows, kept) == expected


def test_fence_cited_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="starts and ends"):
        rules.fence_cited("```a", [(0, 4, 0, 1)], [3], [], [])
    with pytest.raises(ValueError, match="starts and ends"):
        rules.fence_cited("```a", [(0, 4, 0, 1)], [3], [5], [])
    for rows in ([(0, 4, 0, 2)], [(0, 4, 1, 1)]):
        with pytest.raises(ValueError, match="first < stop"):
            rules.fence_cited("```a", rows, [3], [4], [])
    for rows in ([(0, 2, 0, 1)], [(0, 5, 0, 1)], [(2, 4, 0, 1), (0, 4, 0, 1)]):
        with pytest.raises(ValueError, match="ascending lines"):
            rules.fence_cited("```a", rows, [3], [4], [])


def test_filler_end_and_kept_bounds_check_their_arguments() -> None:
    for start, end in [(2, 1), (0, 3)]:
        with pytest.raises(ValueError, match="start and end"):
            rules.filler_end("ab", start, end, " ")
    with pytest.raises(ValueError, match="ASCII"):
        rules.filler_end("ab", 0, 1, "é")
    for row in [(0, 0, 1, 0), (0, 0, 0, 2)]:
        with pytest.raises(ValueError, match="first <= stop"):
            rules.kept_bounds([row], [True])


CODE_RANGES = st.lists(st.integers(0, 40), max_size=10).map(sorted)


@given(
    st.lists(st.tuples(st.integers(0, 40), st.integers(0, 4)), max_size=12),
    CODE_RANGES,
    st.lists(st.tuples(st.integers(0, 3), st.integers(1, 3)), max_size=4),
)
def test_code_rows_match_the_oracle(
    places: list[tuple[int, int]],
    cuts: list[int],
    lines: list[tuple[int, int]],
) -> None:
    starts = sorted(start for start, _ in places)
    ends = [start + length for start, (_, length) in zip(starts, places, strict=True)]
    code_ranges = list(zip(cuts[::2], cuts[1::2], strict=False))
    code_starts = array("q", [start for start, _ in code_ranges])
    code_ends = array("q", [end for _, end in code_ranges])
    fenced = []
    at = 0
    for gap, size in lines:  # ascending rows of citations, within them
        if at + gap + size > len(starts):
            break
        fenced.append((at + gap, at + gap + size, gap == 0))
        at += gap + size
    on_fence = {i for first, stop, _ in fenced for i in range(first, stop)}
    found = [rules.Diagnostic("before", "error", "", 0, 0)]
    row = ("citation-in-code", "error", "in code")
    kept = rules.code_rows(starts, ends, code_starts, code_ends, fenced, row, found)
    expected_kept = []
    expected = [Row("before", "error", "", 0, 0)]
    for index, (start, end) in enumerate(zip(starts, ends, strict=True)):
        # Within the last code range that starts at or before it (the code ranges are disjoint).
        last = [code_range for code_range in code_ranges if code_range[0] <= start][-1:]
        within = bool(last) and end <= last[0][1]
        if index in on_fence:
            expected_kept.append(False)
        elif within:
            expected.append(Row(*row, start, end))
            expected_kept.append(False)
        else:
            expected_kept.append(True)
    assert kept == expected_kept
    assert as_rows(found) == expected


def test_code_rows_checks_its_arguments() -> None:
    row = ("c", "error", "m")
    for fenced in ([(0, 2, True)], [(1, 1, True)], [(0, 1, True), (0, 1, True)]):
        with pytest.raises(ValueError, match="fenced"):
            rules.code_rows([0], [1], array("q"), array("q"), fenced, row, [])
    with pytest.raises(ValueError, match="starts"):
        rules.code_rows([1, 0], [1, 1], array("q"), array("q"), [], row, [])


@pytest.mark.parametrize("wide", ["", "\u00e9", "\u0100", "\U0001f600"])
def test_cited_lines_find_every_break(wide: str) -> None:
    # A CR, an LF or a CR LF at every place of long lines, before and after the citations,
    # in every width: the lines found are the oracle's.
    parser = Parser()
    for brk in ("\n", "\r", "\r\n"):
        for at in range(0, 90, 3):
            for text in (
                f"{wide}{'` ' * 45}{MARKER}",
                f"{wide}{MARKER}{'x ' * 45}{MARKER}",
                f"{wide}{'a' * 3}\n{'`' * 90}{MARKER}",
            ):
                cut = len(wide) + at
                text = text[:cut] + brk + text[cut:]
                citations = list(parser.finditer(text))
                starts = [citation.start for citation in citations]
                consumed = parser.spans(text)
                got = rules.cited_lines(text, starts, consumed, LINE_FILLER)
                assert got == lines_oracle(text, starts, consumed), (brk, at)
