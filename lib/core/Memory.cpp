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
//
// allocPopulated (the adjoints' pool: tape and snapshot buffers) lets the
// caller choose the pages and faults the whole buffer in at once: the
// cost of fresh memory, which the adjoints' plans weigh against re-running
// steps, differs by page size and machine (bench/adjoint/fault_cost.c;
// docs/decisions/0380-fresh-memory-measured-by-its-pages.md), so the pool
// measures both kinds and takes the cheaper.
//
// The parallel zero fills, faults and copies run on the runtime's pool
// (core/Pool.h), not in OpenMP regions: after a region libgomp's workers
// spin for milliseconds before they sleep, on the cores the pool's
// workers need, so a program's first parallel loops after its dats were
// allocated ran as if on one thread (decision 0425).
#include "core/Memory.h"

#include "core/Pool.h"
#include "core/Runtime.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include <sys/mman.h>
#include <unistd.h>

namespace opdc::rt {

namespace {

constexpr std::size_t StaggerStep = 33 * Alignment;
/// MADV_POPULATE_WRITE (Linux 5.14), where the headers predate it.
#ifdef MADV_POPULATE_WRITE
constexpr int PopulateWrite = MADV_POPULATE_WRITE;
#else
constexpr int PopulateWrite = 23;
#endif
constexpr std::size_t StaggerSlots = 31;

/// The staggered buffers: the pointer handed out -> the allocation's.
struct Staggered {
  std::mutex mutex;
  std::unordered_map<void *, void *> starts;
};
/// Never destroyed: buffers may be freed by other statics' destructors
/// (the adjoints' pool) after this one's would have run.
Staggered &staggered() {
  static Staggered *s = new Staggered;
  return *s;
}
std::atomic<std::size_t> largeBuffers{0};

} // namespace

namespace {

/// allocRaw, with transparent huge pages asked for (\p hugePages, large
/// buffers only) or declined; \p size: the bytes of the allocation from
/// the pointer returned on.
void *allocate(std::size_t bytes, const char *what, bool hugePages,
               std::size_t *size_out) {
  std::size_t size = bytes < Alignment ? Alignment : bytes;
  if (size > SIZE_MAX - 2 * HugePage)
    failf("out of memory allocating %zu bytes for %s", bytes, what);
  // Large buffers on 2 MiB boundaries (plus their stagger, the header),
  // with transparent huge pages asked for: a fault per 2 MiB instead of
  // per 4 KiB when first touched, and fewer TLB misses for indirect access
  // (a hint: systems without them ignore it).
  const bool large = size >= LargeAllocation;
  const std::size_t align = large ? HugePage : Alignment;
  const std::size_t offset =
      large ? largeBuffers.fetch_add(1) % StaggerSlots * StaggerStep : 0;
  size = (size + offset + align - 1) / align * align;
  void *p = std::aligned_alloc(align, size);
  if (!p)
    failf("out of memory allocating %zu bytes for %s", bytes, what);
  *size_out = size - offset;
#if defined(MADV_HUGEPAGE) && defined(MADV_NOHUGEPAGE)
  // Declined explicitly: the kernel's setting may be `always`.
  if (large)
    madvise(p, size, hugePages ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
#else
  (void)hugePages;
#endif
  if (!offset)
    return p;
  void *start = static_cast<char *>(p) + offset;
  Staggered &s = staggered();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.starts.emplace(start, p);
  return start;
}

} // namespace

void *allocRaw(std::size_t bytes, const char *what) {
  std::size_t size = 0;
  return allocate(bytes, what, true, &size);
}

void *allocPopulated(std::size_t bytes, const char *what, bool hugePages) {
  std::size_t size = 0;
  char *p = static_cast<char *>(allocate(bytes, what, hugePages, &size));
  // The kernel faults each piece in by itself (MADV_POPULATE_WRITE, Linux
  // 5.14): no trap per page, no write of ours. In the loops' static
  // pieces, as allocZeroed, so on NUMA machines pages land near the
  // threads using them. Where the kernel lacks it, a write per page.
  constexpr std::size_t Piece = std::size_t(1) << 22;
  const int64_t pieces = int64_t((size + Piece - 1) / Piece);
  const long page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
  runTasks(pieces, true, [&](int64_t i) {
    const std::size_t begin = std::size_t(i) * Piece;
    const std::size_t end = begin + Piece < size ? begin + Piece : size;
    // madvise wants a page-aligned start: from the page holding begin.
    const uintptr_t from =
        (uintptr_t(p) + begin) / uintptr_t(page) * uintptr_t(page);
    const uintptr_t to = uintptr_t(p) + end;
#ifdef __linux__
    if (madvise(reinterpret_cast<void *>(from), to - from, PopulateWrite) == 0)
      return;
#endif
    for (uintptr_t at = uintptr_t(p) + begin; at < to; at += uintptr_t(page))
      *reinterpret_cast<volatile char *>(at) = 0;
  });
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
  const int64_t pieces = int64_t((size + Piece - 1) / Piece);
  runTasks(pieces, true, [&](int64_t i) {
    const std::size_t begin = std::size_t(i) * Piece;
    const std::size_t end = begin + Piece < size ? begin + Piece : size;
    std::memset(p + begin, 0, end - begin);
  });
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
  runTasks(chunks, true, [&](int64_t c) {
    const int64_t begin = c * DirectChunkSize;
    const int64_t end =
        begin + DirectChunkSize < n ? begin + DirectChunkSize : n;
    std::memcpy(t + begin * elementBytes, f + begin * elementBytes,
                std::size_t((end - begin) * elementBytes));
  });
}

} // namespace opdc::rt
