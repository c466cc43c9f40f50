"""The kernel's fused scans held to the twin, on both implementations and on every vector path:

- one search for a set of characters (`next_in`: a range compared when they lie close
  together, each compared otherwise): the stray marker characters of a gap, line breaks
  (CR, LF: a vertical tab or a form feed between them is none), a fence character;
- the online pairing of backtick runs fused into the run scan (an opener waiting for a short
  run finds it among a vector's runs at once; one never closed has the rest of its lines read
  again);
- cited_lines reading a line's start and what stands before its first citation in one pass.

The vector path is chosen once at import (CITEMARK_SIMD caps it), so the paths other than
the machine's run in interpreters of their own.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from citemark import Parser
from citemark._kernels.loader import load

S, D, E = "\ue200", "\ue202", "\ue201"
MARKER = f"{S}cite{D}turn0file0{E}"
WIDE = ["", "\u00e9", "\u0100", "\U0001f600"]


def twin_and_kernel(implementation: str) -> tuple[object, object]:
    return load("commonmark", "python"), load("commonmark", implementation)  # type: ignore[arg-type]


# -- stray marker characters: one search for the three -------------------------------------

STRAY_TEXTS = st.lists(
    st.sampled_from(["<", ">", "|", "<<", ">>", "||", "cite", "x y", " ", "\n", "\u00e9", "a" * 40])
).map("".join)


@given(STRAY_TEXTS, st.integers(0, 3), st.integers(0, 3), st.integers(0, 7))
@example("<cite|a " + "x" * 70 + ">>" + "|" * 40, 0, 0, 7)
def test_strays_with_markers_far_apart_match_the_twin(
    implementation: str, text: str, cut: int, trim: int, held: int
) -> None:
    # "<", ">", "|" are far apart: compared each (no range), in every width of text.
    twin, kernel = twin_and_kernel(implementation)
    first = min(cut, len(text))
    last = max(first, len(text) - trim)
    held |= sum(bit for bit, char in ((1, "<"), (2, ">"), (4, "|")) if char in text[first:last])
    for wide in WIDE:
        marked = wide + text
        results = []
        for module in (twin, kernel):
            found: list[tuple[int, int, int]] = []
            foreign: list[tuple[int, int]] = []
            module.strays(marked, first, last + len(wide), held, "<", ">", "|", found, foreign)  # type: ignore[attr-defined]
            results.append((found, foreign))
        assert results[0] == results[1], wide


@pytest.mark.parametrize(
    "chars", [(S, E, D), ("\U0001f600", "\U0001f601", "x"), ("\u0100", "a", "b")]
)
def test_strays_with_markers_wider_than_the_text(
    implementation: str, chars: tuple[str, ...]
) -> None:
    # A marker character wider than the text's storage is in no place of it (its low bits
    # compared would find another character): the text is read for the others only.
    twin, kernel = twin_and_kernel(implementation)
    for text in ("ab\x00\x01 " * 20 + "a" * 40 + "b", "\u0100\u00ff" * 50 + "ab", "xx\ue200\ue201"):
        results = []
        for module in (twin, kernel):
            found: list[tuple[int, int, int]] = []
            foreign: list[tuple[int, int]] = []
            module.strays(text, 0, len(text), 7, *chars, found, foreign)  # type: ignore[attr-defined]
            results.append((found, foreign))
        assert results[0] == results[1], text


@pytest.mark.parametrize("wide", WIDE)
def test_stray_runs_at_every_vector_alignment(implementation: str, wide: str) -> None:
    twin, kernel = twin_and_kernel(implementation)
    for shift in range(70):
        for char in (S, E, D, S + "cite", E + D):
            text = wide + "\u3000" * shift + char + " " * (70 - shift) + D
            results = []
            for module in (twin, kernel):
                found: list[tuple[int, int, int]] = []
                foreign: list[tuple[int, int]] = []
                module.strays(text, 0, len(text), 7, S, E, D, found, foreign)  # type: ignore[attr-defined]
                results.append((found, foreign))
            assert results[0] == results[1], (shift, char)


# -- line breaks: CR or LF in one search -----------------------------------------------------

LINE_PIECES = [MARKER, "a", "@", " ", "`", "~", "\n", "\r", "\r\n", "\x0b", "\x0c", "\u00e9", "-"]


@given(st.lists(st.sampled_from(LINE_PIECES), max_size=40).map("".join), st.sampled_from(WIDE))
@example("\x0b\x0c" * 40 + MARKER + "\r\n\x0b" + MARKER, "")
def test_cited_lines_and_code_walls_with_every_break_match_the_twin(
    implementation: str, text: str, wide: str
) -> None:
    # A vertical tab and a form feed lie between LF and CR: the range compared finds them,
    # and they are passed over.
    twin, kernel = twin_and_kernel(implementation)
    text = wide + text
    parser = Parser()
    starts = [citation.start for citation in parser.finditer(text)]
    consumed = parser.spans(text)
    assert kernel.cited_lines(text, starts, consumed, " `-") == twin.cited_lines(  # type: ignore[attr-defined]
        text, starts, consumed, " `-"
    )
    assert kernel.code_walls(text) == twin.code_walls(text)  # type: ignore[attr-defined]


@pytest.mark.parametrize("wide", WIDE)
def test_cited_lines_read_many_lines_before_a_citation(implementation: str, wide: str) -> None:
    # Uncited lines before the first citation (with letters, with other characters, with
    # filler only, long and short), read in the one pass that finds the cited line's start;
    # a marker before the first citation on its line sends the line the other way.
    twin, kernel = twin_and_kernel(implementation)
    parser = Parser()
    lines = ["prose here", "@@@ " * 20, "` " * 40, "", "\x0b\x0c", "-", "x" + "`" * 70]
    for count in range(len(lines) + 1):
        for last in ("` ` ", "a ", "@ ", f"{S}cite{D}{E} ", f"{S}x "):
            for brk in ("\n", "\r", "\r\n"):
                text = wide + brk.join([*lines[:count], last + MARKER + " `", "z " + MARKER])
                starts = [citation.start for citation in parser.finditer(text)]
                consumed = parser.spans(text)
                got = kernel.cited_lines(text, starts, consumed, " `-")  # type: ignore[attr-defined]
                assert got == twin.cited_lines(text, starts, consumed, " `-"), (count, last, brk)  # type: ignore[attr-defined]


# -- the online pairing ------------------------------------------------------------------------


@pytest.mark.parametrize("wide", ["", "\ue200"])
@pytest.mark.parametrize("length", [1, 2, 3, 7, 8, 9, 12])
def test_openers_of_every_length_at_every_alignment(
    implementation: str, wide: str, length: int
) -> None:
    # An opener of `length` waiting over runs one shorter and one longer (and, split by a
    # backslash, an escaped one), its closer at every place around the vector width; then
    # one never closed (the rest of its lines read again).
    twin, kernel = twin_and_kernel(implementation)
    tick = "`" * length
    for shift in range(40):
        for middle in ("`" * (length + 1) + " ", "`" * max(length - 1, 1) + " ", "\\" + tick + " "):
            text = "x" + wide + tick + " " + "a" * shift + middle * 5 + tick + " z"
            assert kernel.code_walls(text) == twin.code_walls(text), (shift, middle)  # type: ignore[attr-defined]
            text = "x" + wide + tick + " " + "a" * shift + middle * 5 + "\n" + middle * 9
            assert kernel.code_walls(text) == twin.code_walls(text), (shift, middle)  # type: ignore[attr-defined]


def test_pairing_grows_its_walls_in_the_scan(implementation: str) -> None:
    # Thousands of code spans in one paragraph (the walls grown while the scan runs), among
    # long runs that never close.
    twin, kernel = twin_and_kernel(implementation)
    text = "x\ue200" + ("`" * 3000 + " ``` " + "` " * 500) * 8
    assert kernel.code_walls(text) == twin.code_walls(text)  # type: ignore[attr-defined]
    starts, ends = kernel.code_spans(text)  # type: ignore[attr-defined]
    assert list(zip(starts, ends, strict=True)) == twin.code_walls(text)  # type: ignore[attr-defined]


# -- which characters occur -------------------------------------------------------------------

PRESENT_TEXTS = st.lists(
    st.sampled_from(["*", "_", "\\", "a", " ", "\u00e9", "\u012a", "\u015f", "\u8000", S, "`" * 40])
).map("".join)


@given(
    PRESENT_TEXTS,
    st.sampled_from(WIDE),
    st.sampled_from(["*_\\", "*", "_*", "\x00*", "ab\u00e9*_", ""]),
)
@example("\u012a\u015f\u805c" * 30, "", "*_\\")
def test_present_matches_the_twin(implementation: str, text: str, wide: str, chars: str) -> None:
    # Units above 0xFF whose low byte is one of the characters (U+012A, U+015F, U+805C) are
    # none of them: the kernel packs units to bytes with saturation, not truncation.
    twin, kernel = twin_and_kernel(implementation)
    text = wide + text
    assert kernel.present(text, chars) == twin.present(text, chars)  # type: ignore[attr-defined]
    assert twin.present(text, chars) == "".join(  # type: ignore[attr-defined]
        char for char in dict.fromkeys(chars) if char in text
    )


@pytest.mark.parametrize("wide", WIDE)
def test_present_at_every_vector_alignment(implementation: str, wide: str) -> None:
    twin, kernel = twin_and_kernel(implementation)
    for size in range(0, 70):
        for at in range(size):
            for char in ("*", "_", "\\"):
                text = wide + "`" * at + char + " " * (size - at)
                assert kernel.present(text, "*_\\") == twin.present(text, "*_\\"), (size, at)  # type: ignore[attr-defined]


@pytest.mark.c_extension
def test_present_checks_its_arguments() -> None:
    kernel = load("commonmark", "cython")
    with pytest.raises(TypeError, match="chars"):
        kernel.present("a", None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="text"):
        kernel.present(None, "a")  # type: ignore[arg-type]


# -- every vector path ------------------------------------------------------------------------

CHECK = r"""
import itertools
from citemark import Parser
from citemark._kernels.loader import load
kernel, twin = load("commonmark", "cython"), load("commonmark", "python")
S, D, E = "\ue200", "\ue202", "\ue201"
MARKER = f"{S}cite{D}turn0file0{E}"
parser = Parser()
checked = 0
for wide, shift in itertools.product(("", "\u00e9", "\ue200", "\U0001f600"), range(0, 70, 3)):
    for length in (1, 2, 3, 8, 9):
        tick = "`" * length
        for middle in ("`" * (length + 1) + " ", "\\" + tick + " ", "` "):
            text = "x" + wide + "a" * shift + tick + " " + middle * 20 + tick + "\n" + middle * 7
            assert kernel.code_walls(text) == twin.code_walls(text), (wide, shift, length)
            checked += 1
    for brk in ("\n", "\r", "\r\n", "\x0b\n", "\x0c\r"):
        text = wide + "a" * shift + brk + "` " * 40 + MARKER + brk + "@" * shift + MARKER + brk
        starts = [c.start for c in parser.finditer(text)]
        consumed = parser.spans(text)
        assert kernel.cited_lines(text, starts, consumed, " `") == twin.cited_lines(
            text, starts, consumed, " `"
        ), (wide, shift, brk)
        checked += 1
    for chars in ((S, E, D), ("<", ">", "|")):
        text = wide + "x" * shift + chars[0] + "cite " + chars[2] * 3 + " " * 40 + chars[1] * 2
        results = []
        for module in (kernel, twin):
            found, foreign = [], []
            module.strays(text, 0, len(text), 7, *chars, found, foreign)
            results.append((found, foreign))
        assert results[0] == results[1], (wide, shift, chars)
        checked += 1
    for at in range(0, 70, 7):
        text = wide + "`" * at + "*" + "\u012a\u015f\u805c" * shift + "\\"
        assert kernel.present(text, "*_\\") == twin.present(text, "*_\\"), (wide, shift, at)
        checked += 1
print(kernel.cm_path() if hasattr(kernel, "cm_path") else "-", checked)
"""


@pytest.mark.c_extension
@pytest.mark.parametrize("level", ["portable", "sse2", "avx2"])
def test_every_vector_path_matches_the_twin(level: str) -> None:
    env = {**os.environ, "CITEMARK_SIMD": level}
    done = subprocess.run(
        [sys.executable, "-c", CHECK], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[-1]) > 1000
