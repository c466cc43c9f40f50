"""Parser.finditer and StreamParser against the regex baseline and the batch call.

- finditer on 1 MB dense text (30% of characters in markers): the lightweight records
  against the guide's helper building its dicts (issue: at least 10x).
- 1 MB of answers fed to a StreamParser in 16-character chunks, against one batch call
  of the same Parser (the price of streaming).
"""

from __future__ import annotations

from typing import Any

import pytest

from _common import ensure_citemark_importable

ensure_citemark_importable()

import baseline  # noqa: E402
from citemark import Parser  # noqa: E402
from citemark.stream import StreamParser  # noqa: E402
from corpus import dense, typical_answer  # noqa: E402

IMPLEMENTATIONS = {"kernel": "cython", "twin": "python"}
CHUNK = 16


def stream_answer() -> str:
    return (typical_answer() * 260)[:1_000_000]


def feed_all(parser: Parser, text: str) -> tuple[str, list[Any]]:
    stream = StreamParser(parser)
    pieces, citations = [], []
    for at in range(0, len(text), CHUNK):
        update = stream.feed(text[at : at + CHUNK])
        pieces.append(update.text)
        citations += update.citations
    update = stream.close()
    return "".join(pieces) + update.text, citations + update.citations


def test_finditer_dense_baseline(benchmark: Any) -> None:
    benchmark.group = "finditer dense_1MB"
    text = dense()
    found = benchmark.pedantic(baseline.extract_citations, (text,), rounds=5, iterations=1)
    assert found


@pytest.mark.parametrize("impl", sorted(IMPLEMENTATIONS))
def test_finditer_dense(benchmark: Any, impl: str) -> None:
    benchmark.group = "finditer dense_1MB"
    parser = Parser(implementation=IMPLEMENTATIONS[impl])  # type: ignore[arg-type]
    text = dense()
    found = benchmark(lambda: list(parser.finditer(text)))
    assert [(c.start, c.end) for c in found] == [
        (c["start"], c["end"]) for c in baseline.extract_citations(text)
    ]


@pytest.mark.parametrize("impl", sorted(IMPLEMENTATIONS))
def test_stream_batch(benchmark: Any, impl: str) -> None:
    benchmark.group = "stream 1MB"
    parser = Parser(implementation=IMPLEMENTATIONS[impl])  # type: ignore[arg-type]
    text = stream_answer()
    benchmark(lambda: (parser.strip(text), list(parser.finditer(text))))


@pytest.mark.parametrize("impl", sorted(IMPLEMENTATIONS))
def test_stream_16_char_chunks(benchmark: Any, impl: str) -> None:
    benchmark.group = "stream 1MB"
    parser = Parser(implementation=IMPLEMENTATIONS[impl])  # type: ignore[arg-type]
    text = stream_answer()
    result = benchmark.pedantic(feed_all, (parser, text), rounds=5, iterations=1)
    batch = StreamParser(parser).parser
    assert result == (batch.strip(text), list(batch.finditer(text)))
