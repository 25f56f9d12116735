// Plan.h - Block-colouring plans for loops with indirect writes.
// SPDX-License-Identifier: Apache-2.0
//
// Like OP2's OpenMP backend: the loop's set is cut into contiguous blocks of
// PlanBlockSize elements; two blocks conflict when they reach the same
// element of a target set through any written (map, idx) pair (all maps
// into one set share it, whatever the dat); blocks are coloured greedily in
// block order (first free colour), so no two blocks of a colour conflict.
// The plan depends only on the set size and the maps' contents, never on
// the thread count.
#ifndef OPDC_LIB_EXEC_PLAN_H
#define OPDC_LIB_EXEC_PLAN_H

#include "core/Objects.h"

#include <cstdint>
#include <vector>

namespace opdc::rt {

/// Elements per block of a colouring plan. Measured with
/// tests/runtime/PlanBench.cpp (Airfoil's res_calc on OP2's 1.44M-edge
/// mesh, 2 cores): blocks of 64-128 need 5 colours and run 1.6x slower on
/// one thread (colour order scatters the accesses); 256..4096 are within 5%
/// of each other and of a plain serial loop (about 15 ms on one thread,
/// 7.3 ms on two). 512 keeps about 700 blocks per colour there, enough to
/// balance many more threads.
constexpr int64_t PlanBlockSize = 512;

/// One written indirect access: targets map[i * arity + idx].
struct WrittenAccess {
  opd_map *map = nullptr;
  int32_t idx = 0;
  friend bool operator==(const WrittenAccess &,
                         const WrittenAccess &) = default;
};

struct Plan {
  int64_t first = 0;   ///< elements [first, setSize); block b starts at
                       ///< first + b * blockSize
  int64_t setSize = 0;
  int64_t blockSize = 0;
  int64_t nblocks = 0;
  int32_t ncolours = 0;
  /// Blocks of colour c are blocks[colourOffsets[c] .. colourOffsets[c+1]),
  /// in ascending block order.
  std::vector<int64_t> colourOffsets;
  std::vector<int64_t> blocks;
  std::vector<int32_t> blockColour; ///< per block
};

/// Builds the plan of a set of `setSize` elements for the written accesses
/// (their maps must come from that set). Checks the maps' indices first
/// (checkMapIndices).
Plan buildPlan(int64_t setSize, int64_t blockSize,
               const std::vector<WrittenAccess> &written);
/// The plan of elements [first, last) only.
Plan buildPlan(int64_t first, int64_t last, int64_t blockSize,
               const std::vector<WrittenAccess> &written);

/// A cached plan: keyed by the set and its sorted written accesses, rebuilt
/// when one of the maps changed (opd_map::version).
struct PlanEntry {
  opd_set *set = nullptr;
  std::vector<WrittenAccess> key;
  std::vector<uint64_t> versions; ///< of key[i].map when built
  /// End of the `halo` plan: execSize (one exec layer), or the end of
  /// more layers for a loop extended by communication avoidance; part of
  /// the key.
  int64_t haloEnd = 0;
  /// On several ranks a set has up to three plans, run one after the
  /// other: `plan` for [0, core) (elements that reach no halo element, run
  /// while halo messages are in flight), `rest` for [core, owned) and
  /// `halo` for the exec halo [owned, haloEnd). On one process `plan`
  /// covers everything and the others are empty.
  Plan plan;
  Plan rest;
  Plan halo;
  /// Exec layers 2.. of a loop extended by communication avoidance:
  /// [execSize, haloEnd), run after `halo` (its own plan, so that the
  /// first layer's blocks and colours, and with them the order in which
  /// owned elements receive their increments, stay those of a plain run).
  Plan deep;
  /// A number no other build of any plan had (opd_loop_part.generation).
  uint64_t generation = 0;
  /// True when no map of the key changed since the plan was built.
  bool current() const;
};

/// The cached plan for (set, written), built on first use or when stale.
/// `written` need not be sorted or unique.
PlanEntry *getPlan(opd_set *set, std::vector<WrittenAccess> written,
                   int64_t haloEnd = -1);
/// Rebuilds `entry` if a map changed.
void refreshPlan(PlanEntry &entry);
/// Number of plans built so far (tests check the cache with it).
int64_t plansBuilt();
void releasePlans();

} // namespace opdc::rt
#endif
