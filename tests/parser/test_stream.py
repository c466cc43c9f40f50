"""StreamParser: any chunking of a stream gives the batch result of the same Parser."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citemark.parser import Parser
from citemark.stream import StreamParser
from strategies import chunked, feed_all

S, D, E = "\ue200", "\ue202", "\ue201"
PIECES = [S, D, E, "cite", "ci", "te", "turn0search1", "L1-L2", " ", "x", "\n", "😀", "é", "中"]


grammars = st.sampled_from(
    [
        {"families": ("cite",)},
        {"families": ("cite", "ci")},
        {"families": ("",)},
        {"any_family": True},
        {"families": ("cite",), "max_marker_length": 12},
    ]
)


@given(
    text=st.lists(st.sampled_from(PIECES), max_size=40).map("".join),
    cuts=st.lists(st.integers(0, 400), max_size=40),
    grammar=grammars,
    offsets=st.sampled_from(["codepoints", "utf16", "utf8"]),
    bound=st.sampled_from([4, 16, 4096]),
)
def test_any_chunking_gives_the_batch_result(implementation, text, cuts, grammar, offsets, bound):
    parser = Parser(**grammar, offsets=offsets, implementation=implementation)
    stream = StreamParser(parser, max_marker_length=bound)
    batch = stream.parser
    assert feed_all(stream, chunked(text, cuts)) == (batch.strip(text), list(batch.finditer(text)))


@given(text=st.lists(st.sampled_from(PIECES), max_size=30).map("".join))
def test_one_character_chunks(implementation, text):
    stream = StreamParser(Parser(implementation=implementation))
    batch = stream.parser
    assert feed_all(stream, list(text)) == (batch.strip(text), list(batch.finditer(text)))


def test_a_marker_split_across_chunks_is_held_then_released(implementation):
    stream = StreamParser(Parser(implementation=implementation))
    first = stream.feed("Answer content " + S + "cit")
    assert first.text == "Answer content "
    assert stream.held == S + "cit"
    second = stream.feed("e" + D + "turn0search5" + D + "turn0search15" + E + " continues here.")
    assert second.text == " continues here."
    (citation,) = second.citations
    assert citation.source_ids == ("turn0search5", "turn0search15")
    assert (citation.start, citation.clean_start) == (15, 15)
    assert stream.close() == ("", [])


def test_an_unclosed_start_is_released_verbatim_past_the_bound(implementation):
    stream = StreamParser(Parser(implementation=implementation), max_marker_length=32)
    opened = stream.feed("keep " + S + "cite" + D + "turn1")
    assert opened.text == "keep "
    later = stream.feed(" and then a long stretch of prose that never closes")
    assert stream.held == ""
    assert later.text.startswith(S + "cite" + D + "turn1 and then")


def test_an_unclosed_start_is_released_at_close(implementation):
    stream = StreamParser(Parser(implementation=implementation))
    assert stream.feed("tail " + S + "cite" + D + "x").text == "tail "
    assert stream.close().text == S + "cite" + D + "x"


def test_offsets_are_in_the_parsers_unit(implementation):
    stream = StreamParser(Parser(offsets="utf16", implementation=implementation))
    text, citations = feed_all(stream, ["Evidence 😀 ", S + "cite" + D + "turn0search0", E + "."])
    assert text == "Evidence 😀 ."
    assert [(c.start, c.clean_start) for c in citations] == [(12, 12)]


def test_feed_checks_its_input(implementation):
    stream = StreamParser(Parser(implementation=implementation))
    with pytest.raises(TypeError, match="chunk must be str"):
        stream.feed(b"bytes")  # type: ignore[arg-type]
    stream.close()
    with pytest.raises(ValueError, match="after close"):
        stream.feed("more")
