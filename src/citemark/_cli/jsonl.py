"""JSONL rows: the value at a dotted path in each line, and the names of bad rows.

The work is done by the JSONL kernel, `jsonl_c` (compiled) or its twin `jsonl_py`, chosen as
the scanner is (`_kernels.loader`): `locate` validates one line as `json.loads` reads it and
gives the byte span of the string at the path, without building Python objects for the rest
of the line; `text_lines` / `strip_lines` / `map_lines` / `clean_lines` do that for a block of
lines, so that the text of each row can be stripped (or cleaned) and spliced back with every
other byte as it was.

This module turns the kernel's codes into the messages of bad rows (the same for both
kernels: they are made here, from the line), and holds the helpers shared by the commands.
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

from .._kernels.loader import Implementation, load


def kernel(implementation: Implementation | None = None) -> ModuleType:
    """The JSONL kernel of `implementation` (None: the active one)."""
    return load("jsonl", implementation)


# The kernel's result codes and value kinds: one numbering, the kernels' own (both give the
# same; tests/cli/test_jsonl.py checks it).
FOUND, NULL_TEXT, NOT_STRING, MISSING, INVALID = range(5)
_KIND_NOUN = ("an object", "a list", "a string", "null", "an integer", "a number", "a boolean")
_MISSING_NOUN = ("an object without it", *_KIND_NOUN[1:])


class BadRow(ValueError):
    """A line that is not JSON, or has no usable text at the path."""


def parse_path(path: str) -> tuple[str, ...]:
    """`response.output_text` -> ("response", "output_text"); an empty path or key is
    refused."""
    keys = tuple(path.split("."))
    if not path or not all(keys):
        raise ValueError(f"not a dotted field path: {path!r} (write it as key.key.key)")
    return keys


def why(line: bytes, path: tuple[str, ...], code: int, a: int, b: int) -> str:
    """The message for the bad row `line`, from the code `locate` gave for it."""
    dotted = ".".join(path)
    if code == NOT_STRING:
        return f"field {dotted!r} is not a string: it is {_KIND_NOUN[a]}"
    if code == MISSING:
        where = ".".join(path[:a]) or "the line"
        return f"no field {dotted!r} ({where} is {_MISSING_NOUN[b]})"
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        return f"not UTF-8 ({error.reason} at byte {error.start})"
    try:
        json.loads(text)
    except RecursionError:
        return "invalid JSON: nested too deep to say where"
    except ValueError as error:
        return f"invalid JSON: {error}"
    return "invalid JSON"


def value_at(line: bytes, path: tuple[str, ...]) -> Any:
    """The text (str, or None for null) at `path` in the JSON line; BadRow when there is
    none.  Any depth: a line nested deeper than Python's recursion limit is read all the
    same."""
    code, a, b = kernel().locate(line, path)
    if code == NULL_TEXT:
        return None
    if code != FOUND:
        raise BadRow(why(line, path, code, a, b))
    token = line[a:b]
    if b"\\" not in token:
        return token[1:-1].decode("utf-8")
    return json.decoder.scanstring(token.decode("utf-8"), 1, True)[0]  # type: ignore[attr-defined]


def any_value_at(line: bytes, path: tuple[str, ...]) -> Any:
    """The value (any JSON) at `path`: for what is not a text, such as lint's sources."""
    code, a, b = kernel().locate(line, path)
    if code in (FOUND, NULL_TEXT):
        return value_at(line, path)
    if code != NOT_STRING:
        raise BadRow(why(line, path, code, a, b))
    try:
        value = json.loads(line)
    except RecursionError:
        raise BadRow("invalid JSON: nested too deep to read") from None
    for key in path:
        value = value[key]
    return value
