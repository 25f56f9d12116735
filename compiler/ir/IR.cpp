// IR.cpp - Program IR node construction, cloning and enumeration names.
// SPDX-License-Identifier: Apache-2.0
#include "ir/IR.h"

#include <cmath>

namespace opdc::ir {

//===----------------------------------------------------------------------===//
// Enumeration names
//===----------------------------------------------------------------------===//

const char *solverName(SolverKind k) {
  switch (k) {
  case SolverKind::Tridiagonal:
    return "tridiagonal";
  case SolverKind::CG:
    return "cg";
  }
  return "?";
}

const char *functionKindName(FunctionKind k) {
  switch (k) {
  case FunctionKind::Kernel:
    return "kernel";
  case FunctionKind::Fn:
    return "fn";
  case FunctionKind::Proc:
    return "proc";
  case FunctionKind::Main:
    return "main";
  }
  return "?";
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

namespace {
std::vector<ExprPtr> cloneAll(const std::vector<ExprPtr> &v) {
  std::vector<ExprPtr> out;
  out.reserve(v.size());
  for (const auto &e : v)
    out.push_back(cloneExpr(e));
  return out;
}

Type typeOr(const ExprPtr &e, Type fallback) { return e ? e->type : fallback; }
} // namespace

ExprPtr ConstantExpr::clone() const {
  return std::make_unique<ConstantExpr>(value, range);
}

ExprPtr VarRefExpr::clone() const {
  return std::make_unique<VarRefExpr>(slot, type, range);
}

ParamRefExpr::ParamRefExpr(Param *p, SourceRange r)
    : Expr(ExprKind::ParamRef, p ? p->type : Type::error(), r), param(p) {}

ExprPtr ParamRefExpr::clone() const {
  auto c = std::make_unique<ParamRefExpr>(param, range);
  c->type = type;
  return c;
}

ExprPtr KernelArgExpr::clone() const {
  return std::make_unique<KernelArgExpr>(index, type, offset, range);
}

UnaryExpr::UnaryExpr(UnaryOp o, ExprPtr e, SourceRange r)
    : Expr(ExprKind::Unary,
           o == UnaryOp::Not ? Type::scalarOf(ScalarKind::Bool)
                             : typeOr(e, Type::error()),
           r),
      op(o), operand(std::move(e)) {}

ExprPtr UnaryExpr::clone() const {
  return std::make_unique<UnaryExpr>(op, cloneExpr(operand), range);
}

BinaryExpr::BinaryExpr(BinaryOp o, ExprPtr l, ExprPtr rr, SourceRange r)
    : Expr(ExprKind::Binary,
           isComparison(o) || isLogical(o) ? Type::scalarOf(ScalarKind::Bool)
                                           : typeOr(l, Type::error()),
           r),
      op(o), lhs(std::move(l)), rhs(std::move(rr)) {}

ExprPtr BinaryExpr::clone() const {
  return std::make_unique<BinaryExpr>(op, cloneExpr(lhs), cloneExpr(rhs),
                                      range);
}

CastExpr::CastExpr(ScalarKind to, ExprPtr e, SourceRange r)
    : Expr(ExprKind::Cast, Type::scalarOf(to), r), operand(std::move(e)) {}

ExprPtr CastExpr::clone() const {
  return std::make_unique<CastExpr>(to(), cloneExpr(operand), range);
}

IndexExpr::IndexExpr(ExprPtr b, ExprPtr i, SourceRange r)
    : Expr(ExprKind::Index,
           b && b->type.isArray() ? Type::scalarOf(b->type.scalar)
                                  : Type::error(),
           r),
      base(std::move(b)), index(std::move(i)) {}

ExprPtr IndexExpr::clone() const {
  return std::make_unique<IndexExpr>(cloneExpr(base), cloneExpr(index), range);
}

Type intrinsicResultType(Intrinsic id, const std::vector<ExprPtr> &args) {
  switch (id) {
  case Intrinsic::Wtime:
  case Intrinsic::RngUniform:
  case Intrinsic::RngNormal:
    return Type::scalarOf(ScalarKind::F64);
  case Intrinsic::Idx:
    return Type::scalarOf(ScalarKind::I32);
  case Intrinsic::IsNan:
  case Intrinsic::IsFinite:
    return Type::scalarOf(ScalarKind::Bool);
  case Intrinsic::Select:
    return args.size() > 1 && args[1] ? args[1]->type : Type::error();
  default:
    return !args.empty() && args[0] ? args[0]->type : Type::error();
  }
}

IntrinsicExpr::IntrinsicExpr(Intrinsic i, std::vector<ExprPtr> a, SourceRange r)
    : Expr(ExprKind::Intrinsic, intrinsicResultType(i, a), r), id(i),
      args(std::move(a)) {}

ExprPtr IntrinsicExpr::clone() const {
  return std::make_unique<IntrinsicExpr>(id, cloneAll(args), range);
}

CallExpr::CallExpr(Function *f, std::vector<ExprPtr> a, SourceRange r)
    : Expr(ExprKind::Call, f ? f->returnType : Type::error(), r), callee(f),
      args(std::move(a)) {}

ExprPtr CallExpr::clone() const {
  auto c = std::make_unique<CallExpr>(callee, cloneAll(args), range);
  c->type = type;
  return c;
}

ArrayLitExpr::ArrayLitExpr(std::vector<ExprPtr> e, SourceRange r)
    : Expr(ExprKind::ArrayLit,
           !e.empty() && e[0]
               ? Type::arrayOf(e[0]->type.scalar, uint32_t(e.size()))
               : Type::error(),
           r),
      elements(std::move(e)) {}

ExprPtr ArrayLitExpr::clone() const {
  return std::make_unique<ArrayLitExpr>(cloneAll(elements), range);
}

ExprPtr SizeOfExpr::clone() const {
  return std::make_unique<SizeOfExpr>(set, dat, dim, type, range);
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

Body Body::clone() const {
  Body b;
  b.stmts.reserve(stmts.size());
  for (const auto &s : stmts)
    b.stmts.push_back(s->clone());
  return b;
}

StmtPtr DeclStmt::clone() const {
  return std::make_unique<DeclStmt>(slot, cloneExpr(init), range);
}

StmtPtr AssignStmt::clone() const {
  return std::make_unique<AssignStmt>(op, cloneExpr(target), cloneExpr(value),
                                      range);
}

StmtPtr EvalStmt::clone() const {
  return std::make_unique<EvalStmt>(cloneExpr(expr), range);
}

StmtPtr IfStmt::clone() const {
  return std::make_unique<IfStmt>(cloneExpr(cond), thenBody.clone(),
                                  elseBody.clone(), range);
}

StmtPtr ForStmt::clone() const {
  return std::make_unique<ForStmt>(slot, cloneExpr(lo), cloneExpr(hi),
                                   body.clone(), range);
}

StmtPtr WhileStmt::clone() const {
  return std::make_unique<WhileStmt>(cloneExpr(cond), body.clone(), range);
}

StmtPtr BreakStmt::clone() const { return std::make_unique<BreakStmt>(range); }

StmtPtr ContinueStmt::clone() const {
  return std::make_unique<ContinueStmt>(range);
}

StmtPtr ReturnStmt::clone() const {
  return std::make_unique<ReturnStmt>(cloneExpr(value), range);
}

AccessDescriptor AccessDescriptor::clone() const {
  AccessDescriptor d;
  d.kind = kind;
  d.mode = mode;
  d.scalar = scalar;
  d.dim = dim;
  d.bytes = bytes;
  d.dat = dat;
  d.map = map;
  d.mapIndex = mapIndex;
  d.stencil = stencil;
  d.value = cloneExpr(value);
  d.var = var;
  d.range = range;
  return d;
}

StmtPtr ParLoopStmt::clone() const {
  auto c = std::make_unique<ParLoopStmt>(range);
  c->kernel = kernel;
  c->set = set;
  c->block = block;
  for (const auto &r : ranges)
    c->ranges.push_back(r.clone());
  for (const auto &a : args)
    c->args.push_back(a.clone());
  c->extendLo = extendLo;
  c->extendHi = extendHi;
  c->haloGroup = haloGroup;
  c->skew = skew;
  return c;
}

StmtPtr SwapStmt::clone() const {
  return std::make_unique<SwapStmt>(a, b, range);
}

StmtPtr DatIOStmt::clone() const {
  auto c = std::make_unique<DatIOStmt>(isRead(), dats, cloneExpr(file), range);
  for (const LoopRange &r : ranges)
    c->ranges.push_back(r.clone());
  return c;
}

StmtPtr PrintStmt::clone() const {
  auto c =
      std::make_unique<PrintStmt>(formatted, format, cloneAll(args), range);
  c->to = to;
  return c;
}

StmtPtr SolveStmt::clone() const {
  auto c = std::make_unique<SolveStmt>(range);
  c->solver = solver;
  c->dats = dats;
  c->along = along;
  c->block = block;
  for (const auto &r : ranges)
    c->ranges.push_back(r.clone());
  c->op = op;
  c->precond = precond;
  c->tol = cloneExpr(tol);
  c->maxiter = cloneExpr(maxiter);
  if (warn)
    c->warn = cloneExpr(warn);
  c->itersVar = itersVar;
  c->residualVar = residualVar;
  c->resultsAssigned = resultsAssigned;
  return c;
}

void DerivativeStmt::cloneInto(DerivativeStmt &c) const {
  c.proc = proc;
  c.args = cloneAll(args);
  for (const auto &e : entries)
    c.entries.push_back(e.clone());
  c.resultVar = resultVar;
}

StmtPtr AdjointStmt::clone() const {
  auto c = std::make_unique<AdjointStmt>(range);
  cloneInto(*c);
  c->checkpoints = cloneExpr(checkpoints);
  return c;
}

StmtPtr TangentStmt::clone() const {
  auto c = std::make_unique<TangentStmt>(range);
  cloneInto(*c);
  return c;
}

StmtPtr TapeStmt::clone() const {
  auto t = std::make_unique<TapeStmt>(push, dats, vars, range);
  t->overwritten = overwritten;
  t->pair = pair;
  return t;
}

StmtPtr CheckpointStmt::clone() const {
  auto c = std::make_unique<CheckpointStmt>(reverse, range);
  c->slot = slot;
  c->lo = cloneExpr(lo);
  c->hi = cloneExpr(hi);
  c->snapshots = cloneExpr(snapshots);
  c->dats = dats;
  c->vars = vars;
  c->body = body.clone();
  c->reverseBody = reverseBody.clone();
  c->tapedBody = tapedBody.clone();
  c->tapedReverseBody = tapedReverseBody.clone();
  return c;
}

//===----------------------------------------------------------------------===//
// Globals, functions, program
//===----------------------------------------------------------------------===//

bool Stencil::contains(const std::vector<int64_t> &offset) const {
  for (const auto &p : points)
    if (p == offset)
      return true;
  return false;
}

bool Stencil::isCentreOnly() const {
  for (const auto &p : points)
    for (int64_t o : p)
      if (o != 0)
        return false;
  return !points.empty();
}

unsigned Function::addVar(std::string n, Type t, bool isMut, SourceRange r) {
  vars.push_back({std::move(n), t, isMut, r});
  return unsigned(vars.size() - 1);
}

std::unique_ptr<Function> Function::clone() const {
  auto f = std::make_unique<Function>();
  f->kind = kind;
  f->name = name;
  f->kernelParams = kernelParams;
  f->params = params;
  f->returnType = returnType;
  f->vars = vars;
  f->body = body.clone();
  f->range = range;
  return f;
}

namespace {
template <typename T>
T *findIn(const std::vector<std::unique_ptr<T>> &v, const std::string &n) {
  for (const auto &x : v)
    if (x->name == n)
      return x.get();
  return nullptr;
}
} // namespace

Const *Program::findConst(const std::string &n) const {
  return findIn(consts, n);
}
Param *Program::findParam(const std::string &n) const {
  return findIn(params, n);
}
Set *Program::findSet(const std::string &n) const { return findIn(sets, n); }
Map *Program::findMap(const std::string &n) const { return findIn(maps, n); }
Block *Program::findBlock(const std::string &n) const {
  return findIn(blocks, n);
}
Stencil *Program::findStencil(const std::string &n) const {
  return findIn(stencils, n);
}
Dat *Program::findDat(const std::string &n) const { return findIn(dats, n); }
Function *Program::findKernel(const std::string &n) const {
  return findIn(kernels, n);
}
Function *Program::findFn(const std::string &n) const { return findIn(fns, n); }
Function *Program::findProc(const std::string &n) const {
  return findIn(procs, n);
}

std::vector<Function *> Program::functions() const {
  std::vector<Function *> out;
  for (const auto *list : {&fns, &kernels, &procs})
    for (const auto &f : *list)
      out.push_back(f.get());
  if (main)
    out.push_back(main.get());
  return out;
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

namespace {
unsigned componentCount(const ConstValue &v) {
  if (v.type.isArray())
    return v.type.length;
  return v.type.isScalar() ? 1 : 0;
}
} // namespace

ConstValue convertConst(const ConstValue &v, Type to) {
  if (v.type.isString() || !(to.isScalar() || to.isArray()) ||
      !(v.type.isScalar() || v.type.isArray()))
    return v;
  ConstValue out;
  out.type = to;
  unsigned n = to.dim();
  unsigned have = componentCount(v);
  for (unsigned i = 0; i < n; ++i) {
    // A scalar broadcasts; a shorter array repeats its last component (never
    // produced by a checked program, kept total for robustness).
    unsigned from = have == 0 ? 0 : (i < have ? i : have - 1);
    bool srcFloat = isFloat(v.type.scalar);
    switch (to.scalar) {
    case ScalarKind::Bool:
      out.ints.push_back(srcFloat ? v.asDouble(from) != 0.0
                                  : v.asInt(from) != 0);
      break;
    case ScalarKind::I32:
    case ScalarKind::I64: {
      int64_t x = 0;
      if (srcFloat) {
        double d = v.asDouble(from);
        x = std::isfinite(d) ? int64_t(d) : 0;
      } else {
        x = v.asInt(from);
      }
      if (to.scalar == ScalarKind::I32)
        x = int64_t(int32_t(uint32_t(uint64_t(x))));
      out.ints.push_back(x);
      break;
    }
    case ScalarKind::F32:
    case ScalarKind::F64: {
      double d = srcFloat ? v.asDouble(from) : double(v.asInt(from));
      out.floats.push_back(to.scalar == ScalarKind::F32 ? double(float(d)) : d);
      break;
    }
    }
  }
  return out;
}

ConstValue zeroOf(Type t) {
  if (t.isString())
    return ConstValue::ofString("");
  return convertConst(ConstValue::ofInt(ScalarKind::I64, 0), t);
}

} // namespace opdc::ir
