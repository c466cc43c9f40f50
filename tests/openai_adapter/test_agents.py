"""`citemark.openai` under an OpenAI Agents SDK run, as docs/openai.md shows it: the run's
stream events through `aclean_responses`, and its raw events (its model calls' Responses
streams, one after another) relayed through one `ResponsesCleaner`.  The agent is the real
SDK's, its model the SDK's `OpenAIResponsesModel` talking over HTTP to an upstream on
127.0.0.1 that answers the first call with a tool call (after some text) and the second with
the answer, both with markers at output 0."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from agents import (
    Agent,
    ItemHelpers,
    OpenAIResponsesModel,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from fastapi import FastAPI, Request
from fastapi.responses import StreamingResponse
from openai import AsyncOpenAI

from citemark.display import clean
from citemark.openai import ResponsesCleaner, aclean_responses
from test_server import WAIT, serving

S, D, E = "\ue200", "\ue202", "\ue201"
FIRST = "Let me look that up " + S + "cite" + D + "turn0search0" + E + "."
SECOND = "Kyoto has temples " + S + "cite" + D + "turn0search3" + E + " and gardens."
CALL = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_1",
    "name": "lookup",
    "arguments": '{"city": "Kyoto"}',
    "status": "completed",
}


def model_call(text: str, tool_call: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """A Responses stream in the API's order: a message with `text` at output 0, in deltas
    of 5 characters, then `tool_call` at output 1, if any."""
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress"}
    part = {"type": "output_text", "annotations": [], "text": text}
    done_message = {**message, "status": "completed", "content": [part]}
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
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**message, "content": []},
        },
        {"type": "response.content_part.added", **where, "part": {**part, "text": ""}},
        *(
            {"type": "response.output_text.delta", **where, "delta": text[at : at + 5]}
            for at in range(0, len(text), 5)
        ),
        {"type": "response.output_text.done", **where, "text": text},
        {"type": "response.content_part.done", **where, "part": part},
        {"type": "response.output_item.done", "output_index": 0, "item": done_message},
    ]
    output = [done_message]
    if tool_call is not None:
        events += [
            {
                "type": "response.output_item.added",
                "output_index": 1,
                "item": {**tool_call, "status": "in_progress", "arguments": ""},
            },
            {"type": "response.output_item.done", "output_index": 1, "item": tool_call},
        ]
        output.append(tool_call)
    final = {**response, "status": "completed", "output": output}
    events.append({"type": "response.completed", "response": final})
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return events


def upstream_app(calls: list[list[dict[str, Any]]], served: list[int]) -> FastAPI:
    """Answers the n-th request for a response with calls[n], as server-sent events."""
    app = FastAPI()

    @app.post("/v1/responses")
    async def responses(request: Request) -> StreamingResponse:
        events = calls[len(served)]
        served.append(len(served))

        async def body() -> AsyncIterator[str]:
            for event in events:
                yield f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"

        return StreamingResponse(body(), media_type="text/event-stream")

    return app


@function_tool
def lookup(city: str) -> str:
    """Facts about a city."""
    return f"{city}: temples and gardens"


def agent(client: AsyncOpenAI) -> Agent[Any]:
    model = OpenAIResponsesModel(model="m", openai_client=client)
    return Agent(name="guide", instructions="Answer.", tools=[lookup], model=model)


async def relay(url: str, question: str, implementation: str) -> list[Any]:
    """The raw events' Responses events through one cleaner, what it gives back kept."""
    async with AsyncOpenAI(base_url=url, api_key="test", max_retries=0) as client:
        sent: list[Any] = []
        result = Runner.run_streamed(agent(client), input=question)
        cleaner = ResponsesCleaner(implementation=implementation)  # type: ignore[arg-type]
        async for event in result.stream_events():
            if event.type == "raw_response_event":
                sent += cleaner.feed(event.data)
        sent += cleaner.close()
        return sent


async def whole_run(url: str, question: str, implementation: str) -> list[Any]:
    """docs/openai.md's relay: every event of the run through `aclean_responses`."""
    async with AsyncOpenAI(base_url=url, api_key="test", max_retries=0) as client:
        result = Runner.run_streamed(agent(client), input=question)
        events = aclean_responses(result.stream_events(), implementation=implementation)  # type: ignore[arg-type]
        out = [event async for event in events]
        assert result.final_output == SECOND  # the SDK's own, raw: docs/openai.md cleans it
        return out


def run(implementation: str, relayed: Any) -> tuple[list[Any], list[int]]:
    set_tracing_disabled(True)  # (no export of the run to OpenAI's tracing)
    served: list[int] = []
    with serving(upstream_app([model_call(FIRST, CALL), model_call(SECOND)], served)) as url:
        sent = asyncio.run(asyncio.wait_for(relayed(url + "/v1", "Kyoto?", implementation), WAIT))
    assert served == [0, 1]  # the tool call made the agent call its model again
    return sent, served


def check_calls(events: list[Any]) -> None:
    """Each model call's events: the text of its deltas and of its completed response is
    clean, in order."""
    created = [n for n, event in enumerate(events) if event.type == "response.created"]
    assert len(created) == 2
    for call, raw in zip(
        (events[: created[1]], events[created[1] :]), (FIRST, SECOND), strict=True
    ):
        deltas = "".join(e.delta for e in call if e.type == "response.output_text.delta")
        assert deltas == clean(raw)
        (completed,) = [e for e in call if e.type == "response.completed"]
        assert completed.response.output_text == clean(raw)


def test_an_agent_run_relayed_through_one_cleaner(implementation: str) -> None:
    sent, _ = run(implementation, relay)
    check_calls(sent)


def test_an_agent_run_through_aclean_responses(implementation: str) -> None:
    """`aclean_responses(result.stream_events())`: the raw events come out cleaned in copies
    of their wrappers, the messages of the run items with their clean text, the rest as it
    came."""
    events, _ = run(implementation, whole_run)
    kinds = [event.type for event in events]
    assert set(kinds) >= {
        "raw_response_event",
        "run_item_stream_event",
        "agent_updated_stream_event",
    }
    check_calls([event.data for event in events if event.type == "raw_response_event"])
    items = [event for event in events if event.type == "run_item_stream_event"]
    messages = [
        ItemHelpers.text_message_output(event.item)
        for event in items
        if event.name == "message_output_created"
    ]
    assert messages == [clean(FIRST), clean(SECOND)]
    assert "tool_called" in [event.name for event in items]
