// ExpandCG.cpp - Expand `solve cg` into loops and a host while loop.
// SPDX-License-Identifier: Apache-2.0
//
// What: `(k, res) = solve cg(@op, p -> Ap, b, x) tol T maxiter M [precond D]`
// becomes (z = r / D with a preconditioner, else z = r):
//
//   p = x; op()                                   Ap = A x
//   r = b - Ap; p = z; bb = b.b; rr = r.r; rz = r.z   one loop
//   bnorm = bb > 0 ? sqrt(bb) : 1;  res = sqrt(rr) / bnorm;  k = 0
//   while res > T && k < M {
//     op(); pAp = p.Ap                            Ap = A p
//     if !(pAp > 0) failf("<loc>: solve cg: ... not positive definite")
//     alpha = rz / pAp
//     x += alpha p; r -= alpha Ap; rr' = r.r; rz' = r.z   one loop
//     k += 1; res = sqrt(rr') / bnorm
//     beta = rz' / rz; rz = rz'; p = z + beta p   one loop
//   }
//   if !(res <= T) warnf("<loc>: solve cg did not converge ...")
//
// Why: the iteration is then loops like any others, so threads, MPI
// (halo exchanges of p before the operator's loops read it, reductions
// across ranks) and every later pass and backend handle it with nothing
// new. The dot products are loop reductions, combined in chunk order and
// then across ranks, so they are deterministic for any thread count, and
// the iteration count depends on the values only.
//
// Why it is legal: the loops touch p, r (a work dat made here, shaped like
// x, one per x dat whatever the number of solves) and x, which sema
// keeps distinct from Ap, b and D; the operator proc
// is called exactly where the algorithm applies A, and it may only change
// Ap (what else it writes is the program's business, as for any proc
// call). The result slots are declared where the solve stood.
//
// Derivatives: the pass runs after `tangent` in the default pipeline, so a
// derivative pass still sees the solve as one node (the adjoint of CG is
// CG on the same self-adjoint operator).
#include "passes/loops/ExpandCG.h"

#include "ir/IR.h"
#include "ir/IRBuilder.h"
#include "ir/IRMutator.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include "llvm/Support/Casting.h"

#include <map>

namespace opdc {

using namespace ir;
using B = IRBuilder;
using llvm::cast;
using llvm::dyn_cast;

namespace {

constexpr const char *PassName = "expand-cg";

const Type F64 = Type::scalarOf(ScalarKind::F64);
const Type I32 = Type::scalarOf(ScalarKind::I32);

/// `%` doubled, so \p s can sit in a printf format.
std::string escapePercent(const std::string &s) {
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '%')
      out += '%';
  }
  return out;
}

struct CGSolve;

class CGExpander : public IRMutator {
public:
  CGExpander(Program &p, PassContext &c) : program(p), ctx(c) {}
  std::vector<StmtPtr> mutateStmt(StmtPtr s) override;
  bool changed = false;

private:
  Program &program;
  PassContext &ctx;
  std::map<std::string, Function *> kernels; ///< by name
  std::map<Dat *, Dat *> workDats;           ///< x -> r, shared by solves

  /// The kernel \p name, built by \p build on first use. Kernel parameters
  /// are f64 scalars; \p params lists (name, mode).
  Function *
  kernel(const std::string &name,
         const std::vector<std::pair<const char *, AccessMode>> &params,
         void (*build)(Function &k, bool jacobi), bool jacobi);
  Dat *workDat(Dat *like);
  std::vector<StmtPtr> expand(SolveStmt &s);
  friend struct CGSolve;
};

Function *CGExpander::kernel(
    const std::string &base,
    const std::vector<std::pair<const char *, AccessMode>> &params,
    void (*build)(Function &k, bool jacobi), bool jacobi) {
  std::string name = base + (jacobi ? "_jacobi" : "");
  Function *&k = kernels[name];
  if (k)
    return k;
  k = B(program).addUniqueKernel(name);
  for (const auto &[pn, mode] : params)
    B::addKernelParam(*k, pn, mode, F64);
  build(*k, jacobi);
  ctx.stats.add(PassName, "kernels", "kernels created");
  return k;
}

Dat *CGExpander::workDat(Dat *like) {
  Dat *&w = workDats[like];
  if (w)
    return w;
  auto d = std::make_unique<Dat>();
  d->name = like->name + ".cg_r";
  for (unsigned n = 2; program.findDat(d->name); ++n)
    d->name = like->name + ".cg_r" + std::to_string(n);
  d->set = like->set;
  d->block = like->block;
  d->elemType = like->elemType;
  for (const ExprPtr &s : like->size)
    d->size.push_back(cloneExpr(s));
  d->haloMinus = like->haloMinus;
  d->haloPlus = like->haloPlus;
  d->base = like->base;
  d->init = DatInit::Zero;
  d->range = like->range;
  w = d.get();
  program.dats.push_back(std::move(d));
  ctx.stats.add(PassName, "dats", "work dats created");
  return w;
}

std::vector<StmtPtr> CGExpander::mutateStmt(StmtPtr s) {
  auto *solve = dyn_cast<SolveStmt>(s.get());
  if (!solve || solve->solver != SolverKind::CG)
    return IRMutator::mutateStmt(std::move(s));
  changed = true;
  ctx.stats.add(PassName, "solves", "cg solves expanded");
  return expand(*solve);
}

// Kernel bodies. Parameters are referred to by position.
ExprPtr a(const Function &k, unsigned i) { return B::arg(k, i); }
ExprPtr mul(ExprPtr x, ExprPtr y) {
  return B::binary(BinaryOp::Mul, std::move(x), std::move(y));
}
ExprPtr add(ExprPtr x, ExprPtr y) {
  return B::binary(BinaryOp::Add, std::move(x), std::move(y));
}
ExprPtr sub(ExprPtr x, ExprPtr y) {
  return B::binary(BinaryOp::Sub, std::move(x), std::move(y));
}
ExprPtr divide(ExprPtr x, ExprPtr y) {
  return B::binary(BinaryOp::Div, std::move(x), std::move(y));
}
void put(Function &k, StmtPtr s) { k.body.stmts.push_back(std::move(s)); }
/// A kernel-local `let` of \p v; returns its slot.
unsigned let(Function &k, const char *name, ExprPtr v) {
  unsigned slot = k.addVar(name, F64, false);
  put(k, B::decl(slot, std::move(v)));
  return slot;
}

// cg.copy(src, dst: out): dst = src
void buildCopy(Function &k, bool) { put(k, B::assign(a(k, 1), a(k, 0))); }

// cg.init(b, ap, [d,] r: out, p: out, bb: sum, rr: sum, rz: sum)
void buildInit(Function &k, bool jacobi) {
  unsigned o = jacobi ? 1 : 0;
  unsigned rv = let(k, "rv", sub(a(k, 0), a(k, 1)));
  unsigned z = jacobi ? let(k, "z", divide(B::var(k, rv), a(k, 2))) : rv;
  put(k, B::assign(a(k, 2 + o), B::var(k, rv)));
  put(k, B::assign(a(k, 3 + o), B::var(k, z)));
  put(k, B::assign(a(k, 4 + o), mul(a(k, 0), a(k, 0)), AssignOp::Add));
  put(k,
      B::assign(a(k, 5 + o), mul(B::var(k, rv), B::var(k, rv)), AssignOp::Add));
  put(k,
      B::assign(a(k, 6 + o), mul(B::var(k, rv), B::var(k, z)), AssignOp::Add));
}

// cg.dot(p, ap, s: sum): s += p ap
void buildDot(Function &k, bool) {
  put(k, B::assign(a(k, 2), mul(a(k, 0), a(k, 1)), AssignOp::Add));
}

// cg.update(alpha, p, ap, [d,] x: inout, r: inout, rr: sum, rz: sum)
void buildUpdate(Function &k, bool jacobi) {
  unsigned o = jacobi ? 1 : 0;
  put(k, B::assign(a(k, 3 + o), mul(a(k, 0), a(k, 1)), AssignOp::Add));
  unsigned rv = let(k, "rv", sub(a(k, 4 + o), mul(a(k, 0), a(k, 2))));
  unsigned z = jacobi ? let(k, "z", divide(B::var(k, rv), a(k, 3))) : rv;
  put(k, B::assign(a(k, 4 + o), B::var(k, rv)));
  put(k,
      B::assign(a(k, 5 + o), mul(B::var(k, rv), B::var(k, rv)), AssignOp::Add));
  put(k,
      B::assign(a(k, 6 + o), mul(B::var(k, rv), B::var(k, z)), AssignOp::Add));
}

// cg.direction(beta, r, [d,] p: inout): p = z + beta p
void buildDirection(Function &k, bool jacobi) {
  unsigned o = jacobi ? 1 : 0;
  ExprPtr z = jacobi ? divide(a(k, 1), a(k, 2)) : a(k, 1);
  put(k, B::assign(a(k, 2 + o), add(std::move(z), mul(a(k, 0), a(k, 2 + o)))));
}

/// One `solve cg` being expanded: its dats and the host variables the
/// parts of the expansion share, and the helpers that build its loops.
/// The parts run in order (start, iteration, warning), so the variables
/// are added to the function in the order they appear.
struct CGSolve {
  CGSolve(CGExpander &e, Function &fn, SolveStmt &s, Dat *r, std::string loc)
      : e(e), fn(fn), s(s), at(s.range), p(s.dats[0]), ap(s.dats[1]),
        b(s.dats[2]), x(s.dats[3]), d(s.precond), r(r), jacobi(d != nullptr),
        loc(std::move(loc)) {}

  /// tol, maxiter, the results, Ap = A x, r = b - Ap, p = z, the dots
  /// and the first residual.
  std::vector<StmtPtr> start();
  /// One iteration: Ap = A p, alpha, x and r updated, the residual, beta
  /// and the next direction.
  Body iteration();
  /// The warning when the iteration did not converge.
  StmtPtr warning();

  CGExpander &e;
  Function &fn;
  SolveStmt &s;
  SourceRange at;
  Dat *p, *ap, *b, *x, *d, *r;
  bool jacobi;
  std::string loc;
  unsigned tol = 0, maxiter = 0, k = 0, res = 0, rz = 0, bnorm = 0;
  int warnVar = -1; ///< `warn: E`'s variable, or -1

  Function *kernel(const std::string &name,
                   const std::vector<std::pair<const char *, AccessMode>> &ps,
                   void (*build)(Function &k, bool jacobi), bool jacobi) {
    return e.kernel(name, ps, build, jacobi);
  }
  std::unique_ptr<ParLoopStmt> loopOver(Function *kf) {
    std::unique_ptr<ParLoopStmt> l =
        x->set ? B::loopOverSet(kf, x->set, at)
               : B::loopOverBlock(kf, x->block, {}, at);
    return l;
  }
  AccessDescriptor dat(Dat *dd, AccessMode m) {
    AccessDescriptor a = B::direct(dd, m);
    a.range = at;
    return a;
  }
  unsigned newVar(const char *name, Type t, bool mut) {
    return fn.addVar(std::string("cg.") + name, t, mut, at);
  }
  ExprPtr var(unsigned slot) { return B::var(fn, slot, at); }
  AccessDescriptor sum(unsigned slot) {
    AccessDescriptor a = B::reduction(int(slot), F64, AccessMode::Sum);
    a.range = at;
    return a;
  }
  StmtPtr call() { return B::eval(B::call(s.op, {}, at), at); }
  ExprPtr sqrtOf(ExprPtr v) {
    return B::intrinsic(Intrinsic::Sqrt, exprs(std::move(v)), at);
  }
};

std::vector<StmtPtr> CGSolve::start() {
  std::vector<StmtPtr> out;
  tol = newVar("tol", F64, false);
  out.push_back(B::decl(tol, std::move(s.tol), at));
  maxiter = newVar("maxiter", I32, false);
  out.push_back(B::decl(maxiter, std::move(s.maxiter), at));
  // `warn: E`, evaluated once as tol and maxiter are.
  if (s.warn) {
    warnVar = int(newVar("warn", Type::scalarOf(ScalarKind::Bool), false));
    out.push_back(B::decl(unsigned(warnVar), std::move(s.warn), at));
  }
  k = s.itersVar >= 0 ? unsigned(s.itersVar) : newVar("iters", I32, true);
  res = s.residualVar >= 0 ? unsigned(s.residualVar) : newVar("res", F64, true);
  fn.vars[k].isMutable = fn.vars[res].isMutable = true;
  if (s.resultsAssigned) {
    out.push_back(B::assign(var(k), B::i32(0), AssignOp::Set, at));
    out.push_back(B::assign(var(res), B::f64(0), AssignOp::Set, at));
  } else {
    out.push_back(B::decl(k, B::i32(0), at));
    out.push_back(B::decl(res, B::f64(0), at));
  }

  // Ap = A x through p, then r = b - Ap, p = z and the three dots.
  {
    auto l = loopOver(kernel(
        "cg.copy", {{"src", AccessMode::Read}, {"dst", AccessMode::Write}},
        buildCopy, false));
    l->args.push_back(dat(x, AccessMode::Read));
    l->args.push_back(dat(p, AccessMode::Write));
    out.push_back(std::move(l));
  }
  out.push_back(call());
  unsigned bb = newVar("bb", F64, true), rr = newVar("rr", F64, true);
  rz = newVar("rz", F64, true);
  for (unsigned v : {bb, rr, rz})
    out.push_back(B::decl(v, B::f64(0), at));
  {
    std::vector<std::pair<const char *, AccessMode>> ps = {
        {"b", AccessMode::Read}, {"ap", AccessMode::Read}};
    if (jacobi)
      ps.push_back({"d", AccessMode::Read});
    for (auto pm : std::vector<std::pair<const char *, AccessMode>>{
             {"r", AccessMode::Write},
             {"p", AccessMode::Write},
             {"bb", AccessMode::Sum},
             {"rr", AccessMode::Sum},
             {"rz", AccessMode::Sum}})
      ps.push_back(pm);
    auto l = loopOver(kernel("cg.init", ps, buildInit, jacobi));
    l->args.push_back(dat(b, AccessMode::Read));
    l->args.push_back(dat(ap, AccessMode::Read));
    if (jacobi)
      l->args.push_back(dat(d, AccessMode::Read));
    l->args.push_back(dat(r, AccessMode::Write));
    l->args.push_back(dat(p, AccessMode::Write));
    l->args.push_back(sum(bb));
    l->args.push_back(sum(rr));
    l->args.push_back(sum(rz));
    out.push_back(std::move(l));
  }
  bnorm = newVar("bnorm", F64, false);
  out.push_back(B::decl(
      bnorm,
      B::intrinsic(Intrinsic::Select,
                   exprs(B::binary(BinaryOp::Gt, var(bb), B::f64(0), at),
                         sqrtOf(var(bb)), B::f64(1)),
                   at),
      at));
  out.push_back(B::assign(var(res), divide(sqrtOf(var(rr)), var(bnorm)),
                          AssignOp::Set, at));
  return out;
}

Body CGSolve::iteration() {
  Body body;
  body.stmts.push_back(call());
  unsigned pap = newVar("pap", F64, true);
  body.stmts.push_back(B::decl(pap, B::f64(0), at));
  {
    auto l = loopOver(kernel("cg.dot",
                             {{"p", AccessMode::Read},
                              {"ap", AccessMode::Read},
                              {"s", AccessMode::Sum}},
                             buildDot, false));
    l->args.push_back(dat(p, AccessMode::Read));
    l->args.push_back(dat(ap, AccessMode::Read));
    l->args.push_back(sum(pap));
    body.stmts.push_back(std::move(l));
  }
  {
    Body fail;
    fail.stmts.push_back(std::make_unique<PrintStmt>(
        true,
        loc + ": solve cg: the operator is not positive definite: p.Ap = %g "
              "<= 0 in iteration %d (cg needs a symmetric positive definite "
              "operator)",
        exprs(var(pap), B::binary(BinaryOp::Add, var(k), B::i32(1), at)), at));
    cast<PrintStmt>(*fail.stmts.back()).to = PrintTo::Error;
    body.stmts.push_back(B::ifThen(
        B::unary(UnaryOp::Not, B::binary(BinaryOp::Gt, var(pap), B::f64(0), at),
                 at),
        std::move(fail), {}, at));
  }
  unsigned alpha = newVar("alpha", F64, false);
  body.stmts.push_back(B::decl(alpha, divide(var(rz), var(pap)), at));
  unsigned rr1 = newVar("rr1", F64, true), rz1 = newVar("rz1", F64, true);
  body.stmts.push_back(B::decl(rr1, B::f64(0), at));
  body.stmts.push_back(B::decl(rz1, B::f64(0), at));
  {
    std::vector<std::pair<const char *, AccessMode>> ps = {
        {"alpha", AccessMode::Read},
        {"p", AccessMode::Read},
        {"ap", AccessMode::Read}};
    if (jacobi)
      ps.push_back({"d", AccessMode::Read});
    for (auto pm : std::vector<std::pair<const char *, AccessMode>>{
             {"x", AccessMode::ReadWrite},
             {"r", AccessMode::ReadWrite},
             {"rr", AccessMode::Sum},
             {"rz", AccessMode::Sum}})
      ps.push_back(pm);
    auto l = loopOver(kernel("cg.update", ps, buildUpdate, jacobi));
    l->args.push_back(B::globalRead(var(alpha)));
    l->args.back().range = at;
    l->args.push_back(dat(p, AccessMode::Read));
    l->args.push_back(dat(ap, AccessMode::Read));
    if (jacobi)
      l->args.push_back(dat(d, AccessMode::Read));
    l->args.push_back(dat(x, AccessMode::ReadWrite));
    l->args.push_back(dat(r, AccessMode::ReadWrite));
    l->args.push_back(sum(rr1));
    l->args.push_back(sum(rz1));
    body.stmts.push_back(std::move(l));
  }
  body.stmts.push_back(B::assign(var(k), B::i32(1), AssignOp::Add, at));
  body.stmts.push_back(B::assign(var(res), divide(sqrtOf(var(rr1)), var(bnorm)),
                                 AssignOp::Set, at));
  unsigned beta = newVar("beta", F64, false);
  body.stmts.push_back(B::decl(beta, divide(var(rz1), var(rz)), at));
  body.stmts.push_back(B::assign(var(rz), var(rz1), AssignOp::Set, at));
  {
    std::vector<std::pair<const char *, AccessMode>> ps = {
        {"beta", AccessMode::Read}, {"r", AccessMode::Read}};
    if (jacobi)
      ps.push_back({"d", AccessMode::Read});
    ps.push_back({"p", AccessMode::ReadWrite});
    auto l = loopOver(kernel("cg.direction", ps, buildDirection, jacobi));
    l->args.push_back(B::globalRead(var(beta)));
    l->args.back().range = at;
    l->args.push_back(dat(r, AccessMode::Read));
    if (jacobi)
      l->args.push_back(dat(d, AccessMode::Read));
    l->args.push_back(dat(p, AccessMode::ReadWrite));
    body.stmts.push_back(std::move(l));
  }
  return body;
}

StmtPtr CGSolve::warning() {
  // Not converged: a warning (the results say by how much).
  Body warn;
  warn.stmts.push_back(std::make_unique<PrintStmt>(
      true,
      loc + ": solve cg did not converge: relative residual %g after %d "
            "iterations (tol %g, maxiter %d)",
      exprs(var(res), var(k), var(tol), var(maxiter)), at));
  cast<PrintStmt>(*warn.stmts.back()).to = PrintTo::Warning;
  ExprPtr notConverged = B::unary(
      UnaryOp::Not, B::binary(BinaryOp::Le, var(res), var(tol), at), at);
  if (warnVar >= 0)
    notConverged = B::binary(BinaryOp::And, std::move(notConverged),
                             var(unsigned(warnVar)), at);
  return B::ifThen(std::move(notConverged), std::move(warn), {}, at);
}

std::vector<StmtPtr> CGExpander::expand(SolveStmt &s) {
  CGSolve c(*this, *currentFunction, s, workDat(s.dats[3]),
            escapePercent(ctx.diags.sources().describe(s.range.begin)));
  std::vector<StmtPtr> out = c.start();
  Body body = c.iteration();
  SourceRange at = c.at;
  out.push_back(B::whileLoop(
      B::binary(BinaryOp::And,
                B::binary(BinaryOp::Gt, c.var(c.res), c.var(c.tol), at),
                B::binary(BinaryOp::Lt, c.var(c.k), c.var(c.maxiter), at), at),
      std::move(body), at));
  out.push_back(c.warning());
  return out;
}

} // namespace

bool expandCG(Program &program, PassContext &ctx) {
  CGExpander e(program, ctx);
  for (Function *f : program.functions())
    if (f->isHost())
      e.mutateFunction(*f);
  return e.changed;
}

} // namespace opdc
