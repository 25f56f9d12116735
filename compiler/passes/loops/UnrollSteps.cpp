// UnrollSteps.cpp - Unroll time loops of stencil steps by two (then by
// two again, to -funroll-steps=N), so that N steps share one sweep over
// memory.
// SPDX-License-Identifier: Apache-2.0
//
// A time loop whose body is block loops and swaps,
//   for s in lo..hi { loop jacobi (p @ cross -> q); swap(p, q) }
// streams its dats through memory once a step. Unrolled by two,
//   for s2 in 0..max(hi - lo, 0) / 2 {
//     let s = lo + 2 * s2;     B(s)
//     let s' = lo + 2 * s2 + 1; B(s')
//   }
//   for s'' in lo + 2 * (max(hi - lo, 0) / 2)..hi { B(s'') }  // 0 or 1 step
// the second step's loops follow the first's with only swaps between
// them, which join-chains (passes/loops/JoinChains.cpp) renames away; the fuse
// pass then runs both steps as one skewed sweep, the second a few rows
// behind the first, reading the rows the first just wrote from the cache
// (temporal blocking of two steps). The adjoint of such a loop reverses two
// steps at a time: one re-run of the first and both reverse steps, one
// sweep again; and its snapshots each cover two steps.
//
// Further (pass unroll-more-steps, after the derivative passes): the loops
// of two steps this pass made are unrolled by two again, and again, until
// a sweep runs -funroll-steps=N steps (default 8, over 2D and 3D blocks; a
// 3D sweep runs in tiles of dimension 1 whose planes stay in L2 at any
// depth, lib/exec/Skew.cpp; docs/performance.md): deeper
// temporal blocking, each row of the dats read from memory once every N
// steps. The tangent's copy of a loop is plain code and gets the same; the
// adjoint's checkpointed time loop keeps its steps of two (reversing four
// steps a sweep measured 3-8 % slower: more intermediate states alive at
// once).
// Four steps a sweep beat two on Poisson and heat3d with the same bits
// (bench/adjoint/README.md), and eight beat four in 2D as in 3D
// (docs/performance.md). The remainder loops (a pair, a step) are left as
// they are.
//
// Legal: the same steps run in the same order with the same values of the
// loop variable (each copy declares it, the second copy and the remainder
// with fresh slots for it and every variable the body declares), so every
// loop computes what it computed before: results are bitwise the same.
// Only bodies of block loops, swaps and host declarations and assignments
// without calls or clocks are unrolled (what the adjoint reverses step by
// step and the fuse pass can skew); and only where skewed sweeps are made
// (TargetQueries::skewedSweeps: not -fno-skew, not the CUDA backend), with a
// loop that reads a dat at stencil offsets and either a swap in the body or
// a loop of the body writing that dat (a copy back): the steps of a
// time-stepping stencil code, where the second step depends on the first
// through memory.
#include "passes/loops/UnrollSteps.h"

#include "passes/utils/BodyUtils.h"

#include "ir/IR.h"
#include "ir/IRVisitor.h"

#include "llvm/Support/Casting.h"

#include <algorithm>
#include <numeric>
#include <string_view>

namespace opdc {

using namespace ir;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;

namespace {

constexpr const char *PassName = "unroll-steps";

/// Whether \p f is a time loop of stencil steps this pass unrolls.
bool unrollable(const ForStmt &f, const PassContext &ctx) {
  if (!stencilStepBody(f.body.stmts, f.slot, !ctx.mpi))
    return false;
  // A constant trip count below 2 gains nothing.
  const auto *lo = dyn_cast<ConstantExpr>(f.lo.get());
  const auto *hi = dyn_cast<ConstantExpr>(f.hi.get());
  return !(lo && hi && hi->value.asInt() - lo->value.asInt() < 2);
}

ExprPtr intConst(Type t, int64_t v) {
  return std::make_unique<ConstantExpr>(ConstValue::ofInt(t.scalar, v));
}

ExprPtr binary(BinaryOp op, ExprPtr a, ExprPtr b) {
  return std::make_unique<BinaryExpr>(op, std::move(a), std::move(b));
}

/// Unrolls the for loop at \p sp (known unrollable); returns the loops that
/// replace it.
std::vector<StmtPtr> unroll(Function &fn, ForStmt &f) {
  const Var loopVar = fn.vars[f.slot];
  const Type t = loopVar.type;
  auto count = [&] {
    std::vector<ExprPtr> args;
    args.push_back(binary(BinaryOp::Sub, f.hi->clone(), f.lo->clone()));
    args.push_back(intConst(t, 0));
    return std::make_unique<IntrinsicExpr>(Intrinsic::Max, std::move(args));
  };
  const unsigned pair =
      fn.addVar(loopVar.name + ".pair", t, false, loopVar.range);
  auto pairRef = [&] { return std::make_unique<VarRefExpr>(pair, t); };
  // s = lo + 2 * pair, s' = lo + 2 * pair + 1.
  auto stepOf = [&](int64_t k) {
    ExprPtr e = binary(BinaryOp::Add, f.lo->clone(),
                       binary(BinaryOp::Mul, intConst(t, 2), pairRef()));
    return k ? binary(BinaryOp::Add, std::move(e), intConst(t, k))
             : std::move(e);
  };
  const unsigned second =
      fn.addVar(loopVar.name + ".u", t, false, loopVar.range);
  Body first = iterationCopy(fn, f.body, f.slot, f.slot, stepOf(0), false);
  Body next = iterationCopy(fn, f.body, f.slot, second, stepOf(1), true);
  Body pairs;
  for (StmtPtr &s : first.stmts)
    pairs.stmts.push_back(std::move(s));
  for (StmtPtr &s : next.stmts)
    pairs.stmts.push_back(std::move(s));
  std::vector<StmtPtr> out;
  out.push_back(std::make_unique<ForStmt>(
      pair, intConst(t, 0), binary(BinaryOp::Div, count(), intConst(t, 2)),
      std::move(pairs), f.range));
  // The last step when the count is odd.
  const unsigned rest =
      fn.addVar(loopVar.name + ".rest", t, false, loopVar.range);
  const unsigned restVar =
      fn.addVar(loopVar.name + ".r", t, false, loopVar.range);
  Body last = iterationCopy(fn, f.body, f.slot, restVar,
                            std::make_unique<VarRefExpr>(rest, t), true);
  ExprPtr restLo =
      binary(BinaryOp::Add, f.lo->clone(),
             binary(BinaryOp::Mul, intConst(t, 2),
                    binary(BinaryOp::Div, count(), intConst(t, 2))));
  out.push_back(std::make_unique<ForStmt>(
      rest, std::move(restLo), f.hi->clone(), std::move(last), f.range));
  return out;
}

/// The steps an iteration of \p f runs: 2 for a loop unroll() made (its
/// variable NAME.pair), 4 for one made from that (NAME.pair.pair), ..., 1
/// for any other loop (a remainder, a source loop). Source names never
/// hold a dot (the grammar's IDENT), and the derivative passes' copies
/// keep the suffix (PROC.s.pair), so the name marks exactly those loops.
unsigned pairSteps(const Function &fn, const ForStmt &f) {
  std::string_view n = fn.vars[f.slot].name;
  unsigned steps = 1;
  while (n.size() > 5 && n.substr(n.size() - 5) == ".pair") {
    steps *= 2;
    n.remove_suffix(5);
  }
  return steps;
}

/// Whether \p f is a loop of steps unroll() made, not its remainder.
bool madeByUnroll(const Function &fn, const ForStmt &f) {
  return pairSteps(fn, f) > 1;
}

/// The most dimensions of a block the loops of \p f's body run over.
unsigned blockDims(const ForStmt &f) {
  unsigned dims = 0;
  for (const StmtPtr &sp : f.body.stmts)
    if (const auto *l = dyn_cast_or_null<ParLoopStmt>(sp.get()))
      if (l->block)
        dims = std::max(dims, l->block->dims);
  return dims;
}

/// Unrolls the unrollable for loops of \p b (and of bodies nested in it),
/// with \p pairsOnly those unroll() made that run fewer steps a sweep than
/// the context asks for their blocks.
bool unrollIn(Function &fn, Body &b, PassContext &ctx, const char *pass,
              bool pairsOnly) {
  auto wantsMore = [&](const ForStmt &f) {
    return madeByUnroll(fn, f) &&
           pairSteps(fn, f) <
               (blockDims(f) == 3 ? ctx.unrollSteps3D : ctx.unrollSteps);
  };
  return rewriteForLoops(b, [&](ForStmt &f, const Stmt *) {
    if (!unrollable(f, ctx) || (pairsOnly && !wantsMore(f)))
      return std::vector<StmtPtr>{};
    ctx.stats.add(pass, "unrolled", "time loops unrolled by two");
    return unroll(fn, f);
  });
}

} // namespace

bool stencilStepBody(std::span<const StmtPtr> body, unsigned loopVar,
                     bool copyBack) {
  // Dats read at stencil offsets, and dats a loop of the body writes: a
  // step depends on the one before through memory when the body swaps
  // dats or writes a dat that it reads at offsets (a copy back, as OPS's
  // Poisson: `loop stencil5 (u @ cross -> u2); loop update (u2 -> u)`).
  std::vector<const Dat *> readAtOffsets, written;
  bool swap = false;
  for (const StmtPtr &sp : body) {
    const Stmt *s = sp.get();
    if (!s)
      continue;
    if (s->kind == StmtKind::Swap) {
      swap = true;
      continue;
    }
    if (const auto *l = dyn_cast<ParLoopStmt>(s)) {
      if (!l->block)
        return false;
      for (const AccessDescriptor &a : l->args) {
        if (a.kind == ArgKind::Stencil && a.mode == AccessMode::Read &&
            a.stencil && !a.stencil->isCentreOnly())
          readAtOffsets.push_back(a.dat);
        if (a.usesDat() && modeWrites(a.mode))
          written.push_back(a.dat);
      }
      continue;
    }
    if (s->kind != StmtKind::Decl && s->kind != StmtKind::Assign)
      return false;
  }
  bool carried = swap && !readAtOffsets.empty();
  for (const Dat *d : readAtOffsets)
    carried = carried || (copyBack && std::find(written.begin(), written.end(),
                                                d) != written.end());
  return carried && plainHostCode(body, loopVar);
}

bool unrollSteps(Program &program, PassContext &ctx) {
  if (!ctx.backend.skewedSweeps() ||
      std::max(ctx.unrollSteps, ctx.unrollSteps3D) < 2)
    return false;
  bool changed = false;
  for (Function *f : program.functions())
    if (f->isHost())
      changed = unrollIn(*f, f->body, ctx, PassName, false) || changed;
  return changed;
}

bool unrollMoreSteps(Program &program, PassContext &ctx) {
  if (!ctx.backend.skewedSweeps())
    return false;
  bool changed = false;
  for (unsigned steps = 2; steps < std::max(ctx.unrollSteps, ctx.unrollSteps3D);
       steps *= 2)
    for (Function *f : program.functions())
      if (f->isHost())
        changed =
            unrollIn(*f, f->body, ctx, "unroll-more-steps", true) || changed;
  return changed;
}

} // namespace opdc
