// Identities.h - Start values of reduction partials and increment buffers.
// SPDX-License-Identifier: Apache-2.0
//
// Shared by every backend (see RuntimeMapping.h): which value a private
// accumulator starts from, named without any backend's constant types; a
// backend turns the name into its own constant.
#ifndef OPDC_CODEGEN_COMMON_IDENTITIES_H
#define OPDC_CODEGEN_COMMON_IDENTITIES_H

#include "ir/IR.h"

#include <cstdint>

namespace opdc {

/// A start value, in the scalar type of the accumulator it initialises.
enum class IdentityValue : uint8_t {
  Zero,         ///< 0 or +0.0
  NegativeZero, ///< -0.0 (floats only)
  PlusInf,      ///< +infinity (floats only)
  MinusInf,     ///< -infinity (floats only)
  IntMax,       ///< the largest value of a signed integer type
  IntMin,       ///< the smallest value of a signed integer type
};

/// The start of each chunk's partial of a reduction with mode \p m (Sum,
/// Min or Max) over scalars \p k: zero for sums, +inf or the largest
/// integer for min, -inf or the smallest integer for max.
IdentityValue reductionIdentity(ir::AccessMode m, ScalarKind k);

/// The start of a private buffer that collects a kernel's increments before
/// they are added to the dat: -0.0 for floats, since -0.0 + f is f for every
/// f (+0.0 would turn f = -0.0 into +0.0); 0 for integers.
IdentityValue incrementIdentity(ScalarKind k);

} // namespace opdc
#endif
