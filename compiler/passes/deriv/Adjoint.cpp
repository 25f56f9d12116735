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
#include "passes/deriv/Adjoint.h"

#include "passes/utils/BodyUtils.h"
#include "passes/deriv/DerivUtils.h"
#include "passes/deriv/MinMaxDiff.h"
#include "passes/deriv/ForwardDiff.h"
#include "passes/deriv/ReverseDiff.h"
#include "passes/deriv/SolveDiff.h"
#include "passes/deriv/SolveFlow.h"

#include "ir/AccessRules.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

#include <algorithm>
#include <map>
#include <set>

namespace opdc {

using namespace ir;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

constexpr const char *PassName = "adjoint";

ExprPtr ref(unsigned slot, Type t) {
  return std::make_unique<VarRefExpr>(slot, t);
}
StmtPtr assign(AssignOp op, ExprPtr t, ExprPtr v) {
  return std::make_unique<AssignStmt>(op, std::move(t), std::move(v));
}
ExprPtr zero(Type t) { return std::make_unique<ConstantExpr>(zeroOf(t)); }

/// The variable an lvalue assigns (a variable or a component of one).
unsigned rootSlot(const Expr &target) {
  const Expr *e = &target;
  while (auto *i = dyn_cast<IndexExpr>(e))
    e = i->base.get();
  return cast<VarRefExpr>(*e).slot;
}

/// The dats a body writes (loops' out, inout and inc arguments, swaps) and
/// the host variables it assigns, in first-seen order.
struct Writes : IRVisitor {
  std::vector<Dat *> dats;
  std::vector<unsigned> vars;
  std::set<const Dat *> seenDats;
  std::set<unsigned> seenVars;
  void dat(Dat *d) {
    if (seenDats.insert(d).second)
      dats.push_back(d);
  }
  void var(unsigned s) {
    if (seenVars.insert(s).second)
      vars.push_back(s);
  }
  void visitDecl(const DeclStmt &d) override {
    var(d.slot);
    IRVisitor::visitDecl(d);
  }
  void visitAssign(const AssignStmt &a) override { var(rootSlot(*a.target)); }
  void visitFor(const ForStmt &f) override {
    var(f.slot);
    IRVisitor::visitFor(f);
  }
  void visitParLoop(const ParLoopStmt &l) override {
    for (const AccessDescriptor &a : l.args) {
      if (a.usesDat() && modeWrites(a.mode))
        dat(a.dat);
      if (a.kind == ArgKind::Reduction)
        var(unsigned(a.var));
    }
  }
  void visitSwap(const SwapStmt &s) override {
    dat(s.a);
    dat(s.b);
  }
  void visitSolve(const SolveStmt &s) override {
    for (Dat *d : solveWritten(s))
      dat(d);
    if (s.itersVar >= 0) {
      var(unsigned(s.itersVar));
      var(unsigned(s.residualVar));
    }
  }
};

/// A copy of solve \p s that assigns its results (the adjoint declares
/// P's variables up front).
StmtPtr assigningSolve(const SolveStmt &s) {
  StmtPtr c = s.clone();
  auto &v = cast<SolveStmt>(*c);
  v.resultsAssigned = v.itersVar >= 0;
  return c;
}

class AdjointBuilder : public RequestRewriter {
public:
  AdjointBuilder(Program &p, PassContext &ctx) : program(p), ctx(ctx) {}
  bool isRequest(const Stmt &s) const override { return isa<AdjointStmt>(s); }
  std::vector<StmtPtr> expand(Function &caller, const Stmt &request) override;

  Program &program;
  PassContext &ctx;
  bool changed = false;
  FillLoops fill{program, "adjoint"};
  SolveDiff solves{program, ctx, fill, "adjoint"};
  std::map<Dat *, Dat *> adjointDats, finalDats;
  std::map<std::pair<const Function *, std::vector<bool>>, Function *>
      adjointKernels;
  unsigned tapePairs = 0; ///< the last TapeStmt::pair given out
};

/// One request being expanded.
class Expansion {
public:
  Expansion(AdjointBuilder &b, Function &caller, const AdjointStmt &req)
      : b(b), caller(caller), req(req),
        pcopy(procWithCallsInlined(b.program, *req.proc, b.ctx)), p(*pcopy),
        rd(caller, b.ctx.diags) {}
  std::vector<StmtPtr> run();

private:
  bool error(SourceRange r, const std::string &msg) {
    b.ctx.diags.error(r, msg);
    ok = false;
    return false;
  }
  bool check(const Body &body);
  unsigned hoist(const std::string &name, Type t) {
    unsigned s = caller.addVar(p.name + "." + name, t, true, req.range);
    hoisted.push_back(std::make_unique<DeclStmt>(s, zero(t), req.range));
    return s;
  }
  Body plain(const Body &in);
  void sweep(const Body &in, Body &fwd, Body &rev, bool top,
             bool cancelTail = false);
  /// What sweepStmt tells sweep about the statement it did: how many
  /// statements open its reverse chunk and undo its forward piece (NoUndo:
  /// it cannot be cancelled), and whether the rest reads no primal state.
  static constexpr size_t NoUndo = ~size_t(0);
  size_t undoLen = NoUndo;
  bool adjointPure = false;
  void sweepStmt(const Stmt &s, std::vector<StmtPtr> &fwd,
                 std::vector<StmtPtr> &rev, bool top);
  void adjointLoop(const ParLoopStmt &l, std::vector<StmtPtr> &out);
  /// Block loops: the adjoints of active reads off the centre of a stencil,
  /// one loop per stencil offset (ReverseDiff.h); marks them done in \p plan.
  bool transposedStencils(const ParLoopStmt &l,
                          std::vector<AdjointParamPlan> &plan,
                          std::vector<bool> &key, std::vector<StmtPtr> &out);
  Dat *adjointDat(Dat *d);
  static StmtPtr tape(bool push, std::vector<Dat *> d,
                      std::vector<unsigned> v, SourceRange r) {
    return std::make_unique<TapeStmt>(push, std::move(d), std::move(v), r);
  }
  /// The push of \p d and \p v before a statement that overwrites them,
  /// into \p fwd, and its pop into \p rev, as one pair (TapeStmt::pair).
  void tapePair(std::vector<Dat *> d, std::vector<unsigned> v, SourceRange r,
                std::vector<StmtPtr> &fwd, std::vector<StmtPtr> &rev) {
    unsigned pair = ++b.tapePairs;
    fwd.push_back(tape(true, d, v, r));
    cast<TapeStmt>(*fwd.back()).pair = pair;
    rev.push_back(tape(false, std::move(d), std::move(v), r));
    cast<TapeStmt>(*rev.back()).pair = pair;
  }

  AdjointBuilder &b;
  Function &caller;
  const AdjointStmt &req;
  std::unique_ptr<Function> pcopy; ///< the proc, its proc calls inlined
  const Function &p;
  ReverseDiff rd;
  bool ok = true;
  std::vector<StmtPtr> hoisted;
  std::set<unsigned> activeVars;
  std::set<Dat *> active;
  std::map<Dat *, Dat *> adj; ///< active dat -> its adjoint in this request
};

std::vector<StmtPtr> AdjointBuilder::expand(Function &caller,
                                            const Stmt &request) {
  return Expansion(*this, caller, cast<AdjointStmt>(request)).run();
}

bool Expansion::check(const Body &body) {
  if (const Stmt *bad = firstForbidden(body)) {
    error(req.range, "cannot build the adjoint of proc '" + p.name + "': " +
                         forbiddenWhat(*bad));
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
          AssignOp::Set, ref(d.slot, caller.vars[d.slot].type),
          d.init->clone(), d.range));
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
    fwd.push_back(std::make_unique<IfStmt>(ref(c, bt), std::move(ft),
                                           std::move(fe), at));
    fwd.push_back(tape(true, {}, {c}, at));
    rev.push_back(tape(false, {}, {c}, at));
    rev.push_back(std::make_unique<IfStmt>(ref(c, bt), std::move(rt),
                                           std::move(re), at));
    return;
  }
  case StmtKind::For: {
    const auto &f = cast<ForStmt>(s);
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
    rev.push_back(std::make_unique<ForStmt>(j, zero(it), ref(n, it),
                                            std::move(rb), at));
    return;
  }
  case StmtKind::ParLoop: {
    const auto &l = cast<ParLoopStmt>(s);
    int mm = activeMinMaxArg(
        l, [&](unsigned v) { return activeVars.count(v) != 0; });
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
    fwd.push_back(s.clone());
    adjointLoop(l, rev);
    undoLen = 1;
    return;
  }
  case StmtKind::Swap: {
    const auto &w = cast<SwapStmt>(s);
    fwd.push_back(s.clone());
    rev.push_back(s.clone());
    if (active.count(w.a) || active.count(w.b))
      rev.push_back(std::make_unique<SwapStmt>(adjointDat(w.a),
                                               adjointDat(w.b), at));
    undoLen = 1;
    adjointPure = true;
    return;
  }
  case StmtKind::Solve: {
    // The tape restores what the solve overwrote; SolveDiff.h builds the
    // adjoint from that state. Its results' adjoints end there.
    const auto &v = cast<SolveStmt>(s);
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
    return;
  }
  default:
    error(at, "this statement cannot be differentiated in reverse");
    return;
  }
}

void Expansion::adjointLoop(const ParLoopStmt &l, std::vector<StmtPtr> &out) {
  const Function &k = *l.kernel;
  std::vector<AdjointParamPlan> plan(l.args.size());
  std::vector<bool> key(l.args.size() * 2, false);
  bool any = false, anyOut = false;
  for (size_t i = 0; i < l.args.size(); ++i) {
    const AccessDescriptor &a = l.args[i];
    bool act = false;
    if (isFloat(a.scalar)) {
      if (a.usesDat())
        act = active.count(a.dat) != 0;
      else if (a.kind == ArgKind::GlobalRead)
        act = refsSlot(*a.value, activeVars);
      else if (a.kind == ArgKind::Reduction)
        act = activeVars.count(unsigned(a.var)) != 0;
    }
    plan[i].active = act;
    plan[i].global = a.kind == ArgKind::GlobalRead;
    key[2 * i] = act;
    key[2 * i + 1] = plan[i].global;
    any = any || act;
    anyOut = anyOut || (act && l.args[i].mode != AccessMode::Read);
  }
  // Nothing active written: the adjoints of the inputs get nothing.
  if (!any || !anyOut)
    return;
  if (l.block && !transposedStencils(l, plan, key, out))
    return;
  Function *&kb = b.adjointKernels[{&k, key}];
  if (!kb)
    kb = buildAdjointKernel(b.program, k, plan, b.ctx);
  if (!kb) {
    b.ctx.diags.note(l.range, "in the adjoint of this loop");
    ok = false;
    return;
  }
  auto loop = std::make_unique<ParLoopStmt>(l.range);
  loop->kernel = kb;
  loop->set = l.set;
  loop->block = l.block;
  for (const LoopRange &r : l.ranges)
    loop->ranges.push_back(r.clone());
  for (const AccessDescriptor &a : l.args)
    if (a.mode == AccessMode::Read || a.mode == AccessMode::ReadWrite) {
      AccessDescriptor c = a.clone();
      c.mode = AccessMode::Read;
      loop->args.push_back(std::move(c));
    }
  std::vector<StmtPtr> after;
  for (size_t i = 0; i < l.args.size(); ++i) {
    if (!plan[i].active)
      continue;
    const AccessDescriptor &a = l.args[i];
    AccessDescriptor c = a.clone();
    c.mode = kb->kernelParams[loop->args.size()].mode;
    if (a.usesDat()) {
      c.dat = adjointDat(a.dat);
      if (c.kind == ArgKind::Stencil) {
        c.kind = ArgKind::Direct;
        c.stencil = nullptr;
      }
    } else if (a.kind == ArgKind::GlobalRead) {
      Type t = a.value->type;
      unsigned sum = hoist("gbl.b", t);
      out.push_back(assign(AssignOp::Set, ref(sum, t), zero(t)));
      c.kind = ArgKind::Reduction;
      c.value = nullptr;
      c.var = int(sum);
      rd.accumulate(*a.value, ref(sum, t), after);
    } else { // a sum reduction: its adjoint is read
      Type t = caller.vars[unsigned(a.var)].type;
      c.kind = ArgKind::GlobalRead;
      c.value = ref(rd.adjointSlot(unsigned(a.var)), t);
      c.var = -1;
    }
    loop->args.push_back(std::move(c));
  }
  b.ctx.stats.add(PassName, "loops", "adjoint loops");
  out.push_back(std::move(loop));
  for (StmtPtr &s : after)
    out.push_back(std::move(s));
}

bool Expansion::transposedStencils(const ParLoopStmt &l,
                                   std::vector<AdjointParamPlan> &plan,
                                   std::vector<bool> &key,
                                   std::vector<StmtPtr> &out) {
  const Function &k = *l.kernel;
  std::vector<std::vector<int64_t>> shifts;
  std::vector<size_t> off;
  for (size_t i = 0; i < l.args.size(); ++i) {
    const AccessDescriptor &a = l.args[i];
    if (!plan[i].active || a.kind != ArgKind::Stencil || !a.stencil ||
        a.stencil->isCentreOnly())
      continue;
    off.push_back(i);
    for (const auto &pt : a.stencil->points)
      if (std::find(shifts.begin(), shifts.end(), pt) == shifts.end())
        shifts.push_back(pt);
  }
  if (off.empty())
    return true;
  if (l.ranges.empty())
    return error(l.range,
                 "the adjoint of a stencil read needs the loop's range: write "
                 "it (loop " + k.name + " over " + l.block->name +
                     "[lo..hi, ...])");
  // Per shift t, the loop over R + t is cut into the interior I, the
  // points every shifted range covers, and the rest of R + t: first the
  // interior loops of all shifts, with the same range (the fuse pass makes
  // them one gather sweep), then each shift's frame. Every point still gets
  // its contributions in the order of the shifts. Bounds of other integer
  // types in one dimension keep one loop per shift over R + t.
  const size_t dims = l.ranges.size();
  std::vector<int64_t> tMin(dims, 0), tMax(dims, 0);
  bool split = shifts.size() > 1;
  for (size_t d = 0; d < dims; ++d) {
    split = split && l.ranges[d].lo->type == l.ranges[d].hi->type &&
            l.ranges[d].lo->type.isScalar();
    for (const std::vector<int64_t> &t : shifts) {
      tMin[d] = std::min(tMin[d], t[d]);
      tMax[d] = std::max(tMax[d], t[d]);
    }
  }
  std::vector<LoopRange> interior;
  if (split)
    for (size_t d = 0; d < dims; ++d) {
      // I_d = [lo + max t, max(hi + min t, lo + max t)): empty, never
      // reversed, when the range is narrower than the shifts' spread.
      ExprPtr ilo = plusConst(*l.ranges[d].lo, tMax[d]);
      ExprPtr ihi = minMax(Intrinsic::Max, plusConst(*l.ranges[d].hi, tMin[d]),
                           ilo->clone());
      interior.push_back({std::move(ilo), std::move(ihi)});
    }
  std::vector<std::unique_ptr<ParLoopStmt>> frames;
  for (const std::vector<int64_t> &t : shifts) {
    std::vector<bool> tkey = key;
    for (int64_t v : t)
      for (int bit = 0; bit < 64; ++bit) // the whole offset in the key
        tkey.push_back((uint64_t(v) >> bit) & 1);
    Function *&kt = b.adjointKernels[{&k, tkey}];
    if (!kt)
      kt = buildAdjointKernel(b.program, k, plan, b.ctx, &t);
    if (!kt) {
      b.ctx.diags.note(l.range, "in the adjoint of this loop");
      ok = false;
      return false;
    }
    auto loop = std::make_unique<ParLoopStmt>(l.range);
    loop->kernel = kt;
    loop->block = l.block;
    for (const AccessDescriptor &a : l.args)
      if (a.mode == AccessMode::Read || a.mode == AccessMode::ReadWrite) {
        AccessDescriptor c = a.clone();
        c.mode = AccessMode::Read;
        const KernelParam &p = kt->kernelParams[loop->args.size()];
        if (c.usesDat() && p.stencil) {
          c.kind = ArgKind::Stencil;
          c.stencil = p.stencil;
        }
        loop->args.push_back(std::move(c));
      }
    for (size_t i = 0; i < l.args.size(); ++i) {
      const AccessDescriptor &a = l.args[i];
      if (!plan[i].active || loop->args.size() >= kt->kernelParams.size())
        continue;
      const KernelParam &p = kt->kernelParams[loop->args.size()];
      if (p.name != k.kernelParams[i].name + ".b")
        continue; // not in the shifted kernel
      AccessDescriptor c = a.clone();
      c.mode = p.mode;
      if (a.kind == ArgKind::Reduction) {
        Type vt = caller.vars[unsigned(a.var)].type;
        c.kind = ArgKind::GlobalRead;
        c.value = ref(rd.adjointSlot(unsigned(a.var)), vt);
        c.var = -1;
      } else if (p.stencil) {
        // An output's adjoint, read at -t: its halo must reach that far.
        Dat *ad = adjointDat(a.dat);
        c.dat = ad;
        c.kind = ArgKind::Stencil;
        c.stencil = p.stencil;
        for (size_t d = 0; d < t.size() && d < ad->haloMinus.size(); ++d) {
          ad->haloMinus[d] = std::max<int64_t>(ad->haloMinus[d], t[d]);
          ad->haloPlus[d] = std::max<int64_t>(ad->haloPlus[d], -t[d]);
        }
      } else {
        c.dat = adjointDat(a.dat);
        c.kind = ArgKind::Direct;
        c.stencil = nullptr;
      }
      loop->args.push_back(std::move(c));
    }
    // R + t, per dimension.
    std::vector<LoopRange> moved;
    for (size_t d = 0; d < dims; ++d)
      moved.push_back({plusConst(*l.ranges[d].lo, t[d]),
                       plusConst(*l.ranges[d].hi, t[d])});
    if (!split) {
      loop->ranges = std::move(moved);
      b.ctx.stats.add(PassName, "transposed", "transposed-stencil loops");
      out.push_back(std::move(loop));
      continue;
    }
    // (R + t) \ I as disjoint slabs.
    for (std::vector<LoopRange> &slab : slabsAround(moved, interior)) {
      auto frame = std::make_unique<ParLoopStmt>(l.range);
      frame->kernel = kt;
      frame->block = l.block;
      for (const AccessDescriptor &a : loop->args)
        frame->args.push_back(a.clone());
      frame->ranges = std::move(slab);
      frames.push_back(std::move(frame));
    }
    for (size_t d = 0; d < dims; ++d)
      loop->ranges.push_back(interior[d].clone());
    b.ctx.stats.add(PassName, "transposed", "transposed-stencil loops");
    out.push_back(std::move(loop));
  }
  for (auto &frame : frames) {
    b.ctx.stats.add(PassName, "transposed-frames",
                    "transposed-stencil frame loops");
    out.push_back(std::move(frame));
  }
  for (size_t i : off) {
    plan[i].active = false;
    key[2 * i] = false;
  }
  return true;
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
    slots[v] = caller.addVar(p.name + "." + var.name, var.type, true, var.range);
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
  for (const DerivEntry &e : req.entries)
    if (e.of.dat && !reads.dats.count(e.of.dat))
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
  out.push_back(assign(AssignOp::Set, ref(rd.adjointSlot(result), rt),
                       std::make_unique<ConstantExpr>(
                           ConstValue::ofFloat(rt.scalar, 1.0))));
  for (StmtPtr &s : rev.stmts)
    out.push_back(std::move(s));
  // P's final state back: the storage exchanged, not copied (the aside
  // dat's contents are dead until the next save overwrites them; swap
  // takes the halo state along).
  for (Dat *d : w.dats)
    out.push_back(std::make_unique<SwapStmt>(d, b.finalDats[d], req.range));
  for (const DerivEntry &e : req.entries)
    if (!e.of.dat) {
      unsigned s = slots[p.params[unsigned(e.of.param)]];
      Type t = caller.vars[s].type;
      out.push_back(std::make_unique<DeclStmt>(
          unsigned(e.var), ref(rd.adjointSlot(s), t), e.range));
    }
  out.push_back(std::make_unique<DeclStmt>(unsigned(req.resultVar),
                                           ref(value, rt), req.range));
  reportRequest(b.ctx, PassName, req.range, p.name, zeroed.size());
  return out;
}

} // namespace

bool buildAdjoints(Program &program, PassContext &ctx) {
  return AdjointBuilder(program, ctx).run(program);
}

} // namespace opdc
