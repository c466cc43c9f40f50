"""The `citemark` command (also `python -m citemark`).

    citemark extract [FILE ...]   one JSON object per input: {"file", "citations"}
    citemark strip [FILE ...]     each input without its citation markers

FILE defaults to standard input ("-").  Exit codes: 0 success, 2 bad usage or an input
that cannot be read (the message names it; the other inputs are still processed).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from . import IMPLEMENTATION, __version__, extract_citations, strip_citations

EXIT_BAD_INPUT = 2


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="citemark",
        description="Find, extract and strip the citation markers of OpenAI model answers.",
        epilog="Exit codes: 0 success; 2 bad usage or an unreadable input (named on stderr).",
    )
    parser.add_argument(
        "--version", action="version", version=f"citemark {__version__} ({IMPLEMENTATION})"
    )
    parser.add_argument("command", choices=("extract", "strip"))
    parser.add_argument("files", nargs="*", default=["-"], metavar="FILE")
    parser.add_argument(
        "--family",
        action="append",
        dest="families",
        metavar="NAME",
        help="marker family to accept (repeatable; default: cite)",
    )
    args = parser.parse_args(argv)
    families = tuple(args.families or ("cite",))

    status = 0
    for path in args.files:
        try:
            text = _read(path)
        except (OSError, UnicodeDecodeError) as error:
            print(f"citemark: cannot read {path}: {error}", file=sys.stderr)
            status = EXIT_BAD_INPUT
            continue
        citations = extract_citations(text, families=families)
        if args.command == "extract":
            print(json.dumps({"file": path, "citations": citations}, ensure_ascii=False))
        else:
            sys.stdout.write(strip_citations(text, citations))
    return status
