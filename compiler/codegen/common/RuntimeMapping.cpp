// RuntimeMapping.cpp - IR values as the runtime's C ABI spells them.
// SPDX-License-Identifier: Apache-2.0
#include "codegen/common/RuntimeMapping.h"

#include "opd_rt.h"

namespace opdc {

using namespace ir;

static_assert(MaxLoopDims == 3, "opd_arg holds three dimensions");

int64_t runtimeXsumWords() { return OPD_XSUM_WORDS; }

int32_t runtimeAbiVersion() { return OPD_RT_ABI_VERSION; }

int runtimeScalar(const Type &t) {
  if (t.isString())
    return OPD_STR;
  switch (t.scalar) {
  case ScalarKind::Bool:
    return OPD_BOOL;
  case ScalarKind::I32:
    return OPD_I32;
  case ScalarKind::I64:
    return OPD_I64;
  case ScalarKind::F32:
    return OPD_F32;
  case ScalarKind::F64:
    return OPD_F64;
  }
  return OPD_F64;
}

int runtimeKind(ArgKind k) {
  switch (k) {
  case ArgKind::Direct:
    return OPD_ARG_DIRECT;
  case ArgKind::Indirect:
    return OPD_ARG_INDIRECT;
  case ArgKind::Stencil:
    return OPD_ARG_STENCIL;
  case ArgKind::MapDirect:
    return OPD_ARG_MAP;
  case ArgKind::GlobalRead:
    return OPD_ARG_GLOBAL;
  case ArgKind::Reduction:
    return OPD_ARG_REDUCTION;
  }
  return OPD_ARG_DIRECT;
}

int runtimeMode(AccessMode m) {
  switch (m) {
  case AccessMode::Read:
    return OPD_READ;
  case AccessMode::Write:
    return OPD_WRITE;
  case AccessMode::ReadWrite:
    return OPD_RW;
  case AccessMode::Inc:
    return OPD_INC;
  case AccessMode::Min:
    return OPD_MIN;
  case AccessMode::Max:
    return OPD_MAX;
  case AccessMode::Sum:
    return OPD_SUM;
  }
  return OPD_READ;
}

RuntimeArgEntry runtimeArgEntry(const AccessDescriptor &a,
                                const ArgAccess &access,
                                bool atomicIncrements) {
  RuntimeArgEntry e;
  e.idx = a.kind == ArgKind::Indirect ? a.mapIndex : 0;
  e.kind = runtimeKind(a.kind);
  e.mode = runtimeMode(a.mode);
  e.bytes = int32_t(a.bytes);
  // The runtime sizes halo exchanges from the stencil's reach; other kinds
  // read their own element only.
  if (a.kind == ArgKind::Stencil) {
    for (unsigned d = 0; d < MaxLoopDims; ++d) {
      e.lo[d] = int32_t(access.lo[d]);
      e.hi[d] = int32_t(access.hi[d]);
    }
    if (access.diagonal)
      e.flags |= OPD_STENCIL_DIAGONAL;
  }
  if (atomicIncrements && access.indirectInc)
    e.flags |= OPD_ARG_ATOMIC;
  return e;
}

} // namespace opdc
