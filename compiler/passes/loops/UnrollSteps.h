// UnrollSteps.h - Unroll time loops of stencil steps by two (see
// UnrollSteps.cpp).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_LOOPS_UNROLLSTEPS_H
#define OPDC_PASSES_LOOPS_UNROLLSTEPS_H

#include "passes/Pass.h"

#include <memory>
#include <span>

namespace opdc::ir {
struct Stmt;
} // namespace opdc::ir

namespace opdc {

/// Whether \p body (statements of a time loop with variable \p loopVar) is
/// stencil steps unroll-steps unrolls: block loops, one reading a dat at
/// stencil offsets, a swap, host declarations and assignments without calls or
/// clocks that leave the loop variable alone.
/// \p copyBack: a body without a swap whose loop writes the dat its
/// stencil reads (a copy back) counts too; not under --mpi, where the
/// unrolled chain of such a body defeats communication avoidance's grouped
/// exchange (tests/mpi/comm_avoid.opd; decision 0361). swap-copy-back
/// (passes/loops/SwapCopyBack.cpp) runs first and makes such a body swap
/// where the two dats agree outside the copy: that body is unrolled under
/// --mpi too (decision 0385).
bool stencilStepBody(std::span<const std::unique_ptr<ir::Stmt>> body,
                     unsigned loopVar, bool copyBack);
/// Pass "unroll-steps": time loops of stencil steps unrolled by two.
bool unrollSteps(ir::Program &program, PassContext &ctx);
/// Pass "unroll-more-steps" (after the derivative passes): the two-step
/// loops unroll-steps made, unrolled by two again until they run
/// PassContext::unrollSteps steps a sweep.
bool unrollMoreSteps(ir::Program &program, PassContext &ctx);

} // namespace opdc
#endif
