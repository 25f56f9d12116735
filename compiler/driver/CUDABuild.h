// CUDABuild.h - GPU builds: profile -> CUDA options, nvcc, the link line.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_DRIVER_CUDABUILD_H
#define OPDC_DRIVER_CUDABUILD_H

#include "codegen/cuda/CUDACodeGen.h"
#include "driver/Options.h"
#include "target/TargetProfile.h"

#include <string>
#include <vector>

namespace opdc {

/// True when \p profile names a GPU (a `gpu:` section): `opdc build` and
/// `opdc run` then use the CUDA backend.
bool isGPUTarget(const TargetProfile *profile);

/// The CUDA backend's options: block size from backend.cuda.block_size or
/// gpu.block_size (256 without), the indirect strategy from
/// --cuda-indirect, else backend.cuda.indirect (colouring without), the
/// layout from backend.cuda.layout (soa without), the arch from gpu.arch.
CUDACodeGenOptions cudaCodeGenOptions(const DriverOptions &opts,
                                      const TargetProfile *profile);

/// nvcc: $OPDC_NVCC, else the one found when opdc was configured, else
/// `nvcc` on PATH. Empty with \p error set when there is none.
std::string findNvcc(std::string &error);

/// Compiles \p cuFile to \p object with nvcc for \p options.arch (sm_80
/// when the profile has none): -O level, --fmad=false unless
/// \p fpContract, the runtime's headers (opd_rt.h, opd_cuda.cuh).
bool compileCUDA(const char *argv0, const std::string &cuFile,
                 const std::string &object, const CUDACodeGenOptions &options,
                 unsigned optLevel, bool fpContract, std::string &error);

/// The headers a GPU program is compiled with (opd_rt.h and every *.cuh of
/// the runtime folder, which opd_cuda.cuh includes):
/// an up-to-date program must be newer.
std::vector<std::string> cudaRuntimeFiles(const char *argv0);

/// What a GPU program links beside the runtime: the static CUDA runtime.
std::vector<std::string> cudaLinkArgs(const std::string &nvcc);

} // namespace opdc
#endif
