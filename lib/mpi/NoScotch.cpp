// NoScotch.cpp - The partition without PT-Scotch: built instead of
// Scotch.cpp when CMake found no libptscotch-dev; --partition=ptscotch
// then falls back to METIS, and the profile says so.
// SPDX-License-Identifier: Apache-2.0
#include "mpi/Scotch.h"

namespace opdc::rt::dist {
bool ptscotchParts(const Graph &, std::vector<int32_t> &part,
                   std::string &why) {
  part.clear();
  why = "this build has no PT-Scotch; install libptscotch-dev and rebuild";
  return false;
}
} // namespace opdc::rt::dist
