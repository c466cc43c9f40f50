"""The example proxy (examples/server.py) under load: cleaning against passing events through.

Targets: with 200 concurrent streams, the cleaning proxy's throughput within 10% of the same
proxy passing the SDK's events through untouched (`--passthrough`), and the per-event
latency it adds at the median and the 99th percentile.

Three processes on 127.0.0.1: the replay upstream (`examples/server.py replay --stamp`,
which writes `x_sent_ns`, its `time.monotonic_ns()`, into every event), and one proxy of
each kind in front of it.  The client is this process: an asyncio loop that opens the
streams at once over raw HTTP/1.1 (no SDK, so that the client costs little next to the
proxies) and, for every event it reads, notes `time.monotonic_ns() - x_sent_ns` (one clock
for all processes on Linux).  Rounds alternate between the two proxies.

- throughput: events delivered per second of wall time, the upstream sending as fast as it
  can (`--delay 0`), each stream a recorded web-search answer (128 events);
- latency: the same streams paced (`--paced` seconds between the events of a stream, so the
  proxies are not saturated), per event from the upstream's send to the client's read.  The
  cleaning proxy also holds text until its line ends (see citemark.openai); an event's
  latency is that of the event that carries the text, not of the text held before it, and
  a held annotation event's is its whole hold.

The order of the two proxies is swapped every other round: in a pair of rounds the second
ran slower, whichever proxy it was (on a 2-core VM shared with other work), so one order
alone would favour the first.

Run: ``python benches/bench_proxy.py`` (medians and ratios from one run), or
``pytest benches/bench_proxy.py -q`` (the same, smaller, recorded in pytest-benchmark's
`extra_info`).
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
EVENT = re.compile(rb'event: ([^\n]+)\ndata: [^\n]*"x_sent_ns":\s*(\d+)')
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


async def one_stream(port: int, model: str) -> list[tuple[bytes, int]]:
    """POST a streamed Responses request: each event read, named, with its latency."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    body = json.dumps({"model": model, "input": "hi", "stream": True}).encode()
    writer.write(
        b"POST /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    await writer.drain()
    latencies: list[tuple[bytes, int]] = []
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
        latencies += [(name, now - int(sent)) for name, sent in EVENT.findall(done)]
    writer.close()
    with contextlib.suppress(ConnectionError):
        await writer.wait_closed()
    return latencies


def percentile(values: list[int], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] / 1e6 if ordered else 0.0


async def load(port: Server, streams: int, model: str) -> dict[str, float]:
    """`streams` streams at once.  Throughput counts the upstream's events (the cleaning
    proxy sends fewer: a delta that releases no text is dropped); `cpu_us` is the proxy's
    CPU time per upstream event, which other load on the machine changes less than its
    wall time."""
    with (FIXTURES / f"{model}.jsonl").open(encoding="utf-8") as lines:
        sent = sum(1 for line in lines if line.strip())
    cpu = cpu_seconds(port.pid)
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
    every = [latency for found in results for _, latency in found]
    deltas = [
        one for found in results for name, one in found if name == b"response.output_text.delta"
    ]
    return {
        "received": len(every),
        "seconds": wall,
        "events_per_second": streams * sent / wall,
        "cpu_us": 1e6 * cpu / (streams * sent),
        "p50_ms": percentile(every, 0.5),
        "p99_ms": percentile(every, 0.99),
        "delta_p50_ms": percentile(deltas, 0.5),
        "delta_p99_ms": percentile(deltas, 0.99),
    }


def measure(
    streams: int, rounds: int, paced: float, paced_rounds: int, model: str = "web_search"
) -> dict[str, Any]:
    """Both proxies, `rounds` rounds each unpaced then `paced_rounds` paced, their order
    swapped every other round (the second of a pair ran slower, whichever it was)."""
    out: dict[str, Any] = {
        "streams": streams,
        "rounds": rounds,
        "paced": paced,
        "paced_rounds": paced_rounds,
    }
    for phase, delay, count in (("throughput", 0.0, rounds), ("latency", paced, paced_rounds)):
        with started("replay", "--stamp", "--delay", str(delay)) as upstream:
            url = f"http://127.0.0.1:{upstream}/v1"
            with (
                started("proxy", "--upstream", url) as clean,
                started("proxy", "--upstream", url, "--passthrough") as passthrough,
            ):
                asyncio.run(load(clean, 20, model))  # warm both up: first parses, schemas
                asyncio.run(load(passthrough, 20, model))
                runs: dict[str, list[dict[str, float]]] = {"clean": [], "passthrough": []}
                pair = [("passthrough", passthrough), ("clean", clean)]
                for number in range(count):
                    for name, port in pair if number % 2 == 0 else pair[::-1]:
                        runs[name].append(asyncio.run(load(port, streams, model)))
                        row = runs[name][-1]
                        print(
                            f"{phase} round {number + 1} {name}: {row['seconds']:.1f} s, "
                            f"{row['cpu_us']:.0f} us CPU an event",
                            file=sys.stderr,
                            flush=True,
                        )
        out[phase] = {
            name: {key: statistics.median(run[key] for run in found) for key in found[0]}
            for name, found in runs.items()
        }
    throughput = out["throughput"]
    out["throughput_ratio"] = (
        throughput["clean"]["events_per_second"] / throughput["passthrough"]["events_per_second"]
    )
    out["cpu_ratio"] = throughput["clean"]["cpu_us"] / throughput["passthrough"]["cpu_us"]
    latency = out["latency"]
    out["added_p50_ms"] = latency["clean"]["p50_ms"] - latency["passthrough"]["p50_ms"]
    out["added_p99_ms"] = latency["clean"]["p99_ms"] - latency["passthrough"]["p99_ms"]
    return out


def report(result: dict[str, Any]) -> str:
    lines = [
        f"{result['streams']} concurrent streams; medians of {result['rounds']} rounds a proxy "
        f"unpaced and {result['paced_rounds']} paced at {result['paced']} s between events; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end"
    ]
    for phase in ("throughput", "latency"):
        for name, row in result[phase].items():
            lines.append(
                f"  {phase:10} {name:11} {row['seconds']:6.2f} s = "
                f"{row['events_per_second']:6.0f} upstream events/s, {row['cpu_us']:5.0f} us CPU "
                f"an event, {row['received']:6.0f} "
                f"received; latency p50 {row['p50_ms']:7.2f} ms p99 {row['p99_ms']:7.2f} ms "
                f"(deltas {row['delta_p50_ms']:7.2f} / {row['delta_p99_ms']:7.2f} ms)"
            )
    lines.append(
        f"throughput clean/passthrough {result['throughput_ratio']:.3f}, CPU an event "
        f"{result['cpu_ratio']:.3f}; latency added "
        f"p50 {result['added_p50_ms']:+.2f} ms, p99 {result['added_p99_ms']:+.2f} ms"
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
            for key in ("throughput_ratio", "cpu_ratio", "added_p50_ms", "added_p99_ms")
        }
    )
    print(report(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--paced", type=float, default=0.5, help="seconds between events")
    parser.add_argument("--paced-rounds", type=int, default=2)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    result = measure(args.streams, args.rounds, args.paced, args.paced_rounds)
    print(report(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
