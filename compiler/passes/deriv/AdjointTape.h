// AdjointTape.h - Tape only what the reverse sweep reads.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_DERIV_ADJOINTTAPE_H
#define OPDC_PASSES_DERIV_ADJOINTTAPE_H

#include "passes/Pass.h"

namespace opdc {

/// Pass "adjoint-tape" (after "adjoint" and "adjoint-zeros"). Drops a dat
/// from a tape push and its pop (TapeStmt::pair) when no run of the pop
/// restores a value that the program then reads (analysis/DatLiveness.h):
/// the push's copy of the dat and its tape memory are saved. Counts the
/// dats no longer taped for --stats; -Rpass=adjoint-tape names them.
/// Returns true when it changed anything.
bool tapeOnlyWhatIsRead(ir::Program &program, PassContext &ctx);

} // namespace opdc
#endif
