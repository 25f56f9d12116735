// writers.cpp - new_grid.dat (text) and new_grid.h5 (HDF5) output.
// SPDX-License-Identifier: Apache-2.0

#include <hdf5.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "meshgen.hpp"

namespace opd::meshgen {

// ---------------------------------------------------------------------------
// new_grid.dat, byte for byte as naca0012.m writes it (fopen 'wt' on a POSIX
// system, i.e. plain "\n" line ends). Every line starts with a space and
// ends with " \n":
//   " nnode ncell nedge nbedge \n"
//   nnode  x lines:  " %f %f \n"           (6 decimals, C rounding)
//   ncell  lines:    " n1 n2 n3 n4 \n"     (pcell)
//   nedge  lines:    " n1 n2 c1 c2 \n"     (pedge, pecell)
//   nbedge lines:    " n1 n2 c bound \n"   (pbedge, pbecell, p_bound)
// This is the layout OP2's airfoil readers scan with fscanf("%d %d %d %d \n")
// and fscanf("%lf %lf \n").
std::string write_dat(const AirfoilMesh &m, const std::string &path) {
  FILE *f = std::fopen(path.c_str(), "w");
  if (!f)
    return "cannot open '" + path + "' for writing: " + std::strerror(errno);
  std::vector<char> buf(1 << 20);
  std::setvbuf(f, buf.data(), _IOFBF, buf.size());

  std::fprintf(f, " %d %d %d %d \n", m.nnode, m.ncell, m.nedge, m.nbedge);
  for (int n = 0; n < m.nnode; ++n)
    std::fprintf(f, " %f %f \n", m.x[2 * n], m.x[2 * n + 1]);
  for (int n = 0; n < m.ncell; ++n)
    std::fprintf(f, " %d %d %d %d \n", m.cell[4 * n], m.cell[4 * n + 1],
                 m.cell[4 * n + 2], m.cell[4 * n + 3]);
  for (int n = 0; n < m.nedge; ++n)
    std::fprintf(f, " %d %d %d %d \n", m.edge[2 * n], m.edge[2 * n + 1],
                 m.ecell[2 * n], m.ecell[2 * n + 1]);
  for (int n = 0; n < m.nbedge; ++n)
    std::fprintf(f, " %d %d %d %d \n", m.bedge[2 * n], m.bedge[2 * n + 1],
                 m.becell[n], m.bound[n]);

  const bool write_failed = std::ferror(f) != 0;
  const int saved = errno;
  const bool close_failed = std::fclose(f) != 0;
  if (write_failed || close_failed)
    return "error writing '" + path +
           "': " + std::strerror(write_failed ? saved : errno);
  return {};
}

// ---------------------------------------------------------------------------
// new_grid.h5 in the layout of OP2's op_dump_to_hdf5 + op_write_const_hdf5
// (op2/src/externlib/op_hdf5.cpp), as run by OP2's convert_mesh. See
// README.md for the table. All datasets live in the root group, contiguous,
// uncompressed, native little-endian types.
namespace {

class H5Writer {
public:
  explicit H5Writer(const std::string &path) : path_(path) {
    file_ = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (file_ < 0)
      error_ = "cannot create HDF5 file '" + path + "'";
  }
  ~H5Writer() {
    if (file_ >= 0)
      H5Fclose(file_);
  }
  H5Writer(const H5Writer &) = delete;
  H5Writer &operator=(const H5Writer &) = delete;

  bool ok() const { return error_.empty(); }
  const std::string &error() const { return error_; }

  // Closes the file; reports a failure to flush it.
  bool close() {
    if (file_ >= 0 && H5Fclose(file_) < 0 && ok())
      error_ = "error closing '" + path_ + "'";
    file_ = -1;
    return ok();
  }

  // A set: 1-element int dataset holding the set size.
  void set(const char *name, int size) {
    const hsize_t dims[1] = {1};
    dataset(name, H5T_NATIVE_INT, 1, dims, &size, {});
  }

  // A map: int dataset [from_size][dim], attributes size (= from_size),
  // dim, and type = "int" in a 10-byte string (OP2 writes the map type
  // attribute with a fixed size of 10).
  void map(const char *name, int from_size, int dim,
           const std::vector<int> &data) {
    const hsize_t dims[2] = {static_cast<hsize_t>(from_size),
                             static_cast<hsize_t>(dim)};
    dataset(name, H5T_NATIVE_INT, 2, dims, data.data(),
            {{"size", from_size}, {"dim", dim}}, "int", 10);
  }

  // A dat: dataset [set_size][dim] of type (int or double), attributes
  // size (= OP2's op_dat->size, the bytes per element: dim * sizeof(type)),
  // dim, and type (the OP2 type name, string of exactly strlen bytes).
  void dat(const char *name, int set_size, int dim, const char *type,
           hid_t h5type, size_t elem_bytes, const void *data) {
    const hsize_t dims[2] = {static_cast<hsize_t>(set_size),
                             static_cast<hsize_t>(dim)};
    dataset(name, h5type, 2, dims, data,
            {{"size", static_cast<int>(elem_bytes * dim)}, {"dim", dim}}, type,
            std::strlen(type));
  }

  // A constant (op_write_const_hdf5): 1-D double dataset [dim], attributes
  // dim and type = "double".
  void constant(const char *name, int dim, const double *data) {
    const hsize_t dims[1] = {static_cast<hsize_t>(dim)};
    dataset(name, H5T_NATIVE_DOUBLE, 1, dims, data, {{"dim", dim}}, "double",
            std::strlen("double"));
  }

private:
  struct IntAttr {
    const char *name;
    int value;
  };

  void fail(const std::string &what, const char *name) {
    if (ok())
      error_ = what + " '" + name + "' in '" + path_ + "'";
  }

  void dataset(const char *name, hid_t type, int rank, const hsize_t *dims,
               const void *data, std::initializer_list<IntAttr> int_attrs,
               const char *type_attr = nullptr, size_t type_len = 0) {
    if (!ok())
      return;
    hid_t space = H5Screate_simple(rank, dims, nullptr);
    hid_t dset = space < 0 ? -1
                           : H5Dcreate2(file_, name, type, space, H5P_DEFAULT,
                                        H5P_DEFAULT, H5P_DEFAULT);
    if (dset < 0 ||
        H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
      fail("cannot write dataset", name);
    if (space >= 0)
      H5Sclose(space);

    if (dset >= 0 && ok()) {
      const hsize_t one[1] = {1};
      hid_t aspace = H5Screate_simple(1, one, nullptr);
      for (const IntAttr &a : int_attrs) {
        hid_t attr = H5Acreate2(dset, a.name, H5T_NATIVE_INT, aspace,
                                H5P_DEFAULT, H5P_DEFAULT);
        if (attr < 0 || H5Awrite(attr, H5T_NATIVE_INT, &a.value) < 0)
          fail(std::string("cannot write attribute '") + a.name + "' of", name);
        if (attr >= 0)
          H5Aclose(attr);
      }
      H5Sclose(aspace);
      if (type_attr) {
        // Fixed-length C string (null-terminated padding, as H5T_C_S1);
        // the buffer is zero-padded to the declared length.
        std::vector<char> text(type_len, '\0');
        std::memcpy(text.data(), type_attr,
                    std::min(type_len, std::strlen(type_attr)));
        hid_t sspace = H5Screate(H5S_SCALAR);
        hid_t stype = H5Tcopy(H5T_C_S1);
        H5Tset_size(stype, type_len);
        hid_t attr =
            H5Acreate2(dset, "type", stype, sspace, H5P_DEFAULT, H5P_DEFAULT);
        if (attr < 0 || H5Awrite(attr, stype, text.data()) < 0)
          fail("cannot write attribute 'type' of", name);
        if (attr >= 0)
          H5Aclose(attr);
        H5Tclose(stype);
        H5Sclose(sspace);
      }
    }
    if (dset >= 0)
      H5Dclose(dset);
  }

  std::string path_;
  hid_t file_ = -1;
  std::string error_;
};

} // namespace

std::string write_hdf5(const AirfoilMesh &m, const std::string &path) {
  H5Writer h5(path);

  // Sets, in OP2's declaration order.
  h5.set("nodes", m.nnode);
  h5.set("edges", m.nedge);
  h5.set("bedges", m.nbedge);
  h5.set("cells", m.ncell);

  // Maps.
  h5.map("pedge", m.nedge, 2, m.edge);
  h5.map("pecell", m.nedge, 2, m.ecell);
  h5.map("pbedge", m.nbedge, 2, m.bedge);
  h5.map("pbecell", m.nbedge, 1, m.becell);
  h5.map("pcell", m.ncell, 4, m.cell);

  // Dats. The flow field starts at the free stream (q = qinf in every
  // cell), the residual at zero. OP2's convert_mesh leaves qold and adt
  // uninitialised; they are written as zeros here (airfoil overwrites both
  // before reading them: save_soln and adt_calc run first in every step).
  const FlowConstants k = flow_constants();
  const size_t nc = static_cast<size_t>(m.ncell);
  std::vector<double> q(4 * nc), zeros4(4 * nc, 0.0), zeros1(nc, 0.0);
  for (size_t n = 0; n < nc; ++n)
    for (int i = 0; i < 4; ++i)
      q[4 * n + i] = k.qinf[i];

  h5.dat("p_bound", m.nbedge, 1, "int", H5T_NATIVE_INT, sizeof(int),
         m.bound.data());
  // OP2's new_grid.h5 is made by convert_mesh from new_grid.dat, so its p_x
  // holds the coordinates as fscanf("%lf") reads them back from the "%f"
  // text, i.e. rounded to 6 decimals. Store exactly those values: Airfoil's
  // residual history depends on them.
  std::vector<double> x(m.x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    char text[64];
    std::snprintf(text, sizeof text, "%f", m.x[i]);
    x[i] = std::strtod(text, nullptr);
  }
  h5.dat("p_x", m.nnode, 2, "double", H5T_NATIVE_DOUBLE, sizeof(double),
         x.data());
  h5.dat("p_q", m.ncell, 4, "double", H5T_NATIVE_DOUBLE, sizeof(double),
         q.data());
  h5.dat("p_qold", m.ncell, 4, "double", H5T_NATIVE_DOUBLE, sizeof(double),
         zeros4.data());
  h5.dat("p_adt", m.ncell, 1, "double", H5T_NATIVE_DOUBLE, sizeof(double),
         zeros1.data());
  h5.dat("p_res", m.ncell, 4, "double", H5T_NATIVE_DOUBLE, sizeof(double),
         zeros4.data());

  // Global constants (op_write_const_hdf5).
  h5.constant("gam", 1, &k.gam);
  h5.constant("gm1", 1, &k.gm1);
  h5.constant("cfl", 1, &k.cfl);
  h5.constant("eps", 1, &k.eps);
  h5.constant("mach", 1, &k.mach);
  h5.constant("alpha", 1, &k.alpha);
  h5.constant("qinf", 4, k.qinf);

  h5.close();
  return h5.ok() ? std::string() : h5.error();
}

} // namespace opd::meshgen
