// Parser.h - Entry point of the Flex/Bison front end.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_FRONTEND_PARSER_H
#define OPDC_FRONTEND_PARSER_H

#include "ast/AST.h"

#include <memory>

namespace opdc {
class DiagnosticEngine;
class SourceManager;

/// Parses buffer \p bufferId of \p sm into a module. Never returns null: on
/// syntax errors the module holds what was recovered, and every error has
/// been reported to \p diags (`unexpected ')', expecting identifier`).
/// Imports are recorded, not followed.
std::unique_ptr<ast::Module> parseModule(SourceManager &sm, unsigned bufferId,
                                         DiagnosticEngine &diags);
} // namespace opdc
#endif
