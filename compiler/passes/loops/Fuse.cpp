// Fuse.cpp - Fuse neighbouring loops of a loop chain into one sweep.
// SPDX-License-Identifier: Apache-2.0
//
// Loops A; B of one chain (analysis/LoopChain.h: only host declarations and
// assignments between them) become `loop A+B` with A's body then B's per
// element when
//   1. both are element-parallel (RaceClass::Parallel): no indirect
//      increments, nothing a loop writes reaches another element, and
//      neither fills a map; for the CUDA backend
//      (TargetQueries::fuseIncrements) increments through maps too
//      (RaceClass::IncStrips), under 3b;
//   2. they run over the same set, or the same block and the same range
//      (the same bound expressions, or the same dat's extent);
//   3. every dat one of them writes is reached by both only at the element
//      itself: directly, or through a stencil whose only point is the
//      centre. Element e of A+B then sees exactly what e of B saw after all
//      of A: A's writes at e (they are at e only) and, for every other dat,
//      values neither loop changes. A read through a map or at a stencil
//      offset of a dat the other loop writes is refused, in both orders:
//        loop jacobi (u @ cross -> u2); loop copy (u2 -> u)
//      would read u(i+1) after copy has overwritten it (and under MPI the
//      halo exchanged before the fused loop would be stale);
//  3b. a dat one of them increments through a map is not reached by the
//      other at all: its targets are other elements', and a read (even
//      at the element) would need every increment to have landed, a
//      barrier across the whole grid. Increments of different dats keep
//      each target's increments those of one loop, in that loop's order
//      (the GPU's atomics or colours order them as for the loop alone;
//      -frepro-sum applies them in element order). The fused loop runs
//      like one with increments: under MPI over the exec halo too, where
//      the runtime makes what the pointwise loop reads directly current,
//      counts what it writes as any loop's (lib/mpi/Exchange.cpp), and
//      leaves its reductions' partials out;
//   4. they do not reduce into the same host variable (the partial sums
//      would interleave, changing the rounding), and neither reads a
//      variable the other reduces into;
//   5. the host statements between them use no variable A's arguments or
//      ranges use: the fused loop runs where B was, after them;
//   6. for the CPU backend's scalar bodies (TargetQueries::scalarBodies):
//      both kernels branch around costly work (analysis/BranchWork.h) or
//      neither does. One fused body would serve both: vectorised, the
//      branchy kernel computes its costly arm in every lane; scalar, the
//      other loses its vectors: CloverLeaf's viscosity and calc_dt ran
//      slower fused than apart (docs/performance.md, "Figures from code
//      comments"). Apart, each keeps its own body, and a
//      skewed sweep (below) still reads their common rows once.
//   7. for the CPU backend's float sums in lanes (TargetQueries::sumLanes):
//      no loop of the two sides has a float sum reduction while the other
//      reads a dat through a map. A loop with such a sum runs its rows in
//      groups of 4 kernel copies that only the SLP vectoriser packs
//      (codegen/llvm/LoopBody.cpp, "Float sums"), and it leaves the
//      gathered reads, square roots and divisions of a kernel like
//      Airfoil's adt_calc scalar: update (rms) + adt_calc ran slower
//      fused than apart (docs/performance.md, "Airfoil's predictor and
//      corrector unrolled").
// A group grows loop by loop while the next loop passes these checks
// against every loop of the group.
//
// Moving loops to fuse them. Two loops A ... B of a chain that could fuse
// (A passes rules 1-6 against B, and they share a dat) but have others
// between them become neighbours when each loop X between can move: before
// A, if X commutes with A and with the loops between that go after B and
// that it passes; else after B, if X commutes with B. Loops commute when
// neither writes a dat the other reaches, fills a map, or reduces into a
// variable the other reduces into or reads: run in either order they
// compute the same values, bit for bit (each loop's own sums keep their
// order). A move may not pass a host statement that uses a variable of the
// loop; first, assignments of constants to variables nothing of the chain
// used before (the starts of the adjoint's sums, `%J.b = 0.0`) and
// declarations with constant values move before the chain's first loop.
// heat3d's pair reverse (kernel-dce having dropped the transposed
// stencil's phantom reads of u): the re-run `step` (u -> u2), the gather,
// the second step's sum (it reads u2 at offsets: it stays after step), the
// gather of the first step and the first step's sum `step.b.keep` (u at
// offsets, the gather's output): the gather goes before step, the rest
// after the sum, and step + step.b.keep read u once and share their
// Laplacian (LLVM's GVN: the same operations in the same order).
//
// Bitwise the same results: each element runs the same operations on the
// same values in the same order (A's, then B's); the fused kernel passes a
// dat both loops reach at the element as one parameter, so B reads A's
// store. A block dat the group only reads, through different stencils,
// is one parameter too, through the union of the stencils (one base
// pointer: the loads of common points can be shared). Reductions keep one
// accumulator per argument and the runtime's chunks depend only on the set or
// range, so every partial sum and the order of combining them are unchanged,
// for any number of threads. Under MPI the fused loop's arguments describe
// every access (read-only dats through maps and stencils are exchanged before
// it, as before A; written dats marked dirty after it). Not with
// -ffp-contract=fast, which may contract a multiply of A with an add of B.
//
// Skewed sweeps. Loops over one block that the rules above keep apart
// because one reads at stencil offsets what the other writes (or by rule
// 6, then at lag 0 when they reach each other's data only at the centre),
//   loop jacobi (u @ cross -> u2); loop copy (u2 -> u),
// still share one sweep over memory when B runs a few rows (of the
// outermost dimension, whose rows the runtime's bodies take whole) behind
// A: copy writes row r of u once jacobi has run row r + 1, the last that
// reads it, and u2's row r is still in cache. The units of such a group
// (each an element-fused loop, or one loop) stay separate loops in the IR,
// consecutive, marked `skew` (ParLoopStmt::skew.count, skew.lag, skew.lead,
// skew.trail); the CPU runtime interleaves their rows (lib/exec/Skew.cpp).
// Why it is legal: unit m's row r conflicts with unit k's (k before m)
// row r + D, for every D = dm - dk over the outer offsets dk, dm at which
// the two reach a dat one of them writes; the sweep runs m's row r at step
// r + lag_m and k's row r + D at step r + D + lag_k, so
//   lag_m >= lag_k + max D
// puts every conflicting row of k first, as the loops one after the other
// did. Threads: each runs the sweep over its own contiguous rows; a row of
// m whose conflicting rows of k fall in another thread's part waits until
// every thread is done: m's rows within lead_m after or trail_m before a
// cut, with
//   lead_m >= lead_k - min D,   trail_m >= trail_k + max D,
// run then, cut by cut, the units in order. Each loop computes every
// element from the same values as alone, so the results are bitwise the
// same; only the first unit may reduce (its rows run in chunk order within
// each thread's part: the partial sums are unchanged), and so may a later
// unit: the runtime runs its rows in whole chunks of its own grid, which
// can put it up to a chunk further behind, and moves the units after it
// back as far (lib/exec/Skew.cpp), so its partial sums are those of the
// loop alone too. Under MPI every halo a group needs is exchanged before
// it runs. A later unit that reads at a stencil offset a dat an earlier
// unit writes would read, beyond the rank's points, values only the
// earlier unit's halo exchange brings: such a group is marked
// `needs-extension` (SkewSchedule::needsExtension) and runs as one sweep
// only where its chain is communication-avoiding (passes/loops/CommAvoid.cpp,
// which runs after this pass: the earlier unit then computes those points
// itself), else as separate loops; the runtime checks it per run
// (lib/exec/Skew.cpp). With --comm-avoid=off such a group is refused.
// A unit that shares no dat with the sweep so far joins it only when a
// later unit over the block shares dats with both: heat3d's pair reverse
// re-runs the first step (u -> u2), then the transposed stencil reads
// only adjoints, then the sum reads u2 and the stencil's output, a sweep
// of all three.
// -fno-skew turns skewing off; the CUDA backend, which runs a group's
// loops one by one, gets none: an element-fused group is its one kernel
// (decision 0400), and two units over one block where the second reads at
// stencil offsets what the first writes can be one kernel with a
// recomputed halo (FuseTile.cpp, decision 0485).
//
// This file holds the checks and the driver; the other steps are
// FuseReorder.cpp, FuseSkew.cpp, FuseTile.cpp and FuseBuild.cpp
// (FuseImpl.h).
#include "passes/loops/Fuse.h"
#include "passes/loops/FuseImpl.h"

#include "passes/utils/BodyUtils.h"

#include "analysis/BranchWork.h"
#include "analysis/LoopAccess.h"
#include "analysis/LoopChain.h"

#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/LoopNames.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include "llvm/Support/Casting.h"

#include <algorithm>
#include <map>
#include <set>

namespace opdc::fuse {

using llvm::dyn_cast;
using llvm::isa;

std::string quoted(const std::string &s) { return "'" + s + "'"; }

/// A loop as remarks name it: its kernel's user name (ir/LoopNames.h), not
/// the compiler-made one (step.b2, a+b).
std::string shown(const ParLoopStmt &l) {
  return quoted(userLoopName(l.kernel->name));
}

/// Remarks name several loops but sit at one; a note at each other loop's
/// own statement (when it is another one) shows where it is.
void noteOthers(PassContext &ctx, const char *pass, SourceRange at,
                const std::vector<const ParLoopStmt *> &others) {
  if (!ctx.diags.remarksEnabled(pass))
    return;
  std::set<std::pair<const char *, std::string>> said;
  for (const ParLoopStmt *o : others)
    if (o->range.valid() && o->range.begin != at.begin &&
        said.insert({o->range.begin.getPointer(), shown(*o)}).second)
      ctx.diags.note(o->range, "loop " + shown(*o) + " is here");
}

std::string offsetText(const std::vector<int64_t> &o) {
  std::string s = "(";
  for (size_t i = 0; i < o.size(); ++i)
    s += (i ? ", " : "") + std::to_string(o[i]);
  return s + ")";
}

/// How a dat access reaches memory, for messages: "at offset (1, 0) of
/// stencil 'cross'" or "through 'pedge'[1]".
std::string howReached(const ChainAccess &a) {
  if (a.kind == ArgKind::Indirect)
    return "through " + quoted(a.map->name) + "[" + std::to_string(a.mapIndex) +
           "]";
  return "at offset " + offsetText(a.offset) + " of stencil " +
         quoted(a.stencil->name);
}

/// The host variable slots \p e reads.
std::set<unsigned> slotsIn(const Expr &e) {
  struct Refs : IRVisitor {
    std::set<unsigned> slots;
    void visitVarRef(const VarRefExpr &v) override { slots.insert(v.slot); }
  } refs;
  refs.visitExpr(e);
  return refs.slots;
}

/// The iteration space of a loop as text, for comparisons and messages.
std::string spaceText(const ParLoopStmt &l, const LoopAccess &acc,
                      const Function *host) {
  if (l.set)
    return l.set->name;
  std::string s = l.block->name;
  if (l.ranges.empty()) {
    s += " (extent of ";
    s += acc.extentDat ? quoted(acc.extentDat->name) : "?";
    return s + ")";
  }
  s += "[";
  for (size_t d = 0; d < l.ranges.size(); ++d)
    s += (d ? ", " : "") + exprToString(*l.ranges[d].lo, host) + " .. " +
         exprToString(*l.ranges[d].hi, host);
  return s + "]";
}

/// Whole-block loops run over their extent dat's points without halos:
/// the same range when the dats' size expressions and bases agree.
bool sameExtent(const Dat *a, const Dat *b) {
  if (a == b)
    return true;
  if (!a || !b || a->size.size() != b->size.size() || a->base != b->base)
    return false;
  for (size_t d = 0; d < a->size.size(); ++d)
    if (exprToString(*a->size[d]) != exprToString(*b->size[d]))
      return false;
  return true;
}

std::string Fuser::whyNotFusable(const LoopChain &c, unsigned l) {
  const ParLoopStmt &loop = *c.loops[l];
  const LoopAccess &acc = c.access[l];
  std::string name = quoted(loop.kernel->name);
  for (const AccessDescriptor &a : loop.args)
    if (a.kind == ArgKind::MapDirect && modeWrites(a.mode))
      return name + " writes map " + quoted(a.map->name);
  if (acc.race == RaceClass::IncStrips && !ctx.backend.fuseIncrements()) {
    for (const AccessDescriptor &a : loop.args)
      if (a.kind == ArgKind::Indirect && a.mode == AccessMode::Inc)
        return name + " increments " + quoted(a.dat->name) + " through " +
               quoted(a.map->name) + "[" + std::to_string(a.mapIndex) + "]";
  }
  // Past the check above, a loop with increments through maps fuses.
  if (acc.race != RaceClass::Parallel && acc.race != RaceClass::IncStrips)
    return name + " is sequential (" +
           std::string(sequentialReasonText(acc.reason)) + ")";
  return "";
}

std::string Fuser::whyDatsConflict(const LoopChain &c,
                                   const std::vector<unsigned> &group,
                                   unsigned next) {
  const std::string bName = quoted(c.loops[next]->kernel->name);
  std::set<unsigned> inGroup(group.begin(), group.end());
  for (const ChainDat &d : c.dats) {
    for (const ChainAccess &x : d.accesses) {
      if (x.loop != next)
        continue;
      for (const ChainAccess &y : d.accesses) {
        if (!inGroup.count(y.loop))
          continue;
        std::string yName = shown(*c.loops[y.loop]);
        std::string dat = quoted(d.dat->name);
        // 3b. Increments through maps (rule 1 lets them in on CUDA).
        auto incThroughMap = [&](const ChainAccess &a) {
          return ctx.backend.fuseIncrements() && a.kind == ArgKind::Indirect &&
                 a.mode == AccessMode::Inc;
        };
        if (incThroughMap(y))
          return bName + (modeWrites(x.mode) ? " writes " : " reads ") + dat +
                 (x.centre ? "" : " " + howReached(x)) + ", which " + yName +
                 " increments " + howReached(y) +
                 ": every increment must land first (a barrier across the "
                 "whole grid)";
        if (incThroughMap(x))
          return bName + " increments " + dat + " " + howReached(x) +
                 ", which " + yName +
                 (modeWrites(y.mode) ? " writes" : " reads") +
                 (y.centre ? "" : " " + howReached(y)) +
                 ": no increment may land before every element has done so (a "
                 "barrier across the whole grid)";
        if (modeWrites(y.mode) && !x.centre)
          return bName + " reads " + dat + " " + howReached(x) + ", which " +
                 yName + " writes";
        if (modeWrites(x.mode) && !y.centre)
          return bName + " writes " + dat + ", which " + yName + " reads " +
                 howReached(y);
      }
    }
  }
  return "";
}

std::string Fuser::whyNotSameSpace(const Function &host, const LoopChain &c,
                                   const std::vector<unsigned> &group,
                                   unsigned next, bool explain) {
  const ParLoopStmt &b = *c.loops[next];
  std::string bName = quoted(b.kernel->name);
  const ParLoopStmt &a0 = *c.loops[group.front()];
  std::string spaceA = spaceText(a0, c.access[group.front()]);
  std::string spaceB = spaceText(b, c.access[next]);
  bool same = a0.set ? a0.set == b.set : a0.block == b.block;
  if (same && a0.block) {
    if (a0.ranges.empty() != b.ranges.empty())
      same = false;
    else if (a0.ranges.empty())
      same = sameExtent(c.access[group.front()].extentDat,
                        c.access[next].extentDat);
    else
      same = spaceA == spaceB;
  }
  if (!same && !explain)
    return "different iteration spaces";
  if (!same)
    return shown(*c.loops[group.back()]) + " runs over " +
           spaceText(a0, c.access[group.front()], &host) + " and " + bName +
           " over " + spaceText(b, c.access[next], &host);
  return "";
}

std::string Fuser::whyNotJoin(const Function &host, const LoopChain &c,
                              const std::vector<unsigned> &group, unsigned next,
                              bool explain) {
  const ParLoopStmt &b = *c.loops[next];
  std::string bName = quoted(b.kernel->name);
  // 2. The same iteration space.
  if (std::string why = whyNotSameSpace(host, c, group, next, explain);
      !why.empty())
    return why;

  // 3. Dats written by one side and reached off the element by the other.
  if (std::string why = whyDatsConflict(c, group, next); !why.empty())
    return why;
  // 4. Reductions.
  std::map<unsigned, unsigned> reducedBy; // slot -> loop of the group
  std::map<unsigned, unsigned> readBy;
  for (unsigned g : group)
    for (const AccessDescriptor &a : c.loops[g]->args) {
      if (a.kind == ArgKind::Reduction && a.var >= 0)
        reducedBy.emplace(unsigned(a.var), g);
      if (a.kind == ArgKind::GlobalRead && a.value)
        for (unsigned v : slotsIn(*a.value))
          readBy.emplace(v, g);
    }
  auto varName = [&](unsigned v) { return quoted(host.vars[v].name); };
  for (const AccessDescriptor &a : b.args) {
    if (a.kind != ArgKind::Reduction || a.var < 0)
      continue;
    unsigned v = unsigned(a.var);
    if (auto it = reducedBy.find(v); it != reducedBy.end())
      return bName + " and " + shown(*c.loops[it->second]) +
             " both reduce into " + varName(v);
    if (auto it = readBy.find(v); it != readBy.end())
      return bName + " reduces into " + varName(v) + ", which " +
             shown(*c.loops[it->second]) + " reads";
  }
  for (const AccessDescriptor &a : b.args) {
    if (a.kind != ArgKind::GlobalRead || !a.value)
      continue;
    for (unsigned v : slotsIn(*a.value))
      if (auto it = reducedBy.find(v); it != reducedBy.end())
        return bName + " reads " + varName(v) + ", which " +
               shown(*c.loops[it->second]) + " reduces into";
  }
  // 5. Host statements between the group's last loop and `next` run before
  // the fused loop.
  std::set<unsigned> groupSlots;
  for (unsigned g : group)
    for (unsigned v : loopSlotsUsed(*c.loops[g]))
      groupSlots.insert(v);
  size_t from = c.loopStmts[group.back()], to = c.loopStmts[next];
  for (size_t h : c.hostStmts) {
    if (h <= from || h >= to)
      continue;
    for (unsigned v : hostSlotsUsed(*c.body->stmts[h]))
      if (groupSlots.count(v))
        return "the host statement at line " +
               std::to_string(ctx.diags.sources()
                                  .lineAndColumn(c.body->stmts[h]->range.begin)
                                  .first) +
               " between them uses " + varName(v);
  }
  // 6. One body for both (the group's kernels all branch or all do not).
  if (ctx.backend.scalarBodies()) {
    const ParLoopStmt &a = *c.loops[group.back()];
    const bool branchyA = branchesAroundCostlyWork(*a.kernel);
    if (branchyA != branchesAroundCostlyWork(*b.kernel)) {
      const ParLoopStmt &branchy = branchyA ? a : b;
      const ParLoopStmt &other = branchyA ? b : a;
      return quoted(branchy.kernel->name) +
             " branches around costly work (it gets a scalar body, timed "
             "against the vectorised one) and " +
             quoted(other.kernel->name) +
             " does not: one fused body would serve both";
    }
  }
  // 7. Float sums in lanes beside reads through maps.
  if (ctx.backend.sumLanes()) {
    auto floatSum = [](const ParLoopStmt &l) -> const AccessDescriptor * {
      for (const AccessDescriptor &a : l.args)
        if (a.kind == ArgKind::Reduction && a.mode == AccessMode::Sum &&
            isFloat(a.scalar))
          return &a;
      return nullptr;
    };
    auto readsThroughMap = [](const ParLoopStmt &l) {
      return std::any_of(
          l.args.begin(), l.args.end(), [](const AccessDescriptor &a) {
            return a.kind == ArgKind::Indirect && a.mode == AccessMode::Read;
          });
    };
    auto conflict = [&](const ParLoopStmt &summing, const ParLoopStmt &other) {
      return floatSum(summing) && readsThroughMap(other);
    };
    for (unsigned g : group) {
      const ParLoopStmt &a = *c.loops[g];
      const ParLoopStmt *summing = conflict(a, b)   ? &a
                                   : conflict(b, a) ? &b
                                                    : nullptr;
      if (!summing)
        continue;
      const ParLoopStmt &other = summing == &a ? b : a;
      return quoted(summing->kernel->name) +
             " sums floats in lanes (a body only the SLP vectoriser packs) "
             "and " +
             quoted(other.kernel->name) +
             " reads through maps: fused, the gathered reads would run "
             "scalar";
    }
  }
  return "";
}
namespace {
/// A unit of loops as remarks name it: 'a+b'.
std::string unitName(const LoopChain &c, const std::vector<unsigned> &loops) {
  std::string n;
  for (unsigned l : loops)
    n += (n.empty() ? "" : "+") + c.loops[l]->kernel->name;
  return quoted(userLoopName(n));
}
} // namespace

std::vector<LoopChain> Fuser::prepareChains(const Function &host, Body &body) {
  std::vector<LoopChain> chains = findLoopChains(body);
  // Loops that can fuse at the same point but have others between them
  // become neighbours (the header), the starts of reductions out of the
  // way first.
  bool moved = false;
  for (size_t k = 0; k < chains.size();) {
    if (hoistConstantStarts(body, chains[k])) {
      chains = findLoopChains(body);
      continue;
    }
    ++k;
  }
  for (const LoopChain &c : chains)
    moved = reorderForFusion(host, body, c) || moved;
  if (moved)
    chains = findLoopChains(body);
  return chains;
}

std::vector<Fuser::Unit> Fuser::elementUnits(const Function &host,
                                             const LoopChain &c) {
  std::vector<Unit> units;
  std::vector<unsigned> group;
  auto close = [&] {
    if (!group.empty())
      units.push_back({group, true});
    group.clear();
  };
  for (unsigned l = 0; l < c.loops.size(); ++l) {
    std::string why = whyNotFusable(c, l);
    if (!why.empty()) {
      if (!group.empty() || l + 1 < c.loops.size()) {
        ctx.stats.add(PassName, "refused", "loops not fused");
        ctx.diags.remark(c.loops[l]->range,
                         "loop " + shown(*c.loops[l]) + " not fused: " + why,
                         MissedName);
      }
      close();
      units.push_back({{l}, false});
      continue;
    }
    if (group.empty()) {
      group.push_back(l);
      continue;
    }
    why = whyNotJoin(host, c, group, l, ctx.diags.remarksEnabled(MissedName));
    if (why.empty()) {
      group.push_back(l);
      continue;
    }
    ctx.stats.add(PassName, "refused", "loops not fused");
    const ParLoopStmt &prev = *c.loops[group.back()];
    // Two runs of one loop statement (an unrolled or inlined copy) share
    // a line: say so rather than name the loop twice.
    bool sameStmt = prev.range.begin == c.loops[l]->range.begin;
    ctx.diags.remark(
        c.loops[l]->range,
        "loop " + shown(*c.loops[l]) + " not fused with " +
            (sameStmt ? "the run of this loop before it" : shown(prev)) + ": " +
            why,
        MissedName);
    noteOthers(ctx, MissedName, c.loops[l]->range, {&prev});
    close();
    group.push_back(l);
  }
  close();
  return units;
}

std::vector<std::vector<unsigned>>
Fuser::skewGroups(const Function &host, const LoopChain &c,
                  std::vector<Unit> &units, std::vector<std::string> &lagWhy) {
  std::vector<std::vector<unsigned>> skews; // unit indices, each >= 1
  std::vector<unsigned> skew;
  auto closeSkew = [&] {
    if (!skew.empty())
      skews.push_back(skew);
    skew.clear();
  };
  for (unsigned n = 0; n < units.size(); ++n) {
    Unit &u = units[n];
    const ParLoopStmt &b = *c.loops[u.loops.front()];
    if (!u.fusable || !ctx.backend.skewedSweeps() || !b.block) {
      closeSkew();
      if (u.fusable)
        skew.push_back(n); // a group of its own
      closeSkew();
      continue;
    }
    if (skew.empty() ||
        c.loops[units[skew.front()].loops.front()]->block != b.block) {
      closeSkew();
      skew.push_back(n);
      continue;
    }
    int64_t lag = 0, lead = 0, trail = 0;
    bool needsExtension = false;
    std::string because;
    std::string why = whyNotSkew(host, c, units, skew, n, lag, lead, trail,
                                 needsExtension, because);
    // A unit that shares no dat with the sweep still joins it when a
    // later unit over the block shares dats with both (the header).
    auto bridges = [&] {
      for (unsigned m = n + 1; m < units.size(); ++m) {
        const ParLoopStmt &lm = *c.loops[units[m].loops.front()];
        if (!units[m].fusable || lm.block != b.block)
          return false;
        if (!shareDat(c, units[m].loops, u.loops))
          continue;
        for (unsigned k : skew)
          if (shareDat(c, units[m].loops, units[k].loops))
            return true;
      }
      return false;
    };
    if (!why.empty() && bridges())
      why = whyNotSkew(host, c, units, skew, n, lag, lead, trail,
                       needsExtension, because, true);
    if (why.empty()) {
      u.needsExtension = needsExtension;
      u.lag = lag;
      u.lead = lead;
      u.trail = trail;
      lagWhy[n] = because;
      skew.push_back(n);
      continue;
    }
    ctx.stats.add(PassName, "skew-refused", "loops not skewed");
    ctx.diags.remark(b.range,
                     "loop " + unitName(c, u.loops) + " not skewed with " +
                         unitName(c, units[skew.back()].loops) + ": " + why,
                     MissedName);
    closeSkew();
    skew.push_back(n);
  }
  closeSkew();
  return skews;
}

std::vector<StmtPtr>
Fuser::buildUnits(const Function &host, Body &body, const LoopChain &c,
                  const std::vector<Unit> &units,
                  const std::vector<unsigned> &sg,
                  std::map<size_t, std::vector<StmtPtr>> &replace) {
  std::vector<StmtPtr> out;
  for (unsigned n : sg) {
    const Unit &u = units[n];
    for (unsigned l : u.loops)
      replace[c.loopStmts[l]]; // removed unless it is the group's place
    if (u.loops.size() == 1) {
      out.push_back(std::move(body.stmts[c.loopStmts[u.loops[0]]]));
      continue;
    }
    std::string names;
    for (unsigned g : u.loops)
      names += (names.empty() ? "" : ", ") + shown(*c.loops[g]);
    StmtPtr fused = buildFused(c, u.loops);
    auto *l = llvm::cast<ParLoopStmt>(fused.get());
    ctx.stats.add(PassName, "fused", "loops fused away",
                  int64_t(u.loops.size() - 1));
    ctx.stats.add(PassName, "groups", "fused loops created");
    ctx.diags.remark(c.loops[u.loops.front()]->range,
                     "fused " + std::to_string(u.loops.size()) + " loops (" +
                         names + ") into " + shown(*l) + " over " +
                         spaceText(*l, c.access[u.loops.front()], &host),
                     PassName);
    std::vector<const ParLoopStmt *> others;
    for (size_t g = 1; g < u.loops.size(); ++g)
      others.push_back(c.loops[u.loops[g]]);
    noteOthers(ctx, PassName, c.loops[u.loops.front()]->range, others);
    out.push_back(std::move(fused));
    changed = true;
  }
  return out;
}

void Fuser::markSkewed(const LoopChain &c, const std::vector<Unit> &units,
                       const std::vector<unsigned> &sg,
                       const std::vector<std::string> &lagWhy,
                       std::vector<StmtPtr> &out) {
  std::string names, behind;
  bool halo = false;
  for (size_t i = 0; i < sg.size(); ++i) {
    auto *l = llvm::cast<ParLoopStmt>(out[i].get());
    const Unit &u = units[sg[i]];
    l->skew.member = true;
    l->skew.count = i == 0 ? unsigned(sg.size()) : 0;
    l->skew.lag = u.lag;
    l->skew.lead = u.lead;
    l->skew.trail = u.trail;
    l->skew.needsExtension = u.needsExtension;
    halo = halo || u.needsExtension;
    // Plain stores when another loop of the sweep reaches what it
    // writes: a later one reads it from the cache, or an earlier one
    // just brought its lines there (a store hits them; a streaming
    // store would evict them). bench/fusion: Poisson 8192^2 2.54 s
    // with streaming stores, 2.10 s without (1 thread).
    for (const AccessDescriptor &a : l->args)
      for (size_t j = 0; j < sg.size() && modeWrites(a.mode) && a.usesDat() &&
                         !l->skew.cached;
           ++j)
        if (j != i)
          for (const AccessDescriptor &o :
               llvm::cast<ParLoopStmt>(out[j].get())->args)
            if (o.usesDat() && o.dat == a.dat)
              l->skew.cached = true;
    names += (names.empty() ? "" : ", ") + shown(*l);
    if (i > 0)
      behind += "; " + shown(*l) + " " + std::to_string(u.lag) +
                (u.lag == 1 ? " row" : " rows") + " behind" +
                (lagWhy[sg[i]].empty() ? "" : " (" + lagWhy[sg[i]] + ")");
  }
  const ParLoopStmt &first = *c.loops[units[sg[0]].loops.front()];
  ctx.stats.add(PassName, "skewed", "skewed sweeps created");
  ctx.diags.remark(first.range,
                   "skewed " + std::to_string(sg.size()) + " loops (" + names +
                       ") into one sweep over " + first.block->name + behind +
                       (halo ? "; on more than one rank it runs as "
                               "one sweep only when its chain is "
                               "communication-avoiding (a later loop "
                               "reads beyond the rank's points what "
                               "an earlier one writes), else as "
                               "separate loops"
                             : ""),
                   PassName);
  std::vector<const ParLoopStmt *> others;
  for (size_t i = 1; i < sg.size(); ++i)
    others.push_back(c.loops[units[sg[i]].loops.front()]);
  noteOthers(ctx, PassName, first.range, others);
  changed = true;
}

void Fuser::placeGroup(Body &body, const LoopChain &c,
                       const std::vector<Unit> &units,
                       const std::vector<unsigned> &sg,
                       std::vector<StmtPtr> out,
                       std::map<size_t, std::vector<StmtPtr>> &replace) {
  const Unit &last = units[sg.back()];
  const size_t at = c.loopStmts[last.loops.back()];
  // The group runs where its last loop was, after the host statements
  // between its loops. A tape push right before its first loop that
  // hands a dat's storage over at that loop's prepare
  // (TapeStmt::overwritten) moves with it, when only host statements
  // and the group's own loops lie between: they touch no dat the push
  // saves before the group runs.
  const size_t firstAt = c.loopStmts[units[sg.front()].loops.front()];
  if (firstAt > 0 && firstAt < at) {
    auto *t = llvm::dyn_cast_or_null<TapeStmt>(body.stmts[firstAt - 1].get());
    bool moves = t && t->push &&
                 std::any_of(t->overwritten.begin(), t->overwritten.end(),
                             [](bool o) { return o; });
    std::set<size_t> mine;
    for (unsigned n : sg)
      for (unsigned l : units[n].loops)
        mine.insert(c.loopStmts[l]);
    for (size_t k = firstAt + 1; moves && k < at; ++k) {
      const Stmt *s = body.stmts[k].get();
      moves = mine.count(k) ||
              (s && (s->kind == StmtKind::Decl || s->kind == StmtKind::Assign));
    }
    if (moves) {
      out.insert(out.begin(), std::move(body.stmts[firstAt - 1]));
      replace[firstAt - 1]; // removed there
    }
  }
  replace[at] = std::move(out);
}

void Fuser::fuseBody(Function &host, Body &body) {
  std::vector<LoopChain> chains = prepareChains(host, body);
  // Statement index -> replacements (the fused loop, or a skewed group's
  // loops, at its last loop; nothing for the other loops, which go away).
  std::map<size_t, std::vector<StmtPtr>> replace;
  for (const LoopChain &c : chains) {
    // 1. Element fusion: units of loops fused at the same point.
    std::vector<Unit> units = elementUnits(host, c);
    // 2. Skewed sweeps: consecutive units over one block.
    // On the GPU instead (no skewed sweeps): stencil chains of two units
    // in one kernel (FuseTile.cpp).
    std::vector<std::string> lagWhy(units.size());
    const bool tiles = ctx.backend.stencilChainReach() > 0;
    std::vector<std::vector<unsigned>> skews =
        tiles ? tileGroups(host, c, units) : skewGroups(host, c, units, lagWhy);
    // 3. Build: fused loops, skewed groups at their last loop.
    for (const std::vector<unsigned> &sg : skews) {
      std::vector<StmtPtr> out = buildUnits(host, body, c, units, sg, replace);
      if (sg.size() > 1 && tiles)
        markTiled(c, units, sg, out);
      else if (sg.size() > 1)
        markSkewed(c, units, sg, lagWhy, out);
      placeGroup(body, c, units, sg, std::move(out), replace);
    }
  }
  if (!replace.empty()) {
    std::vector<StmtPtr> out;
    for (size_t i = 0; i < body.stmts.size(); ++i) {
      auto it = replace.find(i);
      if (it == replace.end())
        out.push_back(std::move(body.stmts[i]));
      else
        for (StmtPtr &s : it->second)
          out.push_back(std::move(s));
    }
    body.stmts = std::move(out);
    fixTapeOverwrites(body);
  }
  for (StmtPtr &s : body.stmts)
    if (s)
      forEachNestedBody(*s, [&](Body &b) { fuseBody(host, b); });
}

bool Fuser::run() {
  std::vector<Function *> hosts;
  for (auto &p : program.procs)
    hosts.push_back(p.get());
  if (program.main)
    hosts.push_back(program.main.get());
  for (Function *h : hosts)
    fuseBody(*h, h->body);
  return changed;
}

} // namespace opdc::fuse

namespace opdc {

bool fuseLoops(ir::Program &program, PassContext &ctx) {
  return fuse::Fuser(program, ctx).run();
}

} // namespace opdc
