// Diagnostics.h - Clang-style error, warning, note and remark reporting.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_SUPPORT_DIAGNOSTICS_H
#define OPDC_SUPPORT_DIAGNOSTICS_H

#include "support/SourceRange.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

#include <set>
#include <string>

namespace opdc {
class SourceManager;

/// Prints `file:line:col: error: message`, the source line and a caret with
/// `~` under the range, through llvm::SourceMgr. Collects: callers report
/// every problem they find and check hasErrors() at stage boundaries.
class DiagnosticEngine {
public:
  explicit DiagnosticEngine(SourceManager &sm,
                            llvm::raw_ostream &os = llvm::errs());

  void error(SourceRange where, const llvm::Twine &message);
  /// An error that is opdc's fault, not the program's (invalid IR after a
  /// pass, a construct lowering cannot handle): printed as
  /// "error: internal compiler error: <message>"; the driver then exits 70.
  void internalError(SourceRange where, const llvm::Twine &message);
  /// \p flag is the warning's name without "-W" (e.g. "unused-dat"); it is
  /// printed as [-Wflag]. Disabled flags are dropped; -Werror promotes.
  void warning(SourceRange where, const llvm::Twine &message,
               llvm::StringRef flag);
  /// Attached to the previous error or warning; dropped if that was dropped.
  void note(SourceRange where, const llvm::Twine &message);
  /// Printed only when \p pass was enabled with enableRemarks().
  void remark(SourceRange where, const llvm::Twine &message,
              llvm::StringRef pass);

  void setWarningsAsErrors(bool on) { werror = on; }
  void disableWarning(llvm::StringRef flag) { disabled.insert(flag.str()); }
  void enableRemarks(llvm::StringRef pass) { remarks.insert(pass.str()); }
  bool remarksEnabled(llvm::StringRef pass) const {
    return remarks.count(pass.str()) || remarks.count("all");
  }
  /// After this many errors, further ones are counted but not printed and a
  /// single "too many errors" line is shown (keeps fuzzed input readable).
  void setErrorLimit(unsigned n) { errorLimit = n; }

  unsigned errorCount() const { return errors; }
  unsigned warningCount() const { return warnings; }
  bool hasErrors() const { return errors != 0; }
  bool hasInternalErrors() const { return internalErrors != 0; }

  SourceManager &sources() { return sm; }

private:
  void print(SourceRange where, int kind, const llvm::Twine &message);

  SourceManager &sm;
  llvm::raw_ostream &os;
  std::set<std::string> disabled, remarks;
  unsigned errors = 0, warnings = 0, internalErrors = 0, errorLimit = 50;
  bool werror = false;
  bool lastDropped = false;
  bool limitReported = false;
};

} // namespace opdc
#endif
