// AST.cpp - Cloning and names of the AST's enumerations.
// SPDX-License-Identifier: Apache-2.0
#include "ast/AST.h"

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

AdjointStmt::AdjointStmt(SourceRange r) : Stmt(StmtKind::Adjoint, r) {}
AdjointStmt::~AdjointStmt() = default;
TangentStmt::TangentStmt(SourceRange r) : Stmt(StmtKind::Tangent, r) {}
TangentStmt::~TangentStmt() = default;

const char *spelling(UnaryOp op) { return op == UnaryOp::Neg ? "-" : "!"; }

const char *spelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add: return "+";
  case BinaryOp::Sub: return "-";
  case BinaryOp::Mul: return "*";
  case BinaryOp::Div: return "/";
  case BinaryOp::Rem: return "%";
  case BinaryOp::Eq: return "==";
  case BinaryOp::Ne: return "!=";
  case BinaryOp::Lt: return "<";
  case BinaryOp::Le: return "<=";
  case BinaryOp::Gt: return ">";
  case BinaryOp::Ge: return ">=";
  case BinaryOp::And: return "&&";
  case BinaryOp::Or: return "||";
  }
  return "?";
}

const char *spelling(AssignOp op) {
  switch (op) {
  case AssignOp::Set: return "=";
  case AssignOp::Add: return "+=";
  case AssignOp::Sub: return "-=";
  case AssignOp::Mul: return "*=";
  case AssignOp::Div: return "/=";
  }
  return "?";
}

namespace {
struct IntrinsicName {
  const char *name;
  Intrinsic id;
};
constexpr IntrinsicName intrinsicNames[] = {
    {"sqrt", Intrinsic::Sqrt},   {"abs", Intrinsic::Abs},
    {"exp", Intrinsic::Exp},     {"log", Intrinsic::Log},
    {"pow", Intrinsic::Pow},     {"sin", Intrinsic::Sin},
    {"cos", Intrinsic::Cos},     {"tan", Intrinsic::Tan},
    {"atan", Intrinsic::Atan},   {"atan2", Intrinsic::Atan2},
    {"min", Intrinsic::Min},     {"max", Intrinsic::Max},
    {"floor", Intrinsic::Floor}, {"ceil", Intrinsic::Ceil},
    {"fma", Intrinsic::Fma},     {"select", Intrinsic::Select},
    {"idx", Intrinsic::Idx},     {"size", Intrinsic::Size},
    {"wtime", Intrinsic::Wtime},
};
} // namespace

Intrinsic lookupIntrinsic(const std::string &name) {
  for (auto &n : intrinsicNames)
    if (name == n.name)
      return n.id;
  return Intrinsic::None;
}

const char *intrinsicName(Intrinsic i) {
  for (auto &n : intrinsicNames)
    if (n.id == i)
      return n.name;
  return "<none>";
}

const char *argKindName(ArgKind k) {
  switch (k) {
  case ArgKind::Unresolved: return "unresolved";
  case ArgKind::Direct: return "direct";
  case ArgKind::Indirect: return "indirect";
  case ArgKind::Stencil: return "stencil";
  case ArgKind::MapDirect: return "map";
  case ArgKind::GlobalRead: return "global";
  case ArgKind::Reduction: return "reduction";
  }
  return "?";
}

const char *accessModeName(AccessMode m) {
  switch (m) {
  case AccessMode::Read: return "read";
  case AccessMode::Write: return "out";
  case AccessMode::ReadWrite: return "inout";
  case AccessMode::Inc: return "inc";
  case AccessMode::Min: return "min";
  case AccessMode::Max: return "max";
  case AccessMode::Sum: return "sum";
  }
  return "?";
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
