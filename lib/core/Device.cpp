// Device.cpp - Device-resident dats: the hooks a GPU backend registers.
// SPDX-License-Identifier: Apache-2.0
//
// One C ABI for both backends: the runtime keeps owning the exchange logic
// (who sends what, dirty bits, message order), and a backend with device
// copies (lib/cuda/opd_cuda.cuh) only moves bytes between its copies and
// the runtime's message buffers (core/Device.h). Boxes of block dats are
// handed over in local storage terms (opd_box), so the device side needs
// no knowledge of the decomposition.
#include "core/Device.h"

#include "core/Dist.h"
#include "core/Objects.h"
#include "core/Runtime.h"

#include <algorithm>

namespace opdc::rt {
namespace {
opd_device_hooks hooks{};
bool registered = false;

// [lo, hi) of a block dat as offset, counts and strides of its storage;
// false for an empty box.
bool localBox(const opd_dat *dat, const int64_t *lo, const int64_t *hi,
              opd_box &box) {
  box.offset = 0;
  for (int k = 0; k < 3; ++k) {
    box.count[k] = 1;
    box.stride[k] = dat->stride[k];
  }
  for (int k = 0; k < dat->ndims; ++k) {
    box.count[k] = std::max<int64_t>(0, hi[k] - lo[k]);
    box.offset += (lo[k] - dat->first[k]) * dat->stride[k];
  }
  return box.count[0] > 0 && box.count[1] > 0 && box.count[2] > 0;
}
} // namespace

void deviceRelease() {
  if (registered && hooks.release)
    hooks.release();
}

bool devicePack(opd_dat *dat, const int32_t *elems, int64_t n, void *buf) {
  return registered && n > 0 && hooks.pack && hooks.pack(dat, elems, n, buf);
}

void deviceUnpack(opd_dat *dat, const int32_t *elems, int64_t n,
                  const void *buf) {
  if (registered && n > 0 && hooks.unpack)
    hooks.unpack(dat, elems, n, buf);
}

bool devicePackBox(opd_dat *dat, const int64_t *lo, const int64_t *hi,
                   void *buf) {
  opd_box box;
  return registered && hooks.pack_box && localBox(dat, lo, hi, box) &&
         hooks.pack_box(dat, &box, buf);
}

void deviceUnpackBox(opd_dat *dat, const int64_t *lo, const int64_t *hi,
                     const void *buf) {
  opd_box box;
  if (registered && hooks.unpack_box && localBox(dat, lo, hi, box))
    hooks.unpack_box(dat, &box, buf);
}

} // namespace opdc::rt

extern "C" {

void opd_rt_device_hooks(const opd_device_hooks *h) {
  opdc::rt::registered = h != nullptr;
  opdc::rt::hooks = h ? *h : opd_device_hooks{};
}

int opd_rt_node_rank(void) { return opdc::rt::dist::nodeRank(); }

int64_t opd_set_local_size(const opd_set *set) { return set ? set->size : 0; }

int opd_rt_device_sync(void) {
  return opdc::rt::profileRequested() ||
         opdc::rt::envSwitch("OPD_DEVICE_SYNC", false);
}

int opd_rt_device_stage(void) {
  return opdc::rt::envSwitch("OPD_CUDA_STAGE", true);
}

} // extern "C"
