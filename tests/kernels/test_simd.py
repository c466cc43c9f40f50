"""Every vector path of the kernel (AVX2, SSE2/NEON, portable) gives the twin's results.

The path is chosen once at import, so each one runs in its own interpreter, capped with
CITEMARK_SIMD.  Markers sit at every offset around the vector widths, in 2- and 4-byte text.
"""

import os
import subprocess
import sys

import pytest

CHECK = r"""
import citemark._kernels.scan_c as kernel, citemark._kernels.scan_py as twin
marker = "\ue200cite\ue202turn0search1\ue202L1-L2\ue201"
markers = ("\ue200", "\ue202", "\ue201")
k_grammar = kernel.Grammar(("cite",), *markers)
t_grammar = twin.Grammar(("cite",), *markers)
checked = 0
for filler in ("\u00e9", "\u4e2d", "\U0001f600"):
    for size in range(0, 70):
        for at in range(0, size + 1, 3):
            text = filler * at + marker + filler * (size - at) + "\ue200"
            assert kernel.extract(text, k_grammar) == twin.extract(text, t_grammar), (size, at)
            assert kernel.strip(text, k_grammar) == twin.strip(text, t_grammar), (size, at)
            checked += 1
# Ids and locators of every length around the narrowing copy's 8-unit steps, in 2-byte text,
# enough citations a call for the kernel to share its strings; Latin-1 ids under custom rules.
import re
from citemark.parser import CitationSpan
custom = (re.compile(r"\w+"), re.compile(r"L\d+"))
k_custom = kernel.Grammar(("cite",), *markers, source_id=custom[0], locator=custom[1])
t_custom = twin.Grammar(("cite",), *markers, source_id=custom[0], locator=custom[1])
for length in range(1, 41):
    for letter, k_rules, t_rules in (("x", k_grammar, t_grammar), ("\u00e9", k_custom, t_custom)):
        ids = [letter * length, ("ab" * 30)[:length], f"turn0search{'9' * length}"]
        body = "\ue202".join(ids) + f"\ue202 L{'7' * length} "
        last = f"\ue200cite\ue202{ids[0]}\ue201"
        text = "\u00e9 " + f"\ue200cite\ue202{body}\ue201 y " * 40 + last
        assert kernel.extract(text, k_rules) == twin.extract(text, t_rules), (letter, length)
        got = kernel.records(text, k_rules, CitationSpan, 0)
        assert got == twin.records(text, t_rules, CitationSpan, 0), (letter, length)
        assert got and got[0].source_ids == tuple(ids), (letter, length)
        checked += 1
# The vector end of an id run: a unit just outside each id range (or one whose low byte is
# an id character) at every place of a 2-byte id around the 8-unit steps, then spaces.
edges = "/:@[`{,.^\x7f\x80\u0141\u0161\u0130\u015f\u012d\ue230 "
for length in range(1, 26):
    for place in range(length):
        for bad in edges:
            part = ("turn0search" * 3)[:place] + bad + ("x9-_Z" * 6)[: length - place - 1]
            for body in (part, f"{part}  \ue202turn1news2", f"turn1news2\ue202{part}  "):
                text = f"\u00e9\ue200cite\ue202{body}\ue201 \ue200cite\ue202a\ue202L1\ue201"
                assert kernel.spans(text, k_grammar) == twin.spans(text, t_grammar), (place, bad)
                assert kernel.extract(text, k_grammar) == twin.extract(text, t_grammar), body
                checked += 1
# A DELIM that is itself an id character ends the judge's id loop, in every storage width.
for delim in "-_a1":
    k_ascii = kernel.Grammar(("cite",), "\ue200", delim, "\ue201")
    t_ascii = twin.Grammar(("cite",), "\ue200", delim, "\ue201")
    for filler in ("x", "\u00e9", "\u4e2d", "\U0001f600"):
        body = delim.join(("turn0search1", "x-y_z9", " b ", "L1-L2"))
        text = f"{filler}\ue200cite{delim}{body}\ue201{filler}\ue200cite{delim}a{delim}\ue201"
        assert kernel.extract(text, k_ascii) == twin.extract(text, t_ascii), (delim, filler)
        assert kernel.spans(text, k_ascii) == twin.spans(text, t_ascii), (delim, filler)
        checked += 1
print(kernel.SIMD, checked)
"""


@pytest.mark.parametrize("level", ["portable", "sse2", "avx2"])
def test_vector_path_matches_twin(level):
    env = {**os.environ, "CITEMARK_SIMD": level}
    done = subprocess.run(
        [sys.executable, "-c", CHECK], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    path, checked = done.stdout.split()
    assert int(checked) > 1000
    # A cap never raises the level above what the CPU has.
    assert path in {"portable", level, "sse2", "neon"}
    if level == "portable":
        assert path == "portable"
