from collections.abc import Iterable
from typing import Any

from ._grammar import Citation

def extract(text: str, families: tuple[str, ...]) -> list[Citation]: ...
def strip(text: str, families: tuple[str, ...]) -> str: ...
def cut(text: Any, citations: Iterable[Any]) -> str | None: ...

SIMD: str
