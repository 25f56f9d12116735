// IRVisitor.h - Read-only walker over the Program IR.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_IR_IRVISITOR_H
#define OPDC_IR_IRVISITOR_H

#include "ir/IR.h"

namespace opdc::ir {

/// Walks a Program, a Function, a Body or an expression in order (source
/// order of statements, operands left to right). Every visitXxx has a default
/// that visits the node's children; override the kinds you care about and
/// call the base method to keep descending.
///
///   struct CountLoops : IRVisitor {
///     unsigned n = 0;
///     void visitParLoop(const ParLoopStmt &s) override {
///       ++n;
///       IRVisitor::visitParLoop(s);
///     }
///   };
class IRVisitor {
public:
  virtual ~IRVisitor();

  /// Global host expressions (set sizes and files, map files, dat sizes and
  /// initialisers), then every function in Program::functions() order.
  virtual void visitProgram(const Program &p);
  /// Host expressions owned by globals; currentFunction is null meanwhile.
  virtual void visitGlobals(const Program &p);
  /// Sets currentFunction and visits the body.
  virtual void visitFunction(const Function &f);
  virtual void visitBody(const Body &b);

  /// Dispatch on the node kind.
  void visitStmt(const Stmt &s);
  void visitExpr(const Expr &e);

  virtual void visitDecl(const DeclStmt &s);
  virtual void visitAssign(const AssignStmt &s);
  virtual void visitEval(const EvalStmt &s);
  virtual void visitIf(const IfStmt &s);
  virtual void visitFor(const ForStmt &s);
  virtual void visitWhile(const WhileStmt &s);
  virtual void visitBreak(const BreakStmt &s) {}
  virtual void visitContinue(const ContinueStmt &s) {}
  virtual void visitReturn(const ReturnStmt &s);
  /// Ranges, then each argument's GlobalRead value.
  virtual void visitParLoop(const ParLoopStmt &s);
  virtual void visitSwap(const SwapStmt &s) {}
  virtual void visitDatIO(const DatIOStmt &s);
  virtual void visitPrint(const PrintStmt &s);
  virtual void visitSolve(const SolveStmt &s);
  /// Both default to visitDerivative.
  virtual void visitAdjoint(const AdjointStmt &s);
  virtual void visitTangent(const TangentStmt &s);
  virtual void visitTape(const TapeStmt &s) {}
  virtual void visitCheckpoint(const CheckpointStmt &s);
  /// Call arguments, each entry's value, then an adjoint's checkpoints.
  virtual void visitDerivative(const DerivativeStmt &s);

  virtual void visitConstant(const ConstantExpr &e) {}
  virtual void visitVarRef(const VarRefExpr &e) {}
  virtual void visitParamRef(const ParamRefExpr &e) {}
  virtual void visitKernelArg(const KernelArgExpr &e) {}
  virtual void visitUnary(const UnaryExpr &e);
  virtual void visitBinary(const BinaryExpr &e);
  virtual void visitCast(const CastExpr &e);
  virtual void visitIndex(const IndexExpr &e);
  virtual void visitIntrinsic(const IntrinsicExpr &e);
  virtual void visitCall(const CallExpr &e);
  virtual void visitArrayLit(const ArrayLitExpr &e);
  virtual void visitSizeOf(const SizeOfExpr &e) {}

protected:
  /// The function being walked (null for globals and for walks started at a
  /// Body or expression without visitFunction).
  const Function *currentFunction = nullptr;

private:
  void visitOptional(const ExprPtr &e) {
    if (e)
      visitExpr(*e);
  }
};

} // namespace opdc::ir
#endif
