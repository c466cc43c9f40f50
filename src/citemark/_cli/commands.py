"""What the row commands do: the text -> text commands (strip, clean), one entry each, and
the `Job` that says what to do with every row (sent with each task to the workers)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from importlib import import_module
from typing import Any

from .. import strip_many


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
                    "(citeturn0search0, U+FFFD, \\ue200 escapes, :contentReference[oaicite:N]) "
                    "and the Assistants API's 【4:0†source】",
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


def cleans_in_pass(job: Job) -> bool:
    """clean's rules are in the compiled pass, but --lenient's (Python regexes)."""
    return job.command == "clean" and not job.option("lenient")
