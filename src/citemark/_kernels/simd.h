/* Vector search for one code unit in a PEP 393 buffer, the OR of a span, a narrowing copy, the
 * end of a run of id characters and a UTF-8 check.
 *
 * CPython's own str.find has no fast path for U+E200 (its low byte is zero, which defeats
 * the memchr trick it uses), so the kernel brings its own.  On x86-64 the AVX2 path is
 * chosen at run time (wheels are built for baseline x86-64, so it is never required at
 * compile time) with SSE2 as the baseline; NEON on arm64; a portable loop elsewhere.
 * CITEMARK_SIMD=portable|sse2|avx2 caps the choice, so the tests can run every path.
 *
 * Every cm_find_* returns the index of the first unit equal to `ch` in data[i:end], or -1.
 * Callers pass 0 <= i and end <= the buffer's length; vector loops run only while a whole
 * vector fits before `end`, so nothing outside data[i:end] is read.
 */
#ifndef CITEMARK_SIMD_H
#define CITEMARK_SIMD_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "Python.h"

#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#define CM_SSE2 1
#include <emmintrin.h>
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define CM_AVX2 1
#include <immintrin.h>
#endif
#elif defined(__ARM_NEON) || defined(__aarch64__)
#define CM_NEON 1
#include <arm_neon.h>
#endif

enum { CM_PORTABLE = 0, CM_VECTOR = 1, CM_WIDE_VECTOR = 2 };

/* The searches that run many times over short spans (from a marker character to the next)
   start on a cache line of their own, so that their loop's speed does not depend on where
   the rest of the module's code happens to put them (docs/performance.md). */
#if defined(__GNUC__) || defined(__clang__)
#define CM_LINE_ALIGNED __attribute__((aligned(64)))
#else
#define CM_LINE_ALIGNED
#endif

/* The path in use: set once by cm_init() when the module is imported, read-only after. */
static int cm_level = CM_PORTABLE;
/* The UTF-8 check's 512-bit path (with cm_level == CM_WIDE_VECTOR, no cap): set likewise. */
static int cm_avx512 = 0;

static inline int cm_ctz(unsigned int mask) {
#if defined(_MSC_VER) && !defined(__clang__)
    unsigned long index;
    _BitScanForward(&index, mask);
    return (int)index;
#else
    return __builtin_ctz(mask);
#endif
}

/* Returns the name of the path chosen. */
static const char *cm_init(void) {
    const char *cap = getenv("CITEMARK_SIMD");
    int level = CM_PORTABLE;
#if defined(CM_SSE2) || defined(CM_NEON)
    level = CM_VECTOR;
#endif
#if defined(CM_AVX2)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) level = CM_WIDE_VECTOR;
    /* AVX-512 VBMI: Ice Lake and later (and AMD Zen 4), where 512-bit work does not slow the
     * clock for the code around it as on the first AVX-512 chips.  Any cap turns it off. */
    cm_avx512 = level == CM_WIDE_VECTOR && !cap && __builtin_cpu_supports("avx512f")
                && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi");
#endif
    if (cap && strcmp(cap, "portable") == 0) level = CM_PORTABLE;
    else if (cap && (strcmp(cap, "sse2") == 0 || strcmp(cap, "neon") == 0) && level > CM_VECTOR)
        level = CM_VECTOR;
    cm_level = level;
#if defined(CM_NEON)
    return level == CM_VECTOR ? "neon" : "portable";
#else
    return level == CM_WIDE_VECTOR ? "avx2" : level == CM_VECTOR ? "sse2" : "portable";
#endif
}

#if defined(CM_AVX2)
__attribute__((target("avx2"))) CM_LINE_ALIGNED static Py_ssize_t
cm_find_ucs2_avx2(const Py_UCS2 *data, Py_ssize_t i, Py_ssize_t end, Py_UCS2 unit) {
    const __m256i needle = _mm256_set1_epi16((short)unit);
    for (; i + 32 <= end; i += 32) {
        __m256i a = _mm256_cmpeq_epi16(_mm256_loadu_si256((const __m256i *)(data + i)), needle);
        __m256i b =
            _mm256_cmpeq_epi16(_mm256_loadu_si256((const __m256i *)(data + i + 16)), needle);
        if (!_mm256_testz_si256(_mm256_or_si256(a, b), _mm256_or_si256(a, b))) {
            unsigned int mask = (unsigned int)_mm256_movemask_epi8(a);
            if (mask) return i + (cm_ctz(mask) >> 1);
            return i + 16 + (cm_ctz((unsigned int)_mm256_movemask_epi8(b)) >> 1);
        }
    }
    for (; i < end; i++) {
        if (data[i] == unit) return i;
    }
    return -1;
}

__attribute__((target("avx2"))) CM_LINE_ALIGNED static Py_ssize_t
cm_find_ucs4_avx2(const Py_UCS4 *data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch) {
    const __m256i needle = _mm256_set1_epi32((int)ch);
    for (; i + 16 <= end; i += 16) {
        __m256i a = _mm256_cmpeq_epi32(_mm256_loadu_si256((const __m256i *)(data + i)), needle);
        __m256i b = _mm256_cmpeq_epi32(_mm256_loadu_si256((const __m256i *)(data + i + 8)), needle);
        if (!_mm256_testz_si256(_mm256_or_si256(a, b), _mm256_or_si256(a, b))) {
            unsigned int mask = (unsigned int)_mm256_movemask_epi8(a);
            if (mask) return i + (cm_ctz(mask) >> 2);
            return i + 8 + (cm_ctz((unsigned int)_mm256_movemask_epi8(b)) >> 2);
        }
    }
    for (; i < end; i++) {
        if (data[i] == ch) return i;
    }
    return -1;
}
#endif

static inline Py_ssize_t
cm_find_ucs1(const Py_UCS1 *data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch) {
    if (i >= end || ch > 0xFF) return -1;
    const Py_UCS1 *hit = (const Py_UCS1 *)memchr(data + i, (int)ch, (size_t)(end - i));
    return hit ? (Py_ssize_t)(hit - data) : -1;
}

static inline Py_ssize_t
cm_find_ucs2(const Py_UCS2 *data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch) {
    if (ch > 0xFFFF) return -1;
    const Py_UCS2 unit = (Py_UCS2)ch;
#if defined(CM_AVX2)
    if (cm_level == CM_WIDE_VECTOR) return cm_find_ucs2_avx2(data, i, end, unit);
#endif
#if defined(CM_SSE2)
    if (cm_level == CM_VECTOR) {
        const __m128i needle = _mm_set1_epi16((short)unit);
        for (; i + 16 <= end; i += 16) {
            __m128i a = _mm_cmpeq_epi16(_mm_loadu_si128((const __m128i *)(data + i)), needle);
            __m128i b = _mm_cmpeq_epi16(_mm_loadu_si128((const __m128i *)(data + i + 8)), needle);
            unsigned int mask = (unsigned int)_mm_movemask_epi8(_mm_packs_epi16(a, b));
            if (mask) return i + cm_ctz(mask);
        }
    }
#elif defined(CM_NEON)
    if (cm_level == CM_VECTOR) {
        const uint16x8_t needle = vdupq_n_u16(unit);
        for (; i + 8 <= end; i += 8) {
            if (vmaxvq_u16(vceqq_u16(vld1q_u16(data + i), needle))) break; /* pinned below */
        }
    }
#endif
    for (; i < end; i++) {
        if (data[i] == unit) return i;
    }
    return -1;
}

static inline Py_ssize_t
cm_find_ucs4(const Py_UCS4 *data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch) {
#if defined(CM_AVX2)
    if (cm_level == CM_WIDE_VECTOR) return cm_find_ucs4_avx2(data, i, end, ch);
#endif
#if defined(CM_SSE2)
    if (cm_level == CM_VECTOR) {
        const __m128i needle = _mm_set1_epi32((int)ch);
        for (; i + 8 <= end; i += 8) {
            __m128i a = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(data + i)), needle);
            __m128i b = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(data + i + 4)), needle);
            unsigned int mask = (unsigned int)_mm_movemask_epi8(_mm_packs_epi32(a, b));
            if (mask) return i + (cm_ctz(mask) >> 1);
        }
    }
#elif defined(CM_NEON)
    if (cm_level == CM_VECTOR) {
        const uint32x4_t needle = vdupq_n_u32(ch);
        for (; i + 4 <= end; i += 4) {
            if (vmaxvq_u32(vceqq_u32(vld1q_u32(data + i), needle))) break; /* pinned below */
        }
    }
#endif
    for (; i < end; i++) {
        if (data[i] == ch) return i;
    }
    return -1;
}

/* The bitwise OR of data[a:b]: its top bit tells the narrowest kind that holds the span.
 * Plain loops over the native unit width, which compilers vectorise at -O2/-O3. */
static inline uint32_t cm_or_ucs1(const Py_UCS1 *data, Py_ssize_t a, Py_ssize_t b) {
    Py_UCS1 bits = 0;
    for (; a < b; a++) bits |= data[a];
    return bits;
}

static inline uint32_t cm_or_ucs2(const Py_UCS2 *data, Py_ssize_t a, Py_ssize_t b) {
    Py_UCS2 bits = 0;
    for (; a < b; a++) bits |= data[a];
    return bits;
}

static inline uint32_t cm_or_ucs4(const Py_UCS4 *data, Py_ssize_t a, Py_ssize_t b) {
    Py_UCS4 bits = 0;
    for (; a < b; a++) bits |= data[a];
    return bits;
}

/* Copy n 2-byte units, each below 0x100, to n bytes.  With SSE2, eight units a step and the
 * last eight once more (overlapping): a span of 8 to 16 units, an id, takes two steps whatever
 * its length, so the loop's exit is no branch the processor must guess anew each time. */
static inline void cm_narrow_ucs2(const Py_UCS2 *source, Py_UCS1 *target, Py_ssize_t n) {
    Py_ssize_t i = 0;
#if defined(CM_SSE2)
    if (cm_level != CM_PORTABLE && n >= 8) {
        for (; i + 8 < n; i += 8) {
            __m128i units = _mm_loadu_si128((const __m128i *)(source + i));
            _mm_storel_epi64((__m128i *)(target + i), _mm_packus_epi16(units, units));
        }
        __m128i last = _mm_loadu_si128((const __m128i *)(source + n - 8));
        _mm_storel_epi64((__m128i *)(target + n - 8), _mm_packus_epi16(last, last));
        return;
    }
#endif
    for (; i < n; i++) target[i] = (Py_UCS1)source[i];
}

/* Is the unit one of the guide's id characters, [A-Za-z0-9_-]? */
static inline int cm_is_id_unit(uint32_t unit) {
    return (unit - '0' < 10) || ((unit | 0x20) - 'a' < 26) || unit == '_' || unit == '-';
}

/* The index of the first unit of data[i:end] that is not an id character, or end.  With
 * SSE2, eight units a step while eight fit before end (an id is mostly 8-16 units); the rest
 * one by one.  Nothing outside data[i:end] is read. */
static inline Py_ssize_t cm_id_end_ucs2(const Py_UCS2 *data, Py_ssize_t i, Py_ssize_t end) {
#if defined(CM_SSE2)
    if (cm_level != CM_PORTABLE) {
        const __m128i zero = _mm_setzero_si128();
        for (; i + 8 <= end; i += 8) {
            __m128i units = _mm_loadu_si128((const __m128i *)(data + i));
            /* unit - lo <= span (unsigned, wrapping): the saturating subtraction is 0. */
            __m128i digit = _mm_subs_epu16(_mm_sub_epi16(units, _mm_set1_epi16('0')),
                                           _mm_set1_epi16(9));
            __m128i folded = _mm_or_si128(units, _mm_set1_epi16(0x20));
            __m128i letter = _mm_subs_epu16(_mm_sub_epi16(folded, _mm_set1_epi16('a')),
                                            _mm_set1_epi16(25));
            __m128i id = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi16(digit, zero), _mm_cmpeq_epi16(letter, zero)),
                _mm_or_si128(_mm_cmpeq_epi16(units, _mm_set1_epi16('_')),
                             _mm_cmpeq_epi16(units, _mm_set1_epi16('-'))));
            unsigned int bad = ~(unsigned int)_mm_movemask_epi8(id) & 0xFFFFu;
            if (bad) return i + (cm_ctz(bad) >> 1);
        }
    }
#endif
    while (i < end && cm_is_id_unit(data[i])) i++;
    return i;
}

/* Is data[0:n] well-formed UTF-8, as Python's strict decoder and Arrow's validator judge it
 * (no overlong forms, no surrogates, nothing above U+10FFFF, no sequence cut short)?
 * cm_utf8_valid_scalar skips ASCII runs 32 bytes at a time (SSE2) or 8 (elsewhere) and checks
 * each multi-byte sequence; with AVX2, cm_utf8_valid_avx2 checks 32 bytes a step (with
 * AVX-512 VBMI, cm_utf8_valid_avx512 64) by the lookup method of Keiser and Lemire
 * ("Validating UTF-8 in less than one instruction per byte", 2021; simdjson's and simdutf's
 * validator), for text with many non-ASCII characters.  Nothing at or past n is read. */
static inline int cm_utf8_valid_scalar(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
#if defined(CM_SSE2)
        while (n - i >= 32) {
            __m128i a = _mm_loadu_si128((const __m128i *)(s + i));
            __m128i b = _mm_loadu_si128((const __m128i *)(s + i + 16));
            unsigned int mask = (unsigned int)_mm_movemask_epi8(a)
                                | ((unsigned int)_mm_movemask_epi8(b) << 16);
            if (mask) {
                i += cm_ctz(mask);
                break;
            }
            i += 32;
        }
#endif
        while (n - i >= 8) {
            uint64_t word;
            memcpy(&word, s + i, 8);
            if (word & 0x8080808080808080ULL) break;
            i += 8;
        }
        while (i < n && s[i] < 0x80) i++;
        if (i >= n) break;
        unsigned char c = s[i];
        if (c >= 0xC2 && c <= 0xDF) {
            if (n - i < 2 || (s[i + 1] & 0xC0) != 0x80) return 0;
            i += 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            if (n - i < 3) return 0;
            unsigned char c1 = s[i + 1];
            if ((c1 & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80) return 0;
            if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F)) return 0;
            i += 3;
        } else if (c >= 0xF0 && c <= 0xF4) {
            if (n - i < 4) return 0;
            unsigned char c1 = s[i + 1];
            if ((c1 & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80 || (s[i + 3] & 0xC0) != 0x80)
                return 0;
            if ((c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F)) return 0;
            i += 4;
        } else {
            return 0;
        }
    }
    return 1;
}

#if defined(CM_AVX2)
/* The error classes of a byte pair (prev1, byte); a pair is wrong when the three lookups below
 * share a bit.  TWO_CONTS also marks a continuation that must be there (the 3rd/4th byte). */
enum {
    CM_TOO_SHORT = 1 << 0, CM_TOO_LONG = 1 << 1, CM_OVERLONG_3 = 1 << 2, CM_TOO_LARGE = 1 << 3,
    CM_SURROGATE = 1 << 4, CM_OVERLONG_2 = 1 << 5, CM_TOO_LARGE_1000 = 1 << 6,
    CM_OVERLONG_4 = 1 << 6, CM_TWO_CONTS = 1 << 7,
    CM_CARRY = CM_TOO_SHORT | CM_TOO_LONG | CM_TWO_CONTS
};

/* The three 16-entry lookups (by the high and low nibble of prev1, by the high nibble of the
 * byte), written once: the AVX2 check repeats each in its two 128-bit lanes, the AVX-512 one
 * in its four. */
#define CM_LARGE (CM_CARRY | CM_TOO_LARGE | CM_TOO_LARGE_1000)
#define CM_CONT_1000 \
    (CM_TOO_LONG | CM_OVERLONG_2 | CM_TWO_CONTS | CM_OVERLONG_3 | CM_TOO_LARGE_1000 | CM_OVERLONG_4)
#define CM_CONT_1001 (CM_TOO_LONG | CM_OVERLONG_2 | CM_TWO_CONTS | CM_OVERLONG_3 | CM_TOO_LARGE)
#define CM_CONT_101 (CM_TOO_LONG | CM_OVERLONG_2 | CM_TWO_CONTS | CM_SURROGATE | CM_TOO_LARGE)
#define CM_BYTE_1_HIGH                                                                          \
    CM_TOO_LONG, CM_TOO_LONG, CM_TOO_LONG, CM_TOO_LONG, CM_TOO_LONG, CM_TOO_LONG, CM_TOO_LONG,   \
        CM_TOO_LONG, CM_TWO_CONTS, CM_TWO_CONTS, CM_TWO_CONTS, CM_TWO_CONTS,                    \
        CM_TOO_SHORT | CM_OVERLONG_2, CM_TOO_SHORT, CM_TOO_SHORT | CM_OVERLONG_3 | CM_SURROGATE, \
        CM_TOO_SHORT | CM_TOO_LARGE | CM_TOO_LARGE_1000 | CM_OVERLONG_4
#define CM_BYTE_1_LOW                                                                          \
    CM_CARRY | CM_OVERLONG_3 | CM_OVERLONG_2 | CM_OVERLONG_4, CM_CARRY | CM_OVERLONG_2,        \
        CM_CARRY, CM_CARRY, CM_CARRY | CM_TOO_LARGE, CM_LARGE, CM_LARGE, CM_LARGE, CM_LARGE,   \
        CM_LARGE, CM_LARGE, CM_LARGE, CM_LARGE, CM_LARGE | CM_SURROGATE, CM_LARGE, CM_LARGE
#define CM_BYTE_2_HIGH                                                                         \
    CM_TOO_SHORT, CM_TOO_SHORT, CM_TOO_SHORT, CM_TOO_SHORT, CM_TOO_SHORT, CM_TOO_SHORT,         \
        CM_TOO_SHORT, CM_TOO_SHORT, CM_CONT_1000, CM_CONT_1001, CM_CONT_101, CM_CONT_101,      \
        CM_TOO_SHORT, CM_TOO_SHORT, CM_TOO_SHORT, CM_TOO_SHORT

__attribute__((target("avx2"))) static inline __m256i
cm_utf8_block_errors(__m256i input, __m256i previous) {
    const __m256i low_nibble = _mm256_set1_epi8(0x0F);
    __m256i shifted = _mm256_permute2x128_si256(previous, input, 0x21);
    __m256i prev1 = _mm256_alignr_epi8(input, shifted, 15);
    __m256i prev2 = _mm256_alignr_epi8(input, shifted, 14);
    __m256i prev3 = _mm256_alignr_epi8(input, shifted, 13);
    const __m256i byte_1_high_table = _mm256_setr_epi8(CM_BYTE_1_HIGH, CM_BYTE_1_HIGH);
    const __m256i byte_1_low_table = _mm256_setr_epi8(CM_BYTE_1_LOW, CM_BYTE_1_LOW);
    const __m256i byte_2_high_table = _mm256_setr_epi8(CM_BYTE_2_HIGH, CM_BYTE_2_HIGH);
    __m256i byte_1_high = _mm256_shuffle_epi8(
        byte_1_high_table, _mm256_and_si256(_mm256_srli_epi16(prev1, 4), low_nibble));
    __m256i byte_1_low = _mm256_shuffle_epi8(byte_1_low_table, _mm256_and_si256(prev1, low_nibble));
    __m256i byte_2_high = _mm256_shuffle_epi8(
        byte_2_high_table, _mm256_and_si256(_mm256_srli_epi16(input, 4), low_nibble));
    __m256i special = _mm256_and_si256(_mm256_and_si256(byte_1_high, byte_1_low), byte_2_high);
    /* The 3rd byte of a 3- or 4-byte sequence and the 4th of a 4-byte one must continue it. */
    __m256i third = _mm256_subs_epu8(prev2, _mm256_set1_epi8((char)(0xE0 - 0x80)));
    __m256i fourth = _mm256_subs_epu8(prev3, _mm256_set1_epi8((char)(0xF0 - 0x80)));
    __m256i must_continue = _mm256_and_si256(_mm256_or_si256(third, fourth),
                                             _mm256_set1_epi8((char)0x80));
    return _mm256_xor_si256(must_continue, special);
}

__attribute__((target("avx2"))) static int
cm_utf8_valid_avx2(const unsigned char *s, Py_ssize_t n) {
    /* Bytes that cannot end the text: a lead whose sequence needs more bytes. */
    const __m256i max_tail = _mm256_setr_epi8(
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, (char)(0xF0 - 1), (char)(0xE0 - 1), (char)(0xC0 - 1));
    __m256i previous = _mm256_setzero_si256(), error = _mm256_setzero_si256(), input, next;
    unsigned char tail[32];
    Py_ssize_t i = 0;
    /* Every block is checked against the one before it, ASCII or not, without a branch on
     * the bytes: in text that mixes ASCII with other scripts (or with the markers) a branch
     * on "this block is ASCII" is mispredicted so often that the full check of every block
     * runs twice as fast.  A sequence cut by a block's end shows in the next block's check
     * (a continuation byte missing), so only the text's very end needs its own test. */
    for (; n - i >= 64; i += 64) { /* both vectors lie below n */
        input = _mm256_loadu_si256((const __m256i *)(s + i));
        next = _mm256_loadu_si256((const __m256i *)(s + i + 32));
        error = _mm256_or_si256(error, cm_utf8_block_errors(input, previous));
        error = _mm256_or_si256(error, cm_utf8_block_errors(next, input));
        previous = next;
    }
    for (; i < n; i += 32) {
        if (n - i >= 32) {
            input = _mm256_loadu_si256((const __m256i *)(s + i));
        } else {
            memset(tail, 0, 32); /* the ASCII after the last byte shows a cut sequence */
            memcpy(tail, s + i, (size_t)(n - i));
            input = _mm256_loadu_si256((const __m256i *)tail);
        }
        error = _mm256_or_si256(error, cm_utf8_block_errors(input, previous));
        previous = input;
    }
    /* A lead at the very end (no padding block came after it) misses its continuation. */
    error = _mm256_or_si256(error, _mm256_subs_epu8(previous, max_tail));
    return _mm256_testz_si256(error, error);
}

/* The same check 64 bytes a step: the three lookups are the AVX2 tables in each 128-bit lane,
 * and the bytes before a vector come from the previous one's last lane (valignq). */
#define CM_LANE(...) _mm512_broadcast_i32x4(_mm_setr_epi8(__VA_ARGS__))
__attribute__((target("avx512f,avx512bw"))) static inline __m512i
cm_utf8_block_errors_avx512(__m512i input, __m512i previous) {
    const __m512i low_nibble = _mm512_set1_epi8(0x0F);
    __m512i shifted = _mm512_alignr_epi64(input, previous, 6); /* [prev lane 3, input 0-2] */
    __m512i prev1 = _mm512_alignr_epi8(input, shifted, 15);
    __m512i prev2 = _mm512_alignr_epi8(input, shifted, 14);
    __m512i prev3 = _mm512_alignr_epi8(input, shifted, 13);
    const __m512i byte_1_high_table = CM_LANE(CM_BYTE_1_HIGH);
    const __m512i byte_1_low_table = CM_LANE(CM_BYTE_1_LOW);
    const __m512i byte_2_high_table = CM_LANE(CM_BYTE_2_HIGH);
    __m512i byte_1_high = _mm512_shuffle_epi8(
        byte_1_high_table, _mm512_and_si512(_mm512_srli_epi16(prev1, 4), low_nibble));
    __m512i byte_1_low = _mm512_shuffle_epi8(byte_1_low_table, _mm512_and_si512(prev1, low_nibble));
    __m512i byte_2_high = _mm512_shuffle_epi8(
        byte_2_high_table, _mm512_and_si512(_mm512_srli_epi16(input, 4), low_nibble));
    __m512i special = _mm512_and_si512(_mm512_and_si512(byte_1_high, byte_1_low), byte_2_high);
    __m512i third = _mm512_subs_epu8(prev2, _mm512_set1_epi8((char)(0xE0 - 0x80)));
    __m512i fourth = _mm512_subs_epu8(prev3, _mm512_set1_epi8((char)(0xF0 - 0x80)));
    __m512i must_continue = _mm512_and_si512(_mm512_or_si512(third, fourth),
                                             _mm512_set1_epi8((char)0x80));
    return _mm512_xor_si512(must_continue, special);
}
#undef CM_LANE

__attribute__((target("avx512f,avx512bw"))) static int
cm_utf8_valid_avx512(const unsigned char *s, Py_ssize_t n) {
    /* As cm_utf8_valid_avx2: every block checked against the one before, no branch on the
     * bytes; the last three bytes of the last block must not start a sequence. */
    static const unsigned char max_tail_bytes[64] = {
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 0xF0 - 1, 0xE0 - 1,
        0xC0 - 1};
    __m512i previous = _mm512_setzero_si512(), error = _mm512_setzero_si512(), input, next;
    unsigned char tail[64];
    Py_ssize_t i = 0;
    for (; n - i >= 128; i += 128) { /* both vectors lie below n */
        input = _mm512_loadu_si512((const void *)(s + i));
        next = _mm512_loadu_si512((const void *)(s + i + 64));
        error = _mm512_or_si512(error, cm_utf8_block_errors_avx512(input, previous));
        error = _mm512_or_si512(error, cm_utf8_block_errors_avx512(next, input));
        previous = next;
    }
    for (; i < n; i += 64) {
        if (n - i >= 64) {
            input = _mm512_loadu_si512((const void *)(s + i));
        } else {
            memset(tail, 0, 64); /* the ASCII after the last byte shows a cut sequence */
            memcpy(tail, s + i, (size_t)(n - i));
            input = _mm512_loadu_si512((const void *)tail);
        }
        error = _mm512_or_si512(error, cm_utf8_block_errors_avx512(input, previous));
        previous = input;
    }
    error = _mm512_or_si512(
        error, _mm512_subs_epu8(previous, _mm512_loadu_si512((const void *)max_tail_bytes)));
    return _mm512_test_epi8_mask(error, error) == 0;
}
#endif

/* The name of the UTF-8 check's path, for the tests. */
static inline const char *cm_utf8_path(void) {
#if defined(CM_AVX2)
    if (cm_avx512) return "avx512";
    if (cm_level == CM_WIDE_VECTOR) return "avx2";
#endif
    return "scalar";
}

static inline int cm_utf8_valid(const unsigned char *s, Py_ssize_t n) {
#if defined(CM_AVX2)
    if (cm_avx512) return cm_utf8_valid_avx512(s, n);
    if (cm_level == CM_WIDE_VECTOR) return cm_utf8_valid_avx2(s, n);
#endif
    return cm_utf8_valid_scalar(s, n);
}

/* The code points of UTF-8 bytes s[0:n]: the bytes that are not continuation bytes (10xxxxxx).
 * Eight bytes a step portably: (w >> 7) & ~(w >> 6) has 1 in bit 0 of exactly the
 * continuation bytes, and the multiply sums those eight 0/1 bytes into the top one (<= 8).
 * With AVX2, 32 a step: a continuation byte is one below -64 as a signed char.  Every load
 * is of bytes below n. */
static inline Py_ssize_t cm_count_points_scalar(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0, count = n;
    for (; n - i >= 8; i += 8) {
        uint64_t word;
        memcpy(&word, s + i, 8);
        word = (word >> 7) & ~(word >> 6) & 0x0101010101010101ULL;
        count -= (Py_ssize_t)((word * 0x0101010101010101ULL) >> 56);
    }
    for (; i < n; i++) count -= (s[i] & 0xC0) == 0x80;
    return count;
}

#if defined(CM_AVX2)
__attribute__((target("avx2,popcnt"))) static Py_ssize_t
cm_count_points_avx2(const unsigned char *s, Py_ssize_t n) {
    const __m256i limit = _mm256_set1_epi8(-64);
    Py_ssize_t i = 0, count = n;
    for (; n - i >= 32; i += 32) {
        __m256i input = _mm256_loadu_si256((const __m256i *)(s + i));
        unsigned int mask = (unsigned int)_mm256_movemask_epi8(_mm256_cmpgt_epi8(limit, input));
        count -= __builtin_popcount(mask);
    }
    return count - (n - i - cm_count_points_scalar(s + i, n - i));
}
#endif

static inline Py_ssize_t cm_count_points(const unsigned char *s, Py_ssize_t n) {
#if defined(CM_AVX2)
    if (cm_level == CM_WIDE_VECTOR) return cm_count_points_avx2(s, n);
#endif
    return cm_count_points_scalar(s, n);
}

#endif
