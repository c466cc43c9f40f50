"""`Diagnostic`, the finding `citemark.validate` returns, and the order validate gives them."""

from __future__ import annotations

from operator import attrgetter
from typing import Any, Literal

from .._core.grammar import PLACE_BEYOND, PLACE_LOWEST, check_place

__all__ = ["Diagnostic", "Severity", "order"]

Severity = Literal["error", "warning"]

# validate's order of its findings: by place, then code (see `order`).
_ORDER = attrgetter("start", "end", "code")
_set_field = object.__setattr__


class Diagnostic:
    """One finding of `citemark.validate`: a stable `code`, its `severity`, a message, and
    where it is (`start`, `end`, code points).

    A value, as a frozen dataclass: its fields read-only, equal to a Diagnostic with equal
    fields (and to nothing else), hashed on its fields, not ordered, pickled and shown by
    its fields.  Its own small class with slots rather than a tuple or a dataclass: validate
    makes one per run of stray characters, and an answer may hold thousands."""

    __slots__ = ("code", "end", "message", "severity", "start")
    __match_args__ = ("code", "severity", "message", "start", "end")

    code: str
    severity: Severity
    message: str
    start: int
    end: int

    def __init__(self, code: str, severity: Severity, message: str, start: int, end: int) -> None:
        # The usual fields let through by two tests (the rows of thousands of findings).
        if not type(code) is type(severity) is type(message) is str:
            for name, value in (("code", code), ("severity", severity), ("message", message)):
                if type(value) is not str:
                    raise TypeError(f"{name} must be a str, not {type(value).__name__}")
        if not (type(start) is type(end) is int and PLACE_LOWEST <= start <= end < PLACE_BEYOND):
            start, end = check_place(start, "start"), check_place(end, "end")
        _set_field(self, "code", code)
        _set_field(self, "severity", severity)
        _set_field(self, "message", message)
        _set_field(self, "start", start)
        _set_field(self, "end", end)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Diagnostic is read-only: {name!r} cannot be set")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Diagnostic is read-only: {name!r} cannot be deleted")

    def _fields(self) -> tuple[str, str, str, int, int]:
        return self.code, self.severity, self.message, self.start, self.end

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._fields() == other._fields()

    def __ne__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._fields() != other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (
            f"Diagnostic(code={self.code!r}, severity={self.severity!r}, "
            f"message={self.message!r}, start={self.start}, end={self.end})"
        )

    def __reduce__(self) -> tuple[type[Diagnostic], tuple[str, str, str, int, int]]:
        return type(self), self._fields()

    def to_json(self) -> dict[str, Any]:
        """The fields as a dict (what `citemark lint --json` writes)."""
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "start": self.start,
            "end": self.end,
        }


def order(found: list[Diagnostic]) -> list[Diagnostic]:
    """validate's `Diagnostic`s put in order, in place, by (start, end, code); rows that tie
    keep the order they were found in.  Returns `found` (validate owns its list: a copy of
    thousands of rows would be a second pass for nothing)."""
    if type(found) is not list:
        raise TypeError(f"found must be a list, not {type(found).__name__}")
    for row in found:
        if type(row) is not Diagnostic:
            raise TypeError(f"found must hold Diagnostic rows, not {type(row).__name__}")
    found.sort(key=_ORDER)
    return found
