// BuildReuse.h - What lets the driver reuse an earlier build: the tool
// files an output must be newer than, and the build cache and its key.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_DRIVER_BUILDREUSE_H
#define OPDC_DRIVER_BUILDREUSE_H

#include "driver/BuildCache.h"
#include "driver/Options.h"

#include <memory>
#include <string>
#include <vector>

namespace opdc {
class SourceManager;
struct TargetProfile;

/// What an output must also be newer than: this opdc, and for programs the
/// runtime they link.
std::vector<std::string> toolFiles(const DriverOptions &opts, const char *argv0,
                                   const TargetProfile *target);

/// The build cache for this compile, or null: only programs (build without
/// -c, run) are cached, and not when the user asked for what only a
/// compilation prints (remarks, pass dumps, timings, statistics).
std::unique_ptr<BuildCache> openBuildCache(const DriverOptions &opts);

/// The cache key: everything that decides the linked program's bytes
/// (BuildCache.cpp).
void addCacheKey(BuildCache &cache, const DriverOptions &opts,
                 const char *argv0, const std::string &stamp,
                 const SourceManager &sm, unsigned firstProgramBuffer,
                 const TargetProfile *target);

} // namespace opdc
#endif
