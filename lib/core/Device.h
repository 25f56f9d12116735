// Device.h - The runtime's side of device-resident dats (opd_rt_device_hooks).
// SPDX-License-Identifier: Apache-2.0
//
// A GPU backend keeps dats in device memory and registers hooks
// (opd_rt.h, "Device copies"); the runtime calls them where it reads or
// writes dat storage behind the generated code's back: halo messages
// (packed from the device copy when it is newer, unpacked into it as well
// as into host memory) and the moves of the partition or renumbering
// (after which every device copy is dropped). Without registered hooks
// each call does nothing (CPU programs).
#ifndef OPDC_LIB_CORE_DEVICE_H
#define OPDC_LIB_CORE_DEVICE_H

#include "opd_rt.h"

#include <cstdint>

namespace opdc::rt {
/// Before the runtime moves or renumbers the storage of sets, maps and
/// dats: host memory made current, device copies dropped.
void deviceRelease();
/// Elements `elems[0..n)` of set dat `dat` into `buf` (element-contiguous)
/// from the device copy when that is newer; false: host memory is current,
/// the caller packs from it.
bool devicePack(opd_dat *dat, const int32_t *elems, int64_t n, void *buf);
/// After the runtime wrote `buf` into those elements of host memory: the
/// same values into the device copy (when there is one).
void deviceUnpack(opd_dat *dat, const int32_t *elems, int64_t n,
                  const void *buf);
/// The same for the global-index box [lo, hi) of a block dat (copyBox's
/// order: dimension 0 fastest).
bool devicePackBox(opd_dat *dat, const int64_t *lo, const int64_t *hi,
                   void *buf);
void deviceUnpackBox(opd_dat *dat, const int64_t *lo, const int64_t *hi,
                     const void *buf);
} // namespace opdc::rt
#endif
