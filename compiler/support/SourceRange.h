// SourceRange.h - A half-open range of bytes in a buffer held by a SourceManager.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_SUPPORT_SOURCERANGE_H
#define OPDC_SUPPORT_SOURCERANGE_H

#include "llvm/Support/SMLoc.h"

namespace opdc {

/// [begin, end) as pointers into a buffer owned by the SourceManager. A
/// default-constructed range is invalid and prints without a location.
struct SourceRange {
  llvm::SMLoc begin;
  llvm::SMLoc end;

  SourceRange() = default;
  SourceRange(llvm::SMLoc b, llvm::SMLoc e) : begin(b), end(e) {}
  explicit SourceRange(llvm::SMLoc at) : begin(at), end(at) {}

  bool valid() const { return begin.isValid(); }
  /// The smallest range covering both; an invalid side is ignored.
  static SourceRange join(SourceRange a, SourceRange b) {
    if (!a.valid())
      return b;
    if (!b.valid())
      return a;
    return {a.begin.getPointer() < b.begin.getPointer() ? a.begin : b.begin,
            a.end.getPointer() > b.end.getPointer() ? a.end : b.end};
  }
  llvm::SMRange toSMRange() const { return llvm::SMRange(begin, end); }
};

} // namespace opdc
#endif
