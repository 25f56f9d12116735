// Unstructured.cpp - Sets, maps and dats over many ranks.
// SPDX-License-Identifier: Apache-2.0
#include "core/Dist.h"

#include "core/Runtime.h"
#include "exec/Loop.h"
#include "mpi/Mpi.h"

#include <cstring>

namespace opdc::rt::dist {

void setCreated(opd_set *set) {
  if (ranks() > 1)
    failf("set '%s': unstructured meshes do not run on more than one rank "
          "yet; run with one rank",
          set->name.c_str());
}

void beforeSetLoop(opd_loop *) {}
void afterSetLoop(opd_loop *) {}

bool gatherSetImage(opd_dat *dat, std::vector<char> &image) {
  image.resize(std::size_t(dat->interiorPoints() * dat->elementBytes()));
  if (!image.empty())
    std::memcpy(image.data(), dat->data, image.size());
  return rank() == 0;
}

void scatterSetImage(opd_dat *dat, const char *image) {
  const std::size_t bytes =
      std::size_t(dat->interiorPoints() * dat->elementBytes());
  if (bytes)
    std::memcpy(dat->data, image, bytes);
}

} // namespace opdc::rt::dist
