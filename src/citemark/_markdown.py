"""Where a Markdown text holds code, so that citation markers there can stay literal.

A marker inside a code fence or inline code is something the author is *showing*, not a
citation (front ends that rendered them anyway are a reported bug).  This is not a Markdown
parser: it finds the three kinds of code of CommonMark with line-level rules, in one pass,
and errs on the side of simplicity where full CommonMark needs the whole block structure:

- fenced blocks: 3+ backticks or tildes after at most 3 spaces, an info string allowed (no
  backtick in it for a backtick fence); closed by a line of the same character, at least as
  long, and nothing but white space after it; an unclosed fence runs to the end of the text.
- indented blocks: lines indented by 4+ columns (a tab reaches the next multiple of 4) that
  do not continue a paragraph: at the start of the text or after a blank line, a heading or
  a fence.  After a list item, indented lines are list content, never code, until a blank
  line is followed by an unindented line that is not a list item (so code nested in list
  items is not found).
- inline code: a backtick run and the next run of the same length in the same paragraph (or
  heading line); an unmatched run is literal, and a backslash before a run outside code
  makes its first backtick literal.  Block quotes, HTML blocks and autolinks are not
  recognised, so a backtick inside them counts as one.

Every step is a linear scan (no backtracking regex), so adversarial input (a megabyte of
backticks, thousands of unmatched runs) costs time proportional to its length.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from ._grammar import LINE_BREAK_RE
from ._spans import inside, outermost

__all__ = [
    "FENCE_LINE",
    "LIST_OR_QUOTE",
    "blocks",
    "code_spans",
    "emphasis",
    "is_punctuation",
    "line_spans",
    "paragraphs",
]

_OPEN_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_CLOSE_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*$")
_LIST_ITEM = re.compile(r" {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_BACKTICKS = re.compile(r"`+")
_DELIMITER_RUN = re.compile(r"\*+|_+")
# A line that opens or closes a fence, whatever follows the fence characters.
FENCE_LINE = re.compile(r" {0,3}(?:`{3,}|~{3,}).*", re.DOTALL)
# What may precede a line's text: indentation, quote signs, one list bullet.
LIST_OR_QUOTE = re.compile(r"[ \t]*(?:>[ \t]*)*(?:(?:[-+*]|\d{1,9}[.)])(?:[ \t]+|$))?")


def code_spans(text: str) -> list[tuple[int, int]]:
    """The code point ranges `(start, end)` of Markdown code in `text`, sorted and disjoint.

    A block's range runs from the start of its first line to the end of its last line
    (fences included, final line break excluded); an inline span's range includes its
    backticks.
    """
    spans: list[tuple[int, int]] = []
    fence: tuple[str, int, int] | None = None  # (character, length, start)
    indented: list[int] | None = None  # [start, end] of the indented block so far
    paragraph: list[int] | None = None  # [start, end] of the paragraph so far
    continues_paragraph = False  # an indented line here would continue a paragraph
    in_list = False
    after_blank = True

    def end_paragraph() -> None:
        nonlocal paragraph
        if paragraph is not None:
            _inline_code(text, paragraph[0], paragraph[1], spans)
            paragraph = None

    for start, end in _lines(text):
        if fence is not None:
            close = _CLOSE_FENCE.match(text, start, end)
            if close and close[1][0] == fence[0] and len(close[1]) >= fence[1]:
                spans.append((fence[2], end))
                fence = None
            continue
        columns, first = _indent(text, start, end)
        if first == end:  # blank
            end_paragraph()
            continues_paragraph = False
            after_blank = True
            continue
        if indented is not None:
            if columns >= 4:
                indented[1] = end
                continue
            spans.append((indented[0], indented[1]))
            indented = None
        if columns >= 4 and not continues_paragraph and not in_list:
            indented = [start, end]
            after_blank = False
            continue
        opening = _OPEN_FENCE.match(text, start, end)
        if opening and (opening[1][0] == "~" or "`" not in opening[2]):
            end_paragraph()
            fence = (opening[1][0], len(opening[1]), start)
            continues_paragraph = after_blank = False
            continue
        if _LIST_ITEM.match(text, start, end):
            end_paragraph()
            in_list = True
        elif columns == 0 and after_blank:
            in_list = False
        if _HEADING.match(text, start, end):
            end_paragraph()
            _inline_code(text, start, end, spans)
            continues_paragraph = False
        else:
            if paragraph is None:
                paragraph = [start, end]
            paragraph[1] = end
            continues_paragraph = True
        after_blank = False

    if fence is not None:
        spans.append((fence[2], len(text)))
    if indented is not None:
        spans.append((indented[0], indented[1]))
    end_paragraph()
    return spans


def _lines(text: str) -> list[tuple[int, int]]:
    """`line_spans` without the empty line after a final line break (or of an empty text)."""
    lines = line_spans(text)
    if lines[-1][0] == len(text):
        lines.pop()
    return lines


def _indent(text: str, start: int, end: int) -> tuple[int, int]:
    """The line's indentation in columns, and where its first non-blank character is."""
    columns = 0
    index = start
    while index < end:
        char = text[index]
        if char == " ":
            columns += 1
        elif char == "\t":
            columns += 4 - columns % 4
        else:
            break
        index += 1
    return columns, index


def _inline_code(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    """Append the inline code spans of text[start:end].

    Openers are taken left to right; for each backtick-run length a cursor remembers how far
    the search for a closer of that length got, and since openers only move right, no run
    is looked at twice: linear in the number of runs.
    """
    runs = [(run.start(), run.end()) for run in _BACKTICKS.finditer(text, start, end)]
    by_length: dict[int, list[int]] = {}
    for index, (run_start, run_end) in enumerate(runs):
        by_length.setdefault(run_end - run_start, []).append(index)
    cursors: dict[int, int] = {}
    index = 0
    while index < len(runs):
        run_start, run_end = runs[index]
        if _escaped(text, run_start, start):
            run_start += 1
        length = run_end - run_start
        closers = by_length.get(length, [])
        cursor = cursors.get(length, 0)
        while cursor < len(closers) and closers[cursor] <= index:
            cursor += 1
        cursors[length] = cursor
        if length and cursor < len(closers):
            closer = closers[cursor]
            spans.append((run_start, runs[closer][1]))
            index = closer + 1
        else:
            index += 1


def _escaped(text: str, index: int, floor: int) -> bool:
    """Whether an odd number of backslashes precede text[index] (not looking before floor)."""
    count = 0
    while index - count > floor and text[index - count - 1] == "\\":
        count += 1
    return count % 2 == 1


# -- the block and inline structure that validate reads ---------------------------------


def line_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every line's content, line breaks excluded; the last line is empty
    when the text ends with a line break (and the only one of an empty text)."""
    spans = []
    start = 0
    for newline in LINE_BREAK_RE.finditer(text):
        spans.append((start, newline.start()))
        start = newline.end()
    spans.append((start, len(text)))
    return spans


def blocks(text: str) -> int:
    """Paragraphs (split at blank lines) and list items in text."""
    count = 0
    after_blank = True
    for start, end in line_spans(text):
        line = text[start:end]
        if not line.strip():
            after_blank = True
            continue
        if after_blank or _LIST_ITEM.match(line) or _HEADING.match(line):
            count += 1
        after_blank = False
    return count


def paragraphs(text: str, code: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """Stretches of prose where emphasis can run: split at blank lines, headings, list
    items and code blocks."""
    start = None
    end = 0
    for line_start, line_end in line_spans(text):
        line = text[line_start:line_end]
        block_code = line_end > line_start and inside(code, line_start, line_end)
        new_block = _LIST_ITEM.match(line) or _HEADING.match(line)
        if not line.strip() or block_code or new_block:
            if start is not None:
                yield start, end
            start = None
            if not line.strip() or block_code:
                continue
        if start is None:
            start = line_start
        end = line_end
        if _HEADING.match(line):
            yield start, end
            start = None
    if start is not None:
        yield start, end


def emphasis(
    text: str, code: list[tuple[int, int]], consumed: list[tuple[int, int, bool]]
) -> list[tuple[int, int]]:
    """The inner spans of bold and italics, sorted (they may nest)."""
    chars = list(text)
    for start, end in code:
        for at in range(start, end):
            if chars[at] not in "\r\n":
                chars[at] = "x"
    for start, end, _ in consumed:
        chars[start:end] = "x" * (end - start)
    masked = "".join(chars)
    spans: list[tuple[int, int]] = []
    for start, end in paragraphs(text, code):
        spans.extend(_emphasis_in(masked, start, end))
    spans.sort()
    return outermost(spans)


def _emphasis_in(text: str, start: int, end: int) -> list[tuple[int, int]]:
    stacks: dict[str, list[tuple[int, int]]] = {"*": [], "_": []}  # (sequence, run end)
    spans = []
    for sequence, run in enumerate(_DELIMITER_RUN.finditer(text, start, end)):
        run_start, run_end = run.span()
        char = text[run_start]
        before = text[run_start - 1] if run_start > start else " "
        after = text[run_end] if run_end < end else " "
        left = not after.isspace() and (
            not is_punctuation(after) or before.isspace() or is_punctuation(before)
        )
        right = not before.isspace() and (
            not is_punctuation(before) or after.isspace() or is_punctuation(after)
        )
        if char == "_":
            can_open = left and (not right or is_punctuation(before))
            can_close = right and (not left or is_punctuation(after))
        else:
            can_open, can_close = left, right
        stack = stacks[char]
        if can_close and stack:
            opened, opener_end = stack.pop()
            spans.append((opener_end, run_start))
            other = stacks["_" if char == "*" else "*"]
            while other and other[-1][0] > opened:
                other.pop()
        elif can_open:
            stack.append((sequence, run_end))
    return spans


def is_punctuation(char: str) -> bool:
    return unicodedata.category(char)[0] in "PS"
