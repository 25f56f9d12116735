// Print.cpp - print()/printf() of compiled programs; float formatting;
// line-buffered output.
// SPDX-License-Identifier: Apache-2.0
#include "core/Dist.h"
#include "core/Format.h"
#include "core/Runtime.h"
#include "opd_rt.h"

#include <unistd.h>

#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace opdc::rt {
namespace {
// Integral values keep a ".0" so they read as floats ("3.0", "-0.0");
// "1e+20" and "inf" are left alone.
std::string keepFloatLook(const char *text) {
  std::string s = text;
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return s;
}

std::string special(double v) {
  if (std::isnan(v))
    return "nan";
  return v < 0 ? "-inf" : "inf";
}
} // namespace

namespace {
// The shortest digits that read back to the same value (Python's repr
// rule): fixed notation when the decimal exponent is in [-4, 16), else
// scientific. "2500.0", "0.1", "1e-05", "1.5e+20".
template <typename SameValue>
std::string shortest(double v, int maxDigits, SameValue same) {
  char buf[64];
  int digits = 1;
  for (; digits < maxDigits; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
    if (same(buf))
      break;
  }
  std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
  int exponent = std::atoi(std::strchr(buf, 'e') + 1);
  if (exponent >= -4 && exponent < 16) {
    int decimals = digits - 1 - exponent;
    std::snprintf(buf, sizeof buf, "%.*f", decimals > 0 ? decimals : 0, v);
  }
  return keepFloatLook(buf);
}
} // namespace

void lineBufferOutput() {
  // stdio buffers a file or pipe fully, so a program's lines appeared only
  // at exit (or every 4 KiB): `tail -f` of a running program showed
  // nothing, and a program killed (a job's time limit, a crash in a
  // library) lost its last lines. A terminal is line-buffered already.
  // OPD_LINE_BUFFER=0 keeps stdio's full buffering (bench/oversub measures
  // what the line buffering costs a print-heavy program).
  static bool done = false;
  if (done)
    return;
  done = true;
  if (!envSwitch("OPD_LINE_BUFFER", true) || isatty(STDOUT_FILENO))
    return;
  // glibc changes only the mode for a null buffer, also after output.
  std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
}

std::string formatF64(double v) {
  if (!std::isfinite(v))
    return special(v);
  return shortest(v, 17, [v](const char *text) {
    return std::strtod(text, nullptr) == v;
  });
}

std::string formatF32(float v) {
  if (!std::isfinite(v))
    return special(double(v));
  return shortest(double(v), 9, [v](const char *text) {
    return std::strtof(text, nullptr) == v;
  });
}

} // namespace opdc::rt

using namespace opdc::rt;

namespace {
void separator(int first) {
  if (!first)
    std::fputc(' ', stdout);
}
} // namespace

extern "C" {

// Output comes from rank 0 only (every rank computes the same values).
int opd_rt_printf(const char *format, ...) {
  if (!dist::printer())
    return 0;
  va_list ap;
  va_start(ap, format);
  int n = std::vprintf(format, ap);
  va_end(ap);
  return n;
}

void opd_rt_print_i64(int64_t v, int first) {
  if (!dist::printer())
    return;
  separator(first);
  std::printf("%" PRId64, v);
}

void opd_rt_print_f64(double v, int first) {
  if (!dist::printer())
    return;
  separator(first);
  std::fputs(formatF64(v).c_str(), stdout);
}

void opd_rt_print_f32(float v, int first) {
  if (!dist::printer())
    return;
  separator(first);
  std::fputs(formatF32(v).c_str(), stdout);
}

void opd_rt_print_bool(int v, int first) {
  if (!dist::printer())
    return;
  separator(first);
  std::fputs(v ? "true" : "false", stdout);
}

void opd_rt_print_str(const char *v, int first) {
  if (!dist::printer())
    return;
  separator(first);
  std::fputs(v ? v : "", stdout);
}

void opd_rt_print_end(void) {
  if (dist::printer())
    std::fputc('\n', stdout);
}

} // extern "C"
