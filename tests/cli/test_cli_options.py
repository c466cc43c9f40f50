"""Command-line options and conventions: lint over Parquet, clean's families, how a pure
install and a closed pipe show themselves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from citemark import cli

ROOT = Path(__file__).resolve().parents[2]
FLAWED = (ROOT / "examples" / "flawed_answer.txt").read_text(encoding="utf-8")
GOOD = "Panels last long. \ue200cite\ue202turn0search0\ue201"


def run(*args: str, stdin: bytes | None = None, **env: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "citemark", *args],
        input=stdin,
        capture_output=True,
        env={**os.environ, **env},
        timeout=120,
        check=False,
    )


def parquet(path: Path, answers: list[str | None], sources: list[str | None] | None = None) -> Path:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    columns = {"answer": pa.array(answers, pa.string())}
    if sources is not None:
        columns["sources"] = pa.array(sources, pa.string())
    pq.write_table(pa.table(columns), path)
    return path


def test_lint_reads_a_parquet_column_row_by_row(tmp_path: Path) -> None:
    log = parquet(tmp_path / "log.parquet", [GOOD, None, FLAWED])
    result = run("lint", str(log), "--column", "answer", "--json")
    document = json.loads(result.stdout)
    assert result.returncode == 1, result.stderr
    assert document["summary"]["answers"] == 2
    assert document["not_answers"]["null"] == 1
    assert {row["row_line"] for row in document["diagnostics"]} == {"row 2"}


def test_lint_reads_parquet_sources_per_row_and_from_standard_input(tmp_path: Path) -> None:
    sources = json.dumps({"turn0search0": {"title": "A", "text": "Panels last long."}})
    log = parquet(tmp_path / "log.parquet", [GOOD], [sources])
    piped = run("lint", "-", "--column", "answer", "--sources-column", "sources",
                stdin=log.read_bytes())  # fmt: skip
    assert piped.returncode == 0, piped.stdout + piped.stderr
    assert b"1 answer, 1 citation: 0 errors" in piped.stdout


def test_lint_names_a_missing_parquet_column(tmp_path: Path) -> None:
    log = parquet(tmp_path / "log.parquet", [GOOD])
    result = run("lint", str(log), "--column", "nope")
    assert result.returncode == 2
    assert b"nope" in result.stderr
    assert b"Traceback" not in result.stderr


def test_lint_sources_column_needs_column(tmp_path: Path) -> None:
    result = run("lint", "x.txt", "--sources-column", "s")
    assert result.returncode == 2
    assert b"--sources-column reads Parquet rows" in result.stderr


def test_clean_refuses_family_which_it_would_ignore() -> None:
    result = run("clean", "--family", "foo", stdin=b"a b\n")
    assert result.returncode == 2
    assert b"clean removes the markers of every family" in result.stderr
    assert b"--family" not in run("clean", "--help").stdout


@pytest.mark.parametrize("requested", [None, "python"])
def test_a_pure_install_says_so_in_its_version(
    requested: str | None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The warning is for kernels that are not built, not for a pure twin that
    CITEMARK_IMPLEMENTATION asked for."""
    from citemark._kernels import loader

    monkeypatch.setattr(cli, "IMPLEMENTATION", "python")
    monkeypatch.setattr(loader, "REQUESTED", requested)
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    warned = [cli.PURE_WARNING] if requested is None else []
    assert capsys.readouterr().out.splitlines() == ["citemark 0.1.0 (python)", *warned]


def test_row_commands_read_parquet_from_standard_input(tmp_path: Path) -> None:
    log = parquet(tmp_path / "log.parquet", [GOOD, None])
    piped = run("strip", "-", "--column", "answer", "--format", "jsonl", stdin=log.read_bytes())
    assert piped.returncode == 0, piped.stderr
    rows = [json.loads(line) for line in piped.stdout.splitlines()]
    assert rows == [{"answer": "Panels last long. "}, {"answer": None}]


def test_what_follows_a_double_dash_is_files(tmp_path: Path, monkeypatch, capsys) -> None:
    """`--` ends the options, as in every command line tool: a file whose name starts with
    a dash can be named after it, options may still come before it (it was refused:
    parse_intermixed_args mishandles `--`)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "-dash.txt").write_text("x " + GOOD[-19:] + "\n", encoding="utf-8")
    (tmp_path / "a.txt").write_text("a\n", encoding="utf-8")
    assert cli.main(["strip", "--", "-dash.txt"]) == 0
    assert capsys.readouterr().out == "x \n"
    assert cli.main(["strip", "a.txt", "-q", "--", "-dash.txt"]) == 0
    assert capsys.readouterr().out == "a\nx \n"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["-j", "abc"], "argument -j/--jobs: a whole number is needed, not 'abc'"),
        (["-j", "0"], "argument -j/--jobs: must be at least 1, not 0"),
        (["-o", "no/such/folder/out.jsonl"], "cannot write no/such/folder/out.jsonl: there is"),
    ],
)
def test_bad_options_are_named_before_any_row_is_read(
    tmp_path: Path, monkeypatch, capsys, args: list[str], said: str
) -> None:
    """`-j abc` said "invalid _positive value"; an output in a folder that does not exist
    was found by `stats` only once the whole log was read."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "log.jsonl").write_text('{"t": "x"}\n', encoding="utf-8")
    with pytest.raises(SystemExit) as stopped:
        cli.main(["stats", "log.jsonl", "--field", "t", *args])
    assert stopped.value.code == 2
    assert said in capsys.readouterr().err


def test_strip_to_parquet_from_standard_input_is_a_named_refusal(tmp_path: Path) -> None:
    """A Parquet output needs its schema before the rows, and standard input reads once: the
    refusal says what to do (it was "Failed to open local file '-'")."""
    log = parquet(tmp_path / "log.parquet", [GOOD])
    result = run("strip", "--column", "answer", "-o", str(tmp_path / "o.parquet"),
                 stdin=log.read_bytes())  # fmt: skip
    assert result.returncode == 2
    assert b"writes Parquet from a named file, not standard input" in result.stderr
    assert not (tmp_path / "o.parquet").exists()
    as_jsonl = run("strip", "--column", "answer", "--format", "jsonl", stdin=log.read_bytes())
    assert as_jsonl.returncode == 0, as_jsonl.stderr
    assert json.loads(as_jsonl.stdout) == {"answer": "Panels last long. "}
