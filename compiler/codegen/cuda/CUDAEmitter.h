// CUDAEmitter.h - Internal to the CUDA backend: the module and the
// statement/expression writer shared by host code, fns and kernels.
// SPDX-License-Identifier: Apache-2.0
//
// CUDAFunctions.cpp writes statements and expressions as C++ (the scalar
// rules of the CPU backend, through the helpers of lib/cuda/opd_cuda.cuh),
// CUDALoops.cpp the parallel loops (device kernel, __global__ function,
// host side), CUDACodeGen.cpp the translation unit around them.
#ifndef OPDC_CODEGEN_CUDA_CUDAEMITTER_H
#define OPDC_CODEGEN_CUDA_CUDAEMITTER_H

#include "codegen/cuda/CUDACodeGen.h"

#include "analysis/LoopAccess.h"
#include "ir/IR.h"
#include "support/SourceRange.h"

#include <memory>
#include <string>
#include <vector>

namespace opdc {

class DiagnosticEngine;
namespace host {
struct Program;
} // namespace host

/// Identifier-safe text of \p name (anything but [A-Za-z0-9_] becomes _).
std::string cudaIdent(const std::string &name);
/// A C string literal of \p text.
std::string cudaStringLiteral(const std::string &text);
/// "bool", "int32_t", "int64_t", "float", "double".
const char *cudaScalarType(ScalarKind k);
/// The C++ type of a value: scalar, opd::arr<T, N>, const char *, void.
std::string cudaValueType(const Type &t);

struct CUDAModule {
  const ir::Program &program;
  const CUDACodeGenOptions &options;
  DiagnosticEngine &diags;
  /// Device code of the loops (kernels and __global__ functions), written
  /// while host functions are, placed before them.
  std::string loops;
  unsigned nextLoop = 0;
  bool failed = false;

  std::string location(SourceRange r) const;
  /// Handle variable names.
  static std::string handle(const ir::Set *s) {
    return "set_" + cudaIdent(s->name);
  }
  static std::string handle(const ir::Map *m) {
    return "map_" + cudaIdent(m->name);
  }
  static std::string handle(const ir::Block *b) {
    return "blk_" + cudaIdent(b->name);
  }
  static std::string handle(const ir::Dat *d) {
    return "dat_" + cudaIdent(d->name);
  }
  static std::string fnName(const ir::Function &f);
};

/// Writes one function's statements and expressions.
class CUDAFunctionWriter {
public:
  enum class Mode { Host, Fn, Kernel };

  CUDAFunctionWriter(CUDAModule &m, const ir::Function &fn, Mode mode,
                     std::string &out)
      : m(m), fn(fn), mode(mode), out(out) {}

  /// The kernel's loop (Mode::Kernel).
  void setLoop(const ir::ParLoopStmt *l, const LoopAccess *a) {
    loop = l;
    access = a;
  }

  /// Declarations of the variable slots that are not parameters.
  void declareVars(int indent);
  void body(const ir::Body &b, int indent);
  std::string expr(const ir::Expr &e);
  std::string lvalue(const ir::Expr &e);
  /// Prints the host-program form \p p (codegen/common/HostProgram.h) at
  /// \p indent, its locals declared first; returns their names.
  std::vector<std::string> printHostProgram(const host::Program &p, int indent);
  /// A program with phases (a loop's, host::lowerLoop) printed in parts:
  /// the operations up to each Phase, the backend writing its phase in
  /// between. Its locals are declared on construction.
  struct HostPrinter; // CUDAHostStmts.cpp
  class ProgramPrinter {
  public:
    ProgramPrinter(CUDAFunctionWriter &w, const host::Program &p, int indent);
    ~ProgramPrinter();
    /// The next operations up to a Phase (true) or the end (false).
    bool printToPhase(int indent);
    /// The C name of local \p l.
    const std::string &local(int l) const;

  private:
    std::unique_ptr<HostPrinter> impl;
    size_t next = 0;
  };
  /// Name of variable slot \p s.
  std::string var(unsigned s) const;

  CUDAModule &m;
  const ir::Function &fn;
  const Mode mode;
  std::string &out;

private:
  void stmt(const ir::Stmt &s, int indent);
  void line(int indent, const std::string &text);
  /// Loops (CUDALoops.cpp), and every other host statement through the
  /// host-program form (CUDAHostStmts.cpp).
  void hostStmt(const ir::Stmt &s, int indent);
  /// Element \p i of a host variable as 64 bits, and back.
  std::string bits(unsigned slot, unsigned i);
  void setBits(unsigned slot, unsigned i, const std::string &from, int indent);
  std::string constant(const ConstValue &v);
  std::string binary(const ir::BinaryExpr &e);
  std::string arithmetic(BinaryOp op, ScalarKind k, const std::string &l,
                         const std::string &r, SourceRange where);
  std::string castExpr(const ir::CastExpr &e);
  std::string intrinsic(const ir::IntrinsicExpr &e);
  std::string kernelArg(const ir::KernelArgExpr &e, const std::string *index);
  std::string stencilOffset(const ir::KernelArgExpr &e);

  const ir::ParLoopStmt *loop = nullptr;
  const LoopAccess *access = nullptr;
  unsigned temps = 0;
};

/// Writes the device code of \p loop into m.loops and its host side at
/// \p indent into \p host's output.
void emitCUDALoop(CUDAFunctionWriter &host, const ir::ParLoopStmt &loop,
                  int indent);
/// Writes a stencil chain's two loops (a group of 2 the fuse pass marked,
/// passes/loops/FuseTile.cpp) as one kernel (CUDATileChain.cpp).
void emitCUDATileChain(CUDAFunctionWriter &host, const ir::ParLoopStmt &p,
                       const ir::ParLoopStmt &c, int indent);

} // namespace opdc
#endif
