// FuseTile.cpp - The fuse pass's stencil chains on the GPU: a loop that
// reads at stencil offsets what the loop before it wrote, in one kernel.
// SPDX-License-Identifier: Apache-2.0
//
// For a backend with TargetQueries::stencilChainReach() > 0 (CUDA), two
// consecutive units P; C of a chain (each a loop or an element-fused
// group) over one 2-D or 3-D block, in any ranges (the kernel's tiles
// cover both), where C reads at stencil offsets a dat P writes,
//   loop smooth over grid (u @ cross -> v); loop grad over grid (v @ cross ->
//   g)
// become one kernel: each thread block computes P over its tile of points
// grown by C's reach (the recomputed halo) into shared memory, waits for
// its threads (__syncthreads), then runs C over its tile reading P's values
// there (codegen/cuda/CUDATileChain.cpp). The pair stays two loops in the
// IR, marked as a skewed group of 2 (ParLoopStmt::skew: count 2 on P,
// member on both, lag 0), which only the CUDA backend, which has no skewed
// sweeps, reads that way.
//
// Legal when, besides P and C each being element-parallel (rule 1 of
// Fuse.cpp):
//   t1. no loop of either unit reduces: P's recomputed points would count
//       twice, and C's partial sums would follow the tiles, not the blocks
//       of its own launch (the unfused build's and the CPU's bits);
//   t2. C writes no dat P reaches: another thread block recomputes P at
//       this block's points, and would read C's new values there (only a
//       barrier across the whole grid orders them);
//   t3. P reads no dat it writes: recomputing a halo point, it would read
//       what the thread block owning that point may already have written;
//   t4. not under MPI (--mpi, or --comm-avoid other than off: the source
//       `opdc build --mpi` compiles): C's reads beyond the rank's points
//       need the halo exchange of what P wrote between the two loops;
//   t5. C reads what P writes at most stencilChainReach() points away in
//       each dimension, and P's values over the grown tile fit in
//       TargetQueries::ChainSharedBytes of shared memory;
//   t6. the host statements between them use no variable P's arguments or
//       range use (rule 5: P runs at C's place).
// Then every point of P is computed from the values it read unfused (t2,
// t3: nothing it reads changes during the kernel), P's writes outside the
// tile go to shared memory or scratch only, C reads exactly P's values
// (P's range: the shared copies; elsewhere the dat's own, which nothing
// writes), and no loop reduces: the results are bitwise the unfused ones.
// CloverLeaf's advec_mom_node_flux_x (over [-2, nx + 2]) and
// advec_mom_node_mass_x (over [-1, nx + 2], reading node_flux at -1) are
// such a pair, in x and in y.
#include "passes/loops/FuseImpl.h"

#include "ir/IRPrinter.h"
#include "ir/LoopNames.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include "llvm/Support/Casting.h"

#include <algorithm>
#include <set>

namespace opdc::fuse {

namespace {

/// Whether chain loop \p l is one of \p loops.
bool inUnit(const std::vector<unsigned> &loops, unsigned l) {
  return std::find(loops.begin(), loops.end(), l) != loops.end();
}

/// The points of a chain access (its stencil's, or the centre).
std::vector<std::vector<int64_t>> chainPoints(const ChainAccess &a,
                                              unsigned dims) {
  if (a.kind == ArgKind::Stencil && a.stencil && !a.stencil->points.empty())
    return a.stencil->points;
  return {std::vector<int64_t>(dims, 0)};
}

} // namespace

std::string Fuser::whyNotTile(const Function &host, const LoopChain &c,
                              const std::vector<Unit> &units, unsigned p,
                              bool &chain) {
  chain = false;
  const Unit &up = units[p], &uc = units[p + 1];
  const ParLoopStmt &lp = *c.loops[up.loops.front()];
  const ParLoopStmt &lc = *c.loops[uc.loops.front()];
  if (!up.fusable || !uc.fusable || !lp.block || lp.block != lc.block)
    return "-";
  const unsigned dims = lp.block->dims;
  // Is it a stencil chain at all: C reads at an offset what P writes?
  const ChainAccess *why = nullptr;
  const Dat *whyDat = nullptr;
  for (const ChainDat &d : c.dats)
    for (const ChainAccess &x : d.accesses)
      if (inUnit(uc.loops, x.loop) && !x.centre && !why)
        for (const ChainAccess &y : d.accesses)
          if (inUnit(up.loops, y.loop) && modeWrites(y.mode)) {
            why = &x;
            whyDat = d.dat;
          }
  if (!why)
    return "-";
  chain = true;
  const std::string P = unitText(c, up.loops), C = unitText(c, uc.loops);
  if (dims < 2)
    return "a 1-D block (only 2-D and 3-D blocks get tiles)";
  // Several ranks (as FuseSkew.cpp decides it: --mpi, or a chain the
  // comm-avoid pass may rewrite).
  if (ctx.mpi || ctx.commAvoid != CommAvoidMode::Off)
    return C + " reads " + quoted(whyDat->name) + " " + howReached(*why) +
           ", which " + P +
           " writes: under MPI its halo exchange runs between them";
  for (const std::vector<unsigned> *u : {&up.loops, &uc.loops})
    for (unsigned l : *u) {
      if (c.access[l].race != RaceClass::Parallel)
        return shown(*c.loops[l]) + " is not element-parallel";
      for (const AccessDescriptor &a : c.loops[l]->args)
        if (a.kind == ArgKind::Reduction)
          return shown(*c.loops[l]) + " reduces into " +
                 quoted(a.var >= 0 ? host.vars[unsigned(a.var)].name : "?") +
                 ": a reduction keeps the blocks of a launch of its own";
    }
  // t2, t3, t5: the dats.
  const unsigned reach = ctx.backend.stencilChainReach();
  uint64_t shared = 0;
  for (const ChainDat &d : c.dats) {
    const ChainAccess *pw = nullptr, *pr = nullptr, *cw = nullptr,
                      *cFar = nullptr;
    std::vector<int64_t> lo(dims, 0), hi(dims, 0);
    for (const ChainAccess &x : d.accesses) {
      bool inP = inUnit(up.loops, x.loop), inC = inUnit(uc.loops, x.loop);
      if (inP && modeWrites(x.mode))
        pw = pw ? pw : &x;
      if (inP && x.mode != AccessMode::Write)
        pr = pr ? pr : &x;
      if (inC && modeWrites(x.mode))
        cw = cw ? cw : &x;
      if (!inC)
        continue;
      for (const std::vector<int64_t> &pt : chainPoints(x, dims))
        for (unsigned k = 0; k < dims && k < pt.size(); ++k) {
          lo[k] = std::min(lo[k], pt[k]);
          hi[k] = std::max(hi[k], pt[k]);
          if ((pt[k] > int64_t(reach) || -pt[k] > int64_t(reach)) && !cFar)
            cFar = &x;
        }
    }
    const std::string dat = quoted(d.dat->name);
    if (cw && (pw || pr))
      return C + " writes " + dat + ", which " + P +
             (pw ? " writes" : " reads") + ": other thread blocks recompute " +
             P + " at this block's points (a barrier across the whole grid)";
    if (pw && pr)
      return P + " reads " + dat +
             ", which it writes: recomputing another thread block's points, "
             "it could read that block's new values";
    if (!pw || !d.accesses.size())
      continue;
    bool cReads = false;
    for (const ChainAccess &x : d.accesses)
      cReads = cReads || inUnit(uc.loops, x.loop);
    bool offCentre = false;
    for (unsigned k = 0; k < dims; ++k)
      offCentre = offCentre || lo[k] || hi[k];
    if (!cReads || !offCentre)
      continue;
    if (cFar)
      return C + " reads " + dat + " " + howReached(*cFar) +
             ", beyond the reach of " + std::to_string(reach) +
             " points a fused kernel recomputes";
    const unsigned *tile =
        dims == 2 ? TargetQueries::ChainTile2D : TargetQueries::ChainTile3D;
    uint64_t points = 1;
    for (unsigned k = 0; k < dims; ++k)
      points *= uint64_t(tile[k]) + uint64_t(hi[k] - lo[k]);
    shared += points * d.dat->dim() * scalarBytes(d.dat->scalar());
  }
  if (shared > TargetQueries::ChainSharedBytes)
    return "the values of " + P + " over a tile and its halo take " +
           std::to_string(shared) + " bytes of shared memory, more than " +
           std::to_string(TargetQueries::ChainSharedBytes);
  // t6. Host statements between P and C.
  std::set<unsigned> slots;
  for (unsigned l : up.loops)
    for (unsigned v : loopSlotsUsed(*c.loops[l]))
      slots.insert(v);
  size_t from = c.loopStmts[up.loops.back()],
         to = c.loopStmts[uc.loops.front()];
  for (size_t h : c.hostStmts) {
    if (h <= from || h >= to)
      continue;
    for (unsigned v : hostSlotsUsed(*c.body->stmts[h]))
      if (slots.count(v))
        return "the host statement at line " +
               std::to_string(ctx.diags.sources()
                                  .lineAndColumn(c.body->stmts[h]->range.begin)
                                  .first) +
               " between them uses " + quoted(host.vars[v].name);
  }
  return "";
}

std::vector<std::vector<unsigned>>
Fuser::tileGroups(const Function &host, const LoopChain &c,
                  const std::vector<Unit> &units) {
  std::vector<std::vector<unsigned>> groups;
  for (unsigned n = 0; n < units.size(); ++n) {
    if (!units[n].fusable)
      continue;
    bool chain = false;
    std::string why = n + 1 < units.size()
                          ? whyNotTile(host, c, units, n, chain)
                          : std::string("-");
    if (why.empty()) {
      groups.push_back({n, n + 1});
      ++n;
      continue;
    }
    if (chain) {
      const ParLoopStmt &lc = *c.loops[units[n + 1].loops.front()];
      ctx.stats.add(PassName, "tile-refused", "stencil chains not tiled");
      ctx.diags.remark(lc.range,
                       "loop " + unitText(c, units[n + 1].loops) +
                           " not fused with " + unitText(c, units[n].loops) +
                           " into one kernel with a recomputed halo: " + why,
                       MissedName);
    }
    groups.push_back({n});
  }
  return groups;
}

void Fuser::markTiled(const LoopChain &c, const std::vector<Unit> &units,
                      const std::vector<unsigned> &sg,
                      std::vector<StmtPtr> &out) {
  auto *p = llvm::cast<ParLoopStmt>(out[0].get());
  auto *q = llvm::cast<ParLoopStmt>(out[1].get());
  p->skew.member = q->skew.member = true;
  p->skew.count = 2;
  // The reach (for the remark): C's furthest point of a dat P writes.
  std::set<const Dat *> written;
  for (const AccessDescriptor &a : p->args)
    if (a.usesDat() && modeWrites(a.mode))
      written.insert(a.dat);
  int64_t reach = 0;
  std::string dats;
  for (const AccessDescriptor &a : q->args) {
    if (!a.usesDat() || !written.count(a.dat))
      continue;
    int64_t far = 0;
    for (const std::vector<int64_t> &pt : pointsOf(a))
      for (int64_t o : pt)
        far = std::max(far, o < 0 ? -o : o);
    reach = std::max(reach, far);
    if (far > 0 && dats.find(quoted(a.dat->name)) == std::string::npos)
      dats += (dats.empty() ? "" : ", ") + quoted(a.dat->name);
  }
  const ParLoopStmt &first = *c.loops[units[sg[0]].loops.front()];
  ctx.stats.add(PassName, "tiled", "stencil chains made one kernel");
  ctx.diags.remark(first.range,
                   "fused 2 loops (" + shown(*p) + ", " + shown(*q) +
                       ") into one kernel over " + first.block->name +
                       " with a recomputed halo: " + shown(*q) + " reads " +
                       dats + " up to " + std::to_string(reach) +
                       (reach == 1 ? " point" : " points") + " away, which " +
                       shown(*p) +
                       " writes; each thread block computes it over its tile "
                       "and that reach into shared memory",
                   PassName);
  noteOthers(ctx, PassName, first.range, {c.loops[units[sg[1]].loops.front()]});
  changed = true;
}

} // namespace opdc::fuse
