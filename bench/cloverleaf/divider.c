// divider.c - How fast can a kernel go that divides? The throughput of
// 4-lane double divisions and square roots on this core, and what it
// allows CloverLeaf's division-heavy loops (issue #15; bench/cloverleaf/
// README.md, "calc_dt and the divider").
// SPDX-License-Identifier: Apache-2.0
//
// Times `reps` rounds of 12 independent chains of VDIVPD (and VSQRTPD) on
// 256-bit vectors, so that the divider's throughput, not its latency,
// bounds them; prints ns per instruction, then for each kernel given on
// the command line as NAME:DIVISIONS:SQRTS:BYTES (per cell, vectorised 4
// cells an instruction) its arithmetic floor in ns a cell and the GB/s that
// floor allows, beside the STREAM triad of one thread measured in the same
// run: a loop whose floor allows less than 80 % of the triad cannot reach
// the target however its memory traffic is arranged.
//
// build: built as build/bench/opd-divider; by hand:
//        cc -O2 -mavx2 -o divider bench/cloverleaf/divider.c
// run:   ./divider calc_dt:6:1:40 viscosity:9:1:40
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../stream/triad.h"

enum { CHAINS = 12 };

// ns per VDIVPD (sqrt = 0) or VSQRTPD (sqrt = 1), best of 5 runs: 12
// independent chains in registers.
static double per_instruction(int sqrt, long reps) {
  const __m256d d = _mm256_set1_pd(1.0000001);
  double best = 1e30;
  for (int run = 0; run < 5; ++run) {
    __m256d v0 = _mm256_set1_pd(1.5), v1 = _mm256_set1_pd(2.5),
            v2 = _mm256_set1_pd(3.5), v3 = _mm256_set1_pd(4.5),
            v4 = _mm256_set1_pd(5.5), v5 = _mm256_set1_pd(6.5),
            v6 = _mm256_set1_pd(7.5), v7 = _mm256_set1_pd(8.5),
            v8 = _mm256_set1_pd(9.5), v9 = _mm256_set1_pd(10.5),
            v10 = _mm256_set1_pd(11.5), v11 = _mm256_set1_pd(12.5);
    double t0 = opd_bench_now();
#define STEP(x) x = sqrt ? _mm256_sqrt_pd(x) : _mm256_div_pd(x, d)
    for (long r = 0; r < reps; ++r) {
      STEP(v0);
      STEP(v1);
      STEP(v2);
      STEP(v3);
      STEP(v4);
      STEP(v5);
      STEP(v6);
      STEP(v7);
      STEP(v8);
      STEP(v9);
      STEP(v10);
      STEP(v11);
    }
#undef STEP
    double t = opd_bench_now() - t0;
    __m256d all = _mm256_add_pd(
        _mm256_add_pd(_mm256_add_pd(v0, v1), _mm256_add_pd(v2, v3)),
        _mm256_add_pd(
            _mm256_add_pd(_mm256_add_pd(v4, v5), _mm256_add_pd(v6, v7)),
            _mm256_add_pd(_mm256_add_pd(v8, v9), _mm256_add_pd(v10, v11))));
    double lane[4];
    _mm256_storeu_pd(lane, all);
    if (lane[0] == 42.0) // keeps the chains
      printf("%g\n", lane[0]);
    if (t < best)
      best = t;
  }
  return best / (double)(reps * CHAINS) * 1e9;
}

int main(int argc, char **argv) {
  const long reps = 2000000;
  double div = per_instruction(0, reps), sq = per_instruction(1, reps / 2);
  double tri = opd_bench_triad();
  printf("vdivpd ymm %.3f ns, vsqrtpd ymm %.3f ns (throughput, 1 thread); "
         "triad %.2f GB/s (1 thread, same run)\n",
         div, sq, tri);
  for (int i = 1; i < argc; ++i) {
    char name[64];
    int ndiv, nsqrt, bytes;
    if (sscanf(argv[i], "%63[^:]:%d:%d:%d", name, &ndiv, &nsqrt, &bytes) != 4 ||
        ndiv < 0 || nsqrt < 0 || bytes <= 0) {
      fprintf(stderr,
              "divider: '%s': expected NAME:DIVISIONS:SQRTS:BYTES a cell\n",
              argv[i]);
      return 2;
    }
    double ns = (ndiv * div + nsqrt * sq) / 4.0;
    double gbs = bytes / ns;
    printf("%-12s %2d divisions, %d square roots, %3d bytes a cell: floor "
           "%.3f ns a cell, at most %.2f GB/s = %.0f %% of the triad\n",
           name, ndiv, nsqrt, bytes, ns, gbs, 100.0 * gbs / tri);
  }
  return 0;
}
