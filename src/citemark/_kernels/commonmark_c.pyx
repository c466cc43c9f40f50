# cython: language_level=3, boundscheck=False, wraparound=False, freethreading_compatible=True
# cython: auto_pickle=False, autotestdict=False
"""The compiled code scan of `_markdown.code`: where Markdown holds code, read from CPython's
own string storage (PEP 393), for `citemark.clean`, `Parser(skip_code=True)`, the streams
and validate.

Same functions, names and branch order as the twin in `commonmark_py.py`:

- `runs(text, first, end, base)`: the backtick runs of text[first:end], flat in an
  `array("q")` (start, end, escaped of each), positions plus base.
- `scan_plain_lines(text, start, base, pending, code_ranges, in_paragraph, ticked_from)`: the common
lines
  outside every container and code block, up to the first other line.
- `pair_backticks(runs, code_ranges)`: append to code ranges the inline code spans those runs make.
- `find_code_ranges(text)`: `commonmark_py.CodeScanner` over a whole text, every line in C, the
  code spans as (start, end) pairs; `code_spans(text)`: the same as two arrays (starts,
  ends).
- `StreamScanner`: the same scan over a text that comes in pieces (a stream's), its block
  structure kept from one piece to the next.
- `line_spans(text)`: (start, end) of every line's content.

The threshold between the two pairings and the characters that start blocks are read from
the twin at import (one home); the line breaks are checked against it.  A single character
is found by the vector search of `simd.h` (CITEMARK_SIMD caps it, as for the scanner);
everything else is a plain loop.

The paths only this kernel has, each with what it earns on 4 KB answers with a list, a fence
and inline code (benches/bench_code_scan.py; the online pairing against this kernel built to
collect the runs):

| fast path                                                                 | earns         |
|---------------------------------------------------------------------------|---------------|
| the whole scan in C (`_Walker`), not the twin's `CodeScanner` per line    | 33x the twin  |
| simd.h's search for line breaks and backticks, not CITEMARK_SIMD=portable | 2.5x          |
| code spans kept in two arrays (`code_spans`), not tuples made arrays      | 2.3x          |
| backtick runs paired as found (`_Pairing` online), not at paragraph end   | 1.2-1.4x      |
"""

cimport cython
from cpython cimport array
from cpython.mem cimport PyMem_Free, PyMem_Realloc, PyMem_Malloc
from libc.string cimport memcpy

from citemark._kernels import commonmark_py as twin

import array as _array_module

cdef extern from "Python.h":
    Py_ssize_t Py_SIZE(object value)
    int PyUnicode_KIND(object text)
    void* PyUnicode_DATA(object text)
    Py_UCS4 read_unit "PyUnicode_READ"(int kind, const void* data, Py_ssize_t index) nogil
    const Py_ssize_t PY_SSIZE_T_MAX
    Py_ssize_t PyLong_AsSsize_t(object value)  # its error is looked at by the caller
    void* PyErr_Occurred()
    void PyErr_Clear()

cdef extern from "Python.h":
    ctypedef unsigned char Py_UCS1
    ctypedef unsigned short Py_UCS2

cdef extern from "simd.h" nogil:
    const char* cm_init()
    Py_ssize_t cm_find_ucs1(const Py_UCS1* data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch)
    Py_ssize_t cm_find_ucs2(const Py_UCS2* data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch)
    Py_ssize_t cm_find_ucs4(const Py_UCS4* data, Py_ssize_t i, Py_ssize_t end, Py_UCS4 ch)

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


cdef Py_ssize_t runs_into(const text_t* data, Py_ssize_t lo, Py_ssize_t* pos, Py_ssize_t hi,
                          Py_ssize_t offset, long long* out, Py_ssize_t room) noexcept:
    # The runs of backticks in data[pos[0]:hi], at most `room` of them, written to out
    # (start + offset, end + offset, escaped: three entries each); pos[0] moved past the
    # last one written (to hi when none is left).  The backslashes before a run are counted
    # back to lo at most.  Every read is in [lo, hi): inside the string.
    cdef Py_ssize_t count = 0, i = pos[0], at, escapes
    while i < hi and count < room:
        i = next_unit(data, BACKTICK, i, hi)
        if i == hi:
            break
        at = i
        i += 1
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
cdef class _CodeRanges:
    """Where the code spans found go: appended to a list as (start, end) tuples (`out`, for
    the functions that take one), or into two arrays of longs (the whole scan: no Python
    object per span), handed over as they are, without a copy."""

    cdef list out  # None: the arrays
    cdef array.array starts  # room entries each once grown (None before), count in use
    cdef array.array ends
    cdef Py_ssize_t count
    cdef Py_ssize_t room

    cdef inline int add(self, long long start, long long end) except -1:
        # (inline, the growth and the list apart: it runs once per code span)
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
        # Four times as much, so thousands of code spans cost few copies (the count is at
        # most the text's length: no overflow; as_arrays gives back what is not used).
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
        # The arrays themselves, cut to their count (the code ranges are not added to after).
        if self.starts is None:
            return array.clone(RUNS_TEMPLATE, 0, False), array.clone(RUNS_TEMPLATE, 0, False)
        array.resize(self.starts, self.count)
        array.resize(self.ends, self.count)
        self.room = self.count
        return self.starts, self.ends


cdef _CodeRanges list_code_ranges(list code_ranges):
    cdef _CodeRanges sink = _CodeRanges()
    sink.out = code_ranges
    return sink


cdef enum:
    CHUNK_RUNS = 256  # runs found at a time, into a buffer on the stack (6 KB)


@cython.final
cdef class _Pairing:
    """Where the runs of one paragraph go on their way to its code spans.

    Collecting (`online` False: `runs`, `scan_plain_lines`), every run is appended to the array
    `runs` and the paragraph's end pairs them all.  Online (the whole scan), a run is paired as it
    comes: the opener waiting (the first run kept) is closed by the first later run of its
    length, the twin's rule.  An opener still open at the paragraph's end closes nothing:
    the runs after it are then paired as `pair_backticks` pairs them (the rule reads on from the
    next run), read again from the parts of the lines after it, which are all that is kept (`parts`:
    four entries a line, not three for every run after the opener).  Each run is
    read twice at most: once as it comes, once again if the opener before it never
    closes."""

    cdef array.array runs  # collecting
    cdef _CodeRanges code_ranges
    cdef bint online
    # online: (lo, from, hi, offset) of each part of a line to read again, text[from:hi]
    # with its backslashes counted back to lo; none without an opener
    cdef long long* parts
    cdef Py_ssize_t used  # entries of parts in use (four a part)
    cdef Py_ssize_t room  # entries of parts allocated
    cdef long long want  # online, an opener waiting: the length of the run that closes it
    cdef long long code_from  # ... and where its code span starts
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
                    self.code_from = run[0] + run[2]
                    self.keep(lo, run[1] - offset, hi, offset)
            elif run[1] - run[0] == self.want:
                self.code_ranges.add(self.code_from, run[1])
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
                pair_array(self.runs, self.code_ranges)
            finally:
                array.resize(self.runs, 0)
            return 0
        if not self.used:
            return 0
        # The opener never closed: the runs after it read again and paired as `pair_backticks` does.
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
        pair_array(after, self.code_ranges)
        return 0


cdef int extend_runs(array.array runs, const long long* chunk, Py_ssize_t count) except -1:
    cdef Py_ssize_t used = Py_SIZE(runs)
    array.resize_smart(runs, used + 3 * count)  # grown by half again: linear appends
    memcpy(runs.data.as_longlongs + used, chunk, 3 * count * sizeof(long long))
    return 0


cdef _Pairing new_pairing(array.array runs, _CodeRanges code_ranges, bint online):
    cdef _Pairing pairing = _Pairing.__new__(_Pairing)
    pairing.runs = runs
    pairing.code_ranges = code_ranges
    pairing.online = online
    return pairing


def scan_plain_lines(str text not None, start, base, pending, code_ranges, in_paragraph,
                     ticked_from):
    cdef Py_ssize_t at = as_index(start, "start")
    cdef Py_ssize_t offset = as_index(base, "base")
    check_runs(pending, "pending")
    if type(code_ranges) is not list:
        raise TypeError(f"code_ranges must be a list, not {type(code_ranges).__name__}")
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
                     new_pairing(pending, list_code_ranges(code_ranges), False), &paragraph,
                     &ticked, NULL)
    return at, paragraph, None if ticked == -1 else ticked_from if ticked == -2 else ticked


cdef Py_ssize_t plain_lines(int kind, const void* data, Py_ssize_t size, Py_ssize_t at,
                            Py_ssize_t offset, _Pairing pairing,
                            bint* in_paragraph, Py_ssize_t* ticked_from,
                            Breaks* breaks) except -1:
    # plain's lines from at (<= size; offset + size fits in an index), ticked_from -1 for
    # None (any other negative value: one set before): the start of the first line left;
    # breaks: see next_break.
    cdef bint paragraph = in_paragraph[0]
    cdef Py_ssize_t end, following
    cdef Py_UCS4 unit
    cdef bint ticked
    # Every read is at an index below size (each loop tests it first): inside the string.
    while at < size:
        unit = read_unit(kind, data, at)
        if unit < 128 and block_start[unit]:  # (an empty line starts with its line break)
            break
        end = next_break(kind, data, at, size, breaks)
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


def pair_backticks(runs, code_ranges):
    check_runs(runs, "runs")
    if type(code_ranges) is not list:
        raise TypeError(f"code_ranges must be a list, not {type(code_ranges).__name__}")
    cdef array.array items = runs
    cdef Py_ssize_t count = Py_SIZE(items) // 3
    cdef const long long* data = items.data.as_longlongs
    pair_runs(data, count, run_values(data, count), list_code_ranges(code_ranges))


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


cdef int pair_array(array.array runs, _CodeRanges out) except -1:
    # pair for runs this module found, or checked by run_values (real ones).
    cdef Py_ssize_t count = Py_SIZE(runs) // 3, index
    cdef const long long* data = runs.data.as_longlongs
    cdef long long longest = 0
    for index in range(count):
        if data[3 * index + 1] - data[3 * index] > longest:
            longest = data[3 * index + 1] - data[3 * index]
    return pair_runs(data, count, longest, out)


cdef int pair_runs(const long long* data, Py_ssize_t count, long long longest,
                   _CodeRanges out) except -1:
    if count < 2:
        return 0
    if count <= FEW_RUNS:
        return pair_few(data, count, out)
    # The tables of pair_many hold longest + 2 + count indexes: they must be allocatable.
    if longest > PY_SSIZE_T_MAX // <Py_ssize_t>sizeof(Py_ssize_t) // 3 - count:
        raise MemoryError("runs too long to pair")
    return pair_many(data, count, <Py_ssize_t>longest, out)


cdef int pair_many(const long long* data, Py_ssize_t count, Py_ssize_t longest,
                   _CodeRanges out) except -1:
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


cdef int pair_few(const long long* data, Py_ssize_t count, _CodeRanges out) except -1:
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


# -- searches -----------------------------------------------------------------------------


cdef Py_ssize_t next_of(int kind, const void* data, Py_UCS4 unit, Py_ssize_t at,
                        Py_ssize_t last) noexcept nogil:
    # The index of the next `unit` in [at, last), else last (0 <= at, last <= the length):
    # simd.h's vector search.
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


cdef struct Breaks:
    # The first LF and the first CR at or after an earlier place of one text (-1: not
    # looked for yet), kept between the calls of next_break on it.
    Py_ssize_t lf
    Py_ssize_t cr


cdef Py_ssize_t next_break(int kind, const void* data, Py_ssize_t at, Py_ssize_t size,
                           Breaks* breaks) noexcept nogil:
    # The first line break (CR or LF) at or after at, else size (at <= size).  With breaks
    # (the whole scan), each of LF and CR is found by simd.h's search and looked for again
    # only once passed: each part of the text is searched once for each, and a text without
    # a CR costs one search for it.  Without (NULL: `scan_plain_lines`, called once per piece of a
    # stream), a unit at a time, reading only the line.
    if breaks == NULL:
        if kind == 1:
            return break_in(<const Py_UCS1*>data, at, size)
        if kind == 2:
            return break_in(<const Py_UCS2*>data, at, size)
        return break_in(<const Py_UCS4*>data, at, size)
    if breaks.lf < at:
        breaks.lf = next_of(kind, data, LF, at, size)
    if breaks.cr < at:
        breaks.cr = next_of(kind, data, CR, at, size)
    return breaks.lf if breaks.lf < breaks.cr else breaks.cr


cdef inline Py_ssize_t break_in(const text_t* data, Py_ssize_t at,
                                Py_ssize_t size) noexcept nogil:
    # next_break for one width, a unit at a time: a unit above CR (the usual one) costs one
    # comparison.
    cdef Py_UCS4 unit
    while at < size:
        unit = data[at]
        if unit <= CR and (unit == LF or unit == CR):
            return at
        at += 1
    return size


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
    # _Walker.run_of for one width (reads below end).
    while pos < end and data[pos] == unit:
        pos += 1
    return pos


cdef inline bint blank(Py_UCS4 unit) noexcept nogil:
    return unit == SPACE or unit == TAB


cdef class _Walker:
    """`_markdown.code.CodeScanner` line by line in C: the same state (containers, the
    waiting list item, fence, indented code, paragraph and its runs) and the same branches,
    in the same order; each method is named after the Python one.  Over one whole text
    (`find_code_ranges`, base 0) or over the pieces of a stream (`StreamScanner`)."""

    cdef str text  # the text being scanned (its lines' positions plus base are recorded)
    cdef int kind
    cdef const void* data
    cdef Py_ssize_t size
    cdef Py_ssize_t base
    cdef _CodeRanges code_ranges
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
        self.code_ranges = _CodeRanges()
        self.pairing = new_pairing(None, self.code_ranges, True)
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

    cdef int add_code_range(self, Py_ssize_t start, Py_ssize_t end) except -1:
        self.code_ranges.add(self.base + start, self.base + end)
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
                    self.add_code_range(start, end)
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
        cdef Py_ssize_t known = -1, known_col = 0  # the blank run's end, once read (the twin's)
        self.rule_from = self.rule_stop = 0  # nothing of this line scanned yet
        while matched < depth:
            container = self.containers[matched]
            if pos <= known:
                columns, first, first_col = extra + known_col - col, known, known_col
            else:
                self.indent(pos, end, col, extra, &columns, &first, &first_col)
                known, known_col = first, first_col
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
                    self.add_code_range(pos, end)
                return 0
            self.fence_length = 0
        self.indent(pos, end, col, extra, &columns, &first, &first_col)
        if self.indented:
            if matched == depth and (first == end or columns >= 4):
                if first < end:
                    self.add_code_range(pos, end)
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
                self.add_code_range(pos, end)
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
        cdef Breaks breaks
        breaks.lf = breaks.cr = -1
        while start < self.size:
            if not (self.containers or self.fence_length or self.indented):
                ticked = -1
                start = plain_lines(self.kind, self.data, self.size, start, 0, self.pairing,
                                    &self.in_paragraph, &ticked, &breaks)
                if start == self.size:
                    break
            end = next_break(self.kind, self.data, start, self.size, &breaks)
            self.line(start, end)
            if end == self.size:
                break
            following = end + 1
            if self.at(end) == CR and following < self.size and self.at(following) == LF:
                following += 1
            start = following
        self.end_paragraph()
        return 0


def find_code_ranges(str text not None):
    cdef _Walker walker = _Walker()
    walker.use(text, 0)
    walker.scan_whole()
    return walker.code_ranges.as_list()


def code_spans(str text not None):
    cdef _Walker walker = _Walker()
    walker.use(text, 0)
    walker.scan_whole()
    return walker.code_ranges.as_arrays()


@cython.final
cdef class StreamScanner(_Walker):
    """The twin's `StreamScanner`: the code scan of a text that comes in pieces, each
    piece's lines read in C."""

    def __cinit__(self):
        self.streaming = True
        self.pairing = new_pairing(array.clone(RUNS_TEMPLATE, 0, False), self.code_ranges, False)

    def scan(self, str text not None, base=0, cuts=None):
        cdef Py_ssize_t offset = as_index(base, "base")
        cdef Py_ssize_t size = len(text), start = 0, end, following
        cdef Breaks breaks
        breaks.lf = breaks.cr = -1
        if cuts is not None and type(cuts) is not list:
            raise TypeError(f"cuts must be None or a list, not {type(cuts).__name__}")
        if offset > PY_SSIZE_T_MAX - size:
            raise ValueError("base + len(text) must fit in an index")
        self.use(text, offset)
        try:
            while start < size:
                end = next_break(self.kind, self.data, start, size, &breaks)
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
            self.use("", offset)  # the text is not kept: its code ranges and runs are positions

    def finish(self):
        self.end_paragraph()

    def settle(self):
        self.pairing.close()
        self.ticked = -1

    def take_code_ranges(self):
        cdef list code_ranges = self.code_ranges.as_list()
        self.code_ranges.count = 0
        return code_ranges

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
