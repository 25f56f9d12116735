// AdjointLoop.cpp - The adjoint pass's loop-level transposition: the loops
// that run one loop's adjoint in the reverse sweep.
// SPDX-License-Identifier: Apache-2.0
//
// Adjoint.cpp's file comment says how each kind of argument is transposed
// and why increments through maps need no reverse halo exchange; here is
// the loop over the kernel's adjoint (ReverseDiff.h) and, for block loops,
// the transposed stencils, one loop per offset.
#include "passes/deriv/AdjointImpl.h"

#include "passes/deriv/ForwardDiff.h"
#include "passes/deriv/MinMaxDiff.h"
#include "passes/utils/BodyUtils.h"

#include "ir/AccessRules.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "support/Diagnostics.h"

#include <algorithm>

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
  std::vector<std::unique_ptr<ParLoopStmt>> frames;
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
    // (R + t) \ I as disjoint slabs.
    for (std::vector<LoopRange> &slab : slabsAround(moved, interior)) {
      auto frame = std::make_unique<ParLoopStmt>(l.range);
      frame->kernel = kt;
      frame->block = l.block;
      for (const AccessDescriptor &a : loop->args)
        frame->args.push_back(a.clone());
      frame->ranges = std::move(slab);
      frames.push_back(std::move(frame));
    }
    for (size_t d = 0; d < dims; ++d)
      loop->ranges.push_back(interior[d].clone());
    b.ctx.stats.add(PassName, "transposed", "transposed-stencil loops");
    out.push_back(std::move(loop));
  }
  for (auto &frame : frames) {
    b.ctx.stats.add(PassName, "transposed-frames",
                    "transposed-stencil frame loops");
    out.push_back(std::move(frame));
  }
  for (size_t i : off) {
    plan[i].active = false;
    key[2 * i] = false;
  }
  return true;
}

} // namespace opdc::adj
