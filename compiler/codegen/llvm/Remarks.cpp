// Remarks.cpp - Per-loop vectorisation remarks (-Rpass=vectorize).
// SPDX-License-Identifier: Apache-2.0
//
// Users tune stencil and mesh loops by whether their element loop runs in
// SIMD lanes, so opdc reports that per `loop` statement, at its source
// location, the way clang's -Rpass=loop-vectorize does per C loop:
//
//   poisson.opd:88:5: remark: loop 'jacobi' vectorized (width 4, interleaved 2)
//   poisson.opd:94:7: remark: loop 'residual' not vectorized: ...
//
// LoopCodeGen tags every body function with `!opd.loop` metadata (kernel
// name, buffer, line, column of the loop statement), which survives
// optimisation. While the pipeline runs, a DiagnosticHandler collects the
// loop vectoriser's passed/missed/analysis remarks per function; afterwards
// each tagged body gets one remark: "vectorized" when any loop in it was
// (a body with indirect increments has a vectorised compute strip and a
// scalar in-order apply loop), otherwise the vectoriser's first reason.
#include "codegen/llvm/KernelCodeGen.h"
#include "codegen/llvm/LLVMCodeGen.h"

#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>

namespace opdc {

namespace {

struct Outcome {
  std::string vectorized; ///< the passed remark's message, if any
  std::string reason;     ///< the first analysis or missed message
};

/// The loop vectoriser's remarks, grouped by function name.
class VectorizeHandler : public llvm::DiagnosticHandler {
public:
  explicit VectorizeHandler(std::map<std::string, Outcome> &out)
      : outcomes(out) {}

  bool isAnalysisRemarkEnabled(llvm::StringRef pass) const override {
    return pass == "loop-vectorize";
  }
  bool isMissedOptRemarkEnabled(llvm::StringRef pass) const override {
    return pass == "loop-vectorize";
  }
  bool isPassedOptRemarkEnabled(llvm::StringRef pass) const override {
    return pass == "loop-vectorize";
  }
  bool isAnyRemarkEnabled() const override { return true; }

  bool handleDiagnostics(const llvm::DiagnosticInfo &info) override {
    auto *r = llvm::dyn_cast<llvm::DiagnosticInfoOptimizationBase>(&info);
    if (!r)
      return false;
    if (r->getPassName() != "loop-vectorize")
      return true; // other passes' remarks: not asked for
    const auto *ir = llvm::dyn_cast<llvm::DiagnosticInfoIROptimization>(r);
    if (!ir)
      return true;
    // The only loops opdc keeps scalar on purpose are the peeled prologues
    // of aligned rows (LoopBody.cpp); their element loop reports itself.
    if (r->getRemarkName() == "MissedExplicitlyDisabled")
      return true;
    Outcome &o = outcomes[ir->getFunction().getName().str()];
    std::string msg = r->getMsg();
    if (info.getKind() == llvm::DK_OptimizationRemark)
      o.vectorized = msg;
    else if (o.reason.empty() || isVague(o.reason))
      o.reason = msg;
    return true;
  }

  /// Reasons that say nothing about the element loop: the generic missed
  /// remark, and the one LLVM gives for the loops around it (a block
  /// loop's rows, the chunk loop), which are not innermost. Any other
  /// reason, from the element loop itself, replaces them.
  static bool isVague(llvm::StringRef reason) {
    return reason == "loop not vectorized" ||
           reason.contains("control flow is not understood");
  }

private:
  std::map<std::string, Outcome> &outcomes;
};

/// The number after \p key in \p msg ("vectorization width: 4"), or "".
std::string field(const std::string &msg, const std::string &key) {
  size_t at = msg.find(key);
  if (at == std::string::npos)
    return "";
  size_t b = at + key.size(), e = b;
  while (e < msg.size() && std::isdigit(static_cast<unsigned char>(msg[e])))
    ++e;
  return msg.substr(b, e - b);
}

/// "vectorized loop (vectorization width: 4, interleaved count: 2)" ->
/// "vectorized (width 4, interleaved 2)".
std::string describeVectorized(const std::string &msg) {
  std::string w = field(msg, "vectorization width: ");
  std::string ic = field(msg, "interleaved count: ");
  std::string out = "vectorized";
  if (!w.empty()) {
    out += " (width " + w;
    if (!ic.empty() && ic != "1")
      out += ", interleaved " + ic;
    out += ")";
  }
  return out;
}

std::string describeMissed(const std::string &reason, unsigned optLevel) {
  if (optLevel < 2)
    return "not vectorized: the loop vectoriser runs from -O2 up";
  if (reason.empty())
    return "not vectorized: no vectorisable element loop";
  // Only the loops around the element loop reported: the element loop was
  // removed (a loop of one element) or never reached the vectoriser.
  if (llvm::StringRef(reason).contains("control flow is not understood"))
    return "not vectorized: its element loop did not reach LLVM's loop "
           "vectoriser in a form it handles (the remark LLVM gives is about "
           "the loops around it)";
  // "loop not vectorized: X" -> "not vectorized: X"
  std::string r = reason;
  if (r.rfind("loop ", 0) == 0)
    r = r.substr(5);
  // Advice about clang's pragmas does not apply to .opd programs.
  size_t pragma = r.find(". Use #pragma");
  if (pragma != std::string::npos)
    r.erase(pragma);
  if (r.find("reorder floating-point") != std::string::npos)
    r += " (float reductions stay in source order, so results do not depend "
         "on the vector width)";
  return r;
}

} // namespace

struct VectorizationRemarks::State {
  std::map<std::string, Outcome> outcomes;
};

VectorizationRemarks::VectorizationRemarks(llvm::LLVMContext &context)
    : context(context), state(std::make_unique<State>()) {
  context.setDiagnosticHandler(
      std::make_unique<VectorizeHandler>(state->outcomes));
}

VectorizationRemarks::~VectorizationRemarks() {
  context.setDiagnosticHandler(std::make_unique<llvm::DiagnosticHandler>());
}

void VectorizationRemarks::report(const llvm::Module &module, unsigned optLevel,
                                  DiagnosticEngine &diags) {
  struct Site {
    unsigned line, col;
    unsigned buffer;
    std::string kernel, message;
  };
  std::vector<Site> sites;
  // Each body with its loop's tag; a body that mergeIdenticalFunctions
  // removed speaks through the one that replaced it.
  std::vector<std::pair<const llvm::Function *, const llvm::MDNode *>> tagged;
  for (const llvm::Function &f : module)
    if (const llvm::MDNode *md = f.getMetadata(LoopMetadataKind))
      tagged.emplace_back(&f, md);
  if (const llvm::NamedMDNode *merged =
          module.getNamedMetadata(MergedLoopMetadataKind))
    for (const llvm::MDNode *entry : merged->operands()) {
      auto *f = entry->getNumOperands() == 2
                    ? llvm::mdconst::dyn_extract_or_null<llvm::Function>(
                          entry->getOperand(0))
                    : nullptr;
      auto *md =
          f ? llvm::dyn_cast<llvm::MDNode>(entry->getOperand(1)) : nullptr;
      if (md)
        tagged.emplace_back(f, md);
    }
  for (auto [fn, md] : tagged) {
    const llvm::Function &f = *fn;
    // A streaming-store variant runs its twin's loops (StreamTwins.cpp):
    // the twin speaks for both.
    if (md->getNumOperands() != 4 || f.hasFnAttribute(StreamFnAttr))
      continue;
    auto num = [&](unsigned i) -> unsigned {
      auto *c =
          llvm::mdconst::dyn_extract<llvm::ConstantInt>(md->getOperand(i));
      return c ? unsigned(c->getZExtValue()) : 0;
    };
    auto *name = llvm::dyn_cast<llvm::MDString>(md->getOperand(0));
    Site s{num(2), num(3), num(1), name ? name->getString().str() : "?", ""};
    auto it = state->outcomes.find(f.getName().str());
    if (f.hasFnAttribute(ScalarFnAttr))
      // LoopHost.cpp's second body of a loop that branches around costly
      // work: kept scalar on purpose.
      s.message = "scalar body (branches kept), timed at run time against "
                  "the vectorised one";
    else if (it != state->outcomes.end() && !it->second.vectorized.empty())
      s.message = describeVectorized(it->second.vectorized);
    else
      s.message = describeMissed(
          it == state->outcomes.end() ? "" : it->second.reason, optLevel);
    sites.push_back(std::move(s));
  }
  // Source order, as the program reads.
  std::stable_sort(sites.begin(), sites.end(),
                   [](const Site &a, const Site &b) {
                     return std::tie(a.buffer, a.line, a.col) <
                            std::tie(b.buffer, b.line, b.col);
                   });
  // One remark per loop statement and outcome: the bodies of one source
  // loop (a proc inlined twice, the copies of an unrolled time step) that
  // fared alike say it once.
  std::set<std::tuple<unsigned, unsigned, unsigned, std::string, std::string>>
      said;
  std::erase_if(sites, [&](const Site &s) {
    return !said.insert({s.buffer, s.line, s.col, s.kernel, s.message}).second;
  });
  llvm::SourceMgr &sm = diags.sources().llvm();
  for (const Site &s : sites) {
    llvm::SMLoc at;
    if (s.buffer >= 1 && s.buffer <= sm.getNumBuffers())
      at = sm.FindLocForLineAndColumn(s.buffer, s.line, s.col);
    diags.remark(SourceRange(at), "loop '" + s.kernel + "' " + s.message,
                 "vectorize");
  }
}

} // namespace opdc
