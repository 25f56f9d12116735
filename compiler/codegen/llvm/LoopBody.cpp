// LoopBody.cpp - Parallel loops: the body function the runtime runs per chunk.
// SPDX-License-Identifier: Apache-2.0
//
// A loop `loop K over S (args)` gets a body function
// `void body(ctx, begin, end, chunk)` (the host side is LoopHost.cpp) that
// loads the pointers once and runs the element loop with the kernel
// (KernelCodeGen.cpp) inlined. The runtime fixes the chunks independently
// of the thread count and every chunk writes its own partial, so combining
// the partials in chunk order gives bitwise the same result for any number
// of threads.
//
// Addresses: direct  base + i*dim;  indirect  base + map[i*arity+k]*dim;
// block dats  origin + (i + j*s1 + k*s2)*dim, the origin and strides from
// opd_dat_origin, dimension 0 innermost and unit stride. Data pointers are
// fetched at every execution because swap() exchanges dat storage.
//
// Aligned rows (emitAlignedRow): in a block loop with write-only centre
// arguments that may stream, the innermost loop is peeled to the first
// 64-byte-aligned element of the first such argument's row and continues
// with that row's alignment known to LLVM, so its vector stores are
// aligned (and, in the .nt body, non-temporal whole lines; LoopHost.cpp).
//
// Vectorisation: when no element can touch another element's data (no
// increments through maps, no written dat also read through a map or at a
// stencil offset), the innermost element loop is declared parallel with
// llvm.loop.parallel_accesses over an access group carried by every dat and
// map access, so the vectoriser needs no run-time alias checks. Reduction
// accumulators are private to the body and outside the group; float sums
// go to fixed partial sums (below). The race class of analyzeLoopAccess()
// (analysis/LoopAccess.h) is the one place that decides, with the reasons.
//
// Float sums: each row (an element loop run: a row of a block loop, a
// chunk of a set loop) splits every float sum into SumLanes = 4 partial
// sums: element lo + 4g + l adds to partial l, partial 0 starting from the
// running value and the others from -0.0 (the identity of addition); at
// the end of the row's whole groups the partials are added in lane order,
// ((p0 + p1) + p2) + p3, then the row's last (fewer than 4) elements in
// order. The split is written out in the IR (emitLaneGroups): the row loop
// steps by 4 with four copies of the kernel, each on a scalar accumulator
// loaded from and stored back to its lane of one <4 x T> vector. LLVM never
// reorders float additions without fast-math flags, so the bits do not
// depend on whether or how the loop is vectorised: the vector-typed
// partials keep the loop vectoriser off the loop (it would pick its own
// split), and the SLP vectoriser packs the four copies when they are
// independent (heat3d's adjoint loop step.b: one <4 x double> chain, as
// fast as when the loop vectoriser split the sum; docs/performance.md,
// "Float sums"). A kernel that adds to the sum at most once an element
// (analysis/SumOnce.h) runs each copy from -0.0 instead, and the four
// addends join the partials in one vector addition: the same bits, and a
// loop-carried chain of one addition. When the SLP vectoriser cannot pack
// the copies (calls without vector variants, branches), the loop runs scalar
// with four independent chains instead of one. Same bits for any thread count
// (the runtime fixes the chunks), -O level, target vector width, streaming
// or not, fused or not (one SumLanes for every type and loop) and inlined
// or not. Strips (below) hold whole groups and carry the partials from
// strip to strip, so a loop that strips sums like one that does not. Rows
// are not peeled to an aligned element in such loops (see alignArgs
// below): the peel depends on the row's address, and with it which
// elements would share a partial. -fno-sum-lanes sums in element order
// (one chain of dependent additions, the latency of an addition an
// element: the whole element loop stays scalar); -frepro-sum keeps its
// exact sums.
//
// Row tails: the vectoriser's loop leaves the last (hi - lo) mod (VF x
// UF) elements of a row to a scalar loop; with AVX-512, heat3d's rows of
// 254 doubles ran 240 elements in 15 vector iterations and 14 one by one.
// In a block loop whose elements may run twice with the same result
// (elementsRerunnable: parallel, no reductions, every written argument
// write-only at the centre of a dat no other argument reaches, so no
// element reads what any element writes), the row runs as
//   [lo, m)  the vectoriser's loop, m = lo + (hi - lo) rounded down to 4V
//   for s in [m, hi) step V: b = min(s, hi - V); elements [b, b + V)
// with V the elements of one vector register of the widest scalar type
// (the target's vector width): the inner loop has V iterations, which the
// vectoriser makes one vector (unrolling is off for it), and the last
// vector starts early enough to end at hi, running up to V - 1 elements a
// second time. Each such element computes and stores the same values
// again (what it reads no element writes), so results are bitwise the
// same. Rows shorter than V run as before. -fno-row-tails turns it off.
// Its stores are not the aligned rows' (emitAlignedRow), so they never
// stream.
//
// Indirect increments: two elements of one block may increment the same
// target, so their element loop cannot be declared parallel. When a loop's
// only writes that reach other elements are increments through maps, and no
// other argument touches the incremented dats (RaceClass::IncStrips), the
// body runs its elements in strips of IncStripSize elements:
//   for s in [begin, end) step S, len = min(S, end - s):
//     for j in [0, len), declared parallel:               (compute)
//       buf_a[j][0..dim) = -0.0   (0 for integers)   per indirect inc arg a
//       kernel(..., &buf_a[j][0] in place of a's element, ...)
//     for j in [0, len), elements in order:               (apply)
//       per indirect inc argument a, in argument order, k = 0 .. dim-1:
//         dat_a[map_a[(s+j)*arity + idx_a]*dim + k] += buf_a[j][k]
//
// The compute loop vectorises; the apply loop is short and scalar (or
// SLP-vectorised per element). Reads through maps whose rows the kernel
// only indexes are staged per strip with AVX-512 (StagedRows.cpp, decision
// 0465): each element's row loaded whole, the rows transposed into
// component vectors in a strip buffer, so the compute loop reads them as
// plain vectors; other reads through maps become gathers (or scalar loads
// put into vectors, -fgathers). Parallel set loops with such reads and no
// reductions run in strips too (emitStagedStrips), without the apply loop.
// -0.0 is the identity of float addition: -0.0 + f is f for every f
// (+0.0 would turn f = -0.0 into +0.0), -0.0 - f is exactly -f, and
// x + (-f) is x - f. So when a kernel increments each component at most
// once per invocation (Airfoil's do), every target receives exactly the
// additions of the plain element loop, in the same order, and results are
// bitwise the same. Otherwise rounding may differ from the plain loop, in
// a way that is still deterministic and independent of the thread count
// (strips lie inside the runtime's fixed blocks):
//   * a kernel incrementing one component twice (`r += a ... r += b`) adds
//     the rounded a + b to the target instead of a, then b;
//   * when two indirect increment arguments of one element reach the same
//     target, their increments apply in argument order, not kernel order.
// Integer increments wrap and so are exact in any order. A component the
// kernel leaves alone (an increment under an `if`) adds -0.0: no change.
//
// Column tables: a block loop whose kernel computes values of idx(0) alone
// with C library calls (analysis/ColumnValues.h) passes the kernel each
// such value, loaded from its table at column x - lo[0]; the host fills
// the tables (ColumnTables.cpp).
//
// The rows themselves (lane groups, row tails, aligned rows, strips) are
// emitted in LoopRows.cpp.
#include "codegen/llvm/LoopEmitter.h"

#include "analysis/SumOnce.h"
#include "codegen/common/RuntimeMapping.h"
#include "codegen/llvm/LLVMCodeGen.h"
#include "ir/LoopNames.h"

#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/IR/Constants.h"
#include "llvm/Target/TargetMachine.h"

#include <functional>
#include <map>
#include <set>

namespace opdc {

using namespace ir;

namespace {

/// Cache blocking of 3D loops: dimension 1 runs in tiles whose planes (the
/// planes along dimension 2 that the loop's arguments touch: for a 7-point
/// sweep three of the read dat and one of the written) take this share of
/// the core's L2 (the target profile's cpu.l2_cache_kib, the host's for
/// `native`), leaving the rest to the rows in flight and to associativity.
/// heat3d 256^3 on a Zen 3 core (512 KiB L2, 32 bytes a point: 8192
/// points a plane): tiles of 4096-16384 points measured alike within the
/// runs' spread (docs/performance.md, "Tiles from the profile's L2").
constexpr int64_t StencilTileL2Divisor = 2;
/// The L2 assumed when the profile gives none (the planes of a 7-point
/// sweep of doubles then take 512 KiB: 16384 points a plane).
constexpr int64_t DefaultL2Bytes = int64_t(1) << 20;

/// Points per plane of a tile of \p loop (3D): the L2's share divided by
/// the bytes a point of all the planes the loop touches takes (each dat
/// once per distinct offset along dimension 2).
int64_t stencilTilePoints(const ParLoopStmt &loop, int64_t l2Bytes) {
  std::set<std::pair<const Dat *, int64_t>> planes;
  int64_t bytes = 0;
  for (const AccessDescriptor &a : loop.args) {
    if (a.kind != ArgKind::Direct && a.kind != ArgKind::Stencil)
      continue;
    std::vector<int64_t> ks{0};
    if (a.kind == ArgKind::Stencil && a.stencil) {
      ks.clear();
      for (const std::vector<int64_t> &pt : a.stencil->points)
        ks.push_back(pt.size() > 2 ? pt[2] : 0);
    }
    for (int64_t k : ks)
      if (planes.insert({a.dat, k}).second)
        bytes += int64_t(a.bytes);
  }
  const int64_t l2 = l2Bytes > 0 ? l2Bytes : DefaultL2Bytes;
  return std::max<int64_t>(64, l2 / StencilTileL2Divisor /
                                   std::max<int64_t>(bytes, 1));
}

} // namespace

void emitCountedLoop(llvm::IRBuilder<> &b, llvm::Value *lo, llvm::Value *hi,
                     llvm::MDNode *loopID, const llvm::Twine &name,
                     llvm::function_ref<void(llvm::Value *)> body,
                     int64_t step) {
  llvm::Function *f = b.GetInsertBlock()->getParent();
  llvm::LLVMContext &c = f->getContext();
  llvm::BasicBlock *pre = b.GetInsertBlock();
  auto *loopBB = llvm::BasicBlock::Create(c, name, f);
  auto *exitBB = llvm::BasicBlock::Create(c, name + ".end");
  b.CreateCondBr(b.CreateICmpSLT(lo, hi), loopBB, exitBB);
  b.SetInsertPoint(loopBB);
  llvm::PHINode *v = b.CreatePHI(lo->getType(), 2, name + ".i");
  v->addIncoming(lo, pre);
  body(v);
  llvm::Value *next =
      b.CreateAdd(v, llvm::ConstantInt::get(lo->getType(), uint64_t(step)), "",
                  /*HasNUW=*/true, /*HasNSW=*/true);
  llvm::BranchInst *latch =
      b.CreateCondBr(b.CreateICmpSLT(next, hi), loopBB, exitBB);
  if (loopID)
    latch->setMetadata(llvm::LLVMContext::MD_loop, loopID);
  v->addIncoming(next, b.GetInsertBlock());
  exitBB->insertInto(f);
  b.SetInsertPoint(exitBB);
}

llvm::MDNode *makeScalarLoopID(llvm::LLVMContext &c) {
  llvm::MDNode *id = llvm::MDNode::getDistinct(
      c,
      {nullptr,
       llvm::MDNode::get(c, llvm::MDString::get(c, "llvm.loop.mustprogress")),
       llvm::MDNode::get(
           c, {llvm::MDString::get(c, "llvm.loop.vectorize.enable"),
               llvm::ConstantAsMetadata::get(llvm::ConstantInt::getFalse(c))}),
       llvm::MDNode::get(c,
                         llvm::MDString::get(c, "llvm.loop.unroll.disable"))});
  id->replaceOperandWith(0, id);
  return id;
}

llvm::MDNode *makeLoopID(llvm::LLVMContext &c, llvm::MDNode *group) {
  std::vector<llvm::Metadata *> ops{nullptr};
  ops.push_back(
      llvm::MDNode::get(c, llvm::MDString::get(c, "llvm.loop.mustprogress")));
  if (group)
    ops.push_back(llvm::MDNode::get(
        c, {llvm::MDString::get(c, "llvm.loop.parallel_accesses"), group}));
  llvm::MDNode *id = llvm::MDNode::getDistinct(c, ops);
  id->replaceOperandWith(0, id);
  return id;
}

llvm::ConstantInt *LoopEmitter::i64(int64_t v) const {
  return llvm::ConstantInt::get(cgm.i64Ty, uint64_t(v), true);
}

void LoopEmitter::emitKernelCall(llvm::IRBuilder<> &bb,
                                 const KernelInterface &kernel,
                                 const std::vector<llvm::Value *> &coords,
                                 llvm::MDNode *group) {
  std::vector<llvm::Value *> args;
  llvm::Value *i = coords[0];
  for (unsigned n = 0; n < loop.args.size(); ++n) {
    const AccessDescriptor &a = loop.args[n];
    llvm::Type *elemTy = cgm.memType(a.scalar);
    switch (a.kind) {
    case ArgKind::Direct:
    case ArgKind::Stencil:
      if (loop.block && n < alignedRows.size() && alignedRows[n]) {
        args.push_back(bb.CreateInBoundsGEP(elemTy, alignedRows[n], alignedStep));
      } else if (loop.block) {
        // (c0 + c1*s1 + c2*s2) components, strides already scaled by dim.
        llvm::Value *off = bb.CreateMul(coords[0], i64(a.dim));
        for (unsigned d = 1; d < dims; ++d)
          off = bb.CreateAdd(off, bb.CreateMul(coords[d], strides[n][d - 1]));
        args.push_back(bb.CreateInBoundsGEP(elemTy, base[n], off));
      } else {
        args.push_back(
            bb.CreateInBoundsGEP(elemTy, base[n], bb.CreateMul(i, i64(a.dim))));
      }
      break;
    case ArgKind::Indirect: {
      if (gatherBase[n]) {
        // -frepro-sum: element i's row of the runtime's buffer, starting
        // at the identity of addition (-0.0 keeps x + -0.0 == x).
        llvm::Value *row =
            bb.CreateInBoundsGEP(elemTy, gatherBase[n], bb.CreateMul(i, i64(a.dim)));
        llvm::Constant *zero = elemTy->isFloatingPointTy()
                                   ? llvm::ConstantFP::getNegativeZero(elemTy)
                                   : llvm::Constant::getNullValue(elemTy);
        for (unsigned k = 0; k < a.dim; ++k) {
          llvm::StoreInst *st = bb.CreateStore(
              zero, bb.CreateConstInBoundsGEP1_32(elemTy, row, k));
          if (group) // the row is the element's own
            st->setMetadata(llvm::LLVMContext::MD_access_group, group);
        }
        args.push_back(row);
        break;
      }
      if (incBuffer[n]) {
        args.push_back(incBuffer[n]);
        break;
      }
      if (stagedRow[n]) { // a strip's transposed rows (StagedRows.cpp)
        args.push_back(stagedRow[n]);
        break;
      }
      llvm::Value *slot =
          bb.CreateAdd(bb.CreateMul(i, i64(a.map->arity)), i64(a.mapIndex));
      llvm::LoadInst *target = bb.CreateLoad(
          cgm.i32Ty, bb.CreateInBoundsGEP(cgm.i32Ty, mapData[n], slot));
      target->setMetadata(llvm::LLVMContext::MD_tbaa, cgm.tbaaMap);
      if (group)
        target->setMetadata(llvm::LLVMContext::MD_access_group, group);
      llvm::Value *t = bb.CreateSExt(target, cgm.i64Ty);
      args.push_back(
          bb.CreateInBoundsGEP(elemTy, base[n], bb.CreateMul(t, i64(a.dim))));
      break;
    }
    case ArgKind::MapDirect:
      args.push_back(bb.CreateInBoundsGEP(cgm.i32Ty, mapData[n],
                                          bb.CreateMul(i, i64(a.map->arity))));
      break;
    case ArgKind::GlobalRead:
    case ArgKind::Reduction:
      args.push_back(argPtr[n]);
      break;
    }
  }
  for (unsigned n = 0; n < loop.args.size(); ++n)
    if (kernel.strideParam[n] >= 0)
      for (unsigned d = 1; d < dims; ++d)
        args.push_back(strides[n][d - 1]);
  if (gidField >= 0) {
    // idx(0) of a set loop: the element's global index (branch-free, so
    // the element loop still vectorises).
    llvm::Value *at = bb.CreateSelect(
        gidsNull, gidDummy, bb.CreateInBoundsGEP(cgm.i64Ty, gids, coords[0]));
    llvm::Value *g = bb.CreateLoad(cgm.i64Ty, at, "gid");
    args.push_back(bb.CreateSelect(gidsNull, coords[0], g));
  } else {
    for (llvm::Value *c : coords)
      args.push_back(c);
  }
  for (unsigned k = 0; k < columnTables.size(); ++k)
    args.push_back(loadColumnValue(bb, k, coords[0], group));
  // -frepro-sum: every element starts its float sums from -0.0 (the
  // identity: -0.0 + x is x), so its contribution is the same in any run,
  // and adds it exactly to the chunk's accumulators (lib/exec/ReproSum.cpp).
  for (unsigned n = 0; n < loop.args.size(); ++n) {
    if (!exactSlot[n])
      continue;
    const AccessDescriptor &a = loop.args[n];
    llvm::Type *t = cgm.memType(a.scalar);
    for (unsigned k = 0; k < a.dim; ++k)
      bb.CreateStore(llvm::ConstantFP::getNegativeZero(t),
                     bb.CreateConstInBoundsGEP1_32(t, argPtr[n], k));
  }
  llvm::CallInst *call = bb.CreateCall(kernel.function, args);
  if (callScope) {
    call->setMetadata(llvm::LLVMContext::MD_alias_scope, callScope);
    call->setMetadata(llvm::LLVMContext::MD_noalias, callNoAlias);
  }
  for (unsigned n = 0; n < loop.args.size(); ++n) {
    if (!exactSlot[n])
      continue;
    const AccessDescriptor &a = loop.args[n];
    for (unsigned k = 0; k < a.dim; ++k)
      emitExactAdd(bb, a, exactSlot[n], argPtr[n], k);
  }
}

void LoopEmitter::emitExactAdd(llvm::IRBuilder<> &bb,
                               const AccessDescriptor &a, llvm::Value *slot,
                               llvm::Value *acc, unsigned k) {
  // lib/exec/ReproSum.cpp's addDouble inline for normal numbers (the
  // common case); zeros, subnormals, infinities and NaN take the runtime's
  // opd_xsum_add_f64/_f32 for this component. A double m * 2^(q - 1075)
  // adds (m << (q & 31)) as three 32-bit digits to words q/32 .. q/32 + 2.
  auto c64 = [&](uint64_t v) { return llvm::ConstantInt::get(cgm.i64Ty, v); };
  llvm::Type *t = cgm.memType(a.scalar);
  llvm::Value *ptr = bb.CreateConstInBoundsGEP1_32(t, acc, k);
  llvm::Value *v = bb.CreateLoad(t, ptr, "c");
  if (a.scalar == ScalarKind::F32)
    v = bb.CreateFPExt(v, llvm::Type::getDoubleTy(cgm.context));
  llvm::Value *bits = bb.CreateBitCast(v, cgm.i64Ty, "bits");
  llvm::Value *q = bb.CreateAnd(bb.CreateLShr(bits, c64(52)), c64(0x7FF), "q");
  llvm::Value *words = bb.CreateInBoundsGEP(
      cgm.i64Ty, slot, c64(uint64_t(k) * uint64_t(runtimeXsumWords())));
  llvm::Value *special = bb.CreateOr(bb.CreateICmpEQ(q, c64(0)),
                                     bb.CreateICmpEQ(q, c64(0x7FF)));
  llvm::Function *f = bb.GetInsertBlock()->getParent();
  auto *slow = llvm::BasicBlock::Create(cgm.context, "xsum.slow", f);
  auto *fast = llvm::BasicBlock::Create(cgm.context, "xsum.fast", f);
  auto *done = llvm::BasicBlock::Create(cgm.context, "xsum.done", f);
  bb.CreateCondBr(special, slow, fast);
  bb.SetInsertPoint(slow);
  bb.CreateCall(a.scalar == ScalarKind::F64 ? cgm.rt.xsumAddF64
                                            : cgm.rt.xsumAddF32,
                {words, ptr, llvm::ConstantInt::get(cgm.i32Ty, 1)});
  bb.CreateBr(done);
  bb.SetInsertPoint(fast);
  llvm::Type *i128 = llvm::Type::getInt128Ty(cgm.context);
  llvm::Value *m = bb.CreateOr(bb.CreateAnd(bits, c64((uint64_t(1) << 52) - 1)),
                               c64(uint64_t(1) << 52));
  llvm::Value *x = bb.CreateShl(bb.CreateZExt(m, i128),
                                bb.CreateZExt(bb.CreateAnd(q, c64(31)), i128));
  llvm::Value *neg = bb.CreateICmpSLT(bits, c64(0));
  llvm::Value *at = bb.CreateLShr(q, c64(5));
  for (unsigned d = 0; d < 3; ++d) {
    llvm::Value *digit = bb.CreateTrunc(
        bb.CreateLShr(x, llvm::ConstantInt::get(i128, 32 * d)), cgm.i64Ty);
    if (d < 2)
      digit = bb.CreateAnd(digit, c64(0xFFFFFFFFu));
    digit = bb.CreateSelect(neg, bb.CreateNeg(digit), digit);
    llvm::Value *w = bb.CreateInBoundsGEP(cgm.i64Ty, words,
                                          bb.CreateAdd(at, c64(d)));
    bb.CreateStore(bb.CreateAdd(bb.CreateLoad(cgm.i64Ty, w), digit), w);
  }
  bb.CreateBr(done);
  bb.SetInsertPoint(done);
}

bool LoopEmitter::gatherMode() const {
  return host::gatherIncrements(loop, access, cgm.options.reproSum);
}

bool LoopEmitter::exactSum(const AccessDescriptor &a) const {
  return host::exactSum(a, cgm.options.reproSum);
}

void LoopEmitter::tagWithLoop(llvm::Function &f) {
  // Remarks.cpp reports vectorisation per loop at this location.
  unsigned buffer = 0, line = 0, col = 0;
  if (loop.range.valid()) {
    SourceManager &sm = cgm.diags.sources();
    buffer = sm.bufferOf(loop.range.begin);
    std::tie(line, col) = sm.lineAndColumn(loop.range.begin);
  }
  auto num = [&](unsigned v) {
    return llvm::ConstantAsMetadata::get(
        llvm::ConstantInt::get(cgm.i32Ty, v));
  };
  f.setMetadata(
      LoopMetadataKind,
      llvm::MDNode::get(cgm.context,
                        {llvm::MDString::get(
                             cgm.context, ir::userLoopName(loop.kernel->name)),
                         num(buffer), num(line), num(col)}));
}

llvm::Function *LoopEmitter::emitBody(const KernelInterface &kernel,
                                      llvm::MDNode *group) {
  llvm::Function *f = llvm::Function::Create(
      cgm.rt.bodyTy, llvm::GlobalValue::InternalLinkage,
      "opd_body_" + loop.kernel->name + "." + std::to_string(id), cgm.module);
  cgm.addFunctionAttributes(*f);
  tagWithLoop(*f);
  llvm::Argument *ctxArg = f->getArg(0);
  ctxArg->setName("ctx");
  ctxArg->addAttr(llvm::Attribute::NoAlias);
  ctxArg->addAttr(llvm::Attribute::NoCapture);
  ctxArg->addAttr(llvm::Attribute::ReadOnly);
  llvm::Value *begin = f->getArg(1), *end = f->getArg(2), *chunk = f->getArg(3);
  begin->setName("begin");
  end->setName("end");
  chunk->setName("chunk");

  auto *entry = llvm::BasicBlock::Create(cgm.context, "entry", f);
  llvm::IRBuilder<> bb(entry);
  auto field = [&](int n) { return bb.CreateStructGEP(ctxTy, ctxArg, n); };

  size_t n = loop.args.size();
  // Per reduction argument: the accumulator (an alloca), the pointer to
  // the partials and the slot in use (the chunk's, or the plane's).
  std::vector<llvm::AllocaInst *> accumulators(n, nullptr);
  std::vector<llvm::Value *> slots(n, nullptr);
  // A 3D block loop keeps one partial slot per plane of the outermost
  // dimension instead of one per chunk (partialsPerPlane, lib/exec/Loop.h):
  // its rows run tile by tile, all planes of a call within each tile, so a
  // per-chunk accumulator would add a plane's rows in an order that depends
  // on which planes the call holds. Per plane, the order is the plane's
  // own (tile by tile, row by row), whatever the calls: the skewed sweep
  // (lib/exec/Skew.cpp) may then run a summing loop's rows a plane at a
  // time, close behind the loops it follows.
  const bool planeSlots = loop.block && dims == 3;
  loadFields(bb, ctxArg, accumulators);
  chooseRowShape(f, group);
  // The slots numbered \p index: the exact sums' accumulators, and the
  // accumulators loaded from theirs; stored back by closeSlots.
  auto openSlots = [&](llvm::Value *index) {
    for (unsigned i = 0; i < n; ++i) {
      if (!partialBase[i])
        continue;
      if (!accumulators[i]) {
        exactSlot[i] = partialSlot(bb, i, index);
        continue;
      }
      slots[i] = partialSlot(bb, i, index);
      bb.CreateStore(
          bb.CreateLoad(accumulators[i]->getAllocatedType(), slots[i]),
          accumulators[i]);
    }
  };
  auto closeSlots = [&] {
    for (unsigned i = 0; i < n; ++i)
      if (llvm::AllocaInst *acc = accumulators[i])
        bb.CreateStore(bb.CreateLoad(acc->getAllocatedType(), acc), slots[i]);
  };
  if (!planeSlots)
    openSlots(chunk);
  rangeLo.clear();
  rangeHi.clear();
  if (loop.block) {
    auto *arrTy = llvm::ArrayType::get(cgm.i64Ty, dims);
    for (unsigned d = 0; d < dims; ++d) {
      rangeLo.push_back(bb.CreateLoad(
          cgm.i64Ty, bb.CreateConstInBoundsGEP2_32(arrTy, field(loField), 0, d),
          "lo"));
      rangeHi.push_back(bb.CreateLoad(
          cgm.i64Ty, bb.CreateConstInBoundsGEP2_32(arrTy, field(hiField), 0, d),
          "hi"));
    }
  }

  // The loop nest: the outermost dimension over [begin, end), the others
  // over their ranges, dimension 0 innermost. 3D loops are cache-blocked:
  // dimension 1 runs in tiles of about stencilTilePoints points per plane,
  // tiles outermost, so that while dimension 2 advances, the planes a
  // stencil reads (k-1, k, k+1 of the tile) stay in the L2 cache instead of
  // being fetched again from memory or L3 (whole 256^2 planes do not fit).
  std::vector<llvm::Value *> coords(dims, nullptr);
  llvm::Value *tileLo = nullptr, *tileHi = nullptr;
  std::function<void(unsigned)> level = [&](unsigned d) {
    bool outer = d == dims - 1;
    bool inner = d == 0;
    llvm::Value *lo = outer ? begin : rangeLo[d];
    llvm::Value *hi = outer ? end : rangeHi[d];
    if (d == 1 && tileLo) {
      lo = tileLo;
      hi = tileHi;
    }
    if (inner && !alignArgs.empty()) {
      emitAlignedRow(bb, kernel, coords, lo, hi, group);
      return;
    }
    if (inner) {
      emitElements(bb, lo, hi, group, "dim0", [&](llvm::Value *v) {
        coords[0] = v;
        emitKernelCall(bb, kernel, coords, group);
      });
      return;
    }
    emitCountedLoop(bb, lo, hi, makeLoopID(cgm.context, nullptr),
                    "dim" + std::to_string(d), [&](llvm::Value *v) {
                      coords[d] = v;
                      if (!(outer && planeSlots)) {
                        level(d - 1);
                        return;
                      }
                      // The plane's slots, numbered from the range's first
                      // plane.
                      openSlots(bb.CreateSub(v, rangeLo[d]));
                      level(d - 1);
                      closeSlots();
                    });
  };
  if (access.race == RaceClass::IncStrips && !gatherMode()) {
    emitIncStrips(bb, kernel, group, begin, end);
  } else if (anyStaged()) {
    allocStagedRows(bb);
    emitStagedStrips(bb, kernel, group, begin, end);
  } else if (dims == 3) {
    llvm::Value *row = bb.CreateSub(rangeHi[0], rangeLo[0]);
    row = bb.CreateSelect(bb.CreateICmpSGT(row, i64(1)), row, i64(1));
    llvm::Value *tile = bb.CreateSDiv(
        i64(stencilTilePoints(loop, cgm.options.l2CacheBytes)), row);
    tile = bb.CreateSelect(bb.CreateICmpSGT(tile, i64(1)), tile, i64(1),
                           "tile");
    llvm::Value *span = bb.CreateSub(rangeHi[1], rangeLo[1]);
    llvm::Value *ntiles = bb.CreateSDiv(
        bb.CreateAdd(span, bb.CreateSub(tile, i64(1))), tile, "ntiles");
    emitCountedLoop(bb, i64(0), ntiles, makeLoopID(cgm.context, nullptr),
                    "tile1", [&](llvm::Value *t) {
                      tileLo = bb.CreateAdd(rangeLo[1], bb.CreateMul(t, tile));
                      llvm::Value *e = bb.CreateAdd(tileLo, tile);
                      tileHi = bb.CreateSelect(
                          bb.CreateICmpSLT(e, rangeHi[1]), e, rangeHi[1]);
                      level(dims - 1);
                    });
  } else {
    level(dims - 1);
  }

  if (!planeSlots)
    closeSlots();
  bb.CreateRetVoid();
  return f;
}

/// Resets the body-side values and loads them from the context at \p bb:
/// pointers, strides, maps, private copies of globals and, per reduction
/// argument, its accumulator (\p accumulators) and partials.
void LoopEmitter::loadFields(llvm::IRBuilder<> &bb, llvm::Value *ctxArg,
                             std::vector<llvm::AllocaInst *> &accumulators) {
  auto field = [&](int n) { return bb.CreateStructGEP(ctxTy, ctxArg, n); };
  size_t n = loop.args.size();
  base.assign(n, nullptr);
  mapData.assign(n, nullptr);
  argPtr.assign(n, nullptr);
  sumLanes = 0;
  laneSums.assign(n, {});
  laneAccs.assign(n, {});
  laneOnce.assign(n, false);
  incBuffer.assign(n, nullptr);
  stagedRow.assign(n, nullptr);
  exactSlot.assign(n, nullptr);
  gatherBase.assign(n, nullptr);
  strides.assign(n, {});
  partialBase.assign(n, nullptr);
  // Shared fields are loaded once.
  std::map<int, llvm::Value *> loadedPtr;
  std::map<int, std::vector<llvm::Value *>> loadedStrides;
  auto loadPtr = [&](int f, const char *name) {
    llvm::Value *&v = loadedPtr[f];
    if (!v)
      v = bb.CreateLoad(cgm.ptrTy, field(f), name);
    return v;
  };
  columnTables.clear();
  for (int f : columnFields)
    columnTables.push_back(bb.CreateLoad(cgm.ptrTy, field(f), "column.table"));
  if (gidField >= 0) {
    gids = bb.CreateLoad(cgm.ptrTy, field(gidField), "gids");
    gidsNull = bb.CreateIsNull(gids, "gids.null");
    gidDummy = bb.CreateAlloca(cgm.i64Ty, nullptr, "gid.dummy");
    bb.CreateStore(llvm::ConstantInt::get(cgm.i64Ty, 0), gidDummy);
  }
  for (unsigned i = 0; i < n; ++i) {
    const AccessDescriptor &a = loop.args[i];
    const Fields &fl = fields[i];
    if (fl.base >= 0)
      base[i] = loadPtr(fl.base, "base");
    if (fl.strides >= 0) {
      std::vector<llvm::Value *> &st = loadedStrides[fl.strides];
      if (st.empty()) {
        auto *arrTy = llvm::ArrayType::get(cgm.i64Ty, dims - 1);
        for (unsigned d = 1; d < dims; ++d)
          st.push_back(bb.CreateLoad(
              cgm.i64Ty,
              bb.CreateConstInBoundsGEP2_32(arrTy, field(fl.strides), 0, d - 1),
              "stride"));
      }
      strides[i] = st;
    }
    if (fl.map >= 0)
      mapData[i] = loadPtr(fl.map, "map");
    if (fl.value >= 0 &&
        loop.kernel->kernelParams[i].type.length > LargeArrayLength) {
      // A large array (a layer's weights) is read where it is: the context
      // is noalias and read-only, and copying it per chunk would cost more
      // than the reads.
      argPtr[i] = field(fl.value);
    } else if (fl.value >= 0) {
      // A private copy: loads from it cannot alias any dat store, so the
      // value stays in registers for the whole chunk.
      llvm::Type *t = ctxTy->getElementType(unsigned(fl.value));
      llvm::AllocaInst *copy = bb.CreateAlloca(t, nullptr, "global");
      bb.CreateStore(bb.CreateLoad(t, field(fl.value)), copy);
      argPtr[i] = copy;
    }
    if (fl.gather >= 0)
      gatherBase[i] = bb.CreateLoad(cgm.ptrTy, field(fl.gather), "gather");
    if (fl.partials >= 0 && exactSum(a)) {
      // -frepro-sum: the kernel sums one element into `acc`, which
      // emitKernelCall resets before and adds exactly into the chunk's
      // accumulators (slot) after each element.
      auto *accTy = llvm::ArrayType::get(cgm.memType(a.scalar), a.dim);
      argPtr[i] = bb.CreateAlloca(accTy, nullptr, "acc");
      partialBase[i] = bb.CreateLoad(cgm.ptrTy, field(fl.partials));
    } else if (fl.partials >= 0) {
      // The chunk's accumulator starts from its partial slot (the
      // identity) and is stored back once at the end of the chunk (3D: of
      // each plane, planeSlots).
      auto *accTy = llvm::ArrayType::get(cgm.memType(a.scalar), a.dim);
      llvm::AllocaInst *acc = bb.CreateAlloca(accTy, nullptr, "acc");
      partialBase[i] = bb.CreateLoad(cgm.ptrTy, field(fl.partials));
      accumulators[i] = acc;
      argPtr[i] = acc;
      if (cgm.options.sumLanes && isFloat(a.scalar) &&
          a.mode == AccessMode::Sum) {
        // The partial sums of each component: one vector of SumLanes.
        sumLanes = SumLanes;
        auto *vecTy =
            llvm::FixedVectorType::get(cgm.memType(a.scalar), SumLanes);
        for (unsigned k = 0; k < a.dim; ++k)
          laneSums[i].push_back(bb.CreateAlloca(vecTy, nullptr, "lanes"));
        for (unsigned l = 0; l < SumLanes; ++l)
          laneAccs[i].push_back(bb.CreateAlloca(accTy, nullptr, "lane.acc"));
        laneOnce[i] = addsAtMostOnce(*loop.kernel, i);
      }
    }
  }
}

/// alignArgs and tailVector of body \p f: how its rows are emitted.
void LoopEmitter::chooseRowShape(llvm::Function *f, llvm::MDNode *group) {
  size_t n = loop.args.size();
  // Rows are aligned for the arguments that may stream, when the element
  // loop can vectorise at all (a parallel access group) and their elements
  // are single scalars, so that every element lies a multiple of its size
  // from a 64-byte boundary and the prologue reaches one: the first (the
  // lead) decides the peel, the others of its scalar type follow it.
  // Not with float sums: the peel would depend on the row's address, and
  // with it which elements share a partial sum (padded and dense rows, or
  // two allocations, would round differently).
  alignArgs.clear();
  for (unsigned i = 0; loop.block && group && !sumLanes && i < n; ++i)
    if (isStreamCandidate(loop, i) && loop.args[i].dim == 1 &&
        (alignArgs.empty() ||
         cgm.memType(loop.args[i].scalar) ==
             cgm.memType(loop.args[alignArgs.front()].scalar)))
      alignArgs.push_back(i);
  // Row tails: V, the elements of one vector register of the widest scalar
  // the loop's dats hold (LoopBody.cpp, "Row tails").
  tailVector = 0;
  if (cgm.options.rowTails && group && !sumLanes && elementsRerunnable()) {
    const llvm::DataLayout &layout = cgm.module.getDataLayout();
    int64_t widest = 1;
    for (const AccessDescriptor &a : loop.args)
      if (a.dat)
        widest = std::max<int64_t>(
            widest, int64_t(layout.getTypeStoreSize(cgm.memType(a.scalar))));
    // The width the vectoriser uses for this function (its target CPU
    // and prefer-vector-width).
    const int64_t bits =
        int64_t(cgm.targetMachine.getTargetTransformInfo(*f)
                    .getRegisterBitWidth(
                        llvm::TargetTransformInfo::RGK_FixedWidthVector)
                    .getFixedValue());
    const int64_t v = bits / 8 / widest;
    tailVector = v >= 2 ? unsigned(v) : 0;
  }
}

} // namespace opdc
