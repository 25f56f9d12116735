// Adjoint.cpp - The tape and the checkpoint plans of compiler-built adjoints.
// SPDX-License-Identifier: Apache-2.0
//
// The adjoint pass (compiler/passes/deriv/Adjoint.cpp) turns a request into a
// forward sweep, which saves what it overwrites, and a reverse sweep, which
// restores it statement by statement while it runs the adjoint loops. Two
// run-time services back it:
//
// * The tape: a stack of dat copies (storage with halos, and the halo state,
//   so MPI ranks restore exactly what they had) and of 64-bit host values.
//   Buffers popped are kept in a pool by size: a reverse sweep pushes and
//   pops the same dats every step, and fresh allocations would page-fault
//   every time. A pop hands the saved buffer to the dat and puts the dat's
//   old storage in the pool (no copy: a copy reads the tape and writes the
//   dat, 24 bytes a point of an f64 dat with the write's read-for-
//   ownership); storage and tape buffers come from the
//   same allocator with the same alignment, and the generated code reads
//   a dat's address at each loop (as swap needs). The CUDA backend pops
//   by copy (opd_tape_pop_dat_copy): its device copies are keyed by the
//   host address.
//
// * Checkpoint plans for the host loops of the differentiated proc (the
//   time loops): binomial checkpointing (Griewank and Walther's Revolve
//   schedule, computed here ahead of the run). With s free snapshots and t
//   re-runs per step, beta(s, t) = C(s + t, s) steps can be reversed; to
//   reverse [a, b) from a snapshot at a with s more snapshots the plan
//   advances to a + m (Scheduler::split: Griewank's bound, the fewest
//   re-runs), saves a snapshot there, reverses [a + m, b) with s - 1
//   snapshots, frees it, then reverses [a, a + m) with s. The forward
//   sweep runs the loop once from start to end and saves the snapshots of
//   the plan's first descent (its "spine"); the reverse sweep follows the
//   rest of the plan. A snapshot of
//   every step (snapshots >= steps) gives no re-runs at all: every step
//   goes on the tape instead, as long as that stays within the plan's
//   memory bound (the snapshots' bytes, or the budget); when step 0's tape
//   shows that it would not, the first k steps stay taped and the others
//   follow a binomial schedule with what the bound still holds, k chosen
//   for the fewest step runs (tapedPrefix, opd_ckpt_forward). A plan sized
//   by a budget that holds snapshots for half its steps or more starts that
//   way too: Airfoil's 100 steps, whose tape of a step is 1.4 snapshots,
//   get a taped prefix instead of none.
//   Snapshots after the schedule's first keep of a dat that the step's
//   first loop overwrites only its points outside that loop's range: the
//   others are dead when the step starts (saveSlot); a plan sized by the
//   memory budget then re-plans for the smaller snapshots at its second
//   step (replanSmallerSnapshots).
//   (The schedule's arithmetic: exec/AdjointSchedule.cpp.)
//   Without a budget (no OPD_CKPT_MEMORY) a plan tapes step 0 and plans at
//   step 1 from what step 0 showed (planAutomatically): its tape's bytes,
//   its time, the seconds a byte of fresh memory cost (the pool touches
//   new buffers itself and times it) and the memory free on the node; it
//   takes the plan of the fewest expected seconds within three quarters of
//   that memory less 1 GiB (planFromStepZero): every step taped where the
//   tape fits and its fresh memory costs less than re-running, else a taped
//   prefix and snapshots for the rest. The n-th such call counts fresh
//   memory at 1/n of its cost (the pool keeps it for the calls after), so
//   repeated calls grow into the memory a one-shot call would not pay for.
#include "core/Dist.h"
#include "core/Memory.h"
#include "core/Objects.h"
#include "core/Runtime.h"
#include "exec/Adjoint.h"

#include "opd_rt.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace opdc::rt {
namespace {

/// A buffer from the pool (or a new one) of at least \p bytes.
struct Buffer {
  void *data = nullptr;
  int64_t bytes = 0;
};

AdjointMemory stats;

/// adjointRerunning(): loops run now re-run primal steps.
bool rerunPhase = false;
/// An automatic plan's step 0 runs: fresh buffers are touched and timed.
bool measuringFresh = false;

/// Test settings (setAvailableMemory, setFreshMemoryCost); -1: none.
int64_t availableOverride = -1;
double freshCostOverride = -1;

class Pool {
public:
  Buffer get(int64_t bytes) {
    auto it = free.lower_bound(bytes);
    if (it != free.end() && it->first <= 2 * bytes) {
      Buffer b = it->second;
      free.erase(it);
      freeBytes -= b.bytes;
      return b;
    }
    // Touched here, in parallel pieces, and timed: the seconds a byte of
    // fresh memory costs (the kernel's page faults; on some virtual
    // machines many times a copy's) are what automatic plans weigh
    // against re-running steps (planFromStepZero). Only during an
    // automatic plan's step 0 (whose time is measured without them) and
    // for the first MiB of the process: beyond, the extra write costs
    // more than a better measure gains.
    constexpr int64_t Measure = int64_t(256) << 20;
    Buffer b;
    const std::size_t size = std::size_t(std::max<int64_t>(bytes, 1));
    if (measuringFresh || stats.freshBytes < Measure) {
      const double start = opd_rt_wtime();
      b.data = allocZeroed(size, "the adjoint tape");
      stats.freshSeconds += opd_rt_wtime() - start;
      stats.freshBytes += bytes;
    } else {
      b.data = allocRaw(size, "the adjoint tape");
    }
    b.bytes = bytes;
    allocated += bytes;
    return b;
  }
  /// Bytes of every buffer this pool allocated (it keeps them all, in use
  /// or free): memory the adjoints have touched already.
  int64_t allocatedBytes() const { return allocated; }
  /// Bytes of the buffers free in the pool now.
  int64_t freeNow() const { return freeBytes; }
  void put(Buffer b) {
    freeBytes += b.bytes;
    free.emplace(b.bytes, b);
  }
  ~Pool() {
    for (auto &[n, b] : free)
      freeAligned(b.data);
  }

private:
  std::multimap<int64_t, Buffer> free;
  int64_t allocated = 0, freeBytes = 0;
};

Pool &pool() {
  static Pool p;
  return p;
}

int64_t storageBytes(const opd_dat *d) { return d->elements * d->elementBytes(); }

/// A block dat's storage starts `lead` bytes (less than Alignment) past its
/// aligned allocation, so that its rows' first interior points are aligned
/// (opd_block_dat_create); a set dat's at it. Copies keep the same lead:
/// the same alignment, and a buffer a pop hands to the dat is one the dat
/// could have been allocated with.
int64_t leadOf(const opd_dat *d) {
  return int64_t(reinterpret_cast<uintptr_t>(d->data) & (Alignment - 1));
}

/// One saved dat: its storage and halo state. The tape and the snapshots
/// both keep dats this way.
struct DatCopy {
  opd_dat *dat = nullptr;
  Buffer buf; ///< the allocation; the values start `lead` bytes in
  int64_t lead = 0;
  int64_t haloValid = 0;
  bool cornersValid = true;

  /// Copies \p d into this copy's buffer (taken from the pool the first
  /// time).
  void save(opd_dat *d) {
    dat = d;
    copyFrom(d->data, d->haloValid, d->cornersValid);
  }
  /// Copies the values at \p from, storage of `dat`'s shape (a dat
  /// swapped with it may hold it now), and their halo state.
  void copyFrom(const void *from, int64_t valid, bool corners) {
    dist::settleExchanges();
    if (!buf.data || partial || lead != leadOf(dat)) {
      if (buf.data)
        pool().put(buf);
      partial = false;
      lead = leadOf(dat);
      buf = pool().get(lead + storageBytes(dat));
    }
    copyElements(values(), from, dat->elements, dat->elementBytes());
    haloValid = valid;
    cornersValid = corners;
  }
  /// Puts the saved values and halo state back into \p d (a partial
  /// copy: the points it holds; the others keep what they are).
  void restore(opd_dat *d) const {
    check(d);
    if (partial)
      restoreOutside(d);
    else
      copyElements(d->data, values(), d->elements, d->elementBytes());
    d->haloValid = haloValid;
    d->cornersValid = cornersValid;
  }
  /// As restore, by giving \p d this copy's buffer; returns d's old
  /// storage's allocation (at least lead + storageBytes(d)). Not for a
  /// partial copy.
  Buffer moveInto(opd_dat *d) {
    check(d);
    if (partial)
      failf("internal error: the adjoint tape moves a partial copy of dat "
            "'%s' into it",
            d->name.c_str());
    Buffer old;
    old.data = static_cast<char *>(d->data) - lead;
    old.bytes = lead + storageBytes(d);
    d->data = values();
    buf = Buffer();
    d->haloValid = haloValid;
    d->cornersValid = cornersValid;
    return old;
  }

  /// Saves `dat`'s values by taking the storage of \p d (`dat` itself, or
  /// a dat of its shape that a swap gave its storage), for a loop about to
  /// write every point of [lo, hi) (a block loop's part on this rank, per
  /// block dimension; a set loop's elements [lo[0], hi[0])): d gets a
  /// buffer from the pool with the same lead, and only the points or
  /// elements outside that range (halos) are copied into it.
  void takeFrom(opd_dat *d, const int64_t *lo, const int64_t *hi) {
    dist::settleExchanges();
    if (buf.data) // a snapshot's earlier storage
      pool().put(buf);
    partial = false;
    lead = leadOf(d);
    buf.data = static_cast<char *>(d->data) - lead;
    buf.bytes = lead + storageBytes(d);
    haloValid = d->haloValid;
    cornersValid = d->cornersValid;
    Buffer fresh = pool().get(lead + storageBytes(d));
    char *to = static_cast<char *>(fresh.data) + lead;
    const char *from = static_cast<const char *>(values());
    d->data = to;
    forEachOutside(d, lo, hi, [&](int64_t at, int64_t n) {
      std::memcpy(to + at, from + at, std::size_t(n));
    });
  }

  /// Saves only the points or elements of \p d (holding `dat`'s values)
  /// outside [lo, hi), which a loop is about to overwrite before anything
  /// reads them, into a buffer of their size: the values inside are dead,
  /// so a snapshot needs only these (Poisson's `q` in `jacobi(p -> q)`:
  /// its boundary ring). restore() puts them back into the dat's storage
  /// and leaves the rest as it finds it.
  void saveOutside(opd_dat *d, const int64_t *lo, const int64_t *hi) {
    dist::settleExchanges();
    const int64_t n = bytesOutside(d, lo, hi);
    if (buf.data &&
        (partial ? buf.bytes < n || buf.bytes > 2 * n + 64 : true)) {
      pool().put(buf);
      buf = Buffer();
    }
    if (!buf.data)
      buf = pool().get(std::max<int64_t>(n, 1));
    partial = true;
    lead = 0;
    for (int k = 0; k < 3; ++k)
      plo[k] = lo[k], phi[k] = hi[k];
    haloValid = d->haloValid;
    cornersValid = d->cornersValid;
    char *to = static_cast<char *>(buf.data);
    const char *from = static_cast<const char *>(d->data);
    int64_t done = 0;
    forEachOutside(d, lo, hi, [&](int64_t at, int64_t len) {
      std::memcpy(to + done, from + at, std::size_t(len));
      done += len;
    });
  }

  /// The bytes of \p d's points or elements outside [lo, hi).
  static int64_t bytesOutside(const opd_dat *d, const int64_t *lo,
                              const int64_t *hi) {
    int64_t n = 0;
    forEachOutside(d, lo, hi, [&](int64_t, int64_t len) { n += len; });
    return n;
  }

  /// Whether this copy holds only the points outside a loop's range.
  bool isPartial() const { return partial; }

private:
  /// Calls \p f(offset, bytes) for each contiguous run of \p d's storage
  /// outside [lo, hi) (see takeFrom), in storage order.
  template <class F>
  static void forEachOutside(const opd_dat *d, const int64_t *lo,
                             const int64_t *hi, F &&f) {
    const int64_t eb = d->elementBytes();
    if (!d->block) {
      const int64_t a = std::clamp<int64_t>(lo[0], 0, d->elements);
      const int64_t z = std::clamp<int64_t>(hi[0], a, d->elements);
      if (a > 0)
        f(0, a * eb);
      if (z < d->elements)
        f(z * eb, (d->elements - z) * eb);
      return;
    }
    int64_t wlo[3] = {0, 0, 0}, whi[3] = {1, 1, 1};
    bool empty = false;
    for (int k = 0; k < d->ndims; ++k) {
      wlo[k] = std::max(lo[k], d->first[k]);
      whi[k] = std::min(hi[k], d->first[k] + d->stored[k]);
      empty = empty || wlo[k] >= whi[k];
    }
    if (empty) {
      f(0, d->elements * eb);
      return;
    }
    // Row by row (dimension 0 contiguous; the rows' padding is never read).
    const int64_t n0 = d->stored[0];
    const int64_t n1 = d->ndims > 1 ? d->stored[1] : 1;
    const int64_t n2 = d->ndims > 2 ? d->stored[2] : 1;
    const int64_t a = wlo[0] - d->first[0], z = whi[0] - d->first[0];
    for (int64_t k = 0; k < n2; ++k)
      for (int64_t j = 0; j < n1; ++j) {
        const int64_t at = (j * d->stride[1] + k * d->stride[2]) * eb;
        const bool inside =
            (d->ndims < 2 || (j + d->first[1] >= wlo[1] &&
                              j + d->first[1] < whi[1])) &&
            (d->ndims < 3 || (k + d->first[2] >= wlo[2] &&
                              k + d->first[2] < whi[2]));
        if (!inside) {
          f(at, n0 * eb);
          continue;
        }
        if (a > 0)
          f(at, a * eb);
        if (z < n0)
          f(at + z * eb, (n0 - z) * eb);
      }
  }

  /// restore() of a partial copy: its runs back into \p d's storage.
  void restoreOutside(opd_dat *d) const {
    const char *from = static_cast<const char *>(buf.data);
    char *to = static_cast<char *>(d->data);
    int64_t done = 0;
    forEachOutside(d, plo, phi, [&](int64_t at, int64_t len) {
      std::memcpy(to + at, from + done, std::size_t(len));
      done += len;
    });
  }

  bool partial = false; ///< saveOutside: only the points outside [plo, phi)
  int64_t plo[3] = {0, 0, 0}, phi[3] = {0, 0, 0};

  void *values() const { return static_cast<char *>(buf.data) + lead; }
  void check(opd_dat *d) const {
    dist::settleExchanges();
    if (dat != d)
      failf("internal error: the adjoint tape restores dat '%s' from a copy "
            "of '%s'",
            d->name.c_str(), dat->name.c_str());
    if (!partial && lead != leadOf(d))
      failf("internal error: the adjoint tape restores dat '%s' at another "
            "alignment",
            d->name.c_str());
  }
};

/// Adds the seconds from its construction to its end to \p into.
struct Timed {
  explicit Timed(double &into) : into(into), start(opd_rt_wtime()) {}
  ~Timed() { into += opd_rt_wtime() - start; }
  double &into;
  double start;
};

struct Tape {
  std::vector<DatCopy> dats;
  std::vector<uint64_t> values;
  int64_t bytes = 0;
};

Tape &tape() {
  static Tape t;
  return t;
}

void noteTape(int64_t delta) {
  Tape &t = tape();
  t.bytes += delta;
  stats.tapePeakBytes = std::max(stats.tapePeakBytes, t.bytes);
}

// Pushes of dats that the first loop reaching them overwrites
// (opd_tape_push_dat_overwritten), and snapshots of state dats that the
// step's first loop overwrites, or the next step's, or a later loop of the
// step that the loops before it only read (opd_ckpt_save_overwritten flags
// 1, 2 and 3): they wait for that loop's prepare, which knows the points
// it writes on this rank, and take the storage then. Another loop's prepare
// (a loop that writes the storage, for one still waiting for its body to
// pass), a pop or a checkpoint call first saves them by copy
// (settlePending), so a pending copy is never lost; nothing may change the
// storage before (the generated code runs the loop next: for the tape the
// verifier checks; for a snapshot the code generator asks only for the
// first loop of the step's body, with flag 2 only where the body only
// reads the dat and swaps it to what that loop overwrites (ir::stateTakes),
// and the runtime only when that body runs next, for flag 2 twice).
struct PendingTake {
  std::size_t tapeIndex = 0; ///< an entry of the tape (it may grow) ...
  DatCopy *snapshot = nullptr; ///< ... or a snapshot's copy of a dat
  /// The storage to take (the values' address when saved: the dat's, or
  /// after the step's swaps another's) and its halo state then.
  void *storage = nullptr;
  int64_t haloValid = 0;
  bool cornersValid = true;
  /// Body starts (opd_ckpt_forward, opd_ckpt_next's ADVANCE) still to
  /// come before the loop that takes it: 0 for a push or a snapshot that
  /// the next loop takes; one more per body the take waits through.
  int wait = 0;
  /// A snapshot's dat whose values inside the loop's range are dead at the
  /// step's start (flag 1): the loop's prepare saves only the points
  /// outside it (DatCopy::saveOutside) instead of taking the storage.
  bool partial = false;
  /// Where that prepare notes those points' bytes (the plan's estimate of
  /// a partial snapshot), or null.
  int64_t *outsideBytes = nullptr;
  /// A snapshot's dat that a later loop of the step's body overwrites
  /// (flag 3, on one rank): the loops before it, which only read the
  /// storage, pass it by; the first loop that writes it takes it.
  bool late = false;
};
std::vector<PendingTake> pendingTakes;

DatCopy &pendingCopy(const PendingTake &p) {
  return p.snapshot ? *p.snapshot : tape().dats[p.tapeIndex];
}

PendingTake pendingFor(DatCopy *snapshot, std::size_t tapeIndex,
                       const opd_dat *d, int wait) {
  PendingTake p;
  p.tapeIndex = tapeIndex;
  p.snapshot = snapshot;
  p.storage = d->data;
  p.haloValid = d->haloValid;
  p.cornersValid = d->cornersValid;
  p.wait = wait;
  return p;
}

/// Saves \p p by copying its storage (unchanged since it was registered;
/// the halo state as then, which only exchanges could have improved).
void settle(const PendingTake &p) {
  Timed timed(p.snapshot ? stats.saveSeconds : stats.tapeSeconds);
  DatCopy &c = pendingCopy(p);
  if (c.dat->data == p.storage)
    c.copyFrom(p.storage, c.dat->haloValid, c.dat->cornersValid);
  else
    c.copyFrom(p.storage, p.haloValid, p.cornersValid);
}

void settlePending() {
  for (const PendingTake &p : pendingTakes)
    settle(p);
  pendingTakes.clear();
}

/// A step's body starts: the pending takes waiting for it count it; one
/// that waited for nothing more (its loop did not come) is saved by copy.
void bodyStarts() {
  std::vector<PendingTake> keep;
  for (PendingTake p : pendingTakes) {
    if (p.wait == 0) {
      settle(p);
      continue;
    }
    --p.wait;
    keep.push_back(p);
  }
  pendingTakes = std::move(keep);
}

/// The tape's last dat copy, taken off the tape (to restore into \p dat).
DatCopy popDat(opd_dat *dat) {
  settlePending();
  rerunPhase = false;
  Tape &t = tape();
  if (t.dats.empty())
    failf("internal error: the adjoint tape is empty (restoring dat '%s')",
          dat ? dat->name.c_str() : "?");
  DatCopy c = t.dats.back();
  t.dats.pop_back();
  noteTape(-storageBytes(dat));
  return c;
}
} // namespace

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
      const bool centre = a.kind == OPD_ARG_DIRECT ||
                          (a.kind == OPD_ARG_STENCIL && a.lo[0] == 0 &&
                           a.lo[1] == 0 && a.lo[2] == 0 && a.hi[0] == 0 &&
                           a.hi[1] == 0 && a.hi[2] == 0);
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
        std::any_of(takes.begin(), takes.end(),
                    [&](const auto &t) { return t.first.storage == p.storage; });
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

namespace {

//===-- Checkpoint plans --------------------------------------------------===//

struct Snapshot {
  std::vector<DatCopy> dats;
  std::vector<uint64_t> values;
  bool allocated = false;
  int64_t bytes = 0; ///< counted in the plan's bytes (an estimate)
  /// Its storage went to the dats (a last restore): empty until saved again.
  bool moved = false;
  /// Kept in a file of the checkpoint directory between its save and its
  /// restores (assignDisk); `resident` while its buffers hold the values
  /// (a write or a read in flight, or a restore), the bytes counted in
  /// the plan's memory only then.
  bool disk = false, resident = true;
  std::string path;
  std::vector<int64_t> sizes; ///< each dat copy's buffer bytes
  /// The write or read in flight on the I/O thread: its error, or "".
  std::future<std::string> io;
  bool reading = false;
  int64_t fileBytes = 0; ///< the file's bytes (0: none written)
};

struct Plan {
  int64_t first = 0, count = 0;
  int snaps = 1;
  std::vector<opd_dat *> dats;
  int nvals = 0;
  std::vector<Snapshot> slots;
  std::vector<ScheduleAction> forward; ///< SAVE actions of the spine
  size_t forwardNext = 0;
  int64_t forwardStep = 0; ///< the forward sweep's step (from `first`)
  std::vector<ScheduleAction> reverse;
  size_t reverseNext = 0;
  bool reversing = false; ///< opd_ckpt_next was called
  /// Whether reverse action \p i is an ADVANCE (a body run).
  bool advanceAt(std::size_t i) const {
    return i < reverse.size() && reverse[i].kind == ScheduleAction::Advance;
  }
  int64_t bytes = 0;
  /// Snapshots for every step: the steps go on the tape instead.
  bool storeAll = false;
  int64_t storeAllNext = 0; ///< reverse: the step to reverse next, + 1
  /// Steps [0, taped) went on the tape in the forward sweep; the schedule
  /// (forward, reverse) covers [taped, count), its steps counted from
  /// `taped`. Under storeAll, taped = count.
  int64_t taped = 0;
  int64_t tapedNext = 0; ///< reverse: the taped step to reverse next, + 1
  /// The memory the plan may hold (the snapshots' bound: `snapshots`
  /// copies of the state, or the budget), one state snapshot's bytes and
  /// the tape's size at opd_ckpt_begin.
  int64_t boundBytes = 0, snapshotBytes = 0, tapeAtBegin = 0;
  /// The snapshot count came from the memory budget (opd_ckpt_begin's
  /// `snapshots` <= 0), so it may grow once snapshots turn out smaller.
  bool budgeted = false, replanned = false;
  /// The bytes the snapshots may hold: the bound, less the tape of steps
  /// taped before the schedule.
  int64_t memoryForSnapshots = 0;
  /// Planned from step 0 at step 1 (automaticBudget): when step 0 began,
  /// and the seconds fresh memory had cost then.
  bool automatic = false;
  double stepStart = 0, freshAtStart = 0;
  /// When the re-run the reverse sweep runs now began (-1: none).
  double rerunStart = -1;
  /// The memory the plan's snapshots may hold (the rest go to disk where
  /// a checkpoint directory is set; -1: no limit), and the plan's number
  /// among the process's (file names).
  int64_t memoryLimit = -1;
  int64_t serial = 0;
  /// The state dats' flags from opd_ckpt_save_overwritten (empty: none),
  /// and the bytes of each flag-1 dat outside its first loop's range, as
  /// that loop's prepare found them (-1: not yet).
  std::vector<uint8_t> flags;
  std::vector<int64_t> outsideBytes;
  /// One snapshot's bytes when flag-1 dats keep only their points outside
  /// the first loop's range.
  int64_t partialSnapshotBytes() const {
    int64_t n = snapshotBytes;
    for (size_t i = 0; i < dats.size() && i < flags.size(); ++i)
      if (flags[i] == 1 && outsideBytes[i] >= 0)
        n -= storageBytes(dats[i]) - outsideBytes[i];
    return n;
  }
};

std::vector<std::unique_ptr<Plan>> &plans() {
  static std::vector<std::unique_ptr<Plan>> p;
  return p;
}

int64_t checkpointBytesNow = 0;

//===-- Snapshots on disk -------------------------------------------------===//

std::string checkpointDir; ///< setCheckpointDir, else OPD_CKPT_DIR
bool checkpointDirRead = false;

/// The directory \p dir, checked: a directory this process can write.
void checkDirectory(const std::string &dir, const char *from) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0)
    failf("%s '%s': %s; the adjoint's disk snapshots need an existing "
          "directory (create it first)",
          from, dir.c_str(), std::strerror(errno));
  if (!S_ISDIR(st.st_mode))
    failf("%s '%s' is not a directory; the adjoint's disk snapshots need a "
          "directory",
          from, dir.c_str());
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    failf("%s '%s': %s; the adjoint's disk snapshots need a directory this "
          "process can write",
          from, dir.c_str(), std::strerror(errno));
}

const std::string &diskDirectory() {
  if (!checkpointDirRead) {
    checkpointDirRead = true;
    const char *env = std::getenv("OPD_CKPT_DIR");
    if (env && *env) {
      checkDirectory(env, "OPD_CKPT_DIR");
      checkpointDir = env;
    }
  }
  return checkpointDir;
}

/// Writes (or reads, \p read) the byte ranges \p parts to (from) \p path;
/// runs on the I/O thread, so it reports an error instead of failing.
std::string fileIO(const std::string &path,
                   const std::vector<std::pair<char *, int64_t>> &parts,
                   bool read) {
  const int fd = read
                     ? ::open(path.c_str(), O_RDONLY)
                     : ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0)
    return std::strerror(errno);
  std::string error;
  for (const auto &[at, bytes] : parts) {
    int64_t done = 0;
    while (done < bytes && error.empty()) {
      const ssize_t n = read ? ::read(fd, at + done, size_t(bytes - done))
                             : ::write(fd, at + done, size_t(bytes - done));
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        error = std::strerror(errno);
      else if (n == 0)
        error = "the file ends early";
      else
        done += n;
    }
  }
  if (::close(fd) != 0 && error.empty())
    error = std::strerror(errno);
  return error;
}

/// The snapshot's buffers and host values as byte ranges (its file's
/// layout).
std::vector<std::pair<char *, int64_t>> fileParts(Snapshot &s) {
  std::vector<std::pair<char *, int64_t>> parts;
  for (DatCopy &c : s.dats)
    parts.push_back({static_cast<char *>(c.buf.data), c.buf.bytes});
  parts.push_back({reinterpret_cast<char *>(s.values.data()),
                   int64_t(s.values.size() * sizeof(uint64_t))});
  return parts;
}

int64_t diskBytesNow = 0;

void countResident(Plan &p, Snapshot &s, bool resident) {
  if (s.resident == resident)
    return;
  s.resident = resident;
  const int64_t d = resident ? s.bytes : -s.bytes;
  p.bytes += d;
  checkpointBytesNow += d;
  stats.checkpointPeakBytes =
      std::max(stats.checkpointPeakBytes, checkpointBytesNow);
}

/// Waits for the I/O in flight on \p s; after a write its buffers go back
/// to the pool unless \p keep (a restore reads them next).
void finishIO(Plan &p, Snapshot &s, bool keep = false) {
  if (s.io.valid()) {
    const double start = opd_rt_wtime();
    const std::string error = s.io.get();
    stats.diskWaitSeconds += opd_rt_wtime() - start;
    if (!error.empty())
      failf("cannot %s the adjoint's snapshot file '%s': %s",
            s.reading ? "read" : "write", s.path.c_str(), error.c_str());
  }
  if (!s.reading && !keep && s.resident) {
    for (DatCopy &c : s.dats)
      if (c.buf.data) {
        pool().put(c.buf);
        c.buf = Buffer();
      }
    countResident(p, s, false);
  }
  s.reading = false;
}

/// Ends the writes that finished (their buffers back to the pool).
void pollIO(Plan &p) {
  for (Snapshot &s : p.slots)
    if (s.disk && !s.reading && s.io.valid() &&
        s.io.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
      finishIO(p, s);
}

/// A disk slot just saved (every dat copied, none pending): one write at a
/// time on the I/O thread, so at most one snapshot waits in memory.
void startWrite(Plan &p, int slot) {
  for (Snapshot &o : p.slots)
    if (o.disk && o.io.valid() && !o.reading)
      finishIO(p, o);
  Snapshot &s = p.slots[size_t(slot)];
  if (s.path.empty())
    s.path = diskDirectory() + "/opd-ckpt-" + std::to_string(::getpid()) + "-" +
             std::to_string(p.serial) + "-" + std::to_string(slot);
  s.sizes.clear();
  int64_t bytes = 0;
  for (DatCopy &c : s.dats) {
    s.sizes.push_back(c.buf.bytes);
    bytes += c.buf.bytes;
  }
  ++stats.diskSnapshots;
  stats.diskWrittenBytes += bytes;
  diskBytesNow += bytes - s.fileBytes;
  s.fileBytes = bytes;
  stats.diskPeakBytes = std::max(stats.diskPeakBytes, diskBytesNow);
  s.reading = false;
  s.io = std::async(std::launch::async, fileIO, s.path, fileParts(s), false);
}

/// Starts reading disk slot \p s's file into buffers from the pool.
void startRead(Plan &p, Snapshot &s) {
  for (size_t i = 0; i < s.dats.size(); ++i)
    s.dats[i].buf = pool().get(s.sizes[i]);
  countResident(p, s, true);
  s.reading = true;
  for (int64_t b : s.sizes)
    stats.diskReadBytes += b;
  s.io = std::async(std::launch::async, fileIO, s.path, fileParts(s), true);
}

/// A disk slot's values in its buffers for a restore: from a read started
/// earlier (prefetchNext), or read now.
void makeResident(Plan &p, Snapshot &s) {
  if (s.io.valid()) {
    finishIO(p, s, true);
    if (s.resident)
      return;
  }
  if (s.resident)
    return;
  startRead(p, s);
  finishIO(p, s, true);
}

/// Starts reading the snapshot the reverse sweep restores next, where it
/// is on disk and no other read is under way, so that the sweep overlaps
/// the read (a SAVE into that slot first: nothing to read).
void prefetchNext(Plan &p) {
  for (Snapshot &o : p.slots)
    if (o.disk && o.reading)
      return;
  for (size_t i = p.reverseNext; i < p.reverse.size(); ++i) {
    const ScheduleAction &a = p.reverse[i];
    if (a.kind == ScheduleAction::Save)
      return;
    if (a.kind != ScheduleAction::Restore)
      continue;
    Snapshot &s = p.slots[size_t(a.slot)];
    if (!s.disk || s.resident || s.io.valid() || !s.allocated || s.moved)
      return;
    startRead(p, s);
    return;
  }
}

/// Which of the plan's slots live on disk: where a checkpoint directory is
/// set and the snapshots pass the plan's memory limit, all but the slots
/// the memory holds (less two, for the write and the read in flight), those
/// the schedule saves and restores least; slot 0 (the schedule's start,
/// restored most) stays in memory. Called whenever the schedule is made,
/// before any slot but 0 was saved.
void assignDisk(Plan &p) {
  for (Snapshot &s : p.slots)
    s.disk = false;
  if (diskDirectory().empty() || p.memoryLimit < 0 || p.snapshotBytes <= 0)
    return;
  const int64_t memSlots =
      std::max<int64_t>(p.memoryLimit / p.snapshotBytes - 2, 1);
  if (p.snaps <= memSlots)
    return;
  std::vector<int64_t> uses(size_t(p.snaps), 0);
  for (const auto *list : {&p.forward, &p.reverse})
    for (const ScheduleAction &a : *list)
      if (a.kind == ScheduleAction::Save || a.kind == ScheduleAction::Restore)
        ++uses[size_t(a.slot)];
  uses[0] = INT64_MAX;
  std::vector<int> order(size_t(p.snaps));
  for (int i = 0; i < p.snaps; ++i)
    order[size_t(i)] = i;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return uses[size_t(a)] > uses[size_t(b)];
  });
  for (size_t i = size_t(memSlots); i < order.size(); ++i)
    p.slots[size_t(order[i])].disk = true;
}

/// The snapshots a plan with a checkpoint directory takes beyond what
/// memory holds (\p inMemory): as many again, within three quarters of the
/// directory's free space and the \p steps.
int64_t withDiskSnapshots(int64_t steps, int64_t inMemory,
                          int64_t snapshotBytes) {
  if (diskDirectory().empty() || snapshotBytes <= 0)
    return inMemory;
  struct statvfs st;
  int64_t room = 0;
  if (::statvfs(diskDirectory().c_str(), &st) == 0)
    room = int64_t(st.f_bavail) * int64_t(st.f_frsize) / 4 * 3;
  const int64_t extra = std::min(inMemory, room / snapshotBytes);
  return std::clamp<int64_t>(inMemory + extra, 1, std::max<int64_t>(steps, 1));
}

Plan &topPlan(const char *what) {
  if (plans().empty())
    failf("internal error: %s without a checkpoint plan", what);
  return *plans().back();
}

/// Saves the state into \p slot. A state dat flagged in \p overwritten
/// (the first loop of the step's body overwrites it) waits for that loop's
/// prepare, when the body runs next: always in the forward sweep, after an
/// ADVANCE in the reverse one. That prepare saves only its points outside
/// the loop's range, whose values alone are live at the step's start;
/// except at the schedule's step 0, whose state the reverse sweep leaves
/// behind for what comes before the loop (the statements before it, the
/// steps taped before the schedule): there it takes the dat's storage.
/// \p step is the saved state's step, relative to the schedule.
void saveSlot(Plan &p, int slot, const uint64_t *vals, int64_t step,
              const uint8_t *overwritten = nullptr) {
  if (slot < 0 || slot >= p.snaps)
    failf("internal error: checkpoint slot %d of %d", slot, p.snaps);
  // Whether the body runs next (a forward step; a reverse SAVE followed by
  // ADVANCE), and the next step's body after it (flag 2's take; ADVANCEs
  // in a row run consecutive steps).
  const bool bodyNext = !p.reversing || p.advanceAt(p.reverseNext);
  const bool nextBodyNext =
      p.reversing ? p.advanceAt(p.reverseNext) && p.advanceAt(p.reverseNext + 1)
                  : p.forwardStep + 1 < p.count;
  if (overwritten && p.flags.empty()) {
    p.flags.assign(overwritten, overwritten + p.dats.size());
    p.outsideBytes.assign(p.dats.size(), -1);
  }
  Snapshot &s = p.slots[size_t(slot)];
  if (s.disk) {
    // Every dat copied now (a write follows), into buffers counted again.
    finishIO(p, s);
    countResident(p, s, true);
    overwritten = nullptr;
  }
  Timed timed(stats.saveSeconds);
  if (!s.allocated) {
    s.dats.resize(p.dats.size());
    s.allocated = true;
  }
  int64_t bytes = 0;                      // this save's, as far as known now
  const int bodies = p.reversing ? 1 : 0; // the reverse's ADVANCE to come
  for (size_t i = 0; i < p.dats.size(); ++i) {
    const uint8_t flag = overwritten ? overwritten[i] : 0;
    const bool partial = flag == 1 && step > 0;
    // Flag 3 on one rank only: a skewed sweep exchanges its loops' halos
    // after all of their prepares (lib/exec/Skew.cpp), into the dat's
    // storage then, a fresh one after the take, while the loops before the
    // taking one read the snapshot's.
    if (((flag == 1 || (flag == 3 && dist::ranks() == 1)) && bodyNext) ||
        (flag == 2 && bodyNext && nextBodyNext)) {
      s.dats[i].dat = p.dats[i];
      PendingTake take =
          pendingFor(&s.dats[i], 0, p.dats[i], bodies + (flag == 2 ? 1 : 0));
      take.partial = partial;
      take.late = flag == 3;
      if (flag == 1 && i < p.outsideBytes.size())
        take.outsideBytes = &p.outsideBytes[i];
      pendingTakes.push_back(take);
    } else {
      s.dats[i].save(p.dats[i]);
    }
    bytes += partial && i < p.outsideBytes.size() && p.outsideBytes[i] >= 0
                 ? p.outsideBytes[i]
                 : storageBytes(p.dats[i]);
  }
  p.bytes += bytes - s.bytes;
  checkpointBytesNow += bytes - s.bytes;
  s.bytes = bytes;
  stats.checkpointPeakBytes =
      std::max(stats.checkpointPeakBytes, checkpointBytesNow);
  s.moved = false;
  s.values.assign(vals, vals + p.nvals);
  ++stats.snapshotsTaken;
  if (s.disk)
    startWrite(p, slot);
}

/// The plan's snapshots are smaller than opd_ckpt_begin counted (flag-1
/// dats keep only their points outside the first loop's range, which the
/// first step's prepare showed): a plan whose count came from the memory
/// budget takes as many more as that memory holds, with a new schedule
/// from the second step of its range on (its first forward action, the
/// save of step 0 into slot 0, is the same in every schedule). All ranks
/// decide alike.
void replanSmallerSnapshots(Plan &p) {
  p.replanned = true;
  const int64_t steps = p.count - p.taped;
  const int64_t bytes = p.partialSnapshotBytes();
  // The first snapshot stays whole; the others are this size.
  int64_t snaps = p.snaps;
  if (bytes > 0 && bytes < p.snapshotBytes)
    snaps = std::clamp<int64_t>(
        1 + (p.memoryForSnapshots - p.snapshotBytes) / bytes, p.snaps, steps);
  dist::allreduce(&snaps, OPD_I64, OPD_MIN, 1);
  if (snaps <= p.snaps || p.forwardNext != 1)
    return;
  std::vector<ScheduleAction> fwd;
  std::vector<ScheduleAction> rev = checkpointSchedule(steps, snaps, &fwd);
  if (fwd.empty() || fwd[0].kind != ScheduleAction::Save || fwd[0].step != 0 ||
      fwd[0].slot != p.forward[0].slot)
    return;
  p.snaps = int(snaps);
  p.slots.resize(size_t(snaps));
  p.forward = std::move(fwd);
  p.reverse = std::move(rev);
  assignDisk(p);
}

/// Top-level checkpointed loops begun under an automatic budget: the n-th
/// call of an adjoint expects as many more, so memory touched for the
/// first time counts 1/n of its cost (later calls reuse it from the pool).
int64_t automaticCalls = 0;
/// Plans begun (their snapshot files' names).
int64_t planSerial = 0;

/// An automatic plan at step 1 (opd_ckpt_begin taped step 0): from step
/// 0's tape and time, the memory free on the node and what the adjoints'
/// pool holds, the plan of the fewest expected seconds (planFromStepZero):
/// every step taped where that fits and pays, else a taped prefix and a
/// binomial schedule for the rest. All ranks decide alike: the largest
/// times, the smallest prefix, then the fewest snapshots.
void planAutomatically(Plan &p) {
  const int64_t step0 = std::max<int64_t>(tape().bytes - p.tapeAtBegin, 0);
  double costs[2] = {std::max(opd_rt_wtime() - p.stepStart -
                                  (stats.freshSeconds - p.freshAtStart),
                              0.0),
                     freshCostOverride >= 0 ? freshCostOverride
                     : stats.freshBytes > 0
                         ? stats.freshSeconds / double(stats.freshBytes)
                         : 0.0};
  dist::allreduce(costs, OPD_F64, OPD_MAX, 2);
  int64_t ranksOnNode = dist::nodeRank() + 1;
  dist::allreduce(&ranksOnNode, OPD_I64, OPD_MAX, 1);
  // Step 0's tape is touched already, and so is what the pool holds free;
  // a few MiB more count as touched too, so that small problems, whose
  // timings are noise, plan alike in every run (every step taped).
  constexpr int64_t Small = int64_t(64) << 20;
  const int64_t touched = step0 + pool().freeNow() + Small;
  const int64_t memory =
      planMemory(availableMemory(), touched, int(ranksOnNode));
  const double fresh = costs[1] / double(std::max<int64_t>(automaticCalls, 1));
  StepZeroPlan plan = planFromStepZero(p.count, step0, p.snapshotBytes, memory,
                                       touched, costs[0], fresh);
  int64_t k = plan.taped;
  dist::allreduce(&k, OPD_I64, OPD_MIN, 1);
  if (k < p.count) {
    if (k != plan.taped)
      plan = planForPrefix(p.count, k, step0, p.snapshotBytes, memory, touched,
                           costs[0], fresh);
    int64_t snaps = std::max<int64_t>(plan.snapshots, 1);
    dist::allreduce(&snaps, OPD_I64, OPD_MIN, 1);
    plan.snapshots = snaps;
    p.storeAll = false;
    p.taped = p.tapedNext = k;
    p.boundBytes = memory;
    p.memoryForSnapshots = snaps * p.snapshotBytes;
    p.snaps = int(snaps);
    p.slots.resize(size_t(p.snaps));
    p.reverse = checkpointSchedule(p.count - k, p.snaps, &p.forward);
    // The minimum plan may pass the memory: the rest on disk, if allowed.
    p.memoryLimit = std::max<int64_t>(memory - (k + 1) * step0, 0);
    assignDisk(p);
  }
  stats.planned = true;
  stats.lastPlan = plan;
  stats.planCount = p.count;
  stats.planStepTape = step0;
  stats.planMemoryBytes = memory;
  stats.planStepSeconds = costs[0];
  stats.planFreshSecondsPerGiB = fresh * double(int64_t(1) << 30);
}

} // namespace

static int64_t budgetOverride = -1;

void setSnapshotBudget(int64_t bytes) { budgetOverride = bytes; }

/// OPD_CKPT_MEMORY in bytes, or -1 when the environment sets none.
static int64_t environmentBudget() {
  static const int64_t bytes = [] {
    const int64_t mib =
        envInteger("OPD_CKPT_MEMORY", -1, 0, INT64_MAX >> 20,
                   "the snapshots' memory in MiB (a whole number >= 0)");
    return mib >= 0 ? mib << 20 : int64_t(-1);
  }();
  return bytes;
}

void setCheckpointDir(const char *dir) {
  checkpointDirRead = true;
  checkpointDir.clear();
  if (!dir || !*dir)
    return;
  checkDirectory(dir, "--ckpt-dir");
  checkpointDir = dir;
}

bool automaticBudget() { return budgetOverride < 0 && environmentBudget() < 0; }

void setAvailableMemory(int64_t bytes) { availableOverride = bytes; }
void setFreshMemoryCost(double secondsPerByte) {
  freshCostOverride = secondsPerByte;
}

int64_t availableMemory() {
  if (availableOverride >= 0)
    return availableOverride;
  // MemAvailable counts the page cache the kernel would drop; the free
  // pages alone (the fallback) are less.
  if (std::FILE *f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    long long kib = -1;
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "MemAvailable: %lld kB", &kib) == 1)
        break;
    std::fclose(f);
    if (kib >= 0)
      return int64_t(kib) << 10;
  }
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? int64_t(pages) * page : 0;
}

int64_t snapshotBudget() {
  if (budgetOverride >= 0)
    return budgetOverride;
  static const int64_t budget = [] {
    if (environmentBudget() >= 0)
      return environmentBudget();
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    const int64_t physical = pages > 0 && page > 0 ? int64_t(pages) * page : 0;
    return physical / 4 / std::max(dist::ranks(), 1);
  }();
  return budget;
}

const AdjointMemory &adjointMemory() { return stats; }

int64_t checkpointBytesInMemory() { return checkpointBytesNow; }

bool adjointRerunning() { return rerunPhase; }

/// Whether loop \p name runs a kernel the derivative passes made: the
/// compiler's names (step.b, step.bt3, step.d, adjoint_zero_f64, fused
/// groups of them) or the user's ("step (adjoint)"). The reverse part of a
/// scheduled step may start with such loops before its first tape pop.
static bool derivativeLoop(const std::string &name) {
  if (name.find("(adjoint") != std::string::npos ||
      name.find("(tangent") != std::string::npos)
    return true;
  size_t at = 0;
  while (at <= name.size()) {
    size_t end = name.find('+', at);
    if (end == std::string::npos)
      end = name.size();
    const std::string part = name.substr(at, end - at);
    if (part.find('.') != std::string::npos || part.rfind("adjoint_", 0) == 0 ||
        part.rfind("tangent_", 0) == 0)
      return true;
    at = end + 1;
  }
  return false;
}

std::string rerunLoopName(const std::string &name) {
  if (derivativeLoop(name))
    return name;
  constexpr size_t Width = 48; // ir::MaxUserLoopName
  std::string base = name, tag = " (re-run)";
  if (base.size() > 2 && base.back() == ')') {
    // "a+b (fused)": one parenthesis.
    const size_t open = base.rfind(" (");
    if (open != std::string::npos) {
      tag = base.substr(open, base.size() - 1 - open) + ", re-run)";
      base.resize(open);
    }
  }
  if (base.size() + tag.size() > Width)
    base = base.substr(0, Width - tag.size() - 3) + "...";
  return base + tag;
}

} // namespace opdc::rt

using namespace opdc::rt;

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
  pool().put(c.buf);
}

void opd_tape_push_value(uint64_t bits) {
  tape().values.push_back(bits);
  noteTape(8);
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

void opd_ckpt_begin(int64_t first, int64_t count, int64_t snapshots,
                    opd_dat *const *dats, int32_t ndats, int32_t nvals) {
  auto p = std::make_unique<Plan>();
  p->first = first;
  p->count = std::max<int64_t>(count, 0);
  int64_t bytes = 8 * int64_t(nvals);
  for (int32_t i = 0; i < ndats; ++i)
    bytes += storageBytes(dats[i]);
  p->snapshotBytes = bytes;
  if (snapshots <= 0 && automaticBudget()) {
    // Planned at step 1 from step 0's tape, its time and the memory free
    // then (opd_ckpt_forward): step 0 goes on the tape, as the reversal of
    // any step needs one step's tape anyway.
    p->automatic = p->budgeted = true;
    snapshots = std::max<int64_t>(p->count, 1);
    p->boundBytes = snapshots * bytes;
    if (plans().empty())
      ++automaticCalls;
  } else if (snapshots <= 0) {
    // As many as the memory budget holds: fewer re-runs. Every rank runs
    // the same schedule (its steps' exchanges must meet): the smallest.
    const int64_t budget = snapshotBudget();
    snapshots = budgetSnapshots(p->count, bytes, budget);
    dist::allreduce(&snapshots, OPD_I64, OPD_MIN, 1);
    p->boundBytes = std::max(budget, snapshots * bytes);
    p->budgeted = true;
    p->memoryLimit = budget;
  } else {
    p->boundBytes = snapshots * bytes;
    p->memoryLimit = snapshotBudget();
  }
  p->serial = ++planSerial;
  p->snaps = int(std::clamp<int64_t>(snapshots, 1, std::max<int64_t>(p->count, 1)));
  p->memoryForSnapshots = p->boundBytes;
  p->dats.assign(dats, dats + ndats);
  p->nvals = nvals;
  p->tapeAtBegin = tape().bytes;
  // Taping every step first, where the snapshots would be one a step and
  // under a budget that holds snapshots for half the steps or more (a
  // step's tape is a few snapshots' worth, so a taped prefix then saves
  // more runs than the snapshots it costs): opd_ckpt_forward decides at
  // step 1 from step 0's tape how many steps stay taped. A budgeted plan
  // keeps at least the binomial minimum of snapshots for the rest, so
  // taping step 0 costs at most one step's tape beyond the budget, which
  // the reversal of any step takes anyway. Smaller budgets (a first call,
  // snapshotBudgetNow) schedule every step as before.
  p->storeAll = p->count > 0 &&
                (snapshots >= p->count || (p->budgeted && 2 * snapshots >= p->count));
  if (p->storeAll) {
    p->storeAllNext = p->taped = p->count;
  } else {
    if (p->budgeted && !diskDirectory().empty()) {
      // Beyond what the budget holds, as many again on disk.
      int64_t total = withDiskSnapshots(p->count, snapshots, bytes);
      dist::allreduce(&total, OPD_I64, OPD_MIN, 1);
      p->snaps = int(total);
    }
    p->slots.resize(size_t(p->snaps));
    p->reverse = checkpointSchedule(p->count, p->snaps, &p->forward);
    assignDisk(*p);
  }
  plans().push_back(std::move(p));
}

int32_t opd_ckpt_forward(int64_t step) {
  bodyStarts();
  Plan &p = topPlan("a checkpointed step");
  p.forwardStep = step - p.first;
  if (p.automatic && p.storeAll && step - p.first <= 1 && p.count > 1) {
    if (step - p.first == 0) {
      p.stepStart = opd_rt_wtime();
      p.freshAtStart = stats.freshSeconds;
      measuringFresh = true;
    } else {
      measuringFresh = false;
      planAutomatically(p);
    }
  } else if (p.storeAll && step - p.first == 1 && p.count > 1) {
    // Taping every step is only right while the tape stays within the
    // plan's bound: one step's tape can hold more than a snapshot (every
    // value each of its loops overwrites; Airfoil's is 1.4 snapshots). If
    // step 0's tape times the steps would pass the bound, the first steps
    // stay taped and the rest follows a binomial schedule with the
    // snapshots that the bound still holds. All ranks decide alike.
    const int64_t step0 = std::max<int64_t>(tape().bytes - p.tapeAtBegin, 0);
    int64_t over = step0 > 0 && step0 > p.boundBytes / p.count ? 1 : 0;
    dist::allreduce(&over, OPD_I64, OPD_MAX, 1);
    if (over) {
      // The first k steps stay taped (step 0 is, steps 1..k-1 will be),
      // the rest is scheduled: the fewest runs (tapedPrefix); the smallest
      // k over the ranks, whose tapes differ, then the fewest snapshots.
      int64_t k = tapedPrefix(p.count, step0, p.boundBytes, p.snapshotBytes,
                              p.budgeted);
      dist::allreduce(&k, OPD_I64, OPD_MIN, 1);
      int64_t snaps = prefixSnapshots(p.count, k, step0, p.boundBytes,
                                      p.snapshotBytes, p.budgeted);
      snaps = std::max<int64_t>(snaps, 1); // k = 1 always has a plan
      const int64_t rest = p.count - k;
      dist::allreduce(&snaps, OPD_I64, OPD_MIN, 1);
      p.storeAll = false;
      p.taped = p.tapedNext = k;
      p.memoryForSnapshots = std::max<int64_t>(p.boundBytes - k * step0, 0);
      p.snaps = int(snaps);
      p.slots.resize(size_t(p.snaps));
      p.reverse = checkpointSchedule(rest, p.snaps, &p.forward);
      if (p.memoryLimit >= 0)
        p.memoryLimit = std::max<int64_t>(p.memoryLimit - k * step0, 0);
      assignDisk(p);
    }
  }
  if (p.storeAll)
    return OPD_CKPT_TAPE;
  const int64_t rel = step - p.first;
  if (rel < p.taped)
    return OPD_CKPT_TAPE;
  if (p.budgeted && !p.replanned && rel == p.taped + 1)
    replanSmallerSnapshots(p);
  if (p.forwardNext < p.forward.size() &&
      p.forward[p.forwardNext].step == rel - p.taped)
    return p.forward[p.forwardNext++].slot;
  return -1;
}

/// The step of the state a save now takes, relative to the plan's
/// schedule: the forward sweep's, or the reverse SAVE's.
static int64_t savedStep(const Plan &p) {
  if (!p.reversing)
    return p.forwardStep - p.taped;
  return p.reverseNext > 0 ? p.reverse[p.reverseNext - 1].step : 0;
}

void opd_ckpt_save(int32_t slot, const uint64_t *vals) {
  settlePending();
  Plan &p = topPlan("a snapshot");
  saveSlot(p, slot, vals, savedStep(p));
}

void opd_ckpt_save_overwritten(int32_t slot, const uint64_t *vals,
                               const uint8_t *overwritten) {
  settlePending();
  Plan &p = topPlan("a snapshot");
  saveSlot(p, slot, vals, savedStep(p), overwritten);
}

/// Restores the state from \p slot; by handing the snapshot's storage to
/// the dats (their old storage goes to the pool, for the next save) when
/// \p mayMove and this is the schedule's last restore of the slot before it
/// is saved again, else by copy.
static void restoreSlot(int32_t slot, uint64_t *vals, bool mayMove) {
  settlePending();
  Plan &p = topPlan("a restore");
  if (slot < 0 || slot >= p.snaps || !p.slots[size_t(slot)].allocated ||
      p.slots[size_t(slot)].moved)
    failf("internal error: restore of checkpoint slot %d, never saved", slot);
  Snapshot &s = p.slots[size_t(slot)];
  if (s.disk)
    makeResident(p, s);
  const ScheduleAction *a =
      p.reverseNext > 0 && p.reverseNext <= p.reverse.size()
          ? &p.reverse[p.reverseNext - 1]
          : nullptr;
  // A disk snapshot's buffers go back to the pool after the restore (its
  // file stays), so it is restored by copy.
  const bool move = mayMove && !s.disk && a &&
                    a->kind == ScheduleAction::Restore && a->slot == slot &&
                    a->last;
  Timed timed(stats.restoreSeconds);
  for (size_t i = 0; i < p.dats.size(); ++i) {
    if (move && !s.dats[i].isPartial())
      pool().put(s.dats[i].moveInto(p.dats[i]));
    else
      s.dats[i].restore(p.dats[i]);
  }
  s.moved = move;
  ++stats.restores;
  stats.restoresMoved += move;
  std::copy(s.values.begin(), s.values.end(), vals);
  if (s.disk) {
    finishIO(p, s); // its buffers back to the pool
    prefetchNext(p);
  }
}

void opd_ckpt_restore(int32_t slot, uint64_t *vals) {
  restoreSlot(slot, vals, true);
}

void opd_ckpt_restore_copy(int32_t slot, uint64_t *vals) {
  restoreSlot(slot, vals, false);
}

int32_t opd_ckpt_next(int64_t *step, int32_t *slot) {
  // A SAVE's pending takes wait through the ADVANCEs that run the bodies
  // whose first loop takes them (bodyStarts); any other action saves what
  // still waits by copy.
  Plan &p = topPlan("the reverse of a checkpointed loop");
  p.reversing = true;
  rerunPhase = false;
  pollIO(p);
  if (p.rerunStart >= 0) {
    stats.rerunSeconds += opd_rt_wtime() - p.rerunStart;
    p.rerunStart = -1;
  }
  if (!p.storeAll && p.advanceAt(p.reverseNext))
    bodyStarts();
  else
    settlePending();
  if (p.storeAll) {
    if (p.storeAllNext == 0)
      return OPD_CKPT_DONE;
    *step = p.first + --p.storeAllNext;
    *slot = -1;
    ++stats.stepsReversed;
    return OPD_CKPT_REVERSE_TAPED;
  }
  if (p.reverseNext >= p.reverse.size()) {
    // Then the steps the forward sweep taped, last first.
    if (p.tapedNext == 0)
      return OPD_CKPT_DONE;
    *step = p.first + --p.tapedNext;
    *slot = -1;
    ++stats.stepsReversed;
    return OPD_CKPT_REVERSE_TAPED;
  }
  const ScheduleAction &a = p.reverse[p.reverseNext++];
  *step = p.first + p.taped + a.step;
  *slot = a.slot;
  switch (a.kind) {
  case ScheduleAction::Advance:
    ++stats.stepsRerun;
    p.rerunStart = opd_rt_wtime();
    rerunPhase = true;
    return OPD_CKPT_ADVANCE;
  case ScheduleAction::Save:
    return OPD_CKPT_SAVE;
  case ScheduleAction::Restore:
    return OPD_CKPT_RESTORE;
  case ScheduleAction::Reverse:
    ++stats.stepsReversed;
    rerunPhase = true; // its forward run with tape, until the first pop
    return OPD_CKPT_REVERSE;
  }
  return OPD_CKPT_DONE;
}

void opd_ckpt_end(void) {
  settlePending();
  rerunPhase = measuringFresh = false;
  Plan &p = topPlan("the end of a checkpointed loop");
  for (Snapshot &s : p.slots) {
    if (s.io.valid())
      finishIO(p, s, true);
    if (s.fileBytes) {
      ::unlink(s.path.c_str());
      diskBytesNow -= s.fileBytes;
    }
    for (DatCopy &c : s.dats)
      if (c.buf.data)
        pool().put(c.buf);
  }
  checkpointBytesNow -= p.bytes;
  plans().pop_back();
}

} // extern "C"
