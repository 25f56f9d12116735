// ExpandCG.h - Expand `solve cg` into loops and a host while loop.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_LOOPS_EXPANDCG_H
#define OPDC_PASSES_LOOPS_EXPANDCG_H

#include "passes/Pass.h"

namespace opdc {

/// Pass "expand-cg". Replaces every `solve cg(op, p -> Ap, b, x)` by the
/// conjugate gradient iteration written as ordinary IR: direct loops for
/// the vector updates with the dot products as sum reductions, a call of
/// the operator proc per iteration, and a host while loop; a work dat for
/// the residual. Returns true when anything changed.
bool expandCG(ir::Program &program, PassContext &ctx);

} // namespace opdc
#endif
