// StructuredGroup.cpp - The grouped halo exchange of block dats for a
// communication-avoiding chain, and its cost-model geometry (MPI).
// SPDX-License-Identifier: Apache-2.0
//
// mpi/Group.cpp dispatches a chain's grouped exchange here for its block
// dats: one message per neighbour per split dimension for all of them,
// the outermost dimension's left in flight while the chain's first loop
// runs its core (completeGroup at the next halo wait). Apart from
// Structured.cpp (the decomposition and the loops' own exchanges), whose
// Cartesian communicators (BlockComm, mpi/Mpi.h) it uses.
#include "core/Dist.h"

#include "core/Runtime.h"
#include "exec/Loop.h"
#include "mpi/Mpi.h"

#include <algorithm>
#include <cinttypes>
#include <map>
#include <vector>

namespace opdc::rt::dist {
namespace {
// A chain's grouped exchange in flight (groupBlockExchange), completed by
// completeGroup at the next loop's halo wait.
bool groupFlying = false;
// One dimension of a grouped exchange: every dat's slab in one message each
// way per neighbour, with its buffers and requests while in flight.
struct GroupFlight {
  struct Item {
    opd_dat *dat;
    int64_t depth[3];
  };
  struct Slab {
    int64_t lo[3], hi[3];
    std::size_t bytes;
  };
  const opd_block *block = nullptr;
  int d = 0;
  std::vector<Item> items;
  std::vector<Slab> slabs;
  std::size_t total = 0;
  std::vector<char> sendLo, sendHi, recvLo, recvHi;
  MPI_Request req[4];
  int nreq = 0;
  bool hasLo = false, hasHi = false;

  // The slab of every item next to the lower (low) or upper side, out of
  // the rank's own points (send) or into its halo (receive), packed one
  // after another in item order.
  void slabsOf(bool low, bool send, std::vector<char> &buf) {
    if (send)
      buf.resize(total);
    std::size_t at = 0;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const Item &it = items[i];
      int64_t blo[3], bhi[3];
      std::copy(slabs[i].lo, slabs[i].lo + 3, blo);
      std::copy(slabs[i].hi, slabs[i].hi + 3, bhi);
      const int64_t edge = low ? it.dat->ownFirst[d] : it.dat->ownLast[d];
      // Sent: the depth inside the edge; received: the depth outside it.
      const bool below = low != send;
      blo[d] = below ? edge - it.depth[d] : edge;
      bhi[d] = below ? edge : edge + it.depth[d];
      copyBox(it.dat, blo, bhi, buf.data() + at, !send);
      at += slabs[i].bytes;
    }
  }

  // Posts dimension d's messages (tags of their own: a loop's exchanges
  // may be posted while these fly); counts them into `entry`.
  void post(opd_loop *entry) {
    const BlockComm &c = comms().at(block);
    slabs.clear();
    total = 0;
    for (const Item &it : items) {
      Slab s{};
      int64_t points = 1;
      for (int e = 0; e < 3; ++e) {
        s.lo[e] = e < it.dat->ndims ? it.dat->ownFirst[e] : 0;
        s.hi[e] = e < it.dat->ndims ? it.dat->ownLast[e] : 1;
        if (e < d && e < it.dat->ndims) {
          if (!block->edgeLo[e])
            s.lo[e] -= it.depth[e];
          if (!block->edgeHi[e])
            s.hi[e] += it.depth[e];
        }
        if (e != d)
          points *= std::max<int64_t>(0, s.hi[e] - s.lo[e]);
      }
      s.bytes = std::size_t(points * it.depth[d] * it.dat->elementBytes());
      total += s.bytes;
      slabs.push_back(s);
    }
    hasLo = c.lower[d] != MPI_PROC_NULL;
    hasHi = c.upper[d] != MPI_PROC_NULL;
    nreq = 0;
    const int tagDown = 16 + 2 * d, tagUp = 16 + 2 * d + 1;
    const int count = int(total);
    if (hasLo) {
      recvLo.resize(total);
      MPI_Irecv(recvLo.data(), count, MPI_BYTE, c.lower[d], tagUp, c.cart,
                &req[nreq++]);
      slabsOf(true, true, sendLo);
      MPI_Isend(sendLo.data(), count, MPI_BYTE, c.lower[d], tagDown, c.cart,
                &req[nreq++]);
    }
    if (hasHi) {
      recvHi.resize(total);
      MPI_Irecv(recvHi.data(), count, MPI_BYTE, c.upper[d], tagDown, c.cart,
                &req[nreq++]);
      slabsOf(false, true, sendHi);
      MPI_Isend(sendHi.data(), count, MPI_BYTE, c.upper[d], tagUp, c.cart,
                &req[nreq++]);
    }
    const int sent = int(hasLo) + int(hasHi);
    entry->messages += sent;
    entry->exchangeBytes += double(sent) * double(total);
  }

  void complete() {
    MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
    nreq = 0;
    if (hasLo)
      slabsOf(true, false, recvLo);
    if (hasHi)
      slabsOf(false, false, recvHi);
  }
};
// A grouped exchange left in flight for the chain's first loop.
GroupFlight groupInFlight;

} // namespace

bool blockGroupFlying() { return groupFlying; }

void completeGroup() {
  if (!groupFlying)
    return;
  groupFlying = false;
  groupInFlight.complete();
}

void groupBlockExchange(const std::vector<GroupEntry> &group, opd_loop *entry) {
  completeGroup();
  // The dats whose halos are not valid as deep as the chain reads them;
  // each is exchanged as deep in every split dimension (the validity is
  // one depth), with corners.
  std::vector<GroupFlight::Item> items;
  const opd_block *block = nullptr;
  for (const GroupEntry &g : group) {
    opd_dat *dat = g.dat;
    auto it = comms().find(dat->block);
    if (it == comms().end())
      continue;
    const BlockComm &c = it->second;
    if (block && block != dat->block)
      failf("internal error: a grouped exchange over blocks '%s' and '%s'",
            block->name.c_str(), dat->block->name.c_str());
    block = dat->block;
    int64_t deepest = 0;
    int split = 0;
    for (int d = 0; d < dat->ndims; ++d)
      if (c.pdims[d] > 1) {
        deepest = std::max(deepest, g.depth[d]);
        ++split;
      }
    if (deepest == 0 ||
        (dat->haloValid >= deepest && (split < 2 || dat->cornersValid)))
      continue;
    GroupFlight::Item item{dat, {0, 0, 0}};
    for (int d = 0; d < dat->ndims; ++d) {
      item.depth[d] = c.pdims[d] > 1 ? deepest : 0;
      if (item.depth[d] > dat->depth[d])
        failf("%s: the chain's halo %" PRId64 " deep is deeper than the "
              "dat's halo between ranks (%" PRId64 "); internal error",
              dat->describe().c_str(), item.depth[d], dat->depth[d]);
      const int64_t owned = dat->ownLast[d] - dat->ownFirst[d];
      if (item.depth[d] > owned)
        failf("%s: a halo %" PRId64 " deep reaches past the %" PRId64
              " points this rank owns in dimension %d; run on fewer ranks "
              "or build with --comm-avoid=off",
              dat->describe().c_str(), item.depth[d], owned, d);
    }
    items.push_back(item);
  }
  if (!block || items.empty())
    return;
  // Every rank holds the same list (validity is decided alike), so the
  // messages pair up: per split dimension one message each way per
  // neighbour, every dat's slab in it, the slabs of later dimensions
  // spanning the halos earlier ones filled (corners). A block split along
  // its outermost dimension only needs one round: it stays in flight while
  // the chain's first loop runs its core (the rows that reach no halo), as
  // a plain loop's exchanges do, and completes at that loop's halo wait.
  const BlockComm &c = comms().at(block);
  const int outer = block->dims - 1;
  int split = 0;
  for (int d = 0; d < block->dims; ++d)
    split += c.pdims[d] > 1;
  for (const GroupFlight::Item &it : items) {
    int64_t deepest = 0;
    for (int d = 0; d < it.dat->ndims; ++d)
      deepest = std::max(deepest, it.depth[d]);
    it.dat->haloValid = std::max(it.dat->haloValid, deepest);
    it.dat->cornersValid = true;
  }
  GroupFlight &f = groupInFlight;
  f.block = block;
  f.items = std::move(items);
  for (int d = 0; d < block->dims; ++d) {
    if (c.pdims[d] == 1)
      continue;
    f.d = d;
    f.post(entry);
    if (split == 1 && d == outer) {
      groupFlying = true;
      return;
    }
    f.complete();
  }
}

void blockChainGeometry(const std::vector<GroupEntry> &group,
                        ChainGeometry &geo) {
  const opd_dat *first = nullptr;
  for (const GroupEntry &g : group)
    if (g.dat->block) {
      first = g.dat;
      break;
    }
  if (!first)
    return;
  auto it = comms().find(first->block);
  if (it == comms().end())
    return;
  const BlockComm &c = it->second;
  double owned = 1;
  for (int d = 0; d < first->ndims; ++d)
    owned *=
        double(std::max<int64_t>(1, first->ownLast[d] - first->ownFirst[d]));
  geo.ownedPoints = owned;
  int outerSplit = 0, otherSplit = 0;
  for (int d = 0; d < first->ndims; ++d) {
    if (c.pdims[d] == 1)
      continue;
    (d == first->ndims - 1 ? outerSplit : otherSplit) = 1;
    const double area =
        owned /
        double(std::max<int64_t>(1, first->ownLast[d] - first->ownFirst[d]));
    for (int side : {c.lower[d], c.upper[d]})
      if (side != MPI_PROC_NULL) {
        ++geo.neighbours;
        geo.haloPointsPerDepth += area;
      }
  }
  geo.overlaps = outerSplit && !otherSplit;
  geo.rounds = outerSplit + otherSplit > 0 ? 0 : 1;
  for (int d = 0; d < first->ndims; ++d)
    geo.rounds += c.pdims[d] > 1;
  double bytes = 0;
  int n = 0;
  for (const GroupEntry &g : group) {
    if (!g.dat->block)
      continue;
    bytes += double(g.dat->elementBytes());
    ++n;
    int64_t deepest = 0;
    for (int d = 0; d < g.dat->ndims; ++d)
      if (c.pdims[d] > 1)
        deepest = std::max(deepest, g.depth[d]);
    for (int d = 0; d < g.dat->ndims; ++d)
      if (c.pdims[d] > 1 && (deepest > g.dat->depth[d] ||
                             deepest > g.dat->ownLast[d] - g.dat->ownFirst[d]))
        geo.feasible = false;
    if (g.dat->haloValid < deepest)
      geo.groupBytes += double(g.dat->elementBytes()) * double(deepest) *
                        geo.haloPointsPerDepth;
  }
  geo.bytesPerPoint = n ? bytes / n : 8.0;
}

} // namespace opdc::rt::dist
