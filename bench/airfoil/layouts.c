// layouts.c - Would another data layout, or staging a block's data, speed up
// Airfoil's res_calc out of cache? A hand-written reference for issue #14's
// third item (docs/performance.md "Layouts and staging, measured by hand").
// SPDX-License-Identifier: Apache-2.0
//
// Reads OP2's mesh (new_grid.h5: pedge, pecell, p_x, p_q) and runs res_calc
// on one thread over the edges in the file's order, the way the generated
// loop does: strips of 64 edges, the fluxes of a strip computed first (the
// vectorisable part: gathers through the maps, arithmetic, no stores to
// shared cells), then scattered into res in edge order. Variants, each
// giving res bit for bit equal to the first's:
//
//   aos     x[n][2], q[c][4], res[c][4]: opdc's layout (and OP2's on CPUs)
//   soa     x[2][n], q[4][c], res[4][c]: a component's values contiguous
//   aosoa4  blocks of 4 elements, a component's 4 values contiguous
//   aosoa8  blocks of 8
//   staged  aos, and for each block of 2048 edges the cells and nodes it
//           reaches copied into contiguous buffers first (q, adt, x, res
//           in; res out), the maps renumbered to them once beforehand
//   prefetch  aos, each strip first prefetching (outside the vectorised
//           loop) the elements the strip two strips ahead gathers
//   strip   aos, each strip's gathered elements copied into contiguous
//           strip buffers first (a q row one 32-byte copy), the fluxes
//           computed from them (interleaved loads, no gathers)
//
// Each variant runs `calls` calls a round, `rounds` rounds alternating
// between variants; prints the best and the median ms a call and GB/s in
// the compulsory bytes (every dat and map once: x 16, q 32, adt 8, res
// 2 x 32 bytes an element, maps 16 bytes an edge), beside a STREAM triad of
// 3 x 256 MiB measured in the same run.
//
// build: built as build/bench/opd-airfoil-layouts; by hand:
//        clang-19 -O3 -march=native -ffp-contract=off -o layouts
//          bench/airfoil/layouts.c -I/usr/include/hdf5/serial
//          -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5
// run:   ./layouts new_grid.h5 [calls=10] [rounds=3]
#include <hdf5.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../stream/triad.h"
#include "grid_h5.h"

enum { STRIP = 64, STAGE_EDGES = 2048 };
static const double gm1 = 0.4, eps = 0.05;

static void *alloc(size_t bytes) { return grid_alloc("layouts", bytes); }

static void *read_all(hid_t file, const char *name, hid_t type, size_t elem,
                      hsize_t *rows) {
  return grid_read("layouts", file, name, type, elem, rows);
}

// The flux of one edge: OP2's res_calc with its four increments of res1
// (res2 gets their negation).
static inline void flux(double x10, double x11, double x20, double x21,
                        const double q1[4], const double q2[4], double adt1,
                        double adt2, double f[4]) {
  double dx = x10 - x20, dy = x11 - x21;
  double ri = 1.0 / q1[0];
  double p1 = gm1 * (q1[3] - 0.5 * ri * (q1[1] * q1[1] + q1[2] * q1[2]));
  double vol1 = ri * (q1[1] * dy - q1[2] * dx);
  ri = 1.0 / q2[0];
  double p2 = gm1 * (q2[3] - 0.5 * ri * (q2[1] * q2[1] + q2[2] * q2[2]));
  double vol2 = ri * (q2[1] * dy - q2[2] * dx);
  double mu = 0.5 * (adt1 + adt2) * eps;
  f[0] = 0.5 * (vol1 * q1[0] + vol2 * q2[0]) + mu * (q1[0] - q2[0]);
  f[1] = 0.5 * (vol1 * q1[1] + p1 * dy + vol2 * q2[1] + p2 * dy) +
         mu * (q1[1] - q2[1]);
  f[2] = 0.5 * (vol1 * q1[2] - p1 * dx + vol2 * q2[2] - p2 * dx) +
         mu * (q1[2] - q2[2]);
  f[3] =
      0.5 * (vol1 * (q1[3] + p1) + vol2 * (q2[3] + p2)) + mu * (q1[3] - q2[3]);
}

// Where component k of element i lives, for blocks of B elements (B = 1:
// AoS with D components; B = 0: SoA over n elements).
#define AT(i, k, D, B, n)                                                      \
  ((B) == 0 ? (size_t)(k) * (n) + (i)                                          \
   : (B) == 1                                                                  \
       ? (size_t)(i) * (D) + (k)                                               \
       : ((size_t)(i) / (B)) * (D) * (B) + (size_t)(k) * (B) + (i) % (B))

// One call of res_calc over edges [e0, e1) with element layout B; with PF,
// each strip first prefetches what the strip PF strips ahead gathers.
#define RES_CALC(NAME, B, PF)                                                  \
  static void NAME(int e0, int e1, const int *restrict edge,                   \
                   const int *restrict ecell, const double *restrict x,        \
                   const double *restrict q, const double *restrict adt,       \
                   double *restrict res, size_t nnode, size_t ncell) {         \
    double f[STRIP][4];                                                        \
    for (int s = e0; s < e1; s += STRIP) {                                     \
      int m = e1 - s < STRIP ? e1 - s : STRIP;                                 \
      if (PF && s + (PF + 1) * STRIP <= e1)                                    \
        for (int j = 0; j < STRIP; ++j) {                                      \
          int e = s + PF * STRIP + j;                                          \
          int c1 = ecell[2 * e], c2 = ecell[2 * e + 1];                        \
          __builtin_prefetch(&q[AT(c1, 0, 4, B, ncell)]);                      \
          __builtin_prefetch(&q[AT(c2, 0, 4, B, ncell)]);                      \
          __builtin_prefetch(&res[AT(c1, 0, 4, B, ncell)], 1);                 \
          __builtin_prefetch(&res[AT(c2, 0, 4, B, ncell)], 1);                 \
          __builtin_prefetch(&x[AT(edge[2 * e], 0, 2, B, nnode)]);             \
          __builtin_prefetch(&x[AT(edge[2 * e + 1], 0, 2, B, nnode)]);         \
        }                                                                      \
      for (int j = 0; j < m; ++j) {                                            \
        int e = s + j, n1 = edge[2 * e], n2 = edge[2 * e + 1];                 \
        int c1 = ecell[2 * e], c2 = ecell[2 * e + 1];                          \
        double q1[4], q2[4];                                                   \
        for (int k = 0; k < 4; ++k) {                                          \
          q1[k] = q[AT(c1, k, 4, B, ncell)];                                   \
          q2[k] = q[AT(c2, k, 4, B, ncell)];                                   \
        }                                                                      \
        flux(x[AT(n1, 0, 2, B, nnode)], x[AT(n1, 1, 2, B, nnode)],             \
             x[AT(n2, 0, 2, B, nnode)], x[AT(n2, 1, 2, B, nnode)], q1, q2,     \
             adt[c1], adt[c2], f[j]);                                          \
      }                                                                        \
      for (int j = 0; j < m; ++j) {                                            \
        int e = s + j, c1 = ecell[2 * e], c2 = ecell[2 * e + 1];               \
        for (int k = 0; k < 4; ++k) {                                          \
          res[AT(c1, k, 4, B, ncell)] += f[j][k];                              \
          res[AT(c2, k, 4, B, ncell)] -= f[j][k];                              \
        }                                                                      \
      }                                                                        \
    }                                                                          \
  }
// aos, each strip's gathered elements first copied into contiguous strip
// buffers element by element (a whole q row is one 32-byte load and store),
// then the fluxes computed from the buffers, where the vectoriser reads the
// rows as interleaved groups (wide loads and shuffles) instead of one
// gather or scalar load per lane and component.
static void res_strip(int e0, int e1, const int *restrict edge,
                      const int *restrict ecell, const double *restrict x,
                      const double *restrict q, const double *restrict adt,
                      double *restrict res) {
  double f[STRIP][4];
  double sx1[STRIP][2], sx2[STRIP][2], sq1[STRIP][4], sq2[STRIP][4];
  double sa1[STRIP], sa2[STRIP];
  for (int s = e0; s < e1; s += STRIP) {
    int m = e1 - s < STRIP ? e1 - s : STRIP;
    for (int j = 0; j < m; ++j) {
      int e = s + j, n1 = edge[2 * e], n2 = edge[2 * e + 1];
      int c1 = ecell[2 * e], c2 = ecell[2 * e + 1];
      memcpy(sx1[j], &x[2 * (size_t)n1], 16);
      memcpy(sx2[j], &x[2 * (size_t)n2], 16);
      memcpy(sq1[j], &q[4 * (size_t)c1], 32);
      memcpy(sq2[j], &q[4 * (size_t)c2], 32);
      sa1[j] = adt[c1];
      sa2[j] = adt[c2];
    }
    for (int j = 0; j < m; ++j)
      flux(sx1[j][0], sx1[j][1], sx2[j][0], sx2[j][1], sq1[j], sq2[j], sa1[j],
           sa2[j], f[j]);
    for (int j = 0; j < m; ++j) {
      int e = s + j, c1 = ecell[2 * e], c2 = ecell[2 * e + 1];
      for (int k = 0; k < 4; ++k) {
        res[4 * (size_t)c1 + k] += f[j][k];
        res[4 * (size_t)c2 + k] -= f[j][k];
      }
    }
  }
}

RES_CALC(res_aos, 1, 0)
RES_CALC(res_soa, 0, 0)
RES_CALC(res_aosoa4, 4, 0)
RES_CALC(res_aosoa8, 8, 0)
RES_CALC(res_prefetch, 1, 2)

// Staging: per block of edges, the cells and nodes it reaches in order of
// first use, and the block's maps into those lists.
typedef struct {
  int nblocks;
  int *cellStart, *cells; // cells of block b: cells[cellStart[b] ..]
  int *nodeStart, *nodes;
  int *ledge, *lecell; // maps into the block's lists, 2 an edge
  int maxCells, maxNodes;
} Stage;

static void stage_plan(Stage *st, int nedge, const int *edge, const int *ecell,
                       int nnode, int ncell) {
  st->nblocks = (nedge + STAGE_EDGES - 1) / STAGE_EDGES;
  st->cellStart = alloc(sizeof(int) * (size_t)(st->nblocks + 1));
  st->nodeStart = alloc(sizeof(int) * (size_t)(st->nblocks + 1));
  st->cells = alloc(sizeof(int) * 2 * (size_t)nedge);
  st->nodes = alloc(sizeof(int) * 2 * (size_t)nedge);
  st->ledge = alloc(sizeof(int) * 2 * (size_t)nedge);
  st->lecell = alloc(sizeof(int) * 2 * (size_t)nedge);
  int *cellMark = alloc(sizeof(int) * (size_t)ncell);
  int *nodeMark = alloc(sizeof(int) * (size_t)nnode);
  memset(cellMark, 0xff, sizeof(int) * (size_t)ncell);
  memset(nodeMark, 0xff, sizeof(int) * (size_t)nnode);
  int nc = 0, nn = 0;
  st->maxCells = st->maxNodes = 0;
  for (int b = 0; b < st->nblocks; ++b) {
    st->cellStart[b] = nc;
    st->nodeStart[b] = nn;
    int e1 = (b + 1) * STAGE_EDGES < nedge ? (b + 1) * STAGE_EDGES : nedge;
    for (int e = b * STAGE_EDGES; e < e1; ++e)
      for (int k = 0; k < 2; ++k) {
        int c = ecell[2 * e + k], n = edge[2 * e + k];
        if (cellMark[c] < st->cellStart[b]) {
          cellMark[c] = nc;
          st->cells[nc++] = c;
        }
        if (nodeMark[n] < st->nodeStart[b]) {
          nodeMark[n] = nn;
          st->nodes[nn++] = n;
        }
        st->lecell[2 * e + k] = cellMark[c] - st->cellStart[b];
        st->ledge[2 * e + k] = nodeMark[n] - st->nodeStart[b];
      }
    if (nc - st->cellStart[b] > st->maxCells)
      st->maxCells = nc - st->cellStart[b];
    if (nn - st->nodeStart[b] > st->maxNodes)
      st->maxNodes = nn - st->nodeStart[b];
  }
  st->cellStart[st->nblocks] = nc;
  st->nodeStart[st->nblocks] = nn;
  free(cellMark);
  free(nodeMark);
}

static void res_staged(const Stage *st, int nedge, const double *restrict x,
                       const double *restrict q, const double *restrict adt,
                       double *restrict res, double *restrict lx,
                       double *restrict lq, double *restrict ladt,
                       double *restrict lres) {
  for (int b = 0; b < st->nblocks; ++b) {
    const int *cells = st->cells + st->cellStart[b];
    const int *nodes = st->nodes + st->nodeStart[b];
    int nc = st->cellStart[b + 1] - st->cellStart[b];
    int nn = st->nodeStart[b + 1] - st->nodeStart[b];
    for (int i = 0; i < nc; ++i) {
      memcpy(lq + 4 * i, q + 4 * (size_t)cells[i], 32);
      memcpy(lres + 4 * i, res + 4 * (size_t)cells[i], 32);
      ladt[i] = adt[cells[i]];
    }
    for (int i = 0; i < nn; ++i)
      memcpy(lx + 2 * i, x + 2 * (size_t)nodes[i], 16);
    int e0 = b * STAGE_EDGES;
    int e1 = e0 + STAGE_EDGES < nedge ? e0 + STAGE_EDGES : nedge;
    // The block's maps point into its lists: edge e's are at 2 e.
    res_aos(0, e1 - e0, st->ledge + 2 * (size_t)e0, st->lecell + 2 * (size_t)e0,
            lx, lq, ladt, lres, (size_t)nn, (size_t)nc);
    for (int i = 0; i < nc; ++i)
      memcpy(res + 4 * (size_t)cells[i], lres + 4 * i, 32);
  }
}

static void relayout(const double *aos, double *out, size_t n, int D, int B) {
  for (size_t i = 0; i < n; ++i)
    for (int k = 0; k < D; ++k)
      out[AT(i, k, D, B, n)] = aos[i * (size_t)D + (size_t)k];
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: layouts new_grid.h5 [calls=10] [rounds=3]\n");
    return 2;
  }
  int calls = argc > 2 ? atoi(argv[2]) : 10;
  int rounds = argc > 3 ? atoi(argv[3]) : 3;
  if (calls < 1 || rounds < 1) {
    fprintf(stderr, "layouts: calls and rounds must be at least 1\n");
    return 2;
  }
  hid_t file = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) {
    fprintf(stderr, "layouts: cannot open '%s'\n", argv[1]);
    return 1;
  }
  hsize_t nedge, ne2, nnode, ncell;
  int *edge = read_all(file, "pedge", H5T_NATIVE_INT, sizeof(int), &nedge);
  int *ecell = read_all(file, "pecell", H5T_NATIVE_INT, sizeof(int), &ne2);
  double *x = read_all(file, "p_x", H5T_NATIVE_DOUBLE, 8, &nnode);
  double *q = read_all(file, "p_q", H5T_NATIVE_DOUBLE, 8, &ncell);
  H5Fclose(file);
  // Every cell its own adt, as adt_calc leaves them (any positive values).
  double *adt = alloc(8 * ncell);
  for (size_t c = 0; c < ncell; ++c)
    adt[c] = 1.0 + 1e-3 * (double)(c % 1000);
  printf("mesh %s: %llu nodes, %llu cells, %llu edges\n", argv[1],
         (unsigned long long)nnode, (unsigned long long)ncell,
         (unsigned long long)nedge);
  const double bytes =
      16.0 * (double)nnode + (32.0 + 8.0 + 64.0) * ncell + 16.0 * (double)nedge;
  double tri = opd_bench_triad();
  printf("triad %.2f GB/s (1 thread, same run); compulsory %.1f MB a call\n",
         tri, bytes * 1e-6);

  enum { AOS, SOA, AOSOA4, AOSOA8, STAGED, PREFETCH, STRIPBUF, NV };
  const char *names[NV] = {"aos",    "soa",    "aosoa4",  "aosoa8",
                           "staged", "prefetch", "strip"};
  const int layout[NV] = {1, 0, 4, 8, 1, 1, 1};
  double *vx[NV], *vq[NV], *vres[NV];
  for (int v = 0; v < NV; ++v) {
    vx[v] = alloc(16 * (nnode + 8));
    vq[v] = alloc(32 * (ncell + 8));
    vres[v] = alloc(32 * (ncell + 8));
    relayout(x, vx[v], nnode, 2, layout[v]);
    relayout(q, vq[v], ncell, 4, layout[v]);
    memset(vres[v], 0, 32 * (ncell + 8));
  }
  Stage st;
  stage_plan(&st, (int)nedge, edge, ecell, (int)nnode, (int)ncell);
  printf("staging: %d blocks of %d edges, %.1f cells and %.1f nodes a block "
         "(at most %d, %d)\n",
         st.nblocks, STAGE_EDGES, (double)st.cellStart[st.nblocks] / st.nblocks,
         (double)st.nodeStart[st.nblocks] / st.nblocks, st.maxCells,
         st.maxNodes);
  double *lx = alloc(16 * (size_t)st.maxNodes),
         *lq = alloc(32 * (size_t)st.maxCells);
  double *ladt = alloc(8 * (size_t)st.maxCells),
         *lres = alloc(32 * (size_t)st.maxCells);

  double *times[NV];
  for (int v = 0; v < NV; ++v)
    times[v] = alloc(sizeof(double) * (size_t)(calls * rounds));
  for (int r = 0; r < rounds; ++r)
    for (int v = 0; v < NV; ++v)
      for (int c = 0; c < calls; ++c) {
        double t0 = opd_bench_now();
        switch (v) {
        case AOS:
          res_aos(0, (int)nedge, edge, ecell, vx[v], vq[v], adt, vres[v], nnode,
                  ncell);
          break;
        case SOA:
          res_soa(0, (int)nedge, edge, ecell, vx[v], vq[v], adt, vres[v], nnode,
                  ncell);
          break;
        case AOSOA4:
          res_aosoa4(0, (int)nedge, edge, ecell, vx[v], vq[v], adt, vres[v],
                     nnode, ncell);
          break;
        case AOSOA8:
          res_aosoa8(0, (int)nedge, edge, ecell, vx[v], vq[v], adt, vres[v],
                     nnode, ncell);
          break;
        case STAGED:
          res_staged(&st, (int)nedge, vx[v], vq[v], adt, vres[v], lx, lq, ladt,
                     lres);
          break;
        case PREFETCH:
          res_prefetch(0, (int)nedge, edge, ecell, vx[v], vq[v], adt, vres[v],
                       nnode, ncell);
          break;
        case STRIPBUF:
          res_strip(0, (int)nedge, edge, ecell, vx[v], vq[v], adt, vres[v]);
          break;
        }
        times[v][r * calls + c] = opd_bench_now() - t0;
      }

  // Every variant made the same increments in the same order.
  int ok = 1;
  for (int v = 1; v < NV; ++v)
    for (size_t c = 0; c < ncell && ok; ++c)
      for (int k = 0; k < 4; ++k)
        if (vres[v][AT(c, k, 4, layout[v], ncell)] !=
            vres[AOS][4 * c + (size_t)k]) {
          printf("layouts: %s differs from aos at cell %zu\n", names[v], c);
          ok = 0;
          break;
        }
  printf("res bit for bit equal in every variant: %s\n", ok ? "yes" : "NO");
  printf("%-8s %9s %9s %8s %8s %9s\n", "variant", "best ms", "median", "GB/s",
         "% triad", "vs aos");
  double aosBest = 0;
  for (int v = 0; v < NV; ++v) {
    int n = calls * rounds;
    qsort(times[v], (size_t)n, sizeof(double), cmp);
    double best = times[v][0], med = times[v][n / 2];
    if (v == AOS)
      aosBest = best;
    printf("%-8s %9.2f %9.2f %8.2f %7.1f%% %8.2fx\n", names[v], best * 1e3,
           med * 1e3, bytes / best * 1e-9, 100.0 * bytes / best * 1e-9 / tri,
           aosBest / best);
  }
  return ok ? 0 : 1;
}
