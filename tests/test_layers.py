"""The house as layers: public modules at the top, the machinery in folders that name their
layer, and no import cycle anywhere (imports inside functions count too)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import citemark

PACKAGE = Path(citemark.__file__).parent
LAYERS = ("_core", "_kernels", "_markdown", "_validate", "_cli")
SOURCES = (".py", ".pyx", ".pxi")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {
        module_name(path): path
        for path in sorted(PACKAGE.rglob("*"))
        if path.suffix in (".py", ".pyx") and "__pycache__" not in path.parts
    }


def imports_of(path: Path, name: str, known: set[str]) -> set[str]:
    """Every citemark module `path` imports, at the top or inside a function."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".pyx":
        # Cython's own statements are not Python: keep the lines `ast` can read.
        kept = [line for line in text.splitlines() if line.startswith(("from ", "import "))]
        kept = [line for line in kept if " cimport " not in line and not line.endswith("(")]
        text = "\n".join(kept)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {module for module in found if module in known and module != name}


def test_no_import_cycle_anywhere() -> None:
    found = modules()
    graph = {name: imports_of(path, name, set(found)) for name, path in found.items()}
    # A module's package runs first when it is imported: count that edge too.
    for name in graph:
        parent = name.rpartition(".")[0]
        if parent in graph and parent != "citemark":
            graph[name].add(parent)
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = [*path[path.index(nxt) :], nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


def test_at_most_twenty_files_at_the_top() -> None:
    top = [
        path
        for path in PACKAGE.iterdir()
        if path.is_file() and not path.name.endswith((".so", ".pyd", ".c"))
    ]
    assert len(top) <= 20, sorted(path.name for path in top)


def test_the_top_holds_public_modules_and_the_package_face_only() -> None:
    private = {"__init__.py", "__main__.py", "_version.py", "py.typed"}
    for path in PACKAGE.iterdir():
        if path.is_file() and path.suffix in SOURCES and path.name not in private:
            assert not path.name.startswith("_"), (
                f"{path.name}: a private module belongs in a layer"
            )


@pytest.mark.parametrize("layer", LAYERS)
def test_each_layer_is_a_folder_that_says_what_it_holds(layer: str) -> None:
    init = PACKAGE / layer / "__init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
    assert doc, f"{layer}/__init__.py says what the layer holds"


def test_every_compiled_kernel_has_its_twin_and_stub() -> None:
    kernels = PACKAGE / "_kernels"
    for source in kernels.glob("*_c.pyx"):
        pair = source.name.removesuffix("_c.pyx")
        assert (kernels / f"{pair}_py.py").exists(), pair
        assert (kernels / f"{pair}_c.pyi").exists(), pair
    assert not list(PACKAGE.rglob("*.pyx")) or all(
        path.parent.name == "_kernels" for path in PACKAGE.rglob("*.pyx")
    )
