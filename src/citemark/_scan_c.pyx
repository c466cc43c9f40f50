# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# cython: cdivision=True, freethreading_compatible=True
"""The compiled kernel: one pass over CPython's own string storage (PEP 393), no copy.

Same classes, functions, names and branch order as the twin in `_scan_py.py`.  The scan
itself (`scan_units`) touches no Python object, so it runs without the GIL on large texts;
results are built afterwards from an array of matches.

Bounds: every read of `data` is at an index proven < n by the code next to it (the
comments say how); lengths and offsets are Py_ssize_t, so their sums cannot overflow.
"""

from cpython.dict cimport PyDict_GetItemRef
from cpython.exc cimport PyErr_Clear, PyErr_Occurred
from cpython.long cimport PyLong_CheckExact
from cpython.mem cimport PyMem_RawFree, PyMem_RawMalloc, PyMem_RawRealloc
from cpython.object cimport PyObject, PyTypeObject
from cpython.ref cimport Py_DECREF, Py_INCREF
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
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
    dict new_presized_dict "_PyDict_NewPresized"(Py_ssize_t size)
    PyObject* type_alloc "PyType_GenericAlloc"(PyTypeObject* cls, Py_ssize_t items) except NULL
    void gc_untrack "PyObject_GC_UnTrack"(object op)
    const Py_ssize_t PY_SSIZE_T_MAX

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
    # Below this many code units the GIL is not worth releasing.
    NOGIL_MIN_LENGTH = 1 << 15
    # Offsets reported in code points, UTF-16 code units or UTF-8 bytes.
    UNITS_CODE_POINTS = 0
    UNITS_UTF16 = 1
    UNITS_UTF8 = 2
    # Match.n_ids when the body has not been judged yet (custom rules judge it in Python).
    UNJUDGED = -2
    # Match.n_ids of a consumed match that is not a citation.
    INVALID = -1


cdef struct Family:
    const void* chars  # the family str's own storage; Grammar.families keeps it alive
    int kind
    Py_ssize_t length

cdef struct Rules:
    Py_UCS4 start
    Py_UCS4 delim
    Py_UCS4 stop
    Py_ssize_t max_length  # of a whole marker, START to STOP; PY_SSIZE_T_MAX: no limit
    bint any_family
    bint builtin_rules  # ids and locators checked in C (the guide's patterns)
    Family* families
    Py_ssize_t n_families

cdef enum:
    # The judge remembers where this many parts of a body are, so building the citation
    # reads them back instead of splitting the body again.
    PART_SLOTS = 6

cdef struct Match:
    Py_ssize_t start  # index of START
    Py_ssize_t end  # index after STOP
    Py_ssize_t body  # index after the family's DELIM
    Py_ssize_t family  # index into the families, or -1: the name is text[start+1:body-1]
    Py_ssize_t n_ids  # ids before the locator; INVALID or UNJUDGED
    Py_ssize_t locator  # start of the locator part, or -1
    Py_ssize_t locator_end
    bint locator_ascii  # known to be ASCII: built without a max-char scan
    Py_ssize_t n_parts  # non-empty parts; more than PART_SLOTS: split the body again
    Py_ssize_t parts[2 * PART_SLOTS]  # [start, end) of each stripped part

cdef enum:
    # A typical answer's matches fit here, so scanning it allocates nothing.
    INLINE_MATCHES = 16

cdef struct Matches:
    Match* items  # `inline` until it outgrows it, then the heap
    Py_ssize_t count
    Py_ssize_t capacity
    Match inline[INLINE_MATCHES]


# --- the scan (no GIL) -------------------------------------------------------------------

cdef inline Py_ssize_t find_unit(const unit_t* data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch) noexcept nogil:
    if unit_t is Py_UCS1:
        return cm_find_ucs1(data, i, end, ch)
    elif unit_t is Py_UCS2:
        return cm_find_ucs2(data, i, end, ch)
    else:
        return cm_find_ucs4(data, i, end, ch)


cdef enum:
    IS_SPACE = 1  # str.isspace()
    IS_ID = 2  # [A-Za-z0-9_-]

# The classes of the ASCII characters, for the per-character loop of judge_body.
cdef unsigned char ASCII_CLASS[128]


cdef void init_ascii_class() noexcept:
    cdef int ch
    for ch in range(128):
        ASCII_CLASS[ch] = (IS_SPACE if is_space(ch) else 0) | (IS_ID if is_word(ch) or ch == c'-' else 0)


cdef inline bint is_word(Py_UCS4 ch) noexcept nogil:
    return (
        (ch >= c'a' and ch <= c'z') or (ch >= c'A' and ch <= c'Z')
        or (ch >= c'0' and ch <= c'9') or ch == c'_'
    )


cdef inline Py_ssize_t head_end(const unit_t* data, Py_ssize_t n, Py_ssize_t i, const Family* family, Py_UCS4 delim) noexcept nogil:
    """Index after `family` DELIM when the text continues with them at i, else -1."""
    cdef Py_ssize_t j, length = family.length
    if length >= n - i:  # family and DELIM must fit: i + length < n
        return -1
    for j in range(length):
        if data[i + j] != read_unit(family.kind, family.chars, j):
            return -1
    if data[i + length] != delim:
        return -1
    return i + length + 1


cdef inline Py_ssize_t any_head_end(const unit_t* data, Py_ssize_t n, Py_ssize_t i, Py_UCS4 delim) noexcept nogil:
    """Index after a [A-Za-z0-9_]+ name and DELIM at i, else -1."""
    cdef Py_ssize_t j = i
    while j < n and is_word(data[j]):
        j += 1
    if j == i or j == n or data[j] != delim:
        return -1
    return j + 1


cdef inline Py_ssize_t skip_decimals(const unit_t* data, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    while a < b and ((data[a] >= c'0' and data[a] <= c'9') or (data[a] >= 0x80 and is_decimal(data[a]))):
        a += 1
    return a


cdef inline bint is_locator(const unit_t* data, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """L\\d+(?:-L\\d+)? over data[a:b] (a < b), with \\d as str.isdecimal."""
    cdef Py_ssize_t digits_end
    if data[a] != c'L':
        return False
    digits_end = skip_decimals(data, a + 1, b)
    if digits_end == a + 1:
        return False
    if digits_end == b:
        return True
    # then '-', 'L' and at least one digit, ending at b
    if b - digits_end < 3 or data[digits_end] != c'-' or data[digits_end + 1] != c'L':
        return False
    return skip_decimals(data, digits_end + 2, b) == b


cdef inline Py_ssize_t next_part(const unit_t* data, Py_ssize_t i, Py_ssize_t stop, Py_UCS4 delim, Py_ssize_t* a, Py_ssize_t* b) noexcept nogil:
    """The part starting at i, stripped to data[a:b]; returns the index of its end (a
    DELIM, or stop).  i <= stop < n."""
    cdef Py_ssize_t part_end = i
    while part_end < stop and data[part_end] != delim:
        part_end += 1
    while i < part_end and is_space(data[i]):
        i += 1
    b[0] = part_end
    while b[0] > i and is_space(data[b[0] - 1]):
        b[0] -= 1
    a[0] = i
    return part_end


cdef void judge_body(const unit_t* data, Py_ssize_t stop, Py_UCS4 delim, Match* match) noexcept nogil:
    """Is data[match.body:stop] a citation body under the guide's rules?  Sets n_ids
    (INVALID if not), the locator and the parts, in one pass over the body."""
    cdef Py_ssize_t i = match.body, a, end, first_bad, n_parts = 0, last_a = 0, last_b = 0
    cdef bint last_is_id = False
    cdef Py_UCS4 ch
    cdef unsigned char char_class
    match.n_ids = INVALID
    match.locator = -1
    match.locator_end = -1
    match.locator_ascii = False
    while True:
        # One part: data[i:] up to the next DELIM (or stop), stripped to data[a:end].
        while i < stop and data[i] != delim and is_space(data[i]):
            i += 1
        a = end = i
        first_bad = stop  # the first character at or after a that an id may not hold
        while i < stop:
            ch = data[i]
            if ch == delim:
                break
            char_class = ASCII_CLASS[ch] if ch < 128 else (IS_SPACE if is_space(ch) else 0)
            if not (char_class & IS_SPACE):
                end = i + 1
            if not (char_class & IS_ID) and first_bad == stop:
                first_bad = i
            i += 1
        if a < end:
            # Only the last part may be a locator; every part before it must be an id.
            if n_parts and not last_is_id:
                return
            if n_parts < PART_SLOTS:
                match.parts[2 * n_parts] = a
                match.parts[2 * n_parts + 1] = end
            n_parts += 1
            last_a = a
            last_b = end
            last_is_id = first_bad >= end
        if i >= stop:
            break
        i += 1  # past the DELIM
    match.n_parts = n_parts
    if n_parts == 0:
        return
    if is_locator(data, last_a, last_b):
        if n_parts > 1:
            match.n_ids = n_parts - 1
            match.locator = last_a
            match.locator_end = last_b
            match.locator_ascii = last_is_id  # id characters are ASCII
    elif last_is_id:
        match.n_ids = n_parts


cdef inline void init_matches(Matches* matches) noexcept nogil:
    matches.items = matches.inline
    matches.count = 0
    matches.capacity = INLINE_MATCHES


cdef inline void free_matches(Matches* matches) noexcept nogil:
    if matches.items != matches.inline:
        PyMem_RawFree(matches.items)


cdef int push(Matches* matches, const Match* match) noexcept nogil:
    cdef Py_ssize_t capacity = 2 * matches.capacity
    cdef Match* grown
    if matches.count == matches.capacity:
        if matches.items == matches.inline:
            grown = <Match*>PyMem_RawMalloc(capacity * sizeof(Match))
            if grown != NULL:
                memcpy(grown, matches.inline, matches.count * sizeof(Match))
        else:
            grown = <Match*>PyMem_RawRealloc(matches.items, capacity * sizeof(Match))
        if grown == NULL:
            return -1
        matches.items = grown
        matches.capacity = capacity
    matches.items[matches.count] = match[0]
    matches.count += 1
    return 0


cdef int scan_units(const unit_t* data, Py_ssize_t n, const Rules* rules, bint keep_invalid, Matches* out) noexcept nogil:
    """Every match of data[:n], in order (the invalid ones only with keep_invalid); -1
    when out of memory.

    Linear: (stop_from, stop_at) caches "the first STOP at or after stop_from is stop_at"
    (-1: none), so a START that is never closed costs its family test, not a search to
    the end of the text as in the guide's regex.  A query left of stop_from only happens
    when a family holds a START; it searches at most that family's length.
    """
    cdef Py_ssize_t pos, resume, body, stop, f, stop_from = n, stop_at = -1
    cdef Match match
    pos = find_unit(data, 0, n, rules.start)
    while pos >= 0:  # pos < n
        resume = pos + 1
        for f in range(-1 if rules.any_family else 0, 0 if rules.any_family else rules.n_families):
            if f < 0:
                body = any_head_end(data, n, pos + 1, rules.delim)
            else:
                body = head_end(data, n, pos + 1, &rules.families[f], rules.delim)
            if body < 0:
                continue
            # stop = the first STOP at or after body (body <= n)
            if body >= stop_from:
                if stop_at >= 0 and body > stop_at:
                    stop_at = find_unit(data, body, n, rules.stop)
                    stop_from = body
            else:
                stop = find_unit(data, body, stop_from, rules.stop)
                if stop >= 0:
                    stop_at = stop
                stop_from = body
            stop = stop_at
            if stop < 0 or stop - pos >= rules.max_length:
                continue  # fail open: the START stays text
            # A match is consumed whether or not its body is a citation.
            match.start = pos
            match.end = stop + 1
            match.body = body
            match.family = f
            if rules.builtin_rules:
                judge_body(data, stop, rules.delim, &match)
            else:
                match.n_ids = UNJUDGED
            if (match.n_ids != INVALID or keep_invalid) and push(out, &match) < 0:
                return -1
            resume = stop + 1
            break
        pos = find_unit(data, resume, n, rules.start)
    return 0


cdef int scan_any(int kind, const void* data, Py_ssize_t n, const Rules* rules, bint keep_invalid, Matches* out) noexcept nogil:
    if kind == 1:
        return scan_units(<const Py_UCS1*>data, n, rules, keep_invalid, out)
    if kind == 2:
        return scan_units(<const Py_UCS2*>data, n, rules, keep_invalid, out)
    return scan_units(<const Py_UCS4*>data, n, rules, keep_invalid, out)


init_ascii_class()


# --- the grammar -------------------------------------------------------------------------

cdef class Grammar:
    """What a marker looks like, as C structs for the scan.  Built once per Parser."""
    cdef Rules rules
    cdef readonly tuple families
    cdef readonly object source_id  # a compiled pattern, or None for the guide's rule
    cdef readonly object locator  # likewise

    def __cinit__(self, tuple families not None, str start not None, str delimiter not None,
                 str stop not None, bint any_family=False, object max_marker_length=None,
                 object source_id=None, object locator=None):
        cdef Py_ssize_t f
        cdef str family
        self.families = families
        self.source_id = source_id
        self.locator = locator
        self.rules.start = ord(start)
        self.rules.delim = ord(delimiter)
        self.rules.stop = ord(stop)
        self.rules.any_family = any_family
        # No text is longer than PY_SSIZE_T_MAX: a larger bound is no bound.
        if max_marker_length is None or max_marker_length >= PY_SSIZE_T_MAX:
            self.rules.max_length = PY_SSIZE_T_MAX
        else:
            self.rules.max_length = max_marker_length
        self.rules.builtin_rules = source_id is None and locator is None
        self.rules.n_families = len(families)
        self.rules.families = <Family*>PyMem_RawMalloc((self.rules.n_families + 1) * sizeof(Family))
        if self.rules.families == NULL:
            raise MemoryError()
        for f in range(self.rules.n_families):
            family = families[f]
            self.rules.families[f].chars = PyUnicode_DATA(family)
            self.rules.families[f].kind = PyUnicode_KIND(family)
            self.rules.families[f].length = len(family)

    def __dealloc__(self):
        PyMem_RawFree(self.rules.families)

    cdef bint cannot_match(self, str text):
        # Every unit of a 1-byte-kind text is < 0x100: a START above that is not there.
        return PyUnicode_KIND(text) == 1 and self.rules.start > 0xFF


cdef int scan(str text, Grammar grammar, bint keep_invalid, Matches* matches) except -1:
    """Fill matches (initialised by the caller, who frees them) with the matches of text."""
    cdef int kind = PyUnicode_KIND(text), status
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = len(text)
    if n < NOGIL_MIN_LENGTH:
        status = scan_any(kind, data, n, &grammar.rules, keep_invalid, matches)
    else:
        with nogil:
            status = scan_any(kind, data, n, &grammar.rules, keep_invalid, matches)
    if status < 0:
        raise MemoryError()
    if not grammar.rules.builtin_rules:
        judge_with_patterns(text, grammar, matches, keep_invalid)
    return 0


# --- building results (GIL) --------------------------------------------------------------

cdef list parts_of(str text, const unit_t* data, Match* match, Py_UCS4 delim):
    """The non-empty stripped parts of the body, as str; records their spans in the
    match as judge_body does, and the last one's as the locator's."""
    cdef list parts = []
    cdef Py_ssize_t i = match.body, stop = match.end - 1, a, b, part_end, n_parts = 0
    while True:
        part_end = next_part(data, i, stop, delim, &a, &b)
        if a < b:
            parts.append(PyUnicode_Substring(text, a, b))
            if n_parts < PART_SLOTS:
                match.parts[2 * n_parts] = a
                match.parts[2 * n_parts + 1] = b
            n_parts += 1
            match.locator = a
            match.locator_end = b
        if part_end >= stop:
            match.n_parts = n_parts
            return parts
        i = part_end + 1


cdef int judge_with_patterns(str text, Grammar grammar, Matches* matches, bint keep_invalid) except -1:
    """Judge UNJUDGED matches with the grammar's own patterns (fullmatch), as the twin
    does; drop the invalid ones unless keep_invalid."""
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t i, kept = 0
    cdef Match* match
    cdef list parts
    for i in range(matches.count):
        match = &matches.items[i]
        if kind == 1:
            parts = parts_of(text, <const Py_UCS1*>data, match, grammar.rules.delim)
        elif kind == 2:
            parts = parts_of(text, <const Py_UCS2*>data, match, grammar.rules.delim)
        else:
            parts = parts_of(text, <const Py_UCS4*>data, match, grammar.rules.delim)
        match.n_ids = INVALID
        match.locator_ascii = False
        if parts:
            if grammar.locator.fullmatch(parts[len(parts) - 1]) is not None:
                parts.pop()
            else:
                match.locator = -1
            if parts and all(grammar.source_id.fullmatch(part) is not None for part in parts):
                match.n_ids = len(parts)
        if match.n_ids != INVALID or keep_invalid:
            matches.items[kept] = match[0]
            kept += 1
    matches.count = kept
    return 0


cdef str ascii_substring(const unit_t* data, Py_ssize_t a, Py_ssize_t b):
    """data[a:b] as a str, for a span known to be ASCII: no max-char scan."""
    cdef str part = PyUnicode_New(b - a, 0x7F)
    copy_units(data + a, PyUnicode_DATA(part), 1, b - a)
    return part


cdef object source_ids(str text, const unit_t* data, const Match* match, Py_UCS4 delim, bint ascii_ids, bint as_tuple):
    """The source ids of a valid match, as a list (the drop-in dict) or a tuple (a record)."""
    cdef Py_ssize_t i = match.body, stop = match.end - 1, a = 0, b = 0, part_end, k = 0
    ids = PyTuple_New(match.n_ids) if as_tuple else PyList_New(match.n_ids)
    while k < match.n_ids:
        if match.n_parts <= PART_SLOTS:  # the judge recorded every part
            a = match.parts[2 * k]
            b = match.parts[2 * k + 1]
        else:  # split the body again; the judge counted the ids, so this ends before stop
            part_end = next_part(data, i, stop, delim, &a, &b)
            i = part_end + 1
            if a == b:
                continue
        part = ascii_substring(data, a, b) if ascii_ids else PyUnicode_Substring(text, a, b)
        Py_INCREF(part)  # the SET_ITEMs steal a reference
        if as_tuple:
            PyTuple_SET_ITEM(ids, k, part)
        else:
            PyList_SET_ITEM(ids, k, part)
        k += 1
    return ids


cdef object fields(str text, Grammar grammar, const Match* match, bint as_tuple):
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    # The guide's id rule admits ASCII only, so its ids need no max-char scan.
    cdef bint ascii_ids = grammar.rules.builtin_rules
    cdef Py_UCS4 delim = grammar.rules.delim
    if kind == 1:
        return source_ids(text, <const Py_UCS1*>data, match, delim, ascii_ids, as_tuple)
    if kind == 2:
        return source_ids(text, <const Py_UCS2*>data, match, delim, ascii_ids, as_tuple)
    return source_ids(text, <const Py_UCS4*>data, match, delim, ascii_ids, as_tuple)


cdef inline object locator_of(str text, const Match* match):
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    if match.locator < 0:
        return None
    if not match.locator_ascii:
        return PyUnicode_Substring(text, match.locator, match.locator_end)
    if kind == 1:
        return ascii_substring(<const Py_UCS1*>data, match.locator, match.locator_end)
    if kind == 2:
        return ascii_substring(<const Py_UCS2*>data, match.locator, match.locator_end)
    return ascii_substring(<const Py_UCS4*>data, match.locator, match.locator_end)


cdef inline object family_of(str text, Grammar grammar, const Match* match):
    if match.family < 0:
        return PyUnicode_Substring(text, match.start + 1, match.body - 1)
    return grammar.families[match.family]


cdef str raw_of(str text, Grammar grammar, const Match* match):
    if PyUnicode_KIND(text) == 2 and grammar.rules.start > 0xFF:
        # 2-byte units and a START >= 0x100 in the span: its kind is known, no scan.
        raw = PyUnicode_New(match.end - match.start, 0xFFFF)
        memcpy(PyUnicode_DATA(raw), <const Py_UCS2*>PyUnicode_DATA(text) + match.start, 2 * (match.end - match.start))
        return raw
    return PyUnicode_Substring(text, match.start, match.end)


cdef dict citation(str text, Grammar grammar, const Match* match):
    # Sized for six keys up front: a plain {} would be resized on the sixth insert.
    cdef dict result = new_presized_dict(6)
    result["raw"] = raw_of(text, grammar, match)
    result["family"] = family_of(text, grammar, match)
    result["source_ids"] = fields(text, grammar, match, False)
    result["locator"] = locator_of(text, match)
    result["start"] = match.start
    result["end"] = match.end
    return result


def extract(str text not None, Grammar grammar not None):
    cdef Matches matches
    cdef Py_ssize_t i
    if grammar.cannot_match(text):
        return []
    init_matches(&matches)
    try:
        scan(text, grammar, False, &matches)
        return [citation(text, grammar, &matches.items[i]) for i in range(matches.count)]
    finally:
        free_matches(&matches)


def strip(str text not None, Grammar grammar not None):
    cdef Matches matches
    if grammar.cannot_match(text):
        return text
    init_matches(&matches)
    try:
        scan(text, grammar, False, &matches)
        return cut_matches(text, &matches)
    finally:
        free_matches(&matches)


def spans(str text not None, Grammar grammar not None):
    """Every consumed match, valid or not: a list of (start, end, is_citation)."""
    cdef Matches matches
    cdef Py_ssize_t i
    cdef Match* match
    if grammar.cannot_match(text):
        return []
    init_matches(&matches)
    try:
        scan(text, grammar, True, &matches)
        result = []
        for i in range(matches.count):
            match = &matches.items[i]
            result.append((match.start, match.end, match.n_ids != INVALID))
        return result
    finally:
        free_matches(&matches)


# --- offsets in other units --------------------------------------------------------------

cdef Py_ssize_t extra_units(const unit_t* data, Py_ssize_t a, Py_ssize_t b, int units) noexcept nogil:
    """How many more UTF-16 units or UTF-8 bytes than code points data[a:b] takes."""
    cdef Py_ssize_t extra = 0
    cdef Py_UCS4 ch
    if units == UNITS_UTF16:
        if unit_t is Py_UCS4:
            for a in range(a, b):
                extra += data[a] >= 0x10000
        return extra
    for a in range(a, b):
        ch = data[a]
        extra += (ch >= 0x80) + (ch >= 0x800) + (ch >= 0x10000)
    return extra


cdef class Offsets:
    """Walks a text left to right, turning code point indexes into `units`; each call
    resumes where the last one ended, so converting all matches is one pass."""
    cdef str text
    cdef int kind
    cdef const void* data
    cdef int units
    cdef Py_ssize_t at, extra

    def __cinit__(self, str text, int units):
        self.text = text
        self.kind = PyUnicode_KIND(text)
        self.data = PyUnicode_DATA(text)
        self.units = units
        self.at = 0
        self.extra = 0

    cdef Py_ssize_t convert(self, Py_ssize_t index):
        """index (>= the previous one) in units."""
        if self.units == UNITS_CODE_POINTS or (self.units == UNITS_UTF16 and self.kind < 4):
            return index
        if self.kind == 1:
            self.extra += extra_units(<const Py_UCS1*>self.data, self.at, index, self.units)
        elif self.kind == 2:
            self.extra += extra_units(<const Py_UCS2*>self.data, self.at, index, self.units)
        else:
            self.extra += extra_units(<const Py_UCS4*>self.data, self.at, index, self.units)
        self.at = index
        return index + self.extra


cdef inline void fill(object record, Py_ssize_t i, object value):
    Py_INCREF(value)  # PyTuple_SET_ITEM steals a reference
    PyTuple_SET_ITEM(record, i, value)


cdef object new_record(object cls, bint untrack, object family, tuple source_ids, object locator, Py_ssize_t start, Py_ssize_t end, Py_ssize_t clean_start):
    """cls(family, ids, locator, start, end, clean_start) for a tuple subclass cls, filled
    in place; every field is built before the record exists, so it is never seen half full.

    A tuple of str cannot be part of a reference cycle, and CPython's collector untracks
    such tuples itself on its next pass; doing it now spares that pass, which is a quarter
    of the cost of a dense text.  The record too, when its class has no __dict__ (all its
    fields are then immutable and atomic)."""
    gc_untrack(source_ids)
    cdef object start_ = start, end_ = end, clean_start_ = clean_start
    record = <object>type_alloc(<PyTypeObject*>cls, 6)
    Py_DECREF(record)  # type_alloc's reference now belongs to `record`
    fill(record, 0, family)
    fill(record, 1, source_ids)
    fill(record, 2, locator)
    fill(record, 3, start_)
    fill(record, 4, end_)
    fill(record, 5, clean_start_)
    if untrack:
        gc_untrack(record)
    return record


def records(str text not None, Grammar grammar not None, object cls, int units):
    """The citations of text as cls records (a tuple subclass of six fields), with
    offsets in `units`; clean_start is where the citation sits in the stripped text."""
    cdef Matches matches
    cdef Offsets offsets
    cdef Py_ssize_t i, start, end, removed = 0
    cdef Match* match
    cdef bint untrack
    if not (isinstance(cls, type) and issubclass(cls, tuple)):
        raise TypeError("cls must be a tuple subclass")
    untrack = (<PyTypeObject*>cls).tp_dictoffset == 0
    if grammar.cannot_match(text):
        return []
    init_matches(&matches)
    try:
        scan(text, grammar, False, &matches)
        offsets = Offsets(text, units)
        result = []
        for i in range(matches.count):
            match = &matches.items[i]
            start = offsets.convert(match.start)
            end = offsets.convert(match.end)
            result.append(new_record(cls, untrack, family_of(text, grammar, match), fields(text, grammar, match, True), locator_of(text, match), start, end, start - removed))
            removed += end - start
        return result
    finally:
        free_matches(&matches)


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
    """text without the spans of citations when they are plain (a list or tuple of exact
    dicts with exact int offsets, in order, disjoint, in range); None otherwise, for the
    general path."""
    cdef Matches matches
    cdef Match match
    cdef Py_ssize_t n, kept_from = 0
    if type(text) is not str or (type(citations) is not list and type(citations) is not tuple):
        return None  # an iterator would be used up here: the general path reads it once
    n = len(<str>text)
    init_matches(&matches)
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
        free_matches(&matches)
