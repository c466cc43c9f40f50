"""`citemark.openai` under an OpenAI Agents SDK run, as docs/openai.md shows it: the run's
stream events through `aclean_responses`, and its raw events (its model calls' Responses
streams, one after another) relayed through one `ResponsesCleaner`.  The agent is the real
SDK's, its model the SDK's `OpenAIResponsesModel` talking over HTTP to an upstream on
127.0.0.1 that answers with recorded-shape streams (markers split across deltas): the first
call's also calls a tool, so the agent calls its model again.  And an agent on a Chat
Completions model, whose chunks the SDK turns into Responses events."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncIterator
from typing import Any

from agents import (
    Agent,
    ItemHelpers,
    OpenAIChatCompletionsModel,
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
from test_openai import load, texts
from test_server import DATA, WAIT, server, serving

CALL = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_1",
    "name": "lookup",
    "arguments": '{"city": "Kyoto"}',
    "status": "completed",
}
# The model's two calls: a recorded-shape web search answer (its message at output 1) that
# also calls the tool, then an answer with a reasoning item and two messages (text at output 1
# again: where the old adapter raised).
FIRST, SECOND = "web_search", "several_parts"


def with_tool_call(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A recorded-shape stream whose response also calls the `lookup` tool, after its other
    output items (a model's tool call, as the API streams it)."""
    *body, completed = copy.deepcopy(events)
    output = completed["response"]["output"]
    at = len(output)
    output.append(CALL)
    body += [
        {
            "type": "response.output_item.added",
            "output_index": at,
            "item": {**CALL, "status": "in_progress", "arguments": ""},
        },
        {"type": "response.output_item.done", "output_index": at, "item": CALL},
        completed,
    ]
    for number, event in enumerate(body):
        event["sequence_number"] = number
    return body


def calls() -> list[list[dict[str, Any]]]:
    return [with_tool_call(load(FIRST)), load(SECOND)]


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
        # The SDK's own result, untouched: its last message's raw text (docs/openai.md).
        assert result.final_output == texts(load(SECOND))[(2, 0)]
        return out


def run(implementation: str, relayed: Any) -> list[Any]:
    """What `relayed` gives for an agent's run against the upstream of `calls()`."""
    set_tracing_disabled(True)  # (no export of the run to OpenAI's tracing)
    served: list[int] = []
    with serving(upstream_app(calls(), served)) as url:
        sent = asyncio.run(asyncio.wait_for(relayed(url + "/v1", "Kyoto?", implementation), WAIT))
    assert served == [0, 1]  # the tool call made the agent call its model again
    return sent


def check_calls(events: list[Any]) -> None:
    """Each model call's Responses events (the SDK's objects): the text of each part's deltas
    is its raw text clean, and so is the text of its completed response."""
    created = [n for n, event in enumerate(events) if event.type == "response.created"]
    assert len(created) == 2
    for call, upstream in zip((events[: created[1]], events[created[1] :]), calls(), strict=True):
        sent = texts([event.to_dict() for event in call])
        assert sent == {part: clean(text) for part, text in texts(upstream).items()}
        (completed,) = [e for e in call if e.type == "response.completed"]
        assert completed.response.output_text == "".join(sent[part] for part in sorted(sent))


def test_an_agent_run_relayed_through_one_cleaner(implementation: str) -> None:
    sent = run(implementation, relay)
    check_calls(sent)


def test_an_agent_run_through_aclean_responses(implementation: str) -> None:
    """`aclean_responses(result.stream_events())`: the raw events come out cleaned in copies
    of their wrappers, the messages of the run items with their clean text, the rest as it
    came."""
    events = run(implementation, whole_run)
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
    expected = [
        "".join(clean(text) for (output, _), text in sorted(texts(call).items()) if output == item)
        for call in calls()
        for item in sorted({output for output, _ in texts(call)})
    ]
    assert messages == expected
    assert "tool_called" in [event.name for event in items]


async def chat_run(url: str, implementation: str) -> tuple[list[Any], str]:
    async with AsyncOpenAI(base_url=url, api_key="test", max_retries=0) as client:
        model = OpenAIChatCompletionsModel(model="chat", openai_client=client)
        result = Runner.run_streamed(Agent(name="guide", model=model), input="Pizza?")
        events = aclean_responses(result.stream_events(), implementation=implementation)  # type: ignore[arg-type]
        return [event async for event in events], result.final_output


def test_an_agent_on_a_chat_model(implementation: str) -> None:
    """An agent on Chat Completions (`OpenAIChatCompletionsModel`, against the example
    server's replay of a recorded chat stream): the SDK turns the chunks into Responses
    events, its own placeholder for every item id, and they clean as any other."""
    set_tracing_disabled(True)
    with serving(server.replay_app(DATA, default={"chat": "chat"})) as url:
        events, final = asyncio.run(asyncio.wait_for(chat_run(url + "/v1", implementation), WAIT))
    data = [event.data for event in events if event.type == "raw_response_event"]
    deltas = "".join(e.delta for e in data if e.type == "response.output_text.delta")
    assert "\ue200" in final  # the SDK's own result: the recorded answer, markers and all
    assert deltas == clean(final)
    messages = [
        ItemHelpers.text_message_output(event.item)
        for event in events
        if event.type == "run_item_stream_event" and event.name == "message_output_created"
    ]
    assert messages == [deltas]
