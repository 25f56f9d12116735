// LowerTestHelpers.h - A program given as text, checked and lowered to IR,
// for the unit tests of the IR analyses (LoopChainTest.cpp,
// LoopChainSetLayersTest.cpp).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "SemaTestHelpers.h"

#include "ir/IR.h"
#include "lower/Lower.h"

#include <gtest/gtest.h>

#include <memory>

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
};

} // namespace opdc::sematest
