"""The `citemark` command when things go wrong (Ctrl-C, a closed pipe, a full disk, deep or
huge lines, bad Parquet), in a subprocess as a user runs it: it never loses a row and never
hangs."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

S, D, E = "\ue200", "\ue202", "\ue201"
MARK = f"{S}cite{D}turn0search1{E}"


def citemark(*args: str, stdin: bytes = b"", **options: Any) -> Any:
    result = subprocess.run(
        [sys.executable, "-m", "citemark", *args],
        input=stdin,
        capture_output="stdout" not in options,
        check=False,
        timeout=300,
        **options,
    )
    result.err = (result.stderr or b"").decode("utf-8", "replace")
    return result


def row(i: int, text: str | None = None) -> bytes:
    value = f"row {i} {MARK} end" if text is None else text
    return json.dumps({"id": i, "r": {"t": value}}, ensure_ascii=False).encode("utf-8")


def stripped(i: int) -> bytes:
    return row(i, f"row {i}  end")


# --- Ctrl-C -------------------------------------------------------------------------------


def stop_midway(
    tmp_path: Path,
    args: list[str],
    stop: int,
    *,
    group: bool,
    out: Path | None = None,
    written: Callable[[], bool] | None = None,
) -> tuple[int, str, bytes, float, int]:
    """Run `citemark ARGS -o OUT` in its own process group (as a shell job), feed it rows
    until it has written some (`written()`: OUT is not empty), then send `stop` to the group
    or to the main process alone: (exit code, stderr, the output (b"" if none), seconds from
    the signal to the exit, the group's id)."""
    out = out or tmp_path / "out.jsonl"
    if written is None:
        written = lambda: out.exists() and out.stat().st_size > 0  # noqa: E731
    process = subprocess.Popen(
        [sys.executable, "-m", "citemark", *args, "-q", "--chunk-rows", "500", "-o", str(out)],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stdin is not None
    assert process.stderr is not None
    sent = 0
    began = time.monotonic()
    while not written() and time.monotonic() - began < 120:
        block = b"\n".join(row(i) for i in range(sent, sent + 2000)) + b"\n"
        process.stdin.write(block)
        process.stdin.flush()
        sent += 2000
    assert written(), "no output before the signal"
    if group:
        os.killpg(process.pid, stop)
    else:
        os.kill(process.pid, stop)
    stopped = time.monotonic()
    try:
        # (stderr's end too: a worker left behind would hold it open)
        _, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the group: workers left behind included
        _, err = process.communicate()
        raise AssertionError(f"no end 30 s after the signal; stderr: {err.decode()}") from None
    elapsed = time.monotonic() - stopped
    code = process.returncode
    data = out.read_bytes() if out.exists() else b""
    return code, err.decode(), data, elapsed, process.pid


def live_processes_of_group(group: int) -> list[int]:
    """The processes of process group `group` that are not zombies (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, _parent, pgrp = stat.rsplit(")", 1)[1].split()[:3]
        if int(pgrp) == group and state != "Z":
            found.append(int(entry.name))
    return found


def test_ctrl_c_during_two_jobs_exits_130_with_whole_lines(tmp_path: Path) -> None:
    """SIGINT to the whole process group (as a terminal sends it) while workers are busy and
    more input is pending: exit 130 within seconds, a prefix of whole output lines, and no
    traceback from any process."""
    args = ["strip", "--field", "r.t", "-j", "2"]
    code, err, data, elapsed, _ = stop_midway(tmp_path, args, signal.SIGINT, group=True)
    assert code == 130, err
    assert elapsed < 15  # "a couple of seconds"; generous for a loaded test machine
    assert "Traceback" not in err
    assert "interrupted" in err
    assert data.endswith(b"\n")
    lines = data.split(b"\n")[:-1]
    assert lines == [stripped(i) for i in range(len(lines))]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes in /proc")
@pytest.mark.parametrize("group", [False, True], ids=["main-process", "process-group"])
def test_sigterm_stops_worker_processes_with_143_and_whole_lines(
    tmp_path: Path, group: bool
) -> None:
    """SIGTERM (`kill`, `timeout`, a service manager) to the main process alone, or to the
    whole group, while worker processes (clean --lenient) are busy: it is taken as Ctrl-C is,
    exit 143, whole lines, and no worker is left behind (they ignore it: the main process
    stops them)."""
    args = ["clean", "--lenient", "--field", "r.t", "-j", "2"]
    code, err, data, elapsed, pid = stop_midway(tmp_path, args, signal.SIGTERM, group=group)
    assert code == 143, err
    assert elapsed < 15
    assert "Traceback" not in err
    assert "terminated" in err
    assert data.endswith(b"\n")
    lines = data.split(b"\n")[:-1]
    assert lines == [row(i, f"row {i} end") for i in range(len(lines))]
    # The workers' parent (a forkserver) ends with the main process, a moment after it.
    deadline = time.monotonic() + 10
    left = [0]
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = live_processes_of_group(pid)
    assert not left, f"processes left behind: {left}"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes in /proc")
def test_kill_9_of_the_main_process_leaves_no_process_behind(tmp_path: Path) -> None:
    """SIGKILL to the main process alone while worker processes (clean --lenient) are busy
    and more input is pending: nothing can stop them but themselves, and every process of the
    run (the forkserver, the workers, the resource tracker) ends within seconds. (They used to
    wait for each other for ever: the forkserver for its pipe from the main process, which
    the workers hold copies of, and the workers for the forkserver to end.)"""
    args = ["clean", "--lenient", "--field", "r.t", "-j", "2"]
    # (stop_midway waits for standard error's end, which every process of the run holds)
    code, _, _, elapsed, pid = stop_midway(tmp_path, args, signal.SIGKILL, group=False)
    assert code == -signal.SIGKILL
    deadline = time.monotonic() + 10
    left = live_processes_of_group(pid)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = live_processes_of_group(pid)
    if left:
        os.killpg(pid, signal.SIGKILL)
    assert not left, f"processes left behind: {left}"
    assert elapsed < 10


@pytest.mark.needs("pyarrow")
def test_an_interrupted_parquet_output_is_never_a_whole_looking_file(tmp_path: Path) -> None:
    """Ctrl-C while Parquet is written: exit 130, and no Parquet file at the output's name
    (a file already there is left as it was), where the footer written on the way out used
    to make a prefix of the rows a valid file; nor one from a run stopped at a bad row. The
    rows go to a temporary file beside the output, renamed to it when the run is whole."""
    import pyarrow.parquet as pq

    out = tmp_path / "out.parquet"
    out.write_bytes(b"an earlier output")

    def partial() -> list[Path]:
        return list(tmp_path.glob(".out.parquet.*"))

    def written() -> bool:  # (at the output's name itself, before the fix)
        with out.open("rb") as file:
            rewritten = file.read(4) == b"PAR1"
        return rewritten or any(path.stat().st_size > 0 for path in partial())

    args = ["extract", "--field", "r.t", "-j", "2"]
    code, err, data, _, _ = stop_midway(
        tmp_path, args, signal.SIGINT, group=True, out=out, written=written
    )
    assert code == 130, err
    assert "Traceback" not in err
    assert data == b"an earlier output"
    assert not partial()
    # a run stopped by a bad row: no file either
    stopped = citemark("extract", "-", "--field", "r.t", "-o", str(out), stdin=row(0) + b"\n{\n")
    assert stopped.returncode == 2, stopped.err
    assert out.read_bytes() == b"an earlier output"
    assert not partial()
    # a whole run replaces it
    rows = b"".join(row(i) + b"\n" for i in range(3))
    whole = citemark("extract", "-", "--field", "r.t", "-o", str(out), "-j", "2", stdin=rows)
    assert whole.returncode == 0, whole.err
    assert pq.read_table(out).column("row").to_pylist() == [0, 1, 2]
    assert not partial()


# --- depth, surrogates, blank lines, line endings ------------------------------------------


def test_nesting_100000_deep_is_a_bad_row_and_the_others_are_kept(tmp_path: Path) -> None:
    deep_bad = b"[" * 100_000
    deep_good = (
        b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b', "r": {"t": "ok ' + MARK.encode() + b'"}}'
    )
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b"\n".join([row(0), deep_bad, row(2), deep_good, row(4)]) + b"\n")
    for jobs in ("1", "2"):
        result = citemark("strip", str(path), "--field", "r.t", "--skip-bad", "-j", jobs,
                          "--chunk-rows", "2")  # fmt: skip
        assert result.returncode == 1, result.err
        assert f"skipped {path}:2: invalid JSON" in result.err
        lines = result.stdout.split(b"\n")
        assert lines[:2] == [stripped(0), stripped(2)]
        assert lines[2].endswith(b'"r": {"t": "ok "}}')
        assert lines[3:] == [stripped(4), b""]
        stopped = citemark("extract", str(path), "--field", "r.t", "-j", jobs)
        assert stopped.returncode == 2
        assert f"{path}:2: invalid JSON" in stopped.err
        assert [json.loads(line)["row"] for line in stopped.stdout.splitlines()] == [0]


def test_blank_lines_are_skipped_and_counted_by_every_command(tmp_path: Path) -> None:
    path = tmp_path / "blank.jsonl"
    path.write_bytes(row(0) + b"\n\n  \r\n" + row(3) + b"\n")
    strip = citemark("strip", str(path), "--field", "r.t")
    assert strip.returncode == 0, strip.err
    assert strip.stdout == stripped(0) + b"\n\n  \r\n" + stripped(3) + b"\n"  # copied
    assert "2 blank line(s) copied" in strip.err
    extract = citemark("extract", str(path), "--field", "r.t")
    assert extract.returncode == 0, extract.err
    assert [json.loads(line)["row"] for line in extract.stdout.splitlines()] == [0, 3]
    assert "2 blank line(s) skipped" in extract.err
    stats = citemark("stats", str(path), "--field", "r.t", "--json")
    assert stats.returncode == 0, stats.err
    counts = json.loads(stats.stdout)
    assert (counts["rows"], counts["blank_lines"], counts["citations"]) == (2, 2, 2)
    lint = citemark("lint", str(path), "--field", "r.t", "--json")
    assert lint.returncode == 0, lint.err
    report = json.loads(lint.stdout)
    assert report["summary"]["answers"] == 2
    assert report["not_answers"] == {"null": 0, "blank_lines": 2}


@pytest.mark.parametrize("ending", [b"", b"\n", b"\r\n"])
def test_the_last_line_ending_is_kept(tmp_path: Path, ending: bytes) -> None:
    path = tmp_path / "end.jsonl"
    path.write_bytes(row(0) + b"\n" + row(1) + ending)
    result = citemark("strip", str(path), "--field", "r.t")
    assert result.returncode == 0, result.err
    assert result.stdout == stripped(0) + b"\n" + stripped(1) + ending


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_file_without_its_last_line_feed_does_not_run_into_the_next(
    tmp_path: Path, jobs: str
) -> None:
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_bytes(row(0) + b"\n" + row(1))
    second.write_bytes(row(2) + b"\n" + row(3))
    result = citemark("strip", str(first), str(second), "--field", "r.t", "-j", jobs)
    assert result.returncode == 0, result.err
    # The line feed the first file lacked goes between the two; the last file's stays absent.
    assert result.stdout == b"\n".join(stripped(i) for i in range(4))


def test_a_lone_surrogate_result_keeps_every_other_byte(tmp_path: Path) -> None:
    line = b'{"n": 1.50, "r": {"t": "\\ud800 x\xc3\xa9 ' + MARK.encode() + b'"}, "n": 2}'
    path = tmp_path / "lone.jsonl"
    path.write_bytes(line + b"\n")
    result = citemark("strip", str(path), "--field", "r.t")
    assert result.returncode == 0, result.err
    assert result.stdout == b'{"n": 1.50, "r": {"t": "\\ud800 x\\u00e9 "}, "n": 2}\n'


def test_an_empty_field_path_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(row(0) + b"\n")
    for command in ("strip", "extract", "stats", "lint"):
        result = citemark(command, str(path), "--field", "")
        assert result.returncode == 2, command
        assert "not a dotted field path" in result.err


def test_a_null_answer_is_a_row_without_text_in_every_command(tmp_path: Path) -> None:
    path = tmp_path / "null.jsonl"
    path.write_bytes(row(0) + b"\n" + b'{"id": 1, "r": {"t": null}}\n')
    assert citemark("strip", str(path), "--field", "r.t").returncode == 0
    extract = citemark("extract", str(path), "--field", "r.t")
    assert [json.loads(line)["citations"] for line in extract.stdout.splitlines()][1] is None
    stats = json.loads(citemark("stats", str(path), "--field", "r.t", "--json").stdout)
    assert stats["null_rows"] == 1
    lint = citemark("lint", str(path), "--field", "r.t", "--json")
    assert lint.returncode == 0, lint.err
    assert json.loads(lint.stdout)["not_answers"]["null"] == 1


def test_with_standard_error_closed_reports_stay_out_of_the_results(tmp_path: Path) -> None:
    """`2>&-`: Python's print(file=None) writes to standard output; the skipped rows' reports
    must not land among the rows."""
    path = tmp_path / "x.jsonl"
    path.write_bytes(row(0) + b"\nnot json\n" + row(2) + b"\n")
    result = subprocess.run(
        [sys.executable, "-m", "citemark", "strip", str(path), "--field", "r.t", "--skip-bad"],
        stdout=subprocess.PIPE,
        preexec_fn=lambda: os.close(2),  # (the child's own descriptor)
        check=False,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stdout == stripped(0) + b"\n" + stripped(2) + b"\n"


def test_a_worker_killed_outright_or_a_shrunk_input_stop_the_run_named() -> None:
    """A worker process that dies (the OOM killer, `kill -9`) and a file another program
    truncated while it was read end the run with exit 2 and a line that says so, not a
    traceback and the exit code of success with skipped rows."""
    from concurrent.futures.process import BrokenProcessPool

    from citemark._cli.common import InputChanged, guarded
    from citemark._cli.work import FileSlice

    said: list[str] = []

    def broken() -> None:
        raise BrokenProcessPool("A process in the process pool was terminated abruptly")

    assert guarded(broken, "out.jsonl", said.append) == (None, 2)
    assert said == [
        "citemark: a worker process died (killed by a signal or out of memory); stopped"
    ]
    with pytest.raises(InputChanged) as raised:
        FileSlice(__file__, 0, Path(__file__).stat().st_size + 1).read()
    said.clear()

    def shrunk() -> None:
        raise raised.value

    assert guarded(shrunk, "out.jsonl", said.append) == (None, 2)
    assert said == [f"citemark: cannot read {__file__}: it shrank while it was being read"]


# --- write errors ---------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["strip", "extract", "stats", "lint"])
def test_a_full_disk_is_exit_2_named_without_a_traceback(tmp_path: Path, command: str) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"\n".join(row(i) for i in range(50)) + b"\n")
    with open("/dev/full", "wb") as full:
        result = citemark(command, str(path), "--field", "r.t", stdout=full, stderr=subprocess.PIPE)
    err = result.stderr.decode()
    assert result.returncode == 2, err
    assert "cannot write" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("lines", [1, 20_000])
def test_a_disk_that_fills_during_a_write_is_exit_2(tmp_path: Path, lines: int) -> None:
    """A large block written to a file that fills part-way (here a file size limit, as a full
    disk does it): the buffered standard output takes the part that fit and returns its size
    without raising, so a write that did not check that size ended with 0 and a cut file."""
    import resource

    path = tmp_path / "x.jsonl"
    if lines == 1:
        path.write_text("x" * 3_000_000 + "\n")  # one huge line of a text file
        args = ["strip", str(path)]
    else:
        path.write_bytes(b"\n".join(row(i) for i in range(lines)) + b"\n")
        args = ["clean", str(path), "--field", "r.t", "-q"]

    def limit() -> None:  # CPython ignores SIGXFSZ: the write past the limit is cut short
        resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))

    with open(tmp_path / "out", "wb") as out:
        result = citemark(*args, stdout=out, stderr=subprocess.PIPE, preexec_fn=limit)
    err = result.stderr.decode()
    assert result.returncode == 2, err
    assert "cannot write standard output" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", ["strip", "extract", "stats", "lint"])
def test_a_closed_pipe_ends_quietly_with_141(tmp_path: Path, command: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"\n".join(row(i) for i in range(3000)) + b"\n")
    reader, writer = os.pipe()
    os.close(reader)  # the reader went away (| head)
    try:
        result = citemark(command, str(path), "--field", "r.t", stdout=writer,
                          stderr=subprocess.PIPE)  # fmt: skip
    finally:
        os.close(writer)
    err = result.stderr.decode()
    assert result.returncode == 141, err  # never success: `lint` found things here too
    assert err == ""


@pytest.mark.parametrize("command", ["strip", "clean", "extract"])
def test_a_run_that_stops_at_its_first_row_leaves_the_output_as_it_was(
    tmp_path: Path, command: str
) -> None:
    """No row was written: an output file already there keeps its bytes (the first write,
    empty, opened it for writing and emptied it), and none is made where there was none."""
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"not json\n" + row(1) + b"\n")
    kept = tmp_path / "out.jsonl"
    kept.write_bytes(b"what was there\n")
    made = tmp_path / "new.jsonl"
    for target in (kept, made):
        result = citemark(command, str(path), "--field", "r.t", "-q", "-o", str(target))
        assert result.returncode == 2, result.stderr
        assert b":1: invalid JSON" in result.stderr
    assert kept.read_bytes() == b"what was there\n"
    assert not made.exists()


# --- memory ---------------------------------------------------------------------------------


def citemark_implementation() -> str:
    from citemark import IMPLEMENTATION

    return IMPLEMENTATION


def peak_kib(*args: str) -> int:
    """The largest resident set (KiB) of `citemark args`, measured by a fresh parent."""
    probe = (
        "import resource,subprocess,sys;"
        "subprocess.run([sys.executable,'-m','citemark',*sys.argv[1:]],check=True,"
        "stdout=subprocess.DEVNULL);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    result = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, check=True)
    return int(result.stdout)


# The README's table of peaks on one large line, as multiples of the input's size past a
# constant (SLACK: the reader's and writers' chunk buffers): (compiled, pure) for each command
# and input (a JSONL field, or a text file of one line), each measured on the line shape
# that peaked highest for it (WORST_SHAPE).
PEAKS = {
    ("strip", "text"): (7, 22),
    ("strip", "jsonl-ascii"): (4.5, 22),
    ("clean", "jsonl"): (8, 19),
    ("clean --lenient", "text"): (16, 20),
    ("clean --lenient", "jsonl"): (16, 20),
    ("extract", "jsonl"): (13, 50),
    ("extract", "text"): (35, 50),
    ("stats", "jsonl"): (20, 30),
}
SLACK = 16 * 2**20
LINE_SHAPES = {
    "prose": f"Some text \u00e9 {MARK} more. ",
    "dense markers": f"{MARK} ",
    "dense inline code": f"`{MARK}` {MARK} ",
    "ASCII escapes": "word \\ue200cite\\ue202turn0search0\\ue201 ",
}
WORST_SHAPE = {
    ("strip", "text"): "dense markers",
    ("strip", "jsonl-ascii"): "prose",
    ("clean", "jsonl"): "dense inline code",
    ("clean --lenient", "text"): "ASCII escapes",
    ("clean --lenient", "jsonl"): "dense inline code",
    ("extract", "jsonl"): "dense markers",
    ("extract", "text"): "dense markers",
    ("stats", "jsonl"): "dense markers",
}


@pytest.mark.slow  # an 8 MB line per command, twice
@pytest.mark.parametrize(("command", "kind"), list(PEAKS), ids=[" ".join(k) for k in PEAKS])
def test_one_huge_line_peaks_within_its_commands_bound(
    tmp_path: Path, command: str, kind: str
) -> None:
    unit = LINE_SHAPES[WORST_SHAPE[command, kind]]
    text = unit * (8_000_000 // len(unit.encode()))
    big, tiny = tmp_path / "big", tmp_path / "tiny"
    if kind == "text":
        big.write_text(text, encoding="utf-8")
        tiny.write_text("x", encoding="utf-8")
        where: tuple[str, ...] = ()
    else:
        line = json.dumps({"a": 1, "t": text}, ensure_ascii=kind == "jsonl-ascii")
        big.write_bytes(line.encode() + b"\n")
        tiny.write_bytes(b'{"a": 1, "t": "x"}\n')
        where = ("--field", "t")
    args = command.split()
    base = peak_kib(*args, str(tiny), *where, "-q")
    peak = peak_kib(*args, str(big), *where, "-q")
    # The CLI's implementation, which --no-c-extensions sets in the environment of subprocesses.
    implementation = os.environ.get("CITEMARK_IMPLEMENTATION") or citemark_implementation()
    compiled, pure = PEAKS[command, kind]
    ratio = compiled if implementation == "cython" else pure
    assert (peak - base) * 1024 <= ratio * big.stat().st_size + SLACK


# --- Parquet at the command line -------------------------------------------------------------


def bad_utf8_parquet(path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    good = [f"row {i} {MARK}".encode() for i in range(6)]
    good[3] = b"not \xff utf-8"
    offsets = pa.array([0, *itertools.accumulate(len(g) for g in good)], pa.int32())
    array = pa.Array.from_buffers(
        pa.binary(), len(good), [None, offsets.buffers()[1], pa.py_buffer(b"".join(good))]
    )
    table = pa.table({"id": pa.array(range(6), pa.int64()), "text": array})
    pq.write_table(table, path)
    # rewrite the column's type as string, as a tool that does not check UTF-8 would
    schema = pa.schema([("id", pa.int64()), ("text", pa.string())])
    pq.write_table(
        pa.Table.from_arrays(
            [
                table.column(0),
                pa.chunked_array([chunk.view(pa.string()) for chunk in table.column(1).chunks]),
            ],
            schema=schema,
        ),
        path,
    )


@pytest.mark.needs("pyarrow")
@pytest.mark.parametrize("command", [("stats", "--json"), ("strip", "--format", "jsonl")])
def test_invalid_utf8_in_parquet_is_a_named_bad_row(tmp_path: Path, command) -> None:
    path = tmp_path / "bad.parquet"
    bad_utf8_parquet(path)
    result = citemark(command[0], str(path), "--column", "text", *command[1:])
    assert result.returncode == 2, result.err
    assert f"{path}:4: column 'text' is not UTF-8" in result.err
    assert "Traceback" not in result.err
    skipped = citemark(command[0], str(path), "--column", "text", "--skip-bad", *command[1:])
    assert skipped.returncode == 1, skipped.err
    assert f"skipped {path}:4" in skipped.err
    if command[0] == "strip":
        rows = [json.loads(line) for line in skipped.stdout.splitlines()]
        assert [r["id"] for r in rows] == [0, 1, 2, 4, 5]
        assert rows[0]["text"] == "row 0 "
    else:
        stats = json.loads(skipped.stdout)
        assert (stats["rows"], stats["skipped_rows"]) == (5, 1)


@pytest.mark.needs("pyarrow")
@pytest.mark.parametrize("kind", ["string", "string_view"])
def test_rows_not_utf8_in_any_column_written_as_json_are_named_bad_rows(
    tmp_path: Path, kind: str
) -> None:
    """JSON holds no string that is not UTF-8: a row whose other column (or, as a string_view
    text column, whose text) is not, is a named bad row, stopped at or skipped, where it was a
    traceback (`to_pylist`, and a filter with no string_view kernel) and exit 1."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def strings(values: list[bytes | None]) -> Any:
        if kind == "string":
            return pa.array(values, pa.binary()).view(pa.string())
        return pa.array(values, pa.binary_view()).view(pa.string_view())

    texts = ["a " + MARK, "b " + MARK, None, "d"]
    path = tmp_path / "bad.parquet"
    for bad_column in ("other", "text"):
        columns = {
            "text": strings([None if t is None else t.encode() for t in texts]),
            "other": strings([b"x", b"y", b"z", b"w"]),
            "nested": pa.array([{"n": 1}, {"n": 2}, {"n": 3}, {"n": 4}]),
        }
        values = (
            [b"x", b"\xff", b"z", b"w"]
            if bad_column == "other"
            else [None if t is None else t.encode() for t in texts]
        )
        if bad_column == "text":
            values[1] = b"b \xff"
        columns[bad_column] = strings(values)
        pq.write_table(pa.table(columns), path)
        for command in ("strip", "clean"):
            stopped = citemark(command, str(path), "--column", "text", "--format", "jsonl")
            assert stopped.returncode == 2, stopped.err
            assert f"{path}:2: column {bad_column!r} is not UTF-8" in stopped.err
            assert "Traceback" not in stopped.err
            first = "a " if command == "strip" else "a"  # (strip keeps the blank)
            assert [json.loads(line)["text"] for line in stopped.stdout.splitlines()] == [first]
            skipped = citemark(
                command, str(path), "--column", "text", "--format", "jsonl", "--skip-bad"
            )
            assert skipped.returncode == 1, skipped.err
            rows = [json.loads(line) for line in skipped.stdout.splitlines()]
            assert [row["text"] for row in rows] == [first, None, "d"]
            assert [row["nested"]["n"] for row in rows] == [1, 3, 4]


@pytest.mark.needs("pyarrow")
def test_two_parquet_columns_of_the_name_are_a_named_error(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "twice.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array(["a"]), pa.array(["b"])], names=["t", "t"]), path)
    result = citemark("strip", str(path), "--column", "t")
    assert result.returncode == 2
    assert "2 columns are named 't'" in result.err
    assert "Traceback" not in result.err


@pytest.mark.needs("pyarrow")
def test_parquet_needs_a_column_and_leaves_no_file_behind(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "log.parquet"
    pq.write_table(pa.table({"text": ["a"]}), path)
    result = citemark("strip", str(path))
    assert result.returncode == 2
    assert "--column" in result.err
    assert "UTF-8" not in result.err
    out = tmp_path / "out.parquet"
    missing = citemark("strip", str(path), "--column", "nope", "-o", str(out))
    assert missing.returncode == 2
    assert "no column 'nope'" in missing.err
    assert not out.exists()


@pytest.mark.needs("pyarrow")
def test_parquet_is_never_written_to_a_terminal(tmp_path: Path) -> None:
    import pty

    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "log.parquet"
    pq.write_table(pa.table({"text": ["a"]}), path)
    leader, follower = pty.openpty()
    try:
        result = citemark("strip", str(path), "--column", "text", stdout=follower,
                          stderr=subprocess.PIPE)  # fmt: skip
    finally:
        os.close(follower)
        os.close(leader)
    assert result.returncode == 2
    assert b"Parquet output goes to a file" in result.stderr


# --- the command line as users expect ------------------------------------------------------


@pytest.mark.parametrize("command", ["extract", "strip", "clean", "stats", "lint"])
def test_every_command_has_its_own_help(command: str) -> None:
    result = citemark(command, "--help")
    assert result.returncode == 0
    text = result.stdout.decode()
    assert text.startswith(f"usage: citemark {command}")
    # clean removes every family: it takes no --family (test_cli_options.py)
    assert ("--family NAME" in text) is (command != "clean")


def test_lint_is_listed_and_accepted_after_global_flags(tmp_path: Path) -> None:
    top = citemark("--help").stdout.decode()
    for command in ("extract", "strip", "clean", "stats", "lint"):
        assert f"\n    {command} " in top
    answer = tmp_path / "a.txt"
    answer.write_text(f"Fine.{MARK}", encoding="utf-8")
    result = citemark("--family", "cite", "lint", str(answer))
    assert result.returncode == 0, result.err
    assert "1 answer, 1 citation" in result.stdout.decode()


def test_hints_name_what_can_be_installed() -> None:
    from citemark.cli import parquet_hint

    hint = parquet_hint()
    assert hint in ("pip install pyarrow", "pip install 'citemark[arrow]'")
    assert hint in citemark("--help").stdout.decode()
