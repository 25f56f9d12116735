// tridiag_bench.cpp - Batched tridiagonal solves: time and bandwidth.
// SPDX-License-Identifier: Apache-2.0
//
// opd_solve_tridiagonal along each dimension of a 256^3 and a 4096^2 f64
// block (the sizes of issue 13's benchmark), whole block, best of --reps
// solves after one warm-up. Bandwidth counts the least traffic a solve
// needs: a, b, c and d read once, d written once (5 x 8 bytes a point; the
// c' scratch and write-allocate traffic not counted, as STREAM does not).
// The coefficients are those of an implicit heat step (-1, 4, -1), so
// repeated solves stay finite.
//
// --split marks the block as split along the solve dimension (as a rank
// below another sees it), so that every dimension takes the distributed
// path (lib/solvers/TridiagonalSplit.cpp: the modified Thomas passes and
// the substitution, the reduced systems solved on this process): the
// per-rank work of a split solve along any dimension, 256^3 along 0
// included, which 2 or 4 ranks never split (bench/solvers/run.sh --split).
//
// usage: opd-tridiag-bench [--threads=N[,M...]] [--reps=R] [--n3=256]
//                          [--n2=4096] [--split]
// prints one line per case and thread count:
//   tridiagonal 256^3 along 0 threads=1 best_s=0.1234 GBps=5.43
//   tridiagonal 256^3 along 0 split threads=1 best_s=0.1234 GBps=5.43
#include "opd_rt.h"

#include "core/Objects.h"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Options {
  std::vector<int> threads{1, 2};
  int reps = 5;
  int64_t n3 = 256, n2 = 4096;
  bool split = false;
};

[[noreturn]] void usage(const char *why) {
  std::fprintf(stderr,
               "opd-tridiag-bench: error: %s\nusage: opd-tridiag-bench "
               "[--threads=N[,M...]] [--reps=R] [--n3=N] [--n2=N] "
               "[--split]\n",
               why);
  std::exit(2);
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *key) -> const char * {
      size_t k = std::strlen(key);
      return a.compare(0, k, key) == 0 ? a.c_str() + k : nullptr;
    };
    if (const char *v = value("--threads=")) {
      o.threads.clear();
      for (char *p = const_cast<char *>(v); *p;) {
        o.threads.push_back(int(std::strtol(p, &p, 10)));
        if (*p == ',')
          ++p;
        else if (*p)
          usage("bad --threads");
      }
    } else if (const char *v = value("--reps=")) {
      o.reps = std::atoi(v);
    } else if (const char *v = value("--n3=")) {
      o.n3 = std::atol(v);
    } else if (const char *v = value("--n2=")) {
      o.n2 = std::atol(v);
    } else if (a == "--split") {
      o.split = true;
    } else {
      usage(("unknown argument '" + a + "'").c_str());
    }
  }
  if (o.threads.empty() || o.reps < 1)
    usage("nothing to run");
  return o;
}

void fill(opd_dat *d, double v) { opd_dat_fill(d, &v); }

void runCase(const Options &o, std::vector<int64_t> size) {
  const int dims = int(size.size());
  opd_block *block = opd_block_create("grid", dims);
  int64_t zero[3] = {0, 0, 0};
  const char *names[4] = {"a", "b", "c", "d"};
  opd_dat *dat[4];
  for (int i = 0; i < 4; ++i)
    dat[i] = opd_block_dat_create(names[i], block, OPD_F64, 1, size.data(),
                                  zero, zero, zero);
  fill(dat[0], -1.0);
  fill(dat[1], 4.0);
  fill(dat[2], -1.0);
  int64_t points = 1;
  for (int64_t s : size)
    points *= s;
  const std::string grid = std::to_string(size[0]) + "^" + std::to_string(dims);
  for (int along = 0; along < dims; ++along)
    for (int t : o.threads) {
      omp_set_num_threads(t);
      block->edgeHi[along] = !o.split;
      fill(dat[3], 1.0);
      opd_solve_tridiagonal(dat[0], dat[1], dat[2], dat[3], along, nullptr,
                            nullptr);
      double best = 1e300;
      for (int r = 0; r < o.reps; ++r) {
        double t0 = opd_rt_wtime();
        opd_solve_tridiagonal(dat[0], dat[1], dat[2], dat[3], along, nullptr,
                              nullptr);
        best = std::min(best, opd_rt_wtime() - t0);
      }
      std::printf("tridiagonal %s along %d%s threads=%d best_s=%.4f "
                  "GBps=%.2f\n",
                  grid.c_str(), along, o.split ? " split" : "", t, best,
                  5.0 * 8 * points / best / 1e9);
      std::fflush(stdout);
    }
}

} // namespace

int main(int argc, char **argv) {
  Options o = parse(argc, argv);
  runCase(o, {o.n3, o.n3, o.n3});
  runCase(o, {o.n2, o.n2});
  return opd_rt_finalize();
}
