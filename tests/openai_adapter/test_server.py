"""The example proxy (examples/server.py), for real: uvicorn on 127.0.0.1 (ephemeral ports)
serves an upstream that replays the recorded-shape streams of tests/data/openai and the
proxy in front of it, each in a thread of this process; the real `openai` SDK reads the
proxy back.  Loopback only, every wait bounded (server start, requests, shutdown)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib.util
import io
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import openai
import pytest
import uvicorn
from fastapi import FastAPI

from citemark.display import clean, clean_mapped, clean_position
from citemark.openai import clean_responses
from test_docs import read_page

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "openai"
WAIT = 10.0  # seconds: the bound of every wait here
PRIVATE = "\ue200\ue201\ue202\ue203\ue204\ue206"


def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "citemark_example_server", ROOT / "examples" / "server.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


server = example()


@contextlib.contextmanager
def serving(app: FastAPI) -> Iterator[str]:
    """app served by uvicorn in a thread on 127.0.0.1 at a port the system picks."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(256)
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=2)
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT
    while not running.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        running.should_exit = True
        thread.join(WAIT)
        sock.close()
        assert not thread.is_alive(), "uvicorn did not stop"


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    with serving(server.replay_app(DATA)) as url:
        yield url + "/v1"


@pytest.fixture(scope="module")
def proxy(upstream: str) -> Iterator[str]:
    with serving(server.create_app(upstream)) as url:
        yield url + "/v1"


@pytest.fixture(scope="module")
def passthrough(upstream: str) -> Iterator[str]:
    with serving(server.create_app(upstream, clean=False)) as url:
        yield url + "/v1"


_clients: dict[str, openai.OpenAI] = {}


@pytest.fixture(scope="module", autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _clients:
        _clients.popitem()[1].close()
    # A client socket left open is reported when it is garbage-collected, which may be in any
    # later test (of another file, under pytest-xdist); collected here, it fails this file.
    gc.collect()


def client(base_url: str) -> openai.OpenAI:
    """One SDK client a server, closed with the module's servers."""
    if base_url not in _clients:
        _clients[base_url] = openai.OpenAI(
            base_url=base_url, api_key="test", max_retries=0, timeout=WAIT
        )
    return _clients[base_url]


def recorded(name: str) -> list[dict[str, Any]]:
    lines = (DATA / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def raw_texts(events: list[dict[str, Any]]) -> dict[tuple[int, int], str]:
    out: dict[tuple[int, int], str] = {}
    for event in events:
        if event["type"] == "response.output_text.delta":
            part = (event["output_index"], event["content_index"])
            out[part] = out.get(part, "") + event["delta"]
    return out


def placed(annotation: dict[str, Any], raw: str) -> dict[str, Any]:
    cuts = clean_mapped(raw).cuts
    out = dict(annotation)
    for name, end in (("start_index", False), ("end_index", True), ("index", False)):
        if name in out:
            out[name] = clean_position(cuts, out[name], end=end)
    return out


@pytest.mark.parametrize(
    "name", ["web_search", "file_search", "several_parts", "incomplete", "cut"]
)
def test_a_stream_through_the_proxy(proxy: str, name: str) -> None:
    upstream = recorded(name)
    raw = raw_texts(upstream)
    sent: dict[tuple[int, int], str] = {}
    annotations: dict[tuple[int, int], list[Any]] = {}
    final = None
    for event in client(proxy).responses.create(model=name, input="hi", stream=True):
        if event.type == "response.output_text.delta":
            part = (event.output_index, event.content_index)
            sent[part] = sent.get(part, "") + event.delta
        elif event.type == "response.output_text.annotation.added":
            part = (event.output_index, event.content_index)
            assert event.annotation_index == len(annotations.get(part, []))
            annotations.setdefault(part, []).append(event.annotation.to_dict())
        elif event.type in ("response.completed", "response.incomplete"):
            final = event.response
    assert sent == {part: clean(text) for part, text in raw.items()}
    expected: dict[tuple[int, int], list[Any]] = {}
    for event in upstream:
        if event["type"] == "response.output_text.annotation.added":
            part = (event["output_index"], event["content_index"])
            expected.setdefault(part, []).append(placed(event["annotation"], raw[part]))
    assert annotations == expected
    if name == "cut":
        assert final is None
        return
    assert final is not None
    for output_index, item in enumerate(final.output):
        for index, content in enumerate(getattr(item, "content", None) or []):
            assert content.text == sent[(output_index, index)]
            assert [a.to_dict() for a in content.annotations] == expected.get(
                (output_index, index), []
            )


def test_the_client_sees_clean_text_and_consistent_annotations(proxy: str) -> None:
    events = list(client(proxy).responses.create(model="web_search", input="hi", stream=True))
    final = next(e for e in events if e.type == "response.completed").response
    text = final.output_text
    assert not set(text) & set(PRIVATE)
    link = "https://www.axios.com/newsletters/axios-am?utm_source=openai"
    spans = [a for a in final.output[1].content[0].annotations]
    assert text[spans[0].start_index : spans[0].end_index] == f"([axios.com]({link}))"
    assert text[spans[1].start_index : spans[1].end_index].endswith(f"]({link})")
    deltas = [e for e in events if e.type == "response.output_text.delta"]
    assert all(e.model_extra and e.model_extra["obfuscation"] for e in deltas)


def test_the_sdk_stream_helper_through_the_proxy(proxy: str) -> None:
    raw = raw_texts(recorded("web_search"))[(1, 0)]
    with client(proxy).responses.stream(model="web_search", input="hi") as stream:
        sent = ""
        for event in stream:
            if event.type == "response.output_text.delta":
                sent += event.delta
                assert event.snapshot == sent
        response = stream.get_final_response()
    assert sent == response.output_text == clean(raw)


def test_the_sdk_stream_helper_as_what_a_server_cleans(upstream: str) -> None:
    """A server that reads its upstream with `responses.stream()`: the `.snapshot` of each
    delta becomes the clean text so far."""
    raw = raw_texts(recorded("several_parts"))
    with client(upstream).responses.stream(model="several_parts", input="hi") as stream:
        sent: dict[tuple[int, int], str] = {}
        for event in clean_responses(stream):
            if event.type == "response.output_text.delta":
                part = (event.output_index, event.content_index)
                sent[part] = sent.get(part, "") + event.delta
                assert event.snapshot == sent[part]
    assert sent == {part: clean(text) for part, text in raw.items()}


def test_whole_results_through_the_proxy(proxy: str) -> None:
    response = client(proxy).responses.create(model="web_search", input="hi")
    raw = raw_texts(recorded("web_search"))[(1, 0)]
    assert response.output_text == clean(raw)
    completion = client(proxy).chat.completions.create(
        model="chat", messages=[{"role": "user", "content": "hi"}]
    )
    message = completion.choices[0].message
    assert message.content is not None
    assert not set(message.content) & set(PRIVATE)
    assert message.annotations is not None
    where = message.annotations[0].url_citation
    assert message.content[where.start_index : where.end_index] == "Naples"


def test_a_chat_stream_through_the_proxy(proxy: str) -> None:
    chunks = recorded("chat")
    raw = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    text = ""
    annotations = []
    for chunk in client(proxy).chat.completions.create(
        model="chat", messages=[{"role": "user", "content": "hi"}], stream=True
    ):
        for choice in chunk.choices:
            text += choice.delta.content or ""
            annotations += (choice.delta.model_extra or {}).get("annotations") or []
    assert text == clean(raw)
    assert len(annotations) == 1
    where = annotations[0]["url_citation"]
    assert text[where["start_index"] : where["end_index"]] == "Naples"


def test_upstream_errors_come_back(proxy: str) -> None:
    with pytest.raises(openai.NotFoundError, match="no recorded stream"):
        client(proxy).responses.create(model="nothing", input="hi", stream=True)
    with pytest.raises(openai.NotFoundError):
        client(proxy).chat.completions.create(model="nothing", messages=[])


@pytest.mark.parametrize("cut_after", [12, 30])
def test_an_upstream_cut_mid_stream(cut_after: int) -> None:
    """The upstream's connection drops mid-answer: the client still gets the text up to
    there, clean (what the proxy held goes out by the end-of-text rules), then the API's own
    way of ending a stream with an error: an `error` event (Responses), an error chunk that
    the SDK raises as `openai.APIError` (chat)."""
    with (
        serving(server.replay_app(DATA, cut_after=cut_after)) as upstream,
        serving(server.create_app(upstream + "/v1")) as proxy,
    ):
        sdk = openai.OpenAI(base_url=proxy + "/v1", api_key="test", max_retries=0, timeout=WAIT)
        with sdk:
            events = list(sdk.responses.create(model="web_search", input="hi", stream=True))
            sent = "".join(e.delta for e in events if e.type == "response.output_text.delta")
            raw = "".join(raw_texts(recorded("web_search")[:cut_after]).values())
            assert sent == clean(raw)
            assert events[-1].type == "error"
            assert "upstream" in events[-1].message
            assert events[-1].sequence_number == events[-2].sequence_number + 1

            texts: list[str] = []

            def read_chat() -> None:
                for chunk in sdk.chat.completions.create(model="chat", messages=[], stream=True):
                    texts.extend(choice.delta.content or "" for choice in chunk.choices)

            with pytest.raises(openai.APIError, match="upstream"):
                read_chat()
            text = "".join(texts)
            raw = "".join(
                choice["delta"].get("content") or ""
                for chunk in recorded("chat")[:cut_after]
                for choice in chunk["choices"]
            )
            assert text == clean(raw)
            assert "\ue200" in raw  # the cut fell inside a marker
            assert not set(PRIVATE) & set(text)


def test_the_passthrough_proxy_changes_nothing(passthrough: str) -> None:
    upstream = recorded("web_search")
    events = list(client(passthrough).responses.create(model="web_search", input="hi", stream=True))
    assert [e.to_dict() for e in events] == upstream


def test_concurrent_streams(proxy: str) -> None:
    expected = {part: clean(text) for part, text in raw_texts(recorded("several_parts")).items()}

    async def one(sdk: openai.AsyncOpenAI) -> dict[tuple[int, int], str]:
        sent: dict[tuple[int, int], str] = {}
        stream = await sdk.responses.create(model="several_parts", input="hi", stream=True)
        async for event in stream:
            if event.type == "response.output_text.delta":
                part = (event.output_index, event.content_index)
                sent[part] = sent.get(part, "") + event.delta
        return sent

    async def many() -> list[dict[tuple[int, int], str]]:
        sdk = openai.AsyncOpenAI(base_url=proxy, api_key="test", max_retries=0, timeout=WAIT)
        async with sdk:
            return await asyncio.wait_for(asyncio.gather(*(one(sdk) for _ in range(16))), WAIT)

    assert asyncio.run(many()) == [expected] * 16


def test_the_examples_of_the_docs_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/openai.md's Python blocks, in order, in one namespace: the SDK talks to a replay
    upstream (any model answers with a recorded stream) and to the proxy in front of it; a
    block followed by a text block prints exactly that.  The page is read as
    tests/test_docs.py reads it; a block that `needs` a module runs where it imports."""
    blocks, _ = read_page(ROOT / "docs" / "openai.md")
    default = {"responses": "web_search", "chat": "chat"}
    with (
        serving(server.replay_app(DATA, default=default)) as upstream,
        serving(server.create_app(upstream + "/v1")) as proxy,
    ):
        monkeypatch.setenv("OPENAI_BASE_URL", upstream + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        namespace: dict[str, Any] = {}
        # Every SDK client a block makes, to close: a later block may bind the same name to
        # another one (`client = OpenAI()`, then `client = OpenAI(base_url=...)`), and the
        # first one's pooled connection would otherwise stay open until garbage collection.
        made: dict[int, openai.OpenAI] = {}
        ran = 0
        try:
            for number, block in enumerate(blocks):
                if block.lang != "python" or any(
                    importlib.util.find_spec(module) is None for module in block.needs
                ):
                    continue
                code = block.source.replace("http://127.0.0.1:8000/v1", proxy + "/v1")
                printed = io.StringIO()
                try:
                    with contextlib.redirect_stdout(printed):
                        exec(compile(code, f"docs/openai.md, block {number}", "exec"), namespace)
                finally:
                    made.update(
                        (id(value), value)
                        for value in namespace.values()
                        if isinstance(value, openai.OpenAI)
                    )
                ran += 1
                # (A block not run there keeps its text block apart.)
                following = blocks[number + 1] if number + 1 < len(blocks) else None
                expected = block.expected
                if expected is None and following is not None and following.lang == "text":
                    expected = following.source
                if expected is not None:
                    assert printed.getvalue() == expected
        finally:
            for sdk in made.values():
                sdk.close()
    assert len(made) >= 2, "the docs' blocks make two clients: the upstream's and the proxy's"
    assert ran >= 4
