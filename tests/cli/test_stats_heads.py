"""`stats` counts other families with one search per text (`_stats._any_families`): it must
read what the `any_family` head rule (`_grammar.heads_at`) reads at every START."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from citemark._cli.stats import _any_families
from citemark._core.grammar import CITATION_DELIMITER, CITATION_START, heads_at

PIECES = [CITATION_START, CITATION_DELIMITER, "\ue201", "cite", "a", "_", "9", "-", " ", "\u0663"]


def by_heads_at(text: str) -> list[str]:
    names = []
    at = text.find(CITATION_START)
    while at >= 0:
        names += [name for name, _ in heads_at(text, at + 1, (), CITATION_DELIMITER, True)]
        at = text.find(CITATION_START, at + 1)
    return names


@given(st.lists(st.sampled_from(PIECES), max_size=16).map("".join))
def test_any_families_is_the_head_rule_at_every_start(text: str) -> None:
    assert _any_families(text) == by_heads_at(text)
