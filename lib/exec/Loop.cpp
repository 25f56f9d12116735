// Loop.cpp - opd_loop_prepare and the loop registry (the loop phases and
// opd_loop_run: exec/LoopRun.cpp).
// SPDX-License-Identifier: Apache-2.0
//
// The hot path is opd_loop_run plus the cache hit of opd_loop_prepare:
// neither allocates nor locks.
#include "exec/Loop.h"
#include "exec/Adjoint.h"
#include "exec/CommAvoid.h"

#include "core/Dist.h"
#include "core/Pool.h"
#include "core/Profile.h"
#include "core/Renumber.h"
#include "core/Runtime.h"
#include "exec/FPCheck.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace opdc::rt {
namespace {
std::vector<std::unique_ptr<opd_loop>> &loops() {
  static std::vector<std::unique_ptr<opd_loop>> all;
  return all;
}

bool sameArg(const opd_arg &a, const opd_arg &b) {
  return a.dat == b.dat && a.map == b.map && a.idx == b.idx &&
         a.kind == b.kind && a.mode == b.mode && a.bytes == b.bytes &&
         std::equal(a.lo, a.lo + 3, b.lo) && std::equal(a.hi, a.hi + 3, b.hi) &&
         a.flags == b.flags;
}

bool sameArgs(const opd_loop &loop, int nargs, const opd_arg *args) {
  if (loop.args.size() != std::size_t(nargs) || (nargs > 0 && !args))
    return false;
  for (int i = 0; i < nargs; ++i)
    if (!sameArg(loop.args[std::size_t(i)], args[i]))
      return false;
  return true;
}

bool writes(int mode) {
  return mode == OPD_WRITE || mode == OPD_RW || mode == OPD_INC;
}
bool reads(int mode) { return mode != OPD_WRITE; }
bool overwrites(int mode) { return mode == OPD_WRITE || mode == OPD_RW; }

// Every written indirect access of a loop that writes through a map with
// `out` or `inout` (their targets and the increments' are ordered
// together); empty for every other loop.
std::vector<WrittenAccess> orderedAccesses(int nargs, const opd_arg *args) {
  std::vector<WrittenAccess> all;
  bool any = false;
  for (int i = 0; i < nargs; ++i)
    if (args[i].kind == OPD_ARG_INDIRECT && writes(args[i].mode)) {
      all.push_back({args[i].map, args[i].idx});
      any = any || overwrites(args[i].mode);
    }
  if (!any)
    all.clear();
  return all;
}

// The first indirect argument with mode `mode`, for messages.
const opd_arg *firstIndirect(int nargs, const opd_arg *args, int mode) {
  for (int i = 0; i < nargs; ++i)
    if (args[i].kind == OPD_ARG_INDIRECT && args[i].mode == mode)
      return &args[i];
  return nullptr;
}

// Bumps the version of maps the loop may write (map arguments with a
// writing mode), so plans and index checks over them are redone later.
void touchWrittenMaps(int nargs, const opd_arg *args) {
  for (int i = 0; i < nargs; ++i)
    if (args[i].kind == OPD_ARG_MAP && args[i].map && writes(args[i].mode))
      ++args[i].map->version;
}

void checkArgs(const char *name, int nargs, const opd_arg *args) {
  if (nargs < 0 || (nargs > 0 && !args))
    failf("internal error: loop '%s' has bad arguments", name);
  for (int i = 0; i < nargs; ++i) {
    const opd_arg &a = args[i];
    bool needsDat = a.kind == OPD_ARG_DIRECT || a.kind == OPD_ARG_INDIRECT ||
                    a.kind == OPD_ARG_STENCIL;
    bool needsMap = a.kind == OPD_ARG_INDIRECT || a.kind == OPD_ARG_MAP;
    if ((needsDat && !a.dat) || (needsMap && !a.map))
      failf("internal error: loop '%s' argument %d lacks its dat or map", name,
            i);
    if (a.kind == OPD_ARG_INDIRECT && a.dat->set != a.map->to)
      failf("internal error: loop '%s' argument %d: dat '%s' is not on the "
            "target set of map '%s'",
            name, i, a.dat->name.c_str(), a.map->name.c_str());
    if (a.kind == OPD_ARG_INDIRECT && (a.idx < 0 || a.idx >= a.map->arity))
      failf("internal error: loop '%s' argument %d: index %d of map '%s' "
            "(arity %d)",
            name, i, a.idx, a.map->name.c_str(), a.map->arity);
  }
}

// Indirect maps must hold valid indices before a kernel dereferences them
// (maps filled by the program are checked here, after each change).
void checkIndirectMaps(int nargs, const opd_arg *args) {
  for (int i = 0; i < nargs; ++i)
    if (args[i].kind == OPD_ARG_INDIRECT &&
        args[i].map->checkedVersion != args[i].map->version)
      checkMapIndices(args[i].map, nullptr);
}

// Segments from boundary pairs: {b0, e0, e1} is [b0, e0) then [e0, e1);
// {b0, e0, b1, e1, b2, e2} three separate ranges. Empty ones are dropped;
// nchunks follows. With `origin` >= 0 the bounds lie on the chunk grid
// origin + k * chunkSize and chunks are numbered by position on it, not in
// the order the segments run.
void setSegments(opd_loop *loop, std::initializer_list<int64_t> bounds,
                 int64_t origin = -1) {
  std::vector<int64_t> b(bounds);
  std::vector<std::pair<int64_t, int64_t>> ranges;
  if (b.size() == 3)
    ranges = {{b[0], b[1]}, {b[1], b[2]}};
  else
    ranges = {{b[0], b[1]}, {b[2], b[3]}, {b[4], b[5]}};
  const int64_t cs = loop->chunkSize;
  loop->nsegments = 0;
  int64_t chunks = 0;
  for (std::size_t k = 0; k < ranges.size(); ++k) {
    const auto [begin, end] = ranges[k];
    // Segment 0 stays (maybe empty) so that it is always the core.
    if (k > 0 && end <= begin)
      continue;
    opd_loop::Segment &s = loop->segments[loop->nsegments++];
    s = {begin, std::max(begin, end),
         origin >= 0 ? (begin - origin) / cs : chunks};
    chunks += (s.end - s.begin + cs - 1) / cs;
  }
  loop->nchunks = chunks;
}

bool fillsMap(int nargs, const opd_arg *args) {
  for (int i = 0; i < nargs; ++i)
    if (args[i].kind == OPD_ARG_MAP && writes(args[i].mode))
      return true;
  return false;
}

// One process, sets renumbered (core/Renumber.cpp): a loop would write
// original indices into rows in the new order.
void refuseRenumberedMapWrite(const char *name, int nargs,
                              const opd_arg *args) {
  for (int i = 0; i < nargs; ++i) {
    const opd_map *m = args[i].map;
    if (args[i].kind == OPD_ARG_MAP && writes(args[i].mode) && m &&
        (!m->from->globalIds.empty() || !m->to->globalIds.empty()))
      failf("loop '%s' writes map '%s' after the sets were renumbered "
            "(--renumber, at the first loop that fills no map); fill "
            "maps first or run with --renumber=none",
            name, m->name.c_str());
  }
}

int64_t planChunks(const PlanEntry &e) {
  return e.plan.nblocks + e.rest.nblocks + e.halo.nblocks + e.deep.nblocks;
}

opd_loop *slotLoop(opd_loop **cache) {
  if (cache && *cache)
    return *cache;
  loops().push_back(std::make_unique<opd_loop>());
  opd_loop *loop = loops().back().get();
  if (cache)
    *cache = loop;
  return loop;
}

void resetLoop(opd_loop *loop, const char *name, int nargs,
               const opd_arg *args) {
  loop->name = name;
  loop->args.assign(args, args + nargs);
  loop->plan = nullptr;
  loop->partsUsed = false;
  loop->nsegments = 0;
}
} // namespace

int64_t messagesSent() {
  int64_t n = 0;
  for (const auto &l : loops())
    n += l->messages;
  return n;
}

opd_loop *groupEntry(opd_loop **cache, const char *name) {
  opd_loop *loop = slotLoop(cache);
  if (loop->name != name)
    resetLoop(loop, name, 0, nullptr);
  return loop;
}

namespace {
// One line of a sysfs cache attribute file, or "" if it cannot be read.
std::string sysfsLine(const std::string &path) {
  std::string line;
  if (FILE *f = std::fopen(path.c_str(), "r")) {
    char buf[256];
    if (std::fgets(buf, sizeof buf, f)) {
      line = buf;
      while (!line.empty() && (line.back() == '\n' || line.back() == ' '))
        line.pop_back();
    }
    std::fclose(f);
  }
  return line;
}

// The last-level cache as the kernel describes it: the highest-level data
// or unified cache of cpu0 (/sys/devices/system/cpu/cpu0/cache/index*),
// times the number of distinct instances of that level among the online
// CPUs (one an L3 slice or socket: the threads of a loop spread over them).
// 0 when sysfs does not say. Read before sysconf: in virtual machines the
// C library's _SC_LEVEL3_CACHE_SIZE comes from CPUID, which describes the
// host's socket (256 MiB on one of this project's 32 MiB-L3 VMs), while
// the kernel reports the cache the VM is given.
int64_t sysfsLastLevelCache() {
  const std::string cpu = "/sys/devices/system/cpu/";
  int level = 0;
  int64_t bytes = 0;
  std::string index;
  for (int i = 0; i < 16; ++i) {
    const std::string dir = cpu + "cpu0/cache/index" + std::to_string(i) + "/";
    const std::string type = sysfsLine(dir + "type");
    if (type.empty())
      break;
    if (type == "Instruction")
      continue;
    const int l = std::atoi(sysfsLine(dir + "level").c_str());
    char unit = 'K';
    long size = 0;
    if (std::sscanf(sysfsLine(dir + "size").c_str(), "%ld%c", &size, &unit) < 1 ||
        size <= 0 || l <= level)
      continue;
    level = l;
    bytes = int64_t(size) * (unit == 'M' ? 1 << 20 : unit == 'G' ? 1 << 30
                                                     : unit == 'K' ? 1 << 10
                                                                   : 1);
    index = "cache/index" + std::to_string(i) + "/shared_cpu_list";
  }
  if (bytes <= 0)
    return 0;
  std::vector<std::string> instances;
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  for (long c = 0; c < std::max(1L, cpus); ++c) {
    std::string list = sysfsLine(cpu + "cpu" + std::to_string(c) + "/" + index);
    if (list.empty())
      continue;
    if (std::find(instances.begin(), instances.end(), list) == instances.end())
      instances.push_back(std::move(list));
  }
  return bytes * int64_t(std::max<size_t>(1, instances.size()));
}
} // namespace

int64_t lastLevelCacheBytes() {
  static const int64_t bytes = [] {
    // OPD_LLC_BYTES overrides (a smaller cache than this machine's, for
    // measurements); else what sysfs reports; else the C library's L3 (or
    // L2); else 32 MiB.
    if (const int64_t set = envInteger("OPD_LLC_BYTES", 0, 1, INT64_MAX,
                                       "a positive number of bytes"))
      return set;
    if (const int64_t kernel = sysfsLastLevelCache())
      return kernel;
    long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (v <= 0)
      v = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return v > 0 ? int64_t(v) : int64_t(32) << 20;
  }();
  return bytes;
}

double loopBytes(int64_t n, int nargs, const opd_arg *args) {
  double total = 0;
  // Dats: (dat, through a map?) -> read/write flags and (map, idx) pairs.
  struct DatUse {
    bool read = false, written = false;
    std::vector<std::pair<const opd_map *, int32_t>> pairs;
  };
  std::map<std::pair<const opd_dat *, bool>, DatUse> dats;
  std::map<const opd_map *, bool> maps; // -> read and written
  for (int i = 0; i < nargs; ++i) {
    const opd_arg &a = args[i];
    switch (a.kind) {
    case OPD_ARG_DIRECT:
    case OPD_ARG_STENCIL:
    case OPD_ARG_INDIRECT: {
      DatUse &u = dats[{a.dat, a.kind == OPD_ARG_INDIRECT}];
      u.read = u.read || reads(a.mode);
      u.written = u.written || writes(a.mode);
      if (a.kind == OPD_ARG_INDIRECT) {
        std::pair<const opd_map *, int32_t> p{a.map, a.idx};
        if (std::find(u.pairs.begin(), u.pairs.end(), p) == u.pairs.end())
          u.pairs.push_back(p);
        maps.emplace(a.map, false);
      }
      break;
    }
    case OPD_ARG_MAP: {
      bool both = a.mode == OPD_RW || a.mode == OPD_INC;
      maps[a.map] = maps[a.map] || both;
      break;
    }
    default:
      break;
    }
  }
  for (const auto &[key, use] : dats) {
    const opd_dat *d = key.first;
    double f = use.read && use.written ? 2.0 : 1.0;
    double elements = double(n);
    if (key.second) {
      double reach = double(n) * double(use.pairs.size());
      elements = std::min(double(d->interiorPoints()), reach);
    }
    total += double(d->elementBytes()) * elements * f;
  }
  for (const auto &[m, both] : maps)
    total += 4.0 * m->arity * double(n) * (both ? 2.0 : 1.0);
  return total;
}

} // namespace opdc::rt

using namespace opdc::rt;

namespace opdc::rt {
namespace {
// The profile's note on the schedule of a loop with indirect writes, over
// all its parts: "colour, 4 colours" or "super, 8 super-blocks, 0.12 % of
// 1438600 elements cross (in 4 colours)".
std::string describePlan(const PlanEntry &e, bool partsUsed) {
  int64_t elements = 0, cross = 0, nsuper = 0;
  int32_t colours = 0;
  for (const Plan *p : {&e.plan, &e.rest, &e.halo, &e.deep}) {
    elements += std::max<int64_t>(0, p->setSize - p->first);
    cross += p->super.crossElements;
    nsuper += p->super.nsuper;
    colours = std::max(colours, p->ncolours);
  }
  char text[160];
  if (e.kind == PlanKind::Super && !partsUsed)
    std::snprintf(text, sizeof text,
                  "super, %lld super-block%s, %.2f %% of %lld elements "
                  "cross (in %d colour%s)",
                  (long long)nsuper, nsuper == 1 ? "" : "s",
                  elements ? 100.0 * double(cross) / double(elements) : 0.0,
                  (long long)elements, int(colours), colours == 1 ? "" : "s");
  else
    std::snprintf(text, sizeof text, "colour, %d colour%s", int(colours),
                  colours == 1 ? "" : "s");
  return text;
}
} // namespace

std::vector<ProfileRow> collectProfile() {
  std::vector<ProfileRow> rows;
  for (const auto &loop : loops()) {
    const std::string name =
        loop->rerun ? rerunLoopName(loop->name) : loop->name;
    auto it = std::find_if(rows.begin(), rows.end(),
                           [&](const ProfileRow &r) { return r.name == name; });
    if (it == rows.end()) {
      rows.push_back(ProfileRow{name, 0, 0, 0});
      it = rows.end() - 1;
    }
    if (loop->plan && it->plan.empty() && loop->calls > 0)
      it->plan = describePlan(*loop->plan, loop->partsUsed);
    if (!loop->note.empty() && it->plan.empty() && loop->calls > 0)
      it->plan = loop->note;
    // The bodies chosen by timing (rank 0's, as the plans).
    auto addTimed = [&](const char *what, int64_t ran, const std::string &detail,
                        const TimedChoice &c, const char *one,
                        const char *zero) {
      if (it->plan.find(what) != std::string::npos)
        return;
      char text[256];
      std::snprintf(text, sizeof text, "%s%s in %lld of %lld calls%s",
                    it->plan.empty() ? "" : "; ", what, (long long)ran,
                    (long long)loop->calls, detail.c_str());
      it->plan += text;
      if (c.choice < 0)
        return;
      std::snprintf(text, sizeof text,
                    ", then %s by timing (best %.2f ms %s, %.2f ms %s)",
                    c.choice ? one : zero, c.best[1] * 1e3, one,
                    c.best[0] * 1e3, zero);
      it->plan += text;
    };
    if (loop->streamedCalls > 0) {
      char detail[96];
      std::snprintf(detail, sizeof detail,
                    " (%.0f MiB a call, last-level cache %.0f MiB)",
                    loop->bytesPerCall / 1048576.0,
                    double(lastLevelCacheBytes()) / 1048576.0);
      addTimed("streaming stores", loop->streamedCalls, detail, loop->stream,
               "streaming", "plain");
    }
    if (loop->hasScalar && (loop->scalarCalls > 0 || loop->scalar.choice >= 0))
      addTimed("scalar body (branches kept)", loop->scalarCalls, "",
               loop->scalar, "scalar", "vectorised");
    it->sweepSeconds += loop->sweepSeconds;
    it->sweepCalls += loop->sweepCalls;
    it->calls += loop->calls;
    it->seconds += loop->seconds;
    it->bytes += loop->bytesPerCall * double(loop->calls) + loop->bytesAdjust;
    it->messages += loop->messages;
    it->exchangeBytes += loop->exchangeBytes;
    it->exchangeSeconds += loop->exchangeSeconds;
  }
  // Over ranks (every rank prepared the same loops in the same order):
  // times as max and average (the time outside exchanges: max of each
  // rank's), bytes and messages summed.
  if (dist::ranks() > 1) {
    const std::size_t n = rows.size();
    constexpr std::size_t k = 5;
    std::vector<double> in(k * n), mx(k * n), sum(k * n);
    for (std::size_t i = 0; i < n; ++i) {
      in[k * i] = rows[i].seconds;
      in[k * i + 1] = rows[i].bytes;
      in[k * i + 2] = double(rows[i].messages);
      in[k * i + 3] = rows[i].exchangeSeconds;
      in[k * i + 4] = rows[i].seconds - rows[i].exchangeSeconds;
    }
    dist::maxAndSum(in.data(), mx.data(), sum.data(), int(k * n));
    for (std::size_t i = 0; i < n; ++i) {
      rows[i].seconds = mx[k * i];
      rows[i].secondsAvg = sum[k * i] / dist::ranks();
      rows[i].bytes = sum[k * i + 1];
      rows[i].messages = int64_t(sum[k * i + 2]);
      rows[i].exchangeSeconds = mx[k * i + 3];
      rows[i].kernelSeconds = mx[k * i + 4];
    }
    std::vector<double> eb(n), ebMax(n), ebSum(n);
    for (std::size_t i = 0; i < n; ++i)
      eb[i] = rows[i].exchangeBytes;
    dist::maxAndSum(eb.data(), ebMax.data(), ebSum.data(), int(n));
    for (std::size_t i = 0; i < n; ++i)
      rows[i].exchangeBytes = ebSum[i];
  } else {
    for (ProfileRow &r : rows) {
      r.secondsAvg = r.seconds;
      r.kernelSeconds = r.seconds - r.exchangeSeconds;
    }
  }
  rows.erase(std::remove_if(rows.begin(), rows.end(),
                            [](const ProfileRow &r) { return r.calls == 0; }),
             rows.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const ProfileRow &a, const ProfileRow &b) {
                     if (a.seconds != b.seconds)
                       return a.seconds > b.seconds;
                     return a.name < b.name;
                   });
  return rows;
}

void releaseLoops() {
  setActiveLoop(nullptr);
  forgetEndedLoop();
  forgetFPLoops();
  forgetGathers();
  loops().clear();
  releasePlans();
}
} // namespace opdc::rt

extern "C" {

static opd_loop *prepareSetLoop(opd_loop **cache, const char *name,
                                opd_set *set, int nargs, const opd_arg *args) {
  if (!name)
    name = "<loop>";
  if (!set)
    failf("internal error: loop '%s' has no set", name);
  // Communication avoidance: the exec-halo layers asked for
  // (opd_loop_extend_next, extLo[0]), taken now whatever the loop; they
  // count only on a partitioned set with layers to run and without
  // reductions (below).
  int64_t extLo[3], extHi[3];
  takeExtension(extLo, extHi);
  // On several ranks the first set loop distributes the mesh unless main
  // did before its first statement (opd_rt_mesh_ready), except a loop
  // that fills a map: it runs first, on every rank over the whole
  // set, so that the partition sees the map (mpi/Partition.cpp); sets
  // read in slices are gathered whole for it first.
  if (!set->partitioned && !fillsMap(nargs, args))
    dist::partitionSets();
  else {
    if (!set->partitioned)
      dist::gatherSets();
    if (setsRenumbered())
      refuseRenumberedMapWrite(name, nargs, args);
  }
  int64_t extend = std::max<int64_t>(0, extLo[0]);
  const int64_t setLayers =
      set->partitioned ? int64_t(set->execEnd.size()) - 1 : 0;
  if (extend > setLayers)
    extend = setLayers;
  bool reduces = false;
  for (int i = 0; i < nargs; ++i)
    reduces = reduces || args[i].kind == OPD_ARG_REDUCTION;
  if (reduces)
    extend = 0;
  opd_loop *loop = cache ? *cache : nullptr;
  // A loop prepared before the partition ran over global elements.
  bool hit = loop && loop->set == set && !loop->block &&
             loop->partitioned == set->partitioned &&
             loop->extLo[0] == extend &&
             sameArgs(*loop, nargs, args) && loop->name == name;
  if (!hit)
    checkArgs(name, nargs, args);
  touchWrittenMaps(nargs, args);
  checkIndirectMaps(nargs, args);
  // Indirect out/inout: a map that changed may have changed the schedule.
  if (hit && loop->injective >= 0 &&
      writesInjective(set, orderedAccesses(nargs, args), loop->count) !=
          (loop->injective == 1))
    hit = false;
  if (hit) {
    if (loop->plan && !loop->plan->current()) {
      refreshPlan(*loop->plan);
      loop->nchunks = planChunks(*loop->plan);
    }
    return loop;
  }

  loop = slotLoop(cache);
  resetLoop(loop, name, nargs, args);
  loop->set = set;
  loop->partitioned = set->partitioned;
  loop->block = nullptr;
  loop->ndims = 1;
  loop->begin = 0;
  std::vector<WrittenAccess> written;
  const std::vector<WrittenAccess> ordered = orderedAccesses(nargs, args);
  loop->injective = -1;
  // Atomic increments need no plan, unless a reduction needs its parts.
  bool atomic = false;
  for (int i = 0; i < nargs; ++i)
    if (args[i].kind == OPD_ARG_INDIRECT && writes(args[i].mode)) {
      if ((args[i].flags & OPD_ARG_ATOMIC) && !reduces)
        atomic = true;
      else
        written.push_back({args[i].map, args[i].idx});
    }
  for (const WrittenAccess &w : written)
    if (w.map->from != set)
      failf("internal error: loop '%s' over set '%s' uses map '%s' from set "
            "'%s'",
            name, set->name.c_str(), w.map->name.c_str(),
            w.map->from->name.c_str());
  // Owner computes; with indirect writes the exec halo too, so that every
  // owned target receives all its increments here (lib/mpi/Halo.cpp).
  // Extended: `extend` exec layers (at least the one of indirect writes).
  std::fill(loop->extLo, loop->extLo + 3, 0);
  std::fill(loop->extHi, loop->extHi + 3, 0);
  loop->extLo[0] = extend;
  const bool incs = !written.empty() || atomic || !ordered.empty();
  loop->execLayers =
      std::max<int64_t>(extend, !incs || !set->partitioned ? 0 : 1);
  loop->count = !incs ? set->owned : set->execSize;
  if (extend > 0)
    loop->count = set->execEnd[std::size_t(loop->execLayers)];
  bool orderedPlan = false;
  if (!ordered.empty()) {
    // Indirect out/inout (docs/decisions/0280-...): an injective map runs
    // directly, every target having one writer; otherwise an ordered plan
    // gives each target its writers in ascending global element number.
    const bool injective = writesInjective(set, ordered, loop->count);
    loop->injective = injective ? 1 : 0;
    const opd_arg *rw = firstIndirect(nargs, args, OPD_RW);
    const opd_arg *w = rw ? rw : firstIndirect(nargs, args, OPD_WRITE);
    if (!injective && set->partitioned && rw)
      failf("loop '%s' writes dat '%s' through map '%s' with 'inout', and "
            "two of its elements reach one target: on several ranks an "
            "element would read targets another rank writes first, so the "
            "result would depend on the partition. Make the map injective on "
            "the loop's set, declare the parameter 'inc' or 'out', or run on "
            "one rank",
            name, rw->dat->name.c_str(), rw->map->name.c_str());
    if (!injective && set->partitioned && reduces)
      failf("loop '%s' has a reduction and writes dat '%s' through map '%s' "
            "with '%s', and two of its elements reach one target: not "
            "supported on several ranks; compute the reduction in a loop of "
            "its own",
            name, w->dat->name.c_str(), w->map->name.c_str(),
            w->mode == OPD_RW ? "inout" : "out");
    if (!injective) {
      orderedPlan = true;
      written = ordered;
    } else if (reduces && set->partitioned) {
      // Parts keep the exec halo's partials out (one colour).
      written = ordered;
    } else {
      // Injective over every written access: no two elements conflict.
      written.clear();
    }
  }
  if (written.empty()) {
    // Chunks of the core prefix first, then of the rest (one process: the
    // core is everything, so chunk c is [4096c, 4096(c+1)) as always). The
    // rest holds the exec halo of atomic increments (no reduction then).
    loop->chunkSize = DirectChunkSize;
    const int64_t core = std::min(set->core, loop->count);
    setSegments(loop, {0, core, loop->count});
  } else {
    loop->plan = getPlan(set, std::move(written), loop->count, orderedPlan);
    loop->chunkSize = loop->plan->plan.blockSize;
    loop->nchunks = planChunks(*loop->plan);
  }
  loop->bytesPerCall = loopBytes(loop->count, nargs, args);
  return loop;
}

opd_loop *opd_loop_prepare(opd_loop **cache, const char *name, opd_set *set,
                           int nargs, const opd_arg *args) {
  opd_loop *loop = prepareSetLoop(cache, name, set, nargs, args);
  // Its direct writes reach the elements it runs: [0, count).
  const int64_t lo[3] = {0, 0, 0}, hi[3] = {loop->count, 1, 1};
  tapeLoopPrepared(false, lo, hi, nargs, args);
  loop->rerun = loop->rerun || adjointRerunning();
  return loop;
}

static opd_loop *prepareBlockLoop(opd_loop **cache, const char *name,
                                  opd_block *block, int64_t *lo, int64_t *hi,
                                  int nargs, const opd_arg *args);

opd_loop *opd_loop_prepare_block(opd_loop **cache, const char *name,
                                 opd_block *block, int64_t *lo, int64_t *hi,
                                 int nargs, const opd_arg *args) {
  opd_loop *loop = prepareBlockLoop(cache, name, block, lo, hi, nargs, args);
  // Tape pushes waiting for this loop (compiler-built adjoints) take what
  // it overwrites.
  tapeLoopPrepared(true, loop->lo, loop->hi, nargs, args);
  loop->rerun = loop->rerun || adjointRerunning();
  return loop;
}

static opd_loop *prepareBlockLoop(opd_loop **cache, const char *name,
                                  opd_block *block, int64_t *lo, int64_t *hi,
                                  int nargs, const opd_arg *args) {
  if (!name)
    name = "<loop>";
  if (!block || !lo || !hi)
    failf("internal error: block loop '%s' lacks its block or range", name);
  const int dims = block->dims;
  // Communication avoidance: how far beyond the rank's points to run.
  int64_t extLo[3], extHi[3];
  takeExtension(extLo, extHi);
  for (int i = 0; i < nargs; ++i)
    if (args[i].kind == OPD_ARG_REDUCTION) {
      std::fill(extLo, extLo + 3, 0);
      std::fill(extHi, extHi + 3, 0);
    }
  opd_loop *loop = cache ? *cache : nullptr;
  if (loop && loop->block == block && sameArgs(*loop, nargs, args) &&
      std::equal(lo, lo + dims, loop->askedLo) &&
      std::equal(hi, hi + dims, loop->askedHi) &&
      std::equal(extLo, extLo + 3, loop->extLo) &&
      std::equal(extHi, extHi + 3, loop->extHi) && loop->name == name) {
    std::copy(loop->lo, loop->lo + dims, lo);
    std::copy(loop->hi, loop->hi + dims, hi);
    return loop;
  }

  checkArgs(name, nargs, args);
  loop = slotLoop(cache);
  resetLoop(loop, name, nargs, args);
  loop->set = nullptr;
  loop->block = block;
  loop->ndims = dims;
  int64_t inner = 1;
  for (int d = 0; d < 3; ++d) {
    loop->askedLo[d] = d < dims ? lo[d] : 0;
    loop->askedHi[d] = d < dims ? hi[d] : 0;
    // Owner computes: the part of the range inside the rank's points;
    // a communication-avoiding loop also the extLo/extHi points beyond
    // them that its range holds (its neighbours' points, redundantly).
    loop->extLo[d] = extLo[d];
    loop->extHi[d] = extHi[d];
    int64_t l = loop->askedLo[d], h = loop->askedHi[d];
    if (d < dims && l < h) {
      l = std::max(l, block->ownLo[d] - extLo[d]);
      h = std::max(l, std::min(h, block->ownHi[d] + extHi[d]));
    }
    loop->lo[d] = l;
    loop->hi[d] = h;
    if (d < dims) {
      lo[d] = l;
      hi[d] = h;
    }
    if (d < dims - 1)
      inner *= std::max<int64_t>(0, h - l);
  }
  const int outer = dims - 1;
  loop->begin = loop->lo[outer];
  loop->count =
      inner > 0 ? std::max<int64_t>(0, loop->hi[outer] - loop->lo[outer]) : 0;
  if (dims == 3)
    loop->chunkSize = std::max<int64_t>(
        1, std::min(Block3DChunkPoints / std::max<int64_t>(1, inner),
                    loop->count / Block3DMinChunks));
  else
    loop->chunkSize =
        std::max<int64_t>(1, BlockChunkPoints / std::max<int64_t>(1, inner));
  // Outer indices whose stencils reach another rank's points (within the
  // reach below ownLo or above ownHi of the outer dimension) run after the
  // halo exchange, the others (the core) while it is in flight. One
  // process: no other rank, so the core is the whole range.
  int64_t reachLo = 0, reachHi = 0;
  for (int i = 0; i < nargs; ++i)
    if (args[i].kind == OPD_ARG_STENCIL && args[i].mode != OPD_WRITE) {
      reachLo = std::max<int64_t>(reachLo, -args[i].lo[outer]);
      reachHi = std::max<int64_t>(reachHi, args[i].hi[outer]);
    }
  const int64_t first = loop->begin, last = loop->begin + loop->count;
  const int64_t coreLo =
      block->edgeLo[outer]
          ? first
          : std::clamp(block->ownLo[outer] + reachLo, first, last);
  const int64_t coreHi =
      block->edgeHi[outer]
          ? last
          : std::clamp(block->ownHi[outer] - reachHi, coreLo, last);
  // The core's bounds move onto the chunk grid first + k * chunkSize (the
  // core shrinks by less than a chunk at each end) and chunks are numbered
  // by position: every loop over the same range then sums its reductions
  // over the same chunks in the same order, however far its stencils reach
  // (a loop fused with a stencil loop, passes/Fuse.cpp, reaches further
  // than the loop it replaced, and its sums must not change).
  const int64_t cs = loop->chunkSize;
  const int64_t alignedLo =
      std::min(last, first + (coreLo - first + cs - 1) / cs * cs);
  const int64_t alignedHi =
      coreHi == last ? last
                     : std::max(alignedLo, first + (coreHi - first) / cs * cs);
  if (alignedLo == first)
    setSegments(loop, {first, alignedHi, last}, first);
  else
    setSegments(loop, {alignedLo, alignedHi, first, alignedLo, alignedHi, last},
                first);
  loop->bytesPerCall = loopBytes(loop->count * inner, nargs, args);
  return loop;
}
} // extern "C"
