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
  case ArgKind::Indirect: // out and inout: ordered by the runtime
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
  // A block loop and a block dat, or a set loop and a set dat (a direct
  // argument is of the loop's own set).
  if ((l.block == nullptr) != (d->block == nullptr))
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

std::vector<bool> loopOverwrites(const ParLoopStmt &l,
                                 const std::vector<Dat *> &dats) {
  std::vector<bool> out(dats.size(), false);
  bool any = false;
  for (size_t k = 0; k < dats.size(); ++k) {
    const std::vector<unsigned> writes = centreOnlyWrites(l, dats[k]);
    out[k] = !writes.empty() &&
             std::all_of(writes.begin(), writes.end(), [&](unsigned i) {
               return assignsWhole(*l.kernel, i);
             });
    any = any || out[k];
  }
  return any ? out : std::vector<bool>();
}

namespace {
/// Whether expression \p e calls a function (which might be a proc).
bool hasCall(const Expr *e) {
  struct Finder : IRVisitor {
    bool found = false;
    void visitCall(const CallExpr &) override { found = true; }
  } f;
  if (e)
    f.visitExpr(*e);
  return f.found;
}
} // namespace

const ParLoopStmt *firstLoopReaching(const Body &b, size_t i, const Dat *d) {
  for (size_t j = i + 1; j < b.stmts.size(); ++j) {
    const Stmt *st = b.stmts[j].get();
    if (!st)
      continue;
    if (const auto *dc = llvm::dyn_cast<DeclStmt>(st)) {
      if (hasCall(dc->init.get()))
        return nullptr;
      continue;
    }
    if (const auto *a = llvm::dyn_cast<AssignStmt>(st)) {
      if (hasCall(a->target.get()) || hasCall(a->value.get()))
        return nullptr;
      continue;
    }
    const auto *l = llvm::dyn_cast<ParLoopStmt>(st);
    if (!l)
      return nullptr;
    for (const AccessDescriptor &a : l->args)
      if (a.usesDat() && a.dat == d)
        return l;
  }
  return nullptr;
}

std::vector<uint8_t> stateTakes(const Body &body,
                                const std::vector<Dat *> &dats) {
  std::vector<uint8_t> out(dats.size(), 0);
  // The first loop, after host declarations and assignments that call
  // nothing (they touch no dat; unroll-steps declares the loop variable
  // first).
  const ParLoopStmt *first = nullptr;
  for (const StmtPtr &sp : body.stmts) {
    const Stmt *st = sp.get();
    if (!st)
      continue;
    if (const auto *d = llvm::dyn_cast<DeclStmt>(st)) {
      if (hasCall(d->init.get()))
        break;
      continue;
    }
    if (const auto *a = llvm::dyn_cast<AssignStmt>(st)) {
      if (hasCall(a->target.get()) || hasCall(a->value.get()))
        break;
      continue;
    }
    first = llvm::dyn_cast<ParLoopStmt>(st);
    break;
  }
  if (!first)
    return {};
  const std::vector<bool> now = loopOverwrites(*first, dats);
  bool any = false;
  for (size_t k = 0; k < dats.size(); ++k)
    if (k < now.size() && now[k])
      out[k] = 1, any = true;
  // The body's statements: loops (the storages they write), top-level
  // swaps (where each storage goes), nothing else that could touch a dat.
  bool simple = true;
  for (const StmtPtr &sp : body.stmts) {
    const Stmt *st = sp.get();
    if (!st)
      continue;
    switch (st->kind) {
    case StmtKind::ParLoop:
    case StmtKind::Swap:
      break;
    case StmtKind::Decl:
      simple = simple && !hasCall(llvm::cast<DeclStmt>(st)->init.get());
      break;
    case StmtKind::Assign: {
      const auto *a = llvm::cast<AssignStmt>(st);
      simple = simple && !hasCall(a->target.get()) && !hasCall(a->value.get());
      break;
    }
    default:
      simple = false;
    }
  }
  if (!simple)
    return any ? out : std::vector<uint8_t>();
  for (size_t k = 0; k < dats.size(); ++k) {
    if (out[k] || !dats[k])
      continue;
    // Follow dats[k]'s storage through the body: for 2, no loop may
    // write it; for 3, the first loop that writes it overwrites it, and
    // no swap moves it before that loop.
    const Dat *at = dats[k];
    const ParLoopStmt *writer = nullptr;
    bool swappedBefore = false;
    for (const StmtPtr &sp : body.stmts) {
      if (const auto *sw = llvm::dyn_cast_or_null<SwapStmt>(sp.get())) {
        swappedBefore =
            swappedBefore || (!writer && (sw->a == at || sw->b == at));
        if (sw->a == at)
          at = sw->b;
        else if (sw->b == at)
          at = sw->a;
      } else if (const auto *l = llvm::dyn_cast_or_null<ParLoopStmt>(sp.get())) {
        for (const AccessDescriptor &a : l->args)
          if (!writer && a.usesDat() && a.dat == at &&
              a.mode != AccessMode::Read)
            writer = l;
      }
    }
    if (writer) {
      const std::vector<bool> later = loopOverwrites(*writer, {dats[k]});
      if (!swappedBefore && writer != first && !later.empty() && later[0])
        out[k] = 3, any = true;
      continue;
    }
    if (at == dats[k])
      continue;
    const std::vector<bool> next =
        loopOverwrites(*first, std::vector<Dat *>{const_cast<Dat *>(at)});
    if (!next.empty() && next[0])
      out[k] = 2, any = true;
  }
  return any ? out : std::vector<uint8_t>();
}

namespace {
/// Parameter \p index at the centre (no offset, or all zeros).
bool centreParam(const Expr *e, unsigned index) {
  const auto *t = e ? llvm::dyn_cast<KernelArgExpr>(e) : nullptr;
  return t && t->index == index &&
         std::all_of(t->offset.begin(), t->offset.end(),
                     [](int64_t o) { return o == 0; });
}
/// `target = value` assigning parameter \p index at the centre whole, or
/// its component `[slot]` when \p slot >= 0.
bool assigns(const Stmt &s, unsigned index, int slot) {
  const auto *a = llvm::dyn_cast<AssignStmt>(&s);
  if (!a || a->op != AssignOp::Set)
    return false;
  if (slot < 0)
    return centreParam(a->target.get(), index);
  const auto *x = llvm::dyn_cast<IndexExpr>(a->target.get());
  const auto *v = x ? llvm::dyn_cast<VarRefExpr>(x->index.get()) : nullptr;
  return v && v->slot == unsigned(slot) && centreParam(x->base.get(), index);
}
int64_t constant(const Expr *e, int64_t otherwise) {
  const auto *c = e ? llvm::dyn_cast<ConstantExpr>(e) : nullptr;
  return c ? c->value.asInt() : otherwise;
}
} // namespace

bool assignsWhole(const Function &k, unsigned index) {
  // Every statement at the top level runs (no return, break or continue
  // anywhere), so does every iteration of a top-level for loop's body.
  struct Jumps : IRVisitor {
    bool found = false;
    void visitReturn(const ReturnStmt &) override { found = true; }
    void visitBreak(const BreakStmt &) override { found = true; }
    void visitContinue(const ContinueStmt &) override { found = true; }
  } jumps;
  jumps.visitBody(k.body);
  if (jumps.found || index >= k.kernelParams.size())
    return false;
  const unsigned dim = k.kernelParams[index].type.dim();
  for (const StmtPtr &s : k.body.stmts) {
    if (!s)
      continue;
    if (assigns(*s, index, -1))
      return true;
    // `for i in 0 .. dim { p[i] = ... }`: every component (the copy and
    // zero kernels of array dats).
    const auto *f = llvm::dyn_cast<ForStmt>(s.get());
    if (f && dim > 1 && constant(f->lo.get(), -1) == 0 &&
        constant(f->hi.get(), -1) == int64_t(dim) &&
        std::any_of(f->body.stmts.begin(), f->body.stmts.end(),
                    [&](const StmtPtr &b) {
                      return b && assigns(*b, index, int(f->slot));
                    }))
      return true;
  }
  return false;
}

} // namespace opdc::ir
