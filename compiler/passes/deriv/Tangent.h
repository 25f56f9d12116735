// Tangent.h - Build the tangent (forward-mode derivative) of procs.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_DERIV_TANGENT_H
#define OPDC_PASSES_DERIV_TANGENT_H

#include "passes/Pass.h"

#include "ir/IR.h"

#include <optional>
#include <vector>

namespace opdc {

/// Pass "tangent". Replaces every `let d = tangent P(args) along (...)` by
/// ordinary IR that computes P together with its directional derivative:
/// P's body in place of the request, each parallel loop that the seeds
/// reach replaced by a loop over a tangent kernel (the kernel and its
/// forward-mode derivative in one body, ForwardDiff.h), a tangent dat for
/// every dat the seeds reach, host variables with tangent variables, and
/// `d` set to the tangent of P's result. Backends, threads and MPI see only
/// loops, dats and host code. Errors (I/O or a proc call inside P, a min or
/// max reduction of a value the seeds reach, a call that cannot be
/// inlined) name the place. Returns true when anything changed.
bool buildTangents(ir::Program &program, PassContext &ctx);

/// A tangent riding along statements that run a proc's body (an adjoint
/// request's forward sweep) instead of a second run of the body: rewrites
/// \p stmts of \p fn in place to compute, besides what they compute, the
/// derivative along float variable \p seed (tangent 1). The variables in
/// \p vars get tangents (0 at the start), every dat the seed reaches a
/// tangent dat (zeroed first), loops reading them tangent kernels; tape
/// statements pass unchanged, so what they save is what they saved.
/// Returns the slot of the tangent of \p of after the statements, or
/// nullopt, with \p stmts unchanged, when they hold what the rewrite does
/// not take (a solve, a checkpointed loop, a min or max reduction, I/O).
std::optional<unsigned> tangentAlongside(ir::Program &program, PassContext &ctx,
                                         ir::Function &fn,
                                         std::vector<ir::StmtPtr> &stmts,
                                         unsigned seed,
                                         const std::vector<unsigned> &vars,
                                         unsigned of, SourceRange range);

} // namespace opdc
#endif
