#!/usr/bin/env bash
# test.sh - Set up, build and run the tests, as CI does (.ci/run):
#   1. setup and build (warnings as errors, ccache when installed)
#   2. the changed lines' formatting (scripts/check-format.sh)
#   3. CTest in ./build, every label but `long`
#   4. the sanitizer job: compiler and runtime under AddressSanitizer + UBSan
#      in ./build-asan, the robustness, unit, lit and runtime suites there
# Each stage prints its duration, and the whole run its total.
#
# usage: scripts/test.sh [--long]
# --long (or OPDC_TEST_LONG=1) runs the `long` label too: the full matrix
# of the emulated CUDA runs (every example, both strategies, 1/2/4 ranks),
# the full-size e2e runs. CI runs without it; each feature the long tests
# exercise has a short test in the default set.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)
long=${OPDC_TEST_LONG:-0}
[[ ${1:-} == --long ]] && long=1
exclude=(-LE long)
((long)) && exclude=()
start=$SECONDS
stage() {
  local name=$1 t=$SECONDS
  shift
  echo "== $name"
  "$@"
  echo "== $name: $((SECONDS - t)) s (total $((SECONDS - start)) s)"
}

stage "build" "$root/scripts/build.sh" -DOPDC_WERROR=ON
stage "format of changed lines" "$root/scripts/check-format.sh"
run_ctest() { (cd "$root/build" && ctest -j "$jobs" --output-on-failure --timeout 1500 "${exclude[@]}"); }
stage "ctest${exclude:+ (all but long)}" run_ctest

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
fi
asan_build() {
  cmake -S "$root" -B "$root/build-asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DOPDC_SANITIZE=ON "${launcher[@]}" >/dev/null
  cmake --build "$root/build-asan" -j "$jobs" --target opdc opd_rt opdc_frontend_fuzz opdc_unit_tests opd_rt_tests
}
stage "sanitizer build (ASan+UBSan)" asan_build
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
asan_ctest() {
  (cd "$root/build-asan" &&
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
      ctest -j "$jobs" --output-on-failure --timeout 1500 -L "fuzz|lit|unit" \
        -LE long -E "^fuzz-diff")
  # fuzz-diff (the differential driver: dozens of builds and runs a seed)
  # runs in ./build only: under the sanitizers it would take most of CI.
  # The runtime's death tests leave their allocations behind on purpose (the
  # process exits with status 1): no LeakSanitizer for them.
  (cd "$root/build-asan" &&
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
      ctest -j "$jobs" --output-on-failure --timeout 1500 -L runtime)
}
stage "sanitizer ctest" asan_ctest
echo "== test.sh: passed in $((SECONDS - start)) s"
