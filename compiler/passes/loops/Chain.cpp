// Chain.cpp - Report the loop chains of every host function (-Rpass=chain).
// SPDX-License-Identifier: Apache-2.0
//
// An analysis pass: it shows what loop fusion and communication avoidance
// work with, at the source location of each chain's first loop. Legal
// trivially, since the IR is not touched.
#include "passes/loops/Chain.h"

#include "analysis/LoopChain.h"

#include "ir/IR.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

namespace opdc {

using namespace ir;

namespace {
constexpr const char *PassName = "chain";

std::string lineOf(DiagnosticEngine &diags, SourceRange r) {
  if (!r.valid())
    return "?";
  return std::to_string(diags.sources().lineAndColumn(r.begin).first);
}
} // namespace

bool reportLoopChains(Program &program, PassContext &ctx) {
  bool want = ctx.diags.remarksEnabled(PassName);
  for (Function *f : program.functions()) {
    if (!f->isHost())
      continue;
    for (const LoopChain &c : findAllLoopChains(*f)) {
      ctx.stats.add(PassName, "chains", "loop chains");
      ctx.stats.add(PassName, "loops", "loops in chains",
                    int64_t(c.loops.size()));
      if (!want)
        continue;
      std::string names;
      for (const ParLoopStmt *l : c.loops)
        names += (names.empty() ? "'" : ", '") + l->kernel->name + "'";
      std::string end = chainEndText(c.end);
      if (c.end == ChainEnd::ReductionUse && c.endVar >= 0)
        end += " '" + f->vars[unsigned(c.endVar)].name + "'";
      if (c.end != ChainEnd::EndOfBody)
        end += " at line " + lineOf(ctx.diags, c.body->stmts[c.endStmt]->range);
      ctx.diags.remark(c.loops.front()->range,
                       "loop chain of " + std::to_string(c.loops.size()) +
                           (c.loops.size() == 1 ? " loop (" : " loops (") +
                           names + ") in '" + f->name + "', ended by " + end +
                           "; dats " + describeChainDats(c),
                       PassName);
    }
  }
  return false;
}

} // namespace opdc
