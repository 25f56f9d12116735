// Objects.h - The runtime's sets, maps, dats and blocks.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_LIB_CORE_OBJECTS_H
#define OPDC_LIB_CORE_OBJECTS_H

#include "opd_rt.h"

#include <cstdint>
#include <string>
#include <vector>

struct opd_set {
  std::string name;
  /// Elements stored on this rank: [0, owned) its own, [owned, execSize)
  /// the exec halo (other ranks' elements that reach one of ours through a
  /// map: loops with indirect increments run them too), [execSize, size)
  /// the non-exec halo (read only). On one rank all four are the global
  /// size. See lib/mpi/Halo.cpp.
  int64_t size = 0;
  int64_t globalSize = 0; ///< what size(set) means to the program
  int64_t owned = 0;
  int64_t execSize = 0;
  /// Exec halo layers (communication avoidance, lib/mpi/Halo.cpp): layer l
  /// is [execEnd[l - 1], execEnd[l]), execEnd[0] = owned, execEnd[1] =
  /// execSize, execEnd[K] the start of the non-exec halo; running l layers
  /// is the prefix [0, execEnd[l]). Empty until the partition.
  std::vector<int64_t> execEnd;
  /// [0, core): owned elements whose maps reach only owned elements (loops
  /// run them while halo messages are in flight).
  int64_t core = 0;
  bool partitioned = false;
  /// Before the partition on several ranks, a set read from a file is
  /// stored as this rank's contiguous slice of its global numbering
  /// (lib/mpi/Slices.cpp): size is the slice's, maps hold global indices.
  bool sliced = false;
  /// Global index of each stored element (empty: the identity).
  std::vector<int64_t> globalIds;
};

struct opd_map {
  std::string name;
  opd_set *from = nullptr;
  opd_set *to = nullptr;
  int arity = 1;
  int32_t *data = nullptr; ///< from->size * arity entries, 64-byte aligned
  /// Bumped whenever a loop may write the map (a map-direct out argument):
  /// colouring plans and index checks built on an older version are stale.
  uint64_t version = 0;
  /// The version whose indices were last checked against `to` (~0: never).
  uint64_t checkedVersion = ~uint64_t(0);
  /// opd_map_values once the target set is renumbered: global indices, and
  /// the version they were computed for.
  std::vector<int32_t> values;
  uint64_t valuesVersion = ~uint64_t(0);
};

struct opd_block {
  std::string name;
  int dims = 1;
  // The block points this rank owns (core/Dist.h): [ownLo[d], ownHi[d]) in
  // global indices, unbounded on a side where the rank is at the edge of
  // the rank grid (edgeLo/edgeHi), so that edge ranks own the halos beyond
  // the block's boundary too. Serially: everything, every side an edge.
  bool decomposed = false;
  int64_t ownLo[3] = {INT64_MIN / 4, INT64_MIN / 4, INT64_MIN / 4};
  int64_t ownHi[3] = {INT64_MAX / 4, INT64_MAX / 4, INT64_MAX / 4};
  bool edgeLo[3] = {true, true, true};
  bool edgeHi[3] = {true, true, true};
};

struct opd_dat {
  std::string name;
  opd_set *set = nullptr;     ///< set dats
  opd_block *block = nullptr; ///< block dats
  int type = OPD_F64;         ///< opd_scalar
  int dim = 1;                ///< components per element
  int bytes = 8;              ///< bytes per component
  /// The first stored point (first halo point). Set dats: 64-byte
  /// aligned. Block dats: placed so that the rank's first interior point
  /// of dimension 0 is 64-byte aligned in every row (rows are padded,
  /// stride[1] >= stored[0]; Mesh.cpp's paddedRow).
  void *data = nullptr;
  int64_t elements = 0; ///< allocated elements: halos and row padding included
  // Block dats, one entry per block dimension (unused entries: 0 / 1).
  int ndims = 0;
  int64_t size[3] = {0, 0, 0};
  int64_t haloMinus[3] = {0, 0, 0};
  int64_t haloPlus[3] = {0, 0, 0};
  int64_t base[3] = {0, 0, 0};
  int64_t stride[3] = {1, 1, 1}; ///< in elements; stride[0] == 1
  // Local storage of a block dat in global indices: dimension d holds
  // [first[d], first[d] + stored[d]); the rank owns [ownFirst, ownLast),
  // the rest is halo (the dat's declared halo at the block's edges, a copy
  // of a neighbour's points, `depth` deep, between ranks).
  int64_t first[3] = {0, 0, 0};
  int64_t stored[3] = {1, 1, 1};
  int64_t ownFirst[3] = {0, 0, 0};
  int64_t ownLast[3] = {1, 1, 1};
  int64_t depth[3] = {0, 0, 0};
  // Halo state between ranks (dirty bits): the depth up to which the copies
  // of neighbours' points are current, and whether the corners are too.
  // A loop writing the dat sets haloValid to 0. Set dats: the number of
  // exec halo layers whose copies are current (INT64_MAX / 4: all, the
  // non-exec halo too); lib/mpi/Exchange.cpp.
  int64_t haloValid = INT64_MAX / 4;
  bool cornersValid = true;

  int64_t elementBytes() const { return int64_t(bytes) * dim; }
  /// Interior points (set size for set dats).
  int64_t interiorPoints() const;
  /// "dat 'q' on set 'cells'" / "dat 'u' on block 'grid'".
  std::string describe() const;
};

namespace opdc::rt {
/// Registers (and takes ownership of) a new object.
opd_set *newSet();
opd_map *newMap();
opd_dat *newDat();
opd_block *newBlock();

/// Checks every index of `map` against its target set (once per version);
/// fails naming the map, the first bad index and its position, and `file`
/// when the map came from one (nullptr otherwise).
void checkMapIndices(opd_map *map, const char *file);

/// Every object created so far, in creation order.
std::vector<opd_set *> allSets();
std::vector<opd_map *> allMaps();
std::vector<opd_dat *> allDats();

/// Copies the points of the global-index box [lo, hi) (one entry per block
/// dimension) between a block dat's local storage and `buf`, packed with
/// dimension 0 fastest. The box must lie inside the local storage.
void copyBox(opd_dat *dat, const int64_t *lo, const int64_t *hi, char *buf,
             bool toDat);
} // namespace opdc::rt
#endif
