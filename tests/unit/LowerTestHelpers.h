// LowerTestHelpers.h - A program given as text, checked and lowered to IR,
// for the unit tests of the IR analyses (LoopChainTest.cpp,
// LoopChainSetLayersTest.cpp, SumOnceTest.cpp, ColumnValuesTest.cpp).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "SemaTestHelpers.h"

#include "ir/IR.h"
#include "lower/Lower.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace opdc::sematest {

/// A program given as text, checked and lowered to IR.
struct Lowered {
  Checked checked;
  std::unique_ptr<ir::Program> ir;
  explicit Lowered(llvm::StringRef text) : checked(text) {
    EXPECT_TRUE(checked.ok) << checked.messages;
    if (checked.ok)
      ir = lowerProgram(*checked.prog, checked.diags);
  }
  /// The lowered function named \p name, or null.
  const ir::Function *function(const std::string &name) const {
    if (ir)
      for (const ir::Function *f : ir->functions())
        if (f->name == name)
          return f;
    return nullptr;
  }
};

} // namespace opdc::sematest
