// Adjoint.cpp - The tape and the checkpoint plans of compiler-built adjoints.
// SPDX-License-Identifier: Apache-2.0
//
// The adjoint pass (compiler/passes/deriv/Adjoint.cpp) turns a request into a
// forward sweep, which saves what it overwrites, and a reverse sweep, which
// restores it statement by statement while it runs the adjoint loops. Two
// run-time services back it:
//
// * The tape: a stack of dat copies (storage with halos, and the halo state,
//   so MPI ranks restore exactly what they had) and of 64-bit host values.
//   Buffers popped are kept in a pool by size: a reverse sweep pushes and
//   pops the same dats every step, and fresh allocations would page-fault
//   every time. A pop hands the saved buffer to the dat and puts the dat's
//   old storage in the pool (no copy: a copy reads the tape and writes the
//   dat, 24 bytes a point of an f64 dat with the write's read-for-
//   ownership); storage and tape buffers come from the
//   same allocator with the same alignment, and the generated code reads
//   a dat's address at each loop (as swap needs). The CUDA backend pops
//   by copy (opd_tape_pop_dat_copy): its device copies are keyed by the
//   host address.
//
// * Checkpoint plans for the host loops of the differentiated proc (the
//   time loops): binomial checkpointing (Griewank and Walther's Revolve
//   schedule, computed here ahead of the run). With s free snapshots and t
//   re-runs per step, beta(s, t) = C(s + t, s) steps can be reversed; to
//   reverse [a, b) from a snapshot at a with s more snapshots the plan
//   advances to a + m (Scheduler::split: Griewank's bound, the fewest
//   re-runs), saves a snapshot there, reverses [a + m, b) with s - 1
//   snapshots, frees it, then reverses [a, a + m) with s. The forward
//   sweep runs the loop once from start to end and saves the snapshots of
//   the plan's first descent (its "spine"); the reverse sweep follows the
//   rest of the plan. A snapshot of
//   every step (snapshots >= steps) gives no re-runs at all: every step
//   goes on the tape instead, as long as that stays within the plan's
//   memory bound (the snapshots' bytes, or the budget); when step 0's tape
//   shows that it would not, the first k steps stay taped and the others
//   follow a binomial schedule with what the bound still holds, k chosen
//   for the fewest step runs (tapedPrefix, opd_ckpt_forward). A plan sized
//   by a budget that holds snapshots for half its steps or more starts that
//   way too: Airfoil's 100 steps, whose tape of a step is 1.4 snapshots,
//   get a taped prefix instead of none.
//   Snapshots after the schedule's first keep of a dat that the step's
//   first loop overwrites only its points outside that loop's range: the
//   others are dead when the step starts (saveSlot); a plan sized by the
//   memory budget then re-plans for the smaller snapshots at its second
//   step (replanSmallerSnapshots).
//   (The schedule's arithmetic: exec/AdjointSchedule.cpp.)
//   (The tape's C entry points: exec/AdjointTape.cpp; snapshots in
//   files: exec/AdjointDisk.cpp; the state all of them share:
//   exec/AdjointState.h.)
//   Without a budget (no OPD_CKPT_MEMORY) a plan tapes step 0 and plans at
//   step 1 from what step 0 showed (planAutomatically): its tape's bytes,
//   its time, the seconds a byte of fresh memory cost (the pool touches
//   new buffers itself and times it) and the memory free on the node; it
//   takes the plan of the fewest expected seconds within three quarters of
//   that memory less 1 GiB (planFromStepZero): every step taped where the
//   tape fits and its fresh memory costs less than re-running, else a taped
//   prefix and snapshots for the rest. The n-th such call counts fresh
//   memory at 1/n of its cost (the pool keeps it for the calls after), so
//   repeated calls grow into the memory a one-shot call would not pay for.
#include "core/Dist.h"
#include "core/Memory.h"
#include "core/Objects.h"
#include "core/Runtime.h"
#include "exec/Adjoint.h"

#include "opd_rt.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "exec/AdjointState.h"

namespace opdc::rt {
using namespace adjoint;
namespace {

Plan &topPlan(const char *what) {
  if (plans().empty())
    failf("internal error: %s without a checkpoint plan", what);
  return *plans().back();
}

/// Saves the state into \p slot. A state dat flagged in \p overwritten
/// (the first loop of the step's body overwrites it) waits for that loop's
/// prepare, when the body runs next: always in the forward sweep, after an
/// ADVANCE in the reverse one. That prepare saves only its points outside
/// the loop's range, whose values alone are live at the step's start;
/// except at the schedule's step 0, whose state the reverse sweep leaves
/// behind for what comes before the loop (the statements before it, the
/// steps taped before the schedule): there it takes the dat's storage.
/// \p step is the saved state's step, relative to the schedule.
void saveSlot(Plan &p, int slot, const uint64_t *vals, int64_t step,
              const uint8_t *overwritten = nullptr) {
  if (slot < 0 || slot >= p.snaps)
    failf("internal error: checkpoint slot %d of %d", slot, p.snaps);
  // Whether the body runs next (a forward step; a reverse SAVE followed by
  // ADVANCE), and the next step's body after it (flag 2's take; ADVANCEs
  // in a row run consecutive steps).
  const bool bodyNext = !p.reversing || p.advanceAt(p.reverseNext);
  const bool nextBodyNext =
      p.reversing ? p.advanceAt(p.reverseNext) && p.advanceAt(p.reverseNext + 1)
                  : p.forwardStep + 1 < p.count;
  if (overwritten && p.flags.empty()) {
    p.flags.assign(overwritten, overwritten + p.dats.size());
    p.outsideBytes.assign(p.dats.size(), -1);
  }
  Snapshot &s = p.slots[size_t(slot)];
  if (s.disk) {
    // Every dat copied now (a write follows), into buffers counted again.
    finishIO(p, s);
    countResident(p, s, true);
    overwritten = nullptr;
  }
  Timed timed(stats.saveSeconds);
  if (!s.allocated) {
    s.dats.resize(p.dats.size());
    s.allocated = true;
  }
  int64_t bytes = 0;                      // this save's, as far as known now
  const int bodies = p.reversing ? 1 : 0; // the reverse's ADVANCE to come
  for (size_t i = 0; i < p.dats.size(); ++i) {
    const uint8_t flag = overwritten ? overwritten[i] : 0;
    const bool partial = flag == 1 && step > 0;
    // Flag 3 on one rank only: a skewed sweep exchanges its loops' halos
    // after all of their prepares (lib/exec/Skew.cpp), into the dat's
    // storage then, a fresh one after the take, while the loops before the
    // taking one read the snapshot's.
    if (((flag == 1 || (flag == 3 && dist::ranks() == 1)) && bodyNext) ||
        (flag == 2 && bodyNext && nextBodyNext)) {
      s.dats[i].dat = p.dats[i];
      PendingTake take =
          pendingFor(&s.dats[i], 0, p.dats[i], bodies + (flag == 2 ? 1 : 0));
      take.partial = partial;
      take.late = flag == 3;
      if (flag == 1 && i < p.outsideBytes.size())
        take.outsideBytes = &p.outsideBytes[i];
      pendingTakes.push_back(take);
    } else {
      s.dats[i].save(p.dats[i]);
    }
    bytes += partial && i < p.outsideBytes.size() && p.outsideBytes[i] >= 0
                 ? p.outsideBytes[i]
                 : storageBytes(p.dats[i]);
  }
  p.bytes += bytes - s.bytes;
  checkpointBytesNow += bytes - s.bytes;
  s.bytes = bytes;
  stats.checkpointPeakBytes =
      std::max(stats.checkpointPeakBytes, checkpointBytesNow);
  s.moved = false;
  s.values.assign(vals, vals + p.nvals);
  ++stats.snapshotsTaken;
  if (s.disk)
    startWrite(p, slot);
}

/// The plan's snapshots are smaller than opd_ckpt_begin counted (flag-1
/// dats keep only their points outside the first loop's range, which the
/// first step's prepare showed): a plan whose count came from the memory
/// budget takes as many more as that memory holds, with a new schedule
/// from the second step of its range on (its first forward action, the
/// save of step 0 into slot 0, is the same in every schedule). All ranks
/// decide alike.
void replanSmallerSnapshots(Plan &p) {
  p.replanned = true;
  const int64_t steps = p.count - p.taped;
  const int64_t bytes = p.partialSnapshotBytes();
  // The first snapshot stays whole; the others are this size.
  int64_t snaps = p.snaps;
  if (bytes > 0 && bytes < p.snapshotBytes)
    snaps = std::clamp<int64_t>(
        1 + (p.memoryForSnapshots - p.snapshotBytes) / bytes, p.snaps, steps);
  dist::allreduce(&snaps, OPD_I64, OPD_MIN, 1);
  if (snaps <= p.snaps || p.forwardNext != 1)
    return;
  std::vector<ScheduleAction> fwd;
  std::vector<ScheduleAction> rev = checkpointSchedule(steps, snaps, &fwd);
  if (fwd.empty() || fwd[0].kind != ScheduleAction::Save || fwd[0].step != 0 ||
      fwd[0].slot != p.forward[0].slot)
    return;
  p.snaps = int(snaps);
  p.slots.resize(size_t(snaps));
  p.forward = std::move(fwd);
  p.reverse = std::move(rev);
  assignDisk(p);
}

/// Top-level checkpointed loops begun under an automatic budget: the n-th
/// call of an adjoint expects as many more, so memory touched for the
/// first time counts 1/n of its cost (later calls reuse it from the pool).
int64_t automaticCalls = 0;
/// Plans begun (their snapshot files' names).
int64_t planSerial = 0;

/// Steps [0, k) stay taped (k < count), the others follow a binomial
/// schedule with \p plan's snapshots (the least over the ranks) within
/// \p memory, step 0's tape \p step0 bytes: from step k on (k >= the
/// step opd_ckpt_forward is at, whose tape is not pushed yet).
void schedulePrefix(Plan &p, StepZeroPlan &plan, int64_t k, int64_t memory,
                    int64_t step0) {
  int64_t snaps = std::max<int64_t>(plan.snapshots, 1);
  dist::allreduce(&snaps, OPD_I64, OPD_MIN, 1);
  plan.snapshots = snaps;
  p.storeAll = false;
  p.storeAllNext = 0;
  p.taped = p.tapedNext = k;
  p.boundBytes = memory;
  p.memoryForSnapshots = snaps * p.snapshotBytes;
  p.snaps = int(snaps);
  p.slots.resize(size_t(p.snaps));
  p.forward.clear();
  p.forwardNext = 0;
  p.reverse = checkpointSchedule(p.count - k, p.snaps, &p.forward);
  // The minimum plan may pass the memory: the rest on disk, if allowed.
  p.memoryLimit = std::max<int64_t>(memory - (k + 1) * step0, 0);
  assignDisk(p);
}

/// The seconds a byte of fresh memory costs: the test setting, else the
/// pool's measure of the pages it will get.
double freshCostNow() {
  return freshCostOverride >= 0 ? freshCostOverride : pool().freshCost();
}

/// An automatic plan at step 1 (opd_ckpt_begin taped step 0): from step
/// 0's tape and time, the memory free on the node and what the adjoints'
/// pool holds, the plan of the fewest expected seconds (planFromStepZero):
/// every step taped where that fits and pays, else a taped prefix and a
/// binomial schedule for the rest. All ranks decide alike: the largest
/// times, the smallest prefix, then the fewest snapshots.
void planAutomatically(Plan &p) {
  const int64_t step0 = std::max<int64_t>(tape().bytes - p.tapeAtBegin, 0);
  double costs[2] = {std::max(opd_rt_wtime() - p.stepStart -
                                  (stats.freshSeconds - p.freshAtStart),
                              0.0),
                     freshCostNow()};
  dist::allreduce(costs, OPD_F64, OPD_MAX, 2);
  int64_t ranksOnNode = dist::nodeRank() + 1;
  dist::allreduce(&ranksOnNode, OPD_I64, OPD_MAX, 1);
  // Step 0's tape is touched already, and so is what the pool holds free;
  // a few MiB more count as touched too, so that small problems, whose
  // timings are noise, plan alike in every run (every step taped).
  constexpr int64_t Small = int64_t(64) << 20;
  const int64_t touched = step0 + pool().freeNow() + Small;
  const int64_t memory =
      planMemory(availableMemory(), touched, int(ranksOnNode));
  p.callShare = 1.0 / double(std::max<int64_t>(automaticCalls, 1));
  const double fresh = costs[1] * p.callShare;
  StepZeroPlan plan = planFromStepZero(p.count, step0, p.snapshotBytes, memory,
                                       touched, costs[0], fresh);
  int64_t k = plan.taped;
  dist::allreduce(&k, OPD_I64, OPD_MIN, 1);
  if (k < p.count) {
    if (k != plan.taped)
      plan = planForPrefix(p.count, k, step0, p.snapshotBytes, memory, touched,
                           costs[0], fresh);
    schedulePrefix(p, plan, k, memory, step0);
  }
  // What revisePrefix weighs the taped steps to come against.
  const PageChoice &pages = pool().pageChoice();
  p.stepTape = step0;
  p.stepSeconds = costs[0];
  p.planMemory = memory;
  p.planTouched = touched;
  p.tapeAtPlan = tape().bytes;
  for (bool huge : {false, true}) {
    p.pageBytesAtPlan[huge] = pages.bytesOf(huge);
    p.pageSecondsAtPlan[huge] = pages.secondsOf(huge);
  }
  stats.planned = true;
  stats.lastPlan = plan;
  stats.planCount = p.count;
  stats.planStepTape = step0;
  stats.planMemoryBytes = memory;
  stats.planStepSeconds = costs[0];
  stats.planFreshSecondsPerGiB = fresh * double(int64_t(1) << 30);
}

/// Whether an automatic plan looks again at step \p rel of its taped
/// steps: about 16 times over the loop (each look plans every prefix, a
/// few milliseconds), from step 2 on (step 1 made the plan).
bool reviseAt(const Plan &p, int64_t rel) {
  const int64_t every = std::max<int64_t>((p.count + 15) / 16, 1);
  return p.automatic && rel >= 2 && rel < p.taped && rel % every == 0;
}

/// An automatic plan at step \p rel of its taped steps: step 0's 0.1 GiB
/// may have come from pages the process had just given back (cheaper than
/// the many GiB still to come: bench/adjoint/README.md), so the plan is
/// made again with what the fresh memory since step 1 cost (once a
/// PageChoice::Sample of it is measured), the steps taped so far counted
/// as held. If a shorter prefix (at least rel steps: those are taped) now
/// costs less, steps [rel, count) follow a schedule instead. All ranks
/// decide alike.
void revisePrefix(Plan &p, int64_t rel) {
  const PageChoice &pages = pool().pageChoice();
  const bool huge = pages.huge();
  const int64_t bytes = pages.bytesOf(huge) - p.pageBytesAtPlan[huge];
  double fresh =
      freshCostOverride >= 0 ? freshCostOverride
      : bytes >= PageChoice::Sample
          ? (pages.secondsOf(huge) - p.pageSecondsAtPlan[huge]) / double(bytes)
          : -1.0;
  dist::allreduce(&fresh, OPD_F64, OPD_MAX, 1);
  if (fresh < 0)
    return;
  fresh *= p.callShare;
  const int64_t touched =
      p.planTouched + std::max<int64_t>(tape().bytes - p.tapeAtPlan, 0);
  StepZeroPlan plan =
      planFromStepZero(p.count, p.stepTape, p.snapshotBytes, p.planMemory,
                       touched, p.stepSeconds, fresh, rel);
  int64_t k = std::max(plan.taped, rel);
  dist::allreduce(&k, OPD_I64, OPD_MIN, 1);
  if (k >= p.taped)
    return;
  if (k != plan.taped)
    plan = planForPrefix(p.count, k, p.stepTape, p.snapshotBytes, p.planMemory,
                         touched, p.stepSeconds, fresh);
  schedulePrefix(p, plan, k, p.planMemory, p.stepTape);
  stats.lastPlan = plan;
  stats.planFreshSecondsPerGiB = fresh * double(int64_t(1) << 30);
  ++stats.planRevisions;
  stats.planRevisedAt = rel;
}

} // namespace

static int64_t budgetOverride = -1;

void setSnapshotBudget(int64_t bytes) { budgetOverride = bytes; }

/// OPD_CKPT_MEMORY in bytes, or -1 when the environment sets none.
static int64_t environmentBudget() {
  static const int64_t bytes = [] {
    const int64_t mib =
        envInteger("OPD_CKPT_MEMORY", -1, 0, INT64_MAX >> 20,
                   "the snapshots' memory in MiB (a whole number >= 0)");
    return mib >= 0 ? mib << 20 : int64_t(-1);
  }();
  return bytes;
}

void setCheckpointDir(const char *dir) {
  checkpointDirRead = true;
  checkpointDir.clear();
  if (!dir || !*dir)
    return;
  checkDirectory(dir, "--ckpt-dir");
  checkpointDir = dir;
}

bool automaticBudget() { return budgetOverride < 0 && environmentBudget() < 0; }

void setAvailableMemory(int64_t bytes) { availableOverride = bytes; }
void setFreshMemoryCost(double secondsPerByte) {
  freshCostOverride = secondsPerByte;
}

int64_t availableMemory() {
  if (availableOverride >= 0)
    return availableOverride;
  // MemAvailable counts the page cache the kernel would drop; the free
  // pages alone (the fallback) are less.
  if (std::FILE *f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    long long kib = -1;
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "MemAvailable: %lld kB", &kib) == 1)
        break;
    std::fclose(f);
    if (kib >= 0)
      return int64_t(kib) << 10;
  }
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? int64_t(pages) * page : 0;
}

int64_t snapshotBudget() {
  if (budgetOverride >= 0)
    return budgetOverride;
  static const int64_t budget = [] {
    if (environmentBudget() >= 0)
      return environmentBudget();
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    const int64_t physical = pages > 0 && page > 0 ? int64_t(pages) * page : 0;
    return physical / 4 / std::max(dist::ranks(), 1);
  }();
  return budget;
}

const AdjointMemory &adjointMemory() {
  if (haveStore() && storeHooks.usage) {
    stats.store = true;
    storeHooks.usage(stats.storeUsage, OPD_STORE_VALUES);
  }
  return stats;
}

int64_t checkpointBytesInMemory() { return checkpointBytesNow; }

bool adjointRerunning() { return rerunPhase; }

/// Whether loop \p name runs a kernel the derivative passes made: the
/// compiler's names (step.b, step.bt3, step.d, adjoint_zero_f64, fused
/// groups of them) or the user's ("step (adjoint)"). The reverse part of a
/// scheduled step may start with such loops before its first tape pop.
static bool derivativeLoop(const std::string &name) {
  if (name.find("(adjoint") != std::string::npos ||
      name.find("(tangent") != std::string::npos)
    return true;
  size_t at = 0;
  while (at <= name.size()) {
    size_t end = name.find('+', at);
    if (end == std::string::npos)
      end = name.size();
    const std::string part = name.substr(at, end - at);
    if (part.find('.') != std::string::npos || part.rfind("adjoint_", 0) == 0 ||
        part.rfind("tangent_", 0) == 0)
      return true;
    at = end + 1;
  }
  return false;
}

std::string rerunLoopName(const std::string &name) {
  if (derivativeLoop(name))
    return name;
  constexpr size_t Width = 48; // ir::MaxUserLoopName
  std::string base = name, tag = " (re-run)";
  if (base.size() > 2 && base.back() == ')') {
    // "a+b (fused)": one parenthesis.
    const size_t open = base.rfind(" (");
    if (open != std::string::npos) {
      tag = base.substr(open, base.size() - 1 - open) + ", re-run)";
      base.resize(open);
    }
  }
  if (base.size() + tag.size() > Width)
    base = base.substr(0, Width - tag.size() - 3) + "...";
  return base + tag;
}

} // namespace opdc::rt

using namespace opdc::rt;
using namespace opdc::rt::adjoint;

extern "C" {

void opd_ckpt_begin(int64_t first, int64_t count, int64_t snapshots,
                    opd_dat *const *dats, int32_t ndats, int32_t nvals) {
  auto p = std::make_unique<Plan>();
  p->first = first;
  p->count = std::max<int64_t>(count, 0);
  int64_t bytes = 8 * int64_t(nvals);
  for (int32_t i = 0; i < ndats; ++i)
    bytes += storageBytes(dats[i]);
  p->snapshotBytes = bytes;
  if (snapshots <= 0 && automaticBudget()) {
    // Planned at step 1 from step 0's tape, its time and the memory free
    // then (opd_ckpt_forward): step 0 goes on the tape, as the reversal of
    // any step needs one step's tape anyway.
    p->automatic = p->budgeted = true;
    snapshots = std::max<int64_t>(p->count, 1);
    p->boundBytes = snapshots * bytes;
    if (plans().empty())
      ++automaticCalls;
  } else if (snapshots <= 0) {
    // As many as the memory budget holds: fewer re-runs. Every rank runs
    // the same schedule (its steps' exchanges must meet): the smallest.
    const int64_t budget = snapshotBudget();
    snapshots = budgetSnapshots(p->count, bytes, budget);
    dist::allreduce(&snapshots, OPD_I64, OPD_MIN, 1);
    p->boundBytes = std::max(budget, snapshots * bytes);
    p->budgeted = true;
    p->memoryLimit = budget;
  } else {
    p->boundBytes = snapshots * bytes;
    p->memoryLimit = snapshotBudget();
  }
  p->serial = ++planSerial;
  p->snaps = int(std::clamp<int64_t>(snapshots, 1, std::max<int64_t>(p->count, 1)));
  p->memoryForSnapshots = p->boundBytes;
  p->dats.assign(dats, dats + ndats);
  p->nvals = nvals;
  p->tapeAtBegin = tape().bytes;
  // Taping every step first, where the snapshots would be one a step and
  // under a budget that holds snapshots for half the steps or more (a
  // step's tape is a few snapshots' worth, so a taped prefix then saves
  // more runs than the snapshots it costs): opd_ckpt_forward decides at
  // step 1 from step 0's tape how many steps stay taped. A budgeted plan
  // keeps at least the binomial minimum of snapshots for the rest, so
  // taping step 0 costs at most one step's tape beyond the budget, which
  // the reversal of any step takes anyway. Smaller budgets (a first call,
  // snapshotBudgetNow) schedule every step as before.
  p->storeAll = p->count > 0 &&
                (snapshots >= p->count || (p->budgeted && 2 * snapshots >= p->count));
  if (p->storeAll) {
    p->storeAllNext = p->taped = p->count;
  } else {
    if (p->budgeted && !diskDirectory().empty()) {
      // Beyond what the budget holds, as many again on disk.
      int64_t total = withDiskSnapshots(p->count, snapshots, bytes);
      dist::allreduce(&total, OPD_I64, OPD_MIN, 1);
      p->snaps = int(total);
    }
    p->slots.resize(size_t(p->snaps));
    p->reverse = checkpointSchedule(p->count, p->snaps, &p->forward);
    assignDisk(*p);
  }
  plans().push_back(std::move(p));
}

int32_t opd_ckpt_forward(int64_t step) {
  bodyStarts();
  Plan &p = topPlan("a checkpointed step");
  p.forwardStep = step - p.first;
  if (p.automatic && p.storeAll && step - p.first <= 1 && p.count > 1) {
    if (step - p.first == 0) {
      p.stepStart = opd_rt_wtime();
      p.freshAtStart = stats.freshSeconds;
    } else {
      planAutomatically(p);
    }
  } else if (reviseAt(p, step - p.first)) {
    revisePrefix(p, step - p.first);
  } else if (p.storeAll && step - p.first == 1 && p.count > 1) {
    // Taping every step is only right while the tape stays within the
    // plan's bound: one step's tape can hold more than a snapshot (every
    // value each of its loops overwrites; Airfoil's is 1.4 snapshots). If
    // step 0's tape times the steps would pass the bound, the first steps
    // stay taped and the rest follows a binomial schedule with the
    // snapshots that the bound still holds. All ranks decide alike.
    const int64_t step0 = std::max<int64_t>(tape().bytes - p.tapeAtBegin, 0);
    int64_t over = step0 > 0 && step0 > p.boundBytes / p.count ? 1 : 0;
    dist::allreduce(&over, OPD_I64, OPD_MAX, 1);
    if (over) {
      // The first k steps stay taped (step 0 is, steps 1..k-1 will be),
      // the rest is scheduled: the fewest runs (tapedPrefix); the smallest
      // k over the ranks, whose tapes differ, then the fewest snapshots.
      int64_t k = tapedPrefix(p.count, step0, p.boundBytes, p.snapshotBytes,
                              p.budgeted);
      dist::allreduce(&k, OPD_I64, OPD_MIN, 1);
      int64_t snaps = prefixSnapshots(p.count, k, step0, p.boundBytes,
                                      p.snapshotBytes, p.budgeted);
      snaps = std::max<int64_t>(snaps, 1); // k = 1 always has a plan
      const int64_t rest = p.count - k;
      dist::allreduce(&snaps, OPD_I64, OPD_MIN, 1);
      p.storeAll = false;
      p.taped = p.tapedNext = k;
      p.memoryForSnapshots = std::max<int64_t>(p.boundBytes - k * step0, 0);
      p.snaps = int(snaps);
      p.slots.resize(size_t(p.snaps));
      p.reverse = checkpointSchedule(rest, p.snaps, &p.forward);
      if (p.memoryLimit >= 0)
        p.memoryLimit = std::max<int64_t>(p.memoryLimit - k * step0, 0);
      assignDisk(p);
    }
  }
  if (p.storeAll)
    return OPD_CKPT_TAPE;
  const int64_t rel = step - p.first;
  if (rel < p.taped)
    return OPD_CKPT_TAPE;
  if (p.budgeted && !p.replanned && rel == p.taped + 1)
    replanSmallerSnapshots(p);
  if (p.forwardNext < p.forward.size() &&
      p.forward[p.forwardNext].step == rel - p.taped)
    return p.forward[p.forwardNext++].slot;
  return -1;
}

/// The step of the state a save now takes, relative to the plan's
/// schedule: the forward sweep's, or the reverse SAVE's.
static int64_t savedStep(const Plan &p) {
  if (!p.reversing)
    return p.forwardStep - p.taped;
  return p.reverseNext > 0 ? p.reverse[p.reverseNext - 1].step : 0;
}

void opd_ckpt_save(int32_t slot, const uint64_t *vals) {
  settlePending();
  Plan &p = topPlan("a snapshot");
  saveSlot(p, slot, vals, savedStep(p));
}

void opd_ckpt_save_overwritten(int32_t slot, const uint64_t *vals,
                               const uint8_t *overwritten) {
  settlePending();
  Plan &p = topPlan("a snapshot");
  // A device store's entries are copies: nothing waits for a loop.
  saveSlot(p, slot, vals, savedStep(p), haveStore() ? nullptr : overwritten);
}

/// Restores the state from \p slot; by handing the snapshot's storage to
/// the dats (their old storage goes to the pool, for the next save) when
/// \p mayMove and this is the schedule's last restore of the slot before it
/// is saved again, else by copy.
static void restoreSlot(int32_t slot, uint64_t *vals, bool mayMove) {
  settlePending();
  Plan &p = topPlan("a restore");
  if (slot < 0 || slot >= p.snaps || !p.slots[size_t(slot)].allocated ||
      p.slots[size_t(slot)].moved)
    failf("internal error: restore of checkpoint slot %d, never saved", slot);
  Snapshot &s = p.slots[size_t(slot)];
  if (s.disk)
    makeResident(p, s);
  const ScheduleAction *a =
      p.reverseNext > 0 && p.reverseNext <= p.reverse.size()
          ? &p.reverse[p.reverseNext - 1]
          : nullptr;
  // A disk snapshot's buffers go back to the pool after the restore (its
  // file stays), so it is restored by copy.
  const bool move = mayMove && !s.disk && a &&
                    a->kind == ScheduleAction::Restore && a->slot == slot &&
                    a->last;
  Timed timed(stats.restoreSeconds);
  for (size_t i = 0; i < p.dats.size(); ++i) {
    if (move && !s.dats[i].isPartial())
      pool().put(s.dats[i].moveInto(p.dats[i]));
    else
      s.dats[i].restore(p.dats[i]);
  }
  s.moved = move;
  ++stats.restores;
  stats.restoresMoved += move;
  std::copy(s.values.begin(), s.values.end(), vals);
  if (s.disk) {
    finishIO(p, s); // its buffers back to the pool
    prefetchNext(p);
  }
  // A device store brings the next restore's snapshot back meanwhile.
  if (haveStore())
    for (std::size_t k = p.reverseNext; k < p.reverse.size(); ++k)
      if (p.reverse[k].kind == ScheduleAction::Restore) {
        for (DatCopy &c : p.slots[size_t(p.reverse[k].slot)].dats)
          if (c.entry)
            storeHooks.prefetch(c.entry);
        break;
      }
}

void opd_ckpt_restore(int32_t slot, uint64_t *vals) {
  restoreSlot(slot, vals, true);
}

void opd_ckpt_restore_copy(int32_t slot, uint64_t *vals) {
  restoreSlot(slot, vals, false);
}

int32_t opd_ckpt_next(int64_t *step, int32_t *slot) {
  // A SAVE's pending takes wait through the ADVANCEs that run the bodies
  // whose first loop takes them (bodyStarts); any other action saves what
  // still waits by copy.
  Plan &p = topPlan("the reverse of a checkpointed loop");
  p.reversing = true;
  rerunPhase = false;
  pollIO(p);
  if (p.rerunStart >= 0) {
    stats.rerunSeconds += opd_rt_wtime() - p.rerunStart;
    p.rerunStart = -1;
  }
  if (!p.storeAll && p.advanceAt(p.reverseNext))
    bodyStarts();
  else
    settlePending();
  if (p.storeAll) {
    if (p.storeAllNext == 0)
      return OPD_CKPT_DONE;
    *step = p.first + --p.storeAllNext;
    *slot = -1;
    ++stats.stepsReversed;
    return OPD_CKPT_REVERSE_TAPED;
  }
  if (p.reverseNext >= p.reverse.size()) {
    // Then the steps the forward sweep taped, last first.
    if (p.tapedNext == 0)
      return OPD_CKPT_DONE;
    *step = p.first + --p.tapedNext;
    *slot = -1;
    ++stats.stepsReversed;
    return OPD_CKPT_REVERSE_TAPED;
  }
  const ScheduleAction &a = p.reverse[p.reverseNext++];
  *step = p.first + p.taped + a.step;
  *slot = a.slot;
  switch (a.kind) {
  case ScheduleAction::Advance:
    ++stats.stepsRerun;
    p.rerunStart = opd_rt_wtime();
    rerunPhase = true;
    return OPD_CKPT_ADVANCE;
  case ScheduleAction::Save:
    return OPD_CKPT_SAVE;
  case ScheduleAction::Restore:
    return OPD_CKPT_RESTORE;
  case ScheduleAction::Reverse:
    ++stats.stepsReversed;
    rerunPhase = true; // its forward run with tape, until the first pop
    return OPD_CKPT_REVERSE;
  }
  return OPD_CKPT_DONE;
}

void opd_ckpt_end(void) {
  settlePending();
  rerunPhase = false;
  Plan &p = topPlan("the end of a checkpointed loop");
  for (Snapshot &s : p.slots) {
    if (s.io.valid())
      finishIO(p, s, true);
    if (s.fileBytes) {
      ::unlink(s.path.c_str());
      diskBytesNow -= s.fileBytes;
    }
    for (DatCopy &c : s.dats)
      c.release();
  }
  checkpointBytesNow -= p.bytes;
  plans().pop_back();
}

} // extern "C"
