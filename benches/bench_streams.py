"""The streams against the whole-text calls: `CleanStream` over `clean(whole)`, `StreamParser`
over `Parser().strip(whole)` with `Parser().finditer(whole)`, on typical 4 KB answers
(`corpus.typical_answer`) cut into deltas of 4, 16 and 64 characters.

Targets (issue 22): a stream costs at most 3x its whole-text call at 64-character deltas,
8x at 16 and 30x at 4.  A stream's time includes the Python loop that feeds it, one call per
delta, as a server pays it; a StreamParser's updates are used as they come, as a server uses
them (the `StreamParser*` rows keep them all to the end of the answer instead).

And threads without the GIL: 2 threads running `clean`, `CleanStream` or
`extract_citations` over typical answers, each thread its own answers and streams, scale at
least 0.85 of the pure-Python control measured in the same rounds (`bench_freethreaded`'s
runner and control; meaningful on a free-threaded build such as 3.13t only).

Two more sets of rows, without targets: "loop alone", the same loop feeding no stream (the
floor the Python call per delta sets), and "+": web answers (`corpus.web_answer`, a Markdown
link after every other marker, which the streams hold until no marker can unwrap it).

The release latency: how many characters a stream holds (given, not released) after each
delta, on average and at worst (`--held`); its ">" rows run linked answers
(`corpus.linked_answer`, a marker as each link's destination, which unwraps the link).

Script mode (ratios from one run, medians):
    python benches/bench_streams.py [--answers N] [--rounds N] [--threads-only] [--held] [--hot]
pytest-benchmark (groups "streams clean <delta>" and "streams parser <delta>"; the whole-text
row of each group is its baseline):
    pytest benches/bench_streams.py -q
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest

from _common import HEAP_KEPT, ensure_citemark_importable
from corpus import linked_answer, typical_answer, web_answer

ensure_citemark_importable()

import citemark  # noqa: E402
from citemark.display import CleanStream, clean  # noqa: E402
from citemark.parser import Parser  # noqa: E402
from citemark.stream import StreamParser  # noqa: E402

DELTAS = (4, 16, 64)
TARGETS = {64: 3.0, 16: 8.0, 4: 30.0}
TARGETED = ("CleanStream", "StreamParser")  # the other rows of `ratios` have no target
ANSWERS = 200
THREAD_ANSWERS = 2_000
THREAD_TARGET = 0.85


# The answers of each kind (benches/corpus.py).
KINDS = {"typical": typical_answer, "web": web_answer, "linked": linked_answer}


@functools.cache
def answers(count: int = ANSWERS, kind: str = "typical") -> tuple[str, ...]:
    return tuple(KINDS[kind](seed=index) for index in range(count))


@functools.cache
def deltas(size: int, count: int = ANSWERS, kind: str = "typical") -> tuple[tuple[str, ...], ...]:
    return tuple(
        tuple(text[at : at + size] for at in range(0, len(text), size))
        for text in answers(count, kind)
    )


def clean_whole(texts: Sequence[str]) -> list[str]:
    return [clean(text) for text in texts]


def clean_streamed(chunked: Sequence[Sequence[str]]) -> list[str]:
    results = []
    for chunks in chunked:
        stream = CleanStream()
        feed = stream.feed
        out = [feed(chunk) for chunk in chunks]
        out.append(stream.close())
        results.append("".join(out))
    return results


PARSER = Parser()


def parse_whole(texts: Sequence[str]) -> list[tuple[str, list[Any]]]:
    strip, finditer = PARSER.strip, PARSER.finditer
    return [(strip(text), list(finditer(text))) for text in texts]


def parse_streamed(chunked: Sequence[Sequence[str]]) -> list[tuple[str, list[Any]]]:
    """A server's loop: each update is used as it comes (its text sent, its citations kept)
    and then dropped."""
    results = []
    for chunks in chunked:
        stream = StreamParser(PARSER)
        feed = stream.feed
        text: list[str] = []
        citations: list[Any] = []
        for chunk in chunks:
            update = feed(chunk)
            text.append(update.text)
            if update.citations:
                citations += update.citations
        update = stream.close()
        text.append(update.text)
        citations += update.citations
        results.append(("".join(text), citations))
    return results


def parse_kept(chunked: Sequence[Sequence[str]]) -> list[tuple[str, list[Any]]]:
    """Every update of an answer kept until its end, then read: the same work plus the
    collector's, which walks the live updates (a NamedTuple and a list each) as they pile
    up (the `StreamParser*` rows; no target of their own)."""
    results = []
    for chunks in chunked:
        stream = StreamParser(PARSER)
        feed = stream.feed
        updates = [feed(chunk) for chunk in chunks]
        updates.append(stream.close())
        results.append(
            (
                "".join(update.text for update in updates),
                [citation for update in updates for citation in update.citations],
            )
        )
    return results


def loop_alone(chunked: Sequence[Sequence[str]]) -> list[str]:
    """The floor of every stream: clean_streamed's loop with `str` (a C call that gives back
    its argument) in place of `feed`, and no stream."""
    results = []
    for chunks in chunked:
        feed = str
        out = [feed(chunk) for chunk in chunks]
        out.append("")
        results.append("".join(out))
    return results


def median_of(function: Callable[[Any], Any], argument: Any, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        began = time.perf_counter()
        function(argument)
        samples.append(time.perf_counter() - began)
    return statistics.median(samples)


def ratios(count: int, rounds: int) -> list[tuple[str, int, float, float, float]]:
    """(stream, delta, whole-text us per answer, stream us per answer, ratio), each pair of
    timings interleaved round by round so that a change of load hits both."""
    rows = []
    for name, whole, streamed, kind in (
        ("CleanStream", clean_whole, clean_streamed, "typical"),
        ("StreamParser", parse_whole, parse_streamed, "typical"),
        ("StreamParser*", parse_whole, parse_kept, "typical"),
        ("loop alone", clean_whole, loop_alone, "typical"),
        ("CleanStream+", clean_whole, clean_streamed, "web"),
        ("StreamParser+", parse_whole, parse_streamed, "web"),
    ):
        texts = answers(count, kind)
        for size in DELTAS:
            chunked = deltas(size, count, kind)
            if streamed is not loop_alone:
                assert streamed(chunked) == whole(texts), f"{name} differs at {size}"
            pairs = [(median_of(whole, texts, 1), median_of(streamed, chunked, 1))]
            pairs += [
                (median_of(whole, texts, 1), median_of(streamed, chunked, 1)) for _ in range(rounds)
            ]
            base = statistics.median(a for a, _ in pairs)
            cost = statistics.median(b for _, b in pairs)
            ratio = statistics.median(b / a for a, b in pairs)
            rows.append((name, size, base / count * 1e6, cost / count * 1e6, ratio))
    return rows


def hot_ratios(count: int, rounds: int) -> list[tuple[str, int, float, float, float]]:
    """`ratios` with one answer at a time, each call repeated on it (the fastest of `rounds`
    runs of 20 calls), so that the answer stays in the cache, as a text a server has just
    received does; medians over `count` answers.  The whole-text call gains most from the
    warm cache, so these ratios are the higher ones."""
    rows = []
    for name, whole, streamed in (
        ("CleanStream", clean_whole, clean_streamed),
        ("StreamParser", parse_whole, parse_streamed),
    ):
        for size in DELTAS:
            samples = []
            for text, chunks in zip(answers(count), deltas(size, count), strict=True):
                base = min(median_of(whole, [text] * 20, 1) for _ in range(rounds)) / 20
                cost = min(median_of(streamed, [chunks] * 20, 1) for _ in range(rounds)) / 20
                samples.append((base, cost))
            base = statistics.median(a for a, _ in samples)
            cost = statistics.median(b for _, b in samples)
            ratio = statistics.median(b / a for a, b in samples)
            rows.append((name, size, base * 1e6, cost * 1e6, ratio))
    return rows


def held_figures(count: int) -> list[tuple[str, int, float, int]]:
    """(stream, delta, mean held characters after a delta, most held): the release latency,
    in characters the stream has been given but not released (its `held` text)."""
    texts = answers(count)
    rows = []
    for name, make, kind in (
        ("CleanStream", CleanStream, "typical"),
        ("StreamParser", functools.partial(StreamParser, PARSER), "typical"),
        ("CleanStream>", CleanStream, "linked"),
    ):
        for size in DELTAS:
            total = most = samples = 0
            for chunks in deltas(size, count, kind):
                stream: Any = make()
                for chunk in chunks:
                    stream.feed(chunk)
                    held = len(stream.held)
                    total += held
                    most = max(most, held)
                    samples += 1
                stream.close()
            rows.append((name, size, total / samples, most))
    assert len(texts) == count
    return rows


# ---------------------------------------------------------------- threads (3.13t)


def thread_ops() -> dict[str, Callable[[Sequence[str]], Any]]:
    def clean_loop(texts: Sequence[str]) -> list[str]:
        return [clean(text) for text in texts]

    def stream_loop(texts: Sequence[str]) -> list[str]:
        out = []
        for text in texts:
            stream = CleanStream()
            feed = stream.feed
            pieces = [feed(text[at : at + 16]) for at in range(0, len(text), 16)]
            pieces.append(stream.close())
            out.append("".join(pieces))
        return out

    def extract_loop(texts: Sequence[str]) -> list[Any]:
        extract = citemark.extract_citations
        return [extract(text) for text in texts]

    return {"clean": clean_loop, "CleanStream_16": stream_loop, "extract_citations": extract_loop}


def thread_table(count: int, rounds: int, seconds: float = 0.1) -> dict[str, dict[str, float]]:
    """bench_freethreaded's interleaved rounds over the three calls: per call, the medians
    and the spread of its 2-thread scaling over the control's in the same round."""
    from bench_freethreaded import Runner, interleaved

    texts = tuple(typical_answer(seed=index) for index in range(count))
    works = thread_ops()
    expected = {name: work(texts) for name, work in works.items()}
    runner = Runner()
    try:
        for name, work in works.items():  # the split run gives what one thread gives
            assert runner.run(work, texts, 2, keep=True)[2] == expected[name], name
        return interleaved(runner, works, texts, rounds, seconds)
    finally:
        runner.close()


def gil_enabled() -> bool:
    is_enabled: Callable[[], bool] | None = getattr(sys, "_is_gil_enabled", None)
    return True if is_enabled is None else is_enabled()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=ANSWERS)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--threads-only", action="store_true")
    parser.add_argument(
        "--seconds", type=float, default=0.1, help="length of a 1-thread run in the threads table"
    )
    parser.add_argument("--held", action="store_true", help="the held characters only")
    parser.add_argument(
        "--hot", action="store_true", help="also the ratios with one answer at a time, cached"
    )
    args = parser.parse_args(argv)
    if args.held:
        print(f"{'stream':<13} {'delta':>5} {'mean held':>9} {'most held':>9}")
        for name, size, mean, most in held_figures(args.answers):
            print(f"{name:<13} {size:>5} {mean:9.1f} {most:9d}")
        print("> linked answers (corpus.linked_answer): a marker as each link's destination")
        return 0
    print(
        f"Python {sys.version.split()[0]}, GIL {'on' if gil_enabled() else 'off'}, "
        f"citemark {citemark.IMPLEMENTATION}; {args.answers} typical answers of ~4 KB; "
        f"medians of {args.rounds} interleaved rounds; heap {'kept' if HEAP_KEPT else 'as is'}"
    )
    if not args.threads_only:
        print(f"{'stream':<13} {'delta':>5} {'whole us':>9} {'stream us':>10} {'ratio':>7} target")
        for name, size, base, cost, ratio in ratios(args.answers, args.rounds):
            target = ""
            if name in TARGETED:
                verdict = "ok" if ratio <= TARGETS[size] else "MISSED"
                target = f"<= {TARGETS[size]:.0f}x {verdict}"
            print(f"{name:<13} {size:>5} {base:9.2f} {cost:10.2f} {ratio:6.1f}x {target}")
        print("* every update kept until the answer ends (parse_kept): the collector's cost")
        print(
            "loop alone: the feeding loop with no stream in it (loop_alone), every stream's floor"
        )
        print("+ web answers (corpus.web_answer): a Markdown link after every other marker")
    if args.hot and not args.threads_only:
        print("one answer at a time, in the cache (hot_ratios):")
        for name, size, base, cost, ratio in hot_ratios(min(args.answers, 20), args.rounds):
            print(f"{name:<13} {size:>5} {base:9.2f} {cost:10.2f} {ratio:6.1f}x")
    if gil_enabled():
        print("threads: skipped (the GIL is on; run under a free-threaded build, e.g. 3.13t)")
        return 0
    print(
        f"threads: {THREAD_ANSWERS} answers, 1 thread vs 2, {args.rounds} interleaved rounds "
        "(bench_freethreaded.interleaved)"
    )
    print(
        f"{'call':<18} {'texts':>5} {'1 thread':>9} {'2/1':>6} {'cpu 2/1':>7} {'vs control':>10} "
        f"{'low-high':>11} {'q1-q3':>11} target"
    )
    rows = thread_table(THREAD_ANSWERS, args.rounds, args.seconds)
    for name, row in rows.items():
        verdict = (
            f"(the control: ratio low-high {row['control_low']:.2f}-{row['control_high']:.2f}x)"
            if name == "control"
            else f">= {THREAD_TARGET} {'ok' if row['vs_control'] >= THREAD_TARGET else 'MISSED'}"
        )
        print(
            f"{name:<18} {row['texts']:5.0f} {row['one'] * 1e3:7.1f}ms {row['ratio']:5.2f}x "
            f"{row['cpu']:7.2f} "
            f"{row['vs_control']:10.2f} {row['low']:5.2f}-{row['high']:<5.2f} "
            f"{row['q1']:5.2f}-{row['q3']:<5.2f} {verdict}"
        )
    print(
        f"the rest of the machine used {rows['control']['others']:.2f} cores in the median "
        f"round; vs control in the quieter half (others below that): "
        + ", ".join(
            f"{name} {row['quiet']:.2f} ({row['quiet_rounds']:.0f} rounds)"
            for name, row in rows.items()
            if name != "control"
        )
    )
    return 0


# ---------------------------------------------------------------- pytest-benchmark


@pytest.mark.parametrize("kind", ["typical", "web"])
@pytest.mark.parametrize("size", DELTAS)
@pytest.mark.parametrize("row", ["whole", "stream", "loop"])
def test_clean_stream(benchmark: Any, row: str, size: int, kind: str) -> None:
    benchmark.group = f"streams clean {size}{' web' if kind == 'web' else ''}"
    benchmark.extra_info.update(suite="streams", op=f"clean {row}", delta=size, web=kind == "web")
    if row == "whole":
        result = benchmark(clean_whole, answers(ANSWERS, kind))
    elif row == "loop":  # the floor: the loop with no stream in it
        benchmark(loop_alone, deltas(size, ANSWERS, kind))
        return
    else:
        result = benchmark(clean_streamed, deltas(size, ANSWERS, kind))
    assert result == clean_whole(answers(ANSWERS, kind))


@pytest.mark.parametrize("size", DELTAS)
@pytest.mark.parametrize("row", ["whole", "stream"])
def test_stream_parser(benchmark: Any, row: str, size: int) -> None:
    benchmark.group = f"streams parser {size}"
    benchmark.extra_info.update(suite="streams", op=f"parser {row}", delta=size)
    if row == "whole":
        result = benchmark(parse_whole, answers())
    else:
        result = benchmark(parse_streamed, deltas(size))
    assert result == parse_whole(answers())


if __name__ == "__main__":
    raise SystemExit(main())
