// KernelAdjoint.cpp - The adjoint of a kernel (buildAdjointKernel).
// SPDX-License-Identifier: Apache-2.0
//
// Kernels are differentiated with their intermediate values recomputed
// inside the adjoint kernel, never stored between loops:
//   1. calls inlined, early returns removed, for loops with constant bounds
//      unrolled (each copy with its own variables), so every assignment
//      runs at most once per element;
//   2. every variable declared at the top (so the reverse sweep sees the
//      forward sweep's values), out, inout, inc and reduction parameters
//      become local variables (inout ones start from the primal value);
//   3. the forward sweep: the body, each assignment preceded by a copy of
//      the value it overwrites, each if's condition kept in a variable;
//   4. the reverse sweep: the statements in reverse order, each assignment
//      first restoring the overwritten value, then propagating the
//      target's adjoint into its operands (ReverseDiff::assignAdjoint); an
//      if runs the reverse of the branch the forward sweep took.
// Legal because after step 1 the body is a tree of straight-line code and
// ifs, so restoring values in reverse order gives every statement of the
// reverse sweep the primal values it had in the forward sweep.
//
// Why apart from ReverseDiff.cpp: that file is the arithmetic (the
// expressions and assignments these steps hand it); this one is the
// kernel's structure (unrolling, the two sweeps, parameters, stencils).
#include "passes/deriv/ReverseDiff.h"
#include "passes/deriv/ReverseDiffBuild.h"

#include "passes/deriv/ForwardDiff.h"
#include "passes/kernels/Inline.h"
#include "passes/utils/BodyUtils.h"

#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"
#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

#include <map>

namespace opdc {

using namespace ir;
using namespace rdiff;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

namespace {

/// Replaces references to one slot by a constant.
class SubstituteSlot : public IRMutator {
public:
  SubstituteSlot(unsigned slot, const ConstValue &v) : slot(slot), value(v) {}
  ExprPtr mutateVarRef(std::unique_ptr<VarRefExpr> e) override {
    if (e->slot == slot)
      return std::make_unique<ConstantExpr>(value, e->range);
    return e;
  }

private:
  unsigned slot;
  ConstValue value;
};

/// The slots \p b declares (let/var and for variables), recursively.
void declaredSlots(const Body &b, std::vector<unsigned> &out) {
  struct V : IRVisitor {
    std::vector<unsigned> &out;
    explicit V(std::vector<unsigned> &o) : out(o) {}
    void visitDecl(const DeclStmt &d) override {
      out.push_back(d.slot);
      IRVisitor::visitDecl(d);
    }
    void visitFor(const ForStmt &f) override {
      out.push_back(f.slot);
      IRVisitor::visitFor(f);
    }
  } v(out);
  v.visitBody(b);
}

class KernelAdjoint {
public:
  KernelAdjoint(Program &program, Function &f, const Function &primal,
                const std::vector<AdjointParamPlan> &plan, PassContext &ctx,
                const std::vector<int64_t> *shift)
      : program(program), f(f), primal(primal), plan(plan), ctx(ctx),
        rd(f, ctx.diags), shift(shift) {}
  bool build();

private:
  bool unroll(Body &b);
  // build()'s steps. The adjoint kernel's parameters: copies of the read
  // ones (\p readIndex: primal param -> copy), then the adjoints (\p
  // adjIndex: primal param -> adjoint param; -1: none).
  std::vector<KernelParam> adjointParams(std::vector<int> &readIndex,
                                         std::vector<int> &adjIndex);
  /// Tells rd where the adjoint of a read parameter's value goes: its
  /// accumulator (\p primalOfRead: read copy -> primal param); clears
  /// \p ok on a read it cannot differentiate.
  void accumulateReads(const std::vector<int> &primalOfRead, bool &ok);
  /// The reverse sweep's seeds (the adjoint arguments of what the kernel
  /// writes) and the epilogue that stores or adds the adjoints into the
  /// adjoint arguments.
  void seedsAndResults(const std::vector<int> &adjIndex,
                       std::vector<StmtPtr> &seeds,
                       std::vector<StmtPtr> &epilogue);
  /// Forward sweep of \p in into \p fwd; the reverse sweep's statements for
  /// \p in, in reverse order, into \p rev.
  void sweep(const Body &in, Body &fwd, Body &rev);
  bool error(SourceRange r, const std::string &msg) {
    ctx.diags.error(r, "cannot build the adjoint of kernel '" + primal.name +
                           "': " + msg);
    return false;
  }

  /// A parameter read off the centre of its stencil.
  bool offCentre(unsigned i) const {
    const Stencil *st = primal.kernelParams[i].stencil;
    return st && !st->isCentreOnly();
  }
  /// \p st moved by -shift (the centre when \p st is null).
  Stencil *shifted(const Stencil *st);

  Program &program;
  Function &f;
  const Function &primal;
  const std::vector<AdjointParamPlan> &plan;
  PassContext &ctx;
  ReverseDiff rd;
  const std::vector<int64_t> *shift; ///< transposed-stencil part, or null
  std::vector<int> local; ///< primal param -> local slot (-1: read param)
  std::vector<int> accum; ///< read param -> its adjoint accumulator slot
};

bool KernelAdjoint::unroll(Body &b) {
  std::vector<StmtPtr> out;
  for (StmtPtr &s : b.stmts) {
    switch (s->kind) {
    case StmtKind::While:
      return error(s->range, "it has a while loop (only for loops with "
                             "constant bounds can be differentiated in "
                             "reverse)");
    case StmtKind::Break:
    case StmtKind::Continue:
      return error(s->range, "it has a break or continue");
    case StmtKind::Return:
      continue; // a tail return of a void kernel
    case StmtKind::If: {
      auto &i = cast<IfStmt>(*s);
      if (!unroll(i.thenBody) || !unroll(i.elseBody))
        return false;
      break;
    }
    case StmtKind::For: {
      auto &l = cast<ForStmt>(*s);
      auto *lo = dyn_cast<ConstantExpr>(l.lo.get());
      auto *hi = dyn_cast<ConstantExpr>(l.hi.get());
      if (!lo || !hi)
        return error(s->range, "a for loop without constant bounds");
      int64_t a = lo->value.asInt(), z = hi->value.asInt();
      if (z - a > 4096)
        return error(s->range, "a for loop of more than 4096 iterations");
      Type it = f.vars[l.slot].type;
      for (int64_t v = a; v < z; ++v) {
        Body copy = l.body.clone();
        // Each copy gets its own variables.
        std::vector<unsigned> decl;
        declaredSlots(copy, decl);
        std::vector<unsigned> map(f.vars.size());
        for (unsigned i = 0; i < map.size(); ++i)
          map[i] = i;
        for (unsigned d : decl) {
          const Var var = f.vars[d];
          map[d] = f.addVar(var.name, var.type, var.isMutable, var.range);
        }
        remapSlots(copy, map);
        SubstituteSlot sub(l.slot, ConstValue::ofInt(it.scalar, v));
        sub.mutateBody(copy);
        if (!unroll(copy))
          return false;
        for (StmtPtr &c : copy.stmts)
          out.push_back(std::move(c));
      }
      continue;
    }
    default:
      break;
    }
    out.push_back(std::move(s));
  }
  b.stmts = std::move(out);
  return true;
}

void KernelAdjoint::sweep(const Body &in, Body &fwd, Body &rev) {
  std::vector<std::vector<StmtPtr>> revChunks;
  for (const StmtPtr &s : in.stmts) {
    std::vector<StmtPtr> r;
    switch (s->kind) {
    case StmtKind::Decl: {
      const auto &d = cast<DeclStmt>(*s);
      Type t = f.vars[d.slot].type;
      fwd.stmts.push_back(
          assign(AssignOp::Set, ref(d.slot, t), d.init->clone()));
      AssignStmt as(AssignOp::Set, ref(d.slot, t), d.init->clone(), d.range);
      rd.assignAdjoint(as, r);
      break;
    }
    case StmtKind::Assign: {
      const auto &a = cast<AssignStmt>(*s);
      Type t = a.target->type;
      unsigned save = rd.temp("adj.save", t);
      fwd.stmts.push_back(
          assign(AssignOp::Set, ref(save, t), a.target->clone()));
      fwd.stmts.push_back(s->clone());
      r.push_back(assign(AssignOp::Set, a.target->clone(), ref(save, t)));
      rd.assignAdjoint(a, r);
      break;
    }
    case StmtKind::If: {
      const auto &i = cast<IfStmt>(*s);
      Type bt = Type::scalarOf(ScalarKind::Bool);
      unsigned c = rd.temp("adj.cond", bt);
      fwd.stmts.push_back(assign(AssignOp::Set, ref(c, bt), i.cond->clone()));
      Body ft, fe, rt, re;
      sweep(i.thenBody, ft, rt);
      sweep(i.elseBody, fe, re);
      fwd.stmts.push_back(std::make_unique<IfStmt>(ref(c, bt), std::move(ft),
                                                   std::move(fe), i.range));
      r.push_back(std::make_unique<IfStmt>(ref(c, bt), std::move(rt),
                                           std::move(re), i.range));
      break;
    }
    default: // calls were inlined; anything else has no adjoint
      fwd.stmts.push_back(s->clone());
      break;
    }
    revChunks.push_back(std::move(r));
  }
  for (auto c = revChunks.rbegin(); c != revChunks.rend(); ++c)
    for (StmtPtr &s : *c)
      rev.stmts.push_back(std::move(s));
}

AccessMode adjointMode(AccessMode m, bool global) {
  switch (m) {
  case AccessMode::Read:
    return global ? AccessMode::Sum : AccessMode::Inc;
  case AccessMode::Write:
  case AccessMode::ReadWrite:
    return AccessMode::ReadWrite;
  default: // inc, sum
    return AccessMode::Read;
  }
}

Stencil *KernelAdjoint::shifted(const Stencil *st) {
  const std::vector<int64_t> &t = *shift;
  std::vector<std::vector<int64_t>> points;
  if (st)
    points = st->points;
  else
    points.push_back(std::vector<int64_t>(t.size(), 0));
  for (auto &pt : points)
    for (size_t d = 0; d < pt.size(); ++d)
      pt[d] -= t[d];
  for (auto &existing : program.stencils)
    if (existing->points == points)
      return existing.get();
  auto n = std::make_unique<Stencil>();
  n->name = (st ? st->name : std::string("centre")) + ".shift";
  for (size_t d = 0; d < t.size(); ++d)
    n->name += (t[d] < 0 ? "m" : "p") + std::to_string(t[d] < 0 ? -t[d] : t[d]);
  n->dims = unsigned(t.size());
  n->points = std::move(points);
  n->range = st ? st->range : SourceRange();
  program.stencils.push_back(std::move(n));
  return program.stencils.back().get();
}

std::vector<KernelParam>
KernelAdjoint::adjointParams(std::vector<int> &readIndex,
                             std::vector<int> &adjIndex) {
  const unsigned n = unsigned(primal.kernelParams.size());
  std::vector<KernelParam> params;
  for (unsigned i = 0; i < n; ++i) {
    KernelParam p = primal.kernelParams[i];
    if (p.mode == AccessMode::Read || p.mode == AccessMode::ReadWrite) {
      readIndex[i] = int(params.size());
      p.mode = AccessMode::Read;
      if (shift && p.stencil)
        p.stencil = shifted(p.stencil);
      params.push_back(p);
    }
  }
  for (unsigned i = 0; i < n; ++i) {
    if (!plan[i].active)
      continue;
    KernelParam p = primal.kernelParams[i];
    p.name += ".b";
    if (!shift) {
      p.mode = adjointMode(p.mode, plan[i].global);
      p.stencil = nullptr; // the adjoint lives at the centre
    } else if (p.mode == AccessMode::Read) {
      // The transposed stencil: only the off-centre reads, incremented at
      // the centre of the shifted element.
      if (!offCentre(i))
        continue;
      p.mode = AccessMode::Inc;
      p.stencil = nullptr;
    } else if (p.mode == AccessMode::Sum) {
      p.mode = AccessMode::Read;
    } else {
      // The outputs' adjoints, read where the shifted element wrote them.
      p.mode = AccessMode::Read;
      p.stencil = shifted(nullptr);
    }
    adjIndex[i] = int(params.size());
    params.push_back(p);
  }
  return params;
}

void KernelAdjoint::accumulateReads(const std::vector<int> &primalOfRead,
                                    bool &ok) {
  rd.onKernelArg = [&](const KernelArgExpr &a, const Expr *idx, ExprPtr seed,
                       std::vector<StmtPtr> &out) {
    int i = a.index < primalOfRead.size() ? primalOfRead[a.index] : -1;
    if (i < 0 || !plan[unsigned(i)].active || !ok)
      return;
    if (shift) {
      // Only the read at the shift lands on this element's centre.
      if (!offCentre(unsigned(i)))
        return;
      for (int64_t o : a.offset)
        if (o != 0)
          return;
    }
    for (int64_t o : a.offset)
      if (o != 0) {
        ctx.diags.error(a.range,
                        "cannot build the adjoint of kernel '" + primal.name +
                            "': the adjoint of a stencil read off the centre "
                            "(the transposed stencil) is not supported yet");
        ok = false;
        return;
      }
    const KernelParam &p = primal.kernelParams[unsigned(i)];
    if (accum[unsigned(i)] < 0)
      accum[unsigned(i)] = int(rd.temp(p.name + ".b", p.type));
    ExprPtr target = ref(unsigned(accum[unsigned(i)]), p.type);
    if (idx)
      out.push_back(assign(AssignOp::Add,
                           index(std::move(target), idx->clone()),
                           std::move(seed)));
    else if (!p.type.isArray())
      out.push_back(assign(AssignOp::Add, std::move(target), std::move(seed)));
    else {
      ExprPtr s = rd.bind(std::move(seed), out);
      for (unsigned c = 0; c < p.type.dim(); ++c)
        out.push_back(assign(AssignOp::Add, index(target->clone(), cint(c)),
                             index(s->clone(), cint(c))));
    }
  };
}

void KernelAdjoint::seedsAndResults(const std::vector<int> &adjIndex,
                                    std::vector<StmtPtr> &seeds,
                                    std::vector<StmtPtr> &epilogue) {
  const unsigned n = unsigned(primal.kernelParams.size());
  for (unsigned i = 0; i < n; ++i) {
    if (!plan[i].active)
      continue;
    const KernelParam &p = primal.kernelParams[i];
    if (adjIndex[i] < 0)
      continue;
    auto adjArg = [&] {
      return std::make_unique<KernelArgExpr>(unsigned(adjIndex[i]), p.type);
    };
    if (local[i] >= 0) {
      unsigned ab = rd.adjointSlot(unsigned(local[i]));
      ExprPtr seed = adjArg();
      if (shift && p.mode != AccessMode::Sum) {
        std::vector<int64_t> at(shift->size());
        for (size_t d = 0; d < at.size(); ++d)
          at[d] = -(*shift)[d];
        seed =
            std::make_unique<KernelArgExpr>(unsigned(adjIndex[i]), p.type, at);
      }
      seeds.push_back(assign(AssignOp::Set, ref(ab, p.type), std::move(seed)));
      if (!shift &&
          (p.mode == AccessMode::Write || p.mode == AccessMode::ReadWrite))
        epilogue.push_back(assign(AssignOp::Set, adjArg(), ref(ab, p.type)));
      continue;
    }
    // A read parameter: its accumulated adjoint is added to the argument.
    if (accum[i] < 0)
      continue;
    ExprPtr acc = ref(unsigned(accum[i]), p.type);
    if (!p.type.isArray())
      epilogue.push_back(assign(AssignOp::Add, adjArg(), std::move(acc)));
    else
      for (unsigned c = 0; c < p.type.dim(); ++c)
        epilogue.push_back(assign(AssignOp::Add, index(adjArg(), cint(c)),
                                  index(acc->clone(), cint(c))));
  }
}

bool KernelAdjoint::build() {
  const unsigned n = unsigned(primal.kernelParams.size());
  for (unsigned i = 0; i < n; ++i) {
    const KernelParam &p = primal.kernelParams[i];
    // The adjoint pass rewrites these first (MinMaxDiff.h).
    if (plan[i].active &&
        (p.mode == AccessMode::Min || p.mode == AccessMode::Max))
      return error(p.range, std::string("internal: the adjoint of a '") +
                                accessModeName(p.mode) +
                                "' reduction reached the kernel adjoint");
  }
  sinkAfterEarlyReturns(f.body);
  if (!returnsOnlyInTail(f.body))
    return error(primal.range, "it returns from inside a loop");
  if (!unroll(f.body))
    return false;

  // Parameters: read copies, then adjoints.
  std::vector<int> readIndex(n, -1), adjIndex(n, -1);
  std::vector<KernelParam> params = adjointParams(readIndex, adjIndex);
  // Locals for the parameters the kernel writes.
  local.assign(n, -1);
  accum.assign(n, -1);
  std::vector<StmtPtr> prologue;
  for (unsigned i = 0; i < n; ++i) {
    const KernelParam &p = primal.kernelParams[i];
    if (p.mode == AccessMode::Read)
      continue;
    local[i] = int(f.addVar(p.name, p.type, true, p.range));
  }
  // Rewrite parameter references: reads to the copies, the rest to locals.
  struct Remap : IRMutator {
    const std::vector<int> &readIndex, &local;
    const Function &f;
    const std::vector<int64_t> *shift;
    Remap(const std::vector<int> &r, const std::vector<int> &l,
          const Function &f, const std::vector<int64_t> *shift)
        : readIndex(r), local(l), f(f), shift(shift) {}
    ExprPtr mutateKernelArg(std::unique_ptr<KernelArgExpr> e) override {
      if (local[e->index] >= 0)
        return std::make_unique<VarRefExpr>(unsigned(local[e->index]), e->type,
                                            e->range);
      if (shift && !e->offset.empty())
        for (size_t d = 0; d < e->offset.size(); ++d)
          e->offset[d] -= (*shift)[d];
      e->index = unsigned(readIndex[e->index]);
      return e;
    }
  } remap(readIndex, local, f, shift);
  remap.mutateBody(f.body);
  std::vector<int> primalOfRead(params.size(), -1);
  for (unsigned i = 0; i < n; ++i)
    if (readIndex[i] >= 0)
      primalOfRead[unsigned(readIndex[i])] = int(i);
  f.kernelParams = params;

  // Every variable is declared at the top: the reverse sweep reads what the
  // forward sweep computed in any branch.
  for (Var &v : f.vars)
    v.isMutable = true;
  std::vector<unsigned> allSlots;
  for (unsigned s = 0; s < f.vars.size(); ++s)
    allSlots.push_back(s);

  bool ok = true;
  accumulateReads(primalOfRead, ok);

  // Initial values of the locals: inout parameters from the primal.
  for (unsigned i = 0; i < n; ++i) {
    if (local[i] < 0)
      continue;
    const KernelParam &p = primal.kernelParams[i];
    if (p.mode != AccessMode::ReadWrite)
      continue;
    // A block parameter is read at its element's centre (moved by the
    // shift in a transposed-stencil kernel).
    std::vector<int64_t> at;
    if (const Stencil *st = params[unsigned(readIndex[i])].stencil) {
      at.assign(st->dims, 0);
      for (size_t d = 0; shift && d < at.size(); ++d)
        at[d] = -(*shift)[d];
    }
    prologue.push_back(
        assign(AssignOp::Set, ref(unsigned(local[i]), p.type),
               std::make_unique<KernelArgExpr>(unsigned(readIndex[i]), p.type,
                                               std::move(at))));
  }
  Body fwd, rev;
  sweep(f.body, fwd, rev);
  // Seeds: the adjoints of what the kernel writes.
  std::vector<StmtPtr> seeds, epilogue;
  seedsAndResults(adjIndex, seeds, epilogue);
  if (!ok || rd.failed)
    return false;

  Body body;
  for (unsigned s : allSlots)
    body.stmts.push_back(std::make_unique<DeclStmt>(s, zero(f.vars[s].type)));
  for (StmtPtr &s : rd.takeDecls())
    body.stmts.push_back(std::move(s));
  for (auto *part : {&prologue, &fwd.stmts, &seeds, &rev.stmts, &epilogue})
    for (StmtPtr &s : *part)
      body.stmts.push_back(std::move(s));
  f.body = std::move(body);
  return true;
}

} // namespace

Function *buildAdjointKernel(Program &program, const Function &k,
                             const std::vector<AdjointParamPlan> &plan,
                             PassContext &ctx,
                             const std::vector<int64_t> *shift) {
  std::unique_ptr<Function> f = k.clone();
  std::string base = k.name + (shift ? ".bt" : ".b");
  f->name = base;
  for (unsigned n = 1; program.findKernel(f->name); ++n)
    f->name = base + std::to_string(n);
  inlineCallsIn(program, *f, ctx);
  KernelAdjoint ka(program, *f, k, plan, ctx, shift);
  if (!ka.build())
    return nullptr;
  Function *out = f.get();
  program.kernels.push_back(std::move(f));
  ctx.stats.add("adjoint", "kernels", "adjoint kernels built");
  return out;
}

} // namespace opdc
