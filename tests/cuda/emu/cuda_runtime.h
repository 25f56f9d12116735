// cuda_runtime.h - A CPU stand-in for the CUDA runtime, for tests only.
// SPDX-License-Identifier: Apache-2.0
//
// tests/cuda/emulate.py compiles the CUDA source opdc generates with a
// plain C++ compiler against this header instead of CUDA's, after turning
// each `kernel<<<grid, block>>>(args)` into `opd_emu::launch(grid, block,
// [&] { kernel(args); })`. A launch runs its blocks one after the other and
// the threads of a block as fibers (ucontext) on the calling thread: each
// runs until __syncthreads() or its end, then the next; a round ends when
// all have arrived, so the barrier holds as on a GPU. Fibers rather than
// std::threads: a block of OS threads waits for the scheduler at every
// start and barrier, which on a loaded 2-core machine made the emulated
// runs wait, not compute. So the generated kernels, the device runtime
// (lib/cuda/opd_cuda.cuh: device copies, layouts, thread colours, block
// reductions) and the host code run on any machine, and their results can
// be compared with the CPU backend's. Device memory is host memory;
// __constant__ and __shared__ variables are ordinary statics (blocks never
// overlap). It checks the logic, not the speed or the memory model.
//
// Streams and events (the device tape, lib/cuda/opd_cuda_tape.cuh): work
// on the default stream runs when it is issued, as above; work on a
// created stream is queued and runs as late as CUDA allows, only when
// something waits for it (cudaStreamWaitEvent on the default stream,
// cudaStreamSynchronize, cudaEventSynchronize, cudaDeviceSynchronize, and
// cudaFree/cudaFreeHost, which synchronise the device). So a copy on a
// side stream that nothing orders before a kernel overwriting its source
// reads the overwritten values, and a restore that does not wait for a
// spill's event reads a buffer the spill has not written: ordering bugs
// give wrong numbers instead of passing. (Work on the default stream
// cannot run late here; each real GPU run checks that direction too.)
#ifndef OPD_EMU_CUDA_RUNTIME_H
#define OPD_EMU_CUDA_RUNTIME_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include <ucontext.h>

#define __host__
#define __device__
#define __global__
#define __constant__
#define __shared__ static
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __restrict__ __restrict

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct uint3 {
  unsigned x, y, z;
};
inline thread_local uint3 threadIdx, blockIdx;
inline thread_local dim3 blockDim, gridDim;

namespace opd_emu {
inline std::mutex &atomics() {
  static std::mutex m;
  return m;
}
// One block's threads as fibers; `scheduler` is the launch's own context.
struct Fiber {
  ucontext_t ctx;
  std::unique_ptr<char[]> stack;
  bool done = false;
};
inline constexpr size_t fiber_stack = 256 * 1024;
inline thread_local ucontext_t scheduler;
inline thread_local Fiber *current = nullptr;
inline thread_local std::function<void()> *current_body = nullptr;

inline void fiber_main() {
  (*current_body)();
  current->done = true; // returns to `scheduler` (uc_link)
}

template <class F> void launch(dim3 g, dim3 b, F &&body) {
  const unsigned n = b.x * b.y * b.z;
  std::function<void()> fn = body;
  std::vector<Fiber> fibers(n);
  for (auto &f : fibers)
    f.stack = std::make_unique<char[]>(fiber_stack);
  for (unsigned bz = 0; bz < g.z; ++bz)
    for (unsigned by = 0; by < g.y; ++by)
      for (unsigned bx = 0; bx < g.x; ++bx) {
        for (auto &f : fibers) {
          f.done = false;
          getcontext(&f.ctx);
          f.ctx.uc_stack.ss_sp = f.stack.get();
          f.ctx.uc_stack.ss_size = fiber_stack;
          f.ctx.uc_link = &scheduler;
          makecontext(&f.ctx, fiber_main, 0);
        }
        // Rounds: every fiber not done runs to its next __syncthreads() or
        // its end.
        for (bool running = true; running;) {
          running = false;
          for (unsigned t = 0; t < n; ++t) {
            Fiber &f = fibers[t];
            if (f.done)
              continue;
            threadIdx = {t % b.x, (t / b.x) % b.y, t / (b.x * b.y)};
            blockIdx = {bx, by, bz};
            blockDim = b;
            gridDim = g;
            current = &f;
            current_body = &fn;
            swapcontext(&scheduler, &f.ctx);
            running |= !f.done;
          }
        }
      }
}
} // namespace opd_emu

inline void __syncthreads() {
  swapcontext(&opd_emu::current->ctx, &opd_emu::scheduler);
}
[[noreturn]] inline void __trap() { std::abort(); }

typedef int cudaError_t;
enum {
  cudaSuccess = 0,
  cudaErrorLaunchFailure = 719,
  cudaErrorIllegalInstruction = 715,
  cudaErrorAssert = 710
};
enum cudaMemcpyKind {
  cudaMemcpyHostToDevice,
  cudaMemcpyDeviceToHost,
  cudaMemcpyDeviceToDevice
};
inline const char *cudaGetErrorString(cudaError_t) { return "emulated"; }
inline cudaError_t cudaGetDeviceCount(int *n) {
  *n = 1;
  return 0;
}
inline cudaError_t cudaSetDevice(int) { return 0; }
inline cudaError_t cudaGetLastError() { return 0; }
inline cudaError_t cudaDeviceSynchronize();
inline cudaError_t cudaMalloc(void *p, size_t bytes) {
  *static_cast<void **>(p) = std::calloc(1, bytes);
  return 0;
}
inline cudaError_t cudaFree(void *p);
inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n,
                              cudaMemcpyKind) {
  std::memcpy(d, s, n);
  return 0;
}

// A created stream: its queued operations, run in order when waited for.
namespace opd_emu {
struct Stream {
  std::deque<std::function<void()>> queued;
  uint64_t issued = 0, done = 0; // operations ever queued, ever run
  void run_to(uint64_t n) {
    while (done < n && !queued.empty()) {
      std::function<void()> op = std::move(queued.front());
      queued.pop_front();
      ++done;
      op();
    }
  }
};
inline std::vector<Stream *> &streams() {
  static std::vector<Stream *> all;
  return all;
}
inline void run_all() {
  for (Stream *s : streams())
    s->run_to(s->issued);
}
struct Event {
  Stream *stream = nullptr; // where last recorded (null: the default)
  uint64_t at = 0;          // the operations before it there
};
// An operation on stream s: now on the default stream, else queued.
inline void issue(Stream *s, std::function<void()> op) {
  if (!s)
    return op();
  s->queued.push_back(std::move(op));
  ++s->issued;
}
} // namespace opd_emu
typedef opd_emu::Stream *cudaStream_t;
typedef opd_emu::Event *cudaEvent_t;
enum { cudaStreamNonBlocking = 1, cudaEventDisableTiming = 2 };
enum { cudaErrorNotReady = 600 };
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned) {
  *s = new opd_emu::Stream();
  opd_emu::streams().push_back(*s);
  return 0;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  if (s)
    s->run_to(s->issued);
  return 0;
}
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned) {
  *e = new opd_emu::Event();
  return 0;
}
inline cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete e;
  return 0;
}
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  e->stream = s;
  e->at = s ? s->issued : 0;
  return 0;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  if (e->stream)
    e->stream->run_to(e->at);
  return 0;
}
inline cudaError_t cudaEventQuery(cudaEvent_t e) {
  return e->stream && e->stream->done < e->at ? cudaErrorNotReady : 0;
}
// The wait takes the event as recorded now (a later record does not count).
inline cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e,
                                       unsigned) {
  opd_emu::Stream *on = e->stream;
  const uint64_t at = e->at;
  if (!on)
    return 0; // the default stream's work has run already
  opd_emu::issue(s, [on, at] { on->run_to(at); });
  return 0;
}
inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n,
                                   cudaMemcpyKind, cudaStream_t st) {
  opd_emu::issue(st, [d, s, n] { std::memcpy(d, s, n); });
  return 0;
}
inline cudaError_t cudaMallocHost(void *p, size_t bytes) {
  *static_cast<void **>(p) = std::malloc(bytes);
  return 0;
}
inline cudaError_t cudaFreeHost(void *p) {
  opd_emu::run_all();
  std::free(p);
  return 0;
}
// An emulated device of 16 GiB, 12 of them free.
inline cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total) {
  *free_bytes = size_t(12) << 30;
  *total = size_t(16) << 30;
  return 0;
}
template <class T>
cudaError_t cudaMemcpyToSymbol(T &symbol, const void *src, size_t n) {
  std::memcpy(&symbol, src, n);
  return 0;
}
template <class T> T atomicMin(T *p, T v) {
  std::lock_guard<std::mutex> lock(opd_emu::atomics());
  T old = *p;
  if (v < old)
    *p = v;
  return old;
}
// The emulated device's size: 2 multiprocessors of 256 threads, small
// enough that the tests' lines choose between the tridiagonal solvers.
enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerMultiProcessor = 39,
  cudaDevAttrMultiProcessorCount = 16
};
inline cudaError_t cudaGetDevice(int *d) {
  *d = 0;
  return 0;
}
inline cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr a, int) {
  *v = a == cudaDevAttrMultiProcessorCount ? 2 : 256;
  return 0;
}
template <class T> T atomicAdd(T *p, T v) {
  std::lock_guard<std::mutex> lock(opd_emu::atomics());
  T old = *p;
  *p = old + v;
  return old;
}
inline cudaError_t cudaDeviceSynchronize() {
  opd_emu::run_all();
  return 0;
}
inline cudaError_t cudaFree(void *p) {
  opd_emu::run_all();
  std::free(p);
  return 0;
}
#endif
