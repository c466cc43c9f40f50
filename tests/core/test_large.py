"""Megabyte inputs: the guide's helper is quadratic on STARTs without a STOP; citemark must
return the same (empty) result, and strip many citations exactly.  No timing asserts: a
quadratic implementation shows up as a suite that does not finish."""

from __future__ import annotations

import pytest

from oracle import DELIM as D
from oracle import START as S
from oracle import STOP as E

pytestmark = pytest.mark.slow  # megabyte inputs, on both implementations

MEGABYTE = 1 << 20
UNCLOSED = S + "cite" + D + "x "
NO_STOP = UNCLOSED * (MEGABYTE // len(UNCLOSED))


@pytest.mark.parametrize(
    "families", [("cite",), ("", "cite", "x"), ("navlist", "filecite", "cite")], ids=repr
)
def test_a_megabyte_of_unclosed_markers_has_no_citation(api, families) -> None:
    assert len(NO_STOP) == MEGABYTE
    assert api.extract_citations(NO_STOP, families=families) == []


def test_a_megabyte_of_unclosed_markers_strips_to_itself(api) -> None:
    assert api.strip_many([NO_STOP]) == [NO_STOP]
    assert api.strip_citations(NO_STOP, api.extract_citations(NO_STOP)) == NO_STOP


@pytest.mark.parametrize(
    "text",
    [E + NO_STOP, S * MEGABYTE, (S + "cite") * (MEGABYTE // 5)],
    ids=["stop-first", "only-starts", "starts-and-family"],
)
def test_a_megabyte_of_starts_without_a_later_stop(api, text) -> None:
    assert api.extract_citations(text, families=("cite", "")) == []
    assert api.strip_many([text], families=("cite", "")) == [text]


def test_one_late_stop_closes_the_first_start_only(api) -> None:
    # The first START swallows the whole megabyte: one invalid match, nothing to strip.
    text = NO_STOP + S + "cite" + D + "turn0" + E
    assert api.extract_citations(text) == []
    assert api.strip_many([text]) == [text]


def build_many(count: int) -> tuple[str, list[dict[str, object]], str]:
    """A text of `count` valid citations between prose; its citations and its prose."""
    pieces, kept, citations = [], [], []
    offset = 0
    for i in range(count):
        prose = f"w{i} " if i % 3 else f"Sentence {i}.\n"
        ids = [f"turn{i}search{i % 7}"] + ([f"turn{i}news2"] if i % 5 == 0 else [])
        locator = f"L{i}-L{i + 3}" if i % 2 else None
        raw = S + "cite" + D + D.join(ids + ([locator] if locator else [])) + E
        start = offset + len(prose)
        citations.append(
            {
                "raw": raw,
                "family": "cite",
                "source_ids": ids,
                "locator": locator,
                "start": start,
                "end": start + len(raw),
            }
        )
        pieces += [prose, raw]
        kept.append(prose)
        offset = start + len(raw)
    pieces.append("The end.")
    kept.append("The end.")
    return "".join(pieces), citations, "".join(kept)


MANY_TEXT, MANY_CITATIONS, MANY_STRIPPED = build_many(50_000)


def test_fifty_thousand_citations_in_a_megabyte_are_all_extracted(api) -> None:
    assert len(MANY_TEXT) >= MEGABYTE
    assert api.extract_citations(MANY_TEXT) == MANY_CITATIONS


def test_fifty_thousand_citations_strip_to_the_prose(api) -> None:
    assert api.strip_citations(MANY_TEXT, MANY_CITATIONS) == MANY_STRIPPED
    assert api.strip_many([MANY_TEXT]) == [MANY_STRIPPED]


@pytest.mark.parametrize(
    "order",
    [tuple, lambda c: iter(c), lambda c: c[::-1], lambda c: c[1::2] + c[::2]],
    ids=["tuple", "iterator", "reversed", "interleaved"],
)
def test_fifty_thousand_citations_in_another_order(api, order) -> None:
    assert api.strip_citations(MANY_TEXT, order(MANY_CITATIONS)) == MANY_STRIPPED
