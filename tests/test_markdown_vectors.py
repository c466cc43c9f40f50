"""The compiled code scan held to the twin on every search path of `simd.h`:

- line breaks (CR, LF: a vertical tab or a form feed between them is none) in every width;
- the online pairing of backtick runs (an opener waiting for a run of its length finds it
  among many shorter and longer runs; one never closed has the rest of its lines read
  again), at every place about the width of a vector search.

The search path is chosen once at import (CITEMARK_SIMD caps it), so the paths other than
the machine's run in interpreters of their own.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from citemark._kernels.loader import load

S, D, E = "\ue200", "\ue202", "\ue201"
MARKER = f"{S}cite{D}turn0file0{E}"
WIDE = ["", "\u00e9", "\u0100", "\U0001f600"]


def twin_and_kernel(implementation: str) -> tuple[object, object]:
    return load("commonmark", "python"), load("commonmark", implementation)  # type: ignore[arg-type]


# -- line breaks --------------------------------------------------------------------------------

LINE_PIECES = [MARKER, "a", "@", " ", "`", "~", "\n", "\r", "\r\n", "\x0b", "\x0c", "\u00e9", "-"]


@given(st.lists(st.sampled_from(LINE_PIECES), max_size=40).map("".join), st.sampled_from(WIDE))
@example("\x0b\x0c" * 40 + MARKER + "\r\n\x0b" + MARKER, "")
def test_find_code_ranges_with_every_break_match_the_twin(
    implementation: str, text: str, wide: str
) -> None:
    # A vertical tab and a form feed lie between LF and CR: they are passed over.
    twin, kernel = twin_and_kernel(implementation)
    text = wide + text
    assert kernel.find_code_ranges(text) == twin.find_code_ranges(text)  # type: ignore[attr-defined]
    assert kernel.line_spans(text) == twin.line_spans(text)  # type: ignore[attr-defined]


# -- the online pairing ------------------------------------------------------------------------


@pytest.mark.parametrize("wide", ["", "\ue200"])
@pytest.mark.parametrize("length", [1, 2, 3, 7, 8, 9, 12])
def test_openers_of_every_length_at_every_alignment(
    implementation: str, wide: str, length: int
) -> None:
    # An opener of `length` waiting over runs one shorter and one longer (and, split by a
    # backslash, an escaped one), its closer at every place around a vector's width; then
    # one never closed (the rest of its lines read again).
    twin, kernel = twin_and_kernel(implementation)
    tick = "`" * length
    for shift in range(40):
        for middle in ("`" * (length + 1) + " ", "`" * max(length - 1, 1) + " ", "\\" + tick + " "):
            text = "x" + wide + tick + " " + "a" * shift + middle * 5 + tick + " z"
            assert kernel.find_code_ranges(text) == twin.find_code_ranges(text), (shift, middle)  # type: ignore[attr-defined]
            text = "x" + wide + tick + " " + "a" * shift + middle * 5 + "\n" + middle * 9
            assert kernel.find_code_ranges(text) == twin.find_code_ranges(text), (shift, middle)  # type: ignore[attr-defined]


def test_pairing_grows_its_code_ranges_in_the_scan(implementation: str) -> None:
    # Thousands of code spans in one paragraph (the arrays grown while the scan runs), among
    # long runs that never close.
    twin, kernel = twin_and_kernel(implementation)
    text = "x\ue200" + ("`" * 3000 + " ``` " + "` " * 500) * 8
    assert kernel.find_code_ranges(text) == twin.find_code_ranges(text)  # type: ignore[attr-defined]
    starts, ends = kernel.code_spans(text)  # type: ignore[attr-defined]
    assert list(zip(starts, ends, strict=True)) == twin.find_code_ranges(text)  # type: ignore[attr-defined]


# -- every search path ------------------------------------------------------------------------

CHECK = r"""
import itertools
from citemark._kernels.loader import load
kernel, twin = load("commonmark", "cython"), load("commonmark", "python")
S, D, E = "\ue200", "\ue202", "\ue201"
MARKER = f"{S}cite{D}turn0file0{E}"
checked = 0
for wide, shift in itertools.product(("", "\u00e9", "\ue200", "\U0001f600"), range(0, 70, 3)):
    for length in (1, 2, 3, 8, 9):
        tick = "`" * length
        for middle in ("`" * (length + 1) + " ", "\\" + tick + " ", "` "):
            text = "x" + wide + "a" * shift + tick + " " + middle * 20 + tick + "\n" + middle * 7
            found = kernel.find_code_ranges(text)
            assert found == twin.find_code_ranges(text), (wide, shift, length)
            checked += 1
    for brk in ("\n", "\r", "\r\n", "\x0b\n", "\x0c\r"):
        text = wide + "a" * shift + brk + "` " * 40 + MARKER + brk + "@" * shift + "`x`" + brk
        assert kernel.find_code_ranges(text) == twin.find_code_ranges(text), (wide, shift, brk)
        assert kernel.line_spans(text) == twin.line_spans(text), (wide, shift, brk)
        checked += 1
print(checked)
"""


@pytest.mark.slow  # an interpreter per vector path
@pytest.mark.c_extension
@pytest.mark.parametrize("level", ["portable", "sse2", "avx2"])
def test_every_search_path_matches_the_twin(level: str) -> None:
    env = {**os.environ, "CITEMARK_SIMD": level}
    done = subprocess.run(
        [sys.executable, "-c", CHECK], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[-1]) > 1000
