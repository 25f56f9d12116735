// stencil_shapes.cu - Which thread mapping the CUDA backend should emit for
// structured stencil loops: the measurement behind the choice recorded in
// docs/performance.md ("CUDA: structured loops").
// SPDX-License-Identifier: Apache-2.0
//
// heat3d's 7-point step (read u, write unew: 16 bytes a point) on n^3 and
// Poisson's 5-point Jacobi sweep (read u and f, write unew: 24 bytes a
// point) on n^2, each written the way opdc emits a loop (the user kernel as
// a __device__ function handed pointers at the point and the row/plane
// strides), under thread mappings:
//   gen64       what opdc emitted first: one point a thread, block 32x8(x1),
//               grid-stride loops with 64-bit indices
//   gen32       the same with 32-bit indices
//   x<W>y<H>    other block shapes, one point a thread (64-bit)
//   march<Z>    block 32x8, each block walks Z consecutive planes (3D), or
//               each thread Z consecutive rows (2D): the neighbours of
//               plane (row) k+1 were loaded at k and hit L1
//   march<Z>i32 the same with 32-bit indices
// Each variant: best of 20 after a warm-up, GB/s counted as the loop's
// bytes over the kernel time, and its share of the copy kernel measured in
// the same run. Every variant's result is checked against gen64's.
//
// usage: stencil_shapes [N3=256] [N2=4096]
#include "bench_cuda.cuh"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

using bench::best_ms;
using bench::check;

// The user kernels as opdc emits them (pointer at the point, strides).
template <class I>
__device__ __forceinline__ void step7(const double *__restrict__ a0, I t1,
                                      I t2, double lam, double *a2) {
  double nb = a0[-1] + a0[1] + a0[-t1] + a0[t1] + a0[-t2] + a0[t2];
  a2[0] = a0[0] + lam * (nb - 6.0 * a0[0]);
}
template <class I>
__device__ __forceinline__ void jacobi5(const double *__restrict__ a0, I t1,
                                        const double *__restrict__ a1,
                                        double dx2, double dy2, double *a2) {
  a2[0] = ((a0[-1] + a0[1]) * dy2 + (a0[-t1] + a0[t1]) * dx2 +
           dx2 * dy2 * a1[0]) /
          (2.0 * (dx2 + dy2));
}

// 3D, one point a thread, grid-stride loops (the first emitted form).
template <class I>
__global__ void __launch_bounds__(256)
    heat_point(const double *u, double *v, I n, I t1, I t2, double lam) {
  for (I c2 = 1 + I(blockIdx.z); c2 < n - 1; c2 += I(gridDim.z))
    for (I c1 = 1 + I(blockIdx.y) * I(blockDim.y) + I(threadIdx.y); c1 < n - 1;
         c1 += I(gridDim.y) * I(blockDim.y))
      for (I c0 = 1 + I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x);
           c0 < n - 1; c0 += I(gridDim.x) * I(blockDim.x))
        step7<I>(u + c0 + c1 * t1 + c2 * t2, t1, t2, lam,
                 v + c0 + c1 * t1 + c2 * t2);
}

// 3D, each block walks `z` consecutive planes.
template <class I>
__global__ void __launch_bounds__(256)
    heat_march(const double *u, double *v, I n, I t1, I t2, double lam, I z) {
  const I z0 = 1 + I(blockIdx.z) * z;
  const I z1 = z0 + z < n - 1 ? z0 + z : n - 1;
  for (I c1 = 1 + I(blockIdx.y) * I(blockDim.y) + I(threadIdx.y); c1 < n - 1;
       c1 += I(gridDim.y) * I(blockDim.y))
    for (I c0 = 1 + I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x); c0 < n - 1;
         c0 += I(gridDim.x) * I(blockDim.x))
      for (I c2 = z0; c2 < z1; ++c2)
        step7<I>(u + c0 + c1 * t1 + c2 * t2, t1, t2, lam,
                 v + c0 + c1 * t1 + c2 * t2);
}

// 2D, one point a thread.
template <class I>
__global__ void __launch_bounds__(256)
    jac_point(const double *u, const double *f, double *v, I n, I t1,
              double dx2, double dy2) {
  for (I c1 = 1 + I(blockIdx.y) * I(blockDim.y) + I(threadIdx.y); c1 < n - 1;
       c1 += I(gridDim.y) * I(blockDim.y))
    for (I c0 = 1 + I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x); c0 < n - 1;
         c0 += I(gridDim.x) * I(blockDim.x))
      jacobi5<I>(u + c0 + c1 * t1, t1, f + c0 + c1 * t1, dx2, dy2,
                 v + c0 + c1 * t1);
}

// 2D, a block of W threads walks `z` consecutive rows.
template <class I>
__global__ void __launch_bounds__(256)
    jac_march(const double *u, const double *f, double *v, I n, I t1,
              double dx2, double dy2, I z) {
  const I r0 = 1 + (I(blockIdx.y) * I(blockDim.y) + I(threadIdx.y)) * z;
  const I r1 = r0 + z < n - 1 ? r0 + z : n - 1;
  for (I c0 = 1 + I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x); c0 < n - 1;
       c0 += I(gridDim.x) * I(blockDim.x))
    for (I c1 = r0; c1 < r1; ++c1)
      jacobi5<I>(u + c0 + c1 * t1, t1, f + c0 + c1 * t1, dx2, dy2,
                 v + c0 + c1 * t1);
}

static unsigned cdiv(long a, long b) { return unsigned((a + b - 1) / b); }

static double copy_gbs;

static void report(const char *loop, const char *name, double bytes,
                   double ms, const double *out, const double *ref, long n) {
  std::vector<double> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
  check(cudaMemcpy(a.data(), out, size_t(n) * 8, cudaMemcpyDeviceToHost),
        "download");
  check(cudaMemcpy(b.data(), ref, size_t(n) * 8, cudaMemcpyDeviceToHost),
        "download");
  long bad = 0;
  for (long i = 0; i < n; ++i)
    bad += a[size_t(i)] != b[size_t(i)];
  double gbs = bytes / (ms / 1e3) / 1e9;
  std::printf("%-8s %-14s %9.4f ms %9.1f GB/s %6.1f %% copy%s\n", loop, name,
              ms, gbs, 100.0 * gbs / copy_gbs,
              bad ? "  MISMATCH against gen64" : "");
}

int main(int argc, char **argv) {
  const long n3 = argc > 1 ? std::atol(argv[1]) : 256;
  const long n2 = argc > 2 ? std::atol(argv[2]) : 4096;
  const long m3 = n3 * n3 * n3, m2 = n2 * n2;
  const long m = m3 > 3 * m2 ? m3 : 3 * m2;
  double *a, *b, *ref;
  check(cudaMalloc(&a, size_t(m) * 8), "cudaMalloc");
  check(cudaMalloc(&b, size_t(m) * 8), "cudaMalloc");
  check(cudaMalloc(&ref, size_t(m) * 8), "cudaMalloc");
  check(cudaMemset(b, 0, size_t(m) * 8), "cudaMemset");
  check(cudaMemset(ref, 0, size_t(m) * 8), "cudaMemset");
  {
    std::vector<double> h(static_cast<size_t>(m));
    for (long i = 0; i < m; ++i)
      h[size_t(i)] = std::sin(0.001 * double(i));
    check(cudaMemcpy(a, h.data(), size_t(m) * 8, cudaMemcpyHostToDevice),
          "upload");
  }
  copy_gbs = bench::copy_bandwidth(1L << 27);

  // 3D heat step.
  {
    const long in = n3 - 2;
    const double bytes = 16.0 * double(in * in * in), lam = 0.12;
    auto point = [&](auto zero, unsigned bx, unsigned by, double *out) {
      using I = decltype(zero);
      dim3 blk(bx, by, 1), grd(cdiv(in, bx), cdiv(in, by), unsigned(in));
      return best_ms([&] {
        heat_point<I><<<grd, blk>>>(a, out, I(n3), I(n3), I(n3 * n3), lam);
      });
    };
    auto march = [&](auto zero, long z, double *out) {
      using I = decltype(zero);
      dim3 blk(32, 8, 1), grd(cdiv(in, 32), cdiv(in, 8), cdiv(in, z));
      return best_ms([&] {
        heat_march<I><<<grd, blk>>>(a, out, I(n3), I(n3), I(n3 * n3), lam,
                                    I(z));
      });
    };
    char name[32];
    double ms = point(int64_t(0), 32, 8, ref);
    report("heat3d", "gen64", bytes, ms, ref, ref, m3);
    report("heat3d", "gen32", bytes, point(int32_t(0), 32, 8, b), b, ref, m3);
    const unsigned shapes[][2] = {{64, 4}, {128, 2}, {256, 1}, {32, 4}};
    for (auto &s : shapes) {
      std::snprintf(name, sizeof name, "x%uy%u", s[0], s[1]);
      report("heat3d", name, bytes, point(int64_t(0), s[0], s[1], b), b, ref,
             m3);
    }
    for (long z : {2L, 4L, 8L, 16L, 32L, 64L}) {
      std::snprintf(name, sizeof name, "march%ld", z);
      report("heat3d", name, bytes, march(int64_t(0), z, b), b, ref, m3);
      std::snprintf(name, sizeof name, "march%ldi32", z);
      report("heat3d", name, bytes, march(int32_t(0), z, b), b, ref, m3);
    }
  }
  // 2D Jacobi sweep (u = a, f = a + m2, unew in the output).
  {
    const long in = n2 - 2;
    const double bytes = 24.0 * double(in * in);
    const double h = 1.0 / double(n2 - 1), dx2 = h * h, dy2 = h * h;
    const double *f = a + m2;
    auto point = [&](auto zero, unsigned bx, unsigned by, double *out) {
      using I = decltype(zero);
      dim3 blk(bx, by, 1), grd(cdiv(in, bx), cdiv(in, by), 1);
      return best_ms([&] {
        jac_point<I><<<grd, blk>>>(a, f, out, I(n2), I(n2), dx2, dy2);
      });
    };
    auto march = [&](auto zero, unsigned bx, unsigned by, long z,
                     double *out) {
      using I = decltype(zero);
      dim3 blk(bx, by, 1), grd(cdiv(in, bx), cdiv(in, by * z), 1);
      return best_ms([&] {
        jac_march<I><<<grd, blk>>>(a, f, out, I(n2), I(n2), dx2, dy2, I(z));
      });
    };
    char name[32];
    report("poisson", "gen64", bytes, point(int64_t(0), 32, 8, ref), ref, ref,
           m2);
    report("poisson", "gen32", bytes, point(int32_t(0), 32, 8, b), b, ref, m2);
    const unsigned shapes[][2] = {{64, 4}, {128, 2}, {256, 1}, {32, 4}};
    for (auto &s : shapes) {
      std::snprintf(name, sizeof name, "x%uy%u", s[0], s[1]);
      report("poisson", name, bytes, point(int64_t(0), s[0], s[1], b), b, ref,
             m2);
    }
    for (long z : {2L, 4L, 8L, 16L, 32L}) {
      std::snprintf(name, sizeof name, "march%ld", z);
      report("poisson", name, bytes, march(int64_t(0), 32, 8, z, b), b, ref,
             m2);
      std::snprintf(name, sizeof name, "march%ldi32", z);
      report("poisson", name, bytes, march(int32_t(0), 32, 8, z, b), b, ref,
             m2);
      std::snprintf(name, sizeof name, "x256march%ld", z);
      report("poisson", name, bytes, march(int64_t(0), 256, 1, z, b), b, ref,
             m2);
    }
  }
  return 0;
}
