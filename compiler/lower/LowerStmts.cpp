// LowerStmts.cpp - AST -> Program IR: statements, loops and derivative
// requests.
// SPDX-License-Identifier: Apache-2.0
#include "lower/LowerImpl.h"

#include "support/SourceManager.h"

namespace opdc::lower {

unsigned Lowerer::newSlot(const ast::VarDecl &v, Type t, bool isMutable) {
  unsigned slot = st.fn->addVar(v.name, t, isMutable, v.nameRange);
  st.slots[&v] = slot;
  return slot;
}

void Lowerer::lowerBlock(const ast::Block &b, ir::Body &out) {
  for (const auto &s : b.stmts)
    if (s)
      lowerStmt(*s, out);
}

ir::Body Lowerer::lowerElse(const ast::Stmt *s) {
  ir::Body b;
  if (!s)
    return b;
  if (auto *blk = dyn_cast<ast::Block>(s))
    lowerBlock(*blk, b);
  else
    lowerStmt(*s, b);
  return b;
}

ir::LoopRange Lowerer::lowerRange(const ast::RangeExpr &r, Type t) {
  ir::LoopRange out;
  out.lo = exprOr(r.lo, t, r.range);
  out.hi = exprOr(r.hi, t, r.range);
  if (r.inclusive) {
    // lo ..= hi is lo .. hi + 1.
    Type ht = out.hi->type;
    out.hi = B::binary(ir::BinaryOp::Add, std::move(out.hi),
                       B::constant(ir::convertConst(
                           ConstValue::ofInt(ScalarKind::I64, 1), ht)),
                       r.range);
    if (auto *b = dyn_cast<ir::BinaryExpr>(out.hi.get()))
      if (auto *c = dyn_cast<ir::ConstantExpr>(b->lhs.get()))
        if (c->type.isIntegerScalar())
          out.hi = B::constant(
              ir::convertConst(
                  ConstValue::ofInt(ScalarKind::I64, c->value.asInt(0) + 1),
                  ht),
              r.range);
  }
  return out;
}

std::vector<ir::LoopRange>
Lowerer::lowerRanges(const std::vector<ast::RangeExpr> &rs) {
  std::vector<ir::LoopRange> out;
  for (const auto &r : rs) {
    // Both bounds in one integer type: the wider of the two.
    Type t = Type::scalarOf(ScalarKind::I32);
    for (const ast::Expr *e : {r.lo.get(), r.hi.get()})
      if (e && e->type.isIntegerScalar() &&
          rank(e->type.scalar) > rank(t.scalar))
        t = e->type;
    out.push_back(lowerRange(r, t));
  }
  return out;
}

ir::Dat *Lowerer::datOf(const ast::Expr &e) {
  const ast::Decl *d = nullptr;
  if (auto *n = dyn_cast<ast::NameExpr>(&e))
    d = n->decl;
  else if (auto *m = dyn_cast<ast::MemberExpr>(&e))
    d = m->decl;
  auto it = dats.find(d);
  if (it == dats.end()) {
    fail(e.range, "a reference to a dat that was not resolved");
    return nullptr;
  }
  return it->second;
}

void Lowerer::lowerPrint(const ast::PrintStmt &p, ir::Body &out) {
  std::vector<ir::ExprPtr> args;
  std::string format;
  size_t first = 0;
  if (p.formatted) {
    first = 1;
    const ast::Expr *fmt = p.args.empty() ? nullptr : p.args[0].get();
    if (auto *lit = dyn_cast_or_null<ast::StringLitExpr>(fmt))
      format = lit->value;
    else if (fmt && fmt->constValue && fmt->constValue->type.isString())
      format = fmt->constValue->text;
    else
      fail(p.range, "printf without a literal format");
  }
  for (size_t i = first; i < p.args.size(); ++i)
    if (p.args[i])
      args.push_back(expr(*p.args[i]));
  if (p.fails) {
    // `fail`: the message after the statement's location, on stderr;
    // every rank ends with status 1.
    std::string at;
    for (char c : diags.sources().describe(p.range.begin)) {
      at += c;
      if (c == '%')
        at += '%';
    }
    auto f = B::printFormatted(at + ": " + format, std::move(args), p.range);
    cast<ir::PrintStmt>(*f).to = ir::PrintTo::Error;
    out.stmts.push_back(std::move(f));
    return;
  }
  out.stmts.push_back(p.formatted ? B::printFormatted(std::move(format),
                                                      std::move(args), p.range)
                                  : B::print(std::move(args), p.range));
}

void Lowerer::lowerSolve(const ast::SolveStmt &v, ir::Body &out) {
  if (v.solver.name == "cg") {
    lowerSolveCG(v, out);
    return;
  }
  auto solve = std::make_unique<ir::SolveStmt>(v.range);
  solve->solver = ir::SolverKind::Tridiagonal;
  for (const auto &a : v.args) {
    auto it = dats.find(a.decl);
    if (it == dats.end()) {
      fail(a.range, "solve of an unresolved dat");
      return;
    }
    solve->dats.push_back(it->second);
  }
  solve->along = unsigned(v.alongDim < 0 ? 0 : v.alongDim);
  auto bit = blocks.find(v.space.decl);
  if (bit == blocks.end()) {
    fail(v.space.range, "solve over an unresolved block");
    return;
  }
  solve->block = bit->second;
  if (v.hasRanges)
    solve->ranges = lowerRanges(v.ranges);
  out.stmts.push_back(std::move(solve));
}

void Lowerer::lowerStmt(const ast::Stmt &s, ir::Body &out) {
  ir::Function &f = *st.fn;
  switch (s.kind) {
  case ast::StmtKind::Block:
    // Slots are unique per function, so a nested block needs no scope node.
    lowerBlock(cast<ast::Block>(s), out);
    return;
  case ast::StmtKind::VarDecl: {
    const ast::VarDecl &v = *cast<ast::VarDeclStmt>(s).var;
    Type t = v.type;
    if (!isValueType(t) && v.declaredType)
      t = v.declaredType->resolved;
    if (!isValueType(t) && v.init)
      t = v.init->type;
    ir::ExprPtr init =
        v.init ? exprAs(*v.init, t) : B::constant(ir::zeroOf(t), v.nameRange);
    unsigned slot = newSlot(v, t, v.isMutable);
    out.stmts.push_back(B::decl(slot, std::move(init), s.range));
    return;
  }
  case ast::StmtKind::Expr: {
    const auto &e = cast<ast::ExprStmt>(s);
    if (e.expr)
      out.stmts.push_back(B::eval(expr(*e.expr), s.range));
    return;
  }
  case ast::StmtKind::Assign: {
    const auto &a = cast<ast::AssignStmt>(s);
    ir::ExprPtr target = lvalue(*a.target);
    ir::ExprPtr value = exprAs(*a.value, target->type);
    out.stmts.push_back(
        B::assign(std::move(target), std::move(value), a.op, s.range));
    return;
  }
  case ast::StmtKind::If: {
    const auto &i = cast<ast::IfStmt>(s);
    ir::ExprPtr cond =
        exprOr(i.cond, Type::scalarOf(ScalarKind::Bool), s.range);
    ir::Body thenBody;
    if (i.thenBlock)
      lowerBlock(*i.thenBlock, thenBody);
    out.stmts.push_back(B::ifThen(std::move(cond), std::move(thenBody),
                                  lowerElse(i.elseStmt.get()), s.range));
    return;
  }
  case ast::StmtKind::For: {
    const auto &l = cast<ast::ForStmt>(s);
    Type t = l.var->type;
    if (!t.isIntegerScalar())
      t = l.bounds.lo ? l.bounds.lo->type : Type::scalarOf(ScalarKind::I32);
    if (!t.isIntegerScalar())
      t = Type::scalarOf(ScalarKind::I32);
    ir::LoopRange r = lowerRange(l.bounds, t);
    unsigned slot = newSlot(*l.var, t, /*isMutable=*/false);
    ir::Body body;
    if (l.body)
      lowerBlock(*l.body, body);
    out.stmts.push_back(B::forRange(slot, std::move(r.lo), std::move(r.hi),
                                    std::move(body), s.range));
    return;
  }
  case ast::StmtKind::While: {
    const auto &w = cast<ast::WhileStmt>(s);
    ir::ExprPtr cond =
        exprOr(w.cond, Type::scalarOf(ScalarKind::Bool), s.range);
    ir::Body body;
    if (w.body)
      lowerBlock(*w.body, body);
    out.stmts.push_back(
        B::whileLoop(std::move(cond), std::move(body), s.range));
    return;
  }
  case ast::StmtKind::Break:
    out.stmts.push_back(std::make_unique<ir::BreakStmt>(s.range));
    return;
  case ast::StmtKind::Continue:
    out.stmts.push_back(std::make_unique<ir::ContinueStmt>(s.range));
    return;
  case ast::StmtKind::Return: {
    const auto &r = cast<ast::ReturnStmt>(s);
    ir::ExprPtr v;
    if (r.value && !f.returnType.isVoid())
      v = exprAs(*r.value, f.returnType);
    out.stmts.push_back(B::ret(std::move(v), s.range));
    return;
  }
  case ast::StmtKind::Loop:
    lowerLoop(cast<ast::LoopStmt>(s), out);
    return;
  case ast::StmtKind::Swap: {
    const auto &w = cast<ast::SwapStmt>(s);
    ir::Dat *a = dats.count(w.a.decl) ? dats[w.a.decl] : nullptr;
    ir::Dat *b = dats.count(w.b.decl) ? dats[w.b.decl] : nullptr;
    if (!a || !b) {
      fail(s.range, "swap of unresolved dats");
      return;
    }
    out.stmts.push_back(B::swap(a, b, s.range));
    return;
  }
  case ast::StmtKind::Write:
  case ast::StmtKind::Read: {
    bool isRead = s.kind == ast::StmtKind::Read;
    const auto &ds =
        isRead ? cast<ast::ReadStmt>(s).dats : cast<ast::WriteStmt>(s).dats;
    const auto &file =
        isRead ? cast<ast::ReadStmt>(s).file : cast<ast::WriteStmt>(s).file;
    std::vector<ir::Dat *> list;
    for (const auto &e : ds)
      if (e)
        if (ir::Dat *d = datOf(*e))
          list.push_back(d);
    ir::ExprPtr fe = exprOr(file, Type::string(), s.range);
    out.stmts.push_back(
        isRead ? B::read(std::move(list), std::move(fe), s.range)
               : B::write(std::move(list), std::move(fe), s.range));
    if (!isRead && cast<ast::WriteStmt>(s).hasRanges)
      cast<ir::DatIOStmt>(*out.stmts.back()).ranges =
          lowerRanges(cast<ast::WriteStmt>(s).ranges);
    return;
  }
  case ast::StmtKind::Print:
    lowerPrint(cast<ast::PrintStmt>(s), out);
    return;
  case ast::StmtKind::Solve:
    lowerSolve(cast<ast::SolveStmt>(s), out);
    return;
  case ast::StmtKind::Adjoint:
  case ast::StmtKind::Tangent:
    lowerDerivative(cast<ast::DerivativeStmt>(s), out);
    return;
  }
}

// Defaults of cg's options: a relative residual of 1e-8, 1000 iterations.
void Lowerer::lowerSolveCG(const ast::SolveStmt &v, ir::Body &out) {
  auto solve = std::make_unique<ir::SolveStmt>(v.range);
  solve->solver = ir::SolverKind::CG;
  auto fit = v.args.empty() ? functions.end() : functions.find(v.args[0].decl);
  if (fit == functions.end()) {
    fail(v.solver.range, "solve cg of an unresolved operator");
    return;
  }
  solve->op = fit->second;
  for (size_t i = 1; i < v.args.size(); ++i) {
    auto it = dats.find(v.args[i].decl);
    if (it == dats.end()) {
      fail(v.args[i].range, "solve of an unresolved dat");
      return;
    }
    solve->dats.push_back(it->second);
  }
  Type f64 = Type::scalarOf(ScalarKind::F64),
       i32 = Type::scalarOf(ScalarKind::I32);
  for (const ast::SolveStmt::Option &o : v.options) {
    if (o.name.name == "tol")
      solve->tol = exprAs(*o.value, f64);
    else if (o.name.name == "maxiter")
      solve->maxiter = exprAs(*o.value, i32);
    else if (o.name.name == "warn")
      solve->warn = exprAs(*o.value, Type::scalarOf(ScalarKind::Bool));
  }
  if (v.precond) {
    auto it = dats.find(v.precond);
    if (it == dats.end()) {
      fail(v.range, "solve cg with an unresolved preconditioner");
      return;
    }
    solve->precond = it->second;
  }
  if (!solve->tol)
    solve->tol = std::make_unique<ir::ConstantExpr>(
        ConstValue::ofFloat(ScalarKind::F64, 1e-8));
  if (!solve->maxiter)
    solve->maxiter = std::make_unique<ir::ConstantExpr>(
        ConstValue::ofInt(ScalarKind::I32, 1000));
  if (v.iters) {
    solve->itersVar = int(newSlot(*v.iters, i32, false));
    solve->residualVar = int(newSlot(*v.residual, f64, false));
  }
  out.stmts.push_back(std::move(solve));
}

void Lowerer::lowerLoop(const ast::LoopStmt &s, ir::Body &out) {
  auto kit = functions.find(s.kernel.decl);
  if (kit == functions.end() || !kit->second->isKernel()) {
    fail(s.kernel.range, "a loop of an unresolved kernel");
    return;
  }
  ir::Function *kernel = kit->second;
  auto loop = std::make_unique<ir::ParLoopStmt>(s.range);
  loop->kernel = kernel;
  if (sets.count(s.space.decl)) {
    loop->set = sets[s.space.decl];
  } else if (blocks.count(s.space.decl)) {
    loop->block = blocks[s.space.decl];
    if (s.hasRanges)
      loop->ranges = lowerRanges(s.ranges);
  } else {
    fail(s.space.range, "a loop over an unresolved set or block");
    return;
  }
  const FnState &ks = states[kernel];
  for (size_t i = 0; i < s.args.size(); ++i) {
    const ast::LoopArg &a = s.args[i];
    SourceRange at = a.expr ? a.expr->range : s.range;
    unsigned pi = unsigned(i);
    if (a.param) {
      auto pit = ks.kparams.find(a.param);
      if (pit != ks.kparams.end())
        pi = pit->second;
    }
    if (pi >= kernel->kernelParams.size()) {
      fail(at, "a loop argument without a kernel parameter");
      return;
    }
    const ir::KernelParam &p = kernel->kernelParams[pi];
    ir::AccessDescriptor d;
    d.mode = p.mode;
    d.scalar = p.type.scalar;
    d.dim = p.type.dim();
    d.range = at;
    auto datFor = [&](const ast::DatDecl *dd) -> ir::Dat * {
      auto it = dats.find(dd);
      if (it == dats.end()) {
        fail(at, "a loop argument of an unresolved dat");
        return nullptr;
      }
      return it->second;
    };
    if (!a.kind) {
      fail(at, "a loop argument that sema did not resolve");
      return;
    }
    d.kind = *a.kind;
    switch (*a.kind) {
    case ArgKind::Direct:
      d.dat = datFor(a.dat);
      break;
    case ArgKind::Indirect:
      d.dat = datFor(a.dat);
      d.map = maps.count(a.map) ? maps[a.map] : nullptr;
      d.mapIndex = int(a.mapIndex);
      break;
    case ArgKind::Stencil:
      d.dat = datFor(a.dat);
      d.stencil = p.stencil;
      if (a.stencil && stencils.count(a.stencil))
        d.stencil = stencils[a.stencil];
      break;
    case ArgKind::MapDirect:
      d.map = maps.count(a.map) ? maps[a.map] : nullptr;
      break;
    case ArgKind::GlobalRead:
      d.value = a.expr ? exprAs(*a.expr, p.type) : placeholder(p.type);
      break;
    case ArgKind::Reduction: {
      auto it = st.slots.find(a.var);
      if (it == st.slots.end()) {
        fail(at, "a reduction into an unresolved variable");
        return;
      }
      d.var = int(it->second);
      break;
    }
    }
    d.bytes = scalarBytes(d.scalar) * d.dim;
    loop->args.push_back(std::move(d));
  }
  out.stmts.push_back(std::move(loop));
}

ir::DerivTarget Lowerer::derivTarget(const ast::Decl *d,
                                     const ast::ProcDecl *proc,
                                     SourceRange at) {
  ir::DerivTarget t;
  if (auto it = dats.find(d); it != dats.end()) {
    t.dat = it->second;
    return t;
  }
  if (proc)
    for (size_t i = 0; i < proc->params.size(); ++i)
      if (proc->params[i].get() == d)
        t.param = int(i);
  if (t.param < 0)
    fail(at, "a derivative with respect to an unresolved name");
  return t;
}

void Lowerer::lowerDerivative(const ast::DerivativeStmt &s, ir::Body &out) {
  auto pit = functions.find(s.proc.decl);
  auto *procDecl = dyn_cast_or_null<ast::ProcDecl>(s.proc.decl);
  if (pit == functions.end() || !procDecl) {
    fail(s.proc.range, std::string(s.isAdjoint() ? "an " : "a ") + s.keyword() +
                           " of an unresolved proc");
    return;
  }
  ir::Function *proc = pit->second;
  const auto *adjoint = dyn_cast<ast::AdjointStmt>(&s);
  std::unique_ptr<ir::DerivativeStmt> d;
  if (adjoint)
    d = std::make_unique<ir::AdjointStmt>(s.range);
  else
    d = std::make_unique<ir::TangentStmt>(s.range);
  d->proc = proc;
  for (size_t i = 0; i < s.callArgs.size(); ++i) {
    Type t = i < proc->params.size() ? proc->vars[proc->params[i]].type
                                     : s.callArgs[i]->type;
    d->args.push_back(exprAs(*s.callArgs[i], t));
  }
  if (adjoint && adjoint->checkpoints)
    cast<ir::AdjointStmt>(*d).checkpoints = expr(*adjoint->checkpoints);
  for (size_t i = 0; i < s.numTargets(); ++i) {
    const ast::NameRef &ref = s.target(i);
    ir::DerivEntry e;
    e.of = derivTarget(ref.decl, procDecl, ref.range);
    e.range = ref.range;
    if (adjoint)
      gradientOf(*adjoint, ref, *proc, e);
    else
      directionOf(cast<ast::TangentStmt>(s).along[i], *proc, e);
    d->entries.push_back(std::move(e));
  }
  if (const ast::VarDecl *v = s.resultDecl())
    d->resultVar = int(newSlot(*v, proc->returnType, false));
  else
    d->resultVar = int(
        st.fn->addVar(adjoint ? "J" : "d", proc->returnType, false, s.range));
  out.stmts.push_back(std::move(d));
}

void Lowerer::gradientOf(const ast::AdjointStmt &s, const ast::NameRef &w,
                         const ir::Function &proc, ir::DerivEntry &e) {
  const ast::Decl *field = s.grad ? s.grad->field(w.name) : nullptr;
  std::string gname = (s.grad ? s.grad->name : std::string("d")) + "." + w.name;
  if (e.of.dat) {
    // The gradient of a dat is a new dat of the same shape.
    const ir::Dat &primal = *e.of.dat;
    std::string n = gname;
    for (unsigned k = 1; datNames.count(n); ++k)
      n = gname + "." + std::to_string(k);
    datNames.insert(n);
    ir::Dat *g =
        primal.set
            ? build.addDat(n, primal.set, primal.elemType, w.range)
            : build.addBlockDat(n, primal.block, primal.elemType, {},
                                primal.haloMinus, primal.haloPlus, w.range);
    for (const auto &x : primal.size)
      g->size.push_back(ir::cloneExpr(x));
    g->base = primal.base;
    g->isDerivative = true;
    g->primal = e.of.dat;
    e.dat = g;
    if (field)
      dats[field] = g;
  } else if (e.of.param >= 0) {
    Type t = proc.vars[proc.params[e.of.param]].type;
    unsigned slot = st.fn->addVar(gname, t, /*isMutable=*/false, w.range);
    if (field)
      st.slots[field] = slot;
    e.var = int(slot);
  }
}

void Lowerer::directionOf(const ast::TangentStmt::Seed &seed,
                          const ir::Function &proc, ir::DerivEntry &e) {
  if (e.of.dat) {
    if (seed.value)
      e.dat = datOf(*seed.value);
  } else if (e.of.param >= 0 && seed.value) {
    e.value = exprAs(*seed.value, proc.vars[proc.params[e.of.param]].type);
  }
}

} // namespace opdc::lower
