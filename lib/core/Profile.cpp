// Profile.cpp - Formats the per-loop profile table.
// SPDX-License-Identifier: Apache-2.0
#include "core/Profile.h"
#include "exec/Adjoint.h"
#include "exec/CommAvoid.h"

#include "core/Dist.h"

#include "opd_rt.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>

namespace opdc::rt {
namespace {
void appendf(std::string &out, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
void appendf(std::string &out, const char *format, ...) {
  char line[512];
  va_list ap;
  va_start(ap, format);
  int n = std::vsnprintf(line, sizeof line, format, ap);
  va_end(ap);
  if (n < 0)
    return;
  if (std::size_t(n) < sizeof line) {
    out.append(line, std::size_t(n));
    return;
  }
  std::string big(std::size_t(n) + 1, '\0');
  va_start(ap, format);
  std::vsnprintf(big.data(), big.size(), format, ap);
  va_end(ap);
  out.append(big.data(), std::size_t(n));
}

void appendRow(std::string &out, int width, const ProfileRow &r, int ranks) {
  double avgMs = r.calls > 0 ? r.seconds * 1e3 / double(r.calls) : 0.0;
  double gbs = r.seconds > 0 ? r.bytes / r.seconds * 1e-9 : 0.0;
  appendf(out, "%-*s %10" PRId64 " %12.6f %12.4f %10.2f", width,
          r.name.c_str(), r.calls, r.seconds, avgMs, gbs);
  if (ranks > 1) {
    double kernelGbs =
        r.kernelSeconds > 0 ? r.bytes / r.kernelSeconds * 1e-9 : 0.0;
    appendf(out, " %12.6f %10" PRId64 " %10.3f %10.6f %10.2f", r.secondsAvg,
            r.messages, r.exchangeBytes * 1e-6, r.exchangeSeconds, kernelGbs);
  }
  appendf(out, "\n");
}
} // namespace

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
  }
}

std::string formatProfile(const std::vector<ProfileRow> &rows, int threads,
                          int ranks) {
  int width = 5; // "total"
  for (const ProfileRow &r : rows)
    width = std::max(width, int(r.name.size()));
  std::string out;
  if (ranks > 1)
    appendf(out,
            "\nprofile (%d ranks x %d thread%s; total s: max over ranks)\n",
            ranks, threads, threads == 1 ? "" : "s");
  else
    appendf(out, "\nprofile (%d thread%s)\n", threads, threads == 1 ? "" : "s");
  appendf(out, "%-*s %10s %12s %12s %10s", width, "loop", "calls", "total s",
          "avg ms", "GB/s");
  if (ranks > 1)
    appendf(out, " %12s %10s %10s %10s %10s", "avg s", "msgs", "MB sent",
            "exch s", "kern GB/s");
  appendf(out, "\n");
  ProfileRow total{"total", 0, 0, 0};
  for (const ProfileRow &r : rows) {
    appendRow(out, width, r, ranks);
    total.calls += r.calls;
    total.seconds += r.seconds;
    total.bytes += r.bytes;
    total.secondsAvg += r.secondsAvg;
    total.messages += r.messages;
    total.exchangeBytes += r.exchangeBytes;
    total.exchangeSeconds += r.exchangeSeconds;
    total.kernelSeconds += r.kernelSeconds;
  }
  appendf(
      out, "%s\n",
      std::string(std::size_t(width) + (ranks > 1 ? 103 : 48), '-').c_str());
  appendRow(out, width, total, ranks);
  for (const ProfileRow &r : rows) {
    if (r.plan.empty())
      continue;
    std::string body;
    if (r.sweepCalls > 0)
      appendf(body,
              "; its body %.3f s in %lld sweeps (%.2f ms a sweep, "
              "thread-seconds)",
              r.sweepSeconds, (long long)r.sweepCalls,
              r.sweepSeconds / double(r.sweepCalls) * 1e3);
    appendf(out, "plan: %s: %s%s%s\n", r.name.c_str(), r.plan.c_str(),
            body.c_str(), ranks > 1 ? " (rank 0)" : "");
  }
  return out;
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
