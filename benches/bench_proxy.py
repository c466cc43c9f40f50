"""The example proxy (examples/server.py) under load: cleaning against passing events through.

Targets: with 200 concurrent streams, the cleaning proxy's throughput within 10% of the same
proxy passing the SDK's events through untouched (`--passthrough`), and the per-event
latency it adds at the median and the 99th percentile.

Three processes on 127.0.0.1 and the client: the replay upstream (`examples/server.py replay
--stamp`, which writes `x_sent_ns`, its `time.monotonic_ns()`, and `x_index`, the event's place
in its stream, into every event; it serializes each recorded event once, so it costs little),
and one proxy of each kind in front of it.  The client is this process: an asyncio loop that
opens the streams at once over raw HTTP/1.1 (no SDK, so that it costs little next to the
proxies) and notes when it reads each event (one monotonic clock for all processes on Linux).

- throughput: upstream events per second of wall time, the upstream sending as fast as it
  can (`--delay 0`), each stream a recorded web-search answer (128 events).  On a machine
  shared with other work the wall time follows what the others take (`others`, the CPU
  seconds the rest of the machine used during the round, from /proc/stat), so each round
  also gives `capacity`: upstream events per CPU second of the proxy, the rate the proxy (one
  process, one thread) sustains on a core of its own.  The CPU time of the upstream and the
  client is printed too: neither is the bottleneck when its share of the wall time is low.
- latency: the same streams paced (`--paced` seconds between the events of a stream, so the
  proxies are not saturated).  `p50`/`p99`: per event read, from the upstream's send of that
  event to the read.  `text`: per text delta the upstream sent, from its send to the read of
  the first text from it or a later event (see `text_latencies`): how long a reader waits
  for its words.  The cleaning proxy holds text until it is decided (see citemark.openai),
  which the per-event figure does not see and the text figure does.

Rounds come in pairs, one round of each proxy, the order swapped every other pair (the
second of a pair ran slower, whichever proxy it was, on a 2-core VM shared with other work);
each ratio (clean / passthrough) or difference is taken within a pair and given as the median
and the range over the pairs.

Run (one command, the figures of docs/openai.md): ``python benches/bench_proxy.py`` (add
``--json FILE`` to keep them), or ``pytest benches/bench_proxy.py -q`` (smaller, recorded in
pytest-benchmark's `extra_info`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "server.py"
# One server-sent event: its name, and the upstream's stamp in its data.
EVENT = re.compile(rb'event: ([^\n]+)\ndata: [^\n]*"x_sent_ns":\s*(\d+),\s*"x_index":\s*(\d+)')
TEXT_DELTA = b"response.output_text.delta"
FIXTURES = ROOT / "tests" / "data" / "openai"
WAIT = 30.0  # seconds: the bound of every wait for a server
ROUND = 300.0  # seconds: the bound of one round of streams


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """The CPU time a process has used (user and system), from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Server(int):
    """A port, with the process that listens on it."""

    pid: int


@contextlib.contextmanager
def started(*args: str) -> Iterator[Server]:
    """examples/server.py with args in a subprocess on a free loopback port."""
    port = free_port()
    command = [sys.executable, str(EXAMPLE), *args, "--port", str(port)]
    # Its log goes to a file: a pipe nobody reads fills, and the server blocks on it.
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
        try:
            deadline = time.monotonic() + WAIT
            while True:
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                    break
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{' '.join(args)} did not start: {logged(log)}")
                time.sleep(0.05)
            server = Server(port)
            server.pid = process.pid
            yield server
        finally:
            process.terminate()
            try:
                process.wait(WAIT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(WAIT)
            errors = logged(log)
            if errors.strip():
                print(f"{args[0]} logged:\n{errors[-2000:]}", file=sys.stderr)


def logged(log: Any) -> str:
    log.seek(0)
    return str(log.read().decode(errors="replace"))


Read = tuple[bytes, int, int, int]  # event name, upstream's index, sent, read (monotonic ns)


async def one_stream(port: int, model: str) -> list[Read]:
    """POST a streamed Responses request: each event read, named, with its stamps."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    body = json.dumps({"model": model, "input": "hi", "stream": True}).encode()
    writer.write(
        b"POST /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    await writer.drain()
    latencies: list[Read] = []
    buffer = b""
    while True:
        data = await reader.read(65536)
        now = time.monotonic_ns()
        if not data:
            break
        buffer += data
        cut = buffer.rfind(b"\n\n")
        if cut < 0:
            continue
        done, buffer = buffer[: cut + 2], buffer[cut + 2 :]
        latencies += [
            (name, int(index), int(sent), now) for name, sent, index in EVENT.findall(done)
        ]
    writer.close()
    with contextlib.suppress(ConnectionError):
        await writer.wait_closed()
    return latencies


def text_latencies(found: list[Read], text_deltas: list[int]) -> list[int]:
    """For each text delta the upstream sent (`text_deltas`: their indexes in the stream),
    the time from its send to the read of the first text the client got from it or from a
    later event: when a reader could see its first words.  The cleaning proxy drops the
    deltas that release nothing, so the send time of a dropped one is interpolated
    between the stamps of the events read around it (the upstream paces its events evenly)."""
    stamps = [(index, sent) for _, index, sent, _ in found]
    texts = [(index, read) for name, index, _, read in found if name == TEXT_DELTA]
    ends = [(index, read) for name, index, _, read in found if name != TEXT_DELTA]
    out = []
    at = 0
    for wanted in text_deltas:
        while at < len(stamps) and stamps[at][0] < wanted:
            at += 1
        if at < len(stamps) and stamps[at][0] == wanted:
            sent = stamps[at][1]
        elif 0 < at < len(stamps):
            (index0, sent0), (index1, sent1) = stamps[at - 1], stamps[at]
            sent = sent0 + (sent1 - sent0) * (wanted - index0) // (index1 - index0)
        else:
            continue
        # Its text goes out in the first text delta from it on, else in the done events.
        reads = [read for index, read in texts if index >= wanted] or [
            read for index, read in ends if index >= wanted
        ]
        if reads:
            out.append(reads[0] - sent)
    return out


def percentile(values: list[int], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] / 1e6 if ordered else 0.0


def machine_busy() -> float:
    """CPU seconds the whole machine has spent busy (all cores, /proc/stat): what other
    processes took during a round is this less the three of the bench."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    idle = int(fields[3]) + int(fields[4])  # idle, iowait
    return (sum(int(field) for field in fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def own_cpu() -> float:
    """This process's CPU time: the client's, for it is this process."""
    return time.process_time()


async def load(port: Server, upstream: Server, streams: int, model: str) -> dict[str, float]:
    """`streams` streams at once.  Throughput counts the upstream's events (the cleaning
    proxy sends fewer: a delta that releases no text is dropped).  CPU per upstream event of
    each process (`cpu_us` the proxy's, which decides how many events a proxy can take on a
    core of its own: `capacity`), and what the rest of the machine took meanwhile
    (`others_cpu`, CPU seconds)."""
    with (FIXTURES / f"{model}.jsonl").open(encoding="utf-8") as lines:
        kinds = [json.loads(line)["type"] for line in lines if line.strip()]
    sent = len(kinds)
    cpu = cpu_seconds(port.pid)
    cpu_upstream = cpu_seconds(upstream.pid)
    cpu_client = own_cpu()
    busy = machine_busy()
    began = time.perf_counter()
    tasks = [asyncio.create_task(one_stream(port, model)) for _ in range(streams)]
    _, pending = await asyncio.wait(tasks, timeout=ROUND)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    if pending:
        raise TimeoutError(f"{len(pending)} of {streams} streams unfinished after {ROUND} s")
    results = [task.result() for task in tasks]
    wall = time.perf_counter() - began
    # A stream cut short (an error in a proxy) would make the round look fast.
    ended = [found for found in results if found and found[-1][0] == b"response.completed"]
    if len(ended) < streams:
        raise RuntimeError(f"{streams - len(ended)} of {streams} streams did not complete")
    cpu = cpu_seconds(port.pid) - cpu
    cpu_upstream = cpu_seconds(upstream.pid) - cpu_upstream
    cpu_client = own_cpu() - cpu_client
    others = machine_busy() - busy - cpu - cpu_upstream - cpu_client
    every = [read - sent for found in results for _, _, sent, read in found]
    deltas = [
        read - sent for found in results for name, _, sent, read in found if name == TEXT_DELTA
    ]
    text_deltas = [index for index, kind in enumerate(kinds) if kind == TEXT_DELTA.decode()]
    words = [one for found in results for one in text_latencies(found, text_deltas)]
    events = streams * sent
    return {
        "received": len(every),
        "seconds": wall,
        "events_per_second": events / wall,
        "cpu_us": 1e6 * cpu / events,
        "capacity": events / cpu if cpu else float("nan"),
        "proxy_busy": cpu / wall,
        "upstream_us": 1e6 * cpu_upstream / events,
        "client_us": 1e6 * cpu_client / events,
        "client_busy": cpu_client / wall,
        "others_cpu": max(0.0, others),
        "p50_ms": percentile(every, 0.5),
        "p99_ms": percentile(every, 0.99),
        "delta_p50_ms": percentile(deltas, 0.5),
        "delta_p99_ms": percentile(deltas, 0.99),
        "text_p50_ms": percentile(words, 0.5),
        "text_p99_ms": percentile(words, 0.99),
    }


RATIOS = {
    # name: (key, how a pair of rounds is compared: clean / passthrough, or clean - it)
    "throughput": ("events_per_second", "ratio"),
    "capacity": ("capacity", "ratio"),
    "cpu": ("cpu_us", "ratio"),
    "added_p50_ms": ("p50_ms", "difference"),
    "added_p99_ms": ("p99_ms", "difference"),
    "added_text_p50_ms": ("text_p50_ms", "difference"),
    "added_text_p99_ms": ("text_p99_ms", "difference"),
}


def spread(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"median": statistics.median(ordered), "low": ordered[0], "high": ordered[-1]}


def measure(
    streams: int, rounds: int, paced: float, paced_rounds: int, model: str = "web_search"
) -> dict[str, Any]:
    """Both proxies in front of one upstream, `rounds` pairs of rounds unpaced then
    `paced_rounds` pairs paced, the proxies' order swapped every other pair (the second of a
    pair ran slower, whichever it was).  Each ratio is taken within a pair and summarised
    by its median and range, so a load that comes and goes between pairs cancels out."""
    out: dict[str, Any] = {
        "streams": streams,
        "rounds": rounds,
        "paced": paced,
        "paced_rounds": paced_rounds,
    }
    for phase, delay, count in (("throughput", 0.0, rounds), ("latency", paced, paced_rounds)):
        if count == 0:
            continue
        with started("replay", "--stamp", "--delay", str(delay)) as upstream:
            url = f"http://127.0.0.1:{upstream}/v1"
            with (
                started("proxy", "--upstream", url) as clean,
                started("proxy", "--upstream", url, "--passthrough") as passthrough,
            ):
                asyncio.run(load(clean, upstream, 20, model))  # warm both up: parses, schemas
                asyncio.run(load(passthrough, upstream, 20, model))
                runs: dict[str, list[dict[str, float]]] = {"clean": [], "passthrough": []}
                pair = [("passthrough", passthrough), ("clean", clean)]
                for number in range(count):
                    for name, port in pair if number % 2 == 0 else pair[::-1]:
                        runs[name].append(asyncio.run(load(port, upstream, streams, model)))
                        row = runs[name][-1]
                        print(
                            f"{phase} pair {number + 1} {name:11}: {row['seconds']:5.1f} s, "
                            f"CPU an event: proxy {row['cpu_us']:4.0f} us "
                            f"({row['proxy_busy']:.0%} busy), upstream "
                            f"{row['upstream_us']:4.0f} us, client {row['client_us']:4.0f} us "
                            f"({row['client_busy']:.0%}); others {row['others_cpu']:5.1f} CPU s",
                            file=sys.stderr,
                            flush=True,
                        )
        out[phase] = {
            name: {key: statistics.median(run[key] for run in found) for key in found[0]}
            for name, found in runs.items()
        }
        out[phase + "_pairs"] = {}
        for ratio, (key, how) in RATIOS.items():
            values = [
                a[key] / b[key] if how == "ratio" else a[key] - b[key]
                for a, b in zip(runs["clean"], runs["passthrough"], strict=True)
            ]
            out[phase + "_pairs"][ratio] = spread(values)
    if rounds:
        pairs = out["throughput_pairs"]
        out["throughput_ratio"] = pairs["throughput"]["median"]
        out["capacity_ratio"] = pairs["capacity"]["median"]
        out["cpu_ratio"] = pairs["cpu"]["median"]
    if paced_rounds:
        pairs = out["latency_pairs"]
        out["added_p50_ms"] = pairs["added_p50_ms"]["median"]
        out["added_p99_ms"] = pairs["added_p99_ms"]["median"]
        out["added_text_p50_ms"] = pairs["added_text_p50_ms"]["median"]
        out["added_text_p99_ms"] = pairs["added_text_p99_ms"]["median"]
    return out


def report(result: dict[str, Any]) -> str:
    lines = [
        f"{result['streams']} concurrent streams; {result['rounds']} pairs of rounds unpaced "
        f"and {result['paced_rounds']} paced at {result['paced']} s between events; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end"
    ]
    for phase in ("throughput", "latency"):
        for name, row in result.get(phase, {}).items():
            lines.append(
                f"  {phase:10} {name:11} {row['seconds']:6.2f} s = "
                f"{row['events_per_second']:6.0f} upstream events/s; CPU an upstream event: "
                f"proxy {row['cpu_us']:4.0f} us ({row['capacity']:5.0f} events/CPU s, "
                f"{row['proxy_busy']:.0%} busy), upstream {row['upstream_us']:4.0f} us, client "
                f"{row['client_us']:4.0f} us; others {row['others_cpu']:5.1f} CPU s; "
                f"{row['received']:6.0f} received; latency p50 {row['p50_ms']:7.2f} ms p99 "
                f"{row['p99_ms']:7.2f} ms (deltas {row['delta_p50_ms']:7.2f} / "
                f"{row['delta_p99_ms']:7.2f} ms; text {row['text_p50_ms']:7.2f} / "
                f"{row['text_p99_ms']:7.2f} ms)"
            )
        for ratio, found in result.get(phase + "_pairs", {}).items():
            if (phase == "throughput") == RATIOS[ratio][0].endswith("_ms"):
                continue
            unit = " ms" if ratio.endswith("_ms") else ""
            lines.append(
                f"  {phase:10} {ratio:12} clean vs passthrough, per pair: median "
                f"{found['median']:+.3f}{unit}, range {found['low']:+.3f} to "
                f"{found['high']:+.3f}{unit}"
                if unit
                else f"  {phase:10} {ratio:12} clean / passthrough, per pair: median "
                f"{found['median']:.3f}, range {found['low']:.3f}-{found['high']:.3f}"
            )
    return "\n".join(lines)


def test_proxy(benchmark: Any) -> None:
    """A smaller load for the pytest-benchmark record (one round of each)."""
    result: dict[str, Any] = {}

    def run() -> None:
        result.update(measure(streams=50, rounds=2, paced=0.1, paced_rounds=2))

    benchmark.pedantic(run, rounds=1, iterations=1, warmup_rounds=0)
    benchmark.extra_info.update(
        {
            key: result[key]
            for key in (
                "throughput_ratio",
                "capacity_ratio",
                "cpu_ratio",
                "added_p50_ms",
                "added_p99_ms",
                "added_text_p50_ms",
                "added_text_p99_ms",
            )
        }
    )
    print(report(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=6, help="pairs of unpaced rounds")
    parser.add_argument("--paced", type=float, default=0.25, help="seconds between events")
    parser.add_argument("--paced-rounds", type=int, default=3, help="pairs of paced rounds")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    result = measure(args.streams, args.rounds, args.paced, args.paced_rounds)
    print(report(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
