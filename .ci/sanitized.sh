#!/usr/bin/env bash
# The compiled kernels under AddressSanitizer + UndefinedBehaviorSanitizer, next to (never in)
# the normal install.
#   bash .ci/sanitized.sh build DIR        build every kernel instrumented into DIR/lib
#   bash .ci/sanitized.sh run DIR CMD...   run CMD (a python command) against that build
# `build` compiles with gcc in a build venv of its own (setuptools and Cython only) and a build
# directory under DIR, so neither ./build nor the calling venv's citemark is touched.  `run`
# puts DIR/lib first on PYTHONPATH, preloads gcc's ASan runtime into the uninstrumented
# interpreter and exits with CMD's status: any ASan or UBSan report ends CMD with status 1.
# The python that runs CMD must be the one `build` was given (same ABI): $PYTHON, else python.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: $0 build DIR | $0 run DIR CMD..." >&2
  exit 2
}
(($# >= 2)) && [[ -n $2 ]] || usage
mode=$1
out=$2
shift 2
python=${PYTHON:-python}

# run's environment.  detect_leaks=0: the interpreter frees little at exit and LeakSanitizer
# would report all of it.  allocator_may_return_null=1: a huge request fails as MemoryError,
# as it does without ASan, instead of aborting.  PYTHONMALLOC=malloc and the system Arrow pool
# put every Python and Arrow buffer under ASan's bounds (pymalloc's and jemalloc's arenas hide
# overreads).  UBSan halts anyway (-fno-sanitize-recover); the stack says where.
sanitized() {
  local runtime cxx
  runtime=$(gcc -print-file-name=libasan.so)
  [[ -f $runtime ]] || { echo "sanitized: gcc has no libasan.so ($runtime)" >&2; exit 1; }
  # libstdc++ preloaded as well: ASan resolves the real __cxa_throw when it starts, and without
  # it any C++ exception (pyarrow's, on a file that is not Parquet) aborts in the interceptor.
  cxx=$(gcc -print-file-name=libstdc++.so)
  PYTHONPATH="$out/lib${PYTHONPATH:+:$PYTHONPATH}" \
    LD_PRELOAD="$runtime:$cxx${LD_PRELOAD:+:$LD_PRELOAD}" \
    ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:halt_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}" \
    PYTHONMALLOC=malloc ARROW_DEFAULT_MEMORY_POOL=system \
    "$@"
}

case $mode in
  build)
    (($# == 0)) || usage
    mkdir -p "$out"
    out=$(cd "$out" && pwd)
    if [[ ! -x $out/venv-build/bin/python ]]; then
      "$python" -m venv "$out/venv-build"
      "$out/venv-build/bin/python" -m pip install -q "setuptools>=77" "Cython>=3.1"
    fi
    rm -rf "${out:?}/lib" "${out:?}/build"
    # setup.py puts -O3 last on each command line; this wrapper puts -O1 after it, which
    # halves the instrumented compile and is the level ASan's documentation advises.
    # shellcheck disable=SC2016  # $@ is the wrapper's own
    printf '#!/bin/sh\nexec gcc "$@" -O1\n' >"$out/gcc-O1"
    chmod +x "$out/gcc-O1"
    # --force: never reuse an object file an earlier (uninstrumented) build left.
    CC="$out/gcc-O1" LDSHARED="$out/gcc-O1 -pthread -shared" \
      CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g" \
      LDFLAGS="-fsanitize=address,undefined" CITEMARK_REQUIRE_EXTENSION=1 \
      "$out/venv-build/bin/python" setup.py -q build --force --parallel 2 --build-base "$out/build" \
      --build-lib "$out/lib" >"$out/build.log" 2>&1 \
      || { cat "$out/build.log" >&2; echo "sanitized: the build failed" >&2; exit 1; }
    # The proof that what `run` imports is this build: each kernel from DIR/lib, instrumented.
    sanitized "$python" - "$out/lib" <<'PY'
import sys
from pathlib import Path

from citemark._kernels.loader import PAIRS, load

lib = Path(sys.argv[1]).resolve()
for pair in PAIRS:
    path = Path(load(pair, "cython").__file__).resolve()
    assert path.is_relative_to(lib), f"{pair}: {path} is not the sanitized build in {lib}"
    binary = path.read_bytes()
    assert b"__asan_report" in binary and b"__ubsan_handle" in binary, f"{path}: not instrumented"
    print("sanitized kernel:", path)
PY
    ;;
  run)
    (($# >= 1)) || usage
    [[ -d $out/lib/citemark ]] || { echo "sanitized: no build in $out (run: $0 build $out)" >&2; exit 1; }
    out=$(cd "$out" && pwd)
    sanitized "$@"
    ;;
  *) usage ;;
esac
