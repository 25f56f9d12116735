// CodeGenModule.cpp - Module-wide state and the program's globals.
// SPDX-License-Identifier: Apache-2.0
//
// The whole .opd program becomes one LLVM module, so everything the program
// declares can be internal and the optimiser sees every call. Globals:
//
//   @opd_p_NAME      a param's storage, holding its default; the runtime
//                    overwrites it from --NAME=value (the address escapes
//                    through @opd_params, so the optimiser never folds it)
//   @opd_params      the opd_param_desc table passed to opd_rt_init
//   @opd_set_NAME    the runtime's handle of each set, map, block and dat,
//   @opd_map_NAME    stored once by main's start-up code; dats keep their
//   @opd_block_NAME  handle across swap(), which exchanges storage only
//   @opd_dat_NAME
//
// Functions: fns are internal and always inlined (they are small, pure and
// non-recursive, and inlining them into kernels is what lets loops
// vectorise); procs are internal and left to the inliner's judgement; main
// is the C entry point. Kernels and loop bodies are emitted per loop by
// KernelCodeGen.cpp, LoopBody.cpp and LoopHost.cpp.
#include "codegen/llvm/CodeGenModule.h"

#include "codegen/common/RuntimeMapping.h"
#include "codegen/llvm/FunctionEmitter.h"
#include "codegen/llvm/HostCodeGen.h"
#include "codegen/llvm/KernelCodeGen.h"

#include "ir/IR.h"
#include "support/Assert.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

namespace opdc {

CodeGenModule::CodeGenModule(const ir::Program &program, llvm::Module &module,
                             llvm::TargetMachine &tm,
                             const CPUCodeGenOptions &options,
                             DiagnosticEngine &diags)
    : program(program), module(module), context(module.getContext()),
      targetMachine(tm), options(options), diags(diags), rt(module) {
  ptrTy = llvm::PointerType::get(context, 0);
  i1Ty = llvm::Type::getInt1Ty(context);
  i8Ty = llvm::Type::getInt8Ty(context);
  i32Ty = llvm::Type::getInt32Ty(context);
  i64Ty = llvm::Type::getInt64Ty(context);

  llvm::MDBuilder md(context);
  llvm::MDNode *root = md.createTBAARoot("opdc memory kinds");
  auto tag = [&](const char *name) {
    llvm::MDNode *type = md.createTBAAScalarTypeNode(name, root);
    return md.createTBAAStructTagNode(type, type, 0);
  };
  tbaaDat = tag("opd dat");
  tbaaMap = tag("opd map");
  tbaaParam = tag("opd param");
  tbaaTable = tag("opd column table");
}

//===----------------------------------------------------------------------===//
// Types and constants
//===----------------------------------------------------------------------===//

llvm::Type *CodeGenModule::memType(ScalarKind k) const {
  switch (k) {
  case ScalarKind::Bool:
    return i8Ty;
  case ScalarKind::I32:
    return i32Ty;
  case ScalarKind::I64:
    return i64Ty;
  case ScalarKind::F32:
    return llvm::Type::getFloatTy(context);
  case ScalarKind::F64:
    return llvm::Type::getDoubleTy(context);
  }
  OPDC_UNREACHABLE("unknown scalar kind");
}

llvm::Type *CodeGenModule::regType(ScalarKind k) const {
  return k == ScalarKind::Bool ? i1Ty : memType(k);
}

llvm::Type *CodeGenModule::storageType(const Type &t) const {
  if (t.isArray())
    return llvm::ArrayType::get(memType(t.scalar), t.length);
  if (t.isString())
    return ptrTy;
  OPDC_ASSERT(t.isScalar(), "storage of a value that is not one");
  return memType(t.scalar);
}

llvm::Type *CodeGenModule::valueType(const Type &t) const {
  if (t.isVoid())
    return llvm::Type::getVoidTy(context);
  if (t.isScalar())
    return regType(t.scalar);
  return storageType(t);
}

llvm::Constant *CodeGenModule::memConstant(const ConstValue &v) {
  const Type &t = v.type;
  if (t.isString())
    return string(v.text);
  auto component = [&](unsigned i) -> llvm::Constant * {
    llvm::Type *ty = memType(t.scalar);
    if (isFloat(t.scalar))
      return llvm::ConstantFP::get(ty, v.asDouble(i));
    return llvm::ConstantInt::get(ty, uint64_t(v.asInt(i)), /*signed=*/true);
  };
  if (t.isScalar())
    return component(0);
  OPDC_ASSERT(t.isArray(), "constant of a type without a value");
  std::vector<llvm::Constant *> elems;
  for (unsigned i = 0; i < t.length; ++i)
    elems.push_back(component(i));
  return llvm::ConstantArray::get(
      llvm::ArrayType::get(memType(t.scalar), t.length), elems);
}

llvm::Constant *CodeGenModule::string(llvm::StringRef s) {
  auto it = strings.find(s);
  if (it != strings.end())
    return it->second;
  auto *init = llvm::ConstantDataArray::getString(context, s, true);
  auto *gv =
      new llvm::GlobalVariable(module, init->getType(), true,
                               llvm::GlobalValue::PrivateLinkage, init, ".str");
  gv->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  gv->setAlignment(llvm::Align(1));
  strings[s] = gv;
  return gv;
}

std::string CodeGenModule::location(SourceRange r) const {
  std::string at = r.valid() ? diags.sources().shortLocation(r.begin) : "";
  return at.empty() ? program.name : at;
}

void CodeGenModule::addFunctionAttributes(llvm::Function &f) const {
  f.addFnAttr(llvm::Attribute::NoUnwind);
  f.addFnAttr("target-cpu", targetMachine.getTargetCPU());
  if (!targetMachine.getTargetFeatureString().empty())
    f.addFnAttr("target-features", targetMachine.getTargetFeatureString());
  if (options.preferVectorWidthBits)
    f.addFnAttr("prefer-vector-width",
                std::to_string(options.preferVectorWidthBits));
  // No library calls made up from loops: LLVM's loop idiom pass turns a
  // kernel's `for k in 0..4 { a[k] = 0.0 }` (an adjoint kernel's zeroing of
  // what a loop overwrote, an adjoint_zero loop's) into a call of memset
  // before the kernel is unrolled and inlined, and the loop vectoriser
  // cannot vectorise an element loop with a call in it (Airfoil's adjoint
  // update.b, save_soln.b and its zeroing loops stayed scalar). The
  // llvm.memset/memcpy intrinsics the code generator emits itself still
  // lower as before.
  f.addFnAttr("no-builtin-memset");
  f.addFnAttr("no-builtin-memcpy");
  f.addFnAttr("no-builtin-memmove");
}

//===----------------------------------------------------------------------===//
// Globals
//===----------------------------------------------------------------------===//

llvm::GlobalVariable *CodeGenModule::paramStorage(const ir::Param *p) const {
  auto it = globals.find(p);
  OPDC_ASSERT(it != globals.end(), "param without storage");
  return it->second;
}

llvm::GlobalVariable *CodeGenModule::handle(const ir::Set *s) const {
  auto it = globals.find(s);
  OPDC_ASSERT(it != globals.end(), "set without a handle");
  return it->second;
}

llvm::GlobalVariable *CodeGenModule::handle(const ir::Map *m) const {
  auto it = globals.find(m);
  OPDC_ASSERT(it != globals.end(), "map without a handle");
  return it->second;
}

llvm::GlobalVariable *CodeGenModule::handle(const ir::Block *b) const {
  auto it = globals.find(b);
  OPDC_ASSERT(it != globals.end(), "block without a handle");
  return it->second;
}

llvm::GlobalVariable *CodeGenModule::handle(const ir::Dat *d) const {
  auto it = globals.find(d);
  OPDC_ASSERT(it != globals.end(), "dat without a handle");
  return it->second;
}

llvm::Function *CodeGenModule::function(const ir::Function *f) const {
  auto it = functions.find(f);
  OPDC_ASSERT(it != functions.end(), "call of a function never declared");
  return it->second;
}

void CodeGenModule::emitParams() {
  std::vector<llvm::Constant *> descs;
  for (const auto &p : program.params) {
    ConstValue def = ir::convertConst(p->defaultValue, p->type);
    llvm::Constant *init = memConstant(def);
    auto *gv = new llvm::GlobalVariable(module, storageType(p->type), false,
                                        llvm::GlobalValue::InternalLinkage,
                                        init, "opd_p_" + p->name);
    globals[p.get()] = gv;
    descs.push_back(llvm::ConstantStruct::get(
        rt.paramDescTy,
        {string(p->name), llvm::ConstantInt::get(i32Ty, runtimeScalar(p->type)),
         gv,
         p->doc.empty() ? llvm::ConstantPointerNull::get(ptrTy)
                        : string(p->doc)}));
  }
  if (descs.empty())
    return;
  auto *tableTy = llvm::ArrayType::get(rt.paramDescTy, descs.size());
  paramTable = new llvm::GlobalVariable(
      module, tableTy, true, llvm::GlobalValue::InternalLinkage,
      llvm::ConstantArray::get(tableTy, descs), "opd_params");
}

void CodeGenModule::emitHandles() {
  auto add = [&](const void *key, const std::string &name) {
    globals[key] = new llvm::GlobalVariable(
        module, ptrTy, false, llvm::GlobalValue::InternalLinkage,
        llvm::ConstantPointerNull::get(ptrTy), name);
  };
  for (const auto &s : program.sets)
    add(s.get(), "opd_set_" + s->name);
  for (const auto &m : program.maps)
    add(m.get(), "opd_map_" + m->name);
  for (const auto &b : program.blocks)
    add(b.get(), "opd_block_" + b->name);
  for (const auto &d : program.dats)
    add(d.get(), "opd_dat_" + d->name);
}

void CodeGenModule::declareFunctions() {
  auto declare = [&](const ir::Function &f, const std::string &prefix) {
    std::vector<llvm::Type *> params;
    for (unsigned slot : f.params)
      params.push_back(valueType(f.vars[slot].type));
    auto *fty = llvm::FunctionType::get(valueType(f.returnType), params, false);
    auto *fn = llvm::Function::Create(fty, llvm::GlobalValue::InternalLinkage,
                                      prefix + f.name, module);
    for (unsigned i = 0; i < f.params.size(); ++i)
      fn->getArg(i)->setName(f.vars[f.params[i]].name);
    addFunctionAttributes(*fn);
    if (f.kind == ir::FunctionKind::Fn)
      fn->addFnAttr(llvm::Attribute::AlwaysInline);
    else
      fn->addFnAttr(HostFnAttr);
    functions[&f] = fn;
  };
  for (const auto &f : program.fns)
    declare(*f, "opd_fn_");
  for (const auto &p : program.procs)
    declare(*p, "opd_proc_");
}

void CodeGenModule::emitFunctionBodies() {
  for (const auto &f : program.fns)
    FunctionEmitter(*this, *f, function(f.get())).emitFunction();
  for (const auto &p : program.procs)
    HostEmitter(*this, *p, function(p.get())).emitFunction();
}

void CodeGenModule::emitMain() {
  if (!program.main) {
    diags.error({},
                "program '" + program.name + "' has no main; nothing to build");
    return;
  }
  auto *fty = llvm::FunctionType::get(i32Ty, {i32Ty, ptrTy}, false);
  auto *fn = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage,
                                    "main", module);
  fn->getArg(0)->setName("argc");
  fn->getArg(1)->setName("argv");
  addFunctionAttributes(*fn);
  fn->addFnAttr(HostFnAttr);
  HostEmitter host(*this, *program.main, fn);
  host.emitMain(paramTable, unsigned(program.params.size()));
}

bool CodeGenModule::emitProgram() {
  if (!options.buildStamp.empty()) {
    // Read back by the driver's up-to-date check (never by the program).
    auto *text = llvm::ConstantDataArray::getString(
        module.getContext(), "opdc-build:" + options.buildStamp + ";");
    auto *g = new llvm::GlobalVariable(module, text->getType(), true,
                                       llvm::GlobalValue::PrivateLinkage, text,
                                       "opdc.build");
    llvm::appendToUsed(module, {g});
  }
  emitParams();
  emitHandles();
  declareFunctions();
  emitFunctionBodies();
  emitMain();
  return !diags.hasErrors();
}

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

std::unique_ptr<llvm::Module>
generateLLVMModule(const ir::Program &program, llvm::LLVMContext &context,
                   llvm::TargetMachine &tm, const CPUCodeGenOptions &options,
                   DiagnosticEngine &diags) {
  auto module = std::make_unique<llvm::Module>(program.name, context);
  module->setTargetTriple(tm.getTargetTriple().str());
  module->setDataLayout(tm.createDataLayout());
  module->setPICLevel(llvm::PICLevel::BigPIC);
  module->setPIELevel(llvm::PIELevel::Large);

  CodeGenModule cgm(program, *module, tm, options, diags);
  if (!cgm.emitProgram())
    return nullptr;

  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*module, &os)) {
    llvm::errs() << "generated LLVM IR is invalid:\n" << problems;
    OPDC_UNREACHABLE("the LLVM backend produced an invalid module");
  }
  return module;
}

} // namespace opdc
