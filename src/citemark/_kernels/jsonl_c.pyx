# cython: boundscheck=False, wraparound=False, cdivision=True
# cython: freethreading_compatible=True, auto_pickle=False, autotestdict=False
"""The compiled JSONL kernel: validate a line and find the value at a dotted path, on bytes.

One walk over the line's bytes, no Python object built for what is not at the path: the
line is checked against RFC 8259 as `json.loads` reads it (NaN, Infinity and -Infinity
accepted, lone surrogate escapes accepted, strict UTF-8), with a heap stack instead of
recursion, so any depth is either read or refused, never a RecursionError.  The value at the
path follows `json.loads` on duplicate keys: the last one wins, at every level.

The chunk functions (`text_lines`, `strip_lines`, `map_lines`, `clean_lines`, `extract_lines`)
are one pass over the lines without the GIL (`_pass`: -j N runs in threads) doing in C what
the job says: strip and extract with the grammar of `grammar_c.pxi`, on a token's raw bytes
or its text decoded into UTF-8 (a log of json.dumps's default, non-ASCII escaped, takes the
same path), clean with the core of `clean_c` (`clean_core.pxi`).  Only a token that UTF-8
cannot carry (a lone surrogate) or that Python must read goes to `many`, once, after it.

Twin: `jsonl_py` (same functions, same results); `_cli.jsonl` turns codes into messages.

| fast path (CPU time of the batch engine's chunk, `benches/bench_kernels.py`) | earns   |
|-----------------------------------------------------------------------------|---------|
| the whole walk in C, not the twin's `json.loads` and Python text per row    | 26-31x  |
| simd.h's searches (line breaks, marker lead bytes), not CITEMARK_SIMD=portable | 1.1x |
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memchr, memcmp, memcpy, memset
from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from cpython.object cimport PyObject

import json
import sys

from .._core import grammar as _grammar  # a private name: the module's face is its stub's

# Codes shared with `jsonl_py` and `_cli.jsonl` (one home: `_cli.jsonl` imports them from here
# and from the twin, and the tests check they agree).
DEF FOUND = 0  # a string at the path: (FOUND, start, end) of its quoted token
DEF NULL_TEXT = 1  # null at the path: a row without text
DEF NOT_STRING = 2  # (NOT_STRING, kind, 0)
DEF MISSING = 3  # (MISSING, keys matched, kind of what stood there)
DEF NOT_JSON = 4  # (NOT_JSON, 0, 0): not JSON, or not UTF-8 (the message is made elsewhere)

DEF K_OBJECT = 0
DEF K_LIST = 1
DEF K_STRING = 2
DEF K_NULL = 3
DEF K_INT = 4
DEF K_FLOAT = 5
DEF K_BOOL = 6

DEF VALUE = 0
DEF AFTER = 1
DEF MEMBER = 2
DEF IN_LIST = -2  # `_walk`'s mark of an open list
# The text scanned for citations at a time (`_scan`): a long text's matches are never all held
# at once.
DEF SCAN_WINDOW = 65536

CODES = (FOUND, NULL_TEXT, NOT_STRING, MISSING, NOT_JSON)
KINDS = (K_OBJECT, K_LIST, K_STRING, K_NULL, K_INT, K_FLOAT, K_BOOL)

_scanstring = json.decoder.scanstring

cdef unsigned char HEX[256]
cdef int _i
for _i in range(256):
    HEX[_i] = 1 if (48 <= _i <= 57 or 65 <= _i <= 70 or 97 <= _i <= 102) else 0

# The one C grammar of the markers (read-only here, as in `arrow_c`): extract scans a raw
# UTF-8 token with it, as `arrow_c` scans an Arrow row.  It also picks the vector path once.
include "grammar_c.pxi"
# The clean core over the same units: `clean_lines` cleans a token's UTF-8 bytes with it, the
# very code `clean_c` runs on a str.
include "clean_core.pxi"

cdef extern from "Python.h":
    PyObject* _new_bytes "PyBytes_FromStringAndSize"(const char* data, Py_ssize_t size)
    int _PyBytes_Resize(PyObject** data, Py_ssize_t size) except -1
    void Py_DECREF(PyObject* o)
    void Py_XDECREF(PyObject* o)

cdef extern from "simd.h" nogil:
    bint cm_utf8_valid(const unsigned char* data, Py_ssize_t n)
    Py_ssize_t cm_count_points(const unsigned char* data, Py_ssize_t n)
    uint32_t cm_or_ucs1(const Py_UCS1* data, Py_ssize_t a, Py_ssize_t b)  # < 0x80: all ASCII

# The run from i of a string's bytes that JSON writes as they are: every byte but a quote, a
# backslash and a control character, and with `ascii` (as json's ASCII encoder) none past 0x7E.
# 16 bytes a step with SSE2, then for a plain run 8 with portable word tricks (the whole run
# where there is no SSE2; the tail of it here, so the tests run that loop too), then byte by
# byte.  Bytes >= 0x80 are plain: the line's UTF-8 is checked once, whole, before the walk
# (`_walk`).  Nothing at or past n is read; `ascii` is a constant at every call, so that each
# compiles to its own loop.
cdef extern from *:
    """
    #if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
    #include <emmintrin.h>
    #define CMJ_SSE2 1
    #endif
    static inline Py_ssize_t cmj_run(const unsigned char *s, Py_ssize_t i, Py_ssize_t n,
                                     const int ascii) {
    #if defined(CMJ_SSE2)
        const __m128i quote = _mm_set1_epi8(34), slash = _mm_set1_epi8(92);
        const __m128i control = _mm_set1_epi8(0x1F), high = _mm_set1_epi8(0x7E);
        for (; n - i >= 16; i += 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)(s + i));
            __m128i hit = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, slash)),
                _mm_cmpeq_epi8(_mm_min_epu8(x, control), x));
            int mask = _mm_movemask_epi8(hit);
            if (ascii)  /* past 0x7E: where min(x, 0x7E) is not x */
                mask |= ~_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(x, high), x)) & 0xFFFF;
            if (mask) return i + __builtin_ctz((unsigned int)mask);
        }
    #endif
        const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
        for (; !ascii && n - i >= 8; i += 8) {
            uint64_t w, q, b;
            memcpy(&w, s + i, 8);
            q = w ^ (ones * 34);
            b = w ^ (ones * 92);
            if ((((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w)) & highs) break;
        }
        while (i < n && s[i] != 34 && s[i] != 92 && s[i] >= 0x20 && (!ascii || s[i] <= 0x7E))
            i++;
        return i;
    }
    """
    Py_ssize_t cmj_run(const unsigned char* s, Py_ssize_t i, Py_ssize_t n, const int ascii) nogil


# The run of a string token's inside up to its next backslash, copied as it is found (the
# decoder's inner loop: in a log written in ASCII JSON the runs between escapes are short, and
# a memchr and a memcpy call for each cost more than the run).  16 bytes a step with SSE2,
# each step stored whole: `out` must have room for n - i bytes.
cdef extern from *:
    """
    static inline Py_ssize_t cmj_copy_run(const unsigned char *s, Py_ssize_t i, Py_ssize_t n,
                                          char *out) {
    #if defined(CMJ_SSE2)
        const __m128i slash = _mm_set1_epi8(92);
        for (; n - i >= 16; i += 16, out += 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)(s + i));
            int mask = _mm_movemask_epi8(_mm_cmpeq_epi8(x, slash));
            _mm_storeu_si128((__m128i *)out, x);
            if (mask) return i + __builtin_ctz((unsigned int)mask);
        }
        while (i < n && s[i] != 92) *out++ = (char)s[i++];
        return i;
    #else
        const unsigned char *p = (const unsigned char *)memchr(s + i, 92, (size_t)(n - i));
        Py_ssize_t j = p == NULL ? n : p - s;
        memcpy(out, s + i, (size_t)(j - i));
        return j;
    #endif
    }
    """
    Py_ssize_t cmj_copy_run(const unsigned char* s, Py_ssize_t i, Py_ssize_t n, char* out) nogil


cdef inline Py_ssize_t _space(const unsigned char* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    while i < n and (s[i] == 32 or s[i] == 9 or s[i] == 10 or s[i] == 13):
        i += 1
    return i


cdef inline Py_ssize_t _string(
    const unsigned char* s, Py_ssize_t i, Py_ssize_t n, bint* escaped
) noexcept nogil:
    """s[i] is the opening quote: the index after the closing one, or -1.  The bytes are
    well-formed UTF-8 (checked before)."""
    cdef unsigned char c
    i += 1
    while True:
        i = cmj_run(s, i, n, 0)
        if i >= n:
            return -1
        if s[i] == 34:
            return i + 1
        if s[i] < 32:
            return -1
        escaped[0] = True  # a backslash
        if i + 1 >= n:
            return -1
        c = s[i + 1]
        if c == 117:  # \uXXXX
            if i + 5 >= n or not (
                HEX[s[i + 2]] and HEX[s[i + 3]] and HEX[s[i + 4]] and HEX[s[i + 5]]
            ):
                return -1
            i += 6
        elif c == 34 or c == 92 or c == 47 or c == 98 or c == 102 or c == 110 \
                or c == 114 or c == 116:
            i += 2
        else:
            return -1


cdef inline Py_ssize_t _digits(const unsigned char* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    while i < n and 48 <= s[i] <= 57:
        i += 1
    return i


cdef inline Py_ssize_t _number(
    const unsigned char* s, Py_ssize_t i, Py_ssize_t n, int* kind
) noexcept nogil:
    """A number (or NaN, Infinity, -Infinity, as json.loads reads them) at i: the index after
    it, or -1; kind is K_INT or K_FLOAT."""
    cdef Py_ssize_t j
    kind[0] = K_INT
    if s[i] == 78:  # NaN
        kind[0] = K_FLOAT
        return i + 3 if i + 3 <= n and memcmp(s + i, b"NaN", 3) == 0 else -1
    if s[i] == 45:  # -
        i += 1
    if i < n and s[i] == 73:  # Infinity
        kind[0] = K_FLOAT
        return i + 8 if i + 8 <= n and memcmp(s + i, b"Infinity", 8) == 0 else -1
    if i >= n or not (48 <= s[i] <= 57):
        return -1
    if s[i] == 48:
        i += 1
    else:
        i = _digits(s, i, n)
    if i < n and s[i] == 46:  # .
        j = _digits(s, i + 1, n)
        if j == i + 1:
            return -1
        i = j
        kind[0] = K_FLOAT
    if i < n and (s[i] == 101 or s[i] == 69):  # e E
        i += 1
        if i < n and (s[i] == 43 or s[i] == 45):
            i += 1
        j = _digits(s, i, n)
        if j == i:
            return -1
        i = j
        kind[0] = K_FLOAT
    return i


def locate(bytes line not None, tuple path not None):
    """(code, a, b) for the value at `path` (a tuple of str keys) in the JSON line `line`:
    FOUND: a, b = the quoted string token's byte span; NULL_TEXT; NOT_STRING: a = its kind;
    MISSING: a = how many keys matched, b = the kind of what stood there; NOT_JSON (also for
    a line that is not UTF-8)."""
    cdef _PathKeys keys = _path_keys(path)
    cdef Py_ssize_t a, b
    cdef int code = _walk(<const unsigned char*>PyBytes_AS_STRING(line), PyBytes_GET_SIZE(line),
                          &keys.path, &a, &b)
    return code, a, b


cdef struct Path:
    const Key* keys  # the UTF-8 of each key
    Py_ssize_t levels
    PyObject* path  # the tuple of str keys (borrowed): an escaped key is compared with them
    # The most digits an integer may have, as json.loads reads it now (int()'s limit,
    # sys.get_int_max_str_digits(); 0: none): a longer one makes the line invalid JSON.
    Py_ssize_t int_digits


cdef struct Key:
    const char* data
    Py_ssize_t size


cdef int _walk(
    const unsigned char* s, Py_ssize_t n, const Path* path, Py_ssize_t* out_a,
    Py_ssize_t* out_b
) except -1 nogil:
    """`locate` on the bytes s[0:n], without the GIL (but for an escaped key on the path): the
    code, a and b in out_a, out_b.  A loop over three states, the open containers on a heap
    stack (so depth costs memory, never recursion)."""
    cdef Py_ssize_t i = 0, depth = 0, capacity = 64, start, key_start
    cdef Py_ssize_t levels = path.levels
    cdef Py_ssize_t want = -1  # the value about to be read is at path[want] (-1: off the path)
    cdef Py_ssize_t a = 0, b = K_OBJECT
    cdef int code = MISSING, kind, state = VALUE
    cdef bint escaped
    cdef unsigned char c
    # per open container: IN_LIST for a list; for an object, the index of the path's key
    # searched in it, or -1 when it is off the path
    cdef Py_ssize_t* level = <Py_ssize_t*>malloc(capacity * sizeof(Py_ssize_t))
    cdef void* grown
    if level == NULL:
        with gil:
            raise MemoryError()
    out_a[0] = out_b[0] = 0
    try:
        if not cm_utf8_valid(s, n):  # strict UTF-8, as a str of the line needs
            return NOT_JSON
        while True:
            if state == VALUE:
                i = _space(s, i, n)
                if i >= n:
                    return NOT_JSON
                c = s[i]
                if c == 123 or c == 91:  # { [
                    kind = K_OBJECT if c == 123 else K_LIST
                    if depth == capacity:
                        capacity *= 2
                        grown = realloc(level, capacity * sizeof(Py_ssize_t))
                        if grown == NULL:
                            with gil:
                                raise MemoryError()
                        level = <Py_ssize_t*>grown
                    level[depth] = -1 if c == 123 else IN_LIST
                    if depth == 0:
                        b = kind
                        if c == 123:
                            level[0] = 0
                    elif want == levels - 1:
                        code, a, b = NOT_STRING, kind, 0
                    elif want >= 0:
                        code, a, b = MISSING, want + 1, kind
                        if c == 123:
                            level[depth] = want + 1
                    depth += 1
                    want = -1
                    i = _space(s, i + 1, n)
                    if i < n and s[i] == c + 2:  # empty: } or ]
                        depth -= 1
                        i += 1
                        state = AFTER
                    else:
                        state = MEMBER if c == 123 else VALUE
                    continue
                start = i
                if c == 34:  # "
                    escaped = False
                    i = _string(s, i, n, &escaped)
                    kind = K_STRING
                elif c == 110 and i + 4 <= n and memcmp(s + i, b"null", 4) == 0:
                    i, kind = i + 4, K_NULL
                elif c == 116 and i + 4 <= n and memcmp(s + i, b"true", 4) == 0:
                    i, kind = i + 4, K_BOOL
                elif c == 102 and i + 5 <= n and memcmp(s + i, b"false", 5) == 0:
                    i, kind = i + 5, K_BOOL
                else:
                    i = _number(s, i, n, &kind)
                    if (kind == K_INT and i >= 0 and path.int_digits > 0
                            and i - start - (s[start] == 45) > path.int_digits):
                        i = -1  # json.loads refuses it (int()'s limit on digits)
                if i < 0:
                    return NOT_JSON
                if depth == 0:
                    b = kind
                elif want == levels - 1:
                    if kind == K_STRING:
                        code, a, b = FOUND, start, i
                    elif kind == K_NULL:
                        code, a, b = NULL_TEXT, 0, 0
                    else:
                        code, a, b = NOT_STRING, kind, 0
                elif want >= 0:
                    code, a, b = MISSING, want + 1, kind
                want = -1
                state = AFTER
            elif state == AFTER:
                i = _space(s, i, n)
                if depth == 0:
                    if i != n:
                        return NOT_JSON
                    out_a[0] = a
                    out_b[0] = b
                    return code
                if i >= n:
                    return NOT_JSON
                c = s[i]
                i += 1
                if c == 44:  # ,
                    state = VALUE if level[depth - 1] == IN_LIST else MEMBER
                elif c == (93 if level[depth - 1] == IN_LIST else 125):  # ] }
                    depth -= 1
                else:
                    return NOT_JSON
            else:  # MEMBER: a key and its colon, then the value
                i = _space(s, i, n)
                if i >= n or s[i] != 34:
                    return NOT_JSON
                key_start, escaped = i, False
                i = _string(s, i, n, &escaped)
                if i < 0:
                    return NOT_JSON
                if level[depth - 1] >= 0:
                    want = _match(s, key_start, i, escaped, path, level[depth - 1])
                i = _space(s, i, n)
                if i >= n or s[i] != 58:
                    return NOT_JSON
                i += 1
                state = VALUE
    finally:
        free(level)


cdef Py_ssize_t _match(
    const unsigned char* s, Py_ssize_t start, Py_ssize_t end, bint escaped, const Path* path,
    Py_ssize_t level
) except -2 nogil:
    """`level` when the key token s[start:end] is path[level], else -1."""
    cdef const Key* wanted = &path.keys[level]
    if escaped:
        with gil:
            return level if _text(s, start, end) == (<tuple>path.path)[level] else -1
    if end - start - 2 != wanted.size:
        return -1
    return level if memcmp(s + start + 1, wanted.data, wanted.size) == 0 else -1


def may_hold_start(bytes line not None, Py_ssize_t start, Py_ssize_t end):
    """False when the string token line[start:end] cannot hold a START (U+E200, raw or as a
    \\uE200 escape in either case): nothing in it can change."""
    if start < 0 or end > PyBytes_GET_SIZE(line) or start > end:
        raise ValueError("span out of range")
    return _may_hold_start(<const unsigned char*>PyBytes_AS_STRING(line), start, end)


cdef bint _may_hold_start(const unsigned char* s, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    cdef const unsigned char* p = s + start
    cdef const unsigned char* stop = s + end
    while p < stop:
        p = <const unsigned char*>memchr(p, 0xEE, stop - p)
        if p == NULL:
            break
        if p + 2 < stop and p[1] == 0x88 and p[2] == 0x80:
            return True
        p += 1
    p = s + start
    while p < stop:
        p = <const unsigned char*>memchr(p, 92, stop - p)
        if p == NULL:
            return False
        if p + 5 < stop and p[1] == 117 and (p[2] == 101 or p[2] == 69) and p[3] == 50 \
                and p[4] == 48 and p[5] == 48:
            return True
        p += 1
    return False


_encode_ascii = json.encoder.encode_basestring_ascii


cdef inline bint _blank(const unsigned char* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    return _space(s, i, n) == n


cdef struct Out:
    char* data
    Py_ssize_t size
    Py_ssize_t capacity
    bint fixed  # data is a bytes object's buffer: it can never be grown


cdef int _reserve(Out* out, Py_ssize_t extra) except -1 nogil:
    cdef Py_ssize_t wanted = out.size + extra
    cdef char* grown
    if wanted <= out.capacity:
        return 0
    if out.fixed:  # the writer's proof that it fits failed: an error, never a realloc
        with gil:
            raise SystemError("output past its fixed buffer")
    wanted = max(wanted, 2 * out.capacity, 4096)
    grown = <char*>realloc(out.data, wanted)
    if grown == NULL:
        with gil:
            raise MemoryError()
    out.data = grown
    out.capacity = wanted
    return 0


cdef inline int _put(Out* out, const char* data, Py_ssize_t size) except -1 nogil:
    if size <= 0:
        return 0  # an empty Out has no buffer, and memcpy(NULL, ..., 0) is undefined
    _reserve(out, size)
    memcpy(out.data + out.size, data, size)
    out.size += size
    return 0


cdef int _put_int(Out* out, object number) except -1:
    cdef Py_ssize_t value
    try:
        value = number
    except OverflowError:
        text = str(number).encode("ascii")
        return _put(out, text, len(text))
    return _put_size(out, value)


cdef int _put_string(Out* out, str text) except -1:
    """`text` as a JSON string, as json.dumps(ensure_ascii=False) writes it, in UTF-8."""
    cdef Py_ssize_t size
    # raises UnicodeEncodeError on a lone surrogate
    cdef const unsigned char* utf8 = <const unsigned char*>PyUnicode_AsUTF8AndSize(text, &size)
    return _put_json_string(out, utf8, size, False)


cdef inline Py_ssize_t _hex_escape(unsigned int unit, char* out) noexcept nogil:
    """\\u and the 4 lower-case hex digits of unit (< 0x10000) into out; 6 (by hand: snprintf
    cost more than the rest of the escape)."""
    cdef int k
    out[0] = 92
    out[1] = 117
    for k in range(4):
        out[5 - k] = b"0123456789abcdef"[(unit >> (4 * k)) & 15]
    return 6


cdef int _put_json_string(Out* out, const unsigned char* utf8, Py_ssize_t size,
                          bint ascii) except -1 nogil:
    """The text of the UTF-8 bytes utf8[:size] as a JSON string, as json.dumps writes it with
    ensure_ascii=False (`ascii` false: runs of UTF-8 between the bytes JSON escapes), or in
    ASCII as json.encoder.encode_basestring_ascii writes it (every other character escaped,
    \\u in lower-case hex, a pair of them past U+FFFF)."""
    cdef Py_ssize_t i = 0, j
    cdef Py_UCS4 ch
    cdef unsigned int point
    cdef char escape[16]
    _reserve(out, size + 2)
    _put(out, b'"', 1)
    while True:
        j = cmj_run(utf8, i, size, 1) if ascii else cmj_run(utf8, i, size, 0)
        _put(out, <const char*>utf8 + i, j - i)
        if j >= size:
            break
        # without `ascii`, a byte below 0x80 stopped the run: one character of one byte
        i = read_point(<const utf8_t*>utf8, j, size, &ch)
        if ch < 128 and SHORT[ch]:
            escape[0] = 92
            escape[1] = SHORT[ch]
            _put(out, escape, 2)
        elif ch < 0x10000:
            _put(out, escape, _hex_escape(ch, escape))
        else:
            point = <unsigned int>ch - 0x10000
            _hex_escape(0xD800 + (point >> 10), escape)
            _hex_escape(0xDC00 + (point & 0x3FF), escape + 6)
            _put(out, escape, 12)
    return _put(out, b'"', 1)


cdef unsigned char UNESCAPE[128]  # the byte that a two-byte escape \\X stands for
cdef unsigned char SHORT[128]  # the X of the two-byte escape json.dumps writes for a byte, or 0
for _i, _c in zip(b'"\\/bfnrt', b'"\\/\b\f\n\r\t'):
    UNESCAPE[_i] = _c
    if _i != 47:  # json.dumps writes "/" as it is
        SHORT[_c] = _i


cdef inline unsigned int _hex4(const unsigned char* s) noexcept nogil:
    """The value of 4 hex digits (checked by the walk)."""
    cdef unsigned int value = 0, c
    cdef int k
    for k in range(4):
        c = s[k] | 0x20  # a letter in lower case; a digit stays a digit
        value = (value << 4) | (c - 48 if c <= 57 else c - 87)
    return value


cdef inline Py_ssize_t _utf8_of(unsigned int point, char* out) noexcept nogil:
    """The UTF-8 bytes of point (not a surrogate) into out; how many (the grammar's
    `set_mark` writes a Mark, and costs the decoder's loop a call)."""
    if point < 0x80:
        out[0] = <char>point
        return 1
    if point < 0x800:
        out[0] = <char>(0xC0 | (point >> 6))
        out[1] = <char>(0x80 | (point & 0x3F))
        return 2
    if point < 0x10000:
        out[0] = <char>(0xE0 | (point >> 12))
        out[1] = <char>(0x80 | ((point >> 6) & 0x3F))
        out[2] = <char>(0x80 | (point & 0x3F))
        return 3
    out[0] = <char>(0xF0 | (point >> 18))
    out[1] = <char>(0x80 | ((point >> 12) & 0x3F))
    out[2] = <char>(0x80 | ((point >> 6) & 0x3F))
    out[3] = <char>(0x80 | (point & 0x3F))
    return 4


cdef Py_ssize_t _decode(const unsigned char* s, Py_ssize_t i, Py_ssize_t stop,
                        char* text) noexcept nogil:
    """The text of a valid string token's inside s[i:stop], as json reads it, in UTF-8 into
    `text` (room for stop - i bytes: no escape is shorter than the UTF-8 it stands for, so
    at every step the room left is at least the input left, as `cmj_copy_run` needs): its
    size, or -1 when it holds a lone surrogate, which UTF-8 cannot carry.  A surrogate pair
    is one character.  The one decoder of the passes and of `_text`."""
    cdef Py_ssize_t size = 0, j
    cdef unsigned int point, low
    while True:
        j = cmj_copy_run(s, i, stop, text + size)
        size += j - i
        if j >= stop:
            return size
        if s[j + 1] != 117:
            text[size] = UNESCAPE[s[j + 1]]  # a valid escape: s[j + 1] < 128
            size += 1
            i = j + 2
        else:
            point = _hex4(s + j + 2)
            i = j + 6
            if 0xD800 <= point <= 0xDFFF:
                # A pair is one character, as json reads it; a lone half is refused.
                if point >= 0xDC00 or stop - i < 6 or s[i] != 92 or s[i + 1] != 117:
                    return -1
                low = _hex4(s + i + 2)
                if not 0xDC00 <= low <= 0xDFFF:
                    return -1
                point = 0x10000 + ((point - 0xD800) << 10) + (low - 0xDC00)
                i += 6
            size += _utf8_of(point, text + size)


cdef object _text(const unsigned char* s, Py_ssize_t start, Py_ssize_t end):
    """The str of the (valid) string token s[start:end]: its bytes, decoded here into UTF-8
    (`_decode`); json's scanstring reads a token holding a lone surrogate."""
    cdef const unsigned char* p = <const unsigned char*>memchr(s + start, 92, end - start)
    cdef Py_ssize_t size
    cdef char* buffer
    if p == NULL:  # no escapes: its bytes are the text
        return PyUnicode_DecodeUTF8(<const char*>s + start + 1, end - start - 2, NULL)
    buffer = <char*>malloc(end - start)
    if buffer == NULL:
        raise MemoryError()
    try:
        size = _decode(s, start + 1, end - 1, buffer)
        if size >= 0:
            return PyUnicode_DecodeUTF8(buffer, size, NULL)
    finally:
        free(buffer)
    return _scanstring(PyUnicode_DecodeUTF8(<const char*>s + start, end - start, NULL), 1,
                       True)[0]


cdef class _PathKeys:
    """A path as `_walk` reads it, and the objects its pointers point into."""
    cdef tuple keys  # the UTF-8 bytes of each key
    cdef tuple names  # the path itself
    cdef Key* array
    cdef Path path

    def __dealloc__(self):
        PyMem_RawFree(self.array)


cdef _PathKeys _path_keys(tuple path):
    cdef _PathKeys made = _PathKeys.__new__(_PathKeys)
    cdef Py_ssize_t k
    if not path:
        raise ValueError("path must name at least one key")
    for key in path:
        if type(key) is not str:
            raise TypeError(f"path must be a tuple of str, not one holding {type(key).__name__}")
    made.keys = tuple([(<str>key).encode("utf-8", "surrogatepass") for key in path])
    made.names = path
    made.array = <Key*>PyMem_RawMalloc(len(path) * sizeof(Key))
    if made.array == NULL:
        raise MemoryError()
    for k in range(len(path)):
        made.array[k].data = PyBytes_AS_STRING(made.keys[k])
        made.array[k].size = PyBytes_GET_SIZE(made.keys[k])
    made.path.keys = made.array
    made.path.levels = len(path)
    made.path.path = <PyObject*>path
    # sys.get_int_max_str_digits() (0: no limit), read at each call as json.loads does
    limit = getattr(sys, "get_int_max_str_digits", None)
    made.path.int_digits = 0 if limit is None else limit()
    return made


def line_cuts(bytes data not None, Py_ssize_t size, Py_ssize_t most):
    """The lines of data[:size] (split after each b"\\n"; a last line without one counts) in
    the fewest pieces of at most `most` lines, as even in lines as can be:
    [(start, end, lines)], consecutive, covering data[:size].  Two memchr passes, no Python
    work per line."""
    if size < 0 or size > PyBytes_GET_SIZE(data):
        raise ValueError("size out of range")
    if most < 1:
        raise ValueError("most must be at least 1")
    cdef const unsigned char* s = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef const unsigned char* p = s
    cdef const unsigned char* stop = s + size
    cdef Py_ssize_t lines = 0, pieces, piece, seen = 0, start = 0, wanted
    cdef list cuts = []
    with nogil:
        while p < stop:
            p = <const unsigned char*>memchr(p, 10, stop - p)
            if p == NULL:
                break
            lines += 1
            p += 1
    if size and s[size - 1] != 10:
        lines += 1
    if lines == 0:
        return cuts
    pieces = (lines + most - 1) // most
    p = s
    for piece in range(pieces - 1):
        wanted = lines * (piece + 1) // pieces  # lines before the end of this piece
        while seen < wanted:  # each of them ends with a newline (the last piece is not here)
            p = <const unsigned char*>memchr(p, 10, stop - p) + 1
            seen += 1
        cuts.append((start, p - s, wanted - (lines * piece // pieces)))
        start = p - s
    cuts.append((start, size, lines - lines * (pieces - 1) // pieces))
    return cuts


cdef bint _raw_ok(const unsigned char* s, Py_ssize_t start, Py_ssize_t end,
                  const Rules* rules) noexcept nogil:
    """True when the string token s[start:end] can be stripped as its raw bytes: no \\u escape
    (which could spell a marker character), and no escape from a START that opens a marker of
    `families` (START family DELIM) to the STOP after it, so that every such marker reads the
    same raw and decoded (escapes elsewhere are kept as they are)."""
    cdef Py_ssize_t i = start + 1, stop = end - 1, size, f
    cdef bint open_marker = False
    # the next backslash and the next EE byte (the lead byte of START, STOP and DELIM), each
    # found with memchr: most of a token is neither
    cdef const unsigned char* slash = <const unsigned char*>memchr(s + i, 92, stop - i)
    cdef const unsigned char* lead = <const unsigned char*>memchr(s + i, 0xEE, stop - i)
    while slash != NULL or lead != NULL:
        if lead == NULL or (slash != NULL and slash < lead):
            if open_marker or slash[1] == 117:  # slash[1] is within the token: it ends '"'
                return False
            i = slash - s + 2
            slash = <const unsigned char*>memchr(s + i, 92, stop - i) if i < stop else NULL
            if lead != NULL and lead < s + i:
                lead = <const unsigned char*>memchr(s + i, 0xEE, stop - i) if i < stop else NULL
            continue
        i = lead - s
        if i + 2 < stop and s[i + 1] == 0x88:
            if s[i + 2] == 0x80 and not open_marker:
                for f in range(rules.n_families):
                    size = rules.families[f].length
                    if i + 6 + size <= stop and memcmp(s + i + 3, rules.families[f].chars,
                                                       size) == 0 \
                            and memcmp(s + i + 3 + size, b"\xee\x88\x82", 3) == 0:
                        open_marker = True
                        break
            elif s[i + 2] == 0x81:
                open_marker = False
        i += 1
        lead = <const unsigned char*>memchr(s + i, 0xEE, stop - i) if i < stop else NULL
    return True


def raw_ok(bytes token not None, tuple families not None):
    """See `_raw_ok`: can the string token (quotes included) be stripped as raw bytes?"""
    if PyBytes_GET_SIZE(token) < 2:
        raise ValueError("not a string token")
    cdef _Rules rules = _rules(families)
    return _raw_ok(<const unsigned char*>PyBytes_AS_STRING(token), 0, PyBytes_GET_SIZE(token),
                   &rules.rules)


cdef class _Rules:
    """The grammar's rules for UTF-8 `families`, and the bytes they point into."""
    cdef tuple families
    cdef Rules rules
    cdef Py_ssize_t window  # `Pass.window`

    def __dealloc__(self):
        PyMem_RawFree(self.rules.families)


cdef _Rules _rules(object families):
    """Rules for `families` (a tuple of bytes, type-checked here; None: none): the default
    markers, the guide's id and locator rules."""
    cdef _Rules made
    cdef Py_ssize_t f
    if families is None:
        return None
    if type(families) is not tuple:
        raise TypeError(
            f"families must be a tuple of bytes or None, not {type(families).__name__}")
    for family in families:
        if type(family) is not bytes:
            raise TypeError(f"families must hold bytes, not {type(family).__name__}")
    made = _Rules.__new__(_Rules)
    made.families = families
    stop = _grammar.CITATION_STOP.encode()
    made.window = PY_SSIZE_T_MAX if any(stop in family for family in families) else SCAN_WINDOW
    set_mark(&made.rules.start, ord(_grammar.CITATION_START))
    set_mark(&made.rules.delim, ord(_grammar.CITATION_DELIMITER))
    set_mark(&made.rules.stop, ord(_grammar.CITATION_STOP))
    made.rules.max_length = PY_SSIZE_T_MAX
    made.rules.any_family = False
    made.rules.builtin_rules = True
    made.rules.n_families = len(families)
    made.rules.families = <Family*>PyMem_RawMalloc((len(families) + 1) * sizeof(Family))
    if made.rules.families == NULL:
        raise MemoryError()
    for f in range(made.rules.n_families):
        made.rules.families[f].chars = PyBytes_AS_STRING(families[f])
        made.rules.families[f].kind = 1
        made.rules.families[f].length = PyBytes_GET_SIZE(families[f])
    return made


def text_lines(bytes data not None, tuple path not None, bint skip_bad):
    """The text at `path` of each line of `data` (split at b"\\n"): (rows, texts, blanks,
    bad), rows = the index of each good line, texts = its str (None for null); blanks = how
    many lines are blank (only spaces); bad = [(index, code, a, b)] of the lines `locate`
    refused (without skip_bad the scan stops at the first)."""
    return _lines(data, path, None, skip_bad, TEXT, None)


def strip_lines(bytes data not None, tuple path not None, object many not None, bint skip_bad,
                object families=None):
    """`data` (lines split at b"\\n") with the string at `path` in each line replaced by what
    `many(texts)` (a list of str -> a list of str) gives for it; every other byte kept.

    Only the texts that can hold a START can change.  With `families` (a tuple of UTF-8
    bytes: `many` strips those families' citations) a token is stripped in the pass without
    the GIL (`_strip_value`), and `many`, called once after it, gets only a text holding a
    lone surrogate or a changed ASCII token holding DEL.  (out, rows, blanks, bad) as in
    `text_lines`, rows = how many good lines; blank lines are copied; out leaves bad lines
    out, and without skip_bad stops before the first.
    """
    return _lines(data, path, many, skip_bad, STRIP, _rules(families))


def map_lines(bytes data not None, tuple path not None, object many not None, bint skip_bad):
    """`strip_lines`, with every text handed to `many` (a text->text command that may change
    text without a START)."""
    return _lines(data, path, many, skip_bad, MAP, None)


def clean_lines(bytes data not None, tuple path not None, object many, object skip_bad):
    """`map_lines(data, path, many, skip_bad)` for `many` = `citemark.display.clean_many` with
    its default options, with most texts cleaned in the pass without the GIL, on their UTF-8
    bytes, by the core of `clean_c` (`_clean_token`); `many` gets only the texts it leaves."""
    if not callable(many):
        raise TypeError(f"many must be callable, not {type(many).__name__}")
    if type(skip_bad) is not bool:
        raise TypeError(f"skip_bad must be bool, not {type(skip_bad).__name__}")
    return _lines(data, path, many, skip_bad, CLEAN, None)


def extract_lines(bytes data not None, tuple path not None, object many not None,
                  bint skip_bad, str file not None, Py_ssize_t first_row, object families=None):
    """extract's JSON lines for the rows of `data` (lines split at b"\\n"): for each good line
    {"file": file, "row": first_row + its index, "citations": ...} as `citation_lines` writes
    it, with the citations `many(texts)` (a list of str -> a list of citation lists) gives
    for its text; null for a null text.

    A text that cannot hold a START has none.  With `families` (a tuple of UTF-8 bytes:
    `many` extracts those families) a token is scanned in the pass without the GIL, no
    Python object made for it or its citations (`_extract_value`); `many`, called once after
    it, gets only a text holding a lone surrogate.  (out, rows, blanks, bad) as in
    `strip_lines`."""
    return _lines(data, path, many, skip_bad, EXTRACT, _rules(families), file, first_row)


cdef struct Hole:  # a token `many` reads, and where its result goes in the output
    Py_ssize_t at
    Py_ssize_t start  # -1: a null text (extract)
    Py_ssize_t end
    Py_ssize_t index  # of its line (extract)


cdef struct BadLine:
    Py_ssize_t index
    Py_ssize_t code
    Py_ssize_t a
    Py_ssize_t b


cdef struct Cleaner:  # what a pass reuses from token to token
    char* text  # a token's text, decoded (`_decode`)
    char* result  # the text made of it (clean's, strip's), in the block of `text`
    Py_ssize_t capacity  # of each
    Py_ssize_t size  # of the result
    bint ascii  # the token was ASCII: the result is written with ASCII escapes
    Tokens tokens  # clean's
    Join join  # clean's


cdef enum:
    # What `_clean_token` (or `_strip_text`) did with a token.
    KEPT = 0  # nothing to change: the token stays as it is
    CLEANED = 1  # the new text is cleaner.result[:cleaner.size]
    LEFT = 2  # for `many`: a lone surrogate, Markdown code, a titled family, an entity name


cdef int _room(Cleaner* cleaner, Py_ssize_t size) except -1 nogil:
    """Both buffers of cleaner at least size bytes long (one block: the text, the result)."""
    cdef char* grown
    if cleaner.capacity >= size:
        return 0
    size = max(size, 2 * cleaner.capacity)
    grown = <char*>realloc(cleaner.text, 2 * size)
    if grown == NULL:
        with gil:
            raise MemoryError()
    cleaner.text = grown
    cleaner.result = grown + size
    cleaner.capacity = size
    return 0


cdef inline bint _ascii_del(const unsigned char* s, Py_ssize_t start, Py_ssize_t end,
                            Cleaner* cleaner) noexcept nogil:
    """Sets cleaner.ascii for the token s[start:end] (a changed text is written back in ASCII
    when the token was ASCII); True when it was and holds DEL, whose escape (6 bytes for 1)
    could make the output longer than the input: such a token is left to `many`."""
    cleaner.ascii = cm_or_ucs1(s, start + 1, end - 1) < 0x80
    return cleaner.ascii and memchr(s + start + 1, 127, end - start - 2) != NULL


cdef int _clean_token(const unsigned char* s, Py_ssize_t start, Py_ssize_t end,
                      Cleaner* cleaner) except -1 nogil:
    """clean (default options) of the string token s[start:end], on its UTF-8 bytes: KEPT (no
    marker character, raw or spelled by a \\u escape), CLEANED (decoded into cleaner.text and
    cut; cleaner.ascii: written in ASCII, as the token was) or LEFT to `many`: a lone
    surrogate, an ASCII token holding DEL (`_ascii_del`), markers maybe in Markdown code
    (MARKERS_MAYBE_IN_CODE: the code spans are found in Python) and what `cut` leaves to Python."""
    cdef Py_ssize_t i = start + 1, stop = end - 1, j, n = stop - i
    cdef const unsigned char* slash = <const unsigned char*>memchr(s + i, 92, stop - i)
    cdef const utf8_t* text = <const utf8_t*>s + i
    cdef bint raw = find_special(text, 0, stop - i) >= 0  # a raw marker: not ASCII
    cdef int found
    if not raw:
        # No marker character but in a \\u escape: clean gives the text back as it is.
        while True:
            if slash == NULL:
                return KEPT
            j = slash - s
            if s[j + 1] == 117:  # \\u and 4 hex digits (the token is valid JSON)
                if is_private(_hex4(s + j + 2)):
                    break
                j += 6
            else:
                j += 2
            slash = <const unsigned char*>memchr(s + j, 92, stop - j) if j < stop else NULL
        slash = <const unsigned char*>memchr(s + i, 92, stop - i)
    _room(cleaner, stop - i)  # neither the decoded text nor the cut's output is longer
    if slash != NULL:
        n = _decode(s, i, stop, cleaner.text)
        if n < 0:
            return LEFT
        text = cleaner.text
    if raw:
        cleaner.ascii = False  # a raw marker is not ASCII
    elif _ascii_del(s, start, end, cleaner):
        return LEFT
    if marker_state_units(text, n) == MARKERS_MAYBE_IN_CODE:
        return LEFT
    start_join(&cleaner.join, cleaner.result, 1, True)
    found = cut(text, n, NULL, 0, True, &cleaner.tokens, &cleaner.join)
    if found == CUT_DONE:
        cleaner.size = cleaner.join.out.length
        return CLEANED
    return KEPT if found == CUT_NONE else LEFT


# --- the pass over the lines ----------------------------------------------------------------

cdef enum:
    # What a pass does with the value at the path of each good line.
    STRIP = 0  # strip_lines: cut the families' citations out; a text without a START is kept
    MAP = 1  # map_lines: hand every text to `many`
    CLEAN = 2  # clean_lines: clean it (`_clean_token`)
    EXTRACT = 3  # extract_lines: write a JSON line of its citations
    TEXT = 4  # text_lines: a hole for each good line (its text is read after the pass)


cdef struct Pass:  # one pass over the lines of a block: what it does, and what it reuses
    int job  # STRIP, MAP, CLEAN, EXTRACT or TEXT
    const Rules* rules  # the families scanned here (NULL: `many` reads every text it must)
    Py_ssize_t window  # SCAN_WINDOW, or PY_SSIZE_T_MAX when a family holds a STOP (`_scan`)
    bint skip_bad
    const Key* names  # extract: each family's name as a JSON string
    const char* head  # extract: b'{"file": ..., "row": ' (NULL: `_put_line` writes every row)
    Py_ssize_t head_size
    Py_ssize_t first_row
    Cleaner cleaner
    Matches matches
    Out out  # the output, but for the holes
    Out holes  # Hole items
    Out bads  # BadLine items
    Py_ssize_t good  # lines
    Py_ssize_t blanks
    Py_ssize_t copied  # strip, map, clean: the input is in out up to here


cdef int _pass(const unsigned char* s, Py_ssize_t n, const Path* path, Pass* p) except -1 nogil:
    """The lines of s[:n] into p.out, each value at the path as p.job says (`_strip_value`,
    `_extract_value`), but for the tokens left to `many` (p.holes) and the bad lines
    (p.bads, left out of the output, which without skip_bad stops before the first)."""
    cdef Py_ssize_t i = 0, end, index = 0, stop = n, a, b
    cdef int code
    cdef const unsigned char* newline
    cdef BadLine bad
    while i < n:
        newline = <const unsigned char*>memchr(s + i, 10, n - i)
        end = n if newline == NULL else newline - s
        if _blank(s, i, end):
            p.blanks += 1
        else:
            code = _walk(s + i, end - i, path, &a, &b)
            if code == FOUND or code == NULL_TEXT:
                p.good += 1
                if p.job == TEXT:
                    _put_hole(p, i + a if code == FOUND else -1, i + b, index)
                elif p.job == EXTRACT:
                    _extract_value(s, i + a if code == FOUND else -1, i + b, index, p)
                elif code == FOUND:
                    _strip_value(s, i + a, i + b, p)
            else:
                bad.index, bad.code, bad.a, bad.b = index, code, a, b
                _put(&p.bads, <const char*>&bad, sizeof(BadLine))
                if p.job <= CLEAN:  # out with its newline
                    _put(&p.out, <const char*>s + p.copied, i - p.copied)
                    p.copied = min(end + 1, n)
                if not p.skip_bad:
                    stop = i
                    break
        index += 1
        i = end + 1
    if p.job <= CLEAN and p.copied < stop:
        _put(&p.out, <const char*>s + p.copied, stop - p.copied)
    return 0


cdef inline int _put_hole(Pass* p, Py_ssize_t start, Py_ssize_t end,
                          Py_ssize_t index) except -1 nogil:
    cdef Hole hole
    hole.at, hole.start, hole.end, hole.index = p.out.size, start, end, index
    return _put(&p.holes, <const char*>&hole, sizeof(Hole))


cdef Py_ssize_t _scan(const unsigned char* data, Py_ssize_t at, Py_ssize_t stop,
                      Pass* p) except -1 nogil:
    """The matches of data[at:end] into p.matches (offsets from data + at), and end: the
    index after the first STOP from at + p.window on, or stop.  No marker straddles such an
    end (no family holds a STOP, else p.window is the whole text), so the windows find what
    one scan of data[at:stop] finds."""
    cdef Py_ssize_t end = stop
    if stop - at > p.window:
        end = find_mark(<const utf8_t*>data, at + p.window, stop, &p.rules.stop)
        end = stop if end < 0 else end + p.rules.stop.utf8_size
    p.matches.count = 0
    if scan_units(<const utf8_t*>data + at, end - at, p.rules, False, &p.matches) < 0:
        with gil:
            raise MemoryError()
    return end


cdef Py_ssize_t _cut(const unsigned char* data, Py_ssize_t kept, Py_ssize_t at, Py_ssize_t stop,
                     Pass* p, Out* into) except -1 nogil:
    """data[kept:] up to each citation of data[at:stop] into `into`, the citations left out:
    the index after the last one (`kept` when there is none)."""
    cdef Py_ssize_t end, k
    while at < stop:
        end = _scan(data, at, stop, p)
        for k in range(p.matches.count):
            _put(into, <const char*>data + kept, at + p.matches.items[k].start - kept)
            kept = at + p.matches.items[k].end
        at = end
    return kept


cdef enum:
    # What `_reading` says of a token, when it does not give the size of its decoded text.
    RAW = -1  # scanned as its bytes
    TO_MANY = -2  # left to `many`


cdef Py_ssize_t _reading(const unsigned char* s, Py_ssize_t start, Py_ssize_t end,
                         Pass* p) except -3 nogil:
    """How the string token s[start:end], which may hold a START, is scanned here for the
    families of p.rules: RAW, as its bytes, when `_raw_ok` accepts it, else as its text
    decoded into cleaner.text, whose size is returned; TO_MANY when there are no rules or
    the text holds a lone surrogate (UTF-8 cannot carry it)."""
    cdef Py_ssize_t size
    if p.rules == NULL:
        return TO_MANY
    if _raw_ok(s, start, end, p.rules):
        return RAW
    _room(&p.cleaner, end - start)
    size = _decode(s, start + 1, end - 1, p.cleaner.text)
    return TO_MANY if size < 0 else size


cdef int _strip_text(const unsigned char* s, Py_ssize_t start, Py_ssize_t end, Py_ssize_t n,
                     Pass* p) except -1 nogil:
    """strip of the string token s[start:end] on its text, decoded into cleaner.text[:n]:
    KEPT (no citation), CLEANED (the citations cut out: cleaner.result[:cleaner.size], to be
    written as `_ascii_del` says) or LEFT (DEL in an ASCII token)."""
    cdef Cleaner* cleaner = &p.cleaner
    cdef Py_ssize_t kept
    # as long as the text: the cut never outgrows it
    cdef Out result = Out(cleaner.result, 0, cleaner.capacity, True)
    kept = _cut(<const unsigned char*>cleaner.text, 0, 0, n, p, &result)
    if kept == 0:
        return KEPT
    if _ascii_del(s, start, end, cleaner):
        return LEFT
    _put(&result, cleaner.text + kept, n - kept)
    cleaner.size = result.size
    return CLEANED


cdef int _strip_value(const unsigned char* s, Py_ssize_t start, Py_ssize_t end,
                      Pass* p) except -1 nogil:
    """The string token s[start:end] into p.out as p.job says (strip, map or clean): kept as
    it is, cut here, or left to `many`."""
    cdef int what = LEFT
    cdef Py_ssize_t size
    if p.job == CLEAN:
        what = _clean_token(s, start, end, &p.cleaner)
    elif p.job == STRIP:
        if not _may_hold_start(s, start, end):
            return 0
        size = _reading(s, start, end, p)
        if size == RAW:  # cut out of the input bytes as they are
            p.copied = _cut(s, p.copied, start + 1, end - 1, p, &p.out)
            return 0
        if size >= 0:
            what = _strip_text(s, start, end, size, p)
    if what == KEPT:
        return 0
    _put(&p.out, <const char*>s + p.copied, start - p.copied)
    p.copied = end
    if what == LEFT:
        return _put_hole(p, start, end, 0)
    # Never longer than the token: the new text's characters are a subsequence of the
    # token's text, each written in as many bytes as there, or fewer ("\\/" as "/", "\\u00e9"
    # as two bytes, but for DEL in ASCII, which `_ascii_del` leaves).
    return _put_json_string(&p.out, <const unsigned char*>p.cleaner.result, p.cleaner.size,
                            p.cleaner.ascii)


cdef int _extract_value(const unsigned char* s, Py_ssize_t start, Py_ssize_t end,
                        Py_ssize_t index, Pass* p) except -1 nogil:
    """extract's line for the good line `index`, whose string token is s[start:end] (start
    -1: null), into p.out, its citations scanned as `_reading` says; or a hole for `many`
    and `_put_line` (no head: every line is)."""
    cdef bint holds = start >= 0 and _may_hold_start(s, start, end)
    cdef Py_ssize_t size = _reading(s, start, end, p) if holds and p.head != NULL else RAW
    if p.head == NULL or size == TO_MANY:
        return _put_hole(p, start, end, index)
    _put(&p.out, p.head, p.head_size)
    _put_size(&p.out, p.first_row + index)
    _put(&p.out, b', "citations": ', 15)
    if start < 0:
        _put(&p.out, b"null", 4)
    elif not holds:
        _put(&p.out, b"[]", 2)
    elif size == RAW:
        _put_token_citations(s + start + 1, end - start - 2, False, p)
    else:
        _put_token_citations(<const unsigned char*>p.cleaner.text, size, True, p)
    return _put(&p.out, b"}\n", 2)


cdef tuple _lines(bytes data, tuple path, object many, bint skip_bad, int job, _Rules rules,
                  str file=None, Py_ssize_t first_row=0):
    """(out, good lines, blank lines, bad lines) of `data`: one pass without the GIL
    (`_pass`), then `many` called once on the texts it left, their results put in."""
    cdef _PathKeys keys = _path_keys(path)
    cdef const unsigned char* s = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(data), k, f = 0, copied = 0, mark, n_holes
    cdef Pass p
    cdef Out whole = Out(NULL, 0, 0, False)
    cdef const Hole* hole
    cdef const BadLine* bad
    cdef list texts = [], bad_lines = [], rows = []
    cdef _PathKeys names = None
    cdef bytes head = None
    cdef PyObject* result = NULL
    memset(&p, 0, sizeof(Pass))  # counts at 0, outputs empty, pointers NULL
    p.job, p.skip_bad, p.first_row = job, skip_bad, first_row
    p.rules = NULL if rules is None else &rules.rules
    p.window = SCAN_WINDOW if rules is None else rules.window
    init_tokens(&p.cleaner.tokens)
    init_matches(&p.matches)
    try:
        if job == EXTRACT:
            if rules is not None and rules.families:
                try:  # each name's JSON string, in a Key array as a path's keys are
                    names = _path_keys(tuple([_encode_json((<bytes>family).decode("utf-8"))
                                              for family in rules.families]))
                    p.names = names.path.keys
                except UnicodeError:  # not UTF-8: `many` reads every text
                    p.rules = NULL
            try:
                head = b'{"file": ' + (<str>_encode_json(file)).encode() + b', "row": '
                p.head = PyBytes_AS_STRING(head)
                p.head_size = PyBytes_GET_SIZE(head)
            except UnicodeEncodeError:  # a lone surrogate: every line is written by `_put_line`
                pass
        elif job <= CLEAN:
            # The output of strip, map and clean is never longer than the input (input bytes,
            # less the citations cut out and the tokens left to `many`, and tokens rewritten
            # no longer than they were, see `_strip_value`): written straight into a bytes
            # object of the input's size, shrunk at the end, a long line costs twice its size.
            result = _new_bytes(NULL, n)
            if result == NULL:
                raise MemoryError()
            p.out = Out(PyBytes_AS_STRING(<object>result), 0, n, True)
        with nogil:
            _pass(s, n, &keys.path, &p)
        for k in range(p.bads.size // <Py_ssize_t>sizeof(BadLine)):
            bad = &(<const BadLine*>p.bads.data)[k]
            bad_lines.append((bad.index, bad.code, bad.a, bad.b))
        n_holes = p.holes.size // <Py_ssize_t>sizeof(Hole)
        if job == TEXT:
            for k in range(n_holes):
                hole = &(<const Hole*>p.holes.data)[k]
                rows.append(hole.index)
                texts.append(None if hole.start < 0 else _text(s, hole.start, hole.end))
            return rows, texts, p.blanks, bad_lines
        if n_holes == 0 and result != NULL:
            _PyBytes_Resize(&result, p.out.size)  # on failure result is NULL, and freed
            return <object>result, p.good, p.blanks, bad_lines
        if n_holes == 0:
            return PyBytes_FromStringAndSize(p.out.data, p.out.size), p.good, p.blanks, bad_lines
        for k in range(n_holes):
            hole = &(<const Hole*>p.holes.data)[k]
            if hole.start >= 0 and (job != EXTRACT or _may_hold_start(s, hole.start, hole.end)):
                texts.append(_text(s, hole.start, hole.end))
        results = many(texts) if texts else []
        if len(results) != len(texts):
            raise ValueError(f"many() must give one {'list' if job == EXTRACT else 'text'} "
                             "for each text")
        if job != EXTRACT:
            _reserve(&whole, p.out.size + (p.out.size >> 3))
        f = 0
        for k in range(n_holes):
            hole = &(<const Hole*>p.holes.data)[k]
            _put(&whole, p.out.data + copied, hole.at - copied)
            copied = hole.at
            if job == EXTRACT:
                if hole.start < 0:  # a null text
                    found = None
                elif _may_hold_start(s, hole.start, hole.end):
                    found = results[f]
                    f += 1
                else:
                    found = []
                _put_line(&whole, file, first_row + hole.index, found)
                continue
            text = texts[k]
            new = results[k]
            if new is text or new == text:
                _put(&whole, <const char*>s + hole.start, hole.end - hole.start)
                continue
            # UTF-8 JSON, or \\uXXXX escapes when the original was ASCII-only (or when the
            # text holds a lone surrogate, which UTF-8 cannot carry)
            if cm_or_ucs1(s, hole.start, hole.end) >= 0x80:
                mark = whole.size
                try:
                    _put_string(&whole, new)
                    continue
                except UnicodeEncodeError:
                    whole.size = mark
            token = (<str>_encode_ascii(new)).encode("ascii")
            _put(&whole, PyBytes_AS_STRING(token), PyBytes_GET_SIZE(token))
        _put(&whole, p.out.data + copied, p.out.size - copied)
        return PyBytes_FromStringAndSize(whole.data, whole.size), p.good, p.blanks, bad_lines
    finally:
        Py_XDECREF(result)
        if not p.out.fixed:
            free(p.out.data)
        free(p.holes.data)
        free(p.bads.data)
        free(whole.data)
        free(p.cleaner.text)
        free_tokens(&p.cleaner.tokens)
        free_matches(&p.matches)


# --- extract's JSON lines ------------------------------------------------------------------

from cpython.dict cimport PyDict_Next, PyDict_Size
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE

_encode_json = json.JSONEncoder(ensure_ascii=False).encode
_CITATION_KEYS = ("raw", "family", "source_ids", "locator", "start", "end")


cdef bint _plain_citation(object citation) except -1:
    """A Citation dict as the scanners make it: its keys in order, values of their types."""
    cdef Py_ssize_t position = 0, index = 0
    cdef PyObject* key
    cdef PyObject* value
    if type(citation) is not dict or PyDict_Size(citation) != 6:
        return False
    while PyDict_Next(citation, &position, &key, &value):
        if <object>key != _CITATION_KEYS[index]:
            return False
        index += 1
    ids = citation["source_ids"]
    if type(citation["raw"]) is not str or type(citation["family"]) is not str \
            or type(ids) is not list or type(citation["start"]) is not int \
            or type(citation["end"]) is not int \
            or not (citation["locator"] is None or type(citation["locator"]) is str):
        return False
    for one in ids:
        if type(one) is not str:
            return False
    return True


cdef int _put_json(Out* out, object value) except -1:
    text = (<str>_encode_json(value)).encode("utf-8")
    return _put(out, text, len(text))


cdef int _put_citations(Out* out, object citations) except -1:
    """A list of Citation dicts, as json.dumps writes it; anything else through json."""
    cdef Py_ssize_t i, j
    if type(citations) is not list:
        return _put_json(out, citations)
    _put(out, b"[", 1)
    for i in range(PyList_GET_SIZE(citations)):
        citation = <object>PyList_GET_ITEM(citations, i)
        if i:
            _put(out, b", ", 2)
        if not _plain_citation(citation):
            _put_json(out, citation)
            continue
        _put(out, b'{"raw": ', 8)
        _put_string(out, citation["raw"])
        _put(out, b', "family": ', 12)
        _put_string(out, citation["family"])
        _put(out, b', "source_ids": [', 17)
        ids = citation["source_ids"]
        for j in range(PyList_GET_SIZE(ids)):
            if j:
                _put(out, b", ", 2)
            _put_string(out, <str>PyList_GET_ITEM(ids, j))
        _put(out, b'], "locator": ', 14)
        if citation["locator"] is None:
            _put(out, b"null", 4)
        else:
            _put_string(out, citation["locator"])
        _put(out, b', "start": ', 11)
        _put_int(out, citation["start"])
        _put(out, b', "end": ', 9)
        _put_int(out, citation["end"])
        _put(out, b"}", 1)
    return _put(out, b"]", 1)


cdef int _put_line(Out* out, str file, object row, object citations) except -1:
    """One {"file", "row", "citations"} JSON line, as `citation_lines` writes it."""
    cdef Py_ssize_t line_start = out.size
    try:
        _put(out, b'{"file": ', 9)
        _put_string(out, file)
        _put(out, b', "row": ', 9)
        _put_int(out, row)
        _put(out, b', "citations": ', 15)
        _put_citations(out, citations)
        _put(out, b"}\n", 2)
    except UnicodeEncodeError:
        out.size = line_start
        text = json.dumps({"file": file, "row": row, "citations": citations})
        _put(out, (text + "\n").encode("ascii"), len(text) + 1)
    return 0


def citation_lines(str file not None, list rows not None, list citations not None):
    """{"file", "row", "citations"} JSON lines, byte for byte as
    json.dumps(..., ensure_ascii=False) writes them, UTF-8; a line whose text holds a lone
    surrogate in ASCII JSON (json.dumps(..., ensure_ascii=True))."""
    cdef Out out
    cdef Py_ssize_t i
    # Tuples of its own, indexed below without bounds checks: the caller's lists may change
    # while a line is written (another thread's code, or a citation's).
    cdef tuple row_numbers = tuple(rows), found = tuple(citations)
    if len(row_numbers) != len(found):
        raise ValueError("rows and citations must be as long")
    for row in row_numbers:
        if type(row) is not int:
            raise TypeError(f"rows must hold int, not {type(row).__name__}")
    out = Out(NULL, 0, 0, False)
    try:
        for i in range(len(row_numbers)):
            _put_line(&out, file, row_numbers[i], found[i])
        return PyBytes_FromStringAndSize(out.data, out.size)
    finally:
        free(out.data)


# --- extract straight from the raw tokens ---------------------------------------------------


cdef inline Py_ssize_t _escapes(const unsigned char* s, Py_ssize_t i,
                                Py_ssize_t end) noexcept nogil:
    """How many escapes start in s[i:end] (i is not inside one)."""
    cdef const unsigned char* p
    cdef Py_ssize_t count = 0
    while i < end:
        p = <const unsigned char*>memchr(s + i, 92, end - i)
        if p == NULL:
            break
        count += 1
        i = p - s + 2
    return count


cdef int _put_size(Out* out, Py_ssize_t number) except -1 nogil:
    """`number` in decimal, as json.dumps writes an int (by hand: snprintf's format parsing
    cost more than the rest of a citation)."""
    cdef char digits[24]
    cdef int at = 24
    cdef size_t value = <size_t>number
    if number < 0:
        _put(out, b"-", 1)
        value = <size_t>0 - value
    while True:
        at -= 1
        digits[at] = <char>(48 + value % 10)
        value //= 10
        if value == 0:
            break
    return _put(out, digits + at, 24 - at)


cdef inline int _put_part(Out* out, const unsigned char* data, Py_ssize_t a, Py_ssize_t b,
                          bint decoded) except -1 nogil:
    """data[a:b], a part of a marker, as a JSON string, as json.dumps(..., ensure_ascii=False)
    writes it: decoded text may hold what JSON escapes (a quote, a backslash, a control
    character); the bytes of a marker in a raw token never do (a JSON string has none
    unescaped, and `_raw_ok` allows no escape in a marker), so they are written as they are."""
    if decoded and cmj_run(data, a, b, 0) < b:  # most parts have nothing to escape
        return _put_json_string(out, data + a, b - a, False)
    _reserve(out, b - a + 2)
    out.data[out.size] = 34
    memcpy(out.data + out.size + 1, data + a, b - a)
    out.data[out.size + 1 + b - a] = 34
    out.size += b - a + 2
    return 0


cdef int _put_token_citations(const unsigned char* data, Py_ssize_t n, bint decoded,
                              Pass* p) except -1 nogil:
    """The citations of a text into p.out, as `_put_citations` writes extract's dicts: data[:n]
    is a raw token's inside (its markers read the same raw and decoded) or, with `decoded`,
    a token's decoded text.  Offsets in code points of the decoded text: in a raw token,
    which has no \\u escape, each escape is two bytes for one code point."""
    cdef Py_ssize_t at = 0, end, k, cursor = 0, points = 0, start, i, stop, a, b, n_ids
    cdef const unsigned char* d  # the window: match offsets are from here
    cdef const Match* match
    cdef Out* out = &p.out
    cdef bint first = True
    _put(out, b"[", 1)
    while at < n:
        end = _scan(data, at, n, p)
        d = data + at
        for k in range(p.matches.count):
            match = &p.matches.items[k]
            if not first:
                _put(out, b", ", 2)
            first = False
            points += cm_count_points(data + cursor, at + match.start - cursor)
            if not decoded:
                points -= _escapes(data, cursor, at + match.start)
            start = points
            points += cm_count_points(d + match.start, match.end - match.start)
            cursor = at + match.end
            _put(out, b'{"raw": ', 8)
            _put_part(out, d, match.start, match.end, decoded)
            _put(out, b', "family": ', 12)
            _put(out, p.names[match.family].data, p.names[match.family].size)
            _put(out, b', "source_ids": [', 17)
            # The first n_ids non-empty parts of the body (judge_body counted them), as
            # `arrow_c.emit` takes them.
            i = match.body
            stop = match.end - p.rules.stop.utf8_size
            n_ids = 0
            while n_ids < match.n_ids and i <= stop:
                i = next_part(<const utf8_t*>d, i, stop, &p.rules.delim, &a, &b) \
                    + p.rules.delim.utf8_size
                if a < b:
                    if n_ids:
                        _put(out, b", ", 2)
                    _put_part(out, d, a, b, decoded)
                    n_ids += 1
            _put(out, b'], "locator": ', 14)
            if match.locator < 0:
                _put(out, b"null", 4)
            else:
                _put_part(out, d, match.locator, match.locator_end, decoded)
            _put(out, b', "start": ', 11)
            _put_size(out, start)
            _put(out, b', "end": ', 9)
            _put_size(out, points)
            _put(out, b"}", 1)
        at = end
    return _put(out, b"]", 1)
