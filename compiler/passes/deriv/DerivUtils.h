// DerivUtils.h - What the tangent and adjoint passes share: the statements
// a differentiated proc may not hold, dat activity, derivative dats and the
// loops that zero or copy them.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_DERIV_DERIVUTILS_H
#define OPDC_PASSES_DERIV_DERIVUTILS_H

#include "passes/Pass.h"

#include "ir/IR.h"
#include "ir/IRMutator.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace opdc {

/// Counts a request of pass \p pass ("tangent", "adjoint") and remarks
/// "PASS of 'PROC' built: N PASS dats" at \p at.
void reportRequest(PassContext &ctx, const char *pass, SourceRange at,
                   const std::string &proc, size_t dats);
/// A copy of \p proc (not added to \p program) with the fn and proc calls
/// of its host code inlined: the derivative follows the procs it calls.
std::unique_ptr<ir::Function> procWithCallsInlined(ir::Program &program,
                                                   const ir::Function &proc,
                                                   PassContext &ctx);
/// The procs, then main: where derivative requests can be.
std::vector<ir::Function *> hostFunctions(const ir::Program &program);
/// True when \p e reads one of \p slots.
bool refsSlot(const ir::Expr &e, const std::set<unsigned> &slots);
/// The first statement of \p b (recursively) a derivative cannot contain:
/// print, write, read, a derivative request or a proc call.
const ir::Stmt *firstForbidden(const ir::Body &b);
/// Why \p s (from firstForbidden) is refused, as "it prints".
const char *forbiddenWhat(const ir::Stmt &s);
/// The dats the seeds reach in \p body: \p active, plus every float dat
/// written by a loop that reads an active dat or an active host variable
/// (\p vars), swapped with an active dat, or solved for from an active
/// input (solveReached, SolveFlow.h); to a fixed point.
std::set<ir::Dat *> activeDats(const ir::Body &body, std::set<ir::Dat *> active,
                               const std::set<unsigned> &vars);
/// A new dat shaped as \p primal (zero-initialised, isDerivative), added to
/// \p program under \p name.
ir::Dat *makeDerivativeDat(ir::Program &program, ir::Dat &primal,
                           std::string name);

/// Replaces every derivative request of one kind (the statements \p isRequest
/// accepts) in the procs and main by what expand() returns for it.
class RequestRewriter : public ir::IRMutator {
public:
  /// Returns true when anything changed.
  bool run(const ir::Program &program) {
    for (ir::Function *f : hostFunctions(program))
      mutateFunction(*f);
    return changed;
  }
  std::vector<ir::StmtPtr> mutateStmt(ir::StmtPtr s) override {
    if (isRequest(*s)) {
      changed = true;
      return expand(*currentFunction, *s);
    }
    return IRMutator::mutateStmt(std::move(s));
  }

protected:
  virtual bool isRequest(const ir::Stmt &s) const = 0;
  virtual std::vector<ir::StmtPtr> expand(ir::Function &caller,
                                          const ir::Stmt &request) = 0;
  bool changed = false;
};

/// Direct loops that zero a dat or copy one dat into another of the same
/// shape, over kernels PREFIX_zero_T / PREFIX_copy_T made once per type
/// (or found in the program, made by an earlier pass).
class FillLoops {
public:
  FillLoops(ir::Program &p, std::string prefix)
      : program(p), prefix(std::move(prefix)) {}
  /// `dst = src` element by element, or `dst = 0` when \p src is null;
  /// block dats over their halos too when \p halos.
  ir::StmtPtr loop(ir::Dat *src, ir::Dat *dst, SourceRange at,
                   bool halos = false);

private:
  ir::Function *kernel(Type elem, bool copy);
  ir::Program &program;
  std::string prefix;
  std::map<std::string, ir::Function *> kernels; ///< by name
};

} // namespace opdc
#endif
