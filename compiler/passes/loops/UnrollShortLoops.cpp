// UnrollShortLoops.cpp - Unroll host for loops of a few iterations whose
// loops meet over one set across an iteration's end, so that the fuse pass
// sees the loops of one iteration next to those of the next.
// SPDX-License-Identifier: Apache-2.0
//
// OP2's Airfoil runs its predictor and corrector as a loop of two:
//   loop save_soln over cells (q -> qold)
//   for k in 0..2 {
//     loop adt_calc over cells (x through pcell, q -> adt)
//     loop res_calc over edges (...)
//     loop bres_calc over bedges (...)
//     rms = 0.0
//     loop update over cells (qold, q, res, adt -> q, rms)
//   }
// The fuse pass works on a chain of loops in one body, so it never sees
// save_soln beside the first adt_calc, which reads the q that save_soln
// reads, nor one iteration's update beside the next iteration's adt_calc.
// Unrolled,
//   loop save_soln; let k = 0; loop adt_calc; ...; loop update;
//   let k.u = 1; loop adt_calc; ...; loop update
// save_soln and adt_calc become one sweep over cells that reads q once
// (faster than the two apart: docs/performance.md, "Airfoil's predictor
// and corrector unrolled"). update and the next adt_calc stay apart:
// update's float sum keeps a fused loop from the loop vectoriser (rule 7 of
// passes/loops/Fuse.cpp).
//
// Which loops: `for v in lo..hi` with constant bounds and 2 to
// MaxShortTrips iterations whose body is loops over sets (block loops'
// time loops are unroll-steps' work) and host declarations and
// assignments that call nothing, read no clock and leave v alone, with at
// least one loop; and where unrolling lets loops meet over one set: the
// body's last loop runs over the set of its first (an iteration's end meets
// the next iteration's start), or the statement before the for is a loop
// over that set.
//
// Also with communication avoidance (--comm-avoid=on, or auto, the default
// with --mpi): an unrolled Airfoil iteration is one chain of loops with
// update's reduction in its middle, which the comm-avoid pass cuts after
// update and plans as two chains (save_soln+adt_calc -> update, adt_calc ->
// bres_calc), as it planned each copy's adt_calc -> update before; the MPI
// build keeps the fusion the serial build gets.
//
// Legal: the copies run the same statements in the same order with the same
// values of v (each copy declares v from a constant, the copies after the
// first with fresh slots for v and for every variable the body declares), so
// every loop computes what it computed before and the results are bitwise
// the same. Off with --passes without it (-fno-fuse drops it too: it only
// serves fusion).
#include "passes/loops/UnrollShortLoops.h"

#include "passes/utils/BodyUtils.h"

#include "ir/IR.h"
#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

namespace opdc {

using namespace ir;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;

namespace {

constexpr const char *PassName = "unroll-short-loops";
/// The most iterations a loop may have to be unrolled: a short loop of a
/// time step (a predictor and corrector, a Runge-Kutta scheme's stages),
/// not a time loop.
constexpr int64_t MaxShortTrips = 4;

/// The loops of \p body when it is what this pass unrolls (loops over
/// sets and plain host declarations and assignments), else empty.
std::vector<const ParLoopStmt *> setLoopsOf(const Body &body,
                                            unsigned loopVar) {
  std::vector<const ParLoopStmt *> loops;
  for (const StmtPtr &sp : body.stmts) {
    const Stmt *s = sp.get();
    if (!s)
      continue;
    if (const auto *l = dyn_cast<ParLoopStmt>(s)) {
      if (!l->set)
        return {};
      loops.push_back(l);
      continue;
    }
    if (s->kind != StmtKind::Decl && s->kind != StmtKind::Assign)
      return {};
  }
  if (!plainHostCode(body.stmts, loopVar))
    return {};
  return loops;
}

/// The iterations of \p f when it is a short loop this pass unrolls after
/// \p before (the statement preceding it, or null), else 0.
int64_t shortTrips(const ForStmt &f, const Stmt *before) {
  const auto *lo = dyn_cast<ConstantExpr>(f.lo.get());
  const auto *hi = dyn_cast<ConstantExpr>(f.hi.get());
  if (!lo || !hi)
    return 0;
  const int64_t trips = hi->value.asInt() - lo->value.asInt();
  if (trips < 2 || trips > MaxShortTrips)
    return 0;
  std::vector<const ParLoopStmt *> loops = setLoopsOf(f.body, f.slot);
  if (loops.empty())
    return 0;
  const auto *prev = dyn_cast_or_null<ParLoopStmt>(before);
  const bool meets = loops.back()->set == loops.front()->set ||
                     (prev && prev->set && prev->set == loops.front()->set);
  return meets ? trips : 0;
}

/// The statements that replace \p f: its body once per iteration.
std::vector<StmtPtr> unroll(Function &fn, const ForStmt &f, int64_t trips) {
  const Var loopVar = fn.vars[f.slot];
  const int64_t lo = dyn_cast<ConstantExpr>(f.lo.get())->value.asInt();
  std::vector<StmtPtr> out;
  for (int64_t i = 0; i < trips; ++i) {
    const unsigned var = i == 0 ? f.slot
                                : fn.addVar(loopVar.name + ".u", loopVar.type,
                                            false, loopVar.range);
    Body copy = iterationCopy(fn, f.body, f.slot, var,
                              std::make_unique<ConstantExpr>(ConstValue::ofInt(
                                  loopVar.type.scalar, lo + i)),
                              i > 0);
    for (StmtPtr &s : copy.stmts)
      out.push_back(std::move(s));
  }
  return out;
}

bool unrollIn(Function &fn, Body &b, PassContext &ctx) {
  return rewriteForLoops(b, [&](ForStmt &f, const Stmt *before) {
    const int64_t trips = shortTrips(f, before);
    if (!trips)
      return std::vector<StmtPtr>{};
    ctx.diags.remark(f.range,
                     "unrolled the loop of " + std::to_string(trips) +
                         " iterations over '" + fn.vars[f.slot].name +
                         "': its loops meet the next iteration's over one set",
                     PassName);
    ctx.stats.add(PassName, "unrolled", "short loops unrolled");
    return unroll(fn, f, trips);
  });
}

} // namespace

bool unrollShortLoops(Program &program, PassContext &ctx) {
  bool changed = false;
  for (Function *f : program.functions())
    if (f->isHost())
      changed = unrollIn(*f, f->body, ctx) || changed;
  return changed;
}

} // namespace opdc
