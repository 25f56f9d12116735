// LowerExprs.cpp - AST -> Program IR: expressions, with the casts that
// make operand types explicit.
// SPDX-License-Identifier: Apache-2.0
#include "lower/LowerImpl.h"

namespace opdc::lower {

bool Lowerer::foldable(const ast::Expr &e) const {
  auto all = [&](const std::vector<ast::ExprPtr> &v) {
    for (const auto &x : v)
      if (x && !foldable(*x))
        return false;
    return true;
  };
  switch (e.kind) {
  case ast::ExprKind::IntLit:
  case ast::ExprKind::FloatLit:
  case ast::ExprKind::BoolLit:
  case ast::ExprKind::StringLit:
    return true;
  case ast::ExprKind::Name: {
    const ast::Decl *d = cast<ast::NameExpr>(e).decl;
    return d && d->kind == ast::DeclKind::Const;
  }
  case ast::ExprKind::Unary:
    return foldable(*cast<ast::UnaryExpr>(e).operand);
  case ast::ExprKind::Binary:
    return foldable(*cast<ast::BinaryExpr>(e).lhs) &&
           foldable(*cast<ast::BinaryExpr>(e).rhs);
  case ast::ExprKind::Cast:
    return foldable(*cast<ast::CastExpr>(e).operand);
  case ast::ExprKind::Index:
    return foldable(*cast<ast::IndexExpr>(e).base) &&
           foldable(*cast<ast::IndexExpr>(e).index);
  case ast::ExprKind::ArrayLit:
    return all(cast<ast::ArrayLitExpr>(e).elements);
  case ast::ExprKind::Call: {
    const auto &c = cast<ast::CallExpr>(e);
    if (c.target != ast::CallTarget::Intrinsic)
      return false;
    switch (c.intrinsic) {
    case ast::Intrinsic::Idx:
    case ast::Intrinsic::Size:
    case ast::Intrinsic::Wtime:
    case ast::Intrinsic::RngUniform:
    case ast::Intrinsic::RngNormal:
    case ast::Intrinsic::None:
      return false;
    default:
      return all(c.args);
    }
  }
  case ast::ExprKind::Member:
    return false;
  }
  return false;
}

ir::ExprPtr Lowerer::constant(const ConstValue &v, Type t, SourceRange r) {
  Type want = isValueType(t) ? t : v.type;
  return B::constant(ir::convertConst(v, want), r);
}

ir::ExprPtr Lowerer::coerce(ir::ExprPtr e, Type t) {
  if (!e || !isValueType(t) || e->type == t)
    return e;
  if (auto *c = dyn_cast<ir::ConstantExpr>(e.get()))
    if (!c->value.type.isString() && !t.isString())
      return B::constant(ir::convertConst(c->value, t), c->range);
  if (t.isScalar() && e->type.isScalar()) {
    SourceRange r = e->range;
    return B::cast(t.scalar, std::move(e), r);
  }
  if (t.isArray())
    if (auto *a = dyn_cast<ir::ArrayLitExpr>(e.get())) {
      for (auto &el : a->elements)
        el = coerce(std::move(el), Type::scalarOf(t.scalar));
      a->type = t;
    }
  return e;
}

ir::ExprPtr Lowerer::exprAs(const ast::Expr &e, Type t) {
  return coerce(expr(e), t);
}

ir::ExprPtr Lowerer::exprOr(const ast::ExprPtr &e, Type fallback,
                            SourceRange at) {
  if (!e) {
    fail(at, "a missing expression");
    return placeholder(fallback);
  }
  return exprAs(*e, fallback);
}

ir::ExprPtr Lowerer::name(const ast::NameExpr &e) {
  const ast::Decl *d = e.decl;
  if (!d) {
    fail(e.range, "unresolved name '" + e.name + "'");
    return placeholder(e.type);
  }
  switch (d->kind) {
  case ast::DeclKind::Const: {
    auto *c = cast<ast::ConstDecl>(d);
    return constant(c->value, isValueType(e.type) ? e.type : c->value.type,
                    e.range);
  }
  case ast::DeclKind::Param: {
    auto it = params.find(d);
    if (it == params.end())
      break;
    return coerce(B::param(it->second, e.range), e.type);
  }
  case ast::DeclKind::KernelParam: {
    auto it = st.kparams.find(cast<ast::KernelParamDecl>(d));
    if (it == st.kparams.end())
      break;
    const ir::KernelParam &p = st.fn->kernelParams[it->second];
    // A stencil parameter named without offsets is its centre point.
    std::vector<int64_t> offset;
    if (p.stencil)
      offset.assign(p.stencil->dims, 0);
    return B::arg(*st.fn, it->second, std::move(offset), e.range);
  }
  case ast::DeclKind::Var: {
    auto it = st.slots.find(d);
    if (it == st.slots.end())
      break;
    return B::var(*st.fn, it->second, e.range);
  }
  default:
    break;
  }
  fail(e.range, std::string("a use of ") + ast::declKindName(d->kind) + " '" +
                    e.name + "' as a value");
  return placeholder(e.type);
}

ir::ExprPtr Lowerer::intrinsic(const ast::CallExpr &e) {
  if (e.intrinsic == ast::Intrinsic::Size) {
    Type t =
        e.type.isIntegerScalar() ? e.type : Type::scalarOf(ScalarKind::I32);
    const ast::Decl *d = nullptr;
    if (!e.args.empty())
      if (auto *n = dyn_cast<ast::NameExpr>(e.args[0].get()))
        d = n->decl;
    if (auto it = sets.find(d); it != sets.end())
      return std::make_unique<ir::SizeOfExpr>(it->second, nullptr, 0, t,
                                              e.range);
    if (auto it = dats.find(d); it != dats.end()) {
      unsigned dim = 0;
      if (e.args.size() > 1 && e.args[1]->constValue)
        dim = unsigned(e.args[1]->constValue->asInt(0));
      return std::make_unique<ir::SizeOfExpr>(nullptr, it->second, dim, t,
                                              e.range);
    }
    fail(e.range, "size() of something that is not a set or dat");
    return placeholder(t);
  }
  if (!isIRIntrinsic(e.intrinsic)) {
    fail(e.range, "call of unknown intrinsic '" + e.callee + "'");
    return placeholder(e.type);
  }
  ir::Intrinsic id = e.intrinsic;
  std::vector<ir::ExprPtr> args;
  switch (id) {
  case ir::Intrinsic::Idx: {
    int64_t dim = 0;
    if (!e.args.empty() && e.args[0]->constValue)
      dim = e.args[0]->constValue->asInt(0);
    args.push_back(B::i32(dim));
    break;
  }
  case ir::Intrinsic::Wtime:
    break;
  case ir::Intrinsic::RngUniform:
  case ir::Intrinsic::RngNormal:
    // Seed and counter: any integers, as i64 (sign-extended).
    for (const auto &a : e.args)
      args.push_back(exprAs(*a, Type::scalarOf(ScalarKind::I64)));
    break;
  case ir::Intrinsic::IsNan:
  case ir::Intrinsic::IsFinite:
    // A float argument (sema converted it), a bool result.
    for (const auto &a : e.args)
      args.push_back(expr(*a));
    break;
  case ir::Intrinsic::Select: {
    if (e.args.size() != 3)
      break;
    args.push_back(exprAs(*e.args[0], Type::scalarOf(ScalarKind::Bool)));
    args.push_back(exprAs(*e.args[1], e.type));
    args.push_back(exprAs(*e.args[2], e.type));
    break;
  }
  default:
    // Math intrinsics take and give one type: the call's.
    for (const auto &a : e.args)
      args.push_back(exprAs(*a, e.type));
    break;
  }
  return coerce(B::intrinsic(id, std::move(args), e.range), e.type);
}

ir::ExprPtr Lowerer::call(const ast::CallExpr &e) {
  switch (e.target) {
  case ast::CallTarget::Intrinsic:
    return intrinsic(e);
  case ast::CallTarget::Fn:
  case ast::CallTarget::Proc: {
    auto it = functions.find(e.calleeDecl);
    if (it == functions.end())
      break;
    ir::Function *callee = it->second;
    std::vector<ir::ExprPtr> args;
    for (size_t i = 0; i < e.args.size(); ++i) {
      Type t = i < callee->params.size() ? callee->vars[callee->params[i]].type
                                         : e.args[i]->type;
      args.push_back(exprAs(*e.args[i], t));
    }
    return B::call(callee, std::move(args), e.range);
  }
  case ast::CallTarget::StencilRead: {
    auto *p = dyn_cast_or_null<ast::KernelParamDecl>(e.calleeDecl);
    auto it = st.kparams.find(p);
    if (it == st.kparams.end())
      break;
    return B::arg(*st.fn, it->second, e.stencilOffset, e.range);
  }
  case ast::CallTarget::Unresolved:
    break;
  }
  fail(e.range, "call of unresolved '" + e.callee + "'");
  return placeholder(e.type);
}

ir::ExprPtr Lowerer::lvalue(const ast::Expr &e) {
  // Targets are names, stencil points and components of those; expr()
  // lowers all of them to the right lvalue nodes (never folded: a target
  // refers to a variable or parameter, not a const).
  return expr(e);
}

ir::ExprPtr Lowerer::expr(const ast::Expr &e) {
  if (e.constValue && e.constValue->valid() && foldable(e))
    return constant(*e.constValue, e.type, e.range);
  switch (e.kind) {
  case ast::ExprKind::IntLit: {
    const auto &l = cast<ast::IntLitExpr>(e);
    return constant(
        ConstValue::ofInt(ScalarKind::I64, l.value),
        isValueType(e.type)
            ? e.type
            : Type::scalarOf(l.forceI64 ? ScalarKind::I64 : ScalarKind::I32),
        e.range);
  }
  case ast::ExprKind::FloatLit: {
    const auto &l = cast<ast::FloatLitExpr>(e);
    return constant(
        ConstValue::ofFloat(ScalarKind::F64, l.value),
        isValueType(e.type)
            ? e.type
            : Type::scalarOf(l.isF32 ? ScalarKind::F32 : ScalarKind::F64),
        e.range);
  }
  case ast::ExprKind::BoolLit:
    return B::constant(ConstValue::ofBool(cast<ast::BoolLitExpr>(e).value),
                       e.range);
  case ast::ExprKind::StringLit:
    return B::constant(ConstValue::ofString(cast<ast::StringLitExpr>(e).value),
                       e.range);
  case ast::ExprKind::Name:
    return name(cast<ast::NameExpr>(e));
  case ast::ExprKind::Unary: {
    const auto &u = cast<ast::UnaryExpr>(e);
    if (u.op == ast::UnaryOp::Not)
      return B::unary(ir::UnaryOp::Not,
                      exprAs(*u.operand, Type::scalarOf(ScalarKind::Bool)),
                      e.range);
    return coerce(B::unary(u.op, exprAs(*u.operand, e.type), e.range),
                  e.type);
  }
  case ast::ExprKind::Binary: {
    const auto &b = cast<ast::BinaryExpr>(e);
    ir::BinaryOp op = b.op;
    ir::ExprPtr l = expr(*b.lhs), r = expr(*b.rhs);
    Type t;
    if (ir::isLogical(op)) {
      t = Type::scalarOf(ScalarKind::Bool);
    } else if (!ir::isComparison(op) && isValueType(e.type)) {
      t = e.type;
    } else if (l->type == r->type) {
      t = l->type;
    } else if (isa<ir::ConstantExpr>(l.get())) {
      t = r->type; // an adapted literal takes the other side's type
    } else if (isa<ir::ConstantExpr>(r.get())) {
      t = l->type;
    } else {
      t = rank(l->type.scalar) >= rank(r->type.scalar) ? l->type : r->type;
    }
    l = coerce(std::move(l), t);
    r = coerce(std::move(r), t);
    return B::binary(op, std::move(l), std::move(r), e.range);
  }
  case ast::ExprKind::Call:
    return call(cast<ast::CallExpr>(e));
  case ast::ExprKind::Cast: {
    const auto &c = cast<ast::CastExpr>(e);
    // size(set) converted to i64 or a float (i64(size(s)), f64(size(s))):
    // the set's full 64-bit size, where a bare size(s), an i32, fails
    // beyond 2^31 - 1 elements (docs/decisions/0057-*).
    if (c.to == ScalarKind::I64 || c.to == ScalarKind::F64 ||
        c.to == ScalarKind::F32)
      if (auto *call = dyn_cast<ast::CallExpr>(c.operand.get());
          call && call->target == ast::CallTarget::Intrinsic &&
          call->intrinsic == ast::Intrinsic::Size && call->args.size() == 1)
        if (auto *n = dyn_cast<ast::NameExpr>(call->args[0].get()))
          if (auto it = sets.find(n->decl); it != sets.end())
            return B::cast(c.to,
                           std::make_unique<ir::SizeOfExpr>(
                               it->second, nullptr, 0,
                               Type::scalarOf(ScalarKind::I64), call->range),
                           e.range);
    return B::cast(c.to, expr(*c.operand), e.range);
  }
  case ast::ExprKind::Index: {
    const auto &i = cast<ast::IndexExpr>(e);
    ir::ExprPtr base = expr(*i.base);
    ir::ExprPtr index = expr(*i.index);
    if (!index->type.isIntegerScalar())
      index = coerce(std::move(index), Type::scalarOf(ScalarKind::I32));
    return B::index(std::move(base), std::move(index), e.range);
  }
  case ast::ExprKind::Member: {
    const auto &m = cast<ast::MemberExpr>(e);
    if (auto it = st.slots.find(m.decl); it != st.slots.end())
      return B::var(*st.fn, it->second, e.range);
    fail(e.range, "a use of '" + m.field + "' as a value");
    return placeholder(e.type);
  }
  case ast::ExprKind::ArrayLit: {
    const auto &a = cast<ast::ArrayLitExpr>(e);
    Type elem =
        e.type.isArray() ? Type::scalarOf(e.type.scalar) : Type::error();
    std::vector<ir::ExprPtr> els;
    for (const auto &x : a.elements)
      els.push_back(isValueType(elem) ? exprAs(*x, elem) : expr(*x));
    if (els.empty()) {
      fail(e.range, "an empty array literal");
      return placeholder(e.type);
    }
    return B::arrayLit(std::move(els), e.range);
  }
  }
  fail(e.range, "an expression of unknown kind");
  return placeholder(e.type);
}

} // namespace opdc::lower
