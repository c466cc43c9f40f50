"""Writes the recorded-shape streams of this directory (run from anywhere: `python make.py`).

Each `*.jsonl` file is one stream, an event (or chunk) a line, in the order the OpenAI API
sends them (openai-dotnet's tests/SessionRecords/ResponsesToolTests/*Streaming.json): the
output items, `content_part.added`, the text deltas (split the way models split them, markers
in several deltas), each `annotation.added` right after the delta that completes its span or,
for `file_citation`, before the last delta, then `output_text.done`, `content_part.done`,
`output_item.done` and `response.completed`, which repeat the text and the annotations.  The
texts hold citation markers as a model writes them, and the annotation offsets count code
points of that raw text.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

S, D, E = "\ue200", "\ue202", "\ue201"
HERE = Path(__file__).parent


def cite(*ids: str, family: str = "cite") -> str:
    return S + family + D + D.join(ids) + E


def split(text: str, rng: random.Random) -> list[str]:
    """Model-like deltas: words and punctuation, a marker's characters on their own."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] in (S, D, E):
            out.append(text[i])
            i += 1
            continue
        size = rng.choice([1, 2, 3, 4, 5, 6, 8])
        j = i + size
        for k in range(i, min(j, len(text))):
            if text[k] in (S, D, E):
                j = k
                break
        out.append(text[i:j])
        i = j
    return out


class Stream:
    def __init__(self, name: str, seed: int) -> None:
        self.name = name
        self.rng = random.Random(seed)
        self.events: list[dict[str, object]] = []
        self.output: list[dict[str, object]] = []
        self.response = {
            "id": f"resp_{name}",
            "object": "response",
            "created_at": 1772855687,
            "status": "in_progress",
            "model": "gpt-4o-mini-2024-07-18",
            "output": [],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
        }

    def add(self, kind: str, **fields: object) -> None:
        self.events.append({"type": kind, **fields, "sequence_number": len(self.events)})

    def start(self) -> None:
        self.add("response.created", response=self.response)
        self.add("response.in_progress", response=self.response)

    def tool(
        self,
        kind: str,
        item_id: str,
        steps: list[str],
        added: dict[str, object],
        done: dict[str, object],
    ) -> None:
        index = len(self.output)
        self.add(
            "response.output_item.added",
            item={"id": item_id, "type": kind, "status": "in_progress", **added},
            output_index=index,
        )
        for step in steps:
            self.add(step, item_id=item_id, output_index=index)
        item = {"id": item_id, "type": kind, "status": "completed", **done}
        self.add("response.output_item.done", item=item, output_index=index)
        self.output.append(item)

    def reasoning(self, item_id: str, summary: str) -> None:
        index = len(self.output)
        item: dict[str, object] = {"id": item_id, "type": "reasoning", "summary": []}
        self.add("response.output_item.added", item=item, output_index=index)
        where = {"item_id": item_id, "output_index": index, "summary_index": 0}
        self.add(
            "response.reasoning_summary_part.added",
            **where,
            part={"type": "summary_text", "text": ""},
        )
        for piece in split(summary, self.rng):
            self.add("response.reasoning_summary_text.delta", **where, delta=piece)
        self.add("response.reasoning_summary_text.done", **where, text=summary)
        part = {"type": "summary_text", "text": summary}
        self.add("response.reasoning_summary_part.done", **where, part=part)
        item = {**item, "summary": [part]}
        self.add("response.output_item.done", item=item, output_index=index)
        self.output.append(item)

    def message(
        self,
        item_id: str,
        parts: list[tuple[str, list[dict[str, object]]]],
        *,
        early: bool = False,
        cut_at: int | None = None,
    ) -> bool:
        """A message item; each part is (raw text, annotations).  `early`: a file_citation
        goes out before the last delta.  `cut_at`: the stream stops after that many deltas
        of the first part (returns False: no done events, no response.completed)."""
        index = len(self.output)
        item: dict[str, object] = {
            "id": item_id,
            "type": "message",
            "status": "in_progress",
            "content": [],
            "role": "assistant",
        }
        self.add("response.output_item.added", item=item, output_index=index)
        content: list[dict[str, object]] = []
        for content_index, (text, notes) in enumerate(parts):
            where = {"item_id": item_id, "output_index": index, "content_index": content_index}
            self.add(
                "response.content_part.added",
                **where,
                part={"type": "output_text", "annotations": [], "logprobs": [], "text": ""},
            )
            deltas = split(text, self.rng)
            waiting = list(notes)
            length = 0
            for number, delta in enumerate(deltas):
                if cut_at is not None and number == cut_at:
                    return False
                last = number == len(deltas) - 1
                if early and last:
                    for annotation in [a for a in waiting if a["type"] == "file_citation"]:
                        self._annotation(where, annotation, notes)
                        waiting.remove(annotation)
                obfuscation = "".join(self.rng.choice("abcdefXYZ0123") for _ in range(6))
                self.add(
                    "response.output_text.delta",
                    **where,
                    delta=delta,
                    logprobs=[],
                    obfuscation=obfuscation,
                )
                length += len(delta)
                for annotation in list(waiting):
                    end = annotation.get("end_index", annotation.get("index"))
                    if isinstance(end, int) and end <= length and not early:
                        self._annotation(where, annotation, notes)
                        waiting.remove(annotation)
            for annotation in waiting:
                self._annotation(where, annotation, notes)
            self.add("response.output_text.done", **where, text=text, logprobs=[])
            part = {"type": "output_text", "annotations": notes, "logprobs": [], "text": text}
            self.add("response.content_part.done", **where, part=part)
            content.append(part)
        item = {**item, "status": "completed", "content": content}
        self.add("response.output_item.done", item=item, output_index=index)
        self.output.append(item)
        return True

    def _annotation(
        self, where: dict[str, object], annotation: dict[str, object], all_: list[object]
    ) -> None:
        self.add(
            "response.output_text.annotation.added",
            **where,
            annotation=annotation,
            annotation_index=all_.index(annotation),
        )

    def finish(self, kind: str = "response.completed", status: str = "completed") -> None:
        self.add(kind, response={**self.response, "status": status, "output": self.output})

    def write(self) -> None:
        lines = [json.dumps(event, ensure_ascii=False) for event in self.events]
        (HERE / f"{self.name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def url(text: str, covered: str, link: str, title: str) -> dict[str, object]:
    start = text.index(covered)
    return {
        "type": "url_citation",
        "start_index": start,
        "end_index": start + len(covered),
        "title": title,
        "url": link,
    }


def web_search() -> None:
    stream = Stream("web_search", 1)
    stream.start()
    stream.tool(
        "web_search_call",
        "ws_1",
        [
            "response.web_search_call.in_progress",
            "response.web_search_call.searching",
            "response.web_search_call.completed",
        ],
        {"action": {"type": "search"}},
        {"action": {"type": "search", "query": "good news today"}},
    )
    link = "https://www.axios.com/newsletters/axios-am?utm_source=openai"
    text = (
        "On September 13, leaders from major AI labs\u2014including Anthropic and Google "
        "DeepMind\u2014united to advocate a slowdown. \ue203This rare moment of unity "
        "highlights a collective commitment to responsible AI.\ue204 "
        + cite("turn0search0", "turn0news2")
        + f" ([axios.com]({link}))\n\n## Highlights\n"
        f"- [\U0001f6a6 Axios AM: Hitting AI brakes]({link}), Sunday " + cite("turn0search0") + "\n"
    )
    annotations = [
        url(text, f"([axios.com]({link}))", link, "\U0001f6a6 Axios AM"),
        url(text, f"[\U0001f6a6 Axios AM: Hitting AI brakes]({link})", link, "Axios AM"),
    ]
    stream.message("msg_1", [(text, annotations)])
    stream.finish()
    stream.write()


def file_search() -> None:
    stream = Stream("file_search", 2)
    stream.start()
    stream.tool(
        "file_search_call",
        "fs_1",
        [
            "response.file_search_call.in_progress",
            "response.file_search_call.searching",
            "response.file_search_call.completed",
        ],
        {"queries": [], "results": None},
        {"queries": ["What is Travis's favorite food?"], "results": None},
    )
    marker = cite("turn0file0", "L1-L2", family="filecite")
    text = "Travis's favorite food is pizza " + marker + "."
    citation = {
        "type": "file_citation",
        "file_id": "file-2NJ78JBRYciFR6qvjHdToL",
        "filename": "test_favorite_foods.txt",
        "index": text.index(marker),
    }
    stream.message("msg_1", [(text, [citation])], early=True)
    stream.finish()
    stream.write()


def several_parts() -> None:
    stream = Stream("several_parts", 3)
    stream.start()
    stream.reasoning(
        "rs_1", "**Looking up Kyoto** I should cite the sources " + cite("turn0search1")
    )
    first = (
        "# Kyoto in two days\n\n"
        "Kyoto was Japan's capital for over a thousand years " + cite("turn0search3") + ".\n"
        'Book with \ue200entity\ue202["company","Japan Rail","railway operator"]\ue201 early '
        + cite("turn0search5")
        + "\n\n```python\nprint('"
        + cite("turn0file1")
        + "')\n```\n\nSee [the official guide]("
        + cite("turn1view0")
        + ").\n"
    )
    second = "Check your pass with `" + cite("turn0file1") + "` in the app " + cite("turn0news2")
    third = "\u4eac\u90fd\u306f\u53e4\u3044\u90fd\u3067\u3059" + cite("turn0search9") + "\u3002"
    link = "https://example.com/kyoto"
    stream.message(
        "msg_1",
        [
            (first, [url(first, "Japan's capital for over a thousand years", link, "Kyoto")]),
            (second, [url(second, "`" + cite("turn0file1") + "`", link, "App")]),
        ],
    )
    stream.message("msg_2", [(third, [url(third, cite("turn0search9"), link, "Kyoto ja")])])
    stream.finish()
    stream.write()


def cut() -> None:
    stream = Stream("cut", 4)
    stream.start()
    text = (
        "The answer starts "
        + cite("turn0search0")
        + " and then the connection drops "
        + cite("turn0search1")
    )
    deltas = split(text, random.Random(4))
    stopped = stream.message("msg_1", [(text, [])], cut_at=len(deltas) - 2)
    assert not stopped
    stream.write()


def incomplete() -> None:
    stream = Stream("incomplete", 5)
    stream.start()
    text = "A long answer " + cite("turn0search0") + " that hits max_output_tokens mid " + S + "ci"
    index = len(stream.output)
    item = {
        "id": "msg_1",
        "type": "message",
        "status": "in_progress",
        "content": [],
        "role": "assistant",
    }
    stream.add("response.output_item.added", item=item, output_index=index)
    where = {"item_id": "msg_1", "output_index": index, "content_index": 0}
    stream.add(
        "response.content_part.added",
        **where,
        part={"type": "output_text", "annotations": [], "logprobs": [], "text": ""},
    )
    for delta in split(text, stream.rng):
        stream.add("response.output_text.delta", **where, delta=delta, logprobs=[])
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": text}
    stream.output.append({**item, "status": "incomplete", "content": [part]})
    stream.finish("response.incomplete", "incomplete")
    stream.write()


def chat() -> None:
    rng = random.Random(6)
    link = "https://example.com/pizza"
    text = (
        "Pizza comes from Naples " + cite("turn0search0") + ".\n"
        "Its modern form dates to the 18th century \ue203in Campania\ue204 " + cite("turn0search1")
    )
    start = text.index("Naples")
    annotation = {
        "type": "url_citation",
        "url_citation": {
            "start_index": start,
            "end_index": start + 6,
            "title": "Naples",
            "url": link,
        },
    }
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}
    chunks: list[dict[str, object]] = [
        {
            **base,
            "choices": [
                {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
            ],
        }
    ]
    deltas = split(text, rng)
    for number, delta in enumerate(deltas):
        fields: dict[str, object] = {"content": delta}
        if number == len(deltas) - 3:
            fields["annotations"] = [annotation]
        chunks.append({**base, "choices": [{"index": 0, "delta": fields, "finish_reason": None}]})
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    chunks.append(
        {
            **base,
            "choices": [],
            "usage": {"prompt_tokens": 9, "completion_tokens": 40, "total_tokens": 49},
        }
    )
    lines = [json.dumps(chunk, ensure_ascii=False) for chunk in chunks]
    (HERE / "chat.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    web_search()
    file_search()
    several_parts()
    cut()
    incomplete()
    chat()
