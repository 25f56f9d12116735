// UnrollSteps.h - Unroll time loops of stencil steps by two (see
// UnrollSteps.cpp).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_UNROLLSTEPS_H
#define OPDC_PASSES_UNROLLSTEPS_H

#include "passes/Pass.h"

namespace opdc {

bool unrollSteps(ir::Program &program, PassContext &ctx);

} // namespace opdc
#endif
