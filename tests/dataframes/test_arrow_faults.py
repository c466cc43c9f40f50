"""The Arrow path's strip of rows that lose every byte: the result's length is read from the
last offset with `struct` (int.from_bytes gives a fresh 0 whose digit CPython 3.11 leaves
unset, which pyarrow's resize then read: README's valgrind recipe failed there)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from citemark.arrow import Arrow

M = "\ue200cite\ue202turn0search0\ue201"


@pytest.mark.parametrize("large", [False, True])
def test_strip_of_rows_that_are_only_citations(large: bool, implementation: str) -> None:
    from citemark._kernels.loader import load

    arrow = Arrow(load("arrow", implementation))
    array = pa.array([M, M + M, None, ""], type=pa.large_string() if large else pa.string())
    stripped = arrow.strip(array)
    assert stripped.to_pylist() == ["", "", None, ""]
    assert stripped.buffers()[2] is None or stripped.buffers()[2].size == 0
