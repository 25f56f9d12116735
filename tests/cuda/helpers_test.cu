// helpers_test.cu - The scalar helpers of lib/cuda/opd_cuda.cuh on the host.
// SPDX-License-Identifier: Apache-2.0
//
// The helpers are __host__ __device__ and the same source on both sides, so
// checking them on the CPU (no GPU needed; nvcc compiles this file) checks
// the rules the generated kernels follow: wrapping and checked integer
// arithmetic, saturating conversions, IEEE min/max, the Philox words. The
// random numbers are printed for helpers_test.py to compare with
// tests/e2e/reference/philox.py (the CPU backend's reference).
#include "opd_cuda.cuh"

#include <cinttypes>
#include <climits>
#include <cstdio>

extern "C" void opd_rt_fail(const char *message) {
  std::printf("fail: %s\n", message);
}

static int failures = 0;
#define EXPECT(c)                                                              \
  do {                                                                         \
    if (!(c)) {                                                                \
      std::printf("FAIL line %d: %s\n", __LINE__, #c);                         \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

int main() {
  EXPECT(opd::add(INT32_MAX, 1) == INT32_MIN);
  EXPECT(opd::mul(INT64_MAX, int64_t(2)) == -2);
  EXPECT(opd::neg(INT32_MIN) == INT32_MIN);
  EXPECT(opd::iabs(INT32_MIN) == INT32_MIN);
  EXPECT(opd::div(INT32_MIN, -1, "x") == INT32_MIN);
  EXPECT(opd::rem(7, -1, "x") == 0);
  EXPECT(opd::div(-7, 2, "x") == -3 && opd::rem(-7, 2, "x") == -1);
  EXPECT(opd::shl(1, 31, "x") == INT32_MIN);
  EXPECT(opd::shr(-8, 1, "x") == -4);
  EXPECT(opd::f2i<int32_t>(1e10) == INT32_MAX);
  EXPECT(opd::f2i<int32_t>(-1e10) == INT32_MIN);
  EXPECT(opd::f2i<int32_t>(opd::f64_bits(0x7ff8000000000000ull)) == 0);
  EXPECT(opd::f2i<int32_t>(-2147483648.9) == INT32_MIN);
  EXPECT(opd::f2i<int32_t>(2147483647.9) == INT32_MAX);
  EXPECT(opd::f2i<int64_t>(-3.7) == -3);
  EXPECT(opd::f2i<int32_t>(3e9f) == INT32_MAX);
  double nan = opd::f64_bits(0x7ff8000000000000ull);
  EXPECT(opd::is_nan(opd::vmin(1.0, nan)) && opd::is_nan(opd::vmax(nan, 1.0)));
  EXPECT(std::signbit(opd::vmin(0.0, -0.0)) && std::signbit(opd::vmin(-0.0, 0.0)));
  EXPECT(!std::signbit(opd::vmax(0.0, -0.0)) && !std::signbit(opd::vmax(-0.0, 0.0)));
  EXPECT(opd::vmin(3, -2) == -2 && opd::vmax(3, -2) == 3);
  EXPECT(!opd::is_finite(opd::f64_bits(0x7ff0000000000000ull)) &&
         !opd::is_finite(nan) && opd::is_finite(1e308));
  EXPECT(opd::at(3, 4, "x") == 3);
  // The increment identity: -0.0 + f is f for every f, -0.0 - f is -f.
  EXPECT(std::signbit(-0.0 + -0.0) && !std::signbit(-0.0 + 0.0));
  // Random numbers: seed, coordinates, n, then uniform and normal.
  const int64_t seeds[] = {0, 12345, -1};
  for (int64_t seed : seeds)
    for (int64_t e = 0; e < 3; ++e)
      for (int64_t n = 0; n < 3; ++n) {
        std::printf("rng %" PRId64 " 1 %" PRId64 " 0 0 %" PRId64 " %.17g %.17g\n",
                    seed, e, n, opd::rng(false, seed, n, 1, e, 0, 0),
                    opd::rng(true, seed, n, 1, e, 0, 0));
        std::printf("rng %" PRId64 " 3 %" PRId64 " 7 2 %" PRId64 " %.17g %.17g\n",
                    seed, e, n, opd::rng(false, seed, n, 3, e, 7, 2),
                    opd::rng(true, seed, n, 3, e, 7, 2));
      }
  std::printf("%d failures\n", failures);
  return failures ? 1 : 0;
}
