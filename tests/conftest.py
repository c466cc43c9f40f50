"""One fixture runs every behavioural test on the compiled kernel and on the Python twin.

The kernel is imported directly: when it is missing or broken, the `cython` cases fail
(with the ImportError), they never skip.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import warnings

import pytest
from hypothesis import HealthCheck, settings

from citemark import Parser
from citemark._dropin import DropIn

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

SCANNERS = {"cython": "citemark._scan_c", "python": "citemark._scan_py"}


@pytest.fixture(scope="session", params=sorted(SCANNERS), ids=sorted(SCANNERS))
def api(request: pytest.FixtureRequest) -> DropIn:
    """A `DropIn` over one scanner; the raw scanner module is `api.scanner`."""
    return DropIn(importlib.import_module(SCANNERS[request.param]))


@pytest.fixture(scope="session", params=sorted(SCANNERS), ids=sorted(SCANNERS))
def implementation(request: pytest.FixtureRequest) -> str:
    """ "cython" or "python"; the scanner is imported here, so a missing kernel fails."""
    importlib.import_module(SCANNERS[request.param])
    return str(request.param)


@pytest.fixture(scope="session")
def parser(implementation: str) -> Parser:
    """A default Parser on one implementation."""
    made = Parser(implementation=implementation)  # type: ignore[arg-type]
    assert made.implementation == implementation
    return made
