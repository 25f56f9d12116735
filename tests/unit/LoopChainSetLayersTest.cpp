// LoopChainSetLayersTest.cpp - chainSetHaloLayers on generated set chains:
// the exec halo layers each loop of a chain runs, against a brute force
// over every assignment of layers and an element-by-element run on
// generated meshes with halos built as lib/mpi/Halo.cpp builds them.
// (The hand-written chains are in LoopChainTest.cpp.)
// SPDX-License-Identifier: Apache-2.0
#include "analysis/LoopChain.h"

#include "LowerTestHelpers.h"

#include "ir/IR.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

using namespace opdc;
using sematest::Lowered;

namespace {
// Generated set chains: sets a, b, c, a map of arity 2 between every
// ordered pair, dats d0 and d1 on a, d2 on b, d3 on c. Each loop runs over
// a set, reads one or two dats (directly when on its set, else through a
// map) and writes one (directly, out or inout, when on its set; else
// increments it through a map).
constexpr int NumSets = 3, NumSetDats = 4, Arity = 2;
const int DatSet[NumSetDats] = {0, 0, 1, 2};
const char *const SetName[NumSets] = {"a", "b", "c"};

struct SetAccess {
  int dat = 0;
  int idx = -1; ///< map index, -1 direct (the map: loop set -> dat's set)
};
struct GenSetLoop {
  int set = 0;
  std::vector<SetAccess> reads;
  SetAccess write;
  bool inout = false; ///< direct write is inout
};

std::string mapName(int from, int to) {
  return std::string(SetName[from]) + SetName[to];
}

std::string setChainProgram(const std::vector<GenSetLoop> &loops) {
  std::string s = "program gen\n";
  for (int k = 0; k < NumSets; ++k)
    s += std::string("set ") + SetName[k] + " size 16\n";
  for (int f = 0; f < NumSets; ++f)
    for (int t = 0; t < NumSets; ++t)
      if (f != t)
        s += "map " + mapName(f, t) + ": " + SetName[f] + " -> " + SetName[t] +
             " [2]\n";
  for (int d = 0; d < NumSetDats; ++d)
    s += "dat d" + std::to_string(d) + ": " + SetName[DatSet[d]] + " f64\n";
  auto ref = [](const GenSetLoop &l, const SetAccess &a) {
    std::string r = "d" + std::to_string(a.dat);
    if (a.idx >= 0)
      r += "[" + mapName(l.set, DatSet[a.dat]) + "[" + std::to_string(a.idx) +
           "]]";
    return r;
  };
  std::string main;
  for (size_t k = 0; k < loops.size(); ++k) {
    const GenSetLoop &l = loops[k];
    s += "kernel k" + std::to_string(k) + "(";
    std::string body = "1.0";
    main += "  loop k" + std::to_string(k) + " over " + SetName[l.set] + " (";
    for (size_t i = 0; i < l.reads.size(); ++i) {
      s += "r" + std::to_string(i) + ": f64, ";
      body += " + r" + std::to_string(i);
      main += ref(l, l.reads[i]) + ", ";
    }
    const bool inc = l.write.idx >= 0;
    s += std::string("w: ") +
         (inc       ? "inc"
          : l.inout ? "inout"
                    : "out") +
         " f64) {\n  w " +
         (inc       ? "+="
          : l.inout ? "*="
                    : "=") +
         " " + body + "\n}\n";
    main += ref(l, l.write) + ")\n";
  }
  return s + "main {\n" + main + "}\n";
}

std::vector<GenSetLoop> genSetChain(std::mt19937 &rng) {
  auto pick = [&](int n) {
    return int(std::uniform_int_distribution<int>(0, n - 1)(rng));
  };
  std::vector<GenSetLoop> loops(size_t(2 + pick(4)));
  for (GenSetLoop &l : loops) {
    l.set = pick(NumSets);
    auto access = [&](int dat) {
      SetAccess a;
      a.dat = dat;
      a.idx = DatSet[dat] == l.set ? -1 : pick(Arity);
      return a;
    };
    l.write = access(pick(NumSetDats));
    l.inout = pick(2) == 0;
    const int nreads = 1 + pick(2);
    for (int i = 0; i < nreads; ++i) {
      int d = pick(NumSetDats);
      if (d == l.write.dat)
        d = (d + 1) % NumSetDats; // a loop never reads what it writes
      l.reads.push_back(access(d));
    }
  }
  return loops;
}

// The runtime's dirty bits (lib/mpi/Exchange.cpp) over a chain run with
// `layers`, the dats valid `start[d]` layers deep before it: true when no
// loop needs an exchange.
bool runsWithoutExchange(const std::vector<GenSetLoop> &loops,
                         const std::vector<int64_t> &layers,
                         std::vector<int64_t> valid) {
  for (size_t k = 0; k < loops.size(); ++k) {
    const GenSetLoop &l = loops[k];
    auto kind = [](const SetAccess &a) {
      return a.idx >= 0 ? ArgKind::Indirect : ArgKind::Direct;
    };
    for (const SetAccess &a : l.reads)
      if (setAccessNeed(kind(a), AccessMode::Read, layers[k]) >
          valid[size_t(a.dat)])
        return false;
    const AccessMode wm = l.write.idx >= 0 ? AccessMode::Inc
                          : l.inout        ? AccessMode::ReadWrite
                                           : AccessMode::Write;
    if (setAccessNeed(kind(l.write), wm, layers[k]) >
        valid[size_t(l.write.dat)])
      return false;
    valid[size_t(l.write.dat)] = setWriteValid(kind(l.write), layers[k]);
  }
  return true;
}

// A generated mesh over the sets, each element owned by one of 3 ranks,
// and rank 0's halo layers built from their definition (lib/mpi/Halo.cpp):
// layer k holds the elements of other ranks, not in layers < k, that are
// stored at level k - 1 (k >= 2) or reach an element stored there through
// a map; level k is layers 0..k and their map targets (level 0: owned).
struct GenMesh {
  int size[NumSets];
  // targets[from][to][e * Arity + i]
  std::vector<int> targets[NumSets][NumSets];
  std::vector<int> owner[NumSets];
  std::vector<int64_t> layer[NumSets]; ///< 0 owned, k, K+1 non-exec, -1 none
};

GenMesh genMesh(std::mt19937 &rng, int64_t K) {
  auto pick = [&](int n) {
    return int(std::uniform_int_distribution<int>(0, n - 1)(rng));
  };
  GenMesh m;
  for (int s = 0; s < NumSets; ++s) {
    m.size[s] = 10 + pick(10);
    for (int e = 0; e < m.size[s]; ++e)
      m.owner[s].push_back(pick(3));
  }
  for (int f = 0; f < NumSets; ++f)
    for (int t = 0; t < NumSets; ++t)
      if (f != t)
        for (int e = 0; e < m.size[f] * Arity; ++e)
          m.targets[f][t].push_back(pick(m.size[t]));
  std::vector<std::vector<bool>> stored(NumSets);
  for (int s = 0; s < NumSets; ++s) {
    m.layer[s].assign(size_t(m.size[s]), -1);
    stored[s].assign(size_t(m.size[s]), false);
    for (int e = 0; e < m.size[s]; ++e)
      if (m.owner[s][size_t(e)] == 0)
        m.layer[s][size_t(e)] = 0, stored[s][size_t(e)] = true;
  }
  auto addTargets = [&]() {
    for (int f = 0; f < NumSets; ++f)
      for (int t = 0; t < NumSets; ++t)
        if (f != t)
          for (int e = 0; e < m.size[f]; ++e)
            if (m.layer[f][size_t(e)] >= 0 && m.layer[f][size_t(e)] <= K)
              for (int i = 0; i < Arity; ++i)
                stored[t][size_t(m.targets[f][t][size_t(e * Arity + i)])] =
                    true;
  };
  for (int64_t k = 1; k <= K; ++k) {
    std::vector<std::vector<bool>> level = stored; // level k - 1
    for (int s = 0; s < NumSets; ++s)
      for (int e = 0; e < m.size[s]; ++e) {
        if (m.layer[s][size_t(e)] >= 0)
          continue;
        bool in = k >= 2 && level[s][size_t(e)];
        for (int t = 0; t < NumSets; ++t)
          if (t != s)
            for (int i = 0; i < Arity; ++i)
              in = in ||
                   level[t][size_t(m.targets[s][t][size_t(e * Arity + i)])];
        if (in)
          m.layer[s][size_t(e)] = k;
      }
    addTargets();
  }
  for (int s = 0; s < NumSets; ++s)
    for (int e = 0; e < m.size[s]; ++e)
      if (stored[s][size_t(e)] && m.layer[s][size_t(e)] < 0)
        m.layer[s][size_t(e)] = K + 1;
  return m;
}

// Runs the chain element by element on rank 0 of `m`: each loop over the
// elements of layers 0..layers[k]; a value is right when every value it
// was computed from was (an increment's target: its old value and every
// element of any rank that increments it, run here with right inputs); a
// halo element a loop does not run holds a stale value after it writes the
// dat. Before the chain dat d is right on the layers <= depth[d] (all for
// depth >= K). Returns "" or the first owned value that is wrong.
std::string runOnMesh(const std::vector<GenSetLoop> &loops, const GenMesh &m,
                      const std::vector<int64_t> &layers,
                      const std::vector<int64_t> &depth, int64_t K) {
  std::vector<std::vector<bool>> right(NumSetDats);
  for (int d = 0; d < NumSetDats; ++d) {
    const int s = DatSet[d];
    right[size_t(d)].assign(size_t(m.size[s]), false);
    for (int e = 0; e < m.size[s]; ++e) {
      const int64_t lay = m.layer[s][size_t(e)];
      right[size_t(d)][size_t(e)] =
          lay == 0 ||
          (lay > 0 && (depth[size_t(d)] >= K || lay <= depth[size_t(d)]));
    }
  }
  for (size_t k = 0; k < loops.size(); ++k) {
    const GenSetLoop &l = loops[k];
    const int S = l.set, W = l.write.dat, T = DatSet[W];
    auto target = [&](const SetAccess &a, int e) {
      return a.idx < 0 ? e
                       : m.targets[S][DatSet[a.dat]][size_t(e * Arity + a.idx)];
    };
    auto runs = [&](int e) {
      const int64_t lay = m.layer[S][size_t(e)];
      return lay >= 0 && lay <= layers[k];
    };
    std::vector<bool> ok(size_t(m.size[S]), false);
    for (int e = 0; e < m.size[S]; ++e) {
      if (!runs(e))
        continue;
      bool in = true;
      for (const SetAccess &a : l.reads)
        in = in && right[size_t(a.dat)][size_t(target(a, e))];
      ok[size_t(e)] = in;
    }
    std::vector<bool> next(size_t(m.size[T]), false);
    if (l.write.idx < 0) {
      for (int e = 0; e < m.size[S]; ++e)
        next[size_t(e)] = runs(e) && ok[size_t(e)] &&
                          (!l.inout || right[size_t(W)][size_t(e)]);
    } else {
      // Every element of any rank that increments t must run here.
      std::vector<bool> complete(size_t(m.size[T]), true);
      for (int e = 0; e < m.size[S]; ++e)
        if (!runs(e) || !ok[size_t(e)])
          complete[size_t(target(l.write, e))] = false;
      for (int t = 0; t < m.size[T]; ++t)
        next[size_t(t)] = complete[size_t(t)] && right[size_t(W)][size_t(t)];
    }
    right[size_t(W)] = next;
    for (int e = 0; e < m.size[T]; ++e)
      if (m.layer[T][size_t(e)] == 0 && !next[size_t(e)])
        return "loop k" + std::to_string(k) + " leaves owned element " +
               std::to_string(e) + " of d" + std::to_string(W) + " wrong";
  }
  return "";
}
} // namespace

// On generated chains: the layers are the least with which the runtime's
// dirty bits need no exchange inside the chain (brute force over every
// assignment of layers), and run element by element on generated meshes
// with halos built as lib/mpi/Halo.cpp builds them, every loop leaves every
// owned value it writes right (the rules are sound).
TEST(LoopChainSetLayers, MatchesBruteForceOnGeneratedChainsAndMeshes) {
  std::mt19937 rng(7);
  int64_t deepest = 0;
  for (int trial = 0; trial < 60; ++trial) {
    std::vector<GenSetLoop> loops = genSetChain(rng);
    std::string text = setChainProgram(loops);
    Lowered p(text);
    ASSERT_TRUE(p.ir) << text;
    std::vector<LoopChain> chains = findLoopChains(p.ir->main->body);
    ASSERT_EQ(chains.size(), 1u) << text;
    ChainSetLayers got = chainSetHaloLayers(chains[0]);
    ASSERT_EQ(got.notApplicable, "") << text;
    const size_t n = loops.size();
    ASSERT_EQ(got.layers.size(), n);
    std::vector<int64_t> depth(NumSetDats, 0);
    for (const ChainSetLayers::Exchange &e : got.exchanges)
      depth[size_t(e.dat->name[1] - '0')] = e.depth;
    // Brute force: every assignment of 0..MaxL layers (>= 1 for loops that
    // increment through maps), from the dats' exchanged depths; the least
    // that runs without exchange, componentwise.
    constexpr int64_t MaxL = 5;
    std::vector<int64_t> x(n, 0), least(n, MaxL + 1);
    bool any = false;
    std::vector<int64_t> all(NumSetDats, 1000); // exchanged before: any depth
    for (;;) {
      bool legal = true;
      for (size_t k = 0; k < n; ++k)
        legal = legal && (loops[k].write.idx < 0 || x[k] >= 1);
      if (legal && runsWithoutExchange(loops, x, all)) {
        any = true;
        for (size_t k = 0; k < n; ++k)
          least[k] = std::min(least[k], x[k]);
      }
      size_t k = 0;
      while (k < n && ++x[k] > MaxL)
        x[k++] = 0;
      if (k == n)
        break;
    }
    ASSERT_TRUE(any) << text;
    EXPECT_EQ(got.layers, least) << text;
    // ... and the least is itself feasible from the analysis's exchanges.
    std::vector<int64_t> start(NumSetDats, 0);
    for (int d = 0; d < NumSetDats; ++d)
      start[size_t(d)] =
          depth[size_t(d)] >= got.setLayers ? 1000 : depth[size_t(d)];
    EXPECT_TRUE(runsWithoutExchange(loops, got.layers, start)) << text;
    // Element by element, on meshes.
    for (int mesh = 0; mesh < 5; ++mesh) {
      const GenMesh m = genMesh(rng, got.setLayers);
      EXPECT_EQ(runOnMesh(loops, m, got.layers, depth, got.setLayers), "")
          << "mesh " << mesh << "\n"
          << text;
    }
    for (int64_t v : got.layers)
      deepest = std::max(deepest, v);
  }
  // Some generated chain needs 3 or more layers.
  EXPECT_GE(deepest, 3);
}
