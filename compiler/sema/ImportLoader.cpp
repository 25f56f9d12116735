// ImportLoader.cpp - Parsing a program and, transitively, its imports.
// SPDX-License-Identifier: Apache-2.0
//
// `import std.math` reads <stdlib>/math.opd; `import a.b` reads a/b.opd and
// `import "p.opd"` reads p.opd, each first relative to the importing file,
// then in each -I directory in order. Files are identified by their real
// path, so each is parsed once however often it is imported. Imports are
// followed depth first; an import of a file still being loaded closes a
// cycle, reported at that import with a note for every edge of the cycle.
// Program::modules ends up in post-order: imports before importers, the
// root last.
#include "sema/Sema.h"

#include "frontend/Parser.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <map>
#include <set>

namespace opdc {

using namespace ast;

namespace {

class ImportLoader {
public:
  ImportLoader(SourceManager &sm, DiagnosticEngine &diags,
               const FrontendOptions &opts, Program &prog)
      : sm(sm), diags(diags), opts(opts), prog(prog) {}

  /// Parses the root buffer and everything it imports.
  void loadRoot(unsigned bufferId, const std::string &path);

private:
  Module *parse(unsigned bufferId, const std::string &path);
  void visit(Module *m);
  /// Candidate files for \p imp, in search order.
  std::vector<std::string> candidates(const ImportDecl &imp,
                                      const Module &from) const;
  static std::string canonical(const std::string &path);
  static std::string displayName(const Module &m);

  SourceManager &sm;
  DiagnosticEngine &diags;
  const FrontendOptions &opts;
  Program &prog;

  enum class State { Visiting, Done };
  std::map<std::string, Module *> byPath;
  std::map<Module *, State> state;
  /// Modules being loaded, each with the import it is following.
  std::vector<std::pair<Module *, const ImportDecl *>> stack;
  std::vector<std::unique_ptr<Module>> owned;
  std::vector<Module *> order;
};

std::string ImportLoader::canonical(const std::string &path) {
  llvm::SmallString<256> out;
  if (!llvm::sys::fs::real_path(path, out))
    return std::string(out);
  out = path;
  llvm::sys::fs::make_absolute(out);
  llvm::sys::path::remove_dots(out, /*remove_dot_dot=*/true);
  return std::string(out);
}

std::string ImportLoader::displayName(const Module &m) {
  return std::string(llvm::sys::path::filename(m.path));
}

std::vector<std::string> ImportLoader::candidates(const ImportDecl &imp,
                                                  const Module &from) const {
  std::vector<std::string> out;
  llvm::StringRef name = imp.name;
  auto join = [](llvm::StringRef dir, llvm::StringRef rel) {
    if (dir.empty())
      return rel.str();
    llvm::SmallString<256> p(dir);
    llvm::sys::path::append(p, rel);
    return std::string(p);
  };
  if (!imp.isPath && name.starts_with("std.")) {
    // The standard library is searched only in its own directory.
    if (opts.stdlibDir.empty())
      return out;
    std::string rel = name.drop_front(4).str();
    std::replace(rel.begin(), rel.end(), '.', '/');
    out.push_back(join(opts.stdlibDir, rel + ".opd"));
    return out;
  }
  std::string rel;
  if (imp.isPath) {
    rel = name.str();
    if (llvm::sys::path::is_absolute(rel)) {
      out.push_back(rel);
      return out;
    }
  } else {
    rel = name.str();
    std::replace(rel.begin(), rel.end(), '.', '/');
    rel += ".opd";
  }
  out.push_back(join(llvm::sys::path::parent_path(from.path), rel));
  for (auto &dir : opts.importPaths)
    out.push_back(join(dir, rel));
  return out;
}

Module *ImportLoader::parse(unsigned bufferId, const std::string &path) {
  std::unique_ptr<Module> m = parseModule(sm, bufferId, diags);
  m->path = path;
  m->bufferId = bufferId;
  Module *raw = m.get();
  owned.push_back(std::move(m));
  return raw;
}

void ImportLoader::loadRoot(unsigned bufferId, const std::string &path) {
  Module *root = parse(bufferId, path);
  byPath[canonical(path)] = root;
  visit(root);
  // Hand the modules over in load order (imports first, root last).
  for (Module *m : order)
    for (auto &o : owned)
      if (o.get() == m) {
        prog.modules.push_back(std::move(o));
        break;
      }
  prog.root = root;
}

void ImportLoader::visit(Module *m) {
  state[m] = State::Visiting;
  stack.push_back({m, nullptr});
  for (ImportDecl &imp : m->imports) {
    stack.back().second = &imp;
    std::vector<std::string> paths = candidates(imp, *m);
    std::string found;
    for (auto &p : paths)
      if (llvm::sys::fs::exists(p) && !llvm::sys::fs::is_directory(p)) {
        found = p;
        break;
      }
    if (found.empty()) {
      diags.error(imp.range, "module '" + imp.name + "' not found");
      if (paths.empty()) {
        diags.note(SourceRange(), "no standard library directory is set; "
                                  "use --stdlib-dir=DIR");
      } else {
        std::string list;
        for (auto &p : paths)
          list += (list.empty() ? "'" : ", '") + p + "'";
        diags.note(SourceRange(), "searched " + list);
      }
      continue;
    }
    std::string key = canonical(found);
    auto it = byPath.find(key);
    if (it != byPath.end()) {
      Module *target = it->second;
      if (state.count(target) && state[target] == State::Visiting) {
        diags.error(imp.range, "import of '" + imp.name + "' creates a cycle");
        // One note per edge, from the module imported back to this one.
        size_t first = 0;
        while (first < stack.size() && stack[first].first != target)
          ++first;
        for (size_t i = first; i + 1 < stack.size(); ++i)
          diags.note(stack[i].second->range,
                     "'" + displayName(*stack[i].first) + "' imports '" +
                         displayName(*stack[i + 1].first) + "' here");
        continue;
      }
      if (!target->isProgram)
        imp.resolved = target;
      continue;
    }
    std::string why;
    std::optional<unsigned> id = sm.loadFile(found, why);
    if (!id) {
      diags.error(imp.range, "cannot read '" + found + "': " + why);
      continue;
    }
    Module *sub = parse(*id, found);
    byPath[key] = sub;
    if (sub->isProgram) {
      diags.error(imp.range, "cannot import '" + imp.name + "': '" +
                                 displayName(*sub) +
                                 "' is a program, not a module");
      diags.note(sub->programRange,
                 "'" + displayName(*sub) + "' starts with 'program' here");
      state[sub] = State::Done;
      continue;
    }
    imp.resolved = sub;
    visit(sub);
  }
  stack.pop_back();
  state[m] = State::Done;
  order.push_back(m);
}

} // namespace

std::unique_ptr<Program> loadProgram(const std::string &path, SourceManager &sm,
                                     DiagnosticEngine &diags,
                                     const FrontendOptions &opts) {
  std::string why;
  std::optional<unsigned> id = sm.loadFile(path, why);
  if (!id) {
    diags.error(SourceRange(), "cannot read '" + path + "': " + why);
    return nullptr;
  }
  auto prog = std::make_unique<Program>();
  ImportLoader(sm, diags, opts, *prog).loadRoot(*id, path);
  return prog;
}

std::unique_ptr<Program> loadProgramFromText(llvm::StringRef text,
                                             llvm::StringRef name,
                                             SourceManager &sm,
                                             DiagnosticEngine &diags,
                                             const FrontendOptions &opts) {
  unsigned id = sm.addBuffer(text, name);
  auto prog = std::make_unique<Program>();
  ImportLoader(sm, diags, opts, *prog).loadRoot(id, name.str());
  return prog;
}

} // namespace opdc
