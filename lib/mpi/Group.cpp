// Group.cpp - The grouped halo exchange of a communication-avoiding chain
// and its cost-model geometry, dispatched to block and set dats (MPI).
// SPDX-License-Identifier: Apache-2.0
//
// exec/CommAvoid.cpp decides whether a chain runs communication-avoiding;
// here its halos are brought up to date before its first loop. Block dats:
// mpi/Structured.cpp, one message per neighbour per split dimension for
// all of them. Set dats: mpi/Exchange.cpp (groupSetExchange), depth[0]
// exec-halo layers (mpi/Halo.cpp), all of them in one message per
// neighbour, left in flight while the chain's first loop runs its core.
#include "mpi/Mpi.h"

#include "core/Dist.h"

namespace opdc::rt::dist {

namespace {
// The set dats of a group, as groupSetExchange takes them.
void setPart(const std::vector<GroupEntry> &group, std::vector<opd_dat *> &dats,
             std::vector<int64_t> &depth) {
  for (const GroupEntry &g : group)
    if (g.dat->set) {
      dats.push_back(g.dat);
      depth.push_back(g.depth[0]);
    }
  // Before the first set loop: partition now (collective, as that loop
  // would), so that the halos exist.
  if (!dats.empty())
    partitionSets();
}
} // namespace

void groupExchange(const std::vector<GroupEntry> &group, opd_loop *entry) {
  std::vector<GroupEntry> blocks;
  for (const GroupEntry &g : group)
    if (g.dat->block)
      blocks.push_back(g);
  std::vector<opd_dat *> sets;
  std::vector<int64_t> depth;
  setPart(group, sets, depth);
  if (!sets.empty())
    groupSetExchange(entry, int(sets.size()), sets.data(), depth.data());
  if (!blocks.empty())
    groupBlockExchange(blocks, entry);
}

ChainGeometry chainGeometry(const std::vector<GroupEntry> &group) {
  ChainGeometry geo;
  blockChainGeometry(group, geo);
  std::vector<opd_dat *> sets;
  std::vector<int64_t> depth;
  setPart(group, sets, depth);
  if (!sets.empty())
    setChainGeometry(int(sets.size()), sets.data(), depth.data(), geo);
  return geo;
}

} // namespace opdc::rt::dist
