// AdjointZerosImpl.h - What the adjoint-zeros pass asks of statements and
// kernels (AdjointZerosFacts.cpp), for the plan and rewrite in
// AdjointZeros.cpp.
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_DERIV_ADJOINTZEROSIMPL_H
#define OPDC_PASSES_DERIV_ADJOINTZEROSIMPL_H

#include "ir/IR.h"

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

} // namespace opdc::azeros
#endif
