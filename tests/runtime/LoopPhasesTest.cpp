// LoopPhasesTest.cpp - Loops run phase by phase (opd_loop_begin, segments
// and plan parts, opd_loop_wait_halos, opd_loop_end) as a backend that
// launches its own kernels would, against opd_loop_run.
// SPDX-License-Identifier: Apache-2.0
#include "core/Profile.h"
#include "core/Runtime.h"
#include "exec/Loop.h"
#include "exec/Plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace opdc::rt;

namespace {

// The plan parts describe the colouring: opd_loop_run runs it too here.
class LoopPhasesTest : public ::testing::Test {
protected:
  void SetUp() override { setPlanKind(PlanKind::Colour); }
  void TearDown() override {
    opd_rt_finalize();
    omp_set_num_threads(2);
    setPlanKind(DefaultPlanKind);
  }
};

// Runs a prepared loop through the phases, serially, the chunks of a
// segment and the blocks of a colour in reverse order (a GPU runs them in
// any order). `partials` (`slotBytes` per chunk) are kept for the parts
// whose partials do not count, as opd_loop_run does.
void runByHand(opd_loop *l, opd_body body, void *ctx,
               char *partials = nullptr, std::size_t slotBytes = 0) {
  opd_loop_begin(l);
  auto segments = [&](int beforeHalos) {
    for (int32_t k = 0; k < opd_loop_segment_count(l); ++k) {
      opd_loop_segment s;
      opd_loop_segment_get(l, k, &s);
      if (s.before_halos != beforeHalos)
        continue;
      const int64_t n = (s.end - s.begin + s.chunk_size - 1) / s.chunk_size;
      for (int64_t j = n - 1; j >= 0; --j) {
        const int64_t begin = s.begin + j * s.chunk_size;
        body(ctx, begin, std::min(begin + s.chunk_size, s.end), s.chunk0 + j);
      }
    }
  };
  auto parts = [&](int beforeHalos) {
    for (int32_t q = 0; q < opd_loop_part_count(l); ++q) {
      opd_loop_part p;
      opd_loop_part_get(l, q, &p);
      if (p.before_halos != beforeHalos)
        continue;
      std::vector<char> kept;
      if (!p.partials_count && partials)
        kept.assign(partials + std::size_t(p.chunk0) * slotBytes,
                    partials + std::size_t(p.chunk0 + p.nblocks) * slotBytes);
      const int64_t end = p.first + p.count;
      for (int32_t c = 0; c < p.ncolours; ++c)
        for (int64_t k = p.colour_offsets[c + 1] - 1;
             k >= p.colour_offsets[c]; --k) {
          const int64_t b = p.blocks[k];
          const int64_t begin = p.first + b * p.block_size;
          body(ctx, begin, std::min(begin + p.block_size, end), p.chunk0 + b);
        }
      if (!kept.empty())
        std::memcpy(partials + std::size_t(p.chunk0) * slotBytes, kept.data(),
                    kept.size());
    }
  };
  segments(1);
  parts(1);
  opd_loop_wait_halos(l);
  segments(0);
  parts(0);
  opd_loop_end(l);
}

int64_t profileCalls(const char *name) {
  for (const ProfileRow &r : collectProfile())
    if (r.name == name)
      return r.calls;
  return 0;
}

bool sameBits(const void *a, const void *b, std::size_t bytes) {
  return std::memcmp(a, b, bytes) == 0;
}

// Direct: y = x * x + 1, and the sum of x as chunk partials.
struct DirectCtx {
  const double *x;
  double *y;
  double *partials;
};
void directBody(void *ctx, int64_t begin, int64_t end, int64_t chunk) {
  auto *c = static_cast<DirectCtx *>(ctx);
  double s = 0;
  for (int64_t i = begin; i < end; ++i) {
    c->y[i] = c->x[i] * c->x[i] + 1.0;
    s += c->x[i];
  }
  c->partials[chunk] = s;
}

TEST_F(LoopPhasesTest, DirectSetLoopByHandEqualsRun) {
  const int64_t n = 10007;
  opd_set *s = opd_set_create("cells", n);
  opd_dat *x = opd_dat_create("x", s, OPD_F64, 1);
  opd_dat *y = opd_dat_create("y", s, OPD_F64, 1);
  auto *xv = static_cast<double *>(opd_dat_data(x));
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  for (int64_t i = 0; i < n; ++i)
    xv[i] = val(rng) * std::pow(10.0, double(i % 13) - 6);
  opd_arg args[] = {{x, nullptr, 0, OPD_ARG_DIRECT, OPD_READ, 8},
                    {y, nullptr, 0, OPD_ARG_DIRECT, OPD_WRITE, 8},
                    {nullptr, nullptr, 0, OPD_ARG_REDUCTION, OPD_SUM, 8}};
  opd_loop *runSlot = nullptr, *handSlot = nullptr;
  std::vector<double> results[2];
  double sums[2];
  for (int way = 0; way < 2; ++way) {
    for (int call = 0; call < 3; ++call) {
      opd_loop *l = opd_loop_prepare(way ? &handSlot : &runSlot,
                                     way ? "by_hand" : "by_run", s, 3, args);
      const int64_t chunks = opd_loop_chunks(l);
      auto *partials = static_cast<double *>(opd_rt_scratch(chunks * 8));
      std::fill(partials, partials + chunks, 0.0);
      DirectCtx ctx{xv, static_cast<double *>(opd_dat_data(y)), partials};
      if (way)
        runByHand(l, directBody, &ctx);
      else
        opd_loop_run(l, directBody, &ctx);
      sums[way] = 0;
      for (int64_t c = 0; c < chunks; ++c)
        sums[way] += partials[c];
    }
    auto *yv = static_cast<double *>(opd_dat_data(y));
    results[way].assign(yv, yv + n);
    double zero = 0;
    opd_dat_fill(y, &zero);
  }
  EXPECT_TRUE(sameBits(results[0].data(), results[1].data(), n * 8));
  EXPECT_TRUE(sameBits(&sums[0], &sums[1], 8)) << sums[0] << " " << sums[1];
  EXPECT_EQ(profileCalls("by_run"), 3);
  EXPECT_EQ(profileCalls("by_hand"), 3);
  EXPECT_EQ(handSlot->bytesPerCall, runSlot->bytesPerCall);

  // One process: one segment, the core, holding the whole set.
  opd_loop *l = handSlot;
  ASSERT_EQ(opd_loop_segment_count(l), 1);
  EXPECT_EQ(opd_loop_part_count(l), 0);
  opd_loop_segment seg;
  opd_loop_segment_get(l, 0, &seg);
  EXPECT_EQ(seg.begin, 0);
  EXPECT_EQ(seg.end, n);
  EXPECT_EQ(seg.chunk_size, DirectChunkSize);
  EXPECT_EQ(seg.chunk0, 0);
  EXPECT_EQ(seg.before_halos, 1);
  EXPECT_EQ(opd_loop_begin(l), 0) << "nothing in flight on one process";
  opd_loop_wait_halos(l);
  opd_loop_end(l);
  EXPECT_EQ(profileCalls("by_hand"), 4);
}

// Coloured: increments through a random map, and a sum reduction.
struct IncCtx {
  const int32_t *map;
  const double *w;
  double *acc;
  double *partials;
};
void incBody(void *ctx, int64_t begin, int64_t end, int64_t chunk) {
  auto *c = static_cast<IncCtx *>(ctx);
  double s = 0;
  for (int64_t e = begin; e < end; ++e) {
    c->acc[c->map[2 * e]] += c->w[e];
    c->acc[c->map[2 * e + 1]] -= 0.5 * c->w[e];
    s += c->w[e];
  }
  c->partials[chunk] = s;
}

TEST_F(LoopPhasesTest, ColouredIncrementByHandEqualsRun) {
  const int64_t ne = 20000, nn = 4000;
  opd_set *edges = opd_set_create("edges", ne);
  opd_set *nodes = opd_set_create("nodes", nn);
  opd_map *m = opd_map_create("pedge", edges, nodes, 2);
  opd_dat *w = opd_dat_create("w", edges, OPD_F64, 1);
  opd_dat *acc = opd_dat_create("acc", nodes, OPD_F64, 1);
  std::mt19937_64 rng(13);
  std::uniform_int_distribution<int32_t> pick(0, int32_t(nn - 1));
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  auto *wv = static_cast<double *>(opd_dat_data(w));
  for (int64_t e = 0; e < ne; ++e) {
    m->data[2 * e] = pick(rng);
    m->data[2 * e + 1] = pick(rng);
    wv[e] = val(rng) * std::pow(10.0, double(e % 17) - 8);
  }
  opd_arg args[] = {{w, nullptr, 0, OPD_ARG_DIRECT, OPD_READ, 8},
                    {acc, m, 0, OPD_ARG_INDIRECT, OPD_INC, 8},
                    {acc, m, 1, OPD_ARG_INDIRECT, OPD_INC, 8},
                    {nullptr, nullptr, 0, OPD_ARG_REDUCTION, OPD_SUM, 8}};
  opd_loop *runSlot = nullptr, *handSlot = nullptr;
  std::vector<double> results[2];
  double sums[2];
  for (int way = 0; way < 2; ++way) {
    double zero = 0;
    opd_dat_fill(acc, &zero);
    for (int call = 0; call < 2; ++call) {
      opd_loop *l = opd_loop_prepare(way ? &handSlot : &runSlot,
                                     way ? "inc_hand" : "inc_run", edges, 4,
                                     args);
      const int64_t chunks = opd_loop_chunks(l);
      auto *partials = static_cast<double *>(opd_rt_scratch(chunks * 8));
      std::fill(partials, partials + chunks, 0.0);
      IncCtx ctx{m->data, wv, static_cast<double *>(opd_dat_data(acc)),
                 partials};
      if (way)
        runByHand(l, incBody, &ctx, reinterpret_cast<char *>(partials), 8);
      else
        opd_loop_run(l, incBody, &ctx);
      sums[way] = 0;
      for (int64_t c = 0; c < chunks; ++c)
        sums[way] += partials[c];
    }
    auto *av = static_cast<double *>(opd_dat_data(acc));
    results[way].assign(av, av + nn);
  }
  EXPECT_TRUE(sameBits(results[0].data(), results[1].data(), nn * 8));
  EXPECT_TRUE(sameBits(&sums[0], &sums[1], 8)) << sums[0] << " " << sums[1];
  EXPECT_EQ(profileCalls("inc_run"), 2);
  EXPECT_EQ(profileCalls("inc_hand"), 2);

  // One process: the core part is the whole plan, the others are empty.
  opd_loop *l = handSlot;
  EXPECT_EQ(opd_loop_segment_count(l), 0);
  ASSERT_EQ(opd_loop_part_count(l), 3);
  opd_loop_part core, rest, halo;
  opd_loop_part_get(l, OPD_PART_CORE, &core);
  opd_loop_part_get(l, OPD_PART_REST, &rest);
  opd_loop_part_get(l, OPD_PART_EXEC_HALO, &halo);
  EXPECT_EQ(core.first, 0);
  EXPECT_EQ(core.count, ne);
  EXPECT_EQ(core.block_size, PlanBlockSize);
  EXPECT_EQ(core.nblocks, (ne + PlanBlockSize - 1) / PlanBlockSize);
  EXPECT_EQ(core.nblocks, opd_loop_chunks(l));
  EXPECT_EQ(core.chunk0, 0);
  EXPECT_GT(core.ncolours, 1);
  EXPECT_EQ(core.colour_offsets[0], 0);
  EXPECT_EQ(core.colour_offsets[core.ncolours], core.nblocks);
  EXPECT_EQ(core.before_halos, 1);
  EXPECT_EQ(core.partials_count, 1);
  for (const opd_loop_part &p : {rest, halo}) {
    EXPECT_EQ(p.nblocks, 0);
    EXPECT_EQ(p.count, 0);
    EXPECT_EQ(p.ncolours, 0);
    EXPECT_EQ(p.colour_offsets[0], 0);
    EXPECT_EQ(p.chunk0, core.nblocks);
    EXPECT_EQ(p.before_halos, 0);
  }
  EXPECT_EQ(rest.partials_count, 1);
  EXPECT_EQ(halo.partials_count, 0);
  EXPECT_EQ(rest.generation, core.generation);

  // The generation changes when a loop rewrites the map (new plan), not
  // when the same loop is prepared again.
  EXPECT_EQ(opd_loop_prepare(&handSlot, "inc_hand", edges, 4, args), l);
  opd_loop_part again;
  opd_loop_part_get(l, OPD_PART_CORE, &again);
  EXPECT_EQ(again.generation, core.generation);
  opd_arg fill[] = {{nullptr, m, 0, OPD_ARG_MAP, OPD_WRITE, 8}};
  opd_loop *fillSlot = nullptr;
  opd_loop *fl = opd_loop_prepare(&fillSlot, "fill", edges, 1, fill);
  opd_loop_begin(fl);
  opd_loop_end(fl);
  opd_loop_prepare(&handSlot, "inc_hand", edges, 4, args);
  opd_loop_part_get(l, OPD_PART_CORE, &again);
  EXPECT_NE(again.generation, core.generation);
}

// Increments the backend makes atomic (OPD_ARG_ATOMIC, the CUDA backend's
// atomics) need no colouring plan: the loop runs as segments over the
// whole set. With a reduction beside them the plan stays (its parts keep
// the exec halo's partials out on several processes).
TEST_F(LoopPhasesTest, AtomicIncrementsNeedNoPlan) {
  const int64_t ne = 5000, nn = 1000;
  opd_set *edges = opd_set_create("edges", ne);
  opd_set *nodes = opd_set_create("nodes", nn);
  opd_map *m = opd_map_create("pedge", edges, nodes, 2);
  opd_dat *acc = opd_dat_create("acc", nodes, OPD_F64, 1);
  for (int64_t e = 0; e < ne; ++e) {
    m->data[2 * e] = int32_t(e % nn);
    m->data[2 * e + 1] = int32_t((7 * e) % nn);
  }
  opd_arg args[] = {{acc, m, 0, OPD_ARG_INDIRECT, OPD_INC, 8},
                    {acc, m, 1, OPD_ARG_INDIRECT, OPD_INC, 8},
                    {nullptr, nullptr, 0, OPD_ARG_REDUCTION, OPD_SUM, 8}};
  for (opd_arg &a : args)
    if (a.kind == OPD_ARG_INDIRECT)
      a.flags = OPD_ARG_ATOMIC;
  opd_loop *slot = nullptr;
  opd_loop *l = opd_loop_prepare(&slot, "atomic", edges, 2, args);
  EXPECT_EQ(opd_loop_part_count(l), 0);
  ASSERT_EQ(opd_loop_segment_count(l), 1);
  opd_loop_segment seg;
  opd_loop_segment_get(l, 0, &seg);
  EXPECT_EQ(seg.begin, 0);
  EXPECT_EQ(seg.end, ne);
  opd_loop_begin(l);
  opd_loop_wait_halos(l);
  opd_loop_end(l);

  opd_loop *rslot = nullptr;
  opd_loop *r = opd_loop_prepare(&rslot, "atomic_sum", edges, 3, args);
  EXPECT_EQ(opd_loop_segment_count(r), 0);
  EXPECT_EQ(opd_loop_part_count(r), 3);
}

// 2D block: a five-point stencil of u into v over the interior, rows in
// chunks.
struct StencilCtx {
  const double *u;
  double *v;
  int64_t s1;
  int64_t lo0, hi0;
};
void stencilBody(void *ctx, int64_t begin, int64_t end, int64_t) {
  auto *c = static_cast<StencilCtx *>(ctx);
  for (int64_t j = begin; j < end; ++j)
    for (int64_t i = c->lo0; i < c->hi0; ++i) {
      const int64_t p = i + j * c->s1;
      c->v[p] = 0.25 * (c->u[p - 1] + c->u[p + 1] + c->u[p - c->s1] +
                        c->u[p + c->s1]) -
                c->u[p];
    }
}

TEST_F(LoopPhasesTest, BlockLoopByHandEqualsRun) {
  opd_block *grid = opd_block_create("grid", 2);
  const int64_t size[2] = {300, 70}, halo[2] = {1, 1}, base[2] = {0, 0};
  opd_dat *u = opd_block_dat_create("u", grid, OPD_F64, 1, size, halo, halo,
                                    base);
  opd_dat *v = opd_block_dat_create("v", grid, OPD_F64, 1, size, halo, halo,
                                    base);
  auto *raw = static_cast<double *>(opd_dat_data(u));
  for (int64_t k = 0; k < u->elements; ++k)
    raw[k] = std::sin(0.37 * double(k)) * 1e3;
  opd_arg args[2] = {};
  args[0] = {u, nullptr, 0, OPD_ARG_STENCIL, OPD_READ, 8};
  args[0].lo[0] = args[0].lo[1] = -1;
  args[0].hi[0] = args[0].hi[1] = 1;
  args[1] = {v, nullptr, 0, OPD_ARG_DIRECT, OPD_WRITE, 8};
  opd_loop *runSlot = nullptr, *handSlot = nullptr;
  std::vector<double> results[2];
  for (int way = 0; way < 2; ++way) {
    int64_t lo[2] = {0, 0}, hi[2] = {300, 70};
    opd_loop *l = opd_loop_prepare_block(way ? &handSlot : &runSlot,
                                         way ? "lap_hand" : "lap_run", grid,
                                         lo, hi, 2, args);
    ASSERT_GT(opd_loop_chunks(l), 1);
    int64_t strides[2];
    auto *uo = static_cast<const double *>(opd_dat_origin(u, strides));
    auto *vo = static_cast<double *>(opd_dat_origin(v, nullptr));
    StencilCtx ctx{uo, vo, strides[1], lo[0], hi[0]};
    if (way)
      runByHand(l, stencilBody, &ctx);
    else
      opd_loop_run(l, stencilBody, &ctx);
    auto *vv = static_cast<double *>(opd_dat_data(v));
    results[way].assign(vv, vv + v->elements);
    double zero = 0;
    opd_dat_fill(v, &zero);
  }
  EXPECT_TRUE(sameBits(results[0].data(), results[1].data(),
                       results[0].size() * 8));
  EXPECT_NE(results[0][std::size_t(1 + 5 * 302)], 0.0);
  EXPECT_EQ(profileCalls("lap_run"), 1);
  EXPECT_EQ(profileCalls("lap_hand"), 1);
  ASSERT_EQ(opd_loop_segment_count(handSlot), 1);
  opd_loop_segment seg;
  opd_loop_segment_get(handSlot, 0, &seg);
  EXPECT_EQ(seg.begin, 0);
  EXPECT_EQ(seg.end, 70);
  EXPECT_EQ(seg.chunk_size, BlockChunkPoints / 300);
  EXPECT_EQ(seg.before_halos, 1);
}

TEST_F(LoopPhasesTest, PhasesOutOfOrderAreInternalErrors) {
  opd_rt_init(0, nullptr, "rt", nullptr, 0);
  opd_set *s = opd_set_create("s", 10);
  opd_loop *slotA = nullptr, *slotB = nullptr;
  opd_loop *a = opd_loop_prepare(&slotA, "a", s, 0, nullptr);
  opd_loop *b = opd_loop_prepare(&slotB, "b", s, 0, nullptr);
  EXPECT_EXIT(opd_loop_end(a), ::testing::ExitedWithCode(1),
              ::testing::HasSubstr("rt: error: internal error: loop 'a' ends "
                                   "before it began"));
  EXPECT_EXIT(opd_loop_wait_halos(a), ::testing::ExitedWithCode(1),
              ::testing::HasSubstr("loop 'a' waits for halos before it "
                                   "began"));
  opd_loop_segment seg;
  EXPECT_EXIT(opd_loop_segment_get(a, 1, &seg), ::testing::ExitedWithCode(1),
              ::testing::HasSubstr("loop 'a' has no segment 1"));
  opd_loop_part part;
  EXPECT_EXIT(opd_loop_part_get(a, 0, &part), ::testing::ExitedWithCode(1),
              ::testing::HasSubstr("loop 'a' has no plan part 0"));
  opd_loop_begin(a);
  EXPECT_EXIT(opd_loop_begin(b), ::testing::ExitedWithCode(1),
              ::testing::HasSubstr("loop 'b' begins while loop 'a' is "
                                   "running"));
  opd_loop_end(a);
  opd_loop_begin(b);
  opd_loop_end(b);
}

} // namespace
