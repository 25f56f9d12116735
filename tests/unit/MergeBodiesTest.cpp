// MergeBodiesTest.cpp - Identical kernels and bodies kept once
// (codegen/llvm/MergeBodies.cpp) and streaming-store variants made from
// their optimised twin (codegen/llvm/StreamTwins.cpp).
// SPDX-License-Identifier: Apache-2.0
#include "codegen/llvm/KernelCodeGen.h"
#include "codegen/llvm/LLVMCodeGen.h"
#include "codegen/llvm/StreamTwins.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace opdc;

namespace {

std::unique_ptr<llvm::Module> parse(llvm::LLVMContext &c, const char *ir) {
  llvm::SMDiagnostic err;
  auto m = llvm::parseAssemblyString(ir, err, c);
  if (!m)
    err.print("test", llvm::errs());
  return m;
}

bool verifies(const llvm::Module &m) {
  return !llvm::verifyModule(m, &llvm::errs());
}

// Two loops of one kernel: each has its kernel copy (reading its own copy
// of a constant table would block the merge; ConstantMerge runs first in
// optimizeModule) and its body with its own, isomorphic, alias scopes.
const char *TwoCopies = R"IR(
define internal void @opd_k_copy.0(ptr %x, ptr %y) {
  %v = load double, ptr %x, align 8, !alias.scope !10, !noalias !11
  store double %v, ptr %y, align 8, !alias.scope !11, !noalias !10
  ret void
}
define internal void @opd_body_copy.0(ptr %ctx, i64 %i) !opd.loop !1 {
  %p = getelementptr double, ptr %ctx, i64 %i
  call void @opd_k_copy.0(ptr %ctx, ptr %p)
  ret void
}
define internal void @opd_k_copy.1(ptr %x, ptr %y) {
  %v = load double, ptr %x, align 8, !alias.scope !20, !noalias !21
  store double %v, ptr %y, align 8, !alias.scope !21, !noalias !20
  ret void
}
define internal void @opd_body_copy.1(ptr %ctx, i64 %i) !opd.loop !2 {
  %p = getelementptr double, ptr %ctx, i64 %i
  call void @opd_k_copy.1(ptr %ctx, ptr %p)
  ret void
}
declare void @run(ptr)
define i32 @main() "opd-host" {
  call void @run(ptr @opd_body_copy.0)
  call void @run(ptr @opd_body_copy.1)
  ret i32 0
}
!1 = !{!"copy", i32 1, i32 10, i32 3}
!2 = !{!"copy", i32 1, i32 11, i32 3}
!3 = distinct !{!3, !"opd_k_copy.0"}
!4 = distinct !{!4, !3, !"x"}
!5 = distinct !{!5, !3, !"y"}
!10 = !{!4}
!11 = !{!5}
!6 = distinct !{!6, !"opd_k_copy.1"}
!7 = distinct !{!7, !6, !"x"}
!8 = distinct !{!8, !6, !"y"}
!20 = !{!7}
!21 = !{!8}
)IR";

TEST(MergeBodies, KeepsOneOfIdenticalKernelsAndBodies) {
  llvm::LLVMContext c;
  auto m = parse(c, TwoCopies);
  ASSERT_TRUE(m);
  EXPECT_EQ(mergeIdenticalFunctions(*m), 2u);
  ASSERT_TRUE(verifies(*m));
  EXPECT_NE(m->getFunction("opd_body_copy.0"), nullptr);
  EXPECT_EQ(m->getFunction("opd_body_copy.1"), nullptr);
  EXPECT_EQ(m->getFunction("opd_k_copy.1"), nullptr);
  // Both calls now pass the first body.
  unsigned uses = 0;
  for (llvm::Instruction &i : llvm::instructions(*m->getFunction("main")))
    if (auto *call = llvm::dyn_cast<llvm::CallInst>(&i))
      uses += call->arg_size() == 1 &&
              call->getArgOperand(0) == m->getFunction("opd_body_copy.0");
  EXPECT_EQ(uses, 2u);
  // The removed body's loop tag stays for -Rpass=vectorize.
  llvm::NamedMDNode *merged = m->getNamedMetadata(MergedLoopMetadataKind);
  ASSERT_NE(merged, nullptr);
  ASSERT_EQ(merged->getNumOperands(), 1u);
  const llvm::MDNode *entry = merged->getOperand(0);
  EXPECT_EQ(llvm::mdconst::dyn_extract<llvm::Function>(entry->getOperand(0)),
            m->getFunction("opd_body_copy.0"));
  auto *tag = llvm::cast<llvm::MDNode>(entry->getOperand(1));
  EXPECT_EQ(llvm::mdconst::extract<llvm::ConstantInt>(tag->getOperand(2))
                ->getZExtValue(),
            11u); // the line of the second loop
}

// The same instructions, but the second kernel's load and store share one
// scope list where the first's have two: what they promise about aliasing
// differs, so they stay apart (FunctionComparator alone does not look
// inside the lists).
const char *DifferentScopes = R"IR(
define internal void @opd_k_a.0(ptr %x, ptr %y) {
  %v = load double, ptr %x, align 8, !alias.scope !10, !noalias !11
  store double %v, ptr %y, align 8, !alias.scope !11, !noalias !10
  ret void
}
define internal void @opd_k_a.1(ptr %x, ptr %y) {
  %v = load double, ptr %x, align 8, !alias.scope !20, !noalias !20
  store double %v, ptr %y, align 8, !alias.scope !20, !noalias !20
  ret void
}
declare void @run(ptr)
define i32 @main() "opd-host" {
  call void @run(ptr @opd_k_a.0)
  call void @run(ptr @opd_k_a.1)
  ret i32 0
}
!3 = distinct !{!3, !"d0"}
!4 = distinct !{!4, !3, !"x"}
!5 = distinct !{!5, !3, !"y"}
!10 = !{!4}
!11 = !{!5}
!6 = distinct !{!6, !"d1"}
!7 = distinct !{!7, !6, !"x"}
!20 = !{!7}
)IR";

TEST(MergeBodies, KeepsFunctionsWhoseScopesDiffer) {
  llvm::LLVMContext c;
  auto m = parse(c, DifferentScopes);
  ASSERT_TRUE(m);
  EXPECT_EQ(mergeIdenticalFunctions(*m), 0u);
  EXPECT_NE(m->getFunction("opd_k_a.1"), nullptr);
}

// A body and its streaming variant: the variant is the body with a fence
// before the return (LoopHost.cpp); a second variant has one more store.
const char *Twins = R"IR(
define internal void @opd_body_s.0(ptr %p) !opd.loop !1 {
  store double 1.0, ptr %p, align 8
  ret void
}
define internal void @opd_body_s.0.nt(ptr %p) "opd-stream" !opd.loop !1 {
  store double 1.0, ptr %p, align 8
  fence seq_cst
  ret void
}
define internal void @opd_body_t.1(ptr %p) !opd.loop !2 {
  store double 1.0, ptr %p, align 8
  ret void
}
define internal void @opd_body_t.1.nt(ptr %p) "opd-stream" !opd.loop !2 {
  store double 1.0, ptr %p, align 8
  store double 2.0, ptr %p, align 8
  fence seq_cst
  ret void
}
declare void @run(ptr)
define i32 @main(i1 %c) "opd-host" {
  %s = select i1 %c, ptr @opd_body_s.0.nt, ptr @opd_body_s.0
  call void @run(ptr %s)
  %t = select i1 %c, ptr @opd_body_t.1.nt, ptr @opd_body_t.1
  call void @run(ptr %t)
  ret i32 0
}
!1 = !{!"s", i32 1, i32 10, i32 3}
!2 = !{!"t", i32 1, i32 11, i32 3}
)IR";

TEST(StreamTwins, VariantMadeAgainFromItsTwin) {
  llvm::LLVMContext c;
  auto m = parse(c, Twins);
  ASSERT_TRUE(m);
  std::vector<StreamTwin> twins = deferStreamingTwins(*m);
  ASSERT_EQ(twins.size(), 1u);
  llvm::Function *nt = m->getFunction("opd_body_s.0.nt");
  EXPECT_TRUE(nt->isDeclaration());
  // Not a fenced copy: optimised on its own.
  EXPECT_FALSE(m->getFunction("opd_body_t.1.nt")->isDeclaration());
  // What the pipeline would do to the twin shows in the variant.
  llvm::Function *twin = m->getFunction("opd_body_s.0");
  auto *st = llvm::cast<llvm::StoreInst>(&*llvm::inst_begin(twin));
  st->setAlignment(llvm::Align(16));
  restoreStreamingTwins(twins);
  ASSERT_TRUE(verifies(*m));
  EXPECT_FALSE(nt->isDeclaration());
  EXPECT_TRUE(nt->hasLocalLinkage());
  EXPECT_TRUE(nt->hasFnAttribute(StreamFnAttr));
  EXPECT_EQ(nt->getMetadata(LoopMetadataKind),
            twin->getMetadata(LoopMetadataKind));
  std::vector<unsigned> ops;
  for (llvm::Instruction &i : llvm::instructions(nt))
    ops.push_back(i.getOpcode());
  EXPECT_EQ(ops, (std::vector<unsigned>{llvm::Instruction::Store,
                                        llvm::Instruction::Fence,
                                        llvm::Instruction::Ret}));
  EXPECT_EQ(llvm::cast<llvm::StoreInst>(&*llvm::inst_begin(nt))->getAlign(),
            llvm::Align(16));
}

TEST(StreamTwins, DeadTwinsLeaveNothing) {
  llvm::LLVMContext c;
  auto m = parse(c, Twins);
  ASSERT_TRUE(m);
  std::vector<StreamTwin> twins = deferStreamingTwins(*m);
  ASSERT_EQ(twins.size(), 1u);
  // The host code that chose between them is gone, and with it the twin.
  m->getFunction("main")->eraseFromParent();
  m->getFunction("opd_body_s.0")->eraseFromParent();
  restoreStreamingTwins(twins);
  EXPECT_EQ(m->getFunction("opd_body_s.0.nt"), nullptr);
  EXPECT_TRUE(verifies(*m));
}

} // namespace
