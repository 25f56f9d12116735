// LowerImpl.h - The Lowerer shared by Lower.cpp, LowerStmts.cpp and
// LowerExprs.cpp (internal to compiler/lower).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_LOWER_LOWERIMPL_H
#define OPDC_LOWER_LOWERIMPL_H

#include "ast/AST.h"
#include "ir/IRBuilder.h"
#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

#include <map>
#include <set>
#include <unordered_map>

namespace opdc::lower {

using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;
using llvm::isa;
using B = ir::IRBuilder;

inline bool isValueType(Type t) { return t.isScalar() || t.isArray() || t.isString(); }

/// Rank for choosing a common type when sema left operands of different
/// types (it should not): wider floats over narrower, floats over integers.
inline int rank(ScalarKind k) {
  switch (k) {
  case ScalarKind::Bool:
    return 0;
  case ScalarKind::I32:
    return 1;
  case ScalarKind::I64:
    return 2;
  case ScalarKind::F32:
    return 3;
  case ScalarKind::F64:
    return 4;
  }
  return 0;
}

/// Lowers one annotated ast::Program; the member functions live in
/// Lower.cpp (globals), LowerStmts.cpp and LowerExprs.cpp.
class Lowerer {
public:
  Lowerer(const ast::Program &p, DiagnosticEngine &d)
      : ast(p), diags(d), prog(std::make_unique<ir::Program>()), build(*prog) {}
  std::unique_ptr<ir::Program> run();

private:
  // Per-function state.
  struct FnState {
    ir::Function *fn = nullptr;
    std::unordered_map<const ast::Decl *, unsigned> slots;
    const ast::KernelDecl *kernel = nullptr;
    std::unordered_map<const ast::KernelParamDecl *, unsigned> kparams;
  };

  void fail(SourceRange r, const std::string &what);

  // Passes.
  void createGlobals();
  void fillGlobals();
  void lowerBodies();

  // Declarations.
  void fillDat(const ast::DatDecl &d, ir::Dat &out);
  void signature(const std::vector<std::unique_ptr<ast::VarDecl>> &params,
                 const std::optional<ast::TypeRef> &ret, ir::Function &f,
                 FnState &st);

  // Statements.
  void lowerBlock(const ast::Block &b, ir::Body &out);
  void lowerStmt(const ast::Stmt &s, ir::Body &out);
  /// print, printf and fail (the message after the statement's location).
  void lowerPrint(const ast::PrintStmt &p, ir::Body &out);
  /// A solve: cg (lowerSolveCG) or tridiagonal.
  void lowerSolve(const ast::SolveStmt &v, ir::Body &out);
  ir::Body lowerElse(const ast::Stmt *s);
  void lowerLoop(const ast::LoopStmt &s, ir::Body &out);
  /// An adjoint or tangent request; gradientOf and directionOf fill in
  /// what an entry of each kind adds to its target.
  void lowerDerivative(const ast::DerivativeStmt &s, ir::Body &out);
  void gradientOf(const ast::AdjointStmt &s, const ast::NameRef &w,
                  const ir::Function &proc, ir::DerivEntry &e);
  void directionOf(const ast::TangentStmt::Seed &seed,
                   const ir::Function &proc, ir::DerivEntry &e);
  std::vector<ir::LoopRange> lowerRanges(const std::vector<ast::RangeExpr> &rs);
  ir::LoopRange lowerRange(const ast::RangeExpr &r, Type t);
  unsigned newSlot(const ast::VarDecl &v, Type t, bool isMutable);
  void lowerSolveCG(const ast::SolveStmt &v, ir::Body &out);
  ir::Dat *datOf(const ast::Expr &e);
  ir::DerivTarget derivTarget(const ast::Decl *d, const ast::ProcDecl *proc,
                              SourceRange at);

  // Expressions.
  ir::ExprPtr expr(const ast::Expr &e);
  ir::ExprPtr exprOr(const ast::ExprPtr &e, Type fallback, SourceRange at);
  /// \p e lowered and converted to \p t.
  ir::ExprPtr exprAs(const ast::Expr &e, Type t);
  ir::ExprPtr lvalue(const ast::Expr &e);
  ir::ExprPtr call(const ast::CallExpr &e);
  ir::ExprPtr intrinsic(const ast::CallExpr &e);
  ir::ExprPtr name(const ast::NameExpr &e);
  ir::ExprPtr constant(const ConstValue &v, Type t, SourceRange r);
  /// Makes \p e of type \p t (Cast, or converts a Constant in place).
  ir::ExprPtr coerce(ir::ExprPtr e, Type t);
  /// True when \p e is made of literals and consts only, so its folded
  /// value may replace it.
  bool foldable(const ast::Expr &e) const;
  ir::ExprPtr placeholder(Type t) {
    return B::constant(
        ir::zeroOf(isValueType(t) ? t : Type::scalarOf(ScalarKind::I32)));
  }

  const ast::Program &ast;
  DiagnosticEngine &diags;
  std::unique_ptr<ir::Program> prog;
  ir::IRBuilder build;
  bool failed = false;
  FnState st; ///< the function being lowered (fn null for globals)

  std::unordered_map<const ast::Decl *, ir::Param *> params;
  std::unordered_map<const ast::Decl *, ir::Set *> sets;
  std::unordered_map<const ast::Decl *, ir::Map *> maps;
  std::unordered_map<const ast::Decl *, ir::Block *> blocks;
  std::unordered_map<const ast::Decl *, ir::Stencil *> stencils;
  std::unordered_map<const ast::Decl *, ir::Dat *> dats;
  std::unordered_map<const ast::Decl *, ir::Function *> functions;
  std::unordered_map<const ir::Function *, FnState> states;
  std::set<std::string> datNames;
};

} // namespace opdc::lower
#endif
