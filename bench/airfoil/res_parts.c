// res_parts.c - Where Airfoil's res_calc spends its time on a CPU core once
// the gathers are scalar loads: the flux computation against the scatter of
// its increments, in cache and out, against the arithmetic alone, and two
// ways tried to cut the gathers' and the scatter's instructions (issue #14;
// docs/performance.md "What bounds res_calc on Zen 4").
// SPDX-License-Identifier: Apache-2.0
//
// Reads OP2's mesh (new_grid.h5: pedge, pecell, p_x, p_q) and times, on one
// thread, in strips of 16 edges as the generated loop runs them (best of
// the rounds, ns an edge):
//
//   whole       the fluxes of a strip (reads through the maps) into a strip
//               buffer, then the increments applied in edge order
//   compute     the first half only (the buffer kept live, nothing applied)
//   apply       the second half only (constant increments)
//   compute and apply again on the first 65536 edges only (their cells and
//               nodes stay in L2): how much of each is waiting for memory
//   arithmetic  the flux alone on 14 contiguous input arrays (no maps, L2)
//   transposed  whole, each strip's q and x rows loaded as whole rows and
//               transposed into component arrays with AVX-512 shuffles
//               first (built with AVX-512 only)
//   carry       apply, the last edge's two cells kept in registers so that
//               an edge that increments one of them again does not reload it
//               (the same additions in the same order)
//
// Every variant that writes res checks it bit for bit against `whole`.
//
// build: built as build/bench/opd-airfoil-res-parts (the project's C
//        compiler, -O3 -march=native); the figures in docs/performance.md
//        were taken with clang 19 as opdc compiles (scalar loads for gathers):
//        clang-19 -O3 -march=native -ffp-contract=off
//          -Xclang -target-feature -Xclang +prefer-no-gather
//          -o res_parts bench/airfoil/res_parts.c -I/usr/include/hdf5/serial
//          -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5
// run:   ./res_parts new_grid.h5 [rounds=5]
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grid_h5.h"
#ifdef __AVX512F__
#include <immintrin.h>
#endif

enum { S = 16, InCache = 65536 };
static const double gm1 = 0.4, eps = 0.05;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// Whole cache lines and a spare one (the transposed loads read a row's
// 32 bytes at any element).
static void *alloc(size_t bytes) { return grid_alloc("res_parts", bytes + 64); }

static void *read_all(hid_t file, const char *name, hid_t type, size_t elem,
                      hsize_t *rows) {
  return grid_read("res_parts", file, name, type, elem, rows);
}

// OP2's res_calc flux of one edge; res1 gets f, res2 -f.
static inline void flux(double x10, double x11, double x20, double x21,
                        double q10, double q11, double q12, double q13,
                        double q20, double q21, double q22, double q23,
                        double adt1, double adt2, double *f0, double *f1,
                        double *f2, double *f3) {
  double dx = x10 - x20, dy = x11 - x21;
  double ri = 1.0 / q10;
  double p1 = gm1 * (q13 - 0.5 * ri * (q11 * q11 + q12 * q12));
  double vol1 = ri * (q11 * dy - q12 * dx);
  ri = 1.0 / q20;
  double p2 = gm1 * (q23 - 0.5 * ri * (q21 * q21 + q22 * q22));
  double vol2 = ri * (q21 * dy - q22 * dx);
  double mu = 0.5 * (adt1 + adt2) * eps;
  *f0 = 0.5 * (vol1 * q10 + vol2 * q20) + mu * (q10 - q20);
  *f1 = 0.5 * (vol1 * q11 + p1 * dy + vol2 * q21 + p2 * dy) + mu * (q11 - q21);
  *f2 = 0.5 * (vol1 * q12 - p1 * dx + vol2 * q22 - p2 * dx) + mu * (q12 - q22);
  *f3 = 0.5 * (vol1 * (q13 + p1) + vol2 * (q23 + p2)) + mu * (q13 - q23);
}

typedef struct {
  int ne;
  const int *edge, *ecell;
  const double *x, *q, *adt;
} Mesh;

static inline void compute(const Mesh *m, int s, double (*restrict F)[4]) {
  const int *restrict edge = m->edge, *restrict ecell = m->ecell;
  const double *restrict x = m->x, *restrict q = m->q, *restrict adt = m->adt;
  for (int j = 0; j < S; ++j) {
    int e = s + j, a = edge[2 * e], b = edge[2 * e + 1];
    int c = ecell[2 * e], d = ecell[2 * e + 1];
    const double *q1 = q + 4 * (size_t)c, *q2 = q + 4 * (size_t)d;
    flux(x[2 * (size_t)a], x[2 * (size_t)a + 1], x[2 * (size_t)b],
         x[2 * (size_t)b + 1], q1[0], q1[1], q1[2], q1[3], q2[0], q2[1], q2[2],
         q2[3], adt[c], adt[d], &F[j][0], &F[j][1], &F[j][2], &F[j][3]);
  }
}

static inline void apply(const Mesh *m, int s, const double (*restrict F)[4],
                         double *restrict res) {
  const int *restrict ecell = m->ecell;
  for (int j = 0; j < S; ++j) {
    int e = s + j, c = ecell[2 * e], d = ecell[2 * e + 1];
    for (int k = 0; k < 4; ++k)
      res[4 * (size_t)c + k] += F[j][k];
    for (int k = 0; k < 4; ++k)
      res[4 * (size_t)d + k] -= F[j][k];
  }
}

static void res_whole(const Mesh *m, int ne, double *res) {
  double F[S][4];
  for (int s = 0; s + S <= ne; s += S) {
    compute(m, s, F);
    apply(m, s, F, res);
  }
}

static void res_compute(const Mesh *m, int ne, double *res) {
  double F[S][4];
  for (int s = 0; s + S <= ne; s += S) {
    compute(m, s, F);
    __asm__ volatile("" ::"r"(F) : "memory");
  }
  res[0] += F[0][0];
}

static void constant_increments(double F[S][4]) {
  for (int j = 0; j < S; ++j)
    for (int k = 0; k < 4; ++k)
      F[j][k] = 1e-9 * (double)(j + k);
}

static void res_apply(const Mesh *m, int ne, double *res) {
  double F[S][4];
  constant_increments(F);
  for (int s = 0; s + S <= ne; s += S) {
    __asm__ volatile("" ::"r"(F) : "memory");
    apply(m, s, F, res);
  }
}

// The last edge's cells A and B stay in registers (and are still stored
// each time): an edge that increments one of them adds to the register.
static void res_carry(const Mesh *m, int ne, double *res) {
  double F[S][4];
  constant_increments(F);
  int A = -1, B = -1;
  double vA[4] = {0}, vB[4] = {0};
  for (int s = 0; s + S <= ne; s += S) {
    __asm__ volatile("" ::"r"(F) : "memory");
    for (int j = 0; j < S; ++j) {
      int e = s + j, c = m->ecell[2 * e], d = m->ecell[2 * e + 1];
      double v[4], w[4];
      const double *src = c == A ? vA : c == B ? vB : &res[4 * (size_t)c];
      for (int k = 0; k < 4; ++k)
        v[k] = src[k] + F[j][k];
      memcpy(&res[4 * (size_t)c], v, 32);
      src = d == c ? v : d == A ? vA : d == B ? vB : &res[4 * (size_t)d];
      for (int k = 0; k < 4; ++k)
        w[k] = src[k] - F[j][k];
      memcpy(&res[4 * (size_t)d], w, 32);
      if (d == c)
        memcpy(v, w, 32);
      A = c, B = d;
      memcpy(vA, v, 32);
      memcpy(vB, w, 32);
    }
  }
}

__attribute__((noinline)) static void arithmetic(int n,
                                                 const double *restrict in,
                                                 double *restrict out) {
  for (int e = 0; e < n; ++e) {
    const double *p = in + e;
    size_t k = (size_t)n;
    flux(p[0], p[k], p[2 * k], p[3 * k], p[4 * k], p[5 * k], p[6 * k],
         p[7 * k], p[8 * k], p[9 * k], p[10 * k], p[11 * k], p[12 * k],
         p[13 * k], &out[e], &out[e + k], &out[e + 2 * k], &out[e + 3 * k]);
  }
}

#ifdef __AVX512F__
// Rows of 4 (2) doubles at base + 4 idx[l] (2 idx[l]), l < 8, into 4 (2)
// arrays of 8 components.
static inline void transpose4(const double *base, const int *idx, double *o0,
                              double *o1, double *o2, double *o3) {
  __m256d r[8];
  for (int l = 0; l < 8; ++l)
    r[l] = _mm256_loadu_pd(base + 4 * (size_t)idx[l]);
  __m512d a0 = _mm512_insertf64x4(_mm512_castpd256_pd512(r[0]), r[4], 1);
  __m512d a1 = _mm512_insertf64x4(_mm512_castpd256_pd512(r[1]), r[5], 1);
  __m512d a2 = _mm512_insertf64x4(_mm512_castpd256_pd512(r[2]), r[6], 1);
  __m512d a3 = _mm512_insertf64x4(_mm512_castpd256_pd512(r[3]), r[7], 1);
  __m512d u0 = _mm512_unpacklo_pd(a0, a1), u1 = _mm512_unpackhi_pd(a0, a1);
  __m512d u2 = _mm512_unpacklo_pd(a2, a3), u3 = _mm512_unpackhi_pd(a2, a3);
  __m512i lo = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
  __m512i hi = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
  _mm512_storeu_pd(o0, _mm512_permutex2var_pd(u0, lo, u2));
  _mm512_storeu_pd(o2, _mm512_permutex2var_pd(u0, hi, u2));
  _mm512_storeu_pd(o1, _mm512_permutex2var_pd(u1, lo, u3));
  _mm512_storeu_pd(o3, _mm512_permutex2var_pd(u1, hi, u3));
}

static inline void transpose2(const double *base, const int *idx, double *o0,
                              double *o1) {
  __m128d r[8];
  for (int l = 0; l < 8; ++l)
    r[l] = _mm_loadu_pd(base + 2 * (size_t)idx[l]);
  __m256d a[4];
  for (int l = 0; l < 4; ++l)
    a[l] = _mm256_insertf128_pd(_mm256_castpd128_pd256(r[2 * l]), r[2 * l + 1],
                                1);
  __m512d z0 = _mm512_insertf64x4(_mm512_castpd256_pd512(a[0]), a[1], 1);
  __m512d z1 = _mm512_insertf64x4(_mm512_castpd256_pd512(a[2]), a[3], 1);
  __m512i ev = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
  __m512i od = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
  _mm512_storeu_pd(o0, _mm512_permutex2var_pd(z0, ev, z1));
  _mm512_storeu_pd(o1, _mm512_permutex2var_pd(z0, od, z1));
}

static void res_transposed(const Mesh *m, int ne, double *res) {
  double X1[2][S], X2[2][S], Q1[4][S], Q2[4][S], A1[S], A2[S], F[4][S];
  int n1[S], n2[S], c1[S], c2[S];
  for (int s = 0; s + S <= ne; s += S) {
    for (int j = 0; j < S; ++j) {
      n1[j] = m->edge[2 * (s + j)], n2[j] = m->edge[2 * (s + j) + 1];
      c1[j] = m->ecell[2 * (s + j)], c2[j] = m->ecell[2 * (s + j) + 1];
      A1[j] = m->adt[c1[j]], A2[j] = m->adt[c2[j]];
    }
    for (int g = 0; g < S; g += 8) {
      transpose2(m->x, n1 + g, &X1[0][g], &X1[1][g]);
      transpose2(m->x, n2 + g, &X2[0][g], &X2[1][g]);
      transpose4(m->q, c1 + g, &Q1[0][g], &Q1[1][g], &Q1[2][g], &Q1[3][g]);
      transpose4(m->q, c2 + g, &Q2[0][g], &Q2[1][g], &Q2[2][g], &Q2[3][g]);
    }
    for (int j = 0; j < S; ++j)
      flux(X1[0][j], X1[1][j], X2[0][j], X2[1][j], Q1[0][j], Q1[1][j],
           Q1[2][j], Q1[3][j], Q2[0][j], Q2[1][j], Q2[2][j], Q2[3][j], A1[j],
           A2[j], &F[0][j], &F[1][j], &F[2][j], &F[3][j]);
    for (int j = 0; j < S; ++j) {
      for (int k = 0; k < 4; ++k)
        res[4 * (size_t)c1[j] + k] += F[k][j];
      for (int k = 0; k < 4; ++k)
        res[4 * (size_t)c2[j] + k] -= F[k][j];
    }
  }
}
#endif

typedef void (*Variant)(const Mesh *, int, double *);

static double best_ns(Variant v, const Mesh *m, int ne, double *res,
                      int rounds) {
  double best = 1e30;
  for (int r = 0; r < rounds; ++r) {
    double t = now();
    v(m, ne, res);
    t = now() - t;
    if (t < best)
      best = t;
  }
  return best * 1e9 / ne;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: res_parts new_grid.h5 [rounds=5]\n");
    return 2;
  }
  int rounds = argc > 2 ? atoi(argv[2]) : 5;
  if (rounds < 1) {
    fprintf(stderr, "res_parts: rounds must be at least 1\n");
    return 2;
  }
  hid_t file = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) {
    fprintf(stderr, "res_parts: cannot open '%s'\n", argv[1]);
    return 1;
  }
  hsize_t ne, ne2, nn, nc;
  Mesh m;
  m.edge = read_all(file, "pedge", H5T_NATIVE_INT, 4, &ne);
  m.ecell = read_all(file, "pecell", H5T_NATIVE_INT, 4, &ne2);
  m.x = read_all(file, "p_x", H5T_NATIVE_DOUBLE, 8, &nn);
  double *q = read_all(file, "p_q", H5T_NATIVE_DOUBLE, 8, &nc);
  H5Fclose(file);
  // A flow that varies from cell to cell (the file's is the free stream).
  for (size_t c = 0; c < nc; ++c) {
    q[4 * c] += 1e-3 * (double)(c % 77);
    q[4 * c + 1] += 1e-3 * (double)(c % 91);
  }
  double *adt = alloc(8 * nc);
  for (size_t c = 0; c < nc; ++c)
    adt[c] = 1.0 + 1e-3 * (double)(c % 1000);
  m.q = q, m.adt = adt, m.ne = (int)ne;
  int n = (int)(ne / S * S), sub = InCache < n ? InCache : n;
  printf("mesh %s: %llu edges, %llu cells; strips of %d, best of %d\n",
         argv[1], (unsigned long long)ne, (unsigned long long)nc, S, rounds);

  double *ref = calloc(4 * nc, 8), *res = calloc(4 * nc, 8);
  if (!ref || !res)
    return 1;
  printf("whole           %6.2f ns an edge\n",
         best_ns(res_whole, &m, n, ref, rounds));
  printf("compute         %6.2f\n", best_ns(res_compute, &m, n, res, rounds));
  printf("apply           %6.2f\n", best_ns(res_apply, &m, n, res, rounds));
  printf("compute, in L2  %6.2f (first %d edges)\n",
         best_ns(res_compute, &m, sub, res, 40 * rounds), sub);
  printf("apply, in L2    %6.2f\n",
         best_ns(res_apply, &m, sub, res, 40 * rounds));
  {
    int k = 16384;
    double *in = alloc(8 * 14 * (size_t)k), *out = alloc(8 * 4 * (size_t)k);
    for (int i = 0; i < 14 * k; ++i)
      in[i] = 1.0 + 1e-3 * (double)(i % 97);
    double best = 1e30;
    for (int r = 0; r < 100 * rounds; ++r) {
      double t = now();
      arithmetic(k, in, out);
      __asm__ volatile("" ::"r"(out) : "memory");
      t = now() - t;
      if (t < best)
        best = t;
    }
    printf("arithmetic      %6.2f (%d edges, contiguous inputs)\n",
           best * 1e9 / k, k);
  }
  int ok = 1;
#ifdef __AVX512F__
  memset(res, 0, 32 * nc);
  printf("transposed      %6.2f\n",
         best_ns(res_transposed, &m, n, res, rounds));
  ok &= memcmp(res, ref, 32 * nc) == 0;
#else
  printf("transposed      (not built: no AVX-512)\n");
#endif
  printf("carry           %6.2f\n", best_ns(res_carry, &m, n, res, rounds));
  printf("carry, in L2    %6.2f\n",
         best_ns(res_carry, &m, sub, res, 40 * rounds));
  memset(ref, 0, 32 * nc);
  memset(res, 0, 32 * nc);
  res_apply(&m, n, ref);
  res_carry(&m, n, res);
  ok &= memcmp(res, ref, 32 * nc) == 0;
  printf("res bit for bit equal (transposed to whole, carry to apply): %s\n",
         ok ? "yes" : "NO");
  return ok ? 0 : 1;
}
