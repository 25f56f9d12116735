// TypeCheckLiterals.cpp - Untyped literals: adaptation to a type, folding.
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

bool fitsI32(int64_t v) {
  return v >= std::numeric_limits<int32_t>::min() &&
         v <= std::numeric_limits<int32_t>::max();
}

bool isUntypedFloat(const Expr &e) {
  return e.constValue && isFloat(e.constValue->type.scalar);
}

namespace {

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

} // namespace opdc::sema
