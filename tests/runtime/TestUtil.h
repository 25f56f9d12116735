// TestUtil.h - Helpers of the runtime tests: subprocesses, temp files.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_TESTS_RUNTIME_TESTUTIL_H
#define OPDC_TESTS_RUNTIME_TESTUTIL_H

#include "core/Objects.h"

#include <random>
#include <string>
#include <vector>

namespace opdc::rt::test {

struct RunResult {
  int status = -1; ///< exit status, or -1 when killed by a signal
  std::string out, err;
};

/// Runs `program` with `args` (no shell), capturing stdout and stderr.
RunResult runProgram(const std::string &program,
                     const std::vector<std::string> &args);

/// Runs the helper program tests/runtime/TestProgram.cpp.
RunResult runTestProgram(const std::vector<std::string> &args);

/// A fresh path in the test's temporary directory.
std::string tempPath(const std::string &name);

/// Busy for \p ms milliseconds (a loop body that takes time without work).
void spinFor(int ms);

/// A map from \p from to \p to of \p arity with uniformly random targets
/// (the same for a given seed).
inline opd_map *randomMap(const char *name, opd_set *from, opd_set *to,
                          int arity, uint64_t seed) {
  opd_map *m = opd_map_create(name, from, to, arity);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> pick(0, int32_t(to->size - 1));
  for (int64_t i = 0; i < from->size * arity; ++i)
    m->data[i] = pick(rng);
  return m;
}

} // namespace opdc::rt::test
#endif
