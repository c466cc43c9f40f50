"""Without the GIL: importing citemark keeps it off, and eight threads sharing the same objects
(one drop-in API, one Parser, one grammar each) get exactly the single-thread results, from
the drop-in, `clean`, the streams and the OpenAI adapter alike (each stream a thread's own).

Both kernels declare `freethreading_compatible`; a module that did not would switch the GIL
back on at import (with a RuntimeWarning), which the first test catches.  The stress test
runs on every interpreter (with the GIL it still checks the kernel's GIL-released scans).
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import threading
from collections.abc import Callable
from typing import Any

import pytest

from citemark import Parser
from citemark._core.dropin import DropIn
from citemark.display import CleanStream, clean, clean_with_marks
from citemark.openai import clean_responses
from citemark.stream import StreamParser
from strategies import IDS, LOCATORS, ODD

S, D, E = "\ue200", "\ue202", "\ue201"
THREADS = 8
ROUNDS = 12

FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))

# Every module that loads without the optional dependencies (pyarrow, dask, rich): the ones
# a free-threaded install can import.
MODULES = [
    "citemark",
    "citemark._kernels.scan_c",
    "citemark._kernels.scan_py",
    "citemark.parser",
    "citemark.offsets",
    "citemark.render",
    "citemark.sources",
    "citemark.stream",
    "citemark.display",
    "citemark.openai",
    "citemark.validate",
    "citemark.lint",
    "citemark.prompt",
]


@pytest.mark.skipif(not FREE_THREADED, reason="not a free-threaded CPython build")
def test_import_keeps_the_gil_disabled() -> None:
    # A fresh interpreter: this one may have imported other extensions already, and the GIL
    # is switched on at the import of the first module that does not declare support.
    code = (
        "import importlib, sys\n"
        f"for name in {MODULES!r}:\n"
        "    importlib.import_module(name)\n"
        "print(sys._is_gil_enabled())\n"
    )
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert result.stdout.strip() == "False", result.stderr


def make_texts() -> list[str]:
    texts = []
    for i in range(48):
        ids = D.join(IDS[(i + k) % len(IDS)] for k in range(1 + i % 3))
        locator = D + LOCATORS[i % len(LOCATORS)] if i % 2 else ""
        marker = S + "cite" + D + ids + locator + E
        prose = ODD[i % len(ODD)] * (i * 37 % 200) + " prose "
        texts.append((prose + marker) * (1 + i % 5) + (S + "cite" + D + "open") * (i % 3 == 0))
    texts.append((S + "cite" + D + "x ") * 5_000)  # unclosed STARTs: the long linear path
    return texts


TEXTS = make_texts()


def fed(stream: Any, text: str, size: int = 16) -> list[Any]:
    """What a stream gives back for text in `size`-character deltas, its close included."""
    return [stream.feed(text[at : at + size]) for at in range(0, len(text), size)] + [
        stream.close()
    ]


def responses_events(text: str, size: int = 16) -> list[dict[str, Any]]:
    """text as a Responses stream's deltas and its done event (plain dicts: no SDK needed)."""
    common = {"output_index": 0, "content_index": 0, "item_id": "msg"}
    events: list[dict[str, Any]] = [
        {"type": "response.output_text.delta", **common, "delta": text[at : at + size]}
        for at in range(0, len(text), size)
    ]
    return [*events, {"type": "response.output_text.done", **common, "text": text}]


def calls(api: DropIn, parser: Parser) -> dict[str, Callable[[], Any]]:
    """Each entry point over all the texts; results compared with `==`.  A stream is each
    thread's own, as a server's are (threads sharing one are test_threads.py's)."""
    implementation = parser.implementation
    some = TEXTS[:12]
    return {
        "clean": lambda: [clean(text, implementation=implementation) for text in TEXTS],
        "clean_with_marks": lambda: [
            clean_with_marks(text, implementation=implementation) for text in TEXTS
        ],
        "CleanStream": lambda: [
            fed(CleanStream(implementation=implementation), text) for text in TEXTS
        ],
        "CleanStream mapped": lambda: [
            (fed(stream, text), stream.marks, stream.cuts)
            for text in some
            for stream in [CleanStream(mapped=True, implementation=implementation)]
        ],
        "StreamParser": lambda: [fed(StreamParser(parser), text) for text in some],
        "clean_responses": lambda: [
            list(clean_responses(responses_events(text), implementation=implementation))
            for text in some
        ],
        "extract": lambda: [api.extract_citations(text) for text in TEXTS],
        "strip": lambda: [api.strip_citations(text, api.extract_citations(text)) for text in TEXTS],
        "extract_many": lambda: api.extract_many(TEXTS),
        "strip_many": lambda: api.strip_many(TEXTS),
        "finditer": lambda: [list(parser.finditer(text)) for text in TEXTS],
        "finditer_utf16": lambda: [
            list(parser.replace(offsets="utf16").finditer(text)) for text in TEXTS
        ],
    }


@pytest.mark.slow  # thread stress; .ci/run runs it on the free-threaded build too
def test_eight_threads_get_the_single_thread_results(api: DropIn, parser: Parser) -> None:
    entry_points = calls(api, parser)
    expected = {name: call() for name, call in entry_points.items()}
    assert any(expected["extract"]), "the texts must hold citations"
    failures: list[str] = []
    barrier = threading.Barrier(THREADS)

    def worker(seed: int) -> None:
        names = sorted(entry_points)
        try:
            barrier.wait()
            for round_ in range(ROUNDS):
                # Each thread walks the entry points in its own order, so different calls
                # overlap on the same shared API, Parser and grammar.
                shift = (seed + round_) % len(names)
                for name in names[shift:] + names[:shift]:
                    if entry_points[name]() != expected[name]:
                        failures.append(f"thread {seed} round {round_}: {name}")
        except Exception as error:  # reported below: a thread's exception is otherwise lost
            failures.append(f"thread {seed}: {error!r}")

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
