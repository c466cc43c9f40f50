"""No entry point keeps memory per call (markupsafe's `test_leak`, with tracemalloc, which also
sees the kernel's PyMem and raw allocations, not only the objects the gc tracks).

Each call runs a few hundred times to warm every cache (the grammar cache, interned
strings), then thousands of times more: what stays allocated after that may not grow by
more than a small, call-count-independent slack.  A leak of a single small object per call
(about 50 bytes) would exceed it three times over.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable
from typing import Any

from citemark import Parser
from citemark._dropin import DropIn

S, D, E = "\ue200", "\ue202", "\ue201"
TEXT = (
    "Evidence é中 "
    + S
    + "cite"
    + D
    + "turn0search0"
    + D
    + "turn1news2"
    + D
    + "L8-L13"
    + E
    + " and "
    + S
    + "cite"
    + D
    + "bad id"
    + E
    + " \U0001f600 "
    + S
    + "cite"
    + D
    + "open "
) * 3
WARM = 100
CALLS = 1000
SLACK = 16 * 1024  # bytes: tracemalloc's own bookkeeping and free-list noise


def entry_points(api: DropIn, parser: Parser) -> dict[str, Callable[[], Any]]:
    found = api.extract_citations(TEXT)
    utf16 = parser.replace(offsets="utf16")
    return {
        "extract": lambda: api.extract_citations(TEXT),
        "extract_families": lambda: api.extract_citations(TEXT, families=["cite", "navlist"]),
        "strip_citations": lambda: api.strip_citations(TEXT, found),
        "strip_citations_unsorted": lambda: api.strip_citations(TEXT, found[::-1]),
        "extract_many": lambda: api.extract_many([TEXT, "", "plain"]),
        "strip_many": lambda: api.strip_many([TEXT, "", "plain"]),
        "spans": lambda: parser.spans(TEXT),
        "finditer": lambda: list(parser.finditer(TEXT)),
        "finditer_utf16": lambda: list(utf16.finditer(TEXT)),
        "strip": lambda: parser.strip(TEXT),
        "bad_text": lambda: _raises(lambda: api.extract_citations(b"x")),  # type: ignore[arg-type]
        "bad_citations": lambda: _raises(lambda: api.strip_citations(TEXT, [{"start": "x"}])),
    }


def _raises(call: Callable[[], Any]) -> None:
    try:
        call()
    except (TypeError, KeyError, ValueError):
        return
    raise AssertionError("expected an error")


def retained(call: Callable[[], Any]) -> int:
    """Bytes still allocated after CALLS more calls than the warm-up."""
    for _ in range(WARM):
        call()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(CALLS):
            call()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return after - before


def test_no_entry_point_retains_memory(api: DropIn, parser: Parser) -> None:
    grown = {name: retained(call) for name, call in entry_points(api, parser).items()}
    assert {name: size for name, size in grown.items() if size > SLACK} == {}, grown
