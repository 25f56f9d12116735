// CUDACodeGen.h - The CUDA backend: Program IR -> CUDA C++ source.
// SPDX-License-Identifier: Apache-2.0
//
// The generated translation unit includes opd_rt.h (the runtime's C ABI,
// the same calls the CPU backend makes for sets, maps, dats, params,
// print, files, loop phases and reductions) and lib/cuda/opd_cuda.cuh (the
// device runtime: resident device copies, layouts, colouring, reductions,
// scalar semantics). nvcc compiles it; the driver links it with opd_rt and
// the CUDA runtime library. See docs/decisions/0059-0070.
#ifndef OPDC_CODEGEN_CUDA_CUDACODEGEN_H
#define OPDC_CODEGEN_CUDA_CUDACODEGEN_H

#include <string>

namespace opdc {
class DiagnosticEngine;
namespace ir {
struct Program;
}

/// How a CUDA program handles increments through maps.
enum class CUDAIndirect {
  /// atomicAdd per component (fast, not bitwise reproducible: the order of
  /// the additions to one target varies between runs).
  Atomics,
  /// Two-level colouring: the runtime's block colours between launches,
  /// thread colours inside a block (bitwise reproducible).
  Colouring,
};

/// The CUDA backend's options; the driver fills them from the target
/// profile (gpu.*, backend.cuda.*) and the command line.
struct CUDACodeGenOptions {
  CUDAIndirect indirect = CUDAIndirect::Atomics;
  /// -frepro-sum: float sums exact and increments through maps applied in
  /// global element order, the CPU build's bits (CUDALoops.cpp).
  bool reproSum = false;
  /// Structure-of-arrays device storage of set dats (else the host's
  /// array-of-structures).
  bool soa = true;
  /// Threads per block (a multiple of 32, at most 1024).
  unsigned blockSize = 256;
  /// Passed to opd_rt_set_default_threads before opd_rt_init (0: none);
  /// the host side (solves, files) still uses threads.
  unsigned defaultThreads = 0;
  /// The profile's gpu.arch, for the header comment only.
  std::string arch;
  /// Embedded as "opdc-build:<stamp>;" (the driver's up-to-date check).
  std::string buildStamp;
};

/// The CUDA C++ source of \p program. Statements the backend cannot
/// compile (adjoint) are reported through \p diags; returns false then.
bool generateCUDASource(const ir::Program &program,
                        const CUDACodeGenOptions &options,
                        DiagnosticEngine &diags, std::string &source);

/// "atomics" or "colouring".
const char *cudaIndirectName(CUDAIndirect k);

} // namespace opdc
#endif
