// Oversubscribe.cpp - OpenMP's wait policy when ranks x threads exceed the
// cores: restart the program once with OMP_WAIT_POLICY=passive.
// SPDX-License-Identifier: Apache-2.0
//
// libgomp's threads spin (GOMP_SPINCOUNT, 300000 polls by default) at the
// end of every parallel region waiting for the next one. With spare cores
// that makes back-to-back loops fast; with more threads than cores (4 ranks
// x 2 threads on 2 cores, or --threads=8 on 4 cores) the spinning threads
// take the cores from the ranks and threads that have work: Airfoil's
// small mesh ran many times slower at 4 ranks x 2 threads on 2 cores than
// with passive waiting (bench/repro/README.md). libgomp reads its policy once,
// when it is loaded, before main, so the runtime cannot change it
// afterwards: when opd_rt_init finds the node oversubscribed and the user
// chose no policy (OMP_WAIT_POLICY, GOMP_SPINCOUNT unset), it sets
// OMP_WAIT_POLICY=passive and re-executes the program (/proc/self/exe, same
// arguments and pid; only when argv is the process's own command line)
// before anything else happens — before MPI starts, so
// the launcher sees one process as before. OPD_OVERSUBSCRIBED=1 marks the
// restarted process (and stops a second restart); OPD_OVERSUBSCRIBED=0 set
// by the user turns the restart off.
//
// Ranks on the node come from the launcher's environment (Open MPI's
// OMPI_COMM_WORLD_LOCAL_SIZE, MPICH's MPI_LOCALNRANKS, Slurm's
// SLURM_NTASKS_PER_NODE); threads from the last --threads=N, else
// OMP_NUM_THREADS. Without an explicit thread count the runtime divides the
// cores among the ranks itself, so nothing is oversubscribed by it.
#include "core/Runtime.h"

#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

namespace opdc::rt {
namespace {
long envNumber(const char *name) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return 0;
  char *end = nullptr;
  long n = std::strtol(v, &end, 10);
  return n > 0 ? n : 0;
}
/// Whether argv is the process's own command line (a host program may call
/// opd_rt_init with arguments it made up: restarting would lose its own).
bool isOwnCommandLine(int argc, char **argv) {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string cmd((std::istreambuf_iterator<char>(in)),
                  std::istreambuf_iterator<char>());
  std::string mine;
  for (int a = 0; a < argc; ++a) {
    if (!argv[a])
      return false;
    mine += argv[a];
    mine += '\0';
  }
  return !cmd.empty() && cmd == mine;
}
} // namespace

void avoidSpinningWhenOversubscribed(int argc, char **argv) {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT") ||
      std::getenv("OPD_OVERSUBSCRIBED") || argc < 1 || !argv)
    return;
  long threads = 0;
  for (int a = 1; a < argc; ++a)
    if (argv[a] && std::strncmp(argv[a], "--threads=", 10) == 0)
      threads = std::strtol(argv[a] + 10, nullptr, 10);
  if (threads <= 0)
    threads = envNumber("OMP_NUM_THREADS");
  if (threads < 2)
    return; // one thread per rank: no thread waits for another
  long ranks = envNumber("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (!ranks)
    ranks = envNumber("MPI_LOCALNRANKS");
  if (!ranks)
    ranks = envNumber("SLURM_NTASKS_PER_NODE");
  if (!ranks)
    ranks = 1;
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  cpu_set_t mask;
  long bound = cores;
  if (sched_getaffinity(0, sizeof mask, &mask) == 0)
    bound = CPU_COUNT(&mask);
  if (ranks * threads <= cores && threads <= bound)
    return;
  if (!isOwnCommandLine(argc, argv))
    return;
  setenv("OMP_WAIT_POLICY", "passive", 1);
  setenv("OPD_OVERSUBSCRIBED", "1", 1);
  execv("/proc/self/exe", argv);
  // Not restarted (no /proc): go on spinning rather than fail.
}
} // namespace opdc::rt
