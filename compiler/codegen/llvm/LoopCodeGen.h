// LoopCodeGen.h - Parallel loops: context, body function, host call.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_CODEGEN_LLVM_LOOPCODEGEN_H
#define OPDC_CODEGEN_LLVM_LOOPCODEGEN_H

namespace opdc {
class FunctionEmitter;
namespace ir {
struct ParLoopStmt;
} // namespace ir

/// Emits \p loop at the current point of the host function \p host: the
/// body function the runtime runs per chunk (kernel inlined into the
/// element loop, or into the compute loop of strips for increments through
/// maps), and in the host the argument table, opd_loop_prepare,
/// the context with the data pointers, reduction buffers, opd_loop_run and
/// the combination of the reduction partials in chunk order.
void emitParLoop(FunctionEmitter &host, const ir::ParLoopStmt &loop);

/// Emits the skewed group of \p n loops starting at \p first (the group's
/// loops, consecutive in their Body; passes/loops/Fuse.cpp): each loop's body
/// function, argument table, prepare call and context as emitParLoop does,
/// then one opd_skew_run over all of them (lib/exec/Skew.cpp), then each
/// loop's reduction partials.
void emitSkewedLoops(FunctionEmitter &host,
                     const ir::ParLoopStmt *const *first, unsigned n);

} // namespace opdc
#endif
