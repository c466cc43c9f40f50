"""`render` without a parser starts from `citemark.clean`'s text: no residue."""

from __future__ import annotations

from citemark.render import numbering, render

SOURCES = {
    "turn0search0": {"url": "https://a.example/", "title": "A"},
    "turn0search1": {"url": "https://b.example/", "title": "B"},
}


def cite(*ids: str, family: str = "cite") -> str:
    return "\ue200" + family + "".join("\ue202" + i for i in ids) + "\ue201"


def test_default_render_starts_from_the_clean_text() -> None:
    from citemark.display import clean

    text = (
        "\ue203Kyoto is old.\ue204 " + cite("turn0search0") + "\ue206 It runs "
        '\ue200entity\ue202["software","Node.js"]\ue201 '
        "\ue200navlist\ue202News\ue202turn0news1\ue201, `" + cite("turn0search1") + "` and "
        "\ue200\ue202turn0search1\ue201."
    )
    rendered = render(text, SOURCES, style="plain")
    # A reference takes the marker's place, the model's spacing kept around it.
    assert rendered == "Kyoto is old. [1] It runs Node.js, `" + cite("turn0search1") + "` and [2]."
    assert numbering(text) == {"turn0search0": 1, "turn0search1": 2}
    shown = render(text, SOURCES, style="plain", widgets={"navlist": lambda m: "(news)"})
    assert "Node.js (news)," in shown
    assert render("x citeturn0search0.", SOURCES, style="plain", lenient=True) == "x [1]."
    assert clean(rendered) == rendered  # no residue left outside code
