// Adjoint.h - Build the adjoint (reverse-mode derivative) of procs.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_DERIV_ADJOINT_H
#define OPDC_PASSES_DERIV_ADJOINT_H

#include "passes/Pass.h"

namespace opdc {

/// Pass "adjoint". Replaces every `let (J, dJ) = adjoint P(args) wrt (...)
/// checkpoints N` by ordinary IR plus tape and checkpoint statements: a
/// forward sweep of P that saves what it overwrites, the reverse sweep
/// (adjoint loops over adjoint kernels, ReverseDiff.h, in reverse order,
/// with binomial checkpointing of P's top-level for loops), then the
/// gradient dats and variables and J. See Adjoint.cpp for the rules and
/// why they are legal. Returns true when anything changed.
bool buildAdjoints(ir::Program &program, PassContext &ctx);

} // namespace opdc
#endif
