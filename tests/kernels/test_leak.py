"""No kernel entry point leaks: each is called many times and the memory (or, on a debug
build, the total reference count) must not grow with the calls (markupsafe's test_leak
pattern).  Runs on both implementations; the error paths are called too, since a leak hides
best where a function gives up half way.

tracemalloc sees the kernels' own buffers as well (PyMem_RawMalloc is traced), so a lost
match array or result buffer shows, not only a lost Python object.
"""

from __future__ import annotations

import gc
import importlib
import re
import sys
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

from citemark._kernels.loader import compiled
from citemark.parser import CitationSpan

pytestmark = pytest.mark.slow  # thousands of calls per entry point

S, D, E = "\ue200", "\ue202", "\ue201"
SCANNERS = {"cython": "citemark._kernels.scan_c", "python": "citemark._kernels.scan_py"}
ARROW = {"cython": "citemark._kernels.arrow_c", "python": "citemark._kernels.arrow_py"}
CALLS = 100
# Bytes a run of CALLS calls may leave behind (interpreter caches, free lists): a leak of one
# small object a call is CALLS * 32 bytes or more, so the slack stays under that, with room
# for the few bytes a call by which the interpreter's own state may grow when the whole slow
# suite shares one process (the CHANGELOG has the runs).
SLACK = CALLS * 24

MARKER = S + "cite" + D + "turn0search1" + D + " turn1news2 " + D + "L1-L2" + E
# More matches than fit inline (16), in each storage width, and an unclosed START.
TEXTS = [
    ("prose " + MARKER) * 20 + S + "cite" + D,
    ("é " + MARKER + S + "cite" + D + "not valid!" + E) * 9,
    ("中 " + MARKER) * 17,
    ("\U0001f600 " + MARKER) * 17,
    "no marker at all",
]


def growth(call: Callable[[], Any]) -> int:
    """What CALLS more calls leave behind, once caches are warm."""
    for _ in range(CALLS):
        call()
    gc.collect()
    if hasattr(sys, "gettotalrefcount"):  # a debug build counts references exactly
        before = sys.gettotalrefcount()
        for _ in range(CALLS):
            call()
        gc.collect()
        return sys.gettotalrefcount() - before
    tracemalloc.start()
    try:
        for _ in range(CALLS):
            call()
        gc.collect()
        # The least of three rounds: a leak grows in every round, while the pure twin's
        # bounded caches (re's, the free lists) may settle in one of them.
        grew = []
        for _ in range(3):
            before = ours()
            for _ in range(CALLS):
                call()
            gc.collect()
            grew.append(ours() - before)
        return min(grew)
    finally:
        tracemalloc.stop()


# What `ours` counts: memory allocated from citemark's code or from these tests (the Python
# frame that called an allocating kernel), not what another thread of the process allocated
# meanwhile (a finished test's cluster or server may leave one behind in the same process).
_OURS = [tracemalloc.Filter(True, "*citemark*"), tracemalloc.Filter(True, "*/tests/*")]


def ours() -> int:
    snapshot = tracemalloc.take_snapshot().filter_traces(_OURS)
    return sum(stat.size for stat in snapshot.statistics("filename"))


def raising(function: Callable[..., Any], *args: Any) -> Callable[[], None]:
    def call() -> None:
        try:
            function(*args)
        except (TypeError, ValueError):
            pass
        else:
            raise AssertionError("expected an error")

    return call


def assert_no_leak(call: Callable[[], Any]) -> None:
    grew = growth(call)
    assert grew <= SLACK, f"{grew} left behind by {CALLS} calls"


@pytest.fixture
def scanner(implementation: str) -> Any:
    return importlib.import_module(SCANNERS[implementation])


def grammars(scanner: Any) -> list[Any]:
    return [
        scanner.Grammar(("cite",), S, D, E),
        scanner.Grammar(("cite", "navlist"), S, D, E, True, 50),
        scanner.Grammar(("cite",), S, D, E, False, None, re.compile(r"turn\w+"), re.compile("L.+")),
    ]


def test_grammar_does_not_leak(scanner) -> None:
    assert_no_leak(lambda: scanner.Grammar(("cite", "x"), S, D, E, True, 10))
    assert_no_leak(raising(scanner.Grammar, ("cite", None), S, D, E))
    assert_no_leak(raising(scanner.Grammar, ("cite",), S, D, "ab"))


@pytest.mark.parametrize("entry", ["extract", "strip", "spans"])
def test_scans_do_not_leak(scanner, entry) -> None:
    function = getattr(scanner, entry)
    for grammar in grammars(scanner):

        def call(grammar: Any = grammar) -> None:
            for text in TEXTS:
                function(text, grammar)

        assert_no_leak(call)
    assert_no_leak(raising(function, None, grammars(scanner)[0]))


def test_records_do_not_leak(scanner) -> None:
    every = grammars(scanner)

    def call() -> None:
        for units, grammar in enumerate(every):  # each grammar with one of the three units
            for text in TEXTS:
                scanner.records(text, grammar, CitationSpan, units)
                scanner.spans_records(text, grammar, CitationSpan, units)

    assert_no_leak(call)
    assert_no_leak(raising(scanner.records, "x", every[0], CitationSpan, 7))
    assert_no_leak(raising(scanner.spans_records, "x", every[0], CitationSpan, 7))


def test_cut_does_not_leak(scanner) -> None:
    grammar = grammars(scanner)[0]
    cases = [(text, scanner.extract(text, grammar)) for text in TEXTS]
    cases.append((TEXTS[0], [{"start": 1, "end": 2**70}]))  # declined half way
    cases.append((TEXTS[0], [{"start": 1, "end": 3}, None]))

    def call() -> None:
        for text, citations in cases:
            scanner.cut(text, citations)

    assert_no_leak(call)


@pytest.fixture
def arrow_kernel(implementation: str) -> Any:
    pytest.importorskip("pyarrow", reason="pyarrow has no wheel for this interpreter")
    return importlib.import_module(ARROW[implementation])


@pytest.mark.parametrize("entry", ["strip_utf8", "extract_utf8"])
def test_arrow_entry_points_do_not_leak(arrow_kernel, entry) -> None:
    pa = pytest.importorskip("pyarrow", reason="pyarrow has no wheel for this interpreter")
    function = getattr(arrow_kernel, entry)
    array = pa.array([*TEXTS, None, ""] * 3)
    validity, offsets, data = array.buffers()
    args = (validity, offsets, data, 0, len(array), 4, (b"cite", b"navlist"))
    assert_no_leak(lambda: function(*args))
    bad = pa.Array.from_buffers(
        pa.string(),
        2,
        [None, pa.array([0, 2, 4], pa.int32()).buffers()[1], pa.py_buffer(b"ok\xff!")],
    )
    assert_no_leak(raising(function, None, bad.buffers()[1], bad.buffers()[2], 0, 2, 4, (b"c",)))
    assert_no_leak(raising(function, None, offsets, data, 0, len(array), 4, (b"cite", None)))
    assert_no_leak(raising(function, None, offsets, data, 0, len(array) + 1, 4, (b"cite",)))


JSONL = {"cython": "citemark._kernels.jsonl_c", "python": "citemark._kernels.jsonl_py"}
CLEAN = {"cython": "citemark._kernels.clean_c", "python": "citemark._kernels.clean_py"}
PATH = ("response", "text")


def jsonl_block() -> bytes:
    """Lines of every kind the JSONL kernel meets: raw and escaped tokens, a null, a blank
    line, a line without the field, a bad line and one nested too deep."""
    import json

    lines = [json.dumps({"response": {"text": text}}, ensure_ascii=ascii) for text in TEXTS
             for ascii in (False, True)]  # fmt: skip
    lines += ['{"response": {"text": null}}', "", '{"other": 1}', '{"response": ', "[" * 200]
    return ("\n".join(lines) + "\n").encode("utf-8")


@pytest.fixture
def jsonl_kernel(implementation: str) -> Any:
    return importlib.import_module(JSONL[implementation])


def test_jsonl_entry_points_do_not_leak(jsonl_kernel) -> None:
    from citemark import extract_many, strip_many
    from citemark.display import clean_many

    data = jsonl_block()
    families = (b"cite",)
    kernel = jsonl_kernel

    calls = [
        lambda: kernel.text_lines(data, PATH, True),
        lambda: kernel.strip_lines(data, PATH, strip_many, True, families),
        lambda: kernel.strip_lines(data, PATH, strip_many, True),
        lambda: kernel.map_lines(data, PATH, lambda texts: [t.upper() for t in texts], True),
        lambda: kernel.extract_lines(data, PATH, extract_many, True, "log.jsonl", 0, families),
        lambda: kernel.clean_lines(data, PATH, clean_many, True),
        lambda: kernel.line_cuts(data, len(data), 3),
        lambda: [kernel.locate(line, PATH) for line in data.split(b"\n")],
    ]
    for call in calls:
        assert_no_leak(call)
    # the errors: a failing callback, wrong types, out-of-range sizes
    assert_no_leak(raising(kernel.strip_lines, data, PATH, lambda texts: None, True))
    assert_no_leak(raising(kernel.strip_lines, data, PATH, strip_many, True, (b"cite", None)))
    assert_no_leak(raising(kernel.map_lines, data, PATH, lambda texts: [1] * len(texts), True))
    assert_no_leak(raising(kernel.extract_lines, data, PATH, extract_many, True, None, 0))
    # a titled family is left to `many`, whose failure must free the pass's buffers
    titled = data + b'{"response": {"text": "a \\ue200url\\ue202x\\ue202T\\ue201 b"}}\n'
    assert_no_leak(raising(kernel.clean_lines, titled, PATH, lambda texts: None, True))
    assert_no_leak(raising(kernel.clean_lines, data, None, clean_many, True))
    assert_no_leak(raising(kernel.line_cuts, data, len(data) + 1, 3))
    assert_no_leak(raising(kernel.locate, None, PATH))


@pytest.fixture
def clean_kernel(implementation: str) -> Any:
    return importlib.import_module(CLEAN[implementation])


def test_clean_entry_points_do_not_leak(clean_kernel) -> None:
    from citemark.display import clean_many

    texts = [
        *TEXTS,
        "a " + S + "entity" + D + '["company","ITC Limited","x"]' + E + " b",
        "a " + S + "url" + D + "https://e.com" + D + "Title" + E + " `code " + MARKER + "`",
        "```\n" + MARKER + "\n```\n" + MARKER,
    ]
    kernel = clean_kernel

    def call() -> None:
        kernel.clean_texts(texts, None, None, True)
        kernel.clean_texts(texts, lambda text: [], str.upper, False)
        for text in texts:
            kernel.clean(text, [], None, True)
            tokens = kernel.scan(text, [])
            kernel.join(text, tokens, None)
            kernel.marker_state(text)
            kernel.has_markers(text)
        clean_many(texts)
        clean_many(texts, lenient=True)

    assert_no_leak(call)
    assert_no_leak(raising(kernel.clean_texts, tuple(texts), None, None, True))
    assert_no_leak(raising(kernel.clean, texts[0], [(5, 2)], None, True))
    assert_no_leak(raising(kernel.scan, None, []))


def test_validate_and_code_scans_do_not_leak() -> None:
    # validate's rules are Python; the compiled code scan under them (find_code_ranges, code_spans,
    # line_spans and the block scanner's runs, plain and pair) is what could lose memory.
    from citemark._markdown import code as _commonmark

    if not compiled(_commonmark._kernel):
        # The pure install: Python code cannot lose a reference, and the twin's free lists
        # (tuples, match objects) fill unevenly for hundreds of calls, which tracemalloc
        # counts as growth.  The compiled suite runs this test on the kernel.
        pytest.skip("a leak test of the compiled _commonmark kernel")
    from citemark.sources import Registry, Source
    from citemark.validate import validate

    registry = Registry([Source("turn0search1", "one\ntwo\nthree", url="https://e.example/1")])
    texts = [
        *TEXTS,
        "A claim" + MARKER + ". Then " + S + "cite" + D + "turn9search9" + E + " and " + E,
        "```\n" + MARKER + "\n```\n`" + MARKER + "` ``" + S + "` " + D * 3 + "\n    " + MARKER,
        "- item " + MARKER + MARKER + ".\n> quote " + S + S + "cite" + D + "turn0search1" + E,
        "`" * 30 + " " + MARKER + " ```\n" + "` " * 20,
    ]

    def call() -> None:
        for text in texts:
            validate(text, registry, style="tool-lines")
            validate(text, None)
            _commonmark.find_code_ranges(text)
            _commonmark.code_spans(text)
            _commonmark.line_spans(text)
            _commonmark.block_cuts(text)

    assert_no_leak(call)
    kernel = _commonmark._kernel
    assert_no_leak(raising(kernel.find_code_ranges, None))
    assert_no_leak(raising(kernel.scan_plain_lines, "a", 0, 0, None, [], False, None))
