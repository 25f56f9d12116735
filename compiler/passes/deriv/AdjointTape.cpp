// AdjointTape.cpp - Tape only what the reverse sweep reads.
// SPDX-License-Identifier: Apache-2.0
//
// The adjoint pass saves every dat a loop writes (`tape push` before the
// loop) and gives it back in the reverse sweep (`tape pop` before the
// loop's adjoint), so that each adjoint statement sees the primal state of
// its statement. Many of those values are never read. In Airfoil's step
//
//   res_calc: res[pecell] inc     bres_calc: res[pbecell] inc
//   update: q out, res inout (zeroed)
//
// the adjoints of res_calc and bres_calc read res.b, never res, and the
// reverse sweep of the step before restores res again (the pop before
// update.b) before anything reads it: the pushes of res before res_calc
// and bres_calc copy 23 MB each for nothing, twice a step, and hold that
// much tape. This is the "to be recorded" analysis of source-transformation
// AD tools (Hascoet, Naumann, Pascual: TBR analysis, FGCS 2005), done on
// dats.
//
// For every pair of a push and its pop (TapeStmt::pair: the adjoint pass
// makes them together; copies of a body keep the number, so a pair may
// have several statements), a dat of the pair is dropped from all of its
// statements when, after every pop of the pair, its value is dead
// (analysis/DatLiveness.h: no path reads it before a pop, a whole-set
// write, a restore of a checkpoint's state or the end of main overwrites
// or ends it; a proc's end reads every dat but the adjoint's scratch
// copies). Statements left with nothing to save go. The analysis repeats
// while it drops something (a push it dropped was a read).
//
// Legal because a pop's only effect is to give the dat the value the push
// saved (and its halo state): when nothing reads that value, the program
// reads the same values without the pop, and the push, which only copies,
// goes with it. Dropping a dat from every statement of a pair keeps the
// tape's pushes and pops matched, last in first out. What it relies on
// from the runtime (lib/exec/Adjoint.cpp): a reversed checkpointed step is
// followed by a restore, a taped step or the end, never by a re-run on the
// state it left (ir::CheckpointStmt).
//
// Copies aside with nothing to protect. An adjoint request copies each dat
// P writes aside (`loop copy (d -> d.final)`) after the forward sweep and
// swaps it back at the end (`swap(d, d.final)`), because the reverse sweep
// may restore earlier states of d. Where it no longer does (its pops of d
// dropped above; a time loop reversed as a plain loop re-runs nothing),
// nothing writes d between the copy and the swap, and the swap gives d
// back the very values it holds: both go (two passes over d and, on the
// first call, the fresh memory of d.final). Legal because d.final is the
// adjoint's scratch, read by nothing but its swap, and written before any
// other read by the next request's copy.
#include "passes/deriv/AdjointTape.h"

#include "passes/deriv/DerivUtils.h"
#include "passes/utils/BodyUtils.h"

#include "analysis/DatLiveness.h"
#include "ir/IR.h"
#include "ir/IRVisitor.h"
#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

#include <algorithm>
#include <functional>
#include <map>
#include <vector>

namespace opdc {

using namespace ir;
using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;

namespace {

constexpr const char *PassName = "adjoint-tape";

struct Pair {
  std::vector<TapeStmt *> pushes, pops;
};

/// Drops \p d from tape statement \p t (and its overwritten flag).
void drop(TapeStmt &t, const Dat *d) {
  auto it = std::find(t.dats.begin(), t.dats.end(), d);
  if (it == t.dats.end())
    return;
  size_t k = size_t(it - t.dats.begin());
  t.dats.erase(it);
  if (k < t.overwritten.size())
    t.overwritten.erase(t.overwritten.begin() + std::ptrdiff_t(k));
  if (std::none_of(t.overwritten.begin(), t.overwritten.end(),
                   [](bool b) { return b; }))
    t.overwritten.clear();
}

/// One round over host function \p f: drops the dead dats of its pairs.
bool dropDead(Program &program, Function &f, PassContext &ctx) {
  std::map<unsigned, Pair> pairs;
  forEachBody(f.body, [&](Body &b) {
    for (StmtPtr &s : b.stmts)
      if (auto *t = s ? dyn_cast<TapeStmt>(s.get()) : nullptr)
        if (t->pair)
          (t->push ? pairs[t->pair].pushes : pairs[t->pair].pops).push_back(t);
  });
  if (pairs.empty())
    return false;
  DatLiveness live(program, f);
  bool changed = false;
  for (auto &[id, p] : pairs) {
    if (p.pushes.empty() || p.pops.empty())
      continue;
    const std::vector<Dat *> dats = p.pops.front()->dats;
    auto same = [&](const TapeStmt *t) { return t->dats == dats; };
    if (!std::all_of(p.pushes.begin(), p.pushes.end(), same) ||
        !std::all_of(p.pops.begin(), p.pops.end(), same))
      continue;
    for (const Dat *d : dats) {
      if (std::any_of(p.pops.begin(), p.pops.end(),
                      [&](const TapeStmt *t) { return live.liveAfter(*t, d); }))
        continue;
      for (TapeStmt *t : p.pushes)
        drop(*t, d);
      for (TapeStmt *t : p.pops)
        drop(*t, d);
      ctx.stats.add(PassName, "dats",
                    "dats no longer taped (their restores were never read)");
      ctx.diags.remark(p.pushes.front()->range,
                       "'" + d->name +
                           "' not taped here: the reverse sweep never reads "
                           "the value its restore would give back",
                       PassName);
      changed = true;
    }
  }
  if (!changed)
    return false;
  forEachBody(f.body, [](Body &b) {
    std::erase_if(b.stmts, [](const StmtPtr &s) {
      auto *t = s ? dyn_cast<TapeStmt>(s.get()) : nullptr;
      return t && t->dats.empty() && t->vars.empty();
    });
  });
  return true;
}

/// Whether anything in \p stmts [from, to) writes, swaps, restores or reads
/// through a call dat \p d, or names scratch dat \p aside at all.
bool touched(const Body &b, size_t from, size_t to, const Dat *d,
             const Dat *aside) {
  struct Uses : IRVisitor {
    const Dat *d, *aside;
    bool any = false;
    Uses(const Dat *d, const Dat *a) : d(d), aside(a) {}
    void visitParLoop(const ParLoopStmt &l) override {
      for (const AccessDescriptor &a : l.args)
        if (a.usesDat() &&
            (a.dat == aside || (a.dat == d && modeWrites(a.mode))))
          any = true;
      IRVisitor::visitParLoop(l);
    }
    void visitSwap(const SwapStmt &w) override {
      any = any || w.a == d || w.b == d || w.a == aside || w.b == aside;
    }
    void visitTape(const TapeStmt &t) override { names(t.dats); }
    void visitCheckpoint(const CheckpointStmt &c) override {
      names(c.dats);
      IRVisitor::visitCheckpoint(c);
    }
    void visitSolve(const SolveStmt &v) override {
      names(v.dats);
      IRVisitor::visitSolve(v);
    }
    void visitDatIO(const DatIOStmt &io) override {
      names(io.dats);
      IRVisitor::visitDatIO(io);
    }
    void visitCall(const CallExpr &e) override {
      any = any || (e.callee && e.callee->isHost());
      IRVisitor::visitCall(e);
    }
    void names(const std::vector<Dat *> &ds) {
      for (const Dat *x : ds)
        any = any || x == d || x == aside;
    }
  } uses(d, aside);
  for (size_t k = from; k < to && !uses.any; ++k)
    uses.visitStmt(*b.stmts[k]);
  return uses.any;
}

/// Drops the copies aside of \p f that protect nothing, with their swaps
/// back (the file header).
bool dropIdleCopiesAside(Function &f, PassContext &ctx) {
  bool changed = false;
  forEachBody(f.body, [&](Body &b) {
    for (size_t i = 0; i < b.stmts.size(); ++i) {
      const auto *l = dyn_cast_or_null<ParLoopStmt>(b.stmts[i].get());
      if (!l || l->args.size() != 2 || !l->args[1].usesDat() ||
          !l->args[1].dat->scratch || !l->args[0].usesDat() ||
          l->args[1].dat->name != l->args[0].dat->name + ".final" ||
          l->args[0].mode != AccessMode::Read ||
          l->args[1].mode != AccessMode::Write)
        continue;
      const Dat *d = l->args[0].dat, *aside = l->args[1].dat;
      for (size_t j = i + 1; j < b.stmts.size(); ++j) {
        const auto *w = dyn_cast_or_null<SwapStmt>(b.stmts[j].get());
        if (!w ||
            !((w->a == d && w->b == aside) || (w->a == aside && w->b == d))) {
          continue;
        }
        if (touched(b, i + 1, j, d, aside))
          break;
        b.stmts.erase(b.stmts.begin() + std::ptrdiff_t(j));
        b.stmts.erase(b.stmts.begin() + std::ptrdiff_t(i));
        --i;
        changed = true;
        ctx.stats.add(PassName, "copies-aside",
                      "copies aside dropped (nothing restores their dat)");
        break;
      }
    }
  });
  return changed;
}

} // namespace

bool tapeOnlyWhatIsRead(Program &program, PassContext &ctx) {
  bool changed = false;
  for (Function *f : hostFunctions(program)) {
    while (dropDead(program, *f, ctx))
      changed = true;
    changed = dropIdleCopiesAside(*f, ctx) || changed;
  }
  return changed;
}

} // namespace opdc
