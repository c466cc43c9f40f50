"""`citemark lint`: the checks of `citemark.validate` from the command line.

    citemark lint ANSWER.txt --sources SOURCES.json [--style tool-lines]
    citemark lint LOG.jsonl --field response.text --sources-field response.sources
    citemark lint LOG.parquet --column output_text --sources-column sources

A FILE is one answer; with --field PATH it is JSONL, one answer a line at the dotted PATH;
with --column NAME it is Parquet, one answer a row in the string column NAME.
Sources are a JSON object mapping ids to source objects (`Registry.to_json`), or a list of
objects with an "id": from --sources FILE for every answer, or per row from the JSONL field
--sources-field PATH (Parquet: the string column --sources-column NAME).  Without sources,
the checks that need them are skipped.

Diagnostics are printed one a line (`FILE:LINE:COLUMN: severity code: message`; JSONL:
`FILE:ROW_LINE (answer LINE:COLUMN): ...`; Parquet: `FILE:row ROW (answer LINE:COLUMN)`,
ROW 0-based), then a table of counts; --json prints one
JSON object instead.  Exit codes: 0 nothing at or above --fail-on (default: error); 1
something was; 2 bad usage or unreadable input (a file, a sources file or a JSONL row that
cannot be read is named, with its line, on standard error; the other inputs are still
checked).
"""

from __future__ import annotations

import argparse
import json
import sys
from bisect import bisect_right
from codecs import BOM_UTF8
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from ._cli.common import add_family, guarded, report
from ._cli.jsonl import BadRow, any_value_at, parse_path, value_at
from ._core.grammar import DEFAULT_FAMILIES, LINE_BREAK_RE
from .parser import Parser
from .prompt import STYLES
from .sources import Registry
from .validate import CODES, Diagnostic, validate

__all__ = ["main"]

EXIT_OK = 0
EXIT_FOUND = 1
EXIT_BAD_INPUT = 2


class Unreadable(Exception):
    """An input that cannot be checked: the message names the file and, where it can, the
    line."""


@dataclass
class Report:
    answers: int = 0
    citations: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    rows: list[dict[str, Any]] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    null_answers: int = 0  # JSONL rows whose answer is null: rows without text
    blank_lines: int = 0  # blank JSONL lines: no rows


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="citemark lint",
        description="Check model answers: citations against their sources, marker syntax, "
        "and where citations are placed.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """lint's options, on its own parser or on `citemark lint`'s."""

    parser.epilog = __doc__.split("\n\n", 2)[2] if __doc__ else None
    parser.add_argument("files", nargs="*", default=["-"], metavar="FILE")
    parser.add_argument("--sources", metavar="FILE", help="JSON: id -> source object")
    rows = parser.add_mutually_exclusive_group()
    rows.add_argument("--field", metavar="PATH", help="JSONL input: dotted path to the answer")
    rows.add_argument("--column", metavar="NAME", help="Parquet input: the answer column")
    parser.add_argument(
        "--sources-field", metavar="PATH", help="JSONL input: dotted path to the row's sources"
    )
    parser.add_argument(
        "--sources-column", metavar="NAME", help="Parquet input: the row's sources (JSON text)"
    )
    parser.add_argument(
        "--style", choices=STYLES, help="the prompt's citation style (default: none)"
    )
    add_family(parser)
    parser.add_argument(
        "--fail-on",
        choices=("error", "warning"),
        default="error",
        help="lowest severity that makes the exit code 1 (default: error)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object on standard output")


def main(argv: Sequence[str] | None = None) -> int:
    return run(_arguments(), sys.argv[1:] if argv is None else list(argv))


def run(arguments: argparse.ArgumentParser, argv: Sequence[str]) -> int:
    """lint with `arguments` (a parser that `add_arguments` filled) on `argv`.  A write error
    and an interrupt are handled as every citemark command handles them."""

    args = arguments.parse_intermixed_args(argv)
    if args.sources_field is not None and args.field is None:
        arguments.error("--sources-field reads JSONL rows: give --field too")
    if args.sources_column is not None and args.column is None:
        arguments.error("--sources-column reads Parquet rows: give --column too")
    per_row = args.sources_field is not None or args.sources_column is not None
    if args.sources and per_row:
        arguments.error("give --sources or per-row sources, not both")
    try:
        field_path = parse_path(args.field) if args.field is not None else ()
        sources_path = parse_path(args.sources_field) if args.sources_field is not None else ()
    except ValueError as error:
        arguments.error(str(error))
    code = guarded(
        lambda: _check(args, field_path, sources_path),
        None,
        report,
    )
    return code[0] if code[0] is not None else code[1]


def _check(
    args: argparse.Namespace, field_path: tuple[str, ...], sources_path: tuple[str, ...]
) -> int:
    parser = Parser(tuple(args.families or DEFAULT_FAMILIES))
    report = Report()
    shared: Registry | None = None
    if args.sources:
        try:
            shared = _load_sources(args.sources)
        except Unreadable as error:
            _complain(str(error))
            return EXIT_BAD_INPUT
    for file in args.files:
        try:
            if field_path:
                _lint_jsonl(file, field_path, sources_path, shared, parser, args, report)
            elif args.column is not None:
                _lint_parquet(file, shared, parser, args, report)
            else:
                text = _read(file).decode("utf-8")
                _lint(text, shared, parser, args, report, file=file)
        except UnicodeDecodeError as error:
            report.unreadable.append(f"{file}: not UTF-8 (byte {error.start})")
            _complain(report.unreadable[-1])
        except Unreadable as error:
            report.unreadable.append(str(error))
            _complain(str(error))
    out = sys.stdout
    if args.json:
        _write_json(report, out)
    else:
        _write_table(report, out)
    out.flush()
    if report.unreadable:
        return EXIT_BAD_INPUT
    failing = ("error",) if args.fail_on == "error" else ("error", "warning")
    found = any(CODES[code] in failing for code in report.counts)
    return EXIT_FOUND if found else EXIT_OK


def _complain(message: str) -> None:
    report(f"citemark lint: {message}")


def _read(file: str) -> bytes:
    try:
        if file == "-":
            return sys.stdin.buffer.read()
        with open(file, "rb") as handle:
            return handle.read()
    except OSError as error:
        raise Unreadable(f"{file}: {error.strerror or error}") from None


def _load_sources(file: str) -> Registry:
    try:
        data = json.loads(_read(file).decode("utf-8"))
    except UnicodeDecodeError as error:
        raise Unreadable(f"{file}: not UTF-8 (byte {error.start})") from None
    except json.JSONDecodeError as error:
        raise Unreadable(f"{file}:{error.lineno}: invalid JSON: {error.msg}") from None
    except RecursionError:  # (json.loads recurses once per level)
        raise Unreadable(f"{file}: its JSON nests too deep") from None
    try:
        return Registry.from_json(data)
    except (TypeError, ValueError) as error:
        raise Unreadable(f"{file}: bad sources: {error}") from None


def _rows(file: str, report: Report) -> Iterator[tuple[int, bytes]]:
    """(line number, the line) for each non-blank line; blank lines are counted.  A UTF-8
    byte order mark that starts the input is skipped, as the other commands skip it."""
    data = _read(file)
    if data.startswith(BOM_UTF8):
        data = data[len(BOM_UTF8) :]
    lines = data.split(b"\n")
    if data.endswith(b"\n") or not data:
        lines.pop()  # what follows the last newline is no line
    for number, raw in enumerate(lines, 1):
        if not raw.strip(b" \t\r"):
            report.blank_lines += 1
            continue
        yield number, raw


def _lint_jsonl(
    file: str,
    field_path: tuple[str, ...],
    sources_path: tuple[str, ...],
    shared: Registry | None,
    parser: Parser,
    args: argparse.Namespace,
    report: Report,
) -> None:
    for number, line in _rows(file, report):
        try:
            text = value_at(line, field_path)
            sources = shared
            if sources_path and text is not None:
                try:
                    sources = Registry.from_json(any_value_at(line, sources_path))
                except (TypeError, ValueError) as error:
                    if isinstance(error, BadRow):
                        raise
                    raise BadRow(f"bad sources: {error}") from None
        except BadRow as bad:
            report.unreadable.append(f"{file}:{number}: {bad}")
            _complain(report.unreadable[-1])
            continue
        if text is None:  # a row without text: nothing to check
            report.null_answers += 1
            continue
        _lint(text, sources, parser, args, report, file=file, row_line=number)


def _lint_parquet(
    file: str, shared: Registry | None, parser: Parser, args: argparse.Namespace, report: Report
) -> None:
    """Each row of the Parquet column `args.column`, its sources from `args.sources_column`."""
    try:
        import pyarrow.parquet as pq
    except ImportError as error:
        raise Unreadable(f"{file}: Parquet needs pyarrow ({error}): pip install pyarrow") from None
    columns = [args.column] + ([args.sources_column] if args.sources_column else [])
    try:
        table = pq.ParquetFile(_parquet_source(file))
        missing = [name for name in columns if name not in table.schema_arrow.names]
        if missing:
            raise Unreadable(
                f"{file}: no column {missing[0]!r} (it has {table.schema_arrow.names})"
            )
        batches = table.iter_batches(columns=columns)
        row = 0
        for batch in batches:
            answers = batch.column(0).to_pylist()
            sources = batch.column(1).to_pylist() if args.sources_column else None
            for index, text in enumerate(answers):
                where = f"row {row + index}"
                if text is None:
                    report.null_answers += 1
                    continue
                if not isinstance(text, str):
                    raise Unreadable(f"{file}: column {args.column!r} is not a string column")
                registry = shared
                if sources is not None and sources[index] is not None:
                    try:
                        registry = Registry.from_json(sources[index])
                    except (TypeError, ValueError) as error:
                        report.unreadable.append(f"{file}:{where}: bad sources: {error}")
                        _complain(report.unreadable[-1])
                        continue
                _lint(text, registry, parser, args, report, file=file, row_line=where)
            row += len(answers)
    except (OSError, ValueError, KeyError) as error:  # pyarrow's errors derive from these
        raise Unreadable(f"{file}: cannot read Parquet column {args.column!r}: {error}") from None


def _parquet_source(file: str) -> Any:
    """A path, or standard input read whole (Parquet's footer is at the end)."""
    if file != "-":
        return file
    import pyarrow as pa

    return pa.BufferReader(sys.stdin.buffer.read())


def _lint(
    text: str,
    sources: Registry | None,
    parser: Parser,
    args: argparse.Namespace,
    report: Report,
    *,
    file: str,
    row_line: int | str | None = None,
) -> None:
    report.answers += 1
    report.citations += sum(1 for _ in parser.finditer(text))
    diagnostics = validate(text, sources, parser=parser, style=args.style)
    breaks = [m.end() for m in LINE_BREAK_RE.finditer(text)]
    for diagnostic in diagnostics:
        report.counts[diagnostic.code] += 1
        line, column = _position(breaks, diagnostic.start)
        row: dict[str, Any] = {"file": file}
        if row_line is not None:
            row["row_line"] = row_line
        row.update(line=line, column=column, **diagnostic.to_json())
        report.rows.append(row)
        if not args.json:
            sys.stdout.write(_one_line(row, diagnostic) + "\n")


def _position(breaks: list[int], offset: int) -> tuple[int, int]:
    """1-based line and column (code points) of `offset`."""
    index = bisect_right(breaks, offset)
    return index + 1, offset - (breaks[index - 1] if index else 0) + 1


def _one_line(row: dict[str, Any], diagnostic: Diagnostic) -> str:
    if "row_line" in row:
        where = f"{row['file']}:{row['row_line']} (answer {row['line']}:{row['column']})"
    else:
        where = f"{row['file']}:{row['line']}:{row['column']}"
    return f"{where}: {diagnostic.severity} {diagnostic.code}: {diagnostic.message}"


def _totals(report: Report) -> tuple[int, int]:
    errors = sum(n for code, n in report.counts.items() if CODES[code] == "error")
    return errors, sum(report.counts.values()) - errors


def _write_table(report: Report, out: TextIO) -> None:
    errors, warnings = _totals(report)
    if report.counts:
        width = max(len("code"), *map(len, report.counts))
        out.write(f"\n{'code':<{width}}  severity  count\n")
        ordered = sorted(report.counts.items(), key=lambda item: (CODES[item[0]], item[0]))
        for code, count in ordered:
            out.write(f"{code:<{width}}  {CODES[code]:<8}  {count:>5}\n")
        out.write("\n")
    if report.null_answers or report.blank_lines:
        out.write(
            f"not answers: {_plural(report.null_answers, 'null answer')} (rows without text), "
            f"{_plural(report.blank_lines, 'blank line')}\n"
        )
    out.write(
        f"{_plural(report.answers, 'answer')}, {_plural(report.citations, 'citation')}: "
        f"{_plural(errors, 'error')}, {_plural(warnings, 'warning')}"
        + (f"; {_plural(len(report.unreadable), 'unreadable input')}" if report.unreadable else "")
        + "\n"
    )


def _write_json(report: Report, out: TextIO) -> None:
    errors, warnings = _totals(report)
    document = {
        "diagnostics": report.rows,
        "summary": {
            "answers": report.answers,
            "citations": report.citations,
            "errors": errors,
            "warnings": warnings,
            "codes": dict(sorted(report.counts.items())),
        },
        "unreadable": report.unreadable,
        # JSONL rows that are not answers: a null answer (a row without text), a blank line
        "not_answers": {"null": report.null_answers, "blank_lines": report.blank_lines},
    }
    out.write(_indented(document) + "\n")


# A diagnostic row as json.dumps(indent=2) writes it inside the document, but by the C
# encoder (an indent makes json use its Python one, several microseconds a value): a row's
# values are strings and numbers, so the separators alone give the same text.
_ROW = json.JSONEncoder(ensure_ascii=False, separators=(",\n      ", ": ")).encode


def _indented(document: dict[str, Any]) -> str:
    """json.dumps(document, ensure_ascii=False, indent=2), its diagnostics (the first key,
    flat rows) written row by row by the C encoder."""
    rows = document["diagnostics"]
    text = json.dumps({**document, "diagnostics": []}, ensure_ascii=False, indent=2)
    if not rows:
        return text
    written = ",\n    ".join("{\n      " + _ROW(row)[1:-1] + "\n    }" for row in rows)
    return text.replace('"diagnostics": []', '"diagnostics": [\n    ' + written + "\n  ]", 1)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


if __name__ == "__main__":
    sys.exit(main())
