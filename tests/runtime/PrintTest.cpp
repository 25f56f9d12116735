// PrintTest.cpp - print() formatting: shortest round-trip floats, bools;
// output line-buffered into a pipe.
// SPDX-License-Identifier: Apache-2.0
#include "TestUtil.h"
#include "core/Format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

using opdc::rt::formatF32;
using opdc::rt::formatF64;

namespace {

TEST(Print, F64Shortest) {
  EXPECT_EQ(formatF64(0.1), "0.1");
  EXPECT_EQ(formatF64(1e-05), "1e-05");
  EXPECT_EQ(formatF64(3.0), "3.0");
  EXPECT_EQ(formatF64(-0.0), "-0.0");
  EXPECT_EQ(formatF64(0.0), "0.0");
  EXPECT_EQ(formatF64(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(formatF64(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(formatF64(123456789.0), "123456789.0");
  EXPECT_EQ(formatF64(1e20), "1e+20");
  EXPECT_EQ(formatF64(2.5e-3), "0.0025");
  // Python's repr rule: fixed notation for exponents in [-4, 16).
  EXPECT_EQ(formatF64(2500.0), "2500.0");
  EXPECT_EQ(formatF64(1.5e15), "1500000000000000.0");
  EXPECT_EQ(formatF64(1e16), "1e+16");
  EXPECT_EQ(formatF64(1.25e-4), "0.000125");
  EXPECT_EQ(formatF64(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(formatF64(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(formatF64(std::nan("")), "nan");
  EXPECT_EQ(formatF64(std::numeric_limits<double>::max()),
            "1.7976931348623157e+308");
  EXPECT_EQ(formatF64(std::numeric_limits<double>::denorm_min()), "5e-324");
}

TEST(Print, F32Shortest) {
  EXPECT_EQ(formatF32(0.1f), "0.1");
  EXPECT_EQ(formatF32(3.0f), "3.0");
  EXPECT_EQ(formatF32(1.0f / 3.0f), "0.33333334");
  EXPECT_EQ(formatF32(16777216.0f), "16777216.0");
  EXPECT_EQ(formatF32(std::numeric_limits<float>::max()), "3.4028235e+38");
}

TEST(Print, RoundTripsRandomValues) {
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 20000; ++i) {
    uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (!std::isfinite(d))
      continue;
    EXPECT_EQ(std::strtod(formatF64(d).c_str(), nullptr), d);
    float f;
    uint32_t fbits = uint32_t(bits >> 32);
    std::memcpy(&f, &fbits, sizeof f);
    if (!std::isfinite(f))
      continue;
    EXPECT_EQ(std::strtof(formatF32(f).c_str(), nullptr), f);
  }
}

TEST(Print, HelpersSeparateWithSpacesAndEndLines) {
  auto r = opdc::rt::test::runTestProgram({"--mode=print"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "-42 3.0 0.1 1e-05 0.1 true false done\n");
}

// Output into a pipe or a file is line-buffered (issue 53): a program
// killed after printing still leaves its lines; OPD_LINE_BUFFER=0 keeps
// full buffering, where they are lost.
TEST(Print, LinesReachAPipeBeforeTheProgramEnds) {
  using opdc::rt::test::runTestProgram;
  opdc::rt::test::RunResult r = runTestProgram({"--mode=killed"});
  EXPECT_EQ(r.status, -1);
  EXPECT_EQ(r.out, "step 1\n2\n");
  setenv("OPD_LINE_BUFFER", "0", 1);
  r = runTestProgram({"--mode=killed"});
  unsetenv("OPD_LINE_BUFFER");
  EXPECT_EQ(r.status, -1);
  EXPECT_EQ(r.out, "");
}

} // namespace
