"""Strip or extract the citation markers of a pyarrow string column (`pip install citemark[arrow]`).

    import citemark.arrow
    clean = citemark.arrow.strip(table["output_text"])        # same type, nulls and length
    found = citemark.arrow.extract(table["output_text"])      # list<struct<...>>, one list a row

Both take a `pyarrow.Array` or `pyarrow.ChunkedArray` of `string` or `large_string` (a
`string_view` column is cast to `large_string` first), or a dictionary-encoded one (pandas'
`category`: each distinct text is done once), any slice of one (`array.offset`), with nulls,
and `families=` as in `extract_citations`.  Each row gets exactly what
`strip_citations(t, extract_citations(t))` / `extract_citations(t)` give for it; a null row
stays null.

* `strip` returns an array of the input's type (a chunked array for a chunked one, chunk by
  chunk; `string_view` in, `string_view` out; a dictionary keeps its indices).
* `extract` returns a list array with one list of citations per row, each a struct with the
  keys of a `Citation` dict: `raw`, `family`, `source_ids` (a list of strings), `locator` (null
  when absent), `start`, `end` (int64 code point offsets into the row, as in Python).  For a
  `string` input the type is `list<struct<raw: string, ...>>` (`citation_type()`); for a
  `large_string` or `string_view` input every string and list in it is the large variant
  (`citation_type(large=True)`).  `.to_pylist()` gives the `Citation` dicts.

Two paths, one behaviour, one seam: the compiled kernel (`arrow_c`) and its pure twin
(`arrow_py`) both take the Arrow buffers of a chunk and give the buffers of the result, which
this module turns into arrays.  The kernel reads UTF-8 bytes in place (no Python `str` per row,
GIL released); the twin decodes each row and scans it with the pure scanner.  A non-null row
that is not well-formed UTF-8 (Arrow's rule, which a foreign array or `from_buffers` may break)
is a ValueError naming it: "row 3 is not valid UTF-8", counted over the whole (chunked) array.
`IMPLEMENTATION` says which path is active; `CITEMARK_IMPLEMENTATION=python` forces the pure
one, `=cython` demands the compiled one.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any, TypeAlias

try:
    import pyarrow as pa
except ImportError as error:  # the optional extra is missing: say what to install
    raise ImportError(
        f"citemark.arrow needs pyarrow ({error}): pip install pyarrow",
        name=error.name,
    ) from error

from ._core.grammar import DEFAULT_FAMILIES, check_families
from ._kernels.loader import compiled, load

_kernel = load("arrow")
IMPLEMENTATION: str = "cython" if compiled(_kernel) else "python"

# pyarrow has no type information: a pa.Array or pa.ChunkedArray.
ArrayLike: TypeAlias = Any

# The kernels' message for a bad row; a chunked array renumbers it from its first chunk.
_BAD_ROW = re.compile(r"row (\d+) is not valid UTF-8")


def citation_type(*, large: bool = False) -> pa.DataType:
    """The type of `extract`'s result: a list of Citation structs per row."""
    text = pa.large_string() if large else pa.string()
    listing = pa.large_list if large else pa.list_
    citation = pa.struct(
        [
            ("raw", text),
            ("family", text),
            ("source_ids", listing(text)),
            ("locator", text),
            ("start", pa.int64()),
            ("end", pa.int64()),
        ]
    )
    return listing(citation)


class Arrow:
    """`strip` and `extract` over one kernel: `arrow_c` (compiled) or `arrow_py` (pure).

    The module-level functions are the methods of the instance over the active kernel; the
    tests build one of each.
    """

    def __init__(self, kernel: ModuleType) -> None:
        self.kernel = kernel

    def strip(self, array: ArrayLike, *, families: Iterable[str] = DEFAULT_FAMILIES) -> Any:
        """`array` without the valid citations of its rows; the same type and length."""
        work_type = _work_type(array)  # rejects what is not a string array
        if not families:
            return array
        if pa.types.is_dictionary(array.type):

            def distinct(chunk: pa.Array) -> pa.Array:
                values = _by_row(chunk, lambda: self.strip(chunk.dictionary, families=families))
                if values is None:  # row by row
                    done = self.strip(chunk.dictionary_decode(), families=families)
                    return done.dictionary_encode().cast(chunk.type)
                return pa.DictionaryArray.from_arrays(chunk.indices, values)

            return _each_chunk(array, distinct, array.type)
        encoded = _encode(check_families(families))

        def one(chunk: pa.Array) -> pa.Array:
            layout = _layout(chunk)
            result = self.kernel.strip_utf8(*layout, encoded, _allocate)
            if result is None:  # no citation in any row
                return chunk
            validity, offsets, data = result
            # data has room for the input rows: give back what the removed bytes left.
            width = layout[-1]
            # The last offset, read with struct: int.from_bytes gives a fresh 0 whose digit
            # CPython 3.11 leaves unset, which pyarrow's resize then reads (valgrind).
            data.resize(
                struct.unpack(_OFFSET_FORMAT[width], offsets[-width:])[0], shrink_to_fit=True
            )
            return pa.Array.from_buffers(
                chunk.type,
                len(chunk),
                [_buffer(validity), offsets, data],
                null_count=chunk.null_count,
            )

        result_type = array.type
        if work_type != result_type:  # string_view: work on large_string, give a view back

            def viewed(chunk: pa.Array) -> pa.Array:
                return one(chunk.cast(work_type)).cast(result_type)

            return _each_chunk(array, viewed, result_type)
        return _each_chunk(array, one, result_type)

    def extract(self, array: ArrayLike, *, families: Iterable[str] = DEFAULT_FAMILIES) -> Any:
        """The valid citations of each row, as a list array (see the module's doc)."""
        work_type = _work_type(array)
        result_type = citation_type(large=pa.types.is_large_string(work_type))
        if pa.types.is_dictionary(array.type):

            def distinct(chunk: pa.Array) -> pa.Array:
                found = _by_row(chunk, lambda: self.extract(chunk.dictionary, families=families))
                if found is None:  # row by row
                    return self.extract(chunk.dictionary_decode(), families=families)
                return found.take(chunk.indices)

            return _each_chunk(array, distinct, result_type)
        encoded = _encode(check_families(families) if families else ())

        def one(chunk: pa.Array) -> pa.Array:
            if chunk.type != work_type:
                chunk = chunk.cast(work_type)
            return _citations(
                self.kernel.extract_utf8(*_layout(chunk), encoded, _allocate), chunk, result_type
            )

        return _each_chunk(array, one, result_type)


def _work_type(array: Any) -> pa.DataType:
    """The type the kernels read: string and large_string as they are, a view as large (a
    dictionary's values: its texts)."""
    if not isinstance(array, (pa.Array, pa.ChunkedArray)):
        raise TypeError(
            f"array must be a pyarrow Array or ChunkedArray of strings, not {type(array).__name__}"
        )
    kind = array.type.value_type if pa.types.is_dictionary(array.type) else array.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return kind
    if pa.types.is_string_view(kind):
        return pa.large_string()
    raise TypeError(f"array must hold string, large_string or string_view values, not {array.type}")


def _by_row(chunk: pa.DictionaryArray, work: Callable[[], pa.Array]) -> pa.Array | None:
    """`work()` on a dictionary chunk's values, each distinct text once.  A value that is not
    UTF-8 is named by the first row that holds it; when no row does (a slice shares its
    dictionary), None: the caller does the rows themselves."""
    try:
        return work()
    except ValueError as error:
        bad = _BAD_ROW.fullmatch(str(error))
        if bad is None:
            raise
        import pyarrow.compute as pc

        row = pc.index(chunk.indices, int(bad.group(1))).as_py()
        if row >= 0:
            raise ValueError(f"row {row} is not valid UTF-8") from None
        return None


def _each_chunk(
    array: ArrayLike, one: Callable[[pa.Array], pa.Array], result_type: pa.DataType
) -> Any:
    if not isinstance(array, pa.ChunkedArray):
        return one(array)
    done = []
    first_row = 0
    for chunk in array.chunks:
        try:
            done.append(one(chunk))
        except ValueError as error:
            bad = _BAD_ROW.fullmatch(str(error))
            if bad is None or not first_row:
                raise
            row = first_row + int(bad.group(1))
            raise ValueError(f"row {row} is not valid UTF-8") from None
        first_row += len(chunk)
    return pa.chunked_array(done, type=result_type)


def _encode(families: tuple[str, ...]) -> tuple[bytes, ...]:
    # A lone surrogate cannot occur in valid UTF-8 text, so a family holding one never fits,
    # exactly as it never fits a str decoded from UTF-8.
    return tuple(family.encode("utf-8", "surrogatepass") for family in families)


def _layout(chunk: pa.Array) -> tuple[Any, Any, Any, int, int, int]:
    """The arguments the kernels take for `chunk` (before the families)."""
    validity, offsets, data = chunk.buffers()
    width = 8 if pa.types.is_large_string(chunk.type) else 4
    return (
        validity if chunk.null_count else None,
        b"" if offsets is None else offsets,  # a zero-length array may have none
        data,
        chunk.offset,
        len(chunk),
        width,
    )


def _citations(out: dict[str, Any], chunk: pa.Array, result_type: pa.DataType) -> pa.Array:
    """The list<struct<...>> array of the buffers an extract kernel gave for `chunk`."""
    citation = result_type.value_type
    text = citation.field("raw").type
    n = out["n_citations"]

    def strings(offsets: str, data: str, validity: str | None = None, null_count: int = 0) -> Any:
        bits = _buffer(out[validity]) if validity else None
        buffers = [bits, pa.py_buffer(out[offsets]), pa.py_buffer(out[data])]
        return pa.Array.from_buffers(text, n, buffers, null_count=null_count)

    ids = pa.Array.from_buffers(
        citation.field("source_ids").type,
        n,
        [None, pa.py_buffer(out["ids_lists"])],
        null_count=0,
        children=[
            pa.Array.from_buffers(
                text,
                out["n_ids"],
                [None, pa.py_buffer(out["ids_offsets"]), pa.py_buffer(out["ids_data"])],
                null_count=0,
            )
        ],
    )
    fields = [
        strings("raw_offsets", "raw_data"),
        strings("family_offsets", "family_data"),
        ids,
        strings("locator_offsets", "locator_data", "locator_validity", n - out["n_locators"]),
        pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(out["starts"])], null_count=0),
        pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(out["ends"])], null_count=0),
    ]
    structs = pa.StructArray.from_arrays(fields, fields=list(citation))
    return pa.Array.from_buffers(
        result_type,
        len(chunk),
        [_buffer(out["list_validity"]), pa.py_buffer(out["lists"])],
        null_count=chunk.null_count,
        children=[structs],
    )


_OFFSET_FORMAT = {4: "<i", 8: "<q"}  # an offset of `width` bytes, little-endian as Arrow's


def _allocate(size: int) -> pa.ResizableBuffer:
    """The kernels' output buffers, from pyarrow's memory pool: it reuses the pages of the
    buffers freed before (memory fresh from the system is zeroed page by page on first touch,
    which costs more than the whole scan for a column past the caches)."""
    return pa.allocate_buffer(size, resizable=True)


def _buffer(owned: Any) -> pa.Buffer | None:
    return None if owned is None else pa.py_buffer(owned)


_default = Arrow(_kernel)
strip = _default.strip
extract = _default.extract

__all__ = ["IMPLEMENTATION", "Arrow", "citation_type", "extract", "strip"]
