// no_thp_shim.c - An LD_PRELOAD shim that makes madvise(MADV_HUGEPAGE) a
// no-op, so that a program built by opdc runs on 4 KiB pages only: the
// other side of bench/adjoint/README.md's huge-page figures.
// SPDX-License-Identifier: Apache-2.0
//
//   LD_PRELOAD=build/bench/libopd-no-thp-shim.so ./heat3d_bench --reps=1 --profile
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <sys/mman.h>

int madvise(void *addr, size_t length, int advice) {
  static int (*real)(void *, size_t, int);
  if (!real)
    real = (int (*)(void *, size_t, int))dlsym(RTLD_NEXT, "madvise");
#ifdef MADV_HUGEPAGE
  if (advice == MADV_HUGEPAGE)
    return 0;
#endif
  return real ? real(addr, length, advice) : -1;
}
