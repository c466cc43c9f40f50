"""`CleanStream`: the output of every chunking is exactly `clean(whole)`."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citemark.display import CleanStream, clean
from strategies import closed_and_freed

S, E, D = "\ue200", "\ue201", "\ue202"
MARKER = S + "cite" + D + "turn0search5" + D + "turn0search15" + E

ANSWER = (
    "# Kyoto\n\n"
    "\ue203Kyoto was the capital for a thousand years.\ue204 " + MARKER + "\ue206\n"
    "It works with " + S + "entity" + D + '["software","Node.js","runtime"]' + E + ", too.\n\n"
    "```python\nprint('" + MARKER + "')\n```\n\n"
    "- item `" + MARKER + "` and " + MARKER + "\n\n"
    "      " + MARKER + "\n\n"
    "> quoted " + MARKER + ".\n"
    "See [the guide](" + MARKER + ").\r\n"
    "Broken " + S + "cite" + D + "turn0view0 and more " + MARKER + "\n"
    "Lenient citeturn0search0 and :contentReference[oaicite:1]{index=1} end 【4:0†a.pdf】.\n"
)


def run(chunks: list[str], **options: object) -> str:
    stream = CleanStream(**options)  # type: ignore[arg-type]
    return "".join(stream.feed(chunk) for chunk in chunks) + stream.close()


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    return [text[a:b] for a, b in itertools.pairwise(points)]


@pytest.mark.parametrize("lenient", [False, True])
def test_one_character_chunks(implementation: str, lenient: bool) -> None:
    expected = clean(ANSWER, lenient=lenient)
    assert run(list(ANSWER), lenient=lenient, implementation=implementation) == expected


def test_marker_split_over_three_chunks(implementation: str) -> None:
    text = "Answer content " + MARKER + " continues here."
    chunks = [text[:17], text[17:25], text[25:]]  # START+"ci" | "te"+DELIM+... | rest
    assert (
        run(chunks, implementation=implementation)
        == clean(text)
        == ("Answer content continues here.")
    )


def test_fence_split_across_chunks(implementation: str) -> None:
    text = "Code:\n\n``" + "`text\n" + MARKER + "\n`" + "``\nafter " + MARKER + "."
    chunks = ["Code:\n\n``", "`text\n", MARKER[:3], MARKER[3:] + "\n`", "``\nafter ", MARKER, "."]
    assert "".join(chunks) == text
    assert run(chunks, implementation=implementation) == clean(text)
    assert MARKER in clean(text)


def test_inline_code_waits_for_its_closer(implementation: str) -> None:
    stream = CleanStream(implementation=implementation)  # type: ignore[arg-type]
    released = stream.feed("a `" + MARKER + "\nstill the paragraph\n")
    assert released == ""  # a backtick later in the paragraph could close the span
    released += stream.feed("closed` " + MARKER + "\n\nnext")
    # "next" goes out before its line ends: nothing in it can change.
    assert released == "a `" + MARKER + "\nstill the paragraph\nclosed`\n\nnext"
    assert released + stream.close() == clean(
        "a `" + MARKER + "\nstill the paragraph\nclosed` " + MARKER + "\n\nnext"
    )


def test_prose_lines_are_released_at_once() -> None:
    stream = CleanStream()
    assert stream.feed("First line " + MARKER + ".\nSecond") == "First line.\nSecond"
    assert stream.held == ""
    assert stream.feed(" line ") == " line"  # the blank waits: a marker may follow
    assert stream.held == " "
    assert stream.close() == " "


def test_feed_after_close_and_types() -> None:
    stream = CleanStream()
    stream.close()
    assert stream.close() == ""
    with pytest.raises(ValueError, match="after close"):
        stream.feed("x")
    with pytest.raises(TypeError, match="chunk must be str"):
        CleanStream().feed(b"x")  # type: ignore[arg-type]


@pytest.mark.parametrize("mapped", [False, True])
def test_a_closed_stream_is_freed_without_the_collector(implementation, mapped) -> None:
    # The front holds the stream (its feed is the stream's); close() ends that cycle, so a
    # server's finished streams go with their last reference, not at the next collection.
    def make() -> CleanStream:
        return CleanStream(mapped=mapped, implementation=implementation)

    assert closed_and_freed(make, "Seen " + MARKER + ".\nNext") == "Seen.\nNext"


fragments = st.lists(
    st.sampled_from(
        [
            S,
            E,
            D,
            "\ue203",
            "\ue204",
            "\ue206",
            "cite",
            "entity",
            '["k","Name"]',
            "turn0search0",
            " ",
            ".",
            "\n",
            "\n\n",
            "\r",
            "`",
            "```",
            "    ",
            "- ",
            "> ",
            "[a](",
            ")",
            "word",
            "citeturn0news1",
            "\\ue200",
            "\ufffd",
            "\u4e2d",
            "\u3002",
            "\ud55c",
            '"',
            "**",
            "'",
        ]
    ),
    max_size=40,
).map("".join)


@given(fragments, st.lists(st.integers(0, 200), max_size=12), st.booleans(), st.booleans())
def test_every_chunking(
    implementation: str, text: str, cuts: list[int], lenient: bool, skip_code: bool
) -> None:
    got = run(
        split(text, cuts), lenient=lenient, skip_code=skip_code, implementation=implementation
    )
    assert got == clean(text, lenient=lenient, skip_code=skip_code)


@given(fragments)
def test_single_characters(text: str) -> None:
    assert run(list(text)) == clean(text)


@pytest.mark.parametrize(
    "text",
    [
        (S + "cite" + D) * 2000,  # abandoned STARTs
        "citeturn" * 3000,  # a long run of would-be degraded markers
        "`" * 5000 + MARKER,  # thousands of backticks
        ("word " + MARKER + " ") * 500 + "\n",
        "x" * 20000,  # one long line
        "a `x\n" + "a line of the same paragraph\n" * 2000,  # held until the paragraph ends
        "```\n" + ("code " + MARKER + "\n") * 2000,  # a long fence, released line by line
    ],
)
def test_work_is_linear(text: str) -> None:
    """Counting, not timing: the characters the stream looks at stay within a constant
    factor of the input, whatever the chunk size."""
    for size in (1, 7, 4096):
        stream = CleanStream(lenient=True)
        for at in range(0, len(text), size):
            stream.feed(text[at : at + size])
        stream.close()
        assert stream.work <= 4 * len(text) + 10


def test_max_hold_bounds_a_paragraph_waiting_for_backticks() -> None:
    stream = CleanStream(max_hold=100)
    out = stream.feed("a `" + MARKER + " no closer yet\n")
    assert out == ""
    line = "more prose of the same paragraph\n"
    for _ in range(5):
        out += stream.feed(line)
    assert len(stream.held) <= 100 + len(line)
    assert out.startswith("a ` no closer yet\n")  # settled: the lone backtick is text
    out += stream.feed("late` " + MARKER + "\n") + stream.close()
    # Past the bound the late backtick no longer closes the span (the whole text has code).
    assert out.endswith("late`\n")
    whole = "a `" + MARKER + " no closer yet\n" + line * 5 + "late` " + MARKER + "\n"
    assert clean(whole).startswith("a `" + MARKER)


def test_max_hold_none_waits(implementation: str) -> None:
    stream = CleanStream(max_hold=None, implementation=implementation)  # type: ignore[arg-type]
    text = "a `x\n" + "line\n" * 300 + "y` " + MARKER + "\n"
    assert stream.feed(text[:-1]) == ""
    assert stream.feed("\n") + stream.close() == clean(text)
    with pytest.raises(TypeError, match="max_hold"):
        CleanStream(max_hold=0)


# Nested containers (issue 21): the stream's code scan is its implementation's StreamScanner.
nested = st.tuples(
    st.lists(st.sampled_from(["- ", "* ", "1. ", "> ", " ", "\t"]), min_size=1, max_size=4),
    st.integers(1, 40),
    st.lists(
        st.sampled_from(["x", "\n", "\n\n", "\n  ", "\ny `", MARKER, "`", "\n```", "\n    "]),
        max_size=12,
    ),
).map(lambda parts: "".join(parts[0]) * parts[1] + "".join(parts[2]))


@given(nested, st.lists(st.integers(0, 400), max_size=8))
def test_nested_containers_in_every_chunking(
    implementation: str, text: str, cuts: list[int]
) -> None:
    assert run(split(text, cuts), implementation=implementation) == clean(text)
