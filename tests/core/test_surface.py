"""The package's surface: what `import citemark` loads, its module map, its one version."""

from __future__ import annotations

import ast
import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import pytest

import citemark

PACKAGE = Path(citemark.__file__).resolve().parent

# Loaded on first use only: the drop-in needs none of them.
LAZY_MODULES = [
    "citemark.offsets",
    "citemark.parser",
    "citemark.prompt",
    "citemark.sources",
    "citemark.validate",
    "citemark._markdown.blocks",
    "citemark._core.protocols",
    "dataclasses",
    "datetime",
    "html",
]


def modules_after(code: str) -> set[str]:
    """The names in sys.modules after `code`, in a fresh interpreter."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE.parent), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return set(done.stdout.split())


def test_import_loads_only_the_drop_in() -> None:
    loaded = modules_after("import citemark")
    assert "citemark._core.dropin" in loaded
    assert loaded.isdisjoint(LAZY_MODULES), sorted(loaded.intersection(LAZY_MODULES))


def test_a_lazy_name_loads_its_module() -> None:
    loaded = modules_after("import citemark\ncitemark.Parser")
    assert "citemark.parser" in loaded
    assert "citemark.sources" not in loaded


@pytest.mark.parametrize("name", sorted(citemark._LAZY))
def test_lazy_names_resolve_to_their_definition(name: str) -> None:
    module = __import__(f"citemark.{citemark._LAZY[name]}", fromlist=[name])
    assert getattr(citemark, name) is getattr(module, name)


def test_every_public_name_resolves() -> None:
    for name in citemark.__all__:
        assert getattr(citemark, name) is not None
    assert set(citemark.__all__) <= set(dir(citemark))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        citemark.no_such_name  # noqa: B018


def test_one_version() -> None:
    assert citemark.__version__ == importlib.metadata.version("citemark")
    pyproject = PACKAGE.parent.parent / "pyproject.toml"
    if pyproject.exists():  # a checkout: the version is not written a second time there
        text = pyproject.read_text(encoding="utf-8")
        assert "citemark._version.__version__" in text
        assert "\nversion =" not in text.split("[project]", 1)[1].split("\n[", 1)[0]


def test_the_version_module_is_the_only_source() -> None:
    tree = ast.parse((PACKAGE / "_version.py").read_text(encoding="utf-8"))
    assigned = [node for node in tree.body if isinstance(node, ast.Assign)]
    names = [ast.unparse(target) for node in assigned for target in node.targets]
    assert names == ["__version__"]


def test_no_two_modules_export_one_name_for_two_things() -> None:
    from citemark import offsets, parser, prompt, render, sources

    assert prompt.PromptStyle is not render.RenderStyle
    assert offsets.OFFSET_UNITS == ("codepoints", "utf16", "utf8")
    assert sources.SOURCE_UNITS == ("document", "block", "line")
    for module in (offsets, parser, prompt, render, sources):
        for gone in ("Style", "Unit", "UNITS", "Offsets"):
            assert not hasattr(module, gone), f"{module.__name__}.{gone}"
