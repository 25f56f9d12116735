// VerifierStmts.cpp - IR verifier: functions, bodies and the statements
// any function may hold (the host-only ones are in VerifierHostStmts.cpp).
// SPDX-License-Identifier: Apache-2.0
#include "ir/AccessRules.h"
#include "ir/VerifierImpl.h"

namespace opdc::ir::verifier {

void Verifier::checkFunction(const Function &f) {
  fn = &f;
  Scope sc;
  sc.defined.assign(f.vars.size(), false);
  sc.declared.assign(f.vars.size(), false);
  for (const Var &v : f.vars) {
    if (!v.type.isScalar() && !v.type.isArray() && !v.type.isString())
      problem("variable '" + v.name + "' has type " + v.type.str());
    else if (v.type.isString() && !f.isHost())
      problem("variable '" + v.name + "' is a string outside host code");
  }
  switch (f.kind) {
  case FunctionKind::Kernel:
    if (!kernels.count(&f))
      problem("kernel is not in Program::kernels");
    if (!f.params.empty() || !f.returnType.isVoid())
      problem("a kernel has kernel parameters only and returns nothing");
    for (const KernelParam &p : f.kernelParams) {
      if (!p.type.isScalar() && !p.type.isArray())
        problem("parameter '" + p.name + "' has type " + p.type.str());
      if (p.stencil && !stencils.count(p.stencil))
        problem("parameter '" + p.name +
                "' uses a stencil outside the program");
    }
    break;
  case FunctionKind::Main:
    if (prog.main.get() != &f)
      problem("main is not Program::main");
    if (!f.params.empty() || !f.kernelParams.empty())
      problem("main has parameters");
    break;
  case FunctionKind::Fn:
  case FunctionKind::Proc:
    if (!(f.kind == FunctionKind::Fn ? fns : procs).count(&f))
      problem("function is not in its Program list");
    if (!f.kernelParams.empty())
      problem("only kernels have kernel parameters");
    break;
  }
  std::vector<unsigned> entry;
  for (unsigned slot : f.params) {
    if (slot >= f.vars.size()) {
      problem("parameter slot " + std::to_string(slot) + " does not exist");
      continue;
    }
    declare(slot, sc, entry, "parameter");
  }
  if (!f.returnType.isVoid() && !f.returnType.isScalar() &&
      !f.returnType.isArray())
    problem("return type " + f.returnType.str());
  checkBody(f.body, sc);
}

void Verifier::declare(unsigned slot, Scope &sc,
                       std::vector<unsigned> &declHere, const char *what) {
  if (slot >= sc.defined.size()) {
    problem(std::string(what) + " declares slot " + std::to_string(slot) +
            ", which does not exist");
    return;
  }
  if (sc.declared[slot])
    problem("variable '" + fn->vars[slot].name + "' (slot " +
            std::to_string(slot) + ") is declared twice");
  sc.declared[slot] = true;
  sc.defined[slot] = true;
  declHere.push_back(slot);
}

void Verifier::checkBody(const Body &b, Scope &sc) {
  std::vector<unsigned> declHere;
  for (const auto &s : b.stmts) {
    if (!s) {
      problem("null statement");
      continue;
    }
    checkStmt(*s, sc, declHere);
  }
  checkSkewGroups(b);
  checkTapeOverwrites(b);
  // Declarations go out of scope at the end of their Body.
  for (unsigned slot : declHere)
    sc.defined[slot] = false;
}

// A tape push of dats a later loop overwrites (TapeStmt::overwritten): the
// first loop after it that reaches each such dat, with only loops that do
// not and host declarations and assignments between
// (ir::firstLoopReaching), writes it at the centre (a block loop) or
// directly (a set loop) and touches it no other way (the runtime hands the
// dat's storage to the tape at that loop's prepare and copies only the
// points or elements it does not write).
void Verifier::checkTapeOverwrites(const Body &b) {
  for (size_t i = 0; i < b.stmts.size(); ++i) {
    const auto *t = b.stmts[i] ? llvm::dyn_cast<TapeStmt>(b.stmts[i].get())
                               : nullptr;
    if (!t || t->overwritten.empty())
      continue;
    if (!t->push || t->overwritten.size() != t->dats.size()) {
      problem("tape statement: overwritten flags on a pop or not one per dat");
      continue;
    }
    for (size_t k = 0; k < t->dats.size(); ++k) {
      if (!t->overwritten[k])
        continue;
      const Dat *d = t->dats[k];
      const ParLoopStmt *l = firstLoopReaching(b, i, d);
      if (!l || (l->block == nullptr) != (d->block == nullptr)) {
        problem("tape push of '" + d->name +
                "' as overwritten, but no "
                "loop over its " +
                (d->block ? "block" : "set") + " reaches it next");
        continue;
      }
      if (centreOnlyWrites(*l, d).empty())
        problem("tape push of '" + d->name + "' as overwritten, but loop '" +
                l->kernel->name + "' does not only write it " +
                (d->block ? "at the centre" : "directly"));
    }
  }
}

// Skewed groups (passes/loops/Fuse.cpp): consecutive loops over one block, the
// first marking the group's size, its rows all in the threads' own parts
// (lag, lead and trail 0); any loop may reduce (lib/exec/Skew.cpp runs a
// later one in whole chunks).
void Verifier::checkSkewGroups(const Body &b) {
  size_t members = 0; // loops of the open group still to come
  const ParLoopStmt *first = nullptr;
  for (const auto &s : b.stmts) {
    const auto *l = s ? llvm::dyn_cast<ParLoopStmt>(s.get()) : nullptr;
    if (members > 0) {
      --members;
      if (!l || !l->skew.member || l->skew.count != 0) {
        problem("skewed group of '" + first->kernel->name +
                "': a statement other than a loop of the group inside it");
        members = 0;
        continue;
      }
      if (l->block != first->block || !l->block)
        problem("skewed group of '" + first->kernel->name + "': loop '" +
                l->kernel->name + "' runs over another block");
      if (l->skew.lag < 0 || l->skew.lead < 0 || l->skew.trail < 0)
        problem("skewed loop '" + l->kernel->name +
                "' has a negative lag, lead or trail");
      continue;
    }
    if (!l || !l->skew.member)
      continue;
    if (l->skew.count < 2) {
      problem("skewed loop '" + l->kernel->name + "' outside a group");
      continue;
    }
    if (!l->block)
      problem("skewed group of '" + l->kernel->name + "' over a set");
    if (l->skew.lag || l->skew.lead || l->skew.trail)
      problem("the first loop of skewed group '" + l->kernel->name +
              "' has a lag, lead or trail");
    first = l;
    members = l->skew.count - 1;
  }
  if (members > 0)
    problem("skewed group of '" + first->kernel->name +
            "' ends before its last loop");
}

void Verifier::expectType(const ExprPtr &e, Type t, Scope &sc,
                          const char *what) {
  if (!e)
    return;
  Type got = check(*e, sc);
  if (got != t)
    problem(std::string(what) + " " + str(*e) + " has type " + got.str() +
            ", expected " + t.str());
}

void Verifier::checkAssignTarget(const Expr &t, AssignOp op, Scope &sc) {
  const Expr *e = &t;
  while (auto *ix = dyn_cast<IndexExpr>(e)) {
    if (!ix->base) {
      problem("assignment to an index of nothing");
      return;
    }
    e = ix->base.get();
  }
  if (auto *v = dyn_cast<VarRefExpr>(e)) {
    if (validSlot(int(v->slot)) && !fn->vars[v->slot].isMutable)
      problem("assignment to immutable variable " + str(*v));
    return;
  }
  if (auto *a = dyn_cast<KernelArgExpr>(e)) {
    if (!fn->isKernel() || a->index >= fn->kernelParams.size())
      return; // reported by check()
    const KernelParam &p = fn->kernelParams[a->index];
    if (p.mode == AccessMode::Read)
      problem("assignment to read-only parameter " + str(*a));
    if ((p.mode == AccessMode::Inc || p.mode == AccessMode::Sum) &&
        op != AssignOp::Add && op != AssignOp::Sub)
      problem("parameter " + str(*a) + " (" + accessModeName(p.mode) +
              ") is updated by '" + spelling(op) + "', expected '+=' or '-='");
    if ((p.mode == AccessMode::Min || p.mode == AccessMode::Max) &&
        op != AssignOp::Set)
      problem("parameter " + str(*a) + " (" + accessModeName(p.mode) +
              ") is updated by '" + spelling(op) + "', expected '='");
    for (int64_t o : a->offset)
      if (o != 0) {
        problem("assignment to off-centre stencil point " + str(*a));
        break;
      }
    return;
  }
  problem("assignment to " + str(t) +
          ", which is not a variable, parameter "
          "or component of one");
}

void Verifier::checkStmt(const Stmt &s, Scope &sc,
                         std::vector<unsigned> &declHere) {
  switch (s.kind) {
  case StmtKind::Decl: {
    const auto &d = cast<DeclStmt>(s);
    if (!d.init)
      problem("declaration of slot " + std::to_string(d.slot) +
              " without a value");
    if (d.slot < sc.defined.size()) {
      // The initialiser is checked before the slot comes into scope:
      // `let x = x + 1` refers to an outer x, never to itself.
      expectType(d.init, fn->vars[d.slot].type, sc, "initial value");
      declare(d.slot, sc, declHere, "declaration");
    } else {
      declare(d.slot, sc, declHere, "declaration");
    }
    return;
  }
  case StmtKind::Assign: {
    const auto &a = cast<AssignStmt>(s);
    if (!a.target || !a.value) {
      problem("assignment without a target or value");
      return;
    }
    Type tt = check(*a.target, sc);
    checkAssignTarget(*a.target, a.op, sc);
    Type vt = check(*a.value, sc);
    if (tt != vt)
      problem("assignment of " + vt.str() + " " + str(*a.value) + " to " +
              tt.str() + " " + str(*a.target));
    if (a.op != AssignOp::Set && !tt.isNumeric())
      problem("compound assignment to non-numeric " + str(*a.target));
    else if (a.op != AssignOp::Set && isBitwise(binaryOpOf(a.op)) &&
             !tt.isIntegerScalar())
      problem("'" + std::string(spelling(a.op)) + "' on non-integer " +
              str(*a.target));
    return;
  }
  case StmtKind::Eval: {
    const auto &e = cast<EvalStmt>(s);
    if (!e.expr || !isa<CallExpr>(e.expr.get()))
      problem("evaluated statement is not a call");
    if (e.expr)
      check(*e.expr, sc);
    return;
  }
  case StmtKind::If: {
    const auto &i = cast<IfStmt>(s);
    expectType(i.cond, Type::scalarOf(ScalarKind::Bool), sc, "condition");
    if (!i.cond)
      problem("if without a condition");
    checkBody(i.thenBody, sc);
    checkBody(i.elseBody, sc);
    return;
  }
  case StmtKind::For: {
    const auto &l = cast<ForStmt>(s);
    if (!l.lo || !l.hi) {
      problem("for without bounds");
      return;
    }
    if (l.slot >= sc.defined.size()) {
      problem("for uses slot " + std::to_string(l.slot) +
              ", which does not exist");
      return;
    }
    Type vt = fn->vars[l.slot].type;
    if (!vt.isIntegerScalar())
      problem("for variable " + std::string("'") + fn->vars[l.slot].name +
              "' has type " + vt.str() + ", expected an integer");
    expectType(l.lo, vt, sc, "for lower bound");
    expectType(l.hi, vt, sc, "for upper bound");
    if (fn->vars[l.slot].isMutable)
      problem("for variable '" + fn->vars[l.slot].name + "' is mutable");
    std::vector<unsigned> inner;
    declare(l.slot, sc, inner, "for");
    ++sc.loopDepth;
    checkBody(l.body, sc);
    --sc.loopDepth;
    sc.defined[l.slot] = false;
    return;
  }
  case StmtKind::While: {
    const auto &w = cast<WhileStmt>(s);
    if (!w.cond)
      problem("while without a condition");
    expectType(w.cond, Type::scalarOf(ScalarKind::Bool), sc, "condition");
    ++sc.loopDepth;
    checkBody(w.body, sc);
    --sc.loopDepth;
    return;
  }
  case StmtKind::Break:
  case StmtKind::Continue:
    if (sc.loopDepth == 0)
      problem(std::string(s.kind == StmtKind::Break ? "break" : "continue") +
              " outside a loop");
    return;
  case StmtKind::Return: {
    const auto &r = cast<ReturnStmt>(s);
    if (fn->returnType.isVoid()) {
      if (r.value)
        problem("return with a value in a function returning nothing");
    } else if (!r.value) {
      problem("return without a value in a function returning " +
              fn->returnType.str());
    } else {
      expectType(r.value, fn->returnType, sc, "returned value");
    }
    return;
  }
  case StmtKind::ParLoop:
  case StmtKind::Swap:
  case StmtKind::Write:
  case StmtKind::Read:
  case StmtKind::Print:
  case StmtKind::Solve:
  case StmtKind::Adjoint:
  case StmtKind::Tangent:
  case StmtKind::Tape:
  case StmtKind::Checkpoint:
    checkHostStmt(s, sc, declHere);
    return;
  }
}

} // namespace opdc::ir::verifier
