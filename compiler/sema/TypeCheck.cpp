// TypeCheck.cpp - Types of expressions: names, operators, casts, indexing.
// SPDX-License-Identifier: Apache-2.0
//
// Operands of one operator must have the same scalar type; the only implicit
// conversion is that of an untyped literal to the type its context asks for
// (TypeCheckLiterals.cpp). Calls, intrinsics and stencil reads are checked in
// TypeCheckCalls.cpp.
#include "sema/SemaImpl.h"

#include "llvm/Support/Casting.h"

namespace opdc::sema {

using namespace ast;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

/// The hint's target when two numeric scalar types meet.
ScalarKind widerOf(ScalarKind a, ScalarKind b) {
  if (isFloat(a) && isFloat(b))
    return ScalarKind::F64;
  if (isFloat(a))
    return a;
  if (isFloat(b))
    return b;
  return ScalarKind::I64;
}

} // namespace

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

Type Sema::checkValue(ExprPtr &e) {
  if (!e)
    return Type::error();
  check(e);
  finalize(e);
  if (e->type.isVoid()) {
    if (auto *c = dyn_cast<CallExpr>(e.get()))
      diags.error(e->range, "'" + c->callee + "' does not return a value");
    else
      diags.error(e->range, "expression has no value");
    e->type = Type::error();
  }
  return e->type;
}

Type Sema::check(ExprPtr &e) {
  if (!e)
    return Type::error();
  bool entered = e.get() == allowedReductionRead;
  if (entered)
    insideAllowedRead = true;
  Expr *x = e.get();
  switch (x->kind) {
  case ExprKind::IntLit: {
    auto *l = cast<IntLitExpr>(x);
    if (l->forceI64) {
      l->type = Type::scalarOf(ScalarKind::I64);
      l->constValue = ConstValue::ofInt(ScalarKind::I64, l->value);
    } else {
      l->type =
          Type::scalarOf(fitsI32(l->value) ? ScalarKind::I32 : ScalarKind::I64);
      l->constValue = ConstValue::ofInt(ScalarKind::I64, l->value);
      untyped.insert(l);
    }
    break;
  }
  case ExprKind::FloatLit: {
    auto *l = cast<FloatLitExpr>(x);
    if (l->isF32) {
      l->type = Type::scalarOf(ScalarKind::F32);
      l->constValue = ConstValue::ofFloat(ScalarKind::F32, l->value);
    } else {
      l->type = Type::scalarOf(ScalarKind::F64);
      l->constValue = ConstValue::ofFloat(ScalarKind::F64, l->value);
      untyped.insert(l);
    }
    break;
  }
  case ExprKind::BoolLit: {
    auto *l = cast<BoolLitExpr>(x);
    l->type = Type::scalarOf(ScalarKind::Bool);
    l->constValue = ConstValue::ofBool(l->value);
    break;
  }
  case ExprKind::StringLit: {
    auto *l = cast<StringLitExpr>(x);
    if (inKernelCode()) {
      diags.error(l->range, "strings are only allowed in host code");
      l->type = Type::error();
    } else {
      l->type = Type::string();
      l->constValue = ConstValue::ofString(l->value);
    }
    break;
  }
  case ExprKind::Name:
    checkName(*cast<NameExpr>(x));
    break;
  case ExprKind::Unary:
    checkUnary(e);
    break;
  case ExprKind::Binary:
    checkBinary(e);
    break;
  case ExprKind::Call:
    checkCall(*cast<CallExpr>(x));
    break;
  case ExprKind::Cast:
    checkCast(*cast<CastExpr>(x));
    break;
  case ExprKind::Index:
    checkIndex(*cast<IndexExpr>(x));
    break;
  case ExprKind::Member:
    checkMember(*cast<MemberExpr>(x), /*wantDat=*/false);
    break;
  case ExprKind::ArrayLit:
    checkArrayLit(e);
    break;
  }
  if (entered)
    insideAllowedRead = false;
  return e->type;
}

Type Sema::checkName(NameExpr &e) {
  e.type = Type::error();
  Decl *d = lookup(e.name);
  if (!d) {
    reportUnknown(e.name, e.range, Want::Value);
    return e.type;
  }
  e.decl = d;
  switch (d->kind) {
  case DeclKind::Const: {
    auto *c = cast<ConstDecl>(d);
    foldConst(c, e.range);
    if (!c->value.valid())
      return e.type;
    if (c->value.type.isString() && inKernelCode()) {
      diags.error(e.range, "strings are only allowed in host code");
      return e.type;
    }
    e.type = c->value.type;
    e.constValue = c->value;
    return e.type;
  }
  case DeclKind::Param: {
    auto *p = cast<ParamDecl>(d);
    ensureParam(p);
    if (p->type.resolved.isString() && inKernelCode()) {
      diags.error(e.range, "strings are only allowed in host code");
      return e.type;
    }
    return e.type = p->type.resolved;
  }
  case DeclKind::Var:
    return e.type = cast<VarDecl>(d)->type;
  case DeclKind::KernelParam: {
    auto *p = cast<KernelParamDecl>(d);
    if (p->stencil) {
      std::string zeros = "0";
      if (auto *s = dyn_cast_or_null<StencilDecl>(p->stencil->decl))
        for (int64_t i = 1; i < s->dims; ++i)
          zeros += ", 0";
      diags.error(e.range, "stencil parameter '" + p->name +
                               "' must be accessed at an offset, as '" +
                               p->name + "(" + zeros + ")'");
      return e.type;
    }
    checkParamRead(p, e);
    return e.type = p->type.resolved;
  }
  case DeclKind::Dat:
    if (inKernelCode()) {
      diags.error(e.range, std::string(ctx.code == CodeKind::Kernel ? "a kernel"
                                                                    : "a fn") +
                               " cannot access dat '" + d->name +
                               "' by name; pass it as a kernel parameter");
      return e.type;
    }
    reportWrongKind(d, e.range, Want::Value);
    return e.type;
  case DeclKind::Gradient: {
    auto *g = cast<GradientDecl>(d);
    std::string example = g->fields.empty() ? "x" : g->fields.front()->name;
    diags.error(e.range, "'" + d->name +
                             "' is a derivative result; use one of its "
                             "fields, as '" +
                             d->name + "." + example + "'");
    return e.type;
  }
  default:
    reportWrongKind(d, e.range, Want::Value);
    return e.type;
  }
}

void Sema::checkParamRead(KernelParamDecl *p, const Expr &e) {
  if (insideAllowedRead || badParams.count(p))
    return;
  switch (p->mode) {
  case AccessMode::Inc:
    diags.error(e.range, "cannot read 'inc' parameter '" + p->name +
                             "'; it can only be incremented with '+=' or "
                             "'-='");
    break;
  case AccessMode::Sum:
    diags.error(e.range, "cannot read 'sum' parameter '" + p->name +
                             "'; it can only be updated with '+=' or '-='");
    break;
  case AccessMode::Min:
  case AccessMode::Max: {
    const char *m = accessModeName(p->mode);
    diags.error(e.range, std::string("cannot read '") + m + "' parameter '" +
                             p->name + "' outside '" + p->name + " = " + m +
                             "(" + p->name + ", e)'");
    break;
  }
  default:
    break;
  }
}

Type Sema::checkUnary(ExprPtr &e) {
  auto &u = cast<UnaryExpr>(*e);
  u.type = Type::error();
  check(u.operand);
  if (u.operand->type.isError() && !isUntyped(*u.operand))
    return u.type;
  if (u.op == UnaryOp::BitNot && isUntypedFloat(*u.operand)) {
    diags.error(u.range, "'~' needs an integer operand, found 'f64'");
    return u.type;
  }
  if (u.op != UnaryOp::Not && isUntyped(*u.operand) &&
      !isa<ArrayLitExpr>(u.operand.get())) {
    const ConstValue &v = *u.operand->constValue;
    Type t = Type::scalarOf(v.type.scalar);
    auto r = foldUnary(u.op, v, t, u.range);
    if (!r)
      return u.type;
    u.constValue = *r;
    ScalarKind k = isFloat(r->type.scalar) ? ScalarKind::F64
                   : fitsI32(r->asInt())   ? ScalarKind::I32
                                           : ScalarKind::I64;
    u.type = Type::scalarOf(k);
    untyped.insert(&u);
    return u.type;
  }
  finalize(u.operand);
  Type t = u.operand->type;
  if (t.isError())
    return u.type;
  if (t.isVoid()) {
    checkValue(u.operand);
    return u.type;
  }
  if (u.op == UnaryOp::Neg && !t.isNumeric()) {
    diags.error(u.range,
                "unary '-' needs a numeric operand, found '" + t.str() + "'");
    return u.type;
  }
  if (u.op == UnaryOp::BitNot && !t.isIntegerScalar()) {
    diags.error(u.range,
                "'~' needs an integer operand, found '" + t.str() + "'");
    return u.type;
  }
  if (u.op == UnaryOp::Not && !t.isBool()) {
    diags.error(u.range, "'!' needs a 'bool' operand, found '" + t.str() + "'");
    return u.type;
  }
  if (u.operand->constValue) {
    auto r = foldUnary(u.op, *u.operand->constValue, t, u.range);
    if (!r)
      return u.type;
    u.constValue = *r;
  }
  return u.type = t;
}

/// && and ||: bool operands, a bool result, folded when both are constant.
Type Sema::checkLogical(BinaryExpr &b, const char *op) {
  bool ok = true;
  for (ExprPtr *side : {&b.lhs, &b.rhs}) {
    finalize(*side);
    Type t = (*side)->type;
    if (t.isVoid()) {
      checkValue(*side);
      ok = false;
    } else if (!t.isError() && !t.isBool()) {
      diags.error((*side)->range, std::string("operand of '") + op +
                                      "' has type '" + t.str() +
                                      "', expected 'bool'");
      ok = false;
    } else if (t.isError()) {
      ok = false;
    }
  }
  if (!ok)
    return b.type;
  b.type = Type::scalarOf(ScalarKind::Bool);
  if (b.lhs->constValue && b.rhs->constValue)
    b.constValue = foldBinary(b.op, *b.lhs->constValue, *b.rhs->constValue,
                              b.type, b.opRange);
  return b.type;
}

Type Sema::checkBinary(ExprPtr &e) {
  auto &b = cast<BinaryExpr>(*e);
  b.type = Type::error();
  check(b.lhs);
  check(b.rhs);
  bool ul = isUntyped(*b.lhs), ur = isUntyped(*b.rhs);
  if ((b.lhs->type.isError() && !ul) || (b.rhs->type.isError() && !ur)) {
    finalize(b.lhs);
    finalize(b.rhs);
    return b.type;
  }
  const char *op = spelling(b.op);
  if (isLogical(b.op))
    return checkLogical(b, op);
  bool untypedArrays = (ul && isa<ArrayLitExpr>(b.lhs.get())) ||
                       (ur && isa<ArrayLitExpr>(b.rhs.get()));
  if (untypedArrays) {
    finalize(b.lhs);
    finalize(b.rhs);
    ul = ur = false;
  }
  if (ul && ur) {
    if (isComparison(b.op)) {
      Type t = unify({&b.lhs, &b.rhs}, b.opRange, "operand", false);
      if (t.isError())
        return b.type;
      b.type = Type::scalarOf(ScalarKind::Bool);
      b.constValue =
          foldBinary(b.op, *b.lhs->constValue, *b.rhs->constValue, t, b.range);
      if (!b.constValue)
        b.type = Type::error();
      return b.type;
    }
    if ((b.op == BinaryOp::Rem || isBitwise(b.op)) &&
        (isUntypedFloat(*b.lhs) || isUntypedFloat(*b.rhs))) {
      diags.error(b.opRange, std::string("'") + op +
                                 "' needs integer operands, found 'f64'");
      return b.type;
    }
    auto r =
        foldUntyped(b.op, *b.lhs->constValue, *b.rhs->constValue, b.opRange);
    if (!r)
      return b.type;
    b.constValue = *r;
    ScalarKind k = isFloat(r->type.scalar) ? ScalarKind::F64
                   : fitsI32(r->asInt())   ? ScalarKind::I32
                                           : ScalarKind::I64;
    b.type = Type::scalarOf(k);
    untyped.insert(&b);
    return b.type;
  }
  if (ul || ur) {
    ExprPtr &lit = ul ? b.lhs : b.rhs;
    Type other = ul ? b.rhs->type : b.lhs->type;
    if (other.isNumeric()) {
      Adapt r = adapt(lit, other);
      if (r == Adapt::Reported)
        return b.type;
      if (r == Adapt::Mismatch) {
        finalize(lit);
        Type lt = b.lhs->type, rt = b.rhs->type;
        diags.error(b.opRange,
                    std::string("mismatched types '") + lt.str() + "' and '" +
                        rt.str() + "' in '" + op + "'; cast with " +
                        scalarName(widerOf(lt.scalar, rt.scalar)) + "(...)");
        return b.type;
      }
    } else {
      finalize(lit);
    }
  }
  Type lt = b.lhs->type, rt = b.rhs->type;
  if (lt.isError() || rt.isError())
    return b.type;
  for (ExprPtr *side : {&b.lhs, &b.rhs})
    if ((*side)->type.isVoid()) {
      checkValue(*side);
      return b.type;
    }
  if (lt != rt) {
    if (lt.isNumeric() && rt.isNumeric())
      diags.error(b.opRange,
                  std::string("mismatched types '") + lt.str() + "' and '" +
                      rt.str() + "' in '" + op + "'; cast with " +
                      scalarName(widerOf(lt.scalar, rt.scalar)) + "(...)");
    else
      diags.error(b.opRange, std::string("invalid operands to '") + op +
                                 "': '" + lt.str() + "' and '" + rt.str() +
                                 "'");
    return b.type;
  }
  Type t = lt;
  if (t.isString() && (b.op == BinaryOp::Eq || b.op == BinaryOp::Ne)) {
    // Host strings compare by their text.
    b.type = Type::scalarOf(ScalarKind::Bool);
    if (b.lhs->constValue && b.rhs->constValue)
      b.constValue = ConstValue::ofBool(
          (b.lhs->constValue->text == b.rhs->constValue->text) ==
          (b.op == BinaryOp::Eq));
    return b.type;
  }
  bool valid;
  if (b.op == BinaryOp::Eq || b.op == BinaryOp::Ne)
    valid = t.isScalar();
  else
    valid = t.isNumeric();
  if (!valid) {
    diags.error(b.opRange, std::string("invalid operands to '") + op + "': '" +
                               lt.str() + "' and '" + rt.str() + "'");
    return b.type;
  }
  if ((b.op == BinaryOp::Rem || isBitwise(b.op)) && !t.isIntegerScalar()) {
    diags.error(b.opRange, std::string("'") + op +
                               "' needs integer operands, found '" + t.str() +
                               "'");
    return b.type;
  }
  if (isShift(b.op) && b.rhs->constValue &&
      !checkShiftCount(*b.rhs->constValue, t.scalar, b.rhs->range))
    return b.type;
  Type result = isComparison(b.op) ? Type::scalarOf(ScalarKind::Bool) : t;
  // Integer division by a constant zero is undefined even at run time.
  if ((b.op == BinaryOp::Div || b.op == BinaryOp::Rem) && t.isIntegerScalar() &&
      b.rhs->constValue && b.rhs->constValue->asInt() == 0) {
    diags.error(b.opRange, ctx.constInit
                               ? "division by zero in constant expression"
                               : "division by zero");
    return b.type;
  }
  if (b.lhs->constValue && b.rhs->constValue) {
    auto r =
        foldBinary(b.op, *b.lhs->constValue, *b.rhs->constValue, t, b.opRange);
    if (!r)
      return b.type;
    b.constValue = *r;
  }
  return b.type = result;
}

Type Sema::checkCast(CastExpr &e) {
  e.type = Type::error();
  Type t = checkValue(e.operand);
  if (t.isError())
    return e.type;
  if (!t.isScalar()) {
    diags.error(e.range,
                "cannot cast '" + t.str() + "' to '" + scalarName(e.to) + "'");
    return e.type;
  }
  if (e.operand->constValue) {
    auto v = foldCast(e.to, *e.operand->constValue, e.range);
    if (!v)
      return e.type;
    e.constValue = *v;
  }
  return e.type = Type::scalarOf(e.to);
}

Type Sema::checkIndex(IndexExpr &e) {
  e.type = Type::error();
  Type tb = checkValue(e.base);
  check(e.index);
  finalize(e.index);
  Type ti = e.index->type;
  if (tb.isError() || ti.isError())
    return e.type;
  if (!tb.isArray()) {
    diags.error(e.base->range,
                "cannot index a value of type '" + tb.str() + "'");
    return e.type;
  }
  if (ti.isVoid()) {
    checkValue(e.index);
    return e.type;
  }
  if (!ti.isIntegerScalar()) {
    diags.error(e.index->range,
                "array index has type '" + ti.str() + "', expected an integer");
    return e.type;
  }
  e.type = Type::scalarOf(tb.scalar);
  if (e.index->constValue) {
    int64_t k = e.index->constValue->asInt();
    if (k < 0 || k >= int64_t(tb.length)) {
      diags.error(e.index->range, "index " + std::to_string(k) +
                                      " is out of bounds for '" + tb.str() +
                                      "'");
      return e.type;
    }
    if (e.base->constValue) {
      const ConstValue &a = *e.base->constValue;
      e.constValue = isFloat(tb.scalar)
                         ? ConstValue::ofFloat(tb.scalar, a.asDouble(k))
                     : tb.scalar == ScalarKind::Bool
                         ? ConstValue::ofBool(a.asInt(k))
                         : ConstValue::ofInt(tb.scalar, a.asInt(k));
    }
  }
  return e.type;
}

Type Sema::checkMember(MemberExpr &e, bool wantDat) {
  e.type = Type::error();
  auto *base = dyn_cast<NameExpr>(e.base.get());
  if (!base) {
    checkValue(e.base);
    if (!e.base->type.isError())
      diags.error(e.base->range, "only derivative results have fields");
    return e.type;
  }
  base->type = Type::voidType();
  Decl *d = lookup(base->name);
  if (!d) {
    // `q.x` with q neither a local nor an alias: most likely a module
    // member whose import is missing.
    reportUnresolvedGlobal(base->name + "." + e.field, e.range, Want::Value);
    return e.type;
  }
  base->decl = d;
  auto *g = dyn_cast<GradientDecl>(d);
  if (!g) {
    diags.error(base->range, "'" + d->name + "' is a " + declKindName(d->kind) +
                                 "; only derivative results have fields");
    return e.type;
  }
  Decl *f = g->field(e.field);
  if (!f) {
    std::string msg = "'" + g->name + "' has no field '" + e.field + "'";
    std::string best;
    unsigned bestDist = std::max<unsigned>(1, (e.field.size() + 2) / 3) + 1;
    for (auto &fd : g->fields) {
      unsigned dist = llvm::StringRef(e.field).edit_distance(fd->name);
      if (dist < bestDist) {
        bestDist = dist;
        best = fd->name;
      }
    }
    if (!best.empty())
      msg += "; did you mean '" + best + "'?";
    diags.error(e.fieldRange.valid() ? e.fieldRange : e.range, msg);
    noteDeclared(g);
    return e.type;
  }
  e.decl = f;
  std::string full = g->name + "." + f->name;
  if (auto *v = dyn_cast<VarDecl>(f)) {
    if (wantDat) {
      diags.error(e.range, "'" + full + "' is a scalar, expected a dat");
      return e.type;
    }
    return e.type = v->type;
  }
  auto *dat = cast<DatDecl>(f);
  if (!wantDat) {
    diags.error(e.range, "'" + full + "' is a dat, expected a value");
    return e.type;
  }
  return e.type = dat->elemType.resolved;
}

Type Sema::checkArrayLit(ExprPtr &e) {
  auto &a = cast<ArrayLitExpr>(*e);
  a.type = Type::error();
  if (a.elements.empty()) {
    diags.error(a.range, "empty array literal");
    return a.type;
  }
  bool allUntyped = true, anyError = false;
  for (auto &el : a.elements) {
    check(el);
    if (isa<ArrayLitExpr>(el.get()) ||
        (!isUntyped(*el) && el->type.isArray())) {
      finalize(el);
      diags.error(el->range, "array elements must be scalars, found '" +
                                 el->type.str() + "'");
      anyError = true;
      continue;
    }
    if (!isUntyped(*el)) {
      allUntyped = false;
      if (el->type.isError())
        anyError = true;
    }
  }
  if (anyError) {
    for (auto &el : a.elements)
      finalize(el);
    return a.type;
  }
  uint32_t n = uint32_t(a.elements.size());
  if (allUntyped) {
    bool anyFloat = false, anyBig = false;
    for (auto &el : a.elements) {
      if (isUntypedFloat(*el))
        anyFloat = true;
      else if (!fitsI32(el->constValue->asInt()))
        anyBig = true;
    }
    ScalarKind k = anyFloat ? ScalarKind::F64
                   : anyBig ? ScalarKind::I64
                            : ScalarKind::I32;
    a.type = Type::arrayOf(k, n);
    ConstValue cv;
    cv.type = Type::arrayOf(anyFloat ? ScalarKind::F64 : ScalarKind::I64, n);
    for (auto &el : a.elements) {
      if (anyFloat)
        cv.floats.push_back(el->constValue->asDouble());
      else
        cv.ints.push_back(el->constValue->asInt());
    }
    a.constValue = cv;
    untyped.insert(&a);
    return a.type;
  }
  Type elem = Type::error();
  for (auto &el : a.elements)
    if (!isUntyped(*el)) {
      elem = el->type;
      break;
    }
  if (elem.isVoid() || elem.isString()) {
    for (auto &el : a.elements)
      finalize(el);
    diags.error(a.range,
                "array elements must be scalars, found '" + elem.str() + "'");
    return a.type;
  }
  bool ok = true;
  for (auto &el : a.elements)
    ok = convertChecked(el, elem, "array element") && ok;
  if (!ok)
    return a.type;
  a.type = Type::arrayOf(elem.scalar, n);
  ConstValue cv;
  cv.type = a.type;
  for (auto &el : a.elements) {
    if (!el->constValue)
      return a.type;
    if (isFloat(elem.scalar))
      cv.floats.push_back(el->constValue->asDouble());
    else
      cv.ints.push_back(el->constValue->asInt());
  }
  a.constValue = cv;
  return a.type;
}

DatDecl *Sema::resolveDatExpr(ExprPtr &e) {
  if (auto *n = dyn_cast<NameExpr>(e.get())) {
    auto *d = dyn_cast_or_null<DatDecl>(resolve(n->name, n->range, Want::Dat));
    n->decl = d;
    n->type = d ? d->elemType.resolved : Type::error();
    return d;
  }
  if (auto *m = dyn_cast<MemberExpr>(e.get())) {
    checkMember(*m, /*wantDat=*/true);
    return dyn_cast_or_null<DatDecl>(m->decl);
  }
  check(e);
  finalize(e);
  if (!e->type.isError())
    diags.error(e->range, "expected a dat");
  e->type = Type::error();
  return nullptr;
}

} // namespace opdc::sema
