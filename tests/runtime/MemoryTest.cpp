// MemoryTest.cpp - allocRaw/allocZeroed (lib/core/Memory.cpp): large
// buffers start at staggered offsets past their 2 MiB boundaries, so that
// consecutive ones fall in different cache sets, stay aligned, are
// zero-filled whole, and free through freeAligned.
// SPDX-License-Identifier: Apache-2.0
#include "core/Memory.h"

#include <gtest/gtest.h>

#include <cstdint>
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

} // namespace
