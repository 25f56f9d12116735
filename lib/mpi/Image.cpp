// Image.cpp - Block dats in the global layout for HDF5 (MPI): the box each
// rank writes, the share of what it read.
// SPDX-License-Identifier: Apache-2.0
//
// Files hold block dats as their interior [base, base + size) whatever the
// number of ranks. Each rank writes the box it owns in its turn (a
// hyperslab, HDF5IO.cpp); for reading, every rank reads the planes of the outermost dimension its part
// spans and keeps its part, so the files are the same for 1, 2 or any
// number of ranks and no rank reads the whole dat. (Set dats are read and written in slices: mpi/Slices.cpp.)
#include "core/Dist.h"

#include "core/Runtime.h"
#include "mpi/Mpi.h"

#include <algorithm>
#include <cstring>

namespace opdc::rt::dist {
namespace {

// The part of the interior this rank owns: [lo, hi) per dimension.
bool ownedInterior(const opd_dat *dat, int64_t *lo, int64_t *hi) {
  bool any = true;
  for (int k = 0; k < 3; ++k) {
    lo[k] = 0;
    hi[k] = 1;
  }
  for (int k = 0; k < dat->ndims; ++k) {
    lo[k] = std::max(dat->ownFirst[k], dat->base[k]);
    hi[k] = std::min(dat->ownLast[k], dat->base[k] + dat->size[k]);
    if (hi[k] <= lo[k]) {
      hi[k] = lo[k];
      any = false;
    }
  }
  return any;
}

// Copies the box [lo, hi) between the packed global interior `image` and
// the packed box buffer `buf`; `image` may start at plane `outerFirst` of
// the outermost dimension (planes read by one rank).
void boxOfImage(const opd_dat *dat, const int64_t *lo, const int64_t *hi,
                char *image, char *buf, bool toImage, int64_t outerFirst = 0) {
  const int64_t eb = dat->elementBytes();
  int64_t n[3] = {1, 1, 1}, off[3] = {0, 0, 0}, ext[3] = {1, 1, 1};
  for (int k = 0; k < dat->ndims; ++k) {
    n[k] = hi[k] - lo[k];
    off[k] = lo[k] - dat->base[k];
    ext[k] = dat->size[k];
  }
  off[dat->ndims - 1] -= outerFirst;
  if (n[0] <= 0 || n[1] <= 0 || n[2] <= 0)
    return;
  const std::size_t row = std::size_t(n[0] * eb);
  for (int64_t k = 0; k < n[2]; ++k)
    for (int64_t j = 0; j < n[1]; ++j) {
      int64_t at = off[0] + ext[0] * ((off[1] + j) + ext[1] * (off[2] + k));
      char *g = image + at * eb;
      if (toImage)
        std::memcpy(g, buf, row);
      else
        std::memcpy(buf, g, row);
      buf += row;
    }
}

int64_t boxPoints(const int64_t *lo, const int64_t *hi) {
  return (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
}
} // namespace

bool ownedBox(const opd_dat *dat, int64_t *lo, int64_t *hi,
              std::vector<char> &box) {
  if (dat->set)
    failf("internal error: %s: set dats are written in slices (rowsToWrite)",
          dat->describe().c_str());
  int64_t g[6];
  if (!ownedInterior(dat, g, g + 3))
    return false;
  box.resize(std::size_t(boxPoints(g, g + 3) * dat->elementBytes()));
  copyBox(const_cast<opd_dat *>(dat), g, g + 3, box.data(), false);
  for (int k = 0; k < 3; ++k) {
    const int64_t base = k < dat->ndims ? dat->base[k] : 0;
    lo[k] = g[k] - base;
    hi[k] = g[3 + k] - base;
  }
  return true;
}

void imagePlanes(const opd_dat *dat, int64_t &first, int64_t &count) {
  if (dat->set)
    failf("internal error: %s: set dats are read in slices (placeRows)",
          dat->describe().c_str());
  int64_t box[6];
  const int outer = dat->ndims - 1;
  if (!ownedInterior(dat, box, box + 3)) {
    first = count = 0;
    return;
  }
  first = box[outer] - dat->base[outer];
  count = box[3 + outer] - box[outer];
}

void scatterImagePlanes(opd_dat *dat, const char *planes, int64_t first) {
  int64_t box[6];
  if (ownedInterior(dat, box, box + 3)) {
    std::vector<char> mine(
        std::size_t(boxPoints(box, box + 3) * dat->elementBytes()));
    boxOfImage(dat, box, box + 3, const_cast<char *>(planes), mine.data(),
               false, first);
    copyBox(dat, box, box + 3, mine.data(), true);
  }
  dat->haloValid = 0;
  dat->cornersValid = false;
}

} // namespace opdc::rt::dist
