// AccessRules.cpp - The legality rules for a loop argument's access
// descriptor.
// SPDX-License-Identifier: Apache-2.0
#include "ir/AccessRules.h"

#include "ir/IRVisitor.h"

#include "llvm/Support/Casting.h"

#include <algorithm>

namespace opdc::ir {

namespace {
std::string quoted(const Dat *d) { return d ? "'" + d->name + "'" : "<null>"; }
} // namespace

std::string modeRule(const AccessDescriptor &a) {
  std::string mode = accessModeName(a.mode);
  if (a.usesDat() && isReduction(a.mode))
    return "dat " + quoted(a.dat) + " bound to a reduction";
  switch (a.kind) {
  case ArgKind::Direct:
    return "";
  case ArgKind::Indirect:
    if (a.mode == AccessMode::Write || a.mode == AccessMode::ReadWrite)
      return "indirect " + mode + " is not race-free";
    return "";
  case ArgKind::Stencil:
    if (modeWrites(a.mode) && a.stencil && !a.stencil->isCentreOnly())
      return "written through off-centre stencil '" + a.stencil->name + "'";
    return "";
  case ArgKind::MapDirect:
    if (a.mode != AccessMode::Read && a.mode != AccessMode::Write)
      return "map argument with mode " + mode;
    return "";
  case ArgKind::GlobalRead:
    if (a.mode != AccessMode::Read)
      return "global argument with mode " + mode;
    return "";
  case ArgKind::Reduction:
    if (!isReduction(a.mode))
      return "reduction argument with mode " + mode;
    return "";
  }
  return "";
}

std::vector<std::string> paramRules(const AccessDescriptor &a,
                                    const KernelParam &p) {
  std::vector<std::string> why;
  if (a.mode != p.mode)
    why.push_back(std::string("mode ") + accessModeName(a.mode) +
                  " differs from '" + p.name + "' (" + accessModeName(p.mode) +
                  ")");
  if (a.scalar != p.type.scalar || a.dim != p.type.dim())
    why.push_back("element " + std::string(scalarName(a.scalar)) + "[" +
                  std::to_string(a.dim) + "] differs from '" + p.name +
                  "' (" + p.type.str() + ")");
  if (a.bytes != scalarBytes(a.scalar) * a.dim)
    why.push_back(std::to_string(a.bytes) + " bytes per element, expected " +
                  std::to_string(scalarBytes(a.scalar) * a.dim));
  return why;
}

std::vector<std::string> placementRules(const AccessDescriptor &a,
                                        const KernelParam &p,
                                        const ParLoopStmt &l) {
  std::vector<std::string> why;
  switch (a.kind) {
  case ArgKind::Direct:
    if (l.set && a.dat->set != l.set)
      why.push_back("direct dat " + quoted(a.dat) + " is not on set '" +
                    l.set->name + "'");
    if (l.block && a.dat->block != l.block)
      why.push_back("direct dat " + quoted(a.dat) + " is not on block '" +
                    l.block->name + "'");
    if (p.stencil && !p.stencil->isCentreOnly())
      why.push_back("direct argument for stencil parameter '" + p.name + "'");
    break;
  case ArgKind::Indirect:
    if (a.map->from != l.set)
      why.push_back("map '" + a.map->name + "' is not from set '" +
                    l.set->name + "'");
    if (a.dat->set != a.map->to)
      why.push_back("dat " + quoted(a.dat) + " is not on the target of map '" +
                    a.map->name + "'");
    if (a.mapIndex < 0 || unsigned(a.mapIndex) >= a.map->arity)
      why.push_back("index " + std::to_string(a.mapIndex) + " outside map '" +
                    a.map->name + "' of arity " +
                    std::to_string(a.map->arity));
    break;
  case ArgKind::Stencil:
    if (a.dat->block != l.block)
      why.push_back("dat " + quoted(a.dat) + " is not on block '" +
                    l.block->name + "'");
    if (a.stencil->dims != l.block->dims)
      why.push_back("stencil '" + a.stencil->name + "' has " +
                    std::to_string(a.stencil->dims) + " dimensions, block '" +
                    l.block->name + "' has " + std::to_string(l.block->dims));
    break;
  case ArgKind::MapDirect:
    if (a.map->from != l.set)
      why.push_back("map '" + a.map->name + "' is not from set '" +
                    l.set->name + "'");
    if (a.scalar != ScalarKind::I32 || a.dim != a.map->arity)
      why.push_back("map '" + a.map->name + "' is passed as " +
                    scalarName(a.scalar) + "[" + std::to_string(a.dim) +
                    "], expected i32[" + std::to_string(a.map->arity) + "]");
    break;
  case ArgKind::GlobalRead:
  case ArgKind::Reduction:
    break;
  }
  return why;
}

std::vector<unsigned> centreOnlyWrites(const ParLoopStmt &l, const Dat *d) {
  std::vector<unsigned> writes;
  if (!l.block || !d->block)
    return writes;
  for (unsigned i = 0; i < l.args.size(); ++i) {
    const AccessDescriptor &a = l.args[i];
    if (!a.usesDat() || a.dat != d)
      continue;
    const bool centre =
        a.kind == ArgKind::Direct ||
        (a.kind == ArgKind::Stencil && a.stencil && a.stencil->isCentreOnly());
    if (a.mode != AccessMode::Write || !centre)
      return {};
    writes.push_back(i);
  }
  return writes;
}

bool assignsWhole(const Function &k, unsigned index) {
  struct Returns : IRVisitor {
    bool found = false;
    void visitReturn(const ReturnStmt &) override { found = true; }
  } returns;
  returns.visitBody(k.body);
  if (returns.found)
    return false;
  for (const StmtPtr &s : k.body.stmts) {
    const auto *a = llvm::dyn_cast<AssignStmt>(s.get());
    const auto *t = a && a->op == AssignOp::Set
                        ? llvm::dyn_cast<KernelArgExpr>(a->target.get())
                        : nullptr;
    if (t && t->index == index &&
        std::all_of(t->offset.begin(), t->offset.end(),
                    [](int64_t o) { return o == 0; }))
      return true;
  }
  return false;
}

} // namespace opdc::ir
