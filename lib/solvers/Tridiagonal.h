// Tridiagonal.h - What the batched tridiagonal solvers share (internal).
// SPDX-License-Identifier: Apache-2.0
//
// lib/solvers/Tridiagonal.cpp holds the whole-line solves and the entry
// point (opd_solve_tridiagonal); lib/solvers/TridiagonalSplit.cpp the
// solve along a dimension the MPI ranks split. Both use the views, the
// pivot probe, the along-0 tile transposes and the error report below.
#pragma once

#include "core/Objects.h"
#include "core/Runtime.h"

#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace opdc::rt::tridiag {

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

/// Lanes of one along-0 group (see the top of the file).
constexpr int64_t GroupLanes = 16;
/// Rows of one along-0 tile: 16 rows x 16 lanes x 4 dats, 16 KiB for f64,
/// stays in the L1 between its transpose and the forward sweep.
constexpr int64_t TileRows = 16;
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

/// Stops the program for the bad pivot `pivot` in row `row` of the
/// system whose first point is `start` (Tridiagonal.cpp).
[[noreturn]] void failPivot(const Problem &p, const int64_t *start, int64_t row,
                            double pivot);

/// The solve along a dimension split over ranks (TridiagonalSplit.cpp).
template <typename T> void solveDistributed(const Problem &p);
extern template void solveDistributed<double>(const Problem &p);
extern template void solveDistributed<float>(const Problem &p);

/// Step 2 of the split solve alone, for a device solve that ran steps 1
/// and 3 (opd_solve_tridiagonal_reduced): `red` as step 1 leaves it, the
/// segments' first values then their last into `ends` (TridiagonalSplit.cpp).
template <typename T>
void reducedForDevice(const Problem &p, const T *red, T *ends);
extern template void reducedForDevice<double>(const Problem &, const double *,
                                              double *);
extern template void reducedForDevice<float>(const Problem &, const float *,
                                             float *);
/// The pivots of every line (of every segment when `split`) recomputed as
/// the host solve computes them; the first bad one stops the program
/// (opd_solve_tridiagonal_check).
template <typename T> void checkPivots(const Problem &p, bool split);
extern template void checkPivots<double>(const Problem &, bool);
extern template void checkPivots<float>(const Problem &, bool);

} // namespace opdc::rt::tridiag
