// RenumberTest.cpp - Locality renumbering (lib/core/Renumber.cpp): the RCM
// order, maps and dats permuted consistently, files in the original
// numbering byte for byte.
// SPDX-License-Identifier: Apache-2.0
#include "core/Dist.h"
#include "core/Objects.h"
#include "core/Renumber.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>
#include <random>
#include <string>

using namespace opdc::rt;

namespace {

class RenumberTest : public ::testing::Test {
protected:
  void TearDown() override {
    opd_rt_finalize();
    setRenumberMethod(RenumberMethod::None);
  }
};

bool isPermutation(std::vector<int64_t> p) {
  std::sort(p.begin(), p.end());
  for (std::size_t i = 0; i < p.size(); ++i)
    if (p[i] != int64_t(i))
      return false;
  return true;
}

std::string slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// An nx x ny grid of quads with its nodes, cells and edges numbered at
// random (a mesh with no locality at all).
struct Mesh {
  opd_set *nodes, *cells, *edges;
  opd_map *pcell, *pedge, *pecell;
  opd_dat *x, *q, *w;
  // The maps as created (original numbering).
  std::vector<int32_t> cell0, edge0, ecell0;
};

Mesh shuffledGrid(int nx, int ny, uint32_t seed) {
  std::mt19937 rng(seed);
  auto shuffled = [&](int64_t n) {
    std::vector<int32_t> p(static_cast<std::size_t>(n));
    std::iota(p.begin(), p.end(), 0);
    std::shuffle(p.begin(), p.end(), rng);
    return p;
  };
  const int64_t nn = int64_t(nx + 1) * (ny + 1), nc = int64_t(nx) * ny;
  auto nodeId = shuffled(nn), cellId = shuffled(nc);
  auto node = [&](int i, int j) { return nodeId[std::size_t(j * (nx + 1) + i)]; };
  auto cell = [&](int i, int j) { return cellId[std::size_t(j * nx + i)]; };
  Mesh m;
  m.nodes = opd_set_create("nodes", nn);
  m.cells = opd_set_create("cells", nc);
  m.cell0.assign(std::size_t(nc * 4), 0);
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      int32_t *row = &m.cell0[std::size_t(cell(i, j)) * 4];
      row[0] = node(i, j);
      row[1] = node(i + 1, j);
      row[2] = node(i + 1, j + 1);
      row[3] = node(i, j + 1);
    }
  // Interior edges between horizontally neighbouring cells.
  std::vector<std::array<int32_t, 4>> edges;
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i + 1 < nx; ++i)
      edges.push_back({node(i + 1, j), node(i + 1, j + 1), cell(i, j),
                       cell(i + 1, j)});
  std::shuffle(edges.begin(), edges.end(), rng);
  m.edges = opd_set_create("edges", int64_t(edges.size()));
  for (auto &e : edges) {
    m.edge0.insert(m.edge0.end(), {e[0], e[1]});
    m.ecell0.insert(m.ecell0.end(), {e[2], e[3]});
  }
  m.pcell = opd_map_create("pcell", m.cells, m.nodes, 4);
  m.pedge = opd_map_create("pedge", m.edges, m.nodes, 2);
  m.pecell = opd_map_create("pecell", m.edges, m.cells, 2);
  std::copy(m.cell0.begin(), m.cell0.end(), m.pcell->data);
  std::copy(m.edge0.begin(), m.edge0.end(), m.pedge->data);
  std::copy(m.ecell0.begin(), m.ecell0.end(), m.pecell->data);
  // Dats holding their element's original index (x: twice, q: 4 times).
  m.x = opd_dat_create("x", m.nodes, OPD_F64, 2);
  m.q = opd_dat_create("q", m.cells, OPD_F64, 4);
  m.w = opd_dat_create("w", m.edges, OPD_I32, 1);
  auto *x = static_cast<double *>(m.x->data);
  for (int64_t i = 0; i < nn * 2; ++i)
    x[i] = double(i / 2) + 0.25 * double(i % 2);
  auto *q = static_cast<double *>(m.q->data);
  for (int64_t i = 0; i < nc * 4; ++i)
    q[i] = double(i / 4) + 0.125 * double(i % 4);
  auto *w = static_cast<int32_t *>(m.w->data);
  for (int64_t i = 0; i < m.edges->size; ++i)
    w[i] = int32_t(i);
  return m;
}

TEST_F(RenumberTest, RCMOfAShuffledPathHasBandwidthOne) {
  // A path 0 - 1 - ... - 99 under a random labelling.
  const int n = 100;
  std::vector<int32_t> label(n);
  std::iota(label.begin(), label.end(), 0);
  std::shuffle(label.begin(), label.end(), std::mt19937(7));
  std::vector<std::vector<int32_t>> nb(n);
  for (int i = 0; i + 1 < n; ++i) {
    nb[std::size_t(label[std::size_t(i)])].push_back(label[std::size_t(i) + 1]);
    nb[std::size_t(label[std::size_t(i) + 1])].push_back(label[std::size_t(i)]);
  }
  std::vector<int64_t> off{0};
  std::vector<int32_t> adj;
  for (auto &v : nb) {
    adj.insert(adj.end(), v.begin(), v.end());
    off.push_back(int64_t(adj.size()));
  }
  std::vector<int32_t> order = reverseCuthillMcKee(off, adj);
  ASSERT_EQ(order.size(), std::size_t(n));
  EXPECT_TRUE(isPermutation({order.begin(), order.end()}));
  EXPECT_GT(graphBandwidth(off, adj, {}), 10);
  EXPECT_EQ(graphBandwidth(off, adj, order), 1);
}

TEST_F(RenumberTest, MapsDatsAndFilesKeepTheOriginalMeaning) {
  Mesh m = shuffledGrid(30, 20, 3);
  const std::string before = ::testing::TempDir() + "renumber_before.h5";
  const std::string after = ::testing::TempDir() + "renumber_after.h5";
  opd_dat *dats[3] = {m.x, m.q, m.w};
  opd_dat_write(dats, 3, before.c_str());

  setRenumberMethod(RenumberMethod::RCM);
  dist::partitionSets(); // one process: renumbers
  ASSERT_TRUE(setsRenumbered());
  for (opd_set *s : {m.nodes, m.cells, m.edges}) {
    ASSERT_EQ(s->globalIds.size(), std::size_t(s->size)) << s->name;
    EXPECT_TRUE(isPermutation(s->globalIds)) << s->name;
  }
  const auto &gn = m.nodes->globalIds, &gc = m.cells->globalIds,
             &ge = m.edges->globalIds;
  // Every map row, read through the original ids, is the original row.
  for (int64_t c = 0; c < m.cells->size; ++c)
    for (int k = 0; k < 4; ++k)
      ASSERT_EQ(gn[std::size_t(m.pcell->data[c * 4 + k])],
                m.cell0[std::size_t(gc[std::size_t(c)] * 4 + k)]);
  for (int64_t e = 0; e < m.edges->size; ++e)
    for (int k = 0; k < 2; ++k) {
      ASSERT_EQ(gn[std::size_t(m.pedge->data[e * 2 + k])],
                m.edge0[std::size_t(ge[std::size_t(e)] * 2 + k)]);
      ASSERT_EQ(gc[std::size_t(m.pecell->data[e * 2 + k])],
                m.ecell0[std::size_t(ge[std::size_t(e)] * 2 + k)]);
    }
  // opd_map_values: original indices, rows in the new order.
  const int32_t *values = opd_map_values(m.pedge);
  for (int64_t e = 0; e < m.edges->size * 2; ++e)
    ASSERT_EQ(values[e], m.edge0[std::size_t(ge[std::size_t(e / 2)] * 2 +
                                             std::size_t(e % 2))]);
  // Dats moved with their elements.
  const auto *x = static_cast<const double *>(m.x->data);
  for (int64_t i = 0; i < m.nodes->size; ++i)
    ASSERT_EQ(x[i * 2 + 1], double(gn[std::size_t(i)]) + 0.25);
  const auto *w = static_cast<const int32_t *>(m.w->data);
  for (int64_t i = 0; i < m.edges->size; ++i)
    ASSERT_EQ(w[i], int32_t(ge[std::size_t(i)]));
  // Consecutive cells now share nodes: the node graph's bandwidth fell.
  int64_t spread = 0;
  for (int64_t c = 0; c < m.cells->size; ++c) {
    auto row = m.pcell->data + c * 4;
    spread = std::max<int64_t>(spread, *std::max_element(row, row + 4) -
                                           *std::min_element(row, row + 4));
  }
  EXPECT_LT(spread, 3 * 31);

  // Written in the original numbering: the same bytes as before.
  opd_dat_write(dats, 3, after.c_str());
  EXPECT_EQ(slurp(before), slurp(after));
  // Read back into the new numbering.
  opd_dat *x2 = opd_dat_from_file("x", m.nodes, OPD_F64, 2, before.c_str());
  EXPECT_EQ(0, std::memcmp(x2->data, m.x->data,
                           std::size_t(m.nodes->size) * 2 * sizeof(double)));
  std::remove(before.c_str());
  std::remove(after.c_str());
}

TEST_F(RenumberTest, AutoRenumbersOnlyAPoorNumbering) {
  {
    Mesh m = shuffledGrid(40, 30, 4);
    setRenumberMethod(RenumberMethod::Auto);
    dist::partitionSets();
    EXPECT_TRUE(setsRenumbered());
    EXPECT_FALSE(m.nodes->globalIds.empty());
    opd_rt_finalize();
  }
  // Row by row, as a structured generator numbers it: kept.
  const int nx = 40, ny = 30;
  opd_set *nodes = opd_set_create("nodes", (nx + 1) * (ny + 1));
  opd_set *cells = opd_set_create("cells", nx * ny);
  opd_map *pcell = opd_map_create("pcell", cells, nodes, 4);
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      int32_t *row = pcell->data + (j * nx + i) * 4;
      row[0] = j * (nx + 1) + i;
      row[1] = row[0] + 1;
      row[2] = row[1] + nx + 1;
      row[3] = row[0] + nx + 1;
    }
  setRenumberMethod(RenumberMethod::Auto);
  dist::partitionSets();
  EXPECT_TRUE(nodes->globalIds.empty());
  EXPECT_TRUE(cells->globalIds.empty());
  EXPECT_EQ(pcell->data[4], 1);
}

TEST_F(RenumberTest, NoneLeavesEverythingInPlace) {
  Mesh m = shuffledGrid(6, 5, 1);
  setRenumberMethod(RenumberMethod::None);
  dist::partitionSets();
  EXPECT_FALSE(setsRenumbered());
  EXPECT_TRUE(m.nodes->globalIds.empty());
  EXPECT_TRUE(std::equal(m.cell0.begin(), m.cell0.end(), m.pcell->data));
}

TEST_F(RenumberTest, MapCreatedAfterRenumberingIsRefused) {
  EXPECT_EXIT(
      {
        Mesh m = shuffledGrid(6, 5, 2);
        setRenumberMethod(RenumberMethod::RCM);
        dist::partitionSets();
        opd_map_create("late", m.edges, m.nodes, 2);
      },
      ::testing::ExitedWithCode(1),
      "map 'late': maps must be created before the first loop when the sets "
      "are renumbered");
}

} // namespace
