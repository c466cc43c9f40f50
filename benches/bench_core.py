"""Core benchmarks: the regex baseline (the guide's helper), the pure-Python twin and the
compiled kernel side by side, one pytest-benchmark group per workload and operation.

Operations:
  extract  ``extract_citations(text)``
  strip    ``strip_citations(text, citations)``, given the extracted list (the same list
           for the three); only on workloads that hold citations
  clean    ``strip_citations(t, extract_citations(t))`` for each text (answers only)
And the batch API (workload ``answers_2000_batch``): ``extract_many`` / ``strip_many``
against the baseline's loop over the same 2,000 answers.

Every timed call's result is checked against the baseline's, so the rows compare the same
work.  The baseline is quadratic on unterminated STARTs, so on those it runs only on
20 KB (workload ``unterminated_20KB``); the 1 MB group has the twin and the kernel only.

Run: ``pytest benches/bench_core.py --benchmark-json=benches/results.json -q``
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable
from typing import Any

import pytest

import baseline
from _common import MB, kind, timed
from corpus import STOP, WORKLOADS, answers_2000, text_of

IMPLS = ("baseline", "twin", "kernel")
LINEAR_ONLY = {"unterminated_1MB"}  # the baseline would take minutes here


@functools.cache
def expected(workload: str) -> tuple[list[dict[str, Any]], str]:
    """The baseline's citations and the stripped text (cut linearly from its spans)."""
    text = text_of(workload)
    if workload in LINEAR_ONLY:
        assert STOP not in text
        return [], text
    citations = baseline.extract_citations(text)
    kept, position = [], 0
    for citation in citations:
        kept.append(text[position : citation["start"]])
        position = citation["end"]
    kept.append(text[position:])
    return citations, "".join(kept)


def describe(benchmark: Any, workload: str, op: str, impl: str, texts: list[str] | str) -> None:
    batch = [texts] if isinstance(texts, str) else texts
    chars = sum(map(len, batch))
    benchmark.group = f"{workload} {op}"
    benchmark.extra_info.update(
        workload=workload,
        op=op,
        impl=impl,
        chars=chars,
        bytes=sum(len(t) * kind(t) for t in batch),
        kind=kind(batch[0]) if len(batch) == 1 else "mixed",
        texts=len(batch),
    )


def _cases() -> list[Any]:
    return [
        pytest.param(workload, impl, id=f"{workload}-{impl}")
        for workload in WORKLOADS
        for impl in IMPLS
        if not (impl == "baseline" and workload in LINEAR_ONLY)
    ]


# ---------------------------------------------------------------- one text per workload


@pytest.mark.parametrize(("workload", "impl"), _cases())
def test_extract(benchmark: Any, use: Any, workload: str, impl: str) -> None:
    implementation = use(impl)
    text = text_of(workload)
    citations, _ = expected(workload)
    describe(benchmark, workload, "extract", impl, text)
    assert timed(benchmark, implementation.extract_citations, text) == citations


STRIP_WORKLOADS = [w for w in WORKLOADS if not w.startswith(("plain_", "unterminated_"))]


@pytest.mark.parametrize(
    ("workload", "impl"),
    [pytest.param(w, i, id=f"{w}-{i}") for w in STRIP_WORKLOADS for i in IMPLS],
)
def test_strip(benchmark: Any, use: Any, workload: str, impl: str) -> None:
    implementation = use(impl)
    text = text_of(workload)
    citations, stripped = expected(workload)
    assert citations, "strip is benchmarked on workloads that hold citations"
    describe(benchmark, workload, "strip", impl, text)
    assert timed(benchmark, implementation.strip_citations, text, citations) == stripped


# ---------------------------------------------------------------- 2,000 answers


@functools.cache
def expected_answers() -> tuple[list[list[dict[str, Any]]], list[str]]:
    texts = answers_2000()
    found = [expected_of(text) for text in texts]
    return [f[0] for f in found], [f[1] for f in found]


def expected_of(text: str) -> tuple[list[dict[str, Any]], str]:
    citations = baseline.extract_citations(text)
    return citations, baseline.strip_citations(text, citations)


@pytest.mark.parametrize("impl", IMPLS)
def test_answers_extract(benchmark: Any, use: Any, impl: str) -> None:
    extract = use(impl).extract_citations
    texts = answers_2000()

    def run() -> list[Any]:
        return [extract(text) for text in texts]

    describe(benchmark, "answers_2000", "extract", impl, list(texts))
    assert timed(benchmark, run) == expected_answers()[0]


@pytest.mark.parametrize("impl", IMPLS)
def test_answers_strip(benchmark: Any, use: Any, impl: str) -> None:
    strip = use(impl).strip_citations
    texts = answers_2000()
    citations, stripped = expected_answers()
    pairs = list(zip(texts, citations, strict=True))

    def run() -> list[str]:
        return [strip(text, found) for text, found in pairs]

    describe(benchmark, "answers_2000", "strip", impl, list(texts))
    assert timed(benchmark, run) == stripped


@pytest.mark.parametrize("impl", IMPLS)
def test_answers_clean(benchmark: Any, use: Any, impl: str) -> None:
    implementation = use(impl)
    extract, strip = implementation.extract_citations, implementation.strip_citations
    texts = answers_2000()

    def run() -> list[str]:
        return [strip(text, extract(text)) for text in texts]

    describe(benchmark, "answers_2000", "clean", impl, list(texts))
    assert timed(benchmark, run) == expected_answers()[1]


@pytest.mark.parametrize("impl", IMPLS)
def test_answers_extract_many(benchmark: Any, use: Any, impl: str) -> None:
    """The baseline row is its loop (what a helper user writes); the others extract_many."""
    texts = answers_2000()
    describe(benchmark, "answers_2000_batch", "extract", impl, list(texts))
    assert timed(benchmark, use(impl).extract_many, texts) == expected_answers()[0]


@pytest.mark.parametrize("impl", IMPLS)
def test_answers_strip_many(benchmark: Any, use: Any, impl: str) -> None:
    """strip_many is extract + strip per text; the baseline row does exactly that."""
    texts = answers_2000()
    describe(benchmark, "answers_2000_batch", "clean", impl, list(texts))
    assert timed(benchmark, use(impl).strip_many, texts) == expected_answers()[1]


# ---------------------------------------------------------------- memchr reference


def _libc_memchr() -> Callable[..., Any] | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else ctypes.CDLL(None)
        memchr = libc.memchr
    except (OSError, AttributeError):
        return None
    memchr.restype = ctypes.c_void_p
    memchr.argtypes = (ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t)
    return memchr  # type: ignore[no-any-return]


def test_memchr_reference(benchmark: Any) -> None:
    """libc memchr over as many bytes as the 2-byte-kind 1 MB text occupies (2 MB),
    looking for a byte that is not there: the floor for a scan of that text."""
    memchr = _libc_memchr()
    if memchr is None:
        pytest.skip("libc memchr not reachable through ctypes")
    text = text_of("plain_ucs2_1MB")
    size = len(text) * kind(text)
    assert size == 2 * MB
    buffer = ctypes.create_string_buffer(b"a" * size, size)
    benchmark.group = "memchr_2MB reference"
    benchmark.extra_info.update(
        workload="memchr_2MB", op="memchr", impl="memchr", chars=len(text), bytes=size, kind=2
    )
    assert timed(benchmark, memchr, buffer, 0x01, size) is None
