// AdjointSweep.cpp - The adjoint pass's sweeps: each host statement of P
// into the forward sweep and its adjoint into the reverse sweep.
// SPDX-License-Identifier: Apache-2.0
//
// Adjoint.cpp's file comment says what the sweeps hold and why reversing
// them is legal; here is how each kind of statement is taped (pushes
// before what it overwrites, pops that mirror them), checkpointed (top
// level for loops), branched and looped backwards.
#include "passes/deriv/AdjointImpl.h"

#include "passes/deriv/ForwardDiff.h"
#include "passes/deriv/MinMaxDiff.h"
#include "passes/utils/BodyUtils.h"

#include "ir/AccessRules.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "support/Diagnostics.h"

#include <algorithm>

namespace opdc::adj {

void Expansion::sweep(const Body &in, Body &fwd, Body &rev, bool top,
                      bool cancelTail) {
  std::vector<std::vector<StmtPtr>> pieces, chunks;
  std::vector<size_t> undo;
  std::vector<bool> pure;
  for (const StmtPtr &s : in.stmts) {
    std::vector<StmtPtr> f, r;
    undoLen = NoUndo;
    adjointPure = false;
    sweepStmt(*s, f, r, top);
    pieces.push_back(std::move(f));
    chunks.push_back(std::move(r));
    undo.push_back(undoLen);
    pure.push_back(adjointPure);
  }
  // Run forward and then back at once (the reverse body of a checkpointed
  // step), the last statement's forward piece and the undo that opens its
  // reverse chunk cancel: the state before it is what its adjoint reads.
  // So do the ones before it while the adjoints of those cancelled read no
  // primal state (a swap's).
  for (size_t i = pieces.size(); cancelTail && i-- > 0;) {
    if (undo[i] == NoUndo)
      break;
    pieces[i].clear();
    chunks[i].erase(chunks[i].begin(), chunks[i].begin() + long(undo[i]));
    b.ctx.stats.add(PassName, "cancelled",
                    "forward statements cancelled against their undo");
    if (!pure[i])
      break;
  }
  for (auto &p : pieces)
    for (StmtPtr &s : p)
      fwd.stmts.push_back(std::move(s));
  for (auto c = chunks.rbegin(); c != chunks.rend(); ++c)
    for (StmtPtr &s : *c)
      rev.stmts.push_back(std::move(s));
  // A compound statement around this body cannot be cancelled.
  undoLen = NoUndo;
  adjointPure = false;
}

void Expansion::sweepFor(const ForStmt &f, std::vector<StmtPtr> &fwd,
                         std::vector<StmtPtr> &rev, bool top) {
  SourceRange at = f.range;
  Type it = caller.vars[f.slot].type;
  Body fb, rb;
  sweep(f.body, fb, rb, false, /*cancelTail=*/top);
  if (top) {
    // A top-level loop: binomial checkpointing of its steps.
    Writes w;
    w.visitBody(f.body);
    std::vector<unsigned> vars;
    for (unsigned v : w.vars)
      if (caller.vars[v].type.isScalar() || caller.vars[v].type.isArray())
        vars.push_back(v);
    vars.push_back(f.slot);
    auto cf = std::make_unique<CheckpointStmt>(false, at);
    cf->slot = f.slot;
    cf->lo = f.lo->clone();
    cf->hi = f.hi->clone();
    cf->snapshots = cloneExpr(req.checkpoints);
    cf->dats = w.dats;
    cf->vars = vars;
    cf->body = plain(f.body);
    // Store-all plans (snapshots >= steps) tape every step on the way
    // forward and only pop and run adjoints on the way back.
    Body tf, tr;
    sweep(f.body, tf, tr, false);
    cf->tapedBody = std::move(tf);
    fwd.push_back(std::move(cf));
    auto cr = std::make_unique<CheckpointStmt>(true, at);
    cr->slot = f.slot;
    cr->dats = w.dats;
    cr->vars = vars;
    cr->body = plain(f.body);
    for (StmtPtr &x : fb.stmts)
      cr->reverseBody.stmts.push_back(std::move(x));
    for (StmtPtr &x : rb.stmts)
      cr->reverseBody.stmts.push_back(std::move(x));
    cr->tapedReverseBody = std::move(tr);
    rev.push_back(std::move(cr));
    b.ctx.stats.add(PassName, "checkpointed", "loops checkpointed");
    return;
  }
  unsigned lo = hoist("lo", it), hi = hoist("hi", it);
  fwd.push_back(assign(AssignOp::Set, ref(lo, it), f.lo->clone()));
  fwd.push_back(assign(AssignOp::Set, ref(hi, it), f.hi->clone()));
  unsigned k = caller.addVar(caller.vars[f.slot].name, it, false, at);
  Body body;
  body.stmts.push_back(assign(AssignOp::Set, ref(f.slot, it), ref(k, it)));
  for (StmtPtr &x : fb.stmts)
    body.stmts.push_back(std::move(x));
  fwd.push_back(std::make_unique<ForStmt>(k, ref(lo, it), ref(hi, it),
                                          std::move(body), at));
  fwd.push_back(tape(true, {}, {lo, hi}, at));
  // Backwards: %i = hi - 1 - j for j in 0 .. hi - lo.
  rev.push_back(tape(false, {}, {lo, hi}, at));
  unsigned j = caller.addVar(caller.vars[f.slot].name + ".rev", it, false, at);
  Body rbody;
  rbody.stmts.push_back(assign(
      AssignOp::Set, ref(f.slot, it),
      std::make_unique<BinaryExpr>(
          BinaryOp::Sub,
          std::make_unique<BinaryExpr>(
              BinaryOp::Sub, ref(hi, it),
              std::make_unique<ConstantExpr>(ConstValue::ofInt(it.scalar, 1))),
          ref(j, it))));
  for (StmtPtr &x : rb.stmts)
    rbody.stmts.push_back(std::move(x));
  rev.push_back(std::make_unique<ForStmt>(
      j, zero(it),
      std::make_unique<BinaryExpr>(BinaryOp::Sub, ref(hi, it), ref(lo, it)),
      std::move(rbody), at));
}

void Expansion::sweepLoop(const ParLoopStmt &l, std::vector<StmtPtr> &fwd,
                          std::vector<StmtPtr> &rev) {
  SourceRange at = l.range;
  int mm =
      activeMinMaxArg(l, [&](unsigned v) { return activeVars.count(v) != 0; });
  if (mm >= 0) {
    // A min or max of active values: through a sum (MinMaxDiff.h).
    Body in, f, r;
    for (MinMaxStmt &x : minMaxAsSum(
             b.program, b.ctx, l, unsigned(mm),
             [&](const std::string &n, Type t, bool act) {
               unsigned v = hoist(n, t);
               if (act)
                 activeVars.insert(v);
               return v;
             },
             /*declare=*/false))
      in.stmts.push_back(std::move(x.stmt));
    sweep(in, f, r, false);
    for (StmtPtr &x : f.stmts)
      fwd.push_back(std::move(x));
    for (StmtPtr &x : r.stmts)
      rev.push_back(std::move(x));
    return;
  }
  Writes w;
  w.visitParLoop(l);
  std::vector<unsigned> vars;
  for (unsigned v : w.vars)
    if (caller.vars[v].type.isScalar())
      vars.push_back(v);
  tapePair(w.dats, vars, at, fwd, rev);
  cast<TapeStmt>(*fwd.back()).overwritten = ir::loopOverwrites(l, w.dats);
  fwd.push_back(l.clone());
  adjointLoop(l, rev);
  undoLen = 1;
}

void Expansion::sweepSolve(const SolveStmt &v, std::vector<StmtPtr> &fwd,
                           std::vector<StmtPtr> &rev) {
  SourceRange at = v.range;
  if (!b.solves.check(v, active)) {
    b.ctx.diags.note(req.range, "in the adjoint requested here");
    ok = false;
    return;
  }
  Writes w;
  w.visitSolve(v);
  tapePair(w.dats, w.vars, at, fwd, rev);
  fwd.push_back(assigningSolve(v));
  for (unsigned r : w.vars)
    if (activeVars.count(r)) {
      Type t = caller.vars[r].type;
      rev.push_back(assign(AssignOp::Set, ref(rd.adjointSlot(r), t), zero(t)));
    }
  b.solves.adjoint(
      v, [&](Dat *d) { return active.count(d) ? adjointDat(d) : nullptr; },
      [&](std::vector<StmtPtr> &out) {
        // cg's operator, inlined here: its forward and reverse sweeps.
        std::unique_ptr<Function> op =
            procWithCallsInlined(b.program, *v.op, b.ctx);
        Body ob = op->body.clone();
        std::vector<unsigned> os(op->vars.size());
        for (size_t i = 0; i < op->vars.size(); ++i) {
          os[i] = hoist(op->name + "." + op->vars[i].name, op->vars[i].type);
          if (isFloatType(op->vars[i].type))
            activeVars.insert(os[i]);
        }
        remapSlots(ob, os);
        replaceTailReturns(ob, -1);
        Body f, r;
        sweep(ob, f, r, false);
        for (StmtPtr &x : f.stmts)
          out.push_back(std::move(x));
        for (StmtPtr &x : r.stmts)
          out.push_back(std::move(x));
      },
      rev);
  undoLen = 1;
}

void Expansion::sweepStmt(const Stmt &s, std::vector<StmtPtr> &fwd,
                          std::vector<StmtPtr> &rev, bool top) {
  SourceRange at = s.range;
  switch (s.kind) {
  case StmtKind::Decl:
  case StmtKind::Assign: {
    std::unique_ptr<AssignStmt> a;
    if (auto *d = dyn_cast<DeclStmt>(&s))
      a = std::make_unique<AssignStmt>(AssignOp::Set,
                                       ref(d->slot, caller.vars[d->slot].type),
                                       d->init->clone(), at);
    else
      a.reset(cast<AssignStmt>(s.clone().release()));
    unsigned root = rootSlot(*a->target);
    bool taped = !caller.vars[root].type.isString();
    if (taped)
      fwd.push_back(tape(true, {}, {root}, at));
    if (taped)
      rev.push_back(tape(false, {}, {root}, at));
    rd.assignAdjoint(*a, rev);
    fwd.push_back(std::move(a));
    undoLen = taped ? 1 : 0;
    return;
  }
  case StmtKind::Eval:
    fwd.push_back(s.clone());
    return;
  case StmtKind::If: {
    const auto &i = cast<IfStmt>(s);
    Type bt = Type::scalarOf(ScalarKind::Bool);
    unsigned c = hoist("branch", bt);
    Body ft, fe, rt, re;
    sweep(i.thenBody, ft, rt, false);
    sweep(i.elseBody, fe, re, false);
    fwd.push_back(assign(AssignOp::Set, ref(c, bt), i.cond->clone()));
    fwd.push_back(
        std::make_unique<IfStmt>(ref(c, bt), std::move(ft), std::move(fe), at));
    fwd.push_back(tape(true, {}, {c}, at));
    rev.push_back(tape(false, {}, {c}, at));
    rev.push_back(
        std::make_unique<IfStmt>(ref(c, bt), std::move(rt), std::move(re), at));
    return;
  }
  case StmtKind::For: {
    sweepFor(cast<ForStmt>(s), fwd, rev, top);
    return;
  }
  case StmtKind::While: {
    const auto &w = cast<WhileStmt>(s);
    Type it = Type::scalarOf(ScalarKind::I64);
    unsigned n = hoist("trips", it);
    Body fb, rb;
    sweep(w.body, fb, rb, false);
    fb.stmts.push_back(assign(
        AssignOp::Add, ref(n, it),
        std::make_unique<ConstantExpr>(ConstValue::ofInt(ScalarKind::I64, 1))));
    fwd.push_back(assign(AssignOp::Set, ref(n, it), zero(it)));
    fwd.push_back(
        std::make_unique<WhileStmt>(w.cond->clone(), std::move(fb), at));
    fwd.push_back(tape(true, {}, {n}, at));
    rev.push_back(tape(false, {}, {n}, at));
    unsigned j = caller.addVar("trip", it, false, at);
    rev.push_back(
        std::make_unique<ForStmt>(j, zero(it), ref(n, it), std::move(rb), at));
    return;
  }
  case StmtKind::ParLoop: {
    sweepLoop(cast<ParLoopStmt>(s), fwd, rev);
    return;
  }
  case StmtKind::Swap: {
    const auto &w = cast<SwapStmt>(s);
    fwd.push_back(s.clone());
    rev.push_back(s.clone());
    if (active.count(w.a) || active.count(w.b))
      rev.push_back(
          std::make_unique<SwapStmt>(adjointDat(w.a), adjointDat(w.b), at));
    undoLen = 1;
    adjointPure = true;
    return;
  }
  case StmtKind::Solve: {
    // The tape restores what the solve overwrote; SolveDiff.h builds the
    // adjoint from that state. Its results' adjoints end there.
    sweepSolve(cast<SolveStmt>(s), fwd, rev);
    return;
  }
  default:
    error(at, "this statement cannot be differentiated in reverse");
    return;
  }
}

} // namespace opdc::adj
