// Comm.cpp - The MPI side of the distribution layer: start, stop, ranks,
// errors, reductions.
// SPDX-License-Identifier: Apache-2.0
//
// MPI is started in opd_rt_init with MPI_THREAD_FUNNELED (OpenMP threads
// never call MPI; only the thread that runs main does) and finalized in
// opd_rt_finalize. A program linked with opd_rt_mpi also runs without
// mpirun, as a singleton of one rank. Errors print the rank and end the
// whole job with MPI_Abort, so no rank waits forever for a failed one.
#include "core/Dist.h"

#include "core/Runtime.h"
#include "mpi/Mpi.h"

#include <malloc.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace opdc::rt::dist {
namespace {
int myRank = 0, nRanks = 1, onNode = 0;
bool started = false, ended = false;
} // namespace

void init() {
  if (started)
    return;
  int already = 0;
  MPI_Initialized(&already);
  if (!already) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  }
  started = true;
  // Buffers of 4 MiB and more straight from mmap and back to the system
  // when freed (glibc otherwise raises its threshold after the first such
  // free and keeps later ones in the heap): the partition replaces every
  // slice of the mesh by the rank's part, and the slices' memory must not
  // stay resident (the profile's peak memory per rank).
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  MPI_Comm_rank(MPI_COMM_WORLD, &myRank);
  MPI_Comm_size(MPI_COMM_WORLD, &nRanks);
  // Threads per rank when neither OMP_NUM_THREADS nor --threads says: the
  // node's cores shared among the ranks on it (not all cores per rank,
  // which would oversubscribe the node), at most the cores this rank may
  // run on (mpirun's binding).
  // The rank's place on its node picks its GPU (opd_rt_node_rank).
  int local = 1;
  if (nRanks > 1) {
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, myRank,
                        MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &local);
    MPI_Comm_rank(node, &onNode);
    MPI_Comm_free(&node);
  }
  if (nRanks > 1 && !std::getenv("OMP_NUM_THREADS")) {
    const int cores = int(std::thread::hardware_concurrency());
    int threads = std::max(1, cores / std::max(1, local));
    threads = std::min(threads, std::max(1, omp_get_num_procs()));
    omp_set_num_threads(threads);
  }
}

void finalize() {
  if (!started || ended)
    return;
  std::fflush(stdout);
  settleExchanges();
  releaseStructured();
  releaseUnstructured();
  MPI_Finalize();
  ended = true;
}

int rank() { return myRank; }
int nodeRank() { return onNode; }
int ranks() { return nRanks; }

std::string rankPrefix() {
  return nRanks > 1 ? "rank " + std::to_string(myRank) + ": " : "";
}

void abortJob(int status) {
  if (started && !ended) {
    if (nRanks > 1)
      MPI_Abort(MPI_COMM_WORLD, status);
    // One rank: leave MPI in order so that mpirun reports our status.
    MPI_Finalize();
    ended = true;
  }
  std::exit(status);
}

void exitJob(int status) {
  finalize();
  std::exit(status);
}

void barrier() {
  if (started && !ended && nRanks > 1)
    MPI_Barrier(MPI_COMM_WORLD);
}

void broadcast(void *data, int64_t bytes) {
  if (nRanks == 1)
    return;
  constexpr int64_t piece = int64_t(1) << 30;
  char *p = static_cast<char *>(data);
  for (int64_t done = 0; done < bytes; done += piece) {
    const int64_t n = bytes - done < piece ? bytes - done : piece;
    MPI_Bcast(p + done, int(n), MPI_BYTE, 0, MPI_COMM_WORLD);
  }
}

MPI_Datatype mpiType(int type) {
  switch (type) {
  case OPD_BOOL:
    return MPI_UINT8_T;
  case OPD_I32:
    return MPI_INT32_T;
  case OPD_I64:
    return MPI_INT64_T;
  case OPD_F32:
    return MPI_FLOAT;
  default:
    return MPI_DOUBLE;
  }
}

void allreduce(void *values, int type, int op, int n) {
  if (nRanks == 1 || n <= 0)
    return;
  MPI_Op o = op == OPD_MIN ? MPI_MIN : op == OPD_MAX ? MPI_MAX : MPI_SUM;
  MPI_Allreduce(MPI_IN_PLACE, values, n, mpiType(type), o, MPI_COMM_WORLD);
}

void maxAndSum(const double *in, double *max, double *sum, int n) {
  if (nRanks == 1) {
    for (int i = 0; i < n; ++i)
      max[i] = sum[i] = in[i];
    return;
  }
  MPI_Allreduce(in, max, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(in, sum, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

} // namespace opdc::rt::dist
