// BodyUtils.cpp - Small rewrites of IR bodies shared by passes.
// SPDX-License-Identifier: Apache-2.0
#include "passes/BodyUtils.h"

#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"

#include "llvm/Support/Casting.h"

namespace opdc {

using namespace ir;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

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

} // namespace opdc
