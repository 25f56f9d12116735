// Group.cpp - The grouped halo exchange of a communication-avoiding chain
// and its cost-model geometry, dispatched to block and set dats (MPI).
// SPDX-License-Identifier: Apache-2.0
//
// exec/CommAvoid.cpp decides whether a chain runs communication-avoiding;
// here its halos are brought up to date before its first loop. Block dats:
// mpi/Structured.cpp, one message per neighbour per split dimension for
// all of them. Set dats are exchanged one by one, as deep as a plain loop
// would (one halo layer; multi-layer halos for sets are not built yet), so
// a chain over sets is correct but not yet communication-avoiding.
#include "mpi/Mpi.h"

#include "core/Dist.h"

namespace opdc::rt::dist {

void groupExchange(const std::vector<GroupEntry> &group, opd_loop *entry) {
  std::vector<GroupEntry> blocks;
  for (const GroupEntry &g : group) {
    if (g.dat->block) {
      blocks.push_back(g);
      continue;
    }
    if (g.dat->set && g.dat->set->partitioned && g.dat->haloValid == 0)
      exchangeSetDat(g.dat, entry);
  }
  if (!blocks.empty())
    groupBlockExchange(blocks, entry);
}

ChainGeometry chainGeometry(const std::vector<GroupEntry> &group) {
  ChainGeometry geo;
  blockChainGeometry(group, geo);
  return geo;
}

} // namespace opdc::rt::dist
