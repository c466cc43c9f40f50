"""The pure-Python twin of `clean_c.pyx`: finding every marker character and cutting the text.

Same functions, names and branch order as the kernel; the rules are in `_core.shapes`.

- `scan(text, code_ranges)`: the tokens of text outside `code_ranges` (code), as tuples
  `(kind, start, end, family_start, family_end, body_start, body_end)`.
- `join(text, tokens, replacements)`: the text with each token replaced (removed when its
  replacement is empty, with the spacing rule), and where each token landed in the result.
- `clean(text, code_ranges, entity, plain_names)`: scan and join in one call, entity bodies
  shown through `entity(body)`, or read in place when `plain_names` and the body is a JSON
  array of plain strings (`plain_name`).
- `clean_texts(texts, code_ranges_of, entity, plain_names)`: `clean` over a batch, each text's
  code ranges asked of `code_ranges_of` only when it may hold Markdown code.
- `has_markers(text)`: whether text holds any private-use character (what clean removes:
  the markers' characters and any other of `_core.shapes.PRIVATE_RANGE`); `marker_state(text)`
  also says whether it may hold Markdown code.

Linear: every START's body search ends at the next START, so bodies never overlap.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .._core.grammar import FAMILY_CHAR, STREAM_BUSY, TURN_ID, StreamClaim, check_owner
from .._core.shapes import (
    BARE,
    BLANKS,
    BROKEN,
    CLOSERS,
    CLOSING,
    DASHES,
    DELIM,
    EMPHASIS,
    ENTITY,
    ENTITY_FAMILY,
    FRONT_OFF,
    FRONT_STOPS,
    LINE_BREAKS,
    LINK_TEXT_MAX,
    MARKER,
    MARKERS_MAYBE_IN_CODE,
    MARKERS_OUTSIDE_CODE,
    MAX_MARKER,
    NO_BREAK,
    NO_MARKERS,
    NOT_PLAIN,
    OPENERS,
    PRIVATE_RANGE,
    QUOTES,
    SEPARATORS,
    SHORT_HOLD,
    START,
    STOP,
    STRAY,
    TITLED_FAMILIES,
    UNSPACED,
    UNSPACED_PUNCTUATION,
)
from .._markdown.code import markers_may_be_in_code

Token = tuple[int, int, int, int, int, int, int]

# What clean removes outside code: every private-use character, the markers' among them.
_SPECIAL = re.compile(f"[{PRIVATE_RANGE}]")
_BODY_END = re.compile(f"[{START}{STOP}{LINE_BREAKS}]")
_WORD = re.compile(FAMILY_CHAR + "*")
_ID_CHAIN = re.compile(f"{TURN_ID}(?:{DELIM}(?:{TURN_ID}|L[0-9]+(?:-L[0-9]+)?))*")
# An entity body in its common shape: a JSON array of strings without escape, control or
# marker characters; the first two strings are captured.
_JSON_BLANKS = "[ \t\n\r]*"
_PLAIN = f'"[^"\\\\\x00-\x1f{PRIVATE_RANGE}]*"'
_ITEM = f"{_JSON_BLANKS}({_PLAIN}){_JSON_BLANKS}"
_PLAIN_ARRAY = re.compile(rf"\[{_ITEM}(?:,{_ITEM}(?:,{_JSON_BLANKS}{_PLAIN}{_JSON_BLANKS})*)?\]")


def marker_state(text: str) -> int:
    """`_core.shapes.NO_MARKERS`, `MARKERS_OUTSIDE_CODE` (none can be in Markdown code) or
    `MARKERS_MAYBE_IN_CODE` (see _markdown.code.markers_may_be_in_code)."""
    if not has_markers(text):
        return NO_MARKERS
    return MARKERS_MAYBE_IN_CODE if markers_may_be_in_code(text) else MARKERS_OUTSIDE_CODE


def has_markers(text: str) -> bool:
    if type(text) is not str:
        raise TypeError(f"text must be str, not {type(text).__name__}")
    return _SPECIAL.search(text) is not None


def check_code_ranges(text: str, code_ranges: Any) -> list[tuple[int, int]]:
    if type(text) is not str:
        raise TypeError(f"text must be str, not {type(text).__name__}")
    if type(code_ranges) is not list:
        raise TypeError(f"code_ranges must be a list, not {type(code_ranges).__name__}")
    checked = []
    at = 0
    for code_range in code_ranges:
        if type(code_range) is not tuple or len(code_range) != 2:
            raise TypeError("code_ranges must hold (start, end) tuples")
        start, end = code_range
        if type(start) is not int or type(end) is not int:
            raise TypeError("code_ranges must hold (start, end) tuples of int")
        if not at <= start <= end <= len(text):
            raise ValueError("code_ranges must be sorted, disjoint and inside the text")
        checked.append((start, end))
        at = end
    return checked


def scan(text: str, code_ranges: list[tuple[int, int]]) -> list[Token]:
    tokens: list[Token] = []
    at = 0
    for code_start, code_end in [*check_code_ranges(text, code_ranges), (len(text), len(text))]:
        scan_segment(text, at, code_start, tokens)
        at = code_end
    return tokens


def id_chain(text: str, i: int, limit: int) -> int:
    """The end of `id (DELIM (id|locator))*` at i (ids as `turn0search0`), or i."""
    chain = _ID_CHAIN.match(text, i, limit)
    return i if chain is None else chain.end()


def ends_line(text: str, i: int, b: int) -> bool:
    """Whether the segment text[:b] or a line ends at i."""
    return i >= b or text[i] in LINE_BREAKS


_CUT_SHORT = re.compile(f"[A-Za-z0-9_{DELIM}-]*")


def cut_short(text: str, i: int, end: int, entity: bool) -> bool:
    """Whether text[i:end], the body of a marker that the line or the text ended inside, is
    what a body could be so far: ids, locators and delimiters (`turn17sea`), or for an
    entity the start of its JSON array (`["city","Par`: a `]` only at the end)."""
    if entity and text.startswith("[", i, end):
        return text.find("]", i, end) in (-1, end - 1)
    return _CUT_SHORT.match(text, i, end).end() == end  # type: ignore[union-attr]


def scan_segment(text: str, i: int, b: int, tokens: list[Token]) -> None:
    while True:
        special = _SPECIAL.search(text, i, b)
        if special is None:
            return
        i = special.start()
        char = text[i]
        if char == START:
            family_end = _WORD.match(text, i + 1, b).end()  # type: ignore[union-attr]
            if family_end < b and text[family_end] == STOP:
                tokens.append(
                    (MARKER, i, family_end + 1, i + 1, family_end, family_end, family_end)
                )
                i = family_end + 1
                continue
            if (
                family_end > i + 1
                and ends_line(text, family_end, b)
                and not (i > 0 and _WORD.match(text, i - 1, i).end() == i)  # type: ignore[union-attr]
            ):
                # A family name cut short by the end of the line or text: all of it goes
                # (glued to a word, "a<START>b", it is a stray START in prose).
                tokens.append((BROKEN, i, family_end, i + 1, family_end, family_end, family_end))
                i = family_end
                continue
            if family_end < b and text[family_end] == DELIM:
                body = family_end + 1
                limit = min(b, i + MAX_MARKER)
                found = _BODY_END.search(text, body, limit)
                body_end = limit if found is None else found.start()
                if body_end < limit and text[body_end] == STOP:
                    kind = ENTITY if text[i + 1 : family_end] == ENTITY_FAMILY else MARKER
                    tokens.append((kind, i, body_end + 1, i + 1, family_end, body, body_end))
                    i = body_end + 1
                    continue
                # Never closed, or abandoned by a new START: the head and its ids go; all of
                # it when the line or the text ends inside what its body could be.
                end = id_chain(text, body, body_end)
                rest = end
                if (
                    body_end - i < MAX_MARKER
                    and ends_line(text, body_end, b)
                    and cut_short(text, body, body_end, text[i + 1 : family_end] == ENTITY_FAMILY)
                ):
                    rest = body_end
                tokens.append((BROKEN, i, rest, i + 1, family_end, body, end))
                i = rest
                continue
        elif char == DELIM:
            end = id_chain(text, i + 1, b)
            if end > i + 1:
                tokens.append((BARE, i, end, i, i, i + 1, end))
                i = end
                continue
        tokens.append((STRAY, i, i + 1, i, i, i, i))
        i += 1


class Output:
    """The result being built: pieces, their length, and what the spacing rule needs to
    know about its end (trailing blanks, and the character before them)."""

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.length = 0
        self.trail = 0  # trailing blanks
        self.before = "\n"  # the character before them ("\n" at the start: a line start)
        # What one spacing decision did to the end (see Places.settle): the shortest the
        # output was, and the index of the "[" that unwrap_link took out (-1: none).
        self.low = 0
        self.moved = -1

    def emit(self, piece: str) -> None:
        if not piece:
            return
        self.pieces.append(piece)
        self.length += len(piece)
        kept = piece.rstrip(BLANKS)
        if kept:
            self.trail = len(piece) - len(kept)
            self.before = kept[-1]
        else:
            self.trail += len(piece)

    def drop_trail(self) -> None:
        count = self.trail
        self.length -= count
        while count:
            last = self.pieces.pop()
            if len(last) > count:
                self.pieces.append(last[:-count])
                count = 0
            else:
                count -= len(last)
        self.trail = 0
        self.low = min(self.low, self.length)

    def drop_last(self) -> None:
        """Take out the last character (never a blank: the trail goes first), then find the
        blanks now trailing and the character before them.  The look back stops after
        LINK_TEXT_MAX blanks (so that it stays linear): the character before them is then
        taken for a line start when it is a line break or the start, else for a blank."""
        tail = self.tail(LINK_TEXT_MAX + 2)[:-1]
        if tail:
            self.pieces.append(tail)
            self.length += len(tail)
        self.low = min(self.low, self.length)
        window = tail[-LINK_TEXT_MAX:]
        kept = window.rstrip(BLANKS)
        self.trail = len(window) - len(kept)
        if kept:
            self.before = kept[-1]
        elif len(window) == len(tail) or tail[-len(window) - 1] in LINE_BREAKS:
            self.before = "\n"
        else:
            self.before = " "

    def peek(self, wanted: int) -> str:
        """The last `wanted` characters (fewer at the start), left in place."""
        taken: list[str] = []
        size = 0
        for piece in reversed(self.pieces):
            if size >= wanted:
                break
            taken.append(piece)
            size += len(piece)
        return "".join(reversed(taken))[-wanted:] if wanted else ""

    def tail(self, wanted: int) -> str:
        """The last `wanted` characters (fewer at the start), taken out of the pieces."""
        taken: list[str] = []
        size = 0
        while self.pieces and size < wanted:
            last = self.pieces.pop()
            if size + len(last) > wanted:
                keep = len(last) - (wanted - size)
                self.pieces.append(last[:keep])
                last = last[keep:]
            taken.append(last)
            size += len(last)
        self.length -= size
        return "".join(reversed(taken))


def unwrap_link(out: Output) -> bool:
    """The output ends with `[text](` and the marker was the destination: keep `text`.  The
    `[` is looked for on the same line, at most LINK_TEXT_MAX characters back, brackets
    balanced; a link text of blanks only stays as it is."""
    if out.trail or out.before != "(":
        return False
    tail = out.tail(LINK_TEXT_MAX + 2)
    opened = -1
    if tail.endswith("]("):
        depth = 0
        for index in range(len(tail) - 3, -1, -1):
            char = tail[index]
            if char in LINE_BREAKS:
                break
            if char == "]":
                depth += 1
            elif char == "[":
                if depth == 0:
                    opened = index
                    break
                depth -= 1
    link_text = tail[opened + 1 : -2]
    if opened < 0 or not link_text.strip(BLANKS):
        out.pieces.append(tail)
        out.length += len(tail)
        return False
    out.moved = out.length + opened
    out.emit(tail[:opened] + link_text)
    return True


class Places:
    """Where each token landed in the output.  Tokens that share a place are kept as one
    group (a stack of groups, places increasing), so that when the spacing rule takes
    characters off the end, each group moves once: the work stays linear however many
    removals pile up at one place."""

    def __init__(self, count: int) -> None:
        self.at = [0] * count
        self.groups: list[int] = []  # the first token of each group

    def put(self, index: int, place: int) -> None:
        self.at[index] = place
        if not self.groups or self.at[self.groups[-1]] != place:
            self.groups.append(index)

    def settle(self, out: Output) -> None:
        """After a spacing decision: places past out.low come back to it, then, when
        unwrap_link took out the "[" at out.moved, those after it move back by one (and
        those after the link text to the end)."""
        groups, at = self.groups, self.at
        floor = out.low if out.moved < 0 else min(out.low, out.moved)
        moved: list[int] = []
        while groups and at[groups[-1]] > floor:
            moved.append(groups.pop())
        for group in reversed(moved):
            place = min(at[group], out.low)
            if out.moved >= 0 and place > out.moved:
                place = min(place - 1, out.length)
            at[group] = place
            if not groups or at[groups[-1]] != place:
                groups.append(group)

    def places(self) -> list[int]:
        groups, at = self.groups, self.at
        for k, first in enumerate(groups):
            last = groups[k + 1] if k + 1 < len(groups) else len(at)
            for index in range(first + 1, last):
                at[index] = at[first]
        return at


def join(
    text: str, tokens: list[Token], replacements: list[str] | None
) -> tuple[str, list[int], list[int]]:
    """text with each token replaced, the position of each replacement in the result, and
    where the text resumes after each token (its end, or, for the last of a run of
    removals, past what the spacing rule took after the run: the cuts of a mapped clean
    need it where the characters it took have twins, as a line feed after an emptied line)."""
    if type(text) is not str:
        raise TypeError(f"text must be str, not {type(text).__name__}")
    if type(tokens) is not list:
        raise TypeError(f"tokens must be a list, not {type(tokens).__name__}")
    if replacements is not None and (
        type(replacements) is not list or len(replacements) != len(tokens)
    ):
        raise TypeError("replacements must be None or a list as long as tokens")
    n = len(text)
    out = Output()
    places = Places(len(tokens))
    resumes: list[int] = []
    pos = 0
    run_first = 0  # the first token of the current run of adjacent removals
    for index, token in enumerate(tokens):
        if type(token) is not tuple or len(token) != 7:
            raise TypeError("tokens must hold tuples of 7 int")
        start, end = token[1], token[2]
        if type(start) is not int or type(end) is not int:
            raise TypeError("tokens must hold tuples of 7 int")
        if not pos <= start <= end <= n:
            raise ValueError("tokens must be sorted, disjoint and inside the text")
        replacement = "" if replacements is None else replacements[index]
        if type(replacement) is not str:
            raise TypeError("replacements must hold str")
        if start > pos:
            out.emit(text[pos:start])
            run_first = index
        pos = end
        resumes.append(end)
        if replacement:
            places.put(index, out.length)
            out.emit(replacement)
            run_first = index + 1
            continue
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if (
            following is not None
            and following[1] == end
            and (replacements is None or not replacements[index + 1])
        ):
            continue  # the run goes on: the spacing is decided at its end
        pos = resumes[index] = space(text, end, out)
        places.settle(out)
        for run_index in range(run_first, index + 1):
            places.put(run_index, out.length)
        run_first = index + 1
    out.emit(text[pos:])
    positions = places.places()
    if not positions and pos == 0:
        return text, positions, resumes
    return "".join(out.pieces), positions, resumes


def _pair(opener: str, closer: str) -> bool:
    index = CLOSERS.find(closer)
    return index >= 0 and OPENERS[index] == opener


def _within(ranges: tuple[tuple[int, int], ...], char: str) -> bool:
    code = ord(char)
    return code >= ranges[0][0] and any(low <= code <= high for low, high in ranges)


def unspaced_join(before: str, after: str) -> bool:
    """Whether a removal between `before` and `after` takes the blanks around it (UNSPACED)."""
    return _within(UNSPACED_PUNCTUATION, before) or (
        _within(UNSPACED, before) and _within(UNSPACED, after)
    )


def _emptied_run(text: str, end: int, out: Output) -> int:
    """The length of the run of an emphasis mark at text[end] that closes the run of the
    same mark and length the output ends with (before its trailing blanks), so that only the
    removals and blanks stood between them; 0 for none.  The output's run opens (a blank, a
    line start or an opener before it) and the text's closes (a blank, a line end, closing
    punctuation or the end after it)."""
    mark = text[end]
    after = end
    while after < len(text) and text[after] == mark:
        after += 1
    count = after - end
    if after < len(text) and not (
        text[after] in BLANKS or text[after] in LINE_BREAKS or text[after] in CLOSING
    ):
        return 0
    tail = out.peek(out.trail + count + 1)
    body = tail[: len(tail) - out.trail]
    if len(body) < count or body[len(body) - count :] != mark * count:
        return 0
    before = body[: len(body) - count][-1:]
    if before and not (before in BLANKS or before in LINE_BREAKS or before in OPENERS):
        return 0
    return count


def _no_break(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] holds a no-break space (NO_BREAK)."""
    return any(char in NO_BREAK for char in text[start:end])


def _blanks_end(text: str, at: int) -> int:
    """The end of the blanks from `at` (at itself when none)."""
    n = len(text)
    while at < n and text[at] in BLANKS:
        at += 1
    return at


def _line_end(text: str, at: int) -> int:
    """Past the line break at `at` (a CR LF pair is one)."""
    return at + 2 if text.startswith("\r\n", at) else at + 1


def space(text: str, end: int, out: Output) -> int:
    """The spacing rule where a run of removals ended at `end`; returns where the text
    resumes.  Blanks between the run and closing punctuation go first; then what the
    removals emptied goes (a bracket holding only blanks, a separator with nothing on one
    side); then the blanks before the run are dropped when what follows is a line end,
    blanks or closing punctuation, unless they indent the line; at a line start, the blanks
    after the run are skipped instead (after an opener too, once a separator went); between
    characters of scripts written without blanks (see UNSPACED), the blanks on both sides
    go."""
    n = len(text)
    out.low = out.length
    out.moved = -1
    # The blanks after the run (read once: the blank case below needs them too, when the
    # loop leaves `end` where it was).
    start = end
    resume = _blanks_end(text, end)
    if end < resume < n and text[resume] in CLOSING and not _no_break(text, end, resume):
        end = resume  # "word <m> ." is "word <m>.": the blanks before the punctuation go
    while True:
        following = text[end] if end < n else "\n"
        if following == ")" and unwrap_link(out):
            return end + 1
        last = out.before
        if following in SEPARATORS and (
            last in OPENERS or last in SEPARATORS or last in LINE_BREAKS
        ):
            end += 1  # a separator with nothing before it
            if last in OPENERS:
                while end < n and text[end] in BLANKS:
                    end += 1
            continue
        if (
            following in CLOSERS
            and _pair(last, following)
            and not (following == "]" and text[end + 1 : end + 2] == "(")
        ):
            out.drop_trail()  # a bracket left empty (a link's "[]" stays)
            out.drop_last()
            end += 1
            continue
        if following in EMPHASIS and last == following:
            count = _emptied_run(text, end, out)
            if count:
                out.drop_trail()  # an emphasis left empty ("**" and "**" around nothing)
                for _ in range(count):
                    out.drop_last()
                end += count
                continue
        if last in SEPARATORS and (_closes(text, end) or following in LINE_BREAKS):
            out.drop_trail()  # a separator with nothing after it
            out.drop_last()
            continue
        break
    at_line_start = out.before in LINE_BREAKS
    if following in LINE_BREAKS:
        out.drop_trail()
        if at_line_start and end < n:
            # The run emptied its line: the line goes (a blank one would end a paragraph).
            end = _line_end(text, end)
    elif following in BLANKS:
        if end != start:
            resume = _blanks_end(text, end)
        if at_line_start:
            end = resume
            if resume < n and text[resume] in LINE_BREAKS:
                out.drop_trail()
                end = _line_end(text, resume)  # (as above)
        elif unspaced_join(out.before, text[resume] if resume < n else "\n"):
            out.drop_trail()
            end = resume
        elif out.trail:
            out.drop_trail()
    elif not at_line_start and (_closes(text, end) or unspaced_join(out.before, following)):
        out.drop_trail()
    return end


def _closes(text: str, at: int) -> bool:
    """Whether text[at], right after a run of removals, closes: closing punctuation, or a
    run of a quote (QUOTES) that a blank, a line end, closing punctuation, a dash, another
    quote, a character of a script written without blanks or the end of the text follows (a
    quote that a word, a digit or another symbol follows opens: '**(1868)**')."""
    if at >= len(text):
        return False
    first = text[at]
    if first in CLOSING:
        return True
    if first not in QUOTES:
        return False
    while at < len(text) and text[at] == first:
        at += 1
    if at == len(text):
        return True
    after = text[at]
    return (
        after in BLANKS
        or after in LINE_BREAKS
        or after in CLOSING
        or after in DASHES
        or after in QUOTES
        or _within(UNSPACED, after)
    )


def plain_name(text: str, start: int, end: int) -> str | None:
    """What clean.entity_name shows for the entity body text[start:end] in its common shape,
    a JSON array of plain strings: the second string (the first when alone), stripped.
    None for any other body, which the `entity` function decides."""
    array = _PLAIN_ARRAY.fullmatch(text, start, end)
    if array is None:
        return None
    name = array[1] if array[2] is None else array[2]
    return name[1:-1].strip()


def clean(
    text: str,
    code_ranges: list[tuple[int, int]],
    entity: Callable[[str], str] | None = None,
    plain_names: bool = False,
) -> str | None:
    """scan and join in one call, entity markers shown as entity(body), or read in place
    when plain_names and the body has the common shape (see plain_name); None when there
    is an entity marker and no `entity` function, or a marker of TITLED_FAMILIES (the
    front renders those)."""
    if entity is not None and not callable(entity):
        raise TypeError(f"entity must be None or callable, not {type(entity).__name__}")
    if type(plain_names) is not bool:
        raise TypeError(f"plain_names must be bool, not {type(plain_names).__name__}")
    tokens = scan(text, code_ranges)
    replacements = None
    for index, token in enumerate(tokens):
        if text[token[3] : token[4]] in TITLED_FAMILIES:
            return None
        if token[0] != ENTITY:
            continue
        if entity is None:
            return None
        if replacements is None:
            replacements = [""] * len(tokens)
        shown = plain_name(text, token[5], token[6]) if plain_names else None
        if shown is None:
            shown = entity(text[token[5] : token[6]])
            if type(shown) is not str:
                raise TypeError(f"entity must return str, not {type(shown).__name__}")
        replacements[index] = shown
    return join(text, tokens, replacements)[0]


def clean_texts(
    texts: list[str],
    code_ranges_of: Callable[[str], list[tuple[int, int]]] | None,
    entity: Callable[[str], str] | None,
    plain_names: bool,
) -> list[str | None]:
    """For each text: the text itself when it holds no marker character, else
    clean(text, code_ranges, entity, plain_names), the code ranges being code_ranges_of(text) when a
    marker may be in Markdown code (see marker_state; code_ranges_of None: never any code ranges).
    None for an item that is not exactly a str, and where clean gives None: the front decides
    those."""
    if type(texts) is not list:
        raise TypeError(f"texts must be a list, not {type(texts).__name__}")
    if entity is not None and not callable(entity):
        raise TypeError(f"entity must be None or callable, not {type(entity).__name__}")
    if type(plain_names) is not bool:
        raise TypeError(f"plain_names must be bool, not {type(plain_names).__name__}")
    if code_ranges_of is not None and not callable(code_ranges_of):
        raise TypeError(
            f"code_ranges_of must be None or callable, not {type(code_ranges_of).__name__}"
        )
    results: list[str | None] = []
    for text in texts:
        if type(text) is not str:
            results.append(None)
            continue
        state = marker_state(text)
        if state == NO_MARKERS:
            results.append(text)
        elif state == MARKERS_MAYBE_IN_CODE and code_ranges_of is not None:
            results.append(clean(text, code_ranges_of(text), entity, plain_names))
        else:
            results.append(clean(text, [], entity, plain_names))
    return results


# --- the stream's common delta ---------------------------------------------------------------

# What the front never releases on its own (`_core.shapes.FRONT_STOPS`, and any private-use
# character).
_FRONT_STOP = re.compile(f"[{re.escape(FRONT_STOPS)}{PRIVATE_RANGE}]")
# What a START that waits for its STOP leaves to the stream: a START or STOP (which may decide
# it), and the front's stops that the stream must see.
_DECIDES = re.compile(f"[{START}{STOP}{re.escape(FRONT_STOPS)}]")


class StreamFront(StreamClaim):
    """The common delta of a `CleanStream` in one call.  While `on` (the stream's line cannot
    be code and holds nothing undecided but blanks, brackets or separators in `tail`), a
    delta with none of `_FRONT_STOP` goes out up to its last character not in NOT_PLAIN, the
    held tail before it; a START in it (and no START, STOP or line break after) goes out up
    to there too, and the front then `waiting`.  While `waiting` (a START in the tail waits
    for its STOP), a delta with no START, STOP or line break is only kept, in `parts`.
    Anything else goes to `owner._slow(chunk)`, the stream's own path.  `pending` is the
    stream's list of the current line's chunks; `work`, `skip` and `raw` count the
    characters looked at and the clean and raw characters released of the stream's next
    piece; `context` is the last character released.

    The stream also keeps here its line's `state` and `looked`, and, for the compiled front's
    path that ends lines itself (`own`: not in this twin, whose stream takes those deltas),
    `mixed`, `pending_length`, `line_from` and `entity`; `finish()` leaves the close to the
    stream."""

    def __init__(
        self,
        owner: Any,
        pending: list[str],
        state: int = FRONT_OFF,
        entity: Callable[[str], str] | None = None,
        own: bool = False,
    ) -> None:
        check_owner(owner)
        if type(pending) is not list:
            raise TypeError(f"pending must be a list, not {type(pending).__name__}")
        if entity is not None and not callable(entity):
            raise TypeError(f"entity must be None or callable, not {type(entity).__name__}")
        self.owner = owner
        StreamClaim.__init__(self)
        self.pending = pending
        self.on = False
        self.waiting = False
        self.own = own
        self.mixed = False
        self.state = state
        self.entity = entity
        self.parts: list[str] = []
        self.parts_length = 0
        self.looked = 0
        self.pending_length = sum(len(piece) for piece in pending)
        self.line_from = 0
        self.tail = ""
        self.context = ""
        self.work = 0
        self.skip = 0
        self.raw = 0

    def finish(self) -> str | None:
        if self._lock.locked():  # (refused while another call runs, as the compiled front's)
            raise ValueError(STREAM_BUSY)
        return None

    def feed(self, chunk: str) -> str:
        # The stream's calls run one at a time, as the compiled front's claim (see StreamClaim).
        self.enter()
        try:
            return self._feed(chunk)
        finally:
            self.leave()

    def _feed(self, chunk: str) -> str:
        if type(chunk) is not str:
            return self.owner._slow(chunk)  # type: ignore[no-any-return]
        if self.waiting:
            if _DECIDES.search(chunk) is not None:
                return self.owner._slow(chunk)  # type: ignore[no-any-return]
            self.pending.append(chunk)
            self.pending_length += len(chunk)
            self.parts.append(chunk)
            self.parts_length += len(chunk)
            self.work += len(chunk)
            return ""
        if not self.on:
            return self.owner._slow(chunk)  # type: ignore[no-any-return]
        stop = _FRONT_STOP.search(chunk)
        end = len(chunk)
        if stop is not None:
            end = stop.start()
            if chunk[end] != START or _DECIDES.search(chunk, end + 1) is not None:
                return self.owner._slow(chunk)  # type: ignore[no-any-return]
            self.on = False
            self.waiting = True
        self.pending.append(chunk)
        self.pending_length += len(chunk)
        self.work += len(chunk)
        kept = len(chunk[:end].rstrip(NOT_PLAIN))
        if not kept:
            if len(self.tail) + len(chunk) <= SHORT_HOLD:
                self.tail += chunk
            else:
                # A long run with nothing to release (blanks, brackets): kept in parts, which
                # the stream looks at by its doubling rule, so the run costs its length once.
                self.parts.append(chunk)
                self.parts_length += len(chunk)
                self.on = False
            return ""
        out = self.tail + chunk[:kept] if self.tail else chunk[:kept]
        self.tail = chunk[kept:]
        self.context = chunk[kept - 1]
        self.skip += len(out)
        self.raw += len(out)
        return out
