// Adjoint.h - The tape and checkpoint plans behind compiler-built adjoints
// (internal to the runtime; the C ABI is opd_tape_* / opd_ckpt_* in
// opd_rt.h).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_LIB_EXEC_ADJOINT_H
#define OPDC_LIB_EXEC_ADJOINT_H

#include "opd_rt.h"

#include <cstdint>
#include <string>
#include <vector>

namespace opdc::rt {

/// One action of a checkpoint plan; steps are relative to the loop's first.
struct ScheduleAction {
  enum Kind { Advance, Save, Restore, Reverse } kind;
  int64_t step; ///< Advance/Reverse: the step; Save/Restore: the state's step
  int slot;     ///< Save/Restore: the snapshot slot
  /// Restore: no later action restores this slot before a Save overwrites
  /// it or the schedule ends, so the snapshot's storage may be handed to
  /// the dats instead of copied (opd_ckpt_restore).
  bool last = false;
};

/// The binomial checkpoint schedule of \p steps steps with \p snapshots
/// snapshots (clamped to [1, steps]): the reverse sweep's actions, which
/// start with the state after the last step; the forward sweep's Save
/// actions (in step order) into \p forward.
std::vector<ScheduleAction>
checkpointSchedule(int64_t steps, int64_t snapshots,
                   std::vector<ScheduleAction> *forward);

/// The binomial minimum of snapshots: the smallest c with c (c + 1) / 2 >=
/// steps (at most two re-runs of a step on average).
int64_t defaultSnapshots(int64_t steps);

/// The snapshot count used when the program names none: as many snapshots
/// of \p snapshotBytes each as \p budgetBytes holds, at least
/// defaultSnapshots(steps), at most one a step (then no step runs twice).
int64_t budgetSnapshots(int64_t steps, int64_t snapshotBytes,
                        int64_t budgetBytes);

/// The snapshots left for the count - k scheduled steps of a plan whose
/// first k steps stay taped (\p stepTape bytes each) within \p bound
/// bytes; -1 where k steps of tape pass the bound (exec/AdjointSchedule.cpp).
int64_t prefixSnapshots(int64_t count, int64_t k, int64_t stepTape,
                        int64_t bound, int64_t snapshotBytes, bool budgeted);
/// How many first steps of a plan of \p count steps stay taped when taping
/// all of them would pass \p bound bytes: the fewest step runs.
int64_t tapedPrefix(int64_t count, int64_t stepTape, int64_t bound,
                    int64_t snapshotBytes, bool budgeted);

/// Bytes the snapshots of one checkpointed loop may take on this rank when
/// the user sets them: OPD_CKPT_MEMORY (MiB) from the environment, or
/// setSnapshotBudget; else (automaticBudget) a quarter of the physical
/// memory divided among the ranks, which plans no longer use.
int64_t snapshotBudget();
/// Sets snapshotBudget() to \p bytes (tests; -1: back to the environment's
/// or the memory's).
void setSnapshotBudget(int64_t bytes);
/// Whether plans without a snapshot count size themselves from step 0
/// (neither OPD_CKPT_MEMORY nor setSnapshotBudget set a budget).
bool automaticBudget();

/// Sets the device memory a backend's adjoint store may hold
/// (--device-tape-memory; opd_rt_device_tape_memory).
void setDeviceTapeMemory(int64_t bytes);
/// \p text as bytes: a whole number of MiB, or of KiB or GiB with a suffix
/// K or G (M for MiB allowed); -1 if it is not one.
int64_t memorySize(const char *text);

/// Sets the directory where snapshots beyond the memory go (--ckpt-dir;
/// OPD_CKPT_DIR otherwise; null or empty: none). A path that is not a
/// directory this process can write is an error.
void setCheckpointDir(const char *dir);

/// The memory free on this node (MemAvailable in /proc/meminfo; else the
/// free pages), or what setAvailableMemory set.
int64_t availableMemory();
/// Sets availableMemory() to \p bytes (tests; -1: back to the node's).
void setAvailableMemory(int64_t bytes);
/// Sets the seconds a byte of memory touched for the first time costs
/// (tests; -1: back to the pool's measure).
void setFreshMemoryCost(double secondsPerByte);
/// The bytes an automatic plan may hold on this rank: \p touchedBytes the
/// adjoints already hold (free in their pool, or step 0's tape) plus three
/// quarters of \p availableBytes less a margin of 1 GiB, shared among the
/// \p ranksOnNode ranks of the node: never all of the free memory.
int64_t planMemory(int64_t availableBytes, int64_t touchedBytes,
                   int ranksOnNode);

/// An automatic plan of a checkpointed loop, decided at step 1: the first
/// `taped` steps stay on the tape (all of them: taped == count), the others
/// follow a binomial schedule with `snapshots` snapshots.
struct StepZeroPlan {
  int64_t taped = 0, snapshots = 0;
  int64_t runs = 0;  ///< scheduled steps' taped runs and re-runs
  int64_t bytes = 0; ///< the taped steps' tape and the snapshots
  double cost = 0;   ///< seconds the model expects beyond the first sweep
};
/// The plan of \p count steps, each taping \p stepTape bytes, with
/// snapshots of \p snapshotBytes, within \p memoryBytes (k = 1 with the
/// binomial minimum of snapshots always qualifies) that costs the fewest
/// seconds: each step run again (taped before its reversal, or re-run)
/// \p stepSeconds, each byte beyond the \p touchedBytes the adjoints hold
/// already \p freshSecondsPerByte (the kernel's page faults of a first
/// touch); ties to the fewest runs, then bytes. Prefixes shorter than
/// \p minTaped are not considered (a plan revised at step minTaped: those
/// steps are taped already).
StepZeroPlan planFromStepZero(int64_t count, int64_t stepTape,
                              int64_t snapshotBytes, int64_t memoryBytes,
                              int64_t touchedBytes, double stepSeconds,
                              double freshSecondsPerByte, int64_t minTaped = 1);
/// The same for a given prefix of \p taped steps (taped < count).
StepZeroPlan planForPrefix(int64_t count, int64_t taped, int64_t stepTape,
                           int64_t snapshotBytes, int64_t memoryBytes,
                           int64_t touchedBytes, double stepSeconds,
                           double freshSecondsPerByte);

/// The pages of the pool's large fresh buffers: huge (MADV_HUGEPAGE) or
/// 4 KiB, whichever cost less a byte to fault in. Which is cheaper depends
/// on the machine, by several times either way (bench/adjoint/
/// fault_cost.c; docs/decisions/0380): a free 2 MiB page is one fault,
/// but where the kernel must compact memory for it, or a hypervisor backs
/// the guest by small pages, a huge page costs more than its 512 small
/// ones. The first Sample bytes of each kind are measured (alternately,
/// huge first: the old default), then every buffer takes the cheaper. Its
/// cost a byte is what automatic plans weigh: the memory they will get.
class PageChoice {
public:
  static constexpr int64_t Sample = int64_t(32) << 20;
  /// Whether the next large fresh buffer asks for huge pages.
  bool huge() const {
    if (!sampled())
      return bytes[1] <= bytes[0];
    return cost(true) <= cost(false);
  }
  /// Both kinds measured on Sample bytes or more.
  bool sampled() const { return bytes[0] >= Sample && bytes[1] >= Sample; }
  /// A fresh buffer of \p b bytes of kind \p huge took \p seconds.
  void note(bool huge, int64_t b, double seconds) {
    bytes[huge] += b;
    this->seconds[huge] += seconds;
  }
  /// The seconds a byte of kind \p huge cost so far (0: none measured).
  double cost(bool huge) const {
    return bytes[huge] > 0 ? seconds[huge] / double(bytes[huge]) : 0.0;
  }
  /// The bytes and seconds of kind \p huge so far.
  int64_t bytesOf(bool huge) const { return bytes[huge]; }
  double secondsOf(bool huge) const { return seconds[huge]; }

private:
  int64_t bytes[2] = {0, 0}; ///< [0]: 4 KiB pages, [1]: huge pages
  double seconds[2] = {0, 0};
};

/// What the adjoint runs so far have used (for --profile).
struct AdjointMemory {
  int64_t tapePeakBytes = 0;
  int64_t checkpointPeakBytes = 0;
  int64_t snapshotsTaken = 0;
  int64_t stepsRerun = 0;
  int64_t stepsReversed = 0;
  int64_t restores = 0, restoresMoved = 0; ///< moved: no copy
  /// Seconds copying dats: into snapshots, back from them, onto the tape
  /// and off it (handovers' copies of the points a loop does not write
  /// included).
  double saveSeconds = 0, restoreSeconds = 0, tapeSeconds = 0;
  /// The last automatic plan (automaticBudget) and what it was made of.
  bool planned = false;
  StepZeroPlan lastPlan;
  int64_t planCount = 0, planStepTape = 0, planMemoryBytes = 0;
  double planStepSeconds = 0, planFreshSecondsPerGiB = 0;
  /// Seconds in re-runs (the bodies of the reverse sweep's ADVANCEs).
  double rerunSeconds = 0;
  /// Snapshots on disk (--ckpt-dir): how many were written, the bytes
  /// there at most at once, written and read, and the seconds the sweep
  /// waited for the I/O thread.
  int64_t diskSnapshots = 0, diskPeakBytes = 0, diskWrittenBytes = 0,
          diskReadBytes = 0;
  double diskWaitSeconds = 0;
  /// Memory the adjoints' pool faulted in (every fresh buffer, timed),
  /// and its seconds.
  int64_t freshBytes = 0;
  double freshSeconds = 0;
  /// Of it, large buffers on huge and on 4 KiB pages (the pool measures
  /// both and takes the cheaper: PageChoice), and their seconds.
  int64_t freshHugeBytes = 0, freshSmallBytes = 0;
  double freshHugeSeconds = 0, freshSmallSeconds = 0;
  /// Automatic plans cut short while their taped steps ran, because fresh
  /// memory cost more than step 0 showed (revisePrefix); the step of the
  /// last cut (-1: none).
  int64_t planRevisions = 0, planRevisedAt = -1;
  /// A device store was registered (opd_rt_adjoint_store): what its usage
  /// hook says, OPD_STORE_* values.
  bool store = false;
  int64_t storeUsage[OPD_STORE_VALUES] = {};
};
const AdjointMemory &adjointMemory();
/// The bytes the open plans' snapshots hold in memory now.
int64_t checkpointBytesInMemory();
/// Appends --profile's `adjoint:` lines for \p adj to \p text, each at
/// most 100 columns (the profile's width, lib/exec/Report.cpp); nothing
/// when no adjoint ran.
void appendAdjointSummary(std::string &text, const AdjointMemory &adj);

/// Whether the loops run now re-run primal steps for an adjoint: the
/// body of a checkpoint schedule's ADVANCE, or a scheduled step's forward
/// run with tape before its reverse part (its first tape pop). A loop
/// prepared then is counted in its own --profile row (rerunLoopName).
bool adjointRerunning();
/// The --profile name of loop \p name's re-runs: "step (re-run)", "a+b
/// (fused, re-run)"; a derivative loop's own name ("step (adjoint)",
/// "step.b"). At
/// most 48 characters, the names' width in a 100-column profile.
std::string rerunLoopName(const std::string &name);

/// Called by every loop's prepare (block loops: `block`, with the range
/// [lo, hi) the loop runs on this rank; set loops: the elements [lo[0],
/// hi[0]) it runs on this rank): tape pushes waiting for the loop
/// (opd_tape_push_dat_overwritten) take the storage of the dats it
/// overwrites, copying only the points it does not write; the others are
/// saved by copy.
void tapeLoopPrepared(bool block, const int64_t *lo, const int64_t *hi,
                      int nargs, const opd_arg *args);

} // namespace opdc::rt
#endif
