"""Positions in a text counted three ways: code points (Python), UTF-16 code units
(JavaScript, Java, C#) and UTF-8 bytes (Go, Rust, files on disk).

Offsets cross language boundaries in logs, APIs and front ends; mixing the units puts an icon
mid-word or cuts a character in half.  A position here is a boundary *between* characters
(0 to the length inclusive), so a position that falls inside a surrogate pair or inside a
multi-byte sequence is an error (ValueError) rather than something silently rounded.

Lone surrogates (which a Python str can hold) count as one UTF-16 unit and three UTF-8 bytes,
as the "surrogatepass" codecs and JavaScript's `Buffer.byteLength` count them.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from ._core.grammar import OFFSET_UNITS, OffsetUnit

__all__ = ["OFFSET_UNITS", "OffsetMap", "OffsetUnit", "convert", "length"]

# Runs of characters of one width; group i of a pattern is width i.  A character class with
# `+` scans linearly, and a text is usually a few long runs (all ASCII, or all CJK).  Compiled
# on the first table of each unit: most users of this module only call `length`.
_RUNS = {
    "utf16": "([\x00-\uffff]+)|([\U00010000-\U0010ffff]+)",
    "utf8": "([\x00-\x7f]+)|([\x80-\u07ff]+)|([\u0800-\uffff]+)|([\U00010000-\U0010ffff]+)",
}
_WHAT_SPLITS = {"utf16": "a surrogate pair", "utf8": "a multi-byte UTF-8 sequence"}


class _Table:
    """Run-length table of one unit: run k starts at code point `chars[k]` and unit
    `units[k]`, and each of its characters is `widths[k]` units wide."""

    def __init__(self, text: str, unit: str) -> None:
        self.unit = unit
        chars, units, widths = [0], [0], [1]
        for run in re.finditer(_RUNS[unit], text):
            units.append(units[-1] + (run.start() - chars[-1]) * widths[-1])
            chars.append(run.start())
            widths.append(run.lastindex or 1)
        self.chars, self.units, self.widths = chars, units, widths
        self.length = units[-1] + (len(text) - chars[-1]) * widths[-1]

    def from_codepoint(self, index: int) -> int:
        k = bisect_right(self.chars, index) - 1
        return self.units[k] + (index - self.chars[k]) * self.widths[k]

    def to_codepoint(self, index: int) -> int:
        k = bisect_right(self.units, index) - 1
        chars, rest = divmod(index - self.units[k], self.widths[k])
        if rest:
            raise ValueError(
                f"{self.unit} position {index} falls inside {_WHAT_SPLITS[self.unit]} "
                f"(the character at code point {self.chars[k] + chars})"
            )
        return self.chars[k] + chars


class OffsetMap:
    """Converts many positions of one text, both directions, between any two units.

    Building a unit's table is one pass over the text (done on first use of that unit);
    each conversion is then a binary search over the runs of equal-width characters, so
    converting every citation of a long answer costs about the same as converting one.
    """

    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise TypeError(f"text must be str, not {type(text).__name__}")
        self.text = text
        self._tables: dict[str, _Table] = {}

    def length(self, unit: OffsetUnit = "codepoints") -> int:
        """The text's length in `unit` (the largest valid position)."""
        _check_unit("unit", unit)
        return len(self.text) if unit == "codepoints" else self._table(unit).length

    def convert(
        self, index: int, *, source: OffsetUnit = "codepoints", target: OffsetUnit = "utf16"
    ) -> int:
        """Position `index` (in `source` units) in `target` units.

        IndexError outside 0..length; ValueError for a position that splits a character.
        Negative positions are out of range: these are offsets, not Python indexes.
        """
        _check_unit("source", source)
        _check_unit("target", target)
        if type(index) is not int:
            if isinstance(index, bool) or not hasattr(index, "__index__"):
                raise TypeError(f"position must be an int, not {type(index).__name__}")
            index = index.__index__()
        if not 0 <= index <= self.length(source):
            raise IndexError(f"{source} position {index} is out of range 0..{self.length(source)}")
        if source == target:
            return index
        codepoint = index if source == "codepoints" else self._table(source).to_codepoint(index)
        return (
            codepoint if target == "codepoints" else self._table(target).from_codepoint(codepoint)
        )

    def convert_all(
        self, indexes: list[int], *, source: OffsetUnit = "codepoints", target: OffsetUnit = "utf16"
    ) -> list[int]:
        """`convert` for each of `indexes`, in order."""
        return [self.convert(index, source=source, target=target) for index in indexes]

    def _table(self, unit: str) -> _Table:
        table = self._tables.get(unit)
        if table is None:
            table = self._tables[unit] = _Table(self.text, unit)
        return table

    def __repr__(self) -> str:
        return f"OffsetMap(<text of {len(self.text)} code points>)"


def length(text: str, unit: OffsetUnit = "codepoints") -> int:
    """len(text) in `unit`: the codec counts, without building a table."""
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    if unit == "utf16":
        return len(text.encode("utf-16-le", "surrogatepass")) // 2
    if unit == "utf8":
        return len(text.encode("utf-8", "surrogatepass"))
    _check_unit("unit", unit)
    return len(text)


def convert(
    text: str, index: int, *, source: OffsetUnit = "codepoints", target: OffsetUnit = "utf16"
) -> int:
    """One position of `text` from `source` units to `target` units (see `OffsetMap`,
    which is what to build when there are many positions to convert)."""
    return OffsetMap(text).convert(index, source=source, target=target)


def _check_unit(name: str, unit: object) -> None:
    if unit not in OFFSET_UNITS:
        raise ValueError(f"{name} must be one of {', '.join(OFFSET_UNITS)}, not {unit!r}")
