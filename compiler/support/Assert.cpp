// Assert.cpp - Internal compiler error reporting.
// SPDX-License-Identifier: Apache-2.0
#include "support/Assert.h"

#include <cstdio>
#include <cstdlib>

namespace opdc {
void reportInternalError(const char *why, const char *file, int line) {
  std::fprintf(stderr,
               "internal compiler error: %s (%s:%d)\nplease report this as a "
               "bug of opdc with the input that caused it\n",
               why, file, line);
  // Exit status 70 (EX_SOFTWARE) tells scripts "compiler bug", distinct from
  // 1 (errors in the program) and 2 (bad command line).
  std::fflush(stderr);
  std::_Exit(70);
}
} // namespace opdc
