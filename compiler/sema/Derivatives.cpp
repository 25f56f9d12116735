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
  auto g = prog.globals.find(ref.name);
  Decl *d = g == prog.globals.end() ? nullptr : g->second;
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

void Sema::checkAdjoint(AdjointStmt &s) {
  ProcDecl *proc = nullptr;
  Type ret = derivResultType(*this, s.proc, proc);
  if (proc) {
    checkCallArgs(s.callArgs, proc->params, *proc, s.proc.range);
    if (ctx.owner)
      callGraph[ctx.owner].push_back({proc, s.proc.range});
  } else {
    for (auto &a : s.callArgs)
      checkValue(a);
  }
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
  std::set<std::string> seen;
  for (auto &w : s.wrt) {
    if (!seen.insert(w.name).second) {
      diags.error(w.range, "'" + w.name + "' is listed twice in 'wrt'");
      continue;
    }
    Decl *t = resolveDerivTarget(w, proc);
    if (!t || !s.grad)
      continue;
    if (auto *dat = dyn_cast<DatDecl>(t)) {
      s.grad->fields.push_back(mirrorDat(*dat, w.range));
      continue;
    }
    auto *param = cast<VarDecl>(t);
    auto f = std::make_unique<VarDecl>(param->name, w.range, w.range);
    f->type = param->type;
    f->isMutable = false;
    f->module = ctx.owner ? ctx.owner->module : nullptr;
    varOrigins[f.get()] = VarOrigin::Derived;
    s.grad->fields.push_back(std::move(f));
  }
  if (s.value) {
    s.value->type = ret;
    s.value->isMutable = false;
    declareLocal(s.value.get(), VarOrigin::Derived);
  }
  if (s.grad)
    declareLocal(s.grad.get(), VarOrigin::Derived);
}

void Sema::checkTangent(TangentStmt &s) {
  ProcDecl *proc = nullptr;
  Type ret = derivResultType(*this, s.proc, proc);
  if (proc) {
    checkCallArgs(s.callArgs, proc->params, *proc, s.proc.range);
    if (ctx.owner)
      callGraph[ctx.owner].push_back({proc, s.proc.range});
  } else {
    for (auto &a : s.callArgs)
      checkValue(a);
  }
  std::set<std::string> seen;
  for (auto &seed : s.along) {
    if (!seen.insert(seed.target.name).second) {
      diags.error(seed.target.range,
                  "'" + seed.target.name + "' is listed twice in 'along'");
      continue;
    }
    Decl *t = resolveDerivTarget(seed.target, proc);
    if (!seed.value)
      continue;
    if (!t) {
      if (!isa<NameExpr, MemberExpr>(seed.value.get()))
        checkValue(seed.value);
      continue;
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
        continue;
      }
      DatDecl *sd = resolveDatExpr(seed.value);
      if (!sd)
        continue;
      if (sd->on.decl != dat->on.decl ||
          sd->elemType.resolved != dat->elemType.resolved) {
        diags.error(seed.value->range,
                    "seed for dat '" + dat->name + "' must be " + shape +
                        "; '" + sd->name + "' is on '" + sd->on.name +
                        "' with element type '" + sd->elemType.resolved.str() +
                        "'");
        noteDeclared(sd);
      }
      continue;
    }
    auto *param = cast<VarDecl>(t);
    convert(seed.value, param->type, "seed for '" + param->name + "'");
  }
  if (s.result) {
    s.result->type = ret;
    s.result->isMutable = false;
    declareLocal(s.result.get(), VarOrigin::Derived);
  }
}

} // namespace opdc::sema
