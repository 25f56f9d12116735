// ReproSumTest.cpp - Exact float sums (-frepro-sum, exec/ReproSum.cpp):
// correctly rounded results (cancellation, ties to even, subnormals,
// overflow, infinities and NaN, f32), and the same bits for any order of
// the contributions and any split into chunks.
// SPDX-License-Identifier: Apache-2.0
#include "opd_rt.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

/// v0 plus every value, each value its own chunk-less contribution, the
/// values split into `chunks` chunks in the given order.
double exactSum(double v0, const std::vector<double> &values, int chunks = 1) {
  std::vector<int64_t> partials(std::size_t(chunks) * OPD_XSUM_WORDS, 0);
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::size_t c = i * std::size_t(chunks) / std::max<std::size_t>(values.size(), 1);
    opd_xsum_add_f64(partials.data() + c * OPD_XSUM_WORDS, &values[i], 1);
  }
  double v = v0;
  opd_reduce_sum_exact(&v, OPD_F64, 1, partials.data(), chunks);
  return v;
}

float exactSumF(float v0, const std::vector<float> &values) {
  std::vector<int64_t> partials(OPD_XSUM_WORDS, 0);
  for (float x : values)
    opd_xsum_add_f32(partials.data(), &x, 1);
  float v = v0;
  opd_reduce_sum_exact(&v, OPD_F32, 1, partials.data(), 1);
  return v;
}

uint64_t bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

TEST(ReproSum, Cancellation) {
  EXPECT_EQ(exactSum(0.0, {1e300, 1.0, -1e300, 1e-300}), 1.0);
  EXPECT_EQ(exactSum(0.0, {1e308, 1e308, -1e308}), 1e308); // no overflow
  EXPECT_EQ(exactSum(1.0, {1e-30, -1.0}), 1e-30);
  // Ten 0.1s: the plain sum gives 0.9999999999999999, the exact value
  // 1.000000000000000055... rounds to 1.
  EXPECT_EQ(exactSum(0.0, std::vector<double>(10, 0.1)), 1.0);
}

TEST(ReproSum, TiesToEven) {
  const double half = std::ldexp(1.0, -53); // half an ulp of 1
  EXPECT_EQ(exactSum(1.0, {half}), 1.0);
  EXPECT_EQ(exactSum(1.0, {half, std::ldexp(1.0, -1000)}),
            1.0 + std::ldexp(1.0, -52));
  const double odd = 1.0 + std::ldexp(1.0, -52);
  EXPECT_EQ(exactSum(odd, {half}), 1.0 + std::ldexp(1.0, -51));
  EXPECT_EQ(exactSum(-1.0, {-half}), -1.0);
}

TEST(ReproSum, Subnormals) {
  const double tiny = std::numeric_limits<double>::denorm_min();
  EXPECT_EQ(exactSum(0.0, {tiny, tiny}), 2 * tiny);
  EXPECT_EQ(exactSum(0.0, {tiny, -tiny}), 0.0);
  EXPECT_EQ(exactSum(0.0, {DBL_MIN, -tiny}), DBL_MIN - tiny);
  EXPECT_EQ(exactSum(0.0, {-DBL_MIN, DBL_MIN / 2}), -DBL_MIN / 2);
}

TEST(ReproSum, SpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(exactSum(0.0, {DBL_MAX, DBL_MAX}), inf);
  EXPECT_EQ(exactSum(0.0, {-DBL_MAX, -DBL_MAX}), -inf);
  EXPECT_EQ(exactSum(0.0, {DBL_MAX, DBL_MAX, -DBL_MAX}), DBL_MAX);
  EXPECT_EQ(exactSum(1.0, {inf, 2.0}), inf);
  EXPECT_EQ(exactSum(1.0, {-inf}), -inf);
  EXPECT_TRUE(std::isnan(exactSum(0.0, {inf, -inf})));
  EXPECT_TRUE(std::isnan(exactSum(0.0, {1.0, std::nan("")})));
  EXPECT_TRUE(std::isnan(exactSum(std::nan(""), {1.0})));
}

TEST(ReproSum, Float) {
  const float half = std::ldexp(1.0f, -24);
  EXPECT_EQ(exactSumF(0.0f, {1.0f, half}), 1.0f);
  EXPECT_EQ(exactSumF(0.0f, {1.0f, half, std::ldexp(1.0f, -60)}),
            std::nextafter(1.0f, 2.0f));
  EXPECT_EQ(exactSumF(0.0f, {FLT_MAX, FLT_MAX}),
            std::numeric_limits<float>::infinity());
  const float tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(exactSumF(0.0f, {tiny, tiny, tiny}), 3 * tiny);
  EXPECT_EQ(exactSumF(0.0f, std::vector<float>(10, 0.1f)), 1.0f);
}

TEST(ReproSum, OrderAndChunksDoNotMatter) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> mant(-1.0, 1.0);
  std::uniform_int_distribution<int> expo(-300, 300);
  std::vector<double> v(20000);
  for (double &x : v)
    x = std::ldexp(mant(rng), expo(rng));
  const uint64_t ref = bits(exactSum(0.25, v, 1));
  for (int chunks : {2, 3, 7, 64}) {
    std::shuffle(v.begin(), v.end(), rng);
    EXPECT_EQ(bits(exactSum(0.25, v, chunks)), ref) << chunks << " chunks";
  }
}

TEST(ReproSum, ComponentsAndChunksLayout) {
  // dim 2, two chunks: slot (c * dim + k) * OPD_XSUM_WORDS.
  std::vector<int64_t> partials(2 * 2 * OPD_XSUM_WORDS, 0);
  const double a[2] = {1.0, 1e100}, b[2] = {2.0, -1e100};
  opd_xsum_add_f64(partials.data(), a, 2);
  opd_xsum_add_f64(partials.data() + 2 * OPD_XSUM_WORDS, b, 2);
  double v[2] = {0.5, 3.0};
  opd_reduce_sum_exact(v, OPD_F64, 2, partials.data(), 2);
  EXPECT_EQ(v[0], 3.5);
  EXPECT_EQ(v[1], 3.0);
}

} // namespace
