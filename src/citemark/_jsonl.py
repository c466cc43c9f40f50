"""One JSONL line: find the value at a dotted path, and its exact span in the line.

`locate` walks the objects along the path with the standard library's own (C) JSON scanner:
every member is decoded (so a line that `json.loads` rejects is rejected here too), and the
span of the value at the path is kept, so that `splice` can replace that value and nothing
else: every other byte of the line (key order, spacing, number spelling, escapes) stays
as it was.  Duplicate keys behave as in `json.loads`: the last one wins.
"""

from __future__ import annotations

import json
import re
from typing import Any

_decoder = json.JSONDecoder()
_scan_value = _decoder.scan_once
_scan_string = json.decoder.scanstring  # type: ignore[attr-defined]
_skip_space = re.compile(r"[ \t\n\r]*").match


class BadRow(ValueError):
    """A line that is not JSON, or has no usable text at the path."""


class _Missing:
    def __init__(self, depth: int, found: str) -> None:
        self.depth = depth  # how many keys of the path matched
        self.found = found  # what stood there instead ("nothing", "a list", ...)


def parse_path(path: str) -> tuple[str, ...]:
    """`response.output_text` -> ("response", "output_text"); empty keys are refused."""
    keys = tuple(path.split("."))
    if not path or not all(keys):
        raise ValueError(f"not a dotted field path: {path!r}")
    return keys


def locate(line: str, path: tuple[str, ...]) -> tuple[Any, int, int]:
    """(value, start, end) of the value at `path` in the JSON object `line`.

    Raises BadRow for a line that is not valid JSON, that is not an object, or that has no
    value at the path.
    """
    try:
        index = _skip_space(line, 0).end()
        if line[index : index + 1] == "{":
            found, end = _walk(line, index, path)
        else:
            value, end = _scan_value(line, index)
            found = _Missing(0, _kind(value))
        end = _skip_space(line, end).end()
        if end != len(line):
            raise _Invalid
    except (_Invalid, StopIteration, IndexError, ValueError):
        try:
            json.loads(line)
        except ValueError as error:
            raise BadRow(f"invalid JSON: {error}") from None
        raise  # the walker refused what json accepts: a bug, not bad input
    if isinstance(found, _Missing):
        where = ".".join(path[: found.depth]) or "the line"
        missing = ".".join(path)
        raise BadRow(f"no field {missing!r} ({where} is {found.found})")
    return found


class _Invalid(Exception):
    pass


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object without it"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    return f"a {type(value).__name__}"


def _walk(line: str, index: int, path: tuple[str, ...]) -> tuple[Any, int]:
    """line[index] is '{': walk the object to its end; (found, index after '}')."""
    found: Any = _Missing(0, "an object without it")
    index = _skip_space(line, index + 1).end()
    if line[index] == "}":
        return found, index + 1
    while True:
        if line[index] != '"':
            raise _Invalid
        key, index = _scan_string(line, index + 1, True)
        index = _skip_space(line, index).end()
        if line[index] != ":":
            raise _Invalid
        index = _skip_space(line, index + 1).end()
        if key != path[0]:
            _, end = _scan_value(line, index)
        elif len(path) == 1:
            value, end = _scan_value(line, index)
            found = (value, index, end)
        elif line[index] == "{":
            inner, end = _walk(line, index, path[1:])
            if isinstance(inner, _Missing):
                inner = _Missing(inner.depth + 1, inner.found)
            found = inner
        else:
            value, end = _scan_value(line, index)
            found = _Missing(1, _kind(value))
        index = _skip_space(line, end).end()
        if line[index] == ",":
            index = _skip_space(line, index + 1).end()
            continue
        if line[index] == "}":
            return found, index + 1
        raise _Invalid


def splice(line: str, start: int, end: int, text: str) -> str:
    """`line` with the JSON string value at [start, end) replaced by `text`, in the same
    escaping style: ASCII-only (\\uXXXX escapes) when the original was, UTF-8 otherwise."""
    ascii_only = line[start:end].isascii()
    return line[:start] + json.dumps(text, ensure_ascii=ascii_only) + line[end:]
