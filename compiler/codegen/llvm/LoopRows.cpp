// LoopRows.cpp - Parallel loops: the element rows of a loop body.
// SPDX-License-Identifier: Apache-2.0
//
// The body function (LoopBody.cpp) loads the context and runs the loop
// nest; this file emits its innermost element loops: float sums split into
// lane groups, row tails run as shifted vectors, rows peeled to an aligned
// element for streaming stores, and indirect increments in strips. Split
// from LoopBody.cpp along that seam; the design of each (and why results
// stay bitwise the same) is described at the top of LoopBody.cpp, under
// "Float sums", "Row tails", "Aligned rows" and "Indirect increments".
#include "codegen/llvm/LoopEmitter.h"

#include "codegen/common/Identities.h"
#include "codegen/common/RuntimeMapping.h"
#include "codegen/llvm/LLVMCodeGen.h"

#include "support/Assert.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/MDBuilder.h"

namespace opdc {

using namespace ir;

std::vector<std::pair<unsigned, unsigned>> LoopEmitter::laneSumList() const {
  std::vector<std::pair<unsigned, unsigned>> sums;
  for (unsigned n = 0; n < laneSums.size(); ++n)
    for (unsigned k = 0; k < laneSums[n].size(); ++k)
      sums.push_back({n, k});
  return sums;
}

llvm::Value *LoopEmitter::accumulatorAt(llvm::IRBuilder<> &bb, unsigned n,
                                        unsigned k) {
  return bb.CreateConstInBoundsGEP1_32(cgm.memType(loop.args[n].scalar),
                                       argPtr[n], k);
}

llvm::Value *LoopEmitter::partialSlot(llvm::IRBuilder<> &bb, unsigned n,
                                      llvm::Value *index) {
  const AccessDescriptor &a = loop.args[n];
  if (exactSum(a))
    return bb.CreateInBoundsGEP(
        cgm.i64Ty, partialBase[n],
        bb.CreateMul(index, i64(int64_t(a.dim) * runtimeXsumWords())), "xsum");
  return bb.CreateInBoundsGEP(cgm.memType(a.scalar), partialBase[n],
                              bb.CreateMul(index, i64(a.dim)), "partial");
}

void LoopEmitter::startLanes(llvm::IRBuilder<> &bb) {
  // Lane 0 starts from the running value, the others from -0.0 (the
  // identity of addition).
  for (auto [n, k] : laneSumList()) {
    llvm::Type *t = cgm.memType(loop.args[n].scalar);
    llvm::Value *v =
        llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(sumLanes),
                                       llvm::ConstantFP::getNegativeZero(t));
    v = bb.CreateInsertElement(v, bb.CreateLoad(t, accumulatorAt(bb, n, k)),
                               uint64_t(0));
    bb.CreateStore(v, laneSums[n][k]);
  }
}

void LoopEmitter::finishLanes(llvm::IRBuilder<> &bb) {
  for (auto [n, k] : laneSumList()) {
    llvm::Type *t = cgm.memType(loop.args[n].scalar);
    llvm::Value *v =
        bb.CreateLoad(llvm::FixedVectorType::get(t, sumLanes), laneSums[n][k]);
    llvm::Value *r = bb.CreateExtractElement(v, uint64_t(0));
    for (unsigned l = 1; l < sumLanes; ++l)
      r = bb.CreateFAdd(r, bb.CreateExtractElement(v, uint64_t(l)));
    bb.CreateStore(r, accumulatorAt(bb, n, k));
  }
}

void LoopEmitter::emitLaneGroups(
    llvm::IRBuilder<> &bb, llvm::Value *lo, llvm::Value *mid,
    llvm::MDNode *group, const llvm::Twine &name,
    llvm::function_ref<void(llvm::Value *)> element) {
  // Element lo + g*sumLanes + l adds to partial l: its kernel runs on a
  // scalar accumulator loaded from lane l and stored back there. The
  // copies of the kernel are independent when the loop is parallel, and
  // the partials are one vector each, which keeps the loop vectoriser off
  // this loop (it would reorder the sums its own way) and gives the SLP
  // vectoriser the copies to pack. Each copy works on its lane's own
  // scalar accumulator (laneAccs).
  //
  // In a parallel loop (group given) no element touches data another
  // element writes, so the copies' memory accesses are declared apart:
  // each kernel call carries its lane's alias scope and the other lanes'
  // as noalias, which the inliner adds to every access of the inlined
  // copy (the kernel's own scopes are cloned per copy and say nothing
  // across copies). Without it the SLP vectoriser could not move a copy's
  // loads above the previous copy's stores. Each lane has its own
  // accumulator, so the claim holds for those too; reads that two lanes
  // share (stencil neighbours, private globals) are only reads. Not when
  // the loop has other reductions (min, max, integer sums): the lanes
  // share their accumulators.
  const auto sums = laneSumList();
  std::vector<llvm::MDNode *> scope(sumLanes, nullptr),
      noalias(sumLanes, nullptr);
  bool shared = false;
  for (unsigned n = 0; n < loop.args.size(); ++n)
    shared = shared ||
             (loop.args[n].kind == ArgKind::Reduction && laneSums[n].empty());
  if (group && !shared) {
    llvm::MDBuilder md(cgm.context);
    llvm::MDNode *domain = md.createAnonymousAliasScopeDomain("lanes");
    std::vector<llvm::MDNode *> lane;
    for (unsigned l = 0; l < sumLanes; ++l)
      lane.push_back(
          md.createAnonymousAliasScope(domain, "lane" + std::to_string(l)));
    for (unsigned l = 0; l < sumLanes; ++l) {
      scope[l] = llvm::MDNode::get(cgm.context, {lane[l]});
      std::vector<llvm::Metadata *> others;
      for (unsigned m = 0; m < sumLanes; ++m)
        if (m != l)
          others.push_back(lane[m]);
      noalias[l] = llvm::MDNode::get(cgm.context, others);
    }
  }
  //
  // A sum the kernel adds to at most once an element (laneOnce) keeps its
  // partials out of the copies: each copy's accumulator starts from -0.0
  // (so it ends as the element's addend, or -0.0), and the copies' results
  // join the partials in one vector addition after the four copies. The
  // bits are the same (p + (-0.0 + e) == p + e, p + -0.0 == p), but the
  // row's loop-carried chain is that one addition: carried through every
  // copy, SLP split it into pieces with shuffles between (Poisson's adjoint
  // loop jacobi.b: its adjoint is faster without it,
  // bench/adjoint/README.md).
  std::vector<llvm::Value *> saved = argPtr;
  emitCountedLoop(
      bb, lo, mid, makeLoopID(cgm.context, group), name + ".lanes",
      [&](llvm::Value *g) {
        // Per (argument, component) of a once-sum: the lanes' addends.
        std::vector<std::vector<llvm::Value *>> addends(sums.size());
        for (unsigned l = 0; l < sumLanes; ++l) {
          for (unsigned n = 0; n < laneSums.size(); ++n)
            if (!laneSums[n].empty())
              argPtr[n] = laneAccs[n][l];
          for (auto [n, k] : sums) {
            llvm::Type *t = cgm.memType(loop.args[n].scalar);
            llvm::Value *start = llvm::ConstantFP::getNegativeZero(t);
            if (!laneOnce[n])
              start = bb.CreateExtractElement(
                  bb.CreateLoad(llvm::FixedVectorType::get(t, sumLanes),
                                laneSums[n][k]),
                  uint64_t(l));
            bb.CreateStore(start, accumulatorAt(bb, n, k));
          }
          callScope = scope[l];
          callNoAlias = noalias[l];
          element(l ? bb.CreateAdd(g, i64(l), "", true, true) : g);
          callScope = callNoAlias = nullptr;
          for (size_t s = 0; s < sums.size(); ++s) {
            auto [n, k] = sums[s];
            llvm::Type *t = cgm.memType(loop.args[n].scalar);
            llvm::Value *acc = bb.CreateLoad(t, accumulatorAt(bb, n, k));
            if (laneOnce[n]) {
              addends[s].push_back(acc);
              continue;
            }
            llvm::Value *v = bb.CreateLoad(
                llvm::FixedVectorType::get(t, sumLanes), laneSums[n][k]);
            bb.CreateStore(bb.CreateInsertElement(v, acc, uint64_t(l)),
                           laneSums[n][k]);
          }
          argPtr = saved;
        }
        for (size_t s = 0; s < sums.size(); ++s) {
          auto [n, k] = sums[s];
          if (!laneOnce[n])
            continue;
          auto *vt = llvm::FixedVectorType::get(
              cgm.memType(loop.args[n].scalar), sumLanes);
          llvm::Value *add = llvm::PoisonValue::get(vt);
          for (unsigned l = 0; l < sumLanes; ++l)
            add = bb.CreateInsertElement(add, addends[s][l], uint64_t(l));
          bb.CreateStore(bb.CreateFAdd(bb.CreateLoad(vt, laneSums[n][k]), add),
                         laneSums[n][k]);
        }
      },
      sumLanes);
}

llvm::Value *LoopEmitter::laneGroupsEnd(llvm::IRBuilder<> &bb, llvm::Value *lo,
                                        llvm::Value *hi,
                                        const llvm::Twine &name) {
  llvm::Value *count = bb.CreateSub(hi, lo);
  count = bb.CreateSelect(bb.CreateICmpSGT(count, i64(0)), count, i64(0));
  return bb.CreateAdd(lo, bb.CreateAnd(count, i64(-int64_t(sumLanes))),
                      name + ".mid");
}

void LoopEmitter::emitElements(
    llvm::IRBuilder<> &bb, llvm::Value *lo, llvm::Value *hi,
    llvm::MDNode *group, const llvm::Twine &name,
    llvm::function_ref<void(llvm::Value *)> element) {
  if (!sumLanes && tailVector) {
    emitRowWithTail(
        bb, lo, hi, group, name,
        [&](llvm::Value *m) {
          emitCountedLoop(bb, lo, m, makeLoopID(cgm.context, group), name,
                          element);
        },
        element);
    return;
  }
  if (!sumLanes) {
    emitCountedLoop(bb, lo, hi, makeLoopID(cgm.context, group), name, element);
    return;
  }
  // [lo, mid): whole groups of sumLanes elements; [mid, hi): the rest, in
  // order after the partials are added up.
  llvm::Value *mid = laneGroupsEnd(bb, lo, hi, name);
  startLanes(bb);
  emitLaneGroups(bb, lo, mid, group, name, element);
  finishLanes(bb);
  emitCountedLoop(bb, mid, hi, makeLoopID(cgm.context, group), name + ".rest",
                  element);
}

bool LoopEmitter::elementsRerunnable() const {
  if (!loop.block || access.race != RaceClass::Parallel)
    return false;
  for (unsigned i = 0; i < loop.args.size(); ++i) {
    const AccessDescriptor &a = loop.args[i];
    switch (a.kind) {
    case ArgKind::GlobalRead:
      continue;
    case ArgKind::Direct:
    case ArgKind::Stencil:
      break;
    default: // reductions (an element added twice), maps
      return false;
    }
    // Written: only `out` at the centre of a dat nothing else reaches (an
    // inout or inc would apply twice).
    if (a.mode != AccessMode::Read && !isWriteOnlyCentre(loop, i))
      return false;
  }
  return true;
}

void LoopEmitter::emitRowWithTail(
    llvm::IRBuilder<> &bb, llvm::Value *lo, llvm::Value *hi,
    llvm::MDNode *group, const llvm::Twine &name,
    llvm::function_ref<void(llvm::Value *)> mainLoop,
    llvm::function_ref<void(llvm::Value *)> element) {
  const int64_t v = tailVector, w = 4 * int64_t(tailVector);
  llvm::Value *count = bb.CreateSub(hi, lo);
  llvm::Value *whole = bb.CreateMul(bb.CreateSDiv(count, i64(w)), i64(w));
  llvm::Value *m = bb.CreateSelect(bb.CreateICmpSGE(count, i64(v)),
                                   bb.CreateAdd(lo, whole), hi, "tail.lo");
  mainLoop(m);
  // The tail's vectors: not vectorised or unrolled as a loop (a vector may
  // overlap the one before it), each an inner loop of exactly V elements
  // that the vectoriser takes whole.
  llvm::LLVMContext &c = cgm.context;
  llvm::MDNode *outerID = makeScalarLoopID(c);
  std::vector<llvm::Metadata *> inner{
      nullptr,
      llvm::MDNode::get(c, llvm::MDString::get(c, "llvm.loop.mustprogress")),
      llvm::MDNode::get(c, llvm::MDString::get(c, "llvm.loop.unroll.disable"))};
  if (group)
    inner.push_back(llvm::MDNode::get(
        c, {llvm::MDString::get(c, "llvm.loop.parallel_accesses"), group}));
  llvm::MDNode *innerID = llvm::MDNode::getDistinct(c, inner);
  innerID->replaceOperandWith(0, innerID);
  llvm::Value *last = bb.CreateSub(hi, i64(v), "tail.last");
  emitCountedLoop(
      bb, m, hi, outerID, name + ".tail",
      [&](llvm::Value *s) {
        llvm::Value *from =
            bb.CreateSelect(bb.CreateICmpSLT(s, last), s, last, "tail.from");
        emitCountedLoop(bb, i64(0), i64(v), innerID, name + ".tail.v",
                        [&](llvm::Value *j) {
                          element(bb.CreateAdd(from, j, "", true, true));
                        });
      },
      v);
}

void LoopEmitter::emitAlignedRow(llvm::IRBuilder<> &bb,
                                 const KernelInterface &kernel,
                                 std::vector<llvm::Value *> &coords,
                                 llvm::Value *lo, llvm::Value *hi,
                                 llvm::MDNode *group) {
  // The runtime pads rows so that the rank's first interior point starts a
  // cache line in every row (lib/core/Mesh.cpp), so loops over the interior
  // peel nothing; a loop starting in the halo peels a few elements. With
  // the row's alignment known, the vectoriser's stores of the argument are
  // aligned, and the streaming variant (.nt) writes whole lines with
  // aligned non-temporal vector stores instead of 8-byte pieces.
  const unsigned lead = alignArgs.front();
  const llvm::DataLayout &layout = cgm.module.getDataLayout();
  const int64_t size =
      int64_t(layout.getTypeStoreSize(cgm.memType(loop.args[lead].scalar)));
  OPDC_ASSERT(size > 0 && 64 % size == 0, "aligned row of an odd element size");
  // Argument n's element at (i, coords[1], coords[2]): one component, so
  // strides are in elements.
  auto elementAt = [&](unsigned n, llvm::Value *i) {
    llvm::Value *off = i;
    for (unsigned d = 1; d < dims; ++d)
      off = bb.CreateAdd(off, bb.CreateMul(coords[d], strides[n][d - 1]));
    return bb.CreateInBoundsGEP(cgm.memType(loop.args[n].scalar), base[n], off);
  };
  auto misaligned = [&](llvm::Value *p) {
    return bb.CreateAnd(bb.CreatePtrToInt(p, cgm.i64Ty), i64(63));
  };
  llvm::Value *count = bb.CreateSub(hi, lo);
  count = bb.CreateSelect(bb.CreateICmpSGT(count, i64(0)), count, i64(0));
  llvm::Value *toLine = bb.CreateAnd(
      bb.CreateSub(i64(0), misaligned(elementAt(lead, lo))), i64(63));
  // A row shorter than a line runs whole in the prologue; a longer one
  // peels at most a line's elements (< count). Not min(peel, count): SCEV
  // would fold that umin into every address of the aligned loop (umin(a, b)
  // + i = umin(a + i, b + i), no longer an add recurrence), and loop
  // strength reduction then rebuilt each of a 7-point stencil's addresses
  // with a compare and cmov every iteration (heat3d's step ran 1.3-1.6x
  // slower, docs/performance.md). This select's condition is not a
  // comparison of its arms, so SCEV keeps it opaque.
  llvm::Value *peel = bb.CreateUDiv(toLine, i64(size));
  peel = bb.CreateSelect(bb.CreateICmpSGE(count, i64(64 / size)), peel, count,
                         "peel");
  llvm::Value *mid = bb.CreateAdd(lo, peel, "aligned.lo");

  // The prologue: scalar and not unrolled (fewer than 64 bytes of the
  // argument, a vector loop or unrolled copies would only add code).
  llvm::LLVMContext &c = cgm.context;
  llvm::MDNode *scalarID = makeScalarLoopID(c);
  emitCountedLoop(bb, lo, mid, scalarID, "dim0.peel", [&](llvm::Value *i) {
    coords[0] = i;
    emitKernelCall(bb, kernel, coords, group);
  });

  // The aligned element loop, counted from 0 so that the vectoriser's
  // induction starts on the aligned point, with the rows of `aligned`
  // assumed 64-byte aligned there. The lead argument's row is aligned only
  // when the prologue was not cut short by the row's end, i.e. when
  // mid < hi: the loop and its assumptions are made there only.
  llvm::Function *f = bb.GetInsertBlock()->getParent();
  auto block = [&](const char *name) {
    return llvm::BasicBlock::Create(c, name, f);
  };
  llvm::BasicBlock *first = block("dim0.aligned");
  llvm::BasicBlock *doneBB = block("dim0.aligned.end");
  bb.CreateCondBr(bb.CreateICmpSLT(mid, hi), first, doneBB);
  auto alignedLoop = [&](llvm::BasicBlock *at,
                         const std::vector<unsigned> &aligned) {
    bb.SetInsertPoint(at);
    alignedRows.assign(loop.args.size(), nullptr);
    for (unsigned n : aligned) {
      alignedRows[n] = elementAt(n, mid);
      bb.CreateAlignmentAssumption(layout, alignedRows[n], 64);
    }
    auto mainLoop = [&](llvm::Value *end) {
      emitCountedLoop(bb, i64(0), bb.CreateSub(end, mid),
                      makeLoopID(cgm.context, group), "dim0",
                      [&](llvm::Value *t) {
                        coords[0] = bb.CreateAdd(mid, t, "", true, true);
                        alignedStep = t;
                        emitKernelCall(bb, kernel, coords, group);
                        alignedStep = nullptr;
                      });
      alignedRows.clear(); // the tail's vectors are not aligned
    };
    if (tailVector)
      emitRowWithTail(bb, mid, hi, group, "dim0", mainLoop,
                      [&](llvm::Value *i) {
                        coords[0] = i;
                        emitKernelCall(bb, kernel, coords, group);
                      });
    else
      mainLoop(hi);
    bb.CreateBr(doneBB);
  };
  if (alignArgs.size() == 1) {
    alignedLoop(first, alignArgs);
  } else {
    // Other arguments that may stream, of the lead's element size, are
    // aligned with it when their rows sit at the same offset in a line
    // (dats of one block and one base on padded rows): then they stream
    // too; otherwise only the lead does.
    bb.SetInsertPoint(first);
    llvm::Value *together = bb.getTrue();
    for (unsigned n : alignArgs)
      together = bb.CreateAnd(
          together, bb.CreateICmpEQ(misaligned(elementAt(n, mid)), i64(0)));
    llvm::BasicBlock *all = block("dim0.aligned.all");
    llvm::BasicBlock *one = block("dim0.aligned.one");
    bb.CreateCondBr(together, all, one);
    alignedLoop(all, alignArgs);
    alignedLoop(one, {lead});
  }
  doneBB->moveAfter(bb.GetInsertBlock());
  bb.SetInsertPoint(doneBB);
}

void LoopEmitter::emitIncStrips(llvm::IRBuilder<> &bb,
                                const KernelInterface &kernel,
                                llvm::MDNode *group, llvm::Value *begin,
                                llvm::Value *end) {
  OPDC_ASSERT(!loop.block, "indirect increments in a block loop");
  // One buffer [IncStripSize][dim] per indirect increment, allocated in the
  // entry block (where bb still is).
  std::vector<unsigned> incs;
  std::vector<llvm::Value *> buffer(loop.args.size(), nullptr);
  for (unsigned n = 0; n < loop.args.size(); ++n) {
    const AccessDescriptor &a = loop.args[n];
    if (!access.args[n].indirectInc)
      continue;
    incs.push_back(n);
    auto *bufTy =
        llvm::ArrayType::get(cgm.memType(a.scalar), IncStripSize * a.dim);
    llvm::AllocaInst *buf = bb.CreateAlloca(bufTy, nullptr, "inc.buf");
    buf->setAlignment(llvm::Align(64));
    buffer[n] = buf;
  }
  allocStagedRows(bb);
  // Element j's row of argument n's buffer.
  auto row = [&](unsigned n, llvm::Value *j) {
    const AccessDescriptor &a = loop.args[n];
    return bb.CreateInBoundsGEP(cgm.memType(a.scalar), buffer[n],
                                bb.CreateMul(j, i64(a.dim)), "inc.row");
  };

  // (1) The kernels of a strip, independent of one another: each starts
  // from rows holding the identity of addition and increments them.
  auto compute = [&](llvm::Value *s, llvm::Value *j) {
    for (unsigned n : incs) {
      const AccessDescriptor &a = loop.args[n];
      llvm::Type *t = cgm.memType(a.scalar);
      llvm::Constant *zero = identityConstant(incrementIdentity(a.scalar), t);
      incBuffer[n] = row(n, j);
      for (unsigned k = 0; k < a.dim; ++k) {
        llvm::StoreInst *st = bb.CreateStore(
            zero, bb.CreateConstInBoundsGEP1_32(t, incBuffer[n], k));
        st->setMetadata(llvm::LLVMContext::MD_tbaa, cgm.tbaaDat);
        st->setMetadata(llvm::LLVMContext::MD_access_group, group);
      }
    }
    for (unsigned n = 0; n < staged.size(); ++n)
      if (staged[n])
        stagedRow[n] = bb.CreateInBoundsGEP(cgm.memType(loop.args[n].scalar),
                                            stagedBuf[n], j, "rows.elem");
    emitKernelCall(bb, kernel, {bb.CreateAdd(s, j, "", true, true)}, group);
    for (unsigned n : incs)
      incBuffer[n] = nullptr;
    stagedRow.assign(loop.args.size(), nullptr);
  };

  // (2) The increments, element by element in order, arguments in argument
  // order, components in order.
  auto apply = [&](llvm::Value *s, llvm::Value *j) {
    llvm::Value *i = bb.CreateAdd(s, j, "", true, true);
    for (unsigned n : incs) {
      const AccessDescriptor &a = loop.args[n];
      llvm::Type *t = cgm.memType(a.scalar);
      llvm::Value *slot =
          bb.CreateAdd(bb.CreateMul(i, i64(a.map->arity)), i64(a.mapIndex));
      llvm::LoadInst *target = bb.CreateLoad(
          cgm.i32Ty, bb.CreateInBoundsGEP(cgm.i32Ty, mapData[n], slot));
      target->setMetadata(llvm::LLVMContext::MD_tbaa, cgm.tbaaMap);
      llvm::Value *elem = bb.CreateInBoundsGEP(
          t, base[n],
          bb.CreateMul(bb.CreateSExt(target, cgm.i64Ty), i64(a.dim)));
      llvm::Value *inc = row(n, j);
      for (unsigned k = 0; k < a.dim; ++k) {
        llvm::Value *p = bb.CreateConstInBoundsGEP1_32(t, elem, k);
        llvm::LoadInst *old = bb.CreateLoad(t, p);
        old->setMetadata(llvm::LLVMContext::MD_tbaa, cgm.tbaaDat);
        llvm::Value *d =
            bb.CreateLoad(t, bb.CreateConstInBoundsGEP1_32(t, inc, k));
        llvm::Value *sum =
            isFloat(a.scalar) ? bb.CreateFAdd(old, d) : bb.CreateAdd(old, d);
        bb.CreateStore(sum, p)->setMetadata(llvm::LLVMContext::MD_tbaa,
                                            cgm.tbaaDat);
      }
    }
  };

  auto strip = [&](llvm::Value *s) {
    llvm::Value *len = stripLength(bb, s, end);
    emitStagedRows(bb, s, len);
    if (!sumLanes) {
      emitCountedLoop(bb, i64(0), len, makeLoopID(cgm.context, group),
                      "strip.compute", [&](llvm::Value *j) { compute(s, j); });
    } else {
      // The strips continue one row's partial sums (IncStripSize is a
      // multiple of sumLanes): the same sums as the unstripped loop. Only
      // the last strip can end in a part group; it adds up the partials
      // and its last elements in order, and starts the partials again
      // from the result (which adding them up after the strips keeps).
      llvm::Value *mid = laneGroupsEnd(bb, i64(0), len, "strip.compute");
      emitLaneGroups(bb, i64(0), mid, group, "strip.compute",
                     [&](llvm::Value *j) { compute(s, j); });
      llvm::Function *f = bb.GetInsertBlock()->getParent();
      auto *restBB = llvm::BasicBlock::Create(cgm.context, "strip.rest", f);
      auto *doneBB = llvm::BasicBlock::Create(cgm.context, "strip.rest.end", f);
      bb.CreateCondBr(bb.CreateICmpSLT(mid, len), restBB, doneBB);
      bb.SetInsertPoint(restBB);
      finishLanes(bb);
      emitCountedLoop(bb, mid, len, makeLoopID(cgm.context, group),
                      "strip.compute.rest",
                      [&](llvm::Value *j) { compute(s, j); });
      startLanes(bb);
      bb.CreateBr(doneBB);
      doneBB->moveAfter(bb.GetInsertBlock());
      bb.SetInsertPoint(doneBB);
    }
    emitCountedLoop(bb, i64(0), len, makeLoopID(cgm.context, nullptr),
                    "strip.apply", [&](llvm::Value *j) { apply(s, j); });
  };
  static_assert(IncStripSize % SumLanes == 0,
                "strips must hold whole groups of partial sums");
  if (sumLanes)
    startLanes(bb);
  emitCountedLoop(bb, begin, end, makeLoopID(cgm.context, nullptr), "strip",
                  strip, IncStripSize);
  if (sumLanes)
    finishLanes(bb);
}

} // namespace opdc
