// Partition.cpp - Which rank owns each element of each set (MPI),
// computed on the distributed mesh.
// SPDX-License-Identifier: Apache-2.0
//
// Runs once, before main's first statement (opd_rt_mesh_ready) or, in a
// program with a loop that fills a map, at the first set loop after it,
// when every set is stored as slices of
// its global numbering (mpi/Slices.cpp; maps hold global indices). No rank
// holds a whole set's worth of anything unless --partition=metis asks for
// it (METIS runs on rank 0).
//
// Primary set: the set the partition is computed on; the others follow.
// Among the sets some map of arity 2 or more points into (so that a graph
// exists on them), the one that is also the source of a map (an element
// set: Airfoil's cells, which map to nodes and which edges connect), then
// the one most maps point into, then the larger, then the first declared.
// Its graph: two elements adjacent when one element of another set maps to
// both (for cells through edges: the dual graph of the mesh). Built
// distributed: each rank sends the pairs its slice rows make to the
// holders of their first element (MPI_Alltoallv).
//   * --partition=ptscotch (default): PT-Scotch's SCOTCH_dgraphPart on the
//     distributed graph (mpi/Scotch.cpp; a build without libptscotch-dev
//     falls back to METIS and says so in the profile);
//   * --partition=metis: the graph gathered on rank 0, METIS k-way (fixed
//     seed), the parts scattered back;
//   * --partition=block: contiguous ranges of size/ranks elements (the
//     slices themselves).
// Edge cut and balance (fewest and most primary elements per rank) are
// computed for every method and reported in the profile.
// Derived sets, repeatedly until nothing changes: an element of a map's
// source set goes to the owner of its first target (an edge to the owner
// of its first cell); an element of a map's target set goes to the owner of
// the first (lowest) source element mapping to it, or stays where its
// slice is when none does. Sets no map relates to a partitioned one are
// split in blocks (their slices).
#include "mpi/Mpi.h"

#include "core/Dist.h"
#include "core/Runtime.h"
#include "mpi/Scotch.h"

#include <metis.h>

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <cstdio>

namespace opdc::rt::dist {
namespace {
// Rows of a map handled per round when building graphs and owners.
constexpr int64_t RowBatch = int64_t(1) << 17;

opd_set *choosePrimary() {
  const std::vector<opd_set *> sets = allSets();
  const std::vector<opd_map *> maps = allMaps();
  opd_set *best = nullptr;
  int bestSource = 0, bestIn = 0;
  for (opd_set *s : sets) {
    bool graph = false;
    int in = 0, source = 0;
    for (opd_map *m : maps) {
      if (m->to == s) {
        ++in;
        graph = graph || m->arity >= 2;
      }
      if (m->from == s && m->to != s)
        source = 1;
    }
    if (!graph)
      continue;
    if (!best || source > bestSource ||
        (source == bestSource &&
         (in > bestIn ||
          (in == bestIn && s->globalSize > best->globalSize)))) {
      best = s;
      bestSource = source;
      bestIn = in;
    }
  }
  if (best)
    return best;
  // No graph anywhere: the set most maps point into, if any.
  for (opd_set *s : sets) {
    int in = 0;
    for (opd_map *m : maps)
      in += m->to == s;
    if (in > bestIn || (in == bestIn && in > 0 && best &&
                        s->globalSize > best->globalSize)) {
      bestIn = in;
      best = s;
    }
  }
  return best;
}

// The primary set's graph over this rank's slice.
Graph buildGraph(const opd_set *primary) {
  const int64_t n = primary->globalSize;
  const std::size_t np = std::size_t(ranks());
  const int64_t lo = sliceLo(n, rank());
  const int64_t local = sliceLo(n, rank() + 1) - lo;
  // Arcs (a, b) of this rank's vertices a as (a - lo) << 32 | b: 8 bytes
  // each (n is below 2^31 here).
  std::vector<int64_t> arcs;
  // As many as this rank's rows make (about what it receives), so that the
  // vector does not double past it.
  std::size_t expect = 0;
  for (const opd_map *m : allMaps())
    if (m->to == primary && m->arity >= 2)
      expect += std::size_t(m->from->size) * std::size_t(m->arity) *
                std::size_t(m->arity - 1);
  arcs.reserve(expect + expect / 8);
  // In rounds (at most 4), so that the messages stay a fraction of it.
  for (opd_map *m : allMaps()) {
    if (m->to != primary || m->arity < 2)
      continue;
    const int a = m->arity;
    const SliceOf of(n);
    const int me = rank();
    int64_t batch = 0;
    const long long rounds = roundsOf(m->from->size, RowBatch, batch);
    for (long long r = 0; r < rounds; ++r) {
      std::vector<std::vector<int64_t>> send(np);
      const int64_t end = std::min<int64_t>(m->from->size, (r + 1) * batch);
      for (int64_t x = int64_t(r) * batch; x < end; ++x) {
        const int32_t *t = m->data + x * a;
        for (int i = 0; i < a; ++i) {
          const int q = of(t[i]);
          for (int j = 0; j < a; ++j)
            if (t[i] != t[j]) {
              if (q == me) { // this rank's vertex: no message
                arcs.push_back(int64_t(uint64_t(t[i] - lo) << 32 |
                                       uint64_t(t[j])));
                continue;
              }
              std::vector<int64_t> &s = send[std::size_t(q)];
              s.push_back(t[i]);
              s.push_back(t[j]);
            }
        }
      }
      std::vector<int> from;
      const std::vector<int64_t> got = exchangeIds(send, from);
      for (std::size_t k = 0; k + 1 < got.size(); k += 2)
        arcs.push_back(int64_t(uint64_t(got[k] - lo) << 32 |
                               uint64_t(got[k + 1])));
    }
  }
  std::sort(arcs.begin(), arcs.end());
  arcs.erase(std::unique(arcs.begin(), arcs.end()), arcs.end());
  Graph g;
  g.lo = lo;
  g.n = n;
  g.xadj.assign(std::size_t(local) + 1, 0);
  for (int64_t arc : arcs)
    ++g.xadj[std::size_t(uint64_t(arc) >> 32) + 1];
  for (int64_t i = 0; i < local; ++i)
    g.xadj[std::size_t(i) + 1] += g.xadj[std::size_t(i)];
  // The arcs' targets (sorted by source already), 4 bytes each.
  g.adj.resize(arcs.size());
  for (std::size_t k = 0; k < arcs.size(); ++k)
    g.adj[k] = int32_t(uint64_t(arcs[k]) & 0xffffffffu);
  return g;
}

// METIS k-way on rank 0: the graph gathered there, the parts scattered.
bool metisParts(const Graph &g, std::vector<int32_t> &part) {
  const int p = ranks();
  const std::size_t np = std::size_t(p);
  const int local = int(g.xadj.size() - 1);
  const int edges = int(g.adj.size());
  std::vector<int> counts(np), ecounts(np), displs(np + 1, 0),
      edispls(np + 1, 0);
  MPI_Gather(&local, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Gather(&edges, 1, MPI_INT, ecounts.data(), 1, MPI_INT, 0,
             MPI_COMM_WORLD);
  const bool root = rank() == 0;
  if (root)
    for (std::size_t q = 0; q < np; ++q) {
      displs[q + 1] = displs[q] + counts[q];
      edispls[q + 1] = edispls[q] + ecounts[q];
    }
  std::vector<int64_t> degree(static_cast<std::size_t>(local));
  for (int i = 0; i < local; ++i)
    degree[std::size_t(i)] = g.xadj[std::size_t(i) + 1] - g.xadj[std::size_t(i)];
  std::vector<int64_t> allDegree(root ? std::size_t(displs[np]) : 0);
  std::vector<int32_t> allAdj(root ? std::size_t(edispls[np]) : 0);
  MPI_Gatherv(degree.data(), local, MPI_INT64_T, allDegree.data(),
              counts.data(), displs.data(), MPI_INT64_T, 0, MPI_COMM_WORLD);
  MPI_Gatherv(g.adj.data(), edges, MPI_INT32_T, allAdj.data(), ecounts.data(),
              edispls.data(), MPI_INT32_T, 0, MPI_COMM_WORLD);
  std::vector<int32_t> allPart(root ? std::size_t(g.n) : 0, 0);
  int ok = 1;
  if (root) {
    std::vector<idx_t> xadj(std::size_t(g.n) + 1, 0), adjncy(allAdj.size());
    for (int64_t i = 0; i < g.n; ++i)
      xadj[std::size_t(i) + 1] = xadj[std::size_t(i)] + idx_t(allDegree[std::size_t(i)]);
    for (std::size_t k = 0; k < allAdj.size(); ++k)
      adjncy[k] = idx_t(allAdj[k]);
    idx_t nv = idx_t(g.n), ncon = 1, nparts = idx_t(p), objval = 0;
    std::vector<idx_t> out(std::size_t(g.n), 0);
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = 12345;
    options[METIS_OPTION_NUMBERING] = 0;
    const int rc = g.n > 0 && !adjncy.empty()
                       ? METIS_PartGraphKway(&nv, &ncon, xadj.data(),
                                             adjncy.data(), nullptr, nullptr,
                                             nullptr, &nparts, nullptr, nullptr,
                                             options, &objval, out.data())
                       : METIS_ERROR;
    ok = rc == METIS_OK;
    for (int64_t i = 0; i < g.n; ++i)
      allPart[std::size_t(i)] = int32_t(out[std::size_t(i)]);
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  part.assign(std::size_t(local), 0);
  MPI_Scatterv(allPart.data(), counts.data(), displs.data(), MPI_INT32_T,
               part.data(), local, MPI_INT32_T, 0, MPI_COMM_WORLD);
  return ok != 0;
}

// Edge cut (each edge once) and the fewest and most elements of a part.
void quality(const Graph &g, const std::vector<int32_t> &part,
             std::string &note) {
  std::vector<int32_t> other(g.adj.size());
  fetchRows(g.n, part.data(), sizeof(int32_t), g.adj.data(), g.adj.size(),
            other.data());
  int64_t cut = 0;
  for (std::size_t v = 0; v + 1 < g.xadj.size(); ++v)
    for (int64_t k = g.xadj[v]; k < g.xadj[v + 1]; ++k)
      cut += other[std::size_t(k)] != part[v];
  int64_t edges = int64_t(g.adj.size());
  MPI_Allreduce(MPI_IN_PLACE, &cut, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &edges, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  std::vector<int64_t> sizes(std::size_t(ranks()), 0);
  for (int32_t q : part)
    ++sizes[std::size_t(q)];
  MPI_Allreduce(MPI_IN_PLACE, sizes.data(), ranks(), MPI_INT64_T, MPI_SUM,
                MPI_COMM_WORLD);
  const int64_t lo = *std::min_element(sizes.begin(), sizes.end());
  const int64_t hi = *std::max_element(sizes.begin(), sizes.end());
  const double mean = double(g.n) / double(ranks());
  char text[160];
  std::snprintf(text, sizeof text,
                ", edge cut %" PRId64 " of %" PRId64 " edges, %" PRId64
                "..%" PRId64 " per rank (imbalance %.3f)",
                cut / 2, edges / 2, lo, hi, mean > 0 ? double(hi) / mean : 1.0);
  note += text;
}

// Owners of a source set through map m from the owners of its targets:
// each element goes with its first target.
std::vector<int32_t> followFirstTarget(const opd_map *m, const Owners &owners) {
  std::vector<int32_t> first(static_cast<std::size_t>(m->from->size));
  for (int64_t x = 0; x < m->from->size; ++x)
    first[std::size_t(x)] = m->data[x * m->arity];
  std::vector<int32_t> own(first.size(), 0);
  fetchRows(m->to->globalSize, owners.at(m->to).data(), sizeof(int32_t),
            first.data(), first.size(), own.data());
  return own;
}

// Owners of a target set through map m: the owner of the lowest source
// element reaching each target; unreached targets stay on their slice.
std::vector<int32_t> followFirstSource(const opd_map *m, const Owners &owners) {
  const int64_t n = m->to->globalSize;
  const int64_t lo = sliceLo(m->from->globalSize, rank());
  const int64_t mine = sliceLo(n, rank());
  const int64_t count = sliceLo(n, rank() + 1) - mine;
  std::vector<int32_t> own(static_cast<std::size_t>(count), int32_t(rank()));
  std::vector<int64_t> best(static_cast<std::size_t>(count), INT64_MAX);
  const std::vector<int32_t> &from = owners.at(m->from);
  int64_t batch = 0;
  const long long rounds = roundsOf(m->from->size, RowBatch, batch);
  // In rounds of rows: targets in this rank's slice are settled here; the
  // others go (target, source, its owner) to their slice holder, which
  // keeps the lowest source over all rounds and ranks.
  const SliceOf of(n);
  const int me = rank();
  auto keep = [&](int64_t t, int64_t source, int32_t owner) {
    const std::size_t i = std::size_t(t - mine);
    if (source < best[i]) {
      best[i] = source;
      own[i] = owner;
    }
  };
  for (long long r = 0; r < rounds; ++r) {
    const int64_t end = std::min<int64_t>(m->from->size, (r + 1) * batch);
    std::vector<std::vector<int64_t>> send(static_cast<std::size_t>(ranks()));
    for (int64_t x = int64_t(r) * batch; x < end; ++x)
      for (int k = 0; k < m->arity; ++k) {
        const int64_t t = m->data[x * m->arity + k];
        const int q = of(t);
        if (q == me) {
          keep(t, lo + x, from[std::size_t(x)]);
          continue;
        }
        std::vector<int64_t> &s = send[std::size_t(q)];
        // Rows are in ascending order: a target met again in the row
        // just before needs no second message.
        if (s.size() >= 3 && s[s.size() - 3] == t)
          continue;
        s.push_back(t);
        s.push_back(lo + x);
        s.push_back(from[std::size_t(x)]);
      }
    std::vector<int> displ;
    const std::vector<int64_t> got = exchangeIds(send, displ);
    for (std::size_t k = 0; k + 2 < got.size(); k += 3)
      keep(got[k], got[k + 1], int32_t(got[k + 2]));
  }
  return own;
}

} // namespace

Owners computeOwners(std::string &note) {
  Owners owners;
  const std::vector<opd_set *> sets = allSets();
  const std::vector<opd_map *> maps = allMaps();
  opd_set *primary = choosePrimary();
  auto slicePart = [](const opd_set *s) {
    return std::vector<int32_t>(
        std::size_t(sliceLo(s->globalSize, rank() + 1) -
                    sliceLo(s->globalSize, rank())),
        int32_t(rank()));
  };
  if (primary) {
    if (primary->globalSize > INT32_MAX)
      failf("set '%s' has %lld elements; the partitioner takes at most 2^31",
            primary->name.c_str(), (long long)primary->globalSize);
    const Graph g = buildGraph(primary);
    std::vector<int32_t> part;
    const std::string on = " on set '" + primary->name + "'";
    PartitionMethod method = partitionMethod();
    std::string why;
    if (method == PartitionMethod::PTScotch) {
      if (ptscotchParts(g, part, why)) {
        note = "pt-scotch" + on;
      } else {
        note = "pt-scotch unavailable (" + why + "); ";
        method = PartitionMethod::Metis;
      }
    }
    if (method == PartitionMethod::Metis) {
      if (metisParts(g, part)) {
        note += "metis k-way on rank 0" + on;
      } else {
        part = slicePart(primary);
        note += "metis failed" + on + "; block partition";
      }
    } else if (method == PartitionMethod::Block) {
      part = slicePart(primary);
      note = "block partition" + on;
    }
    quality(g, part, note);
    owners[primary] = std::move(part);
  } else {
    note = "block partition (no maps)";
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (opd_map *m : maps) {
      const bool fromKnown = owners.count(m->from) != 0;
      const bool toKnown = owners.count(m->to) != 0;
      if (!fromKnown && toKnown) {
        owners[m->from] = followFirstTarget(m, owners);
        changed = true;
      } else if (fromKnown && !toKnown) {
        owners[m->to] = followFirstSource(m, owners);
        changed = true;
      }
    }
  }
  for (opd_set *s : sets)
    if (!owners.count(s))
      owners[s] = slicePart(s);
  return owners;
}

} // namespace opdc::rt::dist
