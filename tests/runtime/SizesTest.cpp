// SizesTest.cpp - 64-bit sizes (issue 16, item 5): sets beyond 2^31
// elements keep 64-bit counts; where the program sees a size as an i32
// (size(set)) or a map holds 32-bit indices, a bigger set is a clear error,
// never a wrapped value. No test allocates anything proportional to the
// sizes: a set holds no per-element memory until a dat or map uses it.
// SPDX-License-Identifier: Apache-2.0
#include "opd_rt.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

constexpr int64_t Big = int64_t(3) << 30; // 3221225472 > INT32_MAX

class SizesTest : public ::testing::Test {
protected:
  void TearDown() override { opd_rt_finalize(); }
};

TEST_F(SizesTest, SetSizesAre64Bit) {
  opd_set *s = opd_set_create("huge", Big);
  EXPECT_EQ(opd_set_size(s), Big);
  opd_set *edge = opd_set_create("edge", INT32_MAX);
  EXPECT_EQ(opd_set_size_i32(edge), INT32_MAX);
}

TEST_F(SizesTest, SizeAsI32FailsBeyondInt32) {
  opd_set *s = opd_set_create("huge", Big);
  EXPECT_EXIT(opd_set_size_i32(s), ::testing::ExitedWithCode(1),
              "size\\(huge\\): the set has 3221225472 elements, more than an "
              "i32 holds \\(2147483647\\)");
  opd_set *over = opd_set_create("over", int64_t(INT32_MAX) + 1);
  EXPECT_EXIT(opd_set_size_i32(over), ::testing::ExitedWithCode(1),
              "size\\(over\\): the set has 2147483648 elements");
}

TEST_F(SizesTest, MapTargetsMustFit32BitIndices) {
  opd_set *from = opd_set_create("few", 4);
  opd_set *to = opd_set_create("huge", Big);
  EXPECT_EXIT(opd_map_create("m", from, to, 2), ::testing::ExitedWithCode(1),
              "map 'm': its target set 'huge' has 3221225472 elements, but "
              "map entries are 32-bit indices \\(at most 2147483647 "
              "elements\\); split the set");
}

TEST_F(SizesTest, MapSizeOverflow) {
  opd_set *from = opd_set_create("vast", INT64_MAX / 8);
  opd_set *to = opd_set_create("few", 4);
  EXPECT_EXIT(opd_map_create("m", from, to, 4), ::testing::ExitedWithCode(1),
              "map 'm': [0-9]+ elements x arity 4 overflow the map's size");
}

} // namespace
