// first_touch.c - Time the first and the second write of a fresh buffer,
// with and without transparent huge pages asked for (madvise
// MADV_HUGEPAGE, as lib/core/Memory.cpp does for buffers of 4 MiB and
// more): what a one-shot adjoint pays to touch its snapshot budget.
// SPDX-License-Identifier: Apache-2.0
//
//   build/bench/opd-first-touch MIB HUGE     (HUGE: 1 ask for huge pages, 0 not)
//
// Prints the first touch's seconds and GB/s, then the second's. With the
// kernel's transparent_hugepage/defrag at `madvise`, a fault in an advised
// buffer compacts memory until a 2 MiB page is free: run it a few times,
// the figure depends on how fragmented the machine's memory is.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s MIB HUGE(0|1)\n", argv[0]);
    return 2;
  }
  const size_t bytes = (size_t)strtoul(argv[1], NULL, 10) << 20;
  const int huge = atoi(argv[2]);
  if (bytes == 0) {
    fprintf(stderr, "%s: error: MIB must be a positive whole number\n", argv[0]);
    return 2;
  }
  const size_t align = (size_t)2 << 20;
  char *p = aligned_alloc(align, (bytes + align - 1) / align * align);
  if (!p) {
    fprintf(stderr, "%s: error: cannot allocate %zu MiB\n", argv[0], bytes >> 20);
    return 1;
  }
#ifdef MADV_HUGEPAGE
  if (huge)
    madvise(p, bytes, MADV_HUGEPAGE);
#endif
  double t0 = now();
  memset(p, 1, bytes);
  double t1 = now();
  memset(p, 2, bytes);
  double t2 = now();
  printf("%s %zu MiB: first touch %.3f s (%.2f GB/s), second %.3f s (%.2f GB/s)\n",
         huge ? "huge pages" : "4 KiB pages", bytes >> 20, t1 - t0,
         (double)bytes / (t1 - t0) / 1e9, t2 - t1, (double)bytes / (t2 - t1) / 1e9);
  free(p);
  return 0;
}
