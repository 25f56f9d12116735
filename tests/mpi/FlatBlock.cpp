// FlatBlock.cpp - Writes flat.h5: a 12 x 10 block dat stored flat, as
// [points, 1] (one of the layouts HDF5IO.cpp accepts), values k / 2.
// SPDX-License-Identifier: Apache-2.0
#include <hdf5.h>
int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "flat.h5";
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t dims[2] = {12 * 10, 1};
  static double v[120];
  for (int k = 0; k < 120; ++k) v[k] = k * 0.5;
  hid_t sp = H5Screate_simple(2, dims, NULL);
  hid_t ds = H5Dcreate2(f, "u", H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
  H5Dclose(ds); H5Sclose(sp); H5Fclose(f);
  return 0;
}
