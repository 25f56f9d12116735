// Targets.h - The driver's side of target profiles (--target, --print-target).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_DRIVER_TARGETS_H
#define OPDC_DRIVER_TARGETS_H

#include "driver/Options.h"
#include "passes/Pass.h"
#include "target/TargetProfile.h"

#include <optional>
#include <string>

namespace opdc {
class DiagnosticEngine;
struct CPUCodeGenOptions;

/// Where --target NAME is looked up: every --target-dir, then the installed
/// <prefix>/share/opdc/targets next to this opdc, else the source tree's
/// targets/ (a build-tree compiler).
TargetSearchPath targetSearchPath(const DriverOptions &opts, const char *argv0);

/// Loads the profile named by --target; nullopt when none was given.
/// \p ok is false when one was given and could not be loaded (errors
/// reported through \p diags).
std::optional<TargetProfile> loadDriverTarget(const DriverOptions &opts,
                                              const char *argv0,
                                              DiagnosticEngine &diags,
                                              bool &ok);

/// `opdc --print-target=SPEC`: prints the resolved profile; exit status.
int printTarget(const DriverOptions &opts, const char *argv0);

/// The CPU backend's options from the command line and the profile:
/// triple, features, vector width and threads from the profile; the CPU
/// from -march if given, else the profile's cpu.name, else "native".
/// Warns (through \p diags) about profile options the CPU backend does not
/// implement yet.
CPUCodeGenOptions cpuCodeGenOptions(const DriverOptions &opts,
                                    const TargetProfile *profile,
                                    DiagnosticEngine &diags);

/// False with \p error set when \p profile's triple is not this machine's
/// architecture (an executable for it cannot be linked or run here).
bool canLinkHere(const TargetProfile &profile, std::string &error);

/// The CPU backend: warns under -Wtarget-option for --cuda-indirect.
void warnCUDAOnlyOptions(const DriverOptions &opts, DiagnosticEngine &diags);

/// The backend's answers to the passes' queries (passes/Pass.h), made
/// once from the options: the pass pipeline and the CPU backend's options
/// (cpuCodeGenOptions) both follow them.
TargetQueries targetQueries(const DriverOptions &opts, bool cuda);

/// The CUDA backend (--emit=cuda, a GPU target): warns under
/// -Wtarget-option for each CPU code-generation option given (-fgathers,
/// -fveclib, -march, -fno-sum-lanes, -fno-row-tails, -fno-column-tables,
/// -fno-scalar-bodies), naming it and the backend, instead of dropping it
/// silently.
void warnCPUOnlyOptions(const DriverOptions &opts, const TargetProfile *profile,
                        DiagnosticEngine &diags);

} // namespace opdc
#endif
