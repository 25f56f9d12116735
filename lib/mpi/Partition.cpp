// Partition.cpp - Which rank owns each element of each set (MPI).
// SPDX-License-Identifier: Apache-2.0
//
// Runs once, at the first set loop, when every rank still holds the whole
// mesh (sets, maps and dats are read or created globally, as declared).
//
// Primary set: the set most maps point into (ties: the larger, then the
// first declared); Airfoil's nodes. It is partitioned
//   * --partition=metis (default): METIS k-way on its graph, two elements
//     adjacent when one element of another set maps to both (the node
//     graph of cells and edges); computed on rank 0 with a fixed seed and
//     broadcast, so the partition is the same on every run;
//   * --partition=block: contiguous ranges of size/ranks elements.
// Derived sets, repeatedly until nothing changes: an element of a map's
// source set goes to the owner of its first target (a cell to the owner
// of its first node); an element of a map's target set that is still
// unowned goes to the owner of the first source element mapping to it.
// Sets no map relates to a partitioned one are split in blocks.
#include "mpi/Mpi.h"

#include "core/Dist.h"
#include "core/Runtime.h"

#include <metis.h>

#include <algorithm>
#include <cinttypes>

namespace opdc::rt::dist {
namespace {

std::vector<int32_t> blockOwners(int64_t n) {
  std::vector<int32_t> owner(std::size_t(n), 0);
  const int64_t p = ranks();
  for (int64_t r = 0; r < p; ++r)
    for (int64_t i = n * r / p; i < n * (r + 1) / p; ++i)
      owner[std::size_t(i)] = int32_t(r);
  return owner;
}

// METIS k-way on the primary set's graph (rank 0), broadcast to all.
std::vector<int32_t> metisOwners(opd_set *primary, std::string &note) {
  const int64_t n = primary->globalSize;
  std::vector<int32_t> owner(std::size_t(n), 0);
  int64_t cut = 0;
  if (rank() == 0) {
    std::vector<std::pair<int32_t, int32_t>> pairs;
    for (opd_map *m : allMaps()) {
      if (m->to != primary || m->arity < 2)
        continue;
      const int a = m->arity;
      for (int64_t x = 0; x < m->from->globalSize; ++x) {
        const int32_t *t = m->data + x * a;
        for (int i = 0; i < a; ++i)
          for (int j = 0; j < a; ++j)
            if (t[i] != t[j])
              pairs.push_back({t[i], t[j]});
      }
    }
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    std::vector<idx_t> xadj(std::size_t(n) + 1, 0), adjncy(pairs.size());
    for (const auto &p : pairs)
      ++xadj[std::size_t(p.first) + 1];
    for (int64_t i = 0; i < n; ++i)
      xadj[std::size_t(i) + 1] += xadj[std::size_t(i)];
    for (std::size_t k = 0; k < pairs.size(); ++k)
      adjncy[k] = idx_t(pairs[k].second);
    idx_t nv = idx_t(n), ncon = 1, nparts = idx_t(ranks()), objval = 0;
    std::vector<idx_t> part(std::size_t(n), 0);
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = 12345;
    options[METIS_OPTION_NUMBERING] = 0;
    int rc = n > 0 && !pairs.empty()
                 ? METIS_PartGraphKway(&nv, &ncon, xadj.data(), adjncy.data(),
                                       nullptr, nullptr, nullptr, &nparts,
                                       nullptr, nullptr, options, &objval,
                                       part.data())
                 : METIS_ERROR;
    if (rc == METIS_OK) {
      for (int64_t i = 0; i < n; ++i)
        owner[std::size_t(i)] = int32_t(part[std::size_t(i)]);
      cut = objval;
    } else {
      owner = blockOwners(n);
      cut = -1;
    }
  }
  MPI_Bcast(owner.data(), int(n), MPI_INT32_T, 0, MPI_COMM_WORLD);
  MPI_Bcast(&cut, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  note = cut >= 0 ? "metis k-way on set '" + primary->name +
                        "', edge cut " + std::to_string(cut)
                  : "metis failed on set '" + primary->name +
                        "'; block partition";
  return owner;
}

} // namespace

Owners computeOwners(std::string &note) {
  Owners owners;
  const std::vector<opd_set *> sets = allSets();
  const std::vector<opd_map *> maps = allMaps();
  // The primary set: most incoming maps, then larger, then first.
  opd_set *primary = nullptr;
  int best = 0;
  for (opd_set *s : sets) {
    int in = 0;
    for (opd_map *m : maps)
      in += m->to == s;
    if (in > best || (in == best && in > 0 && primary &&
                      s->globalSize > primary->globalSize)) {
      best = in;
      primary = s;
    }
  }
  if (primary) {
    if (partitionMethod() == PartitionMethod::Metis) {
      owners[primary] = metisOwners(primary, note);
    } else {
      owners[primary] = blockOwners(primary->globalSize);
      note = "block partition of set '" + primary->name + "'";
    }
  } else {
    note = "block partition (no maps)";
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (opd_map *m : maps) {
      const bool fromKnown = owners.count(m->from) != 0;
      const bool toKnown = owners.count(m->to) != 0;
      if (!fromKnown && toKnown) {
        const std::vector<int32_t> &to = owners[m->to];
        std::vector<int32_t> own(std::size_t(m->from->globalSize), 0);
        for (int64_t x = 0; x < m->from->globalSize; ++x)
          own[std::size_t(x)] = to[std::size_t(m->data[x * m->arity])];
        owners[m->from] = std::move(own);
        changed = true;
      } else if (fromKnown && !toKnown) {
        const std::vector<int32_t> &from = owners[m->from];
        std::vector<int32_t> own = blockOwners(m->to->globalSize);
        std::vector<char> seen(std::size_t(m->to->globalSize), 0);
        for (int64_t x = 0; x < m->from->globalSize; ++x)
          for (int k = 0; k < m->arity; ++k) {
            const int32_t t = m->data[x * m->arity + k];
            if (!seen[std::size_t(t)]) {
              seen[std::size_t(t)] = 1;
              own[std::size_t(t)] = from[std::size_t(x)];
            }
          }
        owners[m->to] = std::move(own);
        changed = true;
      }
    }
  }
  for (opd_set *s : sets)
    if (!owners.count(s))
      owners[s] = blockOwners(s->globalSize);
  return owners;
}

} // namespace opdc::rt::dist
