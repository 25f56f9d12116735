// Identities.cpp - Start values of reduction partials and increment buffers.
// SPDX-License-Identifier: Apache-2.0
#include "codegen/common/Identities.h"

namespace opdc {

using namespace ir;

IdentityValue reductionIdentity(AccessMode m, ScalarKind k) {
  if (m == AccessMode::Sum)
    return IdentityValue::Zero;
  bool isMin = m == AccessMode::Min;
  if (isFloat(k))
    return isMin ? IdentityValue::PlusInf : IdentityValue::MinusInf;
  return isMin ? IdentityValue::IntMax : IdentityValue::IntMin;
}

IdentityValue incrementIdentity(ScalarKind k) {
  return isFloat(k) ? IdentityValue::NegativeZero : IdentityValue::Zero;
}

} // namespace opdc
