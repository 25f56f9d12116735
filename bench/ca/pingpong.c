/* pingpong.c - Checks the network bench/ca/run.sh builds: the one-way
 * latency and the rate two MPI ranks see, and that a receiver computing
 * while a message flies waits only for what is left of its flight.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Ranks 0 and 1 (others idle). All ranks share one machine and so one
 * CLOCK_MONOTONIC: rank 1 stamps each message with its send time and rank 0
 * reads the one-way time directly (arrival - stamp), besides half the round
 * trip of a ping-pong. Prints, per message size, the median one-way time
 * (stamped) and half the median round trip; the rate of large messages;
 * then the overlap check: rank 0 posts its receive, computes C us, waits,
 * and the median wait is printed next to max(0, one-way - C).
 *
 * usage: mpirun -np 2 ./pingpong [REPS]   (default 200)
 * prints lines "pingpong bytes=B oneway_us=X halfrtt_us=Y",
 * "rate bytes=B gbits=R", "overlap compute_us=C wait_us=W expect_us=E". */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static double median(int64_t *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return (double)v[n / 2];
}

static void spin(int64_t ns) {
  int64_t end = now() + ns;
  while (now() < end) {
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int reps = argc > 1 ? atoi(argv[1]) : 200;
  if (size < 2 || reps < 1) {
    if (rank == 0)
      fprintf(stderr, "pingpong: error: needs 2 ranks or more and REPS > 0\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int sizes[] = {8, 1024, 8192, 65536, 1 << 20};
  const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
  char *buf = calloc(1 << 20, 1);
  int64_t *oneway = malloc((size_t)reps * sizeof *oneway);
  int64_t *rtt = malloc((size_t)reps * sizeof *rtt);
  double smallOneway = 0.0;
  for (int s = 0; s < nsizes; ++s) {
    int bytes = sizes[s];
    for (int r = 0; r < reps + 5; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == 1) {
        int64_t t = now();
        memcpy(buf, &t, sizeof t);
        MPI_Send(buf, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        MPI_Recv(buf, bytes, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 0) {
        MPI_Recv(buf, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int64_t arrived = now(), sent;
        memcpy(&sent, buf, sizeof sent);
        int64_t t0 = now();
        MPI_Send(buf, bytes, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
        MPI_Recv(buf, bytes, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (r >= 5) {
          oneway[r - 5] = arrived - sent;
          rtt[r - 5] = now() - t0;
        }
      }
      if (rank == 1)
        MPI_Send(buf, bytes, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
    }
    if (rank == 0) {
      double ow = median(oneway, reps) / 1e3, half = median(rtt, reps) / 2e3;
      if (s == 0)
        smallOneway = ow;
      printf("pingpong bytes=%d oneway_us=%.1f halfrtt_us=%.1f\n", bytes, ow,
             half);
      if (bytes >= 65536)
        printf("rate bytes=%d gbits=%.2f\n", bytes,
               bytes * 8.0 / ((ow - smallOneway) * 1e3));
    }
  }
  /* Overlap: rank 1 sends when rank 0 has posted its receive (both leave
   * the same barrier); rank 0 computes C us, then waits. */
  const double fractions[] = {0.0, 0.5, 1.0, 2.0};
  for (int f = 0; f < 4; ++f) {
    int64_t compute = (int64_t)(fractions[f] * smallOneway * 1e3);
    for (int r = 0; r < reps + 5; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == 1) {
        MPI_Send(buf, 8, MPI_BYTE, 0, 4, MPI_COMM_WORLD);
      } else if (rank == 0) {
        MPI_Request req;
        MPI_Irecv(buf, 8, MPI_BYTE, 1, 4, MPI_COMM_WORLD, &req);
        spin(compute);
        int64_t t = now();
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (r >= 5)
          rtt[r - 5] = now() - t;
      }
    }
    if (rank == 0) {
      double c = (double)compute / 1e3, e = smallOneway - c;
      printf("overlap compute_us=%.1f wait_us=%.1f expect_us=%.1f\n", c,
             median(rtt, reps) / 1e3, e > 0 ? e : 0.0);
    }
  }
  free(buf);
  free(oneway);
  free(rtt);
  MPI_Finalize();
  return 0;
}
