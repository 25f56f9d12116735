/* omp_ref.c - loopcost.opd's two loops as OpenMP `parallel for`: the
 * reference for a loop's fixed cost (issue 57: "brought to OpenMP's own
 * overhead"). The same arithmetic, arrays, first calls and timing as
 * loopcost.opd; the thread count is OMP_NUM_THREADS (run.py sets it).
 * SPDX-License-Identifier: Apache-2.0
 *
 * usage: opd-loopcost-omp N REPS
 * prints: omp n=N reps=REPS axpby_us=... dot_us=... check=...
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static void axpby(double *restrict p, const double *restrict r, double beta,
                  long n) {
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i)
    p[i] = beta * p[i] + r[i];
}

static double dot(const double *restrict p, const double *restrict r, long n) {
  double s = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : s)
  for (long i = 0; i < n; ++i)
    s += p[i] * r[i];
  return s;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s N REPS\n", argv[0]);
    return 2;
  }
  long n = atol(argv[1]), reps = atol(argv[2]);
  if (n < 1 || reps < 1) {
    fprintf(stderr, "%s: N and REPS must be positive\n", argv[0]);
    return 2;
  }
  double *p = aligned_alloc(64, (size_t)((n * 8 + 63) / 64 * 64));
  double *r = aligned_alloc(64, (size_t)((n * 8 + 63) / 64 * 64));
  if (!p || !r) {
    fprintf(stderr, "%s: out of memory\n", argv[0]);
    return 1;
  }
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    p[i] = 1.0 / (1.0 + (double)i);
    r[i] = 0.5 - 1.0 / (2.0 + (double)i);
  }
  const double beta = 0.5;
  // The same 50 untimed calls of each loop first as loopcost.opd's `warm`.
  double s0 = 0.0;
  for (int k = 0; k < 50; ++k)
    axpby(p, r, beta, n);
  for (int k = 0; k < 50; ++k)
    s0 += dot(p, r, n);
  double t0 = omp_get_wtime();
  for (long k = 0; k < reps; ++k)
    axpby(p, r, beta, n);
  double t1 = omp_get_wtime();
  double s = 0.0;
  for (long k = 0; k < reps; ++k)
    s += dot(p, r, n);
  double t2 = omp_get_wtime();
  printf("omp n=%ld reps=%ld axpby_us=%.4f dot_us=%.4f check=%.12e (%g)\n", n,
         reps, (t1 - t0) * 1e6 / (double)reps, (t2 - t1) * 1e6 / (double)reps,
         s, s0);
  free(p);
  free(r);
  return 0;
}
