// AdjointPlanTest.cpp - The checkpoint plans at run time: every step
// reversed once, last to first, from its own state (snapshot, re-run or
// tape), snapshots holding only what a step overwrites, the automatic plan
// from step 0, snapshots on disk, and the summary and profile lines.
// SPDX-License-Identifier: Apache-2.0
#include "AdjointTestUtil.h"

namespace {

using namespace opdc::rt::test;
using opdc::rt::checkpointSchedule;
using opdc::rt::ScheduleAction;

// opd_ckpt_restore moves a slot's snapshot into the dats at its last
// restore (the dat's address changes); opd_ckpt_restore_copy never does.
TEST_F(AdjointRuntimeTest, PlanFollowsTheSchedule) {
  for (bool copies : {false, true}) {
    SCOPED_TRACE(copies ? "opd_ckpt_restore_copy" : "opd_ckpt_restore");
    opd_dat *u = opd_dat_create("u", opd_set_create("cells", 100), OPD_F64, 1);
    auto *pu = static_cast<double *>(opd_dat_data(u));
    auto run = [&](int64_t k, uint64_t &v) { setState(pu, k + 1, v); };
    opd_dat *dats[] = {u};
    const int64_t first = 3, n = 12;
    opd_ckpt_begin(first, n, 3, dats, 1, 1);
    uint64_t v = 0;
    for (int i = 0; i < 100; ++i)
      pu[i] = double(first);
    v = uint64_t(first);
    for (int64_t k = first; k < first + n; ++k) {
      int32_t slot = opd_ckpt_forward(k);
      if (slot >= 0)
        opd_ckpt_save(slot, &v);
      run(k, v);
    }
    int moved = 0;
    const std::vector<int64_t> order =
        followPlan([&](int64_t k) { run(k, v); },
                   [&](int32_t slot) { opd_ckpt_save(slot, &v); },
                   [&](int32_t slot) {
                     // The slot's last restore hands its storage to u.
                     if (copies)
                       opd_ckpt_restore_copy(slot, &v);
                     else
                       opd_ckpt_restore(slot, &v);
                     moved += opd_dat_data(u) != pu;
                     pu = static_cast<double *>(opd_dat_data(u));
                   },
                   [&](int64_t k, bool) {
                     EXPECT_EQ(v, uint64_t(k));
                     EXPECT_EQ(pu[57], double(k));
                   });
    EXPECT_EQ(order, lastToFirst(first, n));
    if (copies)
      EXPECT_EQ(moved, 0);
    else
      EXPECT_GT(moved, 0);
  }
}

// opd_ckpt_save_overwritten: a state dat that the step's first loop
// overwrites goes into the snapshot of the schedule's first step by handing
// its storage over at that loop's prepare (when the step runs next), not by
// a copy; the other snapshots keep only what the loop does not overwrite
// (for a loop over the whole set: nothing), whose values alone are live.
// The schedule's states are the same where they are live.
TEST_F(AdjointRuntimeTest, SnapshotTakesWhatTheStepOverwrites) {
  opd_set *s = opd_set_create("cells", 100);
  opd_dat *u = opd_dat_create("u", s, OPD_F64, 1);
  opd_arg w = writes(u, OPD_ARG_DIRECT, 8);
  opd_loop *cache = nullptr;
  int taken = 0;
  // A step: the loop that overwrites u (its prepare first, as the
  // generated code runs it), u = k + 1 everywhere.
  auto run = [&](int64_t k, uint64_t &v) {
    void *before = opd_dat_data(u);
    opd_loop_prepare(&cache, "writes_u", s, 1, &w);
    taken += opd_dat_data(u) != before;
    auto *pu = static_cast<double *>(opd_dat_data(u));
    for (int i = 0; i < 100; ++i)
      pu[i] = double(k + 1);
    v = uint64_t(k + 1);
  };
  auto at57 = [&] { return static_cast<double *>(opd_dat_data(u))[57]; };
  const uint8_t overwritten[] = {1};
  opd_dat *dats[] = {u};
  const int64_t first = 3, n = 12;
  opd_ckpt_begin(first, n, 3, dats, 1, 1);
  uint64_t v = uint64_t(first);
  for (int i = 0; i < 100; ++i)
    static_cast<double *>(opd_dat_data(u))[i] = double(first);
  forwardSaving(first, n, run, overwritten, v);
  EXPECT_EQ(taken, 1) << "the first step's save took u, the others none";
  const std::vector<int64_t> order =
      followPlanSaving(run, overwritten, v, [&](int64_t k, bool) {
        EXPECT_EQ(v, uint64_t(k));
        if (k == first) {
          EXPECT_EQ(at57(), double(k)) << "the first step's state, whole";
        }
      });
  EXPECT_EQ(order, lastToFirst(first, n));
  EXPECT_EQ(taken, 1);
}

/// The plans of the two-dat tests below: 3 snapshots over steps [3, 15)
/// of the state (u, v) with one host value; u = 3 and v = 2 everywhere at
/// the start. Opens the plan and runs its forward sweep with
/// opd_ckpt_save_overwritten(\p flags); returns the saves.
constexpr int64_t TwoDatFirst = 3, TwoDatSteps = 12;
int forwardTwoDats(opd_dat *u, opd_dat *v, const uint8_t *flags,
                   const std::function<void(int64_t, uint64_t &)> &run,
                   uint64_t &val) {
  opd_dat *dats[] = {u, v};
  opd_ckpt_begin(TwoDatFirst, TwoDatSteps, 3, dats, 2, 1);
  val = uint64_t(TwoDatFirst);
  for (int i = 0; i < 100; ++i) {
    static_cast<double *>(opd_dat_data(u))[i] = double(TwoDatFirst);
    static_cast<double *>(opd_dat_data(v))[i] = double(TwoDatFirst - 1);
  }
  return forwardSaving(TwoDatFirst, TwoDatSteps, run, flags, val);
}

/// The reverse sweep of forwardTwoDats' plan: every step reversed once,
/// last to first, from its state (u = k; v, which the step overwrites
/// before reading it, as at the start only for the first step).
void reverseTwoDats(opd_dat *u, opd_dat *v, const uint8_t *flags,
                    const std::function<void(int64_t, uint64_t &)> &run,
                    uint64_t &val) {
  auto at57 = [](opd_dat *d) {
    return static_cast<double *>(opd_dat_data(d))[57];
  };
  const std::vector<int64_t> order =
      followPlanSaving(run, flags, val, [&](int64_t k, bool) {
        EXPECT_EQ(val, uint64_t(k));
        EXPECT_EQ(at57(u), double(k)) << "step " << k;
        if (k == TwoDatFirst) {
          EXPECT_EQ(at57(v), double(k - 1)) << "step " << k;
        }
      });
  EXPECT_EQ(order, lastToFirst(TwoDatFirst, TwoDatSteps));
}

// opd_ckpt_save_overwritten flag 2: a state dat that the step only reads,
// and whose storage the step's swap hands to the dat its first loop
// overwrites (u in `loop (u -> v); swap(u, v)`), goes into the snapshot at
// the next step's first loop, when both steps run in a row; where they do
// not (a save before a reversal, two saves in a row) it is copied. The
// reversed steps see the states of the forward sweep.
TEST_F(AdjointRuntimeTest, SnapshotTakesWhatTheNextStepOverwrites) {
  opd_set *s = opd_set_create("cells", 100);
  opd_dat *u = opd_dat_create("u", s, OPD_F64, 1);
  opd_dat *v = opd_dat_create("v", s, OPD_F64, 1);
  opd_loop *cache = nullptr;
  int taken = 0;
  // A step: v = u + 1 (the loop reads u, overwrites v), then swap(u, v):
  // after step k, u = k + 1 and v = k.
  auto run = [&](int64_t k, uint64_t &val) {
    opd_arg r = writes(u, OPD_ARG_DIRECT, 8);
    r.mode = OPD_READ;
    opd_arg args[2] = {r, writes(v, OPD_ARG_DIRECT, 8)};
    void *before = opd_dat_data(v);
    opd_loop_prepare(&cache, "step", s, 2, args);
    taken += opd_dat_data(v) != before;
    const auto *pu = static_cast<const double *>(opd_dat_data(u));
    auto *pv = static_cast<double *>(opd_dat_data(v));
    for (int i = 0; i < 100; ++i)
      pv[i] = pu[i] + 1.0;
    opd_dat_swap(u, v);
    val = uint64_t(k + 1);
  };
  const uint8_t flags[] = {2, 1}; // (u, v)
  uint64_t val = 0;
  EXPECT_EQ(forwardTwoDats(u, v, flags, run, val), 3);
  // v's storage went into the first snapshot (the others keep none of it:
  // the loop overwrites all of v), u's into each snapshot a step later
  // where the next step runs.
  std::vector<ScheduleAction> fwd;
  checkpointSchedule(TwoDatSteps, 3, &fwd);
  int expected = 0;
  for (const ScheduleAction &a : fwd)
    expected += (a.step == 0) + (a.step + 1 < TwoDatSteps);
  EXPECT_EQ(taken, expected);
  EXPECT_GT(taken, 1);
  reverseTwoDats(u, v, flags, run, val);
}

// opd_ckpt_save_overwritten flag 3: a state dat that the step's first
// loop only reads and its second loop overwrites (u in the pair
// `loop (u -> v); loop (v -> u)`, which skewing runs as one sweep) goes
// into the snapshot at the second loop's prepare: the first loop, prepared
// before, reads the storage the snapshot keeps (the generated code reads a
// dat's address at each loop's prepare), the second writes a fresh one.
// The reversed steps see the states of the forward sweep.
TEST_F(AdjointRuntimeTest, SnapshotTakesWhatALaterLoopOverwrites) {
  opd_set *s = opd_set_create("cells", 100);
  opd_dat *u = opd_dat_create("u", s, OPD_F64, 1);
  opd_dat *v = opd_dat_create("v", s, OPD_F64, 1);
  opd_loop *cacheA = nullptr, *cacheB = nullptr;
  int taken = 0;
  // A step: v = u + 1, then u = v; both loops prepared before either runs,
  // as a skewed sweep does. After step k, u = v = k + 1.
  auto run = [&](int64_t k, uint64_t &val) {
    opd_arg r = writes(u, OPD_ARG_DIRECT, 8);
    r.mode = OPD_READ;
    opd_arg a[2] = {r, writes(v, OPD_ARG_DIRECT, 8)};
    opd_loop_prepare(&cacheA, "first", s, 2, a);
    const auto *readU = static_cast<const double *>(opd_dat_data(u));
    auto *writeV = static_cast<double *>(opd_dat_data(v));
    opd_arg rv = writes(v, OPD_ARG_DIRECT, 8);
    rv.mode = OPD_READ;
    opd_arg b[2] = {rv, writes(u, OPD_ARG_DIRECT, 8)};
    void *before = opd_dat_data(u);
    opd_loop_prepare(&cacheB, "second", s, 2, b);
    taken += opd_dat_data(u) != before;
    auto *writeU = static_cast<double *>(opd_dat_data(u));
    for (int i = 0; i < 100; ++i) {
      writeV[i] = readU[i] + 1.0;
      writeU[i] = writeV[i];
    }
    val = uint64_t(k + 1);
  };
  const uint8_t flags[] = {3, 1}; // (u, v)
  uint64_t val = 0;
  const int saves = forwardTwoDats(u, v, flags, run, val);
  EXPECT_EQ(saves, 3);
  EXPECT_EQ(taken, saves) << "every forward save took u at the second loop";
  reverseTwoDats(u, v, flags, run, val);
  // Reverse saves followed by a re-run take u too; the others copy it.
  EXPECT_GT(taken, saves);
}

// Poisson's pattern on a block, `loop (p -> q) over the interior; swap(p,
// q)`: q's interior is dead at each step's start, its boundary ring (which
// no loop writes, and which the swaps trade with p's) is not. Snapshots
// after the schedule's first keep q's ring only; a plan whose count came
// from the memory budget (here 20 whole snapshots) finds that out in its
// first step and takes as many more as the budget holds: fewer re-runs.
// Every step is reversed from its state: p whole, q's ring; the first
// step's state whole.
TEST_F(AdjointRuntimeTest, SnapshotsKeepOnlyWhatTheStepDoesNotOverwrite) {
  opd_block *b = opd_block_create("grid", 2);
  int64_t size[3] = {40, 30, 1}, hm[3] = {1, 1, 0}, hp[3] = {1, 1, 0},
          base[3] = {0, 0, 0};
  opd_dat *p = opd_block_dat_create("p", b, OPD_F64, 1, size, hm, hp, base);
  opd_dat *q = opd_block_dat_create("q", b, OPD_F64, 1, size, hm, hp, base);
  int64_t st[3];
  auto at = [&](opd_dat *d, int64_t i, int64_t j) -> double & {
    auto *o = static_cast<double *>(opd_dat_origin(d, st));
    return o[i * st[0] + j * st[1]];
  };
  auto ring = [](int64_t i, int64_t j) {
    return i < 1 || i >= 39 || j < 1 || j >= 29;
  };
  int64_t lo[3] = {1, 1, 0}, hi[3] = {39, 29, 1};
  opd_loop *cache = nullptr;
  int64_t runs = 0;
  // q = p + 1 over the interior, then swap(p, q).
  auto run = [&](int64_t, uint64_t &val) {
    opd_arg r = writes(p, OPD_ARG_STENCIL, 8);
    r.mode = OPD_READ;
    opd_arg args[2] = {r, writes(q, OPD_ARG_STENCIL, 8)};
    opd_loop_prepare_block(&cache, "step", b, lo, hi, 2, args);
    for (int64_t j = 1; j < 29; ++j)
      for (int64_t i = 1; i < 39; ++i)
        at(q, i, j) = at(p, i, j) + 1.0;
    opd_dat_swap(p, q);
    ++val;
    ++runs;
  };
  // The state before step k: p's interior k, the rings -1 and -2 traded
  // at every step; q's interior k - 1 (live only before the first step).
  const int64_t first = 0, n = 100;
  auto check = [&](int64_t k, bool whole) {
    const double pr = (k - first) % 2 == 0 ? -1.0 : -2.0;
    const double qr = (k - first) % 2 == 0 ? -2.0 : -1.0;
    int bad = 0;
    for (int64_t j = -1; j < 31; ++j)
      for (int64_t i = -1; i < 41; ++i) {
        const bool r = ring(i, j);
        bad += at(p, i, j) != (r ? pr : double(k));
        if (r || whole)
          bad += at(q, i, j) != (r ? qr : double(k - 1));
      }
    return bad;
  };
  for (int64_t j = -1; j < 31; ++j)
    for (int64_t i = -1; i < 41; ++i) {
      at(p, i, j) = ring(i, j) ? -1.0 : double(first);
      at(q, i, j) = ring(i, j) ? -2.0 : double(first - 1);
    }
  const int64_t whole = p->elements * 8 + q->elements * 8 + 8;
  opdc::rt::setSnapshotBudget(20 * whole);
  const uint8_t flags[] = {2, 1}; // (p, q)
  opd_dat *dats[] = {p, q};
  opd_ckpt_begin(first, n, 0, dats, 2, 1);
  uint64_t val = uint64_t(first);
  forwardSaving(first, n, run, flags, val);
  runs = 0;
  const std::vector<int64_t> order =
      followPlanSaving(run, flags, val, [&](int64_t k, bool) {
        EXPECT_EQ(val, uint64_t(k));
        EXPECT_EQ(check(k, k == first), 0) << "step " << k;
      });
  opdc::rt::setSnapshotBudget(-1);
  EXPECT_EQ(order, lastToFirst(first, n));
  // q's points outside the loop's 38 x 28 (its ring and halo).
  const int64_t partial = p->elements * 8 + (q->elements - 38 * 28) * 8 + 8;
  const int64_t snaps = 1 + 19 * whole / partial; // the first one whole
  EXPECT_GT(snaps, 20);
  std::vector<ScheduleAction> fwd;
  int64_t expected = 0;
  for (const ScheduleAction &a : checkpointSchedule(n, snaps, &fwd))
    expected += a.kind == ScheduleAction::Advance;
  EXPECT_EQ(runs, expected) << "the re-runs of " << snaps << " snapshots";
  int64_t with20 = 0;
  for (const ScheduleAction &a : checkpointSchedule(n, 20, &fwd))
    with20 += a.kind == ScheduleAction::Advance;
  EXPECT_LT(runs, with20);
  EXPECT_LE(opdc::rt::adjointMemory().checkpointPeakBytes, 20 * whole);
}

// A snapshot per step (snapshots >= steps) puts every step on the tape,
// unless one step's tape times the steps would pass the snapshots' bytes:
// then step 0 stays taped and the rest follows a binomial schedule. Here
// step 0 pushes u three times (3 snapshots' worth) with 12 snapshots for 12
// steps: the steps after it are scheduled, reversed from their restored
// states, and step 0 is reversed last from its tape. With one push a step
// the tape fits and every step is taped.
TEST_F(AdjointRuntimeTest, TapeBeyondTheSnapshotBoundFallsBackToSchedule) {
  for (int pushes : {3, 1}) {
    opd_dat *u = opd_dat_create("u", opd_set_create("cells", 100), OPD_F64, 1);
    auto *pu = static_cast<double *>(opd_dat_data(u));
    auto run = [&](int64_t k, uint64_t &v) { setState(pu, k + 1, v); };
    opd_dat *dats[] = {u};
    const int64_t first = 3, n = 12;
    opd_ckpt_begin(first, n, n, dats, 1, 0);
    uint64_t v = uint64_t(first);
    for (int i = 0; i < 100; ++i)
      pu[i] = double(first);
    int taped = 0;
    for (int64_t k = first; k < first + n; ++k) {
      const int32_t slot = opd_ckpt_forward(k);
      if (slot >= 0)
        opd_ckpt_save(slot, &v);
      if (slot == OPD_CKPT_TAPE) {
        ++taped;
        for (int j = 0; j < pushes; ++j)
          opd_tape_push_dat(u);
      }
      run(k, v);
    }
    EXPECT_EQ(taped, pushes == 3 ? 1 : int(n)) << pushes << " pushes a step";
    const std::vector<int64_t> order =
        followPlan([&](int64_t k) { run(k, v); },
                   [&](int32_t slot) { opd_ckpt_save(slot, &v); },
                   [&](int32_t slot) {
                     opd_ckpt_restore(slot, &v);
                     pu = static_cast<double *>(opd_dat_data(u));
                   },
                   [&](int64_t k, bool taped) {
                     if (taped) {
                       for (int j = 0; j < pushes; ++j)
                         opd_tape_pop_dat(u); // hands the taped storage to u
                       pu = static_cast<double *>(opd_dat_data(u));
                     }
                     EXPECT_EQ(pu[57], double(k)); // the state before the step
                   });
    EXPECT_EQ(order, lastToFirst(first, n)) << pushes << " pushes a step";
    opd_rt_finalize();
  }
}

// A tape of a step worth 1.5 snapshots (u pushed three times, the state u
// and w), 20 steps and 20 snapshots: taping every step would take 30
// snapshots' worth. Keeping only step 0 taped leaves 18 snapshots for 19
// steps, each run once more taped before its reversal; keeping more taped
// leaves fewer snapshots but fewer steps to schedule, and fewer runs in
// all: the plan keeps a prefix of several steps taped, reverses the others
// from their restored states, then the prefix from the tape, last first.
TEST_F(AdjointRuntimeTest, TapedPrefixOfTheFewestRuns) {
  opd_set *cells = opd_set_create("cells", 100);
  opd_dat *u = opd_dat_create("u", cells, OPD_F64, 1);
  opd_dat *w = opd_dat_create("w", cells, OPD_F64, 1);
  opd_dat *dats[] = {u, w};
  const int64_t first = 3, n = 20;
  opd_ckpt_begin(first, n, n, dats, 2, 0);
  uint64_t v = 0;
  int64_t rerun = 0;
  const int taped = taperThrice(first, n, u, v, &rerun);
  EXPECT_GT(taped, 1);
  EXPECT_LT(taped, int(n));
  // Fewer runs than with step 0 alone taped: 19 scheduled steps with 18
  // snapshots, each run taped once before its reversal, plus re-runs.
  std::vector<ScheduleAction> fwd;
  int64_t oneTaped = 19;
  for (const ScheduleAction &a : checkpointSchedule(19, 18, &fwd))
    oneTaped += a.kind == ScheduleAction::Advance;
  EXPECT_LT(rerun + (n - taped), oneTaped);
  // Within the bound of 20 snapshots: the taped steps' tape and the
  // snapshots the schedule saves (at most its snapshot count at once).
  const int64_t snapshot = 2 * 100 * 8, stepTape = 3 * 100 * 8;
  EXPECT_LE(taped * stepTape, n * snapshot);
  opd_rt_finalize();
}

} // namespace

// Without a budget the plan is made at step 1 from step 0's tape (u pushed
// three times, 6 MiB) and the memory free: none beyond what the adjoints
// hold (and 64 MiB) gives a taped prefix and snapshots within that memory;
// memory to spare and fresh memory free of cost gives every step taped.
// Either way each step is reversed from its own state, last first.
TEST_F(AdjointRuntimeTest, AutomaticPlanFromStepZero) {
  if (std::getenv("OPD_CKPT_MEMORY"))
    GTEST_SKIP() << "OPD_CKPT_MEMORY sets the budget";
  ASSERT_TRUE(opdc::rt::automaticBudget());
  for (bool spare : {false, true}) {
    SCOPED_TRACE(spare ? "memory to spare" : "no memory free");
    opdc::rt::setAvailableMemory(spare ? int64_t(1) << 40 : 0);
    opdc::rt::setFreshMemoryCost(0);
    const int64_t cellsN = int64_t(1) << 18;
    opd_set *cells = opd_set_create("cells", cellsN);
    opd_dat *u = opd_dat_create("u", cells, OPD_F64, 1);
    opd_dat *w = opd_dat_create("w", cells, OPD_F64, 1);
    opd_dat *dats[] = {u, w};
    const int64_t first = 2, n = 20;
    opd_ckpt_begin(first, n, 0, dats, 2, 1);
    uint64_t v = 0;
    const int taped = taperThrice(first, n, u, v);
    const opdc::rt::AdjointMemory &m = opdc::rt::adjointMemory();
    ASSERT_TRUE(m.planned);
    EXPECT_EQ(m.planStepTape, 3 * cellsN * 8);
    EXPECT_EQ(m.lastPlan.taped, taped);
    if (spare) {
      EXPECT_EQ(taped, int(n));
    } else {
      EXPECT_GT(taped, 1);
      EXPECT_LT(taped, int(n));
      EXPECT_LE(m.lastPlan.bytes, m.planMemoryBytes);
    }
    opd_rt_finalize();
  }
  opdc::rt::setAvailableMemory(-1);
  opdc::rt::setFreshMemoryCost(-1);
}

// Fresh memory free of cost at step 1 plans every step taped; dear from
// step 3 on (as when step 0's tape came from pages the process had just
// given back), the plan looks again (every 2 steps of 20) and keeps only
// the steps taped so far (and what held memory holds): the others follow a
// schedule. Each step is still
// reversed from its own state, the taped ones from the tape.
TEST_F(AdjointRuntimeTest, AutomaticPlanCutWhenFreshMemoryTurnsDear) {
  if (std::getenv("OPD_CKPT_MEMORY"))
    GTEST_SKIP() << "OPD_CKPT_MEMORY sets the budget";
  opdc::rt::setAvailableMemory(int64_t(1) << 40);
  opdc::rt::setFreshMemoryCost(0);
  // A step's tape of 12 MiB: 20 steps pass the 64 MiB counted as held.
  opd_set *cells = opd_set_create("cells", int64_t(1) << 19);
  opd_dat *u = opd_dat_create("u", cells, OPD_F64, 1);
  opd_dat *w = opd_dat_create("w", cells, OPD_F64, 1);
  opd_dat *dats[] = {u, w};
  const int64_t first = 5, n = 20;
  opd_ckpt_begin(first, n, 0, dats, 2, 1);
  uint64_t v = 0;
  int64_t rerun = 0;
  const int taped = taperThrice(first, n, u, v, &rerun, [&](int64_t k) {
    if (k == first + 3)
      opdc::rt::setFreshMemoryCost(1.0);
  });
  const opdc::rt::AdjointMemory &m = opdc::rt::adjointMemory();
  // Cut at step 4 to the steps taped so far, or to as many more as the
  // memory the pool holds free already (earlier tests') holds.
  EXPECT_EQ(m.planRevisions, 1);
  EXPECT_EQ(m.planRevisedAt, 4);
  EXPECT_GE(taped, 4);
  EXPECT_LT(taped, int(n));
  EXPECT_EQ(m.lastPlan.taped, taped);
  EXPECT_GT(rerun, 0);
  opd_rt_finalize();
  opdc::rt::setAvailableMemory(-1);
  opdc::rt::setFreshMemoryCost(-1);
}

// The pool's pages: huge and 4 KiB pages sampled alternately, huge first,
// until each kind has PageChoice::Sample bytes measured; then the kind of
// the fewer seconds a byte, whose cost is what plans weigh.
TEST(PageChoice, SamplesBothKindsThenTakesTheCheaper) {
  using opdc::rt::PageChoice;
  const int64_t mib = int64_t(1) << 20;
  PageChoice c;
  EXPECT_TRUE(c.huge());
  c.note(true, 24 * mib, 0.6);
  EXPECT_FALSE(c.huge());
  c.note(false, 24 * mib, 0.05);
  EXPECT_TRUE(c.huge()); // equal bytes: huge next
  c.note(true, 24 * mib, 0.6);
  EXPECT_FALSE(c.sampled());
  EXPECT_FALSE(c.huge());
  c.note(false, 24 * mib, 0.05);
  ASSERT_TRUE(c.sampled());
  EXPECT_FALSE(c.huge()); // 4 KiB pages cost less
  EXPECT_DOUBLE_EQ(c.cost(false), 0.1 / double(48 * mib));
  // Where huge pages are the cheaper (free 2 MiB pages at hand), huge.
  PageChoice d;
  d.note(true, 40 * mib, 0.01);
  d.note(false, 40 * mib, 0.2);
  EXPECT_TRUE(d.huge());
}

// --profile's adjoint lines fit in 100 columns with large figures, and
// name the plan and the disk only when there was one.
TEST(AdjointSummary, LinesFitInOneHundredColumns) {
  opdc::rt::AdjointMemory m;
  std::string none;
  opdc::rt::appendAdjointSummary(none, m);
  EXPECT_EQ(none, "");
  m.tapePeakBytes = m.checkpointPeakBytes = m.diskPeakBytes = int64_t(999999)
                                                              << 20;
  m.snapshotsTaken = m.stepsReversed = m.stepsRerun = 9999999;
  m.restores = m.restoresMoved = 9999999;
  m.rerunSeconds = m.tapeSeconds = m.saveSeconds = m.restoreSeconds = 99999.5;
  std::string text;
  opdc::rt::appendAdjointSummary(text, m);
  EXPECT_EQ(text.find("plan"), std::string::npos);
  EXPECT_EQ(text.find("disk "), std::string::npos);
  m.diskSnapshots = 99999;
  m.diskWrittenBytes = m.diskReadBytes = int64_t(9999999) << 20;
  m.diskWaitSeconds = 99999.5;
  m.planned = true;
  m.lastPlan.taped = m.lastPlan.snapshots = m.planCount = 999999;
  m.lastPlan.bytes = m.planMemoryBytes = m.planStepTape = int64_t(999999) << 20;
  m.planStepSeconds = 999.5;
  m.planFreshSecondsPerGiB = 999.5;
  m.planRevisions = 99999;
  m.planRevisedAt = 9999999;
  m.freshBytes = m.freshHugeBytes = m.freshSmallBytes = int64_t(9999999) << 20;
  m.freshSeconds = 99999.5;
  m.freshHugeSeconds = m.freshSmallSeconds = 999.5 * 9999999 / 1024;
  // A GPU program's device store (lib/cuda/opd_cuda_tape.cuh): 999999 MiB
  // everywhere (the widest a node's memory gives).
  m.store = true;
  for (int64_t &v : m.storeUsage)
    v = int64_t(999999) << 20;
  text.clear();
  opdc::rt::appendAdjointSummary(text, m);
  size_t lines = 0, at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    ASSERT_NE(end, std::string::npos);
    EXPECT_LE(end - at, 100u) << text.substr(at, end - at);
    EXPECT_EQ(text.compare(at, 9, "adjoint: "), 0);
    at = end + 1;
    ++lines;
  }
  EXPECT_EQ(lines, 11u);
  EXPECT_NE(text.find("MiB on disk"), std::string::npos);
  EXPECT_NE(text.find("device store spilled 999999.0 MiB"), std::string::npos);
  EXPECT_NE(text.find("steps taped"), std::string::npos);
}

// Snapshots beyond the memory budget go to files of the checkpoint
// directory (written and read by an I/O thread): a budget of two
// snapshots, 6 requested for 30 steps, the state of every step restored
// exactly as from memory, the files removed at the end, resident snapshots
// within the budget, and a bad directory a clear error.
TEST_F(AdjointRuntimeTest, SnapshotsBeyondMemoryGoToDisk) {
  char dirTemplate[] = "/tmp/opd-ckpt-test-XXXXXX";
  ASSERT_NE(mkdtemp(dirTemplate), nullptr);
  const std::string dir = dirTemplate;
  const int64_t cellsN = 4096;
  const int64_t snapshot = cellsN * 8 + 8;
  for (bool disk : {false, true}) {
    SCOPED_TRACE(disk ? "on disk" : "in memory");
    opdc::rt::setCheckpointDir(disk ? dir.c_str() : nullptr);
    opdc::rt::setSnapshotBudget(disk ? 4 * snapshot : int64_t(1) << 40);
    opd_dat *u =
        opd_dat_create("u", opd_set_create("cells", cellsN), OPD_F64, 1);
    auto *pu = static_cast<double *>(opd_dat_data(u));
    auto run = [&](int64_t k, uint64_t &v) {
      for (int64_t i = 0; i < cellsN; ++i)
        pu[i] = double(k + 1) + 1e-3 * double(i);
      v = uint64_t(k + 1);
    };
    opd_dat *dats[] = {u};
    const int64_t first = 1, n = 30;
    opd_ckpt_begin(first, n, 6, dats, 1, 1);
    uint64_t v = 0;
    run(first - 1, v);
    for (int64_t k = first; k < first + n; ++k) {
      const int32_t slot = opd_ckpt_forward(k);
      if (slot >= 0)
        opd_ckpt_save(slot, &v);
      run(k, v);
    }
    int64_t files = 0, maxResident = 0;
    const std::vector<int64_t> order = followPlan(
        [&](int64_t k) {
          run(k, v);
          maxResident =
              std::max(maxResident, opdc::rt::checkpointBytesInMemory());
          if (disk && files == 0)
            files = std::system(("test -n \"$(ls " + dir + ")\"").c_str()) == 0;
        },
        [&](int32_t slot) { opd_ckpt_save(slot, &v); },
        [&](int32_t slot) {
          opd_ckpt_restore(slot, &v);
          pu = static_cast<double *>(opd_dat_data(u));
        },
        [&](int64_t k, bool) {
          EXPECT_EQ(v, uint64_t(k)) << "step " << k;
          for (int64_t i = 0; i < cellsN; i += 511)
            EXPECT_EQ(pu[i], double(k) + 1e-3 * double(i)) << "step " << k;
        });
    EXPECT_EQ(order, lastToFirst(first, n));
    const opdc::rt::AdjointMemory &m = opdc::rt::adjointMemory();
    if (disk) {
      EXPECT_EQ(files, 1) << "no snapshot file while the plan ran";
      EXPECT_GT(m.diskSnapshots, 0);
      EXPECT_GT(m.diskReadBytes, 0);
      // Never more in memory than the budget.
      EXPECT_GT(maxResident, 0);
      EXPECT_LE(maxResident, 4 * snapshot);
      EXPECT_EQ(std::system(("test -z \"$(ls " + dir + ")\"").c_str()), 0)
          << "snapshot files left in " << dir;
    }
    opd_rt_finalize();
  }
  opdc::rt::setCheckpointDir(nullptr);
  opdc::rt::setSnapshotBudget(-1);
  std::system(("rmdir " + dir).c_str());
  EXPECT_EXIT(opdc::rt::setCheckpointDir("/nonexistent/opd-ckpt"),
              ::testing::ExitedWithCode(1),
              "--ckpt-dir '/nonexistent/opd-ckpt'");
  EXPECT_EXIT(opdc::rt::setCheckpointDir("/etc/hostname"),
              ::testing::ExitedWithCode(1), "is not a directory");
}

// The program option: listed by --help, a value required, a directory that
// does not exist an error naming it before the program runs.
TEST(AdjointSummary, CheckpointDirOption) {
  using opdc::rt::test::RunResult;
  using opdc::rt::test::runTestProgram;
  RunResult help = runTestProgram({"--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("  --ckpt-dir=<DIR> "), std::string::npos);
  RunResult empty = runTestProgram({"--ckpt-dir"});
  EXPECT_EQ(empty.status, 1);
  EXPECT_EQ(empty.err, "testprog: error: option '--ckpt-dir' needs a "
                       "directory (--ckpt-dir=<DIR>)\n");
  RunResult bad = runTestProgram({"--ckpt-dir=/nonexistent/opd-ckpt"});
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.out, "");
  EXPECT_NE(bad.err.find("--ckpt-dir '/nonexistent/opd-ckpt': No such file "
                         "or directory"),
            std::string::npos)
      << bad.err;
}

// Loops prepared while the reverse sweep re-runs steps (an ADVANCE's body,
// a scheduled step's forward run before its first tape pop) get their own
// --profile row, "step (re-run)"; the first forward sweep's stay "step",
// and a loop after the step's first pop is not a re-run.
TEST_F(AdjointRuntimeTest, RerunsHaveTheirOwnProfileRow) {
  opd_set *cells = opd_set_create("cells", 100);
  opd_dat *u = opd_dat_create("u", cells, OPD_F64, 1);
  opd_arg w = writes(u, OPD_ARG_DIRECT, 8);
  opd_loop *forwardSite = nullptr, *advanceSite = nullptr, *tapedSite = nullptr,
           *reverseSite = nullptr;
  opd_dat *dats[] = {u};
  const int64_t n = 6;
  opd_ckpt_begin(0, n, 2, dats, 1, 0);
  for (int64_t k = 0; k < n; ++k) {
    const int32_t slot = opd_ckpt_forward(k);
    if (slot >= 0)
      opd_ckpt_save(slot, nullptr);
    opd_loop_prepare(&forwardSite, "step", cells, 1, &w);
  }
  int64_t step = 0;
  int32_t slot = 0;
  for (;;) {
    const int32_t what = opd_ckpt_next(&step, &slot);
    if (what == OPD_CKPT_DONE)
      break;
    if (what == OPD_CKPT_SAVE)
      opd_ckpt_save(slot, nullptr);
    else if (what == OPD_CKPT_RESTORE)
      opd_ckpt_restore(slot, nullptr);
    else if (what == OPD_CKPT_ADVANCE)
      opd_loop_prepare(&advanceSite, "step", cells, 1, &w);
    else if (what == OPD_CKPT_REVERSE) {
      opd_tape_push_dat(u);
      opd_loop_prepare(&tapedSite, "step", cells, 1, &w);
      opd_tape_pop_dat(u);
      opd_loop_prepare(&reverseSite, "step.b", cells, 1, &w);
    }
  }
  opd_ckpt_end();
  ASSERT_NE(advanceSite, nullptr);
  ASSERT_NE(tapedSite, nullptr);
  // The profile lists loops that ran: as if each had run once.
  for (opd_loop *l : {forwardSite, advanceSite, tapedSite, reverseSite})
    l->calls = 1;
  std::vector<std::string> names;
  for (const opdc::rt::ProfileRow &r : opdc::rt::collectProfile())
    names.push_back(r.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"step", "step (re-run)", "step.b"}));
  EXPECT_EQ(opdc::rt::rerunLoopName("a+b (fused)"), "a+b (fused, re-run)");
  EXPECT_EQ(opdc::rt::rerunLoopName("step (adjoint)"), "step (adjoint)");
  EXPECT_EQ(opdc::rt::rerunLoopName("copy.b+copy"), "copy.b+copy");
  EXPECT_EQ(opdc::rt::rerunLoopName("adjoint_zero_f64"), "adjoint_zero_f64");
  EXPECT_EQ(opdc::rt::rerunLoopName(std::string(60, 'k')).size(), 48u);
}
