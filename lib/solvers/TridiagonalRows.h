// TridiagonalRows.h - The lane loops of the split tridiagonal solve
// (internal): the modified Thomas algorithm's row steps over w lanes.
// SPDX-License-Identifier: Apache-2.0
//
// Steps 1 and 3 of lib/solvers/TridiagonalSplit.cpp (its header comment
// describes the algorithm and the units the lanes come from) are row after
// row of these `omp simd` loops. Apart from it because they are the
// arithmetic alone, the same whatever the unit's layout (panels along
// dimensions 1 and 2, transposed groups along 0).
#pragma once

#include "solvers/Tridiagonal.h"

#include <cstdint>

namespace opdc::rt::tridiag {

// The lane loops of steps 1 and 3. Each does for w lanes what the scalar
// per-line code did for one line, with the same operations in the same
// order.

/// Forward, rows 0 and 1: normalised by b (a' = a / b, c' = c / b,
/// d' = d / b, d' over d).
template <typename T>
inline void normaliseRow(int64_t w, const T *__restrict a,
                         const T *__restrict b, const T *__restrict c,
                         T *__restrict d, T *__restrict aa, T *__restrict cc,
                         T *__restrict probe) {
#pragma omp simd
  for (int64_t l = 0; l < w; ++l) {
    const T inv = T(1) / b[l];
    probe[l] += pivotProbe(b[l], inv);
    aa[l] = a[l] * inv;
    cc[l] = c[l] * inv;
    d[l] *= inv;
  }
}

/// Forward, row r >= 2: x_{r-1} eliminated with row r - 1 (aaPrev,
/// ccPrev, dPrev), which leaves a'_r x_0 + x_r + c'_r x_{r+1} = d'_r.
template <typename T>
inline void
eliminateRow(int64_t w, const T *__restrict a, const T *__restrict b,
             const T *__restrict c, T *__restrict d, const T *__restrict dPrev,
             const T *__restrict aaPrev, const T *__restrict ccPrev,
             T *__restrict aa, T *__restrict cc, T *__restrict probe) {
#pragma omp simd
  for (int64_t l = 0; l < w; ++l) {
    const T piv = b[l] - a[l] * ccPrev[l];
    const T inv = T(1) / piv;
    probe[l] += pivotProbe(piv, inv);
    d[l] = (d[l] - a[l] * dPrev[l]) * inv;
    aa[l] = -a[l] * aaPrev[l] * inv;
    cc[l] = c[l] * inv;
  }
}

/// Backward, row r (0 < r < m - 2): x_{r+1} eliminated with row r + 1
/// (already in terms of x_0 and x_{m-1}).
template <typename T>
inline void backRow(int64_t w, T *__restrict d, const T *__restrict dNext,
                    T *__restrict aa, const T *__restrict aaNext,
                    T *__restrict cc, const T *__restrict ccNext) {
#pragma omp simd
  for (int64_t l = 0; l < w; ++l) {
    d[l] -= cc[l] * dNext[l];
    aa[l] -= cc[l] * aaNext[l];
    cc[l] = -cc[l] * ccNext[l];
  }
}

/// Backward, row 0 (m >= 3): x_1 eliminated with row 1, then normalised.
template <typename T>
inline void backFirst(int64_t w, T *__restrict d, const T *__restrict d1,
                      T *__restrict aa, const T *__restrict aa1,
                      T *__restrict cc, const T *__restrict cc1,
                      T *__restrict probe) {
#pragma omp simd
  for (int64_t l = 0; l < w; ++l) {
    const T piv = T(1) - cc[l] * aa1[l];
    const T inv = T(1) / piv;
    probe[l] += pivotProbe(piv, inv);
    d[l] = (d[l] - cc[l] * d1[l]) * inv;
    aa[l] *= inv;
    cc[l] = -cc[l] * cc1[l] * inv;
  }
}

/// Step 3, row r (0 < r < m - 1): x_r = d'_r - (a'_r x_0 + c'_r x_{m-1}).
template <typename T>
inline void substituteRow(int64_t w, T *__restrict d, const T *__restrict aa,
                          const T *__restrict cc, const T *__restrict x0,
                          const T *__restrict xl) {
#pragma omp simd
  for (int64_t l = 0; l < w; ++l)
    d[l] -= aa[l] * x0[l] + cc[l] * xl[l];
}

/// Steps 1's passes over the rows of one unit (w lanes): a, b, c row r at
/// a(r), b(r), c(r); d' row r at d(r) (in place); a', c' rows of W lanes.
template <typename T, typename RowA, typename RowB, typename RowC,
          typename RowD>
void forwardRows(int64_t w, int64_t r0, int64_t rows, RowA a, RowB b, RowC c,
                 RowD d, T *aa, T *cc, int64_t W, T *probe) {
  for (int64_t r = r0; r < r0 + rows; ++r) {
    if (r < 2)
      normaliseRow(w, a(r), b(r), c(r), d(r), aa + r * W, cc + r * W, probe);
    else
      eliminateRow(w, a(r), b(r), c(r), d(r), d(r - 1), aa + (r - 1) * W,
                   cc + (r - 1) * W, aa + r * W, cc + r * W, probe);
  }
}

/// Step 1's backward pass over the m rows of one unit: rows m-3 .. 1 in
/// terms of x_0 and x_{m-1}, then row 0.
template <typename T, typename RowD>
void backwardRows(int64_t w, int64_t m, RowD d, T *aa, T *cc, int64_t W,
                  T *probe) {
  for (int64_t r = m - 3; r >= 1; --r)
    backRow(w, d(r), d(r + 1), aa + r * W, aa + (r + 1) * W, cc + r * W,
            cc + (r + 1) * W);
  if (m >= 3)
    backFirst(w, d(0), d(1), aa, aa + W, cc, cc + W, probe);
}

} // namespace opdc::rt::tridiag
