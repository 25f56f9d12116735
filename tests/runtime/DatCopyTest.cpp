// DatCopyTest.cpp - opd_dat_copy: set and block dats (halos included), the
// halo state, and an error for each kind of shape mismatch.
// SPDX-License-Identifier: Apache-2.0
#include "core/Objects.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

namespace {

class DatCopyTest : public ::testing::Test {
protected:
  void TearDown() override { opd_rt_finalize(); }
};

// Every stored byte of `d` (halos included) from `seed`.
void scribble(opd_dat *d, unsigned seed) {
  auto *p = static_cast<unsigned char *>(opd_dat_data(d));
  const int64_t bytes = d->elements * d->elementBytes();
  for (int64_t k = 0; k < bytes; ++k)
    p[k] = static_cast<unsigned char>((k * 131 + seed * 7 + 1) % 251);
}

bool sameStorage(opd_dat *a, opd_dat *b) {
  return a->elements == b->elements &&
         std::memcmp(opd_dat_data(a), opd_dat_data(b),
                     std::size_t(a->elements * a->elementBytes())) == 0;
}

TEST_F(DatCopyTest, SetDatValues) {
  opd_set *s = opd_set_create("cells", 10001);
  opd_dat *q = opd_dat_create("q", s, OPD_F64, 4);
  opd_dat *qold = opd_dat_create("qold", s, OPD_F64, 4);
  scribble(q, 1);
  void *before = opd_dat_data(qold);
  opd_dat_copy(qold, q);
  EXPECT_TRUE(sameStorage(qold, q));
  EXPECT_EQ(opd_dat_data(qold), before) << "values are copied, not storage";
  EXPECT_NE(opd_dat_data(qold), opd_dat_data(q));
  // Later writes to the source leave the copy alone.
  static_cast<double *>(opd_dat_data(q))[0] = 42.0;
  EXPECT_NE(static_cast<double *>(opd_dat_data(qold))[0], 42.0);
}

TEST_F(DatCopyTest, BlockDatHalosIncluded) {
  opd_block *b = opd_block_create("cube", 3);
  int64_t size[3] = {9, 7, 5}, hm[3] = {1, 2, 0}, hp[3] = {2, 1, 1},
          base[3] = {-1, 0, 3};
  opd_dat *u = opd_block_dat_create("u", b, OPD_I32, 2, size, hm, hp, base);
  opd_dat *u0 = opd_block_dat_create("u0", b, OPD_I32, 2, size, hm, hp, base);
  scribble(u, 2);
  scribble(u0, 3);
  opd_dat_copy(u0, u);
  EXPECT_EQ(u0->elements, 12 * 10 * 6);
  EXPECT_TRUE(sameStorage(u0, u));
}

TEST_F(DatCopyTest, HaloStateFollowsTheSource) {
  opd_block *b = opd_block_create("grid", 2);
  int64_t size[2] = {6, 4}, h[2] = {1, 1}, base[2] = {0, 0};
  opd_dat *u = opd_block_dat_create("u", b, OPD_F32, 1, size, h, h, base);
  opd_dat *w = opd_block_dat_create("w", b, OPD_F32, 1, size, h, h, base);
  // A dirty source makes a dirty copy ...
  u->haloValid = 0;
  u->cornersValid = false;
  opd_dat_copy(w, u);
  EXPECT_EQ(w->haloValid, 0);
  EXPECT_FALSE(w->cornersValid);
  // ... and a current one a current copy.
  u->haloValid = 2;
  u->cornersValid = true;
  opd_dat_copy(w, u);
  EXPECT_EQ(w->haloValid, 2);
  EXPECT_TRUE(w->cornersValid);
  opd_set *s = opd_set_create("s", 5);
  opd_dat *a = opd_dat_create("a", s, OPD_F64, 1);
  opd_dat *c = opd_dat_create("c", s, OPD_F64, 1);
  a->haloValid = 0;
  opd_dat_copy(c, a);
  EXPECT_EQ(c->haloValid, 0);
}

TEST_F(DatCopyTest, IntoItselfAndEmpty) {
  opd_set *s = opd_set_create("s", 100);
  opd_dat *a = opd_dat_create("a", s, OPD_I64, 3);
  scribble(a, 4);
  opd_dat *keep = opd_dat_create("keep", s, OPD_I64, 3);
  opd_dat_copy(keep, a);
  opd_dat_copy(a, a);
  EXPECT_TRUE(sameStorage(a, keep));
  opd_set *none = opd_set_create("none", 0);
  opd_dat *e = opd_dat_create("e", none, OPD_BOOL, 1);
  opd_dat *f = opd_dat_create("f", none, OPD_BOOL, 1);
  opd_dat_copy(f, e);
}

#define EXPECT_COPY_ERROR(dst, src, text)                                      \
  EXPECT_EXIT(opd_dat_copy(dst, src), ::testing::ExitedWithCode(1),            \
              ::testing::HasSubstr(text))

TEST_F(DatCopyTest, SetDatMismatchesAreErrors) {
  opd_rt_init(0, nullptr, "rt", nullptr, 0);
  opd_set *cells = opd_set_create("cells", 10);
  opd_set *edges = opd_set_create("edges", 10);
  opd_dat *q = opd_dat_create("q", cells, OPD_F64, 2);
  opd_dat *onEdges = opd_dat_create("w", edges, OPD_F64, 2);
  opd_dat *f32 = opd_dat_create("r", cells, OPD_F32, 2);
  opd_dat *dim3 = opd_dat_create("p", cells, OPD_F64, 3);
  EXPECT_COPY_ERROR(onEdges, q,
                    "rt: error: copy of dat 'q' into dat 'w': not on the "
                    "same set or block (dat 'q' on set 'cells', dat 'w' on "
                    "set 'edges')");
  EXPECT_COPY_ERROR(f32, q,
                    "rt: error: copy of dat 'q' into dat 'r': element types "
                    "differ (dat 'q' holds f64, dat 'r' f32)");
  EXPECT_COPY_ERROR(dim3, q,
                    "rt: error: copy of dat 'q' into dat 'p': components per "
                    "element differ (dat 'q' has 2, dat 'p' 3)");
}

TEST_F(DatCopyTest, BlockDatMismatchesAreErrors) {
  opd_rt_init(0, nullptr, "rt", nullptr, 0);
  opd_block *grid = opd_block_create("grid", 2);
  opd_block *other = opd_block_create("other", 2);
  opd_set *cells = opd_set_create("cells", 12);
  int64_t size[2] = {4, 3}, h[2] = {1, 1}, zero[2] = {0, 0};
  int64_t wide[2] = {4, 5}, deep[2] = {2, 1}, shifted[2] = {1, 0};
  opd_dat *u = opd_block_dat_create("u", grid, OPD_F64, 1, size, h, h, zero);
  opd_dat *elsewhere =
      opd_block_dat_create("x", other, OPD_F64, 1, size, h, h, zero);
  opd_dat *onSet = opd_dat_create("c", cells, OPD_F64, 1);
  opd_dat *bigger =
      opd_block_dat_create("b", grid, OPD_F64, 1, wide, h, h, zero);
  opd_dat *haloed =
      opd_block_dat_create("h", grid, OPD_F64, 1, size, deep, h, zero);
  opd_dat *moved =
      opd_block_dat_create("m", grid, OPD_F64, 1, size, h, h, shifted);
  EXPECT_COPY_ERROR(elsewhere, u,
                    "rt: error: copy of dat 'u' into dat 'x': not on the "
                    "same set or block (dat 'u' on block 'grid', dat 'x' on "
                    "block 'other')");
  EXPECT_COPY_ERROR(onSet, u,
                    "rt: error: copy of dat 'u' into dat 'c': not on the "
                    "same set or block (dat 'u' on block 'grid', dat 'c' on "
                    "set 'cells')");
  EXPECT_COPY_ERROR(bigger, u,
                    "rt: error: copy of dat 'u' into dat 'b': extents differ "
                    "in dimension 1 (dat 'u' 3, dat 'b' 5)");
  EXPECT_COPY_ERROR(haloed, u,
                    "rt: error: copy of dat 'u' into dat 'h': halos differ in "
                    "dimension 0 (dat 'u' 1 below and 1 above, dat 'h' 2 and "
                    "1)");
  EXPECT_COPY_ERROR(moved, u,
                    "rt: error: copy of dat 'u' into dat 'm': bases differ in "
                    "dimension 0 (dat 'u' 0, dat 'm' 1)");
}

} // namespace
