// BuildCache.cpp - Linked programs kept by content, reused across builds.
// SPDX-License-Identifier: Apache-2.0
//
// `opdc build` and `opdc run` compile the whole program every time unless
// the output is up to date (Depfile.cpp), and `opdc run` has no output to
// be up to date. Compiling takes seconds (the IR passes multiply code and
// LLVM optimises all of it), so the linked program is kept in a cache
// under a digest of everything that decides its bytes: the options (the
// driver's build stamp, which holds the resolved profile), the contents of
// the program and of every module it imports, the contents of the profile's
// files, and the identity (path, size, time) of the compiler and of the
// runtime it links. When a later build computes the same key, the driver
// copies the program out (build) or runs it in place (run) and compiles
// nothing.
//
// An entry is one file: the program, then a 32-byte trailer (the 128-bit
// xxh3 of the program, its length, a magic word). A lookup checks the trailer
// against the contents, so an entry cut short or damaged on disk is taken
// for a miss, removed and rebuilt, never run. Writers put an entry in a
// temporary file of the cache directory and rename it into place, which is
// atomic: two builds of one program at once each write their own file and
// the last rename wins, with the same bytes. Readers only ever see whole
// entries. The trailing bytes do not disturb the ELF program that runs
// in place; `build` copies the program without them.
//
// The cache is bounded (OPDC_CACHE_SIZE MiB, 1 GiB by default): after a
// store, the least recently used entries (by modification time, which a hit
// refreshes) are removed until the rest fits. A program removed while an
// `opdc run` of it runs is unaffected (the file lives on until it exits).
#include "driver/BuildCache.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MD5.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace opdc {

namespace {

constexpr char Magic[8] = {'O', 'P', 'D', 'C', 'E', 'N', 'T', '1'};
constexpr size_t TrailerSize = 16 + 8 + sizeof(Magic);
constexpr const char *EntrySuffix = ".prog";

std::string env(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

/// The 128-bit xxh3 of \p data (fast: an entry is checked on every use).
void contentDigest(llvm::StringRef data, char out[16]) {
  llvm::XXH128_hash_t h = llvm::xxh3_128bits(
      llvm::ArrayRef<uint8_t>(data.bytes_begin(), data.size()));
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<char>((h.low64 >> (8 * i)) & 0xff);
    out[8 + i] = static_cast<char>((h.high64 >> (8 * i)) & 0xff);
  }
}

/// The program's length when \p data ends in a trailer that matches it.
std::optional<size_t> checkTrailer(llvm::StringRef data) {
  if (data.size() < TrailerSize)
    return std::nullopt;
  const char *t = data.data() + data.size() - TrailerSize;
  if (std::memcmp(t + 24, Magic, sizeof(Magic)) != 0)
    return std::nullopt;
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i)
    length = (length << 8) | static_cast<unsigned char>(t[16 + i]);
  if (length != data.size() - TrailerSize)
    return std::nullopt;
  char digest[16];
  contentDigest(data.take_front(length), digest);
  if (std::memcmp(digest, t, 16) != 0)
    return std::nullopt;
  return length;
}

} // namespace

std::optional<std::string> BuildCache::defaultDirectory() {
  std::string off = env("OPDC_NO_CACHE");
  if (!off.empty() && off != "0")
    return std::nullopt;
  llvm::SmallString<256> dir;
  if (std::string x = env("XDG_CACHE_HOME"); !x.empty()) {
    dir = x;
  } else if (std::string home = env("HOME"); !home.empty()) {
    dir = home;
    llvm::sys::path::append(dir, ".cache");
  } else {
    return std::nullopt;
  }
  llvm::sys::path::append(dir, "opdc");
  return std::string(dir);
}

uint64_t BuildCache::defaultLimit() {
  std::string mib = env("OPDC_CACHE_SIZE");
  if (!mib.empty()) {
    char *end = nullptr;
    unsigned long long n = std::strtoull(mib.c_str(), &end, 10);
    if (end && *end == '\0')
      return static_cast<uint64_t>(n) << 20;
  }
  return uint64_t(1) << 30;
}

void BuildCache::addKey(const std::string &part) {
  keyParts += std::to_string(part.size());
  keyParts += ':';
  keyParts += part;
  digest.clear();
}

void BuildCache::addFileContents(const std::string &path) {
  addKey(path);
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  addKey(buffer ? (*buffer)->getBuffer().str() : "missing");
}

void BuildCache::addFileIdentity(const std::string &path) {
  addKey(path);
  llvm::sys::fs::file_status st;
  if (llvm::sys::fs::status(path, st)) {
    addKey("missing");
    return;
  }
  addKey(
      std::to_string(st.getSize()) + "@" +
      std::to_string(st.getLastModificationTime().time_since_epoch().count()));
}

std::string BuildCache::key() {
  if (digest.empty()) {
    llvm::MD5 md5;
    md5.update(keyParts);
    llvm::MD5::MD5Result r;
    md5.final(r);
    digest = r.digest().str().str();
  }
  return digest;
}

std::string BuildCache::entryPath() {
  llvm::SmallString<256> p(dir);
  llvm::sys::path::append(p, key() + EntrySuffix);
  return std::string(p);
}

std::optional<std::string> BuildCache::lookup(bool &corrupt) {
  corrupt = false;
  std::string path = entryPath();
  if (!llvm::sys::fs::exists(path))
    return std::nullopt;
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer || !checkTrailer((*buffer)->getBuffer())) {
    corrupt = true;
    llvm::sys::fs::remove(path);
    return std::nullopt;
  }
  // Least recently used: a hit is a use.
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
  return path;
}

bool BuildCache::extract(const std::string &entry, const std::string &to,
                         std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(entry, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  std::optional<size_t> length =
      buffer ? checkTrailer((*buffer)->getBuffer()) : std::nullopt;
  if (!length) {
    error = "the cached program '" + entry + "' changed while it was read";
    return false;
  }
  // Replace, not overwrite: the old program may be running.
  llvm::sys::fs::remove(to);
  std::error_code ec;
  {
    llvm::raw_fd_ostream os(to, ec, llvm::sys::fs::OF_None);
    if (!ec) {
      os << (*buffer)->getBuffer().take_front(*length);
      os.close();
      if (os.has_error()) {
        ec = os.error();
        os.clear_error();
      }
    }
  }
  if (!ec)
    ec = llvm::sys::fs::setPermissions(to, llvm::sys::fs::all_read |
                                               llvm::sys::fs::all_exe |
                                               llvm::sys::fs::owner_write);
  if (ec) {
    error = "cannot write output file '" + to + "': " + ec.message();
    return false;
  }
  return true;
}

bool BuildCache::store(const std::string &file, std::string &error) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    error = "cannot create the cache directory '" + dir + "': " + ec.message();
    return false;
  }
  auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = "cannot read '" + file + "': " + buffer.getError().message();
    return false;
  }
  llvm::StringRef data = (*buffer)->getBuffer();
  char trailer[TrailerSize];
  contentDigest(data, trailer);
  uint64_t length = data.size();
  for (int i = 0; i < 8; ++i)
    trailer[16 + i] = static_cast<char>((length >> (8 * i)) & 0xff);
  std::memcpy(trailer + 24, Magic, sizeof(Magic));

  llvm::SmallString<256> model(dir);
  llvm::sys::path::append(model, key() + "-%%%%%%%%.tmp");
  int fd = -1;
  llvm::SmallString<256> tmp;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(model, fd, tmp)) {
    error =
        "cannot write to the cache directory '" + dir + "': " + ec.message();
    return false;
  }
  std::error_code ec;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << data;
    os.write(trailer, TrailerSize);
    os.close();
    if (os.has_error()) {
      ec = os.error();
      os.clear_error();
    }
  }
  if (!ec)
    ec = llvm::sys::fs::setPermissions(tmp, llvm::sys::fs::all_read |
                                                llvm::sys::fs::all_exe |
                                                llvm::sys::fs::owner_write);
  if (!ec)
    ec = llvm::sys::fs::rename(tmp, entryPath());
  if (ec) {
    llvm::sys::fs::remove(tmp);
    error =
        "cannot write to the cache directory '" + dir + "': " + ec.message();
    return false;
  }
  evict();
  return true;
}

void BuildCache::evict() {
  struct Entry {
    std::string path;
    uint64_t size;
    llvm::sys::TimePoint<> time;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  const auto now = std::chrono::system_clock::now();
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::sys::fs::file_status st;
    if (llvm::sys::fs::status(it->path(), st) ||
        !llvm::sys::fs::is_regular_file(st))
      continue;
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    // A temporary file a day old belongs to a build that died.
    if (name.ends_with(".tmp")) {
      if (now - st.getLastModificationTime() > std::chrono::hours(24))
        llvm::sys::fs::remove(it->path());
      continue;
    }
    if (!name.ends_with(EntrySuffix))
      continue;
    entries.push_back({it->path(), st.getSize(), st.getLastModificationTime()});
    total += st.getSize();
  }
  if (total <= limit)
    return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry &a, const Entry &b) { return a.time < b.time; });
  const std::string newest = entryPath();
  for (const Entry &e : entries) {
    if (total <= limit)
      break;
    if (e.path == newest)
      continue;
    if (!llvm::sys::fs::remove(e.path))
      total -= e.size;
  }
}

} // namespace opdc
