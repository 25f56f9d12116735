// AdjointTapeTest.cpp - The adjoint's tape: pushes and pops restore dats
// (halos and halo state included) and host values in reverse, and a push of
// a dat the next loop overwrites hands its storage over instead of copying.
// SPDX-License-Identifier: Apache-2.0
#include "AdjointTestUtil.h"

namespace {

using namespace opdc::rt::test;
using opdc::rt::checkpointSchedule;
using opdc::rt::ScheduleAction;

TEST_F(AdjointRuntimeTest, TapeRestoresDatsAndValuesInReverse) {
  opd_set *s = opd_set_create("nodes", 5000);
  opd_dat *a = opd_dat_create("a", s, OPD_F64, 2);
  opd_dat *b = opd_dat_create("b", s, OPD_F32, 1);
  auto *pa = static_cast<double *>(opd_dat_data(a));
  auto *pb = static_cast<float *>(opd_dat_data(b));
  for (int i = 0; i < 5000; ++i) {
    pa[2 * i] = i;
    pa[2 * i + 1] = -i;
    pb[i] = float(i) / 2;
  }
  a->haloValid = 3;
  opd_tape_push_dat(a);
  opd_tape_push_dat(b);
  opd_tape_push_value(42);
  opd_tape_push_value(7);
  std::vector<double> zero(10000, 0.0);
  std::memcpy(pa, zero.data(), sizeof(double) * 10000);
  std::memset(pb, 0, sizeof(float) * 5000);
  a->haloValid = 0;
  EXPECT_EQ(opd_tape_pop_value(), 7u);
  EXPECT_EQ(opd_tape_pop_value(), 42u);
  // b by copy (its storage stays), a by handing it the tape's buffer.
  opd_tape_pop_dat_copy(b);
  opd_tape_pop_dat(a);
  EXPECT_EQ(opd_dat_data(b), static_cast<void *>(pb));
  EXPECT_EQ(pb[10], 5.0f);
  pa = static_cast<double *>(opd_dat_data(a));
  EXPECT_EQ(pa[2 * 4999 + 1], -4999.0);
  EXPECT_EQ(pa[2 * 17], 17.0);
  EXPECT_EQ(a->haloValid, 3);
  EXPECT_GE(opdc::rt::adjointMemory().tapePeakBytes, 5000 * 20);
  // The storage a pop replaced is reused by the next push: pushing and
  // popping every step allocates nothing new.
  for (int step = 0; step < 4; ++step) {
    opd_tape_push_dat(a);
    pa = static_cast<double *>(opd_dat_data(a));
    pa[0] = -1.0;
    opd_tape_pop_dat(a);
    pa = static_cast<double *>(opd_dat_data(a));
    EXPECT_EQ(pa[0], 0.0);
    EXPECT_EQ(pa[2 * 4999 + 1], -4999.0);
  }
}

// opd_tape_push_dat_overwritten: the next loop's prepare takes the dat's
// storage for the tape and copies only the points outside the loop's range
// (halos included) into the dat's new storage; the pop hands it back.
// Without such a loop the push is a copy.
TEST_F(AdjointRuntimeTest, PushOfAnOverwrittenDatCopiesOnlyTheRest) {
  opd_block *b = opd_block_create("grid", 3);
  int64_t size[3] = {9, 6, 5}, hm[3] = {1, 2, 1}, hp[3] = {2, 1, 1},
          base[3] = {0, 0, 0};
  opd_dat *u = opd_block_dat_create("u", b, OPD_F64, 2, size, hm, hp, base);
  int64_t st[3];
  auto value = [](int64_t i, int64_t j, int64_t k, int c) {
    return double(1000 * i + 100 * j + 10 * k + c) + 0.5;
  };
  auto at = [&](int64_t i, int64_t j, int64_t k, int c) -> double & {
    auto *o = static_cast<double *>(opd_dat_origin(u, st));
    return o[(i * st[0] + j * st[1] + k * st[2]) * 2 + c];
  };
  auto fill = [&] {
    for (int64_t k = -1; k < 6; ++k)
      for (int64_t j = -2; j < 7; ++j)
        for (int64_t i = -1; i < 11; ++i)
          for (int c = 0; c < 2; ++c)
            at(i, j, k, c) = value(i, j, k, c);
  };
  auto same = [&](bool inside, int64_t lo[3], int64_t hi[3]) {
    int bad = 0;
    for (int64_t k = -1; k < 6; ++k)
      for (int64_t j = -2; j < 7; ++j)
        for (int64_t i = -1; i < 11; ++i) {
          const bool in = i >= lo[0] && i < hi[0] && j >= lo[1] && j < hi[1] &&
                          k >= lo[2] && k < hi[2];
          for (int c = 0; c < 2; ++c)
            if ((inside || !in) && at(i, j, k, c) != value(i, j, k, c))
              ++bad;
        }
    return bad;
  };
  fill();
  u->haloValid = 2;
  opd_arg w = writes(u, OPD_ARG_STENCIL, 16);
  void *before = opd_dat_data(u);
  opd_tape_push_dat_overwritten(u);
  int64_t lo[3] = {1, 0, 1}, hi[3] = {8, 6, 4};
  opd_loop *slot = nullptr;
  opd_loop_prepare_block(&slot, "writes_u", b, lo, hi, 1, &w);
  EXPECT_NE(opd_dat_data(u), before);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(opd_dat_data(u)) % 64,
            reinterpret_cast<uintptr_t>(before) % 64);
  EXPECT_EQ(same(false, lo, hi), 0) << "points outside the loop's range";
  // The loop writes its range.
  for (int64_t k = lo[2]; k < hi[2]; ++k)
    for (int64_t j = lo[1]; j < hi[1]; ++j)
      for (int64_t i = lo[0]; i < hi[0]; ++i)
        at(i, j, k, 0) = at(i, j, k, 1) = -1.0;
  u->haloValid = 0;
  opd_tape_pop_dat(u);
  EXPECT_EQ(opd_dat_data(u), before);
  EXPECT_EQ(same(true, lo, hi), 0) << "after the pop";
  EXPECT_EQ(u->haloValid, 2);
  // No loop between push and pop (the dat unchanged, as the contract
  // asks): saved by copy at the pop.
  opd_tape_push_dat_overwritten(u);
  opd_tape_pop_dat(u);
  EXPECT_EQ(same(true, lo, hi), 0) << "a push no loop took";
  // A loop that also reads it: saved by copy, the storage stays.
  opd_arg r = w;
  r.mode = OPD_READ;
  opd_arg both[2] = {w, r};
  opd_tape_push_dat_overwritten(u);
  void *now = opd_dat_data(u);
  opd_loop *slot2 = nullptr;
  opd_loop_prepare_block(&slot2, "reads_u", b, lo, hi, 2, both);
  EXPECT_EQ(opd_dat_data(u), now);
  opd_tape_pop_dat(u);
  EXPECT_EQ(same(true, lo, hi), 0);
}

// The same for a set dat: a set loop with a direct `out` argument writes
// elements [0, count) on this rank; the tape takes the storage and the dat
// gets a pooled buffer holding the elements past the count (halos: none in
// one process); the pop hands the taped storage back. A loop that also
// reads the dat, or a set loop's indirect write, leaves it to a copy.
TEST_F(AdjointRuntimeTest, PushOfAnOverwrittenSetDatHandsItsStorageOver) {
  opd_set *s = opd_set_create("cells", 1000);
  opd_dat *q = opd_dat_create("q", s, OPD_F64, 4);
  auto *p = static_cast<double *>(opd_dat_data(q));
  for (int i = 0; i < 4000; ++i)
    p[i] = 0.25 * i;
  auto same = [&] {
    auto *now = static_cast<const double *>(opd_dat_data(q));
    int bad = 0;
    for (int i = 0; i < 4000; ++i)
      bad += now[i] != 0.25 * i;
    return bad;
  };
  q->haloValid = 1;
  opd_arg w = writes(q, OPD_ARG_DIRECT, 32);
  void *before = opd_dat_data(q);
  opd_tape_push_dat_overwritten(q);
  opd_loop *slot = nullptr;
  opd_loop_prepare(&slot, "writes_q", s, 1, &w);
  EXPECT_NE(opd_dat_data(q), before);
  auto *fresh = static_cast<double *>(opd_dat_data(q));
  for (int i = 0; i < 4000; ++i)
    fresh[i] = -1.0;
  q->haloValid = 0;
  opd_tape_pop_dat(q);
  EXPECT_EQ(opd_dat_data(q), before);
  EXPECT_EQ(same(), 0) << "after the pop";
  EXPECT_EQ(q->haloValid, 1);
  // A loop that also reads it: saved by copy, the storage stays.
  opd_arg r = w;
  r.mode = OPD_READ;
  opd_arg both[2] = {w, r};
  opd_tape_push_dat_overwritten(q);
  opd_loop *slot2 = nullptr;
  opd_loop_prepare(&slot2, "reads_q", s, 2, both);
  EXPECT_EQ(opd_dat_data(q), before);
  for (int i = 0; i < 4000; ++i)
    p[i] = 7.0;
  opd_tape_pop_dat(q);
  EXPECT_EQ(same(), 0) << "a push the loop did not take";
}

} // namespace
