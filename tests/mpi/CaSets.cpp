// CaSets.cpp - Communication avoidance on unstructured sets, at the
// runtime's level (tests/mpi, mpi-ca-sets; issue 12).
// SPDX-License-Identifier: Apache-2.0
//
// usage: mpirun -np N opd_rt_ca_sets LAYERS [MESH.h5] [runtime options]
// Builds a small quadrilateral mesh as an unstructured one (nodes, cells,
// interior edges; maps pcell, pecell, pedge), or reads Airfoil's sets and
// maps of those names from MESH.h5 (in slices), asks for LAYERS (>= 2) halo
// layers (opd_rt_halo_depth), and checks on every rank:
//   * the layer invariant of lib/mpi/Halo.cpp: the map targets of exec
//     layers 1..e lie in layers 1..e+1 (owned elements: 1..2), every
//     target of a stored exec element is stored;
//   * the half steps of mpi/Exchange.cpp: in exec layer l + 1 the map
//     targets of layers 0..l come first, exactly those, and a plain loop
//     (exec layer 1, reading through a map) exchanges OP2's one-layer halo
//     (half step 3) in one message per neighbour, whatever LAYERS;
//   * opd_halo_group d layers deep restores exactly layers 1..d of each
//     dat's halo (all of it when d >= LAYERS), in one message per
//     neighbour for three dats on three sets;
//   * an Airfoil-like chain, adt_calc (cells: reads x through pcell and q,
//     writes adt) -> res_calc (edges: reads x, q and adt through maps,
//     increments res) -> update (cells: q -= f(res, adt), res = 0, an rms
//     reduction), run plain and with communication avoidance (the grouped
//     exchange of q and res before the chain, adt_calc over LAYERS exec
//     layers, res_calc over LAYERS - 1, as chainSetHaloLayers plans it):
//     q, adt and rms bitwise equal after every iteration, no message
//     inside the CA chain, one grouped message per neighbour per chain;
//     odd iterations run the extended res_calc through the loop phases
//     (opd_loop_begin, segments and plan parts, OPD_PART_DEEP_HALO for its
//     layers 2..), as a GPU backend does.
// Prints the messages per chain iteration both ways and "ca-sets ok" on
// rank 0, or names the first failure.
#include "LoopArgs.h"
#include "core/Dist.h"
#include "core/Runtime.h"
#include "exec/Loop.h"
#include "mpi/Mpi.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace opdc::rt;

namespace {
int failures = 0;
void check(bool ok, const std::string &what) {
  if (!ok && failures++ < 10)
    std::fprintf(stderr, "rank %d: %s\n", dist::rank(), what.c_str());
}
int64_t gid(const opd_set *s, int64_t l) {
  return s->globalIds.empty() ? l : s->globalIds[std::size_t(l)];
}
using test::arg;

constexpr int NX = 23, NY = 17;

struct Ctx {
  const int64_t *gids = nullptr;
  const int32_t *m1 = nullptr, *m2 = nullptr; ///< pcell / pedge, pecell
  const double *x = nullptr, *qin = nullptr, *adtIn = nullptr;
  double *q = nullptr, *adt = nullptr, *res = nullptr;
  int64_t *ids = nullptr;
  double *partials = nullptr;
};

void initNodes(void *c0, int64_t b, int64_t e, int64_t) {
  auto *c = static_cast<Ctx *>(c0);
  for (int64_t l = b; l < e; ++l) {
    const int64_t g = c->gids ? c->gids[l] : l;
    const double i = double(g % (NX + 1)), j = double(g / (NX + 1));
    c->q[2 * l] = i + 0.1 * std::sin(j);
    c->q[2 * l + 1] = j + 0.1 * std::cos(i);
  }
}
void initCells(void *c0, int64_t b, int64_t e, int64_t) {
  auto *c = static_cast<Ctx *>(c0);
  for (int64_t l = b; l < e; ++l) {
    const int64_t g = c->gids ? c->gids[l] : l;
    for (int k = 0; k < 4; ++k)
      c->q[4 * l + k] = 1.0 + 0.3 * std::sin(0.37 * double(g) + k);
  }
}
void writeIds(void *c0, int64_t b, int64_t e, int64_t) {
  auto *c = static_cast<Ctx *>(c0);
  for (int64_t l = b; l < e; ++l)
    c->ids[l] = c->gids ? c->gids[l] : l;
}
// adt[c] from its 4 nodes and q[c].
void adtCalc(void *c0, int64_t b, int64_t e, int64_t) {
  auto *c = static_cast<Ctx *>(c0);
  for (int64_t l = b; l < e; ++l) {
    double s = 0;
    for (int k = 0; k < 4; ++k) {
      const double *p = c->x + 2 * c->m1[4 * l + k];
      const double *n = c->x + 2 * c->m1[4 * l + (k + 1) % 4];
      s += std::sqrt((p[0] - n[0]) * (p[0] - n[0]) +
                     (p[1] - n[1]) * (p[1] - n[1]));
    }
    const double *q = c->qin + 4 * l;
    c->adt[l] = s * (std::fabs(q[1]) + std::sqrt(std::fabs(q[0]) + 1.0)) /
                (1.0 + q[3] * q[3]);
  }
}
// Edges: a flux from both cells' q and adt and the edge's nodes.
void resCalc(void *c0, int64_t b, int64_t e, int64_t) {
  auto *c = static_cast<Ctx *>(c0);
  for (int64_t l = b; l < e; ++l) {
    const int32_t c1 = c->m2[2 * l], c2 = c->m2[2 * l + 1];
    const double *n1 = c->x + 2 * c->m1[2 * l], *n2 = c->x + 2 * c->m1[2 * l + 1];
    const double dx = n1[0] - n2[0], dy = n1[1] - n2[1];
    const double mu = 0.5 * (c->adtIn[c1] + c->adtIn[c2]);
    for (int k = 0; k < 4; ++k) {
      const double f = mu * (c->qin[4 * c1 + k] - c->qin[4 * c2 + k]) +
                       0.01 * (dx * c->qin[4 * c1 + k] - dy * c->qin[4 * c2 + k]);
      c->res[4 * c1 + k] += f;
      c->res[4 * c2 + k] -= f;
    }
  }
}
void update(void *c0, int64_t b, int64_t e, int64_t chunk) {
  auto *c = static_cast<Ctx *>(c0);
  double rms = 0;
  for (int64_t l = b; l < e; ++l)
    for (int k = 0; k < 4; ++k) {
      const double d = 0.05 * c->res[4 * l + k] / (1.0 + c->adtIn[l]);
      c->q[4 * l + k] -= d;
      c->res[4 * l + k] = 0;
      rms += d * d;
    }
  c->partials[chunk] = rms;
}

// A prepared loop run through the phases (what a GPU backend calls),
// serially, the blocks of a colour in reverse order; returns the plan
// parts it ran.
int32_t runByPhases(opd_loop *l, opd_body body, void *ctx) {
  opd_loop_begin(l);
  for (int32_t k = 0; k < opd_loop_segment_count(l); ++k) {
    opd_loop_segment sg;
    opd_loop_segment_get(l, k, &sg);
    if (!sg.before_halos)
      opd_loop_wait_halos(l);
    for (int64_t b = sg.begin, c = sg.chunk0; b < sg.end;
         b += sg.chunk_size, ++c)
      body(ctx, b, std::min(b + sg.chunk_size, sg.end), c);
  }
  const int32_t parts = opd_loop_part_count(l);
  for (int32_t q = 0; q < parts; ++q) {
    opd_loop_part p;
    opd_loop_part_get(l, q, &p);
    if (!p.before_halos)
      opd_loop_wait_halos(l);
    for (int32_t c = 0; c < p.ncolours; ++c)
      for (int64_t k = p.colour_offsets[c + 1] - 1; k >= p.colour_offsets[c];
           --k) {
        const int64_t begin = p.first + p.blocks[k] * p.block_size;
        body(ctx, begin, std::min(begin + p.block_size, p.first + p.count),
             p.chunk0 + p.blocks[k]);
      }
  }
  opd_loop_end(l);
  return parts;
}

int64_t nid(int i, int j) { return i + int64_t(j) * (NX + 1); }
int64_t cid(int i, int j) { return i + int64_t(j) * NX; }

// Ranks this rank sends a set dat's halo to, `half` half steps deep
// (their half steps; the whole halo by default).
std::set<int> sendsTo(const opd_set *s, int64_t half = 1000) {
  std::set<int> r;
  for (const dist::Neighbour &nb : dist::setHalo(s).neighbours) {
    const int64_t last = int64_t(nb.sendCut.size()) - 1;
    if (nb.sendCut[std::size_t(std::clamp<int64_t>(half, 1, last))] > 0)
      r.insert(nb.rank);
  }
  return r;
}
// An opd_halo_group depth (layers) in half steps (mpi/Exchange.cpp).
int64_t halfOf(const opd_set *s, int64_t layers) {
  const int64_t K = int64_t(s->execEnd.size()) - 1;
  return layers >= K ? 1000 : 2 * layers;
}
void nothing(void *, int64_t, int64_t, int64_t) {}
} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s LAYERS [MESH.h5] [runtime options]\n",
                 argv[0]);
    return 2;
  }
  const int64_t K = std::atoll(argv[1]);
  opd_rt_halo_depth(K, 2);
  const int skip = argc > 2 && argv[2][0] != '-' ? 2 : 1;
  opd_rt_init(argc - skip, argv + skip, "ca_sets", nullptr, 0);
  // The plan parts (opd_loop_part_get) describe the colouring: the loops
  // run by hand through them are compared with opd_loop_run's colouring.
  opdc::rt::setPlanKind(opdc::rt::PlanKind::Colour);
  const int me = dist::rank();
  const char *mesh = argc > 2 && argv[2][0] != '-' ? argv[2] : nullptr;
  opd_set *nodes, *cells, *edges;
  opd_map *pcell, *pecell, *pedge;
  if (mesh) {
    // Airfoil's mesh, read in slices (set->sliced until the partition).
    nodes = opd_set_from_file("nodes", mesh);
    edges = opd_set_from_file("edges", mesh);
    cells = opd_set_from_file("cells", mesh);
    pedge = opd_map_from_file("pedge", edges, nodes, 2, mesh);
    pecell = opd_map_from_file("pecell", edges, cells, 2, mesh);
    pcell = opd_map_from_file("pcell", cells, nodes, 4, mesh);
  } else {
    nodes = opd_set_create("nodes", (NX + 1) * (NY + 1));
    cells = opd_set_create("cells", NX * NY);
    const int64_t nedges = (NX - 1) * NY + NX * (NY - 1);
    edges = opd_set_create("edges", nedges);
    pcell = opd_map_create("pcell", cells, nodes, 4);
    pecell = opd_map_create("pecell", edges, cells, 2);
    pedge = opd_map_create("pedge", edges, nodes, 2);
  }
  if (!mesh) {
    int32_t *pc = opd_map_data(pcell), *pe = opd_map_data(pecell),
            *pn = opd_map_data(pedge);
    for (int j = 0; j < NY; ++j)
      for (int i = 0; i < NX; ++i) {
        int32_t *r = pc + 4 * cid(i, j);
        r[0] = int32_t(nid(i, j));
        r[1] = int32_t(nid(i + 1, j));
        r[2] = int32_t(nid(i + 1, j + 1));
        r[3] = int32_t(nid(i, j + 1));
      }
    int64_t e = 0;
    for (int j = 0; j < NY; ++j)
      for (int i = 0; i + 1 < NX; ++i, ++e) {
        pe[2 * e] = int32_t(cid(i, j));
        pe[2 * e + 1] = int32_t(cid(i + 1, j));
        pn[2 * e] = int32_t(nid(i + 1, j));
        pn[2 * e + 1] = int32_t(nid(i + 1, j + 1));
      }
    for (int j = 0; j + 1 < NY; ++j)
      for (int i = 0; i < NX; ++i, ++e) {
        pe[2 * e] = int32_t(cid(i, j));
        pe[2 * e + 1] = int32_t(cid(i, j + 1));
        pn[2 * e] = int32_t(nid(i, j + 1));
        pn[2 * e + 1] = int32_t(nid(i + 1, j + 1));
      }
  }
  opd_dat *x = opd_dat_create("x", nodes, OPD_F64, 2);
  opd_dat *qp = opd_dat_create("q_plain", cells, OPD_F64, 4);
  opd_dat *qc = opd_dat_create("q_ca", cells, OPD_F64, 4);
  opd_dat *adtp = opd_dat_create("adt_plain", cells, OPD_F64, 1);
  opd_dat *adtc = opd_dat_create("adt_ca", cells, OPD_F64, 1);
  opd_dat *resp = opd_dat_create("res_plain", cells, OPD_F64, 4);
  opd_dat *resc = opd_dat_create("res_ca", cells, OPD_F64, 4);
  opd_dat *idc = opd_dat_create("id_cells", cells, OPD_I64, 1);
  opd_dat *idn = opd_dat_create("id_nodes", nodes, OPD_I64, 1);
  opd_dat *ide = opd_dat_create("id_edges", edges, OPD_I64, 1);

  // Initial values by loops (the first one partitions the mesh).
  opd_loop *slots[32] = {};
  // (The data pointers after the prepare: the first one partitions.)
  auto direct = [&](int slot, const char *name, opd_set *s, opd_dat *d,
                    opd_body body, bool ids) {
    const opd_arg a[] = {arg(d, nullptr, 0, OPD_ARG_DIRECT, OPD_WRITE,
                             int(d->elementBytes()))};
    opd_loop *l = opd_loop_prepare(&slots[slot], name, s, 1, a);
    Ctx c;
    c.gids = opd_set_global_ids(s);
    c.q = ids ? nullptr : static_cast<double *>(d->data);
    c.ids = ids ? static_cast<int64_t *>(d->data) : nullptr;
    opd_loop_run(l, body, &c);
  };
  direct(0, "init_x", nodes, x, initNodes, false);
  direct(1, "init_qp", cells, qp, initCells, false);
  direct(2, "init_qc", cells, qc, initCells, false);
  const double zero[4] = {0, 0, 0, 0};
  opd_dat_fill(resp, zero);
  opd_dat_fill(resc, zero);
  const bool split = dist::ranks() > 1;

  // The layer invariant.
  if (split) {
    for (opd_set *s : {nodes, cells, edges})
      check(int64_t(s->execEnd.size()) == K + 1 && s->execEnd[0] == s->owned &&
                s->execEnd[1] == s->execSize &&
                std::is_sorted(s->execEnd.begin(), s->execEnd.end()) &&
                s->execEnd.back() <= s->size,
            "set " + s->name + ": bad layer ends");
    for (opd_map *m : {pcell, pecell, pedge}) {
      const opd_set *S = m->from, *T = m->to;
      for (int64_t e = 0; e <= K; ++e) {
        const int64_t bound =
            e == 0 ? (K >= 2 ? T->execEnd[2] : T->size)
                   : (e + 1 <= K ? T->execEnd[std::size_t(e + 1)] : T->size);
        const int64_t from = e == 0 ? 0 : S->execEnd[std::size_t(e - 1)];
        for (int64_t l = from; l < S->execEnd[std::size_t(e)]; ++l)
          for (int k = 0; k < m->arity; ++k) {
            const int32_t t = m->data[l * m->arity + k];
            check(t >= 0 && t < bound,
                  "map " + m->name + ": element " + std::to_string(gid(S, l)) +
                      " of layer " + std::to_string(e) + " reaches local " +
                      std::to_string(t) + ", beyond layer " +
                      std::to_string(std::min(e + 1, K)));
          }
      }
    }
  }

  // The half steps (mpi/Halo.cpp, SetHalo::halfEnd): in layer l + 1 the
  // map targets of layers 0..l come first, exactly those; every target of
  // layers 0..e lies before half step 2 max(e, 1) + 1.
  if (split) {
    std::map<const opd_set *, std::vector<int64_t>> firstReach;
    for (opd_set *s : {nodes, cells, edges})
      firstReach[s].assign(std::size_t(s->size), INT64_MAX);
    for (opd_map *m : {pcell, pecell, pedge}) {
      const opd_set *S = m->from, *T = m->to;
      const std::vector<int64_t> &half = dist::setHalo(T).halfEnd;
      check(int64_t(half.size()) == 2 * K + 2 && half[1] == half[2] &&
                half.back() == T->size,
            "set " + T->name + ": bad half steps");
      for (int64_t e = 0; e <= K; ++e) {
        const int64_t from = e == 0 ? 0 : S->execEnd[std::size_t(e - 1)];
        const int64_t bound = half[std::size_t(2 * std::max<int64_t>(e, 1) + 1)];
        for (int64_t l = from; l < S->execEnd[std::size_t(e)]; ++l)
          for (int k = 0; k < m->arity; ++k) {
            const int32_t t = m->data[l * m->arity + k];
            int64_t &f = firstReach[T][std::size_t(t)];
            f = std::min(f, e);
            check(t < bound, "map " + m->name + ": element " +
                                 std::to_string(gid(S, l)) + " of layer " +
                                 std::to_string(e) + " reaches local " +
                                 std::to_string(t) + ", beyond half step " +
                                 std::to_string(2 * std::max<int64_t>(e, 1) + 1));
          }
      }
    }
    for (opd_set *s : {nodes, cells, edges}) {
      const std::vector<int64_t> &half = dist::setHalo(s).halfEnd;
      for (int64_t l = 1; l < K; ++l)
        for (int64_t t = half[std::size_t(2 * l)];
             t < half[std::size_t(2 * l + 2)]; ++t)
          check((firstReach[s][std::size_t(t)] <= l) ==
                    (t < half[std::size_t(2 * l + 1)]),
                "set " + s->name + ": element " + std::to_string(gid(s, t)) +
                    " of layer " + std::to_string(l + 1) + " on the wrong "
                    "side of half step " + std::to_string(2 * l + 1));
    }
  }

  // A plain loop (increments through a map: the exec halo, reading through
  // the map) exchanges OP2's one-layer halo, whatever K: half step 3.
  if (split) {
    direct(3, "ids_cells", cells, idc, writeIds, true);
    auto *v = static_cast<int64_t *>(idc->data);
    for (int64_t l = cells->owned; l < cells->size; ++l)
      v[l] = -1;
    const opd_arg a[] = {arg(idc, pecell, 0, OPD_ARG_INDIRECT, OPD_READ),
                         arg(idc, pecell, 1, OPD_ARG_INDIRECT, OPD_READ),
                         arg(resp, pecell, 0, OPD_ARG_INDIRECT, OPD_INC),
                         arg(resp, pecell, 1, OPD_ARG_INDIRECT, OPD_INC)};
    opd_loop *l = opd_loop_prepare(&slots[6], "plain_read", edges, 4, a);
    Ctx c;
    opd_loop_run(l, nothing, &c);
    const int64_t end = dist::setHalo(cells).halfEnd[3];
    for (int64_t k = 0; k < cells->size; ++k)
      check(k < end ? v[k] == gid(cells, k) : v[k] == -1,
            "cell " + std::to_string(k) + " holds " + std::to_string(v[k]) +
                " after a plain exchange (half step 3 ends at " +
                std::to_string(end) + ")");
    check(l->messages == int64_t(sendsTo(cells, 3).size()),
          "the plain exchange sent " + std::to_string(l->messages) +
              " messages");
    check(idc->haloValid == (K == 1 ? INT64_MAX / 4 : 3),
          "id_cells: haloValid " + std::to_string(idc->haloValid) +
              " after a plain exchange");
    const double zero[4] = {0, 0, 0, 0};
    opd_dat_fill(resp, zero);
  }

  // Grouped exchanges d layers deep restore exactly layers 1..d.
  for (int64_t d = 1; d <= K + 1; ++d) {
    direct(3, "ids_cells", cells, idc, writeIds, true);
    direct(4, "ids_nodes", nodes, idn, writeIds, true);
    direct(5, "ids_edges", edges, ide, writeIds, true);
    opd_dat *ds[3] = {idc, idn, ide};
    for (opd_dat *dat : ds) {
      auto *v = static_cast<int64_t *>(dat->data);
      for (int64_t l = dat->set->owned; l < dat->set->size; ++l)
        v[l] = -1;
    }
    const int64_t depth[9] = {d, 0, 0, d, 0, 0, d, 0, 0};
    opd_loop *g = nullptr;
    opd_halo_group(&g, "ids_group", 1, 3, ds, depth, 0, nullptr);
    // In flight until the next set loop waits for halos: read them now.
    check(dist::setGroupInFlight() == (split && d > 0),
          "the grouped exchange is not in flight after opd_halo_group");
    dist::settleExchanges();
    std::set<int> peers;
    for (opd_dat *dat : ds)
      for (int r : sendsTo(dat->set, halfOf(dat->set, d)))
        peers.insert(r);
    check(g->messages == int64_t(split ? peers.size() : 0),
          "grouped exchange of 3 dats: " + std::to_string(g->messages) +
              " messages to " + std::to_string(peers.size()) + " neighbours");
    g->messages = 0;
    for (opd_dat *dat : ds) {
      const opd_set *s = dat->set;
      const auto *v = static_cast<const int64_t *>(dat->data);
      const int64_t end = !split ? s->size
                          : d >= K ? s->size
                                   : s->execEnd[std::size_t(d)];
      for (int64_t l = 0; l < s->size; ++l)
        check(l < end ? v[l] == gid(s, l) : v[l] == -1,
              "set " + s->name + ": element " + std::to_string(l) +
                  " holds " + std::to_string(v[l]) + " after a grouped "
                  "exchange " + std::to_string(d) + " layers deep");
      check(!split || dat->haloValid >= (d >= K ? INT64_MAX / 4 : 2 * d),
            "dat " + dat->name +
                                                  ": haloValid " +
                                                  std::to_string(dat->haloValid));
    }
  }

  // The chain, plain and communication-avoiding.
  const int iterations = 6;
  const std::set<int> cellPeers = split ? sendsTo(cells) : std::set<int>();
  const std::set<int> nodePeers = split ? sendsTo(nodes) : std::set<int>();
  std::set<int> firstPeers = cellPeers;
  firstPeers.insert(nodePeers.begin(), nodePeers.end());
  int64_t plainMessages = 0, caMessages = 0, caLoopMessages = 0;
  opd_loop *group = nullptr;
  bool groupFlying = false;
  for (int it = 0; it < iterations; ++it) {
    double rms[2] = {0, 0};
    // The CA chain first: its first grouped exchange carries x too.
    for (int pass = 0; pass < 2; ++pass) {
      const int ca = 1 - pass;
      opd_dat *q = ca ? qc : qp, *adt = ca ? adtc : adtp, *res = ca ? resc : resp;
      const int base = ca ? 20 : 10;
      if (ca) {
        opd_dat *ds[3] = {q, res, x};
        const int64_t depth[9] = {K, 0, 0, K - 2, 0, 0, K + 1, 0, 0};
        const int64_t before = group ? group->messages : 0;
        // Mode 1 (on): no cost model; the chain's 3 loops, for it.
        const opd_chain_loop costs[3] = {{8 * 12, K, 0, 0, 0},
                                         {8 * 12, K - 1, 2, 2, 0},
                                         {8 * 9, 0, 0, 0, 0}};
        opd_halo_group(&group, "chain_group", 1, 3, ds, depth, 3, costs);
        const int64_t sent = group->messages - before;
        const std::set<int> &want = it == 0 ? firstPeers : cellPeers;
        check(sent == int64_t(want.size()),
              "iteration " + std::to_string(it) + ": the grouped exchange "
              "sent " + std::to_string(sent) + " messages to " +
                  std::to_string(want.size()) + " neighbours");
        caMessages += sent;
        // The group flies while adt_calc runs its core; its wait unpacks.
        groupFlying = dist::setGroupInFlight();
        check(!split || groupFlying == (it == 0 || !cellPeers.empty()),
              "the grouped exchange is not in flight before adt_calc");
      }
      const opd_arg adtArgs[] = {
          arg(x, pcell, 0, OPD_ARG_INDIRECT, OPD_READ),
          arg(x, pcell, 1, OPD_ARG_INDIRECT, OPD_READ),
          arg(x, pcell, 2, OPD_ARG_INDIRECT, OPD_READ),
          arg(x, pcell, 3, OPD_ARG_INDIRECT, OPD_READ),
          arg(q, nullptr, 0, OPD_ARG_DIRECT, OPD_READ),
          arg(adt, nullptr, 0, OPD_ARG_DIRECT, OPD_WRITE)};
      const opd_arg resArgs[] = {
          arg(x, pedge, 0, OPD_ARG_INDIRECT, OPD_READ),
          arg(x, pedge, 1, OPD_ARG_INDIRECT, OPD_READ),
          arg(q, pecell, 0, OPD_ARG_INDIRECT, OPD_READ),
          arg(q, pecell, 1, OPD_ARG_INDIRECT, OPD_READ),
          arg(adt, pecell, 0, OPD_ARG_INDIRECT, OPD_READ),
          arg(adt, pecell, 1, OPD_ARG_INDIRECT, OPD_READ),
          arg(res, pecell, 0, OPD_ARG_INDIRECT, OPD_INC),
          arg(res, pecell, 1, OPD_ARG_INDIRECT, OPD_INC)};
      const opd_arg updArgs[] = {
          arg(q, nullptr, 0, OPD_ARG_DIRECT, OPD_RW),
          arg(res, nullptr, 0, OPD_ARG_DIRECT, OPD_RW),
          arg(adt, nullptr, 0, OPD_ARG_DIRECT, OPD_READ),
          arg(nullptr, nullptr, 0, OPD_ARG_REDUCTION, OPD_SUM)};
      Ctx c;
      c.x = static_cast<const double *>(x->data);
      c.q = static_cast<double *>(q->data);
      c.qin = c.q;
      c.adt = static_cast<double *>(adt->data);
      c.adtIn = c.adt;
      c.res = static_cast<double *>(res->data);
      const int64_t lo[3] = {K, 0, 0}, lo1[3] = {K - 1, 0, 0}, hi[3] = {};
      if (ca)
        opd_loop_extend_next(lo, hi);
      opd_loop *l1 = opd_loop_prepare(&slots[base], ca ? "adt_ca" : "adt_plain",
                                      cells, 6, adtArgs);
      c.m1 = pcell->data;
      opd_loop_run(l1, adtCalc, &c);
      check(!dist::setGroupInFlight(),
            "the grouped exchange is still in flight after adt_calc");
      if (ca)
        opd_loop_extend_next(lo1, hi);
      opd_loop *l2 = opd_loop_prepare(&slots[base + 1],
                                      ca ? "res_ca" : "res_plain", edges, 8,
                                      resArgs);
      c.m1 = pedge->data;
      c.m2 = pecell->data;
      // Odd iterations run the extended res_calc phase by phase: layers
      // 2.. (K >= 3) are a fourth plan part there.
      if (ca && it % 2 == 1) {
        const int32_t parts = runByPhases(l2, resCalc, &c);
        int deep = split && l2->plan && l2->plan->deep.nblocks > 0;
        dist::allreduce(&deep, OPD_I32, OPD_MAX, 1);
        check(parts == (split && l2->plan && l2->plan->deep.nblocks > 0 ? 4 : 3),
              "res_ca has " + std::to_string(parts) + " plan parts");
        check(deep == (split && K >= 3 ? 1 : 0),
              "no rank runs res_ca's layers 2.. as a part of their own");
      } else {
        opd_loop_run(l2, resCalc, &c);
      }
      opd_loop *l3 = opd_loop_prepare(&slots[base + 2],
                                      ca ? "update_ca" : "update_plain", cells,
                                      4, updArgs);
      const int64_t chunks = opd_loop_chunks(l3);
      std::vector<double> partials(std::size_t(std::max<int64_t>(chunks, 1)), 0.0);
      c.partials = partials.data();
      opd_loop_run(l3, update, &c);
      for (int64_t k = 0; k < chunks; ++k)
        rms[ca] += partials[std::size_t(k)];
      dist::allreduce(&rms[ca], OPD_F64, OPD_SUM, 1);
      const int64_t m = l1->messages + l2->messages + l3->messages;
      if (ca) {
        caLoopMessages += m;
        if (split)
          check(l1->execLayers == K && l2->execLayers == K - 1 &&
                    l3->execLayers == 0,
                "the CA loops run " + std::to_string(l1->execLayers) + ", " +
                    std::to_string(l2->execLayers) + ", " +
                    std::to_string(l3->execLayers) + " exec layers");
      } else {
        plainMessages = m;
      }
      l1->messages = l2->messages = l3->messages = 0;
    }
    check(std::memcmp(&rms[0], &rms[1], sizeof(double)) == 0,
          "iteration " + std::to_string(it) + ": rms differs");
    check(std::memcmp(qp->data, qc->data, std::size_t(cells->owned) * 32) == 0,
          "iteration " + std::to_string(it) + ": q differs");
    check(std::memcmp(adtp->data, adtc->data, std::size_t(cells->owned) * 8) ==
              0,
          "iteration " + std::to_string(it) + ": adt differs");
  }
  (void)groupFlying;
  check(caLoopMessages == 0, "the CA chain's loops sent " +
                                 std::to_string(caLoopMessages) + " messages");
  // Figures: messages per chain iteration (the last), summed over ranks.
  int64_t figures[3] = {plainMessages, caMessages, int64_t(cellPeers.size())};
  (void)figures;
  dist::allreduce(figures, OPD_I64, OPD_SUM, 3);
  int total = failures;
  dist::allreduce(&total, OPD_I32, OPD_SUM, 1);
  if (me == 0) {
    std::printf("%d ranks, %lld layers: messages per chain iteration over all "
                "ranks: plain %lld, communication-avoiding %.1f (grouped; "
                "%lld rank pairs)\n",
                dist::ranks(), (long long)K, (long long)figures[0],
                double(figures[1]) / iterations, (long long)figures[2]);
    if (total == 0)
      std::printf("ca-sets ok\n");
  }
  opd_rt_finalize();
  return total == 0 ? 0 : 1;
}
