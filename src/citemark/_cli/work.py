"""The work on one task, in a worker (or in the main process at -j 1): a text file, a chunk
of JSONL lines or a Parquet record batch in, its `Result` out (output bytes or a record batch,
counts, the bad rows skipped or the one that stops the run).

This module is what a worker imports (the forkserver loads it once for all of them); bad
rows are named here, by file and line, and the rules that no row is lost live in `Result`:
rows out = rows in - rows reported as skipped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, NamedTuple

from .. import extract_many
from .commands import TEXT_COMMANDS, Job, cleans_in_pass
from .common import InputChanged, Origin
from .jsonl import why
from .stats import Stats


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


class FileSlice(NamedTuple):
    """Bytes of a regular file, read by the worker that processes them (no trip through a
    pipe)."""

    path: str
    offset: int
    length: int
    # 0: whole lines the reader counted and cut; else uncounted lines, which the worker cuts
    # in pieces of at most this many (`_uncounted`), as the reader would have
    most: int = 0
    origin: Origin | None = None  # the file the reader opened (None: not checked)

    def read(self) -> bytes:
        with open(self.path, "rb") as handle:
            if self.origin is not None:
                self.origin.check(self.path, handle)
            handle.seek(self.offset)
            data = handle.read(self.length)
        if len(data) != self.length:
            raise InputChanged(f"{self.path}: it shrank while it was being read")
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
        result.output = json_line({"file": task.file, "citations": citations})


def _uncounted(job: Job, task: Task, result: Result, most: int) -> None:
    """JSONL lines of a text command that the reader did not count: cut here in pieces of at
    most `most` lines (what bounds a chunk's Python objects), each done as a task of its own,
    its rows numbered from the task's first (`run` renumbers them)."""
    data: bytes = task.payload
    outputs = []
    first = 0
    for start, end, lines in jsonl_kernel().line_cuts(data, len(data), most):
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
    kernel = jsonl_kernel()
    path = job.field_path
    if job.command in TEXT_COMMANDS:
        many = job.text_many()
        if TEXT_COMMANDS[job.command].start_only:
            families = tuple(family.encode("utf-8", "surrogatepass") for family in job.families)
            out, good, blanks, bad = kernel.strip_lines(data, path, many, job.skip_bad, families)
        elif cleans_in_pass(job):
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
    return jsonl_kernel().citation_lines(file, rows, citations)  # type: ignore[no-any-return]


def jsonl_kernel() -> Any:
    from .jsonl import kernel

    return kernel()


def json_line(value: Any) -> bytes:
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
    try:
        _parquet_rows(job, task, result, every_column=False)
    except UnicodeDecodeError:
        # A column written as JSON holds a string that is not UTF-8: its rows are found, and
        # the batch is done again without them (looked for only then: a check of every
        # column would cost every batch a pass over it).
        result.skips, result.error, result.output = [], None, None
        _parquet_rows(job, task, result, every_column=True)


def _parquet_rows(job: Job, task: Task, result: Result, every_column: bool) -> None:
    import pyarrow as pa

    from .. import arrow

    batch = task.payload
    first = task.first_row
    assert first is not None  # a Parquet batch's rows are counted by its reader
    index = batch.schema.get_field_index(job.column)
    if pa.types.is_dictionary(batch.schema.field(index).type):
        # Dictionary-encoded texts (pandas' category) are done as their values; strip's
        # Parquet output is cast back to the file's schema when written (Output.write).
        decoded = batch.column(index).dictionary_decode()
        batch = batch.set_column(index, batch.schema.field(index).with_type(decoded.type), decoded)
    done = _arrow_first(job, batch.column(index))
    bad = _bad_rows(batch, index, done is None, every_column)
    if bad:
        # A named bad row, as in JSONL: stop before it, or leave it out with --skip-bad.
        done = None  # (it has a row for every row of the batch)
        for row in sorted(bad):
            problem = (task.file, first + row + 1, f"column {bad[row]!r} is not UTF-8")
            if not job.skip_bad:
                result.error = problem
                batch = batch.slice(0, row)
                break
            result.skips.append(problem)
        else:
            batch = _without_rows(batch, sorted(bad))
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
            result.output = b"".join(json_line(row) for row in _json_rows(batch))
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


def _bad_rows(batch: Any, index: int, text_column: bool, others: bool) -> dict[int, str]:
    """The rows of a batch that cannot be read, each with the first column that says so: the
    text column's that are not UTF-8 (when `text_column`: none when a kernel read them all)
    and, with `others` (rows written as JSON), any other column's (strings that are not
    UTF-8, at any depth), which JSON cannot hold."""
    bad: dict[int, str] = {}
    names = batch.schema.names
    columns = [index] if text_column else []
    if others:
        columns += [other for other in range(batch.num_columns) if other != index]
    for at in sorted(columns):
        for row in _not_utf8(batch.column(at)):
            bad.setdefault(row, names[at])
    return bad


def _without_rows(batch: Any, rows: list[int]) -> Any:
    """batch without `rows` (ascending): its other rows' slices put together, as a filter
    would (which has no kernel for string_view columns)."""
    import pyarrow as pa

    pieces, start = [], 0
    for row in rows:
        if row > start:
            pieces.append(batch.slice(start, row - start))
        start = row + 1
    if start < batch.num_rows:
        pieces.append(batch.slice(start))
    if not pieces:
        return batch.slice(0, 0)
    # (pa.concat_batches would do, from pyarrow 19 on; one batch back from a table, before)
    (whole,) = pa.Table.from_batches(pieces, schema=batch.schema).combine_chunks().to_batches()
    return whole


def _not_utf8(column: Any) -> list[int]:
    """The rows of a column whose strings are not UTF-8 (Arrow's rule, which a file written
    by another tool may break): none, after one check in C, in the common case."""
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
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN or infinity (json.dumps would write them all the same)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)  # dates, decimals, ...
