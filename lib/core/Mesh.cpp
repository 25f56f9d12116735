// Mesh.cpp - Sets, maps, blocks and dats: creation, layout, swap, copy
// (fill, on the runtime's threads, is exec/Fill.cpp).
// SPDX-License-Identifier: Apache-2.0
#include "core/Device.h"
#include "core/Dist.h"
#include "core/Memory.h"
#include "core/Objects.h"
#include "core/Renumber.h"
#include "core/Runtime.h"

#include <algorithm>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <utility>
#include <vector>

namespace opdc::rt {
namespace {
// Every object lives until opd_rt_finalize; handles stay valid until then.
struct Registry {
  std::vector<std::unique_ptr<opd_set>> sets;
  std::vector<std::unique_ptr<opd_map>> maps;
  std::vector<std::unique_ptr<opd_dat>> dats;
  std::vector<std::unique_ptr<opd_block>> blocks;
};
Registry &registry() {
  static Registry r;
  return r;
}

const char *nameOr(const char *name, const char *fallback) {
  return name && *name ? name : fallback;
}

void requireSet(const opd_set *set, const char *what, const char *name) {
  if (!set)
    failf("internal error: %s '%s' has no set", what, name);
}

void checkDatType(int type, int dim, const char *name) {
  if (type < OPD_BOOL || type > OPD_F64)
    failf("dat '%s': unsupported element type %s", name, scalarName(type));
  if (dim < 1)
    failf("dat '%s': element dimension %d must be at least 1", name, dim);
}
} // namespace

opd_set *newSet() {
  registry().sets.push_back(std::make_unique<opd_set>());
  return registry().sets.back().get();
}
opd_map *newMap() {
  registry().maps.push_back(std::make_unique<opd_map>());
  return registry().maps.back().get();
}
opd_dat *newDat() {
  registry().dats.push_back(std::make_unique<opd_dat>());
  return registry().dats.back().get();
}
opd_block *newBlock() {
  registry().blocks.push_back(std::make_unique<opd_block>());
  return registry().blocks.back().get();
}

std::vector<opd_set *> allSets() {
  std::vector<opd_set *> v;
  for (auto &s : registry().sets)
    v.push_back(s.get());
  return v;
}
std::vector<opd_map *> allMaps() {
  std::vector<opd_map *> v;
  for (auto &m : registry().maps)
    v.push_back(m.get());
  return v;
}
std::vector<opd_dat *> allDats() {
  std::vector<opd_dat *> v;
  for (auto &d : registry().dats)
    v.push_back(d.get());
  return v;
}

void releaseObjects() {
  Registry &r = registry();
  // A block dat's data lies less than Alignment bytes past its aligned
  // allocation (the lead of opd_block_dat_create), a set dat's at it.
  for (auto &d : r.dats)
    freeAligned(reinterpret_cast<void *>(reinterpret_cast<uintptr_t>(d->data) &
                                         ~uintptr_t(Alignment - 1)));
  for (auto &m : r.maps)
    freeAligned(m->data);
  r = Registry();
  forgetRenumbering();
}

void checkMapIndices(opd_map *map, const char *file) {
  if (map->checkedVersion == map->version)
    return;
  const int64_t n = map->from->size * map->arity;
  const int64_t limit = map->to->size;
  const int32_t *d = map->data;
  for (int64_t i = 0; i < n; ++i) {
    if (d[i] < 0 || d[i] >= limit) {
      std::string where = file ? "file '" + std::string(file) + "', dataset '" +
                                     map->name + "': "
                               : "";
      failf("%smap '%s' (%s -> %s): index %" PRId32 " at [%" PRId64 "][%" PRId64
            "] is out of range for set '%s' of size %" PRId64,
            where.c_str(), map->name.c_str(), map->from->name.c_str(),
            map->to->name.c_str(), d[i], i / map->arity, i % map->arity,
            map->to->name.c_str(), limit);
    }
  }
  map->checkedVersion = map->version;
}

void copyBox(opd_dat *dat, const int64_t *lo, const int64_t *hi, char *buf,
             bool toDat) {
  const int64_t eb = dat->elementBytes();
  int64_t n[3] = {1, 1, 1}, off[3] = {0, 0, 0};
  for (int k = 0; k < dat->ndims; ++k) {
    n[k] = std::max<int64_t>(0, hi[k] - lo[k]);
    off[k] = lo[k] - dat->first[k];
    if (n[k] > 0 && (off[k] < 0 || off[k] + n[k] > dat->stored[k]))
      failf("internal error: %s: box outside the local storage in "
            "dimension %d",
            dat->describe().c_str(), k);
  }
  if (n[0] == 0 || n[1] == 0 || n[2] == 0)
    return;
  // A newer device copy (a GPU program) is packed on the device; received
  // points go into both copies.
  if (!toDat && devicePackBox(dat, lo, hi, buf))
    return;
  if (toDat)
    deviceUnpackBox(dat, lo, hi, buf);
  const std::size_t rowBytes = std::size_t(n[0] * eb);
  char *base = static_cast<char *>(dat->data);
  for (int64_t k = 0; k < n[2]; ++k)
    for (int64_t j = 0; j < n[1]; ++j) {
      int64_t first = off[0] + (off[1] + j) * dat->stride[1] +
                      (off[2] + k) * dat->stride[2];
      char *local = base + first * eb;
      if (toDat)
        std::memcpy(local, buf, rowBytes);
      else
        std::memcpy(buf, local, rowBytes);
      buf += rowBytes;
    }
}

} // namespace opdc::rt

int64_t opd_dat::interiorPoints() const {
  if (set)
    return set->globalSize;
  int64_t n = 1;
  for (int d = 0; d < ndims; ++d)
    n *= size[d];
  return n;
}

std::string opd_dat::describe() const {
  if (set)
    return "dat '" + name + "' on set '" + set->name + "'";
  return "dat '" + name + "' on block '" + (block ? block->name : "?") + "'";
}

namespace opdc::rt {
namespace {
// OPD_PAD_ROWS=0 stores block dats densely, as before rows were padded
// (tests compare the two bit for bit; benchmarks measure the difference).
bool padRows() {
  static const bool enabled = envSwitch("OPD_PAD_ROWS", true);
  return enabled;
}

// Points allocated per row (dimension 0) of a block dat that stores `n`:
// rounded up so that a row is a whole number of cache lines, which keeps
// every row's first interior point 64-byte aligned (opd_block_dat_create).
// Aligned rows let the generated vector loops store whole lines after a
// short peeled prologue, and stream them without reading them first
// (docs/performance.md). Rows where the padding would add more than an
// eighth (short rows, or element sizes sharing few factors of 2 with 64)
// stay dense.
int64_t paddedRow(int64_t n, int64_t elementBytes) {
  if (!padRows())
    return n;
  const int64_t unit =
      int64_t(Alignment) / std::gcd(elementBytes, int64_t(Alignment));
  const int64_t padded = (n + unit - 1) / unit * unit;
  return (padded - n) * 8 <= n ? padded : n;
}

// The first way `dst` and `src` differ in shape ("" when they do not):
// placement, element type, components, then per dimension extent, halos
// and base.
std::string copyMismatch(const opd_dat *dst, const opd_dat *src) {
  const std::string d = "dat '" + dst->name + "'",
                    s = "dat '" + src->name + "'";
  if (dst->set != src->set || dst->block != src->block)
    return "not on the same set or block (" + src->describe() + ", " +
           dst->describe() + ")";
  if (dst->type != src->type)
    return "element types differ (" + s + " holds " + scalarName(src->type) +
           ", " + d + " " + scalarName(dst->type) + ")";
  if (dst->dim != src->dim)
    return "components per element differ (" + s + " has " +
           std::to_string(src->dim) + ", " + d + " " +
           std::to_string(dst->dim) + ")";
  for (int k = 0; k < src->ndims; ++k) {
    const std::string in = " in dimension " + std::to_string(k) + " (";
    if (dst->size[k] != src->size[k])
      return "extents differ" + in + s + " " + std::to_string(src->size[k]) +
             ", " + d + " " + std::to_string(dst->size[k]) + ")";
    if (dst->haloMinus[k] != src->haloMinus[k] ||
        dst->haloPlus[k] != src->haloPlus[k])
      return "halos differ" + in + s + " " + std::to_string(src->haloMinus[k]) +
             " below and " + std::to_string(src->haloPlus[k]) + " above, " + d +
             " " + std::to_string(dst->haloMinus[k]) + " and " +
             std::to_string(dst->haloPlus[k]) + ")";
    if (dst->base[k] != src->base[k])
      return "bases differ" + in + s + " " + std::to_string(src->base[k]) +
             ", " + d + " " + std::to_string(dst->base[k]) + ")";
  }
  return "";
}
} // namespace
} // namespace opdc::rt

namespace opdc::rt {
namespace {
// opd_rt_halo_depth's sizes; the defaults when it is not called.
int64_t wantLayers = 1, wantDepth = 2;
} // namespace

int64_t haloLayersWanted() { return wantLayers; }
int64_t blockHaloDepthWanted() { return wantDepth; }
} // namespace opdc::rt

using namespace opdc::rt;

extern "C" {

void opd_rt_halo_depth(int64_t set_layers, int64_t block_depth) {
  if (set_layers < 1 || block_depth < 0)
    failf("internal error: halo of %lld layers, block depth %lld",
          (long long)set_layers, (long long)block_depth);
  wantLayers = set_layers;
  wantDepth = std::max<int64_t>(2, block_depth);
}

void opd_rt_mesh_ready(void) { dist::partitionSets("at the start of main"); }

opd_set *opd_set_create(const char *name, int64_t size) {
  name = nameOr(name, "<set>");
  if (size < 0)
    failf("set '%s': size %" PRId64 " is negative", name, size);
  opd_set *s = newSet();
  s->name = name;
  s->size = s->globalSize = s->owned = s->execSize = s->core = size;
  dist::setCreated(s);
  return s;
}

int64_t opd_set_size(const opd_set *set) { return set ? set->globalSize : 0; }

// Sizes and counts are 64-bit everywhere in the runtime; the language's
// size(set) is an i32 (docs/decisions/0057-*), so a bigger
// set is an error where the program asks for its size, not a wrapped value.
int32_t opd_set_size_i32(const opd_set *set) {
  const int64_t n = opd_set_size(set);
  if (n > INT32_MAX)
    failf("size(%s): the set has %" PRId64 " elements, more than an i32 "
          "holds (%d); size() is an i32 in this version of the language",
          set->name.c_str(), n, INT32_MAX);
  return int32_t(n);
}

opd_map *opd_map_create(const char *name, opd_set *from, opd_set *to,
                        int arity) {
  name = nameOr(name, "<map>");
  requireSet(from, "map", name);
  requireSet(to, "map", name);
  if (arity < 1)
    failf("map '%s': arity %d must be at least 1", name, arity);
  if (dist::ranks() > 1 && (from->partitioned || to->partitioned))
    failf("map '%s': maps must be created before the first loop when the "
          "program runs on several ranks",
          name);
  if (setsRenumbered() && (!from->globalIds.empty() || !to->globalIds.empty()))
    failf("map '%s': maps must be created before the first loop when the "
          "sets are renumbered (--renumber); run with --renumber=none",
          name);
  // Map entries are 32-bit local indices (half the memory traffic of
  // 64-bit ones in every indirect loop): a target set must fit.
  if (to->size > INT32_MAX)
    failf("map '%s': its target set '%s' has %" PRId64 " elements, but map "
          "entries are 32-bit indices (at most %d elements); split the set",
          name, to->name.c_str(), to->size, INT32_MAX);
  if (from->size > INT64_MAX / int64_t(sizeof(int32_t)) / arity)
    failf("map '%s': %" PRId64 " elements x arity %d overflow the map's size",
          name, from->size, arity);
  opd_map *m = newMap();
  m->name = name;
  m->from = from;
  m->to = to;
  m->arity = arity;
  std::string what = "map '" + m->name + "'";
  m->data = static_cast<int32_t *>(allocZeroed(
      std::size_t(from->size) * std::size_t(arity) * sizeof(int32_t),
      what.c_str()));
  return m;
}

const int32_t *opd_map_values(opd_map *map) {
  if (!map)
    return nullptr;
  const std::vector<int64_t> &ids = map->to->globalIds;
  if (ids.empty())
    return map->data;
  if (map->valuesVersion != map->version) {
    const int64_t n = map->from->size * map->arity;
    map->values.resize(std::size_t(n));
    for (int64_t k = 0; k < n; ++k)
      map->values[std::size_t(k)] = int32_t(ids[std::size_t(map->data[k])]);
    map->valuesVersion = map->version;
  }
  return map->values.data();
}

const int64_t *opd_set_global_ids(const opd_set *set) {
  return set && !set->globalIds.empty() ? set->globalIds.data() : nullptr;
}

int32_t *opd_map_data(opd_map *map) { return map ? map->data : nullptr; }

// The fields every dat has, checked by the caller; storage comes after.
static opd_dat *newDatOf(const char *name, opd_scalar type, int dim) {
  opd_dat *d = newDat();
  d->name = name;
  d->type = type;
  d->dim = dim;
  d->bytes = scalarBytes(type);
  return d;
}

opd_dat *opd_dat_create(const char *name, opd_set *set, opd_scalar type,
                        int dim) {
  name = nameOr(name, "<dat>");
  requireSet(set, "dat", name);
  checkDatType(type, dim, name);
  opd_dat *d = newDatOf(name, type, dim);
  d->set = set;
  d->elements = set->size;
  std::string what = d->describe();
  d->data = allocZeroed(std::size_t(d->elements) * std::size_t(dim) *
                            std::size_t(d->bytes),
                        what.c_str());
  return d;
}

opd_block *opd_block_create(const char *name, int dims) {
  name = nameOr(name, "<block>");
  if (dims < 1 || dims > 3)
    failf("block '%s': %d dimensions, expected 1 to 3", name, dims);
  opd_block *b = newBlock();
  b->name = name;
  b->dims = dims;
  return b;
}

opd_dat *opd_block_dat_create(const char *name, opd_block *block,
                              opd_scalar type, int dim, const int64_t *size,
                              const int64_t *halo_minus,
                              const int64_t *halo_plus, const int64_t *base) {
  name = nameOr(name, "<dat>");
  if (!block)
    failf("internal error: dat '%s' has no block", name);
  checkDatType(type, dim, name);
  opd_dat *d = newDatOf(name, type, dim);
  d->block = block;
  d->ndims = block->dims;
  for (int k = 0; k < d->ndims; ++k) {
    d->size[k] = size ? size[k] : 0;
    d->haloMinus[k] = halo_minus ? halo_minus[k] : 0;
    d->haloPlus[k] = halo_plus ? halo_plus[k] : 0;
    d->base[k] = base ? base[k] : 0;
    if (d->size[k] < 0)
      failf("dat '%s': size %" PRId64 " in dimension %d is negative", name,
            d->size[k], k);
    if (d->haloMinus[k] < 0 || d->haloPlus[k] < 0)
      failf("dat '%s': negative halo depth in dimension %d", name, k);
  }
  // The first dat of a block fixes how the block is split over ranks.
  if (!block->decomposed)
    dist::decomposeBlock(block, d->base, d->size);
  int64_t points = 1;
  for (int k = 0; k < d->ndims; ++k) {
    // Owned: the rank's part of [base - haloMinus, base + size + haloPlus);
    // between ranks a halo `depth` deep (at least 2, so stencils one or two
    // points wide work on dats declared without a halo; deeper when the
    // program's communication-avoiding chains need it, opd_rt_halo_depth).
    const int64_t lo = d->base[k] - d->haloMinus[k];
    const int64_t hi = d->base[k] + d->size[k] + d->haloPlus[k];
    d->ownFirst[k] = std::max(lo, block->ownLo[k]);
    d->ownLast[k] = std::max(d->ownFirst[k], std::min(hi, block->ownHi[k]));
    d->depth[k] = std::max<int64_t>(
        {d->haloMinus[k], d->haloPlus[k], blockHaloDepthWanted()});
    d->first[k] = d->ownFirst[k] - (block->edgeLo[k] ? 0 : d->depth[k]);
    const int64_t last = d->ownLast[k] + (block->edgeHi[k] ? 0 : d->depth[k]);
    d->stored[k] = last - d->first[k];
    d->stride[k] = points;
    int64_t extent = k == 0 && d->ndims > 1
                         ? paddedRow(d->stored[0], d->elementBytes())
                         : d->stored[k];
    if (extent > 0 && points > INT64_MAX / extent)
      failf("dat '%s': too many points", name);
    points *= extent;
  }
  d->elements = points;
  std::string what = d->describe();
  // The rank's first interior point of dimension 0 starts a cache line in
  // every row: `lead` bytes of the allocation come before the first stored
  // point (with the padded rows, a multiple of 64 bytes apart, every row's
  // first interior point is then 64-byte aligned).
  const int64_t aligned = std::max(d->base[0], d->ownFirst[0]) - d->first[0];
  const int64_t lead = padRows()
                           ? (int64_t(Alignment) - aligned * d->elementBytes() %
                                                       int64_t(Alignment)) %
                                 int64_t(Alignment)
                           : 0;
  d->data = static_cast<char *>(allocZeroed(
                std::size_t(lead + points * d->elementBytes()), what.c_str())) +
            lead;
  return d;
}

int64_t opd_dat_extent(const opd_dat *dat, int d) {
  if (dat->set) {
    if (d != 0)
      failf("size(%s, %d): a set dat has one dimension", dat->name.c_str(), d);
    return dat->set->globalSize;
  }
  if (d < 0 || d >= dat->ndims)
    failf("size(%s, %d): dimension out of range; the dat has %d",
          dat->name.c_str(), d, dat->ndims);
  return dat->size[d];
}

void *opd_dat_origin(opd_dat *dat, int64_t *strides) {
  if (dat->set) {
    if (strides)
      strides[0] = 1;
    return dat->data;
  }
  // Index (0, ..., 0) is -first points past the first stored point in
  // each dimension (global indices address the rank's storage); it may lie
  // outside the allocation, which is fine as only stored indices are
  // dereferenced.
  int64_t offset = 0;
  for (int k = 0; k < dat->ndims; ++k) {
    if (strides)
      strides[k] = dat->stride[k];
    offset -= dat->first[k] * dat->stride[k];
  }
  auto origin = reinterpret_cast<uintptr_t>(dat->data) +
                uintptr_t(offset * dat->elementBytes());
  return reinterpret_cast<void *>(origin);
}

void *opd_dat_data(opd_dat *dat) { return dat ? dat->data : nullptr; }

int64_t opd_dat_stored_points(const opd_dat *dat) { return dat->elements; }

void opd_dat_swap(opd_dat *a, opd_dat *b) {
  dist::settleExchanges();
  bool same = a->type == b->type && a->dim == b->dim && a->set == b->set &&
              a->block == b->block && a->elements == b->elements &&
              a->ndims == b->ndims;
  for (int k = 0; same && k < a->ndims; ++k)
    same = a->size[k] == b->size[k] && a->haloMinus[k] == b->haloMinus[k] &&
           a->haloPlus[k] == b->haloPlus[k] && a->base[k] == b->base[k];
  if (!same)
    failf("swap(%s, %s): the dats differ in shape, element type or halos",
          a->name.c_str(), b->name.c_str());
  std::swap(a->data, b->data);
  std::swap(a->haloValid, b->haloValid);
  std::swap(a->cornersValid, b->cornersValid);
}

void opd_dat_copy(opd_dat *dst, const opd_dat *src) {
  dist::settleExchanges();
  if (!dst || !src)
    failf("internal error: copy of a dat that does not exist");
  if (dst == src)
    return;
  const std::string why = copyMismatch(dst, src);
  if (!why.empty())
    failf("copy of dat '%s' into dat '%s': %s", src->name.c_str(),
          dst->name.c_str(), why.c_str());
  // Same set, or same block with the same extents, halos and base: the
  // local storage (halos between ranks included) has the same layout.
  if (dst->elements != src->elements)
    failf("internal error: copy of %s into %s: %lld vs %lld stored points",
          src->describe().c_str(), dst->describe().c_str(),
          (long long)src->elements, (long long)dst->elements);
  copyElements(dst->data, src->data, src->elements, src->elementBytes());
  // The halo copies are exactly as current as the source's.
  dst->haloValid = src->haloValid;
  dst->cornersValid = src->cornersValid;
}

} // extern "C"
