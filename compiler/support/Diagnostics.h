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
  /// JSON output (--diagnostics-format=json): each diagnostic is printed as
  /// one JSON object on a line of its own instead of the text form; the
  /// schema is in opdc(1).
  void setJSON(bool on) { json = on; }
  bool isJSON() const { return json; }
  /// After this many errors, further ones are counted but not printed and a
  /// single "too many errors" line is shown (keeps fuzzed input readable).
  void setErrorLimit(unsigned n) { errorLimit = n; }

  unsigned errorCount() const { return errors; }
  unsigned warningCount() const { return warnings; }
  bool hasErrors() const { return errors != 0; }
  bool hasInternalErrors() const { return internalErrors != 0; }

  SourceManager &sources() { return sm; }

private:
  /// \p option: the warning option that reports it ("-Wunused-dat",
  /// "-Werror,-Wunused-dat"), shown in brackets after the text.
  void print(SourceRange where, int kind, const llvm::Twine &message,
             llvm::StringRef option = {});
  void reportError(SourceRange where, const llvm::Twine &message,
                   llvm::StringRef option);
  void printJSON(SourceRange where, int kind, const std::string &message,
                 llvm::StringRef flag);

  SourceManager &sm;
  llvm::raw_ostream &os;
  std::set<std::string> disabled, remarks;
  unsigned errors = 0, warnings = 0, internalErrors = 0, errorLimit = 50;
  bool werror = false;
  bool json = false;
  bool lastDropped = false;
  bool limitReported = false;
};

} // namespace opdc
#endif
