// VerifierHostStmts.cpp - IR verifier: the host-only statements (parallel
// loops, dat I/O, solves, derivative requests, tapes and checkpoints).
// SPDX-License-Identifier: Apache-2.0
//
// Split from VerifierStmts.cpp, which keeps the statements any function may
// hold; these are legal in host code only and each checks a runtime object.
#include "ir/AccessRules.h"
#include "ir/VerifierImpl.h"

namespace opdc::ir::verifier {

void Verifier::checkHostStmt(const Stmt &s, Scope &sc,
                             std::vector<unsigned> &declHere) {
  bool host = fn && fn->isHost();
  auto hostOnly = [&](const char *what) {
    if (!host)
      problem(std::string(what) + " outside host code");
  };
  switch (s.kind) {
  case StmtKind::ParLoop:
    hostOnly("loop");
    checkParLoop(cast<ParLoopStmt>(s), sc);
    return;
  case StmtKind::Swap: {
    hostOnly("swap");
    const auto &w = cast<SwapStmt>(s);
    if (!dats.count(w.a) || !dats.count(w.b)) {
      problem("swap of dats outside the program");
      return;
    }
    if (w.a == w.b || w.a->set != w.b->set || w.a->block != w.b->block ||
        w.a->elemType != w.b->elemType)
      problem("swap of " + name(w.a) + " and " + name(w.b) +
              ", which differ in shape");
    return;
  }
  case StmtKind::Write:
  case StmtKind::Read: {
    const auto &io = cast<DatIOStmt>(s);
    hostOnly(io.isRead() ? "read" : "write");
    checkDatIO(io, sc);
    return;
  }
  case StmtKind::Print: {
    hostOnly("print");
    const auto &p = cast<PrintStmt>(s);
    if (p.to != PrintTo::Out && !p.formatted)
      problem("a warning or error print that is not formatted");
    for (const auto &a : p.args) {
      if (!a) {
        problem("print of nothing");
        continue;
      }
      Type t = check(*a, sc);
      if (!t.isScalar() && !t.isString() && !t.isArray())
        problem("print of " + str(*a) + " of type " + t.str());
    }
    return;
  }
  case StmtKind::Solve: {
    hostOnly("solve");
    const auto &v = cast<SolveStmt>(s);
    if (v.solver == SolverKind::CG) {
      checkSolveCG(v, sc, declHere);
      return;
    }
    if (!blocks.count(v.block)) {
      problem("solve over a block outside the program");
      return;
    }
    if (v.dats.size() != 4)
      problem("solve tridiagonal takes 4 dats, has " +
              std::to_string(v.dats.size()));
    for (const Dat *d : v.dats) {
      if (!dats.count(d)) {
        problem("solve of a dat outside the program");
        continue;
      }
      if (d->block != v.block)
        problem("solve over '" + v.block->name + "' of dat " + name(d) +
                ", which is not on it");
      if (!d->elemType.isFloatScalar() || d->elemType != v.dats[0]->elemType)
        problem("solve of dat " + name(d) + " of " + d->elemType.str() +
                ", expected scalar floats of one type");
    }
    if (v.along >= v.block->dims)
      problem("solve along dimension " + std::to_string(v.along) + " of a " +
              std::to_string(v.block->dims) + "-d block");
    checkRanges(v.ranges, v.block, sc, "solve");
    return;
  }
  case StmtKind::Adjoint:
  case StmtKind::Tangent: {
    const auto &d = cast<DerivativeStmt>(s);
    hostOnly(d.keyword());
    checkDerivative(d, sc, declHere);
    return;
  }
  case StmtKind::Tape: {
    const auto &t = cast<TapeStmt>(s);
    hostOnly("tape");
    checkStateLists(t.dats, t.vars, sc, "tape");
    return;
  }
  case StmtKind::Checkpoint:
    hostOnly("checkpoint");
    checkCheckpoint(cast<CheckpointStmt>(s), sc);
    return;
  default:
    problem("statement checked as host-only that is not");
    return;
  }
}

void Verifier::checkDatIO(const DatIOStmt &io, Scope &sc) {
  if (io.dats.empty())
    problem("dat I/O without dats");
  for (const Dat *d : io.dats)
    if (!dats.count(d))
      problem("dat I/O of a dat outside the program");
  if (!io.file)
    problem("dat I/O without a file");
  expectType(io.file, Type::string(), sc, "file name");
  if (!io.ranges.empty() && (io.isRead() || io.dats.empty()))
    problem("a read, or a write without dats, has ranges");
  else if (!io.ranges.empty() && io.dats[0]->block)
    checkRanges(io.ranges, io.dats[0]->block, sc, "write");
  else if (!io.ranges.empty()) {
    if (io.ranges.size() != 1)
      problem("write over a set has " + std::to_string(io.ranges.size()) +
              " ranges, expected 1");
    for (const auto &r : io.ranges)
      if (!r.lo || !r.hi || !check(*r.lo, sc).isIntegerScalar() ||
          !check(*r.hi, sc).isIntegerScalar())
        problem("write range without integer bounds");
  }
  return;
}

void Verifier::checkCheckpoint(const CheckpointStmt &c, Scope &sc) {
  checkStateLists(c.dats, c.vars, sc, "checkpoint");
  if (!validSlot(int(c.slot))) {
    problem("checkpoint uses slot " + std::to_string(c.slot) +
            ", which does not exist");
    return;
  }
  const Var &v = fn->vars[c.slot];
  if (!v.type.isIntegerScalar() || !v.isMutable || !sc.defined[c.slot])
    problem("checkpoint step variable '" + v.name +
            "' must be a mutable integer in scope");
  if (c.reverse) {
    if (c.lo || c.hi || c.snapshots)
      problem("a reverse checkpoint has no bounds");
  } else {
    if (!c.lo || !c.hi)
      problem("a forward checkpoint without bounds");
    expectType(c.lo, v.type, sc, "checkpoint lower bound");
    expectType(c.hi, v.type, sc, "checkpoint upper bound");
    if (c.snapshots && !check(*c.snapshots, sc).isIntegerScalar())
      problem("checkpoint snapshot count is not an integer");
    if (!c.reverseBody.empty() || !c.tapedReverseBody.empty())
      problem("a forward checkpoint has no reverse body");
  }
  if (c.reverse && !c.tapedBody.empty())
    problem("a reverse checkpoint has no taped forward body");
  ++sc.loopDepth;
  checkBody(c.body, sc);
  checkBody(c.reverseBody, sc);
  checkBody(c.tapedBody, sc);
  checkBody(c.tapedReverseBody, sc);
  --sc.loopDepth;
  return;
}

void Verifier::checkStateLists(const std::vector<Dat *> &ds,
                               const std::vector<unsigned> &vs, Scope &sc,
                               const char *what) {
  for (const Dat *d : ds)
    if (!dats.count(d))
      problem(std::string(what) + " of a dat outside the program");
  for (unsigned v : vs) {
    if (!validSlot(int(v))) {
      problem(std::string(what) + " of slot " + std::to_string(v) +
              ", which does not exist");
      continue;
    }
    const Var &var = fn->vars[v];
    if (!(var.type.isScalar() || var.type.isArray()) || !sc.defined[v] ||
        !var.isMutable)
      problem(std::string(what) + " of variable '" + var.name +
              "': expected a mutable scalar or array in scope");
  }
}

void Verifier::checkSolveCG(const SolveStmt &v, Scope &sc,
                            std::vector<unsigned> &declHere) {
  if (!v.op || !procs.count(v.op) || !v.op->params.empty() ||
      !v.op->returnType.isVoid())
    problem("solve cg without an operator proc of the program taking no "
            "parameters and returning nothing");
  std::vector<const Dat *> all(v.dats.begin(), v.dats.end());
  if (v.dats.size() != 4)
    problem("solve cg takes 4 dats, has " + std::to_string(v.dats.size()));
  if (v.precond)
    all.push_back(v.precond);
  for (size_t i = 0; i < all.size(); ++i) {
    const Dat *d = all[i];
    if (!dats.count(d)) {
      problem("solve cg of a dat outside the program");
      return;
    }
    if (!d->elemType.isScalar() || d->scalar() != ScalarKind::F64)
      problem("solve cg of dat " + name(d) + " of " + d->elemType.str() +
              ", expected f64");
    if (d->set != all[0]->set || d->block != all[0]->block)
      problem("solve cg of dats on different sets or blocks");
    for (size_t j = 0; j < i; ++j)
      if (all[j] == d)
        problem("solve cg names dat " + name(d) + " twice");
  }
  expectType(v.tol, Type::scalarOf(ScalarKind::F64), sc, "solve cg tol");
  expectType(v.maxiter, Type::scalarOf(ScalarKind::I32), sc,
             "solve cg maxiter");
  if (v.warn)
    expectType(v.warn, Type::scalarOf(ScalarKind::Bool), sc, "solve cg warn");
  if (!v.tol || !v.maxiter)
    problem("solve cg without tol or maxiter");
  if ((v.itersVar < 0) != (v.residualVar < 0))
    problem("solve cg defines one of its two results");
  if (v.itersVar >= 0 && v.resultsAssigned) {
    for (int slot : {v.itersVar, v.residualVar})
      if (!validSlot(slot) || !sc.defined[unsigned(slot)] ||
          !fn->vars[unsigned(slot)].isMutable)
        problem("solve cg assigns slot " + std::to_string(slot) +
                ", expected a mutable variable in scope");
  } else if (v.itersVar >= 0) {
    declare(unsigned(v.itersVar), sc, declHere, "solve cg");
    declare(unsigned(v.residualVar), sc, declHere, "solve cg");
    if (unsigned(v.residualVar) < fn->vars.size() &&
        (fn->vars[v.itersVar].type != Type::scalarOf(ScalarKind::I32) ||
         fn->vars[v.residualVar].type != Type::scalarOf(ScalarKind::F64)))
      problem("solve cg results of types other than i32 and f64");
  }
}

void Verifier::checkRanges(const std::vector<LoopRange> &rs, const Block *b,
                           Scope &sc, const char *what) {
  if (rs.empty())
    return;
  if (rs.size() != b->dims)
    problem(std::string(what) + " over '" + b->name + "' has " +
            std::to_string(rs.size()) + " ranges, expected " +
            std::to_string(b->dims));
  for (const auto &r : rs) {
    if (!r.lo || !r.hi) {
      problem(std::string(what) + " range without bounds");
      continue;
    }
    Type lo = check(*r.lo, sc), hi = check(*r.hi, sc);
    if (!lo.isIntegerScalar() || lo != hi)
      problem(std::string(what) + " range " + str(*r.lo) + " .. " + str(*r.hi) +
              " has bounds of type " + lo.str() + " and " + hi.str() +
              ", expected one integer type");
  }
}

void Verifier::checkParLoop(const ParLoopStmt &l, Scope &sc) {
  if (!kernels.count(l.kernel)) {
    problem("loop of a kernel outside the program");
    return;
  }
  const Function &k = *l.kernel;
  std::string ln = "loop '" + k.name + "': ";
  if (bool(l.set) == bool(l.block)) {
    problem(ln + "needs exactly one of a set and a block");
    return;
  }
  if (l.set && !sets.count(l.set)) {
    problem(ln + "over a set outside the program");
    return;
  }
  if (l.block && !blocks.count(l.block)) {
    problem(ln + "over a block outside the program");
    return;
  }
  if (l.set && !l.ranges.empty())
    problem(ln + "a set loop has ranges");
  if (l.block)
    checkRanges(l.ranges, l.block, sc, "loop");
  if (l.args.size() != k.kernelParams.size()) {
    problem(ln + std::to_string(l.args.size()) + " arguments for " +
            std::to_string(k.kernelParams.size()) + " kernel parameters");
    return;
  }
  for (size_t i = 0; i < l.args.size(); ++i) {
    const AccessDescriptor &a = l.args[i];
    const KernelParam &p = k.kernelParams[i];
    std::string an = ln + "arg " + std::to_string(i) + ": ";
    auto report = [&](const std::vector<std::string> &why) {
      for (const std::string &w : why)
        problem(an + w);
    };
    report(paramRules(a, p));
    if (a.usesDat()) {
      if (!dats.count(a.dat)) {
        problem(an + "dat outside the program");
        continue;
      }
      if (a.dat->scalar() != a.scalar || a.dat->dim() != a.dim)
        problem(an + "dat " + name(a.dat) + " has elements of " +
                a.dat->elemType.str());
    }
    // What the rules need before they can be asked: the loop kind the
    // argument needs and the objects it names.
    switch (a.kind) {
    case ArgKind::Direct:
      break;
    case ArgKind::Indirect:
      if (!l.set) {
        problem(an + "indirect argument in a block loop");
        continue;
      }
      if (!maps.count(a.map)) {
        problem(an + "map outside the program");
        continue;
      }
      break;
    case ArgKind::Stencil:
      if (!l.block) {
        problem(an + "stencil argument in a set loop");
        continue;
      }
      if (!stencils.count(a.stencil) || a.stencil != p.stencil) {
        problem(an + "stencil differs from parameter '" + p.name + "'");
        continue;
      }
      break;
    case ArgKind::MapDirect:
      if (!l.set || !maps.count(a.map)) {
        problem(an + "map argument needs a set loop and a map");
        continue;
      }
      break;
    case ArgKind::GlobalRead:
      if (!a.value) {
        problem(an + "global argument without a value");
        continue;
      }
      break;
    case ArgKind::Reduction:
      break;
    }
    report(placementRules(a, p, l));
    if (std::string why = modeRule(a); !why.empty())
      problem(an + why);
    if (a.kind == ArgKind::GlobalRead)
      expectType(a.value, p.type, sc, "global argument");
    if (a.kind == ArgKind::Reduction)
      checkReductionVar(a, p, sc, an);
  }
}

void Verifier::checkReductionVar(const AccessDescriptor &a,
                                 const KernelParam &p, Scope &sc,
                                 const std::string &an) {
  if (!validSlot(a.var)) {
    problem(an + "reduction into slot " + std::to_string(a.var) +
            ", which does not exist");
    return;
  }
  if (!sc.defined[a.var])
    problem(an + "reduction into " + fn->vars[a.var].name +
            ", which is not in scope");
  if (!fn->vars[a.var].isMutable)
    problem(an + "reduction into immutable '" + fn->vars[a.var].name + "'");
  if (fn->vars[a.var].type != p.type)
    problem(an + "reduction variable '" + fn->vars[a.var].name + "' has type " +
            fn->vars[a.var].type.str() + ", expected " + p.type.str());
}

void Verifier::checkDerivative(const DerivativeStmt &d, Scope &sc,
                               std::vector<unsigned> &declHere) {
  std::string kw = d.keyword();
  bool adjoint = d.isAdjoint();
  if (!procs.count(d.proc)) {
    problem(kw + " of a proc outside the program");
    return;
  }
  const Function &p = *d.proc;
  if (!p.returnType.isFloatScalar())
    problem(kw + " of '" + p.name + "', which returns " + p.returnType.str() +
            ", expected a float");
  if (d.args.size() != p.params.size())
    problem(kw + " of '" + p.name + "' with " + std::to_string(d.args.size()) +
            " arguments, expected " + std::to_string(p.params.size()));
  std::string argWhat = kw + " argument";
  for (size_t i = 0; i < d.args.size() && i < p.params.size(); ++i)
    expectType(d.args[i], p.vars[p.params[i]].type, sc, argWhat.c_str());
  if (auto *a = dyn_cast<AdjointStmt>(&d); a && a->checkpoints) {
    Type t = check(*a->checkpoints, sc);
    if (!t.isIntegerScalar())
      problem("checkpoints " + str(*a->checkpoints) + " of type " + t.str());
  }
  for (const DerivEntry &e : d.entries) {
    if (e.of.dat) {
      if (!dats.count(e.of.dat) || !dats.count(e.dat)) {
        problem(adjoint ? "adjoint wrt a dat outside the program"
                        : "tangent seed of a dat outside the program");
        continue;
      }
      if (!adjoint) {
        if (e.dat->set != e.of.dat->set || e.dat->block != e.of.dat->block ||
            e.dat->elemType != e.of.dat->elemType)
          problem("tangent seed " + name(e.dat) + " differs in shape from " +
                  name(e.of.dat));
        continue;
      }
      if (!e.dat->isDerivative || e.dat->primal != e.of.dat)
        problem("gradient dat " + name(e.dat) + " is not the derivative of " +
                name(e.of.dat));
      if (!e.of.dat->elemType.isFloatScalar() &&
          !(e.of.dat->elemType.isArray() && isFloat(e.of.dat->scalar())))
        problem("adjoint wrt dat " + name(e.of.dat) + " of " +
                e.of.dat->elemType.str());
      continue;
    }
    if (e.of.param < 0 || unsigned(e.of.param) >= p.params.size()) {
      problem(
          (adjoint ? "adjoint wrt parameter " : "tangent seed for parameter ") +
          std::to_string(e.of.param) + " of '" + p.name +
          "', which does not exist");
      continue;
    }
    Type pt = p.vars[p.params[e.of.param]].type;
    if (!adjoint) {
      if (!e.value) {
        problem("tangent seed without a value");
        continue;
      }
      expectType(e.value, pt, sc, "tangent seed");
      continue;
    }
    if (!pt.isFloatScalar())
      problem("adjoint wrt parameter of type " + pt.str());
    if (!validSlot(e.var)) {
      problem("adjoint gradient slot " + std::to_string(e.var) +
              " does not exist");
      continue;
    }
    if (fn->vars[e.var].type != pt)
      problem("gradient variable '" + fn->vars[e.var].name + "' has type " +
              fn->vars[e.var].type.str() + ", expected " + pt.str());
    declare(unsigned(e.var), sc, declHere, "adjoint gradient");
  }
  if (!validSlot(d.resultVar)) {
    problem(kw + " result slot " + std::to_string(d.resultVar) +
            " does not exist");
    return;
  }
  if (fn->vars[d.resultVar].type != p.returnType)
    problem(kw + " result '" + fn->vars[d.resultVar].name + "' has type " +
            fn->vars[d.resultVar].type.str() + ", expected " +
            p.returnType.str());
  std::string resultWhat = kw + " result";
  declare(unsigned(d.resultVar), sc, declHere, resultWhat.c_str());
}

} // namespace opdc::ir::verifier
