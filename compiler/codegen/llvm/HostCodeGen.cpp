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

#include "codegen/common/HostProgram.h"
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
    b.CreateCall(
        cgm.rt.haloDepth(),
        {llvm::ConstantInt::get(cgm.i64Ty, uint64_t(p.haloLayers)),
         llvm::ConstantInt::get(cgm.i64Ty, uint64_t(p.blockHaloDepth))});
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
  if (host::meshReadyAtStart(p))
    // The sets distributed here, before main's first statement, rather
    // than inside whatever the program times around its first loop.
    b.CreateCall(cgm.rt.meshReady());
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
                 {datArray({&d}), llvm::ConstantInt::get(cgm.i32Ty, 1),
                  emitExpr(*d.initFile)});
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

llvm::Value *
FunctionEmitter::datArray(const std::vector<const ir::Dat *> &dats) {
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

void HostEmitter::emitHostStmt(const ir::Stmt &s) {
  if (s.kind == StmtKind::ParLoop)
    return emitParLoop(*this, cast<ParLoopStmt>(s));
  // The rest through the host-program form (HostPrinter.cpp).
  OPDC_ASSERT(host::isProtocolStmt(s), "unknown host statement");
  host::Program p;
  if (host::lowerHostStmt(fn, s, host::HostTraits{}, cgm.diags, p))
    printHostProgram(*this, p);
}

// A variable's element i (a scalar's only one) as the bits of a 64-bit word.
llvm::Value *FunctionEmitter::varBits(unsigned s, unsigned i) {
  const Type &t = fn.vars[s].type;
  OPDC_ASSERT(t.isScalar() || t.isArray(), "tape of a non-numeric variable");
  llvm::Type *et = cgm.memType(t.scalar);
  llvm::Value *at =
      t.isArray()
          ? b.CreateConstInBoundsGEP2_32(cgm.storageType(t), slot(s), 0, i)
          : slot(s);
  llvm::Value *v = b.CreateLoad(et, at);
  if (et->isFloatingPointTy())
    v = b.CreateBitCast(v, b.getIntNTy(et->getPrimitiveSizeInBits()));
  return b.CreateZExtOrTrunc(v, cgm.i64Ty);
}

void FunctionEmitter::setVarBits(unsigned s, unsigned i, llvm::Value *bits) {
  const Type &t = fn.vars[s].type;
  llvm::Type *et = cgm.memType(t.scalar);
  llvm::Value *v =
      b.CreateTrunc(bits, b.getIntNTy(et->getPrimitiveSizeInBits()));
  if (et->isFloatingPointTy())
    v = b.CreateBitCast(v, et);
  llvm::Value *at =
      t.isArray()
          ? b.CreateConstInBoundsGEP2_32(cgm.storageType(t), slot(s), 0, i)
          : slot(s);
  b.CreateStore(v, at);
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
