// Memory.cpp - Aligned, first-touch zero-filled allocations.
// SPDX-License-Identifier: Apache-2.0
#include "core/Memory.h"

#include "core/Runtime.h"

#include <cstdlib>
#include <cstring>

#include <sys/mman.h>

namespace opdc::rt {

void *allocRaw(std::size_t bytes, const char *what) {
  std::size_t size = bytes < Alignment ? Alignment : bytes;
  if (size > SIZE_MAX - HugePage)
    failf("out of memory allocating %zu bytes for %s", bytes, what);
  // Large buffers on 2 MiB boundaries, with transparent huge pages asked
  // for: a fault per 2 MiB instead of per 4 KiB when first touched, and
  // fewer TLB misses for indirect access (a hint: systems without them
  // ignore it).
  const bool huge = size >= LargeAllocation;
  const std::size_t align = huge ? HugePage : Alignment;
  size = (size + align - 1) / align * align;
  void *p = std::aligned_alloc(align, size);
  if (!p)
    failf("out of memory allocating %zu bytes for %s", bytes, what);
#ifdef MADV_HUGEPAGE
  if (huge)
    madvise(p, size, MADV_HUGEPAGE);
#endif
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

void copyElements(void *to, const void *from, int64_t n, int64_t elementBytes) {
  char *t = static_cast<char *>(to);
  const char *f = static_cast<const char *>(from);
  const int64_t chunks = (n + DirectChunkSize - 1) / DirectChunkSize;
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * DirectChunkSize;
    const int64_t end = begin + DirectChunkSize < n ? begin + DirectChunkSize : n;
    std::memcpy(t + begin * elementBytes, f + begin * elementBytes,
                std::size_t((end - begin) * elementBytes));
  }
}

} // namespace opdc::rt
