"""The JSONL kernels (`_jsonl_c` and its twin `_jsonl_py`): the same results on every input,
held to json.loads: JSONTestSuite's files, generated documents, and the splice contract of
`strip_lines` (the text at the path replaced, every other byte as it was)."""

from __future__ import annotations

import importlib
import json
import random
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from citemark import extract_citations, extract_many, strip_citations, strip_many
from citemark._cli import jsonl as _jsonl

KERNELS = {"cython": "citemark._kernels.jsonl_c", "python": "citemark._kernels.jsonl_py"}
SUITE = Path(__file__).parents[1] / "data" / "JSONTestSuite" / "test_parsing"
S, D, E = "\ue200", "\ue202", "\ue201"
PATH = ("response", "text")
CITE = (b"cite",)


@pytest.fixture(scope="module")
def kernel(implementation: str) -> ModuleType:
    """One JSONL kernel; a missing compiled one fails (ImportError), never skips."""
    return importlib.import_module(KERNELS[implementation])


@pytest.fixture(scope="module")
def both() -> tuple[ModuleType, ModuleType]:
    return tuple(importlib.import_module(KERNELS[name]) for name in sorted(KERNELS))  # type: ignore[return-value]


def json_accepts(data: bytes) -> bool:
    """json.loads's decision on a line as the command reads it: UTF-8, then JSON."""
    try:
        json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return False
    return True


def reference(line: bytes, path: tuple[str, ...]) -> tuple[int, Any]:
    """What `locate` must say, from json.loads: (code, the value or the missing depth)."""
    if not json_accepts(line):
        return _jsonl.INVALID, None
    value = json.loads(line.decode("utf-8"))
    for depth, key in enumerate(path):
        if not isinstance(value, dict) or key not in value:
            return _jsonl.MISSING, depth
        value = value[key]
    if value is None:
        return _jsonl.NULL_TEXT, None
    if not isinstance(value, str):
        return _jsonl.NOT_STRING, type(value).__name__
    return _jsonl.FOUND, value


def check(kernel: ModuleType, line: bytes, path: tuple[str, ...] = PATH) -> None:
    code, a, b = kernel.locate(line, path)
    want, detail = reference(line, path)
    assert code == want, (line[:80], code, a, b)
    if code == _jsonl.FOUND:
        assert json.loads(line[a:b].decode("utf-8")) == detail
        assert _jsonl.value_at(line, path) == detail
    elif code == _jsonl.MISSING:
        assert a == detail
    elif code == _jsonl.NOT_STRING:
        nouns = {"int": "integer", "float": "number", "bool": "boolean"}
        assert _jsonl._KIND_NOUN[a].split()[-1] in ("object", "list", nouns.get(detail))


@pytest.mark.c_extension
def test_codes_and_kinds_have_one_numbering(both) -> None:
    compiled, pure = both
    assert compiled.CODES == pure.CODES == (0, 1, 2, 3, 4)
    assert (_jsonl.FOUND, _jsonl.NULL_TEXT, _jsonl.NOT_STRING) == (0, 1, 2)
    assert (_jsonl.MISSING, _jsonl.INVALID) == (3, 4)
    assert compiled.KINDS == pure.KINDS == tuple(range(7))


# --- JSONTestSuite: the same accept/reject decision as json.loads on every file ----------

SUITE_FILES = sorted(SUITE.glob("*.json"))


def test_the_suite_is_here() -> None:
    assert len(SUITE_FILES) > 300
    assert (SUITE.parent / "LICENSE").read_text().startswith("MIT License")


@pytest.mark.parametrize("name", [path.name for path in SUITE_FILES])
def test_json_test_suite(kernel, name: str) -> None:
    data = (SUITE / name).read_bytes()
    if name.startswith("y_"):
        assert json_accepts(data), "json.loads accepts every y_ file"
    if name.startswith("n_") and json_accepts(data):
        # json.loads accepts a few n_ files (NaN, Infinity): the kernels follow json.loads
        assert name in {
            "n_number_NaN.json",
            "n_number_infinity.json",
            "n_number_minus_infinity.json",
        }
    code = kernel.locate(data, ("a",))[0]
    assert (code != _jsonl.INVALID) == json_accepts(data), name


@pytest.mark.c_extension
def test_the_suite_gives_the_same_codes_on_both(both) -> None:
    compiled, pure = both
    for path in SUITE_FILES:
        data = path.read_bytes()
        for keys in (("a",), ("a", "b"), ("",)):
            assert compiled.locate(data, keys) == pure.locate(data, keys), path.name


# --- generated documents ----------------------------------------------------------------

KEYS = st.sampled_from(["response", "text", "a", "", "t\u00e9xt", 'res"ponse'])
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=20,
)
SPACES = st.sampled_from(["", " ", "\t", "\r", "  \n "])


def dump(value: Any, ascii_only: bool, space: str) -> bytes:
    text = json.dumps(value, ensure_ascii=ascii_only)
    # spacing where JSON allows it; string contents are left alone by json's own separators
    text = json.dumps(value, ensure_ascii=ascii_only, separators=(space + "," + space, ":" + space))
    try:
        return (space + text + space).encode("utf-8")
    except UnicodeEncodeError:
        return (space + json.dumps(value) + space).encode("ascii")


@given(
    value=st.dictionaries(KEYS, VALUES, max_size=5),
    inner=VALUES,
    ascii_only=st.booleans(),
    space=SPACES,
    duplicate=st.booleans(),
)
@pytest.mark.c_extension
def test_generated_lines_agree_with_json(both, value, inner, ascii_only, space, duplicate) -> None:
    value = dict(value)
    value["response"] = {"text": inner} if not isinstance(inner, dict) else inner
    line = dump(value, ascii_only, space)
    if duplicate:  # json.loads keeps the last of duplicate keys; so must the kernels
        line = line.rstrip()[:-1] + b', "response": ' + dump(inner, ascii_only, "") + b"}"
    for kernel in both:
        check(kernel, line)
    assert both[0].locate(line, PATH) == both[1].locate(line, PATH)


@pytest.mark.c_extension
@given(st.binary(max_size=60), st.sampled_from([b"", b'{"response": {"text": "x"}}', b"[1,"]))
def test_random_bytes_agree_with_json(both, noise, frame) -> None:
    line = frame[: len(frame) // 2] + noise + frame[len(frame) // 2 :]
    assume(b"\n" not in line)
    for kernel in both:
        check(kernel, line)
    assert both[0].locate(line, PATH) == both[1].locate(line, PATH)


@pytest.mark.c_extension
@given(st.text(max_size=40), st.sampled_from(list(range(0, 40))))
def test_mutated_lines_agree_with_json(both, text, cut) -> None:
    line = json.dumps({"response": {"text": text}, "n": [1.5e3, -0, True, None]}).encode()
    for mutated in (line[:cut] + line[cut + 1 :], line[:cut] + b'"' + line[cut:], line[:cut]):
        assume(b"\n" not in mutated)
        for kernel in both:
            check(kernel, mutated)
        assert both[0].locate(mutated, PATH) == both[1].locate(mutated, PATH)


@pytest.mark.parametrize("depth", [1000, 100_000])
def test_any_depth_is_read_without_recursion(kernel, depth: int) -> None:
    deep = b'{"x": ' + b"[" * depth + b"]" * depth + b', "response": {"text": "ok"}}'
    code, a, b = kernel.locate(deep, PATH)
    assert code == _jsonl.FOUND
    assert deep[a:b] == b'"ok"'
    unclosed = b"[" * depth
    assert kernel.locate(unclosed, PATH)[0] == _jsonl.INVALID
    assert "invalid JSON" in _jsonl.why(unclosed, PATH, _jsonl.INVALID, 0, 0)


def test_escaped_keys_and_messages(kernel) -> None:
    line = b'{"\\u0072esponse": {"te\\u0078t": "\\u00e9 \xc3\xa9"}}'
    code, a, b = kernel.locate(line, PATH)
    assert code == _jsonl.FOUND
    assert json.loads(line[a:b]) == "\u00e9 \u00e9"
    cases = {
        b'{"response": {"text": 5}}': "field 'response.text' is not a string: it is an integer",
        b'{"response": {"text": [1]}}': "field 'response.text' is not a string: it is a list",
        b'{"response": {"text": 1.5}}': "field 'response.text' is not a string: it is a number",
        b'{"response": {"text": true}}': "field 'response.text' is not a string: it is a boolean",
        b'{"response": {}}': "no field 'response.text' (response is an object without it)",
        b'{"response": "s"}': "no field 'response.text' (response is a string)",
        b"[1]": "no field 'response.text' (the line is a list)",
        b'{"response": {"text": "\xff"}}': "not UTF-8 (invalid start byte at byte 23)",
    }
    for line, message in cases.items():
        code, a, b = kernel.locate(line, PATH)
        assert _jsonl.why(line, PATH, code, a, b) == message


def test_arguments_are_type_checked(kernel) -> None:
    with pytest.raises(TypeError):
        kernel.locate("not bytes", PATH)
    with pytest.raises(TypeError, match="path"):
        kernel.locate(b"{}", ("a", 1))
    with pytest.raises(ValueError, match="path"):
        kernel.locate(b"{}", ())
    with pytest.raises(TypeError):
        kernel.text_lines(None, PATH, False)
    with pytest.raises(TypeError, match="families"):
        kernel.strip_lines(b"", PATH, strip_many, False, ["cite"])
    with pytest.raises(TypeError, match="families"):
        kernel.raw_ok(b'""', ("cite",))
    with pytest.raises(TypeError, match="rows"):
        kernel.citation_lines("f", ["0"], [[]])
    with pytest.raises(TypeError):
        kernel.extract_lines("", PATH, extract_many, False, "f", 0, CITE)
    with pytest.raises(TypeError):
        kernel.extract_lines(b"", PATH, extract_many, False, None, 0, CITE)
    with pytest.raises(TypeError, match="families"):
        kernel.extract_lines(b"", PATH, extract_many, False, "f", 0, ["cite"])
    with pytest.raises(TypeError, match="families"):
        kernel.extract_lines(b"", PATH, extract_many, False, "f", 0, ("cite",))
    with pytest.raises(TypeError):
        kernel.line_cuts(None, 0, 1)
    with pytest.raises(ValueError, match="size"):
        kernel.line_cuts(b"a\n", 3, 1)
    with pytest.raises(ValueError, match="most"):
        kernel.line_cuts(b"a\n", 2, 0)


# --- chunks of lines ----------------------------------------------------------------------

TEXTS = st.lists(
    st.one_of(
        st.text(alphabet=st.sampled_from('ab \n"\\/\t\u00e9' + S + D + E), max_size=30),
        st.sampled_from(
            [
                f"x {S}cite{D}turn0search1{E} y",
                f"x {S}cite{D}turn0search1\n{E} y\n",
                f'x {S}cite{D}turn0search1{D} turn1news2 {D}L3-L4{E}.\n\n"q"',
                f"{S}cite{D}turn0search1 a\u00e9\\ {S}cite{D}turn1file2{E}",
                f"{S}navlist{D}a\n{E} \\n {S}cite{D}turn2view3{E}",
                f"{S}cite{D}turn0search1",
                "\ud800 lone",
            ]
        ),
    ),
    min_size=1,
    max_size=8,
)


def lines_of(texts: list[str], ascii_only: bool, extra: list[bytes]) -> bytes:
    out = []
    for index, text in enumerate(texts):
        record = {"id": index, "response": {"text": text, "n": 1.50}}
        try:
            out.append(json.dumps(record, ensure_ascii=ascii_only).encode("utf-8"))
        except UnicodeEncodeError:
            out.append(json.dumps(record).encode("ascii"))
    out[1:1] = extra
    return b"\n".join(out)


EXTRA = st.lists(
    st.sampled_from([b"", b"  \r", b'{"response": {"text": null}}', b"not json", b"{}"]),
    max_size=3,
)


@pytest.mark.c_extension
@given(texts=TEXTS, ascii_only=st.booleans(), extra=EXTRA, newline=st.booleans())
def test_strip_lines_splices_and_agrees(both, texts, ascii_only, extra, newline) -> None:
    data = lines_of(texts, ascii_only, extra) + (b"\n" if newline else b"")
    results = []
    for kernel in both:
        for families in (CITE, None):
            results.append(kernel.strip_lines(data, PATH, strip_many, True, families))
    assert all(result == results[0] for result in results)
    out, rows, blanks, bad = results[0]
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    bad_lines = {index for index, *_ in bad}
    if len(lines) - 1 not in bad_lines:  # the last line's ending is kept
        assert out.endswith(b"\n") == data.endswith(b"\n")
    kept = [line for index, line in enumerate(lines) if index not in bad_lines]
    got = out.split(b"\n")
    if out.endswith(b"\n") or not out:
        got.pop()
    assert len(got) == len(kept)
    assert blanks == sum(1 for line in lines if not line.strip(b" \t\r"))
    assert rows == len(kept) - blanks
    for before, after in zip(kept, got, strict=True):
        if not before.strip(b" \t\r"):
            assert after == before
            continue
        old = json.loads(before)
        new = json.loads(after)
        text = old["response"]["text"]
        if text is not None:
            old["response"]["text"] = strip_citations(text, extract_citations(text))
        assert new == old
        code, a, b = both[1].locate(before, PATH)
        if code == _jsonl.FOUND:
            _, c, d = both[1].locate(after, PATH)
            assert before[:a] == after[:c]  # every other byte
            assert before[b:] == after[d:]


@pytest.mark.c_extension
@given(texts=TEXTS, extra=EXTRA)
def test_text_lines_and_map_lines_agree(both, texts, extra) -> None:
    data = lines_of(texts, False, extra)
    upper = lambda many: [text.upper() for text in many]  # noqa: E731
    compiled, pure = both
    for skip in (True, False):
        assert compiled.text_lines(data, PATH, skip) == pure.text_lines(data, PATH, skip)
        assert compiled.map_lines(data, PATH, upper, skip) == pure.map_lines(
            data, PATH, upper, skip
        )
    rows, found, _, _ = compiled.text_lines(data, PATH, True)
    lines = data.split(b"\n")
    for row, text in zip(rows, found, strict=True):
        assert json.loads(lines[row])["response"]["text"] == text


def test_a_bad_line_stops_a_chunk_after_a_whole_line_prefix(kernel) -> None:
    data = b'{"response": {"text": "a"}}\n\n{bad\n{"response": {"text": "c"}}\n'
    out, rows, blanks, bad = kernel.strip_lines(data, PATH, strip_many, False, CITE)
    assert out == b'{"response": {"text": "a"}}\n\n'
    assert (rows, blanks, [entry[:2] for entry in bad]) == (1, 1, [(2, _jsonl.INVALID)])
    out, rows, blanks, bad = kernel.strip_lines(data, PATH, strip_many, True, CITE)
    assert out == b'{"response": {"text": "a"}}\n\n{"response": {"text": "c"}}\n'


def test_lone_surrogate_result_keeps_every_other_byte(kernel) -> None:
    line = (
        b'{"n": 1.50, "response": {"text": "\\ud800 '
        + b"\xee\x88\x80cite\xee\x88\x82turn0search1\xee\x88\x81"
        + b'"}, "n": 2}\n'
    )
    out = kernel.strip_lines(line, PATH, strip_many, False, CITE)[0]
    assert out == b'{"n": 1.50, "response": {"text": "\\ud800 "}, "n": 2}\n'


@pytest.mark.c_extension
@given(st.text(max_size=30), st.sampled_from(["cite", "navlist"]))
def test_raw_ok_agrees(both, text, family) -> None:
    token = json.dumps(text, ensure_ascii=False).encode("utf-8", "surrogatepass")
    families = (family.encode(),)
    assert both[0].raw_ok(token, families) == both[1].raw_ok(token, families)


@given(
    st.lists(
        st.lists(
            st.fixed_dictionaries(
                {
                    "raw": st.text(max_size=10),
                    "family": st.text(max_size=5),
                    "source_ids": st.lists(st.text(max_size=5), max_size=3),
                    "locator": st.none() | st.text(max_size=5),
                    "start": st.integers(0, 2**70),
                    "end": st.integers(-5, 10),
                }
            ),
            max_size=3,
        )
        | st.none(),
        max_size=4,
    ),
    st.text(max_size=8),
)
@pytest.mark.c_extension
def test_citation_lines_are_json_dumps(both, citations, file) -> None:
    rows = list(range(len(citations)))
    expected = b""
    for row, found in zip(rows, citations, strict=True):
        value = {"file": file, "row": row, "citations": found}
        try:
            expected += json.dumps(value, ensure_ascii=False).encode("utf-8") + b"\n"
        except UnicodeEncodeError:
            expected += json.dumps(value).encode("ascii") + b"\n"
    for kernel in both:
        assert kernel.citation_lines(file, rows, citations) == expected


def expected_citation_lines(data: bytes, families: tuple[str, ...], file: str, first: int) -> bytes:
    """extract's JSON lines from json.loads and extract_many: what extract_lines must give."""
    out = b""
    for index, line in enumerate(data.split(b"\n")):
        if not line.strip(b" \t\r"):
            continue
        try:
            text = json.loads(line)["response"]["text"]
        except (ValueError, KeyError, TypeError):
            continue  # a bad line (skipped)
        if text is not None and not isinstance(text, str):
            continue
        found = None if text is None else extract_many([text], families=families)[0]
        value = {"file": file, "row": first + index, "citations": found}
        try:
            out += json.dumps(value, ensure_ascii=False).encode("utf-8") + b"\n"
        except UnicodeEncodeError:
            out += json.dumps(value).encode("ascii") + b"\n"
    return out


@pytest.mark.c_extension
@given(
    texts=TEXTS,
    ascii_only=st.booleans(),
    extra=EXTRA,
    families=st.sampled_from([("cite",), ("cite", "navlist"), (), ("ci",)]),
    file=st.sampled_from(["log.jsonl", "\udcff.jsonl", '\u00fc "q"']),
)
def test_extract_lines_are_extract_many_as_json_lines(
    both, texts, ascii_only, extra, families, file
) -> None:
    """Raw tokens scanned by the kernel, escaped ones through `many`: the same JSON lines as
    json.dumps of extract_many's dicts, offsets in code points of the decoded text."""
    data = lines_of(texts, ascii_only, extra) + b"\n"
    many = lambda texts: extract_many(texts, families=families)  # noqa: E731
    encoded = tuple(family.encode() for family in families)
    expected = expected_citation_lines(data, families, file, 7)
    for kernel in both:
        for raw in (encoded, None):
            out, rows, _, _ = kernel.extract_lines(data, PATH, many, True, file, 7, raw)
            assert out == expected
            assert rows == out.count(b"\n")


@pytest.mark.parametrize("ascii_only", [False, True])
@pytest.mark.parametrize("families", [CITE, (b"cite", b"x\xee\x88\x81")])
def test_a_text_longer_than_the_scan_window_is_read_whole(kernel, ascii_only, families) -> None:
    """The compiled kernel scans a long text for citations a window at a time (a whole text
    when a family holds a STOP): strip and extract as one scan of the whole text gives them,
    with markers, unclosed STARTs and other families at every distance from a window's end."""
    rng = random.Random(7)
    parts: list[str] = []
    while sum(map(len, parts)) < 300_000:
        roll = rng.random()
        if roll < 0.6:
            parts.append(f"{S}cite{D}turn{rng.randint(0, 9)}search{rng.randint(0, 99)}{E}")
        elif roll < 0.7:
            parts.append(f"{S}cite{D}turn0search1")  # never closed
        elif roll < 0.8:
            parts.append(f"{S}navlist{D}x{D}turn0news1{E}")
        else:
            parts.append("\u00e9" * rng.randint(0, 2000) + "x" * rng.randint(0, 3000))
    text = "".join(parts)
    names = [family.decode() for family in families]
    line = json.dumps({"response": {"text": text}}, ensure_ascii=ascii_only).encode() + b"\n"
    many = lambda texts: strip_many(texts, families=names)  # noqa: E731
    out, _, _, _ = kernel.strip_lines(line, PATH, many, False, families)
    assert json.loads(out)["response"]["text"] == many([text])[0]
    found = lambda texts: extract_many(texts, families=names)  # noqa: E731
    out, _, _, _ = kernel.extract_lines(line, PATH, found, False, "f", 0, families)
    assert json.loads(out)["citations"] == found([text])[0]


def test_extract_lines_stop_at_a_bad_line(kernel) -> None:
    data = (
        b'{"response": {"text": "a \xee\x88\x80cite\xee\x88\x82turn0search1\xee\x88\x81"}}\n'
        b'\n{bad\n{"response": {"text": null}}\n'
    )
    many = lambda texts: extract_many(texts)  # noqa: E731
    out, rows, blanks, bad = kernel.extract_lines(data, PATH, many, False, "f", 10, CITE)
    expected = (
        '{"file": "f", "row": 10, "citations": [{"raw": "\ue200cite\ue202turn0search1\ue201", '
        '"family": "cite", "source_ids": ["turn0search1"], "locator": null, "start": 2, '
        '"end": 21}]}\n'
    )
    assert out == expected.encode()
    assert (rows, blanks, [entry[:2] for entry in bad]) == (1, 1, [(2, _jsonl.INVALID)])
    out, rows, blanks, bad = kernel.extract_lines(data, PATH, many, True, "f", 10, CITE)
    assert out.endswith(b'{"file": "f", "row": 13, "citations": null}\n')
    assert rows == 2
    with pytest.raises(ValueError, match="many"):
        kernel.extract_lines(data, PATH, lambda texts: [], False, "f", 0, None)
    for first in (-12, 2**62):  # row numbers are written as json.dumps writes them
        out = kernel.extract_lines(data, PATH, many, True, "f", first, CITE)[0]
        assert [json.loads(line)["row"] for line in out.splitlines()] == [first, first + 3]


@given(
    data=st.binary(max_size=40).map(lambda b: bytes(b"ab\n"[x % 3] for x in b)),
    most=st.integers(1, 6),
    cut=st.integers(0, 40),
)
def test_line_cuts_are_even_pieces_of_whole_lines(kernel, data, most, cut) -> None:
    size = min(cut, len(data))
    pieces = kernel.line_cuts(data, size, most)
    lines = data[:size].count(b"\n") + (size > 0 and data[size - 1 : size] != b"\n")
    assert sum(count for _, _, count in pieces) == lines
    assert [piece[0] for piece in pieces[1:]] == [piece[1] for piece in pieces[:-1]]
    if pieces:
        assert (pieces[0][0], pieces[-1][1]) == (0, size)
        assert len(pieces) == -(-lines // most)
        counts = [count for _, _, count in pieces]
        assert max(counts) <= most
        assert max(counts) - min(counts) <= 1
    for start, end, count in pieces:
        part = data[start:end]
        assert count == part.count(b"\n") + (not part.endswith(b"\n"))
        assert end == size or part.endswith(b"\n")


def test_the_active_kernel_is_chosen_with_the_scanner() -> None:
    from citemark import IMPLEMENTATION

    assert _jsonl.kernel().__name__ == KERNELS[IMPLEMENTATION]
    assert "citemark._kernels.jsonl_py" in sys.modules or IMPLEMENTATION == "cython"
