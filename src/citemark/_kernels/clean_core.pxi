# The one C core of `citemark.display`, included by `clean_c` (CPython's PEP 393 storage) and
# `jsonl_c` (the UTF-8 bytes of a JSON string token): finding every marker character,
# classifying it into a token, and cutting the tokens out with the spacing rule.  Every function
# is fused over `unit_t` of `grammar_c.pxi` (include that first), so the rules, the branch
# order and the proof of linear time are written once; the twin of all of it is `clean_py`.
#
# What differs between the encodings: a marker character is one unit in PEP 393 and three
# bytes in UTF-8 (`marker_at`, `MARK_WIDTH`); a character that is not ASCII is read with
# `read_point` forward and `point_before` backward; and MAX_MARKER and LINK_TEXT_MAX count
# code points, which `clamp_points` and `unwrap_link` count in UTF-8.  Every test against an
# ASCII character reads a unit with `at`: in UTF-8 an ASCII byte is a whole character (a
# sequence's bytes are all >= 0x80), so a byte search finds what the `str` search finds.
#
# Everything runs without the GIL (the JSONL pass cleans a whole chunk in one nogil pass): the
# token array grows with the raw allocator, and an output buffer is given by the caller, of at
# least the text's size (the cut never makes a text longer: it keeps a subsequence of its
# characters).

from cpython.mem cimport PyMem_RawFree, PyMem_RawMalloc, PyMem_RawRealloc
from libc.string cimport memchr, memcpy, memmove

from citemark._core import shapes as clean_rules

cdef extern from "Python.h":
    void write_unit "PyUnicode_WRITE"(int kind, void* data, Py_ssize_t index, Py_UCS4 ch) nogil
    bint Py_UNICODE_ISALNUM(Py_UCS4 ch) nogil

cdef extern from "simd.h" nogil:
    # An alias, so that a module declaring cm_count_points itself can include this file.
    Py_ssize_t cc_count_points "cm_count_points"(const unsigned char* data, Py_ssize_t n)

cdef extern from *:
    """
    /* The search for any marker character: a range, so the one-unit search of simd.h
       does not fit.  The portable loop has no early exit inside a block, so compilers
       vectorise it; `hit` gathers masks of the unit's own width (a 0/1 flag widened to int
       made gcc unpack every vector).  With SSE2 (any x86-64; chosen by simd.h's level, so
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
    CC_PORTABLE(cc_range_portable_ucs1, Py_UCS1)
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

    /* The same over bytes (the lead bytes of UTF-8 sequences), with the saturating test of
       cc_in_range16 on 8-bit lanes. */
    static inline Py_ssize_t cc_find_range_ucs1(const Py_UCS1 *d, Py_ssize_t i, Py_ssize_t n,
                                                Py_UCS1 first, Py_UCS1 span) {
    #if defined(CM_SSE2)
        if (cm_level >= CM_VECTOR) {
            const __m128i lo = _mm_set1_epi8((char)first), width = _mm_set1_epi8((char)span);
            const __m128i zero = _mm_setzero_si128();
            for (; i + 32 <= n; i += 32) {
                __m128i a = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(d + i)), lo);
                __m128i b = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(d + i + 16)), lo);
                unsigned int mask = (unsigned int)_mm_movemask_epi8(
                    _mm_cmpeq_epi8(_mm_subs_epu8(a, width), zero));
                mask |= (unsigned int)_mm_movemask_epi8(
                    _mm_cmpeq_epi8(_mm_subs_epu8(b, width), zero)) << 16;
                if (mask) return i + cm_ctz(mask);
            }
        }
    #endif
        return cc_range_portable_ucs1(d, i, n, first, span);
    }

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
    Py_ssize_t cc_find_range_ucs1(
        const Py_UCS1* d, Py_ssize_t i, Py_ssize_t n, Py_UCS1 first, Py_UCS1 span
    ) nogil
    Py_ssize_t cc_find_range_ucs2(
        const Py_UCS2* d, Py_ssize_t i, Py_ssize_t n, Py_UCS2 first, Py_UCS2 span
    ) nogil
    Py_ssize_t cc_find_range_ucs4(
        const Py_UCS4* d, Py_ssize_t i, Py_ssize_t n, Py_UCS4 first, Py_UCS4 span
    ) nogil


cdef enum:
    INLINE_TOKENS = 32
    # clean() cuts the tokens a window at a time, so a text with millions of markers needs
    # no token array of its size (which would fall out of the caches).
    WINDOW = 256
    # What `cut` found (see there).
    CUT_NONE = 0
    CUT_DONE = 1
    CUT_TITLED = 2
    CUT_ENTITY = 3

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
cdef Py_UCS4 START = ord(clean_rules.START)
cdef Py_UCS4 STOP = ord(clean_rules.STOP)
cdef Py_UCS4 DELIM = ord(clean_rules.DELIM)
cdef Py_UCS4 FIRST = clean_rules.FIRST_MARKER
cdef Py_UCS4 LAST = clean_rules.LAST_MARKER
cdef Py_UCS4 SPAN = clean_rules.LAST_MARKER - clean_rules.FIRST_MARKER
# Every character clean removes outside code: the Private Use Area, markers included.
cdef Py_UCS4 FIRST_PRIVATE = clean_rules.FIRST_PRIVATE
cdef Py_UCS4 LAST_PRIVATE = clean_rules.LAST_PRIVATE
cdef Py_UCS4 PRIVATE_SPAN = clean_rules.LAST_PRIVATE - clean_rules.FIRST_PRIVATE
if not clean_rules.FIRST_PRIVATE <= clean_rules.FIRST_MARKER <= clean_rules.LAST_MARKER \
        <= clean_rules.LAST_PRIVATE:
    raise ValueError("the markers of _core.shapes must lie in its private-use range")
cdef Py_ssize_t MAX_MARKER = clean_rules.MAX_MARKER
cdef Py_ssize_t LINK_TEXT_MAX = clean_rules.LINK_TEXT_MAX
# A marker's body ends at START, STOP, "\n" or "\r" (scan_segment): no unit from BODY_LOW
# to FIRST - 1 is one of them.
cdef unsigned int BODY_LOW = max(ord("\n"), ord("\r")) + 1
cdef unsigned int BODY_SPAN = clean_rules.FIRST_MARKER - (max(ord("\n"), ord("\r")) + 1)
if min(ord(clean_rules.START), ord(clean_rules.STOP)) < clean_rules.FIRST_MARKER:
    raise ValueError("the body scan of the clean core expects START and STOP among the markers")
# In UTF-8 every marker character is three bytes sharing their first two (MARK_LEAD,
# MARK_SECOND), the third from MARK_THIRD to MARK_THIRD + SPAN: one lead byte to look for.
_first_bytes = chr(clean_rules.FIRST_MARKER).encode("utf-8")
if len(_first_bytes) != 3 or chr(clean_rules.LAST_MARKER).encode("utf-8")[:2] != _first_bytes[:2]:
    raise ValueError("the UTF-8 scan of the clean core expects markers of one 3-byte block")
cdef unsigned char MARK_LEAD = _first_bytes[0]
cdef unsigned char MARK_SECOND = _first_bytes[1]
cdef unsigned char MARK_THIRD = _first_bytes[2]
# ... and every private-use character is three bytes, of one of a few lead bytes.
_private_first = chr(clean_rules.FIRST_PRIVATE).encode("utf-8")
_private_last = chr(clean_rules.LAST_PRIVATE).encode("utf-8")
if len(_private_first) != 3 or len(_private_last) != 3:
    raise ValueError("the UTF-8 scan of the clean core expects private-use characters of 3 bytes")
cdef unsigned char PRIVATE_LEAD = _private_first[0]
cdef unsigned char PRIVATE_LEAD_SPAN = _private_last[0] - _private_first[0]
cdef int NO_MARKERS = clean_rules.NO_MARKERS
cdef int MARKERS_OUTSIDE_CODE = clean_rules.MARKERS_OUTSIDE_CODE
cdef int MARKERS_MAYBE_IN_CODE = clean_rules.MARKERS_MAYBE_IN_CODE
cdef Py_ssize_t STRAY = clean_rules.STRAY
cdef Py_ssize_t MARKER = clean_rules.MARKER
cdef Py_ssize_t ENTITY = clean_rules.ENTITY
cdef Py_ssize_t BROKEN = clean_rules.BROKEN
cdef Py_ssize_t BARE = clean_rules.BARE


cdef enum:
    SET_SIZE = 48
    MAX_TITLED = 8

# A set of characters, or a family name (its characters in order).
cdef struct CharSet:
    Py_UCS4 chars[SET_SIZE]
    Py_ssize_t count
    # Bit c of ascii[c >> 6]: the ASCII unit c is in the set (in_set answers most units at
    # once: the loop over the set was a tenth of the kernel's work on web answers).
    unsigned long long ascii[2]

cdef CharSet BLANK_SET, CLOSING_SET, LINE_BREAK_SET, ENTITY_NAME, QUOTE_SET, DASH_SET
cdef CharSet NO_BREAK_SET, EMPHASIS_SET
cdef CharSet OPENER_SET, CLOSER_SET, SEPARATOR_SET  # OPENER_SET.chars[k] pairs CLOSER_SET's
cdef CharSet TITLED_NAMES[MAX_TITLED]
cdef Py_ssize_t TITLED_COUNT = len(clean_rules.TITLED_FAMILIES)


cdef void fill(CharSet* target, str chars) except *:
    cdef unsigned int code
    if len(chars) > SET_SIZE:
        raise ValueError("a character table of _core.shapes outgrew the kernel's")
    target.count = len(chars)
    target.ascii[0] = target.ascii[1] = 0
    for index in range(len(chars)):
        code = ord(chars[index])
        target.chars[index] = code
        if code < 128:
            target.ascii[code >> 6] |= 1ULL << (code & 63)


fill(&BLANK_SET, clean_rules.BLANKS)
fill(&NO_BREAK_SET, clean_rules.NO_BREAK)
fill(&EMPHASIS_SET, clean_rules.EMPHASIS)
fill(&CLOSING_SET, clean_rules.CLOSING)
fill(&QUOTE_SET, clean_rules.QUOTES)
fill(&DASH_SET, clean_rules.DASHES)
fill(&LINE_BREAK_SET, clean_rules.LINE_BREAKS)
fill(&OPENER_SET, clean_rules.OPENERS)
fill(&CLOSER_SET, clean_rules.CLOSERS)
fill(&SEPARATOR_SET, clean_rules.SEPARATORS)
if len(clean_rules.OPENERS) != len(clean_rules.CLOSERS):
    raise ValueError("OPENERS and CLOSERS of _core.shapes must pair up")
fill(&ENTITY_NAME, clean_rules.ENTITY_FAMILY)
if TITLED_COUNT > MAX_TITLED:
    raise ValueError("TITLED_FAMILIES of _core.shapes outgrew the kernel's table")
for _index, _family in enumerate(clean_rules.TITLED_FAMILIES):
    if not _family.isascii():  # same_name compares units with characters
        raise ValueError("TITLED_FAMILIES of _core.shapes must be ASCII")
    fill(&TITLED_NAMES[_index], _family)
if not clean_rules.ENTITY_FAMILY.isascii():
    raise ValueError("ENTITY_FAMILY of _core.shapes must be ASCII")


cdef inline bint in_set(const CharSet* chars, Py_UCS4 ch) noexcept nogil:
    cdef Py_ssize_t index
    cdef unsigned int unit = ch
    if unit < 128:
        return (chars.ascii[unit >> 6] >> (unit & 63)) & 1
    for index in range(chars.count):
        if chars.chars[index] == ch:
            return True
    return False


# Inclusive ranges of code points, in order (shapes.UNSPACED and UNSPACED_PUNCTUATION).
cdef enum:
    MAX_RANGES = 16

cdef struct Ranges:
    Py_UCS4 low[MAX_RANGES]
    Py_UCS4 high[MAX_RANGES]
    Py_ssize_t count

cdef Ranges UNSPACED_RANGES, UNSPACED_PUNCTUATION_RANGES


cdef void fill_ranges(Ranges* target, tuple ranges) except *:
    cdef Py_ssize_t index
    if not 0 < len(ranges) <= MAX_RANGES:
        raise ValueError("a range table of _core.shapes outgrew the kernel's")
    target.count = len(ranges)
    for index in range(target.count):
        target.low[index], target.high[index] = ranges[index]
        if target.low[index] > target.high[index] or (
            index and target.low[index] <= target.high[index - 1]
        ):
            raise ValueError("a range table of _core.shapes is out of order")


fill_ranges(&UNSPACED_RANGES, clean_rules.UNSPACED)
fill_ranges(&UNSPACED_PUNCTUATION_RANGES, clean_rules.UNSPACED_PUNCTUATION)


cdef inline bint in_ranges(const Ranges* ranges, Py_UCS4 ch) noexcept nogil:
    cdef Py_ssize_t index
    if ch < ranges.low[0]:
        return False  # (most text: the tables start past Latin)
    for index in range(ranges.count):
        if ranges.low[index] <= ch <= ranges.high[index]:
            return True
    return False


cdef inline bint unspaced_join(Py_UCS4 before, Py_UCS4 after) noexcept nogil:
    """Whether a removal between before and after takes the blanks around it (the twin's)."""
    return in_ranges(&UNSPACED_PUNCTUATION_RANGES, before) or (
        in_ranges(&UNSPACED_RANGES, before) and in_ranges(&UNSPACED_RANGES, after)
    )


cdef inline bint is_letter(Py_UCS4 ch) noexcept nogil:
    return (ch >= c'a' and ch <= c'z') or (ch >= c'A' and ch <= c'Z')


cdef inline bint is_digit(Py_UCS4 ch) noexcept nogil:
    return ch >= c'0' and ch <= c'9'


cdef inline bint is_special(Py_UCS4 ch) noexcept nogil:
    return ch >= FIRST and ch <= LAST


cdef inline bint is_private(Py_UCS4 ch) noexcept nogil:
    return ch >= FIRST_PRIVATE and ch <= LAST_PRIVATE


# --- the encoding helpers (beyond `at` and `read_point` of the grammar) ------------------------

cdef inline Py_ssize_t mark_width(const unit_t* data) noexcept nogil:
    """Units a marker character takes (`data` only picks the encoding)."""
    if unit_t is utf8_t:
        return 3
    else:
        return 1


cdef inline Py_UCS4 marker_at(const unit_t* data, Py_ssize_t i, Py_ssize_t b) noexcept nogil:
    """The marker character that starts at i and ends by b, else 0."""
    cdef const unsigned char* s
    cdef Py_UCS4 ch
    if unit_t is utf8_t:
        s = <const unsigned char*>data + i
        if b - i >= 3 and s[0] == MARK_LEAD and s[1] == MARK_SECOND \
                and <unsigned int>(s[2] - MARK_THIRD) <= SPAN:
            return <Py_UCS4>(<unsigned int>FIRST + (s[2] - MARK_THIRD))
        return 0
    else:
        if i >= b:
            return 0
        ch = data[i]
        return ch if is_special(ch) else 0


cdef inline Py_UCS4 private_at(const unit_t* data, Py_ssize_t i, Py_ssize_t b) noexcept nogil:
    """The private-use character (a marker character or not) that starts at i and ends by
    b, else 0."""
    cdef const unsigned char* s
    cdef Py_UCS4 ch
    if unit_t is utf8_t:
        s = <const unsigned char*>data + i
        if b - i < 3 or <unsigned int>(s[0] - PRIVATE_LEAD) > PRIVATE_LEAD_SPAN:
            return 0
        if (s[1] & 0xC0) != 0x80 or (s[2] & 0xC0) != 0x80:
            return 0
        ch = ((s[0] & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F)
        return ch if is_private(ch) else 0
    else:
        if i >= b:
            return 0
        ch = data[i]
        return ch if is_private(ch) else 0


cdef inline Py_ssize_t point_before(const unit_t* data, Py_ssize_t floor, Py_ssize_t i,
                                    Py_UCS4* ch) noexcept nogil:
    """The character that ends at i (floor < i) into ch; returns where it starts (>= floor).
    In UTF-8: back over the continuation bytes (at most three), then read forward."""
    cdef Py_ssize_t j = i - 1
    if unit_t is utf8_t:
        while j > floor and i - j < 4 and (<unsigned char>data[j] & 0xC0) == 0x80:
            j -= 1
        read_point(data, j, i, ch)
        return j
    else:
        ch[0] = data[j]
        return j


cdef inline Py_ssize_t clamp_points(const unit_t* data, Py_ssize_t i, Py_ssize_t end,
                                    Py_ssize_t most, bint* clamped) noexcept nogil:
    """end, or the index of the `most`-th character after i when data[i:end] holds that many
    (clamped then set).  PEP 393 counts in units; UTF-8 counts lead bytes, only when there
    are `most` bytes or more (a character is at least one)."""
    cdef Py_ssize_t points = 0, j
    if unit_t is utf8_t:
        if end - i < most:
            return end
        if cc_count_points(<const unsigned char*>data + i, end - i) < most:
            return end
        j = i
        while points < most:  # point `most` starts at or before end
            j += 1
            while j < end and (<unsigned char>data[j] & 0xC0) == 0x80:
                j += 1
            points += 1
        clamped[0] = True
        return j
    else:
        if end - i < most:
            return end
        clamped[0] = True
        return i + most


# --- tokens ---------------------------------------------------------------------------------

cdef inline void init_tokens(Tokens* tokens) noexcept nogil:
    tokens.items = tokens.inline
    tokens.count = 0
    tokens.capacity = INLINE_TOKENS


cdef inline void free_tokens(Tokens* tokens) noexcept nogil:
    if tokens.items != tokens.inline:
        PyMem_RawFree(tokens.items)


cdef int push_token(Tokens* tokens, Py_ssize_t kind, Py_ssize_t start, Py_ssize_t end,
                    Py_ssize_t family_start, Py_ssize_t family_end, Py_ssize_t body_start,
                    Py_ssize_t body_end) except -1 nogil:
    cdef Py_ssize_t capacity = 2 * tokens.capacity
    cdef Token* grown
    cdef Token* token
    if tokens.count == tokens.capacity:
        if tokens.items == tokens.inline:
            grown = <Token*>PyMem_RawMalloc(capacity * sizeof(Token))
            if grown != NULL:
                memcpy(grown, tokens.inline, tokens.count * sizeof(Token))
        else:
            grown = <Token*>PyMem_RawRealloc(tokens.items, capacity * sizeof(Token))
        if grown == NULL:
            with gil:
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
    # What may start an indented code line before its code (_core.shapes.LINE_ZONE, checked
    # against this at import by clean_c).
    return (
        ch == c' ' or ch == c'\t' or ch == c'>' or ch == c'-' or ch == c'+' or ch == c'*'
        or ch == c'.' or ch == c')' or (ch >= c'0' and ch <= c'9')
    )


cdef inline bint is_line_break(Py_UCS4 ch) noexcept nogil:
    return ch == c'\n' or ch == c'\r'


cdef inline Py_ssize_t find_unit(
    const unit_t* data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch
) noexcept nogil:
    """The first index >= i below end of the unit ch (an ASCII character), else -1."""
    if unit_t is Py_UCS1 or unit_t is utf8_t:
        return cm_find_ucs1(<const Py_UCS1*>data, i, end, ch)
    elif unit_t is Py_UCS2:
        return cm_find_ucs2(data, i, end, ch)
    else:
        return cm_find_ucs4(data, i, end, ch)


cdef inline Py_ssize_t find_special(const unit_t* data, Py_ssize_t i, Py_ssize_t b) noexcept nogil:
    """The first index >= i where a private-use character (what clean removes: a marker
    character or not) starts and ends by b, else -1."""
    if unit_t is Py_UCS1:
        return -1  # no private-use character fits in one byte
    elif unit_t is Py_UCS2:
        return cc_find_range_ucs2(data, i, b, <Py_UCS2>FIRST_PRIVATE, <Py_UCS2>PRIVATE_SPAN)
    elif unit_t is Py_UCS4:
        return cc_find_range_ucs4(data, i, b, FIRST_PRIVATE, PRIVATE_SPAN)
    else:
        while b - i >= 3:
            # A lead byte found in data[i .. b - 3] has its sequence before b; the lead bytes
            # also start other characters (U+FF0C), which are passed over.
            i = cc_find_range_ucs1(<const Py_UCS1*>data, i, b - 2, PRIVATE_LEAD,
                                   PRIVATE_LEAD_SPAN)
            if i < 0:
                return -1
            if private_at(data, i, b):
                return i
            i += 1
        return -1


cdef inline bint has_triple(
    const unit_t* data, Py_ssize_t found, Py_ssize_t last, Py_UCS4 ch
) noexcept nogil:
    """Whether ch appears three times in a row within data[:last] (a fence opener), found
    being its first place there (-1: none)."""
    while 0 <= found < last - 2:
        if at(data, found + 1) == ch and at(data, found + 2) == ch:
            return True
        found = find_unit(data, found + 1, last, ch)
    return False


cdef bint may_be_in_code(const unit_t* data, Py_ssize_t n, Py_ssize_t first) noexcept nogil:
    """_markdown.code.markers_may_be_in_code, first being the first marker's index: one look
    per line holding a marker (its leading zone: 4 spaces or a tab?), then a fence opener
    or a backtick before the end of the last such line, and a backtick after the first.
    Line breaks and backticks are found with the vector search; all of it is linear.  Every
    character looked at is ASCII, so UTF-8 is read byte by byte."""
    cdef Py_ssize_t where = first, line_start, index, spaces, last = 0, found
    cdef bint carriage = find_unit(data, 0, n, c'\r') >= 0
    while where >= 0:
        if carriage:  # rare: the plain walk back
            line_start = where
            while line_start > 0 and not is_line_break(at(data, line_start - 1)):
                line_start -= 1
        else:  # the last "\n" between the previous marker line and here
            line_start = last
            found = find_unit(data, line_start, where, c'\n')
            while found >= 0:
                line_start = found + 1
                found = find_unit(data, line_start, where, c'\n')
        spaces = 0
        index = line_start
        while index < where and is_zone(at(data, index)):
            if at(data, index) == c'\t':
                return True
            spaces = spaces + 1 if at(data, index) == c' ' else 0
            if spaces == 4:
                return True
            index += 1
        if carriage:
            last = where
            while last < n and not is_line_break(at(data, last)):
                last += 1
        else:
            last = find_unit(data, where, n, c'\n')
            if last < 0:
                last = n
        where = find_special(data, last, n) if last < n else -1
    found = find_unit(data, 0, last, c'`')
    if found >= 0 and find_unit(data, first + 1, n, c'`') >= 0:
        return True
    # The first backtick found serves the fence search too (a pass fewer on plain prose).
    return has_triple(data, found, last, c'`') or has_triple(
        data, find_unit(data, 0, last, c'~'), last, c'~'
    )


cdef inline int marker_state_units(const unit_t* data, Py_ssize_t n) noexcept nogil:
    """`_core.shapes.NO_MARKERS`, `MARKERS_OUTSIDE_CODE` or `MARKERS_MAYBE_IN_CODE`."""
    cdef Py_ssize_t first = find_special(data, 0, n)
    if first < 0:
        return NO_MARKERS
    return MARKERS_MAYBE_IN_CODE if may_be_in_code(data, n, first) else MARKERS_OUTSIDE_CODE


# --- the scan -------------------------------------------------------------------------------

cdef inline Py_ssize_t digits_end(
    const unit_t* data, Py_ssize_t i, Py_ssize_t limit
) noexcept nogil:
    while i < limit and is_digit(at(data, i)):
        i += 1
    return i


cdef Py_ssize_t id_at(const unit_t* data, Py_ssize_t i, Py_ssize_t limit) noexcept nogil:
    """End of `turn[0-9]+[A-Za-z]+[0-9]+` at i, or -1."""
    cdef Py_ssize_t j
    if limit - i < 7 or at(data, i) != c't' or at(data, i + 1) != c'u':
        return -1
    if at(data, i + 2) != c'r' or at(data, i + 3) != c'n':
        return -1
    j = digits_end(data, i + 4, limit)
    if j == i + 4:
        return -1
    i = j
    while j < limit and is_letter(at(data, j)):
        j += 1
    if j == i:
        return -1
    i = j
    j = digits_end(data, j, limit)
    return -1 if j == i else j


cdef Py_ssize_t locator_at(const unit_t* data, Py_ssize_t i, Py_ssize_t limit) noexcept nogil:
    """End of `L[0-9]+(?:-L[0-9]+)?` at i, or -1."""
    cdef Py_ssize_t j, k
    if i >= limit or at(data, i) != c'L':
        return -1
    j = digits_end(data, i + 1, limit)
    if j == i + 1:
        return -1
    if j + 2 < limit and at(data, j) == c'-' and at(data, j + 1) == c'L':
        k = digits_end(data, j + 2, limit)
        if k > j + 2:
            return k
    return j


cdef Py_ssize_t id_chain(const unit_t* data, Py_ssize_t i, Py_ssize_t limit) noexcept nogil:
    """The end of `id (DELIM (id|locator))*` at i (ids as `turn0search0`), or i."""
    cdef Py_ssize_t end = id_at(data, i, limit), following, w = mark_width(data)
    if end < 0:
        return i
    while marker_at(data, end, limit) == DELIM:
        following = id_at(data, end + w, limit)
        if following < 0:
            following = locator_at(data, end + w, limit)
        if following < 0:
            break
        end = following
    return end


cdef inline bint same_name(
    const unit_t* data, Py_ssize_t a, Py_ssize_t b, const CharSet* name
) noexcept nogil:
    """Whether data[a:b] is the name (ASCII: checked at import), without making the slice."""
    cdef Py_ssize_t j
    if b - a != name.count:
        return False
    for j in range(name.count):
        if at(data, a + j) != name.chars[j]:
            return False
    return True


cdef inline bint ends_line(const unit_t* data, Py_ssize_t i, Py_ssize_t b) noexcept nogil:
    """Whether the segment data[:b] or a line ends at i."""
    return i >= b or is_line_break(at(data, i))


cdef bint cut_short(const unit_t* data, Py_ssize_t i, Py_ssize_t end, bint entity) noexcept nogil:
    """Whether data[i:end], the body of a marker that the line or the text ended inside, is
    what a body could be so far: ids, locators and delimiters (`turn17sea`), or for an
    entity the start of its JSON array (`["city","Par`: a `]` only at the end)."""
    cdef Py_ssize_t w = mark_width(data), closed
    cdef Py_UCS4 ch
    if entity and i < end and at(data, i) == c'[':
        closed = find_unit(data, i, end, c']')
        return closed < 0 or closed == end - 1
    while i < end:
        if marker_at(data, i, end) == DELIM:
            i += w
            continue
        ch = at(data, i)
        if not (is_letter(ch) or is_digit(ch) or ch == c'_' or ch == c'-'):
            return False
        i += 1
    return True


cdef Py_ssize_t scan_segment(
    const unit_t* data, Py_ssize_t i, Py_ssize_t b, Tokens* tokens, Py_ssize_t most
) except -2 nogil:
    """Tokens of data[i:b] until there are `most`: returns where to resume, or -1 at the end
    of the segment (the scan keeps no other state, so it can stop between any two tokens)."""
    cdef Py_ssize_t family_end, body, limit, body_end, end, rest, kind, w = mark_width(data)
    cdef Py_UCS4 ch
    cdef unsigned int unit
    cdef bint clamped
    while True:
        if tokens.count >= most:
            return i
        i = find_special(data, i, b)
        if i < 0:
            return -1
        ch = marker_at(data, i, b)
        if ch == START:
            family_end = i + w
            while family_end < b and is_word(at(data, family_end)):
                family_end += 1
            if marker_at(data, family_end, b) == STOP:
                push_token(tokens, MARKER, i, family_end + w, i + w, family_end, family_end,
                           family_end)
                i = family_end + w
                continue
            if family_end > i + w and ends_line(data, family_end, b) and not (
                i > 0 and is_word(at(data, i - 1))
            ):
                # A family name cut short by the end of the line or text: all of it goes
                # (glued to a word, "a<START>b", it is a stray START in prose).
                push_token(tokens, BROKEN, i, family_end, i + w, family_end, family_end,
                           family_end)
                i = family_end
                continue
            if marker_at(data, family_end, b) == DELIM:
                body = family_end + w
                # MAX_MARKER characters are at most 4 * MAX_MARKER bytes: clamp_points cuts
                # the body at MAX_MARKER characters after it.
                if unit_t is utf8_t:
                    limit = min(b, i + 4 * MAX_MARKER)
                else:
                    limit = min(b, i + MAX_MARKER)
                body_end = body
                while body_end < limit:
                    unit = at(data, body_end)
                    if unit_t is utf8_t:
                        # A byte that is no line break and no marker's lead byte: on.
                        if unit != MARK_LEAD and unit >= BODY_LOW:
                            body_end += 1
                            continue
                        if unit == c'\n' or unit == c'\r':
                            break
                        ch = marker_at(data, body_end, b)
                        if ch == START or ch == STOP:
                            break
                        body_end += 1
                    else:
                        # One test for the common unit, above the line breaks and below the
                        # marker characters (a third of the kernel's instructions went here).
                        if unit - BODY_LOW < BODY_SPAN:
                            body_end += 1
                            continue
                        if unit == START or unit == STOP or unit == c'\n' or unit == c'\r':
                            break
                        body_end += 1
                clamped = False
                body_end = clamp_points(data, i, body_end, MAX_MARKER, &clamped)
                if not clamped and marker_at(data, body_end, b) == STOP:
                    kind = MARKER
                    if same_name(data, i + w, family_end, &ENTITY_NAME):
                        kind = ENTITY
                    push_token(tokens, kind, i, body_end + w, i + w, family_end, body, body_end)
                    i = body_end + w
                    continue
                # Never closed, or abandoned by a new START: the head and its ids go; all of
                # it when the line or the text ends inside what its body could be.
                end = id_chain(data, body, body_end)
                rest = end
                if not clamped and ends_line(data, body_end, b) and cut_short(
                    data, body, body_end, same_name(data, i + w, family_end, &ENTITY_NAME)
                ):
                    rest = body_end
                push_token(tokens, BROKEN, i, rest, i + w, family_end, body, end)
                i = rest
                continue
        elif ch == DELIM:
            end = id_chain(data, i + w, b)
            if end > i + w:
                push_token(tokens, BARE, i, end, i, i, i + w, end)
                i = end
                continue
        push_token(tokens, STRAY, i, i + w, i, i, i, i)
        i += w


cdef bint titled(const unit_t* data, const Token* token) noexcept nogil:
    """Whether the token's family shows its title (only the front's general path renders
    those: clean() then returns None)."""
    cdef Py_ssize_t index
    for index in range(TITLED_COUNT):
        if same_name(data, token.family_start, token.family_end, &TITLED_NAMES[index]):
            return True
    return False


cdef inline Py_ssize_t skip_json_blanks(
    const unit_t* data, Py_ssize_t i, Py_ssize_t b
) noexcept nogil:
    cdef Py_UCS4 ch
    while i < b:
        ch = at(data, i)
        if not (ch == c' ' or ch == c'\t' or is_line_break(ch)):
            break
        i += 1
    return i


cdef bint plain_name(const unit_t* data, Token* token) noexcept nogil:
    """What clean.entity_name shows for the common entity body, a JSON array of plain strings
    (`["kind","Name","description"]`: no escape, control or marker character), found in
    place: the second string (the first when alone) without its outer white space, as
    str.strip() sees it.  False for any other body, which the `entity` function decides.
    Real answers hold many entities, and a call into Python for each cost more than all
    the rest of the cut (measured on a log of answers)."""
    cdef Py_ssize_t i = token.body_start, last = token.body_end - 1, count = 0, start, after
    cdef Py_ssize_t name_start = 0, name_end = 0
    cdef Py_UCS4 ch
    if last <= i or at(data, i) != c'[' or at(data, last) != c']':
        return False
    i += 1
    while True:
        i = skip_json_blanks(data, i, last)
        if i == last or at(data, i) != c'"':
            return False
        start = i = i + 1
        # In UTF-8 a quote, a backslash or a control byte is that character, and a marker
        # character is found at its lead byte.
        while i < last and at(data, i) != c'"':
            ch = at(data, i)
            if ch == c'\\' or ch < 0x20:
                return False
            if unit_t is utf8_t:
                if private_at(data, i, last):
                    return False
            elif is_private(ch):
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
        if at(data, i) != c',':
            return False
        i += 1
    while name_start < name_end:
        after = read_point(data, name_start, name_end, &ch)
        if not is_space(ch):
            break
        name_start = after
    while name_end > name_start:
        after = point_before(data, name_start, name_end, &ch)
        if not is_space(ch):
            break
        name_end = after
    token.shown_start = name_start
    token.shown_end = name_end
    return True


# --- the cut ----------------------------------------------------------------------------------

cdef struct Output:
    void* data
    int kind  # of PEP 393 (1, 2, 4); 1 for UTF-8
    bint utf8  # UTF-8 bytes (kind 1): characters that are not ASCII take several units
    Py_ssize_t length
    Py_ssize_t trail  # trailing blanks, in units
    Py_UCS4 before  # the character before them ("\n" at the start: a line start)
    # What one spacing decision did to the end (see settle): the shortest the output was,
    # and the index of the "[" that unwrap_link took out (-1: none).
    Py_ssize_t low
    Py_ssize_t moved


cdef inline Py_ssize_t out_before(const Output* out, Py_ssize_t floor, Py_ssize_t i,
                                  Py_UCS4* ch) noexcept nogil:
    """The character of the output that ends at i (floor < i) into ch; where it starts."""
    if out.utf8:
        return point_before(<const utf8_t*>out.data, floor, i, ch)
    ch[0] = read_unit(out.kind, out.data, i - 1)
    return i - 1


cdef inline Py_ssize_t out_after(const Output* out, Py_ssize_t i, Py_ssize_t end,
                                 Py_UCS4* ch) noexcept nogil:
    """The character of the output at i (< end) into ch; where the next one starts."""
    if out.utf8:
        return read_point(<const utf8_t*>out.data, i, end, ch)
    ch[0] = read_unit(out.kind, out.data, i)
    return i + 1


cdef inline void note_end(Output* out, Py_ssize_t floor) noexcept nogil:
    """Recompute trail/before after writing out.data[floor:length]."""
    cdef Py_ssize_t i = out.length, j
    cdef Py_UCS4 ch
    while i > floor:
        j = out_before(out, floor, i, &ch)
        if not in_set(&BLANK_SET, ch):
            out.trail = out.length - i
            out.before = ch
            return
        i = j
    out.trail += out.length - floor


cdef inline void emit_text(
    Output* out, int kind, const void* data, Py_ssize_t a, Py_ssize_t b
) noexcept nogil:
    """data[a:b] (units of `kind`; UTF-8 only into a UTF-8 output) at the end of out."""
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


cdef inline void drop_trail(Output* out) noexcept nogil:
    out.length -= out.trail
    out.trail = 0
    if out.length < out.low:
        out.low = out.length


cdef void drop_last(Output* out) noexcept nogil:
    """Take out the last character (never a blank: the trail goes first), then find the
    blanks now trailing and the character before them, at most LINK_TEXT_MAX back (see the
    twin)."""
    cdef Py_ssize_t i, j, seen = 0
    cdef Py_UCS4 ch
    out.length = out_before(out, 0, out.length, &ch)
    if out.length < out.low:
        out.low = out.length
    i = out.length
    while i > 0 and seen < LINK_TEXT_MAX:
        j = out_before(out, 0, i, &ch)
        if not in_set(&BLANK_SET, ch):
            out.trail = out.length - i
            out.before = ch
            return
        i = j
        seen += 1
    out.trail = out.length - i
    if i == 0:
        out.before = c'\n'
        return
    out_before(out, 0, i, &ch)
    out.before = c'\n' if in_set(&LINE_BREAK_SET, ch) else c' '


cdef bint unwrap_link(Output* out) noexcept nogil:
    """The output ends with `[text](` and the marker was the destination: keep `text`.  The
    `[` is looked for on the same line, at most LINK_TEXT_MAX characters back, brackets
    balanced; a link text of blanks only stays as it is."""
    cdef Py_ssize_t index, opened = -1, depth = 0, link_start, before, seen = 0
    cdef Py_UCS4 ch
    if out.trail or out.before != c'(':
        return False
    # "(" and "]" are ASCII: one unit each in every encoding.
    if out.length < 2 or read_unit(out.kind, out.data, out.length - 2) != c']':
        return False
    index = out.length - 2  # the characters before the "]", back to the line's start
    while index > 0 and seen < LINK_TEXT_MAX:
        before = out_before(out, 0, index, &ch)
        seen += 1
        if in_set(&LINE_BREAK_SET, ch):
            break
        if ch == c']':
            depth += 1
        elif ch == c'[':
            if depth == 0:
                opened = before
                break
            depth -= 1
        index = before
    if opened < 0:
        return False
    link_start = opened + 1
    index = link_start
    while index < out.length - 2:
        before = out_after(out, index, out.length - 2, &ch)
        if not in_set(&BLANK_SET, ch):
            break
        index = before
    if index == out.length - 2:
        return False
    memmove(<char*>out.data + opened * out.kind, <char*>out.data + link_start * out.kind,
            (out.length - 2 - link_start) * out.kind)
    out.moved = opened
    out.length -= 3
    out.trail = 0
    note_end(out, opened)
    return True


cdef inline bint paired(Py_UCS4 opener, Py_UCS4 closer) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(CLOSER_SET.count):
        if CLOSER_SET.chars[k] == closer:
            return OPENER_SET.chars[k] == opener
    return False


cdef inline Py_ssize_t blanks_end(const unit_t* data, Py_ssize_t n, Py_ssize_t at,
                                  Py_UCS4* beyond) noexcept nogil:
    """The end of the blanks from `at` (at itself when none), the character after them in
    `beyond` (a line feed at the end of the text)."""
    cdef Py_ssize_t after
    cdef Py_UCS4 ch
    while at < n:
        after = read_point(data, at, n, &ch)
        if not in_set(&BLANK_SET, ch):
            beyond[0] = ch
            return at
        at = after
    beyond[0] = c'\n'
    return at


cdef inline bint no_break(const unit_t* data, Py_ssize_t n, Py_ssize_t start,
                          Py_ssize_t end) noexcept nogil:
    """Whether data[start:end] (end <= n) holds a no-break space (the twin's `_no_break`)."""
    cdef Py_UCS4 ch
    while start < end:
        start = read_point(data, start, n, &ch)
        if in_set(&NO_BREAK_SET, ch):
            return True
    return False


cdef inline Py_ssize_t line_end(const unit_t* data, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    """Past the line break at data[i] (i < n; a CR LF pair is one)."""
    if at(data, i) == c'\r' and i + 1 < n and at(data, i + 1) == c'\n':
        return i + 2
    return i + 1


cdef inline bint closes(const unit_t* data, Py_ssize_t n, Py_ssize_t at,
                        Py_UCS4 first) noexcept nogil:
    """Whether `first`, the character at data[at] right after a run of removals, closes:
    closing punctuation, or a run of a quote that a blank, a line end, closing punctuation, a
    dash, another quote, a character of a script written without blanks or the end of the
    text follows (the twin's `_closes`)."""
    cdef Py_UCS4 ch = 0
    if in_set(&CLOSING_SET, first):
        return True
    if not in_set(&QUOTE_SET, first):
        return False
    while at < n:
        at = read_point(data, at, n, &ch)
        if ch != first:
            return (in_set(&BLANK_SET, ch) or in_set(&LINE_BREAK_SET, ch)
                    or in_set(&CLOSING_SET, ch) or in_set(&DASH_SET, ch)
                    or in_set(&QUOTE_SET, ch) or in_ranges(&UNSPACED_RANGES, ch))
    return True


cdef Py_ssize_t emptied_run(const unit_t* data, Py_ssize_t n, Py_ssize_t end, Output* out,
                            Py_UCS4 mark) noexcept nogil:
    """The length of the run of `mark` (an emphasis mark) at data[end] that closes the run of
    the same mark and length the output ends with, before its trailing blanks; 0 for none
    (the twin's `_emptied_run`).  Every read is below n, or inside the output's length."""
    cdef Py_ssize_t after = end, count, i, k
    cdef Py_UCS4 ch = 0
    while after < n and at(data, after) == mark:
        after += 1
    count = after - end
    if after < n:
        read_point(data, after, n, &ch)
        if not (in_set(&BLANK_SET, ch) or in_set(&LINE_BREAK_SET, ch)
                or in_set(&CLOSING_SET, ch)):
            return 0
    i = out.length - out.trail
    for k in range(count):
        if i <= 0:
            return 0
        i = out_before(out, 0, i, &ch)
        if ch != mark:
            return 0
    if i > 0:
        out_before(out, 0, i, &ch)
        if not (in_set(&BLANK_SET, ch) or in_set(&LINE_BREAK_SET, ch)
                or in_set(&OPENER_SET, ch)):
            return 0
    return count


cdef Py_ssize_t space(const unit_t* data, Py_ssize_t n, Py_ssize_t end, Output* out) noexcept nogil:
    """The spacing rule where a run of removals ended at `end`; returns where the text
    resumes (see the twin)."""
    cdef Py_UCS4 following, ch, last, beyond
    cdef Py_ssize_t after, next_end, resume, start, count
    cdef bint at_line_start
    out.low = out.length
    out.moved = -1
    # The blanks after the run, and the character after them (read once: the blank case
    # below needs them too, when the loop leaves `end` where it was).
    start = end
    resume = blanks_end(data, n, end, &beyond)
    if end < resume < n and in_set(&CLOSING_SET, beyond) and not no_break(data, n, end, resume):
        end = resume  # the blanks before closing punctuation go (the twin's)
    while True:
        following = c'\n'
        next_end = end
        if end < n:
            next_end = read_point(data, end, n, &following)
        if following == c')' and unwrap_link(out):
            return end + 1
        last = out.before
        if in_set(&SEPARATOR_SET, following) and (
            in_set(&OPENER_SET, last) or in_set(&SEPARATOR_SET, last)
            or in_set(&LINE_BREAK_SET, last)
        ):
            end = next_end  # a separator with nothing before it
            if in_set(&OPENER_SET, last):
                while end < n:
                    after = read_point(data, end, n, &ch)
                    if not in_set(&BLANK_SET, ch):
                        break
                    end = after
            continue
        if in_set(&CLOSER_SET, following) and paired(last, following) and not (
            following == c']' and next_end < n and at(data, next_end) == c'('
        ):
            drop_trail(out)  # a bracket left empty (a link's "[]" stays)
            drop_last(out)
            end = next_end
            continue
        if in_set(&EMPHASIS_SET, following) and last == following:
            count = emptied_run(data, n, end, out, following)
            if count:
                drop_trail(out)  # an emphasis left empty (the twin's)
                for _ in range(count):
                    drop_last(out)
                end += count  # (the marks are ASCII: one unit each, in UTF-8 too)
                continue
        if in_set(&SEPARATOR_SET, last) and (
            closes(data, n, end, following) or in_set(&LINE_BREAK_SET, following)
        ):
            drop_trail(out)  # a separator with nothing after it
            drop_last(out)
            continue
        break
    at_line_start = in_set(&LINE_BREAK_SET, out.before)
    if in_set(&LINE_BREAK_SET, following):
        drop_trail(out)
        if at_line_start and end < n:
            end = line_end(data, n, end)  # the run emptied its line: the line goes (the twin's)
    elif in_set(&BLANK_SET, following):
        if end != start:
            resume = blanks_end(data, n, end, &beyond)
        if at_line_start:
            end = resume
            if resume < n and in_set(&LINE_BREAK_SET, beyond):
                drop_trail(out)
                end = line_end(data, n, resume)  # (as above)
        elif unspaced_join(out.before, beyond):
            drop_trail(out)
            end = resume
        elif out.trail:
            drop_trail(out)
    elif not at_line_start and closes(data, n, end, following):
        drop_trail(out)
    elif out.trail and not at_line_start and unspaced_join(out.before, following):
        drop_trail(out)
    return end


cdef struct Places:
    # Where each token landed (see the twin's Places): at[k] for token k, and the stack of
    # groups of tokens sharing a place (the first token of each), places increasing.
    Py_ssize_t* at
    Py_ssize_t* groups
    Py_ssize_t count  # groups on the stack
    # resume[k]: where the text resumes after token k (its end, or past what the spacing
    # rule took after the run it ends), for the cuts of a mapped clean
    Py_ssize_t* resume


cdef inline void put_place(Places* places, Py_ssize_t index, Py_ssize_t place) noexcept nogil:
    places.at[index] = place
    if places.count == 0 or places.at[places.groups[places.count - 1]] != place:
        places.groups[places.count] = index
        places.count += 1


cdef void settle(Places* places, const Output* out) noexcept nogil:
    """After a spacing decision: places past out.low come back to it, then those after the
    "[" that unwrap_link took out (out.moved) move back by one (see the twin)."""
    cdef Py_ssize_t top = places.count, k, group, place
    cdef Py_ssize_t floor = out.low if out.moved < 0 else min(out.low, out.moved)
    while top > 0 and places.at[places.groups[top - 1]] > floor:
        top -= 1
    # groups[top:count] move, in order; rewritten in place (a merge only shrinks the stack)
    k = top
    while k < places.count:
        group = places.groups[k]
        place = min(places.at[group], out.low)
        if out.moved >= 0 and place > out.moved:
            place = min(place - 1, out.length)
        places.at[group] = place
        if top == 0 or places.at[places.groups[top - 1]] != place:
            places.groups[top] = group
            top += 1
        k += 1
    places.count = top


cdef void fill_places(Places* places, Py_ssize_t tokens) noexcept nogil:
    """Every token's place from its group's."""
    cdef Py_ssize_t k, index, last
    for k in range(places.count):
        last = places.groups[k + 1] if k + 1 < places.count else tokens
        for index in range(places.groups[k] + 1, last):
            places.at[index] = places.at[places.groups[k]]


cdef struct Join:
    Output out
    Py_ssize_t pos  # where the text resumes
    Py_ssize_t run_first  # the first token of the current run of adjacent removals


cdef inline void start_join(Join* state, void* data, int kind, bint utf8) noexcept nogil:
    """state for a cut into data (room for the text's length, in units of `kind`)."""
    state.out.data = data
    state.out.kind = kind
    state.out.utf8 = utf8
    state.out.length = 0
    state.out.trail = 0
    state.out.before = c'\n'
    state.out.low = 0
    state.out.moved = -1
    state.pos = 0
    state.run_first = 0


cdef void join_one(Join* state, const unit_t* data, Py_ssize_t n, const Token* token,
                   bint run_goes_on, int shown_kind, const void* shown,
                   Py_ssize_t shown_length, Places* places,
                   Py_ssize_t index) noexcept nogil:
    """Cut one token (the twin's loop body in `join`), shown[:shown_length] its replacement;
    run_goes_on: the next token is a removal that starts where this one ends.  places
    (NULL: not wanted) gets each token's place in the output (see Places)."""
    cdef Py_ssize_t run_index
    if token.start > state.pos:
        emit_text(&state.out, sizeof(unit_t), data, state.pos, token.start)
        state.run_first = index
    state.pos = token.end
    if shown_length:
        if places != NULL:
            put_place(places, index, state.out.length)
        emit_text(&state.out, shown_kind, shown, 0, shown_length)
        state.run_first = index + 1
        return
    if run_goes_on:
        return  # the spacing is decided at the run's end
    state.pos = space(data, n, token.end, &state.out)
    if places != NULL:
        places.resume[index] = state.pos
        settle(places, &state.out)
        for run_index in range(state.run_first, index + 1):
            put_place(places, run_index, state.out.length)
    state.run_first = index + 1


cdef int cut(const unit_t* data, Py_ssize_t n, const Py_ssize_t* code_ranges, Py_ssize_t code_count,
             bint names_in_place, Tokens* tokens, Join* state) except -1 nogil:
    """clean's cut of data[:n] outside the code ranges (code range k:
    data[code_ranges[2k]:code_ranges[2k + 1]], in order), into state (started by the caller on a
    buffer of n units at least):

    CUT_NONE: no token (the text stays as it is); CUT_DONE: the clean text is state.out;
    CUT_TITLED: a marker of TITLED_FAMILIES (only the front renders those); CUT_ENTITY: an
    entity marker whose name is not found in place (names_in_place False, or a body that is
    not a plain_name), which the caller's `entity` function shows.  The tokens are checked in
    order, a window at a time, and the first titled or entity one decides."""
    cdef Py_ssize_t segment = 0, where = 0, resume, k, seen = 0, code_start, code_end
    cdef Token carry
    cdef Token* token
    cdef bint carrying = False, done = False
    while True:
        tokens.count = 0
        if carrying:
            tokens.items[0] = carry
            tokens.count = 1
        # Fill the window, segment by segment (code ranges are code: never scanned).
        while not done and tokens.count < WINDOW:
            if segment < code_count:
                code_start = code_ranges[2 * segment]
                code_end = code_ranges[2 * segment + 1]
            else:
                code_start = code_end = n
            resume = scan_segment(data, where, code_start, tokens, WINDOW)
            if resume >= 0:
                where = resume
            elif segment < code_count:
                segment += 1
                where = code_end
            else:
                done = True
        for k in range(1 if carrying else 0, tokens.count):
            token = &tokens.items[k]
            if titled(data, token):
                return CUT_TITLED
            if token.kind == ENTITY and not (names_in_place and plain_name(data, token)):
                return CUT_ENTITY
        if tokens.count == 0:
            break
        seen += tokens.count
        for k in range(tokens.count - (0 if done else 1)):
            token = &tokens.items[k]
            join_one(state, data, n, token,
                     k + 1 < tokens.count
                     and tokens.items[k + 1].start == token.end
                     and tokens.items[k + 1].shown_end == tokens.items[k + 1].shown_start,
                     sizeof(unit_t), data + token.shown_start,
                     token.shown_end - token.shown_start, NULL, k)
        if done:
            break
        carry = tokens.items[tokens.count - 1]
        carrying = True
    if not seen:
        return CUT_NONE
    emit_text(&state.out, sizeof(unit_t), data, state.pos, n)
    return CUT_DONE
