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
// result agrees with the one-rank solve to round-off, not bit for bit; it
// does not depend on the thread count. This path is scalar per line (the
// lines of a thread run one after another); the whole-line solves above
// stay vectorised.
#include "solvers/Tridiagonal.h"

#include "core/Dist.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <vector>

namespace opdc::rt::tridiag {
namespace {

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

} // namespace

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

template void solveDistributed<double>(const Problem &p);
template void solveDistributed<float>(const Problem &p);

} // namespace opdc::rt::tridiag
