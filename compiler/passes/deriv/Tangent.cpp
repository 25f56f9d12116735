// Tangent.cpp - Build the tangent (forward-mode derivative) of procs.
// SPDX-License-Identifier: Apache-2.0
//
// `let d = tangent P(args) along (x: dx, alpha: 1.0)` becomes, in place:
//
//   let %P.alpha = arg ...            P's parameters bound to the arguments
//   let %P.alpha.d = 1.0              seeded float parameters' tangents
//   var %P.result.d = 0.0
//   loop copy_f64 over nodes (dx, x.d)         seed dats into tangent dats
//                                              (none for a seed read in place)
//   loop zero_f64 over nodes (y.d) ...         other tangent dats start at 0
//   <P's body, differentiated: each statement preceded by its tangent;
//    loops the seeds reach run K.d, the kernel and its tangent in one body,
//    with the tangent dats as extra arguments; tail `return v` becomes
//    `%P.result.d = v'`>
//   let %d = %P.result.d
//
// Legal because forward mode needs no reversal: every value's tangent is
// computed right before the value, from the values before it, so the
// program order of P is kept statement by statement and loop by loop. A
// loop's tangent kernel only adds arguments whose access modes are those of
// their primal arguments (a read dat's tangent is read, an incremented
// dat's tangent incremented, a sum's tangent summed), so colouring, halo
// exchanges and reductions of the tangent loop follow the primal's rules:
// threads and MPI ranks give the serial tangent, bitwise or to round-off as
// the primal does.
//
// A seed read in place: when P never writes or swaps x nor its direction
// dx, reads x only directly or at its stencils' centre (never at an
// offset or through a map: x.d's halo, which the copy leaves zero, is
// never read), and dx has x's shape, the loops read dx where they would
// read x.d. x.d would hold dx's values at every point they read for the
// whole of P, so the results are the same bits, without the copy (a read
// and a write of the whole dat, part of the set-up that keeps a stencil
// tangent above twice its primal: bench/adjoint/README.md).
//
// Activity: a dat is active (gets a tangent dat) when it is seeded, or is
// written by a loop that reads an active dat or an active host value, or
// swapped with an active dat; iterated to a fixed point because P's loops
// may sit inside host loops. A loop that writes an active dat runs its
// tangent kernel even when its inputs are passive, so that it overwrites
// the tangent with zero as the primal overwrites the value. Host float
// variables of P and seeded float parameters have tangents; unseeded
// parameters are passive.
//
// The procs P calls are inlined into a copy of P first (DerivUtils.h:
// procWithCallsInlined). A solve is followed by its tangent (SolveDiff.h:
// a solve of the same system). A min or max reduction of an active value
// is rewritten first (MinMaxDiff.h): its tangent is the winner's. I/O
// inside P is an error: a derivative must not print or write once per
// evaluation.
//
// Alongside (tangentAlongside, for adjoint-linear): the same rewrite of
// statements that already run P's body, an adjoint's forward sweep, with
// P's variables declared before them. Their loops become tangent loops
// and their tape statements pass unchanged: each primal value is computed
// by the same operations as before, so what the tape saves and the state
// the reverse sweep starts from are the same bits, and the sweep yields
// the tangent besides. Only host code, loops without min or max
// reductions, swaps and tape statements are taken (a solve or a
// checkpointed loop is left to a tangent run of its own).
#include "passes/deriv/Tangent.h"

#include "passes/deriv/DerivUtils.h"
#include "passes/deriv/ForwardDiff.h"
#include "passes/deriv/MinMaxDiff.h"
#include "passes/deriv/SolveDiff.h"
#include "passes/kernels/Inline.h"
#include "passes/utils/BodyUtils.h"

#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

#include <map>
#include <set>

namespace opdc {

using namespace ir;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

constexpr const char *PassName = "tangent";

/// Whether the tangent may read seed direction \p dx in place of x.d (the
/// file header): same shape, neither written nor swapped in \p body, x
/// read only at the element itself.
bool readInPlace(const Body &body, const Dat &x, const Dat &dx) {
  auto sameSizes = [&] {
    if (x.size.size() != dx.size.size())
      return false;
    for (size_t k = 0; k < x.size.size(); ++k)
      if (exprToString(*x.size[k]) != exprToString(*dx.size[k]))
        return false;
    return true;
  };
  if (&x == &dx || x.set != dx.set || x.block != dx.block ||
      x.elemType != dx.elemType || !sameSizes() ||
      x.haloMinus != dx.haloMinus || x.haloPlus != dx.haloPlus ||
      x.base != dx.base)
    return false;
  struct Uses : IRVisitor {
    const Dat &x, &dx;
    bool ok = true;
    Uses(const Dat &x, const Dat &dx) : x(x), dx(dx) {}
    void visitParLoop(const ParLoopStmt &l) override {
      for (const AccessDescriptor &a : l.args) {
        if (!a.usesDat() || (a.dat != &x && a.dat != &dx))
          continue;
        if (a.mode != AccessMode::Read)
          ok = false;
        else if (a.dat == &x && a.kind == ArgKind::Indirect)
          ok = false;
        else if (a.dat == &x && a.kind == ArgKind::Stencil)
          for (const std::vector<int64_t> &pt : a.stencil->points)
            for (int64_t v : pt)
              ok = ok && v == 0;
      }
      IRVisitor::visitParLoop(l);
    }
    void visitSwap(const SwapStmt &w) override {
      if (w.a == &x || w.b == &x || w.a == &dx || w.b == &dx)
        ok = false;
    }
    // A solve writes its dats through an operator: not looked into.
    void visitSolve(const SolveStmt &) override { ok = false; }
  } uses(x, dx);
  uses.visitBody(body);
  return uses.ok;
}

class TangentBuilder : public RequestRewriter {
public:
  TangentBuilder(Program &p, PassContext &ctx) : program(p), ctx(ctx) {}
  /// tangentAlongside (Tangent.h).
  std::optional<unsigned> alongside(Function &fn, std::vector<StmtPtr> &stmts,
                                    unsigned seed,
                                    const std::vector<unsigned> &vars,
                                    unsigned of, SourceRange range);

protected:
  bool isRequest(const Stmt &s) const override { return isa<TangentStmt>(s); }
  std::vector<StmtPtr> expand(Function &caller, const Stmt &request) override {
    return expand(caller, cast<TangentStmt>(request));
  }

private:
  std::vector<StmtPtr> expand(Function &caller, const TangentStmt &ts);
  /// A solve and its tangent (SolveDiff.h), cg's operator differentiated
  /// inline; false, with an error, when it cannot be differentiated.
  bool tangentSolve(Function &caller, const TangentStmt &ts,
                    const ir::SolveStmt &v, ForwardDiff &fd,
                    const std::set<ir::Dat *> &active,
                    std::vector<ir::StmtPtr> &o);
  /// Dats the seeds reach in \p body (see the file header).
  bool tangentLoop(const ParLoopStmt &l, ForwardDiff &fd, TangentSlots &slots,
                   const std::set<Dat *> &active, std::vector<StmtPtr> &out);
  Function *tangentKernel(const Function &k, const std::vector<bool> &act);
  /// \p w, then the same swap of the tangent dats where they are active.
  void tangentSwap(const SwapStmt &w, const std::set<Dat *> &active,
                   std::vector<StmtPtr> &out) {
    out.push_back(w.clone());
    if (active.count(w.a))
      out.push_back(std::make_unique<SwapStmt>(tangentDat(w.a), tangentDat(w.b),
                                               w.range));
  }
  Dat *tangentDat(Dat *primal);
  /// inPlace for one request: the seeds \p body may read in place.
  void chooseInPlace(const Body &body, const std::map<Dat *, Dat *> &seeds,
                     const std::set<Dat *> &active) {
    inPlace.clear();
    for (auto &[x, dx] : seeds)
      if (active.count(x) && readInPlace(body, *x, *dx)) {
        inPlace[x] = dx;
        ctx.stats.add(PassName, "seeds-in-place",
                      "seed dats read in place (no copy)");
      }
  }

  Program &program;
  PassContext &ctx;
  bool changed = false;
  std::map<Dat *, Dat *> tangentDats;
  /// The seeds read in place by the request being expanded: x -> dx.
  std::map<Dat *, Dat *> inPlace;
  std::map<std::pair<const Function *, std::vector<bool>>, Function *>
      tangentKernels;
  FillLoops fill{program, "tangent"};
  SolveDiff solves{program, ctx, fill, "tangent"};
};

Dat *TangentBuilder::tangentDat(Dat *primal) {
  auto alias = inPlace.find(primal);
  if (alias != inPlace.end())
    return alias->second;
  Dat *&t = tangentDats[primal];
  if (!t) {
    t = makeDerivativeDat(program, *primal, primal->name + ".d");
    ctx.stats.add(PassName, "dats", "tangent dats created");
  }
  return t;
}

Function *TangentBuilder::tangentKernel(const Function &k,
                                        const std::vector<bool> &act) {
  Function *&cached = tangentKernels[{&k, act}];
  if (cached)
    return cached;
  std::unique_ptr<Function> t = k.clone();
  t->name = k.name + ".d";
  for (unsigned n = 1; program.findKernel(t->name); ++n)
    t->name = k.name + ".d" + std::to_string(n);
  inlineCallsIn(program, *t, ctx);
  TangentSlots slots;
  slots.param.assign(t->kernelParams.size(), -1);
  for (unsigned i = 0; i < act.size(); ++i) {
    if (!act[i])
      continue;
    KernelParam p = t->kernelParams[i];
    p.name += ".d";
    slots.param[i] = int(t->kernelParams.size());
    t->kernelParams.push_back(p);
  }
  slots.param.resize(t->kernelParams.size(), -1);
  ForwardDiff fd(*t, slots, ctx.diags);
  Body body = fd.differentiate(t->body);
  t->body = std::move(body);
  cached = t.get();
  program.kernels.push_back(std::move(t));
  ctx.stats.add(PassName, "kernels", "tangent kernels built");
  return cached;
}

bool TangentBuilder::tangentLoop(const ParLoopStmt &l, ForwardDiff &fd,
                                 TangentSlots &slots,
                                 const std::set<Dat *> &active,
                                 std::vector<StmtPtr> &out) {
  std::vector<bool> act(l.args.size(), false);
  std::vector<ExprPtr> values(l.args.size());
  bool any = false;
  for (unsigned i = 0; i < l.args.size(); ++i) {
    const AccessDescriptor &a = l.args[i];
    if (!isFloat(a.scalar))
      continue;
    if (a.usesDat())
      act[i] = active.count(a.dat) != 0;
    else if (a.kind == ArgKind::GlobalRead)
      act[i] = (values[i] = fd.tangent(*a.value)) != nullptr;
    else if (a.kind == ArgKind::Reduction)
      act[i] = unsigned(a.var) < slots.var.size() && slots.var[a.var] >= 0;
    any = any || act[i];
  }
  if (!any) {
    out.push_back(l.clone());
    return true;
  }
  std::unique_ptr<ParLoopStmt> loop(cast<ParLoopStmt>(l.clone().release()));
  loop->kernel = tangentKernel(*l.kernel, act);
  for (unsigned i = 0; i < l.args.size(); ++i) {
    if (!act[i])
      continue;
    AccessDescriptor t = l.args[i].clone();
    if (t.usesDat())
      t.dat = tangentDat(t.dat);
    else if (t.kind == ArgKind::GlobalRead)
      t.value = std::move(values[i]);
    else
      t.var = slots.var[t.var];
    loop->args.push_back(std::move(t));
  }
  ctx.stats.add(PassName, "loops", "loops with a tangent");
  out.push_back(std::move(loop));
  return true;
}

bool TangentBuilder::tangentSolve(Function &caller, const TangentStmt &ts,
                                  const SolveStmt &v, ForwardDiff &fd,
                                  const std::set<Dat *> &active,
                                  std::vector<StmtPtr> &o) {
  o.push_back(v.clone());
  if (!solves.check(v, active)) {
    ctx.diags.note(ts.range, "in the tangent requested here");
    return false;
  }
  solves.tangent(
      v, [&](Dat *d) { return active.count(d) ? tangentDat(d) : nullptr; },
      [&](std::vector<StmtPtr> &oo) {
        // cg's operator, inlined here and differentiated.
        std::unique_ptr<Function> op =
            procWithCallsInlined(program, *v.op, ctx);
        Body ob = op->body.clone();
        std::vector<unsigned> os(op->vars.size());
        for (size_t i = 0; i < op->vars.size(); ++i)
          os[i] =
              caller.addVar(op->name + "." + op->vars[i].name, op->vars[i].type,
                            op->vars[i].isMutable, op->vars[i].range);
        remapSlots(ob, os);
        replaceTailReturns(ob, -1);
        for (const StmtPtr &x : ob.stmts)
          fd.differentiate(*x, oo);
      },
      o);
  return true;
}

std::vector<StmtPtr> TangentBuilder::expand(Function &caller,
                                            const TangentStmt &ts) {
  std::vector<StmtPtr> out;
  std::unique_ptr<Function> pcopy =
      procWithCallsInlined(program, *ts.proc, ctx);
  const Function &p = *pcopy;
  DiagnosticEngine &diags = ctx.diags;
  Body body = p.body.clone();
  sinkAfterEarlyReturns(body);
  if (const Stmt *bad = firstForbidden(body)) {
    diags.error(ts.range, "cannot build the tangent of proc '" + p.name +
                              "': " + forbiddenWhat(*bad));
    diags.note(bad->range, "here");
    return out;
  }
  if (!returnsOnlyInTail(body)) {
    diags.error(ts.range, "cannot build the tangent of proc '" + p.name +
                              "': it returns from inside a loop");
    return out;
  }

  std::vector<unsigned> slots(p.vars.size());
  for (size_t v = 0; v < p.vars.size(); ++v) {
    const Var &var = p.vars[v];
    slots[v] = caller.addVar(p.name + "." + var.name, var.type, var.isMutable,
                             var.range);
  }
  remapSlots(body, slots);
  TangentSlots tslots;
  ForwardDiff fd(caller, tslots, diags);

  // Parameters, then the tangents of the seeded ones.
  for (size_t i = 0; i < p.params.size(); ++i)
    out.push_back(std::make_unique<DeclStmt>(
        slots[p.params[i]], ts.args[i]->clone(), ts.args[i]->range));
  std::set<unsigned> activeVars;
  std::map<Dat *, Dat *> seeds;
  for (const DerivEntry &e : ts.entries) {
    if (e.of.dat) {
      seeds[e.of.dat] = e.dat;
      continue;
    }
    unsigned slot = slots[p.params[unsigned(e.of.param)]];
    activeVars.insert(slot);
    out.push_back(std::make_unique<DeclStmt>(fd.tangentSlot(slot),
                                             e.value->clone(), e.range));
  }
  // Float variables of P have tangents (see the file header).
  struct Decls : IRVisitor {
    const Function &f;
    std::set<unsigned> &vars;
    Decls(const Function &f, std::set<unsigned> &v) : f(f), vars(v) {}
    void visitDecl(const DeclStmt &d) override {
      if (isFloatType(f.vars[d.slot].type))
        vars.insert(d.slot);
      IRVisitor::visitDecl(d);
    }
  } decls(caller, activeVars);
  decls.visitBody(body);

  std::set<Dat *> seeded;
  for (auto &[d, dir] : seeds)
    seeded.insert(d);
  std::set<Dat *> active = activeDats(body, seeded, activeVars);
  // Tangent dats in declaration order: copies of the seeds, zeros elsewhere.
  // (Collected first: creating a tangent dat grows program.dats.)
  std::vector<Dat *> order;
  for (auto &d : program.dats)
    if (active.count(d.get()))
      order.push_back(d.get());
  chooseInPlace(body, seeds, active);
  for (Dat *d : order) {
    if (inPlace.count(d))
      continue;
    auto s = seeds.find(d);
    out.push_back(fill.loop(s == seeds.end() ? nullptr : s->second,
                            tangentDat(d), ts.range));
  }

  Type resultType = p.returnType;
  unsigned result = caller.addVar(p.name + ".result.d", resultType, true);
  out.push_back(std::make_unique<DeclStmt>(
      result, std::make_unique<ConstantExpr>(zeroOf(resultType)), ts.range));

  bool ok = true;
  fd.other = [&](const Stmt &s, std::vector<StmtPtr> &o) -> bool {
    switch (s.kind) {
    case StmtKind::ParLoop: {
      const auto &l = cast<ParLoopStmt>(s);
      int mm = activeMinMaxArg(l, [&](unsigned v) {
        return v < tslots.var.size() && tslots.var[v] >= 0;
      });
      if (mm < 0) {
        ok = tangentLoop(l, fd, tslots, active, o) && ok;
        return true;
      }
      // A min or max of active values: through a sum (MinMaxDiff.h).
      for (MinMaxStmt &x : minMaxAsSum(
               program, ctx, l, unsigned(mm),
               [&](const std::string &n, Type t, bool) {
                 return caller.addVar(n, t, true, l.range);
               },
               /*declare=*/true)) {
        if (x.differentiable)
          fd.differentiate(*x.stmt, o);
        else
          o.push_back(std::move(x.stmt));
      }
      return true;
    }
    case StmtKind::Swap:
      tangentSwap(cast<SwapStmt>(s), active, o);
      return true;
    case StmtKind::Solve:
      if (!tangentSolve(caller, ts, cast<SolveStmt>(s), fd, active, o))
        ok = false;
      return true;
    case StmtKind::Return: {
      const auto &r = cast<ReturnStmt>(s);
      ExprPtr d = r.value ? fd.tangent(*r.value) : nullptr;
      o.push_back(std::make_unique<AssignStmt>(
          AssignOp::Set, std::make_unique<VarRefExpr>(result, resultType),
          d ? std::move(d) : std::make_unique<ConstantExpr>(zeroOf(resultType)),
          r.range));
      return true;
    }
    default:
      return false;
    }
  };
  Body db = fd.differentiate(body);
  if (!ok || fd.failed)
    return {};
  for (StmtPtr &s : db.stmts)
    out.push_back(std::move(s));
  out.push_back(std::make_unique<DeclStmt>(
      unsigned(ts.resultVar), std::make_unique<VarRefExpr>(result, resultType),
      ts.range));
  inPlace.clear();
  reportRequest(ctx, PassName, ts.range, p.name, order.size());
  return out;
}

/// Whether tangentAlongside takes \p body: host code, loops without min
/// or max reductions, swaps and tape statements (what an adjoint's forward
/// sweep of linearly reversed time loops holds).
bool takesAlongside(const Body &body) {
  for (const StmtPtr &sp : body.stmts) {
    const Stmt &s = *sp;
    switch (s.kind) {
    case StmtKind::Decl:
    case StmtKind::Assign:
    case StmtKind::Break:
    case StmtKind::Continue:
    case StmtKind::Swap:
    case StmtKind::Tape:
      break;
    case StmtKind::Eval:
      if (isa<CallExpr>(cast<EvalStmt>(s).expr.get()))
        return false;
      break;
    case StmtKind::If:
      if (!takesAlongside(cast<IfStmt>(s).thenBody) ||
          !takesAlongside(cast<IfStmt>(s).elseBody))
        return false;
      break;
    case StmtKind::For:
      if (!takesAlongside(cast<ForStmt>(s).body))
        return false;
      break;
    case StmtKind::While:
      if (!takesAlongside(cast<WhileStmt>(s).body))
        return false;
      break;
    case StmtKind::ParLoop:
      for (const AccessDescriptor &a : cast<ParLoopStmt>(s).args)
        if (a.mode == AccessMode::Min || a.mode == AccessMode::Max)
          return false;
      break;
    default:
      return false;
    }
  }
  return true;
}

std::optional<unsigned>
TangentBuilder::alongside(Function &fn, std::vector<StmtPtr> &stmts,
                          unsigned seed, const std::vector<unsigned> &vars,
                          unsigned of, SourceRange range) {
  Body body;
  body.stmts = std::move(stmts);
  if (!takesAlongside(body)) {
    stmts = std::move(body.stmts);
    return std::nullopt;
  }
  TangentSlots tslots;
  ForwardDiff fd(fn, tslots, ctx.diags);
  std::vector<StmtPtr> out;
  // The seed's tangent is 1, every other variable's 0 until set.
  std::set<unsigned> activeVars(vars.begin(), vars.end());
  activeVars.insert(seed);
  activeVars.insert(of);
  for (unsigned v : activeVars) {
    const Type t = fn.vars[v].type;
    out.push_back(std::make_unique<DeclStmt>(
        fd.tangentSlot(v),
        std::make_unique<ConstantExpr>(
            v == seed ? ConstValue::ofFloat(t.scalar, 1.0) : zeroOf(t)),
        range));
  }
  std::set<Dat *> active = activeDats(body, {}, activeVars);
  // Collected first: creating a tangent dat grows program.dats.
  std::vector<Dat *> order;
  for (auto &d : program.dats)
    if (active.count(d.get()))
      order.push_back(d.get());
  for (Dat *d : order)
    out.push_back(fill.loop(nullptr, tangentDat(d), range));
  bool ok = true;
  fd.other = [&](const Stmt &s, std::vector<StmtPtr> &o) -> bool {
    switch (s.kind) {
    case StmtKind::ParLoop:
      ok = tangentLoop(cast<ParLoopStmt>(s), fd, tslots, active, o) && ok;
      return true;
    case StmtKind::Swap:
      tangentSwap(cast<SwapStmt>(s), active, o);
      return true;
    case StmtKind::Tape:
      o.push_back(s.clone());
      return true;
    default:
      return false;
    }
  };
  Body db = fd.differentiate(body);
  if (!ok || fd.failed) {
    stmts = std::move(body.stmts);
    return std::nullopt;
  }
  for (StmtPtr &x : db.stmts)
    out.push_back(std::move(x));
  stmts = std::move(out);
  ctx.stats.add(PassName, "alongside",
                "tangents run along an adjoint's forward sweep");
  return unsigned(tslots.var[of]);
}

} // namespace

bool buildTangents(Program &program, PassContext &ctx) {
  return TangentBuilder(program, ctx).run(program);
}

std::optional<unsigned> tangentAlongside(Program &program, PassContext &ctx,
                                         Function &fn,
                                         std::vector<StmtPtr> &stmts,
                                         unsigned seed,
                                         const std::vector<unsigned> &vars,
                                         unsigned of, SourceRange range) {
  return TangentBuilder(program, ctx)
      .alongside(fn, stmts, seed, vars, of, range);
}

} // namespace opdc
