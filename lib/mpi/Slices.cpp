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
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <memory>

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

SliceOf::SliceOf(int64_t n) : p_(ranks()), scale_(0) {
  starts_.resize(std::size_t(p_) + 1);
  for (int q = 0; q <= p_; ++q)
    starts_[std::size_t(q)] = sliceLo(n, q);
  scale_ = n > 0 ? double(p_) / double(n) : 0.0;
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

// A buffer reused by every round of every fetch and store, so that a round
// neither zero-fills its buffers nor faults their pages in again (both
// were a third of the partition's time); given back by
// releaseSliceBuffers between the partition's phases.
template <class T> class Scratch {
public:
  T *get(std::size_t n) {
    if (n > cap_) {
      data_.reset(new T[n]); // uninitialised: every element is written
      cap_ = n;
    }
    return data_.get();
  }
  void release() {
    data_.reset();
    cap_ = 0;
  }

private:
  std::unique_ptr<T[]> data_;
  std::size_t cap_ = 0;
};
Scratch<int32_t> holderBuf;
Scratch<int64_t> idBuf, askedBuf;
Scratch<char> sendBuf, recvBuf;

// One row of rowBytes bytes (the partition's rows are mostly 4 or 8).
inline void copyRow(char *dst, const char *src, std::size_t rowBytes) {
  switch (rowBytes) {
  case 4:
    std::memcpy(dst, src, 4);
    break;
  case 8:
    std::memcpy(dst, src, 8);
    break;
  default:
    std::memcpy(dst, src, rowBytes);
  }
}

// The ids of one round that other ranks hold, sent to them. The holder of
// each id goes to holder[k] (this rank's own ids are not sent: the caller
// serves them from its slice); the ids asked of this rank come back in
// asked[0, rd[np]) (counts rc, displacements rd), and what this rank asked
// of each rank has counts sc, displacements sd.
template <class T>
const int64_t *sendIds(const SliceOf &of, const T *ids, std::size_t count,
                       int32_t *holder, std::vector<int> &sc,
                       std::vector<int> &sd, std::vector<int> &rc,
                       std::vector<int> &rd) {
  const std::size_t np = std::size_t(ranks());
  const int me = rank();
  sc.assign(np, 0);
  sd.assign(np + 1, 0);
  rc.assign(np, 0);
  rd.assign(np + 1, 0);
  for (std::size_t k = 0; k < count; ++k) {
    const int q = of(int64_t(ids[k]));
    holder[k] = q;
    ++sc[std::size_t(q)];
  }
  sc[std::size_t(me)] = 0;
  MPI_Alltoall(sc.data(), 1, MPI_INT, rc.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (std::size_t q = 0; q < np; ++q) {
    sd[q + 1] = sd[q] + sc[q];
    rd[q + 1] = toInt(std::size_t(rd[q]) + std::size_t(rc[q]), "indices");
  }
  int64_t *flat = idBuf.get(std::size_t(sd[np]));
  std::vector<int> cursor(sd.begin(), sd.end() - 1);
  for (std::size_t k = 0; k < count; ++k)
    if (holder[k] != me)
      flat[cursor[std::size_t(holder[k])]++] = int64_t(ids[k]);
  int64_t *asked = askedBuf.get(std::size_t(rd[np]));
  MPI_Alltoallv(flat, sc.data(), sd.data(), MPI_INT64_T, asked, rc.data(),
                rd.data(), MPI_INT64_T, MPI_COMM_WORLD);
  return asked;
}

template <class T>
void fetchRound(int64_t n, const char *slice, std::size_t rowBytes,
                const T *ids, std::size_t count, char *out) {
  const SliceOf of(n);
  const int me = rank();
  const std::size_t np = std::size_t(ranks());
  std::vector<int> sc, sd, rc, rd;
  int32_t *holder = holderBuf.get(count);
  const int64_t *asked = sendIds(of, ids, count, holder, sc, sd, rc, rd);
  if (rowBytes == 0)
    return;
  const int64_t lo = sliceLo(n, me);
  // This rank's own rows straight from its slice.
  for (std::size_t k = 0; k < count; ++k)
    if (holder[k] == me)
      copyRow(out + k * rowBytes,
              slice + std::size_t(int64_t(ids[k]) - lo) * rowBytes, rowBytes);
  const std::size_t nAsked = std::size_t(rd[np]);
  char *reply = sendBuf.get(nAsked * rowBytes);
  for (std::size_t j = 0; j < nAsked; ++j)
    copyRow(reply + j * rowBytes,
            slice + std::size_t(asked[j] - lo) * rowBytes, rowBytes);
  char *got = recvBuf.get(std::size_t(sd[np]) * rowBytes);
  MPI_Datatype t = rowType(rowBytes);
  MPI_Alltoallv(reply, rc.data(), rd.data(), t, got, sc.data(), sd.data(), t,
                MPI_COMM_WORLD);
  MPI_Type_free(&t);
  std::vector<int> cursor(sd.begin(), sd.end() - 1);
  for (std::size_t k = 0; k < count; ++k)
    if (holder[k] != me)
      copyRow(out + k * rowBytes,
              got + std::size_t(cursor[std::size_t(holder[k])]++) * rowBytes,
              rowBytes);
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
  const SliceOf of(n);
  const int me = rank();
  const std::size_t np = std::size_t(ranks());
  const int64_t lo = sliceLo(n, me);
  char *dst = static_cast<char *>(slice);
  for (long long r = 0; r < rounds; ++r) {
    const std::size_t begin = std::min(ids.size(), std::size_t(r * batch));
    const std::size_t count =
        std::min(ids.size(), begin + std::size_t(batch)) - begin;
    const int64_t *id = ids.data() + begin;
    const char *src = static_cast<const char *>(rows) + begin * rowBytes;
    std::vector<int> sc, sd, rc, rd;
    int32_t *holder = holderBuf.get(count);
    const int64_t *got = sendIds(of, id, count, holder, sc, sd, rc, rd);
    if (rowBytes == 0)
      continue;
    char *flat = sendBuf.get(std::size_t(sd[np]) * rowBytes);
    std::vector<int> cursor(sd.begin(), sd.end() - 1);
    for (std::size_t k = 0; k < count; ++k) {
      if (holder[k] == me)
        copyRow(dst + std::size_t(id[k] - lo) * rowBytes, src + k * rowBytes,
                rowBytes);
      else
        copyRow(flat + std::size_t(cursor[std::size_t(holder[k])]++) *
                           rowBytes,
                src + k * rowBytes, rowBytes);
    }
    const std::size_t nGot = std::size_t(rd[np]);
    char *in = recvBuf.get(nGot * rowBytes);
    MPI_Datatype t = rowType(rowBytes);
    MPI_Alltoallv(flat, sc.data(), sd.data(), t, in, rc.data(), rd.data(), t,
                  MPI_COMM_WORLD);
    MPI_Type_free(&t);
    for (std::size_t j = 0; j < nGot; ++j)
      copyRow(dst + std::size_t(got[j] - lo) * rowBytes, in + j * rowBytes,
              rowBytes);
  }
}

void releaseSliceBuffers() {
  holderBuf.release();
  idBuf.release();
  askedBuf.release();
  sendBuf.release();
  recvBuf.release();
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
    releaseSliceBuffers(); // a read after the partition: keep nothing
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
  releaseSliceBuffers(); // a write: keep nothing between writes
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

int64_t residentBytes() {
  // Linux: the second field of /proc/self/statm, in pages; -1 elsewhere.
  std::FILE *f = std::fopen("/proc/self/statm", "r");
  if (!f)
    return -1;
  long long size = 0, resident = -1;
  if (std::fscanf(f, "%lld %lld", &size, &resident) != 2)
    resident = -1;
  std::fclose(f);
  const long page = sysconf(_SC_PAGESIZE);
  return resident < 0 || page <= 0 ? -1 : int64_t(resident) * page;
}

} // namespace opdc::rt::dist
