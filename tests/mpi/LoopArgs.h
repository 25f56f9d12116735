// LoopArgs.h - an argument of a loop that a test runs by hand through the
// runtime's C API (opd_loop_prepare and its phases), shared by the MPI
// runtime tests so that each builds its opd_arg the one way.
#pragma once

#include "core/Objects.h"

#include <cstdint>

namespace opdc::rt::test {
/// The argument `mode` of `dat` (through entry `idx` of `map` when
/// indirect). Its bytes an element are the dat's, or 8 for a reduction
/// without a dat (one f64), unless `bytes` says otherwise.
inline opd_arg arg(opd_dat *dat, opd_map *map, int32_t idx, int32_t kind,
                   int32_t mode, int bytes = 0) {
  opd_arg a{};
  a.dat = dat;
  a.map = map;
  a.idx = idx;
  a.kind = kind;
  a.mode = mode;
  a.bytes = bytes ? bytes : dat ? int(dat->elementBytes()) : 8;
  return a;
}
} // namespace opdc::rt::test
