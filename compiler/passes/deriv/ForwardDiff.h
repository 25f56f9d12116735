// ForwardDiff.h - Forward-mode (tangent) differentiation of IR statements.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_DERIV_FORWARDDIFF_H
#define OPDC_PASSES_DERIV_FORWARDDIFF_H

#include "ir/IR.h"

#include <functional>
#include <vector>

namespace opdc {
class DiagnosticEngine;

/// Where the tangent of each leaf lives in the function being written.
struct TangentSlots {
  /// Variable slot -> its tangent's slot, -1 when passive (integer, bool,
  /// or a float the differentiated inputs cannot reach).
  std::vector<int> var;
  /// Kernel parameter -> its tangent parameter, -1 when passive.
  std::vector<int> param;
};

/// Source transformation in forward mode: every float value v gets a
/// tangent v' = dv/ds along the seeds s. Statements are rewritten one by one
/// into their tangent statements followed by the statement itself, so that
/// tangents read the values from before the statement (`y = y * r` gives
/// `y' = y' * r + y * r'` and then `y = y * r`). Integer and boolean work is
/// passive; control flow is kept as it is (derivatives of the branch taken).
/// The rules per intrinsic are in ForwardDiff.cpp.
class ForwardDiff {
public:
  ForwardDiff(ir::Function &fn, TangentSlots &slots, DiagnosticEngine &diags)
      : fn(fn), slots(slots), diags(diags) {}

  /// The tangent of \p e, of e's type, or null when it is identically zero.
  ir::ExprPtr tangent(const ir::Expr &e);
  /// Appends the tangent statements of \p s, then a copy of \p s, to \p out
  /// (bodies of if/for/while are rewritten recursively). Statements this
  /// class does not know (loops, swap, return in host code) go to `other`.
  void differentiate(const ir::Stmt &s, std::vector<ir::StmtPtr> &out);
  ir::Body differentiate(const ir::Body &in);
  /// The tangent slot of float variable \p slot, created (named NAME.d,
  /// mutable like the primal) on first use.
  unsigned tangentSlot(unsigned slot);

  /// Handles a statement differentiate() does not; returns false to report
  /// it as not differentiable.
  std::function<bool(const ir::Stmt &, std::vector<ir::StmtPtr> &)> other;
  /// True once an error was reported.
  bool failed = false;

private:
  ir::ExprPtr intrinsicTangent(const ir::IntrinsicExpr &e);
  void assignTangent(const ir::AssignStmt &s, std::vector<ir::StmtPtr> &out);

  ir::Function &fn;
  TangentSlots &slots;
  DiagnosticEngine &diags;
};

/// The directional derivative of \p e given its arguments' tangents
/// (\p argTangent(i), null for zero); null when it is zero. Linear in the
/// tangents, so the reverse mode gets the adjoint of argument i by passing
/// the seed for i and null for the others. An intrinsic without a
/// derivative is reported and sets \p failed.
ir::ExprPtr
intrinsicDerivative(const ir::IntrinsicExpr &e,
                    const std::function<ir::ExprPtr(size_t)> &argTangent,
                    DiagnosticEngine &diags, bool &failed);

/// True when \p t holds floats (a float scalar or an array of floats).
bool isFloatType(const Type &t);

} // namespace opdc
#endif
