// Statements.cpp - Bodies of kernels, fns, procs and main; assignability.
// SPDX-License-Identifier: Apache-2.0
//
// Kernel parameters carry access modes, and the statements that touch them
// must respect them: a parameter without a mode is read-only, `inc` and
// `sum` parameters only take `+=`/`-=` (the runtime starts them at zero and
// combines the increments), `min`/`max` parameters only `x = min(x, e)` /
// `x = max(x, e)`. Bodies are checked after every signature, kernels and
// fns before host code.
#include "sema/SemaImpl.h"

#include "llvm/Support/Casting.h"

namespace opdc::sema {

using namespace ast;
using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;
using llvm::isa;

namespace {

/// Syntactic equality of two assignment targets (`m`, `m[i]`, `u(0, 0)`).
bool sameExpr(const Expr &a, const Expr &b) {
  if (a.kind != b.kind)
    return false;
  switch (a.kind) {
  case ExprKind::Name:
    return cast<NameExpr>(a).name == cast<NameExpr>(b).name;
  case ExprKind::IntLit:
    return cast<IntLitExpr>(a).value == cast<IntLitExpr>(b).value;
  case ExprKind::Index:
    return sameExpr(*cast<IndexExpr>(a).base, *cast<IndexExpr>(b).base) &&
           sameExpr(*cast<IndexExpr>(a).index, *cast<IndexExpr>(b).index);
  case ExprKind::Unary:
    return cast<UnaryExpr>(a).op == cast<UnaryExpr>(b).op &&
           sameExpr(*cast<UnaryExpr>(a).operand, *cast<UnaryExpr>(b).operand);
  case ExprKind::Binary: {
    auto &x = cast<BinaryExpr>(a);
    auto &y = cast<BinaryExpr>(b);
    return x.op == y.op && sameExpr(*x.lhs, *y.lhs) && sameExpr(*x.rhs, *y.rhs);
  }
  case ExprKind::Call: {
    auto &x = cast<CallExpr>(a);
    auto &y = cast<CallExpr>(b);
    if (x.callee != y.callee || x.args.size() != y.args.size())
      return false;
    for (size_t i = 0; i < x.args.size(); ++i)
      if (!sameExpr(*x.args[i], *y.args[i]))
        return false;
    return true;
  }
  default:
    return false;
  }
}

const char *stmtName(StmtKind k) {
  switch (k) {
  case StmtKind::Loop:
    return "loop";
  case StmtKind::Swap:
    return "swap";
  case StmtKind::Write:
    return "write";
  case StmtKind::Read:
    return "read";
  case StmtKind::Print:
    return "print";
  case StmtKind::Solve:
    return "solve";
  case StmtKind::Adjoint:
    return "adjoint";
  case StmtKind::Tangent:
    return "tangent";
  default:
    return "statement";
  }
}

} // namespace

void Sema::checkBodies() {
  for (auto &m : prog.modules)
    for (auto &d : m->decls) {
      if (auto *k = dyn_cast<KernelDecl>(d.get()))
        checkKernelBody(*k);
      else if (auto *f = dyn_cast<FnDecl>(d.get()))
        checkFnBody(*f);
    }
  for (auto &m : prog.modules)
    for (auto &d : m->decls) {
      if (auto *p = dyn_cast<ProcDecl>(d.get()))
        checkProcBody(*p);
      else if (auto *mn = dyn_cast<MainDecl>(d.get()))
        checkMainBody(*mn);
    }
}

void Sema::checkKernelBody(KernelDecl &k) {
  ContextGuard guard(*this, /*clearScopes=*/true);
  ctx = Context();
  ctx.code = CodeKind::Kernel;
  ctx.owner = &k;
  ctx.kernel = &k;
  pushScope();
  for (auto &p : k.params)
    declareLocal(p.get());
  if (k.body)
    checkBlock(*k.body, /*newScope=*/false);
  popScope();
}

void Sema::checkFnBody(FnDecl &f) {
  ContextGuard guard(*this, /*clearScopes=*/true);
  ctx = Context();
  ctx.code = CodeKind::Fn;
  ctx.owner = &f;
  ctx.returnType = f.returnType ? f.returnType->resolved : Type::voidType();
  pushScope();
  for (auto &p : f.params)
    declareLocal(p.get(), VarOrigin::Parameter);
  if (f.body) {
    checkBlock(*f.body, /*newScope=*/false);
    if (f.returnType && !f.returnType->resolved.isError() &&
        !alwaysReturns(*f.body))
      diags.error(f.nameRange,
                  "fn '" + f.name + "' does not return a value on every path");
  }
  popScope();
}

void Sema::checkProcBody(ProcDecl &p) {
  ContextGuard guard(*this, /*clearScopes=*/true);
  ctx = Context();
  ctx.code = CodeKind::Host;
  ctx.owner = &p;
  ctx.returnType = p.returnType ? p.returnType->resolved : Type::voidType();
  pushScope();
  for (auto &v : p.params)
    declareLocal(v.get(), VarOrigin::Parameter);
  if (p.body) {
    checkBlock(*p.body, /*newScope=*/false);
    if (p.returnType && !p.returnType->resolved.isError() &&
        !alwaysReturns(*p.body))
      diags.error(p.nameRange, "proc '" + p.name +
                                   "' does not return a value on every path");
  }
  popScope();
}

void Sema::checkMainBody(MainDecl &m) {
  ContextGuard guard(*this, /*clearScopes=*/true);
  ctx = Context();
  ctx.code = CodeKind::Host;
  ctx.owner = &m;
  if (m.body)
    checkBlock(*m.body);
}

void Sema::checkBlock(Block &b, bool newScope) {
  if (newScope)
    pushScope();
  for (auto &s : b.stmts)
    if (s)
      checkStmt(*s);
  if (newScope)
    popScope();
}

bool Sema::rejectInKernel(const Stmt &s, const char *what) {
  if (!inKernelCode())
    return false;
  diags.error(s.range, std::string("'") + what + "' is not allowed in " +
                           codeDescription() + "; it is host code");
  return true;
}

void Sema::checkStmt(Stmt &s) {
  switch (s.kind) {
  case StmtKind::Block:
    checkBlock(cast<Block>(s));
    return;
  case StmtKind::VarDecl: {
    auto &v = *cast<VarDeclStmt>(s).var;
    checkVarDecl(v, v.isMutable ? VarOrigin::Var : VarOrigin::Let);
    return;
  }
  case StmtKind::Expr: {
    auto &es = cast<ExprStmt>(s);
    if (!es.expr)
      return;
    if (!isa<CallExpr>(es.expr.get())) {
      checkValue(es.expr);
      diags.error(es.expr->range,
                  "expression result is unused; expected a call or an "
                  "assignment");
      return;
    }
    check(es.expr);
    finalize(es.expr);
    return;
  }
  case StmtKind::Assign:
    checkAssign(cast<AssignStmt>(s));
    return;
  case StmtKind::If: {
    auto &is = cast<IfStmt>(s);
    convert(is.cond, Type::scalarOf(ScalarKind::Bool), "condition");
    if (is.thenBlock)
      checkBlock(*is.thenBlock);
    if (is.elseStmt)
      checkStmt(*is.elseStmt);
    return;
  }
  case StmtKind::For: {
    auto &f = cast<ForStmt>(s);
    check(f.bounds.lo);
    check(f.bounds.hi);
    Type t = Type::error();
    if (f.bounds.lo && f.bounds.hi) {
      t = unify({&f.bounds.lo, &f.bounds.hi}, f.bounds.range, "for-loop bound",
                false);
      if (!t.isError() && !t.isIntegerScalar()) {
        diags.error(f.bounds.range.valid() ? f.bounds.range : f.range,
                    "for-loop bounds have type '" + t.str() +
                        "', expected an integer");
        t = Type::error();
      }
    }
    pushScope();
    if (f.var) {
      f.var->type = t;
      f.var->isMutable = false;
      declareLocal(f.var.get(), VarOrigin::Induction);
    }
    ++ctx.loopDepth;
    if (f.body)
      checkBlock(*f.body, /*newScope=*/false);
    --ctx.loopDepth;
    popScope();
    return;
  }
  case StmtKind::While: {
    auto &w = cast<WhileStmt>(s);
    convert(w.cond, Type::scalarOf(ScalarKind::Bool), "condition");
    ++ctx.loopDepth;
    if (w.body)
      checkBlock(*w.body);
    --ctx.loopDepth;
    return;
  }
  case StmtKind::Break:
  case StmtKind::Continue:
    if (ctx.loopDepth == 0)
      diags.error(s.range,
                  std::string("'") +
                      (s.kind == StmtKind::Break ? "break" : "continue") +
                      "' is not inside a loop");
    return;
  case StmtKind::Return:
    checkReturn(cast<ReturnStmt>(s));
    return;
  default:
    break;
  }
  const bool fails = isa<PrintStmt>(s) && cast<PrintStmt>(s).fails;
  if (rejectInKernel(s, fails ? "fail" : stmtName(s.kind)))
    return;
  switch (s.kind) {
  case StmtKind::Loop:
    checkLoop(cast<LoopStmt>(s));
    return;
  case StmtKind::Swap:
    checkSwap(cast<SwapStmt>(s));
    return;
  case StmtKind::Write: {
    auto &w = cast<WriteStmt>(s);
    checkWriteRead(w.dats, w.file, "write");
    if (!w.space.name.empty())
      checkWriteRange(w);
    return;
  }
  case StmtKind::Read: {
    auto &r = cast<ReadStmt>(s);
    checkWriteRead(r.dats, r.file, "read");
    return;
  }
  case StmtKind::Print:
    checkPrint(cast<PrintStmt>(s));
    return;
  case StmtKind::Solve:
    checkSolve(cast<SolveStmt>(s));
    return;
  case StmtKind::Adjoint:
    checkAdjoint(cast<AdjointStmt>(s));
    return;
  case StmtKind::Tangent:
    checkTangent(cast<TangentStmt>(s));
    return;
  default:
    return;
  }
}

void Sema::checkVarDecl(VarDecl &v, VarOrigin origin) {
  Type declared = Type::error();
  bool hasType = v.declaredType.has_value();
  if (hasType)
    declared = resolveType(*v.declaredType, /*allowString=*/!inKernelCode());
  if (v.init) {
    if (hasType) {
      if (declared.isError())
        checkValue(v.init);
      else
        convert(v.init, declared, "initial value of '" + v.name + "'");
      v.type = declared;
    } else {
      v.type = checkValue(v.init);
    }
  } else {
    v.type = declared;
    if (!hasType)
      diags.error(v.nameRange,
                  "'" + v.name + "' needs a type or an initial value");
    else if (origin == VarOrigin::Let)
      diags.error(v.nameRange,
                  "'let' binding '" + v.name + "' needs an initial value");
  }
  declareLocal(&v, origin);
}

LValue Sema::checkTarget(ExprPtr &target) {
  LValue lv;
  Expr *x = target.get();
  x->type = Type::error();
  switch (x->kind) {
  case ExprKind::Name: {
    auto *n = cast<NameExpr>(x);
    Decl *d = lookup(n->name);
    if (!d) {
      reportUnknown(n->name, n->range, Want::Value);
      return lv;
    }
    n->decl = d;
    lv.root = d;
    if (auto *v = dyn_cast<VarDecl>(d)) {
      lv.type = v->type;
    } else if (auto *p = dyn_cast<KernelParamDecl>(d)) {
      if (p->stencil) {
        std::string zeros = "0";
        if (auto *s = dyn_cast_or_null<StencilDecl>(p->stencil->decl))
          for (int64_t i = 1; i < s->dims; ++i)
            zeros += ", 0";
        diags.error(n->range, "stencil parameter '" + p->name +
                                  "' must be accessed at an offset, as '" +
                                  p->name + "(" + zeros + ")'");
        return lv;
      }
      lv.type = p->type.resolved;
    } else if (auto *c = dyn_cast<ConstDecl>(d)) {
      lv.type = c->value.type;
    } else if (auto *p = dyn_cast<ParamDecl>(d)) {
      lv.type = p->type.resolved;
    } else {
      diags.error(n->range, "'" + d->name + "' is a " + declKindName(d->kind) +
                                ", expected a variable");
      noteDeclared(d);
      return lv;
    }
    n->type = lv.type;
    lv.ok = !lv.type.isError();
    return lv;
  }
  case ExprKind::Index: {
    auto *ix = cast<IndexExpr>(x);
    lv = checkTarget(ix->base);
    check(ix->index);
    finalize(ix->index);
    Type ti = ix->index->type;
    if (!lv.ok)
      return lv;
    if (!lv.type.isArray()) {
      diags.error(ix->base->range,
                  "cannot index a value of type '" + lv.type.str() + "'");
      lv.ok = false;
      return lv;
    }
    if (ti.isError()) {
      lv.ok = false;
      return lv;
    }
    if (!ti.isIntegerScalar()) {
      diags.error(ix->index->range, "array index has type '" + ti.str() +
                                        "', expected an integer");
      lv.ok = false;
      return lv;
    }
    if (ix->index->constValue) {
      int64_t k = ix->index->constValue->asInt();
      if (k < 0 || k >= int64_t(lv.type.length)) {
        diags.error(ix->index->range, "index " + std::to_string(k) +
                                          " is out of bounds for '" +
                                          lv.type.str() + "'");
        lv.ok = false;
        return lv;
      }
    }
    lv.type = Type::scalarOf(lv.type.scalar);
    ix->type = lv.type;
    return lv;
  }
  case ExprKind::Call: {
    auto *c = cast<CallExpr>(x);
    if (auto *p = dyn_cast_or_null<KernelParamDecl>(lookup(c->callee))) {
      lv.root = p;
      lv.isStencilAccess = true;
      lv.type = checkStencilRead(*c, p, /*asTarget=*/true);
      lv.ok = !lv.type.isError();
      return lv;
    }
    check(target);
    diags.error(x->range, "expression is not assignable");
    return lv;
  }
  case ExprKind::Member: {
    auto *m = cast<MemberExpr>(x);
    checkMember(*m, false);
    if (!m->type.isError())
      diags.error(m->range, "cannot assign to derivative result '" +
                                textOf(m->range).str() + "'");
    return lv;
  }
  default:
    check(target);
    finalize(target);
    diags.error(x->range, "expression is not assignable");
    return lv;
  }
}

void Sema::checkAssign(AssignStmt &s) {
  LValue lv = checkTarget(s.target);
  if (!lv.ok) {
    if (s.value)
      checkValue(s.value);
    return;
  }
  Decl *root = lv.root;
  SourceRange at = s.target->range;
  auto reject = [&](const std::string &msg) {
    diags.error(at, msg);
    noteDeclared(root);
    checkValue(s.value);
  };
  const Expr *allowed = nullptr;
  switch (root->kind) {
  case DeclKind::Var: {
    auto *v = cast<VarDecl>(root);
    if (v->isMutable)
      break;
    auto it = varOrigins.find(v);
    VarOrigin o = it == varOrigins.end() ? VarOrigin::Let : it->second;
    switch (o) {
    case VarOrigin::Induction:
      return reject("cannot assign to loop variable '" + v->name + "'");
    case VarOrigin::Parameter:
      return reject("cannot assign to parameter '" + v->name + "'");
    case VarOrigin::Derived:
      return reject("cannot assign to derivative result '" + v->name + "'");
    case VarOrigin::SolveResult:
      return reject("cannot assign to solve result '" + v->name +
                    "'; copy it into a 'var'");
    default:
      return reject("cannot assign to '" + v->name +
                    "', declared with 'let'; use 'var' for a variable");
    }
  }
  case DeclKind::Const:
    return reject("cannot assign to const '" + root->name + "'");
  case DeclKind::Param:
    return reject("cannot assign to param '" + root->name +
                  "'; params are set on the command line");
  case DeclKind::KernelParam: {
    auto *p = cast<KernelParamDecl>(root);
    if (badParams.count(p))
      break;
    switch (p->mode) {
    case AccessMode::Read:
      diags.error(at, "cannot assign to read-only parameter '" + p->name + "'");
      diags.note(p->nameRange, "'" + p->name +
                                   "' declared here; add 'out' or 'inout' "
                                   "to write it");
      checkValue(s.value);
      return;
    case AccessMode::Inc:
    case AccessMode::Sum:
      if (s.op != AssignOp::Add && s.op != AssignOp::Sub) {
        diags.error(
            at, std::string("'") + accessModeName(p->mode) + "' parameter '" +
                    p->name + "' can only be " +
                    (p->mode == AccessMode::Inc ? "incremented" : "updated") +
                    " with '+=' or '-='");
        noteDeclared(p);
        checkValue(s.value);
        return;
      }
      break;
    case AccessMode::Min:
    case AccessMode::Max: {
      const char *m = accessModeName(p->mode);
      auto *call = dyn_cast_or_null<CallExpr>(s.value.get());
      if (s.op == AssignOp::Set && call && call->callee == m &&
          call->args.size() == 2 && !lookup(m)) {
        if (sameExpr(*call->args[0], *s.target))
          allowed = call->args[0].get();
        else if (sameExpr(*call->args[1], *s.target))
          allowed = call->args[1].get();
      }
      if (!allowed) {
        std::string t = textOf(s.target->range).str();
        if (t.empty())
          t = p->name;
        diags.error(at, std::string("'") + m + "' parameter '" + p->name +
                            "' can only be updated as '" + t + " = " + m + "(" +
                            t + ", e)'");
        noteDeclared(p);
        checkValue(s.value);
        return;
      }
      break;
    }
    default:
      break;
    }
    break;
  }
  default:
    break;
  }
  if (s.op != AssignOp::Set && !lv.type.isNumeric()) {
    diags.error(at, std::string("'") + spelling(s.op) +
                        "' needs a numeric target, found '" + lv.type.str() +
                        "'");
    checkValue(s.value);
    return;
  }
  BinaryOp op = binaryOpOf(s.op);
  if (s.op != AssignOp::Set && isBitwise(op) && !lv.type.isIntegerScalar()) {
    diags.error(at, std::string("'") + spelling(s.op) +
                        "' needs an integer target, found '" + lv.type.str() +
                        "'");
    checkValue(s.value);
    return;
  }
  allowedReductionRead = allowed;
  bool ok = convert(s.value, lv.type, "assigned value");
  allowedReductionRead = nullptr;
  insideAllowedRead = false;
  if (ok && s.op != AssignOp::Set && isShift(op) && s.value->constValue)
    checkShiftCount(*s.value->constValue, lv.type.scalar, s.value->range);
}

void Sema::checkReturn(ReturnStmt &s) {
  if (ctx.code == CodeKind::Kernel || isa_and_nonnull<MainDecl>(ctx.owner)) {
    diags.error(s.range,
                std::string("'return' is not allowed in ") +
                    (ctx.code == CodeKind::Kernel ? "a kernel" : "'main'"));
    if (s.value)
      checkValue(s.value);
    return;
  }
  std::string what = ctx.owner ? std::string(declKindName(ctx.owner->kind)) +
                                     " '" + ctx.owner->name + "'"
                               : "this function";
  Type ret = ctx.returnType;
  if (s.value) {
    if (ret.isVoid()) {
      checkValue(s.value);
      diags.error(s.value->range,
                  what + " has no result type; it cannot return a value");
      return;
    }
    convert(s.value, ret, "returned value");
    return;
  }
  if (!ret.isVoid() && !ret.isError())
    diags.error(s.range,
                what + " must return a value of type '" + ret.str() + "'");
}

bool Sema::alwaysReturns(const Stmt &s) const {
  switch (s.kind) {
  case StmtKind::Return:
    return true;
  case StmtKind::Block: {
    for (auto &st : cast<Block>(s).stmts)
      if (st && alwaysReturns(*st))
        return true;
    return false;
  }
  case StmtKind::If: {
    auto &is = cast<IfStmt>(s);
    return is.thenBlock && is.elseStmt && alwaysReturns(*is.thenBlock) &&
           alwaysReturns(*is.elseStmt);
  }
  default:
    return false;
  }
}

void Sema::checkRecursion() {
  // Fns are inlined into kernels and procs are differentiated as a whole:
  // neither may call itself, directly or through others.
  std::map<const Decl *, int> color; // 0 white, 1 on stack, 2 done
  std::function<void(const Decl *)> visit = [&](const Decl *d) {
    color[d] = 1;
    auto it = callGraph.find(d);
    if (it != callGraph.end()) {
      for (auto &[callee, at] : it->second) {
        int c = color[callee];
        if (c == 1) {
          diags.error(at, "recursive call of '" + callee->name +
                              "'; recursion is not supported");
          continue;
        }
        if (c == 0)
          visit(callee);
      }
    }
    color[d] = 2;
  };
  // Visit in source order so that messages come out deterministically.
  for (auto &m : prog.modules)
    for (auto &d : m->decls)
      if (callGraph.count(d.get()) && color[d.get()] == 0)
        visit(d.get());
}

void Sema::checkSwap(SwapStmt &s) {
  resolveRef(s.a, Want::Dat);
  resolveRef(s.b, Want::Dat);
  auto *a = dyn_cast_or_null<DatDecl>(s.a.decl);
  auto *b = dyn_cast_or_null<DatDecl>(s.b.decl);
  if (!a || !b)
    return;
  // swap exchanges the two dats' storage: they must be interchangeable.
  if (a == b) {
    diags.error(s.b.range, "cannot swap dat '" + a->name + "' with itself");
    return;
  }
  if (a->on.decl != b->on.decl) {
    diags.error(s.b.range, "cannot swap dat '" + a->name + "' on '" +
                               a->on.name + "' with dat '" + b->name +
                               "' on '" + b->on.name + "'");
    noteDeclared(b);
    return;
  }
  Type ta = a->elemType.resolved, tb = b->elemType.resolved;
  if (!ta.isError() && !tb.isError() && ta != tb) {
    diags.error(s.b.range, "cannot swap dat '" + a->name + "' of type '" +
                               ta.str() + "' with dat '" + b->name +
                               "' of type '" + tb.str() + "'");
    noteDeclared(b);
    return;
  }
  if (!a->structured)
    return;
  bool same = a->haloM == b->haloM && a->haloP == b->haloP &&
              a->baseOffset == b->baseOffset &&
              a->size.size() == b->size.size();
  for (size_t i = 0; same && i < a->size.size(); ++i) {
    auto &x = a->size[i]->constValue;
    auto &y = b->size[i]->constValue;
    if (x && y)
      same = x->asInt() == y->asInt();
    else
      same = textOf(a->size[i]->range) == textOf(b->size[i]->range);
  }
  if (!same) {
    diags.error(s.b.range, "cannot swap dat '" + a->name + "' with dat '" +
                               b->name +
                               "': their sizes, halos or bases differ");
    noteDeclared(b);
  }
}

void Sema::checkWriteRead(std::vector<ExprPtr> &dats, ExprPtr &file,
                          const char *what) {
  for (auto &d : dats)
    if (d)
      resolveDatExpr(d);
  checkFileName(file, std::string("file name of '") + what + "'");
}

// `write DATS over SPACE[ranges] to FILE`: the dats lie on SPACE, the
// ranges are integers, one per dimension of a block (one for a set), and
// the file is CSV (a range of a dat is a dump to read, not a restart: the
// HDF5 layout OP2's tools read holds whole dats).
void Sema::checkWriteRange(WriteStmt &w) {
  resolveRef(w.space, Want::SetOrBlock);
  auto *set = dyn_cast_or_null<SetDecl>(w.space.decl);
  auto *block = dyn_cast_or_null<BlockDecl>(w.space.decl);
  checkRanges(w.ranges, w.hasRanges, w.space, /*block=*/nullptr, w.space.range);
  if (!set && !block)
    return;
  const int64_t dims = set ? 1 : block->dims;
  if (w.hasRanges && dims > 0 && int64_t(w.ranges.size()) != dims) {
    SourceRange r = w.ranges.empty() ? w.space.range
                                     : SourceRange::join(w.ranges.front().range,
                                                         w.ranges.back().range);
    diags.error(r.valid() ? r : w.space.range,
                "write over " + std::string(set ? "set" : "block") + " '" +
                    w.space.name + "' has " + std::to_string(w.ranges.size()) +
                    (w.ranges.size() == 1 ? " range" : " ranges") +
                    " but the " +
                    (set ? std::string("set has one index ([lo .. hi] of its "
                                       "elements)")
                         : "block has " + std::to_string(dims) +
                               (dims == 1 ? " dimension" : " dimensions")));
  }
  for (const ExprPtr &e : w.dats) {
    const Decl *d = nullptr;
    if (auto *n = dyn_cast_or_null<NameExpr>(e.get()))
      d = n->decl;
    else if (auto *m = dyn_cast_or_null<MemberExpr>(e.get()))
      d = m->decl;
    auto *dat = dyn_cast_or_null<DatDecl>(d);
    if (dat && dat->on.decl != w.space.decl) {
      diags.error(e->range, "dat '" + dat->name + "' is on '" + dat->on.name +
                                "', not on '" + w.space.name +
                                "'; a ranged write takes dats of the set or "
                                "block it names");
      noteDeclared(dat);
    }
  }
  // A literal file name must be CSV or "-" (standard output); a computed
  // one is checked when the program runs.
  if (auto *lit = dyn_cast_or_null<StringLitExpr>(w.file.get())) {
    const std::string &f = lit->value;
    auto lower = [](std::string s) {
      for (char &c : s)
        c = char(std::tolower(static_cast<unsigned char>(c)));
      return s;
    };
    if (f != "-" && !(f.size() >= 4 && lower(f.substr(f.size() - 4)) == ".csv"))
      diags.error(lit->range,
                  "a write over a range is CSV: name the file '*.csv' (or "
                  "\"-\" for standard output), or write the whole dats "
                  "without 'over'");
  }
}

} // namespace opdc::sema
