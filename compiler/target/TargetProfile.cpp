// TargetProfile.cpp - Reading and validating target profiles; the host's.
// SPDX-License-Identifier: Apache-2.0
//
// One schema table (TargetSchema.cpp) drives parsing, validation and
// printing, so a key is declared once with its type, unit, bounds and place
// in the struct.
//
// yaml-cpp builds the node tree; every node keeps the byte offset of its
// start (Mark().pos), which becomes an SMLoc in the file's buffer in the
// compiler's SourceManager, so a profile error prints exactly like a
// program error: `file:line:col: error: ...`, the line and a caret.
//
// `extends: BASE` loads BASE first (a name looked up next to the extending
// file, then in the search path; or a path relative to the extending file)
// and applies the derived file's keys over it, key by key. `name` and
// `description` are never inherited. Required keys are checked on the
// resolved profile and reported at the most derived file's first key.
#include "target/TargetProfile.h"

#include "support/Diagnostics.h"
#include "support/SourceManager.h"
#include "target/TargetSchema.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Threading.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <unistd.h>

namespace opdc {

namespace {

using profile::Key;
using profile::Kind;
using profile::schema;

/// Keys checked after `extends:` is resolved.
const char *const kRequired[][2] = {
    {"cpu.triple", "the LLVM target triple, e.g. x86_64-unknown-linux-gnu"},
    {"cpu.name", "the LLVM CPU name, e.g. skylake-avx512 (llc -mcpu=help)"},
    {"cpu.vector_width_bits", "the widest vectors in bits, e.g. 256"},
    {"cpu.cores", "physical cores per socket"},
};
const char *const kRequiredGPU[][2] = {
    {"gpu.vendor", "nvidia or amd"},
    {"gpu.arch", "the GPU architecture, e.g. sm_90"},
};

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

/// The offset of the first '[' or '{' of \p text that is never closed (or
/// closed by the wrong bracket), skipping comments and quoted strings; npos
/// if every bracket is closed. yaml-cpp reports an unclosed flow collection
/// where it gave up (often the end of the file); the opener is what the
/// author has to fix.
size_t unclosedFlowBracket(llvm::StringRef text) {
  std::vector<size_t> open;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '#' && (i == 0 || llvm::isSpace(text[i - 1]))) {
      size_t eol = text.find('\n', i);
      if (eol == llvm::StringRef::npos)
        break;
      i = eol;
    } else if ((c == '"' || c == '\'') && !open.empty()) {
      // Quoted scalars inside flow collections may hold brackets.
      for (++i; i < text.size() && text[i] != c; ++i)
        if (c == '"' && text[i] == '\\')
          ++i;
    } else if (c == '[' || c == '{') {
      open.push_back(i);
    } else if (c == ']' || c == '}') {
      if (open.empty())
        continue;
      char want = text[open.back()] == '[' ? ']' : '}';
      if (c != want)
        return open.back();
      open.pop_back();
    }
  }
  return open.empty() ? llvm::StringRef::npos : open.front();
}

std::string nodeKind(const YAML::Node &n) {
  switch (n.Type()) {
  case YAML::NodeType::Map:
    return "a mapping";
  case YAML::NodeType::Sequence:
    return "a list";
  case YAML::NodeType::Null:
    return "nothing";
  case YAML::NodeType::Scalar:
    return "'" + n.Scalar() + "'";
  default:
    return "an undefined value";
  }
}

class Loader {
public:
  Loader(const TargetSearchPath &path, DiagnosticEngine &diags)
      : path(path), diags(diags), sm(diags.sources()) {}

  /// Loads \p file into \p out; \p chain holds the files being loaded
  /// (cycle detection). \p from is where the request came from (an
  /// `extends` value) or invalid for the root.
  bool loadFile(const std::string &file, TargetProfile &out,
                SourceRange from);

  std::vector<std::string> chain;

private:
  SourceRange at(const YAML::Mark &m, size_t length = 1) const {
    if (m.is_null() || m.pos < 0)
      return {};
    const char *p = buffer.data() + std::min<size_t>(m.pos, buffer.size());
    size_t n = std::min(length, size_t(buffer.data() + buffer.size() - p));
    return {llvm::SMLoc::getFromPointer(p),
            llvm::SMLoc::getFromPointer(p + std::max<size_t>(n, 1))};
  }
  SourceRange at(const YAML::Node &n) const {
    size_t len = n.IsScalar() ? std::max<size_t>(n.Scalar().size(), 1) : 1;
    return at(n.Mark(), len);
  }

  bool checkSection(const YAML::Node &map, const std::vector<Key> &keys,
                    const std::string &prefix);
  bool applyValue(const Key &key, const YAML::Node &value,
                  const std::string &dotted, TargetProfile &p);
  void apply(const YAML::Node &map, const std::vector<Key> &keys,
             const std::string &prefix, TargetProfile &p);
  std::string resolveBase(const std::string &spec, const std::string &fromFile);

  const TargetSearchPath &path;
  DiagnosticEngine &diags;
  SourceManager &sm;
  llvm::StringRef buffer;
};

/// Shape checks for one mapping: known keys, no duplicates, sections are
/// mappings. Values are checked when applied.
bool Loader::checkSection(const YAML::Node &map, const std::vector<Key> &keys,
                          const std::string &prefix) {
  bool ok = true;
  std::map<std::string, YAML::Mark> seen;
  for (auto it = map.begin(); it != map.end(); ++it) {
    YAML::Node k = it->first;
    if (!k.IsScalar()) {
      diags.error(at(k), "a key must be a plain name, not " + nodeKind(k));
      ok = false;
      continue;
    }
    std::string name = k.Scalar();
    auto [prev, fresh] = seen.emplace(name, k.Mark());
    if (!fresh) {
      diags.error(at(k), "duplicate key '" + prefix + name + "'");
      diags.note(at(prev->second, name.size()), "first given here");
      ok = false;
      continue;
    }
    const Key *key = nullptr;
    for (const Key &c : keys)
      if (c.name == name)
        key = &c;
    if (!key) {
      std::string msg = "unknown key '" + prefix + name + "'";
      const Key *best = nullptr;
      unsigned bestDist = 3;
      for (const Key &c : keys) {
        unsigned d = llvm::StringRef(name).edit_distance(c.name, true, 3);
        if (d < bestDist) {
          bestDist = d;
          best = &c;
        }
      }
      if (best) {
        msg += "; did you mean '" + prefix + best->name + "'?";
      } else {
        msg += "; ";
        msg += prefix.empty() ? "a profile" : "section '" +
                                                  prefix.substr(0, prefix.size() - 1) +
                                                  "'";
        msg += " takes ";
        for (size_t i = 0; i < keys.size(); ++i)
          msg += (i ? (i + 1 == keys.size() ? " and " : ", ") : "") +
                 std::string("'") + keys[i].name + "'";
        msg += " (see opd-target(5))";
      }
      diags.error(at(k), msg);
      ok = false;
      continue;
    }
    if (key->kind == Kind::Section) {
      YAML::Node v = it->second;
      if (!v.IsMap()) {
        SourceRange where = v.IsNull() ? at(k) : at(v);
        diags.error(where,
                    "'" + prefix + name + "' is a section (" + key->what +
                        "): expected a mapping of keys, got " + nodeKind(v));
        ok = false;
        continue;
      }
      ok &= checkSection(v, key->children, prefix + name + ".");
    }
  }
  return ok;
}

bool parseInteger(const std::string &s, int64_t &v) {
  if (s.empty())
    return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parseNumber(const std::string &s, double &v) {
  if (s.empty())
    return false;
  // Plain decimal or exponent notation only (no .inf, .nan, hex).
  if (s.find_first_not_of("0123456789+-.eE") != std::string::npos)
    return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() &&
         std::isfinite(v);
}

bool Loader::applyValue(const Key &key, const YAML::Node &v,
                        const std::string &dotted, TargetProfile &p) {
  auto typeError = [&](const std::string &expected) {
    diags.error(at(v), "'" + dotted + "' expects " + expected + ", got " +
                           nodeKind(v));
    return false;
  };
  bool plain = v.IsScalar() && v.Tag() != "!";
  switch (key.kind) {
  case Kind::String:
  case Kind::Choice: {
    if (!v.IsScalar() || v.Scalar().empty())
      return typeError("a string (" + key.what + ")");
    std::string s = v.Scalar();
    if (key.kind == Kind::Choice &&
        std::find(key.choices.begin(), key.choices.end(), s) ==
            key.choices.end()) {
      std::string list;
      for (size_t i = 0; i < key.choices.size(); ++i)
        list += (i ? (i + 1 == key.choices.size() ? " or '" : ", '")
                   : std::string("'")) +
                key.choices[i] + "'";
      diags.error(at(v), "'" + dotted + "' must be " + list + " (" + key.what +
                             "), got '" + s + "'");
      return false;
    }
    if (dotted == "cpu.triple" &&
        llvm::Triple(s).getArch() == llvm::Triple::UnknownArch) {
      diags.error(at(v), "'" + s +
                             "' is not a target triple LLVM knows (expected "
                             "ARCH-VENDOR-OS, e.g. x86_64-unknown-linux-gnu)");
      return false;
    }
    if (key.str)
      key.str(p) = s;
    return true;
  }
  case Kind::StringList: {
    if (!v.IsSequence())
      return typeError("a list of " + key.what);
    std::vector<std::string> items;
    bool ok = true;
    for (const YAML::Node &e : v) {
      if (!e.IsScalar() || e.Scalar().size() < 2 ||
          (e.Scalar()[0] != '+' && e.Scalar()[0] != '-')) {
        diags.error(at(e), "'" + dotted +
                               "' entries are LLVM feature names with + or "
                               "- in front (+avx2), got " +
                               nodeKind(e));
        ok = false;
        continue;
      }
      items.push_back(e.Scalar());
    }
    if (ok)
      key.list(p) = items;
    return ok;
  }
  case Kind::Integer:
  case Kind::Number: {
    double value = 0;
    int64_t iv = 0;
    bool good = plain && (key.kind == Kind::Integer
                              ? parseInteger(v.Scalar(), iv)
                              : parseNumber(v.Scalar(), value));
    if (!good)
      return typeError(key.kind == Kind::Integer
                           ? "an integer (" + key.what + ")"
                           : "a number (" + key.what + ")");
    if (key.kind == Kind::Integer)
      value = double(iv);
    if (key.bound.strict ? !(value > key.bound.min) : !(value >= key.bound.min)) {
      diags.error(at(v), "'" + dotted + "' must be " +
                             (key.bound.strict ? "greater than 0"
                                               : "0 or more") +
                             " (" + key.what + "), got " + v.Scalar());
      return false;
    }
    if (key.check) {
      std::string why = key.check(value);
      if (!why.empty()) {
        diags.error(at(v), "impossible value " + v.Scalar() + " for '" +
                               dotted + "': " + why);
        return false;
      }
    }
    if (key.kind == Kind::Integer)
      key.integer(p) = iv;
    else
      key.number(p) = value;
    return true;
  }
  case Kind::Section:
    break;
  }
  return false;
}

void Loader::apply(const YAML::Node &map, const std::vector<Key> &keys,
                   const std::string &prefix, TargetProfile &p) {
  std::set<std::string> done;
  for (auto it = map.begin(); it != map.end(); ++it) {
    YAML::Node keyNode = it->first;
    if (!keyNode.IsScalar() || !done.insert(keyNode.Scalar()).second)
      continue; // reported by checkSection
    std::string name = keyNode.Scalar();
    const Key *key = nullptr;
    for (const Key &c : keys)
      if (c.name == name)
        key = &c;
    if (!key || name == "extends")
      continue;
    std::string dotted = prefix + name;
    if (key->kind == Kind::Section) {
      YAML::Node section = it->second;
      if (!section.IsMap())
        continue; // reported by checkSection
      p.given.insert(dotted);
      apply(section, key->children, dotted + ".", p);
      continue;
    }
    if (applyValue(*key, it->second, dotted, p))
      p.given.insert(dotted);
  }
}

std::string Loader::resolveBase(const std::string &spec,
                                const std::string &fromFile) {
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(fromFile));
  if (isProfilePath(spec)) {
    if (llvm::sys::path::is_absolute(spec))
      return spec;
    llvm::SmallString<256> p(dir);
    llvm::sys::path::append(p, spec);
    return std::string(p);
  }
  // A sibling first, so a user's own profiles can extend each other.
  TargetSearchPath local;
  local.dirs.push_back(dir.empty() ? "." : std::string(dir));
  std::string found = findProfile(spec, local);
  return found.empty() ? findProfile(spec, path) : found;
}

bool Loader::loadFile(const std::string &file, TargetProfile &out,
                      SourceRange from) {
  llvm::SmallString<256> real;
  std::string key = llvm::sys::fs::real_path(file, real) ? file : std::string(real);
  if (std::find(chain.begin(), chain.end(), key) != chain.end()) {
    std::string cycle;
    auto first = std::find(chain.begin(), chain.end(), key);
    for (auto i = first; i != chain.end(); ++i)
      cycle += llvm::sys::path::filename(*i).str() + " -> ";
    cycle += llvm::sys::path::filename(key).str();
    diags.error(from, "'extends' makes a cycle: " + cycle);
    return false;
  }
  std::string why;
  auto id = sm.loadFile(file, why);
  if (!id) {
    diags.error(from, "cannot read target profile '" + file + "': " + why);
    return false;
  }
  chain.push_back(key);
  llvm::StringRef saved = buffer;
  buffer = sm.bufferText(*id);
  auto restore = [&](bool r) {
    buffer = saved;
    chain.pop_back();
    return r;
  };

  YAML::Node root;
  try {
    root = YAML::Load(buffer.str());
  } catch (const YAML::Exception &e) { // ParserException and the rest
    size_t opener = unclosedFlowBracket(buffer);
    if (opener != llvm::StringRef::npos &&
        llvm::StringRef(e.msg).contains("flow")) {
      char c = buffer[opener];
      YAML::Mark m;
      m.pos = int(opener);
      diags.error(at(m), std::string("malformed YAML: this '") + c +
                             "' is never closed; add the '" +
                             (c == '[' ? "]" : "}") + "' that ends it (" +
                             e.msg + ")");
      return restore(false);
    }
    diags.error(at(e.mark), "malformed YAML: " + e.msg);
    return restore(false);
  }
  if (!root.IsMap()) {
    diags.error(root.IsNull() ? SourceRange(llvm::SMLoc::getFromPointer(
                                    buffer.data()))
                              : at(root),
                "a target profile is a YAML mapping of keys (name:, cpu:, "
                "...), got " +
                    nodeKind(root));
    return restore(false);
  }
  // Shape problems do not stop the values from being checked: every
  // problem of the file is reported in one run.
  unsigned before = diags.errorCount();
  checkSection(root, schema(), "");

  TargetProfile self;
  if (YAML::Node base = root["extends"]) {
    if (!base.IsScalar() || base.Scalar().empty()) {
      diags.error(at(base), "'extends' expects a profile name or a file, got " +
                                nodeKind(base));
      return restore(false);
    }
    std::string spec = base.Scalar();
    if (spec == "native") {
      self = detectHostProfile();
      self.files.clear();
    } else {
      std::string baseFile = resolveBase(spec, file);
      if (baseFile.empty()) {
        diags.error(at(base), "no target profile '" + spec +
                                  "' for 'extends' (looked next to this "
                                  "file and in the target directories)");
        return restore(false);
      }
      if (!loadFile(baseFile, self, at(base)))
        return restore(false);
    }
    self.name.clear();
    self.description.clear();
    self.given.erase("name");
    self.given.erase("description");
  }
  apply(root, schema(), "", self);
  if (diags.errorCount() != before)
    return restore(false);
  if (!self.has("name")) {
    diags.error(root.size() ? at(root.begin()->first)
                            : SourceRange(llvm::SMLoc::getFromPointer(
                                  buffer.data())),
                "target profile '" + file +
                    "' has no 'name' (each file names itself, even with "
                    "'extends')");
    return restore(false);
  }
  self.files.insert(self.files.begin(), file);
  out = std::move(self);
  return restore(true);
}

// The data and unified caches of cpu0 as the kernel lists them
// (/sys/devices/system/cpu/cpu0/cache/index*/{type,level,size}): bytes by
// level, 0 where sysfs has none. Preferred to sysconf: in a virtual machine
// the C library's figures come from CPUID, which can describe the host's
// socket (a 256 MiB L3 on a VM given 32 MiB) rather than the guest's.
std::map<int, int64_t> sysfsCacheBytes() {
  std::map<int, int64_t> bytes;
  auto read = [](const std::string &path) {
    auto buffer = llvm::MemoryBuffer::getFileAsStream(path);
    return buffer ? (*buffer)->getBuffer().trim().str() : std::string();
  };
  for (int i = 0;; ++i) {
    const std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    const std::string type = read(dir + "type");
    if (type.empty())
      break;
    if (type != "Data" && type != "Unified")
      continue;
    const std::string text = read(dir + "size");
    llvm::StringRef size = text;
    int64_t scale = 1;
    if (size.consume_back("K"))
      scale = int64_t(1) << 10;
    else if (size.consume_back("M"))
      scale = int64_t(1) << 20;
    int level = 0;
    int64_t count = 0;
    if (!llvm::StringRef(read(dir + "level")).getAsInteger(10, level) &&
        !size.getAsInteger(10, count) && count > 0)
      bytes[level] = count * scale;
  }
  return bytes;
}
} // namespace

//===----------------------------------------------------------------------===//
// Public interface
//===----------------------------------------------------------------------===//

int64_t TargetProfile::defaultThreads() const {
  return has("backend.cpu.threads") ? cpuBackend.threads : 0;
}

int64_t TargetProfile::blockSize() const {
  if (has("backend.cuda.block_size"))
    return cudaBackend.blockSize;
  return has("gpu.block_size") ? gpu.blockSize : 0;
}

bool isProfilePath(const std::string &spec) {
  llvm::StringRef s(spec);
  return s.contains('/') || s.ends_with(".yaml") || s.ends_with(".yml");
}

std::string findProfile(const std::string &name, const TargetSearchPath &path) {
  for (const std::string &dir : path.dirs) {
    llvm::SmallString<256> p(dir);
    llvm::sys::path::append(p, name + ".yaml");
    if (llvm::sys::fs::is_regular_file(p))
      return std::string(p);
  }
  return "";
}

std::vector<std::string> listProfiles(const TargetSearchPath &path) {
  std::set<std::string> names;
  for (const std::string &dir : path.dirs) {
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end;
         it.increment(ec)) {
      llvm::StringRef file = llvm::sys::path::filename(it->path());
      if (file.ends_with(".yaml"))
        names.insert(file.drop_back(5).str());
    }
  }
  return {names.begin(), names.end()};
}

std::optional<TargetProfile> loadTargetProfile(const std::string &spec,
                                               const TargetSearchPath &path,
                                               DiagnosticEngine &diags) {
  if (spec == "native")
    return detectHostProfile();
  std::string file = isProfilePath(spec) ? spec : findProfile(spec, path);
  if (file.empty()) {
    std::string msg = "unknown target '" + spec + "'; ";
    auto names = listProfiles(path);
    if (names.empty()) {
      msg += "no profiles found (looked in";
      for (size_t i = 0; i < path.dirs.size(); ++i)
        msg += (i ? ", '" : " '") + path.dirs[i] + "'";
      msg += "); name a file with --target=FILE.yaml";
    } else {
      msg += "known: native";
      for (const auto &n : names)
        msg += ", " + n;
      msg += " (or a file: --target=FILE.yaml)";
    }
    diags.error({}, msg);
    return std::nullopt;
  }
  Loader loader(path, diags);
  TargetProfile p;
  if (!loader.loadFile(file, p, {}))
    return std::nullopt;

  // Required keys, on the resolved profile: reported at the file's start.
  SourceManager &sm = diags.sources();
  SourceRange where;
  for (unsigned id = 1; id <= sm.llvm().getNumBuffers(); ++id)
    if (sm.bufferName(id) == file) {
      llvm::StringRef text = sm.bufferText(id);
      size_t first = text.find_first_not_of(" \t\r\n");
      // Skip leading comment lines to point at the first key.
      while (first != llvm::StringRef::npos && text[first] == '#') {
        size_t nl = text.find('\n', first);
        first = nl == llvm::StringRef::npos
                    ? nl
                    : text.find_first_not_of(" \t\r\n", nl);
      }
      if (first != llvm::StringRef::npos)
        where = SourceRange(llvm::SMLoc::getFromPointer(text.data() + first));
    }
  bool ok = true;
  auto require = [&](const char *const (&req)[2]) {
    if (p.has(req[0]))
      return;
    diags.error(where, "target profile '" + p.name + "' has no '" + req[0] +
                           "' (" + req[1] + ")" +
                           (p.files.size() > 1 ? ", here or in the profiles "
                                                 "it extends"
                                               : ""));
    ok = false;
  };
  for (const auto &r : kRequired)
    require(r);
  if (p.hasGPU())
    for (const auto &r : kRequiredGPU)
      require(r);
  if (!ok)
    return std::nullopt;
  return p;
}

TargetProfile detectHostProfile() {
  TargetProfile p;
  p.name = "native";
  p.description = "the machine opdc runs on (detected)";
  p.given = {"name", "description", "cpu", "cpu.triple", "cpu.name",
             "cpu.features", "cpu.vector_width_bits", "cpu.cores",
             "cpu.threads_per_core", "node", "node.sockets"};
  p.cpu.triple = llvm::sys::getProcessTriple();
  p.cpu.name = llvm::sys::getHostCPUName().str();
  auto features = llvm::sys::getHostCPUFeatures();
  std::vector<std::string> names;
  for (const auto &f : features)
    names.push_back((f.getValue() ? "+" : "-") + f.getKey().str());
  std::sort(names.begin(), names.end());
  p.cpu.features = names;
  auto on = [&](const char *f) {
    auto it = features.find(f);
    return it != features.end() && it->getValue();
  };
  llvm::Triple triple(p.cpu.triple);
  if (triple.isX86())
    p.cpu.vectorWidthBits = on("avx512f") ? 512 : on("avx") ? 256 : 128;
  else
    p.cpu.vectorWidthBits = 128; // NEON, SSE2-class baseline
  long logical = sysconf(_SC_NPROCESSORS_ONLN);
  int physical = llvm::get_physical_cores();
  if (logical < 1)
    logical = 1;
  if (physical < 1 || physical > logical)
    physical = int(logical);
  p.cpu.cores = physical;
  p.cpu.threadsPerCore = std::max<long>(1, logical / physical);
  p.nodeSockets = 1;
  std::map<int, int64_t> caches = sysfsCacheBytes();
#ifdef _SC_LEVEL1_DCACHE_SIZE
  if (caches.empty())
    caches = {{1, sysconf(_SC_LEVEL1_DCACHE_SIZE)},
              {2, sysconf(_SC_LEVEL2_CACHE_SIZE)},
              {3, sysconf(_SC_LEVEL3_CACHE_SIZE)}};
#endif
  if (caches[1] > 0) {
    p.cpu.l1dCacheKiB = caches[1] / 1024;
    p.given.insert("cpu.l1d_cache_kib");
  }
  if (caches[2] > 0) {
    p.cpu.l2CacheKiB = caches[2] / 1024;
    p.given.insert("cpu.l2_cache_kib");
  }
  if (caches[3] >= 1024 * 1024) {
    p.cpu.l3CacheMiB = caches[3] / (1024 * 1024);
    p.given.insert("cpu.l3_cache_mib");
  }
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageSize > 0) {
    double gib = double(pages) * double(pageSize) / (1024.0 * 1024 * 1024);
    p.nodeMemoryGiB = std::round(gib * 10) / 10;
    p.given.insert("node.memory_gib");
  }
  return p;
}

} // namespace opdc
