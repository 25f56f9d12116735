// BadMeshes.cpp - Writes corrupted and inconsistent meshes into a folder
// (tests/mpi, mpi-bad-meshes): each read in parallel must end every rank
// with one clear error, no rank hanging. All have sets nodes (10) and
// cells (7), map pcell [7][2] and dat x [10][1], except for one fault:
//   index.h5     pcell[6][1] = 99 (found by the last rank of 4)
//   mapshape.h5  pcell has 6 rows, cells says 7
//   datshape.h5  x has 9 rows
//   floatmap.h5  pcell holds doubles
//   negative.h5  cells = -3
//   missing.h5   no pcell
// SPDX-License-Identifier: Apache-2.0
#include <hdf5.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {
bool write(hid_t file, const char *name, hid_t type, std::vector<hsize_t> dims,
           const void *data) {
  hid_t space = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  hid_t set = H5Dcreate2(file, name, type, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT);
  bool ok = set >= 0 &&
            H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0;
  if (set >= 0)
    H5Dclose(set);
  H5Sclose(space);
  return ok;
}

bool mesh(const std::string &dir, const std::string &fault) {
  hid_t file = H5Fcreate((dir + "/" + fault + ".h5").c_str(), H5F_ACC_TRUNC,
                         H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0)
    return false;
  const int nodes = 10, cells = fault == "negative" ? -3 : 7;
  std::vector<int> pcell;
  for (int c = 0; c < 7; ++c) {
    pcell.push_back(c);
    pcell.push_back(c + 1);
  }
  if (fault == "index")
    pcell[13] = 99;
  std::vector<double> x(10), pd(pcell.begin(), pcell.end());
  for (int i = 0; i < 10; ++i)
    x[std::size_t(i)] = 0.5 * i;
  bool ok = write(file, "nodes", H5T_NATIVE_INT, {1}, &nodes) &&
            write(file, "cells", H5T_NATIVE_INT, {1}, &cells);
  if (fault == "floatmap")
    ok = ok && write(file, "pcell", H5T_NATIVE_DOUBLE, {7, 2}, pd.data());
  else if (fault != "missing")
    ok = ok && write(file, "pcell", H5T_NATIVE_INT,
                     {hsize_t(fault == "mapshape" ? 6 : 7), 2}, pcell.data());
  ok = ok && write(file, "x", H5T_NATIVE_DOUBLE,
                   {hsize_t(fault == "datshape" ? 9 : 10), 1}, x.data());
  return H5Fclose(file) >= 0 && ok;
}
} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FOLDER\n", argv[0]);
    return 2;
  }
  for (const char *fault :
       {"index", "mapshape", "datshape", "floatmap", "negative", "missing"})
    if (!mesh(argv[1], fault)) {
      std::fprintf(stderr, "cannot write %s.h5\n", fault);
      return 1;
    }
  return 0;
}
