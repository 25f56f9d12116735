// KernelDCE.h - Drop dead statements from kernels, then the read arguments
// no statement reads.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_KERNELS_KERNELDCE_H
#define OPDC_PASSES_KERNELS_KERNELDCE_H

#include "passes/Pass.h"

namespace opdc {

/// Pass "kernel-dce" (after "adjoint-zeros", before "adjoint-tape"). In
/// every kernel, removes the assignments and declarations of local
/// variables whose values nothing reads (outside for and while loops, which
/// it keeps whole), then drops each `read` parameter that no statement
/// reads any more, with the argument every loop of that kernel passes for
/// it. Counts both for --stats; -Rpass=kernel-dce names the arguments
/// dropped. Returns true when it changed anything.
bool eliminateDeadKernelCode(ir::Program &program, PassContext &ctx);

} // namespace opdc
#endif
