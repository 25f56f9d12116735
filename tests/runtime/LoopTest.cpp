// LoopTest.cpp - Chunked and coloured loop execution, caching, determinism.
// SPDX-License-Identifier: Apache-2.0
#include "exec/Loop.h"
#include "core/Objects.h"
#include "core/Profile.h"
#include "core/Runtime.h"
#include "exec/Plan.h"

#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <omp.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>

using namespace opdc::rt;
using opdc::rt::test::spinFor;

namespace {

// The colouring unless a test asks for super-blocks (the tests of chunks
// and blocks below are the colouring's).
class LoopTest : public ::testing::Test {
protected:
  void SetUp() override { setPlanKind(PlanKind::Colour); }
  void TearDown() override {
    opd_rt_finalize();
    omp_set_num_threads(2);
    setPlanKind(DefaultPlanKind);
  }
};

struct Range {
  int64_t begin, end, chunk;
};
struct Recorder {
  std::vector<Range> ranges; // one slot per chunk
  std::vector<int> visits;   // per element
};
void recordBody(void *ctx, int64_t begin, int64_t end, int64_t chunk) {
  auto *r = static_cast<Recorder *>(ctx);
  r->ranges[std::size_t(chunk)] = {begin, end, chunk};
  for (int64_t i = begin; i < end; ++i)
    ++r->visits[std::size_t(i)];
}

TEST_F(LoopTest, DirectLoopChunksAreFixed) {
  opd_set *s = opd_set_create("s", 10000);
  opd_dat *d = opd_dat_create("d", s, OPD_F64, 1);
  opd_arg args[] = {{d, nullptr, 0, OPD_ARG_DIRECT, OPD_WRITE, 8}};
  opd_loop *slot = nullptr;
  opd_loop *l = opd_loop_prepare(&slot, "direct", s, 1, args);
  EXPECT_EQ(slot, l);
  ASSERT_EQ(opd_loop_chunks(l), 3);
  EXPECT_EQ(DirectChunkSize, 4096);
  Recorder r{std::vector<Range>(3), std::vector<int>(10000, 0)};
  opd_loop_run(l, recordBody, &r);
  EXPECT_EQ(r.ranges[0].begin, 0);
  EXPECT_EQ(r.ranges[0].end, 4096);
  EXPECT_EQ(r.ranges[1].begin, 4096);
  EXPECT_EQ(r.ranges[2].begin, 8192);
  EXPECT_EQ(r.ranges[2].end, 10000);
  for (int v : r.visits)
    ASSERT_EQ(v, 1);
  // Same site, same arguments: the same handle, nothing rebuilt.
  EXPECT_EQ(opd_loop_prepare(&slot, "direct", s, 1, args), l);
}

TEST_F(LoopTest, EmptySetRunsNothing) {
  opd_set *s = opd_set_create("empty", 0);
  opd_loop *slot = nullptr;
  opd_loop *l = opd_loop_prepare(&slot, "none", s, 0, nullptr);
  EXPECT_EQ(opd_loop_chunks(l), 0);
  Recorder r;
  opd_loop_run(l, recordBody, &r);
}

TEST_F(LoopTest, IndirectReadOnlyLoopIsDirect) {
  opd_set *edges = opd_set_create("edges", 5000);
  opd_set *nodes = opd_set_create("nodes", 10);
  opd_map *m = opd_map_create("m", edges, nodes, 2);
  opd_dat *x = opd_dat_create("x", nodes, OPD_F64, 2);
  opd_arg args[] = {{x, m, 0, OPD_ARG_INDIRECT, OPD_READ, 16},
                    {x, m, 1, OPD_ARG_INDIRECT, OPD_READ, 16}};
  opd_loop *slot = nullptr;
  opd_loop *l = opd_loop_prepare(&slot, "gather", edges, 2, args);
  EXPECT_EQ(l->plan, nullptr);
  EXPECT_EQ(opd_loop_chunks(l), 2);
}

// A random edges -> nodes mesh and an increment kernel.
struct IncMesh {
  opd_set *edges, *nodes;
  opd_map *m;
  opd_dat *w, *acc;
};
IncMesh makeIncMesh(int64_t ne, int64_t nn, uint64_t seed) {
  IncMesh mesh;
  mesh.edges = opd_set_create("edges", ne);
  mesh.nodes = opd_set_create("nodes", nn);
  mesh.m = opd_map_create("pedge", mesh.edges, mesh.nodes, 2);
  mesh.w = opd_dat_create("w", mesh.edges, OPD_F64, 1);
  mesh.acc = opd_dat_create("acc", mesh.nodes, OPD_F64, 1);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> pick(0, int32_t(nn - 1));
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  auto *w = static_cast<double *>(opd_dat_data(mesh.w));
  for (int64_t e = 0; e < ne; ++e) {
    mesh.m->data[2 * e] = pick(rng);
    mesh.m->data[2 * e + 1] = pick(rng);
    w[e] = val(rng) * std::pow(10.0, double(e % 17) - 8);
  }
  return mesh;
}

struct IncCtx {
  const int32_t *map;
  const double *w;
  double *acc;
  std::vector<int> *visits;
  std::vector<int64_t> *chunkBegin;
};
void incBody(void *ctx, int64_t begin, int64_t end, int64_t chunk) {
  auto *c = static_cast<IncCtx *>(ctx);
  (*c->chunkBegin)[std::size_t(chunk)] = begin;
  for (int64_t e = begin; e < end; ++e) {
    ++(*c->visits)[std::size_t(e)];
    c->acc[c->map[2 * e]] += c->w[e];
    c->acc[c->map[2 * e + 1]] -= 0.5 * c->w[e];
  }
}

std::vector<double> runInc(const IncMesh &mesh, opd_loop **slot) {
  opd_arg args[] = {
      {mesh.w, nullptr, 0, OPD_ARG_DIRECT, OPD_READ, 8},
      {mesh.acc, mesh.m, 0, OPD_ARG_INDIRECT, OPD_INC, 8},
      {mesh.acc, mesh.m, 1, OPD_ARG_INDIRECT, OPD_INC, 8},
  };
  opd_loop *l = opd_loop_prepare(slot, "inc", mesh.edges, 3, args);
  double zero = 0;
  opd_dat_fill(mesh.acc, &zero);
  std::vector<int> visits(std::size_t(mesh.edges->size), 0);
  std::vector<int64_t> begins(std::size_t(opd_loop_chunks(l)), -1);
  IncCtx ctx{mesh.m->data, static_cast<const double *>(opd_dat_data(mesh.w)),
             static_cast<double *>(opd_dat_data(mesh.acc)), &visits, &begins};
  opd_loop_run(l, incBody, &ctx);
  for (int v : visits)
    EXPECT_EQ(v, 1);
  // Chunk index = block index.
  for (std::size_t b = 0; b < begins.size(); ++b)
    EXPECT_EQ(begins[b], int64_t(b) * PlanBlockSize);
  auto *acc = static_cast<double *>(opd_dat_data(mesh.acc));
  return std::vector<double>(acc, acc + mesh.nodes->size);
}

TEST_F(LoopTest, ColouredIncrementMatchesSerialAndIsThreadIndependent) {
  IncMesh mesh = makeIncMesh(200000, 30000, 11);
  opd_loop *slot = nullptr;
  omp_set_num_threads(1);
  std::vector<double> one = runInc(mesh, &slot);
  ASSERT_NE(slot->plan, nullptr);
  EXPECT_EQ(opd_loop_chunks(slot),
            (200000 + PlanBlockSize - 1) / PlanBlockSize);
  omp_set_num_threads(2);
  int64_t built = plansBuilt();
  std::vector<double> two = runInc(mesh, &slot);
  EXPECT_EQ(plansBuilt(), built) << "the cached plan is reused";
  ASSERT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(double)),
            0);
  // Against a plain serial loop, up to rounding.
  std::vector<double> serial(30000, 0.0);
  auto *w = static_cast<const double *>(opd_dat_data(mesh.w));
  for (int64_t e = 0; e < 200000; ++e) {
    serial[std::size_t(mesh.m->data[2 * e])] += w[e];
    serial[std::size_t(mesh.m->data[2 * e + 1])] -= 0.5 * w[e];
  }
  for (std::size_t i = 0; i < serial.size(); ++i)
    ASSERT_NEAR(one[i], serial[i], 1e-9 * (1 + std::fabs(serial[i])));
}

// The super-block schedule (--plan=super) on a mesh with locality: edges
// of a grid (horizontal, then vertical within each row, as a structured
// generator numbers them) incrementing their two nodes.
IncMesh makeGridEdges(int64_t nx, int64_t ny) {
  IncMesh mesh;
  std::vector<int32_t> ends;
  auto node = [&](int64_t i, int64_t j) { return int32_t(j * (nx + 1) + i); };
  for (int64_t j = 0; j <= ny; ++j)
    for (int64_t i = 0; i <= nx; ++i) {
      if (i < nx)
        ends.insert(ends.end(), {node(i, j), node(i + 1, j)});
      if (j < ny)
        ends.insert(ends.end(), {node(i, j), node(i, j + 1)});
    }
  const int64_t ne = int64_t(ends.size() / 2);
  mesh.edges = opd_set_create("edges", ne);
  mesh.nodes = opd_set_create("nodes", (nx + 1) * (ny + 1));
  mesh.m = opd_map_create("pedge", mesh.edges, mesh.nodes, 2);
  std::copy(ends.begin(), ends.end(), mesh.m->data);
  mesh.w = opd_dat_create("w", mesh.edges, OPD_F64, 1);
  mesh.acc = opd_dat_create("acc", mesh.nodes, OPD_F64, 1);
  auto *w = static_cast<double *>(opd_dat_data(mesh.w));
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  for (int64_t e = 0; e < ne; ++e)
    w[e] = val(rng) * std::pow(10.0, double(e % 17) - 8);
  return mesh;
}

struct SuperCtx {
  const int32_t *map;
  const double *w;
  double *acc;
  double *partials; // one per chunk, accumulated as generated code does
  std::vector<int> *visits;
};
void superBody(void *ctx, int64_t begin, int64_t end, int64_t chunk) {
  auto *c = static_cast<SuperCtx *>(ctx);
  double sum = c->partials[chunk];
  for (int64_t e = begin; e < end; ++e) {
    ++(*c->visits)[std::size_t(e)];
    c->acc[c->map[2 * e]] += c->w[e];
    c->acc[c->map[2 * e + 1]] -= 0.5 * c->w[e];
    sum += c->w[e] * double(e % 7);
  }
  c->partials[chunk] = sum;
}

TEST_F(LoopTest, SuperBlockIncrementIsThreadIndependentAndInScheduleOrder) {
  IncMesh mesh = makeGridEdges(300, 120);
  opd_arg args[] = {
      {mesh.w, nullptr, 0, OPD_ARG_DIRECT, OPD_READ, 8},
      {mesh.acc, mesh.m, 0, OPD_ARG_INDIRECT, OPD_INC, 8},
      {mesh.acc, mesh.m, 1, OPD_ARG_INDIRECT, OPD_INC, 8},
      {nullptr, nullptr, 0, OPD_ARG_REDUCTION, OPD_SUM, 8}};
  setPlanKind(PlanKind::Super);
  const auto *w = static_cast<const double *>(opd_dat_data(mesh.w));
  auto *acc = static_cast<double *>(opd_dat_data(mesh.acc));
  std::vector<double> results[2];
  double sums[2];
  opd_loop *slot = nullptr;
  for (int t = 0; t < 2; ++t) {
    omp_set_num_threads(t + 1);
    opd_loop *l = opd_loop_prepare(&slot, "inc", mesh.edges, 4, args);
    ASSERT_NE(l->plan, nullptr);
    ASSERT_GT(l->plan->plan.super.nsuper, 1);
    ASSERT_GT(l->plan->plan.super.crossElements, 0);
    EXPECT_EQ(opd_loop_chunks(l), l->plan->plan.nblocks);
    double zero = 0;
    opd_dat_fill(mesh.acc, &zero);
    std::vector<double> partials(std::size_t(opd_loop_chunks(l)), 0.0);
    std::vector<int> visits(std::size_t(mesh.edges->size), 0);
    SuperCtx ctx{mesh.m->data, w, acc, partials.data(), &visits};
    opd_loop_run(l, superBody, &ctx);
    for (int v : visits)
      ASSERT_EQ(v, 1);
    results[t].assign(acc, acc + mesh.nodes->size);
    sums[t] = 0;
    for (double p : partials)
      sums[t] += p;
  }
  ASSERT_EQ(std::memcmp(results[0].data(), results[1].data(),
                        results[0].size() * sizeof(double)),
            0);
  EXPECT_EQ(std::memcmp(&sums[0], &sums[1], sizeof(double)), 0);

  // Bit for bit the schedule run serially: super-blocks one after the
  // other, then the cross runs colour by colour.
  const Plan &p = slot->plan->plan;
  const SuperPlan &s = p.super;
  std::vector<double> serial(std::size_t(mesh.nodes->size), 0.0);
  auto run = [&](const ElementRun &r) {
    for (int64_t e = r.begin; e < r.end; ++e) {
      serial[std::size_t(mesh.m->data[2 * e])] += w[e];
      serial[std::size_t(mesh.m->data[2 * e + 1])] -= 0.5 * w[e];
    }
  };
  for (int64_t b = 0; b < p.nblocks; ++b)
    for (int64_t r = s.ownOffsets[std::size_t(b)];
         r < s.ownOffsets[std::size_t(b) + 1]; ++r)
      run(s.ownRuns[std::size_t(r)]);
  for (int64_t b : s.crossBlocks)
    for (int64_t r = s.crossOffsets[std::size_t(b)];
         r < s.crossOffsets[std::size_t(b) + 1]; ++r)
      run(s.crossRuns[std::size_t(r)]);
  EXPECT_EQ(std::memcmp(results[0].data(), serial.data(),
                        serial.size() * sizeof(double)),
            0);
}

// OPD_LLC_BYTES=1: every loop is beyond the cache. The size is read once
// a process, so false if an earlier test in this process read it first.
bool everyLoopBeyondTheCache() {
  setenv("OPD_LLC_BYTES", "1", 1);
  return lastLevelCacheBytes() == 1;
}

// The profile's plan line of every loop, by name.
std::map<std::string, std::string> profilePlans() {
  std::map<std::string, std::string> plans;
  for (const ProfileRow &row : collectProfile())
    plans[row.name] = row.plan;
  return plans;
}

TEST_F(LoopTest, ProfileNamesStreamingStores) {
  // opd_loop_streams counts the calls it told to stream; the profile's plan
  // line names them with the loop's bytes and the cache they exceed. The
  // cache size is read once per process: skip if an earlier test in this
  // process fixed it to something other than OPD_LLC_BYTES=1.
  if (!everyLoopBeyondTheCache())
    GTEST_SKIP() << "the last-level cache was read before OPD_LLC_BYTES";
  opd_set *s = opd_set_create("s", 10000);
  opd_dat *d = opd_dat_create("d", s, OPD_F64, 1);
  opd_arg args[] = {{d, nullptr, 0, OPD_ARG_DIRECT, OPD_WRITE, 8}};
  opd_loop *streamSlot = nullptr, *plainSlot = nullptr;
  opd_loop *streamed = opd_loop_prepare(&streamSlot, "streamed", s, 1, args);
  Recorder r{std::vector<Range>(3), std::vector<int>(10000, 0)};
  ASSERT_EQ(opd_loop_streams(streamed), 1);
  opd_loop_run(streamed, recordBody, &r);
  opd_loop_run(streamed, recordBody, &r);
  opd_loop *plain = opd_loop_prepare(&plainSlot, "plain", s, 1, args);
  opd_loop_run(plain, recordBody, &r);
  std::map<std::string, std::string> plans = profilePlans();
  EXPECT_THAT(plans["streamed"],
              ::testing::ContainsRegex("^streaming stores in 1 of 2 calls "
                                       "\\([0-9]+ MiB a call, last-level "
                                       "cache 0 MiB\\)$"));
  EXPECT_EQ(plans["plain"], "");
}

struct SlowCtx {
  int slow = 0; // milliseconds to wait when the call streams
  int streaming = 0;
};
void slowBody(void *ctx, int64_t, int64_t, int64_t) {
  auto *c = static_cast<SlowCtx *>(ctx);
  if (c->streaming)
    spinFor(c->slow);
}

TEST_F(LoopTest, StreamingIsKeptOnlyWhereItIsFaster) {
  // After an untimed streaming call, StreamTrials calls alternate plain and
  // streaming bodies; the faster stays. Here streaming calls are made
  // slower, so plain stays and the profile says why.
  if (!everyLoopBeyondTheCache())
    GTEST_SKIP() << "the last-level cache was read before OPD_LLC_BYTES";
  omp_set_num_threads(1);
  opd_set *s = opd_set_create("s", 100);
  opd_dat *d = opd_dat_create("d", s, OPD_F64, 1);
  opd_arg args[] = {{d, nullptr, 0, OPD_ARG_DIRECT, OPD_WRITE, 8}};
  opd_loop *slot = nullptr;
  opd_loop *l = opd_loop_prepare(&slot, "timed", s, 1, args);
  SlowCtx ctx{20, 0};
  std::vector<int> chosen;
  for (int call = 0; call < StreamTrials + 4; ++call) {
    ctx.streaming = opd_loop_streams(l);
    chosen.push_back(ctx.streaming);
    opd_loop_run(l, slowBody, &ctx);
  }
  // Warm-up streams, then plain and streaming alternate, then plain.
  std::vector<int> expected{1};
  for (int k = 0; k < StreamTrials; ++k)
    expected.push_back(k % 2 == 0 ? 0 : 1);
  expected.insert(expected.end(), 3, 0);
  EXPECT_EQ(chosen, expected);
  std::map<std::string, std::string> plans = profilePlans();
  EXPECT_THAT(plans["timed"],
              ::testing::ContainsRegex(", then plain by timing \\(best "
                                       "[0-9.]+ ms streaming, [0-9.]+ ms "
                                       "plain\\)$"));
}

struct BodyCtx {
  int slowScalar = 0, slowVector = 0; // milliseconds a call of each body
  int scalar = 0;
};
void variantBody(void *ctx, int64_t, int64_t, int64_t) {
  auto *c = static_cast<BodyCtx *>(ctx);
  spinFor(c->scalar ? c->slowScalar : c->slowVector);
}

TEST_F(LoopTest, ScalarBodyIsTimedBeforeStreaming) {
  // A loop with a scalar body: after an untimed vectorised call,
  // ScalarTrials calls alternate the scalar and the vectorised bodies and
  // the faster stays; meanwhile, and while the scalar body stays, the loop
  // does not stream. Once the vectorised body stays, streaming is timed.
  if (!everyLoopBeyondTheCache())
    GTEST_SKIP() << "the last-level cache was read before OPD_LLC_BYTES";
  omp_set_num_threads(1);
  opd_set *s = opd_set_create("s", 100);
  opd_dat *d = opd_dat_create("d", s, OPD_F64, 1);
  opd_arg args[] = {{d, nullptr, 0, OPD_ARG_DIRECT, OPD_WRITE, 8}};
  std::vector<int> alternate{0};
  for (int k = 0; k < ScalarTrials; ++k)
    alternate.push_back(k % 2 == 0 ? 1 : 0);
  for (bool scalarWins : {true, false}) {
    SCOPED_TRACE(scalarWins ? "scalar faster" : "vectorised faster");
    opd_loop *slot = nullptr;
    opd_loop *l =
        opd_loop_prepare(&slot, scalarWins ? "scalar" : "vector", s, 1, args);
    BodyCtx ctx{scalarWins ? 0 : 20, scalarWins ? 20 : 0, 0};
    std::vector<int> chosen, streamed;
    for (int call = 0; call < ScalarTrials + 4; ++call) {
      ctx.scalar = opd_loop_scalar(l);
      streamed.push_back(opd_loop_streams(l));
      chosen.push_back(ctx.scalar);
      opd_loop_run(l, variantBody, &ctx);
    }
    std::vector<int> expected = alternate;
    expected.insert(expected.end(), 3, scalarWins ? 1 : 0);
    EXPECT_EQ(chosen, expected);
    // Streaming's untimed first call comes after the decision, and only
    // when the vectorised body stays.
    std::vector<int> expectedStreams(std::size_t(ScalarTrials) + 4, 0);
    if (!scalarWins) // untimed streaming, plain, streaming
      expectedStreams[std::size_t(ScalarTrials) + 1] =
          expectedStreams[std::size_t(ScalarTrials) + 3] = 1;
    EXPECT_EQ(streamed, expectedStreams);
  }
  std::map<std::string, std::string> plans = profilePlans();
  EXPECT_THAT(plans["scalar"],
              ::testing::ContainsRegex(
                  "^scalar body \\(branches kept\\) in 6 of 10 calls, then "
                  "scalar by timing \\(best [0-9.]+ ms scalar, [0-9.]+ ms "
                  "vectorised\\)$"));
  EXPECT_THAT(plans["vector"],
              ::testing::HasSubstr(", then vectorised by timing (best "));
}

TEST_F(LoopTest, ProfileNamesThePlanThatRan) {
  // Under --plan=super, opd_loop_run runs the super-blocks; a backend that
  // runs the plan parts itself (opd_loop_part_get) runs the colouring, and
  // the profile says so.
  IncMesh mesh = makeGridEdges(300, 120);
  opd_arg args[] = {
      {mesh.w, nullptr, 0, OPD_ARG_DIRECT, OPD_READ, 8},
      {mesh.acc, mesh.m, 0, OPD_ARG_INDIRECT, OPD_INC, 8},
      {mesh.acc, mesh.m, 1, OPD_ARG_INDIRECT, OPD_INC, 8},
      {nullptr, nullptr, 0, OPD_ARG_REDUCTION, OPD_SUM, 8}};
  setPlanKind(PlanKind::Super);
  std::vector<double> partials;
  std::vector<int> visits(std::size_t(mesh.edges->size), 0);
  SuperCtx ctx{mesh.m->data, static_cast<const double *>(opd_dat_data(mesh.w)),
               static_cast<double *>(opd_dat_data(mesh.acc)), nullptr, &visits};
  opd_loop *runSlot = nullptr, *partsSlot = nullptr;
  opd_loop *run = opd_loop_prepare(&runSlot, "by_run", mesh.edges, 4, args);
  partials.assign(std::size_t(opd_loop_chunks(run)), 0.0);
  ctx.partials = partials.data();
  opd_loop_run(run, superBody, &ctx);
  opd_loop *parts = opd_loop_prepare(&partsSlot, "by_parts", mesh.edges, 4, args);
  opd_loop_begin(parts);
  for (int32_t q = 0; q < opd_loop_part_count(parts); ++q) {
    opd_loop_part part;
    opd_loop_part_get(parts, q, &part);
    for (int64_t k = 0; k < part.nblocks; ++k) {
      const int64_t b = part.blocks[k];
      const int64_t begin = part.first + b * part.block_size;
      superBody(&ctx, begin,
                std::min(begin + part.block_size, part.first + part.count),
                part.chunk0 + b);
    }
  }
  opd_loop_end(parts);
  std::map<std::string, std::string> plans = profilePlans();
  EXPECT_THAT(plans["by_run"],
              ::testing::ContainsRegex("^super, [0-9]+ super-blocks, "));
  EXPECT_THAT(plans["by_parts"], ::testing::StartsWith("colour, "));
}

struct SumCtx {
  const double *a;
  double *partials;
};
void sumBody(void *ctx, int64_t begin, int64_t end, int64_t chunk) {
  auto *s = static_cast<SumCtx *>(ctx);
  double acc = 0;
  for (int64_t i = begin; i < end; ++i)
    acc += s->a[i];
  s->partials[chunk] = acc;
}

double chunkedSum(opd_set *s, opd_dat *a, opd_loop **slot) {
  opd_arg args[] = {{a, nullptr, 0, OPD_ARG_DIRECT, OPD_READ, 8},
                    {nullptr, nullptr, 0, OPD_ARG_REDUCTION, OPD_SUM, 8}};
  opd_loop *l = opd_loop_prepare(slot, "sum", s, 2, args);
  int64_t chunks = opd_loop_chunks(l);
  auto *partials = static_cast<double *>(opd_rt_scratch(chunks * 8));
  SumCtx ctx{static_cast<const double *>(opd_dat_data(a)), partials};
  opd_loop_run(l, sumBody, &ctx);
  double total = 0;
  for (int64_t c = 0; c < chunks; ++c)
    total += partials[c];
  return total;
}

TEST_F(LoopTest, ReductionSameBitsWithOneAndTwoThreads) {
  const int64_t n = 1000003;
  opd_set *s = opd_set_create("s", n);
  opd_dat *a = opd_dat_create("a", s, OPD_F64, 1);
  auto *d = static_cast<double *>(opd_dat_data(a));
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  for (int64_t i = 0; i < n; ++i)
    d[i] = val(rng) * std::pow(10.0, double(i % 23) - 11);
  opd_loop *slot = nullptr;
  omp_set_num_threads(1);
  double one = chunkedSum(s, a, &slot);
  omp_set_num_threads(2);
  double two = chunkedSum(s, a, &slot);
  EXPECT_EQ(std::memcmp(&one, &two, sizeof one), 0) << one << " vs " << two;
}

TEST_F(LoopTest, ColouredReductionSameBitsWithOneAndTwoThreads) {
  IncMesh mesh = makeIncMesh(100000, 20000, 3);
  opd_arg args[] = {{mesh.w, nullptr, 0, OPD_ARG_DIRECT, OPD_READ, 8},
                    {mesh.acc, mesh.m, 0, OPD_ARG_INDIRECT, OPD_INC, 8},
                    {nullptr, nullptr, 0, OPD_ARG_REDUCTION, OPD_SUM, 8}};
  double results[2];
  for (int t = 0; t < 2; ++t) {
    omp_set_num_threads(t + 1);
    opd_loop *slot = nullptr;
    opd_loop *l = opd_loop_prepare(&slot, "wsum", mesh.edges, 3, args);
    int64_t chunks = opd_loop_chunks(l);
    auto *partials = static_cast<double *>(opd_rt_scratch(chunks * 8));
    SumCtx ctx{static_cast<const double *>(opd_dat_data(mesh.w)), partials};
    opd_loop_run(l, sumBody, &ctx);
    results[t] = 0;
    for (int64_t c = 0; c < chunks; ++c)
      results[t] += partials[c];
  }
  EXPECT_EQ(std::memcmp(&results[0], &results[1], sizeof(double)), 0);
}

struct FillMapCtx {
  int32_t *map;
  int32_t shift, n;
};
void fillMapBody(void *ctx, int64_t begin, int64_t end, int64_t) {
  auto *c = static_cast<FillMapCtx *>(ctx);
  for (int64_t e = begin; e < end; ++e) {
    c->map[2 * e] = int32_t((e + c->shift) % c->n);
    c->map[2 * e + 1] = int32_t((e + c->shift + 1) % c->n);
  }
}

TEST_F(LoopTest, MapWrittenByALoopInvalidatesItsPlan) {
  const int32_t n = 5000;
  opd_set *edges = opd_set_create("edges", n);
  opd_set *nodes = opd_set_create("nodes", n);
  opd_map *m = opd_map_create("ring", edges, nodes, 2);
  opd_dat *w = opd_dat_create("w", edges, OPD_F64, 1);
  opd_dat *acc = opd_dat_create("acc", nodes, OPD_F64, 1);
  double one = 1.0;
  opd_dat_fill(w, &one);
  opd_loop *fillSlot = nullptr, *incSlot = nullptr;
  IncMesh mesh{edges, nodes, m, w, acc};
  for (int32_t shift : {0, 7}) {
    opd_arg fargs[] = {{nullptr, m, 0, OPD_ARG_MAP, OPD_WRITE, 8}};
    opd_loop *fl = opd_loop_prepare(&fillSlot, "fill", edges, 1, fargs);
    FillMapCtx fc{m->data, shift, n};
    opd_loop_run(fl, fillMapBody, &fc);
    int64_t built = plansBuilt();
    std::vector<double> acc1 = runInc(mesh, &incSlot);
    EXPECT_EQ(plansBuilt(), built + 1) << "the map changed: new plan";
    for (double v : acc1)
      ASSERT_EQ(v, 0.5); // +1 from one edge, -0.5 from the other
  }
}

TEST_F(LoopTest, ChangedArgumentsAtOneSiteRebuild) {
  IncMesh mesh = makeIncMesh(3000, 1000, 2);
  opd_loop *slot = nullptr;
  opd_arg direct[] = {{mesh.w, nullptr, 0, OPD_ARG_DIRECT, OPD_RW, 8}};
  opd_loop *l = opd_loop_prepare(&slot, "site", mesh.edges, 1, direct);
  EXPECT_EQ(l->plan, nullptr);
  opd_arg inc[] = {{mesh.acc, mesh.m, 0, OPD_ARG_INDIRECT, OPD_INC, 8}};
  opd_loop *l2 = opd_loop_prepare(&slot, "site", mesh.edges, 1, inc);
  EXPECT_EQ(l, l2) << "the handle stays valid";
  EXPECT_NE(l2->plan, nullptr);
  EXPECT_EQ(opd_loop_chunks(l2), (3000 + PlanBlockSize - 1) / PlanBlockSize);
}

TEST_F(LoopTest, BadProgramFilledMapIsReportedBeforeUse) {
  opd_rt_init(0, nullptr, "rt", nullptr, 0);
  opd_set *edges = opd_set_create("edges", 4);
  opd_set *nodes = opd_set_create("nodes", 3);
  opd_map *m = opd_map_create("pedge", edges, nodes, 2);
  m->data[5] = -1;
  opd_dat *x = opd_dat_create("x", nodes, OPD_F64, 1);
  opd_arg args[] = {{x, m, 1, OPD_ARG_INDIRECT, OPD_READ, 8}};
  opd_loop *slot = nullptr;
  EXPECT_EXIT(opd_loop_prepare(&slot, "gather", edges, 1, args),
              ::testing::ExitedWithCode(1),
              ::testing::HasSubstr("rt: error: map 'pedge' (edges -> nodes): "
                                   "index -1 at [2][1] is out of range for "
                                   "set 'nodes' of size 3"));
}

// Block loops: chunks of whole outer-dimension indices.
struct BlockRec {
  std::vector<Range> ranges;
};
void blockBody(void *ctx, int64_t begin, int64_t end, int64_t chunk) {
  static_cast<BlockRec *>(ctx)->ranges[std::size_t(chunk)] = {begin, end,
                                                              chunk};
}

TEST_F(LoopTest, BlockLoopChunksOverOuterDimension) {
  opd_block *b2 = opd_block_create("grid", 2);
  int64_t lo[2] = {1, 2}, hi[2] = {101, 52};
  opd_loop *slot = nullptr;
  opd_loop *l =
      opd_loop_prepare_block(&slot, "stencil", b2, lo, hi, 0, nullptr);
  // 100 points per row: 40 rows per chunk; rows 2..51 give 2 chunks.
  ASSERT_EQ(opd_loop_chunks(l), 2);
  BlockRec r{std::vector<Range>(2)};
  opd_loop_run(l, blockBody, &r);
  EXPECT_EQ(r.ranges[0].begin, 2);
  EXPECT_EQ(r.ranges[0].end, 42);
  EXPECT_EQ(r.ranges[1].begin, 42);
  EXPECT_EQ(r.ranges[1].end, 52);
  EXPECT_EQ(opd_loop_prepare_block(&slot, "stencil", b2, lo, hi, 0, nullptr),
            l);
  // A new range at the same site is recomputed.
  int64_t hi2[2] = {101, 200};
  l = opd_loop_prepare_block(&slot, "stencil", b2, lo, hi2, 0, nullptr);
  EXPECT_EQ(opd_loop_chunks(l), 5); // 198 rows / 40
  int64_t empty[2] = {101, 2};
  l = opd_loop_prepare_block(&slot, "stencil", b2, empty, hi, 0, nullptr);
  EXPECT_EQ(opd_loop_chunks(l), 0);
}

// One process: the distributed-memory entry points change nothing.
TEST_F(LoopTest, OneProcessOwnsEverything) {
  opd_block *b2 = opd_block_create("grid", 2);
  const int64_t size[2] = {7, 5}, halo[2] = {1, 1}, base[2] = {0, 0};
  opd_dat *u = opd_block_dat_create("u", b2, OPD_F64, 1, size, halo, halo,
                                    base);
  // The range is left as asked, halo included.
  int64_t lo[2] = {-1, 0}, hi[2] = {8, 6};
  opd_loop *slot = nullptr;
  opd_loop_prepare_block(&slot, "all", b2, lo, hi, 0, nullptr);
  EXPECT_EQ(lo[0], -1);
  EXPECT_EQ(hi[0], 8);
  EXPECT_EQ(hi[1], 6);
  // Storage starts at the first halo point, as before.
  int64_t strides[2];
  auto *origin = static_cast<char *>(opd_dat_origin(u, strides));
  EXPECT_EQ(origin + (-1 - 1 * strides[1]) * 8,
            static_cast<char *>(opd_dat_data(u)));
  // Reductions are already global; sums keep their value.
  double v[2] = {1.5, -2.0};
  opd_reduce_local(v, OPD_F64, OPD_SUM, 2);
  opd_reduce_global(v, OPD_F64, OPD_SUM, 2);
  EXPECT_EQ(v[0], 1.5);
  EXPECT_EQ(v[1], -2.0);
  // Sets keep their numbering: no global ids, maps read as stored.
  opd_set *s = opd_set_create("s", 3);
  opd_map *m = opd_map_create("m", s, s, 1);
  EXPECT_EQ(opd_set_size(s), 3);
  EXPECT_EQ(opd_set_global_ids(s), nullptr);
  EXPECT_EQ(opd_map_values(m), opd_map_data(m));
}

TEST_F(LoopTest, BlockLoopOneAndThreeDimensions) {
  opd_block *b1 = opd_block_create("line", 1);
  int64_t lo1[1] = {-1}, hi1[1] = {10000};
  opd_loop *s1 = nullptr;
  opd_loop *l1 = opd_loop_prepare_block(&s1, "l1", b1, lo1, hi1, 0, nullptr);
  ASSERT_EQ(opd_loop_chunks(l1), 3);
  BlockRec r{std::vector<Range>(3)};
  opd_loop_run(l1, blockBody, &r);
  EXPECT_EQ(r.ranges[0].begin, -1);
  EXPECT_EQ(r.ranges[0].end, 4095);
  EXPECT_EQ(r.ranges[2].end, 10000);

  opd_block *b3 = opd_block_create("cube", 3);
  int64_t lo3[3] = {0, 0, 0}, hi3[3] = {100, 100, 30};
  opd_loop *s3 = nullptr;
  opd_loop *l3 = opd_loop_prepare_block(&s3, "l3", b3, lo3, hi3, 0, nullptr);
  EXPECT_EQ(opd_loop_chunks(l3), 30); // one plane per chunk
}

TEST_F(LoopTest, BytesRule) {
  opd_set *edges = opd_set_create("edges", 1000);
  opd_set *nodes = opd_set_create("nodes", 300);
  opd_map *m = opd_map_create("m", edges, nodes, 2);
  opd_dat *x = opd_dat_create("x", nodes, OPD_F64, 2); // 16 B
  opd_dat *r = opd_dat_create("r", nodes, OPD_F64, 1); // 8 B
  opd_dat *q = opd_dat_create("q", edges, OPD_F32, 1); // 4 B
  opd_arg args[] = {
      {x, m, 0, OPD_ARG_INDIRECT, OPD_READ, 16},
      {x, m, 1, OPD_ARG_INDIRECT, OPD_READ, 16},
      {r, m, 0, OPD_ARG_INDIRECT, OPD_INC, 8},
      {q, nullptr, 0, OPD_ARG_DIRECT, OPD_RW, 4},
      {nullptr, nullptr, 0, OPD_ARG_GLOBAL, OPD_READ, 8},
  };
  // x: 16 * min(300, 2000) * 1; r: 8 * min(300, 1000) * 2; q: 4 * 1000 * 2;
  // m once: 4 * 2 * 1000.
  EXPECT_DOUBLE_EQ(loopBytes(1000, 5, args),
                   16.0 * 300 + 8.0 * 300 * 2 + 4.0 * 1000 * 2 + 8000.0);
}

} // namespace

// Communication avoidance on one process (core/Serial.cpp): the calls are
// accepted and change nothing; a bad layer count is still an error.
TEST_F(LoopTest, CommAvoidCallsDoNothingOnOneProcess) {
  opd_rt_halo_depth(3, 2);
  opd_set *s = opd_set_create("s", 5000);
  opd_dat *d = opd_dat_create("d", s, OPD_F64, 1);
  opd_arg args[] = {{d, nullptr, 0, OPD_ARG_DIRECT, OPD_WRITE, 8}};
  opd_dat *dats[] = {d};
  const int64_t depth[3] = {3, 0, 0};
  opd_loop *group = nullptr;
  opd_halo_group(&group, "group", 1, 1, dats, depth, 0, nullptr);
  const int64_t lo[3] = {2, 0, 0}, hi[3] = {0, 0, 0};
  opd_loop_extend_next(lo, hi);
  opd_loop *slot = nullptr;
  opd_loop *l = opd_loop_prepare(&slot, "direct", s, 1, args);
  EXPECT_EQ(l->count, 5000);
  EXPECT_EQ(l->execLayers, 0);
  EXPECT_FALSE(l->extended());
  EXPECT_EQ(opd_loop_chunks(l), 2);
  EXPECT_DEATH(opd_rt_halo_depth(0, 2), "halo of 0 layers");
}
