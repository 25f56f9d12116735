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
// Each group is in ascending global order. Maps are rewritten to local
// indices (the entries of non-exec elements, which no loop runs, may point
// at element 0 when their target is not stored), dats are copied to the
// local order, and every rank learns, per neighbour, which of its owned
// elements to send and where the received ones go: each rank asks the
// owners for its halo elements by global index (MPI_Alltoallv).
#include "mpi/Mpi.h"

#include "core/Dist.h"
#include "core/Memory.h"
#include "core/Runtime.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

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

// Builds the exchange lists of `set` from its halo elements' owners.
void buildLists(opd_set *set, const std::vector<int32_t> &owner,
                const std::vector<int32_t> &g2l) {
  const int p = ranks();
  const std::size_t np = std::size_t(p);
  // What I need from each rank: the global ids of my halo elements.
  std::vector<std::vector<int64_t>> want(np);
  std::vector<std::vector<int32_t>> recvAt(np);
  for (int64_t l = set->owned; l < set->size; ++l) {
    const int64_t g = set->globalIds[std::size_t(l)];
    const int q = owner[std::size_t(g)];
    want[std::size_t(q)].push_back(g);
    recvAt[std::size_t(q)].push_back(int32_t(l));
  }
  std::vector<int> sendCounts(np, 0), recvCounts(np, 0);
  for (int q = 0; q < p; ++q)
    sendCounts[std::size_t(q)] = int(want[std::size_t(q)].size());
  MPI_Alltoall(sendCounts.data(), 1, MPI_INT, recvCounts.data(), 1, MPI_INT,
               MPI_COMM_WORLD);
  std::vector<int> sdispl(np + 1, 0), rdispl(np + 1, 0);
  for (int q = 0; q < p; ++q) {
    sdispl[std::size_t(q) + 1] = sdispl[std::size_t(q)] + sendCounts[std::size_t(q)];
    rdispl[std::size_t(q) + 1] = rdispl[std::size_t(q)] + recvCounts[std::size_t(q)];
  }
  std::vector<int64_t> flatWant(std::size_t(sdispl[np]), 0);
  for (int q = 0; q < p; ++q)
    std::copy(want[std::size_t(q)].begin(), want[std::size_t(q)].end(),
              flatWant.begin() + sdispl[std::size_t(q)]);
  std::vector<int64_t> asked(std::size_t(rdispl[np]), 0);
  MPI_Alltoallv(flatWant.data(), sendCounts.data(), sdispl.data(), MPI_INT64_T,
                asked.data(), recvCounts.data(), rdispl.data(), MPI_INT64_T,
                MPI_COMM_WORLD);
  SetHalo &h = halos()[set];
  h.neighbours.clear();
  for (int q = 0; q < p; ++q) {
    if (q == rank())
      continue;
    Neighbour nb;
    nb.rank = q;
    nb.recv = recvAt[std::size_t(q)];
    for (int k = rdispl[std::size_t(q)]; k < rdispl[std::size_t(q) + 1]; ++k) {
      const int32_t l = g2l[std::size_t(asked[std::size_t(k)])];
      if (l < 0 || l >= set->owned)
        failf("internal error: rank %d asked for element %lld of set '%s' "
              "that this rank does not own",
              q, (long long)asked[std::size_t(k)], set->name.c_str());
      nb.send.push_back(l);
    }
    if (!nb.send.empty() || !nb.recv.empty())
      h.neighbours.push_back(std::move(nb));
  }
}

} // namespace

const SetHalo &setHalo(const opd_set *set) { return halos()[set]; }
const std::string &partitionNote() { return noteStorage(); }
std::string partitionDescription() { return noteStorage(); }

void partitionSets() {
  if (done || ranks() == 1)
    return;
  done = true;
  const double t0 = opd_rt_wtime();
  const Owners owners = computeOwners(noteStorage());
  const std::vector<opd_set *> sets = allSets();
  const std::vector<opd_map *> maps = allMaps();
  const int32_t me = rank();
  auto ownerOf = [&](const opd_set *s) -> const std::vector<int32_t> & {
    return owners.at(s);
  };

  // Local numbering. state: 0 not stored, 1 owned, 2 exec, 3 non-exec.
  std::map<const opd_set *, std::vector<char>> state;
  for (opd_set *s : sets) {
    std::vector<char> &st = state[s];
    st.assign(std::size_t(s->globalSize), 0);
    const std::vector<int32_t> &own = ownerOf(s);
    for (int64_t g = 0; g < s->globalSize; ++g)
      if (own[std::size_t(g)] == me)
        st[std::size_t(g)] = 1;
  }
  for (opd_map *m : maps) {
    std::vector<char> &st = state[m->from];
    const std::vector<int32_t> &to = ownerOf(m->to);
    for (int64_t x = 0; x < m->from->globalSize; ++x) {
      if (st[std::size_t(x)] != 0)
        continue;
      for (int k = 0; k < m->arity; ++k)
        if (to[std::size_t(m->data[x * m->arity + k])] == me) {
          st[std::size_t(x)] = 2;
          break;
        }
    }
  }
  for (opd_map *m : maps) {
    const std::vector<char> &from = state[m->from];
    std::vector<char> &to = state[m->to];
    for (int64_t x = 0; x < m->from->globalSize; ++x) {
      const char sx = from[std::size_t(x)];
      if (sx != 1 && sx != 2)
        continue;
      for (int k = 0; k < m->arity; ++k) {
        const int32_t t = m->data[x * m->arity + k];
        if (to[std::size_t(t)] == 0)
          to[std::size_t(t)] = 3;
      }
    }
  }
  // Core: owned elements whose every map target is owned.
  std::map<const opd_set *, std::vector<char>> boundary;
  for (opd_set *s : sets)
    boundary[s].assign(std::size_t(s->globalSize), 0);
  for (opd_map *m : maps) {
    std::vector<char> &b = boundary[m->from];
    const std::vector<char> &to = state[m->to];
    const std::vector<char> &from = state[m->from];
    for (int64_t x = 0; x < m->from->globalSize; ++x) {
      if (from[std::size_t(x)] != 1)
        continue;
      for (int k = 0; k < m->arity; ++k)
        if (to[std::size_t(m->data[x * m->arity + k])] != 1)
          b[std::size_t(x)] = 1;
    }
  }

  std::map<const opd_set *, std::vector<int32_t>> g2l;
  for (opd_set *s : sets) {
    const std::vector<char> &st = state[s];
    const std::vector<char> &b = boundary[s];
    std::vector<int64_t> ids;
    for (int64_t g = 0; g < s->globalSize; ++g)
      if (st[std::size_t(g)] == 1 && !b[std::size_t(g)])
        ids.push_back(g);
    const int64_t core = int64_t(ids.size());
    for (int64_t g = 0; g < s->globalSize; ++g)
      if (st[std::size_t(g)] == 1 && b[std::size_t(g)])
        ids.push_back(g);
    const int64_t owned = int64_t(ids.size());
    for (int64_t g = 0; g < s->globalSize; ++g)
      if (st[std::size_t(g)] == 2)
        ids.push_back(g);
    const int64_t exec = int64_t(ids.size());
    for (int64_t g = 0; g < s->globalSize; ++g)
      if (st[std::size_t(g)] == 3)
        ids.push_back(g);
    if (int64_t(ids.size()) > INT32_MAX)
      failf("set '%s': too many elements on one rank", s->name.c_str());
    std::vector<int32_t> &l = g2l[s];
    l.assign(std::size_t(s->globalSize), -1);
    for (std::size_t i = 0; i < ids.size(); ++i)
      l[std::size_t(ids[i])] = int32_t(i);
    s->core = core;
    s->owned = owned;
    s->execSize = exec;
    s->size = int64_t(ids.size());
    s->globalIds = std::move(ids);
  }

  // Maps and dats in local form.
  for (opd_map *m : maps) {
    const std::vector<int32_t> &to = g2l[m->to];
    const std::size_t bytes =
        std::size_t(m->from->size) * std::size_t(m->arity) * sizeof(int32_t);
    std::string what = "map '" + m->name + "'";
    auto *local = static_cast<int32_t *>(allocZeroed(bytes, what.c_str()));
    for (int64_t l = 0; l < m->from->size; ++l) {
      const int64_t g = m->from->globalIds[std::size_t(l)];
      for (int k = 0; k < m->arity; ++k) {
        const int32_t t = to[std::size_t(m->data[g * m->arity + k])];
        local[l * m->arity + k] = t >= 0 ? t : 0;
      }
    }
    freeAligned(m->data);
    m->data = local;
    ++m->version;
  }
  for (opd_dat *d : allDats()) {
    if (!d->set)
      continue;
    const opd_set *s = d->set;
    const std::size_t eb = std::size_t(d->elementBytes());
    std::string what = d->describe();
    char *local = static_cast<char *>(
        allocZeroed(std::size_t(s->size) * eb, what.c_str()));
    const char *global = static_cast<const char *>(d->data);
    for (int64_t l = 0; l < s->size; ++l)
      std::memcpy(local + std::size_t(l) * eb,
                  global + std::size_t(s->globalIds[std::size_t(l)]) * eb, eb);
    freeAligned(d->data);
    d->data = local;
    d->elements = s->size;
    d->haloValid = INT64_MAX / 4; // copied from the global data
  }
  for (opd_set *s : sets) {
    buildLists(s, ownerOf(s), g2l[s]);
    s->partitioned = true;
  }
  double seconds = opd_rt_wtime() - t0;
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX,
                MPI_COMM_WORLD);
  char took[64];
  std::snprintf(took, sizeof took, "; %.3f s at the first set loop", seconds);
  noteStorage() += took;
  // Balance: the fewest and most elements a rank owns, per set.
  std::string balance;
  for (opd_set *s : sets) {
    int64_t lo = s->owned, hi = s->owned;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    balance += (balance.empty() ? "" : ", ") + s->name + " " +
               std::to_string(lo) + ".." + std::to_string(hi);
  }
  noteStorage() += "\n  owned per rank: " + balance;
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
}

} // namespace opdc::rt::dist
