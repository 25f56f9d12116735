// SplitReports.cpp - Split time loops at their reports, so that the steps
// between two reports run as a loop of plain stencil steps that
// unroll-steps can give several steps a sweep.
// SPDX-License-Identifier: Apache-2.0
//
// Time-stepping codes print or write every so often from inside the time
// loop:
//   for s in lo..hi {
//     loop step (u @ star7 -> u2); swap(u, u2)      // P: the steps
//     if s % report == 0 || s == nsteps { ...; printf(...) }  // the report
//   }
// The `if` makes the body more than stencil steps, so unroll-steps leaves
// the loop alone and every step streams the dats through memory. When the
// report's condition depends only on the loop variable and on values the
// loop never changes, the steps up to the next report can be found before
// they run:
//   let s.hi = hi;  var s.at = lo
//   while s.at < s.hi {
//     var s.end = s.at                 // the next step that reports
//     while s.end < s.hi - 1 && !(C(s.end)) { s.end = s.end + 1 }
//     for s in s.at..s.end + 1 { P }   // plain steps: unroll-steps takes it
//     s.at = s.end + 1
//     if C(s.end) { report with s = s.end }
//   }
// Several trailing ifs are one report each (the run ends where any of
// their conditions holds; they then run in their order).
//
// A report may read what the step declared (`var r = 0.0; loop step (.., r)`
// then `printf(.., r)`): inside the for it ran in the step's scope. After
// the split it runs outside the run of steps, so each such value is copied
// out at the end of every step into a variable declared around the runs,
// and the report reads the copy:
//   var r.last = 0.0                      // before the outer while
//   for s in s.at..s.end + 1 { P; r.last = r }
//   if C(s.end) { printf(.., r.last) }
// The copy is a host assignment, which unroll-steps takes as part of a step
// (its second copy of the step assigns its own renamed r), so the report
// reads the value of step s.end, as before.
//
// Legal: every step and every report runs in the order it ran before, with
// the same value of the loop variable; only the conditions are evaluated
// earlier and once more (at the report), and they have no effects (no
// calls, no clocks) and read nothing the loop assigns or declares, so they
// give the values they gave. A `continue` in a report skips only what
// followed the report (nothing), a `break` leaves the outer while as it
// left the for; the run's end is stored before the report runs. Results are
// bitwise the same. Only reports that print, write or read (I/O) are split
// off: a proc with I/O has no derivative, so the derivative passes never
// see the new while loops (the adjoint's checkpointed loop stays the time
// loop). Only where unroll-steps works (skewed sweeps: the CPU backend
// without -fno-skew, -funroll-steps=N with N >= 2): elsewhere the split
// gains nothing.
#include "passes/loops/SplitReports.h"

#include "passes/loops/UnrollSteps.h"
#include "passes/utils/BodyUtils.h"

#include "ir/IR.h"
#include "ir/IRBuilder.h"
#include "ir/IRVisitor.h"

#include "llvm/Support/Casting.h"

#include <numeric>
#include <set>

namespace opdc {

using namespace ir;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;

namespace {

constexpr const char *PassName = "split-reports";

/// The variable slots \p b declares or assigns (at any depth), and whether
/// it does I/O.
struct Writes : IRVisitor {
  std::set<unsigned> slots;
  bool io = false, opaque = false;
  void visitDecl(const DeclStmt &s) override {
    slots.insert(s.slot);
    IRVisitor::visitDecl(s);
  }
  void visitAssign(const AssignStmt &s) override {
    if (const auto *v = dyn_cast<VarRefExpr>(s.target.get()))
      slots.insert(v->slot);
    IRVisitor::visitAssign(s);
  }
  void visitFor(const ForStmt &s) override {
    slots.insert(s.slot);
    IRVisitor::visitFor(s);
  }
  void visitParLoop(const ParLoopStmt &s) override {
    // Reductions write host variables through the loop's arguments.
    for (const AccessDescriptor &a : s.args)
      if (a.var >= 0)
        slots.insert(unsigned(a.var));
    IRVisitor::visitParLoop(s);
  }
  // Statements that set host variables in ways not listed above: the
  // loop is left as it is.
  void visitSolve(const SolveStmt &s) override { opaque = true; }
  void visitAdjoint(const AdjointStmt &s) override { opaque = true; }
  void visitTangent(const TangentStmt &s) override { opaque = true; }
  void visitCheckpoint(const CheckpointStmt &s) override { opaque = true; }
  void visitPrint(const PrintStmt &s) override {
    io = true;
    IRVisitor::visitPrint(s);
  }
  void visitDatIO(const DatIOStmt &s) override {
    io = true;
    IRVisitor::visitDatIO(s);
  }
};

/// Whether \p e may be evaluated at any time: no calls, no clock, no read
/// of a slot in \p written.
struct Pure : IRVisitor {
  const std::set<unsigned> &written;
  bool pure = true;
  explicit Pure(const std::set<unsigned> &w) : written(w) {}
  void visitCall(const CallExpr &) override { pure = false; }
  void visitIntrinsic(const IntrinsicExpr &e) override {
    if (e.id == Intrinsic::Wtime)
      pure = false;
    IRVisitor::visitIntrinsic(e);
  }
  void visitVarRef(const VarRefExpr &e) override {
    if (written.count(e.slot))
      pure = false;
  }
};

/// The variable slots \p b reads.
std::set<unsigned> slotsRead(const Body &b) {
  struct Reads : IRVisitor {
    std::set<unsigned> slots;
    void visitVarRef(const VarRefExpr &e) override { slots.insert(e.slot); }
    void visitParLoop(const ParLoopStmt &s) override {
      for (const AccessDescriptor &a : s.args)
        if (a.var >= 0)
          slots.insert(unsigned(a.var));
      IRVisitor::visitParLoop(s);
    }
  } reads;
  reads.visitBody(b);
  return reads.slots;
}

bool pureExpr(const Expr &e, const std::set<unsigned> &written) {
  Pure p(written);
  p.visitExpr(e);
  return p.pure;
}

/// The number of trailing reports of \p f's body that can be split off
/// (0: the loop is left as it is).
size_t splittableReports(const ForStmt &f, const PassContext &ctx) {
  const std::vector<StmtPtr> &stmts = f.body.stmts;
  size_t n = 0;
  while (n < stmts.size() &&
         dyn_cast_or_null<IfStmt>(stmts[stmts.size() - 1 - n].get()))
    ++n;
  if (n == 0 || n == stmts.size())
    return 0;
  if (!stencilStepBody({stmts.data(), stmts.size() - n}, f.slot, !ctx.mpi))
    return 0;
  // What the loop writes; the loop variable itself is the one slot the
  // conditions may read that changes. The steps do no I/O
  // (stencilStepBody), so any is the reports'.
  Writes w;
  w.visitBody(f.body);
  w.slots.erase(f.slot);
  if (w.opaque || !w.io)
    return 0;
  for (size_t i = stmts.size() - n; i < stmts.size(); ++i) {
    const auto &r = *dyn_cast<IfStmt>(stmts[i].get());
    if (!r.elseBody.empty() || !pureExpr(*r.cond, w.slots))
      return 0;
  }
  // The bounds are evaluated once, as the for evaluated them.
  if (!pureExpr(*f.lo, {}) || !pureExpr(*f.hi, {}))
    return 0;
  return n;
}

/// The statements that replace \p f, whose last \p n statements are its
/// reports.
std::vector<StmtPtr> split(Function &fn, ForStmt &f, size_t n) {
  using B = IRBuilder;
  const Var loopVar = fn.vars[f.slot];
  const Type t = loopVar.type;
  const SourceRange r = f.range;
  const unsigned hi = fn.addVar(loopVar.name + ".hi", t, false, r);
  const unsigned at = fn.addVar(loopVar.name + ".at", t, true, r);
  const unsigned end = fn.addVar(loopVar.name + ".end", t, true, r);
  auto ref = [&](unsigned slot) { return B::var(fn, slot); };
  auto one = [&] { return B::constant(ConstValue::ofInt(t.scalar, 1)); };
  auto endPlusOne = [&] { return B::binary(BinaryOp::Add, ref(end), one()); };

  std::vector<StmtPtr> &stmts = f.body.stmts;
  const size_t first = stmts.size() - n;
  // The reports and the search for the next one, with the loop variable
  // read as s.end.
  Body reports;
  ExprPtr any;
  for (size_t i = first; i < stmts.size(); ++i) {
    const auto &c = *dyn_cast<IfStmt>(stmts[i].get())->cond;
    any = any ? B::binary(BinaryOp::Or, std::move(any), c.clone()) : c.clone();
    reports.stmts.push_back(std::move(stmts[i]));
  }
  stmts.resize(first);
  Body step;
  step.stmts.push_back(B::assign(ref(end), endPlusOne(), AssignOp::Set, r));
  Body search;
  search.stmts.push_back(B::whileLoop(
      B::binary(BinaryOp::And,
                B::binary(BinaryOp::Lt, ref(end),
                          B::binary(BinaryOp::Sub, ref(hi), one())),
                B::unary(UnaryOp::Not, std::move(any))),
      std::move(step), r));
  std::vector<unsigned> map(fn.vars.size());
  std::iota(map.begin(), map.end(), 0u);
  map[f.slot] = end;
  // What the steps declare and the reports read: copied out of each step.
  std::vector<StmtPtr> carried;
  const std::set<unsigned> read = slotsRead(reports);
  for (size_t i = 0; i < first; ++i) {
    const auto *d = dyn_cast_or_null<DeclStmt>(stmts[i].get());
    if (!d || !read.count(d->slot))
      continue;
    const Var v = fn.vars[d->slot];
    const unsigned last = fn.addVar(v.name + ".last", v.type, true, v.range);
    map.resize(fn.vars.size());
    map[last] = last;
    map[d->slot] = last;
    carried.push_back(B::decl(last, B::constant(zeroOf(v.type)), r));
    stmts.push_back(B::assign(ref(last), ref(d->slot), AssignOp::Set, r));
  }
  remapSlots(reports, map);
  remapSlots(search, map);

  Body run;
  run.stmts.push_back(B::decl(end, ref(at), r));
  run.stmts.push_back(std::move(search.stmts[0]));
  run.stmts.push_back(
      B::forRange(f.slot, ref(at), endPlusOne(), std::move(f.body), r));
  run.stmts.push_back(B::assign(ref(at), endPlusOne(), AssignOp::Set, r));
  for (StmtPtr &s : reports.stmts)
    run.stmts.push_back(std::move(s));

  std::vector<StmtPtr> out = std::move(carried);
  out.push_back(B::decl(at, std::move(f.lo), r));
  out.push_back(B::decl(hi, std::move(f.hi), r));
  out.push_back(B::whileLoop(B::binary(BinaryOp::Lt, ref(at), ref(hi)),
                             std::move(run), r));
  return out;
}

bool splitIn(Function &fn, Body &b, PassContext &ctx) {
  return rewriteForLoops(b, [&](ForStmt &f, const Stmt *) {
    const size_t n = splittableReports(f, ctx);
    if (!n)
      return std::vector<StmtPtr>{};
    ctx.stats.add(PassName, "split", "time loops split at their reports");
    return split(fn, f, n);
  });
}

} // namespace

bool splitReports(Program &program, PassContext &ctx) {
  if (!ctx.backend.skewedSweeps() ||
      std::max(ctx.unrollSteps, ctx.unrollSteps3D) < 2)
    return false;
  bool changed = false;
  for (Function *f : program.functions())
    if (f->isHost())
      changed = splitIn(*f, f->body, ctx) || changed;
  return changed;
}

} // namespace opdc
