// FuseBuild.cpp - The fuse pass's last step: one loop and one kernel
// for a group.
// SPDX-License-Identifier: Apache-2.0
//
// A group of loops the checks of Fuse.cpp accepted becomes one loop over
// one kernel: its parameters merged where two loops reach a dat the same
// way (or read one block dat through stencils whose union one parameter
// stands for), its body the loops' bodies in order. Apart from the checks
// because building never refuses: what it may assume is theirs.
#include "passes/loops/FuseImpl.h"

#include "passes/utils/BodyUtils.h"

#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/LoopNames.h"
#include "support/Diagnostics.h"

#include "llvm/Support/Casting.h"

#include <algorithm>
#include <map>
#include <set>

namespace opdc::fuse {

using llvm::dyn_cast;
using llvm::isa;

/// Two descriptors that the fused kernel can pass as one parameter: the
/// same dat reached the same way, or the same dat at the centre only.
bool sameAccess(const AccessDescriptor &a, const AccessDescriptor &b) {
  if (a.kind == ArgKind::MapDirect && b.kind == ArgKind::MapDirect)
    return a.map == b.map && a.mode == AccessMode::Read &&
           b.mode == AccessMode::Read;
  if (!a.usesDat() || !b.usesDat() || a.dat != b.dat)
    return false;
  return a.kind == b.kind && a.map == b.map && a.mapIndex == b.mapIndex &&
         a.stencil == b.stencil;
}

bool atCentre(const AccessDescriptor &a) {
  return a.kind == ArgKind::Direct ||
         (a.kind == ArgKind::Stencil && a.stencil && a.stencil->isCentreOnly());
}

/// Reads of one block dat (through stencils or directly) that one
/// parameter can stand for, through the union of their stencils: the dat is
/// read only (check 3 keeps a dat some loop of the group writes at the
/// element), so every offset reads the same value either way. The fused
/// body then loads each point from one base pointer, and LLVM can share the
/// loads of points the loops' stencils have in common (the transposed
/// stencil's shifted reads of one dat).
bool blockReads(const AccessDescriptor &a, const AccessDescriptor &b) {
  auto blockRead = [](const AccessDescriptor &x) {
    return x.mode == AccessMode::Read && x.usesDat() && x.dat->block &&
           (x.kind == ArgKind::Stencil || x.kind == ArgKind::Direct);
  };
  return blockRead(a) && blockRead(b) && a.dat == b.dat;
}

/// The points of a block access: its stencil's, or the centre.
std::vector<std::vector<int64_t>> pointsOf(const AccessDescriptor &a) {
  if (a.kind == ArgKind::Stencil && a.stencil)
    return a.stencil->points;
  return {std::vector<int64_t>(a.dat->block->dims, 0)};
}

/// The mode of one parameter standing for \p first then \p second at the
/// same element.
AccessMode mergeModes(AccessMode first, AccessMode second) {
  if (first == second)
    return first;
  // Anything written and read, or incremented and otherwise accessed,
  // becomes inout: the parameter is the dat's own element either way.
  if (first == AccessMode::Write && second == AccessMode::Write)
    return AccessMode::Write;
  return AccessMode::ReadWrite;
}

Stencil *Fuser::unionStencil(const AccessDescriptor &a,
                             const AccessDescriptor &b) {
  std::vector<std::vector<int64_t>> points = pointsOf(a);
  for (const std::vector<int64_t> &pt : pointsOf(b))
    if (std::find(points.begin(), points.end(), pt) == points.end())
      points.push_back(pt);
  if (a.kind == ArgKind::Stencil && a.stencil && a.stencil->points == points)
    return a.stencil;
  for (auto *list : {&program.stencils, &pending})
    for (const auto &s : *list)
      if (s->points == points)
        return s.get();
  auto name = [](const AccessDescriptor &x) {
    return x.kind == ArgKind::Stencil && x.stencil ? x.stencil->name
                                                   : std::string("centre");
  };
  auto s = std::make_unique<Stencil>();
  s->name = name(a) + "+" + name(b);
  s->dims = a.dat->block->dims;
  s->points = std::move(points);
  s->range = a.stencil ? a.stencil->range : SourceRange();
  pending.push_back(std::move(s));
  return pending.back().get();
}

Function *Fuser::addKernel(std::unique_ptr<Function> k) {
  // The same loops fused in two places give the same kernel: keep one.
  std::string text;
  llvm::raw_string_ostream os(text);
  printFunction(*k, os);
  os.flush();
  std::string base = k->name;
  for (unsigned n = 1;; ++n) {
    Function *old = program.findKernel(k->name);
    if (!old)
      break;
    std::string oldText;
    llvm::raw_string_ostream oos(oldText);
    printFunction(*old, oos);
    oos.flush();
    if (oldText == text)
      return old;
    k->name = base + "." + std::to_string(n + 1);
    text.clear();
    printFunction(*k, os);
    os.flush();
  }
  program.kernels.push_back(std::move(k));
  return program.kernels.back().get();
}

StmtPtr Fuser::buildFused(const LoopChain &c,
                          const std::vector<unsigned> &group) {
  const ParLoopStmt &first = *c.loops[group.front()];
  auto k = std::make_unique<Function>();
  k->kind = FunctionKind::Kernel;
  k->range = first.kernel->range;
  auto loop = std::make_unique<ParLoopStmt>(first.range);
  loop->set = first.set;
  loop->block = first.block;
  for (const LoopRange &r : first.ranges)
    loop->ranges.push_back(r.clone());

  for (unsigned g : group) {
    const ParLoopStmt &l = *c.loops[g];
    const Function &lk = *l.kernel;
    k->name += (k->name.empty() ? "" : "+") + lk.name;
    // Parameters: reuse the fused parameter of the same access, else add.
    std::vector<unsigned> paramOf(l.args.size());
    for (unsigned i = 0; i < l.args.size(); ++i) {
      const AccessDescriptor &a = l.args[i];
      int found = -1;
      for (unsigned j = 0; j < loop->args.size() && found < 0; ++j) {
        const AccessDescriptor &f = loop->args[j];
        bool writes = modeWrites(a.mode) || modeWrites(f.mode);
        if (sameAccess(f, a) || blockReads(f, a) ||
            (writes && f.usesDat() && a.usesDat() && f.dat == a.dat &&
             atCentre(f) && atCentre(a)))
          found = int(j);
      }
      if (found >= 0) {
        AccessDescriptor &f = loop->args[unsigned(found)];
        if (blockReads(f, a) && !sameAccess(f, a)) {
          f.kind = ArgKind::Stencil;
          f.stencil = unionStencil(f, a);
          k->kernelParams[unsigned(found)].stencil = f.stencil;
        }
        f.mode = mergeModes(f.mode, a.mode);
        k->kernelParams[unsigned(found)].mode = f.mode;
        paramOf[i] = unsigned(found);
        continue;
      }
      paramOf[i] = unsigned(loop->args.size());
      loop->args.push_back(a.clone());
      KernelParam p = lk.kernelParams[i];
      // Parameter names stay unique in the fused kernel (a kernel may
      // occur twice in one group).
      auto taken = [&](const std::string &n) {
        for (const KernelParam &q : k->kernelParams)
          if (q.name == n)
            return true;
        return false;
      };
      if (taken(p.name)) {
        std::string base = lk.name + "." + p.name, name = base;
        for (unsigned n = 2; taken(name); ++n)
          name = base + "." + std::to_string(n);
        p.name = name;
      }
      k->kernelParams.push_back(p);
    }
    // Body: slots shifted past the kernels before, parameters renumbered.
    // Kernels never return (sema), so B's body runs after A's for every
    // element.
    Body body = lk.body.clone();
    std::vector<unsigned> slotMap(lk.vars.size());
    for (unsigned v = 0; v < lk.vars.size(); ++v) {
      Var var = lk.vars[v];
      if (group.size() > 1 && g != group.front())
        var.name = lk.name + "." + var.name;
      slotMap[v] = k->addVar(var.name, var.type, var.isMutable, var.range);
    }
    remapSlots(body, slotMap);
    struct Renumber : IRMutator {
      const std::vector<unsigned> &paramOf;
      const Function &fused;
      Renumber(const std::vector<unsigned> &p, const Function &f)
          : paramOf(p), fused(f) {}
      ExprPtr mutateKernelArg(std::unique_ptr<KernelArgExpr> e) override {
        e->index = paramOf[e->index];
        // A centre access merged into a parameter of the other form: the
        // stencil's centre is all zeros, a direct access has no offset.
        const Stencil *s = fused.kernelParams[e->index].stencil;
        if (s && e->offset.empty())
          e->offset.assign(s->dims, 0);
        else if (!s)
          e->offset.clear();
        return e;
      }
    } renumber(paramOf, *k);
    renumber.mutateBody(body);
    for (StmtPtr &s : body.stmts)
      k->body.stmts.push_back(std::move(s));
  }
  // A direct read merged later into a stencil parameter (blockReads):
  // the bodies before the merge read it without an offset.
  struct CentreOffsets : IRMutator {
    const Function &fused;
    explicit CentreOffsets(const Function &f) : fused(f) {}
    ExprPtr mutateKernelArg(std::unique_ptr<KernelArgExpr> e) override {
      const Stencil *s = fused.kernelParams[e->index].stencil;
      if (s && e->offset.empty())
        e->offset.assign(s->dims, 0);
      return e;
    }
  } centre(*k);
  centre.mutateBody(k->body);
  // The unions the fused parameters ended with join the program; the
  // intermediate ones of a group of three or more loops go away.
  for (auto &s : pending)
    if (std::any_of(k->kernelParams.begin(), k->kernelParams.end(),
                    [&](const KernelParam &p) { return p.stencil == s.get(); }))
      program.stencils.push_back(std::move(s));
  pending.clear();
  loop->kernel = addKernel(std::move(k));
  return loop;
}

} // namespace opdc::fuse
