// ConstFolding.cpp - Compile-time evaluation of consts, params and lengths.
// SPDX-License-Identifier: Apache-2.0
//
// Values are folded in the precision of their type: f32 arithmetic is done
// in `float` (so `f64(1.4f)` is 1.399999976158142, as in OP2's reference
// runs), integers are checked for overflow in their width. Untyped literal
// arithmetic (`2 * 3`, `-1.5`) is exact in i64 / f64 until the context gives
// it a type. Overflow and division by zero in a constant are errors.
#include "sema/SemaImpl.h"

#include "ast/ScalarSemantics.h"

#include "llvm/Support/Casting.h"

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>

namespace opdc::sema {

using namespace ast;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

std::string formatDouble(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

/// i64 arithmetic with overflow detection; false on overflow or division by
/// zero (\p divZero tells which).
bool intArith(BinaryOp op, int64_t a, int64_t b, int64_t &r, bool &divZero) {
  divZero = false;
  switch (op) {
  case BinaryOp::Add:
    return !__builtin_add_overflow(a, b, &r);
  case BinaryOp::Sub:
    return !__builtin_sub_overflow(a, b, &r);
  case BinaryOp::Mul:
    return !__builtin_mul_overflow(a, b, &r);
  case BinaryOp::Div:
  case BinaryOp::Rem:
    if (b == 0) {
      divZero = true;
      return false;
    }
    if (a == std::numeric_limits<int64_t>::min() && b == -1)
      return false;
    r = op == BinaryOp::Div ? a / b : a % b;
    return true;
  default:
    return false;
  }
}

template <typename T> T floatArith(BinaryOp op, T a, T b) {
  switch (op) {
  case BinaryOp::Add:
    return a + b;
  case BinaryOp::Sub:
    return a - b;
  case BinaryOp::Mul:
    return a * b;
  case BinaryOp::Div:
    return a / b;
  default:
    return T(0);
  }
}

bool compare(BinaryOp op, double a, double b) {
  switch (op) {
  case BinaryOp::Eq:
    return a == b;
  case BinaryOp::Ne:
    return a != b;
  case BinaryOp::Lt:
    return a < b;
  case BinaryOp::Le:
    return a <= b;
  case BinaryOp::Gt:
    return a > b;
  case BinaryOp::Ge:
    return a >= b;
  default:
    return false;
  }
}

bool compareInt(BinaryOp op, int64_t a, int64_t b) {
  switch (op) {
  case BinaryOp::Eq:
    return a == b;
  case BinaryOp::Ne:
    return a != b;
  case BinaryOp::Lt:
    return a < b;
  case BinaryOp::Le:
    return a <= b;
  case BinaryOp::Gt:
    return a > b;
  case BinaryOp::Ge:
    return a >= b;
  default:
    return false;
  }
}

} // namespace

void Sema::foldConst(ConstDecl *c, SourceRange use) {
  auto it = foldStates.find(c);
  if (it != foldStates.end()) {
    if (it->second == FoldState::InProgress) {
      diags.error(use, "const '" + c->name + "' is defined in terms of itself");
      noteDeclared(c);
    }
    return;
  }
  foldStates[c] = FoldState::InProgress;
  {
    // A const may be folded on demand from inside a kernel: its initialiser
    // sees only globals.
    ContextGuard guard(*this, /*clearScopes=*/true);
    ctx = Context();
    ctx.code = CodeKind::Global;
    ctx.module = c->module;
    ctx.constInit = true;
    Type declared = Type::error();
    bool hasType = c->declaredType.has_value();
    if (hasType)
      declared = resolveType(*c->declaredType, /*allowString=*/true);
    bool ok = false;
    if (c->init) {
      std::string what = "initialiser of const '" + c->name + "'";
      if (hasType) {
        if (declared.isError())
          checkValue(c->init);
        else
          ok = convert(c->init, declared, what);
      } else {
        ok = !checkValue(c->init).isError();
      }
      if (ok && !c->init->constValue) {
        diags.error(c->init->range, what + " is not a compile-time constant");
        explainNotConstant(*c->init);
      } else if (ok) {
        c->value = *c->init->constValue;
      }
    } else {
      diags.error(c->nameRange, "const '" + c->name + "' needs a value");
    }
  }
  foldStates[c] = FoldState::Done;
}

void Sema::ensureParam(ParamDecl *p) {
  if (foldStates.count(p))
    return;
  foldStates[p] = FoldState::InProgress;
  ContextGuard guard(*this, /*clearScopes=*/true);
  ctx = Context();
  ctx.code = CodeKind::Global;
  ctx.module = p->module;
  ctx.constInit = true;
  Type t = resolveType(p->type, /*allowString=*/true);
  if (!t.isError() && !t.isScalar() && !t.isString()) {
    diags.error(p->type.range, "param '" + p->name +
                                   "' must have a scalar or 'str' type, "
                                   "found '" +
                                   t.str() + "'");
    p->type.resolved = t = Type::error();
  }
  if (!p->init) {
    diags.error(p->nameRange, "param '" + p->name + "' needs a default value");
  } else {
    std::string what = "default value of param '" + p->name + "'";
    bool ok =
        t.isError() ? (checkValue(p->init), false) : convert(p->init, t, what);
    if (ok && !p->init->constValue) {
      diags.error(p->init->range, what + " is not a compile-time constant");
      explainNotConstant(*p->init);
    } else if (ok) {
      p->defaultValue = *p->init->constValue;
    }
  }
  foldStates[p] = FoldState::Done;
}

Type Sema::resolveType(TypeRef &t, bool allowString) {
  if (t.isString) {
    if (!allowString) {
      diags.error(t.range, "strings are only allowed in host code");
      return t.resolved = Type::error();
    }
    return t.resolved = Type::string();
  }
  if (!t.length)
    return t.resolved = Type::scalarOf(t.scalar);
  std::optional<int64_t> n = foldInteger(t.length, "array length");
  if (!n)
    return t.resolved = Type::error();
  if (*n < 1) {
    diags.error(t.length->range,
                "array length must be at least 1, found " + std::to_string(*n));
    return t.resolved = Type::error();
  }
  if (*n > (1 << 16)) {
    diags.error(t.length->range, "array length " + std::to_string(*n) +
                                     " is too large (the limit is 65536)");
    return t.resolved = Type::error();
  }
  return t.resolved = Type::arrayOf(t.scalar, uint32_t(*n));
}

std::optional<int64_t> Sema::foldInteger(ExprPtr &e, const llvm::Twine &what) {
  if (!e)
    return std::nullopt;
  ContextGuard guard(*this);
  ctx.constInit = true;
  Type t = check(e);
  if (t.isError() && !isUntyped(*e))
    return std::nullopt;
  if (isUntyped(*e))
    finalize(e);
  t = e->type;
  if (t.isError())
    return std::nullopt;
  if (!t.isIntegerScalar()) {
    diags.error(e->range,
                what + " must be an integer, found '" + t.str() + "'");
    return std::nullopt;
  }
  if (!e->constValue) {
    diags.error(e->range, what + " is not a compile-time constant");
    explainNotConstant(*e);
    return std::nullopt;
  }
  return e->constValue->asInt();
}

void Sema::explainNotConstant(const Expr &e) {
  // Find the first name or call that is only known at run time.
  const Expr *culprit = nullptr;
  std::function<void(const Expr &)> walk = [&](const Expr &x) {
    if (culprit)
      return;
    if (auto *n = dyn_cast<NameExpr>(&x)) {
      if (n->decl && !isa<ConstDecl>(n->decl))
        culprit = n;
      return;
    }
    if (auto *c = dyn_cast<CallExpr>(&x)) {
      if (c->target == CallTarget::Fn || c->target == CallTarget::Proc ||
          c->intrinsic == Intrinsic::Wtime || c->intrinsic == Intrinsic::Size ||
          c->intrinsic == Intrinsic::Idx ||
          c->target == CallTarget::StencilRead) {
        culprit = c;
        return;
      }
      for (auto &a : c->args)
        walk(*a);
      return;
    }
    if (auto *u = dyn_cast<UnaryExpr>(&x))
      return walk(*u->operand);
    if (auto *b = dyn_cast<BinaryExpr>(&x)) {
      walk(*b->lhs);
      return walk(*b->rhs);
    }
    if (auto *c = dyn_cast<CastExpr>(&x))
      return walk(*c->operand);
    if (auto *i = dyn_cast<IndexExpr>(&x)) {
      walk(*i->base);
      return walk(*i->index);
    }
    if (auto *a = dyn_cast<ArrayLitExpr>(&x))
      for (auto &el : a->elements)
        walk(*el);
  };
  walk(e);
  if (!culprit)
    return;
  if (auto *n = dyn_cast<NameExpr>(culprit)) {
    const Decl *d = n->decl;
    if (isa<ParamDecl>(d))
      diags.note(d->nameRange, "'" + d->name +
                                   "' is a param; its value is only known "
                                   "at run time");
    else
      diags.note(d->nameRange, "'" + d->name + "' is a " +
                                   declKindName(d->kind) +
                                   ", not a compile-time constant");
    return;
  }
  auto *c = cast<CallExpr>(culprit);
  diags.note(c->calleeRange,
             "the call of '" + c->callee + "' is evaluated at run time");
}

std::optional<ConstValue> Sema::foldUnary(UnaryOp op, const ConstValue &v,
                                          Type type, SourceRange at) {
  if (op == UnaryOp::Not)
    return ConstValue::ofBool(!v.asInt());
  ScalarKind k = type.scalar;
  if (op == UnaryOp::BitNot)
    return ConstValue::ofInt(k, ~v.asInt());
  if (isFloat(k))
    return ConstValue::ofFloat(k, -v.asDouble());
  int64_t x = v.asInt();
  int64_t lo = k == ScalarKind::I32 ? std::numeric_limits<int32_t>::min()
                                    : std::numeric_limits<int64_t>::min();
  if (x == lo) {
    diags.error(at, std::string("integer overflow in constant expression; "
                                "the result does not fit in '") +
                        scalarName(k) + "'");
    return std::nullopt;
  }
  return ConstValue::ofInt(k, -x);
}

std::optional<ConstValue> Sema::foldBinary(BinaryOp op, const ConstValue &a,
                                           const ConstValue &b,
                                           Type operandType, SourceRange at) {
  ScalarKind k = operandType.scalar;
  if (isLogical(op)) {
    bool x = a.asInt(), y = b.asInt();
    return ConstValue::ofBool(op == BinaryOp::And ? x && y : x || y);
  }
  if (isComparison(op)) {
    if (isFloat(k))
      return ConstValue::ofBool(compare(op, a.asDouble(), b.asDouble()));
    return ConstValue::ofBool(compareInt(op, a.asInt(), b.asInt()));
  }
  if (isFloat(k)) {
    if (op == BinaryOp::Div && b.asDouble() == 0.0 && ctx.constInit) {
      diags.error(at, "division by zero in constant expression");
      return std::nullopt;
    }
    if (k == ScalarKind::F32)
      return ConstValue::ofFloat(
          k, floatArith<float>(op, float(a.asDouble()), float(b.asDouble())));
    return ConstValue::ofFloat(
        k, floatArith<double>(op, a.asDouble(), b.asDouble()));
  }
  if (isBitwise(op))
    return foldBitwise(op, a.asInt(), b.asInt(), k, at);
  int64_t r = 0;
  bool divZero = false;
  bool ok = intArith(op, a.asInt(), b.asInt(), r, divZero);
  if (divZero) {
    diags.error(at, "division by zero in constant expression");
    return std::nullopt;
  }
  if (!ok || (k == ScalarKind::I32 && !fitsI32(r))) {
    diags.error(at, std::string("integer overflow in constant expression; "
                                "the result does not fit in '") +
                        scalarName(k) + "'");
    return std::nullopt;
  }
  return ConstValue::ofInt(k, r);
}

bool Sema::checkShiftCount(const ConstValue &count, ScalarKind k,
                           SourceRange at) {
  int64_t n = count.asInt();
  int64_t width = k == ScalarKind::I32 ? 32 : 64;
  if (n >= 0 && n < width)
    return true;
  diags.error(at, "shift count " + std::to_string(n) +
                      " is out of range for '" + scalarName(k) + "' (0 to " +
                      std::to_string(width - 1) + ")");
  return false;
}

// Two's complement, as the generated code computes them: `<<` drops the bits
// shifted out (no overflow error), `>>` fills with the sign bit.
std::optional<ConstValue> Sema::foldBitwise(BinaryOp op, int64_t a, int64_t b,
                                            ScalarKind k, SourceRange at) {
  switch (op) {
  case BinaryOp::BitAnd:
    return ConstValue::ofInt(k, a & b);
  case BinaryOp::BitOr:
    return ConstValue::ofInt(k, a | b);
  case BinaryOp::BitXor:
    return ConstValue::ofInt(k, a ^ b);
  default:
    break;
  }
  if (!checkShiftCount(ConstValue::ofInt(k, b), k, at))
    return std::nullopt;
  if (op == BinaryOp::Shr)
    return ConstValue::ofInt(k, a >> b);
  if (k == ScalarKind::I32)
    return ConstValue::ofInt(k, int32_t(uint32_t(a) << b));
  return ConstValue::ofInt(k, int64_t(uint64_t(a) << b));
}

std::optional<ConstValue> Sema::foldUntyped(BinaryOp op, const ConstValue &a,
                                            const ConstValue &b,
                                            SourceRange at) {
  bool isInt =
      a.type.scalar == ScalarKind::I64 && b.type.scalar == ScalarKind::I64;
  if (isInt)
    return foldBinary(op, a, b, Type::scalarOf(ScalarKind::I64), at);
  return foldBinary(op, a, b, Type::scalarOf(ScalarKind::F64), at);
}

std::optional<ConstValue> Sema::foldCast(ScalarKind to, const ConstValue &v,
                                         SourceRange at) {
  ScalarKind from = v.type.scalar;
  if (to == ScalarKind::Bool)
    return ConstValue::ofBool(isFloat(from) ? v.asDouble() != 0.0
                                            : v.asInt() != 0);
  if (isFloat(to))
    return ConstValue::ofFloat(to, isFloat(from) ? v.asDouble()
                                                 : double(v.asInt()));
  // To an integer: floats truncate toward zero and must be in range.
  if (isFloat(from)) {
    double d = std::trunc(v.asDouble());
    double lo = to == ScalarKind::I32 ? -2147483648.0 : -9223372036854775808.0;
    double hi = to == ScalarKind::I32 ? 2147483648.0 : 9223372036854775808.0;
    if (!(d >= lo && d < hi)) {
      diags.error(at, "value " + formatDouble(v.asDouble()) +
                          " is out of range for '" + scalarName(to) + "'");
      return std::nullopt;
    }
    return ConstValue::ofInt(to, int64_t(d));
  }
  int64_t x = v.asInt();
  if (to == ScalarKind::I32 && !fitsI32(x)) {
    diags.error(at,
                "value " + std::to_string(x) + " is out of range for 'i32'");
    return std::nullopt;
  }
  return ConstValue::ofInt(to, x);
}

std::optional<ConstValue>
Sema::foldIntrinsic(Intrinsic i, const std::vector<ConstValue> &args, Type type,
                    SourceRange at) {
  if (i == Intrinsic::Select)
    return args[0].asInt() ? args[1] : args[2];
  if (i == Intrinsic::Idx || i == Intrinsic::Size || i == Intrinsic::Wtime ||
      !type.isScalar())
    return std::nullopt;
  if (isFloatPredicate(i)) {
    double x = args[0].asDouble();
    return ConstValue::ofBool(i == Intrinsic::IsNan ? std::isnan(x)
                                                    : std::isfinite(x));
  }
  ScalarKind k = type.scalar;
  if (isInteger(k)) {
    int64_t a = args[0].asInt();
    switch (i) {
    case Intrinsic::Abs:
      if (a == std::numeric_limits<int64_t>::min() ||
          (k == ScalarKind::I32 && !fitsI32(-a))) {
        diags.error(at, "integer overflow in constant expression");
        return std::nullopt;
      }
      return ConstValue::ofInt(k, a < 0 ? -a : a);
    case Intrinsic::Min:
      return ConstValue::ofInt(k, std::min(a, args[1].asInt()));
    case Intrinsic::Max:
      return ConstValue::ofInt(k, std::max(a, args[1].asInt()));
    default:
      return std::nullopt;
    }
  }
  // ast/ScalarSemantics.h: the one definition the backends follow.
  auto compute = [&](auto a, auto b, auto c) -> decltype(a) {
    decltype(a) r = 0;
    scalar::evaluate(i, a, b, c, r);
    return r;
  };
  auto arg = [&](unsigned n) {
    return n < args.size() ? args[n].asDouble() : 0.0;
  };
  if (k == ScalarKind::F32)
    return ConstValue::ofFloat(
        k, compute(float(arg(0)), float(arg(1)), float(arg(2))));
  return ConstValue::ofFloat(k, compute(arg(0), arg(1), arg(2)));
}

std::optional<ConstValue> Sema::representAs(const ConstValue &v, ScalarKind k) {
  bool isInt = !isFloat(v.type.scalar);
  if (k == ScalarKind::Bool)
    return std::nullopt;
  if (isInt) {
    int64_t x = v.asInt();
    switch (k) {
    case ScalarKind::I32:
      if (!fitsI32(x))
        return std::nullopt;
      return ConstValue::ofInt(k, x);
    case ScalarKind::I64:
      return ConstValue::ofInt(k, x);
    case ScalarKind::F32:
    case ScalarKind::F64: {
      constexpr int64_t exactLimit = int64_t(1) << 53;
      if (x > exactLimit || x < -exactLimit)
        return std::nullopt;
      double d = double(x);
      if (k == ScalarKind::F32 && double(float(d)) != d)
        return std::nullopt;
      return ConstValue::ofFloat(k, d);
    }
    default:
      return std::nullopt;
    }
  }
  double d = v.asDouble();
  if (k == ScalarKind::F64)
    return ConstValue::ofFloat(k, d);
  if (k == ScalarKind::F32) {
    if (std::isfinite(d) && std::fabs(d) > double(FLT_MAX))
      return std::nullopt;
    return ConstValue::ofFloat(k, d);
  }
  return std::nullopt;
}

} // namespace opdc::sema
