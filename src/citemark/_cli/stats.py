"""`citemark stats`: counts over many rows, mergeable across chunks and processes.

Per row: its valid citations (`extract_citations` with the chosen families) and its markers,
where a *marker* of a family is an occurrence of START family DELIM.  A marker that is not
part of a valid citation is *malformed*: unterminated, nested, a body that is not ids and a
locator, ... (`malformed = markers - citations`, per family).  Markers of families that were
not asked for are counted by name (read by the `any_family` rule: ASCII letters, digits and
`_`), not parsed.  Source ids `turn<N><kind><M>` are counted by kind (search, file, news, view,
...); other ids count as "other".
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .. import extract_many
from .._core.grammar import CITATION_DELIMITER, CITATION_START, FAMILY_WORD, TURN_ID_RE

HISTOGRAM = ((0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 9), (10, 19), (20, None))


@dataclass
class Stats:
    rows: int = 0
    null_rows: int = 0
    rows_with_citations: int = 0
    citations: int = 0
    max_per_row: int = 0
    per_row: Counter[int] = field(default_factory=Counter)
    citations_by_family: Counter[str] = field(default_factory=Counter)
    markers_by_family: Counter[str] = field(default_factory=Counter)
    other_families: Counter[str] = field(default_factory=Counter)
    id_kinds: Counter[str] = field(default_factory=Counter)
    skipped: int = 0
    blank_lines: int = 0

    def add_texts(self, texts: Iterable[str | None], families: tuple[str, ...]) -> None:
        present = []
        for text in texts:
            self.rows += 1
            if text is None:
                self.null_rows += 1
            else:
                present.append(text)
        asked = set(families)
        heads = [(family, CITATION_START + family + CITATION_DELIMITER) for family in asked]
        kinds: dict[str, str] = {}  # id -> its kind: ids repeat, the match is made once
        for text, citations in zip(present, extract_many(present, families=families), strict=True):
            count = len(citations)
            self.per_row[count] += 1
            if count:
                self.rows_with_citations += 1
                self.citations += count
                self.max_per_row = max(self.max_per_row, count)
                for citation in citations:
                    self.citations_by_family[citation["family"]] += 1
                    for source in citation["source_ids"]:
                        kind = kinds.get(source)
                        if kind is None:
                            turn = TURN_ID_RE.fullmatch(source)
                            kind = kinds[source] = turn.group(1) if turn else "other"
                        self.id_kinds[kind] += 1
            if CITATION_START in text:
                for family, head in heads:
                    self.markers_by_family[family] += text.count(head)
                for name in _any_families(text):
                    if name not in asked:
                        self.other_families[name] += 1

    def merge(self, other: Stats) -> None:
        self.rows += other.rows
        self.null_rows += other.null_rows
        self.rows_with_citations += other.rows_with_citations
        self.citations += other.citations
        self.max_per_row = max(self.max_per_row, other.max_per_row)
        self.skipped += other.skipped
        self.blank_lines += other.blank_lines
        self.per_row.update(other.per_row)
        for mine, theirs in (
            (self.citations_by_family, other.citations_by_family),
            (self.markers_by_family, other.markers_by_family),
            (self.other_families, other.other_families),
            (self.id_kinds, other.id_kinds),
        ):
            mine.update(theirs)

    def malformed(self, family: str) -> int:
        return max(0, self.markers_by_family[family] - self.citations_by_family[family])

    def as_json(self, families: tuple[str, ...]) -> dict[str, Any]:
        texts = self.rows - self.null_rows
        return {
            "rows": self.rows,
            "null_rows": self.null_rows,
            "skipped_rows": self.skipped,
            "blank_lines": self.blank_lines,
            "rows_with_citations": self.rows_with_citations,
            "citations": self.citations,
            "malformed_markers": sum(self.malformed(family) for family in _unique(families)),
            "citations_per_row": {
                "mean": round(self.citations / texts, 4) if texts else 0.0,
                "max": self.max_per_row,
                "histogram": {str(n): self.per_row[n] for n in sorted(self.per_row)},
            },
            "families": {
                family: {
                    "markers": self.markers_by_family[family],
                    "citations": self.citations_by_family[family],
                    "malformed": self.malformed(family),
                }
                for family in _unique(families)
            },
            "other_families": dict(self.other_families.most_common()),
            "id_kinds": dict(self.id_kinds.most_common()),
        }

    def as_table(self, families: tuple[str, ...]) -> str:
        data = self.as_json(families)
        texts = self.rows - self.null_rows
        lines = []

        def row(label: str, value: Any, note: str = "") -> None:
            shown = f"{value:,}" if isinstance(value, int) else str(value)
            lines.append(f"{label:<28}{shown:>14}{('  ' + note) if note else ''}")

        share = ""
        if texts:
            share = f"({100 * self.rows_with_citations / texts:.1f}% of rows with text)"
        row("rows", self.rows)
        if self.null_rows:
            row("rows with no text (null)", self.null_rows)
        if self.skipped:
            row("rows skipped (bad input)", self.skipped)
        if self.blank_lines:
            row("blank lines (not rows)", self.blank_lines)
        row("rows with citations", self.rows_with_citations, share)
        row("citations", self.citations)
        row("malformed markers", data["malformed_markers"], "(markers that are not citations)")
        per_row = data["citations_per_row"]
        row("citations per row", f"{per_row['mean']:.2f}", f"mean; max {per_row['max']:,}")
        lines.append("")
        lines.append("citations per row      rows")
        for low, high in HISTOGRAM:
            count = sum(
                n for k, n in self.per_row.items() if k >= low and (high is None or k <= high)
            )
            label = str(low) if low == high else (f"{low}+" if high is None else f"{low}-{high}")
            lines.append(f"  {label:<12}{count:>14,}")
        lines.append("")
        lines.append(f"{'family':<16}{'markers':>12}{'citations':>12}{'malformed':>12}")
        for family, counts in data["families"].items():
            name = repr(family) if not family.isidentifier() else family
            lines.append(
                f"  {name:<14}{counts['markers']:>12,}{counts['citations']:>12,}"
                f"{counts['malformed']:>12,}"
            )
        if self.other_families:
            lines.append("")
            lines.append(f"{'other families':<16}{'markers':>12}   (not parsed; see --family)")
            for name, count in self.other_families.most_common():
                lines.append(f"  {name:<14}{count:>12,}")
        lines.append("")
        lines.append(f"{'id kind':<16}{'ids':>12}")
        for kind, count in self.id_kinds.most_common():
            lines.append(f"  {kind:<14}{count:>12,}")
        if not self.id_kinds:
            lines.append(f"  {'(none)':<14}{0:>12}")
        return "\n".join(lines) + "\n"


# The `any_family` head rule (`_core.grammar.heads_at`: the longest FAMILY_WORD after a START,
# then a DELIM) at every START, in one search: a family word never holds a START, so the
# heads do not overlap.
_ANY_HEAD = re.compile(
    re.escape(CITATION_START) + f"({FAMILY_WORD})" + re.escape(CITATION_DELIMITER)
)


def _any_families(text: str) -> list[str]:
    """The family of every START that the `any_family` head rule reads as a marker."""
    return _ANY_HEAD.findall(text)


def _unique(families: tuple[str, ...]) -> list[str]:
    return list(dict.fromkeys(families))
