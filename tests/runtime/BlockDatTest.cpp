// BlockDatTest.cpp - Dat layout: halos, origin, strides, fill, swap, memory.
// SPDX-License-Identifier: Apache-2.0
#include "core/Objects.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>

namespace {

class BlockDatTest : public ::testing::Test {
protected:
  void TearDown() override { opd_rt_finalize(); }
};

bool aligned64(const void *p) {
  return reinterpret_cast<uintptr_t>(p) % 64 == 0;
}

TEST_F(BlockDatTest, LayoutOriginAndStrides) {
  opd_block *b = opd_block_create("grid", 2);
  int64_t size[2] = {4, 3}, hm[2] = {1, 2}, hp[2] = {2, 1}, base[2] = {0, 0};
  opd_dat *d = opd_block_dat_create("u", b, OPD_F64, 2, size, hm, hp, base);
  EXPECT_EQ(opd_dat_extent(d, 0), 4);
  EXPECT_EQ(opd_dat_extent(d, 1), 3);
  int64_t strides[2];
  char *origin = static_cast<char *>(opd_dat_origin(d, strides));
  EXPECT_EQ(strides[0], 1);
  EXPECT_EQ(strides[1], 7);
  char *data = static_cast<char *>(opd_dat_data(d));
  // Rows of 7 points stay dense (padding them to whole lines would add
  // more than an eighth); the first interior point of the first row is
  // still 64-byte aligned.
  EXPECT_TRUE(aligned64(data + 1 * 2 * 8));
  // (0, 0) is 1 point into dimension 0 and 2 rows into dimension 1.
  EXPECT_EQ(origin - data, (1 * 1 + 2 * 7) * 2 * 8);
  // Halos are real memory and zero-filled.
  auto *v = reinterpret_cast<double *>(data);
  for (int i = 0; i < 7 * 6 * 2; ++i)
    ASSERT_EQ(v[i], 0.0);
  // Component c of (i, j) is at origin + ((i*s0 + j*s1) * dim + c) * 8.
  auto *o = reinterpret_cast<double *>(origin);
  o[(3 * strides[0] + 2 * strides[1]) * 2 + 1] = 5.0;
  EXPECT_EQ(v[((3 + 1) + (2 + 2) * 7) * 2 + 1], 5.0);
}

TEST_F(BlockDatTest, BaseShiftsTheOrigin) {
  opd_block *b = opd_block_create("grid", 2);
  int64_t size[2] = {4, 3}, hm[2] = {1, 2}, hp[2] = {2, 1}, base[2] = {-1, 5};
  opd_dat *d = opd_block_dat_create("u", b, OPD_F32, 1, size, hm, hp, base);
  int64_t strides[2];
  auto origin = reinterpret_cast<intptr_t>(opd_dat_origin(d, strides));
  auto data = reinterpret_cast<intptr_t>(opd_dat_data(d));
  // The first interior point is index base = (-1, 5).
  EXPECT_EQ(origin + ((-1) * strides[0] + 5 * strides[1]) * 4,
            data + (1 + 2 * 7) * 4);
}

TEST_F(BlockDatTest, FillCoversHalos) {
  opd_block *b = opd_block_create("cube", 3);
  int64_t size[3] = {5, 4, 3}, hm[3] = {1, 1, 1}, hp[3] = {1, 2, 0},
          base[3] = {0, 0, 0};
  opd_dat *d = opd_block_dat_create("u", b, OPD_I32, 2, size, hm, hp, base);
  int32_t elem[2] = {7, -3};
  opd_dat_fill(d, elem);
  auto *v = static_cast<int32_t *>(opd_dat_data(d));
  const int points = 7 * 7 * 4;
  EXPECT_EQ(d->elements, points);
  for (int i = 0; i < points; ++i) {
    ASSERT_EQ(v[2 * i], 7);
    ASSERT_EQ(v[2 * i + 1], -3);
  }
}

// Rows are padded to whole cache lines, so that the first interior point
// of every row is 64-byte aligned (the vector loops' aligned and streaming
// stores rely on it), for any element size that shares a factor with 64.
TEST_F(BlockDatTest, PaddedRowsAlignEveryInteriorRow) {
  struct Case {
    opd_scalar type;
    int dim;
    int64_t n, halo, row; // interior points, halo each side, padded row
  };
  const Case cases[] = {
      {OPD_F64, 1, 100, 1, 104}, {OPD_F64, 1, 256, 1, 264},
      {OPD_F32, 1, 300, 2, 304}, {OPD_F64, 3, 125, 1, 128},
      {OPD_I32, 2, 61, 0, 64},   {OPD_F64, 1, 62, 1, 64},
  };
  for (const Case &c : cases) {
    opd_block *b = opd_block_create("cube", 3);
    int64_t size[3] = {c.n, 5, 3}, h[3] = {c.halo, c.halo, c.halo},
            base[3] = {0, 0, 0};
    opd_dat *d = opd_block_dat_create("u", b, c.type, c.dim, size, h, h, base);
    int64_t st[3];
    char *origin = static_cast<char *>(opd_dat_origin(d, st));
    const int64_t eb = d->elementBytes();
    EXPECT_EQ(st[0], 1);
    EXPECT_EQ(st[1], c.row) << c.n << " points, halo " << c.halo;
    EXPECT_EQ(st[2], c.row * (5 + 2 * c.halo));
    EXPECT_EQ(opd_dat_stored_points(d), c.row * (5 + 2 * c.halo) *
                                            (3 + 2 * c.halo));
    for (int64_t k = -c.halo; k < 3 + c.halo; ++k)
      for (int64_t j = -c.halo; j < 5 + c.halo; ++j)
        ASSERT_TRUE(aligned64(origin + (j * st[1] + k * st[2]) * eb))
            << "row (" << j << ", " << k << ")";
    // Zero-filled, padding included; fill and copy cover the rows.
    const auto *bytes = static_cast<const unsigned char *>(opd_dat_data(d));
    for (int64_t i = 0; i < opd_dat_stored_points(d) * eb; ++i)
      ASSERT_EQ(bytes[i], 0);
  }
}

TEST_F(BlockDatTest, PaddedDatsSwapAndCopyAligned) {
  opd_block *b = opd_block_create("grid", 2);
  int64_t size[2] = {90, 4}, h[2] = {1, 1}, base[2] = {0, 0};
  opd_dat *u = opd_block_dat_create("u", b, OPD_F64, 1, size, h, h, base);
  opd_dat *v = opd_block_dat_create("v", b, OPD_F64, 1, size, h, h, base);
  int64_t su[2], sv[2];
  auto *ou = static_cast<double *>(opd_dat_origin(u, su));
  for (int j = -1; j < 5; ++j)
    for (int i = -1; i < 91; ++i)
      ou[i + j * su[1]] = 1000 * j + i;
  opd_dat_swap(u, v);
  auto *ov = static_cast<double *>(opd_dat_origin(v, sv));
  EXPECT_EQ(sv[1], su[1]);
  EXPECT_TRUE(aligned64(ov));
  EXPECT_EQ(ov[3 + 2 * sv[1]], 2003.0);
  opd_dat_copy(u, v);
  ou = static_cast<double *>(opd_dat_origin(u, su));
  EXPECT_TRUE(aligned64(ou));
  for (int j = -1; j < 5; ++j)
    for (int i = -1; i < 91; ++i)
      ASSERT_EQ(ou[i + j * su[1]], 1000 * j + i);
}

TEST_F(BlockDatTest, SetDatsAndMapsAreAlignedAndZeroed) {
  opd_set *s = opd_set_create("s", 100003);
  opd_dat *d = opd_dat_create("d", s, OPD_F32, 3);
  EXPECT_TRUE(aligned64(opd_dat_data(d)));
  int64_t stride = 0;
  EXPECT_EQ(opd_dat_origin(d, &stride), opd_dat_data(d));
  EXPECT_EQ(stride, 1);
  EXPECT_EQ(opd_dat_extent(d, 0), 100003);
  auto *v = static_cast<float *>(opd_dat_data(d));
  for (int i = 0; i < 100003 * 3; ++i)
    ASSERT_EQ(v[i], 0.0f);
  opd_map *m = opd_map_create("m", s, s, 3);
  EXPECT_TRUE(aligned64(opd_map_data(m)));
  // Large allocations are zero-filled in parallel.
  opd_set *big = opd_set_create("big", 1 << 20);
  opd_dat *bd = opd_dat_create("bd", big, OPD_F64, 2);
  auto *bv = static_cast<double *>(opd_dat_data(bd));
  for (int i = 0; i < (1 << 21); ++i)
    ASSERT_EQ(bv[i], 0.0);
}

TEST_F(BlockDatTest, ScratchGrowsOnlyAndIsAligned) {
  void *a = opd_rt_scratch(100);
  EXPECT_TRUE(aligned64(a));
  EXPECT_EQ(opd_rt_scratch(50), a);
  EXPECT_EQ(opd_rt_scratch(0), a);
  void *b = opd_rt_scratch(1 << 20);
  EXPECT_TRUE(aligned64(b));
  EXPECT_EQ(opd_rt_scratch(64), b);
}

TEST_F(BlockDatTest, SwapExchangesStorage) {
  opd_set *s = opd_set_create("s", 10);
  opd_dat *a = opd_dat_create("a", s, OPD_F64, 1);
  opd_dat *b = opd_dat_create("b", s, OPD_F64, 1);
  void *pa = opd_dat_data(a), *pb = opd_dat_data(b);
  opd_dat_swap(a, b);
  EXPECT_EQ(opd_dat_data(a), pb);
  EXPECT_EQ(opd_dat_data(b), pa);
}

TEST_F(BlockDatTest, SwapOfDifferentShapesIsAnError) {
  opd_rt_init(0, nullptr, "rt", nullptr, 0);
  opd_set *s = opd_set_create("s", 10);
  opd_dat *a = opd_dat_create("a", s, OPD_F64, 1);
  opd_dat *b = opd_dat_create("b", s, OPD_F64, 2);
  EXPECT_EXIT(opd_dat_swap(a, b), ::testing::ExitedWithCode(1),
              ::testing::HasSubstr("rt: error: swap(a, b): the dats differ"));
}

TEST_F(BlockDatTest, ExtentOutOfRangeIsAnError) {
  opd_rt_init(0, nullptr, "rt", nullptr, 0);
  opd_block *b = opd_block_create("grid", 2);
  int64_t size[2] = {4, 3}, zero[2] = {0, 0};
  opd_dat *d = opd_block_dat_create("u", b, OPD_F64, 1, size, zero, zero, zero);
  EXPECT_EXIT(opd_dat_extent(d, 2), ::testing::ExitedWithCode(1),
              ::testing::HasSubstr("rt: error: size(u, 2): dimension out of "
                                   "range; the dat has 2"));
}

} // namespace
