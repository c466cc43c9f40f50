"""Where the raw text went: `clean_mapped`, `clean_position` and `CleanStream(mapped=True)`,
which `citemark.openai` uses to move annotation offsets into the clean text."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citemark.display import (
    CleanStream,
    Cut,
    _compose,
    clean,
    clean_mapped,
    clean_position,
    clean_with_marks,
)

S, E, D = "\ue200", "\ue201", "\ue202"
MARKER = S + "cite" + D + "turn0search5" + D + "turn0search15" + E
ENTITY = S + "entity" + D + '["software","Node.js","runtime"]' + E

fragments = st.lists(
    st.sampled_from(
        [
            S,
            E,
            D,
            MARKER,
            MARKER,
            ENTITY,
            "\ue203",
            "\ue204",
            "\ue206",
            "cite",
            "turn0search0",
            " ",
            "  ",
            "\t",
            ".",
            ",",
            "\n",
            "\n\n",
            "\r\n",
            "`",
            "```\n",
            "    ",
            "- ",
            "> ",
            "[a](",
            "[[b] c](",
            ")",
            "word",
            "😀",
            "citeturn0news1",
            "\\ue200",
            "\ufffd",
            ":contentReference[oaicite:3]{index=3}",
            'entity["k","Name"]',
        ]
    ),
    max_size=40,
).map("".join)


def check_cuts(raw: str, clean_text: str, cuts: list[Cut]) -> None:
    """The cuts lead from raw to clean: in order, and between them the text is copied."""
    r = c = 0
    for cut in cuts:
        assert r <= cut.start <= cut.end, cut
        assert c <= cut.clean_start <= cut.clean_end, cut
        assert raw[r : cut.start] == clean_text[c : cut.clean_start], cut
        r, c = cut.end, cut.clean_end
    assert raw[r:] == clean_text[c:]
    assert c <= len(clean_text)
    assert r <= len(raw)


def positions(cuts: list[Cut], length: int) -> list[tuple[int, int]]:
    return [(clean_position(cuts, k), clean_position(cuts, k, end=True)) for k in range(length + 1)]


def streamed(text: str, sizes: list[int], **options: object) -> CleanStream:
    stream = CleanStream(mapped=True, **options)  # type: ignore[arg-type]
    out, at = [], 0
    for size in itertools.cycle(sizes or [len(text) + 1]):
        if at >= len(text):
            break
        out.append(stream.feed(text[at : at + size]))
        at += size
    out.append(stream.close())
    stream.text = "".join(out)  # type: ignore[attr-defined]
    return stream


@given(fragments, st.booleans(), st.booleans())
def test_the_cuts_lead_from_the_text_to_its_clean_text(
    implementation: str, text: str, lenient: bool, skip_code: bool
) -> None:
    mapped = clean_mapped(text, lenient=lenient, skip_code=skip_code, implementation=implementation)
    assert mapped.text == clean(text, lenient=lenient, skip_code=skip_code)
    assert mapped.marks == clean_with_marks(text, lenient=lenient, skip_code=skip_code).marks
    check_cuts(text, mapped.text, mapped.cuts)
    places = positions(mapped.cuts, len(text))
    assert places[0] == (0, 0)
    assert places[-1] == (len(mapped.text), len(mapped.text))
    for (a, b), (c, d) in itertools.pairwise(places):
        assert a <= c  # never backwards
        assert b <= d
        assert a <= b  # a start never lands after the end of the same place


@given(fragments, st.lists(st.integers(1, 9), max_size=6), st.booleans())
def test_a_stream_maps_as_the_whole_text_does(
    implementation: str, text: str, sizes: list[int], lenient: bool
) -> None:
    stream = streamed(text, sizes, lenient=lenient, implementation=implementation)
    whole = clean_mapped(text, lenient=lenient, implementation=implementation)
    assert stream.text == whole.text  # type: ignore[attr-defined]
    assert stream.marks == whole.marks
    check_cuts(text, whole.text, stream.cuts)
    assert positions(stream.cuts, len(text)) == positions(whole.cuts, len(text))
    assert stream.released == len(text)


@pytest.mark.parametrize(
    ("raw", "covered", "expected"),
    [
        # Text that survives covers the same characters.
        ("Kyoto is old " + MARKER + ".", "Kyoto is old", "Kyoto is old"),
        # A blank the spacing rule drops is not covered any more.
        ("Kyoto is old " + MARKER + ".", "Kyoto is old ", "Kyoto is old"),
        # Over a marker only: a point where the marker was.
        ("Kyoto is old " + MARKER + ".", MARKER, ""),
        ("a " + MARKER + " b", " " + MARKER, ""),
        # An entity shows its name: covering any of it covers the name.
        ("It works with " + ENTITY + ", too.", ENTITY, "Node.js"),
        ("It works with " + ENTITY + ", too.", "with " + ENTITY[:5], "with Node.js"),
        # A link whose destination was a marker keeps its text.
        ("See [the guide](" + MARKER + ").", "[the guide](" + MARKER + ")", "the guide"),
        ("See [the guide](" + MARKER + ").", "the guide", "the guide"),
        # Supported-span characters go, the prose they bracket stays.
        ("\ue203Claim.\ue204 " + MARKER, "\ue203Claim.\ue204", "Claim."),
        # Code keeps its markers.
        ("`" + MARKER + "` " + MARKER, "`" + MARKER + "`", "`" + MARKER + "`"),
    ],
)
def test_ranges_cover_what_survives(
    implementation: str, raw: str, covered: str, expected: str
) -> None:
    mapped = clean_mapped(raw, implementation=implementation)
    start = raw.index(covered)
    a = clean_position(mapped.cuts, start)
    b = clean_position(mapped.cuts, start + len(covered), end=True)
    assert mapped.text[a:b] == expected
    if not expected:
        assert a == b == mapped.text.index(".") if "." in mapped.text else a == b


def test_lenient_rewrites_are_mapped_back_to_the_raw_text(implementation: str) -> None:
    raw = 'First citeturn0search0 then \\ue200cite\\ue202turn1news2\\ue201 and entity["k","Name"].'
    mapped = clean_mapped(raw, lenient=True, implementation=implementation)
    assert mapped.text == "First then and Name."
    check_cuts(raw, mapped.text, mapped.cuts)
    start = raw.index("entity")
    name = mapped.text[
        clean_position(mapped.cuts, start) : clean_position(mapped.cuts, len(raw) - 1, end=True)
    ]
    assert name == "Name"


def test_positions_outside_every_cut_move_with_the_text() -> None:
    cuts = [Cut(2, 5, 2, 2), Cut(8, 10, 5, 9)]
    assert [clean_position(cuts, k) for k in range(12)] == [0, 1, 2, 2, 2, 2, 3, 4, 5, 5, 9, 10]
    assert [clean_position(cuts, k, end=True) for k in range(12)] == [
        0, 1, 2, 2, 2, 2, 3, 4, 5, 9, 9, 10,
    ]  # fmt: skip
    assert clean_position([], 7) == 7


edits = st.lists(
    st.tuples(st.integers(0, 30), st.integers(1, 4), st.text("xy", max_size=4)), max_size=6
)


def applied(text: str, changes: list[tuple[int, int, str]]) -> tuple[str, list[Cut]]:
    """text with non-overlapping replacements, and their cuts."""
    out, cuts, at, shift = [], [], 0, 0
    for start, size, new in sorted(changes):
        if start < at or start + size > len(text) or size == 0:
            continue  # cleaning never inserts where nothing was
        out += [text[at:start], new]
        cuts.append(Cut(start, start + size, start + shift, start + shift + len(new)))
        shift += len(new) - size
        at = start + size
    out.append(text[at:])
    return "".join(out), cuts


@given(st.text("abc", max_size=30), edits, edits)
def test_composed_cuts_lead_through_both_steps(text: str, first: list, second: list) -> None:
    middle, one = applied(text, first)
    last, two = applied(middle, second)
    composed = _compose(one, two)
    r = c = 0
    for cut in composed:
        assert r <= cut.start <= cut.end
        assert c <= cut.clean_start <= cut.clean_end
        assert cut.start - r == cut.clean_start - c  # what lies between is copied
        r, c = cut.end, cut.clean_end
    assert len(text) - r == len(last) - c
    for cut in one:
        # A boundary of the first step's cuts lands where the two steps take it, unless the
        # second step cut into it (the merged cut then has no place for it).
        for index in (cut.start, cut.end):
            middle_index = clean_position(one, index)
            if any(a < middle_index < b for a, b, _, _ in two):
                continue
            assert clean_position(composed, index) == clean_position(two, middle_index)


def test_mapped_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="mapped must be bool"):
        CleanStream(mapped=1)  # type: ignore[arg-type]


def test_an_unmapped_stream_records_nothing() -> None:
    stream = CleanStream()
    assert stream.feed("a " + MARKER + ".\n") == "a.\n"
    assert stream.marks == []
    assert stream.cuts == []
    assert stream.released == len("a " + MARKER + ".\n")
