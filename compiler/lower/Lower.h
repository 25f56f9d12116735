// Lower.h - AST -> Program IR.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_LOWER_LOWER_H
#define OPDC_LOWER_LOWER_H

#include "ast/AST.h"
#include "ir/IR.h"

#include <memory>

namespace opdc {
class DiagnosticEngine;

/// Builds the Program IR of \p program, which analyzeProgram must have
/// accepted (every "sema:" field of AST.h filled). The IR copies what it
/// needs and keeps no pointer into the AST, only source ranges.
///
/// Lowering makes explicit what the AST leaves implicit: folded expressions
/// and adapted literals become typed constants (const names are replaced by
/// their values), remaining type differences become casts, `..=` ranges
/// become half-open, `var x: T` without a value starts at zero, and every
/// loop argument gets its full access descriptor. Gradient fields of
/// adjoint statements become derivative dats (named `dJ.x`) or host
/// variables (`dJ.alpha`).
///
/// The result is checked with verifyIR. Returns null only when the AST
/// breaks sema's guarantees (an internal error, reported through \p diags).
std::unique_ptr<ir::Program> lowerProgram(const ast::Program &program,
                                          DiagnosticEngine &diags);
} // namespace opdc
#endif
