// LoopChainTest.cpp - Loop chains: where they end, what they hold, and the
// fuse pass that rewrites them.
// SPDX-License-Identifier: Apache-2.0
#include "analysis/LoopChain.h"

#include "LowerTestHelpers.h"

#include "ir/IR.h"
#include "ir/Verifier.h"
#include "lower/Lower.h"
#include "passes/Pass.h"
#include "passes/loops/Fuse.h"

#include "llvm/Support/Casting.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

using namespace opdc;
using sematest::Lowered;

namespace {

const char *Header = R"(
program chains
param n: i32 = 8
set nodes size 10
set edges size 9
map e2n: edges -> nodes [2]
dat x, y: nodes f64
dat w: edges f64
block grid[2]
stencil point = [(0, 0)]
stencil cross = [(0, 0), (1, 0), (-1, 0), (0, 1), (0, -1)]
dat u, u2: grid f64 size [n, n] halo 1
kernel setx(x: out f64) { x = 1.0 }
kernel copy(x: f64, y: out f64) { y = x }
kernel diff(x0: f64, x1: f64, w: out f64) { w = x1 - x0 }
kernel total(w: f64, s: sum f64) { s += w }
kernel jacobi(u: f64 @ cross, u2: out f64 @ point) {
  u2(0, 0) = 0.25 * (u(-1, 0) + u(1, 0) + u(0, -1) + u(0, 1))
}
kernel scale(u: inout f64 @ point) { u(0, 0) *= 0.5 }
kernel spread(w: f64, y0: inc f64) { y0 += w }
)";

std::string program(const std::string &main) {
  return std::string(Header) + "main {\n" + main + "}\n";
}

std::vector<std::string> names(const LoopChain &c) {
  std::vector<std::string> v;
  for (const ir::ParLoopStmt *l : c.loops)
    v.push_back(l->kernel->name);
  return v;
}

unsigned countLoops(const ir::Body &b) {
  unsigned n = 0;
  for (const ir::StmtPtr &s : b.stmts)
    n += llvm::isa<ir::ParLoopStmt>(s.get());
  return n;
}

} // namespace

TEST(LoopChain, DeclarationsStayReductionUseEnds) {
  Lowered p(program(R"(
  loop setx over nodes (x)
  var s = 0.0
  loop copy over nodes (x, y)
  loop diff over edges (x[e2n[0]], x[e2n[1]], w)
  loop total over edges (w, s)
  let t = s + 1.0
  loop total over edges (w, s)
  print(t)
)"));
  ASSERT_TRUE(p.ir);
  std::vector<LoopChain> chains = findLoopChains(p.ir->main->body);
  ASSERT_EQ(chains.size(), 2u);
  EXPECT_EQ(names(chains[0]),
            (std::vector<std::string>{"setx", "copy", "diff", "total"}));
  EXPECT_EQ(chains[0].hostStmts, std::vector<size_t>{1});
  EXPECT_EQ(chains[0].end, ChainEnd::ReductionUse);
  EXPECT_EQ(chains[0].endStmt, 5u);
  EXPECT_EQ(p.ir->main->vars[unsigned(chains[0].endVar)].name, "s");
  EXPECT_EQ(names(chains[1]), std::vector<std::string>{"total"});
  EXPECT_EQ(chains[1].end, ChainEnd::Print);
}

TEST(LoopChain, EveryHostBarrierEndsAChain) {
  Lowered p(program(R"(
  loop setx over nodes (x)
  swap(x, y)
  loop setx over nodes (x)
  let t0 = wtime()
  loop setx over nodes (x)
  for i in 0..2 {
    loop copy over nodes (x, y)
    loop setx over nodes (x)
  }
  loop setx over nodes (x)
)"));
  ASSERT_TRUE(p.ir);
  std::vector<LoopChain> top = findLoopChains(p.ir->main->body);
  ASSERT_EQ(top.size(), 4u);
  EXPECT_EQ(top[0].end, ChainEnd::Swap);
  EXPECT_EQ(top[1].end, ChainEnd::Clock);
  EXPECT_EQ(top[2].end, ChainEnd::ControlFlow);
  EXPECT_EQ(top[3].end, ChainEnd::EndOfBody);
  EXPECT_EQ(top[3].endStmt, p.ir->main->body.stmts.size());
  // With nested bodies, in source order: the for body's chain third.
  std::vector<LoopChain> all = findAllLoopChains(*p.ir->main);
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(names(all[3]), (std::vector<std::string>{"copy", "setx"}));
  EXPECT_EQ(all[3].end, ChainEnd::EndOfBody);
}

TEST(LoopChain, DatAccessesSayWhoAndHow) {
  Lowered p(program(R"(
  loop setx over nodes (x)
  loop diff over edges (x[e2n[0]], x[e2n[1]], w)
  loop jacobi over grid[1..n - 1, 1..n - 1] (u, u2)
  loop scale over grid[1..n - 1, 1..n - 1] (u2)
)"));
  ASSERT_TRUE(p.ir);
  std::vector<LoopChain> chains = findLoopChains(p.ir->main->body);
  ASSERT_EQ(chains.size(), 1u);
  const LoopChain &c = chains[0];
  const ChainDat *x = c.find(p.ir->findDat("x"));
  ASSERT_NE(x, nullptr);
  EXPECT_TRUE(x->written());
  ASSERT_EQ(x->accesses.size(), 3u);
  EXPECT_EQ(x->accesses[0].loop, 0u);
  EXPECT_EQ(x->accesses[0].mode, AccessMode::Write);
  EXPECT_TRUE(x->accesses[0].centre);
  EXPECT_EQ(x->accesses[2].kind, ArgKind::Indirect);
  EXPECT_EQ(x->accesses[2].mapIndex, 1);
  EXPECT_FALSE(x->accesses[2].centre);

  const ChainDat *u = c.find(p.ir->findDat("u"));
  ASSERT_NE(u, nullptr);
  EXPECT_FALSE(u->written());
  ASSERT_EQ(u->accesses.size(), 1u);
  EXPECT_FALSE(u->accesses[0].centre);
  EXPECT_EQ(u->accesses[0].offset, (std::vector<int64_t>{1, 0}));

  const ChainDat *u2 = c.find(p.ir->findDat("u2"));
  ASSERT_NE(u2, nullptr);
  ASSERT_EQ(u2->accesses.size(), 2u);
  EXPECT_TRUE(u2->accesses[0].centre); // @ point: the centre only
  EXPECT_EQ(u2->accesses[1].loop, 3u);
  EXPECT_EQ(u2->accesses[1].mode, AccessMode::ReadWrite);
  EXPECT_EQ(c.find(p.ir->findDat("y")), nullptr);
  EXPECT_EQ(describeChainDats(c).substr(0, 48),
            "'x': 'setx' out, 'diff' read via e2n[0], 'diff' ");
}

TEST(LoopChain, SlotsOfLoopsAndHostStatements) {
  Lowered p(program(R"(
  var s = 0.0
  let k = 2
  loop total over edges (w, s)
  s = s + f64(k)
)"));
  ASSERT_TRUE(p.ir);
  const ir::Body &b = p.ir->main->body;
  auto *loop = llvm::cast<ir::ParLoopStmt>(b.stmts[2].get());
  EXPECT_EQ(loopSlotsUsed(*loop), std::vector<unsigned>{0});
  EXPECT_EQ(hostSlotsUsed(*b.stmts[3]), (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(hostSlotsUsed(*b.stmts[1]), std::vector<unsigned>{1});
}

TEST(FusePass, FusesPointwiseAndRefusesOffsets) {
  Lowered p(program(R"(
  loop setx over nodes (x)
  loop copy over nodes (x, y)
  loop jacobi over grid[1..n - 1, 1..n - 1] (u, u2)
  loop scale over grid[1..n - 1, 1..n - 1] (u2)
  loop jacobi over grid[1..n - 1, 1..n - 1] (u2, u)
)"));
  ASSERT_TRUE(p.ir);
  PassStatistics stats;
  PassContext ctx{p.checked.diags, stats, nullptr};
  EXPECT_TRUE(fuseLoops(*p.ir, ctx));
  std::string why;
  EXPECT_TRUE(verifyIR(*p.ir, why)) << why;
  // setx+copy, jacobi+scale; refused: jacobi after copy (another space)
  // and the second jacobi (it reads u2 at offsets).
  EXPECT_EQ(countLoops(p.ir->main->body), 3u);
  EXPECT_EQ(stats.get("fuse", "groups"), 2);
  EXPECT_EQ(stats.get("fuse", "fused"), 2);
  EXPECT_EQ(stats.get("fuse", "refused"), 2);
  ir::Function *k = p.ir->findKernel("jacobi+scale");
  ASSERT_NE(k, nullptr);
  ASSERT_EQ(k->kernelParams.size(), 2u);
  EXPECT_EQ(k->kernelParams[1].mode, AccessMode::ReadWrite);
  EXPECT_NE(p.ir->findKernel("setx+copy"), nullptr);
}

TEST(FusePass, SameGroupTwiceSharesOneKernel) {
  Lowered p(program(R"(
  loop setx over nodes (x)
  loop copy over nodes (x, y)
  print(1)
  loop setx over nodes (x)
  loop copy over nodes (x, y)
)"));
  ASSERT_TRUE(p.ir);
  PassStatistics stats;
  PassContext ctx{p.checked.diags, stats, nullptr};
  size_t kernels = p.ir->kernels.size();
  EXPECT_TRUE(fuseLoops(*p.ir, ctx));
  EXPECT_EQ(p.ir->kernels.size(), kernels + 1);
  EXPECT_EQ(countLoops(p.ir->main->body), 2u);
}

// Loops with increments through maps fuse for the CUDA backend only
// (TargetQueries::fuseIncrements, decision 0400), and never with a loop
// that reaches what they increment (rule 3b).
TEST(FusePass, IncrementsFuseOnCUDAOnly) {
  const std::string src = program(R"(
  loop diff over edges (x[e2n[0]], x[e2n[1]], w)
  loop spread over edges (w, y[e2n[0]])
  loop diff over edges (y[e2n[0]], y[e2n[1]], w)
)");
  for (Backend backend : {Backend::CPU, Backend::CUDA}) {
    Lowered p(src);
    ASSERT_TRUE(p.ir);
    PassStatistics stats;
    PassContext ctx{p.checked.diags, stats, nullptr};
    TargetRequest r;
    r.backend = backend;
    ctx.backend = TargetQueries(r);
    const bool cuda = backend == Backend::CUDA;
    EXPECT_EQ(ctx.backend.fuseIncrements(), cuda);
    EXPECT_EQ(fuseLoops(*p.ir, ctx), cuda);
    std::string why;
    EXPECT_TRUE(verifyIR(*p.ir, why)) << why;
    EXPECT_EQ(countLoops(p.ir->main->body), cuda ? 2u : 3u);
    EXPECT_EQ(p.ir->findKernel("diff+spread") != nullptr, cuda);
  }
}

//===----------------------------------------------------------------------===//
// Halo depths for communication avoidance, against brute force
//===----------------------------------------------------------------------===//

namespace {

struct StencilDef {
  const char *name;
  std::vector<std::pair<int, int>> points;
};

const std::vector<StencilDef> &stencilDefs() {
  static const std::vector<StencilDef> defs = {
      {"point", {{0, 0}}},
      {"cross", {{0, 0}, {1, 0}, {-1, 0}, {0, 1}, {0, -1}}},
      {"east", {{0, 0}, {1, 0}}},
      {"south2", {{0, 0}, {0, -2}}},
      {"skew", {{0, 0}, {1, 1}, {-1, 0}}},
  };
  return defs;
}

/// One loop of a generated chain: writes dat `write`, reads dats `reads`
/// through stencils `stencils` (indices into stencilDefs()).
struct GenLoop {
  int write;
  std::vector<int> reads, stencils;
};

constexpr int NumDats = 4, RangeLo = 3, RangeHi = 9;

std::string chainProgram(const std::vector<GenLoop> &loops) {
  std::string s = "program gen\nblock grid[2]\n";
  for (const StencilDef &d : stencilDefs()) {
    s += std::string("stencil ") + d.name + " = [";
    for (size_t i = 0; i < d.points.size(); ++i)
      s += (i ? ", (" : "(") + std::to_string(d.points[i].first) + ", " +
           std::to_string(d.points[i].second) + ")";
    s += "]\n";
  }
  for (int d = 0; d < NumDats; ++d)
    s += "dat d" + std::to_string(d) + ": grid f64 size [12, 12] halo 3\n";
  for (size_t k = 0; k < loops.size(); ++k) {
    const GenLoop &l = loops[k];
    s += "kernel k" + std::to_string(k) + "(";
    std::string body = "  w(0, 0) = 1.0";
    for (size_t i = 0; i < l.reads.size(); ++i) {
      s += "r" + std::to_string(i) + ": f64 @ " +
           stencilDefs()[size_t(l.stencils[i])].name + ", ";
      body += " + r" + std::to_string(i) + "(0, 0)";
    }
    s += "w: out f64 @ point) {\n" + body + "\n}\n";
  }
  s += "main {\n";
  for (size_t k = 0; k < loops.size(); ++k) {
    s += "  loop k" + std::to_string(k) + " over grid[3..9, 3..9] (";
    for (int r : loops[k].reads)
      s += "d" + std::to_string(r) + ", ";
    s += "d" + std::to_string(loops[k].write) + ")\n";
  }
  return s + "}\n";
}

using Point = std::pair<int, int>;

/// Brute force on explicit point sets: the points each loop must run over
/// (its range, plus every point a later reader of what it writes reaches
/// from the points that reader runs over), and per dat the points read
/// before the chain writes it.
void bruteForce(const std::vector<GenLoop> &loops,
                std::vector<std::array<int64_t, MaxLoopDims>> &lo,
                std::vector<std::array<int64_t, MaxLoopDims>> &hi,
                std::map<int, std::array<int64_t, 4>> &exchange) {
  size_t n = loops.size();
  std::vector<std::set<Point>> need(n);
  std::set<Point> range;
  for (int i = RangeLo; i < RangeHi; ++i)
    for (int j = RangeLo; j < RangeHi; ++j)
      range.insert({i, j});
  auto reach = [](const std::set<Point> &from, int stencil) {
    std::set<Point> out;
    for (const Point &p : from)
      for (const auto &s : stencilDefs()[size_t(stencil)].points)
        out.insert({p.first + s.first, p.second + s.second});
    return out;
  };
  for (size_t l = n; l-- > 0;) {
    need[l] = range;
    for (size_t k = l + 1; k < n; ++k)
      for (size_t i = 0; i < loops[k].reads.size(); ++i)
        if (loops[k].reads[i] == loops[l].write)
          for (const Point &p : reach(need[k], loops[k].stencils[i]))
            need[l].insert(p);
  }
  lo.assign(n, {});
  hi.assign(n, {});
  auto bounds = [](const std::set<Point> &pts, std::array<int64_t, 4> &b) {
    int minI = RangeLo, minJ = RangeLo, maxI = RangeHi - 1, maxJ = RangeHi - 1;
    for (const Point &p : pts) {
      minI = std::min(minI, p.first);
      minJ = std::min(minJ, p.second);
      maxI = std::max(maxI, p.first);
      maxJ = std::max(maxJ, p.second);
    }
    b = {RangeLo - minI, RangeLo - minJ, maxI - (RangeHi - 1),
         maxJ - (RangeHi - 1)};
  };
  for (size_t l = 0; l < n; ++l) {
    std::array<int64_t, 4> b;
    bounds(need[l], b);
    lo[l] = {b[0], b[1], 0};
    hi[l] = {b[2], b[3], 0};
  }
  exchange.clear();
  for (int d = 0; d < NumDats; ++d) {
    std::set<Point> pts;
    for (size_t k = 0; k < n; ++k) {
      for (size_t i = 0; i < loops[k].reads.size(); ++i)
        if (loops[k].reads[i] == d)
          for (const Point &p : reach(need[k], loops[k].stencils[i]))
            pts.insert(p);
      if (loops[k].write == d)
        break;
    }
    std::array<int64_t, 4> b;
    bounds(pts, b);
    if (b[0] > 0 || b[1] > 0 || b[2] > 0 || b[3] > 0)
      exchange[d] = b;
  }
}

// A random chain of 2 to 5 loops, each writing one dat and reading one or
// two others through random stencils.
std::vector<GenLoop> generateChain(std::mt19937 &rng) {
  auto pick = [&](int n) {
    return int(std::uniform_int_distribution<int>(0, n - 1)(rng));
  };
  std::vector<GenLoop> loops(size_t(2 + pick(4)));
  for (GenLoop &l : loops) {
    l.write = pick(NumDats);
    int nreads = 1 + pick(2);
    for (int i = 0; i < nreads; ++i) {
      int d = pick(NumDats);
      if (d == l.write)
        d = (d + 1) % NumDats; // a loop never reads what it writes
      l.reads.push_back(d);
      l.stencils.push_back(pick(int(stencilDefs().size())));
    }
  }
  return loops;
}

} // namespace

TEST(LoopChainHalo, MatchesBruteForceOnGeneratedChains) {
  std::mt19937 rng(12);
  int64_t deepest = 0;
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<GenLoop> loops = generateChain(rng);
    std::string text = chainProgram(loops);
    Lowered p(text);
    ASSERT_TRUE(p.ir) << text;
    std::vector<LoopChain> chains = findLoopChains(p.ir->main->body);
    ASSERT_EQ(chains.size(), 1u) << text;
    ChainHaloDepths got = chainHaloDepths(chains[0]);
    ASSERT_EQ(got.notApplicable, "") << text;
    std::vector<std::array<int64_t, MaxLoopDims>> lo, hi;
    std::map<int, std::array<int64_t, 4>> exchange;
    bruteForce(loops, lo, hi, exchange);
    for (const auto &e : lo)
      deepest = std::max({deepest, e[0], e[1]});
    EXPECT_EQ(got.lo, lo) << text;
    EXPECT_EQ(got.hi, hi) << text;
    ASSERT_EQ(got.exchanges.size(), exchange.size()) << text;
    for (const ChainHaloDepths::Exchange &e : got.exchanges) {
      int d = e.dat->name[1] - '0';
      ASSERT_TRUE(exchange.count(d)) << e.dat->name << "\n" << text;
      EXPECT_EQ((std::array<int64_t, 4>{e.lo[0], e.lo[1], e.hi[0], e.hi[1]}),
                exchange[d])
          << e.dat->name << "\n"
          << text;
    }
  }
  // The generated chains are not all trivial: some loop runs 2 or more
  // points beyond its range.
  EXPECT_GE(deepest, 2);
}

// Communication avoidance's plan (one depth per loop, per rank boundary)
// must cover what the brute force says each loop and each exchange needs
// on every side: the plan may compute more, never less.
TEST(LoopChainHalo, ExtensionsCoverBruteForce) {
  std::mt19937 rng(34);
  int exact = 0;
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<GenLoop> loops = generateChain(rng);
    std::string text = chainProgram(loops);
    Lowered p(text);
    ASSERT_TRUE(p.ir) << text;
    std::vector<LoopChain> chains = findLoopChains(p.ir->main->body);
    ASSERT_EQ(chains.size(), 1u) << text;
    ChainExtensions plan = chainExtensions(chains[0]);
    std::vector<std::array<int64_t, MaxLoopDims>> lo, hi;
    std::map<int, std::array<int64_t, 4>> exchange;
    bruteForce(loops, lo, hi, exchange);
    ASSERT_EQ(plan.ext.size(), loops.size()) << text;
    for (size_t l = 0; l < loops.size(); ++l) {
      int64_t side = std::max({lo[l][0], lo[l][1], hi[l][0], hi[l][1]});
      EXPECT_GE(plan.ext[l], side) << "loop " << l << "\n" << text;
      exact += plan.ext[l] == side;
    }
    for (const auto &[d, b] : exchange) {
      int64_t deepest = std::max({b[0], b[1], b[2], b[3]});
      bool found = false;
      for (const ChainExtensions::Need &need : plan.needs)
        if (need.dat->name == "d" + std::to_string(d)) {
          found = true;
          EXPECT_GE(need.depth, deepest) << need.dat->name << "\n" << text;
        }
      EXPECT_TRUE(found) << "d" << d << " not exchanged\n" << text;
    }
  }
  // Mostly not an overestimate either.
  EXPECT_GE(exact, 40);
}

TEST(LoopChainHalo, OnlyForOneBlockRange) {
  Lowered p(program(R"(
  loop setx over nodes (x)
  loop jacobi over grid[1..n - 1, 1..n - 1] (u, u2)
  loop jacobi over grid[2..n - 1, 1..n - 1] (u2, u)
)"));
  ASSERT_TRUE(p.ir);
  std::vector<LoopChain> chains = findLoopChains(p.ir->main->body);
  ASSERT_EQ(chains.size(), 1u);
  EXPECT_EQ(chainHaloDepths(chains[0]).notApplicable,
            "loop 'setx' runs over a set");
  LoopChain two = chains[0];
  two.loops.erase(two.loops.begin());
  two.access.erase(two.access.begin());
  EXPECT_EQ(chainHaloDepths(two).notApplicable,
            "loops 'jacobi' and 'jacobi' run over different ranges");
}

// Jacobi twice (u -> u2 -> u) then a residual of u: the first sweep must
// run one point further on every side, u needs a halo of 2 before the
// chain, u2 none (the chain computes it).
TEST(LoopChainHalo, JacobiTwiceNeedsTwoLayers) {
  Lowered p(program(R"(
  var s = 0.0
  loop jacobi over grid[1..n - 1, 1..n - 1] (u, u2)
  loop jacobi over grid[1..n - 1, 1..n - 1] (u2, u)
  loop scale over grid[1..n - 1, 1..n - 1] (u)
)"));
  ASSERT_TRUE(p.ir);
  std::vector<LoopChain> chains = findLoopChains(p.ir->main->body);
  ASSERT_EQ(chains.size(), 1u);
  ChainHaloDepths h = chainHaloDepths(chains[0]);
  ASSERT_EQ(h.notApplicable, "");
  using A = std::array<int64_t, MaxLoopDims>;
  EXPECT_EQ(h.lo, (std::vector<A>{{1, 1, 0}, {0, 0, 0}, {0, 0, 0}}));
  EXPECT_EQ(h.hi, (std::vector<A>{{1, 1, 0}, {0, 0, 0}, {0, 0, 0}}));
  ASSERT_EQ(h.exchanges.size(), 1u);
  EXPECT_EQ(h.exchanges[0].dat->name, "u");
  EXPECT_EQ(h.exchanges[0].lo, (A{2, 2, 0}));
  EXPECT_EQ(h.exchanges[0].hi, (A{2, 2, 0}));
}

// ----- Set chains: exec halo layers (chainSetHaloLayers) -----
namespace {

// Airfoil's inner chain: adt_calc, res_calc, bres_calc, update.
const char *AirfoilLike = R"(
program airfoil_like
set nodes size 12
set edges size 10
set bedges size 4
set cells size 6
map pedge: edges -> nodes [2]
map pecell: edges -> cells [2]
map pbedge: bedges -> nodes [2]
map pbecell: bedges -> cells [1]
map pcell: cells -> nodes [4]
dat x: nodes f64[2]
dat q, qold, res: cells f64[4]
dat adt: cells f64
kernel adt_calc(x1: f64[2], x2: f64[2], x3: f64[2], x4: f64[2], q: f64[4],
                adt: out f64) {
  adt = x1[0] + x2[1] + x3[0] + x4[1] + q[0]
}
kernel res_calc(x1: f64[2], x2: f64[2], q1: f64[4], q2: f64[4], a1: f64,
                a2: f64, r1: inc f64[4], r2: inc f64[4]) {
  r1[0] += x1[0] * q1[0] * a1
  r2[0] -= x2[1] * q2[0] * a2
}
kernel bres_calc(x1: f64[2], x2: f64[2], q1: f64[4], a1: f64,
                 r1: inc f64[4]) {
  r1[1] += x1[0] + x2[0] + q1[1] * a1
}
kernel update(qold: f64[4], q: out f64[4], res: inout f64[4], adt: f64,
              rms: sum f64) {
  q[0] = qold[0] - res[0] / adt
  res[0] = 0.0
  rms += q[0] * q[0]
}
main {
  var rms = 0.0
  loop adt_calc over cells (x[pcell[0]], x[pcell[1]], x[pcell[2]],
                            x[pcell[3]], q, adt)
  loop res_calc over edges (x[pedge[0]], x[pedge[1]], q[pecell[0]],
                            q[pecell[1]], adt[pecell[0]], adt[pecell[1]],
                            res[pecell[0]], res[pecell[1]])
  loop bres_calc over bedges (x[pbedge[0]], x[pbedge[1]], q[pbecell[0]],
                              adt[pbecell[0]], res[pbecell[0]])
  loop update over cells (qold, q, res, adt, rms)
}
)";

} // namespace

// adt_calc runs 2 layers (res_calc and bres_calc, 1 layer each for their
// increments, read adt through maps: 1 + 1); q is read directly 2 layers
// deep and through maps from layer 1: exchanged 2 deep before the chain;
// x through pcell from layer 2: 3 (the whole halo with 2 layers).
TEST(LoopChainSetLayers, AirfoilChain) {
  Lowered p(AirfoilLike);
  ASSERT_TRUE(p.ir);
  std::vector<LoopChain> chains = findLoopChains(p.ir->main->body);
  ASSERT_EQ(chains.size(), 1u);
  ChainSetLayers r = chainSetHaloLayers(chains[0]);
  ASSERT_EQ(r.notApplicable, "");
  EXPECT_EQ(r.layers, (std::vector<int64_t>{2, 1, 1, 0}));
  EXPECT_EQ(r.setLayers, 2);
  std::map<std::string, int64_t> ex;
  for (const ChainSetLayers::Exchange &e : r.exchanges)
    ex[e.dat->name] = e.depth;
  EXPECT_EQ(ex, (std::map<std::string, int64_t>{{"x", 3}, {"q", 2}}));
  // Not for blocks.
  Lowered b(program("  loop jacobi over grid[1..n - 1, 1..n - 1] (u, u2)\n"));
  ASSERT_TRUE(b.ir);
  std::vector<LoopChain> bc = findLoopChains(b.ir->main->body);
  ASSERT_EQ(bc.size(), 1u);
  EXPECT_EQ(chainSetHaloLayers(bc[0]).notApplicable,
            "loop 'jacobi' runs over a block");
}

// A loop with a reduction is never extended: when a later loop would need
// it to run halo layers, the analysis does not apply.
TEST(LoopChainSetLayers, ReductionNotExtended) {
  Lowered p(program(R"(
  var s = 0.0
  loop total over edges (w, s)
  loop diff over edges (x[e2n[0]], x[e2n[1]], w)
)"));
  ASSERT_TRUE(p.ir);
  std::vector<LoopChain> chains = findLoopChains(p.ir->main->body);
  ASSERT_EQ(chains.size(), 1u);
  EXPECT_EQ(chainSetHaloLayers(chains[0]).notApplicable, "");
  Lowered q(R"(
program red
set nodes size 10
set edges size 9
map e2n: edges -> nodes [2]
dat x: nodes f64
dat w: edges f64
kernel setx(x: out f64, s: sum f64) { x = 1.0
  s += x }
kernel diff(x0: f64, x1: f64, w: out f64) { w = x1 - x0 }
main {
  var s = 0.0
  loop setx over nodes (x, s)
  loop diff over edges (x[e2n[0]], x[e2n[1]], w)
}
)");
  ASSERT_TRUE(q.ir);
  std::vector<LoopChain> qc = findLoopChains(q.ir->main->body);
  ASSERT_EQ(qc.size(), 1u);
  ChainSetLayers qr = chainSetHaloLayers(qc[0]);
  EXPECT_EQ(qr.notApplicable,
            "loop 'setx' has a reduction and would have to run 2 halo "
            "layers");
  EXPECT_EQ(qr.reducingLoop, 0);
  EXPECT_EQ(chainSetHaloLayers(chains[0]).reducingLoop, -1);
}

// Airfoil's chain twice over, as unroll-short-loops leaves it (the second
// copy's update apart: its `rms = 0.0` ends the chain): the first update
// would have to run layers for the loops after it, so the analysis names
// it; cut after it, each part is the chain one copy was, with its own
// accesses (loop indices from 0) and the same layers.
TEST(LoopChainSetLayers, SubChainAfterReduction) {
  std::string src = AirfoilLike;
  const std::string copy = R"(
  loop adt_calc over cells (x[pcell[0]], x[pcell[1]], x[pcell[2]],
                            x[pcell[3]], q, adt)
  loop res_calc over edges (x[pedge[0]], x[pedge[1]], q[pecell[0]],
                            q[pecell[1]], adt[pecell[0]], adt[pecell[1]],
                            res[pecell[0]], res[pecell[1]])
  loop bres_calc over bedges (x[pbedge[0]], x[pbedge[1]], q[pbecell[0]],
                              adt[pbecell[0]], res[pbecell[0]])
)";
  const size_t end = src.rfind('}');
  src.insert(end, copy);
  Lowered p(src.c_str());
  ASSERT_TRUE(p.ir);
  std::vector<LoopChain> chains = findLoopChains(p.ir->main->body);
  ASSERT_EQ(chains.size(), 1u);
  ASSERT_EQ(chains[0].loops.size(), 7u);
  ChainSetLayers whole = chainSetHaloLayers(chains[0]);
  EXPECT_EQ(whole.notApplicable,
            "loop 'update' has a reduction and would have to run 2 halo "
            "layers");
  ASSERT_EQ(whole.reducingLoop, 3);
  LoopChain head = subChain(chains[0], 0, 4);
  LoopChain tail = subChain(chains[0], 4, 7);
  ASSERT_EQ(head.loops.size(), 4u);
  ASSERT_EQ(tail.loops.size(), 3u);
  EXPECT_EQ(tail.loops[0]->kernel->name, "adt_calc");
  EXPECT_EQ(tail.loopStmts[0], chains[0].loopStmts[4]);
  EXPECT_EQ(head.endStmt, chains[0].loopStmts[4]);
  EXPECT_EQ(tail.endStmt, chains[0].endStmt);
  for (const LoopChain *c : {&head, &tail}) {
    for (const ChainDat &d : c->dats)
      for (const ChainAccess &a : d.accesses)
        EXPECT_LT(a.loop, c->loops.size());
    ASSERT_FALSE(c->dats.empty());
    EXPECT_EQ(c->find(c->dats[0].dat), &c->dats[0]);
  }
  // The tail neither reads qold nor writes q: update's dats are the head's.
  for (const ChainDat &d : tail.dats)
    EXPECT_NE(d.dat->name, "qold");
  ChainSetLayers h = chainSetHaloLayers(head);
  ASSERT_EQ(h.notApplicable, "");
  EXPECT_EQ(h.layers, (std::vector<int64_t>{2, 1, 1, 0}));
  ChainSetLayers t = chainSetHaloLayers(tail);
  ASSERT_EQ(t.notApplicable, "");
  EXPECT_EQ(t.layers, (std::vector<int64_t>{2, 1, 1}));
  std::map<std::string, int64_t> ex;
  for (const ChainSetLayers::Exchange &e : t.exchanges)
    ex[e.dat->name] = e.depth;
  EXPECT_EQ(ex, (std::map<std::string, int64_t>{{"x", 3}, {"q", 2}}));
}
