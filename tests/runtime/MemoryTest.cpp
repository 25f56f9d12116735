// MemoryTest.cpp - allocRaw/allocZeroed/allocPopulated (lib/core/
// Memory.cpp): large buffers start at staggered offsets past their 2 MiB
// boundaries, so that consecutive ones fall in different cache sets, stay
// aligned, are zero-filled whole (allocZeroed), resident whole
// (allocPopulated, on either kind of page), and free through freeAligned.
// SPDX-License-Identifier: Apache-2.0
#include "core/Memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <set>
#include <vector>

using namespace opdc::rt;

namespace {

std::uintptr_t address(const void *p) {
  return reinterpret_cast<std::uintptr_t>(p);
}

TEST(MemoryTest, LargeBuffersInDifferentCacheSets) {
  // Eight buffers of one size, as the dats of one block layout: their
  // starts differ modulo 4 KiB (the L1's sets) and 128 KiB (an L2's).
  const std::size_t bytes = LargeAllocation + 4096;
  std::vector<void *> buffers;
  std::set<std::uintptr_t> l1, l2;
  for (int k = 0; k < 8; ++k) {
    void *p = allocZeroed(bytes, "a test buffer");
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(address(p) % Alignment, 0u) << "buffer " << k;
    const auto *c = static_cast<const unsigned char *>(p);
    EXPECT_EQ(c[0], 0);
    EXPECT_EQ(c[bytes - 1], 0);
    l1.insert(address(p) % 4096);
    l2.insert(address(p) % (128 * 1024));
    buffers.push_back(p);
  }
  EXPECT_EQ(l1.size(), buffers.size());
  EXPECT_EQ(l2.size(), buffers.size());
  for (void *p : buffers)
    freeAligned(p);
}

TEST(MemoryTest, RawBuffersWritableToTheEndAndFreed) {
  // Every size up to beyond the stagger's cycle: the stagger fits in the
  // allocation (the last byte is writable) and freeAligned returns the
  // allocation, not the pointer handed out (a mismatch aborts in free).
  for (int k = 0; k < 40; ++k) {
    const std::size_t bytes = LargeAllocation + std::size_t(k) * 4160;
    auto *p = static_cast<unsigned char *>(allocRaw(bytes, "a test buffer"));
    p[0] = 1;
    p[bytes - 1] = 2;
    EXPECT_EQ(address(p) % Alignment, 0u);
    freeAligned(p);
  }
  // Small buffers are not staggered, and free as before.
  void *small = allocZeroed(100, "a small test buffer");
  EXPECT_EQ(address(small) % Alignment, 0u);
  freeAligned(small);
  freeAligned(nullptr);
}

/// The process's resident pages (statm's second field), in bytes.
long long residentBytes() {
  long long size = 0, resident = 0;
  if (std::FILE *f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%lld %lld", &size, &resident) != 2)
      resident = 0;
    std::fclose(f);
  }
  return resident * 4096;
}

TEST(MemoryTest, PopulatedBuffersAreResidentOnEitherPages) {
  // 32 MiB on huge pages and on 4 KiB ones: every page resident when the
  // call returns (the pool times that call as the cost of fresh memory),
  // aligned and staggered as allocRaw's, writable to the end, freed.
  const std::size_t bytes = std::size_t(32) << 20;
  for (bool huge : {true, false}) {
    const long long before = residentBytes();
    auto *p =
        static_cast<unsigned char *>(allocPopulated(bytes, "a test", huge));
    const long long after = residentBytes();
    if (before > 0) {
      EXPECT_GE(after - before, (long long)(bytes * 9 / 10))
          << (huge ? "huge pages" : "4 KiB pages");
    }
    EXPECT_EQ(address(p) % Alignment, 0u);
    p[0] = 1;
    p[bytes - 1] = 2;
    freeAligned(p);
  }
  void *small = allocPopulated(100, "a small test", false);
  EXPECT_EQ(address(small) % Alignment, 0u);
  freeAligned(small);
}

} // namespace
