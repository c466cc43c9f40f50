"""Fuzz targets beyond the scanner: the Arrow kernel, the JSONL path and `StreamParser`.

Each target is one hypothesis test over the strategies the unit tests use
(tests/strategies.py).  Hypothesis drives it by default; `--atheris` hands the very same
test to libFuzzer through hypothesis's `fuzz_one_input`, so both engines check one property.

    python fuzz/fuzz_targets.py --examples 300                      # every target, short (CI)
    python fuzz/fuzz_targets.py --target stream --examples 20000    # one target, longer
    python fuzz/fuzz_targets.py --target arrow --atheris -max_total_time=600 -rss_limit_mb=8192

- arrow: string arrays built by pyarrow, their slices, and raw buffers assembled with
  `pa.Array.from_buffers` (offsets cut anywhere, so rows of invalid UTF-8 too).  On valid
  rows the compiled kernel, the pure one and the scanner row by row must agree; on invalid
  ones both must return or raise without touching memory they do not own (ASan's job).
- jsonl: the compiled and pure `locate` (the span walker) agree on every line (and so do
  `extract_lines` and `line_cuts` on two of them), accept only
  what json.loads accepts, and the span they give parses to the value json.loads finds there.
- stream: under every Parser option, `StreamParser` fed the text in random chunks gives
  exactly `parser.strip(whole)` and `list(parser.finditer(whole))`.

Exit status: 0 when every target held, 1 on a failure (hypothesis prints the shrunk
input), 2 when the compiled kernels cannot be imported (never a skip).  See fuzz/README.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import itertools

from citemark import Parser, extract_many
from citemark._cli.jsonl import BadRow, value_at
from citemark._core.dropin import DropIn
from citemark._kernels.loader import load
from citemark.stream import StreamParser
from strategies import cases, cuts, guide_texts, jsonl_lines, rows

START = "\ue200"


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "ok", call()
    except Exception as error:
        return "raised", type(error).__name__


# --- arrow -------------------------------------------------------------------------------


@st.composite
def arrow_cases(draw: st.DrawFn) -> tuple[list[str | None], str, Any]:
    """(rows, how the array is built, a detail): "array", "slice" (offset, length) or
    "raw" (cut points into the concatenated UTF-8 bytes, validity bits)."""
    values = draw(rows())
    how = draw(st.sampled_from(["array", "slice", "raw", "raw"]))
    if how == "slice":
        offset = draw(st.integers(0, len(values)))
        return values, how, (offset, draw(st.integers(0, len(values) - offset)))
    if how == "raw":
        data = b"".join((value or "").encode("utf-8", "surrogatepass") for value in values)
        points = draw(st.lists(st.integers(0, len(data)), max_size=8).map(sorted))
        valid = draw(st.lists(st.booleans(), min_size=len(points) + 1, max_size=len(points) + 1))
        return values, how, (data, [0, *points, len(data)], valid)
    return values, how, None


def build_array(values: list[str | None], how: str, detail: Any) -> tuple[Any, list[Any] | None]:
    """The array and its rows as Python values (None when some row is not UTF-8)."""
    import pyarrow as pa

    if how == "raw":
        data, offsets, valid = detail
        bits = sum(1 << i for i, ok in enumerate(valid[: len(offsets) - 1]) if ok)
        validity = pa.py_buffer(bits.to_bytes(max(1, (len(offsets) + 6) // 8), "little"))
        array = pa.Array.from_buffers(
            pa.string(),
            len(offsets) - 1,
            [validity, pa.array(offsets, pa.int32()).buffers()[1], pa.py_buffer(data)],
        )
        try:
            decoded = [
                data[a:b].decode("utf-8") if valid[i] else None
                for i, (a, b) in enumerate(itertools.pairwise(offsets))
            ]
        except UnicodeDecodeError:
            decoded = None
        return array, decoded
    clean = [v if v is None else v.encode("utf-8", "replace").decode("utf-8") for v in values]
    array = pa.array(clean, pa.string())
    if how == "slice":
        offset, length = detail
        return array.slice(offset, length), clean[offset : offset + length]
    return array, clean


def arrow_target() -> Callable[..., None]:
    import citemark.arrow

    compiled = citemark.arrow.Arrow(load("arrow", "cython"))
    pure = citemark.arrow.Arrow(load("arrow", "python"))
    reference = DropIn(load("scan", "python"))

    @given(case=arrow_cases())
    def arrow(case: tuple[list[str | None], str, Any]) -> None:
        array, decoded = build_array(*case)
        got = {
            name: (outcome(partial(kernel.strip, array)), outcome(partial(kernel.extract, array)))
            for name, kernel in (("compiled", compiled), ("pure", pure))
        }
        if decoded is None:
            return  # invalid UTF-8: no contract on the result, only on memory (ASan)
        for name, ((strip_status, stripped), (extract_status, found)) in got.items():
            assert strip_status == extract_status == "ok", (name, stripped, found)
            assert stripped.to_pylist() == [
                None if v is None else reference.strip_many([v])[0] for v in decoded
            ], name
            assert found.to_pylist() == [
                None if v is None else reference.extract_citations(v) for v in decoded
            ], name

    return arrow


# --- jsonl -------------------------------------------------------------------------------

PATHS = [("text",), ("response", "text"), ("response",), ("missing",)]


@st.composite
def jsonl_cases(draw: st.DrawFn) -> tuple[str, tuple[str, ...]]:
    line = draw(jsonl_lines())
    if draw(st.booleans()) and line.startswith("{"):
        line = '{"response": ' + line + "}"  # nested: the path walks an object first
    if draw(st.booleans()):
        line = draw(st.sampled_from(["", " ", "\t"])) + line + draw(st.sampled_from(["", " "]))
    return line, draw(st.sampled_from(PATHS))


def jsonl_target() -> Callable[..., None]:
    compiled, pure = load("jsonl", "cython"), load("jsonl", "python")
    found = 0  # the code `locate` gives for a string at the path (see _jsonl_py)

    @given(case=jsonl_cases())
    def jsonl(case: tuple[str, tuple[str, ...]]) -> None:
        text, path = case
        line = text.encode("utf-8", "surrogatepass")
        located = compiled.locate(line, path)
        assert located == pure.locate(line, path), (line, path)
        parsed = outcome(lambda: value_at(line, path))
        if parsed[0] == "raised":
            assert parsed[1] == BadRow.__name__, parsed
            assert located[0] != found
            return
        try:
            value: Any = json.loads(line)
        except ValueError:
            raise AssertionError(f"a line json.loads refuses was read: {line!r}") from None
        for key in path:
            value = value[key]
        assert parsed[1] == value
        if located[0] == found:
            assert json.loads(line[located[1] : located[2]]) == value
        # extract's JSON lines: the raw scan of the compiled kernel gives what the twin's
        # decoded texts give; and both cut the same tasks
        data = line + b"\n" + line
        many = lambda texts: extract_many(texts)  # noqa: E731
        extracted = [
            kernel.extract_lines(data, path, many, True, "f", 3, (b"cite",))
            for kernel in (compiled, pure)
        ]
        assert extracted[0] == extracted[1], (line, path)
        assert compiled.line_cuts(data, len(data), 1) == pure.line_cuts(data, len(data), 1)

    return jsonl


# --- stream ------------------------------------------------------------------------------


@st.composite
def stream_cases(draw: st.DrawFn) -> tuple[dict[str, Any], str, list[int]]:
    options, text = draw(cases(allow_code=True))
    options["offsets"] = draw(st.sampled_from(["codepoints", "utf16", "utf8"]))
    options["implementation"] = draw(st.sampled_from(["cython", "python"]))
    if draw(st.integers(0, 3)) == 0:
        text = draw(guide_texts()) if options["start"] == START else text
    return options, text, draw(cuts(text))


def stream_target() -> Callable[..., None]:
    @given(case=stream_cases())
    def stream(case: tuple[dict[str, Any], str, list[int]]) -> None:
        options, text, points = case
        streamer = StreamParser(Parser(**options))
        parser = streamer.parser  # with the stream's length bound
        out, found = [], []
        for a, b in zip([0, *points], [*points, len(text)], strict=True):
            update = streamer.feed(text[a:b])
            out.append(update.text)
            found.extend(update.citations)
            if not parser.skip_code:  # skip_code also holds the Markdown block being written
                # Held text is looked at again once it has doubled: under twice the bound.
                assert len(streamer.held) < 2 * (parser.max_marker_length or 0)
        update = streamer.close()
        out.append(update.text)
        found.extend(update.citations)
        assert "".join(out) == parser.strip(text)
        assert found == list(parser.finditer(text))

    return stream


TARGETS = {"arrow": arrow_target, "jsonl": jsonl_target, "stream": stream_target}


def drive(
    targets: dict[str, Callable[[], Callable[..., None]]],
    kernels: tuple[str, ...],
    argv: list[str] | None,
    description: str,
) -> int:
    """The command line of a file of fuzz targets (this one, fuzz_jsonl_clean.py): each
    `--target` (every one by default) for `--examples` hypothesis examples, or one target
    under libFuzzer with `--atheris`; exit 2 when one of the compiled `kernels` (pair names
    of citemark._kernels.loader) cannot be imported."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--target", choices=sorted(targets), action="append")
    parser.add_argument("--examples", type=int, default=300)
    parser.add_argument("--atheris", action="store_true", help="drive one target with libFuzzer")
    args, libfuzzer_args = parser.parse_known_args(argv)
    names = args.target or sorted(targets)
    try:
        for kernel in kernels:
            load(kernel, "cython")
    except ImportError as error:
        print(f"FAIL: {error}", file=sys.stderr)
        return 2
    if args.atheris:
        import atheris

        if len(names) != 1:
            parser.error("--atheris drives one --target")
        test = targets[names[0]]()
        fuzz_one_input = test.hypothesis.fuzz_one_input  # type: ignore[attr-defined]
        atheris.Setup([sys.argv[0], *libfuzzer_args], fuzz_one_input)
        atheris.Fuzz()
        return 0
    status = 0
    for name in names:
        began = time.monotonic()
        test = settings(
            max_examples=args.examples,
            deadline=None,
            database=None,
            phases=[Phase.generate, Phase.shrink],
            suppress_health_check=list(HealthCheck),
        )(targets[name]())
        try:
            test()
            verdict = "OK"
        except Exception as error:
            # hypothesis attaches the shrunk input to the error as notes
            notes = "\n".join(getattr(error, "__notes__", []))
            print(f"{name}: FAIL {type(error).__name__}: {error}\n{notes}", flush=True)
            verdict, status = "FAIL", 1
        took = time.monotonic() - began
        print(f"{name}: {verdict}, {args.examples} examples in {took:.1f}s", flush=True)
    return status


def main(argv: list[str] | None = None) -> int:
    return drive(TARGETS, ("scan", "arrow", "jsonl"), argv, __doc__.split("\n\n")[0])


if __name__ == "__main__":
    sys.exit(main())
