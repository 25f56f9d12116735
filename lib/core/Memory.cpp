// Memory.cpp - Aligned, first-touch zero-filled allocations.
// SPDX-License-Identifier: Apache-2.0
#include "core/Memory.h"

#include "core/Runtime.h"

#include <cstdlib>
#include <cstring>

namespace opdc::rt {

void *allocRaw(std::size_t bytes, const char *what) {
  std::size_t size = bytes < Alignment ? Alignment : bytes;
  if (size > SIZE_MAX - Alignment)
    failf("out of memory allocating %zu bytes for %s", bytes, what);
  size = (size + Alignment - 1) / Alignment * Alignment;
  void *p = std::aligned_alloc(Alignment, size);
  if (!p)
    failf("out of memory allocating %zu bytes for %s", bytes, what);
  return p;
}

void *allocZeroed(std::size_t bytes, const char *what) {
  char *p = static_cast<char *>(allocRaw(bytes, what));
  // Zero in parallel, in contiguous static pieces like the loops' chunk
  // schedule, so on NUMA machines pages land near the threads using them.
  constexpr std::size_t Piece = std::size_t(1) << 16;
  std::size_t size = bytes < Alignment ? Alignment : bytes;
  size = (size + Alignment - 1) / Alignment * Alignment;
  if (size < (std::size_t(1) << 22)) {
    std::memset(p, 0, size);
    return p;
  }
  long long pieces = (long long)((size + Piece - 1) / Piece);
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < pieces; ++i) {
    std::size_t begin = std::size_t(i) * Piece;
    std::size_t end = begin + Piece < size ? begin + Piece : size;
    std::memset(p + begin, 0, end - begin);
  }
  return p;
}

void freeAligned(void *p) { std::free(p); }

} // namespace opdc::rt
