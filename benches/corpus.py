"""Seeded, reproducible texts for the benchmarks.

Every generator takes a `seed` and draws only from its own `random.Random(seed)`, so a
given (generator, size, seed) always gives the same text, on every machine and Python
version that keeps `random.Random`'s documented reproducibility.  Sizes are in characters
(code points); 1 MB is 1,000,000 characters (see `_common`).

Run ``python benches/corpus.py`` to print what each workload holds.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from _common import (
    KB,
    MB,
    kind,
)  # benches/ is on sys.path: pytest's rootdir-less import, or a script

START = "\ue200"
DELIM = "\ue202"
STOP = "\ue201"

EM_DASH = "\u2014"
LEFT_QUOTE, RIGHT_QUOTE = "\u201c", "\u201d"

_WORDS = (  # noqa: SIM905 - a word list reads better as prose
    "the of and to in is that for it as was with be by on not he this are or his from at "
    "which but have an they you were her she there one all we their been has would when "
    "who will more if no out so said what up its about into than them can only other new "
    "some could time these two may then do first any my now such like our over man me "
    "even most made after also did many before must through back years where much your "
    "way well down should because each just those people how too little state good very "
    "make world still own see men work long get here between both life being under never "
    "day same another know while last might us great old year off come since against go "
    "came right used take three model answer source report data study results system "
    "table version release policy update library function parser marker citation "
    "document memory request server latency throughput benchmark regression kernel "
    "thread buffer offset contract"
).split()

_CJK_RANGES = ((0x4E00, 0x9FA5), (0x3041, 0x3093), (0x30A1, 0x30F3), (0xAC00, 0xD7A3))
_EMOJI = [chr(cp) for cp in range(0x1F600, 0x1F640)] + ["\U0001f44d", "\U0001f680", "\U0001f4da"]


# ---------------------------------------------------------------- building blocks


def _sentence(rng: random.Random, *, fancy: bool = False) -> str:
    """One English-like sentence, 6-22 words.  `fancy` allows an em dash or curly quotes."""
    words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 22))]
    if fancy and rng.random() < 0.25:
        at = rng.randrange(1, len(words))
        words[at] = f"{EM_DASH}{words[at]}"
    if fancy and rng.random() < 0.15:
        at = rng.randrange(len(words))
        words[at] = f"{LEFT_QUOTE}{words[at]}{RIGHT_QUOTE}"
    if rng.random() < 0.1:
        words.insert(rng.randrange(len(words)), str(rng.randint(2, 2030)))
    text = " ".join(words)
    return text[0].upper() + text[1:] + rng.choice(".....?!:")


def _source_id(rng: random.Random) -> str:
    kind_ = rng.choice(("search", "search", "search", "file", "news", "view"))
    return f"turn{rng.randint(0, 5)}{kind_}{rng.randint(0, 12)}"


def _locator(rng: random.Random) -> str:
    first = rng.randint(1, 400)
    if rng.random() < 0.2:
        return f"L{first}"
    return f"L{first}-L{first + rng.randint(1, 40)}"


def valid_marker(rng: random.Random) -> str:
    """A valid citation: single source (~60%), multi-source (~25%), with a locator (~30%),
    now and then with spaces around a part (the helper strips them)."""
    roll = rng.random()
    count = 1 if roll < 0.6 else rng.randint(2, 4)
    parts = [_source_id(rng) for _ in range(count)]
    if rng.random() < 0.3:
        parts.append(_locator(rng))
    if rng.random() < 0.05:
        at = rng.randrange(len(parts))
        parts[at] = f" {parts[at]} "
    return START + "cite" + DELIM + DELIM.join(parts) + STOP


def invalid_marker(rng: random.Random) -> str:
    """A span the helper's regex matches (and consumes) but that is not a citation, or
    marker characters in odd places; every one is closed so no STOP hunt runs to the end."""
    choice = rng.randrange(12)
    if choice == 0:  # space inside an id
        return f"{START}cite{DELIM}turn0 search1{STOP}"
    if choice == 1:  # empty body
        return f"{START}cite{DELIM}{STOP}"
    if choice == 2:  # locator only
        return f"{START}cite{DELIM}{_locator(rng)}{STOP}"
    if choice == 3:  # whitespace-only parts
        return f"{START}cite{DELIM} {DELIM}\u3000{DELIM}\n{STOP}"
    if choice == 4:  # punctuation / non-ASCII in an id
        return f"{START}cite{DELIM}turn0.search{rng.randint(0, 9)}{DELIM}fi\u0301le{STOP}"
    if choice == 5:  # nested START: the whole span is invalid
        return f"{START}cite{DELIM}{_source_id(rng)}{START}cite{DELIM}{_source_id(rng)}{STOP}"
    if choice == 6:  # stray STOP
        return f" stray{STOP} "
    if choice == 7:  # stray DELIM
        return f" {DELIM}{_source_id(rng)}{DELIM} "
    if choice == 8:  # unknown family
        return f"{START}navlist{DELIM}Topics{DELIM}{_source_id(rng)}{STOP}"
    if choice == 9:  # START with no family: scanning moves on
        return f"{START} hello "
    if choice == 10:  # family without DELIM
        return f"{START}cite {_source_id(rng)}{STOP}"
    # unterminated START: swallows text (and the next marker) up to the next STOP
    return f"{START}cite{DELIM}{_source_id(rng)} {_sentence(rng)} "


# ---------------------------------------------------------------- workloads


def typical_answer(
    seed: int = 0, size: int = 4 * KB, citations: int = 8, *, fancy: bool = True
) -> str:
    """An English answer of about `size` characters in a few paragraphs, with `citations`
    markers after sentence ends.  `fancy` puts an em dash in (so the text is 2-byte kind
    even without markers)."""
    rng = random.Random(seed)
    sentences: list[str] = []
    total = 0
    budget = size - 30 * citations  # a marker is about 30 characters
    while total < budget:
        sentence = _sentence(rng, fancy=fancy)
        sentences.append(sentence)
        total += len(sentence) + 1
    if fancy:
        at = rng.randrange(len(sentences))
        sentences[at] = sentences[at][:-1] + f" {EM_DASH} see below."
    picks = sorted(rng.sample(range(len(sentences)), min(citations, len(sentences))))
    for index in picks:
        sentences[index] += valid_marker(rng)
    pieces: list[str] = []
    for index, sentence in enumerate(sentences):
        pieces.append(sentence)
        if index + 1 == len(sentences):
            break
        pieces.append("\n\n" if rng.random() < 0.15 else ("\n- " if rng.random() < 0.05 else " "))
    return "".join(pieces)


SITES = ("axios.com", "reuters.com", "en.wikipedia.org", "nature.com", "theverge.com")


def web_answer(seed: int = 0, size: int = 4 * KB, citations: int = 8) -> str:
    """`typical_answer` as a web search writes it: every other marker followed by its source
    as a Markdown link, ` ([axios.com](https://www.axios.com/...?utm_source=openai))`."""
    rng = random.Random(seed)
    pieces = typical_answer(seed, size, citations).split(STOP)
    out = []
    for index, piece in enumerate(pieces[:-1]):
        out.append(piece + STOP)
        if index % 2 == 0:
            site = rng.choice(SITES)
            word = _sentence(rng).split()[0].lower()
            path = f"{rng.randint(2023, 2026)}/{rng.randint(1, 12):02d}/{word}"
            out.append(f" ([{site}](https://www.{site}/{path}?utm_source=openai))")
    out.append(pieces[-1])
    return "".join(out)


def linked_answer(seed: int = 0, size: int = 4 * KB, citations: int = 8) -> str:
    """`web_answer` with a marker as each link's destination, `[axios.com](<marker>)`,
    which cleaning unwraps to `axios.com`."""
    text = web_answer(seed, size, citations)
    return re.sub(
        r"\(\[([^\]]+)\]\(https://[^)]*\)\)",
        lambda link: f"[{link[1]}]({START}cite{DELIM}turn0search{seed % 10}{STOP})",
        text,
    )


def _english(rng: random.Random, size: int) -> str:
    """Exactly `size` characters of ASCII English, no markers."""
    pieces: list[str] = []
    total = 0
    while total < size:
        sentence = _sentence(rng) + ("\n\n" if rng.random() < 0.12 else " ")
        pieces.append(sentence)
        total += len(sentence)
    return "".join(pieces)[:size]


def plain_ascii(size: int = MB, seed: int = 1) -> str:
    """No markers, pure ASCII: CPython stores it 1 byte per character."""
    return _english(random.Random(seed), size)


def plain_ucs2(size: int = MB, seed: int = 2) -> str:
    """No markers, ASCII but for one em dash: 2 bytes per character."""
    rng = random.Random(seed)
    text = _english(rng, size - 1)
    at = rng.randrange(len(text))
    return text[:at] + EM_DASH + text[at:]


def plain_cjk(size: int = MB, seed: int = 3) -> str:
    """No markers, CJK with emoji: 4 bytes per character."""
    rng = random.Random(seed)
    pieces: list[str] = []
    total = 0
    while total < size:
        low, high = rng.choice(_CJK_RANGES)
        run = "".join(chr(rng.randint(low, high)) for _ in range(rng.randint(8, 40)))
        if rng.random() < 0.3:
            run += rng.choice(_EMOJI)
        run += rng.choice("。、，！？\n")
        pieces.append(run)
        total += len(run)
    text = "".join(pieces)[: size - 1]
    return text + _EMOJI[0]  # at least one astral character, whatever the draw


def dense(size: int = MB, seed: int = 4, fraction: float = 0.30) -> str:
    """About `fraction` of the characters inside valid markers, short sentences between."""
    rng = random.Random(seed)
    pieces: list[str] = []
    inside = total = 0
    while total < size:
        if inside < fraction * (total + 1):
            piece = valid_marker(rng)
            inside += len(piece)
        else:
            piece = " " + _sentence(rng, fancy=True)
        pieces.append(piece)
        total += len(piece)
    return "".join(pieces)


def malformed(size: int = MB, seed: int = 5) -> str:
    """Invalid bodies, nested STARTs, stray STOPs and DELIMs, unterminated STARTs (each
    closed by some later STOP), mixed with valid markers; ends with a valid marker."""
    rng = random.Random(seed)
    pieces: list[str] = []
    total = 0
    while total < size - 200:
        roll = rng.random()
        if roll < 0.25:
            piece = valid_marker(rng)
        elif roll < 0.55:
            piece = invalid_marker(rng)
        else:
            piece = " " + _sentence(rng, fancy=True)
        pieces.append(piece)
        total += len(piece)
    pieces.append(valid_marker(rng) + " The end.")
    return "".join(pieces)


def many_citations(count: int = 50_000, size: int = MB, seed: int = 6) -> str:
    """`count` valid citations in about `size` characters (markers are most of the text)."""
    rng = random.Random(seed)
    pieces: list[str] = []
    total = 0
    for _ in range(count):
        kind_ = rng.choice(("file", "news", "view"))
        marker = f"{START}cite{DELIM}turn{rng.randint(0, 9)}{kind_}{rng.randint(0, 9)}{STOP}"
        filler = rng.choice(("a ", "an ", "to ", "it. ", "so ", "of "))
        pieces.append(marker + filler)
        total += len(marker) + len(filler)
    if total < size:
        pieces.append(_english(rng, size - total))
    return "".join(pieces)


UNTERMINATED_UNIT = f"{START}cite{DELIM}x "


def unterminated(size: int = MB) -> str:
    """`"\\ue200cite\\ue202x "` repeated, no STOP at all: quadratic for the helper's regex."""
    reps, rest = divmod(size, len(UNTERMINATED_UNIT))
    return UNTERMINATED_UNIT * reps + " " * rest


def answers(count: int = 2_000, seed: int = 7) -> list[str]:
    """`count` varied answers of 0.5-8 KB: mostly English with 0-16 citations, some with
    no markers (half of those pure ASCII), some CJK with emoji and citations."""
    rng = random.Random(seed)
    texts: list[str] = []
    for index in range(count):
        size = rng.randint(500, 8_000)
        roll = rng.random()
        if roll < 0.05:
            texts.append(plain_ascii(size, seed=seed * 100_003 + index))
        elif roll < 0.10:
            texts.append(typical_answer(seed * 100_003 + index, size, 0))
        elif roll < 0.15:
            text = plain_cjk(size, seed=seed * 100_003 + index)
            cut = sorted(rng.sample(range(len(text)), rng.randint(1, 6)))
            parts = [text[a:b] for a, b in zip([0, *cut], [*cut, len(text)], strict=True)]
            texts.append("".join(p + valid_marker(rng) for p in parts[:-1]) + parts[-1])
        else:
            citations = min(16, max(0, round(size / 500 + rng.gauss(0, 2))))
            texts.append(typical_answer(seed * 100_003 + index, size, citations))
    return texts


# ---------------------------------------------------------------- registry


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    make: Callable[[], str]


@functools.cache
def text_of(name: str) -> str:
    return WORKLOADS[name].make()


@functools.cache
def answers_2000() -> tuple[str, ...]:
    return tuple(answers(2_000))


@functools.cache
def unterminated_of(size: int) -> str:
    return unterminated(size)


# Name -> how it is made.  Names are what the report and chart print.
WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload("typical_4KB", "English answer, 8 citations, em dash (2-byte)", typical_answer),
        Workload("plain_ascii_1MB", "no markers, pure ASCII (1-byte)", plain_ascii),
        Workload("plain_ucs2_1MB", "no markers, ASCII + one em dash (2-byte)", plain_ucs2),
        Workload("plain_cjk_1MB", "no markers, CJK + emoji (4-byte)", plain_cjk),
        Workload("dense_1MB", "~30% of characters inside markers", dense),
        Workload("malformed_1MB", "invalid, nested, stray, unterminated + valid", malformed),
        Workload("many_50k_1MB", "50,000 citations", many_citations),
        Workload(
            "unterminated_20KB",
            "START cite DELIM x, no STOP (20 KB)",
            lambda: unterminated(20 * KB),
        ),
        Workload("unterminated_1MB", "START cite DELIM x, no STOP (1 MB)", unterminated),
    )
}

SCALING_SIZES = (100 * KB, 300 * KB, MB, 3 * MB, 10 * MB)


def _describe() -> None:
    from _common import load_implementations

    twin = load_implementations()["twin"]
    print(f"{'workload':<20} {'chars':>10} {'kind':>4} {'citations':>9} {'in markers':>10}")
    for name in WORKLOADS:
        text = text_of(name)
        found = twin.extract_citations(text)
        covered = sum(c["end"] - c["start"] for c in found)
        print(
            f"{name:<20} {len(text):>10,} {kind(text):>4} {len(found):>9,} "
            f"{covered / max(1, len(text)):>10.1%}"
        )
    batch = answers_2000()
    sizes = [len(t) for t in batch]
    kinds = [kind(t) for t in batch]
    cites = sum(len(x) for x in twin.extract_many(batch))
    print(
        f"answers_2000: {len(batch)} texts, {sum(sizes):,} chars ({min(sizes)}-{max(sizes)}), "
        f"kinds 1/2/4: {kinds.count(1)}/{kinds.count(2)}/{kinds.count(4)}, {cites:,} citations"
    )


if __name__ == "__main__":
    _describe()
