// HDF5IO.cpp - Sets, maps and dats in HDF5 files, in OP2's layout.
// SPDX-License-Identifier: Apache-2.0
//
// Layout (OP2's op_dump_to_hdf5 / op_fetch_data_hdf5_file; see
// examples/airfoil/meshgen/README.md): every dataset in the root group; a
// set is a 1-element integer dataset holding its size; a map is an integer
// dataset [from size][arity]; a set dat is [set size][dim] with attributes
// size (bytes per element, int[1]), dim (int[1]) and type (fixed-length C
// string of strlen bytes: "double", "float", "int", "long long", "bool"). A
// block dat is written without halos as [s(D-1)]...[s(0)][dim] (dimension 0
// varies fastest, as in memory), with the same attributes.
//
// Reading converts compatible numeric types: any integer or float dataset
// into f32/f64 (HDF5's conversion), integer datasets into i32/i64/bool with
// a range check (bool: 0 or 1). Shapes must match; a dat with dim 1 also
// accepts [n], a block dat also accepts the flattened [points][dim].
// Every failure names the file and the dataset and says what was expected
// and what was found.
//
// Many ranks (serial HDF5, no MPI-IO): every rank opens the file read-only
// and reads only its slice of each set's rows (a hyperslab of the first
// dimension, dist::fileRows), which the distribution layer then keeps as
// it is (before the partition) or moves to the owners (dist::placeRows).
// Errors are captured on each rank and agreed on by all before anything
// else is exchanged, so a bad file ends every rank with one message and no
// rank waits. Writing: rank 0 creates the file and every dataset with its
// space allocated; then the ranks in turn (a token passed from rank to
// rank) open it and write their slice of each set dat's rows in the
// original numbering (dist::rowsToWrite): no rank gathers a whole dat, and
// the bytes are those of a one-process write. `write` reaches this through
// Output.cpp (io::writeHDF5), which also writes the VTKHDF copy or CSV.
#include "core/Dist.h"
#include "core/Objects.h"
#include "core/Runtime.h"
#include "io/Gmsh.h"
#include "io/Output.h"

#include <hdf5.h>

#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace opdc::rt {
namespace {

std::string shapeText(const std::vector<hsize_t> &dims) {
  if (dims.empty())
    return "a scalar";
  std::string s;
  for (hsize_t d : dims)
    s += "[" + std::to_string((unsigned long long)d) + "]";
  return s;
}

std::string shapeText(const std::vector<int64_t> &dims) {
  std::vector<hsize_t> h(dims.begin(), dims.end());
  return shapeText(h);
}

// "[i][c]" of flat position k in a dataset of shape dims.
std::string positionText(int64_t k, const std::vector<hsize_t> &dims) {
  if (dims.empty())
    return "";
  std::vector<int64_t> idx(dims.size(), 0);
  for (std::size_t d = dims.size(); d-- > 0;) {
    int64_t extent = dims[d] ? int64_t(dims[d]) : 1;
    idx[d] = k % extent;
    k /= extent;
  }
  std::string s;
  for (int64_t i : idx)
    s += "[" + std::to_string(i) + "]";
  return s;
}

class File {
public:
  enum Mode { Read, Create, Update };
  File(const char *path, Mode mode) : path_(path ? path : "") {
    silenceHDF5();
    if (!path || !*path)
      fail("empty HDF5 file name");
    if (mode == Create) {
      id_ = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
      if (id_ < 0)
        failf("cannot create HDF5 file '%s'", path);
      return;
    }
    if (mode == Update) {
      id_ = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
      if (id_ < 0)
        failf("cannot open HDF5 file '%s' for writing", path);
      return;
    }
    if (access(path, R_OK) != 0)
      failf("cannot open HDF5 file '%s': %s", path, std::strerror(errno));
    if (H5Fis_hdf5(path) <= 0)
      failf("file '%s' is not an HDF5 file", path);
    id_ = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (id_ < 0)
      failf("cannot open HDF5 file '%s'", path);
  }
  ~File() {
    if (id_ >= 0)
      H5Fclose(id_);
  }
  File(const File &) = delete;
  File &operator=(const File &) = delete;

  void close() {
    hid_t id = id_;
    id_ = -1;
    if (id >= 0 && H5Fclose(id) < 0)
      failf("error closing HDF5 file '%s'", path_.c_str());
  }
  hid_t id() const { return id_; }
  const char *path() const { return path_.c_str(); }

private:
  std::string path_;
  hid_t id_ = -1;
};

class Dataset {
public:
  /// Opens dataset `name`; `forWhat` ("dat 'q' on set 'cells'") goes into
  /// the messages.
  Dataset(const File &file, const std::string &name, const std::string &forWhat)
      : file_(file), name_(name), forWhat_(forWhat) {
    htri_t exists = name.empty() || name.find('/') != std::string::npos
                        ? 0
                        : H5Lexists(file.id(), name.c_str(), H5P_DEFAULT);
    if (exists <= 0)
      failf("file '%s' has no dataset '%s' (for %s)", file.path(), name.c_str(),
            forWhat.c_str());
    id_ = H5Dopen2(file.id(), name.c_str(), H5P_DEFAULT);
    if (id_ < 0)
      failf("file '%s': '%s' is not a dataset (for %s)", file.path(),
            name.c_str(), forWhat.c_str());
    space_ = id_ >= 0 ? H5Dget_space(id_) : -1;
    type_ = id_ >= 0 ? H5Dget_type(id_) : -1;
    if (id_ < 0 || space_ < 0 || type_ < 0)
      error("cannot open the dataset");
    int rank = H5Sget_simple_extent_ndims(space_);
    if (rank < 0)
      error("cannot read the dataset's shape");
    dims_.assign(std::size_t(rank), 0);
    if (rank > 0)
      H5Sget_simple_extent_dims(space_, dims_.data(), nullptr);
    class_ = H5Tget_class(type_);
    size_ = H5Tget_size(type_);
    unsigned_ = class_ == H5T_INTEGER && H5Tget_sign(type_) == H5T_SGN_NONE;
  }
  ~Dataset() {
    if (type_ >= 0)
      H5Tclose(type_);
    if (space_ >= 0)
      H5Sclose(space_);
    if (id_ >= 0)
      H5Dclose(id_);
  }
  Dataset(const Dataset &) = delete;
  Dataset &operator=(const Dataset &) = delete;

  [[noreturn]] void error(const std::string &what) const {
    failf("file '%s', dataset '%s': %s (for %s)", file_.path(), name_.c_str(),
          what.c_str(), forWhat_.c_str());
  }

  const std::vector<hsize_t> &dims() const { return dims_; }
  int64_t points() const {
    int64_t n = 1;
    for (hsize_t d : dims_)
      n *= int64_t(d);
    return n;
  }

  std::string typeText() const {
    std::string bits = std::to_string(size_ * 8) + "-bit ";
    switch (class_) {
    case H5T_INTEGER:
      return bits + (unsigned_ ? "unsigned integer" : "integer");
    case H5T_FLOAT:
      return bits + "float";
    case H5T_STRING:
      return "string";
    case H5T_COMPOUND:
      return "compound";
    case H5T_ENUM:
      return "enum";
    case H5T_ARRAY:
      return "array";
    default:
      return "non-numeric";
    }
  }

  /// Requires one of the accepted shapes; the first is the one reported.
  void checkShape(const std::vector<std::vector<int64_t>> &accepted) const {
    for (const auto &shape : accepted) {
      if (shape.size() != dims_.size())
        continue;
      bool same = true;
      for (std::size_t d = 0; d < shape.size(); ++d)
        same = same && int64_t(dims_[d]) == shape[d];
      if (same)
        return;
    }
    error("expected shape " + shapeText(accepted.front()) + ", found " +
          shapeText(dims_));
  }

  /// Values per row (the product of the dimensions after the first).
  int64_t rowLength() const {
    int64_t n = 1;
    for (std::size_t d = 1; d < dims_.size(); ++d)
      n *= int64_t(dims_[d]);
    return n;
  }

  /// Reads all values, or the `rows` rows from `row0` on (a hyperslab of
  /// the first dimension; rows < 0: everything), converted to opd_scalar
  /// `type`, into `dest` (which holds that many values of that type).
  void readAs(int type, void *dest, int64_t row0 = 0, int64_t rows = -1) const {
    row0_ = rows < 0 ? 0 : row0;
    rows_ = rows;
    const int64_t n = rows < 0 ? points() : rows * rowLength();
    if (type == OPD_F64 || type == OPD_F32) {
      if (class_ != H5T_INTEGER && class_ != H5T_FLOAT)
        error(std::string("expected numeric data for ") + scalarName(type) +
              ", found " + typeText());
      read(type == OPD_F64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, dest);
      return;
    }
    if (class_ != H5T_INTEGER)
      error(std::string("expected integer data for ") + scalarName(type) +
            ", found " + typeText());
    // Direct when HDF5's conversion cannot overflow.
    if (type == OPD_I64 && !(unsigned_ && size_ >= 8)) {
      read(H5T_NATIVE_INT64, dest);
      return;
    }
    if (type == OPD_I32 && (unsigned_ ? size_ < 4 : size_ <= 4)) {
      read(H5T_NATIVE_INT32, dest);
      return;
    }
    // Otherwise through 64 bits, checking each value.
    const int64_t lo = type == OPD_I32    ? INT32_MIN
                       : type == OPD_BOOL ? 0
                                          : INT64_MIN;
    const int64_t hi = type == OPD_I32    ? INT32_MAX
                       : type == OPD_BOOL ? 1
                                          : INT64_MAX;
    std::vector<int64_t> tmp(static_cast<std::size_t>(n));
    if (unsigned_ && size_ >= 8) {
      std::vector<uint64_t> u(static_cast<std::size_t>(n));
      read(H5T_NATIVE_UINT64, u.data());
      for (int64_t k = 0; k < n; ++k) {
        if (u[std::size_t(k)] > uint64_t(hi))
          outOfRange(std::to_string(u[std::size_t(k)]), k, type);
        tmp[std::size_t(k)] = int64_t(u[std::size_t(k)]);
      }
    } else {
      read(H5T_NATIVE_INT64, tmp.data());
    }
    for (int64_t k = 0; k < n; ++k) {
      int64_t v = tmp[std::size_t(k)];
      if (v < lo || v > hi)
        outOfRange(std::to_string(v), k, type);
      switch (type) {
      case OPD_I32:
        static_cast<int32_t *>(dest)[k] = int32_t(v);
        break;
      case OPD_I64:
        static_cast<int64_t *>(dest)[k] = v;
        break;
      default:
        static_cast<uint8_t *>(dest)[k] = uint8_t(v);
        break;
      }
    }
  }

private:
  void read(hid_t memType, void *dest) const {
    if (rows_ < 0) {
      if (points() == 0)
        return;
      if (H5Dread(id_, memType, H5S_ALL, H5S_ALL, H5P_DEFAULT, dest) < 0)
        error("cannot read the data (" + typeText() + ")");
      return;
    }
    const hsize_t n = hsize_t(rows_ * rowLength());
    if (n == 0)
      return;
    if (dims_.empty() || hsize_t(row0_ + rows_) > dims_[0])
      error("internal error: rows outside the dataset");
    std::vector<hsize_t> start(dims_.size(), 0), count = dims_;
    start[0] = hsize_t(row0_);
    count[0] = hsize_t(rows_);
    hid_t file = H5Scopy(space_);
    hid_t mem = H5Screate_simple(1, &n, nullptr);
    herr_t status =
        file < 0 || mem < 0
            ? -1
            : H5Sselect_hyperslab(file, H5S_SELECT_SET, start.data(), nullptr,
                                  count.data(), nullptr);
    if (status >= 0)
      status = H5Dread(id_, memType, mem, file, H5P_DEFAULT, dest);
    if (mem >= 0)
      H5Sclose(mem);
    if (file >= 0)
      H5Sclose(file);
    if (status < 0)
      error("cannot read the data (" + typeText() + ")");
  }

  [[noreturn]] void outOfRange(const std::string &value, int64_t k,
                               int type) const {
    k += row0_ * rowLength();
    error("value " + value + " at " + positionText(k, dims_) +
          (type == OPD_BOOL
               ? " is not a bool (0 or 1)"
               : std::string(" does not fit in ") + scalarName(type)));
  }

  const File &file_;
  std::string name_, forWhat_;
  hid_t id_ = -1, space_ = -1, type_ = -1;
  std::vector<hsize_t> dims_;
  H5T_class_t class_ = H5T_NO_CLASS;
  std::size_t size_ = 0;
  bool unsigned_ = false;
  // The rows of the current readAs (rows_ < 0: all).
  mutable int64_t row0_ = 0, rows_ = -1;
};

// Shapes a dat's dataset may have; the first is its canonical one.
std::vector<std::vector<int64_t>> datShapes(const opd_dat *dat) {
  std::vector<std::vector<int64_t>> shapes;
  if (dat->set) {
    shapes.push_back({dat->set->globalSize, dat->dim});
    if (dat->dim == 1)
      shapes.push_back({dat->set->globalSize});
    return shapes;
  }
  std::vector<int64_t> grid;
  for (int d = dat->ndims; d-- > 0;)
    grid.push_back(dat->size[d]);
  std::vector<int64_t> canonical = grid;
  canonical.push_back(dat->dim);
  shapes.push_back(canonical);
  if (dat->dim == 1)
    shapes.push_back(grid);
  shapes.push_back({dat->interiorPoints(), dat->dim});
  if (dat->dim == 1)
    shapes.push_back({dat->interiorPoints()});
  return shapes;
}

// Runs `body` with this rank's errors captured, then agrees with the other
// ranks (dist::agreeOnFailure): a bad file ends every rank with one clear
// message, and no rank is left waiting in a later collective.
template <class F> void agreed(F &&body) {
  std::string error;
  {
    CaptureFailures capture;
    try {
      body();
    } catch (const Failure &f) {
      error = f.message;
    }
  }
  dist::agreeOnFailure(error);
}

std::string datWhat(const opd_dat *dat) {
  return dat->describe() + " of " + scalarName(dat->type) + "[" +
         std::to_string(dat->dim) + "]";
}

// Reads dats from `file`. Set dats: every rank opens the file read-only and
// reads its own rows (dist::fileRows, a hyperslab), which dist::placeRows
// then moves to where the set's elements live. Block dats: every rank reads
// the planes of the outermost dimension its part of the interior spans
// (dist::imagePlanes, a hyperslab of the dataset's first dimension: the
// outermost grid index, or the points of a flat [points, dim] dataset) and
// keeps its part (dist::scatterImagePlanes); no rank holds the whole dat
// unless it owns all of it.
void readDats(opd_dat *const *dats, int n, const char *file) {
  const double t0 = opd_rt_wtime();
  const std::size_t nd = std::size_t(n > 0 ? n : 0);
  std::vector<std::vector<char>> rows(nd);
  std::vector<int64_t> first(nd, 0), count(nd, 0);
  for (int i = 0; i < n; ++i) {
    const std::size_t k = std::size_t(i);
    if (dats[i]->set)
      dist::fileRows(dats[i]->set->globalSize, first[k], count[k]);
    else
      dist::imagePlanes(dats[i], first[k], count[k]);
  }
  agreed([&] {
    File f(file, File::Read);
    for (int i = 0; i < n; ++i) {
      opd_dat *dat = dats[i];
      const std::size_t k = std::size_t(i);
      Dataset ds(f, dat->name, datWhat(dat));
      ds.checkShape(datShapes(dat));
      if (dat->set) {
        rows[k].resize(std::size_t(count[k] * dat->elementBytes()));
        ds.readAs(dat->type, rows[k].data(), first[k], count[k]);
      } else {
        // Planes of the outermost dimension, as rows of the dataset's
        // first dimension: one each, or `plane` points each (flat).
        const int64_t outer = dat->size[dat->ndims - 1];
        const int64_t plane = outer > 0 ? dat->interiorPoints() / outer : 0;
        const int64_t per = int64_t(ds.dims().front()) == outer ? 1 : plane;
        rows[k].resize(std::size_t(count[k] * plane * dat->elementBytes()));
        if (count[k] > 0)
          ds.readAs(dat->type, rows[k].data(), first[k] * per, count[k] * per);
      }
    }
    f.close();
  });
  for (int i = 0; i < n; ++i) {
    opd_dat *dat = dats[i];
    std::vector<char> &r = rows[std::size_t(i)];
    if (dat->set) {
      dist::placeRows(dat->set, r.data(), std::size_t(dat->elementBytes()),
                      dat->data);
      dat->haloValid = INT64_MAX / 4; // halo copies came from the file too
      continue;
    }
    dist::scatterImagePlanes(dat, r.data(), first[std::size_t(i)]);
  }
  dist::addReadSeconds(opd_rt_wtime() - t0);
}

// OP2's type names (op_dat->type), written into the "type" attribute.
const char *op2TypeName(int type) {
  switch (type) {
  case OPD_F64:
    return "double";
  case OPD_F32:
    return "float";
  case OPD_I32:
    return "int";
  case OPD_I64:
    return "long long";
  default:
    return "bool";
  }
}

// Creates `dat`'s dataset, [set size][dim] or the block's shape, with
// OP2's attributes; its space is allocated now (and never filled), so
// that the ranks' later writes only fill bytes in place and the file is
// the same whatever the number of ranks.
void createDat(File &file, opd_dat *dat) {
  auto failWrite = [&](const char *what) {
    failf("cannot write %s of dataset '%s' to HDF5 file '%s'", what,
          dat->name.c_str(), file.path());
  };
  const std::vector<int64_t> shape = datShapes(dat).front();
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  hid_t space = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  hid_t type = io::memTypeOf(dat->type);
  // No modification times in the object headers: the same dats give the
  // same bytes, whenever and on however many ranks they were written.
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_obj_track_times(dcpl, 0);
  H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
  H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
  hid_t dset = space < 0 ? -1
                         : H5Dcreate2(file.id(), dat->name.c_str(), type, space,
                                      H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Pclose(dcpl);
  if (space >= 0)
    H5Sclose(space);
  if (dset < 0)
    failWrite("the data");
  herr_t status = 0;
  // OP2's attributes: size = bytes per element, dim, type name.
  const hsize_t one[1] = {1};
  const int ints[2] = {int(dat->elementBytes()), dat->dim};
  const char *intNames[2] = {"size", "dim"};
  hid_t aspace = H5Screate_simple(1, one, nullptr);
  for (int i = 0; i < 2; ++i) {
    hid_t attr = H5Acreate2(dset, intNames[i], H5T_NATIVE_INT, aspace,
                            H5P_DEFAULT, H5P_DEFAULT);
    status = attr < 0 ? -1 : H5Awrite(attr, H5T_NATIVE_INT, &ints[i]);
    if (attr >= 0)
      H5Aclose(attr);
    if (status < 0) {
      H5Sclose(aspace);
      H5Dclose(dset);
      failWrite("an attribute");
    }
  }
  H5Sclose(aspace);
  const char *name = op2TypeName(dat->type);
  hid_t sspace = H5Screate(H5S_SCALAR);
  hid_t stype = H5Tcopy(H5T_C_S1);
  H5Tset_size(stype, std::strlen(name));
  hid_t attr =
      H5Acreate2(dset, "type", stype, sspace, H5P_DEFAULT, H5P_DEFAULT);
  status = attr < 0 ? -1 : H5Awrite(attr, stype, name);
  if (attr >= 0)
    H5Aclose(attr);
  H5Tclose(stype);
  H5Sclose(sspace);
  H5Dclose(dset);
  if (status < 0)
    failWrite("the 'type' attribute");
}

// Writes `count` rows from row `first` of `dat`'s dataset (count < 0: the
// whole dataset) from `data`.
// Writes `data` into the hyperslab [start, start + cnt) of the dataset
// (file dimensions, outermost first), or all of it when start is empty.
void writeSlab(File &file, opd_dat *dat, const char *data,
               const std::vector<hsize_t> &start,
               const std::vector<hsize_t> &cnt);

// A block dat's box [lo, hi) (interior coordinates, dimension 0 innermost,
// packed in `data`) into its canonical dataset [outer .. inner, dim].
void writeBox(File &file, opd_dat *dat, const char *data, const int64_t *lo,
              const int64_t *hi) {
  std::vector<hsize_t> start, cnt;
  for (int d = dat->ndims; d-- > 0;) {
    start.push_back(hsize_t(lo[d]));
    cnt.push_back(hsize_t(hi[d] - lo[d]));
  }
  start.push_back(0);
  cnt.push_back(hsize_t(dat->dim));
  writeSlab(file, dat, data, start, cnt);
}

void writeRows(File &file, opd_dat *dat, const char *data, int64_t first,
               int64_t count) {
  if (count == 0)
    return;
  std::vector<hsize_t> start, cnt;
  if (count > 0) {
    // Rows [first, first + count) of the dataset's first dimension, every
    // column of the others.
    const std::vector<int64_t> shape = datShapes(dat).front();
    for (int64_t d : shape)
      cnt.push_back(hsize_t(d));
    start.assign(cnt.size(), 0);
    start[0] = hsize_t(first);
    cnt[0] = hsize_t(count);
  }
  writeSlab(file, dat, data, start, cnt);
}

void writeSlab(File &file, opd_dat *dat, const char *data,
               const std::vector<hsize_t> &start,
               const std::vector<hsize_t> &cnt) {
  hid_t dset = H5Dopen2(file.id(), dat->name.c_str(), H5P_DEFAULT);
  if (dset < 0)
    failf("cannot write the data of dataset '%s' to HDF5 file '%s'",
          dat->name.c_str(), file.path());
  hid_t type = io::memTypeOf(dat->type);
  herr_t status = 0;
  if (start.empty()) {
    if (dat->interiorPoints() > 0)
      status = H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
  } else {
    hid_t fspace = H5Dget_space(dset);
    const int rank = fspace < 0 ? -1 : H5Sget_simple_extent_ndims(fspace);
    if (rank != int(cnt.size()))
      status = -1;
    hsize_t n = 1;
    for (hsize_t c : cnt)
      n *= c;
    hid_t mspace = H5Screate_simple(1, &n, nullptr);
    status = status < 0 || rank <= 0 || mspace < 0
                 ? -1
                 : H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start.data(),
                                       nullptr, cnt.data(), nullptr);
    if (status >= 0)
      status = H5Dwrite(dset, type, mspace, fspace, H5P_DEFAULT, data);
    if (mspace >= 0)
      H5Sclose(mspace);
    if (fspace >= 0)
      H5Sclose(fspace);
  }
  H5Dclose(dset);
  if (status < 0)
    failf("cannot write the data of dataset '%s' to HDF5 file '%s'",
          dat->name.c_str(), file.path());
}

} // namespace
} // namespace opdc::rt

using namespace opdc::rt;

extern "C" {

// Every rank opens the file and reads what it stores (its slice of each
// set's rows, see readDats); errors are agreed on by all ranks.
opd_set *opd_set_from_file(const char *name, const char *file) {
  if (gmsh::isGmshFile(file)) // Gmsh meshes (io/Gmsh.cpp)
    return gmsh::setFromFile(name, file);
  const double t0 = opd_rt_wtime();
  int64_t size = 0;
  agreed([&] {
    File f(file, File::Read);
    std::string forWhat = "set '" + std::string(name ? name : "") + "'";
    Dataset ds(f, name ? name : "", forWhat);
    if (ds.points() != 1)
      ds.error("expected one integer (the set size), found shape " +
               shapeText(ds.dims()));
    ds.readAs(OPD_I64, &size);
    if (size < 0)
      ds.error("the set size " + std::to_string(size) + " is negative");
    f.close();
  });
  opd_set *set = opd_set_create(name, size);
  dist::sliceSet(set);
  dist::addReadSeconds(opd_rt_wtime() - t0);
  return set;
}

opd_map *opd_map_from_file(const char *name, opd_set *from, opd_set *to,
                           int arity, const char *file) {
  if (gmsh::isGmshFile(file))
    return gmsh::mapFromFile(name, from, to, arity, file);
  const double t0 = opd_rt_wtime();
  opd_map *map = opd_map_create(name, from, to, arity);
  int64_t first = 0, count = 0;
  dist::fileRows(from->globalSize, first, count);
  std::vector<int32_t> rows(std::size_t(count * arity));
  agreed([&] {
    File f(file, File::Read);
    Dataset ds(f, map->name,
               "map '" + map->name + "' (" + from->name + " -> " + to->name +
                   ", arity " + std::to_string(arity) + ")");
    std::vector<std::vector<int64_t>> shapes = {{from->globalSize, arity}};
    if (arity == 1)
      shapes.push_back({from->globalSize});
    ds.checkShape(shapes);
    ds.readAs(OPD_I32, rows.data(), first, count);
    f.close();
    // Every index against the whole target set, positions in the file's
    // numbering (each rank checks the rows it read).
    const int64_t limit = to->globalSize;
    for (std::size_t k = 0; k < rows.size(); ++k)
      if (rows[k] < 0 || rows[k] >= limit)
        failf("file '%s', dataset '%s': map '%s' (%s -> %s): index %" PRId32
              " at [%" PRId64 "][%" PRId64
              "] is out of range for set '%s' of size %" PRId64,
              file, map->name.c_str(), map->name.c_str(), from->name.c_str(),
              to->name.c_str(), rows[k], first + int64_t(k) / arity,
              int64_t(k) % arity, to->name.c_str(), limit);
  });
  dist::placeRows(from, rows.data(), std::size_t(arity) * sizeof(int32_t),
                  map->data);
  ++map->version;
  dist::addReadSeconds(opd_rt_wtime() - t0);
  return map;
}

opd_dat *opd_dat_from_file(const char *name, opd_set *set, opd_scalar type,
                           int dim, const char *file) {
  if (gmsh::isGmshFile(file))
    return gmsh::datFromFile(name, set, type, dim, file);
  opd_dat *dat = opd_dat_create(name, set, type, dim);
  readDats(&dat, 1, file);
  return dat;
}

void opd_dat_read(opd_dat *const *dats, int n, const char *file) {
  dist::settleExchanges();
  readDats(dats, n, file);
}

} // extern "C"

namespace opdc::rt::io {

// Rank 0 creates the file and its datasets; then each rank in turn writes
// its rows (set dats: its slice of the original numbering, dist::
// rowsToWrite; block dats: the box each rank owns, dist::ownedBox). No
// rank holds a whole set dat, and the file is byte for byte the same for
// any number of ranks.
void writeHDF5(opd_dat *const *dats, int n, const char *file) {
  dist::settleExchanges();
  const std::size_t nd = std::size_t(n > 0 ? n : 0);
  std::vector<std::vector<char>> rows(nd);
  std::vector<int64_t> first(nd, 0), count(nd, -1);
  std::vector<std::array<int64_t, 6>> box(nd);
  bool any = false;
  for (int i = 0; i < n; ++i) {
    const std::size_t k = std::size_t(i);
    if (dats[i]->set) {
      dist::fileRows(dats[i]->set->globalSize, first[k], count[k]);
      dist::rowsToWrite(dats[i], rows[k]);
      any = any || count[k] > 0;
    } else if (dist::ownedBox(dats[i], box[k].data(), box[k].data() + 3,
                              rows[k])) {
      any = true;
    } else {
      count[k] = 0;
    }
  }
  agreed([&] {
    if (dist::rank() != 0)
      return;
    File f(file, File::Create);
    for (int i = 0; i < n; ++i)
      createDat(f, dats[i]);
    f.close();
  });
  std::string error;
  dist::inTurn([&] {
    if (!any)
      return;
    CaptureFailures capture;
    try {
      File f(file, File::Update);
      for (int i = 0; i < n; ++i) {
        const std::size_t k = std::size_t(i);
        if (count[k] == 0)
          continue;
        if (dats[i]->set)
          writeRows(f, dats[i], rows[k].data(), first[k], count[k]);
        else
          writeBox(f, dats[i], rows[k].data(), box[k].data(),
                   box[k].data() + 3);
      }
      f.close();
    } catch (const Failure &e) {
      error = e.message;
    }
  });
  // Also the synchronisation after which every rank sees the whole file.
  dist::agreeOnFailure(error);
}

std::vector<char> readWhole(const char *file, const opd_dat *dat) {
  File f(file, File::Read);
  Dataset ds(f, dat->name, datWhat(dat));
  ds.checkShape(datShapes(dat));
  std::vector<char> data(std::size_t(ds.points()) *
                         std::size_t(scalarBytes(dat->type)));
  ds.readAs(dat->type, data.data());
  f.close();
  return data;
}

// The HDF5 type of an opd_scalar, in memory and (the same, native) in
// files.
hid_t memTypeOf(int type) {
  switch (type) {
  case OPD_F64:
    return H5T_NATIVE_DOUBLE;
  case OPD_F32:
    return H5T_NATIVE_FLOAT;
  case OPD_I32:
    return H5T_NATIVE_INT;
  case OPD_I64:
    return H5T_NATIVE_LLONG;
  default:
    return H5T_NATIVE_UINT8;
  }
}

std::vector<int64_t> fileShape(const opd_dat *dat) {
  return datShapes(dat).front();
}

} // namespace opdc::rt::io
