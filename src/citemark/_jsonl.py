"""One JSONL line: the value at a dotted path, and (for `strip`) its exact span in the line.

`value_at` parses the line with `json.loads` and follows the path.  `locate` walks the objects
along the path with the standard library's own (C) JSON scanner: every member is decoded (so
a line that `json.loads` rejects is rejected here too) and the span of the value at the path is
kept, so that `splice` replaces that value and nothing else: every other byte of the line (key
order, spacing, number spelling, escapes) stays as it was.  Both agree with `json.loads` on
duplicate keys (the last one wins) and report a missing field the same way.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ._grammar import CITATION_START

_decoder = json.JSONDecoder()
_scan_value = _decoder.scan_once
_scan_string = json.decoder.scanstring  # type: ignore[attr-defined]
_encode_ascii = json.encoder.encode_basestring_ascii  # type: ignore[attr-defined]
_encode_utf8 = json.encoder.encode_basestring  # type: ignore[attr-defined]
_skip_space = re.compile(r"[ \t\n\r]*").match
# A member's key without escapes, and the colon: the common case, in one match.
_plain_member = re.compile(r'[ \t\n\r]*"([^"\\\x00-\x1f]*)"[ \t\n\r]*:[ \t\n\r]*').match
_empty_object = re.compile(r"[ \t\n\r]*}").match
_after_member = re.compile(r"[ \t\n\r]*([,}])").match
# How a START can be spelled inside a JSON string: itself, or a \u escape (hex in any case).
_START_SPELLINGS = (CITATION_START, "\\ue200", "\\uE200")


class BadRow(ValueError):
    """A line that is not JSON, or has no usable text at the path."""


def parse_path(path: str) -> tuple[str, ...]:
    """`response.output_text` -> ("response", "output_text"); empty keys are refused."""
    keys = tuple(path.split("."))
    if not path or not all(keys):
        raise ValueError(f"not a dotted field path: {path!r}")
    return keys


def may_hold_start(line: str) -> bool:
    """False when no string of the JSON line can hold a START (so nothing there can change)."""
    return any(spelling in line for spelling in _START_SPELLINGS)


def value_at(line: str, path: tuple[str, ...]) -> Any:
    """The value at `path` in the JSON object `line`; BadRow when there is none."""
    try:
        value = json.loads(line)
    except ValueError as error:
        raise BadRow(f"invalid JSON: {error}") from None
    for depth, key in enumerate(path):
        if not isinstance(value, dict) or key not in value:
            raise _missing(path, depth, _kind(value))
        value = value[key]
    return value


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
        raise _missing(path, found.depth, found.found)
    return found  # type: ignore[no-any-return]


def splice(line: str, start: int, end: int, text: str) -> str:
    """`line` with the JSON string value at [start, end) replaced by `text`, in the same
    escaping style: ASCII-only (\\uXXXX escapes) when the original was, UTF-8 otherwise."""
    encode = _encode_ascii if line[start:end].isascii() else _encode_utf8
    return line[:start] + encode(text) + line[end:]


class _Missing:
    def __init__(self, depth: int, found: str) -> None:
        self.depth = depth  # how many keys of the path matched
        self.found = found  # what stood there instead ("an object without it", "a list", ...)


class _Invalid(Exception):
    pass


def _missing(path: tuple[str, ...], depth: int, found: str) -> BadRow:
    where = ".".join(path[:depth]) or "the line"
    return BadRow(f"no field {'.'.join(path)!r} ({where} is {found})")


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
    found: Any = _NOT_IN_OBJECT
    empty = _empty_object(line, index + 1)
    if empty:
        return found, empty.end()
    index += 1
    wanted = path[0]
    last = len(path) == 1
    scan_value = _scan_value
    plain_member = _plain_member
    after_member = _after_member
    while True:
        member = plain_member(line, index)
        if member:
            key = member[1]
            index = member.end()
        else:  # a key with escapes, or not JSON
            index = _skip_space(line, index).end()
            if line[index] != '"':
                raise _Invalid
            key, index = _scan_string(line, index + 1, True)
            index = _skip_space(line, index).end()
            if line[index] != ":":
                raise _Invalid
            index = _skip_space(line, index + 1).end()
        if key != wanted:
            end = scan_value(line, index)[1]
        elif last:
            value, end = scan_value(line, index)
            found = (value, index, end)
        elif line[index] == "{":
            inner, end = _walk(line, index, path[1:])
            if isinstance(inner, _Missing):
                inner = _Missing(inner.depth + 1, inner.found)
            found = inner
        else:
            value, end = scan_value(line, index)
            found = _Missing(1, _kind(value))
        after = after_member(line, end)
        if not after:
            raise _Invalid
        if after[1] == "}":
            return found, after.end()
        index = after.end()


_NOT_IN_OBJECT = _Missing(0, "an object without it")
