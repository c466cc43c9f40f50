"""`clean`: the kernel, the twin and a slow oracle written here agree on every input; the
Markdown code they keep literal is what a CommonMark implementation (markdown-it) calls code.

The oracle restates the rules of `citemark.clean` the plainest way: character by character,
the result built as one growing string, every look-behind done on that string."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from citemark._kernels import clean_c as _clean_c
from citemark._kernels import clean_py as _clean_py
from citemark._markdown.code import find_code_ranges
from citemark.display import clean, clean_with_marks, entity_name

S, E, D = "\ue200", "\ue201", "\ue202"
MAX_MARKER = 4096
BLANKS = " \t\u00a0\u200b\u202f\u3000"
CLOSING = (
    ".,;:!?)]}%\u2026\u201d\u2019\u00bb\u3001\u3002\uff0c\uff0e\uff1a\uff1b\uff01\uff1f\uff09"
    "\u3011\uff3d\u060c\u061b\u061f\u06d4\u0964\u0965\u0589\u1362\u1363\u1364\u104a\u104b"
)
PAIRS = {")": "(", "]": "[", "\uff09": "\uff08", "\u3011": "\u3010", "\uff3d": "\uff3b"}
SEPARATORS = ",;\uff0c\uff1b\u3001"
# Han, kana, their punctuation and full-width forms (not Hangul): a removal between two of
# them, or after their punctuation, takes its blanks.
UNSPACED = (
    "\u2e80-\u2fdf\u3001-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\ufe30-\ufe4f\uff01-\uff9f\uffe0-\uffee\U00020000-\U0003ffff"
)
UNSPACED_PUNCTUATION = (
    "\u3001-\u303f\ufe30-\ufe4f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
)


def unspaced(before: str, after: str) -> bool:
    return bool(
        re.fullmatch(f"[{UNSPACED_PUNCTUATION}]", before)
        or (re.fullmatch(f"[{UNSPACED}]", before) and re.fullmatch(f"[{UNSPACED}]", after))
    )


ID_CHAIN = re.compile(r"turn\d+[A-Za-z]+\d+(?:\ue202(?:turn\d+[A-Za-z]+\d+|L\d+(?:-L\d+)?))*", re.A)


def oracle_tokens(text: str, a: int, b: int) -> list[tuple[int, int, int]]:
    """(kind, start, end) of text[a:b]: 0 stray, 1 marker, 2 entity, 3 broken, 4 bare."""
    found = []
    i = a
    while i < b:
        char = text[i]
        if not "\ue000" <= char <= "\uf8ff":  # what clean removes: the Private Use Area
            i += 1
            continue
        if char == S:
            j = i + 1
            while j < b and text[j].isascii() and (text[j].isalnum() or text[j] == "_"):
                j += 1
            if j < b and text[j] == E:
                found.append((1, i, j + 1))
                i = j + 1
                continue
            glued = (
                i > 0 and text[i - 1].isascii() and (text[i - 1].isalnum() or text[i - 1] == "_")
            )
            if j > i + 1 and (j == b or text[j] in "\n\r") and not glued:  # a family cut short
                found.append((3, i, j))
                i = j
                continue
            if j < b and text[j] == D:
                k = j + 1
                while k < b and text[k] not in (S, E, "\n", "\r"):
                    k += 1
                if k < b and text[k] == E and k + 1 - i <= MAX_MARKER:
                    found.append((2 if text[i + 1 : j] == "entity" else 1, i, k + 1))
                    i = k + 1
                    continue
                bound = min(k, i + MAX_MARKER)
                ids = ID_CHAIN.match(text[j + 1 : bound])
                end = j + 1 + (ids.end() if ids else 0)
                body = text[j + 1 : k]
                if (k == b or text[k] in "\n\r") and k - i < MAX_MARKER:
                    # The line or the text ends inside the marker: all of it goes when the
                    # body is what it could be so far.
                    if text[i + 1 : j] == "entity" and body.startswith("["):
                        end = k if body.find("]") in (-1, len(body) - 1) else end
                    elif re.fullmatch(r"[A-Za-z0-9_\ue202-]*", body):
                        end = k
                found.append((3, i, end))
                i = end
                continue
        if char == D:
            ids = ID_CHAIN.match(text[i + 1 : b])
            if ids:
                found.append((4, i, i + 1 + ids.end()))
                i += 1 + ids.end()
                continue
        found.append((0, i, i + 1))
        i += 1
    return found


def oracle_clean(text: str, code_ranges: list[tuple[int, int]]) -> str:
    tokens = []
    at = 0
    for start, end in [*code_ranges, (len(text), len(text))]:
        tokens += oracle_tokens(text, at, start)
        at = end
    out = ""
    pos = 0
    for index, (_, start, end) in enumerate(tokens):
        out += text[pos:start]
        pos = end
        if index + 1 < len(tokens) and tokens[index + 1][1] == end:
            continue
        blanks_end = pos
        while blanks_end < len(text) and text[blanks_end] in BLANKS:
            blanks_end += 1
        glued = any(char in "\u00a0\u202f" for char in text[pos:blanks_end])  # (no-break)
        if pos < blanks_end < len(text) and text[blanks_end] in CLOSING and not glued:
            pos = blanks_end  # blanks between the removals and closing punctuation go
        unwrapped = False
        while True:  # what the removals emptied: brackets, separators
            following = text[pos] if pos < len(text) else "\n"
            if following == ")" and out.endswith("](") and _unwrap(out) is not None:
                out = _unwrap(out)  # type: ignore[assignment]
                pos += 1
                unwrapped = True
                break
            kept = out.rstrip(BLANKS)
            last = kept[-1] if kept else "\n"
            if following in SEPARATORS and (last in PAIRS.values() or last in SEPARATORS + "\n\r"):
                pos += 1
                while last in PAIRS.values() and pos < len(text) and text[pos] in BLANKS:
                    pos += 1
                continue
            run = re.match(r"\*+|~+", text[pos:])
            if run and kept.endswith(run[0]):
                after = text[pos + len(run[0]) : pos + len(run[0]) + 1]
                before = kept[: len(kept) - len(run[0])][-1:]
                if (after == "" or after in BLANKS + CLOSING + "\n\r") and (
                    before == "" or before in BLANKS + "\n\r" + "".join(PAIRS.values())
                ):
                    out = kept[: len(kept) - len(run[0])]  # an emphasis left empty
                    pos += len(run[0])
                    continue
            if PAIRS.get(following) == last and not (
                following == "]" and text[pos + 1 : pos + 2] == "("
            ):
                out = kept[:-1]
                pos += 1
                continue
            if last in SEPARATORS and (following in "\n\r" or closing(text, pos)):
                out = kept[:-1]
                continue
            break
        if unwrapped:
            continue
        kept = out.rstrip(BLANKS)
        line_start = kept == "" or kept[-1] in "\n\r"
        if following in "\n\r":
            out = kept
            if line_start and pos < len(text):
                pos += 2 if text[pos : pos + 2] == "\r\n" else 1  # a line the removals emptied goes
        elif following in BLANKS:
            resume = pos
            while resume < len(text) and text[resume] in BLANKS:
                resume += 1
            if line_start:
                pos = resume
                if text[pos : pos + 1] in ("\n", "\r"):
                    out, pos = kept, pos + (2 if text[pos : pos + 2] == "\r\n" else 1)
            elif unspaced(kept[-1], text[resume] if resume < len(text) else "\n"):
                out, pos = kept, resume
            elif len(kept) < len(out):
                out = kept
        elif not line_start and (closing(text, pos) or unspaced(kept[-1], following)):
            out = kept
    return out + text[pos:]


QUOTE_MARKS = "\"'*_\u201c\u2018\u2039\u203a$"  # quotes, emphasis, „…“ ‚…‘ ‹…›, math
DASH_MARKS = "\u2013\u2014"


def closing(text: str, at: int) -> bool:
    """Closing punctuation at text[at], or a quote or emphasis mark whose run a blank, a line
    end, closing punctuation, a dash, another quote, a Han or kana character or the end
    follows."""
    if at >= len(text):
        return False
    if text[at] in CLOSING:
        return True
    run = re.match(r"(.)\1*(.?)", text[at:], re.DOTALL)
    if run is None or run[1] not in QUOTE_MARKS:
        return False
    after = run[2]
    return (
        after == ""
        or after in BLANKS + CLOSING + "\n\r" + DASH_MARKS + QUOTE_MARKS
        or re.fullmatch(f"[{UNSPACED}]", after) is not None
    )


def _unwrap(out: str) -> str | None:
    depth = 0
    for index in range(len(out) - 3, max(0, len(out) - 514) - 1, -1):
        if out[index] in "\n\r":
            return None
        if out[index] == "]":
            depth += 1
        elif out[index] == "[":
            if depth:
                depth -= 1
                continue
            link_text = out[index + 1 : -2]
            return out[:index] + link_text if link_text.strip(BLANKS) else None
    return None


ATOMS = [
    S,
    E,
    D,
    "\ue203",
    "\ue204",
    "\ue205",
    "\ue206",
    "\ue316",
    "\uf8ff",
    "\ue000",
    "\uff0c",
    "cite",
    "entity",
    "filecite",
    "i",
    "turn0search0",
    "turn12news3",
    "L8-L13",
    "L2",
    '["x","Name"]',
    " ",
    "  ",
    "\t",
    "\u00a0",
    ".",
    ",",
    ")",
    "(",
    "[",
    "]",
    "](",
    ";",
    "\uff08",
    "\uff09",
    "\u3010",
    "\u3011",
    "\u3001",
    "\n",
    "\r\n",
    "a",
    "word",
    "\U0001f600",
    "\u200b",
    "_",
    "turn",
    "0",
    "\u4e2d",  # Han, kana, their punctuation (UNSPACED), and Hangul, which is not
    "\u3002",
    "\u304b",
    "\uff08",
    "\ud55c",
    "\u060c",  # Arabic's comma: closing punctuation outside ASCII and CJK
    '"',  # quotes and emphasis marks: closing only before no letter or digit
    "'",
    "**",
]
texts = st.lists(st.sampled_from(ATOMS), max_size=40).map("".join)


@st.composite
def with_code_ranges(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]]]:
    text = draw(texts)
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=6)))
    return text, [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts) - 1, 2)]


@given(with_code_ranges())
def test_kernel_twin_oracle(case: tuple[str, list[tuple[int, int]]]) -> None:
    text, code_ranges = case
    tokens = _clean_py.scan(text, code_ranges)
    assert _clean_c.scan(text, code_ranges) == tokens
    expected_tokens = []
    at = 0
    for start, end in [*code_ranges, (len(text), len(text))]:
        expected_tokens += oracle_tokens(text, at, start)
        at = end
    assert [token[:3] for token in tokens] == expected_tokens
    expected = oracle_clean(text, code_ranges)
    assert _clean_py.join(text, tokens, None)[0] == expected
    assert _clean_c.join(text, tokens, None) == _clean_py.join(text, tokens, None)
    if not any(token[0] == 2 for token in tokens):
        assert _clean_c.clean(text, code_ranges) == expected
        assert _clean_py.clean(text, code_ranges) == expected


@given(texts, st.lists(st.sampled_from(["", "x", "Zürich", "\U0001f600", " "]), max_size=40))
def test_join_with_replacements(text: str, shown: list[str]) -> None:
    tokens = _clean_py.scan(text, [])
    replacements = [shown[i] if i < len(shown) else "" for i in range(len(tokens))]
    assert _clean_c.join(text, tokens, replacements) == _clean_py.join(text, tokens, replacements)


@given(texts, st.sampled_from(["codepoints", "utf16", "utf8"]), st.booleans())
def test_public_api_agrees(text: str, offsets: str, lenient: bool) -> None:
    compiled = clean_with_marks(text, offsets=offsets, lenient=lenient, implementation="cython")  # type: ignore[arg-type]
    pure = clean_with_marks(text, offsets=offsets, lenient=lenient, implementation="python")  # type: ignore[arg-type]
    assert compiled == pure
    assert clean(text, lenient=lenient, implementation="cython") == compiled.text
    assert not re.search("[\ue200-\ue206]", clean(text, skip_code=False))


_md = MarkdownIt("commonmark")
MD_ATOMS = [
    "`",
    "``",
    "```",
    "~~~",
    "    ",
    "  ",
    " ",
    "\n",
    "\n\n",
    "> ",
    "- ",
    "* ",
    "1. ",
    "# ",
    "a",
    "b c",
    S,
    "\\",
    "---",
]


def markdown_it_code_markers(text: str) -> int:
    html = _md.render(text)
    return sum(part.count(S) for part in re.findall(r"<code[^>]*>(.*?)</code>", html, re.S))


@given(st.lists(st.sampled_from(MD_ATOMS), max_size=16).map("".join))
def test_code_is_what_commonmark_says(text: str) -> None:
    """Every START markdown-it puts in <code> survives clean; every other one goes."""
    if "\t" in text:
        return
    assert clean(text).count(S) == markdown_it_code_markers(text)


def test_find_code_ranges_sorted() -> None:
    text = "a `b` c\n\n```\nx\n```\n\n    y\n\n> `z`\n- `w`\n"
    code_ranges = find_code_ranges(text)
    assert code_ranges == sorted(code_ranges)
    assert all(a < b for a, b in code_ranges)


@given(st.lists(st.sampled_from([*MD_ATOMS, "\t", "~", "\ue206", "\r"]), max_size=20).map("".join))
def test_skipping_the_markdown_scan_is_sound(text: str) -> None:
    """When the quick test says no marker can be in code, the full scan agrees."""
    from citemark._markdown.code import markers_may_be_in_code

    if not markers_may_be_in_code(text):
        assert not any(re.search("[\ue200-\ue206]", text[a:b]) for a, b in find_code_ranges(text))
    assert _clean_c.marker_state(text) == _clean_py.marker_state(text)


@pytest.mark.slow  # texts of a thousand tokens through the slow oracle-side twin
@given(
    st.lists(st.sampled_from(ATOMS), min_size=600, max_size=1500).map("".join), with_code_ranges()
)
def test_long_texts_cross_the_kernels_windows(text: str, extra: tuple[str, list[Any]]) -> None:
    """The kernel's one-call clean cuts hundreds of tokens a window at a time."""
    code_ranges = [(0, 5), (len(text) // 2, len(text) // 2 + 7)] if len(text) > 20 else []
    for chosen in (code_ranges, []):
        expected = _clean_py.join(text, _clean_py.scan(text, chosen), None)[0]
        if not any(token[0] == 2 for token in _clean_py.scan(text, chosen)):
            assert _clean_c.clean(text, chosen) == expected
        assert _clean_c.clean(text, chosen, lambda body: "N") == _clean_py.clean(
            text, chosen, lambda body: "N"
        )


JSON_ATOMS = [
    "[",
    "]",
    '"',
    ",",
    " ",
    "\t",
    "\\",
    '\\"',
    "\\u0041",
    "a",
    "Node.js",
    " x ",
    "\u3000",
    "\u00a0",
    "\x01",
    "\x85",
    "\U0001f600",
    "\ue203",
    D,
    "{",
    "}",
    "1",
    "null",
]
entity_bodies = st.one_of(
    st.lists(st.sampled_from(JSON_ATOMS), max_size=14).map("".join),
    st.lists(st.text(max_size=6), min_size=1, max_size=4).map(
        lambda items: json.dumps(items, ensure_ascii=False)
    ),
    st.lists(st.sampled_from(['"a"', '" B "', '""', '"\u2003C"']), max_size=4).map(
        lambda items: "[" + ",".join(items) + "]"
    ),
)


@given(entity_bodies)
def test_plain_names_are_entity_names(body: str) -> None:
    """The names read in place (plain_names) are what entity_name says, in both kernels."""
    if any(char in body for char in (S, E, "\n", "\r")):
        return  # no marker body holds these
    text = f"It works with {S}entity{D}{body}{E}, which"
    expected = _clean_py.clean(text, [], entity_name, False)
    for kernel in (_clean_py, _clean_c):
        assert kernel.clean(text, [], entity_name, True) == expected
        assert kernel.clean(text, [], entity_name, False) == expected
    shown = _clean_py.plain_name(text, text.index(D) + 1, text.index(E))
    assert shown is None or shown == entity_name(body)


def test_plain_name_shapes() -> None:
    def plain(body: str) -> str | None:
        return _clean_py.plain_name(body, 0, len(body))

    assert plain('["software","Node.js","javascript runtime"]') == "Node.js"
    assert plain('[ "Kyoto" ]') == "Kyoto"
    assert plain('["place", " \u3000Kyoto\u00a0"]') == "Kyoto"
    assert plain('["a","b",]') is None  # not JSON: entity_name decides (nothing shows)
    assert plain("[]") is None
    assert plain('["a\\"b"]') is None  # escapes are left to json
    assert plain('["a", 1]') is None
    assert plain('"Kyoto"') is None


SIMD_CHECK = r"""
from citemark._kernels import clean_c as kernel
from citemark._kernels import clean_py as twin
marker = "\ue200cite\ue202turn0search1\ue201"
checked = 0
for filler in ("\u00e9", "\u4e2d", "\U0001f600"):
    for size in range(0, 70):
        for at in range(0, size + 1, 3):
            for text in (
                filler * at + marker + filler * (size - at) + "\ue206",
                filler * at + "\ue205" + filler * (size - at),
                filler * at + "\ue1ff\ue207" + filler * (size - at),
                marker + filler * at + "`" + filler * (size - at) + "`",
                "`" + filler * at + marker + filler * (size - at) + "`~\r",
                filler * at + "```" + filler * (size - at) + "\n" + marker,
                filler * at + "~~~" + filler * (size - at) + marker + "``",
                filler * at + "\r" + filler * (size - at) + marker + "`~`",
            ):
                assert kernel.clean(text, []) == twin.clean(text, []), (size, at)
                assert kernel.marker_state(text) == twin.marker_state(text), (size, at)
                checked += 1
print(checked)
"""


@pytest.mark.slow  # an interpreter per vector path
@pytest.mark.parametrize("level", ["portable", "sse2", "avx2"])
def test_every_vector_path_finds_every_marker(level: str) -> None:
    """The kernel's range search has an SSE2 path and a plain loop, chosen by the level
    that CITEMARK_SIMD caps: markers at every offset around the vector widths."""
    env = {**os.environ, "CITEMARK_SIMD": level}
    done = subprocess.run(
        [sys.executable, "-c", SIMD_CHECK], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 9000


DEGRADED_ATOMS = [
    "cite",
    "filecite",
    "i",
    "ai",
    " i",
    "turn0search0",
    "turn12view3",
    "L8-L13",
    "entity",
    '["a","B"]',
    "[",
    '"',
    ":contentReference",
    "::",
    "[oai_citation:0",
    "[oai_citation_attribution:1",
    "\u2021",
    "](https://a.io/x_(y))",
    "F:a.py",
    "url",
    "link_title",
    "navlist",
    "Docs",
    ",",
    "image_group",
    "products",
    '{"query":["a"]}',
    "{",
    "}",
    "contentReference",
    "[oaicite:3]",
    "{index=3}",
    "\u3010",
    "4:0",
    "12",
    "\u2020",
    "source",
    "\u3011",
    "\\ue200",
    "\ufffd",
    " ",
    "\u00a0",
    "\u200b",
    ".",
    '["a", "B", 3]',
    "x",
]


@given(st.lists(st.sampled_from(DEGRADED_ATOMS), max_size=12).map("".join))
def test_degraded_signs_cover_every_degraded_form(text: str) -> None:
    """The lenient pass skips its regex on prose without a sign: no match is ever missed."""
    from citemark.display import _DEGRADED, _may_degrade

    for match in _DEGRADED.finditer(text):
        assert _may_degrade(match[0]), match[0]
