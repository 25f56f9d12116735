// TridiagonalTest.cpp - opd_solve_tridiagonal against a dense solve.
// SPDX-License-Identifier: Apache-2.0
//
// Random diagonally dominant systems on 1D, 2D and 3D block dats (dats with
// different halos, so different strides), solved along every dimension over
// the whole block and over sub-ranges, each line checked against Gaussian
// elimination with partial pivoting on the dense matrix; points outside the
// range must be untouched. Then: 1 and 2 threads bitwise equal, f32, and
// the errors (zero and non-finite pivot, a range outside a dat), and the
// distributed algorithm's path on one rank.
#include "core/Objects.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

class TridiagonalTest : public ::testing::Test {
protected:
  void TearDown() override { opd_rt_finalize(); }
};

/// a, b, c, d on one block: sizes n, base 0, halos differing per dat.
struct System {
  int dims;
  int64_t n[3] = {1, 1, 1};
  opd_dat *dat[4] = {}; // a, b, c, d
};

System makeSystem(std::vector<int64_t> n, opd_scalar type = OPD_F64) {
  System s;
  s.dims = int(n.size());
  opd_block *block = opd_block_create("grid", s.dims);
  const char *names[4] = {"a", "b", "c", "d"};
  for (int i = 0; i < 4; ++i) {
    int64_t hm[3] = {i % 2, 1, 0}, hp[3] = {i % 3, 0, 2}, base[3] = {0, 0, 0};
    s.dat[i] =
        opd_block_dat_create(names[i], block, type, 1, n.data(), hm, hp, base);
  }
  for (int k = 0; k < s.dims; ++k)
    s.n[k] = n[k];
  return s;
}

template <typename T> T &at(opd_dat *d, const int64_t *p) {
  int64_t st[3] = {0, 0, 0};
  T *o = static_cast<T *>(opd_dat_origin(d, st));
  return o[p[0] * st[0] + (d->ndims > 1 ? p[1] * st[1] : 0) +
           (d->ndims > 2 ? p[2] * st[2] : 0)];
}

template <typename F> void forPoints(const System &s, F f) {
  for (int64_t k = 0; k < s.n[2]; ++k)
    for (int64_t j = 0; j < s.n[1]; ++j)
      for (int64_t i = 0; i < s.n[0]; ++i) {
        int64_t p[3] = {i, j, k};
        f(p);
      }
}

/// |a|, |c| < 1, b >= 2 + |a| + |c| ... strictly dominant; d in [-1, 1].
template <typename T> void fillRandom(const System &s, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  forPoints(s, [&](const int64_t *p) {
    double a = u(rng), c = u(rng);
    at<T>(s.dat[0], p) = T(a);
    at<T>(s.dat[1], p) =
        T((u(rng) < 0 ? -1 : 1) *
          (std::fabs(a) + std::fabs(c) + 0.5 + std::fabs(u(rng))));
    at<T>(s.dat[2], p) = T(c);
    at<T>(s.dat[3], p) = T(u(rng));
  });
}

/// Dense Gaussian elimination with partial pivoting.
std::vector<double> denseSolve(std::vector<double> m, std::vector<double> r) {
  const size_t n = r.size();
  for (size_t k = 0; k < n; ++k) {
    size_t piv = k;
    for (size_t i = k + 1; i < n; ++i)
      if (std::fabs(m[i * n + k]) > std::fabs(m[piv * n + k]))
        piv = i;
    for (size_t j = 0; j < n; ++j)
      std::swap(m[k * n + j], m[piv * n + j]);
    std::swap(r[k], r[piv]);
    for (size_t i = k + 1; i < n; ++i) {
      double f = m[i * n + k] / m[k * n + k];
      for (size_t j = k; j < n; ++j)
        m[i * n + j] -= f * m[k * n + j];
      r[i] -= f * r[k];
    }
  }
  std::vector<double> x(n);
  for (size_t i = n; i-- > 0;) {
    double v = r[i];
    for (size_t j = i + 1; j < n; ++j)
      v -= m[i * n + j] * x[j];
    x[i] = v / m[i * n + i];
  }
  return x;
}

/// Solves along `along` over [lo, hi) (whole block when lo is empty) and
/// checks every point: lines in the range against the dense solve of the
/// values before, the rest unchanged.
template <typename T>
void checkSolve(const System &s, int along, std::vector<int64_t> lo,
                std::vector<int64_t> hi, double tol) {
  fillRandom<T>(s, 1234 + along);
  std::vector<std::vector<double>> before(4);
  for (int i = 0; i < 4; ++i)
    forPoints(s, [&](const int64_t *p) {
      before[i].push_back(double(at<T>(s.dat[i], p)));
    });
  opd_solve_tridiagonal(s.dat[0], s.dat[1], s.dat[2], s.dat[3], along,
                        lo.empty() ? nullptr : lo.data(),
                        lo.empty() ? nullptr : hi.data());
  int64_t l[3] = {0, 0, 0}, h[3] = {1, 1, 1};
  for (int k = 0; k < s.dims; ++k) {
    l[k] = lo.empty() ? 0 : lo[k];
    h[k] = lo.empty() ? s.n[k] : hi[k];
  }
  auto flat = [&](const int64_t *p) {
    return size_t(p[0] + s.n[0] * (p[1] + s.n[1] * p[2]));
  };
  const int64_t n = h[along] - l[along];
  forPoints(s, [&](const int64_t *p) {
    bool inside = true;
    for (int k = 0; k < 3; ++k)
      inside = inside && p[k] >= l[k] && p[k] < h[k];
    for (int i = 0; i < 3; ++i)
      ASSERT_EQ(double(at<T>(s.dat[i], p)), before[i][flat(p)]);
    if (!inside) {
      ASSERT_EQ(double(at<T>(s.dat[3], p)), before[3][flat(p)]);
      return;
    }
    if (p[along] != l[along])
      return; // each line once, from its first point
    std::vector<double> m(static_cast<size_t>(n * n), 0.0);
    std::vector<double> r(static_cast<size_t>(n));
    int64_t q[3] = {p[0], p[1], p[2]};
    for (int64_t row = 0; row < n; ++row) {
      q[along] = l[along] + row;
      m[size_t(row * n + row)] = before[1][flat(q)];
      if (row > 0)
        m[size_t(row * n + row - 1)] = before[0][flat(q)];
      if (row < n - 1)
        m[size_t(row * n + row + 1)] = before[2][flat(q)];
      r[size_t(row)] = before[3][flat(q)];
    }
    std::vector<double> x = denseSolve(m, r);
    for (int64_t row = 0; row < n; ++row) {
      q[along] = l[along] + row;
      ASSERT_NEAR(double(at<T>(s.dat[3], q)), x[size_t(row)],
                  tol * (1 + std::fabs(x[size_t(row)])))
          << "along " << along << " at (" << q[0] << ", " << q[1] << ", "
          << q[2] << ")";
    }
  });
}

TEST_F(TridiagonalTest, OneDimension) {
  System s = makeSystem({19});
  checkSolve<double>(s, 0, {}, {}, 1e-13);
  checkSolve<double>(s, 0, {2}, {17}, 1e-13);
}

TEST_F(TridiagonalTest, TwoDimensionsEachDimension) {
  System s = makeSystem({13, 11});
  for (int along = 0; along < 2; ++along) {
    checkSolve<double>(s, along, {}, {}, 1e-13);
    checkSolve<double>(s, along, {1, 2}, {12, 10}, 1e-13);
  }
}

TEST_F(TridiagonalTest, ThreeDimensionsEachDimension) {
  System s = makeSystem({9, 7, 10});
  for (int along = 0; along < 3; ++along) {
    checkSolve<double>(s, along, {}, {}, 1e-13);
    checkSolve<double>(s, along, {1, 0, 3}, {8, 6, 9}, 1e-13);
  }
}

TEST_F(TridiagonalTest, ManyPanels) {
  // Along 1: 1100 systems in panels of at most 512 lanes, the last partial.
  // (Partial groups along 0: 11 and 7 x 10 lines in the tests above.)
  System s = makeSystem({1100, 5});
  checkSolve<double>(s, 1, {}, {}, 1e-13);
  checkSolve<double>(s, 1, {3, 1}, {1097, 4}, 1e-13);
}

TEST_F(TridiagonalTest, AlongZeroTilesAndGroups) {
  // Along 0: groups of 8 f64 lines transposed in registers, a partial
  // group 16 rows at a time in tiles. 60 and 48 lines: full groups and a
  // partial one; 40, 38 and 37 rows: whole tiles, an even tail and an odd
  // one.
  System s = makeSystem({40, 20, 3});
  checkSolve<double>(s, 0, {}, {}, 1e-13);
  checkSolve<double>(s, 0, {1, 2, 0}, {39, 18, 3}, 1e-13);
  checkSolve<double>(s, 0, {3, 0, 0}, {40, 16, 3}, 1e-13);
}

// The same systems solved along 0 (f64 full groups of 8 lines: the
// transposes in registers; the partial group: tiles) and along 1 of the
// transposed block (panels, no transposes) give the same bits: every path
// does each system's operations in the same order. Odd and even lines,
// short and long ones.
TEST_F(TridiagonalTest, AlongZeroSameBitsAsAlongOne) {
  for (int64_t rows : {2, 7, 38, 1024, 1025, 1500}) {
    const int64_t lines = 35; // four full groups and a partial one
    System x = makeSystem({rows, lines}), y = makeSystem({lines, rows});
    fillRandom<double>(x, unsigned(rows));
    for (int i = 0; i < 4; ++i)
      for (int64_t q = 0; q < lines; ++q)
        for (int64_t r = 0; r < rows; ++r) {
          int64_t p[3] = {r, q, 0}, t[3] = {q, r, 0};
          at<double>(y.dat[i], t) = at<double>(x.dat[i], p);
        }
    opd_solve_tridiagonal(x.dat[0], x.dat[1], x.dat[2], x.dat[3], 0, nullptr,
                          nullptr);
    opd_solve_tridiagonal(y.dat[0], y.dat[1], y.dat[2], y.dat[3], 1, nullptr,
                          nullptr);
    for (int64_t q = 0; q < lines; ++q)
      for (int64_t r = 0; r < rows; ++r) {
        int64_t p[3] = {r, q, 0}, t[3] = {q, r, 0};
        const double u = at<double>(x.dat[3], p), v = at<double>(y.dat[3], t);
        ASSERT_EQ(std::memcmp(&u, &v, sizeof u), 0)
            << rows << " rows, line " << q << ", row " << r << ": " << u
            << " against " << v;
      }
    opd_rt_finalize();
  }
}

// The panels along 1 and 2 run SSE2, AVX2 or AVX-512 code, whichever the
// CPU has (OPD_SIMD caps it): the same bits from each, f64 and f32, with
// panel widths that leave vector tails.
TEST_F(TridiagonalTest, PanelsSameBitsForEverySimdLevel) {
  auto solveAll = [](opd_scalar type, const char *level) {
    setenv("OPD_SIMD", level, 1);
    std::vector<double> out;
    for (int along = 1; along < 3; ++along) {
      System s = makeSystem({45, 23, 19}, type);
      if (type == OPD_F64)
        fillRandom<double>(s, 5 + unsigned(along));
      else
        fillRandom<float>(s, 5 + unsigned(along));
      opd_solve_tridiagonal(s.dat[0], s.dat[1], s.dat[2], s.dat[3], along,
                            nullptr, nullptr);
      forPoints(s, [&](const int64_t *p) {
        out.push_back(type == OPD_F64 ? at<double>(s.dat[3], p)
                                      : double(at<float>(s.dat[3], p)));
      });
      opd_rt_finalize();
    }
    unsetenv("OPD_SIMD");
    return out;
  };
  for (opd_scalar type : {OPD_F64, OPD_F32}) {
    const std::vector<double> base = solveAll(type, "sse2");
    for (const char *level : {"avx2", "avx512"}) {
      const std::vector<double> v = solveAll(type, level);
      ASSERT_EQ(v.size(), base.size());
      EXPECT_EQ(std::memcmp(v.data(), base.data(), v.size() * sizeof(double)),
                0)
          << level << (type == OPD_F64 ? " f64" : " f32");
    }
  }
}

TEST_F(TridiagonalTest, BadSimdLevelIsAnError) {
  auto run = [] {
    setenv("OPD_SIMD", "avx1024", 1);
    System s = makeSystem({8, 8});
    fillRandom<double>(s, 1);
    opd_solve_tridiagonal(s.dat[0], s.dat[1], s.dat[2], s.dat[3], 1, nullptr,
                          nullptr);
  };
  EXPECT_DEATH(run(), "invalid value 'avx1024' for environment variable "
                      "OPD_SIMD: expected sse2, avx2 or avx512");
}

TEST_F(TridiagonalTest, ZeroPivotInALaterTileOfAFullGroup) {
  auto run = [] {
    System s = makeSystem({40, 20});
    fillRandom<double>(s, 7);
    int64_t p[3] = {35, 17, 0};
    at<double>(s.dat[0], p) = 0; // m_35 = b_35 - a_35 c'_34 = 0
    at<double>(s.dat[1], p) = 0;
    opd_solve_tridiagonal(s.dat[0], s.dat[1], s.dat[2], s.dat[3], 0, nullptr,
                          nullptr);
  };
  EXPECT_DEATH(run(), "zero pivot \\(0\\) in row 35 of the system at "
                      "\\(\\*, 17\\), point \\(35, 17\\)");
}

TEST_F(TridiagonalTest, LinesOfOnePointAndEmptyRanges) {
  System s = makeSystem({6, 4});
  checkSolve<double>(s, 0, {0, 0}, {1, 4}, 1e-15);
  checkSolve<double>(s, 1, {0, 2}, {6, 3}, 1e-15);
  checkSolve<double>(s, 1, {0, 2}, {6, 2}, 0);
}

TEST_F(TridiagonalTest, SinglePrecision) {
  System s = makeSystem({17, 9, 5}, OPD_F32);
  for (int along = 0; along < 3; ++along)
    checkSolve<float>(s, along, {}, {}, 2e-5);
}

/// Solves along each dimension of a 70 x 41 x 37 block at 1 and 2 threads
/// (with `split`, marked split along the solve dimension: the distributed
/// path) and expects the same bits.
void expectOneAndTwoThreadsBitwiseEqual(bool split) {
  const int saved = omp_get_max_threads();
  for (int along = 0; along < 3; ++along) {
    std::vector<double> out[2];
    for (int t = 0; t < 2; ++t) {
      System s = makeSystem({70, 41, 37});
      if (split)
        s.dat[3]->block->edgeLo[along] = false;
      fillRandom<double>(s, 99);
      omp_set_num_threads(t + 1);
      opd_solve_tridiagonal(s.dat[0], s.dat[1], s.dat[2], s.dat[3], along,
                            nullptr, nullptr);
      forPoints(s, [&](const int64_t *p) {
        out[t].push_back(at<double>(s.dat[3], p));
      });
      opd_rt_finalize();
    }
    ASSERT_EQ(out[0].size(), out[1].size());
    EXPECT_EQ(std::memcmp(out[0].data(), out[1].data(),
                          out[0].size() * sizeof(double)),
              0)
        << "along " << along;
  }
  omp_set_num_threads(saved);
}

TEST_F(TridiagonalTest, OneAndTwoThreadsBitwiseEqual) {
  expectOneAndTwoThreadsBitwiseEqual(false);
}

TEST_F(TridiagonalTest, ZeroPivotNamesSystemAndRow) {
  auto run = [] {
    System s = makeSystem({6, 5});
    fillRandom<double>(s, 7);
    int64_t p[3] = {2, 3, 0};
    at<double>(s.dat[0], p) = 0; // m_2 = b_2 - a_2 c'_1 = 0
    at<double>(s.dat[1], p) = 0;
    opd_solve_tridiagonal(s.dat[0], s.dat[1], s.dat[2], s.dat[3], 0, nullptr,
                          nullptr);
  };
  EXPECT_DEATH(
      run(),
      "error: tridiagonal solve of dat 'd' on block 'grid' along dimension "
      "0: zero pivot \\(0\\) in row 2 of the system at \\(\\*, 3\\), point "
      "\\(2, 3\\); Thomas's algorithm does not pivot, so every system must "
      "be diagonally dominant");
}

// The distributed path (block marked split along the solve dimension)
// reports a zero pivot of its elimination the same way: system and row.
TEST_F(TridiagonalTest, ZeroPivotOnTheDistributedPath) {
  auto run = [] {
    System s = makeSystem({6, 5});
    s.dat[3]->block->edgeLo[0] = false;
    fillRandom<double>(s, 7);
    int64_t p[3] = {3, 1, 0};
    at<double>(s.dat[0], p) = 0; // b_3 - a_3 c'_2 = 0
    at<double>(s.dat[1], p) = 0;
    opd_solve_tridiagonal(s.dat[0], s.dat[1], s.dat[2], s.dat[3], 0, nullptr,
                          nullptr);
  };
  EXPECT_DEATH(run(), "along dimension 0: zero pivot \\(0\\) in row 3 of the "
                      "system at \\(\\*, 1\\), point \\(3, 1\\)");
}

TEST_F(TridiagonalTest, NonFinitePivotAlongAStridedDimension) {
  auto run = [] {
    System s = makeSystem({4, 5, 6});
    fillRandom<double>(s, 7);
    int64_t p[3] = {1, 2, 4};
    at<double>(s.dat[1], p) = NAN;
    opd_solve_tridiagonal(s.dat[0], s.dat[1], s.dat[2], s.dat[3], 2, nullptr,
                          nullptr);
  };
  EXPECT_DEATH(
      run(),
      "non-finite pivot \\(-?nan\\) in row 4 of the system at \\(1, 2, \\*\\), "
      "point \\(1, 2, 4\\)");
}

// A block marked split along the solve dimension (as a rank below another
// sees it) takes the distributed path: the modified Thomas algorithm on the
// segment, its first and last rows as the reduced system (on one process
// the whole of it), back substitution. Against the dense solve, along each
// dimension, with segments of 1, 2, 3 and more rows. (Several ranks:
// tests/mpi/tridiag_split.opd.)
TEST_F(TridiagonalTest, DistributedPathOnOneRank) {
  System s = makeSystem({9, 7, 10});
  for (int along = 0; along < 3; ++along) {
    s.dat[3]->block->edgeHi[along] = false;
    checkSolve<double>(s, along, {}, {}, 1e-13);
    checkSolve<double>(s, along, {1, 0, 3}, {8, 6, 9}, 1e-13);
    for (int64_t rows = 1; rows <= 3; ++rows) {
      std::vector<int64_t> lo = {0, 0, 0}, hi = {9, 7, 10};
      lo[size_t(along)] = 2;
      hi[size_t(along)] = 2 + rows;
      checkSolve<double>(s, along, lo, hi, 1e-14);
    }
    s.dat[3]->block->edgeHi[along] = true;
  }
  System f = makeSystem({6, 5}, OPD_F32);
  f.dat[3]->block->edgeLo[1] = false;
  checkSolve<float>(f, 1, {}, {}, 2e-5);
}

// The distributed path's lane loops (TridiagonalSplit.cpp): along 0 groups
// of 16 lines (60 and 48 lines: full groups and a partial one; 40 and 37
// rows: whole tiles and an odd tail), along 1 and 2 panels of consecutive
// i0 (1100 lines along 1: panels of 512 lanes, the last partial), f64 and
// f32, whole block and sub-ranges, each against the dense solve.
TEST_F(TridiagonalTest, DistributedPathLanesAndGroups) {
  System s = makeSystem({40, 20, 3});
  s.dat[3]->block->edgeLo[0] = false;
  checkSolve<double>(s, 0, {}, {}, 1e-13);
  checkSolve<double>(s, 0, {3, 1, 0}, {40, 17, 3}, 1e-13);
  System w = makeSystem({1100, 5});
  w.dat[3]->block->edgeHi[1] = false;
  checkSolve<double>(w, 1, {}, {}, 1e-13);
  checkSolve<double>(w, 1, {3, 1}, {1097, 5}, 1e-13);
  System t = makeSystem({21, 9, 140});
  for (int along = 0; along < 3; ++along) {
    t.dat[3]->block->edgeLo[along] = false;
    checkSolve<double>(t, along, {2, 1, 5}, {20, 9, 131}, 1e-13);
    t.dat[3]->block->edgeLo[along] = true;
  }
  System f = makeSystem({37, 19, 11}, OPD_F32);
  for (int along = 0; along < 3; ++along) {
    f.dat[3]->block->edgeHi[along] = false;
    checkSolve<float>(f, along, {}, {}, 2e-5);
    checkSolve<float>(f, along, {1, 2, 1}, {36, 18, 10}, 2e-5);
    f.dat[3]->block->edgeHi[along] = true;
  }
}

// The distributed path's results do not depend on the thread count: every
// system's arithmetic is the same in any lane or unit.
TEST_F(TridiagonalTest, DistributedPathOneAndTwoThreadsBitwiseEqual) {
  expectOneAndTwoThreadsBitwiseEqual(true);
}

// Zero pivots (a = b = 0) at `bad` on the distributed path along `along`
// of a 3D block, 2 threads: the error names the first failing system in
// line order, not the lowest row nor the first unit a thread finished.
void splitZeroPivots(int along, std::vector<std::vector<int64_t>> bad) {
  omp_set_num_threads(2);
  System s = makeSystem({40, 21, 30});
  s.dat[3]->block->edgeHi[along] = false;
  fillRandom<double>(s, 7);
  for (std::vector<int64_t> &p : bad) {
    at<double>(s.dat[0], p.data()) = 0;
    at<double>(s.dat[1], p.data()) = 0;
  }
  opd_solve_tridiagonal(s.dat[0], s.dat[1], s.dat[2], s.dat[3], along, nullptr,
                        nullptr);
}

TEST_F(TridiagonalTest, DistributedPathFirstFailingLine) {
  // Along 0: lines q = i1 + 21 i2 in groups of 16; (9, 3, 0) is line 3,
  // in group 0; (2, 20, 0) and (30, 1, 1), lines 20 and 22, fail in
  // earlier rows in group 1.
  EXPECT_DEATH(splitZeroPivots(0, {{30, 1, 1}, {2, 20, 0}, {9, 3, 0}}),
               "along dimension 0: zero pivot \\(0\\) in row 9 of the system "
               "at \\(\\*, 3, 0\\), point \\(9, 3, 0\\)");
  // Along 1: a panel of the 40 i0 for each i2; the later lane (i0 = 31)
  // fails in row 2, the earlier one (i0 = 6) in row 17; a later panel in
  // row 0.
  EXPECT_DEATH(splitZeroPivots(1, {{31, 2, 4}, {6, 17, 4}, {1, 0, 5}}),
               "along dimension 1: zero pivot \\(0\\) in row 17 of the system "
               "at \\(6, \\*, 4\\), point \\(6, 17, 4\\)");
  // Along 2, and a pivot in row 1 (normalised by b alone).
  EXPECT_DEATH(splitZeroPivots(2, {{39, 20, 0}, {12, 20, 1}}),
               "along dimension 2: zero pivot \\(0\\) in row 1 of the system "
               "at \\(12, 20, \\*\\), point \\(12, 20, 1\\)");
}

// Row 0's pivot of the backward pass, 1 - c'_0 a'_1 (rows 0 .. 2 of a
// segment: b_0 = 1, c_0 = 2, a_1 = 1, b_1 = 2), is checked too.
TEST_F(TridiagonalTest, DistributedPathZeroPivotOfRowZero) {
  auto run = [] {
    System s = makeSystem({6, 5});
    s.dat[3]->block->edgeLo[1] = false;
    fillRandom<double>(s, 7);
    int64_t p0[3] = {4, 1, 0}, p1[3] = {4, 2, 0};
    at<double>(s.dat[1], p0) = 1;
    at<double>(s.dat[2], p0) = 2;
    at<double>(s.dat[0], p1) = 1;
    at<double>(s.dat[1], p1) = 2;
    int64_t lo[2] = {0, 1}, hi[2] = {6, 4};
    opd_solve_tridiagonal(s.dat[0], s.dat[1], s.dat[2], s.dat[3], 1, lo, hi);
  };
  EXPECT_DEATH(run(), "along dimension 1: zero pivot \\(0\\) in row 0 of the "
                      "system at \\(4, \\*\\), point \\(4, 1\\)");
}

TEST_F(TridiagonalTest, RangeOutsideADatIsAnError) {
  auto run = [] {
    System s = makeSystem({6, 5});
    int64_t lo[2] = {0, 0}, hi[2] = {8, 5};
    opd_solve_tridiagonal(s.dat[0], s.dat[1], s.dat[2], s.dat[3], 0, lo, hi);
  };
  EXPECT_DEATH(run(),
               "the range \\[0, 8\\) of dimension 0 reaches outside dat 'a'");
}

} // namespace

// A device solve's box (opd_solve_tridiagonal_box): the range as given,
// and each dat's offset from opd_dat_data and strides locate every point
// of it (the dats have different halos, so different offsets).
TEST_F(TridiagonalTest, DeviceBoxLocatesEveryDatsPoints) {
  System s = makeSystem({9, 7, 5});
  const int64_t lo[3] = {1, 2, 0}, hi[3] = {8, 6, 5};
  for (int along = 0; along < 3; ++along) {
    opd_tridiag_box box;
    ASSERT_EQ(opd_solve_tridiagonal_box(s.dat[0], s.dat[1], s.dat[2], s.dat[3],
                                        along, lo, hi, &box),
              1);
    EXPECT_EQ(box.along, along);
    EXPECT_EQ(box.split, 0);
    EXPECT_EQ(box.f64, 1);
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(box.lo[k], lo[k]);
      EXPECT_EQ(box.hi[k], hi[k]);
    }
    for (int i = 0; i < 4; ++i) {
      double *data = static_cast<double *>(opd_dat_data(s.dat[i]));
      for (int64_t k = lo[2]; k < hi[2]; ++k)
        for (int64_t j = lo[1]; j < hi[1]; ++j)
          for (int64_t x = lo[0]; x < hi[0]; ++x) {
            const int64_t p[3] = {x, j, k};
            const int64_t off = box.first[i] + (x - lo[0]) * box.stride[i][0] +
                                (j - lo[1]) * box.stride[i][1] +
                                (k - lo[2]) * box.stride[i][2];
            ASSERT_EQ(data + off, &at<double>(s.dat[i], p));
          }
    }
  }
  // Nothing to solve: an empty range.
  const int64_t none[3] = {3, 2, 0};
  opd_tridiag_box box;
  EXPECT_EQ(opd_solve_tridiagonal_box(s.dat[0], s.dat[1], s.dat[2], s.dat[3], 1,
                                      none, none, &box),
            0);
}

// After a device solve's bad pivot, the host's checks name the system and
// row as the host solve does, and return when every pivot is good.
TEST_F(TridiagonalTest, DeviceCheckNamesTheHostSolvesPivot) {
  System good = makeSystem({6, 5});
  fillRandom<double>(good, 7);
  opd_solve_tridiagonal_check(good.dat[0], good.dat[1], good.dat[2],
                              good.dat[3], 0, nullptr, nullptr);
  auto run = [] {
    System s = makeSystem({6, 5});
    fillRandom<double>(s, 7);
    int64_t p[3] = {2, 3, 0};
    at<double>(s.dat[0], p) = 0;
    at<double>(s.dat[1], p) = 0;
    opd_solve_tridiagonal_check(s.dat[0], s.dat[1], s.dat[2], s.dat[3], 0,
                                nullptr, nullptr);
  };
  EXPECT_DEATH(
      run(),
      "error: tridiagonal solve of dat 'd' on block 'grid' along dimension "
      "0: zero pivot \\(0\\) in row 2 of the system at \\(\\*, 3\\), point "
      "\\(2, 3\\); Thomas's algorithm does not pivot");
}
