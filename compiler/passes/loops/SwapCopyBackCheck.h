// SwapCopyBackCheck.h - The run-time check of swap-copy-back: loops that
// find where two dats hold different bits (see SwapCopyBackCheck.cpp).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_LOOPS_SWAPCOPYBACKCHECK_H
#define OPDC_PASSES_LOOPS_SWAPCOPYBACKCHECK_H

#include "ir/IR.h"

#include <vector>

namespace opdc {

/// A block loop over \p range that sets the host i32 slot \p differ to 1
/// (a max-reduction) on the points where dats \p a and \p b hold different
/// bits (floats: unequal, or equal of opposite signs). Its kernel,
/// swap_copy_back.differ_T, is added to \p program once per element type.
ir::StmtPtr differLoop(ir::Program &program, ir::Dat *a, ir::Dat *b,
                       std::vector<ir::LoopRange> range, unsigned differ,
                       SourceRange at);

} // namespace opdc
#endif
