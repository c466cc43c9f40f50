"""`citemark.openai` on the `openai` SDK's own objects: the same events as for dicts, of the
same classes, extra fields kept.  The events are built the way the SDK builds what it reads
from the wire (`openai._models.construct_type`, which its streams call on every event)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openai._models import construct_type
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent, ResponseTextDeltaEvent

from citemark.display import clean
from citemark.openai import clean_chat, clean_completion, clean_response, clean_responses

DATA = Path(__file__).parents[1] / "data" / "openai"
STREAMS = ["web_search", "file_search", "several_parts", "cut", "incomplete"]
MARKER = "\ue200cite\ue202turn0search0\ue201"


def load(name: str) -> list[dict[str, Any]]:
    lines = (DATA / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def sdk(events: list[dict[str, Any]], kind: Any) -> list[Any]:
    return [construct_type(type_=kind, value=event) for event in events]


@pytest.mark.parametrize("name", STREAMS)
def test_sdk_events_clean_as_dicts_do(implementation: str, name: str) -> None:
    upstream = load(name)
    models = sdk(upstream, ResponseStreamEvent)
    out = list(clean_responses(models, implementation=implementation))  # type: ignore[arg-type]
    expected = list(clean_responses(upstream, implementation=implementation))  # type: ignore[arg-type]
    assert [event.to_dict() for event in out] == expected
    by_number = {event.sequence_number: type(event) for event in models}
    assert all(type(event) is by_number[event.sequence_number] for event in out)


def test_extra_fields_stay() -> None:
    models = sdk(load("web_search"), ResponseStreamEvent)
    deltas = [e for e in clean_responses(models) if e.type == "response.output_text.delta"]
    assert deltas
    assert all(isinstance(e, ResponseTextDeltaEvent) for e in deltas)
    assert all(e.model_extra and e.model_extra.get("obfuscation") for e in deltas)
    assert all(e.to_dict()["obfuscation"] for e in deltas)


def test_a_done_event_alone_makes_an_sdk_delta() -> None:
    raw = "only done " + MARKER + " here"
    event = {
        "type": "response.output_text.done",
        "item_id": "msg",
        "output_index": 0,
        "content_index": 0,
        "text": raw,
        "logprobs": [],
        "sequence_number": 3,
    }
    out = list(clean_responses(sdk([event], ResponseStreamEvent)))
    assert isinstance(out[0], ResponseTextDeltaEvent)
    assert out[0].delta == out[1].text == clean(raw)
    assert out[0].item_id == "msg"


def test_chat_chunks(implementation: str) -> None:
    upstream = load("chat")
    models = sdk(upstream, ChatCompletionChunk)
    out = list(clean_chat(models, implementation=implementation))  # type: ignore[arg-type]
    expected = list(clean_chat(upstream, implementation=implementation))  # type: ignore[arg-type]
    assert [chunk.to_dict() for chunk in out] == expected
    assert all(isinstance(chunk, ChatCompletionChunk) for chunk in out)


def test_whole_results(implementation: str) -> None:
    final = load("several_parts")[-1]["response"]
    response = construct_type(type_=Response, value=final)
    cleaned = clean_response(response, implementation=implementation)  # type: ignore[arg-type]
    assert isinstance(cleaned, Response)
    assert cleaned.to_dict() == clean_response(final, implementation=implementation)  # type: ignore[arg-type]
    assert "\ue200" not in cleaned.output_text.replace("\ue200cite\ue202turn0file1\ue201", "")
    raw = "Pizza comes from Naples " + MARKER + "."
    completion = construct_type(
        type_=ChatCompletion,
        value={
            "id": "c",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {
                        "role": "assistant",
                        "content": raw,
                        "annotations": [
                            {
                                "type": "url_citation",
                                "url_citation": {
                                    "start_index": raw.index("Naples"),
                                    "end_index": len(raw),
                                    "title": "t",
                                    "url": "u",
                                },
                            }
                        ],
                    },
                }
            ],
        },
    )
    done = clean_completion(completion, implementation=implementation)  # type: ignore[arg-type]
    assert isinstance(done, ChatCompletion)
    message = done.choices[0].message
    assert message.content == "Pizza comes from Naples."
    assert message.annotations is not None
    citation = message.annotations[0].url_citation
    assert message.content[citation.start_index : citation.end_index] == "Naples."
