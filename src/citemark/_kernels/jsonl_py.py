"""The pure-Python twin of `jsonl_c`: the same functions, the same results.

The line is decoded (strict UTF-8) and read token by token with regular expressions, the
open containers on a list (any depth, never a RecursionError); offsets are given in bytes,
as the compiled kernel gives them.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from typing import Any

FOUND, NULL_TEXT, NOT_STRING, MISSING, INVALID = range(5)
K_OBJECT, K_LIST, K_STRING, K_NULL, K_INT, K_FLOAT, K_BOOL = range(7)
CODES = (FOUND, NULL_TEXT, NOT_STRING, MISSING, INVALID)
KINDS = (K_OBJECT, K_LIST, K_STRING, K_NULL, K_INT, K_FLOAT, K_BOOL)

_INVALID = (INVALID, 0, 0)
_space_at = re.compile(r"[ \t\n\r]*").match


def _space(s: str, i: int) -> re.Match[str]:
    found = _space_at(s, i)
    assert found is not None  # the pattern matches the empty string
    return found


# a string token (unrolled: plain runs between escapes, no backtracking)
_string = re.compile(
    r'"[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*"'
).match
_number = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?").match
_scanstring = json.decoder.scanstring  # type: ignore[attr-defined]
_encode_ascii = json.encoder.encode_basestring_ascii
_encode_utf8 = json.encoder.encode_basestring
_SCALARS = (("null", K_NULL), ("true", K_BOOL), ("false", K_BOOL))
_SPECIAL = (("NaN", K_FLOAT), ("Infinity", K_FLOAT), ("-Infinity", K_FLOAT))
_START_SPELLINGS = ("\ue200", "\\ue200", "\\uE200")


def _check(path: tuple[str, ...]) -> None:
    if not isinstance(path, tuple):
        raise TypeError(f"path must be a tuple, not {type(path).__name__}")
    if not path:
        raise ValueError("path must name at least one key")
    for key in path:
        if type(key) is not str:
            raise TypeError(f"path must be a tuple of str, not one holding {type(key).__name__}")


def locate(line: bytes, path: tuple[str, ...]) -> tuple[int, int, int]:
    """See `jsonl_c.locate`."""
    if not isinstance(line, bytes):
        raise TypeError(f"line must be bytes, not {type(line).__name__}")
    _check(path)
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return _INVALID
    found = _locate(text, path)
    if found[0] == FOUND and len(text) != len(line):  # str offsets -> byte offsets
        start = len(text[: found[1]].encode("utf-8"))
        return FOUND, start, start + len(text[found[1] : found[2]].encode("utf-8"))
    return found


def _int_digits() -> int:
    """sys.get_int_max_str_digits() (0: no limit), read at each call as json.loads does."""
    limit = getattr(sys, "get_int_max_str_digits", None)
    return 0 if limit is None else int(limit())


def _locate(s: str, path: tuple[str, ...]) -> tuple[int, int, int]:
    n = len(s)
    int_digits = _int_digits()
    levels = len(path)
    closer: list[str] = []  # the closing bracket of each open container
    level: list[int] = []  # for an object on the path, the index of the key searched in it
    want = -1
    code, a, b = MISSING, 0, K_OBJECT
    i = 0
    state = "value"
    while True:
        if state == "value":
            i = _space(s, i).end()
            if i >= n:
                return _INVALID
            c = s[i]
            if c in "{[":
                kind = K_OBJECT if c == "{" else K_LIST
                lvl = -1
                if not closer:
                    b = kind
                    lvl = 0 if c == "{" else -1
                elif want == levels - 1:
                    code, a, b = NOT_STRING, kind, 0
                elif want >= 0:
                    code, a, b = MISSING, want + 1, kind
                    if c == "{":
                        lvl = want + 1
                closer.append("}" if c == "{" else "]")
                level.append(lvl)
                want = -1
                i = _space(s, i + 1).end()
                if i < n and s[i] == closer[-1]:
                    closer.pop()
                    level.pop()
                    i += 1
                    state = "after"
                else:
                    state = "member" if c == "{" else "value"
                continue
            start = i
            end = -1
            kind = K_STRING
            if c == '"':
                match = _string(s, i)
                end = match.end() if match else -1
            else:
                for word, word_kind in (*_SCALARS, *_SPECIAL):
                    if s.startswith(word, i):
                        end, kind = i + len(word), word_kind
                        break
                else:
                    match = _number(s, i)
                    if match:
                        end = match.end()
                        kind = K_FLOAT if match[1] or match[2] else K_INT
                        if kind == K_INT and 0 < int_digits < end - i - (c == "-"):
                            end = -1  # json.loads refuses it (int()'s limit on digits)
            if end < 0:
                return _INVALID
            i = end
            if not closer:
                b = kind
            elif want == levels - 1:
                if kind == K_STRING:
                    code, a, b = FOUND, start, end
                elif kind == K_NULL:
                    code, a, b = NULL_TEXT, 0, 0
                else:
                    code, a, b = NOT_STRING, kind, 0
            elif want >= 0:
                code, a, b = MISSING, want + 1, kind
            want = -1
            state = "after"
        elif state == "after":
            i = _space(s, i).end()
            if not closer:
                return (code, a, b) if i == n else _INVALID
            if i >= n:
                return _INVALID
            c = s[i]
            i += 1
            if c == ",":
                state = "member" if closer[-1] == "}" else "value"
            elif c == closer[-1]:
                closer.pop()
                level.pop()
            else:
                return _INVALID
        else:  # a member: its key and colon, then the value
            i = _space(s, i).end()
            match = _string(s, i)
            if not match:
                return _INVALID
            if level[-1] >= 0:
                raw = match[0]
                key = _scanstring(raw, 1, True)[0] if "\\" in raw else raw[1:-1]
                want = level[-1] if key == path[level[-1]] else -1
            i = _space(s, match.end()).end()
            if i >= n or s[i] != ":":
                return _INVALID
            i += 1
            state = "value"


def may_hold_start(line: bytes, start: int, end: int) -> bool:
    """See `jsonl_c.may_hold_start`."""
    if not 0 <= start <= end <= len(line):
        raise ValueError("span out of range")
    token = line[start:end]
    return any(spelling.encode("utf-8") in token for spelling in _START_SPELLINGS)


def _text(token: bytes) -> str:
    if b"\\" not in token:
        return token[1:-1].decode("utf-8")
    return str(_scanstring(token.decode("utf-8"), 1, True)[0])


def _token(text: str, ascii: bool) -> bytes:
    if not ascii:
        try:
            return str(_encode_utf8(text)).encode("utf-8")
        except UnicodeEncodeError:
            pass
    return str(_encode_ascii(text)).encode("ascii")


def _lines(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each line of data, split at b"\\n"."""
    spans = []
    i = 0
    while i < len(data):
        end = data.find(b"\n", i)
        end = len(data) if end < 0 else end
        spans.append((i, end))
        i = end + 1
    return spans


def line_cuts(data: bytes, size: int, most: int) -> list[tuple[int, int, int]]:
    """See `jsonl_c.line_cuts`."""
    if not isinstance(data, bytes):
        raise TypeError(f"data must be bytes, not {type(data).__name__}")
    if not 0 <= size <= len(data):
        raise ValueError("size out of range")
    if most < 1:
        raise ValueError("most must be at least 1")
    lines = data.count(b"\n", 0, size) + (size > 0 and data[size - 1] != 10)
    if lines == 0:
        return []
    pieces = -(-lines // most)
    cuts = []
    start = at = seen = 0
    for piece in range(pieces - 1):
        wanted = lines * (piece + 1) // pieces
        while seen < wanted:
            at = data.index(b"\n", at) + 1
            seen += 1
        cuts.append((start, at, wanted - lines * piece // pieces))
        start = at
    cuts.append((start, size, lines - lines * (pieces - 1) // pieces))
    return cuts


def _blank(line: bytes) -> bool:
    return not line.strip(b" \t\r")


def text_lines(
    data: bytes, path: tuple[str, ...], skip_bad: bool
) -> tuple[list[int], list[str | None], int, list[tuple[int, int, int, int]]]:
    """See `jsonl_c.text_lines`."""
    _check(path)
    rows: list[int] = []
    texts: list[str | None] = []
    bad: list[tuple[int, int, int, int]] = []
    blanks = 0
    for index, (start, end) in enumerate(_lines(data)):
        line = data[start:end]
        if _blank(line):
            blanks += 1
            continue
        code, a, b = locate(line, path)
        if code in (FOUND, NULL_TEXT):
            rows.append(index)
            texts.append(_text(line[a:b]) if code == FOUND else None)
        else:
            bad.append((index, code, a, b))
            if not skip_bad:
                break
    return rows, texts, blanks, bad


_RAW_TOKENS = re.compile(rb"\\(.)|\xee\x88([\x80\x81])", re.DOTALL)
_DELIMITER = b"\xee\x88\x82"


def raw_ok(token: bytes, families: tuple[bytes, ...]) -> bool:
    """See `jsonl_c.raw_ok`."""
    if not isinstance(token, bytes):
        raise TypeError(f"token must be bytes, not {type(token).__name__}")
    if len(token) < 2:
        raise ValueError("not a string token")
    for family in families:
        if type(family) is not bytes:
            raise TypeError(f"families must hold bytes, not {type(family).__name__}")
    stop = len(token) - 1
    open_marker = False
    for match in _RAW_TOKENS.finditer(token, 1, stop):
        if match[1] is not None:  # an escape
            if open_marker or match[1] == b"u":
                return False
        elif match[2] == b"\x81":
            open_marker = False
        elif not open_marker:
            after = match.end()
            open_marker = any(
                token.startswith(family + _DELIMITER, after) and after + len(family) + 3 <= stop
                for family in families
            )
    return True


def strip_lines(
    data: bytes,
    path: tuple[str, ...],
    many: Callable[[list[str]], list[str]],
    skip_bad: bool,
    families: tuple[bytes, ...] | None = None,
) -> tuple[bytes, int, int, list[tuple[int, int, int, int]]]:
    """See `jsonl_c.strip_lines`; the raw tokens go through `many` as the str of their raw
    bytes (what the compiled kernel's raw strip is held to), the others decoded (what its
    strip of a decoded token is held to)."""
    if families is not None:
        if type(families) is not tuple:
            raise TypeError(
                f"families must be a tuple of bytes or None, not {type(families).__name__}"
            )
        for family in families:
            if type(family) is not bytes:
                raise TypeError(f"families must hold bytes, not {type(family).__name__}")
    return _strip_lines(data, path, many, skip_bad, True, families)


def map_lines(
    data: bytes, path: tuple[str, ...], many: Callable[[list[str]], list[str]], skip_bad: bool
) -> tuple[bytes, int, int, list[tuple[int, int, int, int]]]:
    """See `jsonl_c.map_lines`."""
    return _strip_lines(data, path, many, skip_bad, False, None)


def clean_lines(
    data: bytes, path: tuple[str, ...], many: Callable[[list[str]], list[str]], skip_bad: bool
) -> tuple[bytes, int, int, list[tuple[int, int, int, int]]]:
    """See `jsonl_c.clean_lines`: here every text goes through `many` (clean_many), the
    composition the compiled pass is held to."""
    if not callable(many):
        raise TypeError(f"many must be callable, not {type(many).__name__}")
    if type(skip_bad) is not bool:
        raise TypeError(f"skip_bad must be bool, not {type(skip_bad).__name__}")
    return _strip_lines(data, path, many, skip_bad, False, None)


def _strip_lines(
    data: bytes,
    path: tuple[str, ...],
    many: Callable[[list[str]], list[str]],
    skip_bad: bool,
    start_only: bool,
    families: tuple[bytes, ...] | None,
) -> tuple[bytes, int, int, list[tuple[int, int, int, int]]]:
    if not isinstance(data, bytes):
        raise TypeError(f"data must be bytes, not {type(data).__name__}")
    _check(path)
    spans: list[tuple[int, int, int, int, bool]] = []
    texts: list[str] = []
    bad: list[tuple[int, int, int, int]] = []
    blanks = rows = 0
    stop = len(data)
    for index, (line_start, line_end) in enumerate(_lines(data)):
        line = data[line_start:line_end]
        if _blank(line):
            blanks += 1
            continue
        code, a, b = locate(line, path)
        if code == FOUND:
            rows += 1
            if not start_only or may_hold_start(line, a, b):
                is_raw = families is not None and raw_ok(line[a:b], families)
                spans.append((line_start, line_end, line_start + a, line_start + b, is_raw))
                texts.append(line[a + 1 : b - 1].decode("utf-8") if is_raw else _text(line[a:b]))
        elif code == NULL_TEXT:
            rows += 1
        else:
            bad.append((index, code, a, b))
            spans.append((line_start, line_end, -1, -1, False))
            if not skip_bad:
                stop = line_start
                break
    cleaned: Any = many(texts) if texts else []
    if len(cleaned) != len(texts):
        raise ValueError("many() must give one text for each text")
    out: list[bytes] = []
    copied = 0
    k = 0
    for line_start, line_end, start, end, is_raw in spans:
        if start < 0:
            if copied < line_start:
                out.append(data[copied:line_start])
            copied = min(line_end + 1, len(data))
            continue
        text, new = texts[k], cleaned[k]
        k += 1
        if new is text or new == text:
            continue
        if copied < start:
            out.append(data[copied:start])
        if is_raw:
            out.append(b'"' + new.encode("utf-8") + b'"')
        else:
            out.append(_token(new, data[start:end].isascii()))
        copied = end
    if copied < stop:
        out.append(data[copied:stop])
    return b"".join(out), rows, blanks, bad


def citation_lines(file: str, rows: list[int], citations: list[Any]) -> bytes:
    """See `jsonl_c.citation_lines`."""
    if not isinstance(file, str):
        raise TypeError(f"file must be str, not {type(file).__name__}")
    if len(rows) != len(citations):
        raise ValueError("rows and citations must be as long")
    lines = []
    for row, found in zip(rows, citations, strict=True):
        if type(row) is not int:
            raise TypeError(f"rows must hold int, not {type(row).__name__}")
        value = {"file": file, "row": row, "citations": found}
        try:
            lines.append(json.dumps(value, ensure_ascii=False).encode("utf-8") + b"\n")
        except UnicodeEncodeError:
            lines.append(json.dumps(value).encode("ascii") + b"\n")
    return b"".join(lines)


def extract_lines(
    data: bytes,
    path: tuple[str, ...],
    many: Callable[[list[str]], list[Any]],
    skip_bad: bool,
    file: str,
    first_row: int,
    families: tuple[bytes, ...] | None = None,
) -> tuple[bytes, int, int, list[tuple[int, int, int, int]]]:
    """See `jsonl_c.extract_lines`: every text that may hold a START goes through `many`
    (the kernel's scan of a raw or a decoded token is held to give what `many` gives)."""
    if not isinstance(data, bytes):
        raise TypeError(f"data must be bytes, not {type(data).__name__}")
    if not isinstance(file, str):
        raise TypeError(f"file must be str, not {type(file).__name__}")
    if type(first_row) is not int:
        raise TypeError(f"first_row must be int, not {type(first_row).__name__}")
    if families is not None:
        if type(families) is not tuple:
            raise TypeError(
                f"families must be a tuple of bytes or None, not {type(families).__name__}"
            )
        for family in families:
            if type(family) is not bytes:
                raise TypeError(f"families must hold bytes, not {type(family).__name__}")
    _check(path)
    rows: list[int] = []
    found: list[Any] = []  # per row: None (null), [] (no START), or an index into texts
    texts: list[str] = []
    bad: list[tuple[int, int, int, int]] = []
    blanks = 0
    for index, (start, end) in enumerate(_lines(data)):
        line = data[start:end]
        if _blank(line):
            blanks += 1
            continue
        code, a, b = locate(line, path)
        if code == NULL_TEXT:
            rows.append(first_row + index)
            found.append(None)
        elif code == FOUND:
            rows.append(first_row + index)
            if may_hold_start(line, a, b):
                found.append(len(texts))
                texts.append(_text(line[a:b]))
            else:
                found.append([])
        else:
            bad.append((index, code, a, b))
            if not skip_bad:
                break
    cited = many(texts) if texts else []
    if len(cited) != len(texts):
        raise ValueError("many() must give one list for each text")
    citations = [cited[one] if type(one) is int else one for one in found]
    return citation_lines(file, rows, citations), len(rows), blanks, bad
