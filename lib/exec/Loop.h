// Loop.h - Prepared parallel loops: chunks, plans and profile counters.
// SPDX-License-Identifier: Apache-2.0
//
// Execution:
//  * direct set loops (no indirect OPD_WRITE/OPD_RW/OPD_INC argument): the
//    set in chunks of DirectChunkSize elements, `omp parallel for
//    schedule(static)` over the chunks; chunk c is [c*4096, (c+1)*4096);
//  * set loops with indirect writes: the blocks of the loop's colouring plan
//    (exec/Plan.h), colour by colour, each colour an `omp for` over its
//    blocks; chunk index = block index;
//  * block loops: chunks of whole outer-dimension indices (the last, largest
//    stride dimension), max(1, BlockChunkPoints / points per outer index)
//    of them per chunk; recomputed when the range changes.
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

#include <string>
#include <vector>

struct opd_loop {
  std::string name;
  opd_set *set = nullptr;     ///< set loops
  bool partitioned = false;   ///< set loops: set->partitioned when prepared
  opd_block *block = nullptr; ///< block loops
  std::vector<opd_arg> args;
  int ndims = 0;
  /// Block loops: the range asked for (global) and the clipped one run here.
  int64_t askedLo[3] = {0, 0, 0}, askedHi[3] = {0, 0, 0};
  int64_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  int64_t begin = 0;     ///< first iteration index (outer dimension's lo)
  int64_t count = 0;     ///< iterations of the chunked index
  int64_t chunkSize = 1; ///< per chunk, except maybe the last
  int64_t nchunks = 0;
  /// Loops without a plan: the first coreCount iterations (set loops: the
  /// set's core) are chunks [0, coreChunks), run while halo messages are
  /// in flight; the other chunks cover the rest. Block loops: everything.
  int64_t coreCount = 0;
  int64_t coreChunks = 0;
  opdc::rt::PlanEntry *plan = nullptr; ///< coloured loops
  double bytesPerCall = 0;
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
/// Bytes a call of a loop over `n` iterations moves, by the rule above.
double loopBytes(int64_t n, int nargs, const opd_arg *args);
} // namespace opdc::rt
#endif
