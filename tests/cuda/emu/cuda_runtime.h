// cuda_runtime.h - A CPU stand-in for the CUDA runtime, for tests only.
// SPDX-License-Identifier: Apache-2.0
//
// tests/cuda/emulate.py compiles the CUDA source opdc generates with a
// plain C++ compiler against this header instead of CUDA's, after turning
// each `kernel<<<grid, block>>>(args)` into `opd_emu::launch(grid, block,
// [&] { kernel(args); })`. A launch runs its blocks one after the other and
// the threads of a block as std::threads that meet at __syncthreads() (a
// std::barrier), so the generated kernels, the device runtime
// (lib/cuda/opd_cuda.cuh: device copies, layouts, thread colours, block
// reductions) and the host code run on any machine, and their results can
// be compared with the CPU backend's. Device memory is host memory;
// __constant__ and __shared__ variables are ordinary statics (blocks never
// overlap). It checks the logic, not the speed or the memory model.
#ifndef OPD_EMU_CUDA_RUNTIME_H
#define OPD_EMU_CUDA_RUNTIME_H

#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

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
inline thread_local std::barrier<> *block_barrier = nullptr;
inline std::mutex &atomics() {
  static std::mutex m;
  return m;
}
template <class F> void launch(dim3 g, dim3 b, F &&body) {
  const unsigned n = b.x * b.y * b.z;
  for (unsigned bz = 0; bz < g.z; ++bz)
    for (unsigned by = 0; by < g.y; ++by)
      for (unsigned bx = 0; bx < g.x; ++bx) {
        std::barrier<> bar(n);
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < n; ++t)
          threads.emplace_back([&, t] {
            threadIdx = {t % b.x, (t / b.x) % b.y, t / (b.x * b.y)};
            blockIdx = {bx, by, bz};
            blockDim = b;
            gridDim = g;
            block_barrier = &bar;
            body();
          });
        for (auto &th : threads)
          th.join();
      }
}
} // namespace opd_emu

inline void __syncthreads() { opd_emu::block_barrier->arrive_and_wait(); }
[[noreturn]] inline void __trap() { std::abort(); }

typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorLaunchFailure = 719,
       cudaErrorIllegalInstruction = 715, cudaErrorAssert = 710 };
enum cudaMemcpyKind { cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
                      cudaMemcpyDeviceToDevice };
inline const char *cudaGetErrorString(cudaError_t) { return "emulated"; }
inline cudaError_t cudaGetDeviceCount(int *n) { *n = 1; return 0; }
inline cudaError_t cudaSetDevice(int) { return 0; }
inline cudaError_t cudaGetLastError() { return 0; }
inline cudaError_t cudaDeviceSynchronize() { return 0; }
inline cudaError_t cudaMalloc(void *p, size_t bytes) {
  *static_cast<void **>(p) = std::calloc(1, bytes);
  return 0;
}
inline cudaError_t cudaFree(void *p) { std::free(p); return 0; }
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
template <class T> T atomicAdd(T *p, T v) {
  std::lock_guard<std::mutex> lock(opd_emu::atomics());
  T old = *p;
  *p = old + v;
  return old;
}
#endif
