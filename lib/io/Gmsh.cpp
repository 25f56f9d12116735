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
#include "core/Dist.h"
#include "core/Objects.h"
#include "core/Runtime.h"
#include "io/Gmsh.h"

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

/// The file, streamed through a window of at least 1 MiB: tokens (ASCII)
/// and values (binary) in order, seeks to the rows a later pass keeps
/// (Rows). Error positions: the byte offset, or the line, counted (from
/// the file's start) only when an error is reported, so a reader that
/// seeked reports the same line as one that streamed.
class Reader {
public:
  explicit Reader(const std::string &file) : file(file) {
    in.open(file, std::ios::binary);
    if (!in)
      failf("cannot open Gmsh mesh '%s': %s", file.c_str(),
            std::strerror(errno));
    in.seekg(0, std::ios::end);
    fileSize = uint64_t(in.tellg());
    in.seekg(0);
    buf.resize(Window);
  }

  [[noreturn]] void fail(const std::string &what) const {
    failAt(pos(), what);
  }
  [[noreturn]] void failAt(uint64_t at, const std::string &what) const {
    if (binary && inData)
      failf("%s: byte %llu: %s%s", file.c_str(), (unsigned long long)at,
            where().c_str(), what.c_str());
    failf("%s:%d: %s%s", file.c_str(), line(at), where().c_str(),
          what.c_str());
  }

  uint64_t pos() const { return start + cur; }
  uint64_t size() const { return fileSize; }

  bool atEnd() {
    skipSpace();
    return !more(1);
  }

  std::string word(const char *expected) {
    return std::string(token(expected));
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
      while (more(1) && buf[cur] != '\n')
        ++cur;
      if (more(1))
        ++cur;
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
    const std::string_view t = token(what.c_str());
    long long v = 0;
    const auto [stop, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec == std::errc() && stop == t.data() + t.size())
      return v;
    // Not plain digits (a sign, too large, not a number): strtoll decides.
    const std::string w(t);
    char *end = nullptr;
    errno = 0;
    v = std::strtoll(w.c_str(), &end, 10);
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
    const std::string_view t = token(what.c_str());
    double v = 0;
    const auto [stop, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    // A decimal number, read whole: the value strtod gives (both round
    // correctly), without a copy or the locale.
    if (ec == std::errc() && stop == t.data() + t.size() &&
        (std::isdigit((unsigned char)t.back()) || t.back() == '.'))
      return v;
    // Anything else (a sign, hex, inf, nan, out of range, not a number):
    // strtod decides.
    const std::string w(t);
    char *end = nullptr;
    v = std::strtod(w.c_str(), &end);
    if (*end)
      fail("expected " + what + " (a number), found '" + shortText(w) + "'");
    return v;
  }

  /// The rest of the current line (ASCII), without leading blanks.
  std::string restOfLine() {
    while (more(1) && (buf[cur] == ' ' || buf[cur] == '\t'))
      ++cur;
    std::string s;
    while (more(1) && buf[cur] != '\n')
      s += buf[cur++];
    if (!s.empty() && s.back() == '\r')
      s.pop_back();
    return s;
  }

  void skipSection(const std::string &name) {
    const std::string end = "$End" + name;
    const uint64_t from = pos();
    for (;;) {
      if (!more(1))
        failAt(from, "section $" + name + " has no " + end);
      if (buf[cur] == '$' && more(end.size()) &&
          std::memcmp(buf.data() + cur, end.data(), end.size()) == 0) {
        cur += end.size();
        return;
      }
      ++cur;
    }
  }

  /// Binary data: whether `bytes` more lie in the file (a seek over them
  /// stays inside it; otherwise the caller reads them value by value, which
  /// reports the end of the file where it is).
  bool canSkip(uint64_t bytes) const {
    return bytes <= fileSize && pos() <= fileSize - bytes;
  }
  void skip(uint64_t bytes) { seek(pos() + bytes); }
  /// To byte `to`: inside the window without reading (a later pass going
  /// from one block to the next nearby), else with a seek.
  void seek(uint64_t to) {
    if (to >= start && to - start <= len) {
      cur = std::size_t(to - start);
      return;
    }
    in.clear();
    in.seekg(std::streamoff(to));
    start = to;
    cur = len = 0;
  }

  /// ASCII: `n` words a later pass does not keep (the first pass
  /// validated them), passed over.
  void skipWords(int64_t n, const char *what) {
    for (int64_t i = 0; i < n; ++i)
      token(what);
  }

  const std::string &file;
  bool binary = false;
  bool inData = false;
  int dataSize = 8;
  std::string section;

private:
  static constexpr std::size_t Window = std::size_t(1) << 20;

  /// Whether `need` bytes lie ahead in the window (reading on as needed;
  /// a window too small for them doubles, so a long word costs its length).
  bool more(std::size_t need) {
    if (len - cur >= need)
      return true;
    if (cur > 0) {
      std::memmove(buf.data(), buf.data() + cur, len - cur);
      start += cur;
      len -= cur;
      cur = 0;
    }
    if (buf.size() < need)
      buf.resize(std::max(need, 2 * buf.size()));
    while (len < need && in) {
      in.read(buf.data() + len, std::streamsize(buf.size() - len));
      len += std::size_t(in.gcount());
    }
    return len - cur >= need;
  }
  /// std::isspace in the C locale (the runtime sets no other), inline:
  /// ASCII meshes are mostly spaces and digits.
  static bool isSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
  void skipSpace() {
    for (;;) {
      while (cur < len && isSpace(buf[cur]))
        ++cur;
      if (cur < len || !more(1))
        return;
    }
  }
  /// The next word, in the window (valid until the next read): one that
  /// runs to the window's end is made whole there by more().
  std::string_view token(const char *expected) {
    skipSpace();
    if (!more(1))
      fail(std::string("unexpected end of file, expected ") + expected);
    std::size_t n = 1;
    for (;;) {
      while (cur + n < len && !isSpace(buf[cur + n]))
        ++n;
      if (cur + n < len || !more(n + 1))
        break;
    }
    const std::string_view w(buf.data() + cur, n);
    cur += n;
    return w;
  }
  /// The line of byte `at`: its file's newlines before it, counted anew.
  int line(uint64_t at) const {
    std::ifstream again(file, std::ios::binary);
    std::vector<char> chunk(Window);
    int n = 1;
    uint64_t done = 0;
    while (done < at && again) {
      again.read(chunk.data(),
                 std::streamsize(std::min<uint64_t>(chunk.size(), at - done)));
      const std::streamsize got = again.gcount();
      if (got <= 0)
        break;
      n += int(std::count(chunk.data(), chunk.data() + got, '\n'));
      done += uint64_t(got);
    }
    return n;
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
    if (!more(sizeof(T)))
      fail("unexpected end of file, expected " + what + " (" +
           std::to_string(sizeof(T)) + " bytes)");
    T v;
    std::memcpy(&v, buf.data() + cur, sizeof v);
    cur += sizeof v;
    return v;
  }

  std::ifstream in;
  uint64_t fileSize = 0;
  std::vector<char> buf;
  uint64_t start = 0;   // the file offset of buf[0]
  std::size_t cur = 0;  // the next byte, in buf
  std::size_t len = 0;  // the bytes read into buf
};

/// Where an entity block's rows lie in the file, recorded by the first
/// pass so that a map or dat declaration goes straight to the rows it
/// keeps instead of streaming the file again: the byte offset of row 0
/// and, in ASCII files (rows of any length), of every MarkStride-th row
/// after it (a later pass passes over at most MarkStride - 1 rows as
/// words). Binary rows have a fixed size, so row 0's offset places them
/// all. Lines are not recorded: an error's line is counted from its
/// offset.
constexpr int64_t MarkStride = 4096;
struct Rows {
  std::vector<uint64_t> marks;
  /// The first pass calls it before row i of the block (binary: row 0).
  void mark(const Reader &r, int64_t i) {
    if (i == 0 || (!r.binary && i % MarkStride == 0))
      marks.push_back(r.pos());
  }
};

/// A $Nodes block: its node count, the values of each node's coordinate
/// row (3, and the parametric ones) and where its coordinates lie.
struct NodeBlock {
  int64_t count;
  int perNode;
  Rows coords;
  /// Words before the coordinates in each row: 0 (version 4.1: the tags
  /// come before the block's rows), 1 (version 2.2: "tag x y z").
  int lead = 0;
};

/// An element block's header and where its elements lie.
struct Block {
  const TypeInfo *info;
  int entity;
  int64_t count;
  Rows rows;
  /// Words between each row's element tag and its nodes: 0 (version
  /// 4.1), 2 + the number of tags (version 2.2: "tag type ntags tags...").
  int skip = 0;
};

/// The whole file's structure (the first pass), and the faces when a
/// program declares them.
struct Mesh {
  std::string file;
  bool binary = false;
  /// Version 2.2 (ASCII; no $Entities, one row per node and per element,
  /// each element with its type and tags): the blocks are made from runs
  /// of elements alike (parseElements22).
  bool legacy = false;
  int dataSize = 8;
  int64_t nodes = 0;
  std::vector<NodeBlock> nodeBlocks; // in file order
  /// Node tags as runs of consecutive tags: first tag -> (index of that
  /// node in file order, length).
  std::map<int64_t, std::pair<int64_t, int64_t>> runs;
  /// Scattered tags (more runs than runLimit()): the runs are dropped and
  /// each rank holds the (tag, index) pairs of the tags it owns (ownerOf),
  /// sorted by tag; lookups are sent to the owners (resolveTags).
  bool scattered = false;
  std::vector<std::pair<int64_t, int64_t>> owned;
  std::vector<Block> blocks;                                 // in file order
  std::map<int, int64_t> typeCount;                          // type -> elements
  std::map<std::pair<int, int>, std::vector<int>> physicals; // (dim, entity)
  std::map<std::string, std::pair<int, int>> physicalNames; // -> (dim, tag)
  // Derived on first use (buildFaces; this rank's share only).
  bool facesBuilt = false;
  int64_t faces = 0;                         // interior faces in all
  std::vector<int32_t> faceNodes, faceCells; // this rank's slice of them
  int faceArity = 0;
  /// Unshared faces whose sorted nodes hash to this rank -> their cell.
  std::map<std::vector<int64_t>, int64_t> boundary;
};

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
      const std::string node = " of node " + std::to_string(tags[std::size_t(i)]);
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
          !format ? "$MeshFormat" : !nodes ? "$Nodes" : "$Elements");
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
    std::fprintf(stderr, "gmsh: rank %d of %d: %s: set %s: kept rows %lld-%lld of %lld\n",
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
      std::fprintf(stderr, "gmsh: rank %d of %d: %s: node tags scattered: "
                   "this rank owns %lld of %lld\n", dist::rank(), dist::ranks(),
                   m->file.c_str(), (long long)m->owned.size(),
                   (long long)m->nodes);
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
          m.file.c_str(), name.c_str(), groups.empty() ? "none" : groups.c_str());
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
      failf("%s: set 'faces': %s have faces of different sizes",
            m.file.c_str(), c.info->name);
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
      arityMismatch(s.info->nodes, (std::string("each of ") + s.info->name).c_str());
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
        auto it = m.boundary.find(std::vector<int64_t>(
            asked.begin() + j, asked.begin() + j + k));
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
