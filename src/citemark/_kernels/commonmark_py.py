"""The pure-Python twin of `commonmark_c.pyx`: the code scan of `_markdown.code`, its hot
inner loops (a paragraph's backtick runs and their pairing into inline code spans) and the
whole-text scan.

Same functions, names and branch order as the kernel; the CommonMark block structure that
calls them lives once, here, in `CodeScanner`.

- `runs(text, first, end, base)`: the backtick runs of text[first:end], flat in an
  `array("q")`: start, end, escaped (1 or 0) for each run, positions plus base;
  escaped: an odd number of backslashes (within text[first:end]) stands before the run.
  Flat machine integers, not tuples: a paragraph of thousands of runs costs no object each.
- `scan_plain_lines(text, start, base, pending, code_ranges, in_paragraph, ticked_from)`: the common
lines
  outside every container and code block (empty, or starting with a character no block
  starts with) from the line at `start` on, up to the first other line: its start
  (len(text) when none), with the paragraph state after them; `code_ranges` is the list of code
  spans found so far, `(start, end)` pairs.
- `pair_backticks(runs, code_ranges)`: append to code ranges the inline code spans those runs make:
each opener
  (left to right) is closed by the next run of its length.
- `find_code_ranges(text)`: the whole code scan (here `CodeScanner` fed the lines), the code spans
  as (start, end) pairs; `code_spans(text)`: the same as two arrays, starts and ends.
- `line_spans(text)`: (start, end) of every line's content.

Linear: `runs` reads each character once (a backslash count stops at the previous run's
end), and `pair_backticks` reads each run at most twice.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left
from itertools import accumulate
from operator import add, itemgetter

from .._core.grammar import LINE_BREAK_RE, check_place

__all__ = [
    "BLOCK_STARTS",
    "FEW_RUNS",
    "LINE_BREAKS",
    "RUNS_TYPECODE",
    "pair_backticks",
    "runs",
    "scan_plain_lines",
]
__all__ += ["StreamScanner", "code_spans", "find_code_ranges", "line_spans"]

RUNS_TYPECODE = "q"
"""The typecode of the runs arrays (the kernel checks its arguments against it)."""

# The characters a line may start with to be more than paragraph text (white space,
# containers, fences, headings, breaks, list markers, setext underlines).
BLOCK_STARTS = " \t>-+*#`~=_0123456789"
_BLOCK_STARTS = frozenset(BLOCK_STARTS)

LINE_BREAKS = LINE_BREAK_RE.pattern
"""The line breaks `scan_plain_lines` splits at (the kernel checks at import that they are
these)."""

_BACKTICKS = re.compile(r"`+")


FEW_RUNS = 8
"""Up to this many runs a paragraph's runs are paired by direct look-up (at most its square
of steps); above it through the next run of each length, found beforehand."""


def runs(text: str, first: int, end: int, base: int) -> array[int]:
    """The backtick runs of text[first:end]: start, end, escaped of each, flat, positions
    plus base."""
    found = array(RUNS_TYPECODE)
    for run in _BACKTICKS.finditer(text, first, end):
        at, stop = run.span()
        # Most runs follow no backslash: count them only when one is there.
        escaped = at > first and text[at - 1] == "\\" and _escaped(text, at, first)
        found.extend((base + at, base + stop, 1 if escaped else 0))
    return found


def scan_plain_lines(
    text: str,
    start: int,
    base: int,
    pending: array[int],
    code_ranges: list[tuple[int, int]],
    in_paragraph: bool,
    ticked_from: int | None,
) -> tuple[int, bool, int | None]:
    """Process the plain lines from text[start:] on (see the module's text): `pending` (the
    open paragraph's runs) and code ranges change in place."""
    size = len(text)
    while start < size:
        if text[start] in _BLOCK_STARTS:  # (an empty line starts with its line break)
            break
        found = LINE_BREAK_RE.search(text, start)
        end = size if found is None else found.start()
        if start == end:
            if in_paragraph:  # an empty line ends the paragraph
                pair_backticks(pending, code_ranges)
                in_paragraph = False
                del pending[:]
                ticked_from = None
        else:
            in_paragraph = True
            if text.find("`", start, end) >= 0:
                if ticked_from is None:
                    ticked_from = base + start
                pending += runs(text, start, end, base)
        start = size if found is None else found.end()
    return start, in_paragraph, ticked_from


def pair_backticks(runs: array[int], code_ranges: list[tuple[int, int]]) -> None:
    """Append the inline code spans that the backtick runs of one paragraph make.

    Openers are taken left to right, each closed by the next run of its length.  That next
    run is found beforehand for every run, in one pass from the end (the first run of each
    length seen so far), so no run is looked at more than twice."""
    count = len(runs) // 3
    if count < 2:
        return
    if count <= FEW_RUNS:
        _pair_few(runs, count, code_ranges)
        return
    # following[i]: the first run after i whose length is run i's as an opener (one less
    # when it is escaped: only an opener can be, inside code a backslash is literal);
    # count when there is none.
    nearest: dict[int, int] = {}
    following = [count] * count
    for index in range(count - 1, -1, -1):
        length = runs[3 * index + 1] - runs[3 * index]
        following[index] = nearest.get(length - runs[3 * index + 2], count)
        nearest[length] = index
    index = 0
    while index < count:
        run_start, run_end, escaped = runs[3 * index : 3 * index + 3]
        closer = following[index]
        if run_end - run_start - escaped and closer < count:
            code_ranges.append((run_start + escaped, runs[3 * closer + 1]))
            index = closer + 1
        else:
            index += 1


def _pair_few(runs: array[int], count: int, code_ranges: list[tuple[int, int]]) -> None:
    """`pair_backticks` for a handful of runs (the usual paragraph): the same pairing, looked up
    directly (at most FEW_RUNS squared steps)."""
    index = 0
    while index < count:
        run_start, run_end, escaped = runs[3 * index : 3 * index + 3]
        length = run_end - run_start - escaped
        closer = index + 1
        while closer < count and runs[3 * closer + 1] - runs[3 * closer] != length:
            closer += 1
        if length and closer < count:
            code_ranges.append((run_start + escaped, runs[3 * closer + 1]))
            index = closer + 1
        else:
            index += 1


def _escaped(text: str, index: int, floor: int) -> bool:
    count = 0
    while index - count > floor and text[index - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def find_code_ranges(text: str) -> list[tuple[int, int]]:
    """The code point ranges of Markdown code in `text` (`_markdown.code.find_code_ranges`): the
    kernel scans the whole text in C; here `CodeScanner` is fed its lines."""
    return scanned_code_ranges(text)


def code_spans(text: str) -> tuple[array[int], array[int]]:
    """`find_code_ranges(text)` as two arrays, the starts and the ends (validate reads thousands of
    code spans without a Python object each)."""
    code_ranges = find_code_ranges(text)
    return (
        array(RUNS_TYPECODE, map(itemgetter(0), code_ranges)),
        array(RUNS_TYPECODE, map(itemgetter(1), code_ranges)),
    )


def line_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every line's content, line breaks excluded; the last line is empty
    when the text ends with a line break (and the only one of an empty text)."""
    if "\r" not in text:
        # Only \n breaks: the lines are text.split("\n"), their places summed in C (a
        # Python step per line costs several times more).
        lengths = list(map(len, text.split("\n")))
        starts = list(accumulate(map((1).__add__, lengths[:-1]), initial=0))
        return list(zip(starts, map(add, starts, lengths), strict=True))
    spans = []
    start = 0
    for newline in LINE_BREAK_RE.finditer(text):
        spans.append((start, newline.start()))
        start = newline.end()
    spans.append((start, len(text)))
    return spans


_FENCE = re.compile(r"(`{3,}|~{3,})(.*)")
_CLOSE = re.compile(r"(`{3,}|~{3,})[ \t]*$")
_BULLET = re.compile(r"([-+*]|([0-9]{1,9})[.)])(?=[ \t]|$)")
_HEADING = re.compile(r"#{1,6}(?:[ \t]|$)")
# A thematic break: 3 or more of one of these characters, and blanks, to the line's end.
_RULE_LEADS = "*-_"
_RULE_RUNS = {lead: re.compile(f"[{re.escape(lead)} \t]*").match for lead in _RULE_LEADS}
_SETEXT = re.compile(r"(?:=+|-+)[ \t]*$")
_BLANK = " \t"
# The first characters of fences, ATX headings, thematic breaks and setext underlines.
_BLOCK_LEADS = "`~#*-_="
_BLOCK_STARTS = frozenset(BLOCK_STARTS)
if LINE_BREAK_RE.pattern != r"\r\n|\r|\n":
    raise ImportError("find_code_ranges finds the line breaks of a text without \\r as \\n")


class CodeScanner:
    """Feed it the lines of one text, in order; `code_ranges` collects the code ranges found so far
    (code point `(start, end)` pairs, sorted, disjoint).  A paragraph's inline code is known
    when the paragraph ends (`ticked_from`: where the lines waiting for it start).
    `neutral` is True where a new text could start with the same result.

    The block structure has its one home here; its hot loops are class attributes, this
    module's own, and the compiled kernel's in `_markdown.code.CodeScanner`."""

    scan_runs = staticmethod(runs)
    pair_backticks = staticmethod(pair_backticks)
    scan_plain_lines = staticmethod(scan_plain_lines)

    def __init__(self, text: str = "") -> None:
        self.text = text
        self.base = 0  # added to every recorded position (a stream feeds its text in pieces)
        self.code_ranges: list[tuple[int, int]] = []
        self.containers: list[int] = []  # -1: block quote; else a list item's content column
        self.fence: tuple[str, int] | None = None  # (character, length)
        self.indented = False
        # The depth of the list item that started with a blank line and waits for its first
        # line, or -1.  At most one waits: an item waits only when it is the last thing on
        # its line, and a line that opens containers first ends those past the ones it
        # continues and gives the ones it continues a line.
        self.waiting = -1
        self.quotes: list[int] = []  # the depths of the block quotes among containers
        # The line's thematic-break scan (see `_thematic`): from, stop, third-last lead.
        self._rule = (0, 0, -1)
        self.in_paragraph = False
        # The paragraph's backtick runs so far: start, end, escaped of each, flat.
        self.runs = array(RUNS_TYPECODE)
        self.ticked_from: int | None = None  # where the first line with a run starts

    @property
    def neutral(self) -> bool:
        return not (self.containers or self.fence or self.indented or self.in_paragraph)

    def read_plain_lines(self, start: int) -> int:
        """Process the common lines from the line at `start` on while no container or code
        block is open (see `commonmark_py.plain`): the start of the first line left (the
        text's length when none)."""
        if self.containers or self.fence or self.indented:
            return start
        start, self.in_paragraph, self.ticked_from = self.scan_plain_lines(
            self.text,
            start,
            self.base,
            self.runs,
            self.code_ranges,
            self.in_paragraph,
            self.ticked_from,
        )
        return start

    def finish(self) -> None:
        self._end_paragraph()

    def line(self, start: int, end: int) -> None:
        """Process text[start:end], one line without its line break."""
        text = self.text
        if not self.containers:
            if self.fence is not None:
                # A line of fenced code outside every container (the full walk below, with
                # no container to match): it closes the fence, or it is code.
                columns, first, _ = _indent(text, start, end, 0, 0)
                close = _CLOSE.match(text, first, end) if columns <= 3 else None
                if close and close[1][0] == self.fence[0] and len(close[1]) >= self.fence[1]:
                    self.fence = None
                elif start < end:
                    self.code_ranges.append((self.base + start, self.base + end))
                return
            if not self.indented:
                # The common lines, decided without the full walk below: an empty line, and
                # a line that starts with a character no block or container can start with.
                if start == end:
                    self._end_paragraph()
                    return
                if text[start] not in _BLOCK_STARTS:
                    self.in_paragraph = True
                    self._add(start, start, end)
                    return
        elif start == end and self.fence is None and not self.indented:
            # An empty line in containers (a loose list's): it continues the list items up
            # to the first block quote or item still waiting for its first line, and ends the
            # paragraph and the containers after them, as the full walk finds.
            matched = self._blank_reach(0)
            self._end_paragraph()
            self._truncate(matched)
            return
        self._walk(start, end)

    def _walk(self, start: int, end: int) -> None:
        """`line` the full way: the containers matched, then the block the line makes."""
        text = self.text
        # col: the column of text[pos]; extra: columns left of a tab a container half used
        pos, col, extra = start, 0, 0
        matched = 0
        depth = len(self.containers)
        self._rule = (0, 0, -1)  # nothing of this line scanned yet
        # The end of the blank run at pos and its column, once read: the containers consume
        # the line's indentation a few columns each, and reading the rest of it again for
        # each would cost a line nested d deep d squared.
        known, known_col = -1, 0
        while matched < depth:
            container = self.containers[matched]
            if pos <= known:
                columns, first, first_col = extra + known_col - col, known, known_col
            else:
                columns, first, first_col = _indent(text, pos, end, col, extra)
                known, known_col = first, first_col
            if container < 0:
                if columns <= 3 and first < end and text[first] == ">":
                    pos, col, extra = _after_marker(text, first + 1, end, first_col + 1)
                    matched += 1
                    continue
                break
            if first == end:
                # A blank rest continues the list items up to the next block quote or the
                # item waiting (a list item may start with one blank line, not two): found
                # at once, as a look at each would cost the depth at every blank line.
                reach = self._blank_reach(matched)
                if reach > matched:
                    pos, col, extra = end, first_col, 0
                    matched = reach
                break
            if columns >= container:
                pos, col, extra = _advance(text, pos, col, extra, container)
                matched += 1
                continue
            break
        if 0 <= self.waiting < matched and _indent(text, pos, end, col, extra)[1] < end:
            self.waiting = -1
        if self.fence is not None:
            if matched == depth:
                columns, first, _ = _indent(text, pos, end, col, extra)
                close = _CLOSE.match(text, first, end) if columns <= 3 else None
                if close and close[1][0] == self.fence[0] and len(close[1]) >= self.fence[1]:
                    self.fence = None
                elif pos < end:
                    self.code_ranges.append((self.base + pos, self.base + end))
                return
            self.fence = None
        columns, first, first_col = _indent(text, pos, end, col, extra)
        if self.indented:
            if matched == depth and (first == end or columns >= 4):
                if first < end:
                    self.code_ranges.append((self.base + pos, self.base + end))
                return
            self.indented = False
        if first == end:
            self._end_paragraph()
            self._truncate(matched)
            return
        # New containers.
        started = False
        while columns <= 3 and first < end:
            if text[first] == ">":
                pos, col, extra = _after_marker(text, first + 1, end, first_col + 1)
            else:
                item = _BULLET.match(text, first, end)
                if item is None or self._thematic(first, end):
                    break
                after = item.end()
                after_col = first_col + after - first
                spaces, content, content_col = _indent(text, after, end, after_col, 0)
                interrupts = self.in_paragraph and matched == depth and not started
                if interrupts and (content == end or item[2] not in (None, "1")):
                    break
                width = after - first
                if content == end or spaces >= 5:
                    container = columns + width + 1
                    pos, col, extra = _advance(text, after, after_col, 0, 1)
                else:
                    container = columns + width + spaces
                    pos, col, extra = content, content_col, 0
                self._open(matched, started)
                started = True
                if content == end:
                    self.waiting = len(self.containers)
                self.containers.append(container)
                matched = len(self.containers)
                columns, first, first_col = _indent(text, pos, end, col, extra)
                continue
            self._open(matched, started)
            started = True
            self.quotes.append(len(self.containers))
            self.containers.append(-1)
            matched = len(self.containers)
            columns, first, first_col = _indent(text, pos, end, col, extra)
        if first == end:  # an empty list item or block quote line
            self._end_paragraph()
            return
        # first < end here.  Each block pattern below needs its own first character: one
        # look at it spares the regexes on the usual line (text after a list marker).
        lead = text[first]
        if matched < len(self.containers):
            if self.in_paragraph and not (
                columns <= 3
                and lead in _BLOCK_LEADS
                and (
                    _fence_opener(text, first, end) is not None
                    or _HEADING.match(text, first, end) is not None
                    or self._thematic(first, end)
                )
            ):
                self._add(start, first, end)  # a lazy continuation line
                return
            self._end_paragraph()
            self._truncate(matched)
        if columns >= 4:
            if self.in_paragraph:
                self._add(start, first, end)
            else:
                self.indented = True
                self.code_ranges.append((self.base + pos, self.base + end))
            return
        if lead in _BLOCK_LEADS:
            opener = _fence_opener(text, first, end)
            if opener is not None:
                self._end_paragraph()
                self.fence = opener  # its info string is not shown as code: markers there go
                return
            if _HEADING.match(text, first, end):
                self._end_paragraph()
                self.pair_backticks(self.scan_runs(text, first, end, self.base), self.code_ranges)
                return
            if self._thematic(first, end) or (
                self.in_paragraph and _SETEXT.match(text, first, end)
            ):
                self._end_paragraph()
                return
        self.in_paragraph = True
        self._add(start, first, end)

    def _open(self, matched: int, started: bool) -> None:
        """A new container starts: the paragraph and the containers not matched end."""
        if not started:
            self._end_paragraph()
            self._truncate(matched)

    def settle(self) -> None:
        """Pair the open paragraph's backtick runs now, as if it ended here (a stream's
        bound); the paragraph stays open for the block structure."""
        self.pair_backticks(self.runs, self.code_ranges)
        self.runs = array(RUNS_TYPECODE)
        self.ticked_from = None

    def _truncate(self, depth: int) -> None:
        del self.containers[depth:]
        if self.quotes and self.quotes[-1] >= depth:
            del self.quotes[bisect_left(self.quotes, depth) :]
        if self.waiting >= depth:
            self.waiting = -1

    def _blank_reach(self, at: int) -> int:
        """How many containers a blank line continues when it continues those before `at`
        and `at` is a list item or the end: up to the next block quote or waiting item."""
        quotes = self.quotes
        index = bisect_left(quotes, at)
        reach = quotes[index] if index < len(quotes) else len(self.containers)
        return self.waiting if at <= self.waiting < reach else reach

    def _thematic(self, first: int, end: int) -> bool:
        """Whether text[first:end], a part of the line `_walk` reads, is a thematic break.

        The nested list items of one line (`- - - x`) ask at every marker: the scan of the
        lead character and blanks is remembered (from, where it stops, the third-last lead
        in it), so a question inside a part already scanned is answered without a look and
        the line is read once for each lead character at most."""
        if first >= end:
            return False
        text = self.text
        lead = text[first]
        if lead not in _RULE_LEADS:
            return False
        start, stop, third = self._rule
        if not start <= first < stop:  # (inside, every lead is text[first]: one scan's)
            stop = _RULE_RUNS[lead](text, first, end).end()  # type: ignore[union-attr]
            third = -1
            if stop == end:
                third = end
                for _ in range(3):
                    third = text.rfind(lead, first, third)
                    if third < 0:
                        break
            self._rule = first, stop, third
        return stop == end and first <= third

    def _add(self, line_start: int, first: int, end: int) -> None:
        """A paragraph line: its backtick runs wait for the paragraph's end."""
        if self.text.find("`", first, end) < 0:
            return
        runs = self.scan_runs(self.text, first, end, self.base)
        if self.ticked_from is None:
            self.ticked_from = self.base + line_start
        self.runs.extend(runs)

    def _end_paragraph(self) -> None:
        if self.in_paragraph:
            self.pair_backticks(self.runs, self.code_ranges)
            self.in_paragraph = False
            self.runs = array(RUNS_TYPECODE)
            self.ticked_from = None


class StreamScanner(CodeScanner):
    """The code scan of a text that comes in pieces (`citemark.display.CleanStream`,
    `StreamParser`'s cuts): `scan` reads every line of a piece; the code ranges so far are taken
    with `take_code_ranges`, `finish` ends the text.  The kernel reads a piece's lines in C."""

    def __init__(self) -> None:
        super().__init__("")

    def scan(self, text: str, base: int = 0, cuts: list[int] | None = None) -> None:
        """Process every line of text (the last one too, ended or not), its positions plus
        `base`.  `cuts`, when a list, gets base plus the start of each non-empty line but the
        first before which the scanner is `neutral`: cut there, each part reads as it does in
        the whole text."""
        if type(text) is not str:
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        offset = check_place(base, "base")
        if offset < 0:
            raise ValueError("base must be a non-negative index")
        if cuts is not None and type(cuts) is not list:
            raise TypeError(f"cuts must be None or a list, not {type(cuts).__name__}")
        self.text, self.base = text, offset
        start = 0
        try:
            for line_end in LINE_BREAK_RE.finditer(text):
                if cuts is not None and 0 < start < line_end.start() and self.neutral:
                    cuts.append(offset + start)
                self.line(start, line_end.start())
                start = line_end.end()
            if start < len(text):
                if cuts is not None and start and self.neutral:
                    cuts.append(offset + start)
                self.line(start, len(text))
        finally:
            self.text = ""  # the text is not kept: its code ranges and runs are positions

    def take_code_ranges(self) -> list[tuple[int, int]]:
        """The code ranges found since the last call, in order."""
        code_ranges, self.code_ranges = self.code_ranges, []
        return code_ranges


def scanned_code_ranges(text: str) -> list[tuple[int, int]]:
    """`find_code_ranges` through `CodeScanner`, fed the lines of text in order (the pure twin of
    the kernel's whole scan, and the reading streams use)."""
    scanner = CodeScanner(text)
    start, size = 0, len(text)
    if "\r" not in text:
        # Only \n breaks (LINE_BREAK_RE's other two need a \r): str.find finds them.
        while start < size:  # a line starts at every start before the end
            start = scanner.read_plain_lines(start)
            if start == size:
                break
            line_end = text.find("\n", start)
            if line_end < 0:
                scanner.line(start, size)
                break
            scanner.line(start, line_end)
            start = line_end + 1
        scanner.finish()
        return scanner.code_ranges
    while start < size:
        start = scanner.read_plain_lines(start)
        if start == size:
            break
        found = LINE_BREAK_RE.search(text, start)
        if found is None:
            scanner.line(start, size)
            break
        scanner.line(start, found.start())
        start = found.end()
    scanner.finish()
    return scanner.code_ranges


def _fence_opener(text: str, first: int, end: int) -> tuple[str, int] | None:
    opening = _FENCE.match(text, first, end)
    if opening is None or (opening[1][0] == "`" and "`" in opening[2]):
        return None
    return opening[1][0], len(opening[1])


def _indent(text: str, pos: int, end: int, col: int, extra: int) -> tuple[int, int, int]:
    """The columns of white space at pos (text[pos] at column `col`, after `extra` columns
    left by a half-used tab), the index of the first other character (end when the rest is
    blank) and its column."""
    columns = extra
    while pos < end:
        char = text[pos]
        if char == " ":
            width = 1
        elif char == "\t":
            width = 4 - col % 4
        else:
            break
        columns += width
        col += width
        pos += 1
    return columns, pos, col


def _advance(text: str, pos: int, col: int, extra: int, wanted: int) -> tuple[int, int, int]:
    """Consume `wanted` columns of indentation: the new (pos, col, extra)."""
    if extra >= wanted:
        return pos, col, extra - wanted
    wanted -= extra
    while wanted > 0 and pos < len(text) and text[pos] in _BLANK:
        width = 1 if text[pos] == " " else 4 - col % 4
        col += width
        pos += 1
        if width > wanted:
            return pos, col, width - wanted
        wanted -= width
    return pos, col, 0


def _after_marker(text: str, pos: int, end: int, col: int) -> tuple[int, int, int]:
    """After `>` (text[pos] at column col): one optional space; a tab gives one column of
    itself and leaves the rest."""
    if pos < end and text[pos] == " ":
        return pos + 1, col + 1, 0
    if pos < end and text[pos] == "\t":
        width = 4 - col % 4
        return pos + 1, col + width, width - 1
    return pos, col, 0
