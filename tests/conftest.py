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
free-threaded interpreter that has no pyarrow wheel: a test marked `needs(MODULE)` is
deselected, a test file that imports it at its top (dataframes/test_arrow.py,
dataframes/test_dask.py: all of it needs the module) is left out of collection, and the run
lists both.  Without the option a missing pyarrow fails.  A free-threaded interpreter implies
`--without` for the modules of the `server` extra and the Agents SDK (`FREE_THREADED_WITHOUT`),
which its `test-ft` extra does not install.

Tests marked `slow` (leak hunts, megabyte inputs, thread stress, long Hypothesis runs) are
deselected unless `--slow` is given, so that a plain `pytest` stays quick; `.ci/run` runs them.
Hypothesis draws few examples by default (the "dev" profile) and many under
HYPOTHESIS_PROFILE=ci, which `.ci/run` sets.
"""

from __future__ import annotations

import contextlib
import os
import re
import sysconfig
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Any

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
settings.register_profile("dev", deadline=None, max_examples=20)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# On a failure Hypothesis imports libcst (to suggest a patch), and some libcst/mypy_extensions
# pairs warn while importing; under `filterwarnings = error` that turns a plain test failure
# into an INTERNALERROR that hides the report.  Import it once here, warnings silenced.
with warnings.catch_warnings(), contextlib.suppress(ImportError):
    warnings.simplefilter("ignore", DeprecationWarning)
    import libcst  # noqa: F401

MARKER = "c_extension"

TESTS = Path(__file__).parent


def relative(path: Path) -> str:
    """A test file's path under tests/, as COMPILED_ONLY and the report name it."""
    try:
        return path.relative_to(TESTS).as_posix()
    except ValueError:
        return path.name


# Tests in files that predate the marker and reach the compiled modules by name.  TODO(lead):
# once their owners mark them `@pytest.mark.c_extension` (or move them onto the fixture),
# this table goes.  A module listed with None needs the kernel to be imported at all.  Keyed
# by the file's path under tests/.
COMPILED_ONLY: dict[str, frozenset[str] | None] = {
    "kernels/test_simd.py": None,
    "display/test_clean_differential.py": None,
    "dataframes/test_arrow.py": frozenset(
        {
            "test_kernel_rejects_inconsistent_buffers",
            "test_kernel_is_memory_safe_on_invalid_utf8",
            "test_kernel_strip_of_markerless_rows_is_none",
            "test_the_environment_chooses_the_path",
            "test_the_default_path_is_the_compiled_one",
        }
    ),
    "core/test_differential.py": frozenset(
        {"test_kernel_extract_and_strip_are_the_twins", "test_kernel_cut_is_the_twins"}
    ),
    "kernels/test_select.py": frozenset(
        {"test_cython_demands_the_kernel", "test_unset_prefers_the_kernel_on_cpython"}
    ),
}
# Fixture parameters that stand for the compiled path in files with their own fixture
# (test_arrow's `arrow` says "compiled").
COMPILED_PARAMS = frozenset({"cython", "compiled"})

# The `server` extra (the openai SDK, FastAPI, uvicorn) and the Agents SDK are not in
# `test-ft`: pydantic-core may publish no free-threaded wheel.  There the files importing them
# are left out, and listed.
FREE_THREADED_WITHOUT = ("openai", "fastapi", "uvicorn", "agents")
FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))

_left_out: dict[str, None] = {}  # "<what> (<why>)" lines, once each (pytest may ask twice)
_deselected: defaultdict[str, dict[str, None]] = defaultdict(dict)  # why -> node ids
_slow: dict[str, None] = {}  # counted, not listed: every quick run has them


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
        help="an optional dependency absent on purpose: deselect (and list) the tests that need it",
    )
    group.addoption(
        "--slow",
        action="store_true",
        default=False,
        help="also run the tests marked slow (stress, leaks, megabyte inputs); .ci/run does",
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
    if os.environ.get("PYTHONPATH"):
        # `PYTHONPATH=src pytest` runs an uninstalled checkout; subprocesses started in a
        # temporary directory must still find that `src`.
        os.environ["PYTHONPATH"] = os.pathsep.join(
            os.path.abspath(entry) if entry else entry
            for entry in os.environ["PYTHONPATH"].split(os.pathsep)
        )


def _imports(path: Path, module: str) -> bool:
    """Whether the file imports `module` at its top level (an import inside a test is that
    test's own, and the test says so with the `needs` marker)."""
    source = path.read_text(encoding="utf-8")
    return re.search(rf"^(import|from)\s+{re.escape(module)}\b", source, re.M) is not None


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
            _left_out[f"{relative(collection_path)} (imports {module}: {why})"] = None
            return True
    if pure(config) and COMPILED_ONLY.get(relative(collection_path), ()) is None:
        _left_out[f"{relative(collection_path)} (imports the compiled kernel)"] = None
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
    listed = COMPILED_ONLY.get(relative(item.path))
    return listed is not None and item.originalname in listed  # type: ignore[attr-defined]


def missing(item: pytest.Item, config: pytest.Config) -> str | None:
    """The first module the test needs that `--without` declares absent, if any."""
    absent = set(_absent(config))
    for mark in item.iter_markers("needs"):
        for module in mark.args:
            if module in absent:
                return str(module)
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        if not config.getoption("--slow") and item.get_closest_marker("slow") is not None:
            _slow[item.nodeid] = None
        elif (module := missing(item, config)) is not None:
            _deselected[f"needing {module} (--without {module})"][item.nodeid] = None
        elif pure(config) and needs_kernel(item):
            _deselected["compiled-kernel cases (--no-c-extensions)"][item.nodeid] = None
        else:
            keep.append(item)
            continue
        drop.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_report_header(config: pytest.Config) -> list[str]:
    lines = []
    if pure(config):
        lines.append("citemark: --no-c-extensions: the compiled kernel's cases are deselected")
    for module, why in _absent(config).items():
        lines.append(f"citemark: {why}: the tests needing {module} are deselected")
    if not config.getoption("--slow"):
        lines.append("citemark: the tests marked slow are deselected (run them with --slow)")
    return lines


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Under pytest-xdist (`-n`) a worker collects and deselects, and the controller prints
    the summary: each worker sends what it left out (the same lists in every worker)."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["citemark"] = {
            "left_out": list(_left_out),
            "deselected": {why: list(nodeids) for why, nodeids in _deselected.items()},
            "slow": list(_slow),
        }


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: the suite runs without it too
def pytest_testnodedown(node: Any, error: object) -> None:
    sent = getattr(node, "workeroutput", {}).get("citemark")
    if not sent:
        return
    _left_out.update(dict.fromkeys(sent["left_out"]))
    for why, nodeids in sent["deselected"].items():
        _deselected[why].update(dict.fromkeys(nodeids))
    _slow.update(dict.fromkeys(sent["slow"]))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    write = terminalreporter.write_line
    if _slow:
        write(f"citemark: {len(_slow)} slow tests deselected (run them with --slow)")
    if not (_left_out or _deselected):
        return
    terminalreporter.section("citemark: left out on purpose")
    for line in _left_out:
        write(f"left out: {line}")
    for why, nodeids in _deselected.items():
        write(f"deselected {len(nodeids)} {why}, e.g.:")
        for nodeid in list(nodeids)[:10]:
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
