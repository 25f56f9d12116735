// TestMain.cpp - main() of opd_rt_tests and the shared test helpers.
// SPDX-License-Identifier: Apache-2.0
#include "TestUtil.h"

#include "opd_rt.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace opdc::rt::test {
namespace {
std::string slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
} // namespace

std::string tempPath(const std::string &name) {
  const ::testing::TestInfo *info =
      ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test =
      info ? std::string(info->test_suite_name()) + "." + info->name()
           : "global";
  for (char &c : test)
    if (c == '/')
      c = '_';
  // In the working directory (the build tree), without the pid: a
  // threadsafe death test re-runs the test body in a child process, which
  // must arrive at the same paths as the parent that checks its messages.
  mkdir("opd_rt_tmp", 0755);
  return "opd_rt_tmp/" + test + "_" + name;
}

RunResult runProgram(const std::string &program,
                     const std::vector<std::string> &args) {
  std::string outPath = tempPath("stdout"), errPath = tempPath("stderr");
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    int out = open(outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    std::vector<char *> argv;
    argv.push_back(const_cast<char *>(program.c_str()));
    for (const std::string &a : args)
      argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    execv(program.c_str(), argv.data());
    _exit(127);
  }
  RunResult r;
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status))
    r.status = WEXITSTATUS(status);
  r.out = slurp(outPath);
  r.err = slurp(errPath);
  std::remove(outPath.c_str());
  std::remove(errPath.c_str());
  return r;
}

RunResult runTestProgram(const std::vector<std::string> &args) {
  return runProgram(OPD_RT_TEST_PROGRAM, args);
}

void spinFor(int ms) {
  const double until = opd_rt_wtime() + ms * 1e-3;
  while (opd_rt_wtime() < until) {
  }
}

} // namespace opdc::rt::test

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Death tests re-run the binary instead of forking a process that may
  // hold OpenMP worker threads.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  return RUN_ALL_TESTS();
}
