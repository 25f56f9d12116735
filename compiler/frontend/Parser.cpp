// Parser.cpp - Entry point of the Flex/Bison front end.
// SPDX-License-Identifier: Apache-2.0
#include "frontend/Parser.h"

#include "frontend/ParseDriver.h"

namespace opdc {

std::unique_ptr<ast::Module> parseModule(SourceManager &sm, unsigned bufferId,
                                         DiagnosticEngine &diags) {
  ParseDriver driver(sm, bufferId, diags);
  return driver.parse();
}

} // namespace opdc
