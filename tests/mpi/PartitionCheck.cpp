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
//     round-trip);
//   * loops run phase by phase (opd_loop_begin, segments or plan parts,
//     opd_loop_wait_halos, opd_loop_end; what a GPU backend calls) give
//     bitwise the results, reduction partials and halo messages of
//     opd_loop_run: a coloured increment loop with a reduction (core, rest
//     and exec halo), a set loop reading through a map, a 2D stencil loop;
//   * opd_dat_copy's destination is exactly as dirty as its source.
// Prints "partition ok" on rank 0 and exits 0, or names the first failure.
#include "LoopArgs.h"
#include "core/Dist.h"
#include "core/Runtime.h"
#include "exec/Loop.h"
#include "mpi/Mpi.h"

#include <algorithm>
#include <cmath>
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

// Runs a prepared loop through the phases, serially, blocks of a colour in
// reverse order (a GPU runs them in any order); the exec halo's partials
// (`slotBytes` per chunk at `partials`) are restored as opd_loop_run does.
// Returns opd_loop_begin's answer.
int runByHand(opd_loop *l, opd_body body, void *ctx, char *partials,
              std::size_t slotBytes) {
  const int flying = opd_loop_begin(l);
  auto segments = [&](int beforeHalos) {
    for (int32_t k = 0; k < opd_loop_segment_count(l); ++k) {
      opd_loop_segment s;
      opd_loop_segment_get(l, k, &s);
      if (s.before_halos != beforeHalos)
        continue;
      for (int64_t b = s.begin, c = s.chunk0; b < s.end;
           b += s.chunk_size, ++c)
        body(ctx, b, std::min(b + s.chunk_size, s.end), c);
    }
  };
  auto parts = [&](int beforeHalos) {
    for (int32_t q = 0; q < opd_loop_part_count(l); ++q) {
      opd_loop_part p;
      opd_loop_part_get(l, q, &p);
      if (p.before_halos != beforeHalos)
        continue;
      std::vector<char> kept;
      if (!p.partials_count && partials)
        kept.assign(partials + std::size_t(p.chunk0) * slotBytes,
                    partials + std::size_t(p.chunk0 + p.nblocks) * slotBytes);
      for (int32_t c = 0; c < p.ncolours; ++c)
        for (int64_t k = p.colour_offsets[c + 1] - 1;
             k >= p.colour_offsets[c]; --k) {
          const int64_t begin = p.first + p.blocks[k] * p.block_size;
          body(ctx, begin, std::min(begin + p.block_size, p.first + p.count),
               p.chunk0 + p.blocks[k]);
        }
      if (!kept.empty())
        std::memcpy(partials + std::size_t(p.chunk0) * slotBytes, kept.data(),
                    kept.size());
    }
  };
  segments(1);
  parts(1);
  opd_loop_wait_halos(l);
  segments(0);
  parts(0);
  opd_loop_end(l);
  return flying;
}

// A value that differs per global element and per round, so a halo left
// stale by a missing exchange shows.
double valueOf(int64_t g, int round) {
  return std::sin(0.1 * double(g) + double(round)) * 1e3 + double(g);
}

// Set dat bodies; global ids through opd_set_global_ids.
struct SetCtx {
  const int64_t *gids; ///< of the loop's set (nullptr: identity)
  const int32_t *map;
  int arity;
  const double *in;
  double *out;
  double *partials;
  int round;
};
int64_t globalOf(const int64_t *gids, int64_t l) { return gids ? gids[l] : l; }

// out[l] = valueOf(global l, round): dirties `out`.
void writeBody(void *ctx, int64_t begin, int64_t end, int64_t) {
  auto *c = static_cast<SetCtx *>(ctx);
  for (int64_t l = begin; l < end; ++l)
    c->out[l] = valueOf(globalOf(c->gids, l), c->round);
}
// Edges: out[cell 0] += in[cell 1] * w, out[cell 1] -= in[cell 0]; the
// partial sums in[cell 0] * w.
void incBody(void *ctx, int64_t begin, int64_t end, int64_t chunk) {
  auto *c = static_cast<SetCtx *>(ctx);
  double s = 0;
  for (int64_t e = begin; e < end; ++e) {
    const double w = 1.0 + 1e-3 * double(globalOf(c->gids, e) % 97);
    const int32_t a = c->map[2 * e], b = c->map[2 * e + 1];
    c->out[a] += c->in[b] * w;
    c->out[b] -= c->in[a];
    s += c->in[a] * w;
  }
  c->partials[chunk] = s;
}
// Cells: out[l] = sum of in over the cell's nodes, weighted.
void gatherBody(void *ctx, int64_t begin, int64_t end, int64_t) {
  auto *c = static_cast<SetCtx *>(ctx);
  for (int64_t l = begin; l < end; ++l) {
    double s = 0;
    for (int k = 0; k < c->arity; ++k)
      s += double(k + 1) * c->in[c->map[l * c->arity + k]];
    c->out[l] = s;
  }
}

// One loop run one way: what it left (owned results, partials), the
// messages it sent and whether messages were in flight (by hand: what
// opd_loop_begin said; opd_loop_run: what it should say).
struct Way {
  std::vector<double> out, partials;
  int64_t messages = 0;
  int flying = 0;
};

void compareWays(const Way &run, const Way &hand, const std::string &what) {
  check(run.out.size() == hand.out.size() &&
            std::memcmp(run.out.data(), hand.out.data(),
                        run.out.size() * sizeof(double)) == 0,
        what + ": results by hand differ from opd_loop_run");
  check(run.partials.size() == hand.partials.size() &&
            std::memcmp(run.partials.data(), hand.partials.data(),
                        run.partials.size() * sizeof(double)) == 0,
        what + ": reduction partials by hand differ from opd_loop_run");
  check(run.messages == hand.messages,
        what + ": " + std::to_string(hand.messages) +
            " messages by hand, " + std::to_string(run.messages) +
            " by opd_loop_run");
  check(hand.flying == run.flying,
        what + ": opd_loop_begin says " + std::to_string(hand.flying) +
            ", expected " + std::to_string(run.flying));
}

// 2D block: v = five-point combination of u over the owned rows.
struct StencilCtx {
  const double *u;
  double *v;
  int64_t s1, lo0, hi0;
};
void stencilBody(void *ctx, int64_t begin, int64_t end, int64_t) {
  auto *c = static_cast<StencilCtx *>(ctx);
  for (int64_t j = begin; j < end; ++j)
    for (int64_t i = c->lo0; i < c->hi0; ++i) {
      const int64_t p = i + j * c->s1;
      c->v[p] = c->u[p - 1] + 2 * c->u[p + 1] + 3 * c->u[p - c->s1] +
                4 * c->u[p + c->s1] - c->u[p];
    }
}
void blockWriteBody(void *ctx, int64_t begin, int64_t end, int64_t) {
  auto *c = static_cast<StencilCtx *>(ctx);
  for (int64_t j = begin; j < end; ++j)
    for (int64_t i = c->lo0; i < c->hi0; ++i)
      c->v[i + j * c->s1] = valueOf(i + 1000 * j, int(c->s1 % 7));
}

// A loop argument of 8-byte elements, the distributed-memory fields zero.
using test::arg;

void checkPhases(std::map<std::string, opd_set *> &sets,
                 const std::vector<opd_map *> &maps) {
  opd_set *cells = sets["cells"], *edges = sets["edges"],
          *nodes = sets["nodes"];
  opd_map *pecell = maps[1], *pcell = maps[4];
  opd_dat *q = opd_dat_create("q", cells, OPD_F64, 1);
  opd_dat *res = opd_dat_create("res", cells, OPD_F64, 1);
  opd_dat *x = opd_dat_create("x", nodes, OPD_F64, 1);
  opd_dat *area = opd_dat_create("area", cells, OPD_F64, 1);
  const opd_arg writeQ[] = {arg(q, nullptr, 0, OPD_ARG_DIRECT, OPD_WRITE)};
  const opd_arg writeX[] = {arg(x, nullptr, 0, OPD_ARG_DIRECT, OPD_WRITE)};
  const opd_arg inc[] = {
      arg(q, pecell, 0, OPD_ARG_INDIRECT, OPD_READ),
      arg(q, pecell, 1, OPD_ARG_INDIRECT, OPD_READ),
      arg(res, pecell, 0, OPD_ARG_INDIRECT, OPD_INC),
      arg(res, pecell, 1, OPD_ARG_INDIRECT, OPD_INC),
      arg(nullptr, nullptr, 0, OPD_ARG_REDUCTION, OPD_SUM)};
  const opd_arg gather[] = {arg(x, pcell, 0, OPD_ARG_INDIRECT, OPD_READ),
                            arg(x, pcell, 1, OPD_ARG_INDIRECT, OPD_READ),
                            arg(x, pcell, 2, OPD_ARG_INDIRECT, OPD_READ),
                            arg(x, pcell, 3, OPD_ARG_INDIRECT, OPD_READ),
                            arg(area, nullptr, 0, OPD_ARG_DIRECT, OPD_WRITE)};
  opd_loop *slots[8] = {};
  int round = 0;
  // A direct loop writing `dat` over `set`: its halo is dirty after.
  // The halo first holds garbage, so that a loop running before its
  // exchange completed reads it.
  const double garbage = -7.0;
  auto dirty = [&](opd_loop **slot, const char *name, opd_set *set,
                   opd_dat *dat, const opd_arg *args) {
    opd_dat_fill(dat, &garbage);
    opd_loop *l = opd_loop_prepare(slot, name, set, 1, args);
    SetCtx c{opd_set_global_ids(set), nullptr, 0, nullptr,
             static_cast<double *>(opd_dat_data(dat)), nullptr, ++round};
    opd_loop_run(l, writeBody, &c);
  };

  // Coloured increments with a reduction: core, rest and exec halo parts.
  Way ways[2];
  for (int way = 0; way < 2; ++way) {
    round = 0; // the same q both ways
    dirty(&slots[0], "write_q", cells, q, writeQ);
    double zero = 0;
    opd_dat_fill(res, &zero);
    opd_loop *l = opd_loop_prepare(&slots[1 + way],
                                   way ? "inc_hand" : "inc_run", edges, 5, inc);
    const int64_t chunks = opd_loop_chunks(l);
    auto *partials = static_cast<double *>(opd_rt_scratch(chunks * 8));
    std::fill(partials, partials + chunks, 0.0);
    SetCtx c{opd_set_global_ids(edges), pecell->data, 2,
             static_cast<const double *>(opd_dat_data(q)),
             static_cast<double *>(opd_dat_data(res)), partials, 0};
    Way &w = ways[way];
    if (way)
      w.flying = runByHand(l, incBody, &c, reinterpret_cast<char *>(partials),
                           sizeof(double));
    else
      opd_loop_run(l, incBody, &c);
    const double *r = static_cast<const double *>(opd_dat_data(res));
    w.out.assign(r, r + cells->owned);
    w.partials.assign(partials, partials + chunks);
    w.messages = l->messages;
    if (way) {
      opd_loop_part halo;
      opd_loop_part_get(l, OPD_PART_EXEC_HALO, &halo);
      // Some rank runs an exec halo (which ones depends on the partition).
      int some = halo.nblocks > 0;
      MPI_Allreduce(MPI_IN_PLACE, &some, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      check(halo.partials_count == 0 && (dist::ranks() == 1 || some),
            "the exec halo part of edges is missing");
    }
  }
  // q was written since its last exchange: in flight on several ranks.
  ways[0].flying = dist::ranks() > 1 ? 1 : 0;
  compareWays(ways[0], ways[1], "coloured loop");

  // A set loop reading through a map: a core and a rest segment.
  for (int way = 0; way < 2; ++way) {
    round = 0;
    dirty(&slots[3], "write_x", nodes, x, writeX);
    opd_loop *l = opd_loop_prepare(&slots[4 + way],
                                   way ? "gather_hand" : "gather_run", cells,
                                   5, gather);
    SetCtx c{nullptr, pcell->data, 4,
             static_cast<const double *>(opd_dat_data(x)),
             static_cast<double *>(opd_dat_data(area)), nullptr, 0};
    Way &w = ways[way];
    w = Way();
    if (way)
      w.flying = runByHand(l, gatherBody, &c, nullptr, 0);
    else
      opd_loop_run(l, gatherBody, &c);
    const double *a = static_cast<const double *>(opd_dat_data(area));
    w.out.assign(a, a + cells->owned);
    w.messages = l->messages;
  }
  ways[0].flying = dist::ranks() > 1 ? 1 : 0;
  compareWays(ways[0], ways[1], "gather loop");

  // opd_dat_copy: the copy of a dirty dat is exchanged before a loop reads
  // it through a map; the copy of a current one is not.
  opd_dat *x2 = opd_dat_create("x2", nodes, OPD_F64, 1);
  const opd_arg gather2[] = {arg(x2, pcell, 0, OPD_ARG_INDIRECT, OPD_READ),
                             arg(area, nullptr, 0, OPD_ARG_DIRECT, OPD_WRITE)};
  for (int dirtySource = 0; dirtySource < 2; ++dirtySource) {
    if (dirtySource)
      dirty(&slots[3], "write_x", nodes, x, writeX);
    opd_dat_copy(x2, x);
    opd_loop *l = opd_loop_prepare(&slots[6 + dirtySource],
                                   dirtySource ? "copy_dirty" : "copy_clean",
                                   cells, 2, gather2);
    opd_loop_begin(l);
    opd_loop_end(l);
    const bool expect = dirtySource && dist::ranks() > 1;
    check((l->messages > 0) == expect,
          std::string("copy of a ") + (dirtySource ? "dirty" : "current") +
              " dat: " + std::to_string(l->messages) + " messages");
    const double *v = static_cast<const double *>(opd_dat_data(x2));
    for (int64_t k = 0; k < nodes->size; ++k)
      check(v[k] == valueOf(gid(nodes, k), round),
            "copy of x: node " + std::to_string(gid(nodes, k)) + " is stale");
  }

  // A 2D stencil loop: on ranks split along the outer dimension only, the
  // core rows run while the halo rows are in flight.
  opd_block *grid = opd_block_create("grid", 2);
  const int64_t size[2] = {37, 41}, h[2] = {1, 1}, base[2] = {0, 0};
  opd_dat *u = opd_block_dat_create("u", grid, OPD_F64, 1, size, h, h, base);
  opd_dat *v = opd_block_dat_create("v", grid, OPD_F64, 1, size, h, h, base);
  opd_arg writeU[1] = {arg(u, nullptr, 0, OPD_ARG_DIRECT, OPD_WRITE)};
  opd_arg lap[2] = {arg(u, nullptr, 0, OPD_ARG_STENCIL, OPD_READ),
                    arg(v, nullptr, 0, OPD_ARG_DIRECT, OPD_WRITE)};
  lap[0].lo[0] = lap[0].lo[1] = -1;
  lap[0].hi[0] = lap[0].hi[1] = 1;
  opd_loop *blockSlots[3] = {};
  for (int way = 0; way < 2; ++way) {
    int64_t strides[2];
    auto *uo = static_cast<double *>(opd_dat_origin(u, strides));
    auto *vo = static_cast<double *>(opd_dat_origin(v, nullptr));
    opd_dat_fill(u, &garbage);
    int64_t lo[2] = {0, 0}, hi[2] = {37, 41};
    opd_loop *wl = opd_loop_prepare_block(&blockSlots[0], "write_u", grid, lo,
                                          hi, 1, writeU);
    StencilCtx wc{nullptr, uo, strides[1], lo[0], hi[0]};
    opd_loop_run(wl, blockWriteBody, &wc);
    int64_t lo2[2] = {0, 0}, hi2[2] = {37, 41};
    opd_loop *l = opd_loop_prepare_block(&blockSlots[1 + way],
                                         way ? "lap_hand" : "lap_run", grid,
                                         lo2, hi2, 2, lap);
    StencilCtx c{uo, vo, strides[1], lo2[0], hi2[0]};
    Way &w = ways[way];
    w = Way();
    if (way)
      w.flying = runByHand(l, stencilBody, &c, nullptr, 0);
    else
      opd_loop_run(l, stencilBody, &c);
    const double *vv = static_cast<const double *>(opd_dat_data(v));
    w.out.assign(vv, vv + v->elements);
    w.messages = l->messages;
    double zero = 0;
    opd_dat_fill(v, &zero);
  }
  // In flight only when the block is split along its outer dimension
  // alone (mpi/Structured.cpp); either way opd_loop_run's results.
  ways[0].flying = ways[1].flying;
  compareWays(ways[0], ways[1], "stencil loop");
}
} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MESH.h5 [runtime options]\n", argv[0]);
    return 2;
  }
  const char *mesh = argv[1];
  opd_rt_init(argc - 1, argv + 1, "partition_check", nullptr, 0);
  // The plan parts (opd_loop_part_get) describe the colouring: the loops
  // run by hand through them are compared with opd_loop_run's colouring.
  opdc::rt::setPlanKind(opdc::rt::PlanKind::Colour);
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
    // Read in slices (set->sliced): gather the whole map for the checks.
    const int64_t n = map->from->globalSize;
    std::vector<int> counts(std::size_t(dist::ranks())),
        displs(std::size_t(dist::ranks()));
    for (int q = 0; q < dist::ranks(); ++q) {
      displs[std::size_t(q)] = int(dist::sliceLo(n, q) * m.arity);
      counts[std::size_t(q)] =
          int((dist::sliceLo(n, q + 1) - dist::sliceLo(n, q)) * m.arity);
    }
    check(map->from->size * m.arity == counts[std::size_t(dist::rank())],
          std::string("map ") + m.name + ": not read as a slice");
    globalMaps.emplace_back(std::size_t(n * m.arity), 0);
    MPI_Allgatherv(map->data, counts[std::size_t(dist::rank())], MPI_INT32_T,
                   globalMaps.back().data(), counts.data(), displs.data(),
                   MPI_INT32_T, MPI_COMM_WORLD);
  }
  std::map<std::string, opd_dat *> ids;
  for (const char *n : setNames) {
    opd_dat *d = opd_dat_create((std::string("gid_") + n).c_str(), sets[n],
                                OPD_I64, 1);
    auto *v = static_cast<int64_t *>(opd_dat_data(d));
    const int64_t lo = dist::sliceLo(sets[n]->globalSize, dist::rank());
    for (int64_t i = 0; i < sets[n]->size; ++i)
      v[i] = lo + i;
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
  checkPhases(sets, maps);
  int total = failures;
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  // Collective (the peak memory over ranks).
  const std::string description = dist::partitionDescription();
  if (dist::rank() == 0) {
    if (total == 0)
      std::printf("partition ok (%s; %lld messages in the check)\n",
                  description.c_str(),
                  (long long)dummy.messages);
    else
      std::printf("partition FAILED: %d problems\n", total);
  }
  opd_rt_finalize();
  return total == 0 ? 0 : 1;
}
