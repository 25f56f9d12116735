// SwapCopyBackCheck.cpp - The run-time check of swap-copy-back: loops that
// find where two dats hold different bits (see SwapCopyBack.cpp).
// SPDX-License-Identifier: Apache-2.0
//
// swap-copy-back swaps a time loop's copy back only where the two dats
// hold the same bits outside the copied range; these loops find out, one
// per slab of that complement, with a max-reduction that every backend
// and the MPI runtime already combine across threads, blocks and ranks.
// Floats compare equal and of the same sign: -0.0 against 0.0 differs (a
// swap would show the other zero), and NaN never compares equal (such
// dats keep the loop as written, a conservative answer).
#include "passes/loops/SwapCopyBackCheck.h"

#include "ir/IR.h"

#include <memory>
#include <string>

namespace opdc {

using namespace ir;

namespace {

ExprPtr intConst(ScalarKind k, int64_t v) {
  return std::make_unique<ConstantExpr>(ConstValue::ofInt(k, v));
}

ExprPtr binary(BinaryOp op, ExprPtr a, ExprPtr b) {
  return std::make_unique<BinaryExpr>(op, std::move(a), std::move(b));
}

/// Kernel swap_copy_back.differ_T(a, b, n: max i32): n = 1 where a and b
/// differ in their bits (floats: unequal, or equal of opposite signs).
Function *differKernel(Program &program, Type elem) {
  std::string name = std::string("swap_copy_back.differ_") +
                     scalarName(elem.scalar) +
                     (elem.isArray() ? "x" + std::to_string(elem.dim()) : "");
  if (Function *k = program.findKernel(name))
    return k;
  auto f = std::make_unique<Function>();
  f->kind = FunctionKind::Kernel;
  f->name = name;
  f->kernelParams.push_back({"a", AccessMode::Read, elem, nullptr, {}});
  f->kernelParams.push_back({"b", AccessMode::Read, elem, nullptr, {}});
  f->kernelParams.push_back(
      {"n", AccessMode::Max, Type::scalarOf(ScalarKind::I32), nullptr, {}});
  const Type i32 = Type::scalarOf(ScalarKind::I32);
  auto component = [&](unsigned p, int slot) -> ExprPtr {
    ExprPtr e = std::make_unique<KernelArgExpr>(p, elem);
    if (slot < 0)
      return e;
    return std::make_unique<IndexExpr>(
        std::move(e), std::make_unique<VarRefExpr>(unsigned(slot), i32));
  };
  auto update = [&](int slot) -> StmtPtr {
    ExprPtr same = binary(BinaryOp::Eq, component(0, slot), component(1, slot));
    if (isFloat(elem.scalar)) {
      auto sign = [&](unsigned p) {
        std::vector<ExprPtr> args;
        args.push_back(std::make_unique<ConstantExpr>(
            ConstValue::ofFloat(elem.scalar, 1.0)));
        args.push_back(component(p, slot));
        return std::make_unique<IntrinsicExpr>(Intrinsic::Copysign,
                                               std::move(args));
      };
      same = binary(BinaryOp::And, std::move(same),
                    binary(BinaryOp::Eq, sign(0), sign(1)));
    }
    std::vector<ExprPtr> pick;
    pick.push_back(std::move(same));
    pick.push_back(intConst(ScalarKind::I32, 0));
    pick.push_back(intConst(ScalarKind::I32, 1));
    std::vector<ExprPtr> most;
    most.push_back(std::make_unique<KernelArgExpr>(2, i32));
    most.push_back(
        std::make_unique<IntrinsicExpr>(Intrinsic::Select, std::move(pick)));
    return std::make_unique<AssignStmt>(
        AssignOp::Set, std::make_unique<KernelArgExpr>(2, i32),
        std::make_unique<IntrinsicExpr>(Intrinsic::Max, std::move(most)));
  };
  if (!elem.isArray()) {
    f->body.stmts.push_back(update(-1));
  } else {
    const unsigned i = f->addVar("i", i32, false);
    Body each;
    each.stmts.push_back(update(int(i)));
    f->body.stmts.push_back(std::make_unique<ForStmt>(
        i, intConst(ScalarKind::I32, 0),
        intConst(ScalarKind::I32, int64_t(elem.dim())), std::move(each)));
  }
  Function *k = f.get();
  program.kernels.push_back(std::move(f));
  return k;
}

} // namespace

StmtPtr differLoop(Program &program, Dat *a, Dat *b,
                   std::vector<LoopRange> range, unsigned differ,
                   SourceRange at) {
  auto loop = std::make_unique<ParLoopStmt>(at);
  loop->kernel = differKernel(program, a->elemType);
  loop->block = a->block;
  loop->ranges = std::move(range);
  for (Dat *d : {a, b}) {
    AccessDescriptor x;
    x.kind = ArgKind::Direct;
    x.mode = AccessMode::Read;
    x.scalar = d->scalar();
    x.dim = d->dim();
    x.bytes = d->bytesPerElement();
    x.dat = d;
    x.range = at;
    loop->args.push_back(std::move(x));
  }
  AccessDescriptor r;
  r.kind = ArgKind::Reduction;
  r.mode = AccessMode::Max;
  r.scalar = ScalarKind::I32;
  r.dim = 1;
  r.bytes = 4;
  r.var = int(differ);
  r.range = at;
  loop->args.push_back(std::move(r));
  return loop;
}

} // namespace opdc
