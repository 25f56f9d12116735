// Depfile.h - Make-style builds: dependency files and the up-to-date check.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_DRIVER_DEPFILE_H
#define OPDC_DRIVER_DEPFILE_H

#include "driver/Options.h"

#include <string>
#include <vector>

namespace opdc {
class SourceManager;
struct TargetProfile;

/// The .opd files of the program (the input and every imported module): the
/// buffers of \p sm from \p firstBuffer on, in load order, without repeats.
std::vector<std::string> programFiles(const SourceManager &sm,
                                      unsigned firstBuffer);

/// Everything an output depends on besides opdc itself: the program files
/// and the profile's files (most derived first).
std::vector<std::string> buildInputs(const std::vector<std::string> &program,
                                     const TargetProfile *profile);

/// A digest of every option that changes the generated code (version,
/// -O, -march, -ffp-contract, the resolved profile, the input's absolute
/// path, -I and the stdlib directory). Embedded in outputs; see isUpToDate.
std::string buildStamp(const DriverOptions &opts, const TargetProfile *profile,
                       const std::string &stdlibDir);

/// True when \p output exists, is newer than every file in \p inputs and
/// \p tools (opdc, the runtime), and carries \p stamp (it was built with
/// the same options). A missing input makes the output out of date.
bool isUpToDate(const std::string &output,
                const std::vector<std::string> &inputs,
                const std::vector<std::string> &tools,
                const std::string &stamp);

/// Writes `TARGET: DEP...` plus an empty rule per dependency (like gcc
/// -MP, so deleting a module does not break make). Returns false with
/// \p error set when the file cannot be written.
bool writeDepfile(const std::string &path, const std::string &target,
                  const std::vector<std::string> &deps, std::string &error);

} // namespace opdc
#endif
