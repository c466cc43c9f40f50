"""Choose every compiled/pure pair: the scanner (`_scan`), the Arrow kernel (`_arrow`), clean's
scan (`_clean`), the JSONL walker (`_jsonl`) and the Markdown code scan (`_commonmark`), each
`<pair>_c` or `<pair>_py`.  This is the only module that knows there are two implementations.

CITEMARK_IMPLEMENTATION=python forces the pure modules; =cython demands the compiled ones (an
ImportError that says how to build them when they are missing); unset picks the compiled ones
when the scanner loads.  Non-CPython interpreters get the pure modules.
"""

from __future__ import annotations

import os
import sys
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Literal, cast

if TYPE_CHECKING:
    # Type checkers see the twin: this proves that `_scan_py` satisfies `Scanner` (the
    # compiled module is checked against the same names at run time, in test_select).
    from . import _scan_py
    from ._types import Scanner

    _twin: Scanner = _scan_py

Implementation = Literal["cython", "python"]

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


# What `_simd.h` accepts in CITEMARK_SIMD (a cap on the kernel's vector path); it would
# ignore anything else without a word, so the value is checked here, once.
SIMD_CAPS = ("portable", "sse2", "neon", "avx2")


def _check_simd() -> None:
    cap = os.environ.get("CITEMARK_SIMD")
    if cap is not None and cap not in SIMD_CAPS:
        raise ImportError(
            f"CITEMARK_SIMD must be one of {', '.join(SIMD_CAPS)} (or unset), not {cap!r}"
        )


def load(pair: str, implementation: Implementation) -> ModuleType:
    """`citemark.<pair>_c` or `citemark.<pair>_py`; a missing compiled module says what to do."""
    if implementation not in _SUFFIX:
        raise ValueError(
            f"implementation must be 'cython', 'python' or None, not {implementation!r}"
        )
    name = f"citemark.{pair}{_SUFFIX[implementation]}"
    try:
        return import_module(name)
    except ImportError as error:
        if implementation != "cython" or error.name not in (name, None):
            raise
        raise ImportError(
            f"{name} (the compiled kernel) is not built in this install: reinstall citemark "
            "with a C compiler (`pip install --force-reinstall --no-binary citemark citemark` "
            "or `pip install .` from a checkout), or set CITEMARK_IMPLEMENTATION=python",
            name=name,
        ) from error


def _choose() -> Implementation:
    _check_simd()
    requested = _requested()
    if requested is not None:
        load("_scan", requested)
        return requested
    try:
        load("_scan", "cython")
    except ImportError:
        return "python"
    return "cython"


IMPLEMENTATION: Implementation = _choose()
"""The implementation every default object uses: "cython" or "python"."""

scanner: Scanner = cast("Scanner", load("_scan", IMPLEMENTATION))


def scanner_for(implementation: Implementation | None) -> Scanner:
    """The scanner of `implementation` (None: the active one)."""
    chosen = IMPLEMENTATION if implementation is None else implementation
    return cast("Scanner", load("_scan", chosen))


def arrow_kernel(implementation: Implementation | None = None) -> ModuleType:
    """The Arrow kernel of `implementation` (None: the active one).  Imported on first use:
    pyarrow is an optional dependency."""
    return load("_arrow", IMPLEMENTATION if implementation is None else implementation)
