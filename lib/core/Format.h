// Format.h - Shortest round-trip formatting of floats and param values.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_LIB_CORE_FORMAT_H
#define OPDC_LIB_CORE_FORMAT_H

#include <string>

namespace opdc::rt {

/// The shortest "%.{1..17}g" text that strtod reads back to `v`, with ".0"
/// appended to integral values ("3.0", "-0.0", "0.1", "1e-05"); "inf",
/// "-inf", "nan".
std::string formatF64(double v);
/// As formatF64 with float precision (strtof round trip, up to 9 digits).
std::string formatF32(float v);

} // namespace opdc::rt
#endif
