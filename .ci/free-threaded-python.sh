#!/usr/bin/env bash
# Print the path of a free-threaded CPython 3.13 (built with --disable-gil), building it first
# when it is not there yet.  The build comes from Debian's python3.13 source package, fetched from
# the machine's own Debian mirror without touching the system's apt configuration, and is kept
# under $CITEMARK_FT_PREFIX (default /opt/python3.13t): the first call takes about 8 minutes on
# 2 cores, later calls return at once.  Build output goes to stderr; stdout is the path only.
#   usage: py=$(bash .ci/free-threaded-python.sh) && "$py" -m venv /tmp/venv-ft
set -euo pipefail
prefix=${CITEMARK_FT_PREFIX:-/opt/python3.13t}
python=$prefix/bin/python3.13t

gil_free() { "$python" -c 'import sys; sys.exit(sys._is_gil_enabled())' 2>/dev/null; }
if [[ -x $python ]] && gil_free; then
  echo "$python"
  exit 0
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# The mirror this machine already uses (deb822 sources first, then the one-line format).
mirror=$(awk '/^URIs:/ {print $2}' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -m1 '/debian/\?$' || true)
if [[ -z $mirror ]]; then
  mirror=$(awk '/^deb / {print $2}' /etc/apt/sources.list 2>/dev/null | grep -m1 '/debian/\?$' || true)
fi
[[ -n $mirror ]] || { echo "free-threaded-python: no Debian mirror in the apt sources" >&2; exit 1; }
# python3.13 is in trixie, whatever release the machine runs.
suite=trixie

mkdir -p "$scratch/lists/partial"
echo "deb-src $mirror $suite main" >"$scratch/sources.list"
apt=(-q -o "Dir::Etc::SourceList=$scratch/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$scratch/lists")
apt-get "${apt[@]}" update >&2
(cd "$scratch" && apt-get "${apt[@]}" source --download-only python3.13 >&2)
tar -C "$scratch" -xf "$scratch"/python3.13_*.orig.tar.xz
source_dir=$(ls -d "$scratch"/Python-3.13*)
if ! (cd "$source_dir" && ./configure --disable-gil --prefix="$prefix" >"$scratch/configure.log" 2>&1 \
  && make -j"$(nproc)" >"$scratch/make.log" 2>&1 && make install >"$scratch/install.log" 2>&1); then
  tail -30 "$scratch"/*.log >&2
  exit 1
fi
"$python" -c 'import sys, ssl, zlib, ctypes; assert not sys._is_gil_enabled()' >&2
echo "$python"
