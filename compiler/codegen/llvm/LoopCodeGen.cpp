// LoopCodeGen.cpp - Parallel loops: context, body function, host call.
// SPDX-License-Identifier: Apache-2.0
//
// A loop `loop K over S (args)` becomes, in the host:
//
//   @opd_args.N   static opd_arg table (kind, mode, map index, bytes are
//                 constants; dat and map handles are stored before each call)
//   @opd_loop.N   the runtime's cache slot for the loop handle
//   loop = opd_loop_prepare(&@opd_loop.N, "K", S, n, @opd_args.N)
//   ctx  = { data pointers, strides, map rows, global values, partials,
//            block ranges }                       (a stack struct)
//   partials: opd_rt_scratch(chunks * dim * bytes per reduction), every
//             slot set to the identity of its operation
//   opd_loop_run(loop, @opd_body_K.N, &ctx)
//   opd_reduce_local(&v, ...)                  (MPI: a sum counts v once)
//   v = v (+|min|max) partial[c] for c = 0, 1, ... in order
//   opd_reduce_global(&v, ...)                 (MPI_Allreduce; else nothing)
//
// Block loops pass their range in lo/hi arrays that opd_loop_prepare_block
// clips in place to the points the rank owns; the context takes the clipped
// range. The opd_arg table also gives each stencil's extent per dimension
// and whether it reads off-axis points (the runtime's halo exchanges).
//
// and a body function `void body(ctx, begin, end, chunk)` that loads the
// pointers once and runs the element loop with the kernel (KernelCodeGen.cpp)
// inlined. The runtime fixes the chunks independently of the thread count
// and every chunk writes its own partial, so combining the partials in chunk
// order gives bitwise the same result for any number of threads.
//
// Addresses: direct  base + i*dim;  indirect  base + map[i*arity+k]*dim;
// block dats  origin + (i + j*s1 + k*s2)*dim, the origin and strides from
// opd_dat_origin, dimension 0 innermost and unit stride. Data pointers are
// fetched at every execution because swap() exchanges dat storage.
//
// Vectorisation: when no element can touch another element's data (no
// increments through maps, no written dat also read through a map or at a
// stencil offset), the innermost element loop is declared parallel with
// llvm.loop.parallel_accesses over an access group carried by every dat and
// map access, so the vectoriser needs no run-time alias checks. Reduction
// accumulators are private to the body and outside the group; float sums
// stay in order (no reassociation) and therefore scalar. chooseShape() is
// the one place that decides, with the reasons.
//
// Indirect increments: two elements of one block may increment the same
// target, so their element loop cannot be declared parallel. When a loop's
// only writes that reach other elements are increments through maps, and no
// other argument touches the incremented dats, the body runs its elements
// in strips of IncStripSize elements (Shape::IncStrips):
//
//   for s in [begin, end) step S, len = min(S, end - s):
//     for j in [0, len), declared parallel:               (compute)
//       buf_a[j][0..dim) = -0.0   (0 for integers)   per indirect inc arg a
//       kernel(..., &buf_a[j][0] in place of a's element, ...)
//     for j in [0, len), elements in order:               (apply)
//       per indirect inc argument a, in argument order, k = 0 .. dim-1:
//         dat_a[map_a[(s+j)*arity + idx_a]*dim + k] += buf_a[j][k]
//
// The compute loop vectorises (reads through maps become gathers); the
// apply loop is short and scalar (or SLP-vectorised per element).
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
#include "codegen/llvm/LoopCodeGen.h"

#include "codegen/llvm/FunctionEmitter.h"
#include "codegen/llvm/KernelCodeGen.h"
#include "codegen/llvm/LLVMCodeGen.h"

#include "ir/IRVisitor.h"

#include "support/Assert.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/IR/Constants.h"

#include <functional>
#include <map>
#include <set>

namespace opdc {

using namespace ir;

namespace {

/// Points per plane of one cache-blocking tile of a 3D loop: a 7-point
/// sweep keeps three planes of the read dat and one of the written dat per
/// tile, 4 x 16384 x 8 bytes = 512 KiB, well inside a 1-2 MiB L2.
constexpr int64_t StencilTilePoints = 16384;

/// for (v = lo; v < hi; ++v) body(v) at \p b's insertion point, which is
/// left after the loop. \p loopID goes on the latch branch.
void emitCountedLoop(llvm::IRBuilder<> &b, llvm::Value *lo, llvm::Value *hi,
                     llvm::MDNode *loopID, const llvm::Twine &name,
                     llvm::function_ref<void(llvm::Value *)> body,
                     int64_t step = 1) {
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

/// A distinct loop ID: `!{self, !{"llvm.loop.mustprogress"}}`, plus
/// `!{"llvm.loop.parallel_accesses", group}` when \p group is given.
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

/// Elements per strip of a loop with indirect increments. Airfoil's
/// res_calc on OP2's 720K-cell grid, AVX2 (VF 4), ms per call, best of 3:
///   1 thread:  unstripped 14.9; S = 8: 15.5, 16: 11.5, 32: 11.7, 64: 12.1,
///              128: 13.3
///   2 threads: unstripped 7.3; S = 16: 5.5, 32: 5.8
/// Forcing an interleave count of 2 on the compute loop, copying the
/// gathered elements into strip buffers first (vector loads instead of
/// gathers in the compute loop), or a constant trip count for full strips
/// gained nothing measurable.
constexpr int64_t IncStripSize = 16;

int runtimeKind(ArgKind k) {
  switch (k) {
  case ArgKind::Direct:
    return OPD_ARG_DIRECT;
  case ArgKind::Indirect:
    return OPD_ARG_INDIRECT;
  case ArgKind::Stencil:
    return OPD_ARG_STENCIL;
  case ArgKind::MapDirect:
    return OPD_ARG_MAP;
  case ArgKind::GlobalRead:
    return OPD_ARG_GLOBAL;
  case ArgKind::Reduction:
    return OPD_ARG_REDUCTION;
  }
  return OPD_ARG_DIRECT;
}

int runtimeMode(AccessMode m) {
  switch (m) {
  case AccessMode::Read:
    return OPD_READ;
  case AccessMode::Write:
    return OPD_WRITE;
  case AccessMode::ReadWrite:
    return OPD_RW;
  case AccessMode::Inc:
    return OPD_INC;
  case AccessMode::Min:
    return OPD_MIN;
  case AccessMode::Max:
    return OPD_MAX;
  case AccessMode::Sum:
    return OPD_SUM;
  }
  return OPD_READ;
}

class LoopEmitter {
public:
  LoopEmitter(FunctionEmitter &host, const ParLoopStmt &loop)
      : host(host), cgm(host.cgm), b(host.b), loop(loop), id(cgm.newLoopId()),
        dims(loop.block ? loop.block->dims : 1) {}

  void emit();

private:
  /// How the body runs the elements of a chunk.
  enum class Shape {
    /// One element loop, elements in order, nothing declared.
    Sequential,
    /// One element loop declared parallel (llvm.loop.parallel_accesses).
    Parallel,
    /// Strips: a parallel compute loop into private increment buffers, then
    /// the increments applied in element order.
    IncStrips,
  };
  Shape chooseShape() const;
  void layoutContext();
  void tagWithLoop(llvm::Function &f);
  llvm::Function *emitBody(const KernelInterface &kernel, llvm::MDNode *group);
  /// The elements [begin, end) as strips (Shape::IncStrips).
  void emitIncStrips(llvm::IRBuilder<> &bb, const KernelInterface &kernel,
                     llvm::MDNode *group, llvm::Value *begin, llvm::Value *end);
  /// Pointers and values the kernel receives at coordinates \p coords.
  void emitKernelCall(llvm::IRBuilder<> &bb, const KernelInterface &kernel,
                      const std::vector<llvm::Value *> &coords,
                      llvm::MDNode *group);
  bool emitRanges();
  void emitHaloChecks();
  llvm::Value *emitPrepare();
  void emitContext(llvm::Value *loopHandle);
  void combinePartials();
  llvm::Constant *identity(const AccessDescriptor &a) const;
  llvm::Value *hostElement(const AccessDescriptor &a, unsigned k);

  FunctionEmitter &host;
  CodeGenModule &cgm;
  llvm::IRBuilder<> &b;
  const ParLoopStmt &loop;
  unsigned id, dims;
  Shape shape = Shape::Sequential;

  // Context layout: field numbers per argument (-1: none).
  struct Fields {
    int base = -1, strides = -1, map = -1, value = -1, partials = -1;
    /// `map` holds opd_map_values (a map the kernel reads), not
    /// opd_map_data.
    bool mapValues = false;
  };
  std::vector<Fields> fields;
  int loField = -1, hiField = -1;
  /// Set loops whose kernel calls idx(): opd_set_global_ids (null on one
  /// process), and in the body the same pointer, whether it is null, and a
  /// dummy the load reads instead when it is.
  int gidField = -1;
  llvm::Value *gids = nullptr, *gidsNull = nullptr, *gidDummy = nullptr;
  llvm::StructType *ctxTy = nullptr;

  // Body-side values per argument.
  std::vector<llvm::Value *> base, mapData, argPtr;
  /// Per argument: where the kernel increments instead of the dat element
  /// (the element's row of the strip buffer), or null.
  std::vector<llvm::Value *> incBuffer;
  std::vector<std::vector<llvm::Value *>> strides;
  std::vector<llvm::Value *> rangeLo, rangeHi;

  // Host-side values.
  llvm::Value *loArr = nullptr, *hiArr = nullptr, *ctx = nullptr;
  llvm::Value *chunks = nullptr;
  std::vector<llvm::Value *> partialPtr;
};

/// Whether a kernel calls idx(): set loops then pass it the element's
/// global index, which differs from the local one on several ranks.
bool kernelUsesIdx(const Function &kernel) {
  struct Finder : IRVisitor {
    bool found = false;
    void visitIntrinsic(const IntrinsicExpr &e) override {
      found = found || e.id == Intrinsic::Idx;
      IRVisitor::visitIntrinsic(e);
    }
  } finder;
  finder.visitFunction(kernel);
  return finder.found;
}

bool isIndirectInc(const AccessDescriptor &a) {
  return a.kind == ArgKind::Indirect && a.mode == AccessMode::Inc;
}

// The one place that decides how a loop's elements may run (see the file
// header). Indirect increments alone do not make the element loop
// sequential: the strips take them out of the element loop. Everything else
// that lets one element see another element's writes does.
LoopEmitter::Shape LoopEmitter::chooseShape() const {
  bool incStrips = false;
  for (unsigned i = 0; i < loop.args.size(); ++i) {
    const AccessDescriptor &a = loop.args[i];
    if (!modeWrites(a.mode) || a.kind == ArgKind::Reduction)
      continue;
    if (a.kind == ArgKind::Indirect) {
      // Sema admits only increments through maps; anything else written
      // through a map keeps the sequential element loop.
      if (a.mode != AccessMode::Inc)
        return Shape::Sequential;
      // The strips move the increments after the kernels of the whole
      // strip. That keeps each target's sequence of additions only when no
      // other argument reaches the dat: a read through a map or directly
      // would see the increments later than in element order, a direct
      // write would be reordered against them.
      for (unsigned j = 0; j < loop.args.size(); ++j) {
        const AccessDescriptor &o = loop.args[j];
        if (j != i && o.usesDat() && o.dat == a.dat && !isIndirectInc(o))
          return Shape::Sequential;
      }
      incStrips = true;
      continue;
    }
    for (unsigned j = 0; j < loop.args.size(); ++j) {
      const AccessDescriptor &o = loop.args[j];
      if (j == i)
        continue;
      // A map the loop fills while it also indirects through it.
      if (a.kind == ArgKind::MapDirect && o.kind == ArgKind::Indirect &&
          o.map == a.map)
        return Shape::Sequential;
      if (!a.usesDat() || !o.usesDat() || o.dat != a.dat)
        continue;
      // A dat written at element i and read at another element.
      if (o.kind == ArgKind::Indirect)
        return Shape::Sequential;
      if (o.kind == ArgKind::Stencil && o.stencil && !o.stencil->isCentreOnly())
        return Shape::Sequential;
    }
  }
  return incStrips ? Shape::IncStrips : Shape::Parallel;
}

void LoopEmitter::layoutContext() {
  std::vector<llvm::Type *> types;
  auto add = [&](llvm::Type *t) {
    types.push_back(t);
    return int(types.size() - 1);
  };
  // One field per distinct dat and map: arguments on the same dat (x1..x4
  // of adt_calc) then share one base pointer, so the optimiser sees common
  // bases: map rows load once per element and strided map reads become
  // interleaved vector loads.
  std::map<const void *, std::pair<int, int>> shared;
  std::map<const void *, int> mapValueFields;
  fields.resize(loop.args.size());
  for (unsigned i = 0; i < loop.args.size(); ++i) {
    const AccessDescriptor &a = loop.args[i];
    Fields &f = fields[i];
    if (a.usesDat()) {
      auto it = shared.find(a.dat);
      if (it == shared.end()) {
        int base = add(cgm.ptrTy), strides = -1;
        if (loop.block && dims > 1)
          strides = add(llvm::ArrayType::get(cgm.i64Ty, dims - 1));
        it = shared.insert({a.dat, {base, strides}}).first;
      }
      f.base = it->second.first;
      f.strides = it->second.second;
    }
    if (a.kind == ArgKind::MapDirect && a.mode == AccessMode::Read) {
      // The kernel reads the entries as values: global indices on every
      // rank (opd_map_values), a field of their own.
      auto it = mapValueFields.find(a.map);
      if (it == mapValueFields.end())
        it = mapValueFields.insert({a.map, add(cgm.ptrTy)}).first;
      f.map = it->second;
      f.mapValues = true;
    } else if (a.kind == ArgKind::Indirect || a.kind == ArgKind::MapDirect) {
      auto it = shared.find(a.map);
      if (it == shared.end())
        it = shared.insert({a.map, {add(cgm.ptrTy), -1}}).first;
      f.map = it->second.first;
    }
    if (a.kind == ArgKind::GlobalRead)
      f.value = add(cgm.storageType(loop.kernel->kernelParams[i].type));
    if (a.kind == ArgKind::Reduction)
      f.partials = add(cgm.ptrTy);
  }
  if (loop.block) {
    loField = add(llvm::ArrayType::get(cgm.i64Ty, dims));
    hiField = add(llvm::ArrayType::get(cgm.i64Ty, dims));
  } else if (kernelUsesIdx(*loop.kernel)) {
    gidField = add(cgm.ptrTy);
  }
  ctxTy = llvm::StructType::create(cgm.context, types,
                                   "opd_ctx." + loop.kernel->name + "." +
                                       std::to_string(id));
}

//===----------------------------------------------------------------------===//
// Body function
//===----------------------------------------------------------------------===//

void LoopEmitter::emitKernelCall(llvm::IRBuilder<> &bb,
                                 const KernelInterface &kernel,
                                 const std::vector<llvm::Value *> &coords,
                                 llvm::MDNode *group) {
  auto i64 = [&](int64_t v) {
    return llvm::ConstantInt::get(cgm.i64Ty, uint64_t(v), true);
  };
  std::vector<llvm::Value *> args;
  llvm::Value *i = coords[0];
  for (unsigned n = 0; n < loop.args.size(); ++n) {
    const AccessDescriptor &a = loop.args[n];
    llvm::Type *elemTy = cgm.memType(a.scalar);
    switch (a.kind) {
    case ArgKind::Direct:
    case ArgKind::Stencil:
      if (loop.block) {
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
      if (incBuffer[n]) {
        args.push_back(incBuffer[n]);
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
  bb.CreateCall(kernel.function, args);
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
  f.setMetadata(LoopMetadataKind,
                llvm::MDNode::get(cgm.context,
                                  {llvm::MDString::get(cgm.context,
                                                       loop.kernel->name),
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
  base.assign(n, nullptr);
  mapData.assign(n, nullptr);
  argPtr.assign(n, nullptr);
  incBuffer.assign(n, nullptr);
  strides.assign(n, {});
  std::vector<std::pair<llvm::Value *, llvm::Value *>> accumulators(n);
  // Shared fields are loaded once.
  std::map<int, llvm::Value *> loadedPtr;
  std::map<int, std::vector<llvm::Value *>> loadedStrides;
  auto loadPtr = [&](int f, const char *name) {
    llvm::Value *&v = loadedPtr[f];
    if (!v)
      v = bb.CreateLoad(cgm.ptrTy, field(f), name);
    return v;
  };
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
    if (fl.value >= 0) {
      // A private copy: loads from it cannot alias any dat store, so the
      // value stays in registers for the whole chunk.
      llvm::Type *t = ctxTy->getElementType(unsigned(fl.value));
      llvm::AllocaInst *copy = bb.CreateAlloca(t, nullptr, "global");
      bb.CreateStore(bb.CreateLoad(t, field(fl.value)), copy);
      argPtr[i] = copy;
    }
    if (fl.partials >= 0) {
      // The chunk's accumulator starts from its partial slot (the
      // identity) and is stored back once at the end of the chunk.
      auto *accTy = llvm::ArrayType::get(cgm.memType(a.scalar), a.dim);
      llvm::AllocaInst *acc = bb.CreateAlloca(accTy, nullptr, "acc");
      llvm::Value *partials = bb.CreateLoad(cgm.ptrTy, field(fl.partials));
      llvm::Value *slot = bb.CreateInBoundsGEP(
          cgm.memType(a.scalar), partials,
          bb.CreateMul(chunk, llvm::ConstantInt::get(cgm.i64Ty, a.dim)),
          "partial");
      bb.CreateStore(bb.CreateLoad(accTy, slot), acc);
      accumulators[i] = {acc, slot};
      argPtr[i] = acc;
    }
  }
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
  // dimension 1 runs in tiles of about StencilTilePoints points per plane,
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
    llvm::MDNode *idMD = makeLoopID(cgm.context, inner ? group : nullptr);
    emitCountedLoop(bb, lo, hi, idMD, "dim" + std::to_string(d),
                    [&](llvm::Value *v) {
                      coords[d] = v;
                      if (inner)
                        emitKernelCall(bb, kernel, coords, group);
                      else
                        level(d - 1);
                    });
  };
  if (shape == Shape::IncStrips) {
    emitIncStrips(bb, kernel, group, begin, end);
  } else if (dims == 3) {
    auto i64 = [&](int64_t v) {
      return llvm::ConstantInt::get(cgm.i64Ty, uint64_t(v), true);
    };
    llvm::Value *row = bb.CreateSub(rangeHi[0], rangeLo[0]);
    row = bb.CreateSelect(bb.CreateICmpSGT(row, i64(1)), row, i64(1));
    llvm::Value *tile = bb.CreateSDiv(i64(StencilTilePoints), row);
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

  for (unsigned i = 0; i < n; ++i) {
    auto [acc, slot] = accumulators[i];
    if (!acc)
      continue;
    auto *accTy = llvm::cast<llvm::AllocaInst>(acc)->getAllocatedType();
    bb.CreateStore(bb.CreateLoad(accTy, acc), slot);
  }
  bb.CreateRetVoid();
  return f;
}

void LoopEmitter::emitIncStrips(llvm::IRBuilder<> &bb,
                                const KernelInterface &kernel,
                                llvm::MDNode *group, llvm::Value *begin,
                                llvm::Value *end) {
  OPDC_ASSERT(!loop.block, "indirect increments in a block loop");
  auto i64 = [&](int64_t v) {
    return llvm::ConstantInt::get(cgm.i64Ty, uint64_t(v), true);
  };
  // One buffer [IncStripSize][dim] per indirect increment, allocated in the
  // entry block (where bb still is).
  std::vector<unsigned> incs;
  std::vector<llvm::Value *> buffer(loop.args.size(), nullptr);
  for (unsigned n = 0; n < loop.args.size(); ++n) {
    const AccessDescriptor &a = loop.args[n];
    if (!isIndirectInc(a))
      continue;
    incs.push_back(n);
    auto *bufTy =
        llvm::ArrayType::get(cgm.memType(a.scalar), IncStripSize * a.dim);
    llvm::AllocaInst *buf = bb.CreateAlloca(bufTy, nullptr, "inc.buf");
    buf->setAlignment(llvm::Align(64));
    buffer[n] = buf;
  }
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
      llvm::Constant *zero = isFloat(a.scalar)
                                 ? llvm::ConstantFP::getNegativeZero(t)
                                 : llvm::Constant::getNullValue(t);
      incBuffer[n] = row(n, j);
      for (unsigned k = 0; k < a.dim; ++k) {
        llvm::StoreInst *st = bb.CreateStore(
            zero, bb.CreateConstInBoundsGEP1_32(t, incBuffer[n], k));
        st->setMetadata(llvm::LLVMContext::MD_tbaa, cgm.tbaaDat);
        st->setMetadata(llvm::LLVMContext::MD_access_group, group);
      }
    }
    emitKernelCall(bb, kernel, {bb.CreateAdd(s, j, "", true, true)}, group);
    for (unsigned n : incs)
      incBuffer[n] = nullptr;
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
    llvm::Value *left = bb.CreateSub(end, s);
    llvm::Value *len =
        bb.CreateSelect(bb.CreateICmpSLT(left, i64(IncStripSize)), left,
                        i64(IncStripSize), "strip.len");
    emitCountedLoop(bb, i64(0), len, makeLoopID(cgm.context, group),
                    "strip.compute", [&](llvm::Value *j) { compute(s, j); });
    emitCountedLoop(bb, i64(0), len, makeLoopID(cgm.context, nullptr),
                    "strip.apply", [&](llvm::Value *j) { apply(s, j); });
  };
  emitCountedLoop(bb, begin, end, makeLoopID(cgm.context, nullptr), "strip",
                  strip, IncStripSize);
}

//===----------------------------------------------------------------------===//
// Host side
//===----------------------------------------------------------------------===//

bool LoopEmitter::emitRanges() {
  if (!loop.block)
    return true;
  auto *arrTy = llvm::ArrayType::get(cgm.i64Ty, dims);
  loArr = host.createTemp(arrTy, "lo");
  hiArr = host.createTemp(arrTy, "hi");
  auto store = [&](llvm::Value *arr, unsigned d, llvm::Value *v) {
    b.CreateStore(b.CreateSExt(v, cgm.i64Ty),
                  b.CreateConstInBoundsGEP2_32(arrTy, arr, 0, d));
  };
  if (!loop.ranges.empty()) {
    for (unsigned d = 0; d < dims; ++d) {
      store(loArr, d, host.emitExpr(*loop.ranges[d].lo));
      store(hiArr, d, host.emitExpr(*loop.ranges[d].hi));
    }
    return true;
  }
  // The whole block: the extent of the loop's first dat, from its base.
  const Dat *dat = nullptr;
  for (const AccessDescriptor &a : loop.args)
    if (a.usesDat() && !dat)
      dat = a.dat;
  if (!dat) {
    cgm.diags.error(loop.range,
                    "loop '" + loop.kernel->name + "' over the whole block '" +
                        loop.block->name +
                        "' has no dat argument to take its extent from; "
                        "give the range explicitly");
    return false;
  }
  llvm::Value *h = b.CreateLoad(cgm.ptrTy, cgm.handle(dat));
  for (unsigned d = 0; d < dims; ++d) {
    auto *lo = llvm::ConstantInt::get(
        cgm.i64Ty, uint64_t(d < dat->base.size() ? dat->base[d] : 0), true);
    llvm::Value *ext = b.CreateCall(cgm.rt.datExtent,
                                    {h, llvm::ConstantInt::get(cgm.i32Ty, d)});
    store(loArr, d, lo);
    store(hiArr, d, b.CreateAdd(lo, ext));
  }
  return true;
}

void LoopEmitter::emitHaloChecks() {
  // A range computed at run time may reach beyond a dat's halo; stop with
  // the loop's location instead of reading or writing outside its storage.
  auto *arrTy = llvm::ArrayType::get(cgm.i64Ty, dims);
  auto i64 = [&](int64_t v) {
    return llvm::ConstantInt::get(cgm.i64Ty, uint64_t(v), true);
  };
  for (const AccessDescriptor &a : loop.args) {
    if (!a.usesDat())
      continue;
    const Dat *dat = a.dat;
    llvm::Value *h = b.CreateLoad(cgm.ptrTy, cgm.handle(dat));
    llvm::Value *what = cgm.string(
        cgm.location(loop.range) + ": loop '" + loop.kernel->name +
        "' over '" + loop.block->name + "' " +
        (a.mode == AccessMode::Read ? "reads" : "writes") + " dat '" +
        dat->name + "'");
    for (unsigned d = 0; d < dims; ++d) {
      int64_t mn = 0, mx = 0;
      if (a.stencil)
        for (const auto &p : a.stencil->points)
          if (d < p.size()) {
            mn = std::min(mn, p[d]);
            mx = std::max(mx, p[d]);
          }
      auto at = [&](const std::vector<int64_t> &v) {
        return d < v.size() ? v[d] : 0;
      };
      llvm::Value *lo = b.CreateLoad(
          cgm.i64Ty, b.CreateConstInBoundsGEP2_32(arrTy, loArr, 0, d));
      llvm::Value *hi = b.CreateLoad(
          cgm.i64Ty, b.CreateConstInBoundsGEP2_32(arrTy, hiArr, 0, d));
      llvm::Value *ext = b.CreateCall(
          cgm.rt.datExtent, {h, llvm::ConstantInt::get(cgm.i32Ty, d)});
      // Valid indices: [first, last]; the loop reaches [lo + mn, hi - 1 + mx].
      llvm::Value *first = i64(at(dat->base) - at(dat->haloMinus));
      llvm::Value *last =
          b.CreateAdd(ext, i64(at(dat->base) + at(dat->haloPlus) - 1));
      llvm::Value *nonEmpty = b.CreateICmpSLT(lo, hi);
      llvm::Value *low = b.CreateAdd(lo, i64(mn));
      llvm::Value *high = b.CreateAdd(hi, i64(mx - 1));
      llvm::Value *dim = llvm::ConstantInt::get(cgm.i32Ty, d);
      host.emitFailIf(b.CreateAnd(nonEmpty, b.CreateICmpSLT(low, first)),
                      cgm.rt.failOutside, {what, low, dim, first, last}, "halo");
      host.emitFailIf(b.CreateAnd(nonEmpty, b.CreateICmpSGT(high, last)),
                      cgm.rt.failOutside, {what, high, dim, first, last},
                      "halo");
    }
  }
}

llvm::Value *LoopEmitter::emitPrepare() {
  size_t n = loop.args.size();
  std::vector<llvm::Constant *> entries;
  llvm::Constant *null = llvm::ConstantPointerNull::get(cgm.ptrTy);
  auto i32 = [&](int64_t v) {
    return llvm::ConstantInt::get(cgm.i32Ty, uint64_t(v), true);
  };
  auto *i32x3 = llvm::ArrayType::get(cgm.i32Ty, 3);
  for (const AccessDescriptor &a : loop.args) {
    // A stencil's extent per dimension and whether it reads off the axes:
    // the depth and shape of halo exchanges between ranks.
    int64_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    int flags = 0;
    if (a.kind == ArgKind::Stencil && a.stencil)
      for (const auto &p : a.stencil->points) {
        int offAxis = 0;
        for (size_t d = 0; d < p.size() && d < 3; ++d) {
          lo[d] = std::min(lo[d], p[d]);
          hi[d] = std::max(hi[d], p[d]);
          offAxis += p[d] != 0;
        }
        if (offAxis > 1)
          flags |= OPD_STENCIL_DIAGONAL;
      }
    auto triple = [&](const int64_t *v) {
      return llvm::ConstantArray::get(i32x3, {i32(v[0]), i32(v[1]), i32(v[2])});
    };
    entries.push_back(llvm::ConstantStruct::get(
        cgm.rt.argTy,
        {null, null, i32(a.kind == ArgKind::Indirect ? a.mapIndex : 0),
         i32(runtimeKind(a.kind)), i32(runtimeMode(a.mode)), i32(a.bytes),
         triple(lo), triple(hi), i32(flags)}));
  }
  auto *tableTy = llvm::ArrayType::get(cgm.rt.argTy, n);
  std::string suffix = std::to_string(id);
  auto *table = new llvm::GlobalVariable(
      cgm.module, tableTy, false, llvm::GlobalValue::InternalLinkage,
      llvm::ConstantArray::get(tableTy, entries), "opd_args." + suffix);
  auto *cache = new llvm::GlobalVariable(cgm.module, cgm.ptrTy, false,
                                         llvm::GlobalValue::InternalLinkage,
                                         null, "opd_loop." + suffix);
  auto entryField = [&](unsigned i, unsigned f) {
    return b.CreateInBoundsGEP(tableTy, table,
                               {b.getInt64(0), b.getInt64(i), b.getInt32(f)});
  };
  for (unsigned i = 0; i < n; ++i) {
    const AccessDescriptor &a = loop.args[i];
    if (a.usesDat())
      b.CreateStore(b.CreateLoad(cgm.ptrTy, cgm.handle(a.dat)),
                    entryField(i, 0));
    if (a.map)
      b.CreateStore(b.CreateLoad(cgm.ptrTy, cgm.handle(a.map)),
                    entryField(i, 1));
  }
  llvm::Value *name = cgm.string(loop.kernel->name);
  llvm::Value *nargs = i32(int64_t(n));
  if (loop.block)
    return b.CreateCall(cgm.rt.loopPrepareBlock,
                        {cache, name,
                         b.CreateLoad(cgm.ptrTy, cgm.handle(loop.block)), loArr,
                         hiArr, nargs, table},
                        "loop");
  return b.CreateCall(cgm.rt.loopPrepare,
                      {cache, name,
                       b.CreateLoad(cgm.ptrTy, cgm.handle(loop.set)), nargs,
                       table},
                      "loop");
}

llvm::Constant *LoopEmitter::identity(const AccessDescriptor &a) const {
  llvm::Type *t = cgm.memType(a.scalar);
  if (a.mode == AccessMode::Sum)
    return llvm::Constant::getNullValue(t);
  bool isMin = a.mode == AccessMode::Min;
  if (isFloat(a.scalar))
    return llvm::ConstantFP::getInfinity(t, /*Negative=*/!isMin);
  auto *it = llvm::cast<llvm::IntegerType>(t);
  return llvm::ConstantInt::get(
      cgm.context, isMin ? llvm::APInt::getSignedMaxValue(it->getBitWidth())
                         : llvm::APInt::getSignedMinValue(it->getBitWidth()));
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
  }
  if (loop.block) {
    auto *arrTy = llvm::ArrayType::get(cgm.i64Ty, dims);
    b.CreateStore(b.CreateLoad(arrTy, loArr), field(loField));
    b.CreateStore(b.CreateLoad(arrTy, hiArr), field(hiField));
  }
  if (gidField >= 0)
    b.CreateStore(
        b.CreateCall(cgm.rt.setGlobalIds,
                     {b.CreateLoad(cgm.ptrTy, cgm.handle(loop.set))}),
        field(gidField));
  partialPtr.assign(loop.args.size(), nullptr);
  if (!anyReduction)
    return;

  // One scratch allocation holds every reduction's partials, each starting
  // on an 8-byte boundary.
  chunks = b.CreateCall(cgm.rt.loopChunks, {loopHandle}, "chunks");
  llvm::Value *total = llvm::ConstantInt::get(cgm.i64Ty, 0);
  std::vector<llvm::Value *> offsets(loop.args.size(), nullptr);
  for (unsigned i = 0; i < loop.args.size(); ++i) {
    const AccessDescriptor &a = loop.args[i];
    if (fields[i].partials < 0)
      continue;
    offsets[i] = total;
    uint64_t elem = scalarBytes(a.scalar) * a.dim;
    llvm::Value *bytes =
        b.CreateMul(chunks, llvm::ConstantInt::get(cgm.i64Ty, elem));
    bytes =
        b.CreateAnd(b.CreateAdd(bytes, llvm::ConstantInt::get(cgm.i64Ty, 7)),
                    llvm::ConstantInt::get(cgm.i64Ty, ~uint64_t(7)));
    total = b.CreateAdd(total, bytes);
  }
  llvm::Value *scratch = b.CreateCall(cgm.rt.scratch, {total}, "scratch");
  for (unsigned i = 0; i < loop.args.size(); ++i) {
    const AccessDescriptor &a = loop.args[i];
    if (fields[i].partials < 0)
      continue;
    llvm::Value *p = b.CreateInBoundsGEP(cgm.i8Ty, scratch, offsets[i]);
    partialPtr[i] = p;
    b.CreateStore(p, field(fields[i].partials));
    llvm::Type *t = cgm.memType(a.scalar);
    llvm::Constant *init = identity(a);
    llvm::Value *count =
        b.CreateMul(chunks, llvm::ConstantInt::get(cgm.i64Ty, a.dim));
    emitCountedLoop(b, llvm::ConstantInt::get(cgm.i64Ty, 0), count, nullptr,
                    "partial.init", [&](llvm::Value *k) {
                      b.CreateStore(init, b.CreateInBoundsGEP(t, p, k));
                    });
  }
}

llvm::Value *LoopEmitter::hostElement(const AccessDescriptor &a, unsigned k) {
  llvm::Value *var = host.slot(unsigned(a.var));
  const Type &t = host.fn.vars[unsigned(a.var)].type;
  if (!t.isArray())
    return var;
  return b.CreateConstInBoundsGEP2_32(cgm.storageType(t), var, 0, k);
}

void LoopEmitter::combinePartials() {
  for (unsigned i = 0; i < loop.args.size(); ++i) {
    const AccessDescriptor &a = loop.args[i];
    if (!partialPtr[i])
      continue;
    Type elem = Type::scalarOf(a.scalar);
    llvm::Value *p = partialPtr[i];
    // Across ranks: the variable's earlier value counts once (rank 0), the
    // partials of every rank are combined after.
    std::vector<llvm::Value *> reduceArgs{
        hostElement(a, 0),
        llvm::ConstantInt::get(cgm.i32Ty, runtimeScalar(elem)),
        llvm::ConstantInt::get(cgm.i32Ty, runtimeMode(a.mode)),
        llvm::ConstantInt::get(cgm.i32Ty, a.dim)};
    b.CreateCall(cgm.rt.reduceLocal, reduceArgs);
    emitCountedLoop(
        b, llvm::ConstantInt::get(cgm.i64Ty, 0), chunks, nullptr,
        "partial.combine", [&](llvm::Value *c) {
          for (unsigned k = 0; k < a.dim; ++k) {
            llvm::Value *slot = b.CreateAdd(
                b.CreateMul(c, llvm::ConstantInt::get(cgm.i64Ty, a.dim)),
                llvm::ConstantInt::get(cgm.i64Ty, k));
            llvm::Value *part = host.loadValue(
                b.CreateInBoundsGEP(cgm.memType(a.scalar), p, slot), elem);
            llvm::Value *ptr = hostElement(a, k);
            llvm::Value *v = host.loadValue(ptr, elem);
            llvm::Value *r = a.mode == AccessMode::Sum
                                 ? host.emitArithmetic(BinaryOp::Add, a.scalar,
                                                       v, part, loop.range)
                                 : host.emitMinMax(a.mode == AccessMode::Min,
                                                   a.scalar, v, part);
            host.storeValue(r, ptr, elem);
          }
        });
    b.CreateCall(cgm.rt.reduceGlobal, reduceArgs);
  }
}

void LoopEmitter::emit() {
  layoutContext();
  shape = chooseShape();
  llvm::MDNode *group = shape != Shape::Sequential
                            ? llvm::MDNode::getDistinct(cgm.context, {})
                            : nullptr;
  KernelInterface kernel = emitLoopKernel(cgm, loop, id, group);
  llvm::Function *body = emitBody(kernel, group);

  if (!emitRanges())
    return;
  if (loop.block)
    emitHaloChecks();
  llvm::Value *handle = emitPrepare();
  emitContext(handle);
  b.CreateCall(cgm.rt.loopRun, {handle, body, ctx});
  if (chunks)
    combinePartials();
}

} // namespace

void emitParLoop(FunctionEmitter &host, const ir::ParLoopStmt &loop) {
  LoopEmitter(host, loop).emit();
}

} // namespace opdc
