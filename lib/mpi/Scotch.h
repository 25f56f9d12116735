// Scotch.h - The primary set's distributed graph and PT-Scotch's partition
// of it (mpi/Partition.cpp, mpi/Scotch.cpp or mpi/NoScotch.cpp).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_LIB_MPI_SCOTCH_H
#define OPDC_LIB_MPI_SCOTCH_H

#include <cstdint>
#include <string>
#include <vector>

namespace opdc::rt::dist {
/// A graph of n vertices stored as slices: this rank's vertices
/// [lo, lo + xadj.size() - 1), vertex lo + i adjacent to the global
/// vertices adj[xadj[i] .. xadj[i + 1]) (n is below 2^31: the
/// partitioner's limit; 4-byte targets keep the graph small while the
/// partitioner runs beside the mesh's slices).
struct Graph {
  int64_t n = 0, lo = 0;
  std::vector<int64_t> xadj;
  std::vector<int32_t> adj;
};
/// PT-Scotch's partition of `g` into one part per rank: part[i] for vertex
/// lo + i. False, with `why`, when this build has no PT-Scotch or it fails.
/// Collective.
bool ptscotchParts(const Graph &g, std::vector<int32_t> &part,
                   std::string &why);
} // namespace opdc::rt::dist
#endif
