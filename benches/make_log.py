"""Generate a response log for the batch benchmark: JSONL, and the same rows as Parquet.

    python benches/make_log.py /tmp/citemark-log.jsonl --size 1GB [--parquet /tmp/log.parquet]

Each line is one response record, shaped like what services log:

    {"id": "resp_...", "created_at": ..., "model": ..., "status": "completed",
     "response": {"output_text": "...", "usage": {...}}, "metadata": {...}}

`response.output_text` is prose (a few paragraphs, some non-ASCII) with the markers seen in
real answers: `cite` markers with one to three ids (`turnNsearchM`, `file`, `news`, `view`)
and sometimes a line locator, a few malformed ones (a URL as id, an unclosed START), and other
families (`navlist`, `entity`) that `cite` leaves alone.  Seeded: the same arguments give the
same bytes.  The Parquet file has the columns id, created_at, model and output_text (the text
flattened out of `response`), in row groups of 64k rows.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator
from typing import Any

S, D, E = "\ue200", "\ue202", "\ue201"

_VOCABULARY = (
    "the a of to and in is that for it as with was on be by this are from or at an which "
    "solar panel output warranty year degradation average climate rain dust cleaning "
    "efficiency module inverter battery storage grid tariff installation roof angle shade "
    "report study data source measured estimate percent typical range manufacturer test "
    "temperature coefficient loss gain performance annual lifetime cost price market"
)
WORDS = _VOCABULARY.split(" ")
ACCENTED = ["café", "naïve", "Zürich", "São Paulo", "déjà vu", "Ærø", "coöperate", "façade"]
OTHER = ["—", "…", "“quoted”", "€12", "°C", "±2%", "→", "😀", "中文", "日本語"]
KINDS = ["search", "search", "search", "file", "news", "view"]
MODELS = ["gpt-5", "gpt-5-mini", "gpt-4.1", "o4-mini"]


def marker(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.86:  # a valid cite marker
        ids = [
            f"turn{rng.randint(0, 3)}{rng.choice(KINDS)}{rng.randint(0, 19)}"
            for _ in range(rng.choice((1, 1, 1, 2, 2, 3)))
        ]
        if rng.random() < 0.2:
            start = rng.randint(1, 400)
            ids.append(f"L{start}-L{start + rng.randint(0, 30)}")
        return S + "cite" + D + D.join(ids) + E
    if roll < 0.90:
        return S + "cite" + D + "https://example.com/page" + E  # not a valid id
    if roll < 0.91:
        return S + "cite" + D + f"turn0search{rng.randint(0, 9)}"  # never closed
    if roll < 0.96:
        return S + "navlist" + D + "Recent news" + D + "turn0news1" + D + "turn0news2" + E
    return S + "entity" + D + '["company","ITC Limited","Indian conglomerate"]' + E


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 22))]
    if rng.random() < 0.3:
        words.insert(rng.randrange(len(words)), rng.choice(ACCENTED))
    if rng.random() < 0.15:
        words.insert(rng.randrange(len(words)), rng.choice(OTHER))
    text = " ".join(words)
    text = text[0].upper() + text[1:]
    if rng.random() < 0.55:
        text += " " + marker(rng)
    return text + "."


def output_text(rng: random.Random) -> str:
    paragraphs = []
    for _ in range(rng.randint(2, 5)):
        paragraphs.append(" ".join(sentence(rng) for _ in range(rng.randint(2, 6))))
    return "\n\n".join(paragraphs)


def records(seed: int) -> Iterator[dict[str, Any]]:
    rng = random.Random(seed)
    number = 0
    while True:
        text = output_text(rng)
        yield {
            "id": f"resp_{number:012x}",
            "created_at": 1_750_000_000 + number * 7,
            "model": rng.choice(MODELS),
            "status": "completed",
            "response": {
                "output_text": text,
                "usage": {"input_tokens": rng.randint(200, 9000), "output_tokens": len(text) // 4},
            },
            "metadata": {"user": f"user_{rng.randint(0, 99999):05d}", "tags": ["prod"]},
        }
        number += 1


def parse_size(value: str) -> int:
    units = {"KB": 10**3, "MB": 10**6, "GB": 10**9}
    for unit, factor in units.items():
        if value.upper().endswith(unit):
            return int(float(value[: -len(unit)]) * factor)
    return int(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", help="the JSONL file to write")
    parser.add_argument("--size", type=parse_size, default=parse_size("1GB"), help="e.g. 1GB")
    parser.add_argument("--parquet", help="also write the same rows here as Parquet")
    parser.add_argument("--seed", type=int, default=20250601)
    parser.add_argument("--ascii", action="store_true", help="\\uXXXX escapes, not UTF-8")
    args = parser.parse_args(argv)

    writer: Any = None
    batch: dict[str, list[Any]] = {"id": [], "created_at": [], "model": [], "output_text": []}
    if args.parquet:
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = pa.schema(
            [
                ("id", pa.string()),
                ("created_at", pa.int64()),
                ("model", pa.string()),
                ("output_text", pa.string()),
            ]
        )
        writer = pq.ParquetWriter(args.parquet, schema, compression="zstd")

    def flush() -> None:
        if writer is not None and batch["id"]:
            writer.write_table(pa.table(batch, schema=schema), row_group_size=1 << 16)
            for values in batch.values():
                values.clear()

    written = rows = 0
    with open(args.output, "wb") as handle:
        for record in records(args.seed):
            line = json.dumps(record, ensure_ascii=args.ascii).encode("utf-8") + b"\n"
            handle.write(line)
            written += len(line)
            rows += 1
            if writer is not None:
                batch["id"].append(record["id"])
                batch["created_at"].append(record["created_at"])
                batch["model"].append(record["model"])
                batch["output_text"].append(record["response"]["output_text"])
                if len(batch["id"]) >= 1 << 16:
                    flush()
            if written >= args.size:
                break
    flush()
    if writer is not None:
        writer.close()
    print(f"{args.output}: {rows:,} rows, {written:,} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
