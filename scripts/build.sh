#!/usr/bin/env bash
# build.sh - Configure and build opdc in ./build (installs dependencies first).
# Usage: scripts/build.sh [extra cmake -D options]
# With ccache installed (setup-deps installs it) every compile goes through
# it, so a second build of the same sources, in any folder, is mostly hits.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup-deps.sh"
jobs=$(nproc 2>/dev/null || echo 2)
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Paths relative to the checkout and the build folder left out of the
  # hash: a fresh clone elsewhere on the machine hits the same entries.
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
fi
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "${launcher[@]}" "$@" >/dev/null
cmake --build "$root/build" -j "$jobs"
