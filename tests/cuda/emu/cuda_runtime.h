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
#ifndef OPD_EMU_CUDA_RUNTIME_H
#define OPD_EMU_CUDA_RUNTIME_H

#include <cstdio>
#include <cstdlib>
#include <cstring>
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
inline cudaError_t cudaDeviceSynchronize() { return 0; }
inline cudaError_t cudaMalloc(void *p, size_t bytes) {
  *static_cast<void **>(p) = std::calloc(1, bytes);
  return 0;
}
inline cudaError_t cudaFree(void *p) {
  std::free(p);
  return 0;
}
inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n,
                              cudaMemcpyKind) {
  std::memcpy(d, s, n);
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
#endif
