from array import array

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
    text: str, needle: str, at: int, walls: list[tuple[int, int]], wall: int
) -> tuple[int, int]: ...
def code_walls(text: str) -> list[tuple[int, int]]: ...
def line_spans(text: str) -> list[tuple[int, int]]: ...
def held_gaps(
    text: str,
    consumed: list[tuple[int, int, bool]],
    start_char: str,
    stop_char: str,
    delimiter: str,
) -> list[tuple[int, int, int]]: ...
