// main.cpp - The opdc driver: command line, stages, output, exit status.
// SPDX-License-Identifier: Apache-2.0
#include "driver/Options.h"

#include "ast/ASTPrinter.h"
#include "frontend/Parser.h"
#include "ir/IRPrinter.h"
#include "lower/Lower.h"
#include "sema/Sema.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

#ifndef OPDC_VERSION
#define OPDC_VERSION "0.0.0"
#endif
#ifndef OPDC_DEFAULT_STDLIB_DIR
#define OPDC_DEFAULT_STDLIB_DIR ""
#endif

using namespace opdc;

namespace {

enum ExitCode { ExitOk = 0, ExitUserError = 1, ExitUsage = 2 };

/// The stdlib next to an installed compiler (<prefix>/share/opdc/stdlib),
/// else the source tree's (a build-tree compiler).
std::string defaultStdlibDir(const char *argv0) {
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&defaultStdlibDir));
  if (!exe.empty()) {
    llvm::SmallString<256> dir(llvm::sys::path::parent_path(exe));
    llvm::sys::path::append(dir, "..", "share", "opdc", "stdlib");
    if (llvm::sys::fs::is_directory(dir))
      return std::string(dir);
  }
  return OPDC_DEFAULT_STDLIB_DIR;
}

/// Writes to -o FILE or stdout; reports a file that cannot be opened.
class Output {
public:
  explicit Output(const std::string &path) {
    if (path.empty() || path == "-")
      return;
    std::error_code ec;
    file = std::make_unique<llvm::raw_fd_ostream>(path, ec);
    if (ec) {
      error = "cannot open output file '" + path + "': " + ec.message();
      file.reset();
    }
  }
  llvm::raw_ostream &os() { return file ? *file : llvm::outs(); }
  std::string error;

private:
  std::unique_ptr<llvm::raw_fd_ostream> file;
};

int compile(const DriverOptions &opts, const char *argv0) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  diags.setWarningsAsErrors(opts.warningsAsErrors);
  diags.setErrorLimit(opts.errorLimit);
  for (auto &w : opts.disabledWarnings)
    diags.disableWarning(w);

  Output out(opts.output);
  if (!out.error.empty()) {
    diags.error({}, out.error);
    return ExitUserError;
  }

  if (opts.syntaxOnly) {
    std::string why;
    auto id = sm.loadFile(opts.input, why);
    if (!id) {
      diags.error({}, "cannot read '" + opts.input + "': " + why);
      return ExitUserError;
    }
    auto module = parseModule(sm, *id, diags);
    if (diags.hasErrors())
      return ExitUserError;
    if (opts.emit == EmitKind::AST)
      printModule(*module, out.os(), &sm);
    return ExitOk;
  }

  FrontendOptions fe;
  fe.importPaths = opts.importPaths;
  fe.stdlibDir =
      opts.stdlibDir.empty() ? defaultStdlibDir(argv0) : opts.stdlibDir;
  auto program = loadProgram(opts.input, sm, diags, fe);
  if (!program || diags.hasErrors())
    return ExitUserError;
  if (!analyzeProgram(*program, diags) || diags.hasErrors())
    return ExitUserError;
  if (opts.emit == EmitKind::AST) {
    printProgram(*program, out.os(), &sm);
    return ExitOk;
  }
  if (opts.checkOnly || opts.emit == EmitKind::None)
    return ExitOk;

  auto ir = lowerProgram(*program, diags);
  if (!ir || diags.hasErrors())
    return ExitUserError;
  printIR(*ir, out.os(), &sm);
  return ExitOk;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string error;
  auto opts = parseCommandLine(args, error);
  if (!opts) {
    llvm::errs() << "opdc: error: " << error << "\n";
    return ExitUsage;
  }
  if (opts->showHelp) {
    llvm::outs() << helpText();
    return ExitOk;
  }
  if (opts->showVersion) {
    llvm::outs() << "opdc " << OPDC_VERSION << " (LLVM " << LLVM_VERSION_STRING
                 << ")\n";
    return ExitOk;
  }
  return compile(*opts, argv[0]);
}
