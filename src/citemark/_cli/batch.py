"""The batch engine behind `citemark strip|clean|extract|stats`: rows in, rows out, in order.

Inputs are read as a stream of *tasks* (a text file; a chunk of JSONL lines; a Parquet record
batch), each processed by `process(job, task)` in this process (-j 1, or a single task) or in
a pool of worker processes (threads for the Arrow path and for JSONL strip, extract and clean,
whose compiled kernels do a chunk without the GIL).  At most
`2 * jobs` tasks are in flight and results are written in input order as they come back, so
memory stays bounded by a few chunks whatever the size of the input.

Bad rows (JSONL: not UTF-8, not JSON, no string at the field path; Parquet: a text that is
not UTF-8) stop the run, naming the file and line, or with `skip_bad` are left out and
reported, one by one; no row is ever lost without a report: rows out = rows in - rows
reported as skipped.  A null text is a row without text, never a bad row.  Blank JSONL lines
are no rows: they are counted, and the text commands copy them.  JSONL lines are read by the
JSONL kernel (`_cli.jsonl`), at any depth.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from functools import partial
from importlib import import_module
from itertools import chain
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple

from .. import extract_many, strip_many
from .jsonl import why
from .progress import Progress
from .stats import Stats

if TYPE_CHECKING:
    from concurrent.futures import Future

CHUNK_ROWS = 4096
CHUNK_BYTES = 8 << 20
# A regular file's JSONL lines for a text command: about this many bytes a task, read by the
# worker alone (see `Inputs._slices`); 4 MB keeps a typical log's task within CHUNK_ROWS, so
# the worker does it in one piece.
SLICE_BYTES = 4 << 20
_WINDOW = 64 << 10  # bytes read at a time where a slice ends, looking for its last newline
_BOM = b"\xef\xbb\xbf"  # a UTF-8 byte order mark: skipped at the start of a JSONL file


# --- the text -> text commands: one entry each -------------------------------------------


@dataclass(frozen=True)
class TextCommand:
    """A command that maps each text to a new text (strip, clean): text files, JSONL --field
    and Parquet --column in, the same shape out, every other byte of a JSONL line kept."""

    help: str
    description: str
    # (job) -> a function of a list of texts giving the list of new texts
    many: Callable[[Job], Callable[[list[str]], list[str]]]
    # Only texts holding a START can change: JSONL texts without one are not even decoded,
    # and tokens that `raw_ok` allows are stripped as raw UTF-8 by the JSONL kernel.
    start_only: bool = False
    # (option strings, argparse keyword arguments with a "dest") of its own options
    options: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = ()


def _strip_many(job: Job) -> Callable[[list[str]], list[str]]:
    return partial(strip_many, families=job.families)


def _clean_many(job: Job) -> Callable[[list[str]], list[str]]:
    # imported when the command runs: the other commands never load clean's rules
    clean_many = import_module("citemark.display").clean_many
    lenient = bool(job.option("lenient"))
    return partial(clean_many, lenient=lenient)


TEXT_COMMANDS: dict[str, TextCommand] = {
    "strip": TextCommand(
        help="each input without its citation markers",
        description="Remove the valid citation markers of each text, JSONL field or Parquet "
        "column value; every other byte as it was.",
        many=_strip_many,
        start_only=True,
    ),
    "clean": TextCommand(
        help="each input cleaned for display (citemark.display)",
        description="Clean each text, JSONL field or Parquet column value with "
        "citemark.display.clean: markers and their debris out, readable text kept; every other "
        "byte of a JSONL line as it was.",
        many=_clean_many,
        options=(
            (
                ("--lenient",),
                {
                    "dest": "lenient",
                    "action": "store_true",
                    "help": "also remove degraded markers whose private-use characters were lost "
                    "(citeturn0search0, U+FFFD, \\ue200 escapes, :contentReference[oaicite:N])",
                },
            ),
        ),
    ),
}


@dataclass(frozen=True)
class Job:
    """What to do with every row; sent along with each task to the workers."""

    command: str  # "strip", "clean" (TEXT_COMMANDS), "extract" or "stats"
    input_format: str  # "text", "jsonl" or "parquet"
    output_format: str  # "text", "jsonl", "parquet", or "stats"
    families: tuple[str, ...]
    field_path: tuple[str, ...] = ()  # JSONL
    column: str = ""  # Parquet
    skip_bad: bool = False
    options: tuple[tuple[str, Any], ...] = ()  # a text command's own options (name, value)

    def option(self, name: str) -> Any:
        return dict(self.options).get(name)

    def text_many(self) -> Callable[[list[str]], list[str]]:
        return TEXT_COMMANDS[self.command].many(self)


@dataclass
class Task:
    file: str
    # 0-based index of the first row in its file (JSONL: line number - 1); None: the lines
    # before it were not counted (`Inputs._slices`): its rows are numbered from 0 and `run`
    # renumbers them after the rows of the task before it, of the same file
    first_row: int | None
    payload: Any  # str (text); bytes or FileSlice (whole JSONL lines); RecordBatch (Parquet)
    nbytes: int  # input bytes it stands for (for the progress bar)


@dataclass
class Result:
    rows: int = 0  # rows read
    nbytes: int = 0
    blanks: int = 0  # blank lines (JSONL): skipped, counted
    output: Any = None  # bytes, or a pyarrow.RecordBatch
    skips: list[tuple[str, int, str]] = field(default_factory=list)  # (file, line, why)
    error: tuple[str, int, str] | None = None  # the bad row that stops the run
    stats: Stats | None = None
    first_row: int | None = 0  # its task's: None, its lines are numbered from the task's first

    def renumber(self, before: int) -> None:
        """The lines of its skips and error counted from the file's start, `before` lines
        before the task's first."""
        self.skips = [(file, line + before, why) for file, line, why in self.skips]
        if self.error is not None:
            file, line, why = self.error
            self.error = (file, line + before, why)


# --- the work on one task (in a worker) --------------------------------------------------


class FileSlice(NamedTuple):
    """Bytes of a regular file, read by the worker that processes them (no trip through a
    pipe)."""

    path: str
    offset: int
    length: int
    # 0: whole lines the reader counted and cut; else uncounted lines, which the worker cuts
    # in pieces of at most this many (`_uncounted`), as the reader would have
    most: int = 0

    def read(self) -> bytes:
        with open(self.path, "rb") as handle:
            handle.seek(self.offset)
            data = handle.read(self.length)
        if len(data) != self.length:
            raise OSError(f"{self.path} changed while it was being read")
        return data


def process(job: Job, task: Task) -> Result:
    most = 0
    if isinstance(task.payload, FileSlice):
        most = task.payload.most
        task = Task(task.file, task.first_row, task.payload.read(), task.nbytes)
    result = Result(nbytes=task.nbytes, first_row=task.first_row)
    if job.command == "stats":
        result.stats = Stats()
    if most:
        _uncounted(job, task, result, most)
    elif job.input_format == "jsonl":
        _jsonl(job, task, result)
    elif job.input_format == "parquet":
        _parquet(job, task, result)
    else:
        _text(job, task, result)
    return result


def _text(job: Job, task: Task, result: Result) -> None:
    text: str = task.payload
    result.rows = 1
    if job.command == "stats":
        assert result.stats is not None
        result.stats.add_texts([text], job.families)
    elif job.command in TEXT_COMMANDS:
        result.output = job.text_many()([text])[0].encode("utf-8", "surrogateescape")
    elif job.output_format == "parquet":
        result.output = _citation_batch(task.file, [0], extract_many([text], families=job.families))
    else:
        citations = extract_many([text], families=job.families)[0]
        result.output = _json_line({"file": task.file, "citations": citations})


def _uncounted(job: Job, task: Task, result: Result, most: int) -> None:
    """JSONL lines of a text command that the reader did not count: cut here in pieces of at
    most `most` lines (what bounds a chunk's Python objects), each done as a task of its own,
    its rows numbered from the task's first (`run` renumbers them)."""
    data: bytes = task.payload
    outputs = []
    first = 0
    for start, end, lines in _jsonl_kernel().line_cuts(data, len(data), most):
        piece = Result()
        lines_data = data if end - start == len(data) else data[start:end]
        _jsonl(job, Task(task.file, first, lines_data, end - start), piece)
        outputs.append(piece.output)
        result.rows += piece.rows
        result.blanks += piece.blanks
        result.skips += piece.skips
        if piece.error is not None:
            result.error = piece.error
            break
        first += lines
    result.output = outputs[0] if len(outputs) == 1 else b"".join(outputs)


def _jsonl(job: Job, task: Task, result: Result) -> None:
    data: bytes = task.payload
    assert task.first_row is not None  # counted (`_uncounted` numbers its pieces)
    kernel = _jsonl_kernel()
    path = job.field_path
    if job.command in TEXT_COMMANDS:
        many = job.text_many()
        if TEXT_COMMANDS[job.command].start_only:
            families = tuple(family.encode("utf-8", "surrogatepass") for family in job.families)
            out, good, blanks, bad = kernel.strip_lines(data, path, many, job.skip_bad, families)
        elif _cleans_in_pass(job):
            # cleaned by the kernel without the GIL, but for the rare text left to `many`
            out, good, blanks, bad = kernel.clean_lines(data, path, many, job.skip_bad)
        else:
            out, good, blanks, bad = kernel.map_lines(data, path, many, job.skip_bad)
        result.output = out
    elif job.command == "extract" and job.output_format == "jsonl":
        # JSON lines written by the kernel; the tokens it can scan raw make no Python object
        families = tuple(family.encode("utf-8", "surrogatepass") for family in job.families)
        result.output, good, blanks, bad = kernel.extract_lines(
            data,
            path,
            partial(extract_many, families=job.families),
            job.skip_bad,
            task.file,
            task.first_row,
            families,
        )
    else:
        rows, texts, blanks, bad = kernel.text_lines(data, path, job.skip_bad)
        good = len(rows)
        first = task.first_row
        if job.command == "stats":
            assert result.stats is not None
            result.stats.add_texts(texts, job.families)
        else:
            present = [text for text in texts if text is not None]
            found = iter(extract_many(present, families=job.families))
            citations = [None if text is None else next(found) for text in texts]
            numbers = [first + row for row in rows]
            if job.output_format == "parquet":
                result.output = _citation_batch(task.file, numbers, citations)
            else:
                result.output = _citation_lines(task.file, numbers, citations)
    result.rows = good
    result.blanks = blanks
    if bad:
        lines = data.split(b"\n")
        for index, code, a, b in bad:
            problem = (task.file, task.first_row + index + 1, why(lines[index], path, code, a, b))
            if job.skip_bad:
                result.skips.append(problem)
                result.rows += 1
            else:
                result.error = problem  # not read: the run stops at it
    if result.stats is not None:
        result.stats.skipped = len(result.skips)
        result.stats.blank_lines = blanks


def _citation_lines(file: str, rows: list[int], citations: list[Any]) -> bytes:
    """{"file", "row", "citations"} JSON lines, as json.dumps writes them."""
    return _jsonl_kernel().citation_lines(file, rows, citations)  # type: ignore[no-any-return]


def _jsonl_kernel() -> Any:
    from .jsonl import kernel

    return kernel()


def _json_line(value: Any) -> bytes:
    try:
        return json.dumps(value, ensure_ascii=False).encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True).encode("ascii") + b"\n"


def _citation_batch(file: str, rows: list[int], citations: list[Any]) -> Any:
    import pyarrow as pa

    from ..arrow import citation_type

    return pa.RecordBatch.from_arrays(
        [
            pa.array([file] * len(rows), pa.string()),
            pa.array(rows, pa.int64()),
            pa.array(citations, citation_type()),
        ],
        schema=citation_schema(),
    )


def citation_schema() -> Any:
    """The table that `extract` writes to Parquet: file, row, citations."""
    import pyarrow as pa

    from ..arrow import citation_type

    return pa.schema([("file", pa.string()), ("row", pa.int64()), ("citations", citation_type())])


def _parquet(job: Job, task: Task, result: Result) -> None:
    import pyarrow as pa

    from .. import arrow

    batch = task.payload
    first = task.first_row
    assert first is not None  # a Parquet batch's rows are counted by its reader
    index = batch.schema.get_field_index(job.column)
    done = _arrow_first(job, batch.column(index))
    bad = [] if done is not None else _not_utf8(batch.column(index))
    if bad:
        # A named bad row, as in JSONL: stop before it, or leave it out with --skip-bad.
        for row in bad:
            problem = (task.file, first + row + 1, f"column {job.column!r} is not UTF-8")
            if not job.skip_bad:
                result.error = problem
                batch = batch.slice(0, row)
                break
            result.skips.append(problem)
        else:
            dropped = set(bad)
            batch = batch.filter(pa.array([row not in dropped for row in range(batch.num_rows)]))
    result.rows = batch.num_rows + len(result.skips)
    column = batch.column(index)
    if job.command == "stats":
        assert result.stats is not None
        result.stats.add_texts(column.to_pylist(), job.families)
        result.stats.skipped = len(result.skips)
    elif job.command in TEXT_COMMANDS:
        if job.command == "strip":
            new = done if done is not None else arrow.strip(column, families=job.families)
        else:
            texts = column.to_pylist()
            present = [text for text in texts if text is not None]
            done = iter(job.text_many()(present))
            new = pa.array([None if t is None else next(done) for t in texts], column.type)
        batch = batch.set_column(index, batch.schema.field(index), new)
        if job.output_format == "parquet":
            result.output = batch
        else:
            result.output = b"".join(_json_line(row) for row in _json_rows(batch))
    else:
        found = done if done is not None else arrow.extract(column, families=job.families)
        if pa.types.is_large_list(found.type):  # large_string or string_view column
            found = found.cast(arrow.citation_type())
        rows = list(range(first, first + batch.num_rows))
        if len(result.skips):  # the rows left, by their number in the file
            skipped = {line - 1 for _, line, _ in result.skips}
            rows = [row for row in range(first, first + task.payload.num_rows)
                    if row not in skipped]  # fmt: skip
        if job.output_format == "parquet":
            result.output = pa.RecordBatch.from_arrays(
                [pa.array([task.file] * len(rows), pa.string()), pa.array(rows, pa.int64()), found],
                schema=citation_schema(),
            )
        else:
            result.output = _citation_lines(task.file, rows, found.to_pylist())


def _arrow_first(job: Job, column: Any) -> Any:
    """strip's or extract's result for the whole column, or None when a row is not UTF-8 (or
    for another command): the kernels check every row themselves, so the check that lists
    the bad rows runs only when there is one."""
    from .. import arrow

    if job.command not in ("strip", "extract"):
        return None
    try:
        return getattr(arrow, job.command)(column, families=job.families)
    except ValueError:  # "row N is not valid UTF-8": _not_utf8 finds every such row
        return None


def _not_utf8(column: Any) -> list[int]:
    """The rows of a string column that are not UTF-8 (Arrow's rule, which a file written by
    another tool may break): none, after one check in C, in the common case."""
    import pyarrow as pa

    try:
        column.validate(full=True)
        return []
    except pa.ArrowInvalid:
        pass
    bad = []
    for row in range(len(column)):
        try:
            column.slice(row, 1).validate(full=True)
        except pa.ArrowInvalid:
            bad.append(row)
    return bad


def _json_rows(batch: Any) -> Iterator[dict[str, Any]]:
    for row in batch.to_pylist():
        yield {key: _jsonable(value) for key, value in row.items()}


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)  # dates, decimals, ...


# --- reading tasks (in the main process) -------------------------------------------------


class Inputs:
    """The tasks of every input file, in order; unreadable files are reported and skipped
    (`problems` counts them), as the command has always done."""

    def __init__(self, job: Job, files: list[str], chunk_rows: int, report: Callable[[str], None]):
        self.job = job
        self.files = files
        self.chunk_rows = max(1, chunk_rows)
        self.report = report
        self.problems = 0

    def total_bytes(self) -> int | None:
        if "-" in self.files:
            return None
        try:
            return sum(os.path.getsize(file) for file in self.files)
        except OSError:
            return None

    def __iter__(self) -> Iterator[Task]:
        for file in self.files:
            try:
                if self.job.input_format == "jsonl":
                    yield from self._jsonl(file)
                elif self.job.input_format == "parquet":
                    yield from self._parquet(file)
                else:
                    yield self._text(file)
            except InputError as error:
                self.report(f"citemark: {error}")
                self.problems += 1
            except (OSError, UnicodeDecodeError) as error:
                self.report(f"citemark: cannot read {file}: {error}")
                self.problems += 1

    def _text(self, file: str) -> Task:
        if file == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(file, "rb") as handle:
                data = handle.read()
        return Task(file, 0, data.decode("utf-8"), len(data))

    def _jsonl(self, file: str) -> Iterator[Task]:
        """Blocks of whole lines, at most chunk_rows lines and about CHUNK_BYTES each: the
        lines are split in the workers, so this loop does no work per line.  From a regular
        file a task names its bytes (FileSlice) and the worker reads them itself; from a pipe
        the task carries them."""
        handle: BinaryIO = sys.stdin.buffer if file == "-" else open(file, "rb")  # noqa: SIM115
        try:
            seekable = file != "-" and handle.seekable()
            if seekable and self.job.command in TEXT_COMMANDS:
                yield from self._slices(file, handle)
                return
            first = 0  # index of the first line not yet handed out
            offset = 0  # file offset of the first byte not yet handed out
            parts: list[bytes] = []  # the start of a line that continues in the next block
            lead = 0  # from a regular file, the length of that start (its bytes are not kept)
            at_start = True
            read = handle.read if seekable or file != "-" else _pipe_reader(handle)
            while True:
                block = read(CHUNK_BYTES)
                if at_start and block:
                    at_start = False
                    if block.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte order mark
                        block = block[3:]
                        offset = 3
                if not block:  # end of input: the last line may have no newline
                    if seekable and lead:
                        yield Task(file, first, FileSlice(file, offset, lead), lead)
                        return
                    data = b"".join(parts)
                    if data:
                        yield from self._lines(file, first, data, None)[0]
                    return
                cut = block.rfind(b"\n") + 1
                if cut == 0:  # a line longer than a block: read on
                    if seekable:
                        lead += len(block)  # the worker reads it from the file
                    else:
                        parts.append(block)
                    continue
                if seekable:  # the block itself, up to `cut`: no copy, workers read the file
                    tasks, first = self._lines(file, first, block, offset + lead, lead, cut)
                    offset += lead + cut
                    lead = len(block) - cut
                    del block  # a long line is not held here while a worker reads it
                    yield from tasks
                    continue
                else:
                    data = b"".join([*parts, block[:cut]]) if parts else block[:cut]
                    parts = [block[cut:]] if cut < len(block) else []
                    tasks, first = self._lines(file, first, data, None)
                del data, block  # a long line is not held here while a worker reads it
                yield from tasks
        finally:
            if handle is not sys.stdin.buffer:
                handle.close()

    def _slices(self, file: str, handle: BinaryIO) -> Iterator[Task]:
        """A regular file's lines for a text command, in tasks of about SLICE_BYTES that
        only name their bytes: here only a window where each ends is read, to find its last
        newline, and the worker reads, counts and cuts its lines (FileSlice.most), so the
        file is read once, in the workers (this loop does no work per byte).  `run` numbers
        the rows of every task but the first (first_row None): the first starts the file."""
        at_start = handle.read(len(_BOM)) == _BOM
        offset = len(_BOM) if at_start else 0
        first: int | None = 0
        while True:
            end = _line_end(handle, offset + SLICE_BYTES - 1)
            if end <= offset:
                return
            payload = FileSlice(file, offset, end - offset, self.chunk_rows)
            yield Task(file, first, payload, end - offset)
            first = None
            offset = end

    def _lines(
        self,
        file: str,
        first: int,
        data: bytes,
        base: int | None,
        lead: int = 0,
        size: int | None = None,
    ) -> tuple[list[Task], int]:
        """`data` (whole lines, at file offset `base` when it is a regular file) cut into tasks
        of at most chunk_rows lines; and the index of the line after them.  `lead`: bytes of
        the file before `base` that start the first line; `size`: the lines are data[:size]."""
        tasks = []
        # Even pieces of at most chunk_rows lines, cut by the kernel in two memchr passes over
        # the block (no Python work per line).
        cuts = _jsonl_kernel().line_cuts(data, len(data) if size is None else size, self.chunk_rows)
        for start, end, lines in cuts:
            before = lead if start == 0 else 0
            payload: Any = (
                data[start:end]
                if base is None
                else FileSlice(file, base + start - before, end - start + before)
            )
            tasks.append(Task(file, first, payload, end - start + before))
            first += lines
        return tasks, first

    def _parquet(self, file: str) -> Iterator[Task]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if file == "-":
            raise InputError("Parquet input must be a file, not standard input")
        try:
            reader = pq.ParquetFile(file)
        except (pa.ArrowException, OSError) as error:
            raise InputError(f"cannot read {file}: {error}") from None
        schema = reader.schema_arrow
        if self.job.column not in schema.names:
            raise InputError(
                f"{file}: no column {self.job.column!r} (columns: {', '.join(schema.names)})"
            )
        kind = schema.field(self.job.column).type
        if not (
            pa.types.is_string(kind)
            or pa.types.is_large_string(kind)
            or pa.types.is_string_view(kind)
        ):
            raise InputError(f"{file}: column {self.job.column!r} is {kind}, not a string column")
        # strip rewrites whole rows; extract and stats need the text column only
        columns = None if self.job.command in TEXT_COMMANDS else [self.job.column]
        total_rows = max(1, reader.metadata.num_rows)
        size = os.path.getsize(file)
        first = 0
        for batch in reader.iter_batches(batch_size=self.chunk_rows, columns=columns):
            yield Task(file, first, batch, size * batch.num_rows // total_rows)
            first += batch.num_rows


class InputError(Exception):
    pass


def _line_end(handle: BinaryIO, at: int) -> int:
    """The offset just after the first newline at or after `at`; the file's size when there
    is none (a last line without one, or `at` past the end)."""
    handle.seek(at)
    while True:
        window = handle.read(_WINDOW)
        if not window:
            return min(at, os.fstat(handle.fileno()).st_size)
        found = window.find(b"\n")
        if found >= 0:
            return at + found + 1
        at += len(window)


_TICK = 0.25  # seconds: the longest a blocking wait goes without looking for a Ctrl-C


def _pipe_reader(handle: BinaryIO) -> Callable[[int], bytes]:
    """read(size) for standard input that never blocks longer than a tick at a time.

    A blocking read is cut short by Ctrl-C only when the kernel hands the signal to the main
    thread; a read of at most `size` bytes, made when select says some are there, lets the
    interrupt through in every case.  (Nothing has read standard input before: its buffer is
    empty, so reading the descriptor loses nothing.)"""
    import select

    try:
        descriptor = handle.fileno()
    except (AttributeError, OSError, ValueError):  # not a real descriptor (a test's BytesIO)
        return handle.read

    def read(size: int) -> bytes:
        parts: list[bytes] = []
        have = 0
        while have < size:
            ready = select.select([descriptor], [], [], _TICK)[0]
            if not ready:
                if parts:
                    break  # hand on what came: the rest may be a long time coming
                continue
            part = os.read(descriptor, size - have)
            if not part:
                break
            parts.append(part)
            have += len(part)
        return b"".join(parts)

    return read


# --- running the tasks, in order ---------------------------------------------------------


def ordered_results(job: Job, tasks: Iterator[Task], jobs: int, threads: bool) -> Iterator[Result]:
    """process(job, task) for each task, in order, at most 2 * jobs in flight.

    Worker processes ignore SIGINT (Ctrl-C reaches the whole process group): the main process
    alone handles it, and on any exit, an interrupt included, the workers are terminated, not
    waited for, so a result half sent by a worker can never hold the exit up.
    """
    tasks = iter(tasks)
    first = next(tasks, None)
    if first is None:
        return
    second = next(tasks, None)
    if jobs <= 1 or second is None:
        for task in chain([first], [second] if second is not None else [], tasks):
            yield process(job, task)
        return
    if threads:
        yield from _threaded(job, chain([first, second], tasks), jobs)
        return
    workers = [_Worker(job) for _ in range(jobs)]
    window: deque[_Worker] = deque()  # the worker of each task in flight, in task order
    try:
        # Task k goes to worker k % jobs, which does its tasks in order: so results come back
        # in task order by reading the workers in turn.  No lock is shared with a worker, so
        # none can be left held by one that is terminated.
        for index, task in enumerate(chain([first, second], tasks)):
            worker = workers[index % jobs]
            worker.send(task)
            window.append(worker)
            if len(window) >= 2 * jobs:
                yield window.popleft().receive()
        while window:
            yield window.popleft().receive()
    finally:
        for worker in workers:
            worker.stop()


class _Worker:
    """One worker process and its pipe: tasks in, results out, in order."""

    def __init__(self, job: Job) -> None:
        context = _context()
        # Two one-way pipes, widened: a chunk's result (megabytes) then crosses in a few
        # writes, not in hundreds of 64 KiB turns between two processes.
        tasks_in, self.tasks = context.Pipe(duplex=False)
        self.connection, results_out = context.Pipe(duplex=False)
        for end in (tasks_in, self.tasks, self.connection, results_out):
            _widen(end)
        self.process = context.Process(target=_work, args=(job, tasks_in, results_out), daemon=True)
        self.process.start()
        tasks_in.close()
        results_out.close()

    def send(self, task: Task) -> None:
        self.tasks.send(task)

    def receive(self) -> Result:
        try:
            while not self.connection.poll(_TICK):
                pass  # Python code runs between polls: a Ctrl-C is seen within a tick
            kind, value = self.connection.recv()
        except EOFError:
            raise RuntimeError(
                f"a worker process died (exit code {self.process.exitcode})"
            ) from None
        if kind == "error":
            raise value
        if kind == "bytes":  # the output came after the rest, as raw bytes: no unpickle copy
            value.output = self.connection.recv_bytes()
        return value  # type: ignore[no-any-return]

    def stop(self) -> None:
        """Terminate it, never wait on it: a result half sent cannot hold the exit up."""
        if self.process.is_alive():
            self.process.terminate()
        self.process.join(2)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.connection.close()
        self.tasks.close()


def _widen(connection: Any) -> None:
    """A pipe of 1 MiB where the system allows it (Linux: F_SETPIPE_SZ), else as it is."""
    try:
        import fcntl

        fcntl.fcntl(connection.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except (ImportError, OSError):
        pass


def _work(job: Job, tasks: Any, connection: Any) -> None:
    """A worker: tasks in, results out, in order.  Results are sent by a thread, so the next
    task is worked on while the main process has not yet taken the last result (it reads the
    workers in turn); the main process's window bounds what waits here to two results."""
    import queue
    import threading

    _worker_init()
    outbox: queue.Queue[tuple[str, Any] | None] = queue.Queue()

    def send() -> None:
        while (answer := outbox.get()) is not None:
            try:
                result = answer[1]
                if answer[0] == "result" and isinstance(result.output, bytes):
                    # the output after the rest, as raw bytes: no pickle copy of it
                    output, result.output = result.output, None
                    connection.send(("bytes", result))
                    connection.send_bytes(output)
                else:
                    connection.send(answer)
            except OSError:  # the main process is gone: so is the work
                return

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    while True:
        try:
            task = tasks.recv()
        except (EOFError, OSError):
            break
        try:
            outbox.put(("result", process(job, task)))
        except Exception as error:
            outbox.put(("error", error))
    outbox.put(None)
    sender.join()


def _threaded(job: Job, tasks: Iterator[Task], jobs: int) -> Iterator[Result]:
    from concurrent.futures import ThreadPoolExecutor  # here: -j 1 never loads it

    pool = ThreadPoolExecutor(max_workers=jobs)
    window: deque[Future[Result]] = deque()
    try:
        for task in tasks:
            window.append(pool.submit(process, job, task))
            if len(window) >= 2 * jobs:
                yield window.popleft().result()
        while window:
            yield window.popleft().result()
    finally:
        for future in window:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)


def _worker_init() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _keep_freed_memory()


def _context() -> Any:
    # forkserver: workers start from a clean process (no threads, no open output files);
    # spawn where there is no forkserver.
    import multiprocessing  # here: -j 1 never loads it

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    # The server imports the batch engine once, and every worker is forked with it loaded:
    # a worker starts in a fork, not in an import of the package (a name that fails to
    # import is passed over).
    context.set_forkserver_preload([__name__])
    return context


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


# --- writing results ---------------------------------------------------------------------


class Output:
    """Bytes to a file or standard output, or record batches to a Parquet file.

    A file is created at the first write (or by `finish` when every input was read and had
    no rows): an input that cannot be read leaves no output file behind."""

    def __init__(self, path: str | None, output_format: str, schema: Any = None) -> None:
        self.path = path
        self.format = output_format
        self.schema = schema
        self._handle: BinaryIO | None = None
        self._writer: Any = None
        self._own = False

    def open(self) -> None:
        if self._handle is not None:
            return
        if self.path in (None, "-"):
            self._handle = sys.stdout.buffer
        else:
            self._handle = open(self.path, "wb")  # noqa: SIM115 - closed in close()
            self._own = True
        if self.format == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            sink = self._handle if self._own else pa.PythonFile(self._handle, mode="w")
            self._writer = pq.ParquetWriter(sink, self.schema)

    def write(self, output: Any) -> None:
        if output is None:
            return
        self.open()
        if self._writer is not None:
            if output.num_rows:
                if output.schema != self.schema:
                    output = output.cast(self.schema)
                self._writer.write_batch(output)
        else:
            assert self._handle is not None
            self._handle.write(output)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self._handle is not None:
            if self._own:
                self._handle.close()
            else:
                self._handle.flush()
            self._handle = None


@dataclass
class Outcome:
    rows: int = 0
    skipped: int = 0
    blanks: int = 0
    unreadable: int = 0
    stopped: bool = False
    interrupted: bool = False
    stats: Stats | None = None


def run(
    job: Job,
    inputs: Inputs,
    output: Output,
    *,
    jobs: int,
    progress: Progress,
    report: Callable[[str], None],
) -> Outcome:
    """Every task's result written in order.  Ctrl-C (KeyboardInterrupt, raised from here)
    never cuts a write: the output is always a prefix of whole results, so of whole lines."""
    outcome = Outcome(stats=Stats() if job.command == "stats" else None)
    _keep_freed_memory()
    threads = (
        job.input_format == "parquet" and job.command != "stats" and _arrow_releases_gil()
    ) or (
        job.input_format == "jsonl"
        and (job.command in _JSONL_THREADED or _cleans_in_pass(job))
        and job.output_format == "jsonl"
        and _jsonl_compiled()
    )
    writing = False
    pending = False

    def on_interrupt(signum: int, frame: Any) -> None:
        nonlocal pending
        if writing:
            pending = True  # raised once the write is whole
        else:
            raise KeyboardInterrupt

    previous = _install(on_interrupt)
    try:
        results = ordered_results(job, iter(inputs), jobs, threads)
        before = 0  # lines of the file before the result's task (for tasks not counted)
        with progress, closing(results):  # type: ignore[type-var]
            for result in results:
                if result.first_row is None:
                    result.renumber(before)
                else:
                    before = result.first_row
                before += result.rows + result.blanks
                writing = True
                output.write(result.output)
                writing = False
                if pending:
                    raise KeyboardInterrupt
                for file, line, why in result.skips:
                    report(f"citemark: skipped {file}:{line}: {why}")
                outcome.rows += result.rows
                outcome.skipped += len(result.skips)
                outcome.blanks += result.blanks
                if outcome.stats is not None and result.stats is not None:
                    outcome.stats.merge(result.stats)
                progress.advance(result.rows, result.nbytes)
                if result.error is not None:
                    file, line, why = result.error
                    report(f"citemark: {file}:{line}: {why}")
                    report("citemark: stopped (use --skip-bad to skip and report bad lines)")
                    outcome.stopped = True
                    break
        if not inputs.problems and not outcome.stopped:
            output.open()  # every input read: an empty result is still a file
    finally:
        writing = True  # a second Ctrl-C while the output is closed waits for it
        try:
            output.close()
        finally:
            _restore(previous)
    if pending:
        raise KeyboardInterrupt
    outcome.unreadable = inputs.problems
    return outcome


# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def _keep_freed_memory() -> None:
    """Every task allocates and frees buffers of a few MB (its bytes, its output).  glibc by
    default maps such a buffer fresh or gives the freed top of its heap back to the system,
    and the next task faults the pages in again: on the 1 GB log, `clean` took 121,000 page
    faults at -j 1 and 140,000 at -j 2, and a third of its time.  Buffers up to 12 MB (a
    task's, a read block's) come from the heap, which keeps up to 24 MB free, so their pages
    stay mapped: 7,400 and 17,000 faults.  Larger buffers (a very long line) are still
    mapped apart and given back when freed: a long line still peaks at 3x its size, not
    more.  The process is the command's (and its workers'): the library never calls this."""
    try:  # glibc names itself here (platform.libc_ver reads the executable: slower)
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return
    except (AttributeError, ValueError, OSError):  # not glibc, or no confstr (Windows)
        return
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(_M_MMAP_THRESHOLD, 12 << 20)
    mallopt(_M_TRIM_THRESHOLD, 24 << 20)


def _install(handler: Callable[[int, Any], None]) -> Any:
    try:
        return signal.signal(signal.SIGINT, handler)
    except ValueError:  # not the main thread (an embedding program): leave its handler be
        return None


def _restore(previous: Any) -> None:
    if previous is not None:
        signal.signal(signal.SIGINT, previous)


# JSONL commands whose compiled kernel does a chunk without the GIL (but for the rare token
# left to Python): threads, not processes, so no worker starts and no result crosses a pipe.
_JSONL_THREADED = frozenset({"strip", "extract"})


def _cleans_in_pass(job: Job) -> bool:
    """clean's rules are in the compiled pass, but --lenient's (Python regexes)."""
    return job.command == "clean" and not job.option("lenient")


def _jsonl_compiled() -> bool:
    from .._kernels.loader import compiled

    return compiled(_jsonl_kernel())


def _arrow_releases_gil() -> bool:
    from .. import arrow

    return arrow.IMPLEMENTATION == "cython"
