// Toolchain.h - Linking generated objects with the runtime, running programs.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_DRIVER_TOOLCHAIN_H
#define OPDC_DRIVER_TOOLCHAIN_H

#include <string>
#include <vector>

namespace opdc {

/// Links \p object into the executable \p exe with the C++ compiler driver
/// and the runtime's link line:
///   compiler: $OPDC_CXX, else the compiler opdc was configured with, else
///             `c++` on PATH;
///   runtime:  $OPDC_RUNTIME_LINK, else <bin>/../lib/opdc/opd_rt_link.txt
///             next to an installed opdc, else the build tree's file; one
///             argument per line (the archive, then link flags). With
///             \p mpi, the MPI runtime: $OPDC_RUNTIME_MPI_LINK, else
///             opd_rt_mpi_link.txt in the same places.
/// \p argv0 locates the installed layout; \p shownAs is the program's name
/// in messages (the final output, not the temporary file linked). Returns
/// false with \p error set (naming the file or command that failed) when
/// the runtime is missing or the link fails; the linker's own messages go to
/// stderr.
bool linkExecutable(const char *argv0, const std::string &object,
                    const std::string &exe, const std::string &shownAs,
                    std::string &error, bool mpi = false,
                    bool libmvec = false);

/// As above, for several objects (`opdc link`). \p libmvec links glibc's
/// vector math library (-fveclib=libmvec); \p extra goes after the
/// runtime's link line (the CUDA runtime library of GPU programs).
bool linkExecutable(const char *argv0, const std::vector<std::string> &objects,
                    const std::string &exe, const std::string &shownAs,
                    std::string &error, bool mpi = false,
                    bool libmvec = false,
                    const std::vector<std::string> &extra = {});

/// The runtime's files an up-to-date program must be newer than: the link
/// file linkExecutable would use and the absolute paths it lists (the
/// archive). Empty when the runtime is not found.
std::vector<std::string> runtimeFiles(const char *argv0, bool mpi = false);

/// Runs \p program with \p args, waits for it, and returns its exit status
/// (128 + the signal number if a signal ended it). Returns -1 with \p error
/// set if it could not be started. opdc ignores SIGINT and SIGQUIT while it
/// waits, as system(3) does, so Ctrl-C stops the program and opdc still
/// cleans up.
int runProgram(const std::string &program, const std::vector<std::string> &args,
               std::string &error);

} // namespace opdc
#endif
