// KernelZeros.h - Increments of zeroed kernel variables as plain
// assignments where no result sees the sign of a zero.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_KERNELS_KERNELZEROS_H
#define OPDC_PASSES_KERNELS_KERNELZEROS_H

#include "passes/Pass.h"

namespace opdc {

/// Pass "kernel-zeros" (after "fuse"). In every kernel of straight-line
/// statements, turns `var x = 0.0; ... x += e` (x assigned nowhere else)
/// into `x = e` when every value x reaches is summed into a value that is
/// never -0.0 or otherwise loses the sign of its zeros (the file comment of
/// KernelZeros.cpp): each kernel computes the same bits with one addition
/// of +0.0 less. Counts the increments for --stats; -Rpass=kernel-zeros
/// names the kernels. Returns true when it changed anything.
bool dropSignedZeros(ir::Program &program, PassContext &ctx);

} // namespace opdc
#endif
