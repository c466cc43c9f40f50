"""`citemark.openai` on plain dicts: the recorded-shape streams of tests/data/openai, every
split and placement (hypothesis), and bad input.  No `openai` import here, so this file runs
on every interpreter (tests/openai_adapter/test_openai_sdk.py takes the SDK's own objects)."""

from __future__ import annotations

import asyncio
import copy
import gc
import itertools
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citemark.display import clean, clean_mapped, clean_position, clean_with_marks
from citemark.openai import (
    ChatCleaner,
    ResponsesCleaner,
    aclean_chat,
    aclean_responses,
    clean_chat,
    clean_completion,
    clean_response,
    clean_responses,
)

DATA = Path(__file__).parents[1] / "data" / "openai"
S, E, D = "\ue200", "\ue201", "\ue202"
MARKER = S + "cite" + D + "turn0search0" + E
STREAMS = ["web_search", "file_search", "several_parts", "cut", "incomplete"]
DELTA = "response.output_text.delta"
ADDED = "response.output_text.annotation.added"

Event = dict[str, Any]


def load(name: str) -> list[Event]:
    lines = (DATA / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def key(event: Event) -> tuple[int, int]:
    return event["output_index"], event["content_index"]


def texts(events: list[Event]) -> dict[tuple[int, int], str]:
    """The text of each part: its deltas put together."""
    out: dict[tuple[int, int], str] = {}
    for event in events:
        if event.get("type") == DELTA:
            out[key(event)] = out.get(key(event), "") + event["delta"]
    return out


def moved(annotation: dict[str, Any], raw: str, **options: Any) -> dict[str, Any]:
    """What an annotation of raw text should become: its positions placed by the whole
    text's cuts."""
    cuts = clean_mapped(raw, **options).cuts
    out = dict(annotation)
    for name, end in (("start_index", False), ("end_index", True)):
        if name in out:
            out[name] = clean_position(cuts, out[name], end=end)
    if out.get("type") == "file_citation":
        out["index"] = clean_position(cuts, out["index"])
    return out


def check_stream(upstream: list[Event], out: list[Event], **options: Any) -> None:
    """The rules every cleaned Responses stream keeps."""
    raw = texts(upstream)
    sent = texts(out)
    assert sent == {
        part: clean(text, **options) for part, text in raw.items() if clean(text, **options)
    }
    # Every event that is not about text goes out as it came, in order.
    passing = [
        e
        for e in upstream
        if not e["type"].startswith(
            (
                "response.output_text",
                "response.content_part.done",
                "response.output_item.done",
                "response.completed",
                "response.incomplete",
            )
        )
    ]
    assert [e for e in out if any(e is p for p in passing)] == passing
    # Annotations: numbered per part, placed in the clean text, sent once their text is.
    numbers: dict[tuple[int, int], int] = {}
    so_far: dict[tuple[int, int], int] = {}
    added: dict[tuple[int, int], list[Any]] = {}
    upstream_added = [e for e in upstream if e["type"] == ADDED]
    obfuscated = any("obfuscation" in e for e in upstream if e["type"] == DELTA)
    for event in out:
        if event["type"] == DELTA:
            so_far[key(event)] = so_far.get(key(event), 0) + len(event["delta"])
            assert ("obfuscation" in event) == obfuscated  # extra fields stay
        if event["type"] == ADDED:
            part = key(event)
            assert event["annotation_index"] == numbers.get(part, 0)
            numbers[part] = event["annotation_index"] + 1
            original = next(
                e for e in upstream_added if e["sequence_number"] == event["sequence_number"]
            )
            expected = moved(original["annotation"], raw[part], **options)
            assert event["annotation"] == expected
            for name in ("start_index", "end_index", "index"):
                if name in expected:
                    assert expected[name] <= so_far.get(part, 0)
            added.setdefault(part, []).append(event["annotation"])
    assert sum(numbers.values()) == len(upstream_added)
    # The done events repeat the clean text and the placed annotations.
    for event in out:
        if event["type"] == "response.output_text.done":
            assert event["text"] == sent.get(key(event), "")
        if event["type"] == "response.content_part.done":
            assert event["part"]["text"] == sent.get(key(event), "")
            assert event["part"]["annotations"] == added.get(key(event), [])
        if event["type"] in ("response.output_item.done",):
            for index, part in enumerate(event["item"].get("content", [])):
                assert part["text"] == sent.get((event["output_index"], index), "")
        if event["type"] in ("response.completed", "response.incomplete"):
            for output_index, item in enumerate(event["response"]["output"]):
                for index, part in enumerate(item.get("content", [])):
                    assert part["text"] == sent.get((output_index, index), "")
                    assert part["annotations"] == added.get((output_index, index), [])


@pytest.mark.parametrize("name", STREAMS)
def test_recorded_streams(implementation: str, name: str) -> None:
    upstream = load(name)
    out = list(clean_responses(upstream, implementation=implementation))  # type: ignore[arg-type]
    check_stream(upstream, out)


# What Responses-compatible servers leave out of their events (lemonade-sdk/lemonade issue
# #3607, teabranch/open-responses-server issue #44).
WITHOUT_INDICES = {
    "lemonade": {
        "response.output_item.": ("output_index",),
        "response.content_part.": ("content_index",),
        "response.output_text.": ("content_index",),
    },
    "open-responses-server": {"response.output_text.": ("content_index",)},
    # Deltas replayed with neither index nor item_id (RESMP-DEV/ccr-rust PR #25's review).
    "no item_id": {
        "response.output_text.": ("output_index", "content_index", "item_id"),
        "response.content_part.": ("output_index", "content_index", "item_id"),
    },
}


def without_indices(events: list[Any], server: str) -> list[Any]:
    left_out = WITHOUT_INDICES[server]
    return [
        {
            key: value
            for key, value in event.items()
            if not any(
                event["type"].startswith(kind) and key in names for kind, names in left_out.items()
            )
        }
        for event in events
    ]


@pytest.mark.parametrize("server", sorted(WITHOUT_INDICES))
@pytest.mark.parametrize(
    "name",
    [
        "web_search",
        "file_search",
        "cut",
        "incomplete",
        "recorded/vercel_web_search",
        "recorded/vercel_code_interpreter",
        "recorded/dotnet_file_search",
    ],
)
def test_a_stream_without_its_indices_is_cleaned_as_with_them(
    implementation: str, name: str, server: str
) -> None:
    """A text event without content_index is its item's one text part; an event without
    output_index is its item's (by item_id; without one, the item added last), an item
    added without one the next of the output: the stream comes out as it does with them
    (one text part a message)."""
    upstream = load(name)
    stripped = without_indices(upstream, server)
    assert stripped != upstream
    out = list(clean_responses(stripped, implementation=implementation))  # type: ignore[arg-type]
    expected = list(clean_responses(upstream, implementation=implementation))  # type: ignore[arg-type]
    assert without_indices(out, server) == without_indices(expected, server)


def test_a_web_search_annotation_still_covers_its_link(implementation: str) -> None:
    out = list(clean_responses(load("web_search"), implementation=implementation))  # type: ignore[arg-type]
    text = texts(out)[(1, 0)]
    spans = [e["annotation"] for e in out if e["type"] == ADDED]
    link = "https://www.axios.com/newsletters/axios-am?utm_source=openai"
    assert text[spans[0]["start_index"] : spans[0]["end_index"]] == f"([axios.com]({link}))"
    assert text[spans[1]["start_index"] : spans[1]["end_index"]].startswith("[\U0001f6a6 Axios")
    assert S not in text
    assert "\ue203" not in text


def test_a_file_citation_sent_early_waits_for_its_text() -> None:
    upstream = load("file_search")
    out = list(clean_responses(upstream))
    kinds = [e["type"] for e in out]
    # Upstream: the annotation came before the last delta; it now follows the text it
    # points into, and lands after "pizza", where the marker was.
    assert upstream.index(next(e for e in upstream if e["type"] == ADDED)) < max(
        i for i, e in enumerate(upstream) if e["type"] == DELTA
    )
    assert kinds.index(ADDED) > max(i for i, kind in enumerate(kinds) if kind == DELTA)
    text = texts(out)[(1, 0)]
    assert text == "Travis's favorite food is pizza."
    assert next(e for e in out if e["type"] == ADDED)["annotation"]["index"] == text.index(".")


# An agent's run (the OpenAI Agents SDK's raw events): its model calls' streams one after
# another, each from its `response.created` on, each numbering its output from 0.
AGENT_RUNS = [
    ("web_search", "file_search"),
    ("several_parts", "web_search", "several_parts"),
    ("cut", "web_search"),  # the first call's stream cut: what it holds goes out before the next
    ("incomplete", "file_search"),
]


def by_response(events: list[Event]) -> list[list[Event]]:
    """events cut before each `response.created`."""
    starts = [i for i, event in enumerate(events) if event["type"] == "response.created"]
    return [events[a:b] for a, b in zip(starts, [*starts[1:], len(events)], strict=True)]


@pytest.mark.parametrize("names", AGENT_RUNS, ids="+".join)
def test_responses_one_after_another_are_cleaned_apart(
    implementation: str, names: tuple[str, ...]
) -> None:
    calls = [load(name) for name in names]
    upstream = [event for call in calls for event in call]
    out = list(clean_responses(upstream, implementation=implementation))  # type: ignore[arg-type]
    cleaned = by_response(out)
    assert len(cleaned) == len(calls)
    for call, each in zip(calls, cleaned, strict=True):
        check_stream(call, each)
        assert each == list(clean_responses(call, implementation=implementation))  # type: ignore[arg-type]


def test_agents_sdk_events_as_dicts(implementation: str) -> None:
    """The OpenAI Agents SDK's stream events, here as dicts (tests/openai_adapter/
    test_agents.py runs the SDK itself): a raw event's Responses event is cleaned and goes out
    in a copy of its wrapper; a run item's message has the text the stream gave its parts,
    or, never streamed here, its own text cleaned whole; other events pass."""
    upstream = load("web_search")
    message = next(
        e["item"]
        for e in upstream
        if e["type"] == "response.output_item.done" and e["item"]["type"] == "message"
    )
    elsewhere = {**message, "id": "msg_elsewhere"}
    wrapped: list[Event] = [{"type": "agent_updated_stream_event", "new_agent": "guide"}]
    wrapped += [{"type": "raw_response_event", "data": event} for event in upstream]
    wrapped += [
        {
            "type": "run_item_stream_event",
            "name": "message_output_created",
            "item": {"type": "message_output_item", "raw_item": raw_item},
        }
        for raw_item in (message, elsewhere)
    ]
    wrapped.append({"type": "run_item_stream_event", "name": "tool_called", "item": {}})
    out = list(clean_responses(wrapped, implementation=implementation))  # type: ignore[arg-type]
    assert out[0] is wrapped[0]
    assert out[-1] is wrapped[-1]
    stream = list(clean_responses(upstream, implementation=implementation))  # type: ignore[arg-type]
    assert [e["data"] for e in out if e["type"] == "raw_response_event"] == stream
    placed = next(
        e["item"]
        for e in stream
        if e["type"] == "response.output_item.done" and e["item"]["type"] == "message"
    )
    whole = clean_response({"output": [elsewhere]}, implementation=implementation)  # type: ignore[arg-type]
    assert [e["item"]["raw_item"] for e in out[-3:-1]] == [placed, whole["output"][0]]
    assert "\ue200" not in json.dumps(placed)


def test_agents_sdk_events_cut_short_stay_wrapped(implementation: str) -> None:
    """What a run cut short still held goes out in copies of its last raw event, as the rest
    of the stream did."""
    upstream = load("cut")
    last = upstream[-1]
    upstream.append({**last, "delta": " and " + S + "cite", "sequence_number": 99})
    wrapped = [{"type": "raw_response_event", "data": event} for event in upstream]
    out = list(clean_responses(wrapped, implementation=implementation))  # type: ignore[arg-type]
    assert {event["type"] for event in out} == {"raw_response_event"}
    stream = list(clean_responses(upstream, implementation=implementation))  # type: ignore[arg-type]
    assert [event["data"] for event in out] == stream
    # The last delta's text, its START still undecided, was held to the end: a copy of it.
    assert stream[-1]["type"] == DELTA
    assert stream[-1] is not upstream[-1]


def test_a_cut_stream_releases_what_it_holds() -> None:
    upstream = load("cut")
    assert not any(e["type"].endswith(".done") and "text" in e for e in upstream)
    out = list(clean_responses(upstream))
    raw = texts(upstream)[(0, 0)]
    assert texts(out)[(0, 0)] == clean(raw)
    assert out[-1]["type"] == DELTA  # the held text, at the end of the stream


def test_an_incomplete_response_is_clean() -> None:
    out = list(clean_responses(load("incomplete")))
    assert out[-1]["type"] == "response.incomplete"
    assert out[-2]["type"] == DELTA  # released before the incomplete event
    text = out[-1]["response"]["output"][0]["content"][0]["text"]
    assert text == texts(out)[(0, 0)] == clean(texts(load("incomplete"))[(0, 0)])


def test_reasoning_and_other_events_pass_untouched() -> None:
    upstream = load("several_parts")
    out = list(clean_responses(upstream))
    reasoning = [e for e in upstream if "reasoning" in e["type"]]
    assert reasoning
    assert [e for e in out if "reasoning" in e["type"]] == reasoning
    assert all(any(e is o for o in out) for e in reasoning)


async def _collect(events: AsyncIterator[Any]) -> list[Any]:
    return [event async for event in events]


async def _aiter(items: list[Any]) -> AsyncIterator[Any]:
    for item in items:
        yield item


@pytest.mark.parametrize("name", [*STREAMS, "chat"])
def test_sync_and_async_give_the_same_events(implementation: str, name: str) -> None:
    upstream = load(name)
    if name == "chat":
        sync = list(clean_chat(upstream, implementation=implementation))  # type: ignore[arg-type]
        run = aclean_chat(_aiter(upstream), implementation=implementation)  # type: ignore[arg-type]
    else:
        sync = list(clean_responses(upstream, implementation=implementation))  # type: ignore[arg-type]
        run = aclean_responses(_aiter(upstream), implementation=implementation)  # type: ignore[arg-type]
    assert asyncio.run(_collect(run)) == sync


def test_the_input_is_never_changed() -> None:
    for name in [*STREAMS, "chat"]:
        upstream = load(name)
        before = copy.deepcopy(upstream)
        list(clean_chat(upstream) if name == "chat" else clean_responses(upstream))
        assert upstream == before


# --- chat -------------------------------------------------------------------------------------


def chat_text(chunks: list[Event]) -> str:
    return "".join(
        choice["delta"].get("content") or "" for chunk in chunks for choice in chunk["choices"]
    )


def test_chat_stream(implementation: str) -> None:
    upstream = load("chat")
    out = list(clean_chat(upstream, implementation=implementation))  # type: ignore[arg-type]
    raw = chat_text(upstream)
    text = chat_text(out)
    assert text == clean(raw)
    assert out[0] is upstream[0]  # the role chunk
    assert out[-1] is upstream[-1]  # the usage chunk
    finish = [c for c in out if c["choices"] and c["choices"][0]["finish_reason"] == "stop"]
    assert len(finish) == 1
    # The last line went out as it came (the front): the finish carries what was held.
    assert text.endswith(finish[0]["choices"][0]["delta"].get("content") or "")
    annotations = [
        a for c in out for ch in c["choices"] for a in ch["delta"].get("annotations", [])
    ]
    assert len(annotations) == 1
    place = annotations[0]["url_citation"]
    assert text[place["start_index"] : place["end_index"]] == "Naples"
    assert len(out) < len(upstream)  # chunks that released nothing are dropped


def test_chat_choices_are_cleaned_apart() -> None:
    def chunk(*pieces: tuple[int, str | None, str | None]) -> Event:
        return {
            "object": "chat.completion.chunk",
            "choices": [
                {"index": i, "delta": {"content": text}, "finish_reason": finish}
                for i, text, finish in pieces
            ],
        }

    chunks = [
        chunk((0, "one " + S, None), (1, "two " + MARKER[:3], None)),
        chunk((0, "cite" + D + "turn0search0" + E + ".\n", None), (1, MARKER[3:] + " end", None)),
        chunk((0, None, "stop"), (1, None, "length")),
    ]
    out = list(clean_chat(chunks))
    assert (
        chat_text([{"choices": [c for c in o["choices"] if c["index"] == 0]} for o in out])
        == "one.\n"
    )
    assert (
        chat_text([{"choices": [c for c in o["choices"] if c["index"] == 1]} for o in out])
        == "two end"
    )


def test_a_chat_choice_without_index_is_the_one_at_its_place(implementation: str) -> None:
    """Some OpenAI-compatible gateways send chunks whose choices have no `index`: each is
    the choice at its place in the list, as their clients read it (a marker split across
    those chunks is still removed whole)."""
    pieces = ["Tides turn ", MARKER[:4], MARKER[4:], " twice.\n", "More " + MARKER[:9], MARKER[9:]]
    chunks = [
        {"id": "c", "choices": [{"delta": {"content": p}, "finish_reason": None}]} for p in pieces
    ]
    chunks.append({"id": "c", "choices": [{"delta": {}, "finish_reason": "stop"}]})
    out = list(clean_chat(chunks, implementation=implementation))  # type: ignore[arg-type]
    assert chat_text(out) == clean("".join(pieces)) == "Tides turn twice.\nMore"
    assert all("index" not in choice for chunk in out for choice in chunk["choices"])
    two = {"choices": [{"delta": {"content": "a " + MARKER}}, {"delta": {"content": "b."}}]}
    cleaner = ChatCleaner(implementation=implementation)  # type: ignore[arg-type]
    sent = cleaner.feed(two) + cleaner.close()
    assert [chat_text([{"choices": [c]}]) for o in sent for c in o["choices"]] == ["a", "b."]
    assert len(cleaner.marks(0)) == 1  # the marker was the first choice's
    assert not cleaner.marks(1)
    whole = {"choices": [{"message": {"role": "assistant", "content": "Tides " + MARKER + "."}}]}
    assert clean_completion(whole)["choices"][0]["message"]["content"] == "Tides."


def test_a_chat_stream_without_finish_releases_at_the_end() -> None:
    chunks = [
        {"choices": [{"index": 0, "delta": {"content": "held " + MARKER}, "finish_reason": None}]},
    ]
    out = list(clean_chat(chunks))
    assert chat_text(out) == "held"
    assert out[-1]["choices"][0]["finish_reason"] is None


@pytest.mark.parametrize("finish", [True, False])
def test_a_choice_text_beside_the_delta_carries_the_text_released_at_the_end(
    implementation: str, finish: bool
) -> None:
    """Together's `choices[].text` repeats the delta's content: the held text released by its
    finish chunk (whose text and content are empty) or at the stream's end goes in both."""

    def chunk(piece: str, finish_reason: str | None = None) -> Event:
        choice = {"index": 0, "text": piece, "delta": {"content": piece}}
        return {"id": "c", "choices": [{**choice, "finish_reason": finish_reason}]}

    upstream = [chunk(piece) for piece in ["See", " the ", "[docs"]]
    if finish:
        upstream.append(chunk("", "stop"))
    out = list(clean_chat(upstream, implementation=implementation))
    choices = [c["choices"][0] for c in out]
    assert [choice["text"] for choice in choices] == [
        choice["delta"]["content"] for choice in choices
    ]
    assert "".join(choice["text"] for choice in choices) == clean("See the [docs")


def test_a_chat_stream_cut_after_a_tool_call_sends_only_the_held_text() -> None:
    """The text released at the end goes out in a chunk of its own: the last delta's tool
    call (or role) went out already, and a client that appends arguments would double it."""

    def chunk(delta: Event) -> Event:
        return {"id": "c", "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}

    call = [{"index": 0, "id": "call_1", "type": "function", "function": {"arguments": "{}"}}]
    upstream = [
        chunk({"role": "assistant", "content": "Let me check "}),
        chunk({"tool_calls": call}),
    ]
    out = list(clean_chat(upstream))
    assert [c["choices"][0]["delta"] for c in out] == [
        {"role": "assistant", "content": "Let me check"},
        {"tool_calls": call},
        {"content": " "},
    ]


def test_tool_call_chunks_pass_untouched() -> None:
    chunk = {
        "choices": [
            {
                "index": 0,
                "delta": {
                    "content": None,
                    "tool_calls": [{"index": 0, "function": {"arguments": "{"}}],
                },
                "finish_reason": None,
            }
        ]
    }
    assert list(clean_chat([chunk])) == [chunk]


# --- whole results ----------------------------------------------------------------------------


def test_clean_response_and_completion(implementation: str) -> None:
    final = load("web_search")[-1]["response"]
    cleaned = clean_response(final, implementation=implementation)  # type: ignore[arg-type]
    streamed = list(clean_responses(load("web_search")))[-1]["response"]
    assert cleaned == streamed
    assert final["output"][1]["content"][0]["text"] != cleaned["output"][1]["content"][0]["text"]
    raw = chat_text(load("chat"))
    completion = {
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": raw,
                    "annotations": [
                        {
                            "type": "url_citation",
                            "url_citation": {
                                "start_index": raw.index("Naples"),
                                "end_index": raw.index("Naples") + 6,
                                "url": "u",
                                "title": "t",
                            },
                        }
                    ],
                },
                "finish_reason": "stop",
            }
        ],
    }
    done = clean_completion(completion, implementation=implementation)  # type: ignore[arg-type]
    message = done["choices"][0]["message"]
    assert message["content"] == clean(raw)
    place = message["annotations"][0]["url_citation"]
    assert message["content"][place["start_index"] : place["end_index"]] == "Naples"


# --- marks for front ends ---------------------------------------------------------------------


def deltas(text: str, size: int, output_index: int = 0, content_index: int = 0) -> list[Event]:
    return [
        {
            "type": DELTA,
            "output_index": output_index,
            "content_index": content_index,
            "item_id": "msg",
            "delta": text[at : at + size],
            "logprobs": [],
            "sequence_number": at,
        }
        for at in range(0, len(text), size)
    ]


def one_delta(text: str) -> Event:
    """A delta event of part (0, 0) carrying `text`, which may be empty."""
    return {**deltas("x", 1)[0], "delta": text}


def done(text: str, output_index: int = 0, content_index: int = 0) -> Event:
    return {
        "type": "response.output_text.done",
        "output_index": output_index,
        "content_index": content_index,
        "item_id": "msg",
        "text": text,
        "logprobs": [],
    }


@pytest.mark.parametrize(("offsets", "width"), [("codepoints", 1), ("utf16", 2), ("utf8", 4)])
def test_marks_in_every_unit(implementation: str, offsets: str, width: int) -> None:
    raw = (
        "\U0001f600 first "
        + MARKER
        + ".\nsecond "
        + S
        + "filecite"
        + D
        + "turn0file1"
        + D
        + "L8-L13"
        + E
    )
    told: list[Any] = []
    cleaner = ResponsesCleaner(
        offsets=offsets,  # type: ignore[arg-type]
        on_marks=lambda part, marks: told.append((part, marks)),
        implementation=implementation,  # type: ignore[arg-type]
    )
    for event in [*deltas(raw, 3), done(raw)]:
        cleaner.feed(event)
    text = clean(raw)
    marks = cleaner.marks(0, 0)
    assert [(m.family, m.source_ids, m.locator) for m in marks] == [
        ("cite", ("turn0search0",), None),
        ("filecite", ("turn0file1",), "L8-L13"),
    ]
    assert marks[0].start == marks[0].end == text.index(".") - 1 + width
    assert marks[1].start == len(text) - 1 + width
    assert [m for _, batch in told for m in batch] == marks
    assert {part for part, _ in told} == {(0, 0)}
    assert cleaner.marks(5, 0) == []


def test_snapshot_is_the_clean_text_so_far() -> None:
    raw = "one " + MARKER + ".\ntwo " + MARKER + ".\nthree"
    events = [
        {**e, "snapshot": raw[: e["sequence_number"] + len(e["delta"])]} for e in deltas(raw, 4)
    ]
    out = list(clean_responses([*events, done(raw)]))
    sent = ""
    for event in out:
        if event["type"] == DELTA:
            sent += event["delta"]
            assert event["snapshot"] == sent
    assert sent == "one.\ntwo.\nthree"


def test_logprobs_go_only_where_the_text_changed() -> None:
    logprob = [{"token": "x", "logprob": -0.1, "bytes": [120], "top_logprobs": []}]
    plain = {**deltas("plain line\n", 100)[0], "logprobs": logprob}
    marked = {**deltas("a " + MARKER + ".\n", 100)[0], "logprobs": logprob, "content_index": 1}
    out = list(clean_responses([plain, marked]))
    assert out[0] is plain
    assert out[1]["delta"] == "a.\n"
    assert out[1]["logprobs"] == []


def logprob(token: str) -> dict[str, Any]:
    return {"token": token, "logprob": -0.5, "bytes": list(token.encode()), "top_logprobs": []}


def test_logprobs_go_out_with_the_end_of_their_text() -> None:
    """A delta's text that went out with a later delta (a blank a marker might have taken)
    takes its logprobs along; only those of a delta whose text cleaning changed are dropped:
    what a reader collects fits the text it collects."""
    pieces = ["Hello ", "world", ", see ", MARKER, ".\n"]
    upstream = [{**deltas(piece, 1000)[0], "logprobs": [logprob(piece)]} for piece in pieces]
    raw = "".join(pieces)
    ended = {**done(raw), "logprobs": [logprob(piece) for piece in pieces]}
    out = list(clean_responses([*upstream, ended]))
    sent = [e for e in out if e["type"] == DELTA]
    assert [e["delta"] for e in sent] == ["Hello", " world", ", see", ".\n"]
    assert [[lp["token"] for lp in e["logprobs"]] for e in sent] == [
        [],
        ["Hello ", "world"],
        [],
        [".\n"],  # ", see " lost its blank to the marker: its logprobs and the marker's go
    ]
    assert out[-1]["text"] == clean(raw)
    assert [lp["token"] for lp in out[-1]["logprobs"]] == ["Hello ", "world", ".\n"]


@settings(max_examples=200)
@given(
    st.lists(
        st.sampled_from(["word", " ", ", ", ".", "\n", "(", ")", "[a](", MARKER]), max_size=25
    ),
    st.lists(st.integers(0, 6), min_size=1, max_size=8).filter(any),
)
def test_every_logprob_goes_out_once_unless_cleaning_changed_its_text(
    pieces: list[str], sizes: list[int]
) -> None:
    """Each delta's logprob (its text as the token) goes out once, in order, with the event
    that releases the end of its text, or never, exactly when a cut of the whole text's
    cleaning touches that delta's text.  A size 0 is an empty delta (a token that ends no
    character): its logprob goes out as soon as the text before it, unless a cut spans it."""
    raw = "".join(pieces)
    chunks, at = [], 0
    for size in itertools.cycle(sizes):
        if at >= len(raw):
            break
        chunks.append(raw[at : at + size])
        at += size
    upstream = [{**one_delta(chunk), "logprobs": [logprob(chunk)]} for chunk in chunks]
    out = list(clean_responses([*upstream, done(raw)]))
    tokens = [lp["token"] for e in out if e["type"] == DELTA for lp in e["logprobs"]]
    cuts = clean_mapped(raw).cuts
    kept, at = [], 0
    for chunk in chunks:
        if not any(cut.start < at + len(chunk) and at < cut.end for cut in cuts):
            kept.append(chunk)
        at += len(chunk)
    assert tokens == kept
    if not cuts:
        assert "".join(tokens) == texts(out).get((0, 0), "") == raw


def test_an_empty_delta_with_tokens_goes_out_with_them() -> None:
    """A token that ends no character comes as an empty delta with its logprobs: it goes out
    with them, or they with the next text when text before them is held, so the deltas'
    tokens are the done event's."""
    pieces = ["Hi", "", " there ", "", "friend", ""]
    upstream = [{**one_delta(piece), "logprobs": [logprob(piece)]} for piece in pieces]
    raw = "".join(pieces)
    ended = {**done(raw), "logprobs": [logprob(piece) for piece in pieces]}
    out = list(clean_responses([*upstream, ended]))
    sent = [e for e in out if e["type"] == DELTA]
    assert [e["delta"] for e in sent] == ["Hi", "", " there", " friend", ""]
    assert [[lp["token"] for lp in e["logprobs"]] for e in sent] == [
        ["Hi"],
        [""],
        [],
        [" there ", "", "friend"],  # the empty delta after the held blank waited behind it
        [""],
    ]
    tokens = [lp["token"] for e in sent for lp in e["logprobs"]]
    assert tokens == [lp["token"] for lp in out[-1]["logprobs"]] == pieces


def test_chat_logprobs_go_out_with_the_end_of_their_text() -> None:
    def chunk(content: str) -> Event:
        logprobs = {"content": [logprob(content)], "refusal": None}
        choice = {"index": 0, "delta": {"content": content}, "logprobs": logprobs}
        return {"id": "c", "choices": [{**choice, "finish_reason": None}]}

    upstream = [chunk("Hello "), chunk("world"), chunk(" " + MARKER), chunk(".")]
    out = list(clean_chat(upstream))
    got = [
        (c["choices"][0]["delta"]["content"], c["choices"][0]["logprobs"])
        for c in out
        if c["choices"]
    ]
    assert [text for text, _ in got] == ["Hello", " world", "."]
    tokens = [[lp["token"] for lp in (lps or {}).get("content") or []] for _, lps in got]
    assert tokens == [[], ["Hello ", "world"], ["."]]
    assert [lp["token"] for lp in upstream[1]["choices"][0]["logprobs"]["content"]] == ["world"]

    # A token that ends no character (an empty delta) waits behind the held blank.
    out = list(clean_chat([chunk("Hello "), chunk(""), chunk("world")]))
    got = [(c["choices"][0]["delta"]["content"], c["choices"][0]["logprobs"]) for c in out]
    assert [text for text, _ in got] == ["Hello", "", " world"]
    tokens = [[lp["token"] for lp in (lps or {}).get("content") or []] for _, lps in got]
    assert tokens == [[], [], ["Hello ", "", "world"]]


def test_a_done_text_longer_than_the_deltas_is_sent_too() -> None:
    raw = "all of it " + MARKER + " here"
    out = list(clean_responses([*deltas(raw[:5], 5), done(raw)]))
    assert texts(out)[(0, 0)] == clean(raw)
    assert out[-1]["text"] == clean(raw)


def test_a_resumed_stream_ends_with_the_whole_text_clean() -> None:
    """A stream resumed after its first events (`starting_after`) sends the rest of the text
    in deltas and the whole of it in its done events: those carry the whole text clean, and
    its annotations placed in it, not the deltas' text with the whole text appended."""
    raw = "Kyoto " + MARKER + " was the capital. It " + MARKER + " still is."
    tail = raw[raw.index(" It") :]
    annotation = {"type": "url_citation", "start_index": 0, "end_index": 5, "url": "u"}
    part_done = {
        "type": "response.content_part.done",
        "output_index": 0,
        "content_index": 0,
        "item_id": "msg",
        "part": {"type": "output_text", "text": raw, "annotations": [annotation]},
    }
    out = list(clean_responses([*deltas(tail, 4), done(raw), part_done]))
    assert texts(out)[(0, 0)] == clean(tail)
    assert out[-2]["text"] == out[-1]["part"]["text"] == clean(raw)
    assert out[-1]["part"]["annotations"] == [{**annotation, "end_index": 5}]


def test_a_delta_made_for_a_part_carries_its_item_id() -> None:
    item = {
        "id": "msg_7",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Hello " + MARKER + ".", "annotations": []}],
    }
    added = {
        "type": "response.content_part.added",
        "item_id": "msg_7",
        "output_index": 0,
        "content_index": 0,
        "part": {"type": "output_text", "text": "", "annotations": []},
    }
    item_done = {"type": "response.output_item.done", "output_index": 0, "item": item}
    out = list(clean_responses([added, item_done]))
    assert out[1]["type"] == DELTA
    assert (out[1]["item_id"], out[1]["delta"]) == ("msg_7", "Hello.")


def test_a_done_event_alone_gives_its_text_in_one_delta() -> None:
    raw = "only done " + MARKER + " here"
    out = list(clean_responses([done(raw)]))
    assert [e["type"] for e in out] == [DELTA, "response.output_text.done"]
    assert out[0]["delta"] == out[1]["text"] == clean(raw)


def test_an_annotation_waits_for_an_earlier_one() -> None:
    raw = "first line " + MARKER + ".\nsecond line\n"
    far = {"type": "file_citation", "file_id": "f", "filename": "a", "index": len(raw) + 50}
    near = {"type": "url_citation", "start_index": 0, "end_index": 5, "url": "u", "title": "t"}
    events: list[Event] = [
        {
            "type": ADDED,
            "output_index": 0,
            "content_index": 0,
            "annotation": far,
            "annotation_index": 0,
        },
        {
            "type": ADDED,
            "output_index": 0,
            "content_index": 0,
            "annotation": near,
            "annotation_index": 1,
        },
        *deltas(raw, 7),
        done(raw),
    ]
    out = list(clean_responses(events))
    added = [e for e in out if e["type"] == ADDED]
    assert [e["annotation"]["type"] for e in added] == ["file_citation", "url_citation"]
    assert [e["annotation_index"] for e in added] == [0, 1]
    assert added[0]["annotation"]["index"] == len(clean(raw))  # past the text: its end
    assert out.index(added[0]) > out.index(next(e for e in out if e["type"] == DELTA))


def test_the_hold_of_an_annotation_is_the_hold_of_its_text() -> None:
    # A paragraph with a backtick is held until it ends, or up to max_hold: the annotation
    # goes out with the text that max_hold releases, long before the end.
    lines = "a `tick\n" + "".join(f"line {i} " + MARKER + "\n" for i in range(40))
    raw = lines + "the end"
    near = {"type": "url_citation", "start_index": 0, "end_index": 7, "url": "u", "title": "t"}
    events = [
        {"type": "response.created", "response": {"id": "resp_1", "output": []}},
        {
            "type": ADDED,
            "output_index": 0,
            "content_index": 0,
            "annotation": near,
            "annotation_index": 0,
        },
        *deltas(raw, 9),
    ]
    out = list(clean_responses(events, max_hold=100))
    first = next(i for i, e in enumerate(out) if e["type"] == ADDED)
    assert first < len(out) - 2
    assert out[first]["annotation"]["end_index"] == 7


def test_a_resumed_stream_holds_its_annotations_for_the_done_event() -> None:
    """A stream resumed in a part's text (`starting_after`, the API's background mode) has
    no response.created nor output_item.added: its annotations count the text before the
    resume point, which never came here, so they wait for the done event, whose whole text
    places them (as the recordings of openai-dotnet and vercel/ai have it)."""
    skipped = "Alpha" + MARKER  # sent before the resume point
    rest = " beta gamma delta epsilon zeta eta theta iota kappa."
    raw = skipped + rest
    start = raw.index("gamma")
    annotation = {
        "type": "url_citation",
        "start_index": start,
        "end_index": start + 5,
        "url": "https://example.com/g",
        "title": "g",
    }
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    tail = [
        {"type": "response.output_text.delta", **where, "delta": rest, "sequence_number": 5},
        {"type": ADDED, **where, "annotation_index": 0, "annotation": annotation},
        {"type": "response.output_text.done", **where, "text": raw, "sequence_number": 7},
    ]
    cleaned = clean(raw)
    for resumed in (tail, [{"type": "response.output_item.added", "output_index": 1}, *tail]):
        out = list(clean_responses(resumed))
        (added,) = [event for event in out if event["type"] == ADDED]
        placed = added["annotation"]
        assert cleaned[placed["start_index"] : placed["end_index"]] == "gamma"
        assert out.index(added) == len(out) - 2  # with the done event, just before it
    # Seen from its start (its item added here), the part places it as its text comes.
    started = [{"type": "response.output_item.added", "output_index": 0}, *tail]
    started[1] = {**started[1], "delta": raw}
    out = list(clean_responses(started))
    assert [event["type"] for event in out][:3] == [
        "response.output_item.added",
        *["response.output_text.delta", ADDED],
    ]


def test_the_error_event_and_a_broken_iterator_release_what_is_held() -> None:
    raw = "held text " + MARKER + " more"
    error = {"type": "error", "code": "server_error", "message": "boom", "sequence_number": 99}
    out = list(clean_responses([*deltas(raw, 4), error]))
    assert out[-1] is error
    assert texts(out)[(0, 0)] == clean(raw)

    def broken() -> Iterator[Event]:
        yield from deltas(raw, 4)
        raise ConnectionError("upstream went away")

    got: list[Event] = []
    cleaned = clean_responses(broken())
    with pytest.raises(ConnectionError):
        got.extend(cleaned)
    assert texts(got)[(0, 0)] == clean(raw)


# --- bad input --------------------------------------------------------------------------------


def test_events_of_unknown_shape_pass() -> None:
    odd: list[Any] = [
        object(),
        {"no": "type"},
        {"type": 5},
        "text",
        None,
        {"type": "response.audio.delta", "delta": "AAA"},
    ]
    assert [out for e in odd for out in ResponsesCleaner().feed(e)] == odd
    assert [out for e in odd for out in ChatCleaner().feed(e)] == odd


def test_bad_text_events_are_named_and_spoil_nothing_else() -> None:
    cleaner = ResponsesCleaner()
    good = deltas("kept " + MARKER + " text\n", 100)[0]
    with pytest.raises(ValueError, match="output_index as an int"):
        cleaner.feed({"type": DELTA, "content_index": 0, "delta": "x"})  # no item added yet
    with pytest.raises(ValueError, match="output_index as an int"):
        cleaner.feed({"type": DELTA, "item_id": "unknown", "delta": "x"})
    with pytest.raises(ValueError, match="output_index as an int, not list"):
        cleaner.feed({"type": DELTA, "output_index": [0], "delta": "x"})
    with pytest.raises(ValueError, match="output_index as an int"):
        cleaner.feed({"type": DELTA, "item_id": ["unhashable"], "delta": "x"})
    with pytest.raises(ValueError, match="content_index as an int, not str"):
        cleaner.feed({"type": DELTA, "output_index": 0, "content_index": "0", "delta": "x"})
    with pytest.raises(ValueError, match="delta as a str, not NoneType"):
        cleaner.feed({**good, "output_index": 3, "delta": None})
    # Logprobs of no list would fail the events that end the part (its done, the response's).
    with pytest.raises(ValueError, match="logprobs as a list or None, not float"):
        cleaner.feed({**good, "output_index": 4, "logprobs": 1.5})
    assert cleaner.feed(good)[0]["delta"] == "kept text\n"
    cleaner.feed(done("kept " + MARKER + " text\n"))
    with pytest.raises(ValueError, match="after its part was done"):
        cleaner.feed(good)
    other = cleaner.feed({**good, "output_index": 1, "delta": "other " + MARKER + "\n"})
    assert other[0]["delta"] == "other\n"
    cleaner.close()
    with pytest.raises(ValueError, match="after close"):
        cleaner.feed(good)
    with pytest.raises(ValueError, match="content as a str, a list of parts or None"):
        ChatCleaner().feed({"choices": [{"index": 0, "delta": {"content": 5}}]})
    # Content parts with no text part, as Mistral's stream sends its thinking: as they came.
    parts = [{"type": "thinking", "thinking": [{"type": "text", "text": "hm"}]}]
    listed = {"choices": [{"index": 0, "delta": {"content": parts}, "finish_reason": None}]}
    assert ChatCleaner().feed(listed) == [listed]
    for logprobs in (1.5, {"content": "x"}):
        bad = {"choices": [{"index": 0, "delta": {"content": "x"}, "logprobs": logprobs}]}
        with pytest.raises(ValueError, match="logprobs as None or an object whose content"):
            ChatCleaner().feed(bad)
    with pytest.raises(ValueError, match="a chat choice needs index as an int, not str"):
        ChatCleaner().feed({"choices": [{"index": "0", "delta": {"content": "x"}}]})
    # A choice that is no dict or model carries no text: the chunk passes as it came.
    for junk in (None, 5, "x"):
        assert ChatCleaner().feed({"choices": [junk]}) == [{"choices": [junk]}]
    # Even after a choice that held text: the end still sends that text.
    cleaner = ChatCleaner()
    cleaner.feed({"choices": [{"index": 0, "delta": {"content": "held ["}}]})
    for junk in (None, True, "x"):
        assert cleaner.feed({"choices": [junk]}) == [{"choices": [junk]}]
    (end,) = cleaner.close()
    assert end["choices"][0]["delta"] == {"content": " ["}
    # So does a delta that is none: the finish after it still ends the choice's text.
    cleaner = ChatCleaner()
    text = {"choices": [{"index": 0, "delta": {"content": "held ["}}]}
    junk_delta = {"choices": [{"index": 0, "delta": [5]}]}
    assert cleaner.feed(text)[0]["choices"][0]["delta"]["content"] == "held"
    assert cleaner.feed(junk_delta) == [junk_delta]
    finish = cleaner.feed({"choices": [{"index": 0, "finish_reason": "stop"}]})
    assert finish[0]["choices"][0]["delta"] == {"content": " ["}


def listed_chunk(*parts: Any, finish: str | None = None) -> Event:
    delta = {"content": list(parts)}
    return {"id": "c", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def listed_text(chunks: list[Event]) -> str:
    return "".join(
        element["text"]
        for chunk in chunks
        for choice in chunk["choices"]
        for element in (choice["delta"].get("content") or [])
        if element.get("type") == "text"
    )


@pytest.mark.parametrize("size", [1, 3, 7, 100])
def test_chat_content_parts_are_cleaned(implementation: str, size: int) -> None:
    """Content as a list of parts (some OpenAI-compatible servers): the text parts' text is
    the choice's, cleaned; every other part goes out as it came, in order."""
    raw = "Solar output " + MARKER + " falls.\nNext " + MARKER + "line"
    thinking = {"type": "thinking", "thinking": [{"type": "text", "text": "hm " + MARKER}]}
    chunks = [listed_chunk(thinking)]
    chunks += [
        listed_chunk({"type": "text", "text": raw[at : at + size]})
        for at in range(0, len(raw), size)
    ]
    chunks.append(listed_chunk(finish="stop"))
    out = list(clean_chat(chunks, implementation=implementation))  # type: ignore[arg-type]
    assert listed_text(out) == clean(raw)
    assert out[0] == chunks[0]  # the thinking part, untouched
    assert out[-1]["choices"][0]["finish_reason"] == "stop"
    for chunk in out:  # a chunk left with nothing is dropped, never sent empty
        content = chunk["choices"][0]["delta"]["content"]
        assert content or chunk["choices"][0]["finish_reason"]
    # Several text parts in one chunk, and parts of other kinds between them.
    mixed = listed_chunk(
        {"type": "text", "text": "A " + MARKER[:5]},
        {"type": "reference", "reference_ids": [1]},
        {"type": "text", "text": MARKER[5:] + " b."},
        finish="stop",
    )
    (sent,) = clean_chat([mixed])
    assert sent["choices"][0]["delta"]["content"] == [
        {"type": "text", "text": "A b."},
        {"type": "reference", "reference_ids": [1]},
    ]


def test_chat_content_parts_held_at_a_cut_go_out_as_a_part() -> None:
    raw = "Cut here, "  # the separator and the blank wait for what follows: the end
    out = list(clean_chat([listed_chunk({"type": "text", "text": raw})]))
    assert [chunk["choices"][0]["delta"]["content"] for chunk in out] == [
        [{"type": "text", "text": "Cut here"}],
        [{"type": "text", "text": ", "}],
    ]
    assert listed_text(out) == clean(raw)
    # Released by a finish_reason whose chunk has no content: still a part.
    finish = {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    out = list(clean_chat([listed_chunk({"type": "text", "text": raw}), finish]))
    assert out[-1]["choices"][0]["delta"]["content"] == [{"type": "text", "text": ", "}]
    assert listed_text(out) == clean(raw)


def test_text_released_at_the_end_takes_the_shape_its_text_came_in() -> None:
    thinking = listed_chunk({"type": "thinking", "thinking": [{"type": "text", "text": "hm"}]})
    text = {"id": "c", "choices": [{"index": 0, "delta": {"content": "Cut here, "}}]}
    finish = {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    out = list(clean_chat([thinking, text, finish]))
    assert out[0] == thinking
    assert [chunk["choices"][0]["delta"]["content"] for chunk in out[1:]] == ["Cut here", ", "]


def test_chat_content_as_a_str_subclass_is_text() -> None:
    class Text(str):
        pass

    chunk = {"choices": [{"index": 0, "delta": {"content": Text("a " + MARKER + ".")}}]}
    assert chat_text(list(clean_chat([chunk]))) == "a."


def test_a_completion_with_content_parts_is_cleaned() -> None:
    parts = [
        {"type": "text", "text": "Solar " + MARKER[:4]},
        {"type": "reference", "reference_ids": [0]},
        {"type": "text", "text": MARKER[4:] + " output."},
    ]
    completion = {"choices": [{"index": 0, "message": {"role": "assistant", "content": parts}}]}
    cleaned = clean_completion(completion)
    assert cleaned["choices"][0]["message"]["content"] == [
        {"type": "text", "text": "Solar output."},
        {"type": "reference", "reference_ids": [0]},
    ]
    assert completion["choices"][0]["message"]["content"] is parts  # the input is not changed


def test_a_delta_for_a_part_never_opened_opens_it() -> None:
    raw = "no content_part.added " + MARKER + " first"
    out = list(clean_responses([*deltas(raw, 5, output_index=2, content_index=1), done(raw, 2, 1)]))
    assert texts(out)[(2, 1)] == clean(raw)


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"lenient": 1}, TypeError, "lenient must be bool"),
        ({"max_hold": 0}, TypeError, "max_hold"),
        ({"offsets": "bytes"}, ValueError, "offsets must be one of"),
        ({"on_marks": 3}, TypeError, "on_marks must be None or callable"),
        ({"widgets": 3}, TypeError, "widgets must be a mapping"),
    ],
)
def test_bad_options(options: dict[str, Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        ResponsesCleaner(**options)
    with pytest.raises(error, match=match):
        ChatCleaner(**options)


def test_options_reach_the_text() -> None:
    raw = "a citeturn0search0 b `" + MARKER + "` " + S + "navlist" + D + "x" + E + "\n"
    widgets = {"navlist": lambda marker: "[nav]"}
    out = list(
        clean_responses(
            [*deltas(raw, 3), done(raw)], lenient=True, skip_code=False, widgets=widgets
        )
    )
    assert (
        texts(out)[(0, 0)]
        == clean(raw, lenient=True, skip_code=False, widgets=widgets)
        == "a b `` [nav]\n"
    )


# --- every split, every placement ---------------------------------------------------------------

fragments = st.lists(
    st.sampled_from(
        [
            MARKER,
            MARKER,
            S,
            D,
            E,
            "\ue203",
            "\ue204",
            " ",
            "  ",
            ".",
            "\n",
            "\n\n",
            "`",
            "```\n",
            "[a](",
            ")",
            "word",
            "\U0001f600",
            S + "entity" + D + '["k","Name"]' + E,
            "- ",
        ]
    ),
    min_size=1,
    max_size=25,
).map("".join)


@st.composite
def streams(draw: st.DrawFn) -> tuple[str, list[Event], list[Event]]:
    raw = draw(fragments)
    bounds = sorted(set(draw(st.lists(st.integers(1, max(1, len(raw) - 1)), max_size=8))))
    points = [0, *[b for b in bounds if b < len(raw)], len(raw)]
    pieces = [raw[a:b] for a, b in itertools.pairwise(points)]
    annotations = []
    for _ in range(draw(st.integers(0, 3))):
        start = draw(st.integers(0, len(raw)))
        end = draw(st.integers(start, len(raw)))
        kind = draw(st.sampled_from(["url_citation", "file_citation", "container_file_citation"]))
        if kind == "file_citation":
            annotations.append({"type": kind, "file_id": "f", "filename": "n", "index": start})
        else:
            annotations.append({"type": kind, "start_index": start, "end_index": end, "url": "u"})
    where = {"output_index": 0, "content_index": 0, "item_id": "m"}
    events: list[Event] = [
        {"type": DELTA, **where, "delta": piece, "logprobs": []} for piece in pieces
    ]
    for number, annotation in enumerate(annotations):
        at = draw(st.integers(0, len(events)))
        events.insert(
            at, {"type": ADDED, **where, "annotation": annotation, "annotation_index": number}
        )
    for number, event in enumerate(events):
        event["sequence_number"] = number
    part = {"type": "output_text", "text": raw, "annotations": annotations}
    events += [
        {"type": "response.output_text.done", **where, "text": raw, "logprobs": []},
        {"type": "response.content_part.done", **where, "part": part},
    ]
    return raw, annotations, events


@settings(max_examples=100)
@given(streams(), st.sampled_from(["codepoints", "utf16", "utf8"]))
def test_every_split_and_placement_gives_the_same_stream(
    implementation: str, case: tuple[str, list[Event], list[Event]], offsets: str
) -> None:
    raw, annotations, events = case
    told: list[Any] = []
    out = list(
        clean_responses(
            events,
            offsets=offsets,  # type: ignore[arg-type]
            on_marks=lambda part, marks: told.extend(marks),
            implementation=implementation,  # type: ignore[arg-type]
        )
    )
    text = clean(raw)
    # The marks told, in order, whatever the split and the release timing.
    whole = clean_with_marks(raw, offsets=offsets, implementation=implementation)  # type: ignore[arg-type]
    assert told == whole.marks
    assert "".join(e["delta"] for e in out if e["type"] == DELTA) == text
    added = [e for e in out if e["type"] == ADDED]
    assert [e["annotation_index"] for e in added] == list(range(len(annotations)))
    order = [e["annotation"] for e in events if e["type"] == ADDED]
    expected = [moved(annotation, raw) for annotation in order]
    assert [e["annotation"] for e in added] == expected
    assert out[-1]["part"]["text"] == text
    assert out[-1]["part"]["annotations"] == [moved(a, raw) for a in annotations]
    for place in expected:
        if "end_index" in place:
            assert 0 <= place["start_index"] <= place["end_index"] <= len(text)


@settings(max_examples=100)
@given(fragments, st.data())
def test_chat_content_parts_split_anyhow_clean_as_the_text(
    implementation: str, raw: str, data: st.DataObject
) -> None:
    """Content parts, split anywhere, with other parts between them and a finish or a cut at
    the end: the text parts say `clean(raw)`, the other parts go out as they came."""
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(raw)), max_size=10))))
    points = [0, *cuts, len(raw)]
    chunks: list[Event] = []
    others: list[Any] = []
    for number, (a, b) in enumerate(itertools.pairwise(points)):
        parts: list[Any] = [{"type": "text", "text": raw[a:b]}]
        if data.draw(st.booleans()):
            other = {"type": "reference", "reference_ids": [number]}
            parts.insert(data.draw(st.integers(0, 1)), other)
            others.append(other)
        chunks.append(listed_chunk(*parts))
    if data.draw(st.booleans()):
        chunks.append(listed_chunk(finish="stop"))
    out = list(clean_chat(chunks, implementation=implementation))  # type: ignore[arg-type]
    assert listed_text(out) == clean(raw)
    sent = [
        element
        for chunk in out
        for element in chunk["choices"][0]["delta"]["content"] or []
        if element.get("type") != "text"
    ]
    assert sent == others


def test_importing_the_module_imports_no_sdk() -> None:
    code = (
        "import sys, citemark.openai as m; "
        "list(m.clean_responses([{'type': 'response.output_text.delta', 'output_index': 0, "
        "'content_index': 0, 'delta': 'a\\n'}])); "
        "assert 'openai' not in sys.modules, 'openai imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_a_finish_without_a_delta_carries_the_held_text() -> None:
    # The front sends "held" at once; a backtick keeps the rest of the line for its end.
    chunks: list[Event] = [
        {
            "choices": [
                {"index": 0, "delta": {"content": "held `x` " + MARKER}, "finish_reason": None}
            ]
        },
        {"choices": [{"index": 0, "delta": None, "finish_reason": "stop"}]},
    ]
    out = list(clean_chat(chunks))
    assert len(out) == 2
    assert out[0]["choices"][0]["delta"] == {"content": "held"}
    assert out[1]["choices"][0]["delta"] == {"content": " `x`"}
    assert out[1]["choices"][0]["finish_reason"] == "stop"


def test_chat_annotations_after_the_finish_are_placed() -> None:
    """Annotations in a chunk after the choice's finish_reason (a server that repeats the
    finish chunk): the text is all out, so they are moved at once."""
    raw = "Kyoto " + MARKER + " is old."
    note = {"type": "url_citation", "url_citation": {"start_index": 0, "end_index": len(raw)}}
    chunks: list[Event] = [
        {"choices": [{"index": 0, "delta": {"content": raw}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {"choices": [{"index": 0, "delta": {"annotations": [note]}, "finish_reason": None}]},
    ]
    out = list(clean_chat(chunks))
    text = "".join(chunk["choices"][0]["delta"].get("content") or "" for chunk in out)
    assert text == clean(raw) == "Kyoto is old."
    (annotation,) = out[-1]["choices"][0]["delta"]["annotations"]
    assert annotation["url_citation"] == {"start_index": 0, "end_index": len(text)}
    assert note["url_citation"]["end_index"] == len(raw)  # the input is not changed


def test_chat_choice_fields_of_other_servers(implementation: str) -> None:
    """What OpenAI-compatible servers put beside the delta (from recorded streams): Together
    repeats the content in `choices[].text`, which is cleaned with it; Azure sends
    `content_filter_results` on every chunk, which a chunk with no text left keeps."""
    raw = ["Capital", " of ", MARKER[:5], MARKER[5:], " Denmark"]
    chunks: list[Event] = []
    for number, piece in enumerate(raw):
        severity = "low" if number == 2 else "safe"
        choice = {
            "index": 0,
            "text": piece,
            "delta": {"content": piece},
            "finish_reason": None,
            "content_filter_results": {"hate": {"filtered": False, "severity": severity}},
        }
        chunks.append({"id": "c1", "object": "chat.completion.chunk", "choices": [choice]})
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    out = list(clean_chat(chunks, implementation=implementation))  # type: ignore[arg-type]
    choices = [chunk["choices"][0] for chunk in out]
    text = "".join(choice["delta"].get("content") or "" for choice in choices)
    assert text == clean("".join(raw)) == "Capital of Denmark"
    assert [choice.get("text") for choice in choices if "text" in choice] == [
        choice["delta"]["content"] for choice in choices if "text" in choice
    ]
    severities = [c["content_filter_results"]["hate"]["severity"] for c in choices[:-1]]
    assert severities == ["safe", "safe", "low", "safe", "safe"]  # no chunk of them dropped


def test_chat_annotations_before_their_text_wait_for_it() -> None:
    raw = "Pizza comes from Naples " + MARKER + ".\nMore text"
    start = raw.index("Naples")
    note = {"type": "url_citation", "url_citation": {"start_index": start, "end_index": start + 6}}
    chunks: list[Event] = [
        {
            "choices": [
                {"index": 0, "delta": {"content": "", "annotations": [note]}, "finish_reason": None}
            ]
        },
        *[
            {
                "choices": [
                    {"index": 0, "delta": {"content": raw[at : at + 4]}, "finish_reason": None}
                ]
            }
            for at in range(0, len(raw), 4)
        ],
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    out = list(clean_chat(chunks))
    text = ""
    for chunk in out:
        delta = chunk["choices"][0]["delta"]
        text += delta.get("content") or ""
        for annotation in delta.get("annotations", []):
            where = annotation["url_citation"]
            assert where["end_index"] <= len(text)  # sent with or after its text
            assert text[where["start_index"] : where["end_index"]] == "Naples"
    assert text == clean(raw)
    assert "annotations" not in out[0]["choices"][0]["delta"]


def _leaves_no_cycles(run: Callable[[], object]) -> int:
    """How many objects `run` left for the garbage collector's cycle pass."""
    gc.collect()
    gc.disable()
    try:
        run()
        return gc.collect()
    finally:
        gc.enable()


def test_cleaners_are_freed_without_the_cycle_collector(implementation: str) -> None:
    """A server makes a cleaner for every request: each is freed as its stream ends, or as its
    reader leaves, not at the collector's next pass over cycles (a stream and its compiled front
    refer to each other until the stream closes)."""
    events = load("web_search")
    chunks = load("chat")

    def whole() -> None:
        list(clean_responses(iter(events), implementation=implementation))  # type: ignore[arg-type]
        list(clean_chat(iter(chunks), implementation=implementation))  # type: ignore[arg-type]

    def left_midway() -> None:
        for make, stream in ((clean_responses, events), (clean_chat, chunks)):
            reading = make(iter(stream), implementation=implementation)  # type: ignore[operator]
            next(reading)
            next(reading)
            reading.close()

    def driven() -> None:
        cleaner = ResponsesCleaner(implementation=implementation)  # type: ignore[arg-type]
        for event in events:
            cleaner.feed(event)
        cleaner.close()

    assert [_leaves_no_cycles(run) for run in (whole, left_midway, driven)] == [0, 0, 0]
