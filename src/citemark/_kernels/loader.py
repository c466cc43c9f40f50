"""The one loader of every compiled/pure kernel pair: the scanner (`scan`), the Arrow kernel
(`arrow`), clean's scan (`clean`), the JSONL walker (`jsonl`) and the Markdown code scan
(`commonmark`), each `<pair>_c` or `<pair>_py` in this package.  This is the only module that
knows there are two implementations.

CITEMARK_IMPLEMENTATION=python forces the pure modules; =cython demands the compiled ones (an
ImportError that says how to build them when they are missing); unset picks the compiled ones
when all of them are in the install and the scanner loads, else the pure ones with a
`PurePythonWarning` (an install whose compiler was missing, or failed on one kernel).
Non-CPython interpreters get the pure modules.
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
from importlib import import_module
from importlib.util import find_spec
from types import ModuleType
from typing import TYPE_CHECKING, Literal, cast

if TYPE_CHECKING:
    # Type checkers see the twin: this proves that `scan_py` satisfies `Scanner` (the compiled
    # module is checked against the same names at run time, in tests/kernels/test_select.py).
    from .._core.protocols import Scanner
    from . import scan_py

    _twin: Scanner = scan_py

Implementation = Literal["cython", "python"]

REINSTALL = (
    "reinstall citemark with a C compiler (from its source: `pip install --force-reinstall "
    "--no-cache-dir .` in a checkout), or set CITEMARK_IMPLEMENTATION=python to choose the "
    "pure-Python twin"
)
UNBUILT = (
    "the compiled kernels are not built in this install: citemark runs its pure-Python twin, "
    f"which gives the same results 10-20x slower; {REINSTALL}"
)


class PurePythonWarning(RuntimeWarning):
    """citemark runs its pure-Python twin because its compiled kernels are not built."""


# implementation -> module suffix of each pair
_SUFFIX: dict[Implementation, str] = {"cython": "_c", "python": "_py"}


def _requested() -> Implementation | None:
    choice = os.environ.get("CITEMARK_IMPLEMENTATION", "").strip().lower()
    if choice not in ("", "cython", "python"):
        raise ImportError(
            f"CITEMARK_IMPLEMENTATION must be 'cython' or 'python' (or unset), not {choice!r}"
        )
    if not choice and sys.implementation.name != "cpython":
        return "python"
    return choice or None  # type: ignore[return-value]


# What `simd.h` accepts in CITEMARK_SIMD (a cap on the kernel's vector path); it would
# ignore anything else without a word, so the value is checked here, once.
SIMD_CAPS = ("portable", "sse2", "neon", "avx2")


def _check_simd() -> None:
    cap = os.environ.get("CITEMARK_SIMD")
    if cap is not None and cap not in SIMD_CAPS:
        raise ImportError(
            f"CITEMARK_SIMD must be one of {', '.join(SIMD_CAPS)} (or unset), not {cap!r}"
        )


Pair = Literal["scan", "arrow", "clean", "jsonl", "commonmark"]
PAIRS: tuple[Pair, ...] = ("scan", "arrow", "clean", "jsonl", "commonmark")
_LOADED: dict[tuple[str, Implementation], ModuleType] = {}


def _import(pair: str, implementation: Implementation) -> ModuleType:
    """`citemark._kernels.<pair>_c` or `..._py`, imported once; a missing compiled module says
    what to do."""
    found = _LOADED.get((pair, implementation))
    if found is not None:
        return found
    if pair not in PAIRS:
        raise ValueError(f"pair must be one of {', '.join(PAIRS)}, not {pair!r}")
    if implementation not in _SUFFIX:
        raise ValueError(
            f"implementation must be 'cython', 'python' or None, not {implementation!r}"
        )
    name = f"{__package__}.{pair}{_SUFFIX[implementation]}"
    try:
        found = _LOADED[pair, implementation] = import_module(name)
    except ImportError as error:
        if implementation != "cython" or error.name not in (name, None):
            raise
        raise ImportError(
            f"{name} (the compiled kernel) is not built in this install: {REINSTALL}", name=name
        ) from error
    return found


def _choose(requested: Implementation | None) -> Implementation:
    _check_simd()
    if requested is not None:
        _import("scan", requested)
        return requested
    # Every compiled kernel, or none: a build that failed on one would otherwise break
    # the calls that need it.
    if all(find_spec(f"{__package__}.{pair}{_SUFFIX['cython']}") for pair in PAIRS):
        try:
            _import("scan", "cython")
        except ImportError:
            pass
        else:
            return "cython"
    warnings.warn(f"citemark: {UNBUILT}", PurePythonWarning, stacklevel=2)
    return "python"


REQUESTED: Implementation | None = _requested()
"""The implementation CITEMARK_IMPLEMENTATION asks for, or None (the compiled one if built)."""
IMPLEMENTATION: Implementation = _choose(REQUESTED)
"""The implementation every default object uses: "cython" or "python"."""


# What `load` gives, by implementation then pair, in tuples.  `load` runs once per call of
# clean and the streams, and on a free-threaded CPython 3.13 a dict read of an object that
# another thread made takes the dict's lock whenever that object's shared reference count is
# back to 0 (its lock-free read cannot take a reference then), so threads calling `load`
# queue on that lock.  Reading a tuple's item is a plain reference, and these dicts hold only
# immortal ints (the figures are in docs/performance.md).
_ROW: dict[str, int] = {implementation: row for row, implementation in enumerate(_SUFFIX)}
_COLUMN: dict[str, int] = {pair: column for column, pair in enumerate(PAIRS)}
_MODULES: tuple[tuple[ModuleType | None, ...], ...] = ((None,) * len(PAIRS),) * len(_SUFFIX)
_REMEMBER = threading.Lock()


def load(pair: Pair, implementation: Implementation | None = None) -> ModuleType:
    """The kernel `pair` of `implementation` (None: the active one).  The twin `<pair>_py` is
    what type checkers see: callers import it under TYPE_CHECKING for its signatures."""
    chosen = IMPLEMENTATION if implementation is None else implementation
    try:
        # (Subscripts in a try, not .get and type checks: every clean() and stream comes here.)
        row, column = _ROW[chosen], _COLUMN[pair]
    except (KeyError, TypeError):  # (an unhashable name): _import says what is wrong
        return _import(pair, chosen)
    known = _MODULES[row][column]
    if known is not None:
        return known
    found = _import(pair, chosen)  # imports once
    _remember(row, column, found)
    return found


def _remember(row: int, column: int, module: ModuleType) -> None:
    """Put `module` in `_MODULES`: a new tuple, so a reader sees the old one or the new."""
    global _MODULES
    with _REMEMBER:
        rows = list(_MODULES)
        cells = list(rows[row])
        cells[column] = module
        rows[row] = tuple(cells)
        _MODULES = tuple(rows)


def compiled(kernel: ModuleType) -> bool:
    """Whether `kernel` (a module `load` gave) is the compiled one of its pair."""
    return kernel.__name__.endswith(_SUFFIX["cython"])


scanner: Scanner = cast("Scanner", load("scan"))


def scanner_for(implementation: Implementation | None) -> Scanner:
    """The scanner of `implementation` (None: the active one)."""
    return cast("Scanner", load("scan", implementation))
