# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# cython: cdivision=True, freethreading_compatible=True, auto_pickle=False, autotestdict=False
"""The compiled kernel of `citemark.display`: every marker character found, classified and cut
in one pass over CPython's own string storage (PEP 393).

Same functions, names and branch order as the twin in `clean_py.py`.  The core (scan, cut,
spacing rule) is `clean_core.pxi`, shared with the JSONL kernel's pass over UTF-8 bytes; the
rules (characters, bounds, spacing sets) are read from `_core.shapes` at import, so they have
one home.

The path only this kernel has, with what it earns (callgrind, typical 4 KB answers in
4-character deltas, benches/bench_streams.py; docs/performance.md#streams):

| fast path                                                               | earns         |
|-------------------------------------------------------------------------|---------------|
| `StreamFront.feed`: a `CleanStream`'s common delta in C, not the twin's | 3.4x the twin |
"""

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.unicode cimport PyUnicode_FromKindAndData

cdef extern from "Python.h":
    int PyUnicode_KIND(object text)
    void* PyUnicode_DATA(object text)

# The encoding helpers and fused unit of the marker grammar (it also picks the vector path),
# then the clean core over them.
include "grammar_c.pxi"
include "clean_core.pxi"


def marker_state(str text not None):
    """`_core.shapes.NO_MARKERS`, `MARKERS_OUTSIDE_CODE` (none can be in Markdown code) or
    `MARKERS_MAYBE_IN_CODE` (see _markdown.code.markers_may_be_in_code)."""
    return marker_state_of(text)


cdef int marker_state_of(str text) noexcept:
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    if kind == 1:
        return NO_MARKERS
    if kind == 2:
        return marker_state_units(<const Py_UCS2*>data, len(text))
    return marker_state_units(<const Py_UCS4*>data, len(text))


def has_markers(str text not None):
    cdef int kind = PyUnicode_KIND(text)
    if kind == 1:
        return False  # every unit is < 0x100
    if kind == 2:
        return find_special(<const Py_UCS2*>PyUnicode_DATA(text), 0, len(text)) >= 0
    return find_special(<const Py_UCS4*>PyUnicode_DATA(text), 0, len(text)) >= 0


def check_code_ranges(str text not None, code_ranges):
    if type(code_ranges) is not list:
        raise TypeError(f"code_ranges must be a list, not {type(code_ranges).__name__}")
    cdef list checked = []
    cdef Py_ssize_t where = 0, start, end, n = len(text)
    for code_range in code_ranges:
        if type(code_range) is not tuple or len(code_range) != 2:
            raise TypeError("code_ranges must hold (start, end) tuples")
        if type(code_range[0]) is not int or type(code_range[1]) is not int:
            raise TypeError("code_ranges must hold (start, end) tuples of int")
        if not (where <= code_range[0] <= code_range[1] <= n):
            raise ValueError("code_ranges must be sorted, disjoint and inside the text")
        start = code_range[0]
        end = code_range[1]
        checked.append((start, end))
        where = end
    return checked


cdef int scan_into(str text, object code_ranges, Tokens* tokens) except -1:
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = len(text), where = 0, code_start, code_end, i
    cdef list checked = check_code_ranges(text, code_ranges)
    if kind == 1:
        return 0  # no marker character fits in one byte
    for i in range(len(checked) + 1):
        if i < len(checked):
            code_start, code_end = checked[i]
        else:
            code_start = code_end = n
        if kind == 2:
            scan_segment(<const Py_UCS2*>data, where, code_start, tokens, PY_SSIZE_T_MAX)
        else:
            scan_segment(<const Py_UCS4*>data, where, code_start, tokens, PY_SSIZE_T_MAX)
        where = code_end
    return 0


def scan(str text not None, code_ranges):
    cdef Tokens tokens
    cdef Py_ssize_t i
    cdef Token* t
    init_tokens(&tokens)
    try:
        scan_into(text, code_ranges, &tokens)
        result = []
        for i in range(tokens.count):
            t = &tokens.items[i]
            result.append((t.kind, t.start, t.end, t.family_start, t.family_end,
                           t.body_start, t.body_end))
        return result
    finally:
        free_tokens(&tokens)


cdef int join_units(Join* state, const unit_t* data, Py_ssize_t n, Tokens* tokens,
                    list replacements, Places* places) except -1:
    """Every token cut (join_one), each replaced by its item of replacements (None: all
    removed), then the rest of the text."""
    cdef Py_ssize_t index, count = tokens.count
    cdef str replacement = ""
    cdef bint run_goes_on
    for index in range(count):
        if replacements is not None:
            replacement = replacements[index]
        run_goes_on = index + 1 < count and (
            tokens.items[index + 1].start == tokens.items[index].end
            and (replacements is None or not replacements[index + 1])
        )
        join_one(state, data, n, &tokens.items[index], run_goes_on,
                 PyUnicode_KIND(replacement), PyUnicode_DATA(replacement), len(replacement),
                 places, index)
    emit_text(&state.out, sizeof(unit_t), data, state.pos, n)
    return 0


cdef object join_tokens(str text, Tokens* tokens, list replacements, list positions):
    """text with each token replaced; appends each replacement's place to positions."""
    cdef int kind = PyUnicode_KIND(text), out_kind = kind
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = len(text), size = n, index, count = tokens.count
    cdef Join state
    cdef Places places
    cdef Places* wanted = NULL
    cdef void* buffer
    cdef str replacement
    if replacements is not None:
        for replacement in replacements:
            size += len(replacement)
            if PyUnicode_KIND(replacement) > out_kind:
                out_kind = PyUnicode_KIND(replacement)
    if count == 0:
        return text
    buffer = PyMem_Malloc(size * out_kind + 1)
    places.at = places.groups = NULL
    places.count = 0
    if positions is not None:
        places.at = <Py_ssize_t*>PyMem_Malloc(count * sizeof(Py_ssize_t))
        places.groups = <Py_ssize_t*>PyMem_Malloc(count * sizeof(Py_ssize_t))
        wanted = &places
    if buffer == NULL or (positions is not None and (places.at == NULL or places.groups == NULL)):
        PyMem_Free(buffer)
        PyMem_Free(places.at)
        PyMem_Free(places.groups)
        raise MemoryError()
    start_join(&state, buffer, out_kind, False)
    try:
        if kind == 1:
            join_units(&state, <const Py_UCS1*>data, n, tokens, replacements, wanted)
        elif kind == 2:
            join_units(&state, <const Py_UCS2*>data, n, tokens, replacements, wanted)
        else:
            join_units(&state, <const Py_UCS4*>data, n, tokens, replacements, wanted)
        if positions is not None:
            fill_places(&places, count)
            for index in range(count):
                positions.append(places.at[index])
        return PyUnicode_FromKindAndData(state.out.kind, state.out.data, state.out.length)
    finally:
        PyMem_Free(buffer)
        PyMem_Free(places.at)
        PyMem_Free(places.groups)


def join(str text not None, tokens, replacements):
    if type(tokens) is not list:
        raise TypeError(f"tokens must be a list, not {type(tokens).__name__}")
    if replacements is not None and (
        type(replacements) is not list or len(replacements) != len(tokens)
    ):
        raise TypeError("replacements must be None or a list as long as tokens")
    cdef Tokens array
    cdef Py_ssize_t pos = 0, n = len(text), start, end
    cdef list positions = []
    init_tokens(&array)
    try:
        for index, token in enumerate(tokens):
            if type(token) is not tuple or len(token) != 7:
                raise TypeError("tokens must hold tuples of 7 int")
            if type(token[1]) is not int or type(token[2]) is not int:
                raise TypeError("tokens must hold tuples of 7 int")
            if not (pos <= token[1] <= token[2] <= n):
                raise ValueError("tokens must be sorted, disjoint and inside the text")
            start = token[1]
            end = token[2]
            if replacements is not None and type(replacements[index]) is not str:
                raise TypeError("replacements must hold str")
            push_token(&array, 0, start, end, 0, 0, 0, 0)
            pos = end
        return join_tokens(text, &array, replacements, positions), positions
    finally:
        free_tokens(&array)


cdef check_entity(entity, plain_names):
    if entity is not None and not callable(entity):
        raise TypeError(f"entity must be None or callable, not {type(entity).__name__}")
    if type(plain_names) is not bool:
        raise TypeError(f"plain_names must be bool, not {type(plain_names).__name__}")


def clean(str text not None, code_ranges, entity=None, plain_names=False):
    """scan and join in one call, entity markers shown as entity(body), or found in place
    when plain_names and the body has the common shape (see plain_name); None when there
    is an entity marker and no `entity` function, or a marker of TITLED_FAMILIES (the
    front renders those)."""
    check_entity(entity, plain_names)
    return clean_one(text, check_code_ranges(text, code_ranges), entity, plain_names)


def clean_texts(list texts not None, code_ranges_of, entity, plain_names):
    """For each text: the text itself when it holds no marker character, else
    clean(text, code_ranges, entity, plain_names), the code ranges being code_ranges_of(text) when a
    marker may be in Markdown code (see marker_state; code_ranges_of None: never any code ranges).
    None for an item that is not exactly a str, and where clean gives None: the front decides those.
    One
    call for a batch, since the front's own work per text (checks, two kernel calls)
    cost as much as the kernel's on a log of answers."""
    check_entity(entity, plain_names)
    if code_ranges_of is not None and not callable(code_ranges_of):
        raise TypeError("code_ranges_of must be None or callable, not "
                        f"{type(code_ranges_of).__name__}")
    cdef list results = []
    cdef int state
    cdef str text
    for item in texts:
        if type(item) is not str:
            results.append(None)
            continue
        text = <str>item
        state = marker_state_of(text)
        if state == NO_MARKERS:
            results.append(text)
        elif state == MARKERS_MAYBE_IN_CODE and code_ranges_of is not None:
            results.append(clean_one(text, check_code_ranges(text, code_ranges_of(text)), entity,
                                     plain_names))
        else:
            results.append(clean_one(text, None, entity, plain_names))
    return results


cdef object clean_one(str text, list checked, entity, bint plain_names):
    """clean() once its arguments are checked (checked None: no code ranges): the core's `cut`,
    into a buffer of the text's size (enough: a name shown is part of its marker's body)."""
    cdef int kind = PyUnicode_KIND(text), found
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = len(text), k, code_count = 0 if checked is None else len(checked)
    cdef Py_ssize_t* code_ranges = NULL
    cdef Tokens tokens
    cdef Join state
    cdef bint names_in_place = plain_names and entity is not None
    if kind == 1:
        return text  # no marker character fits in one byte
    init_tokens(&tokens)
    state.out.data = NULL
    try:
        if code_count:
            code_ranges = <Py_ssize_t*>PyMem_Malloc(2 * code_count * sizeof(Py_ssize_t))
            if code_ranges == NULL:
                raise MemoryError()
            for k in range(code_count):
                code_ranges[2 * k], code_ranges[2 * k + 1] = checked[k]
        start_join(&state, PyMem_Malloc(n * kind + 1), kind, False)
        if state.out.data == NULL:
            raise MemoryError()
        if kind == 2:
            found = cut(<const Py_UCS2*>data, n, code_ranges, code_count, names_in_place, &tokens,
                        &state)
        else:
            found = cut(<const Py_UCS4*>data, n, code_ranges, code_count, names_in_place, &tokens,
                        &state)
        if found == CUT_NONE:
            return text
        if found == CUT_TITLED or (found == CUT_ENTITY and entity is None):
            return None
        if found == CUT_ENTITY:
            # A name from Python may widen the text: the whole-array path sizes the output
            # for it.
            return clean_with_entities(text, checked or [], entity, plain_names)
        return PyUnicode_FromKindAndData(kind, state.out.data, state.out.length)
    finally:
        free_tokens(&tokens)
        PyMem_Free(state.out.data)
        PyMem_Free(code_ranges)


cdef bint plain_name_of(int kind, const void* data, Token* token) noexcept nogil:
    if kind == 2:
        return plain_name(<const Py_UCS2*>data, token)
    if kind == 4:
        return plain_name(<const Py_UCS4*>data, token)
    return False  # no marker in one-byte text


cdef bint titled_of(int kind, const void* data, const Token* token) noexcept nogil:
    if kind == 2:
        return titled(<const Py_UCS2*>data, token)
    if kind == 4:
        return titled(<const Py_UCS4*>data, token)
    return False  # no marker in one-byte text


cdef object clean_with_entities(str text, list code_ranges, entity, bint plain_names):
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef Tokens tokens
    cdef Token* token
    cdef Py_ssize_t i
    cdef list replacements = None
    init_tokens(&tokens)
    try:
        scan_into(text, code_ranges, &tokens)
        for i in range(tokens.count):
            token = &tokens.items[i]
            if titled_of(kind, data, token):
                return None
            if token.kind != ENTITY:
                continue
            if replacements is None:
                replacements = [""] * tokens.count
            if plain_names and plain_name_of(kind, data, token):
                shown = text[token.shown_start:token.shown_end]
            else:
                shown = entity(text[token.body_start:token.body_end])
                if type(shown) is not str:
                    raise TypeError(f"entity must return str, not {type(shown).__name__}")
            replacements[i] = shown
        return join_tokens(text, &tokens, replacements, None)
    finally:
        free_tokens(&tokens)


# --- the stream's common delta (clean_py.StreamFront) --------------------------------------

cdef CharSet NOT_PLAIN_SET
fill(
    &NOT_PLAIN_SET,
    clean_rules.BLANKS + clean_rules.OPENERS + clean_rules.CLOSERS + clean_rules.SEPARATORS
    + clean_rules.LINE_BREAKS,
)


cdef inline bint front_stop(Py_UCS4 unit) noexcept nogil:
    # A line break, a backtick, a `[` or a private-use character: the stream's own path.
    cdef unsigned int code = unit
    return (
        code == 10 or code == 13 or code == 96 or code == 91
        or code - <unsigned int>FIRST_PRIVATE <= <unsigned int>PRIVATE_SPAN
    )


cdef inline bint decides(Py_UCS4 unit) noexcept nogil:
    # What may decide a START that waits for its STOP: a START, a STOP, a line break.
    cdef unsigned int code = unit
    return unit == START or unit == STOP or code == 10 or code == 13


cdef class StreamFront:
    """The common delta of a `CleanStream` in one C call (see clean_py.StreamFront)."""

    cdef public object owner
    cdef public list pending, parts
    cdef public bint on, waiting
    cdef public Py_ssize_t parts_length
    cdef public str tail
    cdef public str context
    cdef public Py_ssize_t work, skip, raw

    def __init__(self, owner, list pending not None):
        if not callable(getattr(owner, "_slow", None)):
            raise TypeError(f"owner must have a _slow method, not {type(owner).__name__}")
        self.owner = owner
        self.pending = pending
        self.on = self.waiting = False
        self.parts = []
        self.parts_length = 0
        self.tail = ""
        self.context = ""
        self.work = self.skip = self.raw = 0

    def feed(self, chunk):
        cdef Py_ssize_t n, index, after, kept
        cdef int kind
        cdef const void* data
        cdef Py_UCS4 unit
        cdef str out
        cdef bint started = False
        if type(chunk) is not str or self.tail is None or self.parts is None:
            return self.slow(chunk)
        n = len(<str>chunk)
        kind = PyUnicode_KIND(chunk)
        data = PyUnicode_DATA(chunk)
        # Every read below is at an index below n, the chunk's length: inside the string.
        if self.waiting:
            for index in range(n):
                if decides(read_unit(kind, data, index)):
                    return self.slow(chunk)
            self.pending.append(chunk)
            self.parts.append(chunk)
            self.parts_length += n
            self.work += n
            return ""
        if not self.on:
            return self.slow(chunk)
        kept = 0
        for index in range(n):
            unit = read_unit(kind, data, index)
            if front_stop(unit):
                if unit != START:
                    return self.slow(chunk)
                for after in range(index + 1, n):
                    if decides(read_unit(kind, data, after)):
                        return self.slow(chunk)
                started = True
                break
            if not in_set(&NOT_PLAIN_SET, unit):
                kept = index + 1
        self.pending.append(chunk)
        self.work += n
        if started:
            self.on = False
            self.waiting = True
        if not kept:
            self.tail = self.tail + chunk
            return ""
        out = chunk if kept == n else chunk[:kept]
        if self.tail:
            out = self.tail + out
        self.tail = chunk[kept:]
        self.context = chunk[kept - 1]
        self.skip += len(out)
        self.raw += len(out)
        return out

    cdef object slow(self, chunk):
        return self.owner._slow(chunk)
