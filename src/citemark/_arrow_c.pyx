# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# cython: cdivision=True, freethreading_compatible=True
"""The compiled path of `citemark.arrow`: the marker scan over Arrow's UTF-8 string buffers.

It reads the three buffers of an Arrow `string` (int32 offsets) or `large_string` (int64
offsets) array -- validity bitmap, offsets, UTF-8 data -- in place, without a Python `str` per
row and without the GIL, and builds the buffers of the result in memory it owns and hands to
pyarrow without a copy (`OwnedBuffer`).  `citemark.arrow` turns those buffers into arrays; this
module imports neither pyarrow nor anything from the package.

The matching rules are those of `_scan_py.scan` (SPEC.md), carried over to UTF-8:

* START, STOP and DELIM (U+E200, U+E201, U+E202) are the byte triples EE 88 80 / 81 / 82.  In
  valid UTF-8 such a triple is that code point and nothing else (EE is a lead byte, never a
  continuation byte), so a byte search finds exactly what the `str` search finds.
* Families are tried in order, as UTF-8 bytes (a family with a lone surrogate cannot occur in
  valid UTF-8, so it never fits); the first STOP after the family's DELIM ends the match; a match
  is consumed whether or not its body is a valid citation.
* Linear in the worst case: `no_stop_from` is the leftmost position known to have no STOP at or
  after it, so a START that never closes costs its family test, not a search to the row's end.
* `str.strip()` whitespace and `\\d` are decided on decoded code points with CPython's own
  predicates (Py_UNICODE_ISSPACE, Py_UNICODE_ISDECIMAL), so non-ASCII whitespace (U+0085, U+00A0,
  U+3000...) and non-ASCII digits give the same answer as the `str` scanners: no fallback needed.
* Offsets in the result are code points: the number of non-continuation bytes before them.

The input must be valid UTF-8, which is Arrow's rule for string arrays.  Invalid bytes cannot
make this module read or write out of bounds; they only make its result unspecified.

Memory safety, the argument:
* `Layout.check` proves, before any scan, that the offsets buffer holds offset+length+1 entries
  of the given width, that they start >= 0, never decrease and end within the data buffer, and
  that the validity bitmap (when given) holds offset+length bits.  So every row is data[a:b]
  with 0 <= a <= b <= data size.
* Within a row every read is at an index < b, checked next to it (the comments say how): the
  searches look only at triples that fit before their end, `decode` never reads past its end.
* Every write goes through `Grow`, which reserves before it copies; sizes are Py_ssize_t sums of
  input sizes, so they cannot overflow; int32 offsets are checked against INT32_MAX.
"""

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_FillInfo, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.mem cimport PyMem_RawFree, PyMem_RawMalloc, PyMem_RawRealloc
from libc.stdint cimport INT32_MAX, int32_t, int64_t, uint8_t
from libc.string cimport memchr, memcmp, memcpy, memset

cdef extern from "Python.h":
    bint is_space "Py_UNICODE_ISSPACE"(Py_UCS4 ch) nogil
    bint is_decimal "Py_UNICODE_ISDECIMAL"(Py_UCS4 ch) nogil
    const Py_ssize_t PY_SSIZE_T_MAX

cdef enum:
    LEAD = 0xEE  # first byte of U+E000..U+EFFF
    MID = 0x88  # second byte of U+E200..U+E23F
    START_LAST = 0x80  # U+E200
    STOP_LAST = 0x81  # U+E201
    DELIM_LAST = 0x82  # U+E202
    MARK = 3  # bytes in each of the three marker characters
    # Status codes of the nogil parts (0 is success).
    OUT_OF_MEMORY = -1
    TOO_LARGE = -2


# --- growable output buffers -------------------------------------------------------------

cdef struct Grow:
    uint8_t* data
    Py_ssize_t size
    Py_ssize_t capacity


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
    bigger = <uint8_t*>PyMem_RawRealloc(grow.data, capacity)
    if bigger == NULL:
        return OUT_OF_MEMORY
    grow.data = bigger
    grow.capacity = capacity
    return 0


cdef inline int grow_append(Grow* grow, const void* source, Py_ssize_t count) noexcept nogil:
    if grow_reserve(grow, count) < 0:
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


cdef OwnedBuffer own(Grow* grow):
    """A new OwnedBuffer holding grow's memory; grow is left empty (freeing it is a no-op)."""
    cdef OwnedBuffer buffer = OwnedBuffer.__new__(OwnedBuffer)
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


cdef void free_grow(Grow* grow) noexcept nogil:
    PyMem_RawFree(grow.data)
    grow.data = NULL
    grow.size = 0
    grow.capacity = 0


# --- the input: buffers, checked layout, families ----------------------------------------

cdef struct Family:
    const uint8_t* chars  # the bytes object's own storage; the families tuple keeps it alive
    Py_ssize_t length


# What the nogil code reads: pointers into the held buffers, checked by Layout.open.
cdef struct Rows:
    const uint8_t* validity  # NULL: no nulls
    const uint8_t* offsets
    const uint8_t* data
    Py_ssize_t data_size
    Py_ssize_t offset
    Py_ssize_t length
    int width
    const Family* families
    Py_ssize_t n_families


cdef inline bint row_valid(const Rows* rows, Py_ssize_t row) noexcept nogil:
    """Is row (0 <= row < length) not null?  Bit offset + row is inside the bitmap (open)."""
    cdef Py_ssize_t bit = rows.offset + row
    if rows.validity == NULL:
        return True
    return (rows.validity[bit // 8] >> (bit % 8)) & 1


cdef inline int64_t row_bound(const Rows* rows, Py_ssize_t row) noexcept nogil:
    """Offset entry offset + row (0 <= row <= length): inside the offsets buffer (open)."""
    return load_offset(rows.offsets, rows.offset + row, rows.width)


cdef class Layout:
    """The input buffers of one string array, held through the buffer protocol, checked."""
    cdef Py_buffer validity_view, offsets_view, data_view
    cdef bint has_validity, has_offsets, has_data
    cdef Family* families
    cdef Rows rows

    def __cinit__(self):
        self.families = NULL
        memset(&self.rows, 0, sizeof(Rows))

    def __dealloc__(self):
        if self.has_validity:
            PyBuffer_Release(&self.validity_view)
        if self.has_offsets:
            PyBuffer_Release(&self.offsets_view)
        if self.has_data:
            PyBuffer_Release(&self.data_view)
        PyMem_RawFree(self.families)

    cdef int open(self, object validity, object offsets, object data, Py_ssize_t offset,
                  Py_ssize_t length, int width, tuple families) except -1:
        cdef Py_ssize_t f, n_families
        cdef bytes family
        cdef Rows* rows = &self.rows
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
        if self.offsets_view.len < (offset + length + 1) * width:
            raise ValueError("the offsets buffer is shorter than offset + length + 1 entries")
        rows.data = <const uint8_t*>""
        rows.data_size = 0
        if data is not None:
            PyObject_GetBuffer(data, &self.data_view, PyBUF_SIMPLE)
            self.has_data = True
            if self.data_view.buf != NULL:
                rows.data = <const uint8_t*>self.data_view.buf
                rows.data_size = self.data_view.len
        if validity is not None:
            PyObject_GetBuffer(validity, &self.validity_view, PyBUF_SIMPLE)
            self.has_validity = True
            if self.validity_view.len < (offset + length + 7) // 8:
                raise ValueError("the validity bitmap is shorter than offset + length bits")
            rows.validity = <const uint8_t*>self.validity_view.buf
        if check_offsets(rows.offsets, offset, length, width, rows.data_size) < 0:
            raise ValueError(
                "the offsets are not a valid string layout "
                "(negative, decreasing, or past the end of the data buffer)"
            )
        n_families = len(families)
        self.families = <Family*>PyMem_RawMalloc((n_families + 1) * sizeof(Family))
        if self.families == NULL:
            raise MemoryError()
        for f in range(n_families):
            family = families[f]  # TypeError unless bytes
            self.families[f].chars = <const uint8_t*>PyBytes_AS_STRING(family)
            self.families[f].length = PyBytes_GET_SIZE(family)
        rows.families = self.families
        rows.n_families = n_families
        return 0


cdef inline int64_t load_offset(const uint8_t* offsets, Py_ssize_t i, int width) noexcept nogil:
    # memcpy: Arrow buffers are normally aligned, but a foreign buffer need not be.
    cdef int32_t narrow
    cdef int64_t wide
    if width == 4:
        memcpy(&narrow, offsets + i * 4, 4)
        return narrow
    memcpy(&wide, offsets + i * 8, 8)
    return wide


cdef Py_ssize_t check_offsets(const uint8_t* offsets, Py_ssize_t offset, Py_ssize_t length,
                              int width, Py_ssize_t data_size) noexcept nogil:
    """-1 unless 0 <= offsets[offset] <= ... <= offsets[offset + length] <= data_size."""
    cdef Py_ssize_t i
    cdef int64_t previous = load_offset(offsets, offset, width), current
    if previous < 0:
        return -1
    for i in range(offset + 1, offset + length + 1):
        current = load_offset(offsets, i, width)
        if current < previous:
            return -1
        previous = current
    if previous > data_size:
        return -1
    return 0


# --- the scan of one row (no GIL) --------------------------------------------------------

cdef struct Match:
    Py_ssize_t start  # index of START's first byte
    Py_ssize_t end  # index after STOP's last byte
    Py_ssize_t body  # index after the family's DELIM
    Py_ssize_t family  # index into the families
    Py_ssize_t n_ids
    Py_ssize_t locator  # start of the locator part, or -1
    Py_ssize_t locator_end


cdef struct Matches:
    Match* items
    Py_ssize_t count
    Py_ssize_t capacity


cdef int push(Matches* matches, Match* match) noexcept nogil:
    cdef Py_ssize_t capacity
    cdef Match* grown
    if matches.count == matches.capacity:
        capacity = 2 * matches.capacity + 16
        grown = <Match*>PyMem_RawRealloc(matches.items, capacity * sizeof(Match))
        if grown == NULL:
            return OUT_OF_MEMORY
        matches.items = grown
        matches.capacity = capacity
    matches.items[matches.count] = match[0]
    matches.count += 1
    return 0


cdef inline Py_ssize_t find_mark(const uint8_t* data, Py_ssize_t i, Py_ssize_t end,
                                 uint8_t last) noexcept nogil:
    """The first j in [i, end - 3] where data[j:j+3] is EE 88 `last`, else -1."""
    cdef const uint8_t* hit
    while end - i >= MARK:
        # memchr looks at data[i .. end - 3]: a lead found there has its triple before end.
        hit = <const uint8_t*>memchr(data + i, LEAD, end - i - 2)
        if hit == NULL:
            return -1
        i = hit - data
        if data[i + 1] == MID and data[i + 2] == last:
            return i
        i += 1
    return -1


cdef inline Py_ssize_t head_end(const uint8_t* data, Py_ssize_t end, Py_ssize_t i,
                                const Family* family) noexcept nogil:
    """Index after `family` DELIM when data[i:end] begins with them, else -1.  i <= end."""
    cdef Py_ssize_t length = family.length
    if length > end - i - MARK:  # family and DELIM must fit: i + length + 3 <= end
        return -1
    if length > 0 and memcmp(data + i, family.chars, length) != 0:
        return -1
    if data[i + length] != LEAD or data[i + length + 1] != MID or data[i + length + 2] != DELIM_LAST:
        return -1
    return i + length + MARK


cdef inline Py_ssize_t decode(const uint8_t* data, Py_ssize_t i, Py_ssize_t end,
                              Py_UCS4* ch) noexcept nogil:
    """The code point at data[i] (i < end) into ch; returns the index after it.  A malformed
    sequence reads as U+FFFD, one byte long; nothing at or past `end` is read."""
    cdef uint8_t lead = data[i]
    cdef Py_UCS4 point
    if lead < 0x80:
        ch[0] = lead
        return i + 1
    if 0xC2 <= lead <= 0xDF and end - i >= 2 and (data[i + 1] & 0xC0) == 0x80:
        ch[0] = ((lead & 0x1F) << 6) | (data[i + 1] & 0x3F)
        return i + 2
    if (0xE0 <= lead <= 0xEF and end - i >= 3
            and (data[i + 1] & 0xC0) == 0x80 and (data[i + 2] & 0xC0) == 0x80):
        ch[0] = ((lead & 0x0F) << 12) | ((data[i + 1] & 0x3F) << 6) | (data[i + 2] & 0x3F)
        return i + 3
    if (0xF0 <= lead <= 0xF4 and end - i >= 4 and (data[i + 1] & 0xC0) == 0x80
            and (data[i + 2] & 0xC0) == 0x80 and (data[i + 3] & 0xC0) == 0x80):
        point = (((lead & 0x07) << 18) | ((data[i + 1] & 0x3F) << 12)
                 | ((data[i + 2] & 0x3F) << 6) | (data[i + 3] & 0x3F))
        ch[0] = point if point <= 0x10FFFF else 0xFFFD
        return i + 4
    ch[0] = 0xFFFD
    return i + 1


cdef inline Py_ssize_t next_part(const uint8_t* data, Py_ssize_t i, Py_ssize_t stop,
                                 Py_ssize_t* a, Py_ssize_t* b) noexcept nogil:
    """The part starting at i, stripped (`str.strip()`) to data[a:b] (a == b: empty); returns
    the index where it ends (a DELIM's first byte, or stop).  i <= stop."""
    cdef Py_ssize_t part_end = find_mark(data, i, stop, DELIM_LAST), after
    cdef Py_UCS4 ch
    cdef bint empty = True
    if part_end < 0:
        part_end = stop
    a[0] = part_end
    b[0] = part_end
    while i < part_end:  # decode reads below part_end only
        after = decode(data, i, part_end, &ch)
        if not is_space(ch):
            if empty:
                a[0] = i
                empty = False
            b[0] = after
        i = after
    return part_end


cdef inline bint is_source_id(const uint8_t* data, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """[A-Za-z0-9_-]+ over data[a:b] (a < b): ASCII bytes only."""
    cdef uint8_t ch
    for a in range(a, b):
        ch = data[a]
        if not (
            (ch >= c'a' and ch <= c'z') or (ch >= c'A' and ch <= c'Z')
            or (ch >= c'0' and ch <= c'9') or ch == c'_' or ch == c'-'
        ):
            return False
    return True


cdef inline Py_ssize_t skip_decimals(const uint8_t* data, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """Index after the run of `str.isdecimal()` code points starting at a (a <= b)."""
    cdef Py_ssize_t after
    cdef Py_UCS4 ch
    while a < b:
        after = decode(data, a, b, &ch)
        if not ((ch >= c'0' and ch <= c'9') or (ch >= 0x80 and is_decimal(ch))):
            break
        a = after
    return a


cdef inline bint is_locator(const uint8_t* data, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """L\\d+(?:-L\\d+)? over data[a:b] (a < b), with \\d as str.isdecimal."""
    cdef Py_ssize_t digits_end
    if data[a] != c'L':
        return False
    digits_end = skip_decimals(data, a + 1, b)
    if digits_end == a + 1:
        return False
    if digits_end == b:
        return True
    # then '-', 'L' and at least one digit up to b: three bytes at least, all below b
    if b - digits_end < 3 or data[digits_end] != c'-' or data[digits_end + 1] != c'L':
        return False
    return skip_decimals(data, digits_end + 2, b) == b


cdef bint parse_body(const uint8_t* data, Py_ssize_t body, Py_ssize_t stop,
                     Match* match) noexcept nogil:
    """Is data[body:stop] a citation body?  Fills the ids count and the locator."""
    cdef Py_ssize_t i = body, part_end, a, b, last_a = 0, last_b = 0, n_parts = 0
    while True:
        part_end = next_part(data, i, stop, &a, &b)
        if a < b:
            # Only the last part may be a locator; every part before it must be an id.
            if n_parts and not is_source_id(data, last_a, last_b):
                return False
            n_parts += 1
            last_a = a
            last_b = b
        if part_end >= stop:
            break
        i = part_end + MARK  # after the DELIM, which ends at or before stop
    if n_parts == 0:
        return False
    if is_locator(data, last_a, last_b):
        if n_parts == 1:
            return False
        match.n_ids = n_parts - 1
        match.locator = last_a
        match.locator_end = last_b
    elif is_source_id(data, last_a, last_b):
        match.n_ids = n_parts
        match.locator = -1
        match.locator_end = -1
    else:
        return False
    return True


cdef int scan_row(const uint8_t* data, Py_ssize_t first, Py_ssize_t end, const Family* families,
                  Py_ssize_t n_families, Matches* out) noexcept nogil:
    """Every valid citation of data[first:end], in order, into out (emptied first)."""
    cdef Py_ssize_t pos, resume, body, stop, f, no_stop_from = end
    cdef Match match
    out.count = 0
    pos = find_mark(data, first, end, START_LAST)
    while pos >= 0:  # pos + 3 <= end
        resume = pos + MARK
        for f in range(n_families):
            body = head_end(data, end, pos + MARK, &families[f])
            if body < 0:
                continue
            stop = find_mark(data, body, no_stop_from, STOP_LAST) if body < no_stop_from else -1
            if stop < 0:
                if body < no_stop_from:
                    no_stop_from = body
                continue
            # A match is consumed whether or not its body is a valid citation.
            if parse_body(data, body, stop, &match):
                match.start = pos
                match.end = stop + MARK
                match.body = body
                match.family = f
                if push(out, &match) < 0:
                    return OUT_OF_MEMORY
            resume = stop + MARK
            break
        pos = find_mark(data, resume, end, START_LAST)
    return 0


cdef inline Py_ssize_t count_points(const uint8_t* data, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """Code points in data[a:b]: the bytes that are not continuation bytes."""
    cdef Py_ssize_t count = 0
    for a in range(a, b):
        count += (data[a] & 0xC0) != 0x80
    return count


cdef int copy_bits(const Rows* rows, Grow* bits) noexcept nogil:
    """The validity bits of rows 0 .. length-1, moved to bit 0."""
    cdef Py_ssize_t row
    for row in range(rows.length):
        if put_bit(bits, row, row_valid(rows, row)) < 0:
            return OUT_OF_MEMORY
    return 0


cdef void raise_status(int status) except *:
    if status == OUT_OF_MEMORY:
        raise MemoryError()
    if status == TOO_LARGE:
        raise OverflowError("the result does not fit 32-bit offsets: use large_string")


# --- strip -------------------------------------------------------------------------------

cdef int strip_rows(const Rows* rows, Matches* matches, Grow* offsets, Grow* data) noexcept nogil:
    cdef Py_ssize_t row, i, first, end, kept_from
    cdef int status = put_offset(offsets, 0, rows.width)
    for row in range(rows.length):
        if status < 0:
            return status
        if row_valid(rows, row):
            first = row_bound(rows, row)
            end = row_bound(rows, row + 1)  # 0 <= first <= end <= data size (Layout.open)
            if scan_row(rows.data, first, end, rows.families, rows.n_families, matches) < 0:
                return OUT_OF_MEMORY
            kept_from = first
            for i in range(matches.count):  # first <= start < end <= row end, in order
                if grow_append(data, rows.data + kept_from, matches.items[i].start - kept_from) < 0:
                    return OUT_OF_MEMORY
                kept_from = matches.items[i].end
            if grow_append(data, rows.data + kept_from, end - kept_from) < 0:
                return OUT_OF_MEMORY
        status = put_offset(offsets, data.size, rows.width)
    return status


def strip_utf8(object validity, object offsets, object data, Py_ssize_t offset,
               Py_ssize_t length, int width, tuple families not None):
    """Strip the valid citations of every row of a UTF-8 string array.

    Returns None when the rows hold no START at all (the input is its own result), else
    (validity, offsets, data) of the result: offset 0, `width`-byte offsets, a null row empty
    and still null, `validity` None when it was None.
    """
    cdef Layout layout = Layout()
    cdef Matches matches
    cdef Grow out_offsets, out_data, out_bits
    cdef Py_ssize_t first, end
    cdef int status = 0
    cdef const Rows* rows = &layout.rows
    layout.open(validity, offsets, data, offset, length, width, families)
    first = row_bound(rows, 0)
    end = row_bound(rows, length)
    if rows.n_families == 0 or find_mark(rows.data, first, end, START_LAST) < 0:
        return None
    matches.items = NULL
    matches.count = 0
    matches.capacity = 0
    memset(&out_offsets, 0, sizeof(Grow))
    memset(&out_data, 0, sizeof(Grow))
    memset(&out_bits, 0, sizeof(Grow))
    try:
        with nogil:
            # The result is never longer than the input rows: one allocation.
            status = grow_reserve(&out_data, end - first)
            if status == 0:
                status = grow_reserve(&out_offsets, (length + 1) * width)
            if status == 0:
                status = strip_rows(rows, &matches, &out_offsets, &out_data)
            if status == 0 and rows.validity != NULL:
                status = copy_bits(rows, &out_bits)
        raise_status(status)
        return (
            own(&out_bits) if rows.validity != NULL else None,
            own(&out_offsets),
            own(&out_data),
        )
    finally:
        PyMem_RawFree(matches.items)
        free_grow(&out_offsets)
        free_grow(&out_data)
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


cdef int emit(const uint8_t* data, const Match* match, const Family* family, Py_ssize_t start,
              Py_ssize_t end, Columns* out, int width) noexcept nogil:
    """Append one citation (code point offsets start, end) to the columns."""
    cdef Py_ssize_t i = match.body, stop = match.end - MARK, a, b, part_end, n_ids = 0
    cdef int64_t wide
    if grow_append(&out.raw_data, data + match.start, match.end - match.start) < 0:
        return OUT_OF_MEMORY
    if put_offset(&out.raw_offsets, out.raw_data.size, width) < 0:
        return TOO_LARGE
    if grow_append(&out.family_data, family.chars, family.length) < 0:
        return OUT_OF_MEMORY
    if put_offset(&out.family_offsets, out.family_data.size, width) < 0:
        return TOO_LARGE
    # The first n_ids non-empty parts of the body; parse_body counted them, so the loop ends
    # before stop, and every part lies within data[body:stop].
    while n_ids < match.n_ids:
        part_end = next_part(data, i, stop, &a, &b)
        if a < b:
            if grow_append(&out.ids_data, data + a, b - a) < 0:
                return OUT_OF_MEMORY
            if put_offset(&out.ids_offsets, out.ids_data.size, width) < 0:
                return TOO_LARGE
            n_ids += 1
        if part_end >= stop:  # cannot happen (parse_body counted the parts); never loop on
            break
        i = part_end + MARK
    out.n_ids += n_ids
    if put_offset(&out.ids_lists, out.n_ids, width) < 0:
        return TOO_LARGE
    if put_bit(&out.locator_bits, out.n_citations, match.locator >= 0) < 0:
        return OUT_OF_MEMORY
    if match.locator >= 0:
        out.n_locators += 1
        if grow_append(&out.locator_data, data + match.locator, match.locator_end - match.locator) < 0:
            return OUT_OF_MEMORY
    if put_offset(&out.locator_offsets, out.locator_data.size, width) < 0:
        return TOO_LARGE
    wide = start
    if grow_append(&out.starts, &wide, 8) < 0:
        return OUT_OF_MEMORY
    wide = end
    if grow_append(&out.ends, &wide, 8) < 0:
        return OUT_OF_MEMORY
    out.n_citations += 1
    return 0


cdef int extract_rows(const Rows* rows, Matches* matches, Columns* out) noexcept nogil:
    cdef Py_ssize_t row, i, first, end, cursor, points, start
    cdef const Match* match
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
            if scan_row(rows.data, first, end, rows.families, rows.n_families, matches) < 0:
                return OUT_OF_MEMORY
            cursor = first  # a byte position whose code point offset in the row is `points`
            points = 0
            for i in range(matches.count):  # in order, first <= start < end <= row end
                match = &matches.items[i]
                points += count_points(rows.data, cursor, match.start)
                start = points
                points += count_points(rows.data, match.start, match.end)
                cursor = match.end
                status = emit(rows.data, match, &rows.families[match.family], start, points,
                              out, width)
                if status < 0:
                    return status
        status = put_offset(&out.lists, out.n_citations, width)
        if status < 0:
            return status
        if rows.validity != NULL and put_bit(&out.list_bits, row, row_valid(rows, row)) < 0:
            return OUT_OF_MEMORY
    return 0


cdef Grow* column_list(Columns* out, Py_ssize_t i) noexcept nogil:
    cdef Grow* grows[14]
    grows[0] = &out.lists
    grows[1] = &out.list_bits
    grows[2] = &out.raw_offsets
    grows[3] = &out.raw_data
    grows[4] = &out.family_offsets
    grows[5] = &out.family_data
    grows[6] = &out.ids_lists
    grows[7] = &out.ids_offsets
    grows[8] = &out.ids_data
    grows[9] = &out.locator_bits
    grows[10] = &out.locator_offsets
    grows[11] = &out.locator_data
    grows[12] = &out.starts
    grows[13] = &out.ends
    return grows[i]


def extract_utf8(object validity, object offsets, object data, Py_ssize_t offset,
                 Py_ssize_t length, int width, tuple families not None):
    """The valid citations of every row of a UTF-8 string array, as the buffers of a
    list<struct<raw, family, source_ids: list<string>, locator, start: int64, end: int64>>
    array (strings and lists with `width`-byte offsets).

    Returns a dict: "lists", "list_validity" (None when `validity` is None), "raw_offsets",
    "raw_data", "family_offsets", "family_data", "ids_lists", "ids_offsets", "ids_data",
    "locator_validity", "locator_offsets", "locator_data", "starts", "ends" (buffers) and
    "n_citations", "n_ids", "n_locators" (counts).
    """
    cdef Layout layout = Layout()
    cdef Matches matches
    cdef Columns out
    cdef Py_ssize_t i
    cdef int status = 0
    cdef const Rows* rows = &layout.rows
    layout.open(validity, offsets, data, offset, length, width, families)
    matches.items = NULL
    matches.count = 0
    matches.capacity = 0
    memset(&out, 0, sizeof(Columns))
    try:
        with nogil:
            status = extract_rows(rows, &matches, &out)
        raise_status(status)
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
        PyMem_RawFree(matches.items)
        for i in range(14):
            free_grow(column_list(&out, i))
