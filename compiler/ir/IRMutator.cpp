// IRMutator.cpp - Default traversal of the rewriting IR walker.
// SPDX-License-Identifier: Apache-2.0
#include "ir/IRMutator.h"

#include "support/Assert.h"

namespace opdc::ir {

namespace {
/// Moves \p p into a unique_ptr of its dynamic type (checked by the caller's
/// switch on the kind tag).
template <typename T, typename Base>
std::unique_ptr<T> downcast(std::unique_ptr<Base> p) {
  return std::unique_ptr<T>(static_cast<T *>(p.release()));
}
} // namespace

IRMutator::~IRMutator() = default;

void IRMutator::mutateProgram(Program &p) {
  mutateGlobals(p);
  for (Function *f : p.functions())
    mutateFunction(*f);
}

void IRMutator::mutateGlobals(Program &p) {
  Function *saved = currentFunction;
  currentFunction = nullptr;
  for (auto &s : p.sets) {
    mutateInPlace(s->fromFile);
    mutateInPlace(s->size);
  }
  for (auto &m : p.maps)
    mutateInPlace(m->fromFile);
  for (auto &d : p.dats) {
    mutateAll(d->size);
    mutateInPlace(d->initValue);
    mutateInPlace(d->initFile);
  }
  currentFunction = saved;
}

void IRMutator::mutateFunction(Function &f) {
  Function *saved = currentFunction;
  currentFunction = &f;
  mutateBody(f.body);
  currentFunction = saved;
}

void IRMutator::mutateBody(Body &b) {
  std::vector<StmtPtr> out;
  out.reserve(b.stmts.size());
  for (auto &s : b.stmts)
    for (auto &r : mutateStmt(std::move(s)))
      if (r)
        out.push_back(std::move(r));
  b.stmts = std::move(out);
}

std::vector<StmtPtr> IRMutator::mutateStmt(StmtPtr s) {
  StmtPtr r;
  switch (s->kind) {
  case StmtKind::Decl:
    r = mutateDecl(downcast<DeclStmt>(std::move(s)));
    break;
  case StmtKind::Assign:
    r = mutateAssign(downcast<AssignStmt>(std::move(s)));
    break;
  case StmtKind::Eval:
    r = mutateEval(downcast<EvalStmt>(std::move(s)));
    break;
  case StmtKind::If:
    r = mutateIf(downcast<IfStmt>(std::move(s)));
    break;
  case StmtKind::For:
    r = mutateFor(downcast<ForStmt>(std::move(s)));
    break;
  case StmtKind::While:
    r = mutateWhile(downcast<WhileStmt>(std::move(s)));
    break;
  case StmtKind::Break:
    r = mutateBreak(downcast<BreakStmt>(std::move(s)));
    break;
  case StmtKind::Continue:
    r = mutateContinue(downcast<ContinueStmt>(std::move(s)));
    break;
  case StmtKind::Return:
    r = mutateReturn(downcast<ReturnStmt>(std::move(s)));
    break;
  case StmtKind::ParLoop:
    r = mutateParLoop(downcast<ParLoopStmt>(std::move(s)));
    break;
  case StmtKind::Swap:
    r = mutateSwap(downcast<SwapStmt>(std::move(s)));
    break;
  case StmtKind::Write:
  case StmtKind::Read:
    r = mutateDatIO(downcast<DatIOStmt>(std::move(s)));
    break;
  case StmtKind::Print:
    r = mutatePrint(downcast<PrintStmt>(std::move(s)));
    break;
  case StmtKind::Solve:
    r = mutateSolve(downcast<SolveStmt>(std::move(s)));
    break;
  case StmtKind::Adjoint:
    r = mutateAdjoint(downcast<AdjointStmt>(std::move(s)));
    break;
  case StmtKind::Tangent:
    r = mutateTangent(downcast<TangentStmt>(std::move(s)));
    break;
  case StmtKind::Tape:
    r = mutateTape(downcast<TapeStmt>(std::move(s)));
    break;
  case StmtKind::Checkpoint:
    r = mutateCheckpoint(downcast<CheckpointStmt>(std::move(s)));
    break;
  }
  std::vector<StmtPtr> out;
  if (r)
    out.push_back(std::move(r));
  return out;
}

ExprPtr IRMutator::mutateExpr(ExprPtr e) {
  if (!e)
    return e;
  switch (e->kind) {
  case ExprKind::Constant:
    return mutateConstant(downcast<ConstantExpr>(std::move(e)));
  case ExprKind::VarRef:
    return mutateVarRef(downcast<VarRefExpr>(std::move(e)));
  case ExprKind::ParamRef:
    return mutateParamRef(downcast<ParamRefExpr>(std::move(e)));
  case ExprKind::KernelArg:
    return mutateKernelArg(downcast<KernelArgExpr>(std::move(e)));
  case ExprKind::Unary:
    return mutateUnary(downcast<UnaryExpr>(std::move(e)));
  case ExprKind::Binary:
    return mutateBinary(downcast<BinaryExpr>(std::move(e)));
  case ExprKind::Cast:
    return mutateCast(downcast<CastExpr>(std::move(e)));
  case ExprKind::Index:
    return mutateIndex(downcast<IndexExpr>(std::move(e)));
  case ExprKind::Intrinsic:
    return mutateIntrinsic(downcast<IntrinsicExpr>(std::move(e)));
  case ExprKind::Call:
    return mutateCall(downcast<CallExpr>(std::move(e)));
  case ExprKind::ArrayLit:
    return mutateArrayLit(downcast<ArrayLitExpr>(std::move(e)));
  case ExprKind::SizeOf:
    return mutateSizeOf(downcast<SizeOfExpr>(std::move(e)));
  }
  OPDC_UNREACHABLE("unknown IR expression kind");
}

void IRMutator::mutateAll(std::vector<ExprPtr> &v) {
  for (auto &e : v)
    mutateInPlace(e);
}

StmtPtr IRMutator::mutateDecl(std::unique_ptr<DeclStmt> s) {
  mutateInPlace(s->init);
  return s;
}

StmtPtr IRMutator::mutateAssign(std::unique_ptr<AssignStmt> s) {
  mutateInPlace(s->target);
  mutateInPlace(s->value);
  return s;
}

StmtPtr IRMutator::mutateEval(std::unique_ptr<EvalStmt> s) {
  mutateInPlace(s->expr);
  return s;
}

StmtPtr IRMutator::mutateIf(std::unique_ptr<IfStmt> s) {
  mutateInPlace(s->cond);
  mutateBody(s->thenBody);
  mutateBody(s->elseBody);
  return s;
}

StmtPtr IRMutator::mutateFor(std::unique_ptr<ForStmt> s) {
  mutateInPlace(s->lo);
  mutateInPlace(s->hi);
  mutateBody(s->body);
  return s;
}

StmtPtr IRMutator::mutateWhile(std::unique_ptr<WhileStmt> s) {
  mutateInPlace(s->cond);
  mutateBody(s->body);
  return s;
}

StmtPtr IRMutator::mutateReturn(std::unique_ptr<ReturnStmt> s) {
  mutateInPlace(s->value);
  return s;
}

StmtPtr IRMutator::mutateParLoop(std::unique_ptr<ParLoopStmt> s) {
  for (auto &r : s->ranges) {
    mutateInPlace(r.lo);
    mutateInPlace(r.hi);
  }
  for (auto &a : s->args)
    mutateInPlace(a.value);
  return s;
}

StmtPtr IRMutator::mutateDatIO(std::unique_ptr<DatIOStmt> s) {
  mutateInPlace(s->file);
  for (auto &r : s->ranges) {
    mutateInPlace(r.lo);
    mutateInPlace(r.hi);
  }
  return s;
}

StmtPtr IRMutator::mutatePrint(std::unique_ptr<PrintStmt> s) {
  mutateAll(s->args);
  return s;
}

StmtPtr IRMutator::mutateSolve(std::unique_ptr<SolveStmt> s) {
  for (auto &r : s->ranges) {
    mutateInPlace(r.lo);
    mutateInPlace(r.hi);
  }
  mutateInPlace(s->tol);
  mutateInPlace(s->maxiter);
  mutateInPlace(s->warn);
  return s;
}

StmtPtr IRMutator::mutateAdjoint(std::unique_ptr<AdjointStmt> s) {
  mutateDerivative(*s);
  mutateInPlace(s->checkpoints);
  return s;
}

StmtPtr IRMutator::mutateTangent(std::unique_ptr<TangentStmt> s) {
  mutateDerivative(*s);
  return s;
}

StmtPtr IRMutator::mutateCheckpoint(std::unique_ptr<CheckpointStmt> s) {
  mutateInPlace(s->lo);
  mutateInPlace(s->hi);
  mutateInPlace(s->snapshots);
  mutateBody(s->body);
  mutateBody(s->reverseBody);
  mutateBody(s->tapedBody);
  mutateBody(s->tapedReverseBody);
  return s;
}

void IRMutator::mutateDerivative(DerivativeStmt &s) {
  mutateAll(s.args);
  for (auto &e : s.entries)
    mutateInPlace(e.value);
}

ExprPtr IRMutator::mutateUnary(std::unique_ptr<UnaryExpr> e) {
  mutateInPlace(e->operand);
  return e;
}

ExprPtr IRMutator::mutateBinary(std::unique_ptr<BinaryExpr> e) {
  mutateInPlace(e->lhs);
  mutateInPlace(e->rhs);
  return e;
}

ExprPtr IRMutator::mutateCast(std::unique_ptr<CastExpr> e) {
  mutateInPlace(e->operand);
  return e;
}

ExprPtr IRMutator::mutateIndex(std::unique_ptr<IndexExpr> e) {
  mutateInPlace(e->base);
  mutateInPlace(e->index);
  return e;
}

ExprPtr IRMutator::mutateIntrinsic(std::unique_ptr<IntrinsicExpr> e) {
  mutateAll(e->args);
  return e;
}

ExprPtr IRMutator::mutateCall(std::unique_ptr<CallExpr> e) {
  mutateAll(e->args);
  return e;
}

ExprPtr IRMutator::mutateArrayLit(std::unique_ptr<ArrayLitExpr> e) {
  mutateAll(e->elements);
  return e;
}

} // namespace opdc::ir
