// Mpi.h - Shared declarations of the MPI distribution layer (lib/mpi/).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_LIB_MPI_MPI_H
#define OPDC_LIB_MPI_MPI_H

#include "core/Dist.h"
#include "core/Objects.h"

#include <mpi.h>

#include <map>
#include <string>
#include <vector>

namespace opdc::rt::dist {
/// A block's Cartesian grid of ranks (mpi/Structured.cpp, decomposeBlock).
struct BlockComm {
  MPI_Comm cart = MPI_COMM_NULL;
  int pdims[3] = {1, 1, 1};
  int coords[3] = {0, 0, 0};
  int lower[3] = {MPI_PROC_NULL, MPI_PROC_NULL, MPI_PROC_NULL};
  int upper[3] = {MPI_PROC_NULL, MPI_PROC_NULL, MPI_PROC_NULL};
  /// The ranks along each dimension (MPI_Cart_sub), made on first use.
  MPI_Comm line[3] = {MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL};
  /// The global indices where one rank's points end and the next one's
  /// begin, along each dimension (the same on every rank).
  std::vector<int64_t> cuts[3];
};
/// Every decomposed block's grid.
std::map<const opd_block *, BlockComm> &comms();

/// Whether a chain's grouped block exchange is in flight
/// (mpi/StructuredGroup.cpp); completeGroup completes it.
bool blockGroupFlying();
void completeGroup();
/// The MPI datatype of an opd_scalar.
MPI_Datatype mpiType(int type);
/// Frees the Cartesian communicators of the blocks (before MPI_Finalize).
void releaseStructured();
/// Set loops over partitioned sets (mpi/Exchange.cpp): posts the
/// exchanges the loop needs (true if any), then completes them.
bool startSetExchanges(opd_loop *loop);
void finishSetExchanges(opd_loop *loop);
bool progressSetExchanges();
/// Exchange lists of a partitioned set, per neighbouring rank: local
/// indices of owned elements to send, and of halo elements to receive into,
/// both in the order agreed with that rank (mpi/Halo.cpp).
/// sendCut[h] / recvCut[h], h = 0..2K+1 (K the set's exec layers): how
/// many of the entries lie before the receiving rank's half-step end h
/// (SetHalo::halfEnd), so that an exchange h half steps deep sends the
/// first sendCut[h] entries; entry 2K+1 is every entry (the non-exec halo
/// too).
struct Neighbour {
  int rank = 0;
  std::vector<int32_t> send, recv;
  std::vector<int32_t> sendCut, recvCut;
};
/// halfEnd[h], h = 0..2K+1: the ends of the half steps of the set's local
/// order (mpi/Halo.cpp). halfEnd[2l] = execEnd[l] ends exec layer l;
/// halfEnd[2l+1] ends the map targets of layers 0..l that lie in layer
/// l + 1, which Halo.cpp puts first in that layer (halfEnd[1] =
/// halfEnd[2]; halfEnd[2K+1]: all, the non-exec halo being the targets of
/// layers 0..K). Half step 3 is OP2's one-layer halo (exec layer 1 and
/// the targets of layers 0..1) whatever K.
struct SetHalo {
  std::vector<Neighbour> neighbours;
  std::vector<int64_t> halfEnd;
};
const SetHalo &setHalo(const opd_set *set);
/// Halo exchange of one set dat, start to end (mpi/Exchange.cpp); counts
/// into `loop`.
void exchangeSetDat(opd_dat *dat, opd_loop *loop);
/// Halo layers of unstructured sets (opd_rt_halo_depth, exec/CommAvoid.cpp;
/// 1 by default), read when the sets are partitioned.
int64_t setHaloLayers();
/// Dirty bits of the set dats a set loop wrote (mpi/Exchange.cpp).
void afterSetLoop(opd_loop *loop);
/// opd_halo_group for set dats: brings each dat's halo `depth[i]` layers
/// deep up to date (skipping dats already valid that deep), all of them
/// packed into one message per neighbouring rank, left in flight until
/// completeSetGroup; counts into `entry`.
void groupSetExchange(opd_loop *entry, int n, opd_dat *const *dats,
                      const int64_t *depth);
/// The grouped exchange still in flight (posted by groupSetExchange,
/// completed by the next set loop's wait for halos), and its completion.
bool setGroupInFlight();
void completeSetGroup();
/// The cost model's geometry of a group's set dats (added to `geo`, which
/// may hold a block part): neighbours, owned elements, exec-halo elements
/// per layer, bytes per element and the bytes the group would send.
void setChainGeometry(int n, opd_dat *const *dats, const int64_t *depth,
                      ChainGeometry &geo);
void releaseUnstructured();

/// Communication-avoiding chains (mpi/Group.cpp dispatches): the block
/// dats' grouped exchange and cost-model geometry (mpi/Structured.cpp).
void groupBlockExchange(const std::vector<GroupEntry> &group, opd_loop *entry);
void blockChainGeometry(const std::vector<GroupEntry> &group,
                        ChainGeometry &geo);

/// Slices (mpi/Slices.cpp): rank r's slice of n elements starts at
/// sliceLo(n, r).
int64_t sliceLo(int64_t n, int r);
/// The rank whose slice holds element g of a set of n elements, for many g
/// of one set: the slices' starts are computed once, each lookup is an
/// estimate g * p / n corrected against them (the partition asks this for
/// every map entry several times over).
class SliceOf {
public:
  explicit SliceOf(int64_t n);
  int operator()(int64_t g) const {
    int r = int(double(g) * scale_);
    r = r < 0 ? 0 : r >= p_ ? p_ - 1 : r;
    while (r + 1 < p_ && starts_[std::size_t(r) + 1] <= g)
      ++r;
    while (r > 0 && starts_[std::size_t(r)] > g)
      --r;
    return r;
  }

private:
  int p_;
  double scale_;
  std::vector<int64_t> starts_;
};
/// Rounds in which every rank handles its `count` items (collective): at
/// most 4, of `batch` items each, at least `least` (memory in rounds of a
/// quarter of the largest request, few collectives).
long long roundsOf(int64_t count, int64_t least, int64_t &batch);
/// (exchangeIds, the all-to-all of index lists: core/Dist.h.)
/// Rows `ids` (global indices of a set of n elements) of an array stored as
/// slices (`slice`: this rank's rows, `rowBytes` each) into `out`, in the
/// order of ids. Collective.
void fetchRows(int64_t n, const void *slice, std::size_t rowBytes,
               const std::vector<int64_t> &ids, void *out);
void fetchRows(int64_t n, const void *slice, std::size_t rowBytes,
               const int32_t *ids, std::size_t count, void *out);
/// The inverse: `rows` (one per id) into the slices that hold them.
void storeRows(int64_t n, const void *rows, std::size_t rowBytes,
               const std::vector<int64_t> &ids, void *slice);
/// Frees the buffers fetchRows and storeRows keep between rounds.
void releaseSliceBuffers();
/// Seconds spent reading meshes; the peak and the present resident memory
/// of this rank (present: -1 where the system does not say).
double meshReadSeconds();
int64_t peakResidentBytes();
int64_t residentBytes();

/// The owning rank of each element of each set's slice (mpi/Partition.cpp):
/// owners[s][i] owns element sliceLo(s->globalSize, rank()) + i.
using Owners = std::map<const opd_set *, std::vector<int32_t>>;
/// Partitions every set (sets, maps and dats in slices); `note` says how.
Owners computeOwners(std::string &note);
/// A description of the partition, for the profile ("" if none).
const std::string &partitionNote();
/// Exec layers 1..K (K = layers >= 2) of every set on this rank, as sorted
/// global ids per layer (mpi/HaloLayers.cpp). Collective.
std::map<const opd_set *, std::vector<std::vector<int64_t>>>
execLayers(const Owners &owners, int64_t layers);
/// `v` sorted, without repeats.
std::vector<int64_t> sortedUnique(std::vector<int64_t> v);

} // namespace opdc::rt::dist
#endif
