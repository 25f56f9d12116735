// AST.cpp - Cloning of AST expressions and names of declaration kinds.
// SPDX-License-Identifier: Apache-2.0
#include "ast/AST.h"

#include "llvm/Support/Casting.h"

namespace opdc::ast {

namespace {
ExprPtr cloneOrNull(const ExprPtr &e) { return e ? e->clone() : nullptr; }

template <typename T> std::unique_ptr<T> withAnnotations(const Expr &from, std::unique_ptr<T> to) {
  to->type = from.type;
  to->constValue = from.constValue;
  return to;
}
} // namespace

ExprPtr IntLitExpr::clone() const {
  return withAnnotations(*this, std::make_unique<IntLitExpr>(range, value, forceI64));
}
ExprPtr FloatLitExpr::clone() const {
  return withAnnotations(*this, std::make_unique<FloatLitExpr>(range, value, isF32, spelling));
}
ExprPtr BoolLitExpr::clone() const {
  return withAnnotations(*this, std::make_unique<BoolLitExpr>(range, value));
}
ExprPtr StringLitExpr::clone() const {
  return withAnnotations(*this, std::make_unique<StringLitExpr>(range, value));
}
ExprPtr NameExpr::clone() const {
  auto c = std::make_unique<NameExpr>(range, name);
  c->decl = decl;
  return withAnnotations(*this, std::move(c));
}
ExprPtr UnaryExpr::clone() const {
  return withAnnotations(*this, std::make_unique<UnaryExpr>(range, op, operand->clone()));
}
ExprPtr BinaryExpr::clone() const {
  return withAnnotations(*this, std::make_unique<BinaryExpr>(range, op, opRange, lhs->clone(),
                                                             rhs->clone()));
}
ExprPtr CallExpr::clone() const {
  std::vector<ExprPtr> a;
  for (auto &e : args)
    a.push_back(e->clone());
  auto c = std::make_unique<CallExpr>(range, callee, calleeRange, std::move(a));
  c->target = target;
  c->intrinsic = intrinsic;
  c->calleeDecl = calleeDecl;
  c->stencilOffset = stencilOffset;
  return withAnnotations(*this, std::move(c));
}
ExprPtr CastExpr::clone() const {
  return withAnnotations(*this, std::make_unique<CastExpr>(range, to, operand->clone()));
}
ExprPtr IndexExpr::clone() const {
  return withAnnotations(*this, std::make_unique<IndexExpr>(range, base->clone(), index->clone()));
}
ExprPtr MemberExpr::clone() const {
  auto c = std::make_unique<MemberExpr>(range, base->clone(), field, fieldRange);
  c->decl = decl;
  return withAnnotations(*this, std::move(c));
}
ExprPtr ArrayLitExpr::clone() const {
  std::vector<ExprPtr> e;
  for (auto &x : elements)
    e.push_back(x->clone());
  return withAnnotations(*this, std::make_unique<ArrayLitExpr>(range, std::move(e)));
}

TypeRef TypeRef::clone() const {
  TypeRef t;
  t.range = range;
  t.scalar = scalar;
  t.isString = isString;
  t.length = cloneOrNull(length);
  t.resolved = resolved;
  return t;
}

RangeExpr RangeExpr::clone() const {
  RangeExpr r;
  r.range = range;
  r.lo = cloneOrNull(lo);
  r.hi = cloneOrNull(hi);
  r.inclusive = inclusive;
  return r;
}

VarDeclStmt::VarDeclStmt(SourceRange r, std::unique_ptr<VarDecl> v)
    : Stmt(StmtKind::VarDecl, r), var(std::move(v)) {}
VarDeclStmt::~VarDeclStmt() = default;

ForStmt::ForStmt(SourceRange r, std::unique_ptr<VarDecl> v, RangeExpr b,
                 std::unique_ptr<Block> bd)
    : Stmt(StmtKind::For, r), var(std::move(v)), bounds(std::move(b)),
      body(std::move(bd)) {}
ForStmt::~ForStmt() = default;

SolveStmt::SolveStmt(SourceRange r) : Stmt(StmtKind::Solve, r) {}
SolveStmt::~SolveStmt() = default;

AdjointStmt::AdjointStmt(SourceRange r)
    : DerivativeStmt(StmtKind::Adjoint, r) {}
AdjointStmt::~AdjointStmt() = default;
TangentStmt::TangentStmt(SourceRange r)
    : DerivativeStmt(StmtKind::Tangent, r) {}
TangentStmt::~TangentStmt() = default;

size_t DerivativeStmt::numTargets() const {
  if (auto *a = llvm::dyn_cast<AdjointStmt>(this))
    return a->wrt.size();
  return llvm::cast<TangentStmt>(this)->along.size();
}

NameRef &DerivativeStmt::target(size_t i) {
  if (auto *a = llvm::dyn_cast<AdjointStmt>(this))
    return a->wrt[i];
  return llvm::cast<TangentStmt>(this)->along[i].target;
}

VarDecl *DerivativeStmt::resultDecl() const {
  if (auto *a = llvm::dyn_cast<AdjointStmt>(this))
    return a->value.get();
  return llvm::cast<TangentStmt>(this)->result.get();
}

const char *declKindName(DeclKind k) {
  switch (k) {
  case DeclKind::Const: return "const";
  case DeclKind::Param: return "param";
  case DeclKind::Set: return "set";
  case DeclKind::Map: return "map";
  case DeclKind::Dat: return "dat";
  case DeclKind::Block: return "block";
  case DeclKind::Stencil: return "stencil";
  case DeclKind::Kernel: return "kernel";
  case DeclKind::KernelParam: return "kernel parameter";
  case DeclKind::Fn: return "fn";
  case DeclKind::Proc: return "proc";
  case DeclKind::Main: return "main";
  case DeclKind::Var: return "variable";
  case DeclKind::Gradient: return "gradient";
  }
  return "?";
}

} // namespace opdc::ast
