"""Random inputs, weighted toward the markers: citemark must agree with the oracle, in
value and in exception type; and the compiled kernel must agree with its Python twin.

The text strategy concatenates pieces drawn from fixed palettes (cheap to generate, so
200 examples per test stay fast): whole markers built from a family, a body and usually
a STOP, loose marker characters and words, every `str.isspace` character, decimal digits
of many scripts, astral and lone-surrogate characters, and any character at all.
"""

from __future__ import annotations

import importlib
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import oracle
from citemark._core.dropin import DropIn
from oracle import DELIM as D
from oracle import START as S
from oracle import STOP as E
from oracle import outcome

FAMILY_NAMES = ["cite", "filecite", "navlist", ""]
IDS = ["turn0search0", "turn1news2", "turn0file1", "turn2view3", "turn123456search9", "block5"]
LOCATORS = ["L8-L13", "L8", "L١-L٢", "L１-L２", "L٣", "L8-13", "L", "L²"]
WHITESPACE = [chr(c) for c in range(0x110000) if chr(c).isspace()]
DECIMALS = [chr(c) for c in range(0x110000) if chr(c).isdecimal() and c > 0x7F]
ODD = ["\U0001f600", "\U00010348", "\ud800", "\udfff", "\x00", "é", "ÿ", "中", "文", "\ue203"]
ODD += ["\ue204", "\ue206", "\u200b", "-", "_", ".", "/", "https://example.com/a", "\\ue202"]

BODIES = [
    *IDS,
    *LOCATORS,
    *ODD,
    *(i + D + loc for i in IDS for loc in LOCATORS),
    *(a + D + b for a in IDS for b in IDS[:3]),
    *(space + IDS[0] + space + D + space + "L1" for space in WHITESPACE),
    *("turn0" + D + " L" + d + d + "-L" + d for d in DECIMALS[::10]),
    *(IDS[1] + D + odd for odd in ODD),
    *(D + IDS[2] + D + D, D, "", " ", S, E, S + "cite" + D + IDS[0]),
]


def loose_pieces(names: list[str]) -> list[str]:
    """Marker characters and words outside whole markers; repeats weigh a piece more."""
    return [
        *[E, E, E, D, D, D, S, S],
        *IDS,
        *LOCATORS,
        *["prose ", " ", ". ", "\n"],
        *WHITESPACE[::3],
        *DECIMALS[::50],
        *ODD,
        *names,
    ]


def text_strategy(names: list[str]) -> st.SearchStrategy[str]:
    whole_marker = st.tuples(
        st.sampled_from(names), st.sampled_from(BODIES), st.sampled_from([E, E, E, ""])
    ).map(lambda parts: S + parts[0] + D + parts[1] + parts[2])
    piece = st.one_of(whole_marker, st.sampled_from(loose_pieces(names)), st.characters())
    return st.lists(piece, max_size=12).map("".join)


texts = text_strategy(["cite", "cite", *FAMILY_NAMES])

FAMILY_ALPHABET = [*"citenavl", *".|()*+?[]^$\\{}-", S, D, E, " "]
family = st.one_of(st.sampled_from(FAMILY_NAMES), st.text(FAMILY_ALPHABET, max_size=4))
families_strategy = st.lists(family, max_size=3).map(tuple)


@st.composite
def text_and_families(draw: st.DrawFn) -> tuple[str, tuple[str, ...]]:
    """Random families, and a text that uses them as well as the usual names."""
    families = draw(families_strategy)
    return draw(text_strategy([*FAMILY_NAMES, *families])), families


ODD_VALUES = [None, b"cite", b"", 0, 1, 2.5, bytearray(b"x"), ("cite",), ["x"]]
ODD_OFFSETS = [None, True, False, 2**64, -(2**64), 2**63 - 1, -(2**63), "1", 1.5]


def int_spans(size: int) -> st.SearchStrategy[list[dict[str, int]]]:
    """Dicts with int `start` and `end` around the text: out of range, negative, reversed,
    overlapping; or sorted and disjoint."""
    offset = st.integers(-5, size + 5)
    anywhere = st.lists(st.fixed_dictionaries({"start": offset, "end": offset}), max_size=6)
    sorted_cuts = st.lists(st.integers(-2, size + 2), max_size=8).map(sorted)
    ordered = sorted_cuts.map(
        lambda cuts: [{"start": a, "end": b} for a, b in zip(cuts[::2], cuts[1::2], strict=False)]
    )
    return st.one_of(anywhere, ordered)


def odd_citations(size: int) -> st.SearchStrategy[list[Any]]:
    """Dicts whose offsets are sometimes not ints, or missing."""
    offset = st.one_of(st.integers(-5, size + 5), st.sampled_from(ODD_OFFSETS))
    item = st.one_of(
        st.fixed_dictionaries({"start": offset, "end": offset}),
        st.fixed_dictionaries({"start": offset}),
        st.fixed_dictionaries({"end": offset}),
        st.fixed_dictionaries(
            {"start": st.integers(-5, size + 5), "end": st.integers(-5, size + 5)}
        ),
    )
    return st.lists(item, max_size=6)


# --- extract --------------------------------------------------------------------------


@given(text=texts)
def test_extract_default_families(api, text) -> None:
    assert outcome(api.extract_citations, text) == outcome(oracle.extract_citations, text)


@given(case=text_and_families())
def test_extract_random_families(api, case) -> None:
    text, families = case
    assert outcome(api.extract_citations, text, families=families) == outcome(
        oracle.extract_citations, text, families=families
    )


@given(case=text_and_families(), kind=st.sampled_from(["list", "iter", "generator", "str"]))
def test_extract_families_of_any_iterable(api, case, kind) -> None:
    text, families = case

    def make() -> Any:
        if kind == "list":
            return list(families)
        if kind == "iter":
            return iter(families)
        if kind == "generator":
            return (f for f in families)
        return "".join(families)

    assert outcome(api.extract_citations, text, families=make()) == outcome(
        oracle.extract_citations, text, families=make()
    )


@given(
    text=st.one_of(texts, st.sampled_from(ODD_VALUES)),
    families=st.one_of(
        families_strategy,
        st.lists(st.one_of(family, st.sampled_from(ODD_VALUES)), max_size=3).map(tuple),
        st.sampled_from(ODD_VALUES),
    ),
)
def test_extract_errors(api, text, families) -> None:
    assert outcome(api.extract_citations, text, families=families) == outcome(
        oracle.extract_citations, text, families=families
    )


# --- strip ----------------------------------------------------------------------------


@given(case=text_and_families())
def test_strip_what_extract_returned(api, case) -> None:
    text, families = case
    citations = oracle.extract_citations(text, families=families)
    expected = oracle.strip_citations(text, citations)
    assert api.strip_citations(text, citations) == expected
    assert api.strip_citations(text, api.extract_citations(text, families=families)) == expected


@given(case=text_and_families(), data=st.data())
def test_strip_shuffled_and_partial_citations(api, case, data) -> None:
    text, families = case
    citations = data.draw(st.permutations(oracle.extract_citations(text, families=families)))
    keep = data.draw(st.lists(st.booleans(), min_size=len(citations), max_size=len(citations)))
    chosen = [c for c, kept in zip(citations, keep, strict=True) if kept]
    assert outcome(api.strip_citations, text, chosen) == outcome(
        oracle.strip_citations, text, chosen
    )


@given(text=texts, data=st.data())
def test_strip_fabricated_int_spans(api, text, data) -> None:
    citations = data.draw(int_spans(len(text)))
    assert outcome(api.strip_citations, text, citations) == outcome(
        oracle.strip_citations, text, citations
    )


@given(text=texts, data=st.data())
def test_strip_odd_citations_mixed_with_real_ones(api, text, data) -> None:
    mixed = oracle.extract_citations(text) + data.draw(odd_citations(len(text)))
    citations = data.draw(st.permutations(mixed))
    assert outcome(api.strip_citations, text, iter(citations)) == outcome(
        oracle.strip_citations, text, citations
    )


# --- many -----------------------------------------------------------------------------


@given(batch=st.lists(texts, max_size=4), families=families_strategy)
def test_extract_many_is_per_text(api, batch, families) -> None:
    expected = [oracle.extract_citations(t, families=families) for t in batch]
    assert api.extract_many(batch, families=families) == expected


@given(batch=st.lists(texts, max_size=4), families=families_strategy)
def test_strip_many_is_per_text(api, batch, families) -> None:
    expected = [
        oracle.strip_citations(t, oracle.extract_citations(t, families=families)) for t in batch
    ]
    assert api.strip_many(batch, families=families) == expected
    assert api.strip_many(batch, families=families) == [
        api.strip_citations(t, api.extract_citations(t, families=families)) for t in batch
    ]


# --- the kernel against the twin, below the drop-in layer -------------------------------


def scanners() -> tuple[Any, Any]:
    """The kernel and the twin imported directly (the kernel's ImportError fails the
    test), each behind the shared drop-in layer so the comparison does not depend on the
    scanners' internal signatures."""
    kernel = importlib.import_module("citemark._kernels.scan_c")
    twin = importlib.import_module("citemark._kernels.scan_py")
    return DropIn(kernel), DropIn(twin)


@given(case=text_and_families())
def test_kernel_extract_and_strip_are_the_twins(case) -> None:
    kernel, twin = scanners()
    text, families = case
    assert kernel.extract_citations(text, families=families) == twin.extract_citations(
        text, families=families
    )
    assert kernel.strip_many([text], families=families) == twin.strip_many(
        [text], families=families
    )


@given(text=texts, data=st.data())
def test_kernel_cut_is_the_twins(text, data) -> None:
    kernel, twin = scanners()
    real = twin.extract_citations(text)
    citations = data.draw(st.one_of(st.just(real), int_spans(len(text)), odd_citations(len(text))))
    assert outcome(kernel.scanner.cut, text, citations) == outcome(
        twin.scanner.cut, text, citations
    )
