// Depfile.cpp - Make-style builds: dependency files and the up-to-date check.
// SPDX-License-Identifier: Apache-2.0
//
// `opdc build` skips all the work when its output is up to date. The rule:
// the output exists, its modification time is later than that of the
// program, every module it imports (found by parsing the import graph, which
// is cheap), the target profile chain, the opdc executable and the runtime
// (its link file and archive), and it was built with the same options. The
// options are not visible in file times, so codegen embeds a digest of them
// as the string "opdc-build:<digest>;" (CPUCodeGenOptions::buildStamp) and
// the check looks for that string in the output. -B forces a build.
//
// -MD writes the same inputs (without opdc and the runtime, like gcc's -MD
// leaves out the compiler) as a make rule, with an empty rule per
// dependency so that make survives a deleted module.
#include "driver/Depfile.h"

#include "support/SourceManager.h"
#include "target/TargetProfile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MD5.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

#ifndef OPDC_VERSION
#define OPDC_VERSION "0.0.0"
#endif

namespace opdc {

std::vector<std::string> programFiles(const SourceManager &sm,
                                      unsigned firstBuffer) {
  std::vector<std::string> files;
  for (unsigned id = firstBuffer; id <= sm.llvm().getNumBuffers(); ++id) {
    std::string name = sm.bufferName(id).str();
    if (std::find(files.begin(), files.end(), name) == files.end())
      files.push_back(name);
  }
  return files;
}

std::vector<std::string> buildInputs(const std::vector<std::string> &program,
                                     const TargetProfile *profile) {
  std::vector<std::string> inputs = program;
  if (profile)
    for (const auto &f : profile->files)
      if (std::find(inputs.begin(), inputs.end(), f) == inputs.end())
        inputs.push_back(f);
  return inputs;
}

std::string buildStamp(const DriverOptions &opts, const TargetProfile *profile,
                       const std::string &stdlibDir) {
  llvm::MD5 md5;
  auto add = [&](llvm::StringRef s) {
    md5.update(s);
    md5.update(llvm::ArrayRef<uint8_t>{0});
  };
  llvm::SmallString<256> input(opts.input);
  llvm::sys::fs::make_absolute(input);
  add(OPDC_VERSION);
  add(input);
  add(opts.objectOnly || opts.emit == EmitKind::Obj ? "object" : "program");
  add(std::to_string(opts.optLevel));
  add(opts.cpu);
  add(opts.fpContract ? "fp-contract=fast" : "fp-contract=off");
  add(opts.vecLibMvec ? "veclib=libmvec" : "veclib=none");
  add("gathers=" + opts.gathers);
  add("cuda-indirect=" + opts.cudaIndirect);
  add("comm-avoid=" + opts.commAvoid);
  add(opts.reproSum ? "repro-sum" : "no-repro-sum");
  add(opts.sumLanes ? "sum-lanes" : "no-sum-lanes");
  add(opts.scalarBodies ? "scalar-bodies" : "no-scalar-bodies");
  add(opts.rowTails ? "row-tails" : "no-row-tails");
  add(opts.columnTables ? "column-tables" : "no-column-tables");
  add(opts.transposeRows ? "transpose-rows" : "no-transpose-rows");
  add(profile ? printTargetProfile(*profile) : "host");
  for (const auto &dir : opts.importPaths)
    add("-I" + dir);
  add(stdlibDir);
  add(opts.mpi ? "runtime=mpi" : "runtime=serial");
  add(opts.passes ? "passes=" + *opts.passes : "passes=default");
  if (opts.noFuse)
    add("-fno-fuse");
  if (opts.noSkew)
    add("-fno-skew");
  if (opts.noSwapCopyBack)
    add("-fno-swap-copy-back");
  if (opts.unrollSteps != DriverOptions().unrollSteps)
    add("-funroll-steps=" + std::to_string(opts.unrollSteps));
  // Every later option that changes the generated code or the link (a
  // runtime variant, a backend) must be added here too, or a build with it
  // would be taken for up to date.
  llvm::MD5::MD5Result r;
  md5.final(r);
  return r.digest().str().str();
}

bool isUpToDate(const std::string &output,
                const std::vector<std::string> &inputs,
                const std::vector<std::string> &tools,
                const std::string &stamp) {
  llvm::sys::fs::file_status out;
  if (llvm::sys::fs::status(output, out) ||
      !llvm::sys::fs::is_regular_file(out))
    return false;
  auto outTime = out.getLastModificationTime();
  for (const auto *list : {&inputs, &tools})
    for (const auto &f : *list) {
      llvm::sys::fs::file_status st;
      if (llvm::sys::fs::status(f, st))
        return false;
      if (st.getLastModificationTime() >= outTime)
        return false;
    }
  auto buffer = llvm::MemoryBuffer::getFile(output, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return false;
  return (*buffer)->getBuffer().contains("opdc-build:" + stamp + ";");
}

namespace {
/// Make's quoting: spaces and '#' escaped with '\', '$' doubled.
std::string makeQuote(const std::string &s) {
  std::string q;
  for (char c : s) {
    if (c == ' ' || c == '#')
      q += '\\';
    if (c == '$')
      q += '$';
    q += c;
  }
  return q;
}
} // namespace

bool writeDepfile(const std::string &path, const std::string &target,
                  const std::vector<std::string> &deps, std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    error = "cannot write dependency file '" + path + "': " + ec.message();
    return false;
  }
  os << makeQuote(target) << ":";
  for (const auto &d : deps)
    os << " \\\n  " << makeQuote(d);
  os << "\n";
  for (const auto &d : deps)
    os << "\n" << makeQuote(d) << ":\n";
  os.close();
  if (os.has_error()) {
    error =
        "cannot write dependency file '" + path + "': " + os.error().message();
    os.clear_error();
    return false;
  }
  return true;
}

} // namespace opdc
