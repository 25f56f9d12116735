// HostCodeGen.cpp - Host code: main's start-up, procs, host-only statements.
// SPDX-License-Identifier: Apache-2.0
//
// Host code is ordinary sequential code around calls into the runtime. Mesh
// objects are created in main before its first statement, kind by kind in
// declaration order (sets, maps, blocks, dats), which respects every
// dependency (a map needs its sets, a dat its set or block, sizes only
// params) and makes the first missing file the one the user declared first.
// Values handed to the runtime follow opd_rt.h: f32 printf arguments are
// promoted to double and bools to int, as C's default argument promotions
// would; print() passes every integer as int64_t.
#include "codegen/llvm/HostCodeGen.h"

#include "codegen/common/RuntimeMapping.h"
#include "codegen/llvm/LoopCodeGen.h"
#include "ir/AccessRules.h"

#include "support/Assert.h"
#include "support/Diagnostics.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/Support/Casting.h"

namespace opdc {

using llvm::cast;
using namespace ir;

void HostEmitter::emitMain(llvm::Constant *params, unsigned nparams) {
  createSlots();
  llvm::Value *table =
      params ? params : llvm::ConstantPointerNull::get(cgm.ptrTy);
  // First of all: the runtime this program runs with speaks its ABI.
  b.CreateCall(cgm.rt.checkAbi,
               {llvm::ConstantInt::get(cgm.i32Ty, runtimeAbiVersion())});
  if (cgm.options.defaultThreads) {
    // The target profile's backend.cpu.threads, declared only when used:
    // opd_rt_init applies it when neither --threads nor OMP_NUM_THREADS is
    // given.
    b.CreateCall(
        cgm.rt.setDefaultThreads(),
        {llvm::ConstantInt::get(cgm.i32Ty, cgm.options.defaultThreads)});
  }
  const Program &p = cgm.program;
  if (p.haloLayers != 1 || p.blockHaloDepth != 2)
    // Deeper halos for communication-avoiding chains, before any set or
    // block exists (passes/loops/CommAvoid.cpp).
    b.CreateCall(cgm.rt.haloDepth(),
                 {llvm::ConstantInt::get(cgm.i64Ty, uint64_t(p.haloLayers)),
                  llvm::ConstantInt::get(cgm.i64Ty,
                                         uint64_t(p.blockHaloDepth))});
  if (p.netLatencyUs > 0 || p.netBandwidthGBs > 0 || p.memBandwidthGBs > 0)
    // The target profile's figures for the runtime's cost model.
    b.CreateCall(cgm.rt.costModel(),
                 {llvm::ConstantFP::get(b.getDoubleTy(), p.netLatencyUs),
                  llvm::ConstantFP::get(b.getDoubleTy(), p.netBandwidthGBs),
                  llvm::ConstantFP::get(b.getDoubleTy(), p.memBandwidthGBs)});
  b.CreateCall(cgm.rt.init, {llvmFn->getArg(0), llvmFn->getArg(1),
                             cgm.string(cgm.program.name), table,
                             llvm::ConstantInt::get(cgm.i32Ty, nparams)});
  createMesh();
  emitBody(fn.body);
  if (!b.GetInsertBlock()->getTerminator())
    b.CreateRet(b.CreateCall(cgm.rt.finalize));
}

//===----------------------------------------------------------------------===//
// Mesh creation
//===----------------------------------------------------------------------===//

void HostEmitter::createMesh() {
  const Program &p = cgm.program;
  auto i32 = [&](uint64_t v) { return llvm::ConstantInt::get(cgm.i32Ty, v); };
  for (const auto &s : p.sets) {
    llvm::Value *h;
    if (s->fromFile)
      h = b.CreateCall(cgm.rt.setFromFile,
                       {cgm.string(s->name), emitExpr(*s->fromFile)});
    else
      h = b.CreateCall(
          cgm.rt.setCreate,
          {cgm.string(s->name), b.CreateSExt(emitExpr(*s->size), cgm.i64Ty)});
    b.CreateStore(h, cgm.handle(s.get()));
  }
  for (const auto &m : p.maps) {
    llvm::Value *from = b.CreateLoad(cgm.ptrTy, cgm.handle(m->from));
    llvm::Value *to = b.CreateLoad(cgm.ptrTy, cgm.handle(m->to));
    llvm::Value *h;
    if (m->fromFile)
      h = b.CreateCall(cgm.rt.mapFromFile,
                       {cgm.string(m->name), from, to, i32(m->arity),
                        emitExpr(*m->fromFile)});
    else
      h = b.CreateCall(cgm.rt.mapCreate,
                       {cgm.string(m->name), from, to, i32(m->arity)});
    b.CreateStore(h, cgm.handle(m.get()));
  }
  for (const auto &bl : p.blocks)
    b.CreateStore(
        b.CreateCall(cgm.rt.blockCreate, {cgm.string(bl->name), i32(bl->dims)}),
        cgm.handle(bl.get()));
  for (const auto &d : p.dats)
    createDat(*d);
}

void HostEmitter::createDat(const ir::Dat &d) {
  auto i32 = [&](uint64_t v) { return llvm::ConstantInt::get(cgm.i32Ty, v); };
  llvm::Value *name = cgm.string(d.name);
  llvm::Value *type = i32(runtimeScalar(Type::scalarOf(d.scalar())));
  llvm::Value *dim = i32(d.dim());
  llvm::Value *h;
  if (!d.structured()) {
    llvm::Value *set = b.CreateLoad(cgm.ptrTy, cgm.handle(d.set));
    if (d.init == DatInit::File)
      h = b.CreateCall(cgm.rt.datFromFile,
                       {name, set, type, dim, emitExpr(*d.initFile)});
    else
      h = b.CreateCall(cgm.rt.datCreate, {name, set, type, dim});
  } else {
    unsigned dims = d.block->dims;
    auto *arrTy = llvm::ArrayType::get(cgm.i64Ty, dims);
    llvm::AllocaInst *size = createTemp(arrTy, d.name + ".size");
    for (unsigned i = 0; i < dims; ++i)
      b.CreateStore(b.CreateSExt(emitExpr(*d.size[i]), cgm.i64Ty),
                    b.CreateConstInBoundsGEP2_32(arrTy, size, 0, i));
    auto constArray = [&](const std::vector<int64_t> &v, const char *what) {
      std::vector<llvm::Constant *> elems;
      for (unsigned i = 0; i < dims; ++i)
        elems.push_back(llvm::ConstantInt::get(
            cgm.i64Ty, uint64_t(i < v.size() ? v[i] : 0), true));
      auto *gv = new llvm::GlobalVariable(
          cgm.module, arrTy, true, llvm::GlobalValue::PrivateLinkage,
          llvm::ConstantArray::get(arrTy, elems), d.name + what);
      gv->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
      return gv;
    };
    llvm::Value *block = b.CreateLoad(cgm.ptrTy, cgm.handle(d.block));
    h = b.CreateCall(
        cgm.rt.blockDatCreate,
        {name, block, type, dim, size, constArray(d.haloMinus, ".halo_minus"),
         constArray(d.haloPlus, ".halo_plus"), constArray(d.base, ".base")});
  }
  b.CreateStore(h, cgm.handle(&d));
  if (d.init == DatInit::Fill)
    fillDat(d, h);
  else if (d.init == DatInit::File && d.structured())
    b.CreateCall(cgm.rt.datRead,
                 {datArray({const_cast<Dat *>(&d)}),
                  llvm::ConstantInt::get(cgm.i32Ty, 1), emitExpr(*d.initFile)});
}

void HostEmitter::fillDat(const ir::Dat &d, llvm::Value *handle) {
  const Type &vt = d.initValue->type;
  llvm::Value *v = emitExpr(*d.initValue);
  llvm::Value *elem;
  if (vt.isArray()) {
    elem = v;
  } else {
    // A scalar fills every component of every element.
    auto *arrTy = llvm::ArrayType::get(cgm.memType(d.scalar()), d.dim());
    elem = createTemp(arrTy, d.name + ".fill");
    for (unsigned i = 0; i < d.dim(); ++i)
      storeValue(v, b.CreateConstInBoundsGEP2_32(arrTy, elem, 0, i), vt);
  }
  b.CreateCall(cgm.rt.datFill, {handle, elem});
}

llvm::Value *HostEmitter::datArray(const std::vector<ir::Dat *> &dats) {
  auto *arrTy = llvm::ArrayType::get(cgm.ptrTy, dats.size());
  llvm::AllocaInst *arr = createTemp(arrTy, "dats");
  for (size_t i = 0; i < dats.size(); ++i)
    b.CreateStore(b.CreateLoad(cgm.ptrTy, cgm.handle(dats[i])),
                  b.CreateConstInBoundsGEP2_32(arrTy, arr, 0, unsigned(i)));
  return arr;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

void HostEmitter::unsupported(const ir::Stmt &s, const char *what) {
  cgm.diags.error(s.range, llvm::Twine("'") + what +
                               "' is not supported by the CPU backend yet");
}

void HostEmitter::emitHostStmt(const ir::Stmt &s) {
  switch (s.kind) {
  case StmtKind::ParLoop:
    return emitParLoop(*this, cast<ParLoopStmt>(s));
  case StmtKind::Swap: {
    const auto &w = cast<SwapStmt>(s);
    b.CreateCall(cgm.rt.datSwap, {b.CreateLoad(cgm.ptrTy, cgm.handle(w.a)),
                                  b.CreateLoad(cgm.ptrTy, cgm.handle(w.b))});
    return;
  }
  case StmtKind::Write:
  case StmtKind::Read: {
    const auto &io = cast<DatIOStmt>(s);
    llvm::Value *file = emitExpr(*io.file);
    llvm::Value *n = llvm::ConstantInt::get(cgm.i32Ty, io.dats.size());
    if (!io.ranges.empty()) {
      auto [lo, hi] = rangeArrays(io.ranges, "write");
      b.CreateCall(cgm.rt.datWriteRange,
                   {datArray(io.dats), n, file, lo, hi,
                    llvm::ConstantInt::get(cgm.i32Ty, io.ranges.size())});
      return;
    }
    b.CreateCall(io.isRead() ? cgm.rt.datRead : cgm.rt.datWrite,
                 {datArray(io.dats), n, file});
    return;
  }
  case StmtKind::Print: {
    const auto &p = cast<PrintStmt>(s);
    return p.formatted ? emitPrintf(p) : emitPrint(p);
  }
  case StmtKind::Solve:
    return emitSolve(cast<SolveStmt>(s));
  case StmtKind::Adjoint:
    return unsupported(s, "adjoint");
  case StmtKind::Tangent:
    return unsupported(s, "tangent");
  case StmtKind::Tape:
    return emitTape(cast<TapeStmt>(s));
  case StmtKind::Checkpoint:
    return emitCheckpoint(cast<CheckpointStmt>(s));
  default:
    OPDC_UNREACHABLE("unknown host statement");
  }
}

//===----------------------------------------------------------------------===//
// Adjoint support: the tape and checkpointed loops
//===----------------------------------------------------------------------===//

unsigned HostEmitter::varWords(unsigned s) const {
  const Type &t = fn.vars[s].type;
  return t.isArray() ? unsigned(t.length) : 1;
}

unsigned HostEmitter::varWords(const std::vector<unsigned> &vars) const {
  unsigned n = 0;
  for (unsigned v : vars)
    n += varWords(v);
  return n;
}

// A variable's element i (a scalar's only one) as the bits of a 64-bit word.
llvm::Value *HostEmitter::varBits(unsigned s, unsigned i) {
  const Type &t = fn.vars[s].type;
  OPDC_ASSERT(t.isScalar() || t.isArray(), "tape of a non-numeric variable");
  llvm::Type *et = cgm.memType(t.scalar);
  llvm::Value *at = t.isArray() ? b.CreateConstInBoundsGEP2_32(
                                      cgm.storageType(t), slot(s), 0, i)
                                : slot(s);
  llvm::Value *v = b.CreateLoad(et, at);
  if (et->isFloatingPointTy())
    v = b.CreateBitCast(v, b.getIntNTy(et->getPrimitiveSizeInBits()));
  return b.CreateZExtOrTrunc(v, cgm.i64Ty);
}

void HostEmitter::setVarBits(unsigned s, unsigned i, llvm::Value *bits) {
  const Type &t = fn.vars[s].type;
  llvm::Type *et = cgm.memType(t.scalar);
  llvm::Value *v = b.CreateTrunc(bits, b.getIntNTy(et->getPrimitiveSizeInBits()));
  if (et->isFloatingPointTy())
    v = b.CreateBitCast(v, et);
  llvm::Value *at = t.isArray() ? b.CreateConstInBoundsGEP2_32(
                                      cgm.storageType(t), slot(s), 0, i)
                                : slot(s);
  b.CreateStore(v, at);
}

void HostEmitter::packVars(const std::vector<unsigned> &vars,
                           llvm::Value *into) {
  auto *arrTy =
      llvm::ArrayType::get(cgm.i64Ty, std::max<size_t>(varWords(vars), 1));
  unsigned w = 0;
  for (unsigned v : vars)
    for (unsigned i = 0; i < varWords(v); ++i)
      b.CreateStore(varBits(v, i),
                    b.CreateConstInBoundsGEP2_32(arrTy, into, 0, w++));
}

void HostEmitter::unpackVars(const std::vector<unsigned> &vars,
                             llvm::Value *from) {
  auto *arrTy =
      llvm::ArrayType::get(cgm.i64Ty, std::max<size_t>(varWords(vars), 1));
  unsigned w = 0;
  for (unsigned v : vars)
    for (unsigned i = 0; i < varWords(v); ++i)
      setVarBits(v, i,
                 b.CreateLoad(cgm.i64Ty, b.CreateConstInBoundsGEP2_32(
                                             arrTy, from, 0, w++)));
}

void HostEmitter::emitTape(const ir::TapeStmt &s) {
  if (s.push) {
    for (size_t i = 0; i < s.dats.size(); ++i)
      b.CreateCall(i < s.overwritten.size() && s.overwritten[i]
                       ? cgm.rt.tapePushDatOverwritten
                       : cgm.rt.tapePushDat,
                   {b.CreateLoad(cgm.ptrTy, cgm.handle(s.dats[i]))});
    for (unsigned v : s.vars)
      for (unsigned i = 0; i < varWords(v); ++i)
        b.CreateCall(cgm.rt.tapePushValue, {varBits(v, i)});
    return;
  }
  for (auto v = s.vars.rbegin(); v != s.vars.rend(); ++v)
    for (unsigned i = varWords(*v); i-- > 0;)
      setVarBits(*v, i, b.CreateCall(cgm.rt.tapePopValue));
  for (auto d = s.dats.rbegin(); d != s.dats.rend(); ++d)
    b.CreateCall(cgm.rt.tapePopDat, {b.CreateLoad(cgm.ptrTy, cgm.handle(*d))});
}

void HostEmitter::emitCheckpoint(const ir::CheckpointStmt &s) {
  auto i32 = [&](int64_t v) {
    return llvm::ConstantInt::get(cgm.i32Ty, uint64_t(v), true);
  };
  llvm::Type *stepTy = cgm.storageType(fn.vars[s.slot].type);
  // The state's host values as 64 bits each, for opd_ckpt_save/restore.
  llvm::Value *vals = createTemp(
      llvm::ArrayType::get(cgm.i64Ty, std::max<size_t>(varWords(s.vars), 1)),
      "ckpt.vals");
  // State dats the step's first loop overwrites (1), or the next step's
  // first loop (2: the step only reads them and swaps them there), or a
  // later loop of the step (3: the loops before it only read them): a
  // snapshot may take their storage at that loop's prepare when that body
  // runs (the runtime knows whether it does) instead of copying them.
  const std::vector<uint8_t> overwritten = ir::stateTakes(s.body, s.dats);
  llvm::Value *overwrittenFlags = nullptr;
  if (!overwritten.empty()) {
    auto *init = llvm::ConstantDataArray::get(cgm.context, overwritten);
    overwrittenFlags = new llvm::GlobalVariable(
        cgm.module, init->getType(), true, llvm::GlobalValue::PrivateLinkage,
        init, "ckpt.overwritten");
  }
  auto save = [&](llvm::Value *slotNo) {
    packVars(s.vars, vals);
    if (overwrittenFlags)
      b.CreateCall(cgm.rt.ckptSaveOverwritten, {slotNo, vals, overwrittenFlags});
    else
      b.CreateCall(cgm.rt.ckptSave, {slotNo, vals});
  };
  if (!s.reverse) {
    llvm::Value *lo = b.CreateSExt(emitExpr(*s.lo), cgm.i64Ty);
    llvm::Value *hi = b.CreateSExt(emitExpr(*s.hi), cgm.i64Ty);
    llvm::Value *count = b.CreateSub(hi, lo);
    llvm::Value *snaps = s.snapshots
                             ? b.CreateSExt(emitExpr(*s.snapshots), cgm.i64Ty)
                             : llvm::ConstantInt::get(cgm.i64Ty, 0);
    llvm::Value *dats = s.dats.empty()
                            ? llvm::ConstantPointerNull::get(cgm.ptrTy)
                            : datArray(s.dats);
    b.CreateCall(cgm.rt.ckptBegin, {lo, count, snaps, dats,
                                    i32(int64_t(s.dats.size())),
                                    i32(int64_t(varWords(s.vars)))});
    // for (step = lo; step < hi; ++step) { save if asked; body }
    llvm::Value *var = slot(s.slot);
    llvm::AllocaInst *k = createTemp(cgm.i64Ty, "ckpt.step");
    b.CreateStore(lo, k);
    auto *condBB = llvm::BasicBlock::Create(cgm.context, "ckpt.cond", llvmFn);
    auto *bodyBB = llvm::BasicBlock::Create(cgm.context, "ckpt.body", llvmFn);
    auto *saveBB = llvm::BasicBlock::Create(cgm.context, "ckpt.save", llvmFn);
    auto *runBB = llvm::BasicBlock::Create(cgm.context, "ckpt.run", llvmFn);
    auto *plainBB = llvm::BasicBlock::Create(cgm.context, "ckpt.plain", llvmFn);
    auto *tapedBB = llvm::BasicBlock::Create(cgm.context, "ckpt.taped", llvmFn);
    auto *nextBB = llvm::BasicBlock::Create(cgm.context, "ckpt.inc", llvmFn);
    auto *endBB = llvm::BasicBlock::Create(cgm.context, "ckpt.end");
    b.CreateBr(condBB);
    b.SetInsertPoint(condBB);
    llvm::Value *step = b.CreateLoad(cgm.i64Ty, k);
    b.CreateCondBr(b.CreateICmpSLT(step, hi), bodyBB, endBB);
    b.SetInsertPoint(bodyBB);
    llvm::Value *slotNo = b.CreateCall(cgm.rt.ckptForward, {step});
    b.CreateStore(b.CreateTrunc(step, stepTy), var);
    b.CreateCondBr(b.CreateICmpSGE(slotNo, i32(0)), saveBB, runBB);
    b.SetInsertPoint(saveBB);
    save(slotNo);
    b.CreateBr(runBB);
    b.SetInsertPoint(runBB);
    // OPD_CKPT_TAPE: every step goes on the tape (snapshots >= steps).
    b.CreateCondBr(b.CreateICmpEQ(slotNo, i32(-2)), tapedBB, plainBB);
    b.SetInsertPoint(plainBB);
    emitBody(s.body);
    b.CreateBr(nextBB);
    b.SetInsertPoint(tapedBB);
    emitBody(s.tapedBody);
    b.CreateBr(nextBB);
    b.SetInsertPoint(nextBB);
    b.CreateStore(b.CreateAdd(b.CreateLoad(cgm.i64Ty, k),
                              llvm::ConstantInt::get(cgm.i64Ty, 1)),
                  k);
    b.CreateBr(condBB);
    endBB->insertInto(llvmFn);
    b.SetInsertPoint(endBB);
    return;
  }
  // Reverse: follow the plan's actions.
  llvm::AllocaInst *stepAddr = createTemp(cgm.i64Ty, "ckpt.step");
  llvm::AllocaInst *slotAddr = createTemp(cgm.i32Ty, "ckpt.slot");
  auto *nextBB = llvm::BasicBlock::Create(cgm.context, "ckpt.next", llvmFn);
  auto *advanceBB = llvm::BasicBlock::Create(cgm.context, "ckpt.advance", llvmFn);
  auto *saveBB = llvm::BasicBlock::Create(cgm.context, "ckpt.save", llvmFn);
  auto *restoreBB = llvm::BasicBlock::Create(cgm.context, "ckpt.restore", llvmFn);
  auto *reverseBB = llvm::BasicBlock::Create(cgm.context, "ckpt.reverse", llvmFn);
  auto *tapedBB =
      llvm::BasicBlock::Create(cgm.context, "ckpt.reverse.taped", llvmFn);
  auto *endBB = llvm::BasicBlock::Create(cgm.context, "ckpt.done", llvmFn);
  b.CreateBr(nextBB);
  b.SetInsertPoint(nextBB);
  llvm::Value *act = b.CreateCall(cgm.rt.ckptNext, {stepAddr, slotAddr});
  llvm::SwitchInst *sw = b.CreateSwitch(act, endBB, 4);
  sw->addCase(llvm::cast<llvm::ConstantInt>(i32(1)), advanceBB);
  sw->addCase(llvm::cast<llvm::ConstantInt>(i32(2)), saveBB);
  sw->addCase(llvm::cast<llvm::ConstantInt>(i32(3)), restoreBB);
  sw->addCase(llvm::cast<llvm::ConstantInt>(i32(4)), reverseBB);
  sw->addCase(llvm::cast<llvm::ConstantInt>(i32(5)), tapedBB);
  auto setStep = [&] {
    b.CreateStore(b.CreateTrunc(b.CreateLoad(cgm.i64Ty, stepAddr), stepTy),
                  slot(s.slot));
  };
  b.SetInsertPoint(advanceBB);
  setStep();
  emitBody(s.body);
  b.CreateBr(nextBB);
  b.SetInsertPoint(saveBB);
  save(b.CreateLoad(cgm.i32Ty, slotAddr));
  b.CreateBr(nextBB);
  b.SetInsertPoint(restoreBB);
  b.CreateCall(cgm.rt.ckptRestore, {b.CreateLoad(cgm.i32Ty, slotAddr), vals});
  unpackVars(s.vars, vals);
  b.CreateBr(nextBB);
  b.SetInsertPoint(reverseBB);
  setStep();
  emitBody(s.reverseBody);
  b.CreateBr(nextBB);
  b.SetInsertPoint(tapedBB);
  setStep();
  emitBody(s.tapedReverseBody);
  b.CreateBr(nextBB);
  b.SetInsertPoint(endBB);
  b.CreateCall(cgm.rt.ckptEnd);
}

void HostEmitter::emitSolve(const ir::SolveStmt &s) {
  if (s.solver == SolverKind::CG) {
    // Conjugate gradients are loops of the program: the expand-cg pass
    // (in the default pipeline) writes them; a --passes list without it
    // leaves the solve here.
    cgm.diags.error(s.range, "'solve cg' needs the 'expand-cg' pass; add it "
                             "to --passes");
    return;
  }
  OPDC_ASSERT(s.solver == SolverKind::Tridiagonal && s.dats.size() == 4,
              "a solve other than tridiagonal(a, b, c, d)");
  std::vector<llvm::Value *> args;
  for (const Dat *d : s.dats)
    args.push_back(b.CreateLoad(cgm.ptrTy, cgm.handle(d)));
  args.push_back(llvm::ConstantInt::get(cgm.i32Ty, s.along));
  // The range as loops pass theirs (global indices, hi exclusive); none
  // for the whole block, which the runtime takes from d's interior.
  auto [lo, hi] = rangeArrays(s.ranges, "solve");
  args.push_back(lo);
  args.push_back(hi);
  b.CreateCall(cgm.rt.solveTridiagonal, args);
}

std::pair<llvm::Value *, llvm::Value *>
HostEmitter::rangeArrays(const std::vector<ir::LoopRange> &ranges,
                         const char *what) {
  llvm::Value *lo = llvm::ConstantPointerNull::get(cgm.ptrTy), *hi = lo;
  if (ranges.empty())
    return {lo, hi};
  auto *arrTy = llvm::ArrayType::get(cgm.i64Ty, ranges.size());
  lo = createTemp(arrTy, llvm::Twine(what) + ".lo");
  hi = createTemp(arrTy, llvm::Twine(what) + ".hi");
  for (unsigned d = 0; d < ranges.size(); ++d) {
    b.CreateStore(b.CreateSExt(emitExpr(*ranges[d].lo), cgm.i64Ty),
                  b.CreateConstInBoundsGEP2_32(arrTy, lo, 0, d));
    b.CreateStore(b.CreateSExt(emitExpr(*ranges[d].hi), cgm.i64Ty),
                  b.CreateConstInBoundsGEP2_32(arrTy, hi, 0, d));
  }
  return {lo, hi};
}

void HostEmitter::emitPrint(const ir::PrintStmt &s) {
  for (size_t i = 0; i < s.args.size(); ++i) {
    const Type &t = s.args[i]->type;
    llvm::Value *v = emitExpr(*s.args[i]);
    llvm::Value *first = llvm::ConstantInt::get(cgm.i32Ty, i == 0);
    if (t.isString()) {
      b.CreateCall(cgm.rt.printStr, {v, first});
      continue;
    }
    switch (t.scalar) {
    case ScalarKind::Bool:
      b.CreateCall(cgm.rt.printBool, {b.CreateZExt(v, cgm.i32Ty), first});
      break;
    case ScalarKind::I32:
    case ScalarKind::I64:
      b.CreateCall(cgm.rt.printI64, {b.CreateSExt(v, cgm.i64Ty), first});
      break;
    case ScalarKind::F32:
      b.CreateCall(cgm.rt.printF32, {v, first});
      break;
    case ScalarKind::F64:
      b.CreateCall(cgm.rt.printF64, {v, first});
      break;
    }
  }
  b.CreateCall(cgm.rt.printEnd);
}

void HostEmitter::emitPrintf(const ir::PrintStmt &s) {
  std::vector<llvm::Value *> args{cgm.string(s.format)};
  for (const auto &a : s.args) {
    llvm::Value *v = emitExpr(*a);
    if (a->type.isBool())
      v = b.CreateZExt(v, cgm.i32Ty);
    else if (a->type.isScalar() && a->type.scalar == ScalarKind::F32)
      v = b.CreateFPExt(v, llvm::Type::getDoubleTy(cgm.context));
    args.push_back(v);
  }
  switch (s.to) {
  case PrintTo::Out:
    b.CreateCall(cgm.rt.printf, args);
    return;
  case PrintTo::Warning:
    b.CreateCall(cgm.rt.warnf, args);
    return;
  case PrintTo::Error:
    b.CreateCall(cgm.rt.failAllf, args);
    return;
  }
}

llvm::Value *HostEmitter::emitSizeOf(const ir::SizeOfExpr &e) {
  llvm::Value *n;
  if (e.set && e.type.scalar == ScalarKind::I32)
    // size(set) is an i32: the runtime checks that the set fits.
    n = b.CreateCall(cgm.rt.setSizeI32,
                     {b.CreateLoad(cgm.ptrTy, cgm.handle(e.set))});
  else if (e.set)
    n = b.CreateCall(cgm.rt.setSize,
                     {b.CreateLoad(cgm.ptrTy, cgm.handle(e.set))});
  else
    n = b.CreateCall(cgm.rt.datExtent,
                     {b.CreateLoad(cgm.ptrTy, cgm.handle(e.dat)),
                      llvm::ConstantInt::get(cgm.i32Ty, e.dim)});
  return b.CreateSExtOrTrunc(n, cgm.regType(e.type.scalar));
}

} // namespace opdc
