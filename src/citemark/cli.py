"""The `citemark` command (also `python -m citemark`).

    citemark extract [FILE ...]   the citations of each input, as JSON lines
    citemark strip [FILE ...]     each input without its citation markers
    citemark clean [FILE ...]     each input cleaned for display (citemark.display)
    citemark stats [FILE ...]     counts: citations per family and per row, malformed markers,
                                  id kinds; a table, or --json
    citemark lint [FILE ...]      check answers against their sources and the citation rules

FILE defaults to standard input ("-").  A FILE is one text, unless --field PATH (JSONL: one JSON
object a line, the text at a dotted PATH in each) or --column NAME (Parquet) says it holds rows.
`citemark COMMAND --help` gives each command's options; `citemark --help` the exit codes.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from collections.abc import Sequence
from importlib import import_module
from typing import Any

from . import IMPLEMENTATION, __version__
from ._cli.common import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SKIPPED,
    add_family,
    guarded,
    report,
)
from ._core.grammar import DEFAULT_FAMILIES
from ._kernels import loader
from ._kernels.loader import UNBUILT

EPILOG = """\
input:
  FILE ...           texts, one document a file (read whole); "-" is standard input
  --field PATH       JSONL: one JSON object a line, the text at PATH (a.b.c) in each;
                     blank lines are not rows (counted, and copied by strip and clean)
  --column NAME      Parquet: the string column NAME ({parquet_hint})
  a null text (JSON null, Parquet null) is a row without text in every command

output (standard output, or --output FILE):
  strip, clean  text -> text; JSONL -> the same lines with the field changed, every other
           byte as it was; Parquet -> Parquet with the column changed (or JSONL with --format
           jsonl); Parquet is never written to a terminal
  extract  JSON lines: {{"file", "citations"}} per text file, {{"file", "row", "citations"}}
           per JSONL/Parquet row (row: 0-based; JSONL line number - 1); or Parquet with
           --format parquet / --output FILE.parquet (columns file, row, citations)
  stats    a table, or one JSON object with --json
  lint     diagnostics, then a table (its own exit codes: citemark lint --help)

rows are processed by --jobs worker processes (default: all cores), output in input order.

exit codes:
  0    success: every input row was written
  1    success with --skip-bad, but some rows were skipped (each one named on stderr)
  2    bad usage; an input that cannot be read (named; the other inputs are still done);
       a write error (a full disk); a bad row (invalid JSON, not UTF-8, missing or
       non-string field) without --skip-bad: the run stops there, naming file and line;
       an input that shrank while it was read, or a worker process that died
  130  interrupted (the output holds whole lines: those of the rows done before; a
       Parquet output is not written)
  143  stopped by SIGTERM (kill, timeout, a service manager), as Ctrl-C stops a run
  141  the reader of standard output went away (`citemark ... | head`): the run stops
       quietly, with the status of a filter that SIGPIPE ended (as `cat` and `grep`)
"""

COMMANDS = ("extract", "strip", "clean", "stats", "lint")

PURE_WARNING = f"citemark: warning: {UNBUILT}"


def _unbuilt() -> bool:
    """Whether the pure twin runs because the compiled kernels are not built (not because
    CITEMARK_IMPLEMENTATION asked for it): what PURE_WARNING is about."""
    return IMPLEMENTATION != "cython" and loader.REQUESTED is None


def parquet_hint() -> str:
    """How to get pyarrow: the extra when citemark itself came from an index (so that the
    extra resolves), else pyarrow by name (`citemark[arrow]` fails for a checkout)."""
    try:
        from importlib.metadata import distribution

        direct = distribution("citemark").read_text("direct_url.json")
    except Exception:  # not installed at all (a checkout on sys.path)
        direct = ""
    if direct is None:  # installed from an index: no direct_url.json
        return "pip install 'citemark[arrow]'"
    return "pip install pyarrow"


def _rows_options(parser: argparse.ArgumentParser, command: str) -> None:
    """The options of the row commands (extract, strip, clean, stats)."""
    from ._cli.commands import TEXT_COMMANDS

    parser.add_argument("files", nargs="*", default=["-"], metavar="FILE")
    if command == "clean":
        parser.add_argument("--family", action="append", dest="families", help=argparse.SUPPRESS)
    else:
        add_family(parser)
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--field", metavar="PATH", help="JSONL input: dotted path to the text")
    source.add_argument("--column", metavar="NAME", help="Parquet input: the text column")
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write here instead of standard output"
    )
    if command == "stats":
        parser.add_argument("--json", action="store_true", help="one JSON object, not a table")
    else:
        parser.add_argument(
            "--format",
            choices=("text", "jsonl", "parquet"),
            help="output format (default: from --output's suffix, else as the input; "
            "extract: jsonl)",
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
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    for flags, options in TEXT_COMMANDS[command].options if command in TEXT_COMMANDS else ():
        parser.add_argument(*flags, **options)


# Stands for parquet_hint() in help texts until one is printed: finding out how citemark was
# installed reads package metadata, a cost every run would pay for a text few runs show.
_HINT = "\x00parquet-hint\x00"


class _Parser(argparse.ArgumentParser):
    def format_help(self) -> str:
        text = super().format_help()
        return text.replace(_HINT, parquet_hint()) if _HINT in text else text


def _parsers(
    only: str | None = None,
) -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The parser and the subparser of every command (of `only`, when given)."""
    from ._cli.commands import TEXT_COMMANDS

    hint = _HINT
    parser: argparse.ArgumentParser = _Parser(
        prog="citemark",
        description="Find, extract, strip and clean the citation markers of OpenAI model "
        "answers; count them; check answers against their sources.",
        epilog=EPILOG.format(parquet_hint=hint),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"citemark {__version__} ({IMPLEMENTATION})"
        + ("" if not _unbuilt() else f"\n{PURE_WARNING}"),
    )
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=_Parser
    )
    about = {
        "extract": (
            "the citations of each input, as JSON lines (or Parquet)",
            "Extract the valid citation markers of each text, JSONL row or Parquet row.",
        ),
        "stats": (
            "counts: citations per family and per row, malformed markers, id kinds",
            "Count citations, malformed markers, families and id kinds over every row.",
        ),
        **{name: (command.help, command.description) for name, command in TEXT_COMMANDS.items()},
        "lint": (
            "check answers against their sources and the citation rules",
            "Check model answers: citations against their sources, marker syntax, "
            "and where citations are placed.",
        ),
    }
    subparsers: dict[str, argparse.ArgumentParser] = {}
    for name in COMMANDS if only is None else (only,):
        short, description = about[name]
        sub = commands.add_parser(
            name,
            help=short,
            description=description,
            epilog=None if name == "lint" else f"Parquet: {hint}.  Exit codes: citemark --help",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        if name == "lint":
            from .lint import add_arguments

            add_arguments(sub)
        else:
            _rows_options(sub, name)
        subparsers[name] = sub
    return parser, subparsers


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number is needed, not {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {number}")
    return number


def _split(argv: list[str], takes_value: set[str]) -> tuple[str | None, list[str]]:
    """(the command, the arguments without it): options given before the command (`citemark
    -q strip ...`) are its options too."""
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg in COMMANDS:
            return arg, argv[:index] + argv[index + 1 :]
        if arg == "--" or not arg.startswith("-"):
            return None, argv
        index += 2 if arg in takes_value else 1
    return None, argv


def _formats(args: argparse.Namespace, parser: argparse.ArgumentParser) -> tuple[str, str]:
    """(input format, output format), or a usage error for what cannot be done."""
    from ._cli.commands import TEXT_COMMANDS

    input_format = "jsonl" if args.field is not None else "parquet" if args.column else "text"
    if args.command == "stats":
        return input_format, "stats"
    output_format = args.format
    if output_format is None and args.output:
        suffix = os.path.splitext(args.output)[1].lower()
        output_format = {".parquet": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl"}.get(suffix)
    if output_format is None:
        output_format = input_format if args.command in TEXT_COMMANDS else "jsonl"
    if args.command in TEXT_COMMANDS:
        allowed = {"text": {"text"}, "jsonl": {"jsonl"}, "parquet": {"parquet", "jsonl"}}
    else:
        allowed = {kind: {"jsonl", "parquet"} for kind in ("text", "jsonl", "parquet")}
    if output_format not in allowed[input_format]:
        parser.error(
            f"{args.command} cannot write {output_format} from {input_format} input "
            f"(it writes {' or '.join(sorted(allowed[input_format]))})"
        )
    if output_format == "parquet" and args.output in (None, "-") and _is_terminal(sys.stdout):
        parser.error("Parquet output goes to a file (--output FILE.parquet) or a pipe")
    return input_format, output_format


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _clobbered_input(files: list[str], output: str | None) -> str | None:
    """Why the output is one of the inputs (None when it is none of them): `-o log.jsonl`
    would truncate an input before it is read, `< log.jsonl -o log.jsonl` too, and
    `>> log.jsonl` would read its own rows back for ever (as `cat` refuses to)."""
    try:
        if output in (None, "-"):
            written = os.fstat(sys.stdout.fileno())
            if not stat.S_ISREG(written.st_mode):
                return None  # a terminal or a pipe is never an input file
            where = "standard output"
        elif os.path.exists(output):
            written = os.stat(output)
            where = f"--output {output}"
        else:
            return None
    except (OSError, ValueError, AttributeError):  # (stdout closed, or not a real file)
        return None
    for file in files:
        try:
            read = os.fstat(sys.stdin.fileno()) if file == "-" else os.stat(file)
        except (OSError, ValueError, AttributeError):
            continue  # reported when it is opened
        if os.path.samestat(read, written):
            name = "standard input" if file == "-" else file
            return f"{where} is also an input ({name}): it would be overwritten while it is read"
    return None


def _looks_like_parquet(file: str) -> bool:
    if file == "-":
        return False
    if file.lower().endswith((".parquet", ".pq")):
        return True
    try:
        with open(file, "rb") as handle:
            return handle.read(4) == b"PAR1"
    except OSError:
        return False


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:  # Ctrl-C before the run takes it (the imports, the arguments)
        report("citemark: interrupted")
        return EXIT_INTERRUPTED


def _main(argv: Sequence[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # `citemark strip ...`: no option comes before the command, so only its own parser is
    # needed (lint's, which loads the linter, is built for lint and for the other forms).
    only = argv[0] if argv and argv[0] in COMMANDS and argv[0] != "lint" else None
    parser, subparsers = _parsers(only)
    takes_value = {
        flag
        for sub in subparsers.values()
        for action in sub._actions
        if action.nargs != 0 and action.option_strings
        for flag in action.option_strings
    }
    command, rest = _split(argv, takes_value)
    if command is None:
        parser.parse_args(argv)  # --help, --version, or the usage error naming the commands
        parser.error("a command is needed")
    sub = subparsers[command]
    if command == "lint":
        from .lint import run

        return run(sub, rest)
    # intermixed: options may come between the file names (`stats --json log.jsonl`); what
    # follows `--` is all files, which parse_intermixed_args mishandles (3.11, 3.12)
    if "--" in rest:
        at = rest.index("--")
        args = sub.parse_intermixed_args(rest[:at])
        given = args.files is not sub.get_default("files")  # (not the default, standard input)
        args.files = [*(args.files if given else []), *rest[at + 1 :]] or args.files
    else:
        args = sub.parse_intermixed_args(rest)
    args.command = command
    return _run_rows(args, sub)


def _run_rows(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ._cli import progress as _progress
    from ._cli.batch import run
    from ._cli.commands import TEXT_COMMANDS, Job
    from ._cli.inputs import CHUNK_ROWS, Inputs
    from ._cli.jsonl import parse_path
    from ._cli.outputs import Output
    from ._cli.work import citation_schema
    from ._cli.workers import default_jobs

    if args.command == "clean" and args.families:
        # clean removes the markers of every family: a --family there would do nothing.
        parser.error("clean removes the markers of every family; --family is for extract, "
                     "strip and stats")  # fmt: skip
    families = tuple(args.families or DEFAULT_FAMILIES)
    if args.field is not None:
        try:
            field_path = parse_path(args.field)
        except ValueError as error:
            parser.error(str(error))
    else:
        field_path = ()
    if args.column is not None and not args.column:
        parser.error("--column needs a column name")
    if args.field is None and not args.column:
        for file in args.files:
            if _looks_like_parquet(file):
                parser.error(f"{file} is a Parquet file: name the text column with --column NAME")
    input_format, output_format = _formats(args, parser)
    clobbered = _clobbered_input(args.files, args.output)
    if clobbered is not None:
        parser.error(clobbered)
    if args.output not in (None, "-"):
        # (stats writes at the end: a missing folder would be found after the whole log)
        folder = os.path.dirname(os.path.abspath(args.output))
        if not os.path.isdir(folder):
            parser.error(f"cannot write {args.output}: there is no folder {folder}")
    if "parquet" in (input_format, output_format):
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            parser.error(f"Parquet needs pyarrow: {parquet_hint()}")
    if args.command == "clean":
        try:
            import_module("citemark.display")
        except ImportError as error:
            parser.error(f"clean needs citemark.display, which this install lacks ({error})")
    own = TEXT_COMMANDS[args.command].options if args.command in TEXT_COMMANDS else ()
    options = tuple((spec["dest"], getattr(args, spec["dest"])) for _, spec in own)
    job = Job(
        command=args.command,
        input_format=input_format,
        output_format=output_format,
        families=families,
        field_path=field_path,
        column=args.column or "",
        skip_bad=args.skip_bad,
        options=options,
    )

    inputs = Inputs(job, list(args.files), args.chunk_rows or CHUNK_ROWS, report)
    schema = None
    if output_format == "parquet":
        schema = citation_schema() if args.command == "extract" else _parquet_schema(args)
        if schema is None:
            return EXIT_BAD_INPUT
    to_stdout = args.output in (None, "-")
    if args.command == "stats":
        output = Output(None, "jsonl")  # nothing is written while rows are read
    else:
        output = Output(args.output, output_format, schema)
    total = inputs.total_bytes()
    progress = _progress.Progress(total, enabled=_progress.wanted(args.quiet, to_stdout))
    inputs.report = progress.say  # (above the bar while it is drawn)

    def work() -> Any:
        return run(
            job,
            inputs,
            output,
            jobs=args.jobs or default_jobs(),
            progress=progress,
            report=progress.say,
        )

    outcome, code = guarded(work, args.output, report)
    if outcome is None:
        return code
    if outcome.stats is not None and not outcome.stopped:
        code = guarded(lambda: _write_stats(outcome.stats, families, args), args.output, report)[1]
        if code != EXIT_OK:
            return code
    if outcome.blanks:
        done = "copied" if args.command in TEXT_COMMANDS else "skipped"
        report(f"citemark: {outcome.blanks:,} blank line(s) {done} (not rows)")
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
        if file == "-":
            # (its schema is needed before the rows are read, and standard input reads once)
            report(
                f"citemark: {args.command} writes Parquet from a named file, not standard "
                "input (name the file, or write JSONL with --format jsonl)"
            )
            return None
        try:
            found = pq.read_schema(file)
        except (pa.ArrowException, OSError) as error:
            report(f"citemark: cannot read {file}: {error}")
            return None
        if schema is None:
            schema = found
        elif not found.equals(schema):
            report(f"citemark: {file}: its columns differ from {args.files[0]}'s")
            return None
    return schema


def _write_stats(stats: object, families: tuple[str, ...], args: argparse.Namespace) -> None:
    import json

    from ._cli.stats import Stats

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
