// SolveDiff.cpp - Derivatives of `solve` statements, shared by the tangent
// and adjoint passes.
// SPDX-License-Identifier: Apache-2.0
//
// What. A solve computes x = A^-1 d. Differentiating the identity A x = d
// gives A x' = d' - A' x, so
//
//   tangent   x' = A^-1 (d' - A' x)
//   adjoint   lambda = A^-T xbar;  dbar = lambda;  Abar -= lambda x^T
//             (on A's nonzeros only)
//
// Tridiagonal (row i: a_i x_{i-1} + b_i x_i + c_i x_{i+1} = d_i, a of the
// first row and c of the last unused): the tangent subtracts a'_i x_{i-1},
// b'_i x_i and c'_i x_{i+1} from d' in three loops over the solve's lines
// (the first without the first row, the last without the last row, so no
// loop reads outside the line), then solves with the primal coefficients.
// The transpose A^T is tridiagonal with sub-diagonal c_{i-1} and
// super-diagonal a_{i+1}: two loops copy the shifted coefficients into
// work dats, a solve gives lambda in place of xbar; x (needed for the
// coefficients' adjoints) is recomputed by one more solve from the restored
// right-hand side rather than kept on the tape. abar_i -= lambda_i x_{i-1},
// bbar_i -= lambda_i x_i, cbar_i -= lambda_i x_{i+1}. A diagonally dominant
// A has a diagonally dominant transpose (by columns), so Thomas without
// pivoting stays safe. The along dimension may be split across ranks: the
// shifted reads are stencil reads, exchanged like any others, and the
// solves are the distributed ones.
//
// cg (A symmetric positive definite, applied by the operator proc): the
// converged x depends on b only, so x' = A^-1 b' with x' starting from 0,
// and bbar += A^-1 xbar (A = A^T), xbar = 0 afterwards; both are cg solves
// with the primal's operator, tolerance, limit and preconditioner. They
// use the primal's work dats p and Ap, which are saved and restored around
// them so the primal state is untouched. An operator whose loops read
// active dats (A = A(k)) adds A' x: the tangent runs the operator's own
// tangent at p = x (p' = 0), which leaves A' x in Ap's tangent, and solves
// A x' = b' - A' x; the adjoint runs the operator's adjoint at p = x with
// the seed Ap-bar = -lambda, which adds -(dA/dk x)^T lambda to k's adjoint
// (x solved for again from the first guess the tape restored). The pass
// supplies the operator's derivative (it owns the machinery for procs).
// The derivative holds to the solve's tolerance, as the primal does.
//
// Why this and not differentiating the solver: the iterations' derivative
// is costly (a tape of every CG iterate), converges late, and for Thomas
// recomputes what one more solve gives directly; the identity is exact for
// the exact solve and needs the factorisation the runtime already has.
#include "passes/deriv/SolveDiff.h"

#include "passes/deriv/SolveFlow.h"

#include "ir/IRBuilder.h"
#include "ir/IRVisitor.h"
#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

namespace opdc {

using namespace ir;
using B = IRBuilder;
using llvm::cast;
using llvm::dyn_cast;

namespace {

enum Form { MulSub, ShiftCopy, AddInto, Negate };

} // namespace

bool SolveDiff::check(const SolveStmt &s, const std::set<Dat *> &active) {
  if (s.solver == SolverKind::Tridiagonal) {
    for (Dat *d : s.dats)
      if (d->scalar() != s.dats[3]->scalar()) {
        ctx.diags.error(s.range, "cannot differentiate this tridiagonal "
                                 "solve: its dats mix " +
                                     std::string(scalarName(d->scalar())) +
                                     " and " + scalarName(s.dats[3]->scalar()));
        return false;
      }
    return true;
  }
  if (!solveOperatorActive(s, active))
    return true;
  // The operator is differentiated too: it must be differentiable.
  if (const Stmt *bad = firstForbidden(s.op->body)) {
    ctx.diags.error(s.range, "cannot differentiate this cg solve: its "
                             "operator '" +
                                 s.op->name +
                                 "' reads dats the derivative "
                                 "depends on, and " +
                                 forbiddenWhat(*bad));
    ctx.diags.note(bad->range, "here");
    return false;
  }
  return true;
}

Stencil *SolveDiff::point(const std::vector<int64_t> &offset) {
  std::vector<std::vector<int64_t>> points{offset};
  for (auto &existing : program.stencils)
    if (existing->points == points)
      return existing.get();
  std::string name = prefix + ".point";
  for (int64_t o : offset)
    name += (o < 0 ? "m" : "p") + std::to_string(o < 0 ? -o : o);
  return B(program).addStencil(name, unsigned(offset.size()),
                               std::move(points));
}

Function *SolveDiff::kernel(const std::string &base, ScalarKind t,
                            const std::vector<int64_t> &offset, int form) {
  std::string name = prefix + "_" + base + "_" + scalarName(t);
  for (int64_t o : offset)
    name += (o < 0 ? "m" : "p") + std::to_string(o < 0 ? -o : o);
  Function *&k = kernels[name];
  if (k)
    return k;
  Function *f = k = B(program).addUniqueKernel(name);
  Type st = Type::scalarOf(t);
  Stencil *at = offset.empty() ? nullptr : point(offset);
  switch (form) {
  case MulSub: // c, x @ offset, y: inout -- y = y - c x(offset)
    B::addKernelParam(*f, "c", AccessMode::Read, st);
    B::addKernelParam(*f, "x", AccessMode::Read, st, at);
    B::addKernelParam(*f, "y", AccessMode::ReadWrite, st);
    f->body.stmts.push_back(B::assign(
        B::arg(*f, 2), B::binary(BinaryOp::Sub, B::arg(*f, 2),
                                 B::binary(BinaryOp::Mul, B::arg(*f, 0),
                                           B::arg(*f, 1, offset)))));
    break;
  case ShiftCopy: // x @ offset, y: out -- y = x(offset)
    B::addKernelParam(*f, "x", AccessMode::Read, st, at);
    B::addKernelParam(*f, "y", AccessMode::Write, st);
    f->body.stmts.push_back(B::assign(B::arg(*f, 1), B::arg(*f, 0, offset)));
    break;
  case Negate: // x, y: out -- y = -x
    B::addKernelParam(*f, "x", AccessMode::Read, st);
    B::addKernelParam(*f, "y", AccessMode::Write, st);
    f->body.stmts.push_back(
        B::assign(B::arg(*f, 1), B::unary(UnaryOp::Neg, B::arg(*f, 0))));
    break;
  default: // x, y: inout -- y = y + x
    B::addKernelParam(*f, "x", AccessMode::Read, st);
    B::addKernelParam(*f, "y", AccessMode::ReadWrite, st);
    f->body.stmts.push_back(B::assign(
        B::arg(*f, 1), B::binary(BinaryOp::Add, B::arg(*f, 1), B::arg(*f, 0))));
    break;
  }
  ctx.stats.add(prefix.c_str(), "solve kernels",
                "kernels made for solve derivatives");
  return k;
}

Dat *SolveDiff::work(Dat *like, const std::string &role) {
  Dat *&w = works[{like, role}];
  if (!w) {
    // Unique: the tangent and adjoint passes each make their own.
    std::string name = like->name + "." + prefix + "_" + role;
    for (unsigned n = 2; program.findDat(name); ++n)
      name = like->name + "." + prefix + "_" + role + std::to_string(n);
    w = makeDerivativeDat(program, *like, name);
    w->isDerivative = false;
    w->primal = nullptr;
  }
  return w;
}

std::vector<LoopRange> SolveDiff::lines(const SolveStmt &s) const {
  std::vector<LoopRange> out;
  if (!s.ranges.empty()) {
    for (const LoopRange &r : s.ranges)
      out.push_back(r.clone());
    return out;
  }
  // The whole block: the right-hand side's extent without halos.
  const Dat *d = s.dats[3];
  for (size_t k = 0; k < d->size.size(); ++k) {
    ScalarKind ik = d->size[k]->type.scalar;
    int64_t base = k < d->base.size() ? d->base[k] : 0;
    LoopRange r;
    r.lo = B::constant(ConstValue::ofInt(ik, base));
    r.hi = B::binary(BinaryOp::Add, d->size[k]->clone(),
                     B::constant(ConstValue::ofInt(ik, base)));
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<LoopRange> SolveDiff::rowsWithNeighbour(const SolveStmt &s,
                                                    int shift) const {
  std::vector<LoopRange> rs = lines(s);
  LoopRange &r = rs[s.along];
  ExprPtr one = B::constant(ConstValue::ofInt(r.lo->type.scalar, 1));
  if (shift < 0)
    r.lo = B::binary(BinaryOp::Add, std::move(r.lo), std::move(one));
  else if (shift > 0)
    r.hi = B::binary(BinaryOp::Sub, std::move(r.hi), std::move(one));
  return rs;
}

void SolveDiff::mulSub(const SolveStmt &s, Dat *c, Dat *x, int shift, Dat *y,
                       std::vector<StmtPtr> &out) {
  if (!c || !y)
    return;
  std::vector<int64_t> off(s.block->dims, 0);
  off[s.along] = shift;
  Function *k = kernel("tri_msub", y->scalar(), off, MulSub);
  auto l = B::loopOverBlock(k, s.block, rowsWithNeighbour(s, shift), s.range);
  l->args.push_back(B::direct(c, AccessMode::Read));
  l->args.push_back(
      B::stencil(x, k->kernelParams[1].stencil, AccessMode::Read));
  l->args.push_back(B::direct(y, AccessMode::ReadWrite));
  for (AccessDescriptor &a : l->args)
    a.range = s.range;
  out.push_back(std::move(l));
}

void SolveDiff::shiftCopy(const SolveStmt &s, Dat *x, int shift, Dat *y,
                          std::vector<StmtPtr> &out) {
  std::vector<int64_t> off(s.block->dims, 0);
  off[s.along] = shift;
  Function *k = kernel("tri_shift", y->scalar(), off, ShiftCopy);
  auto l = B::loopOverBlock(k, s.block, rowsWithNeighbour(s, shift), s.range);
  l->args.push_back(
      B::stencil(x, k->kernelParams[0].stencil, AccessMode::Read));
  l->args.push_back(B::direct(y, AccessMode::Write));
  for (AccessDescriptor &a : l->args)
    a.range = s.range;
  out.push_back(std::move(l));
}

StmtPtr SolveDiff::tridiagonal(const SolveStmt &s, Dat *a, Dat *b, Dat *c,
                               Dat *d) {
  std::unique_ptr<SolveStmt> t(cast<SolveStmt>(s.clone().release()));
  t->dats = {a, b, c, d};
  return t;
}

void SolveDiff::keepingWork(const SolveStmt &s, Dat *at,
                            const std::function<void()> &run,
                            std::vector<StmtPtr> &out) {
  Dat *p = s.dats[0], *ap = s.dats[1];
  Dat *ps = work(p, "cg_saved"), *aps = work(ap, "cg_saved");
  out.push_back(fill.loop(p, ps, s.range, true));
  out.push_back(fill.loop(ap, aps, s.range, true));
  if (at)
    out.push_back(fill.loop(at, p, s.range, true));
  run();
  out.push_back(fill.loop(ps, p, s.range, true));
  out.push_back(fill.loop(aps, ap, s.range, true));
}

void SolveDiff::cg(const SolveStmt &s, Dat *rhs, Dat *x,
                   std::vector<StmtPtr> &out) {
  keepingWork(
      s, nullptr,
      [&] {
        std::unique_ptr<SolveStmt> t(cast<SolveStmt>(s.clone().release()));
        t->dats = {s.dats[0], s.dats[1], rhs, x};
        t->itersVar = t->residualVar = -1;
        t->resultsAssigned = false;
        out.push_back(std::move(t));
      },
      out);
  ctx.stats.add(prefix.c_str(), "cg solves", "cg solves of derivatives");
}

void SolveDiff::direct(const SolveStmt &s, const char *name, int form, Dat *x,
                       Dat *y, std::vector<StmtPtr> &out) {
  Dat *like = s.dats[3];
  Function *k = kernel(name, ScalarKind::F64, {}, form);
  auto l = like->set ? B::loopOverSet(k, like->set, s.range)
                     : B::loopOverBlock(k, like->block, {}, s.range);
  l->args.push_back(B::direct(x, AccessMode::Read));
  l->args.push_back(
      B::direct(y, form == Negate ? AccessMode::Write : AccessMode::ReadWrite));
  for (AccessDescriptor &a : l->args)
    a.range = s.range;
  out.push_back(std::move(l));
}

void SolveDiff::tangent(const SolveStmt &s, const DerivOf &tangentOf,
                        const Emit &opTangent, std::vector<StmtPtr> &out) {
  Dat *tx = tangentOf(s.dats[3]);
  if (!tx)
    return;
  if (s.solver == SolverKind::CG) {
    Dat *tb = tangentOf(s.dats[2]), *tap = tangentOf(s.dats[1]);
    Dat *rhs = tb;
    if (tap && opTangent) {
      // A x' = b' - A' x: the operator's tangent at p = x, p' = 0, gives
      // Ap' = A' x.
      keepingWork(
          s, s.dats[3],
          [&] {
            if (Dat *tp = tangentOf(s.dats[0]))
              out.push_back(fill.loop(nullptr, tp, s.range, true));
            opTangent(out);
          },
          out);
      rhs = work(s.dats[3], "cg_rhs");
      direct(s, "neg", Negate, tap, rhs, out);
      if (tb)
        direct(s, "add", AddInto, tb, rhs, out);
    }
    out.push_back(fill.loop(nullptr, tx, s.range, true));
    if (rhs)
      cg(s, rhs, tx, out);
    return;
  }
  Dat *x = s.dats[3];
  mulSub(s, tangentOf(s.dats[0]), x, -1, tx, out);
  mulSub(s, tangentOf(s.dats[1]), x, 0, tx, out);
  mulSub(s, tangentOf(s.dats[2]), x, 1, tx, out);
  out.push_back(tridiagonal(s, s.dats[0], s.dats[1], s.dats[2], tx));
  ctx.stats.add(prefix.c_str(), "tridiagonal solves",
                "tridiagonal solves differentiated");
}

void SolveDiff::adjoint(const SolveStmt &s, const DerivOf &adjointOf,
                        const Emit &opAdjoint, std::vector<StmtPtr> &out) {
  Dat *xb = adjointOf(s.dats[3]);
  if (!xb)
    return;
  if (s.solver == SolverKind::CG) {
    Dat *bb = adjointOf(s.dats[2]), *apb = adjointOf(s.dats[1]);
    bool op = apb && opAdjoint;
    if (bb || op) {
      Dat *lambda = work(s.dats[3], "cg_lambda");
      out.push_back(fill.loop(nullptr, lambda, s.range, true));
      cg(s, xb, lambda, out);
      if (bb)
        direct(s, "add", AddInto, lambda, bb, out);
      if (op) {
        // The coefficients' adjoint: the operator's adjoint at p = x (x
        // solved for again from the restored first guess) with the seed
        // Ap-bar = -lambda.
        Dat *x = work(s.dats[3], "cg_x");
        out.push_back(fill.loop(s.dats[3], x, s.range, true));
        cg(s, s.dats[2], x, out);
        keepingWork(
            s, x,
            [&] {
              direct(s, "neg", Negate, lambda, apb, out);
              opAdjoint(out);
              out.push_back(fill.loop(nullptr, apb, s.range, true));
              if (Dat *pb = adjointOf(s.dats[0]))
                out.push_back(fill.loop(nullptr, pb, s.range, true));
            },
            out);
      }
    }
    out.push_back(fill.loop(nullptr, xb, s.range, true));
    return;
  }
  Dat *a = s.dats[0], *b = s.dats[1], *c = s.dats[2], *d = s.dats[3];
  // lambda = A^-T xbar, in xbar's place: A^T has sub-diagonal c_{i-1} and
  // super-diagonal a_{i+1}.
  Dat *at = work(a, "tri_sub_t"), *ct = work(c, "tri_super_t");
  shiftCopy(s, c, -1, at, out);
  shiftCopy(s, a, 1, ct, out);
  out.push_back(tridiagonal(s, at, b, ct, xb));
  Dat *ab = adjointOf(a), *bb = adjointOf(b), *cb = adjointOf(c);
  if (ab || bb || cb) {
    // x again, from the right-hand side the tape restored.
    Dat *x = work(d, "tri_x");
    out.push_back(fill.loop(d, x, s.range, true));
    out.push_back(tridiagonal(s, a, b, c, x));
    mulSub(s, xb, x, -1, ab, out);
    mulSub(s, xb, x, 0, bb, out);
    mulSub(s, xb, x, 1, cb, out);
  }
  ctx.stats.add(prefix.c_str(), "tridiagonal solves",
                "tridiagonal solves differentiated");
}

} // namespace opdc
