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
//     the hardware prefetchers follow the rows. Keeping d' in scratch too
//     (so that the backward sweep reads it from L2) with panels narrow
//     enough for 2 MiB and software prefetch measured no faster
//     (bench/solvers/README.md).
//   * Along dimension 0 (contiguous), a work unit is a group of 16
//     consecutive lines. The forward sweep transposes them tile by tile
//     (16 rows of the 16 lines of a, b, c and d, 16 KiB for f64, with SSE2
//     2 x 2 transposes) into an L1-resident buffer and sweeps the tile, so
//     only c' and d' (n x 16 each) go to scratch; the backward sweep
//     transposes each tile of x back into d as soon as it is done. Lanes
//     past the last line get trivial systems (b = 1), which keep the lane
//     loops full. 16 lanes rather than 8 keep more of the c' recurrence's
//     latency (a multiply, a subtraction, a division and a multiply per
//     row) in flight.
// The lane loops are `omp simd` loops with restrict pointers and no branch
// (the pivot test is a floating-point probe, pivotProbe); GCC 12 vectorises
// all of them (-fopt-info-vec, and divpd/divps in the object code).
//
// Threads take whole work units (OpenMP, static schedule). The units and
// their widths depend on the range and element type only, and every
// system's arithmetic is the same whatever lane or unit it lands in, so
// results are bitwise identical for any thread count.
//
// Distributed memory: each rank solves the lines of its own part of the
// other dimensions. When the ranks split the solve dimension too, each line
// is cut into one segment per rank and solved by the hybrid algorithm of
// Tridsolver (Laszlo, Giles and Appleyard 2016; Balogh 2023):
//   1. each rank runs the modified Thomas algorithm on its segment of rows
//      0 .. m-1, which leaves every row in the form
//        a'_r x_0 + x_r + c'_r x_{m-1} = d'_r             (0 < r < m-1)
//      and the first and last rows coupled to the neighbours' unknowns:
//        a'_0 x_{-1} + x_0 + c'_0 x_{m-1} = d'_0
//        a'_{m-1} x_0 + x_{m-1} + c'_{m-1} x_m = d'_{m-1}
//   2. those two rows per rank form a tridiagonal "reduced" system of 2P
//      rows (P ranks along the line), solved exactly by parallel cyclic
//      reduction (reducedByPCR): log2(2P) steps, each exchanging the two
//      rows of every line with the ranks max(1, s/2) below and above
//      (point-to-point messages, dist::shiftAlong), all lines in one
//      message. When a rank holds fewer than two rows of the lines (a
//      sub-range ending next to a rank boundary), the rows (one or none
//      from such a rank) are gathered on every rank of the line instead
//      (dist::allgatherAlong) and solved there by Thomas, in the same order
//      everywhere. The ranks first share their row counts to choose.
//   3. each rank takes x_0 and x_{m-1} of its segment from the reduced
//      solution and substitutes them: x_r = d'_r - a'_r x_0 - c'_r x_{m-1}.
// The elimination order differs from Thomas on the whole line, so the
// result agrees with the one-rank solve to round-off, not bit for bit; it
// does not depend on the thread count. This path is scalar per line (the
// lines of a thread run one after another); the whole-line solves above
// stay vectorised.
#include "core/Dist.h"
#include "core/Objects.h"
#include "core/Runtime.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace opdc::rt {
namespace {
ReducedSolver reducedMethod = ReducedSolver::PCR;
} // namespace

ReducedSolver reducedSolver() { return reducedMethod; }
void setReducedSolver(ReducedSolver s) { reducedMethod = s; }

namespace {

/// Lanes of one along-0 group (see the top of the file).
constexpr int64_t GroupLanes = 16;
/// Rows of one along-0 tile: 16 rows x 16 lanes x 4 dats, 16 KiB for f64,
/// stays in the L1 between its transpose and the forward sweep.
constexpr int64_t TileRows = 16;
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

/// One dat's element (0, 0, 0) and strides, in elements.
template <typename T> struct View {
  T *origin;
  int64_t stride[3] = {0, 0, 0};
  explicit View(opd_dat *dat) {
    int64_t s[3] = {1, 1, 1};
    origin = static_cast<T *>(opd_dat_origin(dat, s));
    for (int k = 0; k < dat->ndims; ++k)
      stride[k] = s[k];
  }
  T *at(const int64_t *p) const {
    return origin + p[0] * stride[0] + p[1] * stride[1] + p[2] * stride[2];
  }
};

/// The pivot test, in floating point so that it vectorises like the rest
/// (a bool-to-integer flag kept GCC 12 from vectorising the f64 lane loops
/// on SSE2): (m + 1/m) * 0 is 0 for a usable pivot m and NaN when m is zero
/// or so small that 1/m overflows, infinite or NaN. The sweeps add it up
/// per lane; NaN stays.
template <typename T> inline T pivotProbe(T m, T inv) {
  return (m + inv) * T(0);
}

/// Forward sweep over `w` lanes for row r > 0: c' and d' of row r (cp,
/// dp) from those of row r - 1 (cpPrev, dpPrev); adds the pivot probes to
/// `probe`.
template <typename T>
inline void forwardRow(int64_t w, const T *__restrict a, const T *__restrict b,
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
inline void forwardFirst(int64_t w, const T *__restrict b,
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
inline void forwardRowInPlace(int64_t w, const T *__restrict a,
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
inline void forwardFirstInPlace(int64_t w, const T *__restrict b,
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
template <typename T> bool anyBad(int64_t w, const T *probe) {
  bool bad = false;
  for (int64_t l = 0; l < w; ++l)
    bad |= !(probe[l] == T(0));
  return bad;
}

/// Backward substitution of row r from row r + 1 (xn), in place: d' of
/// row r becomes x_r = d'_r - c'_r x_{r+1}.
template <typename T>
inline void backwardInPlace(int64_t w, T *__restrict d, const T *__restrict cp,
                            const T *__restrict xn) {
#pragma omp simd
  for (int64_t l = 0; l < w; ++l)
    d[l] -= cp[l] * xn[l];
}

/// The first bad pivot of the line starting at a, b, c (stride s in each),
/// recomputed as the sweeps compute it; -1 when there is none.
template <typename T>
int64_t firstBadRow(const T *a, int64_t sa, const T *b, int64_t sb, const T *c,
                    int64_t sc, int64_t n, double &pivot) {
  T cpPrev = 0;
  for (int64_t r = 0; r < n; ++r) {
    const T m = r == 0 ? b[0] : b[r * sb] - a[r * sa] * cpPrev;
    const T inv = T(1) / m;
    if (!(pivotProbe(m, inv) == T(0))) {
      pivot = double(m);
      return r;
    }
    cpPrev = c[r * sc] * inv;
  }
  return -1;
}

/// Copies rows [r0, r0 + rows) of `lanes` lines (from[l] + r) into `tile`
/// (row-major, L lanes a row); lanes past `lanes` get `fill` (a trivial
/// system: a = c = d = 0, b = 1, whose x is 0).
template <typename T, int64_t L>
inline void loadTile(T *__restrict tile, const T *const *from, int64_t lanes,
                     int64_t r0, int64_t rows, T fill) {
#if defined(__SSE2__)
  if constexpr (sizeof(T) == 8 && L % 2 == 0) {
    if (lanes == L && rows % 2 == 0) {
      // 2 x 2 blocks: two rows of two lines per pair of loads.
      for (int64_t l = 0; l < L; l += 2) {
        const double *x = reinterpret_cast<const double *>(from[l]) + r0,
                     *y = reinterpret_cast<const double *>(from[l + 1]) + r0;
        double *t = reinterpret_cast<double *>(tile) + l;
        for (int64_t r = 0; r < rows; r += 2) {
          const __m128d vx = _mm_loadu_pd(x + r), vy = _mm_loadu_pd(y + r);
          _mm_storeu_pd(t + r * L, _mm_unpacklo_pd(vx, vy));
          _mm_storeu_pd(t + (r + 1) * L, _mm_unpackhi_pd(vx, vy));
        }
      }
      return;
    }
  }
#endif
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t l = 0; l < L; ++l)
      tile[r * L + l] = l < lanes ? from[l][r0 + r] : fill;
}

/// Stores rows [r0, r0 + rows) of `tile` (row-major, L lanes a row, row r0
/// first) to the `lanes` lines to[l].
template <typename T, int64_t L>
inline void storeTile(T *const *to, const T *__restrict tile, int64_t lanes,
                      int64_t r0, int64_t rows) {
#if defined(__SSE2__)
  if constexpr (sizeof(T) == 8 && L % 2 == 0) {
    if (lanes == L && rows % 2 == 0) {
      for (int64_t l = 0; l < L; l += 2) {
        double *x = reinterpret_cast<double *>(to[l]) + r0,
               *y = reinterpret_cast<double *>(to[l + 1]) + r0;
        const double *t = reinterpret_cast<const double *>(tile) + l;
        for (int64_t r = 0; r < rows; r += 2) {
          const __m128d v0 = _mm_loadu_pd(t + r * L),
                        v1 = _mm_loadu_pd(t + (r + 1) * L);
          _mm_storeu_pd(x + r, _mm_unpacklo_pd(v0, v1));
          _mm_storeu_pd(y + r, _mm_unpackhi_pd(v0, v1));
        }
      }
      return;
    }
  }
#endif
  for (int64_t l = 0; l < lanes; ++l)
    for (int64_t r = 0; r < rows; ++r)
      to[l][r0 + r] = tile[r * L + l];
}

/// What the solve works on: the four dats, the dimension, the box.
struct Problem {
  opd_dat *dats[4]; // a, b, c, d
  int dims = 1;
  int along = 0;
  int64_t lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
  int64_t n = 0; ///< points per line
  /// Rows of each system before this rank's segment (split solves).
  int64_t rowOffset = 0;
};

/// A failed unit's first bad system: its first point and row.
[[noreturn]] void failPivot(const Problem &p, const int64_t *start, int64_t row,
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

/// Records unit u as failed, keeping the lowest failed unit.
void noteFailure(std::atomic<int64_t> &first, int64_t u) {
  int64_t seen = first.load(std::memory_order_relaxed);
  while (u < seen && !first.compare_exchange_weak(seen, u))
    ;
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
  std::atomic<int64_t> failed{INT64_MAX};
#pragma omp parallel if (units > 1)
  {
    // c' of the panel, rows of W lanes, starting 512 bytes into the
    // allocation: page-aligned c' rows of the same length as d's rows
    // (along 1 of 256^3) 4 KiB-alias the rows of d in the L1, 10.0 against
    // 11.5 GB/s.
    const int64_t skew = 512 / int64_t(sizeof(T));
    std::vector<T> scratch(static_cast<std::size_t>(n * W + skew));
    std::vector<T> probes(static_cast<std::size_t>(W));
    T *cp = scratch.data() + skew, *bad = probes.data();
#pragma omp for schedule(static)
    for (int64_t u = 0; u < units; ++u) {
      int64_t start[3] = {0, 0, 0}, w = 0;
      unitStart(u, start, w);
      const T *pa = a.at(start), *pb = b.at(start), *pc = c.at(start);
      T *pd = d.at(start);
      forwardFirstInPlace(w, pb, pc, pd, cp, bad);
      for (int64_t r = 1; r < n; ++r)
        forwardRowInPlace(w, pa + r * sa, pb + r * sb, pc + r * sc,
                          pd + r * sd, pd + (r - 1) * sd, cp + (r - 1) * W,
                          cp + r * W, bad);
      if (anyBad(w, bad)) {
        noteFailure(failed, u);
        continue;
      }
      for (int64_t r = n - 2; r >= 0; --r)
        backwardInPlace(w, pd + r * sd, cp + r * W, pd + (r + 1) * sd);
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

// Along dimension 0: groups of 16 lines, transposed tile by tile.
template <typename T> void solveContiguous(const Problem &p) {
  View<T> a(p.dats[0]), b(p.dats[1]), c(p.dats[2]), d(p.dats[3]);
  constexpr int64_t L = GroupLanes, R = TileRows;
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

// x_r = d'_r - a'_r x_0 - c'_r x_{m-1} over the segment of line q, whose
// first and last values x0 and xl the reduced system gave.
template <typename T>
void substitute(T *ld, int64_t sd, const T *aa, const T *cc, int64_t m, T x0,
                T xl) {
  for (int64_t r = 1; r < m - 1; ++r)
    ld[r * sd] -= aa[r] * x0 + cc[r] * xl;
  ld[0] = x0;
  ld[(m - 1) * sd] = xl;
}

// substitute() on every line of this rank, with the first and last values
// of line q from ends(q, x0, xl).
template <typename T, typename LineStart, typename Ends>
void substituteLines(const Problem &p, int64_t lines, const std::vector<T> &ac,
                     LineStart lineStart, Ends ends) {
  View<T> d(p.dats[3]);
  const int k = p.along;
  const int64_t m = p.n, sd = d.stride[k];
#pragma omp parallel for schedule(static) if (lines > 1)
  for (int64_t q = 0; q < lines; ++q) {
    int64_t start[3] = {0, 0, 0};
    lineStart(q, start);
    const T *aa = ac.data() + 2 * m * q, *cc = aa + m;
    T x0, xl;
    ends(q, x0, xl);
    substitute(d.at(start), sd, aa, cc, m, x0, xl);
  }
}

// The reduced systems (2 rows per rank, `parts` ranks: N = 2 parts rows)
// by parallel cyclic reduction: in the step of stride s every row i takes
// rows i - s and i + s (identity rows outside 0 .. N-1),
//   k1 = a_i / b_{i-s},  k2 = c_i / b_{i+s},
//   a_i = -k1 a_{i-s},   c_i = -k2 c_{i+s},
//   b_i -= k1 c_{i-s} + k2 a_{i+s},  d_i -= k1 d_{i-s} + k2 d_{i+s},
// until s reaches N, when every row stands alone: x_i = d_i / b_i. Row i
// lives on rank i / 2, so a step exchanges both rows of every line with
// the ranks max(1, s/2) below and above (dist::shiftAlong): log2(N) rounds
// of two point-to-point messages each way. `red` holds this rank's rows as
// (a, c, d) per line, b = 1.
template <typename T, typename LineStart>
void reducedByPCR(const Problem &p, const opd_block *block, int me, int parts,
                  int64_t lines, const T *red, const std::vector<T> &ac,
                  LineStart lineStart) {
  const int k = p.along;
  const int64_t N = 2 * int64_t(parts);
  const std::size_t bytes = std::size_t(lines * 8) * sizeof(T);
  std::vector<char> curB(bytes), nxtB(bytes), loB(bytes), hiB(bytes);
  T *cur = reinterpret_cast<T *>(curB.data());
  for (int64_t q = 0; q < lines; ++q)
    for (int j = 0; j < 2; ++j) {
      T *row = cur + (q * 2 + j) * 4;
      const T *in = red + (q * 2 + j) * 3;
      row[0] = in[0];
      row[1] = 1;
      row[2] = in[1];
      row[3] = in[2];
    }
  // The range's first row has no left neighbour, its last no right one.
  if (me == 0)
    for (int64_t q = 0; q < lines; ++q)
      cur[q * 8 + 0] = 0;
  if (me == parts - 1)
    for (int64_t q = 0; q < lines; ++q)
      cur[q * 8 + 4 + 2] = 0;
  static const T identity[4] = {0, 1, 0, 0};
  for (int64_t s = 1; s < N; s *= 2) {
    const int distance = s == 1 ? 1 : int(s / 2);
    dist::shiftAlong(block, k, distance, curB, curB, loB, hiB);
    const T *c0 = reinterpret_cast<const T *>(curB.data());
    const T *lo = reinterpret_cast<const T *>(loB.data());
    const T *hi = reinterpret_cast<const T *>(hiB.data());
    T *nx = reinterpret_cast<T *>(nxtB.data());
#pragma omp parallel for schedule(static) if (lines > 1)
    for (int64_t q = 0; q < lines; ++q) {
      auto row = [&](int64_t g) -> const T * {
        if (g < 0 || g >= N)
          return identity;
        const int64_t owner = g / 2, j = g % 2;
        const T *base = owner == me ? c0 : owner < me ? lo : hi;
        return base + (q * 2 + j) * 4;
      };
      for (int j = 0; j < 2; ++j) {
        const int64_t i = 2 * int64_t(me) + j;
        const T *self = c0 + (q * 2 + j) * 4, *below = row(i - s),
                *above = row(i + s);
        const T k1 = self[0] / below[1], k2 = self[2] / above[1];
        T *out = nx + (q * 2 + j) * 4;
        out[0] = -k1 * below[0];
        out[1] = self[1] - k1 * below[2] - k2 * above[0];
        out[2] = -k2 * above[2];
        out[3] = self[3] - k1 * below[3] - k2 * above[3];
      }
    }
    std::swap(curB, nxtB);
  }
  const T *x = reinterpret_cast<const T *>(curB.data());
  substituteLines<T>(p, lines, ac, lineStart, [&](int64_t q, T &x0, T &xl) {
    const T *r0 = x + q * 8, *r1 = r0 + 4;
    x0 = r0[3] / r0[1];
    xl = r1[3] / r1[1];
  });
}

// The reduced systems by block Jacobi iterations (--tridiag-reduced=jacobi):
// each rank's two rows per line,
//   x_0 + c_0 x_{m-1} = d_0 - a_0 x_{-1}
//   a_1 x_0 + x_{m-1} = d_1 - c_1 x_m,
// are solved exactly (2 x 2) for this rank's first and last unknowns with
// the neighbours' x_{-1} (the rank below's last) and x_m (the rank above's
// first) of the previous iteration: one point-to-point message each way
// per iteration (dist::shiftAlong, all lines together), however many ranks
// share the line, against log2(2P) rounds for PCR. The coupling between
// segments decays with the segments' length for diagonally dominant
// systems, so a few iterations reach round-off; they stop when no unknown
// changed by more than 4 ulps of the largest (a max over the line's
// ranks each iteration) and fail after 200. The answer agrees with PCR's to
// round-off, not bit for bit.
template <typename T, typename LineStart>
void reducedByJacobi(const Problem &p, const opd_block *block, int me,
                     int parts, int64_t lines, const T *red,
                     const std::vector<T> &ac, LineStart lineStart) {
  constexpr int MaxIterations = 200;
  const int k = p.along;
  const std::size_t bytes = std::size_t(lines) * sizeof(T);
  std::vector<char> toLower(bytes), toUpper(bytes), fromLower(bytes),
      fromUpper(bytes);
  T *x0 = reinterpret_cast<T *>(toLower.data());
  T *xl = reinterpret_cast<T *>(toUpper.data());
  std::fill(x0, x0 + lines, T(0));
  std::fill(xl, xl + lines, T(0));
  const T eps = std::numeric_limits<T>::epsilon();
  int iteration = 0;
  for (;; ++iteration) {
    dist::shiftAlong(block, k, 1, toLower, toUpper, fromLower, fromUpper);
    const T *below = reinterpret_cast<const T *>(fromLower.data());
    const T *above = reinterpret_cast<const T *>(fromUpper.data());
    double change = 0, size = 0;
#pragma omp parallel for schedule(static) reduction(max : change, size) if (lines > 1)
    for (int64_t q = 0; q < lines; ++q) {
      const T *r = red + q * 6;
      const T xm1 = me == 0 ? T(0) : below[q];
      const T xm = me == parts - 1 ? T(0) : above[q];
      const T r0 = r[2] - r[0] * xm1, r1 = r[5] - r[4] * xm;
      const T inv = T(1) / (T(1) - r[1] * r[3]);
      const T n0 = (r0 - r[1] * r1) * inv, nl = (r1 - r[3] * r0) * inv;
      change = std::max({change, double(std::fabs(n0 - x0[q])),
                         double(std::fabs(nl - xl[q]))});
      size = std::max({size, double(std::fabs(n0)), double(std::fabs(nl))});
      x0[q] = n0;
      xl[q] = nl;
    }
    // The largest change and value over the ranks of the line (they hold
    // the same lines, so they iterate alike; other lines stop on their own).
    double v[2] = {change, size};
    std::vector<char> mineV(sizeof v);
    std::memcpy(mineV.data(), v, sizeof v);
    std::vector<std::vector<char>> allV;
    dist::allgatherAlong(block, k, mineV, allV);
    for (const std::vector<char> &w : allV) {
      double u[2];
      std::memcpy(u, w.data(), sizeof u);
      v[0] = std::max(v[0], u[0]);
      v[1] = std::max(v[1], u[1]);
    }
    if (v[0] <= 4 * double(eps) * v[1])
      break;
    if (iteration + 1 >= MaxIterations)
      failf("tridiagonal solve of %s along dimension %d: the reduced system "
            "of the ranks' segments did not converge by Jacobi iterations "
            "in %d (largest change %g); solve it exactly with "
            "--tridiag-reduced=pcr",
            p.dats[3]->describe().c_str(), k, MaxIterations, v[0]);
  }
  substituteLines<T>(p, lines, ac, lineStart,
                     [&](int64_t q, T &first, T &last) {
                       first = x0[q];
                       last = xl[q];
                     });
}

// Along a dimension split over ranks (see the top of the file). `split`
// is this rank's segment [p.lo[k], p.hi[k]) (maybe empty) of every line;
// the lines are the box of the other dimensions, the same on every rank of
// the line communicator.
template <typename T> void solveDistributed(const Problem &p) {
  View<T> a(p.dats[0]), b(p.dats[1]), c(p.dats[2]), d(p.dats[3]);
  const int k = p.along;
  int others[2] = {-1, -1}, no = 0;
  for (int e = 0; e < 3; ++e)
    if (e != k)
      others[no++] = e;
  const int64_t n1 = p.hi[others[0]] - p.lo[others[0]],
                n2 = p.hi[others[1]] - p.lo[others[1]];
  const int64_t lines = n1 * n2, m = p.n;
  const int64_t kept = std::min<int64_t>(m, 2); // reduced rows per line
  const int64_t sa = a.stride[k], sb = b.stride[k], sc = c.stride[k],
                sd = d.stride[k];
  auto lineStart = [&](int64_t q, int64_t *start) {
    start[k] = p.lo[k];
    start[others[0]] = p.lo[others[0]] + q % n1;
    start[others[1]] = p.lo[others[1]] + q / n1;
  };
  // a' and c' of every row of every line (d' goes into d).
  std::vector<T> ac(std::size_t(2 * m * lines));
  // Reduced rows, per line: kept x (a, c, d).
  std::vector<char> mine(std::size_t(lines * kept * 3) * sizeof(T));
  T *red = reinterpret_cast<T *>(mine.data());
  int64_t failedLine = INT64_MAX, failedRow = 0;
  double failedPivot = 0;

#pragma omp parallel for schedule(static) if (lines > 1)
  for (int64_t q = 0; q < lines; ++q) {
    if (m == 0)
      continue;
    int64_t start[3] = {0, 0, 0};
    lineStart(q, start);
    const T *la = a.at(start), *lb = b.at(start), *lc = c.at(start);
    T *ld = d.at(start);
    T *aa = ac.data() + 2 * m * q, *cc = aa + m;
    T probe = 0;
    int64_t bad = -1;
    double badPivot = 0;
    // Forward: rows 0 and 1 normalised, then x_{r-1} eliminated.
    for (int64_t r = 0; r < m; ++r) {
      if (r < 2) {
        const T inv = T(1) / lb[r * sb];
        probe = pivotProbe(lb[r * sb], inv);
        if (!(probe == T(0)) && bad < 0)
          badPivot = double(lb[r * sb]);
        aa[r] = la[r * sa] * inv;
        cc[r] = lc[r * sc] * inv;
        ld[r * sd] *= inv;
      } else {
        const T piv = lb[r * sb] - la[r * sa] * cc[r - 1];
        const T inv = T(1) / piv;
        probe = pivotProbe(piv, inv);
        if (!(probe == T(0)) && bad < 0)
          badPivot = double(piv);
        ld[r * sd] = (ld[r * sd] - la[r * sa] * ld[(r - 1) * sd]) * inv;
        aa[r] = -la[r * sa] * aa[r - 1] * inv;
        cc[r] = lc[r * sc] * inv;
      }
      if (!(probe == T(0)) && bad < 0)
        bad = r;
    }
    // Backward: rows m-3 .. 1 in terms of x_0 and x_{m-1}, then row 0.
    for (int64_t r = m - 3; r >= 1; --r) {
      ld[r * sd] -= cc[r] * ld[(r + 1) * sd];
      aa[r] -= cc[r] * aa[r + 1];
      cc[r] = -cc[r] * cc[r + 1];
    }
    if (m >= 3) {
      const T piv = T(1) - cc[0] * aa[1];
      const T inv = T(1) / piv;
      if (!(pivotProbe(piv, inv) == T(0)) && bad < 0) {
        bad = 0;
        badPivot = double(piv);
      }
      ld[0] = (ld[0] - cc[0] * ld[sd]) * inv;
      aa[0] *= inv;
      cc[0] = -cc[0] * cc[1] * inv;
    }
    if (bad >= 0) {
#pragma omp critical(opd_tridiagonal_failure)
      if (q < failedLine) {
        failedLine = q;
        failedRow = bad;
        failedPivot = badPivot;
      }
    }
    T *out = red + q * kept * 3;
    out[0] = aa[0];
    out[1] = cc[0];
    out[2] = ld[0];
    if (kept == 2) {
      out[3] = aa[m - 1];
      out[4] = cc[m - 1];
      out[5] = ld[(m - 1) * sd];
    }
  }
  if (failedLine != INT64_MAX) {
    int64_t start[3] = {0, 0, 0};
    lineStart(failedLine, start);
    failPivot(p, start, failedRow, failedPivot);
  }

  // Every rank's row count decides how the reduced systems are solved:
  // parallel cyclic reduction when every segment has two rows or more,
  // else gathered.
  const opd_block *block = p.dats[3]->block;
  std::vector<char> count(sizeof(int64_t));
  std::memcpy(count.data(), &m, sizeof m);
  std::vector<std::vector<char>> counts;
  const int me = dist::allgatherAlong(block, k, count, counts);
  const int parts = int(counts.size());
  bool pcr = parts > 1;
  for (const std::vector<char> &c0 : counts) {
    int64_t mr = 0;
    std::memcpy(&mr, c0.data(), sizeof mr);
    pcr = pcr && mr >= 2;
  }
  if (lines == 0)
    return;
  if (pcr) {
    if (reducedSolver() == ReducedSolver::Jacobi)
      reducedByJacobi<T>(p, block, me, parts, lines, red, ac, lineStart);
    else
      reducedByPCR<T>(p, block, me, parts, lines, red, ac, lineStart);
    return;
  }

  // Every rank's reduced rows, in the order of the segments along k.
  std::vector<std::vector<char>> all;
  dist::allgatherAlong(block, k, mine, all);
  const std::size_t nparts = static_cast<std::size_t>(parts);
  std::vector<int64_t> rowsOf(nparts), firstOf(nparts);
  int64_t total = 0;
  for (int r = 0; r < parts; ++r) {
    const int64_t bytes = int64_t(all[std::size_t(r)].size());
    rowsOf[std::size_t(r)] = bytes / int64_t(sizeof(T)) / (3 * lines);
    firstOf[std::size_t(r)] = total;
    total += rowsOf[std::size_t(r)];
  }
  if (m == 0)
    return;
  const int64_t mineFirst = firstOf[std::size_t(me)];

#pragma omp parallel if (lines > 1)
  {
    const std::size_t nt = static_cast<std::size_t>(total);
    std::vector<T> ra(nt), rc(nt), rd(nt);
#pragma omp for schedule(static)
    for (int64_t q = 0; q < lines; ++q) {
      // The reduced system of line q, rows in order along k; the range's
      // first row has no left neighbour, its last no right one.
      for (int r = 0; r < parts; ++r) {
        const int64_t kr = rowsOf[std::size_t(r)];
        const T *in = reinterpret_cast<const T *>(all[std::size_t(r)].data()) +
                      q * kr * 3;
        for (int64_t j = 0; j < kr; ++j) {
          const int64_t row = firstOf[std::size_t(r)] + j;
          ra[std::size_t(row)] = in[3 * j];
          rc[std::size_t(row)] = in[3 * j + 1];
          rd[std::size_t(row)] = in[3 * j + 2];
        }
      }
      ra[0] = 0;
      rc[std::size_t(total - 1)] = 0;
      // Thomas on it (unit diagonal): rc becomes c', rd d' then x.
      for (int64_t r = 1; r < total; ++r) {
        const T inv = T(1) / (T(1) - ra[std::size_t(r)] * rc[std::size_t(r - 1)]);
        rc[std::size_t(r)] *= inv;
        rd[std::size_t(r)] =
            (rd[std::size_t(r)] - ra[std::size_t(r)] * rd[std::size_t(r - 1)]) *
            inv;
      }
      for (int64_t r = total - 2; r >= 0; --r)
        rd[std::size_t(r)] -= rc[std::size_t(r)] * rd[std::size_t(r + 1)];
      // Back substitution of this rank's segment.
      int64_t start[3] = {0, 0, 0};
      lineStart(q, start);
      T *ld = d.at(start);
      const T *aa = ac.data() + 2 * m * q, *cc = aa + m;
      substitute(ld, sd, aa, cc, m, rd[std::size_t(mineFirst)],
                 rd[std::size_t(mineFirst + kept - 1)]);
    }
  }
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
} // namespace opdc::rt

using namespace opdc::rt;

void opd_solve_tridiagonal(opd_dat *a, opd_dat *b, opd_dat *c, opd_dat *d,
                           int along, const int64_t *lo, const int64_t *hi) {
  dist::settleExchanges();
  Problem p;
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
  const bool split = !block->edgeLo[along] || !block->edgeHi[along];
  for (int k = 0; k < 3; ++k)
    if (p.hi[k] <= p.lo[k] && !(split && k == along))
      return;
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
  const bool f64 = d->type == OPD_F64;
  if (split)
    f64 ? solveDistributed<double>(p) : solveDistributed<float>(p);
  else if (along == 0)
    f64 ? solveContiguous<double>(p) : solveContiguous<float>(p);
  else
    f64 ? solveStrided<double>(p) : solveStrided<float>(p);
  // d changed: other ranks' copies of its points are stale.
  d->haloValid = 0;
  d->cornersValid = false;
}
