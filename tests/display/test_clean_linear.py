"""The twin's scan and cut, and its code scan, stay linear on adversarial shapes, counted,
not timed: every search the scanner makes reports how many characters it passed over (the
code scan also the lines of Python it runs), and the total stays within a constant factor
of the input.  (The kernel runs the same algorithm; the exponent fits of
benches/bench_clean.py and benches/bench_bounds.py cover it.)"""

from __future__ import annotations

import re
import sys
from types import FrameType
from typing import Any

import pytest

from citemark._core.grammar import LINE_BREAK_RE
from citemark._kernels import clean_py as _clean_py
from citemark._kernels import commonmark_py as _commonmark_py
from citemark._markdown.code import find_code_ranges

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
    # No `[` within reach: not a link; the brackets that held only the marker go with it.
    assert _clean_py.clean(text, []) == "x" * 100_000 + "]"


@pytest.mark.parametrize(
    "text",
    ["`" * 5000, "` " * 5000, "``` " * 2000, ("`a" * 50 + "\n") * 200, "> " * 3000 + "`x`"],
)
def test_markdown_many_backticks(text: str) -> None:
    code_ranges = find_code_ranges(text + S)
    assert code_ranges == sorted(code_ranges)


# -- the code scan on nested containers: the twin's steps counted -------------------------

# One line of nested containers ending in prose, or such a line followed by lines that each
# once cost the depth or the rest of the line (blank lines, blank rests, lazy lines, a fence).
# The same shapes as benches/bench_bounds.py's, which times both implementations.
CONTAINER_SHAPES = {
    "dash-items": ("- ", ""),
    "star-items": ("* ", ""),
    "alternating-items": ("- * ", ""),
    "ordered-items": ("1. ", ""),
    "quotes": ("> ", ""),
    "mixed-containers": ("- > 1. * > + 2) ", ""),
    "items-then-blank-lines": ("- ", "\n"),
    "items-then-blank-rests": ("- ", "\n  \t"),
    "items-then-lazy-lines": ("- ", "\ny"),
    "quotes-then-lazy-lines": ("> ", "\ny"),
    "items-then-inline-code": ("- ", "\n`a`"),
    "items-then-setext": ("- ", "\n==="),
    "items-then-fenced-lines": ("- ", "\n" + S + "x"),
    # each line an item one level deeper than the last: its indentation is read once, not
    # once for each container it continues
    "staircase": ("  ", "- x `" + S + "\n"),
}


def container_shape(shape: str, size: int) -> str:
    unit, follow = CONTAINER_SHAPES[shape]
    if shape == "staircase":
        lines: list[str] = []
        while sum(map(len, lines)) < size:
            lines.append(unit * len(lines) + follow)
        return "".join(lines)
    line = (unit * (size // len(unit)))[: size // 2 if follow else size] + "x"
    if shape == "items-then-fenced-lines":
        line = line[:-1] + "```"
    return line + follow * ((size - len(line)) // len(follow) if follow else 0)


class Bounded:
    """A compiled pattern charged what its calls may read: a match up to its end, a failed
    match up to endpos (it may have read that far), a search up to what it found, and all
    the range for finditer."""

    def __init__(self, pattern: re.Pattern[str], counter: list[int]) -> None:
        self.pattern = pattern
        self.counter = counter

    def _end(self, text: str, endpos: int | None) -> int:
        return len(text) if endpos is None else endpos

    def match(self, text: str, pos: int = 0, endpos: int | None = None) -> Any:
        end = self._end(text, endpos)
        found = self.pattern.match(text, pos, end)
        self.counter[0] += (end if found is None else found.end()) - pos + 1
        return found

    def search(self, text: str, pos: int = 0, endpos: int | None = None) -> Any:
        end = self._end(text, endpos)
        found = self.pattern.search(text, pos, end)
        self.counter[0] += (end if found is None else found.end()) - pos + 1
        return found

    def finditer(self, text: str, pos: int = 0, endpos: int | None = None) -> Any:
        end = self._end(text, endpos)
        self.counter[0] += end - pos + 1
        return self.pattern.finditer(text, pos, end)


def scan_steps(text: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """The steps of the twin's code scan of text: the lines of Python it runs in
    `commonmark_py` and what its patterns may read (string methods are called at most a
    few times a line)."""
    counter = [0]
    with monkeypatch.context() as patched:
        for name in ("_BACKTICKS", "_FENCE", "_CLOSE", "_BULLET", "_HEADING", "_SETEXT"):
            patched.setattr(_commonmark_py, name, Bounded(getattr(_commonmark_py, name), counter))
        patched.setattr(_commonmark_py, "LINE_BREAK_RE", Bounded(LINE_BREAK_RE, counter))
        runs = {
            lead: Bounded(re.compile(f"[{re.escape(lead)} \t]*"), counter).match for lead in "*-_"
        }
        patched.setattr(_commonmark_py, "_RULE_RUNS", runs)
        home = _commonmark_py.__file__

        def lines(frame: FrameType, event: str, arg: object) -> Any:
            counter[0] += event == "line"
            return lines

        def calls(frame: FrameType, event: str, arg: object) -> Any:
            return lines if frame.f_code.co_filename == home else None

        sys.settrace(calls)
        try:
            _commonmark_py.scanned_code_ranges(text)
        finally:
            sys.settrace(None)
    return counter[0]


@pytest.mark.parametrize("shape", list(CONTAINER_SHAPES))
def test_code_scan_work_is_linear_on_nested_containers(
    shape: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    per_char = []
    for size in (4_000, 16_000):
        text = container_shape(shape, size)
        per_char.append(scan_steps(text, monkeypatch) / len(text))
    assert per_char[1] <= per_char[0] * 1.2 + 0.5, per_char
