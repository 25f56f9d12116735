// Profile.cpp - Formats the per-loop profile table (exec/Report.cpp prints
// it with what exec/ adds).
// SPDX-License-Identifier: Apache-2.0
#include "core/Profile.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>

namespace opdc::rt {
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

namespace {

void appendRow(std::string &out, int width, const ProfileRow &r, int ranks) {
  double avgMs = r.calls > 0 ? r.seconds * 1e3 / double(r.calls) : 0.0;
  double gbs = r.seconds > 0 ? r.bytes / r.seconds * 1e-9 : 0.0;
  appendf(out, "%-*s %10" PRId64 " %12.6f %12.4f %10.2f", width, r.name.c_str(),
          r.calls, r.seconds, avgMs, gbs);
  if (ranks > 1) {
    double kernelGbs =
        r.kernelSeconds > 0 ? r.bytes / r.kernelSeconds * 1e-9 : 0.0;
    appendf(out, " %12.6f %10" PRId64 " %10.3f %10.6f %10.2f", r.secondsAvg,
            r.messages, r.exchangeBytes * 1e-6, r.exchangeSeconds, kernelGbs);
  }
  appendf(out, "\n");
}
} // namespace

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

} // namespace opdc::rt
