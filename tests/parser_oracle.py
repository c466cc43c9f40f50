"""A slow, obviously-correct reference for a `citemark.Parser` configuration.

Written from the rules, not from the implementation, and importing nothing from citemark.
Two independent ways to find the markers, which the tests also hold to each other:

* `regex_matches`: one regular expression per configuration,
  ``START(?:(?P<f0>fam0)DELIM(?P<b0>[^STOP]*)STOP|(?P<f1>fam1)DELIM...)`` with every
  family `re.escape`d.  Alternation order is family order; `[^STOP]*` cannot run past the
  first STOP after the family's DELIM (even when a family itself holds marker characters);
  `finditer` gives the left-to-right, non-overlapping scan.  A `max_marker_length` N is a
  bounded body, ``[^STOP]{0,K}STOP`` with K = N - 3 - len(family): the marker is
  START + family + DELIM + body + STOP, so it fits when len(body) <= K.
  With `any_family` the family is ``(?P<family>[A-Za-z0-9_]+)`` (no length bound: the
  loop below covers that case).
* `loop_matches`: the rule spelled out as a quadratic loop over positions.

The rest (judging a body, offsets in other units, strip, sub, supports) is written as
plainly as possible on top of the list of consumed markers.  For `skip_code` the oracle
takes the code regions from a callable (the tests pass `citemark._markdown.code.find_code_ranges`,
which has its own tests) and scans each stretch of prose between them on its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

START = "\ue200"
DELIM = "\ue202"
STOP = "\ue201"
SUPPORT_START = "\ue203"
SUPPORT_END = "\ue204"
STRAY = {chr(code) for code in range(0xE200, 0xE207)}  # U+E200 .. U+E206

DEFAULT_SOURCE_ID = r"[A-Za-z0-9_-]+"
DEFAULT_LOCATOR = r"L\d+(?:-L\d+)?"  # `\d` on a str pattern: str.isdecimal()
WORD = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"


class Consumed(NamedTuple):
    """A marker the grammar consumed: text[start:end] is START .. STOP."""

    start: int
    end: int
    family: str
    body: str


class Record(NamedTuple):
    """What `Parser.finditer` yields (compared as a plain tuple)."""

    family: str
    source_ids: tuple[str, ...]
    locator: str | None
    start: int
    end: int
    clean_start: int


def units(text: str, offsets: str) -> int:
    """len(text) in code points, UTF-16 code units or UTF-8 bytes (lone surrogates
    counted as their UTF-16 unit / their 3-byte encoding)."""
    if offsets == "codepoints":
        return len(text)
    if offsets == "utf16":
        return len(text.encode("utf-16-le", "surrogatepass")) // 2
    if offsets == "utf8":
        return len(text.encode("utf-8", "surrogatepass"))
    raise AssertionError(offsets)


class Oracle:
    """The reference for one Parser configuration (same keyword names as Parser)."""

    def __init__(
        self,
        families: Sequence[str] = ("cite",),
        *,
        any_family: bool = False,
        start: str = START,
        delimiter: str = DELIM,
        stop: str = STOP,
        source_id: str | re.Pattern[str] = DEFAULT_SOURCE_ID,
        locator: str | re.Pattern[str] = DEFAULT_LOCATOR,
        max_marker_length: int | None = None,
        offsets: str = "codepoints",
        code: Callable[[str], list[tuple[int, int]]] | None = None,
    ) -> None:
        self.families = [] if any_family else list(families)
        self.any_family = any_family
        self.start, self.delimiter, self.stop = start, delimiter, stop
        self.source_id = re.compile(source_id) if isinstance(source_id, str) else source_id
        self.locator = re.compile(locator) if isinstance(locator, str) else locator
        self.max_marker_length = max_marker_length
        self.offsets = offsets
        # skip_code: `code(text)` gives the code regions (sorted, disjoint), which are code ranges:
        # each stretch of prose between them is scanned on its own, code is never touched.
        self.code = code

    # -- finding the markers, two ways -----------------------------------------------

    def regex(self) -> re.Pattern[str]:
        start, delim = re.escape(self.start), re.escape(self.delimiter)
        stop = re.escape(self.stop)
        limit = self.max_marker_length
        if self.any_family:
            assert limit is None, "any_family with a length limit: use loop_matches"
            return re.compile(f"{start}(?P<family>[A-Za-z0-9_]+){delim}(?P<body>[^{stop}]*){stop}")
        alternatives = []
        for k, family in enumerate(self.families):
            if limit is None:
                body = f"[^{stop}]*"
            else:
                room = limit - 3 - len(family)
                if room < 0:
                    alternatives.append("(?!)")  # this family can never fit
                    continue
                body = f"[^{stop}]{{0,{room}}}" if room < 2**31 else f"[^{stop}]*"
            alternatives.append(f"(?P<f{k}>{re.escape(family)}){delim}(?P<b{k}>{body}){stop}")
        return re.compile(f"{start}(?:{'|'.join(alternatives)})")

    def regex_matches(self, text: str) -> list[Consumed]:
        found = []
        for match in self.regex().finditer(text):
            if self.any_family:
                family, body = match.group("family"), match.group("body")
            else:
                groups = match.groupdict()  # a family that can never fit has no group
                k = next(k for k in range(len(self.families)) if groups.get(f"f{k}") is not None)
                family, body = groups[f"f{k}"], groups[f"b{k}"]
            found.append(Consumed(match.start(), match.end(), family, body))
        return found

    def candidate_families(self, text: str, after_start: int) -> list[str]:
        """The families that text continues with (then DELIM) at after_start, in order."""
        if not self.any_family:
            return [f for f in self.families if text.startswith(f + self.delimiter, after_start)]
        end = after_start
        while end < len(text) and text[end] in WORD:
            end += 1
        name = text[after_start:end]
        if name and text.startswith(self.delimiter, end):
            return [name]
        return []

    def loop_matches(self, text: str) -> list[Consumed]:
        found = []
        i = 0
        while i < len(text):
            if text[i] != self.start:
                i += 1
                continue
            matched = None
            for family in self.candidate_families(text, i + 1):
                body_start = i + 1 + len(family) + 1
                stop = text.find(self.stop, body_start)
                if stop < 0:
                    continue
                length = stop + 1 - i  # START .. STOP inclusive
                if self.max_marker_length is not None and length > self.max_marker_length:
                    continue
                matched = Consumed(i, stop + 1, family, text[body_start:stop])
                break
            if matched is None:
                i += 1  # fail open: this START is plain text
            else:
                found.append(matched)
                i = matched.end
        return found

    def scan(self, text: str) -> list[Consumed]:
        if self.any_family and (self.max_marker_length is not None or self.delimiter in WORD):
            # A word-character DELIM (which Parser rejects with any_family): the regex
            # would backtrack to a shorter name, the loop reads the whole run as the name.
            return self.loop_matches(text)
        return self.regex_matches(text)

    def matches(self, text: str) -> list[Consumed]:
        """The consumed markers of text, in a code range off by code when there is `code`."""
        if self.code is None:
            return self.scan(text)
        found = []
        at = 0
        for code_start, code_end in [*self.code(text), (len(text), len(text))]:
            for m in self.scan(text[at:code_start]):
                found.append(m._replace(start=m.start + at, end=m.end + at))
            at = code_end
        return found

    def in_code(self, text: str) -> set[int]:
        """The indexes of text that are code (none without `code`)."""
        regions = self.code(text) if self.code else []
        return {i for start, end in regions for i in range(start, end)}

    # -- judging a body ----------------------------------------------------------------

    def judge(self, body: str) -> tuple[list[str], str | None] | None:
        """(source ids, locator) when the body is a citation, else None."""
        parts = []
        for piece in body.split(self.delimiter):
            piece = piece.strip()
            if piece:
                parts.append(piece)
        if not parts:
            return None
        locator = None
        if self.locator.fullmatch(parts[-1]):
            locator = parts.pop()
        if not parts:
            return None
        for part in parts:
            if not self.source_id.fullmatch(part):
                return None
        return parts, locator

    # -- the Parser's methods ------------------------------------------------------------

    def spans(self, text: str) -> list[tuple[int, int, bool]]:
        return [(m.start, m.end, self.judge(m.body) is not None) for m in self.matches(text)]

    def valid(self, text: str) -> list[tuple[Consumed, list[str], str | None]]:
        result = []
        for m in self.matches(text):
            judged = self.judge(m.body)
            if judged is not None:
                result.append((m, judged[0], judged[1]))
        return result

    def extract(self, text: str) -> list[dict[str, Any]]:
        return [
            {
                "raw": text[m.start : m.end],
                "family": m.family,
                "source_ids": ids,
                "locator": locator,
                "start": m.start,
                "end": m.end,
            }
            for m, ids, locator in self.valid(text)
        ]

    def finditer(self, text: str, offsets: str | None = None) -> list[Record]:
        """The citations as records, offsets in `offsets` (default: the configured unit)."""
        offsets = offsets or self.offsets
        result = []
        removed = 0
        for m, ids, locator in self.valid(text):
            start = units(text[: m.start], offsets)
            end = units(text[: m.end], offsets)
            result.append(Record(m.family, tuple(ids), locator, start, end, start - removed))
            removed += end - start
        return result

    def strip(self, text: str) -> str:
        for m, _ids, _locator in reversed(self.valid(text)):
            text = text[: m.start] + text[m.end :]
        return text

    def sub(self, text: str, repl: Callable[[Any], str], sanitize: bool = False) -> str:
        """Citations replaced by repl(record in code points); with sanitize, invalid
        consumed markers removed and the kept text scrubbed of U+E200 .. U+E206."""

        code = self.in_code(text)

        def other_marker_end(i: int, end: int) -> int | None:
            """The end of a whole marker of the guide's characters at i (any family, one
            line, a body of 4096 characters at most), none of it in code."""
            j = i + 1
            while j < end and j not in code and text[j] in WORD:
                j += 1
            if j < end and j not in code and text[j] == "\ue202":
                k = j + 1
                while k < end and k not in code and text[k] not in "\ue200\ue201\n\r":
                    k += 1
                if k - j - 1 > 4096:
                    return None
                j = k
            if j < end and j not in code and text[j] == "\ue201":
                return j + 1
            return None

        def keep(start: int, end: int) -> str:
            if not sanitize:
                return text[start:end]
            kept = []
            i = start
            while i < end:
                if text[i] == "\ue200" and i not in code:
                    after = other_marker_end(i, end)
                    if after is not None:
                        i = after
                        continue
                if i in code or text[i] not in STRAY:
                    kept.append(text[i])
                i += 1
            return "".join(kept)

        records = iter(self.finditer(text, "codepoints"))
        out = []
        at = 0
        for m in self.matches(text):
            if self.judge(m.body) is not None:
                out.append(keep(at, m.start))
                out.append(repl(next(records)))
                at = m.end
            elif sanitize:
                # an unclosed START read on to a later STOP: its prose stays, scrubbed
                inner = text.rfind(self.start, m.start + 1, m.end)
                out.append(keep(at, max(m.start, inner)))
                at = m.end
        out.append(keep(at, len(text)))
        return "".join(out)

    def supports(self, text: str) -> list[tuple[Record, int, int]]:
        """(citation record in code points, start, end): U+E203 prose U+E204, then only
        white space, then the citation; the prose holds neither U+E203 nor U+E204."""
        shape = re.compile(f"{SUPPORT_START}([^{SUPPORT_START}{SUPPORT_END}]*){SUPPORT_END}\\s*\\Z")
        found = []
        for record in self.finditer(text, "codepoints"):
            match = shape.search(text[: record[3]])
            if match:
                found.append((record, match.start(1), match.end(1)))
        return found
