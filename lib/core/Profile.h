// Profile.h - The per-loop time and bandwidth table (--profile).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_LIB_CORE_PROFILE_H
#define OPDC_LIB_CORE_PROFILE_H

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace opdc::rt {

/// Totals of every loop site with one name.
struct ProfileRow {
  std::string name;
  int64_t calls = 0;
  double seconds = 0;
  double bytes = 0; ///< bytes moved, by the rule in exec/Loop.h
  // Distributed memory (summed over ranks, times: max over ranks).
  double secondsAvg = 0;      ///< average over ranks
  int64_t messages = 0;       ///< halo exchange messages sent
  double exchangeBytes = 0;   ///< bytes those messages carried
  double exchangeSeconds = 0; ///< time in exchanges (part of `seconds`)
  /// Time outside halo exchanges: the max over ranks of each rank's
  /// `seconds - exchangeSeconds` (not the difference of the two maxima:
  /// the rank that waits longest in an exchange is rarely the slowest).
  double kernelSeconds = 0;
  /// Loops with indirect writes: the schedule that ran (exec/Plan.h), e.g.
  /// "colour, 4 colours"; "" for other loops.
  std::string plan = {};
  /// Skewed sweeps (rank 0's): the seconds the loop's body calls took in
  /// them, summed over the threads, and the sweeps it ran in.
  double sweepSeconds = 0;
  int64_t sweepCalls = 0;
};

/// The rows of all loops run so far, one per loop name, in descending time
/// (ties: by name).
std::vector<ProfileRow> collectProfile();

/// The table: a header, one line per row (name, calls, total seconds,
/// average milliseconds, GB/s), then the total, in fixed columns. With more
/// than one rank, total seconds are the max over ranks, and the columns
/// "avg s" (average over ranks), "msgs", "MB sent" and "exch s" (time in
/// halo exchanges, max over ranks) and "kern GB/s" (the bytes over the
/// time outside halo exchanges, `kernelSeconds`: what OPS's profile calls
/// a kernel's bandwidth, its MPI time apart) follow. After the total, one line
/// "plan: NAME: DESCRIPTION" per row with a plan (on several ranks, rank
/// 0's).
std::string formatProfile(const std::vector<ProfileRow> &rows, int threads,
                          int ranks = 1);

/// Prints formatProfile(collectProfile(), threads) to `out`, then the
/// partition, the chains' lines and the adjoint's summary (exec/Report.cpp:
/// they read exec/'s state).
void printProfile(std::FILE *out);

/// printf-style append to \p out (lines of the profile and its summaries).
void appendf(std::string &out, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
} // namespace opdc::rt
#endif
