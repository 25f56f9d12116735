// Tangent.h - Build the tangent (forward-mode derivative) of procs.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_DERIV_TANGENT_H
#define OPDC_PASSES_DERIV_TANGENT_H

#include "passes/Pass.h"

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

} // namespace opdc
#endif
