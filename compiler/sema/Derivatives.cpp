// Derivatives.cpp - `adjoint` and `tangent` requests.
// SPDX-License-Identifier: Apache-2.0
//
// `let (J, dJ) = adjoint objective(args) wrt (x, alpha)` differentiates a
// proc returning a float with respect to dats and float parameters of the
// proc. Sema creates the result fields: for each dat a DatDecl mirroring the
// primal (same set or block, type, size and halo; adjointOf points at it),
// for each parameter a scalar VarDecl. `tangent` takes one seed per target:
// a dat of the same shape for a dat, a scalar for a parameter.
#include "sema/SemaImpl.h"

#include "llvm/Support/Casting.h"

#include <set>

namespace opdc::sema {

using namespace ast;
using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;
using llvm::isa;

namespace {

ExprPtr cloneOrNull(const ExprPtr &e) { return e ? e->clone() : nullptr; }

/// The adjoint of \p primal: same shape, zero-initialised.
std::unique_ptr<DatDecl> mirrorDat(const DatDecl &primal, SourceRange at) {
  auto f = std::make_unique<DatDecl>(primal.name, at, at);
  f->module = primal.module;
  f->on = primal.on;
  f->elemType = primal.elemType.clone();
  f->hasSize = primal.hasSize;
  for (auto &s : primal.size)
    f->size.push_back(cloneOrNull(s));
  f->haloMinus = cloneOrNull(primal.haloMinus);
  f->haloPlus = cloneOrNull(primal.haloPlus);
  f->base = cloneOrNull(primal.base);
  f->init = DatInit::Zero;
  f->structured = primal.structured;
  f->haloM = primal.haloM;
  f->haloP = primal.haloP;
  f->baseOffset = primal.baseOffset;
  f->adjointOf = const_cast<DatDecl *>(&primal);
  return f;
}

} // namespace

Decl *Sema::resolveDerivTarget(NameRef &ref, ProcDecl *proc) {
  ref.decl = nullptr;
  if (proc) {
    for (auto &p : proc->params) {
      if (p->name != ref.name)
        continue;
      if (!p->type.isError() && !p->type.isFloatScalar()) {
        diags.error(ref.range, "parameter '" + p->name + "' of proc '" +
                                   proc->name + "' has type '" + p->type.str() +
                                   "'; only float parameters can be "
                                   "differentiated");
        noteDeclared(p.get());
        return nullptr;
      }
      if (p->type.isError())
        return nullptr;
      ref.decl = p.get();
      return p.get();
    }
  }
  // Not a parameter: a global dat (locals of the caller are not inputs of
  // the proc).
  Decl *d = lookupGlobal(ref.name);
  if (!d && reportUnresolvedGlobal(ref.name, ref.range, Want::Dat))
    return nullptr;
  if (!d) {
    std::string msg = "unknown dat or parameter '" + ref.name + "'";
    std::string s = suggest(ref.name, Want::Dat);
    if (s.empty() && proc) {
      unsigned limit = std::max<unsigned>(1, (ref.name.size() + 2) / 3);
      for (auto &p : proc->params)
        if (llvm::StringRef(ref.name).edit_distance(p->name, true, limit) <=
            limit) {
          s = p->name;
          break;
        }
    }
    if (!s.empty())
      msg += "; did you mean '" + s + "'?";
    diags.error(ref.range, msg);
    return nullptr;
  }
  auto *dat = dyn_cast<DatDecl>(d);
  if (!dat) {
    diags.error(ref.range, "'" + d->name + "' is a " + declKindName(d->kind) +
                               ", expected a dat or a float parameter of " +
                               (proc ? "proc '" + proc->name + "'"
                                     : std::string("the proc")));
    noteDeclared(d);
    return nullptr;
  }
  Type t = dat->elemType.resolved;
  if (!t.isError() && !isFloat(t.scalar)) {
    diags.error(ref.range, "dat '" + dat->name + "' has element type '" +
                               t.str() +
                               "'; only float dats can be differentiated");
    noteDeclared(dat);
    return nullptr;
  }
  if (t.isError())
    return nullptr;
  ref.decl = dat;
  return dat;
}

/// The proc being differentiated and its float result type (error if not).
static Type derivResultType(Sema &s, NameRef &procRef, ProcDecl *&proc) {
  s.resolveRef(procRef, Want::Proc);
  proc = dyn_cast_or_null<ProcDecl>(procRef.decl);
  if (!proc)
    return Type::error();
  Type ret = proc->returnType ? proc->returnType->resolved : Type::voidType();
  if (ret.isError())
    return ret;
  if (!ret.isFloatScalar()) {
    s.diags.error(procRef.range, "proc '" + proc->name + "' returns '" +
                                     ret.str() +
                                     "'; only a proc returning 'f64' or "
                                     "'f32' can be differentiated");
    s.noteDeclared(proc);
    return Type::error();
  }
  return ret;
}

/// The head shared by both requests: resolves the proc (into \p proc, null
/// when it does not resolve), checks the call arguments against its
/// parameters and records the call. Returns the proc's float result type.
static Type checkRequestHead(Sema &s, DerivativeStmt &d, ProcDecl *&proc) {
  Type ret = derivResultType(s, d.proc, proc);
  if (proc) {
    s.checkCallArgs(d.callArgs, proc->params, *proc, d.proc.range);
    if (s.ctx.owner)
      s.callGraph[s.ctx.owner].push_back({proc, d.proc.range});
  } else {
    for (auto &a : d.callArgs)
      s.checkValue(a);
  }
  return ret;
}

/// Resolves the targets of \p d in source order and calls \p each(i, decl)
/// for each one listed for the first time (decl null when it does not
/// resolve); a repeated name is an error and is skipped.
template <typename F>
static void forEachTarget(Sema &s, DerivativeStmt &d, ProcDecl *proc,
                          F each) {
  std::set<std::string> seen;
  for (size_t i = 0; i < d.numTargets(); ++i) {
    NameRef &ref = d.target(i);
    if (!seen.insert(ref.name).second) {
      s.diags.error(ref.range, "'" + ref.name + "' is listed twice in '" +
                                   d.targetListName() + "'");
      continue;
    }
    each(i, s.resolveDerivTarget(ref, proc));
  }
}

/// Declares the variable \p d defines (J, or the tangent's d) with type \p ret.
static void declareResult(Sema &s, DerivativeStmt &d, Type ret) {
  if (VarDecl *v = d.resultDecl()) {
    v->type = ret;
    v->isMutable = false;
    s.declareLocal(v, VarOrigin::Derived);
  }
}

void Sema::checkAdjoint(AdjointStmt &s) {
  ProcDecl *proc = nullptr;
  Type ret = checkRequestHead(*this, s, proc);
  if (s.checkpoints) {
    Type t = checkValue(s.checkpoints);
    if (!t.isError() && !t.isIntegerScalar())
      diags.error(s.checkpoints->range, "'checkpoints' count has type '" +
                                            t.str() + "', expected an integer");
    else if (!t.isError() && s.checkpoints->constValue &&
             s.checkpoints->constValue->asInt() < 1)
      diags.error(s.checkpoints->range,
                  "'checkpoints' count must be at least 1, found " +
                      std::to_string(s.checkpoints->constValue->asInt()));
  }
  forEachTarget(*this, s, proc, [&](size_t i, Decl *t) {
    const NameRef &w = s.wrt[i];
    if (!t || !s.grad)
      return;
    if (auto *dat = dyn_cast<DatDecl>(t)) {
      s.grad->fields.push_back(mirrorDat(*dat, w.range));
      return;
    }
    auto *param = cast<VarDecl>(t);
    auto f = std::make_unique<VarDecl>(param->name, w.range, w.range);
    f->type = param->type;
    f->isMutable = false;
    f->module = ctx.owner ? ctx.owner->module : nullptr;
    varOrigins[f.get()] = VarOrigin::Derived;
    s.grad->fields.push_back(std::move(f));
  });
  declareResult(*this, s, ret);
  if (s.grad)
    declareLocal(s.grad.get(), VarOrigin::Derived);
}

void Sema::checkTangent(TangentStmt &s) {
  ProcDecl *proc = nullptr;
  Type ret = checkRequestHead(*this, s, proc);
  forEachTarget(*this, s, proc, [&](size_t i, Decl *t) {
    TangentStmt::Seed &seed = s.along[i];
    if (!seed.value)
      return;
    if (!t) {
      if (!isa<NameExpr, MemberExpr>(seed.value.get()))
        checkValue(seed.value);
      return;
    }
    if (auto *dat = dyn_cast<DatDecl>(t)) {
      // The seed of a dat is a dat of the same shape.
      std::string shape = "a dat on " +
                          std::string(dat->structured ? "block '" : "set '") +
                          dat->on.name + "' with element type '" +
                          dat->elemType.resolved.str() + "'";
      if (!isa<NameExpr, MemberExpr>(seed.value.get())) {
        Type vt = checkValue(seed.value);
        if (!vt.isError())
          diags.error(seed.value->range,
                      "seed for dat '" + dat->name + "' must be " + shape +
                          ", found a value of type '" + vt.str() + "'");
        return;
      }
      DatDecl *sd = resolveDatExpr(seed.value);
      if (!sd)
        return;
      if (sd->on.decl != dat->on.decl ||
          sd->elemType.resolved != dat->elemType.resolved) {
        diags.error(seed.value->range,
                    "seed for dat '" + dat->name + "' must be " + shape +
                        "; '" + sd->name + "' is on '" + sd->on.name +
                        "' with element type '" + sd->elemType.resolved.str() +
                        "'");
        noteDeclared(sd);
      }
      return;
    }
    auto *param = cast<VarDecl>(t);
    convert(seed.value, param->type, "seed for '" + param->name + "'");
  });
  declareResult(*this, s, ret);
}

} // namespace opdc::sema
