// Loop.h - Prepared parallel loops: chunks, plans and profile counters.
// SPDX-License-Identifier: Apache-2.0
//
// Execution:
//  * direct set loops (no indirect OPD_WRITE/OPD_RW/OPD_INC argument): the
//    set in chunks of DirectChunkSize elements, `omp parallel for
//    schedule(static)` over the chunks; chunk c is [c*4096, (c+1)*4096);
//  * set loops with indirect writes: the blocks of the loop's colouring plan
//    (exec/Plan.h), colour by colour, each colour an `omp for` over its
//    blocks; chunk index = block index. With --plan=super the plan's
//    super-block schedule instead: an `omp for` over the super-blocks, each
//    running its blocks' own elements in order, then the blocks' cross
//    elements colour by colour; chunk index = block index still (a block's
//    chunk runs its own runs, later its cross runs);
//  * block loops: chunks of whole outer-dimension indices (the last, largest
//    stride dimension), max(1, BlockChunkPoints / points per outer index)
//    of them per chunk (3D: up to Block3DChunkPoints points and at most
//    1/Block3DMinChunks of the planes, for the body's cache blocking);
//    recomputed when the range changes.
//
// On several MPI ranks (core/Dist.h) set loops run the rank's elements: the
// core first (chunks of [0, core), or the core plan) while halo messages
// are in flight, then the rest (and the exec halo's plan for loops with
// indirect writes); chunk indices continue across the parts. On one process
// the core is the whole set, so the chunks are exactly the ones above.
//
// Bytes moved per call, for the profile's GB/s (n = iterations, i.e. the set
// size or the points of a block range):
//  * each distinct dat reached directly or through a stencil: bytes per
//    element * n * f;
//  * each distinct dat reached through maps: bytes per element *
//    min(its set's size, n * k) * f, k = distinct (map, idx) pairs used;
//  * f = 2 when the dat is both read and written in the loop (OPD_RW,
//    OPD_INC, or separate read and write arguments), else 1;
//  * each distinct map (indirect or map argument): 4 * arity * n, twice when
//    a map argument is read and written;
//  * globals and reductions: nothing.
#ifndef OPDC_LIB_EXEC_LOOP_H
#define OPDC_LIB_EXEC_LOOP_H

#include "core/Objects.h"
#include "exec/Plan.h"

#include <cmath>
#include <string>
#include <vector>

namespace opdc::rt {
/// Two bodies of one loop, chosen by timing (opd_loop_streams,
/// opd_loop_scalar): the first call runs the `warmup` variant untimed (it
/// also pays for cold TLBs and caches), the next `trialsNeeded` alternate
/// the other variant and `warmup`, timed without their halo exchanges, and
/// the variant with the better best time stays (a tie keeps `warmup`).
struct TimedChoice {
  int trials = 0;  ///< trial calls so far, the warm-up included
  int choice = -1; ///< the variant that stays; -1 while undecided
  int trial = -1;  ///< the variant the running call times; -1: none
  double best[2] = {HUGE_VAL, HUGE_VAL}; ///< best seconds of variants 0, 1
  double exchange0 = 0; ///< the loop's exchange seconds when it began
  /// The variant this call runs: the choice, or the next trial's.
  int pick(int warmup, double exchangeSeconds);
  /// After a call that pick() made a trial of: records its time.
  void record(double seconds, double exchangeSeconds, int warmup,
              int trialsNeeded);
};
} // namespace opdc::rt

struct opd_loop {
  std::string name;
  /// Prepared while an adjoint re-ran primal steps (exec/Adjoint.h): its
  /// --profile row is rerunLoopName(name).
  bool rerun = false;
  /// "file.opd:12:3" from opd_loop_set_location ("" when never given), and
  /// the string it was copied from (a call with the same pointer copies
  /// nothing).
  std::string location;
  const char *locationSource = nullptr;
  opd_set *set = nullptr;     ///< set loops
  bool partitioned = false;   ///< set loops: set->partitioned when prepared
  opd_block *block = nullptr; ///< block loops
  std::vector<opd_arg> args;
  int ndims = 0;
  /// Block loops: the range asked for (global) and the clipped one run here.
  int64_t askedLo[3] = {0, 0, 0}, askedHi[3] = {0, 0, 0};
  int64_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  /// Communication avoidance (exec/CommAvoid.cpp): how far beyond the
  /// rank's points the loop runs (blocks: points per dimension below and
  /// above; sets: extLo[0] exec-halo layers); zero for plain loops.
  int64_t extLo[3] = {0, 0, 0}, extHi[3] = {0, 0, 0};
  bool extended() const {
    for (int d = 0; d < 3; ++d)
      if (extLo[d] || extHi[d])
        return true;
    return false;
  }
  int64_t begin = 0;     ///< first iteration index (outer dimension's lo)
  int64_t count = 0;     ///< iterations of the chunked index
  int64_t chunkSize = 1; ///< per chunk, except maybe the last
  int64_t nchunks = 0;
  /// Whether the CPU backend's body keeps one reduction partial per plane
  /// of the outermost dimension instead of one per chunk: loops over 3D
  /// blocks (opd_loop_partial_slots; codegen/llvm/LoopBody.cpp). Their
  /// sums do not depend on how the rows are split into body calls.
  bool partialsPerPlane() const { return block && ndims == 3; }
  /// Set loops on several ranks: exec halo layers run (lib/mpi/Halo.cpp):
  /// the extension asked for by opd_loop_extend_next (extLo[0]), at least
  /// 1 with indirect writes, else 0. When extended, the dirty bits of its
  /// writes follow the layers run (lib/mpi/Exchange.cpp).
  int64_t execLayers = 0;
  /// Loops without a plan run up to three segments of iterations, each in
  /// chunks of chunkSize numbered on from the previous segment's. Segment 0
  /// (the core: set loops, the set's core elements; block loops, the outer
  /// indices whose stencils reach no other rank's points) runs while halo
  /// messages are in flight, the others after. One process: one segment.
  struct Segment {
    int64_t begin = 0, end = 0, chunk0 = 0;
  };
  Segment segments[3];
  int nsegments = 0;
  opdc::rt::PlanEntry *plan = nullptr; ///< coloured loops
  /// Set loops with an indirect `out`/`inout`: whether the written maps
  /// were injective on its range when prepared (1: runs directly; 0: an
  /// ordered plan, exec/Plan.h); -1 for other loops.
  int injective = -1;
  /// Set by opd_loop_part_get: a backend runs the plan's parts (the
  /// colouring) itself, whatever the plan kind (the profile names what ran).
  mutable bool partsUsed = false;
  double bytesPerCall = 0;
  /// Calls whose body was told to stream (opd_loop_streams said 1): the
  /// profile's plan line names them.
  mutable int64_t streamedCalls = 0;
  /// Streaming chosen by timing (opd_loop_streams; variant 1 streams).
  mutable opdc::rt::TimedChoice stream;
  /// The scalar body (opd_loop_scalar; variant 1 is the scalar body):
  /// `hasScalar` once the generated code asked, `scalarCalls` the calls
  /// that ran it.
  mutable bool hasScalar = false;
  mutable int64_t scalarCalls = 0;
  mutable opdc::rt::TimedChoice scalar;
  /// When >= 0 at opd_loop_end, the seconds the two choices above record
  /// for this call instead of the loop's own time: a skewed sweep's loop
  /// (exec/Skew.cpp), whose time is the first loop's, gives the seconds
  /// its body calls took (summed over the threads; no exchange in them).
  double choiceSeconds = -1;
  /// Skewed sweeps (exec/Skew.cpp): the first loop of a sweep carries the
  /// time and the bytes of all its loops (bytesAdjust adds the others'
  /// bytes to it and takes them from them), and `note` says so in the
  /// profile's plan lines.
  double bytesAdjust = 0;
  std::string note;
  /// Skewed sweeps: the seconds this loop's body calls took in them
  /// (summed over the threads) and the sweeps it ran in, for the profile's
  /// plan line: a sweep's time is the first loop's, this is each loop's
  /// share of it.
  double sweepSeconds = 0;
  int64_t sweepCalls = 0;
  /// The first loop of a skewed sweep: whether it last ran as one sweep on
  /// every rank, why not, and what every rank knew alike when that was
  /// decided (lib/exec/Skew.cpp, sweepsHere).
  std::vector<int64_t> sweepKey;
  bool sweeps = true;
  std::string sweepWhy;
  /// Between opd_loop_begin and opd_loop_end: when the call began and
  /// whether halo messages are still in flight.
  double startTime = 0;
  bool running = false;
  bool inFlight = false;
  // Profile.
  int64_t calls = 0;
  double seconds = 0;
  // Halo exchanges before this loop (distributed memory): messages sent,
  // bytes sent, seconds spent waiting or packing.
  int64_t messages = 0;
  double exchangeBytes = 0;
  double exchangeSeconds = 0;
};

namespace opdc::rt {
/// Calls of a loop beyond the cache that opd_loop_streams times, streaming
/// and plain alternately after one untimed streaming call (the first call
/// of a loop also pays for cold TLBs and caches), before it keeps the
/// faster body by the best time of each.
constexpr int StreamTrials = 6;
/// Calls of a loop with a scalar body that opd_loop_scalar times, scalar
/// and vectorised alternately after one untimed vectorised call.
constexpr int ScalarTrials = 6;
/// Bytes a call of a loop over `n` iterations moves, by the rule above.
double loopBytes(int64_t n, int nargs, const opd_arg *args);
/// The last-level cache's bytes (OPD_LLC_BYTES, else detected, else
/// 32 MiB): opd_loop_streams compares a loop's bytes with it.
int64_t lastLevelCacheBytes();
/// -frepro-sum (Gather.cpp): adds the increments the body wrote into the
/// buffers of opd_loop_gather to their targets, in global element order;
/// called by the loop's end phase. forgetGathers frees the buffers.
void applyGathers(opd_loop *loop);
void forgetGathers();
/// The loop that opd_loop_begin checks against (one loop runs at a time);
/// a skewed sweep (exec/Skew.cpp) begins its loops one after the other,
/// clearing it in between, and sets it again before ending each.
void setActiveLoop(opd_loop *loop);
/// Forgets the loop that ended last (opd_reduce_global times its
/// reductions into it), before the loops are freed.
void forgetEndedLoop();
} // namespace opdc::rt
#endif
