// DatLiveness.h - Which dat values a host function may still read.
// SPDX-License-Identifier: Apache-2.0
//
// A dat's value is live at a point of a host function when some path from
// that point reads it before anything overwrites it whole. The analysis
// runs backwards over the function's structured body (ifs, for and while
// loops to a fixed point, break and continue to their loop's exit and
// head) with, per statement:
//
//   loop        reads its arguments of every mode but `out`; a set loop
//               overwrites whole a dat it only writes through direct `out`
//               arguments that its kernel assigns whole on every run
//               (ir::assignsWhole), and so does a block loop over every
//               stored point of the dat, halos included (the adjoint's
//               copies aside and fills); a partial write, a block loop's
//               `out` over less, kills nothing
//   tape push   reads its dats; tape pop: overwrites them whole
//   swap(a, b)  exchanges what is live of a and of b
//   checkpoint  forward: reads the state (snapshots) and runs its bodies any
//               number of times; reverse: as the runtime orders its actions
//               (lib/exec/Adjoint.cpp): after a reversed step (reverseBody)
//               comes a restore, which overwrites the state dats, a step
//               taped by the forward sweep (tapedReverseBody) or the end;
//               after tapedReverseBody another one or the end
//   call        of a proc: reads every dat the proc may reach
//   return      in main: nothing is read after it; in a proc: every dat but
//               the scratch ones (ir::Dat::scratch) may be
//   anything else that names a dat (I/O, solve, an unexpanded derivative
//   request) reads it, and kills nothing.
//
// Main's end reads nothing, a proc's end every dat but the scratch ones.
// What the passes ask: whether a dat's value may be read right after a
// given tape statement (passes/deriv/AdjointTape.cpp drops the pops whose
// values nothing reads, with their pushes).
#ifndef OPDC_ANALYSIS_DATLIVENESS_H
#define OPDC_ANALYSIS_DATLIVENESS_H

#include "llvm/ADT/BitVector.h"

#include <map>

namespace opdc {
namespace ir {
struct Dat;
struct Function;
struct Program;
struct TapeStmt;
} // namespace ir

class DatLiveness {
public:
  /// Analyses host function \p f (main or a proc) of \p program.
  DatLiveness(const ir::Program &program, const ir::Function &f);

  /// Whether the value of \p d may be read after tape statement \p t, on
  /// some path from any of the times it runs. True for a statement the
  /// analysis never reached.
  bool liveAfter(const ir::TapeStmt &t, const ir::Dat *d) const;

private:
  std::map<const ir::Dat *, unsigned> index;
  std::map<const ir::TapeStmt *, llvm::BitVector> afterTape;
  friend class DatLivenessWalk;
};

} // namespace opdc
#endif
