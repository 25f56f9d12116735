// Sema.h - Loading a program with its imports, and semantic analysis.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_SEMA_SEMA_H
#define OPDC_SEMA_SEMA_H

#include "ast/AST.h"

#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>
#include <vector>

namespace opdc {
class DiagnosticEngine;
class SourceManager;

struct FrontendOptions {
  std::vector<std::string> importPaths; ///< -I directories, in order
  std::string stdlibDir;                ///< where `import std.x` looks
};

/// Parses \p path and, transitively, every module it imports (stdlib,
/// relative paths, -I dirs; cycles are errors with a note per edge). Returns
/// null only when \p path itself cannot be read (reported). Does not run
/// analyzeProgram.
std::unique_ptr<ast::Program> loadProgram(const std::string &path,
                                          SourceManager &sm,
                                          DiagnosticEngine &diags,
                                          const FrontendOptions &opts);
/// As loadProgram, with the root file's text given (tests, fuzzing);
/// relative imports resolve against \p name's directory.
std::unique_ptr<ast::Program>
loadProgramFromText(llvm::StringRef text, llvm::StringRef name,
                    SourceManager &sm, DiagnosticEngine &diags,
                    const FrontendOptions &opts);

/// Resolves names, computes types, folds consts, derives loop-argument
/// access descriptors and checks every rule of docs/language.md. Reports all
/// errors it finds; returns true if there were none. Never crashes on a
/// program the parser accepted, however wrong.
bool analyzeProgram(ast::Program &program, DiagnosticEngine &diags);
} // namespace opdc
#endif
