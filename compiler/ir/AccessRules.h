// AccessRules.h - The legality rules for a loop argument's access
// descriptor, for the verifier and for passes that rewrite loops.
// SPDX-License-Identifier: Apache-2.0
//
// Each function returns why a rule is broken, as the verifier words it
// (without the "loop 'k': arg N: " prefix); an empty string or list means
// the rules hold. The functions look only at the descriptor, its kernel
// parameter and its loop: that the dat, map and stencil belong to the
// Program is the verifier's business, and is assumed here.
#ifndef OPDC_IR_ACCESSRULES_H
#define OPDC_IR_ACCESSRULES_H

#include "ir/IR.h"

#include <string>
#include <vector>

namespace opdc::ir {

/// Which access modes an argument of its kind may have:
///   - a dat (direct, indirect, stencil) is never a reduction target;
///   - through a map every dat mode is allowed (the runtime orders out
///     and inout, docs/decisions/0280-indirect-writes-in-element-order.md);
///   - through a stencil with points off the centre, only reads;
///   - a map argument is read or out, a global read is read, a reduction
///     argument is min, max or sum.
/// Empty when \p a's mode is allowed.
std::string modeRule(const AccessDescriptor &a);

/// Why \p a does not agree with the kernel parameter \p p it binds: the same
/// mode, the same element type (scalar and components), and bytes equal to
/// scalarBytes(scalar) * dim. One reason per broken rule.
std::vector<std::string> paramRules(const AccessDescriptor &a,
                                    const KernelParam &p);

/// Why \p a (bound to \p p) does not fit its loop \p l:
///   - direct: the dat is on the loop's set or block, and \p p has no
///     stencil other than the centre;
///   - indirect (set loops): the map goes from the loop's set to the dat's
///     set, and the map index is within the arity;
///   - stencil (block loops): the dat is on the loop's block and the
///     stencil has the block's dimensions;
///   - map: the map goes from the loop's set and is passed as i32[arity].
/// Expects the loop to be of the kind the argument needs (set or block) and
/// the dat, map and stencil the kind uses to be set. One reason per broken
/// rule; mode rules are modeRule's.
std::vector<std::string> placementRules(const AccessDescriptor &a,
                                        const KernelParam &p,
                                        const ParLoopStmt &l);

/// The arguments through which loop \p l writes dat \p d, when those
/// writes are `out` at the centre (a block loop's stencil of one point at
/// (0, ...), or a direct argument of a block or a set loop) and nothing else
/// of \p l touches \p d (so \p l writes d at every point or element of its
/// range, if its kernel assigns them; a tape push may then hand d's storage
/// over, TapeStmt::overwritten); empty otherwise.
std::vector<unsigned> centreOnlyWrites(const ParLoopStmt &l, const Dat *d);

/// Per dat of \p dats: whether loop \p l overwrites it at every point or
/// element of its range (TapeStmt::overwritten, a checkpoint's snapshot
/// handed over): written only through `out` arguments at the centre
/// (centreOnlyWrites) that the kernel assigns whole before anything can
/// return. Empty when none is.
std::vector<bool> loopOverwrites(const ParLoopStmt &l,
                                 const std::vector<Dat *> &dats);

/// The first loop after statement \p i of \p b that reaches dat \p d,
/// past loops that do not and host declarations and assignments without
/// calls; null when another statement (or the end) comes first. A tape
/// push of d flagged overwritten (TapeStmt::overwritten) is taken at this
/// loop's prepare: the loops before it leave d's storage alone.
const ParLoopStmt *firstLoopReaching(const Body &b, size_t i, const Dat *d);

/// How a checkpoint's snapshot may save each of the state dats \p dats of a
/// step whose body is \p body (the runtime's opd_ckpt_save_overwritten
/// flags): 0 by copy; 1 by taking its storage at the prepare of the body's
/// first loop, which overwrites it (loopOverwrites); 2 by taking its
/// storage one step later: the body only reads the dat, its swaps hand the
/// storage to a dat that the body's first loop overwrites, so the next
/// step's first loop overwrites the values the snapshot needs, untouched
/// until then (Poisson's `jacobi(p -> q); swap(p, q)`: p). Only a body of
/// loops, swaps and host declarations and assignments without calls
/// qualifies for 2 (nothing else may write a dat or swap conditionally).
/// 3 (such a body too) by taking its storage at the prepare of a later
/// loop of the body, the first that writes the dat, which overwrites it:
/// the loops before it only read it, and no swap moves it before it, so
/// they read the values the snapshot keeps, from the storage it takes
/// (heat3d's pair `step(u -> u2); step(u2 -> u)`, one skewed sweep: u; the
/// loops read their dats' addresses at their own prepares; the runtime
/// takes it on one rank only, and copies it under MPI).
/// Empty when every dat is 0.
std::vector<uint8_t> stateTakes(const Body &body,
                                const std::vector<Dat *> &dats);

/// Whether kernel \p k assigns its parameter \p index whole, at the centre,
/// in a top-level statement (or, an array, component by component in a
/// top-level `for i in 0 .. dim`): one that every run of the kernel reaches
/// (no return, break or continue in the kernel).
bool assignsWhole(const Function &k, unsigned index);

} // namespace opdc::ir
#endif
