"""`strip_lines` and `extract_lines` on logs written with json.dumps's default (every non-ASCII
character a \\uXXXX escape) and with escapes anywhere: the compiled pass decodes a token that
`raw_ok` refuses and strips or scans it in C, leaving only a lone surrogate (and DEL in a
changed ASCII token) to `many`.

Held byte for byte, on both kernels, to the reference path spelled out per line: a token `raw_ok`
accepts is stripped as the str of its raw bytes, any other is decoded by json, stripped, and
written back as json.dumps writes it (ASCII escapes when the token was ASCII, or when the text
holds a lone surrogate); extract to json.loads + extract_many + json.dumps per line."""

from __future__ import annotations

import importlib
import json
import random
from functools import partial
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citemark import extract_many, strip_many
from citemark._cli import jsonl as _jsonl
from citemark._kernels import jsonl_py as _jsonl_py
from strategies import guide_texts
from test_jsonl import expected_citation_lines
from test_jsonl_clean import EXTRA, SPELLINGS, line_of
from test_jsonl_clean import texts as atom_texts

KERNELS = {"cython": "citemark._kernels.jsonl_c", "python": "citemark._kernels.jsonl_py"}
S, D, E = "\ue200", "\ue202", "\ue201"
PATH = ("response", "text")
FAMILIES = [("cite",), ("cite", "navlist"), ("ci",), ()]


@pytest.fixture(scope="module")
def kernel(implementation: str) -> ModuleType:
    """One JSONL kernel; a missing compiled one fails (ImportError), never skips."""
    return importlib.import_module(KERNELS[implementation])


def compiled() -> ModuleType:
    return importlib.import_module(KERNELS["cython"])


class Recorder:
    """A `many`, keeping the texts it was given."""

    def __init__(self, many: Any) -> None:
        self.many = many
        self.texts: list[str] = []

    def __call__(self, texts: list[str]) -> list[Any]:
        self.texts += texts
        return self.many(texts)


# --- logs -------------------------------------------------------------------------------------

# Whole markers of the guide (valid or not, in code, wrapped) and loose atoms (marker
# characters, every character JSON escapes, DEL, emoji, a lone surrogate).
texts = st.one_of(guide_texts(), atom_texts, st.lists(guide_texts(), max_size=3).map("".join))


@st.composite
def logs(draw: st.DrawFn) -> bytes:
    """Lines spelled as json.dumps writes them (ensure_ascii True or False) or with escapes at
    random (either hex case, "\\/"), null texts, blank, bad and odd lines."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    lines = []
    for text in draw(st.lists(st.one_of(texts, texts, st.none()), max_size=6)):
        lines.append(line_of(text, draw(st.sampled_from(SPELLINGS)), rng))
        if draw(st.integers(0, 5)) == 0:
            lines.append(draw(st.sampled_from(EXTRA)))
    data = b"\n".join(lines)
    return data + b"\n" if draw(st.booleans()) else data


def encoded(families: tuple[str, ...]) -> tuple[bytes, ...]:
    return tuple(family.encode() for family in families)


# --- the reference path, one line at a time ---------------------------------------------------


def stripped_token(token: bytes, families: tuple[str, ...]) -> bytes:
    """What strip writes for the string token: the reference path (`_jsonl_py`'s composition)."""
    if _jsonl_py.raw_ok(token, encoded(families)):  # stripped as the str of its raw bytes
        inner = token[1:-1].decode("utf-8")
        new = strip_many([inner], families=families)[0]
        return token if new == inner else b'"' + new.encode("utf-8") + b'"'
    text = json.loads(token)
    new = strip_many([text], families=families)[0]
    if new == text:
        return token
    try:
        return json.dumps(new, ensure_ascii=token.isascii()).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: ASCII escapes
        return json.dumps(new).encode("ascii")


def expected_strip(data: bytes, families: tuple[str, ...], skip_bad: bool) -> bytes:
    """strip_lines' output, line by line: blank lines kept, bad ones left out (without
    skip_bad, the output stops before the first), the token at the path replaced."""
    pieces = data.split(b"\n")
    out = []
    for index, line in enumerate(pieces):
        ending = b"\n" if index < len(pieces) - 1 else b""
        if not line and not ending:
            break  # after the last newline
        if not line.strip(b" \t\r"):
            out.append(line + ending)
            continue
        code, a, b = _jsonl_py.locate(line, PATH)
        if code == _jsonl.FOUND:
            line = line[:a] + stripped_token(line[a:b], families) + line[b:]
        elif code != _jsonl.NULL_TEXT:
            if not skip_bad:
                break
            continue
        out.append(line + ending)
    return b"".join(out)


# --- strip --------------------------------------------------------------------------------------


@given(data=logs(), families=st.sampled_from(FAMILIES))
def test_strip_lines_is_the_reference_path(kernel: ModuleType, data: bytes, families) -> None:
    many = partial(strip_many, families=families)
    for skip_bad in (True, False):
        out = kernel.strip_lines(data, PATH, many, skip_bad, encoded(families))
        assert out[0] == expected_strip(data, families, skip_bad)
        # every token through `many` (no raw path, no pass): the same rows, blanks, bad lines
        assert out[1:] == kernel.strip_lines(data, PATH, many, skip_bad, None)[1:]


@pytest.mark.c_extension
@given(data=logs(), families=st.sampled_from(FAMILIES))
def test_strip_lines_kernels_agree(data: bytes, families) -> None:
    many = partial(strip_many, families=families)
    raw = encoded(families)
    for skip_bad in (True, False):
        assert compiled().strip_lines(data, PATH, many, skip_bad, raw) == _jsonl_py.strip_lines(
            data, PATH, many, skip_bad, raw
        )


@pytest.mark.c_extension
@given(text=texts, spelling=st.sampled_from(SPELLINGS), seed=st.integers(0, 2**32))
def test_what_strip_leaves_to_python(text: str, spelling: str, seed: int) -> None:
    """The compiled pass hands `many` only a text with a lone surrogate, or an ASCII token
    holding DEL whose text changes."""
    line = line_of(text, spelling, random.Random(seed))
    recorder = Recorder(strip_many)
    out = compiled().strip_lines(line, PATH, recorder, False, (b"cite",))
    assert out[0] == expected_strip(line, ("cite",), False)
    if recorder.texts:
        assert recorder.texts == [text]
        token = line.split(b'"text": ')[1].split(b', "n"')[0]
        surrogate = any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)
        ascii_del = token.isascii() and b"\x7f" in token and strip_many([text]) != [text]
        assert surrogate or ascii_del


# --- extract ------------------------------------------------------------------------------------


@given(
    data=logs(),
    families=st.sampled_from(FAMILIES),
    file=st.sampled_from(["log.jsonl", "\udcff.jsonl", '\u00fc "q"']),
)
def test_extract_lines_is_the_reference_path(
    kernel: ModuleType, data: bytes, families, file
) -> None:
    """Offsets in code points of the decoded text, marker parts that JSON escapes (a newline
    in a body) escaped: json.dumps of extract_many's dicts."""
    many = partial(extract_many, families=families)
    raw = encoded(families)
    if not data.endswith(b"\n"):
        data += b"\n"
    out, rows, blanks, bad = kernel.extract_lines(data, PATH, many, True, file, 7, raw)
    assert out == expected_citation_lines(data, families, file, 7)
    assert (rows, blanks, bad) == kernel.extract_lines(data, PATH, many, True, file, 7, None)[1:]
    stopped = kernel.extract_lines(data, PATH, many, False, file, 7, raw)
    assert stopped == kernel.extract_lines(data, PATH, many, False, file, 7, None)
    assert out.startswith(stopped[0])


@pytest.mark.c_extension
@given(data=logs(), families=st.sampled_from(FAMILIES))
def test_extract_lines_kernels_agree(data: bytes, families) -> None:
    many = partial(extract_many, families=families)
    raw = encoded(families)
    for skip_bad in (True, False):
        assert compiled().extract_lines(
            data, PATH, many, skip_bad, "f", 0, raw
        ) == _jsonl_py.extract_lines(data, PATH, many, skip_bad, "f", 0, raw)


@pytest.mark.c_extension
@given(text=texts, spelling=st.sampled_from(SPELLINGS), seed=st.integers(0, 2**32))
def test_what_extract_leaves_to_python(text: str, spelling: str, seed: int) -> None:
    """The compiled pass hands `many` only a text with a lone surrogate."""
    line = line_of(text, spelling, random.Random(seed)) + b"\n"
    recorder = Recorder(extract_many)
    out = compiled().extract_lines(line, PATH, recorder, False, "f", 0, (b"cite",))[0]
    assert out == expected_citation_lines(line, ("cite",), "f", 0)
    if recorder.texts:
        assert recorder.texts == [text]
        assert any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)


# --- a log as json.dumps writes it by default ---------------------------------------------------

MARKED = [
    f"a {S}cite{D}turn0search0{E} b",
    f"\U0001f600 {S}cite{D}turn0search0{D}turn1news2{D}L8-L13{E}.\n",
    f"{S}cite{D}turn0search0\n{E} and {S}cite{D} turn0file1 {D}L\u0663{E}",  # a newline, \u0663
    f'"q"\\ {S}cite{D}turn0search0{E}\t/ \u00e9 {S}navlist{D}x{D}turn0news1{E}',
    f"{S}cite{D}turn0search0",  # never closed
    f"{S}cite{D}bad id{E} kept",
    f"\x7f {S}cite{D}turn0search0{E}",  # DEL
    f"\ud800 {S}cite{D}turn0search0{E}",  # a lone surrogate
    "no marker \u00e9 \\ /",
]


@pytest.mark.parametrize("ascii_only", [True, False])
def test_answers_in_either_spelling(kernel: ModuleType, ascii_only: bool) -> None:
    """Whole answers dumped by json.dumps (ASCII, or UTF-8 with "\\/"): the reference path's
    bytes, and in the compiled pass no text left to `many` but the lone surrogate's (json's
    ASCII spells DEL \\u007f: no raw DEL in an ASCII token here)."""
    lines = []
    for text in MARKED:
        try:
            line = json.dumps({"response": {"text": text}}, ensure_ascii=ascii_only).encode()
        except UnicodeEncodeError:
            line = json.dumps({"response": {"text": text}}).encode()
        lines.append(line if ascii_only else line.replace(b"/", b"\\/"))
    data = b"\n".join(lines) + b"\n"
    families = ("cite", "navlist")
    stripper = Recorder(partial(strip_many, families=families))
    out = kernel.strip_lines(data, PATH, stripper, False, encoded(families))
    assert out[0] == expected_strip(data, families, False)
    extractor = Recorder(partial(extract_many, families=families))
    found = kernel.extract_lines(data, PATH, extractor, False, "f", 0, encoded(families))[0]
    assert found == expected_citation_lines(data, families, "f", 0)
    if kernel.__name__ == KERNELS["cython"]:  # (a pure install has no compiled kernel)
        left = [text for text in MARKED if "\ud800" in text]
        assert extractor.texts == stripper.texts == left


def test_ascii_strip_writes_ascii_escapes(kernel: ModuleType) -> None:
    line = json.dumps({"response": {"text": f"\u00e9{S}cite{D}turn0search0{E}\U0001f600 x"}})
    out = kernel.strip_lines(line.encode(), PATH, strip_many, False, (b"cite",))[0]
    assert out == b'{"response": {"text": "\\u00e9\\ud83d\\ude00 x"}}'
