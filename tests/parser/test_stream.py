"""StreamParser: any chunking of a stream gives the batch result of the same Parser."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citemark.parser import Parser
from citemark.stream import StreamParser
from strategies import chunked, closed_and_freed, feed_all
from stream_oracle import ReferenceStream

S, D, E = "\ue200", "\ue202", "\ue201"
PIECES = [S, D, E, "cite", "ci", "te", "turn0search1", "L1-L2", " ", "x", "\n", "😀", "é", "中"]


GRAMMARS = [
    {"families": ("cite",)},
    {"families": ("cite", "ci")},
    {"families": ("",)},
    {"any_family": True},
    {"families": ("cite",), "max_marker_length": 12},
    {"families": (D + E, "")},  # a family holding the STOP: a STOP then decides nothing
]
grammars = st.sampled_from(GRAMMARS)


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


def test_a_family_holding_the_stop_keeps_its_start_undecided(implementation):
    """START D STOP is a whole (invalid) marker of the family "", but, once D follows, the start
    of one of the family D + STOP, which the parser tries first: the stream holds it."""
    parser = Parser(families=(D + E, ""), implementation=implementation)
    stream = StreamParser(parser)
    assert stream.feed(S + D + E) == ("", [])
    update = stream.feed(D + "turn0search0" + E + " after")
    assert update.text == " after"
    assert [c.source_ids for c in update.citations] == [("turn0search0",)]
    assert update.citations == list(parser.finditer(S + D + E + D + "turn0search0" + E))


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


@pytest.mark.parametrize("skip_code", [False, True])
def test_a_closed_stream_is_freed_without_the_collector(implementation, skip_code):
    parser = Parser(skip_code=skip_code, implementation=implementation)
    update = closed_and_freed(
        lambda: StreamParser(parser), "Evidence " + S + "cite" + D + "turn0search0" + E + "."
    )
    assert update.text == ("" if skip_code else "Evidence .")  # skip_code holds the block


# -- update by update: the stream gives what it gave before its front moved to the scanners --

OPTIONS = st.sampled_from(
    [
        *GRAMMARS,
        {"families": ("cite",), "skip_code": True},
        {"families": ("cite",), "source_id": "turn[0-9a-z]+", "locator": "L[0-9]+"},
        {"start": "[", "delimiter": "|", "stop": "]", "families": ("cite",)},
    ]
)
CODE_PIECES = [*PIECES, "`", "```", "\n\n", "    ", "[", "|", "]", "Ā"]


class Text(str):
    """A str subclass: the front hands its plain copy on."""


@given(
    text=st.lists(st.sampled_from(CODE_PIECES), max_size=40).map("".join),
    cuts=st.lists(st.integers(0, 400), max_size=40),
    options=OPTIONS,
    offsets=st.sampled_from(["codepoints", "utf16", "utf8"]),
    bound=st.sampled_from([4, 16, 4096]),
    subclass=st.booleans(),
)
def test_every_update_is_the_reference_streams(
    implementation, text, cuts, options, offsets, bound, subclass
):
    parser = Parser(**options, offsets=offsets, implementation=implementation)
    stream = StreamParser(parser, max_marker_length=bound)
    reference = ReferenceStream(parser, max_marker_length=bound)
    for chunk in chunked(text, cuts):
        given_chunk = Text(chunk) if subclass else chunk
        got = stream.feed(given_chunk)
        want = reference.feed(given_chunk)
        assert got == want
        assert type(got.text) is str
        assert stream.held == reference.held
    assert stream.close() == reference.close()
    assert stream.close() == reference.close() == ("", [])


@given(
    text=st.lists(st.sampled_from(PIECES), max_size=40).map("".join),
    cuts=st.lists(st.integers(0, 400), max_size=40),
    uses=st.lists(st.sampled_from(["keep", "drop", "append", "keep list"]), min_size=1),
)
def test_an_update_is_never_changed_by_later_deltas(implementation, text, cuts, uses):
    """Whatever a caller keeps of an update (all of it, its list, nothing) or adds to its
    list stays as it was: the compiled front refills only updates no one holds any more."""
    parser = Parser(implementation=implementation)
    stream = StreamParser(parser)
    reference = ReferenceStream(parser, max_marker_length=4096)
    kept: list[tuple[object, tuple[str, list[object]]]] = []
    for index, chunk in enumerate(chunked(text, cuts)):
        update = stream.feed(chunk)
        assert update == reference.feed(chunk)
        use = uses[index % len(uses)]
        if use == "keep":
            kept.append((update, (update.text, list(update.citations))))
        elif use == "keep list":
            kept.append((update.citations, ("", list(update.citations))))
        elif use == "append":
            update.citations.append("added by the caller")
        del update
        for held, (text_was, citations_were) in kept:
            if isinstance(held, list):
                assert held == citations_were
            else:
                assert held == (text_was, citations_were)
    assert stream.close() == reference.close()


def test_code_run_by_a_freed_update_finds_the_stream_whole(implementation):
    """What a caller put in an update's list may run code when the update is freed, even
    inside a later feed, and that code may feed the stream: every update still holds its
    own chunk's release, in the order the chunks came."""
    stream = StreamParser(Parser(implementation=implementation))
    fed: list[str] = []
    released: list[tuple[str, str]] = []

    def feed(chunk: str) -> object:
        fed.append(chunk)
        update = stream.feed(chunk)
        released.append((chunk, update.text))
        return update

    class FeedsWhenFreed:
        def __del__(self) -> None:
            feed("inner ")

    first = feed("one ")
    first.citations.append(FeedsWhenFreed())
    del first
    kept = feed("two ")
    third = feed("three ")
    marker = S + "cite" + D + "turn0search1" + E
    fourth = feed("four " + marker + " ")
    assert (kept.text, third.text, fourth.text) == ("two ", "three ", "four  ")
    assert "inner " in fed  # freed by now on both implementations
    assert sorted(released) == sorted((chunk, chunk.replace(marker, "")) for chunk in fed)
    assert stream.close() == ("", [])


def updates(stream: StreamParser, chunks: list[str]) -> list[tuple[str, list[tuple[int, ...]]]]:
    """Each feed's text, and its citations as (start, end, clean_start)."""
    out = []
    for chunk in chunks:
        update = stream.feed(chunk)
        out.append((update.text, [(c.start, c.end, c.clean_start) for c in update.citations]))
    return out


def test_a_delta_that_closes_a_marker_releases_it_with_the_text_after(implementation):
    stream = StreamParser(Parser(implementation=implementation))
    marker = S + "cite" + D + "turn0search3" + E
    got = updates(stream, ["Some prose.", marker[:9], marker[9:16], marker[16:] + " More."])
    assert got == [
        ("Some prose.", []),
        ("", []),  # the START and the start of its family: held
        ("", []),
        (" More.", [(11, 11 + len(marker), 11)]),
    ]
    assert stream.held == ""


def test_a_start_split_from_its_family_is_held_until_decided(implementation):
    stream = StreamParser(Parser(implementation=implementation))
    assert updates(stream, ["a ", S]) == [("a ", []), ("", [])]
    assert stream.held == S
    assert updates(stream, ["c"]) == [("", [])]
    # "x" after the START fits no family: the START is plain text after all.
    assert updates(stream, ["x then"]) == [(S + "cx then", [])]
    assert stream.held == ""
    assert updates(stream, [S, "cite", D, "turn1news2", E]) == [
        ("", []),
        ("", []),
        ("", []),
        ("", []),
        ("", [(10, 27, 10)]),
    ]


def test_several_markers_in_one_delta(implementation):
    stream = StreamParser(Parser(implementation=implementation))
    first = S + "cite" + D + "turn0search1" + E
    second = S + "cite" + D + "turn0news2" + D + "L4-L5" + E
    update = stream.feed("A" + first + "B" + second + "C" + S + "ci")
    assert update.text == "ABC"
    assert [(c.source_ids, c.locator, c.start, c.clean_start) for c in update.citations] == [
        (("turn0search1",), None, 1, 1),
        (("turn0news2",), "L4-L5", 2 + len(first), 2),
    ]
    assert stream.held == S + "ci"
    assert stream.close().text == S + "ci"


@pytest.mark.parametrize(
    ("offsets", "expected"),
    [
        ("codepoints", [(3, 23, 3), (26, 46, 6)]),
        ("utf16", [(4, 24, 4), (28, 48, 8)]),
        ("utf8", [(7, 33, 7), (41, 67, 15)]),
    ],
)
def test_offsets_in_every_unit_across_deltas(implementation, offsets, expected):
    """A wide character before a marker, inside held text and after a release."""
    marker = S + "cite" + D + "turn0search12" + E  # 20 code points, 26 UTF-8 bytes
    text = "é😀 " + marker + "中😀 " + marker + "."
    stream = StreamParser(Parser(offsets=offsets, implementation=implementation))
    got = []
    for chunk in (text[:4], text[4:12], text[12:26], text[26:31], text[31:]):
        got += stream.feed(chunk).citations
    got += stream.close().citations
    assert [(c.start, c.end, c.clean_start) for c in got] == expected
    parser = stream.parser
    assert got == list(parser.finditer(text))


def test_the_front_takes_the_common_delta(implementation):
    """The stream's feed is its front's: one call a delta, no Python frame of the stream's."""
    stream = StreamParser(Parser(implementation=implementation))
    assert stream.feed == stream._f.feed


def test_streams_share_the_bounded_parser(implementation):
    parser = Parser(implementation=implementation)
    assert StreamParser(parser).parser is StreamParser(parser).parser
    assert StreamParser(parser).parser.max_marker_length == 4096
    assert StreamParser(parser, max_marker_length=9).parser.max_marker_length == 9
    bounded = Parser(max_marker_length=30, implementation=implementation)
    assert StreamParser(bounded, max_marker_length=9).parser is bounded
