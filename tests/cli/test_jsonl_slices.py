"""strip and clean over a regular JSONL file: the reader only finds where each task's lines
end (`Inputs._slices`), the worker reads, counts and cuts them, and `run` numbers their rows.
The output and every reported line number must be those of a run that reads the file as one
task, whatever the slice size, the number of lines a piece may hold, and the workers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citemark import cli
from citemark._cli import inputs as _inputs
from citemark._cli.commands import Job
from citemark._cli.common import InputChanged
from citemark._cli.inputs import Inputs
from citemark._cli.work import FileSlice

S, D, E = "\ue200", "\ue202", "\ue201"
FIELD = "response.output_text"


def line(i: int) -> bytes:
    text = f"row {i} {'é' * (i % 4)}{S}cite{D}turn0search{i % 3}{E} and {'x' * (i * 7 % 41)}"
    return json.dumps({"id": i, "response": {"output_text": text}}).encode("utf-8")


def log(final_newline: bool, bad: bool) -> bytes:
    """Good lines of many lengths, blank lines, and (with `bad`) a bad line of each kind."""
    lines = [line(i) for i in range(60)]
    lines[7] = lines[31] = b""  # blank
    lines[8] = b"   "  # blank too
    if bad:
        lines[3] = b"not json"
        lines[19] = b'{"response": {"output_text": 3}}'
        lines[20] = b'{"response": {"output_text": "\xff"}}'  # not UTF-8
        lines[44] = b'{"response": {}}'
        lines[59] = b"{"  # the last line, without a newline below
    return b"\n".join(lines) + (b"\n" if final_newline else b"")


def run(tmp_path: Path, capsys, data: bytes, *args: str) -> tuple[int, bytes, list[str]]:
    source = tmp_path / "log.jsonl"
    source.write_bytes(data)
    out = tmp_path / "out.jsonl"
    out.unlink(missing_ok=True)
    code = cli.main([args[0], str(source), "--field", FIELD, "-q", "-o", str(out), *args[1:]])
    reported = [text for text in capsys.readouterr().err.splitlines() if str(source) in text]
    return code, out.read_bytes() if out.exists() else b"", reported


@pytest.mark.parametrize("final_newline", [True, False])
@pytest.mark.parametrize("slice_bytes", [1, 7, 100, 1000])
@pytest.mark.parametrize("window", [3, 64 << 10])  # lines longer than the window read at an end
def test_slices_hold_whole_lines_and_read_the_file_once(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    final_newline: bool,
    slice_bytes: int,
    window: int,
) -> None:
    monkeypatch.setattr(_inputs, "SLICE_BYTES", slice_bytes)
    monkeypatch.setattr(_inputs, "_WINDOW", window)
    data = log(final_newline, bad=True)
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + data)  # a byte order mark: not a row's
    for command in ("strip", "clean"):
        job = Job(command, "jsonl", "jsonl", ("cite",), tuple(FIELD.split(".")))
        tasks = list(Inputs(job, [str(path)], 5, print))
        assert [task.first_row for task in tasks] == [0] + [None] * (len(tasks) - 1)
        assert all(isinstance(task.payload, FileSlice) for task in tasks)
        assert all(task.payload.most == 5 for task in tasks)
        payloads = [task.payload.read() for task in tasks]
        assert b"".join(payloads) == data
        assert all(payload.endswith(b"\n") for payload in payloads[:-1])  # whole lines
        assert all(len(payload) >= min(slice_bytes, len(payload)) for payload in payloads)
        if slice_bytes == 1:  # every line a task of its own
            assert len(tasks) == data.count(b"\n") + (not final_newline)


def test_an_empty_file_has_no_task(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    job = Job("strip", "jsonl", "jsonl", ("cite",), ("t",))
    assert list(Inputs(job, [str(path)], 5, print)) == []


@pytest.mark.parametrize("final_newline", [True, False])
@pytest.mark.parametrize(
    "command", [["strip"], ["clean"], ["clean", "--lenient"]], ids=["strip", "clean", "lenient"]
)
def test_rows_are_numbered_as_in_one_task(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch, final_newline: bool, command
) -> None:
    """Skipped lines and the line that stops a run are named by their line in the file, and
    the output is the same, with tasks of one line, of a few lines cut in pieces of at most
    3 lines by the worker, or the whole file; with one worker or two."""
    data = log(final_newline, bad=True)
    for skip in (["--skip-bad"], []):
        reference = run(tmp_path, capsys, data, *command, *skip, "-j", "1")
        named = [text.split(":")[2] for text in reference[2]]
        assert named == (["4", "20", "21", "45", "60"] if skip else ["4"])
        for slice_bytes in (1, 150, 700):
            monkeypatch.setattr(_inputs, "SLICE_BYTES", slice_bytes)
            for jobs in ("1", "2"):
                got = run(tmp_path, capsys, data, *command, *skip, "-j", jobs, "--chunk-rows", "3")
                assert got == reference, (slice_bytes, jobs, skip)
        monkeypatch.undo()


@pytest.mark.parametrize("final_newline", [True, False])
def test_a_good_log_is_copied_but_its_markers(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch, final_newline: bool
) -> None:
    data = log(final_newline, bad=False)
    code, whole, reported = run(tmp_path, capsys, data, "strip")
    assert (code, reported) == (0, [])
    assert whole.endswith(b"\n") == final_newline  # the last line's ending kept
    assert whole.count(b"\n") == data.count(b"\n")  # blank lines kept
    monkeypatch.setattr(_inputs, "SLICE_BYTES", 64)
    assert run(tmp_path, capsys, data, "strip", "-j", "2") == (code, whole, reported)


@pytest.mark.parametrize("command", ["strip", "extract"])
@pytest.mark.parametrize("change", ["replaced", "emptied", "cut"])
def test_a_log_replaced_or_shrunk_while_it_is_read_stops_the_run_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, change: str
) -> None:
    """The workers read their slices by the file's name: a log replaced under that name
    (`mv`, `sed -i`, a rotation) or emptied in place (`copytruncate`) while the run reads it
    is an InputChanged naming it, from the reader or the worker, never rows of two files or
    an early end taken for the file's (both ended with exit 0 and rows missing or mixed)."""
    monkeypatch.setattr(_inputs, "SLICE_BYTES", 150)
    monkeypatch.setattr(_inputs, "CHUNK_BYTES", 150)
    data = log(True, bad=False)
    path = tmp_path / "log.jsonl"
    path.write_bytes(data)
    job = Job(command, "jsonl", "jsonl", ("cite",), tuple(FIELD.split(".")))
    tasks = iter(Inputs(job, [str(path)], 1, print))
    first = next(tasks)
    if change == "replaced":
        (tmp_path / "new.jsonl").write_bytes(data.replace(b"a", b"b"))
        (tmp_path / "new.jsonl").replace(path)
    else:
        with path.open("r+b") as handle:
            handle.truncate(0 if change == "emptied" else len(data) // 2)
    said = "was replaced" if change == "replaced" else "shrank"
    if isinstance(first.payload, FileSlice):
        with pytest.raises(InputChanged, match=rf"log\.jsonl: it {said} while"):
            first.payload.read()
    if change != "replaced":  # (the reader reads the file it opened: only the workers see it)
        with pytest.raises(InputChanged, match=r"log\.jsonl: it shrank while"):
            list(tasks)
