"""validate's scans that find text by str.find and match a pattern only there, held to the
straightforward readings they replace on random text, on both implementations:

- the stray marker characters: a character at a time (as validate read them before a run
  became one finding), runs of one fault then merged into one diagnostic;
- bare ids: `pattern.finditer` over the whole text (the markers and the words glued to
  open STARTs in a code range off, as validate code ranges them);
- escapes: `re.finditer` of the escape pattern, case-insensitive.
"""

from __future__ import annotations

import re
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from citemark import Parser
from citemark._core.spans import inside
from citemark._validate.diagnostic import _ORDER
from citemark.validate import Diagnostic, validate

S, D, E = "\ue200", "\ue202", "\ue201"

PIECES = [
    S, D, E, " ", "\n", "a", "x", "-", "cite", "filecite", "navlist", "turn", "0", "12",
    "search", "file", "L1", "-L2", "\\u", "\\U", "E200", "e201", "ue202", "`", "*",
]  # fmt: skip
TEXTS = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
RUNS = ("unterminated-marker", "stray-stop", "stray-delimiter")
STRAYS = (*RUNS, "invalid-marker")


def per_character(text: str, parser: Parser) -> list[tuple[str, int, int]]:
    """The stray-marker findings a character at a time, outside the consumed markers, with
    touching findings of one fault merged into one."""
    spans = [(start, end) for start, end, _ in parser.spans(text)]
    starts = {start for start, _ in spans}
    found: list[tuple[str, int, int]] = []
    opened = None
    for at, char in enumerate(text):
        if inside(spans, at, at + 1):
            if at in starts and opened is not None:
                found.append(("unterminated-marker", opened, opened + 1))
                opened = None
            continue
        if char == parser.start:
            if opened is not None:
                found.append(("unterminated-marker", opened, opened + 1))
            opened = at
        elif char == parser.stop:
            if opened is None:
                found.append(("stray-stop", at, at + 1))
            else:
                found.append(("invalid-marker", opened, at + 1))
                opened = None
        elif char == parser.delimiter and opened is None:
            found.append(("stray-delimiter", at, at + 1))
    if opened is not None:
        found.append(("unterminated-marker", opened, opened + 1))
    found.sort(key=lambda finding: (finding[1], finding[2], finding[0]))
    merged: list[tuple[str, int, int]] = []
    for code, start, end in found:
        if merged and code in RUNS and merged[-1][0] == code and merged[-1][2] == start:
            merged[-1] = (code, merged[-1][1], end)
        else:
            merged.append((code, start, end))
    return merged


@settings(max_examples=settings.default.max_examples * 3 // 2, deadline=None)
@given(text=TEXTS)
def test_stray_runs_as_a_character_at_a_time(parser: Parser, text: str) -> None:
    spans = [(start, end) for start, end, _ in parser.spans(text)]
    found = [
        (d.code, d.start, d.end)
        for d in validate(text, None, parser=parser)
        if d.code in STRAYS and not inside(spans, d.start, d.start + 1)
    ]
    assert found == per_character(text, parser)


def whole_text(text: str, parser: Parser) -> list[tuple[str, int, int, str]]:
    """bare-reference and escaped-marker as one regex search of the whole text each."""
    import citemark.validate as module

    check = module._Check(text, parser, None, None)
    code_ranges = check.markers()
    found = check.found
    check.turn_ids = lambda words, code_ranges: list(words.pattern.finditer(text))  # type: ignore
    escape = re.compile(r"\\u(?:e200|e201|e202|e203|e204|e205|e206)", re.IGNORECASE)
    check.references(code_ranges, None)
    escapes = [d for d in found if d.code == "escaped-marker"]
    assert [(d.start, d.end) for d in escapes] == [
        m.span()
        for m in escape.finditer(text)
        if not check.skipped_over(code_ranges, None, *m.span())
    ]
    return sorted((d.code, d.start, d.end, d.message) for d in found)


@settings(max_examples=settings.default.max_examples * 3 // 2, deadline=None)
@given(text=TEXTS, families=st.sampled_from([("cite",), ("cite", "navlist"), ("cite", "le")]))
def test_ids_found_from_turn_as_by_a_whole_text_search(
    parser: Parser, text: str, families: tuple[str, ...]
) -> None:
    import citemark.validate as module

    chosen = parser.replace(families=families)
    check = module._Check(text, chosen, None, None)
    code_ranges = check.markers()  # the consumed markers and the foreign spans, as two arrays
    starts, ends = code_ranges
    pairs = list(zip(starts, ends, strict=True))
    assert pairs == sorted(pairs)
    assert all(end <= start for (_, end), (start, _) in pairwise(pairs))  # disjoint
    assert all((start, end) in pairs for start, end, _ in check.consumed)
    check.references(code_ranges, None)
    fast = sorted((d.code, d.start, d.end, d.message) for d in check.found)
    assert fast == whole_text(text, chosen)


def test_order_key_is_place_then_code() -> None:
    assert _ORDER(Diagnostic("b", "error", "m", 1, 2)) == (1, 2, "b")


LINES = st.lists(
    st.sampled_from(
        [
            S + "cite" + D + "turn0file0" + E, S + "cite" + D + E, S, E, D, " ", "\t", "\n",
            "- ", "1. ", "> ", "12", "a", "Ⓐ", "é", "漢", ".", "!", "*", "`", "~~~", "```",
            "\ue203",
        ]
    ),
    max_size=30,
).map("".join)  # fmt: skip


@settings(max_examples=settings.default.max_examples * 3 // 2, deadline=None)
@given(text=LINES)
def test_lines_passed_over_as_the_full_check_reads_them(parser: Parser, text: str) -> None:
    # alone's shortcut (a text character at an end of what stands before a line's first
    # citation) gives what the full reading of the line gives.
    from unittest import mock

    import citemark.validate as module

    quick = validate(text, None, parser=parser)
    with mock.patch.object(module, "_text_char", return_value=False):
        full = validate(text, None, parser=parser)
    assert quick == full


@settings(max_examples=settings.default.max_examples * 3 // 2, deadline=None)
@given(text=TEXTS)
def test_code_ranges_sorted_are_disjoint(parser: Parser, text: str) -> None:
    # validate's code ranges come from `stray_findings` in order, not sorted: they must be the
    # sorted consumed markers and foreign spans (of `strays` over each gap), none overlapping
    # another (they may touch).
    import citemark.validate as module
    from citemark._validate.strays import held_gaps, strays

    check = module._Check(text, parser, None, None)
    starts, ends = check.markers()
    code_ranges = list(zip(starts, ends, strict=True))
    chars = parser.start, parser.stop, parser.delimiter
    foreign: list[tuple[int, int]] = []
    for first, last, held in held_gaps(text, check.consumed, *chars):
        strays(text, first, last, held, *chars, [], foreign)
    assert code_ranges == sorted([*((start, end) for start, end, _ in check.consumed), *foreign])
    assert all(left[1] <= right[0] for left, right in pairwise(code_ranges))
    assert all(start <= end for start, end in code_ranges)
