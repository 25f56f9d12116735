// SolveFlow.cpp - Which dats a `solve` statement reads, writes and makes
// active (SolveFlow.h says why this sits below DerivUtils and SolveDiff).
// SPDX-License-Identifier: Apache-2.0
#include "passes/deriv/SolveFlow.h"

#include "ir/IRVisitor.h"

namespace opdc {

using namespace ir;

namespace {

/// The dats the loops of \p f (and of the procs it calls) read.
struct OperatorReads : IRVisitor {
  std::set<const Function *> seen;
  std::vector<Dat *> dats;
  void visitParLoop(const ParLoopStmt &l) override {
    for (const AccessDescriptor &a : l.args)
      if (a.usesDat() && modeReads(a.mode))
        dats.push_back(a.dat);
    IRVisitor::visitParLoop(l);
  }
  void visitCall(const CallExpr &c) override {
    IRVisitor::visitCall(c);
    if (c.callee && c.callee->isHost() && seen.insert(c.callee).second)
      visitBody(c.callee->body);
  }
};

} // namespace

std::vector<Dat *> solveWritten(const SolveStmt &s) {
  if (s.solver == SolverKind::CG)
    return {s.dats[0], s.dats[1], s.dats[3]};
  return {s.dats[3]};
}

std::vector<Dat *> solveInputs(const SolveStmt &s) {
  if (s.solver == SolverKind::CG)
    return {s.dats[2]};
  return s.dats;
}

bool solveOperatorActive(const SolveStmt &s, const std::set<Dat *> &active) {
  for (Dat *d : solveOperatorReads(s))
    if (d != s.dats[0] && active.count(d))
      return true;
  return false;
}

std::vector<Dat *> solveReached(const SolveStmt &s,
                                const std::set<Dat *> &active) {
  // An operator with active coefficients: Ap carries their derivative.
  if (solveOperatorActive(s, active))
    return {s.dats[3], s.dats[1]};
  for (Dat *d : solveInputs(s))
    if (active.count(d))
      return {s.dats[3]};
  return {};
}

std::vector<Dat *> solveOperatorReads(const SolveStmt &s) {
  if (s.solver != SolverKind::CG || !s.op)
    return {};
  OperatorReads r;
  r.seen.insert(s.op);
  r.visitBody(s.op->body);
  return r.dats;
}

} // namespace opdc
