/* delay_shim.c - Network latency for MPI ranks on one machine: a PMPI
 * interposition library (LD_PRELOAD) that holds every point-to-point
 * message back until L + bytes/B after it was sent.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Why: bench/ca measures communication avoidance in a latency-bound regime,
 * ranks in network namespaces over TCP (bench/ca/netns.sh). The kernel here
 * has no qdisc that delays packets (no sch_netem, sch_fq, sch_etf, sch_plug,
 * no modules to load), so the delay is added at the MPI level instead, the
 * way a wire would add it: the SENDER stamps each message with its
 * delivery deadline (the time of the send + L + bytes/B) in a 16-byte
 * header in front of the payload; the RECEIVER's completion (MPI_Wait*,
 * MPI_Test*, MPI_Recv) does not report the message before that deadline.
 * Nothing blocks the sender, and a receiver that computes while the
 * message flies finds it delivered when it asks, as on a real network:
 * overlap of computation with communication behaves as it would there.
 * All ranks share one machine, hence one CLOCK_MONOTONIC, so a deadline
 * stamped by one process is read by another without any clock offset.
 * A message whose real transfer takes longer than its deadline (the TCP
 * stack, the tbf rate limit, a descheduled partner) completes when it
 * arrives: the one-way time is max(real, L + bytes/B).
 *
 * Collectives (Allreduce, Bcast, Barrier, ...) go through Open MPI's own
 * point-to-point layer underneath MPI_*, which this library does not see;
 * each one that returns is followed by ceil(log2 p) x L of waiting (the
 * rounds of a recursive-doubling or binomial-tree algorithm), unless
 * OPD_DELAY_COLLECTIVES=0.
 *
 * Environment:
 *   OPD_DELAY_US=L           one-way latency in microseconds (default 0)
 *   OPD_DELAY_GBITS=B        bandwidth term in Gbit/s (default 0: none)
 *   OPD_DELAY_COLLECTIVES=0  no delay on collectives
 *   OPD_DELAY_YIELD=1        yield the core while waiting (oversubscribed)
 *   OPD_DELAY_VERBOSE=1      rank 0 prints its settings at MPI_Init
 *
 * Every message is packed (MPI_Pack) behind the header and travels as
 * MPI_PACKED; the receive goes to a scratch buffer and is unpacked at
 * completion. Covered: MPI_Send, Ssend, Isend, Issend, Recv, Irecv,
 * Sendrecv, Wait, Waitall, Waitany, Waitsome, Test, Testall, Testany,
 * Testsome. Calls that would see the header (probes, persistent and
 * buffered sends, cancelling or freeing a pending shim request) stop the
 * program with an error naming the call. Not MPI_THREAD_MULTIPLE (the
 * request table has no lock).
 *
 * Build: mpicc -O2 -shared -fPIC -o libopd_delay_shim.so delay_shim.c
 * (or the build's build/bench/libopd-delay-shim.so, which run.sh uses). */
#include <mpi.h>

#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { HEADER = 16 };

static int64_t latencyNs;   /* L */
static double nsPerByte;    /* 1/B, 0 when no bandwidth term */
static int collectives = 1; /* delay collectives */
static int64_t collectiveNs;

static int64_t now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Waits until `deadline`, spinning as Open MPI's own waits do: a rank that
 * slept would, on a loaded machine, wake up to a scheduler tick later (4 ms
 * here), far beyond the latencies modelled. With OPD_DELAY_YIELD=1 (more
 * ranks than cores) the spin yields the core at every turn instead. */
static int yieldWhileWaiting;

static void waitUntil(int64_t deadline) {
  while (now() < deadline)
    if (yieldWhileWaiting)
      sched_yield();
}

static void fail(const char *call) {
  fprintf(stderr,
          "delay_shim: error: %s is not supported on messages the shim "
          "delays (see bench/ca/delay_shim.c)\n",
          call);
  PMPI_Abort(MPI_COMM_WORLD, 2);
}

/* ---- The table of pending shim requests, keyed by the request handle. A
 * handle stays unique while its request is pending; entries are removed
 * when the shim completes the request through PMPI. ---- */
typedef struct {
  MPI_Request key; /* MPI_REQUEST_NULL: free slot */
  int isRecv;
  char *scratch;
  void *buf; /* receives: the user's buffer, count, type, comm */
  int count;
  MPI_Datatype type;
  MPI_Comm comm;
} Entry;

static Entry *table;
static size_t tableCap, tableUsed;

static size_t slotOf(MPI_Request r) {
  uintptr_t h = (uintptr_t)r;
  h ^= h >> 17;
  h *= (uintptr_t)0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 7) & (tableCap - 1);
}

static Entry *find(MPI_Request r) {
  if (r == MPI_REQUEST_NULL || tableUsed == 0)
    return NULL;
  for (size_t i = slotOf(r);; i = (i + 1) & (tableCap - 1)) {
    if (table[i].key == r)
      return &table[i];
    if (table[i].key == MPI_REQUEST_NULL)
      return NULL;
  }
}

static void insert(const Entry *e);

static void grow(void) {
  Entry *old = table;
  size_t oldCap = tableCap;
  tableCap = tableCap ? 2 * tableCap : 256;
  table = malloc(tableCap * sizeof(Entry));
  if (!table) {
    fprintf(stderr, "delay_shim: error: out of memory\n");
    abort();
  }
  for (size_t i = 0; i < tableCap; ++i)
    table[i].key = MPI_REQUEST_NULL;
  tableUsed = 0;
  for (size_t i = 0; i < oldCap; ++i)
    if (old[i].key != MPI_REQUEST_NULL)
      insert(&old[i]);
  free(old);
}

static void insert(const Entry *e) {
  if (2 * (tableUsed + 1) > tableCap)
    grow();
  size_t i = slotOf(e->key);
  while (table[i].key != MPI_REQUEST_NULL)
    i = (i + 1) & (tableCap - 1);
  table[i] = *e;
  ++tableUsed;
}

/* Removes *e, moving later entries of its probe run back (linear probing). */
static void erase(Entry *e) {
  size_t i = (size_t)(e - table);
  table[i].key = MPI_REQUEST_NULL;
  --tableUsed;
  for (size_t j = (i + 1) & (tableCap - 1); table[j].key != MPI_REQUEST_NULL;
       j = (j + 1) & (tableCap - 1)) {
    Entry moved = table[j];
    table[j].key = MPI_REQUEST_NULL;
    --tableUsed;
    insert(&moved);
  }
}

/* ---- Sending: header (deadline) + packed payload, as MPI_PACKED. ---- */
static char *packMessage(const void *buf, int count, MPI_Datatype type,
                         MPI_Comm comm, int *bytes) {
  int size = 0, pos = 0;
  PMPI_Pack_size(count, type, comm, &size);
  char *scratch = malloc((size_t)size + HEADER);
  if (!scratch) {
    fprintf(stderr, "delay_shim: error: out of memory\n");
    abort();
  }
  PMPI_Pack(buf, count, type, scratch + HEADER, size, &pos, comm);
  int64_t deadline = now() + latencyNs + (int64_t)llround(nsPerByte * pos);
  memset(scratch, 0, HEADER);
  memcpy(scratch, &deadline, sizeof deadline);
  *bytes = pos + HEADER;
  return scratch;
}

typedef int (*IsendFn)(const void *, int, MPI_Datatype, int, int, MPI_Comm,
                       MPI_Request *);
typedef int (*SendFn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);

static int shimIsend(IsendFn fn, const void *buf, int count, MPI_Datatype type,
                     int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  if (dest == MPI_PROC_NULL)
    return fn(buf, count, type, dest, tag, comm, req);
  int bytes;
  char *scratch = packMessage(buf, count, type, comm, &bytes);
  int rc = fn(scratch, bytes, MPI_PACKED, dest, tag, comm, req);
  if (rc != MPI_SUCCESS) {
    free(scratch);
    return rc;
  }
  Entry e = {*req, 0, scratch, NULL, 0, MPI_DATATYPE_NULL, MPI_COMM_NULL};
  insert(&e);
  return rc;
}

static int shimSend(SendFn fn, const void *buf, int count, MPI_Datatype type,
                    int dest, int tag, MPI_Comm comm) {
  if (dest == MPI_PROC_NULL)
    return fn(buf, count, type, dest, tag, comm);
  int bytes;
  char *scratch = packMessage(buf, count, type, comm, &bytes);
  int rc = fn(scratch, bytes, MPI_PACKED, dest, tag, comm);
  free(scratch);
  return rc;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
              MPI_Comm comm, MPI_Request *req) {
  return shimIsend(PMPI_Isend, buf, count, type, dest, tag, comm, req);
}

int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
               MPI_Comm comm, MPI_Request *req) {
  return shimIsend(PMPI_Issend, buf, count, type, dest, tag, comm, req);
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag,
             MPI_Comm comm) {
  return shimSend(PMPI_Send, buf, count, type, dest, tag, comm);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
              MPI_Comm comm) {
  return shimSend(PMPI_Ssend, buf, count, type, dest, tag, comm);
}

/* ---- Receiving: into scratch, unpacked once the deadline has passed. ---- */
int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag,
              MPI_Comm comm, MPI_Request *req) {
  if (source == MPI_PROC_NULL)
    return PMPI_Irecv(buf, count, type, source, tag, comm, req);
  int size = 0;
  PMPI_Pack_size(count, type, comm, &size);
  char *scratch = malloc((size_t)size + HEADER);
  if (!scratch) {
    fprintf(stderr, "delay_shim: error: out of memory\n");
    abort();
  }
  int rc =
      PMPI_Irecv(scratch, size + HEADER, MPI_PACKED, source, tag, comm, req);
  if (rc != MPI_SUCCESS) {
    free(scratch);
    return rc;
  }
  Entry e = {*req, 1, scratch, buf, count, type, comm};
  insert(&e);
  return rc;
}

static int64_t deadlineOf(const Entry *e) {
  int64_t d;
  memcpy(&d, e->scratch, sizeof d);
  return d;
}

/* Unpacks a completed receive (its PMPI status in *st) into the user's
 * buffer, makes the status count the payload, frees the entry. */
static void finishRecv(Entry *e, MPI_Status *st) {
  int got = 0, pos = 0;
  PMPI_Get_count(st, MPI_PACKED, &got);
  int payload = got - HEADER;
  int typeSize = 0;
  PMPI_Type_size(e->type, &typeSize);
  int n = typeSize > 0 ? payload / typeSize : 0;
  if (n > e->count)
    n = e->count;
  if (n > 0)
    PMPI_Unpack(e->scratch + HEADER, payload, &pos, e->buf, n, e->type,
                e->comm);
  if (st != MPI_STATUS_IGNORE)
    PMPI_Status_set_elements(st, MPI_BYTE, payload);
  free(e->scratch);
  erase(e);
}

/* Whether the request (which must be pending or null) can complete now: its
 * data is in and, for a shim receive, its deadline has passed. Does not
 * complete it. */
static int ready(MPI_Request r) {
  if (r == MPI_REQUEST_NULL)
    return 1;
  int done = 0;
  PMPI_Request_get_status(r, &done, MPI_STATUS_IGNORE);
  if (!done)
    return 0;
  Entry *e = find(r);
  return !e || !e->isRecv || now() >= deadlineOf(e);
}

int MPI_Wait(MPI_Request *req, MPI_Status *status) {
  Entry *e = find(*req);
  if (!e)
    return PMPI_Wait(req, status);
  MPI_Status own;
  MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
  int rc = PMPI_Wait(req, st); /* leaves the table as it was */
  if (e->isRecv) {
    waitUntil(deadlineOf(e));
    finishRecv(e, st);
  } else {
    free(e->scratch);
    erase(e);
  }
  return rc;
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[]) {
  MPI_Request keysSmall[16];
  MPI_Request *keys = n <= 16 ? keysSmall : malloc((size_t)n * sizeof *keys);
  int any = 0;
  for (int i = 0; i < n; ++i) {
    keys[i] = reqs[i];
    any |= find(reqs[i]) != NULL;
  }
  if (!any) {
    if (keys != keysSmall)
      free(keys);
    return PMPI_Waitall(n, reqs, statuses);
  }
  MPI_Status *st = statuses;
  if (statuses == MPI_STATUSES_IGNORE)
    st = malloc((size_t)n * sizeof *st);
  int rc = PMPI_Waitall(n, reqs, st);
  int64_t latest = 0;
  for (int i = 0; i < n; ++i) {
    Entry *e = find(keys[i]);
    if (e && e->isRecv && deadlineOf(e) > latest)
      latest = deadlineOf(e);
  }
  waitUntil(latest);
  for (int i = 0; i < n; ++i) {
    Entry *e = find(keys[i]);
    if (!e)
      continue;
    if (e->isRecv) {
      finishRecv(e, &st[i]);
    } else {
      free(e->scratch);
      erase(e);
    }
  }
  if (statuses == MPI_STATUSES_IGNORE)
    free(st);
  if (keys != keysSmall)
    free(keys);
  return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status) {
  Entry *e = find(*req);
  if (!e || !e->isRecv) {
    MPI_Request key = *req;
    int rc = PMPI_Test(req, flag, status);
    if (e && *flag) {
      e = find(key);
      free(e->scratch);
      erase(e);
    }
    return rc;
  }
  if (!ready(*req)) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  *flag = 1;
  return MPI_Wait(req, status);
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[]) {
  for (int i = 0; i < n; ++i)
    if (!ready(reqs[i])) {
      *flag = 0;
      return MPI_SUCCESS;
    }
  *flag = 1;
  return MPI_Waitall(n, reqs, statuses);
}

/* Completes one ready request of reqs[], the first; *index MPI_UNDEFINED
 * when all are null. Returns whether one was completed or all are null. */
static int completeAny(int n, MPI_Request reqs[], int *index,
                       MPI_Status *status, int *rc) {
  int active = 0;
  for (int i = 0; i < n; ++i) {
    if (reqs[i] == MPI_REQUEST_NULL)
      continue;
    active = 1;
    if (ready(reqs[i])) {
      *index = i;
      *rc = MPI_Wait(&reqs[i], status);
      return 1;
    }
  }
  if (!active) {
    *index = MPI_UNDEFINED;
    return 1;
  }
  return 0;
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status) {
  int rc = MPI_SUCCESS;
  while (!completeAny(n, reqs, index, status, &rc))
    if (yieldWhileWaiting)
      sched_yield();
  return rc;
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag,
                MPI_Status *status) {
  int rc = MPI_SUCCESS;
  *flag = completeAny(n, reqs, index, status, &rc);
  if (!*flag)
    *index = MPI_UNDEFINED;
  return rc;
}

static int completeSome(int n, MPI_Request reqs[], int *outcount, int indices[],
                        MPI_Status statuses[]) {
  int active = 0, rc = MPI_SUCCESS;
  *outcount = 0;
  for (int i = 0; i < n; ++i) {
    if (reqs[i] == MPI_REQUEST_NULL)
      continue;
    active = 1;
    if (ready(reqs[i])) {
      MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE
                                                       : &statuses[*outcount];
      int r = MPI_Wait(&reqs[i], st);
      if (r != MPI_SUCCESS)
        rc = r;
      indices[(*outcount)++] = i;
    }
  }
  if (!active)
    *outcount = MPI_UNDEFINED;
  return rc;
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[]) {
  int rc;
  while ((rc = completeSome(n, reqs, outcount, indices, statuses)),
         *outcount == 0)
    if (yieldWhileWaiting)
      sched_yield();
  return rc;
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[]) {
  return completeSome(n, reqs, outcount, indices, statuses);
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag,
             MPI_Comm comm, MPI_Status *status) {
  MPI_Request r;
  int rc = MPI_Irecv(buf, count, type, source, tag, comm, &r);
  if (rc != MPI_SUCCESS)
    return rc;
  return MPI_Wait(&r, status);
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest,
                 int stag, void *rbuf, int rcount, MPI_Datatype rtype,
                 int source, int rtag, MPI_Comm comm, MPI_Status *status) {
  MPI_Request r[2];
  MPI_Status st[2];
  int rc = MPI_Irecv(rbuf, rcount, rtype, source, rtag, comm, &r[0]);
  if (rc == MPI_SUCCESS)
    rc = MPI_Isend(sbuf, scount, stype, dest, stag, comm, &r[1]);
  if (rc == MPI_SUCCESS)
    rc = MPI_Waitall(2, r, st);
  if (status != MPI_STATUS_IGNORE)
    *status = st[0];
  return rc;
}

/* ---- Calls that would see the header or lose the request. ---- */
int MPI_Request_free(MPI_Request *req) {
  if (find(*req))
    fail("MPI_Request_free");
  return PMPI_Request_free(req);
}

int MPI_Cancel(MPI_Request *req) {
  if (find(*req))
    fail("MPI_Cancel");
  return PMPI_Cancel(req);
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
  (void)source, (void)tag, (void)comm, (void)status;
  fail("MPI_Probe");
  return MPI_ERR_OTHER;
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag,
               MPI_Status *status) {
  (void)source, (void)tag, (void)comm, (void)flag, (void)status;
  fail("MPI_Iprobe");
  return MPI_ERR_OTHER;
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
              MPI_Comm comm) {
  (void)buf, (void)count, (void)type, (void)dest, (void)tag, (void)comm;
  fail("MPI_Bsend");
  return MPI_ERR_OTHER;
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
              MPI_Comm comm) {
  (void)buf, (void)count, (void)type, (void)dest, (void)tag, (void)comm;
  fail("MPI_Rsend");
  return MPI_ERR_OTHER;
}

int MPI_Send_init(const void *buf, int count, MPI_Datatype type, int dest,
                  int tag, MPI_Comm comm, MPI_Request *req) {
  (void)buf, (void)count, (void)type, (void)dest, (void)tag, (void)comm,
      (void)req;
  fail("MPI_Send_init");
  return MPI_ERR_OTHER;
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag,
                  MPI_Comm comm, MPI_Request *req) {
  (void)buf, (void)count, (void)type, (void)source, (void)tag, (void)comm,
      (void)req;
  fail("MPI_Recv_init");
  return MPI_ERR_OTHER;
}

/* ---- Collectives: ceil(log2 p) x L after each returns. ---- */
static void collectiveDelay(void) {
  if (collectives && collectiveNs > 0)
    waitUntil(now() + collectiveNs);
}

int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op,
                  MPI_Comm comm) {
  int rc = PMPI_Allreduce(s, r, n, t, op, comm);
  collectiveDelay();
  return rc;
}

int MPI_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op,
               int root, MPI_Comm comm) {
  int rc = PMPI_Reduce(s, r, n, t, op, root, comm);
  collectiveDelay();
  return rc;
}

int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm comm) {
  int rc = PMPI_Bcast(b, n, t, root, comm);
  collectiveDelay();
  return rc;
}

int MPI_Barrier(MPI_Comm comm) {
  int rc = PMPI_Barrier(comm);
  collectiveDelay();
  return rc;
}

int MPI_Allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn,
                  MPI_Datatype rt, MPI_Comm comm) {
  int rc = PMPI_Allgather(s, sn, st, r, rn, rt, comm);
  collectiveDelay();
  return rc;
}

int MPI_Alltoall(const void *s, int sn, MPI_Datatype st, void *r, int rn,
                 MPI_Datatype rt, MPI_Comm comm) {
  int rc = PMPI_Alltoall(s, sn, st, r, rn, rt, comm);
  collectiveDelay();
  return rc;
}

/* ---- Settings. ---- */
static void configure(void) {
  const char *v = getenv("OPD_DELAY_US");
  latencyNs = v ? (int64_t)llround(atof(v) * 1000.0) : 0;
  v = getenv("OPD_DELAY_GBITS");
  double gbits = v ? atof(v) : 0.0;
  nsPerByte = gbits > 0 ? 8.0 / gbits : 0.0;
  v = getenv("OPD_DELAY_YIELD");
  yieldWhileWaiting = v && strcmp(v, "1") == 0;
  v = getenv("OPD_DELAY_COLLECTIVES");
  collectives = !(v && strcmp(v, "0") == 0);
  int p = 1, rank = 0;
  PMPI_Comm_size(MPI_COMM_WORLD, &p);
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int rounds = 0;
  while ((1 << rounds) < p)
    ++rounds;
  collectiveNs = rounds * latencyNs;
  v = getenv("OPD_DELAY_VERBOSE");
  if (v && strcmp(v, "1") == 0 && rank == 0)
    fprintf(stderr,
            "delay_shim: one-way latency %.1f us, bandwidth %s%.2f Gbit/s, "
            "collectives %s (%d rounds x L)\n",
            (double)latencyNs / 1e3, gbits > 0 ? "" : "unlimited, ", gbits,
            collectives ? "delayed" : "not delayed", rounds);
}

int MPI_Init(int *argc, char ***argv) {
  int rc = PMPI_Init(argc, argv);
  configure();
  return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  configure();
  if (required == MPI_THREAD_MULTIPLE) {
    fprintf(stderr, "delay_shim: error: the request table has no lock: "
                    "MPI_THREAD_MULTIPLE is not supported\n");
    PMPI_Abort(MPI_COMM_WORLD, 2);
  }
  return rc;
}
