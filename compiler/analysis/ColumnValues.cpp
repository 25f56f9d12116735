// ColumnValues.cpp - Kernel values a block loop computes once per column
// (ColumnValues.h).
// SPDX-License-Identifier: Apache-2.0
#include "analysis/ColumnValues.h"

#include "ast/ScalarSemantics.h"
#include "ir/IRVisitor.h"

#include "llvm/Support/Casting.h"

#include <map>
#include <optional>
#include <set>

namespace opdc {
namespace {
using namespace ir;
using llvm::cast;
using llvm::dyn_cast;

/// Whether \p s may leave the kernel or a loop early (a return, break or
/// continue anywhere in it): statements after it may not run.
bool mayLeave(const Stmt &s) {
  struct Find : IRVisitor {
    bool found = false;
    void visitReturn(const ReturnStmt &) override { found = true; }
    void visitBreak(const BreakStmt &) override { found = true; }
    void visitContinue(const ContinueStmt &) override { found = true; }
  } find;
  find.visitStmt(s);
  return find.found;
}

/// A C library function (tens of cycles a call).
bool isLibmCall(const Expr &e) {
  const auto *in = dyn_cast<IntrinsicExpr>(&e);
  if (!in)
    return false;
  const scalar::FloatIntrinsic *f = scalar::floatIntrinsic(in->id);
  return f && f->agreement == scalar::Agreement::Libm;
}

class Finder {
public:
  explicit Finder(bool callRootsOnly) : callRootsOnly(callRootsOnly) {}

  void run(const Function &kernel) {
    for (const StmtPtr &s : kernel.body.stmts) {
      if (mayLeave(*s))
        break;
      if (const auto *d = dyn_cast<DeclStmt>(s.get())) {
        collect(*d->init);
        const Var &v = kernel.vars[d->slot];
        if (!v.isMutable && v.type.isScalar())
          if (std::optional<bool> idx0 = columnOnly(*d->init))
            lets[d->slot] = {d, *idx0};
      } else if (const auto *a = dyn_cast<AssignStmt>(s.get())) {
        collect(*a->value);
      } else if (const auto *i = dyn_cast<IfStmt>(s.get())) {
        collect(*i->cond);
      }
    }
    std::set<unsigned> needed;
    for (const Expr *e : result.values)
      need(*e, needed);
    for (const StmtPtr &s : kernel.body.stmts)
      if (const auto *d = dyn_cast<DeclStmt>(s.get());
          d && needed.count(d->slot))
        result.decls.push_back(d);
  }

  ColumnValues result;

private:
  struct Let {
    const DeclStmt *decl;
    bool usesIdx0;
  };
  std::map<unsigned, Let> lets;
  bool callRootsOnly;

  /// When \p e depends on nothing but idx(0) and invariants and cannot trap:
  /// whether it uses idx(0); nullopt otherwise.
  std::optional<bool> columnOnly(const Expr &e) const {
    if (!e.type.isScalar())
      return std::nullopt;
    auto all =
        [&](const std::vector<const Expr *> &ops) -> std::optional<bool> {
      bool uses = false;
      for (const Expr *op : ops) {
        std::optional<bool> u = columnOnly(*op);
        if (!u)
          return std::nullopt;
        uses = uses || *u;
      }
      return uses;
    };
    switch (e.kind) {
    case ExprKind::Constant:
    case ExprKind::ParamRef:
      return false;
    case ExprKind::VarRef: {
      auto it = lets.find(cast<VarRefExpr>(e).slot);
      if (it == lets.end())
        return std::nullopt;
      return it->second.usesIdx0;
    }
    case ExprKind::Unary:
      return columnOnly(*cast<UnaryExpr>(e).operand);
    case ExprKind::Cast:
      return columnOnly(*cast<CastExpr>(e).operand);
    case ExprKind::Binary: {
      const auto &b = cast<BinaryExpr>(e);
      // Integer division and remainder stop the program on a zero divisor,
      // and shifts by a count that is not a constant are checked.
      if ((b.op == BinaryOp::Div || b.op == BinaryOp::Rem) &&
          !b.lhs->type.isFloatScalar())
        return std::nullopt;
      if ((b.op == BinaryOp::Shl || b.op == BinaryOp::Shr) &&
          !llvm::isa<ConstantExpr>(*b.rhs))
        return std::nullopt;
      return all({b.lhs.get(), b.rhs.get()});
    }
    case ExprKind::Intrinsic: {
      const auto &in = cast<IntrinsicExpr>(e);
      if (in.id == Intrinsic::Idx) {
        const auto *c = dyn_cast<ConstantExpr>(in.args[0].get());
        if (c && c->value.asInt(0) == 0)
          return true;
        return std::nullopt;
      }
      bool pure = scalar::floatIntrinsic(in.id) || in.id == Intrinsic::Min ||
                  in.id == Intrinsic::Max || in.id == Intrinsic::Select ||
                  in.id == Intrinsic::IsNan || in.id == Intrinsic::IsFinite;
      if (!pure)
        return std::nullopt;
      std::vector<const Expr *> ops;
      for (const ExprPtr &a : in.args)
        ops.push_back(a.get());
      return all(ops);
    }
    default: // kernel arguments, indexing, calls, array literals
      return std::nullopt;
    }
  }

  /// Whether \p e itself (not through variables) calls the C library.
  static bool callsLibm(const Expr &e) {
    struct Find : IRVisitor {
      bool found = false;
      void visitIntrinsic(const IntrinsicExpr &e) override {
        found = found || isLibmCall(e);
        IRVisitor::visitIntrinsic(e);
      }
    } find;
    find.visitExpr(e);
    return find.found;
  }

  /// Records the maximal column values in \p e.
  void collect(const Expr &e) {
    std::optional<bool> col = columnOnly(e);
    if (col && *col && e.type.isNumeric() && callsLibm(e) &&
        (!callRootsOnly || isLibmCall(e))) {
      result.values.push_back(&e);
      return;
    }
    switch (e.kind) {
    case ExprKind::Unary:
      collect(*cast<UnaryExpr>(e).operand);
      break;
    case ExprKind::Cast:
      collect(*cast<CastExpr>(e).operand);
      break;
    case ExprKind::Binary: {
      const auto &b = cast<BinaryExpr>(e);
      collect(*b.lhs);
      // The right operand of && and || runs only when the left decides
      // nothing: not on every run.
      if (!isLogical(b.op))
        collect(*b.rhs);
      break;
    }
    case ExprKind::Intrinsic: {
      const auto &in = cast<IntrinsicExpr>(e);
      // select() evaluates the operand it needs only.
      if (in.id == Intrinsic::Select) {
        collect(*in.args[0]);
        break;
      }
      for (const ExprPtr &a : in.args)
        collect(*a);
      break;
    }
    case ExprKind::Index:
      collect(*cast<IndexExpr>(e).base);
      collect(*cast<IndexExpr>(e).index);
      break;
    default: // calls' arguments are left alone: the callee may not run them
      break;
    }
  }

  /// Adds the `let` slots \p e reads, and theirs, to \p needed.
  void need(const Expr &e, std::set<unsigned> &needed) const {
    struct Refs : IRVisitor {
      std::vector<unsigned> slots;
      void visitVarRef(const VarRefExpr &e) override {
        slots.push_back(e.slot);
      }
    } refs;
    refs.visitExpr(e);
    for (unsigned slot : refs.slots)
      if (needed.insert(slot).second)
        need(*lets.at(slot).decl->init, needed);
  }
};

} // namespace

ColumnValues findColumnValues(const ir::Function &kernel, unsigned dims,
                              bool callRootsOnly) {
  if (!kernel.isKernel() || dims < 2)
    return {};
  Finder finder(callRootsOnly);
  finder.run(kernel);
  return std::move(finder.result);
}

} // namespace opdc
