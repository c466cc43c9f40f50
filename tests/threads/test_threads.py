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
def test_threads_sharing_one_stream_never_tear_it(implementation: str) -> None:
    """A stream is one writer's.  Threads that share one by mistake get each call run whole
    or refused (STREAM_BUSY, as a generator refuses to run while it runs), never a torn
    stream: every delta is the same and closes the marker the one before it opened, so the
    deltas that went in, in any order, give the text of that many."""
    from citemark._core.grammar import STREAM_BUSY
    from citemark.display import CleanStream, clean
    from citemark.parser import Parser
    from citemark.stream import StreamParser

    head = "Start " + S + "cite" + D + "turn0"
    delta = "search1" + E + " word,\n" + S + "cite" + D + "turn0"
    count = 200
    for make, expect in (
        (lambda: CleanStream(implementation=implementation), clean),  # type: ignore[arg-type]
        (lambda: StreamParser(Parser(implementation=implementation)), Parser().strip),
    ):
        stream = make()
        out: list[Any] = [stream.feed(head)]
        taken: list[int] = []
        errors: list[str] = []
        barrier = threading.Barrier(4)

        def feed_all(
            stream: Any = stream,
            out: list[Any] = out,
            taken: list[int] = taken,
            errors: list[str] = errors,
            barrier: threading.Barrier = barrier,
        ) -> None:
            barrier.wait()
            for _ in range(count):
                try:
                    out.append(stream.feed(delta))  # list.append is atomic
                    taken.append(1)
                except ValueError as error:
                    if str(error) != STREAM_BUSY:
                        errors.append(repr(error))

        threads = [threading.Thread(target=feed_all) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        out.append(stream.close())
        assert errors == []
        text = "".join(piece if isinstance(piece, str) else piece.text for piece in out)
        expected = expect(head + delta * len(taken))
        assert len(text) == len(expected)  # the releases' order is the threads'
        assert sorted(text) == sorted(expected)


@pytest.mark.parametrize("mapped", [False, True])
def test_a_stream_fed_held_and_closed_at_once_stays_whole(
    implementation: str, mapped: bool
) -> None:
    """One thread feeds lines that take the slow path (backticks, markers), one reads `held`,
    one closes: each call runs whole or is refused; without the GIL a shared stream's lists
    were freed under a waiting append, and two Markdown scans ran at once (crashes)."""
    from citemark._core.grammar import STREAM_BUSY
    from citemark.display import CleanStream
    from citemark.parser import Parser
    from citemark.stream import StreamParser

    allowed = {STREAM_BUSY, "feed() after close()"}
    line = "a `code " + S + "cite" + D + "turn0search1" + E + "` b " + S + "cite" + D
    for round_ in range(30):
        streams: list[Any] = [
            CleanStream(mapped=mapped, implementation=implementation),  # type: ignore[arg-type]
            StreamParser(Parser(implementation=implementation, skip_code=round_ % 2 == 0)),
        ]
        for stream in streams:
            errors: list[str] = []
            barrier = threading.Barrier(3)

            def run(
                call: Any,
                times: int,
                errors: list[str] = errors,
                barrier: threading.Barrier = barrier,
            ) -> None:
                barrier.wait()
                for _ in range(times):
                    try:
                        call()
                    except ValueError as error:
                        if str(error) not in allowed:
                            errors.append(repr(error))

            calls = [
                (lambda stream=stream: stream.feed(line + "turn0search2" + E + "\n"), 40),
                (lambda stream=stream: stream.held, 40),
                (lambda stream=stream: stream.close(), 1),
            ]
            threads = [threading.Thread(target=run, args=call) for call in calls]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert errors == []
