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
