// airfoil_ref.cpp - Sequential reference for OP2's Airfoil (tests only).
// SPDX-License-Identifier: Apache-2.0
//
// An independent, plain C++17 implementation of the Airfoil benchmark of
// OP2-Common (apps/c/airfoil, Mike Giles, after the FORTRAN code of
// Devendra Ghate and Mike Giles): the 2D Euler equations on an unstructured
// quadrilateral mesh, a cell-centred finite volume scheme with scalar
// dissipation, marched to a steady state by a two-stage predictor/corrector
// with local time steps. It shares no code with opdc or its runtime; the
// e2e tests run it on the mesh opd-airfoil-meshgen writes and require
// opdc's build of examples/airfoil/airfoil.opd to print the same lines.
//
// One iteration:
//   qold = q                                   (save_soln, every cell)
//   twice:
//     adt(c) = sum over the 4 sides of |u.n| + c |side|, / cfl
//                                              (adt_calc, every cell)
//     res(c) += fluxes across interior edges   (res_calc, every edge)
//     res(c) += fluxes across boundary edges   (bres_calc, every bedge)
//     q = qold - res / adt; res = 0; rms += (res / adt)^2
//                                              (update, every cell)
//   rms = sqrt(rms / ncell), printed every 100 iterations
//
// Floating point: the expressions keep OP2's operation order, the
// constants are OP2's float literals widened to double, and the build uses
// no FMA contraction, so the sequential run is reproducible bit for bit.
// Everything runs in element order (cells, edges, boundary edges), one
// after the other, which fixes the order of every increment and of the rms
// sum.
//
// Usage: opd-airfoil-ref [--meshfile=FILE] [--niter=N]
//                        [--compare-q=FILE]... [--q-tol=X]
// prints what airfoil.opd prints. Each --compare-q reads a solution another
// program wrote (dataset p_q, ncell x 4 doubles, as airfoil.opd's
// q_final.h5) and requires it to differ from this run's final q by at most
// X (default 0) times max |q|; exit status 1 otherwise, 2 for bad
// arguments.

#include <hdf5.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// ---------------------------------------------------------------------------
// Constants: OP2's airfoil.cpp assigns them to doubles from float literals
// (gam = 1.4f, ...), so each one is the nearest float widened to double.
struct Constants {
  double gam, gm1, cfl, eps, mach, alpha;
  double qinf[4]; // free stream: density, x/y momentum, energy
};

Constants op2Constants() {
  Constants k{};
  k.gam = static_cast<double>(1.4f);
  k.gm1 = k.gam - 1.0;
  k.cfl = static_cast<double>(0.9f);
  k.eps = static_cast<double>(0.05f);
  k.mach = static_cast<double>(0.4f);
  // 3 degrees, computed in single precision; no kernel uses it (the mesh
  // holds the rotated geometry), it is checked against the file only.
  const float quarterPi = std::atan(1.0f);
  k.alpha = static_cast<double>(3.0f * quarterPi / 45.0f);
  const double pressure = 1.0;
  const double density = 1.0;
  const double speed = std::sqrt(k.gam * pressure / density) * k.mach;
  const double energy = pressure / (density * k.gm1) + 0.5 * speed * speed;
  k.qinf[0] = density;
  k.qinf[1] = density * speed;
  k.qinf[2] = 0.0;
  k.qinf[3] = density * energy;
  return k;
}

// ---------------------------------------------------------------------------
// The mesh in OP2's HDF5 layout (opd-airfoil-meshgen's README): one int
// dataset per set holding its size, int [n][dim] maps, [n][dim] dats.
struct Mesh {
  int nnode = 0, ncell = 0, nedge = 0, nbedge = 0;
  std::vector<int> cellNodes;  // pcell   [ncell][4]
  std::vector<int> edgeNodes;  // pedge   [nedge][2]
  std::vector<int> edgeCells;  // pecell  [nedge][2]
  std::vector<int> bedgeNodes; // pbedge  [nbedge][2]
  std::vector<int> bedgeCell;  // pbecell [nbedge][1]
  std::vector<int> bedgeKind;  // p_bound [nbedge][1]: 1 wall, else far field
  std::vector<double> coords;  // p_x     [nnode][2]
};

struct Flow {
  std::vector<double> q, qold, adt, res; // [ncell][4], [4], [1], [4]
};

class H5File {
public:
  explicit H5File(const std::string &path) : path_(path) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    id_ = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (id_ < 0)
      throw std::runtime_error("cannot open HDF5 file '" + path + "'");
  }
  ~H5File() { H5Fclose(id_); }
  H5File(const H5File &) = delete;
  H5File &operator=(const H5File &) = delete;

  bool has(const char *name) const {
    return H5Lexists(id_, name, H5P_DEFAULT) > 0;
  }

  // A set's size: the one int of its dataset.
  int setSize(const char *name) const {
    std::vector<int> v = read<int>(name, H5T_NATIVE_INT, 1, 0);
    if (v.size() != 1 || v[0] < 0)
      throw std::runtime_error(where(name) + " is not a set size");
    return v[0];
  }

  // A [rows][cols] dataset (or [rows] when cols is 0) of the given type.
  template <typename T>
  std::vector<T> read(const char *name, hid_t type, hsize_t rows,
                      hsize_t cols) const {
    hid_t set = H5Dopen2(id_, name, H5P_DEFAULT);
    if (set < 0)
      throw std::runtime_error(where(name) + " is missing");
    hid_t space = H5Dget_space(set);
    hsize_t dims[2] = {0, 0};
    const int rank = H5Sget_simple_extent_ndims(space);
    if (rank == 1 || rank == 2)
      H5Sget_simple_extent_dims(space, dims, nullptr);
    H5Sclose(space);
    const bool shapeOk =
        cols == 0 ? (rank == 1 && dims[0] == rows)
                  : (rank == 2 && dims[0] == rows && dims[1] == cols);
    std::vector<T> data(rows * (cols == 0 ? 1 : cols));
    const bool readOk = shapeOk && H5Dread(set, type, H5S_ALL, H5S_ALL,
                                           H5P_DEFAULT, data.data()) >= 0;
    H5Dclose(set);
    if (!shapeOk)
      throw std::runtime_error(where(name) + " does not have shape [" +
                               std::to_string(rows) +
                               (cols ? "][" + std::to_string(cols) : "") + "]");
    if (!readOk)
      throw std::runtime_error("cannot read " + where(name));
    return data;
  }

private:
  std::string where(const char *name) const {
    return std::string("dataset '") + name + "' of '" + path_ + "'";
  }

  std::string path_;
  hid_t id_ = -1;
};

void checkIndices(const std::vector<int> &map, int target, const char *name) {
  for (int i : map)
    if (i < 0 || i >= target)
      throw std::runtime_error(
          std::string("map '") + name + "' holds index " + std::to_string(i) +
          ", outside its target set of " + std::to_string(target));
}

void readMesh(const std::string &path, const Constants &k, Mesh &m, Flow &f) {
  H5File h5(path);
  m.nnode = h5.setSize("nodes");
  m.ncell = h5.setSize("cells");
  m.nedge = h5.setSize("edges");
  m.nbedge = h5.setSize("bedges");
  const hsize_t nn = m.nnode, nc = m.ncell, ne = m.nedge, nb = m.nbedge;
  m.cellNodes = h5.read<int>("pcell", H5T_NATIVE_INT, nc, 4);
  m.edgeNodes = h5.read<int>("pedge", H5T_NATIVE_INT, ne, 2);
  m.edgeCells = h5.read<int>("pecell", H5T_NATIVE_INT, ne, 2);
  m.bedgeNodes = h5.read<int>("pbedge", H5T_NATIVE_INT, nb, 2);
  m.bedgeCell = h5.read<int>("pbecell", H5T_NATIVE_INT, nb, 1);
  m.bedgeKind = h5.read<int>("p_bound", H5T_NATIVE_INT, nb, 1);
  m.coords = h5.read<double>("p_x", H5T_NATIVE_DOUBLE, nn, 2);
  checkIndices(m.cellNodes, m.nnode, "pcell");
  checkIndices(m.edgeNodes, m.nnode, "pedge");
  checkIndices(m.edgeCells, m.ncell, "pecell");
  checkIndices(m.bedgeNodes, m.nnode, "pbedge");
  checkIndices(m.bedgeCell, m.ncell, "pbecell");

  // The initial flow field as the file holds it (the free stream).
  f.q = h5.read<double>("p_q", H5T_NATIVE_DOUBLE, nc, 4);
  f.qold = h5.read<double>("p_qold", H5T_NATIVE_DOUBLE, nc, 4);
  f.adt = h5.read<double>("p_adt", H5T_NATIVE_DOUBLE, nc, 1);
  f.res = h5.read<double>("p_res", H5T_NATIVE_DOUBLE, nc, 4);

  // OP2's mesh files carry the constants too; where they do, they must be
  // the ones computed above, bit for bit.
  const struct {
    const char *name;
    const double *value;
    hsize_t count;
  } constants[] = {{"gam", &k.gam, 1},   {"gm1", &k.gm1, 1},
                   {"cfl", &k.cfl, 1},   {"eps", &k.eps, 1},
                   {"mach", &k.mach, 1}, {"alpha", &k.alpha, 1},
                   {"qinf", k.qinf, 4}};
  for (const auto &c : constants) {
    if (!h5.has(c.name))
      continue;
    std::vector<double> v =
        h5.read<double>(c.name, H5T_NATIVE_DOUBLE, c.count, 0);
    if (std::memcmp(v.data(), c.value, c.count * sizeof(double)) != 0)
      throw std::runtime_error(std::string("constant '") + c.name + "' in '" +
                               path + "' differs from OP2's value");
  }
}

// ---------------------------------------------------------------------------
// The scheme. Each function is one of OP2's five kernels for one element;
// the arithmetic is written in OP2's order (see the file comment).

// Pressure (gamma - 1)(E - rho |v|^2 / 2) of a cell state, with ri = 1/rho.
double pressure(const Constants &k, const double *s, double ri) {
  return k.gm1 * (s[3] - 0.5 * ri * (s[1] * s[1] + s[2] * s[2]));
}

// Volume flux (v . n) through a side with normal (dy, -dx), with ri = 1/rho.
double volumeFlux(const double *s, double ri, double dx, double dy) {
  return ri * (s[1] * dy - s[2] * dx);
}

// adt_calc: sum over the cell's sides a->b of |v x (b - a)| + c |b - a|,
// divided by cfl: the cell's area over its local time step.
double areaOverTimestep(const Constants &k, const double *corner[4],
                        const double *s) {
  const double ri = 1.0 / s[0];
  const double u = ri * s[1];
  const double v = ri * s[2];
  const double sound =
      std::sqrt(k.gam * k.gm1 * (ri * s[3] - 0.5 * (u * u + v * v)));
  double sum = 0.0;
  for (int side = 0; side < 4; ++side) {
    const double *a = corner[side];
    const double *b = corner[(side + 1) % 4];
    const double dx = b[0] - a[0];
    const double dy = b[1] - a[1];
    const double term =
        std::fabs(u * dy - v * dx) + sound * std::sqrt(dx * dx + dy * dy);
    // OP2 assigns the first side's term and adds the others.
    sum = side == 0 ? term : sum + term;
  }
  return sum / k.cfl;
}

// The averaged flux plus scalar dissipation mu (left - right) across a
// side (dx, dy) between a left state and a right state with pressures and
// volume fluxes already known; component n of the flux.
double centralFlux(int n, const double *l, double pl, double vl,
                   const double *r, double pr, double vr, double mu, double dx,
                   double dy) {
  double average = 0.0;
  switch (n) {
  case 0:
    average = 0.5 * (vl * l[0] + vr * r[0]);
    break;
  case 1:
    average = 0.5 * (vl * l[1] + pl * dy + vr * r[1] + pr * dy);
    break;
  case 2:
    average = 0.5 * (vl * l[2] - pl * dx + vr * r[2] - pr * dx);
    break;
  default:
    average = 0.5 * (vl * (l[3] + pl) + vr * (r[3] + pr));
    break;
  }
  return average + mu * (l[n] - r[n]);
}

// res_calc: the flux across an interior edge from node a to node b, added
// to the residual of the left cell and taken from the right one.
void interiorEdge(const Constants &k, const double *a, const double *b,
                  const double *ql, const double *qr, double adtl, double adtr,
                  double *resl, double *resr) {
  const double dx = a[0] - b[0];
  const double dy = a[1] - b[1];
  const double ril = 1.0 / ql[0];
  const double pl = pressure(k, ql, ril);
  const double vl = volumeFlux(ql, ril, dx, dy);
  const double rir = 1.0 / qr[0];
  const double pr = pressure(k, qr, rir);
  const double vr = volumeFlux(qr, rir, dx, dy);
  const double mu = 0.5 * (adtl + adtr) * k.eps;
  for (int n = 0; n < 4; ++n) {
    const double f = centralFlux(n, ql, pl, vl, qr, pr, vr, mu, dx, dy);
    resl[n] += f;
    resr[n] -= f;
  }
}

// bres_calc: a boundary edge from node a to node b of a cell. A solid wall
// (kind 1) takes only the pressure force; the far field takes the central
// flux against the free stream.
void boundaryEdge(const Constants &k, const double *a, const double *b,
                  const double *q, double adt, double *res, int kind) {
  const double dx = a[0] - b[0];
  const double dy = a[1] - b[1];
  const double ri = 1.0 / q[0];
  const double p = pressure(k, q, ri);
  if (kind == 1) {
    res[1] += p * dy;
    res[2] += -p * dx;
    return;
  }
  const double v = volumeFlux(q, ri, dx, dy);
  const double *inf = k.qinf;
  const double riInf = 1.0 / inf[0];
  const double pInf = pressure(k, inf, riInf);
  const double vInf = volumeFlux(inf, riInf, dx, dy);
  const double mu = adt * k.eps;
  for (int n = 0; n < 4; ++n)
    res[n] += centralFlux(n, q, p, v, inf, pInf, vInf, mu, dx, dy);
}

// One iteration; returns the sum of the squared updates of its second
// stage (OP2 resets rms before each stage's update loop).
double iterate(const Constants &k, const Mesh &m, Flow &f) {
  const int nc = m.ncell;
  f.qold = f.q;
  double sumSquares = 0.0;
  for (int stage = 0; stage < 2; ++stage) {
    for (int c = 0; c < nc; ++c) {
      const double *corner[4];
      for (int j = 0; j < 4; ++j)
        corner[j] = &m.coords[2 * m.cellNodes[4 * c + j]];
      f.adt[c] = areaOverTimestep(k, corner, &f.q[4 * c]);
    }
    for (int e = 0; e < m.nedge; ++e) {
      const int a = m.edgeNodes[2 * e], b = m.edgeNodes[2 * e + 1];
      const int l = m.edgeCells[2 * e], r = m.edgeCells[2 * e + 1];
      interiorEdge(k, &m.coords[2 * a], &m.coords[2 * b], &f.q[4 * l],
                   &f.q[4 * r], f.adt[l], f.adt[r], &f.res[4 * l],
                   &f.res[4 * r]);
    }
    for (int e = 0; e < m.nbedge; ++e) {
      const int a = m.bedgeNodes[2 * e], b = m.bedgeNodes[2 * e + 1];
      const int c = m.bedgeCell[e];
      boundaryEdge(k, &m.coords[2 * a], &m.coords[2 * b], &f.q[4 * c], f.adt[c],
                   &f.res[4 * c], m.bedgeKind[e]);
    }
    sumSquares = 0.0;
    for (int c = 0; c < nc; ++c) {
      const double adti = 1.0 / f.adt[c];
      for (int n = 0; n < 4; ++n) {
        const double delta = adti * f.res[4 * c + n];
        f.q[4 * c + n] = f.qold[4 * c + n] - delta;
        f.res[4 * c + n] = 0.0;
        sumSquares += delta * delta;
      }
    }
  }
  return sumSquares;
}

// ---------------------------------------------------------------------------
// OP2's check on its standard 720000-cell mesh: the final rms it publishes.
constexpr int kStandardCells = 720000;
constexpr double kStandardRms = 0.0001060114637578;

bool parseArg(const char *arg, const char *name, std::string &value) {
  const size_t len = std::strlen(name);
  if (std::strncmp(arg, name, len) != 0 || arg[len] != '=')
    return false;
  value = arg + len + 1;
  return true;
}

int usage(const char *why) {
  std::fprintf(stderr,
               "opd-airfoil-ref: %s\nusage: opd-airfoil-ref [--meshfile=FILE] "
               "[--niter=N] [--compare-q=FILE] [--q-tol=X]\n",
               why);
  return 2;
}

// |q - other| over max |q|, both [ncell][4].
double relativeDifference(const std::vector<double> &q,
                          const std::vector<double> &other) {
  double diff = 0.0, scale = 0.0;
  for (size_t i = 0; i < q.size(); ++i) {
    diff = std::fmax(diff, std::fabs(q[i] - other[i]));
    scale = std::fmax(scale, std::fabs(q[i]));
  }
  return scale > 0.0 ? diff / scale : diff;
}

} // namespace

int main(int argc, char **argv) {
  std::string meshfile = "new_grid.h5", value;
  std::vector<std::string> compareQ;
  long niter = 1000;
  double qTol = 0.0;
  for (int i = 1; i < argc; ++i) {
    char *end = nullptr;
    if (parseArg(argv[i], "--meshfile", value)) {
      meshfile = value;
    } else if (parseArg(argv[i], "--niter", value)) {
      niter = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || niter < 0)
        return usage("--niter takes a count");
    } else if (parseArg(argv[i], "--compare-q", value)) {
      compareQ.push_back(value);
    } else if (parseArg(argv[i], "--q-tol", value)) {
      qTol = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(qTol >= 0.0))
        return usage("--q-tol takes a non-negative number");
    } else {
      return usage((std::string("unknown argument '") + argv[i] + "'").c_str());
    }
  }

  const Constants k = op2Constants();
  Mesh mesh;
  Flow flow;
  try {
    readMesh(meshfile, k, mesh, flow);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "opd-airfoil-ref: %s\n", e.what());
    return 1;
  }

  std::printf("initialising flow field \n");
  const auto start = std::chrono::steady_clock::now();
  for (long iter = 1; iter <= niter; ++iter) {
    const double rms =
        std::sqrt(iterate(k, mesh, flow) / static_cast<double>(mesh.ncell));
    if (iter % 100 == 0)
      std::printf(" %ld  %10.5e \n", iter, rms);
    if (iter % 1000 == 0 && mesh.ncell == kStandardCells) {
      const double diff = std::fabs(100.0 * (rms / kStandardRms) - 100.0);
      std::printf("\n\nTest problem with %d cells is within %3.15E %% of the "
                  "expected solution\n",
                  kStandardCells, diff);
      std::printf("This test is considered %s\n",
                  diff < 0.00001 ? "PASSED" : "FAILED");
    }
  }
  const std::chrono::duration<double> elapsed =
      std::chrono::steady_clock::now() - start;
  std::printf("Max total runtime = \n%f\n", elapsed.count());
  std::fflush(stdout);

  try {
    for (const std::string &path : compareQ) {
      H5File other(path);
      const std::vector<double> q = other.read<double>(
          "p_q", H5T_NATIVE_DOUBLE, static_cast<hsize_t>(mesh.ncell), 4);
      const double diff = relativeDifference(flow.q, q);
      if (diff > qTol) {
        std::fprintf(stderr,
                     "opd-airfoil-ref: p_q of '%s' differs from the reference "
                     "by %.3e of max |q|, more than %.3e\n",
                     path.c_str(), diff, qTol);
        return 1;
      }
      std::fprintf(stderr,
                   "opd-airfoil-ref: p_q of '%s' within %.3e of max |q|\n",
                   path.c_str(), diff);
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "opd-airfoil-ref: %s\n", e.what());
    return 1;
  }
  return 0;
}
