"""The guide's helper, as a drop-in: same names, signatures and results, linear time.

`DropIn` binds the shared logic to one scanner (the kernel or the twin), so the tests can
run the very same code over both; the package exports the methods of the instance bound
to the scanner that `_select` chose.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import itemgetter
from types import ModuleType
from typing import Any

from ._grammar import DEFAULT_FAMILIES, Citation, check_families, check_text

_by_start = itemgetter("start")


class DropIn:
    def __init__(self, scanner: ModuleType) -> None:
        self.scanner = scanner

    def extract_citations(
        self, text: str, *, families: Iterable[str] = DEFAULT_FAMILIES
    ) -> list[Citation]:
        """The valid citation markers of `text`, in order, as `Citation` dicts."""
        if not families:
            return []
        checked = check_families(families)
        check_text(text)
        return self.scanner.extract(text, checked)  # type: ignore[no-any-return]

    def strip_citations(self, text: str, citations: Iterable[Citation]) -> str:
        """`text` without the spans of `citations` (as returned by `extract_citations`).

        Plain input (sorted, disjoint, in range) is cut in one pass.  Anything else gets
        exactly what the helper's sequence of slices gives, errors included.
        """
        items = citations if type(citations) in (list, tuple) else list(citations)
        if not items:
            return text
        cut = self.scanner.cut
        clean: str | None = cut(text, items)
        if clean is not None:
            return clean
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
        checked = check_families(families)
        extract = self.scanner.extract
        return [extract(_checked(text), checked) for text in texts]

    def strip_many(
        self, texts: Iterable[str], *, families: Iterable[str] = DEFAULT_FAMILIES
    ) -> list[str]:
        """Each text without its citations: `strip_citations(t, extract_citations(t))`,
        without building the citation dicts."""
        if not families:
            return list(texts)
        checked = check_families(families)
        strip = self.scanner.strip
        return [strip(_checked(text), checked) for text in texts]


def _checked(text: Any) -> str:
    check_text(text)
    return text  # type: ignore[no-any-return]
