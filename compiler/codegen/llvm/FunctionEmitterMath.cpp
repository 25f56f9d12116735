// FunctionEmitterMath.cpp - Bit operations and the <math.h> intrinsics.
// SPDX-License-Identifier: Apache-2.0
//
// The transcendental functions (asin ... erfc) are calls of the C library's
// own functions (asinf for f32, asin for f64), marked nobuiltin: LLVM may
// neither fold them with its own arithmetic nor rewrite them into other
// calls, so at -O0 and -O3 alike the program computes exactly what the C
// library computes, which is also what sema folds constants with. They are
// memory(none) (a program cannot read errno), so they are hoisted and
// combined like any pure call, but not vectorised: glibc's vector variants
// (libmvec) differ from the scalar functions in the last bits, and a loop's
// results would then depend on which elements ran in the vector body
// (bench/libmvec/libmvec_accuracy.c measures by how much). -fveclib=libmvec
// drops nobuiltin so that the vectoriser may use them.
// trunc, round and copysign are exact operations and use LLVM's intrinsics
// (which vectorise); fmod is `frem`, also exact; isnan and isfinite are
// comparisons.
#include "codegen/llvm/FunctionEmitter.h"

#include "ast/ScalarSemantics.h"

#include "support/Assert.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/Support/Casting.h"

namespace opdc {

using namespace ir;

llvm::Value *FunctionEmitter::emitBitwise(ir::BinaryOp op, llvm::Value *l,
                                          llvm::Value *r, SourceRange where) {
  switch (op) {
  case BinaryOp::BitAnd:
    return b.CreateAnd(l, r);
  case BinaryOp::BitOr:
    return b.CreateOr(l, r);
  case BinaryOp::BitXor:
    return b.CreateXor(l, r);
  default:
    break;
  }
  OPDC_ASSERT(isShift(op), "not a bit operation");
  // A shift by the bit width or more (or a negative count) is poison in
  // LLVM and undefined in C; sema rejects constant counts out of range,
  // the others are checked here.
  unsigned width = l->getType()->getIntegerBitWidth();
  if (!llvm::isa<llvm::ConstantInt>(r))
    emitRuntimeCheck(
        b.CreateICmpUGE(r, llvm::ConstantInt::get(r->getType(), width)), where,
        "shift count out of range for i" + llvm::Twine(width) + " (0 to " +
            llvm::Twine(width - 1) + ")");
  return op == BinaryOp::Shl ? b.CreateShl(l, r) : b.CreateAShr(l, r);
}

llvm::Value *FunctionEmitter::emitExactLibmCall(
    const char *name, ScalarKind k, llvm::ArrayRef<llvm::Value *> args) {
  std::string fname = name;
  if (k == ScalarKind::F32)
    fname += "f";
  llvm::Type *ty = cgm.regType(k);
  std::vector<llvm::Type *> params(args.size(), ty);
  auto callee = cgm.module.getOrInsertFunction(
      fname, llvm::FunctionType::get(ty, params, false));
  if (auto *f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    f->addFnAttr(llvm::Attribute::NoUnwind);
    f->addFnAttr(llvm::Attribute::WillReturn);
    f->setDoesNotAccessMemory();
  }
  llvm::CallInst *call = b.CreateCall(callee, args);
  // -fveclib=libmvec: a library call the vectoriser may replace.
  if (!cgm.options.vecLibMvec)
    call->addFnAttr(llvm::Attribute::NoBuiltin);
  return call;
}

llvm::Value *FunctionEmitter::emitMathLib(const ir::IntrinsicExpr &e,
                                          llvm::ArrayRef<llvm::Value *> args) {
  ScalarKind k = isFloatPredicate(e.id) ? e.args[0]->type.scalar
                                        : e.type.scalar;
  auto libm = [&](const char *name) {
    return emitExactLibmCall(name, k, args);
  };
  // The C library's functions (ast/ScalarSemantics.h, agreement Libm).
  if (const scalar::FloatIntrinsic *f = scalar::floatIntrinsic(e.id);
      f && f->agreement == scalar::Agreement::Libm)
    return libm(f->libm);
  switch (e.id) {
  case Intrinsic::Copysign:
    return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, args[0],
                                   args[1]);
  case Intrinsic::Fmod:
    return b.CreateFRem(args[0], args[1]);
  case Intrinsic::Trunc:
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, args[0]);
  case Intrinsic::Round:
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::round, args[0]);
  case Intrinsic::IsNan:
    return b.CreateFCmpUNO(args[0], args[0]);
  case Intrinsic::IsFinite: {
    // |x| < inf: false for both infinities and for NaN.
    llvm::Value *a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, args[0]);
    return b.CreateFCmpOLT(
        a, llvm::ConstantFP::getInfinity(args[0]->getType()));
  }
  default:
    return nullptr;
  }
}

} // namespace opdc
