// VerifierExprs.cpp - IR verifier: expressions, their types recomputed from
// their operands.
// SPDX-License-Identifier: Apache-2.0
#include "ir/VerifierImpl.h"

namespace opdc::ir::verifier {

Type Verifier::checkIntrinsic(const IntrinsicExpr &e, Scope &sc) {
  std::vector<Type> ts;
  for (const auto &a : e.args) {
    if (!a) {
      problem(std::string("null argument of ") + intrinsicName(e.id));
      return Type::error();
    }
    ts.push_back(check(*a, sc));
  }
  std::string n = intrinsicName(e.id);
  if (!isIRIntrinsic(e.id)) {
    problem("intrinsic " + n + " in the IR");
    return Type::error();
  }
  if (ts.size() != intrinsicArity(e.id)) {
    problem(n + " with " + std::to_string(ts.size()) + " arguments");
    return Type::error();
  }
  bool kernelCode = fn && !fn->isHost();
  switch (e.id) {
  case Intrinsic::Wtime:
    if (kernelCode || !fn)
      problem("wtime() outside host code");
    return Type::scalarOf(ScalarKind::F64);
  case Intrinsic::Idx: {
    if (!fn || !fn->isKernel())
      problem("idx() outside a kernel");
    auto *c = dyn_cast<ConstantExpr>(e.args[0].get());
    if (!c || !ts[0].isIntegerScalar() || c->value.asInt(0) < 0 ||
        c->value.asInt(0) > 2)
      problem("idx() of " + str(*e.args[0]) +
              ", expected an integer constant 0..2");
    return Type::scalarOf(ScalarKind::I32);
  }
  case Intrinsic::RngUniform:
  case Intrinsic::RngNormal:
    if (!fn || !fn->isKernel())
      problem(n + "() outside a kernel");
    for (const Type &t : ts)
      if (t != Type::scalarOf(ScalarKind::I64)) {
        problem(n + "() of " + t.str() + ", expected (i64, i64)");
        break;
      }
    return Type::scalarOf(ScalarKind::F64);
  case Intrinsic::Select:
    if (!ts[0].isBool())
      problem("select() condition " + str(*e.args[0]) + " is " + ts[0].str());
    if (ts[1] != ts[2] || !ts[1].isScalar())
      problem("select() between " + ts[1].str() + " and " + ts[2].str());
    return ts[1];
  case Intrinsic::Abs:
  case Intrinsic::Min:
  case Intrinsic::Max:
    for (const Type &t : ts)
      if (t != ts[0] || !t.isNumeric()) {
        problem(n + "() of " + t.str() + ", expected numbers of one type");
        break;
      }
    return ts[0];
  case Intrinsic::IsNan:
  case Intrinsic::IsFinite:
    if (!ts[0].isFloatScalar())
      problem(n + "() of " + ts[0].str() + ", expected a float");
    return Type::scalarOf(ScalarKind::Bool);
  default:
    for (const Type &t : ts)
      if (t != ts[0] || !t.isFloatScalar()) {
        problem(n + "() of " + t.str() + ", expected floats of one type");
        break;
      }
    return ts[0];
  }
}

Type Verifier::check(const Expr &e, Scope &sc) {
  bool host = !fn || fn->isHost();
  Type got = Type::error();
  auto sub = [&](const ExprPtr &x, const char *what) {
    return checkOperand(x, what, sc);
  };
  switch (e.kind) {
  case ExprKind::Constant: {
    const auto &c = cast<ConstantExpr>(e);
    got = c.value.type;
    if (got.isString() && !host)
      problem("string constant outside host code");
    if (got.isScalar() || got.isArray()) {
      size_t n = got.dim();
      size_t have =
          isFloat(got.scalar) ? c.value.floats.size() : c.value.ints.size();
      if (have != n)
        problem("constant of " + got.str() + " with " + std::to_string(have) +
                " components");
    } else if (!got.isString()) {
      problem("constant of type " + got.str());
    }
    break;
  }
  case ExprKind::VarRef:
  case ExprKind::ParamRef:
  case ExprKind::KernelArg:
    got = checkReference(e, sc);
    break;
  case ExprKind::Unary:
  case ExprKind::Binary:
  case ExprKind::Cast:
    got = checkOperator(e, sc);
    break;
  case ExprKind::Index: {
    const auto &i = cast<IndexExpr>(e);
    Type bt = sub(i.base, "indexed value"), it = sub(i.index, "index");
    if (!bt.isArray()) {
      problem("index into " + bt.str() + " value");
      return e.type;
    }
    if (!it.isIntegerScalar())
      problem("index of type " + it.str());
    if (auto *c = dyn_cast_or_null<ConstantExpr>(i.index.get()))
      if (c->value.type.isIntegerScalar() &&
          (c->value.asInt(0) < 0 || c->value.asInt(0) >= bt.length))
        problem("index " + std::to_string(c->value.asInt(0)) +
                " out of bounds of " + bt.str());
    got = Type::scalarOf(bt.scalar);
    break;
  }
  case ExprKind::Intrinsic:
    got = checkIntrinsic(cast<IntrinsicExpr>(e), sc);
    break;
  case ExprKind::Call: {
    const auto &c = cast<CallExpr>(e);
    const Function *callee = c.callee;
    bool known = fns.count(callee) || procs.count(callee);
    if (!known) {
      problem("call of a function outside the program");
      return e.type;
    }
    if (callee->kind == FunctionKind::Proc && !host)
      problem("call of proc '" + callee->name + "' outside host code");
    if (c.args.size() != callee->params.size())
      problem("call of '" + callee->name + "' with " +
              std::to_string(c.args.size()) + " arguments, expected " +
              std::to_string(callee->params.size()));
    for (size_t i = 0; i < c.args.size() && i < callee->params.size(); ++i)
      expectType(c.args[i], callee->vars[callee->params[i]].type, sc,
                 "argument");
    got = callee->returnType;
    break;
  }
  case ExprKind::ArrayLit: {
    const auto &a = cast<ArrayLitExpr>(e);
    if (a.elements.empty()) {
      problem("empty array literal");
      return e.type;
    }
    Type t0 = sub(a.elements[0], "element");
    for (size_t i = 1; i < a.elements.size(); ++i)
      if (sub(a.elements[i], "element") != t0)
        problem("array literal mixes element types");
    if (!t0.isScalar())
      problem("array literal of " + t0.str());
    got = Type::arrayOf(t0.scalar, uint32_t(a.elements.size()));
    break;
  }
  case ExprKind::SizeOf: {
    const auto &s = cast<SizeOfExpr>(e);
    if (!host)
      problem("size() outside host code");
    if (bool(s.set) == bool(s.dat))
      problem("size() needs exactly one of a set and a dat");
    else if (s.set && !sets.count(s.set))
      problem("size() of a set outside the program");
    else if (s.dat && (!dats.count(s.dat) || !s.dat->block ||
                       s.dim >= s.dat->block->dims))
      problem("size() of dimension " + std::to_string(s.dim) + " of " +
              name(s.dat));
    if (!e.type.isIntegerScalar())
      problem("size() of type " + e.type.str());
    got = e.type;
    break;
  }
  }
  if (got != e.type)
    problem("expression " + str(e) + " is stored as " + e.type.str() +
            " but its operands make it " + got.str());
  return got;
}

Type Verifier::checkOperand(const ExprPtr &x, const char *what, Scope &sc) {
  if (!x) {
    problem(std::string("missing ") + what);
    return Type::error();
  }
  return check(*x, sc);
}

/// A variable, param or kernel parameter: it exists and is in reach here.
/// Where check() would stop early this returns the stored type, which
/// check() then finds consistent.
Type Verifier::checkReference(const Expr &e, Scope &sc) {
  bool host = !fn || fn->isHost();
  Type got = Type::error();
  switch (e.kind) {
  case ExprKind::VarRef: {
    const auto &v = cast<VarRefExpr>(e);
    if (!validSlot(int(v.slot))) {
      problem("use of slot " + std::to_string(v.slot) +
              ", which does not exist");
      return e.type;
    }
    if (!sc.defined[v.slot])
      problem("use of " + str(v) + " outside the scope of its declaration");
    got = fn->vars[v.slot].type;
    break;
  }
  case ExprKind::ParamRef: {
    const auto &p = cast<ParamRefExpr>(e);
    if (!params.count(p.param)) {
      problem("use of a param outside the program");
      return e.type;
    }
    got = p.param->type;
    if (got.isString() && !host)
      problem("string param '" + p.param->name + "' outside host code");
    break;
  }
  case ExprKind::KernelArg: {
    const auto &a = cast<KernelArgExpr>(e);
    if (!fn || !fn->isKernel()) {
      problem("kernel parameter reference outside a kernel");
      return e.type;
    }
    if (a.index >= fn->kernelParams.size()) {
      problem("use of kernel parameter " + std::to_string(a.index) +
              ", which does not exist");
      return e.type;
    }
    const KernelParam &p = fn->kernelParams[a.index];
    got = p.type;
    if (p.stencil) {
      if (a.offset.size() != p.stencil->dims)
        problem("stencil read " + str(a) + " with " +
                std::to_string(a.offset.size()) + " offsets, expected " +
                std::to_string(p.stencil->dims));
      else if (!p.stencil->contains(a.offset))
        problem("stencil read " + str(a) + " at a point not in stencil '" +
                p.stencil->name + "'");
    } else if (!a.offset.empty()) {
      problem("offset read " + str(a) + " of non-stencil parameter");
    }
    break;
  }
  default:
    problem("expression " + str(e) + " checked as a reference");
    break;
  }
  return got;
}

/// Unary, binary and cast operators: their operand types fit the operator.
Type Verifier::checkOperator(const Expr &e, Scope &sc) {
  Type got = Type::error();
  auto sub = [&](const ExprPtr &x, const char *what) {
    return checkOperand(x, what, sc);
  };
  switch (e.kind) {
  case ExprKind::Unary: {
    const auto &u = cast<UnaryExpr>(e);
    Type t = sub(u.operand, "operand");
    if (u.op == UnaryOp::Neg && !t.isNumeric())
      problem("negation of " + t.str());
    if (u.op == UnaryOp::Not && !t.isBool())
      problem("'!' of " + t.str());
    if (u.op == UnaryOp::BitNot && !t.isIntegerScalar())
      problem("'~' of " + t.str());
    got = u.op == UnaryOp::Not ? Type::scalarOf(ScalarKind::Bool) : t;
    break;
  }
  case ExprKind::Binary: {
    const auto &b = cast<BinaryExpr>(e);
    Type l = sub(b.lhs, "left operand"), r = sub(b.rhs, "right operand");
    std::string op = spelling(b.op);
    if (l != r)
      problem("operands of '" + op + "' have types " + l.str() + " and " +
              r.str() + " in " + str(b));
    else if (l.isString() && b.op != BinaryOp::Eq && b.op != BinaryOp::Ne)
      problem("operands of '" + op + "' are str (only == and != compare them)");
    else if (l.isString())
      ; // text comparison
    else if (!l.isScalar())
      problem("operands of '" + op + "' are " + l.str());
    else if (isLogical(b.op) && !l.isBool())
      problem("operands of '" + op + "' are " + l.str() + ", expected bool");
    else if (isArithmetic(b.op) && !l.isNumeric())
      problem("operands of '" + op + "' are " + l.str());
    else if ((b.op == BinaryOp::Rem || isBitwise(b.op)) &&
             !l.isIntegerScalar())
      problem("operands of '" + op + "' are " + l.str() +
              ", expected integers");
    else if (isComparison(b.op) && b.op != BinaryOp::Eq &&
             b.op != BinaryOp::Ne && !l.isNumeric())
      problem("ordering of " + l.str());
    got = isComparison(b.op) || isLogical(b.op)
              ? Type::scalarOf(ScalarKind::Bool)
              : l;
    break;
  }
  case ExprKind::Cast: {
    const auto &c = cast<CastExpr>(e);
    Type t = sub(c.operand, "cast operand");
    if (!t.isScalar())
      problem("cast of " + t.str());
    got = Type::scalarOf(c.to());
    break;
  }
  default:
    problem("expression " + str(e) + " checked as an operator");
    break;
  }
  return got;
}

} // namespace opdc::ir::verifier
