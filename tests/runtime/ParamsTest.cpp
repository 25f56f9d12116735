// ParamsTest.cpp - opd_rt_init: params, runtime options, --help, errors.
// SPDX-License-Identifier: Apache-2.0
#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

using opdc::rt::test::RunResult;
using opdc::rt::test::runTestProgram;
using opdc::rt::test::tempPath;
using ::testing::HasSubstr;

namespace {

TEST(Params, DefaultsWhenNoOptions) {
  RunResult r = runTestProgram({"--threads=1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "n=7 big=1 threads=1\n0.5 0.25 false mesh.h5\n");
  EXPECT_EQ(r.err, "");
}

TEST(Params, ThreadsFromEnvironmentUnlessGiven) {
  setenv("OMP_NUM_THREADS", "1", 1);
  RunResult env = runTestProgram({});
  RunResult given = runTestProgram({"--threads=3"});
  unsetenv("OMP_NUM_THREADS");
  EXPECT_THAT(env.out, HasSubstr(" threads=1\n"));
  EXPECT_THAT(given.out, HasSubstr(" threads=3\n"));
}

TEST(Params, EachTypeParses) {
  RunResult r =
      runTestProgram({"--n=-42", "--big=-9000000000", "--x=0.1", "--y=2.5e-3",
                      "--flag=true", "--name=grid.h5", "--threads=2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "n=-42 big=-9000000000 threads=2\n0.1 0.0025 true grid.h5\n");
}

TEST(Params, ValueAsTheNextArgument) {
  RunResult r = runTestProgram(
      {"--n", "-42", "--threads", "2", "--name", "grid.h5", "--y", "2.5e-3"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "n=-42 big=1 threads=2\n0.5 0.0025 false grid.h5\n");
  // An option after a valued option is not its value.
  RunResult missing = runTestProgram({"--threads", "--profile"});
  EXPECT_NE(missing.status, 0);
  EXPECT_THAT(missing.err,
              HasSubstr("option '--threads' needs a value (--threads=<N>)"));
}

TEST(Params, BoolSpellings) {
  EXPECT_THAT(runTestProgram({"--flag=1"}).out, HasSubstr(" true "));
  EXPECT_THAT(runTestProgram({"--flag=0"}).out, HasSubstr(" false "));
  EXPECT_THAT(runTestProgram({"--flag=false"}).out, HasSubstr(" false "));
  EXPECT_THAT(runTestProgram({"--flag"}).out, HasSubstr(" true "));
}

TEST(Params, LastValueWins) {
  RunResult r = runTestProgram({"--n=1", "--n=2"});
  EXPECT_THAT(r.out, HasSubstr("n=2 "));
}

TEST(Params, EmptyStringAndLimits) {
  RunResult r = runTestProgram(
      {"--name=", "--n=2147483647", "--big=9223372036854775807", "--x=1e-50"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("n=2147483647 big=9223372036854775807"));
  EXPECT_THAT(r.out, HasSubstr("0.0 0.25 false \n"));
}

struct BadCase {
  std::vector<std::string> args;
  std::string message;
};

class ParamsBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(ParamsBad, FailsWithMessage) {
  RunResult r = runTestProgram(GetParam().args);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "testprog: error: " + GetParam().message + "\n");
}

INSTANTIATE_TEST_SUITE_P(
    Values, ParamsBad,
    ::testing::Values(
        BadCase{{"--n=abc"},
                "invalid value 'abc' for option '--n': expected an i32 "
                "integer"},
        BadCase{{"--n=12x"},
                "invalid value '12x' for option '--n': expected an i32 "
                "integer"},
        BadCase{{"--n="},
                "invalid value '' for option '--n': expected an i32 integer"},
        BadCase{{"--n=3000000000"},
                "value '3000000000' for option '--n' is out of range for i32"},
        BadCase{{"--big=1.5"},
                "invalid value '1.5' for option '--big': expected an i64 "
                "integer"},
        BadCase{{"--big=99999999999999999999"},
                "value '99999999999999999999' for option '--big' is out of "
                "range for i64"},
        BadCase{{"--x=1e50"},
                "value '1e50' for option '--x' is out of range for f32"},
        BadCase{{"--x=fast"},
                "invalid value 'fast' for option '--x': expected an f32 "
                "number"},
        BadCase{{"--y=1e999"},
                "value '1e999' for option '--y' is out of range for f64"},
        BadCase{{"--y= 1"},
                "invalid value ' 1' for option '--y': expected an f64 number"},
        BadCase{{"--flag=yes"},
                "invalid value 'yes' for option '--flag': expected a bool "
                "(true, false, 1 or 0)"},
        BadCase{{"--n"}, "option '--n' needs a value (--n=<i32>)"},
        BadCase{{"--bogus=1"}, "unknown option '--bogus'; see --help"},
        BadCase{{"--bogus"}, "unknown option '--bogus'; see --help"},
        BadCase{{"positional"},
                "unexpected argument 'positional'; options are --name=value "
                "(or --name value), see --help"},
        BadCase{{"-n=3"},
                "unexpected argument '-n=3'; options are --name=value (or "
                "--name value), see --help"},
        // A value after a bool param is not taken: a bare bool is true.
        BadCase{{"--flag", "false"},
                "unexpected argument 'false'; options are --name=value (or "
                "--name value), see --help"},
        BadCase{{"--threads=0"},
                "value '0' for option '--threads' is out of range: expected 1 "
                "to 4096"},
        BadCase{{"--threads=two"},
                "invalid value 'two' for option '--threads': expected a "
                "positive integer"},
        BadCase{{"--threads"},
                "option '--threads' needs a value (--threads=<N>)"},
        BadCase{{"--profile=yes"}, "option '--profile' takes no value"},
        BadCase{{"--check-fp=yes"},
                "invalid value 'yes' for option '--check-fp': expected a "
                "bool (true, false, 1 or 0)"},
        BadCase{{"--renumber=metis"},
                "invalid value 'metis' for option '--renumber': expected "
                "'auto', 'none' or 'rcm' (--renumber=rcm)"},
        BadCase{{"--renumber="},
                "invalid value '' for option '--renumber': expected 'auto', "
                "'none' or 'rcm' (--renumber=rcm)"},
        BadCase{{"--renumber"},
                "option '--renumber' needs a value: 'auto', 'none' or "
                "'rcm' (--renumber=rcm)"},
        BadCase{{"--plan=metis"},
                "invalid value 'metis' for option '--plan': expected "
                "'colour' or 'super' (--plan=super)"},
        BadCase{{"--plan"},
                "option '--plan' needs a value: 'colour' or "
                "'super' (--plan=super)"},
        BadCase{{"--help", "--bogus"},
                "unknown option '--bogus'; see --help"}));

TEST(Params, PlanFromEnvironmentUnlessGiven) {
  // The "loops" mode's profile names the plan of its increment loop.
  setenv("OPD_PLAN", "colour", 1);
  RunResult env = runTestProgram({"--mode=loops", "--profile"});
  RunResult given = runTestProgram({"--mode=loops", "--profile", "--plan=super"});
  setenv("OPD_PLAN", "bad", 1);
  RunResult bad = runTestProgram({});
  unsetenv("OPD_PLAN");
  EXPECT_THAT(env.out, HasSubstr("\nplan: increment: colour, "));
  EXPECT_THAT(given.out, HasSubstr("\nplan: increment: super, "));
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.err, "testprog: error: invalid value 'bad' for environment "
                     "variable OPD_PLAN: expected 'colour' or 'super' "
                     "(--plan=super)\n");
}

// --deck=FILE: a clover.in-style input deck.
std::string writeDeck(const std::string &name, const std::string &text) {
  std::string path = tempPath(name);
  std::ofstream(path) << text;
  return path;
}

TEST(ParamsDeck, SetsParamsRecordsAndWords) {
  std::string deck = writeDeck(
      "good.in", "*clover\n"
                 " ! a comment line\n"
                 " n=12 big = 5\n"
                 " y 0.125   # KEY VALUE without '='\n"
                 " flag\n"
                 " name=grid.h5\n"
                 " state 2 y=2.5\n"
                 " mode=deck\n"
                 " shape=round\n"
                 "*endclover\n");
  RunResult r = runTestProgram({"--deck=" + deck});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "n=12 big=5 y=0.125 flag=1 name=grid.h5 state2_y=2.5 "
                   "round=1\n");
}

TEST(ParamsDeck, LaterOptionsOverrideIt) {
  std::string deck = writeDeck("override.in", "n=12\nmode=deck\n");
  RunResult r = runTestProgram({"--deck=" + deck, "--n=3"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("n=3 "));
}

TEST(ParamsDeck, ErrorsNameFileAndLine) {
  struct Case {
    std::string text, message;
  };
  std::vector<Case> cases = {
      {"n=1\n\n bogus=3\n", ":3: unknown key 'bogus': the program has no "
                             "param 'bogus' (nor a bool param 'bogus_3'); "
                             "see --help"},
      {"n=abc\n", ":1: invalid value 'abc' for key 'n': expected an i32 "
                  "integer"},
      {"n=\n", ":1: key 'n' has '=' but no value"},
      {"n\n", ":1: key 'n' needs a value (n=<i32>)"},
      {"= 3\n", ":1: '=' without a key before it"},
      {"shape=square\n", ":1: unknown key 'shape': the program has no param "
                         "'shape' (nor a bool param 'shape_square'); see "
                         "--help"},
      {"state 2 z=1\n", ":1: unknown key 'state2_z': the program has no "
                        "param 'state2_z' (nor a bool param 'state2_z_1'); "
                        "see --help"},
  };
  int i = 0;
  for (const Case &c : cases) {
    std::string deck = writeDeck("bad" + std::to_string(i++) + ".in", c.text);
    RunResult r = runTestProgram({"--deck=" + deck});
    EXPECT_EQ(r.status, 1) << c.text;
    EXPECT_EQ(r.err, "testprog: error: " + deck + c.message + "\n") << c.text;
  }
  RunResult missing = runTestProgram({"--deck=" + tempPath("none.in")});
  EXPECT_EQ(missing.status, 1);
  EXPECT_THAT(missing.err, HasSubstr("cannot open deck '"));
  RunResult empty = runTestProgram({"--deck"});
  EXPECT_EQ(empty.err, "testprog: error: option '--deck' needs a file name "
                       "(--deck=<FILE>)\n");
}

TEST(Params, DeviceTapeMemoryTakesMiBOrASuffix) {
  // A CPU program accepts the GPU adjoints' budget and ignores it.
  for (const char *ok : {"512", "64K", "2G", "0", "8M"})
    EXPECT_EQ(
        runTestProgram({std::string("--device-tape-memory=") + ok}).status, 0)
        << ok;
  for (const char *bad : {"", "x", "-1", "12T", "3KB"}) {
    RunResult r = runTestProgram({std::string("--device-tape-memory=") + bad});
    EXPECT_EQ(r.status, 1) << bad;
    EXPECT_EQ(r.err, "testprog: error: option '--device-tape-memory' needs a "
                     "whole number of MiB >= 0, or of KiB or GiB with a "
                     "suffix K or G (--device-tape-memory=512, 64K, 2G)\n")
        << bad;
  }
}

TEST(Params, HelpListsParamsAndRuntimeOptions) {
  RunResult r = runTestProgram({"--n=3", "--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("usage: testprog [options]\n"));
  // Defaults as declared, not the values given beside --help.
  // The param's comment (opd_param_desc::doc), wrapped to 80 columns.
  EXPECT_THAT(r.out, HasSubstr("  --n=<i32>               number of cells "
                               "along each side of the square\n"
                               "                          (default: 7)\n"));
  EXPECT_THAT(r.out, HasSubstr("  --big=<i64>             default: 1\n"));
  EXPECT_THAT(r.out, HasSubstr("  --x=<f32>               default: 0.5\n"));
  EXPECT_THAT(r.out, HasSubstr("  --y=<f64>               default: 0.25\n"));
  EXPECT_THAT(r.out, HasSubstr("  --flag=<bool>           default: false\n"));
  EXPECT_THAT(r.out,
              HasSubstr("  --name=<str>            default: \"mesh.h5\"\n"));
  EXPECT_THAT(r.out, HasSubstr("runtime options:\n  --threads=<N> "));
  EXPECT_THAT(r.out, HasSubstr("  --profile "));
  EXPECT_THAT(r.out, HasSubstr("  --check-fp "));
  EXPECT_THAT(r.out, HasSubstr("  --deck=<FILE> "));
  EXPECT_THAT(r.out, HasSubstr("  --help "));
}

TEST(Params, RuntimeFailFlushesOutputFirst) {
  RunResult r = runTestProgram({"--mode=fail"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "before\n");
  EXPECT_EQ(r.err, "testprog: error: something went wrong\n");
}

} // namespace
