"""pytest glue for the benchmarks (loaded only when benches/ is named on the command line).

* citemark comes from the installed package, or from src/ when none is installed;
* ``pytest benches`` collects the ``bench_*.py`` modules (pytest's own pattern is
  ``test_*.py``; a bench file named explicitly is collected anyway);
* the JSON written by ``--benchmark-json`` gets the CPU model from /proc/cpuinfo, the
  usable cores and whether the compiled kernel was importable, for `report.py`.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

import pytest

from _common import cpu_model, ensure_citemark_importable, load_implementations

ensure_citemark_importable()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    if (
        file_path.suffix == ".py"
        and file_path.name.startswith("bench_")
        and not parent.session.isinitpath(file_path)
    ):
        return pytest.Module.from_parent(parent, path=file_path)  # type: ignore[no-any-return]
    return None


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def pytest_benchmark_update_machine_info(
    config: pytest.Config, machine_info: dict[str, Any]
) -> None:
    kernel = load_implementations()["kernel"]
    machine_info["citemark"] = {
        "cpu_model": cpu_model(),
        "cores": usable_cores(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "kernel": "available" if not isinstance(kernel, str) else kernel,
    }


@pytest.fixture(scope="session")
def impls() -> dict[str, Any]:
    return load_implementations()


@pytest.fixture
def use(impls: dict[str, Any]):
    """`use(name)` -> the implementation, or a skip (with the reason) for a missing kernel."""

    def get(name: str) -> Any:
        impl = impls[name]
        if isinstance(impl, str):
            pytest.skip(impl)
        return impl

    return get
