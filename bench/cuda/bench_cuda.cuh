// bench_cuda.cuh - What the GPU benchmarks of bench/cuda share: error
// checks, the best-of-20 kernel timer and the device copy bandwidth that
// every "% copy" figure is measured against.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_BENCH_CUDA_CUH
#define OPDC_BENCH_CUDA_CUH

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace bench {

/** Exits with "bench/cuda: error: WHAT: <CUDA's message>" on a failure. */
inline void check(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "bench/cuda: error: %s: %s\n", what,
                 cudaGetErrorString(e));
    std::exit(1);
  }
}

/** Milliseconds of the fastest of 20 runs of `launch` after a warm-up,
 *  timed with CUDA events around each. */
template <class F> double best_ms(F launch) {
  cudaEvent_t t0, t1;
  check(cudaEventCreate(&t0), "cudaEventCreate");
  check(cudaEventCreate(&t1), "cudaEventCreate");
  float best = 1e30f;
  for (int r = 0; r < 21; ++r) {
    cudaEventRecord(t0);
    launch();
    cudaEventRecord(t1);
    check(cudaEventSynchronize(t1), "kernel");
    float ms = 0;
    cudaEventElapsedTime(&ms, t0, t1);
    if (r > 0 && ms < best)
      best = ms;
  }
  check(cudaGetLastError(), "launch");
  cudaEventDestroy(t0);
  cudaEventDestroy(t1);
  return best;
}

/** A grid-stride copy b[i] = a[i]. */
__global__ void copy(const double *__restrict__ a, double *__restrict__ b,
                     long n) {
  for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < n;
       i += long(gridDim.x) * blockDim.x)
    b[i] = a[i];
}

/** The device copy bandwidth (GB/s, bytes read + written: 16 an element)
 *  of two arrays of n doubles, best of 20; prints the device-copy line
 *  bench/cuda/report.py reads. */
inline double copy_bandwidth(long n) {
  double *a, *b;
  check(cudaMalloc(&a, n * sizeof(double)), "cudaMalloc");
  check(cudaMalloc(&b, n * sizeof(double)), "cudaMalloc");
  check(cudaMemset(a, 0, n * sizeof(double)), "cudaMemset");
  cudaDeviceProp prop;
  check(cudaGetDeviceProperties(&prop, 0), "properties");
  const double ms = best_ms(
      [&] { copy<<<prop.multiProcessorCount * 8, 256>>>(a, b, n); });
  const double s = ms / 1e3, gbs = 16.0 * double(n) / s / 1e9;
  std::printf("device-copy n=%ld best_s=%.6f GBps=%.2f device=\"%s\"\n", n, s,
              gbs, prop.name);
  cudaFree(a);
  cudaFree(b);
  return gbs;
}

} // namespace bench

#endif
