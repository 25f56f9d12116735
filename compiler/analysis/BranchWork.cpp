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

/// Finds costly work in what it walks, through calls of fns.
struct CostlyWork : IRVisitor {
  bool found = false;
  std::set<const Function *> *seen;
  explicit CostlyWork(std::set<const Function *> &s) : seen(&s) {}

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
  void visitCall(const CallExpr &e) override {
    IRVisitor::visitCall(e);
    if (e.callee && seen->insert(e.callee).second) {
      const Function *saved = currentFunction;
      visitBody(e.callee->body);
      currentFunction = saved;
    }
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

bool costly(const Body &b, std::set<const Function *> &seen) {
  std::set<const Function *> local = seen; // each arm from the same start
  CostlyWork w(local);
  w.visitBody(b);
  return w.found;
}

/// Finds an `if` with a varying condition and a costly arm, through calls.
struct FindBranch : IRVisitor {
  bool found = false;
  std::set<const Function *> seen;

  void visitIf(const IfStmt &s) override {
    Varies v;
    v.visitExpr(*s.cond);
    if (v.found && (costly(s.thenBody, seen) || costly(s.elseBody, seen)))
      found = true;
    IRVisitor::visitIf(s);
  }
  void visitCall(const CallExpr &e) override {
    IRVisitor::visitCall(e);
    if (e.callee && seen.insert(e.callee).second) {
      const Function *saved = currentFunction;
      visitBody(e.callee->body);
      currentFunction = saved;
    }
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
