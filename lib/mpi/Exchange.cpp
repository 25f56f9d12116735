// Exchange.cpp - Halo exchanges of set dats, driven by dirty bits (MPI).
// (Set dats in files: mpi/Slices.cpp, placeRows and rowsToWrite.)
// SPDX-License-Identifier: Apache-2.0
//
// A set dat's haloValid counts half steps of its set's halo (mpi/Halo.cpp,
// SetHalo::halfEnd): 2l means exec layers 1..l are current, 2l + 1 also
// the map targets of layers 0..l in layer l + 1; INT64_MAX / 4 means all
// of the halo, the non-exec part too. A set loop runs x exec layers: x =
// its extension (opd_loop_extend_next), at least 1 for a loop with
// indirect writes (the exec halo every owned target needs for its
// increments), else 0. Before it runs, each dat it reads must be current
// as deep as the loop looks:
//   * read directly (OPD_READ, OPD_RW, OPD_INC): x layers, 2x;
//   * read through a map (OPD_READ, OPD_RW): the targets of layers 0..x,
//     which lie in layers 1..x+1 (Halo.cpp's invariant; those of the
//     owned elements in 1..2): 2 max(x, 1) + 1;
//   * incremented or written through a map: the targets that end up with
//     every increment are layers 1..x-1, whose old values must be current:
//     2 (x - 1).
// A dat short of its depth is exchanged at least 3 half steps deep: OP2's
// one-layer halo (exec layer 1 and the targets of layers 0..1), whatever
// the set's layer count K, so a plain loop sends the same elements with
// K > 1 layers (communication avoidance elsewhere in the program) as with
// one; with K = 1 that is the whole halo, as in OP2. An exchange h deep
// sends the prefix of the lists up to half step h (the whole halo when
// h >= 2K + 1) and raises haloValid to h. One message per neighbour and
// dat, each way: MPI_Irecv and MPI_Isend to all neighbours are posted
// before the loop runs its core elements (which reach no halo element),
// MPI_Waitall and the unpacking come before the rest. Meanwhile the
// thread that began the loop tests them between blocks
// (progressSetExchanges, and Structured.cpp's progressBlockExchanges
// for block loops; exec/LoopRun.cpp, CorePoll): a message over the
// MPI's eager limit moves only inside MPI calls, and without the tests
// each rank waited at MPI_Waitall for the other's core (decision 0475).
//
// After the loop, a dat it wrote directly is current x layers deep (every
// element of layers 1..x computed it from current inputs: 2x), one written
// through a map x - 1 deep (2 (x - 1)); a loop prepared without an
// extension leaves every dat it writes dirty (0), exactly as before
// communication avoidance.
//
// groupSetExchange (opd_halo_group) packs every listed dat short of its
// depth into one message per neighbour (tag 1) and leaves it in flight:
// the next set loop runs its core meanwhile (opd_loop_begin says messages
// are in flight) and opd_loop_wait_halos unpacks it. Anything else that
// could touch those halos first completes it (settleExchanges: block
// loops, fill, copy, swap, file I/O, solvers, the end of the run).
#include "mpi/Mpi.h"

#include "core/Device.h"
#include "core/Dist.h"
#include "core/Runtime.h"
#include "exec/CommAvoid.h"
#include "exec/Loop.h"

#include <algorithm>
#include <cstring>

namespace opdc::rt::dist {
namespace {
bool writes(int mode) {
  return mode == OPD_WRITE || mode == OPD_RW || mode == OPD_INC;
}
} // namespace

namespace {
// One dat's exchange in flight: its buffers and requests. Kept between
// loops (capacity reused), so a loop's exchanges do not allocate once the
// buffers have grown.
struct Pending {
  opd_dat *dat = nullptr;
  int64_t depth = 0;
  std::vector<std::vector<char>> send, recv;
  std::vector<MPI_Request> req;
};
constexpr int64_t AllValid = INT64_MAX / 4;
// The half steps of OP2's one-layer halo (exec layer 1 and the targets of
// layers 0..1): the least a plain exchange sends.
constexpr int64_t OneLayerHalo = 3;
std::vector<Pending> pending;
std::size_t inFlight = 0;

// The entry of Neighbour::sendCut for an exchange `half` half steps deep.
std::size_t cutOf(const Neighbour &nb, int64_t half) {
  const int64_t last = int64_t(nb.sendCut.size()) - 1;
  return std::size_t(std::clamp<int64_t>(half, 1, last));
}

// The half steps of the whole halo of `set`: 2K + 1.
int64_t wholeHalo(const opd_set *set) {
  return 2 * (int64_t(set->execEnd.size()) - 1) + 1;
}

// haloValid after an exchange `half` half steps deep.
int64_t validAfter(const opd_set *set, int64_t half) {
  return half >= wholeHalo(set) ? AllValid : half;
}

// opd_halo_group's depths count layers (the compiler's unit: layers 1..d,
// the whole halo when d >= K): in half steps.
int64_t halfOfLayers(const opd_set *set, int64_t layers) {
  return layers >= wholeHalo(set) / 2 ? AllValid : 2 * layers;
}

void post(opd_dat *dat, opd_loop *loop, int64_t depth) {
  if (pending.size() <= inFlight)
    pending.emplace_back();
  Pending &p = pending[inFlight++];
  const SetHalo &h = setHalo(dat->set);
  const std::size_t eb = std::size_t(dat->elementBytes());
  const std::size_t n = h.neighbours.size();
  p.dat = dat;
  p.depth = depth;
  p.send.resize(n);
  p.recv.resize(n);
  p.req.clear();
  const char *data = static_cast<const char *>(dat->data);
  for (std::size_t i = 0; i < n; ++i) {
    const Neighbour &nb = h.neighbours[i];
    const std::size_t count = std::size_t(nb.recvCut[cutOf(nb, depth)]);
    p.recv[i].resize(count * eb);
    if (count > 0) {
      p.req.emplace_back();
      MPI_Irecv(p.recv[i].data(), int(p.recv[i].size()), MPI_BYTE, nb.rank, 0,
                MPI_COMM_WORLD, &p.req.back());
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const Neighbour &nb = h.neighbours[i];
    const std::size_t count = std::size_t(nb.sendCut[cutOf(nb, depth)]);
    if (count == 0)
      continue;
    std::vector<char> &buf = p.send[i];
    buf.resize(count * eb);
    if (!devicePack(dat, nb.send.data(), int64_t(count), buf.data()))
      for (std::size_t k = 0; k < count; ++k)
        std::memcpy(buf.data() + k * eb, data + std::size_t(nb.send[k]) * eb,
                    eb);
    p.req.emplace_back();
    MPI_Isend(buf.data(), int(buf.size()), MPI_BYTE, nb.rank, 0,
              MPI_COMM_WORLD, &p.req.back());
    ++loop->messages;
    loop->exchangeBytes += double(buf.size());
  }
}

// Messages between two ranks arrive in the order they were sent (same
// tag, same communicator), so the dats of one loop match up in order.
void complete() {
  for (std::size_t j = 0; j < inFlight; ++j) {
    Pending &p = pending[j];
    MPI_Waitall(int(p.req.size()), p.req.data(), MPI_STATUSES_IGNORE);
    const SetHalo &h = setHalo(p.dat->set);
    const std::size_t eb = std::size_t(p.dat->elementBytes());
    char *data = static_cast<char *>(p.dat->data);
    for (std::size_t i = 0; i < h.neighbours.size(); ++i) {
      const Neighbour &nb = h.neighbours[i];
      const std::size_t count = p.recv[i].size() / std::max<std::size_t>(eb, 1);
      for (std::size_t k = 0; k < count; ++k)
        std::memcpy(data + std::size_t(nb.recv[k]) * eb,
                    p.recv[i].data() + k * eb, eb);
      deviceUnpack(p.dat, nb.recv.data(), int64_t(count), p.recv[i].data());
    }
    p.dat->haloValid =
        std::max(p.dat->haloValid, validAfter(p.dat->set, p.depth));
  }
  inFlight = 0;
}
} // namespace

void exchangeSetDat(opd_dat *dat, opd_loop *loop) {
  completeSetGroup();
  const double t0 = opd_rt_wtime();
  post(dat, loop, AllValid);
  complete();
  loop->exchangeSeconds += opd_rt_wtime() - t0;
}

bool startSetExchanges(opd_loop *loop) {
  // Before the partition every rank holds (and runs) everything.
  if (!loop->set->partitioned) {
    completeSetGroup();
    return false;
  }
  for (const opd_arg &a : loop->args)
    if (a.kind == OPD_ARG_MAP && a.mode != OPD_READ &&
        loop->set->partitioned)
      failf("loop '%s' writes map '%s' after the mesh was partitioned over "
            "ranks; fill maps before the other loops",
            loop->name.c_str(), a.map ? a.map->name.c_str() : "?");
  const double t0 = opd_rt_wtime();
  // The depth each dat needs (the header's rules), the deepest of its
  // arguments, in order of first argument.
  const int64_t x = loop->execLayers;
  std::vector<std::pair<opd_dat *, int64_t>> need;
  for (const opd_arg &a : loop->args) {
    if (!a.dat || !a.dat->set)
      continue;
    int64_t d = 0;
    if (a.kind == OPD_ARG_INDIRECT && (a.mode == OPD_READ || a.mode == OPD_RW))
      d = 2 * std::max<int64_t>(x, 1) + 1;
    else if (a.kind == OPD_ARG_INDIRECT)
      d = 2 * (x - 1);
    else if (a.kind == OPD_ARG_DIRECT && a.mode != OPD_WRITE)
      d = 2 * x;
    auto it = std::find_if(need.begin(), need.end(),
                           [&](const auto &e) { return e.first == a.dat; });
    if (it == need.end())
      need.emplace_back(a.dat, d);
    else
      it->second = std::max(it->second, d);
  }
  for (const auto &[dat, d] : need)
    if (d > 0 && dat->haloValid < d)
      post(dat, loop, std::max(d, OneLayerHalo));
  loop->exchangeSeconds += opd_rt_wtime() - t0;
  // A grouped exchange posted before the loop flies during its core too.
  return inFlight > 0 || setGroupInFlight();
}

void finishSetExchanges(opd_loop *loop) {
  const double t0 = opd_rt_wtime();
  complete();
  loop->exchangeSeconds += opd_rt_wtime() - t0;
  completeSetGroup(); // timed into the group's own entry
}

void afterSetLoop(opd_loop *loop) {
  // A dat written by several arguments keeps the smallest depth.
  const int64_t x = loop->execLayers;
  std::vector<std::pair<opd_dat *, int64_t>> depth;
  for (const opd_arg &a : loop->args) {
    if (!a.dat || !writes(a.mode))
      continue;
    int64_t d = 0;
    if (loop->extended() && a.dat->set)
      d = 2 * (a.kind == OPD_ARG_INDIRECT ? std::max<int64_t>(0, x - 1) : x);
    auto it = std::find_if(depth.begin(), depth.end(),
                           [&](const auto &e) { return e.first == a.dat; });
    if (it == depth.end())
      depth.emplace_back(a.dat, d);
    else
      it->second = std::min(it->second, d);
  }
  for (const auto &[dat, d] : depth)
    dat->haloValid = d;
}

namespace {
// The grouped exchange in flight (opd_halo_group): its dats and depths,
// buffers and requests, and the profile entry it counts into.
struct Group {
  std::vector<std::pair<opd_dat *, int64_t>> go;
  std::vector<std::vector<char>> send, recv;
  std::vector<MPI_Request> req;
  opd_loop *entry = nullptr;
  bool active = false;
};
Group group;
} // namespace

bool setGroupInFlight() { return group.active; }

bool progressSetExchanges() {
  // Testall leaves the requests alone until all of them are done, then
  // nulls them: complete()'s Waitall returns at once on those.
  int done = 1;
  for (std::size_t j = 0; j < inFlight && done; ++j) {
    Pending &p = pending[j];
    MPI_Testall(int(p.req.size()), p.req.data(), &done, MPI_STATUSES_IGNORE);
  }
  if (done && group.active)
    MPI_Testall(int(group.req.size()), group.req.data(), &done,
                MPI_STATUSES_IGNORE);
  return done != 0;
}

int64_t setHaloLayers() { return haloLayersWanted(); }

void setChainGeometry(int n, opd_dat *const *dats, const int64_t *depth,
                      ChainGeometry &geo) {
  std::vector<int> peers;
  double owned = 0, layer = 0, bytes = 0, send = 0;
  for (int i = 0; i < n; ++i) {
    const opd_dat *d = dats[i];
    const opd_set *s = d->set;
    if (!s || !s->partitioned)
      continue;
    const std::size_t eb = std::size_t(d->elementBytes());
    for (const Neighbour &nb : setHalo(s).neighbours) {
      if (std::find(peers.begin(), peers.end(), nb.rank) == peers.end())
        peers.push_back(nb.rank);
      const int64_t half = halfOfLayers(s, depth[i]);
      if (depth[i] > 0 && d->haloValid < half)
        send += double(std::size_t(nb.sendCut[cutOf(nb, half)]) * eb);
    }
    owned = std::max(owned, double(s->owned));
    layer = std::max(layer, double(s->execSize - s->owned));
    bytes += double(eb);
  }
  if (geo.neighbours == 0)
    geo.overlaps = true; // set loops run their core while messages fly
  geo.neighbours = std::max(geo.neighbours, int(peers.size()));
  geo.ownedPoints += owned;
  geo.haloPointsPerDepth += layer;
  geo.bytesPerPoint += bytes;
  geo.groupBytes += send;
}

void settleExchanges() { completeSetGroup(); }

void completeSetGroup() {
  if (!group.active)
    return;
  group.active = false;
  const double t0 = opd_rt_wtime();
  MPI_Waitall(int(group.req.size()), group.req.data(), MPI_STATUSES_IGNORE);
  std::vector<std::size_t> at(group.recv.size(), 0);
  for (const auto &[d, dep] : group.go) {
    const std::size_t eb = std::size_t(d->elementBytes());
    char *data = static_cast<char *>(d->data);
    for (const Neighbour &nb : setHalo(d->set).neighbours) {
      const std::size_t q = std::size_t(nb.rank);
      const std::size_t count = std::size_t(nb.recvCut[cutOf(nb, dep)]);
      for (std::size_t k = 0; k < count; ++k)
        std::memcpy(data + std::size_t(nb.recv[k]) * eb,
                    group.recv[q].data() + at[q] + k * eb, eb);
      deviceUnpack(d, nb.recv.data(), int64_t(count),
                   group.recv[q].data() + at[q]);
      at[q] += count * eb;
    }
  }
  group.entry->exchangeSeconds += opd_rt_wtime() - t0;
}

void groupSetExchange(opd_loop *entry, int n, opd_dat *const *dats,
                      const int64_t *depth) {
  completeSetGroup();
  const double t0 = opd_rt_wtime();
  // The dats short of their depth, in list order (every rank decides the
  // same: haloValid changes identically everywhere).
  std::vector<std::pair<opd_dat *, int64_t>> &go = group.go;
  go.clear();
  for (int i = 0; i < n; ++i) {
    opd_dat *d = dats[i];
    if (!d || !d->set)
      failf("internal error: opd_halo_group: entry %d is not a set dat", i);
    if (!d->set->partitioned || depth[i] <= 0)
      continue;
    const int64_t half = halfOfLayers(d->set, depth[i]);
    if (d->haloValid >= half)
      continue;
    auto it = std::find_if(go.begin(), go.end(),
                           [&](const auto &e) { return e.first == d; });
    if (it == go.end())
      go.emplace_back(d, half);
    else
      it->second = std::max(it->second, half);
  }
  if (go.empty())
    return;
  // Bytes to and from each rank: per dat, the prefix of its set's lists.
  const std::size_t p = std::size_t(ranks());
  std::vector<std::size_t> recvBytes(p, 0);
  for (const auto &[d, dep] : go)
    for (const Neighbour &nb : setHalo(d->set).neighbours)
      recvBytes[std::size_t(nb.rank)] +=
          std::size_t(nb.recvCut[cutOf(nb, dep)]) *
          std::size_t(d->elementBytes());
  group.send.resize(p);
  group.recv.resize(p);
  group.req.clear();
  for (std::size_t q = 0; q < p; ++q) {
    group.recv[q].resize(recvBytes[q]);
    if (recvBytes[q] > 0) {
      group.req.emplace_back();
      MPI_Irecv(group.recv[q].data(), int(recvBytes[q]), MPI_BYTE, int(q), 1,
                MPI_COMM_WORLD, &group.req.back());
    }
    group.send[q].clear();
  }
  for (const auto &[d, dep] : go) {
    const std::size_t eb = std::size_t(d->elementBytes());
    const char *data = static_cast<const char *>(d->data);
    for (const Neighbour &nb : setHalo(d->set).neighbours) {
      std::vector<char> &buf = group.send[std::size_t(nb.rank)];
      const std::size_t count = std::size_t(nb.sendCut[cutOf(nb, dep)]);
      const std::size_t at = buf.size();
      buf.resize(at + count * eb);
      if (!devicePack(d, nb.send.data(), int64_t(count), buf.data() + at))
        for (std::size_t k = 0; k < count; ++k)
          std::memcpy(buf.data() + at + k * eb,
                      data + std::size_t(nb.send[k]) * eb, eb);
    }
  }
  for (std::size_t q = 0; q < p; ++q) {
    if (group.send[q].empty())
      continue;
    group.req.emplace_back();
    MPI_Isend(group.send[q].data(), int(group.send[q].size()), MPI_BYTE,
              int(q), 1, MPI_COMM_WORLD, &group.req.back());
    ++entry->messages;
    entry->exchangeBytes += double(group.send[q].size());
  }
  // Current from here on: nothing reads these halos before the next set
  // loop's opd_loop_wait_halos (or another completion point) unpacks them.
  for (const auto &[d, dep] : go)
    d->haloValid = std::max(d->haloValid, validAfter(d->set, dep));
  group.entry = entry;
  group.active = true;
  entry->exchangeSeconds += opd_rt_wtime() - t0;
}

} // namespace opdc::rt::dist
