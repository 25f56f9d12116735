// CommAvoid.cpp - Communication avoidance: a loop chain's halo exchanges
// become one grouped, deeper exchange before it, and its loops compute
// beyond each rank's points instead of waiting for messages.
// SPDX-License-Identifier: Apache-2.0
//
// What it does. For a loop chain (analysis/LoopChain.h) over one block,
// a plain run exchanges, before each loop, every dat the loop reads beyond
// the rank's points that a loop wrote since its last exchange: in a chain
// such as  loop a (u @ cross -> v); loop b (v @ cross -> w); loop c (w -> u)
// that is u before a and v before b, every time (two messages per
// neighbour). Communication avoidance (OP2-CA: Ekanayake, Reguly,
// Luporini, Mudalige, ICPP 2023; OPS's tiling does the same for blocks)
// instead exchanges u two points deep before the chain, and runs a one
// point beyond the rank's part: b then finds the v it reads next to the cut
// already computed, and the chain sends one message per neighbour. The
// depths come from backward dataflow over the chain: the last loop runs
// over its own points (e = 0); a loop that writes a dat which a later loop
// k reads r points away must run e_k + r beyond the rank's points; a dat
// the chain reads is exchanged before it as deep as its readers run plus
// reach (e_k + r). The extension is one depth in every dimension (a rank
// split along two dimensions computes the corners too), which keeps the
// runtime's validity of a halo one number.
//
// Why it is legal. A point beyond the rank's part is computed by the same
// kernel from the same inputs as on its owner: its inputs are either
// exchanged before the chain deep enough, or were themselves computed
// redundantly by an earlier loop of the chain (that is what the depths
// guarantee); so its value is bitwise the owner's, and the owned results
// are unchanged. The runtime enforces it besides (exec/CommAvoid.cpp,
// mpi/Structured.cpp): each loop still checks, before it runs, that its
// halos are valid as deep as it reads (the extension included) and
// exchanges what is not, so a chain whose halos were invalidated some other
// way costs a message, never a wrong answer. Loops with reductions are
// never extended (a redundant point would be counted twice); a block chain
// needing that is left alone, a set chain is cut after that loop and its
// two parts planned apart (setChain).
//
// When it pays is decided at run time, per execution of the chain
// (--comm-avoid=auto, the default with --mpi): the runtime evaluates
// OP2-CA's cost model with the network's latency and bandwidth (the target
// profile's `network` section, else defaults) and the real sizes of the
// rank's part, and runs the chain either way (exec/CommAvoid.cpp): after
// one measuring plain run, except a chain whose skewed sweep runs as one
// only when it avoids (below), which would be measured at its slowest.
// --comm-avoid=on forces it, off removes the pass's work. The IR shows the
// plan: `halo group` before the chain's first loop, `extend` on loops.
//
// Skewed sweeps (passes/loops/Fuse.cpp) in a chain it rewrites stay: a sweep
// exchanges every halo before any of its loops runs, and where a later
// loop of the sweep reads beyond the rank's points what an earlier one
// writes (`needs-extension`), the earlier loop's extension computes those
// points before the later loop's rows reach them (the sweep's lags order
// them as on one process). When the runtime runs the chain plain, such a
// sweep runs as separate loops (lib/exec/Skew.cpp).
//
// Chains over unstructured sets: setChain below, with the layers of
// chainSetHaloLayers (exec-halo layers, lib/mpi/Halo.cpp). Not yet: chains
// over several blocks or mixing sets and blocks, and loops that write at
// stencil offsets.
#include "passes/loops/CommAvoid.h"

#include "analysis/LoopAccess.h"
#include "analysis/LoopChain.h"

#include "ir/IR.h"
#include "passes/utils/BodyUtils.h"
#include "support/Diagnostics.h"
#include "target/TargetProfile.h"

#include "llvm/Support/Casting.h"

#include <algorithm>
#include <map>
#include <set>

namespace opdc {

using namespace ir;
using llvm::dyn_cast;

namespace {

constexpr const char *PassName = "comm-avoid";
constexpr const char *MissedName = "comm-avoid-missed";
/// How much deeper than the dats' declared halos (at least 2) a chain's
/// halos may be made.
constexpr int64_t MaxExtraDepth = 2;
/// How deep the halos of a chain that is one skewed sweep of time steps
/// may be made: one point a step for up to 16 steps of a one-point
/// stencil (-funroll-steps=16; eight by default).
constexpr int64_t MaxSweepDepth = 16;

std::string quoted(const std::string &s) { return "'" + s + "'"; }

bool reads(AccessMode m) { return modeReads(m) && !isReduction(m); }
bool writes(AccessMode m) { return modeWrites(m) && !isReduction(m); }

/// How far an access reaches beyond the element, in any direction.
int64_t reachOf(const ArgAccess &a) {
  int64_t r = 0;
  for (unsigned d = 0; d < MaxLoopDims; ++d)
    r = std::max({r, -a.lo[d], a.hi[d]});
  return r;
}

/// Per loop of the chain: the bytes per iteration of its dats that an
/// earlier loop of its skewed sweep reaches too, for a sweep that runs as
/// one only when the chain is communication-avoiding (a loop of it
/// needs-extension); 0 elsewhere. The plain run's measured loop times do
/// not show what such a sweep saves; the runtime's model counts these
/// bytes as coming from cache (lib/exec/CommAvoid.cpp).
/// Whether a skewed sweep of the chain runs as one only when the chain is
/// communication-avoiding (a loop of it needs-extension).
bool holdsExtensionSweep(const LoopChain &c) {
  return std::any_of(c.loops.begin(), c.loops.end(), [](const ParLoopStmt *l) {
    return l->skew.needsExtension;
  });
}

std::vector<int64_t> sweepCachedBytes(const LoopChain &c) {
  const size_t n = c.loops.size();
  std::vector<int64_t> cached(n, 0);
  for (size_t first = 0; first < n; ++first) {
    const unsigned count = c.loops[first]->skew.count;
    if (count < 2 || first + count > n)
      continue;
    bool needs = false;
    for (size_t l = first; l < first + count; ++l)
      needs = needs || c.loops[l]->skew.needsExtension;
    if (!needs)
      continue;
    std::set<const Dat *> seen;
    for (size_t l = first; l < first + count; ++l) {
      for (const AccessDescriptor &a : c.loops[l]->args)
        if (a.usesDat() && seen.count(a.dat))
          cached[l] += a.bytes;
      for (const AccessDescriptor &a : c.loops[l]->args)
        if (a.usesDat())
          seen.insert(a.dat);
    }
  }
  return cached;
}

class CommAvoider {
public:
  CommAvoider(Program &p, PassContext &c) : program(p), ctx(c) {}
  bool run();

private:
  Program &program;
  PassContext &ctx;
  bool changed = false;

  void body(Body &b);
  std::string whyNot(const LoopChain &c) const;
  void chain(const LoopChain &c);
  /// \p c is loops [offset, offset + c.loops.size()) of \p whole (itself
  /// when it was not cut): the plain run's exchanges are counted over
  /// \p whole, whose earlier loops leave dats dirty for the later ones.
  void setChain(const LoopChain &c, const LoopChain &whole, size_t offset);
  /// Attaches \p group to the chain's first loop and reports it.
  void commit(const LoopChain &c, std::shared_ptr<const HaloGroup> group,
              int64_t plainTotal, const std::string &what,
              const std::string &groupText, const std::string &runs);
};

std::string CommAvoider::whyNot(const LoopChain &c) const {
  if (c.loops.size() < 2)
    return "a single loop";
  if (!c.loops[0]->block)
    return ""; // set chains: chainSetHaloLayers says (setChain)
  const Block *block = c.loops[0]->block;
  for (size_t k = 0; k < c.loops.size(); ++k) {
    const ParLoopStmt &l = *c.loops[k];
    if (!l.block)
      return "loop " + quoted(l.kernel->name) + " runs over set " +
             quoted(l.set->name) + ", loop " +
             quoted(c.loops[0]->kernel->name) + " over a block";
    if (l.block != block)
      return "loops " + quoted(c.loops[0]->kernel->name) + " and " +
             quoted(l.kernel->name) + " run over different blocks";
    for (const AccessDescriptor &a : l.args)
      if (a.kind == ArgKind::MapDirect)
        return "loop " + quoted(l.kernel->name) + " uses a map";
  }
  for (const ChainDat &d : c.dats)
    for (const ChainAccess &a : d.accesses)
      if (writes(a.mode) && !a.centre)
        return "loop " + quoted(c.loops[a.loop]->kernel->name) + " writes " +
               quoted(d.dat->name) + " at a stencil offset";
  return "";
}

void CommAvoider::chain(const LoopChain &c) {
  const std::string why = whyNot(c);
  const bool needsExtension = holdsExtensionSweep(c);
  auto missed = [&](const std::string &text) {
    ctx.stats.add(PassName, "refused", "loop chains left as they were");
    ctx.diags.remark(c.loops.front()->range,
                     "loop chain at " + quoted(c.loops.front()->kernel->name) +
                         " not made communication-avoiding: " + text +
                         (needsExtension
                              ? "; its skewed sweep runs as separate loops "
                                "on more than one rank"
                              : ""),
                     MissedName);
  };
  if (!why.empty()) {
    if (c.loops.size() > 1)
      missed(why);
    return;
  }
  if (!c.loops[0]->block) {
    setChain(c, c, 0);
    return;
  }
  const size_t n = c.loops.size();
  const ChainExtensions plan = chainExtensions(c);
  const std::vector<int64_t> &ext = plan.ext;
  for (size_t l = 0; l < n; ++l) {
    if (ext[l] == 0)
      continue;
    for (const AccessDescriptor &a : c.loops[l]->args)
      if (a.kind == ArgKind::Reduction) {
        missed("loop " + quoted(c.loops[l]->kernel->name) +
               " reduces and would have to run " + std::to_string(ext[l]) +
               " points beyond each rank's part (each point would count "
               "twice)");
        return;
      }
  }
  // The plain run's exchanges: a dat a loop reads beyond its points is
  // exchanged when a loop wrote it since (in the steady state of a chain
  // run over and over, every dat the chain writes starts out written).
  std::set<const Dat *> dirty;
  for (const ChainDat &d : c.dats)
    if (d.written())
      dirty.insert(d.dat);
  std::vector<int32_t> plainCount(n, 0), plainDepth(n, 0);
  int64_t plainTotal = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (size_t l = 0; l < n; ++l) {
      std::set<const Dat *> exchanged;
      for (const ChainDat &d : c.dats)
        for (const ChainAccess &a : d.accesses) {
          if (a.loop != l || !reads(a.mode))
            continue;
          const int64_t r = reachOf(c.access[l].args[a.arg]);
          if (r > 0 && dirty.count(d.dat) && !exchanged.count(d.dat)) {
            exchanged.insert(d.dat);
            if (pass == 1) {
              ++plainCount[l];
              plainDepth[l] = std::max(plainDepth[l], int32_t(r));
              ++plainTotal;
            }
          }
        }
      for (const Dat *d : exchanged)
        dirty.erase(d);
      for (const ChainDat &d : c.dats)
        for (const ChainAccess &a : d.accesses)
          if (a.loop == l && writes(a.mode))
            dirty.insert(d.dat);
    }
  // The group: every dat a loop reads beyond the rank's points, as deep as
  // its readers run plus reach (dats the chain writes first are listed
  // too: the points of them outside their writer's range come from
  // before the chain; the runtime leaves out the halos still valid).
  auto group = std::make_shared<HaloGroup>();
  group->mode = ctx.commAvoid == CommAvoidMode::On ? HaloGroup::Mode::On
                                                   : HaloGroup::Mode::Auto;
  const unsigned dims = unsigned(c.loops[0]->block->dims);
  int64_t deepest = 0;
  std::string groupText;
  for (const ChainExtensions::Need &need : plan.needs) {
    HaloGroup::Entry e;
    e.dat = const_cast<Dat *>(need.dat);
    for (unsigned k = 0; k < dims; ++k)
      e.depth[k] = need.depth;
    group->dats.push_back(e);
    deepest = std::max(deepest, need.depth);
    groupText += (groupText.empty() ? "" : ", ") + quoted(need.dat->name) +
                 " " + std::to_string(need.depth) + " deep";
  }
  // Deep halos cost memory on every dat of the block, and redundant work
  // and bytes that grow with the depth; a chain of boundary loops, each
  // reading what the previous one wrote a few points away, would ask for
  // a halo many points deep to save messages that the runtime's range-aware
  // exchanges mostly skip anyway. Such chains are left alone.
  // A chain that is one skewed sweep of time steps (UnrollSteps.cpp,
  // Fuse.cpp) is not such a chain: its depth is the steps it runs times
  // their reach, and each further step of it saves a message and a pass
  // over the dats (docs/performance.md, "Eight steps a sweep on ranks
  // too"); the runtime's model still decides per run whether the deeper
  // exchange and the redundant rows pay (lib/exec/CommAvoid.cpp).
  int64_t declared = 2;
  for (const ChainDat &d : c.dats)
    for (unsigned k = 0; k < dims && k < d.dat->haloMinus.size(); ++k)
      declared = std::max({declared, d.dat->haloMinus[k], d.dat->haloPlus[k]});
  const bool oneSweep = n >= 2 && c.loops[0]->skew.count == n;
  const int64_t allowed =
      oneSweep ? std::max(declared + MaxExtraDepth, MaxSweepDepth)
               : declared + MaxExtraDepth;
  if (deepest > allowed) {
    missed("it would need halos " + std::to_string(deepest) +
           " points deep (the dats declare " + std::to_string(declared) +
           (oneSweep ? "; a skewed sweep's chain uses at most " +
                           std::to_string(allowed)
                     : "; at most " + std::to_string(MaxExtraDepth) +
                           " more are used") +
           ")");
    return;
  }
  if (plainTotal <= 1) {
    missed(plainTotal == 0
               ? "it exchanges no halo"
               : "it exchanges one halo already (nothing to group)");
    return;
  }
  const std::vector<int64_t> cached = sweepCachedBytes(c);
  std::string extText;
  for (size_t l = 0; l < n; ++l) {
    ParLoopStmt &loop = const_cast<ParLoopStmt &>(*c.loops[l]);
    for (unsigned k = 0; k < dims; ++k) {
      loop.extendLo[k] = ext[l];
      loop.extendHi[k] = ext[l];
    }
    deepest = std::max(deepest, ext[l]);
    HaloGroup::LoopCost cost;
    for (const AccessDescriptor &a : loop.args)
      if (a.usesDat())
        cost.bytes += a.bytes;
    cost.extension = ext[l];
    cost.exchanges = plainCount[l];
    cost.depth = plainDepth[l];
    cost.cached = cached[l];
    group->loops.push_back(cost);
    extText += (l ? ", " : "") + std::to_string(ext[l]);
  }
  program.blockHaloDepth = std::max(program.blockHaloDepth, deepest);
  commit(c, group, plainTotal, "loops", groupText,
         extText + " points beyond each rank's part");
}

// A chain over unstructured sets (issue 12, OP2-CA): each loop runs the
// exec-halo layers chainSetHaloLayers computes (analysis/LoopChain.h, the
// runtime's rules of lib/mpi/Exchange.cpp), the dats it lists are exchanged
// before the chain that many layers deep, and the sets get as many halo
// layers as the deepest loop runs (Program::haloLayers, lib/mpi/Halo.cpp).
void CommAvoider::setChain(const LoopChain &c, const LoopChain &whole,
                           size_t offset) {
  auto missed = [&](const std::string &text) {
    ctx.stats.add(PassName, "refused", "loop chains left as they were");
    ctx.diags.remark(c.loops.front()->range,
                     "loop chain at " + quoted(c.loops.front()->kernel->name) +
                         " not made communication-avoiding: " + text,
                     MissedName);
  };
  const ChainSetLayers r = chainSetHaloLayers(c);
  const size_t cut = size_t(r.reducingLoop) + 1;
  if (r.reducingLoop >= 0 && cut < c.loops.size() &&
      (cut > 1 || c.loops.size() - cut > 1)) {
    // A loop that reduces cannot run halo layers (a redundant element would
    // count twice), but it can end a chain: cut after it, the loops up to it
    // and those after it are planned apart (Airfoil unrolled: update's rms
    // between one iteration's loops and the next's), each as it was when
    // it was a chain of its own.
    ctx.stats.add(PassName, "cut", "loop chains cut after a reduction");
    ctx.diags.remark(c.loops.front()->range,
                     "loop chain at " + quoted(c.loops.front()->kernel->name) +
                         " cut after " +
                         quoted(c.loops[cut - 1]->kernel->name) + ": " +
                         r.notApplicable +
                         "; the loops up to it and after "
                         "it are planned apart",
                     MissedName);
    for (auto [first, last] :
         {std::pair{size_t(0), cut}, std::pair{cut, c.loops.size()}})
      if (last - first > 1)
        setChain(subChain(c, first, last), whole, offset + first);
    return;
  }
  if (!r.notApplicable.empty()) {
    missed(r.notApplicable);
    return;
  }
  // Under `auto` the chain is planned as under `on` and the runtime's model
  // decides. The K > 1 layers it asks for cost a plain run nothing in
  // messages or bytes: a plain exchange sends OP2's one-layer halo, which
  // lies first in the lists whatever K (half step 3, lib/mpi/Exchange.cpp);
  // only the partition builds and stores the deeper layers.
  const size_t n = c.loops.size();
  // The plain run's exchanges, by the runtime's dirty bits: every loop at
  // its own layers (1 with increments through maps, else 0), writes leaving
  // dats dirty; in the steady state of a chain run over and over, every
  // dat the chain writes starts out dirty. A part of a cut chain is counted
  // over the whole chain, in one pass from every dat it writes dirty: the
  // loops before the part leave dirty what they wrote, and a chain that
  // ends at a reduction's use is not run over and over alone (Airfoil's
  // second update, a chain of its own, writes q before the next).
  const bool cutPart = offset > 0 || n < whole.loops.size();
  constexpr int64_t All = INT64_MAX / 4;
  std::map<const Dat *, int64_t> valid;
  for (const ChainDat &d : whole.dats)
    valid[d.dat] = d.written() ? 0 : All;
  std::vector<int32_t> plainCount(n, 0);
  int64_t plainTotal = 0;
  for (int pass = cutPart ? 1 : 0; pass < 2; ++pass)
    for (size_t w = 0; w < whole.loops.size(); ++w) {
      const bool counted = pass == 1 && w >= offset && w < offset + n;
      int64_t x = 0;
      for (const AccessDescriptor &a : whole.loops[w]->args)
        if (a.kind == ArgKind::Indirect && writes(a.mode))
          x = 1;
      std::map<const Dat *, int64_t> need;
      for (const ChainDat &d : whole.dats)
        for (const ChainAccess &a : d.accesses)
          if (a.loop == w)
            need[d.dat] =
                std::max(need[d.dat], setAccessNeed(a.kind, a.mode, x));
      for (const auto &[d, v] : need)
        if (v > 0 && valid[d] < v) {
          valid[d] = All;
          if (counted) {
            ++plainCount[w - offset];
            ++plainTotal;
          }
        }
      for (const ChainDat &d : whole.dats)
        for (const ChainAccess &a : d.accesses)
          if (a.loop == w && writes(a.mode))
            valid[d.dat] = 0;
    }
  if (plainTotal <= 1) {
    missed(plainTotal == 0
               ? "it exchanges no halo"
               : "it exchanges one halo already (nothing to group)");
    return;
  }
  auto group = std::make_shared<HaloGroup>();
  group->mode = ctx.commAvoid == CommAvoidMode::On ? HaloGroup::Mode::On
                                                   : HaloGroup::Mode::Auto;
  std::string groupText;
  for (const ChainSetLayers::Exchange &e : r.exchanges) {
    HaloGroup::Entry g;
    g.dat = const_cast<Dat *>(e.dat);
    g.depth = {e.depth, 0, 0};
    group->dats.push_back(g);
    groupText += (groupText.empty() ? "" : ", ") + quoted(e.dat->name) + " " +
                 std::to_string(e.depth) + " layers";
  }
  std::string extText;
  for (size_t l = 0; l < n; ++l) {
    ParLoopStmt &loop = const_cast<ParLoopStmt &>(*c.loops[l]);
    bool reduces = false;
    HaloGroup::LoopCost cost;
    for (const AccessDescriptor &a : loop.args) {
      reduces = reduces || a.kind == ArgKind::Reduction;
      if (a.usesDat())
        cost.bytes += a.bytes;
    }
    // Every loop that runs halo layers is extended, also a loop with
    // increments at its usual one layer: the runtime then keeps what it
    // writes valid as deep as it ran, as the analysis assumes.
    if (!reduces)
      loop.extendLo[0] = r.layers[l];
    cost.extension = r.layers[l];
    cost.exchanges = plainCount[l];
    cost.depth = plainCount[l] > 0 ? 1 : 0;
    group->loops.push_back(cost);
    extText += (l ? ", " : "") + std::to_string(r.layers[l]);
  }
  program.haloLayers = std::max(program.haloLayers, r.setLayers);
  commit(c, group, plainTotal, "set loops",
         groupText.empty() ? std::string("none needed") : groupText,
         extText + " exec-halo layers");
}

void CommAvoider::commit(const LoopChain &c,
                         std::shared_ptr<const HaloGroup> group,
                         int64_t plainTotal, const std::string &what,
                         const std::string &groupText,
                         const std::string &runs) {
  const bool on = group->mode == HaloGroup::Mode::On;
  const_cast<ParLoopStmt &>(*c.loops[0]).haloGroup = std::move(group);
  changed = true;
  // Skewed sweeps (passes/loops/Fuse.cpp) in the chain stay: the sweep
  // exchanges every halo its loops read before any of them runs, and a loop
  // that reads beyond the rank's points what an earlier loop of the sweep
  // writes (needs-extension) finds those points computed by that loop,
  // which the depths above extend as far as the reader reaches.
  const bool sweeps = holdsExtensionSweep(c);
  ctx.stats.add(PassName, "chains", "loop chains made communication-avoiding");
  ctx.stats.add(PassName, "messages", "halo exchanges per neighbour saved",
                plainTotal - 1);
  std::string names;
  for (const ParLoopStmt *l : c.loops)
    names += (names.empty() ? "" : ", ") + quoted(l->kernel->name);
  ctx.diags.remark(c.loops.front()->range,
                   "loop chain of " + std::to_string(c.loops.size()) + " " +
                       what + " (" + names +
                       "): one grouped halo exchange before it (" + groupText +
                       ") instead of " + std::to_string(plainTotal) +
                       " exchanges per run; loops run " + runs + "; " +
                       (on       ? "always (--comm-avoid=on)"
                        : sweeps ? "the runtime's cost model decides at its "
                                   "first run"
                                 : "the runtime's cost model decides, after "
                                   "one measuring plain run") +
                       (sweeps ? "; its skewed sweep runs as one when the "
                                 "chain does, else as separate loops"
                               : ""),
                   PassName);
}

void CommAvoider::body(Body &b) {
  for (const LoopChain &c : findLoopChains(b))
    chain(c);
  for (StmtPtr &s : b.stmts)
    if (s)
      forEachNestedBody(*s, [&](Body &n) { body(n); });
}

bool CommAvoider::run() {
  if (ctx.commAvoid == CommAvoidMode::Off)
    return false;
  for (auto &p : program.procs)
    body(p->body);
  if (program.main)
    body(program.main->body);
  if (changed && ctx.target) {
    program.netLatencyUs = ctx.target->networkLatencyUs;
    program.netBandwidthGBs = ctx.target->networkBandwidthGBs;
    program.memBandwidthGBs = ctx.target->cpu.memoryBandwidthGBs;
  }
  return changed;
}

} // namespace

bool avoidCommunication(Program &program, PassContext &ctx) {
  return CommAvoider(program, ctx).run();
}

} // namespace opdc
