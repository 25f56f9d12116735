// AdjointLinearShares.cpp - Part of pass adjoint-linear: a reverse step's
// loop that both increments adjoint dats and sums a scalar gradient from
// the step's state, split in two.
// SPDX-License-Identifier: Apache-2.0
//
// ReverseDiff builds one adjoint kernel for what a primal loop's inputs
// receive at the centre of its stencils. In a damped Jacobi sweep
//
//   v(0, 0) = (1 - w) * u(0, 0) + w * 0.25 * (... + 0.01 * f(0, 0))
//
// differentiated with respect to f and w, that kernel increments f's
// adjoint (which reads only v.b and w) and sums w's adjoint (which reads
// u, the step's state) in one loop: the reverse step reads its state, and
// adjoint-linear keeps the time loop checkpointed even when w's gradient
// comes from a tangent (AdjointLinear.cpp). Split into
//
//   loop K.field (..., f.b: inc, ...)   K with the sum made a dead local
//   loop K.share (..., g: sum)          K with the increments made dead
//
// and after kernel-dce, run again by adjoint-linear, K.field reads neither
// u nor w's share and K.share is the scalar gradient's share alone, which
// adjoint-linear may drop.
//
// Legal because an increment is write-only in its kernel (no statement
// reads it) and a sum's variable likewise: each output of K is computed
// by the same statements from the same inputs in either loop, and the two
// write disjoint things (dats incremented, one host variable), so running
// them one after the other gives every output the same bits. Only loops
// whose every write is an increment of a scalar dat outside the step's
// state, plus one sum into a variable whose only use is `A += g` with A a
// candidate scalar gradient, are split.
#include "passes/deriv/AdjointLinearShares.h"
#include "passes/deriv/AdjointZerosImpl.h"

#include "passes/utils/BodyUtils.h"

#include "ir/IR.h"
#include "ir/IRExprs.h"
#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"

#include "llvm/Support/Casting.h"

namespace opdc {

using namespace ir;
using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;

namespace {

/// Turns parameter \p i of kernel \p k into a local variable that nothing
/// reads after the body (its writes become dead code) and the parameter
/// into an unnamed read, which kernel-dce drops with its arguments.
void deadParam(Function &k, unsigned i) {
  const Type t = k.kernelParams[i].type;
  const unsigned v = k.addVar(k.kernelParams[i].name + ".dead", t, true);
  struct M : IRMutator {
    unsigned i, v;
    ExprPtr mutateKernelArg(std::unique_ptr<KernelArgExpr> e) override {
      if (e->index != i)
        return e;
      return std::make_unique<VarRefExpr>(v, e->type, e->range);
    }
  } m;
  m.i = i;
  m.v = v;
  m.mutateFunction(k);
  k.body.stmts.insert(
      k.body.stmts.begin(),
      std::make_unique<DeclStmt>(v, std::make_unique<ConstantExpr>(zeroOf(t)),
                                 k.range));
  k.kernelParams[i].mode = AccessMode::Read;
  k.kernelParams[i].stencil = nullptr;
}

/// A copy of \p k named NAME.SUFFIX (numbered if taken), in \p program.
Function *copyKernel(Program &program, const Function &k,
                     const std::string &suffix) {
  std::unique_ptr<Function> c = k.clone();
  c->name = k.name + "." + suffix;
  for (unsigned n = 2; program.findKernel(c->name); ++n)
    c->name = k.name + "." + suffix + std::to_string(n);
  Function *out = c.get();
  program.kernels.push_back(std::move(c));
  return out;
}

/// The loop's argument for a parameter deadParam made.
void deadArg(AccessDescriptor &a) {
  if (a.kind == ArgKind::Reduction) {
    a.kind = ArgKind::GlobalRead;
    a.var = -1;
    a.value = std::make_unique<ConstantExpr>(zeroOf(Type::scalarOf(a.scalar)));
  }
  a.mode = AccessMode::Read;
  if (a.kind == ArgKind::Stencil)
    a.kind = ArgKind::Direct;
  a.stencil = nullptr;
}

} // namespace

void VarReads::visitVarRef(const VarRefExpr &e) { vars.insert(e.slot); }

void VarReads::visitParLoop(const ParLoopStmt &l) {
  IRVisitor::visitParLoop(l);
  for (const AccessDescriptor &a : l.args)
    if (a.kind == ArgKind::Reduction)
      vars.insert(unsigned(a.var));
}

void VarReads::visitAssign(const AssignStmt &a) {
  if (a.op != AssignOp::Set || !llvm::isa<VarRefExpr>(*a.target))
    visitExpr(*a.target);
  visitExpr(*a.value);
}

void VarReads::visitDecl(const DeclStmt &d) {
  if (d.init)
    visitExpr(*d.init);
}

int sumTarget(const Body &body, const Stmt *except, unsigned g,
              const std::set<unsigned> &candidates) {
  int into = -1;
  for (const StmtPtr &sp : body.stmts) {
    if (sp.get() == except)
      continue;
    VarReads r;
    r.visitStmt(*sp);
    if (!r.vars.count(g))
      continue;
    const auto *as = dyn_cast<AssignStmt>(sp.get());
    const auto *t = as ? dyn_cast<VarRefExpr>(as->target.get()) : nullptr;
    const auto *v = as ? dyn_cast<VarRefExpr>(as->value.get()) : nullptr;
    if (!t || !v || as->op != AssignOp::Add || v->slot != g ||
        !candidates.count(t->slot) || (into >= 0 && unsigned(into) != t->slot))
      return -1;
    into = int(t->slot);
  }
  return into;
}

namespace {

/// The field loop of a kept Z (adjoint-zeros: it reduced then, so
/// adjoint-zeros left it whole) split at the range of the gather before it
/// (the nearest loop over the same block whose kernel adjoint-zeros made
/// assign, `.set`), now that it no longer reduces: over that range the
/// fuse pass puts it in the gather's kernel, as adjoint-zeros does for a
/// Z that never reduced (AdjointZeros.cpp, splitKept). Returns the loops
/// over the rest of its range, to follow it (before the zero loops of
/// those slabs, which come after the share's loop).
std::vector<StmtPtr> fieldAtGather(const Body &reverse, size_t at,
                                   ParLoopStmt &field) {
  for (size_t k = at; k-- > 0;) {
    const auto *g = dyn_cast_or_null<ParLoopStmt>(reverse.stmts[k].get());
    if (!g || g->block != field.block ||
        !azeros::isAssignedKernel(g->kernel->name))
      continue;
    std::vector<LoopRange> inner;
    for (const LoopRange &r : g->ranges)
      inner.push_back(r.clone());
    return azeros::splitPointwise(field, inner);
  }
  return {};
}

} // namespace

bool splitScalarShares(Program &program, Body &reverse,
                       const std::set<const Dat *> &state,
                       const std::set<unsigned> &candidates) {
  bool changed = false;
  for (size_t i = 0; i < reverse.stmts.size(); ++i) {
    auto *l = dyn_cast_or_null<ParLoopStmt>(reverse.stmts[i].get());
    if (!l)
      continue;
    int sum = -1, g = -1;
    bool touchesState = false, incs = false, other = false;
    for (size_t j = 0; j < l->args.size(); ++j) {
      const AccessDescriptor &a = l->args[j];
      const bool st = a.usesDat() && state.count(a.dat);
      touchesState = touchesState || st;
      if (a.kind == ArgKind::Reduction) {
        other = other || sum >= 0 || a.mode != AccessMode::Sum || a.dim != 1;
        sum = int(j);
        g = a.var;
      } else if (a.kind == ArgKind::MapDirect) {
        other = true;
      } else if (a.usesDat() && modeWrites(a.mode)) {
        other = other || st || a.mode != AccessMode::Inc || a.dim != 1;
        incs = true;
      }
    }
    if (!touchesState || other || sum < 0 || !incs ||
        sumTarget(reverse, l, unsigned(g), candidates) < 0)
      continue;
    Function *field = copyKernel(program, *l->kernel, "field");
    Function *share = copyKernel(program, *l->kernel, "share");
    auto fieldLoop = l->clone();
    auto shareLoop = l->clone();
    auto &fl = cast<ParLoopStmt>(*fieldLoop);
    auto &sl = cast<ParLoopStmt>(*shareLoop);
    fl.kernel = field;
    sl.kernel = share;
    deadParam(*field, unsigned(sum));
    deadArg(fl.args[size_t(sum)]);
    for (size_t j = 0; j < l->args.size(); ++j)
      if (int(j) != sum && l->args[j].usesDat() &&
          modeWrites(l->args[j].mode)) {
        deadParam(*share, unsigned(j));
        deadArg(sl.args[j]);
      }
    std::vector<StmtPtr> rest = fieldAtGather(reverse, i, fl);
    reverse.stmts[i] = std::move(fieldLoop);
    rest.push_back(std::move(shareLoop));
    const size_t n = rest.size();
    reverse.stmts.insert(reverse.stmts.begin() + std::ptrdiff_t(i) + 1,
                         std::make_move_iterator(rest.begin()),
                         std::make_move_iterator(rest.end()));
    i += n;
    changed = true;
  }
  return changed;
}

} // namespace opdc
