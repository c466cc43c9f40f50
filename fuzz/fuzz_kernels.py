"""Fuzz targets: the compiled entry points no other target calls directly, each against its
pure twin, with valid and hostile arguments.

- clean: `clean_c`'s marker_state, has_markers, check_code_ranges, scan, join (tokens from
  scan, or cut and shifted at random), clean and clean_texts.
- commonmark: `commonmark_c`'s find_code_ranges, code_spans, line_spans, runs and
  scan_plain_lines (with any first/end/start/base), pair_backticks (on found runs or random
  ones), and StreamScanner fed a text in random pieces (its code ranges, cuts and state after
  each).
- front: `clean_c.StreamFront` under a `CleanStream` (its own lines too), each delta's release
  against the twin's; then its public state set at random between deltas, only run.
- jsonl: `jsonl_c`'s may_hold_start (any span), raw_ok, text_lines, map_lines, citation_lines
  and strip_lines and extract_lines without raw families (and, only run, with wrong ones).
- scan_stream: `scan_c`'s undecided_from, and StreamFront fed a text in random pieces (its
  updates and state after each), for random grammars and units; hostile runs also set its
  state (held pieces, held_length, looked_at) to anything, and are only run.

"Agree" is strict: equal values of the same types, or exceptions of the same type.  Under ASan
+ UBSan (fuzz/README.md) these are the runs that check the kernels' bounds on hostile
positions, code ranges and tokens.

    python fuzz/fuzz_kernels.py --examples 300                       # every target
    python fuzz/fuzz_kernels.py --target commonmark --examples 5000

Exit status: 0 when every target held, 1 on a failure (hypothesis prints the shrunk input),
2 when a compiled kernel cannot be imported (never a skip).
"""

from __future__ import annotations

import contextlib
import sys
from array import array
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # strategies.py
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "display"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "cli"))

from fuzz_targets import drive

import test_clean_differential as clean_tests
from citemark import extract_many, strip_many
from citemark._kernels.loader import load
from citemark.display import entity_name
from citemark.parser import CitationSpan
from citemark.stream import StreamUpdate
from strategies import ATOMS as SCAN_ATOMS
from strategies import jsonl_lines
from test_jsonl_escaped import FAMILIES, encoded

S, D, E = "\ue200", "\ue202", "\ue201"


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    """("ok", the value, arrays as (typecode, list)) or ("raised", the exception's type)."""
    try:
        value = call()
    except Exception as error:
        return "raised", type(error).__name__
    return "ok", plain_value(value)


def plain_value(value: Any) -> Any:
    if isinstance(value, array):
        return value.typecode, value.tolist()
    if isinstance(value, tuple):
        return tuple(plain_value(item) for item in value)
    return value


def agree(
    name: str, compiled: Callable[[], Any], pure: Callable[[], Any], strict: bool = True
) -> tuple[str, Any]:
    """Both calls' outcomes, equal when `strict`; else (arguments outside what the library
    ever passes, where the twins need not check what the kernel checks) only run, for ASan."""
    got = outcome(compiled)
    want = outcome(pure)
    if strict:
        assert got == want, (name, got, want)
        if got[0] == "ok":
            assert type(compiled()) is type(pure()), name
    return got


ATOMS = sorted({*clean_tests.ATOMS, *clean_tests.MD_ATOMS, *SCAN_ATOMS, "\r", "\r\n", "\udfff"})
texts = st.lists(st.sampled_from(ATOMS), max_size=40).map("".join)
HUGE = st.sampled_from([-(2**63), -(2**31), 2**31, 2**63 - 1, 2**63, 2**64])
# A position: small, negative or past the end now and then, or huge.
places = st.one_of(st.integers(-3, 60), HUGE)


def place(data: st.DataObject, text: str, hostile: bool) -> int:
    """A position in text, or (hostile) a small negative one, one past the end, or a huge one."""
    if hostile:
        return data.draw(st.integers(-3, len(text) + 3) | HUGE)
    return data.draw(st.integers(0, len(text)))


@st.composite
def code_ranges(draw: st.DrawFn, text: str, hostile: bool | None = None) -> list[tuple[int, int]]:
    """Sorted disjoint code ranges within text or (hostile; by default now and then) any pairs."""
    if hostile or (hostile is None and draw(st.integers(0, 4)) == 0):
        return draw(st.lists(st.tuples(places, places), max_size=4))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=6)))
    return [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts) - 1, 2)]


# --- clean -------------------------------------------------------------------------------


def clean_target() -> Callable[..., None]:
    compiled, pure = load("clean", "cython"), load("clean", "python")

    @given(data=st.data(), text=texts)
    def clean(data: st.DataObject, text: str) -> None:
        agree(
            "marker_state", partial(compiled.marker_state, text), partial(pure.marker_state, text)
        )
        agree("has_markers", lambda: compiled.has_markers(text), lambda: pure.has_markers(text))
        fence = data.draw(code_ranges(text))
        status, checked = agree(
            "check_code_ranges",
            lambda: compiled.check_code_ranges(text, fence),
            lambda: pure.check_code_ranges(text, fence),
        )
        if status != "ok":
            return
        _, tokens = agree(
            "scan", lambda: compiled.scan(text, checked), lambda: pure.scan(text, checked)
        )
        if tokens and data.draw(st.booleans()):
            # a token cut out of the list, or one of its fields moved anywhere
            tokens = list(tokens)
            at = data.draw(st.integers(0, len(tokens) - 1))
            if data.draw(st.booleans()):
                del tokens[at]
            else:
                fields = list(tokens[at])
                fields[data.draw(st.integers(0, len(fields) - 1))] = data.draw(places)
                tokens[at] = tuple(fields)
        shown = data.draw(
            st.none() | st.lists(st.sampled_from(["", "x", "Zürich", "\U0001f600", "\ud800"]))
        )
        if shown is not None and len(shown) < len(tokens):
            shown += [""] * (len(tokens) - len(shown))
        agree(
            "join",
            lambda: compiled.join(text, tokens, shown),
            lambda: pure.join(text, tokens, shown),
        )
        entity = data.draw(st.sampled_from([None, entity_name]))
        plain_names = data.draw(st.booleans())
        agree(
            "clean",
            lambda: compiled.clean(text, checked, entity, plain_names),
            lambda: pure.clean(text, checked, entity, plain_names),
        )
        many = [text, *data.draw(st.lists(texts, max_size=3))]
        ranges_of = data.draw(st.sampled_from([None, lambda t: [], lambda t: [(0, len(t))]]))
        agree(
            "clean_texts",
            lambda: compiled.clean_texts(many, ranges_of, entity, plain_names),
            lambda: pure.clean_texts(many, ranges_of, entity, plain_names),
        )

    return clean


# --- commonmark --------------------------------------------------------------------------


def commonmark_target() -> Callable[..., None]:
    compiled, pure = load("commonmark", "cython"), load("commonmark", "python")

    @given(data=st.data(), text=texts)
    def commonmark(data: st.DataObject, text: str) -> None:
        for name in ("find_code_ranges", "code_spans", "line_spans"):
            ours, theirs = getattr(compiled, name), getattr(pure, name)
            agree(name, partial(ours, text), partial(theirs, text))
        # In the contract: first <= end within text, base >= 0, runs as runs() gives them,
        # scan_plain_lines from a line's start with no paragraph open.  Hostile: anything, only run.
        hostile = data.draw(st.integers(0, 3)) == 0
        first = place(data, text, hostile)
        end = place(data, text, hostile) if hostile else data.draw(st.integers(first, len(text)))
        base = place(data, text, hostile)
        status, found = agree(
            "runs",
            partial(compiled.runs, text, first, end, base),
            partial(pure.runs, text, first, end, base),
            not hostile,
        )
        typecode = pure.runs("", 0, 0, 0).typecode
        if status != "ok" or (hostile and data.draw(st.booleans())):
            flat = data.draw(st.lists(places.filter(lambda n: -(2**63) <= n < 2**63), max_size=12))
            found = (typecode, flat)
        fence = data.draw(code_ranges(text, hostile))
        outs = []
        for kernel in (compiled, pure):
            runs_of, ranges_of = array(typecode, found[1]), list(fence)
            outs.append((outcome(partial(kernel.pair_backticks, runs_of, ranges_of)), ranges_of))
        assert hostile or outs[0] == outs[1], ("pair_backticks", outs)
        lines = [0, *(i + 1 for i, char in enumerate(text) if char == "\n")]
        start = place(data, text, hostile) if hostile else data.draw(st.sampled_from(lines))
        in_paragraph = hostile and data.draw(st.booleans())
        ticked = data.draw(st.none() | places) if hostile else None
        planned = []
        for kernel in (compiled, pure):
            pending = array(typecode, found[1] if hostile else [])
            ranges_of = list(fence)
            call = partial(kernel.scan_plain_lines, text, start, base, pending, ranges_of)
            got = outcome(partial(call, in_paragraph, ticked))
            planned.append((got, pending.tolist(), ranges_of))
        assert hostile or planned[0] == planned[1], ("scan_plain_lines", planned)
        # the stream: pieces of text, each scanned with or without cuts, the state after each
        points = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=5)))
        scanners = (compiled.StreamScanner(), pure.StreamScanner())
        offset = 0
        for a, b in zip([0, *points], [*points, len(text)], strict=True):
            piece, with_cuts, settle = text[a:b], data.draw(st.booleans()), data.draw(st.booleans())
            states = []
            for scanner in scanners:
                cuts: list[int] | None = [] if with_cuts else None
                got = outcome(partial(scanner.scan, piece, offset, cuts))
                settled = outcome(scanner.settle) if settle else None
                after = (scanner.in_paragraph, scanner.ticked_from, scanner.neutral)
                states.append((got, cuts, settled, after, scanner.take_code_ranges()))
            assert states[0] == states[1], ("StreamScanner.scan", piece, states)
            offset += len(piece)
        finished = [(outcome(s.finish), s.take_code_ranges(), s.neutral) for s in scanners]
        assert finished[0] == finished[1], ("StreamScanner.finish", finished)

    return commonmark


# --- jsonl -------------------------------------------------------------------------------

PATHS = [("text",), ("response", "text"), ("missing",)]


@st.composite
def logs(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(jsonl_lines(), max_size=5))
    if draw(st.booleans()):
        lines.append(draw(st.sampled_from(["", " ", "\t\r"])))
    data = "\n".join(lines).encode("utf-8", "surrogatepass")
    return data + draw(st.sampled_from([b"", b"\n", b"\r\n"]))


def jsonl_target() -> Callable[..., None]:
    compiled, pure = load("jsonl", "cython"), load("jsonl", "python")

    @given(data=st.data(), log=logs(), path=st.sampled_from(PATHS), skip_bad=st.booleans())
    def jsonl(data: st.DataObject, log: bytes, path: tuple[str, ...], skip_bad: bool) -> None:
        # Out of range is a ValueError on both sides; past a Py_ssize_t the kernel's
        # conversion raises OverflowError first, so such spans are only run.
        hostile = data.draw(st.integers(0, 7)) == 0
        start, end = (data.draw(HUGE if hostile else st.integers(-3, len(log) + 3)) for _ in "ab")
        agree(
            "may_hold_start",
            partial(compiled.may_hold_start, log, start, end),
            partial(pure.may_hold_start, log, start, end),
            not hostile,
        )
        families = data.draw(st.sampled_from(FAMILIES))
        raw = encoded(families)
        token = data.draw(
            st.sampled_from([log[:1], log, b'"' + log + b'"', b'"\\', b'""', b'"\xee\x88\x80"'])
        )
        agree("raw_ok", lambda: compiled.raw_ok(token, raw), lambda: pure.raw_ok(token, raw))
        agree(
            "text_lines",
            lambda: compiled.text_lines(log, path, skip_bad),
            lambda: pure.text_lines(log, path, skip_bad),
        )

        def strip(texts: list[str]) -> list[str]:
            return strip_many(texts, families=families)

        agree(
            "map_lines",
            lambda: compiled.map_lines(log, path, strip, skip_bad),
            lambda: pure.map_lines(log, path, strip, skip_bad),
        )
        agree(
            "strip_lines",
            lambda: compiled.strip_lines(log, path, strip, skip_bad),
            lambda: pure.strip_lines(log, path, strip, skip_bad),
        )

        def extract(texts: list[str]) -> list[Any]:
            return extract_many(texts, families=families)

        # Raw families None: each text goes to `many`.  Others than `many`'s break the
        # contract (the kernel scans raw what `many` would have found): only run.
        other = data.draw(st.sampled_from([None, None, raw, (b"other",), ()]))
        agree(
            "extract_lines",
            partial(compiled.extract_lines, log, path, extract, skip_bad, "f", 1, other),
            partial(pure.extract_lines, log, path, extract, skip_bad, "f", 1, other),
            other is None or other == raw,
        )
        file = data.draw(st.sampled_from(["f", "", "Zürich", "\ud800"]))
        rows = data.draw(st.lists(st.integers(-2, 2**40), max_size=3))
        found = data.draw(
            st.lists(
                st.lists(st.fixed_dictionaries({"id": st.sampled_from(["a", "\ud800", "ü"])})),
                min_size=len(rows),
                max_size=len(rows) + data.draw(st.integers(0, 1)),
            )
        )
        agree(
            "citation_lines",
            lambda: compiled.citation_lines(file, rows, found),
            lambda: pure.citation_lines(file, rows, found),
        )

    return jsonl


# --- the clean stream's front -------------------------------------------------------------


def front_target() -> Callable[..., None]:
    import test_clean_stream_front as stream_tests
    from citemark.display import CleanStream

    @given(
        text=st.one_of(stream_tests.own_texts, stream_tests.texts),
        cuts=st.lists(st.integers(0, 400), max_size=20),
        data=st.data(),
    )
    def front(text: str, cuts: list[int], data: st.DataObject) -> None:
        chunks = stream_tests.deltas_of(text, cuts)
        compiled = stream_tests.feeds(chunks, "cython")
        assert compiled == stream_tests.feeds(chunks, "python"), "the fronts differ"
        # Hostile: the compiled front's public state set at random between deltas (only run:
        # the stream's output is then anything, but memory stays in bounds).
        stream = CleanStream(implementation="cython")
        front = stream._f
        for chunk in chunks:
            if data.draw(st.booleans()):
                name = data.draw(
                    st.sampled_from(["state", "looked", "line_from", "skip", "raw", "tail"])
                )
                value: Any = data.draw(
                    st.text(max_size=4) if name == "tail" else st.integers(-3, 2**40)
                )
                with contextlib.suppress(OverflowError, TypeError, ValueError):
                    setattr(front, name, value)
            try:
                stream.feed(chunk)
            except (IndexError, OverflowError, TypeError, ValueError):
                return
        with contextlib.suppress(IndexError, OverflowError, TypeError, ValueError):
            stream.close()

    return front


# --- scan_stream ---------------------------------------------------------------------------

STREAM_GRAMMARS = st.fixed_dictionaries(
    {
        "families": st.sampled_from([("cite",), ("cite", "ci"), ("",), ("c" + S,)]),
        "any_family": st.booleans(),
        "max_marker_length": st.sampled_from([None, 1, 4, 16, 4096, 2**62, 2**63 - 1]),
    }
)
STREAM_MARKERS = st.sampled_from([(S, D, E), ("[", "|", "]"), ("\U0001f600", D, "\udfff")])


class Owner:
    """The stream a front calls back: what it leaves to the stream is recorded, not fed."""

    def __init__(self) -> None:
        self.slow: list[Any] = []

    def _slow(self, chunk: Any) -> Any:
        self.slow.append(chunk)
        return StreamUpdate("", [])


def scan_stream_target() -> Callable[..., None]:
    compiled, pure = load("scan", "cython"), load("scan", "python")

    @given(data=st.data(), text=texts, options=STREAM_GRAMMARS, markers=STREAM_MARKERS)
    def scan_stream(
        data: st.DataObject, text: str, options: dict[str, Any], markers: tuple[str, str, str]
    ) -> None:
        text = text.replace(S, markers[0]).replace(D, markers[1]).replace(E, markers[2])
        args = (options["families"], *markers, options["any_family"], options["max_marker_length"])
        grammars = (compiled.Grammar(*args), pure.Grammar(*args))
        agree(
            "undecided_from",
            partial(compiled.undecided_from, text, grammars[0]),
            partial(pure.undecided_from, text, grammars[1]),
        )
        units = data.draw(st.sampled_from([0, 1, 2]))
        owners = (Owner(), Owner())
        fronts = [
            kernel.StreamFront(owner, grammar, CitationSpan, StreamUpdate, units)
            for kernel, owner, grammar in zip((compiled, pure), owners, grammars, strict=True)
        ]
        points = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=12)))
        for a, b in zip([0, *points], [*points, len(text)], strict=True):
            hostile = data.draw(st.integers(0, 9)) == 0
            if hostile:
                held = data.draw(st.lists(st.sampled_from(ATOMS) | st.none(), max_size=3))
                lengths = (data.draw(places), data.draw(places))
                for front in fronts:
                    outcome(partial(setattr, front, "pieces", list(held)))
                    outcome(partial(setattr, front, "held_length", lengths[0]))
                    outcome(partial(setattr, front, "looked_at", lengths[1]))
            piece = text[a:b]
            states = []
            for front in fronts:
                got = outcome(partial(front.feed, piece))
                state = (front.pieces, front.held_length, front.looked_at, front.raw_units)
                states.append((got, state, front.clean_units, front.work))
            assert hostile or states[0] == states[1], ("StreamFront.feed", piece, states)
            if hostile:
                return
        assert owners[0].slow == owners[1].slow == []

    return scan_stream


TARGETS = {
    "clean": clean_target,
    "commonmark": commonmark_target,
    "jsonl": jsonl_target,
    "front": front_target,
    "scan_stream": scan_stream_target,
}


def main(argv: list[str] | None = None) -> int:
    kernels = ("clean", "commonmark", "jsonl", "scan")
    return drive(TARGETS, kernels, argv, __doc__.split("\n\n")[0])


if __name__ == "__main__":
    sys.exit(main())
