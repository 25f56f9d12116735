// JoinChains.h - Move swaps, tape pops and uses of reduction results out
// of the way of loop chains (see JoinChains.cpp).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_LOOPS_JOINCHAINS_H
#define OPDC_PASSES_LOOPS_JOINCHAINS_H

#include "passes/Pass.h"

namespace opdc {

bool joinLoopChains(ir::Program &program, PassContext &ctx);

} // namespace opdc
#endif
