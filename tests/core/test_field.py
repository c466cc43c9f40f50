"""Realistic inputs, shaped after what public bug reports show (split streams, abandoned
STARTs, markers in code, odd ids), extracted and stripped, against the oracle and against
hand-written results."""

from __future__ import annotations

import pytest

import oracle
from oracle import DELIM as D
from oracle import START as S
from oracle import STOP as E
from oracle import summary

SPLIT_STREAM = [
    "Answer content \ue200cit",
    "e\ue202turn0search5\ue202turn0search15\ue201 continues here.",
]

# (text, families, extracted summary, stripped text)
FIELD = {
    "split-stream-joined": (
        "".join(SPLIT_STREAM),
        ("cite",),
        [("cite", ["turn0search5", "turn0search15"], None, 15, 48)],
        "Answer content  continues here.",
    ),
    "split-stream-first-chunk": (SPLIT_STREAM[0], ("cite",), [], SPLIT_STREAM[0]),
    "split-stream-second-chunk": (SPLIT_STREAM[1], ("cite",), [], SPLIT_STREAM[1]),
    "abandoned-start": (
        "keep\ue200broken prose\ue200cite\ue202turn1search0\ue201after",
        ("cite",),
        [("cite", ["turn1search0"], None, 17, 36)],
        "keep\ue200broken proseafter",
    ),
    "two-views-at-the-end": (
        "The setting is supported. \ue200cite\ue202turn1view0\ue202turn1view1\ue201",
        ("cite",),
        [("cite", ["turn1view0", "turn1view1"], None, 26, 54)],
        "The setting is supported. ",
    ),
    "astral-before-marker": (
        "Evidence \U0001f600 \ue200cite\ue202turn0search0\ue202turn0search1\ue201.",
        ("cite",),
        [("cite", ["turn0search0", "turn0search1"], None, 11, 43)],
        "Evidence \U0001f600 .",
    ),
    "inside-a-code-fence": (
        "```text\n\ue200cite\ue202turn0search0\ue201\n```\n",
        ("cite",),
        [("cite", ["turn0search0"], None, 8, 27)],
        "```text\n\n```\n",
    ),
    "supported-prose-and-anchor": (
        "\u200b\ue203Puerto Vallarta offers condo rentals.\ue204 "
        "\ue200cite\ue202turn0search2\ue201\ue206",
        ("cite",),
        [("cite", ["turn0search2"], None, 41, 60)],
        "\u200b\ue203Puerto Vallarta offers condo rentals.\ue204 \ue206",
    ),
    "filecite-with-locator": (
        "See \ue200filecite\ue202turn0file0\ue202L8-L13\ue201.",
        ("filecite",),
        [("filecite", ["turn0file0"], "L8-L13", 4, 32)],
        "See .",
    ),
    "filecite-not-asked-for": (
        "See \ue200filecite\ue202turn0file0\ue202L8-L13\ue201.",
        ("cite",),
        [],
        "See \ue200filecite\ue202turn0file0\ue202L8-L13\ue201.",
    ),
    "navlist-title-is-not-an-id": (
        "\ue200navlist\ue202Recent news\ue202turn0news1\ue202turn0news2\ue201",
        ("cite", "navlist"),
        [],
        "\ue200navlist\ue202Recent news\ue202turn0news1\ue202turn0news2\ue201",
    ),
    "entity-json-is-not-an-id": (
        'ITC \ue200entity\ue202["company","ITC Limited","Indian conglomerate"]\ue201 grew',
        ("cite", "entity"),
        [],
        'ITC \ue200entity\ue202["company","ITC Limited","Indian conglomerate"]\ue201 grew',
    ),
    "image-ids": (
        "\ue200i\ue202turn0image0\ue202turn0image3\ue201Photos",
        ("i", "cite"),
        [("i", ["turn0image0", "turn0image3"], None, 0, 27)],
        "Photos",
    ),
    "raw-url-in-cite": (
        "Source \ue200cite\ue202https://example.com/report\ue201",
        ("cite",),
        [],
        "Source \ue200cite\ue202https://example.com/report\ue201",
    ),
    "multi-source-keeps-every-id": (
        "x\ue200cite\ue202turn0search0\ue202turn0search4\ue202turn1news2\ue202turn2view3\ue201",
        ("cite",),
        [("cite", ["turn0search0", "turn0search4", "turn1news2", "turn2view3"], None, 1, 55)],
        "x",
    ),
    "six-digit-turns-and-block": (
        "\ue200cite\ue202turn123456search7\ue202block5\ue201",
        ("cite",),
        [("cite", ["turn123456search7", "block5"], None, 0, 31)],
        "",
    ),
    "private-use-lost-in-copy-paste": (
        "citeturn0search0turn0search4 is what users see",
        ("cite",),
        [],
        "citeturn0search0turn0search4 is what users see",
    ),
    "delimiter-written-out": (
        "\ue200cite\\ue202turn0search0\ue201",
        ("cite",),
        [],
        "\ue200cite\\ue202turn0search0\ue201",
    ),
    "families-of-one-answer": (
        "A\ue200cite\ue202turn0search0\ue201 B\ue200navlist\ue202turn0news1\ue201"
        " C\ue200url\ue202turn0search3\ue201",
        ("cite", "navlist", "url"),
        [
            ("cite", ["turn0search0"], None, 1, 20),
            ("navlist", ["turn0news1"], None, 22, 42),
            ("url", ["turn0search3"], None, 44, 62),
        ],
        "A B C",
    ),
}


@pytest.mark.parametrize(("text", "families", "expected", "_"), FIELD.values(), ids=FIELD)
def test_field_extract(api, text, families, expected, _) -> None:
    got = api.extract_citations(text, families=families)
    assert got == oracle.extract_citations(text, families=families)
    assert summary(got) == expected


@pytest.mark.parametrize(("text", "families", "_", "stripped"), FIELD.values(), ids=FIELD)
def test_field_strip(api, text, families, _, stripped) -> None:
    expected = oracle.strip_citations(text, oracle.extract_citations(text, families=families))
    assert expected == stripped
    assert api.strip_citations(text, api.extract_citations(text, families=families)) == stripped
    assert api.strip_many([text], families=families) == [stripped]


def test_field_batch(api) -> None:
    texts = [text for text, families, _, _ in FIELD.values() if families == ("cite",)]
    assert api.strip_many(texts) == [
        oracle.strip_citations(t, oracle.extract_citations(t)) for t in texts
    ]
    assert api.extract_many(texts) == [oracle.extract_citations(t) for t in texts]


def test_supported_prose_brackets_are_not_starts(api) -> None:
    # A parser that took U+E203 for a start deleted the cited sentence.
    text = "\ue203The sentence stays.\ue204" + S + "cite" + D + "turn0search0" + E
    assert api.strip_many([text]) == ["\ue203The sentence stays.\ue204"]
