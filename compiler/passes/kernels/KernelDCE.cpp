// KernelDCE.cpp - Drop dead statements from kernels, then the read arguments
// no statement reads.
// SPDX-License-Identifier: Apache-2.0
//
// The adjoint of a statement restores the value it overwrote before it
// propagates (passes/deriv/ReverseDiff.cpp), and adjoint-zeros' copies of a
// reverse kernel keep the whole of it. In heat3d's transposed stencil
//
//   %nb = %u(-1, 0, 0) + %u(1, 0, 0) + ... + %u(0, 0, 1)
//   %adj.save = %u2
//   %u2 = %u(0, 0, 0) + %lam * (%nb - 6.0 * %u(0, 0, 0))
//   %u2.b.1 = %u2.b(0, 0, 0)
//   %u2 = %adj.save
//   ...  (only %u2.b.1, %lam and the adjoint variables from here on)
//
// the step is linear, so nothing reads %u2, %nb or u: LLVM drops the loads,
// but the loop still declares that it reads u at 25 points (the gather's
// seven shifted stencils). The fuse pass then puts the gather two rows behind
// the re-run that writes u, MPI exchanges u's halos two deep for it, the
// tape keeps u for it and the profile counts its bytes. This pass removes,
// in every kernel, the statements whose values nothing reads, then the
// `read` parameters no statement reads any more, and the argument each loop
// of the kernel passes for them.
//
// Liveness runs backwards over a body, the variables live after a kernel's
// body none (its results go through its parameters): an assignment to a
// variable that is not live (a whole variable, `=` or a compound
// assignment, or one component of an array) goes, as does a declaration of
// one, unless its expressions call a function; an if's branches are swept
// each with the set live after the if; a for or while loop is kept whole,
// and everything it reads or assigns is live before it (it may run again);
// a return leaves live only what it reads. Legal because a removed
// statement only assigns a local variable that no later statement reads
// before assigning it again, and evaluates only operators and intrinsics,
// which have no effects (kernels call fns, which could, only through
// CallExpr, which keeps the statement). A parameter is dropped only in
// `read` mode and when no expression of the kernel names it: the kernel
// computes the same values without it, and the loops no longer describe a
// read the kernel never makes (backends, halo exchanges and plans follow
// the descriptors). Loops of one kernel all bind its parameters in order,
// so the same positions go from each; the tape pushes' `overwritten` flags
// are recomputed, since a dropped read may leave a loop writing a dat only
// at the centre.
#include "passes/kernels/KernelDCE.h"

#include "passes/utils/BodyUtils.h"

#include "analysis/LoopChain.h"

#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"
#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <vector>

namespace opdc {

using namespace ir;
using llvm::dyn_cast;
using llvm::isa;

namespace {

constexpr const char *PassName = "kernel-dce";

using Live = std::set<unsigned>;

/// Adds the variables an expression or statement reads to \p live; notes
/// whether it calls a function.
struct Reads : IRVisitor {
  Live &live;
  bool calls = false;
  explicit Reads(Live &l) : live(l) {}
  void visitVarRef(const VarRefExpr &e) override { live.insert(e.slot); }
  void visitCall(const CallExpr &e) override {
    calls = true;
    IRVisitor::visitCall(e);
  }
};

bool addReads(const Expr *e, Live &live) {
  Reads r(live);
  if (e)
    r.visitExpr(*e);
  return r.calls;
}

bool calls(const Expr *e) {
  Live ignored;
  return addReads(e, ignored);
}

/// The variable that assignment target \p t assigns (whole or one
/// component), or -1 for a parameter.
int assignedVar(const Expr &t) {
  if (const auto *v = dyn_cast<VarRefExpr>(&t))
    return int(v->slot);
  if (const auto *x = dyn_cast<IndexExpr>(&t))
    return x->base ? assignedVar(*x->base) : -1;
  return -1;
}

/// Sweeps \p b backwards from \p live (the variables live after it; on
/// return, those live before it), removing dead statements; returns how
/// many went.
int64_t sweep(Body &b, Live &live, bool &changedInit) {
  int64_t removed = 0;
  for (size_t i = b.stmts.size(); i-- > 0;) {
    Stmt *s = b.stmts[i].get();
    if (!s)
      continue;
    bool dead = false;
    if (auto *d = dyn_cast<DeclStmt>(s)) {
      // A declaration stays (later statements may assign the variable);
      // an initial value nothing reads becomes the type's zero, and
      // unusedDecls removes the declaration if nothing names it at all.
      if (!live.count(d->slot) && !calls(d->init.get()) &&
          !isa<ConstantExpr>(d->init.get()) && d->init) {
        d->init = std::make_unique<ConstantExpr>(zeroOf(d->init->type),
                                                 d->init->range);
        changedInit = true;
      }
      live.erase(d->slot);
      addReads(d->init.get(), live);
    } else if (auto *a = dyn_cast<AssignStmt>(s)) {
      const int v = a->target ? assignedVar(*a->target) : -1;
      dead = v >= 0 && !live.count(unsigned(v)) && !calls(a->target.get()) &&
             !calls(a->value.get());
      if (!dead) {
        // `x = e` kills x; a compound assignment or a component's reads
        // the rest of it.
        const bool whole = v >= 0 && isa<VarRefExpr>(a->target.get()) &&
                           a->op == AssignOp::Set;
        if (whole)
          live.erase(unsigned(v));
        else if (const auto *x = dyn_cast<IndexExpr>(a->target.get()))
          addReads(x->index.get(), live);
        if (!whole && v >= 0)
          live.insert(unsigned(v));
        addReads(a->value.get(), live);
      }
    } else if (auto *f = dyn_cast<IfStmt>(s)) {
      Live thenLive = live, elseLive = live;
      removed += sweep(f->thenBody, thenLive, changedInit);
      removed += sweep(f->elseBody, elseLive, changedInit);
      live = std::move(thenLive);
      live.insert(elseLive.begin(), elseLive.end());
      dead =
          f->thenBody.empty() && f->elseBody.empty() && !calls(f->cond.get());
      if (!dead)
        addReads(f->cond.get(), live);
    } else if (auto *r = dyn_cast<ReturnStmt>(s)) {
      live.clear();
      addReads(r->value.get(), live);
    } else {
      // Loops whole, and any other statement: everything it touches.
      for (unsigned v : hostSlotsUsed(*s))
        live.insert(v);
    }
    if (dead) {
      b.stmts.erase(b.stmts.begin() + std::ptrdiff_t(i));
      ++removed;
    }
  }
  return removed;
}

/// Removes the declarations of variables that no other statement of \p k
/// names, with a constant initial value; returns how many went.
int64_t unusedDecls(Function &k) {
  Live named; // the variables expressions name (not their declarations)
  Reads names(named);
  names.visitBody(k.body);
  int64_t removed = 0;
  forEachBody(k.body, [&](Body &body) {
    removed += int64_t(std::erase_if(body.stmts, [&](const StmtPtr &s) {
      const auto *d = s ? dyn_cast<DeclStmt>(s.get()) : nullptr;
      return d && !named.count(d->slot) && isa<ConstantExpr>(d->init.get());
    }));
  });
  return removed;
}

/// The parameters the expressions of \p k name.
std::vector<bool> namedParams(const Function &k) {
  struct Named : IRVisitor {
    std::vector<bool> named;
    void visitKernelArg(const KernelArgExpr &e) override {
      if (e.index < named.size())
        named[e.index] = true;
    }
  } n;
  n.named.assign(k.kernelParams.size(), false);
  n.visitFunction(k);
  return n.named;
}

/// Renumbers the kernel's parameter references: index i becomes \p map[i].
struct Renumber : IRMutator {
  const std::vector<unsigned> &map;
  explicit Renumber(const std::vector<unsigned> &m) : map(m) {}
  ExprPtr mutateKernelArg(std::unique_ptr<KernelArgExpr> e) override {
    e->index = map[e->index];
    return e;
  }
};

/// Calls \p f on every loop of every host function, nested bodies included.
void forEachLoop(Program &p, const std::function<void(ParLoopStmt &)> &f) {
  for (Function *fn : p.functions())
    if (fn->isHost())
      forEachBody(fn->body, [&](Body &b) {
        for (StmtPtr &s : b.stmts)
          if (auto *l = s ? dyn_cast<ParLoopStmt>(s.get()) : nullptr)
            f(*l);
      });
}

} // namespace

bool eliminateDeadKernelCode(Program &program, PassContext &ctx) {
  bool changed = false;
  std::map<const Function *, std::vector<bool>> drops;
  for (auto &k : program.kernels) {
    Live live;
    bool changedInit = false;
    int64_t n = sweep(k->body, live, changedInit);
    n += unusedDecls(*k);
    changed = changed || changedInit;
    if (n) {
      ctx.stats.add(PassName, "statements",
                    "kernel statements removed (values nothing reads)", n);
      changed = true;
    }
    const std::vector<bool> named = namedParams(*k);
    std::vector<bool> drop(named.size(), false);
    bool any = false;
    for (size_t i = 0; i < named.size(); ++i)
      if (!named[i] && k->kernelParams[i].mode == AccessMode::Read)
        drop[i] = any = true;
    if (any)
      drops[k.get()] = std::move(drop);
  }
  if (drops.empty())
    return changed;
  std::set<std::pair<const Function *, size_t>> told; // one remark each
  forEachLoop(program, [&](ParLoopStmt &l) {
    auto it = drops.find(l.kernel);
    if (it == drops.end())
      return;
    const std::vector<bool> &drop = it->second;
    std::vector<AccessDescriptor> kept;
    for (size_t i = 0; i < l.args.size(); ++i) {
      if (i < drop.size() && drop[i]) {
        const AccessDescriptor &a = l.args[i];
        ctx.stats.add(PassName, "arguments",
                      "loop arguments dropped (read by no statement)");
        if (told.insert({l.kernel, i}).second)
          ctx.diags.remark(a.range.begin.isValid() ? a.range : l.range,
                           "argument " + std::to_string(i) + " of '" +
                               l.kernel->name + "' (" +
                               (a.usesDat() ? "dat '" + a.dat->name + "'"
                                            : std::string("a global read")) +
                               ") dropped: the kernel never reads it",
                           PassName);
        continue;
      }
      kept.push_back(std::move(l.args[i]));
    }
    l.args = std::move(kept);
  });
  std::set<const Stencil *> unhooked; // stencils of dropped parameters
  for (auto &[kc, drop] : drops) {
    auto *k = const_cast<Function *>(kc);
    std::vector<unsigned> map(drop.size(), 0);
    std::vector<KernelParam> params;
    for (size_t i = 0; i < drop.size(); ++i) {
      map[i] = unsigned(params.size());
      if (!drop[i])
        params.push_back(std::move(k->kernelParams[i]));
      else if (k->kernelParams[i].stencil)
        unhooked.insert(k->kernelParams[i].stencil);
    }
    k->kernelParams = std::move(params);
    Renumber(map).mutateFunction(*k);
  }
  // A stencil only dropped parameters used (a transposed stencil's shifted
  // reads, passes/deriv/ReverseDiff.cpp) goes from the program too.
  for (auto &k : program.kernels)
    for (const KernelParam &p : k->kernelParams)
      unhooked.erase(p.stencil);
  forEachLoop(program, [&](ParLoopStmt &l) {
    for (const AccessDescriptor &a : l.args)
      unhooked.erase(a.stencil);
  });
  std::erase_if(program.stencils, [&](const std::unique_ptr<Stencil> &st) {
    return unhooked.count(st.get()) != 0;
  });
  for (Function *fn : program.functions())
    if (fn->isHost())
      forEachBody(fn->body, fixTapeOverwrites);
  return true;
}

} // namespace opdc
