// FunctionEmitter.cpp - Statements and expressions of one IR function in LLVM.
// SPDX-License-Identifier: Apache-2.0
//
// The IR is structured and typed, so emission is a direct walk: every
// expression has one LLVM counterpart and no conversion is implicit. Three
// rules keep the generated arithmetic exactly the source's:
//   - floating-point operations carry no fast-math flags (no reassociation,
//     no reciprocal tricks); only -ffp-contract=fast adds `contract`;
//   - integer division and remainder have C's truncating semantics; a zero
//     divisor stops the program with its source location instead of being
//     undefined behaviour, and INT_MIN / -1 wraps;
//   - min/max are `a < b ? a : b` / `a > b ? a : b` (the C macros OP2's
//     kernels use), the same in scalar and vector code.
// `&&`, `||` and select() evaluate only the operand they need, as in C, so a
// guarded division never traps. A select() whose two operands are plain
// reads (constants, variables, params, kernel arguments at their stencil
// offsets: every one readable at every element) reads both and selects the
// value: as a branch, the optimiser sinks the two loads into one load from
// a selected address, which the vectoriser can only do lane by lane (a
// gather for CloverLeaf's upwind selections); two loads and a blend stay
// contiguous vector loads, and the value chosen is the same.
#include "codegen/llvm/FunctionEmitter.h"
#include "codegen/llvm/LoopCodeGen.h"

#include "codegen/llvm/RandomCodeGen.h"

#include "support/Assert.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/Support/Casting.h"

namespace opdc {

using llvm::cast;
using llvm::dyn_cast;
using namespace ir;

FunctionEmitter::FunctionEmitter(CodeGenModule &cgm, const ir::Function &fn,
                                 llvm::Function *llvmFn)
    : cgm(cgm), fn(fn), llvmFn(llvmFn), b(cgm.context) {
  entryBlock = llvm::BasicBlock::Create(cgm.context, "entry", llvmFn);
  b.SetInsertPoint(entryBlock);
  if (cgm.options.fpContract) {
    llvm::FastMathFlags fmf;
    fmf.setAllowContract(true);
    b.setFastMathFlags(fmf);
  }
}

llvm::AllocaInst *FunctionEmitter::createTemp(llvm::Type *t,
                                              const llvm::Twine &name) {
  llvm::IRBuilder<> entry(entryBlock, entryBlock->getFirstInsertionPt());
  return entry.CreateAlloca(t, nullptr, name);
}

void FunctionEmitter::createSlots() {
  slots.clear();
  for (const Var &v : fn.vars)
    slots.push_back(createTemp(cgm.storageType(v.type), v.name));
}

void FunctionEmitter::emitFunction() {
  createSlots();
  for (unsigned i = 0; i < fn.params.size(); ++i) {
    unsigned s = fn.params[i];
    llvm::Value *arg = llvmFn->getArg(i);
    const Type &t = fn.vars[s].type;
    if (t.isBool())
      arg = b.CreateZExt(arg, cgm.i8Ty);
    b.CreateStore(arg, slots[s]);
  }
  emitBody(fn.body);
  finish();
}

void FunctionEmitter::finish() {
  if (b.GetInsertBlock()->getTerminator())
    return;
  if (llvmFn->getReturnType()->isVoidTy())
    b.CreateRetVoid();
  else
    b.CreateUnreachable();
}

void FunctionEmitter::startDeadBlock() {
  b.SetInsertPoint(llvm::BasicBlock::Create(cgm.context, "dead", llvmFn));
}

void FunctionEmitter::emitRuntimeCheck(llvm::Value *failed, SourceRange where,
                                       const llvm::Twine &message) {
  std::string text = (cgm.location(where) + ": " + message).str();
  emitFailIf(failed, cgm.rt.fail, {cgm.string(text)}, "check");
}

void FunctionEmitter::emitFailIf(llvm::Value *failed, llvm::FunctionCallee fail,
                                 llvm::ArrayRef<llvm::Value *> args,
                                 const llvm::Twine &name) {
  auto *failBB = llvm::BasicBlock::Create(cgm.context, name + ".fail", llvmFn);
  auto *okBB = llvm::BasicBlock::Create(cgm.context, name + ".ok", llvmFn);
  llvm::MDBuilder md(cgm.context);
  b.CreateCondBr(failed, failBB, okBB, md.createUnlikelyBranchWeights());
  b.SetInsertPoint(failBB);
  b.CreateCall(fail, args);
  b.CreateUnreachable();
  b.SetInsertPoint(okBB);
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

llvm::Value *FunctionEmitter::loadValue(llvm::Value *ptr, const Type &t,
                                        const llvm::Twine &name) {
  if (t.isArray())
    return ptr;
  llvm::Value *v = b.CreateLoad(cgm.storageType(t), ptr, name);
  if (t.isBool())
    v = b.CreateICmpNE(v, llvm::ConstantInt::get(cgm.i8Ty, 0));
  return v;
}

void FunctionEmitter::storeValue(llvm::Value *v, llvm::Value *ptr,
                                 const Type &t) {
  if (t.isArray()) {
    if (v == ptr)
      return;
    llvm::Type *arrTy = cgm.storageType(t);
    if (t.length > LargeArrayLength) {
      // One memcpy: thousands of scalar copies (a layer's weights passed to
      // a loop) made LLVM's optimiser take seconds per loop.
      llvm::Align align(scalarBytes(t.scalar));
      b.CreateMemCpy(ptr, align, v, align,
                     uint64_t(scalarBytes(t.scalar)) * t.length);
      return;
    }
    // Component by component: in kernels each access is then tagged on its
    // own (TBAA, access groups) and SROA sees plain scalars.
    llvm::Type *elemTy = cgm.memType(t.scalar);
    for (unsigned i = 0; i < t.length; ++i) {
      llvm::Value *src = b.CreateConstInBoundsGEP2_32(arrTy, v, 0, i);
      llvm::Value *dst = b.CreateConstInBoundsGEP2_32(arrTy, ptr, 0, i);
      b.CreateStore(b.CreateLoad(elemTy, src), dst);
    }
    return;
  }
  if (t.isBool())
    v = b.CreateZExt(v, cgm.i8Ty);
  b.CreateStore(v, ptr);
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

void FunctionEmitter::emitBody(const ir::Body &body) {
  for (size_t i = 0; i < body.stmts.size(); ++i) {
    // A skewed group (passes/loops/Fuse.cpp; the verifier checked its shape)
    // runs as one: its loops are the next skew.count statements.
    const auto *l = llvm::dyn_cast<ParLoopStmt>(body.stmts[i].get());
    if (l && l->skew.count > 1 && i + l->skew.count <= body.stmts.size()) {
      std::vector<const ParLoopStmt *> group;
      for (size_t k = i; k < i + l->skew.count; ++k)
        group.push_back(llvm::cast<ParLoopStmt>(body.stmts[k].get()));
      emitSkewedLoops(*this, group.data(), unsigned(group.size()));
      i += l->skew.count - 1;
      continue;
    }
    emitStmt(*body.stmts[i]);
  }
}

void FunctionEmitter::emitStmt(const ir::Stmt &s) {
  switch (s.kind) {
  case StmtKind::Decl: {
    const auto &d = cast<DeclStmt>(s);
    storeValue(emitExpr(*d.init), slots[d.slot], fn.vars[d.slot].type);
    return;
  }
  case StmtKind::Assign:
    return emitAssign(cast<AssignStmt>(s));
  case StmtKind::Eval:
    emitExpr(*cast<EvalStmt>(s).expr);
    return;
  case StmtKind::If:
    return emitIf(cast<IfStmt>(s));
  case StmtKind::For:
    return emitFor(cast<ForStmt>(s));
  case StmtKind::While:
    return emitWhile(cast<WhileStmt>(s));
  case StmtKind::Break:
  case StmtKind::Continue:
    OPDC_ASSERT(!loops.empty(), "break or continue outside a loop");
    b.CreateBr(s.kind == StmtKind::Break ? loops.back().breakTo
                                         : loops.back().continueTo);
    startDeadBlock();
    return;
  case StmtKind::Return:
    return emitReturn(cast<ReturnStmt>(s));
  default:
    return emitHostStmt(s);
  }
}

void FunctionEmitter::emitHostStmt(const ir::Stmt &s) {
  OPDC_UNREACHABLE("host statement outside host code");
}

void FunctionEmitter::emitAssign(const ir::AssignStmt &s) {
  const Type &t = s.target->type;
  llvm::Value *value = emitExpr(*s.value);
  llvm::Value *ptr = emitAddress(*s.target);
  if (s.op == AssignOp::Set)
    return storeValue(value, ptr, t);
  OPDC_ASSERT(t.isScalar(), "compound assignment to a non-scalar");
  llvm::Value *old = loadValue(ptr, t);
  storeValue(emitArithmetic(binaryOpOf(s.op), t.scalar, old, value, s.range),
             ptr, t);
}

void FunctionEmitter::emitIf(const ir::IfStmt &s) {
  llvm::Value *cond = emitExpr(*s.cond);
  auto *thenBB = llvm::BasicBlock::Create(cgm.context, "if.then", llvmFn);
  auto *endBB = llvm::BasicBlock::Create(cgm.context, "if.end");
  llvm::BasicBlock *elseBB = endBB;
  if (!s.elseBody.empty())
    elseBB = llvm::BasicBlock::Create(cgm.context, "if.else", llvmFn);
  b.CreateCondBr(cond, thenBB, elseBB);
  b.SetInsertPoint(thenBB);
  emitBody(s.thenBody);
  b.CreateBr(endBB);
  if (!s.elseBody.empty()) {
    b.SetInsertPoint(elseBB);
    emitBody(s.elseBody);
    b.CreateBr(endBB);
  }
  endBB->insertInto(llvmFn);
  b.SetInsertPoint(endBB);
}

void FunctionEmitter::emitFor(const ir::ForStmt &s) {
  const Type &t = fn.vars[s.slot].type;
  llvm::Value *lo = emitExpr(*s.lo);
  llvm::Value *hi = emitExpr(*s.hi);
  llvm::Value *var = slots[s.slot];
  b.CreateStore(lo, var);
  auto *condBB = llvm::BasicBlock::Create(cgm.context, "for.cond", llvmFn);
  auto *bodyBB = llvm::BasicBlock::Create(cgm.context, "for.body", llvmFn);
  auto *stepBB = llvm::BasicBlock::Create(cgm.context, "for.step");
  auto *endBB = llvm::BasicBlock::Create(cgm.context, "for.end");
  b.CreateBr(condBB);
  b.SetInsertPoint(condBB);
  llvm::Value *i = b.CreateLoad(cgm.storageType(t), var);
  b.CreateCondBr(b.CreateICmpSLT(i, hi), bodyBB, endBB);
  b.SetInsertPoint(bodyBB);
  loops.push_back({endBB, stepBB});
  emitBody(s.body);
  loops.pop_back();
  b.CreateBr(stepBB);
  stepBB->insertInto(llvmFn);
  b.SetInsertPoint(stepBB);
  i = b.CreateLoad(cgm.storageType(t), var);
  b.CreateStore(b.CreateAdd(i, llvm::ConstantInt::get(i->getType(), 1)), var);
  b.CreateBr(condBB);
  endBB->insertInto(llvmFn);
  b.SetInsertPoint(endBB);
}

void FunctionEmitter::emitWhile(const ir::WhileStmt &s) {
  auto *condBB = llvm::BasicBlock::Create(cgm.context, "while.cond", llvmFn);
  auto *bodyBB = llvm::BasicBlock::Create(cgm.context, "while.body");
  auto *endBB = llvm::BasicBlock::Create(cgm.context, "while.end");
  b.CreateBr(condBB);
  b.SetInsertPoint(condBB);
  b.CreateCondBr(emitExpr(*s.cond), bodyBB, endBB);
  bodyBB->insertInto(llvmFn);
  b.SetInsertPoint(bodyBB);
  loops.push_back({endBB, condBB});
  emitBody(s.body);
  loops.pop_back();
  b.CreateBr(condBB);
  endBB->insertInto(llvmFn);
  b.SetInsertPoint(endBB);
}

void FunctionEmitter::emitReturn(const ir::ReturnStmt &s) {
  if (!s.value) {
    b.CreateRetVoid();
  } else {
    llvm::Value *v = emitExpr(*s.value);
    const Type &t = s.value->type;
    if (t.isArray())
      v = b.CreateLoad(cgm.storageType(t), v);
    b.CreateRet(v);
  }
  startDeadBlock();
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

llvm::Value *FunctionEmitter::emitExpr(const ir::Expr &e) {
  if (llvm::Value *v = emitPrecomputed(e))
    return v;
  switch (e.kind) {
  case ExprKind::Constant:
    return emitConstant(cast<ConstantExpr>(e).value);
  case ExprKind::VarRef:
    return loadValue(slots[cast<VarRefExpr>(e).slot], e.type);
  case ExprKind::ParamRef: {
    // Params never change after opd_rt_init; the TBAA tag tells the
    // optimiser no store to a dat or map can change them either, so a read
    // inside a kernel is hoisted out of the element loop.
    llvm::GlobalVariable *gv = cgm.paramStorage(cast<ParamRefExpr>(e).param);
    auto *load = b.CreateLoad(cgm.storageType(e.type), gv);
    load->setMetadata(llvm::LLVMContext::MD_tbaa, cgm.tbaaParam);
    if (e.type.isBool())
      return b.CreateICmpNE(load, llvm::ConstantInt::get(cgm.i8Ty, 0));
    return load;
  }
  case ExprKind::KernelArg:
    return loadValue(emitKernelArgAddress(cast<KernelArgExpr>(e)), e.type);
  case ExprKind::Unary:
    return emitUnary(cast<UnaryExpr>(e));
  case ExprKind::Binary:
    return emitBinary(cast<BinaryExpr>(e));
  case ExprKind::Cast:
    return emitCast(cast<CastExpr>(e));
  case ExprKind::Index:
    return emitIndex(cast<IndexExpr>(e));
  case ExprKind::Intrinsic:
    return emitIntrinsic(cast<IntrinsicExpr>(e));
  case ExprKind::Call:
    return emitCall(cast<CallExpr>(e));
  case ExprKind::ArrayLit:
    return emitArrayLit(cast<ArrayLitExpr>(e));
  case ExprKind::SizeOf:
    return emitSizeOf(cast<SizeOfExpr>(e));
  }
  OPDC_UNREACHABLE("unknown expression kind");
}

llvm::Value *FunctionEmitter::emitAddress(const ir::Expr &e) {
  switch (e.kind) {
  case ExprKind::VarRef:
    return slots[cast<VarRefExpr>(e).slot];
  case ExprKind::KernelArg:
    return emitKernelArgAddress(cast<KernelArgExpr>(e));
  case ExprKind::Index: {
    const auto &ix = cast<IndexExpr>(e);
    llvm::Value *base = emitAddress(*ix.base);
    llvm::Value *i = emitExpr(*ix.index);
    const Type &at = ix.base->type;
    i = b.CreateSExt(i, cgm.i64Ty);
    if (!llvm::isa<llvm::ConstantInt>(i))
      emitRuntimeCheck(
          b.CreateICmpUGE(i, llvm::ConstantInt::get(cgm.i64Ty, at.length)),
          ix.index->range,
          "index out of bounds of an array of " + llvm::Twine(at.length));
    return emitElementAddress(ix, base, i);
  }
  default:
    OPDC_UNREACHABLE("assignment to an expression that is not an lvalue");
  }
}

llvm::Value *FunctionEmitter::emitKernelArgAddress(const ir::KernelArgExpr &) {
  OPDC_UNREACHABLE("kernel parameter outside a kernel");
}

llvm::Value *FunctionEmitter::emitIdx(unsigned) {
  OPDC_UNREACHABLE("idx() outside a kernel");
}

std::vector<llvm::Value *> FunctionEmitter::elementCoords() {
  OPDC_UNREACHABLE("random numbers outside a kernel");
}

llvm::Value *FunctionEmitter::emitSizeOf(const ir::SizeOfExpr &) {
  OPDC_UNREACHABLE("size() outside host code");
}

llvm::Value *FunctionEmitter::emitConstant(const ConstValue &v) {
  const Type &t = v.type;
  if (t.isString())
    return cgm.string(v.text);
  if (t.isArray()) {
    llvm::Constant *init = cgm.memConstant(v);
    auto *gv = new llvm::GlobalVariable(cgm.module, init->getType(), true,
                                        llvm::GlobalValue::PrivateLinkage, init,
                                        ".const");
    gv->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    return gv;
  }
  if (t.isBool())
    return llvm::ConstantInt::get(cgm.i1Ty, v.asInt(0) != 0);
  return cgm.memConstant(v);
}

llvm::Value *FunctionEmitter::emitUnary(const ir::UnaryExpr &e) {
  llvm::Value *v = emitExpr(*e.operand);
  if (e.op != UnaryOp::Neg) // ! on bool, ~ on integers
    return b.CreateNot(v);
  if (isFloat(e.type.scalar))
    return b.CreateFNeg(v);
  return b.CreateNeg(v);
}

llvm::Value *FunctionEmitter::emitBinary(const ir::BinaryExpr &e) {
  if (isLogical(e.op))
    return emitLogical(e);
  llvm::Value *l = emitExpr(*e.lhs);
  llvm::Value *r = emitExpr(*e.rhs);
  if (e.lhs->type.isString()) {
    // Host strings: strcmp(l, r) == 0 (or != 0).
    auto strcmpFn = cgm.module.getOrInsertFunction(
        "strcmp", llvm::FunctionType::get(cgm.i32Ty, {cgm.ptrTy, cgm.ptrTy},
                                          false));
    llvm::Value *c = b.CreateCall(strcmpFn, {l, r});
    llvm::Value *zero = llvm::ConstantInt::get(cgm.i32Ty, 0);
    return e.op == BinaryOp::Eq ? b.CreateICmpEQ(c, zero)
                                : b.CreateICmpNE(c, zero);
  }
  ScalarKind k = e.lhs->type.scalar;
  if (isArithmetic(e.op) || isBitwise(e.op))
    return emitArithmetic(e.op, k, l, r, e.range);
  if (isFloat(k)) {
    // Ordered comparisons are false on NaN, `!=` is true, as in C.
    switch (e.op) {
    case BinaryOp::Eq:
      return b.CreateFCmpOEQ(l, r);
    case BinaryOp::Ne:
      return b.CreateFCmpUNE(l, r);
    case BinaryOp::Lt:
      return b.CreateFCmpOLT(l, r);
    case BinaryOp::Le:
      return b.CreateFCmpOLE(l, r);
    case BinaryOp::Gt:
      return b.CreateFCmpOGT(l, r);
    case BinaryOp::Ge:
      return b.CreateFCmpOGE(l, r);
    default:
      break;
    }
  } else {
    switch (e.op) {
    case BinaryOp::Eq:
      return b.CreateICmpEQ(l, r);
    case BinaryOp::Ne:
      return b.CreateICmpNE(l, r);
    case BinaryOp::Lt:
      return b.CreateICmpSLT(l, r);
    case BinaryOp::Le:
      return b.CreateICmpSLE(l, r);
    case BinaryOp::Gt:
      return b.CreateICmpSGT(l, r);
    case BinaryOp::Ge:
      return b.CreateICmpSGE(l, r);
    default:
      break;
    }
  }
  OPDC_UNREACHABLE("unknown binary operator");
}

llvm::Value *FunctionEmitter::emitArithmetic(ir::BinaryOp op, ScalarKind k,
                                             llvm::Value *l, llvm::Value *r,
                                             SourceRange where) {
  if (isFloat(k)) {
    switch (op) {
    case BinaryOp::Add:
      return b.CreateFAdd(l, r);
    case BinaryOp::Sub:
      return b.CreateFSub(l, r);
    case BinaryOp::Mul:
      return b.CreateFMul(l, r);
    case BinaryOp::Div:
      return b.CreateFDiv(l, r);
    case BinaryOp::Rem:
      return b.CreateFRem(l, r);
    default:
      break;
    }
  } else {
    switch (op) {
    case BinaryOp::Add:
      return b.CreateAdd(l, r);
    case BinaryOp::Sub:
      return b.CreateSub(l, r);
    case BinaryOp::Mul:
      return b.CreateMul(l, r);
    case BinaryOp::Div:
    case BinaryOp::Rem:
      return emitIntDivRem(op, l, r, where);
    default:
      if (isBitwise(op))
        return emitBitwise(op, l, r, where);
      break;
    }
  }
  OPDC_UNREACHABLE("not an arithmetic operator");
}

llvm::Value *FunctionEmitter::emitIntDivRem(ir::BinaryOp op, llvm::Value *l,
                                            llvm::Value *r, SourceRange where) {
  bool isDiv = op == BinaryOp::Div;
  llvm::Type *ty = l->getType();
  auto *zero = llvm::ConstantInt::get(ty, 0);
  if (auto *c = dyn_cast<llvm::ConstantInt>(r)) {
    if (c->isMinusOne())
      return isDiv ? b.CreateNeg(l) : static_cast<llvm::Value *>(zero);
    if (!c->isZero())
      return isDiv ? b.CreateSDiv(l, r) : b.CreateSRem(l, r);
  }
  emitRuntimeCheck(b.CreateICmpEQ(r, zero), where,
                   isDiv ? "integer division by zero"
                         : "integer remainder by zero");
  // x / -1 overflows for the smallest integer; it is -x (wrapping) and
  // x % -1 is 0, so divide by 1 instead and fix the result up.
  llvm::Value *minusOne = b.CreateICmpEQ(r, llvm::ConstantInt::get(ty, -1));
  llvm::Value *safe =
      b.CreateSelect(minusOne, llvm::ConstantInt::get(ty, 1), r);
  llvm::Value *q = isDiv ? b.CreateSDiv(l, safe) : b.CreateSRem(l, safe);
  return b.CreateSelect(minusOne, isDiv ? b.CreateNeg(l) : zero, q);
}

llvm::Value *FunctionEmitter::emitLogical(const ir::BinaryExpr &e) {
  bool isAnd = e.op == BinaryOp::And;
  llvm::Value *l = emitExpr(*e.lhs);
  llvm::BasicBlock *lhsEnd = b.GetInsertBlock();
  auto *rhsBB = llvm::BasicBlock::Create(cgm.context,
                                         isAnd ? "and.rhs" : "or.rhs", llvmFn);
  auto *endBB =
      llvm::BasicBlock::Create(cgm.context, isAnd ? "and.end" : "or.end");
  if (isAnd)
    b.CreateCondBr(l, rhsBB, endBB);
  else
    b.CreateCondBr(l, endBB, rhsBB);
  b.SetInsertPoint(rhsBB);
  llvm::Value *r = emitExpr(*e.rhs);
  llvm::BasicBlock *rhsEnd = b.GetInsertBlock();
  b.CreateBr(endBB);
  endBB->insertInto(llvmFn);
  b.SetInsertPoint(endBB);
  llvm::PHINode *phi = b.CreatePHI(cgm.i1Ty, 2);
  phi->addIncoming(llvm::ConstantInt::get(cgm.i1Ty, isAnd ? 0 : 1), lhsEnd);
  phi->addIncoming(r, rhsEnd);
  return phi;
}

llvm::Value *FunctionEmitter::emitCast(const ir::CastExpr &e) {
  llvm::Value *v = emitExpr(*e.operand);
  ScalarKind from = e.operand->type.scalar, to = e.to();
  if (from == to)
    return v;
  llvm::Type *toTy = cgm.regType(to);
  if (to == ScalarKind::Bool) {
    // Nonzero is true; so is NaN, as in C.
    if (isFloat(from))
      return b.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
    return b.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }
  if (from == ScalarKind::Bool)
    return isFloat(to) ? b.CreateUIToFP(v, toTy) : b.CreateZExt(v, toTy);
  if (isInteger(from) && isInteger(to))
    return b.CreateSExtOrTrunc(v, toTy);
  if (isInteger(from))
    return b.CreateSIToFP(v, toTy);
  if (isInteger(to)) {
    // C leaves out-of-range conversions undefined; saturate instead (NaN
    // becomes 0) so the result never depends on the optimiser.
    return b.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {toTy, v->getType()},
                             {v});
  }
  return to == ScalarKind::F64 ? b.CreateFPExt(v, toTy)
                               : b.CreateFPTrunc(v, toTy);
}

llvm::Value *FunctionEmitter::emitIndex(const ir::IndexExpr &e) {
  llvm::Value *base = emitExpr(*e.base);
  const Type &at = e.base->type;
  llvm::Value *i = b.CreateSExt(emitExpr(*e.index), cgm.i64Ty);
  if (!llvm::isa<llvm::ConstantInt>(i))
    emitRuntimeCheck(
        b.CreateICmpUGE(i, llvm::ConstantInt::get(cgm.i64Ty, at.length)),
        e.index->range,
        "index out of bounds of an array of " + llvm::Twine(at.length));
  return loadValue(emitElementAddress(e, base, i), e.type);
}

llvm::Value *FunctionEmitter::emitElementAddress(const ir::IndexExpr &ix,
                                                 llvm::Value *base,
                                                 llvm::Value *i) {
  return b.CreateInBoundsGEP(cgm.storageType(ix.base->type), base,
                             {llvm::ConstantInt::get(cgm.i64Ty, 0), i});
}

// Floats: IEEE 754-2019 minimum/maximum (llvm.minimum/llvm.maximum): NaN
// if either operand is NaN, -0 below +0. Unlike a compare-and-select, the
// operation is commutative and associative even with NaNs and signed
// zeros, so a min/max reduction gives the same bits in any order (chunk
// order, vector lanes, ranks), and the vectoriser can reduce it in lanes.
llvm::Value *FunctionEmitter::emitMinMax(bool isMin, ScalarKind k,
                                         llvm::Value *x, llvm::Value *y) {
  if (isFloat(k))
    return b.CreateBinaryIntrinsic(
        isMin ? llvm::Intrinsic::minimum : llvm::Intrinsic::maximum, x, y);
  return b.CreateBinaryIntrinsic(
      isMin ? llvm::Intrinsic::smin : llvm::Intrinsic::smax, x, y);
}

/// A read that cannot trap or write and costs at most a load, so that
/// select() may evaluate it whether or not it is chosen.
static bool isPlainRead(const ir::Expr &e) {
  if (!e.type.isScalar())
    return false;
  switch (e.kind) {
  case ExprKind::Constant:
  case ExprKind::VarRef:
  case ExprKind::ParamRef:
  case ExprKind::KernelArg:
    return true;
  default:
    return false;
  }
}

llvm::Value *FunctionEmitter::emitSelect(const ir::IntrinsicExpr &e) {
  llvm::Value *cond = emitExpr(*e.args[0]);
  if (isPlainRead(*e.args[1]) && isPlainRead(*e.args[2])) {
    llvm::Value *x = emitExpr(*e.args[1]);
    llvm::Value *y = emitExpr(*e.args[2]);
    return b.CreateSelect(cond, x, y);
  }
  auto *thenBB = llvm::BasicBlock::Create(cgm.context, "sel.then", llvmFn);
  auto *elseBB = llvm::BasicBlock::Create(cgm.context, "sel.else");
  auto *endBB = llvm::BasicBlock::Create(cgm.context, "sel.end");
  b.CreateCondBr(cond, thenBB, elseBB);
  b.SetInsertPoint(thenBB);
  llvm::Value *x = emitExpr(*e.args[1]);
  llvm::BasicBlock *thenEnd = b.GetInsertBlock();
  b.CreateBr(endBB);
  elseBB->insertInto(llvmFn);
  b.SetInsertPoint(elseBB);
  llvm::Value *y = emitExpr(*e.args[2]);
  llvm::BasicBlock *elseEnd = b.GetInsertBlock();
  b.CreateBr(endBB);
  endBB->insertInto(llvmFn);
  b.SetInsertPoint(endBB);
  llvm::PHINode *phi = b.CreatePHI(x->getType(), 2);
  phi->addIncoming(x, thenEnd);
  phi->addIncoming(y, elseEnd);
  return phi;
}

llvm::Value *FunctionEmitter::emitIntrinsic(const ir::IntrinsicExpr &e) {
  using llvm::Intrinsic::ID;
  switch (e.id) {
  case Intrinsic::Select:
    return emitSelect(e);
  case Intrinsic::Idx: {
    const auto *c = dyn_cast<ConstantExpr>(e.args[0].get());
    OPDC_ASSERT(c, "idx() of a value that is not a constant");
    return emitIdx(unsigned(c->value.asInt(0)));
  }
  case Intrinsic::Wtime:
    return b.CreateCall(cgm.rt.wtime);
  case Intrinsic::RngUniform:
  case Intrinsic::RngNormal: {
    llvm::Value *seed = emitExpr(*e.args[0]);
    llvm::Value *n = emitExpr(*e.args[1]);
    return emitRandom(cgm, b, e.id, seed, n, elementCoords());
  }
  default:
    break;
  }
  std::vector<llvm::Value *> args;
  for (const auto &a : e.args)
    args.push_back(emitExpr(*a));
  ScalarKind k = e.type.scalar;
  auto unary = [&](ID id) { return b.CreateUnaryIntrinsic(id, args[0]); };
  switch (e.id) {
  case Intrinsic::Sqrt:
    return unary(llvm::Intrinsic::sqrt);
  case Intrinsic::Abs:
    if (isFloat(k))
      return unary(llvm::Intrinsic::fabs);
    return b.CreateIntrinsic(llvm::Intrinsic::abs, {args[0]->getType()},
                             {args[0], b.getFalse()});
  case Intrinsic::Exp:
    return unary(llvm::Intrinsic::exp);
  case Intrinsic::Log:
    return unary(llvm::Intrinsic::log);
  case Intrinsic::Sin:
    return unary(llvm::Intrinsic::sin);
  case Intrinsic::Cos:
    return unary(llvm::Intrinsic::cos);
  case Intrinsic::Floor:
    return unary(llvm::Intrinsic::floor);
  case Intrinsic::Ceil:
    return unary(llvm::Intrinsic::ceil);
  case Intrinsic::Pow:
    return b.CreateBinaryIntrinsic(llvm::Intrinsic::pow, args[0], args[1]);
  case Intrinsic::Fma:
    return b.CreateIntrinsic(llvm::Intrinsic::fma, {args[0]->getType()}, args);
  case Intrinsic::Tan:
    return emitExactLibmCall("tan", k, args);
  case Intrinsic::Atan:
    return emitExactLibmCall("atan", k, args);
  case Intrinsic::Atan2:
    return emitExactLibmCall("atan2", k, args);
  case Intrinsic::Min:
  case Intrinsic::Max:
    return emitMinMax(e.id == Intrinsic::Min, k, args[0], args[1]);
  default:
    if (llvm::Value *v = emitMathLib(e, args))
      return v;
    break;
  }
  OPDC_UNREACHABLE("unknown intrinsic");
}

llvm::Value *FunctionEmitter::emitCall(const ir::CallExpr &e) {
  llvm::Function *callee = cgm.function(e.callee);
  std::vector<llvm::Value *> args;
  for (size_t i = 0; i < e.args.size(); ++i) {
    llvm::Value *v = emitExpr(*e.args[i]);
    const Type &t = e.args[i]->type;
    if (t.isArray())
      v = b.CreateLoad(cgm.storageType(t), v);
    args.push_back(v);
  }
  llvm::Value *result = b.CreateCall(callee, args);
  if (e.type.isArray()) {
    llvm::AllocaInst *tmp = createTemp(cgm.storageType(e.type), "ret");
    b.CreateStore(result, tmp);
    return tmp;
  }
  return result;
}

llvm::Value *FunctionEmitter::emitArrayLit(const ir::ArrayLitExpr &e) {
  llvm::Type *arrTy = cgm.storageType(e.type);
  llvm::AllocaInst *tmp = createTemp(arrTy, "array");
  Type elemTy = Type::scalarOf(e.type.scalar);
  for (size_t i = 0; i < e.elements.size(); ++i)
    storeValue(emitExpr(*e.elements[i]),
               b.CreateConstInBoundsGEP2_32(arrTy, tmp, 0, unsigned(i)),
               elemTy);
  return tmp;
}

} // namespace opdc
