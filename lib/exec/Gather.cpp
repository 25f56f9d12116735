// Gather.cpp - Increments through maps in global element order
// (-frepro-sum): opd_loop_gather and the apply step at the loop's end.
// SPDX-License-Identifier: Apache-2.0
//
// Exact sums (ReproSum.cpp) make a reduction independent of the order of
// its contributions, but the values summed must be the same too: Airfoil's
// rms sums q, which res_calc increments through maps. A target's increments
// arrive in the order of the colouring plan's blocks, and on several ranks
// in the local numbering ([core | boundary | exec halo], lib/mpi/Halo.cpp),
// so float rounding and therefore q, and the rms, change with the rank
// count. With -frepro-sum a loop whose only writes reaching other elements
// are increments through maps (RaceClass::IncStrips) runs in two steps:
//   1. the body (any order, any threads) writes element e's increments of
//      argument a into row e of a buffer (starting at -0.0; 0 for
//      integers) instead of into the target;
//   2. at opd_loop_end, per argument in argument order, each target t adds
//      the rows of the elements e with map[e][idx] == t in ascending
//      *global* element number, threads taking targets.
// Every owned target has all its increments on its rank (the exec halo),
// so each owned target sees the same additions in the same order for any
// partition, rank count and thread count, and the serial run uses the same
// order. The reverse lists (CSR: targets -> sorting elements) are cached
// per (map, idx) and rebuilt when the map's version or the element count
// changes. Cost: the buffers (elements x dim per argument) and one pass
// over them; measured in bench/repro/README.md.
#include "core/Memory.h"
#include "core/Pool.h"
#include "core/Runtime.h"
#include "exec/Loop.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <vector>

namespace opdc::rt {
namespace {
struct Reverse {
  uint64_t version = ~uint64_t(0);
  int64_t count = -1, targets = -1;
  const opd_set *set = nullptr;
  std::vector<int64_t> offsets; ///< targets + 1
  std::vector<int64_t> sources; ///< element numbers, global order per target
  /// Targets with at least one source (a boundary loop reaches few).
  std::vector<int64_t> active;
};

struct Buffer {
  void *data = nullptr;
  std::size_t bytes = 0;
};

struct LoopGathers {
  std::map<int, Buffer> buffers; ///< per argument
  std::vector<int> pending;      ///< arguments asked for since the last end
};

std::map<std::pair<const opd_map *, int>, Reverse> &reverseCache() {
  static std::map<std::pair<const opd_map *, int>, Reverse> cache;
  return cache;
}

std::map<const opd_loop *, LoopGathers> &gathers() {
  static std::map<const opd_loop *, LoopGathers> all;
  return all;
}

const Reverse &reverseOf(const opd_map *map, int idx, const opd_set *set,
                         int64_t count) {
  Reverse &r = reverseCache()[{map, idx}];
  const int64_t targets = map->to->size;
  if (r.version == map->version && r.count == count && r.set == set &&
      r.targets == targets)
    return r;
  r.version = map->version;
  r.count = count;
  r.set = set;
  r.targets = targets;
  // Elements in ascending global number (the identity on one process).
  std::vector<int64_t> order(static_cast<std::size_t>(count));
  std::iota(order.begin(), order.end(), int64_t(0));
  if (!set->globalIds.empty())
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return set->globalIds[std::size_t(a)] < set->globalIds[std::size_t(b)];
    });
  r.offsets.assign(std::size_t(targets) + 1, 0);
  const int arity = map->arity;
  for (int64_t e = 0; e < count; ++e) {
    const int64_t t = map->data[e * arity + idx];
    if (t < 0 || t >= targets)
      failf("internal error: map '%s' entry %lld out of range in a gather",
            map->name.c_str(), (long long)t);
    ++r.offsets[std::size_t(t) + 1];
  }
  r.active.clear();
  for (int64_t t = 0; t < targets; ++t) {
    if (r.offsets[std::size_t(t) + 1] > 0)
      r.active.push_back(t);
    r.offsets[std::size_t(t) + 1] += r.offsets[std::size_t(t)];
  }
  r.sources.assign(std::size_t(count), 0);
  std::vector<int64_t> next(r.offsets.begin(), r.offsets.end() - 1);
  for (int64_t e : order)
    r.sources[std::size_t(next[std::size_t(map->data[e * arity + idx])]++)] = e;
  return r;
}

template <typename T>
void apply(T *dat, const T *rows, int dim, const Reverse &r) {
  const int64_t nactive = int64_t(r.active.size());
  // Each target once, its rows in element order: any thread, same bits.
  // Tasks of DirectChunkSize targets (core/Pool.h).
  const int64_t tasks = (nactive + DirectChunkSize - 1) / DirectChunkSize;
  runTasks(tasks, true, [&](int64_t task) {
    const int64_t k1 = std::min(nactive, (task + 1) * DirectChunkSize);
    for (int64_t k = task * DirectChunkSize; k < k1; ++k) {
      const int64_t t = r.active[std::size_t(k)];
      const int64_t lo = r.offsets[std::size_t(t)],
                    hi = r.offsets[std::size_t(t) + 1];
      T *out = dat + t * dim;
      for (int64_t j = lo; j < hi; ++j) {
        const T *row = rows + r.sources[std::size_t(j)] * dim;
        for (int c = 0; c < dim; ++c)
          out[c] += row[c];
      }
    }
  });
}
} // namespace

void applyGathers(opd_loop *loop) {
  auto it = gathers().find(loop);
  if (it == gathers().end() || it->second.pending.empty())
    return;
  LoopGathers &g = it->second;
  for (int n : g.pending) {
    const opd_arg &a = loop->args[std::size_t(n)];
    const Reverse &r = reverseOf(a.map, a.idx, loop->set, loop->count);
    void *rows = g.buffers[n].data;
    opd_dat *d = a.dat;
    switch (d->type) {
    case OPD_F64:
      apply(static_cast<double *>(d->data), static_cast<const double *>(rows),
            d->dim, r);
      break;
    case OPD_F32:
      apply(static_cast<float *>(d->data), static_cast<const float *>(rows),
            d->dim, r);
      break;
    case OPD_I64:
      apply(static_cast<int64_t *>(d->data),
            static_cast<const int64_t *>(rows), d->dim, r);
      break;
    case OPD_I32:
      apply(static_cast<int32_t *>(d->data),
            static_cast<const int32_t *>(rows), d->dim, r);
      break;
    default:
      failf("internal error: increment of dat '%s' (%s) in a gather",
            d->name.c_str(), scalarName(d->type));
    }
  }
  g.pending.clear();
}

void forgetGathers() {
  for (auto &[loop, g] : gathers())
    for (auto &[n, b] : g.buffers)
      freeAligned(b.data);
  gathers().clear();
  reverseCache().clear();
}
} // namespace opdc::rt

using namespace opdc::rt;

extern "C" void *opd_loop_gather(opd_loop *loop, int32_t arg) {
  if (!loop || !loop->set || arg < 0 || std::size_t(arg) >= loop->args.size() ||
      loop->args[std::size_t(arg)].kind != OPD_ARG_INDIRECT ||
      loop->args[std::size_t(arg)].mode != OPD_INC)
    failf("internal error: opd_loop_gather of argument %d of loop '%s'",
          int(arg), loop ? loop->name.c_str() : "?");
  LoopGathers &g = gathers()[loop];
  const opd_arg &a = loop->args[std::size_t(arg)];
  Buffer &b = g.buffers[arg];
  const std::size_t want = std::size_t(std::max<int64_t>(loop->count, 1)) *
                           std::size_t(a.bytes);
  if (want > b.bytes || !b.data) {
    freeAligned(b.data);
    b.data = allocRaw(want, "increment buffer (-frepro-sum)");
    b.bytes = want;
  }
  if (std::find(g.pending.begin(), g.pending.end(), arg) == g.pending.end())
    g.pending.push_back(arg);
  return b.data;
}
