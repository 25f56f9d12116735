// PlanTest.cpp - Block-colouring plans and their super-block schedules:
// validity, determinism, caching.
// SPDX-License-Identifier: Apache-2.0
#include "exec/Plan.h"
#include "core/Objects.h"

#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <omp.h>

#include <cstdlib>
#include <map>
#include <random>
#include <set>

using namespace opdc::rt;
using opdc::rt::test::randomMap;

namespace {

class PlanTest : public ::testing::Test {
protected:
  void SetUp() override { setPlanKind(PlanKind::Colour); }
  void TearDown() override {
    opd_rt_finalize();
    setPlanKind(DefaultPlanKind);
  }
};

// Checks the plan's invariants: every element in exactly one block, blocks
// grouped by colour in ascending order, and no written target element
// reached by two blocks of one colour (targets of maps into the same set
// count as the same element).
void checkPlan(const Plan &p, int64_t n, const std::vector<WrittenAccess> &w) {
  ASSERT_EQ(p.setSize, n);
  ASSERT_EQ(p.nblocks, (n + p.blockSize - 1) / p.blockSize);
  ASSERT_EQ(p.colourOffsets.size(), std::size_t(p.ncolours) + 1);
  ASSERT_EQ(p.colourOffsets.front(), 0);
  ASSERT_EQ(p.colourOffsets.back(), p.nblocks);
  std::vector<int> seen(std::size_t(n), 0);
  std::vector<int> blockSeen(std::size_t(p.nblocks), 0);
  for (int32_t c = 0; c < p.ncolours; ++c) {
    std::set<std::pair<const opd_set *, int32_t>> touched;
    int64_t previous = -1;
    for (int64_t k = p.colourOffsets[std::size_t(c)];
         k < p.colourOffsets[std::size_t(c) + 1]; ++k) {
      int64_t b = p.blocks[std::size_t(k)];
      ASSERT_GT(b, previous) << "blocks of a colour in block order";
      previous = b;
      ASSERT_EQ(p.blockColour[std::size_t(b)], c);
      ++blockSeen[std::size_t(b)];
      std::set<std::pair<const opd_set *, int32_t>> mine;
      for (int64_t e = b * p.blockSize; e < std::min((b + 1) * p.blockSize, n);
           ++e) {
        ++seen[std::size_t(e)];
        for (const WrittenAccess &a : w)
          mine.insert({a.map->to, a.map->data[e * a.map->arity + a.idx]});
      }
      for (const auto &t : mine)
        ASSERT_EQ(touched.count(t), 0u)
            << "colour " << c << " block " << b << " target " << t.second;
      touched.insert(mine.begin(), mine.end());
    }
  }
  for (int v : seen)
    ASSERT_EQ(v, 1);
  for (int v : blockSeen)
    ASSERT_EQ(v, 1);
}

TEST_F(PlanTest, RandomMapsValidAndDeterministic) {
  opd_set *edges = opd_set_create("edges", 20000);
  opd_set *nodes = opd_set_create("nodes", 5000);
  opd_map *m = randomMap("m", edges, nodes, 3, 1);
  std::vector<WrittenAccess> w = {{m, 0}, {m, 2}};
  Plan a = buildPlan(edges->size, PlanBlockSize, w);
  checkPlan(a, edges->size, w);
  EXPECT_GT(a.ncolours, 1);
  omp_set_num_threads(2);
  Plan b = buildPlan(edges->size, PlanBlockSize, w);
  EXPECT_EQ(a.blockColour, b.blockColour);
  EXPECT_EQ(a.blocks, b.blocks);
  EXPECT_EQ(a.colourOffsets, b.colourOffsets);
}

TEST_F(PlanTest, SmallBlocksManyColours) {
  // Dense random conflicts with tiny blocks need more than 64 colours: the
  // second pass of 64 colours must still give a valid plan.
  opd_set *edges = opd_set_create("edges", 30000);
  opd_set *nodes = opd_set_create("nodes", 300);
  opd_map *m = randomMap("m", edges, nodes, 2, 7);
  std::vector<WrittenAccess> w = {{m, 0}, {m, 1}};
  Plan p = buildPlan(edges->size, 16, w);
  checkPlan(p, edges->size, w);
  EXPECT_GT(p.ncolours, 64);
}

TEST_F(PlanTest, StructuredChainNeedsTwoColours) {
  // Edge i joins nodes i and i+1: neighbouring blocks share one node.
  const int64_t n = 100000;
  opd_set *edges = opd_set_create("edges", n);
  opd_set *nodes = opd_set_create("nodes", n + 1);
  opd_map *m = opd_map_create("chain", edges, nodes, 2);
  for (int64_t i = 0; i < n; ++i) {
    m->data[2 * i] = int32_t(i);
    m->data[2 * i + 1] = int32_t(i + 1);
  }
  std::vector<WrittenAccess> w = {{m, 0}, {m, 1}};
  Plan p = buildPlan(n, PlanBlockSize, w);
  checkPlan(p, n, w);
  EXPECT_EQ(p.ncolours, 2);
  for (int64_t b = 0; b < p.nblocks; ++b)
    EXPECT_EQ(p.blockColour[std::size_t(b)], b % 2);
}

TEST_F(PlanTest, StructuredGridCells) {
  // Cells of a 300 x 200 grid writing their four corner nodes.
  const int64_t nx = 300, ny = 200;
  opd_set *cells = opd_set_create("cells", nx * ny);
  opd_set *nodes = opd_set_create("nodes", (nx + 1) * (ny + 1));
  opd_map *m = opd_map_create("pcell", cells, nodes, 4);
  for (int64_t j = 0; j < ny; ++j)
    for (int64_t i = 0; i < nx; ++i) {
      int32_t *c = m->data + 4 * (j * nx + i);
      c[0] = int32_t(j * (nx + 1) + i);
      c[1] = c[0] + 1;
      c[2] = c[1] + int32_t(nx + 1);
      c[3] = c[0] + int32_t(nx + 1);
    }
  std::vector<WrittenAccess> w = {{m, 0}, {m, 1}, {m, 2}, {m, 3}};
  Plan p = buildPlan(cells->size, PlanBlockSize, w);
  checkPlan(p, cells->size, w);
  EXPECT_LE(p.ncolours, 3);
}

TEST_F(PlanTest, MapsIntoOneSetConflict) {
  // Each map alone is a permutation (one colour), but together block 0
  // reaches nodes 512..1023 through b, which block 1 reaches through a.
  const int64_t n = 2 * PlanBlockSize;
  opd_set *edges = opd_set_create("edges", n);
  opd_set *nodes = opd_set_create("nodes", n);
  opd_set *cells = opd_set_create("cells", n);
  opd_map *a = opd_map_create("a", edges, nodes, 1);
  opd_map *b = opd_map_create("b", edges, nodes, 1);
  opd_map *c = opd_map_create("c", edges, cells, 1);
  for (int64_t e = 0; e < n; ++e) {
    a->data[e] = int32_t(e);
    b->data[e] = int32_t((e + PlanBlockSize) % n);
    c->data[e] = b->data[e];
  }
  EXPECT_EQ(buildPlan(n, PlanBlockSize, {{a, 0}}).ncolours, 1);
  EXPECT_EQ(buildPlan(n, PlanBlockSize, {{b, 0}}).ncolours, 1);
  std::vector<WrittenAccess> ab = {{a, 0}, {b, 0}};
  Plan p = buildPlan(n, PlanBlockSize, ab);
  checkPlan(p, n, ab);
  EXPECT_EQ(p.ncolours, 2);
  // The same indices into another set do not conflict.
  EXPECT_EQ(buildPlan(n, PlanBlockSize, {{a, 0}, {c, 0}}).ncolours, 1);
}

TEST_F(PlanTest, EmptySet) {
  opd_set *edges = opd_set_create("edges", 0);
  opd_set *nodes = opd_set_create("nodes", 4);
  opd_map *m = opd_map_create("m", edges, nodes, 2);
  Plan p = buildPlan(0, PlanBlockSize, {{m, 0}});
  EXPECT_EQ(p.nblocks, 0);
  EXPECT_EQ(p.ncolours, 0);
  ASSERT_EQ(p.colourOffsets.size(), 1u);
}

TEST_F(PlanTest, CacheKeyedBySetAndSortedAccesses) {
  opd_set *edges = opd_set_create("edges", 3000);
  opd_set *nodes = opd_set_create("nodes", 1000);
  opd_map *m = randomMap("m", edges, nodes, 2, 3);
  int64_t before = plansBuilt();
  PlanEntry *p1 = getPlan(edges, {{m, 1}, {m, 0}});
  PlanEntry *p2 = getPlan(edges, {{m, 0}, {m, 1}, {m, 0}});
  EXPECT_EQ(p1, p2);
  EXPECT_EQ(plansBuilt(), before + 1);
  PlanEntry *p3 = getPlan(edges, {{m, 0}});
  EXPECT_NE(p1, p3);
  EXPECT_EQ(plansBuilt(), before + 2);
  // A changed map makes the plan stale; it is rebuilt on next use.
  ++m->version;
  EXPECT_FALSE(p1->current());
  EXPECT_EQ(getPlan(edges, {{m, 0}, {m, 1}}), p1);
  EXPECT_TRUE(p1->current());
  EXPECT_EQ(plansBuilt(), before + 3);
}

TEST_F(PlanTest, BadIndexInProgramFilledMapIsAnError) {
  opd_rt_init(0, nullptr, "rt", nullptr, 0);
  opd_set *edges = opd_set_create("edges", 10);
  opd_set *nodes = opd_set_create("nodes", 10);
  opd_map *m = opd_map_create("bad", edges, nodes, 2);
  m->data[7] = 99;
  EXPECT_EXIT(buildPlan(10, PlanBlockSize, {{m, 0}}),
              ::testing::ExitedWithCode(1),
              ::testing::HasSubstr(
                  "rt: error: map 'bad' (edges -> nodes): index 99 at [3][1] "
                  "is out of range for set 'nodes' of size 10\n"));
}

// Checks a super-block schedule of plan `p`: super-blocks are contiguous
// ranges of whole blocks covering the plan; every element is in exactly one
// run (own or cross) of its block, runs ascending; no two super-blocks' own
// elements share a target (phase 1 runs them concurrently); the blocks
// with cross elements appear once each, under their plan colour, ascending,
// and no two of one colour share a target through their cross elements
// (phase 2).
void checkSuper(const Plan &p, const SuperPlan &s,
                const std::vector<WrittenAccess> &w) {
  using Target = std::pair<const opd_set *, int32_t>;
  ASSERT_GE(s.nsuper, 1);
  ASSERT_EQ(s.superFirst.size(), std::size_t(s.nsuper) + 1);
  ASSERT_EQ(s.superFirst.front(), 0);
  ASSERT_EQ(s.superFirst.back(), p.nblocks);
  for (int32_t k = 0; k < s.nsuper; ++k)
    ASSERT_LT(s.superFirst[std::size_t(k)], s.superFirst[std::size_t(k) + 1]);
  ASSERT_EQ(s.ownOffsets.size(), std::size_t(p.nblocks) + 1);
  ASSERT_EQ(s.crossOffsets.size(), std::size_t(p.nblocks) + 1);
  const int64_t n = p.setSize - p.first;
  std::vector<int> seen(std::size_t(n), 0);
  std::vector<char> isCross(std::size_t(n), 0);
  auto visit = [&](const std::vector<ElementRun> &runs,
                   const std::vector<int64_t> &offsets, int64_t b, bool cross) {
    const int64_t lo = p.first + b * p.blockSize;
    const int64_t hi = std::min(lo + p.blockSize, p.setSize);
    int64_t previous = lo;
    for (int64_t r = offsets[std::size_t(b)]; r < offsets[std::size_t(b) + 1];
         ++r) {
      const ElementRun &run = runs[std::size_t(r)];
      ASSERT_GE(run.begin, previous) << "runs ascending in their block";
      ASSERT_LT(run.begin, run.end);
      ASSERT_LE(run.end, hi);
      previous = run.end;
      for (int64_t e = run.begin; e < run.end; ++e) {
        ++seen[std::size_t(e - p.first)];
        isCross[std::size_t(e - p.first)] = cross ? 1 : 0;
      }
    }
  };
  for (int64_t b = 0; b < p.nblocks; ++b) {
    visit(s.ownRuns, s.ownOffsets, b, false);
    visit(s.crossRuns, s.crossOffsets, b, true);
  }
  int64_t cross = 0;
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(seen[std::size_t(i)], 1) << "element " << p.first + i;
    cross += isCross[std::size_t(i)];
  }
  EXPECT_EQ(cross, s.crossElements);

  // Phase 1: each target reached by the own elements of one super-block.
  std::map<Target, int32_t> ownBy;
  for (int32_t k = 0; k < s.nsuper; ++k)
    for (int64_t b = s.superFirst[std::size_t(k)];
         b < s.superFirst[std::size_t(k) + 1]; ++b)
      for (int64_t r = s.ownOffsets[std::size_t(b)];
           r < s.ownOffsets[std::size_t(b) + 1]; ++r)
        for (int64_t e = s.ownRuns[std::size_t(r)].begin;
             e < s.ownRuns[std::size_t(r)].end; ++e)
          for (const WrittenAccess &a : w) {
            Target t{a.map->to, a.map->data[e * a.map->arity + a.idx]};
            auto [it, fresh] = ownBy.emplace(t, k);
            ASSERT_TRUE(fresh || it->second == k)
                << "target " << t.second << " of super-blocks " << it->second
                << " and " << k;
          }

  // Phase 2: the plan's colours restricted to the blocks with cross runs.
  ASSERT_EQ(s.crossColourOffsets.size(), std::size_t(p.ncolours) + 1);
  ASSERT_EQ(s.crossColourOffsets.back(), int64_t(s.crossBlocks.size()));
  std::set<int64_t> listed;
  for (int32_t c = 0; c < p.ncolours; ++c) {
    std::set<Target> touched;
    int64_t previous = -1;
    for (int64_t k = s.crossColourOffsets[std::size_t(c)];
         k < s.crossColourOffsets[std::size_t(c) + 1]; ++k) {
      const int64_t b = s.crossBlocks[std::size_t(k)];
      ASSERT_GT(b, previous);
      previous = b;
      ASSERT_EQ(p.blockColour[std::size_t(b)], c);
      ASSERT_LT(s.crossOffsets[std::size_t(b)],
                s.crossOffsets[std::size_t(b) + 1]);
      listed.insert(b);
      std::set<Target> mine;
      for (int64_t r = s.crossOffsets[std::size_t(b)];
           r < s.crossOffsets[std::size_t(b) + 1]; ++r)
        for (int64_t e = s.crossRuns[std::size_t(r)].begin;
             e < s.crossRuns[std::size_t(r)].end; ++e)
          for (const WrittenAccess &a : w)
            mine.insert({a.map->to, a.map->data[e * a.map->arity + a.idx]});
      for (const Target &t : mine)
        ASSERT_EQ(touched.count(t), 0u) << "colour " << c << " block " << b;
      touched.insert(mine.begin(), mine.end());
    }
  }
  for (int64_t b = 0; b < p.nblocks; ++b)
    EXPECT_EQ(listed.count(b),
              s.crossOffsets[std::size_t(b) + 1] > s.crossOffsets[std::size_t(b)]
                  ? 1u
                  : 0u);
}

opd_map *gridCellsToNodes(opd_set *cells, opd_set *nodes, int64_t nx,
                          int64_t ny) {
  opd_map *m = opd_map_create("pcell", cells, nodes, 4);
  for (int64_t j = 0; j < ny; ++j)
    for (int64_t i = 0; i < nx; ++i) {
      int32_t *c = m->data + 4 * (j * nx + i);
      c[0] = int32_t(j * (nx + 1) + i);
      c[1] = c[0] + 1;
      c[2] = c[1] + int32_t(nx + 1);
      c[3] = c[0] + int32_t(nx + 1);
    }
  return m;
}

TEST_F(PlanTest, SuperBlocksOfAGridLeaveFewCrossElements) {
  // Cells of a 300 x 200 grid writing their four corners: a super-block
  // shares nodes with its neighbours along one grid row only.
  const int64_t nx = 300, ny = 200;
  opd_set *cells = opd_set_create("cells", nx * ny);
  opd_set *nodes = opd_set_create("nodes", (nx + 1) * (ny + 1));
  opd_map *m = gridCellsToNodes(cells, nodes, nx, ny);
  std::vector<WrittenAccess> w = {{m, 0}, {m, 1}, {m, 2}, {m, 3}};
  Plan p = buildPlan(cells->size, PlanBlockSize, w);
  for (int32_t nsuper : {1, 2, 5, 8}) {
    SuperPlan s = buildSuperPlan(p, nsuper, w);
    ASSERT_EQ(s.nsuper, nsuper);
    checkSuper(p, s, w);
    // Each boundary between super-blocks: the cells of the rows on both
    // sides of a shared node row (at most 2 rows + the partial rows).
    EXPECT_LE(s.crossElements, (nsuper - 1) * 4 * nx) << nsuper;
    if (nsuper == 1)
      EXPECT_EQ(s.crossElements, 0);
    else
      EXPECT_GT(s.crossElements, 0);
  }
}

TEST_F(PlanTest, SuperBlocksOfRandomMapsAreValid) {
  // Random targets: nearly every element is cross; the schedule stays
  // valid, and more super-blocks than blocks are cut to one per block.
  opd_set *edges = opd_set_create("edges", 20000);
  opd_set *nodes = opd_set_create("nodes", 5000);
  opd_set *cells = opd_set_create("cells", 20000);
  opd_map *m = randomMap("m", edges, nodes, 3, 1);
  opd_map *c = randomMap("c", edges, cells, 1, 2);
  std::vector<WrittenAccess> w = {{m, 0}, {m, 2}, {c, 0}};
  Plan p = buildPlan(edges->size, PlanBlockSize, w);
  for (int32_t nsuper : {2, 3, 1000}) {
    SuperPlan s = buildSuperPlan(p, nsuper, w);
    EXPECT_EQ(s.nsuper, std::min<int64_t>(nsuper, p.nblocks));
    checkSuper(p, s, w);
  }
  // A range not starting at 0 (a part of a distributed set).
  Plan q = buildPlan(1000, 17000, 256, w);
  checkSuper(q, buildSuperPlan(q, 4, w), w);
}

TEST_F(PlanTest, SuperPlanIndependentOfThreads) {
  const int64_t nx = 200, ny = 150;
  opd_set *cells = opd_set_create("cells", nx * ny);
  opd_set *nodes = opd_set_create("nodes", (nx + 1) * (ny + 1));
  opd_map *m = gridCellsToNodes(cells, nodes, nx, ny);
  std::vector<WrittenAccess> w = {{m, 0}, {m, 1}, {m, 2}, {m, 3}};
  Plan p = buildPlan(cells->size, PlanBlockSize, w);
  omp_set_num_threads(1);
  SuperPlan a = buildSuperPlan(p, superBlockCount(p.nblocks), w);
  omp_set_num_threads(2);
  SuperPlan b = buildSuperPlan(p, superBlockCount(p.nblocks), w);
  EXPECT_EQ(a.nsuper, b.nsuper);
  EXPECT_EQ(a.superFirst, b.superFirst);
  EXPECT_EQ(a.ownRuns, b.ownRuns);
  EXPECT_EQ(a.crossRuns, b.crossRuns);
  EXPECT_EQ(a.crossBlocks, b.crossBlocks);
}

TEST_F(PlanTest, SuperBlockCount) {
  if (std::getenv("OPD_SUPERBLOCKS"))
    GTEST_SKIP() << "OPD_SUPERBLOCKS is set";
  EXPECT_EQ(superBlockCount(0), 0);
  EXPECT_EQ(superBlockCount(1), 1);
  EXPECT_EQ(superBlockCount(2 * MinBlocksPerSuper - 1), 1);
  EXPECT_EQ(superBlockCount(3 * MinBlocksPerSuper), 3);
  const int64_t big = superBlockCount(1 << 20);
  EXPECT_EQ(big, std::max(8, omp_get_num_procs()));
}

TEST_F(PlanTest, CachedPlanFollowsThePlanKind) {
  opd_set *edges = opd_set_create("edges", 30000);
  opd_set *nodes = opd_set_create("nodes", 30001);
  opd_map *m = opd_map_create("chain", edges, nodes, 2);
  for (int64_t i = 0; i < 30000; ++i) {
    m->data[2 * i] = int32_t(i);
    m->data[2 * i + 1] = int32_t(i + 1);
  }
  setPlanKind(PlanKind::Super);
  PlanEntry *e = getPlan(edges, {{m, 0}, {m, 1}});
  EXPECT_EQ(e->kind, PlanKind::Super);
  EXPECT_GT(e->plan.super.nsuper, 0);
  checkSuper(e->plan, e->plan.super, e->key);
  // Neighbouring super-blocks share one node: the two edges beside it.
  EXPECT_EQ(e->plan.super.crossElements, 2 * (e->plan.super.nsuper - 1));
  setPlanKind(PlanKind::Colour);
  EXPECT_FALSE(e->current());
  EXPECT_EQ(getPlan(edges, {{m, 0}, {m, 1}}), e);
  EXPECT_EQ(e->plan.super.nsuper, 0);
}

} // namespace
