// Renumber.cpp - Locality renumbering of unstructured sets at load time.
// SPDX-License-Identifier: Apache-2.0
//
// A loop over edges gathers its nodes' and cells' data through maps; when
// consecutive edges reach nodes far apart in memory, every gather is a
// cache miss once the mesh no longer fits in the last-level cache. With
// --renumber=rcm, one process renumbers its sets before main's first
// statement or the first set loop (the place where several ranks partition
// them, core/Serial.cpp's partitionSets):
//   1. The root set is the one the maps of arity >= 2 reach most often
//      (entries summed; Airfoil: nodes, 5.8M entries, before cells, 2.9M).
//      Its graph links every two elements one map row reaches (an edge's
//      two nodes, a cell's four).
//   2. The root is ordered by reverse Cuthill-McKee (George & Liu: each
//      component from a pseudo-peripheral vertex of minimum degree,
//      neighbours in increasing degree), which keeps linked nodes close.
//      --renumber=auto keeps it only when it shrinks the mean
//      index distance between linked root elements AutoGain-fold; else
//      nothing is renumbered.
//   3. A set with a map into an ordered set follows it: its elements sorted
//      by the smallest new index they reach, then the largest, then their
//      old index (edges and cells in node order, so that consecutive edges
//      and cells share nodes). A set that only ordered sets' maps reach is
//      ordered by first touch from them. Repeated until nothing changes;
//      sets no map relates keep their order.
//   4. Maps and set dats are permuted in place (their storage does not
//      move) and opd_set::globalIds records each element's original index,
//      which is all the runtime needs to read and write files, answer idx()
//      and report elements in the original numbering, exactly as on several
//      MPI ranks (the same fields, lib/mpi/Halo.cpp).
// Results change only by the order of reductions and increments (round-off).
// The MPI runtime does not call this: each rank's numbering follows the
// partition (lib/mpi/Halo.cpp); --renumber is ignored there with a warning.
#include "core/Renumber.h"

#include "core/Device.h"
#include "core/Objects.h"
#include "core/Runtime.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <tuple>

namespace opdc::rt {
namespace {
// Not by default: on OP2's Airfoil grid (numbered along its structure) RCM
// moves no fewer bytes, and it changes the order of reductions and
// increments (round-off) and refuses maps filled after the first loop.
RenumberMethod method = RenumberMethod::None;
bool explicitMethod = false;
bool renumbered = false;

using Perm = std::vector<int32_t>; // newToOld

/// --renumber=auto renumbers when RCM divides the mean span at least this
/// much (and the span as read is above 2 sqrt(n), checked first). Airfoil on a 32 MiB simulated cache (bench/airfoil/cachegrind.sh):
/// OP2's grid 600 -> 502 (1.2x, traffic unchanged: keep it as read); the
/// same grid numbered at random 240000 -> 417 (res_calc's traffic 2.5x
/// lower, 431 colours -> 7).
constexpr double AutoGain = 2.0;

// The root set's graph in CSR form.
void buildGraph(const opd_set *root, const std::vector<opd_map *> &maps,
                std::vector<int64_t> &off, std::vector<int32_t> &adj) {
  const int64_t n = root->size;
  std::vector<int64_t> count(std::size_t(n) + 1, 0);
  auto rows = [&](auto &&visit) {
    for (const opd_map *m : maps) {
      if (m->to != root || m->arity < 2)
        continue;
      const int a = m->arity;
      for (int64_t e = 0; e < m->from->size; ++e) {
        const int32_t *row = m->data + e * a;
        for (int i = 0; i < a; ++i)
          for (int j = 0; j < a; ++j)
            if (row[i] != row[j])
              visit(row[i], row[j]);
      }
    }
  };
  rows([&](int32_t u, int32_t) { ++count[std::size_t(u) + 1]; });
  for (int64_t v = 0; v < n; ++v)
    count[std::size_t(v) + 1] += count[std::size_t(v)];
  adj.assign(std::size_t(count[std::size_t(n)]), 0);
  std::vector<int64_t> fill(count.begin(), count.end() - 1);
  rows([&](int32_t u, int32_t v) { adj[std::size_t(fill[std::size_t(u)]++)] = v; });
  // Sorted, duplicates (an edge shared by two cells) removed.
  off.assign(std::size_t(n) + 1, 0);
  int64_t out = 0;
  for (int64_t v = 0; v < n; ++v) {
    auto b = adj.begin() + count[std::size_t(v)];
    auto e = adj.begin() + count[std::size_t(v) + 1];
    std::sort(b, e);
    auto u = std::unique(b, e);
    off[std::size_t(v)] = out;
    for (auto it = b; it != u; ++it)
      adj[std::size_t(out++)] = *it;
  }
  off[std::size_t(n)] = out;
  adj.resize(std::size_t(out));
}

// Mean |u - v| over the pairs of root elements one map row reaches.
double rowSpan(const opd_set *root, const std::vector<opd_map *> &maps) {
  double sum = 0, pairs = 0;
  for (const opd_map *m : maps) {
    if (m->to != root || m->arity < 2)
      continue;
    const int a = m->arity;
    for (int64_t e = 0; e < m->from->size; ++e) {
      const int32_t *row = m->data + e * a;
      for (int i = 0; i < a; ++i)
        for (int j = i + 1; j < a; ++j)
          sum += double(std::abs(int64_t(row[i]) - int64_t(row[j])));
      pairs += double(a * (a - 1) / 2);
    }
  }
  return pairs > 0 ? sum / pairs : 0.0;
}

// Orders set `s` by the new indices its map `m` reaches in `to` (ordered:
// oldToNew of the target).
Perm followMap(const opd_map *m, const std::vector<int32_t> &toOldToNew) {
  const int64_t n = m->from->size;
  const int a = m->arity;
  const std::size_t count = std::size_t(n);
  std::vector<std::tuple<int32_t, int32_t, int32_t>> key(count);
  for (int64_t e = 0; e < n; ++e) {
    int32_t lo = INT32_MAX, hi = INT32_MIN;
    for (int k = 0; k < a; ++k) {
      int32_t t = toOldToNew[std::size_t(m->data[e * a + k])];
      lo = std::min(lo, t);
      hi = std::max(hi, t);
    }
    key[std::size_t(e)] = {lo, hi, int32_t(e)};
  }
  std::sort(key.begin(), key.end());
  Perm p(count);
  for (int64_t i = 0; i < n; ++i)
    p[std::size_t(i)] = std::get<2>(key[std::size_t(i)]);
  return p;
}

// Orders `m->to` by first touch from `m->from` taken in its new order.
Perm firstTouch(const opd_map *m, const Perm &fromNewToOld) {
  const int64_t n = m->to->size;
  std::vector<char> seen(std::size_t(n), 0);
  Perm p;
  p.reserve(std::size_t(n));
  for (int32_t old : fromNewToOld)
    for (int k = 0; k < m->arity; ++k) {
      int32_t t = m->data[int64_t(old) * m->arity + k];
      if (!seen[std::size_t(t)]) {
        seen[std::size_t(t)] = 1;
        p.push_back(t);
      }
    }
  for (int64_t t = 0; t < n; ++t)
    if (!seen[std::size_t(t)])
      p.push_back(int32_t(t));
  return p;
}

std::vector<int32_t> inverse(const Perm &p) {
  std::vector<int32_t> inv(p.size());
  for (std::size_t i = 0; i < p.size(); ++i)
    inv[std::size_t(p[i])] = int32_t(i);
  return inv;
}

bool isIdentity(const Perm &p) {
  for (std::size_t i = 0; i < p.size(); ++i)
    if (p[i] != int32_t(i))
      return false;
  return true;
}

// Rows of `rowBytes` at `data`: row new = old row p[new].
void permuteRows(char *data, int64_t n, std::size_t rowBytes, const Perm &p) {
  if (n <= 0 || rowBytes == 0)
    return;
  std::vector<char> old(data, data + std::size_t(n) * rowBytes);
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(data + std::size_t(i) * rowBytes,
                old.data() + std::size_t(p[std::size_t(i)]) * rowBytes,
                rowBytes);
}
} // namespace

RenumberMethod renumberMethod() { return method; }
void setRenumberMethod(RenumberMethod m) { method = m; }
bool renumberExplicit() { return explicitMethod; }
void setRenumberExplicit(bool on) { explicitMethod = on; }
bool setsRenumbered() { return renumbered; }
void forgetRenumbering() { renumbered = false; }

std::vector<int32_t> reverseCuthillMcKee(const std::vector<int64_t> &off,
                                         const std::vector<int32_t> &adj) {
  const int64_t n = off.empty() ? 0 : int64_t(off.size()) - 1;
  auto degree = [&](int32_t v) {
    return off[std::size_t(v) + 1] - off[std::size_t(v)];
  };
  std::vector<char> done(static_cast<std::size_t>(n), 0);
  // BFS scratch: level of each vertex in the current search (-1: none).
  std::vector<int32_t> level(std::size_t(n), -1);
  std::vector<int32_t> queue;
  queue.reserve(std::size_t(n));
  // Breadth-first from r over unordered vertices; returns the visited
  // vertices in order (levels in `level`, reset by the caller).
  auto bfs = [&](int32_t r, std::vector<int32_t> &seen) {
    seen.clear();
    seen.push_back(r);
    level[std::size_t(r)] = 0;
    for (std::size_t h = 0; h < seen.size(); ++h) {
      int32_t v = seen[h];
      for (int64_t k = off[std::size_t(v)]; k < off[std::size_t(v) + 1]; ++k) {
        int32_t u = adj[std::size_t(k)];
        if (level[std::size_t(u)] < 0 && !done[std::size_t(u)]) {
          level[std::size_t(u)] = level[std::size_t(v)] + 1;
          seen.push_back(u);
        }
      }
    }
  };
  auto reset = [&](const std::vector<int32_t> &seen) {
    for (int32_t v : seen)
      level[std::size_t(v)] = -1;
  };
  std::vector<int32_t> order;
  order.reserve(std::size_t(n));
  std::vector<int32_t> comp, nbrs;
  for (int32_t s = 0; s < n; ++s) {
    if (done[std::size_t(s)])
      continue;
    // The component's vertex of least degree, then George-Liu: move to a
    // least-degree vertex of the last level while the eccentricity grows.
    bfs(s, comp);
    int32_t r = s;
    for (int32_t v : comp)
      if (degree(v) < degree(r) || (degree(v) == degree(r) && v < r))
        r = v;
    reset(comp);
    bfs(r, comp);
    for (int iter = 0; iter < 8; ++iter) {
      const int32_t ecc = level[std::size_t(comp.back())];
      int32_t x = comp.back();
      for (auto it = comp.rbegin();
           it != comp.rend() && level[std::size_t(*it)] == ecc; ++it)
        if (degree(*it) < degree(x) || (degree(*it) == degree(x) && *it < x))
          x = *it;
      reset(comp);
      bfs(x, comp);
      if (level[std::size_t(comp.back())] <= ecc) {
        reset(comp);
        bfs(r, comp);
        break;
      }
      r = x;
    }
    reset(comp);
    // Cuthill-McKee from r: neighbours in increasing degree.
    std::size_t head = order.size();
    order.push_back(r);
    done[std::size_t(r)] = 1;
    for (; head < order.size(); ++head) {
      int32_t v = order[head];
      nbrs.clear();
      for (int64_t k = off[std::size_t(v)]; k < off[std::size_t(v) + 1]; ++k) {
        int32_t u = adj[std::size_t(k)];
        if (!done[std::size_t(u)]) {
          done[std::size_t(u)] = 1;
          nbrs.push_back(u);
        }
      }
      std::stable_sort(nbrs.begin(), nbrs.end(), [&](int32_t a, int32_t b) {
        return degree(a) < degree(b);
      });
      order.insert(order.end(), nbrs.begin(), nbrs.end());
    }
  }
  std::reverse(order.begin(), order.end());
  return order;
}

namespace {
// Calls f(|pos(v) - pos(w)|) for every arc v -> w of the graph, pos being
// the position of each vertex in the order newToOld (the identity when
// empty).
template <typename F>
void forEachSpan(const std::vector<int64_t> &off,
                 const std::vector<int32_t> &adj,
                 const std::vector<int32_t> &newToOld, F f) {
  const int64_t n = off.empty() ? 0 : int64_t(off.size()) - 1;
  std::vector<int32_t> pos(static_cast<std::size_t>(n));
  if (newToOld.empty())
    std::iota(pos.begin(), pos.end(), 0);
  else
    pos = inverse(newToOld);
  for (int64_t v = 0; v < n; ++v)
    for (int64_t k = off[std::size_t(v)]; k < off[std::size_t(v) + 1]; ++k)
      f(std::abs(int64_t(pos[std::size_t(v)]) -
                 int64_t(pos[std::size_t(adj[std::size_t(k)])])));
}
} // namespace

int64_t graphBandwidth(const std::vector<int64_t> &off,
                       const std::vector<int32_t> &adj,
                       const std::vector<int32_t> &newToOld) {
  int64_t bw = 0;
  forEachSpan(off, adj, newToOld,
              [&](int64_t span) { bw = std::max(bw, span); });
  return bw;
}

double meanSpan(const std::vector<int64_t> &off,
                const std::vector<int32_t> &adj,
                const std::vector<int32_t> &newToOld) {
  double sum = 0;
  forEachSpan(off, adj, newToOld,
              [&](int64_t span) { sum += double(span); });
  return adj.empty() ? 0.0 : sum / double(adj.size());
}

void renumberSets() {
  if (renumbered || method == RenumberMethod::None)
    return;
  renumbered = true;
  const std::vector<opd_set *> sets = allSets();
  const std::vector<opd_map *> maps = allMaps();
  for (const opd_map *m : maps)
    checkMapIndices(const_cast<opd_map *>(m), nullptr);

  // 1. The root: most entries of maps of arity >= 2.
  std::map<const opd_set *, int64_t> reach;
  for (const opd_map *m : maps)
    if (m->arity >= 2 && m->from->size > 0)
      reach[m->to] += m->from->size * m->arity;
  const opd_set *root = nullptr;
  for (const opd_set *s : sets)
    if (reach.count(s) && (!root || reach[s] > reach[root]))
      root = s;
  if (!root || root->size < 2)
    return;

  // auto, first the cheap test: linked root elements already closer than
  // 2 sqrt(n) on average (a 2D mesh numbered along its structure; RCM's
  // fronts are about sqrt(n) wide) keep their numbering without building
  // the graph (Airfoil's grid: 600 < 1700).
  if (method == RenumberMethod::Auto &&
      rowSpan(root, maps) <= 2.0 * std::sqrt(double(root->size)))
    return;

  // 2. Reverse Cuthill-McKee on the root's graph.
  std::map<const opd_set *, Perm> order;
  {
    std::vector<int64_t> off;
    std::vector<int32_t> adj;
    buildGraph(root, maps, off, adj);
    Perm rcm = reverseCuthillMcKee(off, adj);
    // auto: only a numbering RCM improves a lot (a mesh from an
    // unstructured generator); a mesh numbered along its structure keeps
    // its order (docs/performance.md: OP2's Airfoil grid, mean span 600 as
    // read vs 502 after RCM, the same traffic on a 32 MiB cache).
    if (method == RenumberMethod::Auto &&
        meanSpan(off, adj, rcm) * AutoGain > meanSpan(off, adj, {}))
      return;
    order[root] = std::move(rcm);
  }

  // 3. The other sets follow, through their maps into ordered sets (the
  // map of largest arity first), else by first touch from an ordered set.
  for (bool changed = true; changed;) {
    changed = false;
    for (const opd_set *s : sets) {
      if (order.count(s) || s->size < 2)
        continue;
      const opd_map *via = nullptr;
      for (const opd_map *m : maps)
        if (m->from == s && m->to != s && order.count(m->to) &&
            (!via || m->arity > via->arity))
          via = m;
      if (via) {
        order[s] = followMap(via, inverse(order[via->to]));
        changed = true;
        continue;
      }
      for (const opd_map *m : maps)
        if (m->to == s && m->from != s && order.count(m->from)) {
          order[s] = firstTouch(m, order[m->from]);
          changed = true;
          break;
        }
    }
  }

  // 4. Apply: maps, dats, original indices.
  std::map<const opd_set *, std::vector<int32_t>> oldToNew;
  for (auto &[s, p] : order)
    if (!isIdentity(p))
      oldToNew[s] = inverse(p);
  if (oldToNew.empty())
    return;
  deviceRelease(); // device copies (a GPU program) follow the new order
  for (opd_map *m : maps) {
    auto from = order.find(m->from);
    auto to = oldToNew.find(m->to);
    const bool moveRows = oldToNew.count(m->from) != 0;
    if (!moveRows && to == oldToNew.end())
      continue;
    const std::size_t rowBytes = std::size_t(m->arity) * sizeof(int32_t);
    if (moveRows)
      permuteRows(reinterpret_cast<char *>(m->data), m->from->size, rowBytes,
                  from->second);
    if (to != oldToNew.end())
      for (int64_t k = 0; k < m->from->size * m->arity; ++k)
        m->data[k] = to->second[std::size_t(m->data[k])];
    // Plans and map values built on the old numbering are stale; the
    // indices are still in range.
    ++m->version;
    m->checkedVersion = m->version;
  }
  for (opd_dat *d : allDats())
    if (d->set && oldToNew.count(d->set))
      permuteRows(static_cast<char *>(d->data), d->set->size,
                  std::size_t(d->elementBytes()), order[d->set]);
  for (opd_set *s : sets) {
    if (!oldToNew.count(s))
      continue;
    const Perm &p = order[s];
    s->globalIds.assign(p.begin(), p.end());
  }
}

} // namespace opdc::rt
