// SemaTestHelpers.h - Shared fixtures of the sema unit tests.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_TESTS_UNIT_SEMATESTHELPERS_H
#define OPDC_TESTS_UNIT_SEMATESTHELPERS_H

#include "sema/Sema.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>
#include <vector>

namespace opdc::sematest {

/// Parses and analyses one program given as text.
struct Checked {
  SourceManager sm;
  std::string messages;
  llvm::raw_string_ostream os{messages};
  DiagnosticEngine diags{sm, os};
  std::unique_ptr<ast::Program> prog;
  bool ok = false;

  explicit Checked(llvm::StringRef text, const FrontendOptions &opts = {},
                   llvm::StringRef name = "t.opd") {
    prog = loadProgramFromText(text, name, sm, diags, opts);
    if (prog && !diags.hasErrors())
      ok = analyzeProgram(*prog, diags) && !diags.hasErrors();
  }
  template <typename T> T *global(const std::string &n) {
    auto it = prog->globals.find(n);
    return it == prog->globals.end() ? nullptr : llvm::dyn_cast<T>(it->second);
  }
  bool mentions(llvm::StringRef s) const {
    return llvm::StringRef(messages).contains(s);
  }
};

/// The statements of main.
inline std::vector<ast::StmtPtr> &mainStmts(Checked &c) {
  return c.prog->main->body->stmts;
}

/// The first loop statement found in main (not nested).
inline ast::LoopStmt *firstLoop(Checked &c, unsigned skip = 0) {
  for (auto &s : mainStmts(c))
    if (auto *l = llvm::dyn_cast<ast::LoopStmt>(s.get()))
      if (skip-- == 0)
        return l;
  return nullptr;
}

} // namespace opdc::sematest
#endif
