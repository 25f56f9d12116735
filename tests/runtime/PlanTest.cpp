// PlanTest.cpp - Block-colouring plans: validity, determinism, caching.
// SPDX-License-Identifier: Apache-2.0
#include "exec/Plan.h"
#include "core/Objects.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <omp.h>

#include <random>
#include <set>

using namespace opdc::rt;

namespace {

class PlanTest : public ::testing::Test {
protected:
  void TearDown() override { opd_rt_finalize(); }
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

opd_map *randomMap(const char *name, opd_set *from, opd_set *to, int arity,
                   uint64_t seed) {
  opd_map *m = opd_map_create(name, from, to, arity);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> pick(0, int32_t(to->size - 1));
  for (int64_t i = 0; i < from->size * arity; ++i)
    m->data[i] = pick(rng);
  return m;
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

} // namespace
