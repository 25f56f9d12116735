// BuildCache.h - Linked programs kept by content, reused across builds.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_DRIVER_BUILDCACHE_H
#define OPDC_DRIVER_BUILDCACHE_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace opdc {

/// A directory of linked programs named by a digest of everything that went
/// into them (BuildCache.cpp says what and why). One entry is the program
/// followed by a trailer that holds its length and digest, so a torn or
/// corrupted entry is detected and rebuilt; entries are written to a
/// temporary file and renamed into place, so concurrent builds never see
/// half an entry.
class BuildCache {
public:
  /// The cache directory: $XDG_CACHE_HOME/opdc, else $HOME/.cache/opdc. nullopt
  /// when the cache is off: OPDC_NO_CACHE is set (to anything but "0" or ""),
  /// or no directory can be named.
  static std::optional<std::string> defaultDirectory();

  /// The size bound in bytes: $OPDC_CACHE_SIZE in MiB, else 1 GiB.
  static uint64_t defaultLimit();

  BuildCache(std::string dir, uint64_t limitBytes)
      : dir(std::move(dir)), limit(limitBytes) {}

  /// Accumulates the key. Every part is added with its length, so
  /// ("ab","c") and ("a","bc") differ.
  void addKey(const std::string &part);
  /// Adds a file's path and contents (a missing file adds its path and
  /// "missing").
  void addFileContents(const std::string &path);
  /// Adds a file's path, size and modification time: for the compiler and
  /// the runtime archive, too large to read on every build.
  void addFileIdentity(const std::string &path);

  /// The entry's path if the cache holds a valid entry for the key (its
  /// trailer matches its contents; its time is refreshed for LRU). A
  /// corrupted entry is removed and reported as `corrupt`.
  std::optional<std::string> lookup(bool &corrupt);

  /// Copies the program of entry \p entry (without the trailer) to \p to
  /// with execute permission. False with \p error set on failure.
  bool extract(const std::string &entry, const std::string &to,
               std::string &error);

  /// Stores the program \p file under the key, then evicts the least
  /// recently used entries beyond the size bound. Failures are not errors
  /// (the build succeeded; it is just not cached): false with \p error set.
  bool store(const std::string &file, std::string &error);

  /// The key's hex digest (after the parts were added).
  std::string key();
  const std::string &directory() const { return dir; }

private:
  std::string entryPath();
  void evict();

  std::string dir;
  uint64_t limit;
  std::string keyParts; ///< what the key digest is computed from
  std::string digest;   ///< computed once, on first use
};

} // namespace opdc
#endif
