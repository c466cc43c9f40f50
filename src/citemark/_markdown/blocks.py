"""The Markdown structure that validate reads: lines, paragraphs, emphasis and blocks.

Where code is comes from `_markdown.code` (one detector, following CommonMark's block
structure); this module splits prose around it.  Every step is a linear scan (no
backtracking regex), so adversarial input costs time proportional to its length.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence

from .._core.spans import inside, outermost
from .code import line_spans

__all__ = [
    "FENCE_LINE",
    "LIST_OR_QUOTE",
    "blocks",
    "emphasis",
    "is_punctuation",
    "line_spans",
    "paragraphs",
]

_LIST_ITEM = re.compile(r" {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_DELIMITER_RUN = re.compile(r"\*+|_+")
_NOT_BREAK = re.compile(r"[^\r\n]")
# A line that opens or closes a fence, whatever follows the fence characters.
FENCE_LINE = re.compile(r" {0,3}(?:`{3,}|~{3,}).*", re.DOTALL)
# What may precede a line's text: indentation, quote signs, one list bullet.
LIST_OR_QUOTE = re.compile(r"[ \t]*(?:>[ \t]*)*(?:(?:[-+*]|\d{1,9}[.)])(?:[ \t]+|$))?")


# -- the block and inline structure that validate reads ---------------------------------


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
        # A code block's line is code from past its containers' syntax (list indentation
        # and `>` are not code); a fence line is not code but ends the paragraph too.
        content = line_end - len(line.lstrip(" \t>"))
        block_code = content < line_end and inside(code, content, line_end)
        block_code = block_code or FENCE_LINE.match(line) is not None
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
    # Code reads as letters (its line breaks kept), then markers do (wholly): no delimiter
    # run there, and a run beside one is flanked by a letter.
    masked = _masked(_masked(text, code, keep_breaks=True), consumed, keep_breaks=False)
    spans: list[tuple[int, int]] = []
    for start, end in paragraphs(text, code):
        spans.extend(_emphasis_in(masked, start, end))
    spans.sort()
    return outermost(spans)


def _masked(text: str, spans: Sequence[tuple[int, ...]], *, keep_breaks: bool) -> str:
    """text with each character of the sorted disjoint spans `(start, end, ...)` made an
    "x" (but \\r and \\n with keep_breaks), cut and joined by slices."""
    pieces = []
    at = 0
    for start, end, *_ in spans:
        pieces.append(text[at:start])
        part = text[start:end]
        if keep_breaks and ("\n" in part or "\r" in part):
            pieces.append(_NOT_BREAK.sub("x", part))
        else:
            pieces.append("x" * (end - start))
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


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
