// PlanBench.cpp - Times Airfoil's res_calc edge loop per plan block size.
// SPDX-License-Identifier: Apache-2.0
//
// Not a test (no timing is ever asserted): the measurement behind
// PlanBlockSize in lib/exec/Plan.h. Usage:
//   opd_rt_plan_bench new_grid.h5 [iterations]
// Reads OP2's Airfoil mesh, then for each block size builds the colouring
// plan of res_calc (edges incrementing both cells) and runs the loop with
// 1 and with all threads; also a plain serial loop and opd_loop_run itself.
#include "core/Objects.h"
#include "exec/Plan.h"
#include "opd_rt.h"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

using namespace opdc::rt;

namespace {
constexpr double gm1 = 0.4, eps = 0.05;

struct Ctx {
  const int32_t *pedge, *pecell;
  const double *x, *q, *adt;
  double *res;
};

inline void resCalc(const double *x1, const double *x2, const double *q1,
                    const double *q2, const double *adt1, const double *adt2,
                    double *res1, double *res2) {
  double dx = x1[0] - x2[0], dy = x1[1] - x2[1];
  double ri = 1.0 / q1[0];
  double p1 = gm1 * (q1[3] - 0.5 * ri * (q1[1] * q1[1] + q1[2] * q1[2]));
  double vol1 = ri * (q1[1] * dy - q1[2] * dx);
  ri = 1.0 / q2[0];
  double p2 = gm1 * (q2[3] - 0.5 * ri * (q2[1] * q2[1] + q2[2] * q2[2]));
  double vol2 = ri * (q2[1] * dy - q2[2] * dx);
  double mu = 0.5 * (*adt1 + *adt2) * eps;
  double f = 0.5 * (vol1 * q1[0] + vol2 * q2[0]) + mu * (q1[0] - q2[0]);
  res1[0] += f;
  res2[0] -= f;
  f = 0.5 * (vol1 * q1[1] + p1 * dy + vol2 * q2[1] + p2 * dy) +
      mu * (q1[1] - q2[1]);
  res1[1] += f;
  res2[1] -= f;
  f = 0.5 * (vol1 * q1[2] - p1 * dx + vol2 * q2[2] - p2 * dx) +
      mu * (q1[2] - q2[2]);
  res1[2] += f;
  res2[2] -= f;
  f = 0.5 * (vol1 * (q1[3] + p1) + vol2 * (q2[3] + p2)) + mu * (q1[3] - q2[3]);
  res1[3] += f;
  res2[3] -= f;
}

void body(void *p, int64_t begin, int64_t end, int64_t) {
  const Ctx &c = *static_cast<const Ctx *>(p);
  for (int64_t e = begin; e < end; ++e) {
    int32_t n1 = c.pedge[2 * e], n2 = c.pedge[2 * e + 1];
    int32_t c1 = c.pecell[2 * e], c2 = c.pecell[2 * e + 1];
    resCalc(c.x + 2 * n1, c.x + 2 * n2, c.q + 4 * c1, c.q + 4 * c2, c.adt + c1,
            c.adt + c2, c.res + 4 * c1, c.res + 4 * c2);
  }
}

// A direct loop: Airfoil's update-like streaming of q and res.
struct Direct {
  double *q;
  const double *res;
};
void directBody(void *p, int64_t begin, int64_t end, int64_t) {
  const Direct &d = *static_cast<const Direct *>(p);
  for (int64_t i = 4 * begin; i < 4 * end; ++i)
    d.q[i] += 1e-9 * d.res[i];
}

// The same schedule as opd_loop_run for a coloured loop.
void runPlan(const Plan &p, Ctx &ctx) {
  const int64_t *offsets = p.colourOffsets.data();
  const int64_t *blocks = p.blocks.data();
  const int64_t n = p.setSize, bs = p.blockSize;
#pragma omp parallel
  for (int32_t c = 0; c < p.ncolours; ++c) {
#pragma omp for schedule(static)
    for (int64_t k = offsets[c]; k < offsets[c + 1]; ++k) {
      int64_t b = blocks[k], begin = b * bs;
      body(&ctx, begin, std::min(begin + bs, n), b);
    }
  }
}

template <typename F> double best(int reps, int iters, F &&f) {
  double t = 1e30;
  for (int r = 0; r < reps; ++r) {
    double t0 = opd_rt_wtime();
    for (int i = 0; i < iters; ++i)
      f();
    t = std::min(t, (opd_rt_wtime() - t0) / iters);
  }
  return t * 1e3;
}
} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s new_grid.h5 [iterations]\n", argv[0]);
    return 2;
  }
  const char *file = argv[1];
  int iters = argc > 2 ? std::atoi(argv[2]) : 20;
  char *none[] = {argv[0]};
  opd_rt_init(1, none, "plan-bench", nullptr, 0);
  const int threads = opd_rt_threads();
  opd_set *nodes = opd_set_from_file("nodes", file);
  opd_set *edges = opd_set_from_file("edges", file);
  opd_set *cells = opd_set_from_file("cells", file);
  opd_map *pedge = opd_map_from_file("pedge", edges, nodes, 2, file);
  opd_map *pecell = opd_map_from_file("pecell", edges, cells, 2, file);
  opd_dat *x = opd_dat_from_file("p_x", nodes, OPD_F64, 2, file);
  opd_dat *q = opd_dat_from_file("p_q", cells, OPD_F64, 4, file);
  opd_dat *adt = opd_dat_create("p_adt", cells, OPD_F64, 1);
  opd_dat *res = opd_dat_create("p_res", cells, OPD_F64, 4);
  double one = 1.0;
  opd_dat_fill(adt, &one);
  Ctx ctx{pedge->data,
          pecell->data,
          static_cast<double *>(opd_dat_data(x)),
          static_cast<double *>(opd_dat_data(q)),
          static_cast<double *>(opd_dat_data(adt)),
          static_cast<double *>(opd_dat_data(res))};
  std::printf("res_calc over %lld edges, %d iterations, best of 5, %d "
              "threads available\n",
              (long long)edges->size, iters, threads);
  omp_set_num_threads(1);
  double serial = best(5, iters, [&] { body(&ctx, 0, edges->size, 0); });
  std::printf("%-22s %8.3f ms\n", "plain serial loop", serial);
  std::printf("%10s %8s %10s %10s %10s\n", "block", "colours", "plan ms",
              "1 thr ms", "all thr ms");
  for (int64_t bs : {64, 128, 256, 512, 1024, 2048, 4096}) {
    double t0 = opd_rt_wtime();
    Plan p = buildPlan(edges->size, bs, {{pecell, 0}, {pecell, 1}});
    double planMs = (opd_rt_wtime() - t0) * 1e3;
    omp_set_num_threads(1);
    double t1 = best(5, iters, [&] { runPlan(p, ctx); });
    omp_set_num_threads(threads);
    double tn = best(5, iters, [&] { runPlan(p, ctx); });
    std::printf("%10lld %8d %10.1f %10.3f %10.3f\n", (long long)bs, p.ncolours,
                planMs, t1, tn);
  }
  opd_arg args[] = {{x, pedge, 0, OPD_ARG_INDIRECT, OPD_READ, 16},
                    {x, pedge, 1, OPD_ARG_INDIRECT, OPD_READ, 16},
                    {q, pecell, 0, OPD_ARG_INDIRECT, OPD_READ, 32},
                    {q, pecell, 1, OPD_ARG_INDIRECT, OPD_READ, 32},
                    {adt, pecell, 0, OPD_ARG_INDIRECT, OPD_READ, 8},
                    {adt, pecell, 1, OPD_ARG_INDIRECT, OPD_READ, 8},
                    {res, pecell, 0, OPD_ARG_INDIRECT, OPD_INC, 32},
                    {res, pecell, 1, OPD_ARG_INDIRECT, OPD_INC, 32}};
  static opd_loop *slot;
  omp_set_num_threads(threads);
  double viaRuntime = best(5, iters, [&] {
    opd_loop *l = opd_loop_prepare(&slot, "res_calc", edges, 8, args);
    opd_loop_run(l, body, &ctx);
  });
  std::printf("opd_loop_prepare+run (block %lld, %d threads): %.3f ms\n",
              (long long)PlanBlockSize, threads, viaRuntime);

  // Direct loop: runtime chunks vs one plain `omp parallel for`.
  Direct dctx{static_cast<double *>(opd_dat_data(q)),
              static_cast<const double *>(opd_dat_data(res))};
  const int64_t ncells = cells->size;
  double plain = best(5, iters, [&] {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < ncells; ++i)
      directBody(&dctx, i, i + 1, 0);
  });
  opd_arg dargs[] = {{q, nullptr, 0, OPD_ARG_DIRECT, OPD_RW, 32},
                     {res, nullptr, 0, OPD_ARG_DIRECT, OPD_READ, 32}};
  static opd_loop *dslot;
  double chunked = best(5, iters, [&] {
    opd_loop *l = opd_loop_prepare(&dslot, "update", cells, 2, dargs);
    opd_loop_run(l, directBody, &dctx);
  });
  std::printf("direct loop over %lld cells, %d threads: plain omp for %.3f "
              "ms, opd_loop_run (%lld chunks) %.3f ms\n",
              (long long)ncells, threads, plain,
              (long long)opd_loop_chunks(dslot), chunked);
  return opd_rt_finalize();
}
