// RuntimeABI.h - Declarations of the opd_rt.h functions in a module.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_CODEGEN_LLVM_RUNTIMEABI_H
#define OPDC_CODEGEN_LLVM_RUNTIMEABI_H

#include "opd_rt.h"

#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Module.h"

namespace opdc {

/// The runtime's C ABI (lib/include/opd_rt.h) as LLVM declarations and
/// types. Every function generated code may call is declared here and
/// nowhere else, so a call site never guesses a signature; enum arguments
/// are i32 and pointers to runtime objects are opaque `ptr`. The values of
/// the ABI's enumerations come from codegen/common/RuntimeMapping.h.
struct RuntimeABI {
  explicit RuntimeABI(llvm::Module &m);

  /// opd_rt_set_default_threads, declared on first use only: modules of
  /// programs without a default thread count do not mention it.
  llvm::FunctionCallee setDefaultThreads();
  /// Communication avoidance (passes/loops/CommAvoid.cpp), declared when used:
  /// opd_rt_halo_depth, opd_loop_extend_next, opd_halo_group.
  llvm::FunctionCallee haloDepth();
  llvm::FunctionCallee loopExtendNext();
  llvm::FunctionCallee haloGroup();
  /// opd_skew_run (passes/loops/Fuse.cpp's skewed groups), declared when used.
  llvm::FunctionCallee skewRun();
  llvm::FunctionCallee costModel();
  /// opd_rt_mesh_ready (host::meshReadyAtStart), declared when used.
  llvm::FunctionCallee meshReady();

  /// struct opd_param_desc { const char *name; opd_scalar type; void *storage;
  /// const char *doc; }
  llvm::StructType *paramDescTy;
  /// void (*opd_body)(void *ctx, int64_t begin, int64_t end, int64_t chunk)
  llvm::FunctionType *bodyTy;

  llvm::FunctionCallee checkAbi, init, finalize, wtime, fail, failOutside;
  llvm::FunctionCallee failAllf, warnf; ///< collective error and warning
  llvm::FunctionCallee setCreate, setFromFile, setSize, setGlobalIds,
      setSizeI32;
  llvm::FunctionCallee mapCreate, mapFromFile, mapData, mapValues;
  llvm::FunctionCallee datCreate, datFromFile, datData, datFill, datSwap;
  llvm::FunctionCallee datWrite, datWriteRange, datRead;
  llvm::FunctionCallee blockCreate, blockDatCreate, datExtent, datOrigin;
  llvm::FunctionCallee loopPrepare, loopPrepareBlock, loopSetLocation,
      loopChunks, loopPartialSlots, loopRun, loopStreams, loopScalar;
  llvm::FunctionCallee scratch, scratchSlot, reduceLocal, reduceGlobal;
  llvm::FunctionCallee xsumAddF64, xsumAddF32, reduceSumExact,
      loopGather; ///< -frepro-sum
  llvm::FunctionCallee solveTridiagonal;
  llvm::FunctionCallee tapePushDat, tapePushDatOverwritten, tapePopDat,
      tapePushValue, tapePopValue;
  llvm::FunctionCallee ckptBegin, ckptForward, ckptSave, ckptSaveOverwritten,
      ckptRestore, ckptNext, ckptEnd;
  llvm::FunctionCallee printf, printI64, printF64, printF32, printBool,
      printStr, printEnd;

private:
  llvm::Module &module;
};

} // namespace opdc
#endif
