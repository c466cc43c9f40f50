"""Fault injection into the recorded streams of tests/data/openai: events with fields taken
out or swapped for values of the wrong type, as a broken OpenAI-compatible server or proxy
may send them.  A malformed event may be refused (a `ValueError` or `TypeError` naming what
is wrong) or pass, but no other exception escapes, and the text of every other part comes out
as it does without it."""

from __future__ import annotations

import contextlib
import copy
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citemark.openai import ChatCleaner, ResponsesCleaner
from test_openai import DATA, load

NAMES = sorted(str(path.relative_to(DATA).with_suffix("")) for path in DATA.rglob("*.jsonl"))
# What a field becomes: nothing of the right type, and a marker where text was.
JUNK: list[Any] = [
    None,
    0,
    -1,
    10**20,
    1.5,
    True,
    "",
    "x",
    [],
    {},
    [None],
    {"type": "url_citation"},
    "\ue200cite\ue202turn0search0\ue201",
]
# The events about one text part: the ones a malformed copy is made of.
PART_EVENTS = (
    "response.output_text.delta",
    "response.output_text.done",
    "response.output_text.annotation.added",
    "response.content_part.added",
    "response.content_part.done",
    "response.output_item.added",
    "response.output_item.done",
)
# Where a malformed event lands: parts of their own, which the stream never uses.
FAR = 900
MARKER = "\ue200cite\ue202turn0search0\ue201"


def is_chat(events: list[Any]) -> bool:
    return any(isinstance(event.get("choices"), list) for event in events)


def is_about_text(event: dict[str, Any]) -> bool:
    return event.get("type") in PART_EVENTS or bool(event.get("choices"))


def damaged(value: Any, data: st.DataObject, depth: int = 0) -> Any:
    """value with one field (at some depth) removed or given junk, as hypothesis draws it."""
    value = copy.deepcopy(value)
    if isinstance(value, dict) and value:
        name = data.draw(st.sampled_from(sorted(value)))
        action = data.draw(st.sampled_from(["junk", "remove", "inside"]))
        if action == "inside" and depth < 4 and isinstance(value[name], (dict, list)):
            value[name] = damaged(value[name], data, depth + 1)
        elif action == "remove":
            del value[name]
        else:
            value[name] = data.draw(st.sampled_from(JUNK))
    elif isinstance(value, list) and value:
        at = data.draw(st.integers(0, len(value) - 1))
        if isinstance(value[at], (dict, list)) and data.draw(st.booleans()):
            value[at] = damaged(value[at], data, depth + 1)
        else:
            value[at] = data.draw(st.sampled_from(JUNK))
    return value


def far_away(event: Any, chat: bool, rng: random.Random) -> Any:
    """A malformed event moved to a part that no good event is about."""
    if not isinstance(event, dict):
        return event
    if chat:
        if not isinstance(event.get("choices"), list):
            event["choices"] = []
        for choice in event["choices"]:
            if isinstance(choice, dict):
                choice["index"] = FAR + rng.randrange(3)
        return event
    if event.get("type") not in PART_EVENTS or rng.random() < 0.3:
        event["type"] = rng.choice(PART_EVENTS)
    event["output_index"] = FAR + rng.randrange(3)
    event["item_id"] = f"far_{event['output_index']}"
    if isinstance(event.get("item"), dict):
        event["item"]["id"] = event["item_id"]
    return event


def run(events: list[Any], chat: bool, implementation: str, bad: list[Any]) -> list[Any]:
    """Every event fed to one cleaner; a bad one may be refused, a good one must not."""
    cleaner = (ChatCleaner if chat else ResponsesCleaner)(implementation=implementation)  # type: ignore[arg-type]
    out: list[Any] = []
    for event in events:
        try:
            out += cleaner.feed(event)
        except (ValueError, TypeError):
            if not any(event is one for one in bad):
                raise
    return out + cleaner.close()


def texts(events: list[Any], chat: bool) -> dict[Any, str]:
    """The text each part below FAR was sent, by its deltas and by its done events."""
    out: dict[Any, str] = {}
    for event in events:
        if not isinstance(event, dict):
            continue
        if chat:
            for choice in event.get("choices") or []:
                if not isinstance(choice, dict) or not isinstance(choice.get("index"), int):
                    continue
                delta = choice.get("delta")
                if choice["index"] < FAR and isinstance(delta, dict):
                    content = delta.get("content")
                    if isinstance(content, str):
                        out[choice["index"]] = out.get(choice["index"], "") + content
            continue
        index = event.get("output_index")
        if isinstance(index, int) and index >= FAR:
            continue
        part = ("delta", index, event.get("content_index"))
        if event.get("type") == "response.output_text.delta":
            out[part] = out.get(part, "") + event["delta"]
        elif event.get("type") == "response.output_text.done":
            out[("done", *part[1:])] = event["text"]
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(NAMES), data=st.data())
def test_malformed_events_spoil_no_other_part(
    implementation: str, name: str, data: st.DataObject
) -> None:
    events = load(name)
    chat = is_chat(events)
    about_text = st.sampled_from([event for event in events if is_about_text(event)])
    rng = data.draw(st.randoms(use_true_random=False))
    bad = [
        far_away(damaged(data.draw(about_text), data), chat, rng)
        for _ in range(data.draw(st.integers(1, 3)))
    ]
    mixed = list(events)
    for event in bad:
        mixed.insert(data.draw(st.integers(0, len(mixed))), event)
    expected = texts(run(events, chat, implementation, []), chat)
    assert texts(run(mixed, chat, implementation, bad), chat) == expected


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(NAMES), data=st.data())
def test_a_damaged_stream_raises_nothing_but_value_and_type_errors(
    implementation: str, name: str, data: st.DataObject
) -> None:
    """Events damaged anywhere, the stream sometimes shuffled: a cleaner refuses what it
    cannot read with a ValueError or TypeError, never fails any other way, and closes."""
    events = load(name)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(events) - 1))
        events[at] = damaged(events[at], data)
    if data.draw(st.booleans()):
        events = data.draw(st.permutations(events))
    chat = is_chat(events)
    cleaner = (ChatCleaner if chat else ResponsesCleaner)(implementation=implementation)  # type: ignore[arg-type]
    for event in events:
        with contextlib.suppress(ValueError, TypeError):
            cleaner.feed(event)
    cleaner.close()  # what it holds goes out whatever came before


@pytest.mark.parametrize(
    "bad",
    [
        {"logprobs": 7},
        {"index": "1"},
        {"delta": {"content": 5}},
    ],
)
def test_a_bad_choice_is_refused_before_its_chunk_feeds_any(
    implementation: str, bad: dict[str, Any]
) -> None:
    """A chunk of two choices whose second cannot be read is a ValueError that leaves the
    first choice's part as it was: it had been fed, and its text, counted as sent, was lost
    (each choice used to be checked as it was fed)."""
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def chunk(*choices: dict[str, Any]) -> dict[str, Any]:
        return {**base, "choices": list(choices)}

    def choice(index: int, content: str, finish: str | None = None) -> dict[str, Any]:
        return {"index": index, "delta": {"content": content}, "finish_reason": finish}

    cleaner = ChatCleaner(implementation=implementation)  # type: ignore[arg-type]
    sent = ""
    good = [chunk(choice(0, "Kyoto "), choice(1, "Nara"))]
    broken = chunk(choice(0, "was the capital " + MARKER), {**choice(1, "x"), **bad})
    good.append(chunk(choice(0, "for a thousand years.", "stop"), choice(1, ".", "stop")))
    for event in [good[0], broken, good[1]]:
        try:
            out = cleaner.feed(event)
        except ValueError:
            assert event is broken
            continue
        for each in out:
            for part in each["choices"]:
                if part["index"] == 0:
                    sent += part["delta"].get("content") or ""
    for each in cleaner.close():
        for part in each["choices"]:
            if part["index"] == 0:
                sent += part["delta"].get("content") or ""
    assert sent == "Kyoto for a thousand years."
    assert cleaner.marks(0) == []  # the refused chunk's marker was never fed


def test_a_final_output_with_an_item_left_out_keeps_each_item_its_text(
    implementation: str,
) -> None:
    """A proxy or a trimmed recording may leave an item out of `response.completed`'s output:
    each message there is found by its id, as its events placed it, not by its place in the
    list (the second message was given the first's text)."""

    def message(index: int, item_id: str, text: str) -> list[dict[str, Any]]:
        at = {"output_index": index, "item_id": item_id, "content_index": 0}
        item = {"type": "message", "id": item_id, "role": "assistant", "content": []}
        part = {"type": "output_text", "text": "", "annotations": []}
        return [
            {"type": "response.output_item.added", "output_index": index, "item": item},
            {"type": "response.content_part.added", **at, "part": part},
            {"type": "response.output_text.delta", **at, "delta": text},
            {"type": "response.output_text.done", **at, "text": text},
        ]

    first, second = "First " + MARKER + " here.", "Second " + MARKER + " one."
    kept = {"type": "output_text", "text": second, "annotations": []}
    response = {"id": "r", "output": [{"type": "message", "id": "m2", "content": [kept]}]}
    events = [
        *message(0, "m0", first),
        *message(2, "m2", second),
        {"type": "response.completed", "response": response},
    ]
    cleaner = ResponsesCleaner(implementation=implementation)  # type: ignore[arg-type]
    out = [one for event in events for one in cleaner.feed(event)] + cleaner.close()
    (item,) = out[-1]["response"]["output"]
    assert item["content"][0]["text"] == "Second one."
