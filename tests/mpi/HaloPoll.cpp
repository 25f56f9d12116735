// HaloPoll.cpp - The halo messages of a set loop move while the partner
// runs its core (tests/mpi, mpi-halo-poll; decision 0475).
// SPDX-License-Identifier: Apache-2.0
//
// usage: mpirun -np 2 opd_rt_halo_poll MESH.h5 [runtime options]
// Reads Airfoil's cells, edges and pecell from MESH.h5, writes q on the
// cells (a direct loop: q's halo is stale after it), then runs an edge
// loop that reads q through pecell and increments res, as res_calc does:
// its q exchange is posted before its core and completed after. Rank 0's
// body sleeps SleepMs in each of its first SleepCalls calls, so its core
// is long; rank 1's core is short and rank 1 then waits for its messages.
// Open MPI sends q's halo (kilobytes) in a rendezvous that advances only
// inside MPI calls: unless rank 0 lets it advance while its core runs
// (lib/exec/LoopRun.cpp, CorePoll), rank 1 waits for all of rank 0's core.
// Checks on rank 1 that the wait (the loop's exchange seconds) is under a
// quarter of rank 0's sleep; with OPD_HALO_POLL=0 (the poll off) it only
// prints the wait. Also checks res against a serial sum over the edges
// (every rank's owned cells). Prints "halo-poll ok" on rank 0.
#include "LoopArgs.h"
#include "core/Dist.h"
#include "core/Runtime.h"
#include "exec/Loop.h"

#include <mpi.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

using namespace opdc::rt;

namespace {
constexpr int SleepCalls = 40;
constexpr int SleepMs = 5;

struct Ctx {
  const int64_t *gids = nullptr;
  const int32_t *pecell = nullptr;
  double *q = nullptr, *res = nullptr;
  int calls = 0;
  bool sleeps = false;
};

using test::arg;

double qOf(int64_t g, int k) {
  return 1.0 + 0.25 * std::sin(0.37 * double(g) + k);
}

void initQ(void *c0, int64_t b, int64_t e, int64_t) {
  auto *c = static_cast<Ctx *>(c0);
  for (int64_t l = b; l < e; ++l)
    for (int k = 0; k < 4; ++k)
      c->q[4 * l + k] = qOf(c->gids ? c->gids[l] : l, k);
}

void flux(void *c0, int64_t b, int64_t e, int64_t) {
  auto *c = static_cast<Ctx *>(c0);
  if (c->sleeps && c->calls++ < SleepCalls)
    std::this_thread::sleep_for(std::chrono::milliseconds(SleepMs));
  for (int64_t l = b; l < e; ++l) {
    const int32_t c1 = c->pecell[2 * l], c2 = c->pecell[2 * l + 1];
    for (int k = 0; k < 4; ++k) {
      const double f = c->q[4 * c1 + k] - 0.5 * c->q[4 * c2 + k];
      c->res[4 * c1 + k] += f;
      c->res[4 * c2 + k] -= f;
    }
  }
}
} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MESH.h5 [runtime options]\n", argv[0]);
    return 2;
  }
  const char *mesh = argv[1];
  opd_rt_init(argc - 1, argv + 1, "halo_poll", nullptr, 0);
  opd_set *edges = opd_set_from_file("edges", mesh);
  opd_set *cells = opd_set_from_file("cells", mesh);
  opd_map *pecell = opd_map_from_file("pecell", edges, cells, 2, mesh);
  opd_dat *q = opd_dat_create("q", cells, OPD_F64, 4);
  opd_dat *res = opd_dat_create("res", cells, OPD_F64, 4);
  const double zero[4] = {0, 0, 0, 0};
  opd_loop *slots[2] = {};
  // The first loop partitions the mesh; q is written, its halo stale.
  const opd_arg a0[] = {arg(q, nullptr, 0, OPD_ARG_DIRECT, OPD_WRITE)};
  opd_loop *init = opd_loop_prepare(&slots[0], "init_q", cells, 1, a0);
  Ctx c0;
  c0.gids = opd_set_global_ids(cells);
  c0.q = static_cast<double *>(q->data);
  opd_loop_run(init, initQ, &c0);
  opd_dat_fill(res, zero);

  const opd_arg a1[] = {arg(q, pecell, 0, OPD_ARG_INDIRECT, OPD_READ),
                        arg(q, pecell, 1, OPD_ARG_INDIRECT, OPD_READ),
                        arg(res, pecell, 0, OPD_ARG_INDIRECT, OPD_INC),
                        arg(res, pecell, 1, OPD_ARG_INDIRECT, OPD_INC)};
  opd_loop *l = opd_loop_prepare(&slots[1], "flux", edges, 4, a1);
  Ctx c1;
  c1.pecell = opd_map_data(pecell);
  c1.q = static_cast<double *>(q->data);
  c1.res = static_cast<double *>(res->data);
  c1.sleeps = dist::rank() == 0;
  const double before = l->exchangeSeconds;
  opd_loop_run(l, flux, &c1);
  const double wait = l->exchangeSeconds - before;

  // res of every owned cell from the edges that reach it (owned and exec
  // halo edges), q from the cells' global numbers.
  int failures = 0;
  const int64_t *cg = opd_set_global_ids(cells);
  const int64_t nexec = edges->partitioned ? edges->execSize : edges->size;
  std::vector<double> want(std::size_t(cells->owned) * 4, 0.0);
  for (int64_t e = 0; e < nexec; ++e) {
    const int32_t a = c1.pecell[2 * e], b = c1.pecell[2 * e + 1];
    for (int k = 0; k < 4; ++k) {
      const double f = qOf(cg ? cg[a] : a, k) - 0.5 * qOf(cg ? cg[b] : b, k);
      if (a < cells->owned)
        want[std::size_t(4 * a + k)] += f;
      if (b < cells->owned)
        want[std::size_t(4 * b + k)] -= f;
    }
  }
  for (int64_t k = 0; k < 4 * cells->owned; ++k)
    if (std::fabs(c1.res[k] - want[std::size_t(k)]) >
        1e-12 * (1.0 + std::fabs(want[std::size_t(k)])))
      if (failures++ < 5)
        std::fprintf(stderr, "rank %d: res[%lld] = %.17g, expected %.17g\n",
                     dist::rank(), (long long)k, c1.res[k],
                     want[std::size_t(k)]);

  const char *env = std::getenv("OPD_HALO_POLL");
  const bool polls = !env || std::strcmp(env, "0") != 0;
  const double sleep = SleepCalls * SleepMs * 1e-3;
  if (dist::rank() == 1) {
    std::printf("rank 1 waited %.1f ms for its halo while rank 0's core "
                "slept %.0f ms (%s)\n",
                wait * 1e3, sleep * 1e3, polls ? "polled" : "not polled");
    std::fflush(stdout);
    if (polls && wait > 0.25 * sleep && failures++ < 5)
      std::fprintf(stderr,
                   "rank 1: waited %.1f ms, over a quarter of rank 0's "
                   "core (%.0f ms): the messages did not move during it\n",
                   wait * 1e3, sleep * 1e3);
  }
  int total = failures;
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (dist::rank() == 0 && total == 0)
    std::printf("halo-poll ok\n");
  opd_rt_finalize();
  return total == 0 ? 0 : 1;
}
