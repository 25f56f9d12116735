// Print.cpp - print()/printf() of compiled programs; float formatting.
// SPDX-License-Identifier: Apache-2.0
#include "core/Format.h"
#include "opd_rt.h"

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

std::string formatF64(double v) {
  if (!std::isfinite(v))
    return special(v);
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  return keepFloatLook(buf);
}

std::string formatF32(float v) {
  if (!std::isfinite(v))
    return special(double(v));
  char buf[40];
  for (int precision = 1; precision <= 9; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, double(v));
    if (std::strtof(buf, nullptr) == v)
      break;
  }
  return keepFloatLook(buf);
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

int opd_rt_printf(const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  int n = std::vprintf(format, ap);
  va_end(ap);
  return n;
}

void opd_rt_print_i64(int64_t v, int first) {
  separator(first);
  std::printf("%" PRId64, v);
}

void opd_rt_print_f64(double v, int first) {
  separator(first);
  std::fputs(formatF64(v).c_str(), stdout);
}

void opd_rt_print_f32(float v, int first) {
  separator(first);
  std::fputs(formatF32(v).c_str(), stdout);
}

void opd_rt_print_bool(int v, int first) {
  separator(first);
  std::fputs(v ? "true" : "false", stdout);
}

void opd_rt_print_str(const char *v, int first) {
  separator(first);
  std::fputs(v ? v : "", stdout);
}

void opd_rt_print_end(void) { std::fputc('\n', stdout); }

} // extern "C"
