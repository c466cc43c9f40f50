"""Issue 12: errors that say what is wrong (a TypeError naming the argument and what it
takes), and the results that say "nothing" with None."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from citemark import offsets
from citemark.parser import Parser
from citemark.render import render
from citemark.sources import Registry, Source
from citemark.stream import StreamParser
from citemark.validate import resolve, validate

S, D, E = "\ue200", "\ue202", "\ue201"
EXAMPLES = Path(__file__).parents[2] / "examples"
TEXT = f"Claim.{S}cite{D}turn0search0{E}"


def test_stream_without_a_bound(parser: Parser) -> None:
    with pytest.raises(TypeError, match="max_marker_length must be a positive int"):
        StreamParser(parser, max_marker_length=None)  # type: ignore[arg-type]


def test_resolve_without_sources(parser: Parser) -> None:
    with pytest.raises(TypeError, match="sources must be a mapping"):
        resolve(TEXT, None, parser=parser)  # type: ignore[arg-type]


@pytest.mark.parametrize("unit", ["codepoints", "utf16", "utf8"])
def test_length_of_none(unit: str) -> None:
    with pytest.raises(TypeError, match="text must be str, not NoneType"):
        offsets.length(None, unit)  # type: ignore[arg-type]


def test_render_without_sources(parser: Parser) -> None:
    with pytest.raises(TypeError, match="sources must be a mapping"):
        render(TEXT, None, parser=parser)  # type: ignore[arg-type]


@pytest.mark.parametrize("call", [render, validate])
def test_a_parser_that_is_not_one(call: object) -> None:
    with pytest.raises(TypeError, match=r"parser must be a citemark\.Parser or None, not str"):
        call(TEXT, {}, parser="x")  # type: ignore[operator]


def test_resolve_with_a_parser_that_is_not_one() -> None:
    with pytest.raises(TypeError, match=r"parser must be a citemark\.Parser or None, not str"):
        resolve(TEXT, {}, parser="x")  # type: ignore[arg-type]


def test_render_takes_a_url_string_or_a_source(parser: Parser) -> None:
    url = "https://example.com/a"
    assert render(TEXT, {"turn0search0": url}, parser=parser) == f"Claim.[1]({url})"
    source = Source("turn0search0", "text", title="A", url=url)
    assert render(TEXT, {"turn0search0": source}, parser=parser) == f"Claim.[1]({url})"
    registry = Registry([source])
    assert render(TEXT, registry, style="footnotes", parser=parser) == (
        f"Claim.[^1]\n\n[^1]: [A]({url})\n"
    )
    with pytest.raises(TypeError, match="source 'turn0search0' must be a mapping"):
        render(TEXT, {"turn0search0": 3}, parser=parser)  # type: ignore[dict-item]


def test_parser_refuses_a_str_of_families(implementation: str) -> None:
    with pytest.raises(TypeError, match=r"families must be a tuple of str, not a str"):
        Parser("cite", implementation=implementation)  # type: ignore[arg-type]


def test_the_drop_in_keeps_the_guides_reading_of_a_str(parser: Parser) -> None:
    from citemark import extract_citations

    assert extract_citations(f"{S}c{D}x{E}", families="ci")[0]["family"] == "c"


def test_resolve_quotes_none_for_nothing(parser: Parser) -> None:
    registry = Registry([Source("turn0file0", "one\ntwo")])
    text = (
        f"a{S}cite{D}turn0file0{D}L2{E} b{S}cite{D}turn0file0{D}L9{E}"
        f" c{S}cite{D}turn0file7{D}L1{E} d{S}cite{D}turn0file0{E}"
    )
    assert [r.quote for r in resolve(text, registry, parser=parser)] == ["two", None, None, None]


def test_registry_json_is_text_and_dict_is_a_dict() -> None:
    registry = Registry([Source("doc1", "a\nb", url="https://x.example/é")])
    text = registry.to_json()
    assert isinstance(text, str)
    assert (
        json.loads(text)
        == registry.to_dict()
        == {"doc1": {"text": "a\nb", "unit": "line", "url": "https://x.example/é"}}
    )
    for data in (text, registry.to_dict()):
        again = Registry.from_json(data)
        assert [again[i] for i in again] == [registry[i] for i in registry]


def test_the_example_answer_is_clean_and_the_flawed_one_is_not(parser: Parser) -> None:
    clean = (EXAMPLES / "answer.txt").read_text(encoding="utf-8")
    assert validate(clean, None, parser=parser) == []
    assert len(list(parser.finditer(clean))) == 4
    flawed = (EXAMPLES / "flawed_answer.txt").read_text(encoding="utf-8")
    found = validate(flawed, None, parser=parser)
    assert sorted(d.severity for d in found) == ["error"] * 2 + ["warning"] * 4


def _import_error(module: str, hidden: list[str]) -> str:
    """The ImportError of `import module` with `hidden` made unimportable."""
    code = (
        "import sys\n"
        f"for name in {hidden!r}:\n"
        "    sys.modules[name] = None\n"
        "try:\n"
        f"    import {module}\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=os.environ, check=True
    )
    return done.stdout


def test_dask_without_its_extra_says_what_to_install() -> None:
    message = _import_error("citemark.dask", ["dask", "dask.dataframe"])
    assert 'pip install "dask[dataframe]" distributed' in message
    assert "citemark[dask]" in message


def test_arrow_without_pyarrow_says_what_to_install() -> None:
    assert "pip install pyarrow" in _import_error("citemark.arrow", ["pyarrow"])


@pytest.mark.parametrize("variable", ["CITEMARK_SIMD", "CITEMARK_IMPLEMENTATION"])
def test_a_bogus_environment_value_is_an_error_that_names_it(variable: str) -> None:
    env = {**os.environ, variable: "bogus"}
    done = subprocess.run(
        [sys.executable, "-c", "import citemark"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0
    assert f"{variable} must be" in done.stderr


def test_a_demanded_kernel_that_is_not_built_says_what_to_do() -> None:
    code = (
        "import sys\n"
        "sys.modules['citemark._kernels.scan_c'] = None\n"
        "try:\n"
        "    import citemark\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    env = {**os.environ, "CITEMARK_IMPLEMENTATION": "cython"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert "not built in this install" in done.stdout
    assert "CITEMARK_IMPLEMENTATION=python" in done.stdout
