// stream.cpp - STREAM triad (a[i] = b[i] + s * c[i]) measured in-project.
// SPDX-License-Identifier: Apache-2.0
//
// The yardstick every opdc bandwidth figure is compared against: the best
// sustained triad bandwidth of this machine, measured in the same run as the
// benchmark that quotes it. Counting follows McCalpin's STREAM: 3 arrays x 8
// bytes per element per iteration (write-allocate traffic not counted), best
// time of `--reps` repetitions, arrays far larger than the last-level cache.
//
// usage: opd-stream [--threads=N[,M...]] [--mib=PER_ARRAY] [--reps=R]
// prints one line per thread count:
//   stream-triad threads=2 n=33554432 best_s=0.0389 GBps=20.70

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

struct Options {
  std::vector<int> threads{1, 2};
  long mib = 256; // per array: 3 x 256 MiB, far beyond any cache here
  int reps = 10;
};

[[noreturn]] void usage(const char *why) {
  std::fprintf(stderr,
               "opd-stream: error: %s\nusage: opd-stream [--threads=N[,M...]] "
               "[--mib=PER_ARRAY] [--reps=R]\n",
               why);
  std::exit(2);
}

long parsePositive(const char *text, const char *option) {
  char *end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || v <= 0)
    usage((std::string(option) + " expects a positive integer").c_str());
  return v;
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (std::strncmp(a, "--threads=", 10) == 0) {
      o.threads.clear();
      std::string list = a + 10;
      size_t pos = 0;
      while (pos <= list.size()) {
        size_t comma = list.find(',', pos);
        std::string item = list.substr(pos, comma - pos);
        o.threads.push_back(int(parsePositive(item.c_str(), "--threads")));
        if (comma == std::string::npos)
          break;
        pos = comma + 1;
      }
    } else if (std::strncmp(a, "--mib=", 6) == 0) {
      o.mib = parsePositive(a + 6, "--mib");
    } else if (std::strncmp(a, "--reps=", 7) == 0) {
      o.reps = int(parsePositive(a + 7, "--reps"));
    } else {
      usage((std::string("unknown argument '") + a + "'").c_str());
    }
  }
  return o;
}

struct FreeDeleter {
  void operator()(double *p) const { std::free(p); }
};
using Array = std::unique_ptr<double[], FreeDeleter>;

Array allocate(size_t n) {
  void *p = std::aligned_alloc(64, ((n * sizeof(double) + 63) / 64) * 64);
  if (!p)
    usage("cannot allocate the arrays; lower --mib");
  return Array(static_cast<double *>(p));
}

} // namespace

int main(int argc, char **argv) {
  Options o = parse(argc, argv);
  const size_t n = size_t(o.mib) * 1024 * 1024 / sizeof(double);
  Array a = allocate(n), b = allocate(n), c = allocate(n);
  const double scalar = 3.0;

  for (int threads : o.threads) {
    omp_set_num_threads(threads);
    // First touch by the threads that will use the pages.
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) {
      a[i] = 1.0;
      b[i] = 2.0;
      c[i] = 0.5;
    }
    double best = 1e30;
    for (int r = 0; r < o.reps; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      double *__restrict pa = a.get();
      const double *__restrict pb = b.get();
      const double *__restrict pc = c.get();
#pragma omp parallel for schedule(static)
      for (size_t i = 0; i < n; ++i)
        pa[i] = pb[i] + scalar * pc[i];
      auto t1 = std::chrono::steady_clock::now();
      best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
    }
    // Check the result so the loop cannot be optimised away.
    if (a[n / 2] != 2.0 + scalar * 0.5) {
      std::fprintf(stderr, "opd-stream: error: wrong triad result\n");
      return 1;
    }
    double gbps = 3.0 * sizeof(double) * double(n) / best / 1e9;
    std::printf("stream-triad threads=%d n=%zu best_s=%.4f GBps=%.2f\n",
                threads, n, best, gbps);
  }
  return 0;
}
