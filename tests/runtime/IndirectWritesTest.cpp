// IndirectWritesTest.cpp - `out`/`inout` through maps: the injectivity
// check and its cache, the ordered plan's invariants, and loops whose
// results are the sequential loop's at any thread count
// (docs/decisions/0280-indirect-writes-in-element-order.md).
// SPDX-License-Identifier: Apache-2.0
#include "core/Objects.h"
#include "core/Runtime.h"
#include "exec/Loop.h"
#include "exec/Plan.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <omp.h>

#include <map>
#include <random>
#include <set>

using namespace opdc::rt;
using opdc::rt::test::randomMap;

namespace {

class IndirectWritesTest : public ::testing::Test {
protected:
  void TearDown() override {
    opd_rt_finalize();
    omp_set_num_threads(2);
  }
};

// Every element in one block of its own; elements of one colour reach
// disjoint targets; each target's writers have increasing colours in
// ascending global number (`gid`: identity when empty).
void checkOrdered(const Plan &p, int64_t n, const std::vector<WrittenAccess> &w,
                  const std::vector<int64_t> &gid) {
  ASSERT_EQ(p.blockSize, 1);
  ASSERT_EQ(p.nblocks, n);
  ASSERT_EQ(p.colourOffsets.back(), n);
  std::vector<int> seen(std::size_t(n), 0);
  for (int32_t c = 0; c < p.ncolours; ++c) {
    std::set<std::pair<const opd_set *, int32_t>> touched;
    for (int64_t k = p.colourOffsets[std::size_t(c)];
         k < p.colourOffsets[std::size_t(c) + 1]; ++k) {
      const int64_t e = p.blocks[std::size_t(k)];
      ++seen[std::size_t(e)];
      ASSERT_EQ(p.blockColour[std::size_t(e)], c);
      std::set<std::pair<const opd_set *, int32_t>> mine;
      for (const WrittenAccess &a : w)
        mine.insert({a.map->to, a.map->data[e * a.map->arity + a.idx]});
      for (const auto &t : mine)
        ASSERT_EQ(touched.count(t), 0u) << "colour " << c << " element " << e;
      touched.insert(mine.begin(), mine.end());
    }
  }
  for (int v : seen)
    ASSERT_EQ(v, 1);
  // Per target: (global number, colour) of its writers.
  std::map<std::pair<const opd_set *, int32_t>,
           std::vector<std::pair<int64_t, int32_t>>>
      writers;
  for (int64_t e = 0; e < n; ++e) {
    std::set<std::pair<const opd_set *, int32_t>> mine;
    for (const WrittenAccess &a : w)
      mine.insert({a.map->to, a.map->data[e * a.map->arity + a.idx]});
    for (const auto &t : mine)
      writers[t].push_back({gid.empty() ? e : gid[std::size_t(e)],
                            p.blockColour[std::size_t(e)]});
  }
  for (auto &[t, v] : writers) {
    std::sort(v.begin(), v.end());
    for (std::size_t i = 1; i < v.size(); ++i)
      ASSERT_LT(v[i - 1].second, v[i].second) << "target " << t.second;
  }
}

TEST_F(IndirectWritesTest, OrderedPlanFollowsElementOrder) {
  opd_set *edges = opd_set_create("edges", 20000);
  opd_set *nodes = opd_set_create("nodes", 3000);
  opd_map *m = randomMap("m", edges, nodes, 2, 3);
  std::vector<WrittenAccess> w = {{m, 0}, {m, 1}};
  Plan p = buildOrderedPlan(edges, 0, edges->size, w);
  checkOrdered(p, edges->size, w, {});
  EXPECT_GT(p.ncolours, 1);
}

TEST_F(IndirectWritesTest, OrderedPlanFollowsGlobalNumbers) {
  // Stored elements in another order than their global numbers (a
  // renumbered or partitioned set): the order is the global one.
  opd_set *edges = opd_set_create("edges", 5000);
  opd_set *nodes = opd_set_create("nodes", 400);
  opd_map *m = randomMap("m", edges, nodes, 3, 5);
  std::vector<int64_t> gid(std::size_t(edges->size));
  for (int64_t e = 0; e < edges->size; ++e)
    gid[std::size_t(e)] = (e * 7919) % edges->size;
  edges->globalIds = gid;
  std::vector<WrittenAccess> w = {{m, 0}, {m, 2}};
  Plan p = buildOrderedPlan(edges, 0, edges->size, w);
  edges->globalIds.clear();
  checkOrdered(p, edges->size, w, gid);
}

TEST_F(IndirectWritesTest, InjectivityIsCachedUntilTheMapChanges) {
  opd_set *from = opd_set_create("from", 1000);
  opd_set *to = opd_set_create("to", 1000);
  opd_map *perm = opd_map_create("perm", from, to, 2);
  for (int64_t i = 0; i < 1000; ++i) {
    perm->data[2 * i] = int32_t((i * 37 + 11) % 1000);
    perm->data[2 * i + 1] = int32_t((i * 37 + 11) % 1000); // the same target
  }
  const int64_t before = injectivityChecks();
  // One element reaching one target twice is still injective.
  EXPECT_TRUE(writesInjective(from, {{perm, 0}, {perm, 1}}, 1000));
  EXPECT_TRUE(writesInjective(from, {{perm, 1}, {perm, 0}}, 1000));
  EXPECT_EQ(injectivityChecks(), before + 1) << "the second call is cached";
  perm->data[2 * 5] = perm->data[2 * 6];
  ++perm->version;
  EXPECT_FALSE(writesInjective(from, {{perm, 0}, {perm, 1}}, 1000));
  EXPECT_EQ(injectivityChecks(), before + 2);
  // Index 0 alone: element 5 and 6 share a target.
  EXPECT_FALSE(writesInjective(from, {{perm, 0}}, 1000));
  // Elements [0, 5) only: injective.
  EXPECT_TRUE(writesInjective(from, {{perm, 0}}, 5));
}

struct OutCtx {
  const int32_t *map;
  int64_t *last;
  double *val;
};
// `out` of the element number to both targets; `inout` in a
// non-commutative update.
void outBody(void *ctx, int64_t begin, int64_t end, int64_t) {
  auto *c = static_cast<OutCtx *>(ctx);
  for (int64_t e = begin; e < end; ++e) {
    c->last[c->map[2 * e]] = e;
    c->last[c->map[2 * e + 1]] = e;
    double &v = c->val[c->map[2 * e]];
    v = v * 0.5 + double(e);
  }
}

TEST_F(IndirectWritesTest, NonInjectiveLoopIsTheSequentialLoop) {
  const int64_t ne = 200000, nn = 30000;
  opd_set *edges = opd_set_create("edges", ne);
  opd_set *nodes = opd_set_create("nodes", nn);
  opd_map *m = randomMap("m", edges, nodes, 2, 11);
  opd_dat *last = opd_dat_create("last", nodes, OPD_I64, 1);
  opd_dat *val = opd_dat_create("val", nodes, OPD_F64, 1);
  // The sequential loop.
  std::vector<int64_t> lastRef(std::size_t(nn), -1);
  std::vector<double> valRef(std::size_t(nn), 1.0);
  for (int64_t e = 0; e < ne; ++e) {
    lastRef[std::size_t(m->data[2 * e])] = e;
    lastRef[std::size_t(m->data[2 * e + 1])] = e;
    double &v = valRef[std::size_t(m->data[2 * e])];
    v = v * 0.5 + double(e);
  }
  opd_arg args[] = {
      {last, m, 0, OPD_ARG_INDIRECT, OPD_WRITE, 8},
      {last, m, 1, OPD_ARG_INDIRECT, OPD_WRITE, 8},
      {val, m, 0, OPD_ARG_INDIRECT, OPD_RW, 8},
  };
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    opd_loop *slot = nullptr;
    opd_loop *l = opd_loop_prepare(&slot, "mark", edges, 3, args);
    EXPECT_EQ(l->injective, 0);
    ASSERT_NE(l->plan, nullptr);
    EXPECT_TRUE(l->plan->ordered);
    const int64_t minus1 = -1;
    const double one = 1.0;
    opd_dat_fill(last, &minus1);
    opd_dat_fill(val, &one);
    OutCtx ctx{m->data, static_cast<int64_t *>(opd_dat_data(last)),
               static_cast<double *>(opd_dat_data(val))};
    opd_loop_run(l, outBody, &ctx);
    for (int64_t n = 0; n < nn; ++n) {
      ASSERT_EQ(ctx.last[n], lastRef[std::size_t(n)]) << "node " << n;
      ASSERT_EQ(ctx.val[n], valRef[std::size_t(n)]) << "node " << n;
    }
  }
}

TEST_F(IndirectWritesTest, InjectiveLoopRunsDirectly) {
  const int64_t n = 50000;
  opd_set *cells = opd_set_create("cells", n);
  opd_map *perm = opd_map_create("perm", cells, cells, 1);
  for (int64_t i = 0; i < n; ++i)
    perm->data[i] = int32_t((i * 7 + 3) % n);
  opd_dat *v = opd_dat_create("v", cells, OPD_I64, 1);
  opd_arg args[] = {{v, perm, 0, OPD_ARG_INDIRECT, OPD_WRITE, 8}};
  opd_loop *slot = nullptr;
  opd_loop *l = opd_loop_prepare(&slot, "place", cells, 1, args);
  EXPECT_EQ(l->injective, 1);
  EXPECT_EQ(l->plan, nullptr);
  // The map changes: the next prepare sees it and orders the loop.
  perm->data[1] = perm->data[0];
  ++perm->version;
  l = opd_loop_prepare(&slot, "place", cells, 1, args);
  EXPECT_EQ(l->injective, 0);
  ASSERT_NE(l->plan, nullptr);
  EXPECT_TRUE(l->plan->ordered);
}

TEST_F(IndirectWritesTest, PartsInStoredOrderAreRefusedWhenRenumbered) {
  // A backend running the parts itself (CUDA's sequential loops) runs
  // stored order: refused where that is not the global order.
  opd_set *edges = opd_set_create("edges", 1000);
  opd_set *nodes = opd_set_create("nodes", 100);
  opd_map *m = randomMap("m", edges, nodes, 1, 2);
  opd_dat *v = opd_dat_create("v", nodes, OPD_F64, 1);
  opd_arg args[] = {{v, m, 0, OPD_ARG_INDIRECT, OPD_WRITE, 8}};
  opd_loop *slot = nullptr;
  opd_loop *l = opd_loop_prepare(&slot, "mark", edges, 1, args);
  ASSERT_NE(l->plan, nullptr);
  opd_loop_part part;
  opd_loop_part_get(l, 0, &part); // stored order is the global one
  EXPECT_EQ(part.count, 1000);
  edges->globalIds.resize(1000);
  EXPECT_DEATH(opd_loop_part_get(l, 0, &part),
               "loop 'mark' writes through a map with 'out' or 'inout'");
  edges->globalIds.clear();
}

} // namespace
