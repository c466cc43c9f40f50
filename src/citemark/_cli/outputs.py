"""Writing the results, in the main process: bytes to a file or standard output, or record
batches to a Parquet file."""

from __future__ import annotations

import errno
import os
import secrets
import stat
import sys
from contextlib import suppress
from typing import Any, BinaryIO


class Output:
    """Bytes to a file or standard output, or record batches to a Parquet file.

    A file is created at the first write (or by `open` when every input was read and had
    no rows): an input that cannot be read leaves no output file behind.

    Text and JSONL go straight to the file: a run that stops leaves the lines written so
    far, whole.  A Parquet file is only readable once its footer is written, and a footer
    written after an interrupt made a prefix of the rows look like a whole output: Parquet
    goes to a temporary file beside the output, renamed to the output's name by
    `close(complete=True)` alone; a run that stops removes it (and leaves a file that was
    already there as it was).  Where that cannot be (standard output, a device or a pipe, a
    folder that takes no new file), an unfinished Parquet output gets no footer."""

    def __init__(self, path: str | None, output_format: str, schema: Any = None) -> None:
        self.path = path
        self.format = output_format
        self.schema = schema
        self._handle: BinaryIO | None = None
        self._writer: Any = None
        self._gate: _Gate | None = None
        self._own = False
        # JSONL written so far ends inside a line: the last line of an input that had no line
        # feed, which the next input's rows must not continue.
        self._open_line = False
        self._temporary: str | None = None  # written in place of `_target` until complete
        self._target = ""

    def open(self) -> None:
        if self._handle is not None:
            return
        if self.path in (None, "-"):
            self._handle = sys.stdout.buffer
        else:
            assert self.path is not None
            if self.format == "parquet":
                self._handle = self._open_temporary(self.path)
            if self._handle is None:
                self._handle = open(self.path, "wb")  # noqa: SIM115 - closed in close()
            self._own = True
        if self.format == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            self._gate = _Gate(self._handle)
            self._writer = pq.ParquetWriter(pa.PythonFile(self._gate, mode="w"), self.schema)

    def _open_temporary(self, path: str) -> BinaryIO | None:
        """A new file beside `path` (a regular file, or none yet), with the mode a file
        made by `open` would have (or the mode of the file it will replace); None where
        there can be none."""
        try:
            found = os.stat(path)
        except FileNotFoundError:
            found = None
        except OSError:
            return None
        if found is not None and not stat.S_ISREG(found.st_mode):
            return None  # /dev/stdout, a named pipe: written to as they are
        target = os.path.realpath(path)  # a link is followed, as open() follows it
        folder, name = os.path.split(target)
        temporary = os.path.join(folder, f".{name}.{secrets.token_hex(4)}.citemark-partial")
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except OSError:
            return None
        if found is not None:
            with suppress(OSError):
                os.chmod(fd, stat.S_IMODE(found.st_mode))
        self._temporary, self._target = temporary, target
        return os.fdopen(fd, "wb")

    def write(self, output: Any) -> None:
        # Nothing to write opens nothing: a run that stops at its first row leaves no file
        # (and one already there as it was); a run that ends well opens its output anyway.
        if output is None or not (output.num_rows if self.format == "parquet" else output):
            return
        self.open()
        if self._writer is not None:
            if output.schema != self.schema:
                output = output.cast(self.schema)
            self._writer.write_batch(output)
        else:
            assert self._handle is not None
            if self._open_line:
                _write_all(self._handle, b"\n")
            _write_all(self._handle, output)
            self._open_line = self.format == "jsonl" and bytes(output[-1:]) != b"\n"

    def close(self, complete: bool = True) -> None:
        """Closed; a Parquet output finished (its footer, its name) only when `complete`
        (the run ended with every input read, not interrupted nor stopped by an error)."""
        handle, self._handle = self._handle, None
        writer, self._writer = self._writer, None
        temporary, self._temporary = self._temporary, None
        finished = False
        try:
            if writer is not None:
                try:
                    if complete:
                        writer.close()
                finally:
                    self._abandon(writer)  # (closed or not: it writes nothing more)
            if handle is not None:
                if self._own:
                    handle.close()
                else:
                    handle.flush()
            finished = complete
        finally:
            if handle is not None and self._own and not handle.closed:  # after an error
                with suppress(OSError):
                    handle.close()
            if temporary is not None:
                if finished:
                    try:
                        os.replace(temporary, self._target)
                    except BaseException:
                        _remove(temporary)
                        raise
                else:
                    _remove(temporary)

    def _abandon(self, writer: Any) -> None:
        """The Parquet writer let go: pyarrow writes a footer when a writer is collected
        too, so nothing it writes reaches the file any more."""
        if self._gate is not None:
            self._gate.shut = True
            self._gate = None
        writer.is_open = False  # (its __del__ would close it)


class _Gate:
    """The file that the Parquet writer writes to (through `pyarrow.PythonFile`): whole
    writes (as `_write_all`), and none at all once shut."""

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.shut = False
        self.closed = False

    def write(self, data: Any) -> int:
        if not self.shut:
            _write_all(self.handle, data)
        return len(data)

    def flush(self) -> None:
        if not self.shut:
            self.handle.flush()

    def tell(self) -> int:
        return self.handle.tell()

    def close(self) -> None:  # the handle is the Output's to close
        if not self.shut:
            self.handle.flush()
        self.closed = True


def _remove(path: str) -> None:
    with suppress(OSError):
        os.unlink(path)


def _write_all(handle: BinaryIO, data: Any) -> None:
    """All of `data`, or an OSError: a buffered file writes a large block straight through
    and, when the disk fills during it, gives back the part it wrote without raising (the
    next write is the one that fails)."""
    written = handle.write(data)
    if written is None or written >= len(data):
        return
    view = memoryview(data).cast("B")[written:]
    while view:
        written = handle.write(view)
        if not written:
            raise OSError(errno.EIO, "the write made no progress")
        view = view[written:]
