# cython: language_level=3, boundscheck=False, wraparound=False, freethreading_compatible=True
# cython: auto_pickle=False, autotestdict=False
"""The compiled kernel of `_markdown.code`'s hot loops: a paragraph's backtick runs, read from
CPython's own string storage (PEP 393), and their pairing into inline code spans.

Same functions, names and branch order as the twin in `commonmark_py.py`:

- `runs(text, first, end, base)`: the backtick runs of text[first:end], flat in an
  `array("q")` (start, end, escaped of each), positions plus base.
- `plain(text, start, base, pending, walls, in_paragraph, ticked_from)`: the common lines
  outside every container and code block, up to the first other line.
- `pair(runs, walls)`: append to walls the inline code spans those runs make.
- `strays(text, first, last, held, start_char, stop_char, delimiter, found, foreign)`:
  validate's stray marker characters between the markers, as raw findings.
- `stray_findings(text, consumed, start_char, stop_char, delimiter, rows, found, starts,
  ends)`: the same over every gap between the markers, as validate's diagnostics, with
  the walls its id checks skip.
- `next_outside(text, needle, at, starts, ends, wall)`: the next needle outside every wall.
- `code_walls(text)`: `_markdown.code.CodeScanner` over a whole text, every line in C;
  `code_spans(text)`: the same walls as two arrays (starts, ends).
- `StreamScanner`: the same scan over a text that comes in pieces, each piece's lines in C.
- `line_spans(text)`: (start, end) of every line's content.
- `present(text, chars)`: which of a few characters occur, in one pass.
- validate's per-citation checks: `order(found)` (its findings by place, in place), `cited_lines`
  (the lines of the citations, and what they hold), `covered` (citations in code, the
  walls as two arrays),
  `punctuated` (runs of citations before punctuation), `located_rows` (the findings of
  ids and locators, placed at each citation).
- `Diagnostic`: validate's finding, the rows the functions above make.

The threshold between the two pairings and the characters that start blocks are read from
the twin at import (one home); the line breaks are checked against it.  Characters are
found by the vector search of `simd.h` (CITEMARK_SIMD caps it, as for the scanner).
"""

cimport cython
from cpython cimport array
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from libc.string cimport memcpy
from cpython.ref cimport PyObject

from citemark._kernels import commonmark_py as twin

import array as _array_module

cdef extern from "Python.h":
    Py_ssize_t Py_SIZE(object value)
    int PyUnicode_KIND(object text)
    void* PyUnicode_DATA(object text)
    Py_UCS4 read_unit "PyUnicode_READ"(int kind, const void* data, Py_ssize_t index) nogil
    const Py_ssize_t PY_SSIZE_T_MAX
    ctypedef struct PyTypeObject:
        pass
    int PyUnicode_Compare(object left, object right) except? -1
    Py_ssize_t PyLong_AsSsize_t(object value)  # its error is looked at by the caller
    PyObject* PyErr_Occurred()
    void PyErr_Clear()

cdef extern from "Python.h":
    ctypedef unsigned char Py_UCS1
    ctypedef unsigned short Py_UCS2

cdef extern from "simd.h" nogil:
    const char* cm_init()
    Py_ssize_t cm_find_ucs1(const Py_UCS1* data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch)
    Py_ssize_t cm_find_ucs2(const Py_UCS2* data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch)
    Py_ssize_t cm_find_ucs4(const Py_UCS4* data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch)

cdef extern from *:
    """
    /* The first index in d[pos:stop] of a unit that may be a letter (an ASCII letter, or any
     * unit above ASCII: str.isalpha decides those), else stop; a vector at a time on the
     * vector path of simd.h (reads only while a whole vector fits before stop). */
    #define CITEMARK_ASCII_LETTER(u) ((unsigned int)(((u) | 0x20) - 0x61) < 26u)
    static inline Py_ssize_t
    citemark_maybe_letter_ucs1(const Py_UCS1 *d, Py_ssize_t pos, Py_ssize_t stop) {
    #if defined(CM_SSE2)
        if (cm_level >= CM_VECTOR) {
            const __m128i low = _mm_set1_epi8(0x20), a = _mm_set1_epi8(0x61);
            const __m128i span = _mm_set1_epi8(25), ascii = _mm_set1_epi8(0x7F);
            const __m128i zero = _mm_setzero_si128();
            for (; stop - pos >= 16; pos += 16) {
                __m128i v = _mm_loadu_si128((const __m128i *)(d + pos));
                __m128i offset = _mm_sub_epi8(_mm_or_si128(v, low), a);
                __m128i letter = _mm_cmpeq_epi8(_mm_subs_epu8(offset, span), zero);
                __m128i narrow = _mm_cmpeq_epi8(_mm_subs_epu8(v, ascii), zero);
                unsigned int mask = (unsigned int)_mm_movemask_epi8(_mm_or_si128(
                    letter, _mm_andnot_si128(narrow, _mm_set1_epi8(-1))));
                if (mask) return pos + cm_ctz(mask);
            }
        }
    #endif
        for (; pos < stop; pos++) {
            if (d[pos] >= 0x80 || CITEMARK_ASCII_LETTER(d[pos])) return pos;
        }
        return stop;
    }
    static inline Py_ssize_t
    citemark_maybe_letter_ucs2(const Py_UCS2 *d, Py_ssize_t pos, Py_ssize_t stop) {
    #if defined(CM_SSE2)
        if (cm_level >= CM_VECTOR) {
            const __m128i low = _mm_set1_epi16(0x20), a = _mm_set1_epi16(0x61);
            const __m128i span = _mm_set1_epi16(25), ascii = _mm_set1_epi16(0x7F);
            const __m128i zero = _mm_setzero_si128();
            for (; stop - pos >= 8; pos += 8) {
                __m128i v = _mm_loadu_si128((const __m128i *)(d + pos));
                __m128i offset = _mm_sub_epi16(_mm_or_si128(v, low), a);
                __m128i letter = _mm_cmpeq_epi16(_mm_subs_epu16(offset, span), zero);
                __m128i narrow = _mm_cmpeq_epi16(_mm_subs_epu16(v, ascii), zero);
                unsigned int mask = (unsigned int)_mm_movemask_epi8(_mm_or_si128(
                    letter, _mm_andnot_si128(narrow, _mm_set1_epi16(-1))));
                if (mask) return pos + (cm_ctz(mask) >> 1);
            }
        }
    #endif
        for (; pos < stop; pos++) {
            if (d[pos] >= 0x80 || CITEMARK_ASCII_LETTER(d[pos])) return pos;
        }
        return stop;
    }
    static inline Py_ssize_t
    citemark_maybe_letter_ucs4(const Py_UCS4 *d, Py_ssize_t pos, Py_ssize_t stop) {
    #if defined(CM_SSE2)
        if (cm_level >= CM_VECTOR) {
            /* Units are at most 0x10FFFF: signed comparisons order them. */
            const __m128i low = _mm_set1_epi32(0x20), a = _mm_set1_epi32(0x61);
            const __m128i below = _mm_set1_epi32(-1), past = _mm_set1_epi32(26);
            const __m128i ascii = _mm_set1_epi32(0x7F);
            for (; stop - pos >= 4; pos += 4) {
                __m128i v = _mm_loadu_si128((const __m128i *)(d + pos));
                __m128i offset = _mm_sub_epi32(_mm_or_si128(v, low), a);
                __m128i letter = _mm_and_si128(_mm_cmpgt_epi32(offset, below),
                                               _mm_cmplt_epi32(offset, past));
                __m128i wide = _mm_cmpgt_epi32(v, ascii);
                unsigned int mask = (unsigned int)_mm_movemask_epi8(_mm_or_si128(letter, wide));
                if (mask) return pos + (cm_ctz(mask) >> 2);
            }
        }
    #endif
        for (; pos < stop; pos++) {
            if (d[pos] >= 0x80 || CITEMARK_ASCII_LETTER(d[pos])) return pos;
        }
        return stop;
    }

    /* Past the ASCII filler at d[pos:], 32 units a step on the AVX2 path: the index of the
     * first unit that is not filler, or where the whole vectors that fit before stop end
     * (the caller goes on a unit at a time from there; pos itself without the path).  A
     * unit c below 0x80 is filler when table[c & 15] has bit c >> 4 set (the nibble table
     * look-up of two byte shuffles); a unit above ASCII never is. */
    #if defined(CM_AVX2)
    __attribute__((target("avx2"))) static Py_ssize_t
    citemark_past_filler(__m256i bytes, __m256i low_table) {
        const __m256i nibble = _mm256_set1_epi8(0x0F);
        const __m256i high_table = _mm256_broadcastsi128_si256(
            _mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, (char)128, 0, 0, 0, 0, 0, 0, 0, 0));
        __m256i low = _mm256_shuffle_epi8(low_table, _mm256_and_si256(bytes, nibble));
        __m256i high = _mm256_shuffle_epi8(
            high_table, _mm256_and_si256(_mm256_srli_epi16(bytes, 4), nibble));
        __m256i filler = _mm256_and_si256(low, high);
        unsigned int mask = (unsigned int)_mm256_movemask_epi8(
            _mm256_cmpeq_epi8(filler, _mm256_setzero_si256()));
        return mask ? cm_ctz(mask) : 32;
    }

    __attribute__((target("avx2"))) static Py_ssize_t
    citemark_skip_filler_ucs1_avx2(const Py_UCS1 *d, Py_ssize_t pos, Py_ssize_t stop,
                                   const unsigned char *table) {
        const __m256i low_table =
            _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)table));
        Py_ssize_t skipped;
        for (; stop - pos >= 32; pos += 32) {
            skipped = citemark_past_filler(
                _mm256_loadu_si256((const __m256i *)(d + pos)), low_table);
            if (skipped < 32) return pos + skipped;
        }
        return pos;
    }

    __attribute__((target("avx2"))) static Py_ssize_t
    citemark_skip_filler_ucs2_avx2(const Py_UCS2 *d, Py_ssize_t pos, Py_ssize_t stop,
                                   const unsigned char *table) {
        const __m256i low_table =
            _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)table));
        const __m256i wide = _mm256_set1_epi16(0x80);
        Py_ssize_t skipped;
        for (; stop - pos >= 32; pos += 32) {
            /* Every unit above ASCII made 0x80 (never filler), then the 32 made bytes in
             * order (the pack works within each half: the quarters put back in order). */
            __m256i a = _mm256_min_epu16(_mm256_loadu_si256((const __m256i *)(d + pos)), wide);
            __m256i b =
                _mm256_min_epu16(_mm256_loadu_si256((const __m256i *)(d + pos + 16)), wide);
            __m256i bytes = _mm256_permute4x64_epi64(_mm256_packus_epi16(a, b), 0xD8);
            skipped = citemark_past_filler(bytes, low_table);
            if (skipped < 32) return pos + skipped;
        }
        return pos;
    }
    #endif

    /* runs_into's runs, 32 units a step on the AVX2 path: a bit per backtick, each run read
     * off the bits where they change (two bit scans a run, however long).  At most `room`
     * runs are written; *pos ends past the last one written, or where the whole vectors
     * before hi end (a run still open there read to its end first); it is left as it is
     * without the path.  Reads: whole vectors before hi, and
     * the backslashes before a run back to lo. */
    #if defined(CM_AVX2)
    __attribute__((target("avx2"))) static inline unsigned int
    citemark_ticks_ucs1(const Py_UCS1 *d) {
        return (unsigned int)_mm256_movemask_epi8(_mm256_cmpeq_epi8(
            _mm256_loadu_si256((const __m256i *)d), _mm256_set1_epi8(0x60)));
    }
    __attribute__((target("avx2"))) static inline unsigned int
    citemark_ticks_ucs2(const Py_UCS2 *d) {
        const __m256i tick = _mm256_set1_epi16(0x60);
        __m256i a = _mm256_cmpeq_epi16(_mm256_loadu_si256((const __m256i *)d), tick);
        __m256i b = _mm256_cmpeq_epi16(_mm256_loadu_si256((const __m256i *)(d + 16)), tick);
        return (unsigned int)_mm256_movemask_epi8(
            _mm256_permute4x64_epi64(_mm256_packs_epi16(a, b), 0xD8));
    }
    /* A run starts at a backtick after a unit that is none (or first in the vector when no
     * run is open from the vector before) and ends at the first unit after it that is
     * none.  Both masks are made at once, then read in pairs: in a vector the ends and
     * starts alternate, so a start's end is the next end bit. */
    #define CITEMARK_RUNS_AVX2(NAME, UNIT, TICKS)                                            \
    __attribute__((target("avx2"))) static Py_ssize_t                                       \
    NAME(const UNIT *d, Py_ssize_t lo, Py_ssize_t *pos, Py_ssize_t hi, long long offset,    \
         long long *out, Py_ssize_t room) {                                                 \
        Py_ssize_t i = *pos, count = 0, start = -1, escapes, end;                           \
        unsigned int mask, before, starts, ends;                                            \
        while (count < room && hi - i >= 32) {                                              \
            mask = TICKS(d + i);                                                            \
            before = (mask << 1) | (start >= 0); /* bit k: unit k - 1 is a backtick */      \
            starts = mask & ~before;                                                        \
            ends = ~mask & before;                                                          \
            while (ends) {                                                                  \
                if (start < 0) { /* (starts is not empty: an end follows a start) */        \
                    start = i + cm_ctz(starts);                                             \
                    starts &= starts - 1;                                                   \
                }                                                                           \
                end = i + cm_ctz(ends);                                                     \
                ends &= ends - 1;                                                           \
                escapes = 0;                                                                \
                while (start - escapes > lo && d[start - escapes - 1] == 0x5C) escapes++;   \
                out[0] = offset + start;                                                    \
                out[1] = offset + end;                                                      \
                out[2] = escapes % 2;                                                       \
                out += 3;                                                                   \
                start = -1;                                                                 \
                if (++count == room) {                                                      \
                    *pos = end;                                                             \
                    return count;                                                           \
                }                                                                           \
            }                                                                               \
            if (starts) start = i + cm_ctz(starts); /* open past the vector */             \
            i += 32;                                                                        \
        }                                                                                   \
        /* A run open where the whole vectors end is read on from there, not from its      \
         * start (a long run would be read twice); count < room (tested before the         \
         * vector, and no run was written since). */                                       \
        if (start >= 0 && count < room) {                                                   \
            while (i < hi && d[i] == 0x60) i++;                                             \
            escapes = 0;                                                                    \
            while (start - escapes > lo && d[start - escapes - 1] == 0x5C) escapes++;       \
            out[0] = offset + start;                                                        \
            out[1] = offset + i;                                                            \
            out[2] = escapes % 2;                                                           \
            count++;                                                                        \
        }                                                                                   \
        *pos = i;                                                                           \
        return count;                                                                       \
    }
    CITEMARK_RUNS_AVX2(citemark_runs_ucs1_avx2, Py_UCS1, citemark_ticks_ucs1)
    CITEMARK_RUNS_AVX2(citemark_runs_ucs2_avx2, Py_UCS2, citemark_ticks_ucs2)
    #endif

    /* _Pairing's online state, for the fused scan below: whether an opener waits (`used`:
     * _Pairing's entries of parts, 0 without one), the length that closes it and where its
     * span starts, and the walls' arrays (`walls` of `wall_room` written).  pos: where the
     * scan is; open: the start of a run open across a vector boundary (-1: none); opened:
     * where the last opener found by the scan ends (-1: none), the caller keeps the part of
     * the line after it (a store of the part at each opener cost a tenth of the scan). */
    typedef struct {
        Py_ssize_t used;
        long long want, wall_from;
        long long *wall_starts, *wall_ends;
        Py_ssize_t walls, wall_room;
        Py_ssize_t pos, open, opened;
    } citemark_online;

    /* The walls a vector may close: at most 16 run ends in 32 units (an end follows a
     * backtick that is no end), and the run left open where the vectors end. */
    #define CITEMARK_VECTOR_RUNS 17

    /* runs_into and _Pairing.pair_chunk in one pass, 32 units a step on the AVX2 path: each
     * run is paired as it is read off the bits (the twin's rule, as pair_chunk applies it),
     * none written to a buffer and read again; the backslashes are counted for an opener
     * only (a closer's length is its own).  Returns 1 when the walls lack the room of a
     * vector (the caller grows them and calls again: the state is in st), else 0 with
     * st->pos where the whole vectors before hi end (a run open there read to its end); 0
     * and st->pos unchanged without the path.  Reads: whole vectors before hi, and the
     * backslashes before a run back to lo. */
    #if defined(CM_AVX2)
    #define CITEMARK_PAIR_AVX2(NAME, UNIT, TICKS, ALL)                                       \
    __attribute__((target("avx2"))) static int                                              \
    NAME(const UNIT *d, Py_ssize_t lo, Py_ssize_t hi, long long offset, citemark_online *st) { \
        Py_ssize_t i = st->pos, start = st->open, escapes, end, used = st->used;            \
        Py_ssize_t walls = st->walls, wall_room = st->wall_room - CITEMARK_VECTOR_RUNS;     \
        long long want = st->want, wall_from = st->wall_from;                               \
        /* (locals: the stores below may alias st, as far as the compiler knows) */         \
        long long *wall_starts = st->wall_starts, *wall_ends = st->wall_ends;               \
        Py_ssize_t opened = st->opened;                                                     \
        unsigned int mask, before, starts, ends, closers, full;                             \
        int shift, short_of_room = 0;                                                       \
        while (hi - i >= 32) {                                                              \
            if (walls > wall_room) {                                                        \
                short_of_room = 1;                                                          \
                break;                                                                      \
            }                                                                               \
            if (start >= 0) {                                                               \
                /* Inside a run: its whole vectors of backticks passed at once (a run of   \
                 * thousands read a vector a step, its bits unread). */                     \
                while (hi - i >= 32 && ALL(d + i)) i += 32;                                 \
                if (hi - i < 32) break;                                                     \
            }                                                                               \
            mask = TICKS(d + i);                                                            \
            before = (mask << 1) | (start >= 0); /* bit k: unit k - 1 is a backtick */      \
            starts = mask & ~before;                                                        \
            ends = ~mask & before;                                                          \
            while (ends) {                                                                  \
                if (used != 0 && start < 0 && want <= 8) {                                  \
                    /* An opener waits for a short run, and no run is open here: the runs  \
                     * of its length that end in this vector found at once (a start k,     \
                     * backticks k .. k + want - 1, an end k + want), the others passed    \
                     * over (a closer's length is all that is read of a run). */           \
                    full = mask;                                                            \
                    for (shift = 1; shift < want; shift++) full &= mask >> shift;           \
                    closers = starts & (ends >> want) & full;                               \
                    if (!closers) {                                                         \
                        /* The run left open past the vector (a start after the last end)  \
                         * kept, the others passed over. */                                 \
                        starts &= ~((2u << (31 - __builtin_clz(ends))) - 1);                \
                        ends = 0;                                                           \
                        break;                                                              \
                    }                                                                       \
                    shift = cm_ctz(closers); /* its start; its end is 31 at most */         \
                    wall_starts[walls] = wall_from;                                         \
                    wall_ends[walls] = offset + i + shift + want;                           \
                    walls++;                                                                \
                    used = 0;                                                               \
                    /* The bits up to its start and its end dropped (2u << 31 is 0). */    \
                    starts &= ~((2u << shift) - 1);                                         \
                    ends &= ~((2u << (shift + want)) - 1);                                  \
                    continue;                                                               \
                }                                                                           \
                if (start < 0) { /* (starts is not empty: an end follows a start) */        \
                    start = i + cm_ctz(starts);                                             \
                    starts &= starts - 1;                                                   \
                }                                                                           \
                end = i + cm_ctz(ends);                                                     \
                ends &= ends - 1;                                                           \
                CITEMARK_PAIR_RUN(start, end)                                               \
                start = -1;                                                                 \
            }                                                                               \
            if (starts) start = i + cm_ctz(starts); /* open past the vector */             \
            i += 32;                                                                        \
        }                                                                                   \
        /* A run open where the whole vectors end is read on from there (with the room of  \
         * a vector, as a vector's runs). */                                                \
        if (!short_of_room && start >= 0) {                                                 \
            if (walls > wall_room) {                                                        \
                short_of_room = 1;                                                          \
            } else {                                                                        \
                while (i < hi && d[i] == 0x60) i++;                                         \
                CITEMARK_PAIR_RUN(start, i)                                                 \
                start = -1;                                                                 \
            }                                                                               \
        }                                                                                   \
        st->pos = i;                                                                        \
        st->open = start;                                                                   \
        st->used = used;                                                                    \
        st->want = want;                                                                    \
        st->wall_from = wall_from;                                                          \
        st->walls = walls;                                                                  \
        st->opened = opened;                                                                \
        return short_of_room;                                                               \
    }
    /* One run [START, END) through the pairing: without an opener (used 0) it opens one if
     * it is not empty once an escape is dropped (where it ends noted: the caller keeps the
     * part of the line after it); else it closes the opener if it is as long as wanted (a
     * wall from the opener, escape dropped, to its end; nothing kept then).  walls <=
     * wall_room + (the runs before it in this vector) < st->wall_room: inside the arrays. */
    #define CITEMARK_PAIR_RUN(START, END)                                                   \
        if (used == 0) {                                                                    \
            escapes = 0;                                                                    \
            while ((START) - escapes > lo && d[(START) - escapes - 1] == 0x5C) escapes++;   \
            escapes %= 2;                                                                   \
            if ((END) - (START) - escapes > 0) {                                            \
                want = (END) - (START) - escapes;                                           \
                wall_from = offset + (START) + escapes;                                     \
                opened = (END);                                                             \
                used = 4;                                                                   \
            }                                                                               \
        } else if ((END) - (START) == want) {                                               \
            wall_starts[walls] = wall_from;                                                 \
            wall_ends[walls] = offset + (END);                                              \
            walls++;                                                                        \
            used = 0;                                                                       \
        }
    /* Whether the 32 units from d are all backticks. */
    __attribute__((target("avx2"))) static inline int
    citemark_all_ticks_ucs1(const Py_UCS1 *d) {
        __m256i a = _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)d),
                                      _mm256_set1_epi8(0x60));
        return _mm256_testc_si256(a, _mm256_set1_epi8(-1));
    }
    __attribute__((target("avx2"))) static inline int
    citemark_all_ticks_ucs2(const Py_UCS2 *d) {
        const __m256i tick = _mm256_set1_epi16(0x60);
        __m256i a = _mm256_cmpeq_epi16(_mm256_loadu_si256((const __m256i *)d), tick);
        __m256i b = _mm256_cmpeq_epi16(_mm256_loadu_si256((const __m256i *)(d + 16)), tick);
        return _mm256_testc_si256(_mm256_and_si256(a, b), _mm256_set1_epi8(-1));
    }
    CITEMARK_PAIR_AVX2(citemark_pair_ucs1_avx2, Py_UCS1, citemark_ticks_ucs1,
                       citemark_all_ticks_ucs1)
    CITEMARK_PAIR_AVX2(citemark_pair_ucs2_avx2, Py_UCS2, citemark_ticks_ucs2,
                       citemark_all_ticks_ucs2)
    #endif

    /* The first index in d[i:end] of a unit equal to a, b or c (repeat one to look for
     * fewer: find3), or of one in low..low + span (unsigned: find_range), else end: one pass
     * for a set of characters where a search for each read the text once each.  Vectors
     * while a whole one fits before end (two at a time on the AVX2 path, as cm_find), then
     * a unit at a time: reads only d[i:end].  HITS(x) is a vector's lanes in the set. */
    #define CITEMARK_SET3(x) \
        OR(OR(CMPEQ(x, SET1(a)), CMPEQ(x, SET1(b))), CMPEQ(x, SET1(c)))
    /* x - low at most span, unsigned: the difference is its minimum with span. */
    #define CITEMARK_RANGE(x) CMPEQ(MIN(SUB(x, SET1(low)), SET1(span)), SUB(x, SET1(low)))
    #define CITEMARK_IN_SET3(u) ((u) == a || (u) == b || (u) == c)
    #define CITEMARK_IN_RANGE(u) ((UNIT)((u) - low) <= span)
    #define CITEMARK_FIND_AVX2(NAME, PARAMS, HITS, IN)                                       \
    __attribute__((target("avx2"))) static Py_ssize_t                                       \
    NAME(const UNIT *d, Py_ssize_t i, Py_ssize_t end, PARAMS) {                             \
        const Py_ssize_t width = 32 / sizeof(UNIT);                                         \
        __m256i x, y, hit;                                                                  \
        unsigned int mask;                                                                  \
        for (; end - i >= 2 * width; i += 2 * width) {                                      \
            x = _mm256_loadu_si256((const __m256i *)(d + i));                               \
            y = _mm256_loadu_si256((const __m256i *)(d + i + width));                       \
            x = HITS(x);                                                                    \
            y = HITS(y);                                                                    \
            hit = _mm256_or_si256(x, y);                                                    \
            if (!_mm256_testz_si256(hit, hit)) {                                            \
                mask = (unsigned int)_mm256_movemask_epi8(x);                               \
                if (mask) return i + cm_ctz(mask) / (int)sizeof(UNIT);                      \
                mask = (unsigned int)_mm256_movemask_epi8(y);                               \
                return i + width + cm_ctz(mask) / (int)sizeof(UNIT);                        \
            }                                                                               \
        }                                                                                   \
        for (; i < end; i++) {                                                              \
            if (IN(d[i])) return i;                                                         \
        }                                                                                   \
        return end;                                                                         \
    }
    #define CITEMARK_FIND_SSE2(NAME, PARAMS, HITS, IN, AVX2_NAME, ARGS)                      \
    static inline Py_ssize_t                                                                \
    NAME(const UNIT *d, Py_ssize_t i, Py_ssize_t end, PARAMS) {                             \
        const Py_ssize_t width = 16 / sizeof(UNIT);                                         \
        unsigned int mask;                                                                  \
        CITEMARK_WIDE_CALL(AVX2_NAME, ARGS)                                                 \
        if (cm_level == CM_VECTOR) {                                                        \
            for (; end - i >= width; i += width) {                                          \
                mask = (unsigned int)_mm_movemask_epi8(                                     \
                    HITS(_mm_loadu_si128((const __m128i *)(d + i))));                       \
                if (mask) return i + cm_ctz(mask) / (int)sizeof(UNIT);                      \
            }                                                                               \
        }                                                                                   \
        for (; i < end; i++) {                                                              \
            if (IN(d[i])) return i;                                                         \
        }                                                                                   \
        return end;                                                                         \
    }
    #define CITEMARK_FIND_PLAIN(NAME, PARAMS, HITS, IN, AVX2_NAME, ARGS)                     \
    static inline Py_ssize_t                                                                \
    NAME(const UNIT *d, Py_ssize_t i, Py_ssize_t end, PARAMS) {                             \
        for (; i < end; i++) {                                                              \
            if (IN(d[i])) return i;                                                         \
        }                                                                                   \
        return end;                                                                         \
    }
    #if defined(CM_AVX2)
    #define CITEMARK_WIDE_CALL(AVX2_NAME, ARGS)                                              \
        if (cm_level == CM_WIDE_VECTOR) return AVX2_NAME ARGS;
    #else
    #define CITEMARK_WIDE_CALL(AVX2_NAME, ARGS)
    #endif
    #if defined(CM_SSE2)
    #define CITEMARK_FIND CITEMARK_FIND_SSE2
    #else
    #define CITEMARK_FIND CITEMARK_FIND_PLAIN
    #endif
    #define CITEMARK_SET3_PARAMS UNIT a, UNIT b, UNIT c
    #define CITEMARK_RANGE_PARAMS UNIT low, UNIT span

    /* Each width: its unit, and the vector operations (the unsigned minimum of SSE2 is
     * SSE4.1's for 16 and 32 bits: made of a signed one with the sign bits flipped). */
    #define UNIT Py_UCS1
    #if defined(CM_AVX2)
    #define SET1(u) _mm256_set1_epi8((char)(u))
    #define CMPEQ _mm256_cmpeq_epi8
    #define OR _mm256_or_si256
    #define SUB _mm256_sub_epi8
    #define MIN _mm256_min_epu8
    CITEMARK_FIND_AVX2(citemark_find3_ucs1_avx2, CITEMARK_SET3_PARAMS, CITEMARK_SET3,
                       CITEMARK_IN_SET3)
    CITEMARK_FIND_AVX2(citemark_range_ucs1_avx2, CITEMARK_RANGE_PARAMS, CITEMARK_RANGE,
                       CITEMARK_IN_RANGE)
    #undef SET1
    #undef CMPEQ
    #undef OR
    #undef SUB
    #undef MIN
    #endif
    #if defined(CM_SSE2)
    #define SET1(u) _mm_set1_epi8((char)(u))
    #define CMPEQ _mm_cmpeq_epi8
    #define OR _mm_or_si128
    #define SUB _mm_sub_epi8
    #define MIN _mm_min_epu8
    #endif
    CITEMARK_FIND(citemark_find3_ucs1, CITEMARK_SET3_PARAMS, CITEMARK_SET3, CITEMARK_IN_SET3,
                  citemark_find3_ucs1_avx2, (d, i, end, a, b, c))
    CITEMARK_FIND(citemark_range_ucs1, CITEMARK_RANGE_PARAMS, CITEMARK_RANGE,
                  CITEMARK_IN_RANGE, citemark_range_ucs1_avx2, (d, i, end, low, span))
    #if defined(CM_SSE2)
    #undef SET1
    #undef CMPEQ
    #undef OR
    #undef SUB
    #undef MIN
    #endif
    #undef UNIT

    #define UNIT Py_UCS2
    #if defined(CM_AVX2)
    #define SET1(u) _mm256_set1_epi16((short)(u))
    #define CMPEQ _mm256_cmpeq_epi16
    #define OR _mm256_or_si256
    #define SUB _mm256_sub_epi16
    #define MIN _mm256_min_epu16
    CITEMARK_FIND_AVX2(citemark_find3_ucs2_avx2, CITEMARK_SET3_PARAMS, CITEMARK_SET3,
                       CITEMARK_IN_SET3)
    CITEMARK_FIND_AVX2(citemark_range_ucs2_avx2, CITEMARK_RANGE_PARAMS, CITEMARK_RANGE,
                       CITEMARK_IN_RANGE)
    #undef SET1
    #undef CMPEQ
    #undef OR
    #undef SUB
    #undef MIN
    #endif
    #if defined(CM_SSE2)
    static inline __m128i citemark_min_epu16(__m128i x, __m128i y) {
        const __m128i sign = _mm_set1_epi16((short)0x8000);
        return _mm_xor_si128(_mm_min_epi16(_mm_xor_si128(x, sign), _mm_xor_si128(y, sign)),
                             sign);
    }
    #define SET1(u) _mm_set1_epi16((short)(u))
    #define CMPEQ _mm_cmpeq_epi16
    #define OR _mm_or_si128
    #define SUB _mm_sub_epi16
    #define MIN citemark_min_epu16
    #endif
    CITEMARK_FIND(citemark_find3_ucs2, CITEMARK_SET3_PARAMS, CITEMARK_SET3, CITEMARK_IN_SET3,
                  citemark_find3_ucs2_avx2, (d, i, end, a, b, c))
    CITEMARK_FIND(citemark_range_ucs2, CITEMARK_RANGE_PARAMS, CITEMARK_RANGE,
                  CITEMARK_IN_RANGE, citemark_range_ucs2_avx2, (d, i, end, low, span))
    #if defined(CM_SSE2)
    #undef SET1
    #undef CMPEQ
    #undef OR
    #undef SUB
    #undef MIN
    #endif
    #undef UNIT

    #define UNIT Py_UCS4
    #if defined(CM_AVX2)
    #define SET1(u) _mm256_set1_epi32((int)(u))
    #define CMPEQ _mm256_cmpeq_epi32
    #define OR _mm256_or_si256
    #define SUB _mm256_sub_epi32
    #define MIN _mm256_min_epu32
    CITEMARK_FIND_AVX2(citemark_find3_ucs4_avx2, CITEMARK_SET3_PARAMS, CITEMARK_SET3,
                       CITEMARK_IN_SET3)
    CITEMARK_FIND_AVX2(citemark_range_ucs4_avx2, CITEMARK_RANGE_PARAMS, CITEMARK_RANGE,
                       CITEMARK_IN_RANGE)
    #undef SET1
    #undef CMPEQ
    #undef OR
    #undef SUB
    #undef MIN
    #endif
    #if defined(CM_SSE2)
    static inline __m128i citemark_min_epu32(__m128i x, __m128i y) {
        /* Units are at most 0x10FFFF, differences wrap round: signed order with the sign
         * bits flipped is the unsigned order. */
        const __m128i sign = _mm_set1_epi32((int)0x80000000u);
        __m128i xs = _mm_xor_si128(x, sign), ys = _mm_xor_si128(y, sign);
        __m128i less = _mm_cmplt_epi32(xs, ys);
        return _mm_or_si128(_mm_and_si128(less, x), _mm_andnot_si128(less, y));
    }
    #define SET1(u) _mm_set1_epi32((int)(u))
    #define CMPEQ _mm_cmpeq_epi32
    #define OR _mm_or_si128
    #define SUB _mm_sub_epi32
    #define MIN citemark_min_epu32
    #endif
    CITEMARK_FIND(citemark_find3_ucs4, CITEMARK_SET3_PARAMS, CITEMARK_SET3, CITEMARK_IN_SET3,
                  citemark_find3_ucs4_avx2, (d, i, end, a, b, c))
    CITEMARK_FIND(citemark_range_ucs4, CITEMARK_RANGE_PARAMS, CITEMARK_RANGE,
                  CITEMARK_IN_RANGE, citemark_range_ucs4_avx2, (d, i, end, low, span))
    #if defined(CM_SSE2)
    #undef SET1
    #undef CMPEQ
    #undef OR
    #undef SUB
    #undef MIN
    #endif
    #undef UNIT

    /* Which of the ASCII units a, b, c (0x01 to 0x7F) occur in d[0:n]: bit 1, 2, 4.  One pass
     * with no branch per vector (every unit packed to a byte: a unit above 0xFF becomes 0xFF
     * or 0, neither of them one of these), where a search for each read the text once each;
     * the vector paths only, -1 without them (the caller searches then). */
    #define CITEMARK_PRESENT_TAIL                                                            \
        for (; i < n; i++) {                                                                \
            found |= (d[i] == a) | ((d[i] == b) << 1) | ((d[i] == c) << 2);                 \
        }
    #if defined(CM_AVX2)
    __attribute__((target("avx2"))) static int
    citemark_present_ucs1_avx2(const Py_UCS1 *d, Py_ssize_t n, int a, int b, int c) {
        const __m256i va = _mm256_set1_epi8((char)a), vb = _mm256_set1_epi8((char)b);
        const __m256i vc = _mm256_set1_epi8((char)c);
        __m256i x, ha = _mm256_setzero_si256(), hb = ha, hc = ha;
        Py_ssize_t i = 0;
        int found;
        for (; n - i >= 32; i += 32) {
            x = _mm256_loadu_si256((const __m256i *)(d + i));
            ha = _mm256_or_si256(ha, _mm256_cmpeq_epi8(x, va));
            hb = _mm256_or_si256(hb, _mm256_cmpeq_epi8(x, vb));
            hc = _mm256_or_si256(hc, _mm256_cmpeq_epi8(x, vc));
        }
        found = (!_mm256_testz_si256(ha, ha)) | ((!_mm256_testz_si256(hb, hb)) << 1) |
                ((!_mm256_testz_si256(hc, hc)) << 2);
        CITEMARK_PRESENT_TAIL
        return found;
    }
    __attribute__((target("avx2"))) static int
    citemark_present_ucs2_avx2(const Py_UCS2 *d, Py_ssize_t n, int a, int b, int c) {
        const __m256i va = _mm256_set1_epi8((char)a), vb = _mm256_set1_epi8((char)b);
        const __m256i vc = _mm256_set1_epi8((char)c);
        __m256i x, ha = _mm256_setzero_si256(), hb = ha, hc = ha;
        Py_ssize_t i = 0;
        int found;
        for (; n - i >= 32; i += 32) {
            /* packus: signed saturation, so a unit of 0x8000 or above becomes 0 */
            x = _mm256_packus_epi16(_mm256_loadu_si256((const __m256i *)(d + i)),
                                    _mm256_loadu_si256((const __m256i *)(d + i + 16)));
            ha = _mm256_or_si256(ha, _mm256_cmpeq_epi8(x, va));
            hb = _mm256_or_si256(hb, _mm256_cmpeq_epi8(x, vb));
            hc = _mm256_or_si256(hc, _mm256_cmpeq_epi8(x, vc));
        }
        found = (!_mm256_testz_si256(ha, ha)) | ((!_mm256_testz_si256(hb, hb)) << 1) |
                ((!_mm256_testz_si256(hc, hc)) << 2);
        CITEMARK_PRESENT_TAIL
        return found;
    }
    #endif
    #if defined(CM_SSE2)
    static int
    citemark_present_ucs2_sse2(const Py_UCS2 *d, Py_ssize_t n, int a, int b, int c) {
        const __m128i va = _mm_set1_epi8((char)a), vb = _mm_set1_epi8((char)b);
        const __m128i vc = _mm_set1_epi8((char)c);
        __m128i x, ha = _mm_setzero_si128(), hb = ha, hc = ha;
        Py_ssize_t i = 0;
        int found;
        for (; n - i >= 16; i += 16) {
            x = _mm_packus_epi16(_mm_loadu_si128((const __m128i *)(d + i)),
                                 _mm_loadu_si128((const __m128i *)(d + i + 8)));
            ha = _mm_or_si128(ha, _mm_cmpeq_epi8(x, va));
            hb = _mm_or_si128(hb, _mm_cmpeq_epi8(x, vb));
            hc = _mm_or_si128(hc, _mm_cmpeq_epi8(x, vc));
        }
        found = (_mm_movemask_epi8(ha) != 0) | ((_mm_movemask_epi8(hb) != 0) << 1) |
                ((_mm_movemask_epi8(hc) != 0) << 2);
        CITEMARK_PRESENT_TAIL
        return found;
    }
    #endif
    static inline int
    citemark_present_ucs1(const Py_UCS1 *d, Py_ssize_t n, int a, int b, int c) {
    #if defined(CM_AVX2)
        if (cm_level == CM_WIDE_VECTOR) return citemark_present_ucs1_avx2(d, n, a, b, c);
    #endif
        return -1;
    }
    static inline int
    citemark_present_ucs2(const Py_UCS2 *d, Py_ssize_t n, int a, int b, int c) {
    #if defined(CM_AVX2)
        if (cm_level == CM_WIDE_VECTOR) return citemark_present_ucs2_avx2(d, n, a, b, c);
    #endif
    #if defined(CM_SSE2)
        if (cm_level == CM_VECTOR) return citemark_present_ucs2_sse2(d, n, a, b, c);
    #endif
        return -1;
    }

    /* Whether the fused scan runs (the AVX2 path). */
    static inline int citemark_pairs_vectors(void) {
    #if defined(CM_AVX2)
        return cm_level == CM_WIDE_VECTOR;
    #else
        return 0;
    #endif
    }
    static inline int
    citemark_pair_ucs1(const Py_UCS1 *d, Py_ssize_t lo, Py_ssize_t hi, long long offset,
                       citemark_online *st) {
    #if defined(CM_AVX2)
        if (cm_level == CM_WIDE_VECTOR) return citemark_pair_ucs1_avx2(d, lo, hi, offset, st);
    #endif
        return 0;
    }
    static inline int
    citemark_pair_ucs2(const Py_UCS2 *d, Py_ssize_t lo, Py_ssize_t hi, long long offset,
                       citemark_online *st) {
    #if defined(CM_AVX2)
        if (cm_level == CM_WIDE_VECTOR) return citemark_pair_ucs2_avx2(d, lo, hi, offset, st);
    #endif
        return 0;
    }

    static inline Py_ssize_t
    citemark_runs_ucs1(const Py_UCS1 *d, Py_ssize_t lo, Py_ssize_t *pos, Py_ssize_t hi,
                       long long offset, long long *out, Py_ssize_t room) {
    #if defined(CM_AVX2)
        if (cm_level == CM_WIDE_VECTOR)
            return citemark_runs_ucs1_avx2(d, lo, pos, hi, offset, out, room);
    #endif
        return 0;
    }
    static inline Py_ssize_t
    citemark_runs_ucs2(const Py_UCS2 *d, Py_ssize_t lo, Py_ssize_t *pos, Py_ssize_t hi,
                       long long offset, long long *out, Py_ssize_t room) {
    #if defined(CM_AVX2)
        if (cm_level == CM_WIDE_VECTOR)
            return citemark_runs_ucs2_avx2(d, lo, pos, hi, offset, out, room);
    #endif
        return 0;
    }

    /* word_end's scan, 8 units a step on the vector path: the index of the first unit that
     * may end the glued word (at most U+0020, the START, the STOP, U+0085 to U+00A0,
     * U+1680, U+2000 to U+205F, U+3000: the caller decides), or where the whole vectors
     * before size end (pos itself without the path).  SSE2, inlined into the scan: the
     * usual glued word is a few vectors long, and a call to an AVX2 routine for each of
     * thousands of them cost more than the wider vectors save. */
    #if defined(CM_SSE2)
    static inline __m128i
    citemark_within_sse2(__m128i v, short low, short span) {
        /* 0xFFFF where low <= v <= low + span (unsigned): v - low at most span */
        __m128i offset = _mm_sub_epi16(v, _mm_set1_epi16(low));
        return _mm_cmpeq_epi16(_mm_subs_epu16(offset, _mm_set1_epi16(span)),
                               _mm_setzero_si128());
    }
    #endif
    static inline Py_ssize_t
    citemark_word_candidate_ucs2(const Py_UCS2 *d, Py_ssize_t pos, Py_ssize_t size,
                                 Py_UCS4 start, Py_UCS4 stop) {
    #if defined(CM_SSE2)
        if (cm_level >= CM_VECTOR) {
            const __m128i starts = _mm_set1_epi16((short)start);
            const __m128i stops = _mm_set1_epi16((short)stop);
            for (; size - pos >= 8; pos += 8) {
                __m128i v = _mm_loadu_si128((const __m128i *)(d + pos));
                __m128i hit = _mm_or_si128(
                    _mm_or_si128(_mm_cmpeq_epi16(v, starts), _mm_cmpeq_epi16(v, stops)),
                    _mm_or_si128(citemark_within_sse2(v, 0, 0x20),
                                 citemark_within_sse2(v, 0x85, 0xA0 - 0x85)));
                hit = _mm_or_si128(hit, _mm_or_si128(
                    _mm_or_si128(_mm_cmpeq_epi16(v, _mm_set1_epi16(0x1680)),
                                 _mm_cmpeq_epi16(v, _mm_set1_epi16(0x3000))),
                    citemark_within_sse2(v, 0x2000, 0x205F - 0x2000)));
                unsigned int mask = (unsigned int)_mm_movemask_epi8(hit);
                if (mask) return pos + (cm_ctz(mask) >> 1);
            }
        }
    #endif
        return pos;
    }

    static inline Py_ssize_t
    citemark_skip_filler_ucs1(const Py_UCS1 *d, Py_ssize_t pos, Py_ssize_t stop,
                              const unsigned char *table) {
    #if defined(CM_AVX2)
        if (cm_level == CM_WIDE_VECTOR) return citemark_skip_filler_ucs1_avx2(d, pos, stop, table);
    #endif
        return pos;
    }

    static inline Py_ssize_t
    citemark_skip_filler_ucs2(const Py_UCS2 *d, Py_ssize_t pos, Py_ssize_t stop,
                              const unsigned char *table) {
    #if defined(CM_AVX2)
        if (cm_level == CM_WIDE_VECTOR) return citemark_skip_filler_ucs2_avx2(d, pos, stop, table);
    #endif
        return pos;
    }
    """
    Py_ssize_t vector_runs_ucs1 "citemark_runs_ucs1"(
        const Py_UCS1* data, Py_ssize_t lo, Py_ssize_t* pos, Py_ssize_t hi,
        long long offset, long long* out, Py_ssize_t room) noexcept nogil
    Py_ssize_t vector_runs_ucs2 "citemark_runs_ucs2"(
        const Py_UCS2* data, Py_ssize_t lo, Py_ssize_t* pos, Py_ssize_t hi,
        long long offset, long long* out, Py_ssize_t room) noexcept nogil
    Py_ssize_t find3_ucs1 "citemark_find3_ucs1"(
        const Py_UCS1* data, Py_ssize_t i, Py_ssize_t end, Py_UCS1 a, Py_UCS1 b,
        Py_UCS1 c) noexcept nogil
    Py_ssize_t find3_ucs2 "citemark_find3_ucs2"(
        const Py_UCS2* data, Py_ssize_t i, Py_ssize_t end, Py_UCS2 a, Py_UCS2 b,
        Py_UCS2 c) noexcept nogil
    Py_ssize_t find3_ucs4 "citemark_find3_ucs4"(
        const Py_UCS4* data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 a, Py_UCS4 b,
        Py_UCS4 c) noexcept nogil
    Py_ssize_t range_ucs1 "citemark_range_ucs1"(
        const Py_UCS1* data, Py_ssize_t i, Py_ssize_t end, Py_UCS1 low,
        Py_UCS1 span) noexcept nogil
    Py_ssize_t range_ucs2 "citemark_range_ucs2"(
        const Py_UCS2* data, Py_ssize_t i, Py_ssize_t end, Py_UCS2 low,
        Py_UCS2 span) noexcept nogil
    Py_ssize_t range_ucs4 "citemark_range_ucs4"(
        const Py_UCS4* data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 low,
        Py_UCS4 span) noexcept nogil
    int present_ucs1 "citemark_present_ucs1"(
        const Py_UCS1* data, Py_ssize_t n, int a, int b, int c) noexcept nogil
    int present_ucs2 "citemark_present_ucs2"(
        const Py_UCS2* data, Py_ssize_t n, int a, int b, int c) noexcept nogil
    ctypedef struct citemark_online:
        Py_ssize_t used
        long long want, wall_from
        long long* wall_starts
        long long* wall_ends
        Py_ssize_t walls, wall_room
        Py_ssize_t pos, open, opened
    enum: VECTOR_RUNS "CITEMARK_VECTOR_RUNS"
    bint pairs_vectors "citemark_pairs_vectors"() noexcept nogil
    int pair_vectors_ucs1 "citemark_pair_ucs1"(
        const Py_UCS1* data, Py_ssize_t lo, Py_ssize_t hi, long long offset,
        citemark_online* state) noexcept nogil
    int pair_vectors_ucs2 "citemark_pair_ucs2"(
        const Py_UCS2* data, Py_ssize_t lo, Py_ssize_t hi, long long offset,
        citemark_online* state) noexcept nogil
    Py_ssize_t word_candidate_ucs2 "citemark_word_candidate_ucs2"(
        const Py_UCS2* data, Py_ssize_t pos, Py_ssize_t size, Py_UCS4 start_unit,
        Py_UCS4 stop_unit) noexcept nogil
    Py_ssize_t skip_filler_ucs1 "citemark_skip_filler_ucs1"(
        const Py_UCS1* data, Py_ssize_t pos, Py_ssize_t stop,
        const unsigned char* table) noexcept nogil
    Py_ssize_t skip_filler_ucs2 "citemark_skip_filler_ucs2"(
        const Py_UCS2* data, Py_ssize_t pos, Py_ssize_t stop,
        const unsigned char* table) noexcept nogil
    Py_ssize_t maybe_letter_ucs1 "citemark_maybe_letter_ucs1"(
        const Py_UCS1* data, Py_ssize_t pos, Py_ssize_t stop) noexcept nogil
    Py_ssize_t maybe_letter_ucs2 "citemark_maybe_letter_ucs2"(
        const Py_UCS2* data, Py_ssize_t pos, Py_ssize_t stop) noexcept nogil
    Py_ssize_t maybe_letter_ucs4 "citemark_maybe_letter_ucs4"(
        const Py_UCS4* data, Py_ssize_t pos, Py_ssize_t stop) noexcept nogil

# The header's vector path is chosen per module (its state is static): choose it here too.
cm_init()

# The storage widths of a str.
ctypedef fused text_t:
    Py_UCS1
    Py_UCS2
    Py_UCS4

cdef enum:
    BACKTICK = 0x60
    BACKSLASH = 0x5C

cdef enum:
    CR = 0x0D
    LF = 0x0A

if twin.LINE_BREAKS != "\\r\\n|\\r|\\n":
    raise ImportError("commonmark_c splits lines at CR LF, CR and LF only")

# BLOCK_STARTS as a table over ASCII (every character of it is ASCII, checked here).
cdef bint block_start[128]
for _unit in range(128):
    block_start[_unit] = False
for _char in twin.BLOCK_STARTS:
    if ord(_char) >= 128:
        raise ImportError("commonmark_c expects ASCII block starts")
    block_start[ord(_char)] = True

if twin.RUNS_TYPECODE != "q" or _array_module.array("q").itemsize != sizeof(long long):
    raise ImportError("commonmark_c keeps runs in arrays of long long ('q')")
cdef array.array RUNS_TEMPLATE = _array_module.array("q")

cdef Py_ssize_t FEW_RUNS = twin.FEW_RUNS


cdef Py_ssize_t as_index(object value, str name) except -1:
    if type(value) is not int:
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    # Converted in C, then checked (a comparison of Python ints made one at every call).
    cdef Py_ssize_t index = PyLong_AsSsize_t(value)
    if index == -1 and PyErr_Occurred():
        PyErr_Clear()  # an int too large for an index
        raise ValueError(f"{name} must be a non-negative index")
    if index < 0:
        raise ValueError(f"{name} must be a non-negative index")
    return index


cdef int consumed_span(list spans, Py_ssize_t k, Py_ssize_t* start,
                       Py_ssize_t* end) except -1:
    """The bounds of spans[k] (k < len(spans)), an item of validate's `consumed` list."""
    cdef object item = spans[k]
    if type(item) is not tuple or len(<tuple>item) != 3:
        raise TypeError("consumed must hold (start, end, is_citation) tuples")
    start[0] = as_index((<tuple>item)[0], "consumed")
    end[0] = as_index((<tuple>item)[1], "consumed")
    return 0


cdef int gap_before(list spans, Py_ssize_t gap, Py_ssize_t first, Py_ssize_t size,
                    Py_ssize_t* last, Py_ssize_t* after) except -1:
    """The gap text[first:last] before spans[gap] (before the text's end for gap ==
    len(spans)) and where that span ends, the spans being checked sorted and disjoint."""
    if gap < len(spans):
        consumed_span(spans, gap, last, after)
    else:
        last[0] = after[0] = size
    if not first <= last[0] <= after[0] <= size:
        raise ValueError("consumed must hold sorted, disjoint spans within text")
    return 0


def runs(str text not None, first, end, base):
    cdef Py_ssize_t lo = as_index(first, "first")
    cdef Py_ssize_t hi = as_index(end, "end")
    cdef Py_ssize_t offset = as_index(base, "base")
    cdef Py_ssize_t n = len(text)
    if not lo <= hi <= n:
        raise ValueError("first and end must satisfy first <= end <= len(text)")
    if offset > PY_SSIZE_T_MAX - n:
        raise ValueError("base + len(text) must fit in an index")
    cdef array.array found = array.clone(RUNS_TEMPLATE, 0, False)
    new_pairing(found, None, False).take(PyUnicode_KIND(text), PyUnicode_DATA(text), lo, hi,
                                         offset)
    return found


cdef extern from *:
    """
    #include <string.h>
    /* Eight bytes from p, wherever p points (memcpy: no alignment needed). */
    static inline unsigned long long citemark_load8(const void *p) {
        unsigned long long word;
        memcpy(&word, p, 8);
        return word;
    }
    """
    unsigned long long load8 "citemark_load8"(const void* p) noexcept nogil


cdef Py_ssize_t runs_into(const text_t* data, Py_ssize_t lo, Py_ssize_t* pos, Py_ssize_t hi,
                          Py_ssize_t offset, long long* out, Py_ssize_t room) noexcept:
    # The runs of backticks in data[pos[0]:hi], at most `room` of them, written to out
    # (start + offset, end + offset, escaped: three entries each); pos[0] moved past the
    # last one written (to hi when none is left).  The backslashes before a run are counted
    # back to lo at most.  Every read is in [lo, hi): inside the string.
    cdef Py_ssize_t count = 0, i = pos[0], at, near, escapes
    # A whole word of backticks (8 bytes), for the long runs: the same bytes whatever the
    # byte order, as every unit in it is the same.
    cdef unsigned long long ticks
    if text_t is Py_UCS1:
        ticks = 0x6060606060606060ULL
    elif text_t is Py_UCS2:
        ticks = 0x0060006000600060ULL
    else:
        ticks = 0x0000006000000060ULL
    cdef Py_ssize_t step = 8 // sizeof(text_t)  # units in a word
    # The runs in the whole vectors first (see citemark_runs_ucs1), the rest below.
    if text_t is Py_UCS1:
        count = vector_runs_ucs1(data, lo, &i, hi, offset, out, room)
    elif text_t is Py_UCS2:
        count = vector_runs_ucs2(data, lo, &i, hi, offset, out, room)
    out += 3 * count
    while i < hi and count < room:
        # The next backtick: the next few characters looked at first (runs close together
        # cost a vector search's set-up each otherwise), then the vector search.
        near = i + 8 if hi - i > 8 else hi
        while i < near and data[i] != BACKTICK:
            i += 1
        if i == near and i < hi:
            i = next_unit(data, BACKTICK, i, hi)
        if i == hi:
            break
        at = i
        i += 1
        # A word at a time while a whole one is backticks (reads below i + step <= hi).
        while hi - i >= step and load8(data + i) == ticks:
            i += step
        while i < hi and data[i] == BACKTICK:
            i += 1
        # Most runs follow no backslash: count them only when one is there.  The count
        # stops at lo, so with the run scan every character is read at most twice.
        escapes = 0
        while at - escapes > lo and data[at - escapes - 1] == BACKSLASH:
            escapes += 1
        out[0] = offset + at  # offset + i <= offset + len(text): no overflow
        out[1] = offset + i
        out[2] = escapes % 2
        out += 3
        count += 1
    pos[0] = i
    return count


cdef int check_runs(object value, str name) except -1:
    if type(value) is not _array_module.array or (<array.array>value).ob_descr.typecode != b"q":
        raise TypeError(f"{name} must be an array('q') of runs, not {type(value).__name__}")
    if Py_SIZE(value) % 3:
        raise ValueError(f"{name} must hold whole (start, end, escaped) triples")
    return 0


@cython.final
cdef class _Walls:
    """Where the code spans found go: appended to a list as (start, end) tuples (`out`, for
    the functions that take one), or into two arrays of longs (the whole scan: a Python
    tuple and two ints per span cost as much as the scan itself), handed over as they are
    (a copy would read them all again into freshly faulted pages)."""

    cdef list out  # None: the arrays
    cdef array.array starts  # room entries each once grown (None before), count in use
    cdef array.array ends
    cdef Py_ssize_t count
    cdef Py_ssize_t room

    cdef inline int add(self, long long start, long long end) except -1:
        # (inline, the growth and the list apart: a call per span of thousands cost as much
        # as their pairing)
        if self.out is not None:
            return self.append(start, end)
        if self.count == self.room:
            self.grow()
        # count < room now: inside both.
        self.starts.data.as_longlongs[self.count] = start
        self.ends.data.as_longlongs[self.count] = end
        self.count += 1
        return 0

    cdef int append(self, long long start, long long end) except -1:
        self.out.append((start, end))
        return 0

    cdef int grow(self) except -1:
        # Four times as much (the count at most the text's length: no overflow): the copies
        # of a growth (realloc) were 4% of the code scan's time on thousands of code spans
        # at half as much again (as_arrays gives back what is not used).
        cdef Py_ssize_t room = 4 * self.room + 16
        if self.starts is None:
            self.starts = array.clone(RUNS_TEMPLATE, room, False)
            self.ends = array.clone(RUNS_TEMPLATE, room, False)
        else:
            array.resize(self.starts, room)  # raises MemoryError on failure
            array.resize(self.ends, room)
        self.room = room
        return 0

    cdef list as_list(self):
        if self.out is not None:
            return self.out
        cdef Py_ssize_t index
        return [(self.starts.data.as_longlongs[index], self.ends.data.as_longlongs[index])
                for index in range(self.count)]

    cdef tuple as_arrays(self):
        # The arrays themselves, cut to their count (the walls are not added to after).
        if self.starts is None:
            return array.clone(RUNS_TEMPLATE, 0, False), array.clone(RUNS_TEMPLATE, 0, False)
        array.resize(self.starts, self.count)
        array.resize(self.ends, self.count)
        self.room = self.count
        return self.starts, self.ends


cdef _Walls list_walls(list walls):
    cdef _Walls sink = _Walls()
    sink.out = walls
    return sink


cdef enum:
    CHUNK_RUNS = 256  # runs found at a time, into a buffer on the stack (6 KB)


@cython.final
cdef class _Pairing:
    """Where the runs of one paragraph go on their way to its code spans.

    Collecting (`online` False: `runs`, `plain`), every run is appended to the array `runs`
    and the paragraph's end pairs them all.  Online (the whole scan), a run is paired as it
    comes: the opener waiting (the first run kept) is closed by the first later run of its
    length, the twin's rule.  An opener still open at the paragraph's end closes nothing:
    the runs after it are then paired as `pair` pairs them (the rule reads on from the next
    run), read again from the parts of the lines after it, which are all that is kept
    (`parts`: a few entries a line, where keeping the runs after an opener wrote and read
    back three entries for each of them, most of the online scan's time on thousands of
    short code spans).  Each run is read twice at most: once as it comes, once again if
    the opener before it never closes."""

    cdef array.array runs  # collecting
    cdef _Walls walls
    cdef bint online
    # online: (lo, from, hi, offset) of each part of a line to read again, text[from:hi]
    # with its backslashes counted back to lo; none without an opener
    cdef long long* parts
    cdef Py_ssize_t used  # entries of parts in use (four a part)
    cdef Py_ssize_t room  # entries of parts allocated
    cdef long long want  # online, an opener waiting: the length of the run that closes it
    cdef long long wall_from  # ... and where its code span starts
    cdef int kind  # online: the text the parts are of (the walker's, alive while it scans)
    cdef const void* data

    def __dealloc__(self):
        PyMem_Free(self.parts)

    cdef int take(self, int kind, const void* data, Py_ssize_t lo, Py_ssize_t hi,
                  Py_ssize_t offset) except -1:
        # The runs of text[lo:hi] (lo <= hi <= len(text); offset + len(text) fits in an
        # index: checked by the callers), found a chunk at a time and handed on.
        cdef long long chunk[3 * CHUNK_RUNS]
        cdef Py_ssize_t pos = lo, count
        if self.online:
            self.kind = kind
            self.data = data
            if self.used:  # an opener waits: this line is read again should it not close
                self.keep(lo, lo, hi, offset)
            if self.walls.out is None and (kind == 1 or kind == 2) and hi - lo >= 32 and \
                    pairs_vectors():
                pos = self.pair_vectors(kind, data, lo, hi, offset)  # the rest below
        while pos < hi:
            if kind == 1:
                count = runs_into(<const Py_UCS1*>data, lo, &pos, hi, offset, chunk, CHUNK_RUNS)
            elif kind == 2:
                count = runs_into(<const Py_UCS2*>data, lo, &pos, hi, offset, chunk, CHUNK_RUNS)
            else:
                count = runs_into(<const Py_UCS4*>data, lo, &pos, hi, offset, chunk, CHUNK_RUNS)
            if self.online:
                self.pair_chunk(chunk, count, lo, hi, offset)
            elif count:
                extend_runs(self.runs, chunk, count)
        return 0

    cdef int pair_chunk(self, const long long* chunk, Py_ssize_t count, Py_ssize_t lo,
                        Py_ssize_t hi, Py_ssize_t offset) except -1:
        # The twin's pairing, online (see the class), of runs of text[lo:hi].  Inside code
        # a backslash is literal: only an opener can be escaped (its length one less, its
        # span one later).
        cdef Py_ssize_t index
        cdef const long long* run
        for index in range(count):
            run = chunk + 3 * index
            if not self.used:
                if run[1] - run[0] - run[2] > 0:
                    self.want = run[1] - run[0] - run[2]
                    self.wall_from = run[0] + run[2]
                    self.keep(lo, run[1] - offset, hi, offset)
            elif run[1] - run[0] == self.want:
                self.walls.add(self.wall_from, run[1])
                self.used = 0
        return 0

    cdef int keep(self, Py_ssize_t lo, Py_ssize_t start, Py_ssize_t hi,
                  Py_ssize_t offset) except -1:
        # The part text[start:hi] of the line text[lo:hi] kept to be read again; the first
        # after an opener (used 0 then) starts the list.
        self.reserve(4)
        self.parts[self.used] = lo
        self.parts[self.used + 1] = start
        self.parts[self.used + 2] = hi
        self.parts[self.used + 3] = offset
        self.used += 4
        return 0

    cdef Py_ssize_t pair_vectors(self, int kind, const void* data, Py_ssize_t lo,
                                 Py_ssize_t hi, Py_ssize_t offset) except -1:
        # take's runs in the whole vectors of text[lo:hi] (kind 1 or 2, the walls in arrays,
        # the AVX2 path), paired as they are read (citemark_pair_ucs1): where they end.
        cdef citemark_online state
        cdef _Walls walls = self.walls
        cdef int full = 1
        state.pos = lo
        state.open = -1
        state.opened = -1
        while full:
            # The room of a vector's walls at least (grown as the scan asks for it).
            while walls.room - walls.count < VECTOR_RUNS:
                walls.grow()
            state.used = self.used
            state.want = self.want
            state.wall_from = self.wall_from
            state.wall_starts = walls.starts.data.as_longlongs
            state.wall_ends = walls.ends.data.as_longlongs
            state.walls = walls.count
            state.wall_room = walls.room
            if kind == 1:
                full = pair_vectors_ucs1(<const Py_UCS1*>data, lo, hi, offset, &state)
            else:
                full = pair_vectors_ucs2(<const Py_UCS2*>data, lo, hi, offset, &state)
            self.used = state.used
            self.want = state.want
            self.wall_from = state.wall_from
            walls.count = state.walls
        if self.used and state.opened >= 0:
            # The opener waiting was found here: the part of the line after it is all that
            # is kept (the scan leaves used at 4, one part, or as it found it).
            self.used = 0
            self.keep(lo, state.opened, hi, offset)
        return state.pos

    cdef int reserve(self, Py_ssize_t entries) except -1:
        # Room for `entries` more entries of parts.
        cdef Py_ssize_t room = self.room
        cdef long long* grown
        if entries > room - self.used:
            # Twice what is needed (kept for the next paragraphs too); the entries are at
            # most four per line of the text and four: no overflow.
            room = 2 * (self.used + entries)
            grown = <long long*>PyMem_Realloc(self.parts, room * sizeof(long long))
            if grown == NULL:
                raise MemoryError()
            self.parts, self.room = grown, room
        return 0

    cdef int close(self) except -1:
        # The paragraph ends: pair what it left.
        if not self.online:
            try:
                pair_array(self.runs, self.walls)
            finally:
                array.resize(self.runs, 0)
            return 0
        if not self.used:
            return 0
        # The opener never closed: the runs after it read again and paired as `pair` does.
        cdef long long chunk[3 * CHUNK_RUNS]
        cdef array.array after = array.clone(RUNS_TEMPLATE, 0, False)
        cdef Py_ssize_t index, count, lo, pos, hi, offset, used = self.used
        cdef int kind = self.kind
        cdef const void* data = self.data
        self.used = 0  # (as it is now, should the pairing fail)
        for index in range(0, used, 4):
            lo = self.parts[index]
            pos = self.parts[index + 1]
            hi = self.parts[index + 2]
            offset = self.parts[index + 3]
            while pos < hi:
                if kind == 1:
                    count = runs_into(<const Py_UCS1*>data, lo, &pos, hi, offset, chunk,
                                      CHUNK_RUNS)
                elif kind == 2:
                    count = runs_into(<const Py_UCS2*>data, lo, &pos, hi, offset, chunk,
                                      CHUNK_RUNS)
                else:
                    count = runs_into(<const Py_UCS4*>data, lo, &pos, hi, offset, chunk,
                                      CHUNK_RUNS)
                if count:
                    extend_runs(after, chunk, count)
        pair_array(after, self.walls)
        return 0


cdef int extend_runs(array.array runs, const long long* chunk, Py_ssize_t count) except -1:
    cdef Py_ssize_t used = Py_SIZE(runs)
    array.resize_smart(runs, used + 3 * count)  # grown by half again: linear appends
    memcpy(runs.data.as_longlongs + used, chunk, 3 * count * sizeof(long long))
    return 0


cdef _Pairing new_pairing(array.array runs, _Walls walls, bint online):
    cdef _Pairing pairing = _Pairing.__new__(_Pairing)
    pairing.runs = runs
    pairing.walls = walls
    pairing.online = online
    return pairing


def plain(str text not None, start, base, pending, walls, in_paragraph, ticked_from):
    cdef Py_ssize_t at = as_index(start, "start")
    cdef Py_ssize_t offset = as_index(base, "base")
    check_runs(pending, "pending")
    if type(walls) is not list:
        raise TypeError(f"walls must be a list, not {type(walls).__name__}")
    if type(in_paragraph) is not bool:
        raise TypeError(f"in_paragraph must be a bool, not {type(in_paragraph).__name__}")
    if ticked_from is not None and type(ticked_from) is not int:
        raise TypeError(f"ticked_from must be None or an int, not {type(ticked_from).__name__}")
    cdef Py_ssize_t size = len(text)
    if at > size:
        raise ValueError("start must be at most len(text)")
    if offset > PY_SSIZE_T_MAX - size:
        raise ValueError("base + len(text) must fit in an index")
    # The pending runs checked once here: plain_lines pairs them without a look.
    run_values((<array.array>pending).data.as_longlongs, Py_SIZE(pending) // 3)
    cdef bint paragraph = in_paragraph
    # -1: None; -2: the caller's value, kept until an empty line resets it.
    cdef Py_ssize_t ticked = -1 if ticked_from is None else -2
    at = plain_lines(PyUnicode_KIND(text), PyUnicode_DATA(text), size, at, offset,
                     new_pairing(pending, list_walls(walls), False), &paragraph, &ticked)
    return at, paragraph, None if ticked == -1 else ticked_from if ticked == -2 else ticked


cdef Py_ssize_t plain_lines(int kind, const void* data, Py_ssize_t size, Py_ssize_t at,
                            Py_ssize_t offset, _Pairing pairing,
                            bint* in_paragraph, Py_ssize_t* ticked_from) except -1:
    # plain's lines from at (<= size; offset + size fits in an index), ticked_from -1 for
    # None (any other negative value: one set before): the start of the first line left.
    cdef bint paragraph = in_paragraph[0]
    cdef Py_ssize_t end, following
    cdef Py_UCS4 unit
    cdef bint ticked
    # Every read is at an index below size (each loop tests it first): inside the string.
    while at < size:
        unit = read_unit(kind, data, at)
        if unit < 128 and block_start[unit]:  # (an empty line starts with its line break)
            break
        end = next_break(kind, data, at, size)
        ticked = next_of(kind, data, BACKTICK, at, end) < end
        following = end
        if end < size:
            following = end + 1
            if read_unit(kind, data, end) == CR and following < size and \
                    read_unit(kind, data, following) == LF:
                following += 1
        if at == end:
            if paragraph:  # an empty line ends the paragraph
                in_paragraph[0] = False  # (as it is now, should the pairing fail)
                pairing.close()
                paragraph = False
                ticked_from[0] = -1
        else:
            paragraph = True
            in_paragraph[0] = True
            if ticked:
                if ticked_from[0] == -1:
                    ticked_from[0] = offset + at  # <= PY_SSIZE_T_MAX (checked by the caller)
                pairing.take(kind, data, at, end, offset)
        at = following  # > at: every line moves on by at least one character
    in_paragraph[0] = paragraph
    return at


def pair(runs, walls):
    check_runs(runs, "runs")
    if type(walls) is not list:
        raise TypeError(f"walls must be a list, not {type(walls).__name__}")
    cdef array.array items = runs
    cdef Py_ssize_t count = Py_SIZE(items) // 3
    cdef const long long* data = items.data.as_longlongs
    pair_runs(data, count, run_values(data, count), list_walls(walls))


cdef long long run_values(const long long* data, Py_ssize_t count) except -1:
    # The longest of these runs, each checked a real one: 0 <= start <= end, escaped 0 or 1
    # (only then one less than the start): the lengths index the tables of pair_many.
    cdef Py_ssize_t index
    cdef long long longest = 0
    for index in range(count):
        if not (0 <= data[3 * index] <= data[3 * index + 1] and 0 <= data[3 * index + 2] <= 1):
            raise ValueError("runs must hold (start, end, escaped) with 0 <= start <= end")
        if data[3 * index + 2] and data[3 * index] == data[3 * index + 1]:
            raise ValueError("runs must hold no empty escaped run")
        if data[3 * index + 1] - data[3 * index] > longest:
            longest = data[3 * index + 1] - data[3 * index]
    return longest


cdef int pair_array(array.array runs, _Walls out) except -1:
    # pair for runs this module found, or checked by run_values (real ones).
    cdef Py_ssize_t count = Py_SIZE(runs) // 3, index
    cdef const long long* data = runs.data.as_longlongs
    cdef long long longest = 0
    for index in range(count):
        if data[3 * index + 1] - data[3 * index] > longest:
            longest = data[3 * index + 1] - data[3 * index]
    return pair_runs(data, count, longest, out)


cdef int pair_runs(const long long* data, Py_ssize_t count, long long longest,
                   _Walls out) except -1:
    if count < 2:
        return 0
    if count <= FEW_RUNS:
        return pair_few(data, count, out)
    # The tables of pair_many hold longest + 2 + count indexes: they must be allocatable.
    if longest > PY_SSIZE_T_MAX // <Py_ssize_t>sizeof(Py_ssize_t) // 3 - count:
        raise MemoryError("runs too long to pair")
    return pair_many(data, count, <Py_ssize_t>longest, out)


cdef int pair_many(const long long* data, Py_ssize_t count, Py_ssize_t longest,
                   _Walls out) except -1:
    # The twin's pairing (an opener closed by the next run of its length), with that next
    # run found beforehand for every run, in one pass from the end: following[i] is the
    # first run after i whose length is run i's as an opener (one less when it is escaped),
    # count when there is none; nearest[l] the first run of length l after the pass's place.
    # Every length is at most longest (checked by pair_runs' callers), so it indexes
    # nearest; its size is at most the runs' characters plus two: linear.  (A cursor per
    # length over the runs sorted by length read each run three times more.)
    cdef Py_ssize_t tables = longest + 2  # no overflow: pair_runs bounds longest
    cdef Py_ssize_t* memory = <Py_ssize_t*>PyMem_Malloc((tables + count) * sizeof(Py_ssize_t))
    if memory == NULL:
        raise MemoryError()
    cdef Py_ssize_t* nearest = memory  # tables entries
    cdef Py_ssize_t* following = memory + tables  # count entries
    cdef Py_ssize_t index, length, closer
    cdef long long escaped
    try:
        for length in range(tables):
            nearest[length] = count
        index = count
        while index > 0:
            index -= 1
            length = data[3 * index + 1] - data[3 * index]  # 0 <= length <= longest
            # (an escaped run is not empty: length - 1 >= 0)
            following[index] = nearest[length - data[3 * index + 2]]
            nearest[length] = index
        index = 0
        while index < count:
            escaped = data[3 * index + 2]
            closer = following[index]
            # only an opener can be escaped: inside code a backslash is literal
            if data[3 * index + 1] - data[3 * index] - escaped and closer < count:
                out.add(data[3 * index] + escaped, data[3 * closer + 1])
                index = closer + 1
            else:
                index += 1
    finally:
        PyMem_Free(memory)
    return 0


cdef int pair_few(const long long* data, Py_ssize_t count, _Walls out) except -1:
    cdef Py_ssize_t index, closer
    cdef long long length
    index = 0
    while index < count:
        length = data[3 * index + 1] - data[3 * index] - data[3 * index + 2]
        closer = index + 1
        while closer < count and data[3 * closer + 1] - data[3 * closer] != length:
            closer += 1
        if length and closer < count:
            out.add(data[3 * index] + data[3 * index + 2], data[3 * closer + 1])
            index = closer + 1
        else:
            index += 1
    return 0


# -- validate's stray marker characters ----------------------------------------------------

cdef extern from "Python.h":
    bint Py_UNICODE_ISSPACE(Py_UCS4 unit) nogil

cdef enum:
    # The kinds of the raw findings: the twin's values (checked at import).
    UNTERMINATED = 0
    REFUSED = 1
    STRAY_STOP = 2
    STRAY_DELIMITER = 3

if (twin.UNTERMINATED, twin.REFUSED, twin.STRAY_STOP, twin.STRAY_DELIMITER) != (0, 1, 2, 3):
    raise ImportError("commonmark_c's kinds of stray findings differ from the twin's")


cdef Py_UCS4 as_char(object value, str name) except 0xFFFFFFFF:
    if type(value) is not str:
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    if len(<str>value) != 1:
        raise ValueError(f"{name} must be one character")
    return (<str>value)[0]


cdef Py_ssize_t next_of(int kind, const void* data, Py_UCS4 unit, Py_ssize_t at,
                        Py_ssize_t last) noexcept nogil:
    # The index of the next `unit` in [at, last), else last (0 <= at, last <= the length):
    # a vector search (a character at a time, the scans of a text of thousands of stray
    # characters cost most of validate's time there).
    cdef Py_ssize_t found
    if at >= last:
        return last
    if kind == 1:
        found = cm_find_ucs1(<const Py_UCS1*>data, at, last, unit)
    elif kind == 2:
        found = cm_find_ucs2(<const Py_UCS2*>data, at, last, unit)
    else:
        found = cm_find_ucs4(<const Py_UCS4*>data, at, last, unit)
    return last if found < 0 else found


cdef Py_ssize_t next_in(int kind, const void* data, Py_UCS4 a, Py_UCS4 b, Py_UCS4 c,
                        Py_ssize_t at, Py_ssize_t last) noexcept nogil:
    # The index of the next unit equal to a, b or c in [at, last), else last (0 <= at,
    # last <= the length; repeat one to look for fewer): one vector pass for the set (a
    # search for each read the text once each).  A unit wider than the text's kind is in no
    # place of it: left out (its low bits compared would find another).
    cdef Py_UCS4 top = 0xFF if kind == 1 else 0xFFFF if kind == 2 else 0x10FFFF
    cdef Py_UCS4 fits = a if a <= top else b if b <= top else c
    cdef unsigned int low, high  # (numbers: Cython's Py_UCS4 arithmetic makes a str)
    if at >= last or fits > top:
        return last
    if a > top:
        a = fits
    if b > top:
        b = fits
    if c > top:
        c = fits
    if a == b and b == c:
        return next_of(kind, data, a, at, last)
    low = a if a < b else b
    low = low if low < <unsigned int>c else c
    high = a if a > b else b
    high = high if high > <unsigned int>c else c
    if high - low > 3:
        if kind == 1:
            return find3_ucs1(<const Py_UCS1*>data, at, last, <Py_UCS1>a, <Py_UCS1>b,
                              <Py_UCS1>c)
        if kind == 2:
            return find3_ucs2(<const Py_UCS2*>data, at, last, <Py_UCS2>a, <Py_UCS2>b,
                              <Py_UCS2>c)
        return find3_ucs4(<const Py_UCS4*>data, at, last, a, b, c)
    # Close together (the default markers follow each other, CR and LF are three apart):
    # one range compared, cheaper than three; a unit in the range but not in the set (a
    # vertical tab between LF and CR) is passed over and the search goes on after it.
    cdef Py_UCS4 unit
    while True:
        if kind == 1:
            at = range_ucs1(<const Py_UCS1*>data, at, last, <Py_UCS1>low,
                            <Py_UCS1>(high - low))
        elif kind == 2:
            at = range_ucs2(<const Py_UCS2*>data, at, last, <Py_UCS2>low,
                            <Py_UCS2>(high - low))
        else:
            at = range_ucs4(<const Py_UCS4*>data, at, last, low, high - low)
        if at == last:
            return last
        unit = read_unit(kind, data, at)  # at < last: inside the string
        if unit == a or unit == b or unit == c:
            return at
        at += 1


cdef Py_ssize_t next_break(int kind, const void* data, Py_ssize_t at,
                           Py_ssize_t size) noexcept nogil:
    # The first line break (CR or LF) at or after at, else size (at <= size): one vector
    # search for both (a look for CR over the whole text first, to search for LF alone,
    # read it once more), next_in's range compare called directly (its choice of a search
    # cost as much as the search on the usual short line).
    cdef Py_UCS4 unit
    while at < size:
        if kind == 1:
            at = range_ucs1(<const Py_UCS1*>data, at, size, LF, CR - LF)
        elif kind == 2:
            at = range_ucs2(<const Py_UCS2*>data, at, size, LF, CR - LF)
        else:
            at = range_ucs4(<const Py_UCS4*>data, at, size, LF, CR - LF)
        if at == size:
            break
        unit = read_unit(kind, data, at)  # at < size: inside the string
        if unit == LF or unit == CR:
            return at
        at += 1  # a vertical tab or a form feed, between LF and CR
    return size


@cython.final  # (its methods called directly, not through a table)
cdef class _Sink:
    """Where the stray scan puts what it finds: raw `(kind, start, end)` findings and
    `(start, end)` foreign spans in lists (`strays`), or diagnostics built in place and the
    spans in two arrays (`stray_findings`)."""

    cdef list found
    cdef list foreign
    cdef bint diagnose
    cdef tuple rows  # per kind: (code, severity, message for one, format for a run)
    # rows' fields by kind, borrowed (rows holds them)
    cdef PyObject* codes[4]
    cdef PyObject* severities[4]
    cdef PyObject* ones[4]
    cdef array.array starts
    cdef array.array ends
    cdef Py_ssize_t walled  # the walls written (the arrays may hold more room)
    cdef list refused
    # Per ASCII character: whether it ends the word glued to an open START (white space,
    # the START or the STOP).
    cdef unsigned char word_stops[128]

    cdef int use_chars(self, Py_UCS4 start_unit, Py_UCS4 stop_unit) except -1:
        cdef Py_UCS4 unit
        for unit in range(128):
            self.word_stops[unit] = Py_UNICODE_ISSPACE(unit) or unit == start_unit or \
                unit == stop_unit
        return 0

    cdef int use_rows(self, tuple rows) except -1:
        cdef Py_ssize_t kind
        self.rows = rows
        for kind in range(4):
            self.codes[kind] = <PyObject*>rows[kind][0]
            self.severities[kind] = <PyObject*>rows[kind][1]
            self.ones[kind] = <PyObject*>rows[kind][2]
        return 0

    cdef inline int finding(self, int kind, Py_ssize_t start, Py_ssize_t end) except -1:
        # kind is one of the four kinds (0-3): it indexes the tables.  Inline, the usual row
        # (a diagnostic of one character, its message shared, with no reference counted
        # temporaries: a row per stray character of thousands); the others apart.
        if self.diagnose and kind != REFUSED and end - start == 1:
            self.found.append(new_diagnostic(self.codes[kind], self.severities[kind],
                                             self.ones[kind], start, end))
            return 0
        return self.other_finding(kind, start, end)

    cdef int other_finding(self, int kind, Py_ssize_t start, Py_ssize_t end) except -1:
        cdef object message
        if not self.diagnose:
            self.found.append((kind, start, end))
            return 0
        if kind == REFUSED:
            # Its message needs the grammar (validate writes it): noted by its index.
            self.refused.append(len(self.found))
            message = <object>self.ones[kind]
        elif end - start == 1:
            message = <object>self.ones[kind]
        else:
            message = self.rows[kind][3].format(end - start)
        self.found.append(new_diagnostic(self.codes[kind], self.severities[kind],
                                         <PyObject*>message, start, end))
        return 0

    cdef inline int wall(self, Py_ssize_t start, Py_ssize_t end) except -1:
        # Inline, a wall written where there is room; the rest apart.
        if not self.diagnose or self.walled == Py_SIZE(self.starts):
            return self.other_wall(start, end)
        # walled < the size of both arrays (finish and other_wall keep them as long): inside.
        self.starts.data.as_longlongs[self.walled] = start
        self.ends.data.as_longlongs[self.walled] = end
        self.walled += 1
        return 0

    cdef int other_wall(self, Py_ssize_t start, Py_ssize_t end) except -1:
        if not self.diagnose:
            self.foreign.append((start, end))
            return 0
        cdef Py_ssize_t size
        if self.walled == Py_SIZE(self.starts):
            # Room for twice as many (an array grown a few at a time copies itself over and
            # over); `finish` gives back what is not used.
            size = 2 * self.walled if self.walled >= 8 else 16
            array.resize(self.starts, size)  # raises MemoryError on failure
            array.resize(self.ends, size)
        # walled < the size of both arrays now: inside.
        self.starts.data.as_longlongs[self.walled] = start
        self.ends.data.as_longlongs[self.walled] = end
        self.walled += 1
        return 0

    cdef int finish(self) except -1:
        array.resize(self.starts, self.walled)
        array.resize(self.ends, self.walled)
        return 0


@cython.final
@cython.no_gc  # its fields are str and int: it can hold no cycle
cdef class Diagnostic:
    """One finding of `citemark.validate`: a stable `code`, its `severity`, a message, and
    where it is (`start`, `end`, code points).  The twin's `Diagnostic`, as a C struct:
    validate makes one per stray character, and this is one allocation of 56 bytes where a
    named tuple with two ints is three of 144."""

    cdef readonly str code
    cdef readonly str severity
    cdef readonly str message
    cdef readonly Py_ssize_t start
    cdef readonly Py_ssize_t end

    __match_args__ = ("code", "severity", "message", "start", "end")

    def __init__(self, code, severity, message, start, end):
        # The twin's checks (one home; the kernel's own rows are made without them).
        self.code, self.severity, self.message, self.start, self.end = twin.checked_fields(
            code, severity, message, start, end
        )

    def _fields(self):
        return self.code, self.severity, self.message, self.start, self.end

    def __eq__(self, other):
        if type(other) is not Diagnostic:
            return NotImplemented
        return self._fields() == (<Diagnostic>other)._fields()

    def __ne__(self, other):
        if type(other) is not Diagnostic:
            return NotImplemented
        return self._fields() != (<Diagnostic>other)._fields()

    def __hash__(self):
        return hash(self._fields())

    def __repr__(self):
        return twin.shown(self)

    def __reduce__(self):
        return Diagnostic, self._fields()

    def to_json(self):
        """The fields as a dict (what `citemark lint --json` writes)."""
        return twin.as_json(self)


cdef inline Diagnostic new_diagnostic(PyObject* code, PyObject* severity, PyObject* message,
                                      Py_ssize_t start, Py_ssize_t end):
    # A Diagnostic from fields the caller checked (str) and holds (borrowed here: the row
    # takes a reference of its own to each), without __init__'s checks.
    cdef Diagnostic row = Diagnostic.__new__(Diagnostic)
    row.code = <str>code
    row.severity = <str>severity
    row.message = <str>message
    row.start = start
    row.end = end
    return row


cdef int check_longs(object value, str name) except -1:
    if type(value) is not _array_module.array or (<array.array>value).ob_descr.typecode != b"q":
        raise TypeError(f"{name} must be an array('q'), not {type(value).__name__}")
    return 0


def strays(str text not None, first, last, held, start_char, stop_char, delimiter, found,
           foreign):
    cdef Py_ssize_t lo = as_index(first, "first")
    cdef Py_ssize_t hi = as_index(last, "last")
    if type(held) is not int:
        raise TypeError(f"held must be an int, not {type(held).__name__}")
    cdef Py_UCS4 start_unit = as_char(start_char, "start_char")
    cdef Py_UCS4 stop_unit = as_char(stop_char, "stop_char")
    cdef Py_UCS4 delimiter_unit = as_char(delimiter, "delimiter")
    if type(found) is not list:
        raise TypeError(f"found must be a list, not {type(found).__name__}")
    if type(foreign) is not list:
        raise TypeError(f"foreign must be a list, not {type(foreign).__name__}")
    cdef Py_ssize_t size = len(text)
    if not lo <= hi <= size:
        raise ValueError("first and last must satisfy first <= last <= len(text)")
    cdef _Sink sink = _Sink()
    sink.found = found
    sink.foreign = foreign
    sink.use_chars(start_unit, stop_unit)
    scan_strays(PyUnicode_KIND(text), PyUnicode_DATA(text), size, lo, hi, held & 7,
                start_unit, stop_unit, delimiter_unit, sink)


cdef int scan_strays(int kind, const void* data, Py_ssize_t size, Py_ssize_t lo,
                     Py_ssize_t hi, int bits, Py_UCS4 start_unit, Py_UCS4 stop_unit,
                     Py_UCS4 delimiter_unit, _Sink sink) except -1:
    # The twin's strays over text[lo:hi] (lo <= hi <= size, checked by the callers).  The
    # twin keeps the next of each character it looks for; here the next of any of them is
    # found in one pass (a pass for each read a gap of thousands of characters three
    # times).  The same places: a character the twin does not look for (its bit clear, or a
    # DELIMITER while a START is open) is left out of the search, and every place between
    # the last event and `pos` holds none of the others (a run is read whole, the word
    # glued to a START holds no START or STOP).  Every index below is in [lo, hi] and is
    # read only when below hi (or below size for the glued word): inside the string.
    cdef bint starts = bits & 1, stops = bits & 2, delimiters = bits & 4
    cdef Py_ssize_t opened = -1, opened_from = 0, word = 0, pos = lo, at, end, near
    cdef Py_UCS4 unit, a, b, c
    while pos < hi and (starts or stops or delimiters):
        # The characters looked for, one repeated for those that are not.
        a = start_unit if starts else stop_unit if stops else delimiter_unit
        b = stop_unit if stops else a
        c = delimiter_unit if delimiters else a
        # The next few characters looked at first (events close together, as thousands of
        # open STARTs glued to ids, cost a vector search's set-up each otherwise).
        at = pos
        near = pos + 8 if hi - pos > 8 else hi
        while at < near:
            unit = read_unit(kind, data, at)
            if unit == a or unit == b or unit == c:
                break
            at += 1
        if at == near:
            at = next_in(kind, data, a, b, c, at, hi)
        if at == hi:
            break
        unit = read_unit(kind, data, at)
        end = at + 1
        while end < hi and read_unit(kind, data, end) == unit:
            end += 1
        if unit == start_unit and starts:
            if opened >= 0:
                unterminated(opened, opened_from, word, sink)
            if end - at > 1:
                sink.wall(at, end - 1)
            opened = end - 1
            opened_from = at
            # The word glued to it, found now (the twin reads it once the START proves
            # unterminated): it holds no START nor STOP, so the next is looked for after it
            # (none when it reaches past hi).
            word = word_after(kind, data, size, opened, start_unit, stop_unit, sink)
            pos = word
            delimiters = False
        elif unit == stop_unit and stops:
            if opened >= 0:
                if opened_from < opened:
                    sink.finding(UNTERMINATED, opened_from, opened)
                sink.wall(opened, at + 1)
                sink.finding(REFUSED, opened, at + 1)
                opened = -1
                delimiters = True
                at += 1
            if at < end:
                sink.finding(STRAY_STOP, at, end)
            pos = end
        else:
            if opened < 0:
                sink.finding(STRAY_DELIMITER, at, end)
            pos = end
    if opened >= 0:
        unterminated(opened, opened_from, word, sink)
    return 0


cdef inline int unterminated(Py_ssize_t at, Py_ssize_t opened_from, Py_ssize_t word,
                             _Sink sink) except -1:
    # The twin's _unterminated: the START at `at` that nothing closes, with the run of
    # STARTs before it, and the word glued to it (up to `word`) walled.
    sink.finding(UNTERMINATED, opened_from, at + 1)
    sink.wall(at, word)
    return 0


cdef Py_ssize_t word_after(int kind, const void* data, Py_ssize_t size, Py_ssize_t at,
                           Py_UCS4 start_unit, Py_UCS4 stop_unit, _Sink sink) noexcept:
    # The end of the word glued to the START at `at` (< size): it runs to white space
    # (Py_UNICODE_ISSPACE: what re's \s matches in a str), a START or a STOP.  One loop per
    # width (a width test at every character cost most of this scan).
    if kind == 1:
        return word_end(<const Py_UCS1*>data, at + 1, size, start_unit, stop_unit,
                        sink.word_stops)
    if kind == 2:
        return word_end(<const Py_UCS2*>data, at + 1, size, start_unit, stop_unit,
                        sink.word_stops)
    return word_end(<const Py_UCS4*>data, at + 1, size, start_unit, stop_unit, sink.word_stops)


cdef inline Py_ssize_t word_end(const text_t* data, Py_ssize_t end, Py_ssize_t size,
                                Py_UCS4 start_unit, Py_UCS4 stop_unit,
                                const unsigned char* ascii_stops) noexcept nogil:
    # The end of the word from `end` (reads below size: inside the string); ascii_stops:
    # the sink's word_stops.
    cdef Py_UCS4 unit
    while end < size:
        unit = data[end]
        if unit < 0x80:
            if ascii_stops[unit]:
                break
        elif unit == start_unit or unit == stop_unit or \
                (wide_space(unit) and Py_UNICODE_ISSPACE(unit)):
            break
        end += 1
        if text_t is Py_UCS2:
            # The units that cannot end it skipped a vector at a time (a text of thousands
            # of open STARTs is UCS-2, as U+E200 is), once the first is read on its own (an
            # empty word, or a START before the next, costs no vector set-up then).
            end = word_candidate_ucs2(data, end, size, start_unit, stop_unit)
    return end


cdef inline bint wide_space(Py_UCS4 unit) noexcept nogil:
    # False for a character above ASCII that is surely no white space, so the look-up runs
    # only for the others (a call at each marker character of a glued word cost a third of
    # its scan): white space there is U+0085, U+00A0, U+1680, U+2000 to U+205F (spaces,
    # line and paragraph separators) or U+3000 (test_validate_strays checks every character
    # str.isspace takes against the scan).
    return unit <= 0xA0 or unit == 0x1680 or 0x2000 <= unit <= 0x205F or unit == 0x3000


def stray_findings(str text not None, consumed, start_char, stop_char, delimiter, rows, found,
                   starts, ends):
    if type(consumed) is not list:
        raise TypeError(f"consumed must be a list, not {type(consumed).__name__}")
    cdef Py_UCS4 start_unit = as_char(start_char, "start_char")
    cdef Py_UCS4 stop_unit = as_char(stop_char, "stop_char")
    cdef Py_UCS4 delimiter_unit = as_char(delimiter, "delimiter")
    if type(rows) is not tuple or len(<tuple>rows) != 4:
        raise TypeError("rows must be a tuple of 4 (code, severity, one, many) tuples")
    for row in <tuple>rows:
        if type(row) is not tuple or len(<tuple>row) != 4 or \
                not all(type(item) is str for item in <tuple>row):
            raise TypeError("rows must be a tuple of 4 (code, severity, one, many) tuples")
    if type(found) is not list:
        raise TypeError(f"found must be a list, not {type(found).__name__}")
    check_longs(starts, "starts")
    check_longs(ends, "ends")
    cdef _Sink sink = _Sink()
    sink.use_chars(start_unit, stop_unit)
    sink.diagnose = True
    sink.use_rows(rows)
    sink.found = found
    sink.starts = starts
    sink.ends = ends
    sink.walled = Py_SIZE(starts)
    if Py_SIZE(ends) != sink.walled:
        raise ValueError("starts and ends must be as long as each other")
    sink.refused = []
    cdef list spans = consumed
    cdef Py_ssize_t size = len(text)
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t gap, first = 0, last, after = 0
    try:
        for gap in range(len(spans) + 1):
            gap_before(spans, gap, first, size, &last, &after)
            # Each character looked for on its own, one pass each (held_gaps' bits, all set:
            # the scan's first search for a character the gap lacks is that pass).
            scan_strays(kind, data, size, first, last, 7, start_unit, stop_unit,
                        delimiter_unit, sink)
            if gap < len(spans):
                sink.wall(last, after)
            first = after
    finally:
        sink.finish()  # the arrays as long as what was written, whatever happens
    return sink.refused


cdef int held_in(int kind, const void* data, Py_ssize_t first, Py_ssize_t last,
                 Py_UCS4 start_unit, Py_UCS4 stop_unit, Py_UCS4 delimiter_unit) noexcept:
    # held_gaps' bits for text[first:last] (first <= last <= len(text)).
    cdef int bits = 0
    if next_of(kind, data, start_unit, first, last) < last:
        bits |= 1
    if next_of(kind, data, stop_unit, first, last) < last:
        bits |= 2
    if next_of(kind, data, delimiter_unit, first, last) < last:
        bits |= 4
    return bits


def next_outside(str text not None, str needle not None, at, starts, ends, wall):
    cdef Py_ssize_t position = as_index(at, "at")
    check_longs(starts, "starts")
    check_longs(ends, "ends")
    cdef Py_ssize_t index = as_index(wall, "wall")
    cdef array.array firsts = starts, lasts = ends
    cdef Py_ssize_t count = Py_SIZE(firsts)
    if Py_SIZE(lasts) != count:
        raise ValueError("starts and ends must be as long as each other")
    if not needle:
        raise ValueError("needle must not be empty")
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef Walls walls
    walls.lo = firsts.data.as_longlongs
    walls.hi = lasts.data.as_longlongs
    walls.count = count
    walls.index = index
    # One loop per width (no test of the kind at each character of thousands of short
    # gaps between walls).
    if kind == 1:
        position = outside(<const Py_UCS1*>data, len(text), needle, position, &walls)
    elif kind == 2:
        position = outside(<const Py_UCS2*>data, len(text), needle, position, &walls)
    else:
        position = outside(<const Py_UCS4*>data, len(text), needle, position, &walls)
    return position, walls.index


cdef struct Walls:
    const long long* lo  # starts[i], sorted, disjoint
    const long long* hi  # ends[i]
    Py_ssize_t count
    Py_ssize_t index  # the first wall that may not end at or before the place looked at


cdef Py_ssize_t outside(const text_t* data, Py_ssize_t size, str needle, Py_ssize_t position,
                        Walls* walls) noexcept:
    # next_outside over data[:size]: the place, or -1 with every wall passed.  The places
    # between the walls are searched for the needle's first character, each wall jumped
    # whole; a place is compared with at most len(needle) characters: linear for a fixed
    # needle.
    cdef const long long* lo = walls.lo
    cdef const long long* hi = walls.hi
    cdef Py_ssize_t count = walls.count, index = walls.index, limit, near
    cdef Py_ssize_t places = size - len(needle) + 1  # a needle starts before this
    cdef Py_UCS4 lead = needle[0]
    while True:
        # Every wall that starts at or before the place: on at its end if it reaches past
        # it.  Walls a few characters apart (open STARTs' glued words, thousands of them)
        # are passed here, each short gap read in this loop, with no vector search.
        while index < count and lo[index] <= position + 8:
            limit = lo[index] if lo[index] < places else places
            while position < limit:
                if data[position] == lead and starts_at(data, position, size, needle):
                    walls.index = index
                    return position
                position += 1
            if hi[index] > position:
                position = hi[index]
            index += 1
        if position >= places:
            break
        limit = places
        if index < count and lo[index] < limit:
            limit = lo[index]  # a needle must start before the next wall
        # [position, limit) is outside every wall, longer than 8 (or the end): its first
        # few characters looked at one by one (a vector search's set-up costs as much as
        # they do), the rest a vector at a time.
        near = position + 8 if limit - position > 8 else limit
        while position < limit:
            if position < near:
                if data[position] != lead:
                    position += 1
                    continue
            else:
                position = next_unit(data, lead, position, limit)
                if position == limit:
                    break
            if starts_at(data, position, size, needle):
                walls.index = index
                return position
            position += 1
    walls.index = count
    return -1


cdef inline Py_ssize_t next_unit(const text_t* data, Py_UCS4 unit, Py_ssize_t at,
                                 Py_ssize_t last) noexcept nogil:
    # next_of for one width.
    cdef Py_ssize_t found
    if text_t is Py_UCS1:
        found = cm_find_ucs1(data, at, last, unit)
    elif text_t is Py_UCS2:
        found = cm_find_ucs2(data, at, last, unit)
    else:
        found = cm_find_ucs4(data, at, last, unit)
    return last if found < 0 else found


cdef inline bint starts_at(const text_t* data, Py_ssize_t at, Py_ssize_t size,
                           str needle) noexcept:
    # Whether data[at:size] starts with needle (reads only below size).
    cdef Py_ssize_t index, count = len(needle)
    if count > size - at:
        return False
    for index in range(count):
        if data[at + index] != needle[index]:
            return False
    return True


# -- validate's order --------------------------------------------------------------------------

cdef struct Keyed:
    Py_ssize_t start
    Py_ssize_t end
    PyObject* code  # borrowed: the caller holds the row
    Py_ssize_t index


cdef inline int before(Keyed* a, Keyed* b) except -1:
    # Whether b must come before a: by (start, end, code); on a tie, the order found.
    if a.start != b.start:
        return b.start < a.start
    if a.end != b.end:
        return b.end < a.end
    return PyUnicode_Compare(<object>b.code, <object>a.code) < 0


cdef inline int keyed(object row, Py_ssize_t index, Keyed* key) except -1:
    # The key of `row`, found at `index`, checked; its code borrowed: the caller holds the
    # row (its fields are read-only) while the key is used.
    if type(row) is not Diagnostic:
        raise TypeError(f"found must hold Diagnostic rows, not {type(row).__name__}")
    key.start = (<Diagnostic>row).start
    key.end = (<Diagnostic>row).end
    key.code = <PyObject*>(<Diagnostic>row).code
    key.index = index
    return 0


def order(found):
    if type(found) is not list:
        raise TypeError(f"found must be a list, not {type(found).__name__}")
    cdef list rows = found
    cdef Py_ssize_t index
    cdef object previous, current  # the two rows compared, held while their keys are used
    cdef Keyed pair[2]
    cdef Keyed* earlier = &pair[0]
    cdef Keyed* later = &pair[1]
    cdef Keyed* spare
    # In order already (the usual case for a text of one kind of fault): told in place by a
    # look at each pair of neighbours, with no copy and no table of keys.  Each row is held
    # (a reference of our own) while its key is compared, and the length read at each step:
    # a list changed meanwhile (another thread) is read safely, only its order is then moot.
    if len(rows) < 2:
        return found
    previous = rows[0]
    keyed(previous, 0, earlier)
    index = 1
    while index < len(rows):
        current = rows[index]
        keyed(current, index, later)
        if before(earlier, later):
            break
        previous = current
        spare = earlier
        earlier = later
        later = spare
        index += 1
    else:
        return found
    previous = current = None
    # Out of order: sorted from a tuple that holds every row (and so its code) while they
    # are compared, put back in place.
    found[:] = sorted_rows(tuple(rows))
    return found


cdef list sorted_rows(tuple rows):
    # rows by (start, end, code), stable: a merge sort of their keys, bottom up.
    cdef Py_ssize_t count = len(rows), index, width, left, middle, right, i, j, k
    cdef Keyed* keys = <Keyed*>PyMem_Malloc(2 * count * sizeof(Keyed))
    if keys == NULL:
        raise MemoryError()
    cdef Keyed* other = keys + count
    try:
        for index in range(count):
            keyed(rows[index], index, &keys[index])
        width = 1
        while width < count:
            left = 0
            while left < count:
                middle = min(left + width, count)
                right = min(left + 2 * width, count)
                i, j, k = left, middle, left
                while i < middle and j < right:
                    if before(&keys[i], &keys[j]):  # the left row wins a tie
                        other[k] = keys[j]
                        j += 1
                    else:
                        other[k] = keys[i]
                        i += 1
                    k += 1
                while i < middle:
                    other[k] = keys[i]
                    i += 1
                    k += 1
                while j < right:
                    other[k] = keys[j]
                    j += 1
                    k += 1
                left = right
            keys, other = other, keys
            width *= 2
        return [rows[keys[index].index] for index in range(count)]
    finally:
        PyMem_Free(keys if keys < other else other)


# -- the whole code scan ---------------------------------------------------------------------

cdef enum:
    SPACE = 0x20
    TAB = 0x09
    GREATER = 0x3E
    TILDE = 0x7E
    HASH = 0x23
    STAR = 0x2A
    DASH = 0x2D
    PLUS = 0x2B
    UNDERSCORE = 0x5F
    EQUALS = 0x3D
    DOT = 0x2E
    PAREN = 0x29
    DIGIT_0 = 0x30
    DIGIT_1 = 0x31
    DIGIT_9 = 0x39


cdef inline Py_ssize_t run_end(const text_t* data, Py_ssize_t pos, Py_ssize_t end,
                               Py_UCS4 unit) noexcept nogil:
    # _Walker.run_of for one width: a word (8 bytes) at a time while the whole word is
    # `unit` (reads below pos + step <= end), then a unit at a time (reads below end).
    cdef Py_ssize_t step = 8 // sizeof(text_t)
    cdef unsigned long long word
    # The unit in every place of a word: the same bytes whatever the byte order.  A unit
    # wider than the text is in no place of it.
    if text_t is Py_UCS1:
        if unit > 0xFF:
            return pos
        word = 0x0101010101010101ULL * <unsigned long long>unit
    elif text_t is Py_UCS2:
        if unit > 0xFFFF:
            return pos
        word = 0x0001000100010001ULL * <unsigned long long>unit
    else:
        word = 0x0000000100000001ULL * <unsigned long long>unit
    while end - pos >= step and load8(data + pos) == word:
        pos += step
    while pos < end and data[pos] == unit:
        pos += 1
    return pos


cdef inline bint blank(Py_UCS4 unit) noexcept nogil:
    return unit == SPACE or unit == TAB


cdef class _Walker:
    """`_markdown.code.CodeScanner` line by line in C: the same state (containers, the
    waiting list item, fence, indented code, paragraph and its runs) and the same branches,
    in the same order; each method is named after the Python one.  Over one whole text
    (`code_walls`, base 0) or over the pieces of a stream (`StreamScanner`)."""

    cdef str text  # the text being scanned (its lines' positions plus base are recorded)
    cdef int kind
    cdef const void* data
    cdef Py_ssize_t size
    cdef Py_ssize_t base
    cdef _Walls walls
    # The open paragraph's runs: paired as they come over a whole text, collected over a
    # stream (a paragraph there may span pieces, and the online pairing reads lines again).
    cdef _Pairing pairing
    cdef bint streaming
    cdef Py_ssize_t ticked  # streaming: where the paragraph's first line with a run starts
    cdef list containers  # of int: -1 a block quote, else a list item's content column
    cdef list quotes  # of int: the depths of the block quotes among containers, ascending
    # The depth of the one list item that started with a blank line and waits for its first
    # line, or -1 (why one at most: the twin's `waiting`).
    cdef Py_ssize_t waiting
    # The line's thematic-break scan (see `thematic`): from, stop, third-last lead.
    cdef Py_ssize_t rule_from, rule_stop, rule_third
    cdef Py_UCS4 fence_char
    cdef Py_ssize_t fence_length  # 0: no fence open
    cdef bint indented
    cdef readonly bint in_paragraph

    def __cinit__(self):
        self.walls = _Walls()
        self.pairing = new_pairing(None, self.walls, True)
        self.ticked = -1
        self.containers = []
        self.quotes = []
        self.waiting = -1
        self.fence_length = 0

    cdef int use(self, str text, Py_ssize_t base) except -1:
        # The text whose lines come next (base + len(text) fits in an index: checked by the
        # callers).
        self.text = text
        self.kind = PyUnicode_KIND(text)
        self.data = PyUnicode_DATA(text)
        self.size = len(text)
        self.base = base
        return 0

    # Every read below is at an index below an `end` that is at most size (a line's end),
    # or tested against size first: inside the string.
    cdef inline Py_UCS4 at(self, Py_ssize_t index) noexcept:
        return read_unit(self.kind, self.data, index)

    cdef int indent(self, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t col, Py_ssize_t extra,
                    Py_ssize_t* columns, Py_ssize_t* first, Py_ssize_t* first_col) except -1:
        cdef Py_ssize_t count = extra, width
        cdef Py_UCS4 unit
        while pos < end:
            unit = self.at(pos)
            if unit == SPACE:
                width = 1
            elif unit == TAB:
                width = 4 - col % 4
            else:
                break
            count += width
            col += width
            pos += 1
        columns[0] = count
        first[0] = pos
        first_col[0] = col
        return 0

    cdef int advance(self, Py_ssize_t* pos, Py_ssize_t* col, Py_ssize_t* extra,
                     Py_ssize_t wanted) except -1:
        cdef Py_ssize_t width
        if extra[0] >= wanted:
            extra[0] -= wanted
            return 0
        wanted -= extra[0]
        while wanted > 0 and pos[0] < self.size and blank(self.at(pos[0])):
            width = 1 if self.at(pos[0]) == SPACE else 4 - col[0] % 4
            col[0] += width
            pos[0] += 1
            if width > wanted:
                extra[0] = width - wanted
                return 0
            wanted -= width
        extra[0] = 0
        return 0

    cdef int after_marker(self, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t col,
                          Py_ssize_t* out_pos, Py_ssize_t* out_col,
                          Py_ssize_t* out_extra) except -1:
        cdef Py_ssize_t width
        if pos < end and self.at(pos) == SPACE:
            out_pos[0], out_col[0], out_extra[0] = pos + 1, col + 1, 0
        elif pos < end and self.at(pos) == TAB:
            width = 4 - col % 4
            out_pos[0], out_col[0], out_extra[0] = pos + 1, col + width, width - 1
        else:
            out_pos[0], out_col[0], out_extra[0] = pos, col, 0
        return 0

    cdef Py_ssize_t run_of(self, Py_ssize_t pos, Py_ssize_t end, Py_UCS4 unit) noexcept:
        # The end of the run of `unit` from pos (pos itself when none), one loop per width
        # (a line that starts with thousands of backticks cost a step and a width test for
        # each otherwise).
        if self.kind == 1:
            return run_end(<const Py_UCS1*>self.data, pos, end, unit)
        if self.kind == 2:
            return run_end(<const Py_UCS2*>self.data, pos, end, unit)
        return run_end(<const Py_UCS4*>self.data, pos, end, unit)

    cdef bint only_blanks(self, Py_ssize_t pos, Py_ssize_t end) noexcept:
        while pos < end:
            if not blank(self.at(pos)):
                return False
            pos += 1
        return True

    cdef bint closes(self, Py_ssize_t first, Py_ssize_t end) noexcept:
        # _CLOSE matched at first, of the open fence's character and at least its length.
        cdef Py_ssize_t stop
        if first >= end or self.at(first) != self.fence_char:
            return False
        stop = self.run_of(first, end, self.fence_char)
        return stop - first >= 3 and stop - first >= self.fence_length and \
            self.only_blanks(stop, end)

    cdef Py_ssize_t fence_opener(self, Py_ssize_t first, Py_ssize_t end,
                                 Py_UCS4* unit) noexcept:
        # _fence_opener: the opening run's length (0: none) and character.
        cdef Py_ssize_t stop, pos
        if first >= end:
            return 0
        unit[0] = self.at(first)
        if unit[0] != BACKTICK and unit[0] != TILDE:
            return 0
        stop = self.run_of(first, end, unit[0])
        if stop - first < 3:
            return 0
        if unit[0] == BACKTICK:
            pos = stop
            while pos < end:
                if self.at(pos) == BACKTICK:
                    return 0
                pos += 1
        return stop - first

    cdef bint heading(self, Py_ssize_t first, Py_ssize_t end) noexcept:
        cdef Py_ssize_t stop = self.run_of(first, end, HASH)
        return 1 <= stop - first <= 6 and (stop == end or blank(self.at(stop)))

    cdef bint thematic(self, Py_ssize_t first, Py_ssize_t end) noexcept:
        # The twin's _thematic: the scan of the lead and blanks remembered for the line (the
        # nested list items of one line ask at every marker), with the last three leads.
        cdef Py_UCS4 unit, lead
        cdef Py_ssize_t pos = first, last = -1, second = -1, third = -1
        if first >= end:
            return False
        lead = self.at(first)
        if lead != STAR and lead != DASH and lead != UNDERSCORE:
            return False
        if not self.rule_from <= first < self.rule_stop:
            while pos < end:
                unit = self.at(pos)
                if unit == lead:
                    third, second, last = second, last, pos
                elif not blank(unit):
                    break
                pos += 1
            self.rule_from, self.rule_stop = first, pos
            self.rule_third = third if pos == end else -1
        return self.rule_stop == end and first <= self.rule_third

    cdef bint setext(self, Py_ssize_t first, Py_ssize_t end) noexcept:
        cdef Py_UCS4 lead
        if first >= end:
            return False
        lead = self.at(first)
        if lead != EQUALS and lead != DASH:
            return False
        return self.only_blanks(self.run_of(first, end, lead), end)

    cdef Py_ssize_t bullet(self, Py_ssize_t first, Py_ssize_t end, int* ordered) noexcept:
        # _BULLET matched at first: its end, or -1 when it does not match; ordered: 0 a
        # bullet, 1 the number "1", 2 another number.
        cdef Py_UCS4 unit
        cdef Py_ssize_t stop
        if first >= end:
            return -1
        unit = self.at(first)
        if unit == DASH or unit == PLUS or unit == STAR:
            stop = first + 1
            ordered[0] = 0
        else:
            stop = first
            while stop < end and DIGIT_0 <= self.at(stop) <= DIGIT_9:
                stop += 1
            if not 1 <= stop - first <= 9 or stop >= end:
                return -1
            if self.at(stop) != DOT and self.at(stop) != PAREN:
                return -1
            ordered[0] = 1 if stop - first == 1 and self.at(first) == DIGIT_1 else 2
            stop += 1
        if stop < end and not blank(self.at(stop)):
            return -1
        return stop

    cdef int truncate(self, Py_ssize_t depth) except -1:
        cdef Py_ssize_t count = len(self.quotes)
        del self.containers[depth:]
        while count and <Py_ssize_t>self.quotes[count - 1] >= depth:
            count -= 1
        del self.quotes[count:]
        if self.waiting >= depth:
            self.waiting = -1
        return 0

    cdef Py_ssize_t blank_reach(self, Py_ssize_t at) except -1:
        # The twin's _blank_reach: the first block quote at or after `at` (a binary search
        # of quotes), or the waiting item before it, or the depth.
        cdef Py_ssize_t low = 0, high = len(self.quotes), middle, reach
        while low < high:
            middle = (low + high) // 2
            if <Py_ssize_t>self.quotes[middle] < at:
                low = middle + 1
            else:
                high = middle
        reach = <Py_ssize_t>self.quotes[low] if low < len(self.quotes) else len(self.containers)
        return self.waiting if at <= self.waiting < reach else reach

    cdef int end_paragraph(self) except -1:
        if self.in_paragraph:
            self.in_paragraph = False  # (as it is now, should the pairing fail)
            self.ticked = -1
            self.pairing.close()
        return 0

    cdef int add(self, Py_ssize_t start, Py_ssize_t first, Py_ssize_t end) except -1:
        # A paragraph line (text[start:end], its content from first).
        if self.streaming and self.ticked < 0 and \
                next_of(self.kind, self.data, BACKTICK, first, end) < end:
            self.ticked = self.base + start
        self.pairing.take(self.kind, self.data, first, end, self.base)
        return 0

    cdef int add_wall(self, Py_ssize_t start, Py_ssize_t end) except -1:
        self.walls.add(self.base + start, self.base + end)
        return 0

    cdef bint at_neutral(self) noexcept:
        return not (self.containers or self.fence_length or self.indented or self.in_paragraph)

    cdef int open_container(self, Py_ssize_t matched, bint started) except -1:
        if not started:
            self.end_paragraph()
            self.truncate(matched)
        return 0

    cdef int line(self, Py_ssize_t start, Py_ssize_t end) except -1:
        cdef Py_ssize_t columns, first, first_col, matched
        cdef Py_UCS4 unit
        if not self.containers:
            if self.fence_length:
                self.indent(start, end, 0, 0, &columns, &first, &first_col)
                if columns <= 3 and self.closes(first, end):
                    self.fence_length = 0
                elif start < end:
                    self.add_wall(start, end)
                return 0
            if not self.indented:
                if start == end:
                    self.end_paragraph()
                    return 0
                unit = self.at(start)
                if unit >= 128 or not block_start[unit]:
                    self.in_paragraph = True
                    self.add(start, start, end)
                    return 0
        elif start == end and not self.fence_length and not self.indented:
            matched = self.blank_reach(0)
            self.end_paragraph()
            self.truncate(matched)
            return 0
        return self.walk(start, end)

    cdef int walk(self, Py_ssize_t start, Py_ssize_t end) except -1:
        cdef Py_ssize_t pos = start, col = 0, extra = 0, matched = 0, reach
        cdef Py_ssize_t depth = len(self.containers)
        cdef Py_ssize_t columns, first, first_col, container, after, after_col
        cdef Py_ssize_t spaces, content, content_col, width, opener
        cdef bint started, interrupts, is_block
        cdef int ordered
        cdef Py_UCS4 fence_unit
        self.rule_from = self.rule_stop = 0  # nothing of this line scanned yet
        while matched < depth:
            container = self.containers[matched]
            self.indent(pos, end, col, extra, &columns, &first, &first_col)
            if container < 0:
                if columns <= 3 and first < end and self.at(first) == GREATER:
                    self.after_marker(first + 1, end, first_col + 1, &pos, &col, &extra)
                    matched += 1
                    continue
                break
            if first == end:
                reach = self.blank_reach(matched)
                if reach > matched:
                    pos, col, extra = end, first_col, 0
                    matched = reach
                break
            if columns >= container:
                self.advance(&pos, &col, &extra, container)
                matched += 1
                continue
            break
        if 0 <= self.waiting < matched:
            self.indent(pos, end, col, extra, &columns, &first, &first_col)
            if first < end:
                self.waiting = -1
        if self.fence_length:
            if matched == depth:
                self.indent(pos, end, col, extra, &columns, &first, &first_col)
                if columns <= 3 and self.closes(first, end):
                    self.fence_length = 0
                elif pos < end:
                    self.add_wall(pos, end)
                return 0
            self.fence_length = 0
        self.indent(pos, end, col, extra, &columns, &first, &first_col)
        if self.indented:
            if matched == depth and (first == end or columns >= 4):
                if first < end:
                    self.add_wall(pos, end)
                return 0
            self.indented = False
        if first == end:
            self.end_paragraph()
            self.truncate(matched)
            return 0
        started = False
        while columns <= 3 and first < end:
            if self.at(first) == GREATER:
                self.after_marker(first + 1, end, first_col + 1, &pos, &col, &extra)
            else:
                after = self.bullet(first, end, &ordered)
                if after < 0 or self.thematic(first, end):
                    break
                after_col = first_col + after - first
                self.indent(after, end, after_col, 0, &spaces, &content, &content_col)
                interrupts = self.in_paragraph and matched == depth and not started
                if interrupts and (content == end or ordered == 2):
                    break
                width = after - first
                if content == end or spaces >= 5:
                    container = columns + width + 1
                    pos, col, extra = after, after_col, 0
                    self.advance(&pos, &col, &extra, 1)
                else:
                    container = columns + width + spaces
                    pos, col, extra = content, content_col, 0
                self.open_container(matched, started)
                started = True
                if content == end:
                    self.waiting = len(self.containers)
                self.containers.append(container)
                matched = len(self.containers)
                self.indent(pos, end, col, extra, &columns, &first, &first_col)
                continue
            self.open_container(matched, started)
            started = True
            self.quotes.append(len(self.containers))
            self.containers.append(-1)
            matched = len(self.containers)
            self.indent(pos, end, col, extra, &columns, &first, &first_col)
        if first == end:
            self.end_paragraph()
            return 0
        if matched < len(self.containers):
            if self.in_paragraph:
                is_block = columns <= 3 and (
                    self.fence_opener(first, end, &fence_unit) > 0
                    or self.heading(first, end)
                    or self.thematic(first, end)
                )
                if not is_block:
                    self.add(start, first, end)
                    return 0
            self.end_paragraph()
            self.truncate(matched)
        if columns >= 4:
            if self.in_paragraph:
                self.add(start, first, end)
            else:
                self.indented = True
                self.add_wall(pos, end)
            return 0
        opener = self.fence_opener(first, end, &fence_unit)
        if opener > 0:
            self.end_paragraph()
            self.fence_char = fence_unit
            self.fence_length = opener
            return 0
        if self.heading(first, end):
            self.end_paragraph()
            self.pairing.take(self.kind, self.data, first, end, self.base)  # (none open)
            self.pairing.close()
            return 0
        if self.thematic(first, end) or (self.in_paragraph and self.setext(first, end)):
            self.end_paragraph()
            return 0
        self.in_paragraph = True
        self.add(start, first, end)
        return 0

    cdef int scan_whole(self) except -1:
        cdef Py_ssize_t start = 0, end, following, ticked
        while start < self.size:
            if not (self.containers or self.fence_length or self.indented):
                ticked = -1
                start = plain_lines(self.kind, self.data, self.size, start, 0, self.pairing,
                                    &self.in_paragraph, &ticked)
                if start == self.size:
                    break
            end = next_break(self.kind, self.data, start, self.size)
            self.line(start, end)
            if end == self.size:
                break
            following = end + 1
            if self.at(end) == CR and following < self.size and self.at(following) == LF:
                following += 1
            start = following
        self.end_paragraph()
        return 0


def code_walls(str text not None):
    cdef _Walker walker = _Walker()
    walker.use(text, 0)
    walker.scan_whole()
    return walker.walls.as_list()


def code_spans(str text not None):
    cdef _Walker walker = _Walker()
    walker.use(text, 0)
    walker.scan_whole()
    return walker.walls.as_arrays()


@cython.final
cdef class StreamScanner(_Walker):
    """The twin's `StreamScanner`: the code scan of a text that comes in pieces, each
    piece's lines read in C."""

    def __cinit__(self):
        self.streaming = True
        self.pairing = new_pairing(array.clone(RUNS_TEMPLATE, 0, False), self.walls, False)

    def scan(self, str text not None, base=0, cuts=None):
        cdef Py_ssize_t offset = as_index(base, "base")
        cdef Py_ssize_t size = len(text), start = 0, end, following
        if cuts is not None and type(cuts) is not list:
            raise TypeError(f"cuts must be None or a list, not {type(cuts).__name__}")
        if offset > PY_SSIZE_T_MAX - size:
            raise ValueError("base + len(text) must fit in an index")
        self.use(text, offset)
        try:
            while start < size:
                end = next_break(self.kind, self.data, start, size)
                if cuts is not None and start and start < end and self.at_neutral():
                    cuts.append(offset + start)
                self.line(start, end)
                if end == size:
                    break
                following = end + 1
                if self.at(end) == CR and following < size and self.at(following) == LF:
                    following += 1
                start = following
        finally:
            self.use("", offset)  # the text is not kept: its walls and runs are positions

    def finish(self):
        self.end_paragraph()

    def settle(self):
        self.pairing.close()
        self.ticked = -1

    def take_walls(self):
        cdef list walls = self.walls.as_list()
        self.walls.count = 0
        return walls

    @property
    def ticked_from(self):
        return None if self.ticked < 0 else self.ticked

    @property
    def neutral(self):
        return self.at_neutral()


def line_spans(str text not None):
    cdef Py_ssize_t size = len(text)
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef list spans = []
    cdef Py_ssize_t start = 0, index = 0
    cdef Py_UCS4 unit
    # Every read is at an index below size (tested first): inside the string.
    while index < size:
        unit = read_unit(kind, data, index)
        if unit == LF:
            spans.append((start, index))
            start = index + 1
        elif unit == CR:
            spans.append((start, index))
            if index + 1 < size and read_unit(kind, data, index + 1) == LF:
                index += 1  # CR LF: one break
            start = index + 1
        index += 1
    spans.append((start, size))
    return spans


def held_gaps(str text not None, consumed, start_char, stop_char, delimiter):
    if type(consumed) is not list:
        raise TypeError(f"consumed must be a list, not {type(consumed).__name__}")
    cdef Py_UCS4 start_unit = as_char(start_char, "start_char")
    cdef Py_UCS4 stop_unit = as_char(stop_char, "stop_char")
    cdef Py_UCS4 delimiter_unit = as_char(delimiter, "delimiter")
    cdef list spans = consumed
    cdef Py_ssize_t size = len(text)
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef list found = []
    cdef Py_ssize_t gap, first = 0, last, after = 0
    cdef int bits
    for gap in range(len(spans) + 1):
        gap_before(spans, gap, first, size, &last, &after)
        bits = held_in(kind, data, first, last, start_unit, stop_unit, delimiter_unit)
        if bits:
            found.append((first, last, bits))
        first = after
    return found


# -- validate's per-citation checks ----------------------------------------------------------

cdef extern from "Python.h":
    bint Py_UNICODE_ISALPHA(Py_UCS4 unit) nogil

cdef int check_ints(object values, str name) except -1:
    if type(values) is not list:
        raise TypeError(f"{name} must be a list of ints, not {type(values).__name__}")
    for value in <list>values:
        if type(value) is not int:
            raise TypeError(f"{name} must be a list of ints, not of {type(value).__name__}")
    return 0


cdef Py_ssize_t place_of(int kind, const void* data, Py_ssize_t size, list places,
                         Py_ssize_t index) except -1:
    # places[index] (index < len(places)), checked: ascending, each on a character of text
    # that is no line break.
    cdef Py_ssize_t at = as_index(places[index], "starts")
    cdef Py_UCS4 unit
    if at >= size or (index and at < as_index(places[index - 1], "starts")):
        raise ValueError("starts must be ascending places inside text")
    unit = read_unit(kind, data, at)
    if unit == LF or unit == CR:
        raise ValueError("starts must be places of characters that are no line break")
    return at


cdef inline void add_nibble(unsigned char* table, int code) noexcept nogil:
    # ASCII `code` into a set of skip_filler's nibble table (16 entries): bit code >> 4 of
    # entry code & 15, as citemark_past_filler reads it.
    table[code & 15] |= 1 << (code >> 4)


cdef inline bint is_letter(Py_UCS4 unit) noexcept nogil:
    # str.isalpha; in ASCII the letters are A-Z and a-z (spares a call at each character).
    cdef unsigned int code = unit
    if code < 128:
        return (code | 0x20) - 0x61 < 26  # unsigned: below "a" wraps round to a large value
    return Py_UNICODE_ISALPHA(unit)


cdef Py_ssize_t line_near(int kind, const void* data, Py_ssize_t at,
                          Py_ssize_t floor) noexcept:
    # line_begins when the line starts close by (the usual line: a step back a character at
    # a time), else -1: where the line of `at` starts if it is at most 64 characters back or
    # at floor (0 <= floor <= at; reads in [floor, at)).
    cdef Py_ssize_t near = at - 64 if at - 64 > floor else floor
    cdef Py_ssize_t start = at
    cdef Py_UCS4 unit
    while start > near:
        unit = read_unit(kind, data, start - 1)
        if unit == LF or unit == CR:
            return start
        start -= 1
    return floor if near == floor else -1


cdef Py_ssize_t line_begins(int kind, const void* data, Py_ssize_t at,
                            Py_ssize_t floor) noexcept:
    # Where the line of `at` starts: after the last CR or LF before it, at floor at the
    # earliest (0 <= floor <= at; reads in [floor, at), each character once).  The usual
    # line starts close by: looked for back a character at a time; further back, forward
    # from floor by the vector search.
    cdef Py_ssize_t near = at - 64 if at - 64 > floor else floor
    cdef Py_ssize_t start = at, found
    cdef Py_UCS4 unit
    while start > near:
        unit = read_unit(kind, data, start - 1)
        if unit == LF or unit == CR:
            return start
        start -= 1
    start = floor
    while True:
        found = next_break(kind, data, start, near)
        if found == near:
            return start
        start = found + 1


cdef enum:
    # The classes of an ASCII character for cited_lines: filler, letter, neither.
    FILLER = 0
    LETTER = 1
    OTHER = 2


cdef Py_ssize_t first_letter(const text_t* data, Py_ssize_t pos, Py_ssize_t stop,
                             const unsigned char* classes, const unsigned char* fillers,
                             Py_ssize_t* doubt) noexcept:
    # The first letter (str.isalpha) in [pos, stop), else stop; the first character before
    # it that is neither a letter nor filler noted in doubt (if < 0).  classes: of ASCII;
    # fillers: the filler as skip_filler's nibble table.
    cdef Py_UCS4 unit
    cdef unsigned char found
    while pos < stop and doubt[0] < 0:
        # The filler skipped a vector at a time (a line of thousands of backticks cost a
        # step each otherwise); what follows is read below.
        if text_t is Py_UCS1:
            pos = skip_filler_ucs1(data, pos, stop, fillers)
        elif text_t is Py_UCS2:
            pos = skip_filler_ucs2(data, pos, stop, fillers)
        if pos == stop:
            break
        unit = data[pos]
        if unit < 128:
            found = classes[unit]
            if found == LETTER:
                return pos
            if found == OTHER:
                doubt[0] = pos
        elif Py_UNICODE_ISALPHA(unit):
            return pos
        else:
            doubt[0] = pos
        pos += 1
    # The doubt known, only a letter matters: the units that may be one found a vector at a
    # time (a line of thousands of backticks and no letter cost a step each otherwise), and
    # looked at one at a time while they follow each other (every unit above ASCII may be
    # one: a run of them, say of marker characters, would cost a search each).
    while pos < stop:
        if text_t is Py_UCS1:
            pos = maybe_letter_ucs1(data, pos, stop)
        elif text_t is Py_UCS2:
            pos = maybe_letter_ucs2(data, pos, stop)
        else:
            pos = maybe_letter_ucs4(data, pos, stop)
        while pos < stop:
            unit = data[pos]
            if unit < 128:
                if is_letter(unit):
                    return pos
                break  # (on with the vector search)
            if Py_UNICODE_ISALPHA(unit):
                return pos
            pos += 1
    return stop


cdef Py_ssize_t cited_prefix(const text_t* data, Py_ssize_t floor, Py_ssize_t at,
                             const unsigned char* classes, const unsigned char* fillers,
                             const unsigned char* within, Py_ssize_t* line_start,
                             bint* worded, Py_ssize_t* doubt) noexcept:
    # line_begins and first_letter's scan in one pass over [floor, at) (0 <= floor <= at,
    # at inside the string; no marker in it): the start of the line of `at` (after the last
    # CR or LF), whether the line holds a letter before at, and the first character before
    # it that is neither letter nor filler (doubt, -1: none), each set anew at every line
    # break.  Returns at.  Every read is in [floor, at).  within: the filler but for the
    # line breaks, as skip_filler's nibble table (it stops at a break too).
    cdef Py_ssize_t pos = floor, found
    cdef Py_UCS4 unit
    cdef int kind = sizeof(text_t)  # (PEP 393's kinds are the widths)
    line_start[0] = floor
    worded[0] = False
    doubt[0] = -1
    while pos < at:
        if worded[0] or doubt[0] >= 0:
            # Only a letter (none found yet) and a line break matter now: the break found
            # a vector at a time, a letter before it as first_letter finds one then.
            found = next_break(kind, data, pos, at)
            if not worded[0]:
                worded[0] = first_letter(data, pos, found, classes, fillers, doubt) < found
            if found == at:
                break
            pos = line_start[0] = found + 1
            worded[0] = False
            doubt[0] = -1
            continue
        if text_t is Py_UCS1:
            pos = skip_filler_ucs1(data, pos, at, within)
        elif text_t is Py_UCS2:
            pos = skip_filler_ucs2(data, pos, at, within)
        if pos == at:
            break
        unit = data[pos]
        if unit == LF or unit == CR:
            line_start[0] = pos + 1  # (nothing found on the line before: nothing to reset)
        elif unit < 128:
            if classes[unit] == LETTER:
                worded[0] = True
            elif classes[unit] == OTHER:
                doubt[0] = pos
        elif Py_UNICODE_ISALPHA(unit):
            worded[0] = True
        else:
            doubt[0] = pos
        pos += 1
    return at


def cited_lines(str text not None, starts, consumed, filler):
    check_ints(starts, "starts")
    if type(consumed) is not list:
        raise TypeError(f"consumed must be a list, not {type(consumed).__name__}")
    if type(filler) is not str:
        raise TypeError(f"filler must be a str, not {type(filler).__name__}")
    cdef unsigned char classes[128]
    cdef Py_UCS4 char
    cdef int code
    for code in range(128):
        classes[code] = LETTER if is_letter(code) else OTHER
    for char in <str>filler:
        if char >= 128:
            raise ValueError("filler must hold ASCII characters only")
        if classes[char] == OTHER:  # a letter stays one
            classes[char] = FILLER
    cdef unsigned char fillers[16]  # the filler as first_letter's nibble table
    cdef unsigned char within[16]  # ... but for the line breaks (cited_prefix's)
    for code in range(16):
        fillers[code] = 0
        within[code] = 0
    for code in range(128):
        if classes[code] == FILLER:
            add_nibble(fillers, code)
            if code != LF and code != CR:
                add_nibble(within, code)
    cdef list places = starts, spans = consumed, fenced = [], bare = [], unsure = []
    cdef Py_ssize_t size = len(text), count = len(places), index, first, at, pos
    cdef Py_ssize_t line_start, line_end = -1, span = 0, span_start, span_end, stop
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef bint worded
    cdef Py_ssize_t doubt
    index = 0
    while index < count:
        at = place_of(kind, data, size, places, index)
        worded = False
        doubt = -1  # the first character there that is no letter nor filler
        line_start = line_near(kind, data, at, line_end + 1)
        pos = line_start
        if line_start < 0:
            # The markers that end before the line's earliest start passed (the scan below
            # passes them too: it reads on from the line's start).
            while span < len(spans):
                consumed_span(spans, span, &span_start, &span_end)
                if span_end > line_end + 1:
                    break
                span += 1
        if line_start < 0 and (span == len(spans) or span_start >= at):
            # A line that starts far back with no marker before its first citation: its
            # start and the letter scan of what stands before that citation in one pass
            # (each read it once otherwise, a line of thousands of backticks).
            if kind == 1:
                pos = cited_prefix(<const Py_UCS1*>data, line_end + 1, at, classes, fillers,
                                   within, &line_start, &worded, &doubt)
            elif kind == 2:
                pos = cited_prefix(<const Py_UCS2*>data, line_end + 1, at, classes, fillers,
                                   within, &line_start, &worded, &doubt)
            else:
                pos = cited_prefix(<const Py_UCS4*>data, line_end + 1, at, classes, fillers,
                                   within, &line_start, &worded, &doubt)
        elif line_start < 0:
            line_start = line_begins(kind, data, at, line_end + 1)
            pos = line_start
        line_end = next_break(kind, data, at, size)
        first = index
        index += 1
        while index < count:
            at = place_of(kind, data, size, places, index)
            if at >= line_end:
                break
            index += 1
        if next_of(kind, data, BACKTICK, line_start, line_end) < line_end or \
                next_of(kind, data, TILDE, line_start, line_end) < line_end:
            fenced.append((line_start, line_end, first, index))
        # A letter outside the consumed markers (spans read in order, once each), else
        # whether every character there is filler; from pos on (what stands before it read
        # above).
        while not worded and pos < line_end:
            while span < len(spans):
                consumed_span(spans, span, &span_start, &span_end)
                if span_end > pos:
                    break
                span += 1
            stop = line_end
            if span < len(spans):
                if span_start <= pos:
                    pos = span_end  # inside a marker: on after it
                    continue
                if span_start < stop:
                    stop = span_start
            if kind == 1:
                pos = first_letter(<const Py_UCS1*>data, pos, stop, classes, fillers, &doubt)
            elif kind == 2:
                pos = first_letter(<const Py_UCS2*>data, pos, stop, classes, fillers, &doubt)
            else:
                pos = first_letter(<const Py_UCS4*>data, pos, stop, classes, fillers, &doubt)
            worded = pos < stop
        if not worded:
            if doubt < 0:
                bare.append((line_start, line_end, first, index))
            else:
                unsure.append((line_start, line_end, first, index, doubt))
    return fenced, bare, unsure


cdef bint holds(str marks, Py_UCS4 unit) except -1:
    cdef Py_UCS4 mark
    for mark in marks:
        if mark == unit:
            return True
    return False


if twin.BLANKS != " \t":
    raise ImportError("commonmark_c takes spaces and tabs for blanks")


def punctuated(str text not None, starts, ends, marks):
    check_ints(starts, "starts")
    check_ints(ends, "ends")
    if type(marks) is not str:
        raise TypeError(f"marks must be a str, not {type(marks).__name__}")
    cdef list firsts = starts, lasts = ends, found = []
    cdef Py_ssize_t count = len(firsts), size = len(text), index = 0, first, after, pos
    if len(lasts) != count:
        raise ValueError("starts and ends must be as long as each other")
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_UCS4 unit
    cdef bint blank_between
    # Each character is read once: the gaps between the citations, and after each run.
    while index < count:
        first = index
        while index + 1 < count:
            # Only blanks between this citation and the next: one run.
            pos = as_index(lasts[index], "ends")
            after = as_index(firsts[index + 1], "starts")
            if after > size:
                raise ValueError("starts and ends must be places inside text")
            blank_between = True
            while pos < after:
                unit = read_unit(kind, data, pos)
                if unit != SPACE and unit != TAB:
                    blank_between = False
                    break
                pos += 1
            if not blank_between:
                break
            index += 1
        after = as_index(lasts[index], "ends")
        while after < size and (read_unit(kind, data, after) == SPACE or
                                read_unit(kind, data, after) == TAB):
            after += 1
        if after < size and holds(marks, read_unit(kind, data, after)):
            found.append((first, index, after))
        index += 1
    return found


def located_rows(citations, located, compute, found):
    if type(citations) is not list:
        raise TypeError(f"citations must be a list, not {type(citations).__name__}")
    if type(located) is not dict:
        raise TypeError(f"located must be a dict, not {type(located).__name__}")
    if not callable(compute):
        raise TypeError(f"compute must be callable, not {type(compute).__name__}")
    if type(found) is not list:
        raise TypeError(f"found must be a list, not {type(found).__name__}")
    cdef list out = found
    cdef tuple citation, row
    cdef object rows_of, item, key, entry
    cdef Py_ssize_t start, end
    for item in <list>citations:
        if not isinstance(item, tuple) or len(<tuple>item) < 5 or \
                type((<tuple>item)[3]) is not int or type((<tuple>item)[4]) is not int:
            raise TypeError("citations must hold (family, ids, locator, start, end, ...) tuples")
        citation = <tuple>item
        key = (citation[1], citation[2])
        rows_of = (<dict>located).get(key)
        if rows_of is None:
            rows_of = compute(*key)
            (<dict>located)[key] = rows_of
        if type(rows_of) is not list:
            raise TypeError("compute must give a list of (code, severity, message) rows")
        if not rows_of:
            continue
        start = citation[3]
        end = citation[4]
        # Each row checked where it is used (compute and the look-up run Python code).
        for entry in <list>rows_of:
            if type(entry) is not tuple or len(<tuple>entry) != 3 or \
                    type((<tuple>entry)[0]) is not str or type((<tuple>entry)[1]) is not str or \
                    type((<tuple>entry)[2]) is not str:
                raise TypeError("compute must give a list of (code, severity, message) rows")
            row = <tuple>entry
            out.append(new_diagnostic(<PyObject*>row[0], <PyObject*>row[1], <PyObject*>row[2],
                                      start, end))


def covered(starts, ends, wall_starts, wall_ends):
    check_ints(starts, "starts")
    check_ints(ends, "ends")
    check_longs(wall_starts, "wall_starts")
    check_longs(wall_ends, "wall_ends")
    cdef list firsts = starts, lasts = ends, found = []
    cdef array.array lows = wall_starts, highs = wall_ends
    cdef Py_ssize_t count = len(firsts), walls = Py_SIZE(lows), index, wall = 0
    cdef Py_ssize_t start, end, previous = 0
    cdef long long reach = -1  # the end of the last wall that starts at or before start
    if len(lasts) != count:
        raise ValueError("starts and ends must be as long as each other")
    if Py_SIZE(highs) != walls:
        raise ValueError("wall_starts and wall_ends must be as long as each other")
    cdef const long long* low = lows.data.as_longlongs
    cdef const long long* high = highs.data.as_longlongs
    # One merge of the ascending starts and walls: each wall is read once (wall < walls:
    # inside both arrays).
    for index in range(count):
        start = as_index(firsts[index], "starts")
        end = as_index(lasts[index], "ends")
        if start < previous:
            raise ValueError("starts must be ascending")
        previous = start
        while wall < walls and low[wall] <= start:
            reach = high[wall]
            wall += 1
        found.append(end <= reach)
    return found


# -- validate's checks of the cited lines ----------------------------------------------------

cdef bint fence_sensitive(int kind, const void* data, Py_ssize_t start,
                          Py_ssize_t end) noexcept:
    # Whether text[start:end] holds a fence character, a backslash or a line break (the
    # twin's _SENSITIVE).
    cdef Py_UCS4 unit
    while start < end:
        unit = read_unit(kind, data, start)
        if unit == BACKTICK or unit == TILDE or unit == BACKSLASH or unit == CR or unit == LF:
            return True
        start += 1
    return False


cdef bint not_blank_in(int kind, const void* data, Py_ssize_t start, Py_ssize_t end) noexcept:
    # Whether text[start:end] holds a character other than a space or a tab.
    cdef Py_UCS4 unit
    while start < end:
        unit = read_unit(kind, data, start)
        if unit != SPACE and unit != TAB:
            return True
        start += 1
    return False


# A fence character's run as skip_filler's nibble table (the rest of a run of thousands of
# backticks skipped a vector at a time).
cdef unsigned char backtick_run[16]
cdef unsigned char tilde_run[16]
for _unit in range(16):
    backtick_run[_unit] = 0
    tilde_run[_unit] = 0
add_nibble(backtick_run, BACKTICK)
add_nibble(tilde_run, TILDE)


def fence_cited(str text not None, fenced, starts, ends, consumed):
    if type(fenced) is not list:
        raise TypeError(f"fenced must be a list, not {type(fenced).__name__}")
    check_ints(starts, "starts")
    check_ints(ends, "ends")
    if type(consumed) is not list:
        raise TypeError(f"consumed must be a list, not {type(consumed).__name__}")
    cdef list rows = fenced, firsts = starts, lasts = ends, spans = consumed, found = []
    cdef Py_ssize_t count = len(firsts), size = len(text), markers = len(spans)
    if len(lasts) != count:
        raise ValueError("starts and ends must be as long as each other")
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t line_start, line_end, first, stop, begin, previous = 0
    cdef Py_ssize_t span = 0, span_start = 0, span_end = 0, marker, pos, limit, at, index
    cdef Py_ssize_t spaces, length, cite_start, cite_end
    cdef Py_UCS4 unit, fence
    cdef bint clear, opens, failed, blank, outside
    cdef const unsigned char* run
    cdef object item
    for item in rows:
        if type(item) is not tuple or len(<tuple>item) != 4:
            raise TypeError("fenced must hold (line_start, line_end, first, stop) tuples")
        line_start = as_index((<tuple>item)[0], "fenced")
        line_end = as_index((<tuple>item)[1], "fenced")
        first = as_index((<tuple>item)[2], "fenced")
        stop = as_index((<tuple>item)[3], "fenced")
        if not first < stop <= count:
            raise ValueError("fenced must hold first < stop within starts")
        begin = as_index(firsts[first], "starts")
        if not previous <= line_start <= begin <= line_end <= size:
            raise ValueError("fenced must hold ascending lines around their first citation")
        previous = line_start
        for index in range(first, stop):
            cite_start = as_index(firsts[index], "starts")
            cite_end = as_index(lasts[index], "ends")
            if not cite_start <= cite_end <= size:
                raise ValueError("starts and ends must be places inside text, each start first")
        # The first marker that starts on the line (the pointer only moves on: the lines are
        # ascending, and each marker is read on the way once).
        while span < markers:
            consumed_span(spans, span, &span_start, &span_end)
            if span_start >= line_start:
                break
            span += 1
        clear = span == markers or span_start >= begin
        # The fence before the first citation, read without the markers before it: up to 3
        # spaces, then 3 of one fence character (a state machine over what is left).
        spaces = length = 0
        fence = 0
        opens = failed = False
        pos = line_start
        marker = span
        while pos < begin and not (opens or failed):
            limit = begin
            if marker < markers:
                consumed_span(spans, marker, &span_start, &span_end)
                if span_start < begin:
                    limit = span_start
            while pos < limit:
                unit = read_unit(kind, data, pos)
                pos += 1
                if fence == 0:
                    if unit == SPACE and spaces < 3:
                        spaces += 1
                    elif unit == BACKTICK or unit == TILDE:
                        fence = unit
                        length = 1
                    else:
                        failed = True
                        break
                elif unit == fence:
                    length += 1
                    if length == 3:
                        opens = True
                        break
                else:
                    failed = True
                    break
            if limit < begin and not (opens or failed):
                pos = span_end if span_end < begin else begin  # past the marker
                marker += 1
        if not opens:
            continue
        blank = not clear
        index = first
        while not blank and index < stop:
            blank = fence_sensitive(kind, data, as_index(firsts[index], "starts"),
                                    as_index(lasts[index], "ends"))
            index += 1
        if not blank:
            # Read in place (clear): the rest of the run, then a character other than a blank
            # after it, outside the citations.
            if fence == BACKTICK:
                run = &backtick_run[0]
            else:
                run = &tilde_run[0]
            if kind == 1:
                pos = skip_filler_ucs1(<const Py_UCS1*>data, pos, begin, run)
            elif kind == 2:
                pos = skip_filler_ucs2(<const Py_UCS2*>data, pos, begin, run)
            while pos < begin and read_unit(kind, data, pos) == fence:
                pos += 1
            at = pos
            outside = False
            for index in range(first, stop):
                cite_start = as_index(firsts[index], "starts")
                if not_blank_in(kind, data, at, cite_start):
                    outside = True
                    break
                cite_end = as_index(lasts[index], "ends")
                if cite_end > at:
                    at = cite_end
            if not outside:
                outside = not_blank_in(kind, data, at, line_end)
            blank = not outside
        found.append((first, stop, blank))
    return found


def filler_end(str text not None, start, end, filler):
    cdef Py_ssize_t lo = as_index(start, "start"), hi = as_index(end, "end")
    if type(filler) is not str:
        raise TypeError(f"filler must be a str, not {type(filler).__name__}")
    if not lo <= hi <= len(text):
        raise ValueError("start and end must be places in text, start first")
    cdef bint table[128]
    cdef unsigned char fillers[16]  # the filler as skip_filler's nibble table
    cdef Py_UCS4 char
    cdef int code
    for code in range(128):
        table[code] = False
    for code in range(16):
        fillers[code] = 0
    for char in <str>filler:
        if char >= 128:
            raise ValueError("filler must hold ASCII characters only")
        code = char
        table[code] = True
        add_nibble(fillers, code)
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t pos = lo
    cdef Py_UCS4 unit
    # A vector at a time (the gaps between the citations may be thousands of backticks),
    # then the rest (less than a vector) or the first other character a unit at a time.
    if kind == 1:
        pos = skip_filler_ucs1(<const Py_UCS1*>data, pos, hi, fillers)
    elif kind == 2:
        pos = skip_filler_ucs2(<const Py_UCS2*>data, pos, hi, fillers)
    while pos < hi:
        unit = read_unit(kind, data, pos)
        if unit >= 128 or not table[unit]:
            return pos
        pos += 1
    return hi


def kept_bounds(rows, kept):
    if type(rows) is not list:
        raise TypeError(f"rows must be a list, not {type(rows).__name__}")
    if type(kept) is not list:
        raise TypeError(f"kept must be a list of bools, not {type(kept).__name__}")
    cdef list lines = rows, flags = kept, found = []
    cdef Py_ssize_t number, first, stop, low, high, size = len(flags)
    cdef object item, flag
    for flag in flags:
        if type(flag) is not bool:
            raise TypeError(f"kept must be a list of bools, not of {type(flag).__name__}")
    for number in range(len(lines)):
        item = lines[number]
        if type(item) is not tuple or len(<tuple>item) < 4:
            raise TypeError("rows must hold (line_start, line_end, first, stop, ...) tuples")
        first = as_index((<tuple>item)[2], "rows")
        stop = as_index((<tuple>item)[3], "rows")
        if not first <= stop <= size:
            raise ValueError("rows must hold first <= stop within kept")
        low = first
        while low < stop and flags[low] is not True:
            low += 1
        if low == stop:
            continue
        high = stop - 1
        while flags[high] is not True:
            high -= 1
        found.append((number, low, high))
    return found


def code_rows(starts, ends, wall_starts, wall_ends, fenced, row, found):
    # Which citations are within code: covered's merge (its arguments checked there).
    cdef list inside = covered(starts, ends, wall_starts, wall_ends)
    if type(fenced) is not list:
        raise TypeError(f"fenced must be a list, not {type(fenced).__name__}")
    if type(row) is not tuple or len(<tuple>row) != 3 or \
            not all(type(item) is str for item in <tuple>row):
        raise TypeError("row must be a (code, severity, message) tuple")
    if type(found) is not list:
        raise TypeError(f"found must be a list, not {type(found).__name__}")
    cdef list firsts = starts, lasts = ends, rows = fenced, out = found, kept = []
    cdef tuple fields = row
    cdef Py_ssize_t count = len(firsts), index, fence = 0, fence_first = -1, fence_stop = 0
    cdef object item
    # The citations and the fence lines merged (the rows of the citations in code made
    # here: a Python step per citation cost as much as the rest).
    for index in range(count):
        while index >= fence_stop and fence < len(rows):
            item = rows[fence]
            if type(item) is not tuple or len(<tuple>item) != 3:
                raise TypeError("fenced must hold (first, stop, blank) tuples")
            fence_first = as_index((<tuple>item)[0], "fenced")
            if fence_first < fence_stop:
                raise ValueError("fenced must hold ascending rows within starts")
            fence_stop = as_index((<tuple>item)[1], "fenced")
            if not fence_first < fence_stop <= count:
                raise ValueError("fenced must hold ascending rows within starts")
            fence += 1
        if fence_first <= index < fence_stop:  # reported on the fence line, and nothing else
            kept.append(False)
        elif inside[index] is True:
            out.append(new_diagnostic(<PyObject*>fields[0], <PyObject*>fields[1],
                                      <PyObject*>fields[2], as_index(firsts[index], "starts"),
                                      as_index(lasts[index], "ends")))
            kept.append(False)
        else:
            kept.append(True)
    if fence < len(rows):
        raise ValueError("fenced must hold ascending rows within starts")
    return kept


def present(str text not None, chars):
    if type(chars) is not str:
        raise TypeError(f"chars must be a str, not {type(chars).__name__}")
    cdef list wanted = list(dict.fromkeys(<str>chars)), group
    cdef set found = set()
    cdef Py_ssize_t size = len(text), first, at, index
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef int bits
    cdef Py_UCS4 a, b, c
    for first in range(0, len(wanted), 3):
        group = wanted[first:first + 3]
        a = group[0]
        b = group[1] if len(group) > 1 else a
        c = group[2] if len(group) > 2 else a
        bits = -1
        if 0 < <unsigned int>a < 0x80 and 0 < <unsigned int>b < 0x80 and \
                0 < <unsigned int>c < 0x80:
            # Three ASCII characters (none NUL) in one pass on the vector paths.
            if kind == 1:
                bits = present_ucs1(<const Py_UCS1*>data, size, a, b, c)
            elif kind == 2:
                bits = present_ucs2(<const Py_UCS2*>data, size, a, b, c)
        if bits >= 0:
            for index in range(len(group)):
                if bits >> index & 1:
                    found.add(group[index])
            continue
        # Else one search for the group: a character found is dropped from it and the
        # search goes on from there (the others occur after it, if at all).
        at = 0
        while group:
            a = group[0]
            b = group[1] if len(group) > 1 else a
            c = group[2] if len(group) > 2 else a
            at = next_in(kind, data, a, b, c, at, size)
            if at == size:
                break
            found.add(text[at])  # (at < size: inside the string)
            group.remove(text[at])
            at += 1
    return "".join([char for char in wanted if char in found])
