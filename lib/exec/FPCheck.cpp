// FPCheck.cpp - --check-fp: scans what a loop wrote for NaN and infinity.
// SPDX-License-Identifier: Apache-2.0
//
// Called from the loop's end phase (opd_loop_end, which opd_loop_run ends
// with), so every backend that runs loops through the phases gets it, and
// from opd_reduce_local/opd_reduce_global for reduction results. The scan
// reads host memory: a backend with device copies must have copied the
// loop's written dats back before opd_loop_end when the check is on.
//
// Which element is "first" does not depend on the thread or rank count:
// set dats are compared by global element index, block dats by the
// position in the loop's (global) range with dimension 0 fastest. On
// several ranks every rank scans its own elements, one MPI_Allreduce (min)
// per loop agrees on the first, and the rank holding it reports while the
// others wait for its MPI_Abort.
#include "exec/FPCheck.h"

#include "core/Dist.h"
#include "core/Runtime.h"
#include "exec/Loop.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace opdc::rt {
namespace detail {
bool fpCheckOn = false;
} // namespace detail

namespace {
constexpr int64_t NoHit = INT64_MAX;

// The loop that ended last and how many of its reductions were combined
// since (the k-th opd_reduce_global after a loop is its k-th reduction
// argument: generated code combines them in argument order).
const opd_loop *lastLoop = nullptr;
int reductionsSeen = 0;
// opd_reduce_local's record of the variable before the combination.
std::vector<char> finiteBefore;
bool haveBefore = false;

bool isFloat(int type) { return type == OPD_F32 || type == OPD_F64; }

// Exponent bits all ones: infinity or NaN. On the bits, so that no
// compiler flag can assume the values finite.
template <typename Bits, Bits Exponent> bool finiteBits(const char *p) {
  Bits b;
  std::memcpy(&b, p, sizeof b);
  return (b & Exponent) != Exponent;
}
bool finite(int type, const char *p) {
  return type == OPD_F64 ? finiteBits<uint64_t, UINT64_C(0x7ff0000000000000)>(p)
                         : finiteBits<uint32_t, UINT32_C(0x7f800000)>(p);
}

template <typename Bits, Bits Exponent>
bool elementFinite(const char *p, int dim) {
  bool ok = true;
  for (int c = 0; c < dim; ++c)
    ok &= finiteBits<Bits, Exponent>(p + std::size_t(c) * sizeof(Bits));
  return ok;
}

// The owned elements a loop's increments or writes through maps reach in
// one dat, ascending (local indices), cached per loop while the loop's
// iterations and the maps' versions stay the same.
struct Reached {
  int64_t count = -1;
  std::vector<std::pair<const opd_map *, uint64_t>> versions;
  std::vector<int32_t> elements;
};
std::map<std::pair<const opd_loop *, const opd_dat *>, Reached> &
reachedCache() {
  static std::map<std::pair<const opd_loop *, const opd_dat *>, Reached> all;
  return all;
}

bool writes(int mode) {
  return mode == OPD_WRITE || mode == OPD_RW || mode == OPD_INC;
}

// Null when `loop` writes `d` directly (every owned element may change).
const std::vector<int32_t> *reachedElements(const opd_loop *loop,
                                            const opd_dat *d) {
  std::vector<std::pair<const opd_map *, uint64_t>> versions;
  for (const opd_arg &a : loop->args) {
    if (a.dat != d || !writes(a.mode))
      continue;
    if (a.kind != OPD_ARG_INDIRECT)
      return nullptr;
    versions.emplace_back(a.map, a.map->version);
  }
  Reached &r = reachedCache()[{loop, d}];
  if (r.count == loop->count && r.versions == versions)
    return &r.elements;
  r.count = loop->count;
  r.versions = versions;
  const int64_t owned = d->set->owned;
  std::vector<char> hit(std::size_t(owned), 0);
  for (const opd_arg &a : loop->args)
    if (a.dat == d && writes(a.mode))
      for (int64_t e = 0; e < loop->count; ++e) {
        const int32_t t = a.map->data[e * a.map->arity + a.idx];
        if (t >= 0 && t < owned)
          hit[std::size_t(t)] = 1;
      }
  r.elements.clear();
  for (int64_t t = 0; t < owned; ++t)
    if (hit[std::size_t(t)])
      r.elements.push_back(int32_t(t));
  return &r.elements;
}

// Lowest global index of an owned element of set dat `d` with a
// non-finite component among `only` (all owned elements when null), or
// NoHit.
template <typename Bits, Bits Exponent>
int64_t scanSetDat(const opd_dat *d, const std::vector<int32_t> *only) {
  const opd_set *s = d->set;
  const int64_t n = only ? int64_t(only->size()) : s->owned;
  const int32_t *list = only ? only->data() : nullptr;
  const int64_t *gid = s->globalIds.empty() ? nullptr : s->globalIds.data();
  const char *base = static_cast<const char *>(d->data);
  const int64_t eb = d->elementBytes();
  const int dim = d->dim;
  int64_t best = NoHit;
#pragma omp parallel for schedule(static) reduction(min : best) if (n > 4096)
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = list ? list[k] : k;
    if (!elementFinite<Bits, Exponent>(base + i * eb, dim)) {
      const int64_t g = gid ? gid[i] : i;
      best = g < best ? g : best;
    }
  }
  return best;
}

// A block loop's range in three dimensions: the points run here [lo, hi)
// and the global range asked for, which numbers the points (position =
// ((k - a0[2]) * n[1] + (j - a0[1])) * n[0] + (i - a0[0])).
struct BlockRange {
  int64_t lo[3], hi[3], a0[3], n[3];
};

BlockRange blockRange(const opd_loop *loop) {
  BlockRange r;
  for (int d = 0; d < 3; ++d) {
    const bool used = d < loop->ndims;
    r.lo[d] = used ? loop->lo[d] : 0;
    r.hi[d] = used ? loop->hi[d] : 1;
    r.a0[d] = used ? loop->askedLo[d] : 0;
    r.n[d] = used ? loop->askedHi[d] - loop->askedLo[d] : 1;
  }
  return r;
}

const char *blockElement(const opd_dat *d, const int64_t *x) {
  int64_t offset = 0;
  for (int k = 0; k < d->ndims; ++k)
    offset += (x[k] - d->first[k]) * d->stride[k];
  return static_cast<const char *>(d->data) + offset * d->elementBytes();
}

// Lowest position in the loop's range of a point of block dat `d` with a
// non-finite component, or NoHit.
template <typename Bits, Bits Exponent>
int64_t scanBlockDat(const opd_dat *d, const BlockRange &r) {
  for (int k = 0; k < 3; ++k)
    if (r.hi[k] <= r.lo[k])
      return NoHit;
  const int64_t rows1 = r.hi[1] - r.lo[1];
  const int64_t rows = rows1 * (r.hi[2] - r.lo[2]);
  const int dim = d->dim;
  const int64_t eb = d->elementBytes();
  int64_t best = NoHit;
#pragma omp parallel for schedule(static) reduction(min : best) if (rows > 1)
  for (int64_t row = 0; row < rows; ++row) {
    int64_t x[3] = {r.lo[0], r.lo[1] + row % rows1, r.lo[2] + row / rows1};
    const char *p = blockElement(d, x);
    for (int64_t i = r.lo[0]; i < r.hi[0]; ++i, p += eb)
      if (!elementFinite<Bits, Exponent>(p, dim)) {
        const int64_t pos =
            ((x[2] - r.a0[2]) * r.n[1] + (x[1] - r.a0[1])) * r.n[0] +
            (i - r.a0[0]);
        best = pos < best ? pos : best;
        break;
      }
  }
  return best;
}

int64_t scanDat(const opd_dat *d, const opd_loop *loop) {
  if (d->block) {
    const BlockRange r = blockRange(loop);
    return d->type == OPD_F64
               ? scanBlockDat<uint64_t, UINT64_C(0x7ff0000000000000)>(d, r)
               : scanBlockDat<uint32_t, UINT32_C(0x7f800000)>(d, r);
  }
  const std::vector<int32_t> *only = reachedElements(loop, d);
  return d->type == OPD_F64
             ? scanSetDat<uint64_t, UINT64_C(0x7ff0000000000000)>(d, only)
             : scanSetDat<uint32_t, UINT32_C(0x7f800000)>(d, only);
}

// Whether this rank reports the hit the ranks agreed on (`agreed`, its own
// being `mine`): the lowest rank holding it. The others wait here for its
// MPI_Abort, so no rank goes on printing after the error.
bool reportsHere(int64_t mine, int64_t agreed) {
  if (dist::ranks() == 1)
    return true;
  int64_t who = mine == agreed ? dist::rank() : INT64_MAX;
  dist::allreduce(&who, OPD_I64, OPD_MIN, 1);
  if (who == dist::rank())
    return true;
  dist::barrier();
  dist::abortJob(1);
}

const char *valueKind(int type, const char *p) {
  double v;
  if (type == OPD_F64) {
    std::memcpy(&v, p, sizeof v);
  } else {
    float f;
    std::memcpy(&f, p, sizeof f);
    v = f;
  }
  return v != v ? "NaN" : v > 0 ? "+inf" : "-inf";
}

// The first non-finite component of the element at `p`.
int firstBadComponent(const opd_dat *d, const char *p) {
  for (int c = 0; c < d->dim; ++c)
    if (!finite(d->type, p + std::size_t(c) * std::size_t(d->bytes)))
      return c;
  return 0;
}

// "x.opd:12:3: loop 'k' over set 's'".
std::string describeLoop(const opd_loop *loop) {
  std::string text;
  if (!loop->location.empty())
    text = loop->location + ": ";
  text += "loop '" + loop->name + "' over ";
  if (loop->block)
    text += "block '" + loop->block->name + "'";
  else if (loop->set)
    text += "set '" + loop->set->name + "'";
  return text;
}

// ", in call 12 of this loop": which step of a time loop went wrong, where
// the loop runs once per step (counted at its end, so the failing call is
// included; the same count on every rank).
std::string callText(const opd_loop *loop) {
  return ", in call " + std::to_string(loop->calls) + " of this loop";
}

[[noreturn]] void reportDat(const opd_loop *loop, const opd_dat *d,
                            int64_t key) {
  const char *p;
  std::string where;
  if (d->block) {
    const BlockRange r = blockRange(loop);
    int64_t x[3] = {r.a0[0] + key % r.n[0], r.a0[1] + key / r.n[0] % r.n[1],
                    r.a0[2] + key / (r.n[0] * r.n[1])};
    p = blockElement(d, x);
    where = "point (";
    for (int k = 0; k < loop->ndims; ++k)
      where += (k ? ", " : "") + std::to_string(x[k]);
    where += ")";
  } else {
    const opd_set *s = d->set;
    int64_t local = key;
    if (!s->globalIds.empty())
      for (int64_t i = 0; i < s->owned; ++i)
        if (s->globalIds[std::size_t(i)] == key) {
          local = i;
          break;
        }
    p = static_cast<const char *>(d->data) + local * d->elementBytes();
    where = "element " + std::to_string(key);
  }
  const int c = firstBadComponent(d, p);
  fail(describeLoop(loop) + " produced " +
       valueKind(d->type, p + std::size_t(c) * std::size_t(d->bytes)) +
       " in dat '" + d->name + "' at " + where + ", component " +
       std::to_string(c) + callText(loop) + " (--check-fp)");
}
} // namespace

void setFPCheck(bool on) { detail::fpCheckOn = on; }

void checkLoopFP(opd_loop *loop) {
  lastLoop = loop;
  reductionsSeen = 0;
  haveBefore = false;
  // The written float dats, each once, in argument order.
  std::vector<const opd_dat *> dats;
  for (const opd_arg &a : loop->args) {
    const bool datKind = a.kind == OPD_ARG_DIRECT ||
                         a.kind == OPD_ARG_INDIRECT ||
                         a.kind == OPD_ARG_STENCIL;
    if (!datKind || !a.dat || !writes(a.mode) || !isFloat(a.dat->type))
      continue;
    bool seen = false;
    for (const opd_dat *d : dats)
      seen = seen || d == a.dat;
    if (!seen)
      dats.push_back(a.dat);
  }
  if (dats.empty())
    return;
  std::vector<int64_t> mine(dats.size()), agreed(dats.size());
  for (std::size_t k = 0; k < dats.size(); ++k)
    mine[k] = agreed[k] = scanDat(dats[k], loop);
  dist::allreduce(agreed.data(), OPD_I64, OPD_MIN, int(agreed.size()));
  for (std::size_t k = 0; k < dats.size(); ++k)
    if (agreed[k] != NoHit) {
      if (reportsHere(mine[k], agreed[k]))
        reportDat(loop, dats[k], agreed[k]);
      return;
    }
}

void noteReductionStart(const void *v, int type, int dim) {
  haveBefore = isFloat(type);
  if (!haveBefore)
    return;
  finiteBefore.assign(std::size_t(dim), 1);
  const int bytes = scalarBytes(type);
  for (int c = 0; c < dim; ++c)
    finiteBefore[std::size_t(c)] =
        finite(type, static_cast<const char *>(v) + c * bytes);
}

void checkReductionFP(const void *v, int type, int op, int dim) {
  const int nth = reductionsSeen++;
  const bool before = haveBefore && finiteBefore.size() == std::size_t(dim);
  haveBefore = false;
  if (!isFloat(type))
    return;
  const int bytes = scalarBytes(type);
  int bad = -1;
  for (int c = 0; c < dim && bad < 0; ++c) {
    const char *p = static_cast<const char *>(v) + c * bytes;
    if (!finite(type, p) && (!before || finiteBefore[std::size_t(c)]))
      bad = c;
  }
  if (bad < 0)
    return;
  // Every rank holds the same result: rank 0 reports it.
  if (!reportsHere(dist::rank() == 0 ? 0 : NoHit, 0))
    return;
  const char *opName = op == OPD_SUM ? "sum" : op == OPD_MIN ? "min" : "max";
  std::string text =
      lastLoop ? describeLoop(lastLoop) + " produced " : "produced ";
  text += valueKind(type, static_cast<const char *>(v) + bad * bytes);
  text += std::string(" in its ") + opName + " reduction";
  // The nth reduction argument of the loop, numbered from 1 as in source.
  int seen = 0;
  for (std::size_t i = 0; lastLoop && i < lastLoop->args.size(); ++i)
    if (lastLoop->args[i].kind == OPD_ARG_REDUCTION && seen++ == nth) {
      text += " (argument " + std::to_string(i + 1) + ")";
      break;
    }
  fail(text + ", component " + std::to_string(bad) +
       (lastLoop ? callText(lastLoop) : std::string()) + " (--check-fp)");
}

void forgetFPLoops() {
  reachedCache().clear();
  lastLoop = nullptr;
  reductionsSeen = 0;
  haveBefore = false;
}

} // namespace opdc::rt

// A device backend asks before opd_loop_end (core/Device.h).
extern "C" int opd_rt_check_fp(void) {
  return opdc::rt::fpCheckEnabled() ? 1 : 0;
}
