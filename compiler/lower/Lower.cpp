// Lower.cpp - AST -> Program IR.
// SPDX-License-Identifier: Apache-2.0
//
// Three passes over the declarations of every module (imports first, root
// last, source order within a module):
//   1. create an IR object for each global and function, so that any order
//      of declaration works (a map may name a set declared after it);
//   2. fill in the globals (sizes, files, shapes, initialisers) and the
//      signatures of functions;
//   3. lower the bodies of fns, kernels, procs and main.
// Expressions are lowered with their sema types. An expression that sema
// folded is emitted as a typed Constant only when it is made of literals and
// consts alone (a param's default is never folded into code: params change
// at run time). Any remaining difference between an operand's type and the
// type its context needs becomes an explicit Cast (constants are converted
// in place), so the IR obeys "operands of one type" without exception.
#include "lower/Lower.h"

#include "ir/IRBuilder.h"
#include "ir/Verifier.h"
#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

#include <map>
#include <set>
#include <unordered_map>

namespace opdc {

using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;
using llvm::isa;
using B = ir::IRBuilder;

namespace {

bool isValueType(Type t) { return t.isScalar() || t.isArray() || t.isString(); }

/// Rank for choosing a common type when sema left operands of different
/// types (it should not): wider floats over narrower, floats over integers.
int rank(ScalarKind k) {
  switch (k) {
  case ScalarKind::Bool:
    return 0;
  case ScalarKind::I32:
    return 1;
  case ScalarKind::I64:
    return 2;
  case ScalarKind::F32:
    return 3;
  case ScalarKind::F64:
    return 4;
  }
  return 0;
}

class Lowerer {
public:
  Lowerer(const ast::Program &p, DiagnosticEngine &d)
      : ast(p), diags(d), prog(std::make_unique<ir::Program>()), build(*prog) {}
  std::unique_ptr<ir::Program> run();

private:
  // Per-function state.
  struct FnState {
    ir::Function *fn = nullptr;
    std::unordered_map<const ast::Decl *, unsigned> slots;
    const ast::KernelDecl *kernel = nullptr;
    std::unordered_map<const ast::KernelParamDecl *, unsigned> kparams;
  };

  void fail(SourceRange r, const std::string &what);

  // Passes.
  void createGlobals();
  void fillGlobals();
  void lowerBodies();

  // Declarations.
  void fillDat(const ast::DatDecl &d, ir::Dat &out);
  void signature(const std::vector<std::unique_ptr<ast::VarDecl>> &params,
                 const std::optional<ast::TypeRef> &ret, ir::Function &f,
                 FnState &st);

  // Statements.
  void lowerBlock(const ast::Block &b, ir::Body &out);
  void lowerStmt(const ast::Stmt &s, ir::Body &out);
  ir::Body lowerElse(const ast::Stmt *s);
  void lowerLoop(const ast::LoopStmt &s, ir::Body &out);
  /// An adjoint or tangent request; gradientOf and directionOf fill in
  /// what an entry of each kind adds to its target.
  void lowerDerivative(const ast::DerivativeStmt &s, ir::Body &out);
  void gradientOf(const ast::AdjointStmt &s, const ast::NameRef &w,
                  const ir::Function &proc, ir::DerivEntry &e);
  void directionOf(const ast::TangentStmt::Seed &seed,
                   const ir::Function &proc, ir::DerivEntry &e);
  std::vector<ir::LoopRange> lowerRanges(const std::vector<ast::RangeExpr> &rs);
  ir::LoopRange lowerRange(const ast::RangeExpr &r, Type t);
  unsigned newSlot(const ast::VarDecl &v, Type t, bool isMutable);
  ir::Dat *datOf(const ast::Expr &e);
  ir::DerivTarget derivTarget(const ast::Decl *d, const ast::ProcDecl *proc,
                              SourceRange at);

  // Expressions.
  ir::ExprPtr expr(const ast::Expr &e);
  ir::ExprPtr exprOr(const ast::ExprPtr &e, Type fallback, SourceRange at);
  /// \p e lowered and converted to \p t.
  ir::ExprPtr exprAs(const ast::Expr &e, Type t);
  ir::ExprPtr lvalue(const ast::Expr &e);
  ir::ExprPtr call(const ast::CallExpr &e);
  ir::ExprPtr intrinsic(const ast::CallExpr &e);
  ir::ExprPtr name(const ast::NameExpr &e);
  ir::ExprPtr constant(const ConstValue &v, Type t, SourceRange r);
  /// Makes \p e of type \p t (Cast, or converts a Constant in place).
  ir::ExprPtr coerce(ir::ExprPtr e, Type t);
  /// True when \p e is made of literals and consts only, so its folded
  /// value may replace it.
  bool foldable(const ast::Expr &e) const;
  ir::ExprPtr placeholder(Type t) {
    return B::constant(
        ir::zeroOf(isValueType(t) ? t : Type::scalarOf(ScalarKind::I32)));
  }

  const ast::Program &ast;
  DiagnosticEngine &diags;
  std::unique_ptr<ir::Program> prog;
  ir::IRBuilder build;
  bool failed = false;
  FnState st; ///< the function being lowered (fn null for globals)

  std::unordered_map<const ast::Decl *, ir::Param *> params;
  std::unordered_map<const ast::Decl *, ir::Set *> sets;
  std::unordered_map<const ast::Decl *, ir::Map *> maps;
  std::unordered_map<const ast::Decl *, ir::Block *> blocks;
  std::unordered_map<const ast::Decl *, ir::Stencil *> stencils;
  std::unordered_map<const ast::Decl *, ir::Dat *> dats;
  std::unordered_map<const ast::Decl *, ir::Function *> functions;
  std::unordered_map<const ir::Function *, FnState> states;
  std::set<std::string> datNames;
};

void Lowerer::fail(SourceRange r, const std::string &what) {
  failed = true;
  diags.error(r, "internal compiler error: cannot lower " + what);
}

//===----------------------------------------------------------------------===//
// Globals
//===----------------------------------------------------------------------===//

void Lowerer::createGlobals() {
  for (const auto &m : ast.modules) {
    for (const auto &dp : m->decls) {
      const ast::Decl *d = dp.get();
      switch (d->kind) {
      case ast::DeclKind::Const: {
        auto *c = cast<ast::ConstDecl>(d);
        build.addConst(c->name, c->value, c->nameRange);
        break;
      }
      case ast::DeclKind::Param: {
        auto *p = cast<ast::ParamDecl>(d);
        Type t = p->type.resolved;
        params[d] = build.addParam(
            p->name, t, ir::convertConst(p->defaultValue, t), p->nameRange);
        break;
      }
      case ast::DeclKind::Set:
        sets[d] = build.addSet(d->name, nullptr, d->nameRange);
        break;
      case ast::DeclKind::Map:
        maps[d] =
            build.addMap(d->name, nullptr, nullptr, 1, nullptr, d->nameRange);
        break;
      case ast::DeclKind::Block: {
        auto *b = cast<ast::BlockDecl>(d);
        blocks[d] = build.addBlock(b->name, unsigned(b->dims), b->nameRange);
        break;
      }
      case ast::DeclKind::Stencil: {
        auto *s = cast<ast::StencilDecl>(d);
        stencils[d] = build.addStencil(s->name, unsigned(s->dims), s->offsets,
                                       s->nameRange);
        break;
      }
      case ast::DeclKind::Dat: {
        ir::Dat *dat =
            build.addDat(d->name, nullptr, Type::error(), d->nameRange);
        datNames.insert(d->name);
        dats[d] = dat;
        break;
      }
      case ast::DeclKind::Kernel:
        functions[d] = build.addKernel(d->name, d->nameRange);
        break;
      case ast::DeclKind::Fn:
        functions[d] = build.addFn(d->name, Type::voidType(), d->nameRange);
        break;
      case ast::DeclKind::Proc:
        functions[d] = build.addProc(d->name, Type::voidType(), d->nameRange);
        break;
      case ast::DeclKind::Main:
        functions[d] = build.setMain(d->nameRange);
        break;
      default:
        break;
      }
    }
  }
}

void Lowerer::fillDat(const ast::DatDecl &d, ir::Dat &out) {
  out.elemType = d.elemType.resolved;
  if (auto *s = dyn_cast_or_null<ast::SetDecl>(d.on.decl)) {
    out.set = sets[s];
  } else if (auto *b = dyn_cast_or_null<ast::BlockDecl>(d.on.decl)) {
    out.block = blocks[b];
    unsigned dims = unsigned(b->dims);
    Type sizeType = Type::scalarOf(ScalarKind::I32);
    for (const auto &e : d.size)
      if (e && e->type.isIntegerScalar() &&
          rank(e->type.scalar) > rank(sizeType.scalar))
        sizeType = e->type;
    for (const auto &e : d.size)
      out.size.push_back(exprOr(e, sizeType, d.range));
    auto perDim = [&](const std::vector<int64_t> &v) {
      std::vector<int64_t> r(v);
      r.resize(dims, 0);
      return r;
    };
    out.haloMinus = perDim(d.haloM);
    out.haloPlus = perDim(d.haloP);
    out.base = perDim(d.baseOffset);
  } else {
    fail(d.on.range, "dat '" + d.name + "' on an unresolved set or block");
  }
  out.init = d.init;
  switch (d.init) {
  case DatInit::Zero:
    break;
  case DatInit::Fill: {
    if (!d.initExpr) {
      fail(d.range, "fill of dat '" + d.name + "' without a value");
      break;
    }
    // A scalar fills every component; an array fills whole elements.
    Type want = d.initExpr->type.isArray()
                    ? out.elemType
                    : Type::scalarOf(out.elemType.scalar);
    out.initValue = exprAs(*d.initExpr, want);
    break;
  }
  case DatInit::File:
    out.initFile = exprOr(d.initExpr, Type::string(), d.range);
    break;
  }
}

void Lowerer::signature(const std::vector<std::unique_ptr<ast::VarDecl>> &ps,
                        const std::optional<ast::TypeRef> &ret, ir::Function &f,
                        FnState &fs) {
  for (const auto &p : ps) {
    Type t = p->type.isError() && p->declaredType ? p->declaredType->resolved
                                                  : p->type;
    unsigned slot = B::addParamVar(f, p->name, t, p->nameRange);
    fs.slots[p.get()] = slot;
  }
  f.returnType = ret ? ret->resolved : Type::voidType();
}

void Lowerer::fillGlobals() {
  st = FnState(); // global context: no function
  for (const auto &m : ast.modules) {
    if (m.get() == ast.root)
      prog->name = m->programName;
    for (const auto &dp : m->decls) {
      const ast::Decl *d = dp.get();
      switch (d->kind) {
      case ast::DeclKind::Set: {
        auto *s = cast<ast::SetDecl>(d);
        ir::Set *out = sets[d];
        if (s->fromFile)
          out->fromFile = exprAs(*s->fromFile, Type::string());
        else if (s->size)
          out->size = expr(*s->size);
        else
          fail(s->range, "set '" + s->name + "' without a size or file");
        break;
      }
      case ast::DeclKind::Map: {
        auto *mp = cast<ast::MapDecl>(d);
        ir::Map *out = maps[d];
        out->from = sets[mp->from.decl];
        out->to = sets[mp->to.decl];
        out->arity = unsigned(mp->arity);
        if (!out->from || !out->to)
          fail(mp->range, "map '" + mp->name + "' between unresolved sets");
        if (mp->fromFile)
          out->fromFile = exprAs(*mp->fromFile, Type::string());
        break;
      }
      case ast::DeclKind::Dat:
        fillDat(*cast<ast::DatDecl>(d), *dats[d]);
        break;
      case ast::DeclKind::Kernel: {
        auto *k = cast<ast::KernelDecl>(d);
        ir::Function *f = functions[d];
        FnState &fs = states[f];
        fs.fn = f;
        fs.kernel = k;
        for (const auto &p : k->params) {
          ir::Stencil *s = nullptr;
          if (p->stencil)
            s = stencils[p->stencil->decl];
          fs.kparams[p.get()] =
              B::addKernelParam(*f, p->name, p->mode,
                                p->type.resolved, s, p->nameRange);
        }
        break;
      }
      case ast::DeclKind::Fn: {
        auto *fd = cast<ast::FnDecl>(d);
        ir::Function *f = functions[d];
        FnState &fs = states[f];
        fs.fn = f;
        signature(fd->params, fd->returnType, *f, fs);
        break;
      }
      case ast::DeclKind::Proc: {
        auto *pd = cast<ast::ProcDecl>(d);
        ir::Function *f = functions[d];
        FnState &fs = states[f];
        fs.fn = f;
        signature(pd->params, pd->returnType, *f, fs);
        break;
      }
      case ast::DeclKind::Main: {
        ir::Function *f = functions[d];
        states[f].fn = f;
        break;
      }
      default:
        break;
      }
    }
  }
}

void Lowerer::lowerBodies() {
  for (const auto &m : ast.modules) {
    for (const auto &dp : m->decls) {
      const ast::Decl *d = dp.get();
      const ast::Block *body = nullptr;
      if (auto *k = dyn_cast<ast::KernelDecl>(d))
        body = k->body.get();
      else if (auto *f = dyn_cast<ast::FnDecl>(d))
        body = f->body.get();
      else if (auto *p = dyn_cast<ast::ProcDecl>(d))
        body = p->body.get();
      else if (auto *mn = dyn_cast<ast::MainDecl>(d))
        body = mn->body.get();
      else
        continue;
      ir::Function *f = functions[d];
      st = states[f];
      if (body)
        lowerBlock(*body, f->body);
      states[f] = st;
    }
  }
  st = FnState();
}

std::unique_ptr<ir::Program> Lowerer::run() {
  createGlobals();
  fillGlobals();
  lowerBodies();
  if (failed)
    return nullptr;
  std::string why;
  if (!verifyIR(*prog, why)) {
    SourceRange at = ast.root ? ast.root->programRange : SourceRange();
    if (!why.empty() && why.back() == '\n')
      why.pop_back();
    diags.error(at, "internal compiler error: lowering produced invalid IR:\n" +
                        why);
    return nullptr;
  }
  return std::move(prog);
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

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
    return;
  }
  case ast::StmtKind::Print: {
    const auto &p = cast<ast::PrintStmt>(s);
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
        fail(s.range, "printf without a literal format");
    }
    for (size_t i = first; i < p.args.size(); ++i)
      if (p.args[i])
        args.push_back(expr(*p.args[i]));
    out.stmts.push_back(
        p.formatted
            ? B::printFormatted(std::move(format), std::move(args), s.range)
            : B::print(std::move(args), s.range));
    return;
  }
  case ast::StmtKind::Solve: {
    const auto &v = cast<ast::SolveStmt>(s);
    auto solve = std::make_unique<ir::SolveStmt>(s.range);
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
    return;
  }
  case ast::StmtKind::Adjoint:
  case ast::StmtKind::Tangent:
    lowerDerivative(cast<ast::DerivativeStmt>(s), out);
    return;
  }
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
    fail(s.proc.range, std::string(s.isAdjoint() ? "an " : "a ") +
                           s.keyword() + " of an unresolved proc");
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
    d->resultVar = int(st.fn->addVar(adjoint ? "J" : "d", proc->returnType,
                                     false, s.range));
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

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

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
    return coerce(
        B::unary(ir::UnaryOp::Neg, exprAs(*u.operand, e.type), e.range),
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

} // namespace

std::unique_ptr<ir::Program> lowerProgram(const ast::Program &program,
                                          DiagnosticEngine &diags) {
  return Lowerer(program, diags).run();
}

} // namespace opdc
