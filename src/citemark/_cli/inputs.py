"""Reading the inputs, in the main process: every input file as a stream of tasks, in order
(a text file; blocks of whole JSONL lines, which a worker reads itself from a regular file;
Parquet record batches).  No work per line or per byte is done here."""

from __future__ import annotations

import os
import sys
from codecs import BOM_UTF8  # skipped at the start of a JSONL input
from collections.abc import Callable, Generator, Iterator
from typing import Any, BinaryIO

from .commands import TEXT_COMMANDS, Job
from .common import Origin
from .work import FileSlice, Task, jsonl_kernel

CHUNK_ROWS = 4096
CHUNK_BYTES = 8 << 20
# A regular file's JSONL lines for a text command: about this many bytes a task, read by the
# worker alone (see `Inputs._slices`); 4 MB keeps a typical log's task within CHUNK_ROWS, so
# the worker does it in one piece.
SLICE_BYTES = 4 << 20
_WINDOW = 64 << 10  # bytes read at a time where a slice ends, looking for its last newline


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

    def __iter__(self) -> Generator[Task, None, None]:
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
            origin = Origin.of(handle) if seekable else None
            if origin is not None and self.job.command in TEXT_COMMANDS:
                yield from self._slices(file, handle, origin)
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
                    if block.startswith(BOM_UTF8):
                        block = block[len(BOM_UTF8) :]
                        offset = len(BOM_UTF8)
                if not block:  # end of input: the last line may have no newline
                    if origin is not None:
                        origin.check(file, handle)  # (an end that came early)
                    if seekable and lead:
                        payload = FileSlice(file, offset, lead, origin=origin)
                        yield Task(file, first, payload, lead)
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
                    tasks, first = self._lines(file, first, block, offset + lead, lead, cut, origin)
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

    def _slices(self, file: str, handle: BinaryIO, origin: Origin) -> Iterator[Task]:
        """A regular file's lines for a text command, in tasks of about SLICE_BYTES that
        only name their bytes: here only a window where each ends is read, to find its last
        newline, and the worker reads, counts and cuts its lines (FileSlice.most), so the
        file is read once, in the workers (this loop does no work per byte).  `run` numbers
        the rows of every task but the first (first_row None): the first starts the file."""
        at_start = handle.read(len(BOM_UTF8)) == BOM_UTF8
        offset = len(BOM_UTF8) if at_start else 0
        first: int | None = 0
        while True:
            end = _line_end(handle, offset + SLICE_BYTES - 1)
            if end <= offset:
                origin.check(file, handle)  # (an end that came early)
                return
            payload = FileSlice(file, offset, end - offset, self.chunk_rows, origin)
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
        origin: Origin | None = None,
    ) -> tuple[list[Task], int]:
        """`data` (whole lines, at file offset `base` when it is a regular file) cut into tasks
        of at most chunk_rows lines; and the index of the line after them.  `lead`: bytes of
        the file before `base` that start the first line; `size`: the lines are data[:size]."""
        tasks = []
        # Even pieces of at most chunk_rows lines, cut by the kernel in two memchr passes over
        # the block (no Python work per line).
        cuts = jsonl_kernel().line_cuts(data, len(data) if size is None else size, self.chunk_rows)
        for start, end, lines in cuts:
            before = lead if start == 0 else 0
            payload: Any = (
                data[start:end]
                if base is None
                else FileSlice(file, base + start - before, end - start + before, origin=origin)
            )
            tasks.append(Task(file, first, payload, end - start + before))
            first += lines
        return tasks, first

    def _parquet(self, file: str) -> Iterator[Task]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        source: object = file
        if file == "-":
            # Parquet's footer is at its end: standard input is read whole first.
            data = sys.stdin.buffer.read()
            source, size = pa.BufferReader(data), len(data)
        try:
            reader = pq.ParquetFile(source)
        except (pa.ArrowException, OSError) as error:
            raise InputError(f"cannot read {file}: {error}") from None
        schema = reader.schema_arrow
        if self.job.column not in schema.names:
            raise InputError(
                f"{file}: no column {self.job.column!r} (columns: {', '.join(schema.names)})"
            )
        named = schema.get_all_field_indices(self.job.column)
        if len(named) > 1:
            raise InputError(
                f"{file}: {len(named)} columns are named {self.job.column!r}: which one holds "
                "the texts is not known (rename them)"
            )
        kind = schema.field(named[0]).type
        if pa.types.is_dictionary(kind):  # pandas' category: its values are the texts
            kind = kind.value_type
        if not (
            pa.types.is_string(kind)
            or pa.types.is_large_string(kind)
            or pa.types.is_string_view(kind)
        ):
            raise InputError(f"{file}: column {self.job.column!r} is {kind}, not a string column")
        # strip rewrites whole rows; extract and stats need the text column only
        columns = None if self.job.command in TEXT_COMMANDS else [self.job.column]
        total_rows = max(1, reader.metadata.num_rows)
        if file != "-":
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
