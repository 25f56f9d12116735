// UnrollShortLoops.h - Unroll host for loops of a few iterations whose
// loops meet over one set across iterations (see UnrollShortLoops.cpp).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_LOOPS_UNROLLSHORTLOOPS_H
#define OPDC_PASSES_LOOPS_UNROLLSHORTLOOPS_H

#include "passes/Pass.h"

namespace opdc {

/// Pass "unroll-short-loops": `for v in lo..hi` with constant bounds and 2
/// to 4 iterations over loops on sets, unrolled where the loops of one
/// iteration meet the next's (or the loop before the for) over one set, so
/// that the fuse pass can join them.
bool unrollShortLoops(ir::Program &program, PassContext &ctx);

} // namespace opdc
#endif
