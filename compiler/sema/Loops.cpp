// Loops.cpp - Loop statements: binding arguments to kernel parameters.
// SPDX-License-Identifier: Apache-2.0
//
// Each argument of `loop K over S (args)` becomes an access descriptor
// (LoopArg): which dat, through which map index or stencil, with the mode of
// the parameter it binds to. The shape of the argument decides the kind:
//   q             dat on the loop's set: direct; on the loop's block: stencil
//   q[pecell[0]]  indirect through a map whose `from` is the loop's set
//   pedge         the map itself, as an i32[arity] value per element
//   rms           a host `var` bound to a min/max/sum parameter: reduction
//   dt * 0.5      any other host expression: a global read
// Indirect `out`/`inout` (OP2's OP_WRITE/OP_RW through a map) are accepted:
// the runtime applies them in global element order (docs/decisions/
// 0280-indirect-writes-in-element-order.md). Such a dat may be reached by
// no other argument of the loop except writes through maps, whose targets
// the runtime orders too; a read of it elsewhere would race.
#include "sema/SemaImpl.h"

#include "llvm/Support/Casting.h"

#include <algorithm>

namespace opdc::sema {

using namespace ast;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {
std::string plural(int64_t n, const char *word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string describeSpace(const Decl *d) {
  if (!d)
    return "?";
  return std::string(isa<BlockDecl>(d) ? "block '" : "set '") + d->name + "'";
}
} // namespace

void Sema::checkRanges(std::vector<RangeExpr> &ranges, bool hasRanges,
                       const NameRef &space, BlockDecl *block, SourceRange at) {
  if (!hasRanges)
    return;
  for (auto &r : ranges) {
    check(r.lo);
    check(r.hi);
    if (!r.lo || !r.hi)
      continue;
    Type t = unify({&r.lo, &r.hi}, r.range, "range bound", false);
    if (!t.isError() && !t.isIntegerScalar())
      diags.error(r.range.valid() ? r.range : r.lo->range,
                  "range bounds have type '" + t.str() +
                      "', expected an integer");
  }
  if (block && block->dims > 0 && int64_t(ranges.size()) != block->dims) {
    SourceRange r = ranges.empty() ? at
                                   : SourceRange::join(ranges.front().range,
                                                       ranges.back().range);
    if (!r.valid())
      r = at;
    diags.error(r, "loop over block '" + block->name + "' has " +
                       plural(int64_t(ranges.size()), "range") +
                       " but the block has " +
                       plural(block->dims, "dimension"));
  }
}

void Sema::checkLoop(LoopStmt &s) {
  resolveRef(s.kernel, Want::Kernel);
  resolveRef(s.space, Want::SetOrBlock);
  auto *k = dyn_cast_or_null<KernelDecl>(s.kernel.decl);
  auto *set = dyn_cast_or_null<SetDecl>(s.space.decl);
  auto *block = dyn_cast_or_null<BlockDecl>(s.space.decl);
  if (set && s.hasRanges) {
    SourceRange r = s.ranges.empty() ? s.space.range
                                     : SourceRange::join(s.ranges.front().range,
                                                         s.ranges.back().range);
    diags.error(r.valid() ? r : s.space.range,
                "a loop over set '" + set->name +
                    "' cannot have ranges; ranges apply to loops over "
                    "blocks");
    for (auto &rg : s.ranges) {
      checkValue(rg.lo);
      checkValue(rg.hi);
    }
  } else {
    checkRanges(s.ranges, s.hasRanges, s.space, block, s.space.range);
  }
  if (!k || (!set && !block))
    return;
  if (s.args.size() != k->params.size()) {
    diags.error(s.kernel.range,
                "kernel '" + k->name + "' has " +
                    plural(int64_t(k->params.size()), "parameter") +
                    " but the loop passes " +
                    plural(int64_t(s.args.size()), "argument"));
    noteDeclared(k);
    return;
  }
  unsigned errorsBefore = diags.errorCount();
  for (size_t i = 0; i < s.args.size(); ++i) {
    LoopArg &a = s.args[i];
    a.param = k->params[i].get();
    if (a.expr)
      checkLoopArg(s, a, *a.param, set, block);
  }
  checkIndirectWrites(s);
  // A loop over the whole block takes its range from the extent of its
  // first dat; `loop k over grid (total)` with only a reduction has none.
  // An argument that failed its checks may have been meant as a dat, so
  // this is only said of loops whose arguments are all sound.
  if (block && !s.hasRanges && diags.errorCount() == errorsBefore &&
      std::none_of(s.args.begin(), s.args.end(),
                   [](const LoopArg &a) { return a.dat != nullptr; }))
    diags.error(s.range, "loop '" + k->name + "' over the whole block '" +
                             block->name +
                             "' has no dat argument to take its extent "
                             "from; give the range explicitly");
  int64_t dims = set ? 1 : block->dims;
  if (dims == 0)
    return;
  auto it = idxUses.find(k);
  if (it == idxUses.end())
    return;
  for (const IdxUse &u : it->second) {
    if (u.dim < dims)
      continue;
    diags.error(s.kernel.range,
                "kernel '" + k->name + "' uses idx(" + std::to_string(u.dim) +
                    ") but the loop over " + describeSpace(s.space.decl) +
                    " has " + plural(dims, "dimension"));
    diags.note(u.range, "idx(" + std::to_string(u.dim) + ") used here");
    break;
  }
}

// A dat written through a map with `out` or `inout`: every other argument on
// it must also write through a map (out, inout, inc), so that the runtime's
// ordering of the written targets covers every access to it.
void Sema::checkIndirectWrites(LoopStmt &s) {
  for (const LoopArg &a : s.args) {
    if (!a.kind || *a.kind != ArgKind::Indirect || !a.param || !a.dat ||
        (a.param->mode != AccessMode::Write &&
         a.param->mode != AccessMode::ReadWrite))
      continue;
    for (const LoopArg &o : s.args) {
      if (&o == &a || o.dat != a.dat || !o.kind || !o.param || !o.expr)
        continue;
      if (*o.kind == ArgKind::Indirect && o.param->mode != AccessMode::Read)
        continue;
      std::string how = *o.kind == ArgKind::Indirect
                            ? "read through map '" + o.map->name + "'"
                            : "also passed directly";
      diags.error(o.expr->range,
                  "dat '" + a.dat->name + "' is written through map '" +
                      a.map->name + "' ('" + accessModeName(a.param->mode) +
                      "') and " + how +
                      " in the same loop; another element's write would "
                      "race with this access: read it in a separate loop");
      diags.note(a.expr->range, "written here");
      return;
    }
  }
}

void Sema::checkLoopArg(LoopStmt &s, LoopArg &a, KernelParamDecl &p,
                        SetDecl *set, BlockDecl *block) {
  Expr &ex = *a.expr;
  Type pt = p.type.resolved;
  KernelDecl *k = p.kernel;
  LoopArgSite at{s,
                 a,
                 p,
                 set,
                 block,
                 pt,
                 badParams.count(&p) || pt.isError(),
                 "parameter '" + p.name + "' of kernel '" +
                     (k ? k->name : std::string("?")) + "'",
                 accessModeName(p.mode)};

  // Reduction targets: a host `var` of the parameter's type.
  if (isReduction(p.mode)) {
    checkReductionArg(at);
    return;
  }
  // Indirect: dat[map[k]].
  if (auto *ie = dyn_cast<IndexExpr>(&ex))
    if (checkIndirectArg(at, *ie))
      return;

  // Dats and maps by name (or a derivative field `dJ.x`).
  DatDecl *dat = nullptr;
  MapDecl *map = nullptr;
  if (auto *n = dyn_cast<NameExpr>(&ex)) {
    Decl *d = lookup(n->name);
    if (!d) {
      reportUnknown(n->name, n->range, Want::Arg);
      return;
    }
    dat = dyn_cast<DatDecl>(d);
    map = dyn_cast<MapDecl>(d);
    if (dat || map)
      n->decl = d;
  } else if (auto *m = dyn_cast<MemberExpr>(&ex)) {
    if (auto *base = dyn_cast<NameExpr>(m->base.get()))
      if (auto *g = dyn_cast_or_null<GradientDecl>(lookup(base->name)))
        if (isa_and_nonnull<DatDecl>(g->field(m->field)))
          dat = resolveDatExpr(a.expr);
  }

  if (dat) {
    checkDatArg(at, dat);
    return;
  }
  if (map) {
    checkMapArg(at, map);
    return;
  }
  checkGlobalArg(at);
}

bool Sema::checkArgElemType(const LoopArgSite &at, Type elem,
                            const std::string &what) {
  if (at.badParam || elem.isError() || elem == at.pt)
    return true;
  diags.error(at.a.expr->range, what + " has element type '" + elem.str() +
                                    "' but " + at.paramDesc + " has type '" +
                                    at.pt.str() + "'");
  noteDeclared(&at.p);
  return false;
}

/// A reduction target: a host `var` of the parameter's type.
void Sema::checkReductionArg(const LoopArgSite &at) {
  [[maybe_unused]] auto &[s, a, p, set, block, pt, badParam, paramDesc, mode] =
      at;
  Expr &ex = *a.expr;
  auto *n = dyn_cast<NameExpr>(&ex);
  if (!n) {
    diags.error(ex.range, std::string("'") + mode + "' " + paramDesc +
                              " must be bound to a host variable, found "
                              "an expression");
    noteDeclared(&p);
    return;
  }
  Decl *d = lookup(n->name);
  if (!d) {
    reportUnknown(n->name, n->range, Want::Value);
    return;
  }
  n->decl = d;
  auto *v = dyn_cast<VarDecl>(d);
  if (!v) {
    diags.error(ex.range, std::string("'") + mode + "' " + paramDesc +
                              " is bound to " + declKindName(d->kind) + " '" +
                              d->name + "'; a reduction needs a host variable");
    noteDeclared(&p);
    return;
  }
  n->type = v->type;
  if (!v->isMutable) {
    diags.error(ex.range, "reduction target '" + v->name +
                              "' must be declared with 'var'");
    noteDeclared(v);
    return;
  }
  if (!badParam && !v->type.isError() && v->type != pt) {
    diags.error(ex.range, "reduction target '" + v->name + "' has type '" +
                              v->type.str() + "' but " + paramDesc +
                              " has type '" + pt.str() + "'");
    noteDeclared(&p);
    return;
  }
  a.kind = ArgKind::Reduction;
  a.var = v;
  return;
}

/// `dat[map[k]]`; false when \p ie is not indexed through a map, so that
/// the other shapes are tried.
bool Sema::checkIndirectArg(const LoopArgSite &at, IndexExpr &ie_) {
  [[maybe_unused]] auto &[s, a, p, set, block, pt, badParam, paramDesc, mode] =
      at;
  Expr &ex = *a.expr;
  auto *ie = &ie_;
  auto *inner = dyn_cast<IndexExpr>(ie->index.get());
  auto *mapName = inner ? dyn_cast<NameExpr>(inner->base.get()) : nullptr;
  auto *m =
      mapName ? dyn_cast_or_null<MapDecl>(lookup(mapName->name)) : nullptr;
  if (m) {
    mapName->decl = m;
    mapName->type = m->arity > 0
                        ? Type::arrayOf(ScalarKind::I32, uint32_t(m->arity))
                        : Type::error();
    DatDecl *dat = resolveDatExpr(ie->base);
    std::optional<int64_t> idx = foldInteger(inner->index, "map index");
    inner->type = Type::scalarOf(ScalarKind::I32);
    if (!dat)
      return true;
    ie->type = dat->elemType.resolved;
    a.dat = dat;
    a.map = m;
    if (idx)
      a.mapIndex = *idx;
    if (block) {
      diags.error(ex.range, "indirect access through map '" + m->name +
                                "' in a loop over block '" + block->name + "'");
      return true;
    }
    if (idx && m->arity > 0 && (*idx < 0 || *idx >= m->arity)) {
      diags.error(inner->index->range, "map index " + std::to_string(*idx) +
                                           " is out of range for map '" +
                                           m->name + "' of arity " +
                                           std::to_string(m->arity));
      noteDeclared(m);
      return true;
    }
    if (!idx)
      return true;
    if (m->from.decl && m->from.decl != set) {
      diags.error(mapName->range,
                  "map '" + m->name + "' maps from set '" + m->from.name +
                      "' but the loop is over set '" + set->name + "'");
      noteDeclared(m);
      return true;
    }
    if (m->to.decl && dat->on.decl && dat->on.decl != m->to.decl) {
      diags.error(ie->base->range, "dat '" + dat->name + "' is on " +
                                       describeSpace(dat->on.decl) +
                                       " but map '" + m->name +
                                       "' maps to set '" + m->to.name + "'");
      noteDeclared(dat);
      return true;
    }
    if (p.stencil) {
      diags.error(ex.range, "stencil parameter '" + p.name +
                                "' cannot be bound to an indirect "
                                "argument");
      noteDeclared(&p);
      return true;
    }
    if (!checkArgElemType(at, dat->elemType.resolved,
                          "dat '" + dat->name + "'"))
      return true;
    a.kind = ArgKind::Indirect;
    return true;
  }
  // `q[0]` on a dat: neither direct nor indirect.
  if (auto *bn = dyn_cast<NameExpr>(ie->base.get()))
    if (auto *dat = dyn_cast_or_null<DatDecl>(lookup(bn->name))) {
      bn->decl = dat;
      diags.error(ex.range, "dat '" + dat->name +
                                "' can only be indexed through a map, as '" +
                                dat->name + "[MAP[i]]'");
      return true;
    }
  return false;
}

/// A dat by name: direct on the loop's set, through a stencil on its block.
void Sema::checkDatArg(const LoopArgSite &at, DatDecl *dat) {
  [[maybe_unused]] auto &[s, a, p, set, block, pt, badParam, paramDesc, mode] =
      at;
  Expr &ex = *a.expr;
  ex.type = dat->elemType.resolved;
  a.dat = dat;
  Decl *on = dat->on.decl;
  if (!on)
    return;
  if (set) {
    if (isa<BlockDecl>(on)) {
      diags.error(ex.range, "dat '" + dat->name + "' is on block '" + on->name +
                                "' but the loop is over set '" + set->name +
                                "'");
      noteDeclared(dat);
      return;
    }
    if (p.stencil) {
      diags.error(ex.range, "stencil parameter '" + p.name +
                                "' is bound to dat '" + dat->name +
                                "' on set '" + on->name +
                                "'; stencils apply to dats on blocks");
      noteDeclared(&p);
      return;
    }
    if (on != set) {
      diags.error(ex.range, "dat '" + dat->name + "' is on set '" + on->name +
                                "' but the loop is over set '" + set->name +
                                "'");
      noteDeclared(dat);
      return;
    }
    if (!checkArgElemType(at, dat->elemType.resolved,
                          "dat '" + dat->name + "'"))
      return;
    a.kind = ArgKind::Direct;
    return;
  }
  // A loop over a block.
  if (isa<SetDecl>(on)) {
    diags.error(ex.range, "dat '" + dat->name + "' is on set '" + on->name +
                              "' but the loop is over block '" + block->name +
                              "'");
    noteDeclared(dat);
    return;
  }
  if (on != block) {
    diags.error(ex.range, "dat '" + dat->name + "' is on block '" + on->name +
                              "' but the loop is over block '" + block->name +
                              "'");
    noteDeclared(dat);
    return;
  }
  if (!p.stencil) {
    diags.error(ex.range, "dat '" + dat->name + "' on block '" + block->name +
                              "' is bound to " + paramDesc +
                              ", which has no stencil; declare it '" + p.name +
                              ": " + textOf(p.type.range).str() +
                              " @ STENCIL'");
    noteDeclared(&p);
    return;
  }
  auto *st = dyn_cast_or_null<StencilDecl>(p.stencil->decl);
  if (!st || st->dims == 0 || badParam)
    return;
  if (block->dims > 0 && st->dims != block->dims) {
    diags.error(ex.range, "stencil '" + st->name + "' of parameter '" + p.name +
                              "' has " + plural(st->dims, "dimension") +
                              " but block '" + block->name + "' has " +
                              std::to_string(block->dims));
    noteDeclared(st);
    return;
  }
  if (!checkArgElemType(at, dat->elemType.resolved, "dat '" + dat->name + "'"))
    return;
  a.kind = ArgKind::Stencil;
  a.stencil = st;
  checkHalo(at.s, a, *block);
  return;
}

/// The map itself, as an i32[arity] value per element.
void Sema::checkMapArg(const LoopArgSite &at, MapDecl *map) {
  [[maybe_unused]] auto &[s, a, p, set, block, pt, badParam, paramDesc, mode] =
      at;
  Expr &ex = *a.expr;
  ex.type = map->arity > 0
                ? Type::arrayOf(ScalarKind::I32, uint32_t(map->arity))
                : Type::error();
  a.map = map;
  if (block) {
    diags.error(ex.range, "map '" + map->name +
                              "' cannot be passed to a loop over block '" +
                              block->name + "'");
    return;
  }
  if (map->from.decl && map->from.decl != set) {
    diags.error(ex.range, "map '" + map->name + "' maps from set '" +
                              map->from.name + "' but the loop is over set '" +
                              set->name + "'");
    noteDeclared(map);
    return;
  }
  if (p.stencil || p.mode == AccessMode::Inc) {
    diags.error(ex.range, "map '" + map->name + "' is bound to " + paramDesc +
                              "; a map argument is read or written ('out') "
                              "directly");
    noteDeclared(&p);
    return;
  }
  if (map->arity > 0 && !badParam) {
    Type mt = Type::arrayOf(ScalarKind::I32, uint32_t(map->arity));
    bool ok =
        pt == mt || (map->arity == 1 && pt == Type::scalarOf(ScalarKind::I32));
    if (!ok) {
      diags.error(ex.range, "map '" + map->name + "' has element type '" +
                                mt.str() + "' but " + paramDesc +
                                " has type '" + pt.str() + "'");
      noteDeclared(&p);
      return;
    }
  }
  a.kind = ArgKind::MapDirect;
  return;
}

/// Any other host expression: a global, read-only.
void Sema::checkGlobalArg(const LoopArgSite &at) {
  [[maybe_unused]] auto &[s, a, p, set, block, pt, badParam, paramDesc, mode] =
      at;
  Expr &ex = *a.expr;
  if (p.mode != AccessMode::Read) {
    check(a.expr);
    finalize(a.expr);
    if (a.expr->type.isError())
      return;
    diags.error(ex.range, std::string("'") + mode + "' " + paramDesc +
                              " must be bound to a dat, found an "
                              "expression");
    noteDeclared(&p);
    return;
  }
  if (p.stencil) {
    check(a.expr);
    finalize(a.expr);
    if (a.expr->type.isError())
      return;
    diags.error(ex.range, "stencil parameter '" + p.name +
                              "' must be bound to a dat on a block");
    noteDeclared(&p);
    return;
  }
  if (badParam) {
    checkValue(a.expr);
    return;
  }
  if (convert(a.expr, pt, "argument for " + paramDesc))
    a.kind = ArgKind::GlobalRead;
}

void Sema::checkHalo(LoopStmt &s, LoopArg &a, BlockDecl &block) {
  DatDecl *dat = a.dat;
  StencilDecl *st = a.stencil;
  int64_t dims = block.dims;
  if (!dat || !st || dims <= 0 || int64_t(dat->haloM.size()) != dims ||
      int64_t(dat->haloP.size()) != dims || st->dims != dims ||
      st->offsets.empty())
    return;
  if (s.hasRanges && int64_t(s.ranges.size()) != dims)
    return;
  // Reads may reach into the halo at any stencil offset; written
  // parameters (centre-only stencils, sema's gather rule) only where the
  // loop range itself reaches.
  bool written = a.param && a.param->mode != AccessMode::Read;
  int64_t d = 0;
  auto reportOutside = [&](int64_t index, int64_t depth, const char *side) {
    diags.error(a.expr->range,
                "stencil '" + st->name + "' " +
                    (written ? "writes" : "reads") + " dat '" + dat->name +
                    "' at index " + std::to_string(index) + " in dimension " +
                    std::to_string(d) + ", outside its halo of depth " +
                    std::to_string(depth) + "; shrink the loop range or "
                    "declare a deeper " + side + "-side halo");
    noteDeclared(dat);
  };
  for (d = 0; d < dims; ++d) {
    // The iteration range [lo, hi) in the dat's index space, where known.
    std::optional<int64_t> lo, hi, size;
    int64_t base = d < int64_t(dat->baseOffset.size()) ? dat->baseOffset[d] : 0;
    if (d < int64_t(dat->size.size()) && dat->size[d]->constValue &&
        dat->size[d]->type.isIntegerScalar())
      size = dat->size[d]->constValue->asInt();
    if (s.hasRanges) {
      RangeExpr &r = s.ranges[d];
      if (r.lo && r.lo->constValue && r.lo->type.isIntegerScalar())
        lo = r.lo->constValue->asInt();
      if (r.hi && r.hi->constValue && r.hi->type.isIntegerScalar())
        hi = r.hi->constValue->asInt() + (r.inclusive ? 1 : 0);
    } else {
      lo = base;
      if (size)
        hi = base + *size;
    }
    if (!lo || (hi && *hi <= *lo))
      continue;
    int64_t minOff = st->offsets.front()[d], maxOff = minOff;
    for (auto &o : st->offsets) {
      minOff = std::min(minOff, o[d]);
      maxOff = std::max(maxOff, o[d]);
    }
    int64_t first = *lo + minOff;
    if (first < base - dat->haloM[d]) {
      reportOutside(first, dat->haloM[d], "minus");
      return;
    }
    if (!hi || !size)
      continue;
    int64_t last = *hi - 1 + maxOff;
    if (last > base + *size - 1 + dat->haloP[d]) {
      reportOutside(last, dat->haloP[d], "plus");
      return;
    }
  }
}

} // namespace opdc::sema
