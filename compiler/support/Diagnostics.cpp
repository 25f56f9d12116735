// Diagnostics.cpp - Clang-style error, warning, note and remark reporting.
// SPDX-License-Identifier: Apache-2.0
#include "support/Diagnostics.h"

#include "support/SourceManager.h"

#include "llvm/Support/SourceMgr.h"

namespace opdc {

DiagnosticEngine::DiagnosticEngine(SourceManager &sm, llvm::raw_ostream &os)
    : sm(sm), os(os) {}

void DiagnosticEngine::print(SourceRange where, int kind,
                             const llvm::Twine &message) {
  auto k = static_cast<llvm::SourceMgr::DiagKind>(kind);
  if (!where.valid()) {
    // No location (command line, whole program): "opdc: error: ...".
    const char *label = k == llvm::SourceMgr::DK_Error     ? "error"
                        : k == llvm::SourceMgr::DK_Warning ? "warning"
                        : k == llvm::SourceMgr::DK_Remark  ? "remark"
                                                           : "note";
    os << "opdc: " << label << ": " << message << "\n";
    return;
  }
  llvm::SmallVector<llvm::SMRange, 1> ranges;
  // A one-character range is already shown by the caret; wider ones get '~'.
  if (where.end.getPointer() > where.begin.getPointer() + 1)
    ranges.push_back(where.toSMRange());
  sm.llvm().PrintMessage(os, where.begin, k, message, ranges);
}

void DiagnosticEngine::internalError(SourceRange where,
                                     const llvm::Twine &message) {
  ++internalErrors;
  error(where, "internal compiler error: " + message +
                   "\nplease report this as a bug of opdc with the input "
                   "that caused it");
}

void DiagnosticEngine::error(SourceRange where, const llvm::Twine &message) {
  ++errors;
  if (errors > errorLimit) {
    lastDropped = true;
    if (!limitReported) {
      limitReported = true;
      os << "opdc: fatal error: too many errors emitted, stopping now\n";
    }
    return;
  }
  lastDropped = false;
  print(where, llvm::SourceMgr::DK_Error, message);
}

void DiagnosticEngine::warning(SourceRange where, const llvm::Twine &message,
                               llvm::StringRef flag) {
  if (disabled.count(flag.str())) {
    lastDropped = true;
    return;
  }
  if (werror) {
    error(where, message + " [-Werror," + "-W" + flag + "]");
    return;
  }
  ++warnings;
  lastDropped = false;
  print(where, llvm::SourceMgr::DK_Warning, message + " [-W" + flag + "]");
}

void DiagnosticEngine::note(SourceRange where, const llvm::Twine &message) {
  if (lastDropped)
    return;
  print(where, llvm::SourceMgr::DK_Note, message);
}

void DiagnosticEngine::remark(SourceRange where, const llvm::Twine &message,
                              llvm::StringRef pass) {
  if (!remarksEnabled(pass))
    return;
  lastDropped = false;
  print(where, llvm::SourceMgr::DK_Remark, message);
}

} // namespace opdc
