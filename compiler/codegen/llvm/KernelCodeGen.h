// KernelCodeGen.h - Kernels, specialised per parallel loop.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_CODEGEN_LLVM_KERNELCODEGEN_H
#define OPDC_CODEGEN_LLVM_KERNELCODEGEN_H

#include <cstdint>
#include <vector>

namespace llvm {
class Function;
class MDNode;
} // namespace llvm

namespace opdc {
class CodeGenModule;
struct ColumnValues;
namespace ir {
struct ParLoopStmt;
} // namespace ir

/// The kernel of one loop as an LLVM function the loop body calls once per
/// element:
///
///   void opd_k_NAME.ID(ptr arg0, ..., ptr argN-1,    one per loop argument
///                      i64 strides...,               block dat arguments
///                      i64 coord0, ...,              element / grid point
///                      T column0, ...)               column values
///
/// Argument pointers address the element's first component: the dat
/// element (direct, indirect, the centre of a stencil), the map's row
/// (map-direct), a private copy of a global-read value, the chunk's
/// reduction accumulator, or, for increments through maps, the element's
/// row of the body's strip buffer (LoopBody.cpp); accesses to that row
/// are tagged as accesses to the dat, which it never overlaps. An argument
/// read through a map whose strip transposes its rows (StagedRows.cpp)
/// points at the element's first component in the strip's buffer, its
/// other components componentStride elements apart. Each dat
/// argument of a block loop is followed by the strides, in components, of
/// dimensions 1.. (dimension 0 is unit stride); the coordinates are the set
/// element index, or the grid point.
struct KernelInterface {
  llvm::Function *function = nullptr;
  /// Per loop argument: the position of its first stride parameter, or -1.
  std::vector<int> strideParam;
  /// Per loop argument: the distance in elements between its components,
  /// 0 when they are consecutive (the dat's row).
  std::vector<int64_t> componentStride;
  unsigned firstCoordParam = 0;
  unsigned dims = 1;
  /// The loop's column values (analysis/ColumnValues.h), one parameter
  /// each after the coordinates: the kernel reads them instead of
  /// computing them (the body loads them from the column tables).
  unsigned firstColumnParam = 0;
};

/// Whether argument \p i of \p loop may be written with non-temporal
/// (streaming) stores when the loop's data exceed the last-level cache: a
/// write-only (`out`) argument at the element itself (direct, or a stencil
/// holding only the centre) on a dat no other argument of the loop uses.
/// Its accesses get an alias scope named StreamScopePrefix + its name, which
/// marks them for markStreamingStores (Target.cpp) after optimisation.
bool isStreamCandidate(const ir::ParLoopStmt &loop, unsigned i);
/// Whether argument \p i of \p loop is write-only (`out`) at the element
/// itself (direct, or a stencil holding only the centre) on a dat no other
/// argument of the loop uses: isStreamCandidate without the skewed sweep's
/// exception, and what a row tail needs of a written argument (LoopBody.cpp).
bool isWriteOnlyCentre(const ir::ParLoopStmt &loop, unsigned i);
inline constexpr const char *StreamScopePrefix = "opd.stream.";
/// The attribute of a body variant whose candidate stores are to stream.
inline constexpr const char *StreamFnAttr = "opd-stream";
/// The attribute of a loop's scalar body (LoopHost.cpp cloneScalarBody):
/// -Rpass=vectorize names it for what it is (Remarks.cpp).
inline constexpr const char *ScalarFnAttr = "opd-scalar-body";
/// The attribute of host code (main and procs): runtime calls and scalar
/// arithmetic, optimised lightly and compiled without the expensive code
/// generation passes (Target.cpp, optimizeModule).
inline constexpr const char *HostFnAttr = "opd-host";

/// Emits the kernel of \p loop as an internal, always-inlined function.
/// Accesses through dat and map arguments carry the TBAA tag of their
/// memory kind, alias scopes saying they never alias accesses through
/// arguments on other dats or maps and, when \p accessGroup is given, that
/// access group (the loop body declares its element loop parallel over it).
/// \p columns: the values the kernel takes as parameters instead of
/// computing them (analysis/ColumnValues.h; empty: none).
/// \p componentStride (empty: all 0) is KernelInterface::componentStride.
KernelInterface
emitLoopKernel(CodeGenModule &cgm, const ir::ParLoopStmt &loop, unsigned loopId,
               llvm::MDNode *accessGroup, const ColumnValues &columns,
               const std::vector<int64_t> &componentStride = {});

} // namespace opdc
#endif
