// ColumnValuesTest.cpp - Which kernel values a block loop computes once per
// column (analysis/ColumnValues.h).
// SPDX-License-Identifier: Apache-2.0
#include "analysis/ColumnValues.h"

#include "LowerTestHelpers.h"
#include "ir/IR.h"

#include <gtest/gtest.h>

using namespace opdc;

namespace {

const char *Source = R"(program columns
param dx: f64 = 0.1
block grid[2]
stencil point = [(0, 0)]
dat u, v: grid f64 size [8, 8]
kernel populate(u: out f64 @ point) {
  let x = dx * f64(idx(0) - 1)
  let s = sin(x)
  let c = cos(f64(idx(1)))
  u(0, 0) = s * c + exp(x) * 0.5 + sqrt(x)
}
kernel none(u: out f64 @ point, v: f64 @ point) {
  var w = f64(idx(0))
  w = w * 2.0
  let k = idx(0) / 2
  let a = sin(w) + log(f64(k)) + tan(f64(idx(0) + idx(1))) + atan(v(0, 0))
  if idx(1) > 2 {
    u(0, 0) = a + erf(f64(idx(0)))
  } else {
    u(0, 0) = a + sin(dx)
  }
}
kernel guarded(u: out f64 @ point) {
  u(0, 0) = select(idx(1) > 2, exp(f64(idx(0))), 0.0) + cos(f64(idx(0)))
}
main {
  loop populate over grid (u)
  loop none over grid (u, v)
  loop guarded over grid (u)
}
)";

struct Fixture : sematest::Lowered {
  Fixture() : sematest::Lowered(Source) {}
  const ir::Function &kernel(const std::string &name) const {
    if (const ir::Function *f = function(name))
      return *f;
    ADD_FAILURE() << name;
    return *ir->functions().front();
  }
};

TEST(ColumnValues, LibraryCallsOfIdx0Alone) {
  Fixture l;
  ASSERT_TRUE(l.ir);
  const ir::Function &k = l.kernel("populate");
  ColumnValues cols = findColumnValues(k, 2, false);
  // sin(x) (the let s) and exp(x) * 0.5; not cos(idx(1)), not sqrt(x)
  // (no library call), and the let x they read.
  ASSERT_EQ(cols.values.size(), 2u);
  EXPECT_EQ(cols.values[0]->kind, ir::ExprKind::Intrinsic);
  EXPECT_EQ(cols.values[1]->kind, ir::ExprKind::Binary);
  ASSERT_EQ(cols.decls.size(), 1u);
  EXPECT_EQ(k.vars[cols.decls[0]->slot].name, "x");
  // -ffp-contract=fast: the calls themselves.
  ColumnValues calls = findColumnValues(k, 2, true);
  ASSERT_EQ(calls.values.size(), 2u);
  EXPECT_EQ(calls.values[1]->kind, ir::ExprKind::Intrinsic);
  // A 1D loop has no rows to share them.
  EXPECT_TRUE(findColumnValues(k, 1, false).empty());
}

TEST(ColumnValues, NotOfVarsDivisionsArgumentsBranchesOrNoIdx) {
  Fixture l;
  ASSERT_TRUE(l.ir);
  EXPECT_TRUE(findColumnValues(l.kernel("none"), 2, false).empty());
}

TEST(ColumnValues, SelectArmsOnlyWhole) {
  Fixture l;
  ASSERT_TRUE(l.ir);
  // exp() in a select's arm may not run; cos(idx(0)) always does.
  ColumnValues cols = findColumnValues(l.kernel("guarded"), 2, false);
  ASSERT_EQ(cols.values.size(), 1u);
  EXPECT_EQ(cols.values[0]->kind, ir::ExprKind::Intrinsic);
}

} // namespace
