// MinMaxDiff.cpp - Min and max reductions of active values, rewritten for
// the derivative passes into a winner search and a sum reduction.
// SPDX-License-Identifier: Apache-2.0
//
// What. `loop K over S (..., m)` with m a min reduction of a float host
// variable the derivative reaches becomes (max: the comparisons reversed)
//
//   m0 = m                                   differentiated
//   mf = m0; loop K.min over S (..., mf)     passive: the min, K's other
//                                            outputs kept local
//   w = MAX; loop K.win over S (..., mf, m0, w)
//                                            passive: w = the smallest
//                                            global index e with m_e = mf
//                                            and m_e < m0
//   s = 0; loop K.pick over S (..., w, s)    differentiated: s += (e == w ?
//                                            m_e : 0), a sum reduction
//   m = select(w == MAX, m0, s)              differentiated
//   loop K.rest over S (...)                 K's other outputs, m local
//                                            (only when K has any)
//
// where m_e is element e's own contribution: K's body run with m as a
// local starting at +inf. K.min, K.win and K.pick write nothing but their
// reductions (outputs are locals, inout parameters read-only copies), so
// they all see the inputs as K saw them; K.rest then does what K did.
//
// Why it is legal: m0 = min(m0, ...) as K's accumulation is; mf is the
// primal m; the pick is exact (adding zeros), so m keeps its value bit for
// bit; ties are broken the same way on every run (m0 first, then the
// smallest global element index: set loops number elements globally, block
// loops by their coordinates), for any thread and rank count. The
// derivatives of the sum reduction and the select are the existing ones:
// the tangent of m is that of the winner's contribution (or of m0), the
// adjoint of m goes to the winner alone. Cost: two or three more loops per
// such loop, in the derivative runs only.
#include "passes/deriv/MinMaxDiff.h"

#include "ir/IRBuilder.h"
#include "ir/IRMutator.h"

#include "llvm/Support/Casting.h"

#include <cmath>
#include <limits>

namespace opdc {

using namespace ir;
using B = IRBuilder;
using llvm::cast;

namespace {

const Type I64 = Type::scalarOf(ScalarKind::I64);
constexpr int64_t NoWinner = std::numeric_limits<int64_t>::max();

/// What a parameter of K becomes in a derived kernel.
enum class Role { Keep, ReadCopy, Local };

struct Derived {
  std::unique_ptr<Function> kernel;
  std::vector<int> newIndex; ///< K's parameter -> derived one, or -1
  std::vector<int> local;    ///< K's parameter -> local slot, or -1
};

bool isMinMax(AccessMode m) {
  return m == AccessMode::Min || m == AccessMode::Max;
}

/// K's start value of a local standing for parameter \p p.
ExprPtr startValue(const KernelParam &p) {
  if (p.mode == AccessMode::Min || p.mode == AccessMode::Max) {
    double inf = std::numeric_limits<double>::infinity();
    return B::constant(ConstValue::ofFloat(
        p.type.scalar, p.mode == AccessMode::Min ? inf : -inf));
  }
  return std::make_unique<ConstantExpr>(zeroOf(p.type));
}

Derived derive(const Function &k, const std::vector<Role> &roles,
               const std::string &name, Program &program) {
  Derived d;
  d.kernel = k.clone();
  Function &f = *d.kernel;
  f.name = name;
  for (unsigned n = 2; program.findKernel(f.name); ++n)
    f.name = name + std::to_string(n);
  std::vector<KernelParam> params;
  d.newIndex.assign(k.kernelParams.size(), -1);
  d.local.assign(k.kernelParams.size(), -1);
  for (size_t i = 0; i < k.kernelParams.size(); ++i) {
    KernelParam p = k.kernelParams[i];
    if (roles[i] != Role::Local) {
      if (roles[i] == Role::ReadCopy)
        p.mode = AccessMode::Read;
      d.newIndex[i] = int(params.size());
      params.push_back(p);
    }
    if (roles[i] != Role::Keep)
      d.local[i] = int(f.addVar(p.name, p.type, true, p.range));
  }
  struct Remap : IRMutator {
    const Derived &d;
    explicit Remap(const Derived &d) : d(d) {}
    ExprPtr mutateKernelArg(std::unique_ptr<KernelArgExpr> e) override {
      if (d.local[e->index] >= 0)
        return std::make_unique<VarRefExpr>(unsigned(d.local[e->index]),
                                            e->type, e->range);
      e->index = unsigned(d.newIndex[e->index]);
      return e;
    }
  } remap(d);
  remap.mutateBody(f.body);
  f.kernelParams = params;
  // The locals first: read copies from their parameter (at the centre),
  // the others from their mode's start value.
  Body body;
  for (size_t i = 0; i < k.kernelParams.size(); ++i) {
    if (d.local[i] < 0)
      continue;
    const KernelParam &p = k.kernelParams[i];
    ExprPtr init;
    if (roles[i] == Role::ReadCopy) {
      std::vector<int64_t> at;
      if (p.stencil)
        at.assign(p.stencil->dims, 0);
      init = std::make_unique<KernelArgExpr>(unsigned(d.newIndex[i]), p.type,
                                             std::move(at));
    } else {
      init = startValue(p);
    }
    body.stmts.push_back(B::decl(unsigned(d.local[i]), std::move(init)));
  }
  for (StmtPtr &s : f.body.stmts)
    body.stmts.push_back(std::move(s));
  f.body = std::move(body);
  return d;
}

/// The loop's arguments for the derived kernel's parameters.
std::unique_ptr<ParLoopStmt> derivedLoop(const ParLoopStmt &l, Function *k,
                                         const std::vector<Role> &roles) {
  auto out = std::make_unique<ParLoopStmt>(l.range);
  out->kernel = k;
  out->set = l.set;
  out->block = l.block;
  for (const LoopRange &r : l.ranges)
    out->ranges.push_back(r.clone());
  for (size_t i = 0; i < l.args.size(); ++i) {
    if (roles[i] == Role::Local)
      continue;
    AccessDescriptor a = l.args[i].clone();
    if (roles[i] == Role::ReadCopy)
      a.mode = AccessMode::Read;
    out->args.push_back(std::move(a));
  }
  return out;
}

/// The element's global index in a kernel over \p l's space: the element
/// number of a set loop; a block point's coordinates packed into an i64
/// (31 bits per dimension in 2D, 21 in 3D, each offset by half its range so
/// that halo points stay non-negative: distinct for coordinates within
/// +-2^30 in 2D and +-2^20 in 3D).
ExprPtr globalIndex(const ParLoopStmt &l) {
  auto coord = [](unsigned d) {
    return B::cast(ScalarKind::I64,
                   B::intrinsic(Intrinsic::Idx, exprs(B::i32(int64_t(d)))));
  };
  unsigned dims = l.block ? l.block->dims : 1;
  if (dims == 1)
    return coord(0);
  const int bits = dims == 2 ? 31 : 21;
  ExprPtr g;
  for (unsigned d = dims; d-- > 0;) {
    ExprPtr c =
        B::binary(BinaryOp::Add, coord(d), B::i64(int64_t(1) << (bits - 1)));
    g = g ? B::binary(BinaryOp::Add,
                      B::binary(BinaryOp::Mul, std::move(g),
                                B::i64(int64_t(1) << bits)),
                      std::move(c))
          : std::move(c);
  }
  return g;
}

} // namespace

int activeMinMaxArg(const ParLoopStmt &l,
                    const std::function<bool(unsigned)> &active) {
  for (size_t i = 0; i < l.args.size(); ++i) {
    const AccessDescriptor &a = l.args[i];
    if (a.kind == ArgKind::Reduction && isMinMax(a.mode) && isFloat(a.scalar) &&
        active(unsigned(a.var)))
      return int(i);
  }
  return -1;
}

std::vector<MinMaxStmt> minMaxAsSum(
    Program &program, PassContext &ctx, const ParLoopStmt &l, unsigned arg,
    const std::function<unsigned(const std::string &, Type, bool)> &newVar,
    bool declare) {
  const Function &k = *l.kernel;
  const AccessDescriptor &ma = l.args[arg];
  const KernelParam &mp = k.kernelParams[arg];
  const bool isMin = ma.mode == AccessMode::Min;
  const unsigned m = unsigned(ma.var);
  const Type mt = mp.type;
  SourceRange at = l.range;
  std::vector<MinMaxStmt> out;
  auto def = [&](unsigned slot, Type t, ExprPtr v) -> StmtPtr {
    if (declare)
      return B::decl(slot, std::move(v), at);
    return B::assign(std::make_unique<VarRefExpr>(slot, t), std::move(v),
                     AssignOp::Set, at);
  };
  auto var = [&](unsigned slot, Type t) -> ExprPtr {
    return std::make_unique<VarRefExpr>(slot, t, at);
  };
  auto ranged = [&](AccessDescriptor a) {
    a.range = ma.range;
    return a;
  };

  unsigned m0 = newVar(k.name + ".m0", mt, true);
  unsigned mf = newVar(k.name + ".mf", mt, false);
  unsigned w = newVar(k.name + ".winner", I64, false);
  unsigned s = newVar(k.name + ".picked", mt, true);

  // Roles: K.min keeps the min parameter and reads the inputs; K.win and
  // K.pick keep nothing but the inputs; K.rest drops the min parameter.
  bool others = false;
  std::vector<Role> rMin(l.args.size()), rPick(l.args.size()),
      rRest(l.args.size(), Role::Keep);
  for (size_t i = 0; i < l.args.size(); ++i) {
    AccessMode mode = k.kernelParams[i].mode;
    Role r = mode == AccessMode::Read        ? Role::Keep
             : mode == AccessMode::ReadWrite ? Role::ReadCopy
                                             : Role::Local;
    rPick[i] = r;
    rMin[i] = i == arg ? Role::Keep : r;
    if (i != arg && mode != AccessMode::Read)
      others = true;
  }
  rRest[arg] = Role::Local;

  out.push_back({def(m0, mt, var(m, mt)), true});
  // mf: the min itself, passive.
  Derived dmin = derive(k, rMin, k.name + ".min", program);
  auto lmin = derivedLoop(l, dmin.kernel.get(), rMin);
  lmin->args[unsigned(dmin.newIndex[arg])].var = int(mf);
  program.kernels.push_back(std::move(dmin.kernel));
  out.push_back({def(mf, mt, var(m0, mt)), false});
  out.push_back({std::move(lmin), false});

  // w: the winner.
  Derived dwin = derive(k, rPick, k.name + ".win", program);
  {
    Function &f = *dwin.kernel;
    unsigned pf = B::addKernelParam(f, "mf", AccessMode::Read, mt);
    unsigned p0 = B::addKernelParam(f, "m0", AccessMode::Read, mt);
    unsigned pw = B::addKernelParam(f, "w", AccessMode::Min, I64);
    ExprPtr me = B::var(f, unsigned(dwin.local[arg]));
    ExprPtr wins = B::binary(
        BinaryOp::And, B::binary(BinaryOp::Eq, me->clone(), B::arg(f, pf)),
        B::binary(isMin ? BinaryOp::Lt : BinaryOp::Gt, me->clone(),
                  B::arg(f, p0)));
    f.body.stmts.push_back(B::assign(
        B::arg(f, pw),
        B::intrinsic(Intrinsic::Min,
                     exprs(B::arg(f, pw),
                           B::intrinsic(Intrinsic::Select,
                                        exprs(std::move(wins), globalIndex(l),
                                              B::i64(NoWinner)))))));
  }
  auto lwin = derivedLoop(l, dwin.kernel.get(), rPick);
  lwin->args.push_back(ranged(B::globalRead(var(mf, mt))));
  lwin->args.push_back(ranged(B::globalRead(var(m0, mt))));
  lwin->args.push_back(ranged(B::reduction(int(w), I64, AccessMode::Min)));
  program.kernels.push_back(std::move(dwin.kernel));
  out.push_back({def(w, I64, B::i64(NoWinner)), false});
  out.push_back({std::move(lwin), false});

  // s: the winner's contribution, through a sum.
  Derived dpick = derive(k, rPick, k.name + ".pick", program);
  {
    Function &f = *dpick.kernel;
    unsigned pw = B::addKernelParam(f, "w", AccessMode::Read, I64);
    unsigned ps = B::addKernelParam(f, "s", AccessMode::Sum, mt);
    f.body.stmts.push_back(B::assign(
        B::arg(f, ps),
        B::intrinsic(
            Intrinsic::Select,
            exprs(B::binary(BinaryOp::Eq, globalIndex(l), B::arg(f, pw)),
                  B::var(f, unsigned(dpick.local[arg])),
                  std::make_unique<ConstantExpr>(zeroOf(mt)))),
        AssignOp::Add));
  }
  auto lpick = derivedLoop(l, dpick.kernel.get(), rPick);
  lpick->args.push_back(ranged(B::globalRead(var(w, I64))));
  lpick->args.push_back(ranged(B::reduction(int(s), mt, AccessMode::Sum)));
  program.kernels.push_back(std::move(dpick.kernel));
  out.push_back({def(s, mt, std::make_unique<ConstantExpr>(zeroOf(mt))), true});
  out.push_back({std::move(lpick), true});

  out.push_back(
      {B::assign(var(m, mt),
                 B::intrinsic(Intrinsic::Select,
                              exprs(B::binary(BinaryOp::Eq, var(w, I64),
                                              B::i64(NoWinner)),
                                    var(m0, mt), var(s, mt))),
                 AssignOp::Set, at),
       true});

  if (others) {
    Derived drest = derive(k, rRest, k.name + ".rest", program);
    auto lrest = derivedLoop(l, drest.kernel.get(), rRest);
    program.kernels.push_back(std::move(drest.kernel));
    out.push_back({std::move(lrest), true});
  }
  ctx.stats.add(isMin ? "min-reductions" : "max-reductions", "rewritten",
                "min/max reductions of active values rewritten");
  return out;
}

} // namespace opdc
