// Dist.h - The runtime's distribution layer: one process, or many with MPI.
// SPDX-License-Identifier: Apache-2.0
//
// Everything that differs between a program running as one process and the
// same program running on many MPI ranks goes through these functions. The
// rest of the runtime (core/, io/, exec/) is compiled once and linked into
// both variants:
//   * opd_rt:     core/Serial.cpp implements them for one process (ranks()
//                 is 1, every block range and set is owned whole, exchanges
//                 and reductions do nothing);
//   * opd_rt_mpi: lib/mpi/*.cpp implement them over MPI (`opdc build --mpi`).
// Generated code is the same for both; see lib/README.md, "Many processes".
#ifndef OPDC_LIB_CORE_DIST_H
#define OPDC_LIB_CORE_DIST_H

#include "core/Objects.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

struct opd_loop;

namespace opdc::rt::dist {

/// Starts the communication layer (MPI_Init_thread); first thing of
/// opd_rt_init. Idempotent.
void init();
/// Ends it (MPI_Finalize); last thing of opd_rt_finalize.
void finalize();
/// This process's rank and the number of ranks (0 and 1 serially).
int rank();
int ranks();
/// This process's rank among the ranks of its node (0 serially).
int nodeRank();
/// Whether this rank prints (rank 0).
inline bool printer() { return rank() == 0; }
/// "rank R: " when there is more than one rank, else "" (error messages).
std::string rankPrefix();
/// Ends the whole job after an error was printed: exit(status) serially,
/// MPI_Abort on every rank otherwise (no rank is left waiting).
[[noreturn]] void abortJob(int status);
/// Ends every rank normally with `status` (--help).
[[noreturn]] void exitJob(int status);
/// Waits for every rank.
void barrier();
/// Rank 0's `bytes` at `data` to every rank (in pieces below 2 GiB).
void broadcast(void *data, int64_t bytes);

/// In-place reduction of `n` values of `type` (opd_scalar) with `op`
/// (OPD_SUM, OPD_MIN, OPD_MAX) over all ranks.
void allreduce(void *values, int type, int op, int n);
/// Element-wise max and sum over ranks of `n` doubles (profile).
void maxAndSum(const double *in, double *max, double *sum, int n);

/// Structured meshes: fills `block`'s owned range (ownLo/ownHi, edge flags)
/// from the global index range [base, base + size) of its first dat.
void decomposeBlock(opd_block *block, const int64_t *base,
                    const int64_t *size);

/// Structured meshes: the ranks that share `block`'s lines along dimension
/// `dim` (the same coordinates in the other dimensions) each contribute
/// `mine`; `all` receives every one's bytes (sizes may differ), in the
/// order of their parts along `dim`, and the return value is this rank's
/// position in that order. Collective over those ranks. One process, or a
/// block not split along `dim`: `all` is just `mine`.
int allgatherAlong(const opd_block *block, int dim,
                   const std::vector<char> &mine,
                   std::vector<std::vector<char>> &all);

/// Point-to-point along the same ranks as allgatherAlong: sends `toLower`
/// to the rank `distance` positions below this one along `dim` and
/// `toUpper` to the one `distance` above, and receives what they send this
/// way into `fromLower` and `fromUpper` (sized by the caller, which knows
/// what comes); a partner beyond the first or last rank is skipped.
void shiftAlong(const opd_block *block, int dim, int distance,
                const std::vector<char> &toLower,
                const std::vector<char> &toUpper,
                std::vector<char> &fromLower, std::vector<char> &fromUpper);

/// Unstructured meshes: called when a set is created.
void setCreated(opd_set *set);
/// Partitions every set over the ranks, once, at the first set loop that
/// does not fill a map, or before main's first statement
/// (opd_rt_mesh_ready): owners, local numbering with halos, maps and dats
/// in local form (lib/mpi/Partition.cpp, Halo.cpp). Marks the sets
/// partitioned. Nothing on one process. `when` names the moment in the
/// profile's note.
void partitionSets(const char *when = "at the first set loop");

/// How the sets were partitioned ("" on one process or before any set
/// loop), for the profile.
std::string partitionDescription();

/// Around a loop's chunks (opd_loop_begin, opd_loop_wait_halos and
/// opd_loop_end, which opd_loop_run calls too): halo exchanges of the dats
/// the loop reads beyond its own elements when they are stale, and the
/// dirty marks of the dats it writes. startExchanges returns true when
/// messages are still in flight: the loop then runs its core, calls
/// finishExchanges, and runs the rest. (Block dats stay in flight only when the block is split along
/// its outermost dimension alone; otherwise they complete at once.)
bool startExchanges(opd_loop *loop);
/// Lets the messages in flight move while the core runs (MPI_Testall):
/// Open MPI sends a message over a few KiB in a rendezvous that advances
/// only inside MPI calls, so without it a rank's messages moved only once
/// both ranks had reached finishExchanges, and each waited there for the
/// other (decision 0475). Returns true when every message of the set and
/// block exchanges in flight has arrived (nothing left to poll for); true at
/// once on one process. Called by the thread that began the loop only
/// (MPI_THREAD_FUNNELED).
bool progressExchanges();
void finishExchanges(opd_loop *loop);
void afterLoop(opd_loop *loop);
/// Communication-avoiding chains (exec/CommAvoid.cpp): one dat of a
/// grouped exchange and how deep (blocks: points per dimension; sets:
/// depth[0] layers).
struct GroupEntry {
  opd_dat *dat = nullptr;
  int64_t depth[3] = {0, 0, 0};
};
/// Exchanges the entries' halos that are not valid that deep, all the dats
/// in one message per neighbour (blocks: per split dimension, dimension by
/// dimension with corners); counts into `entry`. Collective.
void groupExchange(const std::vector<GroupEntry> &group, opd_loop *entry);
/// This rank's side of the cost model for a group: neighbours, owned
/// points, halo points per unit of depth (over all neighbours), bytes per
/// point of the group's dats, the bytes the group would send now (over all
/// neighbours), and whether plain loops overlap messages with their core.
struct ChainGeometry {
  int neighbours = 0;
  /// Rounds of messages an exchange takes (the split dimensions of a
  /// block, one round each; 1 for sets): the latencies a loop waits.
  int rounds = 1;
  double ownedPoints = 0, haloPointsPerDepth = 0, bytesPerPoint = 0;
  double groupBytes = 0;
  bool overlaps = false;
  /// False when a halo of the group would reach past the points a rank
  /// owns or stores (a part too small for the depth): the chain then runs
  /// plain.
  bool feasible = true;
};
ChainGeometry chainGeometry(const std::vector<GroupEntry> &group);
/// Completes a grouped halo exchange still in flight (opd_halo_group,
/// lib/mpi/Exchange.cpp): called before anything other than the next set
/// loop may touch dat storage (fill, copy, swap, file I/O, solvers, the
/// adjoint tape, block loops). Nothing on one process.
void settleExchanges();

/// HDF5 output of block dats: the part of the interior this rank owns,
/// [lo, hi) per dimension relative to the interior's start (zeros and ones
/// beyond the dat's dimensions), packed dimension 0 innermost into `box`;
/// false when it owns none of it.
bool ownedBox(const opd_dat *dat, int64_t *lo, int64_t *hi,
              std::vector<char> &box);
/// HDF5 input of block dats: the planes [first, first + count) of the
/// interior's outermost dimension (0 at the interior's start) that this
/// rank's part spans (count 0 for a rank owning none of the interior), and
/// those planes (global layout, full inner extents) into the rank's part.
void imagePlanes(const opd_dat *dat, int64_t &first, int64_t &count);
void scatterImagePlanes(opd_dat *dat, const char *planes, int64_t first);

/// Unstructured meshes in files (io/HDF5IO.cpp), read in parallel: each
/// rank reads the rows [first, first + count) of every dataset of a set of
/// n elements (its contiguous slice; on one process everything).
void fileRows(int64_t n, int64_t &first, int64_t &count);
/// All-to-all of index lists: send[q] goes to rank q; returns what the
/// ranks sent here, in rank order, rank q's from from[q] to from[q + 1]
/// (one process: send[0], from = {0, its size}). Collective.
std::vector<int64_t> exchangeIds(const std::vector<std::vector<int64_t>> &send,
                                 std::vector<int> &from);
/// A set just read from a file: until the partition each rank stores only
/// its slice (set->sliced; nothing on one process).
void sliceSet(opd_set *set);
/// Moves the rows this rank read (fileRows of set->globalSize, `rowBytes`
/// each) to where `set` stores its elements: the slice itself, the whole
/// set, or the partition's local order (owned and halo). Collective.
void placeRows(const opd_set *set, const void *rows, std::size_t rowBytes,
               void *dest);
/// The rows of a set dat this rank writes (fileRows), in the original
/// numbering, from wherever they are stored. Collective.
void rowsToWrite(const opd_dat *dat, std::vector<char> &rows);
/// After a phase in which each rank captured its own error (CaptureFailures;
/// "" if none): when any rank failed, the lowest failing rank prints its
/// message and every rank ends with status 1, no rank left waiting;
/// otherwise returns. Collective.
void agreeOnFailure(const std::string &error);
/// Runs `turn` on one rank at a time, rank 0 first. Collective.
void inTurn(const std::function<void()> &turn);
/// Before the partition, a loop that fills a map runs over whole sets:
/// sliced sets are gathered on every rank (as before parallel input).
void gatherSets();
/// Seconds spent reading meshes (the profile's partition lines).
void addReadSeconds(double seconds);

} // namespace opdc::rt::dist
#endif
