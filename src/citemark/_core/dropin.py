"""The guide's helper, as a drop-in: same names, signatures and results, linear time.

`DropIn` binds the shared logic to one scanner (the kernel or the twin), so the tests can
run the very same code over both; the package exports the methods of the instance bound
to the scanner that `_kernels.loader` chose.
"""

from __future__ import annotations

import sys
import sysconfig
from collections.abc import Iterable
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Final

from .grammar import (
    CITATION_DELIMITER,
    CITATION_START,
    CITATION_STOP,
    DEFAULT_FAMILIES,
    Citation,
    check_families,
    check_text,
)

if TYPE_CHECKING:
    from .protocols import Scanner

_by_start = itemgetter("start")
# Instances made before the split template is taken: CPython gives a class's shared keys 30
# spare slots and takes one away at each new instance, down to one.
_SPLIT_INSTANCES = 32


def _citation_template() -> dict[str, None]:
    """A dict of `Citation`'s keys, in order, all None, whose copies are the smallest dicts
    of those keys this interpreter makes: both scanners build each citation as a copy.

    A copy of a split-table dict (an instance's `__dict__`) shares the keys of the class's
    instances and owns only its values, less than half the memory of a copy of a dict built
    key by key (docs/performance.md has the figures).  A copy is a plain `dict` either way;
    an interpreter that shares no keys, or that cannot tell the sizes, gets the plain one.
    So does a free-threaded build: there every copy takes a reference on the shared key
    table with an atomic add, and threads making citations contend on that one counter.
    """
    keys = tuple(Citation.__annotations__)
    plain = dict.fromkeys(keys)
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        return plain
    holder = type("CitationKeys", (), {"__module__": __name__})
    made = holder()
    for _ in range(_SPLIT_INSTANCES):
        made = holder()
        for key in keys:
            setattr(made, key, None)
    split = made.__dict__
    if type(split) is not dict or list(split.items()) != list(plain.items()):
        return plain
    try:
        smaller = sys.getsizeof(split.copy()) < sys.getsizeof(plain.copy())
    except TypeError:  # no sizes (PyPy)
        return plain
    return split if smaller else plain


# Never changed: each scanner copies it (read only, so shared between threads).
CITATION_TEMPLATE: Final = _citation_template()
# Grammars for families other than the default, built once each (bounded: a caller that
# passes ever-new families only costs a rebuild).
_CACHE_SIZE = 256


class DropIn:
    def __init__(self, scanner: Scanner) -> None:
        self.scanner = scanner
        self._grammars: dict[tuple[str, ...], Any] = {}
        self.default_grammar = self.grammar(DEFAULT_FAMILIES)
        # The scanner's entry point as an attribute of its own: one lookup a call, not two.
        self._extract = scanner.extract

    def grammar(self, families: tuple[str, ...]) -> Any:
        """The scanner's Grammar for these (checked) families and the guide's markers."""
        found = self._grammars.get(families)
        if found is None:
            if len(self._grammars) >= _CACHE_SIZE:
                self._grammars.clear()
            found = self.scanner.Grammar(
                families, CITATION_START, CITATION_DELIMITER, CITATION_STOP
            )
            self._grammars[families] = found
        return found

    def extract_citations(
        self, text: str, *, families: Iterable[str] = DEFAULT_FAMILIES
    ) -> list[Citation]:
        """The valid citation markers of `text`, in order, as `Citation` dicts."""
        if families is DEFAULT_FAMILIES:
            if type(text) is not str:
                text = check_text(text)
            # The grammar goes straight into the call: every reference taken on a shared
            # object is an atomic operation without the GIL (see benches/bench_freethreaded).
            return self._extract(text, self.default_grammar)
        if not families:
            return []
        grammar = self.grammar(check_families(families))
        if type(text) is not str:
            text = check_text(text)
        return self._extract(text, grammar)

    def strip_citations(self, text: str, citations: Iterable[Citation]) -> str:
        """`text` without the spans of `citations` (as returned by `extract_citations`).

        Plain input (sorted, disjoint, in range) is cut in one pass.  Anything else gets
        exactly what the helper's sequence of slices gives, errors included.
        """
        cut = self.scanner.cut
        clean: str | None = cut(text, citations)  # a plain list or tuple: one pass
        if clean is not None:
            return clean
        items = citations if type(citations) in (list, tuple) else list(citations)
        if not items:
            return text
        # The helper's order: by start, last first, ties in their given order.
        ordered = sorted(items, key=_by_start, reverse=True)
        clean = cut(text, ordered[::-1])
        if clean is not None:
            return clean
        for citation in ordered:
            text = text[: citation["start"]] + text[citation["end"] :]
        return text

    def extract_many(
        self, texts: Iterable[str], *, families: Iterable[str] = DEFAULT_FAMILIES
    ) -> list[list[Citation]]:
        """`[extract_citations(t, families=families) for t in texts]`, families checked once."""
        if not families:
            return [[] for _ in texts]
        grammar = self.grammar(check_families(families))
        extract = self.scanner.extract
        return [extract(check_text(text), grammar) for text in texts]

    def strip_many(
        self, texts: Iterable[str], *, families: Iterable[str] = DEFAULT_FAMILIES
    ) -> list[str]:
        """Each text without its citations: `strip_citations(t, extract_citations(t))`,
        without building the citation dicts."""
        if not families:
            return list(texts)
        grammar = self.grammar(check_families(families))
        strip = self.scanner.strip
        cleaned = []
        for text in texts:
            plain = check_text(text)
            clean = strip(plain, grammar)
            # Nothing stripped: the helper hands back the very object it was given.
            cleaned.append(text if clean is plain else clean)
        return cleaned
