// LoopNamesTest.cpp - ir::userLoopName: the names --profile and remarks
// show for the kernels the passes derive.
// SPDX-License-Identifier: Apache-2.0
#include "ir/LoopNames.h"

#include <gtest/gtest.h>

using opdc::ir::MaxUserLoopName;
using opdc::ir::userLoopName;

namespace {

TEST(LoopNames, SourceKernelsKeepTheirNames) {
  EXPECT_EQ(userLoopName("step"), "step");
  EXPECT_EQ(userLoopName("step2"), "step2");
  EXPECT_EQ(userLoopName("res_calc"), "res_calc");
}

TEST(LoopNames, DerivedKernelsNameTheirSource) {
  EXPECT_EQ(userLoopName("step.b"), "step (adjoint)");
  EXPECT_EQ(userLoopName("step.b2"), "step (adjoint)");
  EXPECT_EQ(userLoopName("step.bt3"), "step (adjoint)");
  EXPECT_EQ(userLoopName("flux.d"), "flux (tangent)");
  EXPECT_EQ(userLoopName("flux.d12"), "flux (tangent)");
  EXPECT_EQ(userLoopName("biggest.min2"), "biggest (adjoint)");
  EXPECT_EQ(userLoopName("apply.cg_r"), "apply (cg)");
  EXPECT_EQ(userLoopName("adjoint_copy_f64"), "copy (adjoint)");
  EXPECT_EQ(userLoopName("adjoint_zero_f64x4"), "zero (adjoint)");
  EXPECT_EQ(userLoopName("tangent_zero_f32"), "zero (tangent)");
  EXPECT_EQ(userLoopName("adjoint_axpy_f64p1m0"), "axpy (adjoint)");
  EXPECT_EQ(userLoopName("step.b.set"), "step (adjoint)");
  EXPECT_EQ(userLoopName("step.b2.keep"), "step (adjoint)");
  // A source kernel whose name looks like a made one stays as written.
  EXPECT_EQ(userLoopName("field_copy_f64"), "field_copy_f64");
}

TEST(LoopNames, FusedGroups) {
  EXPECT_EQ(userLoopName("a+b"), "a+b (fused)");
  EXPECT_EQ(userLoopName("a+b.2"), "a+b (fused)");
  EXPECT_EQ(userLoopName("adjoint_copy_f64+adjoint_copy_f64+adjoint_copy_f64"),
            "copy (adjoint) x3 (fused)");
  EXPECT_EQ(userLoopName("step.b+adjoint_zero_f64"),
            "step (adjoint)+zero (adjoint) (fused)");
}

TEST(LoopNames, LongGroupsAreCut) {
  std::string name;
  for (int i = 0; i < 12; ++i)
    name +=
        (name.empty() ? "" : "+") + std::string("kernel_") + std::to_string(i);
  std::string shown = userLoopName(name);
  EXPECT_LE(shown.size(), MaxUserLoopName);
  EXPECT_EQ(shown.rfind("kernel_0+kernel_1+", 0), 0u) << shown;
  EXPECT_NE(shown.find(" more (fused)"), std::string::npos) << shown;
}

} // namespace
