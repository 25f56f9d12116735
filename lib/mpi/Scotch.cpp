// Scotch.cpp - PT-Scotch's partition of the primary set's distributed graph
// (--partition=ptscotch, the default on several ranks).
// SPDX-License-Identifier: Apache-2.0
//
// Each rank passes its slice of the graph (global vertex numbers, base 0)
// to SCOTCH_dgraphBuild and SCOTCH_dgraphPart computes one part per rank
// with the default strategy for that many parts (SCOTCH_STRATQUALITY,
// 5% imbalance allowed), in a Scotch context set deterministic with a
// fixed random seed, so the same ranks give the same partition on every
// run.
#include "mpi/Scotch.h"

#include "core/Dist.h"

#include <mpi.h>
// ptscotch.h needs stdio's FILE and mpi.h first.
#include <cstdio>
#include <ptscotch.h>

#include <type_traits>

namespace opdc::rt::dist {
bool ptscotchParts(const Graph &g, std::vector<int32_t> &part,
                   std::string &why) {
  const std::size_t local = g.xadj.size() - 1;
  part.assign(local, 0);
  int ok = 1;
  if (g.n > INT32_MAX && sizeof(SCOTCH_Num) < 8) {
    why = "more than 2^31 vertices for this PT-Scotch's 32-bit numbers";
    ok = 0;
  }
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!ok) {
    if (why.empty())
      why = "another rank's graph is too large for PT-Scotch";
    return false;
  }
  // Scotch takes the arrays without copying them; the arcs are passed as
  // they are when SCOTCH_Num is their 4-byte type (Debian's libptscotch),
  // else copied.
  std::vector<SCOTCH_Num> vert(g.xadj.begin(), g.xadj.end()), out(local + 1, 0);
  std::vector<SCOTCH_Num> copied;
  SCOTCH_Num *edges = nullptr;
  if constexpr (std::is_same_v<SCOTCH_Num, int32_t>) {
    edges = const_cast<SCOTCH_Num *>(g.adj.data());
  } else {
    copied.assign(g.adj.begin(), g.adj.end());
    edges = copied.data();
  }
  // A context asking for deterministic runs and a fixed random seed (the
  // library is threaded; without it two runs may differ).
  SCOTCH_Context context;
  SCOTCH_Dgraph graph, bound;
  SCOTCH_Strat strat;
  int rc = SCOTCH_contextInit(&context);
  if (rc == 0)
    rc = SCOTCH_contextOptionSetNum(&context, SCOTCH_OPTIONNUMDETERMINISTIC, 1);
  if (rc == 0)
    rc = SCOTCH_contextOptionSetNum(&context, SCOTCH_OPTIONNUMRANDOMFIXEDSEED,
                                    1);
  // One thread per rank: the ranks already share the node's cores.
  if (rc == 0)
    rc = SCOTCH_contextThreadSpawn(&context, 1, nullptr);
  if (rc == 0) {
    SCOTCH_contextRandomSeed(&context, 12345);
    rc = SCOTCH_dgraphInit(&graph, MPI_COMM_WORLD);
  }
  if (rc == 0) {
    rc = SCOTCH_dgraphBuild(
        &graph, 0, SCOTCH_Num(local), SCOTCH_Num(local), vert.data(),
        vert.data() + 1, nullptr, nullptr, SCOTCH_Num(g.adj.size()),
        SCOTCH_Num(g.adj.size()), edges, nullptr, nullptr);
    SCOTCH_stratInit(&strat);
    const SCOTCH_Num parts = SCOTCH_Num(ranks());
    if (rc == 0)
      rc = SCOTCH_stratDgraphMapBuild(&strat, SCOTCH_STRATQUALITY, parts,
                                      parts, 0.05);
    const bool bind =
        rc == 0 && SCOTCH_dgraphInit(&bound, MPI_COMM_WORLD) == 0 &&
        SCOTCH_contextBindDgraph(&context, &graph, &bound) == 0;
    if (rc == 0)
      rc = bind ? SCOTCH_dgraphPart(&bound, parts, &strat, out.data()) : 1;
    if (bind)
      SCOTCH_dgraphExit(&bound);
    SCOTCH_stratExit(&strat);
    SCOTCH_dgraphExit(&graph);
  }
  SCOTCH_contextExit(&context);
  ok = rc == 0;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!ok) {
    why = "SCOTCH_dgraphPart failed";
    return false;
  }
  for (std::size_t i = 0; i < local; ++i)
    part[i] = int32_t(out[i]);
  return true;
}
} // namespace opdc::rt::dist
