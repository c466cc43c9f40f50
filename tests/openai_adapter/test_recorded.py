"""`citemark.openai` on real recorded API streams (tests/data/openai/recorded, README there):
as recorded, as the SDK's objects, and with citation markers put in where answers put them
(after a word, split across deltas), which cleaning must take out again, giving back the
recorded text and annotation offsets."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from openai._models import construct_type
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import ResponseStreamEvent

from citemark.display import clean
from citemark.openai import clean_chat, clean_responses
from test_openai import ADDED, DELTA, Event
from test_openai import load as load_data

RESPONSES = [
    "dotnet_web_search",
    "dotnet_file_search",
    "dotnet_hello_world",
    "dotnet_responses_pizza",
    "vercel_web_search",
    "vercel_azure_web_search",
    "vercel_file_search",
    "vercel_code_interpreter",
    "vercel_reasoning",
]
CHATS = [
    "dotnet_chat_refusal",
    "dotnet_chat_pizza",
    "pydantic_ai_openrouter_annotations",
    "vercel_deepseek_reasoning",
    "vercel_mistral_thinking",
]
MARKER = "\ue200cite\ue202turn0search3\ue202turn1news0\ue201"


def load(name: str) -> list[Event]:
    return load_data(f"recorded/{name}")


FENCE = re.compile(r" {0,3}(```|~~~)")
CODE_SPAN = re.compile(r"(`+)[^`]+?\1")


def in_code(text: str) -> set[int]:
    """The places inside Markdown code (a fenced block, fence lines included, or a code
    span), where a marker stays as it is: a rough reading, enough for these answers."""
    inside: set[int] = set()
    fenced = False
    at = 0
    for line in text.splitlines(keepends=True):
        if FENCE.match(line) or fenced:
            inside.update(range(at, at + len(line) + 1))
            fenced ^= bool(FENCE.match(line))
        else:
            for span in CODE_SPAN.finditer(line):
                inside.update(range(at + span.start(), at + span.end() + 1))
        at += len(line)
    return inside


def after_words(text: str, rng: random.Random, count: int) -> list[int]:
    """Places right after a word, before a blank or punctuation, outside code: where answers
    put markers."""
    code = in_code(text)
    places = [
        at
        for at in range(1, len(text) + 1)
        if text[at - 1].isalnum()
        and (at == len(text) or text[at] in " .,;:!?)\n")
        and at not in code
    ]
    return sorted(rng.sample(places, min(count, len(places))))


def moved(position: int, places: list[int], end: bool) -> int:
    """position in the text with a marker put in at each place (an end stays before it)."""
    return position + len(MARKER) * sum(p < position or (p == position and not end) for p in places)


def move_annotations(value: Any, places: list[int]) -> Any:
    """value (an event or part of one) with every annotation's offsets moved."""
    if isinstance(value, list):
        return [move_annotations(one, places) for one in value]
    if not isinstance(value, dict):
        return value
    out = {name: move_annotations(one, places) for name, one in value.items()}
    for name, end in (("start_index", False), ("end_index", True), ("index", False)):
        if isinstance(value.get(name), int) and "type" in value:
            out[name] = moved(value[name], places, end)
    return out


# --- Responses ----------------------------------------------------------------------------------


def summary(events: list[Event]) -> tuple[dict[tuple[int, int], str], list[Event], list[Event]]:
    """What a reader takes from a stream: each part's text, its annotation events, and every
    other event in order."""
    text: dict[tuple[int, int], str] = {}
    added, others = [], []
    for event in events:
        if event["type"] == DELTA:
            part = (event["output_index"], event["content_index"])
            text[part] = text.get(part, "") + event["delta"]
        elif event["type"] == ADDED:
            added.append({k: v for k, v in event.items() if k != "sequence_number"})
        else:
            others.append(event)
    return text, added, others


def with_markers(events: list[Event], seed: int) -> list[Event]:
    """The stream with markers after words of every text part, one split across two deltas
    wherever a place falls on a delta's end; texts and annotations in every event moved."""
    events = json.loads(json.dumps(events))
    rng = random.Random(seed)
    raw: dict[tuple[int, int], str] = {}
    for event in events:
        if event["type"] == DELTA:
            part = (event["output_index"], event["content_index"])
            raw[part] = raw.get(part, "") + event["delta"]
    places = {part: after_words(text, rng, 6) for part, text in raw.items()}
    marked = {}
    for part, text in raw.items():
        pieces, last = [], 0
        for place in places[part]:
            pieces += [text[last:place], MARKER]
            last = place
        marked[part] = "".join([*pieces, text[last:]])
    half = len(MARKER) // 2
    fed = dict.fromkeys(raw, 0)
    for event in events:
        part = (event.get("output_index"), event.get("content_index"))
        if event["type"] == DELTA:
            at, start = places[part], fed[part]
            fed[part] += len(event["delta"])
            # A marker on a delta's end: its first half ends that delta, the rest starts the next.
            a = moved(start, at, end=True) + (half if start in at else 0)
            b = moved(fed[part], at, end=True)
            if fed[part] in at:
                b += half if fed[part] < len(raw[part]) else len(MARKER)
            event["delta"] = marked[part][a:b]
        elif event["type"] in (ADDED, "response.output_text.done") and part in raw:
            event.update(move_annotations(event, places[part]))
            if "text" in event:
                event["text"] = marked[part]
        for one, content in contents(event):
            if one in raw:
                content["text"] = marked[one]
                content["annotations"] = move_annotations(content["annotations"], places[one])
    return events


def contents(event: Event) -> list[tuple[tuple[int, int], dict[str, Any]]]:
    """The output_text parts an event carries whole, with their (output, content) indexes."""
    found = []
    if event["type"] == "response.content_part.done":
        found.append(((event["output_index"], event["content_index"]), event["part"]))
    items: list[tuple[int, Any]] = []
    if event["type"] == "response.output_item.done":
        items = [(event["output_index"], event["item"])]
    if event["type"] in ("response.completed", "response.incomplete"):
        items = list(enumerate(event["response"]["output"]))
    for output_index, item in items:
        for index, content in enumerate(item.get("content") or []):
            found.append(((output_index, index), content))
    return [(part, content) for part, content in found if content.get("type") == "output_text"]


@pytest.mark.parametrize("name", RESPONSES)
def test_a_recorded_responses_stream(implementation: str, name: str) -> None:
    upstream = load(name)
    out = list(clean_responses(upstream, implementation=implementation))  # type: ignore[arg-type]
    text, added, others = summary(out)
    raw, raw_added, raw_others = summary(upstream)
    assert text == {part: clean(value) for part, value in raw.items()}
    assert added == [{**e, "annotation_index": e["annotation_index"]} for e in raw_added]
    assert others == raw_others  # no marker: every done event as it came
    models: list[Any] = [construct_type(type_=ResponseStreamEvent, value=e) for e in upstream]
    as_models = clean_responses(models, implementation=implementation)  # type: ignore[arg-type]
    assert [event.to_dict() for event in as_models] == out


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", RESPONSES)
def test_markers_put_in_a_recorded_stream_come_out(
    implementation: str, name: str, seed: int
) -> None:
    upstream = load(name)
    marked = with_markers(upstream, seed)
    assert summary(marked)[0] != summary(upstream)[0]
    plain = summary(list(clean_responses(upstream, implementation=implementation)))  # type: ignore[arg-type]
    assert summary(list(clean_responses(marked, implementation=implementation))) == plain  # type: ignore[arg-type]


# --- Chat Completions ---------------------------------------------------------------------------


def chat_summary(chunks: list[Event]) -> tuple[str, list[Any], list[Any]]:
    """The text, the annotations, and every chunk's other fields (and content parts other
    than text, where content is a list of parts)."""
    text = ""
    annotations: list[Any] = []
    rest: list[dict[str, Any]] = []
    for chunk in chunks:
        for choice in chunk["choices"]:
            delta = dict(choice.get("delta") or {})
            content = delta.pop("content", None) or ""
            if isinstance(content, list):
                text += "".join(one["text"] for one in content if one["type"] == "text")
                delta["parts"] = [one for one in content if one["type"] != "text"]
            else:
                text += content
            annotations += delta.pop("annotations", None) or []
            rest.append({k: v for k, v in delta.items() if v not in (None, "")})
    return text, annotations, [one for one in rest if one]


@pytest.mark.parametrize("name", CHATS)
def test_a_recorded_chat_stream(implementation: str, name: str) -> None:
    upstream = load(name)
    out = list(clean_chat(upstream, implementation=implementation))  # type: ignore[arg-type]
    text, annotations, rest = chat_summary(upstream)
    assert chat_summary(out) == (clean(text), annotations, rest)
    models: list[Any] = [construct_type(type_=ChatCompletionChunk, value=c) for c in upstream]
    as_models = clean_chat(models, implementation=implementation)  # type: ignore[arg-type]
    assert [chunk.to_dict(warnings=False) for chunk in as_models] == out


@pytest.mark.parametrize("name", CHATS)
def test_markers_put_in_a_recorded_chat_stream_come_out(implementation: str, name: str) -> None:
    upstream = load(name)
    marked = json.loads(json.dumps(upstream))
    rng = random.Random(1)
    for chunk in marked:
        for choice in chunk["choices"]:
            delta = choice.get("delta") or {}
            content = delta.get("content")
            # (holder, field): the delta's text, or each text part where content is a list.
            holders = (
                [(one, "text") for one in content if one["type"] == "text"]
                if isinstance(content, list)
                else [(delta, "content")]
            )
            for holder, field in holders:
                text = holder.get(field)
                if text and rng.random() < 0.3:
                    places = after_words(text, rng, 1)
                    if places:
                        holder[field] = text[: places[0]] + MARKER + text[places[0] :]
    plain = chat_summary(list(clean_chat(upstream, implementation=implementation)))  # type: ignore[arg-type]
    assert chat_summary(list(clean_chat(marked, implementation=implementation))) == plain  # type: ignore[arg-type]
