// GmshParse.cpp - The Gmsh reader's first pass: every section of a .msh
// file (4.1 ASCII and binary, 2.2 ASCII) validated, and its structure kept
// in a Mesh.
// SPDX-License-Identifier: Apache-2.0
//
// Gmsh.cpp's comment says what the first pass keeps and why (what is
// proportional to the file's structure, never a mesh-sized array); here
// is each section's parser, the node tags' runs or owned pairs, and the
// elements' references to nodes checked.
#include "io/GmshImpl.h"

namespace opdc::rt::gmsh {

/// The node index of `tag`, or -1 if no node has it.
int64_t nodeIndex(const Mesh &m, int64_t tag) {
  auto it = m.runs.upper_bound(tag);
  if (it == m.runs.begin())
    return -1;
  --it;
  if (tag >= it->first + it->second.second)
    return -1;
  return it->second.first + (tag - it->first);
}

/// The rank that owns node tag `tag` when tags are scattered (a hash, so
/// that any numbering spreads evenly).
int ownerOf(int64_t tag) {
  uint64_t x = uint64_t(tag) * 0x9E3779B97F4A7C15ull;
  x ^= x >> 32;
  return int(x % uint64_t(dist::ranks()));
}

/// The most node-tag runs every rank keeps before the tags count as
/// scattered (OPD_GMSH_MAX_RUNS: tests make small meshes scattered).
std::size_t runLimit() {
  static const std::size_t limit = [] {
    const char *v = std::getenv("OPD_GMSH_MAX_RUNS");
    return v && *v ? std::size_t(std::strtoull(v, nullptr, 10))
                   : std::size_t(1) << 16;
  }();
  return limit;
}

/// The index of an owned tag (scattered tags), or -1.
int64_t ownedIndex(const Mesh &m, int64_t tag) {
  auto it = std::lower_bound(m.owned.begin(), m.owned.end(),
                             std::make_pair(tag, INT64_MIN));
  return it != m.owned.end() && it->first == tag ? it->second : -1;
}

/// Node tags to indices, scattered tags: each tag is asked of its owner
/// (two all-to-alls a round; rounds of at most 2^18 tags a rank, so the
/// messages stay small next to the map). Collective. The tags were
/// validated in the first pass.
std::vector<int32_t> resolveTags(const Mesh &m,
                                 const std::vector<int64_t> &tags) {
  constexpr int64_t Batch = int64_t(1) << 18;
  const std::size_t np = std::size_t(dist::ranks());
  int64_t rounds = (int64_t(tags.size()) + Batch - 1) / Batch;
  dist::allreduce(&rounds, OPD_I64, OPD_MAX, 1);
  std::vector<int32_t> out;
  out.reserve(tags.size());
  for (int64_t round = 0; round < rounds; ++round) {
    const std::size_t lo = std::min(tags.size(), std::size_t(round * Batch));
    const std::size_t hi = std::min(tags.size(), lo + std::size_t(Batch));
    std::vector<std::vector<int64_t>> send(np);
    for (std::size_t k = lo; k < hi; ++k)
      send[std::size_t(ownerOf(tags[k]))].push_back(tags[k]);
    std::vector<int> from;
    const std::vector<int64_t> asked = dist::exchangeIds(send, from);
    for (std::size_t q = 0; q < np; ++q) {
      send[q].clear(); // now the answers to rank q
      for (int j = from[q]; j < from[q + 1]; ++j)
        send[q].push_back(ownedIndex(m, asked[std::size_t(j)]));
    }
    std::vector<int> back;
    const std::vector<int64_t> got = dist::exchangeIds(send, back);
    std::vector<int> next(back.begin(), back.end() - 1);
    for (std::size_t k = lo; k < hi; ++k)
      out.push_back(
          int32_t(got[std::size_t(next[std::size_t(ownerOf(tags[k]))]++)]));
  }
  return out;
}

/// Scattered tags: the first failure any rank found at its owned tags (the
/// least file position; `at` UINT64_MAX: none), agreed on by all ranks with
/// its details. Collective.
void agreeFirst(uint64_t &at, int64_t *details, int n) {
  int64_t least = at == UINT64_MAX ? INT64_MAX : int64_t(at);
  dist::allreduce(&least, OPD_I64, OPD_MIN, 1);
  std::vector<int64_t> d(std::size_t(n), INT64_MIN);
  if (least != INT64_MAX && int64_t(at) == least)
    std::copy(details, details + n, d.begin());
  dist::allreduce(d.data(), OPD_I64, OPD_MAX, n);
  at = least == INT64_MAX ? UINT64_MAX : uint64_t(least);
  std::copy(d.begin(), d.end(), details);
}

/// Records node `index`'s tag: extends the run being written or starts one;
/// false if the tag is taken.
bool addNode(Mesh &m, int64_t tag, int64_t index,
             std::map<int64_t, std::pair<int64_t, int64_t>>::iterator &last) {
  if (nodeIndex(m, tag) >= 0)
    return false;
  if (last != m.runs.end() && last->first + last->second.second == tag &&
      last->second.first + last->second.second == index) {
    ++last->second.second;
    return true;
  }
  last = m.runs.emplace(tag, std::make_pair(index, int64_t(1))).first;
  return true;
}

void parseFormat(Reader &r, Mesh &m) {
  r.section = "$MeshFormat";
  std::string version = r.word("the format version");
  if (version != "4.1" && version != "2.2")
    r.fail("version " + version +
           "; this reader takes versions 4.1 and 2.2 (gmsh -format msh41, "
           "or Mesh.MshFileVersion = 4.1)");
  m.legacy = version == "2.2";
  int64_t fileType = r.integer("the file type (0 ASCII, 1 binary)", false);
  if (fileType != 0 && fileType != 1)
    r.fail("file type " + std::to_string(fileType) +
           ", expected 0 (ASCII) or 1 (binary)");
  int64_t dataSize = r.integer("the data size", false);
  if (dataSize != 8 && dataSize != 4)
    r.fail("data size " + std::to_string(dataSize) + ", expected 8 (or 4)");
  m.dataSize = r.dataSize = int(dataSize);
  m.binary = r.binary = fileType == 1;
  if (m.legacy && m.binary)
    r.fail("a binary version 2.2 file; this reader takes version 2.2 in "
           "ASCII (file type 0) only: write ASCII (gmsh -format msh22 "
           "without -bin) or version 4.1 (gmsh -format msh41)");
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

/// Node tags in $Nodes order (both versions): into the runs, or, once
/// they are scattered, this rank's (tag, index) pairs.
class NodeTags {
public:
  explicit NodeTags(Mesh &m) : m(m), last(m.runs.end()), me(dist::rank()) {}

  void add(Reader &r, int64_t tag, int64_t index) {
    if (m.scattered) {
      if (ownerOf(tag) == me)
        mine.push_back({tag, index, r.pos()});
      return;
    }
    if (!addNode(m, tag, index, last))
      r.fail("node tag " + std::to_string(tag) + " appears twice");
    if (m.runs.size() > runLimit()) {
      // Too many runs for every rank: from now on each keeps its owned
      // tags (those so far from the runs; a repeat of one of them is
      // found at its second appearance, position 0 marking the first).
      m.scattered = true;
      for (const auto &[t0, run] : m.runs)
        for (int64_t k = 0; k < run.second; ++k)
          if (ownerOf(t0 + k) == me)
            mine.push_back({t0 + k, run.first + k, 0});
      m.runs.clear();
      last = m.runs.end();
    }
  }

  /// After the last tag: a tag twice (scattered tags: the first second
  /// appearance over all ranks); the node count.
  void finish(Reader &r, int64_t seen, int64_t total) {
    if (m.scattered) {
      std::sort(mine.begin(), mine.end(), [](const Owned &a, const Owned &b) {
        return a.tag != b.tag ? a.tag < b.tag : a.at < b.at;
      });
      uint64_t at = UINT64_MAX;
      int64_t twice = 0;
      for (std::size_t k = 1; k < mine.size(); ++k)
        if (mine[k].tag == mine[k - 1].tag && mine[k].at < at) {
          at = mine[k].at;
          twice = mine[k].tag;
        }
      agreeFirst(at, &twice, 1);
      if (at != UINT64_MAX)
        r.failAt(at, "node tag " + std::to_string(twice) + " appears twice");
      m.owned.reserve(mine.size());
      for (const Owned &o : mine)
        m.owned.emplace_back(o.tag, o.index);
    }
    if (seen != total)
      r.fail("the header announces " + std::to_string(total) +
             " nodes, the blocks hold " + std::to_string(seen));
    if (seen >= int64_t(INT32_MAX))
      r.fail("more than 2^31 - 1 nodes: maps hold 32-bit indices");
    m.nodes = seen;
    r.endData("$EndNodes");
  }

private:
  // Scattered tags: this rank's (tag, index, file position after the tag).
  struct Owned {
    int64_t tag, index;
    uint64_t at;
  };
  Mesh &m;
  std::map<int64_t, std::pair<int64_t, int64_t>>::iterator last;
  std::vector<Owned> mine;
  int me;
};

void parseNodes(Reader &r, Mesh &m) {
  r.startData("$Nodes");
  int64_t blocks = r.count("the number of entity blocks");
  int64_t total = r.count("the number of nodes");
  r.count("the smallest node tag");
  r.count("the largest node tag");
  NodeTags sink(m);
  int64_t seen = 0; // nodes so far
  std::vector<int64_t> tags;
  for (int64_t b = 0; b < blocks; ++b) {
    int dim = int(r.integer("an entity dimension", false));
    r.integer("an entity tag", false);
    int64_t parametric = r.integer("the parametric flag (0 or 1)", false);
    if (dim < 0 || dim > 3 || (parametric != 0 && parametric != 1))
      r.fail("entity block " + std::to_string(b + 1) + ": dimension " +
             std::to_string(dim) + ", parametric " +
             std::to_string(parametric) + " (expected 0..3 and 0 or 1)");
    int64_t n = r.count("the number of nodes in the block");
    // The tags: every one, into the runs (a block's tags are kept while
    // its coordinates are read, for the error messages).
    tags.resize(std::size_t(n));
    for (int64_t i = 0; i < n; ++i)
      sink.add(r, tags[std::size_t(i)] = r.count("a node tag"), seen + i);
    const int perNode = 3 + (parametric ? dim : 0);
    NodeBlock &block = m.nodeBlocks.emplace_back(NodeBlock{n, perNode, {}});
    seen += n;
    // Binary coordinates are not checked (any bytes are numbers): skipped
    // when they lie in the file, else read to report where it ends.
    if (r.binary) {
      block.coords.mark(r, 0);
      const uint64_t bytes = uint64_t(n) * uint64_t(perNode) * 8;
      if (r.canSkip(bytes)) {
        r.skip(bytes);
        continue;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      if (!r.binary)
        block.coords.mark(r, i);
      const std::string node =
          " of node " + std::to_string(tags[std::size_t(i)]);
      r.real("the x coordinate" + node);
      r.real("the y coordinate" + node);
      r.real("the z coordinate" + node);
      for (int k = 0; k < (parametric ? dim : 0); ++k)
        r.real("a parametric coordinate" + node);
    }
  }
  sink.finish(r, seen, total);
}

/// Version 2.2: the node count, then "tag x y z" per node; one block.
void parseNodes22(Reader &r, Mesh &m) {
  r.startData("$Nodes");
  const int64_t n = r.count("the number of nodes");
  NodeTags sink(m);
  NodeBlock &block = m.nodeBlocks.emplace_back(NodeBlock{n, 3, {}, 1});
  for (int64_t i = 0; i < n; ++i) {
    block.coords.mark(r, i);
    const int64_t tag = r.count("a node tag");
    sink.add(r, tag, i);
    const std::string node = " of node " + std::to_string(tag);
    r.real("the x coordinate" + node);
    r.real("the y coordinate" + node);
    r.real("the z coordinate" + node);
  }
  sink.finish(r, n, n);
}

/// The elements' references to nodes (both versions): each must be a node
/// $Nodes defined (scattered tags: this rank checks its own, and the first
/// bad reference over all ranks is reported).
class NodeRefs {
public:
  explicit NodeRefs(const Mesh &m) : m(m), me(dist::rank()) {}

  void check(Reader &r, int64_t element, int64_t node, int type) {
    if (m.scattered) {
      if (danglingAt == UINT64_MAX && ownerOf(node) == me &&
          ownedIndex(m, node) < 0) {
        danglingAt = r.pos();
        dangling[0] = element;
        dangling[1] = node;
        dangling[2] = type;
      }
      return;
    }
    if (nodeIndex(m, node) < 0)
      r.fail("element " + std::to_string(element) + " (" +
             typeInfo(type)->name + ") refers to node " + std::to_string(node) +
             ", which $Nodes does not define");
  }

  /// After the last element: the scattered tags' agreed first error; the
  /// element count.
  void finish(Reader &r, int64_t seen, int64_t total) {
    if (m.scattered) {
      agreeFirst(danglingAt, dangling, 3);
      if (danglingAt != UINT64_MAX)
        r.failAt(danglingAt, "element " + std::to_string(dangling[0]) + " (" +
                                 typeInfo(int(dangling[2]))->name +
                                 ") refers to node " +
                                 std::to_string(dangling[1]) +
                                 ", which $Nodes does not define");
    }
    if (seen != total)
      r.fail("the header announces " + std::to_string(total) +
             " elements, the blocks hold " + std::to_string(seen));
    r.endData("$EndElements");
  }

private:
  const Mesh &m;
  int me;
  uint64_t danglingAt = UINT64_MAX;
  int64_t dangling[3] = {0, 0, 0}; // element tag, node tag, type
};

/// A supported element type, or a message saying which are.
const TypeInfo *supportedType(Reader &r, int type) {
  const TypeInfo *info = typeInfo(type);
  if (!info)
    r.fail("element type " + std::to_string(type) +
           " is not supported (first-order points, lines, triangles, "
           "quads, tets, hexes, prisms and pyramids are: types 15, 1-7; "
           "mesh with Mesh.ElementOrder = 1)");
  return info;
}

void parseElements(Reader &r, Mesh &m) {
  r.startData("$Elements");
  int64_t blocks = r.count("the number of entity blocks");
  int64_t total = r.count("the number of elements");
  r.count("the smallest element tag");
  r.count("the largest element tag");
  int64_t seen = 0;
  NodeRefs refs(m);
  for (int64_t b = 0; b < blocks; ++b) {
    int dim = int(r.integer("an entity dimension", false));
    int entity = int(r.integer("an entity tag", false));
    int type = int(r.integer("an element type", false));
    const TypeInfo *info = supportedType(r, type);
    if (info->dim != dim)
      r.fail("element type " + std::to_string(type) + " (" + info->name +
             ") in an entity of dimension " + std::to_string(dim));
    int64_t n = r.count("the number of elements in the block");
    Block &block = m.blocks.emplace_back(Block{info, entity, n, {}});
    m.typeCount[type] += n;
    for (int64_t i = 0; i < n; ++i) {
      block.rows.mark(r, i);
      int64_t tag = r.count("an element tag");
      for (int k = 0; k < info->nodes; ++k)
        refs.check(r, tag,
                   r.count("node " + std::to_string(k + 1) + " of element " +
                           std::to_string(tag)),
                   type);
    }
    seen += n;
  }
  refs.finish(r, seen, total);
}

/// Version 2.2: the element count, then per element "tag type ntags
/// tags... nodes...", where the first tag is the physical group (0: none)
/// and the second the elementary entity. Runs of consecutive elements with
/// the same type, tags count, physical group and entity become one block,
/// whose entity is a number made for the (dimension, entity, physical
/// group) triple, with that group as its physical tag: the sets, maps and
/// dats of version 4.1 read such blocks unchanged. (Gmsh 2.2 writes an
/// element in several physical groups once per group; each is an element
/// here.)
void parseElements22(Reader &r, Mesh &m) {
  r.startData("$Elements");
  const int64_t n = r.count("the number of elements");
  NodeRefs refs(m);
  std::map<std::array<int64_t, 3>, int> entities;
  Block *block = nullptr;
  int64_t physical = 0, elementary = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t row = r.pos();
    const int64_t tag = r.count("an element tag");
    const std::string of = " of element " + std::to_string(tag);
    const int type = int(r.integer("the element type" + of, false));
    const TypeInfo *info = supportedType(r, type);
    const int64_t ntags = r.count("the number of tags" + of);
    if (ntags > 64)
      r.fail("element " + std::to_string(tag) + " has " +
             std::to_string(ntags) +
             " tags (a physical group, an entity, "
             "partitions: expected at most 64)");
    for (int64_t k = 0; k < ntags; ++k) {
      const int64_t v = r.integer("tag " + std::to_string(k + 1) + of, false);
      if (k == 0)
        physical = v;
      else if (k == 1)
        elementary = v;
    }
    if (ntags < 1)
      physical = 0;
    if (ntags < 2)
      elementary = 0;
    const int skip = int(2 + ntags);
    auto [it, fresh] = entities.try_emplace({info->dim, elementary, physical},
                                            int(entities.size()) + 1);
    if (fresh && physical != 0)
      m.physicals[{info->dim, it->second}] = {int(physical)};
    if (!block || block->info != info || block->skip != skip ||
        block->entity != it->second)
      block = &m.blocks.emplace_back(Block{info, it->second, 0, {}, skip});
    if (block->count % MarkStride == 0)
      block->rows.marks.push_back(row);
    ++block->count;
    ++m.typeCount[type];
    for (int k = 0; k < info->nodes; ++k)
      refs.check(r, tag, r.count("node " + std::to_string(k + 1) + of), type);
  }
  refs.finish(r, n, n);
}

/// The first pass over the file: validates everything and fills `m`'s
/// summary and the blocks' Rows (collective when tags are scattered).
void parse(const std::string &file, Mesh &m) {
  Reader r(file);
  m.file = file;
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
      parseFormat(r, m);
      format = true;
    } else if (s == "$PhysicalNames") {
      parsePhysicalNames(r, m);
    } else if (s == "$Entities" && !m.legacy) {
      parseEntities(r, m);
    } else if (s == "$Nodes") {
      if (m.legacy)
        parseNodes22(r, m);
      else
        parseNodes(r, m);
      nodes = true;
    } else if (s == "$Elements") {
      if (!nodes)
        r.fail("$Elements before $Nodes");
      if (m.legacy)
        parseElements22(r, m);
      else
        parseElements(r, m);
      elements = true;
    } else {
      r.skipSection(s.substr(1));
    }
  }
  if (!format || !nodes || !elements)
    failf("%s: not a complete Gmsh mesh: no %s section", file.c_str(),
          !format  ? "$MeshFormat"
          : !nodes ? "$Nodes"
                   : "$Elements");
}

/// A later pass: a reader at row `row` of a block whose rows hold `values`
/// values of `bytes` bytes each (binary), for `section`'s data. Binary:
/// a seek to the row; ASCII: to the mark before it, then over the rows
/// between as words.
void seekRow(Reader &r, const Mesh &m, const char *section, const Rows &rows,
             int64_t row, int values, int bytes) {
  r.binary = r.inData = m.binary;
  r.dataSize = m.dataSize;
  r.section = section;
  if (m.binary) {
    r.seek(rows.marks[0] + uint64_t(row) * uint64_t(values) * uint64_t(bytes));
    return;
  }
  const int64_t k = row / MarkStride;
  r.seek(rows.marks[std::size_t(k)]);
  r.skipWords((row - k * MarkStride) * values, "a value");
}

} // namespace opdc::rt::gmsh
