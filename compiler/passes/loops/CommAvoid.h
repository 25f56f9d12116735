// CommAvoid.h - The comm-avoid pass: grouped, deeper halo exchanges and
// redundant computation for loop chains (see CommAvoid.cpp).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_LOOPS_COMMAVOID_H
#define OPDC_PASSES_LOOPS_COMMAVOID_H

#include "passes/Pass.h"

namespace opdc {

bool avoidCommunication(ir::Program &program, PassContext &ctx);

} // namespace opdc
#endif
