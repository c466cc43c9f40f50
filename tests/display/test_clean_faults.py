"""`citemark.clean` on the shapes an outside check of real answers found it getting wrong:
marks out of the clean text, brackets and separators left empty, link destinations in
`render`, titles, unfinished markers, private-use characters, degraded forms; on both
implementations (the `implementation` fixture)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citemark.display import clean, clean_mapped, clean_position, clean_with_marks
from citemark.offsets import OFFSET_UNITS

S, E, D = "\ue200", "\ue201", "\ue202"
SUP, END, ANCHOR = "\ue203", "\ue204", "\ue206"


def cite(*ids: str, family: str = "cite") -> str:
    return S + family + "".join(D + i for i in ids) + E


M = cite("turn0search0")


def _clean(text: str, implementation: str, **options: Any) -> str:
    return clean(text, implementation=implementation, **options)  # type: ignore[arg-type]


# --- marks lie inside the clean text, in order, in every unit -------------------------------


def _length(text: str, unit: str) -> int:
    if unit == "utf16":
        return len(text.encode("utf-16-le")) // 2
    if unit == "utf8":
        return len(text.encode("utf-8"))
    return len(text)


@pytest.mark.parametrize("unit", OFFSET_UNITS)
@pytest.mark.parametrize("text", [f" {M} {M}", f"  {M}  {M}\n", f"\t{M} ({M})", f"x ({M}, {M})"])
def test_marks_inside_the_clean_text(text: str, unit: str, implementation: str) -> None:
    done = clean_with_marks(text, offsets=unit, implementation=implementation)  # type: ignore[arg-type]
    assert done.text == _clean(text, implementation)
    places = [(mark.start, mark.end) for mark in done.marks]
    assert places == sorted(places)
    assert all(0 <= start <= end <= _length(done.text, unit) for start, end in places)


@pytest.mark.parametrize(
    ("text", "shown", "places"),
    [
        (f"[a {M} b]({M})", "a b", [1, 3]),  # the link's "[" goes: marks in its text move back
        (f"x [a{M}b]({M}) y", "x ab y", [3, 4]),
        (f"[[a{M}]({M})]({M})", "a", [1, 1, 1]),
        (f" {M} {M}", "", [0, 0]),
        (f"a ({M}, {M}) b", "a b", [1, 1]),
    ],
)
def test_mark_places(text: str, shown: str, places: list[int], implementation: str) -> None:
    done = clean_with_marks(text, implementation=implementation)  # type: ignore[arg-type]
    assert done.text == shown
    assert [mark.start for mark in done.marks] == places


MARK_ATOMS = [
    M,
    cite("turn1news2"),
    " ",
    "  ",
    "\t",
    "\n",
    "(",
    ")",
    ",",
    "a",
    "\U0001f600",
    "[",
    "](",
    "\u3001",
    "\uff08",
    "\uff09",
    S,
    D,
]


@given(
    text=st.lists(st.sampled_from(MARK_ATOMS), max_size=30).map("".join),
    unit=st.sampled_from(OFFSET_UNITS),
)
def test_marks_property(text: str, unit: str, implementation: str) -> None:
    done = clean_with_marks(text, offsets=unit, implementation=implementation)  # type: ignore[arg-type]
    starts = [mark.start for mark in done.marks]
    assert starts == sorted(starts)
    assert all(0 <= mark.start <= mark.end <= _length(done.text, unit) for mark in done.marks)


WIDGET_TEXTS = ["X", "X ", " ", "(X) ", "[", "[X", "<[x>", "X\u3000", ""]


@given(
    text=st.lists(st.sampled_from([*MARK_ATOMS, SUP, END]), max_size=30).map("".join),
    shown=st.sampled_from(WIDGET_TEXTS),
)
def test_a_widget_mark_covers_what_is_left_of_its_text(
    text: str, shown: str, implementation: str
) -> None:
    """The spacing rule may take a widget's last characters (its blank before a line end, a
    bracket a later marker emptied) or a `[` of it (the link a removed marker was the
    destination of): its mark and its cut then cover what is left of its text, not the
    characters that follow it."""
    widgets = {"cite": lambda marker: shown}
    done = clean_with_marks(text, widgets=widgets, implementation=implementation)  # type: ignore[arg-type]
    mapped = clean_mapped(text, widgets=widgets, implementation=implementation)  # type: ignore[arg-type]
    assert mapped.marks == done.marks
    for mark in done.marks:
        left = done.text[mark.start : mark.end]
        assert shown.replace("[", "").startswith(left.replace("[", ""))
    r = c = 0
    for cut in mapped.cuts:  # outside the cuts the two texts agree
        assert text[r : cut.start] == mapped.text[c : cut.clean_start]
        r, c = cut.end, cut.clean_end
    assert text[r:] == mapped.text[c:]


def test_a_widget_bracket_taken_with_its_link() -> None:
    widgets = {"cite": lambda marker: "[X"}
    mapped = clean_mapped(M + "y](" + SUP + ")", widgets=widgets)
    assert mapped.text == "Xy"
    assert [(mark.start, mark.end) for mark in mapped.marks] == [(0, 1)]
    assert clean_position(mapped.cuts, len(M)) == 1  # the "y" after the widget


def test_a_widget_blank_taken_before_a_line_end() -> None:
    widgets = {"cite": lambda marker: "X "}
    text = "a" + M + SUP + "\nb"  # the stray after the widget decides the spacing
    mapped = clean_mapped(text, widgets=widgets)
    assert mapped.text == "aX\nb"
    assert [(mark.start, mark.end) for mark in mapped.marks] == [(1, 2)]
    assert mapped.text[mapped.marks[0].start : mapped.marks[0].end] == "X"


# --- brackets and separators that held only markers go --------------------------------------

BRACKETS = {
    "one": (f"The article ({M}) says", "The article says"),
    "two": (f"The article ({M}, {M}) says", "The article says"),
    "three-semicolons": (f"Facts ({M}; {M}; {M}).", "Facts."),
    "square": (f"Facts [{M}] here", "Facts here"),
    "nested": (f"Facts (({M})) here", "Facts here"),
    "full-width": (
        f"\u4eac\u90fd\u306f\u53e4\u3044\uff08{M}\u3001{M}\uff09\u3002",
        "\u4eac\u90fd\u306f\u53e4\u3044\u3002",
    ),
    "lenticular": (f"\u4eac\u90fd\u3010{M}\u3011\u3002", "\u4eac\u90fd\u3002"),
    "words-stay": (f"Facts (see {M}) here", "Facts (see) here"),
    "separator-after-word": (f"Paris, {M}, then Rome", "Paris, then Rome"),
    "separator-before-closer": (f"(a, {M}) b", "(a) b"),
    "separator-at-line-end": (f"red, {M}\nblue", "red\nblue"),
    "separator-at-line-start": (f"{M}, {M} ok", "ok"),
    "separator-after-opener": (f"({M}, a)", "(a)"),
    "link-text-stays": (f"[{M}](https://x.example)", "[](https://x.example)"),
    "prose-brackets-stay": ("f() and (,) stay", "f() and (,) stay"),
    "line-break-inside": (f"(\n{M})", "(\n)"),
}


@pytest.mark.parametrize(("text", "expected"), list(BRACKETS.values()), ids=list(BRACKETS))
def test_emptied_brackets_and_separators_go(text: str, expected: str, implementation: str) -> None:
    assert _clean(text, implementation) == expected


# --- render: a marker that is a link's destination gives the link the source's URL ---------

SOURCES = {
    "turn0search0": {"url": "https://a.example/guide", "title": "Guide"},
    "turn0search1": "https://b.example/(b)",
    "turn0search2": {"url": "javascript:alert(1)"},
}


@pytest.fixture
def active(implementation: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """`implementation` made the active one, for the APIs that take no implementation."""
    from citemark._kernels import loader

    monkeypatch.setattr(loader, "IMPLEMENTATION", implementation)
    return implementation


@pytest.mark.parametrize("style", ["markdown", "plain", "html", "footnotes"])
def test_render_link_destination(style: str, active: str) -> None:
    from citemark import Parser
    from citemark.render import numbering, render

    text = f"See [the guide]({M}). Also {cite('turn0search1')}."
    body = render(text, SOURCES, style=style)  # type: ignore[arg-type]
    assert body.startswith("See [the guide](https://a.example/guide). Also ")
    assert render(text, SOURCES, style=style, parser=Parser(implementation=active)) == body  # type: ignore[arg-type]
    # The destination has no number: the link shows where it goes.
    assert numbering(text, sources=SOURCES) == {"turn0search1": 1}
    assert numbering(text, Parser(implementation=active), sources=SOURCES) == {"turn0search1": 1}
    # A URL with parentheses is escaped as Markdown needs; a source without a URL we link
    # to, or an unknown id, leaves the link text, as clean does.
    assert render(f"[b]({cite('turn0search1')})", SOURCES) == "[b](https://b.example/\\(b\\))"
    assert render(f"See [x]({cite('turn0search2')}).", SOURCES) == "See x."
    assert render(f"See [x]({cite('turn9search9')}).", SOURCES) == "See x."
    with pytest.raises(KeyError, match="turn9search9"):
        render(f"See [x]({cite('turn9search9')}).", SOURCES, unknown="raise")


# --- url/link_title titles show no marker character -----------------------------------------


@pytest.mark.parametrize("family", ["url", "link_title"])
def test_titles_hold_no_private_use_character(family: str, implementation: str) -> None:
    text = f"x {S}{family}{D}{SUP}The{ANCHOR} Docs{END}\uf8ff{D}turn0search0{E} y"
    assert _clean(text, implementation) == "x The Docs y"
    assert _clean(text, implementation, lenient=True) == "x The Docs y"


# --- a text or stream that ends inside a marker ---------------------------------------------

CUT = (
    "Kyoto is old. "
    + cite("turn17search3", "turn2news1")
    + " It has "
    + S
    + 'entity\ue202["city","Kyoto"]'
    + E
    + " temples "
    + cite("turn1file2", "L1-L12", family="filecite")
    + " and more."
)


def test_a_text_cut_inside_a_marker(implementation: str) -> None:
    """Every prefix of an answer (a cut stream, a truncated log): the unfinished marker goes,
    the prose before it stays, nothing of the marker shows, and the stream agrees."""
    from citemark.display import CleanStream

    whole = _clean(CUT, implementation)
    assert whole == "Kyoto is old. It has Kyoto temples and more."
    for k in range(len(CUT) + 1):
        prefix = CUT[:k]
        done = _clean(prefix, implementation)
        stream = CleanStream(implementation=implementation)  # type: ignore[arg-type]
        assert stream.feed(prefix) + stream.close() == done, k
        assert not any("\ue000" <= char <= "\uf8ff" for char in done), k
        for residue in ("turn", "L1", '"'):
            assert residue not in done, (k, done)
        assert whole.startswith(done.rstrip()) or done.startswith("Kyoto is old. It has Kyo"), (
            k,
            done,
        )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("done \ue200cite\ue202turn17sea", "done"),
        ("done \ue200cite\ue202turn17search3\ue202L1-", "done"),
        ("done \ue200cite\ue202turn17sea\nnext", "done\nnext"),
        ("done \ue200ci", "done"),
        ('in \ue200entity\ue202["city","Par', "in"),
        # what is not a body cut short keeps its prose, as before
        ("a \ue200cite\ue202turn0search0 for details", "a for details"),
        ("a\ue200b", "ab"),
        ("a \ue200cite\ue202turn0search0.", "a."),
    ],
)
def test_unfinished_marker(text: str, expected: str, implementation: str) -> None:
    assert _clean(text, implementation) == expected


# --- private-use characters that are not markers go too -------------------------------------

PRIVATE = {
    "apple-logo": ("Made on a Mac \uf8ff today.", "Made on a Mac today."),
    "icon": ("\ue316 Weather: sunny", "Weather: sunny"),
    "first-and-last": ("a\ue000b\uf8ffc", "abc"),
    "next-to-a-marker": (f"Fact \ue316{M}.", "Fact."),
    "in-code-stays": ("`\uf8ff` and \uf8ff", "`\uf8ff` and"),
    "in-an-entity-name": (f'in {S}entity{D}["city","Kyoto\ue316"]{E} now', "in Kyoto now"),
    "neighbours-stay": ("\ud7ff\uf900\uff0c\ufeff\U000f0000", "\ud7ff\uf900\uff0c\ufeff\U000f0000"),
}


@pytest.mark.parametrize(("text", "expected"), list(PRIVATE.values()), ids=list(PRIVATE))
def test_private_use_characters_go(text: str, expected: str, implementation: str) -> None:
    from citemark.display import CleanStream, clean_many

    assert _clean(text, implementation) == expected
    assert clean_many([text], implementation=implementation) == [expected]  # type: ignore[arg-type]
    stream = CleanStream(implementation=implementation)  # type: ignore[arg-type]
    assert "".join(stream.feed(char) for char in text) + stream.close() == expected


@pytest.mark.parametrize(("text", "expected"), list(PRIVATE.values()), ids=list(PRIVATE))
def test_private_use_characters_go_in_jsonl(text: str, expected: str, implementation: str) -> None:
    """`citemark clean --field` on JSONL gives clean()'s text, raw or escaped."""
    import importlib
    import json

    from citemark.display import clean_many

    kernel = importlib.import_module(
        "citemark._kernels.jsonl_" + {"cython": "c", "python": "py"}[implementation]
    )
    for ensure_ascii in (False, True):
        data = json.dumps({"text": text}, ensure_ascii=ensure_ascii).encode() + b"\n"
        out = kernel.clean_lines(data, ("text",), clean_many, False)[0]
        assert json.loads(out)["text"] == expected


# --- lenient: degraded forms with blanks where the marker characters were, entities -------

F = "\ufffd"
DEGRADED = {
    "spaced-cite": ("See cite turn0search5 here.", "See here."),
    "spaced-start-and-stop": ("See  cite turn0search5 .", "See."),
    "spaced-two-ids": ("See  cite turn0search5 turn0search6  now", "See now"),
    "spaced-filecite-locator": ("Done  filecite turn1file2 L1-L12 \nnext", "Done\nnext"),
    "spaced-no-break-space": ("See\u00a0cite\u00a0turn0search5\u00a0.", "See."),
    "spaced-images": ("i turn0image0 turn0image1 Kyoto", "Kyoto"),
    "spaced-in-a-table": ("| a  cite turn0search5  | b |", "| a | b |"),
    "prose-cite-turn0": ("I cite turn0 of the paper", "I cite turn0 of the paper"),
    "prose-recite": (
        "they recite turn0search5 and recite turn",
        "they recite turn0search5 and recite turn",
    ),
    "prose-cite-word": ("cite turn0search5x stays", "cite turn0search5x stays"),
    "replaced-in-table": (
        f"| a {F}cite{F}turn0search0{F} | b |\n|---|---|\n"
        f"| c {F}cite{F}turn0search1{F}{F}turn0search2{F} | d |",
        "| a | b |\n|---|---|\n| c | d |",
    ),
    "replaced-twice": (
        f"| Kyoto {F}{F}cite{F}turn0search0{F}{F}turn0search1{F} | b |",
        "| Kyoto | b |",
    ),
    "replaced-filecite": (f"| a {F}filecite{F}turn1file2{F}L1-L12{F} | b |", "| a | b |"),
    "replaced-adjacent": (f"a {F}cite{F}turn0search0{F}{F}cite{F}turn0search1{F} b", "a b"),
    "replaced-no-family": (f"a {F}{F}turn0search0{F} b", "a b"),
    "replaced-one-is-no-marker": (f"a {F}turn0search0{F} b", f"a {F}turn0search0{F} b"),
    # (a run longer than a decoder makes of two characters: the marker takes its end, and
    # what is left goes as the line's other U+FFFD do, anchors that lost their characters)
    "replaced-long-run": (f"a{F * 20}turn0search0{F}b", "ab"),
    "entity-spaces": ('in entity["city", "Paris", "capital"] now', "in Paris now"),
    "entity-number": ('in entity["city","Paris",3] now', "in Paris now"),
    "entity-two": ('in entity["city","Paris"] now', "in Paris now"),
    "entity-escaped-quotes": (
        'by entity["person","Jane \\"JJ\\" Doe"] now',
        'by Jane "JJ" Doe now',
    ),
    "entity-scalars": ('in entity["a", "B", null, true, -1.5e3] now', "in B now"),
    "entity-replaced": (f'in {F}entity{F}["city", "Paris", 1]{F} now', "in Paris now"),
    "entity-second-not-a-string": ('in entity["city", 3] now', 'in entity["city", 3] now'),
    "entity-carriage-return": (
        'in entity["city","Pa\rris"] now',
        'in entity["city","Pa\rris"] now',
    ),
}


@pytest.mark.parametrize(("text", "expected"), list(DEGRADED.values()), ids=list(DEGRADED))
def test_lenient_degraded_forms(text: str, expected: str, implementation: str) -> None:
    from citemark.display import CleanStream

    assert _clean(text, implementation, lenient=True) == expected
    assert _clean(text, implementation) == text  # without lenient nothing is touched
    for size in (1, 3, len(text) or 1):
        stream = CleanStream(lenient=True, implementation=implementation)  # type: ignore[arg-type]
        chunks = [text[k : k + size] for k in range(0, len(text), size)]
        assert "".join(stream.feed(chunk) for chunk in chunks) + stream.close() == expected


def test_lenient_replacement_characters_take_linear_time(implementation: str) -> None:
    """A binary file read with errors="replace" is runs of U+FFFD, which lenient cleaning
    reads as lost marker characters: each run is read once (it was read as two runs split at
    every place, from every place, in cubic time; benches/bench_hostile.py times it)."""
    text = F * 200_000 + "\n" + f" x{F}{F}cite{F}turn0search0{F}" * 20_000
    assert _clean(text, implementation, lenient=True) == F * 200_000 + "\n" + " x" * 20_000


# --- cumulative snapshots --------------------------------------------------------------------


@pytest.mark.parametrize("lenient", [False, True])
def test_snapshots_give_what_deltas_give(lenient: bool, implementation: str) -> None:
    from citemark.display import CleanStream

    text = CUT + "\n`" + M + "` and (" + M + ") end\n" + "done \ue200cite\ue202turn17sea"
    for size in (1, 2, 7, 50):
        stream = CleanStream(lenient=lenient, implementation=implementation)  # type: ignore[arg-type]
        shown = [stream.feed_snapshot(text[:end]) for end in range(0, len(text) + size, size)]
        assert "".join(shown) + stream.close() == _clean(text, implementation, lenient=lenient)


def test_snapshots_must_extend_the_previous_one(implementation: str) -> None:
    from citemark.display import CleanStream

    stream = CleanStream(implementation=implementation)  # type: ignore[arg-type]
    stream.feed_snapshot("Kyoto is ")
    stream.feed_snapshot("Kyoto is ")  # the same again: nothing new
    with pytest.raises(ValueError, match="previous snapshot"):
        stream.feed_snapshot("Kyoto was old")
    with pytest.raises(ValueError, match="feed_snapshot"):
        stream.feed("old")
    with pytest.raises(TypeError, match="text must be str"):
        stream.feed_snapshot(b"Kyoto")  # type: ignore[arg-type]
    deltas = CleanStream(implementation=implementation)  # type: ignore[arg-type]
    deltas.feed("Kyoto")
    with pytest.raises(ValueError, match="deltas"):
        deltas.feed_snapshot("Kyoto is")


# --- Parser.sub(sanitize=True) leaves no marker of another family ------------------------------


def test_sanitize_removes_whole_markers_of_other_families(parser: Any) -> None:
    text = (
        'Kyoto \ue200image_group\ue202{"query":["Kyoto temples"]}\ue201 is old '
        f"{M}. \ue200navlist\ue202News\ue202turn0news1\ue201 `\ue200i\ue202x\ue201`"
    )
    shown = parser.sub(text, lambda citation: "[1]", sanitize=True)
    assert shown == "Kyoto  is old [1].  ``"
    assert "image_group" not in shown
    assert parser.sub(text, lambda citation: "[1]") == text.replace(M, "[1]")


# --- bad input gets a TypeError/ValueError naming the argument -------------------------------


@pytest.mark.parametrize("texts", ["abc", b"abc"])
def test_clean_many_refuses_a_str(texts: Any, implementation: str) -> None:
    from citemark.display import clean_many

    with pytest.raises(TypeError, match="texts must be an iterable of str"):
        clean_many(texts, implementation=implementation)  # type: ignore[arg-type]
    assert clean_many(["abc"], implementation=implementation) == ["abc"]  # type: ignore[arg-type]


@pytest.mark.parametrize("option", ["source_id", "locator"])
def test_parser_refuses_a_broken_pattern(option: str, implementation: str) -> None:
    from citemark import Parser

    with pytest.raises(ValueError, match=f"{option} must be a valid regular expression"):
        Parser(implementation=implementation, **{option: "("})  # type: ignore[arg-type]
