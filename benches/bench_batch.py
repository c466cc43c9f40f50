"""Batch benchmark: `citemark strip` on a large JSONL response log, and on the same rows as
Parquet through the Arrow path, against a one-line Python regex script.

    python benches/bench_batch.py                       # 1 GB log in /tmp/citemark-bench
    python benches/bench_batch.py --size 200MB --json benches/batch.json
    python benches/bench_batch.py --throughput LOG.jsonl   # MB/s of every command, one run

`--throughput` times strip, extract, clean and stats (-j 1 and -j 2) on a JSONL log, next to
the one-line script and `cat LOG > /dev/null`: the README's throughput table.  Make a log
with `python benches/make_log.py LOG.jsonl --size 1GB` (or `--size 200MB` for a quick one).

The log comes from `make_log.py` (generated once into --dir, never into the repository, and
reused while its size matches).  Each command is timed from start to exit (best of --repeat),
reading the log and writing its cleaned copy to --dir:

  jsonl -j 1 / -j 2   citemark strip LOG --field response.output_text -j N -q -o OUT
  parquet -j 1 / -j 2 citemark strip LOG.parquet --column output_text -j N -q -o OUT.parquet
  arrow kernel        citemark.arrow.strip(column) on the column already in memory (no I/O)
  regex one-liner     python -c "...json.loads, re.sub, json.dumps per line..." < LOG > OUT

rows/s counts log rows; MB/s is the JSONL log's size over the wall time for every command
(the same data, so the figures compare), and for the in-memory kernel the UTF-8 bytes of the
text column.  "peak RSS" is the largest resident set of any process of the command (workers
included), which shows that memory stays bounded whatever the size of the log.

The regex script is what people write first: `\\ue200cite\\ue202[^\\ue201]*\\ue201` removed from
the field.  It is not the same contract (it also removes invalid markers, such as a URL as id,
which the guide's helper and citemark keep); the rows where the two differ are counted.

Under pytest (`pytest benches/bench_batch.py`), `test_batch_small` runs the same commands on a
2 MB log once, as a smoke test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FIELD = "response.output_text"
REGEX_ONE_LINER = (
    "import sys,json,re;r=re.compile('\\ue200cite\\ue202[^\\ue201]*\\ue201');"
    "w=sys.stdout.write;[w(json.dumps({**d,'response':{**d['response'],"
    "'output_text':r.sub('',d['response']['output_text'])}},ensure_ascii=False)+'\\n')"
    " for d in map(json.loads,sys.stdin)]"
)
# Runs a command, then prints the largest resident set (KiB) of its process tree.
PEAK = (
    "import resource,subprocess,sys;"
    "i=sys.argv.index('--');o=sys.argv[1];"
    "f=open(o,'wb') if o!='-' else None;"
    "n=sys.argv[2];g=open(n,'rb') if n!='-' else None;"
    "c=subprocess.run(sys.argv[i+1:],stdin=g,stdout=f).returncode;"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, c)"
)


def citemark_command() -> list[str]:
    return [sys.executable, "-m", "citemark"]


def ensure_log(directory: Path, size: int) -> tuple[Path, Path, int]:
    """The JSONL log and its Parquet twin in `directory`, generated when missing."""
    directory.mkdir(parents=True, exist_ok=True)
    log = directory / f"log-{size}.jsonl"
    parquet = directory / f"log-{size}.parquet"
    if not (log.exists() and parquet.exists()):
        print(f"generating {log} ({size / 1e9:.2f} GB) and {parquet} ...", file=sys.stderr)
        began = time.perf_counter()
        subprocess.run(
            [sys.executable, str(HERE / "make_log.py"), str(log), "--size", str(size),
             "--parquet", str(parquet)],
            check=True,
        )  # fmt: skip
        print(f"  generated in {time.perf_counter() - began:.0f} s", file=sys.stderr)
    with log.open("rb") as handle:
        rows = sum(1 for _ in handle)
    return log, parquet, rows


def timed(command: list[str], stdin: Path | None, stdout: Path | None) -> tuple[float, int]:
    """(wall seconds, peak RSS in KiB) of one run of `command`."""
    wrapper = [
        sys.executable, "-c", PEAK,
        str(stdout) if stdout else "-", str(stdin) if stdin else "-", "--", *command,
    ]  # fmt: skip
    began = time.perf_counter()
    result = subprocess.run(wrapper, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - began
    peak, code = result.stdout.split()
    if code != "0":
        raise RuntimeError(f"{command} exited with {code}: {result.stderr}")
    return wall, int(peak)


def best(repeat: int, run: Any) -> tuple[float, int]:
    results = [run() for _ in range(repeat)]
    return min(r[0] for r in results), max(r[1] for r in results)


def run_all(size: int, directory: Path, repeat: int) -> dict[str, Any]:
    import pyarrow.parquet as pq

    import citemark.arrow

    log, parquet, rows = ensure_log(directory, size)
    log_bytes = log.stat().st_size
    out = directory / "out"
    out.mkdir(exist_ok=True)
    cases: list[dict[str, Any]] = []

    def record(name: str, wall: float, peak: int, nbytes: int = log_bytes) -> None:
        cases.append(
            {
                "case": name,
                "seconds": round(wall, 3),
                "rows_per_s": round(rows / wall),
                "mb_per_s": round(nbytes / wall / 1e6, 1),
                "peak_rss_mb": round(peak / 1024, 1),
            }
        )
        print(f"  {name:<28}{wall:8.2f} s", file=sys.stderr)

    for jobs in (1, 2):
        target = out / f"strip-j{jobs}.jsonl"
        command = [*citemark_command(), "strip", str(log), "--field", FIELD, "-q", "-j", str(jobs),
                   "-o", str(target)]  # fmt: skip
        record(
            f"citemark strip jsonl -j {jobs}", *best(repeat, lambda c=command: timed(c, None, None))
        )
    same = (out / "strip-j1.jsonl").read_bytes() == (out / "strip-j2.jsonl").read_bytes()

    for jobs in (1, 2):
        target = out / f"strip-j{jobs}.parquet"
        command = [*citemark_command(), "strip", str(parquet), "--column", "output_text", "-q",
                   "-j", str(jobs), "-o", str(target)]  # fmt: skip
        record(
            f"citemark strip parquet -j {jobs}",
            *best(repeat, lambda c=command: timed(c, None, None)),
        )

    column = pq.read_table(parquet, columns=["output_text"]).column("output_text")
    text_bytes = sum(chunk.buffers()[2].size for chunk in column.chunks)
    walls = []
    for _ in range(max(repeat, 2)):
        began = time.perf_counter()
        cleaned = citemark.arrow.strip(column)
        walls.append(time.perf_counter() - began)
    record(f"citemark.arrow.strip ({citemark.arrow.IMPLEMENTATION}, in memory)", min(walls), 0,
           text_bytes)  # fmt: skip

    regex_out = out / "regex.jsonl"
    command = [sys.executable, "-c", REGEX_ONE_LINER]
    record("regex one-liner", *best(repeat, lambda: timed(command, log, regex_out)))

    # Checks: the Parquet path gives the JSONL path's text, row for row (sampled); count the
    # rows where the regex script's contract differs from the guide's.
    parquet_text = pq.read_table(out / "strip-j2.parquet", columns=["output_text"]).column(0)
    assert cleaned.equals(parquet_text), "in-memory and command Parquet results differ"
    differs = checked = 0
    with (out / "strip-j1.jsonl").open("rb") as ours, regex_out.open("rb") as theirs:
        for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            if index % 50:
                continue
            mine = json.loads(a)["response"]["output_text"]
            assert mine == parquet_text[index].as_py(), f"row {index}: JSONL and Parquet differ"
            differs += mine != json.loads(b)["response"]["output_text"]
            checked += 1
    return {
        "rows": rows,
        "log_bytes": log_bytes,
        "parquet_bytes": parquet.stat().st_size,
        "text_bytes": text_bytes,
        "cores": len(os.sched_getaffinity(0))
        if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "implementation": citemark.arrow.IMPLEMENTATION,
        "jobs_outputs_identical": same,
        "regex_rows_differing_sampled": f"{differs} of {checked}",
        "cases": cases,
    }


COMMANDS = ("strip", "extract", "clean", "stats")


def throughput(log: Path, out: Path) -> dict[str, Any]:
    """MB/s of every JSONL command (-j 1, -j 2) next to the one-line script and `cat`, each
    timed once, in one run (so the ratios compare); with the CPU seconds of each, which a
    loaded machine disturbs less than the wall time."""
    size = log.stat().st_size
    rows: list[dict[str, Any]] = []

    def record(name: str, command: list[str], stdin: Path | None = None) -> None:
        began = time.perf_counter()
        before = os.times()
        with stdin.open("rb") if stdin else open(os.devnull, "rb") as source:
            done = subprocess.run(command, stdin=source, stdout=subprocess.DEVNULL, check=False)
        after = os.times()
        wall = time.perf_counter() - began
        cpu = (after.children_user - before.children_user) + (
            after.children_system - before.children_system
        )
        if done.returncode != 0:  # a failed command is no figure (it would be the fastest)
            raise SystemExit(f"{name}: exit {done.returncode}")
        rows.append(
            {"case": name, "seconds": round(wall, 2), "mb_per_s": round(size / wall / 1e6, 1),
             "cpu_seconds": round(cpu, 2),
             "mb_per_cpu_s": round(size / max(cpu, 1e-3) / 1e6, 1)}
        )  # fmt: skip
        print(f"  {name:<28}{wall:8.2f} s  {size / wall / 1e6:7.1f} MB/s", file=sys.stderr)

    record("cat log > /dev/null", ["cat", str(log)])
    record("one-line json/re script", [sys.executable, "-c", REGEX_ONE_LINER], log)
    for command in COMMANDS:
        for jobs in (1, 2):
            record(
                f"citemark {command} -j {jobs}",
                [*citemark_command(), command, str(log), "--field", FIELD, "-q", "-j", str(jobs)],
            )
    return {"log_bytes": size, "cases": rows}


def throughput_markdown(results: dict[str, Any]) -> str:
    cases = results["cases"]
    script = next((c for c in cases if c["case"].startswith("one-line")), None)
    lines = [
        f"JSONL log of {results['log_bytes'] / 1e9:.2f} GB (`benches/make_log.py`), field "
        f"`{FIELD}`; one run, each command once, output to /dev/null.",
        "",
        "| command | wall | MB/s | x script | CPU s | MB per CPU s |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for case in cases:
        ratio = f"{case['mb_per_s'] / script['mb_per_s']:.1f}x" if script else "-"
        lines.append(
            f"| {case['case']} | {case['seconds']:.1f} s | {case['mb_per_s']:,.1f} | {ratio} | "
            f"{case['cpu_seconds']:.1f} | {case['mb_per_cpu_s']:,.1f} |"
        )
    lines += [
        "",
        "CPU s: the command's process with its threads (strip, extract and clean run -j N "
        "in threads); the worker processes of stats -j 2 (and clean --lenient) are "
        "forkserver children, which it does not count.",
    ]
    return "\n".join(lines)


def markdown(results: dict[str, Any]) -> str:
    lines = [
        f"{results['rows']:,} rows, JSONL {results['log_bytes'] / 1e9:.2f} GB, "
        f"Parquet {results['parquet_bytes'] / 1e9:.2f} GB (zstd), "
        f"text column {results['text_bytes'] / 1e9:.2f} GB; {results['cores']} cores",
        "",
        "| command | wall | rows/s | MB/s | peak RSS |",
        "|---|---:|---:|---:|---:|",
    ]
    for case in results["cases"]:
        peak = f"{case['peak_rss_mb']:,.0f} MB" if case["peak_rss_mb"] else "-"
        lines.append(
            f"| {case['case']} | {case['seconds']:.1f} s | {case['rows_per_s']:,} | "
            f"{case['mb_per_s']:,.1f} | {peak} |"
        )
    lines.append("")
    differing = results["regex_rows_differing_sampled"]
    lines.append(
        f"-j 1 and -j 2 outputs identical: {results['jobs_outputs_identical']}; "
        f"regex script differs from the guide's contract on {differing} sampled rows"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(HERE))
    from make_log import parse_size

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=parse_size, default=parse_size("1GB"))
    parser.add_argument("--dir", type=Path, default=Path("/tmp/citemark-bench"))
    parser.add_argument("--repeat", type=int, default=1, help="best of N runs per command")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--throughput", type=Path, metavar="LOG", help="MB/s of every command on this JSONL log"
    )
    args = parser.parse_args(argv)
    if args.throughput:
        found = throughput(args.throughput, args.dir)
        if args.json:
            args.json.write_text(json.dumps(found, indent=2) + "\n", encoding="utf-8")
        print(throughput_markdown(found))
        return 0
    results = run_all(args.size, args.dir, args.repeat)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(markdown(results))
    return 0


def test_batch_small(tmp_path: Path) -> None:
    """Smoke test for `pytest benches`: every command on a 2 MB log, outputs checked."""
    results = run_all(2_000_000, tmp_path, 1)
    assert results["jobs_outputs_identical"]
    assert len(results["cases"]) == 6


if __name__ == "__main__":
    sys.exit(main())
