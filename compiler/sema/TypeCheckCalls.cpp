// TypeCheckCalls.cpp - Calls: fns and procs, intrinsics, stencil reads.
// SPDX-License-Identifier: Apache-2.0
//
// A call names a fn or proc (arguments converted to the parameter types), an
// intrinsic (signature checked here, folded when every argument is
// constant), or a stencil parameter read at an offset: `u(1, 0)`.
#include "sema/SemaImpl.h"

#include "llvm/Support/Casting.h"

namespace opdc::sema {

using namespace ast;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

std::string plural(size_t n, const char *word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

} // namespace

Type Sema::checkCall(CallExpr &e) {
  e.type = Type::error();
  Decl *d = lookup(e.callee);
  if (d) {
    if (auto *p = dyn_cast<KernelParamDecl>(d))
      return checkStencilRead(e, p, /*asTarget=*/false);
    if (isa<FnDecl, ProcDecl>(d))
      return checkUserCall(e, d);
    if (isa<KernelDecl>(d))
      diags.error(e.calleeRange, "'" + d->name +
                                     "' is a kernel; run it with 'loop " +
                                     d->name + " over ...'");
    else
      reportWrongKind(d, e.calleeRange, Want::Callable);
    for (auto &a : e.args)
      checkValue(a);
    return e.type;
  }
  Intrinsic i = lookupIntrinsic(e.callee);
  if (i != Intrinsic::None)
    return checkIntrinsic(e, i);
  reportUnknown(e.callee, e.calleeRange, Want::Callable);
  for (auto &a : e.args)
    checkValue(a);
  return e.type;
}

void Sema::checkCallArgs(std::vector<ExprPtr> &args,
                         std::vector<std::unique_ptr<VarDecl>> &params,
                         const Decl &callee, SourceRange at) {
  if (args.size() != params.size()) {
    diags.error(at, "'" + callee.name + "' takes " +
                        plural(params.size(), "argument") + " but " +
                        std::to_string(args.size()) +
                        (args.size() == 1 ? " was" : " were") + " given");
    noteDeclared(&callee);
    for (auto &a : args)
      checkValue(a);
    return;
  }
  for (size_t i = 0; i < args.size(); ++i)
    convert(args[i], params[i]->type,
            "argument " + std::to_string(i + 1) + " of '" + callee.name + "'");
}

Type Sema::checkUserCall(CallExpr &e, Decl *callee) {
  e.calleeDecl = callee;
  auto *fn = dyn_cast<FnDecl>(callee);
  auto *proc = dyn_cast<ProcDecl>(callee);
  e.target = fn ? CallTarget::Fn : CallTarget::Proc;
  if (proc && inKernelCode()) {
    diags.error(e.calleeRange, "proc '" + callee->name +
                                   "' cannot be called from " +
                                   codeDescription());
    for (auto &a : e.args)
      checkValue(a);
    return e.type = Type::error();
  }
  if (ctx.code == CodeKind::Global) {
    diags.error(e.calleeRange,
                "'" + callee->name + "' cannot be called in a declaration");
    for (auto &a : e.args)
      checkValue(a);
    return e.type = Type::error();
  }
  checkCallArgs(e.args, fn ? fn->params : proc->params, *callee, e.calleeRange);
  if (ctx.owner)
    callGraph[ctx.owner].push_back({callee, e.calleeRange});
  auto &ret = fn ? fn->returnType : proc->returnType;
  return e.type = ret ? ret->resolved : Type::voidType();
}

/// size(set), or size(dat, dimension) of a dat on a block: an i32.
Type Sema::checkSize(CallExpr &e, size_t n) {
  Expr *first = e.args[0].get();
  if (n == 1) {
    auto *ne = dyn_cast<NameExpr>(first);
    if (!ne) {
      diags.error(first->range, "'size' expects a set or a dat on a block");
      return e.type;
    }
    Decl *d = lookup(ne->name);
    if (auto *dat = dyn_cast_or_null<DatDecl>(d)) {
      if (isa_and_nonnull<SetDecl>(dat->on.decl))
        diags.error(e.range, "'size' takes a set or a dat on a block; "
                             "for dat '" +
                                 d->name + "' use 'size(" + dat->on.name +
                                 ")'");
      else
        diags.error(e.range, "'size' of dat '" + d->name +
                                 "' needs a dimension, as 'size(" + d->name +
                                 ", 0)'");
      return e.type;
    }
    ne->decl = resolve(ne->name, ne->range, Want::Set);
    ne->type = Type::voidType();
    if (!ne->decl)
      return e.type;
    return e.type = Type::scalarOf(ScalarKind::I32);
  }
  DatDecl *dat = resolveDatExpr(e.args[0]);
  std::optional<int64_t> d = foldInteger(e.args[1], "dimension of 'size'");
  if (!dat || !d)
    return e.type;
  auto *block = dyn_cast_or_null<BlockDecl>(dat->on.decl);
  if (!block) {
    if (dat->on.decl)
      diags.error(e.args[0]->range, "'size' needs a dat on a block; '" +
                                        dat->name + "' is on set '" +
                                        dat->on.name + "'");
    return e.type;
  }
  if (block->dims > 0 && (*d < 0 || *d >= block->dims)) {
    diags.error(e.args[1]->range, "dimension " + std::to_string(*d) +
                                      " is out of range for dat '" + dat->name +
                                      "' on block '" + block->name + "' with " +
                                      plural(block->dims, "dimension"));
    return e.type;
  }
  return e.type = Type::scalarOf(ScalarKind::I32);
}

Type Sema::checkIntrinsic(CallExpr &e, Intrinsic i) {
  e.target = CallTarget::Intrinsic;
  e.intrinsic = i;
  e.type = Type::error();
  const std::string &name = e.callee;
  auto checkArgs = [&] {
    for (auto &a : e.args)
      checkValue(a);
  };
  if (i == Intrinsic::Idx && ctx.code != CodeKind::Kernel) {
    diags.error(e.calleeRange, "'idx' is only available in kernels");
    checkArgs();
    return e.type;
  }
  if (isRandomIntrinsic(i))
    return checkRandom(e);
  if ((i == Intrinsic::Size || i == Intrinsic::Wtime) &&
      ctx.code != CodeKind::Host) {
    diags.error(e.calleeRange, "'" + name + "' is only available in host code");
    return e.type;
  }
  // size(set) or size(dat, d); every other intrinsic has one arity.
  size_t minArgs = i == Intrinsic::Size ? 1 : intrinsicArity(i);
  size_t maxArgs = i == Intrinsic::Size ? 2 : intrinsicArity(i);
  size_t n = e.args.size();
  if (n < minArgs || n > maxArgs) {
    std::string expected =
        minArgs == maxArgs
            ? plural(minArgs, "argument")
            : std::to_string(minArgs) + " or " + plural(maxArgs, "argument");
    diags.error(e.calleeRange, "'" + name + "' takes " + expected + " but " +
                                   std::to_string(n) +
                                   (n == 1 ? " was" : " were") + " given");
    if (i != Intrinsic::Size)
      checkArgs();
    return e.type;
  }
  auto what = [&]() { return "argument of '" + name + "'"; };
  switch (i) {
  case Intrinsic::Wtime:
    return e.type = Type::scalarOf(ScalarKind::F64);
  case Intrinsic::Idx: {
    std::optional<int64_t> d = foldInteger(e.args[0], "dimension of 'idx'");
    if (!d)
      return e.type;
    if (*d < 0 || *d > 2) {
      diags.error(e.args[0]->range,
                  "dimension of 'idx' must be between 0 and 2, found " +
                      std::to_string(*d));
      return e.type;
    }
    if (ctx.kernel)
      idxUses[ctx.kernel].push_back({*d, e.range});
    return e.type = Type::scalarOf(ScalarKind::I32);
  }
  case Intrinsic::Size:
    return checkSize(e, n);
  default:
    break;
  }
  for (auto &a : e.args)
    check(a);
  Type t = Type::error();
  switch (i) {
  case Intrinsic::Select: {
    convertChecked(e.args[0], Type::scalarOf(ScalarKind::Bool),
                   "condition of 'select'");
    t = unify({&e.args[1], &e.args[2]}, e.range, "argument",
              /*preferFloat=*/false);
    if (t.isError())
      return e.type;
    if (e.args[0]->type.isError())
      return e.type;
    // The IR's select (and every backend's) chooses between scalars; an
    // array select would need one per component, which the user can write.
    if (!t.isScalar()) {
      diags.error(e.args[1]->range, "'select' chooses between scalars, got '" +
                                        t.str() + "'; select each component");
      return e.type;
    }
    break;
  }
  case Intrinsic::Abs:
  case Intrinsic::Min:
  case Intrinsic::Max: {
    std::vector<ExprPtr *> ops;
    for (auto &a : e.args)
      ops.push_back(&a);
    t = unify(ops, e.range, "argument", false);
    if (t.isError())
      return e.type;
    if (!t.isNumeric()) {
      diags.error(e.args[0]->range,
                  what() + " has type '" + t.str() + "', expected a number");
      return e.type;
    }
    break;
  }
  default: {
    std::vector<ExprPtr *> ops;
    for (auto &a : e.args)
      ops.push_back(&a);
    t = unify(ops, e.range, "argument", /*preferFloat=*/true);
    if (t.isError())
      return e.type;
    if (!t.isFloatScalar()) {
      std::string msg =
          what() + " has type '" + t.str() + "', expected 'f64' or 'f32'";
      if (t.isNumeric())
        msg += "; cast with f64(...)";
      diags.error(e.args[0]->range, msg);
      return e.type;
    }
    break;
  }
  }
  // isnan and isfinite take a float and give a bool.
  Type result = isFloatPredicate(i) ? Type::scalarOf(ScalarKind::Bool) : t;
  std::vector<ConstValue> values;
  for (auto &a : e.args) {
    if (!a->constValue)
      return e.type = result;
    values.push_back(*a->constValue);
  }
  if (auto v = foldIntrinsic(i, values, t, e.range))
    e.constValue = *v;
  return e.type = result;
}

// rng_uniform(seed, n) and rng_normal(seed, n) draw for the loop's element,
// like idx() reads its index, so only kernel bodies may call them (a fn has
// no element). Seed and counter: any integers, widened to i64 by lowering.
Type Sema::checkRandom(CallExpr &e) {
  const std::string &name = e.callee;
  if (ctx.code != CodeKind::Kernel) {
    diags.error(e.calleeRange, "'" + name + "' is only available in kernels");
    for (auto &a : e.args)
      checkValue(a);
    return e.type;
  }
  if (e.args.size() != 2) {
    diags.error(e.calleeRange, "'" + name + "' takes 2 arguments but " +
                                   std::to_string(e.args.size()) +
                                   (e.args.size() == 1 ? " was" : " were") +
                                   " given");
    for (auto &a : e.args)
      checkValue(a);
    return e.type;
  }
  bool ok = true;
  const char *role[] = {"seed", "counter"};
  for (size_t k = 0; k < 2; ++k) {
    ExprPtr &a = e.args[k];
    checkValue(a);
    std::string what = std::string(role[k]) + " of '" + name + "'";
    if (a->type.isError()) {
      ok = false;
      continue;
    }
    if (!a->type.isIntegerScalar()) {
      std::string msg =
          what + " has type '" + a->type.str() + "', expected an integer";
      if (a->type.isNumeric())
        msg += "; convert with i64(...)";
      diags.error(a->range, msg);
      ok = false;
    }
  }
  if (!ok)
    return e.type;
  return e.type = Type::scalarOf(ScalarKind::F64);
}

Type Sema::checkStencilRead(CallExpr &e, KernelParamDecl *p, bool asTarget) {
  e.target = CallTarget::StencilRead;
  e.calleeDecl = p;
  e.type = Type::error();
  auto *s =
      p->stencil ? dyn_cast_or_null<StencilDecl>(p->stencil->decl) : nullptr;
  if (!p->stencil) {
    diags.error(e.calleeRange, "parameter '" + p->name +
                                   "' has no stencil; only stencil "
                                   "parameters can be accessed at an offset");
    noteDeclared(p);
    return e.type;
  }
  if (!s || s->dims == 0 || badParams.count(p))
    return e.type;
  if (!asTarget)
    checkParamRead(p, e);
  if (e.args.size() != size_t(s->dims)) {
    diags.error(e.range, "stencil '" + s->name + "' has " +
                             plural(s->dims, "dimension") + " but '" + p->name +
                             "' is accessed with " +
                             plural(e.args.size(), "offset"));
    return e.type;
  }
  std::vector<int64_t> offsets;
  for (auto &a : e.args) {
    std::optional<int64_t> o = foldInteger(a, "stencil offset");
    if (!o)
      return e.type;
    offsets.push_back(*o);
  }
  e.stencilOffset = offsets;
  bool centre = true;
  for (int64_t o : offsets)
    centre = centre && o == 0;
  bool written = p->mode == AccessMode::Write ||
                 p->mode == AccessMode::ReadWrite || p->mode == AccessMode::Inc;
  if (written && !centre) {
    // Gather-only: a point may only write (and read back) its own element,
    // or neighbouring iterations would race.
    diags.error(e.range, "off-centre access to '" + p->name + "' at " +
                             offsetString(offsets) +
                             "; a written stencil parameter may only be "
                             "accessed at the centre");
    return e.type;
  }
  bool found = false;
  for (auto &o : s->offsets)
    found = found || o == offsets;
  if (!found) {
    diags.error(e.range, "offset " + offsetString(offsets) +
                             " is not in stencil '" + s->name + "'");
    noteDeclared(s);
    return e.type;
  }
  return e.type = p->type.resolved;
}

} // namespace opdc::sema
