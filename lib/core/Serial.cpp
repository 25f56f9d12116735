// Serial.cpp - The distribution layer (core/Dist.h) of a single process.
// SPDX-License-Identifier: Apache-2.0
//
// Linked into opd_rt only (opd_rt_mpi has lib/mpi/ instead): one rank owns
// every set element and every block point, there is nothing to exchange,
// and reductions are already global.
#include "core/Dist.h"

#include "core/Renumber.h"
#include "core/Runtime.h"

#include <cstdlib>
#include <cstring>

namespace opdc::rt::dist {

void init() {}
void finalize() {}
int rank() { return 0; }
int nodeRank() { return 0; }
int ranks() { return 1; }
std::string rankPrefix() { return ""; }
void abortJob(int status) { std::exit(status); }
void exitJob(int status) { std::exit(status); }
void barrier() {}
void broadcast(void *, int64_t) {}

void allreduce(void *, int, int, int) {}
void maxAndSum(const double *in, double *max, double *sum, int n) {
  for (int i = 0; i < n; ++i)
    max[i] = sum[i] = in[i];
}

void decomposeBlock(opd_block *block, const int64_t *, const int64_t *) {
  block->decomposed = true;
}
int allgatherAlong(const opd_block *, int, const std::vector<char> &mine,
                   std::vector<std::vector<char>> &all) {
  all.assign(1, mine);
  return 0;
}
void shiftAlong(const opd_block *, int, int, const std::vector<char> &,
                const std::vector<char> &, std::vector<char> &,
                std::vector<char> &) {}
void setCreated(opd_set *) {}
void fileRows(int64_t n, int64_t &first, int64_t &count) {
  first = 0;
  count = n;
}
void sliceSet(opd_set *) {}
std::vector<int64_t> exchangeIds(const std::vector<std::vector<int64_t>> &send,
                                 std::vector<int> &from) {
  from = {0, int(send.empty() ? 0 : send[0].size())};
  return send.empty() ? std::vector<int64_t>() : send[0];
}
// Files hold rows in the original numbering; a renumbered set's element l
// is row globalIds[l] (core/Renumber.cpp).
void placeRows(const opd_set *set, const void *rows, std::size_t rowBytes,
               void *dest) {
  const std::vector<int64_t> &ids = set->globalIds;
  if (!ids.empty()) {
    for (std::size_t l = 0; l < ids.size(); ++l)
      std::memcpy(static_cast<char *>(dest) + l * rowBytes,
                  static_cast<const char *>(rows) + std::size_t(ids[l]) * rowBytes,
                  rowBytes);
    return;
  }
  if (set->size > 0 && rowBytes > 0)
    std::memcpy(dest, rows, std::size_t(set->size) * rowBytes);
}
void rowsToWrite(const opd_dat *dat, std::vector<char> &rows) {
  const std::size_t eb = std::size_t(dat->elementBytes());
  rows.resize(std::size_t(dat->set->size) * eb);
  const std::vector<int64_t> &ids = dat->set->globalIds;
  if (!ids.empty()) {
    for (std::size_t l = 0; l < ids.size(); ++l)
      std::memcpy(rows.data() + std::size_t(ids[l]) * eb,
                  static_cast<const char *>(dat->data) + l * eb, eb);
    return;
  }
  if (!rows.empty())
    std::memcpy(rows.data(), dat->data, rows.size());
}
void agreeOnFailure(const std::string &error) {
  if (!error.empty())
    fail(error);
}
void inTurn(const std::function<void()> &turn) { turn(); }
void gatherSets() {}
void addReadSeconds(double) {}
// One process: no partition, but the locality order (--renumber=).
void partitionSets(const char *) { renumberSets(); }
std::string partitionDescription() { return ""; }

bool startExchanges(opd_loop *) { return false; }
bool progressExchanges() { return true; }
void finishExchanges(opd_loop *) {}
void afterLoop(opd_loop *) {}
void groupExchange(const std::vector<GroupEntry> &, opd_loop *) {}
ChainGeometry chainGeometry(const std::vector<GroupEntry> &) { return {}; }
void settleExchanges() {}

namespace {
void interiorBox(const opd_dat *dat, int64_t *lo, int64_t *hi) {
  for (int k = 0; k < dat->ndims; ++k) {
    lo[k] = dat->base[k];
    hi[k] = dat->base[k] + dat->size[k];
  }
}
} // namespace

bool ownedBox(const opd_dat *dat, int64_t *lo, int64_t *hi,
              std::vector<char> &box) {
  int64_t glo[3] = {0, 0, 0}, ghi[3] = {1, 1, 1};
  interiorBox(dat, glo, ghi);
  for (int k = 0; k < 3; ++k) {
    lo[k] = 0;
    hi[k] = k < dat->ndims ? dat->size[k] : 1;
  }
  box.resize(std::size_t(dat->interiorPoints() * dat->elementBytes()));
  copyBox(const_cast<opd_dat *>(dat), glo, ghi, box.data(), false);
  return dat->interiorPoints() > 0;
}

void imagePlanes(const opd_dat *dat, int64_t &first, int64_t &count) {
  first = 0;
  count = dat->size[dat->ndims - 1];
}

void scatterImagePlanes(opd_dat *dat, const char *planes, int64_t) {
  int64_t lo[3], hi[3];
  interiorBox(dat, lo, hi);
  copyBox(dat, lo, hi, const_cast<char *>(planes), true);
}

} // namespace opdc::rt::dist
