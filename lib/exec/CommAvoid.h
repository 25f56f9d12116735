// CommAvoid.h - Communication-avoiding chains in the runtime (exec/CommAvoid.cpp).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_LIB_EXEC_COMMAVOID_H
#define OPDC_LIB_EXEC_COMMAVOID_H
#include "core/Objects.h"
#include "core/Runtime.h" // haloLayersWanted, blockHaloDepthWanted

#include <cstdint>
#include <string>

struct opd_loop;

namespace opdc::rt {
/// The extension opd_loop_extend_next left for the next prepare (true),
/// or zeros (false); taking it clears it.
bool takeExtension(int64_t *lo, int64_t *hi);
/// Called at the end of every loop: measures the chain's loops in its
/// plain measuring run, closes the running chain's timer after its last
/// loop.
void chainLoopEnded(const opd_loop *loop);
/// The profile's lines about chains ("" when none ran or on one process).
/// Collective.
std::string chainProfile();
/// A profile entry for a chain's grouped exchange (exec/Loop.cpp): an
/// opd_loop without iterations, cached in *cache.
opd_loop *groupEntry(opd_loop **cache, const char *name);
/// The halo messages this rank has sent so far (every profile entry).
int64_t messagesSent();
} // namespace opdc::rt
#endif
