"""`clean_lines` (citemark clean --field): the JSONL kernel cleans each text on its UTF-8 bytes
with the clean core that `_clean_c` runs on a str, and leaves the rest to `clean_many`.

Held byte for byte to `map_lines(data, path, clean_many, skip_bad)` (every text decoded,
cleaned in Python's kernel, encoded back) on both kernels, and to a slow oracle (json.loads,
citemark.clean, json.dumps per line) where the line is spelled as json.dumps spells it."""

from __future__ import annotations

import importlib
import json
import random
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citemark import clean
from citemark._core import shapes as _clean_rules
from citemark.display import clean_many

KERNELS = {"cython": "citemark._kernels.jsonl_c", "python": "citemark._kernels.jsonl_py"}
S, D, E = "\ue200", "\ue202", "\ue201"
PATH = ("response", "text")
MAX_MARKER = _clean_rules.MAX_MARKER
LINK_TEXT_MAX = _clean_rules.LINK_TEXT_MAX


@pytest.fixture(scope="module")
def kernel(implementation: str) -> ModuleType:
    """One JSONL kernel; a missing compiled one fails (ImportError), never skips."""
    return importlib.import_module(KERNELS[implementation])


class Recorder:
    """clean_many, keeping the texts it was given."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, texts: list[str]) -> list[str]:
        self.texts += texts
        return clean_many(texts)


def reference(data: bytes, skip_bad: bool) -> Any:
    """What clean_lines must give: map_lines with clean_many on every text (the twin's, held
    to the compiled one by test_jsonl; a pure install has only the twin)."""
    return importlib.import_module(KERNELS["python"]).map_lines(data, PATH, clean_many, skip_bad)


# --- lines ------------------------------------------------------------------------------------

ATOMS = [
    S,
    E,
    D,
    "\ue203",
    "\ue204",
    "\ue205",
    "\ue206",
    "\ue316",  # private-use characters that are not markers, and their UTF-8 lead bytes'
    "\uf8ff",  # neighbours that are not private use
    "\uefff",
    "\uff0c",
    "\ufeff",
    "\u4e2d",  # Han and its punctuation: the spacing rule reads code points from UTF-8
    "\u3002",
    "\U00020001",
    "cite",
    "entity",
    "url",
    "link_title",
    "navlist",
    "turn0search0",
    "turn12news3",
    "L8-L13",
    '["x","Name"]',
    '["x"," N\u3000"]',
    '"',
    "\\",
    "/",
    " ",
    "  ",
    "    ",
    "\t",
    "\u00a0",
    "\u202f",
    "\u3000",
    ".",
    ",",
    "\u3002",
    "\u201d",
    ")",
    "(",
    "[",
    "]",
    "](",
    "\n",
    "\r\n",
    "\r",
    "\u2028",
    "\x7f",
    "\b",
    "\f",
    "\x01",
    "`",
    "```\n",
    "~~~\n",
    "a",
    "word",
    "é",
    "\U0001f600",
    "\u200b",
    "\ud800",
    "_",
    "0",
]
texts = st.lists(st.sampled_from(ATOMS), max_size=30).map("".join)
# How each character of a token is spelled: as json.dumps(ensure_ascii=False) writes it, as
# json.dumps(ensure_ascii=True) does, or each character at random (raw where JSON allows it,
# a \uXXXX escape in either case, "\/").
SPELLINGS = ["dumps", "ascii", "mixed"]


def escape(ch: str, upper: bool) -> str:
    if ord(ch) > 0xFFFF:
        high, low = divmod(ord(ch) - 0x10000, 0x400)
        return escape(chr(0xD800 + high), upper) + escape(chr(0xDC00 + low), upper)
    spelled = f"\\u{ord(ch):04x}"
    return spelled.upper().replace("\\U", "\\u") if upper else spelled


def token(text: str, spelling: str, rng: random.Random) -> str:
    if spelling != "mixed":
        # a lone surrogate has no UTF-8: escaped, as json.dumps(ensure_ascii=True) does
        dumped = json.dumps(text, ensure_ascii=spelling == "ascii")
        return "".join(escape(ch, False) if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in dumped)
    out = []
    for ch in text:
        roll = rng.random()
        if roll < 0.3 or (0xD800 <= ord(ch) <= 0xDFFF):
            out.append(escape(ch, rng.random() < 0.5))
        elif ch == "/" and roll < 0.6:
            out.append("\\/")
        else:
            out.append(json.dumps(ch, ensure_ascii=False)[1:-1])
    return '"' + "".join(out) + '"'


def line_of(text: str | None, spelling: str, rng: random.Random) -> bytes:
    value = "null" if text is None else token(text, spelling, rng)
    line = '{"id": 1, "response": {"text": ' + value + ', "n": 1.50}, "z": "\\u00e9"}'
    return line.encode("utf-8", "surrogatepass")


EXTRA = [b"", b"  \r", b'{"response": {"text": null}}', b"not json", b"{}", b'{"response": 5}']


@st.composite
def logs(draw: st.DrawFn) -> bytes:
    rng = random.Random(draw(st.integers(0, 2**32)))
    lines = []
    for text in draw(st.lists(st.one_of(texts, st.none()), max_size=6)):
        lines.append(line_of(text, draw(st.sampled_from(SPELLINGS)), rng))
        if draw(st.integers(0, 5)) == 0:
            lines.append(draw(st.sampled_from(EXTRA)))
    data = b"\n".join(lines)
    return data + b"\n" if draw(st.booleans()) else data


# --- the differential -------------------------------------------------------------------------


@given(data=logs())
def test_clean_lines_is_map_lines_with_clean_many(kernel, data: bytes) -> None:
    for skip_bad in (True, False):
        assert kernel.clean_lines(data, PATH, clean_many, skip_bad) == reference(data, skip_bad)


@given(text=texts, spelling=st.sampled_from(SPELLINGS), seed=st.integers(0, 2**32))
def test_clean_lines_is_the_oracle(kernel, text: str, spelling: str, seed: int) -> None:
    """json.loads, clean, json.dumps: the same bytes where the line is spelled as json.dumps
    spells it (the token of a changed text as json.dumps(ensure_ascii=False) writes it, or
    ASCII escapes when the original token was ASCII, or the text holds a lone surrogate)."""
    rng = random.Random(seed)
    line = line_of(text, spelling, rng)
    out, rows, blanks, bad = kernel.clean_lines(line, PATH, clean_many, False)
    assert (rows, blanks, bad) == (1, 0, [])
    cleaned = clean(text)
    want = json.loads(line)
    want["response"]["text"] = cleaned
    assert json.loads(out) == want
    if cleaned == text:
        assert out == line
    elif spelling != "mixed":
        ascii_only = spelling == "ascii" or line.isascii()
        try:
            new = json.dumps(cleaned, ensure_ascii=ascii_only).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: ASCII escapes
            new = json.dumps(cleaned).encode("ascii")
        assert out == line.replace(token(text, spelling, rng).encode("utf-8", "surrogatepass"), new)


@pytest.mark.c_extension
@given(text=texts)
def test_what_the_pass_leaves_to_python(text: str) -> None:
    """The compiled pass hands a text to `many` only for the documented reasons: a lone
    surrogate (or DEL in an ASCII token) next to a marker, markers maybe in Markdown code, a
    titled family, an entity body that is not plain."""
    compiled = importlib.import_module(KERNELS["cython"])
    kernel = importlib.import_module("citemark._kernels.clean_c")
    rng = random.Random(0)
    for spelling in SPELLINGS:
        line = line_of(text, spelling, rng)
        recorder = Recorder()
        compiled.clean_lines(line, PATH, recorder, False)
        if not recorder.texts:
            continue
        assert recorder.texts == [text]
        entity_or_titled = kernel.clean(text, [], None, True) is None
        token = line.split(b'"text": ')[1].split(b', "n"')[0]
        surrogate = any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)
        ascii_del = token.isascii() and "\x7f" in text
        assert surrogate or ascii_del or kernel.marker_state(text) == 3 or entity_or_titled


def test_answers_of_a_log_are_all_cleaned_in_the_pass(kernel) -> None:
    """The answers benches/make_log.py writes (cite, navlist and entity markers, emoji, escapes), in
    UTF-8 or ASCII JSON: none is left to Python, and the result is map_lines'."""
    sys.path.insert(0, str(Path(__file__).parents[2] / "benches"))
    try:
        from make_log import output_text
    finally:
        sys.path.pop(0)
    rng = random.Random(7)
    answers = [output_text(rng) for _ in range(300)]
    for ascii_only in (False, True):  # json.dumps's default escapes every non-ASCII character
        data = b"".join(
            json.dumps({"response": {"text": text}}, ensure_ascii=ascii_only).encode() + b"\n"
            for text in answers
        )
        recorder = Recorder()
        assert kernel.clean_lines(data, PATH, recorder, False) == reference(data, False)
        if kernel.__name__.endswith("_c"):
            assert recorder.texts == []


# --- the UTF-8 counts: MAX_MARKER and LINK_TEXT_MAX are in code points --------------------------

WIDE = ["a", "é", "中", "\U0001f600"]  # 1, 2, 3 and 4 bytes in UTF-8


@pytest.mark.parametrize("ch", WIDE)
def test_max_marker_counts_code_points(kernel, ch: str) -> None:
    lines = []
    for size in range(MAX_MARKER - 8, MAX_MARKER + 3):
        # START "cite" DELIM body STOP: its STOP is at code point 6 + len(body)
        body = "turn0search0" + ch * (size - 6 - 12)
        for tail in (E, "\n", ""):
            text = f"x {S}cite{D}{body}{tail} y"
            lines.append(json.dumps({"response": {"text": text}}, ensure_ascii=False).encode())
    data = b"\n".join(lines)
    recorder = Recorder()
    assert kernel.clean_lines(data, PATH, recorder, False) == reference(data, False)
    if kernel.__name__.endswith("_c"):
        assert recorder.texts == []


@pytest.mark.parametrize("ch", WIDE)
def test_link_text_max_counts_code_points(kernel, ch: str) -> None:
    lines = []
    for size in range(LINK_TEXT_MAX - 3, LINK_TEXT_MAX + 3):
        for link in (ch * size, "[" + ch * (size - 2) + "]", " " * size, "\u00a0" * size):
            text = f"see [{link}]({S}cite{D}turn0search0{E}) now"
            lines.append(json.dumps({"response": {"text": text}}, ensure_ascii=False).encode())
    data = b"\n".join(lines)
    assert kernel.clean_lines(data, PATH, clean_many, False) == reference(data, False)


@pytest.mark.parametrize(
    "text",
    [
        f"a\u00a0{S}cite{D}turn0search0{E}\u3002",  # blanks and closing marks outside ASCII
        f"a \u202f{S}cite{D}turn0search0{E} b",
        f"\u00a0\u00a0{S}cite{D}turn0search0{E}\u00a0x",  # at a line start
        f'x {S}entity{D}["k","\u3000Na\u00e9\u2003"]{E} y',  # a name stripped of spaces
        f'x {S}entity{D}["k","\u3000"]{E}.',
        f"x {S}cite{D}turn0search0{D}L1-L2{E}{S}cite{D}turn1news2{E}. \U0001f600",
        f"{D}turn0search0{D}L8 \ue203sup\ue204 \ue206 {S}cite{D}turn0search0",
        'a\\b"c/\b\f\t' + f"{S}navlist{D}t{D}turn0news1{E}\n",
        f"[\U0001f600 \u00e9]({S}cite{D}turn0search0{E})",
        f"{S}cite{D}turn0search0{E}" * 700,  # past the core's window of tokens
    ],
)
def test_unicode_around_markers(kernel, text: str) -> None:
    data = json.dumps({"response": {"text": text}}, ensure_ascii=False).encode() + b"\n"
    data += data.replace(b"/", b"\\/")
    recorder = Recorder()
    out = kernel.clean_lines(data, PATH, recorder, False)
    assert out == reference(data, False)
    assert json.loads(out[0].split(b"\n")[0])["response"]["text"] == clean(text)
    if kernel.__name__.endswith("_c"):
        assert recorder.texts == []


def test_arguments_are_type_checked(kernel) -> None:
    with pytest.raises(TypeError, match="data"):
        kernel.clean_lines("{}", PATH, clean_many, False)
    with pytest.raises(TypeError, match="path"):
        kernel.clean_lines(b"{}", ["response"], clean_many, False)
    with pytest.raises(TypeError, match="path"):
        kernel.clean_lines(b"{}", ("response", 1), clean_many, False)
    with pytest.raises(ValueError, match="path"):
        kernel.clean_lines(b"{}", (), clean_many, False)
    with pytest.raises(TypeError, match="many"):
        kernel.clean_lines(b"{}", PATH, None, False)
    with pytest.raises(TypeError, match="skip_bad"):
        kernel.clean_lines(b"{}", PATH, clean_many, 1)
    with pytest.raises(ValueError, match="many"):
        kernel.clean_lines(
            b'{"response": {"text": "\\u00e9 ```\\n' + S.encode() + b'"}}',
            PATH,
            lambda texts: [],
            False,
        )
