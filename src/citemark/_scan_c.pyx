# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# cython: cdivision=True, freethreading_compatible=True
"""The compiled kernel: one pass over CPython's own string storage (PEP 393), no copy.

Same functions, names and branch order as the twin in `_scan_py.py`.  The scan itself
(`scan_units`) touches no Python object, so it runs without the GIL on large texts; the
results are built afterwards from a small array of matches.

Bounds: every read of `data` is at an index proven < n by the code next to it (the
comments say how); text lengths and offsets are Py_ssize_t, so sums cannot overflow.
"""

from cpython.dict cimport PyDict_GetItemRef
from cpython.exc cimport PyErr_Clear, PyErr_Occurred
from cpython.long cimport PyLong_CheckExact
from cpython.mem cimport PyMem_RawFree, PyMem_RawMalloc, PyMem_RawRealloc
from cpython.object cimport PyObject
from cpython.ref cimport Py_DECREF
from cpython.unicode cimport PyUnicode_New, PyUnicode_Substring
from libc.stdint cimport uint32_t
from libc.string cimport memcpy

cdef extern from "Python.h":
    ctypedef unsigned char Py_UCS1
    ctypedef unsigned short Py_UCS2
    int PyUnicode_KIND(object text)
    void* PyUnicode_DATA(object text)
    Py_UCS4 read_unit "PyUnicode_READ"(int kind, const void* data, Py_ssize_t index) nogil
    bint is_space "Py_UNICODE_ISSPACE"(Py_UCS4 ch) nogil
    bint is_decimal "Py_UNICODE_ISDECIMAL"(Py_UCS4 ch) nogil
    # Declared without an exception check: read_offset looks at the error itself.
    Py_ssize_t as_ssize_t "PyLong_AsSsize_t"(object number)

cdef extern from "_simd.h" nogil:
    const char* cm_init()
    Py_ssize_t cm_find_ucs1(const Py_UCS1* data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch)
    Py_ssize_t cm_find_ucs2(const Py_UCS2* data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch)
    Py_ssize_t cm_find_ucs4(const Py_UCS4* data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch)
    uint32_t cm_or_ucs1(const Py_UCS1* data, Py_ssize_t a, Py_ssize_t b)
    uint32_t cm_or_ucs2(const Py_UCS2* data, Py_ssize_t a, Py_ssize_t b)
    uint32_t cm_or_ucs4(const Py_UCS4* data, Py_ssize_t a, Py_ssize_t b)

# The vector path chosen for this CPU ("avx2", "sse2", "neon" or "portable").
SIMD = cm_init().decode()

ctypedef fused unit_t:
    Py_UCS1
    Py_UCS2
    Py_UCS4

cdef enum:
    START = 0xE200
    DELIM = 0xE202
    STOP = 0xE201
    # Below this many code units the GIL is not worth releasing.
    NOGIL_MIN_LENGTH = 1 << 15
    FAMILIES_ON_STACK = 8


cdef struct Family:
    const void* chars  # the family str's own storage; the families tuple keeps it alive
    int kind
    Py_ssize_t length

cdef struct Match:
    Py_ssize_t start  # index of START
    Py_ssize_t end  # index after STOP
    Py_ssize_t body  # index after the family's DELIM
    Py_ssize_t family  # index into the families tuple
    Py_ssize_t n_ids
    Py_ssize_t locator  # start of the locator part, or -1
    Py_ssize_t locator_end

cdef struct Matches:
    Match* items
    Py_ssize_t count
    Py_ssize_t capacity


# --- the scan (no GIL) -------------------------------------------------------------------

cdef inline Py_ssize_t find_unit(const unit_t* data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch) noexcept nogil:
    if unit_t is Py_UCS1:
        return cm_find_ucs1(data, i, end, ch)
    elif unit_t is Py_UCS2:
        return cm_find_ucs2(data, i, end, ch)
    else:
        return cm_find_ucs4(data, i, end, ch)


cdef inline Py_ssize_t head_end(const unit_t* data, Py_ssize_t n, Py_ssize_t i, const Family* family) noexcept nogil:
    """Index after `family` DELIM when the text continues with them at i, else -1."""
    cdef Py_ssize_t j, length = family.length
    if length >= n - i:  # family and DELIM must fit: i + length < n
        return -1
    for j in range(length):
        if data[i + j] != read_unit(family.kind, family.chars, j):
            return -1
    if data[i + length] != DELIM:
        return -1
    return i + length + 1


cdef inline bint is_source_id(const unit_t* data, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """[A-Za-z0-9_-]+ over data[a:b] (a < b)."""
    cdef Py_UCS4 ch
    for a in range(a, b):
        ch = data[a]
        if not (
            (ch >= c'a' and ch <= c'z') or (ch >= c'A' and ch <= c'Z')
            or (ch >= c'0' and ch <= c'9') or ch == c'_' or ch == c'-'
        ):
            return False
    return True


cdef inline Py_ssize_t skip_decimals(const unit_t* data, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    while a < b and ((data[a] >= c'0' and data[a] <= c'9') or (data[a] >= 0x80 and is_decimal(data[a]))):
        a += 1
    return a


cdef inline bint is_locator(const unit_t* data, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """L\\d+(?:-L\\d+)? over data[a:b], with \\d as str.isdecimal."""
    cdef Py_ssize_t digits_end
    if data[a] != c'L':
        return False
    digits_end = skip_decimals(data, a + 1, b)
    if digits_end == a + 1:
        return False
    if digits_end == b:
        return True
    # data[digits_end] is '-' and then 'L' and at least one digit, ending at b
    if b - digits_end < 3 or data[digits_end] != c'-' or data[digits_end + 1] != c'L':
        return False
    a = digits_end + 2
    return skip_decimals(data, a, b) == b


cdef inline Py_ssize_t next_part(const unit_t* data, Py_ssize_t i, Py_ssize_t stop, Py_ssize_t* a, Py_ssize_t* b) noexcept nogil:
    """The part starting at i, stripped to data[a:b]; returns the index of its end (a
    DELIM, or stop).  i <= stop < n."""
    cdef Py_ssize_t part_end = i
    while part_end < stop and data[part_end] != DELIM:
        part_end += 1
    while i < part_end and is_space(data[i]):
        i += 1
    b[0] = part_end
    while b[0] > i and is_space(data[b[0] - 1]):
        b[0] -= 1
    a[0] = i
    return part_end


cdef bint parse_body(const unit_t* data, Py_ssize_t body, Py_ssize_t stop, Match* match) noexcept nogil:
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
        i = part_end + 1
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


cdef int push(Matches* matches, Match* match) noexcept nogil:
    cdef Py_ssize_t capacity
    cdef Match* grown
    if matches.count == matches.capacity:
        capacity = 2 * matches.capacity + 16
        grown = <Match*>PyMem_RawRealloc(matches.items, capacity * sizeof(Match))
        if grown == NULL:
            return -1
        matches.items = grown
        matches.capacity = capacity
    matches.items[matches.count] = match[0]
    matches.count += 1
    return 0


cdef int scan_units(const unit_t* data, Py_ssize_t n, const Family* families, Py_ssize_t n_families, Matches* out) noexcept nogil:
    """Every valid citation of data[:n], in order; -1 when out of memory.

    Linear: `no_stop_from` is the leftmost position known to have no STOP at or after it,
    so a START that is never closed costs its family test, not a search to the end.
    """
    cdef Py_ssize_t pos, resume, body, stop, f, no_stop_from = n
    cdef Match match
    pos = find_unit(data, 0, n, START)
    while pos >= 0:  # pos < n
        resume = pos + 1
        for f in range(n_families):
            body = head_end(data, n, pos + 1, &families[f])
            if body < 0:
                continue
            stop = find_unit(data, body, no_stop_from, STOP) if body < no_stop_from else -1
            if stop < 0:
                if body < no_stop_from:
                    no_stop_from = body
                continue
            # A match is consumed whether or not its body is a valid citation.
            if parse_body(data, body, stop, &match):
                match.start = pos
                match.end = stop + 1
                match.body = body
                match.family = f
                if push(out, &match) < 0:
                    return -1
            resume = stop + 1
            break
        pos = find_unit(data, resume, n, START)
    return 0


cdef int scan_any(int kind, const void* data, Py_ssize_t n, const Family* families, Py_ssize_t n_families, Matches* out) noexcept nogil:
    if kind == 2:
        return scan_units(<const Py_UCS2*>data, n, families, n_families, out)
    return scan_units(<const Py_UCS4*>data, n, families, n_families, out)


cdef int scan(str text, const Family* families, Py_ssize_t n_families, Matches* out) except -1:
    cdef int kind = PyUnicode_KIND(text), status
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = len(text)
    if kind == 1:  # every unit < 0x100: no START here
        return 0
    if n < NOGIL_MIN_LENGTH:
        status = scan_any(kind, data, n, families, n_families, out)
    else:
        with nogil:
            status = scan_any(kind, data, n, families, n_families, out)
    if status < 0:
        raise MemoryError()
    return 0


# --- building results (GIL) --------------------------------------------------------------

cdef str ascii_substring(const unit_t* data, Py_ssize_t a, Py_ssize_t b):
    """data[a:b] as a str, for a span already checked to be ASCII: no max-char scan."""
    cdef str part = PyUnicode_New(b - a, 0x7F)
    copy_units(data + a, PyUnicode_DATA(part), 1, b - a)
    return part


cdef list source_ids(const unit_t* data, const Match* match):
    """The first n_ids non-empty stripped parts of the body (ASCII, by parse_body)."""
    cdef list ids = []
    cdef Py_ssize_t i = match.body, stop = match.end - 1, a, b, part_end
    while len(ids) < match.n_ids:  # parse_body counted them: the loop ends before stop
        part_end = next_part(data, i, stop, &a, &b)
        if a < b:
            ids.append(ascii_substring(data, a, b))
        i = part_end + 1
    return ids


cdef extern from "Python.h":
    dict new_presized_dict "_PyDict_NewPresized"(Py_ssize_t size)


cdef dict citation(str text, tuple families, const Match* match):
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    # Sized for six keys up front: a plain {} would be resized on the sixth insert.
    cdef dict result = new_presized_dict(6)
    if kind == 2:
        # raw holds START (>= 0x100) and only 2-byte units: its kind is known.
        raw = PyUnicode_New(match.end - match.start, 0xFFFF)
        memcpy(PyUnicode_DATA(raw), <const Py_UCS2*>data + match.start, 2 * (match.end - match.start))
        ids = source_ids(<const Py_UCS2*>data, match)
    else:
        raw = PyUnicode_Substring(text, match.start, match.end)
        ids = source_ids(<const Py_UCS4*>data, match)
    result["raw"] = raw
    result["family"] = families[match.family]
    result["source_ids"] = ids
    result["locator"] = None if match.locator < 0 else PyUnicode_Substring(text, match.locator, match.locator_end)
    result["start"] = match.start
    result["end"] = match.end
    return result


cdef class Scan:
    """The families as C structs, and the matches of one text; frees what it holds."""
    cdef Family stack_families[FAMILIES_ON_STACK]
    cdef Family* families
    cdef Py_ssize_t n_families
    cdef Matches matches

    def __cinit__(self, tuple families):
        cdef Py_ssize_t f
        cdef str family
        self.n_families = len(families)
        self.families = self.stack_families
        if self.n_families > FAMILIES_ON_STACK:
            self.families = <Family*>PyMem_RawMalloc(self.n_families * sizeof(Family))
            if self.families == NULL:
                raise MemoryError()
        for f in range(self.n_families):
            family = families[f]
            self.families[f].chars = PyUnicode_DATA(family)
            self.families[f].kind = PyUnicode_KIND(family)
            self.families[f].length = len(family)

    def __dealloc__(self):
        if self.families != self.stack_families:
            PyMem_RawFree(self.families)
        PyMem_RawFree(self.matches.items)

    cdef int run(self, str text) except -1:
        self.matches.count = 0
        return scan(text, self.families, self.n_families, &self.matches)


def extract(str text not None, tuple families not None):
    cdef Scan state
    cdef Py_ssize_t i
    if PyUnicode_KIND(text) == 1:
        return []
    state = Scan(families)
    state.run(text)
    return [citation(text, families, &state.matches.items[i]) for i in range(state.matches.count)]


def strip(str text not None, tuple families not None):
    cdef Scan state
    if PyUnicode_KIND(text) == 1:
        return text
    state = Scan(families)
    state.run(text)
    return cut_matches(text, &state.matches)


# --- cutting spans out -------------------------------------------------------------------

cdef inline uint32_t or_units(const unit_t* data, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    if unit_t is Py_UCS1:
        return cm_or_ucs1(data, a, b)
    elif unit_t is Py_UCS2:
        return cm_or_ucs2(data, a, b)
    else:
        return cm_or_ucs4(data, a, b)


cdef inline void copy_units(const unit_t* source, void* target, int target_kind, Py_ssize_t count) noexcept nogil:
    """Copy count units, narrowing to target_kind (the caller checked they fit)."""
    cdef Py_ssize_t i
    cdef Py_UCS1* to1
    cdef Py_UCS2* to2
    if sizeof(unit_t) == target_kind:
        memcpy(target, source, count * sizeof(unit_t))
    elif target_kind == 1:
        to1 = <Py_UCS1*>target
        for i in range(count):
            to1[i] = <Py_UCS1>source[i]
    else:
        to2 = <Py_UCS2*>target
        for i in range(count):
            to2[i] = <Py_UCS2>source[i]


cdef Py_UCS4 kept_maxchar(const unit_t* data, Py_ssize_t n, const Matches* matches) noexcept nogil:
    """The maxchar class of what the cut keeps: a result of a narrower kind than the text
    must be stored narrower, or it would not equal the same text built by slicing."""
    cdef uint32_t bits = 0, widest
    cdef Py_ssize_t i, kept_from = 0
    widest = 0x80 if unit_t is Py_UCS1 else (0x100 if unit_t is Py_UCS2 else 0x10000)
    for i in range(matches.count + 1):
        if bits >= widest:
            break
        if i < matches.count:
            bits |= or_units(data, kept_from, matches.items[i].start)
            kept_from = matches.items[i].end
        else:
            bits |= or_units(data, kept_from, n)
    if bits >= 0x10000:
        return 0x10FFFF
    if bits >= 0x100:
        return 0xFFFF
    if bits >= 0x80:
        return 0xFF
    return 0x7F


cdef void copy_kept(const unit_t* data, Py_ssize_t n, const Matches* matches, void* target, int target_kind) noexcept nogil:
    cdef Py_ssize_t i, kept_from = 0, written = 0, start
    for i in range(matches.count + 1):
        start = matches.items[i].start if i < matches.count else n
        copy_units(data + kept_from, <char*>target + written * target_kind, target_kind, start - kept_from)
        written += start - kept_from
        if i < matches.count:
            kept_from = matches.items[i].end


cdef Py_UCS4 kept_maxchar_any(int kind, const void* data, Py_ssize_t n, const Matches* matches) noexcept nogil:
    if kind == 1:
        return kept_maxchar(<const Py_UCS1*>data, n, matches)
    if kind == 2:
        return kept_maxchar(<const Py_UCS2*>data, n, matches)
    return kept_maxchar(<const Py_UCS4*>data, n, matches)


cdef void copy_kept_any(int kind, const void* data, Py_ssize_t n, const Matches* matches, void* target, int target_kind) noexcept nogil:
    if kind == 1:
        copy_kept(<const Py_UCS1*>data, n, matches, target, target_kind)
    elif kind == 2:
        copy_kept(<const Py_UCS2*>data, n, matches, target, target_kind)
    else:
        copy_kept(<const Py_UCS4*>data, n, matches, target, target_kind)


cdef object cut_matches(str text, const Matches* matches):
    """text without the spans of matches: in order, disjoint, 0 <= start <= end <= n."""
    cdef Py_ssize_t i, n = len(text), removed = 0
    cdef int kind = PyUnicode_KIND(text), target_kind
    cdef const void* data = PyUnicode_DATA(text)
    cdef void* target
    cdef Py_UCS4 maxchar
    cdef bint release = n >= NOGIL_MIN_LENGTH
    for i in range(matches.count):
        removed += matches.items[i].end - matches.items[i].start
    if removed == 0:
        return text
    if release:
        with nogil:
            maxchar = kept_maxchar_any(kind, data, n, matches)
    else:
        maxchar = kept_maxchar_any(kind, data, n, matches)
    result = PyUnicode_New(n - removed, maxchar)
    target_kind = PyUnicode_KIND(result)
    target = PyUnicode_DATA(result)
    if release:
        with nogil:
            copy_kept_any(kind, data, n, matches, target, target_kind)
    else:
        copy_kept_any(kind, data, n, matches, target, target_kind)
    return result


cdef bint read_offset(dict citation, str key, Py_ssize_t* value) except -1:
    """citation[key] when it is an exact int that fits; False for anything else."""
    cdef PyObject* found
    cdef bint fits
    if PyDict_GetItemRef(citation, key, &found) == 0:
        return False
    offset = <object>found
    Py_DECREF(offset)  # `offset` holds its own reference now
    if not PyLong_CheckExact(offset):
        return False
    value[0] = as_ssize_t(offset)
    fits = not (value[0] == -1 and PyErr_Occurred())
    if not fits:
        PyErr_Clear()  # too large for any text: the general path decides
    return fits


def cut(object text, object citations):
    """text without the spans of citations when they are plain (exact dicts, exact int
    offsets, in order, disjoint, in range); None otherwise, for the general path."""
    cdef Matches matches
    cdef Match match
    cdef Py_ssize_t n, kept_from = 0
    if type(text) is not str:
        return None
    n = len(<str>text)
    matches.items = NULL
    matches.count = 0
    matches.capacity = 0
    try:
        for item in citations:
            if type(item) is not dict:
                return None
            if not read_offset(<dict>item, "start", &match.start) or not read_offset(<dict>item, "end", &match.end):
                return None
            if not (kept_from <= match.start <= match.end <= n):
                return None
            if push(&matches, &match) < 0:
                raise MemoryError()
            kept_from = match.end
        return cut_matches(<str>text, &matches)
    finally:
        PyMem_RawFree(matches.items)
