// AdjointSchedule.cpp - The arithmetic of checkpoint plans: the binomial
// (Revolve) schedule, the re-runs it costs, taped prefixes, and the plans
// chosen from step 0's tape and time.
// SPDX-License-Identifier: Apache-2.0
//
// Pure functions of step counts and byte sizes, apart from Adjoint.cpp
// (the tape, the snapshots and the checkpoint calls that follow the
// plans) so that the schedule can be read, and unit-tested
// (tests/unit), without the runtime state around it.
#include "core/Runtime.h"
#include "exec/Adjoint.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace opdc::rt {
namespace {

/// C(s + t, s), saturating at a value above any step count.
double beta(int64_t s, int64_t t) {
  double r = 1;
  for (int64_t i = 1; i <= s; ++i) {
    r = r * double(t + i) / double(i);
    if (r > 1e18)
      return 1e18;
  }
  return r;
}

/// The fewest re-runs t with beta(s, t) >= n.
int64_t repsFor(int64_t n, int64_t s) {
  int64_t t = 1;
  while (beta(s, t) < double(n))
    ++t;
  return t;
}

/// The steps re-run to reverse \p n steps with \p c snapshots, the forward
/// sweep not counted: the schedule's own count up to 200 steps (tapedPrefix
/// asks for every prefix, so this stays a few milliseconds); beyond,
/// Griewank's bound r n - beta(c + 1, r - 1) on all the forward steps, r
/// the fewest repetitions with beta(c, r) >= n, less the forward sweep's n
/// (within a few steps of the schedule's count).
int64_t rerunsFor(int64_t n, int64_t c) {
  if (c >= n)
    return 0;
  c = std::max<int64_t>(c, 1);
  if (n <= 200) {
    int64_t runs = 0;
    for (const ScheduleAction &a : checkpointSchedule(n, c, nullptr))
      runs += a.kind == ScheduleAction::Advance;
    return runs;
  }
  const int64_t r = repsFor(n, c);
  const double total = double(r) * double(n) - beta(c + 1, r - 1);
  return std::max<int64_t>(int64_t(total) - n, 0);
}

/// Builds the action lists of a plan (relative step numbers).
class Scheduler {
public:
  Scheduler(int64_t steps, int snaps)
      : steps(steps), slotStep(size_t(snaps), -1) {}

  void build(std::vector<ScheduleAction> &fwd,
             std::vector<ScheduleAction> &rev) {
    if (steps == 0)
      return;
    // The forward sweep: the state at 0, then the spine's snapshots.
    out = &fwd;
    pos = 0;
    int slotA = take(0);
    struct Pending {
      int64_t a, m;
      int64_t s;
      int slotA, right;
    };
    std::vector<Pending> pending;
    int64_t a = 0, b = steps, s = int64_t(slotStep.size()) - 1;
    while (b - a > 1 && s > 0) {
      int64_t m = split(b - a, s);
      int right = take(a + m);
      pending.push_back({a, m, s, slotA, right});
      a += m;
      --s;
      slotA = right;
    }
    // The reverse sweep starts after the whole loop ran.
    out = &rev;
    pos = steps;
    reverseRange(a, b, s, slotA);
    while (!pending.empty()) {
      Pending p = pending.back();
      pending.pop_back();
      slotStep[size_t(p.right)] = -1;
      reverseRange(p.a, p.a + p.m, p.s, p.slotA);
    }
  }

private:
  /// Where to put the next snapshot in a range of \p n steps whose start
  /// holds one, with \p s free slots: after m steps, the left part [0, m)
  /// is reversed later with the same s slots and the right part with s - 1.
  /// Griewank's binomial bound: with r the fewest repetitions such that
  /// beta(s + 1, r) >= n, the left part may take r - 1 repetitions (m <=
  /// beta(s + 1, r - 1)) and the right one r (n - m <= beta(s, r)), so
  /// every m in [max(beta(s + 1, r - 2), n - beta(s, r)), min(beta(s + 1, r
  /// - 1), n - beta(s, r - 1))] re-runs the fewest steps; the upper end is
  /// also the best spine of the forward sweep, whose advances are free
  /// (checked against a search over every split, tests/runtime/
  /// AdjointTest.cpp). The earlier rule, m = n - beta(s - 1, r(n, s)),
  /// counted the slots one short: it put Airfoil's 10 snapshots of 100
  /// steps at steps 0-9, 152 re-runs against 125.
  int64_t split(int64_t n, int64_t s) const {
    const int64_t r = repsFor(n, s + 1);
    const double left =
        std::min(beta(s + 1, r - 1), double(n) - beta(s, r - 1));
    return std::clamp<int64_t>(int64_t(left), 1, n - 1);
  }
  /// Saves the state at \p step (the current one) into a free slot.
  int take(int64_t step) {
    for (size_t i = 0; i < slotStep.size(); ++i)
      if (slotStep[i] < 0) {
        slotStep[i] = step;
        out->push_back({ScheduleAction::Save, step, int(i)});
        return int(i);
      }
    failf("internal error: checkpoint plan out of snapshots");
  }
  void restore(int slot) {
    if (pos == slotStep[size_t(slot)])
      return;
    out->push_back({ScheduleAction::Restore, slotStep[size_t(slot)], slot});
    pos = slotStep[size_t(slot)];
  }
  void advanceTo(int64_t k) {
    for (; pos < k; ++pos)
      out->push_back({ScheduleAction::Advance, pos, -1});
  }
  void reverseStep(int64_t k) {
    out->push_back({ScheduleAction::Reverse, k, -1});
    // A reversed step leaves only what the reverse sweep reads from before
    // it (the adjoint-tape pass drops the other restores): the next step
    // run or reversed starts from a restore (ir::CheckpointStmt).
    pos = -1;
  }
  /// Reverses [a, b) from the snapshot of a in \p slotA with \p s free slots.
  void reverseRange(int64_t a, int64_t b, int64_t s, int slotA) {
    if (b - a == 1) {
      restore(slotA);
      reverseStep(a);
      return;
    }
    if (s == 0) {
      for (int64_t k = b - 1; k >= a; --k) {
        restore(slotA);
        advanceTo(k);
        reverseStep(k);
      }
      return;
    }
    int64_t m = split(b - a, s);
    restore(slotA);
    advanceTo(a + m);
    if (b - (a + m) == 1) {
      // The right part is one step: reversed from the state at hand, so a
      // snapshot of it would never be restored.
      reverseStep(a + m);
    } else {
      int right = take(a + m);
      reverseRange(a + m, b, s - 1, right);
      slotStep[size_t(right)] = -1;
    }
    reverseRange(a, a + m, s, slotA);
  }

  int64_t steps;
  std::vector<int64_t> slotStep; ///< the step a slot holds, -1 free
  std::vector<ScheduleAction> *out = nullptr;
  int64_t pos =
      0; ///< the step whose state is current (-1: none, after a reversal)
};

} // namespace

/// The snapshots left for the count - k scheduled steps of a plan whose
/// first k steps stay taped, \p stepTape bytes each, within \p bound bytes:
/// what the rest of the bound holds; under a budget (\p budgeted) at least
/// the binomial minimum, as budgetSnapshots gives (the budget is a target,
/// the re-runs of fewer snapshots are not); -1 where k steps of tape pass
/// the bound themselves (k > 1).
int64_t prefixSnapshots(int64_t count, int64_t k, int64_t stepTape,
                        int64_t bound, int64_t snapshotBytes, bool budgeted) {
  const int64_t rest = count - k;
  if (k > 1 && k * stepTape > bound)
    return -1;
  int64_t snaps =
      snapshotBytes > 0 ? (bound - k * stepTape) / snapshotBytes : rest;
  if (budgeted)
    snaps = std::max(snaps, defaultSnapshots(rest));
  if (snaps < 1 && k > 1)
    return -1;
  return std::clamp<int64_t>(snaps, 1, std::max<int64_t>(rest, 1));
}

/// How many first steps of a plan of \p count steps stay on the tape the
/// forward sweep made, when taping all of them would pass \p bound bytes:
/// k steps of \p stepTape bytes each stay taped (reversed from the tape,
/// never re-run) and the other count - k follow a binomial schedule with
/// the snapshots prefixSnapshots leaves. Each scheduled step runs once more
/// taped before its reversal, plus its re-runs: the k with the fewest such
/// runs (the smallest on ties, so the least tape), at least 1 (step 0 ran
/// taped already).
int64_t tapedPrefix(int64_t count, int64_t stepTape, int64_t bound,
                    int64_t snapshotBytes, bool budgeted) {
  int64_t best = 1, bestRuns = INT64_MAX;
  for (int64_t k = 1; k < count; ++k) {
    const int64_t snaps =
        prefixSnapshots(count, k, stepTape, bound, snapshotBytes, budgeted);
    if (snaps < 0)
      break;
    const int64_t runs = (count - k) + rerunsFor(count - k, snaps);
    if (runs < bestRuns) {
      bestRuns = runs;
      best = k;
    }
  }
  return best;
}

std::vector<ScheduleAction>
checkpointSchedule(int64_t steps, int64_t snapshots,
                   std::vector<ScheduleAction> *forward) {
  std::vector<ScheduleAction> fwd, rev;
  int snaps =
      int(std::clamp<int64_t>(snapshots, 1, std::max<int64_t>(steps, 1)));
  Scheduler(steps, snaps).build(fwd, rev);
  // A slot's last restore before it is saved again (or the end) may move
  // the snapshot into the dats.
  std::vector<bool> restoredLater(size_t(snaps), false);
  for (auto a = rev.rbegin(); a != rev.rend(); ++a) {
    if (a->kind == ScheduleAction::Save)
      restoredLater[size_t(a->slot)] = false;
    if (a->kind != ScheduleAction::Restore)
      continue;
    a->last = !restoredLater[size_t(a->slot)];
    restoredLater[size_t(a->slot)] = true;
  }
  if (forward)
    *forward = std::move(fwd);
  return rev;
}

int64_t defaultSnapshots(int64_t steps) {
  // The smallest c with c (c + 1) / 2 >= steps: at most two re-runs of a
  // step on average (beta(c - 1, 2) = c (c + 1) / 2).
  int64_t c = 1;
  while (c * (c + 1) / 2 < steps)
    ++c;
  return c;
}

int64_t budgetSnapshots(int64_t steps, int64_t snapshotBytes,
                        int64_t budgetBytes) {
  const int64_t least = defaultSnapshots(steps);
  const int64_t fit = snapshotBytes > 0 ? budgetBytes / snapshotBytes
                                        : std::max<int64_t>(steps, 1);
  return std::max(least, std::min(std::max<int64_t>(steps, 1), fit));
}

int64_t planMemory(int64_t availableBytes, int64_t touchedBytes,
                   int ranksOnNode) {
  // A margin for everything else on the node (the adjoint dats the reverse
  // sweep allocates, other processes): a quarter of what is free, and 1 GiB.
  constexpr int64_t Margin = int64_t(1) << 30;
  const int64_t fresh = std::max<int64_t>(availableBytes / 4 * 3 - Margin, 0) /
                        std::max(ranksOnNode, 1);
  return std::max<int64_t>(touchedBytes, 0) + fresh;
}

StepZeroPlan planForPrefix(int64_t count, int64_t taped, int64_t stepTape,
                           int64_t snapshotBytes, int64_t memoryBytes,
                           int64_t touchedBytes, double stepSeconds,
                           double freshSecondsPerByte) {
  StepZeroPlan best;
  best.taped = taped;
  best.cost = -1;
  const int64_t rest = count - taped;
  const int64_t least = defaultSnapshots(rest);
  // The taped steps, and the tape of the scheduled step in flight.
  const int64_t room = memoryBytes - (taped + 1) * stepTape;
  int64_t most =
      snapshotBytes > 0 ? (room < 0 ? 0 : room / snapshotBytes) : rest;
  most = std::min(most, rest);
  if (most < least) {
    if (taped > 1)
      return best; // cost -1: beyond the memory
    most = least;  // the minimum plan always qualifies
  }
  // The snapshot counts from the binomial minimum to what the memory
  // holds, a quarter more each (the re-runs fall slowly with more).
  for (int64_t s = least;; s = std::max(s + 1, s + s / 4)) {
    s = std::min(s, most);
    StepZeroPlan p;
    p.taped = taped;
    p.snapshots = s;
    p.runs = rest + rerunsFor(rest, s);
    p.bytes = (taped + 1) * stepTape + s * snapshotBytes;
    p.cost = double(p.runs) * stepSeconds +
             double(std::max<int64_t>(p.bytes - touchedBytes, 0)) *
                 freshSecondsPerByte;
    if (best.cost < 0 || p.cost < best.cost ||
        (p.cost == best.cost &&
         (p.runs < best.runs || (p.runs == best.runs && p.bytes < best.bytes))))
      best = p;
    if (s >= most)
      break;
  }
  return best;
}

StepZeroPlan planFromStepZero(int64_t count, int64_t stepTape,
                              int64_t snapshotBytes, int64_t memoryBytes,
                              int64_t touchedBytes, double stepSeconds,
                              double freshSecondsPerByte, int64_t minTaped) {
  StepZeroPlan best;
  best.cost = -1;
  if (count <= 1 || count * stepTape <= memoryBytes) {
    // Every step taped: no step runs twice.
    best.taped = std::max<int64_t>(count, 0);
    best.bytes = best.taped * stepTape;
    best.cost = double(std::max<int64_t>(best.bytes - touchedBytes, 0)) *
                freshSecondsPerByte;
  }
  for (int64_t k = std::max<int64_t>(minTaped, 1); k < count; ++k) {
    const StepZeroPlan p =
        planForPrefix(count, k, stepTape, snapshotBytes, memoryBytes,
                      touchedBytes, stepSeconds, freshSecondsPerByte);
    if (p.cost < 0)
      break; // longer prefixes take more memory still
    if (best.cost < 0 || p.cost < best.cost ||
        (p.cost == best.cost &&
         (p.runs < best.runs || (p.runs == best.runs && p.bytes < best.bytes))))
      best = p;
  }
  return best;
}

} // namespace opdc::rt
