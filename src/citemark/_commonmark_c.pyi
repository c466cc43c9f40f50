def runs(text: str, first: int, end: int, base: int) -> list[tuple[int, int, bool]]: ...
def pair(runs: list[tuple[int, int, bool]], walls: list[tuple[int, int]]) -> None: ...
def plain(
    text: str,
    start: int,
    base: int,
    pending: list[tuple[int, int, bool]],
    walls: list[tuple[int, int]],
    in_paragraph: bool,
    ticked_from: int | None,
) -> tuple[int, bool, int | None]: ...
