// AdjointZerosImpl.h - What the adjoint-zeros pass asks of statements and
// kernels (AdjointZerosFacts.cpp), for the plan and rewrite in
// AdjointZeros.cpp.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_DERIV_ADJOINTZEROSIMPL_H
#define OPDC_PASSES_DERIV_ADJOINTZEROSIMPL_H

#include "ir/IR.h"

#include <string_view>
#include <vector>

namespace opdc::azeros {

/// Whether every point of \p s lies in \p r. A dimension of s whose upper
/// bound is max(A, lo) is empty or ends at A.
bool within(const std::vector<ir::LoopRange> &s,
            const std::vector<ir::LoopRange> &r);
/// Whether \p s may touch dat \p d (any statement whose dats are not all
/// named, such as a call, may).
bool mentions(const ir::Stmt &s, const ir::Dat *d);
/// Whether \p b may leave a step early or skip its end: a break, continue
/// or return anywhere in it.
bool jumps(const ir::Body &b);
/// The same for one statement, itself included.
bool jumps(const ir::Stmt &s);
/// Whether \p s uses kernel parameter \p p.
bool usesParam(const ir::Stmt &s, unsigned p);
/// Z: loop \p l ends by zeroing its argument on \p d, whose other uses in
/// the kernel are reads. Returns the argument, or -1.
int zeroingArg(const ir::ParLoopStmt &l, const ir::Dat *d);
/// A seed: loop \p l only zeroes \p d (a zero-fill kernel's one statement).
bool zeroes(const ir::ParLoopStmt &l, const ir::Dat *d);
/// G: loop \p l increments its argument on \p d at the centre, first of all
/// in a top-level statement of its kernel. Returns the argument, or -1.
int incrementArg(const ir::ParLoopStmt &l, const ir::Dat *d);

/// The suffix of a kernel adjoint-zeros rewrote to assign its adjoint
/// where it had added to zero (the gather G, `.set`).
inline constexpr std::string_view AssignedSuffix = ".set";
/// Whether \p name is such a kernel's.
inline bool isAssignedKernel(std::string_view name) {
  return name.size() >= AssignedSuffix.size() &&
         name.substr(name.size() - AssignedSuffix.size()) == AssignedSuffix;
}

/// A block loop that reaches what it writes only at the element, with no
/// reduction and no map (each point's kernel independent of the others'),
/// split at \p inner, a range within its own: \p l now runs over inner,
/// and the loops returned, its copies, over the rest in slabs (slabsAround).
/// Each point runs the kernel once, as before. Returns nothing, \p l
/// unchanged, where that does not hold or inner is not provably within.
std::vector<ir::StmtPtr>
splitPointwise(ir::ParLoopStmt &l, const std::vector<ir::LoopRange> &inner);

} // namespace opdc::azeros
#endif
