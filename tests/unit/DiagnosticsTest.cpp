// DiagnosticsTest.cpp - Clang-style messages: location, source line, caret.
// SPDX-License-Identifier: Apache-2.0
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <gtest/gtest.h>

using namespace opdc;

namespace {

struct DiagFixture {
  SourceManager sm;
  std::string text;
  llvm::raw_string_ostream os{text};
  DiagnosticEngine diags{sm, os};
  unsigned id;
  explicit DiagFixture(llvm::StringRef src) { id = sm.addBuffer(src, "t.opd"); }
  SourceRange at(size_t offset, size_t len) {
    const char *b = sm.bufferText(id).data() + offset;
    return {llvm::SMLoc::getFromPointer(b), llvm::SMLoc::getFromPointer(b + len)};
  }
};

TEST(Diagnostics, ErrorHasLocationLineAndUnderline) {
  DiagFixture f("dat q: cells f64\nloop k over edges (tempr)\n");
  f.diags.error(f.at(36, 5), "unknown dat 'tempr'");
  EXPECT_EQ(f.text, "t.opd:2:20: error: unknown dat 'tempr'\n"
                    "loop k over edges (tempr)\n"
                    "                   ^~~~~\n");
  EXPECT_EQ(f.diags.errorCount(), 1u);
}

// llvm::SourceMgr expands tabs to 8-column stops in both the source line and
// the caret line, so the caret stays under the right character.
TEST(Diagnostics, CaretAlignedAfterTabs) {
  DiagFixture f("\tx = 1\n");
  f.diags.error(f.at(1, 1), "bad");
  EXPECT_EQ(f.text, "t.opd:1:2: error: bad\n        x = 1\n        ^\n");
}

TEST(Diagnostics, NoteFollowsErrorAndIsDroppedWithIt) {
  DiagFixture f("a b\n");
  f.diags.setErrorLimit(1);
  f.diags.error(f.at(0, 1), "first");
  f.diags.note(f.at(2, 1), "here");
  f.diags.error(f.at(2, 1), "second");
  f.diags.note(f.at(0, 1), "dropped");
  EXPECT_NE(f.text.find("note: here"), std::string::npos);
  EXPECT_EQ(f.text.find("second"), std::string::npos);
  EXPECT_EQ(f.text.find("dropped"), std::string::npos);
  EXPECT_NE(f.text.find("too many errors emitted"), std::string::npos);
  EXPECT_EQ(f.diags.errorCount(), 2u);
}

TEST(Diagnostics, WarningsNamedDisabledAndPromoted) {
  DiagFixture f("x\n");
  f.diags.warning(f.at(0, 1), "unused dat 'x'", "unused-dat");
  EXPECT_NE(f.text.find("warning: unused dat 'x' [-Wunused-dat]"), std::string::npos);
  EXPECT_FALSE(f.diags.hasErrors());
  f.diags.disableWarning("unused-dat");
  f.text.clear();
  f.diags.warning(f.at(0, 1), "unused dat 'x'", "unused-dat");
  EXPECT_TRUE(f.text.empty());
  f.diags.setWarningsAsErrors(true);
  f.diags.warning(f.at(0, 1), "shadowed 'x'", "shadow");
  EXPECT_TRUE(f.diags.hasErrors());
  EXPECT_NE(f.text.find("error: shadowed 'x' [-Werror,-Wshadow]"), std::string::npos);
}

TEST(Diagnostics, RemarksOnlyWhenEnabled) {
  DiagFixture f("x\n");
  f.diags.remark(f.at(0, 1), "fused", "loop-fusion");
  EXPECT_TRUE(f.text.empty());
  f.diags.enableRemarks("loop-fusion");
  f.diags.remark(f.at(0, 1), "fused", "loop-fusion");
  EXPECT_NE(f.text.find("remark: fused"), std::string::npos);
}

TEST(Diagnostics, NoLocationPrintsToolName) {
  DiagFixture f("");
  f.diags.error({}, "cannot read 'x.opd': No such file or directory");
  EXPECT_EQ(f.text, "opdc: error: cannot read 'x.opd': No such file or directory\n");
}

TEST(SourceManager, DescribeAndLineColumn) {
  SourceManager sm;
  unsigned id = sm.addBuffer("ab\ncd\n", "m.opd");
  const char *p = sm.bufferText(id).data() + 4;
  auto loc = llvm::SMLoc::getFromPointer(p);
  EXPECT_EQ(sm.lineAndColumn(loc), std::make_pair(2u, 2u));
  EXPECT_EQ(sm.describe(loc), "m.opd:2:2");
  std::string why;
  EXPECT_FALSE(sm.loadFile("/nonexistent/x.opd", why));
  EXPECT_FALSE(why.empty());
}

} // namespace

// --diagnostics-format=json: one object per line, the range's end one past
// its last character, the warning's option apart from the message.
TEST(DiagnosticsJSON, OneObjectPerDiagnostic) {
  DiagFixture f("dat q: cells f64\nloop k over edges (tempr)\n");
  f.diags.setJSON(true);
  f.diags.error(f.at(36, 5), "unknown dat 'tempr' \"quoted\"");
  f.diags.note(f.at(4, 1), "here");
  f.diags.warning(f.at(0, 3), "unused", "unused-dat");
  f.diags.error({}, "internal compiler error: pass 'x' produced invalid IR");
  EXPECT_EQ(
      f.text,
      "{\"column\":20,\"end_column\":25,\"end_line\":2,\"file\":\"t.opd\","
      "\"internal\":false,\"line\":2,\"message\":\"unknown dat 'tempr' "
      "\\\"quoted\\\"\",\"severity\":\"error\"}\n"
      "{\"column\":5,\"end_column\":6,\"end_line\":1,\"file\":\"t.opd\","
      "\"line\":1,\"message\":\"here\",\"severity\":\"note\"}\n"
      "{\"column\":1,\"end_column\":4,\"end_line\":1,\"file\":\"t.opd\","
      "\"line\":1,\"message\":\"unused\",\"option\":\"-Wunused-dat\","
      "\"severity\":\"warning\"}\n"
      "{\"file\":null,\"internal\":true,\"message\":\"internal compiler "
      "error: pass 'x' produced invalid IR\",\"severity\":\"error\"}\n");
  EXPECT_EQ(f.diags.errorCount(), 2u);
  EXPECT_EQ(f.diags.warningCount(), 1u);
}

TEST(DiagnosticsJSON, WerrorKeepsTheOption) {
  DiagFixture f("a\n");
  f.diags.setJSON(true);
  f.diags.setWarningsAsErrors(true);
  f.diags.warning(f.at(0, 1), "unused", "unused-dat");
  EXPECT_NE(f.text.find("\"option\":\"-Werror,-Wunused-dat\""),
            std::string::npos);
  EXPECT_NE(f.text.find("\"severity\":\"error\""), std::string::npos);
  EXPECT_EQ(f.diags.errorCount(), 1u);
}

TEST(Diagnostics, WarningOptionInBrackets) {
  DiagFixture f("a\n");
  f.diags.warning(f.at(0, 1), "unused", "unused-dat");
  f.diags.setWarningsAsErrors(true);
  f.diags.warning(f.at(0, 1), "unused", "unused-dat");
  EXPECT_NE(f.text.find("warning: unused [-Wunused-dat]"), std::string::npos);
  EXPECT_NE(f.text.find("error: unused [-Werror,-Wunused-dat]"),
            std::string::npos);
}
