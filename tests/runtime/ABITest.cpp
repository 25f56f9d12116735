// ABITest.cpp - opd_rt_check_abi: a program built for another runtime ABI
// stops with both version numbers (lib/core/ABI.cpp).
// SPDX-License-Identifier: Apache-2.0
#include <opd_rt.h>

#include <gtest/gtest.h>

namespace {

TEST(ABI, TheSameVersionGoesOn) {
  opd_rt_check_abi(OPD_RT_ABI_VERSION);
  EXPECT_EQ(opd_rt_abi_version(), OPD_RT_ABI_VERSION);
}

TEST(ABI, AnotherVersionStopsNamingBoth) {
  EXPECT_EXIT(
      opd_rt_check_abi(OPD_RT_ABI_VERSION + 7), ::testing::ExitedWithCode(1),
      "built for opd runtime ABI " + std::to_string(OPD_RT_ABI_VERSION + 7) +
          ", this runtime is " + std::to_string(OPD_RT_ABI_VERSION));
}

} // namespace
