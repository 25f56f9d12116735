// BranchWork.h - Does a kernel branch around costly work?
// SPDX-License-Identifier: Apache-2.0
//
// The loop vectoriser runs an `if` of a kernel by if-conversion: every lane
// computes both arms and a select keeps the taken one. That is free for
// cheap arms but not for an arm with divisions, square roots or math
// library calls that most elements skip: CloverLeaf's viscosity kernel
// leaves the viscosity 0 wherever the flow does not compress (most of the
// mesh), and its vectorised loop computed the limiter and the viscosity
// (nine divisions and a square root a cell) everywhere, slower than the
// scalar loop that branches around them (docs/performance.md). Which
// body wins depends on the data, so the CPU backend gives such a loop a
// second, scalar body that keeps the branches and the runtime times both
// (codegen/llvm/LoopHost.cpp, lib/exec/Loop.cpp `opd_loop_scalar`).
#ifndef OPDC_ANALYSIS_BRANCHWORK_H
#define OPDC_ANALYSIS_BRANCHWORK_H

namespace opdc::ir {
struct Function;
} // namespace opdc::ir

namespace opdc {

/// Whether \p kernel has an `if` (at any depth) whose condition the
/// elements may decide differently and one of whose arms holds costly
/// work: a division or remainder, a call of sqrt or of a math library
/// function (exp, log, pow, the trigonometric and hyperbolic functions and
/// their inverses, cbrt, hypot, erf, fmod, ...), a random number, a for or
/// while loop, or a call of a function that holds any of these. An `if`
/// whose condition reads only constants and params is not counted: every
/// lane takes the same arm (a condition on a local, an argument or a call
/// counts as varying, even where it happens not to).
bool branchesAroundCostlyWork(const ir::Function &kernel);

} // namespace opdc

#endif
