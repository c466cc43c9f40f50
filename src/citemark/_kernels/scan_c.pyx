# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# cython: cdivision=True, freethreading_compatible=True, auto_pickle=False, autotestdict=False
"""The compiled kernel: one pass over CPython's own string storage (PEP 393), no copy.

The scan itself is the one C grammar in `grammar_c.pxi` (shared with `arrow_c`); it
touches no Python object, so it runs without the GIL on large texts.  Results are built
afterwards from an array of matches.  Each entry point reads the text's kind once and calls
the fused function for that storage width.

Kernel name -> twin name in `scan_py.py` (read the two side by side):

    Grammar                      Grammar
    scan_units (grammar_c.pxi)  scan
    head_end, any_head_end       heads_at
    judge_body                   judge_body (the guide's rules)
    judge_with_patterns          judge_body (custom patterns)
    extract / citation           extract
    strip / cut_units            strip / cut_spans
    spans                        spans
    Offsets / convert            Offsets / Offsets.convert
    records / new_record         records
    cut                          cut
    undecided                    undecided
    first_undecided              first_undecided
    undecided_from               undecided_from
    StreamFront / look_units     StreamFront / StreamFront.look

Kernel-only fast paths, each with what it earns (CPU time, min of 15, kernel with and
without it; 1,000 varied answers from benches/corpus.py and one 1 MB text of 20,000
citations):

    cut (plain dicts)    strip_citations over the answers: 1.77x faster (6.0 vs 10.6 ms)
    new_record untrack   finditer of the dense text: 1.3-1.5x faster (6.1-7.3 vs 8.5-9.6 ms)
    Shared, dict copies  extract of the dense text 1.13x faster (13.8 vs 15.6 ms), of the
                         answers 1.1x (8.2 vs 8.7-9.5 ms), of a 4 MB answer-like text of
                         100,000 citations 1.4x (52 vs 73 ms): 400 bytes of fresh memory a
                         citation instead of 650, a page fault each 10 citations not 6
    NOGIL_MIN_LENGTH     the GIL is released only for texts long enough to pay for it
    Grammar.header_line  rules on their own cache line, for threads without the GIL
    StreamFront.feed     a StreamParser's delta in one C call (METH_O), its looks at held
                         text in C: 3.1x / 3.6x / 4.7x fewer instructions a typical 4 KB
                         answer in 4 / 16 / 64-character deltas than the stream of 25ee52e
                         over this kernel (callgrind, benches/compare.py's parser_stream
                         workloads)

Not kernel-only: both implementations build each dict as a copy of one split-table dict,
`_core.dropin.CITATION_TEMPLATE`, whose copies share its key table (`Shared, dict copies` above
copied a dict that owned one).  On a 4 MB text of 100,000 citations (the one_line and
answer shapes of benches/bench_bounds.py; CPU time, min of 9, old and new kernel in one
process): 264 bytes of fresh memory a citation instead of 400, 5,500 minor page faults a
call instead of 9,100, extract 1.13-1.17x faster (45 and 44 ms vs 51 ms).

Dropped, for earning 5% or less (same measurement): the six-slot cache of a body's parts,
ids and locators built from a known-ASCII span, raw built by one memcpy from 2-byte text.

Bounds: every read of `data` is at an index proven < n by the code next to it (the
comments say how); lengths and offsets are Py_ssize_t, so their sums cannot overflow.
"""

cimport cython
from cpython.dict cimport PyDict_Copy, PyDict_GetItemRef
from cpython.exc cimport PyErr_Clear, PyErr_Occurred
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.long cimport PyLong_CheckExact
from cpython.object cimport PyObject, PyTypeObject
from cpython.ref cimport Py_DECREF, Py_INCREF, Py_XDECREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.unicode cimport PyUnicode_New, PyUnicode_Substring
from libc.stdint cimport uint32_t, uint64_t
from libc.string cimport memcmp, memset

from citemark._core.dropin import CITATION_TEMPLATE as _CITATION_TEMPLATE
from citemark._core.grammar import (
    OWNER_TYPES as _OWNER_TYPES,
    STREAM_BUSY,
    check_owner,
    check_rules,
    stop_in_family,
)

include "grammar_c.pxi"

cdef extern from "Python.h":
    int PyUnicode_KIND(object text)
    void* PyUnicode_DATA(object text)
    # Declared without an exception check: read_offset looks at the error itself.
    Py_ssize_t as_ssize_t "PyLong_AsSsize_t"(object number)
    PyObject* type_alloc "PyType_GenericAlloc"(PyTypeObject* cls, Py_ssize_t items) except NULL
    void gc_untrack "PyObject_GC_UnTrack"(object op)
    void gc_track "PyObject_GC_Track"(object op)

cdef extern from "simd.h" nogil:
    uint32_t cm_or_ucs1(const Py_UCS1* data, Py_ssize_t a, Py_ssize_t b)
    uint32_t cm_or_ucs2(const Py_UCS2* data, Py_ssize_t a, Py_ssize_t b)
    uint32_t cm_or_ucs4(const Py_UCS4* data, Py_ssize_t a, Py_ssize_t b)
    void cm_narrow_ucs2(const Py_UCS2* source, Py_UCS1* target, Py_ssize_t n)

# The vector path chosen for this CPU ("avx2", "sse2", "neon" or "portable").
SIMD = SIMD_PATH.decode()

# The storage widths of a str (the UTF-8 member of unit_t is `arrow_c`'s).
ctypedef fused text_t:
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
    # Slots of a call's shared strings (a power of two; see Shared).
    SHARED_BITS = 8
    SHARED_SLOTS = 1 << SHARED_BITS
    # Calls with fewer matches build every str anew (see start_sharing).
    SHARE_MIN_MATCHES = 32
    # Spans up to this many units are built by `substring`'s own loop (an id, a locator, a
    # marker); longer ones by CPython, whose widest-unit search is vectorised.
    SHORT_SPAN = 128


# --- the grammar -------------------------------------------------------------------------

cdef extern from *:
    """
    #if PY_VERSION_HEX >= 0x030E0000
    #define cm_defer_refcount(o) PyUnstable_Object_EnableDeferredRefcount(o)
    #else
    #define cm_defer_refcount(o) 0
    #endif
    """
    # 3.14t: the interpreter then leaves the object's count alone when it loads it.
    int cm_defer_refcount(object o)


cdef class Grammar:
    """What a marker looks like, as C structs for the scan.  Built once per Parser."""
    # Without the GIL, every call that pushes the shared Grammar writes its reference count
    # in the object's first cache line; the scan reads `rules` all the time, so `rules` must
    # live on a line of its own or each thread's reads miss on the other's writes.
    cdef char header_line[64]
    cdef Rules rules
    cdef readonly tuple families
    cdef readonly object source_id  # a compiled pattern, or None for the guide's rule
    cdef readonly object locator  # likewise
    cdef readonly bint stop_in_family  # see _core.grammar.stop_in_family

    def __cinit__(self, tuple families not None, str start not None, str delimiter not None,
                  str stop not None, bint any_family=False, object max_marker_length=None,
                  object source_id=None, object locator=None):
        cdef Py_ssize_t f
        cdef str family
        # The same checks, in the same order, as the twin's Grammar.
        for item in families:  # a str-typed loop would let None through to PyUnicode_DATA
            if not isinstance(item, str):
                raise TypeError(f"families must hold str items, not {type(item).__name__}")
        set_mark(&self.rules.start, marker("start", start))
        set_mark(&self.rules.delim, marker("delimiter", delimiter))
        set_mark(&self.rules.stop, marker("stop", stop))
        check_rules(max_marker_length, source_id, locator)
        self.families = families
        self.source_id = source_id
        self.locator = locator
        cm_defer_refcount(self)
        self.rules.any_family = any_family
        self.stop_in_family = stop_in_family(families, stop, any_family)
        # No text is longer than PY_SSIZE_T_MAX: a larger bound is no bound.
        if max_marker_length is None or max_marker_length >= PY_SSIZE_T_MAX:
            self.rules.max_length = PY_SSIZE_T_MAX
        else:
            self.rules.max_length = max_marker_length
        self.rules.builtin_rules = source_id is None and locator is None
        self.rules.n_families = len(families)
        self.rules.families = <Family*>PyMem_RawMalloc(
            (self.rules.n_families + 1) * sizeof(Family)
        )
        if self.rules.families == NULL:
            raise MemoryError()
        for f in range(self.rules.n_families):
            family = families[f]  # a TypeError unless str: the pointer below needs one
            self.rules.families[f].chars = PyUnicode_DATA(family)
            self.rules.families[f].kind = PyUnicode_KIND(family)
            self.rules.families[f].length = len(family)

    def __dealloc__(self):
        PyMem_RawFree(self.rules.families)

    cdef bint cannot_match(self, str text):
        # Every unit of a 1-byte-kind text is < 0x100: a START above that is not there.
        return PyUnicode_KIND(text) == 1 and self.rules.start.point > 0xFF


cdef uint32_t marker(str name, str value) except? 0:
    if len(value) != 1:
        raise ValueError(f"{name} must be exactly one character, not {value!r}")
    return ord(value)


cdef int scan(str text, const text_t* data, Grammar grammar, bint keep_invalid,
              Matches* matches) except -1:
    """Fill matches (initialised by the caller, who frees them) with the matches of text."""
    cdef Py_ssize_t n = len(text)
    cdef int status
    if n < NOGIL_MIN_LENGTH:
        status = scan_units(data, n, &grammar.rules, keep_invalid, matches)
    else:
        with nogil:
            status = scan_units(data, n, &grammar.rules, keep_invalid, matches)
    if status < 0:
        raise MemoryError()
    if not grammar.rules.builtin_rules:
        judge_with_patterns(text, data, grammar, matches, keep_invalid)
    return 0


cdef list parts_of(str text, const text_t* data, Match* match, const Mark* delim):
    """The non-empty stripped parts of the body, as str; the last one's span is recorded
    as the locator's."""
    cdef list parts = []
    cdef Py_ssize_t i = match.body, stop = match.end - 1, a, b, part_end
    while True:
        part_end = next_part(data, i, stop, delim, &a, &b)
        if a < b:
            parts.append(PyUnicode_Substring(text, a, b))
            match.locator = a
            match.locator_end = b
        if part_end >= stop:
            return parts
        i = part_end + 1


cdef bint all_ids(object source_id, list parts) except -1:
    # A function of its own: Cython cannot put a generator inside a fused function.
    return all(source_id.fullmatch(part) is not None for part in parts)


cdef int judge_with_patterns(str text, const text_t* data, Grammar grammar, Matches* matches,
                             bint keep_invalid) except -1:
    """Judge UNJUDGED matches with the grammar's own patterns (fullmatch), as the twin
    does; drop the invalid ones unless keep_invalid."""
    cdef Py_ssize_t i, kept = 0
    cdef Match* match
    cdef list parts
    for i in range(matches.count):
        match = &matches.items[i]
        parts = parts_of(text, data, match, &grammar.rules.delim)
        match.n_ids = INVALID
        if parts:
            if grammar.locator.fullmatch(parts[len(parts) - 1]) is not None:
                parts.pop()
            else:
                match.locator = -1
            if parts and all_ids(grammar.source_id, parts):
                match.n_ids = len(parts)
        if match.n_ids != INVALID or keep_invalid:
            matches.items[kept] = match[0]
            kept += 1
    matches.count = kept
    return 0


# --- building results (GIL) --------------------------------------------------------------

cdef extern from *:
    """
    #define CM_HASH_MULTIPLIER 0x9E3779B97F4A7C15ULL
    """
    const uint64_t CM_HASH_MULTIPLIER


cdef struct SharedString:
    PyObject* string  # an owned reference; NULL (with length 0): an empty slot
    uint64_t hash  # span_hash of its span
    Py_ssize_t start  # where its span is in the text
    Py_ssize_t length


cdef struct Shared:
    # The strings one call has built, by a hash of their span.  A long text's result is
    # fresh memory, which the system hands over a page at a time (a page fault each, about
    # half the cost of a dense text's citation): an id, a marker or a locator that recurs is
    # one more reference to the str built the first time, not one more copy.  Two slots a
    # hash, the one used last first: a marker and its locator that fall on the same hash
    # still both stay.  One call's only: nothing kept, nothing shared between threads.
    SharedString slots[SHARED_SLOTS]


cdef inline Shared* start_sharing(Shared* shared, Py_ssize_t matches) noexcept nogil:
    """`shared`, emptied, when a call builds enough strings for it to pay; else NULL (every
    str then built anew).  A result of a few citations comes from memory the allocator
    already holds: there the hashing would cost more than the copies it saves."""
    if matches < SHARE_MIN_MATCHES:
        return NULL
    memset(shared.slots, 0, sizeof(shared.slots))
    return shared


cdef void free_shared(Shared* shared) noexcept:
    cdef Py_ssize_t i
    if shared == NULL:
        return
    for i in range(SHARED_SLOTS):
        Py_XDECREF(shared.slots[i].string)


cdef inline uint64_t mix(uint64_t h, const char* bytes) noexcept nogil:
    cdef uint64_t word
    memcpy(&word, bytes, 8)
    return (h ^ word) * CM_HASH_MULTIPLIER


cdef inline uint64_t span_hash(const char* bytes, Py_ssize_t size) noexcept nogil:
    """A hash of bytes[:size]: of its size and of four words spread over it (all of a span of
    32 bytes or less, an id).  No loop, so no trip count for the processor to mispredict;
    a span that only differs between the words read shares a slot (memcmp tells them apart)."""
    cdef uint64_t h = <uint64_t>size * CM_HASH_MULTIPLIER, word = 0
    cdef Py_ssize_t step
    if size < 8:
        memcpy(&word, bytes, size)
        return (h ^ word) * CM_HASH_MULTIPLIER
    step = (size - 8) // 3
    h = mix(h, bytes)
    h = mix(h, bytes + step)
    h = mix(h, bytes + 2 * step)
    return mix(h, bytes + size - 8)


cdef inline object substring(str text, const text_t* data, Py_ssize_t a, Py_ssize_t b,
                             Py_UCS4 maxchar):
    """text[a:b] (a < b), the very str PyUnicode_Substring makes.  `maxchar` is the span's
    widest class when the caller knows it (0x7F for an id under the guide's rule), else 0:
    a short span is then measured by one loop; a long one goes to CPython."""
    cdef uint32_t bits = 0
    cdef Py_ssize_t i
    if b - a == 1:
        return PyUnicode_Substring(text, a, b)  # one character: CPython's cached str
    if maxchar == 0:
        if b - a > SHORT_SPAN:
            return PyUnicode_Substring(text, a, b)
        for i in range(a, b):
            bits |= <uint32_t>data[i]
        if bits < 0x80:
            maxchar = 0x7F
        elif bits < 0x100:
            maxchar = 0xFF
        elif bits < 0x10000:
            maxchar = 0xFFFF
        else:
            maxchar = 0x10FFFF
    made = PyUnicode_New(b - a, maxchar)
    if text_t is Py_UCS2:
        if maxchar <= 0xFF:
            cm_narrow_ucs2(data + a, <Py_UCS1*>PyUnicode_DATA(made), b - a)
            return made
    copy_units(data + a, PyUnicode_DATA(made), PyUnicode_KIND(made), b - a)
    return made


cdef inline bint holds(const SharedString* slot, uint64_t h, const text_t* data, Py_ssize_t a,
                       Py_ssize_t b) noexcept nogil:
    """Does the slot hold text[a:b]?  Equal hashes first: memcmp then runs on (almost) sure
    hits only.  An empty slot's length, 0, is no span's."""
    return (slot.hash == h and slot.length == b - a
            and memcmp(data + slot.start, data + a, (b - a) * sizeof(text_t)) == 0)


cdef object shared_substring(str text, const text_t* data, Shared* shared, Py_ssize_t a,
                             Py_ssize_t b, Py_UCS4 maxchar):
    """text[a:b] (`maxchar` as in `substring`); the very str built earlier in the call for
    an equal span when one of its hash's two slots still holds it (`shared` NULL: always a
    new str)."""
    cdef uint64_t h
    cdef SharedString* pair
    cdef SharedString used
    if shared == NULL:
        return substring(text, data, a, b, maxchar)
    h = span_hash(<const char*>(data + a), (b - a) * <Py_ssize_t>sizeof(text_t))
    # The top bits: the product's low bits only depend on the words' low bits.
    pair = &shared.slots[2 * <Py_ssize_t>(h >> (65 - SHARED_BITS))]
    if holds(&pair[0], h, data, a, b):
        return <object>pair[0].string
    if holds(&pair[1], h, data, a, b):
        used = pair[1]
        pair[1] = pair[0]
        pair[0] = used
        return <object>used.string
    made = substring(text, data, a, b, maxchar)
    Py_INCREF(made)  # the slot's reference
    Py_XDECREF(pair[1].string)
    pair[1] = pair[0]
    pair[0].string = <PyObject*>made
    pair[0].hash = h
    pair[0].start = a
    pair[0].length = b - a
    return made


cdef object source_ids(str text, const text_t* data, Grammar grammar, const Match* match,
                       bint as_tuple, Shared* shared):
    """The source ids of a valid match, as a list (the drop-in dict) or a tuple (a record)."""
    cdef Py_ssize_t i = match.body, stop = match.end - 1, a = 0, b = 0, k = 0
    # The guide's id rule admits ASCII characters only.
    cdef Py_UCS4 maxchar = 0x7F if grammar.rules.builtin_rules else 0
    # judge_body kept where the first ids are (the guide's rules only).
    cdef bint kept = grammar.rules.builtin_rules and match.n_ids <= ID_SLOTS
    ids = PyTuple_New(match.n_ids) if as_tuple else PyList_New(match.n_ids)
    while k < match.n_ids:
        if kept:
            a = match.ids[2 * k]
            b = match.ids[2 * k + 1]
        else:
            # The judge counted the ids, so this ends before stop.
            i = next_part(data, i, stop, &grammar.rules.delim, &a, &b) + 1
            if a == b:
                continue
        part = shared_substring(text, data, shared, a, b, maxchar)
        Py_INCREF(part)  # the SET_ITEMs steal a reference
        if as_tuple:
            PyTuple_SET_ITEM(ids, k, part)
        else:
            PyList_SET_ITEM(ids, k, part)
        k += 1
    return ids


cdef inline object locator_of(str text, const text_t* data, const Match* match,
                              Shared* shared):
    if match.locator < 0:
        return None
    return shared_substring(text, data, shared, match.locator, match.locator_end, 0)


cdef inline object family_of(str text, const text_t* data, Grammar grammar, const Match* match,
                             Shared* shared):
    if match.family < 0:
        # Any family's name is [A-Za-z0-9_]+.
        return shared_substring(text, data, shared, match.start + 1, match.body - 1, 0x7F)
    return grammar.families[match.family]


cdef inline Py_UCS4 raw_maxchar(const text_t* data, Grammar grammar) noexcept:
    """A marker's widest class when its START tells it (0: measure it): in 2-byte text, a
    START above U+00FF makes every marker 2-byte."""
    if text_t is Py_UCS2:
        return 0xFFFF if grammar.rules.start.point > 0xFF else 0
    else:
        return 0


# What every drop-in dict is a copy of: a split-table dict on CPython, whose copies share
# its key table and own only their values (see `_core.dropin._citation_template`).
cdef dict TEMPLATE = _CITATION_TEMPLATE


cdef dict citation(str text, const text_t* data, Grammar grammar, const Match* match,
                   Shared* shared, dict previous):
    """The drop-in dict of a match: a copy of the previous one's (of TEMPLATE for the first),
    its values replaced in place, so the keys stay the template's, in its order.  Copying
    the call's own previous dict, not the shared template, keeps threads without the GIL
    off each other's objects."""
    cdef dict result = PyDict_Copy(TEMPLATE if previous is None else previous)
    result["raw"] = shared_substring(text, data, shared, match.start, match.end,
                                     raw_maxchar(data, grammar))
    result["family"] = family_of(text, data, grammar, match, shared)
    result["source_ids"] = source_ids(text, data, grammar, match, False, shared)
    result["locator"] = locator_of(text, data, match, shared)
    result["start"] = match.start
    result["end"] = match.end
    return result


cdef list new_list(Py_ssize_t size):
    """PyList_New(size), left out of the collector's view until `gc_track` once it is full.
    Every collection the filling triggers would walk all `size` slots of a young list (the
    list is reachable from this call only, so what it holds stays alive all the same)."""
    result = PyList_New(size)
    gc_untrack(result)
    return result


cdef list extract_units(str text, const text_t* data, Grammar grammar):
    cdef Matches matches
    cdef Shared shared
    cdef Shared* share = NULL
    cdef Py_ssize_t i
    cdef dict made = None
    init_matches(&matches)
    try:
        scan(text, data, grammar, False, &matches)
        share = start_sharing(&shared, matches.count)
        # Presized: its array is allocated once, not regrown by appends.
        result = new_list(matches.count)
        for i in range(matches.count):
            made = citation(text, data, grammar, &matches.items[i], share, made)
            Py_INCREF(made)  # PyList_SET_ITEM steals a reference
            PyList_SET_ITEM(result, i, made)
        gc_track(result)
        return result
    finally:
        free_shared(share)
        free_matches(&matches)


def extract(str text not None, Grammar grammar not None):
    cdef const void* data = PyUnicode_DATA(text)
    cdef int kind = PyUnicode_KIND(text)
    if grammar.cannot_match(text):
        return []
    if kind == 1:
        return extract_units(text, <const Py_UCS1*>data, grammar)
    if kind == 2:
        return extract_units(text, <const Py_UCS2*>data, grammar)
    return extract_units(text, <const Py_UCS4*>data, grammar)


cdef str strip_units(str text, const text_t* data, Grammar grammar):
    cdef Matches matches
    init_matches(&matches)
    try:
        scan(text, data, grammar, False, &matches)
        return cut_units(text, data, &matches)
    finally:
        free_matches(&matches)


def strip(str text not None, Grammar grammar not None):
    cdef const void* data = PyUnicode_DATA(text)
    cdef int kind = PyUnicode_KIND(text)
    if grammar.cannot_match(text):
        return text
    if kind == 1:
        return strip_units(text, <const Py_UCS1*>data, grammar)
    if kind == 2:
        return strip_units(text, <const Py_UCS2*>data, grammar)
    return strip_units(text, <const Py_UCS4*>data, grammar)


cdef list spans_units(str text, const text_t* data, Grammar grammar):
    cdef Matches matches
    cdef Py_ssize_t i
    cdef Match* match
    init_matches(&matches)
    try:
        scan(text, data, grammar, True, &matches)
        result = new_list(matches.count)  # presized, as in extract_units
        for i in range(matches.count):
            match = &matches.items[i]
            span = (match.start, match.end, match.n_ids != INVALID)
            # Ints and a bool: no cycle; CPython's collector would untrack it on its next pass.
            gc_untrack(span)
            Py_INCREF(span)  # PyList_SET_ITEM steals a reference
            PyList_SET_ITEM(result, i, span)
        gc_track(result)
        return result
    finally:
        free_matches(&matches)


def spans(str text not None, Grammar grammar not None):
    """Every consumed match, valid or not: a list of (start, end, is_citation)."""
    cdef const void* data = PyUnicode_DATA(text)
    cdef int kind = PyUnicode_KIND(text)
    if grammar.cannot_match(text):
        return []
    if kind == 1:
        return spans_units(text, <const Py_UCS1*>data, grammar)
    if kind == 2:
        return spans_units(text, <const Py_UCS2*>data, grammar)
    return spans_units(text, <const Py_UCS4*>data, grammar)


# --- offsets in other units --------------------------------------------------------------

cdef struct Offsets:
    # Walks a text left to right, turning code point indexes into `units`; each call
    # resumes where the last one ended, so converting all matches is one pass.
    int units
    Py_ssize_t at
    Py_ssize_t extra


cdef Py_ssize_t convert(const text_t* data, Offsets* offsets, Py_ssize_t index) noexcept nogil:
    """index (>= the previous one) in the walker's units."""
    cdef Py_ssize_t a
    cdef Py_UCS4 ch
    if offsets.units == UNITS_CODE_POINTS:
        return index
    if offsets.units == UNITS_UTF16:
        if text_t is Py_UCS4:  # only 4-byte text holds code points above U+FFFF
            for a in range(offsets.at, index):
                offsets.extra += data[a] >= 0x10000
    else:
        for a in range(offsets.at, index):
            ch = data[a]
            offsets.extra += (ch >= 0x80) + (ch >= 0x800) + (ch >= 0x10000)
    offsets.at = index
    return index + offsets.extra


cdef inline void fill(object record, Py_ssize_t i, object value):
    Py_INCREF(value)  # PyTuple_SET_ITEM steals a reference
    PyTuple_SET_ITEM(record, i, value)


cdef object new_record(object cls, bint untrack, object family, tuple source_ids,
                       object locator, Py_ssize_t start, Py_ssize_t end,
                       Py_ssize_t clean_start):
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


cdef list records_of(str text, const text_t* data, Grammar grammar, Matches* matches,
                     object cls, Offsets* offsets, list spans, Py_ssize_t raw_base,
                     Py_ssize_t clean_base, Py_ssize_t* removed_units):
    # The citations of `matches` (text's, in order) as records, offsets walked by `offsets`
    # and moved by raw_base (start, end) and clean_base (clean_start): a stream's look
    # releases a piece whose offsets count from what it released before.  With `spans` (a
    # list), every match appended to it too, as `spans_units` makes them.  removed_units:
    # the units of the citations, added to.
    cdef Shared shared
    cdef Shared* share = NULL
    cdef Py_ssize_t i, start, end, removed = 0, valid = 0
    cdef Match* match
    # Records of a class without __dict__ hold immutable, atomic fields only.
    cdef bint untrack = (<PyTypeObject*>cls).tp_dictoffset == 0
    try:
        share = start_sharing(&shared, matches.count)
        for i in range(matches.count):
            valid += matches.items[i].n_ids != INVALID
        result = new_list(valid)  # presized, as in extract_units
        valid = 0
        for i in range(matches.count):
            match = &matches.items[i]
            if spans is not None:
                span = (match.start, match.end, match.n_ids != INVALID)
                gc_untrack(span)  # ints and a bool, as in spans_units
                spans.append(span)
            if match.n_ids == INVALID:
                continue
            start = convert(data, offsets, match.start)
            end = convert(data, offsets, match.end)
            record = new_record(
                cls, untrack, family_of(text, data, grammar, match, share),
                source_ids(text, data, grammar, match, True, share),
                locator_of(text, data, match, share), raw_base + start, raw_base + end,
                clean_base + start - removed,
            )
            Py_INCREF(record)  # PyList_SET_ITEM steals a reference
            PyList_SET_ITEM(result, valid, record)
            valid += 1
            removed += end - start
        gc_track(result)
        removed_units[0] += removed
        return result
    finally:
        free_shared(share)


cdef inline void start_offsets(Offsets* offsets, int units) noexcept nogil:
    offsets.units = units
    offsets.at = 0
    offsets.extra = 0


cdef list records_units(str text, const text_t* data, Grammar grammar, object cls, int units,
                        list spans=None):
    # The citations as records; with `spans` (a list), every consumed match appended to it
    # too, as `spans_units` makes them (one scan for both: validate needs both).
    cdef Matches matches
    cdef Offsets offsets
    cdef Py_ssize_t removed = 0
    start_offsets(&offsets, units)
    init_matches(&matches)
    try:
        scan(text, data, grammar, spans is not None, &matches)
        return records_of(text, data, grammar, &matches, cls, &offsets, spans, 0, 0, &removed)
    finally:
        free_matches(&matches)


cdef int check_record_args(object cls, object units) except -1:
    if not (isinstance(cls, type) and issubclass(cls, tuple)):
        raise TypeError("cls must be a tuple subclass")
    if not isinstance(units, int):
        raise TypeError(f"units must be an int, not {type(units).__name__}")
    if units not in (UNITS_CODE_POINTS, UNITS_UTF16, UNITS_UTF8):
        raise ValueError(f"units must be 0 (code points), 1 (UTF-16) or 2 (UTF-8), not {units}")
    return 0


def spans_records(str text not None, Grammar grammar not None, object cls, object units):
    """`(spans(text, grammar), records(text, grammar, cls, units))` from one scan."""
    cdef const void* data = PyUnicode_DATA(text)
    cdef int kind = PyUnicode_KIND(text)
    check_record_args(cls, units)
    cdef list spans = []
    if grammar.cannot_match(text):
        return spans, []
    if kind == 1:
        return spans, records_units(text, <const Py_UCS1*>data, grammar, cls, <int>units, spans)
    if kind == 2:
        return spans, records_units(text, <const Py_UCS2*>data, grammar, cls, <int>units, spans)
    return spans, records_units(text, <const Py_UCS4*>data, grammar, cls, <int>units, spans)


def records(str text not None, Grammar grammar not None, object cls, object units):
    """The citations of text as cls records (a tuple subclass of six fields), with
    offsets in `units`; clean_start is where the citation sits in the stripped text."""
    cdef const void* data = PyUnicode_DATA(text)
    cdef int kind = PyUnicode_KIND(text)
    check_record_args(cls, units)
    if grammar.cannot_match(text):
        return []
    if kind == 1:
        return records_units(text, <const Py_UCS1*>data, grammar, cls, <int>units)
    if kind == 2:
        return records_units(text, <const Py_UCS2*>data, grammar, cls, <int>units)
    return records_units(text, <const Py_UCS4*>data, grammar, cls, <int>units)


# --- cutting spans out -------------------------------------------------------------------

cdef inline uint32_t or_units(const text_t* data, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    if text_t is Py_UCS1:
        return cm_or_ucs1(data, a, b)
    elif text_t is Py_UCS2:
        return cm_or_ucs2(data, a, b)
    else:
        return cm_or_ucs4(data, a, b)


cdef inline void copy_units(const text_t* source, void* target, int target_kind,
                            Py_ssize_t count) noexcept nogil:
    """Copy count units, narrowing to target_kind (the caller checked they fit)."""
    cdef Py_ssize_t i
    cdef Py_UCS1* to1
    cdef Py_UCS2* to2
    if sizeof(text_t) == target_kind:
        memcpy(target, source, count * sizeof(text_t))
    elif target_kind == 1:
        to1 = <Py_UCS1*>target
        for i in range(count):
            to1[i] = <Py_UCS1>source[i]
    else:
        to2 = <Py_UCS2*>target
        for i in range(count):
            to2[i] = <Py_UCS2>source[i]


cdef Py_UCS4 kept_maxchar(const text_t* data, Py_ssize_t n,
                          const Matches* matches) noexcept nogil:
    """The maxchar class of what the cut keeps: a result of a narrower kind than the text
    must be stored narrower, or it would not equal the same text built by slicing."""
    cdef uint32_t bits = 0, widest
    cdef Py_ssize_t i, kept_from = 0
    widest = 0x80 if text_t is Py_UCS1 else (0x100 if text_t is Py_UCS2 else 0x10000)
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


cdef void copy_kept(const text_t* data, Py_ssize_t n, const Matches* matches, void* target,
                    int target_kind) noexcept nogil:
    cdef Py_ssize_t i, kept_from = 0, written = 0, start
    for i in range(matches.count + 1):
        start = matches.items[i].start if i < matches.count else n
        copy_units(data + kept_from, <char*>target + written * target_kind, target_kind,
                   start - kept_from)
        written += start - kept_from
        if i < matches.count:
            kept_from = matches.items[i].end


cdef str cut_units(str text, const text_t* data, const Matches* matches):
    """text without the spans of matches: in order, disjoint, 0 <= start <= end <= n."""
    cdef Py_ssize_t i, n = len(text), removed = 0
    cdef void* target
    cdef int target_kind
    cdef Py_UCS4 maxchar
    cdef bint release = n >= NOGIL_MIN_LENGTH
    for i in range(matches.count):
        removed += matches.items[i].end - matches.items[i].start
    if removed == 0:
        return text
    if release:
        with nogil:
            maxchar = kept_maxchar(data, n, matches)
    else:
        maxchar = kept_maxchar(data, n, matches)
    result = PyUnicode_New(n - removed, maxchar)
    target = PyUnicode_DATA(result)
    target_kind = PyUnicode_KIND(result)
    if release:
        with nogil:
            copy_kept(data, n, matches, target, target_kind)
    else:
        copy_kept(data, n, matches, target, target_kind)
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
    cdef const void* data
    cdef int kind
    if type(text) is not str or (type(citations) is not list and type(citations) is not tuple):
        return None  # an iterator would be used up here: the general path reads it once
    n = len(<str>text)
    data = PyUnicode_DATA(text)
    kind = PyUnicode_KIND(text)
    init_matches(&matches)
    try:
        for item in citations:
            if type(item) is not dict:
                return None
            if not read_offset(<dict>item, "start", &match.start):
                return None
            if not read_offset(<dict>item, "end", &match.end):
                return None
            if not (kept_from <= match.start <= match.end <= n):
                return None
            if push(&matches, &match) < 0:
                raise MemoryError()
            kept_from = match.end
        if kind == 1:
            return cut_units(<str>text, <const Py_UCS1*>data, &matches)
        if kind == 2:
            return cut_units(<str>text, <const Py_UCS2*>data, &matches)
        return cut_units(<str>text, <const Py_UCS4*>data, &matches)
    finally:
        free_matches(&matches)


# --- a stream's front --------------------------------------------------------------------

cdef Py_ssize_t last_mark(const text_t* data, Py_ssize_t n, const Mark* mark) noexcept nogil:
    """The last index of the marker character in data[:n], else -1 (str.rfind)."""
    cdef Py_ssize_t i = n
    while i > 0:  # reads data[i - 1], i <= n
        i -= 1
        if data[i] == mark.point:
            return i
    return -1


cdef bint undecided(const text_t* data, Py_ssize_t n, Py_ssize_t pos, Py_ssize_t last_stop,
                    const Rules* rules) noexcept nogil:
    """Could more text make the START at pos (< n, not consumed) a marker?"""
    cdef Py_ssize_t i = pos + 1, j, f, k, length
    cdef const Family* family
    if n - pos >= rules.max_length:
        return False
    if rules.any_family:
        j = i
        while j < n and is_word(data[j]):
            j += 1
        if j == n:
            return True  # the name, or its DELIM, is still to come
        # j < n: data[j] is in the text
        return j > i and data[j] == rules.delim.point and last_stop < j + 1
    for f in range(rules.n_families):
        family = &rules.families[f]
        length = family.length
        k = 0
        while k < length and i + k < n and data[i + k] == read_unit(family.kind, family.chars, k):
            k += 1
        if k < length:
            if i + k == n:
                return True  # the text ends inside the family
            continue
        if i + length == n:
            return True  # the family is there, its DELIM still to come
        # i + length < n
        if data[i + length] == rules.delim.point and last_stop < i + length + 1:
            return True  # no STOP after the DELIM yet: one may still come in bound
    return False


cdef Py_ssize_t first_undecided(const text_t* data, Py_ssize_t n, const Rules* rules,
                                const Matches* consumed, bint starts_too) noexcept nogil:
    """Index of the first START whose fate more text could still change, or n.  Only the
    last max_length units can hold one: a START further back closed in bound or never will.
    `consumed`: every match of data[:n], valid or not: a START inside one is decided with it,
    and so is one that begins one unless `starts_too` (see scan_py.first_undecided).  Linear:
    pos and span_index only move on, and the STOP is searched for once."""
    cdef Py_ssize_t window = n - rules.max_length if n > rules.max_length else 0
    cdef Py_ssize_t pos, span_index = 0, last_stop = -2  # -2: not searched for yet
    pos = find_mark(data, window, n, &rules.start)
    while pos >= 0:  # pos < n
        while span_index < consumed.count and consumed.items[span_index].end <= pos:
            span_index += 1
        if not (span_index < consumed.count
                and (consumed.items[span_index].start < pos or not starts_too)):
            if last_stop == -2:
                last_stop = last_mark(data, n, &rules.stop)
            if undecided(data, n, pos, last_stop, rules):
                return pos
        pos = find_mark(data, pos + 1, n, &rules.start)
    return n


cdef Py_ssize_t undecided_units(str text, const text_t* data, Grammar grammar,
                                Matches* matches) except -1:
    """first_undecided over text, `matches` (initialised, freed by the caller) filled with
    every match of the text, valid or not."""
    if grammar.cannot_match(text):
        return len(text)
    scan(text, data, grammar, True, &matches[0])
    return first_undecided(data, len(text), &grammar.rules, matches, grammar.stop_in_family)


def undecided_from(str text not None, Grammar grammar not None):
    """Index of the first START of text whose fate more text could still change (it is no
    marker yet, but could close within the grammar's bound), or len(text)."""
    cdef Matches matches
    cdef const void* data = PyUnicode_DATA(text)
    cdef int kind = PyUnicode_KIND(text)
    init_matches(&matches)
    try:
        if kind == 1:
            return undecided_units(text, <const Py_UCS1*>data, grammar, &matches)
        if kind == 2:
            return undecided_units(text, <const Py_UCS2*>data, grammar, &matches)
        return undecided_units(text, <const Py_UCS4*>data, grammar, &matches)
    finally:
        free_matches(&matches)


cdef inline object new_update(object cls, object text, object citations):
    """cls((text, citations)) for a tuple subclass of two fields, filled in place."""
    update = <object>type_alloc(<PyTypeObject*>cls, 2)
    Py_DECREF(update)  # type_alloc's reference now belongs to `update`
    fill(update, 0, text)
    fill(update, 1, citations)
    return update


cdef extern from *:
    """
    static PyObject* cm_refilled(PyObject* update, PyObject* text) {
    #ifdef Py_GIL_DISABLED
        return NULL;
    #else
        PyObject *list, *old;
        if (Py_REFCNT(update) != 1) return NULL;
        list = PyTuple_GET_ITEM(update, 1);
        if (Py_REFCNT(list) != 1 || PyList_GET_SIZE(list) != 0) return NULL;
        old = PyTuple_GET_ITEM(update, 0);
        Py_INCREF(text);
        PyTuple_SET_ITEM(update, 0, text);
        Py_DECREF(old);  /* a str: its deallocation runs no Python code */
        return update;
    #endif
    }
    """
    # `update` (an empty update: a text and an empty list) holding `text` instead, when its
    # own reference is the only one to it and to its list, so no one can see the change (as
    # zip refills its result tuple; a tuple subclass takes no weak reference); else NULL.
    # Never on a free-threaded build, whose counts other threads change without a lock.
    PyObject* cm_refilled(PyObject* update, PyObject* text)


cdef inline object empty_update(object cls, object text):
    """cls((text, [])).  Both stay in the collector's view: the list is the caller's, who
    may put into it what refers back to the update."""
    return new_update(cls, text, PyList_New(0))


cdef int make_room(StreamFront front, Py_ssize_t length) except -1:
    """OverflowError unless both counts can take `length` (>= 0) more units: then every
    offset a release computes, count + index with index <= length, fits."""
    if not (0 <= front.raw_units <= PY_SSIZE_T_MAX - length
            and 0 <= front.clean_units <= PY_SSIZE_T_MAX - length):
        raise OverflowError("a stream's offsets must stay within 0..PY_SSIZE_T_MAX")
    return 0


cdef Py_ssize_t units_of(const text_t* data, Py_ssize_t n, int units) noexcept nogil:
    """The length of data[:n] in `units`."""
    cdef Offsets offsets
    start_offsets(&offsets, units)
    return convert(data, &offsets, n)


cdef inline Py_ssize_t units_in(int kind, const void* data, Py_ssize_t n,
                                int units) noexcept nogil:
    """units_of over a str's data of any width (`kind`)."""
    if kind == 1:
        return units_of(<const Py_UCS1*>data, n, units)
    if kind == 2:
        return units_of(<const Py_UCS2*>data, n, units)
    return units_of(<const Py_UCS4*>data, n, units)


cdef inline bint has_mark(int kind, const void* data, Py_ssize_t n,
                          const Mark* mark) noexcept nogil:
    """Whether data[:n], a str's data of any width (`kind`), holds the marker character."""
    if kind == 2:
        return find_mark(<const Py_UCS2*>data, 0, n, mark) >= 0
    if kind == 1:
        return find_mark(<const Py_UCS1*>data, 0, n, mark) >= 0
    return find_mark(<const Py_UCS4*>data, 0, n, mark) >= 0


@cython.final  # (its methods are called directly, not through a table)
cdef class StreamFront:
    """The common delta of a `StreamParser` in one C call (see scan_py.StreamFront, which
    says what each path does)."""

    cdef public object owner
    cdef public list pieces  # (an append holds it in a local first: see clean_c's `pending`)
    cdef bint busy  # a call of the stream runs (see clean_c's StreamFront.enter)
    cdef public Py_ssize_t held_length, looked_at, raw_units, clean_units, work
    cdef public bint open
    cdef readonly Grammar grammar
    cdef readonly object cls, update
    cdef readonly int units
    cdef object recent, earlier  # the last two empty updates given (see `empty`)
    cdef object dropped  # the update `empty` let go of, freed once feed gave the stream back

    def __init__(self, owner, Grammar grammar not None, cls, update, units):
        if type(owner) not in _OWNER_TYPES:  # (the call costs more than the lookup)
            check_owner(owner)
        check_record_args(cls, units)
        if not (isinstance(update, type) and issubclass(update, tuple)):
            raise TypeError("update must be a tuple subclass")
        self.owner = owner
        self.grammar = grammar
        self.cls = cls
        self.update = update
        self.units = units
        self.pieces = []
        self.held_length = self.looked_at = self.raw_units = self.clean_units = self.work = 0
        self.open = True

    # A plain C method taking one argument (METH_O): a server calls it once a delta, and the
    # default (a cyfunction that parses keywords) costs as much as the common delta's work.
    @cython.binding(False)
    @cython.always_allow_keywords(False)
    @cython.critical_section  # the claim below is one step, with or without the GIL
    def feed(self, chunk):
        if type(chunk) is not str and isinstance(chunk, str):
            chunk = str.__str__(chunk)  # a str subclass: its plain copy is fed
        if self.busy:
            raise ValueError(STREAM_BUSY)
        self.busy = True
        try:
            return self.feed_one(chunk)
        finally:
            self.busy = False
            # What the caller put in that update may run code when it is freed, and that
            # code may feed the stream: freed here, after the claim, when this call returns.
            _dropped, self.dropped = self.dropped, None

    @cython.critical_section
    def enter(self):
        """Claim the stream for a call other than feed (see clean_c's StreamFront.enter)."""
        if self.busy:
            raise ValueError(STREAM_BUSY)
        self.busy = True

    def leave(self):
        self.busy = False

    cdef inline object feed_one(self, chunk):
        """feed once the stream is claimed."""
        cdef Py_ssize_t n, length
        cdef int kind
        cdef const void* data
        cdef list pieces
        if type(chunk) is not str or not self.open or self.pieces is None:
            return self.owner._slow(chunk)
        n = len(<str>chunk)
        kind = PyUnicode_KIND(chunk)
        data = PyUnicode_DATA(chunk)
        if len(self.pieces) == 0:
            # Nothing held: a chunk without START goes out as it is.
            if (self.grammar.cannot_match(<str>chunk)
                    or not has_mark(kind, data, n, &self.grammar.rules.start)):
                length = units_in(kind, data, n, self.units)
                make_room(self, length)
                self.raw_units += length
                self.clean_units += length
                return self.empty(<str>chunk)
            return self.look(chunk)
        if not 0 <= self.held_length <= PY_SSIZE_T_MAX - n:
            raise OverflowError("held_length must stay within 0..PY_SSIZE_T_MAX")
        pieces = self.pieces  # (held here, as clean_c's front holds its lists: see `appended`)
        pieces.append(chunk)
        self.held_length += n
        # Held text is looked at again once it has doubled, or when a STOP comes (it
        # usually decides the STARTs before it): each look is linear, and so is their sum.  The
        # test is held_length < 2 * looked_at without the product, which could overflow.
        if self.looked_at > 0 and (self.held_length < self.looked_at
                                   or self.held_length - self.looked_at < self.looked_at):
            if not has_mark(kind, data, n, &self.grammar.rules.stop):
                return self.empty("")
        return self.look("".join(self.pieces))

    cdef object empty(self, str text):
        """empty_update(self.update, text), in one of the last two empty updates given if
        the caller has let it go: a server drops each update by the next-but-one delta, so
        the common delta allocates nothing."""
        # (The checks read the attributes without a reference of their own, which would
        # count as a holder.)
        cdef PyObject* earlier = <PyObject*>self.earlier
        cdef object update
        if self.earlier is not None and cm_refilled(earlier, <PyObject*>text) != NULL:
            update = self.earlier
            self.earlier = self.recent
        elif self.recent is not None and cm_refilled(<PyObject*>self.recent,
                                                     <PyObject*>text) != NULL:
            return self.recent
        else:
            update = empty_update(self.update, text)
            # The update let go of is freed once feed returns (see feed).
            self.dropped = self.earlier
            self.earlier = self.recent
        self.recent = update
        return update

    cdef object look(self, str text):
        cdef const void* data = PyUnicode_DATA(text)
        cdef int kind = PyUnicode_KIND(text)
        if kind == 1:
            return look_units(self, text, <const Py_UCS1*>data)
        if kind == 2:
            return look_units(self, text, <const Py_UCS2*>data)
        return look_units(self, text, <const Py_UCS4*>data)


cdef object look_units(StreamFront front, str text, const text_t* data):
    """A look at the held text: what is decided goes out, the rest is held again."""
    cdef Matches matches
    cdef Offsets offsets
    cdef Grammar grammar = front.grammar
    cdef Py_ssize_t n = len(text), cut, i, kept = 0, removed = 0, length
    front.work += n
    init_matches(&matches)
    try:
        cut = undecided_units(text, data, grammar, &matches)
        # No match crosses cut (a START inside one is consumed): those before it are
        # ready's own, the citations are the valid ones.
        for i in range(matches.count):
            if matches.items[i].end > cut:
                break
            if matches.items[i].n_ids != INVALID:
                matches.items[kept] = matches.items[i]
                kept += 1
        matches.count = kept
        if cut == 0:
            update = front.empty("")
        else:
            length = units_of(data, cut, front.units)
            make_room(front, length)
            ready = text if cut == n else PyUnicode_Substring(text, 0, cut)
            if kept == 0:
                # No citation (a START that waits for its STOP): the text goes out as it is.
                update = front.empty(ready)
            else:
                start_offsets(&offsets, front.units)
                citations = records_of(ready, data, grammar, &matches, front.cls, &offsets,
                                       None, front.raw_units, front.clean_units, &removed)
                # cut_units reads data[:cut], ready's characters, and ready's length, cut.
                update = new_update(front.update, cut_units(ready, data, &matches), citations)
            front.raw_units += length
            front.clean_units += length - removed
        front.pieces = [PyUnicode_Substring(text, cut, n)] if cut < n else []
        front.held_length = front.looked_at = n - cut
        return update
    finally:
        free_matches(&matches)
