// AdjointDisk.cpp - Checkpoint snapshots beyond the memory budget in files.
// SPDX-License-Identifier: Apache-2.0
//
// Split from Adjoint.cpp, whose header comment describes the checkpoint
// plans; the shared state is in AdjointState.h. A plan whose snapshots do
// not fit the budget keeps the rest in files of --ckpt-dir (OPD_CKPT_DIR),
// written and read by one I/O thread ahead of need (decision 0271).
#include "exec/AdjointState.h"

namespace opdc::rt::adjoint {

//===-- Snapshots on disk -------------------------------------------------===//

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
  // A device store spills to host memory itself: no snapshot goes to disk.
  static const std::string none;
  if (haveStore())
    return none;
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
void finishIO(Plan &p, Snapshot &s, bool keep) {
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

} // namespace opdc::rt::adjoint
