// VtkHdf.cpp - VTKHDF copies of HDF5 outputs, so that ParaView (5.10 and
// later) and VTK's vtkHDFReader open what `write` produced (docs/io.md;
// decision 0220 says why VTKHDF and not XDMF).
// SPDX-License-Identifier: Apache-2.0
//
// The HDF5 file keeps OP2's layout (restarts and OP2's tools read it); the
// .vtkhdf file beside it (VTKHDF 1.0: one ImageData or UnstructuredGrid per
// file) holds the fields again with the mesh ParaView needs, inferred from
// what the program declared:
//  - coordinates of a set: a floating dat of dim 2 or 3 on it whose name,
//    or the last '_' part of it, is x, xy, xyz, pos, position(s), or that
//    contains "coord" (Airfoil's p_x, std.mesh's quad_xy and hex_xyz);
//  - cells: the first map (in declaration order) from a set to a set with
//    coordinates, arity 2 (segments), 3 (triangles), 4 (quadrilaterals in
//    2D, tetrahedra in 3D) or 8 (hexahedra). A dat on the cells' set is cell
//    data; a dat on the coordinates' set is node data, on the cells of the
//    first map of 3 or more into it (of 2, else vertices, when none);
//  - blocks: a grid per distinct size and base, point data: 3D blocks as
//    ImageData (unit spacing, origin at the base index), 2D and 1D ones as
//    quadrilaterals or segments between the same points (VTK 9.1's
//    vtkHDFReader crashes on a 2D ImageData); when a block dat of that size
//    with dim = the block's dimensions carries a coordinate name, cells
//    between the points those coordinates place.
// One write on several grids gives one file per grid, <stem>_<grid>.vtkhdf;
// dats none of this places are left out (docs/io.md says so; a note on
// stderr would change the output of every program writing such dats). Rank 0
// assembles each file from the whole arrays: it reads the fields back from the
// HDF5 just written, and the coordinates and connectivity from a temporary file
// that the ranks write together in the original numbering, so the file is the
// same for any rank count.
#include "core/Device.h"
#include "core/Dist.h"
#include "core/Objects.h"
#include "core/Runtime.h"
#include "io/Output.h"

#include <hdf5.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace opdc::rt::io {
namespace {

// A set dat outside the registry (no loop, partition or inference sees
// it) over its own storage: the connectivity of a map, a host copy of
// coordinates, written to the temporary mesh file.
struct TempDat {
  opd_dat dat;
  std::vector<char> storage;
  TempDat(const std::string &name, opd_set *set, int type, int dim) {
    dat.name = name;
    dat.set = set;
    dat.type = type;
    dat.dim = dim;
    dat.bytes = scalarBytes(type);
    dat.elements = set->size;
    storage.resize(std::size_t(set->size * dat.elementBytes()));
    dat.data = storage.data();
  }
};

bool coordinateName(std::string n) {
  for (char &c : n)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  if (n.find("coord") != std::string::npos)
    return true;
  // The whole name or its last '_' part: p_x, quad_xy, hex_xyz.
  const std::size_t us = n.rfind('_');
  const std::string last = us == std::string::npos ? n : n.substr(us + 1);
  static const char *names[] = {"x",   "xy",       "xyz",      "coords",
                                "pos", "position", "positions"};
  for (const char *name : names)
    if (last == name)
      return true;
  return false;
}

bool floating(const opd_dat *d) {
  return d->type == OPD_F64 || d->type == OPD_F32;
}

opd_dat *coordinatesOf(const opd_set *s) {
  for (opd_dat *d : allDats())
    if (d->set == s && floating(d) && (d->dim == 2 || d->dim == 3) &&
        coordinateName(d->name))
      return d;
  return nullptr;
}

bool cellArity(int arity) {
  return arity == 2 || arity == 3 || arity == 4 || arity == 8;
}

// One grid of a write: an unstructured mesh (coords set) or a block size.
struct Grid {
  opd_map *cells = nullptr;       ///< unstructured: null for vertices only
  opd_dat *conn = nullptr;        ///< the connectivity of `cells` (TempDat)
  opd_dat *coords = nullptr;      ///< unstructured, or a curvilinear block
  const opd_dat *block = nullptr; ///< block grids: the first dat
  std::vector<opd_dat *> dats;
  bool sameAs(const Grid &o) const {
    if (!block || !o.block)
      return !block && !o.block && cells == o.cells && coords == o.coords;
    if (block->block != o.block->block || block->ndims != o.block->ndims)
      return false;
    for (int k = 0; k < block->ndims; ++k)
      if (block->size[k] != o.block->size[k] ||
          block->base[k] != o.block->base[k])
        return false;
    return true;
  }
  std::string name() const {
    if (block) {
      std::string n = block->block->name;
      for (int k = 0; k < block->ndims; ++k)
        n += (k ? "x" : "_") + std::to_string(block->size[k]);
      return n;
    }
    return cells ? cells->from->name : coords->set->name;
  }
};

Grid gridOf(opd_dat *d) {
  Grid g;
  if (!d->set) {
    g.block = d;
    for (opd_dat *c : allDats()) {
      bool same = c->block == d->block && floating(c) && c->ndims >= 2 &&
                  c->dim == c->ndims && coordinateName(c->name);
      for (int k = 0; same && k < d->ndims; ++k)
        same = c->size[k] == d->size[k] && c->base[k] == d->base[k];
      if (same) {
        g.coords = c;
        break;
      }
    }
    return g;
  }
  for (opd_map *m : allMaps())
    if (m->from == d->set && cellArity(m->arity))
      if (opd_dat *x = coordinatesOf(m->to)) {
        g.cells = m;
        g.coords = x;
        return g;
      }
  g.coords = coordinatesOf(d->set);
  if (!g.coords)
    return g;
  for (opd_map *m : allMaps())
    if (m->to == d->set && m->from != d->set && cellArity(m->arity) &&
        (!g.cells || (g.cells->arity == 2 && m->arity > 2)))
      g.cells = m;
  return g;
}

// The connectivity of `m` as an i32 dat of dim arity on m->from, holding
// global indices (the original numbering) of the target set.
std::unique_ptr<TempDat> connectivity(opd_map *m) {
  auto c = std::make_unique<TempDat>(m->name, m->from, OPD_I32, m->arity);
  const int32_t *values = opd_map_values(m);
  std::copy(values, values + m->from->size * m->arity,
            reinterpret_cast<int32_t *>(c->storage.data()));
  return c;
}

// Coordinates as they are now: a CUDA build may hold newer values in the
// device copy (a kernel placed the nodes) than in host memory, which the
// written dats alone are synchronised with. Set coordinates: a host copy
// through the device's pack hook (Device.h); block coordinates (rare):
// every device copy back to the host and dropped (re-sent on next use).
opd_dat *currentCoordinates(opd_dat *x,
                            std::vector<std::unique_ptr<TempDat>> &keep) {
  if (!x->set) {
    deviceRelease();
    return x;
  }
  keep.push_back(std::make_unique<TempDat>(x->name, x->set, x->type, x->dim));
  char *copy = keep.back()->storage.data();
  const int64_t n = x->set->size;
  std::vector<int32_t> elems(std::size_t(n > 0 ? n : 0));
  for (int64_t i = 0; i < n; ++i)
    elems[std::size_t(i)] = int32_t(i);
  if (!devicePack(x, elems.data(), n, copy) && n > 0)
    std::memcpy(copy, x->data, std::size_t(n * x->elementBytes()));
  return &keep.back()->dat;
}

// Writes one VTKHDF file; every HDF5 failure becomes failf naming it.
class Writer {
public:
  explicit Writer(const std::string &path) : path_(path) {
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    id_ = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
    H5Pclose(fcpl);
    if (id_ < 0)
      failf("cannot create VTKHDF file '%s'", path.c_str());
    root_ = group(id_, "VTKHDF");
    const int version[2] = {1, 0};
    attribute(root_, "Version", H5T_NATIVE_INT, 2, version);
  }
  ~Writer() {
    for (hid_t g : groups_)
      H5Gclose(g);
    if (id_ >= 0)
      H5Fclose(id_);
  }
  Writer(const Writer &) = delete;
  Writer &operator=(const Writer &) = delete;

  hid_t root() const { return root_; }
  hid_t group(hid_t parent, const char *name) {
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    H5Pset_obj_track_times(gcpl, 0);
    hid_t g = H5Gcreate2(parent, name, H5P_DEFAULT, gcpl, H5P_DEFAULT);
    H5Pclose(gcpl);
    if (g < 0)
      failf("cannot write group '%s' to VTKHDF file '%s'", name, path_.c_str());
    groups_.push_back(g);
    return g;
  }
  void type(const char *name) {
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, std::strlen(name));
    hid_t a = H5Acreate2(root_, "Type", str, space, H5P_DEFAULT, H5P_DEFAULT);
    herr_t status = a < 0 ? -1 : H5Awrite(a, str, name);
    if (a >= 0)
      H5Aclose(a);
    H5Tclose(str);
    H5Sclose(space);
    check(status, "the Type attribute");
  }
  void attribute(hid_t where, const char *name, hid_t mem, hsize_t n,
                 const void *values) {
    hid_t space = H5Screate_simple(1, &n, nullptr);
    hid_t a = H5Acreate2(where, name,
                         mem == H5T_NATIVE_INT     ? H5T_STD_I32LE
                         : mem == H5T_NATIVE_INT64 ? H5T_STD_I64LE
                                                   : H5T_IEEE_F64LE,
                         space, H5P_DEFAULT, H5P_DEFAULT);
    herr_t status = a < 0 ? -1 : H5Awrite(a, mem, values);
    if (a >= 0)
      H5Aclose(a);
    H5Sclose(space);
    check(status, name);
  }
  void dataset(hid_t where, const std::string &name, int type,
               const std::vector<hsize_t> &dims, const void *values) {
    hid_t space = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_obj_track_times(dcpl, 0);
    hid_t d = H5Dcreate2(where, name.c_str(), memTypeOf(type), space,
                         H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    hsize_t n = 1;
    for (hsize_t x : dims)
      n *= x;
    herr_t status = d < 0    ? -1
                    : n == 0 ? 0
                             : H5Dwrite(d, memTypeOf(type), H5S_ALL, H5S_ALL,
                                        H5P_DEFAULT, values);
    if (d >= 0)
      H5Dclose(d);
    H5Sclose(space);
    check(status, name.c_str());
  }
  void close() {
    for (hid_t g : groups_)
      H5Gclose(g);
    groups_.clear();
    hid_t id = id_;
    id_ = -1;
    if (H5Fclose(id) < 0)
      failf("error closing VTKHDF file '%s'", path_.c_str());
  }

private:
  void check(herr_t status, const char *what) {
    if (status < 0)
      failf("cannot write '%s' to VTKHDF file '%s'", what, path_.c_str());
  }
  std::string path_;
  hid_t id_ = -1, root_ = -1;
  std::vector<hid_t> groups_;
};

// VTK cell types.
constexpr uint8_t VtkVertex = 1, VtkLine = 3, VtkTriangle = 5, VtkQuad = 9,
                  VtkTetra = 10, VtkHexahedron = 12;

// Points as [n][3] doubles from `dim`-component coordinates.
std::vector<double> points3(const std::vector<char> &raw, int type, int dim) {
  const std::size_t n = raw.size() / std::size_t(scalarBytes(type) * dim);
  std::vector<double> p(n * 3, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (int c = 0; c < dim; ++c) {
      const std::size_t k = i * std::size_t(dim) + std::size_t(c);
      if (type == OPD_F64) {
        double v;
        std::memcpy(&v, raw.data() + k * 8, 8);
        p[i * 3 + std::size_t(c)] = v;
      } else {
        float v;
        std::memcpy(&v, raw.data() + k * 4, 4);
        p[i * 3 + std::size_t(c)] = v;
      }
    }
  return p;
}

// An UnstructuredGrid's points ([n][3]) and cells.
void topology(Writer &w, const std::vector<double> &pts,
              const std::vector<int64_t> &conn,
              const std::vector<int64_t> &offsets,
              const std::vector<uint8_t> &types) {
  const int64_t npts = int64_t(pts.size() / 3);
  const int64_t ncells = int64_t(types.size());
  const int64_t nconn = int64_t(conn.size());
  hid_t r = w.root();
  w.dataset(r, "NumberOfPoints", OPD_I64, {1}, &npts);
  w.dataset(r, "NumberOfCells", OPD_I64, {1}, &ncells);
  w.dataset(r, "NumberOfConnectivityIds", OPD_I64, {1}, &nconn);
  w.dataset(r, "Points", OPD_F64, {hsize_t(npts), 3}, pts.data());
  w.dataset(r, "Connectivity", OPD_I64, {hsize_t(nconn)}, conn.data());
  w.dataset(r, "Offsets", OPD_I64, {offsets.size()}, offsets.data());
  w.dataset(r, "Types", OPD_BOOL, {types.size()}, types.data());
}

void fieldData(Writer &w, hid_t group, const opd_dat *d,
               const std::vector<char> &data, std::vector<hsize_t> dims) {
  if (d->dim > 1)
    dims.push_back(hsize_t(d->dim));
  w.dataset(group, d->name, d->type, dims, data.data());
}

void writeUnstructured(Writer &w, const Grid &g, const std::string &h5,
                       const std::string &meshTmp) {
  w.type("UnstructuredGrid");
  const opd_dat *x = g.coords;
  const std::vector<double> pts =
      points3(readWhole(meshTmp.c_str(), x), x->type, x->dim);
  const int64_t npts = int64_t(pts.size() / 3);
  std::vector<int64_t> conn, offsets{0};
  std::vector<uint8_t> types;
  int64_t ncells = 0;
  if (g.cells) {
    const opd_map *m = g.cells;
    const std::vector<char> raw = readWhole(meshTmp.c_str(), g.conn);
    ncells = m->from->globalSize;
    conn.resize(std::size_t(ncells * m->arity));
    for (std::size_t k = 0; k < conn.size(); ++k) {
      int32_t v;
      std::memcpy(&v, raw.data() + k * 4, 4);
      conn[k] = v;
    }
    const uint8_t t = m->arity == 2   ? VtkLine
                      : m->arity == 3 ? VtkTriangle
                      : m->arity == 8 ? VtkHexahedron
                      : x->dim == 2   ? VtkQuad
                                      : VtkTetra;
    types.assign(std::size_t(ncells), t);
    for (int64_t c = 1; c <= ncells; ++c)
      offsets.push_back(c * m->arity);
  } else {
    ncells = npts;
    for (int64_t p = 0; p < npts; ++p) {
      conn.push_back(p);
      offsets.push_back(p + 1);
    }
    types.assign(std::size_t(npts), VtkVertex);
  }
  topology(w, pts, conn, offsets, types);
  hid_t pd = w.group(w.root(), "PointData"), cd = w.group(w.root(), "CellData");
  for (const opd_dat *d : g.dats) {
    const bool node = d->set == x->set;
    fieldData(w, node ? pd : cd, d, readWhole(h5.c_str(), d),
              {hsize_t(node ? npts : ncells)});
  }
}

// A block grid as cells between neighbouring points (dimension 0 fastest,
// as the data): through its coordinate dat, or at the points' indices
// (2D and 1D blocks: VTK 9.1's reader fails on ImageData of fewer than 3
// dimensions). Quadrilaterals, hexahedra, or segments.
void writeBlockCells(Writer &w, const Grid &g, const std::string &h5,
                     const std::string &meshTmp) {
  w.type("UnstructuredGrid");
  const opd_dat *d0 = g.block;
  const int nd = d0->ndims;
  const int64_t n0 = d0->size[0], n1 = nd >= 2 ? d0->size[1] : 1,
                n2 = nd == 3 ? d0->size[2] : 1;
  const int64_t npts = n0 * n1 * n2;
  std::vector<double> pts;
  if (g.coords) {
    pts = points3(readWhole(meshTmp.c_str(), g.coords), g.coords->type,
                  g.coords->dim);
  } else {
    for (int64_t k = 0; k < n2; ++k)
      for (int64_t j = 0; j < n1; ++j)
        for (int64_t i = 0; i < n0; ++i) {
          pts.push_back(double(d0->base[0] + i));
          pts.push_back(nd >= 2 ? double(d0->base[1] + j) : 0.0);
          pts.push_back(nd == 3 ? double(d0->base[2] + k) : 0.0);
        }
  }
  auto at = [&](int64_t i, int64_t j, int64_t k) {
    return (k * n1 + j) * n0 + i;
  };
  std::vector<int64_t> conn, offsets{0};
  if (nd == 1) {
    for (int64_t i = 0; i + 1 < n0; ++i) {
      conn.push_back(i);
      conn.push_back(i + 1);
      offsets.push_back(int64_t(conn.size()));
    }
  }
  for (int64_t k = 0; nd >= 2 && k < (nd == 3 ? n2 - 1 : 1); ++k)
    for (int64_t j = 0; j + 1 < n1; ++j)
      for (int64_t i = 0; i + 1 < n0; ++i) {
        for (int64_t kk = 0; kk < (nd == 3 ? 2 : 1); ++kk) {
          conn.push_back(at(i, j, k + kk));
          conn.push_back(at(i + 1, j, k + kk));
          conn.push_back(at(i + 1, j + 1, k + kk));
          conn.push_back(at(i, j + 1, k + kk));
        }
        offsets.push_back(int64_t(conn.size()));
      }
  const int64_t ncells = int64_t(offsets.size()) - 1;
  std::vector<uint8_t> types(std::size_t(ncells), nd == 3   ? VtkHexahedron
                                                  : nd == 2 ? VtkQuad
                                                            : VtkLine);
  topology(w, pts, conn, offsets, types);
  hid_t pd = w.group(w.root(), "PointData");
  w.group(w.root(), "CellData");
  for (const opd_dat *d : g.dats)
    fieldData(w, pd, d, readWhole(h5.c_str(), d), {hsize_t(npts)});
}

void writeImage(Writer &w, const Grid &g, const std::string &h5) {
  w.type("ImageData");
  const opd_dat *d0 = g.block;
  int64_t extent[6] = {0, 0, 0, 0, 0, 0};
  double origin[3] = {0, 0, 0}, spacing[3] = {1, 1, 1};
  const double direction[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  std::vector<hsize_t> dims; // z y x
  for (int k = d0->ndims; k-- > 0;) {
    extent[2 * k + 1] = d0->size[k] - 1;
    origin[k] = double(d0->base[k]);
    dims.push_back(hsize_t(d0->size[k]));
  }
  hid_t r = w.root();
  w.attribute(r, "WholeExtent", H5T_NATIVE_INT64, 6, extent);
  w.attribute(r, "Origin", H5T_NATIVE_DOUBLE, 3, origin);
  w.attribute(r, "Spacing", H5T_NATIVE_DOUBLE, 3, spacing);
  w.attribute(r, "Direction", H5T_NATIVE_DOUBLE, 9, direction);
  hid_t pd = w.group(r, "PointData");
  w.group(r, "CellData");
  for (const opd_dat *d : g.dats)
    fieldData(w, pd, d, readWhole(h5.c_str(), d), dims);
}

} // namespace

void describeVtkHdf(opd_dat *const *dats, int n, const std::string &h5,
                    const std::string &stem) {
  std::vector<Grid> grids;
  for (int i = 0; i < n; ++i) {
    Grid g = gridOf(dats[i]);
    if (!g.block && !g.coords)
      continue;
    auto it = std::find_if(grids.begin(), grids.end(),
                           [&](const Grid &o) { return o.sameAs(g); });
    if (it == grids.end()) {
      grids.push_back(g);
      it = grids.end() - 1;
    }
    it->dats.push_back(dats[i]);
  }
  // The mesh arrays, whole and in the original numbering, through a
  // temporary HDF5 file all ranks write (collective).
  std::vector<opd_dat *> mesh;
  std::vector<std::unique_ptr<TempDat>> keep;
  std::map<opd_dat *, opd_dat *> coords;
  std::map<opd_map *, opd_dat *> conns;
  for (Grid &g : grids) {
    if (g.coords) {
      opd_dat *&c = coords[g.coords];
      if (!c) {
        c = currentCoordinates(g.coords, keep);
        mesh.push_back(c);
      }
      g.coords = c;
    }
    if (g.cells) {
      opd_dat *&c = conns[g.cells];
      if (!c) {
        keep.push_back(connectivity(g.cells));
        c = &keep.back()->dat;
        mesh.push_back(c);
      }
      g.conn = c;
    }
  }
  const std::string meshTmp = stem + ".mesh.tmp.h5";
  if (!mesh.empty())
    writeHDF5(mesh.data(), int(mesh.size()), meshTmp.c_str());
  std::string error;
  if (dist::rank() == 0) {
    CaptureFailures capture;
    try {
      for (const Grid &g : grids) {
        const std::string path =
            stem + (grids.size() == 1 ? "" : "_" + g.name()) + ".vtkhdf";
        Writer w(path);
        if (g.block && !g.coords && g.block->ndims == 3)
          writeImage(w, g, h5);
        else if (g.block)
          writeBlockCells(w, g, h5, meshTmp);
        else
          writeUnstructured(w, g, h5, meshTmp);
        w.close();
      }
    } catch (const Failure &f) {
      error = f.message;
    }
    if (!mesh.empty())
      std::remove(meshTmp.c_str());
  }
  dist::agreeOnFailure(error);
}

} // namespace opdc::rt::io
