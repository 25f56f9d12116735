// PassPipeline.h - The ordered list of IR passes between lowering and codegen.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_PASSPIPELINE_H
#define OPDC_PASSES_PASSPIPELINE_H

#include "passes/Pass.h"

#include <optional>
#include <string>
#include <vector>

namespace opdc {
class SourceManager;

/// How the driver runs the pipeline (--passes, --print-after, --verify-each,
/// --time-passes, --stats).
struct PassPipelineOptions {
  /// Passes to run, in this order; nullopt: the default pipeline.
  std::optional<std::vector<const PassInfo *>> passes;
  /// Print the IR after these passes ("all": after every pass).
  std::vector<std::string> printAfter;
  /// Run the IR verifier after every pass. On by default and in every
  /// driver build: it costs a few milliseconds a build (docs/decisions/
  /// 0200-verify-after-every-pass.md), and a pass that breaks the IR must
  /// stop the build as an internal error (exit 70), never miscompile.
  bool verifyEach = true;
  /// Print each pass's wall time when the pipeline ends.
  bool timePasses = false;
  /// Print the passes' counters when the pipeline ends.
  bool stats = false;
};

/// Every pass opdc has, in the order the default pipeline would run them.
const std::vector<PassInfo> &registeredPasses();
/// The registered pass named \p name, or null.
const PassInfo *findPass(const std::string &name);
/// What decides which passes run: the backend's answers and the options
/// that turn passes off. Each registered pass declares its condition on
/// these beside it (PassPipeline.cpp), so that each backend's pipeline is
/// declared in one place and the driver edits no list.
struct PipelineChoices {
  TargetQueries backend = TargetQueries();
  bool fuse = true; ///< not -fno-fuse
  bool swapCopyBack = true; ///< not -fno-swap-copy-back
  /// The larger of the steps a skewed sweep runs over 1D/2D and 3D blocks
  /// (-funroll-steps=N, PassContext::unrollSteps).
  unsigned maxUnrollSteps = DefaultUnrollSteps3D;
};

/// The passes run for \p choices: the registered passes whose conditions
/// hold, in registry order, or, with --passes (\p named), the named passes
/// in their order less those the choices turn off.
std::vector<const PassInfo *> declaredPipeline(
    const PipelineChoices &choices,
    const std::optional<std::vector<const PassInfo *>> &named = std::nullopt);
/// The CPU backend's pipeline with the default options (--list-passes).
std::vector<const PassInfo *> defaultPipeline();

/// Parses a --passes value: pass names separated by commas, run in the order
/// given; an empty string is the empty pipeline. On an unknown or empty name
/// returns nullopt with \p error naming it and listing the known passes.
std::optional<std::vector<const PassInfo *>>
parsePassList(const std::string &list, std::string &error);
/// Checks a --print-after value: a registered pass or "all".
bool isPrintAfterName(const std::string &name, std::string &error);

/// Runs the pipeline over \p program. IR printed by --print-after goes to
/// \p dump, preceded by `; *** IR after NAME ***`; timings and statistics go
/// to \p report. Returns false when a pass reported an error (the pipeline
/// stops there) or when the verifier rejects the IR after a pass (reported
/// as an internal compiler error naming the pass).
bool runPassPipeline(ir::Program &program, const PassPipelineOptions &options,
                     PassContext &ctx, llvm::raw_ostream &dump,
                     llvm::raw_ostream &report, const SourceManager *sm);

} // namespace opdc
#endif
