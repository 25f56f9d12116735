/* triad.h - The STREAM triad of one thread, for the hand-written C
 * references in bench/ (bench/airfoil/layouts.c, bench/cloverleaf/divider.c)
 * that print their figures beside it, measured in the same run.
 * SPDX-License-Identifier: Apache-2.0
 *
 * a[i] = b[i] + 3 c[i] over 3 x 256 MiB, best of 4, in GB/s counting 24
 * bytes an element (bench/stream/stream.cpp is the benchmarks' own,
 * threaded triad; this one needs no C++ and no OpenMP). */
#ifndef OPD_BENCH_TRIAD_H
#define OPD_BENCH_TRIAD_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double opd_bench_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double opd_bench_triad(void) {
  const size_t n = 32UL << 20;
  double *a = aligned_alloc(64, n * 8), *b = aligned_alloc(64, n * 8),
         *c = aligned_alloc(64, n * 8);
  if (!a || !b || !c) {
    fprintf(stderr, "triad: out of memory\n");
    exit(1);
  }
  for (size_t i = 0; i < n; ++i) {
    a[i] = 0;
    b[i] = 1;
    c[i] = 2;
  }
  double best = 1e30;
  for (int r = 0; r < 4; ++r) {
    double t0 = opd_bench_now();
    for (size_t i = 0; i < n; ++i)
      a[i] = b[i] + 3.0 * c[i];
    double t = opd_bench_now() - t0;
    if (t < best)
      best = t;
  }
  double gbs = 24.0 * (double)n / best * 1e-9;
  if (a[n / 3] != 7.0) /* keeps the stores */
    gbs = 0;
  free(a);
  free(b);
  free(c);
  return gbs;
}

#endif
