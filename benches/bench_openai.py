"""`citemark.openai`'s own cost per event against the SDK's parsing of the same events.

Target: the adapter's own cost per event at most 5% of what the `openai` SDK spends turning
the same event from its wire form into an object: its server-sent-event decoder, then
`json.loads` and `openai._models.construct_type(type_=ResponseStreamEvent, ...)`, what its
`Stream` and `AsyncStream` do for every event.

Rows, per stream (group "openai <stream>"), each over every event of the stream:

- "sdk": the SDK's parsing, from the bytes of the stream (the reference of every ratio);
- "sse": its server-sent-event decoding alone;
- "validate": pydantic validation of each event's JSON (`TypeAdapter.validate_json`), what a
  server that validates would pay instead (fast for chat chunks, one model; slow for
  Responses events, a union of some sixty models without a discriminator);
- "adapter": `clean_responses` over the SDK's objects (everything citemark does);
- "stream": `CleanStream(mapped=True)` fed the same text deltas (the cleaning itself, which
  benches/bench_clean.py and the stream speed work measure);
- "adapter-dicts": `clean_responses` over the parsed JSON dicts;
- "adapter-async": `aclean_responses` over an async iterator of the SDK's objects, as a server
  on `AsyncOpenAI` runs it (the iterator's own cost included: a server's stream has one too).

The adapter's own cost is "adapter" minus "stream": the event handling around the
cleaning.  Streams: the recorded-shape fixtures of tests/data/openai, and a 4 KB typical
answer (benches/corpus.py) in model-like deltas of about 4 characters, as a Responses stream
and as Chat Completions chunks ("adapter" is then `clean_chat`).

Run: ``pytest benches/bench_openai.py -q`` (pytest-benchmark), or
``python benches/bench_openai.py`` for medians per event and ratios from one run.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Callable
from math import nan
from pathlib import Path
from typing import Any

import pytest

from _common import ensure_citemark_importable, median_time, timed

ensure_citemark_importable()

from openai._models import construct_type  # noqa: E402
from openai._streaming import SSEDecoder  # noqa: E402
from openai.types.chat import ChatCompletionChunk  # noqa: E402
from openai.types.responses import ResponseStreamEvent  # noqa: E402
from pydantic import TypeAdapter, ValidationError  # noqa: E402

from citemark.display import CleanStream  # noqa: E402
from citemark.openai import aclean_chat, aclean_responses, clean_chat, clean_responses  # noqa: E402
from corpus import typical_answer  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "openai"


def model_deltas(text: str, seed: int = 7) -> list[str]:
    """Deltas of 1 to 8 characters (about 4 on average), as models send them."""
    rng = random.Random(seed)
    out, at = [], 0
    while at < len(text):
        size = rng.choice([1, 2, 3, 4, 4, 5, 6, 8])
        out.append(text[at : at + size])
        at += size
    return out


def answer_stream(text: str) -> list[dict[str, Any]]:
    """A Responses stream of one message whose text is `text`, in the recorded order."""
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    item = {
        "id": "msg_1",
        "type": "message",
        "status": "in_progress",
        "content": [],
        "role": "assistant",
    }
    response = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": "in_progress",
        "model": "m",
        "output": [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": response},
        {"type": "response.output_item.added", "item": item, "output_index": 0},
        {
            "type": "response.content_part.added",
            **where,
            "part": {"type": "output_text", "annotations": [], "text": ""},
        },
    ]
    for delta in model_deltas(text):
        events.append(
            {
                "type": "response.output_text.delta",
                **where,
                "delta": delta,
                "logprobs": [],
                "obfuscation": "abcdef",
            }
        )
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": text}
    done_item = {**item, "status": "completed", "content": [part]}
    events += [
        {"type": "response.output_text.done", **where, "text": text, "logprobs": []},
        {"type": "response.content_part.done", **where, "part": part},
        {"type": "response.output_item.done", "item": done_item, "output_index": 0},
        {
            "type": "response.completed",
            "response": {**response, "status": "completed", "output": [done_item]},
        },
    ]
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return events


def chat_stream(text: str) -> list[dict[str, Any]]:
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    chunks = [
        {
            **base,
            "choices": [
                {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
            ],
        }
    ]
    for delta in model_deltas(text):
        chunks.append(
            {**base, "choices": [{"index": 0, "delta": {"content": delta}, "finish_reason": None}]}
        )
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return chunks


def recorded(name: str) -> list[dict[str, Any]]:
    lines = (DATA / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


STREAMS: dict[str, Callable[[], tuple[str, list[dict[str, Any]]]]] = {
    "typical_4KB": lambda: ("responses", answer_stream(typical_answer())),
    "typical_4KB_chat": lambda: ("chat", chat_stream(typical_answer())),
    "web_search": lambda: ("responses", recorded("web_search")),
    "several_parts": lambda: ("responses", recorded("several_parts")),
    # Real streams (openai-dotnet's session records): deltas as a model's tokens cut them.
    "real_responses": lambda: ("responses", recorded("recorded/dotnet_responses_pizza")),
    "real_chat": lambda: ("chat", recorded("recorded/dotnet_chat_pizza")),
}

_RESPONSES = TypeAdapter(ResponseStreamEvent)
_CHUNK = TypeAdapter(ChatCompletionChunk)


def _validates(validator: TypeAdapter[Any], line: str) -> bool:
    try:
        validator.validate_json(line)
    except ValidationError:
        return False
    return True


class Case:
    """One stream, in every form the rows read."""

    def __init__(self, name: str) -> None:
        self.api, self.dicts = STREAMS[name]()
        self.kind: Any = ResponseStreamEvent if self.api == "responses" else ChatCompletionChunk
        self.wire = [json.dumps(event, ensure_ascii=False) for event in self.dicts]
        # As the API sends them: Responses events named by their type, chat chunks bare.
        self.bytes = "".join(
            f"event: {event['type']}\ndata: {line}\n\n"
            if self.api == "responses"
            else f"data: {line}\n\n"
            for event, line in zip(self.dicts, self.wire, strict=True)
        ).encode()
        self.models = self.sdk()
        if self.api == "responses":
            self.deltas = [
                e["delta"] for e in self.dicts if e["type"] == "response.output_text.delta"
            ]
        else:
            self.deltas = [
                c["choices"][0]["delta"].get("content") or "" for c in self.dicts if c["choices"]
            ]
        self.adapter = clean_responses if self.api == "responses" else clean_chat
        self.aadapter = aclean_responses if self.api == "responses" else aclean_chat
        self.validator = _RESPONSES if self.api == "responses" else _CHUNK
        # A recorded stream may hold what this SDK's models do not validate (a newer field):
        # no "validate" row for it.
        self.valid = all(_validates(self.validator, line) for line in self.wire)

    def sdk(self) -> list[Any]:
        kind = self.kind
        events = SSEDecoder().iter_bytes(iter([self.bytes]))
        return [construct_type(type_=kind, value=json.loads(event.data)) for event in events]

    def sse(self) -> list[Any]:
        return list(SSEDecoder().iter_bytes(iter([self.bytes])))

    def validate(self) -> list[Any]:
        validate = self.validator.validate_json
        return [validate(line) for line in self.wire]

    def run_adapter(self) -> list[Any]:
        return list(self.adapter(self.models))

    def run_dicts(self) -> list[Any]:
        return list(self.adapter(self.dicts))

    def run_async(self) -> list[Any]:
        return _LOOP.run_until_complete(self._collect())

    async def _collect(self) -> list[Any]:
        async def source() -> AsyncIterator[Any]:
            for event in self.models:
                yield event

        return [event async for event in self.aadapter(source())]

    def stream(self) -> str:
        stream = CleanStream(mapped=True)
        feed = stream.feed
        return "".join([feed(delta) for delta in self.deltas]) + stream.close()


ROWS: dict[str, Callable[[Case], Any]] = {
    "sdk": Case.sdk,
    "sse": Case.sse,
    "validate": Case.validate,
    "adapter": Case.run_adapter,
    "stream": Case.stream,
    "adapter-dicts": Case.run_dicts,
    "adapter-async": Case.run_async,
}

# One event loop for every async row (a loop made per call would cost more than the stream).
_LOOP = asyncio.new_event_loop()

_CASES: dict[str, Case] = {}


def case(name: str) -> Case:
    if name not in _CASES:
        _CASES[name] = Case(name)
    return _CASES[name]


@pytest.mark.parametrize("row", list(ROWS))
@pytest.mark.parametrize("stream", list(STREAMS))
def test_openai(benchmark: Any, stream: str, row: str) -> None:
    if row == "validate" and not case(stream).valid:
        pytest.skip("this SDK's models do not validate every event of the recorded stream")
    benchmark.group = f"openai {stream}"
    benchmark.extra_info["events"] = len(case(stream).dicts)
    timed(benchmark, ROWS[row], case(stream))


def main() -> None:
    """Medians per event and ratios to the SDK's parsing, all from this one run."""
    print("medians per event (us), one run; own = adapter - stream")
    print(f"{'stream':18} {'events':>6} " + " ".join(f"{row:>13}" for row in ROWS))
    for name in STREAMS:
        one = case(name)
        times = {
            row: median_time(function, one, budget=1.5) if row != "validate" or one.valid else nan
            for row, function in ROWS.items()
        }
        per_event = {row: 1e6 * t / len(one.dicts) for row, t in times.items()}
        own = times["adapter"] - times["stream"]
        cells = " ".join(f"{per_event[row]:13.2f}" for row in ROWS)
        print(f"{name:18} {len(one.dicts):6} {cells}")
        print(
            f"{'':25} own/sdk {own / times['sdk']:.1%}, adapter/sdk "
            f"{times['adapter'] / times['sdk']:.1%}, own/sse {own / times['sse']:.1%}, "
            f"own/validate {own / times['validate']:.1%}, "
            f"adapter-dicts/sdk {times['adapter-dicts'] / times['sdk']:.1%}, "
            f"adapter-async/adapter {times['adapter-async'] / times['adapter']:.2f}"
        )


if __name__ == "__main__":
    main()
