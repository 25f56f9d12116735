// TestUtil.h - Helpers of the runtime tests: subprocesses, temp files.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_TESTS_RUNTIME_TESTUTIL_H
#define OPDC_TESTS_RUNTIME_TESTUTIL_H

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

} // namespace opdc::rt::test
#endif
