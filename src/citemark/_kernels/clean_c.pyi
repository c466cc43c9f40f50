from collections.abc import Callable
from typing import Any, final

_Token = tuple[int, int, int, int, int, int, int]

STREAM_BUSY: str

def marker_state(text: str) -> int: ...
def has_markers(text: str) -> bool: ...
def check_code_ranges(text: str, code_ranges: list[tuple[int, int]]) -> list[tuple[int, int]]: ...
def scan(text: str, code_ranges: list[tuple[int, int]]) -> list[_Token]: ...
def join(
    text: str, tokens: list[_Token], replacements: list[str] | None
) -> tuple[str, list[int], list[int]]: ...
def clean(
    text: str,
    code_ranges: list[tuple[int, int]],
    entity: Callable[[str], str] | None = None,
    plain_names: bool = False,
) -> str | None: ...
def clean_texts(
    texts: list[str],
    code_ranges_of: Callable[[str], list[tuple[int, int]]] | None,
    entity: Callable[[str], str] | None,
    plain_names: bool,
) -> list[str | None]: ...

@final
class StreamFront:
    owner: Any
    entity: Any
    pending: list[str]
    parts: list[str]
    on: bool
    waiting: bool
    own: bool
    mixed: bool
    state: int
    parts_length: int
    looked: int
    pending_length: int
    line_from: int
    tail: str
    @property
    def context(self) -> str: ...
    @context.setter
    def context(self, value: str) -> None: ...
    work: int
    skip: int
    raw: int
    def __init__(
        self,
        owner: Any,
        pending: list[str],
        state: int = 0,
        entity: Callable[[str], str] | None = None,
        own: bool = False,
    ) -> None: ...
    def feed(self, chunk: str) -> str: ...
    def enter(self) -> None: ...
    def leave(self) -> None: ...
    def finish(self) -> str | None: ...
