// BodyUtils.cpp - Small rewrites of IR bodies shared by passes.
// SPDX-License-Identifier: Apache-2.0
#include "passes/utils/BodyUtils.h"

#include "ir/AccessRules.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"

#include "llvm/Support/Casting.h"

#include <algorithm>
#include <numeric>

namespace opdc {

using namespace ir;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

void forEachNestedBody(Stmt &s, const std::function<void(Body &)> &f) {
  if (auto *i = dyn_cast<IfStmt>(&s)) {
    f(i->thenBody);
    f(i->elseBody);
  } else if (auto *l = dyn_cast<ForStmt>(&s)) {
    f(l->body);
  } else if (auto *w = dyn_cast<WhileStmt>(&s)) {
    f(w->body);
  } else if (auto *c = dyn_cast<CheckpointStmt>(&s)) {
    f(c->body);
    f(c->reverseBody);
    f(c->tapedBody);
    f(c->tapedReverseBody);
  }
}

void forEachBody(Body &b, const std::function<void(Body &)> &f) {
  f(b);
  for (StmtPtr &s : b.stmts)
    if (s)
      forEachNestedBody(*s, [&](Body &n) { forEachBody(n, f); });
}

bool containsReturn(const Body &b) {
  struct Finder : IRVisitor {
    bool found = false;
    void visitReturn(const ReturnStmt &s) override {
      found = true;
      IRVisitor::visitReturn(s);
    }
  } finder;
  finder.visitBody(b);
  return finder.found;
}

bool alwaysReturns(const Body &b) {
  if (b.stmts.empty())
    return false;
  const Stmt &last = *b.stmts.back();
  if (isa<ReturnStmt>(last))
    return true;
  if (auto *i = dyn_cast<IfStmt>(&last))
    return alwaysReturns(i->thenBody) && alwaysReturns(i->elseBody);
  return false;
}

void sinkAfterEarlyReturns(Body &b) {
  for (size_t i = 0; i < b.stmts.size(); ++i) {
    auto *s = dyn_cast<IfStmt>(b.stmts[i].get());
    if (!s)
      continue;
    sinkAfterEarlyReturns(s->thenBody);
    sinkAfterEarlyReturns(s->elseBody);
    if (i + 1 < b.stmts.size() && s->elseBody.empty() &&
        alwaysReturns(s->thenBody)) {
      for (size_t k = i + 1; k < b.stmts.size(); ++k)
        s->elseBody.stmts.push_back(std::move(b.stmts[k]));
      b.stmts.resize(i + 1);
      sinkAfterEarlyReturns(s->elseBody);
    }
  }
}

bool returnsOnlyInTail(const Body &b, bool tail) {
  for (size_t i = 0; i < b.stmts.size(); ++i) {
    const Stmt &s = *b.stmts[i];
    bool last = tail && i + 1 == b.stmts.size();
    if (isa<ReturnStmt>(s) && !last)
      return false;
    if (auto *f = dyn_cast<IfStmt>(&s))
      if (!returnsOnlyInTail(f->thenBody, last) ||
          !returnsOnlyInTail(f->elseBody, last))
        return false;
    if (auto *f = dyn_cast<ForStmt>(&s); f && containsReturn(f->body))
      return false;
    if (auto *w = dyn_cast<WhileStmt>(&s); w && containsReturn(w->body))
      return false;
  }
  return true;
}

namespace {
struct SlotRemapper : IRMutator {
  const std::vector<unsigned> &map;
  explicit SlotRemapper(const std::vector<unsigned> &m) : map(m) {}
  StmtPtr mutateDecl(std::unique_ptr<DeclStmt> s) override {
    s->slot = map[s->slot];
    return IRMutator::mutateDecl(std::move(s));
  }
  StmtPtr mutateFor(std::unique_ptr<ForStmt> s) override {
    s->slot = map[s->slot];
    return IRMutator::mutateFor(std::move(s));
  }
  ExprPtr mutateVarRef(std::unique_ptr<VarRefExpr> e) override {
    e->slot = map[e->slot];
    return e;
  }
  // Reduction arguments name their host variable by slot.
  StmtPtr mutateParLoop(std::unique_ptr<ParLoopStmt> s) override {
    for (AccessDescriptor &a : s->args)
      if (a.var >= 0)
        a.var = int(map[unsigned(a.var)]);
    return IRMutator::mutateParLoop(std::move(s));
  }
  // So do cg's results.
  StmtPtr mutateSolve(std::unique_ptr<SolveStmt> s) override {
    if (s->itersVar >= 0)
      s->itersVar = int(map[unsigned(s->itersVar)]);
    if (s->residualVar >= 0)
      s->residualVar = int(map[unsigned(s->residualVar)]);
    return IRMutator::mutateSolve(std::move(s));
  }
};
} // namespace

namespace {
const Type Bool = Type::scalarOf(ScalarKind::Bool);

/// Whether \p b breaks or continues its own loop (not a nested loop's).
void findJumps(const Body &b, bool &brk, bool &cont) {
  for (const StmtPtr &s : b.stmts) {
    if (isa<BreakStmt>(s.get()))
      brk = true;
    else if (isa<ContinueStmt>(s.get()))
      cont = true;
    else if (auto *i = dyn_cast<IfStmt>(s.get())) {
      findJumps(i->thenBody, brk, cont);
      findJumps(i->elseBody, brk, cont);
    }
  }
}

StmtPtr setFlag(unsigned slot, bool v, SourceRange r) {
  return std::make_unique<AssignStmt>(
      AssignOp::Set, std::make_unique<VarRefExpr>(slot, Bool),
      std::make_unique<ConstantExpr>(ConstValue::ofBool(v)), r);
}

/// !(brk || cont) over the flags in use.
ExprPtr noJump(int brk, int cont) {
  ExprPtr e;
  for (int f : {brk, cont}) {
    if (f < 0)
      continue;
    ExprPtr v = std::make_unique<VarRefExpr>(unsigned(f), Bool);
    e = e ? std::make_unique<BinaryExpr>(BinaryOp::Or, std::move(e),
                                         std::move(v))
          : std::move(v);
  }
  return std::make_unique<UnaryExpr>(UnaryOp::Not, std::move(e));
}

/// A jump sets its flag and ends \p b; after an if that may jump, the
/// rest of \p b runs under noJump.
void guardJumps(Body &b, int brk, int cont) {
  std::vector<StmtPtr> out;
  for (size_t i = 0; i < b.stmts.size(); ++i) {
    StmtPtr &s = b.stmts[i];
    if (isa<BreakStmt>(s.get())) {
      out.push_back(setFlag(unsigned(brk), true, s->range));
      break; // what follows never runs
    }
    if (isa<ContinueStmt>(s.get())) {
      out.push_back(setFlag(unsigned(cont), true, s->range));
      break;
    }
    auto *f = dyn_cast<IfStmt>(s.get());
    bool jb = false, jc = false;
    if (f) {
      findJumps(f->thenBody, jb, jc);
      findJumps(f->elseBody, jb, jc);
    }
    if (!jb && !jc) {
      out.push_back(std::move(s));
      continue;
    }
    guardJumps(f->thenBody, brk, cont);
    guardJumps(f->elseBody, brk, cont);
    SourceRange r = f->range;
    out.push_back(std::move(s));
    Body rest;
    for (size_t j = i + 1; j < b.stmts.size(); ++j)
      rest.stmts.push_back(std::move(b.stmts[j]));
    guardJumps(rest, brk, cont);
    if (!rest.stmts.empty())
      out.push_back(std::make_unique<IfStmt>(noJump(brk, cont), std::move(rest),
                                             Body(), r));
    break;
  }
  b.stmts = std::move(out);
}
} // namespace

void structureJumps(
    Body &b, const std::function<unsigned(const std::string &)> &newFlag) {
  std::vector<StmtPtr> out;
  for (StmtPtr &s : b.stmts) {
    if (auto *i = dyn_cast<IfStmt>(s.get())) {
      structureJumps(i->thenBody, newFlag);
      structureJumps(i->elseBody, newFlag);
    }
    Body *body = nullptr;
    if (auto *f = dyn_cast<ForStmt>(s.get()))
      body = &f->body;
    else if (auto *w = dyn_cast<WhileStmt>(s.get()))
      body = &w->body;
    if (!body) {
      out.push_back(std::move(s));
      continue;
    }
    structureJumps(*body, newFlag); // the inner loops' own jumps first
    bool jb = false, jc = false;
    findJumps(*body, jb, jc);
    if (!jb && !jc) {
      out.push_back(std::move(s));
      continue;
    }
    SourceRange r = s->range;
    int brk = jb ? int(newFlag("broken")) : -1;
    int cont = jc ? int(newFlag("continued")) : -1;
    guardJumps(*body, brk, cont);
    Body nb;
    if (cont >= 0)
      nb.stmts.push_back(setFlag(unsigned(cont), false, r));
    if (brk >= 0 && isa<ForStmt>(s.get()))
      nb.stmts.push_back(std::make_unique<IfStmt>(noJump(brk, -1),
                                                  std::move(*body), Body(), r));
    else
      for (StmtPtr &x : body->stmts)
        nb.stmts.push_back(std::move(x));
    *body = std::move(nb);
    if (brk >= 0) {
      out.push_back(setFlag(unsigned(brk), false, r));
      if (auto *w = dyn_cast<WhileStmt>(s.get()))
        w->cond = std::make_unique<BinaryExpr>(
            BinaryOp::And, std::move(w->cond), noJump(brk, -1), r);
    }
    out.push_back(std::move(s));
  }
  b.stmts = std::move(out);
}

void remapSlots(Body &b, const std::vector<unsigned> &map) {
  SlotRemapper(map).mutateBody(b);
}

void replaceTailReturns(Body &b, int result) {
  if (b.stmts.empty())
    return;
  StmtPtr &last = b.stmts.back();
  if (auto *r = dyn_cast<ReturnStmt>(last.get())) {
    if (result < 0 || !r->value) {
      b.stmts.pop_back();
      return;
    }
    Type t = r->value->type;
    last = std::make_unique<AssignStmt>(
        AssignOp::Set, std::make_unique<VarRefExpr>(unsigned(result), t),
        std::move(r->value), r->range);
  } else if (auto *i = dyn_cast<IfStmt>(last.get())) {
    replaceTailReturns(i->thenBody, result);
    replaceTailReturns(i->elseBody, result);
  }
}

void fixTapeOverwrites(Body &b) {
  for (size_t i = 0; i < b.stmts.size(); ++i) {
    auto *t = b.stmts[i] ? dyn_cast<TapeStmt>(b.stmts[i].get()) : nullptr;
    if (!t || t->overwritten.empty())
      continue;
    std::vector<bool> flags(t->dats.size(), false);
    bool any = false;
    for (size_t k = 0; k < t->dats.size(); ++k) {
      const ParLoopStmt *l = firstLoopReaching(b, i, t->dats[k]);
      const std::vector<bool> o =
          l ? loopOverwrites(*l, {t->dats[k]}) : std::vector<bool>();
      flags[k] = !o.empty() && o[0];
      any = any || flags[k];
    }
    t->overwritten = any ? flags : std::vector<bool>();
  }
}

/// A loop bound plus a constant, folded when the bound is a constant.
ExprPtr plusConst(const Expr &e, int64_t c) {
  if (c == 0)
    return e.clone();
  if (auto *k = dyn_cast<ConstantExpr>(&e))
    return std::make_unique<ConstantExpr>(
        ConstValue::ofInt(e.type.scalar, k->value.asInt() + c));
  return std::make_unique<BinaryExpr>(
      BinaryOp::Add, e.clone(),
      std::make_unique<ConstantExpr>(ConstValue::ofInt(e.type.scalar, c)));
}

/// min(a, b) or max(a, b) of two loop bounds, folded when both are
/// constants or the same expression.
ExprPtr minMax(Intrinsic id, ExprPtr a, ExprPtr b) {
  auto *ka = dyn_cast<ConstantExpr>(a.get());
  auto *kb = dyn_cast<ConstantExpr>(b.get());
  if (ka && kb) {
    int64_t x = ka->value.asInt(), y = kb->value.asInt();
    return std::make_unique<ConstantExpr>(ConstValue::ofInt(
        a->type.scalar,
        id == Intrinsic::Min ? std::min(x, y) : std::max(x, y)));
  }
  if (exprToString(*a) == exprToString(*b))
    return a;
  std::vector<ExprPtr> args;
  args.push_back(std::move(a));
  args.push_back(std::move(b));
  return std::make_unique<IntrinsicExpr>(id, std::move(args));
}

/// Whether a range is empty whatever the run-time values: some dimension
/// with constant bounds lo >= hi.
bool provablyEmpty(const std::vector<LoopRange> &ranges) {
  for (const LoopRange &r : ranges) {
    auto *lo = dyn_cast<ConstantExpr>(r.lo.get());
    auto *hi = dyn_cast<ConstantExpr>(r.hi.get());
    if (lo && hi && lo->value.asInt() >= hi->value.asInt())
      return true;
  }
  return false;
}

std::vector<std::vector<LoopRange>>
slabsAround(const std::vector<LoopRange> &outer,
            const std::vector<LoopRange> &inner) {
  std::vector<std::vector<LoopRange>> slabs;
  for (size_t d = 0; d < outer.size(); ++d)
    for (int side = 0; side < 2; ++side) {
      std::vector<LoopRange> slab;
      for (size_t e = 0; e < outer.size(); ++e) {
        if (e < d)
          slab.push_back(inner[e].clone());
        else if (e > d)
          slab.push_back(outer[e].clone());
        else if (side == 0) // [lo, min(hi, inner lo))
          slab.push_back({outer[e].lo->clone(),
                          minMax(Intrinsic::Min, outer[e].hi->clone(),
                                 inner[e].lo->clone())});
        else // [max(lo, inner hi), hi)
          slab.push_back({minMax(Intrinsic::Max, outer[e].lo->clone(),
                                 inner[e].hi->clone()),
                          outer[e].hi->clone()});
      }
      if (!provablyEmpty(slab))
        slabs.push_back(std::move(slab));
    }
  return slabs;
}

Body iterationCopy(Function &fn, const Body &body, unsigned var, unsigned varTo,
                   ExprPtr value, bool fresh) {
  Body copy = body.clone();
  std::vector<unsigned> map(fn.vars.size());
  std::iota(map.begin(), map.end(), 0u);
  map[var] = varTo;
  if (fresh)
    for (const StmtPtr &sp : body.stmts)
      if (const auto *d = llvm::dyn_cast_or_null<DeclStmt>(sp.get())) {
        const Var v = fn.vars[d->slot];
        map[d->slot] = fn.addVar(v.name + ".u", v.type, v.isMutable, v.range);
      }
  remapSlots(copy, map);
  copy.stmts.insert(copy.stmts.begin(),
                    std::make_unique<DeclStmt>(varTo, std::move(value)));
  return copy;
}

bool rewriteStmts(Body &b, const std::function<std::vector<StmtPtr>(
                               Stmt &, const Stmt *before)> &rewrite) {
  bool changed = false;
  std::vector<StmtPtr> out;
  for (StmtPtr &sp : b.stmts) {
    if (sp) {
      std::vector<StmtPtr> with =
          rewrite(*sp, out.empty() ? nullptr : out.back().get());
      if (!with.empty()) {
        for (StmtPtr &s : with)
          out.push_back(std::move(s));
        changed = true;
        continue;
      }
      forEachNestedBody(*sp, [&](Body &inner) {
        changed = rewriteStmts(inner, rewrite) || changed;
      });
    }
    out.push_back(std::move(sp));
  }
  b.stmts = std::move(out);
  return changed;
}

bool rewriteForLoops(Body &b, const std::function<std::vector<StmtPtr>(
                                  ForStmt &, const Stmt *before)> &rewrite) {
  return rewriteStmts(b,
                      [&](Stmt &s, const Stmt *before) -> std::vector<StmtPtr> {
                        if (auto *f = llvm::dyn_cast<ForStmt>(&s))
                          return rewrite(*f, before);
                        return {};
                      });
}

namespace {
/// Calls, clocks and assignments to one slot in host code.
struct HostUses : IRVisitor {
  unsigned loopVar = ~0u;
  bool call = false, clock = false, assignsLoopVar = false;
  void visitCall(const CallExpr &e) override {
    call = true;
    IRVisitor::visitCall(e);
  }
  void visitIntrinsic(const IntrinsicExpr &e) override {
    if (e.id == Intrinsic::Wtime)
      clock = true;
    IRVisitor::visitIntrinsic(e);
  }
  void visitAssign(const AssignStmt &s) override {
    if (const auto *v = llvm::dyn_cast<VarRefExpr>(s.target.get()))
      assignsLoopVar = assignsLoopVar || v->slot == loopVar;
    IRVisitor::visitAssign(s);
  }
};
} // namespace

bool plainHostCode(std::span<const StmtPtr> body, unsigned loopVar) {
  HostUses u;
  u.loopVar = loopVar;
  for (const StmtPtr &sp : body)
    if (sp)
      u.visitStmt(*sp);
  return !u.call && !u.clock && !u.assignsLoopVar;
}

} // namespace opdc
