// Gmsh.cpp - Sets, maps and dats from Gmsh meshes (.msh version 4.1, ASCII
// and binary), for `set/map/dat ... from FILE` when FILE is a .msh file.
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
// Parsed once per file; every rank parses the file itself (every rank then
// reports a bad file, and none waits for another). Errors name the file
// and line (ASCII) or byte offset (binary), the section and what was
// expected. Unknown sections ($Periodic, $NodeData, ...) are skipped.
#include "core/Dist.h"
#include "core/Objects.h"
#include "core/Runtime.h"
#include "io/Gmsh.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <array>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace opdc::rt::gmsh {
namespace {

struct TypeInfo {
  int type;
  const char *name; // the set name
  int dim, nodes;
};
// Gmsh's first-order element types (and the point).
constexpr TypeInfo Types[] = {
    {15, "points", 0, 1}, {1, "lines", 1, 2},   {2, "triangles", 2, 3},
    {3, "quads", 2, 4},   {4, "tets", 3, 4},    {5, "hexes", 3, 8},
    {6, "prisms", 3, 6},  {7, "pyramids", 3, 5}};

const TypeInfo *typeInfo(int type) {
  for (const TypeInfo &t : Types)
    if (t.type == type)
      return &t;
  return nullptr;
}

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

struct Elements {
  const TypeInfo *info = nullptr;
  std::vector<int64_t> tags;
  std::vector<int32_t> nodes; // node indices, info->nodes per element
  std::vector<int> entity;    // entity tag per element
};

struct Mesh {
  std::string file;
  bool binary = false;
  std::vector<double> xyz; // 3 per node, in file order
  std::unordered_map<int64_t, int32_t> nodeIndex;
  std::map<int, Elements> byType; // element type -> its elements
  std::map<std::pair<int, int>, std::vector<int>> physicals; // (dim, entity)
  std::map<std::string, std::pair<int, int>> physicalNames; // -> (dim, tag)
  // Derived on first use.
  bool facesBuilt = false;
  int cellType = 0;
  std::vector<int32_t> faceNodes, faceCells; // per interior face
  int faceArity = 0;
  std::map<std::vector<int32_t>, int32_t> faceOwner; // sorted nodes -> cell
};

class Reader {
public:
  Reader(const std::string &file, const std::string &buf)
      : file(file), buf(buf) {}

  [[noreturn]] void fail(const std::string &what) const {
    if (binary && inData)
      failf("%s: byte %zu: %s%s", file.c_str(), pos, where().c_str(),
            what.c_str());
    failf("%s:%d: %s%s", file.c_str(), line(), where().c_str(), what.c_str());
  }

  bool atEnd() {
    skipSpace();
    return pos >= buf.size();
  }

  std::string word(const char *expected) {
    skipSpace();
    if (pos >= buf.size())
      fail(std::string("unexpected end of file, expected ") + expected);
    std::size_t b = pos;
    while (pos < buf.size() && !std::isspace((unsigned char)buf[pos]))
      ++pos;
    return buf.substr(b, pos - b);
  }

  void expect(const char *marker) {
    std::string w = word(marker);
    if (w != marker)
      fail(std::string("expected ") + marker + ", found '" + shortText(w) + "'");
  }

  /// After a section's marker: binary data starts after its newline.
  void startData(const char *section) {
    this->section = section;
    if (binary) {
      while (pos < buf.size() && buf[pos] != '\n')
        ++pos;
      ++pos;
      inData = true;
    }
  }
  void endData(const char *endMarker) {
    inData = false;
    expect(endMarker);
    section.clear();
  }

  int64_t integer(const std::string &what, bool asSize) {
    if (binary && inData) {
      if (asSize && dataSize == 8)
        return int64_t(bin<uint64_t>(what));
      if (asSize)
        return int64_t(bin<uint32_t>(what));
      return bin<int32_t>(what);
    }
    std::string w = word(what.c_str());
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(w.c_str(), &end, 10);
    if (*end || errno)
      fail("expected " + what + " (an integer), found '" + shortText(w) + "'");
    return v;
  }
  int64_t count(const std::string &what) {
    int64_t v = integer(what, true);
    if (v < 0 || v > int64_t(1) << 40)
      fail(what + " " + std::to_string(v) + " is out of range");
    return v;
  }
  double real(const std::string &what) {
    if (binary && inData)
      return bin<double>(what);
    std::string w = word(what.c_str());
    char *end = nullptr;
    double v = std::strtod(w.c_str(), &end);
    if (*end)
      fail("expected " + what + " (a number), found '" + shortText(w) + "'");
    return v;
  }

  /// The rest of the current line (ASCII), without leading blanks.
  std::string restOfLine() {
    while (pos < buf.size() && (buf[pos] == ' ' || buf[pos] == '\t'))
      ++pos;
    std::size_t b = pos;
    while (pos < buf.size() && buf[pos] != '\n')
      ++pos;
    std::string s = buf.substr(b, pos - b);
    if (!s.empty() && s.back() == '\r')
      s.pop_back();
    return s;
  }

  void skipSection(const std::string &name) {
    std::string end = "$End" + name;
    std::size_t at = buf.find(end, pos);
    if (at == std::string::npos)
      fail("section $" + name + " has no " + end);
    pos = at + end.size();
  }

  const std::string &file;
  const std::string &buf;
  std::size_t pos = 0;
  bool binary = false;
  bool inData = false;
  int dataSize = 8;
  std::string section;

private:
  void skipSpace() {
    while (pos < buf.size() && std::isspace((unsigned char)buf[pos]))
      ++pos;
  }
  int line() const {
    return 1 + int(std::count(buf.begin(),
                              buf.begin() + std::ptrdiff_t(std::min(pos, buf.size())),
                              '\n'));
  }
  std::string where() const {
    return section.empty() ? std::string() : section + ": ";
  }
  static std::string shortText(const std::string &w) {
    std::string s = w.size() > 40 ? w.substr(0, 40) + "..." : w;
    for (char &c : s)
      if (!std::isprint((unsigned char)c))
        c = '?';
    return s;
  }
  template <typename T> T bin(const std::string &what) {
    if (pos + sizeof(T) > buf.size())
      fail("unexpected end of file, expected " + what + " (" +
           std::to_string(sizeof(T)) + " bytes)");
    T v;
    std::memcpy(&v, buf.data() + pos, sizeof v);
    pos += sizeof v;
    return v;
  }
};

void parseFormat(Reader &r, Mesh &m) {
  r.section = "$MeshFormat";
  std::string version = r.word("the format version");
  if (version != "4.1")
    r.fail("version " + version +
           "; this reader takes version 4.1 (gmsh -format msh41, or "
           "Mesh.MshFileVersion = 4.1)");
  int64_t fileType = r.integer("the file type (0 ASCII, 1 binary)", false);
  if (fileType != 0 && fileType != 1)
    r.fail("file type " + std::to_string(fileType) +
           ", expected 0 (ASCII) or 1 (binary)");
  int64_t dataSize = r.integer("the data size", false);
  if (dataSize != 8 && dataSize != 4)
    r.fail("data size " + std::to_string(dataSize) + ", expected 8 (or 4)");
  r.dataSize = int(dataSize);
  m.binary = r.binary = fileType == 1;
  if (r.binary) {
    r.startData("$MeshFormat");
    int32_t one = int32_t(r.integer("the integer 1 (byte order check)", false));
    if (one != 1)
      r.fail("the byte order check reads " + std::to_string(one) +
             " instead of 1: the file was written on a machine of the other "
             "byte order");
  }
  r.endData("$EndMeshFormat");
}

void parsePhysicalNames(Reader &r, Mesh &m) {
  r.section = "$PhysicalNames";
  int64_t n = r.count("the number of physical names");
  for (int64_t i = 0; i < n; ++i) {
    int dim = int(r.integer("a physical group's dimension", false));
    int tag = int(r.integer("a physical group's tag", false));
    std::string name = r.restOfLine();
    if (name.size() < 2 || name.front() != '"' || name.back() != '"')
      r.fail("expected a quoted name after dimension " + std::to_string(dim) +
             " and tag " + std::to_string(tag));
    name = name.substr(1, name.size() - 2);
    if (dim < 0 || dim > 3)
      r.fail("physical group '" + name + "' has dimension " +
             std::to_string(dim) + ", expected 0 to 3");
    m.physicalNames[name] = {dim, tag};
  }
  r.expect("$EndPhysicalNames");
  r.section.clear();
}

void parseEntities(Reader &r, Mesh &m) {
  r.startData("$Entities");
  int64_t counts[4];
  const char *kinds[4] = {"points", "curves", "surfaces", "volumes"};
  for (int d = 0; d < 4; ++d)
    counts[d] = r.count(std::string("the number of ") + kinds[d]);
  for (int d = 0; d < 4; ++d) {
    for (int64_t i = 0; i < counts[d]; ++i) {
      int tag = int(r.integer(std::string("a tag of ") + kinds[d], false));
      for (int k = 0; k < (d == 0 ? 3 : 6); ++k)
        r.real(d == 0 ? "a point coordinate" : "a bounding box coordinate");
      int64_t nphys = r.count("the number of physical tags");
      std::vector<int> &phys = m.physicals[{d, tag}];
      for (int64_t k = 0; k < nphys; ++k)
        phys.push_back(int(r.integer("a physical tag", false)));
      if (d > 0) {
        int64_t nb = r.count("the number of bounding entities");
        for (int64_t k = 0; k < nb; ++k)
          r.integer("a bounding entity tag", false);
      }
    }
  }
  r.endData("$EndEntities");
}

void parseNodes(Reader &r, Mesh &m) {
  r.startData("$Nodes");
  int64_t blocks = r.count("the number of entity blocks");
  int64_t total = r.count("the number of nodes");
  r.count("the smallest node tag");
  r.count("the largest node tag");
  m.xyz.reserve(std::size_t(total) * 3);
  for (int64_t b = 0; b < blocks; ++b) {
    int dim = int(r.integer("an entity dimension", false));
    r.integer("an entity tag", false);
    int64_t parametric = r.integer("the parametric flag (0 or 1)", false);
    if (dim < 0 || dim > 3 || (parametric != 0 && parametric != 1))
      r.fail("entity block " + std::to_string(b + 1) + ": dimension " +
             std::to_string(dim) + ", parametric " +
             std::to_string(parametric) + " (expected 0..3 and 0 or 1)");
    int64_t n = r.count("the number of nodes in the block");
    std::vector<int64_t> tags(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      tags[std::size_t(i)] = r.count("a node tag");
      auto [it, fresh] = m.nodeIndex.emplace(tags[std::size_t(i)],
                                             int32_t(m.xyz.size() / 3 + std::size_t(i)));
      if (!fresh)
        r.fail("node tag " + std::to_string(tags[std::size_t(i)]) +
               " appears twice");
    }
    for (int64_t i = 0; i < n; ++i) {
      const std::string node = " of node " + std::to_string(tags[std::size_t(i)]);
      m.xyz.push_back(r.real("the x coordinate" + node));
      m.xyz.push_back(r.real("the y coordinate" + node));
      m.xyz.push_back(r.real("the z coordinate" + node));
      for (int k = 0; k < (parametric ? dim : 0); ++k)
        r.real("a parametric coordinate" + node);
    }
  }
  if (int64_t(m.xyz.size() / 3) != total)
    r.fail("the header announces " + std::to_string(total) +
           " nodes, the blocks hold " + std::to_string(m.xyz.size() / 3));
  if (m.xyz.size() / 3 >= std::size_t(INT32_MAX))
    r.fail("more than 2^31 - 1 nodes: maps hold 32-bit indices");
  r.endData("$EndNodes");
}

void parseElements(Reader &r, Mesh &m) {
  r.startData("$Elements");
  int64_t blocks = r.count("the number of entity blocks");
  int64_t total = r.count("the number of elements");
  r.count("the smallest element tag");
  r.count("the largest element tag");
  int64_t seen = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    int dim = int(r.integer("an entity dimension", false));
    int entity = int(r.integer("an entity tag", false));
    int type = int(r.integer("an element type", false));
    const TypeInfo *info = typeInfo(type);
    if (!info)
      r.fail("element type " + std::to_string(type) +
             " is not supported (first-order points, lines, triangles, "
             "quads, tets, hexes, prisms and pyramids are: types 15, 1-7; "
             "mesh with Mesh.ElementOrder = 1)");
    if (info->dim != dim)
      r.fail("element type " + std::to_string(type) + " (" + info->name +
             ") in an entity of dimension " + std::to_string(dim));
    int64_t n = r.count("the number of elements in the block");
    Elements &e = m.byType[type];
    e.info = info;
    for (int64_t i = 0; i < n; ++i) {
      int64_t tag = r.count("an element tag");
      e.tags.push_back(tag);
      e.entity.push_back(entity);
      for (int k = 0; k < info->nodes; ++k) {
        int64_t node = r.count("node " + std::to_string(k + 1) + " of element " +
                               std::to_string(tag));
        auto it = m.nodeIndex.find(node);
        if (it == m.nodeIndex.end())
          r.fail("element " + std::to_string(tag) + " (" + info->name +
                 ") refers to node " + std::to_string(node) +
                 ", which $Nodes does not define");
        e.nodes.push_back(it->second);
      }
    }
    seen += n;
  }
  if (seen != total)
    r.fail("the header announces " + std::to_string(total) +
           " elements, the blocks hold " + std::to_string(seen));
  r.endData("$EndElements");
}

std::unique_ptr<Mesh> parse(const std::string &file) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    failf("cannot open Gmsh mesh '%s': %s", file.c_str(), std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string buf = ss.str();
  auto m = std::make_unique<Mesh>();
  m->file = file;
  Reader r(file, buf);
  bool format = false, nodes = false, elements = false;
  while (!r.atEnd()) {
    std::string s = r.word("a section");
    if (s.size() < 2 || s[0] != '$')
      r.fail("expected a section ($MeshFormat, $Nodes, ...), found '" +
             s.substr(0, 40) + "'");
    if (!format && s != "$MeshFormat")
      r.fail("expected $MeshFormat first, found " + s.substr(0, 40) +
             " (is this a Gmsh .msh file?)");
    if (s == "$MeshFormat") {
      parseFormat(r, *m);
      format = true;
    } else if (s == "$PhysicalNames") {
      parsePhysicalNames(r, *m);
    } else if (s == "$Entities") {
      parseEntities(r, *m);
    } else if (s == "$Nodes") {
      parseNodes(r, *m);
      nodes = true;
    } else if (s == "$Elements") {
      if (!nodes)
        r.fail("$Elements before $Nodes");
      parseElements(r, *m);
      elements = true;
    } else {
      r.skipSection(s.substr(1));
    }
  }
  if (!format || !nodes || !elements)
    failf("%s: not a complete Gmsh mesh: no %s section", file.c_str(),
          !format ? "$MeshFormat" : !nodes ? "$Nodes" : "$Elements");
  return m;
}

Mesh &meshOf(const char *file) {
  static std::map<std::string, std::unique_ptr<Mesh>> cache;
  std::unique_ptr<Mesh> &m = cache[file ? file : ""];
  if (!m)
    m = parse(file ? file : "");
  return *m;
}

int topDim(const Mesh &m) {
  int d = -1;
  for (const auto &[type, e] : m.byType)
    d = std::max(d, e.info->dim);
  return d;
}

std::string typesText(const Mesh &m, int dim) {
  std::string s;
  for (const auto &[type, e] : m.byType)
    if (e.info->dim == dim)
      s += std::string(s.empty() ? "" : ", ") + e.info->name;
  return s;
}

/// The cells: elements of the top dimension, one type.
const Elements &cells(const Mesh &m) {
  int d = topDim(m);
  const Elements *c = nullptr;
  for (const auto &[type, e] : m.byType)
    if (e.info->dim == d) {
      if (c)
        failf("%s: set 'cells': the %dD elements have several types (%s); "
              "declare one set per type (e.g. 'triangles') instead",
              m.file.c_str(), d, typesText(m, d).c_str());
      c = &e;
    }
  if (!c)
    failf("%s: set 'cells': the mesh has no elements", m.file.c_str());
  return *c;
}

std::vector<int32_t> faceKey(const Elements &c, int64_t cell,
                             const std::vector<int> &face) {
  std::vector<int32_t> key;
  for (int k : face)
    key.push_back(c.nodes[std::size_t(cell * c.info->nodes + k)]);
  std::sort(key.begin(), key.end());
  return key;
}

void buildFaces(Mesh &m) {
  if (m.facesBuilt)
    return;
  const Elements &c = cells(m);
  const auto &faces = cellFaces(c.info->type);
  if (faces.empty())
    failf("%s: set 'faces': faces of %s are not derived (triangles, quads, "
          "tets and hexes are)",
          m.file.c_str(), c.info->name);
  m.cellType = c.info->type;
  m.faceArity = int(faces[0].size());
  for (const auto &f : faces)
    if (int(f.size()) != m.faceArity)
      failf("%s: set 'faces': %s have faces of different sizes",
            m.file.c_str(), c.info->name);
  const int64_t n = int64_t(c.tags.size());
  std::map<std::vector<int32_t>, std::pair<int32_t, int32_t>> seen;
  std::vector<std::vector<int32_t>> keys;
  std::vector<std::vector<int32_t>> oriented;
  std::vector<std::array<int32_t, 2>> owners;
  for (int64_t cell = 0; cell < n; ++cell)
    for (const auto &f : faces) {
      std::vector<int32_t> key = faceKey(c, cell, f);
      auto it = seen.find(key);
      if (it == seen.end()) {
        seen.emplace(key, std::make_pair(int32_t(keys.size()), int32_t(cell)));
        keys.push_back(key);
        std::vector<int32_t> nodes;
        for (int k : f)
          nodes.push_back(c.nodes[std::size_t(cell * c.info->nodes + k)]);
        oriented.push_back(nodes);
        owners.push_back({int32_t(cell), -1});
      } else {
        auto &o = owners[std::size_t(it->second.first)];
        if (o[1] >= 0)
          failf("%s: set 'faces': a face of %s %lld is shared by more than "
                "two cells (element tags %lld, %lld): the mesh is not a "
                "manifold",
                m.file.c_str(), c.info->name, (long long)c.tags[std::size_t(cell)],
                (long long)c.tags[std::size_t(o[0])],
                (long long)c.tags[std::size_t(o[1])]);
        o[1] = int32_t(cell);
      }
    }
  for (std::size_t f = 0; f < keys.size(); ++f) {
    if (owners[f][1] < 0) {
      m.faceOwner[keys[f]] = owners[f][0];
      continue;
    }
    m.faceCells.push_back(owners[f][0]);
    m.faceCells.push_back(owners[f][1]);
    for (int32_t v : oriented[f])
      m.faceNodes.push_back(v);
  }
  m.facesBuilt = true;
}

/// The elements a set name stands for (nodes, cells and faces aside).
const Elements *elementSet(const Mesh &m, const std::string &name,
                           std::vector<int64_t> *select) {
  for (const TypeInfo &t : Types)
    if (name == t.name) {
      auto it = m.byType.find(t.type);
      if (it == m.byType.end())
        failf("%s: set '%s': the mesh has no %s", m.file.c_str(), name.c_str(),
              t.name);
      if (select)
        for (int64_t i = 0; i < int64_t(it->second.tags.size()); ++i)
          select->push_back(i);
      return &it->second;
    }
  if (name == "cells") {
    const Elements &c = cells(m);
    if (select)
      for (int64_t i = 0; i < int64_t(c.tags.size()); ++i)
        select->push_back(i);
    return &c;
  }
  auto pn = m.physicalNames.find(name);
  if (pn == m.physicalNames.end()) {
    std::string groups;
    for (const auto &[g, dt] : m.physicalNames)
      groups += (groups.empty() ? "" : ", ") + g;
    failf("%s: no set '%s' in the Gmsh mesh: sets are nodes, cells, faces, "
          "an element type (points lines triangles quads tets hexes prisms "
          "pyramids) or a physical group (this file's: %s)",
          m.file.c_str(), name.c_str(), groups.empty() ? "none" : groups.c_str());
  }
  auto [dim, tag] = pn->second;
  const Elements *found = nullptr;
  for (const auto &[type, e] : m.byType) {
    if (e.info->dim != dim)
      continue;
    std::vector<int64_t> mine;
    for (int64_t i = 0; i < int64_t(e.tags.size()); ++i) {
      auto ph = m.physicals.find({dim, e.entity[std::size_t(i)]});
      if (ph != m.physicals.end() &&
          std::find(ph->second.begin(), ph->second.end(), tag) !=
              ph->second.end())
        mine.push_back(i);
    }
    if (mine.empty())
      continue;
    if (found)
      failf("%s: set '%s': physical group '%s' holds elements of several "
            "types (%s and %s); split it into one group per type",
            m.file.c_str(), name.c_str(), name.c_str(), found->info->name,
            e.info->name);
    found = &e;
    if (select)
      *select = mine;
  }
  if (!found)
    failf("%s: set '%s': physical group '%s' (dimension %d, tag %d) has no "
          "elements (is $Entities present, with the group on its entities?)",
          m.file.c_str(), name.c_str(), name.c_str(), dim, tag);
  return found;
}

int64_t setSize(Mesh &m, const std::string &name) {
  if (name == "nodes")
    return int64_t(m.xyz.size() / 3);
  if (name == "faces") {
    buildFaces(m);
    return int64_t(m.faceCells.size() / 2);
  }
  std::vector<int64_t> sel;
  elementSet(m, name, &sel);
  return int64_t(sel.size());
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

opd_set *setFromFile(const char *name, const char *file) {
  Mesh &m = meshOf(file);
  return opd_set_create(name, setSize(m, name ? name : ""));
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
  if (setSize(m, from->name) != from->size || setSize(m, to->name) != to->size)
    failf("%s: %s: the sets were not declared from this file", m.file.c_str(),
          what.c_str());
  if (to->name == "nodes" && from->name == "faces") {
    buildFaces(m);
    if (arity != m.faceArity)
      arityMismatch(m.faceArity, "a face");
    std::copy(m.faceNodes.begin(), m.faceNodes.end(), map->data);
  } else if (to->name == "nodes") {
    std::vector<int64_t> sel;
    const Elements *e = elementSet(m, from->name, &sel);
    if (arity != e->info->nodes)
      arityMismatch(e->info->nodes, (std::string("each of ") + e->info->name).c_str());
    int32_t *out = map->data;
    for (int64_t i : sel)
      for (int k = 0; k < arity; ++k)
        *out++ = e->nodes[std::size_t(i * arity + k)];
  } else if (to->name == "cells" && from->name == "faces") {
    buildFaces(m);
    if (arity != 2)
      arityMismatch(2, "a face (its two cells)");
    std::copy(m.faceCells.begin(), m.faceCells.end(), map->data);
  } else if (to->name == "cells") {
    buildFaces(m);
    std::vector<int64_t> sel;
    const Elements *e = elementSet(m, from->name, &sel);
    if (arity != 1)
      arityMismatch(1, "a boundary face (its cell)");
    const auto &c = cells(m);
    if (e->info->dim != c.info->dim - 1)
      failf("%s: %s: '%s' holds %s, not faces of the cells (%s)",
            m.file.c_str(), what.c_str(), from->name.c_str(), e->info->name,
            c.info->name);
    for (std::size_t j = 0; j < sel.size(); ++j) {
      const int64_t i = sel[j];
      std::vector<int32_t> key(e->nodes.begin() + std::ptrdiff_t(i * e->info->nodes),
                               e->nodes.begin() + std::ptrdiff_t((i + 1) * e->info->nodes));
      std::sort(key.begin(), key.end());
      auto it = m.faceOwner.find(key);
      if (it == m.faceOwner.end())
        failf("%s: %s: %s element %lld is not on the boundary of the cells "
              "(no cell has it as an unshared face)",
              m.file.c_str(), what.c_str(), e->info->name,
              (long long)e->tags[std::size_t(i)]);
      map->data[j] = it->second;
    }
  } else {
    failf("%s: %s: a Gmsh mesh gives maps from element sets to 'nodes', "
          "'faces' -> 'cells'[2] and boundary groups -> 'cells'[1]",
          m.file.c_str(), what.c_str());
  }
  ++map->version;
  checkMapIndices(map, file);
  return map;
}

opd_dat *datFromFile(const char *name, opd_set *set, opd_scalar type, int dim,
                     const char *file) {
  Mesh &m = meshOf(file);
  opd_dat *dat = opd_dat_create(name, set, type, dim);
  const std::string what = "dat '" + dat->name + "' on set '" + set->name +
                           "' (" + scalarName(type) + "[" +
                           std::to_string(dim) + "])";
  if (setSize(m, set->name) != set->size)
    failf("%s: %s: the set was not declared from this file", m.file.c_str(),
          what.c_str());
  const int64_t n = set->size;
  std::vector<char> image(std::size_t(n) * std::size_t(dat->elementBytes()));
  if (set->name == "nodes") {
    if ((type != OPD_F64 && type != OPD_F32) || dim < 1 || dim > 3)
      failf("%s: %s: a dat on 'nodes' holds the coordinates: f64 or f32 "
            "with 1 to 3 components",
            m.file.c_str(), what.c_str());
    for (int64_t i = 0; i < n; ++i)
      for (int k = 0; k < dim; ++k) {
        double v = m.xyz[std::size_t(i * 3 + k)];
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
    std::vector<int64_t> sel;
    const Elements *e = elementSet(m, set->name, &sel);
    for (std::size_t j = 0; j < sel.size(); ++j) {
      auto ph = m.physicals.find({e->info->dim, e->entity[std::size_t(sel[j])]});
      int64_t tag = ph == m.physicals.end() || ph->second.empty()
                        ? 0
                        : ph->second.front();
      if (type == OPD_I64)
        reinterpret_cast<int64_t *>(image.data())[j] = tag;
      else
        reinterpret_cast<int32_t *>(image.data())[j] = int32_t(tag);
    }
  } else {
    failf("%s: %s: a Gmsh mesh has no data on 'faces' (compute it with a "
          "loop over the faces)",
          m.file.c_str(), what.c_str());
  }
  // Every rank holds the whole image: it hands over its slice of rows as
  // a file read does (dist::placeRows puts them where the set's elements
  // are: whole, sliced, partitioned or renumbered).
  const std::size_t eb = std::size_t(dat->elementBytes());
  int64_t first = 0, count = 0;
  dist::fileRows(set->globalSize, first, count);
  dist::placeRows(set, image.data() + std::size_t(first) * eb, eb, dat->data);
  return dat;
}

} // namespace opdc::rt::gmsh
