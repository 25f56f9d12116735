// Verifier.cpp - Checks the invariants of the Program IR.
// SPDX-License-Identifier: Apache-2.0
//
// The verifier recomputes what IR.h promises rather than trusting stored
// fields: each expression's type from its operands, each access descriptor
// from its dat/map/stencil and the kernel parameter it binds, each variable's
// scope from the statement structure. Problems are collected (up to a limit)
// so one run shows every broken invariant a pass introduced.//
// Verifier.cpp has the run and the globals; VerifierStmts.cpp functions,
// statements and loops (through ir/AccessRules.h); VerifierExprs.cpp
// expressions.
#include "ir/Verifier.h"

#include "ir/VerifierImpl.h"

#include <functional>
#include <map>

namespace opdc {
namespace ir::verifier {

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

namespace {
/// Who calls whom: per function, the fns and procs its expressions call and
/// the procs its derivative requests name.
std::map<const Function *, std::set<const Function *>>
callGraph(const Program &prog) {
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
      case StmtKind::Checkpoint: {
        const auto &c = cast<CheckpointStmt>(*s);
        ex(c.lo);
        ex(c.hi);
        ex(c.snapshots);
        collectBody(c.body, out);
        collectBody(c.reverseBody, out);
        collectBody(c.tapedBody, out);
        collectBody(c.tapedReverseBody, out);
        break;
      }
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
  return calls;
}
} // namespace

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
  std::map<const Function *, std::set<const Function *>> calls =
      callGraph(prog);
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

} // namespace ir::verifier

bool verifyIR(const ir::Program &p, std::string &why) {
  return ir::verifier::Verifier(p).run(why);
}

} // namespace opdc
