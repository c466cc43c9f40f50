"""validate on thousands of unterminated STARTs (the "unclosed" shape): the steps its
rules take there (`citemark._validate`), over the scanner of both implementations.

- `stray_findings` makes its rows in order of place, so validate sorts nothing when they are
  all it found (and sorts when anything else is found too);
- `order` puts a list in order in place and returns it, checking every row;
- `next_outside` passes code ranges a few characters apart, in every string width;
- the word glued to an open START is read when the START opens (the next START looked for
  after it), whatever closes it.
"""

from __future__ import annotations

from array import array
from itertools import pairwise
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citemark import Parser
from citemark._validate import diagnostic, strays
from citemark._validate.diagnostic import _ORDER
from citemark.sources import Registry, Source
from citemark.validate import Diagnostic, validate
from test_validate_strays import ROWS, Row, as_arrays, as_rows, oracle, outside_oracle

# validate's rules, one Python implementation (the names these tests call).
rules = SimpleNamespace(
    **{name: getattr(module, name) for module in (diagnostic, strays) for name in module.__all__}
)
S, E, D = "\ue200", "\ue201", "\ue202"
UNCLOSED = f"{S}cite{D}turn0search0 "  # the benchmark's unit
IDS = ["turn0search0", "turn0file0", "x"]
REGISTRY = Registry([Source(i, "one\ntwo\nthree", url=f"https://e.example/{i}") for i in IDS])


def run(implementation: str, text: str) -> list[Row]:
    """validate's findings over `implementation`'s scanner, as rows of their fields."""
    found = validate(
        text,
        REGISTRY,
        parser=Parser(implementation=implementation),  # type: ignore[arg-type]
        style="tool-lines",
    )
    return as_rows(found)


PIECES = [S, E, D, S * 2, E * 2, " ", "\n", "x", "cite", "turn0search0", "turn0search7"]
PIECES += [UNCLOSED, f"{S}cite{D}turn0file0{E}", "\u3000", "\u0100", "\U0001f600", "`"]
TEXTS = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


@given(TEXTS)
def test_stray_rows_come_in_order_of_place(text: str) -> None:
    # What lets validate skip the sort when these rows are all it found.
    found: list[Diagnostic] = []
    consumed = Parser().spans(text)
    rules.stray_findings(text, consumed, S, E, D, ROWS, found, array("q"), array("q"))
    assert all(a.start < b.start for a, b in pairwise(found))
    assert found == sorted(found, key=_ORDER)


@given(TEXTS)
def test_validate_is_in_order_and_the_same_on_both_scanners(implementation: str, text: str) -> None:
    got = run(implementation, text)
    assert got == sorted(got, key=_ORDER)
    assert got == run("python", text)


def test_the_unclosed_shape(implementation: str) -> None:
    text = UNCLOSED * 300
    got = run(implementation, text)
    size = len(UNCLOSED)
    assert [(d.code, d.start, d.end) for d in got] == [
        ("unterminated-marker", size * i, size * i + 1) for i in range(300)
    ]
    assert len({d.message for d in got}) == 1


@pytest.mark.parametrize("where", ["before", "between", "after"])
def test_other_findings_among_the_stray_rows_are_sorted_in(implementation: str, where: str) -> None:
    # A bare reference is found after the stray rows: they are not all there is, so validate
    # sorts.
    bare = "see turn0search7 here "
    cut = {"before": 0, "between": 5, "after": 10}[where]
    text = UNCLOSED * cut + bare + UNCLOSED * (10 - cut)
    got = run(implementation, text)
    assert got == sorted(got, key=_ORDER)
    assert [d.code for d in got].index("bare-reference") == cut
    assert len(got) == 11


def test_order_sorts_in_place() -> None:
    row = rules.Diagnostic
    rows = [row("b", "e", "m", 3, 4), row("a", "e", "m", 1, 2), row("a", "e", "m", 1, 2)]
    first, second = rows[1], rows[2]
    same = rules.order(rows)
    assert same is rows
    assert rows == [row("a", "e", "m", 1, 2)] * 2 + [row("b", "e", "m", 3, 4)]
    assert rows[0] is first  # stable
    assert rows[1] is second
    # Already in order: left as it is, the same row objects.
    before = list(rows)
    assert rules.order(rows) is rows
    assert all(a is b for a, b in zip(rows, before, strict=True))
    assert rules.order([]) == []


@pytest.mark.parametrize("at", [0, 1, 2, 3])
def test_order_checks_every_row_and_leaves_the_list_on_error(at: int) -> None:
    row = rules.Diagnostic
    for tail in ([], [row("a", "e", "m", 0, 0)]):  # in order until the bad row, or not
        rows: list[object] = [row("a", "e", "m", 5, 6), row("a", "e", "m", 7, 8)]
        rows.insert(min(at, len(rows)), Row("a", "e", "m", 1, 2))
        rows += tail
        before = list(rows)
        with pytest.raises(TypeError, match="found"):
            rules.order(rows)
        assert rows == before


SPANS = st.lists(
    st.tuples(st.integers(0, 10), st.integers(0, 25)), max_size=30
)  # (gap before, length) of each code range


@given(
    SPANS,
    st.sampled_from(["", "\u0100", "\U0001f600"]),
    st.lists(st.sampled_from(["turn", "tu", "t", "x", " "]), max_size=60).map("".join),
    st.integers(0, 20),
    st.sampled_from(["turn", "t"]),
)
def test_next_outside_past_spans_a_few_characters_apart(
    layout: list[tuple[int, int]], wide: str, body: str, at: int, needle: str
) -> None:
    text = wide + body * 3
    code_ranges = []
    place = 0
    for gap, length in layout:
        start = place + gap
        code_ranges.append((start, start + length))
        place = start + length
    code_ranges = [(start, end) for start, end in code_ranges if end <= len(text)]
    got = rules.next_outside(text, needle, at, *as_arrays(code_ranges), 0)
    assert got == outside_oracle(text, needle, at, code_ranges)


@pytest.mark.parametrize("wide", ["", "\u0100", "\U0001f600"])
def test_the_glued_word_whatever_closes_it(wide: str) -> None:
    # Read when its START opens: a STOP then closes it (a refused marker), a START follows
    # it at once or after a word, a DELIMITER is part of it, and the text may end in it.
    words = ["", "cite", f"cite{D}turn0search0", "x" * 40, f"cite{D}{wide}"]
    for word in words:
        for after in [E, S, f" {S}", f"{E}{E}", f"{D}{E}", "", f" x{E}"]:
            text = f"{wide}{S}{word}{after}{S}{word} {UNCLOSED}"
            for last in (len(text), len(text) - 3):
                found: list[tuple[int, int, int]] = []
                foreign: list[tuple[int, int]] = []
                rules.strays(text, 0, last, 7, S, E, D, found, foreign)
                assert (found, foreign) == oracle(text, 0, last, 7), (word, after, last)


@pytest.mark.parametrize("wide", ["", "\u0100", "\U0001f600"])
def test_the_glued_word_at_every_length(wide: str) -> None:
    # (every length up to 25, each kind of end)
    ends = [" ", "\t", "\x85", "\xa0", "\u1680", "\u2000", "\u205f", "\u3000", S, E, ""]
    ends += ["\x84", "\xa1", "\u1fff", "\u2060", "\u3001", D]  # no end: just outside
    for char in ends:
        for length in range(26):
            text = f"{wide}{S}{'a' * length}{char}{'b' * 9}"
            found: list[tuple[int, int, int]] = []
            foreign: list[tuple[int, int]] = []
            rules.strays(text, 0, len(text), 7, S, E, D, found, foreign)
            assert (found, foreign) == oracle(text, 0, len(text), 7), (char, length)
