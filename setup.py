"""Build the compiled kernel; fall back to the pure-Python package where it cannot build.

Users without a compiler still get a working (slower) citemark, with a loud warning.
Wheel builds (CIBUILDWHEEL=1) and CI (CITEMARK_REQUIRE_EXTENSION=1) must never ship the
fallback, so there a failed build is an error.
"""

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

REQUIRE = "1" in (os.environ.get("CIBUILDWHEEL"), os.environ.get("CITEMARK_REQUIRE_EXTENSION"))
PURE = os.environ.get("CITEMARK_NO_EXTENSION") == "1" and not REQUIRE


class OptionalBuildExt(build_ext):
    def run(self):
        try:
            super().run()
        except Exception as error:
            self._fallback(error)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as error:
            self._fallback(error)

    def _fallback(self, error):
        if REQUIRE:
            raise error
        banner = "*" * 72
        print(
            f"\n{banner}\nWARNING: citemark's compiled kernel could not be built ({error}).\n"
            "Installing the pure-Python implementation: same results, slower.\n"
            f"{banner}\n",
            file=sys.stderr,
        )


def extensions():
    if PURE:
        return []
    from Cython.Build import cythonize

    flags = [] if sys.platform == "win32" else ["-O3"]
    kernel = Extension(
        "citemark._scan_c",
        ["src/citemark/_scan_c.pyx"],
        depends=["src/citemark/_simd.h", "src/citemark/_grammar_c.pxi"],
        extra_compile_args=flags,
    )
    # citemark.arrow's compiled path: the scan over Arrow's UTF-8 string buffers.
    arrow = Extension(
        "citemark._arrow_c",
        ["src/citemark/_arrow_c.pyx"],
        depends=["src/citemark/_simd.h", "src/citemark/_grammar_c.pxi"],
        extra_compile_args=flags,
    )
    return cythonize([kernel, arrow], compiler_directives={"language_level": 3}, quiet=True)


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
