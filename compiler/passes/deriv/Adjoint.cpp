// Adjoint.cpp - Build the adjoint (reverse-mode derivative) of procs.
// SPDX-License-Identifier: Apache-2.0
//
// `let (J, dJ) = adjoint P(args) wrt (x, alpha) checkpoints 4` becomes, in
// place (every variable of P declared first, as `var %P.name`):
//
//   forward sweep   P's body; before a statement overwrites a dat or a
//                   host variable, `tape push` saves it; the branch an if
//                   took and the trip counts of loops are pushed after
//                   them; P's top-level for loops run as `checkpoint
//                   forward` (binomial checkpointing: snapshots of the
//                   step's state, never a tape of every step)
//   final state     the dats P wrote, copied aside
//   seed            the adjoint dats zeroed, %P.result.b = 1
//   reverse sweep   P's statements last to first: `tape pop` restores what
//                   the statement overwrote, then its adjoint runs: a loop
//                   over the kernel's adjoint (ReverseDiff.h) for a loop,
//                   adjoint assignments for host code, the branch taken,
//                   loops backwards; top-level for loops as `checkpoint
//                   reverse`, whose reverse body is one step's forward
//                   sweep with tape and its reverse sweep
//   results         the dats given P's final state back (swapped with
//                   the copies aside); dJ.alpha =
//                   %P.alpha.b; J = %P.result. dJ.x is x's adjoint dat.
//
// Loop-level transposition (design §5), per argument whose value the
// inputs reach: a read dat's adjoint is incremented (through the same map;
// at the centre of a stencil), an out dat's adjoint read then zeroed, an
// inout's read and written, an incremented dat's adjoint read; a global
// read becomes a sum reduction into a host variable whose value then flows
// into the read expression's variables; a sum reduction's adjoint is a
// global read. Incremented adjoints through maps keep the primal's race
// rules (reads through maps become increments through the same maps:
// colouring plans and, under MPI, the exec-halo redundant increments give
// every owner all contributions, as for primal increments; no reverse halo
// exchange is needed).
//
// Legal because the reverse sweep visits every statement of the forward
// sweep in reverse order with the primal state restored to what it was
// before the statement (the tape is last-in first-out and each statement's
// pops mirror its pushes; a reversed checkpoint step starts from a
// snapshot or a re-run of earlier steps), and each statement's adjoint
// reads only that state, the adjoint dats and the adjoint variables.
//
// Activity: as the tangent's (DerivUtils.h: activeDats): dats reached from
// the wrt dats and from P's float variables and wrt parameters get adjoint
// dats NAME.b (the wrt dats' adjoints are the gradient dats). The procs P
// calls are inlined into a copy of P first. A solve is reversed by the
// solve with the transposed system (SolveDiff.h); a min or max reduction
// of an active value is rewritten first (MinMaxDiff.h): its adjoint goes to
// the winner; break and continue become flags first (structureJumps). Host
// arrays are taped and checkpointed element by element.
//
// A dat that the loop after its push writes at every point or element of
// the loop's range (an `out` argument at the centre, or a set loop's direct
// one, that the kernel assigns before anything can return, and no other
// argument of that dat) is pushed as `overwritten`: the runtime hands its
// storage to the tape at the loop's prepare and copies only the points or
// elements the loop does not write (halos), instead of copying every one
// (opd_tape_push_dat_overwritten); with the pop that hands the taped
// storage back, a taped step copies no whole dat.
//
// This file holds a request's expansion and P's plain body; the sweeps are
// AdjointSweep.cpp, a loop's adjoint AdjointLoop.cpp (AdjointImpl.h).
#include "passes/deriv/Adjoint.h"
#include "passes/deriv/AdjointImpl.h"

#include "passes/deriv/DerivUtils.h"
#include "passes/deriv/ForwardDiff.h"
#include "passes/deriv/MinMaxDiff.h"
#include "passes/deriv/ReverseDiff.h"
#include "passes/deriv/SolveDiff.h"
#include "passes/deriv/SolveFlow.h"
#include "passes/utils/BodyUtils.h"

#include "ir/AccessRules.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

#include <algorithm>
#include <map>
#include <set>

namespace opdc::adj {

/// \p e's entry in Program::scalarGradients: `let e.var = adjSlot` after
/// the reverse sweep, the request's first statement \p first; \p sweep
/// holds where the forward sweep lies and P's variables (declsEnd,
/// valueSlot, resultSlot, floatVars), the rest is filled here.
static ScalarGradient scalarGradient(Function &caller, const AdjointStmt &req,
                                     const DerivEntry &e, unsigned adjSlot,
                                     const std::vector<Dat *> &written,
                                     const Stmt *first,
                                     const ScalarGradient &sweep) {
  ScalarGradient g;
  g.declsEnd = sweep.declsEnd;
  g.valueSlot = sweep.valueSlot;
  g.resultSlot = sweep.resultSlot;
  g.floatVars = sweep.floatVars;
  g.host = &caller;
  g.proc = req.proc;
  for (const ExprPtr &a : req.args)
    g.args.push_back(a->clone());
  g.param = unsigned(e.of.param);
  g.gradVar = unsigned(e.var);
  g.adjSlot = adjSlot;
  g.written = written;
  g.first = first;
  g.range = e.range;
  return g;
}

/// The dats \p body reads: loop inputs, both sides of swaps, a solve's
/// inputs and what its operator reads.
static std::set<const Dat *> datsRead(const Body &body) {
  struct Reads : IRVisitor {
    std::set<const Dat *> dats;
    void visitParLoop(const ParLoopStmt &l) override {
      for (const AccessDescriptor &a : l.args)
        if (a.usesDat() && modeReads(a.mode))
          dats.insert(a.dat);
    }
    void visitSwap(const SwapStmt &s) override {
      dats.insert(s.a);
      dats.insert(s.b);
    }
    void visitSolve(const SolveStmt &s) override {
      for (Dat *d : solveInputs(s))
        dats.insert(d);
      for (Dat *d : solveOperatorReads(s))
        dats.insert(d);
    }
  } reads;
  reads.visitBody(body);
  return reads.dats;
}

std::vector<StmtPtr> AdjointBuilder::expand(Function &caller,
                                            const Stmt &request) {
  return Expansion(*this, caller, cast<AdjointStmt>(request)).run();
}

bool Expansion::check(const Body &body) {
  if (const Stmt *bad = firstForbidden(body)) {
    error(req.range, "cannot build the adjoint of proc '" + p.name +
                         "': " + forbiddenWhat(*bad));
    b.ctx.diags.note(bad->range, "here");
    return false;
  }
  if (!returnsOnlyInTail(body))
    return error(req.range, "cannot build the adjoint of proc '" + p.name +
                                "': it returns from inside a loop");
  return true;
}

Dat *Expansion::adjointDat(Dat *d) {
  auto it = adj.find(d);
  if (it != adj.end())
    return it->second;
  Dat *&a = b.adjointDats[d];
  if (!a) {
    a = makeDerivativeDat(b.program, *d, d->name + ".b");
    b.ctx.stats.add(PassName, "dats", "adjoint dats created");
  }
  adj[d] = a;
  return a;
}

/// P's body without tape: declarations become assignments (every variable
/// is declared at the top) and each for loop gets a slot of its own.
Body Expansion::plain(const Body &in) {
  Body out;
  for (const StmtPtr &s : in.stmts) {
    switch (s->kind) {
    case StmtKind::Decl: {
      const auto &d = cast<DeclStmt>(*s);
      out.stmts.push_back(std::make_unique<AssignStmt>(
          AssignOp::Set, ref(d.slot, caller.vars[d.slot].type), d.init->clone(),
          d.range));
      break;
    }
    case StmtKind::If: {
      const auto &i = cast<IfStmt>(*s);
      out.stmts.push_back(std::make_unique<IfStmt>(
          i.cond->clone(), plain(i.thenBody), plain(i.elseBody), i.range));
      break;
    }
    case StmtKind::While: {
      const auto &w = cast<WhileStmt>(*s);
      out.stmts.push_back(
          std::make_unique<WhileStmt>(w.cond->clone(), plain(w.body), w.range));
      break;
    }
    case StmtKind::For: {
      const auto &f = cast<ForStmt>(*s);
      Type it = caller.vars[f.slot].type;
      unsigned k = caller.addVar(caller.vars[f.slot].name, it, false, f.range);
      Body body;
      body.stmts.push_back(assign(AssignOp::Set, ref(f.slot, it), ref(k, it)));
      for (StmtPtr &x : plain(f.body).stmts)
        body.stmts.push_back(std::move(x));
      out.stmts.push_back(std::make_unique<ForStmt>(
          k, f.lo->clone(), f.hi->clone(), std::move(body), f.range));
      break;
    }
    case StmtKind::Solve:
      out.stmts.push_back(assigningSolve(cast<SolveStmt>(*s)));
      break;
    default:
      out.stmts.push_back(s->clone());
      break;
    }
  }
  return out;
}

std::vector<StmtPtr> Expansion::run() {
  Body body = p.body.clone();
  sinkAfterEarlyReturns(body);
  if (!check(body))
    return {};

  // P's variables become the caller's, all declared (mutable) up front.
  std::vector<unsigned> slots(p.vars.size());
  for (size_t v = 0; v < p.vars.size(); ++v) {
    const Var &var = p.vars[v];
    slots[v] =
        caller.addVar(p.name + "." + var.name, var.type, true, var.range);
  }
  remapSlots(body, slots);
  // Break and continue become flags the reverse sweep can replay.
  structureJumps(body, [&](const std::string &name) {
    return hoist(name, Type::scalarOf(ScalarKind::Bool));
  });
  Type rt = p.returnType;
  unsigned result = caller.addVar(p.name + ".result", rt, true, req.range);
  replaceTailReturns(body, int(result));
  std::set<unsigned> params;
  for (size_t i = 0; i < p.params.size(); ++i) {
    unsigned s = slots[p.params[i]];
    params.insert(s);
    hoisted.push_back(std::make_unique<DeclStmt>(s, req.args[i]->clone(),
                                                 req.args[i]->range));
  }
  for (size_t v = 0; v < p.vars.size(); ++v)
    if (!params.count(slots[v]))
      hoisted.push_back(std::make_unique<DeclStmt>(
          slots[v], zero(p.vars[v].type), req.range));
  hoisted.push_back(std::make_unique<DeclStmt>(result, zero(rt), req.range));

  // Activity.
  std::set<Dat *> seeds;
  for (const DerivEntry &e : req.entries) {
    if (e.of.dat)
      seeds.insert(e.of.dat);
    else
      activeVars.insert(slots[p.params[unsigned(e.of.param)]]);
  }
  for (size_t v = 0; v < p.vars.size(); ++v)
    if (isFloatType(p.vars[v].type) && !params.count(slots[v]))
      activeVars.insert(slots[v]);
  activeVars.insert(result);
  rd.isActive = [&](unsigned s) { return activeVars.count(s) != 0; };
  active = activeDats(body, seeds, activeVars);

  // Every wrt dat must be read by P (else its gradient is zero by mistake).
  const std::set<const Dat *> read = datsRead(body);
  for (const DerivEntry &e : req.entries)
    if (e.of.dat && !read.count(e.of.dat))
      error(e.range, "proc '" + p.name + "' never reads dat '" +
                         e.of.dat->name +
                         "': its gradient would be zero; remove it from "
                         "'wrt'");
  if (!ok)
    return {};
  // The gradient dats are the wrt dats' adjoints.
  for (const DerivEntry &e : req.entries)
    if (e.of.dat)
      adj[e.of.dat] = e.dat;

  // Adjoint slots the results need exist before the declarations.
  rd.adjointSlot(result);
  for (const DerivEntry &e : req.entries)
    if (!e.of.dat)
      rd.adjointSlot(slots[p.params[unsigned(e.of.param)]]);
  Body fwd, rev;
  sweep(body, fwd, rev, /*top=*/true);
  if (!ok || rd.failed)
    return {};

  std::vector<StmtPtr> out;
  for (StmtPtr &s : hoisted)
    out.push_back(std::move(s));
  for (StmtPtr &s : rd.takeDecls())
    out.push_back(std::move(s));
  const Stmt *declsEnd = out.back().get();
  for (StmtPtr &s : fwd.stmts)
    out.push_back(std::move(s));
  // J, kept: the reverse sweep restores %P.result to its earlier value.
  unsigned value = caller.addVar(p.name + ".value", rt, false, req.range);
  out.push_back(std::make_unique<DeclStmt>(value, ref(result, rt), req.range));
  // P's final state, kept aside while the reverse sweep restores earlier
  // states.
  Writes w;
  w.visitBody(body);
  for (Dat *d : w.dats) {
    Dat *&f = b.finalDats[d];
    if (!f) {
      f = makeDerivativeDat(b.program, *d, d->name + ".final");
      f->isDerivative = false;
      f->primal = nullptr;
      f->scratch = true;
    }
    out.push_back(b.fill.loop(d, f, req.range, true));
  }
  std::vector<Dat *> zeroed;
  for (auto &d : b.program.dats)
    if (active.count(d.get()))
      zeroed.push_back(d.get());
  for (Dat *d : zeroed)
    out.push_back(b.fill.loop(nullptr, adjointDat(d), req.range, true));
  out.push_back(assign(
      AssignOp::Set, ref(rd.adjointSlot(result), rt),
      std::make_unique<ConstantExpr>(ConstValue::ofFloat(rt.scalar, 1.0))));
  for (StmtPtr &s : rev.stmts)
    out.push_back(std::move(s));
  // P's final state back: the storage exchanged, not copied (the aside
  // dat's contents are dead until the next save overwrites them; swap
  // takes the halo state along).
  for (Dat *d : w.dats)
    out.push_back(std::make_unique<SwapStmt>(d, b.finalDats[d], req.range));
  const unsigned request = b.program.scalarGradients.size() + 1;
  ScalarGradient sweep;
  sweep.declsEnd = declsEnd;
  sweep.valueSlot = value;
  sweep.resultSlot = result;
  for (size_t v = 0; v < p.vars.size(); ++v)
    if (isFloatType(p.vars[v].type) && !params.count(slots[v]))
      sweep.floatVars.push_back(slots[v]);
  for (const DerivEntry &e : req.entries)
    if (!e.of.dat) {
      unsigned s = slots[p.params[unsigned(e.of.param)]];
      Type t = caller.vars[s].type;
      out.push_back(std::make_unique<DeclStmt>(
          unsigned(e.var), ref(rd.adjointSlot(s), t), e.range));
      // For adjoint-linear, which may take it from a tangent instead.
      b.program.scalarGradients.push_back(scalarGradient(
          caller, req, e, rd.adjointSlot(s), w.dats, out.front().get(), sweep));
      b.program.scalarGradients.back().request = request;
      b.program.scalarGradients.back().paramSlot = s;
    }
  out.push_back(std::make_unique<DeclStmt>(unsigned(req.resultVar),
                                           ref(value, rt), req.range));
  reportRequest(b.ctx, PassName, req.range, p.name, zeroed.size());
  return out;
}

} // namespace opdc::adj

namespace opdc {

bool buildAdjoints(ir::Program &program, PassContext &ctx) {
  return adj::AdjointBuilder(program, ctx).run(program);
}

} // namespace opdc
