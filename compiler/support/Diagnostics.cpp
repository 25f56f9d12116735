// Diagnostics.cpp - Clang-style error, warning, note and remark reporting.
// SPDX-License-Identifier: Apache-2.0
#include "support/Diagnostics.h"

#include "support/SourceManager.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"

namespace opdc {

DiagnosticEngine::DiagnosticEngine(SourceManager &sm, llvm::raw_ostream &os)
    : sm(sm), os(os) {}

static const char *severityName(llvm::SourceMgr::DiagKind k) {
  return k == llvm::SourceMgr::DK_Error     ? "error"
         : k == llvm::SourceMgr::DK_Warning ? "warning"
         : k == llvm::SourceMgr::DK_Remark  ? "remark"
                                            : "note";
}

// One object per line (JSON Lines), so that a reader can act on each
// diagnostic as it comes and a crash mid-way leaves the lines before it
// readable. Lines and columns are 1-based; columns count bytes, as in the
// text form; the end is one past the range's last character.
void DiagnosticEngine::printJSON(SourceRange where, int kind,
                                 const std::string &message,
                                 llvm::StringRef flag) {
  auto k = static_cast<llvm::SourceMgr::DiagKind>(kind);
  llvm::json::Object o;
  o["severity"] = severityName(k);
  o["message"] = message;
  if (k == llvm::SourceMgr::DK_Error)
    o["internal"] =
        llvm::StringRef(message).starts_with("internal compiler error:");
  if (!flag.empty())
    o["option"] = flag.str();
  if (where.valid()) {
    unsigned buf = sm.bufferOf(where.begin);
    auto [line, col] = sm.lineAndColumn(where.begin);
    auto [endLine, endCol] = sm.lineAndColumn(where.end);
    if (where.end.getPointer() <= where.begin.getPointer())
      std::tie(endLine, endCol) = std::make_pair(line, col + 1);
    o["file"] = sm.bufferName(buf).str();
    o["line"] = line;
    o["column"] = col;
    o["end_line"] = endLine;
    o["end_column"] = endCol;
  } else {
    o["file"] = nullptr;
  }
  os << llvm::json::Value(std::move(o)) << "\n";
  os.flush();
}

void DiagnosticEngine::print(SourceRange where, int kind,
                             const llvm::Twine &message, llvm::StringRef flag) {
  auto k = static_cast<llvm::SourceMgr::DiagKind>(kind);
  if (json) {
    printJSON(where, kind, message.str(), flag);
    return;
  }
  if (!flag.empty()) {
    print(where, kind, message + " [" + flag + "]");
    return;
  }
  if (!where.valid()) {
    // No location (command line, whole program): "opdc: error: ...".
    const char *label = severityName(k);
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
  reportError(where, message, {});
}

void DiagnosticEngine::reportError(SourceRange where,
                                   const llvm::Twine &message,
                                   llvm::StringRef option) {
  ++errors;
  if (errors > errorLimit) {
    lastDropped = true;
    if (!limitReported) {
      limitReported = true;
      if (json)
        printJSON({}, llvm::SourceMgr::DK_Error,
                  "too many errors emitted, stopping now", {});
      else
        os << "opdc: fatal error: too many errors emitted, stopping now\n";
    }
    return;
  }
  lastDropped = false;
  print(where, llvm::SourceMgr::DK_Error, message, option);
}

void DiagnosticEngine::warning(SourceRange where, const llvm::Twine &message,
                               llvm::StringRef flag) {
  if (disabled.count(flag.str())) {
    lastDropped = true;
    return;
  }
  if (werror) {
    reportError(where, message, ("-Werror,-W" + flag).str());
    return;
  }
  ++warnings;
  lastDropped = false;
  print(where, llvm::SourceMgr::DK_Warning, message, ("-W" + flag).str());
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
