"""validate's rules in `citemark._validate` held to straightforward readings of them (the
oracles below): `strays`, the scan of the stray marker characters (its raw findings and
foreign spans, read a character at a time), `held_gaps`, `stray_findings`, `next_outside`,
`order`, and the per-citation checks (`cited_lines`, `punctuated`, `located_rows`,
`covered`)."""

from __future__ import annotations

import itertools
from array import array
from types import SimpleNamespace
from typing import Any, NamedTuple

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from citemark import Parser
from citemark._markdown.code import line_spans
from citemark._validate import diagnostic, lines, strays

# validate's rules, one Python implementation (the names these tests call).
rules = SimpleNamespace(
    **{
        name: getattr(module, name)
        for module in (diagnostic, lines, strays)
        for name in module.__all__
    }
)

S, E, D = "\ue200", "\ue201", "\ue202"


def oracle(
    text: str, first: int, last: int, held: int
) -> tuple[list[tuple[int, int, int]], list[tuple[int, int]]]:
    """One character at a time: a run of one marker character at a time (of the kinds
    `held` names); a START opens (the one before it, still open, is unterminated with the
    word glued to it), a STOP closes an open START as a refused marker and is stray
    otherwise, a DELIMITER is stray unless a START is open; one left open at the end is
    unterminated."""
    looked = {S: held & 1, E: held & 2, D: held & 4}
    found: list[tuple[int, int, int]] = []
    foreign: list[tuple[int, int]] = []
    opened, opened_from = -1, 0

    def close() -> None:
        found.append((rules.UNTERMINATED, opened_from, opened + 1))
        word = opened + 1
        while word < len(text) and not (text[word].isspace() or text[word] in (S, E)):
            word += 1
        foreign.append((opened, word))

    at = first
    while at < last:
        char = text[at]
        if not looked.get(char):
            at += 1
            continue
        end = at
        while end < last and text[end] == char:
            end += 1
        if char == S:
            if opened >= 0:
                close()
            if end - at > 1:
                foreign.append((at, end - 1))
            opened, opened_from = end - 1, at
        elif char == E:
            stray = at
            if opened >= 0:
                if opened_from < opened:
                    found.append((rules.UNTERMINATED, opened_from, opened))
                foreign.append((opened, at + 1))
                found.append((rules.REFUSED, opened, at + 1))
                opened = -1
                stray = at + 1
            if stray < end:
                found.append((rules.STRAY_STOP, stray, end))
        elif opened < 0:
            found.append((rules.STRAY_DELIMITER, at, end))
        at = end
    if opened >= 0:
        close()
    return found, foreign


TEXTS = st.lists(
    st.sampled_from([S, E, D, S * 3, E * 2, D * 3, "cite", "turn0", " ", "\n", "\u3000", "x"])
).map("".join)


@given(TEXTS, st.integers(0, 4), st.integers(0, 4), st.integers(0, 7))
def test_strays_match_the_oracle(text: str, cut: int, trim: int, held: int) -> None:
    first = min(cut, len(text))
    last = max(first, len(text) - trim)
    # held names at least the characters the gap holds (validate's promise), maybe more.
    held |= sum(bit for bit, char in ((1, S), (2, E), (4, D)) if char in text[first:last])
    found: list[tuple[int, int, int]] = []
    foreign: list[tuple[int, int]] = []
    rules.strays(text, first, last, held, S, E, D, found, foreign)
    assert (found, foreign) == oracle(text, first, last, held)


def test_strays_on_thousands_of_open_starts() -> None:
    text = f"{S}cite{D}turn0search0 " * 3000 + f"{S}{S}x{E}{E}{D}"
    found: list[tuple[int, int, int]] = []
    foreign: list[tuple[int, int]] = []
    rules.strays(text, 0, len(text), 7, S, E, D, found, foreign)
    assert (found, foreign) == oracle(text, 0, len(text), 7)
    assert len(found) == 3000 + 4


# Every character str.isspace takes, and the characters on either side of each (the
# scan once looked white space up only in ranges), in each string width.
_SPACES = [chr(c) for c in range(0x110000) if chr(c).isspace()]
_AROUND = sorted({chr(ord(c) + d) for c in _SPACES for d in (-1, 1)} - set(_SPACES))


@pytest.mark.parametrize("wide", ["", "\u0100", "\U0001f600"])
def test_glued_word_ends_at_every_white_space(wide: str) -> None:
    # (words of every length, short and long)
    for char in [*_SPACES, *_AROUND, S, E]:
        for length in (1, 10, 15, 16, 17, 40):
            text = f"{wide}{S}cite{D}{'a' * length}{char}{'b' * 20}"
            found: list[tuple[int, int, int]] = []
            foreign: list[tuple[int, int]] = []
            rules.strays(text, 0, len(text), 7, S, E, D, found, foreign)
            assert (found, foreign) == oracle(text, 0, len(text), 7), (char, length)
            if char != E:  # (a STOP closes it: a refused marker)
                ends = not char.isspace() and char != S
                assert foreign[0][1] == len(wide) + 6 + length + ends * 21, (char, length)


def outside_oracle(
    text: str, needle: str, at: int, skipped: list[tuple[int, int]]
) -> tuple[int, int]:
    """Every place of needle from `at` on, in order, the first not inside a skipped span; with the
    first skipped span that does not end at or before it (all skipped spans passed when none is
    found)."""
    for place in range(at, len(text) - len(needle) + 1):
        if text.startswith(needle, place) and not any(s <= place < e for s, e in skipped):
            return place, next((i for i, (_, e) in enumerate(skipped) if e > place), len(skipped))
    return -1, len(skipped)


def as_arrays(skipped: list[tuple[int, int]]) -> tuple[array[int], array[int]]:
    return array("q", [start for start, _ in skipped]), array("q", [end for _, end in skipped])


@given(
    st.lists(st.sampled_from(["turn", "tu", "rn", "x", " "])).map("".join),
    st.lists(st.integers(0, 40), max_size=10),
    st.integers(0, 45),
    st.sampled_from(["turn", "t", "rn x"]),
)
def test_next_outside_matches_the_oracle(text: str, cuts: list[int], at: int, needle: str) -> None:
    points = sorted(cuts)  # repeated cuts: empty skipped spans, and skipped spans that touch
    skipped = list(zip(points[::2], points[1::2], strict=False))  # sorted, disjoint
    place, skip = rules.next_outside(text, needle, at, *as_arrays(skipped), 0)
    assert (place, skip) == rules.next_outside(text, needle, at, *as_arrays(skipped), 0)
    assert (place, skip) == outside_oracle(text, needle, at, skipped)


def test_next_outside_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="starts and ends"):
        rules.next_outside("a turn", "turn", 0, array("q", [0]), array("q"), 0)
    with pytest.raises(ValueError, match="needle"):
        rules.next_outside("a turn", "", 0, *as_arrays([]), 0)


class Row(NamedTuple):
    """A diagnostic's fields, as the oracles write them."""

    code: str
    severity: str
    message: str
    start: int
    end: int


def as_rows(found: list[Any]) -> list[Row]:
    """The fields of these Diagnostics, checked to be of validate's type."""
    assert all(type(row) is rules.Diagnostic for row in found)
    return [Row(row.code, row.severity, row.message, row.start, row.end) for row in found]


ROWS = (
    ("unterminated", "error", "one start", "{} starts"),
    ("invalid", "error", "", ""),
    ("stop", "error", "one stop", "{} stops"),
    ("delimiter", "warning", "one delimiter", "{} delimiters"),
)


def findings_oracle(
    text: str, consumed: list[tuple[int, int, bool]]
) -> tuple[list[Row], list[int], list[tuple[int, int]]]:
    """`strays` over each gap `held_gaps` finds, each raw finding made a row, with the
    skipped spans sorted."""
    found: list[Row] = []
    refused: list[int] = []
    foreign: list[tuple[int, int]] = []
    for first, last, held in rules.held_gaps(text, consumed, S, E, D):
        raw: list[tuple[int, int, int]] = []
        rules.strays(text, first, last, held, S, E, D, raw, foreign)
        for kind, start, end in raw:
            code, severity, one, many = ROWS[kind]
            if kind == rules.REFUSED:
                refused.append(len(found))
            message = one if kind == rules.REFUSED or end - start == 1 else many.format(end - start)
            found.append(Row(code, severity, message, start, end))
    skipped = sorted([*((start, end) for start, end, _ in consumed), *foreign])
    return found, refused, skipped


@given(TEXTS)
def test_stray_findings_match_the_oracle(text: str) -> None:
    consumed = Parser().spans(text)
    found = [rules.Diagnostic("before", "error", "", 0, 0)]  # appended to, not replaced
    starts, ends = array("q"), array("q")
    refused = rules.stray_findings(text, consumed, S, E, D, ROWS, found, starts, ends)
    expected, expected_refused, skipped = findings_oracle(text, consumed)
    assert as_rows(found)[1:] == expected
    assert refused == [index + 1 for index in expected_refused]
    assert list(zip(starts, ends, strict=True)) == skipped


def test_stray_findings_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="starts and ends"):
        rules.stray_findings("ab", [], S, E, D, ROWS, [], array("q", [1]), array("q"))


ORDER_ROWS = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c"]),
        st.sampled_from(["error", "warning"]),
        st.sampled_from(["x", "y"]),
        st.integers(0, 6),
        st.integers(0, 6),
    ),
    max_size=40,
)


@given(ORDER_ROWS, st.booleans())
def test_order_is_a_stable_sort_by_place_then_code(fields: list[Row], presorted: bool) -> None:
    rows = [rules.Diagnostic(*row) for row in fields]
    if presorted:
        rows.sort(key=lambda row: (row.start, row.end, row.code))
    before = list(rows)
    got = rules.order(rows)
    expected = sorted(before, key=lambda row: (row.start, row.end, row.code))
    assert got == expected
    # Stable: equal rows keep their order (told apart by identity).
    assert list(map(id, got)) == list(map(id, expected))
    assert got is rows  # sorted in place


def test_order_checks_its_arguments() -> None:
    with pytest.raises(TypeError, match="found"):
        rules.order(())
    for bad in (("a", "e", "m", 1, 2), Row("a", "e", "m", 1, 2)):
        with pytest.raises(TypeError, match="found"):
            rules.order([rules.Diagnostic("a", "e", "m", 0, 0), bad])


@given(TEXTS)
def test_held_gaps_match_the_oracle(text: str) -> None:
    consumed = [(start, end, ok) for start, end, ok in Parser().spans(text)]
    got = rules.held_gaps(text, consumed, S, E, D)
    # The straightforward reading: every gap, the characters it holds.
    bounds = [0, *(edge for start, end, _ in consumed for edge in (start, end)), len(text)]
    expected = []
    for first, last in zip(bounds[::2], bounds[1::2], strict=True):
        gap = text[first:last]
        held = sum(bit for bit, char in ((1, S), (2, E), (4, D)) if char in gap)
        if held:
            expected.append((first, last, held))
    assert got == expected


# -- validate's per-citation checks ------------------------------------------------------------

MARKER = f"{S}cite{D}turn0file0{E}"
LINE_TEXTS = st.lists(
    st.sampled_from(
        [MARKER, f"{S}cite{D}{E}", S, E, " ", "\t", "\n", "\r", "\r\n", "a", "é", "漢", "1",
         ".", "!", "`", "~", "-", "> ", "@", "[", "{", "Z", "\x00", "\x7f", "\u3000"]
    ),
    max_size=30,
).map("".join)  # fmt: skip


FILLER = " \t.-!>"


def lines_oracle(
    text: str, starts: list[int], consumed: list[tuple[int, int, bool]]
) -> tuple[list[tuple[int, ...]], ...]:
    """Every line read on its own: the starts on it, whether it holds a backtick or a
    tilde, whether a letter stands on it outside every consumed marker, else whether all
    that stands there is of FILLER (else the first that is not)."""
    fenced: list[tuple[int, ...]] = []
    bare: list[tuple[int, ...]] = []
    unsure: list[tuple[int, ...]] = []
    for line_start, line_end in line_spans(text):
        on = [i for i, at in enumerate(starts) if line_start <= at < line_end]
        if not on:
            continue
        line = (line_start, line_end, on[0], on[-1] + 1)
        if "`" in text[line_start:line_end] or "~" in text[line_start:line_end]:
            fenced.append(line)
        covered = {i for start, end, _ in consumed for i in range(start, end)}
        rest = [i for i in range(line_start, line_end) if i not in covered]
        if not any(text[i].isalpha() for i in rest):
            doubts = [i for i in rest if text[i] not in FILLER]
            if doubts:
                unsure.append((*line, doubts[0]))
            else:
                bare.append(line)
    return fenced, bare, unsure


@given(LINE_TEXTS)
@example(f"a {MARKER}\n`x {MARKER} {MARKER}\n{MARKER}\n- {MARKER}.\r\n\t{MARKER}~")
def test_cited_lines_match_the_oracle(text: str) -> None:
    parser = Parser()
    starts = [citation.start for citation in parser.finditer(text)]
    consumed = parser.spans(text)
    got = rules.cited_lines(text, starts, consumed, FILLER)
    assert got == lines_oracle(text, starts, consumed)


@pytest.mark.parametrize("wide", ["", "\u00e9", "\u0100", "\U0001f600"])
def test_cited_lines_find_a_letter_anywhere_in_a_long_line(wide: str) -> None:
    # Long lines, with a letter (or a character above ASCII that is none)
    # at every place among the filler and other characters after the doubt.
    parser = Parser()
    chars = ("a", "Z", "@", "7", "\x7f", "\u00e9", "\u00d7", "\u0416", "\u2013", "\U0001d400")
    for char, filler in itertools.product(chars, ("` ,", "\u00d7\u2013 ")):
        for at in range(80):
            line = list("`" + filler * 30)
            line[1 + at] = char
            text = f"{wide}\n{''.join(line)} {MARKER}\n"
            starts = [citation.start for citation in parser.finditer(text)]
            consumed = parser.spans(text)
            got = rules.cited_lines(text, starts, consumed, FILLER)
            assert got == lines_oracle(text, starts, consumed), (char, at)


def test_cited_lines_checks_its_arguments() -> None:
    for starts in ([2], [3, 0], [5]):
        with pytest.raises(ValueError, match="starts"):
            rules.cited_lines("ab\ncd", starts, [], "")


def punctuated_oracle(
    text: str, starts: list[int], ends: list[int], marks: str
) -> list[tuple[int, int, int]]:
    found = []
    index = 0
    while index < len(starts):
        first = index
        while index + 1 < len(starts) and not text[ends[index] : starts[index + 1]].strip(" \t"):
            index += 1
        rest = text[ends[index] :].lstrip(" \t")
        if rest and rest[0] in marks:
            found.append((first, index, len(text) - len(rest)))
        index += 1
    return found


@given(
    st.lists(st.sampled_from([MARKER, " ", "\t", ".", "!", "。", "a", "\n", "x y"])).map("".join)
)
def test_punctuated_matches_the_oracle(text: str) -> None:
    found = list(Parser().finditer(text))
    starts = [citation.start for citation in found]
    ends = [citation.end for citation in found]
    got = rules.punctuated(text, starts, ends, ".!。")
    assert got == punctuated_oracle(text, starts, ends, ".!。")


def test_punctuated_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="starts and ends"):
        rules.punctuated("ab", [0], [], ".")
    with pytest.raises(ValueError, match="starts and ends"):
        rules.punctuated("ab", [0, 3], [1, 4], ".")


KEYS = [(("a",), None), (("a", "b"), "L1"), (("b",), "L2")]
LOCATED = st.fixed_dictionaries(
    {
        key: st.lists(
            st.tuples(st.sampled_from(["x", "y"]), st.just("error"), st.sampled_from(["m", "n"])),
            max_size=3,
        )
        for key in KEYS
    }
)


@given(st.lists(st.tuples(st.sampled_from(KEYS), st.integers(0, 9), st.integers(0, 9))), LOCATED)
def test_located_rows_match_the_oracle(
    places: list[tuple[tuple[tuple[str, ...], str | None], int, int]],
    located: dict[tuple[tuple[str, ...], str | None], list[tuple[str, str, str]]],
) -> None:
    citations = [("cite", ids, locator, start, end, 0) for (ids, locator), start, end in places]
    found = [rules.Diagnostic("before", "error", "", 0, 0)]
    known = dict(list(located.items())[:1])  # the others worked out on the way
    asked: list[tuple[tuple[str, ...], str | None]] = []

    def compute(ids: tuple[str, ...], locator: str | None) -> list[tuple[str, str, str]]:
        asked.append((ids, locator))
        return located[ids, locator]

    rules.located_rows(citations, known, compute, found)
    assert known == {key: located[key] for key in [*list(located)[:1], *asked]}
    assert len(set(asked)) == len(asked)  # each pair worked out once
    expected = [Row("before", "error", "", 0, 0)]
    for _, ids, locator, start, end, _ in citations:
        expected += [Row(*row, start, end) for row in located[ids, locator]]
    assert as_rows(found) == expected


@given(
    st.lists(st.tuples(st.integers(0, 30), st.integers(0, 4))),
    st.lists(st.integers(0, 35), max_size=12),
)
def test_covered_matches_inside(ranges: list[tuple[int, int]], cuts: list[int]) -> None:
    from citemark._core.spans import inside

    ranges.sort()
    starts = [start for start, _ in ranges]
    ends = [start + length for start, length in ranges]
    points = sorted(set(cuts))
    skipped = list(zip(points[::2], points[1::2], strict=False))  # sorted, disjoint
    expected = [inside(skipped, start, end) for start, end in zip(starts, ends, strict=True)]
    lows = array("q", [start for start, _ in skipped])
    highs = array("q", [end for _, end in skipped])
    assert rules.covered(starts, ends, lows, highs) == expected


def test_covered_checks_its_arguments() -> None:
    empty = array("q")
    with pytest.raises(ValueError, match="starts and ends"):
        rules.covered([0], [], empty, empty)
    with pytest.raises(ValueError, match="code_starts and code_ends"):
        rules.covered([0], [1], array("q", [0]), empty)
    with pytest.raises(ValueError, match="ascending"):
        rules.covered([2, 1], [3, 3], empty, empty)
