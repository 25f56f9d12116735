// Fill.cpp - opd_dat_fill: every element of a dat set to one value.
// SPDX-License-Identifier: Apache-2.0
//
// Why here and not with the other dat calls (core/Mesh.cpp): a fill runs
// on the runtime's threads in the chunks a direct loop has (core/Pool.h),
// and core/, the runtime's ground floor, includes nothing of exec/.
#include "core/Dist.h"
#include "core/Objects.h"
#include "core/Pool.h"
#include "core/Runtime.h"

#include "opd_rt.h"

#include <cstdint>
#include <cstring>

using namespace opdc::rt;

extern "C" {

void opd_dat_fill(opd_dat *dat, const void *elem) {
  dist::settleExchanges();
  const int64_t eb = dat->elementBytes();
  char *p = static_cast<char *>(dat->data);
  const int64_t n = dat->elements;
  bool zero = true;
  for (int64_t b = 0; b < eb; ++b)
    zero = zero && static_cast<const char *>(elem)[b] == 0;
  const int64_t chunks = (n + DirectChunkSize - 1) / DirectChunkSize;
  // On the runtime's threads (core/Pool.h), as loops run.
  runTasks(chunks, double(n * eb) >= parallelBytes(), [&](int64_t c) {
    int64_t begin = c * DirectChunkSize;
    int64_t end = begin + DirectChunkSize < n ? begin + DirectChunkSize : n;
    if (zero) {
      std::memset(p + begin * eb, 0, std::size_t((end - begin) * eb));
      return;
    }
    for (int64_t i = begin; i < end; ++i)
      std::memcpy(p + i * eb, elem, std::size_t(eb));
  });
  // Every rank filled its halos with the same value.
  dat->haloValid = INT64_MAX / 4;
  dat->cornersValid = true;
}

} // extern "C"
