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
