# The one C grammar of the markers, included by both kernels: `scan_c` (CPython's PEP 393
# storage, one code unit per code point) and `arrow_c` (Arrow's UTF-8 bytes).  Every function
# here is fused over `unit_t`, so the match rules, the locator rule and the proof of linear time
# (`scan_units`) are written once.  The twin of all of it is `scan_py.scan`.
#
# What differs between the encodings is confined to four helpers: `at` (a unit as a number),
# `read_point` (one code point and the index after it), `find_mark` / `is_mark` (a marker
# character is one unit in PEP 393, its 1-4 byte sequence in UTF-8).  In valid UTF-8 the byte
# sequence of a character occurs exactly where the character does (a lead byte is never a
# continuation byte), so a byte search finds what the `str` search finds.
#
# Bounds: every read is at an index proven below its end by the code next to it; malformed
# UTF-8 can make a result unspecified (the Arrow path rejects it before scanning), never a
# read out of bounds: `read_point` reads nothing at or past its `end`.

from cpython.mem cimport PyMem_RawFree, PyMem_RawMalloc, PyMem_RawRealloc
from libc.stdint cimport uint8_t, uint32_t
from libc.string cimport memchr, memcpy

cdef extern from "Python.h":
    ctypedef unsigned char Py_UCS1
    ctypedef unsigned short Py_UCS2
    Py_UCS4 read_unit "PyUnicode_READ"(int kind, const void* data, Py_ssize_t index) nogil
    bint is_space "Py_UNICODE_ISSPACE"(Py_UCS4 ch) nogil
    bint is_decimal "Py_UNICODE_ISDECIMAL"(Py_UCS4 ch) nogil
    const Py_ssize_t PY_SSIZE_T_MAX

cdef extern from "simd.h" nogil:
    const char* cm_init()
    Py_ssize_t cm_find_ucs1(const Py_UCS1* data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch)
    Py_ssize_t cm_find_ucs2(const Py_UCS2* data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch)
    Py_ssize_t cm_find_ucs4(const Py_UCS4* data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch)
    Py_ssize_t cm_id_end_ucs2(const Py_UCS2* data, Py_ssize_t i, Py_ssize_t end)

# UTF-8 bytes; `char`, so that it is a type of its own next to Py_UCS1 (unsigned char).
ctypedef char utf8_t

ctypedef fused unit_t:
    Py_UCS1
    Py_UCS2
    Py_UCS4
    utf8_t

cdef enum:
    # Match.n_ids when the body has not been judged yet (custom rules judge it in Python).
    UNJUDGED = -2
    # Match.n_ids of a consumed match that is not a citation.
    INVALID = -1
    # A typical answer's matches fit in Matches.inline, so scanning it allocates nothing.
    INLINE_MATCHES = 16
    # A part of a body (an id, a locator) mostly ends within this many units.
    NEAR_UNITS = 16
    # Parts whose place the judge keeps in the match: a citation rarely cites more sources.
    ID_SLOTS = 4
    IS_SPACE = 1  # str.isspace()
    IS_ID = 2  # [A-Za-z0-9_-]

cdef struct Mark:
    Py_UCS4 point  # the character
    uint8_t utf8[4]  # and its UTF-8 bytes
    Py_ssize_t utf8_size

cdef struct Family:
    const void* chars  # storage kept alive by the owner (a str, or the UTF-8 bytes of one)
    int kind  # 1, 2 or 4 bytes a unit (UTF-8 families: 1)
    Py_ssize_t length  # in units

cdef struct Rules:
    Mark start
    Mark delim
    Mark stop
    Py_ssize_t max_length  # of a whole marker, START to STOP, in units; PY_SSIZE_T_MAX: none
    bint any_family
    bint builtin_rules  # ids and locators checked here (the guide's patterns)
    Family* families
    Py_ssize_t n_families

cdef struct Match:
    Py_ssize_t start  # index of START
    Py_ssize_t end  # index after STOP
    Py_ssize_t body  # index after the family's DELIM
    Py_ssize_t family  # index into the families, or -1: the name is text[start+1:body-1]
    Py_ssize_t n_ids  # ids before the locator; INVALID or UNJUDGED
    Py_ssize_t locator  # start of the locator part, or -1
    Py_ssize_t locator_end
    # [start, end) of the first ID_SLOTS stripped parts, as judge_body found them, so the
    # ids are built without splitting the body again (judge_with_patterns leaves them).
    Py_ssize_t ids[2 * ID_SLOTS]

cdef struct Matches:
    Match* items  # `inline` until it outgrows it, then the heap
    Py_ssize_t count
    Py_ssize_t capacity
    Match inline[INLINE_MATCHES]

# The classes of the ASCII characters, for the per-character loop of judge_body.
cdef unsigned char ASCII_CLASS[128]


cdef inline bint is_word(Py_UCS4 ch) noexcept nogil:
    return (
        (ch >= c'a' and ch <= c'z') or (ch >= c'A' and ch <= c'Z')
        or (ch >= c'0' and ch <= c'9') or ch == c'_'
    )


cdef void init_ascii_class() noexcept:
    cdef int ch
    for ch in range(128):
        ASCII_CLASS[ch] = (IS_SPACE if is_space(ch) else 0) | (
            IS_ID if is_word(ch) or ch == c'-' else 0
        )


cdef void set_mark(Mark* mark, uint32_t point) noexcept nogil:
    """mark for `point` (<= 0x10FFFF), with its UTF-8 bytes."""
    mark.point = point
    if point < 0x80:
        mark.utf8[0] = point
        mark.utf8_size = 1
    elif point < 0x800:
        mark.utf8[0] = 0xC0 | (point >> 6)
        mark.utf8[1] = 0x80 | (point & 0x3F)
        mark.utf8_size = 2
    elif point < 0x10000:
        mark.utf8[0] = 0xE0 | (point >> 12)
        mark.utf8[1] = 0x80 | ((point >> 6) & 0x3F)
        mark.utf8[2] = 0x80 | (point & 0x3F)
        mark.utf8_size = 3
    else:
        mark.utf8[0] = 0xF0 | (point >> 18)
        mark.utf8[1] = 0x80 | ((point >> 12) & 0x3F)
        mark.utf8[2] = 0x80 | ((point >> 6) & 0x3F)
        mark.utf8[3] = 0x80 | (point & 0x3F)
        mark.utf8_size = 4


# --- the four encoding helpers ------------------------------------------------------------

cdef inline uint32_t at(const unit_t* data, Py_ssize_t i) noexcept nogil:
    """data[i] as a number (a UTF-8 byte is unsigned)."""
    if unit_t is utf8_t:
        return <uint8_t>data[i]
    else:
        return data[i]


cdef inline Py_ssize_t width(const unit_t* data, const Mark* mark) noexcept nogil:
    """Units the marker character takes (`data` only picks the encoding)."""
    if unit_t is utf8_t:
        return mark.utf8_size
    else:
        return 1


cdef inline Py_ssize_t read_point(const unit_t* data, Py_ssize_t i, Py_ssize_t end,
                                  Py_UCS4* ch) noexcept nogil:
    """The code point at data[i] (i < end) into ch; returns the index after it.  A malformed
    UTF-8 sequence reads as U+FFFD, one byte long; nothing at or past `end` is read."""
    cdef const uint8_t* s
    cdef uint32_t lead, point
    if unit_t is not utf8_t:
        ch[0] = data[i]
        return i + 1
    else:
        s = <const uint8_t*>data + i
        lead = s[0]
        if lead < 0x80:
            ch[0] = lead
            return i + 1
        if 0xC2 <= lead <= 0xDF and end - i >= 2 and (s[1] & 0xC0) == 0x80:
            ch[0] = ((lead & 0x1F) << 6) | (s[1] & 0x3F)
            return i + 2
        if (0xE0 <= lead <= 0xEF and end - i >= 3
                and (s[1] & 0xC0) == 0x80 and (s[2] & 0xC0) == 0x80):
            ch[0] = ((lead & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F)
            return i + 3
        if (0xF0 <= lead <= 0xF4 and end - i >= 4 and (s[1] & 0xC0) == 0x80
                and (s[2] & 0xC0) == 0x80 and (s[3] & 0xC0) == 0x80):
            point = (((lead & 0x07) << 18) | ((s[1] & 0x3F) << 12)
                     | ((s[2] & 0x3F) << 6) | (s[3] & 0x3F))
            ch[0] = point if point <= 0x10FFFF else 0xFFFD
            return i + 4
        ch[0] = 0xFFFD
        return i + 1


cdef inline bint same_bytes(const char* data, const Mark* mark) noexcept nogil:
    """data[:size] are the mark's UTF-8 bytes (they are readable); no call for 1-4 bytes."""
    cdef Py_ssize_t k
    for k in range(mark.utf8_size):
        if <uint8_t>data[k] != mark.utf8[k]:
            return False
    return True


cdef inline bint is_mark(const unit_t* data, Py_ssize_t i, Py_ssize_t end,
                         const Mark* mark) noexcept nogil:
    """Does the marker character start at i and end by `end`?"""
    if unit_t is utf8_t:
        return end - i >= mark.utf8_size and same_bytes(data + i, mark)
    else:
        return i < end and data[i] == mark.point


cdef inline Py_ssize_t find_mark(const unit_t* data, Py_ssize_t i, Py_ssize_t end,
                                 const Mark* mark) noexcept nogil:
    """The first j >= i where the marker character starts and ends by `end`, else -1."""
    cdef const char* hit
    cdef Py_ssize_t size
    if unit_t is Py_UCS1:
        return cm_find_ucs1(data, i, end, mark.point)
    elif unit_t is Py_UCS2:
        return cm_find_ucs2(data, i, end, mark.point)
    elif unit_t is Py_UCS4:
        return cm_find_ucs4(data, i, end, mark.point)
    else:
        size = mark.utf8_size
        while end - i >= size:
            # memchr looks at data[i .. end - size]: a lead found there fits before end.
            hit = <const char*>memchr(data + i, mark.utf8[0], end - i - size + 1)
            if hit == NULL:
                return -1
            i = hit - data
            if same_bytes(data + i, mark):
                return i
            i += 1
        return -1


cdef inline Py_ssize_t find_mark_near(const unit_t* data, Py_ssize_t i, Py_ssize_t end,
                                      const Mark* mark) noexcept nogil:
    """find_mark for a search that mostly ends within a few units (the end of a part): the
    first NEAR_UNITS units looked at one by one, without a call and a vector set-up."""
    cdef Py_ssize_t near
    if unit_t is utf8_t:
        return find_mark(data, i, end, mark)
    else:
        near = i + NEAR_UNITS if end - i > NEAR_UNITS else end
        while i < near:
            if data[i] == mark.point:
                return i
            i += 1
        return find_mark(data, i, end, mark) if i < end else -1


# --- the grammar --------------------------------------------------------------------------

cdef inline Py_ssize_t head_end(const unit_t* data, Py_ssize_t n, Py_ssize_t i,
                                const Family* family, const Mark* delim) noexcept nogil:
    """Index after `family` DELIM when the text continues with them at i, else -1."""
    cdef Py_ssize_t j, length = family.length
    if length > n - i:
        return -1
    for j in range(length):  # i + j < n
        if at(data, i + j) != read_unit(family.kind, family.chars, j):
            return -1
    if not is_mark(data, i + length, n, delim):
        return -1
    return i + length + width(data, delim)


cdef inline Py_ssize_t any_head_end(const unit_t* data, Py_ssize_t n, Py_ssize_t i,
                                    const Mark* delim) noexcept nogil:
    """Index after a [A-Za-z0-9_]+ name and DELIM at i, else -1."""
    cdef Py_ssize_t j = i
    while j < n and is_word(at(data, j)):
        j += 1
    if j == i or not is_mark(data, j, n, delim):
        return -1
    return j + width(data, delim)


cdef inline Py_ssize_t skip_decimals(const unit_t* data, Py_ssize_t a,
                                     Py_ssize_t b) noexcept nogil:
    """Index after the run of `str.isdecimal()` code points starting at a (a <= b)."""
    cdef Py_ssize_t after
    cdef Py_UCS4 ch
    while a < b:
        after = read_point(data, a, b, &ch)
        if not ((ch >= c'0' and ch <= c'9') or (ch >= 0x80 and is_decimal(ch))):
            break
        a = after
    return a


cdef inline bint is_locator(const unit_t* data, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """L\\d+(?:-L\\d+)? over data[a:b] (a < b), with \\d as str.isdecimal."""
    cdef Py_ssize_t digits_end
    if at(data, a) != c'L':
        return False
    digits_end = skip_decimals(data, a + 1, b)
    if digits_end == a + 1:
        return False
    if digits_end == b:
        return True
    # then '-', 'L' and at least one digit up to b: three units at least, all below b
    if b - digits_end < 3 or at(data, digits_end) != c'-' or at(data, digits_end + 1) != c'L':
        return False
    return skip_decimals(data, digits_end + 2, b) == b


cdef inline Py_ssize_t next_part(const unit_t* data, Py_ssize_t i, Py_ssize_t stop,
                                 const Mark* delim, Py_ssize_t* a, Py_ssize_t* b) noexcept nogil:
    """The part starting at i, stripped (`str.strip()`) to data[a:b] (a == b: empty); returns
    the index where it ends (a DELIM, or stop).  i <= stop."""
    cdef Py_ssize_t part_end = find_mark_near(data, i, stop, delim), after, last
    cdef Py_UCS4 ch
    if part_end < 0:
        part_end = stop
    a[0] = part_end
    b[0] = part_end
    while i < part_end:  # the leading spaces; read_point reads below part_end only
        after = read_point(data, i, part_end, &ch)
        if not is_space(ch):
            a[0] = i
            b[0] = after
            break
        i = after
    if i >= part_end:
        return part_end  # empty (or all spaces)
    # The trailing spaces, from the end while they are ASCII (a unit below 128 is a whole
    # character in every encoding: never part of a UTF-8 sequence), so an id costs no pass
    # of its own.  last > a[0] (data[a[0]] is a character that is not a space).
    last = part_end
    while last > b[0] and at(data, last - 1) < 128 and is_space(at(data, last - 1)):
        last -= 1
    if last > b[0] and at(data, last - 1) < 128:
        b[0] = last  # data[last - 1] is not a space: the part ends there
        return part_end
    i = b[0]
    while i < last:  # a character that is not ASCII at the end: forward, as above
        after = read_point(data, i, last, &ch)
        if not is_space(ch):
            b[0] = after
        i = after
    return part_end


cdef void judge_body(const unit_t* data, Py_ssize_t stop, const Mark* delim,
                     Match* match) noexcept nogil:
    """Is data[match.body:stop] a citation body under the guide's rules?  Sets n_ids
    (INVALID if not) and the locator, in one pass over the body."""
    cdef Py_ssize_t i = match.body, a, end, after, first_bad, n_parts = 0, last_a = 0
    cdef Py_ssize_t last_b = 0
    cdef bint last_is_id = False
    cdef Py_UCS4 ch
    cdef unsigned char char_class
    match.n_ids = INVALID
    match.locator = -1
    match.locator_end = -1
    while True:
        # One part: data[i:] up to the next DELIM (or stop), stripped to data[a:end].  The
        # leading spaces first, so the loop over the rest has one test less a character.
        while i < stop and not is_mark(data, i, stop, delim):
            ch = at(data, i)
            if ch < 128:
                if not (ASCII_CLASS[ch] & IS_SPACE):
                    break
                i += 1
            else:
                after = read_point(data, i, stop, &ch)
                if not is_space(ch):
                    break
                i = after
        a = i
        # The id characters first, the common case.  Below 128 a unit is a whole character
        # in every encoding, and it is the DELIM only when it equals the DELIM's code point
        # (a UTF-8 DELIM above 127 starts with a lead byte), so a DELIM above 127 needs no
        # test of its own: 2-byte text (where the guide's markers put every answer) then
        # takes eight units a step.
        if unit_t is Py_UCS2 and delim.point >= 128:
            i = cm_id_end_ucs2(data, i, stop)
        else:
            while i < stop:
                ch = at(data, i)
                if ch >= 128 or ch == delim.point or not (ASCII_CLASS[ch] & IS_ID):
                    break
                i += 1
        end = i
        first_bad = stop  # the first character at or after a that an id may not hold
        while i < stop and not is_mark(data, i, stop, delim):
            ch = at(data, i)
            if ch < 128:
                char_class = ASCII_CLASS[ch]
                after = i + 1
            else:
                after = read_point(data, i, stop, &ch)
                char_class = IS_SPACE if is_space(ch) else 0
            if not (char_class & IS_SPACE):
                end = after
            if not (char_class & IS_ID) and first_bad == stop:
                first_bad = i
            i = after
        if a < end:
            # Only the last part may be a locator; every part before it must be an id.
            if n_parts and not last_is_id:
                return
            if n_parts < ID_SLOTS:
                match.ids[2 * n_parts] = a
                match.ids[2 * n_parts + 1] = end
            n_parts += 1
            last_a = a
            last_b = end
            last_is_id = first_bad >= end
        if i >= stop:
            break
        i += width(data, delim)  # past the DELIM, which ends by stop
    if n_parts == 0:
        return
    if is_locator(data, last_a, last_b):
        if n_parts > 1:
            match.n_ids = n_parts - 1
            match.locator = last_a
            match.locator_end = last_b
    elif last_is_id:
        match.n_ids = n_parts


# --- the matches --------------------------------------------------------------------------

cdef inline void init_matches(Matches* matches) noexcept nogil:
    matches.items = matches.inline
    matches.count = 0
    matches.capacity = INLINE_MATCHES


cdef inline void free_matches(Matches* matches) noexcept nogil:
    if matches.items != matches.inline:
        PyMem_RawFree(matches.items)


cdef int push(Matches* matches, const Match* match) noexcept nogil:
    """Append a copy of match; -1 when out of memory."""
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


# --- the scan -----------------------------------------------------------------------------

cdef int scan_units(const unit_t* data, Py_ssize_t n, const Rules* rules, bint keep_invalid,
                    Matches* out) noexcept nogil:
    """Append every match of data[:n] to out, in order (the invalid ones only with
    keep_invalid); -1 when out of memory.

    Linear: (stop_from, stop_at) caches "the first STOP at or after stop_from is stop_at"
    (-1: none), so a START that is never closed costs its family test, not a search to
    the end of the text as in the guide's regex.  A query left of stop_from only happens
    when a family holds a START; it searches at most that family's length.
    """
    cdef Py_ssize_t pos, resume, body, stop, f, stop_from = n, stop_at = -1
    cdef Match match
    pos = find_mark(data, 0, n, &rules.start)
    while pos >= 0:  # the START ends by n
        resume = pos + width(data, &rules.start)
        for f in range(-1 if rules.any_family else 0, 0 if rules.any_family else rules.n_families):
            if f < 0:
                body = any_head_end(data, n, resume, &rules.delim)
            else:
                body = head_end(data, n, resume, &rules.families[f], &rules.delim)
            if body < 0:
                continue
            # stop = the first STOP at or after body (body <= n)
            if body >= stop_from:
                if stop_at >= 0 and body > stop_at:
                    stop_at = find_mark(data, body, n, &rules.stop)
                    stop_from = body
            else:
                stop = find_mark(data, body, stop_from, &rules.stop)
                if stop >= 0:
                    stop_at = stop
                stop_from = body
            stop = stop_at
            if stop < 0 or stop - pos >= rules.max_length:
                continue  # fail open: the START stays text
            # A match is consumed whether or not its body is a citation.
            match.start = pos
            match.end = stop + width(data, &rules.stop)
            match.body = body
            match.family = f
            if rules.builtin_rules:
                judge_body(data, stop, &rules.delim, &match)
            else:
                match.n_ids = UNJUDGED
            if (match.n_ids != INVALID or keep_invalid) and push(out, &match) < 0:
                return -1
            resume = match.end
            break
        pos = find_mark(data, resume, n, &rules.start)
    return 0


init_ascii_class()
# The vector path for this CPU, chosen once (CITEMARK_SIMD caps it).
cdef const char* SIMD_PATH = cm_init()
