// meshgen.cpp - geometry and connectivity of OP2's Airfoil mesh.
// SPDX-License-Identifier: Apache-2.0
//
// Reimplements the algorithm of OP2-Common apps/mesh_generators/naca0012.m
// (new-style output, i.e. new_grid.dat). The script is MATLAB code, but the
// new_grid.dat that OP2 users run with was evidently produced by GNU Octave:
// its coordinates are reproduced bit for bit (sha256 of the whole file) only
// with Octave's linspace and Octave's complex power, see below. Each numerical
// helper therefore mirrors what Octave does operation by operation, because
// the file prints coordinates with %f: a value that differs in its last bit
// can round to a different 6th decimal, and the sign of an exact zero decides
// between "0.000000" and "-0.000000".
//
// Build note: the results depend on every operation being rounded as
// written. The CMake target compiles this file with -ffp-contract=off (no
// fused multiply-add) and must never be built with -ffast-math.

#include "meshgen.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <numeric>
#include <random>
#include <stdexcept>

namespace opd::meshgen {
namespace {

// ---------------------------------------------------------------------------
// Octave's linspace(x1, x2, n) (liboctave RowVector linspace).
//
// Octave fills the vector symmetrically from both ends with one step
// delta = (x2-x1)/(n-1):  y(i) = x1 + i*delta  for the first half,
// y(n-1-i) = x2 - i*delta for the second half, and for odd n the middle
// element is (x1+x2)/2, or exactly 0 when x1 == -x2. The end points are set,
// not computed. MATLAB's formula x1 + (i*(x2-x1))/(n-1) gives different last
// bits, and with it the grid points where |x| = |y| in the square-root domain
// come out as tiny non-zeros that print as "-0.000000" - the reference file
// does not match.
std::vector<double> octave_linspace(double x1, double x2, long n) {
  std::vector<double> y(static_cast<size_t>(n));
  if (n == 1) {
    y[0] = x2;
    return y;
  }
  y[0] = x1;
  y[n - 1] = x2;
  const double delta = (x2 - x1) / static_cast<double>(n - 1);
  const long n2 = n / 2;
  for (long i = 1; i < n2; ++i) {
    y[i] = x1 + static_cast<double>(i) * delta;
    y[n - 1 - i] = x2 - static_cast<double>(i) * delta;
  }
  if (n % 2 == 1)
    y[n2] = (x1 == -x2) ? 0.0 : (x1 + x2) / 2;
  return y;
}

// ---------------------------------------------------------------------------
// z.^2 for a complex z = a + ib, as Octave evaluates it: elem_xpow calls
// std::pow(std::complex<double>, int), which libstdc++ implements by binary
// powering starting from y = (1,0): for n = 2 it computes w = z*z and then
// y = (1,0)*w. The final multiplication by (1,0) is not a no-op on signed
// zeros: 1*q + 0*p turns an imaginary part of -0 (a < 0, b = 0: the slit
// below the airfoil) into +0, so the reference file prints "0.000000" there.
// Non-zero values pass through unchanged.
std::complex<double> octave_square(double a, double b) {
  // w = z*z with the textbook complex product (GCC's inline _Complex multiply;
  // no NaN/Inf can occur here, so __muldc3 is never involved).
  const double p = a * a - b * b;
  const double q = a * b + b * a;
  // y = (1,0) * w
  const double re = 1.0 * p - 0.0 * q;
  const double im = 1.0 * q + 0.0 * p;
  return {re, im};
}

// ---------------------------------------------------------------------------
// Tridiagonal solve with LAPACK's DGTSV algorithm (Gaussian elimination with
// partial pivoting, NRHS = 1), which is what Octave's sparse "\" runs for a
// non-symmetric tridiagonal matrix. dl/d/du are the sub-, main and super-
// diagonal (dl[i] = A(i+1,i), du[i] = A(i,i+1)); b is overwritten with the
// solution. Row interchanges and the operation order follow the reference
// Fortran, so the result is the same to the last bit.
void dgtsv(std::vector<double> dl, std::vector<double> d,
           std::vector<double> du, std::vector<double> &b) {
  const size_t n = d.size();
  if (n == 0)
    return;
  for (size_t i = 0; i + 1 < n; ++i) {
    const bool last = (i + 2 == n);
    if (std::fabs(d[i]) >= std::fabs(dl[i])) {
      // No row interchange.
      if (d[i] == 0.0)
        throw std::runtime_error("spline: singular system");
      const double fact = dl[i] / d[i];
      d[i + 1] = d[i + 1] - fact * du[i];
      b[i + 1] = b[i + 1] - fact * b[i];
      if (!last)
        dl[i] = 0.0;
    } else {
      // Interchange rows i and i+1.
      const double fact = d[i] / dl[i];
      d[i] = dl[i];
      double temp = d[i + 1];
      d[i + 1] = du[i] - fact * temp;
      if (!last) {
        dl[i] = du[i + 1];
        du[i + 1] = -fact * dl[i];
      }
      du[i] = temp;
      temp = b[i];
      b[i] = b[i + 1];
      b[i + 1] = temp - fact * b[i + 1];
    }
  }
  if (d[n - 1] == 0.0)
    throw std::runtime_error("spline: singular system");
  // Back substitution with U (two super-diagonals after pivoting).
  b[n - 1] = b[n - 1] / d[n - 1];
  if (n > 1)
    b[n - 2] = (b[n - 2] - du[n - 2] * b[n - 1]) / d[n - 2];
  for (size_t k = n - 2; k-- > 0;)
    b[k] = (b[k] - du[k] * b[k + 1] - dl[k] * b[k + 2]) / d[k];
}

// ---------------------------------------------------------------------------
// Octave's spline(x, y, xi) with the default not-a-knot end conditions
// (scripts/polynomial/spline.m, branch n > 4, then ppval). x must be strictly
// increasing. The piecewise cubic on [x(k), x(k+1)] is
//   a(k) + b(k) t + c(k) t^2 + d(k) t^3,   t = xi - x(k),
// where c are found from a tridiagonal system for the interior knots with
// the not-a-knot conditions folded into its first and last rows.
// Expressions are kept in Octave's evaluation order (left to right, with
// the same parenthesisation) because they decide the last bits.
std::vector<double> octave_spline(const std::vector<double> &x,
                                  const std::vector<double> &a,
                                  const std::vector<double> &xi) {
  const size_t n = x.size();
  if (n < 5)
    throw std::runtime_error("spline: needs at least 5 points");
  // 0-based: h[k] = x[k+1]-x[k]; Octave's h(k) is h[k-1].
  std::vector<double> h(n - 1);
  for (size_t k = 0; k + 1 < n; ++k)
    h[k] = x[k + 1] - x[k];

  // Right-hand side g (n-2 entries, for the interior knots).
  std::vector<double> g(n - 2);
  g[0] = 3 / (h[0] + h[1]) * (a[2] - a[1] - h[1] / h[0] * (a[1] - a[0]));
  g[n - 3] =
      3 / (h[n - 2] + h[n - 3]) *
      (h[n - 3] / h[n - 2] * (a[n - 1] - a[n - 2]) - (a[n - 2] - a[n - 3]));
  for (size_t k = 1; k + 3 < n; ++k) // Octave g(2:n-3)
    g[k] = 3 * (a[k + 2] - a[k + 1]) / h[k + 1] - 3 * (a[k + 1] - a[k]) / h[k];

  // Matrix: diagonal dg, sub-diagonal ldg, super-diagonal udg.
  std::vector<double> dg(n - 2), ldg(n - 3), udg(n - 3);
  for (size_t k = 0; k + 2 < n; ++k)
    dg[k] = 2 * (h[k] + h[k + 1]);
  dg[0] = dg[0] - h[0];
  dg[n - 3] = dg[n - 3] - h[n - 2];
  for (size_t k = 0; k + 3 < n; ++k)
    ldg[k] = udg[k] = h[k + 1];
  udg[0] = udg[0] - h[0];
  ldg[n - 4] = ldg[n - 4] - h[n - 2];
  dgtsv(ldg, dg, udg, g);

  std::vector<double> c(n);
  for (size_t k = 0; k + 2 < n; ++k)
    c[k + 1] = g[k];
  c[0] = c[1] + h[0] / h[1] * (c[1] - c[2]);
  c[n - 1] = c[n - 2] + h[n - 2] / h[n - 3] * (c[n - 2] - c[n - 3]);

  std::vector<double> b(n - 1), d(n - 1);
  for (size_t k = 0; k + 1 < n; ++k) {
    b[k] = (a[k + 1] - a[k]) / h[k] - h[k] / 3 * (c[k + 1] + 2 * c[k]);
    d[k] = (c[k + 1] - c[k]) / (3 * h[k]);
  }

  // ppval: interval by lookup(x, xi, "lr") (x(k) <= xi < x(k+1), clamped to
  // the first/last piece), then Horner's scheme from the cubic coefficient.
  std::vector<double> out(xi.size());
  for (size_t m = 0; m < xi.size(); ++m) {
    const double v = xi[m];
    size_t k = static_cast<size_t>(std::upper_bound(x.begin(), x.end(), v) -
                                   x.begin());
    k = std::clamp<size_t>(k, 1, n - 1) - 1;
    const double t = v - x[k];
    double r = d[k];
    r = r * t + c[k];
    r = r * t + b[k];
    r = r * t + a[k];
    out[m] = r;
  }
  return out;
}

} // namespace

bool sizes_fit_int(long I, long J) {
  if (I < 1 || J < 1)
    return false;
  // OP2 stores set sizes and indices as 32-bit ints; the edge set is the
  // largest one (about 6 I J), then the nodes (about 3 I J).
  const long double big = std::numeric_limits<int>::max();
  const long double li = I, lj = J;
  const long double nnode = (3 * li + 1) * (lj + 1);
  const long double nedge = (3 * li - 1) * lj + 3 * li * (lj - 1) + li;
  return nnode <= big && nedge <= big;
}

AirfoilMesh generate(long I, long J) {
  if (!sizes_fit_int(I, J))
    throw std::invalid_argument("mesh size out of range");
  AirfoilMesh m;
  m.I = I;
  m.J = J;

  // -------------------------------------------------------------------------
  // Step 1: NACA0012 upper surface at 100 points clustered at both ends,
  //   x = sin(linspace(0, pi/2, 100)).^2,
  //   y = 0.594689181*(0.298222773 sqrt(x) - 0.127125232 x - 0.357907906 x^2
  //                    + 0.291984971 x^3 - 0.105174696 x^4),   y(end) = 0.
  // Octave's x.^2 and x.^3 are plain products (x*x, x*x*x); x.^4 calls pow.
  const int np = 100;
  std::vector<double> t = octave_linspace(0.0, std::numbers::pi / 2, np);
  std::vector<double> xs(np), ys(np);
  for (int k = 0; k < np; ++k) {
    const double s = std::sin(t[k]);
    xs[k] = s * s;
  }
  for (int k = 0; k < np; ++k) {
    const double x = xs[k];
    const double x2 = x * x, x3 = x * x * x, x4 = std::pow(x, 4.0);
    const double poly = 0.298222773 * std::sqrt(x) - 0.127125232 * x -
                        0.357907906 * x2 + 0.291984971 * x3 - 0.105174696 * x4;
    ys[k] = 0.594689181 * poly;
  }
  ys[np - 1] = 0.0; // close the trailing edge exactly

  // -------------------------------------------------------------------------
  // Step 2: complex square root transform about x0 = 0.0077 (just inside the
  // leading-edge radius): w = sqrt(z - x0) opens the airfoil into a shallow
  // bump over [-1, 1] on the real axis. The lower surface is the mirror image
  // -conj(w) of the upper one, giving 199 points with increasing real part:
  //   W = [-conj(fliplr(w)), w(2:end)].
  // std::sqrt(std::complex) is glibc's csqrt, the function Octave calls.
  const double x0 = 0.0077;
  std::vector<std::complex<double>> w(np);
  for (int k = 0; k < np; ++k)
    w[k] = std::sqrt(std::complex<double>(xs[k] - x0, ys[k]));
  std::vector<double> sx, sy; // the bump: abscissae and heights
  sx.reserve(2 * np - 1);
  sy.reserve(2 * np - 1);
  for (int k = np - 1; k >= 0; --k) {
    sx.push_back(-w[k].real());
    sy.push_back(w[k].imag()); // imag(-conj(w)) = imag(w), exactly
  }
  for (int k = 1; k < np; ++k) {
    sx.push_back(w[k].real());
    sy.push_back(w[k].imag());
  }

  // -------------------------------------------------------------------------
  // Step 3: grid in the square-root domain. Columns xb = linspace(-3, 3,
  // 3I+1); the bottom boundary yb is 0 except over the airfoil, the I-1
  // interior points xb(I+2:2I) in (-1, 1), where it follows the bump through
  // a not-a-knot cubic spline. Each column is then spaced uniformly from yb
  // up to 3 with J+1 points: yg(i,:) = linspace(yb(i), 3, J+1).
  const long ni = 3 * I + 1, nj = J + 1;
  const std::vector<double> xb = octave_linspace(-3.0, 3.0, ni);
  std::vector<double> yb(static_cast<size_t>(ni), 0.0);
  if (I >= 2) {
    std::vector<double> xq(xb.begin() + (I + 1),
                           xb.begin() + 2 * I); // xb(I+2:2I)
    const std::vector<double> yq = octave_spline(sx, sy, xq);
    std::copy(yq.begin(), yq.end(), yb.begin() + (I + 1));
  }

  // -------------------------------------------------------------------------
  // Step 4: map back to the physical plane, (x + iy) = (xg + i yg)^2, and
  // number the nodes column-fastest: node(i,j) = i + (j-1)(3I+1) (1-based).
  m.nnode = static_cast<int>(ni * nj);
  m.x.assign(2 * static_cast<size_t>(m.nnode), 0.0);
  for (long i = 0; i < ni; ++i) {
    const std::vector<double> yg = octave_linspace(yb[i], 3.0, nj);
    for (long j = 0; j < nj; ++j) {
      const std::complex<double> p = octave_square(xb[i], yg[j]);
      const size_t n = static_cast<size_t>(i + j * ni);
      m.x[2 * n] = p.real();
      m.x[2 * n + 1] = p.imag();
    }
  }

  // -------------------------------------------------------------------------
  // Step 5: connectivity, in the script's loop orders. 1-based helpers as in
  // the script; the stored indices are 0-based ("switch to C numbering").
  auto node = [ni](long i, long j) {
    return static_cast<int>(i + (j - 1) * ni - 1);
  };
  auto cell = [I](long i, long j) {
    return static_cast<int>(i + (j - 1) * 3 * I - 1);
  };

  m.ncell = static_cast<int>(3 * I * J);
  m.cell.reserve(4 * static_cast<size_t>(m.ncell));
  for (long j = 1; j <= J; ++j)
    for (long i = 1; i <= 3 * I; ++i) { // anticlockwise corners
      m.cell.push_back(node(i, j));
      m.cell.push_back(node(i + 1, j));
      m.cell.push_back(node(i + 1, j + 1));
      m.cell.push_back(node(i, j + 1));
    }

  // Interior edges. Per cell (i,j): the wake-cut edge below it (j = 1,
  // i <= I, joining cell i to its mirror 3I+1-i across the cut), the edge
  // above it (j < J) and the edge to its right (i < 3I).
  m.nedge = static_cast<int>((3 * I - 1) * J + 3 * I * (J - 1) + I);
  m.edge.reserve(2 * static_cast<size_t>(m.nedge));
  m.ecell.reserve(2 * static_cast<size_t>(m.nedge));
  auto add_edge = [&m](int n1, int n2, int c1, int c2) {
    m.edge.push_back(n1);
    m.edge.push_back(n2);
    m.ecell.push_back(c1);
    m.ecell.push_back(c2);
  };
  for (long j = 1; j <= J; ++j)
    for (long i = 1; i <= 3 * I; ++i) {
      if (j == 1 && i <= I)
        add_edge(node(i, j), node(i + 1, j), cell(3 * I + 1 - i, j),
                 cell(i, j));
      if (j < J)
        add_edge(node(i, j + 1), node(i + 1, j + 1), cell(i, j),
                 cell(i, j + 1));
      if (i < 3 * I)
        add_edge(node(i + 1, j), node(i + 1, j + 1), cell(i + 1, j),
                 cell(i, j));
    }
  if (m.edge.size() != 2 * static_cast<size_t>(m.nedge))
    throw std::logic_error("wrong number of interior edges");

  // Boundary edges, walking the boundary: airfoil (bound 1), then the far
  // field (bound 2) up the right side, right-to-left along the top and down
  // the left side.
  m.nbedge = static_cast<int>(I + 3 * I + 2 * J);
  auto add_bedge = [&m](int n1, int n2, int c, int b) {
    m.bedge.push_back(n1);
    m.bedge.push_back(n2);
    m.becell.push_back(c);
    m.bound.push_back(b);
  };
  for (long i = I + 1; i <= 2 * I; ++i)
    add_bedge(node(i + 1, 1), node(i, 1), cell(i, 1), 1);
  for (long j = 1; j <= J; ++j)
    add_bedge(node(3 * I + 1, j + 1), node(3 * I + 1, j), cell(3 * I, j), 2);
  for (long i = 3 * I; i >= 1; --i)
    add_bedge(node(i, J + 1), node(i + 1, J + 1), cell(i, J), 2);
  for (long j = J; j >= 1; --j)
    add_bedge(node(1, j), node(1, j + 1), cell(1, j), 2);
  if (m.bound.size() != static_cast<size_t>(m.nbedge))
    throw std::logic_error("wrong number of boundary edges");
  return m;
}

FlowConstants flow_constants() {
  // As in OP2's airfoil.cpp / convert_mesh.cpp: double variables assigned
  // from float literals, alpha computed in single precision (C++ picks the
  // float overload of atan for atan(1.0f)).
  FlowConstants k{};
  k.gam = 1.4f;
  k.gm1 = k.gam - 1.0f;
  k.cfl = 0.9f;
  k.eps = 0.05f;
  k.mach = 0.4f;
  k.alpha = 3.0f * std::atan(1.0f) / 45.0f;
  const double p = 1.0f, r = 1.0f;
  const double u = std::sqrt(k.gam * p / r) * k.mach;
  const double e = p / (r * k.gm1) + 0.5f * u * u;
  k.qinf[0] = r;
  k.qinf[1] = r * u;
  k.qinf[2] = 0.0f;
  k.qinf[3] = r * e;
  return k;
}

void shuffle(AirfoilMesh &m, unsigned seed) {
  std::mt19937 rng(seed);
  // newToOld of n elements, and its inverse.
  auto perm = [&](int n, std::vector<int> &inv) {
    std::vector<int> p(static_cast<std::size_t>(n));
    std::iota(p.begin(), p.end(), 0);
    std::shuffle(p.begin(), p.end(), rng);
    inv.assign(p.size(), 0);
    for (std::size_t i = 0; i < p.size(); ++i)
      inv[static_cast<std::size_t>(p[i])] = int(i);
    return p;
  };
  std::vector<int> nodeInv, cellInv, edgeInv, bedgeInv;
  const std::vector<int> pn = perm(m.nnode, nodeInv),
                         pc = perm(m.ncell, cellInv),
                         pe = perm(m.nedge, edgeInv),
                         pb = perm(m.nbedge, bedgeInv);
  // Rows of `dim` values: new row i = old row p[i], entries through `inv`
  // (null: values, not indices).
  auto rows = [](auto &v, int dim, const std::vector<int> &p,
                 const std::vector<int> *inv) {
    auto old = v;
    for (std::size_t i = 0; i < p.size(); ++i)
      for (int k = 0; k < dim; ++k) {
        auto x = old[static_cast<std::size_t>(p[i]) * dim + k];
        if (inv)
          x = (*inv)[static_cast<std::size_t>(x)];
        v[i * dim + k] = x;
      }
  };
  rows(m.x, 2, pn, nullptr);
  rows(m.cell, 4, pc, &nodeInv);
  rows(m.edge, 2, pe, &nodeInv);
  rows(m.ecell, 2, pe, &cellInv);
  rows(m.bedge, 2, pb, &nodeInv);
  rows(m.becell, 1, pb, &cellInv);
  rows(m.bound, 1, pb, nullptr);
}

} // namespace opd::meshgen
