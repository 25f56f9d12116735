// FuseReorder.cpp - The fuse pass's first step: loops that can fuse
// moved next to each other.
// SPDX-License-Identifier: Apache-2.0
//
// Loops of one chain that could fuse at the same point but have others
// between them become neighbours when the loops between commute with them
// (no dat one writes that the other reaches, no map filled, no reduction
// variable shared), and the constant starts of reductions move out of the
// way first. Fuse.cpp's file comment says when this is legal.
#include "passes/loops/FuseImpl.h"

#include "passes/utils/BodyUtils.h"

#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/LoopNames.h"
#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

#include <algorithm>
#include <map>
#include <set>

namespace opdc::fuse {

using llvm::dyn_cast;
using llvm::isa;

namespace {

/// Whether loops \p x and \p y of chain \p c may run in either order:
/// neither writes a dat the other reaches, nor fills a map, nor reduces
/// into a variable the other reduces into or reads.
bool commute(const LoopChain &c, unsigned x, unsigned y) {
  for (const ChainDat &d : c.dats) {
    bool reachX = false, reachY = false, writeX = false, writeY = false;
    for (const ChainAccess &a : d.accesses) {
      if (a.loop == x) {
        reachX = true;
        writeX = writeX || modeWrites(a.mode);
      }
      if (a.loop == y) {
        reachY = true;
        writeY = writeY || modeWrites(a.mode);
      }
    }
    if ((writeX && reachY) || (writeY && reachX))
      return false;
  }
  std::set<unsigned> reduced[2], read[2];
  const unsigned loops[2] = {x, y};
  for (int k = 0; k < 2; ++k)
    for (const AccessDescriptor &a : c.loops[loops[k]]->args) {
      if (a.kind == ArgKind::MapDirect && modeWrites(a.mode))
        return false;
      if (a.kind == ArgKind::Reduction && a.var >= 0)
        reduced[k].insert(unsigned(a.var));
      if (a.kind == ArgKind::GlobalRead && a.value)
        for (unsigned v : slotsIn(*a.value))
          read[k].insert(v);
    }
  for (int k = 0; k < 2; ++k)
    for (unsigned v : reduced[k])
      if (reduced[1 - k].count(v) || read[1 - k].count(v))
        return false;
  return true;
}

} // namespace

/// Moves each assignment of a constant to a host variable among the loops
/// of chain \p c that nothing of the chain before it uses (the start of a
/// reduction, `%J.b = 0.0`), and each declaration with a constant initial
/// value (nothing before it can use its variable), to just before the
/// chain's first loop, where it does the same; returns whether it moved
/// any.
bool hoistConstantStarts(Body &body, const LoopChain &c) {
  if (c.loopStmts.empty())
    return false;
  const size_t first = c.loopStmts.front(), last = c.loopStmts.back();
  std::set<unsigned> used;
  std::vector<size_t> hoist;
  for (size_t i = first; i <= last; ++i) {
    const Stmt *st = body.stmts[i].get();
    if (const auto *l = dyn_cast<ParLoopStmt>(st)) {
      for (unsigned v : loopSlotsUsed(*l))
        used.insert(v);
      continue;
    }
    const auto *a = dyn_cast<AssignStmt>(st);
    const auto *v = a ? dyn_cast<VarRefExpr>(a->target.get()) : nullptr;
    const auto *d = dyn_cast<DeclStmt>(st);
    if ((v && a->op == AssignOp::Set && isa<ConstantExpr>(a->value.get()) &&
         !used.count(v->slot)) ||
        (d && isa<ConstantExpr>(d->init.get()))) {
      hoist.push_back(i);
      continue;
    }
    for (unsigned s : hostSlotsUsed(*st))
      used.insert(s);
  }
  if (hoist.empty())
    return false;
  std::vector<StmtPtr> moved;
  for (size_t k = hoist.size(); k-- > 0;) {
    moved.insert(moved.begin(), std::move(body.stmts[hoist[k]]));
    body.stmts.erase(body.stmts.begin() + std::ptrdiff_t(hoist[k]));
  }
  body.stmts.insert(body.stmts.begin() + std::ptrdiff_t(first),
                    std::make_move_iterator(moved.begin()),
                    std::make_move_iterator(moved.end()));
  return true;
}

bool Fuser::reorderForFusion(const Function &host, Body &body,
                             const LoopChain &c) {
  const size_t n = c.loops.size();
  std::vector<unsigned> order(n);
  for (unsigned l = 0; l < n; ++l)
    order[l] = l;
  // Moves loop l from its statement to that of the loop now at its place;
  // refused when it would pass a host statement that uses a variable of it.
  auto passesHost = [&](const std::vector<unsigned> &o) {
    for (size_t k = 0; k < n; ++k) {
      const size_t from = c.loopStmts[o[k]], to = c.loopStmts[k];
      if (from == to)
        continue;
      const std::vector<unsigned> mine = loopSlotsUsed(*c.loops[o[k]]);
      for (size_t h : c.hostStmts) {
        if (h <= std::min(from, to) || h >= std::max(from, to))
          continue;
        for (unsigned v : hostSlotsUsed(*c.body->stmts[h]))
          if (std::find(mine.begin(), mine.end(), v) != mine.end())
            return true;
      }
    }
    return false;
  };
  bool changed = false;
  for (size_t i = 0; i + 2 < n; ++i) {
    const unsigned L = order[i];
    if (!whyNotFusable(c, L).empty() ||
        whyNotJoin(host, c, {L}, order[i + 1], /*explain=*/false).empty())
      continue; // not fusable, or its neighbour already joins it
    for (size_t j = i + 2; j < n; ++j) {
      const unsigned M = order[j];
      if (!whyNotFusable(c, M).empty() || !shareDat(c, {L}, {M}) ||
          !whyNotJoin(host, c, {L}, M, /*explain=*/false).empty())
        continue;
      // The loops between go before L (they commute with L and with those
      // going after M that they pass) or after M (they commute with M).
      std::vector<unsigned> before, after;
      bool ok = true;
      for (size_t k = i + 1; k < j && ok; ++k) {
        const unsigned x = order[k];
        if (commute(c, x, L) &&
            std::all_of(after.begin(), after.end(),
                        [&](unsigned y) { return commute(c, x, y); }))
          before.push_back(x);
        else if (commute(c, x, M))
          after.push_back(x);
        else
          ok = false;
      }
      if (!ok)
        continue;
      std::vector<unsigned> next(order.begin(),
                                 order.begin() + std::ptrdiff_t(i));
      next.insert(next.end(), before.begin(), before.end());
      next.push_back(L);
      next.push_back(M);
      next.insert(next.end(), after.begin(), after.end());
      next.insert(next.end(), order.begin() + std::ptrdiff_t(j) + 1,
                  order.end());
      if (passesHost(next))
        continue;
      ctx.stats.add(PassName, "moved",
                    "loops moved next to one they fuse with");
      ctx.diags.remark(
          c.loops[M]->range,
          "loop " + shown(*c.loops[M]) + " moved next to " +
              shown(*c.loops[L]) + " to fuse with it (" +
              std::to_string(before.size() + after.size()) +
              (before.size() + after.size() == 1 ? " loop" : " loops") +
              " between them moved around them)",
          PassName);
      noteOthers(ctx, PassName, c.loops[M]->range, {c.loops[L]});
      order = std::move(next);
      i += before.size();
      changed = true;
      break;
    }
  }
  if (!changed)
    return false;
  std::vector<StmtPtr> loops(n);
  for (size_t k = 0; k < n; ++k)
    loops[k] = std::move(body.stmts[c.loopStmts[k]]);
  for (size_t k = 0; k < n; ++k)
    body.stmts[c.loopStmts[k]] = std::move(loops[order[k]]);
  return true;
}

} // namespace opdc::fuse
