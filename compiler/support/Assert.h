// Assert.h - Internal compiler error reporting (never for user errors).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_SUPPORT_ASSERT_H
#define OPDC_SUPPORT_ASSERT_H

namespace opdc {
/// Prints "internal compiler error: <why> (file:line)" and aborts.
[[noreturn]] void reportInternalError(const char *why, const char *file,
                                      int line);
} // namespace opdc

#define OPDC_ASSERT(cond, why)                                                 \
  do {                                                                         \
    if (!(cond))                                                               \
      ::opdc::reportInternalError(why, __FILE__, __LINE__);                    \
  } while (false)

#define OPDC_UNREACHABLE(why) ::opdc::reportInternalError(why, __FILE__, __LINE__)

#endif
