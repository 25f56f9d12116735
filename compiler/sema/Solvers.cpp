// Solvers.cpp - Built-in solver calls (`solve tridiagonal`, `solve cg`).
// SPDX-License-Identifier: Apache-2.0
//
// `solve tridiagonal(a, b, c, d) along D over grid[...]` runs one Thomas
// solve per line of the block along dimension D: a, b, c are the sub-,
// main and super-diagonals, d the right-hand side, overwritten with the
// solution. All four are scalar float dats on the block, of one type.
//
// `[let (iters, res) =] solve cg(apply, p -> Ap, b, x[, tol: T,
// maxiter: M, precond: diag, warn: W])` solves A x = b by conjugate gradients,
// where the proc `apply` (no parameters, no result) applies A to the dat p
// and writes the result into the dat Ap. p, Ap, b, x (and diag) are
// distinct scalar f64 dats on one set or block; x holds the initial guess
// and then the solution. `iters` (i32) and `res` (f64, ||r|| / ||b||) are
// the iteration count and the final relative residual. `warn: false`
// (a bool, default true) keeps a solve that stops at maxiter silent.
#include "sema/SemaImpl.h"

#include "llvm/Support/Casting.h"

#include <set>

namespace opdc::sema {

using namespace ast;
using llvm::dyn_cast_or_null;

namespace {
const char *const CGShape =
    "'cg' takes (OPERATOR, P -> AP, B, X) and the options 'tol: E', "
    "'maxiter: E', 'precond: DAT', 'warn: E'";
} // namespace

void Sema::checkSolve(SolveStmt &s) {
  static const char *const solvers[] = {"tridiagonal", "cg"};
  bool known = false;
  for (const char *n : solvers)
    known = known || s.solver.name == n;
  if (!known) {
    std::string msg = "unknown solver '" + s.solver.name + "'";
    for (const char *n : solvers)
      if (llvm::StringRef(s.solver.name).edit_distance(n) <=
          std::max<size_t>(1, (s.solver.name.size() + 2) / 3))
        msg += std::string("; did you mean '") + n + "'?";
    diags.error(s.solver.range, msg);
  }
  if (s.solver.name == "cg")
    return checkSolveCG(s);

  if (known && s.iters)
    diags.error(s.iters->nameRange,
                "'" + s.solver.name + "' gives no results; write 'solve " +
                    s.solver.name + "(...)' without 'let'");
  if (known && !s.along) {
    diags.error(s.solver.range, "'" + s.solver.name +
                                    "' needs 'along DIM over BLOCK' after "
                                    "its arguments");
    return;
  }
  if (known && (!s.arrows.empty() || !s.options.empty()))
    diags.error(!s.options.empty() ? s.options[0].name.range
                                   : s.args[s.arrows[0]].range,
                "'" + s.solver.name + "' takes 4 dats, without '->' or "
                "options");
  // An unknown solver's arguments are still resolved (and the let's
  // variables declared) so that later uses report nothing more.
  if (s.iters) {
    s.iters->type = Type::error();
    s.residual->type = Type::error();
    declareLocal(s.iters.get(), VarOrigin::SolveResult);
    declareLocal(s.residual.get(), VarOrigin::SolveResult);
  }
  if (!s.along)
    return;
  resolveRef(s.space, Want::Block);
  auto *block = dyn_cast_or_null<BlockDecl>(s.space.decl);
  checkRanges(s.ranges, s.hasRanges, s.space, block, s.space.range);

  std::optional<int64_t> along = foldInteger(s.along, "'along' dimension");
  if (along && block && block->dims > 0) {
    if (*along < 0 || *along >= block->dims)
      diags.error(s.along->range,
                  "'along' dimension " + std::to_string(*along) +
                      " is out of range for block '" + block->name + "' with " +
                      std::to_string(block->dims) +
                      (block->dims == 1 ? " dimension" : " dimensions"));
    else
      s.alongDim = *along;
  }

  if (known && s.args.size() != 4) {
    diags.error(s.solver.range, "'" + s.solver.name + "' takes 4 dats, found " +
                                    std::to_string(s.args.size()));
  }
  DatDecl *first = nullptr;
  for (auto &a : s.args) {
    resolveRef(a, Want::Dat);
    auto *dat = dyn_cast_or_null<DatDecl>(a.decl);
    if (!dat || !block)
      continue;
    if (dat->on.decl && dat->on.decl != block) {
      diags.error(
          a.range,
          "dat '" + dat->name + "' is on " +
              (llvm::isa<BlockDecl>(dat->on.decl) ? "block '" : "set '") +
              dat->on.name + "' but the solve is over block '" + block->name +
              "'");
      noteDeclared(dat);
      continue;
    }
    Type t = dat->elemType.resolved;
    if (t.isError())
      continue;
    if (!t.isFloatScalar()) {
      diags.error(a.range, "dat '" + dat->name + "' has element type '" +
                               t.str() + "'; '" + s.solver.name +
                               "' needs scalar 'f64' or 'f32' dats");
      noteDeclared(dat);
      continue;
    }
    if (!first) {
      first = dat;
      continue;
    }
    if (t != first->elemType.resolved)
      diags.error(a.range, "dat '" + dat->name + "' has element type '" +
                               t.str() + "' but '" + first->name + "' has '" +
                               first->elemType.resolved.str() + "'");
  }
}

void Sema::checkSolveCG(SolveStmt &s) {
  if (s.along)
    diags.error(s.along->range, "'cg' takes no 'along' clause: it solves "
                                "over the whole of its dats");
  bool shapeOk = s.args.size() == 5 && s.arrows.size() == 1 &&
                 s.arrows[0] == 1;
  if (!shapeOk)
    diags.error(s.solver.range,
                std::string(CGShape) + "; found " +
                    std::to_string(s.args.size()) + " names" +
                    (s.arrows.empty() ? " and no '->'" : ""));

  // The operator: a proc without parameters or result.
  if (!s.args.empty()) {
    NameRef &op = s.args[0];
    resolveRef(op, Want::Proc);
    if (auto *proc = dyn_cast_or_null<ProcDecl>(op.decl)) {
      if (!proc->params.empty() || proc->returnType) {
        diags.error(op.range,
                    "the operator of 'cg' must be a proc without parameters "
                    "or result (it applies the operator to the dat before "
                    "'->' and writes the dat after it); '" +
                        proc->name + "' has " +
                        (proc->params.empty() ? "a result" : "parameters"));
        noteDeclared(proc);
      }
      if (ctx.owner)
        callGraph[ctx.owner].push_back({proc, op.range});
    }
  }

  // The vectors: distinct scalar f64 dats on one set or block.
  static const char *const roles[] = {"", "P", "AP", "B", "X"};
  std::vector<DatDecl *> vecs;
  auto checkVector = [&](DatDecl *dat, SourceRange at, const char *role) {
    Type t = dat->elemType.resolved;
    if (!t.isError() && (!t.isScalar() || t.scalar != ScalarKind::F64)) {
      diags.error(at, "dat '" + dat->name + "' (" + role +
                          " of 'cg') has element type '" + t.str() +
                          "'; 'cg' needs scalar 'f64' dats");
      noteDeclared(dat);
      return;
    }
    for (DatDecl *o : vecs) {
      if (o == dat) {
        diags.error(at, "dat '" + dat->name + "' appears twice in 'cg'; P, "
                        "AP, B, X and the preconditioner must be distinct "
                        "dats");
        return;
      }
      if (o->on.decl && dat->on.decl && o->on.decl != dat->on.decl) {
        diags.error(at, "dat '" + dat->name + "' is on '" + dat->on.name +
                            "' but '" + o->name + "' is on '" + o->on.name +
                            "'; the dats of 'cg' must share one set or block");
        noteDeclared(dat);
        return;
      }
    }
    vecs.push_back(dat);
  };
  for (size_t i = 1; i < s.args.size(); ++i) {
    resolveRef(s.args[i], Want::Dat);
    if (auto *dat = dyn_cast_or_null<DatDecl>(s.args[i].decl))
      checkVector(dat, s.args[i].range, i < 5 ? roles[i] : "argument");
  }

  // Options.
  std::set<std::string> seen;
  for (SolveStmt::Option &o : s.options) {
    const std::string &n = o.name.name;
    if (o.position < s.args.size())
      diags.error(o.name.range, "option '" + n + "' must come after the "
                                "arguments of 'cg'");
    if (!seen.insert(n).second) {
      diags.error(o.name.range, "option '" + n + "' is given twice");
      continue;
    }
    if (n == "tol") {
      convert(o.value, Type::scalarOf(ScalarKind::F64), "'tol'");
    } else if (n == "maxiter") {
      convert(o.value, Type::scalarOf(ScalarKind::I32), "'maxiter'");
    } else if (n == "warn") {
      convert(o.value, Type::scalarOf(ScalarKind::Bool), "'warn'");
    } else if (n == "precond") {
      if (DatDecl *d = resolveDatExpr(o.value)) {
        s.precond = d;
        checkVector(d, o.value->range, "precond");
      }
    } else {
      std::string msg = "unknown option '" + n + "' of 'cg'";
      for (const char *k : {"tol", "maxiter", "precond", "warn"})
        if (llvm::StringRef(n).edit_distance(k) <= 2)
          msg += std::string("; did you mean '") + k + "'?";
      diags.error(o.name.range, msg + " (it takes 'tol', 'maxiter', "
                                      "'precond' and 'warn')");
      checkValue(o.value);
    }
  }

  if (s.iters) {
    s.iters->type = Type::scalarOf(ScalarKind::I32);
    s.residual->type = Type::scalarOf(ScalarKind::F64);
    declareLocal(s.iters.get(), VarOrigin::SolveResult);
    declareLocal(s.residual.get(), VarOrigin::SolveResult);
  }
}

} // namespace opdc::sema
