"""The pure-Python twin of `_arrow_c`: one Python `str` per row, through the drop-in API.

Each row goes through `strip_many` / `extract_many` (`strip_citations(t, extract_citations(t))`
and `extract_citations(t)` per row) of the active scanner, so this path is the definition that
the compiled path is held to.  It works on one plain `string` or `large_string` array (any
offset, any nulls); `citemark.arrow` handles chunked arrays, views and families.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from . import extract_many, strip_many


def strip_chunk(chunk: pa.Array, families: tuple[str, ...]) -> pa.Array:
    values = chunk.to_pylist()
    present = [value for value in values if value is not None]
    cleaned = iter(strip_many(present, families=families))
    return pa.array([None if value is None else next(cleaned) for value in values], type=chunk.type)


def extract_chunk(chunk: pa.Array, families: tuple[str, ...], result_type: pa.DataType) -> Any:
    values = chunk.to_pylist()
    present = [value for value in values if value is not None]
    found = iter(extract_many(present, families=families))
    return pa.array([None if value is None else next(found) for value in values], type=result_type)
