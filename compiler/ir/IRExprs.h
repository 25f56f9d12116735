// IRExprs.h - The Program IR: enumerations and expressions.
// SPDX-License-Identifier: Apache-2.0
//
// Split from IR.h, which includes it and describes the IR as a whole:
// expressions depend on nothing else of the IR but names of globals, so
// they and the enumerations they use live here. Include ir/IR.h, not this.
#ifndef OPDC_IR_IREXPRS_H
#define OPDC_IR_IREXPRS_H

#include "ast/Operators.h"
#include "ast/Type.h"
#include "support/SourceRange.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace opdc::ir {

struct Set;
struct Map;
struct Block;
struct Stencil;
struct Dat;
struct Param;
struct Function;

//===----------------------------------------------------------------------===//
// Enumerations
//===----------------------------------------------------------------------===//

// The enumerations shared with the AST (ast/Operators.h): ir::AccessMode,
// ir::ArgKind, ir::UnaryOp, ir::BinaryOp, ir::AssignOp, ir::Intrinsic (never
// None or Size in the IR: `size` is a SizeOfExpr) and ir::DatInit (Fill:
// Dat::initValue, File: Dat::initFile).
using opdc::AccessMode;
using opdc::accessModeName;
using opdc::ArgKind;
using opdc::argKindName;
using opdc::AssignOp;
using opdc::BinaryOp;
using opdc::binaryOpOf;
using opdc::DatInit;
using opdc::Intrinsic;
using opdc::intrinsicArity;
using opdc::intrinsicName;
using opdc::isArithmetic;
using opdc::isComparison;
using opdc::isLogical;
using opdc::isReduction;
using opdc::modeReads;
using opdc::modeWrites;
using opdc::spelling;
using opdc::UnaryOp;

enum class SolverKind : uint8_t { Tridiagonal, CG };
const char *solverName(SolverKind k);

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

enum class ExprKind : uint8_t {
  Constant,  ///< a typed compile-time value (scalar, array or string)
  VarRef,    ///< a local variable slot of the enclosing Function
  ParamRef,  ///< a run-time param (global, read-only)
  KernelArg, ///< a parameter of the enclosing kernel, maybe at an offset
  Unary,
  Binary,
  Cast,  ///< conversion between scalar types, explicit or implicit
  Index, ///< one component of an array value
  Intrinsic,
  Call,     ///< a fn (kernels, fns) or proc (host) call
  ArrayLit, ///< a non-constant array value [a, b]
  SizeOf,   ///< size(set) or size(dat, d): host only
};

struct Expr {
  const ExprKind kind;
  Type type;
  SourceRange range;

  Expr(ExprKind k, Type t, SourceRange r) : kind(k), type(t), range(r) {}
  virtual ~Expr() = default;
  /// Deep copy; cross references and slots are kept as they are.
  virtual std::unique_ptr<Expr> clone() const = 0;
};
using ExprPtr = std::unique_ptr<Expr>;

struct ConstantExpr : Expr {
  ConstValue value; ///< value.type == type
  explicit ConstantExpr(ConstValue v, SourceRange r = {})
      : Expr(ExprKind::Constant, v.type, r), value(std::move(v)) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::Constant; }
  ExprPtr clone() const override;
};

struct VarRefExpr : Expr {
  unsigned slot; ///< index into Function::vars
  VarRefExpr(unsigned s, Type t, SourceRange r = {})
      : Expr(ExprKind::VarRef, t, r), slot(s) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::VarRef; }
  ExprPtr clone() const override;
};

struct ParamRefExpr : Expr {
  Param *param;
  explicit ParamRefExpr(Param *p, SourceRange r = {});
  static bool classof(const Expr *e) { return e->kind == ExprKind::ParamRef; }
  ExprPtr clone() const override;
};

/// Parameter `index` of the enclosing kernel. For a stencil parameter,
/// `offset` holds one constant offset per dimension (the centre is all
/// zeros); for other parameters it is empty. The type is the parameter's
/// element type (scalar or array); components are read through IndexExpr.
struct KernelArgExpr : Expr {
  unsigned index;
  std::vector<int64_t> offset;
  KernelArgExpr(unsigned i, Type t, std::vector<int64_t> off = {},
                SourceRange r = {})
      : Expr(ExprKind::KernelArg, t, r), index(i), offset(std::move(off)) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::KernelArg; }
  ExprPtr clone() const override;
};

struct UnaryExpr : Expr {
  UnaryOp op;
  ExprPtr operand;
  /// The type is the operand's (bool for Not).
  UnaryExpr(UnaryOp o, ExprPtr e, SourceRange r = {});
  static bool classof(const Expr *e) { return e->kind == ExprKind::Unary; }
  ExprPtr clone() const override;
};

struct BinaryExpr : Expr {
  BinaryOp op;
  ExprPtr lhs, rhs;
  /// The type is bool for comparisons and logical operators, else the
  /// operands' (which must be the same).
  BinaryExpr(BinaryOp o, ExprPtr l, ExprPtr rr, SourceRange r = {});
  static bool classof(const Expr *e) { return e->kind == ExprKind::Binary; }
  ExprPtr clone() const override;
};

struct CastExpr : Expr {
  ExprPtr operand;
  CastExpr(ScalarKind to, ExprPtr e, SourceRange r = {});
  ScalarKind to() const { return type.scalar; }
  static bool classof(const Expr *e) { return e->kind == ExprKind::Cast; }
  ExprPtr clone() const override;
};

struct IndexExpr : Expr {
  ExprPtr base, index;
  /// The type is the base array's element scalar.
  IndexExpr(ExprPtr b, ExprPtr i, SourceRange r = {});
  static bool classof(const Expr *e) { return e->kind == ExprKind::Index; }
  ExprPtr clone() const override;
};

struct IntrinsicExpr : Expr {
  Intrinsic id;
  std::vector<ExprPtr> args;
  /// The type follows from the intrinsic and its arguments (see
  /// intrinsicResultType).
  IntrinsicExpr(Intrinsic i, std::vector<ExprPtr> a, SourceRange r = {});
  static bool classof(const Expr *e) { return e->kind == ExprKind::Intrinsic; }
  ExprPtr clone() const override;
};
/// Result type of \p id applied to \p args: f64 for Wtime, i32 for Idx, the
/// second argument's for Select, the first argument's otherwise.
Type intrinsicResultType(Intrinsic id, const std::vector<ExprPtr> &args);

struct CallExpr : Expr {
  Function *callee;
  std::vector<ExprPtr> args;
  /// The type is the callee's return type (void for a statement call).
  CallExpr(Function *f, std::vector<ExprPtr> a, SourceRange r = {});
  static bool classof(const Expr *e) { return e->kind == ExprKind::Call; }
  ExprPtr clone() const override;
};

struct ArrayLitExpr : Expr {
  std::vector<ExprPtr> elements; ///< scalars of one type, at least one
  explicit ArrayLitExpr(std::vector<ExprPtr> e, SourceRange r = {});
  static bool classof(const Expr *e) { return e->kind == ExprKind::ArrayLit; }
  ExprPtr clone() const override;
};

/// `size(set)` (dat null) or `size(dat, dim)` (set null): a run-time extent.
struct SizeOfExpr : Expr {
  Set *set = nullptr;
  Dat *dat = nullptr;
  unsigned dim = 0;
  SizeOfExpr(Set *s, Dat *d, unsigned dm, Type t, SourceRange r = {})
      : Expr(ExprKind::SizeOf, t, r), set(s), dat(d), dim(dm) {}
  static bool classof(const Expr *e) { return e->kind == ExprKind::SizeOf; }
  ExprPtr clone() const override;
};

/// Clones \p e, or returns null for null.
inline ExprPtr cloneExpr(const ExprPtr &e) { return e ? e->clone() : nullptr; }

} // namespace opdc::ir
#endif
