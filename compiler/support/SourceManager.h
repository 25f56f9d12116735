// SourceManager.h - Owns every source buffer the compiler reads.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_SUPPORT_SOURCEMANAGER_H
#define OPDC_SUPPORT_SOURCEMANAGER_H

#include "support/SourceRange.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SourceMgr.h"

#include <optional>
#include <string>

namespace opdc {

/// Thin owner around llvm::SourceMgr: buffers stay alive (and SMLoc pointers
/// into them valid) for the whole compilation.
class SourceManager {
public:
  /// Reads \p path; on failure returns nullopt and sets \p error to the
  /// system's reason ("No such file or directory").
  std::optional<unsigned> loadFile(const std::string &path,
                                   std::string &error);
  /// Adds an in-memory buffer (tests, fuzzing); \p name is what messages show.
  unsigned addBuffer(llvm::StringRef text, llvm::StringRef name);

  llvm::StringRef bufferText(unsigned id) const;
  llvm::StringRef bufferName(unsigned id) const;
  /// The buffer containing \p loc, or 0 if none.
  unsigned bufferOf(llvm::SMLoc loc) const;
  /// 1-based line and byte column of \p loc.
  std::pair<unsigned, unsigned> lineAndColumn(llvm::SMLoc loc) const;
  /// "file:line:col" of \p loc (for IR printing and remarks).
  std::string describe(llvm::SMLoc loc) const;
  /// "name.opd:line:col" of \p loc, the file's name without its folders
  /// (what generated code and --emit=ir show); empty when \p loc is in no
  /// buffer.
  std::string shortLocation(llvm::SMLoc loc) const;

  llvm::SourceMgr &llvm() { return mgr; }
  const llvm::SourceMgr &llvm() const { return mgr; }

private:
  llvm::SourceMgr mgr;
};

} // namespace opdc
#endif
