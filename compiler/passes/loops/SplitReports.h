// SplitReports.h - Split time loops at their reports (see SplitReports.cpp).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_LOOPS_SPLITREPORTS_H
#define OPDC_PASSES_LOOPS_SPLITREPORTS_H

#include "passes/Pass.h"

namespace opdc {

/// Pass "split-reports": a time loop of stencil steps with trailing
/// reports (ifs that print or write, on conditions of the loop variable
/// alone) becomes a while loop over runs of plain steps, each followed by
/// its report, so that unroll-steps can unroll the runs.
bool splitReports(ir::Program &program, PassContext &ctx);

} // namespace opdc
#endif
