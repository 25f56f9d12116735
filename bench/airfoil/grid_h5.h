// grid_h5.h - Reading OP2's Airfoil mesh (new_grid.h5) in the hand-written
// C benchmarks of bench/airfoil (layouts.c, res_parts.c).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPD_BENCH_AIRFOIL_GRID_H5_H
#define OPD_BENCH_AIRFOIL_GRID_H5_H

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>

/// 64-byte aligned memory for at least \p bytes, rounded up to whole cache
/// lines; exits with a message naming \p prog when there is none.
static inline void *grid_alloc(const char *prog, size_t bytes) {
  void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!p) {
    fprintf(stderr, "%s: out of memory (%zu bytes)\n", prog, bytes);
    exit(1);
  }
  return p;
}

/// The whole dataset \p name of \p file as \p type (\p elem bytes a value);
/// its first dimension in \p rows. Exits with a message naming \p prog when
/// the mesh lacks it or it cannot be read.
static inline void *grid_read(const char *prog, hid_t file, const char *name,
                              hid_t type, size_t elem, hsize_t *rows) {
  hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
  if (d < 0) {
    fprintf(stderr, "%s: the mesh has no dataset '%s'\n", prog, name);
    exit(1);
  }
  hid_t s = H5Dget_space(d);
  hsize_t dims[2] = {0, 1};
  int rank = H5Sget_simple_extent_dims(s, dims, NULL);
  size_t n = (size_t)dims[0] * (rank > 1 ? (size_t)dims[1] : 1);
  void *buf = grid_alloc(prog, n * elem);
  if (H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
    fprintf(stderr, "%s: cannot read '%s'\n", prog, name);
    exit(1);
  }
  H5Sclose(s);
  H5Dclose(d);
  *rows = dims[0];
  return buf;
}

#endif
