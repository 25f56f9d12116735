// BodyUtils.h - Small rewrites of IR bodies shared by passes that move a
// function's body into another (inline, tangent).
// SPDX-License-Identifier: Apache-2.0
#ifndef OPDC_PASSES_UTILS_BODYUTILS_H
#define OPDC_PASSES_UTILS_BODYUTILS_H

#include "ir/IR.h"

#include <functional>
#include <span>
#include <string>
#include <vector>

namespace opdc {

/// Calls \p f on each body directly nested in \p s: an if's two, a for's
/// or a while's, a checkpoint's four (body, reverse, taped, taped reverse);
/// none for other statements. Passes that rewrite every body of a function
/// recurse through it.
void forEachNestedBody(ir::Stmt &s, const std::function<void(ir::Body &)> &f);
/// Calls \p f on \p b and on every body nested in it, outer first.
void forEachBody(ir::Body &b, const std::function<void(ir::Body &)> &f);

/// True when a return statement occurs anywhere in \p b.
bool containsReturn(const ir::Body &b);
/// True when every path through \p b ends in a return.
bool alwaysReturns(const ir::Body &b);
/// Moves the statements after `if c { ... return }` (no else) into the if's
/// else, recursively, so that early returns become tail returns. Behaviour
/// is unchanged: those statements ran only when c was false.
void sinkAfterEarlyReturns(ir::Body &b);
/// True when every return of \p b is in tail position: the last statement
/// of \p b (when \p tail), or in the tail of an if/else ending \p b; never
/// inside a for or while.
bool returnsOnlyInTail(const ir::Body &b, bool tail = true);
/// Turns the tail returns of \p b into `result = value` (a mutable slot),
/// or drops them when \p result < 0 or they return nothing.
void replaceTailReturns(ir::Body &b, int result);
/// Replaces the break and continue statements of every loop in \p b by
/// boolean flags: a jump sets its flag, the statements it would skip run
/// under `if !(flags)`, a for loop's body runs under `if !broken`, a while
/// loop's condition gets `&& !broken`, and the continue flag is cleared at
/// the top of the body. Same behaviour, structured control flow only (what
/// the adjoint pass reverses). \p newFlag(name) makes a mutable bool slot,
/// declared by the caller; the flags are assigned, never declared, here.
void structureJumps(
    ir::Body &b, const std::function<unsigned(const std::string &)> &newFlag);
/// Renumbers every variable slot of \p b (declarations, for loops,
/// references and reduction arguments of loops) through \p map: slot s
/// becomes map[s].
void remapSlots(ir::Body &b, const std::vector<unsigned> &map);
/// Recomputes the overwritten flags of the tape pushes in \p b (not in
/// nested bodies) from the first loop after each that reaches the dat
/// (ir::firstLoopReaching; passes that rewrite or move loops, such as
/// fusion, call it on the bodies they change).
void fixTapeOverwrites(ir::Body &b);

/// A copy of \p body for one iteration of a loop with variable \p var: it
/// declares the variable (as slot \p varTo) from \p value first, and with
/// \p fresh every slot the body declares is renamed to a fresh one (a
/// second copy in the same body). Unrolling passes build their iterations
/// from it.
ir::Body iterationCopy(ir::Function &fn, const ir::Body &body, unsigned var,
                       unsigned varTo, ir::ExprPtr value, bool fresh);
/// Replaces each statement of \p b and of the bodies nested in it by the
/// statements \p rewrite returns for it (given the statement before it in
/// the rewritten body, or null); a statement for which it returns nothing
/// stays, and the bodies nested in it are visited. Returns true when any
/// statement was replaced.
bool rewriteStmts(ir::Body &b,
                  const std::function<std::vector<ir::StmtPtr>(
                      ir::Stmt &, const ir::Stmt *before)> &rewrite);
/// rewriteStmts for the for loops alone. The unrolling and splitting
/// passes are built on it.
bool rewriteForLoops(ir::Body &b,
                     const std::function<std::vector<ir::StmtPtr>(
                         ir::ForStmt &, const ir::Stmt *before)> &rewrite);
/// Whether the host statements \p body call nothing, read no clock and
/// leave slot \p loopVar alone (what an unrolling pass may copy: the copies
/// run the same statements in the same order).
bool plainHostCode(std::span<const ir::StmtPtr> body, unsigned loopVar);

/// Loop bound \p e plus \p c, folded when the bound is a constant.
ir::ExprPtr plusConst(const ir::Expr &e, int64_t c);
/// min(a, b) or max(a, b) (\p id) of two loop bounds, folded when both are
/// constants or the same expression.
ir::ExprPtr minMax(ir::Intrinsic id, ir::ExprPtr a, ir::ExprPtr b);
/// Whether a block range is empty whatever the run-time values: some
/// dimension with constant bounds lo >= hi.
bool provablyEmpty(const std::vector<ir::LoopRange> &ranges);
/// \p outer minus \p inner (a block range inside it, or empty in some
/// dimension) as disjoint slabs, 2 per dimension, those provably empty
/// left out: slab (d, below/above) is \p inner in the dimensions before d,
/// below or above it in d, all of \p outer after d.
std::vector<std::vector<ir::LoopRange>>
slabsAround(const std::vector<ir::LoopRange> &outer,
            const std::vector<ir::LoopRange> &inner);

} // namespace opdc
#endif
