"""`citemark lint`: text files and JSONL rows, sources from a file or from each row, the
report, --json, and the exit codes (0 clean, 1 findings, 2 unreadable input or bad usage)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from codecs import BOM_UTF8
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citemark.lint import main
from citemark.sources import Registry

FIXTURES = Path(__file__).parents[1] / "fixtures"
S, D, E = "\ue200", "\ue202", "\ue201"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A directory with the fixtures and the sources of the tool-call answers."""
    for name in ("answer_tool_lines.txt", "answer_flawed.txt", "answers.jsonl"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    registry = Registry()
    registry.add_tool_call(json.loads((FIXTURES / "documents.json").read_text(encoding="utf-8")))
    (tmp_path / "sources.json").write_text(registry.to_json(), encoding="utf-8")
    return tmp_path


def lint(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main([str(arg) for arg in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_clean_answer(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = lint(
        capsys, work / "answer_tool_lines.txt", "--sources", work / "sources.json",
        "--style", "tool-lines",
    )  # fmt: skip
    assert (code, err) == (0, "")
    assert out == "1 answer, 6 citations: 0 errors, 0 warnings\n"


def test_flawed_answer(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = work / "answer_flawed.txt"
    code, out, err = lint(capsys, file, "--sources", work / "sources.json")
    assert (code, err) == (1, "")
    lines = out.splitlines()
    assert lines[:5] == [
        f"{file}:1:41: warning citation-before-punctuation: put the citation after the '.', "
        "not before it",
        f"{file}:3:30: error citation-in-emphasis: a citation inside bold or italics: put it "
        "after the closing delimiter",
        f"{file}:5:37: error locator-out-of-range: L4-L9 is past the end of 'turn0file2' (L1-L4)",
        f"{file}:7:49: error bare-reference: the reference id 'turn0file1' is written outside "
        "a citation marker",
        f"{file}:7:60: error unknown-source: 'turn0file4' is not a known source",
    ]
    assert lines[5:] == [
        "",
        "code                         severity  count",
        "bare-reference               error         1",
        "citation-in-emphasis         error         1",
        "locator-out-of-range         error         1",
        "unknown-source               error         1",
        "citation-before-punctuation  warning       1",
        "",
        "1 answer, 5 citations: 4 errors, 1 warning",
    ]


def test_warnings_pass_unless_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "answer.txt"
    file.write_text("A claim" + S + "cite" + D + "doc1" + E + ".", encoding="utf-8")
    assert lint(capsys, file)[0] == 0
    assert lint(capsys, file, "--fail-on", "warning")[0] == 1


def test_json(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = lint(
        capsys, work / "answer_flawed.txt", work / "answer_tool_lines.txt",
        "--sources", work / "sources.json", "--json",
    )  # fmt: skip
    assert code == 1
    report = json.loads(out)
    assert report["summary"] == {
        "answers": 2,
        "citations": 11,
        "errors": 4,
        "warnings": 1,
        "codes": {
            "bare-reference": 1,
            "citation-before-punctuation": 1,
            "citation-in-emphasis": 1,
            "locator-out-of-range": 1,
            "unknown-source": 1,
        },
    }
    assert report["unreadable"] == []
    first = report["diagnostics"][0]
    assert first == {
        "file": str(work / "answer_flawed.txt"),
        "line": 1,
        "column": 41,
        "code": "citation-before-punctuation",
        "severity": "warning",
        "message": "put the citation after the '.', not before it",
        "start": 40,
        "end": 60,
    }


def test_jsonl_with_sources_per_row(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = work / "answers.jsonl"
    code, out, err = lint(
        capsys, file, "--field", "response.output_text", "--sources-field", "response.sources",
    )  # fmt: skip
    assert (code, err) == (1, "")
    lines = out.splitlines()
    assert lines[0] == (
        f"{file}:2 (answer 1:41): warning citation-before-punctuation: put the citation after "
        "the '.', not before it"
    )
    assert all(line.startswith(f"{file}:2 ") for line in lines[:5])
    assert lines[-1] == "3 answers, 14 citations: 4 errors, 1 warning"
    code, out, _ = lint(
        capsys, file, "--field", "response.output_text", "--sources-field", "response.sources",
        "--json",
    )  # fmt: skip
    rows = json.loads(out)["diagnostics"]
    assert {row["row_line"] for row in rows} == {2}


def test_jsonl_with_shared_sources(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the third row cites blocks that the shared sources do not hold
    code, out, _ = lint(
        capsys, work / "answers.jsonl", "--field", "response.output_text",
        "--sources", work / "sources.json", "--json",
    )  # fmt: skip
    assert code == 1
    unknown = [r for r in json.loads(out)["diagnostics"] if r["code"] == "unknown-source"]
    assert [(r["row_line"], r["message"]) for r in unknown] == [
        (2, "'turn0file4' is not a known source"),
        (3, "'block1' is not a known source"),
        (3, "'block2' is not a known source"),
        (3, "'block3' is not a known source"),
    ]


def test_without_sources(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "answer.txt"
    file.write_text("A claim." + S + "cite" + D + "anything" + E, encoding="utf-8")
    assert lint(capsys, file)[:2] == (0, "1 answer, 1 citation: 0 errors, 0 warnings\n")


def test_unreadable_inputs(work: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.txt"
    code, out, err = lint(capsys, missing, work / "answer_tool_lines.txt")
    assert code == 2
    assert err.startswith(f"citemark lint: {missing}: ")
    assert out.endswith("1 answer, 6 citations: 0 errors, 0 warnings; 1 unreadable input\n")

    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"ok \xff\xfe")
    code, _, err = lint(capsys, binary)
    assert (code, err) == (2, f"citemark lint: {binary}: not UTF-8 (byte 3)\n")


def test_bad_rows_name_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = tmp_path / "rows.jsonl"
    good = {"a": {"text": "Fine." + S + "cite" + D + "x1" + E, "src": {"x1": "text"}}}
    rows.write_bytes(
        b"\n".join(
            [
                json.dumps(good).encode(),
                b"{not json",
                json.dumps({"a": {"text": 3, "src": {}}}).encode(),
                json.dumps({"a": {"text": "t"}}).encode(),
                json.dumps({"a": {"text": "t", "src": {"x1": {"title": "no text"}}}}).encode(),
                b'{"a": {"text": "\xff"}}',
                b"",
                json.dumps(good).encode(),
            ]
        )
        + b"\n"
    )
    code, out, err = lint(capsys, rows, "--field", "a.text", "--sources-field", "a.src")
    assert code == 2
    messages = err.splitlines()
    assert [m.split(": ")[1] for m in messages] == [f"{rows}:{n}" for n in (2, 3, 4, 5, 6)]
    assert "invalid JSON" in messages[0]
    assert "'a.text' is not a string" in messages[1]
    assert "no field 'a.src'" in messages[2]
    assert "bad sources" in messages[3]
    assert "not UTF-8" in messages[4]
    assert out.endswith("2 answers, 2 citations: 0 errors, 0 warnings; 5 unreadable inputs\n")


def test_bad_sources_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    answer = tmp_path / "answer.txt"
    answer.write_text("Text.", encoding="utf-8")
    sources = tmp_path / "sources.json"
    sources.write_text('{\n  "x1": {"text": "a"},\n  oops\n}', encoding="utf-8")
    code, out, err = lint(capsys, answer, "--sources", sources)
    assert (code, out) == (2, "")
    assert err.startswith(f"citemark lint: {sources}:3: invalid JSON")
    sources.write_text('{"x1": {"txt": "a"}}', encoding="utf-8")
    code, _, err = lint(capsys, answer, "--sources", sources)
    assert code == 2
    assert "bad sources: x1: unknown field(s) txt" in err
    sources.write_text("[" * 100_000, encoding="utf-8")  # json.loads would recurse past the stack
    code, _, err = lint(capsys, answer, "--sources", sources)
    assert code == 2
    assert err.startswith(f"citemark lint: {sources}: its JSON nests too deep")


@pytest.mark.parametrize(
    "args",
    [
        ["--sources-field", "a.b"],
        ["--field", "a", "--sources-field", "b", "--sources", "s.json"],
        ["--field", "a..b"],
        ["--style", "lines"],
    ],
)
def test_bad_usage(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 2
    capsys.readouterr()


def test_standard_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class Stdin:
        buffer: Any = None

    import io

    stdin = Stdin()
    stdin.buffer = io.BytesIO(("Claim" + S + "cite" + D + "x" + E + ".").encode())
    monkeypatch.setattr(sys, "stdin", stdin)
    code, out, _ = lint(capsys)
    assert code == 0
    assert out.startswith("-:1:6: warning citation-before-punctuation")


def test_through_the_citemark_command(work: Path, implementation: str) -> None:
    env = {**os.environ, "CITEMARK_IMPLEMENTATION": implementation}
    result = subprocess.run(
        [sys.executable, "-m", "citemark", "lint", "answer_flawed.txt", "--sources",
         "sources.json", "--json"],
        capture_output=True, cwd=work, env=env, check=False, timeout=120,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["summary"]["errors"] == 4
    clean = subprocess.run(
        [sys.executable, "-m", "citemark", "lint", "answer_tool_lines.txt", "--sources",
         "sources.json", "--style", "tool-lines"],
        capture_output=True, cwd=work, env=env, check=False, timeout=120,
    )  # fmt: skip
    assert (clean.returncode, clean.stderr) == (0, b"")


# A JSONL log that starts with a UTF-8 byte order mark, as some Windows editors write it.
FLAWED_ROW = json.dumps({"t": "Claim" + S + "cite" + D + "turn0search3" + E + "."})
BOM_ROWS = BOM_UTF8 + f'{FLAWED_ROW}\n{{"t": "ok"}}\n'.encode()


def test_a_jsonl_file_that_starts_with_a_byte_order_mark_is_linted_from_its_first_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = tmp_path / "bom.jsonl"
    rows.write_bytes(BOM_ROWS)
    only = tmp_path / "only_bom.jsonl"
    only.write_bytes(BOM_UTF8)  # no row at all, as the other commands read it
    code, out, err = lint(capsys, rows, only, "--field", "t")
    assert (code, err) == (0, "")
    assert out.startswith(f"{rows}:1 (answer 1:6): warning citation-before-punctuation")
    assert out.endswith("\n2 answers, 1 citation: 0 errors, 1 warning\n")


def test_a_jsonl_stream_that_starts_with_a_byte_order_mark_is_linted_from_its_first_row(
    implementation: str,
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "citemark", "lint", "-", "--field", "t"],
        input=BOM_ROWS, capture_output=True, check=False, timeout=120,
        env={**os.environ, "CITEMARK_IMPLEMENTATION": implementation},
    )  # fmt: skip
    assert (result.returncode, result.stderr) == (0, b""), result.stderr
    out = result.stdout.decode()
    assert out.startswith("-:1 (answer 1:6): warning citation-before-punctuation")
    assert out.endswith("\n2 answers, 1 citation: 0 errors, 1 warning\n")


def test_a_byte_order_mark_that_starts_a_later_row_is_invalid_json_as_for_the_other_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = tmp_path / "late_bom.jsonl"
    rows.write_bytes(b'{"t": "ok"}\n' + BOM_UTF8 + b'{"t": "ok"}\n')
    code, out, err = lint(capsys, rows, "--field", "t")
    assert code == 2
    assert out.endswith("1 answer, 0 citations: 0 errors, 0 warnings; 1 unreadable input\n")
    assert err.startswith(f"citemark lint: {rows}:2: invalid JSON: ")
    extract = subprocess.run(
        [sys.executable, "-m", "citemark", "extract", str(rows), "--field", "t"],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert extract.returncode == 2
    message = err.splitlines()[0].removeprefix("citemark lint: ")
    assert extract.stderr.splitlines()[0] == f"citemark: {message}"


@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["file", "row_line", "line", "code", "message", "start"]),
            st.one_of(st.text(), st.integers()),
            min_size=1,
        ),
        max_size=4,
    )
)
def test_json_document_is_json_dumps_indented(rows: list[dict[str, Any]]) -> None:
    # lint writes its rows by the C encoder; the text is json.dumps(indent=2)'s.
    from citemark.lint import _indented

    document = {"diagnostics": rows, "summary": {"answers": 1, "codes": {"a-b": 2}}, "x": []}
    assert _indented(document) == json.dumps(document, ensure_ascii=False, indent=2)
