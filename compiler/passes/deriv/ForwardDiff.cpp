// ForwardDiff.cpp - Forward-mode (tangent) differentiation of IR statements.
// SPDX-License-Identifier: Apache-2.0
//
// Rules (x' is the tangent of x; a null tangent is zero and folds away):
//   a + b, a - b      a' + b', a' - b'
//   a * b             a' * b + a * b'
//   a / b             a' / b - a * b' / (b * b)
//   -a, cast(a)       -a', cast(a') (float to float; from integers: zero)
//   sqrt(x)           x' / (2 sqrt(x))
//   exp(x), log(x)    exp(x) x', x' / x
//   pow(x, y)         y pow(x, y - 1) x' + pow(x, y) log(x) y'
//                     (the y' term only when y is active, so a constant
//                     exponent never evaluates log of a negative base)
//   sin, cos, tan     cos(x) x', -sin(x) x', x' / cos(x)^2
//   atan(x)           x' / (1 + x^2)
//   atan2(y, x)       (x y' - y x') / (x^2 + y^2)
//   abs(x)            x >= 0 ? x' : -x'          (x' at 0: one-sided)
//   min(a, b)         a <= b ? a' : b'           (the operand min returned;
//   max(a, b)         a >= b ? a' : b'            ties as the forward run)
//   fma(a, b, c)      a' b + a b' + c'
//   floor, ceil,      zero (piecewise constant; random numbers depend on the
//   trunc, round, rng seed and the element only)
//   asin, acos        +-x' / sqrt(1 - x^2)
//   sinh, cosh, tanh  cosh(x) x', sinh(x) x', (1 - tanh(x)^2) x'
//   asinh, acosh      x' / sqrt(x^2 + 1), x' / sqrt(x^2 - 1)
//   atanh             x' / (1 - x^2)
//   cbrt, hypot       x' / (3 cbrt(x)^2), (x x' + y y') / hypot(x, y)
//   log2, log10,      x' / (x ln 2), x' / (x ln 10), x' / (1 + x)
//   log1p
//   exp2, expm1       exp2(x) ln 2 x', (expm1(x) + 1) x'
//   erf, erfc         +-2/sqrt(pi) exp(-x^2) x'
//   copysign(x, y)    sign(x) sign(y) x'
//   fmod(x, y)        x' - trunc(x / y) y'
//   select(c, a, b)   select(c, a', b')
// Statements keep their structure; an assignment `t op= v` becomes its
// tangent assignment followed by itself, with the tangent computed from the
// values before the statement.
#include "passes/deriv/ForwardDiff.h"

#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

namespace opdc {

using namespace ir;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

bool isFloatType(const Type &t) {
  return (t.isScalar() || t.isArray()) && isFloat(t.scalar);
}

namespace {

ExprPtr num(ScalarKind k, double v) {
  return std::make_unique<ConstantExpr>(ConstValue::ofFloat(k, v));
}
ExprPtr zero(Type t) { return std::make_unique<ConstantExpr>(zeroOf(t)); }
ExprPtr copy(const Expr &e) { return e.clone(); }

ExprPtr bin(BinaryOp op, ExprPtr a, ExprPtr b) {
  return std::make_unique<BinaryExpr>(op, std::move(a), std::move(b));
}
ExprPtr neg(ExprPtr a) {
  if (!a)
    return nullptr;
  return std::make_unique<UnaryExpr>(UnaryOp::Neg, std::move(a));
}
ExprPtr add(ExprPtr a, ExprPtr b) {
  if (!a)
    return b;
  if (!b)
    return a;
  return bin(BinaryOp::Add, std::move(a), std::move(b));
}
ExprPtr sub(ExprPtr a, ExprPtr b) {
  if (!b)
    return a;
  if (!a)
    return neg(std::move(b));
  return bin(BinaryOp::Sub, std::move(a), std::move(b));
}
/// t * f for a tangent t (maybe null) and a primal factor f.
ExprPtr scale(ExprPtr t, ExprPtr f) {
  if (!t)
    return nullptr;
  return bin(BinaryOp::Mul, std::move(f), std::move(t));
}
ExprPtr divide(ExprPtr t, ExprPtr d) {
  if (!t)
    return nullptr;
  return bin(BinaryOp::Div, std::move(t), std::move(d));
}
ExprPtr call(Intrinsic id, std::vector<ExprPtr> args) {
  return std::make_unique<IntrinsicExpr>(id, std::move(args));
}
ExprPtr call1(Intrinsic id, const Expr &x) {
  std::vector<ExprPtr> a;
  a.push_back(copy(x));
  return call(id, std::move(a));
}
ExprPtr select(ExprPtr c, ExprPtr a, ExprPtr b, Type t) {
  if (!a && !b)
    return nullptr;
  std::vector<ExprPtr> args;
  args.push_back(std::move(c));
  args.push_back(a ? std::move(a) : zero(t));
  args.push_back(b ? std::move(b) : zero(t));
  return call(Intrinsic::Select, std::move(args));
}

/// 1 - x^2 (or 1 + x^2 with \p plus).
ExprPtr sq1(ScalarKind k, const Expr &x, bool plus) {
  return bin(plus ? BinaryOp::Add : BinaryOp::Sub, num(k, 1.0),
             bin(BinaryOp::Mul, copy(x), copy(x)));
}

} // namespace

unsigned ForwardDiff::tangentSlot(unsigned slot) {
  if (slots.var.size() < fn.vars.size())
    slots.var.resize(fn.vars.size(), -1);
  if (slots.var[slot] < 0) {
    const Var v = fn.vars[slot];
    slots.var[slot] =
        int(fn.addVar(v.name + ".d", v.type, v.isMutable, v.range));
    slots.var.resize(fn.vars.size(), -1);
  }
  return unsigned(slots.var[slot]);
}

ExprPtr ForwardDiff::tangent(const Expr &e) {
  if (!isFloatType(e.type))
    return nullptr;
  switch (e.kind) {
  case ExprKind::Constant:
  case ExprKind::ParamRef:
  case ExprKind::SizeOf:
    return nullptr;
  case ExprKind::VarRef: {
    const auto &v = cast<VarRefExpr>(e);
    if (v.slot >= slots.var.size() || slots.var[v.slot] < 0)
      return nullptr;
    return std::make_unique<VarRefExpr>(unsigned(slots.var[v.slot]), e.type,
                                        e.range);
  }
  case ExprKind::KernelArg: {
    const auto &a = cast<KernelArgExpr>(e);
    if (a.index >= slots.param.size() || slots.param[a.index] < 0)
      return nullptr;
    return std::make_unique<KernelArgExpr>(unsigned(slots.param[a.index]),
                                           e.type, a.offset, e.range);
  }
  case ExprKind::Unary: {
    const auto &u = cast<UnaryExpr>(e);
    return u.op == UnaryOp::Neg ? neg(tangent(*u.operand)) : nullptr;
  }
  case ExprKind::Binary: {
    const auto &b = cast<BinaryExpr>(e);
    ExprPtr da = tangent(*b.lhs), db = tangent(*b.rhs);
    switch (b.op) {
    case BinaryOp::Add:
      return add(std::move(da), std::move(db));
    case BinaryOp::Sub:
      return sub(std::move(da), std::move(db));
    case BinaryOp::Mul:
      return add(scale(std::move(da), copy(*b.rhs)),
                 scale(std::move(db), copy(*b.lhs)));
    case BinaryOp::Div:
      return sub(divide(std::move(da), copy(*b.rhs)),
                 divide(scale(std::move(db), copy(*b.lhs)),
                        bin(BinaryOp::Mul, copy(*b.rhs), copy(*b.rhs))));
    default:
      return nullptr;
    }
  }
  case ExprKind::Cast: {
    const auto &c = cast<CastExpr>(e);
    ExprPtr d = tangent(*c.operand);
    if (!d)
      return nullptr;
    return std::make_unique<CastExpr>(c.to(), std::move(d), e.range);
  }
  case ExprKind::Index: {
    const auto &i = cast<IndexExpr>(e);
    ExprPtr d = tangent(*i.base);
    if (!d)
      return nullptr;
    return std::make_unique<IndexExpr>(std::move(d), copy(*i.index), e.range);
  }
  case ExprKind::ArrayLit: {
    const auto &a = cast<ArrayLitExpr>(e);
    std::vector<ExprPtr> d;
    bool any = false;
    for (const ExprPtr &x : a.elements) {
      ExprPtr t = tangent(*x);
      any = any || t;
      d.push_back(t ? std::move(t) : zero(x->type));
    }
    if (!any)
      return nullptr;
    return std::make_unique<ArrayLitExpr>(std::move(d), e.range);
  }
  case ExprKind::Intrinsic:
    return intrinsicTangent(cast<IntrinsicExpr>(e));
  case ExprKind::Call:
    diags.error(e.range, "cannot differentiate through the call of '" +
                             cast<CallExpr>(e).callee->name +
                             "' (it could not be inlined; see -Rpass=inline)");
    failed = true;
    return nullptr;
  }
  return nullptr;
}

ExprPtr ForwardDiff::intrinsicTangent(const IntrinsicExpr &e) {
  return intrinsicDerivative(
      e, [&](size_t i) { return tangent(*e.args[i]); }, diags, failed);
}

ExprPtr intrinsicDerivative(const IntrinsicExpr &e,
                            const std::function<ExprPtr(size_t)> &t,
                            DiagnosticEngine &diags, bool &failed) {
  const std::vector<ExprPtr> &a = e.args;
  ScalarKind k = e.type.scalar;
  switch (e.id) {
  case Intrinsic::Sqrt:
    return divide(t(0), bin(BinaryOp::Mul, num(k, 2.0), copy(e)));
  case Intrinsic::Exp:
    return scale(t(0), copy(e));
  case Intrinsic::Log:
    return divide(t(0), copy(*a[0]));
  case Intrinsic::Pow: {
    ExprPtr dx = t(0), dy = t(1);
    ExprPtr byX;
    if (dx) {
      std::vector<ExprPtr> args;
      args.push_back(copy(*a[0]));
      args.push_back(bin(BinaryOp::Sub, copy(*a[1]), num(k, 1.0)));
      byX = scale(scale(std::move(dx), call(Intrinsic::Pow, std::move(args))),
                  copy(*a[1]));
    }
    ExprPtr byY;
    if (dy)
      byY = scale(scale(std::move(dy), call1(Intrinsic::Log, *a[0])), copy(e));
    return add(std::move(byX), std::move(byY));
  }
  case Intrinsic::Sin:
    return scale(t(0), call1(Intrinsic::Cos, *a[0]));
  case Intrinsic::Cos:
    return neg(scale(t(0), call1(Intrinsic::Sin, *a[0])));
  case Intrinsic::Tan: {
    ExprPtr c = call1(Intrinsic::Cos, *a[0]);
    return divide(
        t(0), bin(BinaryOp::Mul, std::move(c), call1(Intrinsic::Cos, *a[0])));
  }
  case Intrinsic::Atan:
    return divide(t(0), bin(BinaryOp::Add, num(k, 1.0),
                            bin(BinaryOp::Mul, copy(*a[0]), copy(*a[0]))));
  case Intrinsic::Atan2: {
    // atan2(y, x): (x y' - y x') / (x^2 + y^2).
    ExprPtr num2 = sub(scale(t(0), copy(*a[1])), scale(t(1), copy(*a[0])));
    return divide(std::move(num2),
                  bin(BinaryOp::Add,
                      bin(BinaryOp::Mul, copy(*a[1]), copy(*a[1])),
                      bin(BinaryOp::Mul, copy(*a[0]), copy(*a[0]))));
  }
  case Intrinsic::Abs: {
    ExprPtr d = t(0);
    if (!d)
      return nullptr;
    ExprPtr cond = bin(BinaryOp::Ge, copy(*a[0]), num(k, 0.0));
    ExprPtr negated = neg(d->clone());
    return select(std::move(cond), std::move(d), std::move(negated), e.type);
  }
  case Intrinsic::Min:
  case Intrinsic::Max: {
    BinaryOp cmp = e.id == Intrinsic::Min ? BinaryOp::Le : BinaryOp::Ge;
    return select(bin(cmp, copy(*a[0]), copy(*a[1])), t(0), t(1), e.type);
  }
  case Intrinsic::Fma:
    return add(add(scale(t(0), copy(*a[1])), scale(t(1), copy(*a[0]))), t(2));
  case Intrinsic::Floor:
  case Intrinsic::Ceil:
  case Intrinsic::Trunc:
  case Intrinsic::Round:
  case Intrinsic::RngUniform: // a function of the seed and the element only
  case Intrinsic::RngNormal:
    return nullptr;
  case Intrinsic::Asin:
  case Intrinsic::Acos: {
    ExprPtr d = divide(t(0), call1(Intrinsic::Sqrt, *sq1(k, *a[0], false)));
    return e.id == Intrinsic::Asin ? std::move(d) : neg(std::move(d));
  }
  case Intrinsic::Sinh:
    return scale(t(0), call1(Intrinsic::Cosh, *a[0]));
  case Intrinsic::Cosh:
    return scale(t(0), call1(Intrinsic::Sinh, *a[0]));
  case Intrinsic::Tanh:
    return scale(t(0), bin(BinaryOp::Sub, num(k, 1.0),
                           bin(BinaryOp::Mul, copy(e), copy(e))));
  case Intrinsic::Asinh:
    return divide(t(0), call1(Intrinsic::Sqrt, *sq1(k, *a[0], true)));
  case Intrinsic::Acosh:
    return divide(t(0), call1(Intrinsic::Sqrt,
                              *bin(BinaryOp::Sub,
                                   bin(BinaryOp::Mul, copy(*a[0]), copy(*a[0])),
                                   num(k, 1.0))));
  case Intrinsic::Atanh:
    return divide(t(0), sq1(k, *a[0], false));
  case Intrinsic::Cbrt:
    return divide(t(0), bin(BinaryOp::Mul, num(k, 3.0),
                            bin(BinaryOp::Mul, copy(e), copy(e))));
  case Intrinsic::Hypot:
    return divide(add(scale(t(0), copy(*a[0])), scale(t(1), copy(*a[1]))),
                  copy(e));
  case Intrinsic::Log2:
  case Intrinsic::Log10:
    return divide(
        t(0), bin(BinaryOp::Mul, copy(*a[0]),
                  num(k, e.id == Intrinsic::Log2 ? 0.69314718055994530942
                                                 : 2.30258509299404568402)));
  case Intrinsic::Log1p:
    return divide(t(0), bin(BinaryOp::Add, num(k, 1.0), copy(*a[0])));
  case Intrinsic::Exp2:
    return scale(t(0),
                 bin(BinaryOp::Mul, copy(e), num(k, 0.69314718055994530942)));
  case Intrinsic::Expm1:
    return scale(t(0), bin(BinaryOp::Add, copy(e), num(k, 1.0)));
  case Intrinsic::Erf:
  case Intrinsic::Erfc: {
    // 2/sqrt(pi) exp(-x^2)
    ExprPtr g = bin(BinaryOp::Mul, num(k, 1.12837916709551257390),
                    call1(Intrinsic::Exp,
                          *neg(bin(BinaryOp::Mul, copy(*a[0]), copy(*a[0])))));
    ExprPtr d = scale(t(0), std::move(g));
    return e.id == Intrinsic::Erf ? std::move(d) : neg(std::move(d));
  }
  case Intrinsic::Copysign: {
    // |x| with y's sign: x' times sign(x) sign(y) (y's tangent: zero).
    auto unit = [&](const Expr &v) {
      std::vector<ExprPtr> args;
      args.push_back(num(k, 1.0));
      args.push_back(copy(v));
      return call(Intrinsic::Copysign, std::move(args));
    };
    return scale(t(0), bin(BinaryOp::Mul, unit(*a[0]), unit(*a[1])));
  }
  case Intrinsic::Fmod:
    // x - trunc(x / y) y, the quotient piecewise constant.
    return sub(t(0), scale(t(1), call1(Intrinsic::Trunc,
                                       *bin(BinaryOp::Div, copy(*a[0]),
                                            copy(*a[1])))));
  case Intrinsic::Select:
    return select(copy(*a[0]), t(1), t(2), e.type);
  default:
    diags.error(e.range, std::string("cannot differentiate intrinsic '") +
                             intrinsicName(e.id) + "' yet");
    failed = true;
    return nullptr;
  }
}

void ForwardDiff::assignTangent(const AssignStmt &s,
                                std::vector<StmtPtr> &out) {
  ExprPtr target = tangent(*s.target);
  if (!target)
    return;
  Type t = s.target->type;
  ExprPtr dv = tangent(*s.value);
  ExprPtr value;
  AssignOp op = AssignOp::Set;
  switch (s.op) {
  case AssignOp::Set:
    value = dv ? std::move(dv) : zero(t);
    break;
  case AssignOp::Add:
  case AssignOp::Sub:
    if (!dv)
      return;
    op = s.op;
    value = std::move(dv);
    break;
  case AssignOp::Mul:
    // (t * v)' = t' * v + t * v'
    value = add(scale(target->clone(), copy(*s.value)),
                scale(std::move(dv), copy(*s.target)));
    break;
  case AssignOp::Div:
    // (t / v)' = t' / v - t * v' / (v * v)
    value = sub(divide(target->clone(), copy(*s.value)),
                divide(scale(std::move(dv), copy(*s.target)),
                       bin(BinaryOp::Mul, copy(*s.value), copy(*s.value))));
    break;
  default:
    return; // bit operations: integers, passive
  }
  out.push_back(std::make_unique<AssignStmt>(op, std::move(target),
                                             std::move(value), s.range));
}

void ForwardDiff::differentiate(const Stmt &s, std::vector<StmtPtr> &out) {
  switch (s.kind) {
  case StmtKind::Decl: {
    const auto &d = cast<DeclStmt>(s);
    if (isFloatType(fn.vars[d.slot].type)) {
      ExprPtr init = tangent(*d.init);
      unsigned ts = tangentSlot(d.slot);
      out.push_back(std::make_unique<DeclStmt>(
          ts, init ? std::move(init) : zero(fn.vars[d.slot].type), d.range));
    }
    out.push_back(s.clone());
    return;
  }
  case StmtKind::Assign:
    assignTangent(cast<AssignStmt>(s), out);
    out.push_back(s.clone());
    return;
  case StmtKind::If: {
    const auto &i = cast<IfStmt>(s);
    out.push_back(std::make_unique<IfStmt>(copy(*i.cond),
                                           differentiate(i.thenBody),
                                           differentiate(i.elseBody), i.range));
    return;
  }
  case StmtKind::For: {
    const auto &f = cast<ForStmt>(s);
    out.push_back(std::make_unique<ForStmt>(f.slot, copy(*f.lo), copy(*f.hi),
                                            differentiate(f.body), f.range));
    return;
  }
  case StmtKind::While: {
    const auto &w = cast<WhileStmt>(s);
    out.push_back(std::make_unique<WhileStmt>(copy(*w.cond),
                                              differentiate(w.body), w.range));
    return;
  }
  case StmtKind::Break:
  case StmtKind::Continue:
    out.push_back(s.clone());
    return;
  case StmtKind::Eval: {
    const auto &e = cast<EvalStmt>(s);
    if (auto *c = dyn_cast<CallExpr>(e.expr.get())) {
      diags.error(s.range, "cannot differentiate through the call of '" +
                               c->callee->name + "'");
      failed = true;
      return;
    }
    out.push_back(s.clone());
    return;
  }
  default:
    if (other && other(s, out))
      return;
    diags.error(s.range, "this statement cannot be differentiated");
    failed = true;
    return;
  }
}

Body ForwardDiff::differentiate(const Body &in) {
  Body out;
  for (const StmtPtr &s : in.stmts)
    differentiate(*s, out.stmts);
  return out;
}

} // namespace opdc
