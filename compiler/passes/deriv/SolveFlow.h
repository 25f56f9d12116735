// SolveFlow.h - Which dats a `solve` statement reads, writes and makes
// active: its data flow, as the derivative passes see it.
// SPDX-License-Identifier: Apache-2.0
//
// Why a file of its own: dat activity (DerivUtils.h: activeDats) needs to
// know which dats a solve reaches, and the solve derivatives (SolveDiff.h)
// build on DerivUtils' fill loops. Both ask these questions, so they sit
// below both, and neither includes the other's consumer.
#ifndef OPDC_PASSES_DERIV_SOLVEFLOW_H
#define OPDC_PASSES_DERIV_SOLVEFLOW_H

#include "ir/IR.h"

#include <set>
#include <vector>

namespace opdc {

/// The dats \p s overwrites: d of a tridiagonal solve; p, Ap and x of cg.
std::vector<ir::Dat *> solveWritten(const ir::SolveStmt &s);
/// The dats whose values \p s uses: a, b, c, d; cg's b (x is only a
/// first guess, p and Ap work space).
std::vector<ir::Dat *> solveInputs(const ir::SolveStmt &s);
/// The dats \p s makes active when \p active holds one of its inputs.
std::vector<ir::Dat *> solveReached(const ir::SolveStmt &s,
                                    const std::set<ir::Dat *> &active);
/// The dats cg's operator proc (and the procs it calls) reads.
std::vector<ir::Dat *> solveOperatorReads(const ir::SolveStmt &s);
/// Whether cg's operator reads an active dat other than p (A = A(k)).
bool solveOperatorActive(const ir::SolveStmt &s,
                         const std::set<ir::Dat *> &active);

} // namespace opdc
#endif
