// Runtime.cpp - Program lifecycle, errors, timers, threads and scratch.
// SPDX-License-Identifier: Apache-2.0
#include "core/Runtime.h"

#include "core/Dist.h"
#include "core/Memory.h"
#include "core/Profile.h"
#include "opd_rt.h"

#include <hdf5.h>
#include <omp.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

namespace opdc::rt {
namespace {
std::string &programNameStorage() {
  static std::string name = "opd";
  return name;
}
bool profileOn = false;

struct Scratch {
  void *data = nullptr;
  std::size_t capacity = 0;
  std::size_t requested = 0; ///< bytes of the last opd_rt_scratch call
};
/// Slot 0: opd_rt_scratch; slot k: loop k of a skewed sweep.
std::vector<Scratch> scratches(1);
} // namespace

const char *programName() { return programNameStorage().c_str(); }
void setProgramName(const std::string &name) {
  programNameStorage() = name.empty() ? "opd" : name;
}

namespace {
int capturing = 0;
} // namespace
CaptureFailures::CaptureFailures() { ++capturing; }
CaptureFailures::~CaptureFailures() { --capturing; }
bool capturingFailures() { return capturing > 0; }

void printError(const std::string &message) {
  // Program output first, so the error follows it when both go to a file.
  std::fflush(stdout);
  std::fprintf(stderr, "%s: error: %s%s\n", programName(),
               dist::rankPrefix().c_str(), message.c_str());
  std::fflush(stderr);
}

void fail(const std::string &message) {
  if (capturing > 0)
    throw Failure{message};
  printError(message);
  // Status 1 without core or abort; exit() also flushes stdio. With many
  // ranks, MPI_Abort ends the others too, so none waits forever.
  dist::abortJob(1);
}

void failf(const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  va_list copy;
  va_copy(copy, ap);
  int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::vector<char> text(n > 0 ? std::size_t(n) + 1 : 1, '\0');
  std::vsnprintf(text.data(), text.size(), format, ap);
  va_end(ap);
  fail(text.data());
}

const char *scalarName(int type) {
  switch (type) {
  case OPD_BOOL:
    return "bool";
  case OPD_I32:
    return "i32";
  case OPD_I64:
    return "i64";
  case OPD_F32:
    return "f32";
  case OPD_F64:
    return "f64";
  case OPD_STR:
    return "str";
  }
  return "<unknown type>";
}

int scalarBytes(int type) {
  switch (type) {
  case OPD_BOOL:
    return 1;
  case OPD_I32:
  case OPD_F32:
    return 4;
  case OPD_I64:
  case OPD_F64:
    return 8;
  }
  failf("internal error: no element type %d for a dat", type);
}

namespace {
PartitionMethod partitioning = PartitionMethod::PTScotch;
}
PartitionMethod partitionMethod() { return partitioning; }
void setPartitionMethod(PartitionMethod m) { partitioning = m; }

bool envSwitch(const char *name, bool fallback) {
  const char *env = std::getenv(name);
  if (!env || !*env)
    return fallback;
  if (!std::strcmp(env, "1"))
    return true;
  if (!std::strcmp(env, "0"))
    return false;
  failf("invalid value '%s' for environment variable %s: expected 1 or 0", env,
        name);
}

SimdLevel simdLimit() {
  const char *env = std::getenv("OPD_SIMD");
  if (!env || !*env || !std::strcmp(env, "avx512"))
    return SimdLevel::AVX512;
  if (!std::strcmp(env, "avx2"))
    return SimdLevel::AVX2;
  if (!std::strcmp(env, "sse2"))
    return SimdLevel::SSE2;
  failf("invalid value '%s' for environment variable OPD_SIMD: expected "
        "sse2, avx2 or avx512",
        env);
}

int64_t envInteger(const char *name, int64_t fallback, int64_t lo, int64_t hi,
                   const char *expected) {
  const char *env = std::getenv(name);
  if (!env || !*env)
    return fallback;
  char *end = nullptr;
  errno = 0;
  const long long v = std::strtoll(env, &end, 10);
  if (*end != '\0' || errno == ERANGE || v < lo || v > hi)
    failf("invalid value '%s' for environment variable %s: expected %s", env,
          name, expected);
  return int64_t(v);
}

bool profileRequested() { return profileOn; }
void setProfileRequested(bool on) { profileOn = on; }

void silenceHDF5() {
  static bool done = false;
  if (done)
    return;
  // Errors become our messages (each HDF5 call is checked); HDF5's own
  // stack dumps would only confuse users.
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  done = true;
}

} // namespace opdc::rt

using namespace opdc::rt;

extern "C" {

int opd_rt_finalize(void) {
  if (profileRequested())
    printProfile(stdout);
  std::fflush(stdout);
  releaseLoops();
  releaseObjects();
  for (Scratch &sc : scratches)
    freeAligned(sc.data);
  scratches.assign(1, Scratch());
  tridiag::releaseSolverScratch();
  setProfileRequested(false);
  dist::finalize();
  return 0;
}

double opd_rt_wtime(void) {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

int opd_rt_threads(void) { return omp_get_max_threads(); }

void opd_rt_fail(const char *message) {
  fail(message ? message : "unknown error");
}

// "PROG: KIND: message" on stderr, after the program's output so far.
static void report(const char *kind, const char *format, va_list ap) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s: ", programName(), kind);
  std::vfprintf(stderr, format, ap);
  std::fputc('\n', stderr);
  std::fflush(stderr);
}

void opd_rt_fail_allf(const char *format, ...) {
  std::fflush(stdout);
  if (dist::printer()) {
    va_list ap;
    va_start(ap, format);
    report("error", format, ap);
    va_end(ap);
    dist::abortJob(1);
  }
  // The other ranks wait for rank 0, whose abort ends them, so the message
  // is printed once and is not cut short.
  dist::barrier();
  dist::abortJob(1);
}

void opd_rt_warnf(const char *format, ...) {
  if (!dist::printer())
    return;
  va_list ap;
  va_start(ap, format);
  report("warning", format, ap);
  va_end(ap);
}

void opd_rt_fail_outside(const char *message, int64_t index, int32_t dim,
                         int64_t first, int64_t last) {
  failf("%s at index %lld in dimension %d, outside its halo (valid indices "
        "%lld .. %lld)",
        message ? message : "loop", (long long)index, int(dim),
        (long long)first, (long long)last);
}
} // extern "C"

namespace opdc::rt {
void *scratchInUse(std::size_t &bytes) {
  const Scratch &scratch = scratches[0];
  bytes = scratch.data ? scratch.requested : 0;
  return scratch.data;
}
} // namespace opdc::rt

extern "C" {

void *opd_rt_scratch(int64_t bytes) { return opd_rt_scratch_slot(bytes, 0); }

void *opd_rt_scratch_slot(int64_t bytes, int32_t slot) {
  if (bytes < 0 || slot < 0)
    failf("internal error: scratch of %lld bytes in slot %d",
          (long long)bytes, int(slot));
  if (std::size_t(slot) >= scratches.size())
    scratches.resize(std::size_t(slot) + 1);
  Scratch &scratch = scratches[std::size_t(slot)];
  // Grow only: after the largest request, no loop allocates again.
  if (std::size_t(bytes) > scratch.capacity || !scratch.data) {
    std::size_t want =
        std::size_t(bytes) < Alignment ? Alignment : std::size_t(bytes);
    want = (want + Alignment - 1) / Alignment * Alignment;
    freeAligned(scratch.data);
    scratch.data = allocRaw(want, "reduction scratch");
    scratch.capacity = want;
  }
  scratch.requested = std::size_t(bytes);
  return scratch.data;
}

} // extern "C"
