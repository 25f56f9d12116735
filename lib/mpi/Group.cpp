// Group.cpp - The communication-avoidance entry points (issue 12):
// opd_rt_halo_depth, opd_loop_extend_next and opd_halo_group (MPI).
// SPDX-License-Identifier: Apache-2.0
//
// A loop chain planned by the compiler (compiler/analysis/LoopChain.h,
// chainSetHaloLayers) exchanges its dats once, deeper, before the chain
// (opd_halo_group: every dat in one message per neighbour), then runs
// each loop over extra halo layers (opd_loop_extend_next), recomputing
// there what the owners compute, so that no loop of the chain needs a
// message. Unstructured sets: the layers are built by mpi/Halo.cpp, the
// exchanges and dirty bits are mpi/Exchange.cpp's. Structured blocks: the
// lead's side (mpi/Structured.cpp); here a clear "not yet".
//
// Without MPI (opd_rt, core/Serial.cpp) the three calls do nothing; on
// one rank they change nothing either (no set is partitioned).
#include "mpi/Mpi.h"

#include "core/Dist.h"
#include "core/Runtime.h"
#include "exec/Loop.h"

namespace opdc::rt::dist {
namespace {
int64_t layers = 1;
} // namespace

int64_t setHaloLayers() { return layers; }

void setSetHaloLayers(int64_t k) {
  // Every rank builds the same halos: the call must come before the sets.
  if (!allSets().empty() && k != layers)
    failf("opd_rt_halo_depth(%lld, ...) after set '%s' was created: call it "
          "at the start of main, before any set exists",
          (long long)k, allSets().front()->name.c_str());
  layers = k;
}
} // namespace opdc::rt::dist

using namespace opdc::rt;

extern "C" {

void opd_rt_halo_depth(int64_t set_layers, int64_t block_depth) {
  if (set_layers < 1 || set_layers > 16)
    failf("opd_rt_halo_depth: %lld halo layers for sets (expected 1 to 16)",
          (long long)set_layers);
  dist::setSetHaloLayers(set_layers);
  if (block_depth > 2)
    failf("opd_rt_halo_depth: block halos deeper than 2 points are not yet "
          "implemented (asked for %lld)",
          (long long)block_depth);
}

void opd_loop_extend_next(const int64_t *lo, const int64_t *hi) {
  LoopExtension &x = nextExtension();
  x.pending = true;
  for (int d = 0; d < 3; ++d) {
    x.lo[d] = lo ? lo[d] : 0;
    x.hi[d] = hi ? hi[d] : 0;
  }
}

void opd_halo_group(opd_loop **cache, const char *name, int n,
                    opd_dat *const *dats, const int64_t *depth) {
  opd_loop *entry = profileEntry(cache, name);
  ++entry->calls;
  if (n <= 0)
    return;
  if (!dats || !depth)
    failf("internal error: opd_halo_group '%s' lacks its dats or depths",
          entry->name.c_str());
  std::vector<opd_dat *> sets;
  std::vector<int64_t> setDepth;
  for (int i = 0; i < n; ++i) {
    if (!dats[i])
      failf("internal error: opd_halo_group '%s': dat %d is null",
            entry->name.c_str(), i);
    if (dats[i]->block)
      failf("opd_halo_group '%s': grouped exchanges of block dats ('%s') "
            "are not yet implemented",
            entry->name.c_str(), dats[i]->name.c_str());
    sets.push_back(dats[i]);
    setDepth.push_back(depth[3 * i]);
  }
  // Before the first set loop the sets are not partitioned yet: do it now
  // (collective, as at that loop), so that the chain's first loop finds
  // its halos current.
  if (dist::ranks() > 1)
    dist::partitionSets();
  if (dist::ranks() > 1)
    dist::groupSetExchange(entry, int(sets.size()), sets.data(),
                           setDepth.data());
}

} // extern "C"
