// Exchange.cpp - Halo exchanges of set dats, driven by dirty bits (MPI).
// (Set dats in files: mpi/Slices.cpp, placeRows and rowsToWrite.)
// SPDX-License-Identifier: Apache-2.0
//
// Before a set loop, a dat's halo (exec and non-exec elements, as copies
// of their owners' values) is brought up to date when the loop reads it
// and a loop wrote the dat since its last exchange:
//   * read through a map (OPD_READ, OPD_RW);
//   * read directly by a loop that also runs the exec halo (one with
//     indirect increments).
// Increments through maps need no exchange: the exec halo computes every
// owned target's increments locally (mpi/Halo.cpp). A loop that writes a
// dat leaves its halo dirty. One message per neighbour and dat, each way:
// MPI_Irecv and MPI_Isend to all neighbours are posted before the loop
// runs its core elements (which reach no halo element), MPI_Waitall and
// the unpacking come before the rest.
#include "mpi/Mpi.h"

#include "core/Dist.h"
#include "core/Runtime.h"
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
  std::vector<std::vector<char>> send, recv;
  std::vector<MPI_Request> req;
};
std::vector<Pending> pending;
std::size_t inFlight = 0;

void post(opd_dat *dat, opd_loop *loop) {
  if (pending.size() <= inFlight)
    pending.emplace_back();
  Pending &p = pending[inFlight++];
  const SetHalo &h = setHalo(dat->set);
  const std::size_t eb = std::size_t(dat->elementBytes());
  const std::size_t n = h.neighbours.size();
  p.dat = dat;
  p.send.resize(n);
  p.recv.resize(n);
  p.req.clear();
  const char *data = static_cast<const char *>(dat->data);
  for (std::size_t i = 0; i < n; ++i) {
    const Neighbour &nb = h.neighbours[i];
    p.recv[i].resize(nb.recv.size() * eb);
    if (!nb.recv.empty()) {
      p.req.emplace_back();
      MPI_Irecv(p.recv[i].data(), int(p.recv[i].size()), MPI_BYTE, nb.rank, 0,
                MPI_COMM_WORLD, &p.req.back());
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const Neighbour &nb = h.neighbours[i];
    if (nb.send.empty())
      continue;
    std::vector<char> &buf = p.send[i];
    buf.resize(nb.send.size() * eb);
    for (std::size_t k = 0; k < nb.send.size(); ++k)
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
      for (std::size_t k = 0; k < nb.recv.size(); ++k)
        std::memcpy(data + std::size_t(nb.recv[k]) * eb,
                    p.recv[i].data() + k * eb, eb);
    }
    p.dat->haloValid = INT64_MAX / 4;
  }
  inFlight = 0;
}
} // namespace

void exchangeSetDat(opd_dat *dat, opd_loop *loop) {
  const double t0 = opd_rt_wtime();
  post(dat, loop);
  complete();
  loop->exchangeSeconds += opd_rt_wtime() - t0;
}

bool startSetExchanges(opd_loop *loop) {
  // Before the partition every rank holds (and runs) everything.
  if (!loop->set->partitioned)
    return false;
  bool runsHalo = false;
  for (const opd_arg &a : loop->args) {
    if (a.kind == OPD_ARG_INDIRECT && writes(a.mode))
      runsHalo = true;
    if (a.kind == OPD_ARG_MAP && a.mode != OPD_READ &&
        loop->set->partitioned)
      failf("loop '%s' writes map '%s' after the mesh was partitioned over "
            "ranks; fill maps before the other loops",
            loop->name.c_str(), a.map ? a.map->name.c_str() : "?");
  }
  const double t0 = opd_rt_wtime();
  for (const opd_arg &a : loop->args) {
    if (!a.dat || !a.dat->set)
      continue;
    const bool needs =
        (a.kind == OPD_ARG_INDIRECT &&
         (a.mode == OPD_READ || a.mode == OPD_RW)) ||
        (a.kind == OPD_ARG_DIRECT && runsHalo && a.mode != OPD_WRITE);
    // haloValid is cleared only by writes, so a dat posted once is not
    // posted again for a second argument.
    if (needs && a.dat->haloValid == 0) {
      post(a.dat, loop);
      a.dat->haloValid = INT64_MAX / 4;
    }
  }
  loop->exchangeSeconds += opd_rt_wtime() - t0;
  return inFlight > 0;
}

void finishSetExchanges(opd_loop *loop) {
  const double t0 = opd_rt_wtime();
  complete();
  loop->exchangeSeconds += opd_rt_wtime() - t0;
}

} // namespace opdc::rt::dist
