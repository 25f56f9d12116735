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
// Why it is legal. Let a be the dat the copy writes (u) and b the one it
// reads (u2). The body's conditions: the copy is its last statement and
// copies b into a element by element over R; no other statement writes a;
// every loop that writes b writes it with `out` at the element, over
// exactly R, assigning it whole at the top of its kernel (so every element
// of R, every time), the first of them before any statement reads b; R's
// bounds use no variable the body declares or assigns; nothing in the body
// but block loops and plain host code (the stencil steps unroll-steps
// unrolls). Invariant at the top of each iteration: the swapping loop's a
// holds what the written loop's a holds, and its a and b agree outside R.
// Then the step computes the same b over R in both (b's old values in R are
// overwritten before anything reads them; outside R b is unchanged and
// equal to a); the written loop copies b into a over R, the swapping loop
// exchanges a and b: the new a is the same in both (b over R, old a
// outside R), and the new b (old a) agrees with it outside R. The check
// before the loop establishes the invariant; so every loop of every step
// reads the same values and computes the same bits, for any thread or rank
// count. After the loop, the written loop's b equals a over R (if the loop
// ran at all); the swapping loop's b holds the state before the last step
// there, so the copy after it (a into b over R) makes the whole state
// equal. The check compares bits: floats equal and of the same sign (NaN
// never compares equal: such dats keep the written loop); under MPI the
// check is a reduction over every rank, so all ranks take the same branch.
//
// The swapping loop is a time loop of stencil steps with a swap, which
// unroll-steps unrolls (also under --mpi, where the written copy back stays
// one step an iteration: decisions 0361, 0385) and the fuse pass runs as one
// skewed sweep, without u2's rows and the copy. Only where skewed sweeps are
// made (TargetQueries::skewedSweeps), with a trip count that is not a
// constant below 2, and in main and, in programs without derivatives, in
// procs (the derivative passes reverse what unroll-steps makes of a proc's
// loop, not a branch on a run-time check). -fno-swap-copy-back turns it off.
#include "passes/loops/SwapCopyBack.h"

#include "passes/loops/UnrollSteps.h"
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
  const ParLoopStmt *copy = nullptr;
  CopyLoop c;
  std::vector<LoopRange> range; ///< R, the copy's
};

/// Whether the body of \p f is steps with a copy back this pass swaps
/// (the conditions of the header comment), and how. When its last
/// statement copies one dat into another but a condition fails, \p why
/// says which (for -Rpass-missed).
std::optional<Plan> planFor(const ForStmt &f, std::string &why) {
  const std::vector<StmtPtr> &body = f.body.stmts;
  if (body.empty())
    return std::nullopt;
  const auto *last = dyn_cast_or_null<ParLoopStmt>(body.back().get());
  std::optional<CopyLoop> c = last ? asCopyLoop(*last) : std::nullopt;
  if (!c)
    return std::nullopt;
  Dat *a = c->to, *b = c->from;
  const std::string copied =
      "time loop copies '" + b->name + "' back into '" + a->name + "' ";
  auto refuse = [&](const std::string &reason) {
    why = copied + "but " + reason;
    return std::nullopt;
  };
  if (!swappable(*b, *a))
    return refuse("they differ in shape, or a pass made one of them");
  Plan p{last, *c, rangeOf(*last)};
  if (p.range.empty())
    return refuse("the copy's range is not known");
  // R is the same every step: no variable the body declares or assigns.
  std::set<unsigned> changed{f.slot};
  for (const StmtPtr &sp : body) {
    if (const auto *d = dyn_cast_or_null<DeclStmt>(sp.get()))
      changed.insert(d->slot);
    if (const auto *x = dyn_cast_or_null<AssignStmt>(sp.get()))
      if (const auto *v = dyn_cast<VarRefExpr>(x->target.get()))
        changed.insert(v->slot);
  }
  ExprUses inR;
  for (const LoopRange &r : p.range) {
    inR.visitExpr(*r.lo);
    inR.visitExpr(*r.hi);
  }
  for (unsigned slot : inR.slots)
    if (changed.count(slot))
      return refuse("the copied range changes from step to step");
  const std::string rText = rangeText(p.range);
  bool written = false;
  for (size_t i = 0; i + 1 < body.size(); ++i) {
    const Stmt *s = body[i].get();
    if (s && s->kind == StmtKind::Swap)
      return refuse("the step swaps dats too");
    const auto *l = dyn_cast_or_null<ParLoopStmt>(s);
    if (!l)
      continue;
    const std::string loop = "loop '" + l->kernel->name + "' ";
    unsigned onB = 0;
    bool writesB = false, readsB = false;
    for (size_t k = 0; k < l->args.size(); ++k) {
      const AccessDescriptor &x = l->args[k];
      if (!x.usesDat())
        continue;
      if (x.dat == a && modeWrites(x.mode))
        return refuse(loop + "writes '" + a->name + "' too");
      if (x.dat != b)
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
      return refuse(loop + "reads '" + b->name + "' before the step writes it");
    written = written || writesB;
  }
  if (!written)
    return refuse("no loop of the step writes '" + b->name + "'");
  return p;
}

class Swapper {
public:
  Swapper(Program &p, PassContext &c) : program(p), ctx(c) {}

  bool run(Function &fn) {
    return rewriteForLoops(
        fn.body, [&](ForStmt &f, const Stmt *) { return rewrite(fn, f); });
  }

private:
  Program &program;
  PassContext &ctx;

  /// Says why the copy back of \p f stays (-Rpass-missed=swap-copy-back).
  std::vector<StmtPtr> missed(const ForStmt &f, const std::string &why) {
    if (!why.empty())
      ctx.diags.remark(f.range, why, MissedName);
    return {};
  }

  std::vector<StmtPtr> rewrite(Function &fn, ForStmt &f) {
    std::string why;
    std::optional<Plan> p = planFor(f, why);
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
    Dat *a = p->c.to, *b = p->c.from;
    // The body with the swap: a time loop of stencil steps (what makes it
    // worth the check and the code; the same predicate unroll-steps asks).
    Body swapped;
    for (size_t i = 0; i + 1 < f.body.stmts.size(); ++i)
      swapped.stmts.push_back(f.body.stmts[i]->clone());
    swapped.stmts.push_back(std::make_unique<SwapStmt>(a, b, p->copy->range));
    if (!stencilStepBody(swapped.stmts, f.slot, false))
      return missed(f, copied + "its steps are not stencil steps of block "
                                "loops and plain host code");

    const std::string name = fn.vars[f.slot].name;
    const Type i32 = Type::scalarOf(ScalarKind::I32);
    const Type boolean = Type::scalarOf(ScalarKind::Bool);
    std::vector<StmtPtr> out;
    const unsigned differ = fn.addVar(name + ".differ", i32, true, f.range);
    out.push_back(
        std::make_unique<DeclStmt>(differ, intConst(ScalarKind::I32, 0)));
    // R clipped to the stored points: a range beyond them is the program's
    // error, which its own loops report (their halo checks), not this one.
    std::vector<LoopRange> stored = storedPoints(*a), inner;
    for (size_t d = 0; d < stored.size(); ++d)
      inner.push_back({minMax(Intrinsic::Max, stored[d].lo->clone(),
                              p->range[d].lo->clone()),
                       minMax(Intrinsic::Min, stored[d].hi->clone(),
                              p->range[d].hi->clone())});
    for (std::vector<LoopRange> &slab : slabsAround(stored, inner))
      out.push_back(checkLoop(a, b, std::move(slab), differ, f.range));
    const unsigned ran = fn.addVar(name + ".ran", boolean, false, f.range);
    out.push_back(std::make_unique<DeclStmt>(
        ran, binary(BinaryOp::Lt, f.lo->clone(), f.hi->clone())));

    Body then;
    then.stmts.push_back(std::make_unique<ForStmt>(
        f.slot, f.lo->clone(), f.hi->clone(), std::move(swapped), f.range));
    // After the last swap b holds the state before the last step over R.
    auto back = std::unique_ptr<ParLoopStmt>(
        static_cast<ParLoopStmt *>(p->copy->clone().release()));
    back->args[p->c.fromArg].dat = a;
    back->args[p->c.toArg].dat = b;
    Body afterLast;
    afterLast.stmts.push_back(std::move(back));
    then.stmts.push_back(
        std::make_unique<IfStmt>(std::make_unique<VarRefExpr>(ran, boolean),
                                 std::move(afterLast), Body(), f.range));

    Body otherwise;
    otherwise.stmts.push_back(writtenLoop(fn, f));
    out.push_back(std::make_unique<IfStmt>(
        binary(BinaryOp::Eq, std::make_unique<VarRefExpr>(differ, i32),
               intConst(ScalarKind::I32, 0)),
        std::move(then), std::move(otherwise), f.range));

    ctx.stats.add(PassName, "swapped",
                  "time loops whose copy back swaps (checked at run time)");
    ctx.diags.remark(f.range,
                     "time loop copies '" + b->name + "' back into '" +
                         a->name +
                         "': it swaps them where they agree "
                         "outside the copied range (checked before the loop)",
                     PassName);
    return out;
  }

  /// The loop as written, with fresh slots for its variable and for what
  /// its body declares (the swapping loop keeps the originals).
  StmtPtr writtenLoop(Function &fn, const ForStmt &f) {
    std::vector<unsigned> map(fn.vars.size());
    std::iota(map.begin(), map.end(), 0u);
    auto fresh = [&](unsigned s) {
      const Var v = fn.vars[s];
      map[s] = fn.addVar(v.name + ".copy", v.type, v.isMutable, v.range);
    };
    fresh(f.slot);
    for (const StmtPtr &sp : f.body.stmts)
      if (const auto *d = dyn_cast_or_null<DeclStmt>(sp.get()))
        fresh(d->slot);
    Body b;
    b.stmts.push_back(f.clone());
    remapSlots(b, map);
    return std::move(b.stmts.front());
  }

  /// `differ = max(differ, 1)` on the points of \p range where a and b
  /// hold different bits.
  StmtPtr checkLoop(Dat *a, Dat *b, std::vector<LoopRange> range,
                    unsigned differ, SourceRange at) {
    auto loop = std::make_unique<ParLoopStmt>(at);
    loop->kernel = checkKernel(a->elemType);
    loop->block = a->block;
    loop->ranges = std::move(range);
    for (Dat *d : {a, b}) {
      AccessDescriptor x;
      x.kind = ArgKind::Direct;
      x.mode = AccessMode::Read;
      x.scalar = d->scalar();
      x.dim = d->dim();
      x.bytes = d->bytesPerElement();
      x.dat = d;
      x.range = at;
      loop->args.push_back(std::move(x));
    }
    AccessDescriptor r;
    r.kind = ArgKind::Reduction;
    r.mode = AccessMode::Max;
    r.scalar = ScalarKind::I32;
    r.dim = 1;
    r.bytes = 4;
    r.var = int(differ);
    r.range = at;
    loop->args.push_back(std::move(r));
    return loop;
  }

  /// Kernel swap_copy_back.differ_T(a, b, n: max i32): n = 1 where a and b
  /// differ in their bits (floats: unequal, or equal of opposite signs).
  Function *checkKernel(Type elem) {
    std::string name = std::string("swap_copy_back.differ_") +
                       scalarName(elem.scalar) +
                       (elem.isArray() ? "x" + std::to_string(elem.dim()) : "");
    if (Function *k = program.findKernel(name))
      return k;
    auto f = std::make_unique<Function>();
    f->kind = FunctionKind::Kernel;
    f->name = name;
    f->kernelParams.push_back({"a", AccessMode::Read, elem, nullptr, {}});
    f->kernelParams.push_back({"b", AccessMode::Read, elem, nullptr, {}});
    f->kernelParams.push_back(
        {"n", AccessMode::Max, Type::scalarOf(ScalarKind::I32), nullptr, {}});
    const Type i32 = Type::scalarOf(ScalarKind::I32);
    auto component = [&](unsigned p, int slot) -> ExprPtr {
      ExprPtr e = std::make_unique<KernelArgExpr>(p, elem);
      if (slot < 0)
        return e;
      return std::make_unique<IndexExpr>(
          std::move(e), std::make_unique<VarRefExpr>(unsigned(slot), i32));
    };
    auto update = [&](int slot) -> StmtPtr {
      ExprPtr same =
          binary(BinaryOp::Eq, component(0, slot), component(1, slot));
      if (isFloat(elem.scalar)) {
        auto sign = [&](unsigned p) {
          std::vector<ExprPtr> args;
          args.push_back(std::make_unique<ConstantExpr>(
              ConstValue::ofFloat(elem.scalar, 1.0)));
          args.push_back(component(p, slot));
          return std::make_unique<IntrinsicExpr>(Intrinsic::Copysign,
                                                 std::move(args));
        };
        same = binary(BinaryOp::And, std::move(same),
                      binary(BinaryOp::Eq, sign(0), sign(1)));
      }
      std::vector<ExprPtr> pick;
      pick.push_back(std::move(same));
      pick.push_back(intConst(ScalarKind::I32, 0));
      pick.push_back(intConst(ScalarKind::I32, 1));
      std::vector<ExprPtr> most;
      most.push_back(std::make_unique<KernelArgExpr>(2, i32));
      most.push_back(
          std::make_unique<IntrinsicExpr>(Intrinsic::Select, std::move(pick)));
      return std::make_unique<AssignStmt>(
          AssignOp::Set, std::make_unique<KernelArgExpr>(2, i32),
          std::make_unique<IntrinsicExpr>(Intrinsic::Max, std::move(most)));
    };
    if (!elem.isArray()) {
      f->body.stmts.push_back(update(-1));
    } else {
      const unsigned i = f->addVar("i", i32, false);
      Body each;
      each.stmts.push_back(update(int(i)));
      f->body.stmts.push_back(std::make_unique<ForStmt>(
          i, intConst(ScalarKind::I32, 0),
          intConst(ScalarKind::I32, int64_t(elem.dim())), std::move(each)));
    }
    Function *k = f.get();
    program.kernels.push_back(std::move(f));
    return k;
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
  if (!ctx.backend.skewedSweeps())
    return false;
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
