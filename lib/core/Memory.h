// Memory.h - Aligned allocations for dats, maps and scratch buffers.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_LIB_CORE_MEMORY_H
#define OPDC_LIB_CORE_MEMORY_H

#include <cstddef>
#include <cstdint>

namespace opdc::rt {

/// Alignment of every dat, map and scratch buffer (a cache line; also the
/// widest vector register).
constexpr std::size_t Alignment = 64;
/// Buffers of at least LargeAllocation bytes start a few cache lines past a
/// HugePage boundary (a different number for consecutive buffers, so that
/// dats of one layout do not share cache sets: Memory.cpp) and are asked
/// to use transparent huge pages.
constexpr std::size_t HugePage = std::size_t(2) << 20;
constexpr std::size_t LargeAllocation = std::size_t(4) << 20;

/// Allocates `bytes` (rounded up to Alignment, at least Alignment) aligned
/// to Alignment and zero-fills it, in parallel for large buffers so pages
/// are first touched by the threads that run the chunks over them. Fails
/// with "out of memory allocating N bytes for <what>".
void *allocZeroed(std::size_t bytes, const char *what);
/// As allocZeroed without zero-filling.
void *allocRaw(std::size_t bytes, const char *what);
/// As allocRaw, with transparent huge pages asked for (\p hugePages) or
/// declined for a large buffer, and every page faulted in before it
/// returns (MADV_POPULATE_WRITE, or a write per page; the values are
/// unspecified): what a first touch costs, all of it inside this call, so
/// that the caller can time it.
void *allocPopulated(std::size_t bytes, const char *what, bool hugePages);
/// Frees a buffer of allocZeroed, allocRaw or allocPopulated (the pointer they
/// returned).
void freeAligned(void *p);
/// Copies \p n elements of \p elementBytes bytes in parallel, in the
/// loops' chunks of elements (so pages are touched by the threads that run
/// the chunks over them).
void copyElements(void *to, const void *from, int64_t n, int64_t elementBytes);

} // namespace opdc::rt
#endif
