// ReverseDiff.h - Reverse-mode (adjoint) differentiation of IR expressions
// and kernels.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_DERIV_REVERSEDIFF_H
#define OPDC_PASSES_DERIV_REVERSEDIFF_H

#include "passes/Pass.h"

#include "ir/IR.h"

#include <functional>
#include <vector>

namespace opdc {
class DiagnosticEngine;

/// Adjoint statements for expressions and assignments in one function. The
/// adjoint of float variable v is a variable v.b (created on first use,
/// declared by the caller from takeDecls()). accumulate(e, seed) adds
/// seed * de/dl to the adjoint of every leaf l of e, reading the primal
/// values as they are when the statements run: the caller restores them
/// first (see Adjoint.cpp and buildAdjointKernel).
class ReverseDiff {
public:
  ReverseDiff(ir::Function &fn, DiagnosticEngine &diags)
      : fn(fn), diags(diags) {}

  /// Appends `adj(l) += seed * de/dl` for every float leaf l of \p e.
  void accumulate(const ir::Expr &e, ir::ExprPtr seed,
                  std::vector<ir::StmtPtr> &out);
  /// The adjoint statements of `target op= value` (the target's value from
  /// before the assignment): Set moves the target's adjoint into value's
  /// leaves and zeroes it; += and -= pass it on; *= and /= scale it.
  void assignAdjoint(const ir::AssignStmt &s, std::vector<ir::StmtPtr> &out);
  /// The adjoint slot of float variable \p slot.
  unsigned adjointSlot(unsigned slot);
  /// The adjoint of an lvalue (a variable or a component of one).
  ir::ExprPtr adjointOf(const ir::Expr &target);
  /// \p value in a fresh variable (returned as a reference), unless it is
  /// a variable reference or a constant already.
  ir::ExprPtr bind(ir::ExprPtr value, std::vector<ir::StmtPtr> &out);
  /// A fresh mutable variable of type \p t, declared by takeDecls().
  unsigned temp(const std::string &name, Type t);
  /// `var x = 0` for every slot made so far (adjoints and temporaries),
  /// once each.
  std::vector<ir::StmtPtr> takeDecls();

  /// Leaves that are kernel arguments (reads of the primal): adds \p seed
  /// (for component \p index of an array argument when not null).
  std::function<void(const ir::KernelArgExpr &, const ir::Expr *index,
                     ir::ExprPtr seed, std::vector<ir::StmtPtr> &)>
      onKernelArg;
  /// Variables whose adjoint nobody needs (default: all are active).
  std::function<bool(unsigned slot)> isActive;
  bool failed = false;

private:
  void accumulateElem(const ir::Expr &base, const ir::Expr &index,
                      ir::ExprPtr seed, std::vector<ir::StmtPtr> &out);
  void addTo(ir::ExprPtr lvalue, ir::ExprPtr seed,
             std::vector<ir::StmtPtr> &out);

  ir::Function &fn;
  DiagnosticEngine &diags;
  std::vector<int> adjoint; ///< slot -> its adjoint slot, -1 none yet
  std::vector<unsigned> declared;
  size_t declaredUpTo = 0;
};

/// How one kernel parameter takes part in an adjoint loop.
struct AdjointParamPlan {
  bool active = false; ///< the argument's value reaches the result
  bool global = false; ///< a global read (its adjoint is a sum reduction)
};

/// The adjoint kernel K.b of \p k (calls inlined, for loops unrolled, the
/// primal recomputed and its overwritten values kept in locals, then the
/// reverse sweep). Parameters: first a read-only copy of every read or
/// inout parameter of k, in order (the primal values before the loop),
/// then one adjoint parameter per active parameter, in order, with the
/// transposed access mode: read -> inc (sum for a global), out and inout ->
/// inout (the adjoint of an out is zeroed), inc -> read, sum -> read.
/// Returns null after reporting an error (a while loop, a for loop without
/// constant bounds, break or continue, a min or max reduction of an active
/// value, an active stencil read off the centre).
///
/// With \p shift (a block loop's transposed stencil, one kernel per offset
/// t of the active stencils): the kernel runs at p = q + t for the primal
/// element q and adds to the adjoint of each active off-centre stencil
/// parameter, at the centre, only the contribution of its read at offset
/// t; its primal reads are moved by -t (new stencils), the outputs'
/// adjoints are read at -t, and nothing else is written (the kernel
/// without shift, with those parameters inactive, does the rest). Every
/// point is incremented once per kernel, so it stays race-free and
/// vectorises like any centre write.
ir::Function *buildAdjointKernel(ir::Program &program, const ir::Function &k,
                                 const std::vector<AdjointParamPlan> &plan,
                                 PassContext &ctx,
                                 const std::vector<int64_t> *shift = nullptr);

} // namespace opdc
#endif
