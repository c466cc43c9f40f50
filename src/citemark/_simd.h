/* Vector search for one code unit in a PEP 393 buffer, the OR of a span, and a UTF-8 check.
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

/* The path in use: set once by cm_init() when the module is imported, read-only after. */
static int cm_level = CM_PORTABLE;

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
#endif
    if (cap && strcmp(cap, "portable") == 0) level = CM_PORTABLE;
    else if (cap && (strcmp(cap, "sse2") == 0 || strcmp(cap, "neon") == 0) && level > CM_VECTOR) level = CM_VECTOR;
    cm_level = level;
#if defined(CM_NEON)
    return level == CM_VECTOR ? "neon" : "portable";
#else
    return level == CM_WIDE_VECTOR ? "avx2" : level == CM_VECTOR ? "sse2" : "portable";
#endif
}

#if defined(CM_AVX2)
__attribute__((target("avx2"))) static Py_ssize_t
cm_find_ucs2_avx2(const Py_UCS2 *data, Py_ssize_t i, Py_ssize_t end, Py_UCS2 unit) {
    const __m256i needle = _mm256_set1_epi16((short)unit);
    for (; i + 32 <= end; i += 32) {
        __m256i a = _mm256_cmpeq_epi16(_mm256_loadu_si256((const __m256i *)(data + i)), needle);
        __m256i b = _mm256_cmpeq_epi16(_mm256_loadu_si256((const __m256i *)(data + i + 16)), needle);
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

__attribute__((target("avx2"))) static Py_ssize_t
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

static inline Py_ssize_t cm_find_ucs1(const Py_UCS1 *data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch) {
    if (i >= end || ch > 0xFF) return -1;
    const Py_UCS1 *hit = (const Py_UCS1 *)memchr(data + i, (int)ch, (size_t)(end - i));
    return hit ? (Py_ssize_t)(hit - data) : -1;
}

static inline Py_ssize_t cm_find_ucs2(const Py_UCS2 *data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch) {
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

static inline Py_ssize_t cm_find_ucs4(const Py_UCS4 *data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch) {
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

/* The index of the first byte of data[0:n] that does not begin a well-formed UTF-8 sequence
 * (as Python's strict decoder and Arrow's validator judge it: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or -1 when all of it is well formed.  ASCII runs go
 * 16 bytes at a time; nothing at or past n is read. */
static inline Py_ssize_t cm_utf8_check(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        while (n - i >= 16) {
            uint64_t a, b;
            memcpy(&a, s + i, 8);
            memcpy(&b, s + i + 8, 8);
            if ((a | b) & 0x8080808080808080ULL) break;
            i += 16;
        }
        if (i >= n) break;
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
        } else if (c >= 0xC2 && c <= 0xDF) {
            if (n - i < 2 || (s[i + 1] & 0xC0) != 0x80) return i;
            i += 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            if (n - i < 3) return i;
            unsigned char c1 = s[i + 1];
            if ((c1 & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80) return i;
            if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F)) return i;
            i += 3;
        } else if (c >= 0xF0 && c <= 0xF4) {
            if (n - i < 4) return i;
            unsigned char c1 = s[i + 1];
            if ((c1 & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80 || (s[i + 3] & 0xC0) != 0x80)
                return i;
            if ((c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F)) return i;
            i += 4;
        } else {
            return i;
        }
    }
    return -1;
}

#endif
