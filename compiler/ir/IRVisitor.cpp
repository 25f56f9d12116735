// IRVisitor.cpp - Default traversal of the read-only IR walker.
// SPDX-License-Identifier: Apache-2.0
#include "ir/IRVisitor.h"

#include "support/Assert.h"

#include "llvm/Support/Casting.h"

namespace opdc::ir {

using llvm::cast;
using llvm::dyn_cast;

IRVisitor::~IRVisitor() = default;

void IRVisitor::visitProgram(const Program &p) {
  visitGlobals(p);
  for (const Function *f : p.functions())
    visitFunction(*f);
}

void IRVisitor::visitGlobals(const Program &p) {
  const Function *saved = currentFunction;
  currentFunction = nullptr;
  for (const auto &s : p.sets) {
    visitOptional(s->fromFile);
    visitOptional(s->size);
  }
  for (const auto &m : p.maps)
    visitOptional(m->fromFile);
  for (const auto &d : p.dats) {
    for (const auto &e : d->size)
      visitOptional(e);
    visitOptional(d->initValue);
    visitOptional(d->initFile);
  }
  currentFunction = saved;
}

void IRVisitor::visitFunction(const Function &f) {
  const Function *saved = currentFunction;
  currentFunction = &f;
  visitBody(f.body);
  currentFunction = saved;
}

void IRVisitor::visitBody(const Body &b) {
  for (const auto &s : b.stmts)
    visitStmt(*s);
}

void IRVisitor::visitStmt(const Stmt &s) {
  switch (s.kind) {
  case StmtKind::Decl:
    return visitDecl(cast<DeclStmt>(s));
  case StmtKind::Assign:
    return visitAssign(cast<AssignStmt>(s));
  case StmtKind::Eval:
    return visitEval(cast<EvalStmt>(s));
  case StmtKind::If:
    return visitIf(cast<IfStmt>(s));
  case StmtKind::For:
    return visitFor(cast<ForStmt>(s));
  case StmtKind::While:
    return visitWhile(cast<WhileStmt>(s));
  case StmtKind::Break:
    return visitBreak(cast<BreakStmt>(s));
  case StmtKind::Continue:
    return visitContinue(cast<ContinueStmt>(s));
  case StmtKind::Return:
    return visitReturn(cast<ReturnStmt>(s));
  case StmtKind::ParLoop:
    return visitParLoop(cast<ParLoopStmt>(s));
  case StmtKind::Swap:
    return visitSwap(cast<SwapStmt>(s));
  case StmtKind::Write:
  case StmtKind::Read:
    return visitDatIO(cast<DatIOStmt>(s));
  case StmtKind::Print:
    return visitPrint(cast<PrintStmt>(s));
  case StmtKind::Solve:
    return visitSolve(cast<SolveStmt>(s));
  case StmtKind::Adjoint:
    return visitAdjoint(cast<AdjointStmt>(s));
  case StmtKind::Tangent:
    return visitTangent(cast<TangentStmt>(s));
  case StmtKind::Tape:
    return visitTape(cast<TapeStmt>(s));
  case StmtKind::Checkpoint:
    return visitCheckpoint(cast<CheckpointStmt>(s));
  }
  OPDC_UNREACHABLE("unknown IR statement kind");
}

void IRVisitor::visitExpr(const Expr &e) {
  switch (e.kind) {
  case ExprKind::Constant:
    return visitConstant(cast<ConstantExpr>(e));
  case ExprKind::VarRef:
    return visitVarRef(cast<VarRefExpr>(e));
  case ExprKind::ParamRef:
    return visitParamRef(cast<ParamRefExpr>(e));
  case ExprKind::KernelArg:
    return visitKernelArg(cast<KernelArgExpr>(e));
  case ExprKind::Unary:
    return visitUnary(cast<UnaryExpr>(e));
  case ExprKind::Binary:
    return visitBinary(cast<BinaryExpr>(e));
  case ExprKind::Cast:
    return visitCast(cast<CastExpr>(e));
  case ExprKind::Index:
    return visitIndex(cast<IndexExpr>(e));
  case ExprKind::Intrinsic:
    return visitIntrinsic(cast<IntrinsicExpr>(e));
  case ExprKind::Call:
    return visitCall(cast<CallExpr>(e));
  case ExprKind::ArrayLit:
    return visitArrayLit(cast<ArrayLitExpr>(e));
  case ExprKind::SizeOf:
    return visitSizeOf(cast<SizeOfExpr>(e));
  }
  OPDC_UNREACHABLE("unknown IR expression kind");
}

void IRVisitor::visitDecl(const DeclStmt &s) { visitOptional(s.init); }

void IRVisitor::visitAssign(const AssignStmt &s) {
  visitOptional(s.target);
  visitOptional(s.value);
}

void IRVisitor::visitEval(const EvalStmt &s) { visitOptional(s.expr); }

void IRVisitor::visitIf(const IfStmt &s) {
  visitOptional(s.cond);
  visitBody(s.thenBody);
  visitBody(s.elseBody);
}

void IRVisitor::visitFor(const ForStmt &s) {
  visitOptional(s.lo);
  visitOptional(s.hi);
  visitBody(s.body);
}

void IRVisitor::visitWhile(const WhileStmt &s) {
  visitOptional(s.cond);
  visitBody(s.body);
}

void IRVisitor::visitReturn(const ReturnStmt &s) { visitOptional(s.value); }

void IRVisitor::visitParLoop(const ParLoopStmt &s) {
  for (const auto &r : s.ranges) {
    visitOptional(r.lo);
    visitOptional(r.hi);
  }
  for (const auto &a : s.args)
    visitOptional(a.value);
}

void IRVisitor::visitDatIO(const DatIOStmt &s) {
  visitOptional(s.file);
  for (const auto &r : s.ranges) {
    visitOptional(r.lo);
    visitOptional(r.hi);
  }
}

void IRVisitor::visitPrint(const PrintStmt &s) {
  for (const auto &a : s.args)
    visitOptional(a);
}

void IRVisitor::visitSolve(const SolveStmt &s) {
  for (const auto &r : s.ranges) {
    visitOptional(r.lo);
    visitOptional(r.hi);
  }
  visitOptional(s.tol);
  visitOptional(s.maxiter);
  visitOptional(s.warn);
}

void IRVisitor::visitAdjoint(const AdjointStmt &s) { visitDerivative(s); }

void IRVisitor::visitTangent(const TangentStmt &s) { visitDerivative(s); }

void IRVisitor::visitCheckpoint(const CheckpointStmt &s) {
  visitOptional(s.lo);
  visitOptional(s.hi);
  visitOptional(s.snapshots);
  visitBody(s.body);
  visitBody(s.reverseBody);
  visitBody(s.tapedBody);
  visitBody(s.tapedReverseBody);
}

void IRVisitor::visitDerivative(const DerivativeStmt &s) {
  for (const auto &a : s.args)
    visitOptional(a);
  for (const auto &e : s.entries)
    visitOptional(e.value);
  if (auto *a = dyn_cast<AdjointStmt>(&s))
    visitOptional(a->checkpoints);
}

void IRVisitor::visitUnary(const UnaryExpr &e) { visitOptional(e.operand); }

void IRVisitor::visitBinary(const BinaryExpr &e) {
  visitOptional(e.lhs);
  visitOptional(e.rhs);
}

void IRVisitor::visitCast(const CastExpr &e) { visitOptional(e.operand); }

void IRVisitor::visitIndex(const IndexExpr &e) {
  visitOptional(e.base);
  visitOptional(e.index);
}

void IRVisitor::visitIntrinsic(const IntrinsicExpr &e) {
  for (const auto &a : e.args)
    visitOptional(a);
}

void IRVisitor::visitCall(const CallExpr &e) {
  for (const auto &a : e.args)
    visitOptional(a);
}

void IRVisitor::visitArrayLit(const ArrayLitExpr &e) {
  for (const auto &a : e.elements)
    visitOptional(a);
}

} // namespace opdc::ir
