// RuntimeMapping.h - IR values as the runtime's C ABI spells them.
// SPDX-License-Identifier: Apache-2.0
//
// What every backend hands to lib/include/opd_rt.h in the same form: the
// opd_scalar, opd_access and opd_arg_kind values of IR enums, and the
// constant part of a loop argument's opd_arg entry. This folder holds what
// is shared by every backend, with no backend's types in it; a backend
// calls it and never keeps its own copy. The ABI's values come from
// opd_rt.h itself, so compiler and runtime cannot disagree on them.
#ifndef OPDC_CODEGEN_COMMON_RUNTIMEMAPPING_H
#define OPDC_CODEGEN_COMMON_RUNTIMEMAPPING_H

#include "analysis/LoopAccess.h"
#include "ir/IR.h"

#include <array>
#include <cstdint>

namespace opdc {

/// The opd_scalar value (OPD_F64, ..., OPD_STR) of a dat or param element
/// type.
int runtimeScalar(const Type &t);
/// The opd_arg_kind value (OPD_ARG_DIRECT, ...) of \p k.
int runtimeKind(ir::ArgKind k);
/// The opd_access value (OPD_READ, ..., OPD_SUM) of \p m.
int runtimeMode(ir::AccessMode m);

/// OPD_XSUM_WORDS: 64-bit words of one exact accumulator (-frepro-sum).
int64_t runtimeXsumWords();
/// OPD_RT_ABI_VERSION of the opd_rt.h opdc was built with: generated code
/// passes it to opd_rt_check_abi first.
int32_t runtimeAbiVersion();

/// The fields of an opd_arg that are known at compile time; the dat and
/// map handles are filled in before each call.
struct RuntimeArgEntry {
  int32_t idx = 0;   ///< indirect: the map index; 0 otherwise
  int32_t kind = 0;  ///< opd_arg_kind
  int32_t mode = 0;  ///< opd_access
  int32_t bytes = 0; ///< bytes per element
  /// Stencil arguments: the least and greatest offset per dimension (0 for
  /// unused dimensions and other kinds).
  std::array<int32_t, 3> lo{}, hi{};
  int32_t flags = 0; ///< OPD_STENCIL_DIAGONAL, OPD_ARG_ATOMIC
};

/// The opd_arg entry of loop argument \p a, whose analysis is \p access.
/// \p atomicIncrements: the backend adds the loop's indirect increments
/// atomically (they get OPD_ARG_ATOMIC: the runtime builds no colouring
/// plan for them).
RuntimeArgEntry runtimeArgEntry(const ir::AccessDescriptor &a,
                                const ArgAccess &access,
                                bool atomicIncrements = false);

} // namespace opdc
#endif
