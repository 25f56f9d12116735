// Halo.cpp - Local numbering of partitioned sets, halos, local maps and
// dats, and the exchange lists between ranks (MPI).
// SPDX-License-Identifier: Apache-2.0
//
// Owner computes, as in OP2. For each set S, rank r stores
//
//   [ core | owned boundary | exec halo | non-exec halo ]
//   0      core            owned       execSize         size
//
//   owned     elements r owns (mpi/Partition.cpp); core first: those whose
//             maps reach only elements r owns (loops without indirect
//             writes run them while halo messages are in flight);
//   exec      elements of other ranks that reach one of r's elements
//             through a map: a loop with indirect increments runs them
//             too, so every owned target gets all its increments locally
//             and nothing is sent back (the halo's own values become
//             garbage and are marked dirty);
//   non-exec  elements of other ranks that an owned or exec element reaches
//             through a map and that are not already stored: read only.
//
// Communication avoidance (issue 12; OP2-CA, Ekanayake et al., ICPP 2023):
// with opd_rt_halo_depth(K, ...), K > 1, the exec halo has K layers,
//
//   [ core | owned boundary | exec 1 | exec 2 | ... | exec K | non-exec ]
//   0      core             owned    execEnd[1]  ...  execEnd[K]      size
//
// so that a loop running l layers runs the prefix [0, execEnd[l]). Level
// 0 is the owned elements; level k is owned and exec layers 1..k plus
// their map targets. Exec layer 1 is the exec halo above; layer k >= 2
// holds the elements of other ranks, not in layers < k, that are stored at
// level k - 1 or reach an element stored there through a map (of any set:
// the levels span all sets). Two invariants follow, which the dirty bits
// (mpi/Exchange.cpp) and the compiler's chain analysis
// (compiler/analysis/LoopChain.h, chainSetHaloLayers) rely on:
//   * the map targets of layers 0..l lie in layers 0..l+1 (of the owned
//     elements, in 0..2); those of layer K may be non-exec;
//   * every element that reaches an element of layers 0..l through a map
//     is in layers 0..l+1: a loop running l+1 layers gives every element of
//     layers 0..l all its increments.
// Non-exec: the targets of owned and exec elements not stored otherwise
// (read only). With K = 1 it is exactly OP2's one layer, built as before.
// The layers come from bit masks over the ranks per slice element (X: in
// layers <= k of rank r; D: stored at level k on rank r), one all-to-all
// per map and layer for the D bits of targets (mpi/HaloLayers.cpp).
// Within exec layer l + 1 (l >= 1) the map targets of layers 0..l come
// first: the set's half steps (SetHalo::halfEnd; half step 3 is OP2's
// one-layer halo whatever K, which plain loops exchange, Exchange.cpp).
// Exchange lists stay in local order, which is layer order: per neighbour,
// sendCut[h] / recvCut[h] count the entries before half step h (entry
// 2K + 1: all, non-exec too), so an exchange h half steps deep sends a
// prefix.
//
// Each group (and each part of a layer) is in ascending global order.
// Maps are rewritten to local indices (the entries of non-exec elements, which
// no loop runs, may point at element 0 when their target is not stored), dats
// are copied to the local order, and every rank learns, per neighbour, which of
// its owned elements to send and where the received ones go: each rank asks the
// owners for its halo elements by global index (MPI_Alltoallv).
//
// All of it from distributed data: the sets come as slices (mpi/Slices.cpp)
// with slice-sized owner arrays (mpi/Partition.cpp). The holder of each
// slice element tells its owner (with whether it is core) and the ranks
// whose elements it reaches through a map (its exec halo there); every
// rank then fetches the map rows of what it stores by global index, finds
// its non-exec halo among their targets, and fetches the dat rows. Lookups
// from global to local indices are sorted tables of what a rank stores, so
// no rank ever holds an array of a set's global size.
#include "mpi/Mpi.h"

#include "core/Device.h"
#include "core/Dist.h"
#include "core/Memory.h"
#include "core/Runtime.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace opdc::rt::dist {
namespace {

std::map<const opd_set *, SetHalo> &halos() {
  static std::map<const opd_set *, SetHalo> all;
  return all;
}
std::string &noteStorage() {
  static std::string note;
  return note;
}
bool done = false;
std::string memoryNote;
// Slice elements handled per round while building the halos.
constexpr int64_t RowBatch = int64_t(1) << 17;

// Global to local indices of what one rank stores: its local order is a few
// runs each in ascending global order (core, boundary, exec, non-exec), so
// a lookup is a binary search per run. Sets that maps point into, whose
// lookups are one per map entry, are also indexed by a table: a direct
// table over the span of the ids stored when they are dense (the span at
// most 4 times as many: block partitions; lookups follow the mesh
// numbering's locality), else a hash table of local indices (open
// addressing, at most half full: 8 bytes an element). Either is several
// times faster than the searches over runs.
struct Lookup {
  const std::vector<int64_t> *ids = nullptr;
  std::vector<std::size_t> runs; ///< run starts, then the end
  std::vector<int32_t> slots;    ///< local index or -1; empty: no table
  bool direct = false;           ///< slots[g - base] (else hashed)
  int64_t base = 0;
  int shift = 64;
  std::size_t slot(int64_t g) const {
    return std::size_t((uint64_t(g) * 0x9E3779B97F4A7C15ull) >> shift);
  }
  // (Re)builds the table over every id stored so far.
  void index() {
    const std::size_t count = runs.back();
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (std::size_t l = 0; l < count; ++l) {
      lo = std::min(lo, (*ids)[l]);
      hi = std::max(hi, (*ids)[l]);
    }
    direct = count > 0 && uint64_t(hi - lo) < 4 * uint64_t(count);
    if (direct) {
      base = lo;
      slots.assign(std::size_t(hi - lo) + 1, -1);
      for (std::size_t l = 0; l < count; ++l)
        slots[std::size_t((*ids)[l] - lo)] = int32_t(l);
      return;
    }
    std::size_t cap = 16;
    while (cap < 2 * count)
      cap <<= 1;
    shift = 64 - std::countr_zero(cap);
    slots.assign(cap, -1);
    const std::size_t mask = cap - 1;
    for (std::size_t l = 0; l < count; ++l) {
      std::size_t h = slot((*ids)[l]);
      while (slots[h] >= 0)
        h = (h + 1) & mask;
      slots[h] = int32_t(l);
    }
  }
  int32_t find(int64_t g) const {
    if (direct)
      return g >= base && uint64_t(g - base) < slots.size()
                 ? slots[std::size_t(g - base)]
                 : -1;
    if (!slots.empty()) {
      const std::size_t mask = slots.size() - 1;
      for (std::size_t h = slot(g);; h = (h + 1) & mask) {
        const int32_t l = slots[h];
        if (l < 0 || (*ids)[std::size_t(l)] == g)
          return l;
      }
    }
    for (std::size_t r = 0; r + 1 < runs.size(); ++r) {
      auto first = ids->begin() + std::ptrdiff_t(runs[r]);
      auto last = ids->begin() + std::ptrdiff_t(runs[r + 1]);
      auto it = std::lower_bound(first, last, g);
      if (it != last && *it == g)
        return int32_t(it - ids->begin());
    }
    return -1;
  }
};

// Builds the exchange lists of `set` from the owners of its halo elements
// (haloOwner[l - owned] for l in [owned, size)); `half` holds the half-step
// ends of its local order (SetHalo::halfEnd).
void buildLists(opd_set *set, const std::vector<int32_t> &haloOwner,
                const Lookup &g2l, const std::vector<int64_t> &half) {
  const int p = ranks();
  const std::size_t np = std::size_t(p);
  // What I need from each rank: the global ids of my halo elements.
  std::vector<std::vector<int64_t>> want(np);
  std::vector<std::vector<int32_t>> recvAt(np);
  for (int64_t l = set->owned; l < set->size; ++l) {
    const int64_t g = set->globalIds[std::size_t(l)];
    const int q = haloOwner[std::size_t(l - set->owned)];
    want[std::size_t(q)].push_back(g);
    recvAt[std::size_t(q)].push_back(int32_t(l));
  }
  std::vector<int> from;
  const std::vector<int64_t> asked = exchangeIds(want, from);
  // Each rank also tells how many of the elements it asked for lie before
  // each half-step end h = 1..2K (its list is in local order, which is
  // layer order; the last end, 2K + 1, is all of them).
  const std::size_t cuts = half.size() - 2;
  std::vector<std::vector<int64_t>> cutsOut(np);
  std::vector<int> cutFrom;
  for (std::size_t q = 0; q < np; ++q)
    for (std::size_t h = 1; h <= cuts; ++h)
      cutsOut[q].push_back(std::lower_bound(recvAt[q].begin(),
                                            recvAt[q].end(), half[h]) -
                           recvAt[q].begin());
  const std::vector<int64_t> cutsIn = exchangeIds(cutsOut, cutFrom);
  SetHalo &h = halos()[set];
  h.halfEnd = half;
  h.neighbours.clear();
  for (int q = 0; q < p; ++q) {
    if (q == rank())
      continue;
    Neighbour nb;
    nb.rank = q;
    nb.recv = recvAt[std::size_t(q)];
    nb.recvCut.assign(half.size(), 0);
    nb.sendCut.assign(half.size(), 0);
    for (std::size_t c = 1; c <= cuts; ++c) {
      nb.recvCut[c] = int32_t(cutsOut[std::size_t(q)][c - 1]);
      nb.sendCut[c] = int32_t(
          cutsIn[std::size_t(cutFrom[std::size_t(q)]) + c - 1]);
    }
    for (int k = from[std::size_t(q)]; k < from[std::size_t(q) + 1]; ++k) {
      const int32_t l = g2l.find(asked[std::size_t(k)]);
      if (l < 0 || l >= set->owned)
        failf("internal error: rank %d asked for element %lld of set '%s' "
              "that this rank does not own",
              q, (long long)asked[std::size_t(k)], set->name.c_str());
      nb.send.push_back(l);
    }
    nb.recvCut.back() = int32_t(nb.recv.size());
    nb.sendCut.back() = int32_t(nb.send.size());
    if (!nb.send.empty() || !nb.recv.empty())
      h.neighbours.push_back(std::move(nb));
  }
}

// A whole set (created by the program) cut down to this rank's slice.
void sliceWhole(opd_set *s) {
  const int64_t lo = sliceLo(s->globalSize, rank());
  const int64_t count = sliceLo(s->globalSize, rank() + 1) - lo;
  for (opd_map *m : allMaps()) {
    if (m->from != s)
      continue;
    std::string what = "map '" + m->name + "'";
    const std::size_t rb = std::size_t(m->arity) * sizeof(int32_t);
    auto *part = static_cast<int32_t *>(
        allocZeroed(std::size_t(count) * rb, what.c_str()));
    if (count > 0)
      std::memcpy(part, m->data + lo * m->arity, std::size_t(count) * rb);
    freeAligned(m->data);
    m->data = part;
  }
  for (opd_dat *d : allDats()) {
    if (d->set != s)
      continue;
    std::string what = d->describe();
    const std::size_t eb = std::size_t(d->elementBytes());
    char *part =
        static_cast<char *>(allocZeroed(std::size_t(count) * eb, what.c_str()));
    if (count > 0)
      std::memcpy(part, static_cast<char *>(d->data) + std::size_t(lo) * eb,
                  std::size_t(count) * eb);
    freeAligned(d->data);
    d->data = part;
    d->elements = count;
  }
  s->size = s->owned = s->execSize = s->core = count;
  s->sliced = true;
}

} // namespace

std::vector<int64_t> sortedUnique(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

const SetHalo &setHalo(const opd_set *set) { return halos()[set]; }
const std::string &partitionNote() { return noteStorage(); }

std::string partitionDescription() {
  // Collective: every rank prints its profile's reductions.
  double read = meshReadSeconds();
  MPI_Allreduce(MPI_IN_PLACE, &read, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  int64_t peak[2] = {peakResidentBytes(), -peakResidentBytes()};
  MPI_Allreduce(MPI_IN_PLACE, peak, 2, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  char text[200];
  std::snprintf(text, sizeof text,
                "\n  mesh read %.3f s (max over ranks); peak resident memory "
                "per rank %.1f..%.1f MiB",
                read, double(-peak[1]) / 1048576.0,
                double(peak[0]) / 1048576.0);
  // No note: one rank, or no set was partitioned (a program of blocks
  // only; their split is the Cartesian grid of ranks).
  const std::string what =
      !noteStorage().empty() ? noteStorage()
      : ranks() == 1         ? std::string("none (one rank)")
                             : std::string("no sets partitioned");
  return what + memoryNote + text;
}

// Gives the heap's free memory back to the system (glibc: malloc_trim).
// Between the partition's phases the freed buffers (the slices replaced by
// local copies, the rounds' messages, the graph) would otherwise stay in
// the process's resident memory, and the next phase's transient would come
// on top of them: peak memory per rank of Airfoil 720k at 4 ranks 85.6 ->
// 78.3 MiB (block partition), 97-99 -> 93.2 (PT-Scotch).
void releaseFreedHeap() {
  releaseSliceBuffers();
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

namespace {

// What partitionSets builds per set, step by step: the global ids of the
// stored elements in local order, the ends of their groups and half steps,
// and the global-to-local lookups; reachedBy and nonExec are transient
// (findNonExec to orderLayers).
struct Layout {
  std::map<const opd_set *, std::vector<int64_t>> ids;
  std::map<const opd_set *, int64_t> coreOf, ownedOf, execOf;
  std::map<const opd_set *, std::vector<int64_t>> execEndOf, halfEndOf;
  std::map<const opd_set *, Lookup> lookup;
  std::set<const opd_set *> targets;
  std::map<const opd_set *, std::vector<int8_t>> reachedBy;
  std::map<const opd_set *, std::vector<int64_t>> nonExec;
};

// The partition's phases, timed for the profile's note.
enum Phase { Owners_, Halo_, Maps_, Dats_, Lists_, Phases };

// Owned (core or boundary) and exec elements, told by the slice holders.
void findOwnedAndExec(const std::vector<opd_set *> &sets,
                      const std::vector<opd_map *> &maps, const Owners &owners,
                      int64_t layers, Layout &lay) {
  const int me = rank();
  const std::size_t np = std::size_t(ranks());
  auto &ids = lay.ids;
  auto &coreOf = lay.coreOf;
  auto &ownedOf = lay.ownedOf;
  auto &execOf = lay.execOf;
  auto &execEndOf = lay.execEndOf;
  std::map<const opd_set *, std::vector<std::vector<int64_t>>> deep;
  if (layers > 1)
    deep = execLayers(owners, layers);
  for (opd_set *s : sets) {
    const int64_t lo = sliceLo(s->globalSize, me);
    const std::vector<int32_t> &own = owners.at(s);
    std::vector<int64_t> core, boundary, exec;
    // In rounds of rows, so that the buffers stay small: the owners of the
    // round's map targets, then each element to its owner (with whether it
    // is core) and to the ranks whose elements it reaches (their exec halo).
    int64_t batch = 0;
    const long long rounds = roundsOf(s->size, RowBatch, batch);
    for (long long r = 0; r < rounds; ++r) {
      const int64_t x0 = std::min<int64_t>(s->size, int64_t(r) * batch);
      const int64_t x1 = std::min<int64_t>(s->size, x0 + batch);
      std::map<const opd_map *, std::vector<int32_t>> targetOwner;
      for (opd_map *m : maps) {
        if (m->from != s)
          continue;
        const std::size_t entries = std::size_t((x1 - x0) * m->arity);
        std::vector<int32_t> &to = targetOwner[m];
        to.assign(entries, 0);
        fetchRows(m->to->globalSize, owners.at(m->to).data(), sizeof(int32_t),
                  m->data + x0 * m->arity, entries, to.data());
      }
      std::vector<std::vector<int64_t>> toOwner(np), toExec(np);
      std::vector<int32_t> reached;
      for (int64_t x = x0; x < x1; ++x) {
        const int32_t o = own[std::size_t(x)];
        reached.clear();
        for (const auto &[m, to] : targetOwner) {
          const int32_t *t = to.data() + (x - x0) * m->arity;
          for (int k = 0; k < m->arity; ++k)
            if (t[k] != o)
              reached.push_back(t[k]);
        }
        toOwner[std::size_t(o)].push_back(lo + x);
        toOwner[std::size_t(o)].push_back(reached.empty() ? 0 : 1);
        std::sort(reached.begin(), reached.end());
        reached.erase(std::unique(reached.begin(), reached.end()),
                      reached.end());
        for (int32_t q : reached)
          toExec[std::size_t(q)].push_back(lo + x);
      }
      std::vector<int> from;
      const std::vector<int64_t> mine = exchangeIds(toOwner, from);
      for (std::size_t k = 0; k + 1 < mine.size(); k += 2)
        (mine[k + 1] ? boundary : core).push_back(mine[k]);
      const std::vector<int64_t> more = exchangeIds(toExec, from);
      exec.insert(exec.end(), more.begin(), more.end());
    }
    exec = sortedUnique(std::move(exec));
    std::sort(core.begin(), core.end());
    std::sort(boundary.begin(), boundary.end());
    std::vector<int64_t> &all = ids[s];
    all = std::move(core);
    coreOf[s] = int64_t(all.size());
    all.insert(all.end(), boundary.begin(), boundary.end());
    ownedOf[s] = int64_t(all.size());
    std::vector<int64_t> &ends = execEndOf[s];
    ends.push_back(int64_t(all.size()));
    if (layers > 1) {
      // Layer 1 is the exec halo found above (the same elements).
      for (const std::vector<int64_t> &layer : deep[s]) {
        all.insert(all.end(), layer.begin(), layer.end());
        ends.push_back(int64_t(all.size()));
      }
      deep[s].clear();
    } else {
      all.insert(all.end(), exec.begin(), exec.end());
      ends.push_back(int64_t(all.size()));
    }
    execOf[s] = ends.back();
  }
}

// Map rows of the owned and exec elements; their targets not stored yet
// are the non-exec halo. (Fetched again by localizeMaps with the non-exec
// rows, so that only one map's rows are held at a time.)
void findNonExec(const std::vector<opd_set *> &sets,
                 const std::vector<opd_map *> &maps, int64_t layers,
                 Layout &lay) {
  auto &ids = lay.ids;
  auto &coreOf = lay.coreOf;
  auto &execEndOf = lay.execEndOf;
  auto &lookup = lay.lookup;
  auto &targets = lay.targets;
  for (const opd_map *m : maps)
    targets.insert(m->to);
  for (opd_set *s : sets) {
    Lookup &l = lookup[s];
    l.ids = &ids[s];
    l.runs = {0, std::size_t(coreOf[s])};
    for (int64_t e : execEndOf[s])
      l.runs.push_back(std::size_t(e));
    if (targets.count(s))
      l.index();
  }
  // With K > 1 layers, the same rows also give, per element of exec
  // layers 2..K, the first layer l of any set whose elements reach it
  // (reachedBy): layer l + 1 is then ordered [targets of layers 0..l |
  // the rest], so that a plain exchange sends OP2's one-layer halo as a
  // prefix (targets of layers 0..1 = cut 3, Exchange.cpp's half steps).
  auto &reachedBy = lay.reachedBy;
  if (layers > 1)
    for (opd_set *s : sets)
      reachedBy[s].assign(
          std::size_t(execEndOf[s].back() - execEndOf[s][1]), INT8_MAX);
  auto &nonExec = lay.nonExec;
  for (opd_map *m : maps) {
    const std::vector<int64_t> &want = ids[m->from];
    const std::size_t entries = want.size() * std::size_t(m->arity);
    std::unique_ptr<int32_t[]> r(new int32_t[entries]); // all fetched
    fetchRows(m->from->globalSize, m->data,
              std::size_t(m->arity) * sizeof(int32_t), want, r.get());
    const Lookup &to = lookup[m->to];
    const std::vector<int64_t> &fromEnd = execEndOf[m->from];
    const int64_t second = execEndOf[m->to][1];
    std::vector<int8_t> *by = layers > 1 ? &reachedBy[m->to] : nullptr;
    std::vector<int64_t> &extra = nonExec[m->to];
    int8_t layer = 0;
    for (std::size_t k = 0; k < entries; ++k) {
      const int64_t e = int64_t(k) / m->arity;
      while (std::size_t(layer) < fromEnd.size() &&
             e >= fromEnd[std::size_t(layer)])
        ++layer;
      const int32_t t = to.find(r[k]);
      if (t < 0)
        extra.push_back(r[k]);
      else if (by && t >= second) {
        int8_t &b = (*by)[std::size_t(t - second)];
        b = std::min(b, layer);
      }
    }
    extra = sortedUnique(std::move(extra));
  }
}

// Orders each exec layer l + 1 by its half steps (the targets of layers
// 0..l first) and appends the non-exec halo: the sets' final local order.
void orderLayers(const std::vector<opd_set *> &sets, int64_t layers,
                 Layout &lay) {
  auto &ids = lay.ids;
  auto &execEndOf = lay.execEndOf;
  auto &lookup = lay.lookup;
  auto &targets = lay.targets;
  auto &reachedBy = lay.reachedBy;
  auto &nonExec = lay.nonExec;
  auto &halfEndOf = lay.halfEndOf;
  for (opd_set *s : sets) {
    std::vector<int64_t> &all = ids[s];
    const std::vector<int64_t> &ends = execEndOf[s];
    // Half steps h = 0..2K+1: 2l ends exec layer l, 2l+1 the targets of
    // layers 0..l in layer l + 1 (the whole non-exec halo for l = K).
    std::vector<int64_t> &half = halfEndOf[s];
    half.assign(2 * std::size_t(layers) + 2, 0);
    half[0] = ends[0];
    half[1] = ends[1];
    const std::vector<int8_t> &by = reachedBy[s];
    for (int64_t l = 1; l <= layers; ++l) {
      half[2 * std::size_t(l)] = ends[std::size_t(l)];
      if (l == layers)
        break;
      const auto first = all.begin() + std::ptrdiff_t(ends[std::size_t(l)]);
      const auto last = all.begin() + std::ptrdiff_t(ends[std::size_t(l) + 1]);
      std::vector<int64_t> near, far;
      for (auto it = first; it != last; ++it) {
        const int64_t at = it - all.begin();
        (by[std::size_t(at - ends[1])] <= l ? near : far).push_back(*it);
      }
      std::copy(near.begin(), near.end(), first);
      std::copy(far.begin(), far.end(), first + std::ptrdiff_t(near.size()));
      half[2 * std::size_t(l) + 1] =
          ends[std::size_t(l)] + int64_t(near.size());
    }
    reachedBy.erase(s);
    all.insert(all.end(), nonExec[s].begin(), nonExec[s].end());
    nonExec[s] = std::vector<int64_t>();
    if (int64_t(all.size()) > INT32_MAX)
      failf("set '%s': too many elements on one rank", s->name.c_str());
    half.back() = int64_t(all.size());
    // Each part of a layer is in ascending global order: a run of the
    // lookup.
    std::vector<std::size_t> &runs = lookup[s].runs;
    for (int64_t l = 1; l < layers; ++l)
      runs.push_back(std::size_t(half[2 * std::size_t(l) + 1]));
    runs.push_back(all.size());
    std::sort(runs.begin(), runs.end());
    if (targets.count(s))
      lookup[s].index();
  }
}

// Maps in local form: every stored element's row, fetched straight into
// the local map and translated in place.
void localizeMaps(const std::vector<opd_map *> &maps, Layout &lay) {
  auto &ids = lay.ids;
  auto &lookup = lay.lookup;
  for (opd_map *m : maps) {
    const std::vector<int64_t> &want = ids[m->from];
    std::string what = "map '" + m->name + "'";
    auto *local = static_cast<int32_t *>(allocZeroed(
        want.size() * std::size_t(m->arity) * sizeof(int32_t), what.c_str()));
    fetchRows(m->from->globalSize, m->data,
              std::size_t(m->arity) * sizeof(int32_t), want, local);
    const Lookup &to = lookup[m->to];
    for (std::size_t k = 0; k < want.size() * std::size_t(m->arity); ++k) {
      const int32_t t = to.find(local[k]);
      local[k] = t >= 0 ? t : 0;
    }
    freeAligned(m->data);
    m->data = local;
    ++m->version;
    releaseFreedHeap();
  }
}

// Dats in local order, and the sets' new local layout.
void localizeDats(const std::vector<opd_set *> &sets, Layout &lay) {
  auto &ids = lay.ids;
  auto &coreOf = lay.coreOf;
  auto &ownedOf = lay.ownedOf;
  auto &execEndOf = lay.execEndOf;
  for (opd_dat *d : allDats()) {
    if (!d->set)
      continue;
    const opd_set *s = d->set;
    const std::vector<int64_t> &all = ids[s];
    const std::size_t eb = std::size_t(d->elementBytes());
    std::string what = d->describe();
    char *local =
        static_cast<char *>(allocZeroed(all.size() * eb, what.c_str()));
    fetchRows(s->globalSize, d->data, eb, all, local);
    freeAligned(d->data);
    d->data = local;
    d->elements = int64_t(all.size());
    releaseFreedHeap();
    d->haloValid = INT64_MAX / 4; // copied from the slices
  }
  for (opd_set *s : sets) {
    std::vector<int64_t> &all = ids[s];
    s->core = coreOf[s];
    s->owned = ownedOf[s];
    s->execEnd = execEndOf[s];
    s->execSize = s->execEnd[1];
    s->size = int64_t(all.size());
    s->globalIds = std::move(all);
    s->sliced = false;
    s->partitioned = true;
  }
}

// Exchange lists, from the owners of the halo elements.
void buildAllLists(const std::vector<opd_set *> &sets, const Owners &owners,
                   Layout &lay) {
  auto &lookup = lay.lookup;
  auto &halfEndOf = lay.halfEndOf;
  for (opd_set *s : sets) {
    std::vector<int64_t> halo(s->globalIds.begin() + s->owned,
                              s->globalIds.end());
    std::vector<int32_t> haloOwner(halo.size(), 0);
    fetchRows(s->globalSize, owners.at(s).data(), sizeof(int32_t), halo,
              haloOwner.data());
    Lookup &l = lookup[s];
    l.ids = &s->globalIds; // moved there
    buildLists(s, haloOwner, l, halfEndOf[s]);
  }
}

// The profile's note: each phase's seconds (max over ranks), the balance of
// owned elements and the peak memory per rank.
void notePartition(const std::vector<opd_set *> &sets,
                   const double (&phase)[Phases], double t0, const char *when) {
  double seconds[Phases + 1];
  std::copy(phase, phase + Phases, seconds);
  seconds[Phases] = opd_rt_wtime() - t0;
  MPI_Allreduce(MPI_IN_PLACE, seconds, Phases + 1, MPI_DOUBLE, MPI_MAX,
                MPI_COMM_WORLD);
  char took[200];
  std::snprintf(took, sizeof took,
                "; %.3f s %s (partitioner %.3f s; halos "
                "%.3f s, maps %.3f s, dats %.3f s, exchange lists %.3f s)",
                seconds[Phases], when, seconds[Owners_], seconds[Halo_],
                seconds[Maps_], seconds[Dats_], seconds[Lists_]);
  noteStorage() += took;
  // Balance: the fewest and most elements a rank owns, per set.
  std::string balance;
  for (opd_set *s : sets) {
    int64_t range[2] = {-s->owned, s->owned};
    MPI_Allreduce(MPI_IN_PLACE, range, 2, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    balance += (balance.empty() ? "" : ", ") + s->name + " " +
               std::to_string(-range[0]) + ".." + std::to_string(range[1]);
  }
  noteStorage() += "\n  owned per rank: " + balance;
  // Peak memory up to here (reading and partitioning), fewest and most,
  // and what each rank holds once the partition is done (the mesh's share
  // and halo: the partition's transient is given back).
  const int64_t now = residentBytes();
  int64_t peak[4] = {-peakResidentBytes(), peakResidentBytes(), -now, now};
  MPI_Allreduce(MPI_IN_PLACE, peak, 4, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  char mem[200];
  std::snprintf(mem, sizeof mem,
                "\n  peak resident memory per rank after the partition "
                "%.1f..%.1f MiB",
                double(-peak[0]) / 1048576.0, double(peak[1]) / 1048576.0);
  memoryNote = mem;
  if (-peak[2] >= 0) {
    std::snprintf(mem, sizeof mem,
                  " (resident once it is done %.1f..%.1f MiB)",
                  double(-peak[2]) / 1048576.0, double(peak[3]) / 1048576.0);
    memoryNote += mem;
  }
}

} // namespace

void partitionSets(const char *when) {
  if (done || ranks() == 1)
    return;
  done = true;
  // Device copies (a GPU program) are made again from the local storage.
  deviceRelease();
  const double t0 = opd_rt_wtime();
  const std::vector<opd_set *> sets = allSets();
  const std::vector<opd_map *> maps = allMaps();
  for (opd_set *s : sets)
    if (!s->sliced)
      sliceWhole(s);
  const Owners owners = computeOwners(noteStorage());
  // Seconds of each phase (max over ranks, in the profile's note).
  double phase[Phases] = {};
  double mark = t0;
  auto phaseEnd = [&](Phase p) {
    const double now = opd_rt_wtime();
    phase[p] += now - mark;
    mark = now;
  };
  phaseEnd(Owners_);
  releaseFreedHeap();
  Layout lay;
  const int64_t layers = setHaloLayers();
  findOwnedAndExec(sets, maps, owners, layers, lay);
  phaseEnd(Halo_);
  releaseFreedHeap();
  findNonExec(sets, maps, layers, lay);
  orderLayers(sets, layers, lay);
  phaseEnd(Halo_);
  localizeMaps(maps, lay);
  phaseEnd(Maps_);
  localizeDats(sets, lay);
  releaseFreedHeap();
  phaseEnd(Dats_);
  buildAllLists(sets, owners, lay);
  releaseFreedHeap();
  phaseEnd(Lists_);
  notePartition(sets, phase, t0, when);
}

void setCreated(opd_set *set) {
  if (done)
    failf("set '%s': sets must be created before the first loop when the "
          "program runs on several ranks",
          set->name.c_str());
}

void releaseUnstructured() {
  halos().clear();
  done = false;
  memoryNote.clear();
}

} // namespace opdc::rt::dist
