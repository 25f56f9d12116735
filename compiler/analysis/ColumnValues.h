// ColumnValues.h - Kernel values a block loop computes once per column.
// SPDX-License-Identifier: Apache-2.0
//
// A block loop's kernel often computes a coordinate's function with a math
// library call: OPS's Poisson populate kernel computes sin(pi x) from
// idx(0) and cos(2 pi y) from idx(1) at every point. The value of idx(1)
// alone is invariant in the row (the innermost loop) and LLVM's LICM moves
// it out of the row (sin, cos ... are speculatable LLVM intrinsics, the
// other library calls are memory(none) and run at the top of the row's
// body). A value of idx(0) alone changes along the row and repeats from row
// to row; the CPU backend computes each such value once per column into a
// table over the loop's columns, which the rows read (codegen/llvm/
// ColumnTables.cpp; docs/decisions/0460-column-tables.md).
//
// A column value is a maximal sub-expression of the kernel that
//   * the kernel evaluates on every run: in a statement at the top of the
//     kernel's body (a declaration's value, an assignment's value, an
//     `if`'s condition), before any statement that may leave it;
//   * depends on idx(0) and on nothing that varies otherwise: constants,
//     params (never changed after the program starts), `let` variables
//     declared at the top of the body from such values, idx(0);
//   * is made of operations that cannot trap or write: arithmetic (integer
//     division and remainder, checked for zero, are left out), comparisons,
//     casts, select, the math functions; no array indexing (checked), no
//     calls of fns, no random numbers, no kernel arguments;
//   * calls a function of the C library (exp, log, pow, sin ... erfc:
//     Agreement::Libm in ast/ScalarSemantics.h): tens of cycles a point,
//     against a load from the table;
//   * is a number (not a bool or an array).
// The table computes each value with the same operations on the same
// operands as the kernel would, so the bits are the same. With
// -ffp-contract=fast a value must itself be the library call: a
// multiplication at the root could otherwise fuse with the addition that
// consumes it in the kernel but not across the table.
#ifndef OPDC_ANALYSIS_COLUMNVALUES_H
#define OPDC_ANALYSIS_COLUMNVALUES_H

#include <vector>

namespace opdc::ir {
struct DeclStmt;
struct Expr;
struct Function;
} // namespace opdc::ir

namespace opdc {

struct ColumnValues {
  /// The values, in the order the kernel evaluates them.
  std::vector<const ir::Expr *> values;
  /// The `let` declarations at the top of the kernel's body that the values
  /// read, directly or through other such declarations, in kernel order:
  /// what the table's loop evaluates before the values.
  std::vector<const ir::DeclStmt *> decls;
  bool empty() const { return values.empty(); }
};

/// The column values of \p kernel run by a block loop of \p dims
/// dimensions (none for one dimension: a row is the whole loop).
/// \p callRootsOnly: -ffp-contract=fast, only library calls themselves.
ColumnValues findColumnValues(const ir::Function &kernel, unsigned dims,
                              bool callRootsOnly);

} // namespace opdc

#endif
