// Declarations.cpp - Checks of global declarations and of signatures.
// SPDX-License-Identifier: Apache-2.0
//
// Declarations are checked kind by kind so that each kind only depends on
// kinds already done (dats need their block's dimension count, kernel
// parameters their stencil). Consts and params fold on demand, so a const
// may use one declared later.
#include "sema/SemaImpl.h"

#include "llvm/Support/Casting.h"

#include <set>

namespace opdc::sema {

using namespace ast;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {
std::string plural(int64_t n, const char *word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}
} // namespace

void Sema::checkDeclarations() {
  ctx = Context();
  ctx.code = CodeKind::Global;
  static const DeclKind order[] = {
      DeclKind::Const, DeclKind::Param, DeclKind::Block, DeclKind::Stencil,
      DeclKind::Set,   DeclKind::Map,   DeclKind::Dat,   DeclKind::Kernel,
      DeclKind::Fn,    DeclKind::Proc};
  for (DeclKind kind : order) {
    for (auto &m : prog.modules) {
      ctx.module = m.get();
      for (auto &dp : m->decls) {
        Decl *d = dp.get();
        if (d->kind != kind)
          continue;
        switch (kind) {
        case DeclKind::Const:
          foldConst(cast<ConstDecl>(d), d->nameRange);
          break;
        case DeclKind::Param:
          ensureParam(cast<ParamDecl>(d));
          break;
        case DeclKind::Block:
          checkBlockDecl(*cast<BlockDecl>(d));
          break;
        case DeclKind::Stencil:
          checkStencilDecl(*cast<StencilDecl>(d));
          break;
        case DeclKind::Set:
          checkSetDecl(*cast<SetDecl>(d));
          break;
        case DeclKind::Map:
          checkMapDecl(*cast<MapDecl>(d));
          break;
        case DeclKind::Dat:
          checkDatDecl(*cast<DatDecl>(d));
          break;
        case DeclKind::Kernel:
          checkKernelSignature(*cast<KernelDecl>(d));
          break;
        case DeclKind::Fn: {
          auto *f = cast<FnDecl>(d);
          checkFnSignature(f->params, f->returnType, /*host=*/false, *f);
          break;
        }
        case DeclKind::Proc: {
          auto *p = cast<ProcDecl>(d);
          checkFnSignature(p->params, p->returnType, /*host=*/true, *p);
          break;
        }
        default:
          break;
        }
      }
    }
  }
}

void Sema::checkFileName(ExprPtr &e, const llvm::Twine &what) {
  if (!e)
    return;
  Type t = checkValue(e);
  if (!t.isError() && !t.isString())
    diags.error(e->range, what + " must be a 'str', found '" + t.str() + "'");
}

void Sema::checkBlockDecl(BlockDecl &d) {
  std::optional<int64_t> n =
      foldInteger(d.dimsExpr, "dimension count of block '" + d.name + "'");
  if (!n)
    return;
  if (*n < 1 || *n > 3) {
    diags.error(d.dimsExpr->range, "block '" + d.name +
                                       "' must have 1 to 3 dimensions, "
                                       "found " +
                                       std::to_string(*n));
    return;
  }
  d.dims = *n;
}

void Sema::checkStencilDecl(StencilDecl &d) {
  if (d.points.empty()) {
    diags.error(d.nameRange, "stencil '" + d.name + "' has no points");
    return;
  }
  size_t dims = d.points.front().offsets.size();
  bool ok = true;
  for (auto &p : d.points) {
    if (p.offsets.size() != dims) {
      diags.error(p.range, "stencil point has " +
                               plural(int64_t(p.offsets.size()), "offset") +
                               " but the first point of '" + d.name + "' has " +
                               std::to_string(dims));
      diags.note(d.points.front().range, "first point is here");
      ok = false;
      for (auto &o : p.offsets)
        foldInteger(o, "stencil offset");
      continue;
    }
    std::vector<int64_t> point;
    for (auto &o : p.offsets) {
      std::optional<int64_t> v = foldInteger(o, "stencil offset");
      if (!v) {
        ok = false;
        continue;
      }
      point.push_back(*v);
    }
    if (point.size() == dims)
      d.offsets.push_back(point);
  }
  if (dims == 0 || dims > 3) {
    diags.error(d.points.front().range,
                "stencil points must have 1 to 3 offsets, found " +
                    std::to_string(dims));
    ok = false;
  }
  d.dims = ok ? int64_t(dims) : 0;
}

bool Sema::isCentreOnly(const StencilDecl &s) {
  for (auto &o : s.offsets)
    for (int64_t v : o)
      if (v != 0)
        return false;
  return !s.offsets.empty();
}

void Sema::checkSetDecl(SetDecl &d) {
  if (d.size) {
    Type t = checkValue(d.size);
    if (!t.isError() && !t.isIntegerScalar())
      diags.error(d.size->range, "size of set '" + d.name +
                                     "' must be an integer, found '" + t.str() +
                                     "'");
    else if (d.size->constValue && d.size->constValue->asInt() < 0)
      diags.error(d.size->range,
                  "size of set '" + d.name + "' must not be negative, found " +
                      std::to_string(d.size->constValue->asInt()));
  }
  if (d.fromFile)
    checkFileName(d.fromFile, "mesh file name of set '" + d.name + "'");
  // `set s` alone leaves the size unknown to the runtime.
  if (!d.size && !d.fromFile)
    diags.error(d.nameRange, "set '" + d.name +
                                 "' needs a size: add 'size EXPR' or "
                                 "'from FILE'");
}

void Sema::checkMapDecl(MapDecl &d) {
  resolveRef(d.from, Want::Set);
  resolveRef(d.to, Want::Set);
  std::optional<int64_t> n =
      foldInteger(d.arityExpr, "arity of map '" + d.name + "'");
  if (n) {
    if (*n < 1)
      diags.error(d.arityExpr->range, "arity of map '" + d.name +
                                          "' must be at least 1, found " +
                                          std::to_string(*n));
    else if (*n > 1024)
      diags.error(d.arityExpr->range, "arity of map '" + d.name +
                                          "' is too large (the limit is "
                                          "1024)");
    else
      d.arity = *n;
  }
  if (d.fromFile)
    checkFileName(d.fromFile, "mesh file name of map '" + d.name + "'");
}

std::optional<std::vector<int64_t>> Sema::foldPerDim(ExprPtr &e, int64_t dims,
                                                     const llvm::Twine &what,
                                                     bool allowNegative) {
  std::vector<int64_t> out;
  auto checkSign = [&](int64_t v, SourceRange at) {
    if (!allowNegative && v < 0) {
      diags.error(at,
                  what + " must not be negative, found " + std::to_string(v));
      return false;
    }
    return true;
  };
  if (auto *a = dyn_cast<ArrayLitExpr>(e.get())) {
    bool ok = true;
    for (auto &el : a->elements) {
      std::optional<int64_t> v = foldInteger(el, what);
      if (!v || !checkSign(*v, el->range)) {
        ok = false;
        continue;
      }
      out.push_back(*v);
    }
    if (!ok)
      return std::nullopt;
    // The array literal itself: an integer array of the folded entries.
    ScalarKind k = ScalarKind::I32;
    for (auto &el : a->elements)
      if (el->type.scalar == ScalarKind::I64)
        k = ScalarKind::I64;
    ConstValue cv;
    cv.type = Type::arrayOf(k, uint32_t(out.size()));
    cv.ints = out;
    a->type = cv.type;
    a->constValue = cv;
    if (dims > 0 && int64_t(out.size()) != dims) {
      diags.error(a->range,
                  what + " has " + plural(int64_t(out.size()), "entry") +
                      " but the block has " + plural(dims, "dimension"));
      return std::nullopt;
    }
    return out;
  }
  std::optional<int64_t> v = foldInteger(e, what);
  if (!v || !checkSign(*v, e->range))
    return std::nullopt;
  out.assign(size_t(std::max<int64_t>(dims, 0)), *v);
  return out;
}

void Sema::checkDatDecl(DatDecl &d) {
  resolveRef(d.on, Want::SetOrBlock);
  Type elem;
  if (d.elemType.isString) {
    diags.error(d.elemType.range,
                "dat '" + d.name + "' cannot have element type 'str'");
    elem = d.elemType.resolved = Type::error();
  } else {
    elem = resolveType(d.elemType, /*allowString=*/false);
  }
  auto *block = dyn_cast_or_null<BlockDecl>(d.on.decl);
  if (isa_and_nonnull<SetDecl>(d.on.decl)) {
    // Structured-only clauses on a set dat.
    auto reject = [&](SourceRange at, const char *what) {
      diags.error(at, std::string("'") + what +
                          "' is only allowed for a dat on a block; '" +
                          d.on.name + "' is a set");
    };
    if (d.hasSize && !d.size.empty())
      reject(d.size.front()->range, "size");
    else if (d.hasSize)
      reject(d.nameRange, "size");
    if (d.haloMinus)
      reject(d.haloMinus->range, "halo");
    if (d.base)
      reject(d.base->range, "base");
  }
  if (block) {
    d.structured = true;
    int64_t dims = block->dims;
    if (!d.hasSize || d.size.empty()) {
      diags.error(d.nameRange, "dat '" + d.name + "' on block '" + block->name +
                                   "' needs a 'size'");
    } else {
      for (auto &s : d.size) {
        Type t = checkValue(s);
        if (t.isError())
          continue;
        if (!t.isIntegerScalar())
          diags.error(s->range, "size of dat '" + d.name +
                                    "' must be an integer, found '" + t.str() +
                                    "'");
        else if (s->constValue && s->constValue->asInt() < 1)
          diags.error(s->range, "size of dat '" + d.name +
                                    "' must be at least 1, found " +
                                    std::to_string(s->constValue->asInt()));
      }
      if (dims > 0 && int64_t(d.size.size()) != dims) {
        SourceRange r =
            SourceRange::join(d.size.front()->range, d.size.back()->range);
        diags.error(r, "dat '" + d.name + "' has " +
                           plural(int64_t(d.size.size()), "size") +
                           " but block '" + block->name + "' has " +
                           plural(dims, "dimension"));
      }
    }
    if (dims > 0) {
      d.haloM.assign(size_t(dims), 0);
      d.haloP.assign(size_t(dims), 0);
      d.baseOffset.assign(size_t(dims), 0);
    }
    std::optional<std::vector<int64_t>> minus;
    if (d.haloMinus) {
      minus = foldPerDim(d.haloMinus, dims, "halo depth", false);
      if (minus && dims > 0)
        d.haloM = *minus;
    }
    if (d.haloPlus) {
      // `halo H` gives both sides a copy of one expression: report its
      // problems once.
      bool copy = d.haloMinus && d.haloPlus->range.valid() &&
                  d.haloPlus->range.begin == d.haloMinus->range.begin;
      if (!copy || minus)
        if (auto v = foldPerDim(d.haloPlus, dims, "halo depth", false))
          if (dims > 0)
            d.haloP = *v;
    }
    if (d.base) {
      if (auto v = foldPerDim(d.base, dims, "base", /*allowNegative=*/true))
        if (dims > 0)
          d.baseOffset = *v;
    }
  }
  switch (d.init) {
  case DatInit::Zero:
    break;
  case DatInit::File:
    checkFileName(d.initExpr, "file name of dat '" + d.name + "'");
    break;
  case DatInit::Fill: {
    if (!d.initExpr)
      break;
    Type t = check(d.initExpr);
    std::string what = "initial value of dat '" + d.name + "'";
    if (elem.isError()) {
      finalize(d.initExpr);
      break;
    }
    bool arrayValue = isa<ArrayLitExpr>(d.initExpr.get()) ||
                      (!isUntyped(*d.initExpr) && t.isArray());
    if (elem.isArray() && arrayValue)
      convertChecked(d.initExpr, elem, what);
    else
      convertChecked(d.initExpr, Type::scalarOf(elem.scalar), what);
    break;
  }
  }
}

void Sema::checkKernelSignature(KernelDecl &k) {
  std::map<std::string, KernelParamDecl *> seen;
  for (unsigned i = 0; i < k.params.size(); ++i) {
    KernelParamDecl &p = *k.params[i];
    p.kernel = &k;
    p.index = i;
    p.module = k.module;
    auto [it, inserted] = seen.emplace(p.name, &p);
    if (!inserted) {
      diags.error(p.nameRange, "redefinition of '" + p.name + "'");
      diags.note(it->second->nameRange,
                 "previous declaration of '" + p.name + "' is here");
      badParams.insert(&p);
    }
    Type t = resolveType(p.type, /*allowString=*/false);
    if (t.isError())
      badParams.insert(&p);
    const char *mode = accessModeName(p.mode);
    bool needsNumber = p.mode == AccessMode::Inc || isReduction(p.mode);
    if (!t.isError() && needsNumber && t.scalar == ScalarKind::Bool) {
      diags.error(p.type.range, std::string("'") + mode + "' parameter '" +
                                    p.name +
                                    "' must have a numeric type, "
                                    "found '" +
                                    t.str() + "'");
      badParams.insert(&p);
    }
    if (!p.stencil)
      continue;
    resolveRef(*p.stencil, Want::Stencil);
    auto *s = dyn_cast_or_null<StencilDecl>(p.stencil->decl);
    if (!s) {
      badParams.insert(&p);
      continue;
    }
    if (isReduction(p.mode)) {
      diags.error(p.stencil->range, std::string("'") + mode + "' parameter '" +
                                        p.name + "' cannot have a stencil");
      badParams.insert(&p);
      continue;
    }
    bool written = p.mode == AccessMode::Write ||
                   p.mode == AccessMode::ReadWrite || p.mode == AccessMode::Inc;
    if (written && s->dims > 0 && !isCentreOnly(*s)) {
      // Gather-only rule: a structured loop writes only its own point;
      // scattering to neighbours would race between iterations.
      diags.error(p.stencil->range,
                  std::string("'") + mode + "' parameter '" + p.name +
                      "' has the non-centre stencil '" + s->name +
                      "'; a written stencil parameter must use a "
                      "centre-only stencil");
      noteDeclared(s);
      badParams.insert(&p);
    }
  }
}

void Sema::checkFnSignature(std::vector<std::unique_ptr<VarDecl>> &params,
                            std::optional<TypeRef> &ret, bool host,
                            Decl &owner) {
  std::map<std::string, VarDecl *> seen;
  for (auto &v : params) {
    auto [it, inserted] = seen.emplace(v->name, v.get());
    if (!inserted) {
      diags.error(v->nameRange, "redefinition of '" + v->name + "'");
      diags.note(it->second->nameRange,
                 "previous declaration of '" + v->name + "' is here");
    }
    v->isMutable = false;
    varOrigins[v.get()] = VarOrigin::Parameter;
    if (!v->declaredType) {
      diags.error(v->nameRange, "parameter '" + v->name + "' needs a type");
      v->type = Type::error();
      continue;
    }
    v->type = resolveType(*v->declaredType, host);
  }
  if (ret)
    resolveType(*ret, host);
}

} // namespace opdc::sema
