"""`render` and `numbering`: every style and unknown-id policy, through both implementations."""

from __future__ import annotations

import pytest

from citemark import Parser
from citemark.render import numbering, render

S, D, E = "\ue200", "\ue202", "\ue201"


def cite(*ids: str, family: str = "cite") -> str:
    return S + family + D + D.join(ids) + E


SOURCES = {
    "turn0search0": {"url": "https://a.example/", "title": "Alpha"},
    "turn0search1": {"url": "https://b.example/page", "title": "Beta"},
    "turn1view0": {"url": "http://c.example/"},
}

# One answer: a single source, a multi-source marker, a repeat, a source without title.
TEXT = (
    "First" + cite("turn0search1") + ". Both" + cite("turn0search0", "turn0search1") + ". "
    "Third" + cite("turn1view0") + "."
)


def test_markdown(parser: Parser) -> None:
    assert render(TEXT, SOURCES, parser=parser) == (
        "First[1](https://b.example/page). Both[2](https://a.example/)[1](https://b.example/page)."
        " Third[3](http://c.example/)."
    )


def test_plain(parser: Parser) -> None:
    assert render(TEXT, SOURCES, style="plain", parser=parser) == (
        "First[1]. Both[2][1]. Third[3]."
    )


def test_footnotes(parser: Parser) -> None:
    assert render(TEXT, SOURCES, style="footnotes", parser=parser) == (
        "First[^1]. Both[^2][^1]. Third[^3].\n"
        "\n"
        "[^1]: [Beta](https://b.example/page)\n"
        "[^2]: [Alpha](https://a.example/)\n"
        "[^3]: [http://c.example/](http://c.example/)\n"
    )


def test_html(parser: Parser) -> None:
    assert render(TEXT, SOURCES, style="html", parser=parser) == (
        'First<sup><a href="https://b.example/page" title="Beta">1</a></sup>. '
        'Both<sup><a href="https://a.example/" title="Alpha">2</a></sup>'
        '<sup><a href="https://b.example/page" title="Beta">1</a></sup>. '
        'Third<sup><a href="http://c.example/">3</a></sup>.'
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("no citation here", "no citation here"),
        ("ends with a line\n" + cite("turn0search0"), "ends with a line\n[^1]\n\n[^1]: "),
        ("line\n" + cite("turn0search0") + "\n", "line\n[^1]\n\n[^1]: "),
        (cite("turn0search0"), "[^1]\n\n[^1]: "),
    ],
)
def test_footnote_list_is_separated_by_one_blank_line(
    parser: Parser, text: str, expected: str
) -> None:
    rendered = render(text, SOURCES, style="footnotes", parser=parser)
    if expected == text:
        assert rendered == text
    else:
        assert rendered == expected + "[Alpha](https://a.example/)\n"


def test_footnotes_for_a_text_of_only_a_dropped_marker(parser: Parser) -> None:
    rendered = render(
        cite("turn9search9"), SOURCES, style="footnotes", parser=parser, unknown="drop"
    )
    assert rendered == ""


def test_a_repeated_source_keeps_its_number(parser: Parser) -> None:
    text = cite("turn1view0") + cite("turn0search0") + cite("turn1view0", "turn1view0")
    assert render(text, SOURCES, style="plain", parser=parser) == "[1][2][1]"
    assert numbering(text, parser) == {"turn1view0": 1, "turn0search0": 2}


UNKNOWN_TEXT = "A" + cite("turn0search0", "turn0search9") + " B" + cite("turn0search9") + " C"


@pytest.mark.parametrize(
    ("style", "labelled", "dropped"),
    [
        ("plain", "A[1][turn0search9] B[turn0search9] C", "A[1] B C"),
        (
            "markdown",
            "A[1](https://a.example/)[turn0search9] B[turn0search9] C",
            "A[1](https://a.example/) B C",
        ),
        (
            "html",
            'A<sup><a href="https://a.example/" title="Alpha">1</a></sup><sup>[turn0search9]</sup>'
            " B<sup>[turn0search9]</sup> C",
            'A<sup><a href="https://a.example/" title="Alpha">1</a></sup> B C',
        ),
        (
            "footnotes",
            "A[^1][turn0search9] B[turn0search9] C\n\n[^1]: [Alpha](https://a.example/)\n",
            "A[^1] B C\n\n[^1]: [Alpha](https://a.example/)\n",
        ),
    ],
)
def test_unknown_label_and_drop(parser: Parser, style: str, labelled: str, dropped: str) -> None:
    assert render(UNKNOWN_TEXT, SOURCES, style=style, parser=parser) == labelled  # type: ignore[arg-type]
    assert render(UNKNOWN_TEXT, SOURCES, style=style, parser=parser, unknown="drop") == dropped  # type: ignore[arg-type]


@pytest.mark.parametrize("style", ["markdown", "footnotes", "html", "plain"])
def test_unknown_raise_names_the_id(parser: Parser, style: str) -> None:
    with pytest.raises(KeyError, match="turn0search9"):
        render(UNKNOWN_TEXT, SOURCES, style=style, parser=parser, unknown="raise")  # type: ignore[arg-type]
    assert render(TEXT, SOURCES, style=style, parser=parser, unknown="raise")  # type: ignore[arg-type]


def test_unknown_ids_take_no_number(parser: Parser) -> None:
    text = cite("turn9search9") + cite("turn0search1")
    assert render(text, SOURCES, style="plain", parser=parser) == "[turn9search9][1]"
    assert render(text, SOURCES, style="plain", parser=parser, unknown="drop") == "[1]"
    assert numbering(text, parser, sources=SOURCES) == {"turn0search1": 1}
    assert numbering(text, parser) == {"turn9search9": 1, "turn0search1": 2}


HOSTILE = {
    "x": {"url": 'https://e.example/?a=1&b="2"<', "title": '<script>alert("t")</script> & co'},
    "js": {"url": "javascript:alert(1)", "title": "Click"},
    "tab": {"url": "java\tscript:alert(1)"},
    "spaced": {"url": " https://e.example/"},
    "data": {"url": "data:text/html,<b>x</b>"},
    "none": {"title": "No URL"},
    "notstr": {"url": 42},
    "upper": {"url": "HTTPS://E.EXAMPLE/"},
}


def test_html_escapes_what_it_inserts(parser: Parser) -> None:
    text = "<b>kept</b> " + cite("x")
    assert render(text, HOSTILE, style="html", parser=parser) == (
        '<b>kept</b> <sup><a href="https://e.example/?a=1&amp;b=&quot;2&quot;&lt;" '
        'title="&lt;script&gt;alert(&quot;t&quot;)&lt;/script&gt; &amp; co">1</a></sup>'
    )


def test_html_escapes_labels() -> None:
    parser = Parser(source_id=r"[^\ue200-\ue206]+")
    rendered = render(cite('<img src=x onerror="y">'), {}, style="html", parser=parser)
    assert rendered == "<sup>[&lt;img src=x onerror=&quot;y&quot;&gt;]</sup>"


@pytest.mark.parametrize("source_id", ["js", "tab", "spaced", "data", "none", "notstr"])
def test_only_http_urls_become_links(parser: Parser, source_id: str) -> None:
    text = cite(source_id)
    assert render(text, HOSTILE, style="html", parser=parser) == "<sup>1</sup>"
    assert render(text, HOSTILE, style="markdown", parser=parser) == "[1]"
    assert render(text, HOSTILE, style="plain", parser=parser) == "[1]"
    footnotes = render(text, HOSTILE, style="footnotes", parser=parser)
    assert footnotes.startswith("[^1]\n\n[^1]: ")
    assert "](" not in footnotes


def test_scheme_is_case_insensitive(parser: Parser) -> None:
    assert render(cite("upper"), HOSTILE, parser=parser) == "[1](HTTPS://E.EXAMPLE/)"


def test_markdown_escapes_urls_and_titles(parser: Parser) -> None:
    sources = {"w": {"url": "https://en.wikipedia.org/wiki/Foo_(bar)\\x", "title": "A [b] *c*\nd"}}
    text = cite("w")
    assert render(text, sources, parser=parser) == (
        "[1](https://en.wikipedia.org/wiki/Foo_\\(bar\\)\\\\x)"
    )
    assert render(text, sources, style="footnotes", parser=parser) == (
        "[^1]\n\n[^1]: [A \\[b\\] \\*c\\* d](https://en.wikipedia.org/wiki/Foo_\\(bar\\)\\\\x)\n"
    )


def test_footnote_falls_back_to_the_id_without_url_or_title(parser: Parser) -> None:
    rendered = render(
        cite("none") + cite("y"), {"none": {}, "y": {}}, style="footnotes", parser=parser
    )
    assert rendered == "[^1][^2]\n\n[^1]: none\n[^2]: y\n"


def test_field_inputs(parser: Parser) -> None:
    sources = {
        "turn1view0": {"url": "https://v0.example/"},
        "turn1view1": {"url": "https://v1.example/"},
    }
    text = "The setting is supported. \ue200cite\ue202turn1view0\ue202turn1view1\ue201"
    assert render(text, sources, style="plain", parser=parser) == "The setting is supported. [1][2]"
    abandoned = "keep\ue200broken prose\ue200cite\ue202turn1view0\ue201after"
    assert render(abandoned, sources, style="plain", parser=parser) == (
        "keep\ue200broken prose[1]after"
    )
    assert render(abandoned, sources, style="plain", parser=parser, sanitize=True) == (
        "keepbroken prose[1]after"
    )


def test_markers_in_code_stay_literal_with_skip_code(implementation: str) -> None:
    text = "```text\n\ue200cite\ue202turn0search0\ue201\n```\nOut" + cite("turn0search0")
    parser = Parser(skip_code=True, implementation=implementation)  # type: ignore[arg-type]
    assert render(text, SOURCES, style="plain", parser=parser) == (
        "```text\n\ue200cite\ue202turn0search0\ue201\n```\nOut[1]"
    )
    assert numbering(text, parser) == {"turn0search0": 1}


def test_parser_grammar_and_offset_unit_are_honoured(implementation: str) -> None:
    parser = Parser(("cite", "filecite"), offsets="utf16", implementation=implementation)  # type: ignore[arg-type]
    text = "\U0001f600 " + cite("turn0file0", family="filecite") + " 中" + cite("turn0search0")
    sources = {"turn0file0": {"url": "https://f.example/"}, **SOURCES}
    assert render(text, sources, style="plain", parser=parser) == "\U0001f600 [1] 中[2]"
    assert numbering(text, parser) == {"turn0file0": 1, "turn0search0": 2}


def test_default_parser() -> None:
    assert render(TEXT, SOURCES, style="plain") == "First[1]. Both[2][1]. Third[3]."
    assert numbering(TEXT) == {"turn0search1": 1, "turn0search0": 2, "turn1view0": 3}


def test_numbering_agrees_with_render(parser: Parser) -> None:
    numbers = numbering(UNKNOWN_TEXT + TEXT, parser, sources=SOURCES)
    assert numbers == {"turn0search0": 1, "turn0search1": 2, "turn1view0": 3}
    rendered = render(UNKNOWN_TEXT + TEXT, SOURCES, style="plain", parser=parser, unknown="drop")
    assert rendered == "A[1] B CFirst[2]. Both[1][2]. Third[3]."


def test_bad_style_or_policy() -> None:
    with pytest.raises(ValueError, match="style must be one of"):
        render(TEXT, SOURCES, style="rst")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown must be one of"):
        render(TEXT, SOURCES, unknown="ignore")  # type: ignore[arg-type]
