// PassPipelineTest.cpp - The pass registry, --passes parsing, statistics
// and the pipeline's verifier and printing.
// SPDX-License-Identifier: Apache-2.0
#include "passes/PassPipeline.h"

#include "ir/IR.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace opdc;

TEST(PassPipeline, RegistryHasInline) {
  const PassInfo *p = findPass("inline");
  ASSERT_NE(p, nullptr);
  EXPECT_STREQ(p->name, "inline");
  EXPECT_EQ(findPass("no-such-pass"), nullptr);
}

TEST(PassPipeline, ParsesListsInOrder) {
  std::string error;
  auto empty = parsePassList("", error);
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
  auto two = parsePassList("inline,inline", error);
  ASSERT_TRUE(two);
  ASSERT_EQ(two->size(), 2u);
  EXPECT_STREQ((*two)[0]->name, "inline");
}

TEST(PassPipeline, RejectsUnknownAndEmptyNames) {
  std::string error;
  EXPECT_FALSE(parsePassList("inline,nope", error));
  EXPECT_NE(error.find("unknown pass 'nope'"), std::string::npos);
  EXPECT_NE(error.find("known passes: inline"), std::string::npos);
  EXPECT_FALSE(parsePassList("inline,", error));
  EXPECT_NE(error.find("empty pass name"), std::string::npos);
  EXPECT_TRUE(isPrintAfterName("all", error));
  EXPECT_FALSE(isPrintAfterName("nope", error));
}

TEST(PassStatistics, SumsAndPrintsSorted) {
  PassStatistics s;
  s.add("zeta", "b", "later pass", 2);
  s.add("alpha", "a", "first counter");
  s.add("alpha", "a", "ignored description", 4);
  EXPECT_EQ(s.get("alpha", "a"), 5);
  EXPECT_EQ(s.get("alpha", "missing"), 0);
  std::string text;
  llvm::raw_string_ostream os(text);
  s.print(os);
  os.flush();
  EXPECT_EQ(text, "       5 alpha - first counter\n"
                  "       2 zeta - later pass\n");
}

// An empty program through an explicit one-pass pipeline: nothing changes,
// the verifier accepts it, and --print-after prints it.
TEST(PassPipeline, RunsAndPrintsAfterPass) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  ir::Program program;
  program.name = "empty";
  program.main = std::make_unique<ir::Function>();
  program.main->kind = ir::FunctionKind::Main;
  program.main->name = "main";
  PassStatistics stats;
  PassContext ctx{diags, stats, nullptr};
  PassPipelineOptions options;
  options.passes = std::vector<const PassInfo *>{findPass("inline")};
  options.printAfter = {"inline"};
  options.verifyEach = true;
  std::string dump, report;
  llvm::raw_string_ostream dumpOS(dump), reportOS(report);
  EXPECT_TRUE(runPassPipeline(program, options, ctx, dumpOS, reportOS, &sm));
  dumpOS.flush();
  EXPECT_EQ(dump.rfind("; *** IR after inline ***\nprogram empty\n", 0), 0u);
  EXPECT_FALSE(diags.hasErrors());
}

// A pass that leaves invalid IR stops the pipeline as an internal error
// (the driver exits 70), with the default options: the verifier runs after
// every pass in every build (issue 49: invalid IR was compiled silently when
// it did not).
TEST(PassPipeline, InvalidIRIsAnInternalErrorByDefault) {
  SourceManager sm;
  std::string printed;
  llvm::raw_string_ostream diagOS(printed);
  DiagnosticEngine diags(sm, diagOS);
  ir::Program program;
  program.name = "broken";
  program.main = std::make_unique<ir::Function>();
  program.main->kind = ir::FunctionKind::Main;
  program.main->name = "main";
  // An assignment to a variable no statement declares.
  const Type f64 = Type::scalarOf(ScalarKind::F64);
  unsigned x = program.main->addVar("x", f64, true);
  program.main->body.stmts.push_back(std::make_unique<ir::AssignStmt>(
      ir::AssignOp::Set, std::make_unique<ir::VarRefExpr>(x, f64),
      std::make_unique<ir::ConstantExpr>(
          ConstValue::ofFloat(ScalarKind::F64, 1.0))));
  PassStatistics stats;
  PassContext ctx{diags, stats, nullptr};
  PassPipelineOptions options;
  options.passes = std::vector<const PassInfo *>{findPass("inline")};
  std::string dump, report;
  llvm::raw_string_ostream dumpOS(dump), reportOS(report);
  EXPECT_FALSE(runPassPipeline(program, options, ctx, dumpOS, reportOS, &sm));
  EXPECT_TRUE(diags.hasInternalErrors());
  diagOS.flush();
  EXPECT_NE(printed.find("internal compiler error: pass 'inline' produced "
                         "invalid IR"),
            std::string::npos)
      << printed;
}
