"""citemark.arrow: both paths agree with per-row strip_citations / extract_citations.

The `arrow` fixture runs every test on the compiled path (`citemark._kernels.arrow_c`, imported
directly: a missing build fails these cases, it never skips them) and on the pure path
(`citemark._kernels.arrow_py`, Python strings row by row).  The reference is the drop-in API
over the pure scanner, row by row, so a bug shared by the two Arrow paths still shows.

Run once under valgrind (see README, Development):
    PYTHONMALLOC=malloc valgrind --error-exitcode=1 python -m pytest \
        tests/dataframes/test_arrow.py -q
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from typing import Any

import pyarrow as pa  # a missing pyarrow fails these tests, it does not skip them
import pytest
from hypothesis import given
from hypothesis import strategies as st

import citemark._kernels.scan_py
import citemark.arrow
from citemark._core.dropin import DropIn

S, D, E = "\ue200", "\ue202", "\ue201"
reference = DropIn(citemark._kernels.scan_py)

PATHS = {"compiled": "citemark._kernels.arrow_c", "pure": "citemark._kernels.arrow_py"}


@pytest.fixture(scope="module", params=sorted(PATHS), ids=sorted(PATHS))
def arrow(request: pytest.FixtureRequest) -> citemark.arrow.Arrow:
    return citemark.arrow.Arrow(importlib.import_module(PATHS[request.param]))


def expected_strip(values: list[str | None], families: Any = ("cite",)) -> list[str | None]:
    return [
        None
        if value is None
        else reference.strip_citations(value, reference.extract_citations(value, families=families))
        for value in values
    ]


def expected_extract(values: list[str | None], families: Any = ("cite",)) -> list[Any]:
    return [
        None if value is None else reference.extract_citations(value, families=families)
        for value in values
    ]


# --- strategies: rows weighted toward markers, whitespace and digits of every width -------

IDS = ["turn0search0", "turn1news2", "turn0file1", "turn2view3", "block5", "a-b_C9"]
LOCATORS = ["L8-L13", "L8", "L١-L٢", "L１-L２", "L𝟎-L𝟗", "L8-13", "L", "L²", "L-L1"]
SPACES = [" ", "\t", "\n", "\x1c", "\x1f", "\x85", "\xa0", "\u1680", "\u2003", "\u2028", "\u3000"]
ODD = ["é", "ÿ", "中", "\U0001f600", "\U00010348", "\x00", "\u200b", "\ue203", "\ue204", "\uee00"]
ODD += ["\ue288", "-", "_", ".", "https://example.com/a", "\\ue202", "x y"]
FAMILIES = ["cite", "filecite", "navlist", "", "é", "\U0001f600"]

BODIES = [
    *IDS,
    *LOCATORS,
    *ODD,
    *SPACES,
    *(i + D + loc for i in IDS[:3] for loc in LOCATORS),
    *(a + D + b for a in IDS for b in IDS[:2]),
    *(space + IDS[0] + space + D + space + "L1" + space for space in SPACES),
    *(IDS[1] + D + odd for odd in ODD),
    D + IDS[2] + D + D,
    D,
    "",
    S + "cite" + D + IDS[0],
]


def rows_text(names: list[str]) -> st.SearchStrategy[str]:
    marker = st.tuples(
        st.sampled_from(names), st.sampled_from(BODIES), st.sampled_from([E, E, E, ""])
    ).map(lambda parts: S + parts[0] + D + parts[1] + parts[2])
    loose = st.sampled_from([S, S, D, D, E, E, E, *IDS, *LOCATORS, *SPACES, *ODD, *names, "pr "])
    # no lone surrogates: Arrow strings are UTF-8
    character = st.characters(exclude_categories=("Cs",))
    return st.lists(st.one_of(marker, loose, character), max_size=10).map("".join)


row_lists = st.lists(st.one_of(st.none(), rows_text(["cite", "cite", *FAMILIES])), max_size=8)
family_lists = st.lists(
    st.one_of(st.sampled_from(FAMILIES), st.text([*"cite.|()*", S, D, E, " "], max_size=3)),
    max_size=3,
).map(tuple)


@st.composite
def sliced(draw: st.DrawFn) -> tuple[list[str | None], int, int]:
    values = draw(row_lists)
    offset = draw(st.integers(0, len(values)))
    length = draw(st.integers(0, len(values) - offset))
    return values, offset, length


TYPES = [pa.string(), pa.large_string()]


# --- differential ------------------------------------------------------------------------


@given(case=sliced(), large=st.booleans())
def test_strip_matches_per_row_strip(arrow, case, large) -> None:
    values, offset, length = case
    array = pa.array(values, type=TYPES[large]).slice(offset, length)
    result = arrow.strip(array)
    assert result.type == array.type
    assert result.to_pylist() == expected_strip(values[offset : offset + length])
    result.validate(full=True)


@given(case=sliced(), large=st.booleans())
def test_extract_matches_per_row_extract(arrow, case, large) -> None:
    values, offset, length = case
    array = pa.array(values, type=TYPES[large]).slice(offset, length)
    result = arrow.extract(array)
    assert result.type == citemark.arrow.citation_type(large=large)
    assert result.to_pylist() == expected_extract(values[offset : offset + length])
    result.validate(full=True)


@given(values=row_lists, families=family_lists)
def test_any_families_match_per_row(arrow, values, families) -> None:
    array = pa.array(values, type=pa.string())
    assert arrow.strip(array, families=families).to_pylist() == expected_strip(values, families)
    assert arrow.extract(array, families=families).to_pylist() == expected_extract(values, families)


@given(chunks=st.lists(row_lists, max_size=4), large=st.booleans())
def test_chunked_arrays_chunk_by_chunk(arrow, chunks, large) -> None:
    array = pa.chunked_array([pa.array(c, type=TYPES[large]) for c in chunks], type=TYPES[large])
    flat = [value for chunk in chunks for value in chunk]
    stripped = arrow.strip(array)
    assert isinstance(stripped, pa.ChunkedArray)
    assert stripped.type == array.type
    assert [len(c) for c in stripped.chunks] == [len(c) for c in chunks]
    assert stripped.to_pylist() == expected_strip(flat)
    found = arrow.extract(array)
    assert isinstance(found, pa.ChunkedArray)
    assert found.to_pylist() == expected_extract(flat)


# --- examples ----------------------------------------------------------------------------

FIELD_ROWS = [
    "Answer content \ue200cit" + "e\ue202turn0search5\ue202turn0search15\ue201 continues here.",
    "keep\ue200broken prose\ue200cite\ue202turn1search0\ue201after",
    "The setting is supported. \ue200cite\ue202turn1view0\ue202turn1view1\ue201",
    "Evidence \U0001f600 \ue200cite\ue202turn0search0\ue202turn0search1\ue201.",
    "```text\n\ue200cite\ue202turn0search0\ue201\n```\n",
    "\u200b\ue203Puerto Vallarta offers condo rentals.\ue204 "
    "\ue200cite\ue202turn0search2\ue201\ue206",
    "a \ue200cite\ue202turn0file0\ue202L8-L13\ue201 b",
    "\ue200cite\ue202\u3000turn0file0\xa0\ue202\x85L١-L٢\u2028\ue201",
    "\ue200cite\ue202turn0file0\ue202L𝟖\ue201 astral digits",
    "\ue200cite\ue202\ue201 empty body, \ue200cite\ue202turn1search0\ue201",
    "nested \ue200cite\ue202a\ue200cite\ue202b\ue201 \ue200cite\ue202c\ue201",
    "no stop \ue200cite\ue202turn0search0 and never closed",
    "",
    None,
]


def test_field_examples(arrow) -> None:
    array = pa.array(FIELD_ROWS)
    assert arrow.strip(array).to_pylist() == expected_strip(FIELD_ROWS)
    found = arrow.extract(array).to_pylist()
    assert found == expected_extract(FIELD_ROWS)
    assert found[3][0]["start"] == 11  # code points, not UTF-8 bytes nor UTF-16 units
    assert found[7][0]["source_ids"] == ["turn0file0"]
    assert found[7][0]["locator"] == "L١-L٢"


def test_parts_stripped_at_both_ends_by_every_whitespace(arrow) -> None:
    # A part is stripped from its end while the end is ASCII, forward past anything else.
    ends = ["", " ", "  \t", "\u3000", "\u3000 ", " \u2003 ", "\xa0\n", "\x85"]
    cores = ["a", "turn0search1", "é", "中x", "x中", "a b", "a\u3000b", "\U0001f600"]
    rows = [
        S + "cite" + D + left + core + right + D + left + "L1" + right + E
        for left in ends
        for right in ends
        for core in cores
    ]
    rows += [S + "cite" + D + left + core + left + E for left in ends for core in cores + ends]
    array = pa.array(rows)
    assert arrow.extract(array).to_pylist() == expected_extract(rows)
    assert arrow.strip(array).to_pylist() == expected_strip(rows)


def test_families_in_order_and_literal(arrow) -> None:
    rows = ["\ue200a.c\ue202x\ue201 \ue200abc\ue202y\ue201", "\ue200navlist\ue202t\ue202z\ue201"]
    for families in [("a.c",), ("abc", "a.c"), ("navlist", "cite"), "cite", iter(["abc"]), ()]:
        listed = list(families) if not isinstance(families, (str, tuple)) else families
        array = pa.array(rows)
        assert arrow.extract(array, families=iter(listed)).to_pylist() == expected_extract(
            rows, listed
        )
        assert arrow.strip(array, families=listed).to_pylist() == expected_strip(rows, listed)


def test_nulls_kept_and_empty_arrays(arrow) -> None:
    for kind in TYPES:
        empty = pa.array([], type=kind)
        assert arrow.strip(empty).to_pylist() == []
        assert arrow.extract(empty).to_pylist() == []
        nulls = pa.array([None, None, None], type=kind)
        assert arrow.strip(nulls).null_count == 3
        assert arrow.extract(nulls).to_pylist() == [None, None, None]
    none = pa.chunked_array([], type=pa.string())
    assert arrow.strip(none).num_chunks == 0
    assert arrow.extract(none).type == citemark.arrow.citation_type()


def test_null_count_and_validity_of_a_slice(arrow) -> None:
    values = [None, "\ue200cite\ue202a\ue201x", None, "y", None, "\ue200cite\ue202b\ue201", "z"]
    values = values * 3  # more than one validity byte, an offset not on a byte boundary
    for offset in range(0, 9):
        array = pa.array(values).slice(offset, 11)
        stripped = arrow.strip(array)
        stripped.validate(full=True)
        assert stripped.null_count == array.null_count
        assert stripped.is_null().to_pylist() == array.is_null().to_pylist()
        found = arrow.extract(array)
        found.validate(full=True)
        assert found.is_null().to_pylist() == array.is_null().to_pylist()


def test_string_view_is_cast_and_given_back(arrow) -> None:
    values = ["x \ue200cite\ue202a\ue201 y", None, "long enough not to be inlined in the view"]
    view = pa.array(values, type=pa.string_view())
    stripped = arrow.strip(view)
    assert stripped.type == pa.string_view()
    assert stripped.to_pylist() == expected_strip(values)
    found = arrow.extract(view)
    assert found.type == citemark.arrow.citation_type(large=True)
    assert found.to_pylist() == expected_extract(values)


@given(case=sliced(), large=st.booleans(), chunked=st.booleans())
def test_a_dictionary_is_done_as_its_texts(arrow, case, large, chunked) -> None:
    """pandas' `category`: each distinct text is done once, the indices kept."""
    values, offset, length = case
    array = pa.array(values, type=TYPES[large]).dictionary_encode().slice(offset, length)
    if chunked:
        array = pa.chunked_array([array, array], type=array.type)
    rows = array.to_pylist()
    stripped = arrow.strip(array)
    assert stripped.type == array.type
    assert stripped.to_pylist() == expected_strip(rows)
    found = arrow.extract(array)
    assert found.type == citemark.arrow.citation_type(large=large)
    assert found.to_pylist() == expected_extract(rows)
    for result in (stripped, found):
        result.validate(full=True)


def test_a_dictionary_value_not_utf8_is_named_by_its_first_row(arrow) -> None:
    array = pa.DictionaryArray.from_arrays(pa.array([None, 0, 3, 3]), invalid_array())
    for function in (arrow.strip, arrow.extract):
        with pytest.raises(ValueError, match=r"^row 2 is not valid UTF-8$"):
            function(array)
        with pytest.raises(ValueError, match=r"^row 4 is not valid UTF-8$"):
            function(pa.chunked_array([array.slice(0, 2), array]))
    # A slice may share a dictionary with a value no row of it holds: only its rows count.
    unused = pa.DictionaryArray.from_arrays(pa.array([0, 1, None]), invalid_array())
    assert arrow.strip(unused).to_pylist() == ["fine ", "ok", None]
    assert arrow.strip(unused).type == unused.type
    assert arrow.extract(unused).to_pylist() == expected_extract(
        ["fine \ue200cite\ue202turn0search0\ue201", "ok", None]
    )


def test_no_marker_at_all_gives_the_input_back(arrow) -> None:
    array = pa.array(["plain", None, "text é"])
    assert arrow.strip(array).equals(array)
    assert arrow.strip(array, families=()) is array


def test_unclosed_starts_are_linear(arrow) -> None:
    # The guide's regex rescans to the end from every START: quadratic, minutes on this.
    row = (S + "cite" + D + "turn0search0 ") * 40_000 + S + "cite" + D + "x" + E
    row2 = S * 200_000
    array = pa.array([row, row2])
    # No clock here: benches/bench_hostile.py times this input.
    stripped = arrow.strip(array)
    found = arrow.extract(array)
    assert stripped.to_pylist() == expected_strip([row, row2])
    assert found.to_pylist() == expected_extract([row, row2])


def test_rejects_what_is_not_a_string_array(arrow) -> None:
    for bad in [pa.array([1, 2]), pa.array([b"x"]), ["text"], "text", None]:
        with pytest.raises(TypeError, match=r"^array must"):
            arrow.strip(bad)
        with pytest.raises(TypeError, match=r"^array must"):
            arrow.extract(bad)
    with pytest.raises(TypeError):
        arrow.extract(pa.array(["x"]), families=[1])
    with pytest.raises(TypeError):
        arrow.strip(pa.array(["x"]), families=["cite", None])


def test_results_outlive_their_inputs(arrow) -> None:
    import gc

    array = pa.array(["\ue200cite\ue202turn0search0\ue202L1\ue201 ok" * 3] * 50)
    stripped = arrow.strip(array)
    found = arrow.extract(array)
    del array
    gc.collect()
    assert stripped.to_pylist() == [" ok" * 3] * 50
    assert found.to_pylist()[49][2]["source_ids"] == ["turn0search0"]


# --- the kernels' own guards (both paths take the same buffers) -------------------------


@pytest.fixture(scope="module", params=sorted(PATHS), ids=sorted(PATHS))
def kernel(request: pytest.FixtureRequest) -> Any:
    return importlib.import_module(PATHS[request.param])


def layout_of(array: pa.Array) -> tuple[Any, ...]:
    validity, offsets, data = array.buffers()
    return validity, offsets, data, array.offset, len(array), 4


def test_kernel_rejects_inconsistent_buffers(kernel) -> None:
    array = pa.array(["a\ue200cite\ue202x\ue201", None, "bc"])
    _, offsets, data, offset, length, width = layout_of(array)
    families = (b"cite",)
    for function in (kernel.strip_utf8, kernel.extract_utf8):
        # more rows than the offsets buffer holds
        with pytest.raises(ValueError, match="offsets buffer"):
            function(None, offsets, data, offset, 4, width, families)
        with pytest.raises(ValueError, match="offsets buffer"):
            function(None, offsets, data, 2, 2, width, families)
        # offsets that decrease, start below 0, or point past the data
        for bad in ([0, 3, 2, 4], [-1, 0, 0, 0], [0, 1, 2, 99]):
            with pytest.raises(ValueError, match="layout"):
                function(None, pa.array(bad, pa.int32()).buffers()[1], data, 0, 3, 4, families)
        # a bitmap too short for the rows
        with pytest.raises(ValueError, match="validity"):
            function(b"", offsets, data, offset, length, width, families)
        with pytest.raises(ValueError, match="width"):
            function(None, offsets, data, offset, length, 2, families)
        with pytest.raises(ValueError, match=">= 0"):
            function(None, offsets, data, -1, length, width, families)
        with pytest.raises(TypeError, match="families"):
            function(None, offsets, data, offset, length, width, ("cite",))
        with pytest.raises(TypeError, match="families"):
            function(None, offsets, data, offset, length, width, [b"cite"])


INVALID_PIECES = [
    b"\xee\x88\x80cite\xee\x88\x82a\xee\x88\x81",
    b"\xee\x88\x80cite\xee\x88\x82\xf4\x90\x80\x80\xee\x88\x81",
    b"\xee\x88\x80cite\xee\x88\x82L\xe0\xee\x88\x81",
    b"\xee\x88\x80cite\xee\x88\x82\xc2",
    b"\xee\x88\x80cite\xee",
    b"\xee\x88",
    b"\xee",
    b"\xff\xfe\xee\x88\x80cite\xee\x88\x82 x \xe3\x80",
    b"\xed\xa0\x80 surrogate",
    b"\xc0\x80 overlong",
    b"plain",
]


def outcome(function: Any, *args: Any) -> Any:
    try:
        result = function(*args)
    except ValueError as error:
        return ("ValueError", str(error))
    if result is None:
        return None
    if isinstance(result, dict):
        return {
            key: value if isinstance(value, int) else bytes(value or b"")
            for key, value in result.items()
        }
    return tuple(None if part is None else bytes(part) for part in result)


@pytest.mark.c_extension
def test_invalid_utf8_rows_are_named_alike_by_both_kernels() -> None:
    # Arrow requires valid UTF-8; a row that is not is a ValueError naming it, the same in
    # both kernels, and never a read or write out of bounds (the valgrind run checks that).
    compiled = importlib.import_module(PATHS["compiled"])
    pure = importlib.import_module(PATHS["pure"])
    offsets = [0]
    for piece in INVALID_PIECES:
        offsets.append(offsets[-1] + len(piece))
    data = b"".join(INVALID_PIECES)
    offsets_buffer = pa.array(offsets, pa.int32()).buffers()[1]
    count = len(INVALID_PIECES)
    for rows in range(count + 1):
        for first in range(count - rows + 1):
            for name in ("strip_utf8", "extract_utf8"):
                args = (None, offsets_buffer, data, first, rows, 4, (b"cite", b""))
                got = outcome(getattr(compiled, name), *args)
                assert got == outcome(getattr(pure, name), *args), (name, first, rows)
                bad = [r for r in range(rows) if INVALID_PIECES[first + r] != INVALID_PIECES[0]]
                if bad and first + bad[0] < count - 1:
                    assert got == ("ValueError", f"row {bad[0]} is not valid UTF-8")
    # Cut every row short: each one ends inside a marker or a multi-byte sequence.
    for end in range(len(data)):
        cut = pa.array([0, end], pa.int64()).buffers()[1]
        for name in ("strip_utf8", "extract_utf8"):
            args = (None, cut, data[:end], 0, 1, 8, (b"cite",))
            assert outcome(getattr(compiled, name), *args) == outcome(getattr(pure, name), *args)


def test_a_null_row_is_never_decoded(arrow) -> None:
    offsets = pa.array([0, 2, 4], pa.int32()).buffers()[1]
    validity = pa.array([False, True]).buffers()[1]
    array = pa.Array.from_buffers(pa.string(), 2, [validity, offsets, pa.py_buffer(b"\xff\xffok")])
    assert arrow.strip(array).to_pylist() == [None, "ok"]
    assert arrow.extract(array).to_pylist() == [None, []]


def invalid_array(large: bool = False) -> pa.Array:
    rows = [b"fine \xee\x88\x80cite\xee\x88\x82turn0search0\xee\x88\x81", b"ok", b"", b"bad \xff"]
    bounds = [0]
    for row in rows:
        bounds.append(bounds[-1] + len(row))
    kind, width = (pa.large_string(), pa.int64()) if large else (pa.string(), pa.int32())
    offsets = pa.array(bounds, width).buffers()[1]
    return pa.Array.from_buffers(kind, len(rows), [None, offsets, pa.py_buffer(b"".join(rows))])


@pytest.mark.parametrize("large", [False, True])
def test_invalid_utf8_from_buffers_names_the_row(arrow, large) -> None:
    array = invalid_array(large)
    for function in (arrow.strip, arrow.extract):
        with pytest.raises(ValueError, match=r"^row 3 is not valid UTF-8$"):
            function(array)
        with pytest.raises(ValueError, match=r"^row 2 is not valid UTF-8$"):
            function(array.slice(1))
        assert function(array.slice(0, 3)) is not None
        chunked = pa.chunked_array([array.slice(0, 2), array.slice(2)])
        with pytest.raises(ValueError, match=r"^row 3 is not valid UTF-8$"):
            function(chunked)


def test_invalid_utf8_from_parquet_names_the_row(arrow, tmp_path) -> None:
    import pyarrow.parquet as pq

    # Neither pyarrow's Parquet writer nor its reader checks UTF-8: such a file exists.
    rows = [b"ok", b"a \xe2\x82", b"x"]
    offsets = pa.array([0, 2, 6, 7], pa.int32()).buffers()[1]
    bad = pa.Array.from_buffers(pa.string(), 3, [None, offsets, pa.py_buffer(b"".join(rows))])
    pq.write_table(pa.table({"text": bad}), tmp_path / "bad.parquet")
    column = pq.read_table(tmp_path / "bad.parquet")["text"]
    for function in (arrow.strip, arrow.extract):
        with pytest.raises(ValueError, match=r"^row 1 is not valid UTF-8$"):
            function(column)


def test_zero_length_array_with_empty_offsets(arrow) -> None:
    for kind in (pa.string(), pa.large_string()):
        empty = pa.Array.from_buffers(kind, 0, [None, pa.py_buffer(b""), pa.py_buffer(b"")])
        assert arrow.strip(empty).to_pylist() == []
        assert arrow.extract(empty).to_pylist() == []


def test_kernel_strip_of_markerless_rows_is_none(kernel) -> None:
    array = pa.array(["plain", "\ue201 \ue202 only"])
    assert kernel.strip_utf8(*layout_of(array), (b"cite",)) is None


def test_kernel_output_from_allocate(kernel) -> None:
    rows = ["a" + S + "cite" + D + "x" + E + "b", None, "é" + S + "cite" + D + "y" + E, "c"]
    array = pa.array(rows)
    args = (*layout_of(array), (b"cite",))
    asked: list[int] = []

    def allocate(size: int) -> Any:
        asked.append(size)
        return pa.allocate_buffer(size)

    own = kernel.strip_utf8(*args)
    validity, offsets, data = kernel.strip_utf8(*args, allocate)
    # data keeps the room of the input rows, zero past the result's bytes
    assert asked == [len(array.buffers()[2]), 5 * 4]
    assert bytes(validity) == bytes(own[0])
    assert bytes(offsets) == bytes(own[1])
    assert bytes(data) == bytes(own[2]) + bytes(len(data) - len(own[2]))
    found = kernel.extract_utf8(*args, allocate)
    for key, value in kernel.extract_utf8(*args).items():
        assert (value if isinstance(value, int) else bytes(value)) == (
            found[key] if isinstance(value, int) else bytes(found[key])
        ), key


def test_kernel_allocate_is_checked(kernel) -> None:
    args = (*layout_of(pa.array(["a" + S + "cite" + D + "x" + E, None, "b"])), (b"cite",))

    def fails(size: int) -> Any:
        raise MemoryError("pool exhausted")

    for function in (kernel.strip_utf8, kernel.extract_utf8):
        with pytest.raises(TypeError, match="allocate must be callable or None, not int"):
            function(*args, 3)
        for read_only in (bytes, lambda size: None, lambda size: memoryview(bytes(size))):
            with pytest.raises(TypeError, match="allocate must return a writable bytes-like"):
                function(*args, read_only)
        with pytest.raises(ValueError, match=r"allocate\(\d+\) returned \d+ bytes"):
            function(*args, lambda size: bytearray(max(size - 1, 0)))
        with pytest.raises(MemoryError, match="pool exhausted"):
            function(*args, fails)


# --- which path is active ----------------------------------------------------------------


def implementation_under(value: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CITEMARK_IMPLEMENTATION": value}
    code = "import citemark, citemark.arrow; print(citemark.arrow.IMPLEMENTATION)"
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )


def test_the_environment_chooses_the_path() -> None:
    assert implementation_under("python").stdout.strip() == "python"
    assert implementation_under("cython").stdout.strip() == "cython"
    bad = implementation_under("rust")
    assert bad.returncode != 0
    assert "CITEMARK_IMPLEMENTATION" in bad.stderr


def test_the_default_path_is_the_compiled_one() -> None:
    if os.environ.get("CITEMARK_IMPLEMENTATION", "").strip().lower() == "python":
        assert citemark.arrow.IMPLEMENTATION == "python"
    else:
        assert citemark.arrow.IMPLEMENTATION == "cython"


# --- the UTF-8 check of every vector path --------------------------------------------------

UTF8_CHECK = r"""
import itertools, random
import pyarrow as pa
import citemark._kernels.arrow_c as kernel

def python_says(data):
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True

def kernel_says(data):
    offsets = pa.array([0, len(data)], pa.int64()).buffers()[1]
    try:
        kernel.strip_utf8(None, offsets, data, 0, 1, 8, (b"cite",))
    except ValueError:
        return False
    return True

edges = [0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1,
         0xED, 0xEE, 0xEF, 0xF0, 0xF3, 0xF4, 0xF5, 0xFF]
checked = 0
for length in (1, 2, 3):
    for sequence in itertools.product(edges, repeat=length):
        for before, after in ((0, 0), (31, 0), (30, 1), (32, 33), (63, 0), (62, 65), (127, 1)):
            data = b"a" * before + bytes(sequence) + b"b" * after
            assert kernel_says(data) == python_says(data), data
            checked += 1
rng = random.Random(5)
pieces = ["a", "é", "中", "\U0001f600", "\ue200", "—"]
for _ in range(3000):
    data = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 90))).encode()
    if data and rng.random() < 0.5:
        data = bytearray(data)
        data[rng.randrange(len(data))] = rng.randrange(256)
        data = bytes(data)
    if data and rng.random() < 0.3:
        data = data[: rng.randrange(len(data))]
    assert kernel_says(data) == python_says(data), data
    checked += 1
print(kernel.UTF8_CHECK, checked)
"""


def simd_env(level: str) -> dict[str, str]:
    """The environment that caps the vector path at `level` ("": no cap, the widest)."""
    env = {key: value for key, value in os.environ.items() if key != "CITEMARK_SIMD"}
    return {**env, "CITEMARK_SIMD": level} if level else env


@pytest.mark.slow  # an interpreter per vector path, tens of thousands of inputs each
@pytest.mark.c_extension
@pytest.mark.parametrize("level", ["portable", "avx2", ""])
def test_utf8_check_agrees_with_python_on_every_path(level) -> None:
    # The vector path is chosen at import (CITEMARK_SIMD caps it): one interpreter each.
    done = subprocess.run(
        [sys.executable, "-c", UTF8_CHECK],
        env=simd_env(level),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    path, checked = done.stdout.split()
    assert int(checked) > 40_000
    # AVX-512 only without a cap (where the CPU has it); portable and avx2 caps hold.
    assert path == "scalar" if level == "portable" else path in {"scalar", "avx2", "avx512"}
    if level == "avx2":
        assert path != "avx512"


ARROW_VECTOR_CHECK = r"""
import pyarrow as pa
import citemark._kernels.arrow_c as kernel, citemark._kernels.arrow_py as twin
from citemark.arrow import Arrow
compiled, pure = Arrow(kernel), Arrow(twin)
marker = "\ue200cite\ue202turn0search1\ue202L1-L2\ue201"
rows = [
    filler * at + marker + filler * (size - at) + "x"
    for filler in ("a", "\u00e9", "\u4e2d", "\U0001f600")
    for size in range(0, 80, 3)
    for at in range(0, size + 1, 5)
]
array = pa.array(rows)
assert compiled.extract(array).to_pylist() == pure.extract(array).to_pylist()
assert compiled.strip(array).to_pylist() == pure.strip(array).to_pylist()
# A bad byte at every offset around the vector widths, after ASCII runs: named, in both.
for at in range(0, 260):
    data = b"a" * at + b"\xff" + b"b" * 5
    offsets = pa.array([0, 1, 1 + len(data)], pa.int32()).buffers()[1]
    bad = pa.Array.from_buffers(pa.string(), 2, [None, offsets, pa.py_buffer(b"a" + data)])
    for path in (compiled, pure):
        try:
            path.extract(bad)
        except ValueError as error:
            assert str(error) == "row 1 is not valid UTF-8", error
        else:
            raise AssertionError(at)
print(len(rows))
"""


@pytest.mark.slow  # an interpreter per vector path
@pytest.mark.c_extension
@pytest.mark.parametrize("level", ["portable", "sse2", "avx2", ""])
def test_every_vector_path_gives_the_twins_results(level) -> None:
    # UTF-8 check and code point count are vectorised in simd.h; each path is chosen once at
    # import, so each runs in its own interpreter, capped with CITEMARK_SIMD.
    done = subprocess.run(
        [sys.executable, "-c", ARROW_VECTOR_CHECK],
        env=simd_env(level),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 500
