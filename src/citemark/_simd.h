/* Find one code unit in a PEP 393 buffer (2- or 4-byte units).
 *
 * CPython's own str.find has no vector path for U+E200 (its low byte is zero, which
 * defeats the memchr trick), so the kernel brings its own.  Every function returns the
 * index of the first unit equal to `ch` in data[i:end], or -1.  Callers pass
 * 0 <= i and end <= length of the buffer; nothing is read outside data[i:end].
 */
#ifndef CITEMARK_SIMD_H
#define CITEMARK_SIMD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "Python.h"

#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#define CM_SSE2 1
#include <emmintrin.h>
#elif defined(__ARM_NEON) || defined(__aarch64__)
#define CM_NEON 1
#include <arm_neon.h>
#endif

static inline int cm_ctz(unsigned int mask) {
#if defined(_MSC_VER) && !defined(__clang__)
    unsigned long index;
    _BitScanForward(&index, mask);
    return (int)index;
#else
    return __builtin_ctz(mask);
#endif
}

static inline Py_ssize_t cm_find_ucs1(const Py_UCS1 *data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch) {
    if (i >= end || ch > 0xFF) return -1;
    const Py_UCS1 *hit = (const Py_UCS1 *)memchr(data + i, (int)ch, (size_t)(end - i));
    return hit ? (Py_ssize_t)(hit - data) : -1;
}

static inline Py_ssize_t cm_find_ucs2(const Py_UCS2 *data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch) {
    if (ch > 0xFFFF) return -1;
    const Py_UCS2 unit = (Py_UCS2)ch;
#if defined(CM_SSE2)
    const __m128i needle = _mm_set1_epi16((short)unit);
    for (; i + 16 <= end; i += 16) {
        __m128i a = _mm_cmpeq_epi16(_mm_loadu_si128((const __m128i *)(data + i)), needle);
        __m128i b = _mm_cmpeq_epi16(_mm_loadu_si128((const __m128i *)(data + i + 8)), needle);
        unsigned int mask = (unsigned int)_mm_movemask_epi8(_mm_packs_epi16(a, b));
        if (mask) return i + cm_ctz(mask);
    }
#elif defined(CM_NEON)
    const uint16x8_t needle = vdupq_n_u16(unit);
    for (; i + 8 <= end; i += 8) {
        uint16x8_t eq = vceqq_u16(vld1q_u16(data + i), needle);
        if (vmaxvq_u16(eq)) break; /* the scalar loop below pins the exact unit */
    }
#endif
    for (; i < end; i++) {
        if (data[i] == unit) return i;
    }
    return -1;
}

static inline Py_ssize_t cm_find_ucs4(const Py_UCS4 *data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch) {
#if defined(CM_SSE2)
    const __m128i needle = _mm_set1_epi32((int)ch);
    for (; i + 8 <= end; i += 8) {
        __m128i a = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(data + i)), needle);
        __m128i b = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(data + i + 4)), needle);
        unsigned int mask = (unsigned int)_mm_movemask_epi8(_mm_packs_epi32(a, b));
        if (mask) return i + (cm_ctz(mask) >> 1);
    }
#elif defined(CM_NEON)
    const uint32x4_t needle = vdupq_n_u32(ch);
    for (; i + 4 <= end; i += 4) {
        uint32x4_t eq = vceqq_u32(vld1q_u32(data + i), needle);
        if (vmaxvq_u32(eq)) break;
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

#endif
