// JoinChains.cpp - Move swaps, tape pops and uses of reduction results out
// of the way of loop chains.
// SPDX-License-Identifier: Apache-2.0
//
// A loop chain (analysis/LoopChain.h) ends at a swap, a tape statement, or a
// host statement that uses a reduction result of its loops; fusion and
// skewed sweeps (passes/loops/Fuse.cpp) work within one chain. The adjoint pass
// leaves such statements between loops that could share a sweep: reversing
// two steps of `jacobi(p -> q); swap(p, q)` gives
//   loop jacobi (p -> q); swap(p, q); swap(p.b, q.b)
//   loop A (p, q.b -> p.b; sum g1); w.b += g1
//   swap(p, q); swap(p.b, q.b); tape pop (q)
//   loop B (p, q.b -> p.b; sum g0); w.b += g0
// This pass moves each such statement S forward past the statements after
// it, as long as the program means the same, to just after the last loop
// it can pass; a loop must come before S (in the same run of loops and host
// assignments) and after it, so the pass only acts where two chains join:
//   * `swap(a, b)` passes a loop by renaming a and b in the loop's
//     arguments: the loop then reaches the same storage it reached after
//     the swap (both dats have the same shape, so ranges and sizes are the
//     same); it passes host declarations and assignments (they reach no
//     dat), a swap of two other dats, a tape pop of other dats and a tape
//     push of host variables only (a push of dats stays right before the
//     loop it may hand the dat's storage over at); two swaps of the same
//     pair that meet cancel;
//   * `tape pop` passes a loop that reaches none of its dats and none of
//     the host variables it restores, host statements that use none of
//     those variables, and swaps of other dats;
//   * a host declaration or assignment passes a loop that uses none of the
//     variables it reads or writes (as an argument, a reduction target or
//     in its range), and host statements that use none of them;
//   * a tape push of host variables only (the unrolled time loop's copy
//     saves its loop variable) passes loops and host statements that use
//     none of them, and swaps; no tape statement passes another, so the
//     tape keeps its order.
// Each step exchanges two statements that touch disjoint state (or renames
// consistently), so every loop computes what it computed before, in the
// same order: results are bitwise the same. The reversed pair above
// becomes
//   loop jacobi (p -> q); loop A' (q, p.b -> q.b; sum g1)
//   loop B (p, q.b -> p.b; sum g0); w.b += g1; tape pop (q); w.b += g0
// (the swaps cancel): one chain, which the fuse pass can skew into one
// sweep over memory.
#include "passes/loops/JoinChains.h"

#include "analysis/LoopChain.h"
#include "passes/utils/BodyUtils.h"

#include "ir/IR.h"

#include "llvm/Support/Casting.h"

#include <algorithm>
#include <set>

namespace opdc {

using namespace ir;
using llvm::dyn_cast;

namespace {

constexpr const char *PassName = "join-chains";

std::set<unsigned> slotsOf(const Stmt &s) {
  std::vector<unsigned> v = hostSlotsUsed(s);
  return {v.begin(), v.end()};
}

bool disjoint(const std::set<unsigned> &a, const std::set<unsigned> &b) {
  for (unsigned x : a)
    if (b.count(x))
      return false;
  return true;
}

bool reaches(const ParLoopStmt &l, const Dat *d) {
  for (const AccessDescriptor &a : l.args)
    if (a.usesDat() && a.dat == d)
      return true;
  return false;
}

bool isHost(const Stmt &s) {
  return s.kind == StmtKind::Decl || s.kind == StmtKind::Assign;
}

bool isPop(const Stmt &s) {
  const auto *t = dyn_cast<TapeStmt>(&s);
  return t && !t->push;
}

/// A tape push of host variables only: it reads them and reaches no dat.
bool isScalarPush(const Stmt &s) {
  const auto *t = dyn_cast<TapeStmt>(&s);
  return t && t->push && t->dats.empty();
}

/// A statement of the runs this pass works in: loops, host declarations
/// and assignments, and the statements it moves.
bool inRun(const Stmt &s) {
  return s.kind == StmtKind::ParLoop || isHost(s) || s.kind == StmtKind::Swap ||
         isPop(s) || isScalarPush(s);
}

/// The statements S may move past, each a kind this pass knows.
enum class Step { Pass, Cancel, Stop };

/// Whether swap \p sw may move past \p next (renaming in it when a loop).
Step swapPast(const SwapStmt &sw, const Stmt &next) {
  if (next.kind == StmtKind::ParLoop || isHost(next))
    return Step::Pass;
  if (const auto *o = dyn_cast<SwapStmt>(&next)) {
    if ((o->a == sw.a && o->b == sw.b) || (o->a == sw.b && o->b == sw.a))
      return Step::Cancel;
    if (o->a != sw.a && o->a != sw.b && o->b != sw.a && o->b != sw.b)
      return Step::Pass;
    return Step::Stop;
  }
  if (const auto *t = dyn_cast<TapeStmt>(&next)) {
    for (const Dat *d : t->dats)
      if (d == sw.a || d == sw.b)
        return Step::Stop;
    // A push of dats may hand a dat's storage to the tape at the next
    // loop's prepare: it stays right before that loop.
    return t->push && !t->dats.empty() ? Step::Stop : Step::Pass;
  }
  return Step::Stop;
}

Step popPast(const TapeStmt &pop, const Stmt &next) {
  const std::set<unsigned> vars(pop.vars.begin(), pop.vars.end());
  if (const auto *l = dyn_cast<ParLoopStmt>(&next)) {
    for (const Dat *d : pop.dats)
      if (reaches(*l, d))
        return Step::Stop;
    return disjoint(vars, slotsOf(next)) ? Step::Pass : Step::Stop;
  }
  if (isHost(next))
    return disjoint(vars, slotsOf(next)) ? Step::Pass : Step::Stop;
  if (const auto *sw = dyn_cast<SwapStmt>(&next)) {
    for (const Dat *d : pop.dats)
      if (d == sw->a || d == sw->b)
        return Step::Stop;
    return Step::Pass;
  }
  return Step::Stop;
}

/// A push of host variables passes what touches none of them; never another
/// tape statement (the tape is a stack).
Step scalarPushPast(const TapeStmt &push, const Stmt &next) {
  const std::set<unsigned> vars(push.vars.begin(), push.vars.end());
  if (next.kind == StmtKind::ParLoop || isHost(next))
    return disjoint(vars, slotsOf(next)) ? Step::Pass : Step::Stop;
  if (next.kind == StmtKind::Swap)
    return Step::Pass;
  return Step::Stop;
}

Step hostPast(const Stmt &host, const Stmt &next) {
  if (next.kind == StmtKind::ParLoop || isHost(next))
    return disjoint(slotsOf(host), slotsOf(next)) ? Step::Pass : Step::Stop;
  if (next.kind == StmtKind::Swap)
    return Step::Pass;
  if (isPop(next) || isScalarPush(next)) {
    const auto &t = *dyn_cast<TapeStmt>(&next);
    const std::set<unsigned> vars(t.vars.begin(), t.vars.end());
    return disjoint(slotsOf(host), vars) ? Step::Pass : Step::Stop;
  }
  return Step::Stop;
}

/// Renames a and b in \p l's dat arguments.
void renameSwapped(ParLoopStmt &l, const SwapStmt &sw) {
  for (AccessDescriptor &a : l.args) {
    if (!a.usesDat())
      continue;
    if (a.dat == sw.a)
      a.dat = sw.b;
    else if (a.dat == sw.b)
      a.dat = sw.a;
  }
}

/// Whether a loop comes before statement \p i in its run of loops, host
/// statements and statements this pass moves.
bool loopBefore(const Body &b, size_t i) {
  for (size_t k = i; k-- > 0;) {
    const Stmt &s = *b.stmts[k];
    if (s.kind == StmtKind::ParLoop)
      return true;
    if (!inRun(s))
      return false;
  }
  return false;
}

Step stepPast(const Stmt &s, const Stmt &next) {
  if (const auto *sw = dyn_cast<SwapStmt>(&s))
    return swapPast(*sw, next);
  if (const auto *t = dyn_cast<TapeStmt>(&s))
    return t->push ? scalarPushPast(*t, next) : popPast(*t, next);
  return hostPast(s, next);
}

/// Moves statement \p i forward as far as the rules allow, but not beyond
/// the last loop it passes. A tape push of host variables takes along the
/// host statements right after it that it cannot pass (the assignment of
/// the variable it saves): they move as one unit, in their order. Returns
/// whether the body changed.
bool sink(Body &b, size_t i, int64_t &movedCount, int64_t &cancelledCount) {
  size_t j = i; // the unit is stmts[i..j]
  if (isScalarPush(*b.stmts[i]))
    while (j + 1 < b.stmts.size()) {
      const Stmt &next = *b.stmts[j + 1];
      if (!isHost(next) && !isScalarPush(next))
        break;
      bool blocks = false;
      for (size_t m = i; m <= j; ++m)
        blocks = blocks || stepPast(*b.stmts[m], next) == Step::Stop;
      if (!blocks)
        break;
      ++j;
    }
  auto step = [&](const Stmt &next) {
    if (i == j)
      return stepPast(*b.stmts[i], next);
    for (size_t m = i; m <= j; ++m)
      if (stepPast(*b.stmts[m], next) != Step::Pass)
        return Step::Stop;
    return Step::Pass;
  };
  // How far: past statements up to the last loop it can pass (or to a swap
  // it cancels with).
  size_t last = j; // the last statement to pass
  bool cancel = false;
  for (size_t k = j + 1; k < b.stmts.size(); ++k) {
    const Step st = step(*b.stmts[k]);
    if (st == Step::Stop)
      break;
    if (st == Step::Cancel) {
      last = k;
      cancel = true;
      break;
    }
    if (b.stmts[k]->kind == StmtKind::ParLoop)
      last = k;
  }
  if (last == j)
    return false;
  bool loopPassed = false;
  for (size_t k = j + 1; k <= last; ++k)
    loopPassed = loopPassed || b.stmts[k]->kind == StmtKind::ParLoop;
  if (!loopPassed)
    return false;
  if (const auto *sw = dyn_cast<SwapStmt>(b.stmts[i].get())) {
    for (size_t k = i + 1; k <= last; ++k)
      if (auto *l = dyn_cast<ParLoopStmt>(b.stmts[k].get()))
        renameSwapped(*l, *sw);
  }
  ++movedCount;
  if (cancel) {
    ++cancelledCount;
    b.stmts.erase(b.stmts.begin() + std::ptrdiff_t(last));
    b.stmts.erase(b.stmts.begin() + std::ptrdiff_t(i));
    return true;
  }
  // Rotate the unit to just after the last statement it passes.
  std::rotate(b.stmts.begin() + std::ptrdiff_t(i),
              b.stmts.begin() + std::ptrdiff_t(j + 1),
              b.stmts.begin() + std::ptrdiff_t(last + 1));
  return true;
}

/// Whether statement \p i of \p b is one this pass moves: a swap, a tape
/// pop, a tape push of host variables, or a host statement that uses a
/// reduction result of a loop before it in its run.
bool movable(const Body &b, size_t i) {
  const Stmt &s = *b.stmts[i];
  if (s.kind == StmtKind::Swap || isPop(s) || isScalarPush(s))
    return true;
  if (!isHost(s))
    return false;
  const std::set<unsigned> uses = slotsOf(s);
  for (size_t k = i; k-- > 0;) {
    const Stmt &p = *b.stmts[k];
    if (const auto *l = dyn_cast<ParLoopStmt>(&p)) {
      for (const AccessDescriptor &a : l->args)
        if (a.kind == ArgKind::Reduction && a.var >= 0 &&
            uses.count(unsigned(a.var)))
          return true;
      continue;
    }
    if (!inRun(p))
      return false;
  }
  return false;
}

bool joinIn(Body &b, PassContext &ctx) {
  bool any = false;
  for (StmtPtr &s : b.stmts)
    if (s)
      forEachNestedBody(*s,
                        [&](Body &inner) { any = joinIn(inner, ctx) || any; });
  // Statements move forward only, and each move passes a loop: this ends.
  // The moves are kept only where they join chains: elsewhere they would
  // reorder the program for nothing.
  Body moved = b.clone();
  int64_t movedCount = 0, cancelledCount = 0;
  bool changed = true;
  bool here = false;
  while (changed) {
    changed = false;
    for (size_t i = 0; i < moved.stmts.size() && !changed; ++i)
      if (moved.stmts[i] && movable(moved, i) && loopBefore(moved, i))
        changed = sink(moved, i, movedCount, cancelledCount);
    here = here || changed;
  }
  const size_t before = findLoopChains(b).size();
  const size_t after = here ? findLoopChains(moved).size() : before;
  if (after >= before)
    return any;
  fixTapeOverwrites(moved);
  b = std::move(moved);
  ctx.stats.add(PassName, "moved", "statements moved past loops", movedCount);
  if (cancelledCount)
    ctx.stats.add(PassName, "cancelled", "pairs of swaps that met cancelled",
                  cancelledCount);
  ctx.stats.add(PassName, "joined", "loop chains joined",
                int64_t(before - after));
  return true;
}

} // namespace

bool joinLoopChains(Program &program, PassContext &ctx) {
  bool changed = false;
  for (Function *f : program.functions())
    if (f->isHost())
      changed = joinIn(f->body, ctx) || changed;
  return changed;
}

} // namespace opdc
