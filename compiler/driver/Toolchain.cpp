// Toolchain.cpp - Linking generated objects with the runtime, running programs.
// SPDX-License-Identifier: Apache-2.0
//
// opdc does not know the runtime's dependencies (OpenMP, HDF5, the C++
// library): the runtime's build writes them to opd_rt_link.txt, and the C++
// compiler driver opdc was configured with links them, so the link line is
// the one CMake used for the runtime's own tests.
//
// The linker: LLVM's lld when it is on the PATH (-fuse-ld=lld; lld-19 is
// one of opdc's dependencies), else the compiler driver's default. The
// runtime archive carries debug information, which the GNU linker copies
// several times slower than lld; the linked program is the same code.
// OPDC_LD=default keeps the driver's linker.
#include "driver/Toolchain.h"

#include "OpdcConfig.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

namespace opdc {

namespace {

std::string envOr(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

/// The runtime link file to use; \p tried collects the places looked at.
std::string findRuntimeLinkFile(const char *argv0,
                                std::vector<std::string> &tried, bool mpi) {
  const char *envName = mpi ? "OPDC_RUNTIME_MPI_LINK" : "OPDC_RUNTIME_LINK";
  const char *fileName = mpi ? "opd_rt_mpi_link.txt" : "opd_rt_link.txt";
  const char *built =
      mpi ? OPDC_BUILD_RUNTIME_MPI_LINK_FILE : OPDC_BUILD_RUNTIME_LINK_FILE;
  std::string env = envOr(envName);
  if (!env.empty()) {
    tried.push_back(env + " ($" + envName + ")");
    return llvm::sys::fs::exists(env) ? env : "";
  }
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&findRuntimeLinkFile));
  if (!exe.empty()) {
    llvm::SmallString<256> p(llvm::sys::path::parent_path(exe));
    llvm::sys::path::append(p, "..", "lib", "opdc", fileName);
    tried.push_back(std::string(p));
    if (llvm::sys::fs::exists(p))
      return std::string(p);
  }
  tried.push_back(built);
  if (llvm::sys::fs::exists(built))
    return built;
  return "";
}

/// A relative file name in a link file (not a flag) is relative to the link
/// file's folder: the installed file names the archive beside it.
std::string resolveLinkEntry(llvm::StringRef line,
                             const std::string &linkFile) {
  if (line.starts_with("-") || llvm::sys::path::is_absolute(line))
    return line.str();
  llvm::SmallString<256> p(llvm::sys::path::parent_path(linkFile));
  llvm::sys::path::append(p, line);
  return std::string(p);
}

std::string findCompiler(std::string &error) {
  std::string env = envOr("OPDC_CXX");
  if (!env.empty()) {
    auto found = llvm::sys::findProgramByName(env);
    if (found)
      return *found;
    error = "cannot find the C++ compiler '" + env + "' named by $OPDC_CXX";
    return "";
  }
  if (llvm::sys::fs::can_execute(OPDC_CXX_COMPILER))
    return OPDC_CXX_COMPILER;
  auto found = llvm::sys::findProgramByName("c++");
  if (found)
    return *found;
  error = std::string("cannot find a C++ compiler to link with: '") +
          OPDC_CXX_COMPILER +
          "' is gone and there is no 'c++' on PATH; set $OPDC_CXX";
  return "";
}

/// -fuse-ld=lld when lld is found and OPDC_LD does not say otherwise.
std::string linkerFlag() {
  std::string choice = envOr("OPDC_LD");
  if (choice == "default")
    return "";
  if (choice.empty() || choice == "lld")
    return llvm::sys::findProgramByName("ld.lld") ? "-fuse-ld=lld" : "";
  return "-fuse-ld=" + choice;
}

} // namespace

std::vector<std::string> runtimeFiles(const char *argv0, bool mpi) {
  std::vector<std::string> tried, files;
  std::string linkFile = findRuntimeLinkFile(argv0, tried, mpi);
  if (linkFile.empty())
    return files;
  files.push_back(linkFile);
  auto buffer = llvm::MemoryBuffer::getFile(linkFile);
  if (!buffer)
    return files;
  llvm::SmallVector<llvm::StringRef, 16> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, false);
  for (llvm::StringRef line : lines) {
    line = line.trim();
    std::string entry = resolveLinkEntry(line, linkFile);
    if (llvm::sys::path::is_absolute(entry) && line.ends_with(".a"))
      files.push_back(entry);
  }
  return files;
}

bool linkExecutable(const char *argv0, const std::string &object,
                    const std::string &exe, const std::string &shownAs,
                    std::string &error, bool mpi, bool libmvec) {
  return linkExecutable(argv0, std::vector<std::string>{object}, exe, shownAs,
                        error, mpi, libmvec);
}

bool linkExecutable(const char *argv0, const std::vector<std::string> &objects,
                    const std::string &exe, const std::string &shownAs,
                    std::string &error, bool mpi, bool libmvec,
                    const std::vector<std::string> &extra) {
  std::vector<std::string> tried;
  std::string linkFile = findRuntimeLinkFile(argv0, tried, mpi);
  const std::string target = mpi ? "opd_rt_mpi" : "opd_rt";
  if (linkFile.empty()) {
    error = std::string("the opdc ") + (mpi ? "MPI " : "") +
            "runtime library was not found (looked for";
    for (size_t i = 0; i < tried.size(); ++i)
      error += (i ? ", '" : " '") + tried[i] + "'";
    error += "); build the '" + target + "' target, or install opdc";
    return false;
  }
  auto buffer = llvm::MemoryBuffer::getFile(linkFile);
  if (!buffer) {
    error = "cannot read the runtime's link line '" + linkFile +
            "': " + buffer.getError().message();
    return false;
  }
  std::vector<std::string> runtimeArgs;
  llvm::SmallVector<llvm::StringRef, 16> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, false);
  for (llvm::StringRef line : lines) {
    line = line.trim();
    if (line.empty() || line.starts_with("#"))
      continue;
    std::string entry = resolveLinkEntry(line, linkFile);
    // A file the runtime's build should have produced (the archive itself).
    if (llvm::sys::path::is_absolute(entry) && !line.starts_with("-") &&
        !llvm::sys::fs::exists(entry)) {
      error = "the runtime library '" + entry + "' listed in '" + linkFile +
              "' does not exist; build the '" + target + "' target";
      return false;
    }
    runtimeArgs.push_back(entry);
  }

  std::string cxx = findCompiler(error);
  if (cxx.empty())
    return false;
  std::vector<llvm::StringRef> argv{cxx};
  const std::string linker = linkerFlag();
  if (!linker.empty())
    argv.push_back(linker);
  for (const std::string &o : objects)
    argv.push_back(o);
  argv.push_back("-o");
  argv.push_back(exe);
  for (const std::string &a : runtimeArgs)
    argv.push_back(a);
  if (libmvec)
    argv.push_back("-lmvec");
  for (const std::string &a : extra)
    argv.push_back(a);
  std::string execError;
  int rc =
      llvm::sys::ExecuteAndWait(cxx, argv, std::nullopt, {}, 0, 0, &execError);
  if (rc != 0) {
    error = "linking '" + shownAs + "' failed: ";
    if (rc < 0)
      error += "'" + cxx + "': " + execError;
    else
      error += "'" + cxx + "' exited with status " + std::to_string(rc) +
               " (runtime link line from '" + linkFile + "')";
    return false;
  }
  return true;
}

int runProgram(const std::string &program, const std::vector<std::string> &args,
               std::string &error) {
  std::vector<char *> argv;
  argv.push_back(const_cast<char *>(program.c_str()));
  for (const std::string &a : args)
    argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);

  // The child gets the default dispositions back (ignored signals would
  // otherwise stay ignored across exec).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGQUIT);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);

  struct sigaction ignore{}, oldInt{}, oldQuit{};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGINT, &ignore, &oldInt);
  sigaction(SIGQUIT, &ignore, &oldQuit);

  pid_t pid;
  int rc =
      posix_spawn(&pid, program.c_str(), nullptr, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  int status = -1;
  if (rc != 0) {
    error = "cannot run '" + program + "': " + std::strerror(rc);
  } else {
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(ws))
      status = WEXITSTATUS(ws);
    else if (WIFSIGNALED(ws))
      status = 128 + WTERMSIG(ws);
    else
      status = 1;
  }
  sigaction(SIGINT, &oldInt, nullptr);
  sigaction(SIGQUIT, &oldQuit, nullptr);
  return status;
}

} // namespace opdc
