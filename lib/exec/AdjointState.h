// AdjointState.h - The state the adjoint runtime's files share (internal).
// SPDX-License-Identifier: Apache-2.0
//
// The tape (buffers, their pool, saved dats, pending takes) and the
// checkpoint plans (snapshots, plans) are one service in three files:
// AdjointTape.cpp (the tape's C entry points and the loop-prepare hook),
// AdjointDisk.cpp (snapshots beyond the memory budget in files) and
// Adjoint.cpp (the plans and the checkpoint C entry points; its header
// comment describes the whole). The state they share is defined here,
// inline, in namespace opdc::rt::adjoint; nothing outside lib/exec's
// adjoint files includes this header.
#pragma once

#include "core/Dist.h"
#include "core/Memory.h"
#include "core/Objects.h"
#include "core/Runtime.h"
#include "exec/Adjoint.h"
#include "opd_rt.h"
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace opdc::rt::adjoint {

/// A buffer from the pool (or a new one) of at least \p bytes.
struct Buffer {
  void *data = nullptr;
  int64_t bytes = 0;
};

inline AdjointMemory stats;

/// The store a device backend registered (opd_rt_adjoint_store): dat
/// copies keep its entries instead of host buffers.
inline opd_adjoint_store storeHooks{};
inline bool haveStore() { return storeHooks.save != nullptr; }
/// --device-tape-memory in bytes (-1: not given).
inline int64_t deviceTapeMemory = -1;

/// adjointRerunning(): loops run now re-run primal steps.
inline bool rerunPhase = false;

/// Test settings (setAvailableMemory, setFreshMemoryCost); -1: none.
inline int64_t availableOverride = -1;
inline double freshCostOverride = -1;

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
    // Faulted in here, in parallel pieces, and timed (allocPopulated): the
    // seconds a byte of fresh memory costs (the kernel's page faults; on
    // some virtual machines many times a copy's) are what automatic plans
    // weigh against re-running steps (planFromStepZero). The kernel
    // populates the pages without a write of ours, so every fresh buffer
    // is timed, for no more than its first touch would cost anyway.
    Buffer b;
    const std::size_t size = std::size_t(std::max<int64_t>(bytes, 1));
    const bool large = size >= LargeAllocation;
    const bool huge = large && pages.huge();
    const double start = opd_rt_wtime();
    b.data = allocPopulated(size, "the adjoint tape", huge);
    const double seconds = opd_rt_wtime() - start;
    stats.freshSeconds += seconds;
    stats.freshBytes += bytes;
    if (large) {
      pages.note(huge, bytes, seconds);
      (huge ? stats.freshHugeBytes : stats.freshSmallBytes) += bytes;
      (huge ? stats.freshHugeSeconds : stats.freshSmallSeconds) += seconds;
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
    if (!b.data) // a copy a store held
      return;
    freeBytes += b.bytes;
    free.emplace(b.bytes, b);
  }
  /// The pages of large fresh buffers and what each kind cost.
  const PageChoice &pageChoice() const { return pages; }
  /// The seconds a byte of the fresh memory the pool will get costs: the
  /// chosen kind's measure, once both are sampled; before, every fresh
  /// byte's (0: none measured).
  double freshCost() const {
    if (pages.sampled())
      return pages.cost(pages.huge());
    return stats.freshBytes > 0 ? stats.freshSeconds / double(stats.freshBytes)
                                : 0.0;
  }
  ~Pool() {
    for (auto &[n, b] : free)
      freeAligned(b.data);
  }

private:
  std::multimap<int64_t, Buffer> free;
  int64_t allocated = 0, freeBytes = 0;
  PageChoice pages;
};

inline Pool &pool() {
  static Pool p;
  return p;
}

inline int64_t storageBytes(const opd_dat *d) {
  return d->elements * d->elementBytes();
}

/// A block dat's storage starts `lead` bytes (less than Alignment) past its
/// aligned allocation, so that its rows' first interior points are aligned
/// (opd_block_dat_create); a set dat's at it. Copies keep the same lead:
/// the same alignment, and a buffer a pop hands to the dat is one the dat
/// could have been allocated with.
inline int64_t leadOf(const opd_dat *d) {
  return int64_t(reinterpret_cast<uintptr_t>(d->data) & (Alignment - 1));
}

/// One saved dat: its storage and halo state. The tape and the snapshots
/// both keep dats this way: in a host buffer, or, with a device store, as
/// the store's entry (the halo state stays here).
struct DatCopy {
  opd_dat *dat = nullptr;
  Buffer buf; ///< the allocation; the values start `lead` bytes in
  int64_t lead = 0;
  int64_t haloValid = 0;
  bool cornersValid = true;
  void *entry = nullptr; ///< the store's (haveStore())

  /// Copies \p d into this copy's buffer (taken from the pool the first
  /// time), or into the store's entry.
  void save(opd_dat *d) {
    dat = d;
    if (haveStore()) {
      dist::settleExchanges();
      entry = storeHooks.save(d, d->data, storageBytes(d), entry);
      haloValid = d->haloValid;
      cornersValid = d->cornersValid;
      return;
    }
    copyFrom(d->data, d->haloValid, d->cornersValid);
  }
  /// Gives back what this copy holds (its buffer to the pool, its entry to
  /// the store).
  void release() {
    if (entry)
      storeHooks.release(entry);
    entry = nullptr;
    pool().put(buf);
    buf = Buffer();
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
    if (entry)
      storeHooks.restore(d, entry, 0);
    else if (partial)
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
    if (entry) {
      // The store hands its buffer to the dat's device copy.
      storeHooks.restore(d, entry, 1);
      entry = nullptr;
      d->haloValid = haloValid;
      d->cornersValid = cornersValid;
      return Buffer();
    }
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
            (d->ndims < 2 ||
             (j + d->first[1] >= wlo[1] && j + d->first[1] < whi[1])) &&
            (d->ndims < 3 ||
             (k + d->first[2] >= wlo[2] && k + d->first[2] < whi[2]));
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
    if (!partial && !entry && lead != leadOf(d))
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

inline Tape &tape() {
  static Tape t;
  return t;
}

inline void noteTape(int64_t delta) {
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
  std::size_t tapeIndex = 0;   ///< an entry of the tape (it may grow) ...
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
inline std::vector<PendingTake> pendingTakes;

inline DatCopy &pendingCopy(const PendingTake &p) {
  return p.snapshot ? *p.snapshot : tape().dats[p.tapeIndex];
}

inline PendingTake pendingFor(DatCopy *snapshot, std::size_t tapeIndex,
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
inline void settle(const PendingTake &p) {
  Timed timed(p.snapshot ? stats.saveSeconds : stats.tapeSeconds);
  DatCopy &c = pendingCopy(p);
  if (c.dat->data == p.storage)
    c.copyFrom(p.storage, c.dat->haloValid, c.dat->cornersValid);
  else
    c.copyFrom(p.storage, p.haloValid, p.cornersValid);
}

inline void settlePending() {
  for (const PendingTake &p : pendingTakes)
    settle(p);
  pendingTakes.clear();
}

/// A step's body starts: the pending takes waiting for it count it; one
/// that waited for nothing more (its loop did not come) is saved by copy.
inline void bodyStarts() {
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
inline DatCopy popDat(opd_dat *dat) {
  settlePending();
  rerunPhase = false;
  Tape &t = tape();
  if (t.dats.empty())
    failf("internal error: the adjoint tape is empty (restoring dat '%s')",
          dat ? dat->name.c_str() : "?");
  DatCopy c = t.dats.back();
  t.dats.pop_back();
  noteTape(-storageBytes(dat));
  // The next pops' entries, brought back while this step's adjoint runs.
  if (haveStore())
    for (std::size_t k = 1; k <= 2 && k <= t.dats.size(); ++k)
      if (t.dats[t.dats.size() - k].entry)
        storeHooks.prefetch(t.dats[t.dats.size() - k].entry);
  return c;
}

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
  /// What the plan at step 1 was made of (revisePrefix weighs the taped
  /// steps still to come against them): step 0's tape bytes and seconds,
  /// the memory it may hold and held, the tape's bytes then, the chosen
  /// pages' measure then (bytes, seconds, each kind), and the calls'
  /// discount.
  int64_t stepTape = 0, planMemory = 0, planTouched = 0, tapeAtPlan = 0;
  int64_t pageBytesAtPlan[2] = {0, 0}; ///< [huge]
  double pageSecondsAtPlan[2] = {0, 0};
  double stepSeconds = 0, callShare = 1;
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

inline std::vector<std::unique_ptr<Plan>> &plans() {
  static std::vector<std::unique_ptr<Plan>> p;
  return p;
}

inline int64_t checkpointBytesNow = 0;

//===-- Snapshots on disk (AdjointDisk.cpp) ------------------------------===//

inline std::string checkpointDir; ///< setCheckpointDir, else OPD_CKPT_DIR
inline bool checkpointDirRead = false;
inline int64_t diskBytesNow = 0;

void checkDirectory(const std::string &dir, const char *from);
const std::string &diskDirectory();
std::string fileIO(const std::string &path,
                   const std::vector<std::pair<char *, int64_t>> &parts,
                   bool read);
std::vector<std::pair<char *, int64_t>> fileParts(Snapshot &s);
void countResident(Plan &p, Snapshot &s, bool resident);
void finishIO(Plan &p, Snapshot &s, bool keep = false);
void pollIO(Plan &p);
void startWrite(Plan &p, int slot);
void startRead(Plan &p, Snapshot &s);
void makeResident(Plan &p, Snapshot &s);
void prefetchNext(Plan &p);
void assignDisk(Plan &p);
int64_t withDiskSnapshots(int64_t steps, int64_t inMemory,
                          int64_t snapshotBytes);

} // namespace opdc::rt::adjoint
