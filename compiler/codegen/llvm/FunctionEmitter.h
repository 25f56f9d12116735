// FunctionEmitter.h - Statements and expressions of one IR function in LLVM.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_CODEGEN_LLVM_FUNCTIONEMITTER_H
#define OPDC_CODEGEN_LLVM_FUNCTIONEMITTER_H

#include "codegen/llvm/CodeGenModule.h"

#include "ir/IR.h"

#include "llvm/IR/IRBuilder.h"

#include <vector>

namespace opdc {

/// Emits the body of one ir::Function (kernel, fn, proc or main) into an
/// LLVM function. Values are represented as:
///   scalar  -> its register value (bool as i1),
///   array   -> a pointer to its N components in memory (a variable's slot,
///              a dat element, a constant global or a temporary),
///   string  -> a pointer to its characters.
/// Every local slot is an alloca in the entry block; SROA and mem2reg turn
/// them into registers. Subclasses supply what depends on where the code
/// runs: kernel arguments and idx() in kernels, size() and the host-only
/// statements in host code.
/// Arrays longer than this are copied with memcpy and read in place by
/// loop bodies instead of component by component (see storeValue).
constexpr unsigned LargeArrayLength = 64;

class FunctionEmitter {
public:
  FunctionEmitter(CodeGenModule &cgm, const ir::Function &fn,
                  llvm::Function *llvmFn);
  virtual ~FunctionEmitter() = default;

  /// Binds the LLVM arguments of a fn or proc to their parameter slots,
  /// emits the body and terminates the function. For kernels and main the
  /// subclass binds its own arguments and calls emitBody/finish.
  void emitFunction();

  void emitBody(const ir::Body &body);
  /// Terminates the current block: `ret void` for void functions, otherwise
  /// unreachable (sema guarantees a return on every path).
  void finish();

  /// The value of \p e in the representation described above.
  llvm::Value *emitExpr(const ir::Expr &e);
  /// The address of the lvalue \p e (a variable, a kernel argument, or a
  /// component of one).
  llvm::Value *emitAddress(const ir::Expr &e);
  /// Loads a value of type \p t from \p ptr (bool: i8 -> i1).
  llvm::Value *loadValue(llvm::Value *ptr, const Type &t,
                         const llvm::Twine &name = "");
  /// Stores \p v (in the representation above) as a value of type \p t.
  void storeValue(llvm::Value *v, llvm::Value *ptr, const Type &t);
  /// An alloca in the entry block, so loops do not grow the stack.
  llvm::AllocaInst *createTemp(llvm::Type *t, const llvm::Twine &name = "");
  /// The slot of local variable \p slot.
  llvm::Value *slot(unsigned slot) const { return slots[slot]; }
  /// Element \p i of variable \p slot (a scalar's only one) as the bits of
  /// a 64-bit word, and back (the tape's and the snapshots' unit).
  llvm::Value *varBits(unsigned slot, unsigned i);
  void setVarBits(unsigned slot, unsigned i, llvm::Value *bits);
  /// A stack array of the handles of \p dats.
  llvm::Value *datArray(const std::vector<const ir::Dat *> &dats);

  /// Calls opd_rt_fail with "<location>: <message>" when \p failed is true.
  void emitRuntimeCheck(llvm::Value *failed, SourceRange where,
                        const llvm::Twine &message);
  /// When \p failed is true, calls the noreturn runtime function \p fail
  /// with \p args in a cold block NAME.fail; goes on in NAME.ok.
  void emitFailIf(llvm::Value *failed, llvm::FunctionCallee fail,
                  llvm::ArrayRef<llvm::Value *> args, const llvm::Twine &name);

  /// `op` on two scalars of kind \p k (Add..Rem; C semantics for integer
  /// division, checked for zero).
  llvm::Value *emitArithmetic(ir::BinaryOp op, ScalarKind k, llvm::Value *l,
                              llvm::Value *r, SourceRange where);
  /// min(a, b) / max(a, b) as the intrinsics compute them: a < b ? a : b,
  /// for floats and integers alike.
  llvm::Value *emitMinMax(bool isMin, ScalarKind k, llvm::Value *a,
                          llvm::Value *b);

  CodeGenModule &cgm;
  const ir::Function &fn;
  llvm::Function *llvmFn;
  llvm::IRBuilder<> b;

protected:
  virtual void emitHostStmt(const ir::Stmt &s);
  virtual llvm::Value *emitKernelArgAddress(const ir::KernelArgExpr &e);
  /// The address of element \p i (i64) of the array at \p base, which
  /// \p ix indexes: consecutive elements, unless a kernel argument's
  /// components lie apart (KernelCodeGen.cpp, componentStride).
  virtual llvm::Value *emitElementAddress(const ir::IndexExpr &ix,
                                          llvm::Value *base, llvm::Value *i);
  virtual llvm::Value *emitIdx(unsigned dim);
  /// The current element's global coordinates as i64 (kernels only): the
  /// set element's index, or the grid point's 1 to 3 coordinates.
  virtual std::vector<llvm::Value *> elementCoords();
  virtual llvm::Value *emitSizeOf(const ir::SizeOfExpr &e);
  /// The value of \p e computed outside this function (a kernel's column
  /// values, which the loop body passes in: KernelCodeGen.cpp), or null to
  /// emit \p e here.
  virtual llvm::Value *emitPrecomputed(const ir::Expr &e) {
    (void)e;
    return nullptr;
  }

  void createSlots();

private:
  void emitStmt(const ir::Stmt &s);
  void emitAssign(const ir::AssignStmt &s);
  void emitIf(const ir::IfStmt &s);
  void emitFor(const ir::ForStmt &s);
  void emitWhile(const ir::WhileStmt &s);
  void emitReturn(const ir::ReturnStmt &s);
  /// Starts a fresh block after a terminator (code after break/return).
  void startDeadBlock();

  llvm::Value *emitConstant(const ConstValue &v);
  llvm::Value *emitUnary(const ir::UnaryExpr &e);
  llvm::Value *emitBinary(const ir::BinaryExpr &e);
  llvm::Value *emitIntDivRem(ir::BinaryOp op, llvm::Value *l, llvm::Value *r,
                             SourceRange where);
  llvm::Value *emitLogical(const ir::BinaryExpr &e);
  llvm::Value *emitCast(const ir::CastExpr &e);
  llvm::Value *emitIndex(const ir::IndexExpr &e);
  llvm::Value *emitIntrinsic(const ir::IntrinsicExpr &e);
  llvm::Value *emitSelect(const ir::IntrinsicExpr &e);
  llvm::Value *emitCall(const ir::CallExpr &e);
  llvm::Value *emitArrayLit(const ir::ArrayLitExpr &e);
  // FunctionEmitterMath.cpp: bit operations and the <math.h> intrinsics.
  /// &, |, ^, <<, >> on integers; a shift by a count that is not a constant
  /// is checked at run time (0 <= count < bit width).
  llvm::Value *emitBitwise(ir::BinaryOp op, llvm::Value *l, llvm::Value *r,
                           SourceRange where);
  /// asin ... isfinite (Intrinsic::Asin and after); nullptr for the others.
  llvm::Value *emitMathLib(const ir::IntrinsicExpr &e,
                           llvm::ArrayRef<llvm::Value *> args);
  /// A call of the C library's \p name (name + "f" for f32), marked
  /// nobuiltin so that LLVM neither folds nor rewrites it (the result is
  /// always the library's, as sema's folding) and memory(none), since a
  /// program cannot observe errno.
  llvm::Value *emitExactLibmCall(const char *name, ScalarKind k,
                                 llvm::ArrayRef<llvm::Value *> args);

  std::vector<llvm::Value *> slots;
  struct LoopTargets {
    llvm::BasicBlock *breakTo, *continueTo;
  };
  std::vector<LoopTargets> loops;
  llvm::BasicBlock *entryBlock = nullptr;
};

} // namespace opdc
#endif
