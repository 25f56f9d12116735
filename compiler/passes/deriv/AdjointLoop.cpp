// AdjointLoop.cpp - The adjoint pass's loop-level transposition: the loops
// that run one loop's adjoint in the reverse sweep.
// SPDX-License-Identifier: Apache-2.0
//
// Adjoint.cpp's file comment says how each kind of argument is transposed
// and why increments through maps need no reverse halo exchange; here is
// the loop over the kernel's adjoint (ReverseDiff.h) and, for block loops,
// the transposed stencils: one loop per offset over the interior that
// every shifted range covers, then the frame around it in layers one point
// thick, each layer's shifts guarded by the point's position
// (frameLoops; docs/decisions/0470).
#include "passes/deriv/AdjointImpl.h"

#include "passes/deriv/ForwardDiff.h"
#include "passes/deriv/MinMaxDiff.h"
#include "passes/kernels/KernelDCE.h"
#include "passes/utils/BodyUtils.h"

#include "ir/AccessRules.h"
#include "ir/IRBuilder.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "support/Diagnostics.h"

#include <algorithm>
#include <optional>
#include <set>

namespace opdc::adj {

void Expansion::adjointLoop(const ParLoopStmt &l, std::vector<StmtPtr> &out) {
  const Function &k = *l.kernel;
  std::vector<AdjointParamPlan> plan(l.args.size());
  std::vector<bool> key(l.args.size() * 2, false);
  bool any = false, anyOut = false;
  for (size_t i = 0; i < l.args.size(); ++i) {
    const AccessDescriptor &a = l.args[i];
    bool act = false;
    if (isFloat(a.scalar)) {
      if (a.usesDat())
        act = active.count(a.dat) != 0;
      else if (a.kind == ArgKind::GlobalRead)
        act = refsSlot(*a.value, activeVars);
      else if (a.kind == ArgKind::Reduction)
        act = activeVars.count(unsigned(a.var)) != 0;
    }
    plan[i].active = act;
    plan[i].global = a.kind == ArgKind::GlobalRead;
    key[2 * i] = act;
    key[2 * i + 1] = plan[i].global;
    any = any || act;
    anyOut = anyOut || (act && l.args[i].mode != AccessMode::Read);
  }
  // Nothing active written: the adjoints of the inputs get nothing.
  if (!any || !anyOut)
    return;
  // Indirect out/inout run in element order (docs/decisions/0280-...); a
  // target that several elements write would need the reverse order here.
  for (size_t i = 0; i < l.args.size(); ++i) {
    const AccessDescriptor &a = l.args[i];
    if (plan[i].active && a.kind == ArgKind::Indirect &&
        (a.mode == AccessMode::Write || a.mode == AccessMode::ReadWrite)) {
      error(l.range, "the adjoint of loop '" + k.name +
                         "' is not supported: "
                         "it writes dat '" +
                         a.dat->name + "' through map '" + a.map->name +
                         "' with '" + accessModeName(a.mode) +
                         "', and indirect out/inout are not differentiable in "
                         "reverse yet; write through the map with 'inc' into a "
                         "zeroed dat, or move the loop out of the proc");
      return;
    }
  }
  if (l.block && !transposedStencils(l, plan, key, out))
    return;
  Function *&kb = b.adjointKernels[{&k, key}];
  if (!kb)
    kb = buildAdjointKernel(b.program, k, plan, b.ctx);
  if (!kb) {
    b.ctx.diags.note(l.range, "in the adjoint of this loop");
    ok = false;
    return;
  }
  auto loop = std::make_unique<ParLoopStmt>(l.range);
  loop->kernel = kb;
  loop->set = l.set;
  loop->block = l.block;
  for (const LoopRange &r : l.ranges)
    loop->ranges.push_back(r.clone());
  for (const AccessDescriptor &a : l.args)
    if (a.mode == AccessMode::Read || a.mode == AccessMode::ReadWrite) {
      AccessDescriptor c = a.clone();
      c.mode = AccessMode::Read;
      loop->args.push_back(std::move(c));
    }
  std::vector<StmtPtr> after;
  for (size_t i = 0; i < l.args.size(); ++i) {
    if (!plan[i].active)
      continue;
    const AccessDescriptor &a = l.args[i];
    AccessDescriptor c = a.clone();
    c.mode = kb->kernelParams[loop->args.size()].mode;
    if (a.usesDat()) {
      c.dat = adjointDat(a.dat);
      if (c.kind == ArgKind::Stencil) {
        c.kind = ArgKind::Direct;
        c.stencil = nullptr;
      }
    } else if (a.kind == ArgKind::GlobalRead) {
      Type t = a.value->type;
      unsigned sum = hoist("gbl.b", t);
      out.push_back(assign(AssignOp::Set, ref(sum, t), zero(t)));
      c.kind = ArgKind::Reduction;
      c.value = nullptr;
      c.var = int(sum);
      rd.accumulate(*a.value, ref(sum, t), after);
    } else { // a sum reduction: its adjoint is read
      Type t = caller.vars[unsigned(a.var)].type;
      c.kind = ArgKind::GlobalRead;
      c.value = ref(rd.adjointSlot(unsigned(a.var)), t);
      c.var = -1;
    }
    loop->args.push_back(std::move(c));
  }
  b.ctx.stats.add(PassName, "loops", "adjoint loops");
  out.push_back(std::move(loop));
  for (StmtPtr &s : after)
    out.push_back(std::move(s));
}

bool Expansion::transposedStencils(const ParLoopStmt &l,
                                   std::vector<AdjointParamPlan> &plan,
                                   std::vector<bool> &key,
                                   std::vector<StmtPtr> &out) {
  const Function &k = *l.kernel;
  std::vector<std::vector<int64_t>> shifts;
  std::vector<size_t> off;
  for (size_t i = 0; i < l.args.size(); ++i) {
    const AccessDescriptor &a = l.args[i];
    if (!plan[i].active || a.kind != ArgKind::Stencil || !a.stencil ||
        a.stencil->isCentreOnly())
      continue;
    off.push_back(i);
    for (const auto &pt : a.stencil->points)
      if (std::find(shifts.begin(), shifts.end(), pt) == shifts.end())
        shifts.push_back(pt);
  }
  if (off.empty())
    return true;
  if (l.ranges.empty())
    return error(l.range,
                 "the adjoint of a stencil read needs the loop's range: write "
                 "it (loop " +
                     k.name + " over " + l.block->name + "[lo..hi, ...])");
  // Per shift t, the loop over R + t is cut into the interior I, the
  // points every shifted range covers, and the rest of R + t: first the
  // interior loops of all shifts, with the same range (the fuse pass makes
  // them one gather sweep), then each shift's frame. Every point still gets
  // its contributions in the order of the shifts. Bounds of other integer
  // types in one dimension keep one loop per shift over R + t.
  const size_t dims = l.ranges.size();
  std::vector<int64_t> tMin(dims, 0), tMax(dims, 0);
  bool split = shifts.size() > 1;
  for (size_t d = 0; d < dims; ++d) {
    split = split && l.ranges[d].lo->type == l.ranges[d].hi->type &&
            l.ranges[d].lo->type.isScalar();
    for (const std::vector<int64_t> &t : shifts) {
      tMin[d] = std::min(tMin[d], t[d]);
      tMax[d] = std::max(tMax[d], t[d]);
    }
  }
  std::vector<LoopRange> interior;
  if (split)
    for (size_t d = 0; d < dims; ++d) {
      // I_d = [lo + max t, max(hi + min t, lo + max t)): empty, never
      // reversed, when the range is narrower than the shifts' spread.
      ExprPtr ilo = plusConst(*l.ranges[d].lo, tMax[d]);
      ExprPtr ihi = minMax(Intrinsic::Max, plusConst(*l.ranges[d].hi, tMin[d]),
                           ilo->clone());
      interior.push_back({std::move(ilo), std::move(ihi)});
    }
  std::vector<FrameShift> frames;
  for (const std::vector<int64_t> &t : shifts) {
    std::vector<bool> tkey = key;
    for (int64_t v : t)
      for (int bit = 0; bit < 64; ++bit) // the whole offset in the key
        tkey.push_back((uint64_t(v) >> bit) & 1);
    Function *&kt = b.adjointKernels[{&k, tkey}];
    if (!kt)
      kt = buildAdjointKernel(b.program, k, plan, b.ctx, &t);
    if (!kt) {
      b.ctx.diags.note(l.range, "in the adjoint of this loop");
      ok = false;
      return false;
    }
    auto loop = std::make_unique<ParLoopStmt>(l.range);
    loop->kernel = kt;
    loop->block = l.block;
    for (const AccessDescriptor &a : l.args)
      if (a.mode == AccessMode::Read || a.mode == AccessMode::ReadWrite) {
        AccessDescriptor c = a.clone();
        c.mode = AccessMode::Read;
        const KernelParam &p = kt->kernelParams[loop->args.size()];
        if (c.usesDat() && p.stencil) {
          c.kind = ArgKind::Stencil;
          c.stencil = p.stencil;
        }
        loop->args.push_back(std::move(c));
      }
    for (size_t i = 0; i < l.args.size(); ++i) {
      const AccessDescriptor &a = l.args[i];
      if (!plan[i].active || loop->args.size() >= kt->kernelParams.size())
        continue;
      const KernelParam &p = kt->kernelParams[loop->args.size()];
      if (p.name != k.kernelParams[i].name + ".b")
        continue; // not in the shifted kernel
      AccessDescriptor c = a.clone();
      c.mode = p.mode;
      if (a.kind == ArgKind::Reduction) {
        Type vt = caller.vars[unsigned(a.var)].type;
        c.kind = ArgKind::GlobalRead;
        c.value = ref(rd.adjointSlot(unsigned(a.var)), vt);
        c.var = -1;
      } else if (p.stencil) {
        // An output's adjoint, read at -t: its halo must reach that far.
        Dat *ad = adjointDat(a.dat);
        c.dat = ad;
        c.kind = ArgKind::Stencil;
        c.stencil = p.stencil;
        for (size_t d = 0; d < t.size() && d < ad->haloMinus.size(); ++d) {
          ad->haloMinus[d] = std::max<int64_t>(ad->haloMinus[d], t[d]);
          ad->haloPlus[d] = std::max<int64_t>(ad->haloPlus[d], -t[d]);
        }
      } else {
        c.dat = adjointDat(a.dat);
        c.kind = ArgKind::Direct;
        c.stencil = nullptr;
      }
      loop->args.push_back(std::move(c));
    }
    // R + t, per dimension.
    std::vector<LoopRange> moved;
    for (size_t d = 0; d < dims; ++d)
      moved.push_back(
          {plusConst(*l.ranges[d].lo, t[d]), plusConst(*l.ranges[d].hi, t[d])});
    if (!split) {
      loop->ranges = std::move(moved);
      b.ctx.stats.add(PassName, "transposed", "transposed-stencil loops");
      out.push_back(std::move(loop));
      continue;
    }
    // (R + t) \ I: the faces' loops below, one a face and shift.
    frames.emplace_back();
    frames.back().t = &t;
    frames.back().kernel = kt;
    for (const AccessDescriptor &a : loop->args)
      frames.back().args.push_back(a.clone());
    for (size_t d = 0; d < dims; ++d)
      loop->ranges.push_back(interior[d].clone());
    b.ctx.stats.add(PassName, "transposed", "transposed-stencil loops");
    out.push_back(std::move(loop));
  }
  frameLoops(l, frames, tMin, tMax, interior, out);
  for (size_t i : off) {
    plan[i].active = false;
    key[2 * i] = false;
  }
  return true;
}

namespace {

/// The parameter an assignment writes (through components), or null.
const KernelArgExpr *writtenParam(const Expr &target) {
  const Expr *e = &target;
  while (const auto *ix = dyn_cast<IndexExpr>(e))
    e = ix->base.get();
  return dyn_cast<KernelArgExpr>(e);
}

/// The shift's kernel (as kernel-dce leaves it: its arguments are the
/// live ones) adding nothing outside R + t: `in` is `idx(d) >= lo_d + t_d`
/// where guards[d] has bit 0 and `idx(d) < hi_d + t_d` where it has bit 1, the
/// bounds (of type types[d]) read from new global parameters appended in
/// that order, and each increment of a parameter `p += e` becomes `p +=
/// select(in, e, -0.0)`: x + -0.0 is x, bit for bit, -0.0 and NaNs
/// included, so a point outside keeps its value. The rest of the body runs
/// everywhere on what the layer reads (facesReachable: within storage);
/// without a branch around the increments the element loop vectorises and
/// keeps the point's adjoint in a register across the shifts of a layer.
/// A kernel that writes a parameter otherwise, or whose values outside
/// could trap (an integer division, an index not a constant), runs whole
/// inside `if in`.
Function *guardedKernel(AdjointBuilder &b, const FrameShift &fs,
                        const std::vector<unsigned> &guards,
                        const std::vector<Type> &types) {
  const Function *kt = fs.kernel;
  std::vector<bool> key;
  for (unsigned g : guards) {
    key.push_back((g & 1) != 0);
    key.push_back((g & 2) != 0);
  }
  Function *&gk = b.adjointKernels[{kt, key}];
  if (gk)
    return gk;
  std::unique_ptr<Function> f = fs.live->clone();
  f->name = kt->name + ".f";
  for (unsigned n = 2; b.program.findKernel(f->name); ++n)
    f->name = kt->name + ".f" + std::to_string(n);
  ExprPtr cond;
  for (size_t d = 0; d < guards.size(); ++d)
    for (unsigned bit = 0; bit < 2; ++bit) {
      if (((guards[d] >> bit) & 1) == 0)
        continue;
      KernelParam p;
      p.name = std::string(bit ? "hi" : "lo") + std::to_string(d);
      p.type = types[d];
      auto pi = unsigned(f->kernelParams.size());
      f->kernelParams.push_back(p);
      ExprPtr at = IRBuilder::intrinsic(Intrinsic::Idx,
                                        exprs(IRBuilder::i32(int64_t(d))));
      if (types[d].scalar != ScalarKind::I32)
        at = IRBuilder::cast(types[d].scalar, std::move(at));
      ExprPtr c = bin(bit ? BinaryOp::Lt : BinaryOp::Ge, std::move(at),
                      std::make_unique<KernelArgExpr>(pi, types[d]));
      // select(a, b, false), not a && b: no branch between the tests.
      cond = cond ? select(std::move(cond), std::move(c),
                           IRBuilder::boolean(false))
                  : std::move(c);
    }
  struct Traps : IRVisitor {
    bool found = false;
    void visitBinary(const BinaryExpr &e) override {
      found = found || ((e.op == BinaryOp::Div || e.op == BinaryOp::Rem) &&
                        !isFloat(e.type.scalar));
      IRVisitor::visitBinary(e);
    }
    void visitIndex(const IndexExpr &e) override {
      found = found || !isa<ConstantExpr>(e.index.get());
      IRVisitor::visitIndex(e);
    }
  } traps;
  traps.visitBody(f->body);
  bool onlyIncrements = !traps.found;
  forEachBody(f->body, [&](Body &body) {
    for (const StmtPtr &s : body.stmts)
      if (const auto *a = s ? dyn_cast<AssignStmt>(s.get()) : nullptr)
        if (writtenParam(*a->target) &&
            (a->op != AssignOp::Add || !a->target->type.isScalar()))
          onlyIncrements = false;
  });
  if (!onlyIncrements) {
    Body body;
    body.stmts.push_back(std::make_unique<IfStmt>(
        std::move(cond), std::move(f->body), Body(), kt->range));
    f->body = std::move(body);
  } else {
    const Type boolT = Type::scalarOf(ScalarKind::Bool);
    unsigned in = f->addVar("in", boolT, false, kt->range);
    forEachBody(f->body, [&](Body &body) {
      for (const StmtPtr &s : body.stmts)
        if (auto *a = s ? dyn_cast<AssignStmt>(s.get()) : nullptr)
          if (writtenParam(*a->target)) {
            ScalarKind k = a->target->type.scalar;
            ExprPtr none =
                IRBuilder::constant(isFloat(k) ? ConstValue::ofFloat(k, -0.0)
                                               : ConstValue::ofInt(k, 0));
            a->value =
                select(ref(in, boolT), std::move(a->value), std::move(none));
          }
    });
    f->body.stmts.insert(f->body.stmts.begin(),
                         std::make_unique<DeclStmt>(in, std::move(cond)));
  }
  gk = f.get();
  b.program.kernels.push_back(std::move(f));
  return gk;
}

std::optional<int64_t> constBound(const Expr &e) {
  if (const auto *k = dyn_cast<ConstantExpr>(&e))
    return k->value.asInt();
  return std::nullopt;
}

/// \p e - \p size where \p e is size plus or minus constants (or both
/// are constants).
std::optional<int64_t> offsetFrom(const Expr &e, const Expr &size) {
  if (exprToString(e) == exprToString(size))
    return 0;
  std::optional<int64_t> ce = constBound(e), cs = constBound(size);
  if (ce && cs)
    return *ce - *cs;
  const auto *x = dyn_cast<BinaryExpr>(&e);
  if (!x || (x->op != BinaryOp::Add && x->op != BinaryOp::Sub))
    return std::nullopt;
  std::optional<int64_t> c = constBound(*x->rhs),
                         r = c ? offsetFrom(*x->lhs, size) : std::nullopt;
  if (!r)
    return std::nullopt;
  return *r + (x->op == BinaryOp::Add ? *c : -*c);
}

/// \p fs's kernel as kernel-dce leaves it, and which of its arguments the
/// loop still passes (kernel-dce drops the read parameters no statement
/// reads, never reordering the rest).
void liveKernel(FrameShift &fs, PassContext &ctx) {
  Program scratch;
  scratch.kernels.push_back(fs.kernel->clone());
  PassStatistics stats;
  PassContext sc{ctx.diags, stats};
  eliminateDeadKernelCode(scratch, sc);
  fs.live = std::move(scratch.kernels.front());
  std::set<std::string> names;
  for (const KernelParam &p : fs.live->kernelParams)
    names.insert(p.name);
  fs.liveArg.clear();
  for (const KernelParam &p : fs.kernel->kernelParams)
    fs.liveArg.push_back(names.count(p.name) != 0);
}

} // namespace

// Whether every stencil read of the layer loops stays within its dat's
// storage, as the runtime's halo checks (codegen/common/LoopLowering.cpp)
// want: a layer spans the box B after its dimension, and each shift's reads
// reach from all of it, further than from R + t (at points the guard then
// skips or discards). Proved
// from the bounds: R's lower bound a constant, its upper one the dat's
// size plus a constant. The guarded kernels are the shifted kernels as
// kernel-dce leaves them (liveKernel): the reads it drops do not count.
bool Expansion::facesReachable(const ParLoopStmt &l,
                               std::vector<FrameShift> &shifts,
                               const std::vector<int64_t> &tMin,
                               const std::vector<int64_t> &tMax) {
  for (FrameShift &fs : shifts) {
    liveKernel(fs, b.ctx);
    for (size_t i = 0; i < fs.args.size(); ++i) {
      const AccessDescriptor &a = fs.args[i];
      if (a.kind != ArgKind::Stencil || !a.stencil || !a.dat || !fs.liveArg[i])
        continue;
      const Dat &dat = *a.dat;
      for (size_t d = 0; d < l.ranges.size(); ++d) {
        int64_t mn = 0, mx = 0;
        for (const std::vector<int64_t> &pt : a.stencil->points) {
          mn = std::min(mn, pt[d]);
          mx = std::max(mx, pt[d]);
        }
        std::optional<int64_t> lo = constBound(*l.ranges[d].lo);
        std::optional<int64_t> hi =
            d < dat.size.size() && dat.size[d]
                ? offsetFrom(*l.ranges[d].hi, *dat.size[d])
                : std::nullopt;
        int64_t base = d < dat.base.size() ? dat.base[d] : 0;
        if (!lo || !hi || *lo + tMin[d] + mn < base - dat.haloMinus[d] ||
            *hi + tMax[d] + mx > base + dat.haloPlus[d])
          return false;
      }
    }
  }
  return true;
}

// The frame B \ I, with B the box the shifted ranges R + t cover together,
// in slabs as slabsAround cuts it (slab (d, below or above I): I in the
// dimensions before d, B after it), each slab in layers one point thick in
// d: below I the layers lo + k, above it hi + k, for tMin <= k < tMax, each
// clipped to its slab. A layer runs every shift that reaches it, in the
// order of the shifts, over the whole layer, its kernel guarded by the
// point lying in R + t (guardedKernel); the fuse pass makes them one loop a
// layer (they have one range). Where one loop a shift and slab (seven
// shifts, six slabs each in 3D: 42) swept a row's frame points once a shift,
// one body call a layer and row now adds all of a point's contributions
// (12 loops in 3D). A point gets the same contributions in the same order
// as before: those of the shifts t with the point in R + t, each a
// separate increment, shift by shift.
//
// Which guards: in d, a layer decides itself which shifts reach it
// (below I, layer lo + k lies in R + t when k >= t_d and the point is
// below hi + t, kept as a guard: a range narrower than the shifts' spread
// leaves I empty; above I, layer hi + k when k < t_d, its points at lo +
// tMax or above). In the dimensions before d, I lies in every R + t: no
// guard. After d, B: `idx >= lo + t` unless t is the least there, `idx <
// hi + t` unless it is the greatest. Bounds that are constants decide for
// themselves.
void Expansion::frameLoops(const ParLoopStmt &l,
                           std::vector<FrameShift> &shifts,
                           const std::vector<int64_t> &tMin,
                           const std::vector<int64_t> &tMax,
                           const std::vector<LoopRange> &interior,
                           std::vector<StmtPtr> &out) {
  const size_t dims = l.ranges.size();
  if (!facesReachable(l, shifts, tMin, tMax)) {
    // One loop a shift and slab of (R + t) \ I, each over R + t only.
    for (const FrameShift &fs : shifts) {
      std::vector<LoopRange> moved;
      for (size_t d = 0; d < dims; ++d)
        moved.push_back({plusConst(*l.ranges[d].lo, (*fs.t)[d]),
                         plusConst(*l.ranges[d].hi, (*fs.t)[d])});
      for (std::vector<LoopRange> &slab : slabsAround(moved, interior)) {
        auto frame = std::make_unique<ParLoopStmt>(l.range);
        frame->kernel = fs.kernel;
        frame->block = l.block;
        for (const AccessDescriptor &a : fs.args)
          frame->args.push_back(a.clone());
        frame->ranges = std::move(slab);
        b.ctx.stats.add(PassName, "transposed-frames",
                        "transposed-stencil frame loops");
        out.push_back(std::move(frame));
      }
    }
    return;
  }
  std::vector<LoopRange> box;
  for (size_t d = 0; d < dims; ++d)
    box.push_back({plusConst(*l.ranges[d].lo, tMin[d]),
                   plusConst(*l.ranges[d].hi, tMax[d])});
  for (size_t d = 0; d < dims; ++d)
    for (int side = 0; side < 2; ++side)
      for (int64_t k = tMin[d]; k < tMax[d]; ++k) {
        std::vector<LoopRange> layer;
        for (size_t e = 0; e < dims; ++e)
          if (e < d)
            layer.push_back(interior[e].clone());
          else if (e > d)
            layer.push_back(box[e].clone());
          else if (side == 0) // [lo + k, min(lo + k + 1, hi + tMax))
            layer.push_back(
                {plusConst(*l.ranges[e].lo, k),
                 minMax(Intrinsic::Min, plusConst(*l.ranges[e].lo, k + 1),
                        box[e].hi->clone())});
          else // [max(hi + k, lo + tMax), hi + k + 1)
            layer.push_back(
                {minMax(Intrinsic::Max, plusConst(*l.ranges[e].hi, k),
                        interior[e].lo->clone()),
                 plusConst(*l.ranges[e].hi, k + 1)});
        if (!provablyEmpty(layer))
          layerLoops(l, shifts, tMin, tMax, d, side, k, layer, out);
      }
}

// The loops of one layer of the frame (frameLoops): each shift that may
// reach it, its kernel guarded where the layer's position does not decide.
void Expansion::layerLoops(const ParLoopStmt &l,
                           const std::vector<FrameShift> &shifts,
                           const std::vector<int64_t> &tMin,
                           const std::vector<int64_t> &tMax, size_t d, int side,
                           int64_t k, const std::vector<LoopRange> &layer,
                           std::vector<StmtPtr> &out) {
  const size_t dims = l.ranges.size();
  std::vector<Type> types;
  for (size_t e = 0; e < dims; ++e)
    types.push_back(l.ranges[e].lo->type);
  for (const FrameShift &fs : shifts) {
    const std::vector<int64_t> &t = *fs.t;
    if (side == 0 ? k < t[d] : k >= t[d])
      continue;
    std::vector<unsigned> guards(dims, 0);
    std::vector<ExprPtr> bounds;
    bool never = false;
    for (size_t e = d; e < dims; ++e) {
      ExprPtr lo = plusConst(*l.ranges[e].lo, t[e]);
      ExprPtr hi = plusConst(*l.ranges[e].hi, t[e]);
      bool needLo = e > d && t[e] > tMin[e];
      bool needHi = e > d ? t[e] < tMax[e] : side == 0;
      std::optional<int64_t> flo = constBound(*layer[e].lo),
                             fhi = constBound(*layer[e].hi),
                             glo = constBound(*lo), ghi = constBound(*hi);
      if (flo && glo && *flo >= *glo)
        needLo = false;
      if (fhi && ghi && *fhi <= *ghi)
        needHi = false;
      never =
          never || (fhi && glo && *fhi <= *glo) || (flo && ghi && *flo >= *ghi);
      if (needLo) {
        guards[e] |= 1;
        bounds.push_back(std::move(lo));
      }
      if (needHi) {
        guards[e] |= 2;
        bounds.push_back(std::move(hi));
      }
    }
    if (never)
      continue;
    auto loop = std::make_unique<ParLoopStmt>(l.range);
    loop->block = l.block;
    for (size_t i = 0; i < fs.args.size(); ++i)
      if (bounds.empty() || fs.liveArg[i])
        loop->args.push_back(fs.args[i].clone());
    loop->kernel = fs.kernel;
    if (!bounds.empty()) {
      loop->kernel = guardedKernel(b, fs, guards, types);
      for (ExprPtr &v : bounds) {
        AccessDescriptor a;
        a.kind = ArgKind::GlobalRead;
        a.mode = AccessMode::Read;
        a.scalar = v->type.scalar;
        a.bytes = scalarBytes(a.scalar);
        a.value = std::move(v);
        a.range = l.range;
        loop->args.push_back(std::move(a));
      }
    }
    for (const LoopRange &r : layer)
      loop->ranges.push_back(r.clone());
    b.ctx.stats.add(PassName, "transposed-frames",
                    "transposed-stencil frame loops");
    out.push_back(std::move(loop));
  }
}

} // namespace opdc::adj
