"""Typed face of the compiled kernel (`scan_c.pyx`); the twin `scan_py` has the same names."""

from typing import Any, TypeVar, final

from typing_extensions import Self, disjoint_base

from .._core.grammar import Citation
from .._core.protocols import Matcher

_Record = TypeVar("_Record", bound=tuple[Any, ...])

SIMD: str
STREAM_BUSY: str

@disjoint_base
class Grammar:
    """What a marker looks like, as C structs for the scan.  Built once per Parser."""

    @property
    def families(self) -> tuple[str, ...]: ...
    @property
    def source_id(self) -> Matcher | None: ...
    @property
    def locator(self) -> Matcher | None: ...
    @property
    def stop_in_family(self) -> bool: ...
    def __new__(
        cls,
        families: tuple[str, ...],
        start: str,
        delimiter: str,
        stop: str,
        any_family: bool = False,
        max_marker_length: int | None = None,
        source_id: Matcher | None = None,
        locator: Matcher | None = None,
    ) -> Self: ...

def extract(text: str, grammar: Grammar) -> list[Citation]: ...
def strip(text: str, grammar: Grammar) -> str: ...
def spans(text: str, grammar: Grammar) -> list[tuple[int, int, bool]]: ...
def records(text: str, grammar: Grammar, cls: type[_Record], units: int) -> list[_Record]: ...
def spans_records(
    text: str, grammar: Grammar, cls: type[_Record], units: int
) -> tuple[list[tuple[int, int, bool]], list[_Record]]: ...
def cut(text: object, citations: object) -> str | None: ...
def undecided_from(text: str, grammar: Grammar) -> int: ...

@final
class StreamFront:
    """The common delta of a `StreamParser` in one C call (see scan_py.StreamFront, which
    says what each path does)."""

    owner: Any
    pieces: list[str]
    held_length: int
    looked_at: int
    raw_units: int
    clean_units: int
    work: int
    open: bool
    @property
    def grammar(self) -> Grammar: ...
    @property
    def cls(self) -> type[tuple[Any, ...]]: ...
    @property
    def update(self) -> type[tuple[Any, ...]]: ...
    @property
    def units(self) -> int: ...
    def __init__(
        self,
        owner: Any,
        grammar: Grammar,
        cls: type[tuple[Any, ...]],
        update: type[tuple[Any, ...]],
        units: int,
    ) -> None: ...
    def feed(self, chunk: str, /) -> Any: ...
    def enter(self) -> None: ...
    def leave(self) -> None: ...
