// BuildReuse.cpp - What lets the driver reuse an earlier build: the tool
// files an output must be newer than, and the build cache and its key.
// SPDX-License-Identifier: Apache-2.0
//
// Split from main.cpp (which decides when to reuse; compileWith) so that
// the driver's main file stays within its size limit.
#include "driver/BuildReuse.h"

#include "driver/CUDABuild.h"
#include "driver/Toolchain.h"

#include "support/SourceManager.h"
#include "target/TargetProfile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

namespace opdc {

/// What an output must also be newer than: this opdc, and for programs the
/// runtime they link.
std::vector<std::string> toolFiles(const DriverOptions &opts, const char *argv0,
                                   const TargetProfile *target) {
  std::vector<std::string> tools;
  // GPU programs compile the device runtime's header with them.
  if (isGPUTarget(target))
    for (auto &f : cudaRuntimeFiles(argv0))
      tools.push_back(f);
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&toolFiles));
  if (!exe.empty())
    tools.push_back(exe);
  if (opts.command == Command::Build && !opts.objectOnly)
    for (auto &f : runtimeFiles(argv0, opts.mpi))
      tools.push_back(f);
  return tools;
}

/// The build cache for this compile, or null: only programs (build without
/// -c, run) are cached, and not when the user asked for what only a
/// compilation prints (remarks, pass dumps, timings, statistics).
std::unique_ptr<BuildCache> openBuildCache(const DriverOptions &opts) {
  bool program = (opts.command == Command::Build && !opts.objectOnly) ||
                 opts.command == Command::Run;
  if (!program || opts.emit != EmitKind::None)
    return nullptr;
  const char *why = nullptr;
  std::optional<std::string> dir = BuildCache::defaultDirectory();
  if (opts.noCache)
    why = "--no-cache";
  else if (!dir)
    why = "OPDC_NO_CACHE is set or no cache directory (XDG_CACHE_HOME, HOME)";
  else if (!opts.remarks.empty() || !opts.printAfter.empty() ||
           opts.timePasses || opts.stats || opts.verifyEach)
    why = "-Rpass, --print-after, --time-passes, --stats and --verify-each "
          "compile";
  if (why) {
    if (opts.cacheStats)
      llvm::errs() << "opdc: build cache: off (" << why << ")\n";
    return nullptr;
  }
  return std::make_unique<BuildCache>(*dir, BuildCache::defaultLimit());
}

/// The cache key: everything that decides the linked program's bytes
/// (BuildCache.cpp).
void addCacheKey(BuildCache &cache, const DriverOptions &opts,
                 const char *argv0, const std::string &stamp,
                 const SourceManager &sm, unsigned firstProgramBuffer,
                 const TargetProfile *target) {
  cache.addKey("opdc-cache-1");
  cache.addKey(stamp);
  for (unsigned id = firstProgramBuffer; id <= sm.llvm().getNumBuffers();
       ++id) {
    cache.addKey(sm.bufferName(id).str());
    cache.addKey(sm.llvm().getMemoryBuffer(id)->getBuffer().str());
  }
  if (target)
    for (const auto &f : target->files)
      cache.addFileContents(f);
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&addCacheKey));
  cache.addFileIdentity(exe);
  for (auto &f : runtimeFiles(argv0, opts.mpi))
    cache.addFileIdentity(f);
  if (isGPUTarget(target)) {
    for (auto &f : cudaRuntimeFiles(argv0))
      cache.addFileIdentity(f);
    std::string error;
    cache.addFileIdentity(findNvcc(error));
  }
  for (const char *var :
       {"OPDC_CXX", "OPDC_LD", "OPDC_RUNTIME_LINK", "OPDC_RUNTIME_MPI_LINK"}) {
    const char *v = std::getenv(var);
    cache.addKey(std::string(var) + "=" + (v ? v : "(unset)"));
  }
}

} // namespace opdc
