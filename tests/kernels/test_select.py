"""CITEMARK_IMPLEMENTATION picks the scanner, in a fresh interpreter each time.

`=cython` demands the compiled kernel: without a build this test fails, it never skips.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import citemark

# Where the running tests found citemark (src/ or site-packages), for the child too.
PACKAGE_ROOT = str(Path(citemark.__file__).resolve().parent.parent)

PROBE = """
try:
    import citemark
except ImportError as error:
    print("ImportError:", error)
else:
    print(citemark.IMPLEMENTATION, citemark.extract_citations.__self__.scanner.__name__)
"""


def run_probe(choice: str | None) -> str:
    env = dict(os.environ)
    env.pop("CITEMARK_IMPLEMENTATION", None)
    if choice is not None:
        env["CITEMARK_IMPLEMENTATION"] = choice
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PACKAGE_ROOT, env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_python_forces_the_twin() -> None:
    assert run_probe("python") == "python citemark._kernels.scan_py"


def test_cython_demands_the_kernel() -> None:
    assert run_probe("cython") == "cython citemark._kernels.scan_c"


def test_unset_prefers_the_kernel_on_cpython() -> None:
    assert run_probe(None) == "cython citemark._kernels.scan_c"


UNBUILT_PROBE = """
import warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import citemark
print(citemark.IMPLEMENTATION, [w.category.__name__ for w in caught])
print(citemark.clean("a \\ue200cite\\ue202turn0search0\\ue201 b"))
"""


@pytest.mark.parametrize("choice", [None, "python"])
def test_an_install_missing_one_kernel_runs_the_twin_and_says_so(
    tmp_path: Path, choice: str | None
) -> None:
    """A build that failed on one kernel (clean_c here) must not leave `clean` broken behind
    IMPLEMENTATION == "cython": the twin runs, with a PurePythonWarning unless asked for."""
    shutil.copytree(
        Path(PACKAGE_ROOT) / "citemark",
        tmp_path / "citemark",
        ignore=shutil.ignore_patterns("clean_c.*.so", "clean_c.*.pyd", "*.c", "__pycache__"),
    )
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    env.pop("CITEMARK_IMPLEMENTATION", None)
    if choice is not None:
        env["CITEMARK_IMPLEMENTATION"] = choice
    done = subprocess.run(
        [sys.executable, "-c", UNBUILT_PROBE], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    warned = ["PurePythonWarning"] if choice is None else []
    assert done.stdout.splitlines() == [f"python {warned}", "a b"]


@pytest.mark.parametrize("choice", ["rust", "pure", "c", "1"])
def test_an_unknown_choice_fails_the_import(choice) -> None:
    assert run_probe(choice).startswith("ImportError:")


@pytest.mark.parametrize("implementation", ["cython", "python"])
def test_both_scanners_are_scanners(implementation) -> None:
    from citemark._core.protocols import Scanner
    from citemark._kernels.loader import scanner_for

    module = scanner_for(implementation)
    assert isinstance(module, Scanner)
    for name in (
        "Grammar",
        "extract",
        "strip",
        "spans",
        "records",
        "cut",
        "undecided_from",
        "StreamFront",
    ):
        assert callable(getattr(module, name)), name


def test_load_gives_each_pair_once_from_any_thread() -> None:
    """`load`'s cache (tuples, read without a lock) gives the module `import` gives, the same
    one in every thread, and still rejects names it does not know."""
    import importlib
    import threading

    from citemark._kernels.loader import IMPLEMENTATION, PAIRS, load

    expected = {}
    for pair in PAIRS:
        for chosen, suffix in (("cython", "c"), ("python", "py")):
            try:
                expected[pair, chosen] = importlib.import_module(
                    f"citemark._kernels.{pair}_{suffix}"
                )
            except ImportError:  # a pure install: the compiled ones are not there
                assert chosen != IMPLEMENTATION
    seen: list[bool] = []

    def check() -> None:
        seen.append(
            all(load(pair, chosen) is module for (pair, chosen), module in expected.items())
            and all(load(pair) is expected[pair, IMPLEMENTATION] for pair in PAIRS)
        )

    threads = [threading.Thread(target=check) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    check()
    assert seen == [True] * 5
    with pytest.raises(ValueError, match="pair must be one of"):
        load("regex")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="implementation must be"):
        load("scan", "rust")  # type: ignore[arg-type]


@given(
    text=st.text(alphabet="cite\ue202\ue200_-x9 ", max_size=12),
    families=st.lists(st.sampled_from(["cite", "c", "ci_te", "x-y", ""]), max_size=3),
    any_family=st.booleans(),
)
def test_the_grammar_head_rule_is_the_twins(
    text: str, families: list[str], any_family: bool
) -> None:
    from citemark._core.grammar import CITATION_DELIMITER as D
    from citemark._core.grammar import CITATION_START as S
    from citemark._core.grammar import CITATION_STOP as E
    from citemark._core.grammar import heads_at
    from citemark._kernels import scan_py as _scan_py

    grammar = _scan_py.Grammar(tuple(families), S, D, E, any_family)
    for i in range(len(text) + 1):
        assert heads_at(text, i, tuple(families), D, any_family) == list(
            _scan_py.heads_at(text, i, grammar)
        )
