"""One facade runs every behavioural test on the compiled kernel and on the Python twin.

`implementation` ("cython" or "python") is the one parametrized fixture; `api` and `parser`
derive from it, and a test file never re-parametrizes over the implementations itself.  A
test that needs the compiled kernel without going through the fixture carries the
`c_extension` marker.

By default the kernel is imported directly: when it is missing or broken, the `cython` cases
fail (with the ImportError), they never skip.  A pure install (CITEMARK_NO_EXTENSION=1) runs
the suite with `--no-c-extensions`: the compiled cases are then deselected, and the run says
how many and which, in its header and in its summary (the multidict/propcache pattern).

`--without MODULE` (repeatable) declares an optional dependency absent on purpose, as on a
free-threaded interpreter that has no pyarrow wheel: the test files that import it are left
out of collection and listed with that reason.  Without the option a missing pyarrow fails.
A free-threaded interpreter implies `--without` for the modules of the `server` extra
(`FREE_THREADED_WITHOUT`), which its `test-ft` extra does not install.
"""

from __future__ import annotations

import contextlib
import os
import re
import sysconfig
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from citemark import Parser
from citemark._core.dropin import DropIn
from citemark._kernels.loader import Implementation, load

settings.register_profile(
    "ci",
    deadline=None,
    max_examples=200,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, max_examples=30)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# On a failure Hypothesis imports libcst (to suggest a patch), and some libcst/mypy_extensions
# pairs warn while importing; under `filterwarnings = error` that turns a plain test failure
# into an INTERNALERROR that hides the report.  Import it once here, warnings silenced.
with warnings.catch_warnings(), contextlib.suppress(ImportError):
    warnings.simplefilter("ignore", DeprecationWarning)
    import libcst  # noqa: F401

MARKER = "c_extension"

# Tests in files that predate the marker and reach the compiled modules by name.  TODO(lead):
# once their owners mark them `@pytest.mark.c_extension` (or move them onto the fixture),
# this table goes.  A module listed with None needs the kernel to be imported at all.
COMPILED_ONLY: dict[str, frozenset[str] | None] = {
    "test_simd.py": None,
    "test_clean_differential.py": None,
    "test_arrow.py": frozenset(
        {
            "test_kernel_rejects_inconsistent_buffers",
            "test_kernel_is_memory_safe_on_invalid_utf8",
            "test_kernel_strip_of_markerless_rows_is_none",
            "test_the_environment_chooses_the_path",
            "test_the_default_path_is_the_compiled_one",
        }
    ),
    "test_differential.py": frozenset(
        {"test_kernel_extract_and_strip_are_the_twins", "test_kernel_cut_is_the_twins"}
    ),
    "test_select.py": frozenset(
        {"test_cython_demands_the_kernel", "test_unset_prefers_the_kernel_on_cpython"}
    ),
}
# Fixture parameters that stand for the compiled path in files with their own fixture
# (test_arrow's `arrow` says "compiled").
COMPILED_PARAMS = frozenset({"cython", "compiled"})

# The `server` extra (the openai SDK, FastAPI, uvicorn) is not in `test-ft`: pydantic-core may
# publish no free-threaded wheel.  There the files importing them are left out, and listed.
FREE_THREADED_WITHOUT = ("openai", "fastapi", "uvicorn")
FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))

_left_out: list[str] = []  # "<what> (<why>)" lines for the header and the summary
_deselected: list[str] = []


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("citemark")
    group.addoption(
        "--no-c-extensions",
        action="store_true",
        default=False,
        help="test a pure install: deselect (and list) every case of the compiled kernel",
    )
    group.addoption(
        "--without",
        action="append",
        default=[],
        metavar="MODULE",
        help="an optional dependency absent on purpose: leave out (and list) the test "
        "files that import it",
    )


def pure(config: pytest.Config) -> bool:
    return bool(config.getoption("--no-c-extensions"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}: needs the compiled kernel (deselected by --no-c-extensions)"
    )
    if pure(config):
        # Subprocesses (the CLI, the chooser probes) must take the pure path too.
        os.environ["CITEMARK_IMPLEMENTATION"] = "python"


def _imports(path: Path, module: str) -> bool:
    source = path.read_text(encoding="utf-8")
    return re.search(rf"^\s*(import|from)\s+{re.escape(module)}\b", source, re.M) is not None


def _absent(config: pytest.Config) -> dict[str, str]:
    """The optional modules absent on purpose, each with the reason given for it."""
    absent = {module: f"--without {module}" for module in config.getoption("--without")}
    if FREE_THREADED:
        for module in FREE_THREADED_WITHOUT:
            absent.setdefault(module, "not in test-ft, on a free-threaded interpreter")
    return absent


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    for module, why in _absent(config).items():
        if _imports(collection_path, module):
            _left_out.append(f"{collection_path.name} (imports {module}: {why})")
            return True
    if pure(config) and COMPILED_ONLY.get(collection_path.name, ()) is None:
        _left_out.append(f"{collection_path.name} (imports the compiled kernel)")
        return True
    return None


def needs_kernel(item: pytest.Item) -> bool:
    if item.get_closest_marker(MARKER) is not None:
        return True
    callspec = getattr(item, "callspec", None)
    if callspec is not None and COMPILED_PARAMS & {
        value for value in callspec.params.values() if isinstance(value, str)
    }:
        return True
    listed = COMPILED_ONLY.get(item.path.name)
    return listed is not None and item.originalname in listed  # type: ignore[attr-defined]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not pure(config):
        return
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        (drop if needs_kernel(item) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
        _deselected.extend(item.nodeid for item in drop)


def pytest_report_header(config: pytest.Config) -> list[str]:
    lines = []
    if pure(config):
        lines.append("citemark: --no-c-extensions: the compiled kernel's cases are deselected")
    for module, why in _absent(config).items():
        lines.append(f"citemark: {why}: the files importing {module} are left out")
    return lines


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not (_left_out or _deselected):
        return
    write = terminalreporter.write_line
    terminalreporter.section("citemark: left out on purpose")
    for line in _left_out:
        write(f"left out: {line}")
    if _deselected:
        write(f"deselected {len(_deselected)} compiled-kernel cases (--no-c-extensions), e.g.:")
        for nodeid in _deselected[:10]:
            write(f"  {nodeid}")


@pytest.fixture(
    scope="session",
    params=[
        pytest.param("cython", marks=pytest.mark.c_extension, id="cython"),
        pytest.param("python", id="python"),
    ],
)
def implementation(request: pytest.FixtureRequest) -> Implementation:
    """ "cython" or "python"; the scanner is imported here, so a missing kernel fails."""
    chosen: Implementation = request.param
    load("scan", chosen)
    return chosen


@pytest.fixture(scope="session")
def api(implementation: Implementation) -> DropIn:
    """A `DropIn` over one scanner; the raw scanner module is `api.scanner`."""
    return DropIn(load("scan", implementation))


@pytest.fixture(scope="session")
def parser(implementation: Implementation) -> Parser:
    """A default Parser on one implementation."""
    made = Parser(implementation=implementation)
    assert made.implementation == implementation
    return made
