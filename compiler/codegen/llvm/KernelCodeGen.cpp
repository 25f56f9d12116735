// KernelCodeGen.cpp - Kernels, specialised per parallel loop.
// SPDX-License-Identifier: Apache-2.0
//
// A kernel is emitted once per loop that applies it, not once per kernel:
// what the optimiser may assume about its pointers depends on the loop's
// arguments. In
//
//   loop res_calc over edges (x1: p_x[pedge[0]], ..., q1: p_q[pecell[0]],
//                             ..., res1: p_res[pecell[0]], res2: ...)
//
// the increments to res1 cannot change q1 or x1 (other dats), so loads of
// q1 may move across them; res1 and res2 may be the same cell for some
// edge, so nothing is assumed between them. The function is internal and
// alwaysinline; the loop body (LoopBody.cpp) calls it per element.
//
// The "noalias where legal" facts are attached as scoped alias metadata
// rather than as noalias parameters: a noalias parameter only speaks for
// one call, so the inliner brings llvm.experimental.noalias.scope.decl
// calls into the element loop, and a loop containing them is no longer
// recognised as parallel (the vectoriser falls back to run-time alias
// checks). Distinct dats never share storage, so the scoped facts hold for
// every element, which is what the scopes state.
//
// After emission every load and store whose address derives from a dat or
// map argument gets the TBAA tag of its memory kind, its alias scopes and,
// for loops declared parallel, the loop's access group. Tagging afterwards,
// by the underlying object of the address, catches accesses made through
// any chain of array indexing without threading the information through
// the emitter.
#include "codegen/llvm/KernelCodeGen.h"

#include "codegen/llvm/FunctionEmitter.h"

#include "analysis/ColumnValues.h"

#include "support/Assert.h"

#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/MDBuilder.h"

namespace opdc {

using namespace ir;

namespace {

class KernelEmitter : public FunctionEmitter {
public:
  KernelEmitter(CodeGenModule &cgm, const ir::Function &kernel,
                llvm::Function *fn, const ParLoopStmt &loop,
                const KernelInterface &iface, const ColumnValues &columns)
      : FunctionEmitter(cgm, kernel, fn), loop(loop), iface(iface),
        columns(columns) {}

  void emit() {
    createSlots();
    emitBody(fn.body);
    finish();
  }

protected:
  llvm::Value *emitKernelArgAddress(const KernelArgExpr &e) override {
    llvm::Value *p = llvmFn->getArg(e.index);
    bool centre = true;
    for (int64_t o : e.offset)
      centre = centre && o == 0;
    if (centre)
      return p;
    const AccessDescriptor &a = loop.args[e.index];
    // Dimension 0 is unit stride: its offset is a constant number of
    // elements; the others scale the strides passed in.
    llvm::Value *off =
        llvm::ConstantInt::get(cgm.i64Ty, uint64_t(e.offset[0] * a.dim), true);
    for (size_t d = 1; d < e.offset.size(); ++d) {
      if (e.offset[d] == 0)
        continue;
      OPDC_ASSERT(iface.strideParam[e.index] >= 0,
                  "offset access to an argument without strides");
      llvm::Value *stride =
          llvmFn->getArg(unsigned(iface.strideParam[e.index] + d - 1));
      off = b.CreateAdd(
          off,
          b.CreateMul(stride, llvm::ConstantInt::get(
                                  cgm.i64Ty, uint64_t(e.offset[d]), true)));
    }
    return b.CreateInBoundsGEP(cgm.memType(a.scalar), p, off);
  }

  llvm::Value *emitElementAddress(const IndexExpr &ix, llvm::Value *base,
                                  llvm::Value *i) override {
    const auto *arg = llvm::dyn_cast<KernelArgExpr>(ix.base.get());
    if (!arg || iface.componentStride[arg->index] == 0)
      return FunctionEmitter::emitElementAddress(ix, base, i);
    const AccessDescriptor &a = loop.args[arg->index];
    return b.CreateInBoundsGEP(
        cgm.memType(a.scalar), base,
        b.CreateMul(
            i, llvm::ConstantInt::get(
                   cgm.i64Ty, uint64_t(iface.componentStride[arg->index]))));
  }

  llvm::Value *emitIdx(unsigned d) override {
    OPDC_ASSERT(d < iface.dims, "idx() beyond the loop's dimensions");
    return b.CreateTrunc(llvmFn->getArg(iface.firstCoordParam + d), cgm.i32Ty);
  }

  llvm::Value *emitPrecomputed(const Expr &e) override {
    for (size_t k = 0; k < columns.values.size(); ++k)
      if (columns.values[k] == &e)
        return llvmFn->getArg(iface.firstColumnParam + unsigned(k));
    return nullptr;
  }

  std::vector<llvm::Value *> elementCoords() override {
    std::vector<llvm::Value *> coords;
    for (unsigned d = 0; d < iface.dims; ++d)
      coords.push_back(llvmFn->getArg(iface.firstCoordParam + d));
    return coords;
  }

private:
  const ParLoopStmt &loop;
  const KernelInterface &iface;
  const ColumnValues &columns;
};

/// The memory object an argument's pointer reaches: its dat or map, or
/// null for body-local memory (global-read copies, accumulators).
const void *memoryObject(const AccessDescriptor &a) {
  if (a.usesDat())
    return a.dat;
  if (a.kind == ArgKind::MapDirect)
    return a.map;
  return nullptr;
}

} // namespace

bool isStreamCandidate(const ParLoopStmt &loop, unsigned i) {
  // Not when another loop of its skewed sweep reaches what it writes (IR.h).
  return !loop.skew.cached && isWriteOnlyCentre(loop, i);
}

bool isWriteOnlyCentre(const ParLoopStmt &loop, unsigned i) {
  const AccessDescriptor &a = loop.args[i];
  if (a.mode != AccessMode::Write || !a.dat)
    return false;
  if (a.kind == ArgKind::Stencil) {
    if (!a.stencil)
      return false;
    for (const std::vector<int64_t> &p : a.stencil->points)
      for (int64_t c : p)
        if (c != 0)
          return false;
  } else if (a.kind != ArgKind::Direct) {
    return false;
  }
  for (unsigned j = 0; j < loop.args.size(); ++j)
    if (j != i && loop.args[j].usesDat() && loop.args[j].dat == a.dat)
      return false;
  return true;
}

namespace {

void tagAccesses(CodeGenModule &cgm, llvm::Function &f, const ParLoopStmt &loop,
                 llvm::MDNode *accessGroup) {
  // One alias scope per dat or map argument; an access through argument i
  // is declared not to alias the scopes of arguments on other dats or maps.
  // Storage of distinct dats never overlaps, so this holds across elements
  // too (unlike noalias parameters, which would also bring
  // llvm.experimental.noalias.scope.decl calls into the element loop and
  // keep it from being recognised as parallel).
  size_t n = loop.args.size();
  llvm::MDBuilder md(cgm.context);
  llvm::MDNode *domain = md.createAnonymousAliasScopeDomain(f.getName());
  std::vector<llvm::MDNode *> scope(n, nullptr), scopeList(n, nullptr),
      noaliasList(n, nullptr);
  for (size_t i = 0; i < n; ++i)
    if (memoryObject(loop.args[i]))
      scope[i] = md.createAnonymousAliasScope(
          domain, (isStreamCandidate(loop, unsigned(i)) ? StreamScopePrefix
                                                        : "") +
                      loop.kernel->kernelParams[i].name);
  for (size_t i = 0; i < n; ++i) {
    const void *obj = memoryObject(loop.args[i]);
    if (!obj)
      continue;
    scopeList[i] = llvm::MDNode::get(cgm.context, {scope[i]});
    std::vector<llvm::Metadata *> others;
    for (size_t j = 0; j < n; ++j) {
      const void *o = memoryObject(loop.args[j]);
      if (o && o != obj)
        others.push_back(scope[j]);
    }
    if (!others.empty())
      noaliasList[i] = llvm::MDNode::get(cgm.context, others);
  }

  for (llvm::BasicBlock &bb : f) {
    for (llvm::Instruction &inst : bb) {
      llvm::Value *ptr = nullptr;
      if (auto *l = llvm::dyn_cast<llvm::LoadInst>(&inst))
        ptr = l->getPointerOperand();
      else if (auto *s = llvm::dyn_cast<llvm::StoreInst>(&inst))
        ptr = s->getPointerOperand();
      else
        continue;
      auto *arg =
          llvm::dyn_cast<llvm::Argument>(llvm::getUnderlyingObject(ptr, 0));
      if (!arg || arg->getArgNo() >= n)
        continue;
      unsigned i = arg->getArgNo();
      const AccessDescriptor &a = loop.args[i];
      if (!memoryObject(a))
        continue; // private copies and accumulators: body-local memory
      inst.setMetadata(llvm::LLVMContext::MD_tbaa,
                       a.usesDat() ? cgm.tbaaDat : cgm.tbaaMap);
      inst.setMetadata(llvm::LLVMContext::MD_alias_scope, scopeList[i]);
      if (noaliasList[i])
        inst.setMetadata(llvm::LLVMContext::MD_noalias, noaliasList[i]);
      if (accessGroup)
        inst.setMetadata(llvm::LLVMContext::MD_access_group, accessGroup);
    }
  }
}

} // namespace

KernelInterface emitLoopKernel(CodeGenModule &cgm, const ir::ParLoopStmt &loop,
                               unsigned loopId, llvm::MDNode *accessGroup,
                               const ColumnValues &columns,
                               const std::vector<int64_t> &componentStride) {
  const ir::Function &kernel = *loop.kernel;
  KernelInterface iface;
  iface.componentStride = componentStride;
  iface.componentStride.resize(loop.args.size(), 0);
  iface.dims = loop.block ? loop.block->dims : 1;
  std::vector<llvm::Type *> params(loop.args.size(), cgm.ptrTy);
  for (const AccessDescriptor &a : loop.args) {
    if (loop.block && a.usesDat() && iface.dims > 1) {
      iface.strideParam.push_back(int(params.size()));
      params.insert(params.end(), iface.dims - 1, cgm.i64Ty);
    } else {
      iface.strideParam.push_back(-1);
    }
  }
  iface.firstCoordParam = unsigned(params.size());
  params.insert(params.end(), iface.dims, cgm.i64Ty);
  iface.firstColumnParam = unsigned(params.size());
  for (const Expr *e : columns.values)
    params.push_back(cgm.regType(e->type.scalar));

  auto *fty = llvm::FunctionType::get(llvm::Type::getVoidTy(cgm.context),
                                      params, false);
  auto *fn = llvm::Function::Create(
      fty, llvm::GlobalValue::InternalLinkage,
      "opd_k_" + kernel.name + "." + std::to_string(loopId), cgm.module);
  cgm.addFunctionAttributes(*fn);
  fn->addFnAttr(llvm::Attribute::AlwaysInline);
  for (unsigned i = 0; i < loop.args.size(); ++i) {
    llvm::Argument *arg = fn->getArg(i);
    arg->setName(kernel.kernelParams[i].name);
    arg->addAttr(llvm::Attribute::NoCapture);
    if (!modeWrites(loop.args[i].mode))
      arg->addAttr(llvm::Attribute::ReadOnly);
  }
  for (unsigned i = 0; i < iface.dims; ++i)
    fn->getArg(iface.firstCoordParam + i)->setName("coord" + std::to_string(i));
  iface.function = fn;

  for (unsigned k = 0; k < columns.values.size(); ++k)
    fn->getArg(iface.firstColumnParam + k)
        ->setName("column" + std::to_string(k));
  KernelEmitter(cgm, kernel, fn, loop, iface, columns).emit();
  tagAccesses(cgm, *fn, loop, accessGroup);
  return iface;
}

} // namespace opdc
