// fault_cost.c - The seconds a GiB of fresh memory costs, each way a
// runtime could get it: what an adjoint's automatic plan weighs against
// re-running steps (lib/exec/Adjoint.cpp, planAutomatically).
// SPDX-License-Identifier: Apache-2.0
//
//   build/bench/opd-fault-cost [MIB] [ROUNDS] [WAYS]   (1024 MiB, 3, all)
//
// WAYS: a comma-separated list of the ways below (default all of them).
// Prints the machine (lscpu's model, the kernel's transparent huge page
// settings, free page reporting), then for each way, ROUNDS times, the
// seconds a GiB of its first write cost, and the huge pages the buffer
// got (AnonHugePages of /proc/self/smaps_rollup, as a share of it):
//
//   4k        mmap, MADV_NOHUGEPAGE, memset: a 4 KiB fault per page
//   thp       mmap on a 2 MiB boundary, MADV_HUGEPAGE, memset
//   populate  mmap MAP_POPULATE (4 KiB pages): faulted by the kernel in one
//             call, then memset (the write after, counted)
//   thp+pop   as thp, then MADV_POPULATE_WRITE, then memset
//   thp x2    as thp, the memset in two threads (a helper faulting ahead)
//   4k x2     as 4k, in two threads
//   rewrite   a second memset of a buffer already touched: the floor
//   reuse     unmapped, then the same size mapped and written again at once
//             (the pages the process just gave back, before the kernel's
//             free page reporting returns them to the host)
//   reuse 5s  the same after 5 s (after reporting, where the guest has it)
//
// Each buffer is unmapped, and 5 s pass, before the next way is timed. On a
// virtual machine the first write of guest memory the host never backed costs
// the host's faults too; run it twice and compare the rounds.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void show(const char *path) {
  FILE *f = fopen(path, "r");
  char line[512];
  if (!f) {
    printf("  %s: (none)\n", path);
    return;
  }
  if (fgets(line, sizeof line, f))
    printf("  %s: %s", path, line);
  fclose(f);
}

static void machine(void) {
  FILE *f = popen("lscpu | grep -E 'Model name|CPU family|^Model:|Hypervisor|"
                  "^CPU\\(s\\)|L2 cache|L3 cache'",
                  "r");
  char line[512];
  if (f) {
    while (fgets(line, sizeof line, f))
      printf("  %s", line);
    pclose(f);
  }
  show("/sys/kernel/mm/transparent_hugepage/enabled");
  show("/sys/kernel/mm/transparent_hugepage/defrag");
  f = fopen("/proc/cmdline", "r");
  if (f) {
    if (fgets(line, sizeof line, f)) {
      const char *r = strstr(line, "page_reporting");
      printf("  free page reporting: %s\n",
             r ? "on (page_reporting on the kernel's command line)"
               : "not set");
    }
    fclose(f);
  }
  f = popen("grep -E 'MemTotal|MemAvailable' /proc/meminfo", "r");
  if (f) {
    while (fgets(line, sizeof line, f))
      printf("  %s", line);
    pclose(f);
  }
}

/// The process's AnonHugePages in bytes.
static long long hugeBytes(void) {
  FILE *f = fopen("/proc/self/smaps_rollup", "r");
  char line[256];
  long long kib = 0;
  if (!f)
    return 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "AnonHugePages: %lld kB", &kib) == 1)
      break;
  fclose(f);
  return kib << 10;
}

enum { Page4k, Thp, Populate, ThpPopulate };

static char *map(size_t bytes, int how) {
  const size_t huge = (size_t)2 << 20;
  const int flags =
      MAP_PRIVATE | MAP_ANONYMOUS | (how == Populate ? MAP_POPULATE : 0);
  char *raw = mmap(NULL, bytes + huge, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (raw == MAP_FAILED) {
    fprintf(stderr, "opd-fault-cost: error: cannot map %zu MiB\n", bytes >> 20);
    exit(1);
  }
  // On a 2 MiB boundary (the rest unmapped), as the runtime's large buffers.
  char *p = (char *)(((size_t)raw + huge - 1) / huge * huge);
  if (p > raw)
    munmap(raw, (size_t)(p - raw));
  if (p + bytes < raw + bytes + huge)
    munmap(p + bytes, (size_t)(raw + bytes + huge - (p + bytes)));
  madvise(p, bytes,
          how == Page4k || how == Populate ? MADV_NOHUGEPAGE : MADV_HUGEPAGE);
  return p;
}

struct Part {
  char *p;
  size_t n;
};
static void *fill(void *arg) {
  struct Part *q = arg;
  memset(q->p, 1, q->n);
  return NULL;
}

/// Writes [p, p + bytes) in \p threads threads.
static void writeAll(char *p, size_t bytes, int threads) {
  if (threads < 2) {
    memset(p, 1, bytes);
    return;
  }
  pthread_t t;
  struct Part a = {p, bytes / 2}, b = {p + bytes / 2, bytes - bytes / 2};
  pthread_create(&t, NULL, fill, &b);
  fill(&a);
  pthread_join(t, NULL);
}

static void report(const char *name, size_t bytes, double seconds,
                   long long huge) {
  const double gib = (double)bytes / (double)(1 << 30);
  printf("  %-9s %6.3f s a GiB  (%6.2f GB/s)  huge pages %3.0f %%\n", name,
         seconds / gib, (double)bytes / seconds / 1e9,
         100.0 * (double)huge / (double)bytes);
}

static const char *ways = NULL; ///< WAYS, or NULL: all

/// Whether way \p name was asked for.
static int wanted(const char *name) {
  if (!ways)
    return 1;
  const size_t n = strlen(name);
  for (const char *at = ways; (at = strstr(at, name)); at += n)
    if ((at == ways || at[-1] == ',') && (at[n] == ',' || at[n] == 0))
      return 1;
  return 0;
}

/// Maps, writes and times one buffer the way \p how; keeps it if \p keep.
static char *once(const char *name, size_t bytes, int how, int threads,
                  int keep) {
  if (!wanted(name) && !keep)
    return NULL;
  const long long before = hugeBytes();
  double t0 = now();
  char *p = map(bytes, how);
  if (how == ThpPopulate && madvise(p, bytes, MADV_POPULATE_WRITE) != 0)
    perror("opd-fault-cost: MADV_POPULATE_WRITE");
  writeAll(p, bytes, threads);
  double t1 = now();
  report(name, bytes, t1 - t0, hugeBytes() - before);
  if (!keep) {
    munmap(p, bytes);
    return NULL;
  }
  return p;
}

/// The pause between ways (only where more than one way runs).
static void pauseAfter(unsigned seconds) {
  if (!ways || strchr(ways, ','))
    sleep(seconds);
}

int main(int argc, char **argv) {
  const size_t mib = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 1024;
  const int rounds = argc > 2 ? atoi(argv[2]) : 3;
  ways = argc > 3 ? argv[3] : NULL;
  if (mib == 0 || rounds <= 0) {
    fprintf(stderr, "usage: %s [MIB > 0] [ROUNDS > 0]\n", argv[0]);
    return 2;
  }
  const size_t bytes = mib << 20;
  const unsigned pause = 5;
  printf("opd-fault-cost: %zu MiB a buffer, %d rounds\n", mib, rounds);
  machine();
  for (int r = 1; r <= rounds; ++r) {
    printf("round %d\n", r);
    // A pause before each way: the memory the last one gave back is
    // reported to the host (where the kernel does so) before the next.
    once("4k", bytes, Page4k, 1, 0);
    pauseAfter(pause);
    once("thp", bytes, Thp, 1, 0);
    pauseAfter(pause);
    once("populate", bytes, Populate, 1, 0);
    pauseAfter(pause);
    once("thp+pop", bytes, ThpPopulate, 1, 0);
    pauseAfter(pause);
    once("thp x2", bytes, Thp, 2, 0);
    pauseAfter(pause);
    once("4k x2", bytes, Page4k, 2, 0);
    pauseAfter(pause);
    if (wanted("rewrite") || wanted("reuse")) {
      char *p = once("4k", bytes, Page4k, 1, 1);
      double t0 = now();
      writeAll(p, bytes, 1);
      report("rewrite", bytes, now() - t0, 0);
      munmap(p, bytes);
      once("reuse", bytes, Page4k, 1, 0);
    }
    pauseAfter(pause);
    once("reuse 5s", bytes, Page4k, 1, 0);
    pauseAfter(pause);
  }
  return 0;
}
