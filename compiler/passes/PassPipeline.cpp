// PassPipeline.cpp - The pass registry and the loop that runs the pipeline.
// SPDX-License-Identifier: Apache-2.0
//
// The registry below is the one list of passes: their order is the order of
// the default pipeline (for the passes in it) and of --list-passes. Adding
// a pass is one line here plus its .h/.cpp pair and its test folder.
#include "passes/PassPipeline.h"

#include "passes/deriv/Adjoint.h"
#include "passes/deriv/AdjointLinear.h"
#include "passes/deriv/AdjointTape.h"
#include "passes/deriv/AdjointZeros.h"
#include "passes/deriv/Tangent.h"
#include "passes/kernels/Inline.h"
#include "passes/kernels/KernelDCE.h"
#include "passes/kernels/KernelZeros.h"
#include "passes/loops/Chain.h"
#include "passes/loops/CommAvoid.h"
#include "passes/loops/ExpandCG.h"
#include "passes/loops/Fuse.h"
#include "passes/loops/JoinChains.h"
#include "passes/loops/SplitReports.h"
#include "passes/loops/SwapCopyBack.h"
#include "passes/loops/UnrollShortLoops.h"
#include "passes/loops/UnrollSteps.h"

#include "ir/IRPrinter.h"
#include "ir/Verifier.h"
#include "support/Diagnostics.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>

namespace opdc {

namespace {
/// When a pass runs: its condition on the backend and the options, declared
/// beside it (nullptr: only when --passes names it).
using RunsWhen = bool (*)(const PipelineChoices &);
bool always(const PipelineChoices &) { return true; }
/// Loop fusion and what only serves it (-fno-fuse turns both off).
bool fusing(const PipelineChoices &c) { return c.fuse; }
/// Time loops unrolled for skewed sweeps: a backend that runs them, and
/// -funroll-steps=N of 2 or more (4 or more for the second unrolling).
bool unrollingBy2(const PipelineChoices &c) {
  return c.backend.skewedSweeps() && c.maxUnrollSteps >= 2;
}
/// Copies back turned into swaps: on every backend (a swap saves the copy's
/// pass everywhere), unless -fno-swap-copy-back.
bool swappingCopyBacks(const PipelineChoices &c) { return c.swapCopyBack; }
bool unrollingBy4(const PipelineChoices &c) {
  return c.backend.skewedSweeps() && c.maxUnrollSteps >= 4;
}

struct Registered {
  PassInfo info;
  RunsWhen when;
};

// In pipeline order, one line each.
const std::vector<Registered> &registry() {
  static const std::vector<Registered> passes = {
      {{"inline", "inline fn calls into kernels and fns", inlineCalls},
       nullptr},
      {{"swap-copy-back",
        "swap instead of copying a time loop's new state back, where the "
        "two dats agree outside the copy (checked at run time)",
        swapCopyBacks},
       swappingCopyBacks},
      {{"split-reports",
        "split time loops of stencil steps at their reports (runs of plain "
        "steps)",
        splitReports},
       unrollingBy2},
      {{"unroll-steps",
        "unroll time loops of stencil steps by two (one sweep for two steps)",
        unrollSteps},
       unrollingBy2},
      {{"tangent", "build the tangents of procs (forward mode)", buildTangents},
       always},
      {{"adjoint", "build the adjoints of procs (reverse mode)", buildAdjoints},
       always},
      {{"adjoint-zeros",
        "assign instead of zeroing then incrementing adjoints in reversed "
        "time loops",
        assignAdjointZeros},
       always},
      {{"kernel-dce",
        "drop dead kernel statements and the read arguments nothing reads",
        eliminateDeadKernelCode},
       always},
      {{"adjoint-linear",
        "reverse checkpointed time loops whose reverse steps read none of "
        "their state as plain loops (no snapshots; blocked in time later; "
        "scalar gradients from tangents)",
        lowerLinearSteps},
       always},
      {{"adjoint-tape",
        "tape only the values the reverse sweep reads (drop dead restores)",
        tapeOnlyWhatIsRead},
       always},
      {{"unroll-more-steps",
        "unroll those two-step loops further, to -funroll-steps=N steps a "
        "sweep (after the derivative passes copied them)",
        unrollMoreSteps},
       unrollingBy4},
      {{"expand-cg", "expand solve cg into loops and a while loop", expandCG},
       always},
      {{"unroll-short-loops",
        "unroll for loops of 2-4 iterations whose loops meet the next "
        "iteration's over one set (so that fuse sees across them)",
        unrollShortLoops},
       fusing},
      {{"join-chains",
        "move swaps, tape pops and reduction uses out from between loops",
        joinLoopChains},
       always},
      {{"chain", "report loop chains (-Rpass=chain); changes nothing",
        reportLoopChains},
       always},
      {{"fuse", "fuse neighbouring loops of a loop chain", fuseLoops}, fusing},
      {{"kernel-zeros",
        "increments of zeroed kernel variables as assignments where no "
        "result sees the sign of a zero (adjoint kernels)",
        dropSignedZeros},
       always},
      {{"comm-avoid",
        "group a chain's halo exchanges, compute beyond rank boundaries "
        "(--comm-avoid)",
        avoidCommunication},
       always},
  };
  return passes;
}

std::string knownPasses() {
  std::string list;
  for (const PassInfo &p : registeredPasses())
    list += (list.empty() ? "" : ", ") + std::string(p.name);
  return list;
}

} // namespace

const std::vector<PassInfo> &registeredPasses() {
  static const std::vector<PassInfo> infos = [] {
    std::vector<PassInfo> v;
    for (const Registered &r : registry())
      v.push_back(r.info);
    return v;
  }();
  return infos;
}

const PassInfo *findPass(const std::string &name) {
  for (const PassInfo &p : registeredPasses())
    if (name == p.name)
      return &p;
  return nullptr;
}

std::vector<const PassInfo *> defaultPipeline() {
  return declaredPipeline(PipelineChoices{});
}

std::vector<const PassInfo *>
declaredPipeline(const PipelineChoices &choices,
                 const std::optional<std::vector<const PassInfo *>> &named) {
  const std::vector<PassInfo> &infos = registeredPasses();
  auto registered = [&](const PassInfo *p) -> const Registered & {
    return registry()[size_t(p - infos.data())];
  };
  std::vector<const PassInfo *> passes;
  if (!named) {
    for (size_t i = 0; i < infos.size(); ++i)
      if (registry()[i].when && registry()[i].when(choices))
        passes.push_back(&infos[i]);
    return passes;
  }
  // --passes: as named, less the passes the options turn off (-fno-fuse,
  // -funroll-steps=1); passes run only when named stay.
  for (const PassInfo *p : *named)
    if (!registered(p).when || registered(p).when(choices))
      passes.push_back(p);
  return passes;
}

std::optional<std::vector<const PassInfo *>>
parsePassList(const std::string &list, std::string &error) {
  std::vector<const PassInfo *> passes;
  if (list.empty())
    return passes;
  size_t start = 0;
  while (true) {
    size_t comma = list.find(',', start);
    std::string name = list.substr(
        start, comma == std::string::npos ? std::string::npos : comma - start);
    const PassInfo *p = findPass(name);
    if (!p) {
      error = name.empty() ? "empty pass name in --passes='" + list + "'"
                           : "unknown pass '" + name + "' in --passes";
      error += "; known passes: " + knownPasses();
      return std::nullopt;
    }
    passes.push_back(p);
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return passes;
}

bool isPrintAfterName(const std::string &name, std::string &error) {
  if (name == "all" || findPass(name))
    return true;
  error = "unknown pass '" + name +
          "' for --print-after; known passes: " + knownPasses() + " (or 'all')";
  return false;
}

bool runPassPipeline(ir::Program &program, const PassPipelineOptions &options,
                     PassContext &ctx, llvm::raw_ostream &dump,
                     llvm::raw_ostream &report, const SourceManager *sm) {
  std::vector<const PassInfo *> passes =
      options.passes ? *options.passes : defaultPipeline();
  auto printAfter = [&](const char *name) {
    const auto &want = options.printAfter;
    return std::find(want.begin(), want.end(), "all") != want.end() ||
           std::find(want.begin(), want.end(), name) != want.end();
  };
  struct Timing {
    const char *name;
    double seconds;
  };
  std::vector<Timing> timings;
  bool ok = true;
  for (const PassInfo *pass : passes) {
    auto t0 = std::chrono::steady_clock::now();
    pass->run(program, ctx);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    timings.push_back({pass->name, seconds});
    if (ctx.diags.hasErrors()) {
      ok = false;
      break;
    }
    if (options.verifyEach) {
      std::string why;
      if (!verifyIR(program, why)) {
        if (!why.empty() && why.back() == '\n')
          why.pop_back();
        ctx.diags.internalError({}, "pass '" + std::string(pass->name) +
                                        "' produced invalid IR:\n" + why);
        ok = false;
        break;
      }
    }
    if (printAfter(pass->name)) {
      dump << "; *** IR after " << pass->name << " ***\n";
      printIR(program, dump, sm);
    }
  }
  if (options.timePasses) {
    double total = 0;
    for (const Timing &t : timings)
      total += t.seconds;
    report << "===-------------------------------------------------------===\n"
           << "                    opdc pass execution time\n"
           << "===-------------------------------------------------------===\n"
           << "  Wall time (s)   Pass\n";
    for (const Timing &t : timings)
      report << llvm::format("  %13.6f   ", t.seconds) << t.name << "\n";
    report << llvm::format("  %13.6f   ", total) << "total (" << timings.size()
           << (timings.size() == 1 ? " pass" : " passes") << ")\n";
  }
  if (options.stats) {
    report << "===-------------------------------------------------------===\n"
           << "                    opdc pass statistics\n"
           << "===-------------------------------------------------------===\n";
    if (ctx.stats.empty())
      report << "  (no counters: no pass changed anything)\n";
    ctx.stats.print(report);
  }
  return ok;
}

//===----------------------------------------------------------------------===//
// PassStatistics
//===----------------------------------------------------------------------===//

void PassStatistics::add(const std::string &pass, const std::string &name,
                         const std::string &description, int64_t n) {
  Counter &c = counters[{pass, name}];
  if (c.description.empty())
    c.description = description;
  c.value += n;
}

int64_t PassStatistics::get(const std::string &pass,
                            const std::string &name) const {
  auto it = counters.find({pass, name});
  return it == counters.end() ? 0 : it->second.value;
}

void PassStatistics::print(llvm::raw_ostream &os) const {
  for (const auto &[key, c] : counters)
    os << llvm::format("%8lld", static_cast<long long>(c.value)) << " "
       << key.first << " - " << c.description << "\n";
}

} // namespace opdc
