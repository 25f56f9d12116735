// HaloLayers.cpp - The exec layers 2..K of communication-avoiding halos
// (opd_rt_halo_depth K > 1), from the sets' slices (MPI).
// SPDX-License-Identifier: Apache-2.0
//
// Halo.cpp builds each rank's local order; with more than one exec layer
// it takes the layers from here: bit masks over the ranks per slice
// element, grown one layer at a time with one all-to-all per map. Apart
// from Halo.cpp because it is a computation of its own (the masks, their
// word width per rank count) that only the K > 1 halos need.
#include "mpi/Mpi.h"

#include <bit>

namespace opdc::rt::dist {
namespace {

// Exec layers 1..K of every set on this rank (K >= 2), as sorted global
// ids per layer, from the slices: per slice element two bit masks over
// the ranks, X (the element is owned by or in an exec layer <= k of rank
// r) and D (stored at level k on rank r: in X, or a map target of an
// element in X). Layer k of rank r: elements without r's bit in X whose
// own D bit (k >= 2) or some map target's D bit is r's. The D bits of map
// targets go to the slices holding them (one all-to-all per map).
// Masks are words of W bits, the narrowest type that holds one bit per rank
// (a byte an element up to 8 ranks): the masks of every set and the map
// entries' fetched masks are the partition's largest transient beside the
// mesh (Airfoil 720k at 2 ranks: 40 MiB with 64-bit words, 5 with bytes).
template <class W>
std::map<const opd_set *, std::vector<std::vector<int64_t>>>
execLayersIn(const Owners &owners, int64_t layers) {
  constexpr int Bits = int(8 * sizeof(W));
  const int p = ranks(), me = rank();
  const std::size_t words = std::size_t(p + Bits - 1) / Bits;
  struct Masks {
    std::vector<W> x, d;
  };
  std::map<const opd_set *, Masks> mk;
  std::map<const opd_set *, std::vector<std::vector<int64_t>>> out;
  const std::vector<opd_set *> sets = allSets();
  const std::vector<opd_map *> maps = allMaps();
  for (opd_set *s : sets) {
    Masks &m = mk[s];
    const std::size_t n = std::size_t(s->size);
    m.x.assign(n * words, 0);
    const std::vector<int32_t> &own = owners.at(s);
    for (std::size_t i = 0; i < n; ++i)
      m.x[i * words + std::size_t(own[i]) / Bits] |= W(W(1) << (own[i] % Bits));
    m.d = m.x;
    out[s].resize(std::size_t(layers));
  }
  for (int64_t k = 1; k <= layers; ++k) {
    // New exec elements, set by set (X of one set is not read by others in
    // the same layer; D is only updated below).
    for (opd_set *s : sets) {
      Masks &m = mk[s];
      const std::size_t n = std::size_t(s->size);
      std::vector<W> reach(n * words, 0);
      if (k >= 2)
        reach = m.d;
      for (opd_map *mp : maps) {
        if (mp->from != s)
          continue;
        const std::size_t entries = n * std::size_t(mp->arity);
        std::vector<W> t(entries * words);
        fetchRows(mp->to->globalSize, mk[mp->to].d.data(), words * sizeof(W),
                  mp->data, entries, t.data());
        for (std::size_t i = 0; i < n; ++i)
          for (int j = 0; j < mp->arity; ++j)
            for (std::size_t w = 0; w < words; ++w)
              reach[i * words + w] |=
                  t[(i * std::size_t(mp->arity) + std::size_t(j)) * words + w];
      }
      const int64_t lo = sliceLo(s->globalSize, me);
      std::vector<std::vector<int64_t>> toRank(static_cast<std::size_t>(p));
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t w = 0; w < words; ++w) {
          W fresh = W(reach[i * words + w] & ~m.x[i * words + w]);
          m.x[i * words + w] |= fresh;
          while (fresh) {
            const int bit = std::countr_zero(fresh);
            fresh = W(fresh & (fresh - 1));
            toRank[w * Bits + std::size_t(bit)].push_back(lo + int64_t(i));
          }
        }
      std::vector<int> from;
      out[s][std::size_t(k - 1)] = sortedUnique(exchangeIds(toRank, from));
    }
    if (k == layers)
      break;
    // D = X and the map targets of X.
    for (opd_set *s : sets)
      for (std::size_t i = 0; i < mk[s].d.size(); ++i)
        mk[s].d[i] |= mk[s].x[i];
    for (opd_map *mp : maps) {
      const opd_set *s = mp->from;
      const std::size_t n = std::size_t(s->size);
      const std::vector<W> &x = mk[s].x;
      std::vector<std::vector<int64_t>> send(static_cast<std::size_t>(p));
      const SliceOf of(mp->to->globalSize);
      std::vector<W> &d = mk[mp->to].d;
      const int64_t tlo = sliceLo(mp->to->globalSize, me);
      for (std::size_t i = 0; i < n; ++i)
        for (int j = 0; j < mp->arity; ++j) {
          const int64_t g =
              mp->data[i * std::size_t(mp->arity) + std::size_t(j)];
          const int q = of(g);
          if (q == me) { // in this rank's slice: no message
            for (std::size_t w = 0; w < words; ++w)
              d[std::size_t(g - tlo) * words + w] |= x[i * words + w];
            continue;
          }
          std::vector<int64_t> &v = send[std::size_t(q)];
          v.push_back(g);
          for (std::size_t w = 0; w < words; ++w)
            v.push_back(int64_t(x[i * words + w]));
        }
      std::vector<int> from;
      const std::vector<int64_t> got = exchangeIds(send, from);
      for (std::size_t k2 = 0; k2 + words < got.size() + 1; k2 += words + 1) {
        const std::size_t i = std::size_t(got[k2] - tlo);
        for (std::size_t w = 0; w < words; ++w)
          d[i * words + w] |= W(got[k2 + 1 + w]);
      }
    }
  }
  return out;
}

} // namespace

std::map<const opd_set *, std::vector<std::vector<int64_t>>>
execLayers(const Owners &owners, int64_t layers) {
  const int p = ranks();
  if (p <= 8)
    return execLayersIn<uint8_t>(owners, layers);
  if (p <= 16)
    return execLayersIn<uint16_t>(owners, layers);
  if (p <= 32)
    return execLayersIn<uint32_t>(owners, layers);
  return execLayersIn<uint64_t>(owners, layers);
}

} // namespace opdc::rt::dist
