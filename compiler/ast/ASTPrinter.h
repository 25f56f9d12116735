// ASTPrinter.h - Stable text dump of the AST (opdc --emit=ast).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_AST_ASTPRINTER_H
#define OPDC_AST_ASTPRINTER_H

#include "llvm/Support/raw_ostream.h"

namespace opdc {
class SourceManager;
namespace ast {
struct Module;
struct Program;
} // namespace ast

/// Prints one module as an indented tree, one node per line, with the
/// node's line:col when \p sm is given. Sema annotations (types, resolved
/// access descriptors, folded values) are printed when present, so the same
/// printer serves parser tests (unannotated) and `--emit=ast` (annotated).
/// Output is deterministic.
void printModule(const ast::Module &m, llvm::raw_ostream &os,
                 const SourceManager *sm = nullptr);
/// Prints the root module of \p p (imported modules are shown as imports).
void printProgram(const ast::Program &p, llvm::raw_ostream &os,
                  const SourceManager *sm = nullptr);
} // namespace opdc
#endif
