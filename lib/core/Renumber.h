// Renumber.h - Locality renumbering of unstructured sets (--renumber=).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_LIB_CORE_RENUMBER_H
#define OPDC_LIB_CORE_RENUMBER_H

#include <cstdint>
#include <vector>

namespace opdc::rt {

/// How one process numbers its set elements (--renumber=): as read,
/// reverse Cuthill-McKee on the graph of the most referenced set with the
/// other sets ordered after it, or RCM only where it improves the numbering
/// a lot (Auto). The default is None. See lib/core/Renumber.cpp,
/// docs/performance.md.
enum class RenumberMethod { None, RCM, Auto };
RenumberMethod renumberMethod();
void setRenumberMethod(RenumberMethod m);
/// Whether --renumber= was given explicitly (MPI runs warn that they ignore
/// it).
bool renumberExplicit();
void setRenumberExplicit(bool on);

/// Renumbers every set once (opd_rt_mesh_ready or the first set loop that
/// does not fill a map, from the serial partitionSets, core/Serial.cpp):
/// permutes maps and set dats in place and records the original index of each
/// element in opd_set::globalIds, so that files are read and written in the
/// original numbering. Nothing with RenumberMethod::None or after the first
/// call.
void renumberSets();
/// Whether renumberSets has run (maps created later would be in the wrong
/// numbering: opd_map_create refuses them).
bool setsRenumbered();
/// Forgets that the sets were renumbered (opd_rt_finalize, with the sets).
void forgetRenumbering();

/// Reverse Cuthill-McKee order of the graph with adjacency lists
/// adj[off[v] .. off[v+1]) (symmetric, no self loops): newToOld[new] = old.
/// Each connected component starts from a pseudo-peripheral vertex of
/// minimum degree. Exposed for tests.
std::vector<int32_t> reverseCuthillMcKee(const std::vector<int64_t> &off,
                                         const std::vector<int32_t> &adj);
/// Mean |new(u) - new(v)| over the edges under `newToOld` (empty:
/// identity): the span --renumber=auto compares.
double meanSpan(const std::vector<int64_t> &off,
                const std::vector<int32_t> &adj,
                const std::vector<int32_t> &newToOld);
/// Bandwidth max |new(u) - new(v)| over the edges under `newToOld` (empty:
/// identity); for tests and the profile note.
int64_t graphBandwidth(const std::vector<int64_t> &off,
                       const std::vector<int32_t> &adj,
                       const std::vector<int32_t> &newToOld);

} // namespace opdc::rt
#endif
