// Structured.cpp - Block meshes over a Cartesian grid of ranks: the
// decomposition, halo exchanges with dirty bits, loop hooks.
// SPDX-License-Identifier: Apache-2.0
//
// Decomposition: the first dat created on a block fixes it. MPI_Dims_create
// factors the rank count over the block's dimensions, the largest factor on
// the outermost dimension (contiguous slabs); MPI_Cart_create (not
// periodic, no reordering) gives each rank its coordinates. Along dimension
// d with p ranks, rank c owns the global indices [cut(c), cut(c+1)) with
// cut(c) = base + size*c/p of that first dat, except that the first rank's
// range is unbounded below and the last rank's above: the points beyond
// the block's boundary (a dat's declared halo) belong to the edge ranks, so
// boundary loops run exactly there. Every dat of the block stores its part
// of the owned range plus a halo `depth` deep on the sides facing another
// rank (core/Mesh.cpp), and generated code addresses it in global indices.
//
// Exchanges: before a loop, each dat it reads through a stencil reaching k
// points away along a dimension is exchanged k deep along that dimension
// (a reflective boundary loop reaching 4 points along x exchanges nothing
// along y), and only across the cuts its range reaches (a loop over the
// strip along a wall sends nothing), unless its halo copies are still
// valid that deep (dirty bits: a loop writing the dat invalidates them;
// fill() and swap() keep them right). Dimension by dimension, each a round of
// MPI_Isend/MPI_Irecv with both neighbours; when a stencil reads off-axis
// points, the slabs of later dimensions include the halos of earlier ones,
// which fills the corners. When the block is split along its outermost
// dimension only (2 ranks, or a rank grid 1 x ... x p), the messages stay
// in flight while the loop runs its core rows (those whose stencils reach
// no other rank's points: exec/Loop.cpp), and complete before the rows
// next to the neighbours. A chain's grouped exchange: mpi/StructuredGroup.cpp.
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

bool writes(int mode) {
  return mode == OPD_WRITE || mode == OPD_RW || mode == OPD_INC;
}

} // namespace

std::map<const opd_block *, BlockComm> &comms() {
  static std::map<const opd_block *, BlockComm> all;
  return all;
}

void releaseStructured() {
  for (auto &[block, c] : comms()) {
    for (MPI_Comm &l : c.line)
      if (l != MPI_COMM_NULL)
        MPI_Comm_free(&l);
    if (c.cart != MPI_COMM_NULL)
      MPI_Comm_free(&c.cart);
  }
  comms().clear();
}

void decomposeBlock(opd_block *block, const int64_t *base,
                    const int64_t *size) {
  block->decomposed = true;
  if (ranks() == 1)
    return;
  const int dims = block->dims;
  int factors[3] = {0, 0, 0};
  MPI_Dims_create(ranks(), dims, factors); // non-increasing
  BlockComm c;
  for (int d = 0; d < dims; ++d)
    c.pdims[d] = factors[dims - 1 - d];
  int periods[3] = {0, 0, 0};
  MPI_Cart_create(MPI_COMM_WORLD, dims, c.pdims, periods, 0, &c.cart);
  MPI_Cart_coords(c.cart, rank(), dims, c.coords);
  for (int d = 0; d < dims; ++d) {
    MPI_Cart_shift(c.cart, d, 1, &c.lower[d], &c.upper[d]);
    const int64_t p = c.pdims[d], k = c.coords[d];
    if (size[d] < p)
      failf("block '%s' cannot be split over %d ranks: dimension %d of its "
            "first dat has %" PRId64 " points for %" PRId64
            " ranks along it; run on fewer ranks",
            block->name.c_str(), ranks(), d, size[d], p);
    auto cut = [&](int64_t i) { return base[d] + size[d] * i / p; };
    block->edgeLo[d] = k == 0;
    block->edgeHi[d] = k == p - 1;
    block->ownLo[d] = k == 0 ? INT64_MIN / 4 : cut(k);
    block->ownHi[d] = k == p - 1 ? INT64_MAX / 4 : cut(k + 1);
    for (int64_t i = 1; i < p; ++i)
      c.cuts[d].push_back(cut(i));
  }
  comms()[block] = c;
}

namespace {
/// The communicator of the ranks along `dim` of `block`'s rank grid.
MPI_Comm lineComm(const opd_block *block, int dim) {
  BlockComm &c = comms().at(block);
  if (c.line[dim] == MPI_COMM_NULL) {
    int remain[3] = {0, 0, 0};
    remain[dim] = 1;
    MPI_Cart_sub(c.cart, remain, &c.line[dim]);
  }
  return c.line[dim];
}
} // namespace

void shiftAlong(const opd_block *block, int dim, int distance,
                const std::vector<char> &toLower,
                const std::vector<char> &toUpper,
                std::vector<char> &fromLower, std::vector<char> &fromUpper) {
  auto it = comms().find(block);
  if (it == comms().end() || it->second.pdims[dim] == 1)
    return;
  MPI_Comm line = lineComm(block, dim);
  const int n = it->second.pdims[dim];
  int me = 0;
  MPI_Comm_rank(line, &me);
  const int lower = me - distance >= 0 ? me - distance : MPI_PROC_NULL;
  const int upper = me + distance < n ? me + distance : MPI_PROC_NULL;
  // Tag 0 travels up, tag 1 down.
  MPI_Request req[4];
  MPI_Irecv(fromLower.data(), int(fromLower.size()), MPI_BYTE, lower, 0, line,
            &req[0]);
  MPI_Irecv(fromUpper.data(), int(fromUpper.size()), MPI_BYTE, upper, 1, line,
            &req[1]);
  MPI_Isend(toUpper.data(), int(toUpper.size()), MPI_BYTE, upper, 0, line,
            &req[2]);
  MPI_Isend(toLower.data(), int(toLower.size()), MPI_BYTE, lower, 1, line,
            &req[3]);
  MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
}

int allgatherAlong(const opd_block *block, int dim,
                   const std::vector<char> &mine,
                   std::vector<std::vector<char>> &all) {
  auto it = comms().find(block);
  if (it == comms().end() || it->second.pdims[dim] == 1) {
    all.assign(1, mine);
    return 0;
  }
  MPI_Comm line = lineComm(block, dim);
  // Ranks of the sub-communicator follow the coordinate along dim.
  const int n = it->second.pdims[dim];
  int me = 0;
  MPI_Comm_rank(line, &me);
  int size = int(mine.size());
  std::vector<int> sizes(std::size_t(n), 0), offsets(std::size_t(n), 0);
  MPI_Allgather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, line);
  int total = 0;
  for (int r = 0; r < n; ++r) {
    offsets[std::size_t(r)] = total;
    total += sizes[std::size_t(r)];
  }
  std::vector<char> buffer(std::size_t(std::max(total, 1)));
  MPI_Allgatherv(mine.data(), size, MPI_BYTE, buffer.data(), sizes.data(),
                 offsets.data(), MPI_BYTE, line);
  all.resize(std::size_t(n));
  for (int r = 0; r < n; ++r)
    all[std::size_t(r)].assign(buffer.begin() + offsets[std::size_t(r)],
                               buffer.begin() + offsets[std::size_t(r)] +
                                   sizes[std::size_t(r)]);
  return me;
}

namespace {
// One dimension of one dat's exchange: buffers, requests, the slab boxes.
struct BlockPending {
  opd_dat *dat = nullptr;
  int d = 0;
  int64_t depth = 0;
  int64_t lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
  std::vector<char> sendLo, sendHi, recvLo, recvHi;
  MPI_Request req[4];
  int nreq = 0;
  bool fromLo = false, fromHi = false; ///< halos received from each side
};

/// Which messages an exchange along one dimension sends and receives (the
/// neighbours evaluate the same conditions, so every send has its receive).
struct Sides {
  bool sendLo = true, recvLo = true, sendHi = true, recvHi = true;
};
std::vector<BlockPending> blockPending;
std::size_t blockInFlight = 0;

void slabBox(const BlockPending &p, int64_t from, int64_t to, int64_t *blo,
             int64_t *bhi) {
  std::copy(p.lo, p.lo + 3, blo);
  std::copy(p.hi, p.hi + 3, bhi);
  blo[p.d] = from;
  bhi[p.d] = to;
}

// Posts dimension d of dat's exchange, depths[d] deep; with `corners`, the
// slab includes the halos of the dimensions before d (depths[e] deep).
void postDim(opd_dat *dat, int d, const int64_t *depths, bool corners,
             opd_loop *loop, Sides sides = {}) {
  const int64_t depth = depths[d];
  const BlockComm &c = comms()[dat->block];
  if (blockPending.size() <= blockInFlight)
    blockPending.emplace_back();
  BlockPending &p = blockPending[blockInFlight++];
  p.dat = dat;
  p.d = d;
  p.depth = depth;
  const int dims = dat->ndims;
  int64_t points = 1;
  for (int e = 0; e < 3; ++e) {
    p.lo[e] = e < dims ? dat->ownFirst[e] : 0;
    p.hi[e] = e < dims ? dat->ownLast[e] : 1;
    if (e < dims && e != d && corners && e < d) {
      if (!dat->block->edgeLo[e])
        p.lo[e] -= depths[e];
      if (!dat->block->edgeHi[e])
        p.hi[e] += depths[e];
    }
    if (e != d)
      points *= std::max<int64_t>(0, p.hi[e] - p.lo[e]);
  }
  const int64_t owned = dat->ownLast[d] - dat->ownFirst[d];
  if (depth > owned)
    failf("%s: a halo %" PRId64 " deep reaches past the %" PRId64
          " points this rank owns in dimension %d; run on fewer ranks",
          dat->describe().c_str(), depth, owned, d);
  const std::size_t bytes = std::size_t(points * depth * dat->elementBytes());
  const int count = int(bytes);
  const bool hasLo = c.lower[d] != MPI_PROC_NULL;
  const bool hasHi = c.upper[d] != MPI_PROC_NULL;
  p.fromLo = hasLo && sides.recvLo;
  p.fromHi = hasHi && sides.recvHi;
  const bool sendLo = hasLo && sides.sendLo, sendHi = hasHi && sides.sendHi;
  p.nreq = 0;
  const int tagDown = 2 * d, tagUp = 2 * d + 1;
  int64_t blo[3], bhi[3];
  if (p.fromLo) {
    p.recvLo.resize(bytes);
    MPI_Irecv(p.recvLo.data(), count, MPI_BYTE, c.lower[d], tagUp, c.cart,
              &p.req[p.nreq++]);
  }
  if (sendLo) {
    p.sendLo.resize(bytes);
    slabBox(p, dat->ownFirst[d], dat->ownFirst[d] + depth, blo, bhi);
    copyBox(dat, blo, bhi, p.sendLo.data(), false);
    MPI_Isend(p.sendLo.data(), count, MPI_BYTE, c.lower[d], tagDown, c.cart,
              &p.req[p.nreq++]);
  }
  if (p.fromHi) {
    p.recvHi.resize(bytes);
    MPI_Irecv(p.recvHi.data(), count, MPI_BYTE, c.upper[d], tagDown, c.cart,
              &p.req[p.nreq++]);
  }
  if (sendHi) {
    p.sendHi.resize(bytes);
    slabBox(p, dat->ownLast[d] - depth, dat->ownLast[d], blo, bhi);
    copyBox(dat, blo, bhi, p.sendHi.data(), false);
    MPI_Isend(p.sendHi.data(), count, MPI_BYTE, c.upper[d], tagUp, c.cart,
              &p.req[p.nreq++]);
  }
  const int sent = int(sendLo) + int(sendHi);
  loop->messages += sent;
  loop->exchangeBytes += double(sent) * double(bytes);
}

// Waits for every posted dimension and unpacks the halos, in post order.
void completeAll() {
  for (std::size_t k = 0; k < blockInFlight; ++k) {
    BlockPending &p = blockPending[k];
    MPI_Waitall(p.nreq, p.req, MPI_STATUSES_IGNORE);
    int64_t blo[3], bhi[3];
    if (p.fromLo) {
      slabBox(p, p.dat->ownFirst[p.d] - p.depth, p.dat->ownFirst[p.d], blo,
              bhi);
      copyBox(p.dat, blo, bhi, p.recvLo.data(), true);
    }
    if (p.fromHi) {
      slabBox(p, p.dat->ownLast[p.d], p.dat->ownLast[p.d] + p.depth, blo,
              bhi);
      copyBox(p.dat, blo, bhi, p.recvHi.data(), true);
    }
  }
  blockInFlight = 0;
}

// Tests the block exchanges in flight while a loop's core runs (the core
// poll, decision 0475): a dat's slab over Open MPI's eager limit moves only
// inside MPI calls. Testall leaves the requests alone until all of them are
// done, then nulls them, so completeAll's Waitall returns at once on those.
// True when every posted dimension has arrived and no chain's grouped
// exchange is in flight (that one is left to its own completion).
bool progressBlockExchanges() {
  int done = 1;
  for (std::size_t k = 0; k < blockInFlight && done; ++k) {
    BlockPending &p = blockPending[k];
    MPI_Testall(p.nreq, p.req, &done, MPI_STATUSES_IGNORE);
  }
  return done != 0 && !blockGroupFlying();
}
} // namespace

namespace {
// Dimension by dimension: the corners of a later dimension's slab come
// from the halos an earlier dimension just received. The caller counts the
// time in the loop's exchangeSeconds.
void exchangeSides(opd_dat *dat, const int64_t *depths, bool corners,
                   opd_loop *loop, const Sides *sides) {
  const BlockComm &c = comms()[dat->block];
  for (int d = 0; d < dat->ndims; ++d) {
    if (c.pdims[d] == 1 || depths[d] == 0)
      continue;
    postDim(dat, d, depths, corners, loop, sides[d]);
    completeAll();
  }
}
} // namespace


namespace {
// Starts the exchanges a block loop needs. When the block is split along
// its outermost dimension only, the messages are left in flight (true):
// the loop's core rows need none of them. Otherwise they complete here.
bool startBlockExchanges(opd_loop *loop) {
  // Per dat: the deepest read of the loop in each dimension (a stencil
  // reaching 4 points along x needs no halo along y) and whether it reads
  // corners.
  struct Need {
    opd_dat *dat;
    int64_t depth[3];
    int64_t below[3], above[3]; ///< the reach towards lower / higher indices
    bool corners;
  };
  std::vector<Need> need;
  // A communication-avoiding loop runs extLo/extHi points beyond the
  // rank's part: it reads that much further, corners included when its
  // block is split along more than one dimension.
  const BlockComm &bc = comms()[loop->block];
  const bool ext = loop->extended();
  int splitDims = 0;
  for (int d = 0; d < loop->block->dims; ++d)
    splitDims += bc.pdims[d] > 1;
  for (const opd_arg &a : loop->args) {
    if (!a.dat || !a.dat->block)
      continue;
    if (ext)
      for (int d = 0; d < a.dat->ndims; ++d)
        if (bc.pdims[d] > 1 &&
            std::max(loop->extLo[d], loop->extHi[d]) > a.dat->depth[d])
          failf("internal error: loop '%s' runs %" PRId64
                " points beyond this rank's part of %s, deeper than its "
                "halo between ranks (%" PRId64 ")",
                loop->name.c_str(), std::max(loop->extLo[d], loop->extHi[d]),
                a.dat->describe().c_str(), a.dat->depth[d]);
    if (a.mode == OPD_WRITE)
      continue;
    int64_t k[3] = {0, 0, 0}, below[3] = {0, 0, 0}, above[3] = {0, 0, 0};
    bool any = false;
    for (int d = 0; d < a.dat->ndims; ++d) {
      below[d] = std::max<int64_t>(0, -a.lo[d]) + loop->extLo[d];
      above[d] = std::max<int64_t>(0, a.hi[d]) + loop->extHi[d];
      const int64_t reach = std::max(below[d], above[d]);
      if (reach > a.dat->depth[d] &&
          !(a.dat->block->edgeLo[d] && a.dat->block->edgeHi[d]))
        failf("loop '%s' reads %s %" PRId64 " points away in dimension %d, "
              "deeper than its halo between ranks (%" PRId64
              "); declare the dat with 'halo %" PRId64 "'",
              loop->name.c_str(), a.dat->describe().c_str(), reach, d,
              a.dat->depth[d], reach);
      k[d] = reach;
      any = any || reach > 0;
    }
    if (!any)
      continue;
    const bool corners =
        (a.flags & OPD_STENCIL_DIAGONAL) != 0 || (ext && splitDims > 1);
    auto it = std::find_if(need.begin(), need.end(),
                           [&](const Need &n) { return n.dat == a.dat; });
    if (it == need.end()) {
      need.push_back({a.dat,
                      {k[0], k[1], k[2]},
                      {below[0], below[1], below[2]},
                      {above[0], above[1], above[2]},
                      corners});
    } else {
      for (int d = 0; d < 3; ++d) {
        it->depth[d] = std::max(it->depth[d], k[d]);
        it->below[d] = std::max(it->below[d], below[d]);
        it->above[d] = std::max(it->above[d], above[d]);
      }
      it->corners = it->corners || corners;
    }
  }
  const BlockComm &c = bc;
  const int outer = loop->block->dims - 1;
  bool outerOnly = true;
  for (int d = 0; d < outer; ++d)
    outerOnly = outerOnly && c.pdims[d] == 1;
  bool posted = false;
  const double t0 = opd_rt_wtime();
  for (Need &n : need) {
    // The dimensions split over ranks: what must be exchanged, and the
    // depth valid in all of them afterwards (haloValid).
    int64_t deepest = 0, valid = INT64_MAX;
    for (int d = 0; d < n.dat->ndims; ++d)
      if (c.pdims[d] > 1) {
        deepest = std::max(deepest, n.depth[d]);
        valid = std::min(valid, n.depth[d]);
      }
    if (deepest == 0 ||
        (n.dat->haloValid >= deepest && (!n.corners || n.dat->cornersValid)))
      continue;
    // The messages the loop's range needs. Across the boundary B between
    // two ranks, the upper one reads the lower one's rows when its part of
    // the range [lo, hi) starts less than `below` points above B, and the
    // lower one reads the upper one's when its part ends less than `above`
    // points below B; both ranks evaluate both conditions with the same B,
    // lo and hi, so every send meets its receive. A boundary loop along a
    // wall needs none of them. Loops reading corners exchange everything.
    Sides sides[3];
    bool partial = false;
    for (int d = 0; d < n.dat->ndims && !n.corners && !ext; ++d) {
      if (c.pdims[d] == 1)
        continue;
      const int64_t lo = loop->askedLo[d], hi = loop->askedHi[d];
      auto upperReads = [&](int64_t b) {
        return hi > b && lo < b + n.below[d];
      };
      auto lowerReads = [&](int64_t b) {
        return lo < b && hi > b - n.above[d];
      };
      // The block's cuts, not the dat's owned range: both neighbours must
      // see the same B.
      const int64_t bLo = loop->block->ownLo[d], bHi = loop->block->ownHi[d];
      sides[d].recvLo = upperReads(bLo);
      sides[d].sendLo = lowerReads(bLo);
      sides[d].recvHi = lowerReads(bHi);
      sides[d].sendHi = upperReads(bHi);
      // Whether any rank leaves a halo out: decided from the cuts, the same
      // on every rank, so that the ranks agree on haloValid (a rank that
      // skipped an exchange its neighbour posts would hang it).
      for (int64_t b : c.cuts[d])
        partial = partial || !upperReads(b) || !lowerReads(b);
    }
    if (outerOnly && c.pdims[outer] > 1) {
      postDim(n.dat, outer, n.depth, n.corners, loop, sides[outer]);
      posted = true;
    } else {
      exchangeSides(n.dat, n.depth, n.corners, loop, sides);
    }
    // Halos left out are not valid: later loops exchange them.
    n.dat->haloValid = partial ? 0 : valid;
    n.dat->cornersValid = n.corners && !partial;
  }
  loop->exchangeSeconds += opd_rt_wtime() - t0;
  // A chain's grouped exchange still in flight (groupBlockExchange)
  // completes with this loop's.
  return posted || blockGroupFlying();
}
} // namespace

bool startExchanges(opd_loop *loop) {
  if (ranks() == 1)
    return false;
  if (!loop->block)
    return startSetExchanges(loop);
  completeSetGroup(); // a grouped set exchange in flight (Exchange.cpp)
  return startBlockExchanges(loop);
}

bool progressExchanges() {
  return ranks() == 1 || (progressSetExchanges() && progressBlockExchanges());
}

void finishExchanges(opd_loop *loop) {
  if (!loop->block) {
    finishSetExchanges(loop);
    return;
  }
  const double t0 = opd_rt_wtime();
  completeAll();
  completeGroup();
  loop->exchangeSeconds += opd_rt_wtime() - t0;
}

namespace {
// How valid a block dat's halo copies are after a loop wrote it over its
// range R, run e points beyond every rank's part (e = 0: a plain loop).
// Every rank must conclude alike (their exchanges must pair up), so this
// uses only what all of them know: R, the extension, the cuts and the
// dat's shape. Halo points in R within e were recomputed by the rank that
// stores them, exactly as their owner computed them; points of R deeper
// than e are stale; points outside R were not written and keep their
// validity. Hence the halo is valid e deep when R holds every halo point
// (to the stored depth), min(e, before) when R holds some, and as before
// when R meets no halo at all (a wall loop far from every cut).
void blockWritten(opd_dat *dat, const opd_loop *loop) {
  auto it = comms().find(dat->block);
  if (it == comms().end())
    return;
  const BlockComm &c = it->second;
  int64_t e = INT64_MAX;
  bool meets = false, holdsAll = true;
  for (int d = 0; d < dat->ndims; ++d) {
    const int64_t lo = loop->askedLo[d], hi = loop->askedHi[d];
    // The dat's global extent, halos declared in the program included.
    const int64_t first = dat->base[d] - dat->haloMinus[d];
    const int64_t last = dat->base[d] + dat->size[d] + dat->haloPlus[d];
    if (c.pdims[d] == 1) {
      holdsAll = holdsAll && lo <= first && hi >= last;
      continue;
    }
    e = std::min({e, loop->extLo[d], loop->extHi[d]});
    for (int64_t b : c.cuts[d]) {
      meets = meets || (lo < b + dat->depth[d] && hi > b - dat->depth[d]);
      holdsAll = holdsAll && lo <= b - dat->depth[d] && hi >= b + dat->depth[d];
    }
  }
  if (e == INT64_MAX)
    e = 0;
  // R is a box: it meets the halo only if it is not empty in every other
  // dimension either.
  for (int d = 0; d < dat->ndims; ++d)
    if (loop->askedLo[d] >= loop->askedHi[d])
      meets = false;
  if (!meets)
    return;
  if (holdsAll) {
    dat->haloValid = e;
    dat->cornersValid = e > 0;
  } else {
    dat->haloValid = std::min(e, dat->haloValid);
    dat->cornersValid = e > 0 && dat->cornersValid;
  }
}
} // namespace

void afterLoop(opd_loop *loop) {
  completeGroup(); // a chain whose first loop was not a block loop
  if (loop->set) {
    afterSetLoop(loop); // mpi/Exchange.cpp
    return;
  }
  for (const opd_arg &a : loop->args)
    if (a.dat && writes(a.mode)) {
      if (a.dat->block && loop->block) {
        blockWritten(a.dat, loop);
        continue;
      }
      a.dat->haloValid = 0;
      a.dat->cornersValid = false;
    }
}

} // namespace opdc::rt::dist
