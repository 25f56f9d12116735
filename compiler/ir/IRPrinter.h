// IRPrinter.h - Deterministic text form of the Program IR (--emit=ir).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_IR_IRPRINTER_H
#define OPDC_IR_IRPRINTER_H

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace opdc {
class SourceManager;
struct ConstValue;
namespace ir {
struct Program;
struct Function;
struct Expr;
} // namespace ir

/// Prints \p p in the format documented at the top of IRPrinter.cpp: globals
/// by kind, then fns, kernels, procs and main. When \p sm is given, kernels
/// and loops end with a `; file:line:col` comment (file's basename only).
/// The output depends only on the IR (never on pointer values).
void printIR(const ir::Program &p, llvm::raw_ostream &os,
             const SourceManager *sm = nullptr);

/// Prints one function as printIR would.
void printFunction(const ir::Function &f, llvm::raw_ostream &os,
                   const SourceManager *sm = nullptr);

/// One expression as printIR shows it; variable slots are named after
/// \p context's variables (or `%<slot>` without a context).
std::string exprToString(const ir::Expr &e,
                         const ir::Function *context = nullptr);

/// A constant as the IR prints it: `1`, `2i64`, `1.5`, `0.1f`, `true`,
/// `[1.0, 2.0]`, `"text"`. Floats use the shortest digits that read back to
/// the same value (of their own precision).
std::string constToString(const ConstValue &v);

} // namespace opdc
#endif
