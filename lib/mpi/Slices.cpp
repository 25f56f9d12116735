// Slices.cpp - Meshes read in parallel: sets stored as contiguous slices
// until the partition, the all-to-all moves between slices and the
// partition's owners, agreed errors, turns (MPI).
// SPDX-License-Identifier: Apache-2.0
//
// A set of n elements read from a file is stored on rank r, until the
// partition, as the slice [n*r/p, n*(r+1)/p) of its global numbering
// (set->sliced): every rank reads only those rows of each map and dat from
// the file (a hyperslab, io/HDF5IO.cpp) and no rank holds a whole mesh-sized
// array. The partition (mpi/Partition.cpp, Halo.cpp) works on the slices
// and moves rows between ranks with fetchRows (each rank asks the slice
// holders for the rows it needs, by global index: two MPI_Alltoallv) and
// storeRows (the inverse, used to write files in the original numbering).
//
// Errors while reading are captured on each rank (CaptureFailures) and
// agreed on (agreeOnFailure: one MPI_Allreduce of the lowest failing rank,
// whose message that rank prints); then every rank leaves through
// MPI_Finalize with status 1, so no rank hangs in a later collective.
#include "mpi/Mpi.h"

#include "core/Device.h"
#include "core/Dist.h"
#include "core/Memory.h"
#include "core/Runtime.h"

#include <sys/resource.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

namespace opdc::rt::dist {
namespace {
double readSeconds = 0;

// A datatype of `bytes` contiguous bytes (committed; freed by the caller).
MPI_Datatype rowType(std::size_t bytes) {
  if (bytes > std::size_t(INT_MAX))
    fail("internal error: a row of more than 2 GiB");
  MPI_Datatype t;
  MPI_Type_contiguous(int(bytes), MPI_BYTE, &t);
  MPI_Type_commit(&t);
  return t;
}

int toInt(std::size_t n, const char *what) {
  if (n > std::size_t(INT_MAX))
    failf("more than 2^31 %s to exchange between two ranks at once", what);
  return int(n);
}
} // namespace

long long roundsOf(int64_t count, int64_t least, int64_t &batch) {
  int64_t most = count;
  MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  batch = std::max(least, (most + 3) / 4);
  return (long long)((most + batch - 1) / batch);
}

int64_t sliceLo(int64_t n, int r) {
  // n*r/p without overflow for n below 2^62 and p below 2^31.
  const int64_t p = ranks();
  return n / p * r + (n % p) * r / p;
}

int sliceRank(int64_t n, int64_t g) {
  // The last r with sliceLo(n, r) <= g: g*p/n, corrected with the slices'
  // starts for this n (kept from the previous call: callers ask many ids of
  // one set in a row).
  static int64_t cachedN = -1;
  static std::vector<int64_t> starts;
  const int p = ranks();
  if (n <= 0)
    return 0;
  if (n != cachedN || int(starts.size()) != p + 1) {
    starts.resize(std::size_t(p) + 1);
    for (int q = 0; q <= p; ++q)
      starts[std::size_t(q)] = sliceLo(n, q);
    cachedN = n;
  }
  int r = int(double(g) / double(n) * double(p));
  r = std::min(std::max(r, 0), p - 1);
  while (r + 1 < p && starts[std::size_t(r) + 1] <= g)
    ++r;
  while (r > 0 && starts[std::size_t(r)] > g)
    --r;
  return r;
}

std::vector<int64_t> exchangeIds(const std::vector<std::vector<int64_t>> &send,
                                 std::vector<int> &from) {
  const int p = ranks();
  const std::size_t np = std::size_t(p);
  std::vector<int> sc(np, 0), rc(np, 0), sd(np + 1, 0);
  from.assign(np + 1, 0);
  for (std::size_t q = 0; q < np; ++q)
    sc[q] = toInt(send[q].size(), "indices");
  MPI_Alltoall(sc.data(), 1, MPI_INT, rc.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (std::size_t q = 0; q < np; ++q) {
    sd[q + 1] = toInt(std::size_t(sd[q]) + std::size_t(sc[q]), "indices");
    from[q + 1] = toInt(std::size_t(from[q]) + std::size_t(rc[q]), "indices");
  }
  std::vector<int64_t> flat(std::size_t(sd[np]));
  for (std::size_t q = 0; q < np; ++q)
    std::copy(send[q].begin(), send[q].end(), flat.begin() + sd[q]);
  std::vector<int64_t> got(std::size_t(from[np]));
  MPI_Alltoallv(flat.data(), sc.data(), sd.data(), MPI_INT64_T, got.data(),
                rc.data(), from.data(), MPI_INT64_T, MPI_COMM_WORLD);
  return got;
}

namespace {
// Ids per rank and round of fetchRows and storeRows, at least: their
// buffers (about 40 bytes an id plus the rows) stay a quarter of the
// request or this, whichever is more.
constexpr int64_t Batch = int64_t(1) << 16;

// One round: the ids grouped by slice holder (counts sc, displacements sd),
// sent; the ids asked of this rank come back in `asked` (rc, rd).
template <class T>
void sendIds(int64_t n, const T *ids, std::size_t count, std::vector<int> &sc,
             std::vector<int> &sd, std::vector<int> &rc, std::vector<int> &rd,
             std::vector<int64_t> &asked) {
  const std::size_t np = std::size_t(ranks());
  sc.assign(np, 0);
  sd.assign(np + 1, 0);
  rc.assign(np, 0);
  rd.assign(np + 1, 0);
  for (std::size_t k = 0; k < count; ++k)
    ++sc[std::size_t(sliceRank(n, int64_t(ids[k])))];
  MPI_Alltoall(sc.data(), 1, MPI_INT, rc.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (std::size_t q = 0; q < np; ++q) {
    sd[q + 1] = sd[q] + sc[q];
    rd[q + 1] = toInt(std::size_t(rd[q]) + std::size_t(rc[q]), "indices");
  }
  std::vector<int64_t> flat(count);
  std::vector<int> cursor(sd.begin(), sd.end() - 1);
  for (std::size_t k = 0; k < count; ++k) {
    const int64_t g = int64_t(ids[k]);
    flat[std::size_t(cursor[std::size_t(sliceRank(n, g))]++)] = g;
  }
  asked.resize(std::size_t(rd[np]));
  MPI_Alltoallv(flat.data(), sc.data(), sd.data(), MPI_INT64_T, asked.data(),
                rc.data(), rd.data(), MPI_INT64_T, MPI_COMM_WORLD);
}

template <class T>
void fetchRound(int64_t n, const char *slice, std::size_t rowBytes,
                const T *ids, std::size_t count, char *out) {
  std::vector<int> sc, sd, rc, rd;
  std::vector<int64_t> asked;
  sendIds(n, ids, count, sc, sd, rc, rd, asked);
  if (rowBytes == 0)
    return;
  const int64_t lo = sliceLo(n, rank());
  std::vector<char> reply(asked.size() * rowBytes);
  for (std::size_t j = 0; j < asked.size(); ++j)
    std::memcpy(reply.data() + j * rowBytes,
                slice + std::size_t(asked[j] - lo) * rowBytes, rowBytes);
  asked = std::vector<int64_t>();
  std::vector<char> got(count * rowBytes);
  MPI_Datatype t = rowType(rowBytes);
  MPI_Alltoallv(reply.data(), rc.data(), rd.data(), t, got.data(), sc.data(),
                sd.data(), t, MPI_COMM_WORLD);
  MPI_Type_free(&t);
  std::vector<int> cursor(sd.begin(), sd.end() - 1);
  for (std::size_t k = 0; k < count; ++k) {
    const int q = sliceRank(n, int64_t(ids[k]));
    std::memcpy(out + k * rowBytes,
                got.data() + std::size_t(cursor[std::size_t(q)]++) * rowBytes,
                rowBytes);
  }
}

template <class T>
void fetchAll(int64_t n, const void *slice, std::size_t rowBytes, const T *ids,
              std::size_t count, void *out) {
  int64_t batch = 0;
  const long long rounds = roundsOf(int64_t(count), Batch, batch);
  for (long long r = 0; r < rounds; ++r) {
    const std::size_t begin = std::min(count, std::size_t(r * batch));
    const std::size_t end = std::min(count, begin + std::size_t(batch));
    fetchRound(n, static_cast<const char *>(slice), rowBytes, ids + begin,
               end - begin, static_cast<char *>(out) + begin * rowBytes);
  }
}
} // namespace

void fetchRows(int64_t n, const void *slice, std::size_t rowBytes,
               const std::vector<int64_t> &ids, void *out) {
  fetchAll(n, slice, rowBytes, ids.data(), ids.size(), out);
}
void fetchRows(int64_t n, const void *slice, std::size_t rowBytes,
               const int32_t *ids, std::size_t count, void *out) {
  fetchAll(n, slice, rowBytes, ids, count, out);
}

void storeRows(int64_t n, const void *rows, std::size_t rowBytes,
               const std::vector<int64_t> &ids, void *slice) {
  int64_t batch = 0;
  const long long rounds = roundsOf(int64_t(ids.size()), Batch, batch);
  const int64_t lo = sliceLo(n, rank());
  for (long long r = 0; r < rounds; ++r) {
    const std::size_t begin = std::min(ids.size(), std::size_t(r * batch));
    const std::size_t count =
        std::min(ids.size(), begin + std::size_t(batch)) - begin;
    const int64_t *id = ids.data() + begin;
    const char *src = static_cast<const char *>(rows) + begin * rowBytes;
    std::vector<int> sc, sd, rc, rd;
    std::vector<int64_t> got;
    sendIds(n, id, count, sc, sd, rc, rd, got);
    if (rowBytes == 0)
      continue;
    std::vector<char> flat(count * rowBytes);
    std::vector<int> cursor(sd.begin(), sd.end() - 1);
    for (std::size_t k = 0; k < count; ++k)
      std::memcpy(flat.data() +
                      std::size_t(cursor[std::size_t(sliceRank(n, id[k]))]++) *
                          rowBytes,
                  src + k * rowBytes, rowBytes);
    std::vector<char> in(got.size() * rowBytes);
    MPI_Datatype t = rowType(rowBytes);
    MPI_Alltoallv(flat.data(), sc.data(), sd.data(), t, in.data(), rc.data(),
                  rd.data(), t, MPI_COMM_WORLD);
    MPI_Type_free(&t);
    char *dst = static_cast<char *>(slice);
    for (std::size_t j = 0; j < got.size(); ++j)
      std::memcpy(dst + std::size_t(got[j] - lo) * rowBytes,
                  in.data() + j * rowBytes, rowBytes);
  }
}

void fileRows(int64_t n, int64_t &first, int64_t &count) {
  first = sliceLo(n, rank());
  count = sliceLo(n, rank() + 1) - first;
}

void sliceSet(opd_set *set) {
  if (ranks() == 1 || set->partitioned)
    return;
  int64_t first = 0, count = 0;
  fileRows(set->globalSize, first, count);
  set->size = set->owned = set->execSize = set->core = count;
  set->sliced = true;
}

void placeRows(const opd_set *set, const void *rows, std::size_t rowBytes,
               void *dest) {
  const int64_t n = set->globalSize;
  if (ranks() == 1 || set->sliced) {
    if (set->size > 0 && rowBytes > 0)
      std::memcpy(dest, rows, std::size_t(set->size) * rowBytes);
    return;
  }
  if (set->partitioned) {
    fetchRows(n, rows, rowBytes, set->globalIds, dest);
    return;
  }
  // A whole set (created by the program, not read): every rank all rows.
  const std::size_t np = std::size_t(ranks());
  std::vector<int> counts(np), displs(np);
  for (int q = 0; q < ranks(); ++q) {
    counts[std::size_t(q)] = toInt(std::size_t(sliceLo(n, q + 1) - sliceLo(n, q)), "rows");
    displs[std::size_t(q)] = toInt(std::size_t(sliceLo(n, q)), "rows");
  }
  if (rowBytes == 0)
    return;
  MPI_Datatype t = rowType(rowBytes);
  MPI_Allgatherv(rows, counts[std::size_t(rank())], t, dest, counts.data(),
                 displs.data(), t, MPI_COMM_WORLD);
  MPI_Type_free(&t);
}

void rowsToWrite(const opd_dat *dat, std::vector<char> &rows) {
  const opd_set *s = dat->set;
  const std::size_t eb = std::size_t(dat->elementBytes());
  int64_t first = 0, count = 0;
  fileRows(s->globalSize, first, count);
  rows.assign(std::size_t(count) * eb, 0);
  const char *data = static_cast<const char *>(dat->data);
  if (ranks() == 1 || s->sliced) {
    if (!rows.empty())
      std::memcpy(rows.data(), data, rows.size());
    return;
  }
  if (!s->partitioned) {
    if (!rows.empty())
      std::memcpy(rows.data(), data + std::size_t(first) * eb, rows.size());
    return;
  }
  // Owned elements to the ranks whose slices hold them.
  std::vector<int64_t> owned(s->globalIds.begin(),
                             s->globalIds.begin() + s->owned);
  storeRows(s->globalSize, data, eb, owned, rows.data());
}

void agreeOnFailure(const std::string &error) {
  int first = error.empty() ? INT_MAX : rank();
  if (ranks() > 1)
    MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == INT_MAX)
    return;
  // The lowest failing rank speaks for all; everyone leaves in order.
  if (first == rank())
    printError(error);
  exitJob(1);
}

void inTurn(const std::function<void()> &turn) {
  // A token passed from rank to rank: rank r runs after r - 1 finished.
  int token = 0;
  if (rank() > 0)
    MPI_Recv(&token, 1, MPI_INT, rank() - 1, 77, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
  turn();
  if (rank() + 1 < ranks())
    MPI_Send(&token, 1, MPI_INT, rank() + 1, 77, MPI_COMM_WORLD);
}

void gatherSets() {
  if (ranks() == 1)
    return;
  bool released = false;
  for (opd_set *s : allSets()) {
    if (!s->sliced)
      continue;
    if (!released) // device copies (a GPU program) of the slices go
      deviceRelease();
    released = true;
    s->sliced = false;
    const int64_t n = s->globalSize;
    for (opd_map *m : allMaps()) {
      if (m->from != s)
        continue;
      const std::size_t rb = std::size_t(m->arity) * sizeof(int32_t);
      std::string what = "map '" + m->name + "'";
      auto *whole = static_cast<int32_t *>(
          allocZeroed(std::size_t(n) * rb, what.c_str()));
      placeRows(s, m->data, rb, whole);
      freeAligned(m->data);
      m->data = whole;
      ++m->version;
    }
    for (opd_dat *d : allDats()) {
      if (d->set != s)
        continue;
      const std::size_t eb = std::size_t(d->elementBytes());
      std::string what = d->describe();
      char *whole =
          static_cast<char *>(allocZeroed(std::size_t(n) * eb, what.c_str()));
      placeRows(s, d->data, eb, whole);
      freeAligned(d->data);
      d->data = whole;
      d->elements = n;
    }
    s->size = s->owned = s->execSize = s->core = n;
  }
}

void addReadSeconds(double seconds) { readSeconds += seconds; }
double meshReadSeconds() { return readSeconds; }

int64_t peakResidentBytes() {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return int64_t(u.ru_maxrss) * 1024;
}

} // namespace opdc::rt::dist
