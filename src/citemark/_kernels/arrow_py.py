"""The pure-Python twin of `arrow_c`: the same entry points over the same Arrow buffers.

`strip_utf8` / `extract_utf8` take what the kernel takes (validity bitmap, offsets, UTF-8 data,
offset, length, offset width, families as UTF-8 bytes), check it the same way, and return the
same buffers (as `bytes`), so `citemark.arrow` assembles arrays in one way for both.  Each row
is decoded strictly (a row that is not well-formed UTF-8 is a ValueError naming it, as in the
kernel) and scanned by `scan_py.scan`, the definition the compiled path is held to.

Kernel name -> twin name: see the table at the top of `arrow_c.pyx`.
"""

from __future__ import annotations

import sys
from array import array
from itertools import pairwise
from typing import Any

from .._core.grammar import CITATION_DELIMITER, CITATION_START, CITATION_STOP
from . import scan_py

Buffers = tuple[bytes | None, Any, Any]


class Layout:
    """The checked input of one string array: the rows' bounds, validity and families."""

    def __init__(
        self,
        validity: Any,
        offsets: Any,
        data: Any,
        offset: Any,
        length: Any,
        width: Any,
        families: Any,
    ) -> None:
        bits = None if validity is None else _bytes_like(validity, "validity", optional=True)
        bounds = _bytes_like(offsets, "offsets", optional=False)
        text = None if data is None else _bytes_like(data, "data", optional=True)
        for value, name in ((offset, "offset"), (length, "length"), (width, "width")):
            if not isinstance(value, int):
                raise TypeError(f"{name} must be an int, not {type(value).__name__}")
        if type(families) is not tuple:
            raise TypeError(f"families must be a tuple of bytes, not {type(families).__name__}")
        for family in families:
            if not isinstance(family, bytes):
                raise TypeError(f"families must hold bytes items, not {type(family).__name__}")
        if width not in (4, 8):
            raise ValueError("width must be 4 (string) or 8 (large_string)")
        if offset < 0 or length < 0:
            raise ValueError("offset and length must be >= 0")
        if offset > sys.maxsize // 8 - length - 8:
            raise ValueError("offset + length too large")
        # A zero-length array reads no offsets, so it may come with none (an empty buffer).
        if length and len(bounds) < (offset + length + 1) * width:
            raise ValueError("the offsets buffer is shorter than offset + length + 1 entries")
        self.data = b"" if text is None else text
        if bits is not None and len(bits) < (offset + length + 7) // 8:
            raise ValueError("the validity bitmap is shorter than offset + length bits")
        self.bounds: list[int] = [0]
        if length:
            entries = bounds[offset * width : (offset + length + 1) * width]
            self.bounds = entries.cast("i" if width == 4 else "q").tolist()
            increasing = all(a <= b for a, b in pairwise(self.bounds))
            if self.bounds[0] < 0 or not increasing or self.bounds[-1] > len(self.data):
                raise ValueError(
                    "the offsets are not a valid string layout "
                    "(negative, decreasing, or past the end of the data buffer)"
                )
        self.valid = [
            bits is None or bool(bits[(offset + row) // 8] >> ((offset + row) % 8) & 1)
            for row in range(length)
        ]
        self.has_validity = bits is not None
        self.length = length
        self.width = width
        self.families = families
        # A family that is not UTF-8 (a lone surrogate) cannot occur in a decoded row: its
        # escaped form never matches, as its bytes never match in the kernel.
        self.grammar = scan_py.Grammar(
            tuple(family.decode("utf-8", "surrogateescape") for family in families),
            CITATION_START,
            CITATION_DELIMITER,
            CITATION_STOP,
        )

    def row(self, row: int) -> tuple[str, int, int]:
        """Row `row` (not null) decoded, and its byte range."""
        first, end = self.bounds[row], self.bounds[row + 1]
        try:
            return bytes(self.data[first:end]).decode("utf-8"), first, end
        except UnicodeDecodeError:
            raise ValueError(f"row {row} is not valid UTF-8") from None

    def offsets(self, values: list[int]) -> bytes:
        return array("i" if self.width == 4 else "q", values).tobytes()


def _bytes_like(value: Any, name: str, *, optional: bool) -> memoryview:
    """`value`'s bytes, or the kernel's TypeError (`optional`: None is allowed there too)."""
    try:
        return memoryview(value).cast("B")
    except TypeError:
        allowed = "a bytes-like object or None" if optional else "a bytes-like object"
        raise TypeError(f"{name} must be {allowed}, not {type(value).__name__}") from None


def _bits(flags: list[bool]) -> bytes:
    out = bytearray((len(flags) + 7) // 8)
    for index, flag in enumerate(flags):
        if flag:
            out[index // 8] |= 1 << (index % 8)
    return bytes(out)


def _check_allocate(allocate: Any) -> None:
    if allocate is not None and not callable(allocate):
        raise TypeError(f"allocate must be callable or None, not {type(allocate).__name__}")


def _output(allocate: Any, size: int) -> Any:
    """A buffer of `size` writable bytes: from `allocate`, checked as the kernel checks it, or
    a bytearray (the kernel's own memory)."""
    if allocate is None:
        return bytearray(size)
    owner = allocate(size)
    try:
        view = memoryview(owner)
    except TypeError:
        view = None
    if view is None or view.readonly:
        raise TypeError(
            f"allocate must return a writable bytes-like object, not {type(owner).__name__}"
        )
    with view:
        if view.nbytes < size:
            raise ValueError(f"allocate({size}) returned {view.nbytes} bytes")
    return owner


def _fill(output: Any, content: bytes, allocate: Any) -> Any:
    """`output` holding `content` then zeros; the kernel's own memory is just `content`."""
    if allocate is None:
        return content
    with memoryview(output) as view, view.cast("B") as raw:
        raw[: len(content)] = content
        raw[len(content) :] = bytes(len(raw) - len(content))
    return output


def strip_utf8(
    validity: Any,
    offsets: Any,
    data: Any,
    offset: Any,
    length: Any,
    width: Any,
    families: Any,
    allocate: Any = None,
) -> Buffers | None:
    """Strip the valid citations of every row (see `arrow_c.strip_utf8`)."""
    layout = Layout(validity, offsets, data, offset, length, width, families)
    _check_allocate(allocate)
    # The kernel's buffers, asked for in its order before any row is read.
    out_data = _output(allocate, layout.bounds[-1] - layout.bounds[0])
    out_offsets = _output(allocate, (length + 1) * width)
    kept: list[bytes] = []
    bounds = [0]
    size = n_matches = 0
    for row in range(layout.length):
        if layout.valid[row]:
            text, _, _ = layout.row(row)
            matches = scan_py.scan(text, layout.grammar, False)
            n_matches += len(matches)
            spans = [(match.start, match.end) for match in matches]
            piece = (scan_py.cut_spans(text, spans) or "").encode("utf-8")
            kept.append(piece)
            size += len(piece)
        bounds.append(size)
    if n_matches == 0:
        return None
    bits = _bits(layout.valid) if layout.has_validity else None
    return (
        bits,
        _fill(out_offsets, layout.offsets(bounds), allocate),
        _fill(out_data, b"".join(kept), allocate),
    )


class Columns:
    """The growing buffers of extract's list<struct<...>> result."""

    def __init__(self) -> None:
        self.lists = [0]
        self.raw: list[bytes] = []
        self.families: list[bytes] = []
        self.ids_lists = [0]
        self.ids: list[bytes] = []
        self.has_locator: list[bool] = []
        self.locators: list[bytes] = []
        self.starts: list[int] = []
        self.ends: list[int] = []

    def emit(self, text: str, match: scan_py.Match, family: bytes) -> None:
        self.raw.append(text[match.start : match.end].encode("utf-8"))
        self.families.append(family)
        self.ids.extend(part.encode("utf-8") for part in match.source_ids or ())
        self.ids_lists.append(len(self.ids))
        self.has_locator.append(match.locator is not None)
        self.locators.append((match.locator or "").encode("utf-8"))
        self.starts.append(match.start)
        self.ends.append(match.end)


def _strings(layout: Layout, values: list[bytes]) -> tuple[bytes, bytes]:
    bounds = [0]
    for value in values:
        bounds.append(bounds[-1] + len(value))
    if layout.width == 4 and bounds[-1] > 2**31 - 1:
        raise OverflowError("the result does not fit 32-bit offsets: use large_string")
    return layout.offsets(bounds), b"".join(values)


def extract_utf8(
    validity: Any,
    offsets: Any,
    data: Any,
    offset: Any,
    length: Any,
    width: Any,
    families: Any,
    allocate: Any = None,
) -> dict[str, Any]:
    """The valid citations of every row, as buffers (see `arrow_c.extract_utf8`)."""
    layout = Layout(validity, offsets, data, offset, length, width, families)
    _check_allocate(allocate)
    out = Columns()
    by_name = dict(zip(layout.grammar.families, families, strict=True))
    for row in range(layout.length):
        if layout.valid[row]:
            text, _, _ = layout.row(row)
            for match in scan_py.scan(text, layout.grammar, False):
                out.emit(text, match, by_name[match.family])
        out.lists.append(len(out.starts))
    raw_offsets, raw_data = _strings(layout, out.raw)
    family_offsets, family_data = _strings(layout, out.families)
    ids_offsets, ids_data = _strings(layout, out.ids)
    locator_offsets, locator_data = _strings(layout, out.locators)
    buffers: dict[str, Any] = {
        "lists": layout.offsets(out.lists),
        "list_validity": _bits(layout.valid) if layout.has_validity else None,
        "raw_offsets": raw_offsets,
        "raw_data": raw_data,
        "family_offsets": family_offsets,
        "family_data": family_data,
        "ids_lists": layout.offsets(out.ids_lists),
        "ids_offsets": ids_offsets,
        "ids_data": ids_data,
        "locator_validity": _bits(out.has_locator),
        "locator_offsets": locator_offsets,
        "locator_data": locator_data,
        "starts": array("q", out.starts).tobytes(),
        "ends": array("q", out.ends).tobytes(),
    }
    if allocate is not None:  # each buffer in memory from allocate, as the kernel's
        for key, value in buffers.items():
            if value is not None:
                owner = _fill(_output(allocate, len(value)), value, allocate)
                buffers[key] = memoryview(owner).toreadonly()[: len(value)]
    return {
        **buffers,
        "n_citations": len(out.starts),
        "n_ids": len(out.ids),
        "n_locators": sum(out.has_locator),
    }
