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
from collections.abc import Iterator

__all__ = ["code_spans"]

_NEWLINE = re.compile(r"\r\n|\r|\n")
_OPEN_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_CLOSE_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*$")
_LIST_ITEM = re.compile(r" {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_BACKTICKS = re.compile(r"`+")


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


def _lines(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each line's content, line breaks excluded."""
    start = 0
    for newline in _NEWLINE.finditer(text):
        yield start, newline.start()
        start = newline.end()
    if start < len(text):
        yield start, len(text)


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
