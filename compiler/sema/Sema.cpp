// Sema.cpp - The order in which semantic analysis runs its checks.
// SPDX-License-Identifier: Apache-2.0
//
// Declarations first (kind by kind, so each kind only depends on kinds
// already checked: consts and params, blocks, stencils, sets, maps, dats,
// kernel and fn/proc signatures), then bodies (kernels and fns before host
// code, so that loops can check idx() uses and parameter modes), then the
// whole-program rules (recursion, `main`).
#include "sema/Sema.h"
#include "sema/SemaImpl.h"

#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <algorithm>
#include <map>

#include <cstdio>

namespace opdc {
namespace sema {

Sema::Sema(ast::Program &program, DiagnosticEngine &diags)
    : prog(program), diags(diags) {}

void SemaDiags::error(SourceRange at, const llvm::Twine &message) {
  std::string text = message.str();
  dropping = !seen.emplace(at.begin.getPointer(), text).second;
  if (!dropping)
    pending.push_back({at, std::move(text), {}});
}

void SemaDiags::note(SourceRange at, const llvm::Twine &message) {
  if (!dropping && !pending.empty())
    pending.back().notes.push_back({at, message.str()});
}

void SemaDiags::flush(const std::function<unsigned(SourceRange)> &rank) {
  auto key = [&](const Pending &p) {
    return std::make_pair(rank(p.at), p.at.begin.getPointer());
  };
  std::stable_sort(
      pending.begin(), pending.end(),
      [&](const Pending &a, const Pending &b) { return key(a) < key(b); });
  for (auto &p : pending) {
    engine.error(p.at, p.message);
    for (auto &[at, msg] : p.notes)
      engine.note(at, msg);
  }
  pending.clear();
}

Sema::ContextGuard::ContextGuard(Sema &s, bool clearScopes)
    : s(s), saved(s.ctx), clearedScopes(clearScopes) {
  if (clearScopes)
    savedScopes.swap(s.scopes);
}

Sema::ContextGuard::~ContextGuard() {
  s.ctx = saved;
  if (clearedScopes)
    s.scopes.swap(savedScopes);
}

const char *Sema::codeDescription() const {
  switch (ctx.code) {
  case CodeKind::Global:
    return "a declaration";
  case CodeKind::Kernel:
    return "a kernel";
  case CodeKind::Fn:
    return "a fn";
  case CodeKind::Host:
    return "host code";
  }
  return "?";
}

bool Sema::run() {
  collectGlobals();
  checkDeclarations();
  checkBodies();
  checkRecursion();
  uniquifyGlobalNames();
  // Buffers rank in module load order; diagnostics without a place first.
  SourceManager &sm = diags.engine.sources();
  std::map<unsigned, unsigned> bufferRank;
  for (auto &m : prog.modules)
    bufferRank.emplace(m->bufferId, unsigned(bufferRank.size()) + 1);
  diags.flush([&](SourceRange at) -> unsigned {
    if (!at.valid())
      return 0;
    auto it = bufferRank.find(sm.bufferOf(at.begin));
    return it == bufferRank.end() ? unsigned(bufferRank.size()) + 1
                                  : it->second;
  });
  // Errors reported before (by the parser) also make the program invalid.
  return diags.errorCount() == 0;
}

llvm::StringRef textOf(SourceRange r) {
  if (!r.valid() || !r.end.isValid() ||
      r.end.getPointer() < r.begin.getPointer())
    return {};
  return llvm::StringRef(r.begin.getPointer(),
                         r.end.getPointer() - r.begin.getPointer());
}

std::string offsetString(const std::vector<int64_t> &o) {
  std::string s = "(";
  for (size_t i = 0; i < o.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(o[i]);
  }
  return s + ")";
}

} // namespace sema

bool analyzeProgram(ast::Program &program, DiagnosticEngine &diags) {
  sema::Sema s(program, diags);
  return s.run();
}

} // namespace opdc
