// stencil_nt.c - Does streaming the output of a 7-point 3D sweep pay, with
// and without tiling dimension 1? A hand-written AVX2 reference for the
// generated heat3d `step` (issue #14, docs/performance.md "Tiles from the
// profile's L2, and streaming stores on this machine").
// SPDX-License-Identifier: Apache-2.0
//
// 256^3 doubles with a halo of 1, rows padded to whole 64-byte lines and
// the interior aligned, as opdc stores block dats; per step one sweep
// u -> v (v = sum of the 6 neighbours - 6 u), then swap. For each tile
// height in dimension 1 (argv: heights; 256 = untiled) and each store kind
// (plain, non-temporal), 10 steps twice; GB/s counts 16 bytes a point (the
// model's: read u once, write v once), beside a STREAM triad of 3 x 256 MiB
// measured in the same run (plain and non-temporal stores).
//
// build: gcc -O2 -mavx2 -mfma -fopenmp -o stencil_nt
//          bench/structured/stencil_nt.c
// run:   OMP_NUM_THREADS=1 ./stencil_nt 256 32; OMP_NUM_THREADS=2 ./...
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N 256
#define ROW 264                       // 258 points padded to 8-double lines
#define PLANE ((long)ROW * (N + 2))
static long at(int i, int j, int k) {
  return (long)k * PLANE + (long)j * ROW + i + 7; // interior i = 1 aligned
}

static void triad(void) {
  const long n = 32L << 20;
  double *a = aligned_alloc(64, n * 8), *b = aligned_alloc(64, n * 8),
         *c = aligned_alloc(64, n * 8);
#pragma omp parallel for
  for (long i = 0; i < n; ++i) {
    a[i] = 1;
    b[i] = 2;
    c[i] = 0;
  }
  for (int nt = 0; nt < 2; ++nt) {
    double best = 1e30;
    for (int rep = 0; rep < 4; ++rep) {
      double t0 = omp_get_wtime();
#pragma omp parallel for
      for (long i = 0; i < n; i += 4) {
        __m256d r = _mm256_fmadd_pd(_mm256_set1_pd(3.0), _mm256_load_pd(b + i),
                                    _mm256_load_pd(a + i));
        if (nt)
          _mm256_stream_pd(c + i, r);
        else
          _mm256_store_pd(c + i, r);
      }
      _mm_sfence();
      double t = omp_get_wtime() - t0;
      best = t < best ? t : best;
    }
    printf("triad, %s stores: %.2f GB/s (24 B an element)\n",
           nt ? "non-temporal" : "plain", 24.0 * n / best / 1e9);
  }
  free(a);
  free(b);
  free(c);
}

int main(int argc, char **argv) {
  printf("threads %d\n", omp_get_max_threads());
  triad();
  const long total = PLANE * (N + 2) + 64;
  double *u = aligned_alloc(64, total * 8), *v = aligned_alloc(64, total * 8);
#pragma omp parallel for
  for (long i = 0; i < total; ++i) {
    u[i] = (double)(i % 7) * 0.1;
    v[i] = 0;
  }
  for (int a = 1; a < (argc > 1 ? argc : 2); ++a) {
    const int tile = argc > 1 ? atoi(argv[a]) : N;
    for (int rep = 0; rep < 2; ++rep)
      for (int nt = 0; nt < 2; ++nt) {
        double t0 = omp_get_wtime();
        for (int step = 0; step < 10; ++step) {
#pragma omp parallel
          for (int j0 = 1; j0 <= N; j0 += tile) {
            const int j1 = j0 + tile - 1 < N ? j0 + tile - 1 : N;
#pragma omp for schedule(static) nowait
            for (int k = 1; k <= N; ++k)
              for (int j = j0; j <= j1; ++j) {
                const double *c = u + at(1, j, k);
                double *o = v + at(1, j, k);
                for (int i = 0; i < N; i += 4) {
                  __m256d s = _mm256_loadu_pd(c + i - 1);
                  s = _mm256_add_pd(s, _mm256_loadu_pd(c + i + 1));
                  s = _mm256_add_pd(s, _mm256_loadu_pd(c + i - ROW));
                  s = _mm256_add_pd(s, _mm256_loadu_pd(c + i + ROW));
                  s = _mm256_add_pd(s, _mm256_loadu_pd(c + i - PLANE));
                  s = _mm256_add_pd(s, _mm256_loadu_pd(c + i + PLANE));
                  __m256d r = _mm256_fmadd_pd(_mm256_set1_pd(-6.0),
                                              _mm256_load_pd(c + i), s);
                  if (nt)
                    _mm256_stream_pd(o + i, r);
                  else
                    _mm256_store_pd(o + i, r);
                }
              }
          }
          _mm_sfence();
          double *t = u;
          u = v;
          v = t;
        }
        const double s = (omp_get_wtime() - t0) / 10;
        printf("tile %3d rows, %s stores: %.2f ms a step, %.2f GB/s\n", tile,
               nt ? "non-temporal" : "plain       ", s * 1e3,
               16.0 * N * N * N / s / 1e9);
      }
  }
  free(u);
  free(v);
  return 0;
}
