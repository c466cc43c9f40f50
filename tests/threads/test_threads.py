"""Eight threads share the same inputs and the same scanner; every result must still be
exactly the precomputed one (the kernel may release the GIL while it scans)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import oracle
from oracle import DELIM as D
from oracle import START as S
from oracle import STOP as E

THREADS = 8
ROUNDS = 10


def make_inputs() -> list[str]:
    texts = []
    for i in range(40):
        marker = (
            S + "cite" + D + f"turn{i}search{i % 5}" + (D + f"L{i}-L{i + 2}" if i % 2 else "") + E
        )
        prose = "é中\U0001f600 "[i % 4] * (i * 37 % 300)
        texts.append((prose + marker) * (1 + i % 6) + S + "cite" + D + "open" * (i % 3))
    return texts


# The oracle is quadratic on unclosed STARTs: the long one's results are known instead.
UNCLOSED = (S + "cite" + D + "x ") * 20_000
INPUTS = [*make_inputs(), UNCLOSED]
EXTRACTED = [*(oracle.extract_citations(t) for t in INPUTS[:-1]), []]
STRIPPED = [oracle.strip_citations(t, c) for t, c in zip(INPUTS, EXTRACTED, strict=True)]


def worker(api: Any, seed: int, barrier: threading.Barrier, failures: list[str]) -> None:
    try:
        barrier.wait()
        for round_ in range(ROUNDS):
            order = range(len(INPUTS)) if (seed + round_) % 2 else reversed(range(len(INPUTS)))
            for i in order:
                text = INPUTS[i]
                citations = api.extract_citations(text)
                if citations != EXTRACTED[i]:
                    failures.append(f"extract {i}")
                if api.strip_citations(text, citations) != STRIPPED[i]:
                    failures.append(f"strip {i}")
            if api.strip_many(INPUTS) != STRIPPED:
                failures.append("strip_many")
    except Exception as error:
        failures.append(repr(error))


@pytest.mark.slow  # thread stress
def test_threads_share_inputs_and_get_exact_results(api) -> None:
    failures: list[str] = []
    barrier = threading.Barrier(THREADS)
    threads = [
        threading.Thread(target=worker, args=(api, seed, barrier, failures))
        for seed in range(THREADS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


@pytest.mark.slow  # thread stress
def test_threads_feeding_one_stream_keep_it_whole(implementation: str) -> None:
    """A stream is one writer's, but threads that share one by mistake must not break it: each
    feed runs whole (a critical section without the GIL).  Every thread feeds the same delta,
    which closes the marker the one before it opened, so any order gives the same text."""
    from citemark.display import CleanStream, clean
    from citemark.parser import Parser
    from citemark.stream import StreamParser

    head = "Start " + S + "cite" + D + "turn0"
    delta = "search1" + E + " word,\n" + S + "cite" + D + "turn0"
    count = 200
    whole = head + delta * (4 * count)
    for stream, expected in (
        (CleanStream(implementation=implementation), clean(whole)),  # type: ignore[arg-type]
        (StreamParser(Parser(implementation=implementation)), Parser().strip(whole)),
    ):
        out: list[Any] = [stream.feed(head)]
        barrier = threading.Barrier(4)

        def feed_all(
            stream: Any = stream, out: list[Any] = out, barrier: threading.Barrier = barrier
        ) -> None:
            barrier.wait()
            for _ in range(count):
                out.append(stream.feed(delta))  # list.append is atomic

        threads = [threading.Thread(target=feed_all) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        out.append(stream.close())
        text = "".join(piece if isinstance(piece, str) else piece.text for piece in out)
        assert len(text) == len(expected)  # the releases' order is the threads'
        assert sorted(text) == sorted(expected)
