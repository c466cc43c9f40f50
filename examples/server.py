"""A proxy that streams OpenAI answers to its clients with their citation markers cleaned.

    python examples/server.py replay --port 8001            # an upstream without an API key
    python examples/server.py proxy --upstream http://127.0.0.1:8001/v1 --port 8000

`proxy` forwards `POST /v1/responses` and `POST /v1/chat/completions` to an OpenAI-compatible
upstream with the `openai` SDK and sends back what it answers, put through `citemark.openai`:
the text clean, the annotations moved into the clean text, as server-sent events when the
request asks for a stream.  Point any OpenAI client at it (`base_url="http://127.0.0.1:8000/v1"`).
`--passthrough` sends the SDK's events untouched (the baseline of benches/bench_proxy.py).

`replay` is an upstream for trying it: it answers with the recorded-shape streams of a
directory (tests/data/openai), the request's `model` naming the file (`"model": "web_search"`).

Needs `pip install "citemark[server]"` (the SDK, FastAPI and uvicorn).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from openai import (
    APIConnectionError,
    APIError,
    APIStatusError,
    APITimeoutError,
    AsyncOpenAI,
    AsyncStream,
)
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response as ResponsesResult
from openai.types.responses import ResponseStreamEvent

from citemark.openai import aclean_chat, aclean_responses, clean_completion, clean_response

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "data" / "openai"
SSE = "text/event-stream"


def create_app(
    upstream: str,
    *,
    api_key: str = "unused",
    clean: bool = True,
    options: dict[str, Any] | None = None,
    client: AsyncOpenAI | None = None,
) -> FastAPI:
    """The proxy: `upstream` is the base URL of an OpenAI-compatible API (".../v1");
    `options` go to citemark.openai (lenient, skip_code, widgets, max_hold)."""
    # The SDK's retries stay on: a connection the upstream closed while it sat in the pool
    # fails before any byte of the answer, and is tried again.
    sdk = client or AsyncOpenAI(base_url=upstream, api_key=api_key)
    settings = options or {}

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        if client is None:
            await sdk.close()  # its connections to the upstream

    app = FastAPI(title="citemark proxy", lifespan=lifespan)

    @app.post("/v1/responses")
    async def responses(request: Request) -> Response:
        body = await request.json()
        if not body.get("stream"):
            result = await _call(sdk, "/responses", body, ResponsesResult, None)
            if isinstance(result, Response):
                return result
            if clean:
                result = clean_response(result, **_whole(settings))
            return _json(result)
        events = await _call(sdk, "/responses", body, ResponsesResult, ResponseStreamEvent)
        if isinstance(events, Response):
            return events
        cleaned = aclean_responses(events, **settings) if clean else events
        return StreamingResponse(_sse(events, cleaned, named=True), media_type=SSE)

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        body = await request.json()
        if not body.get("stream"):
            result = await _call(sdk, "/chat/completions", body, ChatCompletion, None)
            if isinstance(result, Response):
                return result
            if clean:
                result = clean_completion(result, **_whole(settings))
            return _json(result)
        chunks = await _call(sdk, "/chat/completions", body, ChatCompletion, ChatCompletionChunk)
        if isinstance(chunks, Response):
            return chunks
        cleaned = aclean_chat(chunks, **settings) if clean else chunks
        return StreamingResponse(_sse(chunks, cleaned, named=False), media_type=SSE)

    return app


def _whole(settings: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in settings.items() if key != "max_hold"}


async def _call(
    sdk: AsyncOpenAI, path: str, body: dict[str, Any], result: type, event: type | None
) -> Any:
    """The upstream's answer through the SDK: a result, a stream of `event`, or the
    upstream's own error response."""
    try:
        if event is None:
            return await sdk.post(path, cast_to=result, body=body)
        return await sdk.post(
            path, cast_to=result, body=body, stream=True, stream_cls=AsyncStream[event]
        )
    except APIStatusError as error:
        return Response(
            error.response.content,
            status_code=error.status_code,
            media_type=error.response.headers.get("content-type"),
        )
    except APIConnectionError as error:  # APITimeoutError included
        timeout = isinstance(error, APITimeoutError)
        detail = {"message": f"upstream: {error}", "type": "upstream_error"}
        return JSONResponse({"error": detail}, status_code=504 if timeout else 502)


def _json(result: Any) -> Response:
    return Response(result.to_json(indent=None), media_type="application/json")


async def _sse(upstream: AsyncStream[Any], events: Any, *, named: bool) -> AsyncIterator[str]:
    """Server-sent events as the API sends them: Responses events named by their type,
    chat chunks as bare data and a final `[DONE]`.  The upstream stream is closed when the
    client goes away.  An upstream that breaks off mid-stream (its connection lost, or an
    error sent in the stream) ends the client's stream the way the API ends one: the text
    held back goes out (citemark.openai releases it before the error), then an `error` event
    (Responses) or an error chunk (chat), which the SDK raises as `openai.APIError`."""
    sequence = -1
    async with upstream:
        try:
            async for event in events:
                data = event.to_json(indent=None)
                if named:
                    number = getattr(event, "sequence_number", None)
                    sequence = number if isinstance(number, int) else sequence
                    yield f"event: {event.type}\ndata: {data}\n\n"
                else:
                    yield f"data: {data}\n\n"
        except Exception as error:  # (not a cancellation: the client went away)
            yield _broken_off(error, named, sequence + 1)
            return
    if not named:
        yield "data: [DONE]\n\n"


def _broken_off(error: Exception, named: bool, sequence: int) -> str:
    """The event that tells the client its stream broke off: the upstream's own error when
    it sent one (the SDK raises it as APIError), else what went wrong (the connection, whose
    exception is the SDK's transport's own)."""
    body = error.body if isinstance(error, APIError) else None
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        detail = body
    else:
        detail = {
            "message": f"upstream: the stream broke off ({type(error).__name__}: {error})",
            "type": "upstream_error",
            "code": "upstream_error",
            "param": None,
        }
    if named:
        event = {
            "type": "error",
            "code": detail.get("code"),
            "message": detail["message"],
            "param": detail.get("param"),
            "sequence_number": sequence,
        }
        return f"event: error\ndata: {json.dumps(event)}\n\n"
    return f"data: {json.dumps({'error': detail})}\n\n"


# --- an upstream that replays recorded streams ----------------------------------------------


def replay_app(
    directory: Path = FIXTURES,
    *,
    delay: float = 0.0,
    stamp: bool = False,
    repeat: int = 1,
    default: dict[str, str] | None = None,
    cut_after: int | None = None,
) -> FastAPI:
    """An OpenAI-compatible upstream that answers with the streams in `directory` (one
    `NAME.jsonl` a stream, named by the request's `model`).  `delay` seconds between events;
    `stamp` adds `x_sent_ns` (time.monotonic_ns) and `x_index` (the event's place in its
    stream) to each event, for latency measurements;
    `repeat` sends each text delta that many times over (longer answers, same shape);
    `default` names the stream for any other model, by API ("responses", "chat");
    `cut_after` drops the connection after that many events of a stream (an upstream that
    dies mid-answer)."""
    app = FastAPI(title="citemark replay upstream")
    cache: dict[str, list[dict[str, Any]]] = {}
    fallback = default or {}

    def load(name: str, api: str = "") -> list[dict[str, Any]] | None:
        known = "/" not in name and "\\" not in name and (directory / f"{name}.jsonl").is_file()
        if not known:
            if api not in fallback:
                return None
            name = fallback[api]
        if name not in cache:
            path = directory / f"{name}.jsonl"
            if not path.is_file():
                return None
            lines = path.read_text(encoding="utf-8").splitlines()
            cache[name] = [json.loads(line) for line in lines if line.strip()]
        return cache[name]

    def missing(name: object) -> Response:
        error = {"message": f"no recorded stream named {name!r}", "type": "invalid_request_error"}
        return JSONResponse({"error": error}, status_code=404)

    encoded: dict[int, list[tuple[str, str]]] = {}

    async def stream(events: list[dict[str, Any]], named: bool) -> AsyncIterator[str]:
        # Each event is serialized once per recording, not per stream: under load the
        # upstream then costs little next to the proxy it feeds (benches/bench_proxy.py).
        if id(events) not in encoded:
            encoded[id(events)] = [
                (event.get("type", ""), json.dumps(event, ensure_ascii=False))
                for event in _repeated(events, repeat)
            ]
        for index, (kind, data) in enumerate(encoded[id(events)]):
            if index == cut_after:
                raise ConnectionAbortedError("replay: the connection is cut (cut_after)")
            if delay:
                await asyncio.sleep(delay)
            if stamp:  # the stamps go in as the last keys: '{..., "x_sent_ns": N, ...}'
                data = f'{data[:-1]}, "x_sent_ns": {time.monotonic_ns()}, "x_index": {index}}}'
            yield f"event: {kind}\ndata: {data}\n\n" if named else f"data: {data}\n\n"
        if not named:
            yield "data: [DONE]\n\n"

    @app.post("/v1/responses")
    async def responses(request: Request) -> Response:
        body = await request.json()
        events = load(str(body.get("model")), "responses")
        if events is None or "choices" in events[0]:
            return missing(body.get("model"))
        if body.get("stream"):
            return StreamingResponse(stream(events, named=True), media_type=SSE)
        final = [event for event in events if event["type"] in _ENDS]
        if not final:
            return missing(body.get("model"))
        return JSONResponse(final[-1]["response"])

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        body = await request.json()
        chunks = load(str(body.get("model")), "chat")
        if chunks is None or "choices" not in chunks[0]:
            return missing(body.get("model"))
        if body.get("stream"):
            return StreamingResponse(stream(chunks, named=False), media_type=SSE)
        return JSONResponse(_completion(chunks))

    return app


_ENDS = ("response.completed", "response.incomplete", "response.failed")


def _repeated(events: list[dict[str, Any]], repeat: int) -> list[dict[str, Any]]:
    """events with the text of each delta sent `repeat` times over (annotation offsets and
    done texts are then those of the first copy: for load, not for checking)."""
    if repeat == 1:
        return events
    out = []
    for event in events:
        out.append(event)
        chat_text = "choices" in event and any(
            choice.get("delta", {}).get("content") for choice in event["choices"]
        )
        if event.get("type") == "response.output_text.delta" or chat_text:
            out += [event] * (repeat - 1)
    return out


def _completion(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The whole ChatCompletion that a stream of chunks adds up to."""
    texts: dict[int, list[str]] = {}
    annotations: dict[int, list[Any]] = {}
    finish: dict[int, str] = {}
    for chunk in chunks:
        for choice in chunk["choices"]:
            index = choice["index"]
            delta = choice.get("delta") or {}
            texts.setdefault(index, []).append(delta.get("content") or "")
            annotations.setdefault(index, []).extend(delta.get("annotations") or [])
            if choice.get("finish_reason"):
                finish[index] = choice["finish_reason"]
    first = chunks[0]
    return {
        "id": first["id"],
        "object": "chat.completion",
        "created": first["created"],
        "model": first["model"],
        "choices": [
            {
                "index": index,
                "message": {
                    "role": "assistant",
                    "content": "".join(texts[index]),
                    "annotations": annotations[index],
                },
                "finish_reason": finish.get(index, "stop"),
            }
            for index in sorted(texts)
        ],
    }


# --- command line ------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    proxy = commands.add_parser("proxy", help="the cleaning proxy")
    proxy.add_argument("--upstream", required=True, help="the upstream's base URL (.../v1)")
    proxy.add_argument("--api-key", default="unused")
    proxy.add_argument("--passthrough", action="store_true", help="send the events untouched")
    proxy.add_argument("--lenient", action="store_true")
    replay = commands.add_parser("replay", help="an upstream replaying recorded streams")
    replay.add_argument("--fixtures", type=Path, default=FIXTURES)
    replay.add_argument("--delay", type=float, default=0.0)
    replay.add_argument("--stamp", action="store_true")
    replay.add_argument("--repeat", type=int, default=1)
    for command in (proxy, replay):
        command.add_argument("--host", default="127.0.0.1")
        command.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    make: Callable[[], FastAPI]
    if args.command == "proxy":
        options = {"lenient": args.lenient}

        def make() -> FastAPI:
            return create_app(
                args.upstream, api_key=args.api_key, clean=not args.passthrough, options=options
            )
    else:

        def make() -> FastAPI:
            return replay_app(args.fixtures, delay=args.delay, stamp=args.stamp, repeat=args.repeat)

    uvicorn.run(make(), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
