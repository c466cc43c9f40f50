from array import array
from collections.abc import Callable
from typing import Any, ClassVar, final

from .commonmark_py import Severity

@final
class Diagnostic:
    __match_args__: ClassVar[tuple[str, ...]]
    @property
    def code(self) -> str: ...
    @property
    def severity(self) -> Severity: ...
    @property
    def message(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    def __init__(
        self, code: str, severity: Severity, message: str, start: int, end: int
    ) -> None: ...
    def _fields(self) -> tuple[str, str, str, int, int]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[type[Diagnostic], tuple[str, str, str, int, int]]: ...
    def to_json(self) -> dict[str, Any]: ...

def runs(text: str, first: int, end: int, base: int) -> array[int]: ...
def pair(runs: array[int], walls: list[tuple[int, int]]) -> None: ...
def plain(
    text: str,
    start: int,
    base: int,
    pending: array[int],
    walls: list[tuple[int, int]],
    in_paragraph: bool,
    ticked_from: int | None,
) -> tuple[int, bool, int | None]: ...
def strays(
    text: str,
    first: int,
    last: int,
    held: int,
    start_char: str,
    stop_char: str,
    delimiter: str,
    found: list[tuple[int, int, int]],
    foreign: list[tuple[int, int]],
) -> None: ...
def next_outside(
    text: str, needle: str, at: int, starts: array[int], ends: array[int], wall: int
) -> tuple[int, int]: ...
def stray_findings(
    text: str,
    consumed: list[tuple[int, int, bool]],
    start_char: str,
    stop_char: str,
    delimiter: str,
    rows: tuple[tuple[str, Severity, str, str], ...],
    found: list[Diagnostic],
    starts: array[int],
    ends: array[int],
) -> list[int]: ...
def order(found: list[Diagnostic]) -> list[Diagnostic]: ...
def code_walls(text: str) -> list[tuple[int, int]]: ...
def code_spans(text: str) -> tuple[array[int], array[int]]: ...
def line_spans(text: str) -> list[tuple[int, int]]: ...
def held_gaps(
    text: str,
    consumed: list[tuple[int, int, bool]],
    start_char: str,
    stop_char: str,
    delimiter: str,
) -> list[tuple[int, int, int]]: ...
def cited_lines(
    text: str, starts: list[int], consumed: list[tuple[int, int, bool]], filler: str
) -> tuple[
    list[tuple[int, int, int, int]],
    list[tuple[int, int, int, int]],
    list[tuple[int, int, int, int, int]],
]: ...
def punctuated(
    text: str, starts: list[int], ends: list[int], marks: str
) -> list[tuple[int, int, int]]: ...
def located_rows(
    citations: list[Any],
    located: dict[tuple[tuple[str, ...], str | None], list[tuple[str, Severity, str]]],
    compute: Callable[[tuple[str, ...], str | None], list[tuple[str, Severity, str]]],
    found: list[Diagnostic],
) -> None: ...
def covered(
    starts: list[int], ends: list[int], wall_starts: array[int], wall_ends: array[int]
) -> list[bool]: ...
def fence_cited(
    text: str,
    fenced: list[tuple[int, int, int, int]],
    starts: list[int],
    ends: list[int],
    consumed: list[tuple[int, int, bool]],
) -> list[tuple[int, int, bool]]: ...
def filler_end(text: str, start: int, end: int, filler: str) -> int: ...
def kept_bounds(rows: list[Any], kept: list[bool]) -> list[tuple[int, int, int]]: ...
def code_rows(
    starts: list[int],
    ends: list[int],
    wall_starts: array[int],
    wall_ends: array[int],
    fenced: list[tuple[int, int, bool]],
    row: tuple[str, Severity, str],
    found: list[Diagnostic],
) -> list[bool]: ...
def present(text: str, chars: str) -> str: ...
