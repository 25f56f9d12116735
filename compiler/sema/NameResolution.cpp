// NameResolution.cpp - Global declarations, local scopes, unknown and
// misused names. SPDX-License-Identifier: Apache-2.0
//
// Each module sees its own top-level declarations and what its imports
// bring in (ModuleScopes.cpp); two declarations of one name in one module
// are a redefinition, in two modules they are not. Locals (let/var,
// induction variables, parameters, derivative results) live in nested
// scopes and may shadow globals but not each other within one scope, nor
// take the name of a module alias. Unknown names get a did-you-mean
// suggestion among the declarations of the kind the context expects.
#include "sema/SemaImpl.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Casting.h"

namespace opdc::sema {

using namespace ast;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

void Sema::collectGlobals() {
  for (auto &m : prog.modules) {
    std::map<std::string, Decl *> own;
    for (auto &dp : m->decls) {
      Decl *d = dp.get();
      d->module = m.get();
      if (auto *k = dyn_cast<KernelDecl>(d)) {
        for (unsigned i = 0; i < k->params.size(); ++i) {
          k->params[i]->kernel = k;
          k->params[i]->index = i;
          k->params[i]->module = m.get();
        }
      }
      if (auto *fn = dyn_cast<FnDecl>(d))
        for (auto &p : fn->params)
          p->module = m.get();
      if (auto *pr = dyn_cast<ProcDecl>(d))
        for (auto &p : pr->params)
          p->module = m.get();
      if (auto *main = dyn_cast<MainDecl>(d)) {
        // `main` may only appear in the program file; imported modules and a
        // root file without `program NAME` are modules.
        if (!m->isProgram) {
          diags.error(d->nameRange,
                      "'main' is not allowed in a module; a file with "
                      "'main' must start with 'program NAME'");
          continue;
        }
        if (prog.main) {
          diags.error(d->nameRange, "redefinition of 'main'");
          diags.note(prog.main->nameRange,
                     "previous definition of 'main' is here");
          continue;
        }
        prog.main = main;
        continue;
      }
      if (lookupIntrinsic(d->name) != Intrinsic::None) {
        diags.error(d->nameRange, "'" + d->name +
                                      "' is the name of an intrinsic and "
                                      "cannot be redeclared");
        continue;
      }
      prog.globals.emplace(d->name, d);
      auto [it, inserted] = own.emplace(d->name, d);
      if (!inserted) {
        diags.error(d->nameRange, "redefinition of '" + d->name + "'");
        diags.note(it->second->nameRange,
                   "previous declaration of '" + d->name + "' is here");
        duplicates.emplace(d->name, d);
      }
    }
  }
  buildModuleScopes();
  Module *root = prog.root;
  if (root && root->isProgram && !prog.main)
    diags.error(root->programRange.valid() ? root->programRange : SourceRange(),
                "program '" + root->programName + "' has no 'main'");
}

void Sema::pushScope() { scopes.emplace_back(); }

void Sema::popScope() {
  if (!scopes.empty())
    scopes.pop_back();
}

void Sema::declareLocal(Decl *d, VarOrigin origin) {
  if (!d)
    return;
  if (scopes.empty())
    pushScope();
  if (ctx.owner)
    d->module = ctx.owner->module;
  if (auto *v = dyn_cast<VarDecl>(d))
    varOrigins[v] = origin;
  if (const ImportDecl *imp = aliasImport(d->name)) {
    diags.error(d->nameRange, "'" + d->name + "' is the alias of module '" +
                                  imp->name + "' and cannot name a local");
    diags.note(imp->aliasRange, "alias '" + d->name + "' declared here");
  }
  auto [it, inserted] = scopes.back().emplace(d->name, d);
  if (!inserted) {
    diags.error(d->nameRange, "redefinition of '" + d->name + "'");
    diags.note(it->second->nameRange,
               "previous declaration of '" + d->name + "' is here");
    // The newer declaration wins, so that its uses get its type.
    it->second = d;
  }
}

Decl *Sema::lookup(const std::string &name) const {
  // "m.x" names a member of an imported module, never a local.
  if (name.find('.') == std::string::npos)
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end())
        return f->second;
    }
  return lookupGlobal(name);
}

bool Sema::isKind(const Decl *d, Want want) {
  switch (want) {
  case Want::Value:
    return isa<ConstDecl, ParamDecl, VarDecl, KernelParamDecl>(d);
  case Want::Dat:
    return isa<DatDecl>(d);
  case Want::Set:
    return isa<SetDecl>(d);
  case Want::Block:
    return isa<BlockDecl>(d);
  case Want::SetOrBlock:
    return isa<SetDecl, BlockDecl>(d);
  case Want::Map:
    return isa<MapDecl>(d);
  case Want::Stencil:
    return isa<StencilDecl>(d);
  case Want::Kernel:
    return isa<KernelDecl>(d);
  case Want::Proc:
    return isa<ProcDecl>(d);
  case Want::Callable:
    return isa<FnDecl, ProcDecl>(d);
  case Want::DatOrParam:
    return isa<DatDecl>(d);
  case Want::Arg:
    return isa<ConstDecl, ParamDecl, VarDecl, DatDecl, MapDecl>(d);
  }
  return false;
}

const char *Sema::wantName(Want want) {
  switch (want) {
  case Want::Value:
    return "a value";
  case Want::Dat:
    return "a dat";
  case Want::Set:
    return "a set";
  case Want::Block:
    return "a block";
  case Want::SetOrBlock:
    return "a set or a block";
  case Want::Map:
    return "a map";
  case Want::Stencil:
    return "a stencil";
  case Want::Kernel:
    return "a kernel";
  case Want::Proc:
    return "a proc";
  case Want::Callable:
    return "a function";
  case Want::DatOrParam:
    return "a dat or a float parameter";
  case Want::Arg:
    return "a dat, a map or a value";
  }
  return "?";
}

static const char *unknownNoun(Want want) {
  switch (want) {
  case Want::Value:
  case Want::Arg:
    return "name";
  case Want::Dat:
    return "dat";
  case Want::Set:
    return "set";
  case Want::Block:
    return "block";
  case Want::SetOrBlock:
    return "set or block";
  case Want::Map:
    return "map";
  case Want::Stencil:
    return "stencil";
  case Want::Kernel:
    return "kernel";
  case Want::Proc:
    return "proc";
  case Want::Callable:
    return "function";
  case Want::DatOrParam:
    return "dat or parameter";
  }
  return "name";
}

std::string Sema::suggest(const std::string &name, Want want,
                          bool withIntrinsics) const {
  // Clang's rule of thumb: accept up to a third of the length in edits.
  unsigned limit = std::max<unsigned>(1, (name.size() + 2) / 3);
  std::string best;
  unsigned bestDist = limit + 1;
  auto consider = [&](const std::string &cand) {
    if (cand == name)
      return;
    unsigned d = llvm::StringRef(name).edit_distance(cand, true, limit);
    // Ties go to the alphabetically first name: candidates arrive in
    // sorted order per source, so keep the first one found.
    if (d < bestDist || (d == bestDist && cand < best)) {
      bestDist = d;
      best = cand;
    }
  };
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it)
    for (auto &[n, d] : *it)
      if (isKind(d, want))
        consider(n);
  auto visible = [&](const std::string &n, const Decl *d) {
    // In kernel code only consts, params and fns are reachable by name.
    if (inKernelCode() && want == Want::Value && !isa<ConstDecl, ParamDecl>(d))
      return;
    if (isKind(d, want))
      consider(n);
  };
  if (auto sc = moduleScopes.find(currentModule()); sc != moduleScopes.end()) {
    for (auto &[n, d] : sc->second.own)
      visible(n, d);
    for (auto &[n, ds] : sc->second.imported)
      if (ds.size() == 1)
        visible(n, ds.front());
  }
  if (withIntrinsics) {
    unsigned count = 0;
    const char *const *names = intrinsicNames(count);
    for (unsigned i = 0; i < count; ++i)
      consider(names[i]);
  }
  return bestDist <= limit ? best : std::string();
}

void Sema::noteDeclared(const Decl *d) {
  if (d && d->nameRange.valid())
    diags.note(d->nameRange, "'" + d->name + "' declared here");
}

void Sema::reportUnknown(const std::string &name, SourceRange range,
                         Want want) {
  if (reportUnresolvedGlobal(name, range, want))
    return;
  std::string msg =
      std::string("unknown ") + unknownNoun(want) + " '" + name + "'";
  std::string s = suggest(name, want, want == Want::Callable);
  if (s.empty()) {
    diags.error(range, msg);
    return;
  }
  diags.error(range, msg + "; did you mean '" + s + "'?");
  if (Decl *d = lookup(s))
    noteDeclared(d);
}

/// \p d is the first of several declarations of its name in its module.
static bool hasDuplicates(const Decl *d,
                          const std::multimap<std::string, Decl *> &dups) {
  auto [b, e] = dups.equal_range(d->name);
  for (auto it = b; it != e; ++it)
    if (it->second->module == d->module)
      return true;
  return false;
}

void Sema::reportWrongKind(const Decl *d, SourceRange range, Want want) {
  if (hasDuplicates(d, duplicates))
    return;
  diags.error(range, "'" + d->name + "' is a " + declKindName(d->kind) +
                         ", expected " + wantName(want));
  noteDeclared(d);
}

Decl *Sema::resolve(const std::string &name, SourceRange range, Want want) {
  Decl *d = lookup(name);
  if (!d) {
    reportUnknown(name, range, want);
    return nullptr;
  }
  if (!isKind(d, want)) {
    if (hasDuplicates(d, duplicates)) {
      auto [b, e] = duplicates.equal_range(d->name);
      for (auto it = b; it != e; ++it)
        if (it->second->module == d->module && isKind(it->second, want))
          return it->second;
    }
    reportWrongKind(d, range, want);
    return nullptr;
  }
  return d;
}

void Sema::resolveRef(NameRef &ref, Want want) {
  ref.decl = resolve(ref.name, ref.range, want);
}

} // namespace opdc::sema
