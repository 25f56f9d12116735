// Tridiagonal.cpp - Batched tridiagonal solves along one dimension of a block.
// SPDX-License-Identifier: Apache-2.0
//
// `solve tridiagonal(a, b, c, d) along k over block[range]` solves one
// system per grid line along dimension k of the range (opd_rt.h,
// opd_solve_tridiagonal) by Thomas's algorithm, which is Gaussian
// elimination without pivoting:
//   forward   m_0 = b_0,                     c'_0 = c_0 / m_0,
//             d'_0 = d_0 / m_0,
//             m_r = b_r - a_r c'_{r-1},      c'_r = c_r / m_r,
//             d'_r = (d_r - a_r d'_{r-1}) / m_r          (r = 1 .. n-1)
//   backward  x_{n-1} = d'_{n-1},  x_r = d'_r - c'_r x_{r+1}
// (each row takes one reciprocal 1/m_r and multiplies by it). a_0 and
// c_{n-1} are not part of the system and are never read. Along dimension
// 1 or 2, d' overwrites d in place and then x overwrites d'; c' lives in
// per-thread scratch. Along dimension 0, c' and d' live in scratch and x
// is written to d. Either way a, b and c are left unchanged. Without
// pivoting the pivots m_r stay away from zero when the matrix is
// diagonally dominant; a pivot that is zero, not finite or too small to
// invert stops the program naming the system and row.
//
// Vectorisation: the recurrence runs along a line, so SIMD lanes take
// different systems.
//   * Along dimension 1 or 2, neighbouring systems are neighbours in
//     memory along dimension 0: a work unit is a panel of up to W systems
//     with consecutive i0 (and one index of the third dimension), and each
//     row of the sweeps is a unit-stride loop over the panel's lanes. Wide
//     panels (up to 512 lanes, a 4 KiB run of each dat per row for f64) let
//     the hardware prefetchers follow the rows; when a run is shorter
//     than a page and the rows lie in different pages (along 2), the
//     forward sweep prefetches the runs two rows ahead itself. Keeping d'
//     in scratch too (so that the backward sweep reads it from L2) with
//     panels narrow enough for 2 MiB measured no faster
//     (bench/solvers/README.md).
//   * Along dimension 0 (contiguous), a work unit is a group of
//     consecutive lines, transposed so that lanes take lines. For f64 on
//     SSE2, groups of 8 lines with the transposes in registers
//     (solveGroupF64): a 16-byte load holds two rows of one line, an
//     unpack with the next line's load gives two rows of a lane pair; the
//     backward sweep packs x the same way. Only c' and d' (n x 8 each) go
//     to scratch. Otherwise (f32, a last partial group) groups of 16
//     lines transposed tile by tile (16 rows of a, b, c and d) into an
//     L1-resident buffer, x transposed back tile by tile; lanes past the
//     last line get trivial systems (b = 1), which keep the lane loops
//     full. With the tiles, 16 lanes kept more of the c' recurrence's
//     latency in flight than 8; with the register transposes 8 lanes are
//     faster (half the scratch, 32 streams of the dats that the hardware
//     prefetchers follow, against 64): bench/solvers/README.md.
// The lane loops are `omp simd` loops with restrict pointers and no branch
// (the pivot test is a floating-point probe, pivotProbe); GCC 12 vectorises
// all of them (-fopt-info-vec, and divpd/divps in the object code).
//
// Threads take whole work units (OpenMP, static schedule). The units and
// their widths depend on the range and element type only, and every
// system's arithmetic is the same whatever lane or unit it lands in, so
// results are bitwise identical for any thread count.
//
// Along a dimension that the MPI ranks split, TridiagonalSplit.cpp solves
// (Tridsolver's hybrid algorithm); every other case is solved here, each
// rank on the lines of its own part.
#include "solvers/Tridiagonal.h"

#include "core/Dist.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace opdc::rt {
namespace {
ReducedSolver reducedMethod = ReducedSolver::PCR;
} // namespace

ReducedSolver reducedSolver() { return reducedMethod; }
void setReducedSolver(ReducedSolver s) { reducedMethod = s; }

namespace {
using namespace tridiag;

/// Panels are as wide as MaxPanelWidth lanes, less when a line is so long
/// that the panel's c' scratch (n W values) would pass PanelBudgetBytes.
constexpr int64_t PanelBudgetBytes = int64_t(16) << 20;
constexpr int64_t MinPanelWidth = 8, MaxPanelWidth = 512;

/// The lanes of panels along dimensions 1 and 2 for lines of `n` points.
int64_t panelWidth(int64_t n, int64_t bytes) {
  int64_t w = PanelBudgetBytes / std::max<int64_t>(1, n * bytes);
  w = std::clamp(w, MinPanelWidth, MaxPanelWidth);
  return w / MinPanelWidth * MinPanelWidth;
}


/// Forward sweep over `w` lanes for row r > 0: c' and d' of row r (cp,
/// dp) from those of row r - 1 (cpPrev, dpPrev); adds the pivot probes to
/// `probe`.
template <typename T>
[[gnu::always_inline]] inline void forwardRow(int64_t w, const T *__restrict a, const T *__restrict b,
                       const T *__restrict c, const T *__restrict d,
                       const T *__restrict dpPrev, const T *__restrict cpPrev,
                       T *__restrict cp, T *__restrict dp,
                       T *__restrict probe) {
#pragma omp simd
  for (int64_t l = 0; l < w; ++l) {
    const T m = b[l] - a[l] * cpPrev[l];
    const T inv = T(1) / m;
    probe[l] += pivotProbe(m, inv);
    cp[l] = c[l] * inv;
    dp[l] = (d[l] - a[l] * dpPrev[l]) * inv;
  }
}

/// Row 0 of the forward sweep; sets the probes.
template <typename T>
[[gnu::always_inline]] inline void forwardFirst(int64_t w, const T *__restrict b,
                         const T *__restrict c, const T *__restrict d,
                         T *__restrict cp, T *__restrict dp,
                         T *__restrict probe) {
#pragma omp simd
  for (int64_t l = 0; l < w; ++l) {
    const T m = b[l];
    const T inv = T(1) / m;
    probe[l] = pivotProbe(m, inv);
    cp[l] = c[l] * inv;
    dp[l] = d[l] * inv;
  }
}

/// forwardRow with d' stored over d (row r of d in, d' out; dpPrev is the
/// row before in d).
template <typename T>
[[gnu::always_inline]] inline void forwardRowInPlace(int64_t w, const T *__restrict a,
                              const T *__restrict b, const T *__restrict c,
                              T *__restrict d, const T *__restrict dpPrev,
                              const T *__restrict cpPrev, T *__restrict cp,
                              T *__restrict probe) {
#pragma omp simd
  for (int64_t l = 0; l < w; ++l) {
    const T m = b[l] - a[l] * cpPrev[l];
    const T inv = T(1) / m;
    probe[l] += pivotProbe(m, inv);
    cp[l] = c[l] * inv;
    d[l] = (d[l] - a[l] * dpPrev[l]) * inv;
  }
}

/// forwardFirst with d' stored over d.
template <typename T>
[[gnu::always_inline]] inline void forwardFirstInPlace(int64_t w, const T *__restrict b,
                                const T *__restrict c, T *__restrict d,
                                T *__restrict cp, T *__restrict probe) {
#pragma omp simd
  for (int64_t l = 0; l < w; ++l) {
    const T m = b[l];
    const T inv = T(1) / m;
    probe[l] = pivotProbe(m, inv);
    cp[l] = c[l] * inv;
    d[l] = d[l] * inv;
  }
}

/// Whether a lane met a bad pivot.
template <typename T>
[[gnu::always_inline]] inline bool anyBad(int64_t w, const T *probe) {
  bool bad = false;
  for (int64_t l = 0; l < w; ++l)
    bad |= !(probe[l] == T(0));
  return bad;
}

/// Backward substitution of row r from row r + 1 (xn), in place: d' of
/// row r becomes x_r = d'_r - c'_r x_{r+1}.
template <typename T>
[[gnu::always_inline]] inline void backwardInPlace(int64_t w, T *__restrict d, const T *__restrict cp,
                            const T *__restrict xn) {
#pragma omp simd
  for (int64_t l = 0; l < w; ++l)
    d[l] -= cp[l] * xn[l];
}


/// Records unit u as failed, keeping the lowest failed unit.
void noteFailure(std::atomic<int64_t> &first, int64_t u) {
  int64_t seen = first.load(std::memory_order_relaxed);
  while (u < seen && !first.compare_exchange_weak(seen, u))
    ;
}

/// Rows ahead that solveStrided prefetches when the hardware would not.
constexpr int64_t PrefetchRows = 2;

/// Asks for the cache lines of the run p[0 .. w).
template <typename T>
[[gnu::always_inline]] inline void prefetchRun(const T *p, int64_t w) {
  const char *c = reinterpret_cast<const char *>(p);
  for (int64_t b = 0; b < w * int64_t(sizeof(T)); b += 64)
    __builtin_prefetch(c + b, 0, 3);
}

/// One panel along dimension 1 or 2: the sweeps over n rows of w lanes
/// (rows r of a, b, c, d at pa + r sa, ...; c' rows of W lanes at cp).
/// False when a pivot was bad (d then holds d' of some rows).
struct Panel {
  int64_t n, w, W;
  int64_t sa, sb, sc, sd;
  bool fetchAhead;
};
template <typename T>
[[gnu::always_inline]] inline bool panelSweeps(const Panel &q, const T *pa,
                                               const T *pb, const T *pc, T *pd,
                                               T *cp, T *bad) {
  const int64_t n = q.n, w = q.w, W = q.W;
  forwardFirstInPlace(w, pb, pc, pd, cp, bad);
  for (int64_t r = 1; r < n; ++r) {
    if (q.fetchAhead && r + PrefetchRows < n) {
      const int64_t f = r + PrefetchRows;
      prefetchRun(pa + f * q.sa, w);
      prefetchRun(pb + f * q.sb, w);
      prefetchRun(pc + f * q.sc, w);
      prefetchRun(pd + f * q.sd, w);
    }
    forwardRowInPlace(w, pa + r * q.sa, pb + r * q.sb, pc + r * q.sc,
                      pd + r * q.sd, pd + (r - 1) * q.sd, cp + (r - 1) * W,
                      cp + r * W, bad);
  }
  if (anyBad(w, bad))
    return false;
  for (int64_t r = n - 2; r >= 0; --r)
    backwardInPlace(w, pd + r * q.sd, cp + r * W, pd + (r + 1) * q.sd);
  return true;
}

// panelSweeps compiled for wider vectors, chosen at run time (panelKernel):
// the same lane loops, 4 or 8 doubles an instruction instead of SSE2's 2.
// Lanes are independent and the runtime is compiled with
// -ffp-contract=off (no fused multiply-adds), so every variant computes
// the same bits, and the widest the CPU has is the fastest
// (bench/solvers/README.md).
template <typename T>
using PanelKernel = bool (*)(const Panel &, const T *, const T *, const T *,
                             T *, T *, T *);
template <typename T>
bool panelSSE2(const Panel &q, const T *pa, const T *pb, const T *pc, T *pd,
               T *cp, T *bad) {
  return panelSweeps(q, pa, pb, pc, pd, cp, bad);
}
#if defined(__x86_64__) && defined(__GNUC__)
template <typename T>
__attribute__((target("avx2"))) bool panelAVX2(const Panel &q, const T *pa,
                                               const T *pb, const T *pc, T *pd,
                                               T *cp, T *bad) {
  return panelSweeps(q, pa, pb, pc, pd, cp, bad);
}
template <typename T>
__attribute__((target("avx512f,prefer-vector-width=512"))) bool
panelAVX512(const Panel &q, const T *pa, const T *pb, const T *pc, T *pd,
            T *cp, T *bad) {
  return panelSweeps(q, pa, pb, pc, pd, cp, bad);
}
#endif

/// The widest panel kernel this CPU runs and OPD_SIMD allows.
template <typename T> PanelKernel<T> panelKernel() {
#if defined(__x86_64__) && defined(__GNUC__)
  switch (simdLimit()) {
  case SimdLevel::AVX512:
    if (__builtin_cpu_supports("avx512f"))
      return panelAVX512<T>;
    [[fallthrough]];
  case SimdLevel::AVX2:
    if (__builtin_cpu_supports("avx2"))
      return panelAVX2<T>;
    [[fallthrough]];
  case SimdLevel::SSE2:
    break;
  }
#endif
  return panelSSE2<T>;
}

// Along dimension 1 or 2: panels of up to W systems with consecutive i0.
template <typename T> void solveStrided(const Problem &p) {
  View<T> a(p.dats[0]), b(p.dats[1]), c(p.dats[2]), d(p.dats[3]);
  const int k = p.along;
  // The third dimension (neither 0 nor k), or none (a range of one).
  const int o = p.dims == 3 ? 3 - k : -1;
  const int64_t oLo = o < 0 ? 0 : p.lo[o], oN = o < 0 ? 1 : p.hi[o] - p.lo[o];
  const int64_t n0 = p.hi[0] - p.lo[0], n = p.n;
  // No wider than the rows (rounded up to whole vectors): the scratch rows
  // stay dense.
  const int64_t W =
      std::min(panelWidth(n, sizeof(T)),
               (n0 + MinPanelWidth - 1) / MinPanelWidth * MinPanelWidth);
  const int64_t chunks = (n0 + W - 1) / W, units = oN * chunks;
  const int64_t sa = a.stride[k], sb = b.stride[k], sc = c.stride[k],
                sd = d.stride[k];
  auto unitStart = [&](int64_t u, int64_t *start, int64_t &w) {
    start[0] = p.lo[0] + (u % chunks) * W;
    start[k] = p.lo[k];
    if (o >= 0)
      start[o] = oLo + u / chunks;
    else
      start[2] = 0;
    w = std::min(W, p.hi[0] - start[0]);
  };
  // A panel's rows are runs of W values. When a run is shorter than a page
  // and the next row lies in another page (along 2 of 256^3: runs of 2 KiB
  // 512 KiB apart), the hardware prefetchers start afresh at every row:
  // the forward sweep asks for the runs PrefetchRows ahead itself (faster
  // there: docs/performance.md, "Figures from code comments"). Rows next to
  // each other in memory (along 1 of 256^3) or runs of whole pages (along 1
  // of 4096^2) are left to the hardware, which measured faster for them.
  const int64_t page = 4096 / int64_t(sizeof(T));
  const bool fetchAhead =
      W < page && std::min({sa, sb, sc, sd}) >= page && n > PrefetchRows;
  const PanelKernel<T> kernel = panelKernel<T>();
  std::atomic<int64_t> failed{INT64_MAX};
#pragma omp parallel if (units > 1)
  {
    // c' of the panel, rows of W lanes, starting 512 bytes into the
    // allocation: page-aligned c' rows of the same length as d's rows
    // (along 1 of 256^3) 4 KiB-alias the rows of d in the L1, which
    // measured slower (docs/performance.md, "Figures from code comments").
    const int64_t skew = 512 / int64_t(sizeof(T));
    std::vector<T> scratch(static_cast<std::size_t>(n * W + skew));
    std::vector<T> probes(static_cast<std::size_t>(W));
    T *cp = scratch.data() + skew, *bad = probes.data();
#pragma omp for schedule(static)
    for (int64_t u = 0; u < units; ++u) {
      int64_t start[3] = {0, 0, 0}, w = 0;
      unitStart(u, start, w);
      const Panel q{n, w, W, sa, sb, sc, sd, fetchAhead};
      if (!kernel(q, a.at(start), b.at(start), c.at(start), d.at(start), cp,
                  bad))
        noteFailure(failed, u);
    }
  }
  const int64_t u = failed.load();
  if (u == INT64_MAX)
    return;
  int64_t start[3] = {0, 0, 0}, w = 0;
  unitStart(u, start, w);
  for (int64_t l = 0; l < w; ++l) {
    double pivot = 0;
    const int64_t row = firstBadRow(a.at(start) + l, sa, b.at(start) + l, sb,
                                    c.at(start) + l, sc, n, pivot);
    if (row >= 0) {
      start[0] += l;
      failPivot(p, start, row, pivot);
    }
  }
  failf("internal error: tridiagonal solve of %s: a bad pivot vanished",
        p.dats[3]->describe().c_str());
}

#if defined(__SSE2__)
/// Lanes of an along-0 group of f64 lines: four lane pairs.
constexpr int64_t F64GroupLanes = 8;

/// One full group of L f64 lines along dimension 0 (n >= 2), with the
/// transposes in registers. Forward: a 16-byte load takes two rows of one
/// line, and unpacking the loads of two lines gives both rows of a lane
/// pair, which the sweep uses at once; backward: two rows of x of a lane
/// pair unpack into two rows of each line, stored at once. The tile path
/// stores the transposed rows to a tile and loads them back (five stores
/// a point against three here). c' and d' go to scratch rows of L lanes.
/// Each system's arithmetic is that of forwardFirst, forwardRow and
/// backwardInPlace in the same order: the same bits as the tile path and
/// as the panels along 1 and 2. Returns false, having written nothing to
/// d, when a pivot is bad.
template <int64_t L>
inline bool solveGroupF64(const double *const (&from)[4][L],
                          double *const (&to)[L], int64_t n,
                          double *__restrict cp, double *__restrict dp) {
  constexpr int J = int(L / 2); // lane pairs
  const __m128d zero = _mm_setzero_pd(), one = _mm_set1_pd(1.0);
  __m128d probe[J], cv[J], dv[J];
  // Row r > 0 of lane pair j from row r - 1 (cv, dv).
  auto row = [&](int j, int64_t r, __m128d a, __m128d b, __m128d c,
                 __m128d d) {
    const __m128d m = _mm_sub_pd(b, _mm_mul_pd(a, cv[j]));
    const __m128d inv = _mm_div_pd(one, m);
    probe[j] = _mm_add_pd(probe[j], _mm_mul_pd(_mm_add_pd(m, inv), zero));
    cv[j] = _mm_mul_pd(c, inv);
    dv[j] = _mm_mul_pd(_mm_sub_pd(d, _mm_mul_pd(a, dv[j])), inv);
    _mm_storeu_pd(cp + r * L + 2 * j, cv[j]);
    _mm_storeu_pd(dp + r * L + 2 * j, dv[j]);
  };
  // Rows r and r + 1 of dat i for lane pair j.
  auto rowPair = [&](int i, int j, int64_t r, __m128d &lo, __m128d &hi) {
    const __m128d x = _mm_loadu_pd(from[i][2 * j] + r),
                  y = _mm_loadu_pd(from[i][2 * j + 1] + r);
    lo = _mm_unpacklo_pd(x, y);
    hi = _mm_unpackhi_pd(x, y);
  };
  for (int j = 0; j < J; ++j) {
    __m128d lo[4], hi[4];
    for (int i = 0; i < 4; ++i)
      rowPair(i, j, 0, lo[i], hi[i]);
    const __m128d m = lo[1];
    const __m128d inv = _mm_div_pd(one, m);
    probe[j] = _mm_mul_pd(_mm_add_pd(m, inv), zero);
    cv[j] = _mm_mul_pd(lo[2], inv);
    dv[j] = _mm_mul_pd(lo[3], inv);
    _mm_storeu_pd(cp + 2 * j, cv[j]);
    _mm_storeu_pd(dp + 2 * j, dv[j]);
    row(j, 1, hi[0], hi[1], hi[2], hi[3]);
  }
  const int64_t even = n / 2 * 2;
  for (int64_t r = 2; r < even; r += 2)
    for (int j = 0; j < J; ++j) {
      __m128d lo[4], hi[4];
      for (int i = 0; i < 4; ++i)
        rowPair(i, j, r, lo[i], hi[i]);
      row(j, r, lo[0], lo[1], lo[2], lo[3]);
      row(j, r + 1, hi[0], hi[1], hi[2], hi[3]);
    }
  if (even < n)
    for (int j = 0; j < J; ++j) {
      __m128d v[4];
      for (int i = 0; i < 4; ++i)
        v[i] = _mm_loadh_pd(_mm_load_sd(from[i][2 * j] + even),
                            from[i][2 * j + 1] + even);
      row(j, even, v[0], v[1], v[2], v[3]);
    }
  __m128d bad = zero;
  for (int j = 0; j < J; ++j)
    bad = _mm_or_pd(bad, _mm_cmpneq_pd(probe[j], zero)); // NaN too
  if (_mm_movemask_pd(bad))
    return false;

  // Backward in registers: x of row n - 1 is its d'; then pairs of rows
  // downwards, each pair unpacked into two rows of each line and stored.
  auto pairStore = [&](int j, int64_t r, __m128d x0, __m128d x1) {
    _mm_storeu_pd(to[2 * j] + r, _mm_unpacklo_pd(x0, x1));
    _mm_storeu_pd(to[2 * j + 1] + r, _mm_unpackhi_pd(x0, x1));
  };
  auto xOf = [&](int64_t g, int j, __m128d xn) {
    return _mm_sub_pd(_mm_loadu_pd(dp + g * L + 2 * j),
                      _mm_mul_pd(_mm_loadu_pd(cp + g * L + 2 * j), xn));
  };
  __m128d xv[J];
  int64_t r = even - 2;
  if (even < n) {
    for (int j = 0; j < J; ++j) {
      xv[j] = _mm_loadu_pd(dp + even * L + 2 * j);
      _mm_storel_pd(to[2 * j] + even, xv[j]);
      _mm_storeh_pd(to[2 * j + 1] + even, xv[j]);
    }
  } else {
    for (int j = 0; j < J; ++j) {
      const __m128d x1 = _mm_loadu_pd(dp + (r + 1) * L + 2 * j);
      xv[j] = xOf(r, j, x1);
      pairStore(j, r, xv[j], x1);
    }
    r -= 2;
  }
  for (; r >= 0; r -= 2)
    for (int j = 0; j < J; ++j) {
      const __m128d x1 = xOf(r + 1, j, xv[j]);
      xv[j] = xOf(r, j, x1);
      pairStore(j, r, xv[j], x1);
    }
  return true;
}
#endif

// Along dimension 0: groups of 16 lines, transposed tile by tile.
template <typename T, int64_t L> void solveContiguous(const Problem &p) {
  View<T> a(p.dats[0]), b(p.dats[1]), c(p.dats[2]), d(p.dats[3]);
  constexpr int64_t R = TileRows;
  const int64_t n = p.n, n1 = p.hi[1] - p.lo[1], n2 = p.hi[2] - p.lo[2];
  const int64_t lines = n1 * n2, units = (lines + L - 1) / L;
  // The first point of line q (i1 fastest).
  auto lineStart = [&](int64_t q, int64_t *start) {
    start[0] = p.lo[0];
    start[1] = p.lo[1] + q % n1;
    start[2] = p.lo[2] + q / n1;
  };
  std::atomic<int64_t> failed{INT64_MAX};
#pragma omp parallel if (units > 1)
  {
    // c' and d' of the group (rows of 8 lanes, d' a cache line past c' so
    // that their rows do not alias in the L1), and one tile of a, b, c, d.
    const int64_t pad = 64 / int64_t(sizeof(T));
    std::vector<T> scratch(std::size_t(2 * n * L + pad + 4 * (R * L + pad)));
    T bad[L];
    T *cp = scratch.data(), *dp = cp + n * L + pad, *tile = dp + n * L;
    T *ta = tile, *tb = ta + R * L + pad, *tc = tb + R * L + pad,
      *td = tc + R * L + pad;
    const T *from[4][L];
    T *to[L];
#pragma omp for schedule(static)
    for (int64_t u = 0; u < units; ++u) {
      const int64_t lanes = std::min(L, lines - u * L);
      for (int64_t l = 0; l < lanes; ++l) {
        int64_t start[3];
        lineStart(u * L + l, start);
        from[0][l] = a.at(start);
        from[1][l] = b.at(start);
        from[2][l] = c.at(start);
        from[3][l] = to[l] = d.at(start);
      }
#if defined(__SSE2__)
      if constexpr (sizeof(T) == 8) {
        if (lanes == L && n >= 2) {
          if (!solveGroupF64(from, to, n, cp, dp))
            noteFailure(failed, u);
          continue;
        }
      }
#endif
      for (int64_t r0 = 0; r0 < n; r0 += R) {
        const int64_t rows = std::min(R, n - r0);
        T *tiles[4] = {ta, tb, tc, td};
        for (int i = 0; i < 4; ++i)
          loadTile<T, L>(tiles[i], from[i], lanes, r0, rows, i == 1 ? 1 : 0);
        int64_t r = 0;
        if (r0 == 0) {
          forwardFirst(L, tb, tc, td, cp, dp, bad);
          r = 1;
        }
        for (; r < rows; ++r) {
          const int64_t g = r0 + r;
          forwardRow(L, ta + r * L, tb + r * L, tc + r * L, td + r * L,
                     dp + (g - 1) * L, cp + (g - 1) * L, cp + g * L,
                     dp + g * L, bad);
        }
      }
      if (anyBad(L, bad)) {
        noteFailure(failed, u);
        continue;
      }
      // Backward, tile by tile from the last, each tile of x stored to d
      // as soon as it is done.
      for (int64_t r0 = (n - 1) / R * R; r0 >= 0; r0 -= R) {
        const int64_t rows = std::min(R, n - r0);
        for (int64_t g = r0 + rows - 1; g >= r0; --g)
          if (g < n - 1)
            backwardInPlace(L, dp + g * L, cp + g * L, dp + (g + 1) * L);
        storeTile<T, L>(to, dp + r0 * L, lanes, r0, rows);
      }
    }
  }
  const int64_t u = failed.load();
  if (u == INT64_MAX)
    return;
  for (int64_t l = 0; l < std::min(L, lines - u * L); ++l) {
    int64_t start[3];
    lineStart(u * L + l, start);
    double pivot = 0;
    const int64_t row =
        firstBadRow(a.at(start), 1, b.at(start), 1, c.at(start), 1, n, pivot);
    if (row >= 0)
      failPivot(p, start, row, pivot);
  }
  failf("internal error: tridiagonal solve of %s: a bad pivot vanished",
        p.dats[3]->describe().c_str());
}

const char *const Roles[4] = {"a", "b", "c", "d"};

// The checks of opd_solve_tridiagonal, one message each.
void checkDats(opd_dat *const *dats, int along) {
  for (int i = 0; i < 4; ++i)
    if (!dats[i] || !dats[i]->block)
      failf("internal error: tridiagonal solve: argument %s is not a block "
            "dat",
            Roles[i]);
  opd_dat *d = dats[3];
  const opd_block *block = d->block;
  if (along < 0 || along >= block->dims)
    failf("internal error: tridiagonal solve of %s along dimension %d of a "
          "%dD block",
          d->describe().c_str(), along, block->dims);
  for (int i = 0; i < 4; ++i) {
    opd_dat *x = dats[i];
    if (x->block != block)
      failf("tridiagonal solve of %s: %s (argument %s) is on another block",
            d->describe().c_str(), x->describe().c_str(), Roles[i]);
    if (x->type != OPD_F64 && x->type != OPD_F32)
      failf("tridiagonal solve of %s: %s (argument %s) holds %s; the solver "
            "takes f64 or f32",
            d->describe().c_str(), x->describe().c_str(), Roles[i],
            scalarName(x->type));
    if (x->type != d->type)
      failf("tridiagonal solve of %s: %s (argument %s) holds %s, d holds %s",
            d->describe().c_str(), x->describe().c_str(), Roles[i],
            scalarName(x->type), scalarName(d->type));
    if (x->dim != 1)
      failf("tridiagonal solve of %s: %s (argument %s) has %d components "
            "per point; the solver takes one",
            d->describe().c_str(), x->describe().c_str(), Roles[i], x->dim);
    if (i < 3 && x == d)
      failf("tridiagonal solve of %s: the right-hand side is also argument "
            "%s; the solution overwrites it",
            d->describe().c_str(), Roles[i]);
  }
}

} // namespace

void tridiag::failPivot(const Problem &p, const int64_t *start, int64_t row,
                        double pivot) {
  std::string where, point;
  for (int k = 0; k < p.dims; ++k) {
    const std::string sep = k ? ", " : "";
    where += sep + (k == p.along ? std::string("*") : std::to_string(start[k]));
    point += sep + std::to_string(k == p.along ? p.lo[k] + row : start[k]);
  }
  failf("tridiagonal solve of %s along dimension %d: %s pivot (%g) in row "
        "%" PRId64 " of the system at (%s), point (%s); Thomas's algorithm "
        "does not pivot, so every system must be diagonally dominant "
        "(|b| >= |a| + |c| in every row, strictly in at least one)",
        p.dats[3]->describe().c_str(), p.along,
        pivot == 0              ? "zero"
        : !std::isfinite(pivot) ? "non-finite"
                                : "near-zero",
        pivot, row + p.rowOffset, where.c_str(), point.c_str());
}

} // namespace opdc::rt

using namespace opdc::rt;
using namespace opdc::rt::tridiag;

namespace {
// The checks and the clipping that every entry point shares: fills `p`;
// returns false when this rank has nothing to do.
bool prepare(opd_dat *a, opd_dat *b, opd_dat *c, opd_dat *d, int along,
             const int64_t *lo, const int64_t *hi, Problem &p, bool &split) {
  dist::settleExchanges();
  p.dats[0] = a;
  p.dats[1] = b;
  p.dats[2] = c;
  p.dats[3] = d;
  checkDats(p.dats, along);
  const opd_block *block = d->block;
  p.dims = block->dims;
  p.along = along;
  for (int k = 0; k < p.dims; ++k) {
    // The whole block: d's interior points.
    int64_t l = lo ? lo[k] : d->base[k],
            h = hi ? hi[k] : d->base[k] + d->size[k];
    // Owner computes, as loops do: the rank's part of the range.
    const int64_t unclipped = l;
    if (l < h) {
      l = std::max(l, block->ownLo[k]);
      h = std::max(l, std::min(h, block->ownHi[k]));
    }
    p.lo[k] = l;
    p.hi[k] = std::max(l, h);
    if (k == along)
      p.rowOffset = l - unclipped;
  }
  // Split along the solve dimension: every rank of a line takes part in
  // the reduced solve, even with no rows of it.
  split = !block->edgeLo[along] || !block->edgeHi[along];
  for (int k = 0; k < 3; ++k)
    if (p.hi[k] <= p.lo[k] && !(split && k == along))
      return false;
  for (opd_dat *x : p.dats)
    for (int k = 0; k < p.dims; ++k)
      if (p.hi[k] > p.lo[k] &&
          (p.lo[k] < x->first[k] || p.hi[k] > x->first[k] + x->stored[k]))
        failf("tridiagonal solve of %s: the range [%" PRId64 ", %" PRId64
              ") of dimension %d reaches outside %s (valid indices %" PRId64
              " to %" PRId64 ")",
              d->describe().c_str(), p.lo[k], p.hi[k], k, x->describe().c_str(),
              x->first[k], x->first[k] + x->stored[k] - 1);
  p.n = p.hi[along] - p.lo[along];
  return true;
}
} // namespace

void opd_solve_tridiagonal(opd_dat *a, opd_dat *b, opd_dat *c, opd_dat *d,
                           int along, const int64_t *lo, const int64_t *hi) {
  Problem p;
  bool split = false;
  if (!prepare(a, b, c, d, along, lo, hi, p, split))
    return;
  const bool f64 = d->type == OPD_F64;
  if (split)
    f64 ? solveDistributed<double>(p) : solveDistributed<float>(p);
  else if (along == 0)
    f64 ? solveContiguous<double, F64GroupLanes>(p)
        : solveContiguous<float, GroupLanes>(p);
  else
    f64 ? solveStrided<double>(p) : solveStrided<float>(p);
  // d changed: other ranks' copies of its points are stale.
  d->haloValid = 0;
  d->cornersValid = false;
}

int32_t opd_solve_tridiagonal_box(opd_dat *a, opd_dat *b, opd_dat *c,
                                  opd_dat *d, int along, const int64_t *lo,
                                  const int64_t *hi, opd_tridiag_box *box) {
  Problem p;
  bool split = false;
  if (!prepare(a, b, c, d, along, lo, hi, p, split))
    return 0;
  *box = opd_tridiag_box{};
  box->along = along;
  box->split = split;
  box->f64 = d->type == OPD_F64;
  for (int k = 0; k < 3; ++k) {
    box->lo[k] = p.lo[k];
    box->hi[k] = p.hi[k];
  }
  for (int i = 0; i < 4; ++i) {
    opd_dat *x = p.dats[i];
    const View<char> bytes(x); // origin and strides in elements
    const int64_t size = x->type == OPD_F64 ? 8 : 4;
    int64_t off = (static_cast<char *>(bytes.origin) -
                   static_cast<char *>(opd_dat_data(x))) /
                  size;
    for (int k = 0; k < 3; ++k) {
      box->stride[i][k] = bytes.stride[k];
      off += p.lo[k] * bytes.stride[k];
    }
    box->first[i] = off;
  }
  d->haloValid = 0;
  d->cornersValid = false;
  return 1;
}

void opd_solve_tridiagonal_reduced(opd_dat *a, opd_dat *b, opd_dat *c,
                                   opd_dat *d, int along, const int64_t *lo,
                                   const int64_t *hi, const void *reduced,
                                   void *ends) {
  Problem p;
  bool split = false;
  if (!prepare(a, b, c, d, along, lo, hi, p, split) || !split)
    failf("internal error: tridiagonal solve of %s: a reduced system "
          "without a split dimension",
          d->describe().c_str());
  if (d->type == OPD_F64)
    reducedForDevice<double>(p, static_cast<const double *>(reduced),
                             static_cast<double *>(ends));
  else
    reducedForDevice<float>(p, static_cast<const float *>(reduced),
                            static_cast<float *>(ends));
}

void opd_solve_tridiagonal_check(opd_dat *a, opd_dat *b, opd_dat *c, opd_dat *d,
                                 int along, const int64_t *lo,
                                 const int64_t *hi) {
  Problem p;
  bool split = false;
  if (!prepare(a, b, c, d, along, lo, hi, p, split) || p.n == 0)
    return;
  if (d->type == OPD_F64)
    checkPivots<double>(p, split);
  else
    checkPivots<float>(p, split);
}
