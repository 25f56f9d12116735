// Pool.h - The runtime's own threads for the chunks of a loop.
// SPDX-License-Identifier: Apache-2.0
//
// runTasks(n, ...) runs tasks 0 .. n-1 (a loop's chunks, blocks of one
// colour, super-blocks, a sweep's parts; the pieces of a large
// allocation's zero fill, core/Memory.cpp) on the calling thread and the
// pool's workers: each thread runs its own contiguous share of the tasks
// (the same share call after call, so their data stay in its core's
// cache), then takes what is left of the others', and the call returns
// when every task has run. Unlike an OpenMP region it never waits for a
// worker that has not started: a worker that the scheduler left off the
// CPU (another process on its core) loses its share to the others, so on
// a busy machine the caller runs what the others do not reach. Waiting is
// a short spin, then a futex (core/Pool.cpp). Results do not depend on
// which thread runs a task: chunks and their reduction slots are fixed by
// the loop, not the thread.
#ifndef OPDC_LIB_EXEC_POOL_H
#define OPDC_LIB_EXEC_POOL_H

#include <cstdint>

namespace opdc::rt {
using PoolTask = void (*)(void *ctx, int64_t task);
/// Runs task(ctx, k) for k in [0, n), on up to omp_get_max_threads()
/// threads when `parallel`, else on the calling thread in order. Calls
/// from inside a task, and calls while failures are captured (core/
/// Runtime.h, CaptureFailures: they throw), run on the calling thread.
void runTasks(int64_t n, bool parallel, PoolTask task, void *ctx);
/// runTasks with a callable f(int64_t k).
template <class F> void runTasks(int64_t n, bool parallel, F &&f) {
  runTasks(
      n, parallel, [](void *ctx, int64_t k) { (*static_cast<F *>(ctx))(k); },
      const_cast<void *>(static_cast<const void *>(&f)));
}
/// Loops that move fewer bytes per call than this run on one thread
/// (OPD_PARALLEL_BYTES, else a default): the cost of handing their chunks
/// to other threads would be a large part of their time, and all of it
/// when a worker's core is busy. Chunks stay the same either way.
double parallelBytes();
} // namespace opdc::rt
#endif
