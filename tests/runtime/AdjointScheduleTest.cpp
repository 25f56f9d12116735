// AdjointScheduleTest.cpp - The checkpoint schedules and plans on a model:
// every schedule reverses each step once, last to first, from the state
// before it, within its snapshots and with binomial re-run counts; the plan
// from step 0 keeps a taped prefix within the memory it is given.
// SPDX-License-Identifier: Apache-2.0
#include "exec/Adjoint.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace {

using opdc::rt::checkpointSchedule;
using opdc::rt::ScheduleAction;

struct Simulation {
  int64_t rerun = 0;
  int maxSlots = 0;
  int64_t restores = 0, moves = 0; ///< restores, and those marked last
  int64_t saves = 0, unused = 0;   ///< saves, and those never restored
};

// Runs the schedule on a model: the state is a step number; the forward
// sweep runs 0..n-1 saving where it is told, then the reverse actions.
Simulation simulate(int64_t n, int64_t snaps) {
  std::vector<ScheduleAction> fwd;
  std::vector<ScheduleAction> rev = checkpointSchedule(n, snaps, &fwd);
  std::vector<int64_t> slot(size_t(std::max<int64_t>(snaps, 1)), -1);
  std::vector<bool> restored(slot.size(), true);
  Simulation sim;
  auto saved = [&](int s) {
    sim.unused += !restored.at(size_t(s));
    restored.at(size_t(s)) = false;
    ++sim.saves;
  };
  int64_t state = 0;
  size_t f = 0;
  for (int64_t k = 0; k <= n; ++k) {
    while (f < fwd.size() && fwd[f].step == k) {
      EXPECT_EQ(fwd[f].kind, ScheduleAction::Save);
      slot.at(size_t(fwd[f].slot)) = k;
      saved(fwd[f].slot);
      ++f;
    }
    state = k;
  }
  EXPECT_EQ(f, fwd.size()) << "forward saves out of order";
  int64_t next = n - 1; // the step to reverse next
  for (const ScheduleAction &a : rev) {
    switch (a.kind) {
    case ScheduleAction::Advance:
      EXPECT_EQ(a.step, state);
      ++state;
      ++sim.rerun;
      break;
    case ScheduleAction::Save:
      EXPECT_EQ(a.step, state);
      slot.at(size_t(a.slot)) = state;
      saved(a.slot);
      break;
    case ScheduleAction::Restore:
      EXPECT_GE(slot.at(size_t(a.slot)), 0) << "restore of an empty slot";
      state = slot.at(size_t(a.slot));
      restored.at(size_t(a.slot)) = true;
      ++sim.restores;
      // A last restore moves the snapshot out: the slot is empty until a
      // save (a later restore of it would fail above).
      if (a.last) {
        slot.at(size_t(a.slot)) = -1;
        ++sim.moves;
      }
      break;
    case ScheduleAction::Reverse:
      EXPECT_EQ(a.step, next) << "steps reversed out of order";
      EXPECT_EQ(state, a.step) << "step reversed from the wrong state";
      --next;
      break;
    }
    int used = 0;
    for (int64_t s : slot)
      used += s >= 0;
    sim.maxSlots = std::max(sim.maxSlots, used);
  }
  EXPECT_EQ(next, -1) << "not every step was reversed";
  for (bool r : restored)
    sim.unused += !r;
  return sim;
}

TEST(CheckpointSchedule, ReversesEveryStepFromItsState) {
  for (int64_t n : {1, 2, 3, 5, 10, 17, 64, 100, 1000})
    for (int64_t c : {1, 2, 3, 4, 8, 100}) {
      SCOPED_TRACE("steps " + std::to_string(n) + " snapshots " +
                   std::to_string(c));
      Simulation s = simulate(n, c);
      EXPECT_LE(s.maxSlots, std::min(c, n));
      // Every snapshot is restored: none is saved for a step reversed
      // from the state at hand.
      EXPECT_EQ(s.unused, 0);
    }
}

TEST(CheckpointSchedule, LastRestoresMoveAndNeverFeedAnother) {
  // Every slot saved in the reverse sweep or the forward one is restored
  // last once: as many moves as distinct (slot, save) pairs restored.
  Simulation s = simulate(100, 46);
  EXPECT_GT(s.moves, 0);
  EXPECT_LE(s.moves, s.restores);
  // One snapshot: the start, restored before every step, moved only at the
  // last.
  Simulation one = simulate(10, 1);
  EXPECT_EQ(one.restores, 10);
  EXPECT_EQ(one.moves, 1);
  // A snapshot a step: each restored once, and moved.
  Simulation all = simulate(50, 50);
  EXPECT_EQ(all.moves, all.restores);
}

TEST(CheckpointSchedule, SnapshotOfEveryStepNeedsNoRerun) {
  EXPECT_EQ(simulate(50, 50).rerun, 0);
}

TEST(CheckpointSchedule, OneSnapshotRerunsQuadratically) {
  // From the start each time: 0 + 1 + ... + (n - 1) steps re-run.
  EXPECT_EQ(simulate(10, 1).rerun, 45);
}

TEST(CheckpointSchedule, BinomialRerunCount) {
  // 10 steps and 4 snapshots: beta(3, 2) = 10, so at most 2 runs of each
  // step beyond the forward sweep's, and fewer than with uniform spacing.
  Simulation s = simulate(10, 4);
  EXPECT_LE(s.rerun, 2 * 10);
  EXPECT_LT(s.rerun, simulate(10, 1).rerun);
  // 1000 steps, 10 snapshots: beta(9, 3) = 220 < 1000 <= beta(9, 4) = 715?
  // no: beta(9, 4) = C(13, 4) = 715 < 1000 <= beta(9, 5) = C(14, 5) = 2002.
  EXPECT_LE(simulate(1000, 10).rerun, 5 * 1000);
}

// The fewest re-runs any schedule of the scheduler's shape can make, by
// search over every split: F(n, s) reverses n steps from a restored start
// with s free slots (advance m steps, save, reverse the right part with s -
// 1 slots, then the left one with s); G(n, s) is the forward sweep's
// spine, whose advances are free.
class BestSchedule {
public:
  int64_t forward(int64_t n, int64_t s) {
    if (n <= 1 || s == 0)
      return reverse(n, s);
    int64_t &g = spine[{n, s}];
    if (g)
      return g - 1;
    int64_t best = reverse(n, s);
    for (int64_t m = 1; m < n; ++m)
      best = std::min(best, forward(n - m, s - 1) + reverse(m, s));
    g = best + 1;
    return best;
  }
  int64_t reverse(int64_t n, int64_t s) {
    if (n <= 1)
      return 0;
    if (s == 0)
      return n * (n - 1) / 2;
    int64_t &f = range[{n, s}];
    if (f)
      return f - 1;
    int64_t best = INT64_MAX;
    for (int64_t m = 1; m < n; ++m)
      best = std::min(best, m + reverse(n - m, s - 1) + reverse(m, s));
    f = best + 1;
    return best;
  }

private:
  std::map<std::pair<int64_t, int64_t>, int64_t> spine, range;
};

TEST(CheckpointSchedule, FewestReruns) {
  // Griewank's split re-runs as few steps as the best split found by
  // search, for every step count and snapshot count tried.
  BestSchedule best;
  for (int64_t n = 1; n <= 90; ++n)
    for (int64_t c = 1; c <= 9 && c <= n; ++c) {
      SCOPED_TRACE("steps " + std::to_string(n) + " snapshots " +
                   std::to_string(c));
      EXPECT_EQ(simulate(n, c).rerun, best.forward(n, c - 1));
    }
  // Airfoil's shape gradient, 100 steps and 10 snapshots: 125 (the
  // earlier rule put the snapshots at steps 0-9 and re-ran 152).
  EXPECT_EQ(simulate(100, 10).rerun, 125);
  EXPECT_EQ(best.forward(100, 9), 125);
}

TEST(CheckpointSchedule, DefaultSnapshots) {
  EXPECT_EQ(opdc::rt::defaultSnapshots(1), 1);
  EXPECT_EQ(opdc::rt::defaultSnapshots(10), 4);
  EXPECT_EQ(opdc::rt::defaultSnapshots(100), 14);
  // Without a request: what the budget holds, between the binomial minimum
  // and one snapshot a step.
  EXPECT_EQ(opdc::rt::budgetSnapshots(100, 1000, 0), 14);
  EXPECT_EQ(opdc::rt::budgetSnapshots(100, 1000, 50500), 50);
  EXPECT_EQ(opdc::rt::budgetSnapshots(100, 1000, int64_t(1) << 40), 100);
  EXPECT_EQ(opdc::rt::budgetSnapshots(10, 0, 0), 10);
  EXPECT_EQ(opdc::rt::budgetSnapshots(0, 1000, 1000000), 1);
}

// Automatic plans (no OPD_CKPT_MEMORY): every step taped where the tape
// fits and fresh memory is cheap; the least memory where fresh memory
// costs more than re-running; in between a taped prefix within the memory.
TEST(CheckpointSchedule, PlanFromStepZero) {
  using opdc::rt::planFromStepZero;
  const int64_t n = 100, tapeBytes = 100, snap = 70;
  auto all = planFromStepZero(n, tapeBytes, snap, int64_t(1) << 40, tapeBytes,
                              1.0, 0.0);
  EXPECT_EQ(all.taped, n);
  EXPECT_EQ(all.runs, 0);
  auto least = planFromStepZero(n, tapeBytes, snap, int64_t(1) << 40, tapeBytes,
                                1.0, 1e6);
  EXPECT_EQ(least.taped, 1);
  EXPECT_EQ(least.snapshots, opdc::rt::defaultSnapshots(n - 1));
  // 6000 bytes hold about 50 steps' tape and the least snapshots of the rest,
  // not all 100 steps: a prefix within the memory, fewer runs than k = 1.
  auto prefix = planFromStepZero(n, tapeBytes, snap, 6000, tapeBytes, 1.0, 0.0);
  EXPECT_GT(prefix.taped, 1);
  EXPECT_LT(prefix.taped, n);
  EXPECT_LE(prefix.bytes, 6000);
  EXPECT_EQ(prefix.bytes,
            (prefix.taped + 1) * tapeBytes + prefix.snapshots * snap);
  auto one =
      opdc::rt::planForPrefix(n, 1, tapeBytes, snap, 6000, tapeBytes, 1.0, 0.0);
  EXPECT_LT(prefix.runs, one.runs);
  EXPECT_LE(prefix.cost, one.cost);
  // Revised at step 30 (30 steps taped already): no shorter prefix.
  auto later = planFromStepZero(n, tapeBytes, snap, int64_t(1) << 40, tapeBytes,
                                1.0, 1e6, 30);
  EXPECT_EQ(later.taped, 30);
  EXPECT_EQ(later.snapshots, opdc::rt::defaultSnapshots(n - 30));
  // Nothing fits: the binomial minimum with step 0 taped.
  auto none = planFromStepZero(n, tapeBytes, snap, 0, 0, 1.0, 0.0);
  EXPECT_EQ(none.taped, 1);
  EXPECT_EQ(none.snapshots, opdc::rt::defaultSnapshots(n - 1));
  // Never more than three quarters of the free memory less 1 GiB, beyond
  // what the adjoints hold already.
  const int64_t gib = int64_t(1) << 30;
  EXPECT_EQ(opdc::rt::planMemory(20 * gib, 0, 1), 14 * gib);
  EXPECT_EQ(opdc::rt::planMemory(20 * gib, 5, 2), 7 * gib + 5);
  EXPECT_EQ(opdc::rt::planMemory(gib, 5, 1), 5);
}

} // namespace
