"""Typed face of the compiled JSONL kernel (`jsonl_c.pyx`); its twin is `jsonl_py`."""

from collections.abc import Callable
from typing import Any

CODES: tuple[int, ...]
KINDS: tuple[int, ...]

def locate(line: bytes, path: tuple[str, ...]) -> tuple[int, int, int]: ...
def line_cuts(data: bytes, size: int, most: int) -> list[tuple[int, int, int]]: ...
def may_hold_start(line: bytes, start: int, end: int) -> bool: ...
def raw_ok(token: bytes, families: tuple[bytes, ...]) -> bool: ...
def text_lines(
    data: bytes, path: tuple[str, ...], skip_bad: bool
) -> tuple[list[int], list[str | None], int, list[tuple[int, int, int, int]]]: ...
def strip_lines(
    data: bytes,
    path: tuple[str, ...],
    many: Callable[[list[str]], list[str]],
    skip_bad: bool,
    families: tuple[bytes, ...] | None = None,
) -> tuple[bytes, int, int, list[tuple[int, int, int, int]]]: ...
def map_lines(
    data: bytes, path: tuple[str, ...], many: Callable[[list[str]], list[str]], skip_bad: bool
) -> tuple[bytes, int, int, list[tuple[int, int, int, int]]]: ...
def clean_lines(
    data: bytes, path: tuple[str, ...], many: Callable[[list[str]], list[str]], skip_bad: bool
) -> tuple[bytes, int, int, list[tuple[int, int, int, int]]]: ...
def citation_lines(file: str, rows: list[int], citations: list[Any]) -> bytes: ...
def extract_lines(
    data: bytes,
    path: tuple[str, ...],
    many: Callable[[list[str]], list[Any]],
    skip_bad: bool,
    file: str,
    first_row: int,
    families: tuple[bytes, ...] | None = None,
) -> tuple[bytes, int, int, list[tuple[int, int, int, int]]]: ...
