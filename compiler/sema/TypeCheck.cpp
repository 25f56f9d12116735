// TypeCheck.cpp - Types of expressions, literal adaptation and folding.
// SPDX-License-Identifier: Apache-2.0
//
// Operands of one operator must have the same scalar type; the only implicit
// conversion is that of an untyped literal (an integer or float literal
// without suffix, or arithmetic on such literals) to the type its context
// asks for, when the value is exactly representable there: `x * 2` with
// x: f32 multiplies by 2.0f, `i + 2.5` with i: i32 is an error that
// suggests a cast. Untyped compound expressions are replaced by one literal
// of the folded value once their type is known, so lowering never sees
// operands of a type other than the operator's.
#include "sema/SemaImpl.h"

#include "llvm/Support/Casting.h"

#include <cstdio>
#include <limits>

namespace opdc::sema {

using namespace ast;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

bool fitsI32(int64_t v) {
  return v >= std::numeric_limits<int32_t>::min() &&
         v <= std::numeric_limits<int32_t>::max();
}

bool isUntypedFloat(const Expr &e) {
  return e.constValue && isFloat(e.constValue->type.scalar);
}

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

std::string plural(size_t n, const char *word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string formatFloat(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return s;
}

std::string untypedValueString(const ConstValue &v) {
  if (isFloat(v.type.scalar)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", v.asDouble());
    return buf;
  }
  return std::to_string(v.asInt());
}

} // namespace

//===----------------------------------------------------------------------===//
// Untyped literals
//===----------------------------------------------------------------------===//

void Sema::replaceWithLiteral(ExprPtr &e, const ConstValue &v) {
  SourceRange r = e->range;
  ExprPtr lit;
  ScalarKind k = v.type.scalar;
  if (k == ScalarKind::Bool)
    lit = std::make_unique<BoolLitExpr>(r, v.asInt() != 0);
  else if (isInteger(k))
    lit = std::make_unique<IntLitExpr>(r, v.asInt(), k == ScalarKind::I64);
  else
    lit = std::make_unique<FloatLitExpr>(r, v.asDouble(), false,
                                         formatFloat(v.asDouble()));
  lit->type = v.type;
  lit->constValue = v;
  untyped.erase(e.get());
  graveyard.push_back(std::move(e));
  e = std::move(lit);
}

Sema::Adapt Sema::adapt(ExprPtr &e, Type target) {
  if (!isUntyped(*e))
    return e->type == target ? Adapt::Ok : Adapt::Mismatch;
  if (auto *a = dyn_cast<ArrayLitExpr>(e.get())) {
    if (!target.isArray() || target.length != a->elements.size())
      return Adapt::Mismatch;
    Type elemType = Type::scalarOf(target.scalar);
    Adapt result = Adapt::Ok;
    for (auto &el : a->elements) {
      Adapt r = adapt(el, elemType);
      if (r == Adapt::Reported)
        result = Adapt::Reported;
      else if (r == Adapt::Mismatch && result == Adapt::Ok)
        result = Adapt::Mismatch;
    }
    if (result != Adapt::Ok)
      return result;
    ConstValue cv;
    cv.type = target;
    for (auto &el : a->elements) {
      if (isFloat(target.scalar))
        cv.floats.push_back(el->constValue->asDouble());
      else
        cv.ints.push_back(el->constValue->asInt());
    }
    a->type = target;
    a->constValue = cv;
    untyped.erase(a);
    return Adapt::Ok;
  }
  if (!target.isNumeric())
    return Adapt::Mismatch;
  const ConstValue &cv = *e->constValue;
  bool fromFloat = isFloat(cv.type.scalar);
  if (fromFloat && !isFloat(target.scalar))
    return Adapt::Mismatch;
  std::optional<ConstValue> v = representAs(cv, target.scalar);
  if (!v) {
    std::string what = "constant " + untypedValueString(cv);
    if (fromFloat)
      diags.error(e->range,
                  what + " is out of range for '" + target.str() + "'");
    else if (isInteger(target.scalar))
      diags.error(e->range, what + " does not fit in '" + target.str() + "'");
    else
      diags.error(e->range, what + " is not exactly representable as '" +
                                target.str() + "'");
    untyped.erase(e.get());
    e->type = Type::error();
    return Adapt::Reported;
  }
  if (auto *f = dyn_cast<FloatLitExpr>(e.get())) {
    // Keep the node; its value is what lowering materialises.
    f->value = v->asDouble();
    f->type = target;
    f->constValue = *v;
    untyped.erase(f);
    return Adapt::Ok;
  }
  if (auto *i = dyn_cast<IntLitExpr>(e.get())) {
    if (isInteger(target.scalar)) {
      i->type = target;
      i->constValue = *v;
      untyped.erase(i);
      return Adapt::Ok;
    }
    // An integer literal used as a float becomes a float literal.
    auto lit = std::make_unique<FloatLitExpr>(i->range, v->asDouble(), false,
                                              textOf(i->range).empty()
                                                  ? formatFloat(v->asDouble())
                                                  : textOf(i->range).str());
    lit->type = target;
    lit->constValue = *v;
    untyped.erase(i);
    graveyard.push_back(std::move(e));
    e = std::move(lit);
    return Adapt::Ok;
  }
  replaceWithLiteral(e, *v);
  return Adapt::Ok;
}

void Sema::finalize(ExprPtr &e) {
  if (!e || !isUntyped(*e))
    return;
  if (auto *a = dyn_cast<ArrayLitExpr>(e.get())) {
    ScalarKind k = ScalarKind::I32;
    for (auto &el : a->elements) {
      if (isUntypedFloat(*el))
        k = ScalarKind::F64;
      else if (k == ScalarKind::I32 && !fitsI32(el->constValue->asInt()))
        k = ScalarKind::I64;
    }
    if (adapt(e, Type::arrayOf(k, uint32_t(a->elements.size()))) != Adapt::Ok) {
      untyped.erase(e.get());
      e->type = Type::error();
    }
    return;
  }
  const ConstValue &cv = *e->constValue;
  ScalarKind k = isFloat(cv.type.scalar) ? ScalarKind::F64
                 : fitsI32(cv.asInt())   ? ScalarKind::I32
                                         : ScalarKind::I64;
  if (adapt(e, Type::scalarOf(k)) != Adapt::Ok) {
    untyped.erase(e.get());
    e->type = Type::error();
  }
}

void Sema::reportMismatch(SourceRange at, const llvm::Twine &what, Type found,
                          Type expected) {
  std::string msg = what.str() + " has type '" + found.str() + "', expected '" +
                    expected.str() + "'";
  if (found.isNumeric() && expected.isNumeric())
    msg += std::string("; cast with ") + scalarName(expected.scalar) + "(...)";
  diags.error(at, msg);
}

bool Sema::convert(ExprPtr &e, Type target, const llvm::Twine &what) {
  if (!e)
    return false;
  check(e);
  return convertChecked(e, target, what);
}

bool Sema::convertChecked(ExprPtr &e, Type target, const llvm::Twine &what) {
  if (e->type.isError() && !isUntyped(*e))
    return false;
  if (target.isError()) {
    finalize(e);
    return false;
  }
  if (isUntyped(*e)) {
    switch (adapt(e, target)) {
    case Adapt::Ok:
      return true;
    case Adapt::Reported:
      return false;
    case Adapt::Mismatch:
      finalize(e);
      if (!e->type.isError())
        reportMismatch(e->range, what, e->type, target);
      return false;
    }
  }
  if (e->type.isVoid()) {
    checkValue(e);
    return false;
  }
  if (e->type == target)
    return true;
  reportMismatch(e->range, what, e->type, target);
  return false;
}

Type Sema::unify(std::vector<ExprPtr *> operands, SourceRange at,
                 const llvm::Twine &what, bool preferFloat) {
  // Any erroneous operand: give the others their default type and stop.
  bool anyError = false;
  for (ExprPtr *op : operands)
    if ((*op)->type.isError() && !isUntyped(**op))
      anyError = true;
  if (anyError) {
    for (ExprPtr *op : operands)
      finalize(*op);
    return Type::error();
  }
  Type common = Type::error();
  for (ExprPtr *op : operands)
    if (!isUntyped(**op)) {
      common = (*op)->type;
      break;
    }
  if (common.isError()) {
    bool anyFloat = preferFloat;
    bool anyBig = false;
    bool anyArray = false;
    for (ExprPtr *op : operands) {
      if (isa<ArrayLitExpr>(op->get())) {
        anyArray = true;
        continue;
      }
      if (isUntypedFloat(**op))
        anyFloat = true;
      else if (!fitsI32((*op)->constValue->asInt()))
        anyBig = true;
    }
    if (anyArray) {
      finalize(*operands.front());
      common = (*operands.front())->type;
    } else {
      common = Type::scalarOf(anyFloat ? ScalarKind::F64
                              : anyBig ? ScalarKind::I64
                                       : ScalarKind::I32);
    }
  }
  bool ok = true;
  for (size_t i = 0; i < operands.size(); ++i) {
    ExprPtr &op = *operands[i];
    if (isUntyped(*op)) {
      Adapt r = adapt(op, common);
      if (r == Adapt::Reported) {
        ok = false;
        continue;
      }
      if (r == Adapt::Mismatch) {
        finalize(op);
        if (!op->type.isError())
          reportMismatch(op->range, what + " " + std::to_string(i + 1),
                         op->type, common);
        ok = false;
      }
      continue;
    }
    if (op->type.isVoid()) {
      checkValue(op);
      ok = false;
      continue;
    }
    if (op->type != common) {
      reportMismatch(op->range, what + " " + std::to_string(i + 1), op->type,
                     common);
      ok = false;
    }
  }
  return ok ? common : Type::error();
}

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
  if (u.op == UnaryOp::Neg && isUntyped(*u.operand) &&
      !isa<ArrayLitExpr>(u.operand.get())) {
    const ConstValue &v = *u.operand->constValue;
    Type t = Type::scalarOf(v.type.scalar);
    auto r = foldUnary(UnaryOp::Neg, v, t, u.range);
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
  if (isLogical(b.op)) {
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
    if (b.op == BinaryOp::Rem &&
        (isUntypedFloat(*b.lhs) || isUntypedFloat(*b.rhs))) {
      diags.error(b.opRange, "'%' needs integer operands, found 'f64'");
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
  if (b.op == BinaryOp::Rem && !t.isIntegerScalar()) {
    diags.error(b.opRange,
                "'%' needs integer operands, found '" + t.str() + "'");
    return b.type;
  }
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

Type Sema::checkCall(CallExpr &e) {
  e.type = Type::error();
  Decl *d = lookup(e.callee);
  if (d) {
    if (auto *p = dyn_cast<KernelParamDecl>(d))
      return checkStencilRead(e, p, /*asTarget=*/false);
    if (isa<FnDecl, ProcDecl>(d))
      return checkUserCall(e, d);
    if (isa<KernelDecl>(d))
      diags.error(e.calleeRange, "'" + d->name +
                                     "' is a kernel; run it with 'loop " +
                                     d->name + " over ...'");
    else
      reportWrongKind(d, e.calleeRange, Want::Callable);
    for (auto &a : e.args)
      checkValue(a);
    return e.type;
  }
  Intrinsic i = lookupIntrinsic(e.callee);
  if (i != Intrinsic::None)
    return checkIntrinsic(e, i);
  reportUnknown(e.callee, e.calleeRange, Want::Callable);
  for (auto &a : e.args)
    checkValue(a);
  return e.type;
}

void Sema::checkCallArgs(std::vector<ExprPtr> &args,
                         std::vector<std::unique_ptr<VarDecl>> &params,
                         const Decl &callee, SourceRange at) {
  if (args.size() != params.size()) {
    diags.error(at, "'" + callee.name + "' takes " +
                        plural(params.size(), "argument") + " but " +
                        std::to_string(args.size()) +
                        (args.size() == 1 ? " was" : " were") + " given");
    noteDeclared(&callee);
    for (auto &a : args)
      checkValue(a);
    return;
  }
  for (size_t i = 0; i < args.size(); ++i)
    convert(args[i], params[i]->type,
            "argument " + std::to_string(i + 1) + " of '" + callee.name + "'");
}

Type Sema::checkUserCall(CallExpr &e, Decl *callee) {
  e.calleeDecl = callee;
  auto *fn = dyn_cast<FnDecl>(callee);
  auto *proc = dyn_cast<ProcDecl>(callee);
  e.target = fn ? CallTarget::Fn : CallTarget::Proc;
  if (proc && inKernelCode()) {
    diags.error(e.calleeRange, "proc '" + callee->name +
                                   "' cannot be called from " +
                                   codeDescription());
    for (auto &a : e.args)
      checkValue(a);
    return e.type = Type::error();
  }
  if (ctx.code == CodeKind::Global) {
    diags.error(e.calleeRange,
                "'" + callee->name + "' cannot be called in a declaration");
    for (auto &a : e.args)
      checkValue(a);
    return e.type = Type::error();
  }
  checkCallArgs(e.args, fn ? fn->params : proc->params, *callee, e.calleeRange);
  if (ctx.owner)
    callGraph[ctx.owner].push_back({callee, e.calleeRange});
  auto &ret = fn ? fn->returnType : proc->returnType;
  return e.type = ret ? ret->resolved : Type::voidType();
}

Type Sema::checkIntrinsic(CallExpr &e, Intrinsic i) {
  e.target = CallTarget::Intrinsic;
  e.intrinsic = i;
  e.type = Type::error();
  const std::string &name = e.callee;
  auto checkArgs = [&] {
    for (auto &a : e.args)
      checkValue(a);
  };
  if (i == Intrinsic::Idx && ctx.code != CodeKind::Kernel) {
    diags.error(e.calleeRange, "'idx' is only available in kernels");
    checkArgs();
    return e.type;
  }
  if ((i == Intrinsic::Size || i == Intrinsic::Wtime) &&
      ctx.code != CodeKind::Host) {
    diags.error(e.calleeRange, "'" + name + "' is only available in host code");
    return e.type;
  }
  size_t minArgs, maxArgs;
  switch (i) {
  case Intrinsic::Pow:
  case Intrinsic::Atan2:
  case Intrinsic::Min:
  case Intrinsic::Max:
    minArgs = maxArgs = 2;
    break;
  case Intrinsic::Fma:
  case Intrinsic::Select:
    minArgs = maxArgs = 3;
    break;
  case Intrinsic::Size:
    minArgs = 1;
    maxArgs = 2;
    break;
  case Intrinsic::Wtime:
    minArgs = maxArgs = 0;
    break;
  default:
    minArgs = maxArgs = 1;
  }
  size_t n = e.args.size();
  if (n < minArgs || n > maxArgs) {
    std::string expected =
        minArgs == maxArgs
            ? plural(minArgs, "argument")
            : std::to_string(minArgs) + " or " + plural(maxArgs, "argument");
    diags.error(e.calleeRange, "'" + name + "' takes " + expected + " but " +
                                   std::to_string(n) +
                                   (n == 1 ? " was" : " were") + " given");
    if (i != Intrinsic::Size)
      checkArgs();
    return e.type;
  }
  auto what = [&]() { return "argument of '" + name + "'"; };
  switch (i) {
  case Intrinsic::Wtime:
    return e.type = Type::scalarOf(ScalarKind::F64);
  case Intrinsic::Idx: {
    std::optional<int64_t> d = foldInteger(e.args[0], "dimension of 'idx'");
    if (!d)
      return e.type;
    if (*d < 0 || *d > 2) {
      diags.error(e.args[0]->range,
                  "dimension of 'idx' must be between 0 and 2, found " +
                      std::to_string(*d));
      return e.type;
    }
    if (ctx.kernel)
      idxUses[ctx.kernel].push_back({*d, e.range});
    return e.type = Type::scalarOf(ScalarKind::I32);
  }
  case Intrinsic::Size: {
    Expr *first = e.args[0].get();
    if (n == 1) {
      auto *ne = dyn_cast<NameExpr>(first);
      if (!ne) {
        diags.error(first->range, "'size' expects a set or a dat on a block");
        return e.type;
      }
      Decl *d = lookup(ne->name);
      if (auto *dat = dyn_cast_or_null<DatDecl>(d)) {
        if (isa_and_nonnull<SetDecl>(dat->on.decl))
          diags.error(e.range, "'size' takes a set or a dat on a block; "
                               "for dat '" +
                                   d->name + "' use 'size(" + dat->on.name +
                                   ")'");
        else
          diags.error(e.range, "'size' of dat '" + d->name +
                                   "' needs a dimension, as 'size(" + d->name +
                                   ", 0)'");
        return e.type;
      }
      ne->decl = resolve(ne->name, ne->range, Want::Set);
      ne->type = Type::voidType();
      if (!ne->decl)
        return e.type;
      return e.type = Type::scalarOf(ScalarKind::I32);
    }
    DatDecl *dat = resolveDatExpr(e.args[0]);
    std::optional<int64_t> d = foldInteger(e.args[1], "dimension of 'size'");
    if (!dat || !d)
      return e.type;
    auto *block = dyn_cast_or_null<BlockDecl>(dat->on.decl);
    if (!block) {
      if (dat->on.decl)
        diags.error(e.args[0]->range, "'size' needs a dat on a block; '" +
                                          dat->name + "' is on set '" +
                                          dat->on.name + "'");
      return e.type;
    }
    if (block->dims > 0 && (*d < 0 || *d >= block->dims)) {
      diags.error(e.args[1]->range, "dimension " + std::to_string(*d) +
                                        " is out of range for dat '" +
                                        dat->name + "' on block '" +
                                        block->name + "' with " +
                                        plural(block->dims, "dimension"));
      return e.type;
    }
    return e.type = Type::scalarOf(ScalarKind::I32);
  }
  default:
    break;
  }
  for (auto &a : e.args)
    check(a);
  Type t = Type::error();
  switch (i) {
  case Intrinsic::Select: {
    convertChecked(e.args[0], Type::scalarOf(ScalarKind::Bool),
                   "condition of 'select'");
    t = unify({&e.args[1], &e.args[2]}, e.range, "argument",
              /*preferFloat=*/false);
    if (t.isError())
      return e.type;
    if (e.args[0]->type.isError())
      return e.type;
    // The IR's select (and every backend's) chooses between scalars; an
    // array select would need one per component, which the user can write.
    if (!t.isScalar()) {
      diags.error(e.args[1]->range,
                  "'select' chooses between scalars, got '" + t.str() +
                      "'; select each component");
      return e.type;
    }
    break;
  }
  case Intrinsic::Abs:
  case Intrinsic::Min:
  case Intrinsic::Max: {
    std::vector<ExprPtr *> ops;
    for (auto &a : e.args)
      ops.push_back(&a);
    t = unify(ops, e.range, "argument", false);
    if (t.isError())
      return e.type;
    if (!t.isNumeric()) {
      diags.error(e.args[0]->range,
                  what() + " has type '" + t.str() + "', expected a number");
      return e.type;
    }
    break;
  }
  default: {
    std::vector<ExprPtr *> ops;
    for (auto &a : e.args)
      ops.push_back(&a);
    t = unify(ops, e.range, "argument", /*preferFloat=*/true);
    if (t.isError())
      return e.type;
    if (!t.isFloatScalar()) {
      std::string msg =
          what() + " has type '" + t.str() + "', expected 'f64' or 'f32'";
      if (t.isNumeric())
        msg += "; cast with f64(...)";
      diags.error(e.args[0]->range, msg);
      return e.type;
    }
    break;
  }
  }
  std::vector<ConstValue> values;
  for (auto &a : e.args) {
    if (!a->constValue)
      return e.type = t;
    values.push_back(*a->constValue);
  }
  if (auto v = foldIntrinsic(i, values, t, e.range))
    e.constValue = *v;
  return e.type = t;
}

Type Sema::checkStencilRead(CallExpr &e, KernelParamDecl *p, bool asTarget) {
  e.target = CallTarget::StencilRead;
  e.calleeDecl = p;
  e.type = Type::error();
  auto *s =
      p->stencil ? dyn_cast_or_null<StencilDecl>(p->stencil->decl) : nullptr;
  if (!p->stencil) {
    diags.error(e.calleeRange, "parameter '" + p->name +
                                   "' has no stencil; only stencil "
                                   "parameters can be accessed at an offset");
    noteDeclared(p);
    return e.type;
  }
  if (!s || s->dims == 0 || badParams.count(p))
    return e.type;
  if (!asTarget)
    checkParamRead(p, e);
  if (e.args.size() != size_t(s->dims)) {
    diags.error(e.range, "stencil '" + s->name + "' has " +
                             plural(s->dims, "dimension") + " but '" + p->name +
                             "' is accessed with " +
                             plural(e.args.size(), "offset"));
    return e.type;
  }
  std::vector<int64_t> offsets;
  for (auto &a : e.args) {
    std::optional<int64_t> o = foldInteger(a, "stencil offset");
    if (!o)
      return e.type;
    offsets.push_back(*o);
  }
  e.stencilOffset = offsets;
  bool centre = true;
  for (int64_t o : offsets)
    centre = centre && o == 0;
  bool written = p->mode == AccessMode::Write ||
                 p->mode == AccessMode::ReadWrite || p->mode == AccessMode::Inc;
  if (written && !centre) {
    // Gather-only: a point may only write (and read back) its own element,
    // or neighbouring iterations would race.
    diags.error(e.range, "off-centre access to '" + p->name + "' at " +
                             offsetString(offsets) +
                             "; a written stencil parameter may only be "
                             "accessed at the centre");
    return e.type;
  }
  bool found = false;
  for (auto &o : s->offsets)
    found = found || o == offsets;
  if (!found) {
    diags.error(e.range, "offset " + offsetString(offsets) +
                             " is not in stencil '" + s->name + "'");
    noteDeclared(s);
    return e.type;
  }
  return e.type = p->type.resolved;
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
    reportUnknown(base->name, base->range, Want::Value);
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
