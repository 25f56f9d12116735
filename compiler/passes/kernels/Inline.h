// Inline.h - Inline fn calls into the kernels and fns that make them.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_KERNELS_INLINE_H
#define OPDC_PASSES_KERNELS_INLINE_H

#include "passes/Pass.h"

namespace opdc {

/// Pass "inline". Replaces every call of a fn made from a kernel or a fn by
/// the fn's body, so that later passes (kernel differentiation, fusion, the
/// CUDA backend's kernels) see one straight body per kernel. Calls stay
/// where evaluating them early would change what runs: in a while
/// condition, in the right operand of && or ||, in an arm of select, and
/// calls of fns that return from inside a loop. Each call inlined or not is
/// a remark (-Rpass=inline) and a counter (--stats); fns no longer called
/// from anywhere are removed. Returns true when anything changed.
bool inlineCalls(ir::Program &program, PassContext &ctx);

/// The same for the calls made by \p fn alone (a kernel a later pass is
/// about to rewrite); removes no fn. Returns true when anything changed.
bool inlineCallsIn(ir::Program &program, ir::Function &fn, PassContext &ctx);

/// The same for the fn and proc calls of the host function \p fn (a copy of
/// a proc about to be differentiated): derivatives follow the procs it
/// calls.
bool inlineProcCallsIn(ir::Program &program, ir::Function &fn,
                       PassContext &ctx);

} // namespace opdc
#endif
