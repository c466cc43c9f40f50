"""`CleanStream`'s front: the line being written goes out before its end, and the output of
every chunking stays exactly `clean(whole)`, with every option and in mapped form."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citemark.display import CleanStream, clean, clean_mapped, clean_with_marks

S, E, D = "\ue200", "\ue201", "\ue202"
MARKER = S + "cite" + D + "turn0search5" + D + "turn0search15" + E
TITLED = S + "link_title" + D + "Docs" + D + "turn0search1" + E
ENTITY = S + "entity" + D + '["k","Name"]' + E

pieces = st.sampled_from(
    [
        "\x00",  # (a character like any other: the compiled front took it for "none")
        "~~",  # (an emphasis a removal may empty: the front never ends a piece on one)
        "$",
        "\u4e2d",
        '"',
        "**",
        "'",
        "a",
        "\u3002",
        MARKER,
        TITLED,
        ENTITY,
        S,
        E,
        D,
        "\ue203",
        "\ue204",
        "\ue206",
        "\ue316",
        "cite",
        "turn0search0",
        "turn1",
        "L8-L13",
        " ",
        "  ",
        "\u00a0",
        "\t",
        ".",
        ",",
        ";",
        "\uff0c",
        "(",
        ")",
        "[",
        "]",
        "](",
        "\uff08",
        "\uff09",
        "!",
        "\n",
        "\n\n",
        "\r\n",
        "\r",
        "`",
        "```",
        "~~~",
        "    ",
        "- ",
        "* ",
        "1. ",
        "> ",
        "#",
        "word",
        "x",
        "Paris",
        "42",
        "citeturn0news1",
    ]
)
texts = st.lists(pieces, max_size=30).map("".join)


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    return [text[a:b] for a, b in itertools.pairwise(points)]


def run(chunks: list[str], **options: object) -> tuple[str, CleanStream]:
    stream = CleanStream(**options)  # type: ignore[arg-type]
    out = [stream.feed(chunk) for chunk in chunks]
    return "".join(out) + stream.close(), stream


def widget(marker: object) -> str:
    return "[w]"


# No widgets, a renderer of the `cite` family, or one of `link_title` (the other markers read
# past as without widgets).
widget_options = st.sampled_from([None, {"cite": widget}, {"link_title": widget}])


@settings(max_examples=300)
@given(texts, st.lists(st.integers(0, 300), max_size=15), st.booleans(), widget_options)
def test_every_chunking_and_option(
    implementation: str, text: str, cuts: list[int], skip_code: bool, widgets: Any
) -> None:
    options = {"skip_code": skip_code, "widgets": widgets}
    got, _ = run(split(text, cuts), implementation=implementation, **options)
    assert got == clean(text, **options)  # type: ignore[arg-type]


@settings(max_examples=150)
@given(texts)
def test_one_character_deltas(implementation: str, text: str) -> None:
    assert run(list(text), implementation=implementation)[0] == clean(text)


@settings(max_examples=150)
@given(texts, st.lists(st.integers(0, 300), max_size=15), st.booleans(), widget_options)
def test_mapped_marks_and_cuts(
    implementation: str, text: str, cuts: list[int], skip_code: bool, widgets: Any
) -> None:
    options: dict[str, Any] = {
        "skip_code": skip_code,
        "widgets": widgets,
        "implementation": implementation,
    }
    got, stream = run(split(text, cuts), mapped=True, **options)
    whole = clean_mapped(text, **options)
    assert got == whole.text
    assert stream.marks == whole.marks
    assert stream.cuts == whole.cuts
    assert stream.marks == clean_with_marks(text, **options).marks


@settings(max_examples=150)
@given(texts, st.lists(st.integers(0, 300), max_size=15), st.booleans())
def test_held_is_what_was_fed_past_what_was_released(
    implementation: str, text: str, cuts: list[int], lenient: bool
) -> None:
    """After every delta, `held` is the text fed after `released` (it is read from the end of
    the held pieces, so that reading it after each delta costs what is held)."""
    stream = CleanStream(lenient=lenient, implementation=implementation)  # type: ignore[arg-type]
    fed = ""
    for chunk in split(text, cuts):
        stream.feed(chunk)
        fed += chunk
        assert stream.held == fed[stream.released :]


@pytest.mark.parametrize(
    "text", ["x ~~ " + MARKER + "~~ y", "x **" + MARKER + "** y", "$E " + MARKER + "$ ok"]
)
def test_an_emptied_emphasis_goes_at_every_chunking(implementation: str, text: str) -> None:
    """The pair of runs around nothing but markers goes in a stream too: the front holds a
    tilde as it holds blanks (it released the first of "~~", and the pair was not seen)."""
    for cut in range(len(text) + 1):
        for mapped in (False, True):
            chunks = [text[:cut], text[cut:]]
            assert run(chunks, implementation=implementation, mapped=mapped)[0] == clean(text)
    assert run(list(text), implementation=implementation)[0] == clean(text)


@pytest.mark.parametrize("mapped", [False, True])
@pytest.mark.parametrize(
    "text",
    ["\x00" + MARKER + " b", "\u4e2d\x00" + MARKER + " x", "\x00\ue202turn0search1 x"],
)
def test_a_released_nul_is_the_context_of_what_follows(
    implementation: str, text: str, mapped: bool
) -> None:
    """U+0000 released before a marker is the character the marker follows, not a line
    start: the compiled front's "no character released" was 0, and the blank after the
    marker went ("\x00b")."""
    got, stream = run(list(text), implementation=implementation, mapped=mapped)
    assert got == clean(text)
    if mapped:
        assert stream.cuts == clean_mapped(text).cuts


def test_a_mapped_stream_records_marks_as_their_text_goes_out(implementation: str) -> None:
    stream = CleanStream(mapped=True, implementation=implementation)  # type: ignore[arg-type]
    assert stream.feed("prose") == "prose"  # the front: prose goes out as it comes
    assert stream.released == 5
    assert stream.feed(" " + MARKER) == ""  # the blank waits: the marker may take it
    assert (stream.marks, stream.released) == ([], 5)
    assert stream.feed(" more") == " more"  # decided: its mark and cut are recorded now
    assert [(mark.family, mark.start, mark.end) for mark in stream.marks] == [("cite", 5, 5)]
    assert stream.released == len("prose " + MARKER + " more")
    assert [tuple(cut) for cut in stream.cuts] == [(5, 6 + len(MARKER), 5, 5)]
    assert stream.feed("\n") == "\n"  # the line's end records nothing twice
    assert len(stream.marks) == len(stream.cuts) == 1
    assert stream.close() == ""


def test_a_link_goes_out_once_no_marker_can_unwrap_it(implementation: str) -> None:
    link = "([axios.com](https://www.axios.com/am))"
    for mapped in (False, True):
        stream = CleanStream(mapped=mapped, implementation=implementation)  # type: ignore[arg-type]
        assert stream.feed("Leaders met ") == "Leaders met"
        assert stream.feed("([axios") == ""  # a marker may still be the link's destination
        assert stream.feed(".com](") == ""
        assert stream.feed("https://www") == " ([axios.com](https://www"  # it is not
        assert stream.feed(".axios.com/am)) and") == ".axios.com/am)) and"
        assert stream.feed(" [a] b") == " [a] b"  # brackets that are no link
        assert stream.close() == ""
    text = "Leaders met " + link + " and [a] b"
    assert clean(text) == text


def test_a_link_decided_before_a_marker_goes_out_with_it(implementation: str) -> None:
    text = "See ([a.com](https://a.com)) and " + MARKER + " then [b"
    stream = CleanStream(implementation=implementation)  # type: ignore[arg-type]
    assert stream.feed(text) == "See ([a.com](https://a.com)) and then"  # a `[` after waits
    assert stream.close() == " [b"
    assert clean(text) == "See ([a.com](https://a.com)) and then [b"


@pytest.mark.parametrize("mapped", [False, True])
def test_a_widgets_stream_reads_past_the_markers_it_does_not_render(
    implementation: str, mapped: bool
) -> None:
    """A widgets renderer's text may hold brackets: they are read where its marker stands, so
    a link around it goes out once decided; a marker of a family it does not render cleans as
    without widgets, and the links around and after it go out as they are decided."""
    widgets = {"link_title": widget}
    cases = [
        ("See [b](https://b.com) " + MARKER + " then [c](https://c.com) and", " more"),
        ("See [b " + MARKER + "](https://b.com) then [c](https://c.com) and", " more"),
    ]
    for feeds in cases:
        stream = CleanStream(widgets=widgets, mapped=mapped, implementation=implementation)  # type: ignore[arg-type]
        first = stream.feed(feeds[0])
        assert first == "See [b](https://b.com) then [c](https://c.com) and"
        assert first + stream.feed(feeds[1]) + stream.close() == clean(
            "".join(feeds), widgets=widgets
        )
    rendered = "See [b " + TITLED + "](https://b.com) then [c](https://c.com) and"
    stream = CleanStream(widgets=widgets, mapped=mapped, implementation=implementation)  # type: ignore[arg-type]
    assert stream.feed(rendered) == "See [b [w]](https://b.com) then [c](https://c.com) and"
    assert stream.feed("\n") == "\n"
    assert stream.close() == ""


@pytest.mark.parametrize("mapped", [False, True])
@pytest.mark.parametrize(
    ("shown", "raw"),
    [
        ("[X", "X](\ue205) more"),  # the widget opens a link a stray is the destination of
        ("[1]", "(\ue206) more"),  # a footnote widget, then a bracket a stray empties
        ("[1]", "(" + S + "navlist" + D + "Sources" + D + "turn0search2" + E + ") more"),
    ],
)
def test_a_widget_that_opens_a_link_waits_for_its_destination(
    implementation: str, mapped: bool, shown: str, raw: str
) -> None:
    """The `[` a widget shows can be a link's: its text waits like a `[` of the answer's own,
    and the stream gives the whole text's result whatever the deltas."""
    widgets = {"cite": lambda marker: shown}
    text = "Claim " + MARKER + raw
    whole = clean(text, widgets=widgets, implementation=implementation)  # type: ignore[arg-type]
    for size in (1, 2, 5, len(text)):
        stream = CleanStream(widgets=widgets, mapped=mapped, implementation=implementation)  # type: ignore[arg-type]
        out = "".join(stream.feed(text[at : at + size]) for at in range(0, len(text), size))
        assert out + stream.close() == whole


def test_a_marker_after_a_link_decides_nothing_with_widgets(implementation: str) -> None:
    """What a marker shows after a link's `]` is no plain character the release reaches (it
    may stop before the marker): the link still waits for its destination's marker."""
    widgets = {"link_title": lambda marker: "X  "}
    text = "[a](" + S + E + ")" + S + "l " + E
    for mapped in (False, True):
        stream = CleanStream(widgets=widgets, mapped=mapped, implementation=implementation)  # type: ignore[arg-type]
        assert stream.feed(text) + stream.close() == clean(text, widgets=widgets) == "al"


def test_a_link_whose_destination_is_a_marker_waits_for_it(implementation: str) -> None:
    stream = CleanStream(implementation=implementation)  # type: ignore[arg-type]
    assert stream.feed("See [the [official] guide](") == "See"
    assert stream.feed(MARKER) == ""
    assert stream.feed(")") == ""  # what follows may still be blanks, brackets or markers
    # The marker is read past: a plain character after it decides the link (unwrapped).
    assert stream.feed(" now") == " the [official] guide now"
    assert stream.feed(" and more\n") == " and more\n"
    assert stream.close() == ""
    assert clean("See [the [official] guide](" + MARKER + ") now") == "See the [official] guide now"


def test_a_plain_character_inside_a_later_bracket_decides_no_link(implementation: str) -> None:
    # `b` is not released with the text before it (the `[[` before it waits), so it cannot
    # decide `[a]`: the marker that unwraps `[a]` goes out with it, not after it.
    text = ")[a](" + MARKER + "))[[b]"
    for cut in range(len(text) + 1):
        stream = CleanStream(implementation=implementation)  # type: ignore[arg-type]
        assert stream.feed(text[:cut]) + stream.feed(text[cut:]) + stream.close() == ")a)[[b]"
    assert clean(text) == ")a)[[b]"


def test_a_marker_body_with_brackets_holds_the_link_to_the_line_end(implementation: str) -> None:
    entity = '\ue200entity\ue202["company","ITC Limited","conglomerate"]\ue201'
    stream = CleanStream(implementation=implementation)  # type: ignore[arg-type]
    assert stream.feed("See [the report](") == "See"
    assert stream.feed(entity + ") by it") == ""  # a body's brackets are not read
    assert stream.feed("\n") == clean("See [the report](" + entity + ") by it\n")[3:]
    assert stream.close() == ""


@settings(max_examples=100)
@given(texts, st.lists(st.integers(0, 300), max_size=10))
def test_snapshots(implementation: str, text: str, cuts: list[int]) -> None:
    stream = CleanStream(implementation=implementation)  # type: ignore[arg-type]
    points = sorted({c % (len(text) + 1) for c in cuts} | {len(text)})
    out = [stream.feed_snapshot(text[:point]) for point in points]
    assert "".join(out) + stream.close() == clean(text)


def test_prose_goes_out_as_it_comes(implementation: str) -> None:
    stream = CleanStream(implementation=implementation)  # type: ignore[arg-type]
    assert stream.feed("Kyoto was") == "Kyoto was"
    assert stream.feed(" the capital") == " the capital"
    assert stream.feed(" for years. ") == " for years."  # the blank: a marker may follow
    assert stream.feed(MARKER[:5]) == ""  # a START its STOP may close
    assert stream.feed(MARKER[5:]) == ""  # the spacing rule needs what follows
    assert stream.feed(" Then") == " Then"
    assert stream.feed(" (") == ""  # a bracket a marker may empty
    assert stream.feed(MARKER + ") it") == " it"
    assert stream.feed(" saw " + D + "turn0") == " saw"  # ids that may go on
    assert stream.feed("search1 ok") == " ok"
    assert stream.close() == ""
    text = "Kyoto was the capital for years. " + MARKER + " Then (" + MARKER + ") it saw "
    assert clean(text + D + "turn0search1 ok") == "Kyoto was the capital for years. Then it saw ok"


@pytest.mark.parametrize("blank", [" ", "\u00a0", "\u202f", "\uff08", " \u202f "])
@pytest.mark.parametrize("after", ["next words", "n", "\u201cquoted\u201d", "\U0001f600 ok"])
def test_a_held_blank_goes_out_before_the_next_delta(
    implementation: str, blank: str, after: str
) -> None:
    """The blanks that end a delta (of every width) go out at the start of the next, which is
    one string made of the two, as narrow as its widest character (str equality compares
    the widths too)."""
    stream = CleanStream(implementation=implementation)  # type: ignore[arg-type]
    assert stream.feed("Prose" + blank) == "Prose"
    assert stream.feed(after + " ") == blank + after
    assert stream.close() == " "
    assert "Prose" + blank + after + " " == clean("Prose" + blank + after + " ")


def test_lines_that_may_be_code_wait(implementation: str) -> None:
    for start in ("    ", "\t", "```", "~~~", "> ```", "- `"):
        stream = CleanStream(implementation=implementation)  # type: ignore[arg-type]
        assert stream.feed(start + "x " + MARKER + " y") == ""
        text = start + "x " + MARKER + " y\nz"
        assert stream.feed("\nz") + stream.close() == clean(text)[: len(clean(text)) - 1] + "z"


def test_a_fence_keeps_the_front_off_until_it_closes(implementation: str) -> None:
    stream = CleanStream(implementation=implementation)  # type: ignore[arg-type]
    out = stream.feed("```\n")
    assert stream.feed("code " + MARKER) == ""  # inside the fence
    out += stream.feed("\n```\n")
    out += stream.feed("after")
    text = "```\ncode " + MARKER + "\n```\nafter"
    assert out + stream.close() == clean(text)


def test_held_stays_short_on_prose(implementation: str) -> None:
    text = ("word " * 40 + MARKER + ". ") * 20 + "\n\n- item one " + MARKER + "\n"
    stream = CleanStream(implementation=implementation)  # type: ignore[arg-type]
    out = []
    worst = 0
    for at in range(0, len(text), 16):
        out.append(stream.feed(text[at : at + 16]))
        worst = max(worst, len(stream.held))
    assert "".join(out) + stream.close() == clean(text)
    assert worst <= len(MARKER) + 16


def test_work_stays_linear(implementation: str) -> None:
    for text in (
        "x" + " " * 20000,  # a long run of blanks
        "x " + S + "cite" + D + "turn0search" + "1" * 5000,  # a growing marker
        "x " + D + "turn0search" + "1" * 20000,  # growing ids
        "a (" + "(" * 20000,
        "a " + "[" * 20000,  # links that never close
        "a " + "[b]" * 7000,  # brackets, each pair decided by the next
    ):
        stream = CleanStream(implementation=implementation)  # type: ignore[arg-type]
        out = [stream.feed(char) for char in text]
        assert "".join(out) + stream.close() == clean(text)
        assert stream.work <= 8 * len(text) + 128 * 128  # a short tail is looked at each time


class Owner:
    """A stand-in stream: records what the front leaves to it."""

    def __init__(self) -> None:
        self.slow: list[object] = []

    def _slow(self, chunk: object) -> str:
        self.slow.append(chunk)
        return "<slow>"


def test_the_kernel_front_alone(implementation: str) -> None:
    import pytest

    from citemark._kernels.loader import load

    kernel = load("clean", implementation)  # type: ignore[arg-type]
    owner = Owner()
    pending: list[str] = []
    front = kernel.StreamFront(owner, pending)
    assert front.feed("off") == "<slow>"  # born off: the stream's first delta is its own
    front.on = True
    assert front.feed("prose, ") == "prose"  # the separator and blank wait
    assert front.tail == ", "
    assert front.feed("more") == ", more"
    assert front.feed("a `tick") == "<slow>"
    assert front.feed("line\n") == "<slow>"
    assert front.feed(b"x") == "<slow>"  # not a str: the stream raises
    assert front.feed("then " + S + "cite" + D + "turn0") == "then"
    assert (front.on, front.waiting, front.tail) == (False, True, " " + S + "cite" + D + "turn0")
    assert front.feed("search1") == ""
    assert front.parts == ["search1"]
    assert front.parts_length == 7
    assert front.feed(E + " x") == "<slow>"  # a STOP decides the START: the stream looks
    assert pending == ["prose, ", "more", "then " + S + "cite" + D + "turn0", "search1"]
    assert (front.skip, front.raw, front.context) == (15, 15, "n")
    assert front.work == sum(map(len, pending))
    with pytest.raises(TypeError):
        kernel.StreamFront(object(), [])
    with pytest.raises(TypeError):
        kernel.StreamFront(owner, None)


def test_a_front_owner_is_checked_by_its_class(implementation: str) -> None:
    """An owner's class must have `_slow` (a class checked once is remembered: a stream per
    answer pays a lookup); one that only its instance has is refused, every time."""
    import pytest

    from citemark._kernels.loader import load

    kernel = load("clean", implementation)  # type: ignore[arg-type]

    class Bare:
        pass

    bare = Bare()
    bare._slow = Owner()._slow  # type: ignore[attr-defined]
    for _ in range(2):
        with pytest.raises(TypeError, match="_slow"):
            kernel.StreamFront(bare, [])
    for pending in (["ab", "cde"], []):
        assert kernel.StreamFront(Owner(), pending).pending_length == len("".join(pending))


# -- the compiled front's own lines (a plain stream: it ends lines and decides markers) ------

# Lines a plain stream's compiled front ends itself, and the ones it leaves to the stream.
own_pieces = st.sampled_from(
    [
        "\x00",  # (a character like any other: the compiled front took it for "none")
        "~~",  # (an emphasis a removal may empty: the front never ends a piece on one)
        "$",
        "\u4e2d",
        '"',
        "**",
        "'",
        "a",
        "\u3002",
        MARKER,
        TITLED,
        ENTITY,
        S,
        E,
        D,
        "\ue206",
        "cite",
        "turn0search0",
        " ",
        ".",
        ", ",
        "(",
        ")",
        "[",
        "](",
        "~",
        "`",
        "\n",
        "\n\n",
        "\r\n",
        "    ",
        "\t",
        "- ",
        "1. ",
        "> ",
        "```\n",
        "Paris",
        "word word",
        "\u2014",
        "\U0001f600",
        " " * 150,  # a tail past SHORT_HOLD: looked at again only once it has doubled
        "turn0search" * 15,
    ]
)
own_texts = st.lists(own_pieces, max_size=40).map("".join)


def deltas_of(text: str, cuts: list[int]) -> list[str]:
    return split(text, cuts) if cuts else [text[at : at + 3] for at in range(0, len(text), 3)]


def feeds(chunks: list[str], implementation: str) -> tuple[list[str], list[int]]:
    """What each feed and the close released, and `released` after each."""
    stream = CleanStream(implementation=implementation)  # type: ignore[arg-type]
    out = []
    released = []
    for chunk in chunks:
        out.append(stream.feed(chunk))
        released.append(stream.released)
    out.append(stream.close())
    released.append(stream.released)
    assert released[-1] == sum(map(len, chunks))  # closed, all of it is released
    return out, released


@settings(max_examples=300)
@given(own_texts, st.lists(st.integers(0, 400), max_size=20))
def test_own_lines_clean_as_the_whole(implementation: str, text: str, cuts: list[int]) -> None:
    out, _ = feeds(deltas_of(text, cuts), implementation)
    assert "".join(out) == clean(text)


@pytest.mark.c_extension
@settings(max_examples=300)
@given(own_texts, st.lists(st.integers(0, 400), max_size=20))
def test_the_compiled_front_releases_what_the_twin_releases(text: str, cuts: list[int]) -> None:
    """Delta by delta, not only in the end: the kernel's own lines are a fast path of the
    stream's logic, so they release the same text at the same delta."""
    chunks = deltas_of(text, cuts)
    assert feeds(chunks, "cython") == feeds(chunks, "python")


def test_the_scanner_catches_up_before_code(implementation: str) -> None:
    """Lines the front ended itself reach the scanner before the stream looks at a line that
    may be code: a list item's indented code after many prose lines is still code."""
    prose = "".join(f"- item {n} {MARKER} done.\n" for n in range(50))
    text = prose + "\n      code " + MARKER + "\n\nafter " + MARKER + "\n"
    for size in (1, 7, 64):
        out, _ = feeds([text[at : at + size] for at in range(0, len(text), size)], implementation)
        assert "".join(out) == clean(text)
        assert MARKER in "".join(out)  # the marker in code stays


def test_what_waits_for_the_scanner_is_bounded(implementation: str) -> None:
    from citemark._core.shapes import SCAN_BEHIND

    stream = CleanStream(implementation=implementation)  # type: ignore[arg-type]
    line = "A line of prose " + MARKER + " that ends.\n"
    fed = 0
    while fed < 3 * SCAN_BEHIND:
        stream.feed(line)
        fed += len(line)
        assert stream._f.line_from <= SCAN_BEHIND + len(line)
        assert stream.released == fed
    assert stream.close() == ""


def test_a_tilde_leaves_the_line_end_to_the_stream(implementation: str) -> None:
    """A `~` may open a fence only at a line's start, but the stream's rule looks at the
    whole line: the front leaves such a line's end to it, and the text is the same."""
    text = "about ~5 km " + MARKER + "\n~~~\ncode " + MARKER + "\n~~~\nend " + MARKER
    for size in (1, 2, 5, 64):
        out, _ = feeds([text[at : at + size] for at in range(0, len(text), size)], implementation)
        assert "".join(out) == clean(text)


def test_feed_and_snapshots_do_not_mix(implementation: str) -> None:
    stream = CleanStream(implementation=implementation)  # type: ignore[arg-type]
    assert stream.feed("Paris is ") == "Paris is"
    with pytest.raises(ValueError, match="after feed"):
        stream.feed_snapshot("Paris is big")
    stream = CleanStream(implementation=implementation)  # type: ignore[arg-type]
    assert stream.feed("") == ""  # no text given: snapshots may still follow
    assert stream.feed_snapshot("Paris is ") == "Paris is"
    assert stream.close() == " "
    stream = CleanStream(implementation=implementation)  # type: ignore[arg-type]
    assert stream.feed_snapshot("Paris is ") == "Paris is"
    with pytest.raises(ValueError, match="after feed_snapshot"):
        stream.feed("big")


def test_the_front_context_is_one_character(implementation: str) -> None:
    from citemark._kernels.loader import load

    front = load("clean", implementation).StreamFront(Owner(), [])  # type: ignore[arg-type]
    assert front.context == ""
    front.context = "x"
    assert front.context == "x"
    front.context = ""
    assert front.context == ""


def test_a_long_run_with_nothing_to_release_is_not_rebuilt(implementation: str) -> None:
    """Blanks and brackets with no word after them: the front keeps a long run as parts for
    the stream's doubling rule instead of growing its tail one delta at a time (which copied
    the run on every delta: quadratic)."""
    from citemark._core.shapes import SHORT_HOLD

    stream = CleanStream(implementation=implementation)  # type: ignore[arg-type]
    front = stream._f
    assert stream.feed("Start") == "Start"
    for _ in range(5_000):
        assert stream.feed("( , ") == ""
        assert len(front.tail) <= max(SHORT_HOLD, front.looked)
    # (the word may wait for the doubling rule's next look, here the close)
    assert stream.feed("x") + stream.close() == "( , " * 5_000 + "x"
