"""`citemark.openai` on the `openai` SDK's own objects: the same events as for dicts, of the
same classes, extra fields kept.  The events are built the way the SDK builds what it reads
from the wire (`openai._models.construct_type`, which its streams call on every event)."""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any, ClassVar

import pytest
from openai import AsyncOpenAI, OpenAI
from openai._models import construct_type
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent, ResponseTextDeltaEvent
from pydantic import BaseModel, PrivateAttr

from citemark.display import clean
from citemark.openai import (
    _with,
    aclean_chat,
    aclean_responses,
    clean_chat,
    clean_completion,
    clean_response,
    clean_responses,
)
from test_openai import load, without_indices

# The SDK's HTTP client library: httpx2 from openai 3 on, httpx before.
http: Any = importlib.import_module("httpx2" if importlib.util.find_spec("httpx2") else "httpx")
STREAMS = ["web_search", "file_search", "several_parts", "cut", "incomplete"]
MARKER = "\ue200cite\ue202turn0search0\ue201"


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


def test_sdk_events_of_responses_one_after_another_clean_as_dicts_do(implementation: str) -> None:
    upstream = load("several_parts") + load("web_search")
    out = list(clean_responses(sdk(upstream, ResponseStreamEvent), implementation=implementation))  # type: ignore[arg-type]
    expected = list(clean_responses(upstream, implementation=implementation))  # type: ignore[arg-type]
    assert [event.to_dict() for event in out] == expected


def test_sdk_events_without_their_indices_clean_as_dicts_do(implementation: str) -> None:
    """The SDK does not validate what a Responses-compatible server sends: events without
    `output_index` or `content_index` reach the adapter as models without those fields."""
    upstream = without_indices(load("web_search"), "lemonade")
    out = list(clean_responses(sdk(upstream, ResponseStreamEvent), implementation=implementation))  # type: ignore[arg-type]
    expected = list(clean_responses(upstream, implementation=implementation))  # type: ignore[arg-type]
    assert [event.to_dict() for event in out] == expected
    assert any(MARKER[0] in event.get("delta", "") for event in upstream)
    chunks = [
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"delta": {"content": piece}, "finish_reason": None}],
        }
        for piece in ["Tides ", MARKER[:6], MARKER[6:], " turn."]
    ]
    cleaned = list(clean_chat(sdk(chunks, ChatCompletionChunk), implementation=implementation))  # type: ignore[arg-type]
    assert "".join(chunk.choices[0].delta.content or "" for chunk in cleaned) == "Tides turn."


@pytest.mark.parametrize("validated", [False, True])
def test_a_choice_text_beside_the_delta_is_cleaned_in_models_too(
    implementation: str, validated: bool
) -> None:
    """Together's `choices[].text` repeats the delta's content; the SDK's Choice has no such
    field, so the model carries it as an extra (in `__pydantic_extra__` when validated, as a
    model read back from a log is), which must be cleaned as the dict's is."""
    chunks = [
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "text": piece,
                    "seed": None,
                    "delta": {"role": "assistant", "content": piece, "token_id": 16},
                }
            ],
        }
        for piece in ["Capital", " " + MARKER, " of", " Denmark"]
    ]
    models = (
        [ChatCompletionChunk.model_validate(chunk) for chunk in chunks]
        if validated
        else sdk(chunks, ChatCompletionChunk)
    )
    out = list(clean_chat(models, implementation=implementation))  # type: ignore[arg-type]
    texts = [chunk.choices[0].model_extra["text"] for chunk in out]
    assert texts == [chunk.choices[0].delta.content for chunk in out]
    assert "".join(texts) == "Capital of Denmark"


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


def test_a_chat_stream_cut_after_a_tool_call_sends_only_the_held_text() -> None:
    base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"arguments": "{}"}}
    upstream = [
        {**base, "choices": [{"index": 0, "delta": {"content": "Let me check "}}]},
        {**base, "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
    ]
    out = list(clean_chat(sdk(upstream, ChatCompletionChunk)))
    last = out[-1].choices[0].delta
    assert (last.content, last.tool_calls, last.role) == (" ", None, None)
    assert out[-1].to_dict()["choices"][0]["delta"] == {"content": " "}


def test_chat_logprobs_move_as_for_dicts() -> None:
    def chunk(content: str) -> dict[str, Any]:
        token = {"token": content, "logprob": -0.5, "bytes": [1], "top_logprobs": []}
        return {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "delta": {"content": content},
                    "logprobs": {"content": [token], "refusal": None},
                    "finish_reason": None,
                }
            ],
        }

    upstream = [chunk("Hello "), chunk("world"), chunk(" " + MARKER), chunk(".")]
    out = list(clean_chat(sdk(upstream, ChatCompletionChunk)))
    assert [c.to_dict() for c in out] == list(clean_chat(upstream))
    assert [t.token for t in out[1].choices[0].logprobs.content] == ["Hello ", "world"]


def completion_of(message: dict[str, Any]) -> Any:
    """A ChatCompletion with one choice, finished, holding `message`, as the SDK reads it."""
    value = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
    }
    return construct_type(type_=ChatCompletion, value=value)


def test_whole_results(implementation: str) -> None:
    final = load("several_parts")[-1]["response"]
    response = construct_type(type_=Response, value=final)
    cleaned = clean_response(response, implementation=implementation)  # type: ignore[arg-type]
    assert isinstance(cleaned, Response)
    assert cleaned.to_dict() == clean_response(final, implementation=implementation)  # type: ignore[arg-type]
    assert "\ue200" not in cleaned.output_text.replace("\ue200cite\ue202turn0file1\ue201", "")
    raw = "Pizza comes from Naples " + MARKER + "."
    citation = {"start_index": raw.index("Naples"), "end_index": len(raw), "title": "t", "url": "u"}
    annotations = [{"type": "url_citation", "url_citation": citation}]
    completion = completion_of({"role": "assistant", "content": raw, "annotations": annotations})
    done = clean_completion(completion, implementation=implementation)  # type: ignore[arg-type]
    assert isinstance(done, ChatCompletion)
    message = done.choices[0].message
    assert message.content == "Pizza comes from Naples."
    assert message.annotations is not None
    citation = message.annotations[0].url_citation
    assert message.content[citation.start_index : citation.end_index] == "Naples."


def _slots(model: Any) -> tuple[Any, ...]:
    return (
        type(model),
        model.__dict__,
        model.__pydantic_extra__,
        model.__pydantic_fields_set__,
        getattr(model, "__pydantic_private__", None),
    )


@pytest.mark.parametrize(
    "changes",
    [
        {"content": "clean"},
        {"content": "clean", "annotations": []},  # not a declared field: an extra one
        {"role": None, "refusal": "no"},
    ],
)
def test_the_adapter_copies_a_model_as_model_copy_does(changes: dict[str, Any]) -> None:
    # _with sets pydantic's four slots itself (model_copy's generic copies were a third of a
    # delta's handling): every slot must come out as model_copy's.
    chunk = construct_type(
        type_=ChatCompletionChunk,
        value={
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "obfuscation": "xyz",
            "choices": [{"index": 0, "delta": {"content": "raw", "more": 1}}],
        },
    )
    delta = chunk.choices[0].delta
    for model, update in ((delta, changes), (chunk, {"choices": []})):
        expected = model.model_copy(update=update)
        copied = _with(model, update)
        assert _slots(copied) == _slots(expected)
        assert copied is not model
        assert copied.__dict__ is not model.__dict__
        assert copied.__pydantic_fields_set__ is not model.__pydantic_fields_set__
        assert copied.__pydantic_extra__ is not model.__pydantic_extra__
        assert copied.to_dict() == expected.to_dict()
    assert _slots(delta) == _slots(chunk.choices[0].delta)  # the original is untouched


def test_a_model_that_copies_itself_is_copied_by_its_own_model_copy() -> None:
    class Counted(BaseModel):
        text: str
        copies: ClassVar[list[str]] = []

        def model_copy(self, *, update: Any = None, deep: bool = False) -> Any:
            Counted.copies.append(self.text)
            return super().model_copy(update=update, deep=deep)

    class Private(BaseModel):
        text: str
        _seen: int = PrivateAttr(default=3)

    assert _with(Counted(text="a"), {"text": "b"}).text == "b"
    assert Counted.copies == ["a"]
    private = _with(Private(text="a"), {"text": "b"})
    assert (private.text, private._seen) == ("b", 3)


# --- closing ---------------------------------------------------------------------------------


def sse(events: list[dict[str, Any]], named: bool) -> Iterator[bytes]:
    for event in events:
        name = f"event: {event['type']}\n" if named else ""
        yield f"{name}data: {json.dumps(event)}\n\n".encode()


def test_closing_the_clean_stream_closes_the_sdk_stream() -> None:
    """A reader that stops early (a client gone) and closes what clean_responses gave it
    closes the SDK's stream under it, its HTTP response with it."""
    upstream = load("web_search")

    def answer(request: Any) -> Any:
        return http.Response(
            200, headers={"content-type": "text/event-stream"}, content=sse(upstream, named=True)
        )

    client = OpenAI(
        base_url="http://upstream.test/v1",
        api_key="unused",
        http_client=http.Client(transport=http.MockTransport(answer)),
    )
    with client:
        stream = client.responses.create(model="m", input="hi", stream=True)
        cleaned = clean_responses(stream)
        assert next(cleaned).type == "response.created"
        assert not stream.response.is_closed
        cleaned.close()
        assert stream.response.is_closed


def test_closing_the_async_clean_stream_closes_the_sdk_stream() -> None:
    upstream = load("chat")

    async def body() -> AsyncIterator[bytes]:
        for piece in sse(upstream, named=False):
            yield piece

    def answer(request: Any) -> Any:
        return http.Response(200, headers={"content-type": "text/event-stream"}, content=body())

    async def run() -> None:
        transport = http.MockTransport(answer)
        async with AsyncOpenAI(
            base_url="http://upstream.test/v1",
            api_key="unused",
            http_client=http.AsyncClient(transport=transport),
        ) as client:
            stream = await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}], stream=True
            )
            cleaned = aclean_chat(stream)
            assert (await cleaned.__anext__()).choices
            assert not stream.response.is_closed
            await cleaned.aclose()
            assert stream.response.is_closed

    asyncio.run(run())


def test_closing_closes_a_generator_read_from() -> None:
    """Any source with close() (aclose() for async ones) is closed with the clean stream; a
    list, which has none, reads as before."""
    events = load("web_search")
    finished: list[str] = []

    def source() -> Iterator[dict[str, Any]]:
        try:
            yield from events
        finally:
            finished.append("sync")

    async def asource() -> AsyncIterator[dict[str, Any]]:
        try:
            for event in events:
                yield event
        finally:
            finished.append("async")

    read = source()  # (held here: closed by the clean stream, not by the collector)
    cleaned = clean_responses(read)
    next(cleaned)
    cleaned.close()
    assert finished == ["sync"]

    async def run() -> None:
        aread = asource()
        acleaned = aclean_responses(aread)
        await acleaned.__anext__()
        await acleaned.aclose()
        assert finished == ["sync", "async"]

    asyncio.run(run())
    assert len(list(clean_responses(events))) > 1  # a list: nothing to close


# --- the SDK's stream helpers and structured outputs ------------------------------------------


class City(BaseModel):
    city: str
    note: str


STRUCTURED = json.dumps(
    {"city": "Kyoto " + MARKER, "note": "old " + MARKER + "."}, ensure_ascii=False
)


def _replaying(events: list[dict[str, Any]], done: bool) -> Any:
    def answer(request: Any) -> Any:
        body = b"".join(sse(events, named=False)) + (b"data: [DONE]\n\n" if done else b"")
        return http.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    return answer


def _chat_chunks(raw: str, size: int) -> list[dict[str, Any]]:
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def token(text: str) -> dict[str, Any]:
        return {"token": text, "logprob": -0.1, "bytes": list(text.encode()), "top_logprobs": []}

    chunks = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}]
    for at in range(0, len(raw), size):
        piece = raw[at : at + size]
        choice = {
            "index": 0,
            "delta": {"content": piece},
            "logprobs": {"content": [token(piece)], "refusal": None},
            "finish_reason": None,
        }
        chunks.append({**base, "choices": [choice]})
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return chunks


@pytest.mark.parametrize("structured", [False, True])
def test_the_chat_stream_helper_events_are_clean(implementation: str, structured: bool) -> None:
    """`client.chat.completions.stream()` sends each chunk as a "chunk" event with the
    completion so far, then the events it makes of it: all of them carry the clean text,
    sync and async alike, and a structured output's `parsed` is read from it."""
    raw = STRUCTURED if structured else "Kyoto " + MARKER + " was the capital " + MARKER + ".\n"
    upstream = _chat_chunks(raw, 5)
    expected = clean(raw)
    messages: Any = [{"role": "user", "content": "hi"}]
    options: dict[str, Any] = {"response_format": City} if structured else {}

    def read() -> list[Any]:
        client = OpenAI(
            base_url="http://upstream.test/v1",
            api_key="unused",
            http_client=http.Client(transport=http.MockTransport(_replaying(upstream, True))),
        )
        with client.chat.completions.stream(model="m", messages=messages, **options) as stream:
            return list(clean_chat(stream, implementation=implementation))  # type: ignore[arg-type]

    async def aread() -> list[Any]:
        client = AsyncOpenAI(
            base_url="http://upstream.test/v1",
            api_key="unused",
            http_client=http.AsyncClient(transport=http.MockTransport(_replaying(upstream, True))),
        )
        async with client.chat.completions.stream(
            model="m", messages=messages, **options
        ) as stream:
            return [event async for event in aclean_chat(stream, implementation=implementation)]  # type: ignore[arg-type]

    events = read()
    # (warnings=False: the SDK's snapshot types declare no `parsed`, and pydantic says so)
    dicts = [event.to_dict(warnings=False) for event in events]
    assert [event.to_dict(warnings=False) for event in asyncio.run(aread())] == dicts
    assert not any(MARKER[0] in json.dumps(event, ensure_ascii=False) for event in dicts)
    chunks = [event for event in events if event.type == "chunk"]
    assert "".join(e.chunk.choices[0].delta.content or "" for e in chunks) == expected
    assert chunks[-1].snapshot.choices[0].message.content == expected
    sent = ""
    for event in events:
        if event.type == "content.delta":
            sent += event.delta
            assert event.snapshot == sent
    assert sent == expected
    (done,) = [event for event in events if event.type == "content.done"]
    assert done.content == expected
    tokens = [t.token for e in events if e.type == "logprobs.content.delta" for t in e.content]
    # The tokens of the deltas whose text went out as it came, in order.
    raw_tokens = iter(c["choices"][0]["logprobs"]["content"][0]["token"] for c in upstream[1:-1])
    assert tokens
    assert all(token in raw_tokens for token in tokens)
    (tokens_done,) = [event for event in events if event.type == "logprobs.content.done"]
    assert [t.token for t in tokens_done.content] == tokens
    if structured:
        assert done.parsed == City.model_validate_json(expected)
        assert chunks[-1].snapshot.choices[0].message.parsed == done.parsed


def test_a_parsed_structured_output_is_read_again_from_the_clean_text(implementation: str) -> None:
    from openai._types import NOT_GIVEN
    from openai.lib._parsing._completions import parse_chat_completion
    from openai.lib._parsing._responses import parse_response

    message = {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": STRUCTURED, "annotations": []}],
    }
    final = load("several_parts")[-1]["response"]
    response = construct_type(type_=Response, value={**final, "output": [message]})
    parsed = parse_response(text_format=City, input_tools=NOT_GIVEN, response=response)
    cleaned = clean_response(parsed, implementation=implementation)  # type: ignore[arg-type]
    assert cleaned.output_text == clean(STRUCTURED)
    assert cleaned.output_parsed == City.model_validate_json(clean(STRUCTURED))
    completion = completion_of({"role": "assistant", "content": STRUCTURED})
    chat = parse_chat_completion(
        response_format=City, input_tools=NOT_GIVEN, chat_completion=completion
    )
    done = clean_completion(chat, implementation=implementation)  # type: ignore[arg-type]
    assert done.choices[0].message.parsed == City.model_validate_json(clean(STRUCTURED))
    # A plain JSON value (a dict's `parsed`) is read with json; text that no longer reads as
    # the type keeps the raw parse.
    as_dict = {"choices": [{"index": 0, "message": {"content": STRUCTURED, "parsed": {"x": 1}}}]}
    dict_done: Any = clean_completion(as_dict)
    assert dict_done["choices"][0]["message"]["parsed"] == json.loads(clean(STRUCTURED))
    broken = {"choices": [{"index": 0, "message": {"content": "not json " + MARKER, "parsed": 1}}]}
    broken_done: Any = clean_completion(broken)
    assert broken_done["choices"][0]["message"]["parsed"] == 1


def test_the_responses_stream_helper_gets_snapshots_in_made_deltas_and_clean_parsed() -> None:
    """A part whose text comes in its done event only: the delta made for it is the helper's
    kind, with its snapshot; the done events' `parsed` is the clean text's."""
    raw = STRUCTURED
    item = {
        "id": "m1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": raw, "annotations": []}],
    }
    response = load("several_parts")[0]["response"]  # a response.created's, in progress
    where = {"item_id": "m1", "output_index": 0, "content_index": 0}
    upstream = [
        {"type": "response.created", "response": response},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**item, "content": [], "status": "in_progress"},
        },
        {
            "type": "response.content_part.added",
            **where,
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
        {"type": "response.output_text.done", **where, "text": raw, "logprobs": []},
        {"type": "response.content_part.done", **where, "part": item["content"][0]},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {
            "type": "response.completed",
            "response": {**response, "status": "completed", "output": [item]},
        },
    ]
    for number, event in enumerate(upstream):
        event["sequence_number"] = number
    client = OpenAI(
        base_url="http://upstream.test/v1",
        api_key="unused",
        http_client=http.Client(transport=http.MockTransport(_replaying(upstream, False))),
    )
    with client.responses.stream(model="m", input="hi", text_format=City) as stream:
        events = list(clean_responses(stream))
    (delta,) = [event for event in events if event.type == "response.output_text.delta"]
    assert delta.delta == delta.snapshot == clean(raw)
    (done,) = [event for event in events if event.type == "response.output_text.done"]
    assert done.parsed == City.model_validate_json(clean(raw))
    assert events[-1].response.output_parsed == done.parsed


def test_the_chat_stream_helper_done_events_find_their_choice() -> None:
    """Done events name no choice: with two choices, one of which says a sentence that ends
    in a held blank and then calls a tool (the helper sends its content.done where the call
    starts), each choice's content.done and logprobs.content.done carry its own clean text
    and tokens."""
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def choice(index: int, content: str | None = None, **more: Any) -> dict[str, Any]:
        delta: dict[str, Any] = {} if content is None else {"content": content}
        delta.update(more.pop("delta", {}))
        out: dict[str, Any] = {"index": index, "delta": delta, "finish_reason": None, **more}
        if content:
            token = {"token": content, "logprob": -0.1, "bytes": [1], "top_logprobs": []}
            out["logprobs"] = {"content": [token], "refusal": None}
        return out

    def call(arguments: str, first: bool = False) -> dict[str, Any]:
        head = {"id": "call_1", "type": "function"} if first else {}
        function = {"name": "f", "arguments": arguments} if first else {"arguments": arguments}
        return {"delta": {"tool_calls": [{"index": 0, **head, "function": function}]}}

    chunks = [
        {**base, "choices": [choice(0, "Let me look " + MARKER + ". "), choice(1, "Osaka ")]},
        {**base, "choices": [choice(0, **call("", True)), choice(1, MARKER + " is big.")]},
        {**base, "choices": [choice(0, **call("{}")), choice(1, " Very.")]},
        {
            **base,
            "choices": [
                {"index": 0, "delta": {}, "finish_reason": "tool_calls"},
                {"index": 1, "delta": {}, "finish_reason": "stop"},
            ],
        },
    ]
    tools: Any = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    client = OpenAI(
        base_url="http://upstream.test/v1",
        api_key="unused",
        http_client=http.Client(transport=http.MockTransport(_replaying(chunks, True))),
    )
    messages: Any = [{"role": "user", "content": "hi"}]
    with client.chat.completions.stream(
        model="m", messages=messages, n=2, tools=tools, logprobs=True
    ) as stream:
        events = list(clean_chat(stream))
    done = [event.content for event in events if event.type == "content.done"]
    assert done == [
        clean("Let me look " + MARKER + ". "),
        clean("Osaka " + MARKER + " is big. Very."),
    ]
    tokens = [
        [token.token for token in event.content]
        for event in events
        if event.type == "logprobs.content.done"
    ]
    assert tokens == [[], [" Very."]]  # (the others' text was changed by cleaning)
    last = [event for event in events if event.type == "chunk"][-1].snapshot
    assert [c.message.content for c in last.choices] == done


def test_the_chat_stream_helper_snapshot_places_its_annotations(implementation: str) -> None:
    """A search model's `url_citation`s come in a chunk's delta (gpt-4o-mini-search-preview
    sends them with the finish): the helper copies them into the snapshot's message, whose
    annotations then cover the same words in the clean text as the chunk's own do, and only
    the ones sent so far are there."""
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    raw = "Legoland opened in 2025" + MARKER + ". It is in Jinshan" + MARKER + "."
    start, end = raw.index("It"), raw.index("Jinshan") + len("Jinshan")
    cited = {"url": "https://example.com/", "title": "J", "start_index": start, "end_index": end}
    annotation = {"type": "url_citation", "url_citation": cited}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": raw[:30], "annotations": [annotation]}),  # before the words it cites
        chunk({"content": raw[30:-1]}),
        chunk({"content": raw[-1:]}, "stop"),
    ]
    client = OpenAI(
        base_url="http://upstream.test/v1",
        api_key="unused",
        http_client=http.Client(transport=http.MockTransport(_replaying(chunks, True))),
    )
    messages: Any = [{"role": "user", "content": "hi"}]
    with client.chat.completions.stream(model="m", messages=messages) as stream:
        events = [event for event in clean_chat(stream, implementation=implementation)]  # type: ignore[arg-type]
    snapshots = [event.snapshot.choices[0].message for event in events if event.type == "chunk"]
    assert [len(message.annotations or []) for message in snapshots] == [0, 0, 1, 1]
    message = snapshots[-1]
    (placed,) = message.annotations
    text = message.content
    assert text == clean(raw)
    assert text[placed.url_citation.start_index : placed.url_citation.end_index] == (
        "It is in Jinshan"
    )
