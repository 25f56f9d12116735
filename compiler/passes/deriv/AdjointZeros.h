// AdjointZeros.h - Assign instead of zeroing then incrementing adjoints in
// reversed time loops.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_DERIV_ADJOINTZEROS_H
#define OPDC_PASSES_DERIV_ADJOINTZEROS_H

#include "passes/Pass.h"

namespace opdc {

/// Pass "adjoint-zeros" (after "adjoint"). In the body of a reversed time
/// loop where a loop zeroes an adjoint dat at the end of every step and,
/// after the swap of the next step, the first loop to touch it increments
/// it at the centre over a range within the zeroed one: that increment
/// becomes an assignment, the zeroing shrinks to the rest of its range, and
/// a zero loop after the time loop restores the state the loop left.
/// Counts the loops rewritten for --stats. Returns true when it changed
/// anything.
bool assignAdjointZeros(ir::Program &program, PassContext &ctx);

} // namespace opdc
#endif
