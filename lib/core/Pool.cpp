// Pool.cpp - runTasks: the runtime's threads for a loop's chunks, which
// never wait for a thread that is not running.
// SPDX-License-Identifier: Apache-2.0
//
// Why not `omp parallel for`: libgomp's workers spin between regions and
// every region ends in a barrier that waits for all of them. With another
// process busy on a worker's core, the worker gets the core for a time
// slice now and then, so each short region waited up to a slice for it
// and the spinning took the slices it did get (issue 53: a 201^2 wave
// program ran many times slower at 2 threads than at 1). The runtime's
// other parallel work (core/Memory.cpp's zero fills and copies) runs here
// too: libgomp's workers spin for milliseconds after each region, and on
// a machine with as many cores as threads they held the cores the pool's
// workers were started on (decision 0425). Here:
//
//  * A job is (n, task, ctx) and one claim word per thread: thread s
//    (the caller 0, worker k k + 1) owns the tasks [s * n / T, (s + 1) *
//    n / T) of T threads, its word holding the range left, (end << 32) |
//    next. A thread claims its own tasks, then, when they are gone, the
//    other threads' tasks, each by a compare-and-swap from (next, end) to
//    (next + 1, end), next < end. Each thread so runs the same contiguous
//    tasks call after call, as OpenMP's static schedule would: a loop's
//    chunk stays in the cache of the core that wrote it last, and no
//    claim word is written by two cores while every thread runs its own
//    share (decision 0410 has what it measured). A worker that is not
//    running loses its share to the others, who run it in order, as the
//    one shared word of decision 0240 had them do: nothing waits for it.
//  * A thread reads the job's task and context only after a successful
//    claim: the caller stored them before the words (release), and a
//    claim succeeds only on a word with tasks left, which is the current
//    job's (an earlier job's words are all used up when its call
//    returns), so the job cannot end (nor its fields change) before this
//    task is done. A worker that read a word of an earlier job and finds
//    it with the same value again claims the current job's task. Whoever
//    claims a task runs it and counts it done, in a count of its own on
//    its own cache line (one count shared by all threads moved between
//    the cores at every task, decision 0425); the caller claims too, and
//    returns when the counts add up to n. A worker that wakes after the
//    last claim finds nothing and goes back to waiting: the caller waits
//    only for tasks a worker is running, never for a worker to arrive.
//  * Workers spin briefly for the next job (back-to-back loops find them
//    awake), then sleep on a futex; the caller wakes sleepers only when
//    there are some. The caller waiting for a worker's last task spins
//    briefly, then sleeps too: its core goes idle and the kernel may move
//    the worker that holds the task onto it.
//  * The pool (omp_get_max_threads() - 1 workers, grown or shrunk to match
//    at the next call) is never destroyed: a task that fails calls exit
//    from whatever thread runs it.
#include "core/Pool.h"

#include "core/Runtime.h"

#include <linux/futex.h>
#include <omp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <strings.h>
#include <thread>
#include <vector>

namespace opdc::rt {
namespace {
void futexWait(std::atomic<uint32_t> *word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), FUTEX_WAIT_PRIVATE,
          expected, nullptr, nullptr, 0);
}
void futexWake(std::atomic<uint32_t> *word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), FUTEX_WAKE_PRIVATE,
          INT_MAX, nullptr, nullptr, 0);
}

/// A spin-wait hint to the core (x86's pause, Arm's yield), so that a
/// spinning thread leaves its sibling hyperthread the pipeline.
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

using Clock = std::chrono::steady_clock;
/// Spins until done() or `micros` have passed; whether done() held.
template <class Done> bool spinFor(int64_t micros, Done done) {
  const Clock::time_point until =
      Clock::now() + std::chrono::microseconds(micros);
  for (;;) {
    for (int k = 0; k < 64; ++k) {
      if (done())
        return true;
      cpuRelax();
    }
    if (Clock::now() >= until)
      return done();
  }
}

thread_local bool inTask = false;

/// A thread's claim word on a cache line of its own: the owner's claims
/// do not move the line between cores.
struct alignas(64) Range {
  std::atomic<uint64_t> word{0}; ///< (end << 32) | next
};

/// The tasks of the current job a thread has run, on a line of its own:
/// written by that thread alone, read by the caller when it waits.
struct alignas(64) Count {
  std::atomic<int64_t> done{0};
};

inline uint64_t rangeWord(uint32_t next, uint32_t end) {
  return uint64_t(end) << 32 | next;
}

struct Pool {
  // The job: its task, context and task count, read after a claim
  // (atomics all the same: a worker may be between two loads while the
  // caller writes them).
  std::atomic<PoolTask> task{nullptr};
  std::atomic<void *> ctx{nullptr};
  std::atomic<int64_t> count{0}; ///< its tasks
  std::vector<Range> ranges;     ///< one per thread, the caller's first
  std::vector<Count> counts;     ///< one per thread, as `ranges`
  // Workers sleep on `jobs` (bumped per job); the caller on `finished`
  // (bumped when a worker completes a job's last task while the caller
  // sleeps).
  std::atomic<uint32_t> jobs{0};
  std::atomic<int> sleepers{0};
  std::atomic<uint32_t> finished{0};
  std::atomic<bool> callerSleeps{false};
  std::atomic<int> wanted{0}; ///< workers that should run; others exit
  std::vector<std::thread> workers;
  int64_t workerSpinMicros = 0, callerSpinMicros = 0;
  /// OPD_POOL_SHARES=0: every task in the caller's word, which all
  /// threads claim from in order (decision 0240's one shared word), for
  /// measuring the shares against it in one build.
  bool shares = true;

  /// Claims the next task of range `r`; -1 when the range is used up.
  static int64_t claimFrom(Range &r) {
    uint64_t w = r.word.load(std::memory_order_acquire);
    for (;;) {
      const uint32_t next = uint32_t(w), end = uint32_t(w >> 32);
      if (next >= end)
        return -1;
      if (r.word.compare_exchange_weak(w, w + 1, std::memory_order_acq_rel,
                                       std::memory_order_acquire))
        return int64_t(next);
    }
  }

  /// Runs task i of the current job (claimed) and counts it done at once:
  /// a thread that loses its core after a task must not hold the caller
  /// up for it (counting a thread's tasks once at the end did, for as long
  /// as the thread was off its core).
  void runClaimed(int64_t i, int self) {
    PoolTask t = task.load(std::memory_order_relaxed);
    void *x = ctx.load(std::memory_order_relaxed);
    inTask = true;
    t(x, i);
    inTask = false;
    counts[std::size_t(self)].done.fetch_add(1, std::memory_order_seq_cst);
    // A sleeping caller is woken by whoever sees the counts complete: the
    // thread whose count came last in the seq_cst order sees every other,
    // and either it sees callerSleeps set or the caller, which sets it
    // before its last look at the counts, sees its count.
    if (self != 0 && callerSleeps.load(std::memory_order_seq_cst) &&
        allDone(count.load(std::memory_order_relaxed))) {
      finished.fetch_add(1, std::memory_order_seq_cst);
      futexWake(&finished);
    }
  }

  /// Whether the threads' counts add up to the job's `n` tasks.
  bool allDone(int64_t n) const {
    int64_t sum = 0;
    for (const Count &c : counts)
      sum += c.done.load(std::memory_order_seq_cst);
    return sum == n;
  }

  /// Claims and runs tasks of the current job until none is left: the
  /// thread's own range `self` first, then the others'.
  void work(int self) {
    const int threads = int(ranges.size());
    for (int64_t i; (i = claimFrom(ranges[std::size_t(self)])) >= 0;)
      runClaimed(i, self);
    for (int k = 1; k < threads; ++k) {
      Range &r = ranges[std::size_t((self + k) % threads)];
      for (int64_t i; (i = claimFrom(r)) >= 0;)
        runClaimed(i, self);
    }
  }

  /// `seen`: the job counter when the worker was made (read by the
  /// caller: a thread that starts late must still see every bump after
  /// it, the one that stops it included).
  void workerMain(int index, uint32_t seen) {
    for (;;) {
      if (!spinFor(workerSpinMicros, [&] {
            return jobs.load(std::memory_order_acquire) != seen;
          })) {
        sleepers.fetch_add(1, std::memory_order_seq_cst);
        while (jobs.load(std::memory_order_seq_cst) == seen)
          futexWait(&jobs, seen);
        sleepers.fetch_sub(1, std::memory_order_seq_cst);
      }
      seen = jobs.load(std::memory_order_acquire);
      if (index >= wanted.load(std::memory_order_acquire))
        return;
      work(index + 1);
    }
  }

  void resize(int nworkers) {
    if (nworkers == int(workers.size()) && !ranges.empty())
      return;
    // Stop them all (a job with no tasks wakes them), start anew.
    wanted.store(0, std::memory_order_release);
    jobs.fetch_add(1, std::memory_order_seq_cst);
    futexWake(&jobs);
    for (std::thread &w : workers)
      w.join();
    workers.clear();
    // No thread reads the words now: they are made anew, used up.
    ranges = std::vector<Range>(std::size_t(nworkers) + 1);
    counts = std::vector<Count>(std::size_t(nworkers) + 1);
    wanted.store(nworkers, std::memory_order_release);
    const uint32_t now = jobs.load(std::memory_order_acquire);
    for (int k = 0; k < nworkers; ++k)
      workers.emplace_back([this, k, now] { workerMain(k, now); });
  }

  void run(int64_t n, PoolTask t, void *x) {
    task.store(t, std::memory_order_relaxed);
    ctx.store(x, std::memory_order_relaxed);
    count.store(n, std::memory_order_relaxed);
    for (Count &c : counts)
      c.done.store(0, std::memory_order_relaxed);
    // Thread s's tasks: [s * n / T, (s + 1) * n / T) (T = 1 without
    // shares: all of them the caller's, every thread claiming them).
    const int64_t threads = int64_t(ranges.size());
    const int64_t parts = shares ? threads : 1;
    for (int64_t s = 0; s < threads; ++s)
      ranges[std::size_t(s)].word.store(
          s < parts ? rangeWord(uint32_t(s * n / parts),
                                uint32_t((s + 1) * n / parts))
                    : 0,
          std::memory_order_release);
    jobs.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers.load(std::memory_order_seq_cst) > 0)
      futexWake(&jobs);
    work(0);
    if (spinFor(callerSpinMicros, [&] { return allDone(n); }))
      return;
    callerSleeps.store(true, std::memory_order_seq_cst);
    for (;;) {
      const uint32_t f = finished.load(std::memory_order_seq_cst);
      if (allDone(n))
        break;
      futexWait(&finished, f);
    }
    callerSleeps.store(false, std::memory_order_relaxed);
  }
};

Pool &pool() {
  // Never destroyed (the header comment).
  static Pool *p = [] {
    Pool *q = new Pool;
    // OMP_WAIT_POLICY=passive (the user's, or core/Oversubscribe.cpp's
    // restart of an oversubscribed node): sleep at once, as OpenMP would.
    const char *policy = std::getenv("OMP_WAIT_POLICY");
    const bool passive = policy && !strcasecmp(policy, "passive");
    q->workerSpinMicros = envInteger(
        "OPD_SPIN_US", passive ? 0 : 50, 0, 1000000,
        "the microseconds an idle thread spins before it sleeps, 0 to 1000000");
    q->callerSpinMicros = q->workerSpinMicros;
    q->shares = envSwitch("OPD_POOL_SHARES", true);
    return q;
  }();
  return *p;
}
} // namespace

double parallelBytes() {
  static const double bytes = double(envInteger(
      "OPD_PARALLEL_BYTES", 256 * 1024, 0, INT64_MAX,
      "the bytes a loop moves per call from which it runs on several "
      "threads (0: always)"));
  return bytes;
}

void runTasks(int64_t n, bool parallel, PoolTask task, void *ctx) {
  const int threads = parallel && n > 1 && !inTask && !capturingFailures() &&
                              n < int64_t(INT32_MAX)
                          ? omp_get_max_threads()
                          : 1;
  if (threads <= 1) {
    for (int64_t k = 0; k < n; ++k)
      task(ctx, k);
    return;
  }
  Pool &p = pool();
  p.resize(threads - 1);
  p.run(n, task, ctx);
}
} // namespace opdc::rt
