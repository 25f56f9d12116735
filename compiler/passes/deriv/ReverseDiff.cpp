// ReverseDiff.cpp - Reverse-mode (adjoint) differentiation of IR expressions
// and assignments.
// SPDX-License-Identifier: Apache-2.0
//
// Expressions: accumulate(e, s) pushes the seed s down e's tree (a + b:
// both get s; a * b: a gets s b, b gets a s; a / b: a gets s / b, b gets
// -s a / b^2; select(c, a, b): a gets select(c, s, 0); an intrinsic f: its
// argument i gets the directional derivative of f along s in argument i,
// from the same table as the tangent (ForwardDiff.cpp: intrinsicDerivative),
// so both modes differentiate every intrinsic identically). A seed used
// twice is first stored in a variable.
//
// Kernels (buildAdjointKernel): KernelAdjoint.cpp.
#include "passes/deriv/ReverseDiff.h"
#include "passes/deriv/ReverseDiffBuild.h"

#include "passes/deriv/ForwardDiff.h"
#include "passes/kernels/Inline.h"
#include "passes/utils/BodyUtils.h"

#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"
#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

#include <map>

namespace opdc {

using namespace ir;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;
using namespace rdiff;

//===----------------------------------------------------------------------===//
// Expressions and assignments
//===----------------------------------------------------------------------===//

unsigned ReverseDiff::temp(const std::string &name, Type t) {
  unsigned s = fn.addVar(name, t, true);
  declared.push_back(s);
  return s;
}

unsigned ReverseDiff::adjointSlot(unsigned slot) {
  if (adjoint.size() < fn.vars.size())
    adjoint.resize(fn.vars.size(), -1);
  if (adjoint[slot] < 0) {
    const Var v = fn.vars[slot];
    adjoint[slot] = int(temp(v.name + ".b", v.type));
    adjoint.resize(fn.vars.size(), -1);
  }
  return unsigned(adjoint[slot]);
}

std::vector<StmtPtr> ReverseDiff::takeDecls() {
  std::vector<StmtPtr> out;
  for (; declaredUpTo < declared.size(); ++declaredUpTo) {
    unsigned s = declared[declaredUpTo];
    out.push_back(std::make_unique<DeclStmt>(s, zero(fn.vars[s].type)));
  }
  return out;
}

ExprPtr ReverseDiff::bind(ExprPtr value, std::vector<StmtPtr> &out) {
  if (isa<VarRefExpr>(*value) || isa<ConstantExpr>(*value))
    return value;
  Type t = value->type;
  unsigned s = temp("adj.t", t);
  out.push_back(assign(AssignOp::Set, ref(s, t), std::move(value)));
  return ref(s, t);
}

ExprPtr ReverseDiff::adjointOf(const Expr &target) {
  if (auto *v = dyn_cast<VarRefExpr>(&target)) {
    if (isActive && !isActive(v->slot))
      return nullptr;
    return ref(adjointSlot(v->slot), v->type);
  }
  if (auto *i = dyn_cast<IndexExpr>(&target)) {
    ExprPtr base = adjointOf(*i->base);
    if (!base)
      return nullptr;
    return index(std::move(base), i->index->clone());
  }
  return nullptr;
}

void ReverseDiff::addTo(ExprPtr lvalue, ExprPtr seed,
                        std::vector<StmtPtr> &out) {
  Type t = lvalue->type;
  if (!t.isArray()) {
    out.push_back(assign(AssignOp::Add, std::move(lvalue), std::move(seed)));
    return;
  }
  // Arrays component by component (+= is for scalars).
  seed = bind(std::move(seed), out);
  for (unsigned c = 0; c < t.dim(); ++c)
    out.push_back(assign(AssignOp::Add, index(lvalue->clone(), cint(c)),
                         index(seed->clone(), cint(c))));
}

void ReverseDiff::accumulate(const Expr &e, ExprPtr seed,
                             std::vector<StmtPtr> &out) {
  if (!isFloatType(e.type) || !seed)
    return;
  switch (e.kind) {
  case ExprKind::Constant:
  case ExprKind::ParamRef:
  case ExprKind::SizeOf:
    return;
  case ExprKind::VarRef: {
    ExprPtr a = adjointOf(e);
    if (a)
      addTo(std::move(a), std::move(seed), out);
    return;
  }
  case ExprKind::KernelArg:
    if (onKernelArg)
      onKernelArg(cast<KernelArgExpr>(e), nullptr, std::move(seed), out);
    return;
  case ExprKind::Unary: {
    const auto &u = cast<UnaryExpr>(e);
    if (u.op == UnaryOp::Neg)
      accumulate(*u.operand, neg(std::move(seed)), out);
    return;
  }
  case ExprKind::Binary: {
    const auto &b = cast<BinaryExpr>(e);
    switch (b.op) {
    case BinaryOp::Add:
    case BinaryOp::Sub: {
      seed = bind(std::move(seed), out);
      accumulate(*b.lhs, seed->clone(), out);
      accumulate(*b.rhs,
                 b.op == BinaryOp::Add ? std::move(seed) : neg(std::move(seed)),
                 out);
      return;
    }
    case BinaryOp::Mul:
      seed = bind(std::move(seed), out);
      accumulate(*b.lhs, bin(BinaryOp::Mul, seed->clone(), b.rhs->clone()),
                 out);
      accumulate(*b.rhs, bin(BinaryOp::Mul, b.lhs->clone(), std::move(seed)),
                 out);
      return;
    case BinaryOp::Div:
      seed = bind(std::move(seed), out);
      accumulate(*b.lhs, bin(BinaryOp::Div, seed->clone(), b.rhs->clone()),
                 out);
      accumulate(*b.rhs,
                 neg(bin(BinaryOp::Div,
                         bin(BinaryOp::Mul, std::move(seed), b.lhs->clone()),
                         bin(BinaryOp::Mul, b.rhs->clone(), b.rhs->clone()))),
                 out);
      return;
    default:
      return; // comparisons, logic, bits: not float-valued
    }
  }
  case ExprKind::Cast: {
    const auto &c = cast<CastExpr>(e);
    if (isFloatType(c.operand->type))
      accumulate(
          *c.operand,
          std::make_unique<CastExpr>(c.operand->type.scalar, std::move(seed)),
          out);
    return;
  }
  case ExprKind::Index: {
    const auto &i = cast<IndexExpr>(e);
    accumulateElem(*i.base, *i.index, std::move(seed), out);
    return;
  }
  case ExprKind::ArrayLit: {
    const auto &a = cast<ArrayLitExpr>(e);
    seed = bind(std::move(seed), out);
    for (size_t i = 0; i < a.elements.size(); ++i)
      accumulate(*a.elements[i], index(seed->clone(), cint(int64_t(i))), out);
    return;
  }
  case ExprKind::Intrinsic: {
    const auto &in = cast<IntrinsicExpr>(e);
    seed = bind(std::move(seed), out);
    if (in.id == Intrinsic::Select) {
      accumulate(*in.args[1],
                 select(in.args[0]->clone(), seed->clone(), zero(e.type)), out);
      accumulate(*in.args[2],
                 select(in.args[0]->clone(), zero(e.type), seed->clone()), out);
      return;
    }
    for (size_t i = 0; i < in.args.size(); ++i) {
      if (!isFloatType(in.args[i]->type))
        continue;
      ExprPtr d = intrinsicDerivative(
          in,
          [&](size_t j) -> ExprPtr { return j == i ? seed->clone() : nullptr; },
          diags, failed);
      if (d)
        accumulate(*in.args[i], std::move(d), out);
    }
    return;
  }
  case ExprKind::Call:
    diags.error(e.range, "cannot differentiate through the call of '" +
                             cast<CallExpr>(e).callee->name +
                             "' (it could not be inlined; see -Rpass=inline)");
    failed = true;
    return;
  }
}

void ReverseDiff::accumulateElem(const Expr &base, const Expr &idx,
                                 ExprPtr seed, std::vector<StmtPtr> &out) {
  switch (base.kind) {
  case ExprKind::VarRef: {
    ExprPtr a = adjointOf(base);
    if (a)
      out.push_back(assign(AssignOp::Add, index(std::move(a), idx.clone()),
                           std::move(seed)));
    return;
  }
  case ExprKind::KernelArg:
    if (onKernelArg)
      onKernelArg(cast<KernelArgExpr>(base), &idx, std::move(seed), out);
    return;
  case ExprKind::Constant:
    return;
  case ExprKind::ArrayLit: {
    // A component chosen at run time: each element gets the seed when it
    // is the one chosen.
    const auto &a = cast<ArrayLitExpr>(base);
    seed = bind(std::move(seed), out);
    for (size_t i = 0; i < a.elements.size(); ++i) {
      ExprPtr chosen = bin(BinaryOp::Eq, idx.clone(),
                           std::make_unique<ConstantExpr>(
                               ConstValue::ofInt(idx.type.scalar, int64_t(i))));
      accumulate(
          *a.elements[i],
          select(std::move(chosen), seed->clone(), zero(a.elements[i]->type)),
          out);
    }
    return;
  }
  case ExprKind::Intrinsic: {
    const auto &in = cast<IntrinsicExpr>(base);
    if (in.id == Intrinsic::Select) {
      seed = bind(std::move(seed), out);
      Type st = Type::scalarOf(base.type.scalar);
      accumulateElem(*in.args[1], idx,
                     select(in.args[0]->clone(), seed->clone(), zero(st)), out);
      accumulateElem(*in.args[2], idx,
                     select(in.args[0]->clone(), zero(st), seed->clone()), out);
      return;
    }
    break;
  }
  default:
    break;
  }
  diags.error(base.range,
              "cannot differentiate a component of this array expression");
  failed = true;
}

void ReverseDiff::assignAdjoint(const AssignStmt &s,
                                std::vector<StmtPtr> &out) {
  if (!isFloatType(s.target->type))
    return;
  ExprPtr adj = adjointOf(*s.target);
  if (!adj)
    return;
  Type t = s.target->type;
  switch (s.op) {
  case AssignOp::Set: {
    // g = adj(t); adj(t) = 0; the value's leaves get g.
    unsigned keep = temp("adj.g", t);
    out.push_back(assign(AssignOp::Set, ref(keep, t), adj->clone()));
    out.push_back(assign(AssignOp::Set, std::move(adj), zero(t)));
    accumulate(*s.value, ref(keep, t), out);
    return;
  }
  case AssignOp::Add:
    accumulate(*s.value, std::move(adj), out);
    return;
  case AssignOp::Sub:
    accumulate(*s.value, neg(std::move(adj)), out);
    return;
  case AssignOp::Mul:
  case AssignOp::Div: {
    unsigned keep = temp("adj.g", t);
    out.push_back(assign(AssignOp::Set, ref(keep, t), adj->clone()));
    bool mul = s.op == AssignOp::Mul;
    // t = t * v: adj(t) = g v, adj(v) += g t.  t = t / v: adj(t) = g / v,
    // adj(v) += -g t / v^2.
    out.push_back(assign(AssignOp::Set, std::move(adj),
                         bin(mul ? BinaryOp::Mul : BinaryOp::Div, ref(keep, t),
                             s.value->clone())));
    ExprPtr dv = bin(BinaryOp::Mul, ref(keep, t), s.target->clone());
    if (!mul)
      dv = neg(bin(BinaryOp::Div, std::move(dv),
                   bin(BinaryOp::Mul, s.value->clone(), s.value->clone())));
    accumulate(*s.value, std::move(dv), out);
    return;
  }
  default:
    return;
  }
}

} // namespace opdc
