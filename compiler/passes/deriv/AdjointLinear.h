// AdjointLinear.h - Checkpointed time loops whose reverse steps read no
// primal state, as a plain loop forward and a plain loop backward (see
// AdjointLinear.cpp).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_DERIV_ADJOINTLINEAR_H
#define OPDC_PASSES_DERIV_ADJOINTLINEAR_H

#include "passes/Pass.h"

namespace opdc {

/// Pass "adjoint-linear" (after "adjoint", "adjoint-zeros" and
/// "kernel-dce", before "adjoint-tape"). Replaces each pair of a forward
/// and a reverse `checkpoint` statement whose reverse step reads none of
/// the step's state by a plain for loop over the steps and a plain for loop
/// over the reverse steps, last to first (no snapshots, no re-runs, no
/// tape inside), which unroll-more-steps and fuse then block in time as
/// they block the primal. Where only the shares of up to two float
/// parameters' gradients read the state, lowers the loop without them and
/// takes those gradients from tangents of the same call, expanded here
/// (Program::scalarGradients, which it clears). Counts the loops and the
/// tangents for --stats; -Rpass names each loop lowered and -Rpass-missed
/// says why a loop was kept checkpointed.
/// Returns true when it changed anything.
bool lowerLinearSteps(ir::Program &program, PassContext &ctx);

} // namespace opdc
#endif
