// HostCodeGen.h - Host code: main's start-up, procs, host-only statements.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_CODEGEN_LLVM_HOSTCODEGEN_H
#define OPDC_CODEGEN_LLVM_HOSTCODEGEN_H

#include "codegen/llvm/FunctionEmitter.h"

#include <memory>

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
};

namespace host {
struct Program;
} // namespace host

/// Prints the host-program form \p p (codegen/common/HostProgram.h) at
/// \p e's insertion point (HostPrinter.cpp); returns its locals' addresses.
std::vector<llvm::Value *> printHostProgram(FunctionEmitter &e,
                                            const host::Program &p);

/// A program with phases (a loop's, host::lowerLoop) printed in parts: the
/// operations up to each Phase, the backend printing its phase in between.
/// Its locals are declared on construction.
class HostProgramPrinter {
public:
  HostProgramPrinter(FunctionEmitter &e, const host::Program &p);
  ~HostProgramPrinter();
  /// The next operations up to a Phase (true) or the end (false).
  bool printToPhase();
  /// The address of local \p l (an alloca, or a global when persistent).
  llvm::Value *local(int l) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
  size_t next = 0;
  friend std::vector<llvm::Value *> printHostProgram(FunctionEmitter &,
                                                     const host::Program &);
};

} // namespace opdc
#endif
