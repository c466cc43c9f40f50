"""The grammar's facts, each written once: the marker characters, the guide's id, locator
and family rules, line breaks, turn ids, offset units, the result type, and the argument
checks that both scanners rely on.  Every other module imports these; none spells them again.

Nothing here scans text; the kernel (`scan_c`) and its twin (`scan_py`) do that.
"""

from __future__ import annotations

import operator
import re
import threading
from collections.abc import Iterable
from typing import Literal, TypedDict

CITATION_START = "\ue200"
CITATION_DELIMITER = "\ue202"
CITATION_STOP = "\ue201"
# The prose a citation supports, where the model marks it: U+E203 prose U+E204 citation.
SUPPORT_START = "\ue203"
SUPPORT_END = "\ue204"
# Every character the marker protocol reserves, U+E200 to U+E206: the characters, and the
# body of a regex class that matches them.
MARKER_CHARS = "".join(map(chr, range(0xE200, 0xE207)))
MARKER_RANGE = f"{MARKER_CHARS[0]}-{MARKER_CHARS[-1]}"

# The guide's own rules as pattern bodies (`fullmatch` them: no anchors), and anchored as
# the guide exports them for drop-in users.  The scanners implement them with per-character
# predicates (ASCII id characters; `str.isdecimal` digits, which is what `\d` means for a
# `str` pattern) and the differential tests hold them to these patterns.
SOURCE_ID_CHAR = r"[A-Za-z0-9_-]"
SOURCE_ID = SOURCE_ID_CHAR + "+"
LOCATOR = r"L\d+(?:-L\d+)?"
SOURCE_ID_RE = re.compile(rf"^{SOURCE_ID}$")
LINE_LOCATOR_RE = re.compile(rf"^{LOCATOR}$")

# The ids a model's tools give (turn0search3, turn2view0): what `clean` takes for ids where no
# grammar says (bare anchors, the lenient forms, a navlist's comma-joined list).
TURN_ID = "turn[0-9]+[A-Za-z]+[0-9]+"

# A family name under `any_family=True`: the longest run of these characters after START.
FAMILY_CHAR = r"[A-Za-z0-9_]"
FAMILY_WORD = FAMILY_CHAR + "+"
FAMILY_WORD_RE = re.compile(FAMILY_WORD)

DEFAULT_FAMILY = "cite"
DEFAULT_FAMILIES: tuple[str, ...] = (DEFAULT_FAMILY,)

# A line ends at \r\n, \r or \n (what `L<n>` counts, and what Markdown splits at).
LINE_BREAK_RE = re.compile(r"\r\n|\r|\n")

# The id a tool result gets: `turn<N><kind><M>` (N: the tool call, M: the result's number
# among those of its kind); the group is the kind.
TURN_KIND = r"[A-Za-z]+"
TURN_ID_RE = re.compile(rf"turn\d+({TURN_KIND})\d+")


def turn_id(turn: int, kind: str, number: int) -> str:
    """The id of result `number` of `kind` in tool call `turn`."""
    return f"turn{turn}{kind}{number}"


# Offset units, by name; a scanner takes the index in this tuple (0, 1, 2).
OffsetUnit = Literal["codepoints", "utf16", "utf8"]
OFFSET_UNITS: tuple[OffsetUnit, ...] = ("codepoints", "utf16", "utf8")
UNITS_CODE_POINTS, UNITS_UTF16, UNITS_UTF8 = range(len(OFFSET_UNITS))


def stop_in_family(families: tuple[str, ...], stop: str, any_family: bool) -> bool:
    """Whether a family name may hold the STOP.  A match of text cut short may then be the
    start of a longer marker once more text comes (the family that holds the STOP, tried
    first, was not all there yet), so a stream asks whether even a START that begins a match
    is decided (the scanners' `first_undecided`)."""
    if any_family:
        return FAMILY_WORD_RE.fullmatch(stop) is not None
    return any(stop in family for family in families)


def heads_at(
    text: str, i: int, families: tuple[str, ...], delimiter: str, any_family: bool
) -> list[tuple[str, int]]:
    """The family rule: (family, index after its DELIM) for each family that starts a
    marker at i (just after a START), in the order they are tried."""
    if any_family:
        word = FAMILY_WORD_RE.match(text, i)
        if word is not None and text.startswith(delimiter, word.end()):
            return [(word.group(), word.end() + len(delimiter))]
        return []
    return [
        (family, i + len(family) + len(delimiter))
        for family in families
        if text.startswith(family, i) and text.startswith(delimiter, i + len(family))
    ]


class Citation(TypedDict):
    raw: str
    family: str
    source_ids: list[str]
    locator: str | None
    start: int
    end: int


def check_families(families: Iterable[str]) -> tuple[str, ...]:
    """Materialise `families` once (a generator is read once, a `str` char by char) and
    check every item, as the guide's helper does when it escapes them.

    Call it only for truthy `families` (empty ones match nothing).  A `str` subclass
    becomes a plain `str`, because the helper reports the family as a
    slice of the text, which is always a plain `str`.
    """
    if type(families) is tuple and families == DEFAULT_FAMILIES:
        return DEFAULT_FAMILIES
    checked = []
    for family in families:
        if type(family) is not str:
            if not isinstance(family, str):
                raise TypeError(f"families must hold str items, not {type(family).__name__}")
            family = str.__str__(family)
        checked.append(family)
    # A truthy iterable that yields nothing (an exhausted iterator): the helper joins no
    # alternatives, and its empty family group matches the family "".
    return tuple(checked) or ("",)


def check_text(text: object) -> str:
    """`text` as a plain `str`.  A subclass is copied once: the helper reads its characters
    through `re`, never its (possibly overridden) methods, and returns plain `str` values."""
    if type(text) is str:
        return text
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    return str.__str__(text)


# A stream's calls run one at a time: one made while another runs (another thread's, or a
# callback's on the stream that called it) is refused with this, as a generator refuses to
# run while it runs, and the stream's state is never torn.
STREAM_BUSY = (
    "the stream is in use by another of its calls: feed and close a stream from one thread "
    "at a time, and not from a callback it made"
)


class StreamClaim:
    """The pure fronts' claim on their stream (the compiled fronts' `busy` flag): `enter`
    takes it or refuses (STREAM_BUSY) while another call holds it, atomically with or
    without the GIL (a lock tried without waiting), `leave` gives it back."""

    __slots__ = ("_lock",)

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def enter(self) -> None:
        if not self._lock.acquire(blocking=False):
            raise ValueError(STREAM_BUSY)

    def leave(self) -> None:
        if self._lock.locked():
            self._lock.release()


def check_chunk(chunk: object) -> None:
    """What a stream's `feed` takes: a str."""
    if not isinstance(chunk, str):
        raise TypeError(f"chunk must be str, not {type(chunk).__name__}")


# The classes check_owner has passed.  Whether a class has `_slow` is a fact of the class,
# so a stream made per answer pays one set lookup (the kernels test it before the call,
# which alone costs more than the rest of a front's construction).
OWNER_TYPES: set[type] = set()


def check_owner(owner: object) -> None:
    """A stream front's owner (the stream) must be of a class with the `_slow` method the
    front calls back for the deltas it leaves to it."""
    cls = type(owner)
    if cls in OWNER_TYPES:
        return
    if not callable(getattr(cls, "_slow", None)):
        raise TypeError(f"owner must have a _slow method, not {cls.__name__}")
    OWNER_TYPES.add(cls)


def check_rules(max_marker_length: object, source_id: object, locator: object) -> None:
    """The scanners' Grammar checks of its optional rules, written once for the kernel and
    the twin: an int bound or None, and id/locator rules with a `fullmatch` (a compiled
    pattern, or `Parser`'s wrapper that caps the parts it is run on)."""
    if max_marker_length is not None and not isinstance(max_marker_length, int):
        raise TypeError(
            f"max_marker_length must be an int or None, not {type(max_marker_length).__name__}"
        )
    for pattern, name in ((source_id, "source_id"), (locator, "locator")):
        if pattern is not None and not callable(getattr(pattern, "fullmatch", None)):
            raise TypeError(
                f"{name} must be a compiled pattern or None, not {type(pattern).__name__}"
            )


# The places a kernel's Py_ssize_t holds, those of a signed 64-bit integer: [PLACE_LOWEST,
# PLACE_BEYOND).
PLACE_LOWEST, PLACE_BEYOND = -(2**63), 2**63


def check_place(value: object, name: str) -> int:
    """A place: an int (or what has __index__) within the range of a signed 64-bit integer,
    what a place in any text can be; a TypeError or OverflowError naming `name` else."""
    try:
        place = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{name} must be an int, not {type(value).__name__}") from None
    if not PLACE_LOWEST <= place < PLACE_BEYOND:
        raise OverflowError(f"{name} is too large for a place: {place}")
    return place
