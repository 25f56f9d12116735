// ColumnTables.cpp - Block loops: kernel values of idx(0) alone, once a column.
// SPDX-License-Identifier: Apache-2.0
//
// A kernel value that depends on idx(0) alone and calls the C library
// (analysis/ColumnValues.h: OPS's Poisson populate computes sin(pi x) at
// every point of a 4098^2 grid) is the same in every row. Such values are
// computed once per column into tables, and the rows read them:
//
//   host, after the context's range (LoopHost.cpp, emitContext):
//     if hi[0] > lo[0]:
//       if the loop's tables (a program global: pointer, lo, hi) do not
//       cover [lo[0], hi[0]):
//         free them; allocate K tables of hi[0] - lo[0] elements;
//         opd_cols_K.N(lo[0], hi[0], table0, ...)   (K values)
//       context: table k at its element for column lo[0]
//   opd_cols_K.N(lo, hi, t0, ...): for x in [lo, hi):
//       the kernel's `let`s the values read, at idx(0) = x; tk[x - lo] = vk
//   body: the kernel's parameter column k = table k[x - lo[0]] at column x
//
// The tables depend on the columns alone: params never change once the
// program runs, and nothing else enters a column value. So the tables of a
// loop statement stay for the program's run and are refilled only when a
// call's columns reach beyond them (another range, another rank's part).
// One table for every thread: the host fills it before the loop runs,
// the body only reads it, so threads, chunks, skewed sweeps (which narrow
// dimension 1 only) and MPI ranks (each its own range) all read what the
// kernel would have computed. Each value is the same operations on the
// same operands as in the kernel (the same emitter on the same IR), so the
// bits are the same (the decision 0460; -fno-column-tables computes them at
// every point). The fill is a function of its own, optimised as loop bodies
// are (host code is not).
#include "codegen/llvm/LoopEmitter.h"

#include "codegen/llvm/LLVMCodeGen.h"

#include "support/Assert.h"

#include "llvm/IR/Constants.h"

namespace opdc {

using namespace ir;

namespace {

/// The fill function's body: the loop over the columns.
class ColumnEmitter : public FunctionEmitter {
public:
  ColumnEmitter(CodeGenModule &cgm, const ir::Function &kernel,
                llvm::Function *fn)
      : FunctionEmitter(cgm, kernel, fn) {}

  void emit(const ColumnValues &columns) {
    createSlots();
    llvm::Value *lo = llvmFn->getArg(0), *hi = llvmFn->getArg(1);
    ir::Body decls;
    for (const DeclStmt *d : columns.decls)
      decls.stmts.push_back(d->clone());
    emitCountedLoop(
        b, lo, hi, makeLoopID(cgm.context, nullptr), "column",
        [&](llvm::Value *x) {
          column = x;
          emitBody(decls);
          llvm::Value *at = b.CreateSub(x, lo);
          for (unsigned k = 0; k < columns.values.size(); ++k) {
            const Expr &e = *columns.values[k];
            llvm::Type *t = cgm.memType(e.type.scalar);
            auto *st = b.CreateStore(
                emitExpr(e), b.CreateInBoundsGEP(t, llvmFn->getArg(2 + k), at));
            st->setMetadata(llvm::LLVMContext::MD_tbaa, cgm.tbaaTable);
          }
        });
    b.CreateRetVoid();
  }

protected:
  llvm::Value *emitIdx(unsigned d) override {
    OPDC_ASSERT(d == 0, "a column value of idx(d), d > 0");
    return b.CreateTrunc(column, cgm.i32Ty);
  }

private:
  llvm::Value *column = nullptr;
};

} // namespace

void LoopEmitter::findColumns() {
  columns = ColumnValues();
  if (loop.block && cgm.options.columnTables)
    columns = findColumnValues(*loop.kernel, dims, cgm.options.fpContract);
}

llvm::Function *LoopEmitter::emitColumnFill() {
  std::vector<llvm::Type *> params{cgm.i64Ty, cgm.i64Ty};
  params.insert(params.end(), columns.values.size(), cgm.ptrTy);
  auto *fty = llvm::FunctionType::get(llvm::Type::getVoidTy(cgm.context),
                                      params, false);
  auto *fn = llvm::Function::Create(
      fty, llvm::GlobalValue::InternalLinkage,
      "opd_cols_" + loop.kernel->name + "." + std::to_string(id), cgm.module);
  cgm.addFunctionAttributes(*fn);
  fn->addFnAttr(llvm::Attribute::NoInline);
  fn->getArg(0)->setName("lo");
  fn->getArg(1)->setName("hi");
  for (unsigned k = 0; k < columns.values.size(); ++k) {
    llvm::Argument *t = fn->getArg(2 + k);
    t->setName("table" + std::to_string(k));
    t->addAttr(llvm::Attribute::NoAlias);
    t->addAttr(llvm::Attribute::NoCapture);
    t->addAttr(llvm::Attribute::WriteOnly);
  }
  ColumnEmitter(cgm, *loop.kernel, fn).emit(columns);
  return fn;
}

void LoopEmitter::emitColumnTables() {
  if (columns.empty())
    return;
  auto field = [&](int n) { return b.CreateStructGEP(ctxTy, ctx, n); };
  auto *arrTy = llvm::ArrayType::get(cgm.i64Ty, dims);
  llvm::Value *lo =
      b.CreateLoad(cgm.i64Ty, b.CreateConstInBoundsGEP2_32(arrTy, loArr, 0, 0));
  llvm::Value *hi =
      b.CreateLoad(cgm.i64Ty, b.CreateConstInBoundsGEP2_32(arrTy, hiArr, 0, 0));
  for (int f : columnFields)
    b.CreateStore(llvm::ConstantPointerNull::get(cgm.ptrTy), field(f));

  // The program's tables of this loop statement: pointer, lo, hi.
  auto *cacheTy =
      llvm::StructType::get(cgm.context, {cgm.ptrTy, cgm.i64Ty, cgm.i64Ty});
  auto *cache = new llvm::GlobalVariable(
      cgm.module, cacheTy, false, llvm::GlobalValue::InternalLinkage,
      llvm::ConstantAggregateZero::get(cacheTy),
      "opd_cols." + loop.kernel->name + "." + std::to_string(id));
  auto at = [&](unsigned n) { return b.CreateStructGEP(cacheTy, cache, n); };
  llvm::Function *f = b.GetInsertBlock()->getParent();
  // Blocks in the order they run (each inserted when it starts).
  auto *check = llvm::BasicBlock::Create(cgm.context, "cols.check");
  auto *refill = llvm::BasicBlock::Create(cgm.context, "cols.fill");
  auto *use = llvm::BasicBlock::Create(cgm.context, "cols.use");
  auto *done = llvm::BasicBlock::Create(cgm.context, "cols.done");
  auto start = [&](llvm::BasicBlock *bb) {
    bb->insertInto(f);
    b.SetInsertPoint(bb);
  };
  b.CreateCondBr(b.CreateICmpSGT(hi, lo), check, done);

  start(check);
  llvm::Value *p = b.CreateLoad(cgm.ptrTy, at(0));
  llvm::Value *covered = b.CreateAnd(
      b.CreateIsNotNull(p),
      b.CreateAnd(b.CreateICmpSLE(b.CreateLoad(cgm.i64Ty, at(1)), lo),
                  b.CreateICmpSGE(b.CreateLoad(cgm.i64Ty, at(2)), hi)));
  b.CreateCondBr(covered, use, refill);

  start(refill);
  llvm::LLVMContext &c = cgm.context;
  auto freeFn = cgm.module.getOrInsertFunction(
      "free",
      llvm::FunctionType::get(llvm::Type::getVoidTy(c), {cgm.ptrTy}, false));
  auto mallocFn = cgm.module.getOrInsertFunction(
      "malloc", llvm::FunctionType::get(cgm.ptrTy, {cgm.i64Ty}, false));
  b.CreateCall(freeFn, {p});
  // Table k at byte k * 8 * width: 8 bytes an element whatever its type.
  llvm::Value *width = b.CreateSub(hi, lo, "cols.width");
  llvm::Value *bytes = b.CreateMul(
      width, llvm::ConstantInt::get(cgm.i64Ty, 8 * columns.values.size()));
  llvm::Value *fresh = b.CreateCall(mallocFn, {bytes}, "cols");
  host.emitRuntimeCheck(b.CreateIsNull(fresh), loop.range,
                        "out of memory for the loop's column tables");
  std::vector<llvm::Value *> args{lo, hi};
  for (unsigned k = 0; k < columns.values.size(); ++k)
    args.push_back(b.CreateInBoundsGEP(
        cgm.i8Ty, fresh,
        b.CreateMul(width, llvm::ConstantInt::get(cgm.i64Ty, 8 * k))));
  b.CreateCall(emitColumnFill(), args);
  b.CreateStore(fresh, at(0));
  b.CreateStore(lo, at(1));
  b.CreateStore(hi, at(2));
  b.CreateBr(use);

  start(use);
  llvm::Value *base = b.CreateLoad(cgm.ptrTy, at(0));
  llvm::Value *from = b.CreateLoad(cgm.i64Ty, at(1));
  llvm::Value *span = b.CreateSub(b.CreateLoad(cgm.i64Ty, at(2)), from);
  for (unsigned k = 0; k < columns.values.size(); ++k) {
    llvm::Value *table = b.CreateInBoundsGEP(
        cgm.i8Ty, base,
        b.CreateMul(span, llvm::ConstantInt::get(cgm.i64Ty, 8 * k)));
    llvm::Type *t = cgm.memType(columns.values[k]->type.scalar);
    b.CreateStore(b.CreateInBoundsGEP(t, table, b.CreateSub(lo, from)),
                  field(columnFields[k]));
  }
  b.CreateBr(done);
  start(done);
}

llvm::Value *LoopEmitter::loadColumnValue(llvm::IRBuilder<> &bb, unsigned k,
                                          llvm::Value *x, llvm::MDNode *group) {
  const Expr &e = *columns.values[k];
  llvm::Type *t = cgm.memType(e.type.scalar);
  llvm::LoadInst *v = bb.CreateLoad(
      t, bb.CreateInBoundsGEP(t, columnTables[k], bb.CreateSub(x, rangeLo[0])),
      "column");
  v->setMetadata(llvm::LLVMContext::MD_tbaa, cgm.tbaaTable);
  if (group)
    v->setMetadata(llvm::LLVMContext::MD_access_group, group);
  return v;
}

} // namespace opdc
