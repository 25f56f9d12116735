// Memory.cpp - Aligned, first-touch zero-filled allocations.
// SPDX-License-Identifier: Apache-2.0
//
// Large buffers start at staggered offsets past their 2 MiB boundaries.
// On 2 MiB boundaries alone, the same point of every dat of a block (their
// layouts are equal) falls in the same set of the L1 and L2 caches, whose
// sets repeat every 4 KiB and 128 KiB: a loop that streams more rows at
// once than a set has ways evicts its own lines before it reads them
// again. A tangent step reads and writes twice the primal's dats (u and
// du, u2 and du2) at the same points, and ran measurably slower for it
// (docs/decisions/0350-staggered-large-buffers.md). Each large
// buffer k starts (k mod StaggerSlots) * StaggerStep bytes past its
// boundary: 33 cache lines, an odd number, so that the offsets differ in
// both caches' set bits; a multiple of Alignment, so that the rows'
// alignment (and with it every loop's peel and vector split, hence every
// result bit) is unchanged.
#include "core/Memory.h"

#include "core/Runtime.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include <sys/mman.h>

namespace opdc::rt {

namespace {

constexpr std::size_t StaggerStep = 33 * Alignment;
constexpr std::size_t StaggerSlots = 31;

/// The staggered buffers: the pointer handed out -> the allocation's.
struct Staggered {
  std::mutex mutex;
  std::unordered_map<void *, void *> starts;
};
Staggered &staggered() {
  static Staggered s;
  return s;
}
std::atomic<std::size_t> largeBuffers{0};

} // namespace

void *allocRaw(std::size_t bytes, const char *what) {
  std::size_t size = bytes < Alignment ? Alignment : bytes;
  if (size > SIZE_MAX - 2 * HugePage)
    failf("out of memory allocating %zu bytes for %s", bytes, what);
  // Large buffers on 2 MiB boundaries (plus their stagger, the header),
  // with transparent huge pages asked for: a fault per 2 MiB instead of
  // per 4 KiB when first touched, and fewer TLB misses for indirect access
  // (a hint: systems without them ignore it).
  const bool huge = size >= LargeAllocation;
  const std::size_t align = huge ? HugePage : Alignment;
  const std::size_t offset =
      huge ? largeBuffers.fetch_add(1) % StaggerSlots * StaggerStep : 0;
  size = (size + offset + align - 1) / align * align;
  void *p = std::aligned_alloc(align, size);
  if (!p)
    failf("out of memory allocating %zu bytes for %s", bytes, what);
#ifdef MADV_HUGEPAGE
  if (huge)
    madvise(p, size, MADV_HUGEPAGE);
#endif
  if (!offset)
    return p;
  void *start = static_cast<char *>(p) + offset;
  Staggered &s = staggered();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.starts.emplace(start, p);
  return start;
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

void freeAligned(void *p) {
  if (p) {
    Staggered &s = staggered();
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.starts.find(p);
    if (it != s.starts.end()) {
      void *allocation = it->second;
      s.starts.erase(it);
      std::free(allocation);
      return;
    }
  }
  std::free(p);
}

void copyElements(void *to, const void *from, int64_t n, int64_t elementBytes) {
  char *t = static_cast<char *>(to);
  const char *f = static_cast<const char *>(from);
  const int64_t chunks = (n + DirectChunkSize - 1) / DirectChunkSize;
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * DirectChunkSize;
    const int64_t end =
        begin + DirectChunkSize < n ? begin + DirectChunkSize : n;
    std::memcpy(t + begin * elementBytes, f + begin * elementBytes,
                std::size_t((end - begin) * elementBytes));
  }
}

} // namespace opdc::rt
