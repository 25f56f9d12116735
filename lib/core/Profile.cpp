// Profile.cpp - Formats the per-loop profile table.
// SPDX-License-Identifier: Apache-2.0
#include "core/Profile.h"

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

void appendRow(std::string &out, int width, const std::string &name,
               int64_t calls, double seconds, double bytes) {
  double avgMs = calls > 0 ? seconds * 1e3 / double(calls) : 0.0;
  double gbs = seconds > 0 ? bytes / seconds * 1e-9 : 0.0;
  appendf(out, "%-*s %10" PRId64 " %12.6f %12.4f %10.2f\n", width, name.c_str(),
          calls, seconds, avgMs, gbs);
}
} // namespace

std::string formatProfile(const std::vector<ProfileRow> &rows, int threads) {
  int width = 5; // "total"
  for (const ProfileRow &r : rows)
    width = std::max(width, int(r.name.size()));
  std::string out;
  appendf(out, "\nprofile (%d thread%s)\n", threads, threads == 1 ? "" : "s");
  appendf(out, "%-*s %10s %12s %12s %10s\n", width, "loop", "calls", "total s",
          "avg ms", "GB/s");
  int64_t calls = 0;
  double seconds = 0, bytes = 0;
  for (const ProfileRow &r : rows) {
    appendRow(out, width, r.name, r.calls, r.seconds, r.bytes);
    calls += r.calls;
    seconds += r.seconds;
    bytes += r.bytes;
  }
  appendf(out, "%s\n", std::string(std::size_t(width) + 48, '-').c_str());
  appendRow(out, width, "total", calls, seconds, bytes);
  return out;
}

void printProfile(std::FILE *out) {
  std::string text = formatProfile(collectProfile(), opd_rt_threads());
  std::fputs(text.c_str(), out);
}

} // namespace opdc::rt
