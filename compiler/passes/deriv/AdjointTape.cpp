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
#include "passes/deriv/AdjointTape.h"

#include "passes/deriv/DerivUtils.h"
#include "passes/utils/BodyUtils.h"

#include "analysis/DatLiveness.h"
#include "ir/IR.h"
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

} // namespace

bool tapeOnlyWhatIsRead(Program &program, PassContext &ctx) {
  bool changed = false;
  for (Function *f : hostFunctions(program))
    while (dropDead(program, *f, ctx))
      changed = true;
  return changed;
}

} // namespace opdc
