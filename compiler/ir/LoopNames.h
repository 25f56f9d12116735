// LoopNames.h - The names users see for loops the passes made.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_IR_LOOPNAMES_H
#define OPDC_IR_LOOPNAMES_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace opdc::ir {

/// Widest name userLoopName returns: a --profile row (name and five
/// columns of figures) then fits in 100 columns.
constexpr size_t MaxUserLoopName = 48;

/// The name of the loop running kernel \p kernel as --profile, remarks and
/// run-time errors show it. Kernels the passes derive carry compiler-made
/// names (step.b2, step.bt3, adjoint_copy_f64, a+b+c); users see the source
/// kernel and what was made of it: "step (adjoint)", "step (tangent)",
/// "copy (adjoint)", "a+b (fused)", repeats as "copy (adjoint) x3", and a
/// long fused group cut to MaxUserLoopName with "+N more".
std::string userLoopName(llvm::StringRef kernel);

} // namespace opdc::ir
#endif
