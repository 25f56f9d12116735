// StagedRows.cpp - Strips read their rows through maps whole, transposed.
// SPDX-License-Identifier: Apache-2.0
//
// A loop with increments through maps runs in strips (LoopBody.cpp,
// "Indirect increments"), whose compute loop the vectoriser widens. A read
// through a map there becomes, per vector of W elements and per component,
// W map indices extracted from a vector register, W scalar loads and W
// inserts: Airfoil's res_calc reads 14 values an edge so, which made its
// vector body instruction-bound (docs/decisions/0465); parallel loops
// (adt_calc) read so too. Instead, for every
// argument read through a map whose rows the kernel reads component by
// component, each strip first runs
//
//   for g in [0, ceil(len / L)):                     (a scalar loop)
//     j0 = min(gL, len - L)
//     rows r_l = dat[map[(s + j0 + l) * arity + idx]]
//                for l in [0, L), each one vector load of dim components
//     transpose the L rows into dim vectors of L lanes (shufflevector)
//     buf[k * IncStripSize + j0 ..][0, L) = component vector k
//
// and the kernel reads component k of strip element j at
// buf[k * IncStripSize + j] (KernelInterface::componentStride): the compute
// loop's reads are consecutive, and the vectoriser loads them whole. L is
// the elements of the scalar type one vector register holds (at least dim
// and 2, at most IncStripSize); dim is a power of two up to L. The
// transpose: L / dim rows concatenated per vector give dim vectors holding
// the rows in order (component k of row r at flat position r * dim + k);
// log2(dim) times, each consecutive pair of vectors is split into its even
// and its odd positions (two two-source shuffles, one vpermt2pd each on
// AVX-512), the evens of all pairs first, which separates the components
// by one more bit of k and keeps the rows in order; emitTranspose checks the
// result by simulating the lanes. The last group is shifted back to end at
// the strip's end (its first lanes staged again, the same values), so
// each lane's map index is a constant offset from the group's; a strip
// shorter than L (a short run of the super-block plan) stages element by
// element (a row load, dim scalar stores). The same values are read, so
// results are the same bits. -fno-transpose-rows turns it off.
//
// Eligible: the target's vector registers hold 512 bits or more
// (MinStageBits); the loop runs in strips (RaceClass::IncStrips without
// -frepro-sum), or is a parallel set loop without reductions, which then
// runs in strips of IncStripSize too, each staged, then its elements in a
// loop declared parallel (emitStagedStrips); the argument reads (`in`)
// through a map, dim is a power of two up to IncStripSize, no argument of
// the loop writes its dat, and the kernel uses the argument only as `a[i]`
// (or, with one component, as a scalar), never as a whole array (a call's
// argument, a copy), which would need the components together.
#include "codegen/llvm/LoopEmitter.h"

#include "codegen/llvm/LLVMCodeGen.h"

#include "ir/IRVisitor.h"
#include "support/Assert.h"

#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <map>

namespace opdc {

using namespace ir;

namespace {

/// The kernel arguments used as whole arrays (not only indexed).
struct WholeArrayUses : IRVisitor {
  explicit WholeArrayUses(size_t n) : whole(n, false) {}
  std::vector<bool> whole;
  void visitIndex(const IndexExpr &e) override {
    if (llvm::isa<KernelArgExpr>(e.base.get())) {
      visitExpr(*e.index);
      return;
    }
    IRVisitor::visitIndex(e);
  }
  void visitKernelArg(const KernelArgExpr &e) override {
    if (e.type.isArray())
      whole[e.index] = true;
  }
};

bool powerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/// The narrowest vector registers rows are staged for: with AVX-512 (8
/// doubles a register) staging made Airfoil's res_calc faster on Zen 4 and
/// its vector body shorter; with AVX2 (4 doubles) it executed
/// more, the transposes' two-source shuffles costing two instructions
/// each and half as many lane index extractions saved
/// (docs/decisions/0465, bench/airfoil/README.md).
constexpr uint64_t MinStageBits = 512;

llvm::SmallVector<int, 16> iota(unsigned n, unsigned from = 0,
                                unsigned step = 1) {
  llvm::SmallVector<int, 16> m;
  for (unsigned i = 0; i < n; ++i)
    m.push_back(int(from + i * step));
  return m;
}

} // namespace

void LoopEmitter::chooseStagedRows() {
  const size_t n = loop.args.size();
  staged.assign(n, false);
  if (!cgm.options.transposeRows || loop.block || gatherMode())
    return;
  // Parallel loops strip too when they stage (emitStagedStrips), but not
  // with reductions (their float sums keep the element loop's partials).
  bool reduces = false;
  for (const AccessDescriptor &a : loop.args)
    reduces = reduces || a.kind == ArgKind::Reduction;
  if (access.race != RaceClass::IncStrips &&
      (access.race != RaceClass::Parallel || reduces))
    return;
  // Only with vector registers of MinStageBits or more: the width the
  // vectoriser uses for a function of this module (a probe with the
  // attributes every function gets).
  llvm::Function *probe = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(cgm.context), false),
      llvm::GlobalValue::InternalLinkage, "opd.width.probe", cgm.module);
  cgm.addFunctionAttributes(*probe);
  const uint64_t bits =
      cgm.targetMachine.getTargetTransformInfo(*probe)
          .getRegisterBitWidth(llvm::TargetTransformInfo::RGK_FixedWidthVector)
          .getFixedValue();
  probe->eraseFromParent();
  if (bits < MinStageBits)
    return;
  WholeArrayUses uses(n);
  uses.visitFunction(*loop.kernel);
  for (unsigned i = 0; i < n; ++i) {
    const AccessDescriptor &a = loop.args[i];
    if (a.kind != ArgKind::Indirect || a.mode != AccessMode::Read || !a.dat ||
        !a.map || !powerOfTwo(a.dim) || a.dim > IncStripSize || uses.whole[i])
      continue;
    bool written = false;
    for (const AccessDescriptor &o : loop.args)
      written = written || (o.dat == a.dat && modeWrites(o.mode));
    staged[i] = !written;
  }
}

std::vector<int64_t> LoopEmitter::stagedStrides() const {
  std::vector<int64_t> s(loop.args.size(), 0);
  for (unsigned i = 0; i < staged.size(); ++i)
    if (staged[i] && loop.args[i].dim > 1)
      s[i] = IncStripSize;
  return s;
}

void LoopEmitter::allocStagedRows(llvm::IRBuilder<> &bb) {
  stagedBuf.assign(loop.args.size(), nullptr);
  stageLanes.assign(loop.args.size(), 0);
  llvm::Function *f = bb.GetInsertBlock()->getParent();
  const llvm::DataLayout &layout = cgm.module.getDataLayout();
  // The width the vectoriser uses for this function.
  const int64_t bits = int64_t(
      cgm.targetMachine.getTargetTransformInfo(*f)
          .getRegisterBitWidth(llvm::TargetTransformInfo::RGK_FixedWidthVector)
          .getFixedValue());
  for (unsigned i = 0; i < staged.size(); ++i) {
    if (!staged[i])
      continue;
    const AccessDescriptor &a = loop.args[i];
    llvm::Type *t = cgm.memType(a.scalar);
    int64_t lanes = std::max<int64_t>(
        {bits / 8 / int64_t(layout.getTypeStoreSize(t)), int64_t(a.dim), 2});
    lanes = std::min<int64_t>(int64_t(llvm::PowerOf2Ceil(uint64_t(lanes))),
                              IncStripSize);
    stageLanes[i] = unsigned(lanes);
    llvm::AllocaInst *buf = bb.CreateAlloca(
        llvm::ArrayType::get(t, IncStripSize * a.dim), nullptr, "rows.buf");
    buf->setAlignment(llvm::Align(64));
    stagedBuf[i] = buf;
  }
}

std::vector<llvm::Value *>
LoopEmitter::emitTranspose(llvm::IRBuilder<> &bb,
                           const std::vector<llvm::Value *> &rows,
                           unsigned dim) {
  const unsigned lanes = unsigned(rows.size());
  OPDC_ASSERT(dim <= lanes && lanes % dim == 0, "rows wider than the lanes");
  // Lane labels, row * dim + component, to check the shuffles.
  std::vector<std::vector<unsigned>> label;
  std::vector<llvm::Value *> v;
  const unsigned perVector = lanes / dim;
  for (unsigned i = 0; i < dim; ++i) {
    std::vector<llvm::Value *> parts(rows.begin() + i * perVector,
                                     rows.begin() + (i + 1) * perVector);
    for (unsigned width = dim; parts.size() > 1; width *= 2) {
      std::vector<llvm::Value *> next;
      for (unsigned p = 0; p < parts.size(); p += 2)
        next.push_back(
            bb.CreateShuffleVector(parts[p], parts[p + 1], iota(2 * width)));
      parts = std::move(next);
    }
    v.push_back(parts[0]);
    std::vector<unsigned> l;
    for (unsigned p = 0; p < lanes; ++p)
      l.push_back(i * lanes + p);
    label.push_back(std::move(l));
  }
  for (unsigned m = dim; m > 1; m /= 2) {
    std::vector<llvm::Value *> even, odd;
    std::vector<std::vector<unsigned>> evenLabel, oddLabel;
    for (unsigned i = 0; i < dim; i += 2) {
      even.push_back(bb.CreateShuffleVector(v[i], v[i + 1], iota(lanes, 0, 2)));
      odd.push_back(bb.CreateShuffleVector(v[i], v[i + 1], iota(lanes, 1, 2)));
      std::vector<unsigned> both = label[i], e, o;
      both.insert(both.end(), label[i + 1].begin(), label[i + 1].end());
      for (unsigned p = 0; p < 2 * lanes; ++p)
        (p % 2 ? o : e).push_back(both[p]);
      evenLabel.push_back(std::move(e));
      oddLabel.push_back(std::move(o));
    }
    v = even;
    v.insert(v.end(), odd.begin(), odd.end());
    label = evenLabel;
    label.insert(label.end(), oddLabel.begin(), oddLabel.end());
  }
  // Vector i holds one component for all rows in order; which one.
  std::vector<llvm::Value *> byComponent(dim, nullptr);
  for (unsigned i = 0; i < dim; ++i) {
    const unsigned k = label[i][0] % dim;
    for (unsigned p = 0; p < lanes; ++p)
      OPDC_ASSERT(label[i][p] == p * dim + k, "rows transposed wrongly");
    byComponent[k] = v[i];
  }
  return byComponent;
}

void LoopEmitter::emitStagedGroup(llvm::IRBuilder<> &bb, llvm::Value *s,
                                  llvm::Value *j0,
                                  const std::vector<llvm::Value *> &js,
                                  const std::vector<unsigned> &args) {
  const llvm::DataLayout &layout = cgm.module.getDataLayout();
  // Arguments through one map and index share its loads; each slot's
  // indices are loaded right before the rows they reach.
  std::map<std::pair<const Map *, unsigned>, std::vector<unsigned>> bySlot;
  std::vector<std::pair<const Map *, unsigned>> slotOrder;
  for (unsigned n : args) {
    auto key =
        std::make_pair(loop.args[n].map, unsigned(loop.args[n].mapIndex));
    if (bySlot[key].empty())
      slotOrder.push_back(key);
    bySlot[key].push_back(n);
  }
  for (const auto &key : slotOrder) {
    const std::vector<unsigned> &users = bySlot[key];
    const AccessDescriptor &first = loop.args[users.front()];
    // The group's first map row, the lanes' slots constant offsets from
    // it (one register for all lanes).
    llvm::Value *mapRow =
        bb.CreateInBoundsGEP(cgm.i32Ty, mapData[users.front()],
                             bb.CreateMul(bb.CreateAdd(s, j0, "", true, true),
                                          i64(first.map->arity)));
    std::vector<llvm::Value *> targets;
    for (llvm::Value *j : js) {
      llvm::Value *slot = bb.CreateAdd(bb.CreateMul(j, i64(first.map->arity)),
                                       i64(first.mapIndex));
      llvm::LoadInst *target = bb.CreateLoad(
          cgm.i32Ty, bb.CreateInBoundsGEP(cgm.i32Ty, mapRow, slot));
      target->setMetadata(llvm::LLVMContext::MD_tbaa, cgm.tbaaMap);
      targets.push_back(bb.CreateSExt(target, cgm.i64Ty));
    }
    for (unsigned n : users) {
      const AccessDescriptor &a = loop.args[n];
      llvm::Type *t = cgm.memType(a.scalar);
      auto *rowTy = llvm::FixedVectorType::get(t, unsigned(a.dim));
      const llvm::Align scalarAlign = layout.getABITypeAlign(t);
      std::vector<llvm::Value *> rows;
      for (llvm::Value *target : targets) {
        llvm::Value *elem =
            bb.CreateInBoundsGEP(t, base[n], bb.CreateMul(target, i64(a.dim)));
        llvm::LoadInst *row =
            bb.CreateAlignedLoad(rowTy, elem, scalarAlign, "row");
        row->setMetadata(llvm::LLVMContext::MD_tbaa, cgm.tbaaDat);
        rows.push_back(row);
      }
      std::vector<llvm::Value *> comps =
          emitTranspose(bb, rows, unsigned(a.dim));
      for (unsigned k = 0; k < a.dim; ++k) {
        llvm::Value *at = bb.CreateInBoundsGEP(
            t, stagedBuf[n], bb.CreateAdd(j0, i64(k * IncStripSize)));
        bb.CreateAlignedStore(comps[k], at, scalarAlign);
      }
    }
  }
}

void LoopEmitter::emitStagedElement(llvm::IRBuilder<> &bb, llvm::Value *s,
                                    llvm::Value *j, unsigned n) {
  const AccessDescriptor &a = loop.args[n];
  llvm::Type *t = cgm.memType(a.scalar);
  const llvm::Align scalarAlign = cgm.module.getDataLayout().getABITypeAlign(t);
  llvm::Value *slot = bb.CreateAdd(
      bb.CreateMul(bb.CreateAdd(s, j, "", true, true), i64(a.map->arity)),
      i64(a.mapIndex));
  llvm::LoadInst *target = bb.CreateLoad(
      cgm.i32Ty, bb.CreateInBoundsGEP(cgm.i32Ty, mapData[n], slot));
  target->setMetadata(llvm::LLVMContext::MD_tbaa, cgm.tbaaMap);
  llvm::Value *elem = bb.CreateInBoundsGEP(
      t, base[n], bb.CreateMul(bb.CreateSExt(target, cgm.i64Ty), i64(a.dim)));
  llvm::LoadInst *row = bb.CreateAlignedLoad(
      llvm::FixedVectorType::get(t, unsigned(a.dim)), elem, scalarAlign, "row");
  row->setMetadata(llvm::LLVMContext::MD_tbaa, cgm.tbaaDat);
  for (unsigned k = 0; k < a.dim; ++k)
    bb.CreateAlignedStore(
        bb.CreateExtractElement(row, uint64_t(k)),
        bb.CreateInBoundsGEP(t, stagedBuf[n],
                             bb.CreateAdd(j, i64(k * IncStripSize))),
        scalarAlign);
}

void LoopEmitter::emitStagedRows(llvm::IRBuilder<> &bb, llvm::Value *s,
                                 llvm::Value *len) {
  // One group loop per lane count (one in practice), every staged argument
  // of that count in it.
  std::map<unsigned, std::vector<unsigned>> byLanes;
  for (unsigned i = 0; i < staged.size(); ++i)
    if (staged[i])
      byLanes[stageLanes[i]].push_back(i);
  llvm::Function *f = bb.GetInsertBlock()->getParent();
  for (const auto &[lanes, args] : byLanes) {
    // A strip of at least L elements runs groups of L consecutive ones,
    // the last shifted back to end at the strip's end (its lanes before
    // that are staged twice, with the same values); a shorter strip (the
    // runs between another super-block's elements are often short) stages
    // its elements one by one.
    auto *wholeBB = llvm::BasicBlock::Create(cgm.context, "rows.whole", f);
    auto *shortBB = llvm::BasicBlock::Create(cgm.context, "rows.short", f);
    auto *doneBB = llvm::BasicBlock::Create(cgm.context, "rows.done", f);
    bb.CreateCondBr(bb.CreateICmpSGE(len, i64(lanes)), wholeBB, shortBB);
    bb.SetInsertPoint(wholeBB);
    llvm::Value *groups =
        bb.CreateLShr(bb.CreateAdd(len, i64(lanes - 1)),
                      i64(llvm::Log2_64(lanes)), "rows.groups");
    llvm::Value *lastStart = bb.CreateSub(len, i64(lanes));
    emitCountedLoop(bb, i64(0), groups, makeScalarLoopID(cgm.context), "rows",
                    [&](llvm::Value *g) {
                      llvm::Value *j0 =
                          bb.CreateMul(g, i64(lanes), "", true, true);
                      j0 = bb.CreateSelect(bb.CreateICmpSLT(j0, lastStart), j0,
                                           lastStart, "rows.first");
                      std::vector<llvm::Value *> js;
                      for (unsigned l = 0; l < lanes; ++l)
                        js.push_back(i64(l));
                      emitStagedGroup(bb, s, j0, js, args);
                    });
    bb.CreateBr(doneBB);
    bb.SetInsertPoint(shortBB);
    emitCountedLoop(bb, i64(0), len, makeScalarLoopID(cgm.context), "rows.one",
                    [&](llvm::Value *j) {
                      for (unsigned n : args)
                        emitStagedElement(bb, s, j, n);
                    });
    bb.CreateBr(doneBB);
    bb.SetInsertPoint(doneBB);
  }
}

bool LoopEmitter::anyStaged() const {
  for (bool s : staged)
    if (s)
      return true;
  return false;
}

llvm::Value *LoopEmitter::stripLength(llvm::IRBuilder<> &bb, llvm::Value *s,
                                      llvm::Value *end) const {
  llvm::Value *left = bb.CreateSub(end, s);
  return bb.CreateSelect(bb.CreateICmpSLT(left, i64(IncStripSize)), left,
                         i64(IncStripSize), "strip.len");
}

void LoopEmitter::emitStagedStrips(llvm::IRBuilder<> &bb,
                                   const KernelInterface &kernel,
                                   llvm::MDNode *group, llvm::Value *begin,
                                   llvm::Value *end) {
  auto strip = [&](llvm::Value *s) {
    llvm::Value *len = stripLength(bb, s, end);
    emitStagedRows(bb, s, len);
    emitCountedLoop(
        bb, i64(0), len, makeLoopID(cgm.context, group), "strip.compute",
        [&](llvm::Value *j) {
          for (unsigned n = 0; n < staged.size(); ++n)
            if (staged[n])
              stagedRow[n] =
                  bb.CreateInBoundsGEP(cgm.memType(loop.args[n].scalar),
                                       stagedBuf[n], j, "rows.elem");
          emitKernelCall(bb, kernel, {bb.CreateAdd(s, j, "", true, true)},
                         group);
          stagedRow.assign(loop.args.size(), nullptr);
        });
  };
  emitCountedLoop(bb, begin, end, makeLoopID(cgm.context, nullptr), "strip",
                  strip, IncStripSize);
}

} // namespace opdc
