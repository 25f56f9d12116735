// Report.cpp - The end-of-run report (--profile): the loop table with what
// exec/ adds to it, the chains' lines and the adjoint's summary.
// SPDX-License-Identifier: Apache-2.0
//
// Why here and not in core/Profile.cpp, which formats the table: the lines
// below read the state of exec/ (communication-avoiding chains, the
// adjoint's tape and checkpoints), and core/, the runtime's ground floor,
// includes nothing of exec/. opd_rt_finalize (core/Runtime.cpp) calls
// printProfile through its declaration in core/Profile.h, as it calls
// collectProfile (exec/Loop.cpp).
#include "core/Dist.h"
#include "core/Profile.h"
#include "exec/Adjoint.h"
#include "exec/CommAvoid.h"

#include "opd_rt.h"

#include <cstdio>
#include <string>

namespace opdc::rt {

void appendAdjointSummary(std::string &text, const AdjointMemory &adj) {
  // Lines of at most 100 columns (the profile's width).
  if (!adj.tapePeakBytes && !adj.snapshotsTaken)
    return;
  constexpr double MiB = 1048576.0;
  appendf(text,
          "adjoint: tape peak %.1f MiB, checkpoints peak %.1f MiB in memory, "
          "%.1f MiB on disk\n",
          double(adj.tapePeakBytes) / MiB,
          double(adj.checkpointPeakBytes) / MiB,
          double(adj.diskPeakBytes) / MiB);
  if (adj.store && (adj.storeUsage[OPD_STORE_DEVICE_PEAK] > 0 ||
                    adj.storeUsage[OPD_STORE_HOST_PEAK] > 0)) {
    // A GPU program's device store (lib/cuda/opd_cuda_tape.cuh): where the
    // tape's and snapshots' dats were.
    // Small tests' bytes in KiB, so that a spill shows.
    const int64_t *u = adj.storeUsage;
    auto size = [&](int64_t b) {
      char s[32];
      std::snprintf(s, sizeof s,
                    b > 0 && b < (1 << 20) ? "%.1f KiB" : "%.1f MiB",
                    double(b) / (b > 0 && b < (1 << 20) ? 1024.0 : MiB));
      return std::string(s);
    };
    appendf(text,
            "adjoint: device store peak %s (budget %s), %s in host memory\n",
            size(u[OPD_STORE_DEVICE_PEAK]).c_str(),
            size(u[OPD_STORE_BUDGET]).c_str(),
            size(u[OPD_STORE_HOST_PEAK]).c_str());
    appendf(text,
            "adjoint: device store spilled %s to pinned host memory, %s back "
            "ahead of use\n",
            size(u[OPD_STORE_SPILLED]).c_str(),
            size(u[OPD_STORE_FETCHED]).c_str());
  }
  appendf(text,
          "adjoint: %lld snapshots, %lld restores (%lld moved), %lld steps "
          "reversed\n",
          (long long)adj.snapshotsTaken, (long long)adj.restores,
          (long long)adj.restoresMoved, (long long)adj.stepsReversed);
  appendf(text, "adjoint: %lld steps re-run in %.3f s\n",
          (long long)adj.stepsRerun, adj.rerunSeconds);
  appendf(text,
          "adjoint: copies %.2f s to and from the tape, %.2f s to snapshots, "
          "%.2f s back\n",
          adj.tapeSeconds, adj.saveSeconds, adj.restoreSeconds);
  if (adj.diskSnapshots)
    appendf(text,
            "adjoint: disk %lld snapshots, %.1f MiB written, %.1f MiB read, "
            "%.3f s waited for\n",
            (long long)adj.diskSnapshots, double(adj.diskWrittenBytes) / MiB,
            double(adj.diskReadBytes) / MiB, adj.diskWaitSeconds);
  if (adj.planned) {
    const StepZeroPlan &p = adj.lastPlan;
    appendf(text,
            "adjoint: plan %lld of %lld steps taped, %lld snapshots; a step "
            "%.1f MiB, %.2f ms\n",
            (long long)p.taped, (long long)adj.planCount,
            (long long)p.snapshots, double(adj.planStepTape) / MiB,
            adj.planStepSeconds * 1e3);
    appendf(text,
            "adjoint: plan within %.0f MiB, %.1f MiB of it held; fresh memory "
            "%.2f s a GiB\n",
            double(adj.planMemoryBytes) / MiB, double(p.bytes) / MiB,
            adj.planFreshSecondsPerGiB);
    if (adj.planRevisions)
      appendf(text,
              "adjoint: plan cut at step %lld (%lld cuts): fresh memory "
              "dearer than step 0 showed\n",
              (long long)adj.planRevisedAt, (long long)adj.planRevisions);
  }
  if (adj.freshBytes) {
    // What each kind of page cost a GiB to fault in (0: not used).
    constexpr double GiB = 1073741824.0;
    auto perGiB = [&](int64_t bytes, double seconds) {
      return bytes > 0 ? seconds / double(bytes) * GiB : 0.0;
    };
    appendf(text,
            "adjoint: fresh memory %.1f MiB, %.2f s; a GiB: huge pages %.2f "
            "s, 4 KiB pages %.2f s\n",
            double(adj.freshBytes) / MiB, adj.freshSeconds,
            perGiB(adj.freshHugeBytes, adj.freshHugeSeconds),
            perGiB(adj.freshSmallBytes, adj.freshSmallSeconds));
  }
}

void printProfile(std::FILE *out) {
  // Every rank takes part in the reductions; rank 0 prints.
  std::string text =
      formatProfile(collectProfile(), opd_rt_threads(), dist::ranks());
  const std::string partition = dist::partitionDescription();
  if (!partition.empty())
    text += "partition: " + partition + "\n";
  text += chainProfile(); // collective
  appendAdjointSummary(text, adjointMemory());
  if (dist::printer())
    std::fputs(text.c_str(), out);
}

} // namespace opdc::rt
