// AdjointLinearShares.h - Part of pass adjoint-linear: a reverse step's
// loop that both increments adjoint dats and sums a scalar gradient from
// the step's state, split in two.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_DERIV_ADJOINTLINEARSHARES_H
#define OPDC_PASSES_DERIV_ADJOINTLINEARSHARES_H

#include "ir/IRVisitor.h"

#include <set>

namespace opdc {

/// The host variables a statement reads: VarRef anywhere in it, a
/// reduction's variable, the target of a compound or element assignment
/// (a whole `v = e` reads only e).
struct VarReads : ir::IRVisitor {
  std::set<unsigned> vars;
  void visitVarRef(const ir::VarRefExpr &e) override;
  void visitParLoop(const ir::ParLoopStmt &l) override;
  void visitAssign(const ir::AssignStmt &a) override;
  void visitDecl(const ir::DeclStmt &d) override;
};

/// A in \p candidates when every statement of \p body but \p except that
/// reads variable \p g is `A += g`, the same A each time; else -1. (A sum
/// into g is then a share of A's gradient.)
int sumTarget(const ir::Body &body, const ir::Stmt *except, unsigned g,
              const std::set<unsigned> &candidates);

/// Splits each loop of \p reverse (a checkpointed step's reverse body,
/// \p state its state dats) that touches the state, increments scalar
/// adjoint dats outside it and sums into a variable g read only by `A +=
/// g` with A in \p candidates, into a loop of copy K.field (the sum made
/// dead) and one of copy K.share (the increments made dead), in that
/// order; kernel-dce then drops what each no longer reads. The same bits
/// (AdjointLinearShares.cpp). Returns true when it split any.
bool splitScalarShares(ir::Program &program, ir::Body &reverse,
                       const std::set<const ir::Dat *> &state,
                       const std::set<unsigned> &candidates);

} // namespace opdc
#endif
