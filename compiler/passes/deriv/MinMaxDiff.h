// MinMaxDiff.h - Min and max reductions of active values, rewritten for the
// derivative passes into a winner search and a sum reduction.
// SPDX-License-Identifier: Apache-2.0
//
// The derivative of m = min(m0, v_1, ..., v_n) is the derivative of the
// value that won. The tangent and adjoint passes handle sum reductions and
// host selects, so a loop with an active min or max reduction is rewritten
// (MinMaxDiff.cpp) into statements that compute the same m through them:
// the element that won is found by passive loops (ties: the smallest global
// element index; m0 wins ties with the elements), its value is picked by a
// sum reduction, and m = select(no element won, m0, picked).
#ifndef OPDC_PASSES_DERIV_MINMAXDIFF_H
#define OPDC_PASSES_DERIV_MINMAXDIFF_H

#include "passes/Pass.h"

#include "ir/IR.h"

#include <functional>
#include <string>
#include <vector>

namespace opdc {

/// One statement of the rewrite, and whether the derivative passes must
/// differentiate it (false: it computes only passive values).
struct MinMaxStmt {
  ir::StmtPtr stmt;
  bool differentiable = true;
};

/// The index of an argument of \p l that is a min or max reduction into a
/// float host variable for which \p active holds, or -1.
int activeMinMaxArg(const ir::ParLoopStmt &l,
                    const std::function<bool(unsigned)> &active);

/// The statements that replace \p l (whose argument \p arg is a min or max
/// reduction of a float variable) in a derivative pass. \p newVar makes a
/// host variable of the caller (name, type, whether its value is
/// differentiated) and returns its slot; with
/// \p declare the statements declare the new variables, else they assign
/// them (declared by the caller elsewhere). Kernels made here are added to
/// \p program.
std::vector<MinMaxStmt> minMaxAsSum(
    ir::Program &program, PassContext &ctx, const ir::ParLoopStmt &l,
    unsigned arg,
    const std::function<unsigned(const std::string &, Type, bool)> &newVar,
    bool declare);

} // namespace opdc
#endif
