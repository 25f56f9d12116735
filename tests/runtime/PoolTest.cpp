// PoolTest.cpp - runTasks (lib/core/Pool.cpp): every task runs exactly
// once, on any thread count, nested and back to back; the caller runs the
// tasks a busy worker does not reach; a caller asleep for a worker's last
// task is woken; each share of the tasks runs in order.
// SPDX-License-Identifier: Apache-2.0
#include "core/Pool.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <omp.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

using namespace opdc::rt;

namespace {

class PoolTest : public ::testing::TestWithParam<int> {
protected:
  void SetUp() override { omp_set_num_threads(GetParam()); }
  void TearDown() override { omp_set_num_threads(2); }
};

TEST_P(PoolTest, EveryTaskOnce) {
  for (int64_t n : {0, 1, 2, 3, 17, 1000, 100000}) {
    std::vector<std::atomic<int>> hits(std::size_t(n > 0 ? n : 1));
    for (auto &h : hits)
      h = 0;
    runTasks(n, true, [&](int64_t k) { ++hits[std::size_t(k)]; });
    for (int64_t k = 0; k < n; ++k)
      ASSERT_EQ(hits[std::size_t(k)].load(), 1) << "task " << k << " of " << n;
  }
}

TEST_P(PoolTest, BackToBackJobs) {
  // Many short jobs: a worker late for one must never run a task of the
  // next one twice or skip one (the claim word, Pool.cpp).
  std::vector<std::atomic<int64_t>> sums(7);
  for (auto &s : sums)
    s = 0;
  for (int job = 0; job < 20000; ++job) {
    const int64_t n = 1 + job % 7;
    runTasks(n, true, [&](int64_t k) { sums[std::size_t(k)] += job; });
  }
  for (int64_t k = 0; k < 7; ++k) {
    int64_t want = 0;
    for (int job = 0; job < 20000; ++job)
      if (k < 1 + job % 7)
        want += job;
    EXPECT_EQ(sums[std::size_t(k)].load(), want) << "task " << k;
  }
}

TEST_P(PoolTest, NestedCallsRunInline) {
  std::atomic<int> inner{0};
  runTasks(8, true, [&](int64_t) {
    const std::thread::id me = std::this_thread::get_id();
    runTasks(4, true, [&](int64_t) {
      EXPECT_EQ(std::this_thread::get_id(), me);
      ++inner;
    });
  });
  EXPECT_EQ(inner.load(), 32);
}

TEST_P(PoolTest, SerialWhenNotParallel) {
  const std::thread::id me = std::this_thread::get_id();
  int64_t next = 0;
  runTasks(100, false, [&](int64_t k) {
    EXPECT_EQ(std::this_thread::get_id(), me);
    EXPECT_EQ(k, next++); // in order
  });
  EXPECT_EQ(next, 100);
}

TEST_P(PoolTest, CallerRunsWhatASlowWorkerDoesNotReach) {
  // One task holds its thread for a while: the others all run meanwhile,
  // on the other threads (the caller among them), and the call returns
  // only after the slow one.
  std::atomic<int> done{0};
  runTasks(64, true, [&](int64_t k) {
    if (k == 0)
      opdc::rt::test::spinFor(20);
    ++done;
  });
  EXPECT_EQ(done.load(), 64);
}

TEST_P(PoolTest, WorkersRunWhatTheBusyCallerDoesNotReach) {
  // The last task (the last thread's share) is slow: every other task
  // still runs, taken from its owner's share.
  for (int64_t n : {2, 5, 64}) {
    std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
    for (auto &h : hits)
      h = 0;
    runTasks(n, true, [&](int64_t k) {
      if (k == n - 1)
        opdc::rt::test::spinFor(10);
      ++hits[std::size_t(k)];
    });
    for (int64_t k = 0; k < n; ++k)
      ASSERT_EQ(hits[std::size_t(k)].load(), 1) << "task " << k << " of " << n;
  }
}

TEST_P(PoolTest, SleepingCallerIsWokenEveryJob) {
  // Each job's last task outlasts the caller's spin, so the caller goes to
  // sleep and the thread that runs that task must see the threads' counts
  // complete and wake it: a missed wake-up would hang here. Jobs of
  // several sizes, so that the counts of one job never pass for the
  // next's.
  std::atomic<int64_t> ran{0};
  int64_t want = 0;
  for (int job = 0; job < 200; ++job) {
    const int64_t n = 2 + job % 5;
    want += n;
    runTasks(n, true, [&](int64_t k) {
      if (k == n - 1)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      ++ran;
    });
    ASSERT_EQ(ran.load(), want) << "job " << job;
  }
}

TEST_P(PoolTest, EachShareRunsInOrder) {
  // Thread s owns tasks [s n / T, (s + 1) n / T) and every thread claims
  // a share's tasks in order (the same tasks call after call for the
  // owner, as a static schedule): the tasks of one share that one thread
  // runs are increasing.
  const int threads = GetParam();
  const int64_t n = 1000;
  for (int job = 0; job < 50; ++job) {
    std::mutex m;
    std::map<std::thread::id, std::vector<int64_t>> ran;
    runTasks(n, true, [&](int64_t k) {
      std::lock_guard<std::mutex> lock(m);
      ran[std::this_thread::get_id()].push_back(k);
    });
    for (const auto &[thread, tasks] : ran)
      for (std::size_t i = 1; i < tasks.size(); ++i) {
        if (tasks[i - 1] * threads / n == tasks[i] * threads / n) {
          ASSERT_LT(tasks[i - 1], tasks[i]) << "job " << job;
        }
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, PoolTest, ::testing::Values(1, 2, 4));

} // namespace
