// Plan.cpp - Greedy block colouring, the super-block schedule over it, and
// the plan cache.
// SPDX-License-Identifier: Apache-2.0
#include "exec/Plan.h"

#include "core/Runtime.h"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <memory>
#include <numeric>

namespace opdc::rt {
namespace {
std::vector<std::unique_ptr<PlanEntry>> &planCache() {
  static std::vector<std::unique_ptr<PlanEntry>> cache;
  return cache;
}
int64_t builtCount = 0;

bool accessLess(const WrittenAccess &a, const WrittenAccess &b) {
  if (a.map != b.map)
    return std::less<const opd_map *>()(a.map, b.map);
  return a.idx < b.idx;
}

// Target sets of the written accesses: group[t] indexes targets for
// written[t] (all maps into one set share its elements).
void targetGroups(const std::vector<WrittenAccess> &written,
                  std::vector<opd_set *> &targets, std::vector<int> &group) {
  for (const WrittenAccess &w : written) {
    auto it = std::find(targets.begin(), targets.end(), w.map->to);
    group.push_back(int(it - targets.begin()));
    if (it == targets.end())
      targets.push_back(w.map->to);
  }
}
} // namespace

Plan buildPlan(int64_t setSize, int64_t blockSize,
               const std::vector<WrittenAccess> &written) {
  return buildPlan(0, setSize, blockSize, written);
}

Plan buildPlan(int64_t first, int64_t setSize, int64_t blockSize,
               const std::vector<WrittenAccess> &written) {
  ++builtCount;
  Plan p;
  p.first = first;
  p.setSize = setSize;
  p.blockSize = blockSize;
  p.nblocks = (setSize - first + blockSize - 1) / blockSize;
  p.blockColour.assign(std::size_t(p.nblocks), -1);

  // One bit-mask work array per target set: every map into that set
  // conflicts with every other, whichever dat it writes.
  for (const WrittenAccess &w : written) {
    if (w.map->from->size < setSize)
      failf("internal error: map '%s' does not start at the loop's set",
            w.map->name.c_str());
    checkMapIndices(w.map, nullptr);
  }
  std::vector<opd_set *> targets;
  std::vector<int> group;
  targetGroups(written, targets, group);
  std::vector<std::vector<uint64_t>> work(targets.size());

  // Colours are assigned 64 at a time: a pass gives each uncoloured block
  // the lowest colour in [base, base + 64) unused by the blocks it conflicts
  // with among those coloured in this pass; blocks with all 64 taken wait
  // for the next pass. Deterministic: block order, nothing else.
  int64_t left = p.nblocks;
  int32_t base = 0;
  while (left > 0) {
    for (std::size_t g = 0; g < targets.size(); ++g)
      work[g].assign(std::size_t(targets[g]->size), 0);
    for (int64_t b = 0; b < p.nblocks; ++b) {
      if (p.blockColour[std::size_t(b)] >= 0)
        continue;
      const int64_t begin = first + b * blockSize;
      const int64_t end = std::min(begin + blockSize, setSize);
      uint64_t mask = 0;
      for (std::size_t t = 0; t < written.size(); ++t) {
        const uint64_t *w = work[std::size_t(group[t])].data();
        const int32_t *m = written[t].map->data;
        const int64_t arity = written[t].map->arity, idx = written[t].idx;
        for (int64_t e = begin; e < end; ++e)
          mask |= w[m[e * arity + idx]];
      }
      if (mask == ~uint64_t(0))
        continue;
      const int bit = std::countr_one(mask);
      const uint64_t flag = uint64_t(1) << bit;
      for (std::size_t t = 0; t < written.size(); ++t) {
        uint64_t *w = work[std::size_t(group[t])].data();
        const int32_t *m = written[t].map->data;
        const int64_t arity = written[t].map->arity, idx = written[t].idx;
        for (int64_t e = begin; e < end; ++e)
          w[m[e * arity + idx]] |= flag;
      }
      p.blockColour[std::size_t(b)] = base + bit;
      p.ncolours = std::max(p.ncolours, base + bit + 1);
      --left;
    }
    base += 64;
  }

  // Counting sort by colour keeps block order within each colour.
  p.colourOffsets.assign(std::size_t(p.ncolours) + 1, 0);
  for (int32_t c : p.blockColour)
    ++p.colourOffsets[std::size_t(c) + 1];
  for (int32_t c = 0; c < p.ncolours; ++c)
    p.colourOffsets[std::size_t(c) + 1] += p.colourOffsets[std::size_t(c)];
  p.blocks.assign(std::size_t(p.nblocks), 0);
  std::vector<int64_t> next(p.colourOffsets.begin(), p.colourOffsets.end() - 1);
  for (int64_t b = 0; b < p.nblocks; ++b)
    p.blocks[std::size_t(next[std::size_t(p.blockColour[std::size_t(b)])]++)] =
        b;
  return p;
}

namespace {
PlanKind currentKind = DefaultPlanKind;
} // namespace

PlanKind planKind() { return currentKind; }
void setPlanKind(PlanKind kind) { currentKind = kind; }

int32_t superBlockCount(int64_t nblocks) {
  static const int64_t requested =
      envInteger("OPD_SUPERBLOCKS", 0, 1, 1 << 20,
                 "a number of super-blocks from 1 to 1048576");
  if (nblocks <= 0)
    return 0;
  if (requested > 0)
    return int32_t(std::min(requested, nblocks));
  // One per processor at least (all of them busy in phase 1), 8 at least
  // so that machines of up to 8 processors share one schedule, and so one
  // set of results; more super-blocks only add cross elements at their
  // boundaries. Phase 1 sweeps each super-block in element order, so its
  // working set is the sweep's front, not the super-block: the count does
  // not depend on the cache size.
  const int64_t wanted = std::max<int64_t>(8, omp_get_num_procs());
  return int32_t(std::clamp<int64_t>(
      std::min(wanted, nblocks / MinBlocksPerSuper), 1, nblocks));
}

SuperPlan buildSuperPlan(const Plan &p, int32_t nsuper,
                         const std::vector<WrittenAccess> &written) {
  SuperPlan s;
  if (p.nblocks == 0 || nsuper < 1)
    return s;
  nsuper = int32_t(std::min<int64_t>(nsuper, p.nblocks));
  s.nsuper = nsuper;
  s.superFirst.resize(std::size_t(nsuper) + 1);
  for (int32_t k = 0; k <= nsuper; ++k)
    s.superFirst[std::size_t(k)] = int64_t(k) * p.nblocks / nsuper;
  const int64_t bs = p.blockSize;
  auto blockEnd = [&](int64_t b) {
    return std::min(p.first + (b + 1) * bs, p.setSize);
  };

  std::vector<opd_set *> targets;
  std::vector<int> group;
  targetGroups(written, targets, group);
  // owner[t]: the one super-block whose elements reach t, Shared when two
  // do, Untouched when none does (yet).
  constexpr int32_t Untouched = -1, Shared = -2;
  std::vector<std::vector<int32_t>> owner(targets.size());
  for (std::size_t g = 0; g < targets.size(); ++g)
    owner[g].assign(std::size_t(targets[g]->size), Untouched);
  for (int32_t k = 0; k < nsuper; ++k) {
    const int64_t begin = p.first + s.superFirst[std::size_t(k)] * bs;
    const int64_t end = blockEnd(s.superFirst[std::size_t(k) + 1] - 1);
    for (std::size_t t = 0; t < written.size(); ++t) {
      int32_t *o = owner[std::size_t(group[t])].data();
      const int32_t *m = written[t].map->data;
      const int64_t arity = written[t].map->arity, idx = written[t].idx;
      for (int64_t e = begin; e < end; ++e) {
        int32_t &x = o[m[e * arity + idx]];
        x = x == Untouched || x == k ? k : Shared;
      }
    }
  }

  // Runs of consecutive own or cross elements, block by block.
  s.ownOffsets.assign(std::size_t(p.nblocks) + 1, 0);
  s.crossOffsets.assign(std::size_t(p.nblocks) + 1, 0);
  for (int64_t b = 0; b < p.nblocks; ++b) {
    bool open = false, openCross = false;
    for (int64_t e = p.first + b * bs, end = blockEnd(b); e < end; ++e) {
      bool cross = false;
      for (std::size_t t = 0; t < written.size() && !cross; ++t) {
        const opd_map *m = written[t].map;
        cross = owner[std::size_t(group[t])]
                     [std::size_t(m->data[e * m->arity + written[t].idx])] ==
                Shared;
      }
      std::vector<ElementRun> &runs = cross ? s.crossRuns : s.ownRuns;
      if (open && openCross == cross)
        runs.back().end = e + 1;
      else
        runs.push_back({e, e + 1});
      open = true;
      openCross = cross;
      s.crossElements += cross ? 1 : 0;
    }
    s.ownOffsets[std::size_t(b) + 1] = int64_t(s.ownRuns.size());
    s.crossOffsets[std::size_t(b) + 1] = int64_t(s.crossRuns.size());
  }

  // The plan's colours, keeping only blocks with cross elements.
  s.crossColourOffsets.assign(std::size_t(p.ncolours) + 1, 0);
  for (int32_t c = 0; c < p.ncolours; ++c) {
    for (int64_t k = p.colourOffsets[std::size_t(c)];
         k < p.colourOffsets[std::size_t(c) + 1]; ++k) {
      const int64_t b = p.blocks[std::size_t(k)];
      if (s.crossOffsets[std::size_t(b) + 1] > s.crossOffsets[std::size_t(b)])
        s.crossBlocks.push_back(b);
    }
    s.crossColourOffsets[std::size_t(c) + 1] = int64_t(s.crossBlocks.size());
  }
  return s;
}

namespace {
// One cached answer of writesInjective.
struct InjectivityEntry {
  opd_set *set = nullptr;
  std::vector<WrittenAccess> key;
  std::vector<uint64_t> versions;
  int64_t count = 0;
  bool injective = false;
};
std::vector<InjectivityEntry> &injectivityCache() {
  static std::vector<InjectivityEntry> cache;
  return cache;
}
int64_t injectivityCount = 0;

// W: the type of an element number + 1 (32 bits while they fit: half the
// scratch memory to clear and touch).
template <typename W>
bool injectiveAs(int64_t count, const std::vector<WrittenAccess> &key) {
  std::vector<opd_set *> targets;
  std::vector<int> group;
  targetGroups(key, targets, group);
  // writer[g][t]: the last element that reached target t of set g, + 1.
  std::vector<std::vector<W>> writer(targets.size());
  for (std::size_t g = 0; g < targets.size(); ++g)
    writer[g].assign(std::size_t(targets[g]->size), 0);
  for (int64_t e = 0; e < count; ++e)
    for (std::size_t k = 0; k < key.size(); ++k) {
      const opd_map *m = key[k].map;
      W &w = writer[std::size_t(group[k])]
                   [std::size_t(m->data[e * m->arity + key[k].idx])];
      if (w != 0 && w != W(e + 1))
        return false;
      w = W(e + 1);
    }
  return true;
}

bool computeInjective(int64_t count, const std::vector<WrittenAccess> &key) {
  return count < int64_t(UINT32_MAX) ? injectiveAs<uint32_t>(count, key)
                                     : injectiveAs<int64_t>(count, key);
}
} // namespace

bool writesInjective(opd_set *set, std::vector<WrittenAccess> written,
                     int64_t count) {
  std::sort(written.begin(), written.end(), accessLess);
  written.erase(std::unique(written.begin(), written.end()), written.end());
  for (InjectivityEntry &e : injectivityCache()) {
    if (e.set != set || e.key != written || e.count != count)
      continue;
    bool current = true;
    for (std::size_t i = 0; i < e.key.size(); ++i)
      current = current && e.key[i].map->version == e.versions[i];
    if (!current) {
      ++injectivityCount;
      e.injective = computeInjective(count, e.key);
      for (std::size_t i = 0; i < e.key.size(); ++i)
        e.versions[i] = e.key[i].map->version;
    }
    return e.injective;
  }
  ++injectivityCount;
  InjectivityEntry e;
  e.set = set;
  e.count = count;
  e.injective = computeInjective(count, written);
  for (const WrittenAccess &w : written)
    e.versions.push_back(w.map->version);
  e.key = std::move(written);
  injectivityCache().push_back(std::move(e));
  return injectivityCache().back().injective;
}

int64_t injectivityChecks() { return injectivityCount; }

Plan buildOrderedPlan(const opd_set *set, int64_t first, int64_t last,
                      const std::vector<WrittenAccess> &written) {
  ++builtCount;
  Plan p;
  p.first = first;
  p.setSize = last;
  p.blockSize = 1;
  p.nblocks = std::max<int64_t>(0, last - first);
  p.blockColour.assign(std::size_t(p.nblocks), 0);
  // Elements in ascending global number (the identity on one process).
  std::vector<int64_t> order(std::size_t(p.nblocks));
  std::iota(order.begin(), order.end(), first);
  if (!set->globalIds.empty())
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return set->globalIds[std::size_t(a)] < set->globalIds[std::size_t(b)];
    });
  std::vector<opd_set *> targets;
  std::vector<int> group;
  targetGroups(written, targets, group);
  // last[g][t]: the colour of the latest element so far reaching target t
  // of set g, + 1 (0: none).
  std::vector<std::vector<int32_t>> lastColour(targets.size());
  for (std::size_t g = 0; g < targets.size(); ++g)
    lastColour[g].assign(std::size_t(targets[g]->size), 0);
  int32_t ncolours = 0;
  for (int64_t e : order) {
    int32_t c = 0;
    for (std::size_t k = 0; k < written.size(); ++k) {
      const opd_map *m = written[k].map;
      c = std::max(c, lastColour[std::size_t(group[k])][std::size_t(
                          m->data[e * m->arity + written[k].idx])]);
    }
    for (std::size_t k = 0; k < written.size(); ++k) {
      const opd_map *m = written[k].map;
      lastColour[std::size_t(group[k])]
                [std::size_t(m->data[e * m->arity + written[k].idx])] = c + 1;
    }
    p.blockColour[std::size_t(e - first)] = c;
    ncolours = std::max(ncolours, c + 1);
  }
  // Blocks by colour, ascending within each (a counting sort).
  p.ncolours = ncolours;
  p.colourOffsets.assign(std::size_t(ncolours) + 1, 0);
  for (int32_t c : p.blockColour)
    ++p.colourOffsets[std::size_t(c) + 1];
  for (int32_t c = 0; c < ncolours; ++c)
    p.colourOffsets[std::size_t(c) + 1] += p.colourOffsets[std::size_t(c)];
  p.blocks.resize(std::size_t(p.nblocks));
  std::vector<int64_t> next(p.colourOffsets.begin(), p.colourOffsets.end() - 1);
  for (int64_t b = 0; b < p.nblocks; ++b)
    p.blocks[std::size_t(next[std::size_t(p.blockColour[std::size_t(b)])]++)] =
        b;
  return p;
}

namespace {
uint64_t generations = 0;

Plan buildPart(int64_t first, int64_t last, PlanKind kind,
               const std::vector<WrittenAccess> &key) {
  Plan p = buildPlan(first, last, PlanBlockSize, key);
  if (kind == PlanKind::Super)
    p.super = buildSuperPlan(p, superBlockCount(p.nblocks), key);
  return p;
}

void buildPlans(PlanEntry &e) {
  const opd_set *s = e.set;
  e.generation = ++generations;
  e.kind = planKind();
  e.deep = Plan();
  if (e.ordered) {
    // One plan over the whole range: global order interleaves the parts.
    Plan p = buildOrderedPlan(s, 0, e.haloEnd, e.key);
    e.plan = s->partitioned ? Plan() : std::move(p);
    e.rest = s->partitioned ? std::move(p) : Plan();
    e.halo = Plan();
    return;
  }
  // Super-block schedules per part, like the colourings: the parts run one
  // after the other (the core while halo messages are in flight).
  if (s->core < e.haloEnd) {
    const int64_t layer1 = std::min(s->execSize, e.haloEnd);
    e.plan = buildPart(0, s->core, e.kind, e.key);
    e.rest = buildPart(s->core, s->owned, e.kind, e.key);
    e.halo = buildPart(s->owned, layer1, e.kind, e.key);
    if (e.haloEnd > layer1)
      e.deep = buildPart(layer1, e.haloEnd, e.kind, e.key);
  } else {
    e.plan = buildPart(0, e.haloEnd, e.kind, e.key);
    e.rest = Plan();
    e.halo = Plan();
  }
}
} // namespace

bool PlanEntry::current() const {
  if (kind != planKind())
    return false;
  for (std::size_t i = 0; i < key.size(); ++i)
    if (key[i].map->version != versions[i])
      return false;
  return true;
}

void refreshPlan(PlanEntry &entry) {
  if (entry.current())
    return;
  buildPlans(entry);
  for (std::size_t i = 0; i < entry.key.size(); ++i)
    entry.versions[i] = entry.key[i].map->version;
}

PlanEntry *getPlan(opd_set *set, std::vector<WrittenAccess> written,
                   int64_t haloEnd, bool ordered) {
  if (haloEnd < 0)
    haloEnd = set->execSize;
  std::sort(written.begin(), written.end(), accessLess);
  written.erase(std::unique(written.begin(), written.end()), written.end());
  for (auto &e : planCache()) {
    if (e->set == set && e->key == written && e->haloEnd == haloEnd &&
        e->ordered == ordered) {
      refreshPlan(*e);
      return e.get();
    }
  }
  auto e = std::make_unique<PlanEntry>();
  e->set = set;
  e->key = std::move(written);
  e->haloEnd = haloEnd;
  e->ordered = ordered;
  buildPlans(*e);
  for (const WrittenAccess &w : e->key)
    e->versions.push_back(w.map->version);
  planCache().push_back(std::move(e));
  return planCache().back().get();
}

int64_t plansBuilt() { return builtCount; }

void releasePlans() {
  planCache().clear();
  injectivityCache().clear();
}

} // namespace opdc::rt
