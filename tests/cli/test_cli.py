"""The `citemark` command on texts, JSONL and Parquet logs: rows, order, bad input, stats,
progress bar, exit codes.  The command runs in a subprocess, as a user runs it."""

from __future__ import annotations

import gc
import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import threading
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

import citemark as citemark_package
from citemark import cli, extract_citations, strip_citations
from citemark._cli import inputs as _inputs
from citemark._cli.commands import Job
from citemark._cli.inputs import Inputs
from citemark._cli.jsonl import BadRow, parse_path, value_at
from citemark._cli.work import FileSlice, Task, process
from citemark._cli.workers import ordered_results
from citemark.display import clean

S, D, E = "\ue200", "\ue202", "\ue201"


def citemark(*args: str, stdin: bytes | None = None, cwd: Path | None = None) -> Any:
    result = subprocess.run(
        [sys.executable, "-m", "citemark", *args],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        cwd=cwd,
        check=False,
        timeout=120,
    )
    result.err = result.stderr.decode("utf-8")
    return result


def text_of(i: int) -> str:
    """Row i of the generated log: valid, multi-source, located, malformed and foreign
    markers, non-ASCII text, and a row without markers."""
    kinds = ["search", "file", "news", "view"]
    text = f"Row {i}: é {S}cite{D}turn{i % 3}{kinds[i % 4]}{i % 5}{E}"
    if i % 2:
        text += f" more{S}cite{D}turn0search1{D} turn1news2 {D}L3-L4{E}."
    if i % 5 == 0:
        text += f" {S}cite{D}not an id{E}"
    if i % 7 == 0:
        text += f" {S}navlist{D}Title{D}turn0search0{E}"
    if i % 11 == 0:
        text = f"plain row {i} \U0001f600"
    return text


def write_log(path: Path, rows: int, *, ascii_json: bool = True) -> list[dict[str, Any]]:
    records = []
    with path.open("w", encoding="utf-8") as handle:
        for i in range(rows):
            record = {"id": i, "response": {"output_text": text_of(i), "score": 1.5}, "tags": []}
            records.append(record)
            handle.write(json.dumps(record, ensure_ascii=ascii_json) + "\n")
    return records


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    path = tmp_path_factory.mktemp("log") / "log.jsonl"
    return path, write_log(path, 1200)


# --- text files (the original command) ---------------------------------------------------


def test_text_files_extract_and_strip(tmp_path: Path) -> None:
    text = f"a {S}cite{D}turn0file0{D}L8-L13{E} b {S}cite{D}x y{E}"
    (tmp_path / "answer.txt").write_text(text, encoding="utf-8")
    found = citemark("extract", "answer.txt", cwd=tmp_path)
    assert found.returncode == 0, found.err
    assert json.loads(found.stdout) == {"file": "answer.txt", "citations": extract_citations(text)}
    stripped = citemark("strip", "answer.txt", cwd=tmp_path)
    assert stripped.stdout.decode("utf-8") == strip_citations(text, extract_citations(text))
    piped = citemark("strip", stdin=text.encode("utf-8"))
    assert piped.stdout == stripped.stdout


def test_unreadable_text_file_is_named_and_others_still_done(tmp_path: Path) -> None:
    (tmp_path / "ok.txt").write_text(f"x{S}cite{D}a{E}", encoding="utf-8")
    result = citemark("strip", "missing.txt", "ok.txt", cwd=tmp_path)
    assert result.returncode == 2
    assert "missing.txt" in result.err
    assert result.stdout == b"x"


# --- JSONL -------------------------------------------------------------------------------


def test_jsonl_strip_cleans_the_field_and_keeps_every_other_byte(log, tmp_path: Path) -> None:
    path, records = log
    result = citemark("strip", str(path), "--field", "response.output_text", "-q", "-j", "2")
    assert result.returncode == 0, result.err
    lines_in = path.read_bytes().splitlines()
    lines_out = result.stdout.splitlines()
    assert len(lines_out) == len(records)
    for line_in, line_out, record in zip(lines_in, lines_out, records, strict=True):
        text = record["response"]["output_text"]
        clean = strip_citations(text, extract_citations(text))
        if clean == text:
            assert line_out == line_in
        else:
            expected = json.dumps(text)  # the log was written ASCII-escaped: kept so
            assert line_out == line_in.replace(expected.encode(), json.dumps(clean).encode())
        assert json.loads(line_out)["response"]["output_text"] == clean


def test_jsonl_extract_gives_row_numbers_and_citations(log) -> None:
    path, records = log
    result = citemark("extract", str(path), "--field", "response.output_text", "-j", "2")
    assert result.returncode == 0, result.err
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [row["row"] for row in rows] == list(range(len(records)))
    assert {row["file"] for row in rows} == {str(path)}
    for row, record in zip(rows, records, strict=True):
        assert row["citations"] == extract_citations(record["response"]["output_text"])


def test_order_and_results_do_not_depend_on_jobs_or_chunks(log) -> None:
    path, _ = log
    args = ["strip", str(path), "--field", "response.output_text", "-q"]
    one = citemark(*args, "-j", "1")
    two = citemark(*args, "-j", "2", "--chunk-rows", "37")
    assert one.returncode == two.returncode == 0
    assert one.stdout == two.stdout
    args[0] = "extract"
    assert (
        citemark(*args, "-j", "1").stdout == citemark(*args, "-j", "2", "--chunk-rows", "7").stdout
    )


def test_utf8_json_stays_utf8_and_stdin_works(tmp_path: Path) -> None:
    path = tmp_path / "utf8.jsonl"
    records = write_log(path, 30, ascii_json=False)
    args = ["--field", "response.output_text", "-j", "2", "--chunk-rows", "4"]  # a pool
    result = citemark("strip", "-", *args, stdin=path.read_bytes())
    assert result.returncode == 0, result.err
    for line, record in zip(result.stdout.decode("utf-8").splitlines(), records, strict=True):
        text = record["response"]["output_text"]
        assert "\\u" not in line  # non-ASCII written as it came, not escaped
        assert json.loads(line)["response"]["output_text"] == strip_citations(
            text, extract_citations(text)
        )


def test_odd_but_valid_json_is_untouched_outside_the_field(tmp_path: Path) -> None:
    lines = [
        '{ "a" :1.0e5,"t":"x\\ue200cite\\ue202turn0search0\\ue201y" , "b":[ 1,2 ] }',
        '{"t": "x\ue200cite\ue202turn0search0\ue201y", "t2": "\\u00e9"}',
        '{"t": "first", "t": "dup \ue200cite\ue202a\ue201 last wins"}',
        '{"t": null, "n": NaN}',
        '{"t": "\\ud800 lone surrogate \ue200cite\ue202a\ue201"}',
        '  {"nested": {"t": 1}, "t": "z"}  \r',
    ]
    path = tmp_path / "odd.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")  # and no final newline
    result = citemark("strip", str(path), "--field", "t")
    assert result.returncode == 0, result.err
    out = result.stdout.decode("utf-8").split("\n")  # the last line still without a newline
    assert out[0] == '{ "a" :1.0e5,"t":"xy" , "b":[ 1,2 ] }'
    assert out[1] == '{"t": "xy", "t2": "\\u00e9"}'
    assert out[2] == '{"t": "first", "t": "dup  last wins"}'
    assert out[3] == lines[3]
    assert out[4] == '{"t": "\\ud800 lone surrogate "}'  # every other byte as it was
    assert out[5] == lines[5]
    found = citemark("extract", str(path), "--field", "t")
    rows = [json.loads(line) for line in found.stdout.splitlines()]
    assert rows[3]["citations"] is None  # a null text has no citations
    assert [c["source_ids"] for c in rows[2]["citations"]] == [["a"]]


BAD_LINES = [
    ("not json", "invalid JSON"),
    ('{"response": {"output_text": 3}}', "is not a string: it is an integer"),
    ('{"response": {}}', "no field 'response.output_text'"),
    ('{"response": "flat"}', "no field"),
    ("[1, 2]", "no field"),
    ("{", "invalid JSON"),
    ('{"response": {"output_text": "x"}} trailing', "invalid JSON"),
]


@pytest.mark.parametrize(("line", "why"), BAD_LINES)
def test_a_bad_line_stops_the_run_naming_file_and_line(tmp_path: Path, line, why) -> None:
    path = tmp_path / "bad.jsonl"
    good = json.dumps({"response": {"output_text": f"a{S}cite{D}x{E}"}})
    path.write_text(f"{good}\n{good}\n{line}\n{good}\n", encoding="utf-8")
    result = citemark("strip", str(path), "--field", "response.output_text")
    assert result.returncode == 2
    assert f"{path}:3:" in result.err
    assert why in result.err
    assert len(result.stdout.splitlines()) == 2  # the rows before it were written


def test_skip_bad_reports_each_line_and_loses_no_other_row(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    good = [json.dumps({"response": {"output_text": f"row {i} {S}cite{D}x{E}"}}) for i in range(9)]
    lines = [good[0], BAD_LINES[0][0], good[1], good[2], BAD_LINES[2][0], *good[3:]]
    data = "\n".join(lines).encode("utf-8") + b"\n" + b'{"bad utf8": "\xff"}\n'
    path.write_bytes(data)
    for jobs in ("1", "2"):
        args = ["--field", "response.output_text", "--skip-bad", "-j", jobs, "--chunk-rows", "2"]
        result = citemark("strip", str(path), *args)
        assert result.returncode == 1, result.err
        skipped = [
            line for line in result.err.splitlines() if line.startswith("citemark: skipped ")
        ]
        assert [line.split(":")[2] for line in skipped] == ["2", "5", "12"]
        assert "not UTF-8" in skipped[2]
        out = result.stdout.splitlines()
        assert len(out) == len(lines) + 1 - 3
        assert [json.loads(line)["response"]["output_text"] for line in out] == [
            f"row {i} " for i in range(9)
        ]
        found = citemark("extract", str(path), *args)
        assert [json.loads(line)["row"] for line in found.stdout.splitlines()] == [
            0,
            2,
            3,
            *range(5, 11),
        ]


# --- Parquet -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def parquet_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str | None]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path_factory.mktemp("parquet") / "log.parquet"
    texts: list[str | None] = [None if i % 13 == 0 else text_of(i) for i in range(700)]
    table = pa.table(
        {"id": pa.array(range(700), pa.int64()), "text": pa.array(texts, pa.large_string())}
    )
    pq.write_table(table, path, row_group_size=200)
    return path, texts


@pytest.mark.needs("pyarrow")
def test_parquet_strip_writes_parquet_with_the_column_cleaned(parquet_log, tmp_path) -> None:
    import pyarrow.parquet as pq

    path, texts = parquet_log
    out = tmp_path / "clean.parquet"
    result = citemark("strip", str(path), "--column", "text", "-o", str(out), "-j", "2")
    assert result.returncode == 0, result.err
    table = pq.read_table(out)
    assert table.schema == pq.read_schema(path)
    assert table.column("id").to_pylist() == list(range(700))
    assert table.column("text").to_pylist() == [
        None if t is None else strip_citations(t, extract_citations(t)) for t in texts
    ]
    as_json = citemark("strip", str(path), "--column", "text", "--format", "jsonl")
    rows = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert rows == table.to_pylist()


@pytest.mark.needs("pyarrow")
def test_parquet_to_jsonl_writes_strict_json(tmp_path: Path) -> None:
    """JSON has no NaN nor infinity: a float column's are null, as JSON.stringify writes them
    (json.dumps would write `NaN`, which strict parsers refuse)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "floats.parquet"
    floats = [1.5, float("nan"), float("inf"), -float("inf")]
    pq.write_table(pa.table({"text": ["a"] * 4, "x": floats}), path)
    result = citemark("strip", str(path), "--column", "text", "--format", "jsonl")
    assert result.returncode == 0, result.err
    rows = [json.loads(line, parse_constant=pytest.fail) for line in result.stdout.splitlines()]
    assert [row["x"] for row in rows] == [1.5, None, None, None]


@pytest.mark.needs("pyarrow")
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_dictionary_encoded_column_is_read_as_its_texts(tmp_path: Path, jobs: str) -> None:
    """pandas writes a `category` column dictionary-encoded: its values are the texts, and
    strip writes the column back with the file's type."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts: list[str | None] = [None if i % 7 == 0 else text_of(i % 5) for i in range(300)]
    path = tmp_path / "category.parquet"
    pq.write_table(pa.table({"text": pa.array(texts).dictionary_encode()}), path)
    out = tmp_path / "clean.parquet"
    common = ("--column", "text", "-j", jobs, "--chunk-rows", "64")
    assert citemark("strip", str(path), *common, "-o", str(out)).returncode == 0
    table = pq.read_table(out)
    assert table.schema == pq.read_schema(path)
    assert table.column("text").to_pylist() == [
        None if t is None else strip_citations(t, extract_citations(t)) for t in texts
    ]
    lines = citemark("extract", str(path), *common).stdout.splitlines()
    expected = [None if t is None else extract_citations(t) for t in texts]
    assert [json.loads(line)["citations"] for line in lines] == expected
    stats = json.loads(citemark("stats", str(path), *common, "--json").stdout)
    assert stats["rows"] == len(texts)


@pytest.mark.needs("pyarrow")
def test_parquet_extract_to_parquet_and_to_jsonl(parquet_log, tmp_path) -> None:
    import pyarrow.parquet as pq

    path, texts = parquet_log
    out = tmp_path / "citations.parquet"
    result = citemark(
        "extract", str(path), "--column", "text", "-o", str(out), "--chunk-rows", "64"
    )
    assert result.returncode == 0, result.err
    table = pq.read_table(out)
    assert table.column_names == ["file", "row", "citations"]
    assert table.column("row").to_pylist() == list(range(700))
    expected = [None if t is None else extract_citations(t) for t in texts]
    assert table.column("citations").to_pylist() == expected
    lines = citemark("extract", str(path), "--column", "text").stdout.splitlines()
    assert [json.loads(line)["citations"] for line in lines] == expected


@pytest.mark.needs("pyarrow")
def test_jsonl_extract_to_parquet(log, tmp_path) -> None:
    import pyarrow.parquet as pq

    path, records = log
    out = tmp_path / "found.parquet"
    result = citemark("extract", str(path), "--field", "response.output_text", "-o", str(out))
    assert result.returncode == 0, result.err
    table = pq.read_table(out)
    assert table.column("citations").to_pylist() == [
        extract_citations(r["response"]["output_text"]) for r in records
    ]


@pytest.mark.needs("pyarrow")
def test_parquet_input_errors(parquet_log, tmp_path) -> None:
    path, _ = parquet_log
    missing = citemark("stats", str(path), "--column", "nope")
    assert missing.returncode == 2
    assert "no column 'nope'" in missing.err
    numbers = citemark("stats", str(path), "--column", "id")
    assert numbers.returncode == 2
    assert "not a string column" in numbers.err
    (tmp_path / "junk.parquet").write_bytes(b"not parquet")
    junk = citemark("extract", str(tmp_path / "junk.parquet"), "--column", "text")
    assert junk.returncode == 2
    assert "junk.parquet" in junk.err


# --- stats -------------------------------------------------------------------------------


def test_stats_counts(tmp_path: Path) -> None:
    rows = [
        f"{S}cite{D}turn0search0{D}turn1file2{E} {S}cite{D}bad id{E}",
        f"{S}cite{D}turn3news1{D}L1-L2{E} {S}cite{D}unclosed {S}navlist{D}t{D}turn0view0{E}",
        "nothing here",
        f"{S}cite{D}block5{E}{S}cite{D}turn2view3{E}{S}cite{D}turn0search1{E}",
        None,
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps({"t": row}) for row in rows) + "\n", encoding="utf-8")
    result = citemark("stats", str(path), "--field", "t", "--json")
    assert result.returncode == 0, result.err
    stats = json.loads(result.stdout)
    assert stats["rows"] == 5
    assert stats["null_rows"] == 1
    assert stats["rows_with_citations"] == 3
    assert stats["citations"] == 1 + 1 + 3
    assert stats["citations_per_row"]["histogram"] == {"0": 1, "1": 2, "3": 1}
    assert stats["citations_per_row"]["max"] == 3
    # "bad id", and the unclosed START that swallows the navlist marker
    assert stats["families"]["cite"] == {"markers": 7, "citations": 5, "malformed": 2}
    assert stats["malformed_markers"] == 2
    assert stats["other_families"] == {"navlist": 1}
    assert stats["id_kinds"] == {"search": 2, "file": 1, "news": 1, "view": 1, "other": 1}
    table = citemark("stats", str(path), "--field", "t", "--family", "cite", "--family", "navlist")
    assert table.returncode == 0, table.err
    text = table.stdout.decode("utf-8")
    for word in ("rows", "citations", "malformed markers", "navlist", "id kind", "search"):
        assert word in text
    two_jobs = citemark("stats", "--json", str(tmp_path / "s.jsonl"), "--field", "t", "-j", "2")
    assert json.loads(two_jobs.stdout) == stats


@pytest.mark.needs("pyarrow")
def test_stats_on_parquet_equal_stats_on_jsonl(parquet_log, tmp_path) -> None:
    path, texts = parquet_log
    jsonl = tmp_path / "same.jsonl"
    jsonl.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    from_parquet = citemark("stats", str(path), "--column", "text", "--json")
    from_jsonl = citemark("stats", str(jsonl), "--field", "text", "--json", "-j", "2")
    assert from_parquet.returncode == from_jsonl.returncode == 0
    assert json.loads(from_parquet.stdout) == json.loads(from_jsonl.stdout)


# --- usage, help, progress ---------------------------------------------------------------


def test_help_documents_the_exit_codes() -> None:
    result = citemark("--help")
    assert result.returncode == 0
    text = result.stdout.decode()
    for code in ("0 ", "1 ", "2 ", "130"):
        assert f"\n  {code}" in text
    assert "--skip-bad" in text
    assert "--jobs" in text


@pytest.mark.parametrize(
    "args",
    [
        ["strip", "x.jsonl", "--field", "a", "--column", "b"],
        ["strip", "x.jsonl", "--field", "a", "--format", "parquet", "-o", "x.parquet"],
        ["strip", "x.txt", "--format", "jsonl"],
        ["stats", "x.txt", "--format", "jsonl"],
        ["extract", "x.txt", "--json"],
        ["extract", "x.jsonl", "--field", "a..b"],
        ["strip", "-j", "0"],
    ],
)
def test_usage_errors_exit_2(args) -> None:
    result = citemark(*args)
    assert result.returncode == 2
    assert "usage:" in result.err


def test_output_may_not_overwrite_an_input(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text('{"t": "x"}\n', encoding="utf-8")
    result = citemark("strip", str(path), "--field", "t", "-o", str(path))
    assert result.returncode == 2
    assert "is also an input" in result.err
    assert path.read_text(encoding="utf-8") == '{"t": "x"}\n'


def test_an_input_read_from_standard_input_or_appended_to_is_refused(tmp_path: Path) -> None:
    """`< log -o log` would truncate the input it reads; `>> log` would read its own rows
    back for ever (as `cat` refuses to)."""
    path = tmp_path / "log.jsonl"
    row = '{"t": "x"}\n'
    path.write_text(row, encoding="utf-8")
    command = [sys.executable, "-m", "citemark", "strip", "--field", "t"]
    with path.open("rb") as stdin:
        result = subprocess.run(
            [*command, "-o", str(path)], stdin=stdin, capture_output=True, timeout=60
        )
    assert result.returncode == 2
    assert b"is also an input (standard input)" in result.stderr
    with path.open("ab") as stdout:
        result = subprocess.run(
            [*command, str(path)], stdout=stdout, stderr=subprocess.PIPE, timeout=60
        )
    assert result.returncode == 2
    assert b"standard output is also an input" in result.stderr
    assert path.read_text(encoding="utf-8") == row
    # Another regular file as standard output is no input.
    with (tmp_path / "out.jsonl").open("wb") as stdout:
        result = subprocess.run([*command, str(path)], stdout=stdout, timeout=60)
    assert result.returncode == 0
    assert (tmp_path / "out.jsonl").read_text(encoding="utf-8") == row


def test_console_script_is_installed() -> None:
    script = shutil.which("citemark") or str(Path(sys.executable).parent / "citemark")
    checkout = str(Path(citemark_package.__file__).parent.parent)
    if not Path(script).exists() and checkout in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        pytest.skip("citemark comes from PYTHONPATH, not installed: there is no console script")
    result = subprocess.run([script, "--version"], capture_output=True, text=True, check=False)
    assert result.returncode == 0
    assert result.stdout.startswith("citemark ")


def run_on_a_terminal(args: list[str], tmp_path: Path) -> str:
    """stderr of the command when stderr is a terminal (a pty) and stdout a file."""
    leader, follower = pty.openpty()
    with (tmp_path / "stdout").open("wb") as stdout:
        env = {**os.environ, "TERM": "xterm", "COLUMNS": "120"}
        process = subprocess.Popen(
            [sys.executable, "-m", "citemark", *args],
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=follower,
            env=env,
        )
        os.close(follower)
        chunks = []
        while True:
            ready, _, _ = select.select([leader], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the pty closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert process.wait(timeout=60) == 0
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


def test_progress_bar_on_a_terminal_only(log, tmp_path: Path) -> None:
    path, _ = log
    args = ["strip", str(path), "--field", "response.output_text", "-o", str(tmp_path / "o.jsonl")]
    shown = run_on_a_terminal(args, tmp_path)
    assert "1,200 rows" in shown
    assert "MB/s" in shown
    assert "ETA 0:00:00" in shown
    assert re.search(r"100(\.0)?%", shown)  # rich's bar, or the plain line without rich
    assert run_on_a_terminal([*args, "--quiet"], tmp_path) == ""
    piped = citemark(*args)  # stderr is a pipe here
    assert piped.returncode == 0
    assert piped.err == ""


def test_plain_progress_line_without_rich(monkeypatch) -> None:
    import io

    from citemark._cli.progress import Progress

    monkeypatch.setitem(sys.modules, "rich.progress", None)  # as if rich were not installed
    stream = io.StringIO()
    with Progress(2_000_000, enabled=True, stream=stream) as progress:
        progress.advance(10, 1_000_000)
        progress.advance(10, 1_000_000)
    shown = stream.getvalue()
    assert "20 rows" in shown
    assert "MB/s" in shown
    assert "100.0%  ETA 0:00:00" in shown
    quiet = io.StringIO()
    with Progress(10, enabled=False, stream=quiet) as progress:
        progress.advance(1, 10)
    assert quiet.getvalue() == ""


# --- the pieces --------------------------------------------------------------------------


def test_value_at_and_paths() -> None:
    line = b'{"a": {"b": "x\\u00e9", "c": 1}, "d": [1]}'
    assert value_at(line, parse_path("a.b")) == "x\u00e9"
    assert value_at(b'{"a": null}', ("a",)) is None
    for bad in [b'{"a": 1', b'{"a" 1}', b"{'a': 1}", b'{"a": {"b": 1,}}', b"", b"{} {}"]:
        with pytest.raises(BadRow, match="invalid JSON"):
            value_at(bad, ("a",))
    with pytest.raises(BadRow, match=r"no field 'a\.b' \(a is a list\)"):
        value_at(b'{"a": []}', ("a", "b"))
    for path in ("a.", "", ".", "a..b"):
        with pytest.raises(ValueError, match="dotted"):
            parse_path(path)


@pytest.mark.parametrize("final_newline", [True, False])
def test_jsonl_blocks_keep_whole_lines_and_count_rows(tmp_path, monkeypatch, final_newline) -> None:
    """Lines longer than a read block, a byte order mark, no final newline: every line ends up
    whole in exactly one task, numbered right, at most chunk_rows lines a task.  (extract's
    reader; strip's and clean's: tests/cli/test_jsonl_slices.py)"""
    monkeypatch.setattr(_inputs, "CHUNK_BYTES", 7)
    lines = [json.dumps({"t": "x" * (i * 5 % 23)}).encode() for i in range(40)]
    data = b"\n".join(lines) + (b"\n" if final_newline else b"")
    path = tmp_path / "blocks.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + data)
    job = Job("extract", "jsonl", "jsonl", ("cite",), ("t",))
    tasks = list(Inputs(job, [str(path)], 3, print))
    assert all(isinstance(task.payload, FileSlice) for task in tasks)  # read by workers
    payloads = [task.payload.read() for task in tasks]
    assert b"".join(payloads) == data
    expected_first = 0
    for task, payload in zip(tasks, payloads, strict=True):
        assert task.first_row == expected_first
        count = len(payload.split(b"\n")) - payload.endswith(b"\n")
        assert 1 <= count <= 3
        expected_first += count
    assert expected_first == 40
    results = [process(job, task) for task in tasks]
    rows = [json.loads(line)["row"] for result in results for line in result.output.splitlines()]
    assert rows == list(range(40))


def test_workers_are_fed_a_bounded_window(tmp_path: Path) -> None:
    """Memory stays bounded: tasks are read at most 2 * jobs ahead of the results."""
    job = Job("stats", "text", "stats", ("cite",))
    pulled = 0

    def tasks():
        nonlocal pulled
        for i in range(40):
            pulled += 1
            yield Task(f"t{i}", 0, f"x {S}cite{D}a{E}", 10)

    seen = 0
    for result in ordered_results(job, tasks(), jobs=2, threads=True):
        seen += 1
        assert result.stats is not None
        assert result.stats.citations == 1
        assert pulled - seen <= 2 * 2
    assert seen == 40


@pytest.mark.parametrize("stop_early", [False, True])
def test_a_worker_pool_is_gone_when_its_results_end(stop_early: bool) -> None:
    """A process pool's threads (its manager, its task queue's feeder) have ended by the
    time its results end, so the pool's queues and their semaphores are released then: left
    to a later collection, on a free-threaded build they could be released inside the
    multiprocessing resource tracker while the next run's pool registered its own, which it
    refuses."""
    job = Job("stats", "text", "stats", ("cite",))
    tasks = (Task(f"t{i}", 0, f"x {S}cite{D}a{E}", 10) for i in range(12))
    before = set(threading.enumerate())
    results = ordered_results(job, tasks, jobs=2, threads=False)
    with closing(results):
        for seen, result in enumerate(results, 1):
            assert result.stats is not None
            if stop_early and seen == 3:
                break
    assert [thread for thread in threading.enumerate() if thread not in before] == []


def test_a_result_cut_off_by_a_killed_worker_does_not_hold_the_exit() -> None:
    """A worker killed (Ctrl-C, SIGTERM, a write error) part-way through sending a result
    left the pool's manager thread reading the rest of that message for ever, and the
    interpreter's exit joins that thread: the run hung after "interrupted".  The cut message
    is written by hand here: its length, then nothing."""
    import struct
    from concurrent.futures import ProcessPoolExecutor

    from citemark._cli.workers import _pool, _stop

    pool = _pool(2, threads=False)
    assert isinstance(pool, ProcessPoolExecutor)
    assert pool.submit(len, "abc").result(timeout=120) == 3  # the manager thread runs
    manager = pool._executor_manager_thread  # type: ignore[attr-defined]
    writer = pool._result_queue._writer  # type: ignore[attr-defined]
    os.write(writer.fileno(), struct.pack("!i", 1 << 16))  # a length, and no message
    _stop(pool)
    manager.join(10)
    if manager.is_alive():  # the regression: give it a message, so that this test ends
        os.write(writer.fileno(), bytes(1 << 16))
        manager.join()
        raise AssertionError("the manager thread still waited for the cut message")


def test_a_run_that_stops_early_closes_its_input(tmp_path: Path, monkeypatch) -> None:
    """The line that stops a run ends the reading of its file there, not whenever the
    collector finds the reading generator."""
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"t": "fine"}\nnot json\n' + b'{"t": "fine"}\n' * 50)
    opened: list[Any] = []
    real_open = open

    def recording_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        handle = real_open(file, *args, **kwargs)
        if str(file) == str(path):
            opened.append(handle)
        return handle

    monkeypatch.setattr(_inputs, "open", recording_open, raising=False)
    gc.disable()  # (what the collector would close must already be closed)
    try:
        code = cli.main(["strip", str(path), "--field", "t", "-q", "-o", str(tmp_path / "o")])
        assert code != 0
        assert opened
        assert all(handle.closed for handle in opened)
    finally:
        gc.enable()


# --- clean: a text -> text command from the table, on citemark.clean -----------------------


CLEAN_TEXTS = [f"Fine {S}cite{D}turn0search1{E}.", f"odd {S}cite{D}not an id{E} end", "plain"]


@pytest.mark.parametrize("lenient", [False, True])
def test_clean_text_and_jsonl(tmp_path: Path, lenient: bool) -> None:
    texts = CLEAN_TEXTS
    flag = ["--lenient"] if lenient else []
    (tmp_path / "a.txt").write_text(texts[1], encoding="utf-8")
    result = citemark("clean", "a.txt", *flag, cwd=tmp_path)
    assert result.returncode == 0, result.err
    assert result.stdout.decode() == clean(texts[1], lenient=lenient)
    log = tmp_path / "log.jsonl"
    log.write_bytes(
        b"\n".join(b'{"n": 1.50, "r": {"t": ' + json.dumps(t).encode() + b"}}" for t in texts)
        + b"\n\n"
        + b'{"r": {"t": null}}'
    )
    out = citemark("clean", str(log), "--field", "r.t", *flag)
    assert out.returncode == 0, out.err
    lines = out.stdout.split(b"\n")
    assert [json.loads(line)["r"]["t"] for line in lines[:3]] == [
        clean(t, lenient=lenient) for t in texts
    ]
    assert all(line.startswith(b'{"n": 1.50, ') for line in lines[:3])  # bytes kept
    assert lines[3:] == [b"", b'{"r": {"t": null}}']  # the last line's ending kept
    assert "1 blank line(s) copied (not rows)" in out.err


@pytest.mark.needs("pyarrow")
@pytest.mark.parametrize("lenient", [False, True])
def test_clean_parquet(tmp_path: Path, lenient: bool) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = CLEAN_TEXTS
    flag = ["--lenient"] if lenient else []
    table = tmp_path / "log.parquet"
    pq.write_table(pa.table({"t": [*texts, None]}), table)
    cleaned = tmp_path / "clean.parquet"
    done = citemark("clean", str(table), "--column", "t", "-o", str(cleaned), *flag)
    assert done.returncode == 0, done.err
    assert pq.read_table(cleaned).column("t").to_pylist() == [
        *(clean(t, lenient=lenient) for t in texts),
        None,
    ]


def test_clean_reports_bad_rows_as_strip_does(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(b'{"t": "a"}\n{bad\n{"t": "b"}\n')
    stopped = citemark("clean", str(log), "--field", "t")
    assert stopped.returncode == 2
    assert f"{log}:2: invalid JSON" in stopped.err
    assert stopped.stdout == b'{"t": "a"}\n'
    skipped = citemark("clean", str(log), "--field", "t", "--skip-bad")
    assert skipped.returncode == 1
    assert skipped.stdout.count(b"\n") == 2


@pytest.mark.parametrize("with_rich", [True, False])
def test_reports_never_share_a_line_with_the_progress_bar(
    monkeypatch, capsys, with_rich: bool
) -> None:
    """A skipped row's report while the bar is drawn: above rich's bar, or after the plain
    line is wiped (it was glued to the bar's end on a terminal)."""
    import io

    from citemark._cli.progress import Progress

    if not with_rich:
        monkeypatch.setitem(sys.modules, "rich.progress", None)
    stream = io.StringIO()
    with Progress(2_000_000, enabled=True, stream=stream) as progress:
        progress.advance(10, 1_000_000)
        progress.say("citemark: skipped a.jsonl:3: not JSON")
        progress.advance(10, 1_000_000)
    shown = stream.getvalue() + capsys.readouterr().err
    (line,) = [line for line in re.split(r"[\r\n]", shown) if "skipped" in line]
    assert line.replace("\x1b[K", "") == "citemark: skipped a.jsonl:3: not JSON"


def test_the_command_line_starts_without_the_pools() -> None:
    """concurrent.futures loads only where a run makes a pool: the command's module and a
    one-job run never import it (its import is a good part of the command's start)."""
    code = (
        "import sys, citemark.cli\n"
        "assert 'concurrent.futures' not in sys.modules\n"
        "citemark.cli.main(['strip', sys.argv[1], '-j', '1', '-q'])\n"
        "assert 'concurrent.futures' not in sys.modules\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, __file__], capture_output=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr.decode()
