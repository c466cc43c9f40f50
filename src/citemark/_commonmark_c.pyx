# cython: language_level=3, boundscheck=False, wraparound=False, freethreading_compatible=True
# cython: auto_pickle=False, autotestdict=False
"""The compiled kernel of `_commonmark`'s hot loops: a paragraph's backtick runs, read from
CPython's own string storage (PEP 393), and their pairing into inline code spans.

Same functions, names and branch order as the twin in `_commonmark_py.py`:

- `runs(text, first, end, base)`: the backtick runs of text[first:end], `(start, end,
  escaped)`, positions plus base.
- `plain(text, start, base, pending, walls, in_paragraph, ticked_from)`: the common lines
  outside every container and code block, up to the first other line.
- `pair(runs, walls)`: append to walls the inline code spans those runs make.

The threshold between the two pairings and the characters that start blocks are read from
the twin at import (one home); the line breaks are checked against it.
"""

from citemark import _commonmark_py as twin

cdef extern from "Python.h":
    int PyUnicode_KIND(object text)
    void* PyUnicode_DATA(object text)
    Py_UCS4 read_unit "PyUnicode_READ"(int kind, const void* data, Py_ssize_t index) nogil
    const Py_ssize_t PY_SSIZE_T_MAX

cdef enum:
    BACKTICK = 0x60
    BACKSLASH = 0x5C
    # The stack arrays of pair_few: at least the twin's FEW_RUNS (checked at import).
    FEW_MAX = 8

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

cdef Py_ssize_t FEW_RUNS = twin.FEW_RUNS
if not 0 <= FEW_RUNS <= FEW_MAX:
    raise ImportError("_commonmark_py.FEW_RUNS exceeds the kernel's stack arrays")


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
    cdef list found = []
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
        found.append((offset + at, offset + i, escaped))
    return found


def plain(str text not None, start, base, pending, walls, in_paragraph, ticked_from):
    cdef Py_ssize_t at = as_index(start, "start")
    cdef Py_ssize_t offset = as_index(base, "base")
    if type(pending) is not list:
        raise TypeError(f"pending must be a list, not {type(pending).__name__}")
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
    cdef list open_runs = pending
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
                del open_runs[:]
                ticked_from = None
        else:
            paragraph = True
            if ticked:
                if ticked_from is None:
                    ticked_from = offset + at  # <= PY_SSIZE_T_MAX (checked above)
                open_runs += runs(text, at, end, offset)
        at = following  # > at: every line moves on by at least one character
    return at, paragraph, ticked_from


cdef int read_run(object run, Py_ssize_t* start, Py_ssize_t* stop, Py_ssize_t* escaped) except -1:
    if type(run) is not tuple or len(run) != 3:
        raise TypeError("runs must hold (start, end, escaped) tuples")
    if type(run[0]) is not int or type(run[1]) is not int or type(run[2]) is not bool:
        raise TypeError("runs must hold (start, end, escaped) tuples of int, int, bool")
    start[0] = run[0]
    stop[0] = run[1]
    escaped[0] = 1 if run[2] else 0
    return 0


def pair(runs, walls):
    if type(runs) is not list:
        raise TypeError(f"runs must be a list, not {type(runs).__name__}")
    if type(walls) is not list:
        raise TypeError(f"walls must be a list, not {type(walls).__name__}")
    cdef list items = runs
    cdef list out = walls
    cdef Py_ssize_t count = len(items)
    if count < 2:
        return
    if count <= FEW_RUNS:
        pair_few(items, count, out)
        return
    cdef Py_ssize_t index, run_start, run_end, escaped, length, cursor, closer
    cdef dict by_length = {}
    cdef list closers
    for index in range(count):
        read_run(items[index], &run_start, &run_end, &escaped)
        by_length.setdefault(run_end - run_start, []).append(index)
    cdef dict cursors = {}
    cdef list none = []
    index = 0
    while index < count:
        read_run(items[index], &run_start, &run_end, &escaped)
        if escaped:
            run_start += 1  # only an opener can be escaped: inside code a backslash is literal
        length = run_end - run_start
        closers = by_length.get(length, none)
        cursor = cursors.get(length, 0)
        while cursor < len(closers) and <Py_ssize_t>closers[cursor] <= index:
            cursor += 1
        cursors[length] = cursor
        if length and cursor < len(closers):
            closer = closers[cursor]
            # closer < count: by_length holds indexes of items only.
            out.append((run_start, items[closer][1]))
            index = closer + 1
        else:
            index += 1


cdef int pair_few(list items, Py_ssize_t count, list out) except -1:
    # count <= FEW_RUNS <= FEW_MAX (checked at import and by the caller): the arrays fit.
    cdef Py_ssize_t starts[FEW_MAX]
    cdef Py_ssize_t stops[FEW_MAX]
    cdef Py_ssize_t marks[FEW_MAX]
    cdef Py_ssize_t index, length, closer
    for index in range(count):
        read_run(items[index], &starts[index], &stops[index], &marks[index])
    index = 0
    while index < count:
        length = stops[index] - starts[index] - marks[index]
        closer = index + 1
        while closer < count and stops[closer] - starts[closer] != length:
            closer += 1
        if length and closer < count:
            out.append((starts[index] + marks[index], stops[closer]))
            index = closer + 1
        else:
            index += 1
    return 0
