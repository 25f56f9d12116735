// IRMutator.h - Rewriting walker over the Program IR.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_IR_IRMUTATOR_H
#define OPDC_IR_IRMUTATOR_H

#include "ir/IR.h"

namespace opdc::ir {

/// Walks the IR taking ownership of each node and putting back what the
/// matching mutateXxx returns. Defaults rewrite the node's children and return
/// the node itself, so an override only handles the kinds it changes:
///
///   struct FoldNegOne : IRMutator {
///     ExprPtr mutateUnary(std::unique_ptr<UnaryExpr> e) override {
///       ... return a ConstantExpr or IRMutator::mutateUnary(std::move(e));
///     }
///   };
///
/// A statement hook returning null deletes the statement. To replace one
/// statement by several, override mutateStmt (it returns a list) and defer
/// to the base for the others. Replacement nodes should take the range of
/// the node they replace so later messages still point into the source.
class IRMutator {
public:
  virtual ~IRMutator();

  /// Global host expressions, then every function in Program::functions()
  /// order.
  virtual void mutateProgram(Program &p);
  virtual void mutateGlobals(Program &p);
  /// Sets currentFunction and rewrites the body.
  virtual void mutateFunction(Function &f);
  /// Replaces each statement by what mutateStmt returns.
  virtual void mutateBody(Body &b);

  /// Dispatches to the per-kind hook; returns its result (empty when the
  /// hook returned null).
  virtual std::vector<StmtPtr> mutateStmt(StmtPtr s);
  /// Dispatches to the per-kind hook. Null stays null.
  virtual ExprPtr mutateExpr(ExprPtr e);

  virtual StmtPtr mutateDecl(std::unique_ptr<DeclStmt> s);
  virtual StmtPtr mutateAssign(std::unique_ptr<AssignStmt> s);
  virtual StmtPtr mutateEval(std::unique_ptr<EvalStmt> s);
  virtual StmtPtr mutateIf(std::unique_ptr<IfStmt> s);
  virtual StmtPtr mutateFor(std::unique_ptr<ForStmt> s);
  virtual StmtPtr mutateWhile(std::unique_ptr<WhileStmt> s);
  virtual StmtPtr mutateBreak(std::unique_ptr<BreakStmt> s) { return s; }
  virtual StmtPtr mutateContinue(std::unique_ptr<ContinueStmt> s) { return s; }
  virtual StmtPtr mutateReturn(std::unique_ptr<ReturnStmt> s);
  virtual StmtPtr mutateParLoop(std::unique_ptr<ParLoopStmt> s);
  virtual StmtPtr mutateSwap(std::unique_ptr<SwapStmt> s) { return s; }
  virtual StmtPtr mutateDatIO(std::unique_ptr<DatIOStmt> s);
  virtual StmtPtr mutatePrint(std::unique_ptr<PrintStmt> s);
  virtual StmtPtr mutateSolve(std::unique_ptr<SolveStmt> s);
  virtual StmtPtr mutateAdjoint(std::unique_ptr<AdjointStmt> s);
  virtual StmtPtr mutateTangent(std::unique_ptr<TangentStmt> s);
  virtual StmtPtr mutateTape(std::unique_ptr<TapeStmt> s) { return s; }
  virtual StmtPtr mutateCheckpoint(std::unique_ptr<CheckpointStmt> s);

  virtual ExprPtr mutateConstant(std::unique_ptr<ConstantExpr> e) { return e; }
  virtual ExprPtr mutateVarRef(std::unique_ptr<VarRefExpr> e) { return e; }
  virtual ExprPtr mutateParamRef(std::unique_ptr<ParamRefExpr> e) { return e; }
  virtual ExprPtr mutateKernelArg(std::unique_ptr<KernelArgExpr> e) {
    return e;
  }
  virtual ExprPtr mutateUnary(std::unique_ptr<UnaryExpr> e);
  virtual ExprPtr mutateBinary(std::unique_ptr<BinaryExpr> e);
  virtual ExprPtr mutateCast(std::unique_ptr<CastExpr> e);
  virtual ExprPtr mutateIndex(std::unique_ptr<IndexExpr> e);
  virtual ExprPtr mutateIntrinsic(std::unique_ptr<IntrinsicExpr> e);
  virtual ExprPtr mutateCall(std::unique_ptr<CallExpr> e);
  virtual ExprPtr mutateArrayLit(std::unique_ptr<ArrayLitExpr> e);
  virtual ExprPtr mutateSizeOf(std::unique_ptr<SizeOfExpr> e) { return e; }

protected:
  /// The function being rewritten (null for globals).
  Function *currentFunction = nullptr;

  /// Rewrites every element of \p v in place.
  void mutateAll(std::vector<ExprPtr> &v);
  void mutateInPlace(ExprPtr &e) { e = mutateExpr(std::move(e)); }
  /// Rewrites the call arguments and each entry's value of \p s in place
  /// (mutateAdjoint and mutateTangent share it).
  void mutateDerivative(DerivativeStmt &s);
};

} // namespace opdc::ir
#endif
