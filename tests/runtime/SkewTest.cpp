// SkewTest.cpp - opd_skew_run's schedule (lib/exec/Skew.cpp): every row of
// every loop runs once, each after the rows of earlier loops it conflicts
// with (the offsets the lags, leads and trails were chosen for), the first
// loop's chunks whole and in order on one thread, later loops that reduce
// in whole chunks (one call each; 3D: plane by plane, close behind), at any
// thread count; each loop's
// choice of body timed on its own body calls.
// SPDX-License-Identifier: Apache-2.0
#include "core/Profile.h"
#include "core/Runtime.h"
#include "exec/Loop.h"

#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <omp.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

class SkewTest : public ::testing::Test {
protected:
  void TearDown() override {
    opd_rt_finalize();
    omp_set_num_threads(2);
  }
};

// What a body saw: per row, when (a global sequence number), on which
// thread, and with which chunk index.
struct Trace {
  int64_t rowsLo = 0;
  std::vector<int64_t> seq, thread, chunk;
  std::vector<std::array<int64_t, 3>> calls; ///< begin, end, chunk
  explicit Trace(int64_t lo, int64_t hi)
      : rowsLo(lo), seq(size_t(hi - lo), -1), thread(size_t(hi - lo), -1),
        chunk(size_t(hi - lo), -1) {}
};
std::atomic<int64_t> clock{0};
std::mutex callsLock;

void recordRows(void *ctx, int64_t begin, int64_t end, int64_t chunk) {
  auto *t = static_cast<Trace *>(ctx);
  for (int64_t r = begin; r < end; ++r) {
    const size_t i = size_t(r - t->rowsLo);
    // A row twice shows as a second sequence number (checked below).
    t->seq[i] = t->seq[i] < 0 ? clock++ : -2;
    t->thread[i] = omp_get_thread_num();
    t->chunk[i] = chunk;
  }
  std::lock_guard<std::mutex> g(callsLock);
  t->calls.push_back({begin, end, chunk});
}

struct Member {
  int64_t lo, hi;            // rows (outermost dimension)
  int64_t lag, lead, trail;  // the schedule
  bool reduces = false;
};

// Loop m's row r conflicts with loop k's rows r + d for d in conflicts
// [k][m] (k < m), the pass's D = dm - dk: those must have run first.
// With dims 3 the block is inner x inner x 1000 (rows are planes).
void checkSchedule(
    const std::vector<Member> &members,
    const std::vector<std::vector<std::vector<int64_t>>> &conflicts,
    int threads, int64_t inner = 8, int dims = 2) {
  SCOPED_TRACE("threads " + std::to_string(threads));
  omp_set_num_threads(threads);
  opd_block *b = opd_block_create("grid", dims);
  const int64_t size2[2] = {inner, 4000}, halo2[2] = {2, 4},
                base[3] = {0, 0, 0};
  const int64_t size3[3] = {inner, inner, 1000}, halo3[3] = {1, 1, 4};
  opd_dat *u = opd_block_dat_create(
      "u", b, OPD_F64, 1, dims == 3 ? size3 : size2, dims == 3 ? halo3 : halo2,
      dims == 3 ? halo3 : halo2, base);
  std::vector<opd_loop *> loops;
  std::vector<opd_body> bodies;
  std::vector<Trace> traces;
  std::vector<int64_t> schedule;
  traces.reserve(members.size());
  for (size_t k = 0; k < members.size(); ++k) {
    const Member &m = members[k];
    // A stencil read reaching one row each way: the runtime sizes the
    // threads' parts from the reach.
    const int outer = dims - 1;
    opd_arg args[2] = {};
    args[0] = {u, nullptr, 0, OPD_ARG_STENCIL, OPD_READ, 8, {}, {}, 0};
    args[0].lo[outer] = -1;
    args[0].hi[outer] = 1;
    args[1] = {nullptr, nullptr, 0, OPD_ARG_REDUCTION, OPD_SUM, 8, {}, {}, 0};
    int64_t lo[3] = {0, 0, 0}, hi[3] = {inner, inner, 0};
    lo[outer] = m.lo;
    hi[outer] = m.hi;
    const std::string name = "loop" + std::to_string(k);
    loops.push_back(opd_loop_prepare_block(nullptr, name.c_str(), b, lo, hi,
                                           m.reduces ? 2 : 1, args));
    bodies.push_back(recordRows);
    traces.emplace_back(m.lo, m.hi);
    schedule.insert(schedule.end(), {m.lag, m.lead, m.trail, 0, 0});
  }
  std::vector<void *> ctxs;
  for (Trace &t : traces)
    ctxs.push_back(&t);
  opd_skew_run(int(members.size()), loops.data(), bodies.data(), ctxs.data(),
               schedule.data());

  for (size_t k = 0; k < members.size(); ++k)
    for (size_t i = 0; i < traces[k].seq.size(); ++i)
      ASSERT_GE(traces[k].seq[i], 0)
          << "loop " << k << " row " << members[k].lo + int64_t(i)
          << (traces[k].seq[i] == -1 ? " never ran" : " ran twice");
  for (size_t m = 1; m < members.size(); ++m)
    for (size_t k = 0; k < m; ++k)
      for (int64_t r = members[m].lo; r < members[m].hi; ++r)
        for (int64_t d : conflicts[k][m]) {
          const int64_t q = r + d;
          if (q < members[k].lo || q >= members[k].hi)
            continue;
          ASSERT_LT(traces[k].seq[size_t(q - members[k].lo)],
                    traces[m].seq[size_t(r - members[m].lo)])
              << "loop " << m << " row " << r << " ran before loop " << k
              << " row " << q;
        }
  // The first loop: chunk indices on its grid, each chunk on one thread in
  // row order (its reduction partials are opd_loop_run's).
  const opd_loop *first = loops[0];
  const Trace &t0 = traces[0];
  for (int64_t r = members[0].lo; r < members[0].hi; ++r) {
    const size_t i = size_t(r - members[0].lo);
    ASSERT_EQ(t0.chunk[i], (r - first->begin) / first->chunkSize);
    if (i > 0 && t0.chunk[i] == t0.chunk[i - 1]) {
      ASSERT_EQ(t0.thread[i], t0.thread[i - 1]) << "row " << r;
      ASSERT_GT(t0.seq[i], t0.seq[i - 1]) << "row " << r;
    }
  }
  // Later loops that reduce: every call one whole chunk of their grid; 3D:
  // any rows (their partials are per plane), and so at one thread less
  // than half a chunk behind the first loop beyond their lag (a step of the
  // sweep is a few planes), where whole chunks would trail by up to a
  // chunk.
  for (size_t k = 1; k < members.size(); ++k) {
    if (!members[k].reduces)
      continue;
    const opd_loop *l = loops[k];
    if (dims == 3) {
      EXPECT_TRUE(l->partialsPerPlane());
      EXPECT_GT(l->chunkSize, 16) << "the test needs chunks of many planes";
      if (threads > 1)
        continue;
      for (int64_t r = members[k].lo; r < members[k].hi; ++r) {
        const int64_t q = r + members[k].lag + l->chunkSize / 2;
        if (q < members[0].lo || q >= members[0].hi)
          continue;
        ASSERT_LT(traces[k].seq[size_t(r - members[k].lo)],
                  t0.seq[size_t(q - members[0].lo)])
            << "loop " << k << " row " << r << " trails the sweep";
      }
      continue;
    }
    for (const auto &[from, to, c] : traces[k].calls) {
      ASSERT_EQ(from, l->begin + c * l->chunkSize)
          << "loop " << k << " chunk " << c << " starts at row " << from;
      ASSERT_EQ(to, std::min(l->begin + l->count,
                             l->begin + (c + 1) * l->chunkSize))
          << "loop " << k << " chunk " << c << " ends at row " << to;
    }
  }
  opd_rt_finalize();
}

// Jacobi, a copy one row behind (it writes what Jacobi reads at +-1), and
// a third loop over a wider range reading the copy's output two rows away:
// the numbers the fuse pass derives for those offsets.
TEST_F(SkewTest, RowsRunOnceAfterTheirConflicts) {
  const std::vector<Member> members = {
      {2, 3990, 0, 0, 0}, {1, 3995, 1, 1, 1}, {0, 4000, 3, 3, 3}};
  std::vector<std::vector<std::vector<int64_t>>> conflicts(
      3, std::vector<std::vector<int64_t>>(3));
  conflicts[0][1] = {-1, 0, 1}; // copy writes u, Jacobi reads u(0, +-1)
  conflicts[1][2] = {-2, 0, 2}; // the third reads the copy's at +-2
  for (int threads : {1, 2, 3, 5, 8})
    checkSchedule(members, conflicts, threads);
}

// The chain of both tests below over `rows` rows: the second and fourth
// loops sum.
struct SummingChain {
  std::vector<Member> members;
  std::vector<std::vector<std::vector<int64_t>>> conflicts;
  explicit SummingChain(int64_t rows)
      : members{{2, rows - 10, 0, 0, 0},
                {1, rows - 5, 1, 1, 1, true},
                {0, rows, 3, 3, 3},
                {3, rows - 3, 4, 4, 4, true}},
        conflicts(4, std::vector<std::vector<int64_t>>(4)) {
    conflicts[0][1] = {-1, 0, 1};
    conflicts[1][2] = {-2, 0, 2};
    conflicts[2][3] = {-1, 1};
  }
};

// Later loops that reduce (Poisson's adjoint: the transposed stencil's
// gather, then jacobi.b summing dJ/dw) run whole chunks; the loops after
// them still run after their conflicts. Chunks of 64 and 16 rows.
TEST_F(SkewTest, LaterLoopsThatReduceRunWholeChunks) {
  const SummingChain c(4000);
  for (int64_t inner : {64, 256})
    for (int threads : {1, 2, 3, 5, 8})
      checkSchedule(c.members, c.conflicts, threads, inner);
}

// 3D: later loops that reduce keep one partial per plane, so they run
// as the others do, lag_k planes behind, not in whole chunks (heat3d's
// adjoint: the reverse sweep's loop summing dJ/dlam).
TEST_F(SkewTest, LaterLoopsThatReduceIn3DRunPlaneByPlane) {
  const SummingChain c(1000);
  for (int threads : {1, 2, 3, 5})
    checkSchedule(c.members, c.conflicts, threads, 64, 3);
}

// Members whose rows lie outside the first loop's, and an empty one.
TEST_F(SkewTest, RowsOutsideTheFirstLoopsAndEmptyLoops) {
  const std::vector<Member> members = {
      {1000, 3000, 0, 0, 0}, {0, 4000, 2, 0, 2}, {500, 500, 2, 0, 2}};
  std::vector<std::vector<std::vector<int64_t>>> conflicts(
      3, std::vector<std::vector<int64_t>>(3));
  conflicts[0][1] = {0, 1, 2}; // reads rows 0..2 ahead that the first wrote
  for (int threads : {1, 2, 4})
    checkSchedule(members, conflicts, threads);
}

// A body whose first call of a sweep (its first row) takes `slowScalar`
// or `slowVector` milliseconds, as the scalar body or the vectorised one.
struct VariantRows {
  int64_t first;
  int slowScalar = 0, slowVector = 0;
  int scalar = 0;
};
void variantRows(void *ctx, int64_t begin, int64_t, int64_t) {
  auto *c = static_cast<VariantRows *>(ctx);
  if (begin == c->first)
    opdc::rt::test::spinFor(c->scalar ? c->slowScalar : c->slowVector);
}

// An 8 x 64 block with one dat, and loops over all of it that read the dat
// through a 3-point stencil along dimension 1 (one thread).
struct RowGrid {
  opd_block *b = nullptr;
  opd_dat *u = nullptr;
  opd_arg args[1];
  RowGrid() {
    omp_set_num_threads(1);
    b = opd_block_create("grid", 2);
    const int64_t size[2] = {8, 64}, halo[2] = {1, 1}, base[2] = {0, 0};
    u = opd_block_dat_create("u", b, OPD_F64, 1, size, halo, halo, base);
    args[0] = {u,          nullptr,   0, OPD_ARG_STENCIL, OPD_READ, 8,
               {0, -1, 0}, {0, 1, 0}, 0};
  }
  opd_loop *prepare(const char *name) {
    // (opd_loop_prepare_block clips the ranges in place.)
    int64_t lo[2] = {0, 0}, hi[2] = {8, 64};
    return opd_loop_prepare_block(nullptr, name, b, lo, hi, 1, args);
  }
};

// A later loop of a sweep asks for its scalar body (opd_loop_scalar) as
// opd_loop_run's loops do: the trials alternate, and the body that stays
// is the one whose own calls were faster. The sweep's time is the first
// loop's, so before each loop timed its own calls the later loop's trials
// measured nothing (its best times 0.00 ms) and the choice was noise.
TEST_F(SkewTest, EachLoopsBodyIsChosenOnItsOwnTime) {
  RowGrid grid;
  const int64_t schedule[10] = {};
  std::vector<int> alternate{0};
  for (int k = 0; k < opdc::rt::ScalarTrials; ++k)
    alternate.push_back(k % 2 == 0 ? 1 : 0);
  for (bool scalarWins : {true, false}) {
    SCOPED_TRACE(scalarWins ? "scalar faster" : "vectorised faster");
    const std::string name = scalarWins ? "scalarwins" : "vectorwins";
    opd_loop *first = grid.prepare("first");
    opd_loop *later = grid.prepare(name.c_str());
    VariantRows c0{first->begin};
    VariantRows c1{later->begin, scalarWins ? 0 : 20, scalarWins ? 20 : 0};
    opd_loop *loops[2] = {first, later};
    const opd_body bodies[2] = {variantRows, variantRows};
    void *ctxs[2] = {&c0, &c1};
    std::vector<int> chosen;
    for (int call = 0; call < opdc::rt::ScalarTrials + 4; ++call) {
      c1.scalar = opd_loop_scalar(later);
      chosen.push_back(c1.scalar);
      opd_skew_run(2, loops, bodies, ctxs, schedule);
    }
    std::vector<int> expected = alternate;
    expected.insert(expected.end(), 3, scalarWins ? 1 : 0);
    EXPECT_EQ(chosen, expected);
  }
  std::map<std::string, std::string> plans;
  for (const opdc::rt::ProfileRow &row : opdc::rt::collectProfile())
    plans[row.name] = row.plan;
  // The slower body's best time is its own 20 ms, not the sweep's share.
  for (const char *name : {"scalarwins", "vectorwins"}) {
    SCOPED_TRACE(name);
    const bool scalarWins = std::string(name) == "scalarwins";
    EXPECT_THAT(plans[name], ::testing::HasSubstr(
                                 scalarWins ? ", then scalar by timing (best "
                                            : ", then vectorised by timing "
                                              "(best "));
    const std::string &plan = plans[name];
    const size_t at = plan.find("(best ");
    ASSERT_NE(at, std::string::npos) << plan;
    const double scalarMs = std::strtod(plan.c_str() + at + 6, nullptr);
    const size_t comma = plan.find(", ", at);
    ASSERT_NE(comma, std::string::npos) << plan;
    const double vectorMs = std::strtod(plan.c_str() + comma + 2, nullptr);
    EXPECT_GE(scalarWins ? vectorMs : scalarMs, 15.0) << plan;
  }
}

// The profile's plan line of each loop of a sweep gives the seconds its own
// body calls took (the sweep's time is the first loop's): a later loop that
// spins 5 ms a sweep shows at least that, in as many sweeps as ran.
TEST_F(SkewTest, ProfileGivesEachLoopsShareOfTheSweep) {
  RowGrid grid;
  const int64_t schedule[10] = {};
  opd_loop *first = grid.prepare("sharefirst");
  opd_loop *later = grid.prepare("sharelater");
  VariantRows c0{first->begin};
  VariantRows c1{later->begin, 5, 5};
  opd_loop *loops[2] = {first, later};
  const opd_body bodies[2] = {variantRows, variantRows};
  void *ctxs[2] = {&c0, &c1};
  for (int call = 0; call < 3; ++call)
    opd_skew_run(2, loops, bodies, ctxs, schedule);
  const std::vector<opdc::rt::ProfileRow> rows = opdc::rt::collectProfile();
  for (const opdc::rt::ProfileRow &row : rows)
    if (row.name == "sharelater") {
      EXPECT_EQ(row.sweepCalls, 3);
      EXPECT_GE(row.sweepSeconds, 0.015);
    } else if (row.name == "sharefirst") {
      EXPECT_EQ(row.sweepCalls, 3);
      EXPECT_LT(row.sweepSeconds, row.seconds);
    }
  const std::string text = opdc::rt::formatProfile(rows, 1, 1);
  EXPECT_THAT(text, ::testing::HasSubstr(
                        "plan: sharelater: in the skewed sweep of 'sharefirst' "
                        "(its time and bytes counted there); its body "));
  EXPECT_THAT(text, ::testing::HasSubstr(" in 3 sweeps ("));
}

// Tiles of dimension 1 (3D sweeps): four heat steps ping-ponging between
// u and v (heat3d's four-step sweep, lags 0..3) on a 298 x 88 x 78
// interior: rows of 298 points make tiles of 27 rows, four a plane (the
// last of 7 rows), so the sweep runs tile by tile, each loop's body on a copy
// of its context narrowed along dimension 1. The result is bitwise that of the
// four steps one after the other, at 1, 2 and 3 threads, and the profile
// says the sweep ran in tiles.
struct HeatContext {
  int64_t lo[3], hi[3]; // the range, as the CPU backend's contexts hold it
  const double *src;
  double *dst;
};
constexpr int64_t HeatN[3] = {300, 90, 80}; // with the boundary
int64_t heatAt(int64_t i, int64_t j, int64_t k) {
  return ((k + 1) * (HeatN[1] + 2) + j + 1) * (HeatN[0] + 2) + i + 1;
}
void heatRows(void *ctx, int64_t begin, int64_t end, int64_t) {
  const auto *c = static_cast<const HeatContext *>(ctx);
  const int64_t sj = HeatN[0] + 2, sk = sj * (HeatN[1] + 2);
  for (int64_t k = begin; k < end; ++k)
    for (int64_t j = c->lo[1]; j < c->hi[1]; ++j)
      for (int64_t i = c->lo[0]; i < c->hi[0]; ++i) {
        const double *u = c->src + heatAt(i, j, k);
        c->dst[heatAt(i, j, k)] =
            u[0] + 0.125 * (u[-1] + u[1] + u[-sj] + u[sj] + u[-sk] + u[sk] -
                            6.0 * u[0]);
      }
}

TEST_F(SkewTest, ThreeDSweepsRunInTilesOfDimensionOne) {
  const size_t points =
      size_t((HeatN[0] + 2) * (HeatN[1] + 2) * (HeatN[2] + 2));
  std::vector<double> start(points);
  for (size_t p = 0; p < points; ++p)
    start[p] = double(p % 97) * 0.01 + double(p % 13);
  // The reference: four steps, one after the other.
  std::vector<double> ru = start, rv = start;
  for (int s = 0; s < 4; ++s) {
    HeatContext c{{1, 1, 1},
                  {HeatN[0] - 1, HeatN[1] - 1, HeatN[2] - 1},
                  s % 2 ? rv.data() : ru.data(),
                  s % 2 ? ru.data() : rv.data()};
    heatRows(&c, 1, HeatN[2] - 1, 0);
  }
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    omp_set_num_threads(threads);
    opd_block *b = opd_block_create("cube", 3);
    const int64_t halo[3] = {1, 1, 1}, base[3] = {0, 0, 0};
    opd_dat *du =
        opd_block_dat_create("u", b, OPD_F64, 1, HeatN, halo, halo, base);
    opd_dat *dv =
        opd_block_dat_create("v", b, OPD_F64, 1, HeatN, halo, halo, base);
    std::vector<double> u = start, v = start;
    std::vector<opd_loop *> loops;
    std::vector<HeatContext> ctxs(4);
    std::vector<int64_t> schedule;
    for (int s = 0; s < 4; ++s) {
      opd_arg args[2] = {};
      args[0] = {s % 2 ? dv : du, nullptr,   0, OPD_ARG_STENCIL, OPD_READ, 8,
                 {-1, -1, -1},    {1, 1, 1}, 0};
      args[1] = {
          s % 2 ? du : dv, nullptr, 0, OPD_ARG_DIRECT, OPD_WRITE, 8, {}, {}, 0};
      int64_t lo[3] = {1, 1, 1};
      int64_t hi[3] = {HeatN[0] - 1, HeatN[1] - 1, HeatN[2] - 1};
      loops.push_back(opd_loop_prepare_block(
          nullptr, s ? "heat.later" : "heat.first", b, lo, hi, 2, args));
      ctxs[size_t(s)] = {{lo[0], lo[1], lo[2]},
                         {hi[0], hi[1], hi[2]},
                         s % 2 ? v.data() : u.data(),
                         s % 2 ? u.data() : v.data()};
      schedule.insert(schedule.end(), {s, s, s, int64_t(sizeof(HeatContext)),
                                       int64_t(offsetof(HeatContext, lo))});
    }
    const opd_body bodies[4] = {heatRows, heatRows, heatRows, heatRows};
    void *ctxp[4] = {&ctxs[0], &ctxs[1], &ctxs[2], &ctxs[3]};
    opd_skew_run(4, loops.data(), bodies, ctxp, schedule.data());
    ASSERT_EQ(u.size(), ru.size());
    for (size_t p = 0; p < points; ++p) {
      ASSERT_EQ(u[p], ru[p]) << "u at " << p;
      ASSERT_EQ(v[p], rv[p]) << "v at " << p;
    }
    const std::string text =
        opdc::rt::formatProfile(opdc::rt::collectProfile(), 1, 1);
    EXPECT_THAT(text, ::testing::HasSubstr("(in tiles of 27 rows of "
                                           "dimension 1)"));
    opd_rt_finalize();
  }
}

} // namespace
