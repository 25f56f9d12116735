// FuseSkew.cpp - The fuse pass's skewed sweeps: which loops over one
// block may run as one wavefront.
// SPDX-License-Identifier: Apache-2.0
//
// Fuse.cpp's file comment says what a skewed sweep is and why it is legal;
// this file holds the check (whyNotSkew: each loop's lag behind the sweep,
// from the offsets at which it reads what earlier loops write) and whether
// two units share a dat, which decides a bridging unit.
#include "passes/loops/FuseImpl.h"

#include "passes/utils/BodyUtils.h"

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

namespace {

/// The points at which a block access reaches its dat: its stencil's, or
/// the element's own.
std::vector<std::vector<int64_t>> accessPoints(const ChainAccess &a,
                                               unsigned dims) {
  if (a.kind == ArgKind::Stencil && a.stencil && !a.stencil->points.empty())
    return a.stencil->points;
  return {std::vector<int64_t>(dims, 0)};
}

/// "at offset (0, 1) of stencil 'cross'", or "" at the element itself.
std::string atPoint(const ChainAccess &a, const std::vector<int64_t> &pt) {
  if (std::all_of(pt.begin(), pt.end(), [](int64_t v) { return v == 0; }))
    return "";
  return " at offset " + offsetText(pt) +
         (a.stencil ? " of stencil " + quoted(a.stencil->name) : "");
}

} // namespace

std::string unitText(const LoopChain &c, const std::vector<unsigned> &loops) {
  std::string n;
  for (unsigned l : loops)
    n += (n.empty() ? "" : "+") + c.loops[l]->kernel->name;
  return quoted(userLoopName(n));
}

std::string Fuser::whyNotSkew(const Function &host, const LoopChain &c,
                              const std::vector<Unit> &units,
                              const std::vector<unsigned> &group, unsigned next,
                              int64_t &lag, int64_t &lead, int64_t &trail,
                              bool &needsExtension, std::string &because,
                              bool bridged) {
  auto unitName = [&](const Unit &u) { return unitText(c, u.loops); };
  const Unit &u = units[next];
  const std::string bName = unitName(u);
  auto varName = [&](unsigned v) { return quoted(host.vars[v].name); };
  // Any unit may reduce (the runtime runs a later reducing unit in whole
  // chunks), but not read a value an earlier one reduces into: that value
  // is known only after the sweep.
  std::set<unsigned> reduced;
  for (unsigned k : group)
    for (unsigned l : units[k].loops)
      for (const AccessDescriptor &a : c.loops[l]->args)
        if (a.kind == ArgKind::Reduction && a.var >= 0)
          reduced.insert(unsigned(a.var));
  for (unsigned l : u.loops)
    for (const AccessDescriptor &a : c.loops[l]->args) {
      if (a.kind == ArgKind::GlobalRead && a.value)
        for (unsigned v : slotsIn(*a.value))
          if (reduced.count(v))
            return bName + " reads " + varName(v) +
                   ", which a loop before it reduces into";
    }
  // Host statements between the loops run before the group: none may use
  // a variable of a loop of the group before it.
  std::vector<unsigned> loops;
  for (unsigned k : group)
    loops.insert(loops.end(), units[k].loops.begin(), units[k].loops.end());
  loops.insert(loops.end(), u.loops.begin(), u.loops.end());
  for (size_t h : c.hostStmts) {
    if (h <= c.loopStmts[loops.front()] || h >= c.loopStmts[loops.back()])
      continue;
    std::set<unsigned> before;
    for (unsigned l : loops)
      if (c.loopStmts[l] < h)
        for (unsigned v : loopSlotsUsed(*c.loops[l]))
          before.insert(v);
    for (unsigned v : hostSlotsUsed(*c.body->stmts[h]))
      if (before.count(v))
        return "the host statement at line " +
               std::to_string(ctx.diags.sources()
                                  .lineAndColumn(c.body->stmts[h]->range.begin)
                                  .first) +
               " between them uses " + varName(v);
  }
  // The rows each earlier unit must have run first (file comment).
  const unsigned dims = c.loops[u.loops.front()]->block->dims;
  std::set<unsigned> mine(u.loops.begin(), u.loops.end());
  bool shares = false;
  lag = lead = trail = 0;
  needsExtension = false;
  because.clear();
  for (unsigned k : group) {
    std::set<unsigned> theirs(units[k].loops.begin(), units[k].loops.end());
    const std::string kName = unitName(units[k]);
    bool conflict = false;
    int64_t dmin = 0, dmax = 0;
    std::string why;
    for (const ChainDat &d : c.dats)
      for (const ChainAccess &x : d.accesses) {
        if (!mine.count(x.loop))
          continue;
        for (const ChainAccess &y : d.accesses) {
          if (!theirs.count(y.loop))
            continue;
          shares = true;
          if (!modeWrites(x.mode) && !modeWrites(y.mode))
            continue;
          const std::string dat = quoted(d.dat->name);
          if (x.kind == ArgKind::Indirect || y.kind == ArgKind::Indirect)
            return bName + " and " + kName + " reach " + dat + " through a map";
          // (--comm-avoid=on without --mpi plans as under MPI, for
          // --emit=ir.)
          const bool ranks = ctx.mpi || ctx.commAvoid != CommAvoidMode::Off;
          if (ranks && modeWrites(y.mode) && !x.centre) {
            if (ctx.commAvoid == CommAvoidMode::Off)
              return bName + " reads " + dat + " " + howReached(x) +
                     ", which " + kName +
                     " writes: under MPI with --comm-avoid=off that read "
                     "needs a halo exchange between them";
            needsExtension = true;
          }
          for (const std::vector<int64_t> &pm : accessPoints(x, dims))
            for (const std::vector<int64_t> &pk : accessPoints(y, dims)) {
              const int64_t D = pm[dims - 1] - pk[dims - 1];
              if (!conflict || D > dmax) {
                why = modeWrites(x.mode)
                          ? bName + " writes " + dat + ", which " + kName +
                                (modeWrites(y.mode) ? " writes" : " reads") +
                                atPoint(y, pk)
                          : bName + " reads " + dat + atPoint(x, pm) +
                                ", which " + kName + " writes";
              }
              dmin = conflict ? std::min(dmin, D) : D;
              dmax = conflict ? std::max(dmax, D) : D;
              conflict = true;
            }
        }
      }
    if (!conflict)
      continue;
    if (units[k].lag + dmax > lag) {
      lag = units[k].lag + dmax;
      because = why;
    }
    lead = std::max(lead, units[k].lead - dmin);
    trail = std::max(trail, units[k].trail + dmax);
  }
  if (!shares && !bridged)
    return bName + " shares no dat with the loops before it";
  return "";
}

/// Whether a loop of unit \p a and a loop of unit \p b reach a common dat.
bool shareDat(const LoopChain &c, const std::vector<unsigned> &a,
              const std::vector<unsigned> &b) {
  for (const ChainDat &d : c.dats) {
    bool inA = false, inB = false;
    for (const ChainAccess &x : d.accesses) {
      inA = inA || std::find(a.begin(), a.end(), x.loop) != a.end();
      inB = inB || std::find(b.begin(), b.end(), x.loop) != b.end();
    }
    if (inA && inB)
      return true;
  }
  return false;
}

} // namespace opdc::fuse
