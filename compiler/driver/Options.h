// Options.h - The opdc command line.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_DRIVER_OPTIONS_H
#define OPDC_DRIVER_OPTIONS_H

#include <optional>
#include <string>
#include <vector>

namespace opdc {

/// What the driver prints (--emit).
enum class EmitKind { None, AST, IR, LLVM, Obj, CUDA };

/// The subcommand: none (check and print a stage), `build`, `run`, or
/// `link` (objects from `build -c` + the runtime -> a program).
enum class Command { Compile, Build, Run, Link };

struct DriverOptions {
  Command command = Command::Compile;
  std::string input;  ///< the .opd file
  std::string output; ///< -o; empty: the default for the mode
  EmitKind emit = EmitKind::None;
  bool checkOnly = false;  ///< --check
  bool syntaxOnly = false; ///< --syntax-only
  bool showHelp = false;
  bool showVersion = false;
  bool warningsAsErrors = false;             ///< -Werror
  std::vector<std::string> disabledWarnings; ///< -Wno-NAME
  std::vector<std::string> remarks;          ///< -Rpass=NAME
  std::vector<std::string> importPaths;      ///< -I
  std::string stdlibDir;                     ///< --stdlib-dir; empty: default
  unsigned errorLimit = 50;                  ///< --error-limit
  bool diagnosticsJSON = false;              ///< --diagnostics-format=json
  // Code generation (build, run, --emit=llvm|obj):
  unsigned optLevel = 3;   ///< -O0 .. -O3
  bool objectOnly = false; ///< build -c: stop after the object
  std::string cpu;         ///< -march=CPU; empty: not given
  bool fpContract = false; ///< -ffp-contract=fast
  bool vecLibMvec = false; ///< -fveclib=libmvec
  /// -fgathers=auto|hardware|scalar; empty: the profile's
  /// backend.cpu.gathers, else auto (Targets.cpp, codegen/llvm/Target.cpp).
  std::string gathers;
  bool mpi = false;      ///< --mpi: link the MPI runtime (opd_rt_mpi)
  std::string commAvoid; ///< --comm-avoid=auto|on|off; empty: auto with --mpi
  std::string
      cudaIndirect; ///< --cuda-indirect=atomics|colouring; empty: profile
  std::vector<std::string> programArgs; ///< run: the arguments after --
  // Targets and make-style builds (driver/Targets.cpp, driver/Depfile.cpp):
  std::string target;                  ///< --target=NAME|FILE; empty: host
  std::vector<std::string> targetDirs; ///< --target-dir=DIR (searched first)
  std::string printTarget;             ///< --print-target=NAME|FILE
  bool writeDepfile = false;           ///< -MD
  std::string depfile;                 ///< -MF FILE; empty: OUTPUT.d
  bool alwaysBuild = false;            ///< -B: rebuild even if up to date
  bool noCache = false;    ///< --no-cache: neither read nor fill the cache
  bool cacheStats = false; ///< --cache-stats: say whether the cache hit
  std::vector<std::string> linkInputs; ///< link: the object files
  // The IR pass pipeline (compiler/passes/PassPipeline.h):
  std::optional<std::string> passes;   ///< --passes=LIST; none: the default
  std::vector<std::string> printAfter; ///< --print-after=NAME|all
  bool verifyEach = false;             ///< --verify-each
  bool timePasses = false;             ///< --time-passes
  bool stats = false;                  ///< --stats
  bool listPasses = false;             ///< --list-passes
  bool noFuse = false;                 ///< -fno-fuse: drop the fuse pass
  bool noSkew = false; ///< -fno-skew: the fuse pass makes no skewed groups
  /// -fno-swap-copy-back: time loops that copy their state back keep the
  /// copy (passes/loops/SwapCopyBack.cpp)
  bool noSwapCopyBack = false;
  /// -funroll-steps=N: steps of a time loop of stencil steps run in one
  /// sweep (1: -fno-unroll-steps, none unrolled; the adjoint reverses two
  /// at a time whenever N >= 2)
  /// -funroll-steps=N; 0: the default, 4 steps a sweep (8 over 3D blocks).
  unsigned unrollSteps = 0;
  bool reproSum = false; ///< -frepro-sum: float sums exact, rounded once
  bool sumLanes = true;  ///< -fno-sum-lanes: float sums in element order
  bool rowTails = true;  ///< -fno-row-tails: the vectoriser's scalar remainders
  /// -fno-column-tables: block loops compute their kernels' column values
  /// (analysis/ColumnValues.h) at every point instead of once per column.
  bool columnTables = true;
  /// -fno-transpose-rows: strips read rows through maps lane by lane.
  bool transposeRows = true;
  /// -fno-scalar-bodies: no scalar body beside the vectorised one for loops
  /// whose kernels branch around costly work (analysis/BranchWork.h).
  bool scalarBodies = true;
};

/// Parses argv. On a bad command line returns nullopt and sets \p error to
/// a one-line explanation naming the offending argument and the fix.
std::optional<DriverOptions>
parseCommandLine(const std::vector<std::string> &args, std::string &error);

/// The --help text.
const char *helpText();

} // namespace opdc
#endif
