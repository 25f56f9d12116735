// RandomCodeGen.h - rng_uniform and rng_normal: Philox4x32-10 inline.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_CODEGEN_LLVM_RANDOMCODEGEN_H
#define OPDC_CODEGEN_LLVM_RANDOMCODEGEN_H

#include "ast/Operators.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/IR/IRBuilder.h"

namespace opdc {
class CodeGenModule;

/// Emits rng_uniform (\p id RngUniform) or rng_normal (RngNormal) of the
/// i64 values \p seed and \p n for the element whose global coordinates are
/// \p coords (i64; one for set loops, one to three for block loops): one
/// Philox4x32-10 block, computed inline with integer operations only, so a
/// loop drawing uniform numbers still vectorises. Returns an f64.
llvm::Value *emitRandom(CodeGenModule &cgm, llvm::IRBuilder<> &b, Intrinsic id,
                        llvm::Value *seed, llvm::Value *n,
                        llvm::ArrayRef<llvm::Value *> coords);

} // namespace opdc
#endif
