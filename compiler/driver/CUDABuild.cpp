// CUDABuild.cpp - GPU builds: profile -> CUDA options, nvcc, the link line.
// SPDX-License-Identifier: Apache-2.0
//
// opdc itself never needs nvcc: CMake records the nvcc it found (if any) in
// OpdcConfig.h, and a GPU build looks for it only when it runs. The device
// runtime is a header (lib/cuda/opd_cuda.cuh) compiled with the program;
// the host runtime is the same opd_rt archive CPU programs link.
#include "driver/CUDABuild.h"

#include "OpdcConfig.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <cstdlib>

namespace opdc {

bool isGPUTarget(const TargetProfile *profile) {
  return profile && profile->hasGPU();
}

CUDACodeGenOptions cudaCodeGenOptions(const DriverOptions &opts,
                                      const TargetProfile *profile) {
  CUDACodeGenOptions o;
  o.indirect = CUDAIndirect::Colouring;
  if (profile) {
    if (profile->blockSize() > 0)
      o.blockSize = unsigned(profile->blockSize());
    if (profile->has("backend.cuda.indirect"))
      o.indirect = profile->cudaBackend.indirect == "atomics"
                       ? CUDAIndirect::Atomics
                       : CUDAIndirect::Colouring;
    if (profile->has("backend.cuda.layout"))
      o.soa = profile->cudaBackend.layout != "aos";
    o.arch = profile->gpu.arch;
  }
  o.reproSum = opts.reproSum;
  if (!opts.cudaIndirect.empty())
    o.indirect = opts.cudaIndirect == "atomics" ? CUDAIndirect::Atomics
                                                : CUDAIndirect::Colouring;
  return o;
}

std::string findNvcc(std::string &error) {
  if (const char *env = std::getenv("OPDC_NVCC"); env && *env) {
    auto found = llvm::sys::findProgramByName(env);
    if (found && llvm::sys::fs::can_execute(*found))
      return *found;
    error = std::string("cannot find the CUDA compiler '") + env +
            "' named by $OPDC_NVCC";
    return "";
  }
  if (*OPDC_NVCC && llvm::sys::fs::can_execute(OPDC_NVCC))
    return OPDC_NVCC;
  if (auto found = llvm::sys::findProgramByName("nvcc"))
    return *found;
  error = "building for a GPU target needs nvcc, the CUDA compiler, which "
          "was not found (not when opdc was configured, not on PATH); "
          "install the CUDA toolkit or name it with $OPDC_NVCC";
  return "";
}

namespace {

/// Folders holding opd_rt.h and opd_cuda.cuh: the installed include/opdc
/// next to this opdc, else the source tree's.
std::vector<std::string> runtimeIncludes(const char *argv0) {
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&runtimeIncludes));
  if (!exe.empty()) {
    llvm::SmallString<256> p(llvm::sys::path::parent_path(exe));
    llvm::sys::path::append(p, "..", "include", "opdc");
    llvm::SmallString<256> cuh(p);
    llvm::sys::path::append(cuh, "opd_cuda.cuh");
    if (llvm::sys::fs::exists(cuh))
      return {std::string(p)};
  }
  return {OPDC_BUILD_RUNTIME_INCLUDE_DIR, OPDC_BUILD_CUDA_RUNTIME_DIR};
}

} // namespace

std::vector<std::string> cudaRuntimeFiles(const char *argv0) {
  // opd_rt.h, opd_rt_device.h and every CUDA runtime header (opd_cuda.cuh
  // includes the others), the headers sorted so that the build cache's key
  // does not depend on the order the directory lists them in.
  std::vector<std::string> files;
  for (const std::string &dir : runtimeIncludes(argv0)) {
    std::vector<std::string> found;
    for (const char *name : {"opd_rt.h", "opd_rt_device.h"}) {
      llvm::SmallString<256> path(dir);
      llvm::sys::path::append(path, name);
      if (llvm::sys::fs::exists(path))
        found.push_back(std::string(path));
    }
    const size_t headers = found.size();
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
         it.increment(ec))
      if (llvm::sys::path::extension(it->path()) == ".cuh")
        found.push_back(it->path());
    std::sort(found.begin() + ptrdiff_t(headers), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

bool compileCUDA(const char *argv0, const std::string &cuFile,
                 const std::string &object, const CUDACodeGenOptions &options,
                 unsigned optLevel, bool fpContract, std::string &error) {
  std::string nvcc = findNvcc(error);
  if (nvcc.empty())
    return false;
  std::string arch = options.arch.empty() ? "sm_80" : options.arch;
  std::vector<std::string> args{nvcc,
                                "-std=c++17",
                                "-O" + std::to_string(optLevel),
                                "-arch=" + arch,
                                // Every rounding step of the source, as the
                                // CPU backend keeps them (fma only when
                                // asked).
                                fpContract ? "--fmad=true" : "--fmad=false",
                                "-Xcompiler",
                                fpContract ? "-ffp-contract=fast"
                                           : "-ffp-contract=off"};
  for (const std::string &dir : runtimeIncludes(argv0))
    args.push_back("-I" + dir);
  args.insert(args.end(), {"-c", cuFile, "-o", object});
  std::vector<llvm::StringRef> argv(args.begin(), args.end());
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(nvcc, argv, std::nullopt, {}, 0, 0,
                                     &execError);
  if (rc != 0) {
    error = "compiling the generated CUDA source failed: '" + nvcc + "' " +
            (rc < 0 ? execError
                    : "exited with status " + std::to_string(rc) +
                          " (see --emit=cuda for the source)");
    return false;
  }
  return true;
}

std::vector<std::string> cudaLinkArgs(const std::string &nvcc) {
  // <cuda>/bin/nvcc -> <cuda>/lib64 (or the targets/ folder it links to).
  llvm::SmallString<256> root(
      llvm::sys::path::parent_path(llvm::sys::path::parent_path(nvcc)));
  std::vector<std::string> args;
  for (const char *sub : {"lib64", "lib", "targets/x86_64-linux/lib"}) {
    llvm::SmallString<256> p(root);
    llvm::sys::path::append(p, sub);
    llvm::SmallString<256> lib(p);
    llvm::sys::path::append(lib, "libcudart_static.a");
    if (llvm::sys::fs::exists(lib)) {
      args.push_back("-L" + std::string(p));
      break;
    }
  }
  for (const char *a : {"-lcudart_static", "-ldl", "-lrt", "-lpthread"})
    args.push_back(a);
  return args;
}

} // namespace opdc
