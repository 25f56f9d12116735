// HostCodeGen.h - Host code: main's start-up, procs, host-only statements.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_CODEGEN_LLVM_HOSTCODEGEN_H
#define OPDC_CODEGEN_LLVM_HOSTCODEGEN_H

#include "codegen/llvm/FunctionEmitter.h"

namespace opdc {

/// Emits main and procs: the kernel language plus loops, printing, dat I/O,
/// swap and size(). Runs on one thread; parallel loops hand their bodies to
/// the runtime (LoopHost.cpp).
class HostEmitter : public FunctionEmitter {
public:
  using FunctionEmitter::FunctionEmitter;

  /// Emits `int main(int argc, char **argv)`: opd_rt_init with the param
  /// table (\p params, or null when \p nparams is 0), the mesh objects in
  /// declaration order (sets, maps, blocks, then dats), main's body, and
  /// opd_rt_finalize's status as the exit status.
  void emitMain(llvm::Constant *params, unsigned nparams);

protected:
  void emitHostStmt(const ir::Stmt &s) override;
  llvm::Value *emitSizeOf(const ir::SizeOfExpr &e) override;

private:
  void createMesh();
  void createDat(const ir::Dat &d);
  /// opd_dat_fill with the dat's fill value (a scalar is broadcast).
  void fillDat(const ir::Dat &d, llvm::Value *handle);
  /// A stack array of the handles of \p dats, for opd_dat_write/read.
  llvm::Value *datArray(const std::vector<ir::Dat *> &dats);
  /// opd_solve_tridiagonal(a, b, c, d, along, lo, hi).
  void emitSolve(const ir::SolveStmt &s);
  /// Stack arrays of the ranges' bounds as i64 (null pointers for none).
  std::pair<llvm::Value *, llvm::Value *>
  rangeArrays(const std::vector<ir::LoopRange> &ranges, const char *what);
  /// Adjoint support (runtime: lib/exec/Adjoint.cpp).
  void emitTape(const ir::TapeStmt &s);
  void emitCheckpoint(const ir::CheckpointStmt &s);
  /// The 64-bit words a host variable takes on the tape (an array's
  /// length, else 1), and those of a list of variables.
  unsigned varWords(unsigned slot) const;
  unsigned varWords(const std::vector<unsigned> &vars) const;
  /// Element \p i of a host variable (a scalar's only one) as 64 bits, and
  /// back.
  llvm::Value *varBits(unsigned slot, unsigned i);
  void setVarBits(unsigned slot, unsigned i, llvm::Value *bits);
  /// The variables into an array of 64-bit values (for snapshots), and back.
  void packVars(const std::vector<unsigned> &vars, llvm::Value *into);
  void unpackVars(const std::vector<unsigned> &vars, llvm::Value *from);
  void emitPrint(const ir::PrintStmt &s);
  void emitPrintf(const ir::PrintStmt &s);
  void unsupported(const ir::Stmt &s, const char *what);
};

} // namespace opdc
#endif
