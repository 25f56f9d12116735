// GmshImpl.h - What the files of the Gmsh reader share: element types,
// the streamed file (Reader), the file's structure (Mesh) and the first
// pass that fills it.
// SPDX-License-Identifier: Apache-2.0
//
// Internal to lib/io (the reader's entry points are io/Gmsh.h). Gmsh.cpp's
// comment says how a mesh is read in slices; GmshParse.cpp is the first
// pass (every section of the file, validated), Gmsh.cpp the sets, maps and
// dats made from it, the faces among them.
#ifndef OPDC_LIB_IO_GMSHIMPL_H
#define OPDC_LIB_IO_GMSHIMPL_H

#include "core/Dist.h"
#include "core/Objects.h"
#include "core/Runtime.h"

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

struct TypeInfo {
  int type;
  const char *name; // the set name
  int dim, nodes;
};
// Gmsh's first-order element types (and the point).
inline constexpr TypeInfo Types[] = {
    {15, "points", 0, 1}, {1, "lines", 1, 2},   {2, "triangles", 2, 3},
    {3, "quads", 2, 4},   {4, "tets", 3, 4},    {5, "hexes", 3, 8},
    {6, "prisms", 3, 6},  {7, "pyramids", 3, 5}};

inline const TypeInfo *typeInfo(int type) {
  for (const TypeInfo &t : Types)
    if (t.type == type)
      return &t;
  return nullptr;
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

  [[noreturn]] void fail(const std::string &what) const { failAt(pos(), what); }
  [[noreturn]] void failAt(uint64_t at, const std::string &what) const {
    if (binary && inData)
      failf("%s: byte %llu: %s%s", file.c_str(), (unsigned long long)at,
            where().c_str(), what.c_str());
    failf("%s:%d: %s%s", file.c_str(), line(at), where().c_str(), what.c_str());
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
      fail(std::string("expected ") + marker + ", found '" + shortText(w) +
           "'");
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
  uint64_t start = 0;  // the file offset of buf[0]
  std::size_t cur = 0; // the next byte, in buf
  std::size_t len = 0; // the bytes read into buf
};

/// Where an entity block's rows lie in the file, recorded by the first
/// pass so that a map or dat declaration goes straight to the rows it
/// keeps instead of streaming the file again: the byte offset of row 0
/// and, in ASCII files (rows of any length), of every MarkStride-th row
/// after it (a later pass passes over at most MarkStride - 1 rows as
/// words). Binary rows have a fixed size, so row 0's offset places them
/// all. Lines are not recorded: an error's line is counted from its
/// offset.
inline constexpr int64_t MarkStride = 4096;
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
  std::map<std::string, std::pair<int, int>> physicalNames;  // -> (dim, tag)
  // Derived on first use (buildFaces; this rank's share only).
  bool facesBuilt = false;
  int64_t faces = 0;                         // interior faces in all
  std::vector<int32_t> faceNodes, faceCells; // this rank's slice of them
  int faceArity = 0;
  /// Unshared faces whose sorted nodes hash to this rank -> their cell.
  std::map<std::vector<int64_t>, int64_t> boundary;
};
/// The node index of `tag`, or -1 if no node has it.
int64_t nodeIndex(const Mesh &m, int64_t tag);
/// Scattered tags: the first failure any rank found at its owned tags (the
/// least file position; `at` UINT64_MAX: none), agreed on by all ranks with
/// its details. Collective.
void agreeFirst(uint64_t &at, int64_t *details, int n);
/// Node tags to indices, scattered tags: each tag is asked of its owner
/// (GmshParse.cpp says how). Collective.
std::vector<int32_t> resolveTags(const Mesh &m,
                                 const std::vector<int64_t> &tags);
/// A later pass: a reader at row `row` of a block whose rows hold `values`
/// values of `bytes` bytes each (binary), for `section`'s data.
void seekRow(Reader &r, const Mesh &m, const char *section, const Rows &rows,
             int64_t row, int values, int bytes);
/// The first pass over `file` into `m` (GmshParse.cpp): every section
/// validated, the structure kept.
void parse(const std::string &file, Mesh &m);

} // namespace opdc::rt::gmsh
#endif
