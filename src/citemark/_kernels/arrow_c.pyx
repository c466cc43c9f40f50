# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# cython: cdivision=True, freethreading_compatible=True, auto_pickle=False, autotestdict=False
"""The compiled path of `citemark.arrow`: the marker scan over Arrow's UTF-8 string buffers.

It reads the three buffers of an Arrow `string` (int32 offsets) or `large_string` (int64
offsets) array -- validity bitmap, offsets, UTF-8 data -- in place, without a Python `str` per
row and without the GIL, and builds the buffers of the result in memory it owns and hands to
pyarrow without a copy (`OwnedBuffer`).  `citemark.arrow` turns those buffers into arrays; this
module imports neither pyarrow nor anything from the package.

Kernel name -> twin name in `arrow_py.py` (same entry points, arguments and results):

    strip_utf8, extract_utf8     strip_utf8, extract_utf8
    Layout.open                  open_layout
    cm_utf8_valid (simd.h)      bytes.decode (strict)
    scan_row (scan_units)        scan_py.scan over the decoded row
    strip_rows                   strip_utf8's loop
    extract_rows / emit          extract_utf8's loop / Columns.emit

| fast path (CPU time over 2,000 answers as a column, `benches/bench_kernels.py`) | earns  |
|--------------------------------------------------------------------------------|--------|
| the buffers read in place, no `str` per row, not the twin's decode and scan    | 22-24x |
| simd.h's UTF-8 check and marker search, not CITEMARK_SIMD=portable             | 1.4-1.6x |

The matching rules are the one C grammar of `grammar_c.pxi` over UTF-8 bytes, so a row gets
what `scan_py.scan` gives its decoded `str`: START, STOP and DELIM are their byte sequences
(EE 88 80 / 81 / 82), `str.strip()` whitespace and `\\d` are decided on decoded code points
with CPython's own predicates, and code point offsets are the non-continuation bytes before
them.  Every non-null row is checked to be well-formed UTF-8 first (Arrow's rule for strings,
which foreign or `from_buffers` arrays may break): a bad row is a ValueError naming it.

Memory safety, the argument:
* `Layout.open` proves, before any scan, that the offsets buffer holds offset+length+1 entries
  of the given width (none are read for length 0), that they start >= 0, never decrease and
  end within the data buffer, and that the validity bitmap (when given) holds offset+length
  bits.  So every row is data[a:b] with 0 <= a <= b <= data size.
* Within a row every read is below the row's end (`grammar_c.pxi` says how).
* Strip writes into buffers sized up front (the result is never longer than the input);
  extract writes through `Grow`, which reserves before it copies.  Sizes are Py_ssize_t sums of
  input sizes, so they cannot overflow; int32 offsets are checked against INT32_MAX.
* Memory from `allocate` is written through a writable view held while it is filled, checked
  to hold at least the size asked (`writable_view`) before any write.

Output memory: `citemark.arrow` passes `allocate` (pyarrow's pool), whose freed pages serve
the next call; memory fresh from the system is zeroed page by page on first touch, which for
a column past the caches cost more than the scan itself.
"""

from cpython.buffer cimport PyBUF_SIMPLE, PyBUF_WRITABLE, PyBuffer_FillInfo, PyBuffer_Release
from cpython.buffer cimport PyObject_CheckBuffer, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.object cimport PyObject
from cpython.ref cimport Py_DECREF, Py_INCREF
from libc.stdint cimport INT32_MAX, int32_t, int64_t
from libc.string cimport memset

include "grammar_c.pxi"

cdef extern from "simd.h" nogil:
    bint cm_utf8_valid(const uint8_t* data, Py_ssize_t n)
    Py_ssize_t cm_count_points(const uint8_t* data, Py_ssize_t n)
    const char* cm_utf8_path()

# The UTF-8 check's vector path ("avx512", "avx2" or "scalar"), chosen at import (after
# cm_init, in grammar_c.pxi); the tests run each.
UTF8_CHECK = cm_utf8_path().decode()

cdef enum:
    START = 0xE200
    STOP = 0xE201
    DELIMITER = 0xE202
    # Status codes of the nogil parts (0 is success).
    OUT_OF_MEMORY = -1
    TOO_LARGE = -2
    BAD_UTF8 = -3
    ALLOCATE_FAILED = -4  # the exception is in the Grow's error


# --- growable output buffers -------------------------------------------------------------

cdef struct Grow:
    uint8_t* data
    Py_ssize_t size
    Py_ssize_t capacity
    # With `allocate` (a callable, kept alive by the caller): the memory is the writable view
    # of the object it returned last (owner), and a failed call leaves its exception in
    # error.  Without: PyMem_RawRealloc'd memory.
    PyObject* allocate
    PyObject* owner
    Py_buffer view
    PyObject* error


cdef int writable_view(object owner, Py_buffer* view, Py_ssize_t size) except -1:
    """A writable view of at least `size` bytes of what `allocate` returned."""
    try:
        PyObject_GetBuffer(owner, view, PyBUF_WRITABLE)
    except (TypeError, BufferError):
        raise TypeError(
            f"allocate must return a writable bytes-like object, not {type(owner).__name__}"
        ) from None
    if view.len < size:
        length = view.len
        PyBuffer_Release(view)
        raise ValueError(f"allocate({size}) returned {length} bytes")
    return 0


cdef void release_owner(Grow* grow) noexcept:
    if grow.owner != NULL:
        PyBuffer_Release(&grow.view)
        Py_DECREF(<object>grow.owner)
        grow.owner = NULL


cdef int grow_in_pool(Grow* grow, Py_ssize_t capacity) noexcept with gil:
    """Move grow's bytes to a new buffer of `capacity` (> grow.size) from its allocate."""
    cdef Py_buffer view
    try:
        owner = (<object>grow.allocate)(capacity)
        writable_view(owner, &view, capacity)
    except BaseException as error:
        if grow.error == NULL:
            Py_INCREF(error)
            grow.error = <PyObject*>error
        return ALLOCATE_FAILED
    if grow.size > 0:
        memcpy(view.buf, grow.data, grow.size)  # grow.size <= the old capacity < capacity
    release_owner(grow)
    Py_INCREF(owner)
    grow.owner = <PyObject*>owner
    grow.view = view
    grow.data = <uint8_t*>view.buf
    grow.capacity = capacity
    return 0


cdef int grow_reserve(Grow* grow, Py_ssize_t extra) noexcept nogil:
    """Room for `extra` more bytes (extra >= 0)."""
    cdef Py_ssize_t capacity
    cdef uint8_t* bigger
    if extra <= grow.capacity - grow.size:
        return 0
    if grow.size > PY_SSIZE_T_MAX - extra or grow.capacity > PY_SSIZE_T_MAX // 4:
        return OUT_OF_MEMORY
    capacity = 2 * grow.capacity + 64
    if capacity - grow.size < extra:
        capacity = grow.size + extra
    if grow.allocate != NULL:
        # a few calls into Python a buffer, each with the GIL, then none for long stretches
        return grow_in_pool(grow, capacity if capacity > 4096 else 4096)
    bigger = <uint8_t*>PyMem_RawRealloc(grow.data, capacity)
    if bigger == NULL:
        return OUT_OF_MEMORY
    grow.data = bigger
    grow.capacity = capacity
    return 0


cdef inline int grow_append(Grow* grow, const void* source, Py_ssize_t count) noexcept nogil:
    # The test of grow_reserve, inline: almost every append has the room already.
    if count > grow.capacity - grow.size and grow_reserve(grow, count) < 0:
        return OUT_OF_MEMORY
    if count > 0:
        memcpy(grow.data + grow.size, source, count)  # reserved just above
        grow.size += count
    return 0


cdef inline int put_offset(Grow* grow, int64_t value, int width) noexcept nogil:
    """Append one offset of `width` bytes (4: int32, 8: int64)."""
    cdef int32_t narrow
    if width == 4:
        if value > INT32_MAX:
            return TOO_LARGE
        narrow = <int32_t>value
        return grow_append(grow, &narrow, 4)
    return grow_append(grow, &value, 8)


cdef inline int put_bit(Grow* grow, Py_ssize_t index, bint value) noexcept nogil:
    """Set bit `index` of a bitmap written in order (index == number of bits so far)."""
    cdef uint8_t zero = 0
    if index % 8 == 0 and grow_append(grow, &zero, 1) < 0:
        return OUT_OF_MEMORY
    # index // 8 == grow.size - 1 here: the byte exists.
    if value:
        grow.data[index // 8] |= <uint8_t>(1 << (index % 8))
    return 0


cdef class OwnedBuffer:
    """Memory filled here, exported read-only through the buffer protocol (pyarrow wraps it
    without a copy), freed with the last reference."""
    cdef uint8_t* data
    cdef Py_ssize_t size

    def __dealloc__(self):
        PyMem_RawFree(self.data)

    def __getbuffer__(self, Py_buffer* view, int flags):
        PyBuffer_FillInfo(view, self, self.data, self.size, 1, flags)

    def __releasebuffer__(self, Py_buffer* view):
        pass

    def __len__(self):
        return self.size


cdef object own(Grow* grow):
    """grow's bytes as a new bytes-like object (an OwnedBuffer of its memory, or a read-only
    view of the first grow.size bytes of its allocate's buffer); grow is left empty."""
    cdef OwnedBuffer buffer
    if grow.allocate != NULL:
        if grow.owner == NULL and grow_in_pool(grow, 8) < 0:  # nothing written
            raise <object>grow.error
        owner = <object>grow.owner
        size = grow.size
        release_owner(grow)
        grow.data = NULL
        grow.size = 0
        grow.capacity = 0
        return memoryview(owner).toreadonly()[:size]
    buffer = OwnedBuffer.__new__(OwnedBuffer)
    if grow.data == NULL:  # nothing written: still hand out a real pointer
        grow.data = <uint8_t*>PyMem_RawMalloc(8)
        if grow.data == NULL:
            raise MemoryError()
        grow.capacity = 8
    buffer.data = grow.data
    buffer.size = grow.size
    grow.data = NULL
    grow.size = 0
    grow.capacity = 0
    return buffer


cdef void free_grow(Grow* grow) noexcept:
    if grow.allocate != NULL:
        release_owner(grow)
    else:
        PyMem_RawFree(grow.data)
    if grow.error != NULL:
        Py_DECREF(<object>grow.error)
        grow.error = NULL
    grow.data = NULL
    grow.size = 0
    grow.capacity = 0


# --- the input: buffers, checked layout, families ----------------------------------------

# What the nogil code reads: pointers into the held buffers, checked by Layout.open.
cdef struct Rows:
    const uint8_t* validity  # NULL: no nulls
    const uint8_t* offsets
    const uint8_t* data
    Py_ssize_t offset
    Py_ssize_t length
    int width
    Py_ssize_t first  # the data range of the rows: offsets[offset], offsets[offset + length]
    Py_ssize_t end
    Rules rules
    Py_ssize_t bad_row  # set with BAD_UTF8


cdef inline bint row_valid(const Rows* rows, Py_ssize_t row) noexcept nogil:
    """Is row (0 <= row < length) not null?  Bit offset + row is inside the bitmap (open)."""
    cdef Py_ssize_t bit = rows.offset + row
    if rows.validity == NULL:
        return True
    return (rows.validity[bit // 8] >> (bit % 8)) & 1


cdef inline int64_t load_offset(const uint8_t* offsets, Py_ssize_t i, int width) noexcept nogil:
    # memcpy: Arrow buffers are normally aligned, but a foreign buffer need not be.
    cdef int32_t narrow
    cdef int64_t wide
    if width == 4:
        memcpy(&narrow, offsets + i * 4, 4)
        return narrow
    memcpy(&wide, offsets + i * 8, 8)
    return wide


cdef inline int64_t row_bound(const Rows* rows, Py_ssize_t row) noexcept nogil:
    """Offset entry offset + row (0 <= row <= length, length > 0): inside the offsets buffer."""
    return load_offset(rows.offsets, rows.offset + row, rows.width)


cdef Py_ssize_t check_offsets(const Rows* rows, Py_ssize_t data_size) noexcept nogil:
    """-1 unless 0 <= offsets[offset] <= ... <= offsets[offset + length] <= data_size."""
    cdef Py_ssize_t row
    cdef int64_t previous = row_bound(rows, 0), current
    if previous < 0:
        return -1
    for row in range(1, rows.length + 1):
        current = row_bound(rows, row)
        if current < previous:
            return -1
        previous = current
    if previous > data_size:
        return -1
    return 0


cdef object check_int(object value, str name):
    if not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    return value


cdef void check_allocate(object allocate) except *:
    if allocate is not None and not callable(allocate):
        raise TypeError(f"allocate must be callable or None, not {type(allocate).__name__}")


cdef void check_bytes_like(object value, str name, bint optional) except *:
    if value is None and optional:
        return
    if not PyObject_CheckBuffer(value):
        allowed = "a bytes-like object or None" if optional else "a bytes-like object"
        raise TypeError(f"{name} must be {allowed}, not {type(value).__name__}")


cdef class Layout:
    """The input buffers of one string array, held through the buffer protocol, checked."""
    cdef Py_buffer validity_view, offsets_view, data_view
    cdef bint has_validity, has_offsets, has_data
    cdef tuple families  # keeps the bytes that rows.rules.families point into
    cdef Rows rows

    def __cinit__(self):
        memset(&self.rows, 0, sizeof(Rows))

    def __dealloc__(self):
        if self.has_validity:
            PyBuffer_Release(&self.validity_view)
        if self.has_offsets:
            PyBuffer_Release(&self.offsets_view)
        if self.has_data:
            PyBuffer_Release(&self.data_view)
        PyMem_RawFree(self.rows.rules.families)

    cdef int open(self, object validity, object offsets, object data, object offset,
                  object length, object width, object families) except -1:
        cdef Py_ssize_t f, n_families, data_size = 0
        cdef Rows* rows = &self.rows
        # Every argument is checked before any is used (the twin's open_layout likewise).
        check_bytes_like(validity, "validity", True)
        check_bytes_like(offsets, "offsets", False)
        check_bytes_like(data, "data", True)
        check_int(offset, "offset")
        check_int(length, "length")
        check_int(width, "width")
        if type(families) is not tuple:
            raise TypeError(f"families must be a tuple of bytes, not {type(families).__name__}")
        for family in families:
            if not isinstance(family, bytes):
                raise TypeError(f"families must hold bytes items, not {type(family).__name__}")
        if width != 4 and width != 8:
            raise ValueError("width must be 4 (string) or 8 (large_string)")
        if offset < 0 or length < 0:
            raise ValueError("offset and length must be >= 0")
        # (offset + length + 1) * width and offset + length + 7 without overflow
        if offset > PY_SSIZE_T_MAX // 8 - length - 8:
            raise ValueError("offset + length too large")
        rows.offset = offset
        rows.length = length
        rows.width = width
        PyObject_GetBuffer(offsets, &self.offsets_view, PyBUF_SIMPLE)
        self.has_offsets = True
        rows.offsets = <const uint8_t*>self.offsets_view.buf
        # A zero-length array reads no offsets, so it may come with none (an empty buffer).
        if length and self.offsets_view.len < (rows.offset + length + 1) * width:
            raise ValueError("the offsets buffer is shorter than offset + length + 1 entries")
        rows.data = <const uint8_t*>""
        if data is not None:
            PyObject_GetBuffer(data, &self.data_view, PyBUF_SIMPLE)
            self.has_data = True
            if self.data_view.buf != NULL:
                rows.data = <const uint8_t*>self.data_view.buf
                data_size = self.data_view.len
        if validity is not None:
            PyObject_GetBuffer(validity, &self.validity_view, PyBUF_SIMPLE)
            self.has_validity = True
            if self.validity_view.len < (rows.offset + length + 7) // 8:
                raise ValueError("the validity bitmap is shorter than offset + length bits")
            rows.validity = <const uint8_t*>self.validity_view.buf
        if length and check_offsets(rows, data_size) < 0:
            raise ValueError(
                "the offsets are not a valid string layout "
                "(negative, decreasing, or past the end of the data buffer)"
            )
        rows.first = row_bound(rows, 0) if length else 0
        rows.end = row_bound(rows, length) if length else 0
        # The grammar: the default markers, these families, the guide's rules.
        set_mark(&rows.rules.start, START)
        set_mark(&rows.rules.delim, DELIMITER)
        set_mark(&rows.rules.stop, STOP)
        rows.rules.max_length = PY_SSIZE_T_MAX
        rows.rules.any_family = False
        rows.rules.builtin_rules = True
        self.families = families
        n_families = len(families)
        rows.rules.families = <Family*>PyMem_RawMalloc((n_families + 1) * sizeof(Family))
        if rows.rules.families == NULL:
            raise MemoryError()
        for f in range(n_families):
            rows.rules.families[f].chars = PyBytes_AS_STRING(families[f])
            rows.rules.families[f].kind = 1
            rows.rules.families[f].length = PyBytes_GET_SIZE(families[f])
        rows.rules.n_families = n_families
        return 0


# --- one row (no GIL) --------------------------------------------------------------------

cdef inline int scan_row(Rows* rows, Py_ssize_t row, Py_ssize_t first, Py_ssize_t end,
                         Matches* out) noexcept nogil:
    """The valid citations of row data[first:end] (well-formed UTF-8, or BAD_UTF8), offsets
    relative to first, into out (emptied first)."""
    out.count = 0
    if not cm_utf8_valid(rows.data + first, end - first):
        rows.bad_row = row
        return BAD_UTF8
    if scan_units(<const utf8_t*>(rows.data + first), end - first, &rows.rules, False, out) < 0:
        return OUT_OF_MEMORY
    return 0


cdef inline Py_ssize_t count_points(const uint8_t* data, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """Code points in data[a:b] (a <= b): the bytes that are not continuation bytes (this runs
    over every byte before a row's last citation, so it is vectorised in simd.h)."""
    return cm_count_points(data + a, b - a)


cdef int copy_bits(const Rows* rows, Grow* bits) noexcept nogil:
    """The validity bits of rows 0 .. length-1, moved to bit 0."""
    cdef Py_ssize_t row
    for row in range(rows.length):
        if put_bit(bits, row, row_valid(rows, row)) < 0:
            return OUT_OF_MEMORY
    return 0


cdef void raise_status(int status, const Rows* rows) except *:
    if status == OUT_OF_MEMORY:
        raise MemoryError()
    if status == TOO_LARGE:
        raise OverflowError("the result does not fit 32-bit offsets: use large_string")
    if status == BAD_UTF8:
        raise ValueError(f"row {rows.bad_row} is not valid UTF-8")


# --- strip -------------------------------------------------------------------------------

cdef inline void store_offset(uint8_t* offsets, Py_ssize_t i, int64_t value,
                              int width) noexcept nogil:
    cdef int32_t narrow = <int32_t>value  # value <= an input offset: it fits
    if width == 4:
        memcpy(offsets + i * 4, &narrow, 4)
    else:
        memcpy(offsets + i * 8, &value, 8)


cdef inline void copy_kept(uint8_t* out, const uint8_t* data, Py_ssize_t a, Py_ssize_t b,
                           Py_ssize_t removed) noexcept nogil:
    """data[a:b] (a <= b) to out[a - removed:], where its bytes go in the result."""
    if b > a:
        memcpy(out + (a - removed), data + a, b - a)


cdef int strip_rows(Rows* rows, Matches* matches, uint8_t* out_offsets, uint8_t* out_data,
                    Py_ssize_t* n_matches, Py_ssize_t* kept) noexcept nogil:
    """The kept bytes of every row, into out_data (room for end - first bytes); out_offsets
    (room for length + 1) as the input offsets minus the bytes removed before them.  Kept
    bytes are copied in runs that span rows: a copy happens only where something is removed.

    Bounds: every copy is data[kept_from:x] with first <= kept_from <= x <= end (matches lie
    inside their row, the rows in order inside [first, end]), written at kept_from - removed,
    where removed is rows.first plus every byte skipped so far: the copies tile
    out_data[0 : end - removed] in order, inside its end - first bytes; *kept = end - removed."""
    cdef Py_ssize_t row, i, first, end, kept_from = rows.first, removed = rows.first
    cdef const Match* match
    cdef int status
    store_offset(out_offsets, 0, 0, rows.width)
    for row in range(rows.length):
        first = row_bound(rows, row)
        end = row_bound(rows, row + 1)  # 0 <= first <= end <= data size (Layout.open)
        if row_valid(rows, row):
            status = scan_row(rows, row, first, end, matches)
            if status < 0:
                return status
            n_matches[0] += matches.count
            for i in range(matches.count):  # in order, within the row
                match = &matches.items[i]
                copy_kept(out_data, rows.data, kept_from, first + match.start, removed)
                kept_from = first + match.end
                removed += match.end - match.start
        elif end > first:  # a null row's bytes are not kept
            copy_kept(out_data, rows.data, kept_from, first, removed)
            kept_from = end
            removed += end - first
        store_offset(out_offsets, row + 1, end - removed, rows.width)
    copy_kept(out_data, rows.data, kept_from, rows.end, removed)
    kept[0] = rows.end - removed
    return 0


cdef class Output:
    """A buffer of the result: memory from `allocate` (held through a writable view while the
    kernel fills it) or, without one, the kernel's own (an OwnedBuffer)."""
    cdef object owner
    cdef object allocate
    cdef Py_buffer view
    cdef bint has_view
    cdef uint8_t* data

    def __dealloc__(self):
        if self.has_view:
            PyBuffer_Release(&self.view)

    cdef int open(self, object allocate, Py_ssize_t size) except -1:
        """`size` writable bytes at self.data."""
        cdef OwnedBuffer owned
        self.allocate = allocate
        if allocate is None:
            owned = OwnedBuffer.__new__(OwnedBuffer)
            owned.data = <uint8_t*>PyMem_RawMalloc(size if size > 0 else 1)
            if owned.data == NULL:
                raise MemoryError()
            owned.size = size
            self.owner = owned
            self.data = owned.data
            return 0
        self.owner = allocate(size)
        try:
            PyObject_GetBuffer(self.owner, &self.view, PyBUF_WRITABLE)
        except (TypeError, BufferError):
            raise TypeError(
                f"allocate must return a writable bytes-like object, "
                f"not {type(self.owner).__name__}"
            ) from None
        self.has_view = True
        if self.view.len < size:
            raise ValueError(f"allocate({size}) returned {self.view.len} bytes")
        self.data = <uint8_t*>self.view.buf
        return 0

    cdef object close(self, Py_ssize_t size):
        """The filled buffer, its view released; `size` (<= the size asked) is the length of
        an OwnedBuffer (memory from `allocate` keeps the length it came with)."""
        if self.allocate is None:
            (<OwnedBuffer>self.owner).size = size
        if self.has_view:
            PyBuffer_Release(&self.view)
            self.has_view = False
        return self.owner


def strip_utf8(validity, offsets, data, offset, length, width, families, allocate=None):
    """Strip the valid citations of every row of a UTF-8 string array.

    Returns None when no row holds a citation (the input is its own result), else
    (validity, offsets, data) of the result: offset 0, `width`-byte offsets, a null row empty
    and still null, `validity` None when it was None.  `allocate(size)`, when given, returns
    the writable bytes-like object that becomes `offsets` or `data` (pyarrow's
    `allocate_buffer`: memory from its pool, which reuses its pages, where fresh memory from
    the system is zeroed page by page on first touch); `data` then keeps the size asked, the
    input rows' bytes, and is zero past the last offset.  None: memory of the kernel's own,
    `data` exactly the result's bytes.
    A non-null row that is not well-formed UTF-8 is a ValueError naming it ("row 3 is not
    valid UTF-8").
    """
    cdef Layout layout = Layout()
    cdef Matches matches
    cdef Grow out_bits
    cdef Output out_offsets = Output(), out_data = Output()
    cdef Py_ssize_t n_matches = 0, kept = 0
    cdef bint pooled = allocate is not None
    cdef int status = 0
    cdef Rows* rows = &layout.rows
    layout.open(validity, offsets, data, offset, length, width, families)
    check_allocate(allocate)
    # The result is never longer than the input rows: one buffer each, sized up front.
    out_data.open(allocate, rows.end - rows.first)
    out_offsets.open(allocate, (rows.length + 1) * rows.width)
    init_matches(&matches)
    memset(&out_bits, 0, sizeof(Grow))
    try:
        with nogil:
            status = strip_rows(
                rows, &matches, out_offsets.data, out_data.data, &n_matches, &kept
            )
            if status == 0 and pooled:
                # The room the removed bytes left in a buffer handed back whole: zeros, so
                # that every byte of it is set (the twin's are alike).  kept <= end - first:
                # this is inside out_data.  (The kernel's own buffer ends at kept: its pages
                # past that are never touched, which the JSONL path's memory bound counts on.)
                memset(out_data.data + kept, 0, rows.end - rows.first - kept)
            if status == 0 and rows.validity != NULL and n_matches:
                status = copy_bits(rows, &out_bits)
        raise_status(status, rows)
        if n_matches == 0:
            return None
        return (
            own(&out_bits) if rows.validity != NULL else None,
            out_offsets.close((rows.length + 1) * rows.width),
            out_data.close(kept),
        )
    finally:
        free_matches(&matches)
        free_grow(&out_bits)


# --- extract -----------------------------------------------------------------------------

cdef struct Columns:
    # list<struct<raw, family, source_ids: list<string>, locator, start, end>>
    Grow lists  # offsets into the citations, one per row + 1
    Grow list_bits  # row validity
    Grow raw_offsets
    Grow raw_data
    Grow family_offsets
    Grow family_data
    Grow ids_lists  # offsets into the ids, one per citation + 1
    Grow ids_offsets
    Grow ids_data
    Grow locator_bits
    Grow locator_offsets
    Grow locator_data
    Grow starts  # int64
    Grow ends  # int64
    Py_ssize_t n_citations
    Py_ssize_t n_ids
    Py_ssize_t n_locators


cdef enum:
    N_COLUMNS = 14


cdef int emit(const utf8_t* row, const Match* match, const Rules* rules, Py_ssize_t start,
              Py_ssize_t end, Columns* out, int width) noexcept nogil:
    """Append one citation (code point offsets start, end) to the columns; 0, or the status
    of the first append that failed."""
    cdef Py_ssize_t i = match.body, stop = match.end - rules.stop.utf8_size, a, b, n_ids = 0
    cdef const Family* family = &rules.families[match.family]
    cdef int64_t wide
    cdef int status
    if grow_append(&out.raw_data, row + match.start, match.end - match.start) < 0:
        return OUT_OF_MEMORY
    status = put_offset(&out.raw_offsets, out.raw_data.size, width)
    if status < 0:
        return status
    if grow_append(&out.family_data, family.chars, family.length) < 0:
        return OUT_OF_MEMORY
    status = put_offset(&out.family_offsets, out.family_data.size, width)
    if status < 0:
        return status
    # The first n_ids non-empty parts of the body; judge_body counted them, so the loop ends
    # before stop, and every part lies within row[body:stop].
    while n_ids < match.n_ids and i <= stop:
        i = next_part(row, i, stop, &rules.delim, &a, &b) + rules.delim.utf8_size
        if a < b:
            if grow_append(&out.ids_data, row + a, b - a) < 0:
                return OUT_OF_MEMORY
            status = put_offset(&out.ids_offsets, out.ids_data.size, width)
            if status < 0:
                return status
            n_ids += 1
    out.n_ids += n_ids
    status = put_offset(&out.ids_lists, out.n_ids, width)
    if status < 0:
        return status
    if put_bit(&out.locator_bits, out.n_citations, match.locator >= 0) < 0:
        return OUT_OF_MEMORY
    if match.locator >= 0:
        out.n_locators += 1
        if grow_append(&out.locator_data, row + match.locator,
                       match.locator_end - match.locator) < 0:
            return OUT_OF_MEMORY
    status = put_offset(&out.locator_offsets, out.locator_data.size, width)
    if status < 0:
        return status
    wide = start
    if grow_append(&out.starts, &wide, 8) < 0:
        return OUT_OF_MEMORY
    wide = end
    if grow_append(&out.ends, &wide, 8) < 0:
        return OUT_OF_MEMORY
    out.n_citations += 1
    return 0


cdef int extract_rows(Rows* rows, Matches* matches, Columns* out) noexcept nogil:
    cdef Py_ssize_t row, i, first, end, cursor, points, start
    cdef const Match* match
    cdef const uint8_t* data
    cdef int width = rows.width
    cdef int status = put_offset(&out.lists, 0, width)
    if status == 0:
        status = put_offset(&out.raw_offsets, 0, width)
    if status == 0:
        status = put_offset(&out.family_offsets, 0, width)
    if status == 0:
        status = put_offset(&out.ids_lists, 0, width)
    if status == 0:
        status = put_offset(&out.ids_offsets, 0, width)
    if status == 0:
        status = put_offset(&out.locator_offsets, 0, width)
    if status < 0:
        return status
    for row in range(rows.length):
        if row_valid(rows, row):
            first = row_bound(rows, row)
            end = row_bound(rows, row + 1)  # 0 <= first <= end <= data size (Layout.open)
            status = scan_row(rows, row, first, end, matches)
            if status < 0:
                return status
            data = rows.data + first
            cursor = 0  # a byte position in the row whose code point offset is `points`
            points = 0
            for i in range(matches.count):  # in order, within the row
                match = &matches.items[i]
                points += count_points(data, cursor, match.start)
                start = points
                points += count_points(data, match.start, match.end)
                cursor = match.end
                status = emit(<const utf8_t*>data, match, &rows.rules, start, points, out, width)
                if status < 0:
                    return status
        status = put_offset(&out.lists, out.n_citations, width)
        if status < 0:
            return status
        if rows.validity != NULL and put_bit(&out.list_bits, row, row_valid(rows, row)) < 0:
            return OUT_OF_MEMORY
    return 0


cdef Grow* column(Columns* out, Py_ssize_t i) noexcept nogil:
    """The i-th buffer of out (0 <= i < N_COLUMNS), in the order of the struct."""
    return &(<Grow*>out)[i]


def extract_utf8(validity, offsets, data, offset, length, width, families, allocate=None):
    """The valid citations of every row of a UTF-8 string array, as the buffers of a
    list<struct<raw, family, source_ids: list<string>, locator, start: int64, end: int64>>
    array (strings and lists with `width`-byte offsets).

    Returns a dict: "lists", "list_validity" (None when `validity` is None), "raw_offsets",
    "raw_data", "family_offsets", "family_data", "ids_lists", "ids_offsets", "ids_data",
    "locator_validity", "locator_offsets", "locator_data", "starts", "ends" (buffers) and
    "n_citations", "n_ids", "n_locators" (counts).  `allocate(size)`, when given, returns the
    writable bytes-like objects the buffers grow in (as in `strip_utf8`; each buffer is then
    a read-only memoryview of the first bytes of one); None: memory of the kernel's own.  A
    non-null row that is not well-formed UTF-8 is a ValueError naming it.
    """
    cdef Layout layout = Layout()
    cdef Matches matches
    cdef Columns out
    cdef Py_ssize_t i
    cdef int status = 0
    cdef Rows* rows = &layout.rows
    layout.open(validity, offsets, data, offset, length, width, families)
    check_allocate(allocate)
    init_matches(&matches)
    memset(&out, 0, sizeof(Columns))
    if allocate is not None:
        for i in range(N_COLUMNS):
            column(&out, i).allocate = <PyObject*>allocate
    try:
        with nogil:
            status = extract_rows(rows, &matches, &out)
        for i in range(N_COLUMNS):
            if column(&out, i).error != NULL:
                raise <object>column(&out, i).error
        raise_status(status, rows)
        return {
            "lists": own(&out.lists),
            "list_validity": own(&out.list_bits) if rows.validity != NULL else None,
            "raw_offsets": own(&out.raw_offsets),
            "raw_data": own(&out.raw_data),
            "family_offsets": own(&out.family_offsets),
            "family_data": own(&out.family_data),
            "ids_lists": own(&out.ids_lists),
            "ids_offsets": own(&out.ids_offsets),
            "ids_data": own(&out.ids_data),
            "locator_validity": own(&out.locator_bits),
            "locator_offsets": own(&out.locator_offsets),
            "locator_data": own(&out.locator_data),
            "starts": own(&out.starts),
            "ends": own(&out.ends),
            "n_citations": out.n_citations,
            "n_ids": out.n_ids,
            "n_locators": out.n_locators,
        }
    finally:
        free_matches(&matches)
        for i in range(N_COLUMNS):
            free_grow(column(&out, i))
