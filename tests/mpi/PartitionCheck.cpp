// PartitionCheck.cpp - The partition and halos of a mesh over MPI ranks,
// checked against the runtime's internal state (tests/mpi, mpi-partition).
// SPDX-License-Identifier: Apache-2.0
//
// usage: mpirun -np N opd_rt_partition_check MESH.h5 [--partition=block]
// Reads Airfoil's sets and maps, stores each element's global index in a
// dat, partitions, then checks on every rank:
//   * every element of every set is owned by exactly one rank;
//   * the local maps, translated back through the local-to-global tables,
//     equal the file's maps for every element a loop may run (owned and
//     exec halo);
//   * after the halo values are overwritten and the dat is exchanged, every
//     stored element holds its own global index again (the exchange lists
//     round-trip).
// Prints "partition ok" on rank 0 and exits 0, or names the first failure.
#include "core/Dist.h"
#include "core/Runtime.h"
#include "exec/Loop.h"
#include "mpi/Mpi.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace opdc::rt;

namespace {
int failures = 0;
void check(bool ok, const std::string &what) {
  if (!ok && failures++ < 10)
    std::fprintf(stderr, "rank %d: %s\n", dist::rank(), what.c_str());
}
// Global index of local element l (one rank: the identity).
int64_t gid(const opd_set *s, int64_t l) {
  return s->globalIds.empty() ? l : s->globalIds[std::size_t(l)];
}
} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MESH.h5 [runtime options]\n", argv[0]);
    return 2;
  }
  const char *mesh = argv[1];
  opd_rt_init(argc - 1, argv + 1, "partition_check", nullptr, 0);
  const char *setNames[] = {"nodes", "edges", "bedges", "cells"};
  std::map<std::string, opd_set *> sets;
  for (const char *n : setNames)
    sets[n] = opd_set_from_file(n, mesh);
  struct MapDecl {
    const char *name, *from, *to;
    int arity;
  } mapDecls[] = {{"pedge", "edges", "nodes", 2},
                  {"pecell", "edges", "cells", 2},
                  {"pbedge", "bedges", "nodes", 2},
                  {"pbecell", "bedges", "cells", 1},
                  {"pcell", "cells", "nodes", 4}};
  std::vector<opd_map *> maps;
  std::vector<std::vector<int32_t>> globalMaps;
  for (const MapDecl &m : mapDecls) {
    opd_map *map = opd_map_from_file(m.name, sets[m.from], sets[m.to],
                                     m.arity, mesh);
    maps.push_back(map);
    globalMaps.emplace_back(map->data,
                            map->data + map->from->globalSize * m.arity);
  }
  std::map<std::string, opd_dat *> ids;
  for (const char *n : setNames) {
    opd_dat *d = opd_dat_create((std::string("gid_") + n).c_str(), sets[n],
                                OPD_I64, 1);
    auto *v = static_cast<int64_t *>(opd_dat_data(d));
    for (int64_t i = 0; i < sets[n]->globalSize; ++i)
      v[i] = i;
    ids[n] = d;
  }
  dist::partitionSets();

  for (const char *n : setNames) {
    opd_set *s = sets[n];
    // Owned exactly once: counts per global element summed over ranks.
    std::vector<int32_t> count(std::size_t(s->globalSize), 0);
    for (int64_t l = 0; l < s->owned; ++l)
      ++count[std::size_t(gid(s, l))];
    MPI_Allreduce(MPI_IN_PLACE, count.data(), int(count.size()), MPI_INT32_T,
                  MPI_SUM, MPI_COMM_WORLD);
    for (int64_t g = 0; g < s->globalSize; ++g)
      check(count[std::size_t(g)] == 1,
            std::string("set ") + n + ": element " + std::to_string(g) +
                " owned by " + std::to_string(count[std::size_t(g)]) +
                " ranks");
    check(s->core <= s->owned && s->owned <= s->execSize &&
              s->execSize <= s->size,
          std::string("set ") + n + ": bad group sizes");
  }
  for (std::size_t k = 0; k < maps.size(); ++k) {
    opd_map *m = maps[k];
    for (int64_t l = 0; l < m->from->execSize; ++l) {
      const int64_t g = gid(m->from, l);
      for (int j = 0; j < m->arity; ++j) {
        const int32_t t = m->data[l * m->arity + j];
        check(t >= 0 && t < m->to->size &&
                  gid(m->to, t) ==
                      globalMaps[k][std::size_t(g * m->arity + j)],
              "map " + m->name + ": element " + std::to_string(g) +
                  " entry " + std::to_string(j) + " is wrong");
      }
    }
  }
  opd_loop dummy;
  for (const char *n : setNames) {
    opd_dat *d = ids[n];
    auto *v = static_cast<int64_t *>(d->data);
    const opd_set *s = d->set;
    for (int64_t l = 0; l < s->size; ++l)
      check(v[l] == gid(s, l),
            std::string("dat gid_") + n + ": element not copied");
    for (int64_t l = s->owned; l < s->size; ++l)
      v[l] = -1;
    d->haloValid = 0;
    dist::exchangeSetDat(d, &dummy);
    for (int64_t l = 0; l < s->size; ++l)
      check(v[l] == gid(s, l),
            std::string("set ") + n + ": halo element " + std::to_string(l) +
                " holds " + std::to_string(v[l]) + " after the exchange, not " +
                std::to_string(gid(s, l)));
  }
  int total = failures;
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (dist::rank() == 0) {
    if (total == 0)
      std::printf("partition ok (%s; %lld messages in the check)\n",
                  dist::partitionDescription().c_str(),
                  (long long)dummy.messages);
    else
      std::printf("partition FAILED: %d problems\n", total);
  }
  opd_rt_finalize();
  return total == 0 ? 0 : 1;
}
