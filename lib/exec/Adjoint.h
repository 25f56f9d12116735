// Adjoint.h - The tape and checkpoint plans behind compiler-built adjoints
// (internal to the runtime; the C ABI is opd_tape_* / opd_ckpt_* in
// opd_rt.h).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_LIB_EXEC_ADJOINT_H
#define OPDC_LIB_EXEC_ADJOINT_H

#include "opd_rt.h"

#include <cstdint>
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

/// Bytes the snapshots of one checkpointed loop may take on this rank:
/// OPD_CKPT_MEMORY (MiB) from the environment, else a quarter of the
/// physical memory divided among the ranks.
int64_t snapshotBudget();
/// The budget of a checkpointed loop that begins now, whose fewest
/// snapshots (defaultSnapshots) take \p leastBytes: snapshotBudget() when
/// OPD_CKPT_MEMORY or setSnapshotBudget set it; else the memory the
/// adjoints' buffers already hold, doubled, at least \p leastBytes and
/// 1 GiB, at most snapshotBudget(). A snapshot in memory touched for the first
/// time costs the kernel's page faults (0.4-2 s a GiB measured, against about
/// 0.025 s a GiB to stream memory that is there), many re-runs' worth, so
/// the first call takes the fewest snapshots and later calls grow into the
/// budget as the pool keeps what earlier calls touched.
int64_t snapshotBudgetNow(int64_t leastBytes);
/// Sets snapshotBudget() to \p bytes (tests; -1: back to the environment's
/// or the memory's).
void setSnapshotBudget(int64_t bytes);

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
};
const AdjointMemory &adjointMemory();

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
