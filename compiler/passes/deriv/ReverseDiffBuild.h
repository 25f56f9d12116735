// ReverseDiffBuild.h - Short builders of IR nodes, each with its type
// given, as reverse-mode differentiation writes them (ReverseDiff.cpp,
// KernelAdjoint.cpp).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_DERIV_REVERSEDIFFBUILD_H
#define OPDC_PASSES_DERIV_REVERSEDIFFBUILD_H

#include "ir/IR.h"

#include <memory>
#include <vector>

namespace opdc::rdiff {

using namespace ir;

inline ExprPtr zero(Type t) {
  return std::make_unique<ConstantExpr>(zeroOf(t));
}
inline ExprPtr ref(unsigned slot, Type t) {
  return std::make_unique<VarRefExpr>(slot, t);
}
inline ExprPtr bin(BinaryOp op, ExprPtr a, ExprPtr b) {
  return std::make_unique<BinaryExpr>(op, std::move(a), std::move(b));
}
inline ExprPtr neg(ExprPtr a) {
  return std::make_unique<UnaryExpr>(UnaryOp::Neg, std::move(a));
}
inline ExprPtr cint(int64_t v) {
  return std::make_unique<ConstantExpr>(ConstValue::ofInt(ScalarKind::I32, v));
}
inline ExprPtr index(ExprPtr base, ExprPtr i) {
  return std::make_unique<IndexExpr>(std::move(base), std::move(i));
}
inline StmtPtr assign(AssignOp op, ExprPtr t, ExprPtr v) {
  return std::make_unique<AssignStmt>(op, std::move(t), std::move(v));
}
inline ExprPtr select(ExprPtr c, ExprPtr a, ExprPtr b) {
  std::vector<ExprPtr> args;
  args.push_back(std::move(c));
  args.push_back(std::move(a));
  args.push_back(std::move(b));
  return std::make_unique<IntrinsicExpr>(Intrinsic::Select, std::move(args));
}

} // namespace opdc::rdiff
#endif
