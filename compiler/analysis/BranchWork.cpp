// BranchWork.cpp - Does a kernel branch around costly work? (BranchWork.h)
// SPDX-License-Identifier: Apache-2.0
#include "analysis/BranchWork.h"

#include "ir/IRVisitor.h"

#include <set>

namespace opdc {
namespace {
using namespace ir;

/// Whether a math function costs tens of cycles a lane (a library call or a
/// long-latency instruction) rather than a few (abs, min, max, floor, fma,
/// select, copysign ...).
bool costlyIntrinsic(Intrinsic id) {
  switch (id) {
  case Intrinsic::Sqrt:
  case Intrinsic::Exp:
  case Intrinsic::Log:
  case Intrinsic::Pow:
  case Intrinsic::Sin:
  case Intrinsic::Cos:
  case Intrinsic::Tan:
  case Intrinsic::Atan:
  case Intrinsic::Atan2:
  case Intrinsic::RngUniform:
  case Intrinsic::RngNormal:
  case Intrinsic::Asin:
  case Intrinsic::Acos:
  case Intrinsic::Sinh:
  case Intrinsic::Cosh:
  case Intrinsic::Tanh:
  case Intrinsic::Asinh:
  case Intrinsic::Acosh:
  case Intrinsic::Atanh:
  case Intrinsic::Cbrt:
  case Intrinsic::Hypot:
  case Intrinsic::Log2:
  case Intrinsic::Log10:
  case Intrinsic::Log1p:
  case Intrinsic::Exp2:
  case Intrinsic::Expm1:
  case Intrinsic::Erf:
  case Intrinsic::Erfc:
  case Intrinsic::Fmod:
    return true;
  default:
    return false;
  }
}

/// Walks into the body of every fn called, once each (`seen` guards
/// against walking one twice, and against recursion).
struct FollowCalls : IRVisitor {
  std::set<const Function *> seen;
  void visitCall(const CallExpr &e) override {
    IRVisitor::visitCall(e);
    if (e.callee && seen.insert(e.callee).second) {
      const Function *saved = currentFunction;
      visitBody(e.callee->body);
      currentFunction = saved;
    }
  }
};

/// Finds costly work in what it walks, through calls of fns.
struct CostlyWork : FollowCalls {
  bool found = false;
  void visitBinary(const BinaryExpr &e) override {
    if (e.op == BinaryOp::Div || e.op == BinaryOp::Rem)
      found = true;
    IRVisitor::visitBinary(e);
  }
  void visitIntrinsic(const IntrinsicExpr &e) override {
    if (costlyIntrinsic(e.id))
      found = true;
    IRVisitor::visitIntrinsic(e);
  }
  void visitFor(const ForStmt &s) override {
    found = true;
    IRVisitor::visitFor(s);
  }
  void visitWhile(const WhileStmt &s) override {
    found = true;
    IRVisitor::visitWhile(s);
  }
};

/// Whether an expression is the same for every element: constants and
/// params only (a conservative answer: a local or a global argument that
/// happens to be uniform still counts as varying).
struct Varies : IRVisitor {
  bool found = false;
  void visitVarRef(const VarRefExpr &) override { found = true; }
  void visitKernelArg(const KernelArgExpr &) override { found = true; }
  void visitCall(const CallExpr &) override { found = true; }
  void visitIntrinsic(const IntrinsicExpr &e) override {
    if (e.id == Intrinsic::Idx || e.id == Intrinsic::RngUniform ||
        e.id == Intrinsic::RngNormal)
      found = true;
    IRVisitor::visitIntrinsic(e);
  }
};

/// Whether an arm holds costly work: a walk of its own, so that a fn that
/// the search already walked outside the arm is walked again from here.
bool costly(const Body &b) {
  CostlyWork w;
  w.visitBody(b);
  return w.found;
}

/// Finds an `if` with a varying condition and a costly arm, through calls.
struct FindBranch : FollowCalls {
  bool found = false;
  void visitIf(const IfStmt &s) override {
    Varies v;
    v.visitExpr(*s.cond);
    if (v.found && (costly(s.thenBody) || costly(s.elseBody)))
      found = true;
    IRVisitor::visitIf(s);
  }
};
} // namespace

bool branchesAroundCostlyWork(const ir::Function &kernel) {
  FindBranch f;
  f.seen.insert(&kernel);
  f.visitBody(kernel.body);
  return f.found;
}

} // namespace opdc
