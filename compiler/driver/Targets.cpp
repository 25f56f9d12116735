// Targets.cpp - The driver's side of target profiles (--target,
// --print-target). SPDX-License-Identifier: Apache-2.0
//
// The target library (compiler/target) reads and validates profiles; this
// file finds them (the search path), prints them, and turns one into the
// CPU backend's options. Precedence: -march=CPU overrides the profile's
// cpu.name (the triple and features stay the profile's); without --target
// opdc compiles for the host exactly as before profiles existed.
#include "driver/Targets.h"

#include "OpdcConfig.h"

#include "codegen/llvm/LLVMCodeGen.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

namespace opdc {

TargetSearchPath targetSearchPath(const DriverOptions &opts,
                                  const char *argv0) {
  TargetSearchPath path;
  path.dirs = opts.targetDirs;
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&targetSearchPath));
  if (!exe.empty()) {
    llvm::SmallString<256> dir(llvm::sys::path::parent_path(exe));
    llvm::sys::path::append(dir, "..", "share", "opdc", "targets");
    if (llvm::sys::fs::is_directory(dir)) {
      path.dirs.push_back(std::string(dir));
      return path;
    }
  }
  path.dirs.push_back(OPDC_BUILD_TARGETS_DIR);
  return path;
}

std::optional<TargetProfile> loadDriverTarget(const DriverOptions &opts,
                                              const char *argv0,
                                              DiagnosticEngine &diags,
                                              bool &ok) {
  ok = true;
  if (opts.target.empty())
    return std::nullopt;
  auto profile =
      loadTargetProfile(opts.target, targetSearchPath(opts, argv0), diags);
  ok = profile.has_value();
  return profile;
}

int printTarget(const DriverOptions &opts, const char *argv0) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  auto profile =
      loadTargetProfile(opts.printTarget, targetSearchPath(opts, argv0), diags);
  if (!profile)
    return 1;
  llvm::outs() << printTargetProfile(*profile);
  return 0;
}

/// Scalar loads instead of gathers is an x86-64 feature of LLVM's
/// (+prefer-no-gather); elsewhere the vectoriser's cost model decides.
static void warnGathersOffX86(const CPUCodeGenOptions &cg,
                              DiagnosticEngine &diags) {
  const std::string triple =
      cg.triple.empty() ? llvm::sys::getProcessTriple() : cg.triple;
  if (cg.gathers == "scalar" &&
      llvm::Triple(triple).getArch() != llvm::Triple::x86_64)
    diags.warning({},
                  "gathers: scalar (-fgathers or backend.cpu.gathers) applies "
                  "to x86-64 only; on " +
                      triple +
                      " the vectoriser's cost model chooses how loops read "
                      "through maps",
                  "target-option");
}

CPUCodeGenOptions cpuCodeGenOptions(const DriverOptions &opts,
                                    const TargetProfile *profile,
                                    DiagnosticEngine &diags) {
  CPUCodeGenOptions cg;
  cg.optLevel = opts.optLevel;
  cg.fpContract = opts.fpContract;
  cg.vecLibMvec = opts.vecLibMvec;
  cg.reproSum = opts.reproSum;
  // The passes' answers (targetQueries), so that each fact has one
  // condition: sum lanes at every -O, scalar bodies at -O2 and up.
  const TargetQueries q = targetQueries(opts, false);
  cg.sumLanes = q.sumLanes();
  cg.rowTails = opts.rowTails;
  cg.columnTables = opts.columnTables;
  cg.transposeRows = opts.transposeRows;
  cg.scalarBodies = q.scalarBodies();
  cg.cpu = opts.cpu.empty() ? "native" : opts.cpu;
  cg.gathers = opts.gathers;
  if (cg.gathers.empty())
    cg.gathers = profile && !profile->cpuBackend.gathers.empty()
                     ? profile->cpuBackend.gathers
                     : "auto";
  if (!profile) {
    // No --target: the program runs here, so the host's L2 (as `native`).
    cg.l2CacheBytes = detectHostProfile().cpu.l2CacheKiB * 1024;
    warnGathersOffX86(cg, diags);
    return cg;
  }
  const TargetProfile &p = *profile;
  bool host = p.name == "native" && p.files.empty();
  if (!host) {
    cg.triple = p.cpu.triple;
    if (opts.cpu.empty())
      cg.cpu = p.cpu.name;
    std::string features;
    for (const auto &f : p.cpu.features)
      features += (features.empty() ? "" : ",") + f;
    cg.features = features;
  } else if (opts.cpu.empty()) {
    cg.cpu = "native";
  }
  cg.preferVectorWidthBits = unsigned(p.cpu.vectorWidthBits);
  cg.defaultThreads = unsigned(p.defaultThreads());
  cg.l2CacheBytes = p.cpu.l2CacheKiB * 1024;
  // Options the CPU backend accepts but does not implement yet.
  auto unimplemented = [&](const char *key, const std::string &value,
                           const char *implemented, const char *instead) {
    if (p.has(std::string("backend.cpu.") + key) && value != implemented)
      diags.warning(
          {},
          "target '" + p.name + "' asks for backend.cpu." + key + ": " + value +
              ", which the CPU backend does not implement yet; " + instead,
          "target-option");
  };
  unimplemented("indirect", p.cpuBackend.indirect, "colouring",
                "indirect increments use block colouring");
  unimplemented("layout", p.cpuBackend.layout, "aos",
                "dats are stored element by element (aos), which was faster "
                "for gathers through maps than soa or aosoa in the measure "
                "of docs/performance.md");
  warnGathersOffX86(cg, diags);
  return cg;
}

void warnCUDAOnlyOptions(const DriverOptions &opts, DiagnosticEngine &diags) {
  if (!opts.cudaIndirect.empty())
    diags.warning({},
                  "--cuda-indirect=" + opts.cudaIndirect +
                      " applies to the CUDA backend only; the CPU backend "
                      "ignores it (its increments through maps use block "
                      "colouring)",
                  "target-option");
}

TargetQueries targetQueries(const DriverOptions &opts, bool cuda) {
  TargetRequest r;
  r.backend = cuda ? Backend::CUDA : Backend::CPU;
  r.optLevel = opts.optLevel;
  r.skew = !opts.noSkew;
  r.scalarBodies = opts.scalarBodies;
  r.sumLanes = opts.sumLanes;
  return TargetQueries(r);
}

void warnCPUOnlyOptions(const DriverOptions &opts, const TargetProfile *profile,
                        DiagnosticEngine &diags) {
  const std::string backend =
      profile && opts.emit != EmitKind::CUDA
          ? "the CUDA backend of target '" + profile->name + "'"
          : std::string("the CUDA backend (--emit=cuda)");
  auto warn = [&](bool given, const std::string &option, const char *instead) {
    if (given)
      diags.warning({},
                    option + " applies to the CPU backend only; " + backend +
                        " ignores it (" + instead + ")",
                    "target-option");
  };
  warn(!opts.gathers.empty(), "-fgathers=" + opts.gathers,
       "device threads read through maps one element each");
  warn(opts.vecLibMvec, "-fveclib=libmvec",
       "math functions are CUDA's device functions");
  warn(!opts.cpu.empty(), "-march=" + opts.cpu,
       "the device code is built for the profile's gpu.arch");
  warn(!opts.sumLanes, "-fno-sum-lanes",
       "device sums are combined per block in a fixed order");
  warn(!opts.rowTails, "-fno-row-tails", "no vectorised rows on the device");
  warn(!opts.columnTables, "-fno-column-tables",
       "device threads compute their values at every point");
  warn(!opts.transposeRows, "-fno-transpose-rows",
       "device threads read through maps one element each");
  warn(!opts.scalarBodies, "-fno-scalar-bodies",
       "no vectorised bodies on the device");
}

bool canLinkHere(const TargetProfile &profile, std::string &error) {
  llvm::Triple target(profile.cpu.triple);
  llvm::Triple host(llvm::sys::getProcessTriple());
  if (target.getArch() == host.getArch() && target.getOS() == host.getOS())
    return true;
  error = "target '" + profile.name + "' is " + profile.cpu.triple +
          ", but this machine is " + host.str() +
          ": opdc cannot link or run programs for it here; make an object "
          "with 'opdc build -c' (or --emit=obj) and link it with "
          "'opdc link' on the target machine";
  return false;
}

} // namespace opdc
