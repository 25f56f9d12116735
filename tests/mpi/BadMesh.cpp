// BadMesh.cpp - Writes a tiny mesh whose map points outside its target set
// (tests/mpi, mpi-bad-map): sets nodes (4) and cells (2), map pcell
// [2][2] with entry [1][0] = 7.
// SPDX-License-Identifier: Apache-2.0
#include <hdf5.h>

#include <cstdio>

namespace {
bool write(hid_t file, const char *name, int rank, const hsize_t *dims,
           const int *data) {
  hid_t space = H5Screate_simple(rank, dims, nullptr);
  hid_t set = H5Dcreate2(file, name, H5T_NATIVE_INT, space, H5P_DEFAULT,
                         H5P_DEFAULT, H5P_DEFAULT);
  bool ok = set >= 0 &&
            H5Dwrite(set, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                     data) >= 0;
  if (set >= 0)
    H5Dclose(set);
  H5Sclose(space);
  return ok;
}
} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FILE.h5\n", argv[0]);
    return 2;
  }
  hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0)
    return 1;
  const hsize_t one[1] = {1}, map[2] = {2, 2};
  const int nodes = 4, cells = 2, pcell[4] = {0, 1, 7, 3};
  bool ok = write(file, "nodes", 1, one, &nodes) &&
            write(file, "cells", 1, one, &cells) &&
            write(file, "pcell", 2, map, pcell);
  H5Fclose(file);
  return ok ? 0 : 1;
}
