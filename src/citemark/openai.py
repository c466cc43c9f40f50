"""OpenAI streams in, clean streams out: `citemark.clean` over the OpenAI SDK's events.

A server that passes model output on does not handle text but the SDK's event stream.  This
module takes the events of the Responses API (`clean_responses`, `aclean_responses`), the
chunks of Chat Completions (`clean_chat`, `aclean_chat`), or whole results
(`clean_response`, `clean_completion`), and gives back the same stream with the text clean
(`citemark.clean(raw)`) and the annotations moved into the clean text.  It takes the SDK's
objects (pydantic models, copied as `model_copy(update=...)` copies them, so extra fields
such as `obfuscation` stay) or plain dicts, and gives back the same kind; it never imports
`openai` itself (only a stream without any text delta makes it build one from the SDK's class).

Per text part (`output_index`, `content_index`; a choice's `index` for chat):

- `response.output_text.delta` carries the clean text released so far (a `CleanStream`:
  as soon as it is decided, a line that may be code at its end, a paragraph from its first
  backtick on at its end); a delta that releases nothing is dropped.  Its `logprobs` go out
  with the end of its text, unless cleaning changed that text (see `_Part.logprobs_out`).
  Text released when the part ends goes out in a copy of the part's last delta (same
  `sequence_number`).
- `output_text.done`, `content_part.done`, `output_item.done` and `response.completed`
  (`incomplete`, `failed`) carry, for each part, the concatenation of the deltas sent, which
  is `citemark.clean(raw)` (unless `max_hold` cut a paragraph short, see `CleanStream`).
  A `.snapshot` (the SDK's `responses.stream()` helper) is the clean text so far.
- Annotations: their positions (`_POSITIONS`) are moved into the clean text with
  `citemark.display.clean_position`: one over text that survives covers the same characters,
  one over a removed marker only becomes a point where the marker was.  An
  `annotation.added` event waits until the stream's cuts cover its positions, which is at
  the end of their line (never sent with offsets that could still move; the text itself may
  go out before; the hold is bounded by `max_hold` and the line), then goes out with
  `annotation_index` 0, 1, 2... for its part.  Held events keep their `sequence_number`, so
  they may follow events numbered after them.
- The markers removed, with their places in the part's clean text (`offsets`: code points,
  UTF-16 or UTF-8), are in `marks(output_index, content_index)` of the cleaner, and go to
  `on_marks(part, marks)` as they are found (at the end of their line), for a front end's
  citation chips.
- Every other event passes through unchanged, in order (reasoning and refusal text too).  A
  stream that ends without its done events (cancelled, failed, an error event, the iterator
  raising) releases what it holds by `clean`'s end-of-text rules.  Closing the iterator these
  functions give back, once it has started (a `break` under `contextlib.closing`, a server's
  client gone), closes the stream it reads (`close()`, or `aclose()`/`close()` for the async
  ones): the SDK's stream and its HTTP response go with it.  An event of unknown shape
  passes through; a text event whose indexes are not ints, whose delta is no str or whose
  logprobs are no list, or a delta after its part's done, is a ValueError that names it; no
  event changes another part.  Indexes that an OpenAI-compatible server leaves out are its
  item's (`ResponsesCleaner._key`) or, for a chat choice, its place in the chunk's list
  (`_choice_index`).
- Responses one after another in one stream (an agent's model calls), each from its
  `response.created` on: each is cleaned as a stream of its own.  The OpenAI Agents SDK's
  stream events (dataclasses) are taken as they come: a raw event's Responses event is
  cleaned in a copy of its wrapper, a run item's message gets its clean text.

Offsets are code points, as the API counts them: in a recorded web-search stream of the
Responses API, an annotation's `[start_index, end_index)` holds its whole Markdown link, past
an emoji, only when counted in code points (see docs/openai.md).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import inspect
import json
import sys
from collections import deque
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    Callable,
    Generator,
    Iterable,
    Mapping,
)
from typing import Any, Literal, TypeVar

from ._kernels.loader import Implementation
from .display import (
    DEFAULT_MAX_HOLD,
    CleanStream,
    Cut,
    Mapped,
    Mark,
    Widgets,
    _last_chars,
    clean_mapped,
    clean_position,
)
from .offsets import OFFSET_UNITS, OffsetMap, OffsetUnit

__all__ = [
    "ChatCleaner",
    "ResponsesCleaner",
    "aclean_chat",
    "aclean_responses",
    "clean_chat",
    "clean_completion",
    "clean_response",
    "clean_responses",
]

T = TypeVar("T")
Part = tuple[int, int]  # (output_index, content_index); (a choice's index, 0) for chat
# A chat choice's fields, checked (ChatCleaner._read): index, delta, content (its text), the
# delta's annotations, finish_reason, logprobs, their tokens, and the content parts the text
# came in (None: a string).  A plain tuple: every chunk makes one.
_ChoiceFields = tuple[int, Any, Any, Any, Any, Any, Any, Any]
OnMarks = Callable[[Part, list[Mark]], object]

# The fields of an annotation that are positions in its part's text, by annotation type, each
# with whether it ends a range (it then lands after what survives of a cut, not before).
# `file_path` has none: its `index` is the file's place in a list of files (the SDK's
# documentation), not a position in the text.
_POSITIONS: dict[str, tuple[tuple[str, bool], ...]] = {
    "url_citation": (("start_index", False), ("end_index", True)),
    "container_file_citation": (("start_index", False), ("end_index", True)),
    "file_citation": (("index", False),),
}

# The Responses events whose `response.output` holds the final text of every part.
_FINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})
# The fields of a chat delta other than its text: a chunk with one of them is never dropped.
_CHAT_TEXT_FIELDS = frozenset({"content", "annotations"})
# A chat choice's own fields that a chunk with no text left can drop: some servers add more
# (Azure's content_filter_results), which then go out in a chunk with empty content.  `text`
# is the copy of the delta's content that some OpenAI-compatible servers add (Together).
_CHOICE_FIELDS = frozenset({"index", "delta", "finish_reason", "logprobs", "text"})
# The events of the SDK's `client.chat.completions.stream()` helper made of a choice's text:
# the helper sends each chunk as a "chunk" event (with `snapshot`, the completion so far),
# then these.  The cleaner sends each clean chunk the same way, makes the text and token
# deltas of it itself, and sets the clean text in the done events (see ChatCleaner._helper).
_HELPER_DELTAS = frozenset({"content.delta", "logprobs.content.delta"})
_HELPER_DONE = frozenset({"content.done", "logprobs.content.done"})


# --- SDK objects and dicts alike --------------------------------------------------------------


# What kind of object a class makes, asked of the class once (an isinstance check against
# the Mapping ABC, or pydantic's attribute lookup of a missing field, on every field read
# cost more than the rest of a delta's handling).
_DICT, _MODEL, _OTHER = 0, 1, 2
_SHAPES: dict[type, int] = {dict: _DICT}
_MISSING = object()


def _shape(obj: Any) -> int:
    cls = type(obj)
    shape = _SHAPES.get(cls)
    if shape is None:
        if isinstance(obj, Mapping):
            shape = _DICT
        elif hasattr(cls, "model_copy") and hasattr(cls, "model_fields"):
            shape = _MODEL
        else:
            shape = _OTHER
        _SHAPES[cls] = shape
    return shape


def _is_mapping(obj: Any) -> bool:
    return _shape(obj) == _DICT


def _get(obj: Any, name: str) -> Any:
    """A field of a dict or a model (declared or extra), None when it has none."""
    if type(obj) is dict:
        return obj.get(name)
    shape = _SHAPES.get(type(obj)) or _shape(obj)  # (_DICT is 0: asked again, still right)
    if shape == _DICT:
        return obj.get(name)
    if shape == _MODEL:
        value = obj.__dict__.get(name, _MISSING)
        if value is not _MISSING:
            return value
        extra = obj.__pydantic_extra__
        return None if extra is None else extra.get(name)
    return getattr(obj, name, None)


def _view(obj: Any) -> Mapping[str, Any]:
    """What to read obj's declared fields from in a hurry: a dict itself, a model's
    `__dict__` (its extra fields are read with `_get`)."""
    if type(obj) is dict:
        return obj
    shape = _SHAPES.get(type(obj)) or _shape(obj)
    if shape == _MODEL:
        return obj.__dict__  # type: ignore[no-any-return]
    if shape == _DICT:
        return obj  # type: ignore[no-any-return]
    return getattr(obj, "__dict__", None) or {}


def _is_dataclass(obj: Any) -> bool:
    """Whether obj is a dataclass's instance (the OpenAI Agents SDK's events are)."""
    return dataclasses.is_dataclass(obj) and not isinstance(obj, type)


def _fieldless(obj: Any) -> bool:
    """Whether obj is no dict, model or dataclass: a value that carries no fields (a chat
    choice or delta that is a number, a string, a list)."""
    return _shape(obj) == _OTHER and not _is_dataclass(obj)


def _has(obj: Any, name: str) -> bool:
    if type(obj) is dict or _is_mapping(obj):
        return name in obj
    return _get(obj, name) is not None


def _with(obj: T, changes: dict[str, Any]) -> T:
    """obj with `changes`, the same kind: a dict, a copy of the model (extra fields kept),
    what `model_copy(update=changes)` gives, or of the dataclass (`dataclasses.replace`)."""
    copier = _COPIERS.get(type(obj))
    if copier is None:
        if type(obj) is dict or _is_mapping(obj):
            return {**obj, **changes}  # type: ignore[dict-item,return-value]
        if _is_dataclass(obj):
            return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
        copier = _COPIERS[type(obj)] = _ModelCopy.of(type(obj))
    if copier is False or getattr(obj, "__pydantic_private__", None) is not None:
        return obj.model_copy(update=changes)  # type: ignore[attr-defined,no-any-return]
    return copier.copy(obj, changes)


class _ModelCopy:
    """`model_copy(update=...)` for the models of a class that copies as pydantic 2's
    BaseModel does (and holds no private attributes), done here without that method's generic
    `copy.copy` calls (docs/openai.md#speed).  It sets the same four slots, each through its
    own descriptor (`object.__setattr__` would pack a tuple for every call)."""

    __slots__ = ("allow_extra", "declared", "set_dict", "set_extra", "set_fields", "set_private")

    def __init__(self, base: type, declared: Mapping[str, Any], allow_extra: bool) -> None:
        self.declared = declared
        self.allow_extra = allow_extra
        slots = base.__dict__
        self.set_dict = slots["__dict__"].__set__
        self.set_extra = slots["__pydantic_extra__"].__set__
        self.set_fields = slots["__pydantic_fields_set__"].__set__
        self.set_private = slots["__pydantic_private__"].__set__

    @classmethod
    def of(cls, model: type) -> _ModelCopy | Literal[False]:
        """The copier of `model`'s instances, or False: they copy themselves (`model_copy`)."""
        base = getattr(sys.modules.get("pydantic"), "BaseModel", None)
        if not (isinstance(base, type) and issubclass(model, base)):
            return False
        declared = getattr(model, "__pydantic_fields__", None)
        config = getattr(model, "model_config", None)
        if not (
            model.__new__ is object.__new__
            and getattr(model, "model_copy", None) is getattr(base, "model_copy", _MISSING)
            and getattr(model, "__copy__", None) is getattr(base, "__copy__", _MISSING)
            and set(getattr(base, "__slots__", ())) == set(_MODEL_SLOTS)
            and all(name in base.__dict__ for name in _MODEL_SLOTS)
            and isinstance(declared, dict)
            and isinstance(config, dict)
        ):
            return False
        return cls(base, declared, config.get("extra") == "allow")

    def copy(self, obj: T, changes: dict[str, Any]) -> T:
        copied = _new_object(type(obj))
        values = obj.__dict__.copy()
        extra = obj.__pydantic_extra__  # type: ignore[attr-defined]
        if extra is not None:
            extra = extra.copy()
        for name, value in changes.items():
            if self.allow_extra and name not in self.declared:
                if extra is None:
                    extra = {}
                extra[name] = value
            else:
                values[name] = value
        fields_set = obj.__pydantic_fields_set__.copy()  # type: ignore[attr-defined]
        fields_set.update(changes)
        self.set_dict(copied, values)
        self.set_extra(copied, extra)
        self.set_fields(copied, fields_set)
        self.set_private(copied, None)
        return copied


_MODEL_SLOTS = ("__dict__", "__pydantic_extra__", "__pydantic_fields_set__", "__pydantic_private__")
_COPIERS: dict[type, _ModelCopy | Literal[False]] = {}
_new_object = object.__new__


def _without(obj: T, name: str) -> T:
    """obj without the field `name` (an extra field of a model)."""
    if _is_mapping(obj):
        return {key: value for key, value in obj.items() if key != name}  # type: ignore[attr-defined,return-value]
    copied = obj.model_copy()  # type: ignore[attr-defined]
    extra = copied.__pydantic_extra__
    if extra is not None:
        extra.pop(name, None)
    return copied  # type: ignore[no-any-return]


def _carries_more(obj: Any, text_fields: frozenset[str]) -> bool:
    """Whether obj holds a field other than `text_fields` that is not None."""
    shape = _shape(obj)
    if shape == _DICT:
        return any(value is not None for name, value in obj.items() if name not in text_fields)
    if shape != _MODEL:
        return True
    names = obj.__pydantic_fields_set__
    extra = obj.__pydantic_extra__ or {}
    if names <= text_fields and extra.keys() <= text_fields:
        return False  # the common chunk: its text and nothing else
    return any(_get(obj, name) is not None for name in (names | extra.keys()) - text_fields)


def _index(event: Any, name: str, value: Any = _MISSING) -> int:
    """event's `name` (or `value`, read already), which must be an int."""
    if value is _MISSING:
        value = _get(event, name)
    if type(value) is not int:
        raise ValueError(
            f"a {_get(event, 'type')} event needs {name} as an int, not {type(value).__name__}"
        )
    return value


def _kind(obj: Any) -> str | None:
    """The `type` of an event or part: a dict's, a model's, or a dataclass's (the OpenAI
    Agents SDK's events); anything else has none."""
    shape = _SHAPES.get(type(obj))
    if shape is None:
        shape = _shape(obj)
    if shape == _DICT:
        kind = obj.get("type")
    elif shape == _MODEL:
        # A declared field of every event and part model; an extra one of any other model.
        kind = obj.__dict__.get("type") or _get(obj, "type")
    elif _is_dataclass(obj):
        kind = getattr(obj, "type", None)
    else:
        return None
    return kind if type(kind) is str else None


# --- annotations ------------------------------------------------------------------------------


def _holder(annotation: Any) -> Any:
    """What holds an annotation's positions: itself (Responses), or the object under its type
    (Chat Completions: `{"type": "url_citation", "url_citation": {"start_index": ...}}`)."""
    kind = _kind(annotation)
    fields = _POSITIONS.get(kind or "")
    if fields is None:
        return None
    if _get(annotation, fields[0][0]) is not None:
        return annotation
    nested = _get(annotation, kind or "")
    return nested if nested is not None and _get(nested, fields[0][0]) is not None else None


def _positions(annotation: Any) -> list[tuple[str, int, bool]]:
    holder = _holder(annotation)
    if holder is None:
        return []
    found = []
    for name, end in _POSITIONS[_kind(annotation) or ""]:
        value = _get(holder, name)
        if type(value) is int:
            found.append((name, value, end))
    return found


def _moved(annotation: T, place: Callable[[int, bool], int]) -> T:
    """annotation with its positions placed in the clean text (`place(index, end)`)."""
    positions = _positions(annotation)
    if not positions:
        return annotation
    holder = _holder(annotation)
    moved = _with(holder, {name: place(value, end) for name, value, end in positions})
    if holder is annotation:
        return moved  # type: ignore[no-any-return]
    return _with(annotation, {_kind(annotation) or "": moved})


# --- one text part ----------------------------------------------------------------------------


class _Options:
    """The options of a cleaner, checked once."""

    __slots__ = ("clean", "offsets", "on_marks")

    def __init__(
        self,
        lenient: bool,
        skip_code: bool,
        widgets: Widgets | None,
        max_hold: int | None,
        offsets: OffsetUnit,
        on_marks: OnMarks | None,
        implementation: Implementation | None,
    ) -> None:
        self.clean: dict[str, Any] = {
            "lenient": lenient,
            "skip_code": skip_code,
            "widgets": widgets,
            "max_hold": max_hold,
            "implementation": implementation,
        }
        # Its checks of the options; closed, so that it is freed at once (see _Cleaner._let_go).
        CleanStream(**self.clean).close()
        if offsets not in OFFSET_UNITS:
            raise ValueError(f"offsets must be one of {', '.join(OFFSET_UNITS)}, not {offsets!r}")
        if on_marks is not None and not callable(on_marks):
            raise TypeError(f"on_marks must be None or callable, not {type(on_marks).__name__}")
        self.offsets = offsets
        self.on_marks = on_marks

    def whole(self, key: Part, text: str) -> _Part:
        """A part whose whole raw text is known at once, already closed."""
        part = _Part(self, key, streamed=False)
        mapped = self.mapped(text)
        part.cuts, part.marks = mapped.cuts, mapped.marks
        part.raw = len(text)
        part.closed = True
        if mapped.text:
            part.released(mapped.text)
        return part

    def mapped(self, text: str) -> Mapped:
        return clean_mapped(text, **{k: v for k, v in self.clean.items() if k != "max_hold"})


class _Part:
    """The state of one text part: its stream, the clean text sent, the annotations held."""

    __slots__ = (
        "closed",
        "counted",
        "cuts",
        "fed",
        "held",
        "key",
        "length",
        "listed",
        "logprobs",
        "logprobs_cut",
        "logprobs_kept",
        "logprobs_like",
        "marks",
        "marks_told",
        "options",
        "pieces",
        "raw",
        "sent",
        "stream",
        "template",
        "units",
        "unplaced",
    )

    def __init__(self, options: _Options, key: Part, streamed: bool = True) -> None:
        self.options = options
        self.key = key
        # Nothing to tell or convert as text goes out: `released` is only its bookkeeping.
        self.counted = options.offsets == "codepoints" and options.on_marks is None
        self.stream = CleanStream(mapped=True, **options.clean) if streamed else None
        # The stream's own lists, filled as it releases text.
        self.cuts: list[Cut] = [] if self.stream is None else self.stream.cuts
        self.marks: list[Mark] = [] if self.stream is None else self.stream.marks
        self.marks_told = 0  # marks given to on_marks
        self.pieces: list[str] = []  # the clean text released
        self.length = 0  # its length in code points
        self.units = 0  # its length in the marks' unit
        self.raw = 0  # the length of the raw text fed
        self.fed: list[str] = []  # that text, as it came
        self.held: deque[Any] = deque()  # annotations (or their events) waiting, in order
        self.sent = 0  # annotations sent: the next annotation_index
        self.template: Any = None  # the part's last delta event (or chunk)
        self.closed = False
        # A part whose first events this stream did not see (a stream resumed in its text):
        # an annotation's offsets count text that never came, so it waits for the done event.
        self.unplaced = False
        self.listed = False  # a chat part whose content came as a list of parts
        # The logprobs of deltas whose text is not all out yet: (raw start, raw end, logprobs).
        self.logprobs: deque[tuple[int, int, list[Any]]] = deque()
        self.logprobs_cut = 0  # the first cut that may touch the next delta's text
        self.logprobs_kept: list[Any] = []  # every logprob sent, for the done events
        self.logprobs_like: Any = None  # a chat choice's last `logprobs` object

    def feed(self, text: str, logprobs: Any = None) -> str:
        """Feed a delta's text (and its logprobs, a list: they go out with the end of that
        text, see logprobs_out)."""
        assert self.stream is not None
        if logprobs:
            self.logprobs.append((self.raw, self.raw + len(text), logprobs))
        self.raw += len(text)
        self.fed.append(text)
        released = self.stream.feed(text)
        if self.counted:
            if released:
                self.pieces.append(released)
                self.length += len(released)
        elif released or len(self.marks) > self.marks_told:
            # Marks may come with no text (a line's end after the front sent its text).
            self.released(released)
        return released

    def close(self) -> str:
        if self.closed or self.stream is None:
            return ""
        self.closed = True
        released = self.stream.close()
        if released or len(self.marks) > self.marks_told:
            self.released(released)
        return released

    def released(self, text: str) -> None:
        """Record `text`, released, and tell on_marks of the marks found since the last
        call (they may lie in text released before: the front sends a line before its end)."""
        self.pieces.append(text)
        self.length += len(text)
        unit = self.options.offsets
        if unit != "codepoints":
            self.units += OffsetMap(text).length(unit)
        on_marks = self.options.on_marks
        if on_marks is not None and len(self.marks) > self.marks_told:
            new = self.marks[self.marks_told :]
            self.marks_told = len(self.marks)
            if unit != "codepoints":
                # Convert from the first new mark on: the text after it is the current
                # line's, so the conversions of a stream stay linear.
                low = min(mark.start for mark in new)
                units = OffsetMap(self._last(self.length - low))
                low_units = self.units - units.length(unit)
                new = [
                    mark._replace(
                        start=low_units + units.convert(mark.start - low, target=unit),
                        end=low_units + units.convert(mark.end - low, target=unit),
                    )
                    for mark in new
                ]
            on_marks(self.key, new)

    def raw_text(self) -> str:
        """The raw text fed so far."""
        if len(self.fed) > 1:
            self.fed = ["".join(self.fed)]
        return self.fed[0] if self.fed else ""

    def continued_by(self, text: str) -> bool:
        """Whether `text` (a done event's) starts with the raw text fed."""
        return text.startswith(self.raw_text())

    def rebase(self, text: str) -> None:
        """The part's text is `text`, a done event's that its deltas did not start (a stream
        resumed after its first events sends only the rest): from now on its clean text and
        positions are the whole text's.  Its marks are not told again."""
        mapped = self.options.mapped(text)
        self.cuts, self.marks = mapped.cuts, mapped.marks
        self.marks_told = len(self.marks)
        self.pieces = [mapped.text]
        self.length = len(mapped.text)
        if self.options.offsets != "codepoints":
            self.units = OffsetMap(mapped.text).length(self.options.offsets)
        self.raw = len(text)
        self.fed = [text]
        self.logprobs.clear()  # offsets in the deltas' text, which the whole text does not start
        self.logprobs_cut = 0

    def _last(self, count: int) -> str:
        """The last `count` code points of the clean text released."""
        return _last_chars((self.pieces,), count)

    def text(self) -> str:
        if len(self.pieces) > 1:
            self.pieces = ["".join(self.pieces)]
        return self.pieces[0] if self.pieces else ""

    def logprobs_out(self) -> list[Any]:
        """The logprobs of the deltas whose text is all out now, in order, without those of a
        delta whose text cleaning changed (a cut touches it: they no longer fit the text).
        Moved, not dropped, where a delta's text only went out with a later one (a blank a
        marker might have taken): what a reader collects fits the text it collects.  The
        list of a lone delta is given back as it came."""
        released = self.out_to()
        out: list[Any] = []
        cuts = self.cuts
        while self.logprobs and self.logprobs[0][1] <= released:
            start, end, logprobs = self.logprobs.popleft()
            while self.logprobs_cut < len(cuts) and cuts[self.logprobs_cut].end <= start:
                self.logprobs_cut += 1
            if self.logprobs_cut < len(cuts) and cuts[self.logprobs_cut].start < end:
                continue  # cleaning changed this delta's text
            out = logprobs if not out else [*out, *logprobs]
        if out:
            self.logprobs_kept += out
        return out

    def logprobs_due(self) -> bool:
        """Whether logprobs wait whose delta's text is all out (see logprobs_out)."""
        return bool(self.logprobs) and self.logprobs[0][1] <= self.out_to()

    def out_to(self) -> int:
        """How much of the raw text fed is out (its clean text released)."""
        return self.raw if self.closed or self.stream is None else self.stream.released

    def changed(self) -> bool:
        """Whether cleaning changed the raw text (its logprobs no longer fit)."""
        return bool(self.cuts)

    def place(self, index: int, end: bool) -> int:
        return clean_position(self.cuts, min(max(index, 0), self.raw), end=end)

    def decided(self, annotation: Any) -> bool:
        if self.closed or self.stream is None:
            return True
        if self.unplaced:
            return False
        released = self.stream.released
        return all(value <= released for _, value, _ in _positions(annotation))

    def ready(self, annotation_of: Callable[[Any], Any]) -> list[Any]:
        """The held items whose positions are decided, in order (a later one waits for an
        earlier one), each taken off the hold."""
        out = []
        while self.held and self.decided(annotation_of(self.held[0])):
            out.append(self.held.popleft())
        return out

    def marks_in(self, unit: OffsetUnit) -> list[Mark]:
        if unit == "codepoints" or not self.marks:
            return list(self.marks)
        units = OffsetMap(self.text())
        return [
            mark._replace(
                start=units.convert(mark.start, target=unit),
                end=units.convert(mark.end, target=unit),
            )
            for mark in self.marks
        ]


class _Cleaner:
    def __init__(self, options: _Options) -> None:
        self._options = options
        self._parts: dict[Part, _Part] = {}
        self._closed = False

    def _open(self, key: Part) -> _Part:
        part = self._parts.get(key)
        if part is None:
            part = self._parts[key] = _Part(self._options, key)
        return part

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("feed() after close()")

    def _let_go(self) -> None:
        """The reader is gone: every part's stream closed, nothing sent.  A stream and its
        compiled front refer to each other until it closes; closed, each is freed with the
        cleaner, not at the garbage collector's next pass over cycles."""
        self._closed = True
        for part in self._parts.values():
            if part.stream is not None and not part.closed:
                part.closed = True
                with contextlib.suppress(Exception):  # (a widget's error: no one would see it)
                    part.stream.close()

    def marks(self, output_index: int, content_index: int = 0) -> list[Mark]:
        """The markers removed so far from a part (for chat: a choice's index), with their
        places in the part's clean text in the cleaner's `offsets` unit."""
        part = self._parts.get((output_index, content_index))
        return [] if part is None else part.marks_in(self._options.offsets)


# --- Responses --------------------------------------------------------------------------------


class ResponsesCleaner(_Cleaner):
    """The state under `clean_responses`: `feed(event)` gives the events to send in its place
    (none, it, or it after the text and annotations it released), `close()` what is still
    held when the stream ends.  For servers that drive events themselves."""

    def __init__(
        self,
        *,
        lenient: bool = False,
        skip_code: bool = True,
        widgets: Widgets | None = None,
        max_hold: int | None = DEFAULT_MAX_HOLD,
        offsets: OffsetUnit = "codepoints",
        on_marks: OnMarks | None = None,
        implementation: Implementation | None = None,
    ) -> None:
        self._start(
            _Options(lenient, skip_code, widgets, max_hold, offsets, on_marks, implementation)
        )

    @classmethod
    def _of(cls, options: _Options) -> ResponsesCleaner:
        """A cleaner with options checked already."""
        cleaner = cls.__new__(cls)
        cleaner._start(options)
        return cleaner

    def _start(self, options: _Options) -> None:
        super().__init__(options)
        # Each output item's output_index by its id, for the events of Responses-compatible
        # servers that leave the index out (see _key).
        self._places: dict[str, int] = {}
        self._last_added: int | None = None  # the output_index of the item added last
        # What says a part's first events came here (see _text_part): the response's start,
        # or its item's.
        self._started = False
        self._items_added: set[int] = set()
        # The Agents SDK's last raw event (see _raw): what the stream releases outside one
        # goes out in a copy of it, so that a stream of wrapped events stays one.
        self._wrapper: Any = None

    def feed(self, event: T) -> list[T]:
        if self._closed:
            self._check_open()  # raises
        handler = _RESPONSES_HANDLERS.get(_kind(event) or "")
        return [event] if handler is None else handler(self, event)

    def close(self) -> list[Any]:
        """Release what every open part holds (a stream that ended without its done events)."""
        if self._closed:
            return []
        self._closed = True
        return self._wrapped(self._finish_all(None))

    # Events.

    def _created(self, event: Any) -> list[Any]:
        """A response starts.  A stream may hold several, one after another (an agent's model
        calls: the OpenAI Agents SDK's raw events), each numbering its output from 0: each is
        cleaned as a stream of its own, after what an earlier one still holds (one that ended
        without its done events) is released."""
        out = self._finish_all(event)
        self._parts = {}
        self._places = {}
        self._last_added = None
        self._started = True
        self._items_added = set()
        out.append(event)
        return out

    def _delta(self, event: Any) -> list[Any]:
        fields = _view(event)
        output_index, content_index = fields.get("output_index"), fields.get("content_index")
        if type(output_index) is int and type(content_index) is int:
            part = self._parts.get((output_index, content_index)) or self._text_part(event)
        else:
            part = self._text_part(event)  # names what is wrong
        if part.closed:
            raise ValueError(
                f"a response.output_text.delta for output_index {part.key[0]}, content_index "
                f"{part.key[1]} came after its part was done"
            )
        delta, logprobs = fields.get("delta"), fields.get("logprobs")
        if not isinstance(delta, str):
            raise ValueError(
                f"a response.output_text.delta needs delta as a str, not {type(delta).__name__}"
            )
        if not (logprobs is None or isinstance(logprobs, list)):
            raise ValueError(
                "a response.output_text.delta needs logprobs as a list or None, not "
                f"{type(logprobs).__name__}"
            )
        part.template = event
        released = part.feed(delta, logprobs)
        if not released and not (logprobs and not delta and part.logprobs_due()):
            return []
        # (An empty delta with tokens, as the API sends a token that ends no character, goes
        # out with them once the text before it is out: the done event lists them too.)
        carrier = self._carrying(part, event, released, delta)
        return [carrier, *self._annotations(part)] if part.held else [carrier]

    def _annotation(self, event: Any) -> list[Any]:
        part = self._text_part(event)
        part.held.append(event)
        return self._annotations(part)

    def _text_done(self, event: Any) -> list[Any]:
        part = self._text_part(event)
        out = self._finish(part, event, _get(event, "text"))
        changes: dict[str, Any] = {"text": part.text()}
        if part.changed():
            if _get(event, "logprobs"):
                changes["logprobs"] = list(part.logprobs_kept)  # what the deltas carried
            _reparse(event, changes)
        out.append(_with(event, changes))
        return out

    def _part_added(self, event: Any) -> list[Any]:
        if _kind(_get(event, "part")) == "output_text":
            self._open(self._key(event))
        return [event]

    def _part_done(self, event: Any) -> list[Any]:
        content = _get(event, "part")
        if _kind(content) != "output_text":
            return [event]
        out, content = self._content(self._key(event), content, event)
        out.append(_with(event, {"part": content}))
        return out

    def _item_added(self, event: Any) -> list[Any]:
        output_index = _get(event, "output_index")
        if type(output_index) is not int:
            # Without an index, the item is the next one of the output list.
            output_index = 0 if self._last_added is None else self._last_added + 1
        item_id = _get(_get(event, "item"), "id")
        if isinstance(item_id, str):
            output_index = self._places.setdefault(item_id, output_index)
        self._last_added = output_index
        if type(output_index) is int:
            self._items_added.add(output_index)
        return [event]

    def _item_done(self, event: Any) -> list[Any]:
        item = _get(event, "item")
        output_index = self._place(_get(event, "output_index"), _get(item, "id"))
        if output_index is None:
            return [event]  # an item none of whose text came here: nothing of it to clean
        out: list[Any] = []
        item = self._item(_index(event, "output_index", output_index), item, event, out)
        out.append(event if item is _get(event, "item") else _with(event, {"item": item}))
        return out

    def _final(self, event: Any) -> list[Any]:
        out = self._finish_all(event)
        response = _get(event, "response")
        output = _get(response, "output")
        if isinstance(output, list):
            items = [
                self._item(self._place_of(index, item), item, event, out)
                for index, item in enumerate(output)
            ]
            if any(new is not old for new, old in zip(items, output, strict=True)):
                event = _with(event, {"response": _with(response, {"output": items})})
        out.append(event)
        return out

    def _place_of(self, position: int, item: Any) -> int:
        """The output_index of an item of a final response's output, at `position` in it: the
        one its events gave its id, else its position (a trimmed or proxied output may leave
        items out, which moves the later ones)."""
        item_id = _get(item, "id")
        place = self._places.get(item_id) if isinstance(item_id, str) else None
        return place if type(place) is int else position

    def _error(self, event: Any) -> list[Any]:
        return [*self._finish_all(event), event]

    # The OpenAI Agents SDK's stream events (`result.stream_events()`): its raw events wrap
    # the Responses events of the run's model calls, and a run item repeats a message whole.

    def _raw(self, event: Any) -> list[Any]:
        """A raw event: its Responses event cleaned, each event that comes of it in a copy of
        the wrapper."""
        data = _get(event, "data")
        if _kind(data) is None:
            return [event]
        self._wrapper = event
        return [event if one is data else _with(event, {"data": one}) for one in self.feed(data)]

    def _wrapped(self, events: list[Any]) -> list[Any]:
        """Responses events released outside a raw event, in copies of the last one, if any."""
        wrapper = self._wrapper
        return events if wrapper is None else [_with(wrapper, {"data": one}) for one in events]

    def _run_item(self, event: Any) -> list[Any]:
        """A run item: a message (`message_output_created`) with the text its parts were
        given (by its id, as the raw events placed it), or, never streamed here, cleaned
        whole; any other item passes."""
        item = _get(event, "item")
        message = _get(item, "raw_item")
        if _kind(message) != "message":
            return [event]
        out: list[Any] = []
        item_id = _get(message, "id")
        output_index = self._places.get(item_id) if isinstance(item_id, str) else None
        if output_index is None:
            cleaned = ResponsesCleaner._of(self._options)._item(0, message, None, out)
        else:
            cleaned = self._item(output_index, message, event, out)
        if cleaned is not message:
            event = _with(event, {"item": _with(item, {"raw_item": cleaned})})
        return [*self._wrapped(out), event]

    # Parts.

    def _text_part(self, event: Any) -> _Part:
        key = self._key(event)
        part = self._parts.get(key)
        if part is not None:
            return part
        part = self._open(key)
        # No response.created nor output_item.added before the part's text: a stream resumed
        # (`starting_after`) in it, whose annotations count the text before the resume point.
        part.unplaced = not (self._started or key[0] in self._items_added)
        return part

    def _key(self, event: Any) -> Part:
        """The part a text or content part event is about: its output_index and content_index.
        Some Responses-compatible servers leave them out: the output index is then its item's
        (`_place`), and the content index 0 (a message's one text part).  An index that is
        there must be an int."""
        item_id = _get(event, "item_id")
        output_index = _index(
            event, "output_index", self._place(_get(event, "output_index"), item_id)
        )
        content_index = _get(event, "content_index")
        if content_index is not None:
            content_index = _index(event, "content_index", content_index)
        if isinstance(item_id, str):
            self._places.setdefault(item_id, output_index)
        return output_index, content_index or 0

    def _place(self, output_index: Any, item_id: Any) -> Any:
        """An event's output_index, or, left out, its item's: by the item's id, as an earlier
        event of the item gave it, else (no id either) the item added last, as events stream.
        None where no event placed the item."""
        if output_index is not None:
            return output_index
        if isinstance(item_id, str):
            return self._places.get(item_id)
        return self._last_added if item_id is None else None

    def _finish(self, part: _Part, trigger: Any, text: Any = None) -> list[Any]:
        """Close part: its held text (with the rest of `text`, the raw text of a done event,
        when it is longer than the deltas were) in one delta, then its held annotations."""
        if part.closed:
            return self._annotations(part)
        released = ""
        resumed = isinstance(text, str) and not part.continued_by(text)
        if isinstance(text, str) and len(text) > part.raw and not resumed:
            released = part.feed(text[part.raw :])
        released += part.close()
        out = [self._carrying(part, trigger, released, None)] if released else []
        if resumed:
            part.rebase(text)
        return out + self._annotations(part)

    def _finish_all(self, trigger: Any) -> list[Any]:
        out: list[Any] = []
        for key in sorted(self._parts):
            part = self._parts[key]
            if not part.closed or part.held:
                out += self._finish(part, trigger)
        return out

    def _carrying(self, part: _Part, event: Any, text: str, raw: str | None) -> Any:
        """The delta event that carries `text`: `event` when it is a delta (its own text was
        `raw`), else (`raw` None) a copy of the part's last delta, else one made from `event`."""
        if raw is None and _kind(event) != "response.output_text.delta":
            event = part.template if part.template is not None else _made_delta(event, part)
        snapshot = _has(event, "snapshot")
        if text == raw and not part.logprobs and not snapshot:
            return event  # the common delta: what the rest would give, without its changes
        changes: dict[str, Any] = {"delta": text}
        if part.logprobs:
            logprobs, own = part.logprobs_out(), _get(event, "logprobs")
            if logprobs is not own and (logprobs or own):
                changes["logprobs"] = logprobs
        elif text != raw and _get(event, "logprobs"):
            changes["logprobs"] = []  # the part's last delta, copied: its logprobs went out
        if snapshot:
            changes["snapshot"] = part.text()
        return event if text == raw and len(changes) == 1 else _with(event, changes)

    def _annotations(self, part: _Part) -> list[Any]:
        out = []
        for event in part.ready(lambda event: _get(event, "annotation")):
            out.append(
                _with(
                    event,
                    {
                        "annotation": _moved(_get(event, "annotation"), part.place),
                        "annotation_index": part.sent,
                    },
                )
            )
            part.sent += 1
        return out

    def _content(self, key: Part, content: Any, trigger: Any) -> tuple[list[Any], Any]:
        """The events a part's end releases, and `content` (an output_text) made clean."""
        part = self._parts.get(key)
        raw = _get(content, "text")
        if part is None:
            part = self._parts[key] = self._options.whole(key, raw if isinstance(raw, str) else "")
            out: list[Any] = []
        else:
            out = self._finish(part, trigger, raw)
        changes: dict[str, Any] = {"text": part.text()}
        annotations = _get(content, "annotations")
        if isinstance(annotations, list) and annotations:
            changes["annotations"] = [_moved(one, part.place) for one in annotations]
        if part.changed():
            if _get(content, "logprobs"):
                changes["logprobs"] = list(part.logprobs_kept) if part.stream is not None else []
            _reparse(content, changes)
        return out, _with(content, changes)

    def _item(self, output_index: int, item: Any, trigger: Any, out: list[Any]) -> Any:
        """item (an output item) with the text of its parts clean; the events that ending its
        parts releases are added to out."""
        if _kind(item) != "message":
            return item
        content = _get(item, "content")
        if not isinstance(content, list):
            return item
        cleaned = []
        for index, one in enumerate(content):
            if _kind(one) == "output_text":
                released, one = self._content((output_index, index), one, trigger)
                out += released
            cleaned.append(one)
        return _with(item, {"content": cleaned})


# Each event type's handler, as plain functions: a table of the cleaner's bound methods would
# make every cleaner a reference cycle, which only the garbage collector's cycle pass frees.
_RESPONSES_HANDLERS: dict[str, Callable[[ResponsesCleaner, Any], list[Any]]] = {
    "response.created": ResponsesCleaner._created,
    "response.output_item.added": ResponsesCleaner._item_added,
    "response.output_text.delta": ResponsesCleaner._delta,
    "response.output_text.annotation.added": ResponsesCleaner._annotation,
    "response.output_text.done": ResponsesCleaner._text_done,
    "response.content_part.added": ResponsesCleaner._part_added,
    "response.content_part.done": ResponsesCleaner._part_done,
    "response.output_item.done": ResponsesCleaner._item_done,
    "error": ResponsesCleaner._error,
    **dict.fromkeys(_FINAL, ResponsesCleaner._final),
    "raw_response_event": ResponsesCleaner._raw,
    "run_item_stream_event": ResponsesCleaner._run_item,
}


def _item_id(trigger: Any, output_index: int) -> Any:
    """The id of the output item at output_index, as the trigger says it: its `item_id`, its
    `item`'s id (output_item.done) or its response's (response.completed)."""
    item_id = _get(trigger, "item_id")
    if item_id is None:
        item = _get(trigger, "item")
        if item is None:
            output = _get(_get(trigger, "response"), "output")
            if isinstance(output, list) and 0 <= output_index < len(output):
                item = output[output_index]
        item_id = _get(item, "id")
    return item_id


def _made_delta(trigger: Any, part: _Part) -> Any:
    """A text delta for a part that had none (its text came in a done event only), of the
    trigger's kind: a dict, or the SDK's model (imported here, the one import of `openai`)."""
    fields = {
        "type": "response.output_text.delta",
        "item_id": _item_id(trigger, part.key[0]),
        "output_index": part.key[0],
        "content_index": part.key[1],
        "delta": "",
        "logprobs": [],
        "sequence_number": _get(trigger, "sequence_number"),
    }
    if trigger is None or _is_mapping(trigger):
        return fields
    if type(trigger).__module__.startswith("openai.lib."):
        # The SDK's `responses.stream()` helper, whose deltas carry the text so far: the
        # made one does too (_carrying fills it in).
        helper = importlib.import_module("openai.lib.streaming.responses")
        return helper.ResponseTextDeltaEvent.model_construct(**fields, snapshot="")
    responses = importlib.import_module("openai.types.responses")
    return responses.ResponseTextDeltaEvent.model_construct(**fields)


# --- Chat Completions -------------------------------------------------------------------------


class ChatCleaner(_Cleaner):
    """The state under `clean_chat`: `feed(chunk)` gives the chunks to send in its place,
    `close()` what is still held when the stream ends without a finish_reason."""

    def __init__(
        self,
        *,
        lenient: bool = False,
        skip_code: bool = True,
        widgets: Widgets | None = None,
        max_hold: int | None = DEFAULT_MAX_HOLD,
        offsets: OffsetUnit = "codepoints",
        on_marks: OnMarks | None = None,
        implementation: Implementation | None = None,
    ) -> None:
        super().__init__(
            _Options(lenient, skip_code, widgets, max_hold, offsets, on_marks, implementation)
        )
        # In a stream of the SDK's helper (see _helper): its last "chunk" event.
        self._helper_event: Any = None

    def feed(self, chunk: T) -> list[T]:
        if self._closed:
            self._check_open()  # raises
        choices = None if _shape(chunk) == _OTHER else _get(chunk, "choices")
        if choices is None and _shape(chunk) != _OTHER:
            kind = _get(chunk, "type")
            if kind == "chunk" or kind in _HELPER_DELTAS or kind in _HELPER_DONE:
                return self._helper(chunk, kind)
        if type(choices) is list and len(choices) == 1:
            # The common chunk, one choice: the loop below without its lists.
            choice = choices[0]
            new, emptied = self._choice(chunk, choice, self._read(choice, 0))
            if new is choice:
                return [chunk]
            if not emptied:
                return [_with(chunk, {"choices": [new]})]
            if _get(chunk, "usage") is None:
                return []
            return [_with(chunk, {"choices": [_emptied(choice)]})]
        if not isinstance(choices, list) or not choices:
            return [chunk]
        # Every choice is checked before any is fed: a bad one leaves the others' parts as
        # they were, and the chunk can be sent again without it.
        fields = [self._read(choice, position) for position, choice in enumerate(choices)]
        cleaned = []
        dropped = 0
        for choice, read in zip(choices, fields, strict=True):
            new, drop = self._choice(chunk, choice, read)
            cleaned.append(new)
            dropped += drop
        if dropped == len(choices) and _get(chunk, "usage") is None:
            return []
        if dropped:
            cleaned = [
                _emptied(old) if new is None else new
                for new, old in zip(cleaned, choices, strict=True)
            ]
        if all(new is old for new, old in zip(cleaned, choices, strict=True)):
            return [chunk]
        return [_with(chunk, {"choices": cleaned})]

    def close(self) -> list[Any]:
        if self._closed:
            return []
        self._closed = True
        out = []
        for key in sorted(self._parts):
            part = self._parts[key]
            released = part.close()
            annotations = [_moved(one, part.place) for one in part.ready(_itself)]
            if (released or annotations) and part.template is not None:
                chunk, choice = part.template
                # Only the text: the last delta's other fields (a tool call, the role) went
                # out with it already.
                delta = _with(_blank(_get(choice, "delta")), {"content": _shaped(part, released)})
                if annotations:
                    delta = _with(delta, {"annotations": annotations})
                logprobs = _chat_logprobs(part, part.logprobs_out()) if part.logprobs else None
                choice_changes: dict[str, Any] = {
                    "delta": delta,
                    "finish_reason": None,
                    "logprobs": logprobs,
                }
                if isinstance(_get(choice, "text"), str):
                    choice_changes["text"] = released  # (as _choice keeps it)
                choice = _with(choice, choice_changes)
                changes: dict[str, Any] = {"choices": [choice]}
                if _get(chunk, "usage") is not None:
                    changes["usage"] = None
                out.append(_with(chunk, changes))
        if self._helper_event is not None:
            return self._helper_chunks(self._helper_event, out)
        return out

    def _helper(self, event: Any, kind: str) -> list[Any]:
        """An event of the SDK's `chat.completions.stream()` helper: a "chunk" event is sent
        as its clean chunks, each followed by the text and token deltas made of it; the
        helper's own deltas (raw text) go; a done event gets its choice's clean text (and its
        `parsed` read again from it)."""
        if kind == "chunk":
            self._helper_event = event
            return self._helper_chunks(event, self.feed(_get(event, "chunk")))
        if kind in _HELPER_DELTAS:
            return []
        part = self._helper_part(event, kind)
        if part is None:
            return [event]
        if kind == "logprobs.content.done":
            return [_with(event, {"content": list(part.logprobs_kept)})]
        # The helper sends it at the choice's finish, or where a tool call starts: then the
        # stream may still hold the end of the text, which this carries all the same (the
        # deltas give it when the choice finishes).
        text = part.text() if part.closed else self._options.whole(part.key, part.raw_text()).text()
        changes: dict[str, Any] = {"content": text}
        if text != part.raw_text():
            _reparse(event, changes, "content")
        return [_with(event, changes)]

    def _helper_part(self, event: Any, kind: str) -> _Part | None:
        """The part of the choice a done event is about: it names none, but carries the
        choice's raw content (or token list) as the helper's completion so far holds it."""
        choices = _get(_get(self._helper_event, "snapshot"), "choices")
        if not isinstance(choices, list):
            return None
        done = _get(event, "content")
        found = None
        for position, choice in enumerate(choices):
            if kind == "logprobs.content.done":
                held = _get(_get(choice, "logprobs"), "content")
            else:
                held = _get(_get(choice, "message"), "content")
            if held is done or (found is None and held == done):
                found = _choice_index(choice, position)
                if held is done:
                    break
        return None if found is None else self._parts.get((found, 0))

    def _helper_chunks(self, event: Any, chunks: list[Any]) -> list[Any]:
        """Clean chunks as the helper's "chunk" events (like `event`, with the completion so
        far made clean), each followed by the helper's deltas of its text and tokens."""
        if not chunks:
            return []
        snapshot = self._snapshot(_get(event, "snapshot"))
        out = []
        for chunk in chunks:
            out.append(_with(event, {"chunk": chunk, "snapshot": snapshot}))
            choices = _get(chunk, "choices")
            for position, choice in enumerate(choices if isinstance(choices, list) else []):
                part = self._parts.get((_choice_index(choice, position), 0))
                if part is None:
                    continue
                content = _get(_get(choice, "delta"), "content")
                if isinstance(content, list):
                    content = _parts_text(content)
                if isinstance(content, str) and content:
                    message = _snapshot_message(snapshot, part)
                    parsed = _get(message, "parsed") if message is not None else None
                    out.append(
                        _helper_made(
                            event,
                            "ContentDeltaEvent",
                            type="content.delta",
                            delta=content,
                            snapshot=part.text(),
                            parsed=parsed,
                        )
                    )
                tokens = _get(_get(choice, "logprobs"), "content")
                if isinstance(tokens, list) and tokens:
                    out.append(
                        _helper_made(
                            event,
                            "LogprobsContentDeltaEvent",
                            type="logprobs.content.delta",
                            content=tokens,
                            snapshot=list(part.logprobs_kept),
                        )
                    )
        return out

    def _snapshot(self, snapshot: Any) -> Any:
        """The helper's completion so far with each choice's clean text (its `parsed` read
        again from it) and the tokens sent."""
        choices = _get(snapshot, "choices")
        if not isinstance(choices, list):
            return snapshot
        cleaned = []
        for position, choice in enumerate(choices):
            part = self._parts.get((_choice_index(choice, position), 0))
            message = _get(choice, "message")
            if part is None or not isinstance(_get(message, "content"), str):
                cleaned.append(choice)
                continue
            changes: dict[str, Any] = {"content": part.text()}
            if part.changed():
                _reparse(message, changes, "content", partial=not part.closed)
            annotations = _get(message, "annotations")
            if isinstance(annotations, list) and annotations:
                # The SDK's copy of the deltas' annotations, in raw offsets: the ones sent so
                # far (the held ones are the last), placed as they went out.
                sent = max(len(annotations) - len(part.held), 0)
                changes["annotations"] = [_moved(one, part.place) for one in annotations[:sent]]
            choice_changes: dict[str, Any] = {"message": _with(message, changes)}
            logprobs = _get(choice, "logprobs")
            if isinstance(_get(logprobs, "content"), list):
                choice_changes["logprobs"] = _with(logprobs, {"content": list(part.logprobs_kept)})
            cleaned.append(_with(choice, choice_changes))
        return _with(snapshot, {"choices": cleaned})

    def _read(self, choice: Any, position: int) -> _ChoiceFields | None:
        """The fields of a chat choice (at `position` in its chunk's list), checked: a
        ValueError here changes nothing, so a chunk is checked whole before any of its choices
        is fed.  None for a choice that carries no text and is no template."""
        # (The lookup first: a known dict or model, every chunk's, costs no call.)
        if _SHAPES.get(type(choice), _OTHER) == _OTHER and _fieldless(choice):
            return None
        fields = _view(choice)
        index = fields.get("index")
        if type(index) is not int:
            index = _choice_index(choice, position)
        delta = fields.get("delta")
        if delta is not None and _SHAPES.get(type(delta), _OTHER) == _OTHER and _fieldless(delta):
            delta = None  # it carries no text
        if delta is None:
            content = annotations = None
        else:
            content = _view(delta).get("content")
            annotations = _get(delta, "annotations")
        logprobs = fields.get("logprobs")
        tokens = None
        if logprobs is not None:
            tokens = _get(logprobs, "content")
            if _fieldless(logprobs) or not (tokens is None or isinstance(tokens, list)):
                raise ValueError(
                    "a chat choice needs logprobs as None or an object whose content is a list "
                    f"or None, not {type(logprobs).__name__}"
                )
        listed = None
        if content is not None and not isinstance(content, str):
            if not isinstance(content, list):
                raise ValueError(
                    "a chat delta needs content as a str, a list of parts or None, not "
                    f"{type(content).__name__}"
                )
            # Content parts (`[{"type": "text", "text": ...}, ...]`), as some OpenAI-compatible
            # servers send them: their text is the part's, and goes back as one text part.
            listed, content = content, _parts_text(content)
        part = self._parts.get((index, 0))
        if content and part is not None and part.closed:
            raise ValueError(f"a chat delta for choice {index} came after its finish_reason")
        finish = fields.get("finish_reason")
        return index, delta, content, annotations, finish, logprobs, tokens, listed

    def _choice(self, chunk: Any, choice: Any, read: _ChoiceFields | None) -> tuple[Any, bool]:
        """choice made clean (its fields `read`), and whether it carries nothing any more."""
        if read is None:
            return choice, False
        index, delta, content, annotations, finish, logprobs, tokens, listed = read
        part = self._parts.get((index, 0)) or self._open((index, 0))
        if isinstance(content, str):
            # Text released at the end goes out as this text came: a string, or one text part.
            part.listed = listed is not None
        if part.closed:
            if content:  # (a second choice of the same index in one chunk; see _read)
                raise ValueError(f"a chat delta for choice {index} came after its finish_reason")
            if not (isinstance(annotations, list) and annotations):
                return choice, False
            # Annotations after the finish (a server may repeat the finish chunk): the text is
            # all out, so they are placed at once.
            moved = [_moved(one, part.place) for one in annotations]
            return _with(choice, {"delta": _with(delta, {"annotations": moved})}), False
        if delta is None and part.template is not None:
            # A finish without a delta: an empty one of the kind the part's last chunk had.
            delta = _blank(_get(part.template[1], "delta"))
        if logprobs is not None:
            part.logprobs_like = logprobs
        if delta is not None:
            part.template = (chunk, choice)
        # (Tokens with no text, of a token that ends no character, wait behind the held text.)
        released = part.feed(content or "", tokens) if content or tokens else ""
        if isinstance(annotations, list):
            part.held.extend(annotations)
        if finish is not None:
            released += part.close()
        ready = [_moved(one, part.place) for one in part.ready(_itself)] if part.held else None
        kept = part.logprobs_out() if part.logprobs else None
        same = released == (content or "")
        if same and not ready and not annotations and (kept is None or kept is tokens):
            return choice, False
        if (
            content
            and not released
            and not ready
            and not kept
            and finish is None
            and not _carries_more(delta, _CHAT_TEXT_FIELDS)
            and (listed is None or all(_is_text_part(element) for element in listed))
            and not _carries_more(choice, _CHOICE_FIELDS)
        ):
            return None, True  # it carries nothing now: see _emptied
        changes: dict[str, Any] = {}
        if listed is not None:
            changes["content"] = _with_text(listed, released)
        elif content is not None:
            changes["content"] = released
        elif released:
            changes["content"] = _shaped(part, released)  # the end of the part's text
        if ready:
            changes["annotations"] = ready
        if delta is None:
            delta = {}  # no delta in this chunk or before it: a dict carries what was released
        new_delta = _with(delta, changes) if changes else delta
        if annotations is not None and not ready:
            new_delta = _without(new_delta, "annotations")
        choice_changes: dict[str, Any] = {"delta": new_delta}
        # (`text` is no field of the SDK's Choice: an extra, which its __dict__ leaves out)
        if _get(choice, "text") == (content if isinstance(content, str) else ""):
            choice_changes["text"] = released  # the server's copy of the content, clean too
        if kept is not None and kept is not tokens:
            choice_changes["logprobs"] = _chat_logprobs(part, kept)
        elif kept is None and not same and logprobs is not None:
            choice_changes["logprobs"] = None
        return _with(choice, choice_changes), False


def _choice_index(choice: Any, position: int) -> int:
    """The `index` of a chat choice, the one at `position` in its list: some OpenAI-compatible
    gateways leave it out, and their clients take a choice without one as the one at its place
    (the only one, in the usual chunk).  A choice that carries no fields has none."""
    index = None if _fieldless(choice) else _get(choice, "index")
    if index is None:
        return position
    if type(index) is not int:
        raise ValueError(f"a chat choice needs index as an int, not {type(index).__name__}")
    return index


def _chat_logprobs(part: _Part, kept: list[Any]) -> Any:
    """A choice's `logprobs` holding the tokens `kept` (None for none), of the kind the part's
    chunks had."""
    if not kept or part.logprobs_like is None:
        return None
    return _with(part.logprobs_like, {"content": kept, "refusal": None})


def _is_text_part(element: Any) -> bool:
    return _get(element, "type") == "text" and isinstance(_get(element, "text"), str)


def _parts_text(parts: list[Any]) -> str | None:
    """The text of a list of content parts (its text parts' put together), None for none."""
    texts = [_get(element, "text") for element in parts if _is_text_part(element)]
    return "".join(texts) if texts else None


def _text_part(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


def _shaped(part: _Part, text: str) -> Any:
    """A chat part's released text as its text last came: a string, or one text part."""
    return [_text_part(text)] if part.listed else text


def _with_text(parts: list[Any], text: str) -> list[Any]:
    """parts with `text` as their text: in the first text part (the others go), or in a new
    one at the end; none when text is empty.  Every other part stays, in order."""
    out: list[Any] = []
    placed = not text
    for element in parts:
        if not _is_text_part(element):
            out.append(element)
        elif not placed:
            out.append(_with(element, {"text": text}))
            placed = True
    if not placed:
        out.append(_text_part(text))
    return out


def _reparse(obj: Any, changes: dict[str, Any], field: str = "text", partial: bool = False) -> None:
    """A structured output's `parsed` (what the SDK's `parse` and `stream` helpers read from the
    raw text) read again from the clean text in `changes[field]`, as the SDK reads it: a
    pydantic model or other type through pydantic, plain JSON values with `json` (`partial`:
    the text so far of a stream, read as the helper reads it, with `jiter`).  Where the clean
    text no longer reads as that type, the raw one's `parsed` stays."""
    parsed = _get(obj, "parsed")
    if parsed is None:
        return
    text = changes[field]
    try:
        if not isinstance(parsed, dict | list | str | int | float):
            pydantic = importlib.import_module("pydantic")
            changes["parsed"] = pydantic.TypeAdapter(type(parsed)).validate_json(text)
        elif partial:
            jiter = importlib.import_module("jiter")
            changes["parsed"] = jiter.from_json(text.encode(), partial_mode=True)
        else:
            changes["parsed"] = json.loads(text)
    except (ValueError, TypeError, ImportError):  # (pydantic's ValidationError is a ValueError)
        pass


def _snapshot_message(snapshot: Any, part: _Part) -> Any:
    """The message of part's choice in the helper's completion so far (None for none)."""
    choices = _get(snapshot, "choices")
    for position, choice in enumerate(choices if isinstance(choices, list) else []):
        if _choice_index(choice, position) == part.key[0]:
            return _get(choice, "message")
    return None


def _helper_made(event: Any, name: str, **fields: Any) -> Any:
    """An event of the chat helper's kind `name` (a dict beside a dict `event`)."""
    if _is_mapping(event):
        return fields
    helper = importlib.import_module("openai.lib.streaming.chat")
    return getattr(helper, name).model_construct(**fields)


def _blank(obj: Any) -> Any:
    """An object of obj's kind with no field set: an unset model, else an empty dict."""
    if _shape(obj) == _MODEL:
        return type(obj).model_construct()
    return {}


def _itself(annotation: Any) -> Any:
    return annotation


def _emptied(choice: Any) -> Any:
    """A choice whose text released nothing, in a chunk that goes out for another choice."""
    delta = _without(_with(_get(choice, "delta"), {"content": ""}), "annotations")
    changes: dict[str, Any] = {"delta": delta}
    if _get(choice, "logprobs") is not None:
        changes["logprobs"] = None
    return _with(choice, changes)


# --- whole results ----------------------------------------------------------------------------


def clean_response(
    response: T,
    *,
    lenient: bool = False,
    skip_code: bool = True,
    widgets: Widgets | None = None,
    offsets: OffsetUnit = "codepoints",
    on_marks: OnMarks | None = None,
    implementation: Implementation | None = None,
) -> T:
    """A Responses API result (`client.responses.create(...)` without `stream`) with the text
    of its messages clean and their annotations moved (see the module's documentation)."""
    cleaner = ResponsesCleaner(
        lenient=lenient,
        skip_code=skip_code,
        widgets=widgets,
        offsets=offsets,
        on_marks=on_marks,
        implementation=implementation,
    )
    output = _get(response, "output")
    if not isinstance(output, list):
        return response
    out: list[Any] = []
    items = [cleaner._item(index, item, None, out) for index, item in enumerate(output)]
    return _with(response, {"output": items})


def clean_completion(
    completion: T,
    *,
    lenient: bool = False,
    skip_code: bool = True,
    widgets: Widgets | None = None,
    offsets: OffsetUnit = "codepoints",
    on_marks: OnMarks | None = None,
    implementation: Implementation | None = None,
) -> T:
    """A Chat Completions result (without `stream`) with each choice's message clean and its
    annotations moved (see the module's documentation)."""
    options = _Options(lenient, skip_code, widgets, None, offsets, on_marks, implementation)
    choices = _get(completion, "choices")
    if not isinstance(choices, list):
        return completion
    cleaned = []
    for position, choice in enumerate(choices):
        message = _get(choice, "message")
        content = _get(message, "content")
        listed = content if isinstance(content, list) else None
        if listed is not None:
            content = _parts_text(listed)  # content parts, as some compatible servers send
        if not isinstance(content, str):
            cleaned.append(choice)
            continue
        part = options.whole((_choice_index(choice, position), 0), content)
        text = part.text()
        changes: dict[str, Any] = {"content": text if listed is None else _with_text(listed, text)}
        annotations = _get(message, "annotations")
        if isinstance(annotations, list) and annotations:
            changes["annotations"] = [_moved(one, part.place) for one in annotations]
        if part.changed() and listed is None:
            _reparse(message, changes, "content")
        choice_changes: dict[str, Any] = {"message": _with(message, changes)}
        if part.changed() and _get(choice, "logprobs") is not None:
            choice_changes["logprobs"] = None
        cleaned.append(_with(choice, choice_changes))
    return _with(completion, {"choices": cleaned})


# --- streams ----------------------------------------------------------------------------------


def clean_responses(
    events: Iterable[T],
    *,
    lenient: bool = False,
    skip_code: bool = True,
    widgets: Widgets | None = None,
    max_hold: int | None = DEFAULT_MAX_HOLD,
    offsets: OffsetUnit = "codepoints",
    on_marks: OnMarks | None = None,
    implementation: Implementation | None = None,
) -> Generator[T, None, None]:
    """Responses API stream events in (the SDK's `client.responses.create(..., stream=True)`,
    `client.responses.stream(...)`, or dicts; the OpenAI Agents SDK's stream events too), the
    same stream out with the text clean."""
    cleaner = ResponsesCleaner(
        lenient=lenient,
        skip_code=skip_code,
        widgets=widgets,
        max_hold=max_hold,
        offsets=offsets,
        on_marks=on_marks,
        implementation=implementation,
    )
    return _run(cleaner, events)


def aclean_responses(
    events: AsyncIterable[T],
    *,
    lenient: bool = False,
    skip_code: bool = True,
    widgets: Widgets | None = None,
    max_hold: int | None = DEFAULT_MAX_HOLD,
    offsets: OffsetUnit = "codepoints",
    on_marks: OnMarks | None = None,
    implementation: Implementation | None = None,
) -> AsyncGenerator[T, None]:
    """`clean_responses` over an async iterator (`AsyncOpenAI`'s streams, an agent's
    `result.stream_events()`): the same events."""
    cleaner = ResponsesCleaner(
        lenient=lenient,
        skip_code=skip_code,
        widgets=widgets,
        max_hold=max_hold,
        offsets=offsets,
        on_marks=on_marks,
        implementation=implementation,
    )
    return _arun(cleaner, events)


def clean_chat(
    chunks: Iterable[T],
    *,
    lenient: bool = False,
    skip_code: bool = True,
    widgets: Widgets | None = None,
    max_hold: int | None = DEFAULT_MAX_HOLD,
    offsets: OffsetUnit = "codepoints",
    on_marks: OnMarks | None = None,
    implementation: Implementation | None = None,
) -> Generator[T, None, None]:
    """Chat Completions chunks in (`stream=True`), the same chunks out with the text of each
    choice clean and its `delta.annotations` moved."""
    cleaner = ChatCleaner(
        lenient=lenient,
        skip_code=skip_code,
        widgets=widgets,
        max_hold=max_hold,
        offsets=offsets,
        on_marks=on_marks,
        implementation=implementation,
    )
    return _run(cleaner, chunks)


def aclean_chat(
    chunks: AsyncIterable[T],
    *,
    lenient: bool = False,
    skip_code: bool = True,
    widgets: Widgets | None = None,
    max_hold: int | None = DEFAULT_MAX_HOLD,
    offsets: OffsetUnit = "codepoints",
    on_marks: OnMarks | None = None,
    implementation: Implementation | None = None,
) -> AsyncGenerator[T, None]:
    """`clean_chat` over an async iterator: the same chunks."""
    cleaner = ChatCleaner(
        lenient=lenient,
        skip_code=skip_code,
        widgets=widgets,
        max_hold=max_hold,
        offsets=offsets,
        on_marks=on_marks,
        implementation=implementation,
    )
    return _arun(cleaner, chunks)


def _run(cleaner: ResponsesCleaner | ChatCleaner, events: Iterable[T]) -> Generator[T, None, None]:
    try:
        for event in events:
            yield from cleaner.feed(event)
    except GeneratorExit:
        # Closed by its reader (a client gone, a `break` in a `with closing(...)`): the
        # stream it reads goes too (an SDK stream's HTTP response), as with `with stream:`.
        cleaner._let_go()
        close = getattr(events, "close", None)
        if callable(close):
            close()
        raise
    except Exception:
        # The stream broke: what is held goes out before the error, as at any other end.
        yield from cleaner.close()
        raise
    yield from cleaner.close()


async def _arun(
    cleaner: ResponsesCleaner | ChatCleaner, events: AsyncIterable[T]
) -> AsyncGenerator[T, None]:
    try:
        async for event in events:
            for out in cleaner.feed(event):
                yield out
    except GeneratorExit:
        # As in _run: an async generator has `aclose()`, the SDK's AsyncStream `close()`.
        cleaner._let_go()
        close = getattr(events, "aclose", None) or getattr(events, "close", None)
        if callable(close):
            closing = close()
            if inspect.isawaitable(closing):
                await closing
        raise
    except Exception:
        for out in cleaner.close():
            yield out
        raise
    for out in cleaner.close():
        yield out
