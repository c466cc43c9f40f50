"""`Scanner`: what the package calls on a scanner, the compiled `scan_c` or its twin `scan_py`.

`_kernels.loader` hands out the chosen module as a `Scanner`; under TYPE_CHECKING it assigns
the twin to one, so mypy proves that `scan_py` satisfies the Protocol, and
tests/kernels/test_select.py checks at run time that both modules carry every name.  A grammar
is opaque to the callers: they build it with `Grammar(...)` and hand it back to the same scanner.

The stream fronts (the scanner's and the clean kernel's `StreamFront`) call back their owner,
the stream, for what they leave to it (`grammar.check_owner`); `ClosedOwner` is the owner they
are left with once the stream closes.

Of the eleven names the compiled module exports, `Offsets` (the unit walker behind `records`)
is internal to each scanner and `SIMD` (which vector path the kernel picked) has no meaning
for the twin: neither is part of the Protocol.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, NoReturn, Protocol, TypeVar, runtime_checkable

from .grammar import Citation, check_chunk

_Record = TypeVar("_Record", bound=tuple[Any, ...])


class Matcher(Protocol):
    """What a scanner calls on a custom id or locator rule: a compiled pattern, or `Parser`'s
    wrapper that refuses parts over `max_part_length` before running one."""

    def fullmatch(self, string: str, /) -> re.Match[str] | None: ...


@runtime_checkable
class Scanner(Protocol):
    """The scanner module's functions, as `Parser` and `DropIn` call them."""

    def Grammar(
        self,
        families: tuple[str, ...],
        start: str,
        delimiter: str,
        stop: str,
        any_family: bool = ...,
        max_marker_length: int | None = ...,
        source_id: Matcher | None = ...,
        locator: Matcher | None = ...,
        /,
    ) -> Any:
        """The grammar that the other calls take: built once, reused for every text."""

    def extract(self, text: str, grammar: Any, /) -> list[Citation]:
        """The citations of text as the drop-in's dicts."""

    def strip(self, text: str, grammar: Any, /) -> str:
        """text without its citations (the same object when there are none)."""

    def spans(self, text: str, grammar: Any, /) -> list[tuple[int, int, bool]]:
        """Every consumed marker: (start, end, is_citation)."""

    def records(self, text: str, grammar: Any, cls: type[_Record], units: int, /) -> list[_Record]:
        """The citations as `cls` records (six fields), offsets in `units`."""

    def spans_records(
        self, text: str, grammar: Any, cls: type[_Record], units: int, /
    ) -> tuple[list[tuple[int, int, bool]], list[_Record]]:
        """`(spans(...), records(...))` from one scan."""

    def cut(self, text: Any, citations: Iterable[Any], /) -> str | None:
        """text without the spans of plain citation dicts, or None for the general path."""

    def undecided_from(self, text: str, grammar: Any, /) -> int:
        """Index of the first START that more text could still make a marker, or len(text)."""

    def StreamFront(
        self, owner: Any, grammar: Any, cls: type[tuple[Any, ...]], update: type, units: int, /
    ) -> Any:
        """The front of a `StreamParser`: its `feed` takes a delta, calling `owner._slow`
        for what it leaves to the stream."""


class ClosedOwner:
    """The owner a stream hands its front on close.  The front's `feed` is the stream's own
    (the front holds the stream, so that `stream.feed` alone keeps working): on close the
    stream lets go of that cycle, and is freed at once instead of by the cyclic collector,
    while a later feed still gets the stream's errors."""

    __slots__ = ()

    @staticmethod
    def _slow(chunk: object) -> NoReturn:
        check_chunk(chunk)
        raise ValueError("feed() after close()")


CLOSED_OWNER = ClosedOwner()
