# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# cython: cdivision=True, freethreading_compatible=True, auto_pickle=False, autotestdict=False
"""The compiled kernel of `citemark.display`: every marker character found, classified and cut
in one pass over CPython's own string storage (PEP 393).

Same functions, names and branch order as the twin in `clean_py.py`.  The core (scan, cut,
spacing rule) is `clean_core.pxi`, shared with the JSONL kernel's pass over UTF-8 bytes; the
rules (characters, bounds, spacing sets) are read from `_core.shapes` at import, so they have
one home.

The paths only this kernel has, with what they earn (callgrind instructions per typical 4 KB
answer fed in deltas by a Python loop, benches/compare.py's clean_stream workloads;
docs/performance.md#streams):

| fast path                                                                 | earns           |
|---------------------------------------------------------------------------|-----------------|
| `StreamFront.feed`: a `CleanStream`'s common delta in C, not the twin's   | 3.4x the twin   |
| `own_feed`: a plain stream's line ends and marker decisions in C, not the | 6.4x, 3.9x and  |
| stream's Python path (a line that cannot be code; it leaves the rest)     | 2.2x at 64/16/4 |
| `cf_stop_*`, `cf_decides_*`: a delta searched 16 bytes at a time (SSE2),  | 1.43x, 1.18x,   |
| not a unit at a time                                                      | 1.0x            |
"""

cimport cython
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.unicode cimport PyUnicode_FromKindAndData
from libc.string cimport memcpy

from citemark._core.grammar import OWNER_TYPES as _OWNER_TYPES, STREAM_BUSY, check_owner
from citemark._core.protocols import CLOSED_OWNER

cdef extern from "Python.h":
    int PyUnicode_KIND(object text)
    void* PyUnicode_DATA(object text)
    bint PyUnicode_IS_ASCII(object text)
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)

# The encoding helpers and fused unit of the marker grammar (it also picks the vector path),
# then the clean core over them.
include "grammar_c.pxi"
include "clean_core.pxi"


def marker_state(str text not None):
    """`_core.shapes.NO_MARKERS`, `MARKERS_OUTSIDE_CODE` (none can be in Markdown code) or
    `MARKERS_MAYBE_IN_CODE` (see _markdown.code.markers_may_be_in_code)."""
    return marker_state_of(text)


cdef int marker_state_of(str text) noexcept:
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    if kind == 1:
        return NO_MARKERS
    if kind == 2:
        return marker_state_units(<const Py_UCS2*>data, len(text))
    return marker_state_units(<const Py_UCS4*>data, len(text))


cdef inline Py_ssize_t find_private(int kind, const void* data, Py_ssize_t a,
                                    Py_ssize_t b) noexcept nogil:
    # The first index in [a, b) of a private-use character (what clean removes), else -1.
    if kind == 2:
        return find_special(<const Py_UCS2*>data, a, b)
    if kind == 4:
        return find_special(<const Py_UCS4*>data, a, b)
    return -1  # no private-use character fits in one byte


cdef inline bint has_private(int kind, const void* data, Py_ssize_t a,
                             Py_ssize_t b) noexcept nogil:
    # Whether data[a:b] holds a private-use character.
    return find_private(kind, data, a, b) >= 0


def has_markers(str text not None):
    return has_private(PyUnicode_KIND(text), PyUnicode_DATA(text), 0, len(text))


def check_code_ranges(str text not None, code_ranges):
    if type(code_ranges) is not list:
        raise TypeError(f"code_ranges must be a list, not {type(code_ranges).__name__}")
    cdef list checked = []
    cdef Py_ssize_t where = 0, start, end, n = len(text)
    for code_range in code_ranges:
        if type(code_range) is not tuple or len(code_range) != 2:
            raise TypeError("code_ranges must hold (start, end) tuples")
        if type(code_range[0]) is not int or type(code_range[1]) is not int:
            raise TypeError("code_ranges must hold (start, end) tuples of int")
        if not (where <= code_range[0] <= code_range[1] <= n):
            raise ValueError("code_ranges must be sorted, disjoint and inside the text")
        start = code_range[0]
        end = code_range[1]
        checked.append((start, end))
        where = end
    return checked


cdef int scan_into(str text, object code_ranges, Tokens* tokens) except -1:
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = len(text), where = 0, code_start, code_end, i
    cdef list checked = check_code_ranges(text, code_ranges)
    if kind == 1:
        return 0  # no marker character fits in one byte
    for i in range(len(checked) + 1):
        if i < len(checked):
            code_start, code_end = checked[i]
        else:
            code_start = code_end = n
        if kind == 2:
            scan_segment(<const Py_UCS2*>data, where, code_start, tokens, PY_SSIZE_T_MAX)
        else:
            scan_segment(<const Py_UCS4*>data, where, code_start, tokens, PY_SSIZE_T_MAX)
        where = code_end
    return 0


def scan(str text not None, code_ranges):
    cdef Tokens tokens
    cdef Py_ssize_t i
    cdef Token* t
    init_tokens(&tokens)
    try:
        scan_into(text, code_ranges, &tokens)
        result = []
        for i in range(tokens.count):
            t = &tokens.items[i]
            result.append((t.kind, t.start, t.end, t.family_start, t.family_end,
                           t.body_start, t.body_end))
        return result
    finally:
        free_tokens(&tokens)


cdef int join_units(Join* state, const unit_t* data, Py_ssize_t n, Tokens* tokens,
                    list replacements, Places* places) except -1:
    """Every token cut (join_one), each replaced by its item of replacements (None: all
    removed), then the rest of the text."""
    cdef Py_ssize_t index, count = tokens.count
    cdef str replacement = ""
    cdef bint run_goes_on
    for index in range(count):
        if replacements is not None:
            replacement = replacements[index]
        run_goes_on = index + 1 < count and (
            tokens.items[index + 1].start == tokens.items[index].end
            and (replacements is None or not replacements[index + 1])
        )
        join_one(state, data, n, &tokens.items[index], run_goes_on,
                 PyUnicode_KIND(replacement), PyUnicode_DATA(replacement), len(replacement),
                 places, index)
    emit_text(&state.out, sizeof(unit_t), data, state.pos, n)
    return 0


cdef object join_tokens(str text, Tokens* tokens, list replacements, list positions,
                        list resumes=None):
    """text with each token replaced; appends each replacement's place to positions, and
    where the text resumes after each token to resumes (with positions only)."""
    cdef int kind = PyUnicode_KIND(text), out_kind = kind
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = len(text), size = n, index, count = tokens.count
    cdef Join state
    cdef Places places
    cdef Places* wanted = NULL
    cdef void* buffer
    cdef str replacement
    if replacements is not None:
        # A copy of its own: the buffer is sized from it and filled from it, and the
        # caller's list may change in between (another thread, or an entity's code).
        replacements = list(replacements)
        for replacement in replacements:
            size += len(replacement)
            if PyUnicode_KIND(replacement) > out_kind:
                out_kind = PyUnicode_KIND(replacement)
    if count == 0:
        return text
    buffer = PyMem_Malloc(size * out_kind + 1)
    places.at = places.groups = places.resume = NULL
    places.count = 0
    if positions is not None:
        places.at = <Py_ssize_t*>PyMem_Malloc(count * sizeof(Py_ssize_t))
        places.groups = <Py_ssize_t*>PyMem_Malloc(count * sizeof(Py_ssize_t))
        places.resume = <Py_ssize_t*>PyMem_Malloc(count * sizeof(Py_ssize_t))
        wanted = &places
    if buffer == NULL or (positions is not None and (
            places.at == NULL or places.groups == NULL or places.resume == NULL)):
        PyMem_Free(buffer)
        PyMem_Free(places.at)
        PyMem_Free(places.groups)
        PyMem_Free(places.resume)
        raise MemoryError()
    if wanted != NULL:
        for index in range(count):
            places.resume[index] = tokens.items[index].end
    start_join(&state, buffer, out_kind, False)
    try:
        if kind == 1:
            join_units(&state, <const Py_UCS1*>data, n, tokens, replacements, wanted)
        elif kind == 2:
            join_units(&state, <const Py_UCS2*>data, n, tokens, replacements, wanted)
        else:
            join_units(&state, <const Py_UCS4*>data, n, tokens, replacements, wanted)
        if positions is not None:
            fill_places(&places, count)
            for index in range(count):
                positions.append(places.at[index])
                if resumes is not None:
                    resumes.append(places.resume[index])
        return PyUnicode_FromKindAndData(state.out.kind, state.out.data, state.out.length)
    finally:
        PyMem_Free(buffer)
        PyMem_Free(places.at)
        PyMem_Free(places.groups)
        PyMem_Free(places.resume)


def join(str text not None, tokens, replacements):
    if type(tokens) is not list:
        raise TypeError(f"tokens must be a list, not {type(tokens).__name__}")
    if replacements is not None and (
        type(replacements) is not list or len(replacements) != len(tokens)
    ):
        raise TypeError("replacements must be None or a list as long as tokens")
    cdef Tokens array
    cdef Py_ssize_t pos = 0, n = len(text), start, end
    cdef list positions = [], resumes = []
    init_tokens(&array)
    try:
        for index, token in enumerate(tokens):
            if type(token) is not tuple or len(token) != 7:
                raise TypeError("tokens must hold tuples of 7 int")
            if type(token[1]) is not int or type(token[2]) is not int:
                raise TypeError("tokens must hold tuples of 7 int")
            if not (pos <= token[1] <= token[2] <= n):
                raise ValueError("tokens must be sorted, disjoint and inside the text")
            start = token[1]
            end = token[2]
            if replacements is not None and type(replacements[index]) is not str:
                raise TypeError("replacements must hold str")
            push_token(&array, 0, start, end, 0, 0, 0, 0)
            pos = end
        return join_tokens(text, &array, replacements, positions, resumes), positions, resumes
    finally:
        free_tokens(&array)


cdef check_entity(entity, plain_names):
    if entity is not None and not callable(entity):
        raise TypeError(f"entity must be None or callable, not {type(entity).__name__}")
    if type(plain_names) is not bool:
        raise TypeError(f"plain_names must be bool, not {type(plain_names).__name__}")


def clean(str text not None, code_ranges, entity=None, plain_names=False):
    """scan and join in one call, entity markers shown as entity(body), or found in place
    when plain_names and the body has the common shape (see plain_name); None when there
    is an entity marker and no `entity` function, or a marker of TITLED_FAMILIES (the
    front renders those)."""
    check_entity(entity, plain_names)
    return clean_one(text, check_code_ranges(text, code_ranges), entity, plain_names)


def clean_texts(list texts not None, code_ranges_of, entity, plain_names):
    """For each text: the text itself when it holds no marker character, else
    clean(text, code_ranges, entity, plain_names), the code ranges being code_ranges_of(text) when a
    marker may be in Markdown code (see marker_state; code_ranges_of None: never any code ranges).
    None for an item that is not exactly a str, and where clean gives None: the front decides those.
    One
    call for a batch, since the front's own work per text (checks, two kernel calls)
    cost as much as the kernel's on a log of answers."""
    check_entity(entity, plain_names)
    if code_ranges_of is not None and not callable(code_ranges_of):
        raise TypeError("code_ranges_of must be None or callable, not "
                        f"{type(code_ranges_of).__name__}")
    cdef list results = []
    cdef int state
    cdef str text
    for item in texts:
        if type(item) is not str:
            results.append(None)
            continue
        text = <str>item
        state = marker_state_of(text)
        if state == NO_MARKERS:
            results.append(text)
        elif state == MARKERS_MAYBE_IN_CODE and code_ranges_of is not None:
            results.append(clean_one(text, check_code_ranges(text, code_ranges_of(text)), entity,
                                     plain_names))
        else:
            results.append(clean_one(text, None, entity, plain_names))
    return results


cdef object clean_one(str text, list checked, entity, bint plain_names):
    """clean() once its arguments are checked (checked None: no code ranges)."""
    cdef int found = CUT_NONE
    cdef object cleaned
    if PyUnicode_KIND(text) == 1:
        return text  # no marker character fits in one byte
    cleaned = cut_units(PyUnicode_KIND(text), PyUnicode_DATA(text), len(text), checked,
                        plain_names and entity is not None, 0, &found)
    if found == CUT_NONE:
        return text
    if found == CUT_TITLED or (found == CUT_ENTITY and entity is None):
        return None
    if found == CUT_ENTITY:
        # A name from Python may widen the text: the whole-array path sizes the output for it.
        return clean_with_entities(text, checked or [], entity, plain_names)
    return cleaned


cdef object clean_after(Py_UCS4 context, str piece, entity):
    """clean_one(chr(context) + piece)[1:] (None where that is None) for a piece after a
    released plain character, which the cut keeps: the two are copied into one buffer instead
    of a string, and the result starts after the context (a stream front's delta pays both
    copies otherwise)."""
    cdef int kind = PyUnicode_KIND(piece), found = CUT_NONE
    cdef Py_ssize_t n = len(piece) + 1
    cdef char* units
    cdef object cleaned = None
    if kind != 1 and not (kind == 2 and context > 0xFFFF):
        units = <char*>PyMem_Malloc(n * kind)
        if units == NULL:
            raise MemoryError()
        try:
            # units[0:kind] is the context, the piece's n - 1 units follow: inside the buffer.
            if kind == 2:
                (<Py_UCS2*>units)[0] = <Py_UCS2>context
            else:
                (<Py_UCS4*>units)[0] = context
            memcpy(units + kind, PyUnicode_DATA(piece), (n - 1) * kind)
            cleaned = cut_units(kind, units, n, None, entity is not None, 1, &found)
        finally:
            PyMem_Free(units)
        if found == CUT_NONE:
            return piece
        if found == CUT_TITLED or (found == CUT_ENTITY and entity is None):
            return None  # the stream renders it
    if cleaned is None:
        # One-byte text, a context wider than the piece, a name from Python (which may widen
        # the text) or a context the cut took: the string path.
        cleaned = clean_one(chr(context) + piece, None, entity, True)
        return None if cleaned is None else (<str>cleaned)[1:]
    return cleaned


cdef object cut_units(int kind, const void* data, Py_ssize_t n, list checked,
                      bint names_in_place, Py_ssize_t skip, int* found):
    """The core's `cut` of data[:n] (two or four bytes a unit; outside the code ranges
    `checked`, None for none) into a buffer of its size (enough: a name shown is part of its
    marker's body): what it found in `found`, and, when it cleaned the text (CUT_DONE), the
    clean text from its unit `skip` on (None if shorter)."""
    cdef Py_ssize_t k, code_count = 0 if checked is None else len(checked)
    cdef Py_ssize_t* code_ranges = NULL
    cdef Tokens tokens
    cdef Join state
    init_tokens(&tokens)
    state.out.data = NULL
    try:
        if code_count:
            code_ranges = <Py_ssize_t*>PyMem_Malloc(2 * code_count * sizeof(Py_ssize_t))
            if code_ranges == NULL:
                raise MemoryError()
            for k in range(code_count):
                code_ranges[2 * k], code_ranges[2 * k + 1] = checked[k]
        start_join(&state, PyMem_Malloc(n * kind + 1), kind, False)
        if state.out.data == NULL:
            raise MemoryError()
        if kind == 2:
            found[0] = cut(<const Py_UCS2*>data, n, code_ranges, code_count, names_in_place,
                           &tokens, &state)
        else:
            found[0] = cut(<const Py_UCS4*>data, n, code_ranges, code_count, names_in_place,
                           &tokens, &state)
        if found[0] != CUT_DONE or state.out.length < skip:
            return None
        return PyUnicode_FromKindAndData(kind, <char*>state.out.data + skip * kind,
                                         state.out.length - skip)
    finally:
        free_tokens(&tokens)
        PyMem_Free(state.out.data)
        PyMem_Free(code_ranges)


cdef bint plain_name_of(int kind, const void* data, Token* token) noexcept nogil:
    if kind == 2:
        return plain_name(<const Py_UCS2*>data, token)
    if kind == 4:
        return plain_name(<const Py_UCS4*>data, token)
    return False  # no marker in one-byte text


cdef bint titled_of(int kind, const void* data, const Token* token) noexcept nogil:
    if kind == 2:
        return titled(<const Py_UCS2*>data, token)
    if kind == 4:
        return titled(<const Py_UCS4*>data, token)
    return False  # no marker in one-byte text


cdef object clean_with_entities(str text, list code_ranges, entity, bint plain_names):
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef Tokens tokens
    cdef Token* token
    cdef Py_ssize_t i
    cdef list replacements = None
    init_tokens(&tokens)
    try:
        scan_into(text, code_ranges, &tokens)
        for i in range(tokens.count):
            token = &tokens.items[i]
            if titled_of(kind, data, token):
                return None
            if token.kind != ENTITY:
                continue
            if replacements is None:
                replacements = [""] * tokens.count
            if plain_names and plain_name_of(kind, data, token):
                shown = text[token.shown_start:token.shown_end]
            else:
                shown = entity(text[token.body_start:token.body_end])
                if type(shown) is not str:
                    raise TypeError(f"entity must return str, not {type(shown).__name__}")
            replacements[i] = shown
        return join_tokens(text, &tokens, replacements, None)
    finally:
        free_tokens(&tokens)


# --- the stream's common delta (clean_py.StreamFront) --------------------------------------

cdef CharSet NOT_PLAIN_SET
fill(&NOT_PLAIN_SET, clean_rules.NOT_PLAIN)


cdef int FRONT_OFF = clean_rules.FRONT_OFF
cdef int LINE_START = clean_rules.LINE_START
cdef int FRONT_ON = clean_rules.FRONT_ON
cdef Py_ssize_t SHORT_HOLD = clean_rules.SHORT_HOLD
cdef Py_ssize_t SCAN_BEHIND = clean_rules.SCAN_BEHIND
# No character released yet (a line start): beyond Unicode, since U+0000 is a character too.
cdef Py_UCS4 NO_CONTEXT = 0x110000
# What a line's first characters say (`line_start_kind`): nothing yet, or that its text may be
# code because a tab or four spaces lead it, or because a backtick or tilde may open a fence.
cdef enum:
    UNDECIDED = -1
    MAYBE_FENCE = -2


cdef extern from *:
    """
    /* The stream front's searches over a delta, one per unit width: the first unit it stops
       at (a line break, a backtick, a tilde, a `[`, a private-use character) and the first
       that a waiting START leaves to the stream (a START or a STOP, which may decide it, a
       line break, and the backtick, tilde and `[` that the stream must see).  With SSE2 (any
       x86-64; CITEMARK_SIMD=portable tests the plain loop) 16 bytes are tested at once. */
    #define CF_STOP(c) ((c) == 10 || (c) == 13 || (c) == 96 || (c) == 126 || (c) == 91)
    #define CF_PRIVATE(c) ((unsigned int)((c) - 0xE000u) <= 0x18FFu)
    #define CF_STOP_WIDE(c) (CF_STOP(c) || CF_PRIVATE(c))
    #define CF_DECIDES(c) ((c) == 10 || (c) == 13 || (c) == 0xE200u || (c) == 0xE201u \
                           || (c) == 96 || (c) == 126 || (c) == 91)
    #define CF_PLAIN(NAME, UNIT, TEST)                                                    \
    static inline Py_ssize_t NAME(const UNIT *d, Py_ssize_t i, Py_ssize_t n) {           \
        for (; i < n; i++) { unsigned int c = d[i]; if (TEST(c)) return i; }            \
        return -1;                                                                       \
    }
    CF_PLAIN(cf_stop_plain_ucs1, Py_UCS1, CF_STOP)
    CF_PLAIN(cf_stop_plain_ucs2, Py_UCS2, CF_STOP_WIDE)
    CF_PLAIN(cf_stop_ucs4, Py_UCS4, CF_STOP_WIDE)
    CF_PLAIN(cf_decides_plain_ucs2, Py_UCS2, CF_DECIDES)
    CF_PLAIN(cf_decides_ucs4, Py_UCS4, CF_DECIDES)

    #if defined(CM_SSE2)
    /* All-ones in each lane holding one of the ASCII stops: \n, \r, `, ~, [. */
    static inline __m128i cf_ascii8(__m128i x) {
        return _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(10)),
                         _mm_cmpeq_epi8(x, _mm_set1_epi8(13))),
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(96)),
                                      _mm_cmpeq_epi8(x, _mm_set1_epi8(126))),
                         _mm_cmpeq_epi8(x, _mm_set1_epi8(91))));
    }
    static inline __m128i cf_ascii16(__m128i x) {
        return _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi16(x, _mm_set1_epi16(10)),
                         _mm_cmpeq_epi16(x, _mm_set1_epi16(13))),
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi16(x, _mm_set1_epi16(96)),
                                      _mm_cmpeq_epi16(x, _mm_set1_epi16(126))),
                         _mm_cmpeq_epi16(x, _mm_set1_epi16(91))));
    }
    #endif

    /* In one-byte text the two searches are one: no START, STOP or private-use character. */
    static inline Py_ssize_t cf_stop_ucs1(const Py_UCS1 *d, Py_ssize_t i, Py_ssize_t n) {
    #if defined(CM_SSE2)
        if (cm_level >= CM_VECTOR) {
            for (; i + 16 <= n; i += 16) {
                __m128i x = _mm_loadu_si128((const __m128i *)(d + i));
                unsigned int mask = (unsigned int)_mm_movemask_epi8(cf_ascii8(x));
                if (mask) return i + cm_ctz(mask);
            }
        }
    #endif
        return cf_stop_plain_ucs1(d, i, n);
    }

    static inline Py_ssize_t cf_stop_ucs2(const Py_UCS2 *d, Py_ssize_t i, Py_ssize_t n) {
    #if defined(CM_SSE2)
        if (cm_level >= CM_VECTOR) {
            const __m128i lo = _mm_set1_epi16((short)0xE000), span = _mm_set1_epi16(0x18FF);
            for (; i + 8 <= n; i += 8) {
                __m128i x = _mm_loadu_si128((const __m128i *)(d + i));
                __m128i hit = _mm_or_si128(cf_ascii16(x), cc_in_range16(d + i, lo, span));
                unsigned int mask = (unsigned int)_mm_movemask_epi8(hit);
                if (mask) return i + cm_ctz(mask) / 2;
            }
        }
    #endif
        return cf_stop_plain_ucs2(d, i, n);
    }

    static inline Py_ssize_t cf_decides_ucs2(const Py_UCS2 *d, Py_ssize_t i, Py_ssize_t n) {
    #if defined(CM_SSE2)
        if (cm_level >= CM_VECTOR) {
            const __m128i start = _mm_set1_epi16((short)0xE200);
            const __m128i stop = _mm_set1_epi16((short)0xE201);
            for (; i + 8 <= n; i += 8) {
                __m128i x = _mm_loadu_si128((const __m128i *)(d + i));
                __m128i hit = _mm_or_si128(
                    cf_ascii16(x),
                    _mm_or_si128(_mm_cmpeq_epi16(x, start), _mm_cmpeq_epi16(x, stop)));
                unsigned int mask = (unsigned int)_mm_movemask_epi8(hit);
                if (mask) return i + cm_ctz(mask) / 2;
            }
        }
    #endif
        return cf_decides_plain_ucs2(d, i, n);
    }
    """
    Py_ssize_t cf_stop_ucs1(const Py_UCS1* data, Py_ssize_t i, Py_ssize_t n) nogil
    Py_ssize_t cf_stop_ucs2(const Py_UCS2* data, Py_ssize_t i, Py_ssize_t n) nogil
    Py_ssize_t cf_stop_ucs4(const Py_UCS4* data, Py_ssize_t i, Py_ssize_t n) nogil
    Py_ssize_t cf_decides_ucs2(const Py_UCS2* data, Py_ssize_t i, Py_ssize_t n) nogil
    Py_ssize_t cf_decides_ucs4(const Py_UCS4* data, Py_ssize_t i, Py_ssize_t n) nogil

# The searches above write the rules' characters as numbers: a change in _core.shapes must
# reach them, or the import fails here.
if ((<long>START, <long>STOP, <long>FIRST_PRIVATE, <long>PRIVATE_SPAN)
        != (0xE200, 0xE201, 0xE000, 0x18FF)
        or sorted(clean_rules.FRONT_STOPS) != sorted("\n\r`~[")):
    raise ImportError("the stream front's searches (CF_STOP, CF_DECIDES) need updating")
if [chr(_unit) for _unit in range(128) if is_zone(_unit)] != sorted(clean_rules.LINE_ZONE):
    raise ImportError("clean_core.is_zone must hold _core.shapes.LINE_ZONE")


cdef inline Py_ssize_t find_stop(int kind, const void* data, Py_ssize_t i,
                                 Py_ssize_t n) noexcept nogil:
    """The first index in [i, n) of a front stop (`_core.shapes.FRONT_STOPS`, or a private-use
    character), else -1."""
    if kind == 1:
        return cf_stop_ucs1(<const Py_UCS1*>data, i, n)
    if kind == 2:
        return cf_stop_ucs2(<const Py_UCS2*>data, i, n)
    return cf_stop_ucs4(<const Py_UCS4*>data, i, n)


cdef inline Py_ssize_t find_decides(int kind, const void* data, Py_ssize_t i,
                                    Py_ssize_t n) noexcept nogil:
    """The first index in [i, n) of what a waiting START leaves to the stream (a START, a STOP
    or a front stop), else -1."""
    if kind == 1:
        return cf_stop_ucs1(<const Py_UCS1*>data, i, n)
    if kind == 2:
        return cf_decides_ucs2(<const Py_UCS2*>data, i, n)
    return cf_decides_ucs4(<const Py_UCS4*>data, i, n)


cdef inline bint own_stop(Py_UCS4 unit) noexcept nogil:
    # What a line the front owns leaves to the stream: a carriage return, a backtick or a
    # tilde (either may open a fence, which only the stream's scanner can rule out).  A `[`
    # it decides itself (`link_end`).
    cdef unsigned int code = unit
    return code == 13 or code == 96 or code == 126


cdef inline bint is_id_char(Py_UCS4 unit) noexcept nogil:
    # What may continue a bare DELIM's ids (`turn0search1`, `L8-L13`): display._ID_CHARS.
    return is_letter(unit) or is_digit(unit) or unit == c'_' or unit == c'-'


cdef bint has_own_stop(int kind, const void* data, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """Whether data[a:b] holds what an owned line leaves to the stream (`own_stop`): a delta
    the stream took without a look (its doubling rule) may have put one in the held parts."""
    cdef Py_ssize_t index = a - 1
    while True:
        index = find_stop(kind, data, index + 1, b)
        if index < 0:
            return False
        if own_stop(read_unit(kind, data, index)):
            return True


cdef int line_start_kind(int kind, const void* data, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """What the first characters of the line data[a:b] say (display.CleanStream._front at
    LINE_START): UNDECIDED (blanks and container marks only), FRONT_OFF (a tab or four spaces
    among them: maybe indented code), MAYBE_FENCE (a backtick or tilde after them) or
    FRONT_ON."""
    cdef Py_ssize_t i = a, spaces = 0
    cdef bint indented = False
    cdef Py_UCS4 unit
    while i < b:
        unit = read_unit(kind, data, i)
        if not is_zone(unit):
            break
        if unit == c' ':
            spaces += 1
            indented = indented or spaces >= 4
        else:
            spaces = 0
            indented = indented or unit == c'\t'
        i += 1
    if i == b:
        return UNDECIDED
    unit = read_unit(kind, data, i)
    if unit == c'`' or unit == c'~':
        return MAYBE_FENCE
    return FRONT_OFF if indented else FRONT_ON


cdef inline bint may_be_code(int start_kind) noexcept nogil:
    # A line_start_kind that leaves the line to the stream: its text may be code.
    return start_kind == FRONT_OFF or start_kind == MAYBE_FENCE


cdef struct Last:
    # The last index below a bound where a unit of one class stands (-1: none), for bounds that
    # only go down: each unit is read once however often the bound moves.
    bint known
    Py_ssize_t found


cdef inline bint of_class(Py_UCS4 unit, int cls) noexcept nogil:
    if cls == 0:
        return unit == START
    if cls == 1:
        return unit == STOP
    if cls == 2:
        return unit == DELIM
    return not is_id_char(unit)


cdef Py_ssize_t last_below(Last* last, int kind, const void* data, Py_ssize_t bound,
                           int cls) noexcept nogil:
    cdef Py_ssize_t i
    if last.known and last.found < bound:
        return last.found  # nothing of the class between it and the earlier, higher bound
    i = bound - 1
    while i >= 0 and not of_class(read_unit(kind, data, i), cls):
        i -= 1
    last.known = True
    last.found = i
    return i


cdef inline Py_ssize_t find_ascii(int kind, const void* data, Py_ssize_t i, Py_ssize_t n,
                                  Py_UCS4 unit) noexcept nogil:
    """The first index in [i, n) of `unit` (an ASCII character), else -1."""
    if kind == 1:
        return cm_find_ucs1(<const Py_UCS1*>data, i, n, unit)
    if kind == 2:
        return cm_find_ucs2(<const Py_UCS2*>data, i, n, unit)
    return cm_find_ucs4(<const Py_UCS4*>data, i, n, unit)


cdef Py_ssize_t marker_close(int kind, const void* data, Py_ssize_t start,
                             Py_ssize_t b) noexcept nogil:
    """The STOP of the marker whose START is at `start` when link_end reads past it (a body
    with no bracket and no private-use character but DELIM, its STOP before b), else -1."""
    cdef Py_ssize_t i
    cdef Py_UCS4 unit
    for i in range(start + 1, b):
        unit = read_unit(kind, data, i)
        if unit == STOP:
            return i
        if unit == c'[' or unit == c']' or (is_private(unit) and unit != DELIM):
            return -1
    return -1


cdef Py_ssize_t link_end(int kind, const void* data, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """display._link_end on data[a:b]: the first `[` a marker may still unwrap, else b.  The
    `[` not closed yet are a stack of which only the bottom matters (`first_open`: the ones
    above it come later); of the closed ones with no plain character after their `]` yet,
    only the first (`first_closed`: the bottom of the stack it emptied, before any `[` still
    open), until a plain character outside brackets.  Whole markers are read past
    (`marker_close`); the reading stops at any other marker character.  Every read is at an
    index in [a, b), inside the text."""
    cdef Py_ssize_t i, depth = 0, first_open = -1, first_closed = -1, close, later
    cdef Py_UCS4 unit
    cdef Py_ssize_t first = find_ascii(kind, data, a, b, c'[')
    if first < 0:
        return b
    i = first
    while i < b:
        unit = read_unit(kind, data, i)
        if unit == c'[':
            if depth == 0:
                first_open = i
            depth += 1
        elif unit == c']':
            if depth:
                depth -= 1
                if depth == 0 and first_closed < 0:
                    first_closed = first_open
        elif is_private(unit):
            close = marker_close(kind, data, i, b) if unit == START else -1
            if close < 0:
                break  # the brackets are read up to a marker character it cannot read past
            i = close
        elif depth == 0 and not in_set(&NOT_PLAIN_SET, unit):
            first_closed = -1  # a plain character: no later `](` reaches back to them
        i += 1
    if first_closed >= 0:
        return first_closed
    if depth:
        return first_open
    later = find_ascii(kind, data, i, b, c'[')  # after a marker, a `[` waits for the line's end
    return b if later < 0 else later


cdef Py_ssize_t decided_end(int kind, const void* data, Py_ssize_t n) noexcept nogil:
    """display.CleanStream._front's cut: the end of the decided text of a line's undecided
    text.  A piece ends on a plain character (not blank, bracket, separator or private use),
    after every START its STOP closed and before any DELIM whose ids may go on."""
    cdef Last starts, stops, delims, non_ids
    cdef Py_ssize_t cut = n, start, delim
    cdef Py_UCS4 unit
    starts.known = stops.known = delims.known = non_ids.known = False
    if not has_private(kind, data, 0, n):
        # No marker character: only the trailing blanks, brackets and separators wait.
        while cut and in_set(&NOT_PLAIN_SET, read_unit(kind, data, cut - 1)):
            cut -= 1
        return cut
    while True:
        while cut:
            unit = read_unit(kind, data, cut - 1)
            if not (in_set(&NOT_PLAIN_SET, unit) or is_private(unit)):
                break
            cut -= 1
        start = last_below(&starts, kind, data, cut, 0)
        if start >= 0 and last_below(&stops, kind, data, cut, 1) < start:
            cut = start  # a START its STOP may still close
            continue
        delim = last_below(&delims, kind, data, cut, 2)
        if delim >= 0 and last_below(&non_ids, kind, data, cut, 3) <= delim:
            cut = delim  # ids that may go on
            continue
        return cut


cdef inline Py_ssize_t find_break(int kind, const void* data, Py_ssize_t i,
                                  Py_ssize_t n) noexcept nogil:
    """The first line feed in [i, n), else -1."""
    return find_ascii(kind, data, i, n, c'\n')


cdef str joined_prefix(str head, str text, Py_ssize_t kept):
    """head + text[:kept] (0 < kept <= len(text)) in one string: of two ASCII strings it is
    made and filled at once, where a slice and a join would make two (a delta after held
    blanks pays that)."""
    cdef Py_ssize_t size = len(head)
    cdef object out
    if not (PyUnicode_IS_ASCII(head) and PyUnicode_IS_ASCII(text)):
        return head + text[:kept]
    out = PyUnicode_New(size + kept, 127)
    # Both copies stay inside out's size + kept one-byte units.
    memcpy(PyUnicode_DATA(out), PyUnicode_DATA(head), size)
    memcpy(<char*>PyUnicode_DATA(out) + size, PyUnicode_DATA(text), kept)
    return <str>out


@cython.final  # (its methods are called directly, not through a table)
cdef class StreamFront:
    """The common delta of a `CleanStream` in one C call (see clean_py.StreamFront); with `own`
    (set by a plain stream) also the deltas that end a line or decide a marker, in a line that
    cannot be code (see `own_feed`)."""

    cdef public object owner, entity
    # (An append to one of these holds the list in a local first: the attribute may be set
    # from Python, and without the GIL an append that waits for the list's lock would find
    # the list it borrowed freed.)
    cdef public list pending, parts
    cdef bint busy  # a call of the stream runs (see `enter`)
    cdef public bint on, waiting, own, mixed
    cdef public int state
    cdef public Py_ssize_t parts_length, looked, pending_length, line_from
    cdef public str tail
    cdef Py_UCS4 context_unit  # the last character released (NO_CONTEXT: none), `context`
    cdef public Py_ssize_t work, skip, raw

    def __init__(self, owner, list pending not None, int state=FRONT_OFF, entity=None,
                 bint own=False):
        if type(owner) not in _OWNER_TYPES:  # (the call costs more than the lookup)
            check_owner(owner)
        if entity is not None and not callable(entity):
            raise TypeError(f"entity must be None or callable, not {type(entity).__name__}")
        self.owner = owner
        self.pending = pending
        self.on = self.waiting = self.mixed = False
        self.own = own
        self.state = state
        self.entity = entity
        self.parts = []
        self.parts_length = self.looked = self.line_from = 0
        self.pending_length = 0
        for piece in pending:  # (a loop here: `sum` of a list costs a stream more)
            self.pending_length += len(piece)
        self.tail = ""
        self.context_unit = NO_CONTEXT
        self.work = self.skip = self.raw = 0

    @property
    def context(self):
        return "" if self.context_unit == NO_CONTEXT else chr(self.context_unit)

    @context.setter
    def context(self, str value not None):
        if len(value) > 1:
            raise ValueError("context must be one character or empty")
        self.context_unit = ord(value) if value else NO_CONTEXT

    # A builtin method taking one argument (METH_O): a server calls it once per delta, so the
    # calling convention is part of every delta's cost.
    @cython.binding(False)
    @cython.always_allow_keywords(False)
    @cython.critical_section  # one delta at a time per stream, with or without the GIL
    def feed(self, chunk):
        # The common delta runs no Python code and waits for no lock but its own lists' (which
        # only a claimed call reads), so the critical section keeps it whole; the paths that
        # run Python code claim the stream (`own_or_slow`, `slow`), and a delta that comes
        # while a claim holds is refused.
        cdef Py_ssize_t n, kept
        cdef int kind
        cdef const void* data
        cdef str text, out
        cdef list pending, parts  # (held here: see `pending`)
        cdef bint started = False
        if self.busy:
            raise ValueError(STREAM_BUSY)
        if (type(chunk) is not str or self.tail is None or self.parts is None
                or self.pending is None):
            return self.slow(chunk)  # (the lists may be set from Python; None is not one)
        text = <str>chunk
        n = len(text)
        kind = PyUnicode_KIND(text)
        data = PyUnicode_DATA(text)
        # Every read below is at an index below n, the chunk's length: inside the string.
        if self.waiting:
            if find_decides(kind, data, 0, n) >= 0:
                return self.own_or_slow(text)
            pending, parts = self.pending, self.parts
            pending.append(text)
            self.pending_length += n
            parts.append(text)
            self.parts_length += n
            self.work += n
            return ""
        if not self.on:
            return self.own_or_slow(text)
        kept = find_stop(kind, data, 0, n)
        if kept >= 0:
            if read_unit(kind, data, kept) != START or find_decides(kind, data, kept + 1, n) >= 0:
                return self.own_or_slow(text)
            started = True
        else:
            kept = n
        while kept and in_set(&NOT_PLAIN_SET, read_unit(kind, data, kept - 1)):
            kept -= 1
        pending = self.pending
        pending.append(text)
        self.pending_length += n
        self.work += n
        if started:
            self.on = False
            self.waiting = True
        if not kept:
            if len(self.tail) + n <= SHORT_HOLD:
                self.tail = self.tail + text
            else:
                # A long run with nothing to release (blanks, brackets): kept in parts, which
                # the stream looks at by its doubling rule, so the run costs its length once.
                parts = self.parts
                parts.append(text)
                self.parts_length += n
                self.on = False
            return ""
        if not self.tail:
            out = text if kept == n else text[:kept]
        else:
            out = joined_prefix(self.tail, text, kept)
        self.tail = "" if kept == n else text[kept:]
        self.context_unit = read_unit(kind, data, kept - 1)
        self.skip += len(out)
        self.raw += len(out)
        return out

    @cython.critical_section
    def enter(self):
        """Claim the stream for a call other than feed (its close, feed_snapshot, held): the
        stream's calls run one at a time, and one made while another runs (in another
        thread, or from a callback of the running one) is refused, so that the stream's
        state is never torn.  A critical section alone would not do: the slow path runs
        Python code, during which a thread without the GIL lets it go."""
        if self.busy:
            raise ValueError(STREAM_BUSY)
        self.busy = True

    def leave(self):
        self.busy = False

    @cython.critical_section
    def finish(self):
        """`CleanStream.close()` of a line the front owns: its held text cleaned by the rules
        of the end of the text, and the front closed as the stream's close leaves it (its
        owner CLOSED_OWNER, so that a later feed raises, and nothing held).  None, and nothing
        changed, when the stream must close it itself.  Claimed as feed's slow paths are (an
        entity's name may run Python code)."""
        if self.busy:
            raise ValueError(STREAM_BUSY)
        self.busy = True
        try:
            return self.finish_line()
        finally:
            self.busy = False

    cdef object finish_line(self):
        cdef str text
        cdef object shown
        cdef int start_kind
        if (not self.own or self.state == FRONT_OFF or self.mixed or self.tail is None
                or self.parts is None):
            return None
        text = self.joined(None)
        if self.state == LINE_START:
            start_kind = line_start_kind(PyUnicode_KIND(text), PyUnicode_DATA(text), 0, len(text))
            if may_be_code(start_kind):
                return None
        if has_own_stop(PyUnicode_KIND(text), PyUnicode_DATA(text), 0, len(text)):
            return None
        shown = self.shown(self.context_unit, text, len(text))
        if shown is None:
            return None
        self.work += len(text)
        self.tail = ""
        self.parts = []
        self.parts_length = self.pending_length = self.line_from = self.skip = self.raw = 0
        self.pending = []
        self.on = self.waiting = self.own = False
        self.owner = CLOSED_OWNER
        return shown

    cdef object slow(self, chunk):
        self.busy = True  # (see feed)
        try:
            return self.owner._slow(chunk)
        finally:
            self.busy = False

    cdef object own_or_slow(self, str chunk):
        cdef object out
        self.busy = True  # (see feed: own_feed may run the stream's Python code too)
        try:
            if self.own and self.state != FRONT_OFF:
                out = self.own_feed(chunk)
                if out is not None:
                    return out
            return self.owner._slow(chunk)
        finally:
            self.busy = False

    cdef str joined(self, str chunk):
        """The line's undecided text: the tail, the parts, then chunk (None: none)."""
        if not self.parts:
            if chunk is None or not self.tail:
                return self.tail if chunk is None else chunk
            return self.tail + chunk
        pieces = [self.tail, *self.parts]
        if chunk is not None:
            pieces.append(chunk)
        return "".join(pieces)

    cdef object shown(self, Py_UCS4 context, str text, Py_ssize_t end):
        """text[:end] as the kernel cleans it after `context` (display.CleanStream._clean_piece
        without lenient or widgets); None when the stream must clean it (a titled marker)."""
        cdef str piece = text if end == len(text) else text[:end]
        if not has_private(PyUnicode_KIND(text), PyUnicode_DATA(text), 0, end):
            return piece
        if context == NO_CONTEXT:
            return clean_one(piece, None, self.entity, True)
        return clean_after(context, piece, self.entity)

    cdef object look(self, str text, int* state, Py_ssize_t* cut, Py_UCS4 context):
        """display.CleanStream._front's look at a line's undecided text (without its doubling
        rule): the clean text it releases ("" for none), its end in `cut` and the line's state
        in `state`; None when the stream must look itself."""
        cdef int kind = PyUnicode_KIND(text), start_kind
        cdef const void* data = PyUnicode_DATA(text)
        cdef Py_ssize_t n = len(text)
        cut[0] = 0
        if state[0] == LINE_START:
            start_kind = line_start_kind(kind, data, 0, n)
            if start_kind == UNDECIDED:
                return ""
            if start_kind == MAYBE_FENCE:
                return None  # the stream notes that a fence may open
            state[0] = start_kind
            if start_kind == FRONT_OFF:
                return ""
        if has_own_stop(kind, data, 0, n):
            return None
        cut[0] = decided_end(kind, data, link_end(kind, data, 0, n))
        if cut[0] == 0:
            return ""
        return self.shown(context, text, cut[0])

    cdef object own_feed(self, str chunk):
        """A delta the fast paths leave, in a line that is not FRONT_OFF: what
        display.CleanStream._feed and _front make of it, or None (nothing changed) where the
        stream must (a carriage return, backtick, tilde or `[`, a line that may be code, a
        titled marker)."""
        cdef Py_ssize_t n = len(chunk), index = -1, first = -1, last = -1
        cdef int kind = PyUnicode_KIND(chunk)
        cdef const void* data = PyUnicode_DATA(chunk)
        cdef Py_UCS4 unit
        while True:
            index = find_stop(kind, data, index + 1, n)
            if index < 0:
                break
            unit = read_unit(kind, data, index)
            if unit == c'\n':
                if first < 0:
                    first = index
                last = index
            elif own_stop(unit):
                return None
        if first < 0:
            return self.own_part(chunk)
        return self.own_line_end(chunk, first, last)

    cdef object own_part(self, str chunk):
        """A delta inside the line: kept, or looked at with what the line holds."""
        cdef Py_ssize_t n = len(chunk), cut
        cdef int state = self.state
        cdef str text
        cdef object shown
        cdef list pending, parts  # (held here: see `pending`)
        if SHORT_HOLD < len(self.tail) + self.parts_length + n < 2 * self.looked:
            pending, parts = self.pending, self.parts
            pending.append(chunk)
            self.pending_length += n
            parts.append(chunk)
            self.parts_length += n
            self.work += n
            self.on = self.waiting = False  # held parts: the next delta comes here too
            return ""
        text = self.joined(chunk)
        shown = self.look(text, &state, &cut, self.context_unit)
        if shown is None:
            return None
        pending = self.pending
        pending.append(chunk)
        self.pending_length += n
        self.work += n + len(text)
        self.parts = []
        self.parts_length = 0
        self.state = state
        self.take(text, cut, <str>shown)
        return shown

    cdef void take(self, str text, Py_ssize_t cut, str shown):
        """The look released text[:cut] as shown: keep the rest, then the fast paths' flags
        (as display.CleanStream._slow sets them)."""
        cdef Py_ssize_t start, index
        cdef int kind
        cdef const void* data
        cdef Py_UCS4 unit
        if cut:
            self.tail = text[cut:]
            self.context_unit = text[cut - 1]
            self.skip += len(shown)
            self.raw += cut
        else:
            self.tail = text
        self.looked = len(self.tail)
        self.on = self.waiting = False
        if self.state != FRONT_ON:
            return
        kind = PyUnicode_KIND(self.tail)
        data = PyUnicode_DATA(self.tail)
        start = -1
        for index in range(len(self.tail)):
            unit = read_unit(kind, data, index)
            if unit == START:
                start = index
            elif unit == STOP:
                start = -1
        if start >= 0:
            self.waiting = True
            return
        self.on = find_stop(kind, data, 0, len(self.tail)) < 0

    cdef object own_line_end(self, str chunk, Py_ssize_t first, Py_ssize_t last):
        """A delta that ends the line (at first) and maybe more lines (up to last): each
        complete line cleaned whole (after what the line released), then the next line's
        start looked at.  None where a line may be code, or the line had a delta the stream
        took (`mixed`)."""
        cdef Py_ssize_t n = len(chunk), a, b, cut = 0
        cdef int kind = PyUnicode_KIND(chunk), state = LINE_START, start_kind
        cdef const void* data = PyUnicode_DATA(chunk)
        cdef str text, out, rest = None
        cdef object shown
        if self.mixed:
            return None
        if not self.tail and not self.parts and not has_private(kind, data, 0, n):
            return self.prose_line_end(chunk, first, last)
        text = self.joined(chunk if first + 1 == n else chunk[:first + 1])
        if self.state == LINE_START:
            start_kind = line_start_kind(PyUnicode_KIND(text), PyUnicode_DATA(text), 0,
                                         len(text) - 1)
            if may_be_code(start_kind):
                return None
        if has_own_stop(PyUnicode_KIND(text), PyUnicode_DATA(text), 0, len(text)):
            return None
        shown = self.shown(self.context_unit, text, len(text))
        if shown is None:
            return None
        out = <str>shown
        a = first + 1
        while a <= last:
            b = find_break(kind, data, a, last + 1)  # >= a: a line feed stands at last
            start_kind = line_start_kind(kind, data, a, b)
            if may_be_code(start_kind):
                return None
            shown = self.shown(NO_CONTEXT, chunk[a:b + 1], b + 1 - a)
            if shown is None:
                return None
            out += <str>shown
            a = b + 1
        if last + 1 < n:
            rest = chunk[last + 1:]
            shown = self.look(rest, &state, &cut, NO_CONTEXT)
            if shown is None:
                return None
        self.next_line(chunk, last, n + len(text), state)
        if rest is not None:
            self.take(rest, cut, <str>shown)
            if shown:
                out += <str>shown
        return out

    cdef object prose_line_end(self, str chunk, Py_ssize_t first, Py_ssize_t last):
        """own_line_end of a delta with no private-use character after a line that holds
        nothing undecided: every line of it goes out as it is, so the release is one slice of
        the delta (or the delta itself)."""
        cdef Py_ssize_t n = len(chunk), a = first + 1, b, end, cut = 0
        cdef int kind = PyUnicode_KIND(chunk), state = LINE_START, start_kind
        cdef const void* data = PyUnicode_DATA(chunk)
        if self.state == LINE_START:
            start_kind = line_start_kind(kind, data, 0, first)
            if may_be_code(start_kind):
                return None
        while a <= last:
            b = find_break(kind, data, a, last + 1)  # >= a: a line feed stands at last
            start_kind = line_start_kind(kind, data, a, b)
            if may_be_code(start_kind):
                return None
            a = b + 1
        if last + 1 < n:
            start_kind = line_start_kind(kind, data, last + 1, n)
            if start_kind == MAYBE_FENCE:
                return None
            if start_kind != UNDECIDED:
                state = start_kind
            if state == FRONT_ON:
                cut = link_end(kind, data, last + 1, n) - last - 1
                while cut and in_set(&NOT_PLAIN_SET, read_unit(kind, data, last + cut)):
                    cut -= 1
        self.next_line(chunk, last, n, state)
        end = last + 1 + cut
        if end < n:
            self.tail = chunk[end:]
        self.looked = n - end
        if cut:
            self.context_unit = read_unit(kind, data, end - 1)
            self.skip = self.raw = cut
        # (A `[` held leaves the next deltas to own_feed, which looks at it again.)
        self.on = state == FRONT_ON and find_ascii(kind, data, end, n, c'[') < 0
        return chunk if end == n else chunk[:end]

    cdef void next_line(self, str chunk, Py_ssize_t last, Py_ssize_t work, int state):
        """The lines up to chunk[last] are out: they wait for the scanner in `pending` (whose
        join is the stream since the last sync; `line_from` is where the line being written
        starts in it), and the next line starts, empty, in `state`."""
        cdef Py_ssize_t n = len(chunk)
        cdef list pending = self.pending  # (held here: see `pending`)
        pending.append(chunk)
        self.pending_length += n
        self.line_from = self.pending_length - (n - last - 1)
        self.work += work
        if self.parts:
            self.parts = []
        self.parts_length = 0
        self.tail = ""
        self.context_unit = NO_CONTEXT
        self.skip = self.raw = 0
        self.mixed = False
        self.state = state
        self.looked = 0
        self.on = self.waiting = False
        if self.line_from > SCAN_BEHIND:
            self.owner._sync()
