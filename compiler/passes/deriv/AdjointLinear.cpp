// AdjointLinear.cpp - Checkpointed time loops whose reverse steps read
// no primal state, as a plain loop forward and a plain loop backward, so
// that the reverse sweep is blocked in time as the primal is.
// SPDX-License-Identifier: Apache-2.0
//
// The adjoint pass turns each top-level time loop of the differentiated
// proc into a pair of checkpoint statements (ir::CheckpointStmt): forward,
// the steps with snapshots of the step's state (its dats and host
// variables) taken where the binomial plan says; reverse, for every step
// from the last to the first, the state before the step restored (a
// snapshot, re-runs of earlier steps, or the tape) and the reverse body
// run: the step's forward sweep with tape, then its adjoint. The runtime
// drives both (lib/exec/Adjoint.cpp), one step of the checkpointed loop at
// a time, so the reverse sweep cannot be skewed over several steps.
//
// Where the step is linear in its state with coefficients that do not
// depend on it (a Jacobi or explicit heat step, differentiated with respect
// to its initial field or source term; not with respect to a coefficient,
// whose adjoint sums the adjoint times the state), the adjoint statements
// of the reverse body read no value of the state: the restores, the
// snapshots and the re-runs serve nothing. This pass then lowers the pair
// to
//
//   let lo = LO; let hi = HI
//   tape push (state dats; state vars)       // a pair of its own
//   for k in lo..hi { %i = k; body }         // the forward steps, plain
//   ...                                      // what lay between
//   for j in 0..hi - lo {                    // the reverse steps, plain
//     %i = hi - 1 - j; reverse body less its primal statements
//   }
//   tape pop (state dats; state vars)
//
// and the unroll-more-steps and fuse passes then run several reverse steps
// a skewed sweep, as they do the forward steps (the reversed loop's
// variable is named NAME.rev.pair when the step is a pair unroll-steps
// made, so that it counts as one). The push and pop leave the state after
// the reverse loop as the checkpointed reversal left it (the state before
// the loop); adjoint-tape, which runs next, drops the dats nothing reads
// after the pop.
//
// What is checked, for the pair (the forward statement and the reverse
// statement of the same variable that closes it, in one body; plans are a
// stack); S are the state dats and V the state variables but %i (the
// checkpoint's lists: every dat and host variable the step writes):
//   1. the reverse body holds only loops, swaps, tape statements and host
//      declarations and assignments (no branch, inner loop, solve or call
//      statement);
//   2. each loop of it either writes only dats of S (out, inout or inc;
//      no reduction, no map argument: a primal re-run, dropped) or touches
//      no dat of S in any argument (an adjoint statement, kept; one without
//      any argument is dropped: kernels have no other effect). A loop
//      that writes a dat of S and anything else, or an adjoint loop that
//      reads a dat of S, refuses the pair: that is a reverse step reading
//      the state;
//   3. each swap exchanges two dats of S (dropped) or two dats outside S
//      (kept); each tape statement saves or restores only dats of S and
//      variables of V (dropped: only the state is taped inside a step);
//   4. in the reverse body's order, every read of a variable of V (in an
//      expression, a loop's range or argument, a compound or element
//      assignment, a reduction) comes after a whole assignment to it in
//      the same body and before any tape pop of it, and its assignments
//      read only %i, variables outside V and such assigned variables. So
//      every value of V the kept statements read is computed from %i in
//      the step itself: the same in the plain loop, where no snapshot or
//      pop gives V its values from before the step.
// Legal because, under 1-4, the kept statements of a reverse step read
// only adjoint dats and variables, dats and variables the step does not
// write (the same at every step: nothing between the two loops changes
// them that is not undone before the reverse loop, as for the checkpointed
// reversal), and values of V computed within the step; they run in the
// same order for the same steps as the checkpointed reversal ran them. The
// dropped statements only wrote S and V, which no kept statement reads.
// So every adjoint value is computed by the same operations in the same
// order: the results are bitwise the same as the checkpointed adjoint's.
//
// Scalar gradients from tangents. With respect to a float parameter alpha
// of the proc (a coefficient of a linear step), the reverse step sums
// alpha's adjoint from the adjoint times the state: a loop that reads the
// state and writes only a sum g, read only by `A += g` with A alpha's
// adjoint variable (a share of alpha's gradient). When such shares are all
// that keep the request's time loops checkpointed, the loops are lowered
// without them, A is no longer read, and alpha's gradient comes from
// forward mode instead: `tangent P(args) along (alpha: 1)` is dJ/dalpha,
// the same derivative (to round-off: the tangent sums the same terms in
// another order); `let gradVar = A` becomes `let gradVar = t`.
//
// The first such tangent of a request rides along the request's forward
// sweep (Tangent.h: tangentAlongside): the sweep runs P's body to give the
// reverse sweep its final state and its taped values, and its loops now
// run tangent kernels, which compute the same primal values by the same
// operations and the tangent beside them. P's body runs once, as a
// tangent (about two primal runs, blocked in time as the primal is), not a
// tangent and then a primal. The sweep's tape statements save the primal
// values they saved. A second tangent of the request, or one whose sweep
// holds what the rewrite does not take (a solve, a loop still
// checkpointed), runs on its own before the request's expansion, from the
// same state (P may read what an earlier call left in a dat it does not
// overwrite, as a ring no step writes), between a tape push and a pop of
// the dats P writes, so that the adjoint then starts from that state too.
// The checkpointed reversal of such steps costs five to nine primal runs
// (bench/adjoint/README.md): at most MaxTangents a request. A loop that
// mixes a share with the field's
// increments (one adjoint kernel for a step's centre reads) is split first
// (AdjointLinearShares.cpp). The adjoint pass lists the candidates
// (Program::scalarGradients); this pass clears the list.
//
// Steps whose reverse reads their state otherwise (nonlinear steps) stay
// checkpointed: blocking them in time needs reverse tiles that hold the
// states of several steps (a taped run of the tile's steps forward, then
// their reversal in one skewed sweep), which is not built here.
#include "passes/deriv/AdjointLinear.h"

#include "passes/deriv/AdjointLinearShares.h"
#include "passes/deriv/DerivUtils.h"
#include "passes/deriv/ForwardDiff.h"
#include "passes/deriv/Tangent.h"
#include "passes/kernels/KernelDCE.h"
#include "passes/utils/BodyUtils.h"

#include "ir/IR.h"
#include "ir/IRExprs.h"
#include "ir/IRVisitor.h"
#include "support/Assert.h"
#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace opdc {

using namespace ir;
using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;
using llvm::isa;

namespace {

constexpr const char *PassName = "adjoint-linear";

/// The most scalar gradients of one request taken from tangents: a tangent
/// costs about two primal runs, a checkpointed reversal of a step that
/// reads its state five to nine (bench/adjoint/README.md).
constexpr unsigned MaxTangents = 2;

/// The variable a declaration or a whole assignment `v = e` sets, or -1.
int wholeAssigned(const Stmt &s) {
  if (const auto *d = dyn_cast<DeclStmt>(&s))
    return int(d->slot);
  if (const auto *a = dyn_cast<AssignStmt>(&s))
    if (a->op == AssignOp::Set)
      if (const auto *v = dyn_cast<VarRefExpr>(a->target.get()))
        return int(v->slot);
  return -1;
}

/// The adjoint variables a loop that touches the state sums into when it
/// is a share of scalar gradients of \p body's step (see the file
/// comment): its only writes are reductions into variables g, and every
/// statement of \p body that reads a g is `A += g` with A in \p scalars
/// (one coefficient's share, or several coefficients' shares in one
/// kernel); the A's, or none.
std::vector<unsigned> scalarShare(const ParLoopStmt &l, const Body &body,
                                  const std::set<unsigned> &scalars) {
  std::vector<unsigned> into;
  for (const AccessDescriptor &a : l.args) {
    if (a.kind == ArgKind::Reduction) {
      const int t = a.mode == AccessMode::Sum
                        ? sumTarget(body, &l, unsigned(a.var), scalars)
                        : -1;
      if (t < 0)
        return {};
      into.push_back(unsigned(t));
    } else if (a.kind == ArgKind::MapDirect ||
               (a.usesDat() && modeWrites(a.mode))) {
      return {};
    }
  }
  return into;
}

/// Checks 1-4 of the file comment on the reverse statement \p c and builds
/// the reverse loop's body (the kept statements) into \p kept; returns why
/// not ("" when the pair may be lowered). With \p scalars, a loop that is a
/// share of one of those scalar gradients is dropped instead of refusing
/// the pair, and its gradient's adjoint variable goes to \p fed.
std::string reverseStepBody(const Function &fn, const CheckpointStmt &c,
                            Body &kept,
                            const std::set<unsigned> *scalars = nullptr,
                            std::set<unsigned> *fed = nullptr) {
  const std::set<const Dat *> state(c.dats.begin(), c.dats.end());
  std::set<unsigned> stateVars(c.vars.begin(), c.vars.end());
  stateVars.erase(c.slot);
  auto inState = [&](const Dat *d) { return state.count(d) != 0; };
  std::set<unsigned> assigned; // variables of V the step has computed
  for (const StmtPtr &sp : c.reverseBody.stmts) {
    const Stmt &s = *sp;
    VarReads r;
    r.visitStmt(s);
    for (unsigned v : r.vars)
      if (stateVars.count(v) && !assigned.count(v))
        return "the reverse step reads '" + fn.vars[v].name +
               "' from before the step";
    switch (s.kind) {
    case StmtKind::ParLoop: {
      const auto &l = cast<ParLoopStmt>(s);
      bool writesState = false, writesOther = false, touchesState = false;
      for (const AccessDescriptor &a : l.args) {
        if (a.kind == ArgKind::MapDirect)
          return "a loop of the reverse step fills a map";
        bool st = a.usesDat() && inState(a.dat);
        touchesState = touchesState || st;
        if (a.kind == ArgKind::Reduction || (a.usesDat() && modeWrites(a.mode)))
          (st ? writesState : writesOther) = true;
      }
      if (writesState && writesOther)
        return "loop '" + l.kernel->name +
               "' writes the step's state and other values";
      if (writesState)
        continue; // a re-run of a primal loop
      if (touchesState && scalars) {
        const std::vector<unsigned> as =
            scalarShare(l, c.reverseBody, *scalars);
        if (!as.empty()) {
          fed->insert(as.begin(), as.end()); // from tangents instead
          continue;
        }
      }
      if (touchesState)
        return "the reverse step reads the step's state (loop '" +
               l.kernel->name + "')";
      // A loop without arguments (the adjoint of a sum nothing reads, left
      // so by kernel-dce) has no effect; left in, it would end the skewed
      // sweep of the steps around it.
      if (!l.args.empty())
        kept.stmts.push_back(s.clone());
      continue;
    }
    case StmtKind::Swap: {
      const auto &w = cast<SwapStmt>(s);
      if (inState(w.a) != inState(w.b))
        return "a swap exchanges a state dat with another";
      if (!inState(w.a))
        kept.stmts.push_back(s.clone());
      continue;
    }
    case StmtKind::Tape: {
      const auto &t = cast<TapeStmt>(s);
      if (!std::all_of(t.dats.begin(), t.dats.end(), inState) ||
          !std::all_of(t.vars.begin(), t.vars.end(),
                       [&](unsigned v) { return stateVars.count(v) != 0; }))
        return "the reverse step tapes values beyond its state";
      if (!t.push)
        for (unsigned v : t.vars)
          assigned.erase(v); // a pop gives back the value from before
      continue;
    }
    case StmtKind::Decl:
    case StmtKind::Assign: {
      int v = wholeAssigned(s);
      if (v >= 0 && stateVars.count(unsigned(v)))
        assigned.insert(unsigned(v));
      kept.stmts.push_back(s.clone());
      continue;
    }
    default:
      return "the reverse step holds a statement other than loops, swaps "
             "and host assignments";
    }
  }
  return "";
}

ExprPtr ref(unsigned slot, Type t) {
  return std::make_unique<VarRefExpr>(slot, t);
}
ExprPtr sub(ExprPtr a, ExprPtr b) {
  return std::make_unique<BinaryExpr>(BinaryOp::Sub, std::move(a),
                                      std::move(b));
}

/// The reversed loop's variable: NAME.rev, with the checkpoint variable's
/// .pair suffixes after it (unroll-more-steps counts a sweep's steps from
/// them).
std::string reverseName(std::string name) {
  std::string pairs;
  while (name.size() > 5 && name.compare(name.size() - 5, 5, ".pair") == 0) {
    pairs += ".pair";
    name.resize(name.size() - 5);
  }
  return name + ".rev" + pairs;
}

/// Replaces the pair in \p b (statements at \p fi and \p ri) by the plain
/// loops, the reverse loop's body being \p revBody.
void lower(Function &fn, Body &b, size_t fi, size_t ri, Body revBody,
           unsigned pairId) {
  auto &cf = cast<CheckpointStmt>(*b.stmts[fi]);
  auto &cr = cast<CheckpointStmt>(*b.stmts[ri]);
  const SourceRange at = cf.range;
  const Var iv = fn.vars[cf.slot]; // a copy: addVar grows fn.vars
  const Type it = iv.type;
  const unsigned lo = fn.addVar(iv.name + ".lo", it, false, iv.range);
  const unsigned hi = fn.addVar(iv.name + ".hi", it, false, iv.range);
  const unsigned k = fn.addVar(iv.name, it, false, iv.range);
  const unsigned j = fn.addVar(reverseName(iv.name), it, false, iv.range);
  std::vector<StmtPtr> fwd;
  fwd.push_back(std::make_unique<DeclStmt>(lo, std::move(cf.lo), at));
  fwd.push_back(std::make_unique<DeclStmt>(hi, std::move(cf.hi), at));
  auto push = std::make_unique<TapeStmt>(true, cf.dats, cf.vars, at);
  push->pair = pairId;
  fwd.push_back(std::move(push));
  Body fb;
  fb.stmts.push_back(std::make_unique<AssignStmt>(
      AssignOp::Set, ref(cf.slot, it), ref(k, it)));
  for (StmtPtr &s : cf.body.stmts)
    fb.stmts.push_back(std::move(s));
  fwd.push_back(std::make_unique<ForStmt>(k, ref(lo, it), ref(hi, it),
                                          std::move(fb), at));
  std::vector<StmtPtr> rev;
  Body rb;
  rb.stmts.push_back(std::make_unique<AssignStmt>(
      AssignOp::Set, ref(cr.slot, it),
      sub(sub(ref(hi, it),
              std::make_unique<ConstantExpr>(ConstValue::ofInt(it.scalar, 1))),
          ref(j, it))));
  for (StmtPtr &s : revBody.stmts)
    rb.stmts.push_back(std::move(s));
  rev.push_back(std::make_unique<ForStmt>(
      j, std::make_unique<ConstantExpr>(ConstValue::ofInt(it.scalar, 0)),
      sub(ref(hi, it), ref(lo, it)), std::move(rb), cr.range));
  auto pop = std::make_unique<TapeStmt>(false, cr.dats, cr.vars, cr.range);
  pop->pair = pairId;
  rev.push_back(std::move(pop));
  // The reverse statement first: its index stays valid.
  b.stmts.erase(b.stmts.begin() + std::ptrdiff_t(ri));
  b.stmts.insert(b.stmts.begin() + std::ptrdiff_t(ri),
                 std::make_move_iterator(rev.begin()),
                 std::make_move_iterator(rev.end()));
  b.stmts.erase(b.stmts.begin() + std::ptrdiff_t(fi));
  b.stmts.insert(b.stmts.begin() + std::ptrdiff_t(fi),
                 std::make_move_iterator(fwd.begin()),
                 std::make_move_iterator(fwd.end()));
}

/// The highest tape pair number in \p f.
unsigned maxPair(Function &f) {
  unsigned m = 0;
  forEachBody(f.body, [&](Body &b) {
    for (const StmtPtr &s : b.stmts)
      if (const auto *t = dyn_cast_or_null<TapeStmt>(s.get()))
        m = std::max(m, t->pair);
  });
  return m;
}

/// Calls \p f with the index of every pair's forward and reverse statement
/// in \p b (not in nested bodies), in the order the reverse statements
/// close them.
void forEachPair(Body &b, const std::function<bool(size_t, size_t)> &f) {
  std::vector<size_t> open;
  for (size_t i = 0; i < b.stmts.size(); ++i) {
    auto *c = dyn_cast_or_null<CheckpointStmt>(b.stmts[i].get());
    if (!c)
      continue;
    if (!c->reverse) {
      if (c->lo && c->hi)
        open.push_back(i);
      continue;
    }
    if (open.empty())
      return;
    size_t fi = open.back();
    open.pop_back();
    auto &cf = cast<CheckpointStmt>(*b.stmts[fi]);
    if (cf.slot != c->slot || cf.dats != c->dats || cf.vars != c->vars)
      return;
    if (f(fi, i))
      return; // \p f changed \p b
  }
}

/// Lowers the pairs of \p b (not of nested bodies) that pass the checks,
/// dropping the shares of the scalar gradients \p scalars (adjoint
/// variable -> the parameter's name) that a tangent gives.
bool lowerIn(Function &fn, Body &b, PassContext &ctx, unsigned &pairs,
             const std::map<unsigned, std::string> &scalars) {
  std::set<unsigned> taken;
  for (const auto &[slot, name] : scalars)
    taken.insert(slot);
  bool changed = false;
  std::set<const CheckpointStmt *> kept; // refused, remarked once
  // Restart the scan after each lowering (the statements' indices move).
  for (bool again = true; again;) {
    again = false;
    forEachPair(b, [&](size_t fi, size_t ri) {
      auto &cf = cast<CheckpointStmt>(*b.stmts[fi]);
      auto &cr = cast<CheckpointStmt>(*b.stmts[ri]);
      Body revBody;
      std::string why = reverseStepBody(fn, cr, revBody);
      std::set<unsigned> fed;
      if (!why.empty() && !taken.empty()) {
        Body scalarBody;
        if (reverseStepBody(fn, cr, scalarBody, &taken, &fed).empty()) {
          why.clear();
          revBody = std::move(scalarBody);
        }
      }
      if (!why.empty()) {
        if (kept.insert(&cr).second)
          ctx.diags.remark(cf.range, "time loop kept checkpointed: " + why,
                           PassName);
        return false;
      }
      std::string msg = "time loop reversed as a plain loop: its reverse "
                        "steps read none of its state";
      if (!fed.empty()) {
        const bool one = fed.size() == 1;
        msg = "time loop reversed as a plain loop: its reverse steps read "
              "its state only for the gradient";
        msg += one ? " of" : "s of";
        size_t k = 0;
        for (unsigned a : fed)
          msg += std::string(k++ == 0          ? " '"
                             : k == fed.size() ? " and '"
                                               : ", '") +
                 scalars.at(a) + "'";
        msg += one ? ", which a tangent gives instead"
                   : ", which tangents give instead";
      }
      ctx.diags.remark(cf.range, msg, PassName);
      ctx.stats.add(PassName, "lowered",
                    "checkpointed time loops reversed as plain loops");
      lower(fn, b, fi, ri, std::move(revBody), ++pairs);
      changed = again = true;
      return true;
    });
  }
  return changed;
}

/// Where \p s is among \p fn's statements: its body and index.
std::pair<Body *, size_t> findStmt(Function &fn, const Stmt *s) {
  std::pair<Body *, size_t> at{nullptr, 0};
  forEachBody(fn.body, [&](Body &b) {
    for (size_t i = 0; i < b.stmts.size(); ++i)
      if (b.stmts[i].get() == s)
        at = {&b, i};
  });
  return at;
}

/// The declaration `let gradVar = adjSlot` \p g names in \p fn, or null.
DeclStmt *gradientDecl(Function &fn, const ScalarGradient &g) {
  DeclStmt *found = nullptr;
  forEachBody(fn.body, [&](Body &b) {
    for (const StmtPtr &sp : b.stmts) {
      auto *d = dyn_cast_or_null<DeclStmt>(sp.get());
      auto *v = d ? dyn_cast_or_null<VarRefExpr>(d->init.get()) : nullptr;
      if (v && d->slot == g.gradVar && v->slot == g.adjSlot)
        found = d;
    }
  });
  return found;
}

/// Whether adjoint-linear may take \p g from a tangent: the parameter and
/// the proc's result are floats of one type (the tangent's result is the
/// gradient as it is).
bool tangentEligible(const ScalarGradient &g) {
  if (!g.proc || g.param >= g.proc->params.size())
    return false;
  const Type t = g.proc->vars[g.proc->params[g.param]].type;
  return isFloatType(t) && !t.isArray() && t == g.proc->returnType;
}

/// The scalar gradients of \p fn to take from tangents (adjoint variable
/// -> the parameter's name): those whose shares alone keep some time loop
/// of \p fn checkpointed, where every such loop is then reversed as a plain
/// loop, at most MaxTangents a request. Shrunk to a fixed point: a
/// gradient left to the reverse sweep may keep another loop checkpointed.
std::map<unsigned, std::string> chooseScalars(Function &fn,
                                              const Program &program) {
  std::map<unsigned, const ScalarGradient *> of;
  for (const ScalarGradient &g : program.scalarGradients)
    if (g.host == &fn && tangentEligible(g) && gradientDecl(fn, g) &&
        findStmt(fn, g.first).first)
      of[g.adjSlot] = &g;
  std::set<unsigned> chosen;
  for (const auto &[slot, g] : of)
    chosen.insert(slot);
  for (bool shrunk = !chosen.empty(); shrunk;) {
    std::set<unsigned> needed, reversed;
    forEachBody(fn.body, [&](Body &b) {
      forEachPair(b, [&](size_t, size_t ri) {
        const auto &cr = cast<CheckpointStmt>(*b.stmts[ri]);
        Body plain, scalar;
        std::set<unsigned> fed;
        if (reverseStepBody(fn, cr, plain).empty())
          return false;
        if (reverseStepBody(fn, cr, scalar, &chosen, &fed).empty()) {
          needed.insert(fed.begin(), fed.end());
          return false;
        }
        // Kept checkpointed: its reverse steps sum what they sum.
        VarReads r;
        r.visitBody(cr.reverseBody);
        reversed.insert(r.vars.begin(), r.vars.end());
        return false;
      });
    });
    std::set<unsigned> next;
    std::map<unsigned, unsigned> perRequest;
    for (unsigned a : chosen)
      if (needed.count(a) && !reversed.count(a)) {
        next.insert(a);
        ++perRequest[of.at(a)->request];
      }
    for (auto it = next.begin(); it != next.end();)
      it = perRequest[of.at(*it)->request] > MaxTangents ? next.erase(it)
                                                         : std::next(it);
    shrunk = next != chosen;
    chosen = std::move(next);
  }
  std::map<unsigned, std::string> out;
  for (unsigned a : chosen) {
    const ScalarGradient &g = *of.at(a);
    out[a] = g.proc->vars[g.proc->params[g.param]].name;
  }
  return out;
}

/// Takes \p g from a tangent run along its request's forward sweep (the
/// primal run the adjoint makes anyway, Tangent.h: tangentAlongside), so
/// that the proc's body runs once, not twice; then `let gradVar = t`.
/// False, changing nothing, where the sweep is not found or not taken.
bool tangentInForward(Program &program, Function &fn, const ScalarGradient &g,
                      PassContext &ctx) {
  auto [b, i] = findStmt(fn, g.declsEnd);
  if (!g.declsEnd || !b)
    return false;
  size_t j = i + 1;
  for (; j < b->stmts.size(); ++j) {
    auto *d = dyn_cast<DeclStmt>(b->stmts[j].get());
    if (d && d->slot == g.valueSlot)
      break;
  }
  if (j == b->stmts.size())
    return false;
  const auto from = b->stmts.begin() + std::ptrdiff_t(i + 1);
  std::vector<StmtPtr> fwd(
      std::make_move_iterator(from),
      std::make_move_iterator(from + std::ptrdiff_t(j - i - 1)));
  b->stmts.erase(from, from + std::ptrdiff_t(j - i - 1));
  std::vector<unsigned> vars = g.floatVars;
  vars.push_back(g.resultSlot);
  std::optional<unsigned> t = tangentAlongside(
      program, ctx, fn, fwd, g.paramSlot, vars, g.resultSlot, g.range);
  if (t) {
    const Type rt = g.proc->returnType;
    const unsigned keep =
        fn.addVar(fn.vars[g.gradVar].name + ".tangent", rt, false, g.range);
    fwd.push_back(std::make_unique<DeclStmt>(keep, ref(*t, rt), g.range));
    gradientDecl(fn, g)->init = ref(keep, rt);
  }
  b->stmts.insert(b->stmts.begin() + std::ptrdiff_t(i + 1),
                  std::make_move_iterator(fwd.begin()),
                  std::make_move_iterator(fwd.end()));
  return t.has_value();
}

/// Takes each gradient of \p scalars from a tangent of its request's call.
/// The first of a request rides along the request's forward sweep
/// (tangentInForward); another, or one whose sweep that does not take,
/// gets a tangent run of its own before the request's expansion, from the
/// same state: the dats the proc writes saved, `let t = tangent
/// proc(args) along (alpha: 1)`, the dats given back (the adjoint then
/// runs the proc from where the tangent did); then `let gradVar = t` in
/// place of `let gradVar = adjSlot`.
void insertTangents(Program &program, Function &fn,
                    const std::map<unsigned, std::string> &scalars,
                    PassContext &ctx, unsigned &pairs) {
  std::set<unsigned> alongside; // requests whose sweep carries a tangent
  for (const ScalarGradient &g : program.scalarGradients) {
    if (g.host != &fn || !scalars.count(g.adjSlot))
      continue;
    ctx.stats.add(PassName, "tangents",
                  "scalar gradients taken from a tangent");
    if (!alongside.count(g.request) && tangentInForward(program, fn, g, ctx)) {
      alongside.insert(g.request);
      continue;
    }
    const Type t = g.proc->returnType;
    DeclStmt *d = gradientDecl(fn, g);
    auto [b, i] = findStmt(fn, g.first);
    OPDC_ASSERT(d && b, "chooseScalars checked the request's statements");
    auto tangent = std::make_unique<TangentStmt>(g.range);
    tangent->proc = g.proc;
    for (const ExprPtr &a : g.args)
      tangent->args.push_back(a->clone());
    DerivEntry e;
    e.of.param = int(g.param);
    e.value =
        std::make_unique<ConstantExpr>(ConstValue::ofFloat(t.scalar, 1.0));
    e.range = g.range;
    tangent->entries.push_back(std::move(e));
    const unsigned result =
        fn.addVar(fn.vars[g.gradVar].name + ".tangent", t, false, g.range);
    tangent->resultVar = int(result);
    d->init = ref(result, t);
    auto push = std::make_unique<TapeStmt>(true, g.written,
                                           std::vector<unsigned>{}, g.range);
    auto pop = std::make_unique<TapeStmt>(false, g.written,
                                          std::vector<unsigned>{}, g.range);
    push->pair = pop->pair = ++pairs;
    std::vector<StmtPtr> seq;
    seq.push_back(std::move(push));
    seq.push_back(std::move(tangent));
    seq.push_back(std::move(pop));
    b->stmts.insert(b->stmts.begin() + std::ptrdiff_t(i),
                    std::make_move_iterator(seq.begin()),
                    std::make_move_iterator(seq.end()));
  }
}

} // namespace

bool lowerLinearSteps(Program &program, PassContext &ctx) {
  bool changed = false, tangents = false;
  // Loops that mix a candidate's share with the field's adjoint, split so
  // that the share alone reads the state (AdjointLinearShares.cpp).
  bool split = false;
  for (Function *f : hostFunctions(program)) {
    std::set<unsigned> candidates;
    for (const ScalarGradient &g : program.scalarGradients)
      if (g.host == f && tangentEligible(g))
        candidates.insert(g.adjSlot);
    if (candidates.empty())
      continue;
    forEachBody(f->body, [&](Body &b) {
      forEachPair(b, [&](size_t, size_t ri) {
        auto &cr = cast<CheckpointStmt>(*b.stmts[ri]);
        const std::set<const Dat *> state(cr.dats.begin(), cr.dats.end());
        split = splitScalarShares(program, cr.reverseBody, state, candidates) ||
                split;
        return false;
      });
    });
  }
  if (split)
    eliminateDeadKernelCode(program, ctx);
  changed = split;
  for (Function *f : hostFunctions(program)) {
    unsigned pairs = maxPair(*f);
    const std::map<unsigned, std::string> scalars = chooseScalars(*f, program);
    forEachBody(f->body, [&](Body &b) {
      changed = lowerIn(*f, b, ctx, pairs, scalars) || changed;
    });
    if (!scalars.empty()) {
      insertTangents(program, *f, scalars, ctx, pairs);
      changed = tangents = true;
    }
  }
  program.scalarGradients.clear();
  // The tangents' requests, expanded as the tangent pass expands any.
  if (tangents)
    buildTangents(program, ctx);
  return changed;
}

} // namespace opdc
