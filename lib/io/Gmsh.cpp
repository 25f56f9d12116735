// Gmsh.cpp - Sets, maps and dats from Gmsh meshes (.msh version 4.1, ASCII
// and binary, and version 2.2 ASCII, which many tools still write), for
// `set/map/dat ... from FILE` when FILE is a .msh file.
// SPDX-License-Identifier: Apache-2.0
//
// Users make meshes with Gmsh; this reader turns one into the program's
// declarations by name, so a finite-volume program runs on it unchanged
// (docs/gmsh.md has the full table, examples/gmsh an example):
//   sets   `nodes` (every node), `cells` (the elements of the highest
//          dimension, one element type), `faces` (faces shared by two
//          cells, in the order cells first reach them), an element type
//          (`points lines triangles quads tets hexes prisms pyramids`:
//          all elements of that type), or a physical group's name (its
//          elements, one type);
//   maps   an element set -> `nodes` (arity: nodes per element, Gmsh's
//          node order), `faces` -> `cells` [2] (the cell whose node order
//          the face follows first), a group of cell faces (a boundary
//          group) -> `cells` [1];
//   dats   on `nodes`, f64/f32 [1..3]: the coordinates; on an element set,
//          i32/i64 [1]: the physical tag of the element's entity (0: none).
// Elements keep the file's order, nodes too (tags need not be contiguous).
//
// Reading in slices: the file is streamed (a 1 MiB window, never the whole
// file), and no rank keeps a mesh-sized array for the sets, maps and dats
// that come straight from the file. A first pass on every rank (cached per
// file) validates the whole file and keeps only what is proportional to
// the file's structure: physical names, entities, the blocks' headers
// (type, entity, count) and positions (below), and the node tags as runs
// of consecutive tags (tag -> file-order index; one run per block, or one
// in all, when tags are contiguous). Scattered tags (more than
// OPD_GMSH_MAX_RUNS runs, default 65536) are not kept whole anywhere: each
// rank keeps the (tag, index) pairs of the tags hashed to it, checks the
// elements' references to them (the first error over all ranks, by file
// position, is agreed on), and map rows ask the owners for their nodes'
// indices (two all-to-alls per map). Every set but `faces` is a union of
// whole element blocks, so its size comes from the headers. Each set is
// then sliced like one read from HDF5 (dist::sliceSet): a map or dat
// declaration reads only this rank's rows [first, first + count)
// (dist::fileRows) of that set, which dist::placeRows moves to where the
// set's elements live. The first pass records where each block's rows lie
// (Rows: the byte offset of its first row, and in ASCII files of every
// 4096th), so a declaration seeks straight to its rows: a map to nodes
// reads the element blocks of its set, a coordinate dat the coordinate
// rows of $Nodes, and no other section. (The first pass reads the element
// data whole, every reference to a node being checked; binary coordinates
// are skipped with seeks.)
// Every rank validates the whole file in the first pass, so a bad file is
// reported by every rank with the same message, and none waits for
// another. Errors name the file and line (ASCII) or byte offset (binary),
// the section and what was expected. Unknown sections ($Periodic,
// $NodeData, ...) are skipped.
//
// Faces (`faces`, its maps and the boundary groups' maps) are matched
// over the ranks (buildFaces): the faces of each rank's slice of cells go
// to the rank their sorted nodes hash to, which pairs them; interior faces
// are numbered in the order cells first reach them with a prefix sum over
// the ranks, and boundary faces stay at their matching rank for the
// boundary groups' lookups. No rank holds a whole-mesh face table.
//
// Each map or dat declaration reads its rows again (docs/gmsh.md, "Many
// processes"): at one rank a map to nodes re-reads its element blocks and
// a coordinate dat the coordinates, the price of keeping no more than a
// slice.
//
// This file holds the sets, maps and dats made from a mesh and its faces;
// the first pass is GmshParse.cpp, what both share GmshImpl.h.
#include "io/Gmsh.h"
#include "core/Dist.h"
#include "core/Objects.h"
#include "core/Runtime.h"
#include "io/GmshImpl.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace opdc::rt::gmsh {
namespace {

// Faces of a cell type in Gmsh's node numbering (oriented outwards for
// the 2D types; 3D faces by Gmsh's reference element).
const std::vector<std::vector<int>> &cellFaces(int type) {
  static const std::map<int, std::vector<std::vector<int>>> faces = {
      {2, {{0, 1}, {1, 2}, {2, 0}}},
      {3, {{0, 1}, {1, 2}, {2, 3}, {3, 0}}},
      {4, {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}}},
      {5,
       {{0, 3, 2, 1},
        {0, 1, 5, 4},
        {0, 4, 7, 3},
        {1, 2, 6, 5},
        {2, 3, 7, 6},
        {4, 5, 6, 7}}}};
  static const std::vector<std::vector<int>> none;
  auto it = faces.find(type);
  return it == faces.end() ? none : it->second;
}

/// OPD_GMSH_SLICES=1: each rank tells (stderr) which rows of a set it kept
/// from the file and, when tags are scattered, how many tags it owns
/// (tests/mpi: every rank keeps just its slice).
bool reporting() {
  static const bool on = [] {
    const char *v = std::getenv("OPD_GMSH_SLICES");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}

void reportKept(const Mesh &m, const std::string &set, int64_t first,
                int64_t count, int64_t total) {
  if (reporting())
    std::fprintf(
        stderr,
        "gmsh: rank %d of %d: %s: set %s: kept rows %lld-%lld of %lld\n",
        dist::rank(), dist::ranks(), m.file.c_str(), set.c_str(),
        (long long)first, (long long)(first + count), (long long)total);
}

Mesh &meshOf(const char *file) {
  static std::map<std::string, std::unique_ptr<Mesh>> cache;
  std::unique_ptr<Mesh> &m = cache[file ? file : ""];
  if (!m) {
    auto fresh = std::make_unique<Mesh>();
    parse(file ? file : "", *fresh);
    m = std::move(fresh);
    if (m->scattered && reporting())
      std::fprintf(stderr,
                   "gmsh: rank %d of %d: %s: node tags scattered: "
                   "this rank owns %lld of %lld\n",
                   dist::rank(), dist::ranks(), m->file.c_str(),
                   (long long)m->owned.size(), (long long)m->nodes);
  }
  return *m;
}

/// The coordinates of nodes [first, first + count), 3 a node: each
/// $Nodes block's rows among them, reached through its Rows.
std::vector<double> nodeRows(Mesh &m, int64_t first, int64_t count) {
  static const std::string axis[3] = {"the x coordinate of a node",
                                      "the y coordinate of a node",
                                      "the z coordinate of a node"};
  static const std::string param = "a parametric coordinate of a node";
  std::vector<double> xyz;
  xyz.reserve(std::size_t(count) * 3);
  Reader r(m.file);
  int64_t seen = 0; // nodes before block b
  for (const NodeBlock &b : m.nodeBlocks) {
    const int64_t lo = std::clamp(first - seen, int64_t(0), b.count);
    const int64_t hi = std::clamp(first + count - seen, lo, b.count);
    seen += b.count;
    if (lo == hi)
      continue;
    seekRow(r, m, "$Nodes", b.coords, lo, b.lead + b.perNode, 8);
    for (int64_t i = lo; i < hi; ++i) {
      r.skipWords(b.lead, "a node tag");
      for (int k = 0; k < 3; ++k)
        xyz.push_back(r.real(axis[k]));
      for (int k = 3; k < b.perNode; ++k)
        r.real(param);
    }
  }
  reportKept(m, "nodes", first, int64_t(xyz.size() / 3), m.nodes);
  return xyz;
}

/// An element set: its type and which blocks (in file order) make it.
struct Selection {
  const TypeInfo *info = nullptr;
  std::vector<char> blocks;
  int64_t size = 0;
};

int topDim(const Mesh &m) {
  int d = -1;
  for (const auto &[type, n] : m.typeCount)
    d = std::max(d, typeInfo(type)->dim);
  return d;
}

std::string typesText(const Mesh &m, int dim) {
  std::string s;
  for (const auto &[type, n] : m.typeCount)
    if (typeInfo(type)->dim == dim)
      s += std::string(s.empty() ? "" : ", ") + typeInfo(type)->name;
  return s;
}

Selection ofType(const Mesh &m, const TypeInfo *info) {
  Selection s;
  s.info = info;
  s.blocks.resize(m.blocks.size());
  for (std::size_t b = 0; b < m.blocks.size(); ++b)
    if (m.blocks[b].info == info) {
      s.blocks[b] = 1;
      s.size += m.blocks[b].count;
    }
  return s;
}

/// The cells: elements of the top dimension, one type.
Selection cells(const Mesh &m) {
  int d = topDim(m);
  const TypeInfo *c = nullptr;
  for (const auto &[type, n] : m.typeCount)
    if (typeInfo(type)->dim == d) {
      if (c)
        failf("%s: set 'cells': the %dD elements have several types (%s); "
              "declare one set per type (e.g. 'triangles') instead",
              m.file.c_str(), d, typesText(m, d).c_str());
      c = typeInfo(type);
    }
  if (!c)
    failf("%s: set 'cells': the mesh has no elements", m.file.c_str());
  return ofType(m, c);
}

/// The elements a set name stands for (nodes and faces aside).
Selection elementSet(const Mesh &m, const std::string &name) {
  for (const TypeInfo &t : Types)
    if (name == t.name) {
      if (!m.typeCount.count(t.type))
        failf("%s: set '%s': the mesh has no %s", m.file.c_str(), name.c_str(),
              t.name);
      return ofType(m, &t);
    }
  if (name == "cells")
    return cells(m);
  auto pn = m.physicalNames.find(name);
  if (pn == m.physicalNames.end()) {
    std::string groups;
    for (const auto &[g, dt] : m.physicalNames)
      groups += (groups.empty() ? "" : ", ") + g;
    failf("%s: no set '%s' in the Gmsh mesh: sets are nodes, cells, faces, "
          "an element type (points lines triangles quads tets hexes prisms "
          "pyramids) or a physical group (this file's: %s)",
          m.file.c_str(), name.c_str(),
          groups.empty() ? "none" : groups.c_str());
  }
  auto [dim, tag] = pn->second;
  Selection found;
  for (const auto &[type, count] : m.typeCount) {
    const TypeInfo *info = typeInfo(type);
    if (info->dim != dim)
      continue;
    Selection mine;
    mine.info = info;
    mine.blocks.resize(m.blocks.size());
    for (std::size_t b = 0; b < m.blocks.size(); ++b) {
      const Block &k = m.blocks[b];
      if (k.info != info || k.count == 0)
        continue;
      auto ph = m.physicals.find({dim, k.entity});
      if (ph != m.physicals.end() &&
          std::find(ph->second.begin(), ph->second.end(), tag) !=
              ph->second.end()) {
        mine.blocks[b] = 1;
        mine.size += k.count;
      }
    }
    if (mine.size == 0)
      continue;
    if (found.info)
      failf("%s: set '%s': physical group '%s' holds elements of several "
            "types (%s and %s); split it into one group per type",
            m.file.c_str(), name.c_str(), name.c_str(), found.info->name,
            info->name);
    found = std::move(mine);
  }
  if (!found.info)
    failf("%s: set '%s': physical group '%s' (dimension %d, tag %d) has no "
          "elements (is $Entities present, with the group on its entities?)",
          m.file.c_str(), name.c_str(), name.c_str(), dim, tag);
  return found;
}

/// Rows [first, first + count) of an element set: node indices (arity
/// per row) and element tags, read from the set's blocks' rows among them
/// (reached through their Rows; the first pass validated them).
/// Collective when tags are scattered.
void elementRows(Mesh &m, const std::string &name, const Selection &s,
                 int64_t first, int64_t count, std::vector<int32_t> &nodes,
                 std::vector<int64_t> &tags) {
  static const std::string elementTag = "an element tag";
  static const std::string nodeTag = "a node tag";
  const int arity = s.info->nodes;
  nodes.clear();
  tags.clear();
  tags.reserve(std::size_t(count));
  std::vector<int64_t> nodeTags; // scattered tags: asked of their owners
  if (m.scattered)
    nodeTags.reserve(std::size_t(count * arity));
  else
    nodes.reserve(std::size_t(count * arity));
  Reader r(m.file);
  int64_t row = 0; // the set's rows before block b
  for (std::size_t b = 0; b < m.blocks.size(); ++b) {
    if (!s.blocks[b])
      continue;
    const Block &k = m.blocks[b];
    const int64_t lo = std::clamp(first - row, int64_t(0), k.count);
    const int64_t hi = std::clamp(first + count - row, lo, k.count);
    row += k.count;
    if (lo == hi)
      continue;
    seekRow(r, m, "$Elements", k.rows, lo, 1 + k.skip + arity, m.dataSize);
    for (int64_t i = lo; i < hi; ++i) {
      tags.push_back(r.count(elementTag));
      r.skipWords(k.skip, "an element's type or tags");
      for (int j = 0; j < arity; ++j) {
        const int64_t node = r.count(nodeTag);
        if (m.scattered)
          nodeTags.push_back(node);
        else
          nodes.push_back(int32_t(nodeIndex(m, node)));
      }
    }
  }
  if (m.scattered)
    nodes = resolveTags(m, nodeTags);
  reportKept(m, name, first, int64_t(tags.size()), s.size);
}

/// Rank r's slice of n elements starts at sliceStart(n, r) (as
/// mpi/Slices.cpp's sliceLo); sliceOwner is the rank whose slice holds g.
int64_t sliceStart(int64_t n, int r) {
  const int64_t p = dist::ranks();
  return n / p * r + (n % p) * r / p;
}
int sliceOwner(int64_t n, int64_t g) {
  const int p = dist::ranks();
  int r = n > 0 ? int(double(g) / double(n) * double(p)) : 0;
  r = std::min(std::max(r, 0), p - 1);
  while (r + 1 < p && sliceStart(n, r + 1) <= g)
    ++r;
  while (r > 0 && sliceStart(n, r) > g)
    --r;
  return r;
}

/// The rank that matches a face: a hash of its sorted nodes.
int faceOwnerRank(const int64_t *key, int k) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < k; ++i)
    h = (h ^ uint64_t(key[i])) * 1099511628211ull;
  h ^= h >> 29;
  return int(h % uint64_t(dist::ranks()));
}

/// All-to-all of rows of int64 (send[q] to rank q, emptied); what the
/// ranks sent here, in rank order. Collective.
std::vector<int64_t> exchangeRows(std::vector<std::vector<int64_t>> &send) {
  std::vector<int> from;
  std::vector<int64_t> got = dist::exchangeIds(send, from);
  for (auto &v : send)
    std::vector<int64_t>().swap(v);
  return got;
}

/// The faces, matched over the ranks (collective; no rank holds more than
/// its share): each rank sends each face of its cells (sorted nodes, cell,
/// local face, oriented nodes, element tag) to the rank its sorted nodes
/// hash to; there a face met twice is interior, once a boundary face (kept
/// there for the boundary groups' maps), three times an error. Interior
/// faces go to the rank holding their first cell (the one that reaches it
/// first, by cell then local face), which sorts them so; a prefix sum over
/// the ranks numbers them as one process would (cells in order, each
/// cell's new faces in its face order), and each face's row goes to the
/// rank whose slice of `faces` holds it.
/// buildFaces, step 1: each face of this rank's cells as a record of
/// 2 k + 3 words (its sorted nodes, cell, face, nodes in the cell's order,
/// the cell's tag) sent to the rank its sorted nodes hash to. Returns the
/// records this rank got. Collective.
std::vector<int64_t> gatherFaces(Mesh &m, const Selection &c,
                                 const std::vector<std::vector<int>> &faces) {
  const int k = m.faceArity;
  const int nf = int(faces.size());
  const int arity = c.info->nodes;
  const std::size_t np = std::size_t(dist::ranks());
  int64_t first = 0, count = 0;
  dist::fileRows(c.size, first, count);
  std::vector<int32_t> cn;
  std::vector<int64_t> ctags;
  elementRows(m, "cells (for the faces)", c, first, count, cn, ctags);

  // 1. Each face of this rank's cells to its matching rank, in rounds of
  // at most 2^16 cells a rank (the messages stay small next to what the
  // matching ranks collect).
  const std::size_t R = std::size_t(2 * k + 3);
  constexpr int64_t Batch = int64_t(1) << 16;
  int64_t rounds = (count + Batch - 1) / Batch;
  dist::allreduce(&rounds, OPD_I64, OPD_MAX, 1);
  std::vector<int64_t> got;
  std::vector<std::vector<int64_t>> send(np);
  std::vector<int64_t> rec(R);
  for (int64_t round = 0; round < rounds; ++round) {
    const int64_t lo = std::min(count, round * Batch);
    const int64_t hi = std::min(count, lo + Batch);
    for (int64_t i = lo; i < hi; ++i)
      for (int j = 0; j < nf; ++j) {
        for (int t = 0; t < k; ++t)
          rec[std::size_t(k + 2 + t)] = rec[std::size_t(t)] = cn[std::size_t(
              i * arity + faces[std::size_t(j)][std::size_t(t)])];
        std::sort(rec.begin(), rec.begin() + k);
        rec[std::size_t(k)] = first + i;
        rec[std::size_t(k + 1)] = j;
        rec[R - 1] = ctags[std::size_t(i)];
        auto &to = send[std::size_t(faceOwnerRank(rec.data(), k))];
        to.insert(to.end(), rec.begin(), rec.end());
      }
    const std::vector<int64_t> part = exchangeRows(send);
    got.insert(got.end(), part.begin(), part.end());
  }
  std::vector<int32_t>().swap(cn);
  std::vector<int64_t>().swap(ctags);
  return got;
}

void buildFaces(Mesh &m) {
  if (m.facesBuilt)
    return;
  const Selection c = cells(m);
  const auto &faces = cellFaces(c.info->type);
  if (faces.empty())
    failf("%s: set 'faces': faces of %s are not derived (triangles, quads, "
          "tets and hexes are)",
          m.file.c_str(), c.info->name);
  m.faceArity = int(faces[0].size());
  for (const auto &f : faces)
    if (int(f.size()) != m.faceArity)
      failf("%s: set 'faces': %s have faces of different sizes", m.file.c_str(),
            c.info->name);
  const int k = m.faceArity;
  const int nf = int(faces.size());
  const std::size_t np = std::size_t(dist::ranks());
  std::vector<int64_t> got = gatherFaces(m, c, faces);
  const std::size_t R = std::size_t(2 * k + 3);

  // 2. Matching: records by (sorted nodes, cell, face).
  const std::size_t n = got.size() / R;
  std::vector<std::size_t> order(n);
  for (std::size_t r = 0; r < n; ++r)
    order[r] = r;
  auto at = [&](std::size_t r) { return got.data() + r * R; };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::lexicographical_compare(at(a), at(a) + k + 2, at(b),
                                        at(b) + k + 2);
  });
  uint64_t bad = UINT64_MAX; // the first third cell of a face, (cell, face)
  int64_t badTags[3] = {0, 0, 0};
  const std::size_t W = std::size_t(k + 3); // first cell, face, second, nodes
  std::vector<std::vector<int64_t>> interior(np);
  for (std::size_t b = 0; b < n;) {
    std::size_t e = b + 1;
    while (e < n && std::equal(at(order[b]), at(order[b]) + k, at(order[e])))
      ++e;
    const int64_t *r0 = at(order[b]);
    if (e - b >= 3) {
      const int64_t *r2 = at(order[b + 2]);
      const uint64_t pos = uint64_t(r2[k]) * uint64_t(nf) + uint64_t(r2[k + 1]);
      if (pos < bad) {
        bad = pos;
        badTags[0] = r2[R - 1];
        badTags[1] = r0[R - 1];
        badTags[2] = at(order[b + 1])[R - 1];
      }
    } else if (e - b == 1) {
      m.boundary[std::vector<int64_t>(r0, r0 + k)] = r0[k];
    } else {
      auto &to = interior[std::size_t(sliceOwner(c.size, r0[k]))];
      to.push_back(r0[k]);
      to.push_back(r0[k + 1]);
      to.push_back(at(order[b + 1])[k]);
      to.insert(to.end(), r0 + k + 2, r0 + 2 * k + 2);
    }
    b = e;
  }
  std::vector<int64_t>().swap(got);
  std::vector<std::size_t>().swap(order);
  agreeFirst(bad, badTags, 3);
  if (bad != UINT64_MAX)
    failf("%s: set 'faces': a face of %s %lld is shared by more than "
          "two cells (element tags %lld, %lld): the mesh is not a "
          "manifold",
          m.file.c_str(), c.info->name, (long long)badTags[0],
          (long long)badTags[1], (long long)badTags[2]);

  // 3. Numbered in the order of their first cells.
  std::vector<int64_t> mine = exchangeRows(interior);
  const std::size_t nm = mine.size() / W;
  std::vector<std::size_t> byCell(nm);
  for (std::size_t r = 0; r < nm; ++r)
    byCell[r] = r;
  std::sort(byCell.begin(), byCell.end(), [&](std::size_t a, std::size_t b) {
    return std::lexicographical_compare(&mine[a * W], &mine[a * W] + 2,
                                        &mine[b * W], &mine[b * W] + 2);
  });
  std::vector<int64_t> counts(np, 0);
  counts[std::size_t(dist::rank())] = int64_t(nm);
  dist::allreduce(counts.data(), OPD_I64, OPD_SUM, int(np));
  int64_t offset = 0;
  for (int q = 0; q < dist::rank(); ++q)
    offset += counts[std::size_t(q)];
  m.faces = 0;
  for (int64_t v : counts)
    m.faces += v;

  // 4. Each face's row (id, cells, nodes) to its slice of `faces`.
  std::vector<std::vector<int64_t>> rows(np);
  for (std::size_t i = 0; i < nm; ++i) {
    const int64_t *r = &mine[byCell[i] * W];
    const int64_t id = offset + int64_t(i);
    auto &to = rows[std::size_t(sliceOwner(m.faces, id))];
    to.push_back(id);
    to.push_back(r[0]);
    to.push_back(r[2]);
    to.insert(to.end(), r + 3, r + W);
  }
  std::vector<int64_t>().swap(mine);
  const std::vector<int64_t> placed = exchangeRows(rows);
  int64_t fFirst = 0, fCount = 0;
  dist::fileRows(m.faces, fFirst, fCount);
  m.faceCells.assign(std::size_t(fCount) * 2, -1);
  m.faceNodes.assign(std::size_t(fCount) * std::size_t(k), -1);
  for (std::size_t i = 0; i < placed.size() / W; ++i) {
    const int64_t *r = &placed[i * W];
    const std::size_t l = std::size_t(r[0] - fFirst);
    m.faceCells[2 * l] = int32_t(r[1]);
    m.faceCells[2 * l + 1] = int32_t(r[2]);
    for (int t = 0; t < k; ++t)
      m.faceNodes[l * std::size_t(k) + std::size_t(t)] = int32_t(r[3 + t]);
  }
  m.facesBuilt = true;
}

int64_t setSize(Mesh &m, const std::string &name) {
  if (name == "nodes")
    return m.nodes;
  if (name == "faces") {
    buildFaces(m);
    return m.faces;
  }
  return elementSet(m, name).size;
}

} // namespace

bool isGmshFile(const char *file) {
  if (!file)
    return false;
  std::string f(file);
  if (f.size() >= 4 && f.compare(f.size() - 4, 4, ".msh") == 0)
    return true;
  std::ifstream in(f, std::ios::binary);
  char head[12] = {};
  in.read(head, 11);
  return std::strncmp(head, "$MeshFormat", 11) == 0;
}

// Each rank stores its slice of the set until the partition, as for HDF5.
opd_set *setFromFile(const char *name, const char *file) {
  Mesh &m = meshOf(file);
  opd_set *set = opd_set_create(name, setSize(m, name ? name : ""));
  dist::sliceSet(set);
  return set;
}

opd_map *mapFromFile(const char *name, opd_set *from, opd_set *to, int arity,
                     const char *file) {
  Mesh &m = meshOf(file);
  opd_map *map = opd_map_create(name, from, to, arity);
  const std::string what = "map '" + map->name + "' (" + from->name + " -> " +
                           to->name + "[" + std::to_string(arity) + "])";
  auto arityMismatch = [&](int want, const char *why) {
    failf("%s: %s: arity %d, but %s has %d", m.file.c_str(), what.c_str(),
          arity, why, want);
  };
  if (setSize(m, from->name) != from->globalSize ||
      setSize(m, to->name) != to->globalSize)
    failf("%s: %s: the sets were not declared from this file", m.file.c_str(),
          what.c_str());
  const int64_t n = from->globalSize;
  int64_t first = 0, count = 0;
  dist::fileRows(n, first, count);
  std::vector<int32_t> rows; // this rank's rows, in file order
  if (to->name == "nodes" && from->name == "faces") {
    buildFaces(m);
    if (arity != m.faceArity)
      arityMismatch(m.faceArity, "a face");
    rows = m.faceNodes;
  } else if (to->name == "nodes") {
    Selection s = elementSet(m, from->name);
    if (arity != s.info->nodes)
      arityMismatch(s.info->nodes,
                    (std::string("each of ") + s.info->name).c_str());
    std::vector<int64_t> tags;
    elementRows(m, from->name, s, first, count, rows, tags);
  } else if (to->name == "cells" && from->name == "faces") {
    buildFaces(m);
    if (arity != 2)
      arityMismatch(2, "a face (its two cells)");
    rows = m.faceCells;
  } else if (to->name == "cells") {
    // A boundary group: each element of this rank's rows is looked up at
    // the rank its sorted nodes hash to (buildFaces kept the unshared
    // faces there); the first element off the boundary over all ranks is
    // reported by every rank.
    buildFaces(m);
    Selection s = elementSet(m, from->name);
    if (arity != 1)
      arityMismatch(1, "a boundary face (its cell)");
    const Selection c = cells(m);
    if (s.info->dim != c.info->dim - 1)
      failf("%s: %s: '%s' holds %s, not faces of the cells (%s)",
            m.file.c_str(), what.c_str(), from->name.c_str(), s.info->name,
            c.info->name);
    std::vector<int32_t> gn;
    std::vector<int64_t> gtags;
    elementRows(m, from->name, s, first, count, gn, gtags);
    const int k = s.info->nodes;
    const std::size_t np = std::size_t(dist::ranks());
    std::vector<std::vector<int64_t>> ask(np);
    std::vector<int> dest(static_cast<std::size_t>(count));
    std::vector<int64_t> key(static_cast<std::size_t>(k));
    for (int64_t i = 0; i < count; ++i) {
      for (int t = 0; t < k; ++t)
        key[std::size_t(t)] = gn[std::size_t(i * k + t)];
      std::sort(key.begin(), key.end());
      dest[std::size_t(i)] = faceOwnerRank(key.data(), k);
      auto &to = ask[std::size_t(dest[std::size_t(i)])];
      to.insert(to.end(), key.begin(), key.end());
    }
    std::vector<int> askedFrom;
    const std::vector<int64_t> asked = dist::exchangeIds(ask, askedFrom);
    std::vector<std::vector<int64_t>> answer(np);
    for (std::size_t q = 0; q < np; ++q)
      for (int j = askedFrom[q]; j < askedFrom[q + 1]; j += k) {
        auto it = m.boundary.find(
            std::vector<int64_t>(asked.begin() + j, asked.begin() + j + k));
        answer[q].push_back(it == m.boundary.end() ? -1 : it->second);
      }
    std::vector<int> back;
    const std::vector<int64_t> got = dist::exchangeIds(answer, back);
    std::vector<int> next(back.begin(), back.end() - 1);
    uint64_t off = UINT64_MAX; // the first row off the boundary
    int64_t offTag = 0;
    rows.resize(std::size_t(count));
    for (int64_t i = 0; i < count; ++i) {
      const int64_t cell =
          got[std::size_t(next[std::size_t(dest[std::size_t(i)])]++)];
      if (cell < 0 && off == UINT64_MAX) {
        off = uint64_t(first + i);
        offTag = gtags[std::size_t(i)];
      }
      rows[std::size_t(i)] = int32_t(cell);
    }
    agreeFirst(off, &offTag, 1);
    if (off != UINT64_MAX)
      failf("%s: %s: %s element %lld is not on the boundary of the cells "
            "(no cell has it as an unshared face)",
            m.file.c_str(), what.c_str(), s.info->name, (long long)offTag);
  } else {
    failf("%s: %s: a Gmsh mesh gives maps from element sets to 'nodes', "
          "'faces' -> 'cells'[2] and boundary groups -> 'cells'[1]",
          m.file.c_str(), what.c_str());
  }
  // Every index against the whole target set (file-order positions).
  for (std::size_t k = 0; k < rows.size(); ++k)
    if (rows[k] < 0 || rows[k] >= to->globalSize)
      failf("%s: %s: index %d at [%lld][%lld] is out of range for set '%s' "
            "of size %lld",
            m.file.c_str(), what.c_str(), int(rows[k]),
            (long long)(first + int64_t(k) / arity),
            (long long)(int64_t(k) % arity), to->name.c_str(),
            (long long)to->globalSize);
  dist::placeRows(from, rows.data(), std::size_t(arity) * sizeof(int32_t),
                  map->data);
  ++map->version;
  return map;
}

opd_dat *datFromFile(const char *name, opd_set *set, opd_scalar type, int dim,
                     const char *file) {
  Mesh &m = meshOf(file);
  opd_dat *dat = opd_dat_create(name, set, type, dim);
  const std::string what = "dat '" + dat->name + "' on set '" + set->name +
                           "' (" + scalarName(type) + "[" +
                           std::to_string(dim) + "])";
  if (setSize(m, set->name) != set->globalSize)
    failf("%s: %s: the set was not declared from this file", m.file.c_str(),
          what.c_str());
  // This rank's rows only (dist::fileRows); dist::placeRows puts them
  // where the set's elements are: sliced, whole, partitioned or renumbered.
  int64_t first = 0, count = 0;
  dist::fileRows(set->globalSize, first, count);
  const std::size_t eb = std::size_t(dat->elementBytes());
  std::vector<char> image(std::size_t(count) * eb);
  if (set->name == "nodes") {
    if ((type != OPD_F64 && type != OPD_F32) || dim < 1 || dim > 3)
      failf("%s: %s: a dat on 'nodes' holds the coordinates: f64 or f32 "
            "with 1 to 3 components",
            m.file.c_str(), what.c_str());
    const std::vector<double> xyz = nodeRows(m, first, count);
    for (int64_t i = 0; i < count; ++i)
      for (int k = 0; k < dim; ++k) {
        double v = xyz[std::size_t(i * 3 + k)];
        if (type == OPD_F64)
          reinterpret_cast<double *>(image.data())[i * dim + k] = v;
        else
          reinterpret_cast<float *>(image.data())[i * dim + k] = float(v);
      }
  } else if (set->name != "faces") {
    if ((type != OPD_I32 && type != OPD_I64) || dim != 1)
      failf("%s: %s: a dat on an element set holds each element's physical "
            "tag: i32 or i64 with 1 component",
            m.file.c_str(), what.c_str());
    // From the blocks' entities alone: no pass over the file.
    const Selection s = elementSet(m, set->name);
    int64_t row = 0; // the set's rows before block b
    for (std::size_t b = 0; b < m.blocks.size(); ++b) {
      if (!s.blocks[b])
        continue;
      const Block &k = m.blocks[b];
      auto ph = m.physicals.find({k.info->dim, k.entity});
      int64_t tag = ph == m.physicals.end() || ph->second.empty()
                        ? 0
                        : ph->second.front();
      const int64_t lo = std::max(row, first);
      const int64_t hi = std::min(row + k.count, first + count);
      for (int64_t j = lo; j < hi; ++j) {
        if (type == OPD_I64)
          reinterpret_cast<int64_t *>(image.data())[j - first] = tag;
        else
          reinterpret_cast<int32_t *>(image.data())[j - first] = int32_t(tag);
      }
      row += k.count;
    }
  } else {
    failf("%s: %s: a Gmsh mesh has no data on 'faces' (compute it with a "
          "loop over the faces)",
          m.file.c_str(), what.c_str());
  }
  dist::placeRows(set, image.data(), eb, dat->data);
  return dat;
}

} // namespace opdc::rt::gmsh
