#!/usr/bin/env bash
# test.sh - Set up, build and run every test: CTest in ./build, then the
# front end's robustness test, the unit and lit suites again under
# AddressSanitizer + UBSan in ./build-asan (a job of its own).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)
"$root/scripts/build.sh" -DOPDC_WERROR=ON
(cd "$root/build" && ctest -j "$jobs" --output-on-failure --timeout 1500)

echo "== sanitizer job: compiler and runtime under ASan+UBSan"
cmake -S "$root" -B "$root/build-asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DOPDC_SANITIZE=ON >/dev/null
cmake --build "$root/build-asan" -j "$jobs" --target opdc opd_rt opdc_frontend_fuzz opdc_unit_tests opd_rt_tests
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd "$root/build-asan" &&
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    ctest -j "$jobs" --output-on-failure --timeout 1500 -L "fuzz|lit|unit")
# The runtime's death tests leave their allocations behind on purpose (the
# process exits with status 1): no LeakSanitizer for them.
(cd "$root/build-asan" &&
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
    ctest -j "$jobs" --output-on-failure --timeout 1500 -L runtime)
