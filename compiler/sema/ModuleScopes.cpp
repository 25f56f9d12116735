// ModuleScopes.cpp - Which global names each module sees: its own
// declarations and what `import M`, `import M as m` and `import M (a, b)`
// bring in. SPDX-License-Identifier: Apache-2.0
//
// The rules (docs/language.md, "Modules and imports"):
//   - M exports its own declarations and what its plain imports export
//     (`import std.mesh` brings in std.mesh.quad's names); a name M declares
//     itself hides an imported one of the same name;
//   - `import M` brings in everything M exports, unqualified;
//     `import M (a, b)` only a and b; `import M as m` nothing unqualified,
//     but `m.x` reaches everything M exports. Only plain imports are passed
//     on to importers of the importer;
//   - a module's own declaration hides imported ones (the imported one stays
//     reachable as `m.x`); selecting a name the module also declares is an
//     error;
//   - different declarations of one name brought in by two imports make the
//     name ambiguous: an error only where it is used unqualified;
//   - an alias may not be the name of a declaration of the module, of a
//     selected name or of another alias (nor of a local: declareLocal).
// Each module resolves names in its own scope: a stdlib fn calling another
// stdlib fn works whatever its importer named the module.
#include "sema/SemaImpl.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Path.h"

#include <algorithm>

namespace opdc::sema {

using namespace ast;

namespace {

void addUnique(std::vector<Decl *> &v, Decl *d) {
  if (std::find(v.begin(), v.end(), d) == v.end())
    v.push_back(d);
}

/// "m.x" -> ("m", "x"); "x" -> ("", "x").
std::pair<std::string, std::string> splitQualified(const std::string &name) {
  size_t dot = name.find('.');
  if (dot == std::string::npos)
    return {std::string(), name};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

/// The first \p n characters of \p r (the alias of "m.x").
SourceRange headOf(SourceRange r, size_t n) {
  if (!r.valid() || !r.end.isValid())
    return r;
  return SourceRange(r.begin,
                     llvm::SMLoc::getFromPointer(r.begin.getPointer() + n));
}

/// The last \p n characters of \p r (the member of "m.x").
SourceRange tailOf(SourceRange r, size_t n) {
  if (!r.valid() || !r.end.isValid())
    return r;
  return SourceRange(llvm::SMLoc::getFromPointer(r.end.getPointer() - n),
                     r.end);
}

/// The candidate closest to \p name by edit distance (up to a third of its
/// length, as Sema::suggest), or empty.
std::string closest(const std::string &name,
                    const std::vector<std::string> &candidates) {
  unsigned limit = std::max<unsigned>(1, (name.size() + 2) / 3);
  std::string best;
  unsigned bestDist = limit + 1;
  for (auto &c : candidates) {
    unsigned d = llvm::StringRef(name).edit_distance(c, true, limit);
    if (d < bestDist || (d == bestDist && c < best)) {
      bestDist = d;
      best = c;
    }
  }
  return bestDist <= limit ? best : std::string();
}

/// The last part of an import's name: "math" for std.math and for
/// "lib/math.opd".
std::string lastPart(const ImportDecl &imp) {
  if (imp.isPath)
    return llvm::sys::path::stem(imp.name).str();
  size_t dot = imp.name.rfind('.');
  return dot == std::string::npos ? imp.name : imp.name.substr(dot + 1);
}

} // namespace

void Sema::buildModuleScopes() {
  for (auto &mp : prog.modules) {
    Module *m = mp.get();
    ModuleScope &sc = moduleScopes[m];
    for (auto &dp : m->decls)
      if (!isa<MainDecl>(dp.get()) &&
          lookupIntrinsic(dp->name) == Intrinsic::None)
        sc.own.emplace(dp->name, dp.get());
    for (ImportDecl &imp : m->imports) {
      if (!imp.alias.empty()) {
        auto prev = sc.aliases.find(imp.alias);
        auto own = sc.own.find(imp.alias);
        if (prev != sc.aliases.end()) {
          diags.error(imp.aliasRange, "module alias '" + imp.alias +
                                          "' is already used for '" +
                                          prev->second->name + "'");
          diags.note(prev->second->aliasRange,
                     "previous alias '" + imp.alias + "' is here");
        } else if (own != sc.own.end()) {
          diags.error(imp.aliasRange, "module alias '" + imp.alias +
                                          "' clashes with the " +
                                          declKindName(own->second->kind) +
                                          " '" + imp.alias + "'");
          noteDeclared(own->second);
        } else {
          sc.aliases.emplace(imp.alias, &imp);
        }
      }
      if (!imp.resolved)
        continue;
      auto &ex = exports[imp.resolved];
      if (!imp.selective) {
        if (imp.alias.empty())
          for (auto &[name, ds] : ex)
            for (Decl *d : ds)
              addUnique(sc.imported[name], d);
        continue;
      }
      for (NameRef &n : imp.names) {
        auto it = ex.find(n.name);
        if (it == ex.end()) {
          std::vector<std::string> names;
          for (auto &[name, ds] : ex)
            names.push_back(name);
          std::string s = closest(n.name, names);
          diags.error(n.range, "no member named '" + n.name + "' in module '" +
                                   imp.name + "'" +
                                   (s.empty() ? std::string()
                                              : "; did you mean '" + s + "'?"));
          if (!s.empty() && ex[s].size() == 1)
            noteDeclared(ex[s].front());
          continue;
        }
        if (auto own = sc.own.find(n.name); own != sc.own.end()) {
          diags.error(n.range, "'" + n.name +
                                   "' is imported and also declared in this "
                                   "module");
          noteDeclared(own->second);
          continue;
        }
        if (it->second.size() == 1)
          n.decl = it->second.front();
        for (Decl *d : it->second)
          addUnique(sc.imported[n.name], d);
        sc.selected.emplace(n.name, &n);
      }
    }
    for (auto &[alias, imp] : sc.aliases)
      if (auto s = sc.selected.find(alias); s != sc.selected.end()) {
        diags.error(imp->aliasRange, "module alias '" + alias +
                                         "' clashes with the imported name '" +
                                         alias + "'");
        diags.note(s->second->range, "'" + alias + "' is imported here");
      }
    // What importers of m get: its own names, then its plain imports'.
    auto &out = exports[m];
    for (auto &[name, d] : sc.own)
      out[name].push_back(d);
    for (ImportDecl &imp : m->imports) {
      if (!imp.resolved || imp.selective || !imp.alias.empty())
        continue;
      for (auto &[name, ds] : exports[imp.resolved])
        if (!sc.own.count(name))
          for (Decl *d : ds)
            addUnique(out[name], d);
    }
  }
}

Module *Sema::currentModule() const {
  if (ctx.module)
    return ctx.module;
  if (ctx.owner && ctx.owner->module)
    return ctx.owner->module;
  return prog.root;
}

const ImportDecl *Sema::aliasImport(const std::string &alias) const {
  auto sc = moduleScopes.find(currentModule());
  if (sc == moduleScopes.end())
    return nullptr;
  auto it = sc->second.aliases.find(alias);
  return it == sc->second.aliases.end() ? nullptr : it->second;
}

std::vector<Decl *> Sema::lookupGlobalAll(const std::string &name) const {
  auto [alias, member] = splitQualified(name);
  if (!alias.empty()) {
    const ImportDecl *imp = aliasImport(alias);
    if (!imp || !imp->resolved)
      return {};
    auto ex = exports.find(imp->resolved);
    if (ex == exports.end())
      return {};
    auto it = ex->second.find(member);
    return it == ex->second.end() ? std::vector<Decl *>() : it->second;
  }
  auto sc = moduleScopes.find(currentModule());
  if (sc == moduleScopes.end())
    return {};
  if (auto own = sc->second.own.find(name); own != sc->second.own.end())
    return {own->second};
  auto it = sc->second.imported.find(name);
  return it == sc->second.imported.end() ? std::vector<Decl *>() : it->second;
}

Decl *Sema::lookupGlobal(const std::string &name) const {
  std::vector<Decl *> all = lookupGlobalAll(name);
  return all.size() == 1 ? all.front() : nullptr;
}

bool Sema::reportUnresolvedGlobal(const std::string &name, SourceRange range,
                                  Want want) {
  auto [alias, member] = splitQualified(name);
  std::vector<Decl *> all;
  if (!alias.empty()) {
    const ImportDecl *imp = aliasImport(alias);
    if (!imp) {
      std::vector<std::string> aliases;
      if (auto sc = moduleScopes.find(currentModule());
          sc != moduleScopes.end())
        for (auto &[a, i] : sc->second.aliases)
          aliases.push_back(a);
      std::string s = closest(alias, aliases);
      diags.error(headOf(range, alias.size()),
                  "unknown module '" + alias + "'" +
                      (s.empty() ? std::string()
                                 : "; did you mean '" + s + "'?"));
      Module *m = currentModule();
      if (m)
        for (auto &i : m->imports)
          if (i.alias.empty() && lastPart(i) == alias) {
            diags.note(i.range, "'" + i.name + "' is imported here without "
                                               "'as " +
                                    alias + "'");
            break;
          }
      return true;
    }
    if (!imp->resolved)
      return true; // the failed import is reported
    auto &ex = exports[imp->resolved];
    auto it = ex.find(member);
    if (it == ex.end()) {
      std::vector<std::string> names;
      for (auto &[n, ds] : ex)
        if (ds.size() == 1 && isKind(ds.front(), want))
          names.push_back(n);
      std::string s = closest(member, names);
      diags.error(tailOf(range, member.size()),
                  "no member named '" + member + "' in module '" + imp->name +
                      "'" +
                      (s.empty() ? std::string()
                                 : "; did you mean '" + alias + "." + s +
                                       "'?"));
      if (!s.empty())
        noteDeclared(ex[s].front());
      return true;
    }
    all = it->second;
  } else {
    all = lookupGlobalAll(name);
  }
  if (all.size() < 2)
    return false;
  diags.error(range, "reference to '" + name + "' is ambiguous");
  for (Decl *d : all)
    diags.note(d->nameRange, "candidate '" + d->name + "' declared here");
  return true;
}

void Sema::uniquifyGlobalNames() {
  std::vector<Module *> order;
  if (prog.root)
    order.push_back(prog.root);
  for (auto &m : prog.modules)
    if (m.get() != prog.root)
      order.push_back(m.get());
  std::set<std::string> declared, used;
  for (Module *m : order)
    for (auto &d : m->decls)
      declared.insert(d->name);
  for (Module *m : order) {
    std::string stem = llvm::sys::path::stem(m->path).str();
    for (char &c : stem)
      if (!llvm::isAlnum(c))
        c = '_';
    for (auto &d : m->decls) {
      if (isa<MainDecl>(d.get()) || used.insert(d->name).second)
        continue;
      std::string base = stem + "_" + d->name, name = base;
      for (unsigned k = 2; declared.count(name) || used.count(name); ++k)
        name = base + "_" + std::to_string(k);
      d->name = name;
      used.insert(name);
    }
  }
}

} // namespace opdc::sema
