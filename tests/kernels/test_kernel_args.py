"""Every argument of every kernel entry point is checked: a wrong type is a TypeError that
names the argument (never undefined behaviour in C), the same on the compiled kernels and
their pure twins."""

from __future__ import annotations

import importlib
import re
from typing import Any

import pytest

from citemark.parser import CitationSpan

S, D, E = "\ue200", "\ue202", "\ue201"
SCANNERS = {"cython": "citemark._kernels.scan_c", "python": "citemark._kernels.scan_py"}
ARROW = {"cython": "citemark._kernels.arrow_c", "python": "citemark._kernels.arrow_py"}


@pytest.fixture
def scanner(implementation: str) -> Any:
    return importlib.import_module(SCANNERS[implementation])


@pytest.fixture
def arrow_kernel(implementation: str) -> Any:
    return importlib.import_module(ARROW[implementation])


def names(argument: str) -> Any:
    return pytest.raises(TypeError, match=re.escape(argument))


GRAMMAR_ARGS = {"families": ("cite",), "start": S, "delimiter": D, "stop": E}


@pytest.mark.parametrize(
    ("argument", "bad"),
    [
        ("families", None),
        ("families", ["cite"]),
        ("families", (None,)),
        ("families", ("cite", b"x")),
        ("start", None),
        ("delimiter", 7),
        ("stop", b"\xee"),
        ("max_marker_length", "10"),
        ("max_marker_length", 1.5),
        ("source_id", "[a-z]+"),
        ("locator", b"L1"),
    ],
)
def test_grammar_names_a_wrong_argument(scanner, argument, bad) -> None:
    with names(argument):
        scanner.Grammar(**{**GRAMMAR_ARGS, argument: bad})


@pytest.mark.parametrize("argument", ["start", "delimiter", "stop"])
def test_grammar_markers_are_one_character(scanner, argument) -> None:
    with pytest.raises(ValueError, match=argument):
        scanner.Grammar(**{**GRAMMAR_ARGS, argument: "ab"})


@pytest.mark.parametrize("entry", ["extract", "strip", "spans", "undecided_from"])
def test_text_entry_points_name_a_wrong_argument(scanner, entry) -> None:
    grammar = scanner.Grammar(**GRAMMAR_ARGS)
    function = getattr(scanner, entry)
    for bad in (None, b"text", 3):
        with names("'text'"):
            function(bad, grammar)
    for bad in (None, "grammar", object()):
        with names("'grammar'"):
            function("text", bad)


@pytest.mark.parametrize("name", ["records", "spans_records"])
def test_records_names_a_wrong_argument(scanner, name) -> None:
    function = getattr(scanner, name)
    grammar = scanner.Grammar(**GRAMMAR_ARGS)
    with names("'text'"):
        function(None, grammar, CitationSpan, 0)
    with names("'grammar'"):
        function("x", None, CitationSpan, 0)
    for bad in (None, list, CitationSpan(*range(6))):
        with names("cls"):
            function("x", grammar, bad, 0)
    for bad in (None, "0", 1.0):
        with names("units"):
            function("x", grammar, CitationSpan, bad)
    with pytest.raises(ValueError, match="units"):
        function("x", grammar, CitationSpan, 3)


class Owner:
    """What a StreamFront calls back: `_slow` gets what the front leaves to the stream."""

    def __init__(self) -> None:
        self.slow: list[object] = []

    def _slow(self, chunk: object) -> str:
        self.slow.append(chunk)
        return "slow"


@pytest.mark.parametrize(
    ("argument", "bad"),
    [
        ("owner", None),
        ("owner", object()),
        ("grammar", None),
        ("grammar", "grammar"),
        ("cls", None),
        ("cls", list),
        ("update", None),
        ("update", dict),
        ("units", None),
        ("units", "0"),
    ],
)
def test_stream_front_names_a_wrong_argument(scanner, argument, bad) -> None:
    from citemark.stream import StreamUpdate

    arguments = {
        "owner": Owner(),
        "grammar": scanner.Grammar(**GRAMMAR_ARGS, max_marker_length=64),
        "cls": CitationSpan,
        "update": StreamUpdate,
        "units": 0,
    }
    with names(argument):
        scanner.StreamFront(*{**arguments, argument: bad}.values())
    with pytest.raises(ValueError, match="units"):
        scanner.StreamFront(*{**arguments, "units": 5}.values())


def test_stream_front_leaves_the_rest_to_its_owner(scanner) -> None:
    """Not a str, or a front that is not open: `owner._slow(chunk)`, whatever the chunk (a
    str subclass is fed as its plain copy)."""
    from citemark.stream import StreamUpdate

    owner = Owner()
    grammar = scanner.Grammar(**GRAMMAR_ARGS, max_marker_length=64)
    front = scanner.StreamFront(owner, grammar, CitationSpan, StreamUpdate, 0)
    text = type("Text", (str,), {})("x")
    for chunk in (None, b"x", 3):
        assert front.feed(chunk) == "slow"
    assert front.feed(text) == StreamUpdate("x", [])
    front.raw_units = front.clean_units = 0  # (the counts below start from here)
    front.open = False
    assert front.feed("plain") == "slow"
    assert front.feed(text) == "slow"
    assert owner.slow == [None, b"x", 3, "plain", "x"]
    assert type(owner.slow[-1]) is str
    front.open = True
    front.pieces = None  # a stream never does this: the front must not read it then
    assert front.feed("x") == "slow"
    front.pieces = ["x" + S]
    front.held_length = 2
    assert front.feed("cite" + D + "a" + E + "!") == (
        "x!",
        [CitationSpan("cite", ("a",), None, 1, 9, 1)],
    )
    assert (front.raw_units, front.clean_units, front.pieces) == (10, 2, [])


def test_cut_declines_what_it_cannot_cut(scanner) -> None:
    # cut is the fast path of strip_citations: anything unusual goes to the general path.
    for text, citations in [(None, []), ("x", None), ("x", iter([])), (b"x", [])]:
        assert scanner.cut(text, citations) is None
    assert scanner.cut("x", [None]) is None
    assert scanner.cut("abc", [{"start": 1, "end": 2}]) == "ac"


def layout() -> list[Any]:
    import pyarrow as pa

    array = pa.array(["a" + S + "cite" + D + "x" + E, None, "b"])
    validity, offsets, data = array.buffers()
    return [validity, offsets, data, 0, 3, 4, (b"cite",)]


ARROW_ARGS = ["validity", "offsets", "data", "offset", "length", "width", "families"]


@pytest.mark.needs("pyarrow")
@pytest.mark.parametrize("entry", ["strip_utf8", "extract_utf8"])
@pytest.mark.parametrize(
    ("argument", "bad"),
    [
        ("validity", 3),
        ("validity", "bits"),
        ("offsets", None),
        ("offsets", 0),
        ("data", 1.5),
        ("data", "text"),
        ("offset", None),
        ("offset", 0.0),
        ("length", None),
        ("length", "3"),
        ("width", None),
        ("families", None),
        ("families", [b"cite"]),
        ("families", (None,)),
        ("families", ("cite",)),
    ],
)
def test_arrow_entry_points_name_a_wrong_argument(arrow_kernel, entry, argument, bad) -> None:
    args = layout()
    args[ARROW_ARGS.index(argument)] = bad
    with names(argument):
        getattr(arrow_kernel, entry)(*args)


@pytest.mark.needs("pyarrow")
@pytest.mark.parametrize("entry", ["strip_utf8", "extract_utf8"])
def test_arrow_entry_points_accept_what_they_document(arrow_kernel, entry) -> None:
    args = layout()
    args[0] = None  # no validity bitmap: no nulls
    args[2] = None  # no data buffer: every row empty
    args[1] = bytes(16)
    assert getattr(arrow_kernel, entry)(*args) is None or entry == "extract_utf8"
    args[1] = b""  # a zero-length array reads no offsets
    args[4] = 0
    getattr(arrow_kernel, entry)(*args)
