// SwapCopyBack.cpp - Time loops that copy their new state back swap the two
// dats instead, where the dats agree outside the copied range (checked at
// run time, both versions compiled).
// SPDX-License-Identifier: Apache-2.0
//
// OPS's Poisson, and any code ported from a library without swaps, writes a
// step's new state to a second dat and copies it back:
//   for s in lo..hi { loop step (u @ cross -> u2); loop copy (u2 -> u) }
// The copy costs a pass over both dats a step, and in a skewed sweep of
// several steps (passes/loops/UnrollSteps.cpp, Fuse.cpp) the rows of u2 it
// reads double the rows the sweep keeps in cache. This pass runs instead
//   var d = 0
//   loop same (u, u2 -> max d) over every stored point outside R, in slabs
//   let ran = lo < hi
//   if d == 0 {
//     for s in lo..hi { loop step (u @ cross -> u2); swap(u, u2) }
//     if ran { loop copy (u -> u2) over R }
//   } else {
//     for s in lo..hi { loop step (u @ cross -> u2); loop copy (u2 -> u) }
//   }
// where R is the copy's range: the swapping loop when u and u2 hold the same
// bits outside R, the loop as written otherwise.
//
// A while loop (OPS's laplace2d: `while error > tol && iter < iter_max {
// error = 0.0; loop stencil (A @ cross -> Anew, max error); loop copy (Anew
// -> A); if iter % 10 == 0 { printf(..) }; iter = iter + 1 }`) becomes
//   var A.swapped = false
//   if d == 0 {
//     while cond { ..; swap(A, Anew); A.swapped = true; .. }
//     if A.swapped { loop copy (A -> Anew) over R }
//   } else { the loop as written }
//
// Why it is legal. Let a be the dat the copy writes (u) and b the one it
// reads (u2). The body's conditions: the copy is a statement of its top
// level and copies b into a element by element over R; no other statement
// writes a (loops, swaps, reads from files, at any depth); every loop that
// writes b before the copy writes it with `out` at the element, over
// exactly R, assigning it whole at the top of its kernel (so every element
// of R, every time), and one of the body's own statements (not one nested
// in an if or a loop) does so before any statement reads b; the statements
// after the copy do not reach b at all; nothing leaves an iteration before
// the copy (no break or continue of the loop itself there; after it they
// may), nothing returns; nothing calls a proc (in the body or in a while
// loop's condition: a proc may reach any dat), runs a solver or takes a
// derivative; R's bounds use no variable the body declares or assigns (at
// any depth, reductions included), nor a for loop's variable. Invariant at
// the top of each iteration: the swapping loop's a holds what the written
// loop's a holds, and its a and b agree outside R (so do the written
// loop's: neither changes them there). Then the statements before the copy
// compute the same b over R in both (b's old values in R are overwritten
// before anything reads them; outside R b is unchanged and equal to a);
// the written loop copies b into a over R, the swapping loop exchanges a
// and b: the new a is the same in both (b over R, old a outside R), and the
// new b (old a) agrees with it outside R. The statements after the copy
// read a (the same in both) and not b, and write neither, so they compute
// the same and keep the invariant; a break or continue there leaves with
// the invariant holding. The check before the loop establishes it; so
// every loop of every step reads the same values and computes the same
// bits, for any thread or rank count. A while loop's condition reads host
// values only (the same in both). After the loop, the written loop's b
// equals a over R (if an iteration reached the copy: since nothing leaves
// an iteration before it, if the loop ran at all: lo < hi for a for loop,
// the flag set after the swap for a while loop, whose condition may fail
// at once); the swapping loop's b holds the state before the last step
// there, so the copy after it (a into b over R) makes the whole state
// equal. With no iteration, neither loop touched a or b and no copy runs.
// The check compares bits: floats equal and of the same sign (NaN never
// compares equal: such dats keep the written loop); under MPI the check is
// a reduction over every rank, so all ranks take the same branch.
//
// On the CPU backend a for loop that swaps is a time loop of stencil steps
// which unroll-steps unrolls (also under --mpi, where the written copy back
// stays one step an iteration: decisions 0361, 0385) and the fuse pass
// runs as one skewed sweep, without u2's rows and the copy; with reports
// after the copy, split-reports first cuts it into runs of plain steps. A
// while loop's steps cannot be unrolled (the condition decides each step
// after the one before), but the swap still saves the copy's pass over
// both dats a step (decision 0405); on the CUDA backend a swap exchanges
// two pointers and saves the copy's kernel. So the pass runs on every
// backend, with or without skewed sweeps; a for loop with a trip count
// that is a constant below 2 keeps its copy (nothing to gain). It runs in
// main and, in programs without derivatives, in procs (the derivative
// passes reverse what unroll-steps makes of a proc's loop, not a branch on
// a run-time check). -fno-swap-copy-back turns it off.
#include "passes/loops/SwapCopyBack.h"
#include "passes/loops/SwapCopyBackCheck.h"

#include "passes/utils/BodyUtils.h"

#include "analysis/LoopAccess.h"

#include "ir/IR.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <set>

namespace opdc {

using namespace ir;
using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;

namespace {

constexpr const char *PassName = "swap-copy-back";
constexpr const char *MissedName = "swap-copy-back-missed";

ExprPtr intConst(ScalarKind k, int64_t v) {
  return std::make_unique<ConstantExpr>(ConstValue::ofInt(k, v));
}

ExprPtr binary(BinaryOp op, ExprPtr a, ExprPtr b) {
  return std::make_unique<BinaryExpr>(op, std::move(a), std::move(b));
}

bool isCentre(const std::vector<int64_t> &offset) {
  return std::all_of(offset.begin(), offset.end(),
                     [](int64_t o) { return o == 0; });
}

/// Whether an argument reaches its dat at the element only.
bool atElement(const AccessDescriptor &a) {
  return a.kind == ArgKind::Direct ||
         (a.kind == ArgKind::Stencil && a.stencil && a.stencil->isCentreOnly());
}

/// Whether kernel \p k assigns parameter \p p whole at the top level of its
/// body: on every element it runs for.
bool assignsWhole(const Function &k, unsigned p) {
  for (const StmtPtr &sp : k.body.stmts) {
    const auto *a = dyn_cast_or_null<AssignStmt>(sp.get());
    if (!a || a->op != AssignOp::Set)
      continue;
    const auto *t = dyn_cast<KernelArgExpr>(a->target.get());
    if (t && t->index == p && isCentre(t->offset))
      return true;
  }
  return false;
}

/// A loop that copies dat `from` into dat `to` element by element: its
/// kernel is the one statement `dst = src`.
struct CopyLoop {
  Dat *from = nullptr, *to = nullptr;
  unsigned fromArg = 0, toArg = 0;
};

std::optional<CopyLoop> asCopyLoop(const ParLoopStmt &l) {
  const Function &k = *l.kernel;
  if (!l.block || l.args.size() != 2 || k.body.stmts.size() != 1)
    return std::nullopt;
  const auto *a = dyn_cast_or_null<AssignStmt>(k.body.stmts[0].get());
  if (!a || a->op != AssignOp::Set)
    return std::nullopt;
  const auto *t = dyn_cast<KernelArgExpr>(a->target.get());
  const auto *v = dyn_cast<KernelArgExpr>(a->value.get());
  if (!t || !v || t->index == v->index || !isCentre(t->offset) ||
      !isCentre(v->offset))
    return std::nullopt;
  const AccessDescriptor &from = l.args[v->index], &to = l.args[t->index];
  if (!from.usesDat() || !to.usesDat() || from.mode != AccessMode::Read ||
      to.mode != AccessMode::Write || !atElement(from) || !atElement(to) ||
      from.dat == to.dat || t->type != to.dat->elemType ||
      v->type != from.dat->elemType)
    return std::nullopt;
  return CopyLoop{from.dat, to.dat, v->index, t->index};
}

/// Whether swap(a, b) may exchange the two dats: the same shape (what sema
/// asks of a swap), and neither made by the derivative passes.
bool swappable(const Dat &a, const Dat &b) {
  if (!a.block || a.block != b.block || a.elemType != b.elemType ||
      a.haloMinus != b.haloMinus || a.haloPlus != b.haloPlus ||
      a.base != b.base || a.size.size() != b.size.size() || a.isDerivative ||
      b.isDerivative || a.scratch || b.scratch)
    return false;
  for (size_t d = 0; d < a.size.size(); ++d)
    if (exprToString(*a.size[d]) != exprToString(*b.size[d]))
      return false;
  return true;
}

/// The range \p l runs over: its own, or for a whole-block loop its extent
/// dat's points without halos.
std::vector<LoopRange> rangeOf(const ParLoopStmt &l) {
  std::vector<LoopRange> r;
  if (!l.ranges.empty()) {
    for (const LoopRange &x : l.ranges)
      r.push_back(x.clone());
    return r;
  }
  const Dat *d = analyzeLoopAccess(l).extentDat;
  if (!d)
    return r;
  for (size_t i = 0; i < d->size.size(); ++i) {
    const int64_t base = i < d->base.size() ? d->base[i] : 0;
    r.push_back({intConst(d->size[i]->type.scalar, base),
                 plusConst(*d->size[i], base)});
  }
  return r;
}

std::string rangeText(const std::vector<LoopRange> &r) {
  std::string s;
  for (const LoopRange &x : r)
    s += exprToString(*x.lo) + " .. " + exprToString(*x.hi) + ";";
  return s;
}

/// Every stored point of \p d: [base - halo-, base + size + halo+).
std::vector<LoopRange> storedPoints(const Dat &d) {
  std::vector<LoopRange> r;
  for (size_t i = 0; i < d.size.size(); ++i) {
    const int64_t base = i < d.base.size() ? d.base[i] : 0;
    r.push_back({intConst(d.size[i]->type.scalar, base - d.haloMinus[i]),
                 plusConst(*d.size[i], base + d.haloPlus[i])});
  }
  return r;
}

/// Host variables an expression reads, and whether it calls or reads the
/// clock (then it may not be evaluated twice).
struct ExprUses : IRVisitor {
  std::set<unsigned> slots;
  bool impure = false;
  void visitVarRef(const VarRefExpr &e) override { slots.insert(e.slot); }
  void visitCall(const CallExpr &e) override {
    impure = true;
    IRVisitor::visitCall(e);
  }
  void visitIntrinsic(const IntrinsicExpr &e) override {
    impure = impure || e.id == Intrinsic::Wtime;
    IRVisitor::visitIntrinsic(e);
  }
};

/// What makes a time loop's copy back a swap.
struct Plan {
  size_t at = 0; ///< the copy's place in the body
  const ParLoopStmt *copy = nullptr;
  CopyLoop c;
  std::vector<LoopRange> range; ///< R, the copy's
};

/// A time loop the pass looks at: a for loop (var its variable) or a while
/// loop (cond its condition).
struct TimeLoop {
  const Body &body;
  int var = -1;
  const Expr *cond = nullptr;
};

/// What statements do (at any depth) to the copy's dats a and b, and what
/// else decides whether they may run with the swap.
struct Reach : IRVisitor {
  const Dat *a, *b;
  Reach(const Dat *x, const Dat *y) : a(x), b(y) {}
  /// What writes a, and what reaches b otherwise than by a block loop
  /// (empty: nothing).
  std::string writesA, otherB;
  std::vector<const ParLoopStmt *> loopsOnB;
  std::string proc;            ///< a proc called (it may reach any dat)
  std::string opaque;          ///< a solver or a derivative
  bool returns = false;        ///< a return
  bool jumps = false;          ///< a break or continue of the loop itself
  unsigned nested = 0;         ///< for and while loops around the statement
  std::set<unsigned> assigned; ///< slots declared or assigned

  void visitDecl(const DeclStmt &s) override {
    assigned.insert(s.slot);
    IRVisitor::visitDecl(s);
  }
  void visitAssign(const AssignStmt &s) override {
    const Expr *t = s.target.get();
    while (const auto *i = dyn_cast_or_null<IndexExpr>(t))
      t = i->base.get();
    if (const auto *v = dyn_cast_or_null<VarRefExpr>(t))
      assigned.insert(v->slot);
    IRVisitor::visitAssign(s);
  }
  void visitFor(const ForStmt &s) override {
    assigned.insert(s.slot);
    ++nested;
    IRVisitor::visitFor(s);
    --nested;
  }
  void visitWhile(const WhileStmt &s) override {
    ++nested;
    IRVisitor::visitWhile(s);
    --nested;
  }
  void visitBreak(const BreakStmt &) override { jumps = jumps || !nested; }
  void visitContinue(const ContinueStmt &) override {
    jumps = jumps || !nested;
  }
  void visitReturn(const ReturnStmt &s) override {
    returns = true;
    IRVisitor::visitReturn(s);
  }
  void visitParLoop(const ParLoopStmt &s) override {
    bool onB = false;
    for (const AccessDescriptor &x : s.args) {
      if (x.kind == ArgKind::Reduction && x.var >= 0)
        assigned.insert(unsigned(x.var));
      if (!x.usesDat())
        continue;
      if (x.dat == a && modeWrites(x.mode) && writesA.empty())
        writesA = "loop '" + s.kernel->name + "'";
      onB = onB || x.dat == b;
    }
    if (onB)
      loopsOnB.push_back(&s);
    IRVisitor::visitParLoop(s);
  }
  void visitSwap(const SwapStmt &s) override {
    for (const Dat *d : {s.a, s.b}) {
      if (d == a && writesA.empty())
        writesA = "a swap";
      if (d == b && otherB.empty())
        otherB = "a swap";
    }
  }
  void visitDatIO(const DatIOStmt &s) override {
    for (const Dat *d : s.dats) {
      if (d == a && s.isRead() && writesA.empty())
        writesA = "a read from a file";
      if (d == b && otherB.empty())
        otherB = s.isRead() ? "a read from a file" : "a write to a file";
    }
    IRVisitor::visitDatIO(s);
  }
  void visitSolve(const SolveStmt &s) override {
    if (opaque.empty())
      opaque = "a solver";
    IRVisitor::visitSolve(s);
  }
  void visitDerivative(const DerivativeStmt &s) override {
    if (opaque.empty())
      opaque = "a derivative";
    IRVisitor::visitDerivative(s);
  }
  void visitCheckpoint(const CheckpointStmt &s) override {
    if (opaque.empty())
      opaque = "a checkpointed loop";
    IRVisitor::visitCheckpoint(s);
  }
  void visitTape(const TapeStmt &) override {
    if (opaque.empty())
      opaque = "a tape";
  }
  void visitCall(const CallExpr &e) override {
    if (e.callee && e.callee->kind == FunctionKind::Proc && proc.empty())
      proc = e.callee->name;
    IRVisitor::visitCall(e);
  }
};

/// Whether the body of \p t is steps with a copy back at \p at that this
/// pass swaps (the conditions of the header comment), and how; else \p why
/// says which condition fails (for -Rpass-missed).
std::optional<Plan> planAt(const TimeLoop &t, size_t at, std::string &why) {
  const std::vector<StmtPtr> &body = t.body.stmts;
  const auto *copy = cast<ParLoopStmt>(body[at].get());
  const CopyLoop c = *asCopyLoop(*copy);
  Dat *a = c.to, *b = c.from;
  const std::string copied =
      "time loop copies '" + b->name + "' back into '" + a->name + "' ";
  auto refuse = [&](const std::string &reason) {
    why = copied + "but " + reason;
    return std::nullopt;
  };
  if (!swappable(*b, *a))
    return refuse("they differ in shape, or a pass made one of them");
  Plan p{at, copy, c, rangeOf(*copy)};
  if (p.range.empty())
    return refuse("the copy's range is not known");
  if (t.cond) {
    Reach cond(a, b);
    cond.visitExpr(*t.cond);
    if (!cond.proc.empty())
      return refuse("its condition calls proc '" + cond.proc + "'");
  }
  std::set<unsigned> changed;
  if (t.var >= 0)
    changed.insert(unsigned(t.var));
  const std::string rText = rangeText(p.range);
  bool written = false;
  for (size_t i = 0; i < body.size(); ++i) {
    if (i == at || !body[i])
      continue;
    const bool before = i < at;
    Reach r(a, b);
    r.visitStmt(*body[i]);
    changed.insert(r.assigned.begin(), r.assigned.end());
    if (!r.opaque.empty())
      return refuse("the step runs " + r.opaque);
    if (!r.proc.empty())
      return refuse("the step calls proc '" + r.proc + "'");
    if (r.returns)
      return refuse("the step may return");
    if (r.jumps && before)
      return refuse("the step may end before the copy (break or continue)");
    if (!r.writesA.empty())
      return refuse(r.writesA + " writes '" + a->name + "' too");
    if (!r.otherB.empty())
      return refuse(r.otherB + " reaches '" + b->name + "' in the step");
    for (const ParLoopStmt *l : r.loopsOnB) {
      const std::string loop = "loop '" + l->kernel->name + "' ";
      if (!before)
        return refuse(loop + "reads or writes '" + b->name +
                      "' after the copy");
      unsigned onB = 0;
      bool writesB = false, readsB = false;
      for (size_t k = 0; k < l->args.size(); ++k) {
        const AccessDescriptor &x = l->args[k];
        if (!x.usesDat() || x.dat != b)
          continue;
        ++onB;
        if (!modeWrites(x.mode)) {
          readsB = true;
          continue;
        }
        if (x.mode != AccessMode::Write || !atElement(x) ||
            !assignsWhole(*l->kernel, unsigned(k)))
          return refuse(loop + "does not write '" + b->name +
                        "' whole on every element (out, at the element, "
                        "assigned at the top of its kernel)");
        if (rangeText(rangeOf(*l)) != rText)
          return refuse(loop + "writes '" + b->name +
                        "' over another range than the copy's");
        writesB = true;
      }
      if ((writesB && onB > 1) || (readsB && !written))
        return refuse(loop + "reads '" + b->name +
                      "' before the step writes it");
      // Only a loop of the body itself writes b every step.
      written = written || (writesB && l == body[i].get());
    }
  }
  if (!written)
    return refuse("no loop of the step writes '" + b->name +
                  "' (unconditionally, before the copy)");
  // R is the same every step: no variable the body declares or assigns.
  ExprUses inR;
  for (const LoopRange &r : p.range) {
    inR.visitExpr(*r.lo);
    inR.visitExpr(*r.hi);
  }
  for (unsigned slot : inR.slots)
    if (changed.count(slot))
      return refuse("the copied range changes from step to step");
  return p;
}

/// The last copy back of the body of \p t that this pass swaps: the copies
/// of its top level, last first (statements after the copy may read what
/// it wrote). When none qualifies, \p why says why the last does not.
std::optional<Plan> planFor(const TimeLoop &t, std::string &why) {
  bool first = true;
  for (size_t i = t.body.stmts.size(); i-- > 0;) {
    const auto *l = dyn_cast_or_null<ParLoopStmt>(t.body.stmts[i].get());
    if (!l || !asCopyLoop(*l))
      continue;
    std::string reason;
    if (std::optional<Plan> p = planAt(t, i, reason))
      return p;
    if (first)
      why = reason;
    first = false;
  }
  return std::nullopt;
}

class Swapper {
public:
  Swapper(Program &p, PassContext &c) : program(p), ctx(c) {}

  bool run(Function &fn) { return runIn(fn, fn.body); }

private:
  Program &program;
  PassContext &ctx;

  /// Replaces each for and while loop of \p b, and of the bodies nested in
  /// it, whose copy back swaps; the loops left are searched inside.
  bool runIn(Function &fn, Body &b) {
    return rewriteStmts(b, [&](Stmt &s, const Stmt *) -> std::vector<StmtPtr> {
      if (auto *f = dyn_cast<ForStmt>(&s))
        return rewrite(fn, *f);
      if (auto *w = dyn_cast<WhileStmt>(&s))
        return rewrite(fn, *w);
      return {};
    });
  }

  /// Says why the copy back of \p s stays (-Rpass-missed=swap-copy-back).
  std::vector<StmtPtr> missed(const Stmt &s, const std::string &why) {
    if (!why.empty())
      ctx.diags.remark(s.range, why, MissedName);
    return {};
  }

  std::vector<StmtPtr> rewrite(Function &fn, ForStmt &f) {
    std::string why;
    std::optional<Plan> p = planFor({f.body, int(f.slot), nullptr}, why);
    if (!p)
      return missed(f, why);
    const std::string copied = "time loop copies '" + p->c.from->name +
                               "' back into '" + p->c.to->name + "' but ";
    const auto *lo = dyn_cast<ConstantExpr>(f.lo.get());
    const auto *hi = dyn_cast<ConstantExpr>(f.hi.get());
    if (lo && hi && hi->value.asInt() - lo->value.asInt() < 2)
      return missed(f, copied + "runs fewer than two steps");
    ExprUses bounds;
    bounds.visitExpr(*f.lo);
    bounds.visitExpr(*f.hi);
    if (bounds.impure)
      return missed(f, copied + "its bounds call or read the clock");
    const std::string name = fn.vars[f.slot].name;
    unsigned differ = 0;
    std::vector<StmtPtr> out = check(fn, *p, name, f.range, differ);
    // It ran at least once (then it swapped: nothing leaves a step before
    // the swap) when lo < hi.
    const Type boolean = Type::scalarOf(ScalarKind::Bool);
    const unsigned ran = fn.addVar(name + ".ran", boolean, false, f.range);
    out.push_back(std::make_unique<DeclStmt>(
        ran, binary(BinaryOp::Lt, f.lo->clone(), f.hi->clone())));
    Body then;
    then.stmts.push_back(
        std::make_unique<ForStmt>(f.slot, f.lo->clone(), f.hi->clone(),
                                  swappedBody(f.body, *p, -1), f.range));
    out.push_back(choose(fn, f, *p, std::move(then), differ, ran));
    return out;
  }

  std::vector<StmtPtr> rewrite(Function &fn, WhileStmt &w) {
    std::string why;
    std::optional<Plan> p = planFor({w.body, -1, w.cond.get()}, why);
    if (!p)
      return missed(w, why);
    const std::string name = p->c.to->name;
    unsigned differ = 0;
    std::vector<StmtPtr> out = check(fn, *p, name, w.range, differ);
    // Whether it swapped: the condition may fail at once.
    const Type boolean = Type::scalarOf(ScalarKind::Bool);
    const unsigned swapped =
        fn.addVar(name + ".swapped", boolean, true, w.range);
    out.push_back(std::make_unique<DeclStmt>(
        swapped, std::make_unique<ConstantExpr>(ConstValue::ofBool(false))));
    Body then;
    then.stmts.push_back(std::make_unique<WhileStmt>(
        w.cond->clone(), swappedBody(w.body, *p, int(swapped)), w.range));
    out.push_back(choose(fn, w, *p, std::move(then), differ, swapped));
    return out;
  }

  /// `var L.differ = 0` and the loops that set it where a and b differ
  /// outside R.
  std::vector<StmtPtr> check(Function &fn, const Plan &p,
                             const std::string &name, SourceRange at,
                             unsigned &differ) {
    const Type i32 = Type::scalarOf(ScalarKind::I32);
    std::vector<StmtPtr> out;
    differ = fn.addVar(name + ".differ", i32, true, at);
    out.push_back(
        std::make_unique<DeclStmt>(differ, intConst(ScalarKind::I32, 0)));
    // R clipped to the stored points: a range beyond them is the program's
    // error, which its own loops report (their halo checks), not this one.
    std::vector<LoopRange> stored = storedPoints(*p.c.to), inner;
    for (size_t d = 0; d < stored.size(); ++d)
      inner.push_back({minMax(Intrinsic::Max, stored[d].lo->clone(),
                              p.range[d].lo->clone()),
                       minMax(Intrinsic::Min, stored[d].hi->clone(),
                              p.range[d].hi->clone())});
    for (std::vector<LoopRange> &slab : slabsAround(stored, inner))
      out.push_back(
          differLoop(program, p.c.to, p.c.from, std::move(slab), differ, at));
    return out;
  }

  /// The body with swap(a, b) in place of the copy, and with \p flag >= 0
  /// `flag = true` after it.
  Body swappedBody(const Body &body, const Plan &p, int flag) {
    Body swapped;
    for (size_t i = 0; i < body.stmts.size(); ++i) {
      if (i != p.at) {
        swapped.stmts.push_back(body.stmts[i] ? body.stmts[i]->clone()
                                              : nullptr);
        continue;
      }
      swapped.stmts.push_back(
          std::make_unique<SwapStmt>(p.c.to, p.c.from, p.copy->range));
      if (flag >= 0)
        swapped.stmts.push_back(std::make_unique<AssignStmt>(
            AssignOp::Set,
            std::make_unique<VarRefExpr>(unsigned(flag),
                                         Type::scalarOf(ScalarKind::Bool)),
            std::make_unique<ConstantExpr>(ConstValue::ofBool(true))));
    }
    return swapped;
  }

  /// `if differ == 0 { then; if swapped { copy a into b over R } } else
  /// { the loop as written }`, and the remark.
  StmtPtr choose(Function &fn, const Stmt &loop, const Plan &p, Body then,
                 unsigned differ, unsigned swapped) {
    Dat *a = p.c.to, *b = p.c.from;
    // After the last swap b holds the state before the last step over R.
    auto back = std::unique_ptr<ParLoopStmt>(
        static_cast<ParLoopStmt *>(p.copy->clone().release()));
    back->args[p.c.fromArg].dat = a;
    back->args[p.c.toArg].dat = b;
    Body afterLast;
    afterLast.stmts.push_back(std::move(back));
    const Type boolean = Type::scalarOf(ScalarKind::Bool);
    then.stmts.push_back(
        std::make_unique<IfStmt>(std::make_unique<VarRefExpr>(swapped, boolean),
                                 std::move(afterLast), Body(), loop.range));
    Body otherwise;
    otherwise.stmts.push_back(writtenLoop(fn, loop));
    const Type i32 = Type::scalarOf(ScalarKind::I32);
    ctx.stats.add(PassName, "swapped",
                  "time loops whose copy back swaps (checked at run time)");
    ctx.diags.remark(loop.range,
                     "time loop copies '" + b->name + "' back into '" +
                         a->name +
                         "': it swaps them where they agree "
                         "outside the copied range (checked before the loop)",
                     PassName);
    return std::make_unique<IfStmt>(
        binary(BinaryOp::Eq, std::make_unique<VarRefExpr>(differ, i32),
               intConst(ScalarKind::I32, 0)),
        std::move(then), std::move(otherwise), loop.range);
  }

  /// The loop as written, with fresh slots for what it declares at any
  /// depth, its variable included (the swapping loop keeps the originals).
  StmtPtr writtenLoop(Function &fn, const Stmt &loop) {
    std::vector<unsigned> map(fn.vars.size());
    std::iota(map.begin(), map.end(), 0u);
    struct Declared : IRVisitor {
      std::set<unsigned> slots;
      void visitDecl(const DeclStmt &s) override {
        slots.insert(s.slot);
        IRVisitor::visitDecl(s);
      }
      void visitFor(const ForStmt &s) override {
        slots.insert(s.slot);
        IRVisitor::visitFor(s);
      }
    } declared;
    declared.visitStmt(loop);
    for (unsigned s : declared.slots) {
      const Var v = fn.vars[s];
      map[s] = fn.addVar(v.name + ".copy", v.type, v.isMutable, v.range);
    }
    Body b;
    b.stmts.push_back(loop.clone());
    remapSlots(b, map);
    return std::move(b.stmts.front());
  }
};

/// Whether the program asks for derivatives of a proc (adjoint or tangent).
bool hasDerivatives(const Program &program) {
  struct Find : IRVisitor {
    bool found = false;
    void visitDerivative(const DerivativeStmt &) override { found = true; }
  } find;
  for (const Function *f : program.functions())
    if (f->isHost())
      find.visitBody(f->body);
  return find.found;
}

} // namespace

bool swapCopyBacks(Program &program, PassContext &ctx) {
  const bool procs = !hasDerivatives(program);
  Swapper swapper(program, ctx);
  bool changed = false;
  for (Function *f : program.functions())
    if (f->kind == FunctionKind::Main ||
        (procs && f->kind == FunctionKind::Proc))
      changed = swapper.run(*f) || changed;
  return changed;
}

} // namespace opdc
