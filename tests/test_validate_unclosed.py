"""validate on thousands of unterminated STARTs (issue 12's "unclosed" shape): the kernel
steps it takes there, on both implementations.

- `stray_findings` makes its rows in order of place, so validate sorts nothing when they are
  all it found (and sorts when anything else is found too);
- `order` puts a list in order in place and returns it, checking every row;
- `next_outside` passes walls a few characters apart, in every string width;
- the word glued to an open START is read when the START opens (the next START looked for
  after it), whatever closes it.

validate's kernel functions are the active implementation's; `kernel_of` swaps in the one
under test.
"""

from __future__ import annotations

import contextlib
from array import array
from collections.abc import Iterator
from itertools import pairwise
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

import citemark.validate
from citemark import Parser
from citemark._kernels.commonmark_py import _ORDER
from citemark._kernels.loader import load
from citemark._markdown import code as _commonmark
from citemark.sources import Registry, Source
from citemark.validate import Diagnostic, validate
from test_validate_strays import ROWS, Row, as_arrays, as_rows, oracle, outside_oracle

S, E, D = "\ue200", "\ue201", "\ue202"
UNCLOSED = f"{S}cite{D}turn0search0 "  # the benchmark's unit
IDS = ["turn0search0", "turn0file0", "x"]
REGISTRY = Registry([Source(i, "one\ntwo\nthree", url=f"https://e.example/{i}") for i in IDS])
# validate's names for the kernel functions it calls and the Diagnostic they make: those it
# imports from _commonmark that are the active kernel's own (read off the modules, so a
# function validate starts using is swapped too).
KERNEL_NAMES = sorted(
    name
    for name, value in vars(_commonmark).items()
    if callable(value)
    and getattr(citemark.validate, name, None) is value
    and getattr(_commonmark._kernel, name, None) is value
)


@contextlib.contextmanager
def kernel_of(implementation: str) -> Iterator[None]:
    """validate with the kernel functions of `implementation` (and its scanner)."""
    kernel = load("commonmark", implementation)  # type: ignore[arg-type]
    with mock.patch.multiple(
        citemark.validate, **{name: getattr(kernel, name) for name in KERNEL_NAMES}
    ):
        yield


def run(implementation: str, text: str) -> list[Row]:
    """validate's findings with `implementation`'s kernel, as rows of their fields (the
    Diagnostics of the two kernels are of two types)."""
    kernel = load("commonmark", implementation)  # type: ignore[arg-type]
    with kernel_of(implementation):
        found = validate(
            text,
            REGISTRY,
            parser=Parser(implementation=implementation),  # type: ignore[arg-type]
            style="tool-lines",
        )
    return as_rows(found, kernel)


PIECES = [S, E, D, S * 2, E * 2, " ", "\n", "x", "cite", "turn0search0", "turn0search7"]
PIECES += [UNCLOSED, f"{S}cite{D}turn0file0{E}", "\u3000", "\u0100", "\U0001f600", "`"]
TEXTS = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


@given(TEXTS)
def test_stray_rows_come_in_order_of_place(implementation: str, text: str) -> None:
    # What lets validate skip the sort when these rows are all it found.
    kernel = load("commonmark", implementation)  # type: ignore[arg-type]
    found: list[Diagnostic] = []
    consumed = Parser().spans(text)
    kernel.stray_findings(text, consumed, S, E, D, ROWS, found, array("q"), array("q"))
    assert all(a.start < b.start for a, b in pairwise(found))
    assert found == sorted(found, key=_ORDER)


@given(TEXTS)
def test_validate_is_in_order_and_the_same_on_both_kernels(implementation: str, text: str) -> None:
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
    # A bare reference is found after the stray rows: the kernel's rows are not all there
    # is, so validate sorts.
    bare = "see turn0search7 here "
    cut = {"before": 0, "between": 5, "after": 10}[where]
    text = UNCLOSED * cut + bare + UNCLOSED * (10 - cut)
    got = run(implementation, text)
    assert got == sorted(got, key=_ORDER)
    assert [d.code for d in got].index("bare-reference") == cut
    assert len(got) == 11


def test_order_sorts_in_place(implementation: str) -> None:
    kernel = load("commonmark", implementation)  # type: ignore[arg-type]
    row = kernel.Diagnostic
    rows = [row("b", "e", "m", 3, 4), row("a", "e", "m", 1, 2), row("a", "e", "m", 1, 2)]
    first, second = rows[1], rows[2]
    same = kernel.order(rows)
    assert same is rows
    assert rows == [row("a", "e", "m", 1, 2)] * 2 + [row("b", "e", "m", 3, 4)]
    assert rows[0] is first  # stable
    assert rows[1] is second
    # Already in order: left as it is, the same row objects.
    before = list(rows)
    assert kernel.order(rows) is rows
    assert all(a is b for a, b in zip(rows, before, strict=True))
    assert kernel.order([]) == []


@pytest.mark.parametrize("at", [0, 1, 2, 3])
def test_order_checks_every_row_and_leaves_the_list_on_error(implementation: str, at: int) -> None:
    kernel = load("commonmark", implementation)  # type: ignore[arg-type]
    row = kernel.Diagnostic
    for tail in ([], [row("a", "e", "m", 0, 0)]):  # in order until the bad row, or not
        rows: list[object] = [row("a", "e", "m", 5, 6), row("a", "e", "m", 7, 8)]
        rows.insert(min(at, len(rows)), Row("a", "e", "m", 1, 2))
        rows += tail
        before = list(rows)
        with pytest.raises(TypeError, match="found"):
            kernel.order(rows)
        assert rows == before


WALLED = st.lists(
    st.tuples(st.integers(0, 10), st.integers(0, 25)), max_size=30
)  # (gap before, length) of each wall


@given(
    WALLED,
    st.sampled_from(["", "\u0100", "\U0001f600"]),
    st.lists(st.sampled_from(["turn", "tu", "t", "x", " "]), max_size=60).map("".join),
    st.integers(0, 20),
    st.sampled_from(["turn", "t"]),
)
def test_next_outside_past_walls_a_few_characters_apart(
    implementation: str, layout: list[tuple[int, int]], wide: str, body: str, at: int, needle: str
) -> None:
    kernel = load("commonmark", implementation)  # type: ignore[arg-type]
    text = wide + body * 3
    walls = []
    place = 0
    for gap, length in layout:
        start = place + gap
        walls.append((start, start + length))
        place = start + length
    walls = [(start, end) for start, end in walls if end <= len(text)]
    got = kernel.next_outside(text, needle, at, *as_arrays(walls), 0)
    assert got == outside_oracle(text, needle, at, walls)


@pytest.mark.parametrize("wide", ["", "\u0100", "\U0001f600"])
def test_the_glued_word_whatever_closes_it(implementation: str, wide: str) -> None:
    # Read when its START opens: a STOP then closes it (a refused marker), a START follows
    # it at once or after a word, a DELIMITER is part of it, and the text may end in it.
    kernel = load("commonmark", implementation)  # type: ignore[arg-type]
    words = ["", "cite", f"cite{D}turn0search0", "x" * 40, f"cite{D}{wide}"]
    for word in words:
        for after in [E, S, f" {S}", f"{E}{E}", f"{D}{E}", "", f" x{E}"]:
            text = f"{wide}{S}{word}{after}{S}{word} {UNCLOSED}"
            for last in (len(text), len(text) - 3):
                found: list[tuple[int, int, int]] = []
                foreign: list[tuple[int, int]] = []
                kernel.strays(text, 0, last, 7, S, E, D, found, foreign)
                assert (found, foreign) == oracle(text, 0, last, 7), (word, after, last)


@pytest.mark.parametrize("wide", ["", "\u0100", "\U0001f600"])
def test_the_glued_word_at_every_length_about_a_vector(implementation: str, wide: str) -> None:
    # (the kernel reads 8 units a step: every length up to three steps, each kind of end)
    kernel = load("commonmark", implementation)  # type: ignore[arg-type]
    ends = [" ", "\t", "\x85", "\xa0", "\u1680", "\u2000", "\u205f", "\u3000", S, E, ""]
    ends += ["\x84", "\xa1", "\u1fff", "\u2060", "\u3001", D]  # no end: just outside
    for char in ends:
        for length in range(26):
            text = f"{wide}{S}{'a' * length}{char}{'b' * 9}"
            found: list[tuple[int, int, int]] = []
            foreign: list[tuple[int, int]] = []
            kernel.strays(text, 0, len(text), 7, S, E, D, found, foreign)
            assert (found, foreign) == oracle(text, 0, len(text), 7), (char, length)
