// main.cpp - The opdc driver: command line, stages, output, exit status.
// SPDX-License-Identifier: Apache-2.0
#include "driver/BuildCache.h"
#include "driver/BuildReuse.h"
#include "driver/CUDABuild.h"
#include "driver/Depfile.h"
#include "driver/Options.h"
#include "driver/Targets.h"
#include "driver/Toolchain.h"

#include "ast/ASTPrinter.h"
#include "codegen/llvm/LLVMCodeGen.h"
#include "frontend/Parser.h"
#include "ir/IRPrinter.h"
#include "lower/Lower.h"
#include "passes/PassPipeline.h"
#include "sema/Sema.h"
#include "support/Assert.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <chrono>
#include <optional>
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

enum ExitCode {
  ExitOk = 0,
  ExitUserError = 1,
  ExitUsage = 2,
  ExitInternalError = 70 // EX_SOFTWARE, as reportInternalError
};

/// --time-passes: the wall time of the driver's phases around the IR passes
/// (whose own report comes from the pass pipeline), printed once, before a
/// program that `opdc run` starts.
class PhaseTimes {
public:
  bool enabled = false;
  /// Ends the current phase as \p name; the next one starts now.
  void mark(const char *name) {
    auto now = std::chrono::steady_clock::now();
    if (enabled)
      phases.push_back(
          {name, std::chrono::duration<double>(now - start).count()});
    start = now;
  }
  void restart() { start = std::chrono::steady_clock::now(); }
  void print() {
    if (!enabled || phases.empty())
      return;
    double total = 0;
    auto &os = llvm::errs();
    os << "===-------------------------------------------------------===\n"
       << "                    opdc phase execution time\n"
       << "===-------------------------------------------------------===\n"
       << "  Wall time (s)   Phase\n";
    for (const auto &[name, seconds] : phases) {
      os << llvm::format("  %13.6f   ", seconds) << name << "\n";
      total += seconds;
    }
    os << llvm::format("  %13.6f   ", total) << "total\n";
    if (objectBytes)
      os << "  object size: " << *objectBytes << " bytes\n";
    phases.clear();
  }
  std::optional<uint64_t> objectBytes;

private:
  std::vector<std::pair<std::string, double>> phases;
  std::chrono::steady_clock::time_point start =
      std::chrono::steady_clock::now();
};
PhaseTimes phaseTimes;

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

/// A temporary directory removed with everything in it when done.
class TempDir {
public:
  bool create(const std::string &stem, std::string &error) {
    std::error_code ec =
        llvm::sys::fs::createUniqueDirectory("opdc-" + stem, dir);
    if (ec)
      error = "cannot create a temporary directory: " + ec.message();
    return !ec;
  }
  ~TempDir() {
    if (!dir.empty())
      llvm::sys::fs::remove_directories(dir);
  }
  std::string file(const std::string &name) const {
    llvm::SmallString<256> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }

private:
  llvm::SmallString<256> dir;
};

/// The input's name without directory and `.opd`: the default program name.
std::string programStem(const std::string &input) {
  return llvm::sys::path::stem(input).str();
}

/// Fails early, before compiling, when \p path cannot be created.
bool checkWritable(const std::string &path, DiagnosticEngine &diags) {
  std::string parent = llvm::sys::path::parent_path(path).str();
  if (parent.empty())
    parent = ".";
  std::error_code ec;
  if (!llvm::sys::fs::is_directory(parent))
    ec = std::make_error_code(std::errc::no_such_file_or_directory);
  else if (llvm::sys::fs::is_directory(path))
    ec = std::make_error_code(std::errc::is_a_directory);
  else
    ec = llvm::sys::fs::access(parent, llvm::sys::fs::AccessMode::Write);
  if (ec)
    diags.error({}, "cannot write output file '" + path + "': " + ec.message());
  return !ec;
}

bool writeObject(llvm::Module &module, llvm::TargetMachine &tm,
                 const std::string &path, DiagnosticEngine &diags) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    diags.error({}, "cannot open output file '" + path + "': " + ec.message());
    return false;
  }
  std::string error;
  if (!emitObjectFile(module, tm, os, error)) {
    diags.error({}, error);
    return false;
  }
  if (os.has_error()) {
    diags.error({}, "cannot write output file '" + path +
                        "': " + os.error().message());
    os.clear_error();
    return false;
  }
  return true;
}

/// Copies the linked program to its destination (replacing what is there,
/// even a program that is running) with the linker's permissions.
bool installProgram(const std::string &from, const std::string &to,
                    DiagnosticEngine &diags) {
  llvm::sys::fs::remove(to);
  std::error_code ec = llvm::sys::fs::copy_file(from, to);
  if (!ec) {
    auto perms = llvm::sys::fs::getPermissions(from);
    if (perms)
      ec = llvm::sys::fs::setPermissions(to, *perms);
  }
  if (ec)
    diags.error({}, "cannot write output file '" + to + "': " + ec.message());
  return !ec;
}

/// The file `opdc build` or --emit=obj writes.
std::string outputPath(const DriverOptions &opts) {
  if (!opts.output.empty())
    return opts.output;
  std::string stem = programStem(opts.input);
  bool object = opts.objectOnly || opts.emit == EmitKind::Obj;
  return object ? stem + ".o" : stem;
}

/// The CPU backend: LLVM IR, object, executable, or a run of it.
/// `opdc build` installs the linked program at \p dest; `opdc run` runs
/// it with the program's arguments and returns its status.
int installOrRun(const DriverOptions &opts, const std::string &exe,
                 const std::string &dest, DiagnosticEngine &diags,
                 BuildCache *cache) {
  if (cache) {
    std::string why;
    bool stored = cache->store(exe, why);
    if (opts.cacheStats)
      llvm::errs() << "opdc: build cache: miss, "
                   << (stored ? "stored as " + cache->key()
                              : "not stored: " + why)
                   << "\n";
  }
  phaseTimes.print();
  if (opts.command == Command::Build)
    return installProgram(exe, dest, diags) ? ExitOk : ExitUserError;
  llvm::outs().flush();
  llvm::errs().flush();
  std::string error;
  int status = runProgram(exe, opts.programArgs, error);
  if (status < 0) {
    diags.error({}, error);
    return ExitUserError;
  }
  return status;
}

int generate(const DriverOptions &opts, const ir::Program &program,
             DiagnosticEngine &diags, Output *out, const char *argv0,
             const CPUCodeGenOptions &cg, BuildCache *cache) {
  std::string error;
  auto tm = createCPUTargetMachine(cg, error);
  if (!tm) {
    diags.error({}, error);
    return ExitUserError;
  }
  llvm::LLVMContext context;
  // Names of instructions and arguments only help a reader of the IR; the
  // passes spend time keeping them unique (LCSSA, the inliner).
  context.setDiscardValueNames(opts.emit != EmitKind::LLVM);
  auto module = generateLLVMModule(program, context, *tm, cg, diags);
  if (!module || diags.hasErrors())
    return ExitUserError;
  phaseTimes.mark("LLVM IR generation");
  std::optional<VectorizationRemarks> remarks;
  if (diags.remarksEnabled("vectorize"))
    remarks.emplace(context);
  if (opts.emit == EmitKind::LLVM) {
    // -O0 shows the module as generated, before even the always-inliner.
    if (opts.optLevel > 0)
      optimizeModule(*module, *tm, opts.optLevel, opts.vecLibMvec);
    if (remarks)
      remarks->report(*module, opts.optLevel, diags);
    module->print(out->os(), nullptr);
    return ExitOk;
  }
  optimizeModule(*module, *tm, opts.optLevel, opts.vecLibMvec);
  phaseTimes.mark("LLVM optimisation");
  if (remarks)
    remarks->report(*module, opts.optLevel, diags);

  std::string stem = programStem(opts.input);
  if (opts.emit == EmitKind::Obj || opts.objectOnly)
    return writeObject(*module, *tm, outputPath(opts), diags) ? ExitOk
                                                              : ExitUserError;

  TempDir tmp;
  if (!tmp.create(stem, error)) {
    diags.error({}, error);
    return ExitUserError;
  }
  // The program's object in parts compiled in parallel (Target.cpp).
  std::vector<std::string> objects;
  unsigned parts = codeGenThreads(*module);
  for (unsigned i = 0; i < parts; ++i)
    objects.push_back(
        tmp.file(stem + (parts > 1 ? "." + std::to_string(i) : "") + ".o"));
  if (parts == 1 && !writeObject(*module, *tm, objects[0], diags))
    return ExitUserError;
  if (parts > 1 && !emitObjectFiles(*module, cg, objects, error)) {
    diags.error({}, error);
    return ExitUserError;
  }
  module.reset();
  phaseTimes.mark("code generation");
  phaseTimes.objectBytes = 0;
  for (const std::string &o : objects)
    if (uint64_t size = 0; !llvm::sys::fs::file_size(o, size))
      *phaseTimes.objectBytes += size;
  std::string exe = tmp.file(stem);
  std::string dest = opts.output.empty() ? stem : opts.output;
  if (!linkExecutable(argv0, objects, exe,
                      opts.command == Command::Build ? dest : stem, error,
                      opts.mpi, opts.vecLibMvec)) {
    diags.error({}, error);
    return ExitUserError;
  }
  phaseTimes.mark("link");
  return installOrRun(opts, exe, dest, diags, cache);
}

/// The CUDA backend (a GPU target, or --emit=cuda): the source, an object
/// (nvcc), an executable (linked with the runtime and the CUDA runtime), or
/// a run of it.
int generateCUDA(const DriverOptions &opts, const ir::Program &program,
                 DiagnosticEngine &diags, Output *out, const char *argv0,
                 const CUDACodeGenOptions &cg, BuildCache *cache) {
  std::string source;
  if (!generateCUDASource(program, cg, diags, source))
    return ExitUserError;
  phaseTimes.mark("CUDA source generation");
  if (opts.emit == EmitKind::CUDA) {
    out->os() << source;
    return ExitOk;
  }
  std::string error;
  std::string nvcc = findNvcc(error);
  if (nvcc.empty()) {
    diags.error({}, error);
    return ExitUserError;
  }
  std::string stem = programStem(opts.input);
  TempDir tmp;
  if (!tmp.create(stem, error)) {
    diags.error({}, error);
    return ExitUserError;
  }
  std::string cu = tmp.file(stem + ".cu"), object = tmp.file(stem + ".o");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(cu, ec);
    if (ec) {
      diags.error({}, "cannot write '" + cu + "': " + ec.message());
      return ExitUserError;
    }
    os << source;
  }
  if (opts.objectOnly)
    object = outputPath(opts);
  if (!compileCUDA(argv0, cu, object, cg, opts.optLevel, opts.fpContract,
                   error)) {
    diags.error({}, error);
    return ExitUserError;
  }
  phaseTimes.mark("nvcc");
  if (opts.objectOnly)
    return ExitOk;
  std::string exe = tmp.file(stem);
  std::string dest = opts.output.empty() ? stem : opts.output;
  // --mpi: the MPI runtime, which packs and unpacks the halos of device
  // copies through the hooks the program registers (opd_rt_device_hooks).
  if (!linkExecutable(argv0, std::vector<std::string>{object}, exe,
                      opts.command == Command::Build ? dest : stem, error,
                      opts.mpi, false, cudaLinkArgs(nvcc))) {
    diags.error({}, error);
    return ExitUserError;
  }
  phaseTimes.mark("link");
  return installOrRun(opts, exe, dest, diags, cache);
}

/// -MD: the output's dependency file (-MF, default OUTPUT.d).
int writeDepfileIfAsked(const DriverOptions &opts, const std::string &output,
                        const std::vector<std::string> &inputs,
                        DiagnosticEngine &diags) {
  if (!opts.writeDepfile)
    return ExitOk;
  std::string path = opts.depfile.empty() ? output + ".d" : opts.depfile;
  std::string error;
  if (!writeDepfile(path, output, inputs, error)) {
    diags.error({}, error);
    return ExitUserError;
  }
  return ExitOk;
}

/// The IR pass pipeline between lowering and code generation.
bool runPasses(const DriverOptions &opts, ir::Program &program,
               DiagnosticEngine &diags, const TargetProfile *target,
               const SourceManager &sm, bool cuda) {
  PassPipelineOptions po;
  std::optional<std::vector<const PassInfo *>> named;
  if (opts.passes) {
    std::string error;
    named = parsePassList(*opts.passes, error);
    OPDC_ASSERT(named, "--passes was checked by the command line parser");
  }
  // -funroll-steps=N for every block, or the defaults (PassContext).
  const unsigned steps =
      opts.unrollSteps ? opts.unrollSteps : DefaultUnrollSteps;
  const unsigned steps3D =
      opts.unrollSteps ? opts.unrollSteps : DefaultUnrollSteps3D;
  PipelineChoices choices;
  choices.backend = targetQueries(opts, cuda || isGPUTarget(target));
  choices.fuse = !opts.noFuse;
  choices.swapCopyBack = !opts.noSwapCopyBack;
  choices.maxUnrollSteps = std::max(steps, steps3D);
  po.passes = declaredPipeline(choices, named);
  po.printAfter = opts.printAfter;
  po.timePasses = opts.timePasses;
  po.stats = opts.stats;
  PassStatistics stats;
  PassContext ctx{diags, stats, target};
  ctx.mpi = opts.mpi;
  ctx.backend = choices.backend;
  ctx.unrollSteps = steps;
  ctx.unrollSteps3D = steps3D;
  const std::string ca =
      opts.commAvoid.empty() ? (opts.mpi ? "auto" : "off") : opts.commAvoid;
  ctx.commAvoid = ca == "on"     ? CommAvoidMode::On
                  : ca == "auto" ? CommAvoidMode::Auto
                                 : CommAvoidMode::Off;
  bool ok = runPassPipeline(program, po, ctx, llvm::errs(), llvm::errs(), &sm);
  return ok && !diags.hasErrors();
}

/// --list-passes: every pass, in pipeline order.
int listPasses() {
  std::vector<const PassInfo *> defaults = defaultPipeline();
  llvm::outs() << "IR passes, in pipeline order (* = in the default "
                  "pipeline):\n";
  for (const PassInfo &p : registeredPasses()) {
    bool inDefault =
        std::find(defaults.begin(), defaults.end(), &p) != defaults.end();
    llvm::outs() << (inDefault ? "  * " : "    ") << p.name;
    for (size_t n = std::string(p.name).size(); n < 20; ++n)
      llvm::outs() << ' ';
    llvm::outs() << p.summary << "\n";
  }
  return ExitOk;
}

/// The output of \p opts checked before anything is compiled: text goes
/// to -o or stdout (\p out); object files and programs are written by
/// generate(), which checks their paths first. False when reported.
bool openOutput(const DriverOptions &opts, DiagnosticEngine &diags,
                std::unique_ptr<Output> &out) {
  if (opts.command == Command::Compile && opts.emit != EmitKind::Obj) {
    out = std::make_unique<Output>(opts.output);
    if (!out->error.empty()) {
      diags.error({}, out->error);
      return false;
    }
  } else if (opts.command == Command::Build) {
    std::string dest = opts.output;
    if (dest.empty())
      dest = programStem(opts.input) + (opts.objectOnly ? ".o" : "");
    bool same = false;
    if (!llvm::sys::fs::equivalent(dest, opts.input, same) && same) {
      diags.error({}, "output file '" + dest +
                          "' would overwrite the input; "
                          "name the program with -o");
      return false;
    }
    if (!checkWritable(dest, diags))
      return false;
  } else if (opts.emit == EmitKind::Obj && !opts.output.empty()) {
    if (!checkWritable(opts.output, diags))
      return false;
  }
  return true;
}

/// What compileWith keeps of a build that makes a file or may be cached:
/// the output, its inputs and stamp (-MD, the up-to-date check), the cache.
struct BuildState {
  bool makesFile = false;
  std::string stamp, dest;
  std::vector<std::string> inputs;
  std::unique_ptr<BuildCache> cache;
};

/// An earlier build reused: the exit status when the output is up to date
/// or the build cache holds the program, else nothing (\p bs filled in for
/// the build that follows).
std::optional<int> reuseBuild(const DriverOptions &opts, const char *argv0,
                              DiagnosticEngine &diags,
                              const TargetProfile *target,
                              const std::string &stdlibDir,
                              unsigned firstProgramBuffer, BuildState &bs) {
  SourceManager &sm = diags.sources();
  // Make-style builds: nothing to do when the output is up to date.
  if (bs.makesFile) {
    bs.dest = outputPath(opts);
    bs.stamp = buildStamp(opts, target, stdlibDir);
    bs.inputs = buildInputs(programFiles(sm, firstProgramBuffer), target);
    // Remarks (-Rpass) come from code generation: asking for them builds.
    if (!opts.alwaysBuild && opts.remarks.empty() &&
        isUpToDate(bs.dest, bs.inputs, toolFiles(opts, argv0, target),
                   bs.stamp))
      return writeDepfileIfAsked(opts, bs.dest, bs.inputs, diags);
  }
  // The build cache: a program built before from the same inputs.
  bs.cache = openBuildCache(opts);
  BuildCache *cache = bs.cache.get();
  if (cache) {
    if (bs.stamp.empty())
      bs.stamp = buildStamp(opts, target, stdlibDir);
    addCacheKey(*cache, opts, argv0, bs.stamp, sm, firstProgramBuffer, target);
    bool corrupt = false;
    std::optional<std::string> entry;
    if (!opts.alwaysBuild)
      entry = cache->lookup(corrupt);
    if (opts.cacheStats && corrupt)
      llvm::errs() << "opdc: build cache: corrupt entry " << cache->key()
                   << " removed, rebuilding\n";
    if (entry) {
      if (opts.cacheStats)
        llvm::errs() << "opdc: build cache: hit " << cache->key() << "\n";
      if (opts.command == Command::Run) {
        llvm::outs().flush();
        std::string error;
        int status = runProgram(*entry, opts.programArgs, error);
        if (status < 0) {
          diags.error({}, error);
          return ExitUserError;
        }
        return status;
      }
      std::string error;
      if (!cache->extract(*entry, bs.dest, error)) {
        diags.error({}, error);
        return ExitUserError;
      }
      return writeDepfileIfAsked(opts, bs.dest, bs.inputs, diags);
    }
  }
  return std::nullopt;
}

int compileWith(const DriverOptions &opts, const char *argv0,
                DiagnosticEngine &diags) {
  phaseTimes.enabled = opts.timePasses;
  phaseTimes.restart();
  SourceManager &sm = diags.sources();
  diags.setWarningsAsErrors(opts.warningsAsErrors);
  diags.setErrorLimit(opts.errorLimit);
  diags.setJSON(opts.diagnosticsJSON);
  for (auto &w : opts.disabledWarnings)
    diags.disableWarning(w);
  for (auto &r : opts.remarks)
    diags.enableRemarks(r);

  std::unique_ptr<Output> out;
  if (!openOutput(opts, diags, out))
    return ExitUserError;

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
      printModule(*module, out->os(), &sm);
    return ExitOk;
  }

  bool profileOk = true;
  auto profile = loadDriverTarget(opts, argv0, diags, profileOk);
  if (!profileOk)
    return ExitUserError;
  const TargetProfile *target = profile ? &*profile : nullptr;
  if (target && (opts.command == Command::Run ||
                 (opts.command == Command::Build && !opts.objectOnly))) {
    std::string error;
    if (!canLinkHere(*target, error)) {
      diags.error({}, error);
      return ExitUserError;
    }
  }
  unsigned firstProgramBuffer = sm.llvm().getNumBuffers() + 1;

  FrontendOptions fe;
  fe.importPaths = opts.importPaths;
  fe.stdlibDir =
      opts.stdlibDir.empty() ? defaultStdlibDir(argv0) : opts.stdlibDir;
  auto program = loadProgram(opts.input, sm, diags, fe);
  if (!program || diags.hasErrors())
    return ExitUserError;

  // An earlier build reused: the output up to date, or the build cache's.
  BuildState bs;
  bs.makesFile =
      opts.command == Command::Build ||
      (opts.command == Command::Compile && opts.emit == EmitKind::Obj);
  if (std::optional<int> status = reuseBuild(
          opts, argv0, diags, target, fe.stdlibDir, firstProgramBuffer, bs))
    return *status;
  if (!analyzeProgram(*program, diags) || diags.hasErrors())
    return ExitUserError;
  if (opts.emit == EmitKind::AST) {
    printProgram(*program, out->os(), &sm);
    return ExitOk;
  }
  // --check (and no --emit) stops before code generation but after the
  // passes: the derivative passes reject programs (an adjoint wrt a dat
  // the proc never reads, of a proc that prints) that sema accepts, and
  // --check must reject whatever build rejects.
  const bool checkOnly = opts.command == Command::Compile &&
                         (opts.checkOnly || opts.emit == EmitKind::None);

  auto ir = lowerProgram(*program, diags);
  if (!ir || diags.hasErrors())
    return ExitUserError;
  phaseTimes.mark("front end");
  const bool cuda = opts.emit == EmitKind::CUDA ||
                    (isGPUTarget(target) && opts.emit == EmitKind::None &&
                     opts.command != Command::Compile);
  if (!runPasses(opts, *ir, diags, target, sm, cuda))
    return ExitUserError;
  phaseTimes.mark("IR passes (each above)");
  if (checkOnly)
    return ExitOk;
  if (opts.emit == EmitKind::IR) {
    printIR(*ir, out->os(), &sm);
    return ExitOk;
  }
  if (cuda) {
    warnCPUOnlyOptions(opts, target, diags);
    CUDACodeGenOptions ccg = cudaCodeGenOptions(opts, target);
    ccg.buildStamp = bs.stamp;
    int status =
        generateCUDA(opts, *ir, diags, out.get(), argv0, ccg, bs.cache.get());
    if (status != ExitOk || !bs.makesFile)
      return status;
    return writeDepfileIfAsked(opts, bs.dest, bs.inputs, diags);
  }
  warnCUDAOnlyOptions(opts, diags);
  CPUCodeGenOptions cg = cpuCodeGenOptions(opts, target, diags);
  cg.buildStamp = bs.stamp;
  if (diags.hasErrors())
    return ExitUserError;
  int status = generate(opts, *ir, diags, out.get(), argv0, cg, bs.cache.get());
  if (status != ExitOk || !bs.makesFile)
    return status;
  return writeDepfileIfAsked(opts, bs.dest, bs.inputs, diags);
}

/// compileWith, whose internal errors (an opdc bug reported as a diagnostic
/// rather than an assertion) exit 70 like the assertions do.
int compile(const DriverOptions &opts, const char *argv0) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  const int status = compileWith(opts, argv0, diags);
  return diags.hasInternalErrors() ? ExitInternalError : status;
}

/// `opdc link OBJECT... -o PROGRAM`: the objects of `opdc build -c` and
/// the runtime, linked by the same toolchain `opdc build` uses.
int linkCommand(const DriverOptions &opts, const char *argv0) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  for (const auto &o : opts.linkInputs)
    if (!llvm::sys::fs::exists(o)) {
      diags.error({}, "no such object file '" + o + "'");
      return ExitUserError;
    }
  if (!checkWritable(opts.output, diags))
    return ExitUserError;
  std::string error;
  TempDir tmp;
  if (!tmp.create(programStem(opts.output), error)) {
    diags.error({}, error);
    return ExitUserError;
  }
  std::string exe = tmp.file(programStem(opts.output));
  // Objects of `opdc build -c --target=<GPU profile>` need the CUDA runtime.
  std::vector<std::string> extra;
  if (!opts.target.empty()) {
    bool ok = true;
    auto profile = loadDriverTarget(opts, argv0, diags, ok);
    if (!ok)
      return ExitUserError;
    if (isGPUTarget(profile ? &*profile : nullptr)) {
      std::string nvcc = findNvcc(error);
      if (nvcc.empty()) {
        diags.error({}, error);
        return ExitUserError;
      }
      extra = cudaLinkArgs(nvcc);
    }
  }
  if (!linkExecutable(argv0, opts.linkInputs, exe, opts.output, error, opts.mpi,
                      opts.vecLibMvec, extra)) {
    diags.error({}, error);
    return ExitUserError;
  }
  return installProgram(exe, opts.output, diags) ? ExitOk : ExitUserError;
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
  if (opts->listPasses)
    return listPasses();
  if (!opts->printTarget.empty())
    return printTarget(*opts, argv[0]);
  if (opts->command == Command::Link)
    return linkCommand(*opts, argv[0]);
  int status = compile(*opts, argv[0]);
  phaseTimes.print();
  return status;
}
