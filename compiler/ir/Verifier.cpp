// Verifier.cpp - Checks the invariants of the Program IR.
// SPDX-License-Identifier: Apache-2.0
//
// The verifier recomputes what IR.h promises rather than trusting stored
// fields: each expression's type from its operands, each access descriptor
// from its dat/map/stencil and the kernel parameter it binds, each variable's
// scope from the statement structure. Problems are collected (up to a limit)
// so one run shows every broken invariant a pass introduced.
#include "ir/Verifier.h"

#include "ir/IR.h"
#include "ir/IRPrinter.h"

#include "llvm/Support/Casting.h"

#include <functional>
#include <map>
#include <set>

namespace opdc {

using namespace ir;
using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;
using llvm::isa;

namespace {

constexpr unsigned MaxProblems = 20;

class Verifier {
public:
  explicit Verifier(const Program &p) : prog(p) {}
  bool run(std::string &why);

private:
  // Context of the statement or expression being checked.
  struct Scope {
    std::vector<bool> defined;  ///< slot -> currently in scope
    std::vector<bool> declared; ///< slot -> declared somewhere already
    unsigned loopDepth = 0;
  };

  void problem(const std::string &msg);
  std::string where() const;

  void checkGlobals();
  void checkFunction(const Function &f);
  void checkBody(const Body &b, Scope &sc);
  void checkStmt(const Stmt &s, Scope &sc, std::vector<unsigned> &declHere);
  void checkParLoop(const ParLoopStmt &l, Scope &sc);
  /// An adjoint or tangent request: its proc and arguments, each entry,
  /// the result slot.
  void checkDerivative(const DerivativeStmt &d, Scope &sc,
                       std::vector<unsigned> &declHere);
  void checkAssignTarget(const Expr &t, AssignOp op, Scope &sc);
  void checkRanges(const std::vector<LoopRange> &rs, const Block *b, Scope &sc,
                   const char *what);
  /// Declares \p slot at this point (problem if declared before).
  void declare(unsigned slot, Scope &sc, std::vector<unsigned> &declHere,
               const char *what);
  bool validSlot(int slot) const {
    return fn && slot >= 0 && unsigned(slot) < fn->vars.size();
  }

  /// Checks \p e and returns the type its operands give it.
  Type check(const Expr &e, Scope &sc);
  Type checkIntrinsic(const IntrinsicExpr &e, Scope &sc);
  void expectType(const ExprPtr &e, Type t, Scope &sc, const char *what);

  std::string str(const Expr &e) const { return exprToString(e, fn); }
  std::string name(const Dat *d) const {
    return d ? "'" + d->name + "'" : "<null>";
  }

  const Program &prog;
  const Function *fn = nullptr; ///< null while checking globals
  std::vector<std::string> problems;
  unsigned dropped = 0;

  std::set<const void *> sets, maps, blocks, stencils, dats, params, fns,
      kernels, procs;
};

void Verifier::problem(const std::string &msg) {
  if (problems.size() >= MaxProblems) {
    ++dropped;
    return;
  }
  problems.push_back(where() + msg);
}

std::string Verifier::where() const {
  if (!fn)
    return "globals: ";
  if (fn->kind == FunctionKind::Main)
    return "main: ";
  return std::string(functionKindName(fn->kind)) + " '" + fn->name + "': ";
}

bool Verifier::run(std::string &why) {
  for (const auto &x : prog.sets)
    sets.insert(x.get());
  for (const auto &x : prog.maps)
    maps.insert(x.get());
  for (const auto &x : prog.blocks)
    blocks.insert(x.get());
  for (const auto &x : prog.stencils)
    stencils.insert(x.get());
  for (const auto &x : prog.dats)
    dats.insert(x.get());
  for (const auto &x : prog.params)
    params.insert(x.get());
  for (const auto &x : prog.fns)
    fns.insert(x.get());
  for (const auto &x : prog.kernels)
    kernels.insert(x.get());
  for (const auto &x : prog.procs)
    procs.insert(x.get());

  checkGlobals();
  for (const Function *f : prog.functions())
    checkFunction(*f);
  fn = nullptr;

  // No recursion: fns and procs are expanded or called without a stack
  // discipline that kernels on GPUs could afford.
  std::map<const Function *, std::set<const Function *>> calls;
  std::function<void(const Expr &, std::set<const Function *> &)> collectExpr;
  collectExpr = [&](const Expr &e, std::set<const Function *> &out) {
    auto all = [&](const std::vector<ExprPtr> &v) {
      for (const auto &x : v)
        if (x)
          collectExpr(*x, out);
    };
    switch (e.kind) {
    case ExprKind::Call:
      out.insert(cast<CallExpr>(e).callee);
      all(cast<CallExpr>(e).args);
      break;
    case ExprKind::Unary:
      if (cast<UnaryExpr>(e).operand)
        collectExpr(*cast<UnaryExpr>(e).operand, out);
      break;
    case ExprKind::Binary:
      if (cast<BinaryExpr>(e).lhs)
        collectExpr(*cast<BinaryExpr>(e).lhs, out);
      if (cast<BinaryExpr>(e).rhs)
        collectExpr(*cast<BinaryExpr>(e).rhs, out);
      break;
    case ExprKind::Cast:
      if (cast<CastExpr>(e).operand)
        collectExpr(*cast<CastExpr>(e).operand, out);
      break;
    case ExprKind::Index:
      if (cast<IndexExpr>(e).base)
        collectExpr(*cast<IndexExpr>(e).base, out);
      if (cast<IndexExpr>(e).index)
        collectExpr(*cast<IndexExpr>(e).index, out);
      break;
    case ExprKind::Intrinsic:
      all(cast<IntrinsicExpr>(e).args);
      break;
    case ExprKind::ArrayLit:
      all(cast<ArrayLitExpr>(e).elements);
      break;
    default:
      break;
    }
  };
  std::function<void(const Body &, std::set<const Function *> &)> collectBody;
  collectBody = [&](const Body &b, std::set<const Function *> &out) {
    for (const auto &s : b.stmts) {
      auto ex = [&](const ExprPtr &e) {
        if (e)
          collectExpr(*e, out);
      };
      switch (s->kind) {
      case StmtKind::Decl:
        ex(cast<DeclStmt>(*s).init);
        break;
      case StmtKind::Assign:
        ex(cast<AssignStmt>(*s).target);
        ex(cast<AssignStmt>(*s).value);
        break;
      case StmtKind::Eval:
        ex(cast<EvalStmt>(*s).expr);
        break;
      case StmtKind::If:
        ex(cast<IfStmt>(*s).cond);
        collectBody(cast<IfStmt>(*s).thenBody, out);
        collectBody(cast<IfStmt>(*s).elseBody, out);
        break;
      case StmtKind::For:
        ex(cast<ForStmt>(*s).lo);
        ex(cast<ForStmt>(*s).hi);
        collectBody(cast<ForStmt>(*s).body, out);
        break;
      case StmtKind::While:
        ex(cast<WhileStmt>(*s).cond);
        collectBody(cast<WhileStmt>(*s).body, out);
        break;
      case StmtKind::Return:
        ex(cast<ReturnStmt>(*s).value);
        break;
      case StmtKind::Print:
        for (const auto &a : cast<PrintStmt>(*s).args)
          ex(a);
        break;
      case StmtKind::ParLoop:
        for (const auto &a : cast<ParLoopStmt>(*s).args)
          ex(a.value);
        break;
      case StmtKind::Adjoint:
      case StmtKind::Tangent:
        out.insert(cast<DerivativeStmt>(*s).proc);
        for (const auto &a : cast<DerivativeStmt>(*s).args)
          ex(a);
        break;
      default:
        break;
      }
    }
  };
  for (const Function *f : prog.functions())
    collectBody(f->body, calls[f]);
  // Depth-first search for a cycle; colours: 0 new, 1 on stack, 2 done.
  std::map<const Function *, int> colour;
  std::function<bool(const Function *)> cyclic = [&](const Function *f) {
    colour[f] = 1;
    for (const Function *g : calls[f]) {
      if (!g)
        continue;
      if (colour[g] == 1) {
        fn = nullptr;
        problems.push_back("call graph: '" + g->name +
                           "' calls itself (directly or through '" + f->name +
                           "')");
        return true;
      }
      if (colour[g] == 0 && cyclic(g))
        return true;
    }
    colour[f] = 2;
    return false;
  };
  for (const Function *f : prog.functions())
    if (colour[f] == 0 && cyclic(f))
      break;

  why.clear();
  for (const auto &p : problems)
    why += p + "\n";
  if (dropped)
    why += "... and " + std::to_string(dropped) + " more\n";
  return problems.empty();
}

//===----------------------------------------------------------------------===//
// Globals
//===----------------------------------------------------------------------===//

template <typename T>
void checkUnique(const std::vector<std::unique_ptr<T>> &v, const char *kind,
                 std::vector<std::string> &dups) {
  std::set<std::string> seen;
  for (const auto &x : v)
    if (!seen.insert(x->name).second)
      dups.push_back(std::string(kind) + " '" + x->name + "' is defined twice");
}

void Verifier::checkGlobals() {
  fn = nullptr;
  Scope none;
  std::vector<std::string> dups;
  checkUnique(prog.consts, "const", dups);
  checkUnique(prog.params, "param", dups);
  checkUnique(prog.sets, "set", dups);
  checkUnique(prog.maps, "map", dups);
  checkUnique(prog.blocks, "block", dups);
  checkUnique(prog.stencils, "stencil", dups);
  checkUnique(prog.dats, "dat", dups);
  checkUnique(prog.fns, "fn", dups);
  checkUnique(prog.kernels, "kernel", dups);
  checkUnique(prog.procs, "proc", dups);
  for (const auto &d : dups)
    problem(d);

  for (const auto &c : prog.consts)
    if (!c->value.valid() || c->value.type.isVoid())
      problem("const '" + c->name + "' has no value");
  for (const auto &p : prog.params) {
    if (!p->type.isScalar() && !p->type.isString())
      problem("param '" + p->name + "' has type " + p->type.str() +
              ", expected a scalar or str");
    if (p->defaultValue.type != p->type)
      problem("param '" + p->name + "' of type " + p->type.str() +
              " has a default of type " + p->defaultValue.type.str());
  }
  for (const auto &s : prog.sets) {
    if (bool(s->fromFile) == bool(s->size))
      problem("set '" + s->name + "' needs exactly one of a size and a file");
    expectType(s->fromFile, Type::string(), none, "set file name");
    if (s->size && !check(*s->size, none).isIntegerScalar())
      problem("set '" + s->name + "' has a non-integer size " + str(*s->size));
  }
  for (const auto &m : prog.maps) {
    if (!sets.count(m->from) || !sets.count(m->to))
      problem("map '" + m->name + "' does not go between sets of the program");
    if (m->arity < 1)
      problem("map '" + m->name + "' has arity 0");
    expectType(m->fromFile, Type::string(), none, "map file name");
  }
  for (const auto &b : prog.blocks)
    if (b->dims < 1 || b->dims > 3)
      problem("block '" + b->name + "' has " + std::to_string(b->dims) +
              " dimensions, expected 1 to 3");
  for (const auto &s : prog.stencils) {
    if (s->dims < 1 || s->dims > 3)
      problem("stencil '" + s->name + "' has " + std::to_string(s->dims) +
              " dimensions, expected 1 to 3");
    if (s->points.empty())
      problem("stencil '" + s->name + "' has no points");
    for (const auto &pt : s->points)
      if (pt.size() != s->dims)
        problem("stencil '" + s->name + "' has a point with " +
                std::to_string(pt.size()) + " offsets, expected " +
                std::to_string(s->dims));
  }
  for (const auto &d : prog.dats) {
    std::string n = name(d.get());
    if (bool(d->set) == bool(d->block))
      problem("dat " + n + " must be on exactly one set or block");
    if (d->set && !sets.count(d->set))
      problem("dat " + n + " is on a set outside the program");
    if (d->block && !blocks.count(d->block))
      problem("dat " + n + " is on a block outside the program");
    if (!d->elemType.isScalar() && !d->elemType.isArray())
      problem("dat " + n + " has element type " + d->elemType.str());
    if (d->block) {
      size_t dims = d->block->dims;
      if (d->size.size() != dims || d->haloMinus.size() != dims ||
          d->haloPlus.size() != dims || d->base.size() != dims)
        problem("dat " + n +
                " needs a size, halo and base per dimension of "
                "block '" +
                d->block->name + "'");
      for (const auto &e : d->size)
        if (!e || !check(*e, none).isIntegerScalar())
          problem("dat " + n + " has a non-integer size");
      for (size_t i = 0; i < d->haloMinus.size(); ++i)
        if (d->haloMinus[i] < 0 ||
            (i < d->haloPlus.size() && d->haloPlus[i] < 0))
          problem("dat " + n + " has a negative halo depth");
    } else if (!d->size.empty() || !d->haloMinus.empty() ||
               !d->haloPlus.empty()) {
      problem("dat " + n + " on a set has a structured size or halo");
    }
    switch (d->init) {
    case DatInit::Zero:
      break;
    case DatInit::Fill:
      if (!d->initValue) {
        problem("dat " + n + " is filled with nothing");
      } else {
        Type t = check(*d->initValue, none);
        if (t != d->elemType && t != Type::scalarOf(d->elemType.scalar))
          problem("dat " + n + " of " + d->elemType.str() +
                  " is filled with a " + t.str());
      }
      break;
    case DatInit::File:
      if (!d->initFile)
        problem("dat " + n + " is read from no file");
      expectType(d->initFile, Type::string(), none, "dat file name");
      break;
    }
    if (d->isDerivative) {
      const Dat *pr = d->primal;
      if (!pr || !dats.count(pr))
        problem("derivative dat " + n + " has no primal dat");
      else if (pr->set != d->set || pr->block != d->block ||
               pr->elemType != d->elemType)
        problem("derivative dat " + n + " differs in shape from " + name(pr));
    } else if (d->primal) {
      problem("dat " + n + " has a primal but is not a derivative");
    }
  }
}

//===----------------------------------------------------------------------===//
// Functions and statements
//===----------------------------------------------------------------------===//

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
  // Declarations go out of scope at the end of their Body.
  for (unsigned slot : declHere)
    sc.defined[slot] = false;
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
  bool host = fn && fn->isHost();
  auto hostOnly = [&](const char *what) {
    if (!host)
      problem(std::string(what) + " outside host code");
  };
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
    if (io.dats.empty())
      problem("dat I/O without dats");
    for (const Dat *d : io.dats)
      if (!dats.count(d))
        problem("dat I/O of a dat outside the program");
    if (!io.file)
      problem("dat I/O without a file");
    expectType(io.file, Type::string(), sc, "file name");
    return;
  }
  case StmtKind::Print: {
    hostOnly("print");
    const auto &p = cast<PrintStmt>(s);
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
    if (a.mode != p.mode)
      problem(an + "mode " + accessModeName(a.mode) + " differs from '" +
              p.name + "' (" + accessModeName(p.mode) + ")");
    if (a.scalar != p.type.scalar || a.dim != p.type.dim())
      problem(an + "element " + scalarName(a.scalar) + "[" +
              std::to_string(a.dim) + "] differs from '" + p.name + "' (" +
              p.type.str() + ")");
    if (a.bytes != scalarBytes(a.scalar) * a.dim)
      problem(an + std::to_string(a.bytes) + " bytes per element, expected " +
              std::to_string(scalarBytes(a.scalar) * a.dim));
    if (a.usesDat()) {
      if (!dats.count(a.dat)) {
        problem(an + "dat outside the program");
        continue;
      }
      if (a.dat->scalar() != a.scalar || a.dat->dim() != a.dim)
        problem(an + "dat " + name(a.dat) + " has elements of " +
                a.dat->elemType.str());
      if (isReduction(a.mode))
        problem(an + "dat " + name(a.dat) + " bound to a reduction");
    }
    switch (a.kind) {
    case ArgKind::Direct:
      if (l.set && a.dat->set != l.set)
        problem(an + "direct dat " + name(a.dat) + " is not on set '" +
                l.set->name + "'");
      if (l.block && a.dat->block != l.block)
        problem(an + "direct dat " + name(a.dat) + " is not on block '" +
                l.block->name + "'");
      if (p.stencil && !p.stencil->isCentreOnly())
        problem(an + "direct argument for stencil parameter '" + p.name + "'");
      break;
    case ArgKind::Indirect:
      if (!l.set) {
        problem(an + "indirect argument in a block loop");
        break;
      }
      if (!maps.count(a.map)) {
        problem(an + "map outside the program");
        break;
      }
      if (a.map->from != l.set)
        problem(an + "map '" + a.map->name + "' is not from set '" +
                l.set->name + "'");
      if (a.dat->set != a.map->to)
        problem(an + "dat " + name(a.dat) + " is not on the target of map '" +
                a.map->name + "'");
      if (a.mapIndex < 0 || unsigned(a.mapIndex) >= a.map->arity)
        problem(an + "index " + std::to_string(a.mapIndex) + " outside map '" +
                a.map->name + "' of arity " + std::to_string(a.map->arity));
      if (a.mode == AccessMode::Write || a.mode == AccessMode::ReadWrite)
        problem(an + "indirect " + accessModeName(a.mode) +
                " is not race-free");
      break;
    case ArgKind::Stencil:
      if (!l.block) {
        problem(an + "stencil argument in a set loop");
        break;
      }
      if (a.dat->block != l.block)
        problem(an + "dat " + name(a.dat) + " is not on block '" +
                l.block->name + "'");
      if (!stencils.count(a.stencil) || a.stencil != p.stencil) {
        problem(an + "stencil differs from parameter '" + p.name + "'");
        break;
      }
      if (a.stencil->dims != l.block->dims)
        problem(an + "stencil '" + a.stencil->name + "' has " +
                std::to_string(a.stencil->dims) + " dimensions, block '" +
                l.block->name + "' has " + std::to_string(l.block->dims));
      if (modeWrites(a.mode) && !a.stencil->isCentreOnly())
        problem(an + "written through off-centre stencil '" + a.stencil->name +
                "'");
      break;
    case ArgKind::MapDirect:
      if (!l.set || !maps.count(a.map)) {
        problem(an + "map argument needs a set loop and a map");
        break;
      }
      if (a.map->from != l.set)
        problem(an + "map '" + a.map->name + "' is not from set '" +
                l.set->name + "'");
      if (a.scalar != ScalarKind::I32 || a.dim != a.map->arity)
        problem(an + "map '" + a.map->name + "' is passed as " +
                scalarName(a.scalar) + "[" + std::to_string(a.dim) +
                "], expected i32[" + std::to_string(a.map->arity) + "]");
      if (a.mode != AccessMode::Read && a.mode != AccessMode::Write)
        problem(an + "map argument with mode " + accessModeName(a.mode));
      break;
    case ArgKind::GlobalRead:
      if (!a.value) {
        problem(an + "global argument without a value");
        break;
      }
      if (a.mode != AccessMode::Read)
        problem(an + "global argument with mode " + accessModeName(a.mode));
      expectType(a.value, p.type, sc, "global argument");
      break;
    case ArgKind::Reduction:
      if (!isReduction(a.mode))
        problem(an + "reduction argument with mode " + accessModeName(a.mode));
      if (!validSlot(a.var)) {
        problem(an + "reduction into slot " + std::to_string(a.var) +
                ", which does not exist");
        break;
      }
      if (!sc.defined[a.var])
        problem(an + "reduction into " + fn->vars[a.var].name +
                ", which is not in scope");
      if (!fn->vars[a.var].isMutable)
        problem(an + "reduction into immutable '" + fn->vars[a.var].name + "'");
      if (fn->vars[a.var].type != p.type)
        problem(an + "reduction variable '" + fn->vars[a.var].name +
                "' has type " + fn->vars[a.var].type.str() + ", expected " +
                p.type.str());
      break;
    }
  }
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
    problem(kw + " of '" + p.name + "' with " +
            std::to_string(d.args.size()) + " arguments, expected " +
            std::to_string(p.params.size()));
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
      problem((adjoint ? "adjoint wrt parameter " : "tangent seed for parameter ") +
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

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

Type Verifier::checkIntrinsic(const IntrinsicExpr &e, Scope &sc) {
  std::vector<Type> ts;
  for (const auto &a : e.args) {
    if (!a) {
      problem(std::string("null argument of ") + intrinsicName(e.id));
      return Type::error();
    }
    ts.push_back(check(*a, sc));
  }
  std::string n = intrinsicName(e.id);
  if (!isIRIntrinsic(e.id)) {
    problem("intrinsic " + n + " in the IR");
    return Type::error();
  }
  if (ts.size() != intrinsicArity(e.id)) {
    problem(n + " with " + std::to_string(ts.size()) + " arguments");
    return Type::error();
  }
  bool kernelCode = fn && !fn->isHost();
  switch (e.id) {
  case Intrinsic::Wtime:
    if (kernelCode || !fn)
      problem("wtime() outside host code");
    return Type::scalarOf(ScalarKind::F64);
  case Intrinsic::Idx: {
    if (!fn || !fn->isKernel())
      problem("idx() outside a kernel");
    auto *c = dyn_cast<ConstantExpr>(e.args[0].get());
    if (!c || !ts[0].isIntegerScalar() || c->value.asInt(0) < 0 ||
        c->value.asInt(0) > 2)
      problem("idx() of " + str(*e.args[0]) +
              ", expected an integer constant 0..2");
    return Type::scalarOf(ScalarKind::I32);
  }
  case Intrinsic::Select:
    if (!ts[0].isBool())
      problem("select() condition " + str(*e.args[0]) + " is " + ts[0].str());
    if (ts[1] != ts[2] || !ts[1].isScalar())
      problem("select() between " + ts[1].str() + " and " + ts[2].str());
    return ts[1];
  case Intrinsic::Abs:
  case Intrinsic::Min:
  case Intrinsic::Max:
    for (const Type &t : ts)
      if (t != ts[0] || !t.isNumeric()) {
        problem(n + "() of " + t.str() + ", expected numbers of one type");
        break;
      }
    return ts[0];
  default:
    for (const Type &t : ts)
      if (t != ts[0] || !t.isFloatScalar()) {
        problem(n + "() of " + t.str() + ", expected floats of one type");
        break;
      }
    return ts[0];
  }
}

Type Verifier::check(const Expr &e, Scope &sc) {
  bool host = !fn || fn->isHost();
  Type got = Type::error();
  auto sub = [&](const ExprPtr &x, const char *what) {
    if (!x) {
      problem(std::string("missing ") + what);
      return Type::error();
    }
    return check(*x, sc);
  };
  switch (e.kind) {
  case ExprKind::Constant: {
    const auto &c = cast<ConstantExpr>(e);
    got = c.value.type;
    if (got.isString() && !host)
      problem("string constant outside host code");
    if (got.isScalar() || got.isArray()) {
      size_t n = got.dim();
      size_t have =
          isFloat(got.scalar) ? c.value.floats.size() : c.value.ints.size();
      if (have != n)
        problem("constant of " + got.str() + " with " + std::to_string(have) +
                " components");
    } else if (!got.isString()) {
      problem("constant of type " + got.str());
    }
    break;
  }
  case ExprKind::VarRef: {
    const auto &v = cast<VarRefExpr>(e);
    if (!validSlot(int(v.slot))) {
      problem("use of slot " + std::to_string(v.slot) +
              ", which does not exist");
      return e.type;
    }
    if (!sc.defined[v.slot])
      problem("use of " + str(v) + " outside the scope of its declaration");
    got = fn->vars[v.slot].type;
    break;
  }
  case ExprKind::ParamRef: {
    const auto &p = cast<ParamRefExpr>(e);
    if (!params.count(p.param)) {
      problem("use of a param outside the program");
      return e.type;
    }
    got = p.param->type;
    if (got.isString() && !host)
      problem("string param '" + p.param->name + "' outside host code");
    break;
  }
  case ExprKind::KernelArg: {
    const auto &a = cast<KernelArgExpr>(e);
    if (!fn || !fn->isKernel()) {
      problem("kernel parameter reference outside a kernel");
      return e.type;
    }
    if (a.index >= fn->kernelParams.size()) {
      problem("use of kernel parameter " + std::to_string(a.index) +
              ", which does not exist");
      return e.type;
    }
    const KernelParam &p = fn->kernelParams[a.index];
    got = p.type;
    if (p.stencil) {
      if (a.offset.size() != p.stencil->dims)
        problem("stencil read " + str(a) + " with " +
                std::to_string(a.offset.size()) + " offsets, expected " +
                std::to_string(p.stencil->dims));
      else if (!p.stencil->contains(a.offset))
        problem("stencil read " + str(a) + " at a point not in stencil '" +
                p.stencil->name + "'");
    } else if (!a.offset.empty()) {
      problem("offset read " + str(a) + " of non-stencil parameter");
    }
    break;
  }
  case ExprKind::Unary: {
    const auto &u = cast<UnaryExpr>(e);
    Type t = sub(u.operand, "operand");
    if (u.op == UnaryOp::Neg && !t.isNumeric())
      problem("negation of " + t.str());
    if (u.op == UnaryOp::Not && !t.isBool())
      problem("'!' of " + t.str());
    got = u.op == UnaryOp::Not ? Type::scalarOf(ScalarKind::Bool) : t;
    break;
  }
  case ExprKind::Binary: {
    const auto &b = cast<BinaryExpr>(e);
    Type l = sub(b.lhs, "left operand"), r = sub(b.rhs, "right operand");
    std::string op = spelling(b.op);
    if (l != r)
      problem("operands of '" + op + "' have types " + l.str() + " and " +
              r.str() + " in " + str(b));
    else if (!l.isScalar())
      problem("operands of '" + op + "' are " + l.str());
    else if (isLogical(b.op) && !l.isBool())
      problem("operands of '" + op + "' are " + l.str() + ", expected bool");
    else if (isArithmetic(b.op) && !l.isNumeric())
      problem("operands of '" + op + "' are " + l.str());
    else if (b.op == BinaryOp::Rem && !l.isIntegerScalar())
      problem("operands of '%' are " + l.str() + ", expected integers");
    else if (isComparison(b.op) && b.op != BinaryOp::Eq &&
             b.op != BinaryOp::Ne && !l.isNumeric())
      problem("ordering of " + l.str());
    got = isComparison(b.op) || isLogical(b.op)
              ? Type::scalarOf(ScalarKind::Bool)
              : l;
    break;
  }
  case ExprKind::Cast: {
    const auto &c = cast<CastExpr>(e);
    Type t = sub(c.operand, "cast operand");
    if (!t.isScalar())
      problem("cast of " + t.str());
    got = Type::scalarOf(c.to());
    break;
  }
  case ExprKind::Index: {
    const auto &i = cast<IndexExpr>(e);
    Type bt = sub(i.base, "indexed value"), it = sub(i.index, "index");
    if (!bt.isArray()) {
      problem("index into " + bt.str() + " value");
      return e.type;
    }
    if (!it.isIntegerScalar())
      problem("index of type " + it.str());
    if (auto *c = dyn_cast_or_null<ConstantExpr>(i.index.get()))
      if (c->value.type.isIntegerScalar() &&
          (c->value.asInt(0) < 0 || c->value.asInt(0) >= bt.length))
        problem("index " + std::to_string(c->value.asInt(0)) +
                " out of bounds of " + bt.str());
    got = Type::scalarOf(bt.scalar);
    break;
  }
  case ExprKind::Intrinsic:
    got = checkIntrinsic(cast<IntrinsicExpr>(e), sc);
    break;
  case ExprKind::Call: {
    const auto &c = cast<CallExpr>(e);
    const Function *callee = c.callee;
    bool known = fns.count(callee) || procs.count(callee);
    if (!known) {
      problem("call of a function outside the program");
      return e.type;
    }
    if (callee->kind == FunctionKind::Proc && !host)
      problem("call of proc '" + callee->name + "' outside host code");
    if (c.args.size() != callee->params.size())
      problem("call of '" + callee->name + "' with " +
              std::to_string(c.args.size()) + " arguments, expected " +
              std::to_string(callee->params.size()));
    for (size_t i = 0; i < c.args.size() && i < callee->params.size(); ++i)
      expectType(c.args[i], callee->vars[callee->params[i]].type, sc,
                 "argument");
    got = callee->returnType;
    break;
  }
  case ExprKind::ArrayLit: {
    const auto &a = cast<ArrayLitExpr>(e);
    if (a.elements.empty()) {
      problem("empty array literal");
      return e.type;
    }
    Type t0 = sub(a.elements[0], "element");
    for (size_t i = 1; i < a.elements.size(); ++i)
      if (sub(a.elements[i], "element") != t0)
        problem("array literal mixes element types");
    if (!t0.isScalar())
      problem("array literal of " + t0.str());
    got = Type::arrayOf(t0.scalar, uint32_t(a.elements.size()));
    break;
  }
  case ExprKind::SizeOf: {
    const auto &s = cast<SizeOfExpr>(e);
    if (!host)
      problem("size() outside host code");
    if (bool(s.set) == bool(s.dat))
      problem("size() needs exactly one of a set and a dat");
    else if (s.set && !sets.count(s.set))
      problem("size() of a set outside the program");
    else if (s.dat && (!dats.count(s.dat) || !s.dat->block ||
                       s.dim >= s.dat->block->dims))
      problem("size() of dimension " + std::to_string(s.dim) + " of " +
              name(s.dat));
    if (!e.type.isIntegerScalar())
      problem("size() of type " + e.type.str());
    got = e.type;
    break;
  }
  }
  if (got != e.type)
    problem("expression " + str(e) + " is stored as " + e.type.str() +
            " but its operands make it " + got.str());
  return got;
}

} // namespace

bool verifyIR(const Program &p, std::string &why) {
  return Verifier(p).run(why);
}

} // namespace opdc
