// Fuse.h - Fuse neighbouring loops of a loop chain into one sweep.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_LOOPS_FUSE_H
#define OPDC_PASSES_LOOPS_FUSE_H

#include "passes/Pass.h"

namespace opdc {

/// Pass "fuse". In every loop chain (analysis/LoopChain.h) of main and the
/// procs, replaces runs of neighbouring loops over the same set, or the same
/// block and range, whose dependences are all at the element itself, by one
/// loop over a new kernel `A+B` whose body is A's body then B's. Each fusion
/// is a remark (-Rpass=fuse) and each refusal a missed remark naming the
/// dat and the dependence (or the other reason). Results are bitwise those
/// of the unfused loops (see Fuse.cpp). Returns true when anything changed.
bool fuseLoops(ir::Program &program, PassContext &ctx);

} // namespace opdc
#endif
