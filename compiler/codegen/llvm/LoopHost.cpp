// LoopHost.cpp - Parallel loops: context, argument table, host call.
// SPDX-License-Identifier: Apache-2.0
//
// A loop's host protocol (range, halo checks, exchanges, the opd_arg
// table, prepare, the reductions' combination) is the host-program form's
// (codegen/common/LoopLowering.cpp), printed by HostPrinter.cpp. This file
// writes the CPU's phase in between:
//
//   ctx  = { data pointers, strides, map rows, global values, partials,
//            block ranges }                       (a stack struct)
//   partials: opd_rt_scratch(slots * dim * bytes per reduction), every
//             slot set to the identity of its operation; a slot per chunk
//             or, over a 3D block, per plane (opd_loop_partial_slots)
//   opd_loop_run(loop, @opd_body_K.N, &ctx)    (body: LoopBody.cpp)
//     or, when an argument may stream (isStreamCandidate) and
//     opd_loop_streams(loop) says the loop's data exceed the last-level
//     cache, @opd_body_K.N.nt: the same body whose stores through those
//     arguments are non-temporal (markStreamingStores, Target.cpp), ending
//     in a fence so that the streamed data are visible after the loop
//   or, when the kernel branches around costly work (BranchWork.h) and
//     opd_loop_scalar(loop) says so, @opd_body_K.N.scalar: the same body
//     with its element loops marked not to vectorise, so that the branches
//     stay branches instead of selects over both arms; the runtime times it
//     against the vectorised body and keeps the faster (the same bits:
//     every element's arithmetic is the same, the sums' lanes are written
//     out in the IR)
//
// With -frepro-sum a float sum's partials are exact accumulators instead
// (runtimeXsumWords() words per component and chunk, zero-filled); a loop
// whose only cross-element writes are increments through maps
// (RaceClass::IncStrips) stores opd_loop_gather(loop, n) for each such
// argument n in the context: the body writes each element's increments
// into its row there, and the runtime adds the rows to the targets in
// global element order when the loop ends (lib/exec/Gather.cpp).
//
// Block loops pass their range in lo/hi arrays that opd_loop_prepare_block
// clips in place to the points the rank owns; the context takes the clipped
// range.

#include "codegen/llvm/HostCodeGen.h"
#include "codegen/llvm/KernelCodeGen.h"
#include "codegen/llvm/LoopCodeGen.h"
#include "codegen/llvm/LoopEmitter.h"
#include "ir/LoopNames.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include "analysis/BranchWork.h"
#include "codegen/common/HostProgram.h"
#include "codegen/common/Identities.h"
#include "codegen/common/RuntimeMapping.h"
#include "codegen/llvm/LLVMCodeGen.h"

#include "support/Assert.h"

#include "llvm/IR/Constants.h"

#include <set>

namespace opdc {

using namespace ir;

llvm::Constant *identityConstant(IdentityValue v, llvm::Type *t) {
  switch (v) {
  case IdentityValue::Zero:
    return llvm::Constant::getNullValue(t);
  case IdentityValue::NegativeZero:
    return llvm::ConstantFP::getNegativeZero(t);
  case IdentityValue::PlusInf:
  case IdentityValue::MinusInf:
    return llvm::ConstantFP::getInfinity(t, v == IdentityValue::MinusInf);
  case IdentityValue::IntMax:
  case IdentityValue::IntMin: {
    unsigned bits = llvm::cast<llvm::IntegerType>(t)->getBitWidth();
    return llvm::ConstantInt::get(t->getContext(),
                                  v == IdentityValue::IntMax
                                      ? llvm::APInt::getSignedMaxValue(bits)
                                      : llvm::APInt::getSignedMinValue(bits));
  }
  }
  OPDC_UNREACHABLE("unknown identity value");
}

LoopEmitter::LoopEmitter(FunctionEmitter &host, const ParLoopStmt &loop)
    : host(host), cgm(host.cgm), b(host.b), loop(loop),
      access(analyzeLoopAccess(loop)), id(cgm.newLoopId()),
      dims(loop.block ? loop.block->dims : 1) {}

std::pair<int64_t, int64_t> LoopEmitter::contextRange() const {
  if (!loop.block || dims != 3 || !ctxTy || loField < 0)
    return {0, 0};
  const llvm::DataLayout &layout = cgm.module.getDataLayout();
  const llvm::StructLayout *sl = layout.getStructLayout(ctxTy);
  const int64_t lo = int64_t(sl->getElementOffset(unsigned(loField)));
  const int64_t hi = int64_t(sl->getElementOffset(unsigned(hiField)));
  OPDC_ASSERT(hi == lo + 8 * int64_t(dims), "range fields apart");
  return {int64_t(layout.getTypeAllocSize(ctxTy)), lo};
}

void LoopEmitter::layoutContext() {
  std::vector<llvm::Type *> types;
  auto add = [&](llvm::Type *t) {
    types.push_back(t);
    return int(types.size() - 1);
  };
  // One field per entry of the analysis's field plan, numbered in the
  // order of the first argument using it: arguments on the same dat or map
  // share it (see LoopAccess.h).
  std::vector<std::pair<int, int>> datFields(access.dats.size(), {-1, -1});
  std::vector<int> mapFields(access.maps.size(), -1);
  std::vector<int> valueFields(access.mapValues.size(), -1);
  fields.resize(loop.args.size());
  for (unsigned i = 0; i < loop.args.size(); ++i) {
    const AccessDescriptor &a = loop.args[i];
    const ArgAccess &acc = access.args[i];
    Fields &f = fields[i];
    if (acc.datField >= 0) {
      auto &[datBase, datStrides] = datFields[unsigned(acc.datField)];
      if (datBase < 0) {
        datBase = add(cgm.ptrTy);
        if (loop.block && dims > 1)
          datStrides = add(llvm::ArrayType::get(cgm.i64Ty, dims - 1));
      }
      f.base = datBase;
      f.strides = datStrides;
    }
    if (acc.mapValuesField >= 0) {
      // The kernel reads the entries as values: global indices on every
      // rank (opd_map_values).
      int &field = valueFields[unsigned(acc.mapValuesField)];
      if (field < 0)
        field = add(cgm.ptrTy);
      f.map = field;
      f.mapValues = true;
    } else if (acc.mapField >= 0) {
      int &field = mapFields[unsigned(acc.mapField)];
      if (field < 0)
        field = add(cgm.ptrTy);
      f.map = field;
    }
    if (a.kind == ArgKind::GlobalRead)
      f.value = add(cgm.storageType(loop.kernel->kernelParams[i].type));
    if (a.kind == ArgKind::Reduction)
      f.partials = add(cgm.ptrTy);
    if (gatherMode() && acc.indirectInc)
      f.gather = add(cgm.ptrTy);
  }
  columnFields.clear();
  if (loop.block) {
    loField = add(llvm::ArrayType::get(cgm.i64Ty, dims));
    hiField = add(llvm::ArrayType::get(cgm.i64Ty, dims));
    for (size_t k = 0; k < columns.values.size(); ++k)
      columnFields.push_back(add(cgm.ptrTy));
  } else if (access.usesIdx) {
    gidField = add(cgm.ptrTy);
  }
  ctxTy = llvm::StructType::create(cgm.context, types,
                                   "opd_ctx." + loop.kernel->name + "." +
                                       std::to_string(id));
}

//===----------------------------------------------------------------------===//
// Host side
//===----------------------------------------------------------------------===//

llvm::Value *LoopEmitter::emitPrepare() {
  host::LoopTraits traits;
  traits.rangeLength = dims;
  traits.location = cgm.location(loop.range);
  // The user's name (ir/LoopNames.h): --profile rows and run-time errors.
  traits.name = ir::userLoopName(loop.kernel->name);
  traits.reproSum = cgm.options.reproSum;
  locals = host::lowerLoop(loop, access, traits, program);
  printer = std::make_unique<HostProgramPrinter>(host, program);
  bool phase = printer->printToPhase();
  OPDC_ASSERT(phase, "a loop's program without its phase");
  if (loop.block) {
    loArr = printer->local(locals.lo);
    hiArr = printer->local(locals.hi);
  }
  return b.CreateLoad(cgm.ptrTy, printer->local(locals.loop), "loop");
}

void LoopEmitter::emitContext(llvm::Value *loopHandle) {
  ctx = host.createTemp(ctxTy, "ctx");
  auto field = [&](int n) { return b.CreateStructGEP(ctxTy, ctx, n); };
  auto *stridesTy = llvm::ArrayType::get(cgm.i64Ty, 3);
  llvm::Value *stridesTmp = nullptr;
  bool anyReduction = false;
  std::set<int> filled;
  for (unsigned i = 0; i < loop.args.size(); ++i) {
    const AccessDescriptor &a = loop.args[i];
    const Fields &f = fields[i];
    if (f.base >= 0 && filled.insert(f.base).second) {
      llvm::Value *h = b.CreateLoad(cgm.ptrTy, cgm.handle(a.dat));
      llvm::Value *p;
      if (loop.block) {
        if (!stridesTmp)
          stridesTmp = host.createTemp(stridesTy, "strides");
        p = b.CreateCall(cgm.rt.datOrigin, {h, stridesTmp});
        auto *fieldTy = llvm::ArrayType::get(cgm.i64Ty, dims - 1);
        for (unsigned d = 1; d < dims; ++d) {
          llvm::Value *s = b.CreateLoad(
              cgm.i64Ty,
              b.CreateConstInBoundsGEP2_32(stridesTy, stridesTmp, 0, d));
          s = b.CreateMul(s, llvm::ConstantInt::get(cgm.i64Ty, a.dim));
          b.CreateStore(s, b.CreateConstInBoundsGEP2_32(
                               fieldTy, field(f.strides), 0, d - 1));
        }
      } else {
        p = b.CreateCall(cgm.rt.datData, {h});
      }
      b.CreateStore(p, field(f.base));
    }
    if (f.map >= 0 && filled.insert(f.map).second)
      b.CreateStore(
          b.CreateCall(f.mapValues ? cgm.rt.mapValues : cgm.rt.mapData,
                       {b.CreateLoad(cgm.ptrTy, cgm.handle(a.map))}),
          field(f.map));
    if (f.value >= 0)
      host.storeValue(host.emitExpr(*a.value), field(f.value),
                      loop.kernel->kernelParams[i].type);
    anyReduction = anyReduction || f.partials >= 0;
    if (f.gather >= 0)
      b.CreateStore(
          b.CreateCall(cgm.rt.loopGather,
                       {loopHandle, llvm::ConstantInt::get(cgm.i32Ty, i)}),
          field(f.gather));
  }
  if (loop.block) {
    auto *arrTy = llvm::ArrayType::get(cgm.i64Ty, dims);
    b.CreateStore(b.CreateLoad(arrTy, loArr), field(loField));
    b.CreateStore(b.CreateLoad(arrTy, hiArr), field(hiField));
    emitColumnTables();
  }
  if (gidField >= 0)
    b.CreateStore(b.CreateCall(cgm.rt.setGlobalIds,
                               {b.CreateLoad(cgm.ptrTy, cgm.handle(loop.set))}),
                  field(gidField));
  if (!anyReduction)
    return;

  // One scratch allocation holds every reduction's partials, each starting
  // on an 8-byte boundary.
  llvm::Value *chunks =
      b.CreateCall(cgm.rt.loopPartialSlots, {loopHandle}, "slots");
  b.CreateStore(chunks, printer->local(locals.chunks));
  llvm::Value *total = llvm::ConstantInt::get(cgm.i64Ty, 0);
  std::vector<llvm::Value *> offsets(loop.args.size(), nullptr);
  for (unsigned i = 0; i < loop.args.size(); ++i) {
    const AccessDescriptor &a = loop.args[i];
    if (fields[i].partials < 0)
      continue;
    offsets[i] = total;
    uint64_t elem = exactSum(a) ? uint64_t(8 * runtimeXsumWords()) * a.dim
                                : scalarBytes(a.scalar) * a.dim;
    llvm::Value *bytes =
        b.CreateMul(chunks, llvm::ConstantInt::get(cgm.i64Ty, elem));
    bytes =
        b.CreateAnd(b.CreateAdd(bytes, llvm::ConstantInt::get(cgm.i64Ty, 7)),
                    llvm::ConstantInt::get(cgm.i64Ty, ~uint64_t(7)));
    total = b.CreateAdd(total, bytes);
  }
  llvm::Value *scratch =
      scratchSlot == 0
          ? b.CreateCall(cgm.rt.scratch, {total}, "scratch")
          : b.CreateCall(
                cgm.rt.scratchSlot,
                {total, llvm::ConstantInt::get(cgm.i32Ty, scratchSlot)},
                "scratch");
  for (unsigned i = 0; i < loop.args.size(); ++i) {
    const AccessDescriptor &a = loop.args[i];
    if (fields[i].partials < 0)
      continue;
    llvm::Value *p = b.CreateInBoundsGEP(cgm.i8Ty, scratch, offsets[i]);
    b.CreateStore(p, printer->local(locals.partials[i]));
    b.CreateStore(p, field(fields[i].partials));
    if (exactSum(a)) {
      // Empty exact accumulators are zero words.
      b.CreateMemSet(
          p, llvm::ConstantInt::get(cgm.i8Ty, 0),
          b.CreateMul(chunks,
                      llvm::ConstantInt::get(
                          cgm.i64Ty, uint64_t(8 * runtimeXsumWords()) * a.dim)),
          llvm::MaybeAlign(8));
      continue;
    }
    llvm::Type *t = cgm.memType(a.scalar);
    llvm::Constant *init =
        identityConstant(reductionIdentity(a.mode, a.scalar), t);
    llvm::Value *count =
        b.CreateMul(chunks, llvm::ConstantInt::get(cgm.i64Ty, a.dim));
    emitCountedLoop(b, llvm::ConstantInt::get(cgm.i64Ty, 0), count, nullptr,
                    "partial.init", [&](llvm::Value *k) {
                      b.CreateStore(init, b.CreateInBoundsGEP(t, p, k));
                    });
  }
}

namespace {
/// A copy of \p body named BODY.scalar whose loops carry
/// llvm.loop.vectorize.enable false (the other hints of each loop kept).
llvm::Function *cloneScalarBody(llvm::LLVMContext &c, llvm::Function *body) {
  llvm::ValueToValueMapTy vmap;
  llvm::Function *s = llvm::CloneFunction(body, vmap);
  s->setName(body->getName() + ".scalar");
  s->addFnAttr(ScalarFnAttr);
  llvm::Metadata *noVector = llvm::MDNode::get(
      c, {llvm::MDString::get(c, "llvm.loop.vectorize.enable"),
          llvm::ConstantAsMetadata::get(llvm::ConstantInt::getFalse(c))});
  for (llvm::BasicBlock &bb : *s) {
    llvm::Instruction *term = bb.getTerminator();
    llvm::MDNode *id =
        term ? term->getMetadata(llvm::LLVMContext::MD_loop) : nullptr;
    if (!id)
      continue;
    std::vector<llvm::Metadata *> ops{nullptr};
    for (unsigned i = 1; i < id->getNumOperands(); ++i) {
      auto *hint = llvm::dyn_cast<llvm::MDNode>(id->getOperand(i));
      auto *key = hint && hint->getNumOperands() > 0
                      ? llvm::dyn_cast<llvm::MDString>(hint->getOperand(0))
                      : nullptr;
      if (key && key->getString().starts_with("llvm.loop.vectorize."))
        continue;
      ops.push_back(id->getOperand(i));
    }
    ops.push_back(noVector);
    llvm::MDNode *scalarID = llvm::MDNode::getDistinct(c, ops);
    scalarID->replaceOperandWith(0, scalarID);
    term->setMetadata(llvm::LLVMContext::MD_loop, scalarID);
  }
  return s;
}
} // namespace

void LoopEmitter::emit() {
  Prepared p = emitBeforeRun();
  b.CreateCall(cgm.rt.loopRun, {p.handle, p.body, p.ctx});
  emitAfterRun();
}

void LoopEmitter::emitAfterRun() {
  // The reductions' combination (host::lowerLoop).
  printer->printToPhase();
}

LoopEmitter::Prepared LoopEmitter::emitBeforeRun() {
  findColumns();
  layoutContext();
  llvm::MDNode *group = access.race != RaceClass::Sequential
                            ? llvm::MDNode::getDistinct(cgm.context, {})
                            : nullptr;
  chooseStagedRows();
  KernelInterface kernel =
      emitLoopKernel(cgm, loop, id, group, columns, stagedStrides());
  llvm::Function *body = emitBody(kernel, group);

  llvm::Value *handle = emitPrepare();
  emitContext(handle);
  // The scalar body's question comes first: while the runtime times it,
  // the loop does not stream (opd_loop_streams).
  llvm::Function *scalarFn = nullptr;
  llvm::Value *scalarOn = nullptr;
  if (cgm.options.scalarBodies && branchesAroundCostlyWork(*loop.kernel)) {
    scalarFn = cloneScalarBody(cgm.context, body);
    scalarOn = b.CreateICmpNE(b.CreateCall(cgm.rt.loopScalar, {handle}),
                              llvm::ConstantInt::get(cgm.i32Ty, 0));
  }
  bool streams = false;
  for (unsigned i = 0; i < loop.args.size(); ++i)
    streams = streams || isStreamCandidate(loop, i);
  llvm::Value *run = body;
  if (streams && access.race != RaceClass::IncStrips) {
    llvm::ValueToValueMapTy vmap;
    llvm::Function *nt = llvm::CloneFunction(body, vmap);
    nt->setName(body->getName() + ".nt");
    nt->addFnAttr(StreamFnAttr);
    // Non-temporal stores are weakly ordered: a full fence before each
    // return orders them before the end of the chunk (and so before the
    // runtime's barrier and any later loop's reads).
    for (llvm::BasicBlock &bb : *nt)
      if (auto *ret = llvm::dyn_cast<llvm::ReturnInst>(bb.getTerminator()))
        new llvm::FenceInst(cgm.context,
                            llvm::AtomicOrdering::SequentiallyConsistent,
                            llvm::SyncScope::System, ret->getIterator());
    llvm::Value *big =
        b.CreateICmpNE(b.CreateCall(cgm.rt.loopStreams, {handle}),
                       llvm::ConstantInt::get(cgm.i32Ty, 0));
    run = b.CreateSelect(big, nt, body, "body");
  }
  if (scalarOn)
    run = b.CreateSelect(scalarOn, scalarFn, run, "body");
  return {handle, run, ctx};
}

void emitParLoop(FunctionEmitter &host, const ir::ParLoopStmt &loop) {
  LoopEmitter(host, loop).emit();
}

void emitSkewedLoops(FunctionEmitter &host, const ParLoopStmt *const *first,
                     unsigned n) {
  CodeGenModule &cgm = host.cgm;
  llvm::IRBuilder<> &b = host.b;
  std::vector<std::unique_ptr<LoopEmitter>> loops;
  std::vector<LoopEmitter::Prepared> runs;
  std::vector<llvm::Constant *> schedule;
  for (unsigned k = 0; k < n; ++k) {
    loops.push_back(std::make_unique<LoopEmitter>(host, *first[k]));
    loops.back()->scratchSlot = k;
    runs.push_back(loops.back()->emitBeforeRun());
    const auto [ctxBytes, rangeOffset] = loops.back()->contextRange();
    for (int64_t v : {first[k]->skew.lag, first[k]->skew.lead,
                      first[k]->skew.trail, ctxBytes, rangeOffset})
      schedule.push_back(llvm::ConstantInt::get(cgm.i64Ty, uint64_t(v), true));
  }
  auto *ptrsTy = llvm::ArrayType::get(cgm.ptrTy, n);
  llvm::Value *handles = host.createTemp(ptrsTy, "skew.loops");
  llvm::Value *bodies = host.createTemp(ptrsTy, "skew.bodies");
  llvm::Value *ctxs = host.createTemp(ptrsTy, "skew.ctxs");
  for (unsigned k = 0; k < n; ++k) {
    b.CreateStore(runs[k].handle,
                  b.CreateConstInBoundsGEP2_32(ptrsTy, handles, 0, k));
    b.CreateStore(runs[k].body,
                  b.CreateConstInBoundsGEP2_32(ptrsTy, bodies, 0, k));
    b.CreateStore(runs[k].ctx,
                  b.CreateConstInBoundsGEP2_32(ptrsTy, ctxs, 0, k));
  }
  auto *schedTy = llvm::ArrayType::get(cgm.i64Ty, schedule.size());
  auto *sched = new llvm::GlobalVariable(
      cgm.module, schedTy, true, llvm::GlobalValue::InternalLinkage,
      llvm::ConstantArray::get(schedTy, schedule), "opd_skew");
  b.CreateCall(cgm.rt.skewRun(), {llvm::ConstantInt::get(cgm.i32Ty, n), handles,
                                  bodies, ctxs, sched});
  for (auto &l : loops)
    l->emitAfterRun();
}

} // namespace opdc
