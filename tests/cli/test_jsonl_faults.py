"""The JSONL path on the inputs a fault audit found: integers longer than json.loads reads,
and the zero-length copies that UBSan reports (both kernels; the sanitized build of
fuzz/README.md runs these cases too)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from citemark import extract_many
from citemark.display import clean_many

S, D, E = "\ue200", "\ue202", "\ue201"
PATH = ("text",)


@pytest.fixture
def kernel(implementation: str) -> ModuleType:
    return importlib.import_module(
        "citemark._kernels.jsonl_" + {"cython": "c", "python": "py"}[implementation]
    )


def _line(number: str) -> bytes:
    text = f"a {S}cite{D}turn0search0{E}"
    return (
        json.dumps({"text": text}, ensure_ascii=False).encode()[:-1]
        + b', "n": '
        + number.encode()
        + b"}"
    )


LIMIT = sys.get_int_max_str_digits()


@pytest.mark.parametrize(
    ("number", "valid"),
    [
        ("1" * LIMIT, True),
        ("-" + "1" * LIMIT, True),
        ("1" * (LIMIT + 1), False),
        ("-" + "1" * (LIMIT + 1), False),
        ("1" * (LIMIT + 1) + ".5", True),  # a float: json.loads has no limit there
        ("1" * (LIMIT + 1) + "e3", True),
    ],
)
def test_integers_past_int_limit_are_invalid_json(
    number: str, valid: bool, kernel: ModuleType
) -> None:
    """One decision for every command: as json.loads, which refuses them."""
    line = _line(number)
    try:
        json.loads(line)
        accepted = True
    except ValueError:
        accepted = False
    assert accepted is valid
    code = kernel.locate(line, PATH)[0]
    assert (code == 0) is valid  # FOUND, else NOT_JSON
    _, rows, _, bad = kernel.clean_lines(line + b"\n", PATH, clean_many, True)
    assert (rows, len(bad)) == ((1, 0) if valid else (0, 1))


def test_the_limit_is_read_at_each_call(kernel: ModuleType) -> None:
    line = _line("1" * 5000)
    old = sys.get_int_max_str_digits()
    try:
        sys.set_int_max_str_digits(0)  # no limit: json.loads reads it
        json.loads(line)
        assert kernel.locate(line, PATH)[0] == 0
        sys.set_int_max_str_digits(6000)
        assert kernel.locate(line, PATH)[0] == 0
    finally:
        sys.set_int_max_str_digits(old)
    assert kernel.locate(line, PATH)[0] != 0


@pytest.mark.parametrize("command", ["clean", "strip", "extract", "lint", "stats"])
def test_every_command_refuses_the_line(command: str, implementation: str, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(_line("1" * (LIMIT + 1)) + b"\n" + _line("7") + b"\n")
    env = {**os.environ, "CITEMARK_IMPLEMENTATION": implementation}
    done = subprocess.run(
        [sys.executable, "-m", "citemark", command, "--field", "text", str(log)],
        capture_output=True,
        env=env,
        check=False,
    )
    assert done.returncode != 0
    assert b"log.jsonl:1: invalid JSON: Exceeds the limit" in done.stderr


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\n\n",
        b'{"text": ""}\n',
        b'{"text": null}\n',
        b"not json\n",
        b'{"other": 1}\n{"text": 3}\n',
    ],
)
def test_passes_with_nothing_to_write(data: bytes, kernel: ModuleType) -> None:
    """Lines that give no output (the zero-length copies UBSan flagged in extract_lines)."""
    for skip_bad in (True, False):
        found = kernel.extract_lines(data, PATH, extract_many, skip_bad, "f", 0, None)
        assert isinstance(found[0], bytes)
        assert kernel.clean_lines(data, PATH, clean_many, skip_bad)[0] in (b"", data)
        assert isinstance(kernel.strip_lines(data, PATH, clean_many, skip_bad, None)[0], bytes)


@pytest.mark.parametrize("families", [None, (b"cite",)])
def test_first_line_handed_to_many(families: tuple[bytes, ...] | None, kernel: ModuleType) -> None:
    """A first line whose text goes to `many` (no raw families) is written into an empty
    output buffer: the zero-length copy before it is the memcpy(NULL, NULL, 0) that UBSan
    reports when `_put` copies an empty piece (the sanitized build runs this test too)."""
    text = f"a {S}cite{D}turn0search0{E}"
    for ensure_ascii in (True, False):
        data = json.dumps({"text": text}, ensure_ascii=ensure_ascii).encode() + b"\n"
        found = kernel.extract_lines(data, PATH, extract_many, True, "f", 0, families)
        assert found == (kernel.citation_lines("f", [0], extract_many([text])), 1, 0, [])
