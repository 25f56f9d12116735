// SwapCopyBack.h - Time loops that copy their new state back swap instead,
// where the two dats agree outside the copied range (see SwapCopyBack.cpp).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_LOOPS_SWAPCOPYBACK_H
#define OPDC_PASSES_LOOPS_SWAPCOPYBACK_H

#include "passes/Pass.h"

namespace opdc {

/// Pass "swap-copy-back": `for .. { loop step (u @ S -> u2); loop copy (u2
/// -> u) }` runs as `for .. { loop step (u @ S -> u2); swap(u, u2) }` and
/// one copy after it when u and u2 agree outside the copied range (checked
/// at run time before the loop; else the loop as written runs). The same
/// for while loops, and with statements after the copy that leave u2 alone.
bool swapCopyBacks(ir::Program &program, PassContext &ctx);

} // namespace opdc
#endif
