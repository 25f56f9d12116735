// SumOnceTest.cpp - Which kernels add to a sum argument at most once an
// element (analysis/SumOnce.h).
// SPDX-License-Identifier: Apache-2.0
#include "analysis/SumOnce.h"

#include "LowerTestHelpers.h"
#include "ir/IR.h"

#include <gtest/gtest.h>

using namespace opdc;

namespace {

const char *Source = R"(program sums
set cells size 10
dat a: cells f64
dat v: cells f64[2]
kernel once(a: f64, s: sum f64) { s += a * a }
kernel branch(a: f64, s: sum f64) {
  if a > 0.5 { s += a }
}
kernel twice(a: f64, s: sum f64) {
  s += a
  s += a * a
}
kernel arms(a: f64, s: sum f64) {
  if a > 0.5 { s += a } else { s += 1.0 }
}
kernel looped(a: f64, s: sum f64) {
  for i in 0..3 { s += a }
}
kernel parts(v: f64[2], s: sum f64[2]) {
  s[0] += v[0]
  s[1] += v[1]
}
kernel part0(v: f64[2], s: sum f64[2]) {
  s[0] += v[0]
  s[0] += v[1]
}
main {
  var s = 0.0
  var t = [0.0, 0.0]
  loop once over cells (a, s)
  loop branch over cells (a, s)
  loop twice over cells (a, s)
  loop arms over cells (a, s)
  loop looped over cells (a, s)
  loop parts over cells (v, t)
  loop part0 over cells (v, t)
  print(s, t[0])
}
)";

struct Fixture : sematest::Lowered {
  Fixture() : sematest::Lowered(Source) {}
  const ir::Function *kernel(const std::string &name) const {
    return function(name);
  }
  bool once(const std::string &name) const {
    const ir::Function *k = kernel(name);
    EXPECT_NE(k, nullptr) << name;
    return k && addsAtMostOnce(*k, 1);
  }
};

TEST(SumOnce, OneAdditionOrNoneOnEveryPath) {
  Fixture l;
  ASSERT_TRUE(l.ir);
  EXPECT_TRUE(l.once("once"));
  EXPECT_TRUE(l.once("branch")); // none where the branch is not taken
  EXPECT_TRUE(l.once("parts"));  // one for each component
  EXPECT_FALSE(l.once("twice"));
  EXPECT_FALSE(l.once("arms")); // one on each path, but two statements
  EXPECT_FALSE(l.once("looped"));
  EXPECT_FALSE(l.once("part0"));
  // The other argument is not a sum: it is read.
  EXPECT_FALSE(addsAtMostOnce(*l.kernel("once"), 0));
}

} // namespace
