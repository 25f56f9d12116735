// SemaImportsTest.cpp - Modules: import order, cycles, the stdlib.
// SPDX-License-Identifier: Apache-2.0
#include "SemaTestHelpers.h"

#include <gtest/gtest.h>

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <fstream>

using namespace opdc;
using namespace opdc::ast;
using namespace opdc::sematest;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

/// A scratch directory with .opd files, removed at the end.
struct TempDir {
  llvm::SmallString<128> path;
  TempDir() { llvm::sys::fs::createUniqueDirectory("opdc-sema", path); }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(const std::string &name, const std::string &text) {
    llvm::SmallString<128> p(path);
    llvm::sys::path::append(p, name);
    llvm::sys::fs::create_directories(llvm::sys::path::parent_path(p));
    std::ofstream(std::string(p)) << text;
    return std::string(p);
  }
};

TEST(SemaImports, EachModuleLoadedOnceImportsFirst) {
  TempDir dir;
  dir.file("lib/shapes.opd", "import \"common.opd\"\nconst sides = 4\n");
  dir.file("lib/common.opd", "const unit = 1.0\n");
  std::string root = dir.file(
      "main.opd", "program p\nimport lib.shapes\nimport \"lib/common.opd\"\n"
                  "main {\n  print(sides, unit)\n}\n");
  SourceManager sm;
  std::string msgs;
  llvm::raw_string_ostream os(msgs);
  DiagnosticEngine diags(sm, os);
  auto prog = loadProgram(root, sm, diags, {});
  ASSERT_NE(prog, nullptr);
  EXPECT_FALSE(diags.hasErrors()) << msgs;
  ASSERT_EQ(prog->modules.size(), 3u);
  EXPECT_TRUE(llvm::StringRef(prog->modules[0]->path).ends_with("common.opd"));
  EXPECT_TRUE(llvm::StringRef(prog->modules[1]->path).ends_with("shapes.opd"));
  EXPECT_EQ(prog->modules[2].get(), prog->root);
  EXPECT_EQ(prog->root->imports[0].resolved, prog->modules[1].get());
  EXPECT_EQ(prog->root->imports[1].resolved, prog->modules[0].get());
  EXPECT_TRUE(analyzeProgram(*prog, diags)) << msgs;
}

TEST(SemaImports, CyclesAndMissingModulesAreReported) {
  TempDir dir;
  dir.file("a.opd", "import b\nconst x = 1\n");
  dir.file("b.opd", "import a\nconst y = 2\n");
  std::string root =
      dir.file("main.opd", "program p\nimport a\nimport nowhere\nmain {\n}\n");
  SourceManager sm;
  std::string msgs;
  llvm::raw_string_ostream os(msgs);
  DiagnosticEngine diags(sm, os);
  FrontendOptions opts;
  opts.importPaths.push_back(std::string(dir.path) + "/inc");
  auto prog = loadProgram(root, sm, diags, opts);
  ASSERT_NE(prog, nullptr);
  llvm::StringRef m(msgs);
  EXPECT_TRUE(m.contains("b.opd:1:1: error: import of 'a' creates a cycle"))
      << msgs;
  EXPECT_TRUE(m.contains("a.opd:1:1: note: 'a.opd' imports 'b.opd' here"))
      << msgs;
  EXPECT_TRUE(m.contains("error: module 'nowhere' not found")) << msgs;
  EXPECT_TRUE(m.contains("inc/nowhere.opd'")) << msgs;
}

TEST(SemaImports, StdlibModulesComeFromTheStdlibDir) {
  TempDir dir;
  dir.file("std/math.opd", "const pi: f64 = 3.14159\n");
  FrontendOptions opts;
  opts.stdlibDir = std::string(dir.path) + "/std";
  Checked c("program p\nimport std.math\nmain {\n  print(pi)\n}\n", opts);
  EXPECT_TRUE(c.ok) << c.messages;
  Checked none("program p\nimport std.nosuch\nmain {\n}\n", opts);
  EXPECT_TRUE(none.mentions("error: module 'std.nosuch' not found"))
      << none.messages;
}

} // namespace
