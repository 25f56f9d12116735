// Chain.h - Report the loop chains of every host function (-Rpass=chain).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_LOOPS_CHAIN_H
#define OPDC_PASSES_LOOPS_CHAIN_H

#include "passes/Pass.h"

namespace opdc {

/// Pass "chain". Changes nothing: with -Rpass=chain, reports each loop
/// chain (analysis/LoopChain.h) of main and the procs at its first loop,
/// with its loops, what ended it and, per dat, which loops read and write
/// it and how. Counts chains and chained loops for --stats. Returns false.
bool reportLoopChains(ir::Program &program, PassContext &ctx);

} // namespace opdc
#endif
