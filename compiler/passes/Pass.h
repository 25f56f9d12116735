// Pass.h - What every Program IR pass sees: its context and its statistics.
// SPDX-License-Identifier: Apache-2.0
//
// A pass rewrites the Program IR into Program IR (never code): new kernels,
// dats, loops and host statements that the backends compile like any
// others. Each pass lives in one .h/.cpp pair of this folder, exposes one
// entry point of the PassFn shape and is listed once, in pipeline order, in
// PassPipeline.cpp. Its kebab-case name is used everywhere: --passes,
// --print-after, -Rpass=NAME remarks, --stats counters and its test folder
// tests/lit/passes/NAME/.
#ifndef OPDC_PASSES_PASS_H
#define OPDC_PASSES_PASS_H

#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace opdc {
class DiagnosticEngine;
struct TargetProfile;
namespace ir {
struct Function;
struct Program;
} // namespace ir

/// Named counters the passes bump (calls inlined, loops fused, ...), printed
/// by --stats. Every counter has a description fixed by its first use.
class PassStatistics {
public:
  /// Adds \p n to counter \p name of pass \p pass.
  void add(const std::string &pass, const std::string &name,
           const std::string &description, int64_t n = 1);
  /// The counter's value (0 when never bumped).
  int64_t get(const std::string &pass, const std::string &name) const;
  /// LLVM's -stats layout, sorted by pass then counter:
  ///   `      3 inline - calls inlined`
  void print(llvm::raw_ostream &os) const;
  bool empty() const { return counters.empty(); }

private:
  struct Counter {
    int64_t value = 0;
    std::string description;
  };
  std::map<std::pair<std::string, std::string>, Counter> counters;
};

/// --comm-avoid: whether the comm-avoid pass plans chains, and whether
/// the runtime then decides by its cost model (Auto) or must run them so.
enum class CommAvoidMode : uint8_t { Off, Auto, On };

/// Steps a skewed sweep runs without -funroll-steps=N (PassContext): over
/// 1D and 2D blocks, and over 3D blocks. Eight in 2D too since the 2D
/// sweeps measured faster at eight than four (docs/performance.md, "Eight
/// steps a sweep in 2D"), also under --mpi, where comm-avoid groups a
/// sweep's halos as deep as its steps need (passes/loops/CommAvoid.cpp).
inline constexpr unsigned DefaultUnrollSteps = 8, DefaultUnrollSteps3D = 8;

/// The backend that compiles the IR after the passes.
enum class Backend : uint8_t { CPU, CUDA };

/// What the code-generation options ask of the backend (the command line:
/// -O, -fno-skew, -fno-scalar-bodies, -fno-sum-lanes).
struct TargetRequest {
  Backend backend = Backend::CPU;
  unsigned optLevel = 3;
  bool skew = true;
  bool scalarBodies = true;
  bool sumLanes = true;
};

/// The target as the passes see it: what the backend that will compile the
/// IR does, asked through these queries only. One object answers for the
/// whole compilation, and the driver fills the CPU backend's options from
/// the same answers (driver/Targets.cpp), so that each fact has one
/// condition. Default-constructed: the CPU backend with skewed sweeps and
/// neither scalar bodies nor sum lanes (the passes' unit tests).
class TargetQueries {
public:
  TargetQueries() = default;
  explicit TargetQueries(const TargetRequest &r)
      : backend_(r.backend), skew_(r.skew && r.backend == Backend::CPU),
        scalarBodies_(r.scalarBodies && r.optLevel >= 2 &&
                      r.backend == Backend::CPU),
        sumLanes_(r.sumLanes && r.backend == Backend::CPU),
        fuseIncrements_(r.backend == Backend::CUDA),
        stencilChainReach_(r.backend == Backend::CUDA ? MaxChainReach : 0) {}

  Backend backend() const { return backend_; }
  /// Runs a skewed group of loops as one sweep (passes/loops/Fuse.cpp makes
  /// them, passes/loops/UnrollSteps.cpp unrolls time loops for them): the CPU
  /// backend unless -fno-skew; the CUDA backend runs a group's loops one by
  /// one and gets none.
  bool skewedSweeps() const { return skew_; }
  /// Gives a loop whose kernel branches around costly work a second,
  /// scalar body chosen by timing (analysis/BranchWork.h,
  /// codegen/llvm/LoopHost.cpp): the CPU backend at -O2 and up unless
  /// -fno-scalar-bodies. The fuse pass then keeps such a loop apart from
  /// one without (one fused body would serve both).
  bool scalarBodies() const { return scalarBodies_; }
  /// Splits float sums into 4 partial sums a row written out in the IR
  /// (-fsum-lanes, the default; codegen/llvm/LoopBody.cpp "Float sums"),
  /// at every -O (the sums' bits must not depend on -O): the CPU backend.
  /// Such a loop is vectorised by the SLP vectoriser only, so the fuse pass
  /// keeps a summing loop apart from one that reads through maps (rule 7
  /// of passes/loops/Fuse.cpp).
  bool sumLanes() const { return sumLanes_; }
  /// Lets a loop with increments through maps join a group of loops the
  /// fuse pass fuses at the element (rule 1 of passes/loops/Fuse.cpp), when
  /// no other loop of the group reaches a dat it increments: the CUDA
  /// backend, where each loop is a launch and its elements run in any
  /// order anyway (atomics, or the colours of the increments' plan). The
  /// CPU backend runs such a loop in a colouring plan whose order would
  /// then be the fused partners' too; unmeasured, it keeps them apart
  /// (decision 0400).
  bool fuseIncrements() const { return fuseIncrements_; }
  /// Stencil chains in one kernel (passes/loops/FuseTile.cpp): the
  /// deepest offset, in points per dimension, at which a loop over a 2-D or
  /// 3-D block may read what the loop before it wrote when the two become
  /// one kernel in which each thread block recomputes the first loop over
  /// its tile plus that reach into shared memory (docs/decisions/0485).
  /// The CUDA backend, which has no other way to keep such values on chip;
  /// 0 (none) for the CPU backend, whose skewed sweeps keep them in cache.
  unsigned stencilChainReach() const { return stencilChainReach_; }
  /// The tile of points one thread block of such a kernel computes the
  /// second loop over (x first), and the shared memory its first loop's
  /// values over the tile plus the reach may take: static shared memory,
  /// at most 48 KiB a block. Unmeasured (no GPU was lent): 32 x 32 in 2-D
  /// recomputes 13 % of the first loop at reach 1; 32 x 8 x 8 in 3-D 66 %.
  static constexpr unsigned ChainTile2D[2] = {32, 32};
  static constexpr unsigned ChainTile3D[3] = {32, 8, 8};
  static constexpr unsigned ChainSharedBytes = 48 * 1024;
  /// The reach limit of the CUDA backend (stencilChainReach).
  static constexpr unsigned MaxChainReach = 2;

private:
  Backend backend_ = Backend::CPU;
  bool skew_ = true, scalarBodies_ = false, sumLanes_ = false,
       fuseIncrements_ = false;
  unsigned stencilChainReach_ = 0;
};

/// What a pass may use besides the IR it rewrites.
struct PassContext {
  /// Errors (a derivative that cannot be built), warnings and remarks
  /// (-Rpass=NAME), located in the .opd source.
  DiagnosticEngine &diags;
  PassStatistics &stats;
  /// The target profile (cost models), or null when compiling for the host
  /// without --target.
  const TargetProfile *target = nullptr;
  /// --comm-avoid (default: auto with --mpi, else off).
  CommAvoidMode commAvoid = CommAvoidMode::Off;
  /// --mpi: the program runs on several ranks (halo exchanges between
  /// loops).
  bool mpi = false;
  /// The backend's answers (skewed sweeps, scalar bodies, sum lanes).
  TargetQueries backend = TargetQueries();
  /// -funroll-steps=N: the steps of a time loop of stencil steps one skewed
  /// sweep runs (passes/loops/UnrollSteps.cpp: two before the derivative
  /// passes, doubled after them up to N), for loops over 1D and 2D blocks and
  /// for loops over 3D blocks (default 4 and 8: a 3D sweep runs in tiles of
  /// dimension 1 whose planes stay in L2 however deep, lib/exec/Skew.cpp).
  unsigned unrollSteps = DefaultUnrollSteps,
           unrollSteps3D = DefaultUnrollSteps3D;
};

/// A pass's entry point: rewrites \p program, returns true when it changed
/// anything. User-facing problems go to ctx.diags; the pipeline stops after
/// a pass that reported an error.
using PassFn = bool (*)(ir::Program &program, PassContext &ctx);

/// One registered pass.
struct PassInfo {
  const char *name;    ///< kebab-case, e.g. "inline"
  const char *summary; ///< one line for --list-passes
  PassFn run;
};

} // namespace opdc
#endif
