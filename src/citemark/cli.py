"""The `citemark` command (also `python -m citemark`).

    citemark extract [FILE ...]   the citations of each input, as JSON lines
    citemark strip [FILE ...]     each input without its citation markers
    citemark stats [FILE ...]     counts: citations per family and per row, malformed markers,
                                  id kinds; a table, or --json
    citemark lint [FILE ...]      check answers against their sources and the citation rules
                                  (`citemark lint --help`; see citemark.lint)

FILE defaults to standard input ("-").  A FILE is one text, unless --field PATH (JSONL: one JSON
object a line, the text at a dotted PATH in each) or --column NAME (Parquet) says it holds rows.
See `citemark --help` for the options and the exit codes.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from . import IMPLEMENTATION, __version__

EXIT_OK = 0
EXIT_SKIPPED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130

EPILOG = """\
input:
  FILE ...           texts, one document a file (read whole); "-" is standard input
  --field PATH       JSONL: one JSON object a line, the text at PATH (a.b.c) in each
  --column NAME      Parquet: the string column NAME (pip install citemark[arrow])

output (standard output, or --output FILE):
  strip    text -> text; JSONL -> the same lines with the field cleaned, every other byte
           as it was; Parquet -> Parquet with the column cleaned (or JSONL with --format jsonl)
  extract  JSON lines: {"file", "citations"} per text file, {"file", "row", "citations"}
           per JSONL/Parquet row (row: 0-based; JSONL line number - 1); or Parquet with
           --format parquet / --output FILE.parquet (columns file, row, citations)
  stats    a table, or one JSON object with --json

exit codes:
  0    success: every input row was written
  1    success with --skip-bad, but some rows were skipped (each one named on stderr)
  2    bad usage; an input that cannot be read (named; the other inputs are still done);
       or a bad row (invalid JSON, not UTF-8, missing or non-string field) without
       --skip-bad: the run stops there, naming file and line
  130  interrupted
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="citemark",
        description="Find, extract and strip the citation markers of OpenAI model answers.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"citemark {__version__} ({IMPLEMENTATION})"
    )
    parser.add_argument("command", choices=("extract", "strip", "stats"))
    parser.add_argument("files", nargs="*", default=["-"], metavar="FILE")
    parser.add_argument(
        "--family",
        action="append",
        dest="families",
        metavar="NAME",
        help="marker family to accept (repeatable; default: cite)",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--field", metavar="PATH", help="JSONL input: dotted path to the text")
    source.add_argument("--column", metavar="NAME", help="Parquet input: the text column")
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write here instead of standard output"
    )
    parser.add_argument(
        "--format",
        choices=("text", "jsonl", "parquet"),
        help="output format (default: from --output's suffix, else as the input; extract: jsonl)",
    )
    parser.add_argument(
        "-j",
        "--jobs",
        type=_positive,
        metavar="N",
        help="worker processes (default: all cores); output order is input order",
    )
    parser.add_argument(
        "--chunk-rows",
        type=_positive,
        default=None,
        metavar="N",
        help="rows per chunk handed to a worker (default: 4096)",
    )
    parser.add_argument(
        "--skip-bad",
        action="store_true",
        help="skip bad rows (each one reported on stderr) instead of stopping",
    )
    parser.add_argument("--json", action="store_true", help="stats: one JSON object")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    return parser


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {number}")
    return number


def _formats(args: argparse.Namespace, parser: argparse.ArgumentParser) -> tuple[str, str]:
    """(input format, output format), or a usage error for what cannot be done."""
    input_format = "jsonl" if args.field else "parquet" if args.column else "text"
    if args.command == "stats":
        if args.format:
            parser.error("stats writes a table or --json, not --format")
        return input_format, "stats"
    output_format = args.format
    if output_format is None and args.output:
        suffix = os.path.splitext(args.output)[1].lower()
        output_format = {".parquet": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl"}.get(suffix)
    if output_format is None:
        output_format = input_format if args.command == "strip" else "jsonl"
    allowed = {
        "strip": {"text": {"text"}, "jsonl": {"jsonl"}, "parquet": {"parquet", "jsonl"}},
        "extract": {kind: {"jsonl", "parquet"} for kind in ("text", "jsonl", "parquet")},
    }[args.command][input_format]
    if output_format not in allowed:
        parser.error(
            f"{args.command} cannot write {output_format} from {input_format} input "
            f"(it writes {' or '.join(sorted(allowed))})"
        )
    if output_format == "parquet" and args.output in (None, "-") and sys.stdout.isatty():
        parser.error("Parquet output goes to a file (--output FILE.parquet) or a pipe")
    return input_format, output_format


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["lint"]:  # a command with options of its own
        from .lint import main as lint

        return lint(argv[1:])
    parser = _parser()
    # intermixed: options may come between the file names (`stats --json log.jsonl`)
    args = parser.parse_intermixed_args(argv)
    families = tuple(args.families or ("cite",))
    input_format, output_format = _formats(args, parser)
    if args.json and args.command != "stats":
        parser.error("--json is for stats")
    if args.output not in (None, "-") and os.path.exists(args.output):
        for file in args.files:
            if file != "-" and os.path.exists(file) and os.path.samefile(file, args.output):
                parser.error(f"--output {args.output} is also an input: it would be truncated")
    if "parquet" in (input_format, output_format):
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            parser.error("Parquet needs pyarrow: pip install 'citemark[arrow]'")

    from . import _batch, _progress
    from ._jsonl import parse_path

    try:
        field_path = parse_path(args.field) if args.field else ()
    except ValueError as error:
        parser.error(str(error))
    job = _batch.Job(
        command=args.command,
        input_format=input_format,
        output_format=output_format,
        families=families,
        field_path=field_path,
        column=args.column or "",
        skip_bad=args.skip_bad,
    )

    def report(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    inputs = _batch.Inputs(job, list(args.files), args.chunk_rows or _batch.CHUNK_ROWS, report)
    schema = None
    if output_format == "parquet":
        schema = _batch.citation_schema() if args.command == "extract" else _parquet_schema(args)
        if schema is None:
            return EXIT_BAD_INPUT
    to_stdout = args.output in (None, "-")
    output = _batch.Output(None if args.command == "stats" else args.output, output_format, schema)
    if args.command == "stats":
        output = _batch.Output(None, "jsonl")  # nothing is written while rows are read
    progress = _progress.Progress(
        inputs.total_bytes(), enabled=_progress.wanted(args.quiet, to_stdout)
    )
    try:
        outcome = _batch.run(
            job,
            inputs,
            output,
            jobs=args.jobs or _batch.default_jobs(),
            progress=progress,
            report=report,
        )
    except KeyboardInterrupt:
        report("citemark: interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (| head): not an error of ours; keep Python quiet at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except OSError as error:
        report(f"citemark: cannot write {args.output or 'standard output'}: {error}")
        return EXIT_BAD_INPUT
    if outcome.stats is not None and not outcome.stopped:
        _write_stats(outcome.stats, families, args)
    if outcome.skipped:
        written = outcome.rows - outcome.skipped
        report(f"citemark: {outcome.skipped:,} bad row(s) skipped, {written:,} written")
    if outcome.stopped or outcome.unreadable:
        return EXIT_BAD_INPUT
    return EXIT_SKIPPED if outcome.skipped else EXIT_OK


def _parquet_schema(args: argparse.Namespace) -> object:
    """strip to Parquet: the schema of the first input, which every input must share."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = None
    for file in args.files:
        try:
            found = pq.read_schema(file)
        except (pa.ArrowException, OSError) as error:
            print(f"citemark: cannot read {file}: {error}", file=sys.stderr)
            return None
        if schema is None:
            schema = found
        elif not found.equals(schema):
            print(f"citemark: {file}: its columns differ from {args.files[0]}'s", file=sys.stderr)
            return None
    return schema


def _write_stats(stats: object, families: tuple[str, ...], args: argparse.Namespace) -> None:
    import json

    from ._stats import Stats

    assert isinstance(stats, Stats)
    text = (
        json.dumps(stats.as_json(families), ensure_ascii=False, indent=2) + "\n"
        if args.json
        else stats.as_table(families)
    )
    if args.output in (None, "-"):
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(text)
