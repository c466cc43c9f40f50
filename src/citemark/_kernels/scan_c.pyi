"""Typed face of the compiled kernel (`scan_c.pyx`); the twin `scan_py` has the same names."""

from typing import Any, TypeVar

from typing_extensions import Self, disjoint_base

from .._core.grammar import Citation
from .._core.protocols import Matcher

_Record = TypeVar("_Record", bound=tuple[Any, ...])

SIMD: str

@disjoint_base
class Grammar:
    """What a marker looks like, as C structs for the scan.  Built once per Parser."""

    @property
    def families(self) -> tuple[str, ...]: ...
    @property
    def source_id(self) -> Matcher | None: ...
    @property
    def locator(self) -> Matcher | None: ...
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
