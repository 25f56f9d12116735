// TridiagonalSplit.cpp - Batched tridiagonal solves along a dimension that
// the MPI ranks split.
// SPDX-License-Identifier: Apache-2.0
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
// result agrees with the one-rank solve to round-off, not bit for bit.
//
// Vectorisation, as in the whole-line solves (Tridiagonal.cpp): SIMD lanes
// take different systems, and steps 1 and 3 run as `omp simd` lane loops
// (restrict pointers, no branch; the pivot test is pivotProbe) over the
// rows of a work unit, a run of consecutive lines in the line order q.
//   * Along dimension 1 or 2, a unit is a panel of up to W lines with
//     consecutive i0 (and one index of the third dimension): each row of
//     a, b, c, d is a unit-stride run of W values. W is at most 512, less
//     for long segments (the panel's a', c' and d', 3 m W values, within
//     PanelBudgetBytes); the backward pass reads them from the last row up.
//   * Along dimension 0 (contiguous), a unit is a group of GroupLanes
//     lines, transposed TileRows rows at a time (loadTile: d straight into
//     the group's d' scratch, a, b, c into an L1-resident tile), with
//     trivial systems (b = 1) in the lanes past the last line; after the
//     backward pass d' goes back into d (storeTile). Step 3 transposes d
//     in and x out again tile by tile.
// a' and c' of every row must outlive step 2 (its messages cover all the
// lines at once): they go to one scratch buffer, unit after unit, each
// unit's rows of a' then rows of c' (W or GroupLanes lanes a row), kept
// from one solve to the next (no page faults or zero fill per solve; it
// stays as large as the largest split solve's, 2 m x lines values, until
// opd_rt_finalize frees it). d' goes into d. Memory traffic: step 1 reads a, b,
// c, d once and writes d', a', c' once; step 3 reads d', a', c' and
// writes x: 88 bytes a point for f64 against the 40 of a whole-line solve
// (bench/solvers/README.md, "Split along the ranks").
//
// Threads take whole units (OpenMP, static schedule). The units depend on
// the range, the rank's segment and the element type only, and every
// system's arithmetic is the same in any lane or unit (it is the same as
// that of the scalar per-line code this replaced), so results are bitwise
// identical for any thread count. A bad pivot stops the program naming
// the first failing line (in the order q) and its row, found by redoing
// that unit's lines one by one (firstBadSplitRow).
#include "solvers/Tridiagonal.h"
#include "solvers/TridiagonalRows.h"

#include "core/Dist.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

namespace opdc::rt::tridiag {
namespace {

/// Panels along dimensions 1 and 2 are as wide as MaxPanelLanes, less when
/// the panel's a', c' and d' (3 m W values) would pass PanelBudgetBytes.
/// Wide panels beat L2-sized ones, as for the whole-line solves: along 1
/// of 2048^2 on one process (opd-tridiag-bench --split), 12 MiB panels
/// beat 6 and 1.5 MiB ones (docs/performance.md, "Figures from code
/// comments").
constexpr int64_t PanelBudgetBytes = int64_t(12) << 20;
constexpr int64_t MinPanelLanes = 8, MaxPanelLanes = 512;

/// The work units of this rank's segment of the lines: unit u holds the
/// lanes(u) lines q = first(u) ... of the line order (q = the index along
/// others[0] + n1 x the index along others[1], from the range's corner).
struct Units {
  bool contiguous = false; ///< along dimension 0: groups of GroupLanes
  int64_t lines = 0, n1 = 1;
  int64_t W = 1;      ///< lanes of a unit (rows of its scratch)
  int64_t chunks = 1; ///< panels across one row of i0 (along 1 or 2)
  int64_t count = 0;
  int64_t first(int64_t u) const {
    return contiguous ? u * W : (u % chunks) * W + (u / chunks) * n1;
  }
  int64_t lanes(int64_t u) const {
    return contiguous ? std::min(W, lines - u * W)
                      : std::min(W, n1 - (u % chunks) * W);
  }
};

/// a' and c' of unit u: rows of W lanes, c' a little past a' (so that
/// their rows do not 4 KiB-alias each other in the L1).
template <typename T> struct Coefficients {
  T *base = nullptr;
  int64_t m = 0, W = 0;
  static constexpr int64_t Pad = 128 / int64_t(sizeof(T));
  int64_t unitSize() const { return 2 * m * W + 2 * Pad; }
  T *aa(int64_t u) const { return base + u * unitSize(); }
  T *cc(int64_t u) const { return aa(u) + m * W + Pad; }
};

/// The a'/c' scratch, kept from one solve to the next (a solve along a
/// split dimension needs 2 m x lines values that outlive the reduced
/// solve; allocating them afresh costs page faults every time). Starts
/// 512 bytes into a page-aligned block: a', c' rows of 4 KiB would
/// otherwise 4 KiB-alias the rows of d (see solveStrided).
/// (Released by opd_rt_finalize, releaseSolverScratch.)
std::unique_ptr<char[]> scratchBlock;
std::size_t scratchBytes = 0;

template <typename T> T *coefficientScratch(int64_t values) {
  const std::size_t need = std::size_t(values) * sizeof(T) + 4096 + 512;
  if (need > scratchBytes) {
    scratchBlock.reset();
    scratchBlock.reset(new char[need]);
    scratchBytes = need;
  }
  const auto at = reinterpret_cast<std::uintptr_t>(scratchBlock.get());
  return reinterpret_cast<T *>((at + 4095) / 4096 * 4096 + 512);
}

/// The reduced rows (a', c', d') of `lanes` lines of a unit, first row and
/// (with kept == 2) last, into `out` (kept x 3 values a line): a' and c'
/// rows of W lanes at aa and cc, d' of the first and last rows at d0, dl.
template <typename T>
void packReduced(T *out, int64_t lanes, int64_t kept, const T *aa,
                 const T *cc, int64_t W, int64_t m, const T *d0,
                 const T *dl) {
  for (int64_t l = 0; l < lanes; ++l, out += kept * 3) {
    out[0] = aa[l];
    out[1] = cc[l];
    out[2] = d0[l];
    if (kept == 2) {
      out[3] = aa[(m - 1) * W + l];
      out[4] = cc[(m - 1) * W + l];
      out[5] = dl[l];
    }
  }
}

/// Whether a lane met a bad pivot.
template <typename T> bool anyBad(int64_t w, const T *probe) {
  bool bad = false;
  for (int64_t l = 0; l < w; ++l)
    bad |= !(probe[l] == T(0));
  return bad;
}

/// The first bad pivot of step 1 on the segment starting at a, b, c
/// (strides sa, sb, sc; m rows), recomputed as the lane loops compute it:
/// the forward pass's first, else row 0's of the backward pass; -1 when
/// there is none. (The pivots do not depend on d.)
template <typename T>
int64_t firstBadSplitRow(const T *a, int64_t sa, const T *b, int64_t sb,
                         const T *c, int64_t sc, int64_t m, double &pivot) {
  std::vector<T> aa(static_cast<std::size_t>(m)),
      cc(static_cast<std::size_t>(m));
  for (int64_t r = 0; r < m; ++r) {
    const T piv = r < 2 ? b[r * sb] : b[r * sb] - a[r * sa] * cc[r - 1];
    const T inv = T(1) / piv;
    if (!(pivotProbe(piv, inv) == T(0))) {
      pivot = double(piv);
      return r;
    }
    aa[r] = r < 2 ? a[r * sa] * inv : -a[r * sa] * aa[r - 1] * inv;
    cc[r] = c[r * sc] * inv;
  }
  for (int64_t r = m - 3; r >= 1; --r) {
    aa[r] -= cc[r] * aa[r + 1];
    cc[r] = -cc[r] * cc[r + 1];
  }
  if (m >= 3) {
    const T piv = T(1) - cc[0] * aa[1];
    if (!(pivotProbe(piv, T(1) / piv) == T(0))) {
      pivot = double(piv);
      return 0;
    }
  }
  return -1;
}

/// Records unit u as failed, keeping the lowest failed unit.
void noteFailure(std::atomic<int64_t> &first, int64_t u) {
  int64_t seen = first.load(std::memory_order_relaxed);
  while (u < seen && !first.compare_exchange_weak(seen, u))
    ;
}

/// What the steps share: the dats, the line order and the units.
template <typename T> struct Split {
  const Problem &p;
  View<T> a, b, c, d;
  int k;
  int others[2] = {-1, -1};
  int64_t n1 = 1, n2 = 1, lines = 0, m = 0;
  Units units;
  Coefficients<T> coef;

  explicit Split(const Problem &q)
      : p(q), a(q.dats[0]), b(q.dats[1]), c(q.dats[2]), d(q.dats[3]),
        k(q.along) {
    int no = 0;
    for (int e = 0; e < 3; ++e)
      if (e != k)
        others[no++] = e;
    n1 = p.hi[others[0]] - p.lo[others[0]];
    n2 = p.hi[others[1]] - p.lo[others[1]];
    lines = n1 * n2;
    m = p.n;
    units.lines = lines;
    units.n1 = n1;
    if (k == 0) {
      units.contiguous = true;
      units.W = GroupLanes;
      units.count = (lines + GroupLanes - 1) / GroupLanes;
    } else {
      // As wide as the budget allows, no wider than the rows (rounded up
      // to whole vectors).
      int64_t W =
          PanelBudgetBytes / std::max<int64_t>(1, 3 * m * int64_t(sizeof(T)));
      W = std::clamp(W, MinPanelLanes, MaxPanelLanes);
      W = std::min(W / MinPanelLanes * MinPanelLanes,
                   (n1 + MinPanelLanes - 1) / MinPanelLanes * MinPanelLanes);
      units.W = std::max<int64_t>(W, 1);
      units.chunks = (n1 + units.W - 1) / units.W;
      units.count = n2 * units.chunks;
    }
    coef.m = m;
    coef.W = units.W;
    if (m > 0 && units.count > 0)
      coef.base = coefficientScratch<T>(units.count * coef.unitSize());
  }

  /// The first point of line q.
  void lineStart(int64_t q, int64_t *start) const {
    start[k] = p.lo[k];
    start[others[0]] = p.lo[others[0]] + q % n1;
    start[others[1]] = p.lo[others[1]] + q / n1;
  }
};

// Step 1 along dimension 1 or 2: the panels' modified Thomas, d' over d;
// this rank's reduced rows (kept x (a, c, d) per line) into `red`.
template <typename T>
void eliminatePanels(const Split<T> &s, T *red, int64_t kept,
                     std::atomic<int64_t> &failed) {
  const int64_t m = s.m, W = s.units.W, units = s.units.count;
  const int k = s.k;
  const int64_t sa = s.a.stride[k], sb = s.b.stride[k], sc = s.c.stride[k],
                sd = s.d.stride[k];
#pragma omp parallel if (units > 1)
  {
    std::vector<T> probes(static_cast<std::size_t>(W));
    T *probe = probes.data();
#pragma omp for schedule(static)
    for (int64_t u = 0; u < units; ++u) {
      const int64_t q0 = s.units.first(u), w = s.units.lanes(u);
      int64_t start[3] = {0, 0, 0};
      s.lineStart(q0, start);
      const T *pa = s.a.at(start), *pb = s.b.at(start), *pc = s.c.at(start);
      T *pd = s.d.at(start);
      T *aa = s.coef.aa(u), *cc = s.coef.cc(u);
      std::fill(probe, probe + w, T(0));
      auto d = [&](int64_t r) { return pd + r * sd; };
      forwardRows<T>(
          w, 0, m, [&](int64_t r) { return pa + r * sa; },
          [&](int64_t r) { return pb + r * sb; },
          [&](int64_t r) { return pc + r * sc; }, d, aa, cc, W, probe);
      backwardRows<T>(w, m, d, aa, cc, W, probe);
      if (anyBad(w, probe))
        noteFailure(failed, u);
      packReduced(red + q0 * kept * 3, w, kept, aa, cc, W, m, pd,
                  pd + (m - 1) * sd);
    }
  }
}

// Step 1 along dimension 0: groups of GroupLanes lines, transposed tile
// by tile; d' in per-thread scratch (rows of GroupLanes lanes) until the
// backward pass is done, then back into d.
template <typename T>
void eliminateGroups(const Split<T> &s, T *red, int64_t kept,
                     std::atomic<int64_t> &failed) {
  constexpr int64_t L = GroupLanes, R = TileRows;
  const int64_t m = s.m, units = s.units.count;
#pragma omp parallel if (units > 1)
  {
    const int64_t pad = 64 / int64_t(sizeof(T));
    std::vector<T> scratch(std::size_t(m * L + pad + 3 * (R * L + pad)));
    T *dp = scratch.data(), *ta = dp + m * L + pad, *tb = ta + R * L + pad,
      *tc = tb + R * L + pad;
    T probe[L];
    const T *from[4][L];
    T *to[L];
#pragma omp for schedule(static)
    for (int64_t u = 0; u < units; ++u) {
      const int64_t q0 = s.units.first(u), lanes = s.units.lanes(u);
      for (int64_t l = 0; l < lanes; ++l) {
        int64_t start[3];
        s.lineStart(q0 + l, start);
        from[0][l] = s.a.at(start);
        from[1][l] = s.b.at(start);
        from[2][l] = s.c.at(start);
        from[3][l] = to[l] = s.d.at(start);
      }
      T *aa = s.coef.aa(u), *cc = s.coef.cc(u);
      std::fill(probe, probe + L, T(0));
      auto d = [&](int64_t r) { return dp + r * L; };
      for (int64_t r0 = 0; r0 < m; r0 += R) {
        const int64_t rows = std::min(R, m - r0);
        loadTile<T, L>(ta, from[0], lanes, r0, rows, T(0));
        loadTile<T, L>(tb, from[1], lanes, r0, rows, T(1));
        loadTile<T, L>(tc, from[2], lanes, r0, rows, T(0));
        loadTile<T, L>(dp + r0 * L, from[3], lanes, r0, rows, T(0));
        forwardRows<T>(
            L, r0, rows, [&](int64_t r) { return ta + (r - r0) * L; },
            [&](int64_t r) { return tb + (r - r0) * L; },
            [&](int64_t r) { return tc + (r - r0) * L; }, d, aa, cc, L, probe);
      }
      backwardRows<T>(L, m, d, aa, cc, L, probe);
      if (anyBad(L, probe))
        noteFailure(failed, u);
      for (int64_t r0 = 0; r0 < m; r0 += R)
        storeTile<T, L>(to, dp + r0 * L, lanes, r0, std::min(R, m - r0));
      packReduced(red + q0 * kept * 3, lanes, kept, aa, cc, L, m, dp,
                  dp + (m - 1) * L);
    }
  }
}

// Step 3 on every unit of this rank: x_r = d'_r - a'_r x_0 - c'_r x_{m-1}
// with the first and last values of line q from ends(q, x0, xl) (rows 0
// and m-1 take them; with one row, the last).
template <typename T, typename Ends>
void substituteUnits(const Split<T> &s, Ends ends) {
  const int64_t m = s.m, W = s.units.W, units = s.units.count;
  if (m == 0)
    return;
  const int64_t sd = s.d.stride[s.k];
  constexpr int64_t L = GroupLanes, R = TileRows;
#pragma omp parallel if (units > 1)
  {
    std::vector<T> endsBuf(std::size_t(2 * W), T(0));
    T *x0 = endsBuf.data(), *xl = x0 + W;
    std::vector<T> tileBuf(s.units.contiguous ? std::size_t(R * L) : 0);
    T *to[L];
#pragma omp for schedule(static)
    for (int64_t u = 0; u < units; ++u) {
      const int64_t q0 = s.units.first(u), w = s.units.lanes(u);
      for (int64_t l = 0; l < w; ++l)
        ends(q0 + l, x0[l], xl[l]);
      std::fill(x0 + w, x0 + W, T(0)); // trivial lanes of a partial group
      std::fill(xl + w, xl + W, T(0));
      const T *aa = s.coef.aa(u), *cc = s.coef.cc(u);
      if (!s.units.contiguous) {
        int64_t start[3] = {0, 0, 0};
        s.lineStart(q0, start);
        T *pd = s.d.at(start);
        for (int64_t r = 1; r < m - 1; ++r)
          substituteRow(w, pd + r * sd, aa + r * W, cc + r * W, x0, xl);
        std::copy(x0, x0 + w, pd);
        std::copy(xl, xl + w, pd + (m - 1) * sd);
        continue;
      }
      // Along 0: d' transposed in and x out, tile by tile (lanes past the
      // last line are trivial systems, x = 0, and are not stored).
      for (int64_t l = 0; l < w; ++l) {
        int64_t start[3];
        s.lineStart(q0 + l, start);
        to[l] = s.d.at(start);
      }
      T *tile = tileBuf.data();
      for (int64_t r0 = 0; r0 < m; r0 += R) {
        const int64_t rows = std::min(R, m - r0);
        loadTile<T, L>(tile, to, w, r0, rows, T(0));
        for (int64_t g = r0; g < r0 + rows; ++g) {
          T *row = tile + (g - r0) * L;
          if (g == m - 1)
            std::copy(xl, xl + L, row);
          else if (g == 0)
            std::copy(x0, x0 + L, row);
          else
            substituteRow(L, row, aa + g * L, cc + g * L, x0, xl);
        }
        storeTile<T, L>(to, tile, w, r0, rows);
      }
    }
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
template <typename T>
void reducedByPCR(int k, int64_t lines, const opd_block *block, int me,
                  int parts, const T *red, T *x0s, T *xls) {
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
  for (int64_t q = 0; q < lines; ++q) {
    const T *r0 = x + q * 8, *r1 = r0 + 4;
    x0s[q] = r0[3] / r0[1];
    xls[q] = r1[3] / r1[1];
  }
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
template <typename T>
void reducedByJacobi(const Problem &p, int64_t lines, const opd_block *block,
                     int me, int parts, const T *red, T *x0s, T *xls) {
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
#pragma omp parallel for schedule(static)                                      \
    reduction(max                                                              \
              : change, size) if (lines > 1)
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
  std::copy(x0, x0 + lines, x0s);
  std::copy(xl, xl + lines, xls);
}

// The reduced systems gathered on every rank of the line (some rank holds
// fewer than two rows): each line's rows, in the order of the segments
// along k, solved by Thomas; `rowsOf`/`firstOf` per rank, `total` rows.
// Returns this rank's first and last values of line q in x0[q], xl[q].
template <typename T>
void reducedGathered(int64_t lines, const std::vector<std::vector<char>> &all,
                     const std::vector<int64_t> &rowsOf,
                     const std::vector<int64_t> &firstOf, int64_t total,
                     int64_t mineFirst, int64_t kept, T *x0, T *xl) {
  const int parts = int(all.size());
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
        const T inv =
            T(1) / (T(1) - ra[std::size_t(r)] * rc[std::size_t(r - 1)]);
        rc[std::size_t(r)] *= inv;
        rd[std::size_t(r)] =
            (rd[std::size_t(r)] - ra[std::size_t(r)] * rd[std::size_t(r - 1)]) *
            inv;
      }
      for (int64_t r = total - 2; r >= 0; --r)
        rd[std::size_t(r)] -= rc[std::size_t(r)] * rd[std::size_t(r + 1)];
      x0[q] = rd[std::size_t(mineFirst)];
      xl[q] = rd[std::size_t(mineFirst + kept - 1)];
    }
  }
}

// Step 2: every rank's row count decides how the reduced systems are
// solved: parallel cyclic reduction when every segment has two rows or
// more, else gathered. `red` holds this rank's reduced rows (min(m, 2) x
// (a', c', d') per line); x of each segment's first and last rows go to
// x0[q], xl[q]. Returns whether there is anything to substitute.
template <typename T>
bool reducedSystem(const Problem &p, int64_t lines, const T *red, T *x0,
                   T *xl) {
  const int k = p.along;
  const int64_t m = p.n, kept = std::min<int64_t>(m, 2);
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
    return false;
  if (pcr) {
    if (reducedSolver() == ReducedSolver::Jacobi)
      reducedByJacobi<T>(p, lines, block, me, parts, red, x0, xl);
    else
      reducedByPCR<T>(k, lines, block, me, parts, red, x0, xl);
    return true;
  }

  // Every rank's reduced rows, in the order of the segments along k.
  std::vector<char> mine(std::size_t(lines * kept * 3) * sizeof(T));
  if (!mine.empty())
    std::memcpy(mine.data(), red, mine.size());
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
    return false;
  reducedGathered<T>(lines, all, rowsOf, firstOf, total,
                     firstOf[std::size_t(me)], kept, x0, xl);
  return true;
}

} // namespace

// Along a dimension split over ranks (see the top of the file). This
// rank's segment is [p.lo[k], p.hi[k]) (maybe empty) of every line; the
// lines are the box of the other dimensions, the same on every rank of the
// line communicator.
template <typename T> void solveDistributed(const Problem &p) {
  const Split<T> s(p);
  const int k = s.k;
  const int64_t lines = s.lines, m = s.m;
  const int64_t kept = std::min<int64_t>(m, 2); // reduced rows per line
  // Reduced rows, per line: kept x (a, c, d).
  std::vector<char> mine(std::size_t(lines * kept * 3) * sizeof(T));
  T *red = reinterpret_cast<T *>(mine.data());

  // Step 1, and the first failing line's bad pivot.
  if (m > 0) {
    std::atomic<int64_t> failed{INT64_MAX};
    if (s.units.contiguous)
      eliminateGroups(s, red, kept, failed);
    else
      eliminatePanels(s, red, kept, failed);
    const int64_t u = failed.load();
    if (u != INT64_MAX) {
      for (int64_t l = 0; l < s.units.lanes(u); ++l) {
        int64_t start[3] = {0, 0, 0};
        s.lineStart(s.units.first(u) + l, start);
        double pivot = 0;
        const int64_t row = firstBadSplitRow(
            s.a.at(start), s.a.stride[k], s.b.at(start), s.b.stride[k],
            s.c.at(start), s.c.stride[k], m, pivot);
        if (row >= 0)
          failPivot(p, start, row, pivot);
      }
      failf("internal error: tridiagonal solve of %s: a bad pivot vanished",
            p.dats[3]->describe().c_str());
    }
  }

  std::vector<T> ends(std::size_t(2 * lines));
  if (reducedSystem<T>(p, lines, red, ends.data(), ends.data() + lines))
    substituteUnits<T>(s, [&](int64_t q, T &first, T &last) {
      first = ends[std::size_t(q)];
      last = ends[std::size_t(lines + q)];
    });
}

template <typename T>
void reducedForDevice(const Problem &p, const T *red, T *ends) {
  int64_t lines = 1;
  for (int e = 0; e < 3; ++e)
    if (e != p.along)
      lines *= p.hi[e] - p.lo[e];
  reducedSystem<T>(p, lines, red, ends, ends + lines);
}

template <typename T> void checkPivots(const Problem &p, bool split) {
  const View<T> a(p.dats[0]), b(p.dats[1]), c(p.dats[2]);
  const int k = p.along;
  int others[2] = {-1, -1}, no = 0;
  for (int e = 0; e < 3; ++e)
    if (e != k)
      others[no++] = e;
  const int64_t n1 = p.hi[others[0]] - p.lo[others[0]],
                n2 = p.hi[others[1]] - p.lo[others[1]];
  for (int64_t q = 0; q < n1 * n2; ++q) {
    int64_t start[3];
    start[k] = p.lo[k];
    start[others[0]] = p.lo[others[0]] + q % n1;
    start[others[1]] = p.lo[others[1]] + q / n1;
    double pivot = 0;
    const int64_t row =
        split ? firstBadSplitRow(a.at(start), a.stride[k], b.at(start),
                                 b.stride[k], c.at(start), c.stride[k], p.n,
                                 pivot)
              : firstBadRow(a.at(start), a.stride[k], b.at(start), b.stride[k],
                            c.at(start), c.stride[k], p.n, pivot);
    if (row >= 0)
      failPivot(p, start, row, pivot);
  }
}

void releaseSolverScratch() {
  scratchBlock.reset();
  scratchBytes = 0;
}

template void solveDistributed<double>(const Problem &p);
template void solveDistributed<float>(const Problem &p);
template void reducedForDevice<double>(const Problem &, const double *,
                                       double *);
template void reducedForDevice<float>(const Problem &, const float *, float *);
template void checkPivots<double>(const Problem &, bool);
template void checkPivots<float>(const Problem &, bool);

} // namespace opdc::rt::tridiag
