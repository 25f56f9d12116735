// Lower.cpp - AST -> Program IR.
// SPDX-License-Identifier: Apache-2.0
//
// Three passes over the declarations of every module (imports first, root
// last, source order within a module):
//   1. create an IR object for each global and function, so that any order
//      of declaration works (a map may name a set declared after it);
//   2. fill in the globals (sizes, files, shapes, initialisers) and the
//      signatures of functions;
//   3. lower the bodies of fns, kernels, procs and main.
// Expressions are lowered with their sema types. An expression that sema
// folded is emitted as a typed Constant only when it is made of literals and
// consts alone (a param's default is never folded into code: params change
// at run time). Any remaining difference between an operand's type and the
// type its context needs becomes an explicit Cast (constants are converted
// in place), so the IR obeys "operands of one type" without exception.
//
// The statements are in LowerStmts.cpp, the expressions in LowerExprs.cpp.
#include "lower/Lower.h"

#include "ir/Verifier.h"
#include "lower/LowerImpl.h"

namespace opdc {
namespace lower {

void Lowerer::fail(SourceRange r, const std::string &what) {
  failed = true;
  diags.internalError(r, "cannot lower " + what);
}

//===----------------------------------------------------------------------===//
// Globals
//===----------------------------------------------------------------------===//

void Lowerer::createGlobals() {
  for (const auto &m : ast.modules) {
    for (const auto &dp : m->decls) {
      const ast::Decl *d = dp.get();
      switch (d->kind) {
      case ast::DeclKind::Const: {
        auto *c = cast<ast::ConstDecl>(d);
        build.addConst(c->name, c->value, c->nameRange);
        break;
      }
      case ast::DeclKind::Param: {
        auto *p = cast<ast::ParamDecl>(d);
        Type t = p->type.resolved;
        params[d] = build.addParam(
            p->name, t, ir::convertConst(p->defaultValue, t), p->nameRange);
        params[d]->doc = p->doc;
        break;
      }
      case ast::DeclKind::Set:
        sets[d] = build.addSet(d->name, nullptr, d->nameRange);
        break;
      case ast::DeclKind::Map:
        maps[d] =
            build.addMap(d->name, nullptr, nullptr, 1, nullptr, d->nameRange);
        break;
      case ast::DeclKind::Block: {
        auto *b = cast<ast::BlockDecl>(d);
        blocks[d] = build.addBlock(b->name, unsigned(b->dims), b->nameRange);
        break;
      }
      case ast::DeclKind::Stencil: {
        auto *s = cast<ast::StencilDecl>(d);
        stencils[d] = build.addStencil(s->name, unsigned(s->dims), s->offsets,
                                       s->nameRange);
        break;
      }
      case ast::DeclKind::Dat: {
        ir::Dat *dat =
            build.addDat(d->name, nullptr, Type::error(), d->nameRange);
        datNames.insert(d->name);
        dats[d] = dat;
        break;
      }
      case ast::DeclKind::Kernel:
        functions[d] = build.addKernel(d->name, d->nameRange);
        break;
      case ast::DeclKind::Fn:
        functions[d] = build.addFn(d->name, Type::voidType(), d->nameRange);
        break;
      case ast::DeclKind::Proc:
        functions[d] = build.addProc(d->name, Type::voidType(), d->nameRange);
        break;
      case ast::DeclKind::Main:
        functions[d] = build.setMain(d->nameRange);
        break;
      default:
        break;
      }
    }
  }
}

void Lowerer::fillDat(const ast::DatDecl &d, ir::Dat &out) {
  out.elemType = d.elemType.resolved;
  if (auto *s = dyn_cast_or_null<ast::SetDecl>(d.on.decl)) {
    out.set = sets[s];
  } else if (auto *b = dyn_cast_or_null<ast::BlockDecl>(d.on.decl)) {
    out.block = blocks[b];
    unsigned dims = unsigned(b->dims);
    Type sizeType = Type::scalarOf(ScalarKind::I32);
    for (const auto &e : d.size)
      if (e && e->type.isIntegerScalar() &&
          rank(e->type.scalar) > rank(sizeType.scalar))
        sizeType = e->type;
    for (const auto &e : d.size)
      out.size.push_back(exprOr(e, sizeType, d.range));
    auto perDim = [&](const std::vector<int64_t> &v) {
      std::vector<int64_t> r(v);
      r.resize(dims, 0);
      return r;
    };
    out.haloMinus = perDim(d.haloM);
    out.haloPlus = perDim(d.haloP);
    out.base = perDim(d.baseOffset);
  } else {
    fail(d.on.range, "dat '" + d.name + "' on an unresolved set or block");
  }
  out.init = d.init;
  switch (d.init) {
  case DatInit::Zero:
    break;
  case DatInit::Fill: {
    if (!d.initExpr) {
      fail(d.range, "fill of dat '" + d.name + "' without a value");
      break;
    }
    // A scalar fills every component; an array fills whole elements.
    Type want = d.initExpr->type.isArray()
                    ? out.elemType
                    : Type::scalarOf(out.elemType.scalar);
    out.initValue = exprAs(*d.initExpr, want);
    break;
  }
  case DatInit::File:
    out.initFile = exprOr(d.initExpr, Type::string(), d.range);
    break;
  }
}

void Lowerer::signature(const std::vector<std::unique_ptr<ast::VarDecl>> &ps,
                        const std::optional<ast::TypeRef> &ret, ir::Function &f,
                        FnState &fs) {
  for (const auto &p : ps) {
    Type t = p->type.isError() && p->declaredType ? p->declaredType->resolved
                                                  : p->type;
    unsigned slot = B::addParamVar(f, p->name, t, p->nameRange);
    fs.slots[p.get()] = slot;
  }
  f.returnType = ret ? ret->resolved : Type::voidType();
}

void Lowerer::fillGlobals() {
  st = FnState(); // global context: no function
  for (const auto &m : ast.modules) {
    if (m.get() == ast.root)
      prog->name = m->programName;
    for (const auto &dp : m->decls) {
      const ast::Decl *d = dp.get();
      switch (d->kind) {
      case ast::DeclKind::Set: {
        auto *s = cast<ast::SetDecl>(d);
        ir::Set *out = sets[d];
        if (s->fromFile)
          out->fromFile = exprAs(*s->fromFile, Type::string());
        else if (s->size)
          out->size = expr(*s->size);
        else
          fail(s->range, "set '" + s->name + "' without a size or file");
        break;
      }
      case ast::DeclKind::Map: {
        auto *mp = cast<ast::MapDecl>(d);
        ir::Map *out = maps[d];
        out->from = sets[mp->from.decl];
        out->to = sets[mp->to.decl];
        out->arity = unsigned(mp->arity);
        if (!out->from || !out->to)
          fail(mp->range, "map '" + mp->name + "' between unresolved sets");
        if (mp->fromFile)
          out->fromFile = exprAs(*mp->fromFile, Type::string());
        break;
      }
      case ast::DeclKind::Dat:
        fillDat(*cast<ast::DatDecl>(d), *dats[d]);
        break;
      case ast::DeclKind::Kernel: {
        auto *k = cast<ast::KernelDecl>(d);
        ir::Function *f = functions[d];
        FnState &fs = states[f];
        fs.fn = f;
        fs.kernel = k;
        for (const auto &p : k->params) {
          ir::Stencil *s = nullptr;
          if (p->stencil)
            s = stencils[p->stencil->decl];
          fs.kparams[p.get()] = B::addKernelParam(
              *f, p->name, p->mode, p->type.resolved, s, p->nameRange);
        }
        break;
      }
      case ast::DeclKind::Fn: {
        auto *fd = cast<ast::FnDecl>(d);
        ir::Function *f = functions[d];
        FnState &fs = states[f];
        fs.fn = f;
        signature(fd->params, fd->returnType, *f, fs);
        break;
      }
      case ast::DeclKind::Proc: {
        auto *pd = cast<ast::ProcDecl>(d);
        ir::Function *f = functions[d];
        FnState &fs = states[f];
        fs.fn = f;
        signature(pd->params, pd->returnType, *f, fs);
        break;
      }
      case ast::DeclKind::Main: {
        ir::Function *f = functions[d];
        states[f].fn = f;
        break;
      }
      default:
        break;
      }
    }
  }
}

void Lowerer::lowerBodies() {
  for (const auto &m : ast.modules) {
    for (const auto &dp : m->decls) {
      const ast::Decl *d = dp.get();
      const ast::Block *body = nullptr;
      if (auto *k = dyn_cast<ast::KernelDecl>(d))
        body = k->body.get();
      else if (auto *f = dyn_cast<ast::FnDecl>(d))
        body = f->body.get();
      else if (auto *p = dyn_cast<ast::ProcDecl>(d))
        body = p->body.get();
      else if (auto *mn = dyn_cast<ast::MainDecl>(d))
        body = mn->body.get();
      else
        continue;
      ir::Function *f = functions[d];
      st = states[f];
      if (body)
        lowerBlock(*body, f->body);
      states[f] = st;
    }
  }
  st = FnState();
}

std::unique_ptr<ir::Program> Lowerer::run() {
  createGlobals();
  fillGlobals();
  lowerBodies();
  if (failed)
    return nullptr;
  std::string why;
  if (!verifyIR(*prog, why)) {
    SourceRange at = ast.root ? ast.root->programRange : SourceRange();
    if (!why.empty() && why.back() == '\n')
      why.pop_back();
    diags.internalError(at, "lowering produced invalid IR:\n" + why);
    return nullptr;
  }
  return std::move(prog);
}

} // namespace lower

std::unique_ptr<ir::Program> lowerProgram(const ast::Program &program,
                                          DiagnosticEngine &diags) {
  return lower::Lowerer(program, diags).run();
}

} // namespace opdc
