"""The twin's scan and cut stay linear on adversarial shapes, counted, not timed: every
search the scanner makes reports how many characters it passed over, and the total stays
within a constant factor of the input.  (The kernel runs the same algorithm; the exponent
fits of benches/bench_clean.py cover it.)"""

from __future__ import annotations

import re
from typing import Any

import pytest

from citemark._kernels import clean_py as _clean_py
from citemark._markdown.code import code_walls

S, E, D = "\ue200", "\ue201", "\ue202"


class Counting:
    """A compiled pattern that counts the characters its searches and matches pass over."""

    def __init__(self, pattern: re.Pattern[str], counter: list[int]) -> None:
        self.pattern = pattern
        self.counter = counter

    def search(self, text: str, pos: int = 0, endpos: int | None = None) -> Any:
        end = len(text) if endpos is None else endpos
        found = self.pattern.search(text, pos, end)
        self.counter[0] += (end if found is None else found.end()) - pos + 1
        return found

    def match(self, text: str, pos: int = 0, endpos: int | None = None) -> Any:
        end = len(text) if endpos is None else endpos
        found = self.pattern.match(text, pos, end)
        self.counter[0] += (0 if found is None else found.end() - pos) + 1
        return found


SHAPES = {
    "abandoned-starts": S + "cite" + D + "turn0search0 ",
    "starts-only": S,
    "starts-then-one-stop": S + "cite" + D + "x ",
    "anchors-and-blanks": "\ue206 ",
    "bare-anchor-chains": D + "turn0search0",
    "link-destinations": "[a](" + S + "cite" + D + "x" + E + ")",
    "unclosed-links": "[" * 3 + "](" + S + E + ")",
    "delimiters": D * 3 + " ",
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_scan_work_is_linear(shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    counter = [0]
    for name in ("_SPECIAL", "_BODY_END", "_WORD", "_ID_CHAIN"):
        monkeypatch.setattr(_clean_py, name, Counting(getattr(_clean_py, name), counter))
    per_char = []
    for size in (10_000, 40_000):
        text = SHAPES[shape] * (size // len(SHAPES[shape]))
        if shape == "starts-then-one-stop":
            text += E
        counter[0] = 0
        _clean_py.clean(text, [])
        per_char.append(counter[0] / len(text))
    assert per_char[1] <= 6
    assert per_char[1] <= per_char[0] * 1.2 + 0.1


def test_link_look_back_is_bounded() -> None:
    """Unwrapping `[text](<marker>)` looks back at most LINK_TEXT_MAX characters."""
    text = "x" * 100_000 + "](" + S + E + ")"
    assert _clean_py.clean(text, []) == "x" * 100_000 + "]()"


@pytest.mark.parametrize(
    "text",
    ["`" * 5000, "` " * 5000, "``` " * 2000, ("`a" * 50 + "\n") * 200, "> " * 3000 + "`x`"],
)
def test_markdown_many_backticks(text: str) -> None:
    walls = code_walls(text + S)
    assert walls == sorted(walls)
