# cython: language_level=3, boundscheck=False, wraparound=False, freethreading_compatible=True
# cython: auto_pickle=False, autotestdict=False
"""The compiled kernel of `_commonmark`'s hot loops: a paragraph's backtick runs, read from
CPython's own string storage (PEP 393), and their pairing into inline code spans.

Same functions, names and branch order as the twin in `_commonmark_py.py`:

- `runs(text, first, end, base)`: the backtick runs of text[first:end], flat in an
  `array("q")` (start, end, escaped of each), positions plus base.
- `plain(text, start, base, pending, walls, in_paragraph, ticked_from)`: the common lines
  outside every container and code block, up to the first other line.
- `pair(runs, walls)`: append to walls the inline code spans those runs make.
- `strays(text, first, last, held, start_char, stop_char, delimiter, found, foreign)`:
  validate's stray marker characters between the markers, as raw findings.

The threshold between the two pairings and the characters that start blocks are read from
the twin at import (one home); the line breaks are checked against it.
"""

from cpython cimport array
from cpython.mem cimport PyMem_Free, PyMem_Malloc

from citemark import _commonmark_py as twin

import array as _array_module

cdef extern from "Python.h":
    Py_ssize_t Py_SIZE(object value)
    int PyUnicode_KIND(object text)
    void* PyUnicode_DATA(object text)
    Py_UCS4 read_unit "PyUnicode_READ"(int kind, const void* data, Py_ssize_t index) nogil
    const Py_ssize_t PY_SSIZE_T_MAX

cdef enum:
    BACKTICK = 0x60
    BACKSLASH = 0x5C

cdef enum:
    CR = 0x0D
    LF = 0x0A

if twin.LINE_BREAKS != "\\r\\n|\\r|\\n":
    raise ImportError("_commonmark_c splits lines at CR LF, CR and LF only")

# BLOCK_STARTS as a table over ASCII (every character of it is ASCII, checked here).
cdef bint block_start[128]
for _unit in range(128):
    block_start[_unit] = False
for _char in twin.BLOCK_STARTS:
    if ord(_char) >= 128:
        raise ImportError("_commonmark_c expects ASCII block starts")
    block_start[ord(_char)] = True

if twin.RUNS_TYPECODE != "q" or _array_module.array("q").itemsize != sizeof(long long):
    raise ImportError("_commonmark_c keeps runs in arrays of long long ('q')")
cdef array.array RUNS_TEMPLATE = _array_module.array("q")

cdef Py_ssize_t FEW_RUNS = twin.FEW_RUNS


cdef Py_ssize_t as_index(object value, str name) except -1:
    if type(value) is not int:
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if not 0 <= value <= PY_SSIZE_T_MAX:
        raise ValueError(f"{name} must be a non-negative index")
    return value


def runs(str text not None, first, end, base):
    cdef Py_ssize_t lo = as_index(first, "first")
    cdef Py_ssize_t hi = as_index(end, "end")
    cdef Py_ssize_t offset = as_index(base, "base")
    cdef Py_ssize_t n = len(text)
    if not lo <= hi <= n:
        raise ValueError("first and end must satisfy first <= end <= len(text)")
    if offset > PY_SSIZE_T_MAX - n:
        raise ValueError("base + len(text) must fit in an index")
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef array.array found = array.clone(RUNS_TEMPLATE, 0, False)
    cdef Py_ssize_t i = lo, at, count
    cdef bint escaped
    # Every read below is at an index in [lo, hi), and hi <= n: inside the string.
    while i < hi:
        if read_unit(kind, data, i) != BACKTICK:
            i += 1
            continue
        at = i
        while i < hi and read_unit(kind, data, i) == BACKTICK:
            i += 1
        # Most runs follow no backslash: count them only when one is there.  The count
        # stops at lo, so with the run scan every character is read at most twice.
        escaped = False
        if at > lo and read_unit(kind, data, at - 1) == BACKSLASH:
            count = 0
            while at - count > lo and read_unit(kind, data, at - count - 1) == BACKSLASH:
                count += 1
            escaped = count % 2 == 1
        # offset + i <= offset + n <= PY_SSIZE_T_MAX (checked above): no overflow.
        append_run(found, offset + at, offset + i, escaped)
    return found


cdef int append_run(array.array found, Py_ssize_t start, Py_ssize_t stop, bint escaped) except -1:
    cdef Py_ssize_t size = Py_SIZE(found)
    array.resize_smart(found, size + 3)  # raises MemoryError on failure
    # Py_SIZE(found) == size + 3 now: the three writes are inside the array.
    found.data.as_longlongs[size] = start
    found.data.as_longlongs[size + 1] = stop
    found.data.as_longlongs[size + 2] = 1 if escaped else 0
    return 0


cdef int check_runs(object value, str name) except -1:
    if type(value) is not _array_module.array or (<array.array>value).ob_descr.typecode != b"q":
        raise TypeError(f"{name} must be an array('q') of runs, not {type(value).__name__}")
    if Py_SIZE(value) % 3:
        raise ValueError(f"{name} must hold whole (start, end, escaped) triples")
    return 0


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
    cdef array.array open_runs = pending
    cdef bint paragraph = in_paragraph
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t end, following
    cdef Py_UCS4 unit
    cdef bint ticked
    # Every read is at an index below size (each loop tests it first): inside the string.
    while at < size:
        unit = read_unit(kind, data, at)
        if unit < 128 and block_start[unit]:  # (an empty line starts with its line break)
            break
        end = at
        ticked = False
        while end < size:
            unit = read_unit(kind, data, end)
            if unit == CR or unit == LF:
                break
            if unit == BACKTICK:
                ticked = True
            end += 1
        following = end
        if end < size:
            following = end + 1
            if read_unit(kind, data, end) == CR and following < size and \
                    read_unit(kind, data, following) == LF:
                following += 1
        if at == end:
            if paragraph:  # an empty line ends the paragraph
                pair(open_runs, walls)
                paragraph = False
                array.resize(open_runs, 0)
                ticked_from = None
        else:
            paragraph = True
            if ticked:
                if ticked_from is None:
                    ticked_from = offset + at  # <= PY_SSIZE_T_MAX (checked above)
                array.extend(open_runs, runs(text, at, end, offset))
        at = following  # > at: every line moves on by at least one character
    return at, paragraph, ticked_from


def pair(runs, walls):
    check_runs(runs, "runs")
    if type(walls) is not list:
        raise TypeError(f"walls must be a list, not {type(walls).__name__}")
    cdef array.array items = runs
    cdef list out = walls
    cdef Py_ssize_t count = Py_SIZE(items) // 3
    cdef const long long* data = items.data.as_longlongs
    cdef Py_ssize_t index
    cdef long long longest = 0
    # Every run must be a real one: 0 <= start <= end, escaped 0 or 1 (only then one less
    # than the start): the lengths index the tables of pair_many.
    for index in range(count):
        if not (0 <= data[3 * index] <= data[3 * index + 1] and 0 <= data[3 * index + 2] <= 1):
            raise ValueError("runs must hold (start, end, escaped) with 0 <= start <= end")
        if data[3 * index + 2] and data[3 * index] == data[3 * index + 1]:
            raise ValueError("runs must hold no empty escaped run")
        if data[3 * index + 1] - data[3 * index] > longest:
            longest = data[3 * index + 1] - data[3 * index]
    if count < 2:
        return
    if count <= FEW_RUNS:
        pair_few(data, count, out)
        return
    # The tables of pair_many hold 2 * (longest + 2) + count indexes: they must be allocatable.
    if longest > PY_SSIZE_T_MAX // <Py_ssize_t>sizeof(Py_ssize_t) // 3 - count:
        raise MemoryError("runs too long to pair")
    pair_many(data, count, <Py_ssize_t>longest, out)


cdef int pair_many(const long long* data, Py_ssize_t count, Py_ssize_t longest,
                   list out) except -1:
    # The twin's cursor per run length, with the runs bucketed by length in C arrays
    # (a counting sort): bucket[l] .. bucket[l + 1] holds the indexes of the runs of length
    # l, ascending.  longest is the largest length (checked by pair), so every length
    # indexes the tables; their size is at most the runs' characters plus two: linear.
    cdef Py_ssize_t tables = longest + 2  # no overflow: pair bounds longest
    cdef Py_ssize_t* memory = <Py_ssize_t*>PyMem_Malloc(
        (2 * tables + count) * sizeof(Py_ssize_t)
    )
    if memory == NULL:
        raise MemoryError()
    cdef Py_ssize_t* bucket = memory  # tables entries
    cdef Py_ssize_t* cursor = memory + tables  # tables entries
    cdef Py_ssize_t* order = memory + 2 * tables  # count entries
    cdef Py_ssize_t index, length, at, bound, closer
    cdef long long run_start
    try:
        for length in range(tables):
            bucket[length] = 0
        for index in range(count):
            bucket[data[3 * index + 1] - data[3 * index] + 1] += 1  # <= longest + 1
        for length in range(1, tables):
            bucket[length] += bucket[length - 1]
        for length in range(tables):
            cursor[length] = bucket[length]
        for index in range(count):
            length = data[3 * index + 1] - data[3 * index]
            order[cursor[length]] = index  # < bucket[length + 1] <= count
            cursor[length] += 1
        for length in range(tables):
            cursor[length] = bucket[length]
        index = 0
        while index < count:
            run_start = data[3 * index]
            if data[3 * index + 2]:
                run_start += 1  # only an opener can be escaped: inside code a backslash is literal
            length = data[3 * index + 1] - run_start  # 0 <= length <= longest
            at = cursor[length]
            bound = bucket[length + 1]
            while at < bound and order[at] <= index:
                at += 1
            cursor[length] = at
            if length and at < bound:
                closer = order[at]
                out.append((run_start, data[3 * closer + 1]))
                index = closer + 1
            else:
                index += 1
    finally:
        PyMem_Free(memory)
    return 0


cdef int pair_few(const long long* data, Py_ssize_t count, list out) except -1:
    cdef Py_ssize_t index, closer
    cdef long long length
    index = 0
    while index < count:
        length = data[3 * index + 1] - data[3 * index] - data[3 * index + 2]
        closer = index + 1
        while closer < count and data[3 * closer + 1] - data[3 * closer] != length:
            closer += 1
        if length and closer < count:
            out.append((data[3 * index] + data[3 * index + 2], data[3 * closer + 1]))
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
    raise ImportError("_commonmark_c's kinds of stray findings differ from the twin's")


cdef Py_UCS4 as_char(object value, str name) except 0xFFFFFFFF:
    if type(value) is not str:
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    if len(<str>value) != 1:
        raise ValueError(f"{name} must be one character")
    return (<str>value)[0]


cdef Py_ssize_t next_of(int kind, const void* data, Py_UCS4 unit, Py_ssize_t at,
                        Py_ssize_t last) noexcept nogil:
    # The index of the next `unit` in [at, last), else last.
    while at < last and read_unit(kind, data, at) != unit:
        at += 1
    return at


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
    cdef int bits = held & 7
    cdef list out = found
    cdef list walls = foreign
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    # The next of each character (hi when there is none); every index below is in [lo, hi]
    # and is read only when below hi (or below size for the glued word): inside the string.
    cdef Py_ssize_t starts = next_of(kind, data, start_unit, lo, hi) if bits & 1 else hi
    cdef Py_ssize_t stops = next_of(kind, data, stop_unit, lo, hi) if bits & 2 else hi
    cdef Py_ssize_t delimiters = next_of(kind, data, delimiter_unit, lo, hi) if bits & 4 else hi
    cdef Py_ssize_t opened = -1, opened_from = 0, at, end
    cdef Py_UCS4 unit
    while True:
        at = starts if starts < stops else stops
        if delimiters < at:
            at = delimiters
        if at == hi:
            break
        unit = read_unit(kind, data, at)
        end = at + 1
        while end < hi and read_unit(kind, data, end) == unit:
            end += 1
        if at == starts:
            if opened >= 0:
                unterminated(kind, data, size, opened, opened_from, start_unit, stop_unit, out,
                             walls)
            if end - at > 1:
                walls.append((at, end - 1))
            opened = end - 1
            opened_from = at
            starts = next_of(kind, data, start_unit, end, hi)
            delimiters = hi
        elif at == stops:
            if opened >= 0:
                if opened_from < opened:
                    out.append((UNTERMINATED, opened_from, opened))
                walls.append((opened, at + 1))
                out.append((REFUSED, opened, at + 1))
                opened = -1
                delimiters = next_of(kind, data, delimiter_unit, at + 1, hi)
                at += 1
            if at < end:
                out.append((STRAY_STOP, at, end))
            stops = next_of(kind, data, stop_unit, end, hi)
        else:
            if opened < 0:
                out.append((STRAY_DELIMITER, at, end))
            delimiters = next_of(kind, data, delimiter_unit, end, hi)
    if opened >= 0:
        unterminated(kind, data, size, opened, opened_from, start_unit, stop_unit, out, walls)


cdef int unterminated(int kind, const void* data, Py_ssize_t size, Py_ssize_t at,
                      Py_ssize_t opened_from, Py_UCS4 start_unit, Py_UCS4 stop_unit, list out,
                      list walls) except -1:
    # The twin's _unterminated: the word glued to the START at `at` (< size) runs to white
    # space (Py_UNICODE_ISSPACE: what re's \s matches in a str), a START or a STOP.
    out.append((UNTERMINATED, opened_from, at + 1))
    cdef Py_ssize_t end = at + 1
    cdef Py_UCS4 unit
    while end < size:
        unit = read_unit(kind, data, end)
        if unit == start_unit or unit == stop_unit or Py_UNICODE_ISSPACE(unit):
            break
        end += 1
    walls.append((at, end))
    return 0


cdef extern from "Python.h":
    Py_ssize_t PyUnicode_Find(object text, object needle, Py_ssize_t start, Py_ssize_t end,
                              int direction) except -2


cdef Py_ssize_t wall_bound(list walls, Py_ssize_t index, Py_ssize_t side) except -1:
    # walls[index][side], index < len(walls) (checked by the caller), side 0 or 1.
    cdef object item = walls[index]
    if type(item) is not tuple or len(<tuple>item) != 2:
        raise TypeError("walls must hold (start, end) tuples")
    return as_index((<tuple>item)[side], "walls")


def next_outside(str text not None, str needle not None, at, walls, wall):
    cdef Py_ssize_t position = as_index(at, "at")
    if type(walls) is not list:
        raise TypeError(f"walls must be a list, not {type(walls).__name__}")
    cdef Py_ssize_t index = as_index(wall, "wall")
    cdef list items = walls
    cdef Py_ssize_t size = len(text)
    if position > size:
        return -1, index  # as str.find past the end (an empty needle too: found nowhere)
    position = PyUnicode_Find(text, needle, position, size, 1)
    while position >= 0:
        # len(items) is read at every test: a wall's read cannot change it (ints only).
        while index < len(items) and wall_bound(items, index, 1) <= position:
            index += 1
        if index < len(items) and wall_bound(items, index, 0) <= position:
            position = wall_bound(items, index, 1)
            if position > size:
                return -1, index
            position = PyUnicode_Find(text, needle, position, size, 1)
            continue
        break
    return position, index
