// AdjointTape.cpp - The adjoint tape's C entry points and its loop hook.
// SPDX-License-Identifier: Apache-2.0
//
// Split from Adjoint.cpp, whose header comment describes the tape; the
// shared state is in AdjointState.h. tapeLoopPrepared lets a loop take
// the storage of pushes and snapshots waiting for it (PendingTake).
#include "exec/AdjointState.h"

#include <cerrno>
#include <climits>
#include <cstdlib>

namespace opdc::rt {
using namespace adjoint;

void setDeviceTapeMemory(int64_t bytes) { deviceTapeMemory = bytes; }

int64_t memorySize(const char *text) {
  char *end = nullptr;
  errno = 0;
  const long long n = std::strtoll(text, &end, 10);
  if (end == text || errno == ERANGE || n < 0)
    return -1;
  int shift = 20;
  if (*end == 'K' || *end == 'k')
    shift = 10, ++end;
  else if (*end == 'M' || *end == 'm')
    ++end;
  else if (*end == 'G' || *end == 'g')
    shift = 30, ++end;
  if (*end || n > (INT64_MAX >> shift))
    return -1;
  return int64_t(n) << shift;
}

void tapeLoopPrepared(bool block, const int64_t *lo, const int64_t *hi,
                      int nargs, const opd_arg *args) {
  if (pendingTakes.empty())
    return;
  // Takes still waiting for their step's body to pass stay, unless this
  // loop writes their storage (the compiler rules that out; a copy keeps
  // the values if it did not), and so do tape pushes and flag-3 snapshots
  // whose storage this loop does not reach (writes, for flag 3). The rest:
  // the loop takes a storage it overwrites, once; every other is copied,
  // first.
  std::vector<PendingTake> keep;
  std::vector<std::pair<PendingTake, opd_dat *>> takes; // and the holder
  for (const PendingTake &p : pendingTakes) {
    bool writes = false, other = false, touches = false;
    opd_dat *holder = nullptr;
    for (int n = 0; n < nargs; ++n) {
      const opd_arg &a = args[n];
      if (!a.dat || a.dat->data != p.storage)
        continue;
      holder = a.dat;
      touches = touches || a.mode != OPD_READ;
      // Only a loop that writes the dat at the centre of each point of its
      // range, and touches it no other way, overwrites all of it there.
      const bool centre =
          a.kind == OPD_ARG_DIRECT ||
          (a.kind == OPD_ARG_STENCIL && a.lo[0] == 0 && a.lo[1] == 0 &&
           a.lo[2] == 0 && a.hi[0] == 0 && a.hi[1] == 0 && a.hi[2] == 0);
      if (a.mode == OPD_WRITE && centre)
        writes = true;
      else
        other = true;
    }
    // A tape push waits for the loop that reaches its storage (the loops
    // before it leave the storage alone: TapeStmt::overwritten).
    if (p.wait > 0 || (p.late && !touches) || (!p.snapshot && !holder)) {
      if (touches)
        settle(p);
      else
        keep.push_back(p);
      continue;
    }
    const bool takenAlready =
        std::any_of(takes.begin(), takes.end(), [&](const auto &t) {
          return t.first.storage == p.storage;
        });
    if (holder && block == (holder->block != nullptr) && writes && !other &&
        !takenAlready)
      takes.push_back({p, holder});
    else
      settle(p);
  }
  for (const auto &[p, holder] : takes) {
    Timed timed(p.snapshot ? stats.saveSeconds : stats.tapeSeconds);
    if (p.outsideBytes)
      *p.outsideBytes = DatCopy::bytesOutside(holder, lo, hi);
    if (p.partial)
      pendingCopy(p).saveOutside(holder, lo, hi);
    else
      pendingCopy(p).takeFrom(holder, lo, hi);
  }
  pendingTakes = std::move(keep);
}

} // namespace opdc::rt

using namespace opdc::rt;
using namespace opdc::rt::adjoint;

extern "C" {

void opd_tape_push_dat(opd_dat *dat) {
  if (!dat)
    failf("internal error: tape push of a dat that does not exist");
  Timed timed(stats.tapeSeconds);
  DatCopy c;
  c.save(dat);
  tape().dats.push_back(c);
  noteTape(storageBytes(dat));
}

void opd_tape_push_dat_overwritten(opd_dat *dat) {
  if (!dat)
    failf("internal error: tape push of a dat that does not exist");
  // A device store's entries are copies: nothing waits for a loop.
  if (haveStore())
    return opd_tape_push_dat(dat);
  DatCopy c;
  c.dat = dat;
  tape().dats.push_back(c);
  // A snapshot waiting to take the same storage copies it now.
  std::vector<PendingTake> keep;
  for (const PendingTake &p : pendingTakes)
    if (p.storage == dat->data)
      settle(p);
    else
      keep.push_back(p);
  pendingTakes = std::move(keep);
  pendingTakes.push_back(pendingFor(nullptr, tape().dats.size() - 1, dat, 0));
  noteTape(storageBytes(dat));
}

void opd_tape_pop_dat(opd_dat *dat) {
  DatCopy c = popDat(dat);
  pool().put(c.moveInto(dat));
}

void opd_tape_pop_dat_copy(opd_dat *dat) {
  DatCopy c = popDat(dat);
  Timed timed(stats.tapeSeconds);
  c.restore(dat);
  c.release();
}

void opd_tape_push_value(uint64_t bits) {
  tape().values.push_back(bits);
  noteTape(8);
}

void opd_rt_adjoint_store(const opd_adjoint_store *store) {
  storeHooks = store ? *store : opd_adjoint_store{};
}

int64_t opd_rt_device_tape_memory(void) {
  if (deviceTapeMemory >= 0)
    return deviceTapeMemory;
  static const int64_t bytes = [] {
    const char *env = std::getenv("OPD_DEVICE_TAPE_MEMORY");
    if (!env || !*env)
      return int64_t(-1);
    const int64_t b = memorySize(env);
    if (b < 0)
      failf("invalid value '%s' for environment variable "
            "OPD_DEVICE_TAPE_MEMORY: expected a whole number of MiB >= 0, "
            "or of KiB or GiB with a suffix K or G (512, 64K, 2G)",
            env);
    return b;
  }();
  return bytes;
}

uint64_t opd_tape_pop_value(void) {
  rerunPhase = false;
  Tape &t = tape();
  if (t.values.empty())
    failf("internal error: the adjoint tape holds no value to restore");
  uint64_t v = t.values.back();
  t.values.pop_back();
  noteTape(-8);
  return v;
}

} // extern "C"
