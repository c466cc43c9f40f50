"""Writing the results, in the main process: bytes to a file or standard output, or record
batches to a Parquet file."""

from __future__ import annotations

import errno
import sys
from typing import Any, BinaryIO


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
        # JSONL written so far ends inside a line: the last line of an input that had no line
        # feed, which the next input's rows must not continue.
        self._open_line = False

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
            if not output:
                return
            if self._open_line:
                _write_all(self._handle, b"\n")
            _write_all(self._handle, output)
            self._open_line = self.format == "jsonl" and bytes(output[-1:]) != b"\n"

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
