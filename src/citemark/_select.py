"""Choose the scanner: the compiled kernel when it loads, else the pure-Python twin.

CITEMARK_IMPLEMENTATION=python forces the twin; =cython demands the kernel and lets its
ImportError through.  This is the only module that knows there are two.
"""

from __future__ import annotations

import os
import platform

_choice = os.environ.get("CITEMARK_IMPLEMENTATION", "").strip().lower()
if _choice not in ("", "cython", "python"):
    raise ImportError(f"CITEMARK_IMPLEMENTATION must be 'cython' or 'python', not {_choice!r}")

if _choice == "python" or (not _choice and platform.python_implementation() != "CPython"):
    from . import _scan_py as scanner
elif _choice == "cython":
    from . import _scan_c as scanner  # type: ignore[no-redef]
else:
    try:
        from . import _scan_c as scanner  # type: ignore[no-redef]
    except ImportError:
        from . import _scan_py as scanner  # type: ignore[no-redef]

IMPLEMENTATION: str = "cython" if scanner.__name__.endswith("_scan_c") else "python"
