// FPCheckTest.cpp - --check-fp: the first NaN or infinity a loop produces.
// SPDX-License-Identifier: Apache-2.0
#include "TestUtil.h"

#include "exec/FPCheck.h"
#include "opd_rt.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>
#include <vector>

using namespace opdc::rt;
using opdc::rt::test::RunResult;
using opdc::rt::test::runTestProgram;
using ::testing::ExitedWithCode;
using ::testing::HasSubstr;

namespace {

class FPCheckTest : public ::testing::Test {
protected:
  void SetUp() override {
    opd_rt_init(0, nullptr, "rt", nullptr, 0);
    setFPCheck(true);
  }
  void TearDown() override {
    setFPCheck(false);
    opd_rt_finalize();
    omp_set_num_threads(2);
  }
};

constexpr double Inf = std::numeric_limits<double>::infinity();
constexpr double NaN = std::numeric_limits<double>::quiet_NaN();

// Writes `value` into component `comp` of the elements in `at`, 1.0
// everywhere else (a direct OPD_WRITE loop).
struct Poke {
  double *d;
  int dim;
  std::vector<int64_t> at;
  int comp;
  double value;
};
void pokeBody(void *ctx, int64_t begin, int64_t end, int64_t) {
  auto *p = static_cast<Poke *>(ctx);
  for (int64_t i = begin; i < end; ++i)
    for (int c = 0; c < p->dim; ++c) {
      bool hit = c == p->comp &&
                 std::find(p->at.begin(), p->at.end(), i) != p->at.end();
      p->d[i * p->dim + c] = hit ? p->value : 1.0;
    }
}

void runPoke(opd_set *s, opd_dat *d, Poke poke, const char *location) {
  opd_arg args[] = {{d, nullptr, 0, OPD_ARG_DIRECT, OPD_WRITE, 8 * poke.dim}};
  opd_loop *slot = nullptr;
  opd_loop *l = opd_loop_prepare(&slot, "poke", s, 1, args);
  opd_loop_set_location(l, location);
  poke.d = static_cast<double *>(opd_dat_data(d));
  opd_loop_run(l, pokeBody, &poke);
}

TEST_F(FPCheckTest, DirectWriteOfNaN) {
  opd_set *s = opd_set_create("cells", 10000);
  opd_dat *d = opd_dat_create("q", s, OPD_F64, 3);
  // Two bad elements in different chunks: the lower index is reported,
  // whatever the threads.
  EXPECT_EXIT(
      runPoke(s, d, Poke{nullptr, 3, {9000, 5000}, 2, NaN}, "prog.opd:12:3"),
      ExitedWithCode(1),
      HasSubstr("rt: error: prog.opd:12:3: loop 'poke' over set "
                "'cells' produced NaN in dat 'q' at element 5000, "
                "component 2, in call 1 of this loop (--check-fp)\n"));
}

TEST_F(FPCheckTest, DirectWriteOfMinusInfinityWithoutLocation) {
  opd_set *s = opd_set_create("cells", 10);
  opd_dat *d = opd_dat_create("q", s, OPD_F64, 1);
  EXPECT_EXIT(runPoke(s, d, Poke{nullptr, 1, {0}, 0, -Inf}, nullptr),
              ExitedWithCode(1),
              HasSubstr("rt: error: loop 'poke' over set 'cells' produced "
                        "-inf in dat 'q' at element 0, component 0"));
}

// The message names the loop's call: the step of a time loop that calls it
// once per step (issue 53).
TEST_F(FPCheckTest, NamesTheCallOfTheLoop) {
  opd_set *s = opd_set_create("cells", 100);
  opd_dat *d = opd_dat_create("q", s, OPD_F64, 1);
  opd_arg args[] = {{d, nullptr, 0, OPD_ARG_DIRECT, OPD_WRITE, 8}};
  opd_loop *slot = nullptr;
  auto step = [&](double value) {
    opd_loop *l = opd_loop_prepare(&slot, "poke", s, 1, args);
    opd_loop_set_location(l, "step.opd:5:3");
    Poke poke{static_cast<double *>(opd_dat_data(d)), 1, {42}, 0, value};
    opd_loop_run(l, pokeBody, &poke);
  };
  EXPECT_EXIT(
      {
        for (int k = 0; k < 3; ++k)
          step(2.0);
        step(NaN);
      },
      ExitedWithCode(1),
      HasSubstr("rt: error: step.opd:5:3: loop 'poke' over set 'cells' "
                "produced NaN in dat 'q' at element 42, component 0, in "
                "call 4 of this loop (--check-fp)\n"));
}

TEST_F(FPCheckTest, OffReportsNothing) {
  setFPCheck(false);
  opd_set *s = opd_set_create("cells", 100);
  opd_dat *d = opd_dat_create("q", s, OPD_F64, 1);
  runPoke(s, d, Poke{nullptr, 1, {42}, 0, NaN}, "prog.opd:1:1");
  EXPECT_TRUE(std::isnan(static_cast<double *>(opd_dat_data(d))[42]));
}

// Reads `a`, writes b = 2: a NaN already in `a` is not the loop's.
struct Copy {
  const double *a;
  double *b;
};
void twoBody(void *ctx, int64_t begin, int64_t end, int64_t) {
  auto *c = static_cast<Copy *>(ctx);
  for (int64_t i = begin; i < end; ++i)
    c->b[i] = 2.0;
}

TEST_F(FPCheckTest, PreexistingNaNInReadDatIsNotReported) {
  opd_set *s = opd_set_create("cells", 100);
  opd_dat *a = opd_dat_create("a", s, OPD_F64, 1);
  opd_dat *b = opd_dat_create("b", s, OPD_F64, 1);
  static_cast<double *>(opd_dat_data(a))[7] = NaN;
  opd_arg args[] = {{a, nullptr, 0, OPD_ARG_DIRECT, OPD_READ, 8},
                    {b, nullptr, 0, OPD_ARG_DIRECT, OPD_WRITE, 8}};
  opd_loop *slot = nullptr;
  opd_loop *l = opd_loop_prepare(&slot, "two", s, 2, args);
  Copy c{static_cast<const double *>(opd_dat_data(a)),
         static_cast<double *>(opd_dat_data(b))};
  opd_loop_run(l, twoBody, &c);
  EXPECT_EQ(static_cast<double *>(opd_dat_data(b))[7], 2.0);
  // A dat the loop writes (here OPD_RW) is scanned whole: its old NaN is
  // reported at this loop.
  opd_arg rw[] = {{a, nullptr, 0, OPD_ARG_DIRECT, OPD_RW, 8}};
  opd_loop *slot2 = nullptr;
  opd_loop *l2 = opd_loop_prepare(&slot2, "touch", s, 1, rw);
  EXPECT_EXIT(opd_loop_run(
                  l2, [](void *, int64_t, int64_t, int64_t) {}, nullptr),
              ExitedWithCode(1),
              HasSubstr("loop 'touch' over set 'cells' produced NaN in dat "
                        "'a' at element 7, component 0"));
}

// Edges e -> nodes (e, e + 1); each edge adds 1 to both nodes, +inf
// through its second index when e is listed.
struct Inc {
  const int32_t *map;
  float *r;
  std::vector<int64_t> bad;
};
void incBody(void *ctx, int64_t begin, int64_t end, int64_t) {
  auto *s = static_cast<Inc *>(ctx);
  for (int64_t e = begin; e < end; ++e) {
    bool hit = std::find(s->bad.begin(), s->bad.end(), e) != s->bad.end();
    s->r[s->map[2 * e]] += 1.0f;
    s->r[s->map[2 * e + 1]] +=
        hit ? std::numeric_limits<float>::infinity() : 1.0f;
  }
}

TEST_F(FPCheckTest, IndirectIncrementOfInfinity) {
  const int n = 5000;
  opd_set *nodes = opd_set_create("nodes", n + 1);
  opd_set *edges = opd_set_create("edges", n);
  opd_map *m = opd_map_create("pedge", edges, nodes, 2);
  int32_t *md = opd_map_data(m);
  for (int e = 0; e < n; ++e) {
    md[2 * e] = e;
    md[2 * e + 1] = e + 1;
  }
  opd_dat *r = opd_dat_create("res", nodes, OPD_F32, 1);
  opd_arg args[] = {{r, m, 0, OPD_ARG_INDIRECT, OPD_INC, 4},
                    {r, m, 1, OPD_ARG_INDIRECT, OPD_INC, 4}};
  opd_loop *slot = nullptr;
  opd_loop *l = opd_loop_prepare(&slot, "flux", edges, 2, args);
  opd_loop_set_location(l, "air.opd:40:3");
  // Edges 4000 and 122 reach nodes 4001 and 123 (different blocks).
  Inc inc{opd_map_data(m), static_cast<float *>(opd_dat_data(r)), {4000, 122}};
  EXPECT_EXIT(opd_loop_run(l, incBody, &inc), ExitedWithCode(1),
              HasSubstr("rt: error: air.opd:40:3: loop 'flux' over set "
                        "'edges' produced +inf in dat 'res' at element 123, "
                        "component 0, in call 1 of this loop (--check-fp)"));
}

// Through a map only the elements it reaches are scanned: a NaN from
// before in an element the map reaches is reported, one elsewhere is not.
TEST_F(FPCheckTest, IndirectWritesScanTheElementsTheMapsReach) {
  opd_set *nodes = opd_set_create("nodes", 100);
  opd_set *bedges = opd_set_create("bedges", 10);
  opd_map *m = opd_map_create("pbedge", bedges, nodes, 2);
  for (int e = 0; e < 10; ++e) {
    opd_map_data(m)[2 * e] = 2 * e;
    opd_map_data(m)[2 * e + 1] = 2 * e + 1;
  }
  opd_dat *r = opd_dat_create("r", nodes, OPD_F32, 1);
  auto *rd = static_cast<float *>(opd_dat_data(r));
  rd[50] = std::numeric_limits<float>::quiet_NaN();
  opd_arg args[] = {{r, m, 0, OPD_ARG_INDIRECT, OPD_INC, 4},
                    {r, m, 1, OPD_ARG_INDIRECT, OPD_INC, 4}};
  opd_loop *slot = nullptr;
  opd_loop *l = opd_loop_prepare(&slot, "bres", bedges, 2, args);
  Inc inc{opd_map_data(m), rd, {}};
  opd_loop_run(l, incBody, &inc);
  EXPECT_EQ(rd[19], 1.0f);
  rd[13] = -std::numeric_limits<float>::infinity();
  EXPECT_EXIT(opd_loop_run(l, incBody, &inc), ExitedWithCode(1),
              HasSubstr("loop 'bres' over set 'bedges' produced -inf in dat "
                        "'r' at element 13, component 0"));
}

// Block loop: writes `value` at the listed points of the range, 0 elsewhere.
struct BlockPoke {
  char *origin;
  int64_t strides[2];
  int64_t lo0, hi0;
  std::vector<std::pair<int64_t, int64_t>> at;
  double value;
};
void blockPokeBody(void *ctx, int64_t begin, int64_t end, int64_t) {
  auto *p = static_cast<BlockPoke *>(ctx);
  for (int64_t j = begin; j < end; ++j)
    for (int64_t i = p->lo0; i < p->hi0; ++i) {
      bool hit =
          std::find(p->at.begin(), p->at.end(), std::pair{i, j}) != p->at.end();
      double *v = reinterpret_cast<double *>(p->origin) + i * p->strides[0] +
                  j * p->strides[1];
      *v = hit ? p->value : 0.0;
    }
}

TEST_F(FPCheckTest, BlockCentreWriteOfMinusInfinity) {
  opd_block *grid = opd_block_create("grid", 2);
  const int64_t size[2] = {20, 10}, halo[2] = {1, 1}, base[2] = {0, 0};
  opd_dat *u =
      opd_block_dat_create("u", grid, OPD_F64, 1, size, halo, halo, base);
  opd_arg args[] = {{u, nullptr, 0, OPD_ARG_STENCIL, OPD_WRITE, 8}};
  int64_t lo[2] = {-1, 0}, hi[2] = {21, 10};
  opd_loop *slot = nullptr;
  opd_loop *l = opd_loop_prepare_block(&slot, "smooth", grid, lo, hi, 1, args);
  opd_loop_set_location(l, "heat.opd:7:3");
  BlockPoke p{nullptr, {0, 0}, lo[0], hi[0], {{3, 4}, {15, 2}, {-1, 9}}, -Inf};
  p.origin = static_cast<char *>(opd_dat_origin(u, p.strides));
  // (15, 2) comes first: the outer dimension decides, then dimension 0.
  EXPECT_EXIT(opd_loop_run(l, blockPokeBody, &p), ExitedWithCode(1),
              HasSubstr("rt: error: heat.opd:7:3: loop 'smooth' over block "
                        "'grid' produced -inf in dat 'u' at point (15, 2), "
                        "component 0, in call 1 of this loop (--check-fp)"));
}

TEST_F(FPCheckTest, BlockPointsOutsideTheRangeAreNotScanned) {
  opd_block *grid = opd_block_create("grid", 2);
  const int64_t size[2] = {20, 10}, halo[2] = {1, 1}, base[2] = {0, 0};
  opd_dat *u =
      opd_block_dat_create("u", grid, OPD_F64, 1, size, halo, halo, base);
  const double nan = NaN;
  opd_dat_fill(u, &nan);
  opd_arg args[] = {{u, nullptr, 0, OPD_ARG_STENCIL, OPD_WRITE, 8}};
  int64_t lo[2] = {2, 3}, hi[2] = {5, 7};
  opd_loop *slot = nullptr;
  opd_loop *l = opd_loop_prepare_block(&slot, "part", grid, lo, hi, 1, args);
  BlockPoke p{nullptr, {0, 0}, lo[0], hi[0], {}, 0.0};
  p.origin = static_cast<char *>(opd_dat_origin(u, p.strides));
  opd_loop_run(l, blockPokeBody, &p);
  EXPECT_EQ(*reinterpret_cast<double *>(p.origin + 8 * (2 + 3 * p.strides[1])),
            0.0);
}

// A sum reduction of 1e308 per element: the partials overflow.
struct Sum {
  double *partials;
};
void bigSumBody(void *ctx, int64_t begin, int64_t end, int64_t chunk) {
  auto *s = static_cast<Sum *>(ctx);
  double acc = 0;
  for (int64_t i = begin; i < end; ++i)
    acc += 1e308;
  s->partials[chunk] = acc;
}

// Runs the reduction loop and combines as generated code does; `v` is the
// variable (its value before the loop counts).
double runSum(opd_set *s, double v) {
  opd_arg args[] = {{nullptr, nullptr, 0, OPD_ARG_GLOBAL, OPD_READ, 8},
                    {nullptr, nullptr, 0, OPD_ARG_REDUCTION, OPD_MAX, 8},
                    {nullptr, nullptr, 0, OPD_ARG_REDUCTION, OPD_SUM, 8}};
  opd_loop *slot = nullptr;
  opd_loop *l = opd_loop_prepare(&slot, "total", s, 3, args);
  opd_loop_set_location(l, "sum.opd:9:3");
  int64_t chunks = opd_loop_chunks(l);
  Sum sum{static_cast<double *>(opd_rt_scratch(chunks * 8))};
  opd_loop_run(l, bigSumBody, &sum);
  // The max reduction (argument 2) stays finite: 1.0.
  double mx = 1.0;
  opd_reduce_local(&mx, OPD_F64, OPD_MAX, 1);
  opd_reduce_global(&mx, OPD_F64, OPD_MAX, 1);
  opd_reduce_local(&v, OPD_F64, OPD_SUM, 1);
  for (int64_t c = 0; c < chunks; ++c)
    v += sum.partials[c];
  opd_reduce_global(&v, OPD_F64, OPD_SUM, 1);
  return v;
}

TEST_F(FPCheckTest, ReductionThatOverflows) {
  opd_set *s = opd_set_create("cells", 3);
  EXPECT_EXIT(runSum(s, 0.0), ExitedWithCode(1),
              HasSubstr("rt: error: sum.opd:9:3: loop 'total' over set "
                        "'cells' produced +inf in its sum reduction "
                        "(argument 3), component 0, in call 1 of this loop "
                        "(--check-fp)"));
}

TEST_F(FPCheckTest, ReductionFromNonFiniteValueIsNotReported) {
  opd_set *s = opd_set_create("cells", 3);
  EXPECT_TRUE(std::isnan(runSum(s, NaN)));
  setFPCheck(false);
  EXPECT_TRUE(std::isinf(runSum(s, 0.0)));
}

TEST_F(FPCheckTest, IntegerDatsAndReductionsAreNotScanned) {
  opd_set *s = opd_set_create("cells", 3);
  opd_dat *k = opd_dat_create("k", s, OPD_I64, 1);
  // 0x7ff0... is +inf as a double, an ordinary value as an i64.
  static_cast<int64_t *>(opd_dat_data(k))[1] = INT64_C(0x7ff0000000000000);
  opd_arg args[] = {{k, nullptr, 0, OPD_ARG_DIRECT, OPD_RW, 8}};
  opd_loop *slot = nullptr;
  opd_loop *l = opd_loop_prepare(&slot, "ints", s, 1, args);
  opd_loop_run(
      l, [](void *, int64_t, int64_t, int64_t) {}, nullptr);
  int64_t v = INT64_C(0x7ff0000000000000);
  opd_reduce_local(&v, OPD_I64, OPD_SUM, 1);
  opd_reduce_global(&v, OPD_I64, OPD_SUM, 1);
}

// Through the command line and the environment of a program.
TEST(FPCheckOption, CommandLineAndEnvironment) {
  const char *msg = "testprog: error: prog.opd:3:5: loop 'divide' over set "
                    "'cells' produced +inf in dat 'r' at element 7, "
                    "component 0, in call 1 of this loop (--check-fp)\n";
  RunResult off = runTestProgram({"--mode=fp"});
  EXPECT_EQ(off.status, 0);
  EXPECT_EQ(off.out, "written\n");
  RunResult on = runTestProgram({"--mode=fp", "--check-fp"});
  EXPECT_EQ(on.status, 1);
  EXPECT_EQ(on.out, "");
  EXPECT_EQ(on.err, msg);
  EXPECT_EQ(runTestProgram({"--mode=fp", "--n=-1", "--check-fp=1"}).status, 0);
  setenv("OPD_CHECK_FP", "1", 1);
  RunResult env = runTestProgram({"--mode=fp"});
  RunResult overridden = runTestProgram({"--mode=fp", "--check-fp=false"});
  setenv("OPD_CHECK_FP", "yes", 1);
  RunResult bad = runTestProgram({"--mode=fp"});
  setenv("OPD_CHECK_FP", "0", 1);
  RunResult zero = runTestProgram({"--mode=fp"});
  unsetenv("OPD_CHECK_FP");
  EXPECT_EQ(env.status, 1);
  EXPECT_EQ(env.err, msg);
  EXPECT_EQ(overridden.status, 0);
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.err, "testprog: error: invalid value 'yes' for environment "
                     "variable OPD_CHECK_FP: expected 1, 0, true or false\n");
  EXPECT_EQ(zero.status, 0);
}

} // namespace
