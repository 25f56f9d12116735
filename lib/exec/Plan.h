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
//
// The super-block schedule (--plan=super, SuperPlan below) runs the same
// blocks in another order: the plan's range is cut into a few contiguous
// super-blocks of whole blocks; an element whose written targets are
// reached by no other super-block ("own") runs in the first phase, every
// super-block in element order on one thread, super-blocks concurrently;
// the others ("cross": one of their targets is shared with another
// super-block) run afterwards, colour by colour in the plan's blocks. The
// colouring's passes fetch the mesh once per colour when it does not fit
// in the cache (docs/performance.md); the first phase fetches it once.
#ifndef OPDC_LIB_EXEC_PLAN_H
#define OPDC_LIB_EXEC_PLAN_H

#include "core/Objects.h"

#include <cstdint>
#include <vector>

namespace opdc::rt {

/// Elements per block of a colouring plan. Measured with
/// tests/runtime/PlanBench.cpp (Airfoil's res_calc on OP2's 1.44M-edge
/// mesh, 2 cores): blocks of 64-128 need 5 colours and run slower on
/// one thread (colour order scatters the accesses); 256..4096 are within 5%
/// of each other and of a plain serial loop (docs/performance.md, "Figures
/// from code comments"). 512 keeps about 700 blocks per colour there, enough to
/// balance many more threads.
constexpr int64_t PlanBlockSize = 512;

/// One written indirect access: targets map[i * arity + idx].
struct WrittenAccess {
  opd_map *map = nullptr;
  int32_t idx = 0;
  friend bool operator==(const WrittenAccess &,
                         const WrittenAccess &) = default;
};

/// One range of consecutive elements run by one call of the body.
struct ElementRun {
  int64_t begin = 0, end = 0;
  friend bool operator==(const ElementRun &, const ElementRun &) = default;
};

/// The super-block schedule over a colouring plan's blocks (see above).
/// Block b's own elements are ownRuns[ownOffsets[b] .. ownOffsets[b+1]),
/// its cross elements crossRuns[crossOffsets[b] .. crossOffsets[b+1]),
/// both ascending; their chunk index is the block's, so a block's
/// reduction partial sums its own elements, then its cross ones. Phase 1:
/// super-block k runs the own runs of blocks [superFirst[k],
/// superFirst[k+1]) in order. Phase 2: the blocks with cross elements of
/// the plan's colour c are crossBlocks[crossColourOffsets[c] ..
/// crossColourOffsets[c+1]), ascending, and run like the plan's colours.
/// A target receives its increments in element order within phase 1, then
/// in the plan's block order: the same for any thread count.
struct SuperPlan {
  int32_t nsuper = 0; ///< 0: no super-block schedule (or no elements)
  std::vector<int64_t> superFirst;
  std::vector<ElementRun> ownRuns, crossRuns;
  std::vector<int64_t> ownOffsets, crossOffsets;
  std::vector<int64_t> crossColourOffsets, crossBlocks;
  int64_t crossElements = 0;
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
  /// With --plan=super (getPlan): the super-block schedule of these blocks.
  SuperPlan super;
};

/// How loops with indirect writes run: colour by colour, or by super-blocks
/// (--plan=, environment variable OPD_PLAN; opd_rt_init). Super is the
/// default: on meshes larger than the cache it fetches about the compulsory
/// bytes where the colouring fetches 1.6x (docs/performance.md).
enum class PlanKind { Colour, Super };
constexpr PlanKind DefaultPlanKind = PlanKind::Super;
PlanKind planKind();
void setPlanKind(PlanKind kind);

/// Super-blocks of a plan of `nblocks` blocks: OPD_SUPERBLOCKS when set
/// (at most nblocks), else max(8, processors), at most one per
/// MinBlocksPerSuper blocks and at least 1 (0 for no blocks). Never the
/// thread count, so that results do not depend on it.
constexpr int64_t MinBlocksPerSuper = 8;
int32_t superBlockCount(int64_t nblocks);

/// The super-block schedule of `nsuper` super-blocks over plan `p` (built
/// for `written`): super-block k is blocks [k * nblocks / nsuper,
/// (k+1) * nblocks / nsuper).
SuperPlan buildSuperPlan(const Plan &p, int32_t nsuper,
                         const std::vector<WrittenAccess> &written);

/// Builds the plan of a set of `setSize` elements for the written accesses
/// (their maps must come from that set). Checks the maps' indices first
/// (checkMapIndices).
Plan buildPlan(int64_t setSize, int64_t blockSize,
               const std::vector<WrittenAccess> &written);
/// The plan of elements [first, last) only.
Plan buildPlan(int64_t first, int64_t last, int64_t blockSize,
               const std::vector<WrittenAccess> &written);

/// Whether no two elements of [0, count) of `set` reach one target through
/// the accesses `written` (maps into one set compared together; one element
/// reaching a target twice is allowed). Loops with indirect `out`/`inout`
/// run directly when it holds (docs/decisions/0280-...). Cached per set,
/// sorted accesses and count; recomputed when a map changed (its version).
bool writesInjective(opd_set *set, std::vector<WrittenAccess> written,
                     int64_t count);
/// Number of injectivity checks computed so far (tests check the cache).
int64_t injectivityChecks();

/// The ordered plan of elements [first, last) of `set` for indirect
/// `out`/`inout` through maps that are not injective: blocks of one
/// element; element e's colour is one more than the highest colour of the
/// elements before it in global order (opd_set::globalIds) that reach one
/// of its targets. Colours run in order, so every target sees its writers
/// in ascending global element number, as the sequential loop does, and
/// elements of one colour reach disjoint targets.
Plan buildOrderedPlan(const opd_set *set, int64_t first, int64_t last,
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
  /// Ordered (buildOrderedPlan; part of the key): the loop writes through a
  /// map that is not injective with `out` or `inout`. One plan covers the
  /// whole range, in `plan` on one process and in `rest` (after the halo
  /// exchanges) on several ranks; the other parts are empty.
  bool ordered = false;
  /// A number no other build of any plan had (opd_loop_part.generation).
  uint64_t generation = 0;
  /// planKind() when built: the parts carry super-block schedules when
  /// Super.
  PlanKind kind = DefaultPlanKind;
  /// True when no map of the key changed since the plan was built (and
  /// the plan kind is still the one it was built for).
  bool current() const;
};

/// The cached plan for (set, written), built on first use or when stale.
/// `written` need not be sorted or unique.
PlanEntry *getPlan(opd_set *set, std::vector<WrittenAccess> written,
                   int64_t haloEnd = -1, bool ordered = false);
/// Rebuilds `entry` if a map changed.
void refreshPlan(PlanEntry &entry);
/// Number of plans built so far (tests check the cache with it).
int64_t plansBuilt();
void releasePlans();

} // namespace opdc::rt
#endif
