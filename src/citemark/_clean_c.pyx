# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# cython: cdivision=True, freethreading_compatible=True, auto_pickle=False, autotestdict=False
"""The compiled kernel of `citemark.clean`: every marker character found, classified and cut
in one pass over CPython's own string storage (PEP 393).

Same functions, names and branch order as the twin in `_clean_py.py`; the rules (characters,
bounds, spacing sets) are read from `_clean_rules` at import, so they have one home.
"""

from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.unicode cimport PyUnicode_FromKindAndData
from libc.string cimport memcpy, memmove

from citemark import _clean_rules as rules

cdef extern from "Python.h":
    ctypedef unsigned char Py_UCS1
    ctypedef unsigned short Py_UCS2
    int PyUnicode_KIND(object text)
    bint is_space "Py_UNICODE_ISSPACE"(Py_UCS4 ch) nogil
    void* PyUnicode_DATA(object text)
    Py_UCS4 read_unit "PyUnicode_READ"(int kind, const void* data, Py_ssize_t index) nogil
    void write_unit "PyUnicode_WRITE"(int kind, void* data, Py_ssize_t index, Py_UCS4 ch) nogil
    const Py_ssize_t PY_SSIZE_T_MAX

cdef extern from "_simd.h" nogil:
    const char* cm_init()
    Py_ssize_t cm_find_ucs1(const Py_UCS1* data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch)
    Py_ssize_t cm_find_ucs2(const Py_UCS2* data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch)
    Py_ssize_t cm_find_ucs4(const Py_UCS4* data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch)

cdef extern from *:
    """
    /* The search for any marker character: a range, so the one-unit search of _simd.h
       does not fit.  The portable loop has no early exit inside a block, so compilers
       vectorise it; `hit` gathers masks of the unit's own width (a 0/1 flag widened to int
       made gcc unpack every vector).  With SSE2 (any x86-64; chosen by _simd.h's level, so
       CITEMARK_SIMD=portable tests the plain loop), a movemask gives the exact place of a
       hit, where the plain loop walks its block again one unit at a time: 2.3 instructions
       per unit of real answers with the plain loop, under 1 with SSE2 (callgrind). */
    #define CC_PORTABLE(NAME, UNIT)                                                        \
    static inline Py_ssize_t NAME(const UNIT *d, Py_ssize_t i, Py_ssize_t n,             \
                                  UNIT first, UNIT span) {                               \
        for (; i + 32 <= n; i += 32) {                                                   \
            UNIT hit = 0;                                                                \
            for (int j = 0; j < 32; j++)                                                 \
                hit |= (UNIT)-(UNIT)((UNIT)(d[i + j] - first) <= span);                  \
            if (hit) break;                                                              \
        }                                                                                \
        for (; i < n; i++) if ((UNIT)(d[i] - first) <= span) return i;                  \
        return -1;                                                                       \
    }
    CC_PORTABLE(cc_range_portable_ucs2, Py_UCS2)
    CC_PORTABLE(cc_range_portable_ucs4, Py_UCS4)

    #if defined(CM_SSE2)
    /* All-ones in each 16-bit lane holding first..first+span: (x - first) saturated
       minus span is zero exactly there. */
    static inline __m128i cc_in_range16(const Py_UCS2 *d, __m128i first, __m128i span) {
        __m128i x = _mm_sub_epi16(_mm_loadu_si128((const __m128i *)d), first);
        return _mm_cmpeq_epi16(_mm_subs_epu16(x, span), _mm_setzero_si128());
    }
    /* All-ones in each 32-bit lane outside the range (no unsigned compare in SSE2: the
       sign bit is flipped and a signed one used). */
    static inline __m128i cc_out_range32(const Py_UCS4 *d, __m128i first, __m128i limit) {
        __m128i x = _mm_sub_epi32(_mm_loadu_si128((const __m128i *)d), first);
        return _mm_cmpgt_epi32(_mm_xor_si128(x, _mm_set1_epi32((int)0x80000000u)), limit);
    }
    #endif

    static inline Py_ssize_t cc_find_range_ucs2(const Py_UCS2 *d, Py_ssize_t i, Py_ssize_t n,
                                                Py_UCS2 first, Py_UCS2 span) {
    #if defined(CM_SSE2)
        if (cm_level >= CM_VECTOR) {
            const __m128i lo = _mm_set1_epi16((short)first), width = _mm_set1_epi16((short)span);
            for (; i + 32 <= n; i += 32) {
                unsigned int mask = (unsigned int)_mm_movemask_epi8(_mm_packs_epi16(
                    cc_in_range16(d + i, lo, width), cc_in_range16(d + i + 8, lo, width)));
                mask |= (unsigned int)_mm_movemask_epi8(_mm_packs_epi16(
                    cc_in_range16(d + i + 16, lo, width),
                    cc_in_range16(d + i + 24, lo, width))) << 16;
                if (mask) return i + cm_ctz(mask);
            }
        }
    #endif
        return cc_range_portable_ucs2(d, i, n, first, span);
    }

    static inline Py_ssize_t cc_find_range_ucs4(const Py_UCS4 *d, Py_ssize_t i, Py_ssize_t n,
                                                Py_UCS4 first, Py_UCS4 span) {
    #if defined(CM_SSE2)
        if (cm_level >= CM_VECTOR) {
            const __m128i lo = _mm_set1_epi32((int)first);
            const __m128i limit = _mm_set1_epi32((int)(span ^ 0x80000000u));
            for (; i + 16 <= n; i += 16) {
                unsigned int out = (unsigned int)_mm_movemask_epi8(_mm_packs_epi16(
                    _mm_packs_epi32(cc_out_range32(d + i, lo, limit),
                                    cc_out_range32(d + i + 4, lo, limit)),
                    _mm_packs_epi32(cc_out_range32(d + i + 8, lo, limit),
                                    cc_out_range32(d + i + 12, lo, limit))));
                if (out != 0xFFFFu) return i + cm_ctz(~out & 0xFFFFu);
            }
        }
    #endif
        return cc_range_portable_ucs4(d, i, n, first, span);
    }
    """
    Py_ssize_t cc_find_range_ucs2(
        const Py_UCS2* d, Py_ssize_t i, Py_ssize_t n, Py_UCS2 first, Py_UCS2 span
    ) nogil
    Py_ssize_t cc_find_range_ucs4(
        const Py_UCS4* d, Py_ssize_t i, Py_ssize_t n, Py_UCS4 first, Py_UCS4 span
    ) nogil


# The header's vector path is chosen per module (its state is static): choose it here too.
cm_init()

ctypedef fused unit_t:
    Py_UCS1
    Py_UCS2
    Py_UCS4

cdef enum:
    INLINE_TOKENS = 32

cdef struct Token:
    Py_ssize_t kind, start, end, family_start, family_end, body_start, body_end
    # What clean() shows instead: text[shown_start:shown_end] (an entity's name); empty when
    # the token is removed.
    Py_ssize_t shown_start, shown_end

cdef struct Tokens:
    Token* items  # `inline` until it outgrows it
    Py_ssize_t count
    Py_ssize_t capacity
    Token inline[INLINE_TOKENS]

# The rules, as C values.
cdef Py_UCS4 START = ord(rules.START)
cdef Py_UCS4 STOP = ord(rules.STOP)
cdef Py_UCS4 DELIM = ord(rules.DELIM)
cdef Py_UCS4 FIRST = rules.FIRST_MARKER
cdef Py_UCS4 LAST = rules.LAST_MARKER
cdef Py_UCS4 SPAN = rules.LAST_MARKER - rules.FIRST_MARKER
cdef Py_ssize_t MAX_MARKER = rules.MAX_MARKER
cdef Py_ssize_t LINK_TEXT_MAX = rules.LINK_TEXT_MAX
# A marker's body ends at START, STOP, "\n" or "\r" (scan_segment): no unit from BODY_LOW
# to FIRST - 1 is one of them.
cdef unsigned int BODY_LOW = max(ord("\n"), ord("\r")) + 1
cdef unsigned int BODY_SPAN = rules.FIRST_MARKER - (max(ord("\n"), ord("\r")) + 1)
if min(ord(rules.START), ord(rules.STOP)) < rules.FIRST_MARKER:
    raise ValueError("the body scan of _clean_c expects START and STOP among the markers")
cdef Py_ssize_t STRAY = rules.STRAY
cdef Py_ssize_t MARKER = rules.MARKER
cdef Py_ssize_t ENTITY = rules.ENTITY
cdef Py_ssize_t BROKEN = rules.BROKEN
cdef Py_ssize_t BARE = rules.BARE


cdef enum:
    SET_SIZE = 32
    MAX_TITLED = 8

# A set of characters, or a family name (its characters in order).
cdef struct CharSet:
    Py_UCS4 chars[SET_SIZE]
    Py_ssize_t count
    # Bit c of ascii[c >> 6]: the ASCII unit c is in the set (in_set answers most units at
    # once: the loop over the set was a tenth of the kernel's work on web answers).
    unsigned long long ascii[2]

cdef CharSet BLANK_SET, CLOSING_SET, LINE_BREAK_SET, ENTITY_NAME
cdef CharSet TITLED_NAMES[MAX_TITLED]
cdef Py_ssize_t TITLED_COUNT = len(rules.TITLED_FAMILIES)


cdef void fill(CharSet* target, str chars) except *:
    cdef unsigned int code
    if len(chars) > SET_SIZE:
        raise ValueError("a character table of _clean_rules outgrew the kernel's")
    target.count = len(chars)
    target.ascii[0] = target.ascii[1] = 0
    for index in range(len(chars)):
        code = ord(chars[index])
        target.chars[index] = code
        if code < 128:
            target.ascii[code >> 6] |= 1ULL << (code & 63)


fill(&BLANK_SET, rules.BLANKS)
fill(&CLOSING_SET, rules.CLOSING)
fill(&LINE_BREAK_SET, rules.LINE_BREAKS)
fill(&ENTITY_NAME, rules.ENTITY_FAMILY)
if TITLED_COUNT > MAX_TITLED:
    raise ValueError("TITLED_FAMILIES of _clean_rules outgrew the kernel's table")
for _index, _family in enumerate(rules.TITLED_FAMILIES):
    fill(&TITLED_NAMES[_index], _family)


cdef inline bint in_set(const CharSet* chars, Py_UCS4 ch) noexcept nogil:
    cdef Py_ssize_t index
    cdef unsigned int unit = ch
    if unit < 128:
        return (chars.ascii[unit >> 6] >> (unit & 63)) & 1
    for index in range(chars.count):
        if chars.chars[index] == ch:
            return True
    return False


cdef inline bint is_word(Py_UCS4 ch) noexcept nogil:
    return (
        (ch >= c'a' and ch <= c'z') or (ch >= c'A' and ch <= c'Z')
        or (ch >= c'0' and ch <= c'9') or ch == c'_'
    )


cdef inline bint is_letter(Py_UCS4 ch) noexcept nogil:
    return (ch >= c'a' and ch <= c'z') or (ch >= c'A' and ch <= c'Z')


cdef inline bint is_digit(Py_UCS4 ch) noexcept nogil:
    return ch >= c'0' and ch <= c'9'


cdef inline bint is_special(Py_UCS4 ch) noexcept nogil:
    return ch >= FIRST and ch <= LAST


# --- tokens ---------------------------------------------------------------------------------

cdef inline void init_tokens(Tokens* tokens) noexcept:
    tokens.items = tokens.inline
    tokens.count = 0
    tokens.capacity = INLINE_TOKENS


cdef inline void free_tokens(Tokens* tokens) noexcept:
    if tokens.items != tokens.inline:
        PyMem_Free(tokens.items)


cdef int push(Tokens* tokens, Py_ssize_t kind, Py_ssize_t start, Py_ssize_t end,
              Py_ssize_t family_start, Py_ssize_t family_end, Py_ssize_t body_start,
              Py_ssize_t body_end) except -1:
    cdef Py_ssize_t capacity = 2 * tokens.capacity
    cdef Token* grown
    cdef Token* token
    if tokens.count == tokens.capacity:
        if tokens.items == tokens.inline:
            grown = <Token*>PyMem_Malloc(capacity * sizeof(Token))
            if grown != NULL:
                memcpy(grown, tokens.inline, tokens.count * sizeof(Token))
        else:
            grown = <Token*>PyMem_Realloc(tokens.items, capacity * sizeof(Token))
        if grown == NULL:
            raise MemoryError()
        tokens.items = grown
        tokens.capacity = capacity
    token = &tokens.items[tokens.count]
    token.kind = kind
    token.start = start
    token.end = end
    token.family_start = family_start
    token.family_end = family_end
    token.body_start = body_start
    token.body_end = body_end
    token.shown_start = token.shown_end = start
    tokens.count += 1
    return 0


cdef inline bint is_zone(Py_UCS4 ch) noexcept nogil:
    # What may start an indented code line before its code (see _commonmark._ZONE).
    return (
        ch == c' ' or ch == c'\t' or ch == c'>' or ch == c'-' or ch == c'+' or ch == c'*'
        or ch == c'.' or ch == c')' or (ch >= c'0' and ch <= c'9')
    )


cdef inline bint is_line_break(Py_UCS4 ch) noexcept nogil:
    return ch == c'\n' or ch == c'\r'


cdef inline Py_ssize_t find_unit(
    const unit_t* data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch
) noexcept nogil:
    if unit_t is Py_UCS1:
        return cm_find_ucs1(data, i, end, ch)
    elif unit_t is Py_UCS2:
        return cm_find_ucs2(data, i, end, ch)
    else:
        return cm_find_ucs4(data, i, end, ch)


cdef inline bint has_triple(
    const unit_t* data, Py_ssize_t found, Py_ssize_t last, Py_UCS4 ch
) noexcept nogil:
    """Whether ch appears three times in a row within data[:last] (a fence opener), found
    being its first place there (-1: none)."""
    while 0 <= found < last - 2:
        if data[found + 1] == ch and data[found + 2] == ch:
            return True
        found = find_unit(data, found + 1, last, ch)
    return False


cdef bint may_be_in_code(const unit_t* data, Py_ssize_t n, Py_ssize_t first) noexcept nogil:
    """_commonmark.markers_may_be_in_code, first being the first marker's index: one look
    per line holding a marker (its leading zone: 4 spaces or a tab?), then a fence opener
    or a backtick before the end of the last such line, and a backtick after the first.
    Line breaks and backticks are found with the vector search; all of it is linear."""
    cdef Py_ssize_t at = first, line_start, index, spaces, last = 0, found
    cdef bint carriage = find_unit(data, 0, n, c'\r') >= 0
    while at >= 0:
        if carriage:  # rare: the plain walk back
            line_start = at
            while line_start > 0 and not is_line_break(data[line_start - 1]):
                line_start -= 1
        else:  # the last "\n" between the previous marker line and here
            line_start = last
            found = find_unit(data, line_start, at, c'\n')
            while found >= 0:
                line_start = found + 1
                found = find_unit(data, line_start, at, c'\n')
        spaces = 0
        index = line_start
        while index < at and is_zone(data[index]):
            if data[index] == c'\t':
                return True
            spaces = spaces + 1 if data[index] == c' ' else 0
            if spaces == 4:
                return True
            index += 1
        if carriage:
            last = at
            while last < n and not is_line_break(data[last]):
                last += 1
        else:
            last = find_unit(data, at, n, c'\n')
            if last < 0:
                last = n
        at = find_special(data, last, n) if last < n else -1
    found = find_unit(data, 0, last, c'`')
    if found >= 0 and find_unit(data, first + 1, n, c'`') >= 0:
        return True
    # The first backtick found serves the fence search too (a pass fewer on plain prose).
    return has_triple(data, found, last, c'`') or has_triple(
        data, find_unit(data, 0, last, c'~'), last, c'~'
    )


def hints(str text not None):
    """0: no marker character; 1: markers, none of which can be in Markdown code; 3: markers,
    some maybe in code (see _commonmark.markers_may_be_in_code)."""
    return hints_of(text)


cdef int hints_of(str text) noexcept:
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = len(text), first
    if kind == 1:
        return 0
    if kind == 2:
        first = find_special(<const Py_UCS2*>data, 0, n)
        if first < 0:
            return 0
        return 3 if may_be_in_code(<const Py_UCS2*>data, n, first) else 1
    first = find_special(<const Py_UCS4*>data, 0, n)
    if first < 0:
        return 0
    return 3 if may_be_in_code(<const Py_UCS4*>data, n, first) else 1


def has_markers(str text not None):
    cdef int kind = PyUnicode_KIND(text)
    if kind == 1:
        return False  # every unit is < 0x100
    if kind == 2:
        return find_special(<const Py_UCS2*>PyUnicode_DATA(text), 0, len(text)) >= 0
    return find_special(<const Py_UCS4*>PyUnicode_DATA(text), 0, len(text)) >= 0


cdef inline Py_ssize_t find_special(const unit_t* data, Py_ssize_t i, Py_ssize_t b) noexcept nogil:
    if unit_t is Py_UCS1:
        return -1  # no marker character fits in one byte
    elif unit_t is Py_UCS2:
        return cc_find_range_ucs2(data, i, b, <Py_UCS2>FIRST, <Py_UCS2>SPAN)
    else:
        return cc_find_range_ucs4(data, i, b, FIRST, SPAN)


def check_walls(str text not None, walls):
    if type(walls) is not list:
        raise TypeError(f"walls must be a list, not {type(walls).__name__}")
    cdef list checked = []
    cdef Py_ssize_t at = 0, start, end, n = len(text)
    for wall in walls:
        if type(wall) is not tuple or len(wall) != 2:
            raise TypeError("walls must hold (start, end) tuples")
        if type(wall[0]) is not int or type(wall[1]) is not int:
            raise TypeError("walls must hold (start, end) tuples of int")
        if not (at <= wall[0] <= wall[1] <= n):
            raise ValueError("walls must be sorted, disjoint and inside the text")
        start = wall[0]
        end = wall[1]
        checked.append((start, end))
        at = end
    return checked


cdef int scan_into(str text, object walls, Tokens* tokens) except -1:
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = len(text), at = 0, wall_start, wall_end, i
    cdef list checked = check_walls(text, walls)
    if kind == 1:
        return 0  # no marker character fits in one byte
    for i in range(len(checked) + 1):
        if i < len(checked):
            wall_start, wall_end = checked[i]
        else:
            wall_start = wall_end = n
        if kind == 2:
            scan_segment(<const Py_UCS2*>data, at, wall_start, tokens, PY_SSIZE_T_MAX)
        else:
            scan_segment(<const Py_UCS4*>data, at, wall_start, tokens, PY_SSIZE_T_MAX)
        at = wall_end
    return 0


def scan(str text not None, walls):
    cdef Tokens tokens
    cdef Py_ssize_t i
    cdef Token* t
    init_tokens(&tokens)
    try:
        scan_into(text, walls, &tokens)
        result = []
        for i in range(tokens.count):
            t = &tokens.items[i]
            result.append((t.kind, t.start, t.end, t.family_start, t.family_end,
                           t.body_start, t.body_end))
        return result
    finally:
        free_tokens(&tokens)


cdef inline Py_ssize_t digits_end(
    const unit_t* data, Py_ssize_t i, Py_ssize_t limit
) noexcept nogil:
    while i < limit and is_digit(data[i]):
        i += 1
    return i


cdef Py_ssize_t id_at(const unit_t* data, Py_ssize_t i, Py_ssize_t limit) noexcept nogil:
    """End of `turn[0-9]+[A-Za-z]+[0-9]+` at i, or -1."""
    cdef Py_ssize_t j
    if limit - i < 7 or data[i] != c't' or data[i + 1] != c'u':
        return -1
    if data[i + 2] != c'r' or data[i + 3] != c'n':
        return -1
    j = digits_end(data, i + 4, limit)
    if j == i + 4:
        return -1
    i = j
    while j < limit and is_letter(data[j]):
        j += 1
    if j == i:
        return -1
    i = j
    j = digits_end(data, j, limit)
    return -1 if j == i else j


cdef Py_ssize_t locator_at(const unit_t* data, Py_ssize_t i, Py_ssize_t limit) noexcept nogil:
    """End of `L[0-9]+(?:-L[0-9]+)?` at i, or -1."""
    cdef Py_ssize_t j, k
    if i >= limit or data[i] != c'L':
        return -1
    j = digits_end(data, i + 1, limit)
    if j == i + 1:
        return -1
    if j + 2 < limit and data[j] == c'-' and data[j + 1] == c'L':
        k = digits_end(data, j + 2, limit)
        if k > j + 2:
            return k
    return j


cdef Py_ssize_t id_chain(const unit_t* data, Py_ssize_t i, Py_ssize_t limit) noexcept nogil:
    """The end of `id (DELIM (id|locator))*` at i (ids as `turn0search0`), or i."""
    cdef Py_ssize_t end = id_at(data, i, limit), following
    if end < 0:
        return i
    while end < limit and data[end] == DELIM:
        following = id_at(data, end + 1, limit)
        if following < 0:
            following = locator_at(data, end + 1, limit)
        if following < 0:
            break
        end = following
    return end


cdef Py_ssize_t scan_segment(
    const unit_t* data, Py_ssize_t i, Py_ssize_t b, Tokens* tokens, Py_ssize_t most
) except -2:
    """Tokens of data[i:b] until there are `most`: returns where to resume, or -1 at the end
    of the segment (the scan keeps no other state, so it can stop between any two tokens)."""
    cdef Py_ssize_t family_end, body, limit, body_end, end, kind
    cdef Py_UCS4 ch
    while True:
        if tokens.count >= most:
            return i
        i = find_special(data, i, b)
        if i < 0:
            return -1
        ch = data[i]
        if ch == START:
            family_end = i + 1
            while family_end < b and is_word(data[family_end]):
                family_end += 1
            if family_end < b and data[family_end] == STOP:
                push(tokens, MARKER, i, family_end + 1, i + 1, family_end, family_end, family_end)
                i = family_end + 1
                continue
            if family_end < b and data[family_end] == DELIM:
                body = family_end + 1
                limit = min(b, i + MAX_MARKER)
                body_end = body
                while body_end < limit:
                    ch = data[body_end]
                    # One test for the common unit, above the line breaks and below the
                    # marker characters (a third of the kernel's instructions went here).
                    if <unsigned int>ch - BODY_LOW < BODY_SPAN:
                        body_end += 1
                        continue
                    if ch == START or ch == STOP or ch == c'\n' or ch == c'\r':
                        break
                    body_end += 1
                if body_end < limit and data[body_end] == STOP:
                    kind = MARKER
                    if same_name(sizeof(unit_t), data, i + 1, family_end, &ENTITY_NAME):
                        kind = ENTITY
                    push(tokens, kind, i, body_end + 1, i + 1, family_end, body, body_end)
                    i = body_end + 1
                    continue
                # Never closed, or abandoned by a new START: the head and its ids go.
                end = id_chain(data, body, body_end)
                push(tokens, BROKEN, i, end, i + 1, family_end, body, end)
                i = end
                continue
        elif ch == DELIM:
            end = id_chain(data, i + 1, b)
            if end > i + 1:
                push(tokens, BARE, i, end, i, i, i + 1, end)
                i = end
                continue
        push(tokens, STRAY, i, i + 1, i, i, i, i)
        i += 1


cdef inline bint same_name(
    int kind, const void* data, Py_ssize_t a, Py_ssize_t b, const CharSet* name
) noexcept nogil:
    """Whether the text's [a:b] is the name, without making the slice."""
    cdef Py_ssize_t j
    if b - a != name.count:
        return False
    for j in range(name.count):
        if read_unit(kind, data, a + j) != name.chars[j]:
            return False
    return True


cdef bint titled(int kind, const void* data, const Token* token) noexcept nogil:
    """Whether the token's family shows its title (only the front's general path renders
    those: clean() then returns None)."""
    cdef Py_ssize_t index
    for index in range(TITLED_COUNT):
        if same_name(kind, data, token.family_start, token.family_end, &TITLED_NAMES[index]):
            return True
    return False


cdef inline Py_ssize_t skip_json_blanks(
    const unit_t* data, Py_ssize_t i, Py_ssize_t b
) noexcept nogil:
    while i < b and (data[i] == c' ' or data[i] == c'\t' or is_line_break(data[i])):
        i += 1
    return i


cdef bint plain_name(const unit_t* data, Token* token) noexcept nogil:
    """What clean.entity_name shows for the common entity body, a JSON array of plain strings
    (`["kind","Name","description"]`: no escape, control or marker character), found in
    place: the second string (the first when alone) without its outer white space, as
    str.strip() sees it.  False for any other body, which the `entity` function decides.
    Real answers hold many entities, and a call into Python for each cost more than all
    the rest of the cut (measured on a log of answers)."""
    cdef Py_ssize_t i = token.body_start, last = token.body_end - 1, count = 0, start
    cdef Py_ssize_t name_start = 0, name_end = 0
    cdef Py_UCS4 ch
    if last <= i or data[i] != c'[' or data[last] != c']':
        return False
    i += 1
    while True:
        i = skip_json_blanks(data, i, last)
        if i == last or data[i] != c'"':
            return False
        start = i = i + 1
        while i < last and data[i] != c'"':
            ch = data[i]
            if ch == c'\\' or ch < 0x20 or is_special(ch):
                return False
            i += 1
        if i == last:
            return False
        count += 1
        if count <= 2:
            name_start = start
            name_end = i
        i = skip_json_blanks(data, i + 1, last)
        if i == last:
            break
        if data[i] != c',':
            return False
        i += 1
    while name_start < name_end and is_space(data[name_start]):
        name_start += 1
    while name_end > name_start and is_space(data[name_end - 1]):
        name_end -= 1
    token.shown_start = name_start
    token.shown_end = name_end
    return True


cdef bint plain_name_of(int kind, const void* data, Token* token) noexcept nogil:
    if kind == 2:
        return plain_name(<const Py_UCS2*>data, token)
    if kind == 4:
        return plain_name(<const Py_UCS4*>data, token)
    return False  # no marker in one-byte text


# --- the cut ----------------------------------------------------------------------------------

cdef struct Output:
    void* data
    int kind
    Py_ssize_t length
    Py_ssize_t trail  # trailing blanks
    Py_UCS4 before  # the character before them ("\n" at the start: a line start)


cdef inline void note_end(Output* out, Py_ssize_t floor):
    """Recompute trail/before after writing out.data[floor:length]."""
    cdef Py_ssize_t i = out.length
    while i > floor and in_set(&BLANK_SET, read_unit(out.kind, out.data, i - 1)):
        i -= 1
    if i > floor:
        out.trail = out.length - i
        out.before = read_unit(out.kind, out.data, i - 1)
    else:
        out.trail += out.length - floor


cdef inline void emit_text(
    Output* out, int kind, const void* data, Py_ssize_t a, Py_ssize_t b
):
    cdef Py_ssize_t floor = out.length, i
    if a >= b:
        return
    if kind == out.kind:
        memcpy(<char*>out.data + out.length * kind, <const char*>data + a * kind, (b - a) * kind)
    else:
        for i in range(a, b):
            write_unit(out.kind, out.data, out.length + i - a, read_unit(kind, data, i))
    out.length += b - a
    note_end(out, floor)


cdef inline void drop_trail(Output* out):
    out.length -= out.trail
    out.trail = 0


cdef bint unwrap_link(Output* out):
    """The output ends with `[text](` and the marker was the destination: keep `text`.  The
    `[` is looked for on the same line, at most LINK_TEXT_MAX characters back, brackets
    balanced; a link text of blanks only stays as it is."""
    cdef Py_ssize_t index, floor, opened = -1, depth = 0, link_start
    cdef Py_UCS4 ch
    if out.trail or out.before != c'(':
        return False
    if out.length < 2 or read_unit(out.kind, out.data, out.length - 2) != c']':
        return False
    floor = max(0, out.length - LINK_TEXT_MAX - 2)
    index = out.length - 3
    while index >= floor:
        ch = read_unit(out.kind, out.data, index)
        if in_set(&LINE_BREAK_SET, ch):
            break
        if ch == c']':
            depth += 1
        elif ch == c'[':
            if depth == 0:
                opened = index
                break
            depth -= 1
        index -= 1
    if opened < 0:
        return False
    link_start = opened + 1
    index = link_start
    while index < out.length - 2 and in_set(&BLANK_SET, read_unit(out.kind, out.data, index)):
        index += 1
    if index == out.length - 2:
        return False
    memmove(<char*>out.data + opened * out.kind, <char*>out.data + link_start * out.kind,
            (out.length - 2 - link_start) * out.kind)
    out.length -= 3
    out.trail = 0
    note_end(out, opened)
    return True


cdef Py_ssize_t space(str text, int kind, const void* data, Py_ssize_t end, Output* out):
    """The spacing rule where a run of removals ended at `end`; returns where the text
    resumes (see the twin)."""
    cdef Py_ssize_t n = len(text)
    cdef Py_UCS4 following = read_unit(kind, data, end) if end < n else c'\n'
    cdef bint at_line_start
    if following == c')' and unwrap_link(out):
        return end + 1
    at_line_start = in_set(&LINE_BREAK_SET, out.before)
    if in_set(&LINE_BREAK_SET, following):
        drop_trail(out)
    elif in_set(&BLANK_SET, following):
        if out.trail and not at_line_start:
            drop_trail(out)
        elif at_line_start:
            while end < n and in_set(&BLANK_SET, read_unit(kind, data, end)):
                end += 1
    elif in_set(&CLOSING_SET, following) and not at_line_start:
        drop_trail(out)
    return end


cdef struct Join:
    Output out
    Py_ssize_t pos  # where the text resumes
    Py_ssize_t run_first  # the first token of the current run of adjacent removals


cdef int join_one(Join* state, str text, int kind, const void* data, const Token* token,
                  bint run_goes_on, int shown_kind, const void* shown, Py_ssize_t shown_length,
                  list positions, Py_ssize_t index) except -1:
    """Cut one token (the twin's loop body in `join`), shown[:shown_length] its replacement;
    run_goes_on: the next token is a removal that starts where this one ends."""
    cdef Py_ssize_t run_index
    if token.start > state.pos:
        emit_text(&state.out, kind, data, state.pos, token.start)
        state.run_first = index
    state.pos = token.end
    if shown_length:
        if positions is not None:
            positions.append(state.out.length)
        emit_text(&state.out, shown_kind, shown, 0, shown_length)
        state.run_first = index + 1
        return 0
    if positions is not None:
        positions.append(state.out.length)
    if run_goes_on:
        return 0  # the spacing is decided at the run's end
    state.pos = space(text, kind, data, token.end, &state.out)
    if positions is not None:
        for run_index in range(state.run_first, index + 1):
            positions[run_index] = state.out.length
    state.run_first = index + 1
    return 0


cdef int start_join(Join* state, int kind, Py_ssize_t size) except -1:
    state.out.kind = kind
    state.out.data = PyMem_Malloc(size * kind + 1)
    if state.out.data == NULL:
        raise MemoryError()
    state.out.length = 0
    state.out.trail = 0
    state.out.before = c'\n'
    state.pos = 0
    state.run_first = 0
    return 0


cdef object join_tokens(str text, Tokens* tokens, list replacements, list positions):
    """text with each token replaced; appends each replacement's place to positions."""
    cdef int kind = PyUnicode_KIND(text), out_kind = kind
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = len(text), size = n, index, count = tokens.count
    cdef Join state
    cdef str replacement
    cdef bint run_goes_on
    if replacements is not None:
        for replacement in replacements:
            size += len(replacement)
            if PyUnicode_KIND(replacement) > out_kind:
                out_kind = PyUnicode_KIND(replacement)
    if count == 0:
        return text
    start_join(&state, out_kind, size)
    try:
        for index in range(count):
            replacement = replacements[index] if replacements is not None else ""
            run_goes_on = index + 1 < count and (
                tokens.items[index + 1].start == tokens.items[index].end
                and (replacements is None or not replacements[index + 1])
            )
            join_one(&state, text, kind, data, &tokens.items[index], run_goes_on,
                     PyUnicode_KIND(replacement), PyUnicode_DATA(replacement),
                     len(replacement), positions, index)
        emit_text(&state.out, kind, data, state.pos, n)
        return PyUnicode_FromKindAndData(state.out.kind, state.out.data, state.out.length)
    finally:
        PyMem_Free(state.out.data)


def join(str text not None, tokens, replacements):
    if type(tokens) is not list:
        raise TypeError(f"tokens must be a list, not {type(tokens).__name__}")
    if replacements is not None and (
        type(replacements) is not list or len(replacements) != len(tokens)
    ):
        raise TypeError("replacements must be None or a list as long as tokens")
    cdef Tokens array
    cdef Py_ssize_t pos = 0, n = len(text), start, end
    cdef list positions = []
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
            push(&array, 0, start, end, 0, 0, 0, 0)
            pos = end
        return join_tokens(text, &array, replacements, positions), positions
    finally:
        free_tokens(&array)


cdef enum:
    # clean() cuts the tokens a window at a time, so a text with millions of markers needs
    # no token array of its size (which would fall out of the caches).
    WINDOW = 256


cdef check_entity(entity, plain_names):
    if entity is not None and not callable(entity):
        raise TypeError(f"entity must be None or callable, not {type(entity).__name__}")
    if type(plain_names) is not bool:
        raise TypeError(f"plain_names must be bool, not {type(plain_names).__name__}")


def clean(str text not None, walls, entity=None, plain_names=False):
    """scan and join in one call, entity markers shown as entity(body), or found in place
    when plain_names and the body has the common shape (see plain_name); None when there
    is an entity marker and no `entity` function, or a marker of TITLED_FAMILIES (the
    front renders those)."""
    check_entity(entity, plain_names)
    return clean_one(text, check_walls(text, walls), entity, plain_names)


def clean_texts(list texts not None, walls_of, entity, plain_names):
    """For each text: the text itself when it holds no marker character, else
    clean(text, walls, entity, plain_names), the walls being walls_of(text) when a marker
    may be in Markdown code (see hints; walls_of None: never any walls).  None for an item
    that is not exactly a str, and where clean gives None: the front decides those.
    One call for a batch, since the front's own work per text (checks, two kernel calls)
    cost as much as the kernel's on a log of answers."""
    check_entity(entity, plain_names)
    if walls_of is not None and not callable(walls_of):
        raise TypeError(f"walls_of must be None or callable, not {type(walls_of).__name__}")
    cdef list results = []
    cdef int hint
    cdef str text
    for item in texts:
        if type(item) is not str:
            results.append(None)
            continue
        text = <str>item
        hint = hints_of(text)
        if hint == 0:
            results.append(text)
        elif hint == 3 and walls_of is not None:
            results.append(clean_one(text, check_walls(text, walls_of(text)), entity,
                                     plain_names))
        else:
            results.append(clean_one(text, None, entity, plain_names))
    return results


cdef object clean_one(str text, list checked, entity, bint plain_names):
    """clean() once its arguments are checked (checked None: no walls)."""
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = len(text), segment = 0, at = 0, resume, k, seen = 0
    cdef Py_ssize_t wall_start, wall_end, wall_count = 0 if checked is None else len(checked)
    cdef Tokens tokens
    cdef Token carry
    cdef Token* token
    cdef bint carrying = False, done = False
    cdef Join state
    if kind == 1:
        return text  # no marker character fits in one byte
    init_tokens(&tokens)
    state.out.data = NULL
    try:
        while True:
            tokens.count = 0
            if carrying:
                tokens.items[0] = carry
                tokens.count = 1
            # Fill the window, segment by segment (walls are code: never scanned).
            while not done and tokens.count < WINDOW:
                if segment < wall_count:
                    wall_start, wall_end = checked[segment]
                else:
                    wall_start = wall_end = n
                if kind == 2:
                    resume = scan_segment(<const Py_UCS2*>data, at, wall_start, &tokens,
                                          WINDOW)
                else:
                    resume = scan_segment(<const Py_UCS4*>data, at, wall_start, &tokens,
                                          WINDOW)
                if resume >= 0:
                    at = resume
                elif segment < wall_count:
                    segment += 1
                    at = wall_end
                else:
                    done = True
            for k in range(1 if carrying else 0, tokens.count):
                token = &tokens.items[k]
                if titled(kind, data, token):
                    return None
                if token.kind == ENTITY:
                    if entity is None:
                        return None
                    if not (plain_names and plain_name_of(kind, data, token)):
                        # A name from Python may widen the text: the whole-array path
                        # sizes the output for it.
                        return clean_with_entities(text, checked or [], entity, plain_names)
            if tokens.count == 0:
                break
            seen += tokens.count
            if state.out.data == NULL:
                # Enough: a name shown is part of its marker's body.
                start_join(&state, kind, n)
            for k in range(tokens.count - (0 if done else 1)):
                token = &tokens.items[k]
                join_one(&state, text, kind, data, token,
                         k + 1 < tokens.count
                         and tokens.items[k + 1].start == token.end
                         and tokens.items[k + 1].shown_end == tokens.items[k + 1].shown_start,
                         kind, <const char*>data + token.shown_start * kind,
                         token.shown_end - token.shown_start, None, k)
            if done:
                break
            carry = tokens.items[tokens.count - 1]
            carrying = True
        if not seen:
            return text
        emit_text(&state.out, kind, data, state.pos, n)
        return PyUnicode_FromKindAndData(state.out.kind, state.out.data, state.out.length)
    finally:
        free_tokens(&tokens)
        PyMem_Free(state.out.data)


cdef object clean_with_entities(str text, list walls, entity, bint plain_names):
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef Tokens tokens
    cdef Token* token
    cdef Py_ssize_t i
    cdef list replacements = None
    init_tokens(&tokens)
    try:
        scan_into(text, walls, &tokens)
        for i in range(tokens.count):
            token = &tokens.items[i]
            if titled(kind, data, token):
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
