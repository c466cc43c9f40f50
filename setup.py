"""Build the compiled kernel; fall back to the pure-Python package where it cannot build.

Users without a compiler still get a working (slower) citemark: all of it pure, whichever kernels
did build, with a warning here (pip shows it with -v) and a PurePythonWarning when imported.
Wheel builds (CIBUILDWHEEL=1) and CI (CITEMARK_REQUIRE_EXTENSION=1) must never ship the
fallback, so there a failed build is an error.
"""

import os
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

REQUIRE = "1" in (os.environ.get("CIBUILDWHEEL"), os.environ.get("CITEMARK_REQUIRE_EXTENSION"))
PURE = os.environ.get("CITEMARK_NO_EXTENSION") == "1" and not REQUIRE


try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel  # type: ignore[no-redef]

# Kernels that failed to build (or Cython missing): then the wheel is pure, whatever built, as
# the loader takes the compiled kernels only when all of them are there.
FELL_BACK = []


def pure_wheel():
    return PURE or bool(FELL_BACK)


class OptionalBuildExt(build_ext):
    def run(self):
        try:
            super().run()
        except Exception as error:
            self._fallback(error)
        if FELL_BACK:
            # All or nothing: the kernels that did build go too (a wheel holding some would
            # break the calls that need the others).
            for built in self.get_outputs():
                Path(built).unlink(missing_ok=True)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as error:
            self._fallback(error)

    def _fallback(self, error):
        if REQUIRE:
            raise error
        fallback(error)


def fallback(error):
    FELL_BACK.append(error)
    banner = "*" * 72
    # (pip shows this only with -v: citemark warns again when imported, see _kernels/loader)
    print(
        f"\n{banner}\nWARNING: citemark's compiled kernel could not be built ({error}).\n"
        "Installing the pure-Python implementation: same results, slower.\n"
        f"{banner}\n",
        file=sys.stderr,
    )


class Bdist(bdist_wheel):
    """A wheel without a compiled kernel (CITEMARK_NO_EXTENSION=1, or the fallback) is
    py3-none-any, not tagged for one interpreter and platform it does not need."""

    def run(self):
        self.run_command("build")
        if pure_wheel():
            self.root_is_pure = True
            # A build/ left by an earlier compiled build still holds its .so files: a pure
            # wheel must not carry them under a py3-none-any tag.
            build_lib = Path(self.get_finalized_command("build").build_lib)
            for stale in [*build_lib.rglob("*.so"), *build_lib.rglob("*.pyd")]:
                stale.unlink()
        super().run()

    def get_tag(self):
        if pure_wheel():
            return "py3", "none", "any"
        return super().get_tag()


def extensions():
    if PURE:
        return []
    try:
        from Cython.Build import cythonize
    except ImportError as error:  # a build without isolation, in an environment without Cython
        if REQUIRE:
            raise
        fallback(error)
        return []

    flags = [] if sys.platform == "win32" else ["-O3"]
    kernel = Extension(
        "citemark._kernels.scan_c",
        ["src/citemark/_kernels/scan_c.pyx"],
        depends=["src/citemark/_kernels/simd.h", "src/citemark/_kernels/grammar_c.pxi"],
        extra_compile_args=flags,
    )
    # citemark.arrow's compiled path: the scan over Arrow's UTF-8 string buffers.
    arrow = Extension(
        "citemark._kernels.arrow_c",
        ["src/citemark/_kernels/arrow_c.pyx"],
        depends=["src/citemark/_kernels/simd.h", "src/citemark/_kernels/grammar_c.pxi"],
        extra_compile_args=flags,
    )
    # citemark.clean's kernel: every marker character classified and cut in one pass.
    clean = Extension(
        "citemark._kernels.clean_c",
        ["src/citemark/_kernels/clean_c.pyx"],
        depends=[
            "src/citemark/_kernels/simd.h",
            "src/citemark/_kernels/grammar_c.pxi",
            "src/citemark/_kernels/clean_core.pxi",
        ],
        extra_compile_args=flags,
    )
    # citemark's JSONL path: validate a line, find the value at a path and strip, extract
    # or clean it, on bytes, with the shared grammar and clean core.
    jsonl = Extension(
        "citemark._kernels.jsonl_c",
        ["src/citemark/_kernels/jsonl_c.pyx"],
        depends=[
            "src/citemark/_kernels/simd.h",
            "src/citemark/_kernels/grammar_c.pxi",
            "src/citemark/_kernels/clean_core.pxi",
        ],
        extra_compile_args=flags,
    )
    # citemark._markdown.code's hot loops (a paragraph's backtick runs and their pairing, the
    # whole-text code scan) and validate's scans, with the vector searches of _simd.h.
    commonmark = Extension(
        "citemark._kernels.commonmark_c",
        ["src/citemark/_kernels/commonmark_c.pyx"],
        depends=["src/citemark/_kernels/simd.h"],
        extra_compile_args=flags,
    )
    return cythonize(
        [kernel, arrow, clean, jsonl, commonmark],
        compiler_directives={"language_level": 3},
        quiet=True,
    )


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt, "bdist_wheel": Bdist})
