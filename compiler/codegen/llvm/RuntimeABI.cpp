// RuntimeABI.cpp - Declarations of the opd_rt.h functions in a module.
// SPDX-License-Identifier: Apache-2.0
//
// Kept in one place so that a change to lib/include/opd_rt.h is a change to
// this file only. All runtime functions are nounwind (C code); opd_rt_fail
// does not return, which lets the optimiser treat its callers' error paths
// as cold.
#include "codegen/llvm/RuntimeABI.h"

#include "llvm/IR/Attributes.h"

namespace opdc {

RuntimeABI::RuntimeABI(llvm::Module &m) : module(m) {
  llvm::LLVMContext &c = m.getContext();
  auto *ptr = llvm::PointerType::get(c, 0);
  auto *i32 = llvm::Type::getInt32Ty(c);
  auto *i64 = llvm::Type::getInt64Ty(c);
  auto *f32 = llvm::Type::getFloatTy(c);
  auto *f64 = llvm::Type::getDoubleTy(c);
  auto *voidTy = llvm::Type::getVoidTy(c);

  paramDescTy =
      llvm::StructType::create(c, {ptr, i32, ptr, ptr}, "opd_param_desc");
  bodyTy = llvm::FunctionType::get(voidTy, {ptr, i64, i64, i64}, false);

  auto declare = [&](const char *name, llvm::Type *ret,
                     llvm::ArrayRef<llvm::Type *> params, bool vararg = false) {
    auto callee = m.getOrInsertFunction(
        name, llvm::FunctionType::get(ret, params, vararg));
    if (auto *f = llvm::dyn_cast<llvm::Function>(callee.getCallee()))
      f->addFnAttr(llvm::Attribute::NoUnwind);
    return callee;
  };

  checkAbi = declare("opd_rt_check_abi", voidTy, {i32});
  init = declare("opd_rt_init", voidTy, {i32, ptr, ptr, ptr, i32});
  finalize = declare("opd_rt_finalize", i32, {});
  wtime = declare("opd_rt_wtime", f64, {});
  fail = declare("opd_rt_fail", voidTy, {ptr});
  failOutside = declare("opd_rt_fail_outside", voidTy, {ptr, i64, i32, i64, i64});
  failAllf = declare("opd_rt_fail_allf", voidTy, {ptr}, /*vararg=*/true);
  warnf = declare("opd_rt_warnf", voidTy, {ptr}, /*vararg=*/true);
  for (auto *callee : {&fail, &failOutside, &failAllf})
    if (auto *f = llvm::dyn_cast<llvm::Function>(callee->getCallee())) {
      f->addFnAttr(llvm::Attribute::NoReturn);
      f->addFnAttr(llvm::Attribute::Cold);
    }

  setCreate = declare("opd_set_create", ptr, {ptr, i64});
  setFromFile = declare("opd_set_from_file", ptr, {ptr, ptr});
  setSize = declare("opd_set_size", i64, {ptr});
  setSizeI32 = declare("opd_set_size_i32", i32, {ptr});
  setGlobalIds = declare("opd_set_global_ids", ptr, {ptr});

  mapCreate = declare("opd_map_create", ptr, {ptr, ptr, ptr, i32});
  mapFromFile = declare("opd_map_from_file", ptr, {ptr, ptr, ptr, i32, ptr});
  mapData = declare("opd_map_data", ptr, {ptr});
  mapValues = declare("opd_map_values", ptr, {ptr});

  datCreate = declare("opd_dat_create", ptr, {ptr, ptr, i32, i32});
  datFromFile = declare("opd_dat_from_file", ptr, {ptr, ptr, i32, i32, ptr});
  datData = declare("opd_dat_data", ptr, {ptr});
  datFill = declare("opd_dat_fill", voidTy, {ptr, ptr});
  datSwap = declare("opd_dat_swap", voidTy, {ptr, ptr});
  datWrite = declare("opd_dat_write", voidTy, {ptr, i32, ptr});
  datWriteRange =
      declare("opd_dat_write_range", voidTy, {ptr, i32, ptr, ptr, ptr, i32});
  datRead = declare("opd_dat_read", voidTy, {ptr, i32, ptr});

  blockCreate = declare("opd_block_create", ptr, {ptr, i32});
  blockDatCreate = declare("opd_block_dat_create", ptr,
                           {ptr, ptr, i32, i32, ptr, ptr, ptr, ptr});
  datExtent = declare("opd_dat_extent", i64, {ptr, i32});
  datOrigin = declare("opd_dat_origin", ptr, {ptr, ptr});

  loopPrepare = declare("opd_loop_prepare", ptr, {ptr, ptr, ptr, i32, ptr});
  loopPrepareBlock = declare("opd_loop_prepare_block", ptr,
                             {ptr, ptr, ptr, ptr, ptr, i32, ptr});
  loopSetLocation = declare("opd_loop_set_location", voidTy, {ptr, ptr});
  loopChunks = declare("opd_loop_chunks", i64, {ptr});
  loopPartialSlots = declare("opd_loop_partial_slots", i64, {ptr});
  loopRun = declare("opd_loop_run", voidTy, {ptr, ptr, ptr});
  loopStreams = declare("opd_loop_streams", i32, {ptr});
  loopScalar = declare("opd_loop_scalar", i32, {ptr});
  scratch = declare("opd_rt_scratch", ptr, {i64});
  scratchSlot = declare("opd_rt_scratch_slot", ptr, {i64, i32});
  reduceLocal = declare("opd_reduce_local", voidTy, {ptr, i32, i32, i32});
  reduceGlobal = declare("opd_reduce_global", voidTy, {ptr, i32, i32, i32});
  xsumAddF64 = declare("opd_xsum_add_f64", voidTy, {ptr, ptr, i32});
  xsumAddF32 = declare("opd_xsum_add_f32", voidTy, {ptr, ptr, i32});
  reduceSumExact =
      declare("opd_reduce_sum_exact", voidTy, {ptr, i32, i32, ptr, i64});
  loopGather = declare("opd_loop_gather", ptr, {ptr, i32});
  solveTridiagonal = declare("opd_solve_tridiagonal", voidTy,
                             {ptr, ptr, ptr, ptr, i32, ptr, ptr});

  tapePushDat = declare("opd_tape_push_dat", voidTy, {ptr});
  tapePushDatOverwritten =
      declare("opd_tape_push_dat_overwritten", voidTy, {ptr});
  tapePopDat = declare("opd_tape_pop_dat", voidTy, {ptr});
  tapePushValue = declare("opd_tape_push_value", voidTy, {i64});
  tapePopValue = declare("opd_tape_pop_value", i64, {});
  ckptBegin =
      declare("opd_ckpt_begin", voidTy, {i64, i64, i64, ptr, i32, i32});
  ckptForward = declare("opd_ckpt_forward", i32, {i64});
  ckptSave = declare("opd_ckpt_save", voidTy, {i32, ptr});
  ckptSaveOverwritten =
      declare("opd_ckpt_save_overwritten", voidTy, {i32, ptr, ptr});
  ckptRestore = declare("opd_ckpt_restore", voidTy, {i32, ptr});
  ckptNext = declare("opd_ckpt_next", i32, {ptr, ptr});
  ckptEnd = declare("opd_ckpt_end", voidTy, {});

  printf = declare("opd_rt_printf", i32, {ptr}, /*vararg=*/true);
  printI64 = declare("opd_rt_print_i64", voidTy, {i64, i32});
  printF64 = declare("opd_rt_print_f64", voidTy, {f64, i32});
  printF32 = declare("opd_rt_print_f32", voidTy, {f32, i32});
  printBool = declare("opd_rt_print_bool", voidTy, {i32, i32});
  printStr = declare("opd_rt_print_str", voidTy, {ptr, i32});
  printEnd = declare("opd_rt_print_end", voidTy, {});
}

llvm::FunctionCallee RuntimeABI::haloDepth() {
  llvm::LLVMContext &c = module.getContext();
  auto *i64 = llvm::Type::getInt64Ty(c);
  return module.getOrInsertFunction(
      "opd_rt_halo_depth",
      llvm::FunctionType::get(llvm::Type::getVoidTy(c), {i64, i64}, false));
}

llvm::FunctionCallee RuntimeABI::loopExtendNext() {
  llvm::LLVMContext &c = module.getContext();
  auto *ptr = llvm::PointerType::get(c, 0);
  return module.getOrInsertFunction(
      "opd_loop_extend_next",
      llvm::FunctionType::get(llvm::Type::getVoidTy(c), {ptr, ptr}, false));
}

llvm::FunctionCallee RuntimeABI::skewRun() {
  llvm::LLVMContext &c = module.getContext();
  auto *ptr = llvm::PointerType::get(c, 0);
  auto *i32 = llvm::Type::getInt32Ty(c);
  // (n, loops, bodies, ctxs, schedule)
  return module.getOrInsertFunction(
      "opd_skew_run", llvm::FunctionType::get(llvm::Type::getVoidTy(c),
                                              {i32, ptr, ptr, ptr, ptr}, false));
}

llvm::FunctionCallee RuntimeABI::haloGroup() {
  llvm::LLVMContext &c = module.getContext();
  auto *ptr = llvm::PointerType::get(c, 0);
  auto *i32 = llvm::Type::getInt32Ty(c);
  // (cache, name, mode, n, dats, depth, nloops, loops)
  return module.getOrInsertFunction(
      "opd_halo_group",
      llvm::FunctionType::get(llvm::Type::getVoidTy(c),
                              {ptr, ptr, i32, i32, ptr, ptr, i32, ptr},
                              false));
}

llvm::FunctionCallee RuntimeABI::costModel() {
  llvm::LLVMContext &c = module.getContext();
  auto *f64 = llvm::Type::getDoubleTy(c);
  return module.getOrInsertFunction(
      "opd_rt_cost_model",
      llvm::FunctionType::get(llvm::Type::getVoidTy(c), {f64, f64, f64},
                              false));
}

llvm::FunctionCallee RuntimeABI::meshReady() {
  llvm::LLVMContext &c = module.getContext();
  return module.getOrInsertFunction(
      "opd_rt_mesh_ready",
      llvm::FunctionType::get(llvm::Type::getVoidTy(c), {}, false));
}

llvm::FunctionCallee RuntimeABI::setDefaultThreads() {
  llvm::LLVMContext &c = module.getContext();
  return module.getOrInsertFunction(
      "opd_rt_set_default_threads",
      llvm::FunctionType::get(llvm::Type::getVoidTy(c),
                              {llvm::Type::getInt32Ty(c)}, false));
}

} // namespace opdc
