// Plan.cpp - Greedy block colouring, and the plan cache.
// SPDX-License-Identifier: Apache-2.0
#include "exec/Plan.h"

#include "core/Runtime.h"

#include <algorithm>
#include <bit>
#include <memory>

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
  std::vector<opd_set *> targets;
  std::vector<int> group;
  for (const WrittenAccess &w : written) {
    if (w.map->from->size < setSize)
      failf("internal error: map '%s' does not start at the loop's set",
            w.map->name.c_str());
    checkMapIndices(w.map, nullptr);
    auto it = std::find(targets.begin(), targets.end(), w.map->to);
    group.push_back(int(it - targets.begin()));
    if (it == targets.end())
      targets.push_back(w.map->to);
  }
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
uint64_t generations = 0;

void buildPlans(PlanEntry &e) {
  const opd_set *s = e.set;
  e.generation = ++generations;
  e.deep = Plan();
  if (s->core < e.haloEnd) {
    const int64_t layer1 = std::min(s->execSize, e.haloEnd);
    e.plan = buildPlan(0, s->core, PlanBlockSize, e.key);
    e.rest = buildPlan(s->core, s->owned, PlanBlockSize, e.key);
    e.halo = buildPlan(s->owned, layer1, PlanBlockSize, e.key);
    if (e.haloEnd > layer1)
      e.deep = buildPlan(layer1, e.haloEnd, PlanBlockSize, e.key);
  } else {
    e.plan = buildPlan(0, e.haloEnd, PlanBlockSize, e.key);
    e.rest = Plan();
    e.halo = Plan();
  }
}
} // namespace

bool PlanEntry::current() const {
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
                   int64_t haloEnd) {
  if (haloEnd < 0)
    haloEnd = set->execSize;
  std::sort(written.begin(), written.end(), accessLess);
  written.erase(std::unique(written.begin(), written.end()), written.end());
  for (auto &e : planCache()) {
    if (e->set == set && e->key == written && e->haloEnd == haloEnd) {
      refreshPlan(*e);
      return e.get();
    }
  }
  auto e = std::make_unique<PlanEntry>();
  e->set = set;
  e->key = std::move(written);
  e->haloEnd = haloEnd;
  buildPlans(*e);
  for (const WrittenAccess &w : e->key)
    e->versions.push_back(w.map->version);
  planCache().push_back(std::move(e));
  return planCache().back().get();
}

int64_t plansBuilt() { return builtCount; }

void releasePlans() { planCache().clear(); }

} // namespace opdc::rt
