// ProfileTest.cpp - The --profile table.
// SPDX-License-Identifier: Apache-2.0
#include "core/Profile.h"
#include "TestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

using namespace opdc::rt;
using ::testing::HasSubstr;

namespace {

TEST(Profile, FixedColumns) {
  std::vector<ProfileRow> rows = {{"res_calc", 2000, 1.5, 3.0e9},
                                  {"update", 2000, 0.5, 2.0e9}};
  std::string text = formatProfile(rows, 4);
  EXPECT_EQ(text, "\nprofile (4 threads)\n"
                  "loop          calls      total s       avg ms       GB/s\n"
                  "res_calc       2000     1.500000       0.7500       2.00\n"
                  "update         2000     0.500000       0.2500       4.00\n"
                  "--------------------------------------------------------\n"
                  "total          4000     2.000000       0.5000       2.50\n");
}

TEST(Profile, RanksColumns) {
  // With several ranks: max over ranks in "total s", then the average over
  // ranks, halo messages, megabytes sent and time in exchanges.
  ProfileRow a{"res_calc", 100, 2.0, 4.0e9};
  a.secondsAvg = 1.5;
  a.messages = 398;
  a.exchangeBytes = 2.5e6;
  a.exchangeSeconds = 0.25;
  a.kernelSeconds = 1.6; // not 2.0 - 0.25: another rank waited less
  ProfileRow b{"update", 100, 1.0, 1.0e9};
  b.secondsAvg = 1.0;
  b.kernelSeconds = 1.0;
  std::string text = formatProfile({a, b}, 1, 2);
  EXPECT_EQ(text,
            "\nprofile (2 ranks x 1 thread; total s: max over ranks)\n"
            "loop          calls      total s       avg ms       GB/s"
            "        avg s       msgs    MB sent     exch s  kern GB/s\n"
            "res_calc        100     2.000000      20.0000       2.00"
            "     1.500000        398      2.500   0.250000       2.50\n"
            "update          100     1.000000      10.0000       1.00"
            "     1.000000          0      0.000   0.000000       1.00\n" +
                std::string(111, '-') +
                "\n"
                "total           200     3.000000      15.0000       1.67"
                "     2.500000        398      2.500   0.250000       1.92\n");
}

TEST(Profile, ProgramPrintsTableAfterItsOutput) {
  auto r = test::runTestProgram({"--mode=loops", "--profile", "--threads=2"});
  ASSERT_EQ(r.status, 0) << r.err;
  // Three times a = 2a + degree from a = 1: 8 + 7 * degree per node, and
  // the degrees add up to 2 * 9999: 80000 + 7 * 19998 = 219986.
  EXPECT_EQ(r.out.substr(0, r.out.find('\n') + 1), "total 219986.0\n");
  EXPECT_THAT(r.out, HasSubstr("\nprofile (2 threads)\nloop "));
  std::istringstream lines(r.out);
  std::string line;
  std::vector<std::string> names;
  std::vector<double> seconds;
  bool inTable = false;
  while (std::getline(lines, line)) {
    if (line.rfind("loop ", 0) == 0) {
      inTable = true;
      continue;
    }
    if (!inTable || line.empty() || line[0] == '-')
      continue;
    std::istringstream fields(line);
    std::string name;
    long long calls;
    double total;
    fields >> name >> calls >> total;
    names.push_back(name);
    seconds.push_back(total);
    if (name == "scale" || name == "increment") {
      EXPECT_EQ(calls, 3) << line;
    }
    if (name == "sum") {
      EXPECT_EQ(calls, 1) << line;
    }
    if (name == "total") {
      EXPECT_EQ(calls, 7) << line;
      break; // the plan lines follow
    }
  }
  ASSERT_EQ(names.size(), 4u) << r.out;
  EXPECT_EQ(names.back(), "total");
  EXPECT_GE(seconds[0], seconds[1]);
  EXPECT_GE(seconds[1], seconds[2]);
}

TEST(Profile, PlanLinesAfterTheTotal) {
  std::vector<ProfileRow> rows = {{"res_calc", 2000, 1.5, 3.0e9},
                                  {"update", 2000, 0.5, 2.0e9}};
  rows[0].plan = "colour, 4 colours";
  std::string text = formatProfile(rows, 4);
  EXPECT_THAT(text, ::testing::EndsWith(
                        "total          4000     2.000000       0.5000       "
                        "2.50\nplan: res_calc: colour, 4 colours\n"));
  EXPECT_THAT(formatProfile(rows, 1, 2),
              ::testing::EndsWith("plan: res_calc: colour, 4 colours "
                                  "(rank 0)\n"));
}

TEST(Profile, ProgramNamesThePlanOfItsIndirectLoop) {
  // The test program's "increment" loop increments nodes through a map;
  // super-blocks by default.
  auto colour =
      test::runTestProgram({"--mode=loops", "--profile", "--plan=colour"});
  ASSERT_EQ(colour.status, 0) << colour.err;
  EXPECT_THAT(colour.out, ::testing::ContainsRegex(
                              "\nplan: increment: colour, [0-9]+ colours?\n"));
  auto super = test::runTestProgram({"--mode=loops", "--profile"});
  ASSERT_EQ(super.status, 0) << super.err;
  EXPECT_EQ(super.out.substr(0, super.out.find('\n') + 1), "total 219986.0\n");
  EXPECT_THAT(super.out,
              ::testing::ContainsRegex("\nplan: increment: super, [0-9]+ "
                                       "super-blocks?, [0-9.]+ % of [0-9]+ "
                                       "elements cross \\(in [0-9]+ "
                                       "colours?\\)\n"));
}

TEST(Profile, NoTableWithoutTheOption) {
  auto r = test::runTestProgram({"--mode=loops"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "total 219986.0\n");
}

} // namespace
