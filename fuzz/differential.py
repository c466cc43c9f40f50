"""The differential check shared by the two fuzz drivers.

`fuzz_scan.py` (atheris) and `fuzz_hypothesis.py` (hypothesis) only differ in where the
random choices come from; both build a `Case` with `build_case` and hand it to `check`,
which runs the compiled kernel (`citemark._kernels.scan_c`) and its pure-Python twin
(`citemark._kernels.scan_py`) on it and raises `Mismatch` at the first observable difference.

A case is a grammar (`Grammar(families, start, delimiter, stop, any_family,
max_marker_length, source_id, locator)`, within what `citemark.Parser` accepts: random
families, now and then other marker characters, any_family, a maximum marker length,
custom id/locator patterns), a text built from a weighted alphabet, and citation lists.
Compared, strictly (exact types, dict key order, or the same exception type):

* building the grammar;
* `extract`, `strip`, `spans` and `records` (in code points, UTF-16 and UTF-8 units);
* `cut(text, citations)` on lists that mix real results of `extract` (whole, shuffled,
  reversed, duplicated) with hostile ones (negative, huge, `bool`, `float`, `int`-subclass
  bounds, missing keys, non-dicts), and a few non-`str` texts;
* `DropIn(scanner).strip_citations` on the same lists (the fallback paths), and for the
  guide's markers `extract_citations` / `strip_many` on `str` subclasses too;
* no call may mutate its arguments; and each scanner must agree with itself: `strip` is
  `strip_citations(text, extract(text))`, and the valid `spans` are `extract`'s.

Random choices come from a `Source`: anything with `int(lo, hi) -> int` (inclusive).
"""

from __future__ import annotations

import copy
import importlib
import importlib.machinery
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, NamedTuple, Protocol

START = "\ue200"
DELIM = "\ue202"
STOP = "\ue201"

MAX_PIECES = 48
MAX_RUN = 600
# The kernel scans texts of at least this many code points without the GIL.
LONG_TEXT = 1 << 15


class Source(Protocol):
    def int(self, lo: int, hi: int) -> int:
        """A number in [lo, hi], both included."""
        ...


class Mismatch(AssertionError):
    """The kernel and the twin disagree (or one broke an invariant) on a case."""


# Inputs that are legal but not plain: the scanners must treat them exactly alike.  Their
# reprs name the type so that a printed case can be pasted back.
class StrSub(str):
    def __repr__(self) -> str:
        return f"StrSub({str.__repr__(self)})"


class IntSub(int):
    def __repr__(self) -> str:
        return f"IntSub({int.__repr__(self)})"


class DictSub(dict):  # type: ignore[type-arg]
    def __repr__(self) -> str:
        return f"DictSub({dict.__repr__(self)})"


class Record(NamedTuple):
    """The `cls` given to `records`: a tuple subclass of six fields, like CitationSpan."""

    family: str
    source_ids: tuple[str, ...]
    locator: str | None
    start: int
    end: int
    clean_start: int


# --- the alphabet -------------------------------------------------------------------
# Single characters, by weight (the grammar's marker characters are added on top).  They
# probe the predicates: `str.strip` whitespace (including the odd ones such as U+001C and
# U+0085), `str.isdecimal` digits outside ASCII (which `\d` accepts), digits that are not
# decimal (U+00B2), id characters and their look-alikes, characters that force 1-, 2- and
# 4-byte string kinds, and lone surrogates.
CHARS: list[tuple[int, str]] = [
    (6, " "),
    (2, "\t"),
    (2, "\n"),
    (1, "\r"),
    (1, "\x0b"),
    (1, "\x1c"),
    (1, "\x85"),
    (1, "\xa0"),
    (1, "\u2003"),
    (1, "\u3000"),
    (1, "\u200b"),
    (1, "\ufeff"),
    (4, "L"),
    (1, "l"),
    (4, "-"),
    (2, "_"),
    (8, "0"),
    (4, "1"),
    (4, "8"),
    (2, "9"),
    (3, "\u0661"),  # ARABIC-INDIC DIGIT ONE: decimal, so a locator digit
    (1, "\u0663"),
    (1, "\u09e7"),  # BENGALI DIGIT ONE
    (1, "\uff11"),  # FULLWIDTH DIGIT ONE
    (1, "\U0001d7d8"),  # MATHEMATICAL DOUBLE-STRUCK DIGIT ZERO: decimal, astral
    (2, "\xb2"),  # SUPERSCRIPT TWO: a digit, not decimal
    (1, "\u2460"),  # CIRCLED DIGIT ONE: numeric, not decimal
    (4, "a"),
    (2, "Z"),
    (1, "\xe9"),
    (1, "\xff"),
    (1, "\u0131"),  # DOTLESS I
    (1, "\u212a"),  # KELVIN SIGN
    (1, "\uff21"),  # FULLWIDTH A
    (3, "\U0001f600"),  # emoji, astral
    (1, "\U0001f44d\U0001f3fd"),
    (1, "\u2603"),
    (1, "\x00"),
    (2, "\ud800"),  # lone surrogates
    (2, "\udfff"),
    (1, "\udc00\ud800"),
    (1, "\ue000"),  # private use, next to the guide's markers
    (1, "\ue203"),
    (1, "\ue204"),
    (1, "\ue1ff"),
    (1, "`"),
]

WORDS: list[tuple[int, str]] = [
    (20, "cite"),
    (3, "cit"),
    (2, "citex"),
    (1, "CITE"),
    (4, "navlist"),
    (8, "turn0file0"),
    (4, "turn0search3"),
    (2, "turn1news12"),
    (6, "L8-L13"),
    (3, "L8"),
    (2, "L0"),
    (1, "L8-"),
    (1, "L8-L"),
    (1, "L\u0661\u0662-L\u0663"),
    (1, "L\xb2"),
    (1, "L8-L13-L20"),
    (2, "id_with-dash"),
    (1, "bad id"),
    (1, "bad.id"),
    (1, "12-34"),
    (1, "p. 12"),
]

FAMILIES: list[tuple[int, str]] = [
    (40, "cite"),
    (10, "navlist"),
    (4, "image_group"),
    (3, ""),
    (2, "c"),
    (2, "cit"),
    (2, "citex"),
    (1, "CITE"),
    (1, "ci te"),
    (1, "cite" + DELIM),
    (1, START),
    (1, STOP),
    (1, "\u2603"),
    (1, "\U0001f600cite"),
    (1, "\ud800"),
    (1, "\xe9"),
]

# Family names for any_family texts: runs of [A-Za-z0-9_] and near misses.
WORD_FAMILIES: list[tuple[int, str]] = [
    (20, "cite"),
    (5, "navlist"),
    (3, "A_9"),
    (2, "x"),
    (2, ""),
    (1, "cite-x"),
    (1, "c\xe9"),
    (1, "\u0661"),
    (1, "c" * 80),
]

IDS: list[tuple[int, str]] = [
    (20, "turn0file0"),
    (6, "turn0search3"),
    (3, "a"),
    (2, "A-Z_09"),
    (2, "x" * 70),
    (2, ""),
    (2, " turn0file1 "),
    (1, "\tturn0file2\n"),
    (1, "\xa0turn0file3\x85"),
    (1, "bad id"),
    (1, "bad.id"),
    (1, "\xe9t\xe9"),
    (1, "\u212aelvin"),
    (1, "\U0001f600"),
    (1, "\ud800"),
    (1, "L8"),
    (1, "123"),
    (1, START),
]

LOCATORS: list[tuple[int, str]] = [
    (10, "L8-L13"),
    (5, "L8"),
    (2, "L0"),
    (2, " L8-L13 "),
    (1, "L\u0661\u0662"),
    (1, "L\U0001d7d8-L\u09e7"),
    (1, "L\xb2"),
    (1, "L\u2460"),
    (1, "l8"),
    (1, "L8-"),
    (1, "L-L8"),
    (1, "L8-L13-L20"),
    (1, "L"),
    (1, "8-13"),
    (1, "p. 12"),
]

# Other marker characters, as Parser allows them (three different characters).
MARKERS: list[tuple[int, tuple[str, str, str]]] = [
    (4, ("[", "|", "]")),
    (2, ("<", ":", ">")),
    (1, ("\x00", "\x01", "\x02")),
    (2, ("\xab", "\xa6", "\xbb")),  # 1-byte kind: the scan cannot skip 1-byte texts
    (1, ("a", "b", "c")),  # word characters
    (2, (STOP, DELIM, START)),  # the guide's, permuted
    (1, (START, "\ue203", STOP)),
    (1, ("\u3010", "\u2020", "\u3011")),
    (2, ("\U0001f600", "\U0001f601", "\U0001f602")),  # astral: 4-byte kind only
    (1, ("\ud800", "\udc00", "\udfff")),  # lone surrogates
]

# Custom (source_id, locator) rules: both go through `re`, as Parser arranges.
PATTERNS: list[tuple[int, tuple[str, str]]] = [
    (3, (r"[A-Za-z0-9_-]+", r"L\d+(?:-L\d+)?")),  # the guide's rules, through `re`
    (2, (r"[A-Za-z0-9_-]+", r"L[0-9]+(?:-L[0-9]+)?")),
    (2, (r"[a-z]+", r"\d+(?:-\d+)?")),
    (2, (r"\w+", r"L\d+")),
    (1, (r"(?i)turn\d+[a-z]+\d+", r"p\.?\s*\d+")),
    (1, (r".+", r"L.*")),
    (1, (r"\S+", r"")),
]

BIG = [2**31 - 1, 2**31, 2**32, 2**62, 2**63 - 1, 2**63, 2**64, 2**100]


def pick(src: Source, weighted: Sequence[tuple[int, Any]]) -> Any:
    roll = src.int(0, sum(weight for weight, _ in weighted) - 1)
    for weight, value in weighted:
        if roll < weight:
            return value
        roll -= weight
    raise AssertionError("unreachable")


def rare(src: Source, n: int) -> bool:
    """True once in n.  The rare side is the top value: a source that has run dry (the
    fuzzer's bytes used up) gives the low end, and hypothesis shrinks toward it, so both
    fall back to the common, cheap choices."""
    return src.int(0, n - 1) == n - 1


def shuffled(src: Source, items: list[Any]) -> list[Any]:
    items = list(items)
    for i in range(len(items) - 1, 0, -1):
        j = src.int(0, i)
        items[i], items[j] = items[j], items[i]
    return items


# --- building a case ----------------------------------------------------------------
@dataclass
class Config:
    """The arguments of `Grammar`, in its order."""

    families: tuple[str, ...]
    start: str = START
    delimiter: str = DELIM
    stop: str = STOP
    any_family: bool = False
    max_marker_length: int | None = None
    source_id: re.Pattern[str] | None = None
    locator: re.Pattern[str] | None = None

    def args(self) -> tuple[Any, ...]:
        return (
            self.families,
            self.start,
            self.delimiter,
            self.stop,
            self.any_family,
            self.max_marker_length,
            self.source_id,
            self.locator,
        )

    @property
    def is_guide(self) -> bool:
        """The grammar `DropIn` builds: the guide's markers and rules, listed families."""
        return (self.start, self.delimiter, self.stop) == (START, DELIM, STOP) and not (
            self.any_family or self.max_marker_length or self.source_id or self.locator
        )


@dataclass
class Case:
    config: Config
    text: str
    api_text: str = ""
    cut_text: Any = None
    citation_lists: list[Any] = field(default_factory=list)

    def describe(self) -> str:
        """The case as Python source (ASCII only, so lone surrogates print too)."""
        lines = [
            f"grammar_args = {self.config.args()!a}",
            "# Grammar(families, start, delimiter, stop, any_family, max_marker_length,",
            "#         source_id, locator)",
            f"text = {self.text!a}",
        ]
        if self.api_text is not self.text:
            lines.append(f"api_text = {self.api_text!a}")
        if self.cut_text is not self.text:
            lines.append(f"cut_text = {self.cut_text!a}")
        lines += [f"citations[{i}] = {c!a}" for i, c in enumerate(self.citation_lists)]
        return "\n".join(lines)


def build_config(src: Source) -> Config:
    start, delimiter, stop = pick(src, MARKERS) if rare(src, 6) else (START, DELIM, STOP)
    any_family = rare(src, 8) and not re.fullmatch(r"[A-Za-z0-9_]", delimiter)
    if any_family:
        families: tuple[str, ...] = ()
    else:
        count = pick(src, [(50, 1), (25, 2), (10, 3), (5, 4)])
        families = tuple(pick(src, FAMILIES) for _ in range(count))
    max_marker_length = None
    if rare(src, 6):
        max_marker_length = pick(src, [(10, src.int(1, 40)), (3, src.int(1, 400)), (1, 2**70)])
    source_id = locator = None
    if rare(src, 8):
        source_id_rule, locator_rule = pick(src, PATTERNS)
        source_id, locator = re.compile(source_id_rule), re.compile(locator_rule)
    return Config(
        families, start, delimiter, stop, any_family, max_marker_length, source_id, locator
    )


def build_family(src: Source, config: Config) -> str:
    if config.any_family:
        return pick(src, WORD_FAMILIES)  # type: ignore[no-any-return]
    if config.families and not rare(src, 8):
        return config.families[src.int(0, len(config.families) - 1)]
    return pick(src, FAMILIES)  # type: ignore[no-any-return]


def build_citation_text(src: Source, config: Config) -> str:
    """A marker that is often valid: START family DELIM ids [DELIM locator] STOP, with
    parts dropped, doubled or padded now and then."""
    s, d, e = config.start, config.delimiter, config.stop
    family = build_family(src, config)
    ids = [pick(src, IDS) for _ in range(pick(src, [(3, 0), (20, 1), (6, 2), (2, 3)]))]
    body = d.join(ids)
    if not rare(src, 3):
        body += d + pick(src, LOCATORS)
    if rare(src, 10):
        body = d + body  # empty parts
    if rare(src, 10):
        body += d
    head = s if not rare(src, 16) else pick(src, [(1, ""), (1, s + s), (1, e)])
    sep = d if not rare(src, 16) else pick(src, [(1, ""), (1, " "), (1, d + d)])
    stop = e if not rare(src, 12) else pick(src, [(2, ""), (1, s), (1, e + e)])
    return head + family + sep + body + stop


def build_piece(src: Source, config: Config, runs: bool = True) -> str:
    kind = pick(
        src,
        [
            (30, "marker"),
            (40, "char"),
            (16, "word"),
            (14, "citation"),
            (4 if runs else 0, "run"),
            (4, "any"),
        ],
    )
    if kind == "marker":
        if config.is_guide or not rare(src, 6):
            return pick(src, [(1, config.start), (1, config.delimiter), (1, config.stop)])  # type: ignore[no-any-return]
        return pick(src, [(1, START), (1, DELIM), (1, STOP)])  # type: ignore[no-any-return]
    if kind == "char":
        return pick(src, CHARS)  # type: ignore[no-any-return]
    if kind == "word":
        return pick(src, WORDS)  # type: ignore[no-any-return]
    if kind == "citation":
        return build_citation_text(src, config)
    if kind == "run":
        # Long runs move markers across any block boundary a vectorised scan may have.
        unit = build_piece(src, config, runs=False)
        return unit * src.int(1, max(1, MAX_RUN // len(unit))) if unit else ""
    return chr(src.int(0, pick(src, [(1, 0xFF), (1, 0xFFFF), (1, sys.maxunicode)])))


def build_text(src: Source, config: Config) -> str:
    # Most texts with the guide's markers are 2-byte strings; keep wider characters out of
    # some cases so that every string kind gets its share.
    markers = max(map(ord, (config.start, config.delimiter, config.stop)))
    limit = max(markers, pick(src, [(1, 0xFF), (5, 0xFFFF), (4, sys.maxunicode)]))
    pieces = (build_piece(src, config) for _ in range(src.int(0, MAX_PIECES)))
    text = "".join(piece for piece in pieces if max(map(ord, piece), default=0) <= limit)
    if text and rare(src, 64):
        # Now and then a text long enough for the kernel's GIL-free path.
        text = text * (LONG_TEXT // len(text) + 1)
    return text


def build_bound(src: Source, n: int) -> Any:
    kind = pick(
        src,
        [
            (40, "in"),
            (4, "edge"),
            (3, "big"),
            (1, "bool"),
            (1, "float"),
            (1, "intsub"),
            (1, "none"),
            (1, "str"),
        ],
    )
    if kind == "in":
        return src.int(0, n)
    if kind == "edge":
        return src.int(-3, n + 3)
    if kind == "big":
        value = BIG[src.int(0, len(BIG) - 1)]
        return -value if src.int(0, 1) else value
    if kind == "bool":
        return bool(src.int(0, 1))
    if kind == "float":
        return float(src.int(0, n))
    if kind == "intsub":
        return IntSub(src.int(0, n))
    if kind == "none":
        return None
    return str(src.int(0, n))


def build_item(src: Source, n: int) -> Any:
    kind = pick(src, [(30, "dict"), (2, "missing"), (2, "dictsub"), (1, "tuple"), (1, "none")])
    start, end = build_bound(src, n), build_bound(src, n)
    if kind == "dict":
        item: dict[str, Any] = {"start": start, "end": end}
        if src.int(0, 1):
            item = {"raw": "x", "family": "cite", **item, "locator": None}
        return item
    if kind == "missing":
        return {"start": start} if src.int(0, 1) else {"end": end}
    if kind == "dictsub":
        return DictSub(start=start, end=end)
    if kind == "tuple":
        return (start, end)
    return None


def build_citation_list(src: Source, text: str, real: list[Any]) -> Any:
    n = len(text)
    kind = pick(
        src,
        [
            (6, "real"),
            (4, "shuffled"),
            (3, "reversed"),
            (3, "subset"),
            (2, "doubled"),
            (6, "spans"),
            (4, "mixed"),
            (1, "empty"),
        ],
    )
    if kind == "real":
        items = copy.deepcopy(real)
    elif kind == "shuffled":
        items = shuffled(src, copy.deepcopy(real))
    elif kind == "reversed":
        items = copy.deepcopy(real)[::-1]
    elif kind == "subset":
        items = [c for c in copy.deepcopy(real) if src.int(0, 1)]
    elif kind == "doubled":
        items = copy.deepcopy(real)
        items += copy.deepcopy(items[: src.int(0, len(items))])
        items = sorted(items, key=lambda c: c["start"]) if src.int(0, 1) else items
    elif kind == "spans":
        # Plain sorted spans, with zero-width, touching and overlapping ones.
        cuts = sorted(src.int(0, n) for _ in range(2 * src.int(0, 5)))
        items = [{"start": a, "end": b} for a, b in zip(cuts[::2], cuts[1::2], strict=True)]
        if items and rare(src, 4):
            items.insert(src.int(0, len(items)), {"start": src.int(0, n), "end": src.int(0, n)})
    elif kind == "mixed":
        items = copy.deepcopy(real) + [build_item(src, n) for _ in range(src.int(0, 4))]
        items = shuffled(src, items) if src.int(0, 1) else items
    else:
        items = []
    return tuple(items) if rare(src, 8) else items


def build_case(src: Source, twin: ModuleType) -> Case:
    config = build_config(src)
    text = build_text(src, config)
    api_text = StrSub(text) if rare(src, 8) else text
    try:
        real = twin.extract(text, twin.Grammar(*config.args()))
    except Exception:
        real = []
    cut_text: Any = text
    kind = pick(src, [(40, "same"), (2, "strsub"), (1, "none"), (1, "bytes"), (1, "other")])
    if kind == "strsub":
        cut_text = StrSub(text)
    elif kind == "none":
        cut_text = None
    elif kind == "bytes":
        cut_text = text.encode("utf-8", "surrogatepass")
    elif kind == "other":
        cut_text = build_text(src, config)
    lists = [build_citation_list(src, text, real) for _ in range(src.int(1, 3))]
    return Case(config, text, api_text=api_text, cut_text=cut_text, citation_lists=lists)


# --- running a case -----------------------------------------------------------------
def canon(value: Any) -> Any:
    """A form of `value` that compares equal only when the values are the same, of the
    same exact types, with dict keys in the same order."""
    kind = type(value)
    if isinstance(value, (list, tuple)):
        return (kind.__name__, [canon(item) for item in value])
    if isinstance(value, dict):
        return (kind.__name__, [(canon(k), canon(v)) for k, v in value.items()])
    if value is None or isinstance(value, re.Pattern):
        return value
    return (kind.__name__, value)


def outcome(call: Callable[..., Any], *args: Any) -> tuple[Any, str]:
    """(("ok", canonical result) or ("raise", exception type name), a readable form)."""
    snapshot = canon(args)
    try:
        result = call(*args)
    except Exception as error:
        return ("raise", type(error).__name__), f"raised {type(error).__name__}: {error}"
    if canon(args) != snapshot:
        return ("mutated", canon(args)), f"returned {result!a} but mutated its arguments"
    return ("ok", canon(result)), f"returned {result!a}"


def differ(what: str, case: Case, got: str, want: str, args: Any = None) -> Mismatch:
    shown = "" if args is None else f"arguments: {args!a}\n"
    return Mismatch(
        f"{what}: kernel and twin differ\n  kernel {got}\n  twin   {want}\n"
        f"{shown}case:\n{case.describe()}"
    )


def compare(what: str, case: Case, kernel_call: Any, twin_call: Any, *args: Any) -> None:
    got, got_text = outcome(kernel_call, *copy.deepcopy(args))
    want, want_text = outcome(twin_call, *copy.deepcopy(args))
    if got != want:
        raise differ(what, case, got_text, want_text, args)


def check_consistent(name: str, scanner: ModuleType, grammar: Any, case: Case) -> None:
    """Each scanner against itself: `strip` is extract-then-cut in one step, and the
    valid `spans` are the citations of `extract`."""
    from citemark._core.dropin import DropIn

    text = case.text
    extracted = scanner.extract(text, grammar)
    one_step = scanner.strip(text, grammar)
    two_steps = DropIn(scanner).strip_citations(text, extracted)
    if canon(one_step) != canon(two_steps):
        raise Mismatch(
            f"{name}: strip(text) != strip_citations(text, extract(text))\n"
            f"  strip           returned {one_step!a}\n"
            f"  strip_citations returned {two_steps!a}\n"
            f"case:\n{case.describe()}"
        )
    valid = [(start, end) for start, end, valid in scanner.spans(text, grammar) if valid]
    if valid != [(c["start"], c["end"]) for c in extracted]:
        raise Mismatch(
            f"{name}: the valid spans are not the citations of extract\n"
            f"  spans   {valid!a}\n  extract {extracted!a}\ncase:\n{case.describe()}"
        )


def check(case: Case, kernel: ModuleType, twin: ModuleType) -> None:
    """Raise `Mismatch` when `kernel` and `twin` can be told apart on `case`; any other
    exception escaping the comparison is reported as a `Mismatch` too, with the case."""
    try:
        _check(case, kernel, twin)
    except Mismatch:
        raise
    except Exception as error:
        raise Mismatch(
            f"unexpected {type(error).__name__}: {error}\ncase:\n{case.describe()}"
        ) from error


def with_grammar(call: Callable[[str, Any], Any], grammar: Any) -> Callable[[str], Any]:
    return lambda text: call(text, grammar)


def _check(case: Case, kernel: ModuleType, twin: ModuleType) -> None:
    from citemark._core.dropin import DropIn

    args = case.config.args()
    got, got_text = outcome(kernel.Grammar, *args)
    want, want_text = outcome(twin.Grammar, *args)
    if got[0] != want[0] or (got[0] == "raise" and got != want):
        raise differ("Grammar(*grammar_args)", case, got_text, want_text)
    if got[0] == "raise":
        return  # both refuse this grammar alike
    k_grammar, t_grammar = kernel.Grammar(*args), twin.Grammar(*args)

    text = case.text
    for name in ("extract", "strip", "spans"):
        compare(
            f"{name}(text, grammar)",
            case,
            with_grammar(getattr(kernel, name), k_grammar),
            with_grammar(getattr(twin, name), t_grammar),
            text,
        )
    for units in (0, 1, 2):
        compare(
            f"records(text, grammar, Record, {units})",
            case,
            lambda t, u: kernel.records(t, k_grammar, Record, u),
            lambda t, u: twin.records(t, t_grammar, Record, u),
            text,
            units,
        )
        compare(
            f"spans_records(text, grammar, Record, {units})",
            case,
            lambda t, u: kernel.spans_records(t, k_grammar, Record, u),
            lambda t, u: twin.spans_records(t, t_grammar, Record, u),
            text,
            units,
        )
    check_consistent("twin", twin, t_grammar, case)
    if kernel is not twin:
        check_consistent("kernel", kernel, k_grammar, case)

    kernel_api, twin_api = DropIn(kernel), DropIn(twin)
    for citations in case.citation_lists:
        compare("cut(cut_text, citations)", case, kernel.cut, twin.cut, case.cut_text, citations)
        compare(
            "DropIn.strip_citations(cut_text, citations)",
            case,
            kernel_api.strip_citations,
            twin_api.strip_citations,
            case.cut_text,
            citations,
        )
    if case.config.is_guide:
        families = case.config.families
        compare(
            "DropIn.extract_citations(api_text, families=families)",
            case,
            lambda t: kernel_api.extract_citations(t, families=families),
            lambda t: twin_api.extract_citations(t, families=families),
            case.api_text,
        )
        compare(
            "DropIn.strip_many([api_text], families=families)",
            case,
            lambda t: kernel_api.strip_many([t], families=families),
            lambda t: twin_api.strip_many([t], families=families),
            case.api_text,
        )


# --- loading the scanners -----------------------------------------------------------
class KernelMissing(RuntimeError):
    pass


def load_scanners(against: str) -> tuple[ModuleType, ModuleType]:
    """(subject, twin).  The subject is the compiled kernel, or with `against="python"`
    the twin itself (a smoke test of the harness).  A kernel that does not import is an
    error, never a skip."""
    twin = importlib.import_module("citemark._kernels.scan_py")
    if against == "python":
        return twin, twin
    if against != "cython":
        raise ValueError(f"--against must be 'cython' or 'python', not {against!r}")
    try:
        kernel = importlib.import_module("citemark._kernels.scan_c")
    except ImportError as error:
        raise KernelMissing(
            f"cannot import the compiled kernel citemark._kernels.scan_c: {error}\n"
            "Build and install it first (see fuzz/README.md), or pass --against python "
            "to smoke-test the harness on the twin alone."
        ) from error
    origin = getattr(kernel, "__file__", "") or ""
    if not origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
        raise KernelMissing(f"citemark._kernels.scan_c is not a compiled extension: {origin!r}")
    return kernel, twin


def banner(subject: ModuleType, twin: ModuleType) -> str:
    if subject is twin:
        return f"smoke test: twin against itself ({twin.__file__})"
    return f"kernel {subject.__file__}\n  against twin {twin.__file__}"
